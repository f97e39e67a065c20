package lambdaevents

import (
	"context"
	"errors"
	"log/slog"

	"github.com/fifoq/fifoq"
)

// The keys of the attributes an Invoker logs. Those it shares with fifoq's Consumer (queue, outcome,
// batch_size, groups, group, failed, duration, error, delete_error) mean the same; the others are its own.
// A key is never renamed.
const (
	attrQueue       = "queue"        // the queue's name
	attrFunctionURL = "function_url" // Mapping.FunctionURL, without a password
	attrOutcome     = "outcome"      // how the batch ended: fifoq.Outcome.String
	attrBatchSize   = "batch_size"   // the records of the invocation
	attrGroups      = "groups"       // how many message groups the batch has
	attrGroup       = "group"        // the batch's group, when it has exactly one
	attrFailed      = "failed"       // the messages of the batch returned to the queue
	attrDuration    = "duration"     // of the invocation, by the queue's clock
	attrError       = "error"        // why the invocation failed
	attrKind        = "kind"         // the ErrorKind of a failed invocation
	attrStatus      = "status"       // the HTTP status of the answer, when there was one
	attrDeleteError = "delete_error" // what deleting the batch's messages failed with
	attrFailures    = "failures"     // failures to reach the function since the last record, or in the outage
	attrBackoff     = "backoff"      // the wait before the mapping polls again
	attrDownFor     = "down_for"     // how long the function has been (or was) unreachable
)

// logAttrs are the attributes every record of an Invoker carries.
func (i *Invoker) logAttrs(attrs []slog.Attr) []slog.Attr {
	if i.queue != "" {
		attrs = append(attrs, slog.String(attrQueue, i.queue))
	}
	return append(attrs, slog.String(attrFunctionURL, i.logURL))
}

// logBatch logs one record for a batch that ended: "lambdaevents: invocation done" at Debug; "lambdaevents:
// invocation partly failed", "lambdaevents: function error" at Warn (the messages come back after their
// visibility timeout, and move to the dead-letter queue if they keep failing); at Error when the batch's
// messages could not be deleted. A batch whose invocation could not reach the function is not logged on its
// own: the gate logs those at most once a minute (logUnreachable).
func (i *Invoker) logBatch(r *fifoq.BatchReport) {
	ctx := context.Background()
	fe := (*FunctionError)(nil)
	errors.As(r.Err, &fe)
	if fe != nil && fe.Kind == ErrorUnreachable && r.DeleteErr == nil {
		return
	}
	level, msg := slog.LevelWarn, "lambdaevents: function error"
	switch r.Outcome {
	case fifoq.OutcomeSuccess:
		level, msg = slog.LevelDebug, "lambdaevents: invocation done"
	case fifoq.OutcomePartial:
		msg = "lambdaevents: invocation partly failed"
	}
	if r.DeleteErr != nil {
		level = slog.LevelError
	}
	if !i.o.Logger.Enabled(ctx, level) {
		return
	}
	attrs := i.logAttrs(make([]slog.Attr, 0, 13))
	attrs = append(attrs,
		slog.String(attrOutcome, r.Outcome.String()),
		slog.Int(attrBatchSize, r.Size),
		slog.Int(attrGroups, len(r.Groups)),
		slog.Int(attrFailed, len(r.Failed)),
		slog.Duration(attrDuration, r.Duration),
	)
	if len(r.Groups) == 1 {
		attrs = append(attrs, slog.String(attrGroup, r.Groups[0]))
	}
	if r.Err != nil {
		attrs = append(attrs, slog.Any(attrError, r.Err))
	}
	if fe != nil {
		attrs = append(attrs, slog.String(attrKind, fe.Kind.String()))
		if fe.StatusCode != 0 {
			attrs = append(attrs, slog.Int(attrStatus, fe.StatusCode))
		}
	}
	if r.DeleteErr != nil {
		attrs = append(attrs, slog.Any(attrDeleteError, r.DeleteErr))
	}
	i.o.Logger.LogAttrs(ctx, level, msg, attrs...)
}

// logUnreachable logs the gate's records: "lambdaevents: function unreachable" at Warn, for the first
// failure of an outage and then at most once a minute, with the failures since the last record and the
// backoff; "lambdaevents: function reachable again" at Info, with the failures of the outage and its length.
func (i *Invoker) logUnreachable(r unreachableRecord) {
	if i.o.Logger == nil {
		return
	}
	ctx := context.Background()
	level, msg := slog.LevelWarn, "lambdaevents: function unreachable"
	if r.reachable {
		level, msg = slog.LevelInfo, "lambdaevents: function reachable again"
	}
	if !i.o.Logger.Enabled(ctx, level) {
		return
	}
	attrs := i.logAttrs(make([]slog.Attr, 0, 6))
	attrs = append(attrs, slog.Int(attrFailures, r.failures), slog.Duration(attrDownFor, r.downFor))
	if !r.reachable {
		attrs = append(attrs, slog.Duration(attrBackoff, r.backoff), slog.Any(attrError, r.err))
	}
	i.o.Logger.LogAttrs(ctx, level, msg, attrs...)
}

package fifoq

import (
	"context"
	"errors"
	"log/slog"
)

// The logs of a Consumer: one record a batch, with the keys of log.go and these.
const (
	attrOutcome     = "outcome"      // how a batch ended: Outcome.String
	attrBatchSize   = "batch_size"   // the messages received in a batch
	attrGroups      = "groups"       // the message groups of a batch
	attrFailed      = "failed"       // the messages of a batch returned to the queue
	attrFiltered    = "filtered"     // the messages of a batch the filter deleted
	attrDuration    = "duration"     // the handler call, by the queue's clock
	attrError       = "error"        // what the handler returned, or its panic
	attrDeleteError = "delete_error" // what deleting a batch's messages failed with
	attrStack       = "stack"        // the stack of a handler that panicked
)

// batchLog returns the level and message of a batch's record. A service owner is paged on Error: a panic
// (a bug in the handler) and a failed delete (the source failing, and the batch delivered again). A handler
// error or timeout is Warn: the messages come back and retry, and move to the dead-letter queue if they keep
// failing, which logs at Warn too. A batch that went well is Debug.
func batchLog(r *BatchReport) (slog.Level, string) {
	level, msg := slog.LevelWarn, "fifoq: batch failed"
	switch r.Outcome {
	case OutcomeSuccess:
		level, msg = slog.LevelDebug, "fifoq: batch done"
	case OutcomeFiltered:
		level, msg = slog.LevelDebug, "fifoq: batch filtered"
	case OutcomePartial:
		msg = "fifoq: batch partly failed"
	case OutcomeTimeout:
		msg = "fifoq: handler timed out"
	case OutcomePanic:
		level, msg = slog.LevelError, "fifoq: handler panicked"
	}
	if r.DeleteErr != nil {
		level = slog.LevelError
	}
	return level, msg
}

// logBatch logs one record for a batch that ended: see batchLog for its level.
func (c *Consumer) logBatch(r *BatchReport) {
	ctx := context.Background()
	level, msg := batchLog(r)
	if !c.o.Logger.Enabled(ctx, level) {
		return
	}
	attrs := make([]slog.Attr, 0, 11)
	if c.queue != "" {
		attrs = append(attrs, slog.String(attrQueue, c.queue))
	}
	attrs = append(attrs,
		slog.String(attrOutcome, r.Outcome.String()),
		slog.Int(attrBatchSize, r.Size),
		slog.Int(attrGroups, len(r.Groups)),
		slog.Int(attrFailed, len(r.Failed)),
		slog.Int(attrFiltered, r.Filtered),
		slog.Duration(attrDuration, r.Duration),
	)
	if len(r.Groups) == 1 {
		attrs = append(attrs, slog.String(attrGroup, r.Groups[0]))
	}
	if r.Err != nil {
		attrs = append(attrs, slog.Any(attrError, r.Err))
	}
	if p := (*PanicError)(nil); errors.As(r.Err, &p) {
		attrs = append(attrs, slog.String(attrStack, string(p.Stack)))
	}
	if r.DeleteErr != nil {
		attrs = append(attrs, slog.Any(attrDeleteError, r.DeleteErr))
	}
	c.o.Logger.LogAttrs(ctx, level, msg, attrs...)
}

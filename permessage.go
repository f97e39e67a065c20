package fifoq

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
)

// ErrEarlierMessageFailed is the failure, under [PerMessage], of a message that was not handled because an
// earlier message of its FIFO group in the same batch failed: handling it would break the group's order.
var ErrEarlierMessageFailed = errors.New("fifoq: not handled: an earlier message of its group failed")

// PerMessage returns a [Handler] that calls h on each message of a batch on its own, so that one message
// that fails (a poison message) fails alone instead of taking the whole batch with it. It is the fifoq
// counterpart of the SqsFifoPartialProcessor of AWS Lambda Powertools.
//
// The messages are handled one at a time, in batch order, each with the batch's context:
//
//   - On a FIFO queue (the deliveries have a SequenceNumber), the first failure of a group stops that
//     group: its later messages in the batch are not handled and fail with [ErrEarlierMessageFailed], so
//     they come back after it, in order. The other groups of the batch go on.
//   - On a standard queue (no SequenceNumber; a GroupID there does not order anything) each message fails
//     alone.
//   - A call of h that panics fails its message with a [*PanicError] holding the panic's value and stack;
//     the next messages are still handled.
//   - Once the context is done (the Consumer's HandlerTimeout), h is not called again, and the messages not
//     handled yet fail with the context's cause.
//
// The Handler returns nil when every message succeeded, and otherwise a [*MessageErrors] listing the failed
// messages in batch order, with what each failed with. A [*BatchItemFailures] naming them can be taken out
// of it with [errors.As], and a [Consumer] does so whether or not ConsumerOptions.ReportBatchItemFailures is
// set: the messages that succeeded are deleted and only the failed ones come back. A handler timeout still
// fails the whole batch, as on Lambda, since its handler did not finish.
//
// A plain [Handler] (without PerMessage or a [*BatchItemFailures] of its own) fails the whole batch when it
// returns an error: the messages it had handled come back with the one that failed, are handled again on
// every retry, and move to the dead-letter queue with it once the queue's maxReceiveCount is reached.
//
// On a FIFO queue the messages behind a failed one in its group cannot be delivered before it, so they come
// back with it on each retry, unhandled, and every receive counts for them too: with a dead-letter queue
// they reach it together with the poison message, as on SQS and Lambda. To let a group go on past a poison
// message, have h park it once d.ReceiveCount reaches a limit below maxReceiveCount (send it to a queue of
// your own, log it, and return nil): the messages behind it are then handled once each, in order.
//
// PerMessage panics if h is nil.
func PerMessage(h func(ctx context.Context, d Delivery) error) Handler {
	if h == nil {
		panic("fifoq: PerMessage with a nil handler")
	}
	return func(ctx context.Context, batch []Delivery) error {
		var (
			errs    []MessageError
			stopped map[string]bool // FIFO groups with a failed message in this batch
		)
		for _, d := range batch {
			fifo := d.SequenceNumber != ""
			var err error
			switch {
			case ctx.Err() != nil:
				err = fmt.Errorf("fifoq: not handled: %w", context.Cause(ctx))
			case fifo && stopped[d.GroupID]:
				err = ErrEarlierMessageFailed
			default:
				err = callOne(ctx, h, d)
			}
			if err == nil {
				continue
			}
			errs = append(errs, MessageError{MessageID: d.MessageID, GroupID: d.GroupID, Err: err})
			if fifo {
				if stopped == nil {
					stopped = make(map[string]bool)
				}
				stopped[d.GroupID] = true
			}
		}
		if errs == nil {
			return nil
		}
		return &MessageErrors{Errors: errs}
	}
}

// callOne calls h on d, turning a panic into a *PanicError.
func callOne(ctx context.Context, h func(context.Context, Delivery) error, d Delivery) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return h(ctx, d)
}

// MessageErrors is the error a [PerMessage] handler returns when messages of its batch failed.
//
// [errors.As] finds a [*BatchItemFailures] in it that names the failed messages, which a [Consumer]
// honours even without ConsumerOptions.ReportBatchItemFailures. It does not unwrap to the errors of its
// messages, so that a message that panicked does not make the Consumer fail the whole batch as a handler
// panic: look at Errors for them.
type MessageErrors struct {
	// Errors are the failed messages, in batch order.
	Errors []MessageError
}

// A MessageError is the failure of one message of a [PerMessage] batch.
type MessageError struct {
	// MessageID is the failed message's id.
	MessageID string
	// GroupID is the failed message's group, if it has one.
	GroupID string
	// Err is what the message failed with: the handler's error, a [*PanicError] if the handler panicked,
	// [ErrEarlierMessageFailed] if it was not handled because an earlier message of its FIFO group failed,
	// or an error wrapping the cause of the batch's context if that was done before its turn.
	Err error
}

// Error lists the failed messages with their errors.
func (e *MessageErrors) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "fifoq: %d messages failed: ", len(e.Errors))
	for i, m := range e.Errors {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(m.MessageID)
		b.WriteString(": ")
		b.WriteString(m.Err.Error())
	}
	return b.String()
}

// As sets a **[BatchItemFailures] target to the ids of the failed messages, so that [errors.As] finds one.
func (e *MessageErrors) As(target any) bool {
	p, ok := target.(**BatchItemFailures)
	if !ok {
		return false
	}
	ids := make([]string, len(e.Errors))
	for i, m := range e.Errors {
		ids[i] = m.MessageID
	}
	*p = &BatchItemFailures{MessageIDs: ids}
	return true
}

package fifoq

import (
	"fmt"
	"strings"

	"github.com/fifoq/fifoq/internal/rule"
)

// An Error is a rejection by one of the SQS rules. Every sentinel below is an *Error; the errors fifoq returns
// wrap one of them with the detail of the call, so match them with [errors.Is] and read the code with
// [ErrorCode] or [errors.As] (its field Code), and the message Amazon SQS sends for the case with
// [ErrorMessage]. Packages topic and catalog return errors of this type too, with the codes of SNS and of
// SQS's control plane.
type Error = rule.Error

// The sentinel errors. A call that returns one of them changed nothing in the queue.
var (
	// ErrInvalidQueueName: a queue name is 1..80 characters of [A-Za-z0-9_-], plus ".fifo" for FIFO queues.
	ErrInvalidQueueName = rule.ErrInvalidQueueName
	// ErrInvalidQueueAttribute: a queue option is out of its range.
	ErrInvalidQueueAttribute = rule.ErrInvalidQueueAttribute
	// ErrFIFOOnly: a FIFO-only option (content-based deduplication, deduplication scope) on a standard queue.
	ErrFIFOOnly = rule.ErrFIFOOnly

	// ErrEmptyBody: a message body has at least one character.
	ErrEmptyBody = rule.ErrEmptyBody
	// ErrInvalidMessageContents: a body holds a character SQS does not allow, or is not valid UTF-8.
	ErrInvalidMessageContents = rule.ErrInvalidMessageContents
	// ErrMessageTooLarge: body plus attributes exceed the queue's maximum message size.
	ErrMessageTooLarge = rule.ErrMessageTooLarge
	// ErrInvalidMessageAttribute: more than 10 attributes, or a bad attribute name, type or value (a String
	// or Number value with a character a body could not hold among them).
	ErrInvalidMessageAttribute = rule.ErrInvalidMessageAttribute
	// ErrMissingGroupID: every message sent to a FIFO queue needs a message group id.
	ErrMissingGroupID = rule.ErrMissingGroupID
	// ErrInvalidGroupID: a group id is 1..128 alphanumeric or punctuation characters.
	ErrInvalidGroupID = rule.ErrInvalidGroupID
	// ErrMissingDeduplicationID: a FIFO queue without content-based deduplication needs a deduplication id.
	ErrMissingDeduplicationID = rule.ErrMissingDeduplicationID
	// ErrInvalidDeduplicationID: a deduplication id is 1..128 alphanumeric or punctuation characters, and only
	// FIFO queues take one.
	ErrInvalidDeduplicationID = rule.ErrInvalidDeduplicationID
	// ErrInvalidDelay: a message delay is 0..15 minutes, and FIFO queues take none per message.
	ErrInvalidDelay = rule.ErrInvalidDelay

	// ErrEmptyBatch: a batch call has at least one entry.
	ErrEmptyBatch = rule.ErrEmptyBatch
	// ErrTooManyEntries: a batch call has at most 10 entries.
	ErrTooManyEntries = rule.ErrTooManyEntries
	// ErrBatchTooLong: the messages of one SendBatch add up to at most 1 MiB.
	ErrBatchTooLong = rule.ErrBatchTooLong

	// ErrInvalidMaxMessages: a receive asks for 1..10 messages.
	ErrInvalidMaxMessages = rule.ErrInvalidMaxMessages
	// ErrInvalidWaitTime: a receive waits 0..20 seconds.
	ErrInvalidWaitTime = rule.ErrInvalidWaitTime
	// ErrInvalidVisibilityTimeout: a visibility timeout is 0..12 hours, and a message stays invisible at most
	// 12 hours from its receive.
	ErrInvalidVisibilityTimeout = rule.ErrInvalidVisibilityTimeout
	// ErrInvalidAttemptID: a receive request attempt id is 1..128 alphanumeric or punctuation characters.
	ErrInvalidAttemptID = rule.ErrInvalidAttemptID
	// ErrAttemptNotRetryable: a receive request attempt id whose messages were deleted, changed or received
	// again within its 5 minutes cannot be replayed; use a new one.
	ErrAttemptNotRetryable = rule.ErrAttemptNotRetryable

	// ErrReceiptHandleInvalid: the string is not a receipt handle of this queue.
	ErrReceiptHandleInvalid = rule.ErrReceiptHandleInvalid
	// ErrReceiptHandleExpired: on a FIFO queue, the handle's visibility window is over, or the message was
	// received again since.
	ErrReceiptHandleExpired = rule.ErrReceiptHandleExpired
	// ErrMessageNotAvailable: ChangeVisibility on a message that was deleted or expired.
	ErrMessageNotAvailable = rule.ErrMessageNotAvailable

	// ErrInvalidRedrivePolicy: a dead-letter queue must be given, of the same type as its source, with a
	// maxReceiveCount of 1..1000.
	ErrInvalidRedrivePolicy = rule.ErrInvalidRedrivePolicy
	// ErrRedriveNotAllowed: the dead-letter queue's redrive allow policy does not allow the source queue.
	ErrRedriveNotAllowed = rule.ErrRedriveNotAllowed
	// ErrInvalidRedriveAllowPolicy: sources are named only with RedriveByQueue, which takes 1..10 of them.
	ErrInvalidRedriveAllowPolicy = rule.ErrInvalidRedriveAllowPolicy
	// ErrNotDeadLetterQueue: a move task's source must be some queue's dead-letter queue.
	ErrNotDeadLetterQueue = rule.ErrNotDeadLetterQueue
	// ErrInvalidMoveTask: a move task moves at most 500 messages a second, to a queue of the source's type
	// other than the source.
	ErrInvalidMoveTask = rule.ErrInvalidMoveTask
	// ErrMoveTaskRunning: a queue has at most one running move task.
	ErrMoveTaskRunning = rule.ErrMoveTaskRunning
	// ErrMoveTaskNotRunning: only a running move task can be cancelled.
	ErrMoveTaskNotRunning = rule.ErrMoveTaskNotRunning

	// ErrInvalidBatchOptions: Batcher and Consumer options out of their range, or, with Strict, beyond what
	// Lambda allows.
	ErrInvalidBatchOptions = rule.ErrInvalidBatchOptions

	// ErrPurgeInProgress: a queue can be purged once every 60 seconds.
	ErrPurgeInProgress = rule.ErrPurgeInProgress

	// ErrInvalidPage: MessagesAfter takes a cursor it returned for this queue (or ""), 1..1000 messages a
	// page, and a filter of a valid state (a group id only on a FIFO queue).
	ErrInvalidPage = rule.ErrInvalidPage
)

// ErrorCode returns the AWS error code carried by err, or "" when err is nil or not a fifoq rejection.
func ErrorCode(err error) string { return rule.Code(err) }

// ErrorMessage returns the message Amazon SQS sends with the error code of err (see [ErrorCode]) for the
// case err rejects, with the values SQS puts in it: the text a wire API answers with, such as "Value 9000
// for parameter DelaySeconds is invalid. Reason: DelaySeconds must be >= 0 and <= 900.". err.Error() stays
// the Go text ("fifoq: invalid delay: ..."). Where fifoq does not know the words SQS uses for a case, the
// message is err's text made a sentence, without its "fifoq: " prefix. ErrorMessage returns "" when err is
// nil or not a fifoq rejection. Of a [*BatchError], it returns the message of its first failed entry: the
// message of each is ErrorMessage(entry.Err). The errors of packages topic and catalog carry SNS's and SQS's
// messages the same way.
func ErrorMessage(err error) string { return rule.Message(err) }

// A BatchError reports the entries of a batch call that failed while the others succeeded, as SQS reports
// them in Failed[]. errors.Is matches it against the sentinel of any failed entry.
type BatchError struct {
	Entries []EntryError // in entry order
}

// An EntryError is the failure of one entry of a batch call.
type EntryError struct {
	Index int   // position of the entry in the call
	Err   error // wraps a sentinel error
}

// Error lists the failed entries.
func (e *BatchError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "fifoq: %d batch entries failed", len(e.Entries))
	for _, x := range e.Entries {
		fmt.Fprintf(&b, "; entry %d: %v", x.Index, x.Err)
	}
	return b.String()
}

// Unwrap returns the error of every failed entry.
func (e *BatchError) Unwrap() []error {
	errs := make([]error, len(e.Entries))
	for i, x := range e.Entries {
		errs[i] = x.Err
	}
	return errs
}

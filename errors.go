package fifoq

import (
	"errors"
	"fmt"
	"strings"
)

// An Error is a rejection by one of the SQS rules. Every sentinel below is an *Error; the errors fifoq returns
// wrap one of them with the detail of the call, so match them with [errors.Is] and read the code with
// [ErrorCode] or [errors.As].
type Error struct {
	// Code is the SQS error code of the rule, such as "InvalidParameterValue" or
	// "AWS.SimpleQueueService.PurgeQueueInProgress".
	Code string
	msg  string
}

// Error returns the rule's message.
func (e *Error) Error() string { return e.msg }

func (e *Error) sqsCode() string { return e.Code }

// coded gives err the SQS code of a rule whose code depends on the call: a FIFO batch entry without a group
// id fails the whole SendBatch with InvalidParameterValue, where a single Send says MissingParameter (2.2).
type coded struct {
	code string
	err  error
}

func (e *coded) Error() string   { return e.err.Error() }
func (e *coded) Unwrap() error   { return e.err }
func (e *coded) sqsCode() string { return e.code }

func newError(code, msg string) *Error { return &Error{Code: code, msg: "fifoq: " + msg} }

// The sentinel errors. A call that returns one of them changed nothing in the queue.
var (
	// ErrInvalidQueueName: a queue name is 1..80 characters of [A-Za-z0-9_-], plus ".fifo" for FIFO queues.
	ErrInvalidQueueName = newError("InvalidParameterValue", "invalid queue name")
	// ErrInvalidQueueAttribute: a queue option is out of its range.
	ErrInvalidQueueAttribute = newError("InvalidAttributeValue", "invalid queue attribute")
	// ErrFIFOOnly: a FIFO-only option (content-based deduplication, deduplication scope) on a standard queue.
	ErrFIFOOnly = newError("InvalidAttributeName", "attribute is valid only on FIFO queues")

	// ErrEmptyBody: a message body has at least one character.
	ErrEmptyBody = newError("MissingParameter", "the request must contain the parameter MessageBody")
	// ErrInvalidMessageContents: a body holds a character SQS does not allow, or is not valid UTF-8.
	ErrInvalidMessageContents = newError("InvalidMessageContents", "invalid characters in message")
	// ErrMessageTooLarge: body plus attributes exceed the queue's maximum message size.
	ErrMessageTooLarge = newError("InvalidParameterValue", "message too large")
	// ErrInvalidMessageAttribute: more than 10 attributes, or a bad attribute name, type or value (a String
	// or Number value with a character a body could not hold among them).
	ErrInvalidMessageAttribute = newError("InvalidParameterValue", "invalid message attribute")
	// ErrMissingGroupID: every message sent to a FIFO queue needs a message group id.
	ErrMissingGroupID = newError("MissingParameter", "the request must contain the parameter MessageGroupId")
	// ErrInvalidGroupID: a group id is 1..128 alphanumeric or punctuation characters.
	ErrInvalidGroupID = newError("InvalidParameterValue", "invalid message group id")
	// ErrMissingDeduplicationID: a FIFO queue without content-based deduplication needs a deduplication id.
	ErrMissingDeduplicationID = newError("InvalidParameterValue",
		"the queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly")
	// ErrInvalidDeduplicationID: a deduplication id is 1..128 alphanumeric or punctuation characters, and only
	// FIFO queues take one.
	ErrInvalidDeduplicationID = newError("InvalidParameterValue", "invalid message deduplication id")
	// ErrInvalidDelay: a message delay is 0..15 minutes, and FIFO queues take none per message.
	ErrInvalidDelay = newError("InvalidParameterValue", "invalid delay")

	// ErrEmptyBatch: a batch call has at least one entry.
	ErrEmptyBatch = newError("AWS.SimpleQueueService.EmptyBatchRequest", "batch request has no entries")
	// ErrTooManyEntries: a batch call has at most 10 entries.
	ErrTooManyEntries = newError("AWS.SimpleQueueService.TooManyEntriesInBatchRequest", "too many entries in batch request")
	// ErrBatchTooLong: the messages of one SendBatch add up to at most 1 MiB.
	ErrBatchTooLong = newError("AWS.SimpleQueueService.BatchRequestTooLong", "batch request too long")

	// ErrInvalidMaxMessages: a receive asks for 1..10 messages.
	ErrInvalidMaxMessages = newError("InvalidParameterValue", "invalid MaxMessages")
	// ErrInvalidWaitTime: a receive waits 0..20 seconds.
	ErrInvalidWaitTime = newError("InvalidParameterValue", "invalid wait time")
	// ErrInvalidVisibilityTimeout: a visibility timeout is 0..12 hours, and a message stays invisible at most
	// 12 hours from its receive.
	ErrInvalidVisibilityTimeout = newError("InvalidParameterValue", "invalid visibility timeout")
	// ErrInvalidAttemptID: a receive request attempt id is 1..128 alphanumeric or punctuation characters.
	ErrInvalidAttemptID = newError("InvalidParameterValue", "invalid receive request attempt id")
	// ErrAttemptNotRetryable: a receive request attempt id whose messages were deleted, changed or received
	// again within its 5 minutes cannot be replayed; use a new one.
	ErrAttemptNotRetryable = newError("InvalidParameterValue",
		"the receive request attempt id is not valid anymore since the receive call is not retryable")

	// ErrReceiptHandleInvalid: the string is not a receipt handle of this queue.
	ErrReceiptHandleInvalid = newError("ReceiptHandleIsInvalid", "receipt handle is invalid")
	// ErrReceiptHandleExpired: on a FIFO queue, the handle's visibility window is over, or the message was
	// received again since.
	ErrReceiptHandleExpired = newError("InvalidParameterValue", "the receipt handle has expired")
	// ErrMessageNotAvailable: ChangeVisibility on a message that was deleted or expired.
	ErrMessageNotAvailable = newError("InvalidParameterValue",
		"message does not exist or is not available for visibility timeout change")

	// ErrInvalidRedrivePolicy: a dead-letter queue must be given, of the same type as its source, with a
	// maxReceiveCount of 1..1000.
	ErrInvalidRedrivePolicy = newError("InvalidParameterValue", "invalid redrive policy")
	// ErrRedriveNotAllowed: the dead-letter queue's redrive allow policy does not allow the source queue.
	ErrRedriveNotAllowed = newError("InvalidParameterValue", "the dead-letter queue does not allow this source queue")
	// ErrInvalidRedriveAllowPolicy: sources are named only with RedriveByQueue, which takes 1..10 of them.
	ErrInvalidRedriveAllowPolicy = newError("InvalidAttributeValue", "invalid redrive allow policy")
	// ErrNotDeadLetterQueue: a move task's source must be some queue's dead-letter queue.
	ErrNotDeadLetterQueue = newError("InvalidParameterValue", "source queue must be configured as a dead letter queue")
	// ErrInvalidMoveTask: a move task moves at most 500 messages a second, to a queue of the source's type
	// other than the source.
	ErrInvalidMoveTask = newError("InvalidParameterValue", "invalid message move task")
	// ErrMoveTaskRunning: a queue has at most one running move task.
	ErrMoveTaskRunning = newError("InvalidParameterValue",
		"there is already a task running; only one active task is allowed for a source queue at a given time")
	// ErrMoveTaskNotRunning: only a running move task can be cancelled.
	ErrMoveTaskNotRunning = newError("InvalidParameterValue", "the move task is not running")

	// ErrInvalidBatchOptions: Batcher and Consumer options out of their range, or, with Strict, beyond what
	// Lambda allows.
	ErrInvalidBatchOptions = newError("InvalidParameterValueException", "invalid batch options")

	// ErrPurgeInProgress: a queue can be purged once every 60 seconds.
	ErrPurgeInProgress = newError("AWS.SimpleQueueService.PurgeQueueInProgress",
		"only one PurgeQueue operation is allowed every 60 seconds")

	// ErrInvalidPage: MessagesAfter takes a cursor it returned for this queue (or ""), 1..1000 messages a
	// page, and a filter of a valid state (a group id only on a FIFO queue).
	ErrInvalidPage = newError("InvalidParameterValue", "invalid message page")
)

// ErrorCode returns the SQS error code carried by err, or "" when err is nil or not a fifoq rejection.
func ErrorCode(err error) string {
	var e interface{ sqsCode() string }
	if errors.As(err, &e) {
		return e.sqsCode()
	}
	return ""
}

// reject wraps a sentinel with the detail of one call.
func reject(sentinel *Error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))
}

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

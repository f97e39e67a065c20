package fifoq

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// An Error is a rejection by one of the SQS rules. Every sentinel below is an *Error; the errors fifoq returns
// wrap one of them with the detail of the call, so match them with [errors.Is] and read the code with
// [ErrorCode] or [errors.As], and the message Amazon SQS sends for the case with [ErrorMessage].
type Error struct {
	// Code is the SQS error code of the rule, such as "InvalidParameterValue" or
	// "AWS.SimpleQueueService.PurgeQueueInProgress".
	Code string
	msg  string
	aws  string // AWS's message, for a rule whose message is the same for every call; "" otherwise
}

// Error returns the rule's message.
func (e *Error) Error() string { return e.msg }

func (e *Error) sqsCode() string    { return e.Code }
func (e *Error) awsMessage() string { return e.aws }

// A rejection is a sentinel's rule applied to one call: Error is the sentinel's text and the detail of the
// call, Go's way; aws is the message AWS sends for the case, with the values it puts in it (ErrorMessage).
type rejection struct {
	sentinel *Error
	detail   string
	aws      string
}

func (r *rejection) Error() string   { return r.sentinel.msg + ": " + r.detail }
func (r *rejection) Unwrap() error   { return r.sentinel }
func (r *rejection) sqsCode() string { return r.sentinel.Code }

func (r *rejection) awsMessage() string {
	if r.aws != "" {
		return r.aws
	}
	return r.sentinel.aws
}

// says sets the message AWS sends for the rejection, and returns it.
func (r *rejection) says(format string, args ...any) *rejection {
	r.aws = fmt.Sprintf(format, args...)
	return r
}

// coded gives err the SQS code of a rule whose code depends on the call: a FIFO batch entry without a group
// id fails the whole SendBatch with InvalidParameterValue, where a single Send says MissingParameter (2.2).
// Its AWS message is err's.
type coded struct {
	code string
	err  error
}

func (e *coded) Error() string   { return e.err.Error() }
func (e *coded) Unwrap() error   { return e.err }
func (e *coded) sqsCode() string { return e.code }

func newError(code, msg string) *Error { return &Error{Code: code, msg: "fifoq: " + msg} }

// newErrorSaying is newError for a rule whose AWS message is aws, whatever the call.
func newErrorSaying(code, msg, aws string) *Error {
	return &Error{Code: code, msg: "fifoq: " + msg, aws: aws}
}

// The sentinel errors. A call that returns one of them changed nothing in the queue.
var (
	// ErrInvalidQueueName: a queue name is 1..80 characters of [A-Za-z0-9_-], plus ".fifo" for FIFO queues.
	ErrInvalidQueueName = newErrorSaying("InvalidParameterValue", "invalid queue name",
		"Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length")
	// ErrInvalidQueueAttribute: a queue option is out of its range.
	ErrInvalidQueueAttribute = newError("InvalidAttributeValue", "invalid queue attribute")
	// ErrFIFOOnly: a FIFO-only option (content-based deduplication, deduplication scope) on a standard queue.
	ErrFIFOOnly = newError("InvalidAttributeName", "attribute is valid only on FIFO queues")

	// ErrEmptyBody: a message body has at least one character.
	ErrEmptyBody = newErrorSaying("MissingParameter", "the request must contain the parameter MessageBody",
		"The request must contain the parameter MessageBody.")
	// ErrInvalidMessageContents: a body holds a character SQS does not allow, or is not valid UTF-8.
	ErrInvalidMessageContents = newErrorSaying("InvalidMessageContents", "invalid characters in message",
		"Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | "+
			"#x10000 to #x10FFFF")
	// ErrMessageTooLarge: body plus attributes exceed the queue's maximum message size.
	ErrMessageTooLarge = newError("InvalidParameterValue", "message too large")
	// ErrInvalidMessageAttribute: more than 10 attributes, or a bad attribute name, type or value (a String
	// or Number value with a character a body could not hold among them).
	ErrInvalidMessageAttribute = newError("InvalidParameterValue", "invalid message attribute")
	// ErrMissingGroupID: every message sent to a FIFO queue needs a message group id.
	ErrMissingGroupID = newErrorSaying("MissingParameter", "the request must contain the parameter MessageGroupId",
		"The request must contain the parameter MessageGroupId.")
	// ErrInvalidGroupID: a group id is 1..128 alphanumeric or punctuation characters.
	ErrInvalidGroupID = newError("InvalidParameterValue", "invalid message group id")
	// ErrMissingDeduplicationID: a FIFO queue without content-based deduplication needs a deduplication id.
	ErrMissingDeduplicationID = newErrorSaying("InvalidParameterValue",
		"the queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
		"The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly")
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
	ErrNotDeadLetterQueue = newErrorSaying("InvalidParameterValue", "source queue must be configured as a dead letter queue",
		"Source queue must be configured as a Dead Letter Queue.")
	// ErrInvalidMoveTask: a move task moves at most 500 messages a second, to a queue of the source's type
	// other than the source.
	ErrInvalidMoveTask = newError("InvalidParameterValue", "invalid message move task")
	// ErrMoveTaskRunning: a queue has at most one running move task.
	ErrMoveTaskRunning = newErrorSaying("InvalidParameterValue",
		"there is already a task running; only one active task is allowed for a source queue at a given time",
		"There is already a task running. Only one active task is allowed for a source queue arn at a given time.")
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

// ErrorMessage returns the message Amazon SQS sends with the error code of err (see [ErrorCode]) for the
// case err rejects, with the values SQS puts in it: the text a wire API answers with, such as "Value 9000
// for parameter DelaySeconds is invalid. Reason: DelaySeconds must be >= 0 and <= 900.". err.Error() stays
// the Go text ("fifoq: invalid delay: ..."). Where fifoq does not know the words SQS uses for a case, the
// message is err's text made a sentence, without its "fifoq: " prefix. ErrorMessage returns "" when err is
// nil or not a fifoq rejection. Of a [*BatchError], it returns the message of its first failed entry: the
// message of each is ErrorMessage(entry.Err).
func ErrorMessage(err error) string {
	var e interface {
		error
		awsMessage() string
	}
	if !errors.As(err, &e) {
		return ""
	}
	if m := e.awsMessage(); m != "" {
		return m
	}
	s := strings.TrimPrefix(e.Error(), "fifoq: ")
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

// reject wraps a sentinel with the detail of one call, in Go's words; says adds AWS's.
func reject(sentinel *Error, format string, args ...any) *rejection {
	return &rejection{sentinel: sentinel, detail: fmt.Sprintf(format, args...)}
}

// invalidValue is the message SQS sends for most values out of their range: "Value v for parameter param
// is invalid. Reason: reason".
func invalidValue(v any, param, reason string) string {
	return fmt.Sprintf("Value %v for parameter %s is invalid. Reason: %s", v, param, reason)
}

// seconds formats d as SQS names a duration in a message: in seconds, a whole number for the whole seconds
// the wire API can give.
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

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

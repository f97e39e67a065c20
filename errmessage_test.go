package fifoq_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/internal/rule"
)

// Tests of the message SQS sends for each rule (ErrorMessage): fifoq builds it where the rule is checked, with
// the values SQS puts in it, so that a wire API passes it through. The texts are AWS's, as sqsapi's and the
// conformance module's tests recorded them (the SQS API reference's examples, LocalStack's AWS-validated
// snapshots).

// emRejected is a rejection to check: the call that makes it, and what it must carry.
type emRejected struct {
	name     string
	call     func(t *testing.T) error
	sentinel error
	code     string
	message  string // ErrorMessage's, exactly
}

// emEntryErr returns the error of entry i of a batch call's *BatchError.
func emEntryErr(t *testing.T, err error, i int) error {
	t.Helper()
	var be *fifoq.BatchError
	require.ErrorAs(t, err, &be, "want a *BatchError, got %v", err)
	for _, e := range be.Entries {
		if e.Index == i {
			return e.Err
		}
	}
	require.Failf(t, "no such entry", "entry %d did not fail: %v", i, err)
	return nil
}

// emSend sends m to a new queue named name, made with opts.
func emSend(name string, m fifoq.Message, opts ...fifoq.Option) func(t *testing.T) error {
	return func(t *testing.T) error {
		_, err := dlNewQueue(t, name, opts...).Send(context.Background(), m)
		return err
	}
}

// emSendEntry sends m as the second entry of a batch to a new queue named name, made with opts, and
// returns the entry's error.
func emSendEntry(name string, m fifoq.Message, opts ...fifoq.Option) func(t *testing.T) error {
	return func(t *testing.T) error {
		ok := fifoq.Message{Body: "ok", GroupID: "g", DeduplicationID: "d"}
		if !strings.HasSuffix(name, ".fifo") {
			ok.GroupID, ok.DeduplicationID = "", ""
		}
		_, err := dlNewQueue(t, name, opts...).SendBatch(context.Background(), []fifoq.Message{ok, m})
		return emEntryErr(t, err, 1)
	}
}

// emReceive receives with o from a new queue named name.
func emReceive(name string, o fifoq.ReceiveOptions) func(t *testing.T) error {
	return func(t *testing.T) error {
		_, err := dlNewQueue(t, name).Receive(context.Background(), o)
		return err
	}
}

func emAttr(name, dataType, s string, b []byte) fifoq.Message {
	return fifoq.Message{Body: "b", Attributes: map[string]fifoq.Attribute{name: {DataType: dataType, StringValue: s, BinaryValue: b}}}
}

// emHandles returns a receipt handle of a message of a FIFO queue whose visibility timeout was ended at once, so
// that the handle has expired, and a standard queue's handle of a deleted message.
func emHandles(t *testing.T) (fifo *fifoq.Queue, expired string, std *fifoq.Queue, deleted string) {
	t.Helper()
	ctx := context.Background()
	fifo = dlFIFO(t)
	dlSend(t, fifo, fifoq.Message{Body: "b", GroupID: "g"})
	ds := dlReceive(t, fifo, 1)
	require.Len(t, ds, 1)
	require.NoError(t, fifo.ChangeVisibility(ctx, ds[0].ReceiptHandle, 0))
	std = dlNewQueue(t, "em-std")
	dlSend(t, std, fifoq.Message{Body: "b"})
	dd := dlReceive(t, std, 1)
	require.Len(t, dd, 1)
	dlDelete(t, std, dd...)
	return fifo, ds[0].ReceiptHandle, std, dd[0].ReceiptHandle
}

// Every rule with AWS's message for it: the rejection matches its sentinel with errors.Is, carries the code,
// keeps a Go error text ("fifoq: ..."), and ErrorMessage is the text SQS sends, with the values of the call.
func TestErrorMessageOfEachRule(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const (
		ipv = "InvalidParameterValue"
		mp  = "MissingParameter"
	)
	idReason := func(param string) string {
		return param + " can only include alphanumeric and punctuation characters. 1 to 128 in length."
	}
	long := strings.Repeat("d", 129)
	cases := []emRejected{
		{"7.3.1/queue name", func(t *testing.T) error { _, err := fifoq.New("a b"); return err }, fifoq.ErrInvalidQueueName, ipv,
			"Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length"},

		{"7.1.1/empty body", emSend("q", fifoq.Message{}), fifoq.ErrEmptyBody, mp,
			"The request must contain the parameter MessageBody."},
		{"7.1.1/invalid character", emSend("q", fifoq.Message{Body: "a\x00"}), fifoq.ErrInvalidMessageContents,
			"InvalidMessageContents", "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | " +
				"#x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF"},
		{"7.1.2/too large", emSend("q", fifoq.Message{Body: strings.Repeat("a", 1<<20+1)}), fifoq.ErrMessageTooLarge, ipv,
			"One or more parameters are invalid. Reason: Message must be shorter than 1048576 bytes."},
		{"7.1.2/too large for the queue", emSend("q", fifoq.Message{Body: strings.Repeat("a", 2000)}, fifoq.WithMaxMessageSize(1024)),
			fifoq.ErrMessageTooLarge, ipv, "One or more parameters are invalid. Reason: Message must be shorter than 1024 bytes."},
		{"7.1.2/batch entry too large", emSendEntry("q", fifoq.Message{Body: strings.Repeat("a", 2000)}, fifoq.WithMaxMessageSize(1024)),
			fifoq.ErrMessageTooLarge, ipv, "One or more parameters cannot be validated. Reason: Message must be shorter than 1024 bytes."},

		{"7.1.3/11 attributes", emSend("q", dlAttrs(11)), fifoq.ErrInvalidMessageAttribute, ipv,
			"Number of message attributes [11] exceeds the allowed maximum [10]."},
		{"7.1.3/no data type", emSend("q", emAttr("k", "", "v", nil)), fifoq.ErrInvalidMessageAttribute, ipv,
			"The message attribute 'k' must contain non-empty message attribute type."},
		{"7.1.3/custom type without base", emSend("q", emAttr("k", ".x", "v", nil)), fifoq.ErrInvalidMessageAttribute, ipv,
			"The message attribute 'k' must contain non-empty message attribute type."},
		{"7.1.3/empty String", emSend("q", emAttr("k", "String", "", nil)), fifoq.ErrInvalidMessageAttribute, ipv,
			"Message (user) attribute 'k' must contain a non-empty value of type 'String'."},
		{"7.1.3/empty Number", emSend("q", emAttr("k", "Number.int", "", nil)), fifoq.ErrInvalidMessageAttribute, ipv,
			"Message (user) attribute 'k' must contain a non-empty value of type 'Number'."},
		{"7.1.3/empty Binary", emSend("q", emAttr("k", "Binary", "", nil)), fifoq.ErrInvalidMessageAttribute, ipv,
			"Message (user) attribute 'k' must contain a non-empty value of type 'Binary'."},
		{"7.1.3/unknown type", emSend("q", emAttr("k", "Text", "v", nil)), fifoq.ErrInvalidMessageAttribute, ipv,
			"The type of message (user) attribute 'k' is invalid. You must use only the following supported type " +
				"prefixes: Binary, Number, String."},
		{"7.1.3/batch entry attribute", emSendEntry("q", emAttr("k", "String", "", nil)), fifoq.ErrInvalidMessageAttribute, ipv,
			"Message (user) attribute 'k' must contain a non-empty value of type 'String'."},

		{"2.2/missing group id", emSend("q.fifo", fifoq.Message{Body: "b", DeduplicationID: "d"}), fifoq.ErrMissingGroupID, mp,
			"The request must contain the parameter MessageGroupId."},
		{"2.2/batch entry without group id", func(t *testing.T) error {
			_, err := dlNewQueue(t, "q.fifo").SendBatch(ctx, []fifoq.Message{{Body: "b", GroupID: "g", DeduplicationID: "d"},
				{Body: "b", DeduplicationID: "e"}})
			return err
		}, fifoq.ErrMissingGroupID, ipv, "The request must contain the parameter MessageGroupId."},
		{"2.3/invalid group id", emSend("q.fifo", fifoq.Message{Body: "b", GroupID: "a b", DeduplicationID: "d"}),
			fifoq.ErrInvalidGroupID, ipv, "Value a b for parameter MessageGroupId is invalid. Reason: " + idReason("MessageGroupId")},
		{"2.3/invalid group id on standard", emSend("q", fifoq.Message{Body: "b", GroupID: long}),
			fifoq.ErrInvalidGroupID, ipv, "Value " + long + " for parameter MessageGroupId is invalid. Reason: " + idReason("MessageGroupId")},
		{"3.1/missing deduplication id", emSend("q.fifo", fifoq.Message{Body: "b", GroupID: "g"}), fifoq.ErrMissingDeduplicationID, ipv,
			"The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly"},
		{"3.2/invalid deduplication id", emSend("q.fifo", fifoq.Message{Body: "b", GroupID: "g", DeduplicationID: long}),
			fifoq.ErrInvalidDeduplicationID, ipv, "Value " + long + " for parameter MessageDeduplicationId is invalid. Reason: " +
				idReason("MessageDeduplicationId")},
		{"3.2/deduplication id on standard, batch entry", emSendEntry("q", fifoq.Message{Body: "b", DeduplicationID: "d"}),
			fifoq.ErrInvalidDeduplicationID, ipv, "The request include parameter that is not valid for this queue type"},
		// Recorded: a production log's "(Value <uuid> for parameter MessageDeduplicationId is invalid. Reason: The
		// request include parameter that is not valid for this queue type.)" of a SendMessage to a standard queue.
		{"3.2/deduplication id on standard, single send", emSend("q", fifoq.Message{Body: "b", DeduplicationID: "d-1"}),
			fifoq.ErrInvalidDeduplicationID, ipv, "Value d-1 for parameter MessageDeduplicationId is invalid. Reason: " +
				"The request include parameter that is not valid for this queue type."},

		{"4.1/delay over 15 minutes", emSend("q", fifoq.Message{Body: "b", Delay: 16 * time.Minute}), fifoq.ErrInvalidDelay, ipv,
			"Value 960 for parameter DelaySeconds is invalid. Reason: DelaySeconds must be >= 0 and <= 900."},
		{"4.1/negative delay", emSend("q", fifoq.Message{Body: "b", Delay: -time.Second}), fifoq.ErrInvalidDelay, ipv,
			"Value -1 for parameter DelaySeconds is invalid. Reason: DelaySeconds must be >= 0 and <= 900."},
		{"4.1/batch entry without group id and with a bad delay fails alone", emSendEntry("q.fifo", fifoq.Message{Body: "b", Delay: 901 * time.Second}),
			fifoq.ErrInvalidDelay, ipv, "Value 901 for parameter DelaySeconds is invalid. Reason: DelaySeconds must be >= 0 and <= 900."},
		{"4.3/FIFO per-message delay", emSend("q.fifo", fifoq.Message{Body: "b", GroupID: "g", DeduplicationID: "d", Delay: 2 * time.Second}),
			fifoq.ErrInvalidDelay, ipv, "Value 2 for parameter DelaySeconds is invalid. Reason: The request include parameter " +
				"that is not valid for this queue type."},

		{"7.2.1/empty SendBatch", func(t *testing.T) error { _, err := dlNewQueue(t, "q").SendBatch(ctx, nil); return err },
			fifoq.ErrEmptyBatch, "AWS.SimpleQueueService.EmptyBatchRequest",
			"There should be at least one SendMessageBatchRequestEntry in the request."},
		{"7.2.1/empty DeleteBatch", func(t *testing.T) error { return dlNewQueue(t, "q").DeleteBatch(ctx, nil) },
			fifoq.ErrEmptyBatch, "AWS.SimpleQueueService.EmptyBatchRequest",
			"There should be at least one DeleteMessageBatchRequestEntry in the request."},
		{"7.2.1/empty ChangeVisibilityBatch", func(t *testing.T) error { return dlNewQueue(t, "q").ChangeVisibilityBatch(ctx, nil) },
			fifoq.ErrEmptyBatch, "AWS.SimpleQueueService.EmptyBatchRequest",
			"There should be at least one ChangeMessageVisibilityBatchRequestEntry in the request."},
		{"7.2.1/11 entries", func(t *testing.T) error { _, err := dlNewQueue(t, "q").SendBatch(ctx, dlBatch(11)); return err },
			fifoq.ErrTooManyEntries, "AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
			"Maximum number of entries per request are 10. You have sent 11."},
		{"7.2.2/batch too long", func(t *testing.T) error {
			_, err := dlNewQueue(t, "q").SendBatch(ctx, []fifoq.Message{{Body: strings.Repeat("a", 1<<19)}, {Body: strings.Repeat("a", 1<<19+1)}})
			return err
		}, fifoq.ErrBatchTooLong, "AWS.SimpleQueueService.BatchRequestTooLong",
			"Batch requests cannot be longer than 1048576 bytes. You have sent 1048577 bytes."},

		{"1.5.4/MaxMessages 11", emReceive("q", fifoq.ReceiveOptions{MaxMessages: 11}), fifoq.ErrInvalidMaxMessages, ipv,
			"Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided."},
		{"1.5.1/WaitTime 21s", emReceive("q", fifoq.ReceiveOptions{WaitTime: 21 * time.Second}), fifoq.ErrInvalidWaitTime, ipv,
			"Value 21 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided."},
		{"1.2.2/receive visibility timeout", emReceive("q", fifoq.ReceiveOptions{VisibilityTimeout: 43201 * time.Second}),
			fifoq.ErrInvalidVisibilityTimeout, ipv,
			"Value 43201 for parameter VisibilityTimeout is invalid. Reason: Must be >= 0 and <= 43200, if provided."},
		{"2.15.1/attempt id", emReceive("q.fifo", fifoq.ReceiveOptions{AttemptID: "a b"}), fifoq.ErrInvalidAttemptID, ipv,
			"Value a b for parameter ReceiveRequestAttemptId is invalid. Reason: " + idReason("ReceiveRequestAttemptId")},
		{"2.15.3/attempt not retryable", func(t *testing.T) error {
			q := dlFIFO(t)
			dlSend(t, q, fifoq.Message{Body: "b", GroupID: "g"})
			ds, err := q.Receive(ctx, fifoq.ReceiveOptions{AttemptID: "x"})
			require.NoError(t, err)
			dlDelete(t, q, ds...)
			_, err = q.Receive(ctx, fifoq.ReceiveOptions{AttemptID: "x"})
			return err
		}, fifoq.ErrAttemptNotRetryable, ipv, "Value x for parameter ReceiveRequestAttemptId is invalid. Reason: The " +
			"receiveRequestAttemptId is not valid anymore since the receive call is not retryable."},

		{"1.3.4/receipt handle invalid", func(t *testing.T) error { return dlNewQueue(t, "q").Delete(ctx, "garb\"age") },
			fifoq.ErrReceiptHandleInvalid, "ReceiptHandleIsInvalid", `The input receipt handle "garb"age" is not a valid receipt handle.`},
		{"1.3.4/ChangeVisibility of an invalid handle", func(t *testing.T) error {
			return dlNewQueue(t, "q").ChangeVisibility(ctx, "x", time.Second)
		}, fifoq.ErrReceiptHandleInvalid, "ReceiptHandleIsInvalid", `The input receipt handle "x" is not a valid receipt handle.`},
		{"1.2.4/negative visibility change", func(t *testing.T) error {
			return dlNewQueue(t, "q").ChangeVisibility(ctx, "x", -time.Second)
		}, fifoq.ErrInvalidVisibilityTimeout, ipv, "Value -1 for parameter VisibilityTimeout is invalid. Reason: VisibilityTimeout must be >= 0."},
		{"1.2.5/visibility change over 12h", func(t *testing.T) error {
			return dlNewQueue(t, "q").ChangeVisibility(ctx, "x", 43201*time.Second)
		}, fifoq.ErrInvalidVisibilityTimeout, ipv, "Value 43201 for parameter VisibilityTimeout is invalid. Reason: Total " +
			"VisibilityTimeout for the message is beyond the limit [43200 seconds]"},
		{"1.2.5/visibility change past 12h from the receive", func(t *testing.T) error {
			clk := fifoq.NewManualClock(dlStart)
			q, err := fifoq.New("q", fifoq.WithClock(clk), fifoq.WithVisibilityTimeout(12*time.Hour))
			require.NoError(t, err)
			dlSend(t, q, fifoq.Message{Body: "b"})
			ds := dlReceive(t, q, 1)
			clk.Advance(time.Hour)
			return q.ChangeVisibility(ctx, ds[0].ReceiptHandle, 11*time.Hour+time.Second)
		}, fifoq.ErrInvalidVisibilityTimeout, ipv, "Value 39601 for parameter VisibilityTimeout is invalid. Reason: Total " +
			"VisibilityTimeout for the message is beyond the limit [43200 seconds]"},
		{"7.3.3/purge in progress", func(t *testing.T) error {
			q := dlNewQueue(t, "em-purged")
			require.NoError(t, q.Purge(ctx))
			return q.Purge(ctx)
		}, fifoq.ErrPurgeInProgress, "AWS.SimpleQueueService.PurgeQueueInProgress",
			"Only one PurgeQueue operation on em-purged is allowed every 60 seconds."},
		{"6.9.1/move task from a queue that is no dead-letter queue", func(t *testing.T) error {
			_, err := dlNewQueue(t, "q").StartMoveTask(ctx, nil, 0)
			return err
		}, fifoq.ErrNotDeadLetterQueue, ipv, "Source queue must be configured as a Dead Letter Queue."},
		{"6.9.2/move rate", func(t *testing.T) error {
			dlq := dlNewQueue(t, "em-dlq")
			dlNewQueue(t, "em-src", fifoq.WithDeadLetterQueue(dlq, 1))
			_, err := dlq.StartMoveTask(ctx, nil, 501)
			return err
		}, fifoq.ErrInvalidMoveTask, ipv, "Value 501 for parameter MaxNumberOfMessagesPerSecond is invalid. Reason: Must be between 1 and 500."},

		// The checks of values a front end was given, which fifoq's types read as none.
		{"CheckBatchLen", func(*testing.T) error { return fifoq.CheckBatchLen(9990) }, fifoq.ErrTooManyEntries,
			"AWS.SimpleQueueService.TooManyEntriesInBatchRequest", "Maximum number of entries per request are 10. You have sent 9990."},
		{"CheckAttributeCount", func(*testing.T) error { return rule.CheckAttributeCount(5000) }, fifoq.ErrInvalidMessageAttribute, ipv,
			"Number of message attributes [5000] exceeds the allowed maximum [10]."},
		{"CheckID/empty group id", func(*testing.T) error { return rule.ID("", fifoq.ErrInvalidGroupID) }, fifoq.ErrInvalidGroupID, ipv,
			"Value  for parameter MessageGroupId is invalid. Reason: " + idReason("MessageGroupId")},
		{"CheckID/empty deduplication id", func(*testing.T) error { return rule.ID("", fifoq.ErrInvalidDeduplicationID) },
			fifoq.ErrInvalidDeduplicationID, ipv, "Value  for parameter MessageDeduplicationId is invalid. Reason: " + idReason("MessageDeduplicationId")},
		{"CheckID/empty attempt id", func(*testing.T) error { return rule.ID("", fifoq.ErrInvalidAttemptID) }, fifoq.ErrInvalidAttemptID, ipv,
			"Value  for parameter ReceiveRequestAttemptId is invalid. Reason: " + idReason("ReceiveRequestAttemptId")},
		{"CheckMaxMessages/0", func(*testing.T) error { return rule.CheckMaxMessages(0) }, fifoq.ErrInvalidMaxMessages, ipv,
			"Value 0 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided."},
		{"CheckMoveRate/0", func(*testing.T) error { return rule.CheckMoveRate(0) }, fifoq.ErrInvalidMoveTask, ipv,
			"Value 0 for parameter MaxNumberOfMessagesPerSecond is invalid. Reason: Must be between 1 and 500."},
		{"ReceiveOptions.Check", func(*testing.T) error { return fifoq.ReceiveOptions{WaitTime: -time.Second}.Check() }, fifoq.ErrInvalidWaitTime, ipv,
			"Value -1 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided."},
		{"CheckOptions", func(*testing.T) error { return fifoq.CheckOptions(false, fifoq.WithRetention(59*time.Second)) },
			fifoq.ErrInvalidQueueAttribute, "InvalidAttributeValue", "Invalid value for the parameter MessageRetentionPeriod."},
		{"1.2.1/queue visibility timeout", func(*testing.T) error {
			_, err := fifoq.New("q", fifoq.WithVisibilityTimeout(43201*time.Second))
			return err
		}, fifoq.ErrInvalidQueueAttribute, "InvalidAttributeValue", "Invalid value for the parameter VisibilityTimeout."},
		{"7.1.2/queue maximum message size", func(*testing.T) error {
			_, err := fifoq.New("q", fifoq.WithMaxMessageSize(1023))
			return err
		}, fifoq.ErrInvalidQueueAttribute, "InvalidAttributeValue", "Invalid value for the parameter MaximumMessageSize."},
		{"VisibilityChange.Check", func(*testing.T) error { return fifoq.VisibilityChange{Timeout: 13 * time.Hour}.Check() },
			fifoq.ErrInvalidVisibilityTimeout, ipv, "Value 46800 for parameter VisibilityTimeout is invalid. Reason: Total " +
				"VisibilityTimeout for the message is beyond the limit [43200 seconds]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.call(t)
			require.ErrorIs(t, err, tc.sentinel)
			require.Equal(t, tc.code, fifoq.ErrorCode(err), "ErrorCode(%v)", err)
			require.Equal(t, tc.message, fifoq.ErrorMessage(err), "ErrorMessage(%v)", err)
			require.True(t, strings.HasPrefix(err.Error(), "fifoq: ") || strings.HasPrefix(err.Error(), "entry "),
				"the Go text stays Go's: %q", err)
			require.NotEqual(t, tc.message, err.Error(), "AWS's message is not the Go text")
		})
	}
}

// The handles of the receipt handle rules are quoted as given.
func TestErrorMessageNamesTheHandle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fifo, expired, std, deleted := emHandles(t)
	err := fifo.Delete(ctx, expired)
	require.ErrorIs(t, err, fifoq.ErrReceiptHandleExpired)
	require.Equal(t, "Value "+expired+" for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.", fifoq.ErrorMessage(err))
	err = fifo.ChangeVisibility(ctx, expired, time.Second)
	require.ErrorIs(t, err, fifoq.ErrReceiptHandleExpired)
	require.Equal(t, "Value "+expired+" for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.", fifoq.ErrorMessage(err))
	err = std.ChangeVisibility(ctx, deleted, time.Second)
	require.ErrorIs(t, err, fifoq.ErrMessageNotAvailable)
	require.Equal(t, "Value "+deleted+" for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not "+
		"available for visibility timeout change.", fifoq.ErrorMessage(err))
	err = std.DeleteBatch(ctx, []string{deleted, "garbage"})
	require.Equal(t, `The input receipt handle "garbage" is not a valid receipt handle.`, fifoq.ErrorMessage(emEntryErr(t, err, 1)))
	require.Equal(t, fifoq.ErrorMessage(emEntryErr(t, err, 1)), fifoq.ErrorMessage(err), "of a *BatchError, its first entry's")
}

// Where fifoq does not know AWS's words, the message is the Go text made a sentence; errors that are no
// rule's have none.
func TestErrorMessageOtherwise(t *testing.T) {
	t.Parallel()
	_, err := dlNewQueue(t, "q").Send(context.Background(), dlAttrMsg("AWS.x", dlStr("v")))
	require.ErrorIs(t, err, fifoq.ErrInvalidMessageAttribute)
	require.Equal(t, `Invalid message attribute: attribute name "AWS.x": the AWS. and Amazon. prefixes are reserved.`, fifoq.ErrorMessage(err))
	require.Equal(t, "Invalid queue attribute.", fifoq.ErrorMessage(fifoq.ErrInvalidQueueAttribute), "of a sentinel")
	require.Equal(t, "The request must contain the parameter MessageBody.", fifoq.ErrorMessage(fmt.Errorf("wrapped: %w", fifoq.ErrEmptyBody)))
	for _, err := range []error{nil, errors.New("other"), context.Canceled, fifoq.ErrStoreClosed} {
		require.Equal(t, "", fifoq.ErrorMessage(err), "ErrorMessage(%v)", err)
		require.Equal(t, "", fifoq.ErrorCode(err), "ErrorCode(%v)", err)
	}
}

// The front-end checks pass what is in range.
func TestErrorChecksInRange(t *testing.T) {
	t.Parallel()
	require.NoError(t, rule.ID("a-b!", fifoq.ErrInvalidGroupID))
	require.NoError(t, fifoq.CheckBatchLen(0), "an empty batch is the batch calls' own error")
	require.NoError(t, fifoq.CheckBatchLen(fifoq.MaxBatchEntries))
	require.NoError(t, rule.CheckAttributeCount(fifoq.MaxMessageAttributes))
	require.NoError(t, rule.CheckMaxMessages(fifoq.MaxBatchEntries))
	require.NoError(t, rule.CheckMoveRate(500))
	require.EqualError(t, rule.CheckMoveRate(0), "fifoq: invalid message move task: rate 0 messages a second, want 1..500",
		"the text says the range CheckMoveRate takes")
	require.NoError(t, fifoq.ReceiveOptions{NoWaitTime: true, NoVisibilityTimeout: true}.Check())
	require.NoError(t, fifoq.ReceiveOptions{MaxMessages: 10, WaitTime: 20 * time.Second, VisibilityTimeout: 12 * time.Hour}.Check())
	require.NoError(t, fifoq.VisibilityChange{Timeout: 12 * time.Hour}.Check())
	require.NoError(t, fifoq.CheckOptions(true, fifoq.WithContentBasedDeduplication(), fifoq.WithDelay(15*time.Minute)))
	require.ErrorIs(t, fifoq.CheckOptions(false, fifoq.WithContentBasedDeduplication()), fifoq.ErrFIFOOnly)
}

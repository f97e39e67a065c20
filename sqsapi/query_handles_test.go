package sqsapi_test

// Query-protocol tests of DeleteMessage and ChangeMessageVisibility.

import (
	"strconv"
	"testing"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/stretchr/testify/require"
)

func TestQpDeleteMessage(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-del")
	for i := range 3 {
		qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "m"+strconv.Itoa(i))
	}
	r := qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u, "MaxNumberOfMessages", "3")
	require.Len(t, r.Messages, 3)
	h := func(i int) string { return r.Messages[i].ReceiptHandle }

	qpCall[qpNoResult](t, e, "DeleteMessage", "QueueUrl", u, "ReceiptHandle", h(0))
	require.Len(t, qpMessages(t, e, "qp-del"), 2)
	qpCall[qpNoResult](t, e, "DeleteMessage", "QueueUrl", u, "ReceiptHandle", h(0)) // again: success (spec 1.3.4)
	// A string that is no receipt handle: ReceiptHandleIsInvalid (spec 1.3.4), which real SQS answers with
	// HTTP 404 (the query model gives the shape no status; SQS's own replies carry 404).
	er := qpFail(t, e, 404, "ReceiptHandleIsInvalid", "DeleteMessage", "QueueUrl", u, "ReceiptHandle", "garbage")
	require.Equal(t, `The input receipt handle "garbage" is not a valid receipt handle.`, er.Message, "spec 1.3.4")
	qpFail(t, e, 400, "MissingParameter", "DeleteMessage", "QueueUrl", u)
	require.Len(t, qpMessages(t, e, "qp-del"), 2)

	b := qpCall[qpDeleteMessageBatchResult](t, e, "DeleteMessageBatch", "QueueUrl", u,
		"DeleteMessageBatchRequestEntry.1.Id", "one", "DeleteMessageBatchRequestEntry.1.ReceiptHandle", h(1),
		"DeleteMessageBatchRequestEntry.2.Id", "bad", "DeleteMessageBatchRequestEntry.2.ReceiptHandle", "garbage",
		"DeleteMessageBatchRequestEntry.3.Id", "two", "DeleteMessageBatchRequestEntry.3.ReceiptHandle", h(2))
	require.ElementsMatch(t, []qpBatchID{{"one"}, {"two"}}, b.Successful)
	require.Len(t, b.Failed, 1)
	require.Equal(t, "bad", b.Failed[0].ID)
	require.Equal(t, "ReceiptHandleIsInvalid", b.Failed[0].Code)
	require.True(t, b.Failed[0].SenderFault)
	require.Empty(t, qpMessages(t, e, "qp-del"))

	qpFail(t, e, 400, "AWS.SimpleQueueService.EmptyBatchRequest", "DeleteMessageBatch", "QueueUrl", u)
	qpFail(t, e, 400, "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", "DeleteMessageBatch", "QueueUrl", u,
		"DeleteMessageBatchRequestEntry.1.Id", "x", "DeleteMessageBatchRequestEntry.1.ReceiptHandle", h(1),
		"DeleteMessageBatchRequestEntry.2.Id", "x", "DeleteMessageBatchRequestEntry.2.ReceiptHandle", h(2))
	qpFail(t, e, 400, "AWS.SimpleQueueService.InvalidBatchEntryId", "DeleteMessageBatch", "QueueUrl", u,
		"DeleteMessageBatchRequestEntry.1.Id", "x.y", "DeleteMessageBatchRequestEntry.1.ReceiptHandle", h(1))
	many := []string{"QueueUrl", u}
	for i := 1; i <= 11; i++ {
		p := "DeleteMessageBatchRequestEntry." + strconv.Itoa(i) + "."
		many = append(many, p+"Id", "e"+strconv.Itoa(i), p+"ReceiptHandle", h(1))
	}
	qpFail(t, e, 400, "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", "DeleteMessageBatch", many...)
}

func TestQpChangeMessageVisibility(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-vis")
	for i := range 4 {
		qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "m"+strconv.Itoa(i))
	}
	r := qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u, "MaxNumberOfMessages", "4")
	require.Len(t, r.Messages, 4)
	state := func(id string) fifoq.Snapshot {
		for _, s := range qpMessages(t, e, "qp-vis") {
			if s.MessageID == id {
				return s
			}
		}
		t.Fatalf("message %s is gone", id)
		return fifoq.Snapshot{}
	}
	e.clock.Advance(10 * time.Second)
	m0, m1, m2, m3 := r.Messages[0], r.Messages[1], r.Messages[2], r.Messages[3]

	qpCall[qpNoResult](t, e, "ChangeMessageVisibility", "QueueUrl", u, "ReceiptHandle", m0.ReceiptHandle,
		"VisibilityTimeout", "0")
	require.Equal(t, fifoq.StateVisible, state(m0.MessageID).State, "VisibilityTimeout 0 (spec 1.2.7)")
	qpCall[qpNoResult](t, e, "ChangeMessageVisibility", "QueueUrl", u, "ReceiptHandle", m1.ReceiptHandle,
		"VisibilityTimeout", "100")
	require.Equal(t, e.clock.Now().Add(100*time.Second), state(m1.MessageID).VisibleAt, "counted from the call (spec 1.2.4)")

	// Rejections change nothing.
	before := qpMessages(t, e, "qp-vis")
	qpFail(t, e, 400, "InvalidParameterValue", "ChangeMessageVisibility", "QueueUrl", u,
		"ReceiptHandle", m1.ReceiptHandle, "VisibilityTimeout", "43201") // spec 1.2.5
	qpFail(t, e, 400, "InvalidParameterValue", "ChangeMessageVisibility", "QueueUrl", u,
		"ReceiptHandle", m1.ReceiptHandle, "VisibilityTimeout", "-1")
	qpFail(t, e, 400, "MissingParameter", "ChangeMessageVisibility", "QueueUrl", u, "ReceiptHandle", m1.ReceiptHandle)
	qpFail(t, e, 404, "ReceiptHandleIsInvalid", "ChangeMessageVisibility", "QueueUrl", u,
		"ReceiptHandle", "garbage", "VisibilityTimeout", "5")
	require.Equal(t, before, qpMessages(t, e, "qp-vis"))

	b := qpCall[qpChangeMessageVisibilityBatchResult](t, e, "ChangeMessageVisibilityBatch", "QueueUrl", u,
		"ChangeMessageVisibilityBatchRequestEntry.1.Id", "two",
		"ChangeMessageVisibilityBatchRequestEntry.1.ReceiptHandle", m2.ReceiptHandle,
		"ChangeMessageVisibilityBatchRequestEntry.1.VisibilityTimeout", "0",
		"ChangeMessageVisibilityBatchRequestEntry.2.Id", "three",
		"ChangeMessageVisibilityBatchRequestEntry.2.ReceiptHandle", m3.ReceiptHandle,
		"ChangeMessageVisibilityBatchRequestEntry.2.VisibilityTimeout", "60",
		"ChangeMessageVisibilityBatchRequestEntry.3.Id", "bad",
		"ChangeMessageVisibilityBatchRequestEntry.3.ReceiptHandle", "garbage",
		"ChangeMessageVisibilityBatchRequestEntry.3.VisibilityTimeout", "60")
	require.ElementsMatch(t, []qpBatchID{{"two"}, {"three"}}, b.Successful)
	require.Len(t, b.Failed, 1)
	require.Equal(t, qpBatchResultErrorEntry{ID: "bad", SenderFault: true, Code: "ReceiptHandleIsInvalid",
		Message: b.Failed[0].Message}, b.Failed[0])
	require.Equal(t, fifoq.StateVisible, state(m2.MessageID).State)
	require.Equal(t, e.clock.Now().Add(60*time.Second), state(m3.MessageID).VisibleAt)

	// The 12-hour cap counts from the receive, 10 s ago (spec 1.2.5); a deleted message cannot change (1.3.4).
	qpFail(t, e, 400, "InvalidParameterValue", "ChangeMessageVisibility", "QueueUrl", u,
		"ReceiptHandle", m1.ReceiptHandle, "VisibilityTimeout", "43200")
	qpCall[qpNoResult](t, e, "ChangeMessageVisibility", "QueueUrl", u, "ReceiptHandle", m1.ReceiptHandle,
		"VisibilityTimeout", "43190")
	qpCall[qpNoResult](t, e, "DeleteMessage", "QueueUrl", u, "ReceiptHandle", m3.ReceiptHandle)
	er := qpFail(t, e, 400, "InvalidParameterValue", "ChangeMessageVisibility", "QueueUrl", u,
		"ReceiptHandle", m3.ReceiptHandle, "VisibilityTimeout", "5")
	require.Equal(t, "Value "+m3.ReceiptHandle+" for parameter ReceiptHandle is invalid. Reason: Message does not exist "+
		"or is not available for visibility timeout change.", er.Message)

	qpFail(t, e, 400, "AWS.SimpleQueueService.EmptyBatchRequest", "ChangeMessageVisibilityBatch", "QueueUrl", u)
	qpFail(t, e, 400, "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", "ChangeMessageVisibilityBatch", "QueueUrl", u,
		"ChangeMessageVisibilityBatchRequestEntry.1.Id", "x",
		"ChangeMessageVisibilityBatchRequestEntry.1.ReceiptHandle", m1.ReceiptHandle,
		"ChangeMessageVisibilityBatchRequestEntry.1.VisibilityTimeout", "1",
		"ChangeMessageVisibilityBatchRequestEntry.2.Id", "x",
		"ChangeMessageVisibilityBatchRequestEntry.2.ReceiptHandle", m3.ReceiptHandle,
		"ChangeMessageVisibilityBatchRequestEntry.2.VisibilityTimeout", "1")
}

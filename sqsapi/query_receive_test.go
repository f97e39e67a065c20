package sqsapi_test

// Query-protocol tests of ReceiveMessage, on standard and FIFO queues, and of long polling.

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/stretchr/testify/require"
)

func TestQpReceiveMessage(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-recv")
	attrs := map[string]qpAttr{
		"MyAttribute": {DataType: "String", String: "foobar"},
		"Meta.one":    {DataType: "Number.int", String: "1"},
		"Meta.two":    {DataType: "Binary", Binary: []byte{0xde, 0xad, 0xbe, 0xef}},
	}
	sent := qpCall[qpSendMessageResult](t, e, "SendMessage", append([]string{"QueueUrl", u, "MessageBody", "foobar",
		"MessageSystemAttribute.1.Name", "AWSTraceHeader",
		"MessageSystemAttribute.1.Value.DataType", "String",
		"MessageSystemAttribute.1.Value.StringValue", qpTraceHeader,
	}, qpAttrParams("MessageAttribute", attrs)...)...)

	e.clock.Advance(1500 * time.Millisecond)
	r := qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u,
		"AttributeName.1", "All", "MessageAttributeName.1", "All")
	require.Len(t, r.Messages, 1)
	m := r.Messages[0]
	require.Equal(t, sent.MessageID, m.MessageID)
	require.Equal(t, "foobar", m.Body)
	require.NotEmpty(t, m.ReceiptHandle)
	require.LessOrEqual(t, len(m.ReceiptHandle), 1024, "spec 1.3.1")
	require.Equal(t, qpFoobarMD5, m.MD5OfBody)
	require.Equal(t, attrs, qpMessageAttrs(t, m))
	require.Equal(t, qpMD5OfAttributes(attrs), m.MD5OfMessageAttributes)
	require.Equal(t, sent.MD5OfMessageAttributes, m.MD5OfMessageAttributes)
	sys := qpNameValues(t, "receive All", m.Attributes)
	require.Equal(t, qpMillis(qpStart), sys["SentTimestamp"], "epoch milliseconds (spec 1.4.2)")
	require.Equal(t, qpMillis(qpStart.Add(1500*time.Millisecond)), sys["ApproximateFirstReceiveTimestamp"])
	require.Equal(t, "1", sys["ApproximateReceiveCount"])
	require.Equal(t, qpTraceHeader, sys["AWSTraceHeader"])
	require.NotEmpty(t, sys["SenderId"])
	for _, name := range []string{"SequenceNumber", "MessageGroupId", "MessageDeduplicationId"} {
		require.NotContains(t, sys, name, "a standard message sent without a group has no %s", name)
	}
	require.Equal(t, fifoq.StateInFlight, qpMessages(t, e, "qp-recv")[0].State)
	require.Equal(t, qpStart.Add(1500*time.Millisecond+30*time.Second), qpMessages(t, e, "qp-recv")[0].VisibleAt,
		"the queue's visibility timeout, 30 s, from the receive")

	// Named attributes only, the newer MessageSystemAttributeName.N; the digest covers what is returned.
	qpCall[qpNoResult](t, e, "ChangeMessageVisibility", "QueueUrl", u, "ReceiptHandle", m.ReceiptHandle,
		"VisibilityTimeout", "0")
	r = qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u, "VisibilityTimeout", "0",
		"MessageSystemAttributeName.1", "ApproximateReceiveCount", "MessageSystemAttributeName.2", "SentTimestamp",
		"MessageAttributeName.1", "MyAttribute")
	require.Len(t, r.Messages, 1)
	m = r.Messages[0]
	require.Equal(t, map[string]string{"ApproximateReceiveCount": "2", "SentTimestamp": qpMillis(qpStart)},
		qpNameValues(t, "MessageSystemAttributeName", m.Attributes))
	require.Equal(t, map[string]qpAttr{"MyAttribute": attrs["MyAttribute"]}, qpMessageAttrs(t, m))
	require.Equal(t, qpMyAttributeMD5, m.MD5OfMessageAttributes)

	// A prefix wildcard (model: "bar.*"), and the message stays visible after a receive with VisibilityTimeout 0.
	r = qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u, "VisibilityTimeout", "0",
		"MessageAttributeName.1", "Meta.*")
	require.Len(t, r.Messages, 1)
	want := map[string]qpAttr{"Meta.one": attrs["Meta.one"], "Meta.two": attrs["Meta.two"]}
	require.Equal(t, want, qpMessageAttrs(t, r.Messages[0]))
	require.Equal(t, qpMD5OfAttributes(want), r.Messages[0].MD5OfMessageAttributes)
	require.Empty(t, r.Messages[0].Attributes, "no system attributes were asked for")

	// Nothing asked for: no attributes and no attribute digest.
	r = qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u, "VisibilityTimeout", "5")
	require.Len(t, r.Messages, 1)
	require.Empty(t, r.Messages[0].Attributes)
	require.Empty(t, r.Messages[0].MessageAttributes)
	require.Empty(t, r.Messages[0].MD5OfMessageAttributes)
	require.Equal(t, e.clock.Now().Add(5*time.Second), qpMessages(t, e, "qp-recv")[0].VisibleAt, "VisibilityTimeout=5")

	// MaxNumberOfMessages.
	for i := range 4 {
		qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "m"+strconv.Itoa(i))
	}
	r = qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u)
	require.Len(t, r.Messages, 1, "MaxNumberOfMessages defaults to 1 (spec 1.5.4)")
	r = qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u, "MaxNumberOfMessages", "10")
	require.Len(t, r.Messages, 3)
	r = qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u, "MaxNumberOfMessages", "10")
	require.Empty(t, r.Messages, "everything is in flight")

	// Rejected receives change nothing (spec 1.5.1, 1.5.4, 1.2.1).
	before := qpMessages(t, e, "qp-recv")
	for _, kv := range [][]string{
		{"MaxNumberOfMessages", "11"}, {"MaxNumberOfMessages", "0"}, {"WaitTimeSeconds", "21"},
		{"WaitTimeSeconds", "-1"}, {"VisibilityTimeout", "43201"}, {"VisibilityTimeout", "-1"},
	} {
		qpFail(t, e, 400, "InvalidParameterValue", "ReceiveMessage", append([]string{"QueueUrl", u}, kv...)...)
	}
	qpFail(t, e, 400, "AWS.SimpleQueueService.NonExistentQueue", "ReceiveMessage",
		"QueueUrl", strings.Replace(u, "qp-recv", "qp-none", 1))
	require.Equal(t, before, qpMessages(t, e, "qp-recv"))
	er := qpFail(t, e, 400, "InvalidParameterValue", "ReceiveMessage", "QueueUrl", u, "WaitTimeSeconds", "21")
	require.Equal(t, "Value 21 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided.",
		er.Message, "spec 1.5.1")
	er = qpFail(t, e, 400, "InvalidParameterValue", "ReceiveMessage", "QueueUrl", u, "MaxNumberOfMessages", "11")
	require.Equal(t, "Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.",
		er.Message, "spec 1.5.4")
}

func TestQpReceiveMessageFIFO(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-recv.fifo", "FifoQueue", "true", "ContentBasedDeduplication", "true")
	s1 := qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "g1-m1", "MessageGroupId", "g1")
	s2 := qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "g1-m2", "MessageGroupId", "g1",
		"MessageDeduplicationId", "explicit")
	r := qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u, "MaxNumberOfMessages", "10",
		"AttributeName.1", "All", "ReceiveRequestAttemptId", "attempt-1")
	require.Len(t, r.Messages, 2)
	bodyHash := qpSHA256Hex("g1-m1")
	for i, want := range []struct {
		sent  qpSendMessageResult
		body  string
		dedup string
	}{{s1, "g1-m1", bodyHash}, {s2, "g1-m2", "explicit"}} {
		m := r.Messages[i]
		require.Equal(t, want.body, m.Body, "group order (spec 2.5)")
		require.Equal(t, want.sent.MessageID, m.MessageID)
		sys := qpNameValues(t, "FIFO receive All", m.Attributes)
		require.Equal(t, "g1", sys["MessageGroupId"])
		require.Equal(t, want.dedup, sys["MessageDeduplicationId"], "content-based: hex SHA-256 of the body (spec 3.3)")
		require.Equal(t, want.sent.SequenceNumber, sys["SequenceNumber"])
	}
	// A retry with the same attempt id returns the same messages and receipt handles (spec 2.15.2).
	again := qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u, "MaxNumberOfMessages", "10",
		"ReceiveRequestAttemptId", "attempt-1")
	require.Len(t, again.Messages, 2)
	require.Equal(t, r.Messages[0].ReceiptHandle, again.Messages[0].ReceiptHandle)
	require.Equal(t, r.Messages[1].ReceiptHandle, again.Messages[1].ReceiptHandle)
	qpFail(t, e, 400, "InvalidParameterValue", "ReceiveMessage", "QueueUrl", u,
		"ReceiveRequestAttemptId", "has space")
}

// qpSHA256Hex is the hex SHA-256 of s, the deduplication id content-based deduplication gives a message.
func qpSHA256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestQpLongPoll(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-poll")

	type result struct {
		status int
		header http.Header
		body   []byte
	}
	poll := func(kv ...string) <-chan result {
		ch := make(chan result, 1)
		form := qpForm(kv...)
		form.Set("Action", "ReceiveMessage")
		form.Set("Version", qpVersion)
		go func() {
			resp, err := e.hc.PostForm(e.base+"/", form)
			if err != nil {
				ch <- result{status: -1, body: []byte(err.Error())}
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			ch <- result{resp.StatusCode, resp.Header, b}
		}()
		return ch
	}

	// An empty wait ends when the clock passes WaitTimeSeconds.
	ch := poll("QueueUrl", u, "WaitTimeSeconds", "2")
	qpWaitTimers(t, e.clock, 1)
	e.clock.Advance(2 * time.Second)
	res := <-ch
	require.Equal(t, 200, res.status, "%s", res.body)
	require.Empty(t, qpDecode[qpReceiveMessageResult](t, "ReceiveMessage", res.header, res.body).Messages)

	// A message sent during the wait ends it at once (spec 1.5.2).
	ch = poll("QueueUrl", u, "WaitTimeSeconds", "20")
	qpWaitTimers(t, e.clock, 1)
	sent := qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "wake")
	res = <-ch
	require.Equal(t, 200, res.status, "%s", res.body)
	msgs := qpDecode[qpReceiveMessageResult](t, "ReceiveMessage", res.header, res.body).Messages
	require.Len(t, msgs, 1)
	require.Equal(t, sent.MessageID, msgs[0].MessageID)

	// The queue's ReceiveMessageWaitTimeSeconds applies when the request gives none (spec 1.5.1).
	qpCall[qpNoResult](t, e, "SetQueueAttributes", "QueueUrl", u,
		"Attribute.1.Name", "ReceiveMessageWaitTimeSeconds", "Attribute.1.Value", "3")
	pending := e.clock.Timers() // the woken poll's timer, if it was not stopped
	ch = poll("QueueUrl", u)
	qpWaitTimers(t, e.clock, pending+1)
	e.clock.Advance(3 * time.Second)
	res = <-ch
	require.Equal(t, 200, res.status, "%s", res.body)
	require.Empty(t, qpDecode[qpReceiveMessageResult](t, "ReceiveMessage", res.header, res.body).Messages)
}

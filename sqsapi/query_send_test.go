package sqsapi_test

// Query-protocol tests of SendMessage and SendMessageBatch.

import (
	"cmp"
	"encoding/xml"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/stretchr/testify/require"
)

func TestQpSendMessage(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-send")

	// The spec's vectors (1.4.6).
	vec := map[string]qpAttr{"MyAttribute": {DataType: "String", String: "foobar"}}
	kv := append([]string{"QueueUrl", u, "MessageBody", "foobar",
		"MessageSystemAttribute.1.Name", "AWSTraceHeader",
		"MessageSystemAttribute.1.Value.DataType", "String",
		"MessageSystemAttribute.1.Value.StringValue", qpTraceHeader,
	}, qpAttrParams("MessageAttribute", vec)...)
	r := qpCall[qpSendMessageResult](t, e, "SendMessage", kv...)
	require.NotEmpty(t, r.MessageID)
	require.Equal(t, qpFoobarMD5, r.MD5OfMessageBody)
	require.Equal(t, qpMyAttributeMD5, r.MD5OfMessageAttributes)
	require.Equal(t, qpTraceHeaderMD5, r.MD5OfMessageSystemAttributes)
	require.Empty(t, r.SequenceNumber, "a standard queue returns no SequenceNumber (spec 1.4.5)")

	// String, Number, Binary and custom types, without system attributes.
	attrs := map[string]qpAttr{
		"s":           {DataType: "String", String: "héllo wörld"},
		"n":           {DataType: "Number", String: "-12.5"},
		"b":           {DataType: "Binary", Binary: []byte{0, 1, 2, 0xfe, 0xff}},
		"custom.kind": {DataType: "String.kind", String: "k"},
		"img":         {DataType: "Binary.png", Binary: []byte("\x89PNG")},
	}
	r2 := qpCall[qpSendMessageResult](t, e, "SendMessage",
		append([]string{"QueueUrl", u, "MessageBody", "second ✓"}, qpAttrParams("MessageAttribute", attrs)...)...)
	require.Equal(t, qpMD5([]byte("second ✓")), r2.MD5OfMessageBody)
	require.Equal(t, qpMD5OfAttributes(attrs), r2.MD5OfMessageAttributes)
	require.Empty(t, r2.MD5OfMessageSystemAttributes, "no system attributes, no digest (spec 1.4.6)")
	require.NotEqual(t, r.MessageID, r2.MessageID)

	// Without attributes there is no attribute digest.
	r3 := qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "plain", "DelaySeconds", "10")
	require.Empty(t, r3.MD5OfMessageAttributes)

	msgs := qpMessages(t, e, "qp-send")
	require.Len(t, msgs, 3)
	require.Equal(t, r.MessageID, msgs[0].MessageID)
	require.Equal(t, "foobar", msgs[0].Body)
	require.Equal(t, fifoq.Attribute{DataType: "String", StringValue: "foobar"}, msgs[0].Attributes["MyAttribute"])
	require.Equal(t, "second ✓", msgs[1].Body)
	for name, a := range attrs {
		got := msgs[1].Attributes[name]
		require.Equal(t, a.DataType, got.DataType, "attribute %s", name)
		require.Equal(t, a.String, got.StringValue, "attribute %s", name)
		require.Equal(t, string(a.Binary), string(got.BinaryValue), "attribute %s", name)
	}
	require.Equal(t, fifoq.StateDelayed, msgs[2].State, "DelaySeconds=10")
	require.Equal(t, qpStart.Add(10*time.Second), msgs[2].VisibleAt)

	// Rejected sends store nothing.
	for _, c := range []struct {
		what, code string
		kv         []string
	}{
		{"no body", "MissingParameter", []string{"QueueUrl", u}},                                                   // spec 7.1.1
		{"empty body", "MissingParameter", []string{"QueueUrl", u, "MessageBody", ""}},                             // spec 7.1.1
		{"invalid character", "InvalidMessageContents", []string{"QueueUrl", u, "MessageBody", "a\x01b"}},          // spec 7.1.1
		{"delay 901", "InvalidParameterValue", []string{"QueueUrl", u, "MessageBody", "x", "DelaySeconds", "901"}}, // spec 4.2
		{"empty attribute value", "InvalidParameterValue", append([]string{"QueueUrl", u, "MessageBody", "x"},
			qpAttrParams("MessageAttribute", map[string]qpAttr{"e": {DataType: "String"}})...)}, // spec 7.1.3
		{"AWS. attribute", "InvalidParameterValue", append([]string{"QueueUrl", u, "MessageBody", "x"},
			qpAttrParams("MessageAttribute", map[string]qpAttr{"AWS.x": {DataType: "String", String: "v"}})...)}, // spec 7.1.3
		{"bad data type", "InvalidParameterValue", append([]string{"QueueUrl", u, "MessageBody", "x"},
			qpAttrParams("MessageAttribute", map[string]qpAttr{"t": {DataType: "Text", String: "v"}})...)}, // spec 7.1.3
		{"Number not a number", "InvalidParameterValue", append([]string{"QueueUrl", u, "MessageBody", "x"},
			qpAttrParams("MessageAttribute", map[string]qpAttr{"n": {DataType: "Number", String: "abc"}})...)}, // spec 7.1.3
		{"11 attributes", "InvalidParameterValue", append([]string{"QueueUrl", u, "MessageBody", "x"},
			qpAttrParams("MessageAttribute", qpManyAttrs(11))...)}, // spec 7.1.3
		{"leading period", "InvalidParameterValue", append([]string{"QueueUrl", u, "MessageBody", "x"},
			qpAttrParams("MessageAttribute", map[string]qpAttr{".a": {DataType: "String", String: "v"}})...)}, // spec 7.1.3
		{"double period", "InvalidParameterValue", append([]string{"QueueUrl", u, "MessageBody", "x"},
			qpAttrParams("MessageAttribute", map[string]qpAttr{"a..b": {DataType: "String", String: "v"}})...)}, // spec 7.1.3
		{"name of 257", "InvalidParameterValue", append([]string{"QueueUrl", u, "MessageBody", "x"},
			qpAttrParams("MessageAttribute", map[string]qpAttr{strings.Repeat("n", 257): {DataType: "String", String: "v"}})...)}, // spec 7.1.3
		{"invalid character in a String attribute", "", append([]string{"QueueUrl", u, "MessageBody", "x"},
			qpAttrParams("MessageAttribute", map[string]qpAttr{"s": {DataType: "String", String: "a\x00b"}})...)}, // spec 7.1.3, no code given
		{"system attribute other than AWSTraceHeader", "", []string{"QueueUrl", u, "MessageBody", "x",
			"MessageSystemAttribute.1.Name", "SenderId", "MessageSystemAttribute.1.Value.DataType", "String",
			"MessageSystemAttribute.1.Value.StringValue", "me"}}, // spec 7.1.4
		{"dedup id on standard", "InvalidParameterValue", []string{"QueueUrl", u, "MessageBody", "x",
			"MessageDeduplicationId", "d"}},
		{"no queue", "AWS.SimpleQueueService.NonExistentQueue", []string{"QueueUrl",
			strings.Replace(u, "qp-send", "qp-none", 1), "MessageBody", "x"}},
	} {
		qpFail(t, e, 400, c.code, "SendMessage", c.kv...)
		require.Len(t, qpMessages(t, e, "qp-send"), 3, "a rejected SendMessage (%s) stored a message", c.what)
	}
	qpFail(t, e, 400, "InvalidParameterValue", "SendMessage", "QueueUrl", u, "MessageBody", "big",
		"MessageAttribute.1.Name", "big", "MessageAttribute.1.Value.DataType", "String",
		"MessageAttribute.1.Value.StringValue", strings.Repeat("x", 1<<20)) // spec 7.1.2
	er := qpFail(t, e, 400, "InvalidParameterValue", "SendMessage", "QueueUrl", u, "MessageBody", strings.Repeat("x", 1<<20+1))
	require.Equal(t, "One or more parameters are invalid. Reason: Message must be shorter than 1048576 bytes.", er.Message,
		"spec 7.1.2")
	er = qpFail(t, e, 400, "MissingParameter", "SendMessage", "QueueUrl", u)
	require.Equal(t, "The request must contain the parameter MessageBody.", er.Message, "spec 7.1.1")
	require.Len(t, qpMessages(t, e, "qp-send"), 3)

	// Ten attributes are allowed, and a body of exactly MaximumMessageSize.
	ten := qpManyAttrs(10)
	r4 := qpCall[qpSendMessageResult](t, e, "SendMessage",
		append([]string{"QueueUrl", u, "MessageBody", "ten"}, qpAttrParams("MessageAttribute", ten)...)...)
	require.Equal(t, qpMD5OfAttributes(ten), r4.MD5OfMessageAttributes)
	qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", strings.Repeat("x", 1<<20))
	require.Len(t, qpMessages(t, e, "qp-send"), 5)
}

// qpManyAttrs returns n String attributes.
func qpManyAttrs(n int) map[string]qpAttr {
	m := make(map[string]qpAttr, n)
	for i := range n {
		m["a"+strconv.Itoa(i)] = qpAttr{DataType: "String", String: "v" + strconv.Itoa(i)}
	}
	return m
}

func TestQpSendMessageFIFO(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-send.fifo", "FifoQueue", "true")
	r1 := qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "one",
		"MessageGroupId", "g1", "MessageDeduplicationId", "d1")
	r2 := qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "two",
		"MessageGroupId", "g1", "MessageDeduplicationId", "d2", "DelaySeconds", "0") // spec 4.4
	for _, r := range []qpSendMessageResult{r1, r2} {
		require.Regexp(t, `^[0-9]+$`, r.SequenceNumber, "FIFO sends return a decimal SequenceNumber (spec 1.4.5)")
	}
	require.Equal(t, 1, qpCompareDecimal(r2.SequenceNumber, r1.SequenceNumber), "sequence numbers increase in a group")

	// A duplicate is accepted and stores nothing; it reports the original (spec 3.4, 3.9).
	dup := qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "again",
		"MessageGroupId", "g2", "MessageDeduplicationId", "d1")
	require.Equal(t, r1.MessageID, dup.MessageID)
	require.Equal(t, r1.SequenceNumber, dup.SequenceNumber)
	require.Len(t, qpMessages(t, e, "qp-send.fifo"), 2)

	for _, c := range []struct {
		what, code string
		kv         []string
	}{
		{"no group", "MissingParameter", []string{"MessageDeduplicationId", "d9"}},                                                      // spec 2.2
		{"no dedup id", "InvalidParameterValue", []string{"MessageGroupId", "g"}},                                                       // spec 3.1
		{"delay", "InvalidParameterValue", []string{"MessageGroupId", "g", "MessageDeduplicationId", "d9", "DelaySeconds", "2"}},        // spec 4.3
		{"group with space", "InvalidParameterValue", []string{"MessageGroupId", "group 1", "MessageDeduplicationId", "d9"}},            // spec 2.3
		{"group of 129", "InvalidParameterValue", []string{"MessageGroupId", strings.Repeat("g", 129), "MessageDeduplicationId", "d9"}}, // spec 2.3
		{"dedup of 129", "InvalidParameterValue", []string{"MessageGroupId", "g", "MessageDeduplicationId", strings.Repeat("d", 129)}},  // spec 3.2
	} {
		qpFail(t, e, 400, c.code, "SendMessage", append([]string{"QueueUrl", u, "MessageBody", "x"}, c.kv...)...)
		require.Len(t, qpMessages(t, e, "qp-send.fifo"), 2, "a rejected SendMessage (%s) stored a message", c.what)
	}
	// The texts the spec gives (2.2, 3.1, 4.3).
	for _, c := range []struct {
		kv   []string
		text string
	}{
		{[]string{"MessageDeduplicationId", "d9"}, "The request must contain the parameter MessageGroupId."},
		{[]string{"MessageGroupId", "g"}, "The queue should either have ContentBasedDeduplication enabled or " +
			"MessageDeduplicationId provided explicitly"},
		{[]string{"MessageGroupId", "g", "MessageDeduplicationId", "d9", "DelaySeconds", "2"},
			"Value 2 for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid " +
				"for this queue type."},
	} {
		_, _, body := e.qpPost(t, "SendMessage", append([]string{"QueueUrl", u, "MessageBody", "x"}, c.kv...)...)
		var er qpErrorResponse
		require.NoError(t, xml.Unmarshal(body, &er))
		require.Equal(t, c.text, er.Message)
	}

	// A FIFO delete outside the visibility window fails (spec 1.3.5), as does a change of visibility (1.3.7).
	r := qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u, "VisibilityTimeout", "5")
	require.Len(t, r.Messages, 1)
	e.clock.Advance(6 * time.Second)
	er := qpFail(t, e, 400, "InvalidParameterValue", "DeleteMessage", "QueueUrl", u, "ReceiptHandle", r.Messages[0].ReceiptHandle)
	require.Equal(t, "Value "+r.Messages[0].ReceiptHandle+" for parameter ReceiptHandle is invalid. Reason: The receipt "+
		"handle has expired.", er.Message)
	qpFail(t, e, 400, "InvalidParameterValue", "ChangeMessageVisibility", "QueueUrl", u,
		"ReceiptHandle", r.Messages[0].ReceiptHandle, "VisibilityTimeout", "10")
	require.Len(t, qpMessages(t, e, "qp-send.fifo"), 2)

	// A purge clears the deduplication history (spec 3.10).
	qpCall[qpNoResult](t, e, "PurgeQueue", "QueueUrl", u)
	again := qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "one",
		"MessageGroupId", "g1", "MessageDeduplicationId", "d1")
	require.NotEqual(t, r1.MessageID, again.MessageID)
	require.Len(t, qpMessages(t, e, "qp-send.fifo"), 1)
}

// qpCompareDecimal compares two non-negative decimal strings by value.
func qpCompareDecimal(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return cmp.Compare(len(a), len(b))
	}
	return strings.Compare(a, b)
}

func TestQpSendMessageBatch(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-batch")
	vec := map[string]qpAttr{"MyAttribute": {DataType: "String", String: "foobar"}}
	kv := []string{"QueueUrl", u,
		"SendMessageBatchRequestEntry.1.Id", "a",
		"SendMessageBatchRequestEntry.1.MessageBody", "foobar",
		"SendMessageBatchRequestEntry.2.Id", "b_2",
		"SendMessageBatchRequestEntry.2.MessageBody", "delayed",
		"SendMessageBatchRequestEntry.2.DelaySeconds", "10",
		"SendMessageBatchRequestEntry.2.MessageSystemAttribute.1.Name", "AWSTraceHeader",
		"SendMessageBatchRequestEntry.2.MessageSystemAttribute.1.Value.DataType", "String",
		"SendMessageBatchRequestEntry.2.MessageSystemAttribute.1.Value.StringValue", qpTraceHeader,
		"SendMessageBatchRequestEntry.3.Id", "c-3",
		"SendMessageBatchRequestEntry.3.MessageBody", "bad\x01",
	}
	kv = append(kv, qpAttrParams("SendMessageBatchRequestEntry.1.MessageAttribute", vec)...)
	r := qpCall[qpSendMessageBatchResult](t, e, "SendMessageBatch", kv...)
	require.Len(t, r.Successful, 2, "in %+v", r)
	byID := map[string]qpSendMessageBatchResultEntry{}
	for _, s := range r.Successful {
		byID[s.ID] = s
		require.NotEmpty(t, s.MessageID)
		require.Empty(t, s.SequenceNumber)
	}
	require.Equal(t, qpFoobarMD5, byID["a"].MD5OfMessageBody)
	require.Equal(t, qpMyAttributeMD5, byID["a"].MD5OfMessageAttributes)
	require.Empty(t, byID["a"].MD5OfMessageSystemAttributes)
	require.Equal(t, qpMD5([]byte("delayed")), byID["b_2"].MD5OfMessageBody)
	require.Empty(t, byID["b_2"].MD5OfMessageAttributes)
	require.Equal(t, qpTraceHeaderMD5, byID["b_2"].MD5OfMessageSystemAttributes)
	// An invalid entry fails alone (spec 7.1.1, 7.2.3).
	require.Equal(t, []qpBatchResultErrorEntry{{ID: "c-3", SenderFault: true, Code: "InvalidMessageContents",
		Message: r.Failed[0].Message}}, r.Failed)
	require.NotEmpty(t, r.Failed[0].Message)

	msgs := qpMessages(t, e, "qp-batch")
	require.Len(t, msgs, 2)
	require.Equal(t, byID["a"].MessageID, msgs[0].MessageID)
	require.Equal(t, fifoq.StateVisible, msgs[0].State)
	require.Equal(t, byID["b_2"].MessageID, msgs[1].MessageID)
	require.Equal(t, fifoq.StateDelayed, msgs[1].State)
	require.Equal(t, qpStart.Add(10*time.Second), msgs[1].VisibleAt)

	// Whole-request failures store nothing (spec 7.2.1, 7.2.2).
	entries := func(n int, id func(int) string) []string {
		kv := []string{"QueueUrl", u}
		for i := 1; i <= n; i++ {
			p := "SendMessageBatchRequestEntry." + strconv.Itoa(i) + "."
			kv = append(kv, p+"Id", id(i), p+"MessageBody", "m"+strconv.Itoa(i))
		}
		return kv
	}
	seq := func(i int) string { return "e" + strconv.Itoa(i) }
	er := qpFail(t, e, 400, "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", "SendMessageBatch", entries(11, seq)...)
	require.Equal(t, "Maximum number of entries per request are 10. You have sent 11.", er.Message, "spec 7.2.1")
	qpFail(t, e, 400, "AWS.SimpleQueueService.EmptyBatchRequest", "SendMessageBatch", "QueueUrl", u)
	qpFail(t, e, 400, "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", "SendMessageBatch",
		entries(2, func(int) string { return "same" })...)
	er = qpFail(t, e, 400, "AWS.SimpleQueueService.InvalidBatchEntryId", "SendMessageBatch",
		entries(1, func(int) string { return "not valid!" })...)
	require.Equal(t, "A batch entry id can only contain alphanumeric characters, hyphens and underscores. "+
		"It can be at most 80 letters long.", er.Message, "spec 7.2.1")
	qpFail(t, e, 400, "AWS.SimpleQueueService.InvalidBatchEntryId", "SendMessageBatch",
		entries(1, func(int) string { return strings.Repeat("i", 81) })...)
	big := strings.Repeat("x", 550_000) // two of them pass 1 MiB
	er = qpFail(t, e, 400, "AWS.SimpleQueueService.BatchRequestTooLong", "SendMessageBatch", append(entries(0, seq),
		"SendMessageBatchRequestEntry.1.Id", "1", "SendMessageBatchRequestEntry.1.MessageBody", big,
		"SendMessageBatchRequestEntry.2.Id", "2", "SendMessageBatchRequestEntry.2.MessageBody", big)...)
	require.Equal(t, "Batch requests cannot be longer than 1048576 bytes. You have sent 1100000 bytes.", er.Message,
		"spec 7.2.2")
	require.Len(t, qpMessages(t, e, "qp-batch"), 2, "a rejected SendMessageBatch stored messages")

	// Size accounting is inclusive, per entry (spec 7.1.2): with MaximumMessageSize 1024 a body of 1024 bytes
	// fits, one of 1025 fails alone, and attributes count (name + type + value).
	small := qpCreate(t, e, "qp-batch-small", "MaximumMessageSize", "1024")
	sr := qpCall[qpSendMessageBatchResult](t, e, "SendMessageBatch", "QueueUrl", small,
		"SendMessageBatchRequestEntry.1.Id", "fits", "SendMessageBatchRequestEntry.1.MessageBody", strings.Repeat("a", 1024),
		"SendMessageBatchRequestEntry.2.Id", "over", "SendMessageBatchRequestEntry.2.MessageBody", strings.Repeat("b", 1025),
		"SendMessageBatchRequestEntry.3.Id", "attr", "SendMessageBatchRequestEntry.3.MessageBody", strings.Repeat("c", 1024-8),
		"SendMessageBatchRequestEntry.3.MessageAttribute.1.Name", "k",
		"SendMessageBatchRequestEntry.3.MessageAttribute.1.Value.DataType", "String",
		"SendMessageBatchRequestEntry.3.MessageAttribute.1.Value.StringValue", "x",
		"SendMessageBatchRequestEntry.4.Id", "attr-over", "SendMessageBatchRequestEntry.4.MessageBody", strings.Repeat("d", 1024-7),
		"SendMessageBatchRequestEntry.4.MessageAttribute.1.Name", "k",
		"SendMessageBatchRequestEntry.4.MessageAttribute.1.Value.DataType", "String",
		"SendMessageBatchRequestEntry.4.MessageAttribute.1.Value.StringValue", "x")
	var ok []string
	for _, s := range sr.Successful {
		ok = append(ok, s.ID)
	}
	require.ElementsMatch(t, []string{"fits", "attr"}, ok)
	require.Len(t, sr.Failed, 2)
	for _, f := range sr.Failed {
		require.Contains(t, []string{"over", "attr-over"}, f.ID)
		require.Equal(t, qpBatchResultErrorEntry{ID: f.ID, SenderFault: true, Code: "InvalidParameterValue",
			Message: "One or more parameters cannot be validated. Reason: Message must be shorter than 1024 bytes."}, f)
	}

	// FIFO: per-entry groups and dedup ids; one entry without a group fails the whole request (spec 2.2).
	fu := qpCreate(t, e, "qp-batch.fifo", "FifoQueue", "true")
	fr := qpCall[qpSendMessageBatchResult](t, e, "SendMessageBatch", "QueueUrl", fu,
		"SendMessageBatchRequestEntry.1.Id", "1", "SendMessageBatchRequestEntry.1.MessageBody", "g1-m1",
		"SendMessageBatchRequestEntry.1.MessageGroupId", "g1", "SendMessageBatchRequestEntry.1.MessageDeduplicationId", "d1",
		"SendMessageBatchRequestEntry.2.Id", "2", "SendMessageBatchRequestEntry.2.MessageBody", "g1-m2",
		"SendMessageBatchRequestEntry.2.MessageGroupId", "g1", "SendMessageBatchRequestEntry.2.MessageDeduplicationId", "d2")
	require.Len(t, fr.Successful, 2)
	require.Empty(t, fr.Failed)
	seqs := map[string]string{}
	for _, s := range fr.Successful {
		require.Regexp(t, `^[0-9]+$`, s.SequenceNumber)
		seqs[s.ID] = s.SequenceNumber
	}
	require.Equal(t, 1, qpCompareDecimal(seqs["2"], seqs["1"]), "a FIFO batch is enqueued in order (spec 2.5)")
	qpFail(t, e, 400, "InvalidParameterValue", "SendMessageBatch", "QueueUrl", fu,
		"SendMessageBatchRequestEntry.1.Id", "1", "SendMessageBatchRequestEntry.1.MessageBody", "ok",
		"SendMessageBatchRequestEntry.1.MessageGroupId", "g1", "SendMessageBatchRequestEntry.1.MessageDeduplicationId", "d3",
		"SendMessageBatchRequestEntry.2.Id", "2", "SendMessageBatchRequestEntry.2.MessageBody", "no group",
		"SendMessageBatchRequestEntry.2.MessageDeduplicationId", "d4")
	require.Len(t, qpMessages(t, e, "qp-batch.fifo"), 2, "a FIFO batch with an entry without a group stored messages")
}

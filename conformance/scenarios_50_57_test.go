package conformance_test

// Scenarios 50-57 of spec §12: limits, batches, attributes, receive parameters, long polls, counts, CreateQueue.

import (
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// scS50: size limits. A body of 1,048,576 bytes → OK, one byte more → InvalidParameterValue. With
// MaximumMessageSize 1024, 1,025 bytes of body plus attributes are rejected (7.1.2).
func scS50(t *testing.T, d scDriver, _ scTime) {
	const mib = 1 << 20
	scNewQ(t, d, "q", scAttrs{})
	scSend(t, d, "q", "", strings.Repeat("a", mib))
	_, err := d.send(t.Context(), "q", scMsg{Body: strings.Repeat("a", mib+1)})
	scWantCode(t, err, "InvalidParameterValue", "1 MiB + 1")
	scNewQ(t, d, "small", scAttrs{MaxSize: 1024})
	attr := func(n int) map[string]fifoq.Attribute { // 1 + 6 + n bytes
		return map[string]fifoq.Attribute{"k": {DataType: "String", StringValue: strings.Repeat("v", n)}}
	}
	_, err = d.send(t.Context(), "small", scMsg{Body: strings.Repeat("a", 1000), Attrs: attr(18)})
	scWantCode(t, err, "InvalidParameterValue", "1025 bytes with the attribute")
	scSendMsg(t, d, "small", scMsg{Body: strings.Repeat("a", 1000), Attrs: attr(17)})
	scRequireCounts(t, d, "q", scCounts{Visible: 1}, "the 1 MiB message")
	scRequireCounts(t, d, "small", scCounts{Visible: 1}, "the 1024-byte message")
}

// scS51: batch rules. 11 entries → TooManyEntriesInBatchRequest; more than 1 MiB in all →
// BatchRequestTooLong; one invalid body among 10 → 9 sent and 1 failed with InvalidMessageContents; a FIFO
// batch where one entry lacks MessageGroupId → the whole request fails with InvalidParameterValue and
// nothing is enqueued (7.2, 7.1.1, 2.2).
func scS51(t *testing.T, d scDriver, _ scTime) {
	ctx := t.Context()
	batch := func(n int, group string) []scMsg {
		ms := make([]scMsg, n)
		for i := range ms {
			ms[i] = scMsg{Body: fmt.Sprintf("m%d", i), Group: group}
		}
		return ms
	}
	scNewQ(t, d, "q", scAttrs{})
	_, err := d.sendBatch(ctx, "q", batch(11, ""))
	scWantCode(t, err, "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", "11 entries")
	const half = 1 << 19
	_, err = d.sendBatch(ctx, "q", []scMsg{{Body: strings.Repeat("a", half)}, {Body: strings.Repeat("b", half+1)}})
	scWantCode(t, err, "AWS.SimpleQueueService.BatchRequestTooLong", "1 MiB + 1 in all")
	scRequireCounts(t, d, "q", scCounts{}, "nothing sent")

	ms := batch(10, "")
	ms[3].Body = "bad \x00 body"
	res, err := d.sendBatch(ctx, "q", ms)
	scOK(t, err, "10 entries, one bad")
	for i, e := range res {
		if i == 3 {
			require.Equal(t, scEntry{Code: "InvalidMessageContents"}, e, "entry 3")
			continue
		}
		require.Empty(t, e.Code, "entry %d", i)
		require.NotEmpty(t, e.ID, "entry %d", i)
	}
	scRequireCounts(t, d, "q", scCounts{Visible: 9}, "9 sent")

	scNewQ(t, d, "q.fifo", scFIFO(30))
	ms = batch(10, "g")
	ms[5].Group = ""
	_, err = d.sendBatch(ctx, "q.fifo", ms)
	scWantCode(t, err, "InvalidParameterValue", "FIFO entry 5 without a group")
	scRequireCounts(t, d, "q.fifo", scCounts{}, "nothing enqueued")
	res, err = d.sendBatch(ctx, "q.fifo", batch(3, "g"))
	scOK(t, err, "a FIFO batch")
	require.Len(t, res, 3)
	require.Equal(t, []string{"m0", "m1", "m2"}, scBodies(scRecvN(t, d, "q.fifo", 10)), "in batch order")
}

// scS51w: duplicate entry ids → BatchEntryIdsNotDistinct; an id "a b" → InvalidBatchEntryId (7.2.1).
func scS51w(t *testing.T, d scDriver, _ scTime) {
	w := d.(*scWire)
	scNewQ(t, d, "q", scAttrs{})
	ms := []scMsg{{Body: "a"}, {Body: "b"}}
	_, err := w.sendBatchIDs(t.Context(), "q", []string{"x", "x"}, ms)
	scWantCode(t, err, "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", "duplicate ids")
	_, err = w.sendBatchIDs(t.Context(), "q", []string{"a b", "c"}, ms)
	scWantCode(t, err, "AWS.SimpleQueueService.InvalidBatchEntryId", `id "a b"`)
	scRequireCounts(t, d, "q", scCounts{}, "nothing sent")
}

// scS52: message attributes. 11 attributes, an empty String value, a name starting "AWS." →
// InvalidParameterValue; a Number.int attribute is accepted and echoed (7.1.3).
func scS52(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "q", scAttrs{})
	str := func(v string) fifoq.Attribute { return fifoq.Attribute{DataType: "String", StringValue: v} }
	eleven := map[string]fifoq.Attribute{}
	for i := range 11 {
		eleven[fmt.Sprintf("a%d", i)] = str("v")
	}
	for what, attrs := range map[string]map[string]fifoq.Attribute{
		"11 attributes":      eleven,
		"empty String value": {"k": str("")},
		"name AWS.x":         {"AWS.x": str("v")},
	} {
		_, err := d.send(t.Context(), "q", scMsg{Body: "m", Attrs: attrs})
		scWantCode(t, err, "InvalidParameterValue", "%s", what)
	}
	scRequireCounts(t, d, "q", scCounts{}, "nothing sent")
	attrs := map[string]fifoq.Attribute{
		"n":   {DataType: "Number.int", StringValue: "42"},
		"b":   {DataType: "Binary.png", BinaryValue: []byte{0x89, 'P', 'N', 'G'}},
		"s":   str("héllo"),
		"ten": {DataType: "Number", StringValue: "10"},
	}
	scSendMsg(t, d, "q", scMsg{Body: "m", Attrs: attrs})
	require.Equal(t, attrs, scOnly(t, scRecvN(t, d, "q", 1)).Attrs)
}

// scS52w: the MD5 vectors of 1.4.6: MD5OfMessageBody("foobar"), MD5OfMessageAttributes of {"MyAttribute":
// String "foobar"} on send and receive, MD5OfMessageSystemAttributes of the AWSTraceHeader vector on send;
// no attribute digests for a message without attributes; and the AWSTraceHeader itself on receive (1.4.2).
func scS52w(t *testing.T, d scDriver, _ scTime) {
	w := d.(*scWire)
	ctx := t.Context()
	scNewQ(t, d, "q", scAttrs{})
	const trace = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
	out, err := w.c.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl:    aws.String(w.url("q")),
		MessageBody: aws.String("foobar"),
		MessageAttributes: map[string]types.MessageAttributeValue{
			"MyAttribute": {DataType: aws.String("String"), StringValue: aws.String("foobar")},
		},
		MessageSystemAttributes: map[string]types.MessageSystemAttributeValue{
			"AWSTraceHeader": {DataType: aws.String("String"), StringValue: aws.String(trace)},
		},
	})
	scOK(t, err, "send")
	require.Equal(t, "3858f62230ac3c915f300c664312c63f", aws.ToString(out.MD5OfMessageBody))
	require.Equal(t, "adb59cd4678ea5a855436b949cd07ab6", aws.ToString(out.MD5OfMessageAttributes))
	require.Equal(t, "5ae4d5d7636402d80f4eb6d213245a88", aws.ToString(out.MD5OfMessageSystemAttributes))
	out2, err := w.c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(w.url("q")), MessageBody: aws.String("plain")})
	scOK(t, err, "send without attributes")
	require.Nil(t, out2.MD5OfMessageAttributes, "no attributes, no digest")
	require.Nil(t, out2.MD5OfMessageSystemAttributes, "no system attributes, no digest")
	rcv, err := w.c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(w.url("q")),
		MaxNumberOfMessages: 1, MessageAttributeNames: []string{"All"},
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
	scOK(t, err, "receive")
	require.Len(t, rcv.Messages, 1)
	m := rcv.Messages[0]
	require.Equal(t, "3858f62230ac3c915f300c664312c63f", aws.ToString(m.MD5OfBody))
	require.Equal(t, "adb59cd4678ea5a855436b949cd07ab6", aws.ToString(m.MD5OfMessageAttributes))
	require.Equal(t, trace, m.Attributes["AWSTraceHeader"], "the system attribute comes back with All (1.4.2)")
}

// scS53: receive parameter validation. MaxNumberOfMessages 11 → InvalidParameterValue; WaitTimeSeconds −1
// or 21 → InvalidParameterValue (1.5.1, 1.5.4); nothing is received.
func scS53(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "q", scAttrs{})
	scSend(t, d, "q", "", "m")
	for what, o := range map[string]scRecv{
		"MaxNumberOfMessages 11": {Max: 11},
		"WaitTimeSeconds -1":     {Wait: scSec(-1)},
		"WaitTimeSeconds 21":     {Wait: scSec(21)},
	} {
		_, err := d.receive(t.Context(), "q", o)
		scWantCode(t, err, "InvalidParameterValue", "%s", what)
	}
	scRequireCounts(t, d, "q", scCounts{Visible: 1}, "nothing received")
}

// scS53w: MaxNumberOfMessages 0 → InvalidParameterValue (1.5.4).
func scS53w(t *testing.T, d scDriver, _ scTime) {
	w := d.(*scWire)
	scNewQ(t, d, "q", scAttrs{})
	scSend(t, d, "q", "", "m")
	_, err := w.c.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(w.url("q"))},
		scExplicitZero("MaxNumberOfMessages"))
	scWantCode(t, scWireErr(err), "InvalidParameterValue", "MaxNumberOfMessages 0")
	scRequireCounts(t, d, "q", scCounts{Visible: 1}, "nothing received")
}

// scS54: a long poll (WaitTimeSeconds 20, MaxNumberOfMessages 10) returns as soon as a message is sent at
// t = 2, with that one message (1.5.2).
func scS54(t *testing.T, d scDriver, tm scTime) {
	scNewQ(t, d, "q", scAttrs{})
	poll := scPoll(t, d, "q", scRecv{Max: 10, Wait: scSec(20)})
	tm.waitTimers(1)
	tm.advance(2 * time.Second)
	scPending(t, poll, "nothing sent yet")
	scSend(t, d, "q", "", "m")
	p := <-poll
	scOK(t, p.err, "long poll")
	require.Equal(t, []string{"m"}, scBodies(p.gs))
	require.Equal(t, scStart.Add(2*time.Second), tm.now())
}

// scS55: SequenceNumber. FIFO sends to one group give strictly increasing numeric strings, received as sent;
// a standard send has none (1.4.5).
func scS55(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "q.fifo", scFIFO(30))
	var seqs []string
	prev := new(big.Int)
	for i := range 3 {
		s := scSend(t, d, "q.fifo", "g", fmt.Sprintf("m%d", i))
		n, ok := new(big.Int).SetString(s.Seq, 10)
		require.True(t, ok, "SequenceNumber %q is a decimal number", s.Seq)
		require.Equal(t, 1, n.Cmp(prev), "SequenceNumber %s after %s", n, prev)
		prev = n
		seqs = append(seqs, s.Seq)
	}
	var got []string
	for _, g := range scRecvN(t, d, "q.fifo", 10) {
		got = append(got, g.Seq)
	}
	require.Equal(t, seqs, got)
	scNewQ(t, d, "q", scAttrs{})
	require.Empty(t, scSend(t, d, "q", "", "m").Seq)
	require.Empty(t, scOnly(t, scRecvN(t, d, "q", 1)).Seq)
}

// scS56: FIFO approximate counts. 6 messages, 3 groups × 2; receive 1 from one group and 1 from another →
// Visible 4, NotVisible 2; after the VT → 6/0 (10.2).
func scS56(t *testing.T, d scDriver, tm scTime) {
	scNewQ(t, d, "q.fifo", scFIFO(30))
	for _, g := range []string{"g1", "g2", "g3"} {
		scSend(t, d, "q.fifo", g, g+"-m1")
		scSend(t, d, "q.fifo", g, g+"-m2")
	}
	a := scOnly(t, scRecvN(t, d, "q.fifo", 1))
	b := scOnly(t, scRecvN(t, d, "q.fifo", 1))
	require.NotEqual(t, a.Group, b.Group)
	scRequireCounts(t, d, "q.fifo", scCounts{Visible: 4, InFlight: 2}, "two in flight")
	tm.advance(30 * time.Second)
	scRequireCounts(t, d, "q.fifo", scCounts{Visible: 6}, "after the VT")
}

// scS57: CreateQueue with the same name and attributes → the same URL; with a different DelaySeconds →
// QueueAlreadyExists; recreated within 60 s of its deletion → QueueDeletedRecently, and after 60 s it can be
// created again (7.3.2). An unknown queue is AWS.SimpleQueueService.NonExistentQueue (7.3.4).
func scS57(t *testing.T, d scDriver, tm scTime) {
	w := d.(*scWire)
	ctx := t.Context()
	u1, err := w.createRaw(ctx, "q", map[string]string{"DelaySeconds": "5"})
	scOK(t, err, "create")
	u2, err := w.createRaw(ctx, "q", map[string]string{"DelaySeconds": "5"})
	scOK(t, err, "create again, same attributes")
	require.Equal(t, u1, u2)
	_, err = w.createRaw(ctx, "q", map[string]string{"DelaySeconds": "6"})
	scWantCode(t, scWireErr(err), "QueueAlreadyExists", "create again, another DelaySeconds")
	_, err = w.c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(u1)})
	scOK(t, err, "delete")
	tm.advance(59 * time.Second)
	_, err = w.createRaw(ctx, "q", map[string]string{"DelaySeconds": "5"})
	scWantCode(t, scWireErr(err), "AWS.SimpleQueueService.QueueDeletedRecently", "recreate 59s after the delete")
	tm.advance(time.Second)
	_, err = w.createRaw(ctx, "q", map[string]string{"DelaySeconds": "5"})
	scOK(t, err, "recreate 60s after the delete")
	_, err = w.c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("nowhere")})
	scWantCode(t, scWireErr(err), "AWS.SimpleQueueService.NonExistentQueue", "GetQueueUrl of an unknown queue")
	_, err = d.send(ctx, "nowhere", scMsg{Body: "m"})
	scWantCode(t, err, "AWS.SimpleQueueService.NonExistentQueue", "send to an unknown queue")
}

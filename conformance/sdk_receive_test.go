package conformance_test

// SDK tests of ReceiveMessage.

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"
)

func TestSdReceiveMessage(t *testing.T) {
	t.Parallel()

	t.Run("system attributes", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-sys.fifo", sdKV("FifoQueue", "true"))
		sent := e.send(url, "hello", sdGroup("g1"), sdDedup("dedup-1")) // AWSTraceHeader: its own subtest
		e.clk.Advance(time.Second)
		firstReceive := e.clk.Now()
		receives := 0
		recv := func(in *sqs.ReceiveMessageInput) types.Message {
			t.Helper()
			ms := e.receive(url, in)
			require.Len(t, ms, 1)
			receives++
			require.NoError(t, e.changeVisibility(url, *ms[0].ReceiptHandle, 0), "release the group for the next receive")
			e.clk.Advance(time.Second)
			return ms[0]
		}
		want := func() map[string]string {
			return map[string]string{
				"SentTimestamp":                    sdMillis(sdStart),
				"ApproximateReceiveCount":          strconv.Itoa(receives),
				"ApproximateFirstReceiveTimestamp": sdMillis(firstReceive),
				"SequenceNumber":                   aws.ToString(sent.SequenceNumber),
				"MessageDeduplicationId":           "dedup-1",
				"MessageGroupId":                   "g1",
			}
		}
		m := recv(&sqs.ReceiveMessageInput{})
		require.Empty(t, m.Attributes, "no system attributes unless asked for (1.4.2)")
		all := []types.MessageSystemAttributeName{
			types.MessageSystemAttributeNameSenderId, types.MessageSystemAttributeNameSentTimestamp,
			types.MessageSystemAttributeNameApproximateReceiveCount, types.MessageSystemAttributeNameApproximateFirstReceiveTimestamp,
			types.MessageSystemAttributeNameSequenceNumber, types.MessageSystemAttributeNameMessageDeduplicationId,
			types.MessageSystemAttributeNameMessageGroupId,
		}
		for _, name := range all {
			m := recv(&sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{name}})
			require.Equal(t, []string{string(name)}, slices.Collect(maps.Keys(m.Attributes)), "asked for %s", name)
			if name == types.MessageSystemAttributeNameSenderId {
				require.NotEmpty(t, m.Attributes[string(name)])
				continue
			}
			require.Equal(t, want()[string(name)], m.Attributes[string(name)], "%s", name)
		}
		var names []string
		for _, n := range all {
			names = append(names, string(n))
		}
		m = recv(&sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
		require.ElementsMatch(t, names, slices.Collect(maps.Keys(m.Attributes)), "All")
		for k, v := range want() {
			require.Equal(t, v, m.Attributes[k], "All: %s", k)
		}
		//lint:ignore SA1019 the deprecated AttributeNames is still on the wire, and SDKs still send it
		m = recv(&sqs.ReceiveMessageInput{AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
		require.ElementsMatch(t, names, slices.Collect(maps.Keys(m.Attributes)), "All through the deprecated AttributeNames")
		//lint:ignore SA1019 as above
		m = recv(&sqs.ReceiveMessageInput{AttributeNames: []types.QueueAttributeName{"SentTimestamp", "MessageGroupId"}})
		require.Equal(t, map[string]string{"SentTimestamp": sdMillis(sdStart), "MessageGroupId": "g1"}, m.Attributes)
		m = recv(&sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{"ApproximateReceiveCount", "SequenceNumber"}})
		require.Equal(t, map[string]string{"ApproximateReceiveCount": strconv.Itoa(receives), "SequenceNumber": *sent.SequenceNumber}, m.Attributes)

		std := e.create("sd-sys", nil)
		e.send(std, "plain")
		ms := e.receive(std, &sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
		require.Len(t, ms, 1)
		require.ElementsMatch(t, []string{"SenderId", "SentTimestamp", "ApproximateReceiveCount", "ApproximateFirstReceiveTimestamp"},
			slices.Collect(maps.Keys(ms[0].Attributes)), "All on a standard queue, for a message sent without group id or trace header")
		require.Equal(t, "1", ms[0].Attributes["ApproximateReceiveCount"])
		require.Equal(t, sdMillis(e.clk.Now()), ms[0].Attributes["ApproximateFirstReceiveTimestamp"])
	})

	t.Run("AWSTraceHeader", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		dlq := e.create("sd-trace-dlq", nil)
		url := e.create("sd-trace", sdKV("VisibilityTimeout", "0",
			"RedrivePolicy", `{"deadLetterTargetArn":"`+sdArn("sd-trace-dlq")+`","maxReceiveCount":2}`))
		e.send(url, "traced", sdTrace(sdTraceHeader))
		ms := e.receive(url, &sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{"AWSTraceHeader"}})
		require.Len(t, ms, 1)
		require.Equal(t, map[string]string{"AWSTraceHeader": sdTraceHeader}, ms[0].Attributes, "asked for by name (1.4.2)")
		ms = e.receive(url, &sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{"All"}})
		require.Len(t, ms, 1)
		require.Equal(t, sdTraceHeader, ms[0].Attributes["AWSTraceHeader"], "in All (1.4.2)")
		require.Empty(t, e.receiveN(url, 1), "moved to the dead-letter queue")
		ms = e.receive(dlq, &sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{"All"}})
		require.Len(t, ms, 1)
		require.Equal(t, sdTraceHeader, ms[0].Attributes["AWSTraceHeader"], "kept in the dead-letter queue (6.4)")
	})

	t.Run("message attribute names", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-attr-names", sdKV("VisibilityTimeout", "0"))
		sent := map[string]types.MessageAttributeValue{
			"a.x": sdStr("1"), "a.y": sdTyped("Number", "2"), "b": sdBin("Binary", []byte{3}), "c": sdTyped("String.c", "4"), "ab": sdStr("5"),
		}
		e.send(url, "attrs", sdAttrs(sent))
		pick := func(names ...string) map[string]types.MessageAttributeValue {
			out := map[string]types.MessageAttributeValue{}
			for _, n := range names {
				out[n] = sent[n]
			}
			return out
		}
		for _, tc := range []struct {
			names []string
			want  map[string]types.MessageAttributeValue
		}{
			{nil, pick()},
			{[]string{"b"}, pick("b")},
			{[]string{"b", "c"}, pick("b", "c")},
			{[]string{"All"}, sent},
			{[]string{".*"}, sent},
			// "prefix.*" selects the names that start with the part before ".*", as AWS's "Hel.*" selects
			// Hello and Help.Me: "a.*" selects ab too.
			{[]string{"a.*"}, pick("a.x", "a.y", "ab")},
			{[]string{"a.*", "c"}, pick("a.x", "a.y", "ab", "c")},
			{[]string{"a..*"}, pick("a.x", "a.y")},
			{[]string{"zzz"}, pick()},
			{[]string{"B"}, pick()}, // names are case-sensitive
		} {
			ms := e.receive(url, &sqs.ReceiveMessageInput{MessageAttributeNames: tc.names})
			require.Len(t, ms, 1, "visibility timeout 0: the message is always there")
			t.Logf("MessageAttributeNames %q", tc.names)
			sdRequireAttrs(t, tc.want, ms[0])
		}
	})

	t.Run("parameter validation", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-recv-bad", nil)
		f := e.create("sd-recv-bad.fifo", sdKV("FifoQueue", "true"))
		for _, tc := range []struct {
			url       string
			in        sqs.ReceiveMessageInput
			opts      []func(*sqs.Options)
			code, msg string
		}{
			{url, sqs.ReceiveMessageInput{MaxNumberOfMessages: 11}, nil, sdBadParam,
				"Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided."},
			{url, sqs.ReceiveMessageInput{MaxNumberOfMessages: -1}, nil, sdBadParam,
				"Value -1 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided."},
			{url, sqs.ReceiveMessageInput{}, []func(*sqs.Options){sdSet("MaxNumberOfMessages", 0)}, sdBadParam,
				"Value 0 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided."},
			{url, sqs.ReceiveMessageInput{WaitTimeSeconds: 21}, nil, sdBadParam,
				"Value 21 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided."},
			{url, sqs.ReceiveMessageInput{WaitTimeSeconds: -1}, nil, sdBadParam,
				"Value -1 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided."},
			{url, sqs.ReceiveMessageInput{VisibilityTimeout: 43201}, nil, sdBadParam, ""},
			{url, sqs.ReceiveMessageInput{VisibilityTimeout: -1}, nil, sdBadParam, ""},
			{f, sqs.ReceiveMessageInput{ReceiveRequestAttemptId: aws.String("a b")}, nil, sdBadParam, ""},
			{f, sqs.ReceiveMessageInput{ReceiveRequestAttemptId: aws.String(strings.Repeat("r", 129))}, nil, sdBadParam, ""},
			{f, sqs.ReceiveMessageInput{ReceiveRequestAttemptId: aws.String("")}, nil, sdBadParam, ""},
		} {
			in := tc.in
			in.QueueUrl = &tc.url
			_, err := e.c.ReceiveMessage(e.ctx, &in, tc.opts...)
			t.Logf("%+v", tc.in)
			sdWantErr(t, err, tc.code, tc.msg)
		}
	})

	t.Run("MaxNumberOfMessages", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-max", nil)
		for i := range 12 {
			e.send(url, strconv.Itoa(i))
		}
		require.Len(t, e.receive(url, &sqs.ReceiveMessageInput{}), 1, "the default is 1 (1.5.4)")
		require.Len(t, e.receiveN(url, 10), 10)
		require.Len(t, e.receiveN(url, 10), 1)
		require.Empty(t, e.receiveN(url, 10))
	})

	t.Run("VisibilityTimeout", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-recv-vt", nil)
		e.send(url, "m")
		first := e.receive(url, &sqs.ReceiveMessageInput{VisibilityTimeout: 10})
		require.Len(t, first, 1)
		e.clk.Advance(10*time.Second - time.Millisecond)
		require.Empty(t, e.receiveN(url, 10), "hidden for the 10 s of the receive's timeout (1.2.2)")
		e.clk.Advance(time.Millisecond)
		again := e.receive(url, &sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{"ApproximateReceiveCount"}})
		require.Len(t, again, 1, "visible after 10 s, not the queue's 30 s")
		require.Equal(t, "2", again[0].Attributes["ApproximateReceiveCount"])
		require.NotEqual(t, *first[0].ReceiptHandle, *again[0].ReceiptHandle, "each receive has its own receipt handle (1.3.1)")
		e.clk.Advance(sdDefaultVT - time.Millisecond)
		require.Empty(t, e.receiveN(url, 10), "the next receive without override uses the queue's 30 s")
		e.clk.Advance(time.Millisecond)

		// An explicit VisibilityTimeout=0 leaves the message visible (1.2.7).
		zero := e.receive(url, &sqs.ReceiveMessageInput{}, sdSet("VisibilityTimeout", 0))
		require.Len(t, zero, 1)
		require.Equal(t, "m", *e.receiveOne(url).Body, "visible at once after a receive with VisibilityTimeout 0")
	})

	t.Run("ReceiveRequestAttemptId", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-attempt.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true"))
		for _, b := range []string{"a1", "a2", "a3"} {
			e.send(url, b, sdGroup("g"))
		}
		e.send(url, "other", sdGroup("h"))
		in := func(id string) *sqs.ReceiveMessageInput {
			return &sqs.ReceiveMessageInput{MaxNumberOfMessages: 3, ReceiveRequestAttemptId: aws.String(id)}
		}
		first := e.receive(url, in("attempt-1"))
		require.Equal(t, []string{"a1", "a2", "a3"}, sdBodies(first))
		e.clk.Advance(20 * time.Second)
		replay := e.receive(url, in("attempt-1"))
		require.Equal(t, sdIDs(first), sdIDs(replay), "the same messages (2.15.2)")
		for i := range first {
			require.Equal(t, *first[i].ReceiptHandle, *replay[i].ReceiptHandle, "the same receipt handles (2.15.2)")
		}
		// The replay reset the visibility timeout: 30 s from the replay, not from the first receive.
		e.clk.Advance(15 * time.Second)
		require.Equal(t, []string{"other"}, sdBodies(e.receiveN(url, 10)), "group g still in flight 35 s after the first receive")
		e.clk.Advance(15 * time.Second)
		next := e.receiveN(url, 3)
		require.Equal(t, []string{"a1", "a2", "a3"}, sdBodies(next), "visible 30 s after the replay")

		// After one of the messages is deleted, the attempt must not return the same set again (2.15.3).
		second := e.receive(url, in("attempt-2"))
		require.Empty(t, second, "group g is in flight under the last receive")
		require.NoError(t, e.deleteMessage(url, *next[0].ReceiptHandle))
		third := e.receive(url, in("attempt-3"))
		require.Empty(t, third)
		out, err := e.c.ReceiveMessage(e.ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 3,
			ReceiveRequestAttemptId: aws.String("attempt-1")})
		if err == nil {
			require.NotEqual(t, sdIDs(first), sdIDs(out.Messages), "attempt-1 replayed after one of its messages was deleted")
		}
	})

	t.Run("long polling", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-long", nil)
		poll := func(in *sqs.ReceiveMessageInput, opts ...func(*sqs.Options)) <-chan sdReceived {
			in.QueueUrl = &url
			return sdAsync(func() sdReceived {
				out, err := e.c.ReceiveMessage(e.ctx, in, opts...)
				return sdReceived{out, err}
			})
		}

		// An empty long poll ends when its wait ends, on the server's clock.
		timers := e.clk.Timers()
		done := poll(&sqs.ReceiveMessageInput{WaitTimeSeconds: 5})
		e.waitTimers(timers + 1)
		select {
		case r := <-done:
			require.FailNow(t, "the long poll returned before its wait", "%+v", r)
		default:
		}
		e.clk.Advance(5 * time.Second)
		r := sdAwait(t, done, "empty long poll")
		require.NoError(t, r.err)
		require.Empty(t, r.out.Messages)

		// A send wakes it at once (1.5.2).
		timers = e.clk.Timers()
		done = poll(&sqs.ReceiveMessageInput{WaitTimeSeconds: 20, MaxNumberOfMessages: 10})
		e.waitTimers(timers + 1)
		e.send(url, "wake up")
		r = sdAwait(t, done, "long poll woken by a send")
		require.NoError(t, r.err)
		require.Equal(t, []string{"wake up"}, sdBodies(r.out.Messages))

		// The queue's ReceiveMessageWaitTimeSeconds applies when WaitTimeSeconds is omitted (1.5.1) ...
		require.NoError(t, e.setAttrs(url, sdKV("ReceiveMessageWaitTimeSeconds", "5")))
		timers = e.clk.Timers()
		done = poll(&sqs.ReceiveMessageInput{})
		e.waitTimers(timers + 1)
		e.clk.Advance(5 * time.Second)
		r = sdAwait(t, done, "long poll by the queue's wait time")
		require.NoError(t, r.err)
		require.Empty(t, r.out.Messages)
		// ... and an explicit WaitTimeSeconds=0 is a short poll.
		r = sdAwait(t, poll(&sqs.ReceiveMessageInput{}, sdSet("WaitTimeSeconds", 0)), "short poll with WaitTimeSeconds 0")
		require.NoError(t, r.err)
		require.Empty(t, r.out.Messages)
	})

	t.Run("FIFO groups", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-groups.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true"))
		for _, b := range []string{"g1-m1", "g2-m1", "g1-m2", "g1-m3"} {
			e.send(url, b, sdGroup(b[:2]))
		}
		got := sdBodies(e.receiveN(url, 10))
		// Per-group order and contiguity; no order between groups (2.6, 2.12).
		require.ElementsMatch(t, []string{"g1-m1", "g1-m2", "g1-m3", "g2-m1"}, got)
		i := slices.Index(got, "g1-m1")
		require.Equal(t, []string{"g1-m1", "g1-m2", "g1-m3"}, got[i:i+3], "group g1 in order and together in %v", got)

		// A group with a message in flight gives nothing; a new message does not unblock it (2.8, 2.10).
		e.send(url, "g1-m4", sdGroup("g1"))
		e.send(url, "g3-m1", sdGroup("g3"))
		require.Equal(t, []string{"g3-m1"}, sdBodies(e.receiveN(url, 10)))
		e.clk.Advance(sdDefaultVT)
		// Redelivered in the original order, each with count 2, before the newer message (2.11).
		ms := e.receive(url, &sqs.ReceiveMessageInput{MaxNumberOfMessages: 10,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{"ApproximateReceiveCount", "MessageGroupId"}})
		var g1 []string
		for _, m := range ms {
			if m.Attributes["MessageGroupId"] == "g1" {
				g1 = append(g1, *m.Body+"/"+m.Attributes["ApproximateReceiveCount"])
			}
		}
		require.Equal(t, []string{"g1-m1/2", "g1-m2/2", "g1-m3/2", "g1-m4/1"}, g1)
	})

	t.Run("ReceiveRequestAttemptId after 5 minutes", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-attempt-old.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true"))
		e.send(url, "m", sdGroup("g"))
		in := &sqs.ReceiveMessageInput{ReceiveRequestAttemptId: aws.String("old-attempt")}
		first := e.receive(url, in)
		require.Len(t, first, 1)
		e.clk.Advance(5*time.Minute + time.Second)
		out, err := e.c.ReceiveMessage(e.ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, ReceiveRequestAttemptId: aws.String("old-attempt")})
		if err == nil {
			for _, m := range out.Messages {
				require.NotEqual(t, *first[0].ReceiptHandle, *m.ReceiptHandle, "no replay after 5 minutes (2.15.3)")
			}
		}
	})

	t.Run("FIFO dead-letter queue", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		dlq := e.create("sd-fdlq.fifo", sdKV("FifoQueue", "true"))
		url := e.create("sd-fsrc.fifo", sdKV("FifoQueue", "true",
			"RedrivePolicy", `{"deadLetterTargetArn":"`+sdArn("sd-fdlq.fifo")+`","maxReceiveCount":1}`))
		head := e.send(url, "head", sdGroup("g"), sdDedup("dedup-head"))
		e.send(url, "next", sdGroup("g"), sdDedup("dedup-next"))
		m := e.receiveOne(url)
		require.Equal(t, "head", *m.Body)
		require.NoError(t, e.changeVisibility(url, *m.ReceiptHandle, 0))
		got := sdBodies(e.receiveN(url, 10))
		if len(got) == 0 {
			got = sdBodies(e.receiveN(url, 10))
		}
		require.Equal(t, []string{"next"}, got, "the group unblocks once its head moved to the dead-letter queue (6.5)")
		ms := e.receive(dlq, &sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{"All"}})
		require.Len(t, ms, 1)
		require.Equal(t, *head.MessageId, *ms[0].MessageId)
		require.Equal(t, *head.MessageId, ms[0].Attributes["MessageDeduplicationId"], "the dedup id becomes the MessageId (3.11)")
		require.Equal(t, "g", ms[0].Attributes["MessageGroupId"])
		require.Equal(t, sdArn("sd-fsrc.fifo"), ms[0].Attributes["DeadLetterQueueSourceArn"])
	})

	t.Run("dead-letter queue attributes", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		dlq := e.create("sd-rdlq", nil)
		url := e.create("sd-rsrc", sdKV("VisibilityTimeout", "0",
			"RedrivePolicy", `{"deadLetterTargetArn":"`+sdArn("sd-rdlq")+`","maxReceiveCount":1}`))
		sent := e.send(url, "poison", sdWith("k", sdStr("v")))
		require.Equal(t, "poison", *e.receiveOne(url).Body)
		require.Empty(t, e.receiveN(url, 10), "the second receive moves the message to the dead-letter queue (6.3)")
		ms := e.receive(dlq, &sqs.ReceiveMessageInput{MessageAttributeNames: []string{"All"},
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
		require.Len(t, ms, 1)
		require.Equal(t, *sent.MessageId, *ms[0].MessageId, "the same MessageId (6.4)")
		require.Equal(t, sdArn("sd-rsrc"), ms[0].Attributes["DeadLetterQueueSourceArn"])
		require.Equal(t, "2", ms[0].Attributes["ApproximateReceiveCount"], "the receive count carries over (1.4.3)")
		sdRequireAttrs(t, map[string]types.MessageAttributeValue{"k": sdStr("v")}, ms[0])
		require.NoError(t, e.changeVisibility(dlq, *ms[0].ReceiptHandle, 0))
		ms = e.receive(dlq, &sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{"DeadLetterQueueSourceArn"}})
		require.Len(t, ms, 1)
		require.Equal(t, map[string]string{"DeadLetterQueueSourceArn": sdArn("sd-rsrc")}, ms[0].Attributes, "asked for by name")
	})
}

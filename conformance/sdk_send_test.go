package conformance_test

// SDK tests of SendMessage and SendMessageBatch.

import (
	"fmt"
	"maps"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"
)

func TestSdSendMessage(t *testing.T) {
	t.Parallel()

	t.Run("digests and ids", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-send", nil)
		out := e.send(url, "foobar", sdWith("MyAttribute", sdStr("foobar")))
		require.Equal(t, "3858f62230ac3c915f300c664312c63f", aws.ToString(out.MD5OfMessageBody), "1.4.6 body vector")
		require.Equal(t, "adb59cd4678ea5a855436b949cd07ab6", aws.ToString(out.MD5OfMessageAttributes), "1.4.6 attribute vector")
		require.Nil(t, out.MD5OfMessageSystemAttributes, "no system attributes sent")
		require.Nil(t, out.SequenceNumber, "a standard queue has no SequenceNumber (1.4.5)")
		require.LessOrEqual(t, len(*out.MessageId), 100, "MessageId length (1.4.1)")

		traced := e.send(url, "foobar", sdWith("MyAttribute", sdStr("foobar")), sdTrace(sdTraceHeader))
		require.Equal(t, "5ae4d5d7636402d80f4eb6d213245a88", aws.ToString(traced.MD5OfMessageSystemAttributes), "1.4.6 system attribute vector")
		require.Equal(t, "adb59cd4678ea5a855436b949cd07ab6", aws.ToString(traced.MD5OfMessageAttributes), "system attributes do not change MD5OfMessageAttributes")
		require.NotEqual(t, *out.MessageId, *traced.MessageId)

		plain := e.send(url, "no attributes")
		require.Nil(t, plain.MD5OfMessageAttributes, "no MD5OfMessageAttributes without attributes")
		require.Equal(t, sdBodyMD5("no attributes"), aws.ToString(plain.MD5OfMessageBody))

		ms := e.receiveN(url, 10)
		require.ElementsMatch(t, []string{*out.MessageId, *traced.MessageId, *plain.MessageId}, sdIDs(ms))
	})

	t.Run("attributes of every type", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		for _, url := range []string{e.create("sd-types", nil), e.create("sd-types.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true"))} {
			attrs := sdAllTypes()
			body := "a body with\ttab, newline\n, CR\r and ✓ 𝄞"
			out := e.send(url, body, sdAttrs(attrs), sdGroup("g"))
			require.Equal(t, sdAttrMD5(attrs), aws.ToString(out.MD5OfMessageAttributes), "MD5OfMessageAttributes on send")
			require.Equal(t, sdBodyMD5(body), aws.ToString(out.MD5OfMessageBody))
			ms := e.receive(url, &sqs.ReceiveMessageInput{MessageAttributeNames: []string{"All"}})
			require.Len(t, ms, 1)
			require.Equal(t, body, *ms[0].Body)
			require.Equal(t, sdBodyMD5(body), aws.ToString(ms[0].MD5OfBody))
			sdRequireAttrs(t, attrs, ms[0])
		}
	})

	t.Run("SequenceNumber", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-seq.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true"))
		var last *big.Int
		var seqs []string
		for i := range 4 {
			out := e.send(url, fmt.Sprintf("m%d", i), sdGroup("g"))
			n, ok := new(big.Int).SetString(aws.ToString(out.SequenceNumber), 10)
			require.True(t, ok, "SequenceNumber %q is a decimal number (1.4.5)", aws.ToString(out.SequenceNumber))
			if last != nil {
				require.Equal(t, 1, n.Cmp(last), "SequenceNumber %v after %v: strictly increasing", n, last)
			}
			last = n
			seqs = append(seqs, *out.SequenceNumber)
		}
		ms := e.receive(url, &sqs.ReceiveMessageInput{MaxNumberOfMessages: 10,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameSequenceNumber}})
		require.Equal(t, []string{"m0", "m1", "m2", "m3"}, sdBodies(ms))
		for i, m := range ms {
			require.Equal(t, seqs[i], m.Attributes["SequenceNumber"], "received SequenceNumber of m%d", i)
		}
	})

	t.Run("deduplicated send", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-dup.fifo", sdKV("FifoQueue", "true"))
		first := e.send(url, "b1", sdGroup("g"), sdDedup("d"))
		second := e.send(url, "b2", sdGroup("g"), sdDedup("d"))
		require.Equal(t, *first.MessageId, *second.MessageId, "a deduplicated send returns the original MessageId (3.9, as chosen for fifoq)")
		require.Equal(t, sdBodyMD5("b2"), aws.ToString(second.MD5OfMessageBody), "the digest is of the body sent, which the SDK checks")
		require.Equal(t, []string{"b1"}, sdBodies(e.receiveN(url, 10)), "only the first is delivered (3.4)")
	})

	t.Run("deduplication", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		cbd := e.create("sd-cbd.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true"))
		a := e.send(cbd, "same body", sdGroup("g"), sdWith("k", sdStr("1")))
		b := e.send(cbd, "same body", sdGroup("g"), sdWith("k", sdStr("2")))
		require.Equal(t, *a.MessageId, *b.MessageId, "content-based: attributes are not part of the id (3.3)")
		c := e.send(cbd, "same body", sdGroup("g"), sdDedup("explicit-1"))
		d := e.send(cbd, "same body", sdGroup("g"), sdDedup("explicit-2"))
		require.NotEqual(t, *c.MessageId, *d.MessageId, "explicit ids override the content hash (3.3)")
		require.Equal(t, []string{"same body", "same body", "same body"}, sdBodies(e.receiveN(cbd, 10)))

		url := e.create("sd-dedup.fifo", sdKV("FifoQueue", "true"))
		first := e.send(url, "one", sdGroup("g1"), sdDedup("d"))
		require.Equal(t, *first.MessageId, *e.send(url, "two", sdGroup("g2"), sdDedup("d")).MessageId, "scope queue spans groups (3.6)")
		ms := e.receiveN(url, 10)
		require.Equal(t, []string{"one"}, sdBodies(ms))
		require.NoError(t, e.deleteMessage(url, *ms[0].ReceiptHandle))
		require.Equal(t, *first.MessageId, *e.send(url, "three", sdGroup("g1"), sdDedup("d")).MessageId, "deleted, still deduplicated (3.5)")
		require.Empty(t, e.receiveN(url, 10))
		e.clk.Advance(5*time.Minute + time.Second)
		later := e.send(url, "four", sdGroup("g1"), sdDedup("d"))
		require.NotEqual(t, *first.MessageId, *later.MessageId, "a new message after 5 minutes (3.4)")
		require.Equal(t, []string{"four"}, sdBodies(e.receiveN(url, 10)))

		byGroup := e.create("sd-bygroup.fifo", sdKV("FifoQueue", "true", "DeduplicationScope", "messageGroup"))
		e.send(byGroup, "g1", sdGroup("g1"), sdDedup("d"))
		e.send(byGroup, "g2", sdGroup("g2"), sdDedup("d"))
		e.send(byGroup, "g1 again", sdGroup("g1"), sdDedup("d"))
		require.ElementsMatch(t, []string{"g1", "g2"}, sdBodies(e.receiveN(byGroup, 10)), "scope messageGroup (3.7)")
	})

	t.Run("size limits", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-size", nil)
		e.send(url, strings.Repeat("x", sdMiB))
		_, err := e.trySend(url, strings.Repeat("x", sdMiB+1))
		sdWantErr(t, err, sdBadParam, "One or more parameters are invalid. Reason: Message must be shorter than 1048576 bytes.")
		// Attributes count toward the size (7.1.2).
		_, err = e.trySend(url, strings.Repeat("x", sdMiB-10), sdWith("k", sdStr("0123456789")))
		sdWantErr(t, err, sdBadParam, "One or more parameters are invalid. Reason: Message must be shorter than 1048576 bytes.")

		small := e.create("sd-size-1k", sdKV("MaximumMessageSize", "1024"))
		e.send(small, strings.Repeat("x", 1024))
		_, err = e.trySend(small, strings.Repeat("x", 1025))
		sdWantErr(t, err, sdBadParam, "One or more parameters are invalid. Reason: Message must be shorter than 1024 bytes.")

		two := e.create("sd-size-2k", sdKV("MaximumMessageSize", "2048"))
		attr := len("k") + len("String") + len("x")
		e.send(two, strings.Repeat("x", 2048-attr), sdWith("k", sdStr("x")))
		_, err = e.trySend(two, strings.Repeat("x", 2048-attr+1), sdWith("k", sdStr("x")))
		sdWantErr(t, err, sdBadParam, "One or more parameters are invalid. Reason: Message must be shorter than 2048 bytes.")
		require.Equal(t, "1/0/0", e.counts(two), "the rejected message was not stored")
	})

	t.Run("invalid messages", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-bad-send", nil)
		tenAttrs := map[string]types.MessageAttributeValue{}
		for i := range 10 {
			tenAttrs[fmt.Sprintf("a%d", i)] = sdStr("v")
		}
		elevenAttrs := maps.Clone(tenAttrs)
		elevenAttrs["a10"] = sdStr("v")
		long := strings.Repeat("n", 257)
		for _, tc := range []struct {
			what      string
			body      string
			opts      []sdSendOpt
			code, msg string
		}{
			{"empty body", "", nil, sdMissing, "The request must contain the parameter MessageBody."},
			{"control character", "a\x01b", nil, sdBadContents, ""},
			{"NUL", "\x00", nil, sdBadContents, ""},
			{"U+FFFE", "a\uFFFEb", nil, sdBadContents, ""},
			{"U+FFFF", "\uFFFF", nil, sdBadContents, ""},
			{"11 attributes", "b", []sdSendOpt{sdAttrs(elevenAttrs)}, sdBadParam, ""},
			{"empty String value", "b", []sdSendOpt{sdWith("X", sdStr(""))}, sdBadParam, "Message (user) attribute 'X' must contain a non-empty value of type 'String'."},
			{"empty Number value", "b", []sdSendOpt{sdWith("N", sdTyped("Number", ""))}, sdBadParam, ""},
			{"empty Binary value", "b", []sdSendOpt{sdWith("B", sdBin("Binary", nil))}, sdBadParam, ""},
			{"String value without StringValue", "b", []sdSendOpt{sdWith("S", types.MessageAttributeValue{DataType: aws.String("String")})}, sdBadParam, ""},
			{"name AWS.", "b", []sdSendOpt{sdWith("AWS.x", sdStr("v"))}, sdBadParam, ""},
			{"name amazon.", "b", []sdSendOpt{sdWith("amazon.x", sdStr("v"))}, sdBadParam, ""},
			{"name aws. in lower case", "b", []sdSendOpt{sdWith("aws.x", sdStr("v"))}, sdBadParam, ""},
			{"leading dot", "b", []sdSendOpt{sdWith(".a", sdStr("v"))}, sdBadParam, ""},
			{"trailing dot", "b", []sdSendOpt{sdWith("a.", sdStr("v"))}, sdBadParam, ""},
			{"two dots", "b", []sdSendOpt{sdWith("a..b", sdStr("v"))}, sdBadParam, ""},
			{"space in name", "b", []sdSendOpt{sdWith("a b", sdStr("v"))}, sdBadParam, ""},
			{"257-character name", "b", []sdSendOpt{sdWith(long, sdStr("v"))}, sdBadParam, ""},
			{"empty name", "b", []sdSendOpt{sdWith("", sdStr("v"))}, sdBadParam, ""},
			{"unknown type", "b", []sdSendOpt{sdWith("t", sdTyped("Text", "v"))}, sdBadParam, ""},
			{"type is case-sensitive", "b", []sdSendOpt{sdWith("t", sdTyped("string", "v"))}, sdBadParam, ""},
			{"empty type", "b", []sdSendOpt{sdWith("t", sdTyped("", "v"))}, sdBadParam, ""},
			{"not a number", "b", []sdSendOpt{sdWith("n", sdTyped("Number", "abc"))}, sdBadParam, ""},
			{"39 digits", "b", []sdSendOpt{sdWith("n", sdTyped("Number", strings.Repeat("1", 39)))}, sdBadParam, ""},
			// InvalidParameterValue, not the body's InvalidMessageContents: AWS's
			// test_invalid_string_attributes_cause_invalid_parameter_value_error.
			{"bad characters in a String attribute", "b", []sdSendOpt{sdWith("s", sdStr("a\x01"))}, sdBadParam, ""},
			{"delay 901", "b", []sdSendOpt{sdDelay(901)}, sdBadParam, ""},
			{"delay -1", "b", []sdSendOpt{sdDelay(-1)}, sdBadParam, ""},
			{"group id with space (2.4)", "b", []sdSendOpt{sdGroup("group 123")}, sdBadParam, sdGroupIDText},
			{"empty group id (2.4)", "b", []sdSendOpt{sdGroup("")}, sdBadParam, sdGroupIDText},
			{"dedup id on a standard queue", "b", []sdSendOpt{sdDedup("d")}, sdBadParam, ""},
			{"system attribute other than AWSTraceHeader (7.1.4)", "b", []sdSendOpt{sdSys("SenderId", sdStr("me"))}, sdBadParam, ""},
		} {
			_, err := e.trySend(url, tc.body, tc.opts...)
			t.Logf("%s", tc.what)
			sdWantErr(t, err, tc.code, tc.msg)
		}
		require.Equal(t, "0/0/0", e.counts(url), "rejected sends stored nothing")

		// The limits themselves are accepted.
		e.send(url, "b", sdAttrs(tenAttrs))
		e.send(url, "b", sdWith(strings.Repeat("n", 256), sdStr("v")))
		e.send(url, "b", sdWith("n", sdTyped("Number", strings.Repeat("1", 38))))
		e.send(url, "b", sdWith("a.b-c_d", sdStr("v")))
		e.send(url, "b", sdDelay(900))
		e.send(url, "b", sdGroup(strings.Repeat("g", 128)))
		e.send(url, "b", sdTrace(sdTraceHeader))
	})

	t.Run("FIFO rules", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-rules.fifo", sdKV("FifoQueue", "true"))
		cbd := e.create("sd-cbd.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true"))
		for _, tc := range []struct {
			what      string
			url       string
			opts      []sdSendOpt
			code, msg string
		}{
			{"missing group id (2.2)", cbd, nil, sdMissing, sdNoGroupText},
			{"missing group id, explicit dedup id", url, []sdSendOpt{sdDedup("d")}, sdMissing, sdNoGroupText},
			{"empty group id (2.3)", cbd, []sdSendOpt{sdGroup("")}, sdBadParam, sdGroupIDText},
			{"129-character group id", cbd, []sdSendOpt{sdGroup(strings.Repeat("a", 129))}, sdBadParam, sdGroupIDText},
			{"group id with space", cbd, []sdSendOpt{sdGroup("group 123")}, sdBadParam, sdGroupIDText},
			{"group id with é", cbd, []sdSendOpt{sdGroup("é")}, sdBadParam, sdGroupIDText},
			{"no dedup id, no content-based deduplication (3.1)", url, []sdSendOpt{sdGroup("g")}, sdBadParam, sdNoDedupText},
			{"empty dedup id (3.2)", url, []sdSendOpt{sdGroup("g"), sdDedup("")}, sdBadParam, sdDedupIDText},
			{"129-character dedup id", url, []sdSendOpt{sdGroup("g"), sdDedup(strings.Repeat("d", 129))}, sdBadParam, sdDedupIDText},
			{"dedup id with space", cbd, []sdSendOpt{sdGroup("g"), sdDedup("a b")}, sdBadParam, sdDedupIDText},
			{"per-message delay (4.3)", cbd, []sdSendOpt{sdGroup("g"), sdDelay(2)}, sdBadParam,
				"Value 2 for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type."},
		} {
			_, err := e.trySend(tc.url, "body", tc.opts...)
			t.Logf("%s", tc.what)
			sdWantErr(t, err, tc.code, tc.msg)
		}
		require.Equal(t, "0/0/0", e.counts(url))
		require.Equal(t, "0/0/0", e.counts(cbd))

		e.send(cbd, "b", sdGroup(strings.Repeat("a", 128)))
		e.send(cbd, "b", sdGroup(sdPunctuation))
		e.send(url, "b", sdGroup("g"), sdDedup(strings.Repeat("d", 128)))
		e.send(url, "b", sdGroup("g"), sdDedup(sdPunctuation))
	})

	t.Run("delays", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-delay", sdKV("DelaySeconds", "10"))
		e.send(url, "queue delay")
		e.send(url, "timer 5", sdDelay(5))
		out, err := e.c.SendMessage(e.ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("explicit 0")}, sdSet("DelaySeconds", 0))
		require.NoError(t, err)
		require.NotEmpty(t, aws.ToString(out.MessageId))
		require.Equal(t, []string{"explicit 0"}, sdBodies(e.receiveN(url, 10)), "an explicit DelaySeconds=0 overrides the queue delay (4.2)")
		e.clk.Advance(5 * time.Second)
		require.Equal(t, []string{"timer 5"}, sdBodies(e.receiveN(url, 10)), "a message timer overrides the queue delay (4.2)")
		e.clk.Advance(5 * time.Second)
		require.Equal(t, []string{"queue delay"}, sdBodies(e.receiveN(url, 10)))

		f := e.create("sd-delay.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true", "DelaySeconds", "10"))
		_, err = e.c.SendMessage(e.ctx, &sqs.SendMessageInput{QueueUrl: &f, MessageBody: aws.String("zero"), MessageGroupId: aws.String("g")},
			sdSet("DelaySeconds", 0))
		require.NoError(t, err, "FIFO accepts an explicit DelaySeconds=0 (4.4)")
		require.Empty(t, e.receiveN(f, 10), "and the queue delay still applies (4.4)")
		e.clk.Advance(10 * time.Second)
		require.Equal(t, []string{"zero"}, sdBodies(e.receiveN(f, 10)))
	})

	t.Run("fair queue group id", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-fair", nil)
		out := e.send(url, "tenant", sdGroup("tenant-1"))
		require.Nil(t, out.SequenceNumber, "no SequenceNumber on a standard queue (2.4)")
		ms := e.receive(url, &sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
		require.Len(t, ms, 1)
		require.Equal(t, "tenant-1", ms[0].Attributes["MessageGroupId"])
	})
}

func TestSdSendMessageBatch(t *testing.T) {
	t.Parallel()
	entry := func(id, body string) types.SendMessageBatchRequestEntry {
		return types.SendMessageBatchRequestEntry{Id: aws.String(id), MessageBody: aws.String(body)}
	}
	entries := func(n int) []types.SendMessageBatchRequestEntry {
		var es []types.SendMessageBatchRequestEntry
		for i := range n {
			es = append(es, entry(fmt.Sprintf("e%d", i), fmt.Sprintf("body %d", i)))
		}
		return es
	}

	t.Run("success", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-batch", nil)
		attrs := sdAllTypes()
		es := []types.SendMessageBatchRequestEntry{
			entry("plain", "one"),
			{Id: aws.String("with-attrs"), MessageBody: aws.String("two"), MessageAttributes: attrs},
			{Id: aws.String("traced_3"), MessageBody: aws.String("three"), MessageSystemAttributes: map[string]types.MessageSystemAttributeValue{
				"AWSTraceHeader": {DataType: aws.String("String"), StringValue: aws.String(sdTraceHeader)}}},
			{Id: aws.String("delayed"), MessageBody: aws.String("four"), DelaySeconds: 5},
		}
		out, err := e.c.SendMessageBatch(e.ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: es})
		require.NoError(t, err)
		require.Empty(t, out.Failed)
		require.Len(t, out.Successful, 4)
		byID := map[string]types.SendMessageBatchResultEntry{}
		for _, s := range out.Successful {
			byID[*s.Id] = s
			require.NotEmpty(t, aws.ToString(s.MessageId))
			require.Nil(t, s.SequenceNumber)
		}
		require.Equal(t, sdBodyMD5("two"), aws.ToString(byID["with-attrs"].MD5OfMessageBody))
		require.Equal(t, sdAttrMD5(attrs), aws.ToString(byID["with-attrs"].MD5OfMessageAttributes))
		require.Nil(t, byID["plain"].MD5OfMessageAttributes)
		require.Equal(t, "5ae4d5d7636402d80f4eb6d213245a88", aws.ToString(byID["traced_3"].MD5OfMessageSystemAttributes))
		require.Equal(t, "3/0/1", e.counts(url), "the per-entry delay applies")
		ms := e.receive(url, &sqs.ReceiveMessageInput{MaxNumberOfMessages: 10, MessageAttributeNames: []string{"All"}})
		require.ElementsMatch(t, []string{"one", "two", "three"}, sdBodies(ms))
		for _, m := range ms {
			if *m.Body == "two" {
				sdRequireAttrs(t, attrs, m)
				require.Equal(t, *byID["with-attrs"].MessageId, *m.MessageId)
			}
		}
	})

	t.Run("FIFO order and sequence numbers", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-batch.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true"))
		es := entries(10)
		for i := range es {
			es[i].MessageGroupId = aws.String("g")
		}
		out, err := e.c.SendMessageBatch(e.ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: es})
		require.NoError(t, err)
		require.Len(t, out.Successful, 10)
		seq := map[string]*big.Int{}
		for _, s := range out.Successful {
			n, ok := new(big.Int).SetString(aws.ToString(s.SequenceNumber), 10)
			require.True(t, ok, "SequenceNumber of %s", *s.Id)
			seq[*s.Id] = n
		}
		for i := 1; i < 10; i++ {
			require.Equal(t, 1, seq[fmt.Sprintf("e%d", i)].Cmp(seq[fmt.Sprintf("e%d", i-1)]), "sequence numbers follow batch order (2.5)")
		}
		var want []string
		for i := range 10 {
			want = append(want, fmt.Sprintf("body %d", i))
		}
		require.Equal(t, want, sdBodies(e.receiveN(url, 10)), "entries are enqueued in batch order (2.5)")
	})

	t.Run("per-entry failures", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-batch-fail", nil)
		es := entries(10)
		es[3].MessageBody = aws.String("bad \x01 character")
		out, err := e.c.SendMessageBatch(e.ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: es})
		require.NoError(t, err, "one invalid body fails its entry only (7.1.1)")
		require.Len(t, out.Successful, 9)
		require.Len(t, out.Failed, 1)
		sdWantFailed(t, out.Failed, "e3", sdBadContents, "")
		require.Equal(t, "9/0/0", e.counts(url))

		small := e.create("sd-batch-1k", sdKV("MaximumMessageSize", "1024"))
		out, err = e.c.SendMessageBatch(e.ctx, &sqs.SendMessageBatchInput{QueueUrl: &small, Entries: []types.SendMessageBatchRequestEntry{
			entry("fits", strings.Repeat("x", 1024)), entry("too_big", strings.Repeat("x", 1025)),
		}})
		require.NoError(t, err)
		require.Len(t, out.Successful, 1)
		require.Equal(t, "fits", aws.ToString(out.Successful[0].Id))
		sdWantFailed(t, out.Failed, "too_big", sdBadParam, "One or more parameters cannot be validated. Reason: Message must be shorter than 1024 bytes.")
	})

	t.Run("whole-request errors", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-batch-bad", nil)
		f := e.create("sd-batch-bad.fifo", sdKV("FifoQueue", "true"))
		grouped := func(es []types.SendMessageBatchRequestEntry) []types.SendMessageBatchRequestEntry {
			for i := range es {
				es[i].MessageGroupId = aws.String("g")
				es[i].MessageDeduplicationId = aws.String(fmt.Sprintf("d%d", i))
			}
			return es
		}
		half := sdMiB / 2
		for _, tc := range []struct {
			what      string
			url       string
			es        []types.SendMessageBatchRequestEntry
			code, msg string
		}{
			{"11 entries", url, entries(11), sdTooManyEntries, "Maximum number of entries per request are 10. You have sent 11."},
			{"20 entries", url, entries(20), sdTooManyEntries, "Maximum number of entries per request are 10. You have sent 20."},
			{"no entries", url, []types.SendMessageBatchRequestEntry{}, sdEmptyBatch, ""},
			{"duplicate ids", url, []types.SendMessageBatchRequestEntry{entry("same", "a"), entry("same", "b")}, sdIDsNotDistinct, ""},
			{"id with space", url, []types.SendMessageBatchRequestEntry{entry("a b", "a")}, sdBadEntryID, sdEntryIDText},
			{"id with dot", url, []types.SendMessageBatchRequestEntry{entry("a.b", "a")}, sdBadEntryID, sdEntryIDText},
			{"81-character id", url, []types.SendMessageBatchRequestEntry{entry(strings.Repeat("i", 81), "a")}, sdBadEntryID, sdEntryIDText},
			{"empty id", url, []types.SendMessageBatchRequestEntry{entry("", "a")}, sdBadEntryID, sdEntryIDText},
			{"over 1 MiB in total", url, []types.SendMessageBatchRequestEntry{entry("a", strings.Repeat("x", half)), entry("b", strings.Repeat("x", half+1))},
				sdBatchTooLong, "Batch requests cannot be longer than 1048576 bytes. You have sent 1048577 bytes."},
			{"FIFO entry without group id (2.2)", f, func() []types.SendMessageBatchRequestEntry {
				es := grouped(entries(3))
				es[1].MessageGroupId = nil
				return es
			}(), sdBadParam, sdNoGroupText},
			{"FIFO entry without dedup id (3.1)", f, func() []types.SendMessageBatchRequestEntry {
				es := grouped(entries(3))
				es[2].MessageDeduplicationId = nil
				return es
			}(), sdBadParam, sdNoDedupText},
		} {
			_, err := e.c.SendMessageBatch(e.ctx, &sqs.SendMessageBatchInput{QueueUrl: &tc.url, Entries: tc.es})
			t.Logf("%s", tc.what)
			sdWantErr(t, err, tc.code, tc.msg)
		}
		require.Equal(t, "0/0/0", e.counts(url), "a rejected request enqueues nothing")
		require.Equal(t, "0/0/0", e.counts(f), "a rejected FIFO request enqueues nothing (2.2, 3.1)")

		out, err := e.c.SendMessageBatch(e.ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: []types.SendMessageBatchRequestEntry{
			entry("a", strings.Repeat("x", half)), entry(strings.Repeat("b", 80), strings.Repeat("x", half)),
		}})
		require.NoError(t, err, "exactly 1 MiB in total, and an 80-character id")
		require.Len(t, out.Successful, 2)
	})
}

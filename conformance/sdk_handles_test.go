package conformance_test

// SDK tests of the receipt-handle actions: DeleteMessage(Batch) and ChangeMessageVisibility(Batch).

import (
	"fmt"
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

func TestSdDeleteMessage(t *testing.T) {
	t.Parallel()

	t.Run("standard", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-delete", nil)
		e.send(url, "m")
		m := e.receiveOne(url)
		require.NoError(t, e.deleteMessage(url, *m.ReceiptHandle))
		require.Equal(t, "0/0/0", e.counts(url))
		e.clk.Advance(sdDefaultVT)
		require.Empty(t, e.receiveN(url, 10), "a deleted message does not come back")
		for range 2 {
			require.NoError(t, e.deleteMessage(url, *m.ReceiptHandle), "deleting the same handle again succeeds (1.3.4)")
		}

		// An expired handle still deletes the message on a standard queue (1.3.4).
		e.send(url, "late")
		late := e.receive(url, &sqs.ReceiveMessageInput{VisibilityTimeout: 1})
		require.Len(t, late, 1)
		e.clk.Advance(2 * time.Second)
		require.NoError(t, e.deleteMessage(url, *late[0].ReceiptHandle))
		require.Empty(t, e.receiveN(url, 10))
		require.Equal(t, "0/0/0", e.counts(url))

		// A malformed handle (1.3.4).
		for _, handle := range []string{"garbage", "not-a-handle"} {
			err := e.deleteMessage(url, handle)
			t.Logf("handle %q", handle)
			sdWantErr(t, err, sdBadHandle, fmt.Sprintf("The input receipt handle %q is not a valid receipt handle.", handle))
		}
	})

	t.Run("FIFO", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-delete.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true"))
		e.send(url, "expires", sdGroup("g"))
		m := e.receive(url, &sqs.ReceiveMessageInput{VisibilityTimeout: 10})
		require.Len(t, m, 1)
		e.clk.Advance(11 * time.Second)
		err := e.deleteMessage(url, *m[0].ReceiptHandle)
		sdWantErr(t, err, sdBadParam, fmt.Sprintf("Value %s for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.", *m[0].ReceiptHandle))
		require.Equal(t, "1/0/0", e.counts(url), "the message stays")

		// A window extended with ChangeMessageVisibility keeps the handle valid (1.3.6).
		m = e.receive(url, &sqs.ReceiveMessageInput{VisibilityTimeout: 10})
		require.Len(t, m, 1)
		require.NoError(t, e.changeVisibility(url, *m[0].ReceiptHandle, 50))
		e.clk.Advance(20 * time.Second)
		require.NoError(t, e.deleteMessage(url, *m[0].ReceiptHandle))
		require.Equal(t, "0/0/0", e.counts(url))

		err = e.deleteMessage(url, "garbage")
		sdWantErr(t, err, sdBadHandle, `The input receipt handle "garbage" is not a valid receipt handle.`)
	})
}

func TestSdDeleteMessageBatch(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	url := e.create("sd-delbatch", nil)
	for i := range 3 {
		e.send(url, strconv.Itoa(i))
	}
	ms := e.receiveN(url, 10)
	require.Len(t, ms, 3)
	del := func(url string, es []types.DeleteMessageBatchRequestEntry) (*sqs.DeleteMessageBatchOutput, error) {
		return e.c.DeleteMessageBatch(e.ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &url, Entries: es})
	}
	entry := func(id, handle string) types.DeleteMessageBatchRequestEntry {
		return types.DeleteMessageBatchRequestEntry{Id: aws.String(id), ReceiptHandle: aws.String(handle)}
	}
	out, err := del(url, []types.DeleteMessageBatchRequestEntry{
		entry("m0", *ms[0].ReceiptHandle), entry("m1", *ms[1].ReceiptHandle), entry("bad", "garbage"),
	})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"m0", "m1"}, func() []string {
		var ids []string
		for _, s := range out.Successful {
			ids = append(ids, *s.Id)
		}
		return ids
	}())
	require.Len(t, out.Failed, 1)
	sdWantFailed(t, out.Failed, "bad", sdBadHandle, "")
	require.Equal(t, "0/1/0", e.counts(url))

	many := func(n int) []types.DeleteMessageBatchRequestEntry {
		var es []types.DeleteMessageBatchRequestEntry
		for i := range n {
			es = append(es, entry(fmt.Sprintf("e%d", i), *ms[2].ReceiptHandle))
		}
		return es
	}
	for _, tc := range []struct {
		what      string
		es        []types.DeleteMessageBatchRequestEntry
		code, msg string
	}{
		{"11 entries", many(11), sdTooManyEntries, "Maximum number of entries per request are 10. You have sent 11."},
		{"no entries", []types.DeleteMessageBatchRequestEntry{}, sdEmptyBatch, ""},
		{"duplicate ids", []types.DeleteMessageBatchRequestEntry{entry("x", *ms[2].ReceiptHandle), entry("x", "garbage")}, sdIDsNotDistinct, ""},
		{"bad id", []types.DeleteMessageBatchRequestEntry{entry("x y", *ms[2].ReceiptHandle)}, sdBadEntryID, sdEntryIDText},
	} {
		_, err := del(url, tc.es)
		t.Logf("%s", tc.what)
		sdWantErr(t, err, tc.code, tc.msg)
	}
	require.Equal(t, "0/1/0", e.counts(url), "rejected requests deleted nothing")
	out, err = del(url, many(10))
	require.NoError(t, err, "ten entries with the same handle")
	require.Len(t, out.Successful, 10)
	require.Equal(t, "0/0/0", e.counts(url))

	// FIFO: an expired handle fails its entry (1.3.5).
	f := e.create("sd-delbatch.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true"))
	e.send(f, "a", sdGroup("g1"))
	first := e.receive(f, &sqs.ReceiveMessageInput{VisibilityTimeout: 5})
	require.Len(t, first, 1)
	e.clk.Advance(6 * time.Second)
	e.send(f, "b", sdGroup("g2"))
	second := e.receiveN(f, 10)
	require.ElementsMatch(t, []string{"a", "b"}, sdBodies(second))
	b := second[slices.IndexFunc(second, func(m types.Message) bool { return *m.Body == "b" })]
	out, err = del(f, []types.DeleteMessageBatchRequestEntry{entry("old", *first[0].ReceiptHandle), entry("new", *b.ReceiptHandle)})
	require.NoError(t, err)
	require.Len(t, out.Successful, 1)
	require.Equal(t, "new", *out.Successful[0].Id)
	sdWantFailed(t, out.Failed, "old", sdBadParam, "…The receipt handle has expired.")
}

func TestSdChangeMessageVisibility(t *testing.T) {
	t.Parallel()

	t.Run("timing", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-cmv", sdKV("VisibilityTimeout", "60"))
		e.send(url, "m")
		m := e.receiveOne(url)
		e.clk.Advance(15 * time.Second)
		require.NoError(t, e.changeVisibility(url, *m.ReceiptHandle, 10))
		e.clk.Advance(10*time.Second - time.Millisecond)
		require.Empty(t, e.receiveN(url, 1), "the new timeout counts from the call (1.2.4)")
		e.clk.Advance(time.Millisecond)
		m = e.receiveOne(url)

		// 0 makes it visible at once; the next receive takes it, the one after finds nothing (1.2.7).
		require.NoError(t, e.changeVisibility(url, *m.ReceiptHandle, 0))
		again := e.receiveOne(url)
		require.Equal(t, *m.MessageId, *again.MessageId)
		require.Empty(t, e.receiveN(url, 1))

		// A change applies to its receipt only (1.2.6).
		require.NoError(t, e.changeVisibility(url, *again.ReceiptHandle, 300))
		e.clk.Advance(300 * time.Second)
		third := e.receiveOne(url)
		e.clk.Advance(60*time.Second - time.Millisecond)
		require.Empty(t, e.receiveN(url, 1), "the queue's 60 s again, not 300 s")
		e.clk.Advance(time.Millisecond)
		fourth := e.receiveOne(url)
		require.Equal(t, *third.MessageId, *fourth.MessageId)

		// An old handle still acts on a standard queue: its ChangeMessageVisibility(0) shows a message that a
		// later receive hid (1.3.4).
		e.clk.Advance(60 * time.Second)
		old := e.receive(url, &sqs.ReceiveMessageInput{VisibilityTimeout: 5})
		require.Len(t, old, 1)
		e.clk.Advance(6 * time.Second)
		newer := e.receive(url, &sqs.ReceiveMessageInput{VisibilityTimeout: 300})
		require.Len(t, newer, 1)
		require.NoError(t, e.changeVisibility(url, *old[0].ReceiptHandle, 0))
		fourth = e.receiveOne(url)
		require.Equal(t, *newer[0].MessageId, *fourth.MessageId)

		// A standard queue's expired handle: success, and the now-visible message is not hidden again (1.3.4).
		e.clk.Advance(60 * time.Second)
		require.NoError(t, e.changeVisibility(url, *fourth.ReceiptHandle, 600))
		require.Len(t, e.receiveN(url, 1), 1, "the call on the expired handle did not re-hide the message")
	})

	t.Run("12 hour cap", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-cap", nil)
		e.send(url, "m")
		m := e.receiveOne(url)
		e.clk.Advance(time.Second)
		err := e.changeVisibility(url, *m.ReceiptHandle, 43200)
		sdWantErr(t, err, sdBadParam, "") // beyond 12 h from the receive: an error, no clamping (1.2.5)
		require.NoError(t, e.changeVisibility(url, *m.ReceiptHandle, 43199))
		e.clk.Advance(10 * time.Hour)
		err = e.changeVisibility(url, *m.ReceiptHandle, 7200)
		sdWantErr(t, err, sdBadParam, "") // extending does not reset the cap
		require.NoError(t, e.changeVisibility(url, *m.ReceiptHandle, 7199))
		e.clk.Advance(7199*time.Second - time.Millisecond)
		require.Empty(t, e.receiveN(url, 1), "the last accepted change holds")
		e.clk.Advance(time.Millisecond)
		require.Len(t, e.receiveN(url, 1), 1)
	})

	t.Run("errors", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-cmv-bad", nil)
		e.send(url, "m")
		m := e.receiveOne(url)
		sdWantErr(t, e.changeVisibility(url, *m.ReceiptHandle, 43201), sdBadParam, "")
		sdWantErr(t, e.changeVisibility(url, *m.ReceiptHandle, -1), sdBadParam, "")
		sdWantErr(t, e.changeVisibility(url, "garbage", 10), sdBadHandle, `The input receipt handle "garbage" is not a valid receipt handle.`)
		require.NoError(t, e.deleteMessage(url, *m.ReceiptHandle))
		sdWantErr(t, e.changeVisibility(url, *m.ReceiptHandle, 10), sdBadParam,
			fmt.Sprintf("Value %s for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change.", *m.ReceiptHandle))

		// FIFO, expired handle: like a FIFO delete (1.3.7, recommended).
		f := e.create("sd-cmv-bad.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true"))
		e.send(f, "m", sdGroup("g"))
		fm := e.receive(f, &sqs.ReceiveMessageInput{VisibilityTimeout: 5})
		require.Len(t, fm, 1)
		e.clk.Advance(6 * time.Second)
		sdWantErr(t, e.changeVisibility(f, *fm[0].ReceiptHandle, 10), sdBadParam, "…The receipt handle has expired.")
	})
}

func TestSdChangeMessageVisibilityBatch(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	url := e.create("sd-cmvb", nil)
	for i := range 3 {
		e.send(url, strconv.Itoa(i))
	}
	ms := e.receiveN(url, 10)
	require.Len(t, ms, 3)
	change := func(es []types.ChangeMessageVisibilityBatchRequestEntry) (*sqs.ChangeMessageVisibilityBatchOutput, error) {
		return e.c.ChangeMessageVisibilityBatch(e.ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &url, Entries: es})
	}
	entry := func(id, handle string, vt int32) types.ChangeMessageVisibilityBatchRequestEntry {
		return types.ChangeMessageVisibilityBatchRequestEntry{Id: aws.String(id), ReceiptHandle: aws.String(handle), VisibilityTimeout: vt}
	}
	require.NoError(t, e.deleteMessage(url, *ms[2].ReceiptHandle))
	out, err := change([]types.ChangeMessageVisibilityBatchRequestEntry{
		entry("now", *ms[0].ReceiptHandle, 0),
		entry("later", *ms[1].ReceiptHandle, 100),
		entry("garbage", "garbage", 10),
		entry("deleted", *ms[2].ReceiptHandle, 10),
	})
	require.NoError(t, err)
	var ok []string
	for _, s := range out.Successful {
		ok = append(ok, *s.Id)
	}
	require.ElementsMatch(t, []string{"now", "later"}, ok)
	require.Len(t, out.Failed, 2)
	sdWantFailed(t, out.Failed, "garbage", sdBadHandle, "")
	sdWantFailed(t, out.Failed, "deleted", sdBadParam, "…Message does not exist or is not available for visibility timeout change.")

	require.Equal(t, []string{*ms[0].MessageId}, sdIDs(e.receive(url, &sqs.ReceiveMessageInput{MaxNumberOfMessages: 10, VisibilityTimeout: 200})),
		"VisibilityTimeout 0 made the first visible")
	e.clk.Advance(100*time.Second - time.Millisecond)
	require.Empty(t, e.receiveN(url, 10), "the second is hidden for 100 s from the call; the first is in flight again")
	e.clk.Advance(time.Millisecond)
	require.Contains(t, sdIDs(e.receiveN(url, 10)), *ms[1].MessageId)

	many := func(n int) []types.ChangeMessageVisibilityBatchRequestEntry {
		var es []types.ChangeMessageVisibilityBatchRequestEntry
		for i := range n {
			es = append(es, entry(fmt.Sprintf("e%d", i), *ms[0].ReceiptHandle, 5))
		}
		return es
	}
	for _, tc := range []struct {
		what      string
		es        []types.ChangeMessageVisibilityBatchRequestEntry
		code, msg string
	}{
		{"11 entries", many(11), sdTooManyEntries, "Maximum number of entries per request are 10. You have sent 11."},
		{"no entries", []types.ChangeMessageVisibilityBatchRequestEntry{}, sdEmptyBatch, ""},
		{"duplicate ids", []types.ChangeMessageVisibilityBatchRequestEntry{entry("x", *ms[0].ReceiptHandle, 1), entry("x", *ms[1].ReceiptHandle, 1)}, sdIDsNotDistinct, ""},
		{"bad id", []types.ChangeMessageVisibilityBatchRequestEntry{entry(strings.Repeat("i", 81), *ms[0].ReceiptHandle, 1)}, sdBadEntryID, sdEntryIDText},
	} {
		_, err := change(tc.es)
		t.Logf("%s", tc.what)
		sdWantErr(t, err, tc.code, tc.msg)
	}
}

package fifoq_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/fifoq/fifoq"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// Fuzz targets for input validation: whatever goes in, fifoq never panics, and a call that returns an error
// returns one of the exported sentinels and changes nothing (spec 7; API.md "A rejected call changes
// nothing"). The queues run on a ManualClock, so nothing ever waits on real time.

// mdlAllSentinels lists every exported sentinel error.
var mdlAllSentinels = []error{
	fifoq.ErrInvalidQueueName, fifoq.ErrInvalidQueueAttribute, fifoq.ErrFIFOOnly,
	fifoq.ErrEmptyBody, fifoq.ErrInvalidMessageContents, fifoq.ErrMessageTooLarge, fifoq.ErrInvalidMessageAttribute,
	fifoq.ErrMissingGroupID, fifoq.ErrInvalidGroupID, fifoq.ErrMissingDeduplicationID, fifoq.ErrInvalidDeduplicationID,
	fifoq.ErrInvalidDelay, fifoq.ErrEmptyBatch, fifoq.ErrTooManyEntries, fifoq.ErrBatchTooLong,
	fifoq.ErrInvalidMaxMessages, fifoq.ErrInvalidWaitTime, fifoq.ErrInvalidVisibilityTimeout, fifoq.ErrInvalidAttemptID,
	fifoq.ErrAttemptNotRetryable, fifoq.ErrReceiptHandleInvalid, fifoq.ErrReceiptHandleExpired,
	fifoq.ErrMessageNotAvailable, fifoq.ErrPurgeInProgress,
}

// mdlRequireSentinel requires err to carry an SQS error code and match an exported sentinel.
func mdlRequireSentinel(t *testing.T, err error, what string) {
	t.Helper()
	require.NotEmpty(t, fifoq.ErrorCode(err), "%s: error %q carries no SQS error code", what, err)
	require.True(t, slices.ContainsFunc(mdlAllSentinels, func(s error) bool { return errors.Is(err, s) }),
		"%s: error %q matches no exported sentinel", what, err)
}

// mdlState is everything a caller can see of a queue without changing it.
type mdlState struct {
	Stats    fifoq.Stats
	Messages []fifoq.Snapshot
}

func mdlStateOf(q *fifoq.Queue) mdlState {
	return mdlState{Stats: q.Stats(), Messages: slices.Collect(q.Messages())}
}

// mdlFuzzQueue returns a queue on a manual clock, with a maximum message size of 1 KiB, holding visible and in-flight messages (and, on a standard
// queue, a delayed one), so that "changes nothing" has something to compare.
func mdlFuzzQueue(t *testing.T, fifo, contentDedup bool) (*fifoq.Queue, []fifoq.Delivery) {
	t.Helper()
	ctx := context.Background()
	opts := []fifoq.Option{
		fifoq.WithClock(fifoq.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))),
		fifoq.WithMaxMessageSize(1024), // the smallest allowed (7.1.2), so fuzzed messages reach it
	}
	name := "fuzz"
	if fifo {
		name = "fuzz.fifo"
		if contentDedup {
			opts = append(opts, fifoq.WithContentBasedDeduplication())
		}
	}
	q, err := fifoq.New(name, opts...)
	require.NoError(t, err)
	ms := []fifoq.Message{
		{Body: "one", GroupID: "g1", DeduplicationID: "seed-1"},
		{Body: "two", GroupID: "g1", DeduplicationID: "seed-2"},
		{Body: "three", GroupID: "g2", DeduplicationID: "seed-3"},
		{Body: "four", GroupID: "g3", DeduplicationID: "seed-4"},
	}
	if !fifo {
		for i := range ms {
			ms[i].DeduplicationID = ""
		}
		ms = append(ms, fifoq.Message{Body: "delayed", Delay: time.Minute})
	}
	_, err = q.SendBatch(ctx, ms)
	require.NoError(t, err)
	ds, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 1})
	require.NoError(t, err)
	require.Len(t, ds, 1)
	return q, ds
}

func FuzzSend(f *testing.F) {
	type seed struct {
		fifo, contentDedup            bool
		body, group, dedup            string
		delayMS                       int64
		attrName, attrType, attrValue string
	}
	for _, s := range []seed{
		{true, false, "hello", "g", "d", 0, "", "", ""},
		{true, true, "hello", "g", "", 0, "k", "String", "v"},
		{true, false, "hello", "g", "seed-1", 0, "", "", ""}, // a duplicate of a stored message
		{true, false, "hello", "", "d", 0, "", "", ""},
		{true, false, "hello", "g", "", 0, "", "", ""},
		{true, false, "hello", "group 123", "d", 0, "", "", ""},
		{true, false, "hello", strings.Repeat("a", 129), "d", 0, "", "", ""},
		{true, false, "hello", "g", "d", 2000, "", "", ""},
		{false, false, "hello", "", "", 900_000, "n", "Number", "1.5e3"},
		{false, false, "hello", "", "", 900_001, "", "", ""},
		{false, false, "hello", "", "", -1, "", "", ""},
		{false, false, "hello", "", "d", 0, "", "", ""},
		{false, false, "", "", "", 0, "", "", ""},
		{false, false, "bad \x00 char", "", "", 0, "", "", ""},
		{false, false, "bad \xff utf8", "", "", 0, "", "", ""},
		{false, false, "hi", "", "", 0, "AWS.x", "String", "v"},
		{false, false, "hi", "", "", 0, "a..b", "String", "v"},
		{false, false, "hi", "", "", 0, "b", "Binary", "\x00\x01"},
		{false, false, "hi", "", "", 0, "b", "Binary.png", ""},
		{false, false, "hi", "", "", 0, "n", "Number", "abc"},
		{false, false, "hi", "", "", 0, "s", "String.", "v"},
		{false, false, "hi", "", "", 0, "attr.1øßä", "String", "Valida"}, // AWS accepts letters of any script
		{false, false, "hi", "", "", 0, "Invalid-§-attr", "String", "v"},
		{false, false, "hi", "", "", 0, "k", "String", "Invalid-\x08,\x0b"}, // InvalidParameterValue, not InvalidMessageContents
		{false, false, "hi", "", "", 0, "k", "String", "lone \xed\xa0\x80 surrogate"},
		{false, false, "lone \xed\xa0\x80 surrogate", "", "", 0, "", "", ""},
		{false, false, "hi", "", "", 0, "", "String", "v"},
		{false, false, strings.Repeat("x", 1024), "", "", 0, "", "", ""},
		{false, false, strings.Repeat("x", 1025), "", "", 0, "", "", ""},
		{false, false, strings.Repeat("x", 1024-len("k"+"String"+"v")), "", "", 0, "k", "String", "v"},
		{false, false, strings.Repeat("x", 1024-len("k"+"String"+"v")), "", "", 0, "k", "String", "vv"},
	} {
		f.Add(s.fifo, s.contentDedup, s.body, s.group, s.dedup, s.delayMS, s.attrName, s.attrType, s.attrValue)
	}
	f.Fuzz(func(t *testing.T, fifo, contentDedup bool, body, group, dedup string, delayMS int64, attrName, attrType, attrValue string) {
		ctx := context.Background()
		q, _ := mdlFuzzQueue(t, fifo, contentDedup)
		m := fifoq.Message{Body: body, GroupID: group, DeduplicationID: dedup, Delay: time.Duration(delayMS) * time.Millisecond}
		if attrName != "" || attrType != "" {
			a := fifoq.Attribute{DataType: attrType, StringValue: attrValue}
			if strings.HasPrefix(attrType, "Binary") {
				a = fifoq.Attribute{DataType: attrType, BinaryValue: []byte(attrValue)}
			}
			m.Attributes = map[string]fifoq.Attribute{attrName: a}
		}
		before := mdlStateOf(q)
		res, err := q.Send(ctx, m)
		if err != nil {
			mdlRequireSentinel(t, err, "Send")
			if errors.Is(err, fifoq.ErrInvalidMessageContents) {
				require.False(t, utf8.ValidString(body) && !strings.ContainsFunc(body, mdlBadBodyRune),
					"Send rejected the body %+q, whose characters are all allowed, as invalid contents", body)
			}
			require.Zero(t, res, "Send failed with %v but returned a result", err)
			require.Equal(t, before, mdlStateOf(q), "Send failed with %v but changed the queue", err)
			return
		}
		require.NotEmpty(t, res.MessageID)
		after := mdlStateOf(q)
		if res.Duplicate {
			require.True(t, fifo, "a standard queue reported a duplicate")
			require.Equal(t, before, after, "a duplicate send changed the queue (spec 3.4)")
			require.True(t, slices.ContainsFunc(before.Messages, func(s fifoq.Snapshot) bool { return s.MessageID == res.MessageID }),
				"a duplicate of a stored message returns its MessageID (spec 3.9)")
			return
		}
		require.Len(t, after.Messages, len(before.Messages)+1, "an accepted send stores one message")
		stored := after.Messages[len(after.Messages)-1]
		require.Equal(t, res.MessageID, stored.MessageID)
		require.Equal(t, m.Body, stored.Body)
		require.Equal(t, m.GroupID, stored.GroupID)
		require.Equal(t, m.Attributes, stored.Attributes)
		require.Equal(t, res.SequenceNumber, stored.SequenceNumber)
		if fifo {
			require.Len(t, res.SequenceNumber, 20, "FIFO sequence numbers are 20 digits")
			again, err := q.Send(ctx, m)
			require.NoError(t, err, "the same message sent twice")
			require.True(t, again.Duplicate, "the same message sent twice within 5 minutes is a duplicate (spec 3.4)")
			require.Equal(t, res.MessageID, again.MessageID, "a duplicate returns the original's MessageID (spec 3.9)")
		} else {
			require.Empty(t, res.SequenceNumber, "standard queues have no sequence numbers (spec 1.4.5)")
		}
		// The queue keeps its own copy of the attributes (style 25).
		for name, a := range m.Attributes {
			if len(a.BinaryValue) > 0 {
				a.BinaryValue[0]++
			}
			m.Attributes[name] = fifoq.Attribute{DataType: "String", StringValue: "changed"}
		}
		require.Equal(t, stored, slices.Collect(q.Messages())[len(after.Messages)-1], "the caller changed its attributes after Send")
	})
}

// mdlBadBodyRune reports whether r is a character a message body may not hold: outside #x9 | #xA | #xD |
// #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF.
func mdlBadBodyRune(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case r < 0x20, r >= 0xD800 && r < 0xE000, r == 0xFFFE, r == 0xFFFF:
		return true
	}
	return false
}

func FuzzReceive(f *testing.F) {
	f.Add(true, 1, int64(0), int64(0), "")
	f.Add(true, 10, int64(0), int64(30_000), "attempt-1")
	f.Add(true, 3, int64(20_000), int64(0), "a")
	f.Add(true, 0, int64(0), int64(0), "has space")
	f.Add(true, 11, int64(0), int64(0), "")
	f.Add(true, 1, int64(20_001), int64(0), "")
	f.Add(true, 1, int64(0), int64(43_200_001), "")
	f.Add(true, 1, int64(0), int64(-1), strings.Repeat("x", 129))
	f.Add(false, 10, int64(5_000), int64(43_200_000), "ignored on standard queues")
	f.Add(false, -1, int64(-1), int64(0), "")
	f.Fuzz(func(t *testing.T, fifo bool, maxMessages int, waitMS, visibilityMS int64, attemptID string) {
		synctest.Test(t, func(t *testing.T) { fzReceive(t, fifo, maxMessages, waitMS, visibilityMS, attemptID) })
	})
}

// fzReceive is one input of FuzzReceive, run inside a synctest bubble. The queue always has a visible
// message, so a valid long poll returns at once; the timeout, virtual in the bubble, turns a long poll that
// waits anyway (a bug, as nobody advances the manual clock) into a failure, however slow the machine.
func fzReceive(t *testing.T, fifo bool, maxMessages int, waitMS, visibilityMS int64, attemptID string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	q, _ := mdlFuzzQueue(t, fifo, false)
	o := fifoq.ReceiveOptions{
		MaxMessages:       maxMessages,
		WaitTime:          time.Duration(waitMS) * time.Millisecond,
		VisibilityTimeout: time.Duration(visibilityMS) * time.Millisecond,
		AttemptID:         attemptID,
	}
	before := mdlStateOf(q)
	out, err := q.Receive(ctx, o)
	if err != nil {
		mdlRequireSentinel(t, err, "Receive")
		require.Empty(t, out)
		require.Equal(t, before, mdlStateOf(q), "Receive(%+v) failed with %v but changed the queue", o, err)
		return
	}
	require.NotEmpty(t, out, "Receive(%+v) with visible messages returned none", o)
	require.LessOrEqual(t, len(out), max(maxMessages, 1), "Receive(%+v)", o)
	after := mdlStateOf(q)
	require.Equal(t, before.Stats.Visible-len(out), after.Stats.Visible, "Receive(%+v): visible count", o)
	require.Equal(t, before.Stats.InFlight+len(out), after.Stats.InFlight, "Receive(%+v): in-flight count", o)
	var handles []string
	for _, d := range out {
		require.GreaterOrEqual(t, d.ReceiveCount, 1)
		handles = append(handles, d.ReceiptHandle)
	}
	require.Len(t, mdlUnique(handles), len(handles), "receipt handles are distinct (spec 1.3.1)")
	if fifo && attemptID != "" {
		// A retry with the same attempt id returns the same messages and handles (2.15.2).
		again, err := q.Receive(ctx, o)
		require.NoError(t, err, "retry of Receive(%+v)", o)
		require.Equal(t, out, again, "retry of Receive(%+v)", o)
	}
	for _, h := range handles {
		require.NoError(t, q.ChangeVisibility(ctx, h, 0), "ChangeVisibility(0) with a handle just received")
	}
	require.Equal(t, before.Stats, q.Stats(), "every received message made visible again")
}

// FuzzReceiptHandle flips bits of a real receipt handle (and lengthens or shortens it) and hands it to
// Delete, DeleteBatch and ChangeVisibility.
func FuzzReceiptHandle(f *testing.F) {
	f.Add(true, []byte{}, int64(0), uint8(0))
	f.Add(true, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, int64(1000), uint8(1))
	f.Add(false, []byte{0, 0, 0, 0, 0, 0, 0, 2}, int64(0), uint8(2))
	f.Add(false, []byte{1}, int64(0), uint8(0))
	f.Add(true, make([]byte, 40), int64(43_200_001), uint8(2))
	f.Fuzz(func(t *testing.T, fifo bool, mask []byte, timeoutMS int64, op uint8) {
		ctx := context.Background()
		q, ds := mdlFuzzQueue(t, fifo, false)
		h := []byte(ds[0].ReceiptHandle)
		for i, b := range mask {
			if i < len(h) {
				h[i] ^= b
			} else {
				h = append(h, b)
			}
		}
		if len(mask) > 0 && mask[0] == 0xff {
			h = h[:len(h)/2]
		}
		before := mdlStateOf(q)
		var err error
		switch op % 3 {
		case 0:
			err = q.Delete(ctx, string(h))
		case 1:
			err = q.DeleteBatch(ctx, []string{string(h), ds[0].ReceiptHandle})
			var be *fifoq.BatchError
			if errors.As(err, &be) {
				require.Len(t, be.Entries, 1, "only the changed handle can fail: %v", err)
				require.Zero(t, be.Entries[0].Index, "only the changed handle can fail: %v", err)
				mdlRequireSentinel(t, be.Entries[0].Err, "DeleteBatch entry")
				return // the other entry deleted its message
			}
		case 2:
			err = q.ChangeVisibility(ctx, string(h), time.Duration(timeoutMS)*time.Millisecond)
		}
		if err != nil {
			mdlRequireSentinel(t, err, "receipt handle call")
			require.Equal(t, before, mdlStateOf(q), "a failed call with handle %q changed the queue", h)
		}
	})
}

// FuzzStateMachine runs the model state machine of model_test.go on fuzzer input, through rapid.MakeFuzz,
// inside a synctest bubble as in TestModelFIFO. Its inputs are long, so bound minimization, or the fuzzer
// spends up to a minute on each new input: go test -run='^$' -fuzz=FuzzStateMachine -fuzzminimizetime=200x .
func FuzzStateMachine(f *testing.F) {
	// rapid reads its choices from the input and skips an input that runs out before the run ends, so the
	// seeds are long random inputs.
	for i := range uint64(8) {
		seed := make([]byte, 8<<10)
		r := rand.New(rand.NewPCG(i, i))
		for j := range seed {
			seed[j] = byte(r.Uint32())
		}
		f.Add(seed)
	}
	f.Fuzz(rapid.MakeFuzz(func(t *rapid.T) {
		fifo := rapid.Bool().Draw(t, "fifo")
		withDLQ := rapid.Bool().Draw(t, "withDLQ")
		rapid.SyncTest(t, func(t *rapid.T) { mdlRun(t, fifo, withDLQ) })
	}))
}

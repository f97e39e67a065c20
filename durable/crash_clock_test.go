package durable_test

import (
	"context"

	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/durable"
)

// steppedClock is a child's clock (crashClock) read off by step: the reckoning of queues that read the wall
// clock of their own after it was stepped forward by step since the child started.
type steppedClock struct {
	crashClock
	step time.Duration
}

func (c steppedClock) Now() time.Time { return c.crashClock.Now().Add(c.step) }

// The crash test's order check compares the end of a receive, by the child's clock, with the arrival of a
// FIFO message in the dead-letter queue, by the queue's. This plays what a child does with a poison message
// (received and failed three times, then moved to the dead-letter queue by the receive that returns the next
// messages of its group) against a store whose queues are off the child's clock by a step of the wall
// clock, and checks it as the crash test does. The queues reading the child's clock, as crashClock makes
// them, the check passes; ahead of it by 500 ms, it reports the next messages as delivered while the poison
// one was in neither queue: the violation the crash test reported once, on a loaded machine.
func TestCrashCheckClockStep(t *testing.T) {
	for _, step := range []time.Duration{0, 500 * time.Millisecond} {
		t.Run(step.String(), func(t *testing.T) {
			v := crashClockScenario(t, step)
			if step == 0 {
				require.Empty(t, v)
				return
			}
			require.Len(t, v, 2, "%s", strings.Join(v, "\n"))
			for _, s := range v {
				require.Contains(t, s, "while f-r0-p0-g00-n0-P, sent before it, was neither deleted nor in the dead-letter queue")
			}
		})
	}
}

func crashClockScenario(t *testing.T, step time.Duration) []string {
	ctx := context.Background()
	dir := t.TempDir()
	base := time.Now()
	now := func() int64 { return crashClock{base}.Now().UnixNano() }
	st, err := durable.Open(filepath.Join(dir, "store"))
	require.NoError(t, err)
	pairs, err := openCrashQueues(st, fifoq.WithClock(steppedClock{crashClock{base}, step}))
	require.NoError(t, err)
	src := pairs[0].src

	var recs []crashRec
	ids := []string{"f-r0-p0-g00-n0-P", "f-r0-p0-g00-n1", "f-r0-p0-g00-n2"}
	for _, id := range ids {
		recs = append(recs, crashRec{K: recAttempt, Q: "f", ID: id, Group: "g00", Dedup: id})
		r, err := src.Send(ctx, fifoq.Message{Body: crashBodyOf(id), GroupID: "g00", DeduplicationID: id,
			Attributes: map[string]fifoq.Attribute{"id": {DataType: "String", StringValue: id}}})
		require.NoError(t, err)
		recs = append(recs, crashRec{K: recSent, Q: "f", ID: id, Msg: r.MessageID, Seq: r.SequenceNumber})
	}
	receive := func(call, max int) []fifoq.Delivery {
		start := now()
		ds, err := src.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: max, NoWaitTime: true})
		end := now()
		require.NoError(t, err)
		for i, d := range ds {
			recs = append(recs, crashRec{K: recDelivery, Q: "f", ID: crashIDOf(d.Body), Call: call, Idx: i, Start: start,
				End: end, Msg: d.MessageID, Count: d.ReceiveCount, First: d.FirstReceivedAt.UnixNano(), Sent: d.SentAt.UnixNano(),
				Dedup: d.DeduplicationID, Handle: d.ReceiptHandle})
		}
		return ds
	}
	for call := 1; call <= crashMaxReceive; call++ {
		ds := receive(call, 1)
		require.Len(t, ds, 1)
		require.NoError(t, src.ChangeVisibility(ctx, ds[0].ReceiptHandle, 0))
		recs = append(recs, crashRec{K: recFailed, Q: "f", ID: ids[0], Msg: ds[0].MessageID, Count: ds[0].ReceiveCount})
	}
	ds := receive(crashMaxReceive+1, 10) // the poison message moves; the next two come out
	require.Len(t, ds, 2, "%v", ds)
	for _, d := range ds {
		id := crashIDOf(d.Body)
		recs = append(recs, crashRec{K: recDelAttempt, Q: "f", ID: id, Msg: d.MessageID, Count: d.ReceiveCount, Start: now()})
		require.NoError(t, src.Delete(ctx, d.ReceiptHandle))
		recs = append(recs, crashRec{K: recDeleted, Q: "f", ID: id, Msg: d.MessageID, Count: d.ReceiveCount, End: now()})
	}
	require.NoError(t, st.Close())

	m := newCrashModel()
	m.apply(recs) // round 0
	h := &crashHarness{t: t, dir: dir, store: filepath.Join(dir, "store"), model: m}
	v := m.check(0, h.reopen(0))
	t.Logf("queues off the child's clock by %v: %d violations\n%s", step, len(v), strings.Join(v, "\n"))
	return append([]string(nil), v...)
}

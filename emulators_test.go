package fifoq_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// The FIFO cases that users of other SQS emulators reported getting wrong there, each as SQS does it
// (docs/migrating.md, "FIFO differences"): fifoq's answer in each is pinned here.
func TestEmulatorPitfalls(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := fifoq.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	newQueue := func(name string, opts ...fifoq.Option) *fifoq.Queue {
		t.Helper()
		q, err := fifoq.New(name, append([]fifoq.Option{fifoq.WithClock(clk), fifoq.WithVisibilityTimeout(10 * time.Second),
			fifoq.WithContentBasedDeduplication()}, opts...)...)
		require.NoError(t, err)
		return q
	}
	send := func(q *fifoq.Queue, bodies ...string) {
		t.Helper()
		for _, b := range bodies {
			_, err := q.Send(ctx, fifoq.Message{GroupID: "g", Body: b})
			require.NoError(t, err)
		}
	}
	receive := func(q *fifoq.Queue) ([]string, []fifoq.Delivery) {
		t.Helper()
		ds, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10})
		require.NoError(t, err)
		out := []string{}
		for _, d := range ds {
			out = append(out, d.Body)
		}
		return out, ds
	}

	// A message sent to a group while one of it is in flight waits, and the send does not release the group.
	q := newQueue("sent-while-in-flight.fifo")
	send(q, "1")
	got, _ := receive(q)
	require.Equal(t, []string{"1"}, got)
	send(q, "2")
	got, _ = receive(q)
	require.Empty(t, got, "the group is in flight")
	clk.Advance(10 * time.Second)
	got, _ = receive(q)
	require.Equal(t, []string{"1", "2"}, got, "back in order once the first is visible again")

	// The first in-flight message of a group, its visibility extended, holds back the ones after it, even when
	// their own timeouts ended; one in the middle holds back only those after it.
	q = newQueue("extended.fifo")
	send(q, "m1", "m2", "m3")
	got, ds := receive(q)
	require.Equal(t, []string{"m1", "m2", "m3"}, got)
	require.NoError(t, q.ChangeVisibility(ctx, ds[0].ReceiptHandle, 15*time.Second))
	clk.Advance(12 * time.Second)
	got, _ = receive(q)
	require.Empty(t, got, "m1 is still in flight")
	clk.Advance(3 * time.Second)
	got, _ = receive(q)
	require.Equal(t, []string{"m1", "m2", "m3"}, got)
	q = newQueue("extended-middle.fifo")
	send(q, "m1", "m2", "m3")
	_, ds = receive(q)
	require.NoError(t, q.ChangeVisibility(ctx, ds[1].ReceiptHandle, 15*time.Second))
	clk.Advance(12 * time.Second)
	got, _ = receive(q)
	require.Equal(t, []string{"m1"}, got, "up to the message still in flight")

	// A deduplication id is remembered for 5 minutes after the send, even once its message was deleted.
	q = newQueue("dedup.fifo")
	r, err := q.Send(ctx, fifoq.Message{GroupID: "g", Body: "x", DeduplicationID: "d1"})
	require.NoError(t, err)
	_, ds = receive(q)
	require.NoError(t, q.Delete(ctx, ds[0].ReceiptHandle))
	again, err := q.Send(ctx, fifoq.Message{GroupID: "g", Body: "x", DeduplicationID: "d1"})
	require.NoError(t, err)
	require.True(t, again.Duplicate)
	require.Equal(t, r.MessageID, again.MessageID, "the first send's id, as SQS answers a duplicate")
	require.Equal(t, fifoq.Stats{}, q.Stats(), "nothing stored")
	clk.Advance(5 * time.Minute)
	again, err = q.Send(ctx, fifoq.Message{GroupID: "g", Body: "x", DeduplicationID: "d1"})
	require.NoError(t, err)
	require.False(t, again.Duplicate, "after 5 minutes the id is new")

	// A delayed message does not hold back a visible one of its group.
	q = newQueue("delayed.fifo", fifoq.WithDelay(5*time.Second))
	send(q, "A")
	clk.Advance(6 * time.Second)
	send(q, "B")
	got, _ = receive(q)
	require.Equal(t, []string{"A"}, got)
}

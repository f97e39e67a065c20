package fifoq_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// Tests of delays (spec §4), retention (§5), purge (7.3.3) and the counts (§10). Every rule that depends on
// time runs twice through dlEachClock: on a fifoq.ManualClock advanced by hand, and on the real clock inside a
// testing/synctest bubble advanced with time.Sleep.

// dlClock drives a queue's time one of the two ways.
type dlClock struct {
	opts    []fifoq.Option        // give the queue this clock
	advance func(d time.Duration) // move time forward by exactly d
}

// newQueue creates a queue on the clock, failing the test on error.
func (c *dlClock) newQueue(t *testing.T, name string, opts ...fifoq.Option) *fifoq.Queue {
	t.Helper()
	q, err := fifoq.New(name, append(slices.Clone(c.opts), opts...)...)
	require.NoError(t, err, "New(%q)", name)
	return q
}

// dlStart is the manual clocks' start.
var dlStart = time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC)

// dlEachClock runs f once on a manual clock and once inside a synctest bubble (where the queue is built).
func dlEachClock(t *testing.T, f func(t *testing.T, c *dlClock)) {
	t.Helper()
	t.Run("ManualClock", func(t *testing.T) {
		clk := fifoq.NewManualClock(dlStart)
		f(t, &dlClock{opts: []fifoq.Option{fifoq.WithClock(clk)}, advance: clk.Advance})
	})
	t.Run("synctest", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f(t, &dlClock{advance: func(d time.Duration) {
				time.Sleep(d)
				synctest.Wait()
			}})
		})
	})
}

// dlNewQueue creates a queue on a manual clock that is never advanced, so nothing changes by itself.
func dlNewQueue(t *testing.T, name string, opts ...fifoq.Option) *fifoq.Queue {
	t.Helper()
	clk := fifoq.NewManualClock(dlStart)
	q, err := fifoq.New(name, append([]fifoq.Option{fifoq.WithClock(clk)}, opts...)...)
	require.NoError(t, err, "New(%q)", name)
	return q
}

func dlSend(t *testing.T, q *fifoq.Queue, m fifoq.Message) fifoq.SendResult {
	t.Helper()
	r, err := q.Send(context.Background(), m)
	require.NoError(t, err, "Send(%+v)", m)
	require.NotEmpty(t, r.MessageID, "Send(%+v)", m)
	return r
}

// dlReceive is a short-poll receive of up to n messages.
func dlReceive(t *testing.T, q *fifoq.Queue, n int) []fifoq.Delivery {
	t.Helper()
	ds, err := q.Receive(context.Background(), fifoq.ReceiveOptions{MaxMessages: n})
	require.NoError(t, err, "Receive(%d)", n)
	return ds
}

func dlBodies(ds []fifoq.Delivery) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.Body)
	}
	return out
}

// dlStored lists the bodies of the stored messages, oldest first.
func dlStored(q *fifoq.Queue) []string {
	out := []string{}
	for s := range q.Messages() {
		out = append(out, s.Body)
	}
	return out
}

// dlDelete deletes the deliveries.
func dlDelete(t *testing.T, q *fifoq.Queue, ds ...fifoq.Delivery) {
	t.Helper()
	for _, d := range ds {
		require.NoError(t, q.Delete(context.Background(), d.ReceiptHandle), "Delete(%q)", d.Body)
	}
}

// Spec 4.1, 4.4, 4.5 (scenario 37, second half): a FIFO queue delay hides new messages for exactly the delay,
// a per-message Delay of 0 means the queue delay, and the group's order is kept.
func TestDelayFIFOQueueDelayKeepsOrder(t *testing.T) {
	t.Parallel()
	dlEachClock(t, func(t *testing.T, c *dlClock) {
		q := c.newQueue(t, "dl-delay.fifo", fifoq.WithDelay(2*time.Second), fifoq.WithContentBasedDeduplication())
		for _, b := range []string{"m1", "m2", "m3"} {
			dlSend(t, q, fifoq.Message{Body: b, GroupID: "g"})
		}
		require.Equal(t, fifoq.Stats{Delayed: 3}, q.Stats(), "right after the sends")
		require.Empty(t, dlReceive(t, q, 10), "at 0s")
		c.advance(2*time.Second - time.Nanosecond)
		require.Empty(t, dlReceive(t, q, 10), "at 2s-1ns the delay has not ended")
		require.Equal(t, fifoq.Stats{Delayed: 3}, q.Stats(), "at 2s-1ns")
		c.advance(time.Nanosecond)
		require.Equal(t, fifoq.Stats{Visible: 3}, q.Stats(), "at 2s")
		require.Equal(t, []string{"m1", "m2", "m3"}, dlBodies(dlReceive(t, q, 10)), "at 2s, in send order")
	})
}

// Spec 4.3 (scenario 37, first half): a FIFO queue rejects any per-message delay above 0 with ErrInvalidDelay
// (InvalidParameterValue), in Send and per entry in SendBatch, and stores nothing.
func TestDelayFIFORejectsPerMessageDelay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := dlNewQueue(t, "dl-delay.fifo", fifoq.WithContentBasedDeduplication(), fifoq.WithDelay(2*time.Second))
	for _, d := range []time.Duration{time.Nanosecond, 2 * time.Second, 15 * time.Minute} {
		_, err := q.Send(ctx, fifoq.Message{Body: "x", GroupID: "g", Delay: d})
		require.ErrorIs(t, err, fifoq.ErrInvalidDelay, "FIFO Send with Delay %v", d)
		require.Equal(t, "InvalidParameterValue", fifoq.ErrorCode(err), "FIFO Send with Delay %v", d)
	}
	res, err := q.SendBatch(ctx, []fifoq.Message{{Body: "ok", GroupID: "g"}, {Body: "bad", GroupID: "g", Delay: 2 * time.Second}})
	var be *fifoq.BatchError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Entries, 1)
	require.Equal(t, 1, be.Entries[0].Index)
	require.ErrorIs(t, be.Entries[0].Err, fifoq.ErrInvalidDelay)
	require.NotEmpty(t, res[0].MessageID, "the valid entry is sent")
	require.Equal(t, []string{"ok"}, dlStored(q), "only the valid entry is stored")
}

// Spec 4.2 (scenario 38): on a standard queue a message timer overrides the queue delay, shorter or longer,
// and a Delay of 0 means the queue delay (fifoq note in §12: an explicit 0 cannot be written).
func TestDelayStandardMessageTimerOverridesQueueDelay(t *testing.T) {
	t.Parallel()
	dlEachClock(t, func(t *testing.T, c *dlClock) {
		q := c.newQueue(t, "dl-timer", fifoq.WithDelay(10*time.Second))
		dlSend(t, q, fifoq.Message{Body: "5s", Delay: 5 * time.Second})
		dlSend(t, q, fifoq.Message{Body: "queue"})
		dlSend(t, q, fifoq.Message{Body: "15s", Delay: 15 * time.Second})
		require.Equal(t, fifoq.Stats{Delayed: 3}, q.Stats())
		var visibleAt []time.Duration
		var first time.Time
		for s := range q.Messages() {
			require.Equal(t, fifoq.StateDelayed, s.State, "%q", s.Body)
			if first.IsZero() {
				first = s.SentAt
			}
			visibleAt = append(visibleAt, s.VisibleAt.Sub(first))
		}
		require.Equal(t, []time.Duration{5 * time.Second, 10 * time.Second, 15 * time.Second}, visibleAt, "Snapshot.VisibleAt")

		c.advance(5*time.Second - time.Nanosecond)
		require.Empty(t, dlReceive(t, q, 10), "at 5s-1ns")
		c.advance(time.Nanosecond)
		require.Equal(t, []string{"5s"}, dlBodies(dlReceive(t, q, 10)), "at 5s: the 5s timer, not the 10s queue delay")
		c.advance(5*time.Second - time.Nanosecond)
		require.Empty(t, dlReceive(t, q, 10), "at 10s-1ns")
		c.advance(time.Nanosecond)
		require.Equal(t, []string{"queue"}, dlBodies(dlReceive(t, q, 10)), "at 10s: Delay 0 takes the queue delay")
		c.advance(5*time.Second - time.Nanosecond)
		require.Empty(t, dlReceive(t, q, 10), "at 15s-1ns")
		c.advance(time.Nanosecond)
		require.Equal(t, []string{"15s"}, dlBodies(dlReceive(t, q, 10)), "at 15s: a timer longer than the queue delay")
	})
}

// Spec 4.7, 2.8: a delayed message blocks nothing. On a standard queue a later undelayed message is received
// first; on a FIFO queue a delayed message neither blocks another group nor counts as in flight: its own
// group's earlier message is received, and after that message is deleted the group simply waits for the delay.
func TestDelayedMessageNeverBlocksOthers(t *testing.T) {
	t.Parallel()
	dlEachClock(t, func(t *testing.T, c *dlClock) {
		std := c.newQueue(t, "dl-std")
		dlSend(t, std, fifoq.Message{Body: "late", Delay: 10 * time.Minute})
		dlSend(t, std, fifoq.Message{Body: "now"})
		require.Equal(t, []string{"now"}, dlBodies(dlReceive(t, std, 10)), "standard")

		q := c.newQueue(t, "dl-fifo.fifo", fifoq.WithDelay(10*time.Second), fifoq.WithContentBasedDeduplication())
		dlSend(t, q, fifoq.Message{Body: "g1-a", GroupID: "g1"})
		c.advance(5 * time.Second)
		dlSend(t, q, fifoq.Message{Body: "g2-b", GroupID: "g2"})
		dlSend(t, q, fifoq.Message{Body: "g1-c", GroupID: "g1"})
		c.advance(5 * time.Second) // t=10s: g1-a visible, g2-b and g1-c delayed until 15s
		require.Equal(t, fifoq.Stats{Visible: 1, Delayed: 2}, q.Stats(), "at 10s")
		ds := dlReceive(t, q, 10)
		require.Equal(t, []string{"g1-a"}, dlBodies(ds), "at 10s")
		dlDelete(t, q, ds...)
		require.Empty(t, dlReceive(t, q, 10), "at 10s, after deleting g1-a")
		c.advance(5 * time.Second)
		require.ElementsMatch(t, []string{"g1-c", "g2-b"}, dlBodies(dlReceive(t, q, 10)), "at 15s")
	})
}

// Spec 4.1, 10.1 (scenario 40): a delayed message counts in Stats.Delayed, not as visible, and shows as
// Delayed in Messages until its delay ends.
func TestDelayedCounter(t *testing.T) {
	t.Parallel()
	dlEachClock(t, func(t *testing.T, c *dlClock) {
		q := c.newQueue(t, "dl-counter")
		dlSend(t, q, fifoq.Message{Body: "d", Delay: 30 * time.Second})
		dlSend(t, q, fifoq.Message{Body: "v"})
		require.Equal(t, fifoq.Stats{Visible: 1, Delayed: 1}, q.Stats())
		var states []fifoq.MessageState
		for s := range q.Messages() {
			states = append(states, s.State)
		}
		require.Equal(t, []fifoq.MessageState{fifoq.StateDelayed, fifoq.StateVisible}, states)
		c.advance(30*time.Second - time.Nanosecond)
		require.Equal(t, fifoq.Stats{Visible: 1, Delayed: 1}, q.Stats(), "at 30s-1ns")
		c.advance(time.Nanosecond)
		require.Equal(t, fifoq.Stats{Visible: 2}, q.Stats(), "at 30s")
	})
}

// Spec 5.1, 5.2 (scenario 41), standard queue: a message past the retention period is gone, in flight or not,
// while younger ones stay; deleting an expired in-flight message's handle afterwards succeeds, and changing
// its visibility returns ErrMessageNotAvailable (1.3.4).
func TestRetentionStandard(t *testing.T) {
	t.Parallel()
	dlEachClock(t, func(t *testing.T, c *dlClock) {
		ctx := context.Background()
		q := c.newQueue(t, "dl-retention", fifoq.WithRetention(time.Minute), fifoq.WithVisibilityTimeout(2*time.Minute))
		dlSend(t, q, fifoq.Message{Body: "inflight"})
		dlSend(t, q, fifoq.Message{Body: "never-received"})
		ds := dlReceive(t, q, 1)
		require.Equal(t, []string{"inflight"}, dlBodies(ds))
		c.advance(30 * time.Second)
		dlSend(t, q, fifoq.Message{Body: "younger"})
		c.advance(30*time.Second - time.Nanosecond)
		require.Equal(t, fifoq.Stats{Visible: 2, InFlight: 1}, q.Stats(), "at 60s-1ns")
		c.advance(time.Nanosecond)
		require.Equal(t, fifoq.Stats{Visible: 1}, q.Stats(), "at 60s the two older messages are gone")
		require.Equal(t, []string{"younger"}, dlStored(q), "at 60s")
		require.NoError(t, q.Delete(ctx, ds[0].ReceiptHandle), "deleting the expired in-flight message's handle")
		require.ErrorIs(t, q.ChangeVisibility(ctx, ds[0].ReceiptHandle, time.Second), fifoq.ErrMessageNotAvailable)
		c.advance(2 * time.Minute)
		require.Empty(t, dlReceive(t, q, 10), "the expired in-flight message never comes back")
		require.Equal(t, fifoq.Stats{}, q.Stats(), "at 3m")
		require.Empty(t, dlStored(q), "at 3m")
	})
}

// Spec 5.2 (scenario 41), FIFO queue: messages past the retention period are gone, the in-flight head too,
// and the removal of an expired in-flight head unblocks its group at once (2.9).
func TestRetentionFIFO(t *testing.T) {
	t.Parallel()
	dlEachClock(t, func(t *testing.T, c *dlClock) {
		q := c.newQueue(t, "dl-retention.fifo", fifoq.WithRetention(time.Minute),
			fifoq.WithVisibilityTimeout(5*time.Minute), fifoq.WithContentBasedDeduplication())
		dlSend(t, q, fifoq.Message{Body: "g1-head", GroupID: "g1"})
		dlSend(t, q, fifoq.Message{Body: "g2-old", GroupID: "g2"})
		require.Equal(t, []string{"g1-head"}, dlBodies(dlReceive(t, q, 1)))
		c.advance(30 * time.Second)
		dlSend(t, q, fifoq.Message{Body: "g1-next", GroupID: "g1"})
		dlSend(t, q, fifoq.Message{Body: "g2-next", GroupID: "g2"})
		c.advance(30*time.Second - time.Nanosecond)
		require.Equal(t, fifoq.Stats{Visible: 3, InFlight: 1}, q.Stats(), "at 60s-1ns")
		c.advance(time.Nanosecond)
		require.Equal(t, fifoq.Stats{Visible: 2}, q.Stats(), "at 60s")
		require.Equal(t, []string{"g1-next", "g2-next"}, dlStored(q), "at 60s")
		require.ElementsMatch(t, []string{"g1-next", "g2-next"}, dlBodies(dlReceive(t, q, 10)),
			"at 60s g1 is no longer blocked by its expired in-flight head")
		c.advance(time.Minute)
		require.Equal(t, fifoq.Stats{}, q.Stats(), "at 2m")
	})
}

// Spec 5.2, 4.1: retention counts from the send, delay included: a message delayed past the end of the
// retention period is gone without ever being visible, also when the clock jumps past both at once.
func TestRetentionDelayedMessage(t *testing.T) {
	t.Parallel()
	dlEachClock(t, func(t *testing.T, c *dlClock) {
		q := c.newQueue(t, "dl-retention", fifoq.WithRetention(time.Minute))
		dlSend(t, q, fifoq.Message{Body: "step", Delay: 2 * time.Minute})
		dlSend(t, q, fifoq.Message{Body: "jump", Delay: 2 * time.Minute})
		require.Equal(t, fifoq.Stats{Delayed: 2}, q.Stats())
		c.advance(time.Minute)
		require.Empty(t, dlReceive(t, q, 10), "at 1m")
		require.Equal(t, fifoq.Stats{}, q.Stats(), "at 1m both are past retention")
		c.advance(2 * time.Minute)
		require.Empty(t, dlReceive(t, q, 10), "at 3m, past the delay")
		require.Empty(t, dlStored(q))

		q2 := c.newQueue(t, "dl-retention2", fifoq.WithRetention(time.Minute))
		dlSend(t, q2, fifoq.Message{Body: "jump", Delay: 2 * time.Minute})
		c.advance(3 * time.Minute) // past the retention and the delay with no call between
		require.Empty(t, dlReceive(t, q2, 10), "at 3m")
		require.Equal(t, fifoq.Stats{}, q2.Stats(), "at 3m")
	})
}

// dlPurgeSetup fills a queue with one visible, one in-flight and one delayed message (plus, on FIFO, a
// visible one waiting behind the in-flight one) and returns the in-flight delivery.
func dlPurgeSetup(t *testing.T, c *dlClock, fifo bool) (*fifoq.Queue, fifoq.Delivery) {
	t.Helper()
	if !fifo {
		q := c.newQueue(t, "dl-purge", fifoq.WithVisibilityTimeout(30*time.Second))
		dlSend(t, q, fifoq.Message{Body: "inflight"})
		dlSend(t, q, fifoq.Message{Body: "visible"})
		dlSend(t, q, fifoq.Message{Body: "delayed", Delay: time.Minute})
		ds := dlReceive(t, q, 1)
		require.Equal(t, []string{"inflight"}, dlBodies(ds))
		require.Equal(t, fifoq.Stats{Visible: 1, InFlight: 1, Delayed: 1}, q.Stats(), "before the purge")
		return q, ds[0]
	}
	q := c.newQueue(t, "dl-purge.fifo", fifoq.WithVisibilityTimeout(30*time.Second),
		fifoq.WithDelay(10*time.Second), fifoq.WithContentBasedDeduplication())
	dlSend(t, q, fifoq.Message{Body: "inflight", GroupID: "g1"})
	dlSend(t, q, fifoq.Message{Body: "behind", GroupID: "g1"})
	dlSend(t, q, fifoq.Message{Body: "visible", GroupID: "g2"})
	c.advance(10 * time.Second)
	ds := dlReceive(t, q, 1)
	require.Equal(t, []string{"inflight"}, dlBodies(ds))
	dlSend(t, q, fifoq.Message{Body: "delayed", GroupID: "g3"})
	require.Equal(t, fifoq.Stats{Visible: 2, InFlight: 1, Delayed: 1}, q.Stats(), "before the purge")
	return q, ds[0]
}

// Spec 7.3.3 (scenario 36): Purge removes visible, in-flight and delayed messages; none of them reappears
// after its visibility timeout or delay; the purged in-flight message no longer blocks its FIFO group; and
// messages sent after the purge are kept.
func TestPurgeRemovesInFlightAndDelayed(t *testing.T) {
	t.Parallel()
	for _, fifo := range []bool{false, true} {
		name := map[bool]string{false: "standard", true: "FIFO"}[fifo]
		t.Run(name, func(t *testing.T) {
			dlEachClock(t, func(t *testing.T, c *dlClock) {
				ctx := context.Background()
				q, inflight := dlPurgeSetup(t, c, fifo)
				require.NoError(t, q.Purge(ctx))
				require.Equal(t, fifoq.Stats{}, q.Stats(), "right after the purge")
				require.Empty(t, dlStored(q), "right after the purge")
				require.Empty(t, dlReceive(t, q, 10), "right after the purge")
				c.advance(2 * time.Minute) // past the visibility timeout and the delays
				require.Equal(t, fifoq.Stats{}, q.Stats(), "2m after the purge")
				require.Empty(t, dlReceive(t, q, 10), "2m after the purge: nothing reappears")
				if !fifo {
					require.NoError(t, q.Delete(ctx, inflight.ReceiptHandle), "standard: deleting a purged message succeeds")
				}
				dlSend(t, q, fifoq.Message{Body: "after", GroupID: "g1"})
				c.advance(10 * time.Second) // the FIFO queue's delay
				require.Equal(t, []string{"after"}, dlBodies(dlReceive(t, q, 10)), "a message sent after the purge")
			})
		})
	}
}

// Spec 7.3.3 (scenario 35): a queue can be purged once every 60 seconds. A second purge within 60 s returns
// ErrPurgeInProgress (AWS.SimpleQueueService.PurgeQueueInProgress) and deletes nothing, and does not restart
// the 60 s; at 60 s a purge is allowed again.
func TestPurgeOncePerMinute(t *testing.T) {
	t.Parallel()
	dlEachClock(t, func(t *testing.T, c *dlClock) {
		ctx := context.Background()
		q := c.newQueue(t, "dl-purge")
		require.NoError(t, q.Purge(ctx), "first purge")
		dlSend(t, q, fifoq.Message{Body: "kept"})
		c.advance(30 * time.Second)
		err := q.Purge(ctx)
		require.ErrorIs(t, err, fifoq.ErrPurgeInProgress, "purge at 30s")
		require.Equal(t, "AWS.SimpleQueueService.PurgeQueueInProgress", fifoq.ErrorCode(err))
		require.Equal(t, []string{"kept"}, dlStored(q), "a rejected purge deletes nothing")
		c.advance(30*time.Second - time.Nanosecond)
		require.ErrorIs(t, q.Purge(ctx), fifoq.ErrPurgeInProgress, "purge at 60s-1ns")
		c.advance(time.Nanosecond)
		require.NoError(t, q.Purge(ctx), "purge at 60s")
		require.Empty(t, dlStored(q), "after the purge at 60s")
		require.ErrorIs(t, q.Purge(ctx), fifoq.ErrPurgeInProgress, "purge right after the one at 60s")
	})
}

// Spec 10.3, 10.4: exact counts on a standard queue. 6 messages, receive 1 -> {5, 1, 0}; after the
// visibility timeout {6, 0, 0}; a delete and a delayed message are counted at once.
func TestStatsStandard(t *testing.T) {
	t.Parallel()
	dlEachClock(t, func(t *testing.T, c *dlClock) {
		q := c.newQueue(t, "dl-stats", fifoq.WithVisibilityTimeout(30*time.Second))
		for i := range 6 {
			dlSend(t, q, fifoq.Message{Body: string(rune('a' + i))})
		}
		require.Equal(t, fifoq.Stats{Visible: 6}, q.Stats())
		ds := dlReceive(t, q, 1)
		require.Len(t, ds, 1)
		require.Equal(t, fifoq.Stats{Visible: 5, InFlight: 1}, q.Stats(), "after receiving 1")
		c.advance(30 * time.Second)
		require.Equal(t, fifoq.Stats{Visible: 6}, q.Stats(), "after the visibility timeout")
		ds = dlReceive(t, q, 2)
		dlDelete(t, q, ds[0])
		dlSend(t, q, fifoq.Message{Body: "d", Delay: time.Second})
		require.Equal(t, fifoq.Stats{Visible: 4, InFlight: 1, Delayed: 1}, q.Stats(), "after a delete and a delayed send")
	})
}

// Spec 10.2: exact counts on a FIFO queue; messages waiting behind an in-flight message count as visible.
// 6 messages in 3 groups (2 each), one receive from g1 and one from g2 -> {4, 2, 0}; after the visibility
// timeout {6, 0, 0}. 5 messages (g1 x3, g2, g3), receive 4 -> Visible 1.
func TestStatsFIFO(t *testing.T) {
	t.Parallel()
	dlEachClock(t, func(t *testing.T, c *dlClock) {
		q := c.newQueue(t, "dl-stats.fifo", fifoq.WithVisibilityTimeout(30*time.Second), fifoq.WithContentBasedDeduplication())
		for _, m := range []string{"g1-1", "g2-1", "g3-1", "g1-2", "g2-2", "g3-2"} {
			dlSend(t, q, fifoq.Message{Body: m, GroupID: m[:2]})
		}
		require.Equal(t, []string{"g1-1"}, dlBodies(dlReceive(t, q, 1)))
		require.Equal(t, []string{"g2-1"}, dlBodies(dlReceive(t, q, 1)))
		require.Equal(t, fifoq.Stats{Visible: 4, InFlight: 2}, q.Stats(), "after one receive from g1 and one from g2")
		c.advance(30 * time.Second)
		require.Equal(t, fifoq.Stats{Visible: 6}, q.Stats(), "after the visibility timeout")

		q2 := c.newQueue(t, "dl-stats2.fifo", fifoq.WithContentBasedDeduplication())
		for _, m := range []string{"g1-1", "g1-2", "g1-3", "g2-1", "g3-1"} {
			dlSend(t, q2, fifoq.Message{Body: m, GroupID: m[:2]})
		}
		require.Len(t, dlReceive(t, q2, 4), 4)
		require.Equal(t, fifoq.Stats{Visible: 1, InFlight: 4}, q2.Stats(), "5 messages, receive 4")
	})
}

package fifoq_test

// Tests of retention and delay changes made by SetAttributes, applied to the messages already stored.

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// TestAtRetentionLoweredExpiresAtOnce checks spec 5.3 (scenario 42) and 5.2: a lower retention period applies
// to the messages already stored, so those older than it expire at once, visible, delayed and in flight; the
// younger ones expire when they reach the new period.
func TestAtRetentionLoweredExpiresAtOnce(t *testing.T) {
	t.Parallel()
	for _, k := range atKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			atEachClock(t, func(t *testing.T, c *atClock) {
				q := atNew(t, c, atName("at-ret42", k.fifo), fifoq.WithDelay(15*time.Minute),
					fifoq.WithVisibilityTimeout(time.Hour))
				atSend(t, q, "a", "inflight")
				atSend(t, q, "b", "visible")
				c.advance(15 * time.Minute)
				ds := atRecv(t, q, 1)
				require.Equal(t, []string{"inflight"}, atBodies(ds), "at 15m")
				atSend(t, q, "c", "delayed") // visible at 30m
				c.advance(14 * time.Minute)
				atSend(t, q, "d", "young") // at 29m, visible at 44m
				require.Equal(t, fifoq.Stats{Visible: 1, InFlight: 1, Delayed: 2}, q.Stats(), "at 29m")

				atSet(t, q, func(a *fifoq.Attributes) { a.Retention = 10 * time.Minute })
				require.Equal(t, fifoq.Stats{Delayed: 1}, q.Stats(), "right after the retention became 10m")
				require.Equal(t, []string{"young"}, atStored(q), "inflight and visible are 29m old, delayed 14m")
				require.Empty(t, atRecv(t, q, 10))
				if !k.fifo {
					require.NoError(t, q.Delete(context.Background(), ds[0].ReceiptHandle),
						"5.2: deleting an expired in-flight message succeeds on a standard queue")
				}
				c.advance(10*time.Minute - time.Nanosecond)
				require.Equal(t, []string{"young"}, atStored(q), "young is 10m-1ns old")
				c.advance(time.Nanosecond)
				require.Empty(t, atStored(q), "young is 10m old")
				require.Equal(t, fifoq.Stats{}, q.Stats())
			})
		})
	}
}

// TestAtRetentionRaisedKeepsMessages checks spec 5.3: a higher retention period applies to the messages
// already stored, so those the old period would have expired stay, visible, delayed and in flight.
func TestAtRetentionRaisedKeepsMessages(t *testing.T) {
	t.Parallel()
	for _, k := range atKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			atEachClock(t, func(t *testing.T, c *atClock) {
				q := atNew(t, c, atName("at-ret-up", k.fifo), fifoq.WithDelay(15*time.Minute),
					fifoq.WithVisibilityTimeout(time.Hour), fifoq.WithRetention(30*time.Minute))
				atSend(t, q, "a", "inflight")
				atSend(t, q, "b", "visible")
				c.advance(15 * time.Minute)
				require.Equal(t, []string{"inflight"}, atBodies(atRecv(t, q, 1)), "at 15m") // visible again at 1h15m
				atSend(t, q, "c", "delayed")                                                // visible at 30m
				c.advance(14 * time.Minute)
				require.Equal(t, fifoq.Stats{Visible: 1, InFlight: 1, Delayed: 1}, q.Stats(), "at 29m")

				atSet(t, q, func(a *fifoq.Attributes) { a.Retention = 2 * time.Hour })
				c.advance(time.Minute)
				require.Equal(t, fifoq.Stats{Visible: 2, InFlight: 1}, q.Stats(),
					"at 30m, when the old retention would have expired inflight and visible")
				require.Equal(t, []string{"inflight", "visible", "delayed"}, atStored(q))
				c.advance(45 * time.Minute)
				require.Equal(t, fifoq.Stats{Visible: 3}, q.Stats(), "at 1h15m inflight's visibility timeout ends")
				c.advance(45*time.Minute - time.Nanosecond)
				require.Equal(t, []string{"inflight", "visible", "delayed"}, atStored(q), "at 2h-1ns")
				c.advance(time.Nanosecond)
				require.Equal(t, []string{"delayed"}, atStored(q), "at 2h, the new retention of the first two")
				c.advance(15*time.Minute - time.Nanosecond)
				require.Equal(t, []string{"delayed"}, atStored(q), "at 2h15m-1ns")
				c.advance(time.Nanosecond)
				require.Empty(t, atStored(q), "at 2h15m")
			})
		})
	}
}

// TestAtRetentionStandardDLQ checks spec 5.4 with 5.3: messages moved into a standard dead-letter queue keep
// their original send time, and a new retention period of the DLQ reschedules their expiry, lower or higher,
// visible or in flight. A message sent to the DLQ itself, stored before them but younger, expires later.
func TestAtRetentionStandardDLQ(t *testing.T) {
	t.Parallel()
	const inFlight = 12 * time.Hour // the visibility timeout of the moved message received from the DLQ
	for _, tc := range []struct {
		name          string
		before, after time.Duration // the DLQ's retention
	}{
		{"lowered, moved messages expire 1h later", 4 * atDay, atDay + time.Hour},
		{"lowered, moved messages expire at once", 4 * atDay, 23 * time.Hour},
		{"lowered, moved messages expire after the timeout", 4 * atDay, 2 * atDay},
		{"raised", atDay + time.Hour, 3 * atDay},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			atEachClock(t, func(t *testing.T, c *atClock) {
				ctx := context.Background()
				dlq := atNew(t, c, "at-ret-dlq", fifoq.WithRetention(tc.before))
				src := atNew(t, c, "at-ret-src", fifoq.WithVisibilityTimeout(0), fifoq.WithDeadLetterQueue(dlq, 1))
				atSend(t, src, "", "m1")
				atSend(t, src, "", "m2")
				require.Equal(t, []string{"m1", "m2"}, atBodies(atRecv(t, src, 10)))
				c.advance(atDay)
				atSend(t, dlq, "", "direct")
				require.Empty(t, atRecv(t, src, 10), "both move to the DLQ")
				require.Equal(t, []string{"direct", "m1", "m2"}, atStored(dlq))
				ds := atRecvWith(t, dlq, fifoq.ReceiveOptions{MaxMessages: 10, VisibilityTimeout: inFlight})
				require.Equal(t, []string{"direct", "m1", "m2"}, atBodies(ds))
				require.NoError(t, dlq.ChangeVisibility(ctx, ds[0].ReceiptHandle, 0))
				require.NoError(t, dlq.ChangeVisibility(ctx, ds[2].ReceiptHandle, 0))
				require.Equal(t, fifoq.Stats{Visible: 2, InFlight: 1}, dlq.Stats())
				m1VisibleAt := c.now().Add(inFlight)
				atRequireTime(t, m1VisibleAt, atSnap(t, dlq, "m1").VisibleAt, "m1's VisibleAt")

				atSet(t, dlq, func(a *fifoq.Attributes) { a.Retention = tc.after })
				movedLeft := tc.after - atDay // m1 and m2 were sent a day ago
				elapsed := time.Duration(0)
				at := func(d time.Duration) { // go to d after the change
					c.advance(d - elapsed)
					elapsed = d
				}
				if movedLeft <= 0 {
					require.Equal(t, []string{"direct"}, atStored(dlq), "m1 and m2 are older than the new retention")
					require.Equal(t, fifoq.Stats{Visible: 1}, dlq.Stats())
				} else {
					atRequireTime(t, m1VisibleAt, atSnap(t, dlq, "m1").VisibleAt, "m1's VisibleAt after the change")
					if movedLeft > inFlight {
						at(inFlight - time.Nanosecond)
						require.Equal(t, fifoq.Stats{Visible: 2, InFlight: 1}, dlq.Stats(), "m1 in flight until its timeout")
						at(inFlight)
						require.Equal(t, fifoq.Stats{Visible: 3}, dlq.Stats(), "m1 visible at its timeout")
					}
					at(movedLeft - time.Nanosecond)
					require.Equal(t, []string{"direct", "m1", "m2"}, atStored(dlq), "%v after the change", movedLeft-time.Nanosecond)
					if movedLeft <= inFlight {
						require.Equal(t, fifoq.Stats{Visible: 2, InFlight: 1}, dlq.Stats())
					}
					at(movedLeft)
					require.Equal(t, []string{"direct"}, atStored(dlq), "%v after the change", movedLeft)
					require.Equal(t, fifoq.Stats{Visible: 1}, dlq.Stats())
				}
				at(tc.after - time.Nanosecond)
				require.Equal(t, []string{"direct"}, atStored(dlq), "direct, sent at the change, at its retention-1ns")
				at(tc.after)
				require.Empty(t, atStored(dlq), "direct at its retention")
			})
		})
	}
}

// TestAtDelayChangeStandardKeepsDelayedMessages checks spec 4.6 (scenario 39) on a standard queue: a new queue
// delay applies to new messages only; the delayed ones keep the delay they were sent with, higher or lower.
func TestAtDelayChangeStandardKeepsDelayedMessages(t *testing.T) {
	t.Parallel()
	atEachClock(t, func(t *testing.T, c *atClock) {
		q := atNew(t, c, "at-delay39", fifoq.WithDelay(10*time.Minute), fifoq.WithVisibilityTimeout(time.Hour))
		atSend(t, q, "", "a")
		aAt := c.now().Add(10 * time.Minute)
		c.advance(time.Minute)
		atSet(t, q, func(a *fifoq.Attributes) { a.Delay = 2 * time.Minute })
		atRequireTime(t, aAt, atSnap(t, q, "a").VisibleAt, "a after the delay became 2m")
		atSend(t, q, "", "b") // at 1m, visible at 3m
		atSet(t, q, func(a *fifoq.Attributes) { a.Delay = 0 })
		atRequireTime(t, aAt, atSnap(t, q, "a").VisibleAt, "a after the delay became 0")
		require.Equal(t, fifoq.Stats{Delayed: 2}, q.Stats(), "a cut does not release a or b")
		atSend(t, q, "", "c")
		require.Equal(t, []string{"c"}, atBodies(atRecv(t, q, 10)), "at 1m")
		c.advance(2*time.Minute - time.Nanosecond)
		require.Empty(t, atRecv(t, q, 10), "at 3m-1ns")
		c.advance(time.Nanosecond)
		require.Equal(t, []string{"b"}, atBodies(atRecv(t, q, 10)), "at 3m b's 2m delay ends")
		atSet(t, q, func(a *fifoq.Attributes) { a.Delay = 15 * time.Minute })
		atRequireTime(t, aAt, atSnap(t, q, "a").VisibleAt, "a after the delay became 15m")
		atSend(t, q, "", "d") // at 3m, visible at 18m
		c.advance(7*time.Minute - time.Nanosecond)
		require.Empty(t, atRecv(t, q, 10), "at 10m-1ns")
		c.advance(time.Nanosecond)
		require.Equal(t, []string{"a"}, atBodies(atRecv(t, q, 10)), "at 10m a's original delay ends")
		c.advance(8*time.Minute - time.Nanosecond)
		require.Empty(t, atRecv(t, q, 10), "at 18m-1ns")
		c.advance(time.Nanosecond)
		require.Equal(t, []string{"d"}, atBodies(atRecv(t, q, 10)), "at 18m")
	})
}

// atStep is a receive at a time: the messages it must return, which are then deleted.
type atStep struct {
	at   time.Duration // since the first send
	want []string
}

// TestAtDelayChangeFIFORedelays checks spec 4.6 (scenario 39) on a FIFO queue: a new queue delay applies to
// the delayed messages, counted from their send. A raise keeps them delayed longer; a cut to a time already
// passed makes them visible at once, in group order. New messages get the new delay.
func TestAtDelayChangeFIFORedelays(t *testing.T) {
	t.Parallel()
	// m1 (g1) and x (g2) are sent at 0, m2 (g1) at 1m, all with a delay of 10m; the delay changes at 2m and
	// n (g3) is sent then.
	for _, tc := range []struct {
		name  string
		delay time.Duration
		steps []atStep
	}{
		{"raised to 15m", 15 * time.Minute, []atStep{
			{2 * time.Minute, nil},
			{15*time.Minute - 1, nil}, {15 * time.Minute, []string{"m1", "x"}},
			{16*time.Minute - 1, nil}, {16 * time.Minute, []string{"m2"}},
			{17*time.Minute - 1, nil}, {17 * time.Minute, []string{"n"}},
		}},
		{"cut to 5m", 5 * time.Minute, []atStep{
			{2 * time.Minute, nil},
			{5*time.Minute - 1, nil}, {5 * time.Minute, []string{"m1", "x"}},
			{6*time.Minute - 1, nil}, {6 * time.Minute, []string{"m2"}},
			{7*time.Minute - 1, nil}, {7 * time.Minute, []string{"n"}},
		}},
		{"cut to 90s, passed for m1 and x", 90 * time.Second, []atStep{
			{2 * time.Minute, []string{"m1", "x"}},
			{150*time.Second - 1, nil}, {150 * time.Second, []string{"m2"}},
			{210*time.Second - 1, nil}, {210 * time.Second, []string{"n"}},
		}},
		{"cut to 1m, passed for all", time.Minute, []atStep{
			{2 * time.Minute, []string{"m1", "m2", "x"}},
			{3*time.Minute - 1, nil}, {3 * time.Minute, []string{"n"}},
		}},
		{"cut to 0", 0, []atStep{
			{2 * time.Minute, []string{"m1", "m2", "x", "n"}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			atEachClock(t, func(t *testing.T, c *atClock) {
				q := atNew(t, c, "at-delay39.fifo", fifoq.WithDelay(10*time.Minute), fifoq.WithVisibilityTimeout(time.Hour))
				start := c.now()
				atSend(t, q, "g1", "m1")
				atSend(t, q, "g2", "x")
				c.advance(time.Minute)
				atSend(t, q, "g1", "m2")
				c.advance(time.Minute)
				require.Equal(t, fifoq.Stats{Delayed: 3}, q.Stats(), "at 2m")

				atSet(t, q, func(a *fifoq.Attributes) { a.Delay = tc.delay })
				for body, sentAt := range map[string]time.Duration{"m1": 0, "x": 0, "m2": time.Minute} {
					s := atSnap(t, q, body)
					if due := sentAt + tc.delay; due > 2*time.Minute {
						require.Equal(t, fifoq.StateDelayed, s.State, "%s", body)
						atRequireTime(t, start.Add(due), s.VisibleAt, body+"'s VisibleAt")
					} else {
						require.Equal(t, fifoq.StateVisible, s.State, "%s: its new delay has passed", body)
					}
				}
				atSend(t, q, "g3", "n")
				elapsed := 2 * time.Minute
				for _, st := range tc.steps {
					c.advance(st.at - elapsed)
					elapsed = st.at
					ds := atRecv(t, q, 10)
					want := st.want
					if want == nil {
						want = []string{}
					}
					require.Equal(t, want, atBodies(ds), "at %v", st.at)
					atDelete(t, q, ds...)
				}
				require.Equal(t, fifoq.Stats{}, q.Stats(), "every message was received")
			})
		})
	}
}

// TestAtDelayCutWakesLongPoll checks spec 4.6 with 1.5.2: a cut of a FIFO queue's delay that makes a message
// visible at once returns it to a waiting long poll at once.
func TestAtDelayCutWakesLongPoll(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		q, err := fifoq.New("at-wake.fifo", fifoq.WithDelay(10*time.Minute))
		require.NoError(t, err)
		atSend(t, q, "g", "m")
		type result struct {
			ds  []fifoq.Delivery
			err error
			at  time.Time
		}
		ch := make(chan result, 1)
		start := time.Now()
		go func() {
			ds, err := q.Receive(context.Background(), fifoq.ReceiveOptions{WaitTime: 20 * time.Second})
			ch <- result{ds, err, time.Now()}
		}()
		synctest.Wait()
		select {
		case r := <-ch:
			require.FailNow(t, "the long poll returned before the change", "%v, %v", atBodies(r.ds), r.err)
		default:
		}
		atSet(t, q, func(a *fifoq.Attributes) { a.Delay = 0 })
		r := <-ch // a poll the change did not wake returns empty when its 20s end
		require.NoError(t, r.err)
		require.Equal(t, []string{"m"}, atBodies(r.ds))
		require.Equal(t, time.Duration(0), r.at.Sub(start), "returned at once")
	})
}

package fifoq_test

// Tests of ExplicitZero as a wait time, visibility timeout and delay, and of negative durations.

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// TestAtExplicitZeroWaitTime checks ExplicitZero as ReceiveOptions.WaitTime (spec 1.5.1): a short poll on a
// queue whose receive wait time is 20s, returning at once with nothing, where a WaitTime of 0 waits the 20s.
func TestAtExplicitZeroWaitTime(t *testing.T) {
	t.Parallel()
	for _, k := range atKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				q, err := fifoq.New(atName("at-ez-wait", k.fifo), fifoq.WithReceiveWaitTime(20*time.Second))
				require.NoError(t, err)
				start := time.Now()
				require.Empty(t, atRecvWith(t, q, fifoq.ReceiveOptions{WaitTime: fifoq.ExplicitZero}))
				require.Equal(t, time.Duration(0), time.Since(start), "WaitTime ExplicitZero: no wait")
				require.Empty(t, atRecvWith(t, q, fifoq.ReceiveOptions{}))
				require.Equal(t, 20*time.Second, time.Since(start), "WaitTime 0: the queue's 20s")
			})
		})
	}
}

// TestAtExplicitZeroWaitTimeManualClock checks the same on a manual clock: the short poll returns without
// waiting on the clock. The receive runs in a goroutine of a synctest bubble, so a poll that waits is seen
// (by synctest.Wait) and released rather than blocking the test.
func TestAtExplicitZeroWaitTimeManualClock(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		clk := fifoq.NewManualClock(atStart)
		q, err := fifoq.New("at-ez-wait-manual", fifoq.WithClock(clk), fifoq.WithReceiveWaitTime(20*time.Second))
		require.NoError(t, err)
		type result struct {
			ds  []fifoq.Delivery
			err error
		}
		ch := make(chan result, 1)
		go func() {
			ds, err := q.Receive(context.Background(), fifoq.ReceiveOptions{WaitTime: fifoq.ExplicitZero, MaxMessages: 10})
			ch <- result{ds, err}
		}()
		synctest.Wait()
		var r result
		select {
		case r = <-ch:
		default:
			t.Errorf("the receive with WaitTime ExplicitZero waits on the clock (%d timers)", clk.Timers())
			clk.Advance(20 * time.Second)
			r = <-ch
		}
		require.NoError(t, r.err)
		require.Empty(t, r.ds)
		require.Zero(t, clk.Timers(), "a short poll leaves no timer")
		atRequireTime(t, atStart, clk.Now(), "the clock")
	})
}

// TestAtExplicitZeroVisibilityTimeout checks ExplicitZero as ReceiveOptions.VisibilityTimeout (spec 1.2.7,
// 1.2.8): the received message stays visible, and the next receive gets it again with receive count 2.
func TestAtExplicitZeroVisibilityTimeout(t *testing.T) {
	t.Parallel()
	for _, k := range atKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			c := atManual()
			q := atNew(t, c, atName("at-ez-vt", k.fifo)) // visibility timeout 30s
			atSend(t, q, "g", "m")
			ds := atRecvWith(t, q, fifoq.ReceiveOptions{VisibilityTimeout: fifoq.ExplicitZero})
			require.Equal(t, []string{"m"}, atBodies(ds))
			require.Equal(t, 1, ds[0].ReceiveCount)
			require.Equal(t, fifoq.Stats{Visible: 1}, q.Stats(), "received with an explicit 0: still visible")
			ds = atRecv(t, q, 10)
			require.Equal(t, []string{"m"}, atBodies(ds), "the next receive gets it again")
			require.Equal(t, 2, ds[0].ReceiveCount)
			require.Equal(t, fifoq.Stats{InFlight: 1}, q.Stats(), "received with the queue's 30s")
			atRequireTime(t, c.now().Add(30*time.Second), atSnap(t, q, "m").VisibleAt, "VisibleAt")
		})
	}
}

// TestAtExplicitZeroDelayStandard checks ExplicitZero as a standard queue's Message.Delay (spec 4.2, scenario
// 38): with a queue delay of 10s, a message with an explicit 0 is visible at once, one with 5s at 5s, and one
// with 0 (omitted) at 10s; the same through SendBatch.
func TestAtExplicitZeroDelayStandard(t *testing.T) {
	t.Parallel()
	for _, batch := range []bool{false, true} {
		t.Run(map[bool]string{false: "Send", true: "SendBatch"}[batch], func(t *testing.T) {
			t.Parallel()
			atEachClock(t, func(t *testing.T, c *atClock) {
				q := atNew(t, c, "at-ez-delay", fifoq.WithDelay(10*time.Second))
				ms := []fifoq.Message{
					{Body: "explicit0", Delay: fifoq.ExplicitZero},
					{Body: "5s", Delay: 5 * time.Second},
					{Body: "omitted"},
				}
				if batch {
					res, err := q.SendBatch(context.Background(), ms)
					require.NoError(t, err)
					require.Len(t, res, 3)
				} else {
					for _, m := range ms {
						atSendMsg(t, q, m)
					}
				}
				require.Equal(t, fifoq.Stats{Visible: 1, Delayed: 2}, q.Stats())
				for s := range q.Messages() {
					require.GreaterOrEqual(t, s.Delay, time.Duration(0), "%s: ExplicitZero is a request, shown as 0", s.Body)
				}
				got := atRecv(t, q, 10)
				require.Equal(t, []string{"explicit0"}, atBodies(got), "at 0")
				require.Zero(t, got[0].Delay, "a Delivery shows no message timer, not ExplicitZero")
				c.advance(5*time.Second - time.Nanosecond)
				require.Empty(t, atRecv(t, q, 10), "at 5s-1ns")
				c.advance(time.Nanosecond)
				require.Equal(t, []string{"5s"}, atBodies(atRecv(t, q, 10)), "at 5s")
				c.advance(5*time.Second - time.Nanosecond)
				require.Empty(t, atRecv(t, q, 10), "at 10s-1ns")
				c.advance(time.Nanosecond)
				require.Equal(t, []string{"omitted"}, atBodies(atRecv(t, q, 10)), "at 10s, the queue delay")
			})
		})
	}
}

// TestAtExplicitZeroDelayFIFO checks spec 4.4 and 4.3: a FIFO queue accepts an explicit 0 as Message.Delay and
// applies its queue delay, and still rejects a delay above 0.
func TestAtExplicitZeroDelayFIFO(t *testing.T) {
	t.Parallel()
	atEachClock(t, func(t *testing.T, c *atClock) {
		ctx := context.Background()
		q := atNew(t, c, "at-ez-delay.fifo", fifoq.WithDelay(10*time.Second), fifoq.WithContentBasedDeduplication())
		atSendMsg(t, q, fifoq.Message{Body: "explicit0", GroupID: "g", Delay: fifoq.ExplicitZero})
		_, err := q.SendBatch(ctx, []fifoq.Message{{Body: "batched", GroupID: "g", Delay: fifoq.ExplicitZero}})
		require.NoError(t, err)
		atSendMsg(t, q, fifoq.Message{Body: "omitted", GroupID: "g"})
		_, err = q.Send(ctx, fifoq.Message{Body: "5s", GroupID: "g", Delay: 5 * time.Second})
		atRequireRejected(t, err, fifoq.ErrInvalidDelay, "FIFO Send with Delay 5s")
		require.Equal(t, fifoq.Stats{Delayed: 3}, q.Stats(), "the queue delay applies to all three")
		for s := range q.Messages() {
			require.Zero(t, s.Delay, "%s: ExplicitZero is a request, shown as 0", s.Body)
		}
		c.advance(10*time.Second - time.Nanosecond)
		require.Empty(t, atRecv(t, q, 10), "at 10s-1ns")
		c.advance(time.Nanosecond)
		require.Equal(t, []string{"explicit0", "batched", "omitted"}, atBodies(atRecv(t, q, 10)), "at 10s")
	})
}

// TestAtNegativeDurationsRejected checks that ExplicitZero is the only negative duration accepted: other
// negative delays, wait times and visibility timeouts are rejected as before (spec 4.1, 4.2, 1.5.1, 1.2.2),
// and change nothing; ExplicitZero is no queue option value.
func TestAtNegativeDurationsRejected(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, k := range atKinds {
		for _, d := range []time.Duration{-time.Nanosecond, -time.Second, fifoq.ExplicitZero + 1} {
			t.Run(fmt.Sprintf("%s/%d", k.name, d), func(t *testing.T) {
				t.Parallel()
				q := atNew(t, atManual(), atName("at-neg", k.fifo))
				m := atMsg(q, "g", "m")
				m.Delay = d
				_, err := q.Send(ctx, m)
				atRequireRejected(t, err, fifoq.ErrInvalidDelay, fmt.Sprintf("Send with Delay %d", d))
				require.Empty(t, atStored(q))
				atSend(t, q, "g", "stored")
				_, err = q.Receive(ctx, fifoq.ReceiveOptions{WaitTime: d})
				atRequireRejected(t, err, fifoq.ErrInvalidWaitTime, fmt.Sprintf("Receive with WaitTime %d", d))
				_, err = q.Receive(ctx, fifoq.ReceiveOptions{VisibilityTimeout: d})
				atRequireRejected(t, err, fifoq.ErrInvalidVisibilityTimeout, fmt.Sprintf("Receive with VisibilityTimeout %d", d))
				require.Equal(t, fifoq.Stats{Visible: 1}, q.Stats(), "rejected receives take nothing")
			})
		}
	}
	for name, opt := range map[string]fifoq.Option{
		"WithDelay":             fifoq.WithDelay(fifoq.ExplicitZero),
		"WithVisibilityTimeout": fifoq.WithVisibilityTimeout(fifoq.ExplicitZero),
		"WithReceiveWaitTime":   fifoq.WithReceiveWaitTime(fifoq.ExplicitZero),
	} {
		q, err := fifoq.New("at-neg-opt", opt)
		require.Nil(t, q, name)
		atRequireRejected(t, err, fifoq.ErrInvalidQueueAttribute, name+"(ExplicitZero)")
	}
}

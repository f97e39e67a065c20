package fifoq_test

// Tests of the No... fields of a call (NoWaitTime, NoVisibilityTimeout, NoDelay: a zero whatever the queue's
// setting, where a zero duration means the queue's setting), and of negative durations.

import (
	"context"
	"fmt"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// TestAtNoWaitTime checks ReceiveOptions.NoWaitTime (spec 1.5.1): a short poll on a
// queue whose receive wait time is 20s, returning at once with nothing, where a WaitTime of 0 waits the 20s.
func TestAtNoWaitTime(t *testing.T) {
	t.Parallel()
	for _, k := range atKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				q, err := fifoq.New(atName("at-ez-wait", k.fifo), fifoq.WithReceiveWaitTime(20*time.Second))
				require.NoError(t, err)
				start := time.Now()
				require.Empty(t, atRecvWith(t, q, fifoq.ReceiveOptions{NoWaitTime: true}))
				require.Equal(t, time.Duration(0), time.Since(start), "NoWaitTime: no wait")
				require.Empty(t, atRecvWith(t, q, fifoq.ReceiveOptions{}))
				require.Equal(t, 20*time.Second, time.Since(start), "WaitTime 0: the queue's 20s")
			})
		})
	}
}

// TestAtNoWaitTimeManualClock checks the same on a manual clock: the short poll returns without
// waiting on the clock. The receive runs in a goroutine of a synctest bubble, so a poll that waits is seen
// (by synctest.Wait) and released rather than blocking the test.
func TestAtNoWaitTimeManualClock(t *testing.T) {
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
			ds, err := q.Receive(context.Background(), fifoq.ReceiveOptions{NoWaitTime: true, MaxMessages: 10})
			ch <- result{ds, err}
		}()
		synctest.Wait()
		var r result
		select {
		case r = <-ch:
		default:
			t.Errorf("the receive with NoWaitTime waits on the clock (%d timers)", clk.Timers())
			clk.Advance(20 * time.Second)
			r = <-ch
		}
		require.NoError(t, r.err)
		require.Empty(t, r.ds)
		require.Zero(t, clk.Timers(), "a short poll leaves no timer")
		atRequireTime(t, atStart, clk.Now(), "the clock")
	})
}

// TestAtNoVisibilityTimeout checks ReceiveOptions.NoVisibilityTimeout (spec 1.2.7,
// 1.2.8): the received message stays visible, and the next receive gets it again with receive count 2.
func TestAtNoVisibilityTimeout(t *testing.T) {
	t.Parallel()
	for _, k := range atKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			c := atManual()
			q := atNew(t, c, atName("at-ez-vt", k.fifo)) // visibility timeout 30s
			atSend(t, q, "g", "m")
			ds := atRecvWith(t, q, fifoq.ReceiveOptions{NoVisibilityTimeout: true})
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

// TestAtNoDelayStandard checks a standard queue's Message.NoDelay (spec 4.2, scenario
// 38): with a queue delay of 10s, a message with NoDelay is visible at once, one with 5s at 5s, and one
// with 0 (omitted) at 10s; the same through SendBatch.
func TestAtNoDelayStandard(t *testing.T) {
	t.Parallel()
	for _, batch := range []bool{false, true} {
		t.Run(map[bool]string{false: "Send", true: "SendBatch"}[batch], func(t *testing.T) {
			t.Parallel()
			atEachClock(t, func(t *testing.T, c *atClock) {
				q := atNew(t, c, "at-ez-delay", fifoq.WithDelay(10*time.Second))
				ms := []fifoq.Message{
					{Body: "explicit0", NoDelay: true},
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
					require.GreaterOrEqual(t, s.Delay, time.Duration(0), "%s: NoDelay is a request, shown as a delay of 0", s.Body)
				}
				got := atRecv(t, q, 10)
				require.Equal(t, []string{"explicit0"}, atBodies(got), "at 0")
				require.Zero(t, got[0].Delay, "a Delivery shows no message timer")
				require.False(t, got[0].NoDelay, "a Delivery does not carry NoDelay, a request")
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

// TestAtNoDelayFIFO checks spec 4.4 and 4.3: a FIFO queue accepts Message.NoDelay and
// applies its queue delay, and still rejects a delay above 0.
func TestAtNoDelayFIFO(t *testing.T) {
	t.Parallel()
	atEachClock(t, func(t *testing.T, c *atClock) {
		ctx := context.Background()
		q := atNew(t, c, "at-ez-delay.fifo", fifoq.WithDelay(10*time.Second), fifoq.WithContentBasedDeduplication())
		atSendMsg(t, q, fifoq.Message{Body: "explicit0", GroupID: "g", NoDelay: true})
		_, err := q.SendBatch(ctx, []fifoq.Message{{Body: "batched", GroupID: "g", NoDelay: true}})
		require.NoError(t, err)
		atSendMsg(t, q, fifoq.Message{Body: "omitted", GroupID: "g"})
		_, err = q.Send(ctx, fifoq.Message{Body: "5s", GroupID: "g", Delay: 5 * time.Second})
		atRequireRejected(t, err, fifoq.ErrInvalidDelay, "FIFO Send with Delay 5s")
		require.Equal(t, fifoq.Stats{Delayed: 3}, q.Stats(), "the queue delay applies to all three")
		for s := range q.Messages() {
			require.Zero(t, s.Delay, "%s: NoDelay is a request, shown as a delay of 0", s.Body)
		}
		c.advance(10*time.Second - time.Nanosecond)
		require.Empty(t, atRecv(t, q, 10), "at 10s-1ns")
		c.advance(time.Nanosecond)
		require.Equal(t, []string{"explicit0", "batched", "omitted"}, atBodies(atRecv(t, q, 10)), "at 10s")
	})
}

// TestAtNegativeDurationsRejected checks that negative delays, wait times and visibility timeouts are
// rejected (spec 4.1, 4.2, 1.5.1, 1.2.2), and change nothing, as are queue options of the most negative
// duration, and a duration given with its No... field.
func TestAtNegativeDurationsRejected(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, k := range atKinds {
		for _, d := range []time.Duration{-time.Nanosecond, -time.Second, math.MinInt64} {
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
		"WithDelay":             fifoq.WithDelay(math.MinInt64),
		"WithVisibilityTimeout": fifoq.WithVisibilityTimeout(math.MinInt64),
		"WithReceiveWaitTime":   fifoq.WithReceiveWaitTime(math.MinInt64),
	} {
		q, err := fifoq.New("at-neg-opt", opt)
		require.Nil(t, q, name)
		atRequireRejected(t, err, fifoq.ErrInvalidQueueAttribute, name+"(MinInt64)")
	}
}

// TestAtNoFieldWithDuration checks that a duration given with its No... field is refused, as a call that
// asks for a zero and another duration at once, and changes nothing.
func TestAtNoFieldWithDuration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := atNew(t, atManual(), "at-no-with")
	atSend(t, q, "", "stored")
	_, err := q.Receive(ctx, fifoq.ReceiveOptions{NoWaitTime: true, WaitTime: time.Second})
	atRequireRejected(t, err, fifoq.ErrInvalidWaitTime, "NoWaitTime with a WaitTime")
	_, err = q.Receive(ctx, fifoq.ReceiveOptions{NoVisibilityTimeout: true, VisibilityTimeout: time.Second})
	atRequireRejected(t, err, fifoq.ErrInvalidVisibilityTimeout, "NoVisibilityTimeout with a VisibilityTimeout")
	require.Equal(t, fifoq.Stats{Visible: 1}, q.Stats(), "rejected receives take nothing")
	_, err = q.Send(ctx, fifoq.Message{Body: "m", NoDelay: true, Delay: time.Second})
	atRequireRejected(t, err, fifoq.ErrInvalidDelay, "NoDelay with a Delay")
	require.Error(t, fifoq.ReceiveOptions{NoWaitTime: true, WaitTime: time.Second}.Check())
	require.NoError(t, fifoq.ReceiveOptions{NoWaitTime: true, NoVisibilityTimeout: true}.Check())
}

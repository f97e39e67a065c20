package fifoq_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/stretchr/testify/require"
)

// Tests of spec 1.5 (long polling). Shared helpers are in fifo_test.go.

// fvPollResult is what a long poll run in its own goroutine returned, and the queue's time when it did.
type fvPollResult struct {
	ds  []fifoq.Delivery
	err error
	at  time.Time
}

// fvStartPoll runs q.Receive(ctx, o) in a new goroutine and delivers its result on the returned channel.
func fvStartPoll(ctx context.Context, c fvClock, q *fifoq.Queue, o fifoq.ReceiveOptions) <-chan fvPollResult {
	ch := make(chan fvPollResult, 1)
	go fvPollInto(ctx, c, q, o, ch)
	return ch
}

func fvPollInto(ctx context.Context, c fvClock, q *fifoq.Queue, o fifoq.ReceiveOptions, ch chan<- fvPollResult) {
	ds, err := q.Receive(ctx, o)
	ch <- fvPollResult{ds: ds, err: err, at: c.now()}
}

// fvRequirePending asserts that no poll result has arrived on ch.
func fvRequirePending(t *testing.T, ch <-chan fvPollResult, why string) {
	t.Helper()
	select {
	case r := <-ch:
		require.FailNow(t, "long poll returned early", "%s: got %v, err %v", why, fvBodies(r.ds), r.err)
	default:
	}
}

// TestLongPollWakes checks spec 1.5.2 (scenario 54 and its variants): a waiting receive returns as soon as a
// message is available, whatever made it available, with what is available (it does not wait to fill
// MaxMessages).
func TestLongPollWakes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		label string
		name  string
		// setup runs before the poll starts, wake 2 s after; wake returns how long after the 2 s the
		// message is due.
		setup func(t *testing.T, q *fifoq.Queue) []fifoq.Delivery
		wake  func(t *testing.T, c fvClock, q *fifoq.Queue, ds []fifoq.Delivery) time.Duration
		want  []string
	}{
		{
			label: "send", name: "std", // scenario 54
			wake: func(t *testing.T, _ fvClock, q *fifoq.Queue, _ []fifoq.Delivery) time.Duration {
				fvSend(t, q, "", "new")
				return 0
			},
			want: []string{"new"},
		},
		{
			label: "send", name: "q.fifo",
			wake: func(t *testing.T, _ fvClock, q *fifoq.Queue, _ []fifoq.Delivery) time.Duration {
				fvSend(t, q, "g", "new")
				return 0
			},
			want: []string{"new"},
		},
		{
			label: "ChangeVisibility 0", name: "std",
			setup: func(t *testing.T, q *fifoq.Queue) []fifoq.Delivery {
				fvSend(t, q, "", "m")
				return fvRecvN(t, q, 1)
			},
			wake: func(t *testing.T, _ fvClock, q *fifoq.Queue, ds []fifoq.Delivery) time.Duration {
				require.NoError(t, q.ChangeVisibility(context.Background(), ds[0].ReceiptHandle, 0))
				return 0
			},
			want: []string{"m"},
		},
		{
			label: "ChangeVisibility 0", name: "q.fifo",
			setup: func(t *testing.T, q *fifoq.Queue) []fifoq.Delivery {
				fvSend(t, q, "g", "m1")
				fvSend(t, q, "g", "m2")
				return fvRecvN(t, q, 1)
			},
			wake: func(t *testing.T, _ fvClock, q *fifoq.Queue, ds []fifoq.Delivery) time.Duration {
				require.NoError(t, q.ChangeVisibility(context.Background(), ds[0].ReceiptHandle, 0))
				return 0
			},
			want: []string{"m1", "m2"},
		},
		{
			label: "visibility timeout ends", name: "std",
			setup: func(t *testing.T, q *fifoq.Queue) []fifoq.Delivery {
				fvSend(t, q, "", "m")
				return fvRecv(t, q, fifoq.ReceiveOptions{VisibilityTimeout: 5 * time.Second})
			},
			wake: func(t *testing.T, c fvClock, _ *fifoq.Queue, _ []fifoq.Delivery) time.Duration {
				c.advance(3 * time.Second)
				return 3 * time.Second
			},
			want: []string{"m"},
		},
		{
			label: "visibility timeout ends", name: "q.fifo",
			setup: func(t *testing.T, q *fifoq.Queue) []fifoq.Delivery {
				fvSend(t, q, "g", "m1")
				fvSend(t, q, "g", "m2")
				return fvRecv(t, q, fifoq.ReceiveOptions{VisibilityTimeout: 5 * time.Second})
			},
			wake: func(t *testing.T, c fvClock, _ *fifoq.Queue, _ []fifoq.Delivery) time.Duration {
				c.advance(3 * time.Second)
				return 3 * time.Second
			},
			want: []string{"m1", "m2"},
		},
		{
			label: "delete unblocks group", name: "q.fifo", // spec 2.9, 2.10
			setup: func(t *testing.T, q *fifoq.Queue) []fifoq.Delivery {
				fvSend(t, q, "g", "m1")
				ds := fvRecvN(t, q, 1)
				fvSend(t, q, "g", "m2")
				fvSend(t, q, "g", "m3")
				return ds
			},
			wake: func(t *testing.T, _ fvClock, q *fifoq.Queue, ds []fifoq.Delivery) time.Duration {
				require.NoError(t, q.Delete(context.Background(), ds[0].ReceiptHandle))
				return 0
			},
			want: []string{"m2", "m3"},
		},
	} {
		t.Run(tc.name+"/"+tc.label, func(t *testing.T) {
			t.Parallel()
			fvEachClock(t, func(t *testing.T, c fvClock) {
				q := fvNew(t, c, tc.name, fifoq.WithVisibilityTimeout(30*time.Second))
				var ds []fifoq.Delivery
				if tc.setup != nil {
					ds = tc.setup(t, q)
				}
				start := c.now()
				poll := fvStartPoll(context.Background(), c, q, fifoq.ReceiveOptions{MaxMessages: 10, WaitTime: 20 * time.Second})
				c.waitPolls(1)
				c.advance(2 * time.Second)
				fvRequirePending(t, poll, "nothing available yet at 2s")
				after := tc.wake(t, c, q, ds)
				r := <-poll
				require.NoError(t, r.err)
				require.Equal(t, tc.want, fvBodies(r.ds))
				require.Equal(t, 2*time.Second+after, r.at.Sub(start), "the poll returns as soon as the message is available")
			})
		})
	}
}

// TestLongPollWakesWhenShortenedTimeoutEnds checks spec 1.5.2 with 1.2.4: a long poll that started while a
// message's visibility timeout ended after the poll's wait returns when a ChangeVisibility made it end
// sooner. With a ManualClock the poll, woken by the change, sets its timer again from a fresh reading, so an
// Advance that races with it does not make it late.
func TestLongPollWakesWhenShortenedTimeoutEnds(t *testing.T) {
	t.Parallel()
	for _, name := range fvQueueNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fvEachClock(t, func(t *testing.T, c fvClock) {
				q := fvNew(t, c, name, fifoq.WithVisibilityTimeout(time.Minute))
				fvSend(t, q, "g", "m")
				h := fvOnly(t, fvRecvN(t, q, 1)).ReceiptHandle
				start := c.now()
				poll := fvStartPoll(context.Background(), c, q, fifoq.ReceiveOptions{WaitTime: 20 * time.Second})
				c.waitPolls(1)
				c.advance(2 * time.Second)
				require.NoError(t, q.ChangeVisibility(context.Background(), h, 5*time.Second))
				c.advance(5*time.Second - time.Nanosecond)
				fvRequirePending(t, poll, "the message is due at 7s")
				c.advance(time.Nanosecond)
				r := <-poll
				require.NoError(t, r.err)
				require.Equal(t, []string{"m"}, fvBodies(r.ds))
				require.Equal(t, 7*time.Second, r.at.Sub(start))
			})
		})
	}
}

// TestLongPollEmptyWhenWaitEnds checks spec 1.5.1 and 1.5.2: with nothing to receive, a long poll returns no
// messages and no error exactly when its wait ends (the receive's, or else the queue's receive wait time),
// and not before. On FIFO, a visible message behind an in-flight one does not count (spec 2.8).
func TestLongPollEmptyWhenWaitEnds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		label string
		name  string
		opts  []fifoq.Option
		wait  time.Duration // on the receive
		want  time.Duration
		fill  func(t *testing.T, q *fifoq.Queue)
	}{
		{label: "receive wait", name: "std", wait: 20 * time.Second, want: 20 * time.Second},
		{label: "receive wait", name: "q.fifo", wait: 20 * time.Second, want: 20 * time.Second},
		{label: "short receive wait", name: "std", wait: time.Second, want: time.Second},
		{label: "queue wait", name: "std", opts: []fifoq.Option{fifoq.WithReceiveWaitTime(10 * time.Second)}, want: 10 * time.Second},
		{label: "queue wait", name: "q.fifo", opts: []fifoq.Option{fifoq.WithReceiveWaitTime(10 * time.Second)}, want: 10 * time.Second},
		{
			label: "blocked group", name: "q.fifo", wait: 20 * time.Second, want: 20 * time.Second,
			fill: func(t *testing.T, q *fifoq.Queue) {
				fvSend(t, q, "g", "m1")
				fvOnly(t, fvRecvN(t, q, 1))
				fvSend(t, q, "g", "m2")
			},
		},
	} {
		t.Run(tc.name+"/"+tc.label, func(t *testing.T) {
			t.Parallel()
			fvEachClock(t, func(t *testing.T, c fvClock) {
				q := fvNew(t, c, tc.name, append([]fifoq.Option{fifoq.WithVisibilityTimeout(time.Minute)}, tc.opts...)...)
				if tc.fill != nil {
					tc.fill(t, q)
				}
				start := c.now()
				poll := fvStartPoll(context.Background(), c, q, fifoq.ReceiveOptions{MaxMessages: 10, WaitTime: tc.wait})
				c.waitPolls(1)
				c.advance(tc.want - time.Nanosecond)
				fvRequirePending(t, poll, "the wait has not ended")
				c.advance(time.Nanosecond)
				r := <-poll
				require.NoError(t, r.err)
				require.Empty(t, fvBodies(r.ds))
				require.Equal(t, tc.want, r.at.Sub(start))
			})
		})
	}
}

// TestLongPollContextDone checks spec 1.5 as fifoq's API states it: a long poll returns ctx's error at once
// when ctx is done, takes no message, and a receive with a done ctx returns its error without receiving.
func TestLongPollContextDone(t *testing.T) {
	t.Parallel()
	for _, name := range fvQueueNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fvEachClock(t, func(t *testing.T, c fvClock) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				q := fvNew(t, c, name)
				start := c.now()
				poll := fvStartPoll(ctx, c, q, fifoq.ReceiveOptions{WaitTime: 20 * time.Second})
				c.waitPolls(1)
				c.advance(2 * time.Second)
				fvRequirePending(t, poll, "ctx is live")
				cancel()
				r := <-poll
				require.ErrorIs(t, r.err, context.Canceled)
				require.Empty(t, r.ds)
				require.Equal(t, 2*time.Second, r.at.Sub(start), "returns when ctx is done, not at the end of the wait")

				fvSend(t, q, "g", "m")
				ds, err := q.Receive(ctx, fifoq.ReceiveOptions{WaitTime: 20 * time.Second})
				require.ErrorIs(t, err, context.Canceled, "a receive with a done ctx")
				require.Empty(t, ds)
				require.Equal(t, fifoq.Stats{Visible: 1}, q.Stats(), "nothing was received")
				require.Equal(t, "m", fvOnly(t, fvRecvN(t, q, 1)).Body)
			})
		})
	}
}

// TestLongPollCancelledPollPassesMessageOn checks spec 1.5.2 with concurrent polls: when one of two waiting
// polls is cancelled, a message sent afterwards still wakes the other at once.
func TestLongPollCancelledPollPassesMessageOn(t *testing.T) {
	t.Parallel()
	fvEachClock(t, func(t *testing.T, c fvClock) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		q := fvNew(t, c, "pass.fifo")
		start := c.now()
		first := fvStartPoll(ctx, c, q, fifoq.ReceiveOptions{WaitTime: 20 * time.Second})
		c.waitPolls(1)
		second := fvStartPoll(context.Background(), c, q, fifoq.ReceiveOptions{WaitTime: 20 * time.Second})
		c.waitPolls(2)
		c.advance(time.Second)
		cancel()
		r := <-first
		require.ErrorIs(t, r.err, context.Canceled)
		fvSend(t, q, "g", "m")
		r = <-second
		require.NoError(t, r.err)
		require.Equal(t, []string{"m"}, fvBodies(r.ds))
		require.Equal(t, time.Second, r.at.Sub(start))
	})
}

// TestLongPollConcurrentDistinct checks spec 1.5.2 with several waiting receives: messages that arrive are
// shared out, each delivered to exactly one poll, and every poll that can get one returns at once.
func TestLongPollConcurrentDistinct(t *testing.T) {
	t.Parallel()
	for _, name := range fvQueueNames {
		t.Run(name+"/batch", func(t *testing.T) {
			t.Parallel()
			fvEachClock(t, func(t *testing.T, c fvClock) {
				q := fvNew(t, c, name)
				start := c.now()
				const n = 3
				results := make(chan fvPollResult, n)
				for range n {
					go fvPollInto(context.Background(), c, q, fifoq.ReceiveOptions{MaxMessages: 1, WaitTime: 20 * time.Second}, results)
				}
				c.waitPolls(n)
				c.advance(2 * time.Second)
				ms := make([]fifoq.Message, n)
				for i := range ms {
					ms[i] = fifoq.Message{Body: fmt.Sprintf("m%d", i), GroupID: fmt.Sprintf("g%d", i)}
					if q.FIFO() {
						ms[i].DeduplicationID = ms[i].Body
					}
				}
				_, err := q.SendBatch(context.Background(), ms)
				require.NoError(t, err)
				seen := map[string]bool{}
				for range n {
					r := <-results
					require.NoError(t, r.err)
					d := fvOnly(t, r.ds)
					require.False(t, seen[d.MessageID], "%s delivered twice", d.Body)
					seen[d.MessageID] = true
					require.Equal(t, 2*time.Second, r.at.Sub(start), "%s", d.Body)
				}
				require.Equal(t, fifoq.Stats{InFlight: n}, q.Stats())
			})
		})
		t.Run(name+"/one by one", func(t *testing.T) {
			t.Parallel()
			fvEachClock(t, func(t *testing.T, c fvClock) {
				q := fvNew(t, c, name)
				start := c.now()
				const n = 3
				results := make(chan fvPollResult, n)
				for range n {
					go fvPollInto(context.Background(), c, q, fifoq.ReceiveOptions{MaxMessages: 10, WaitTime: 20 * time.Second}, results)
				}
				c.waitPolls(n)
				seen := map[string]bool{}
				for i := range n {
					c.advance(time.Second)
					fvSend(t, q, fmt.Sprintf("g%d", i), fmt.Sprintf("m%d", i))
					r := <-results
					require.NoError(t, r.err)
					d := fvOnly(t, r.ds)
					require.Equal(t, fmt.Sprintf("m%d", i), d.Body)
					require.False(t, seen[d.MessageID], "%s delivered twice", d.Body)
					seen[d.MessageID] = true
					require.Equal(t, time.Duration(i+1)*time.Second, r.at.Sub(start))
					c.waitPolls(n - i - 1)
					select {
					case r := <-results:
						require.FailNow(t, "a second poll returned", "after send %d: %v, err %v", i, fvBodies(r.ds), r.err)
					default:
					}
				}
			})
		})
	}
}

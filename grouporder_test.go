package fifoq_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/stretchr/testify/require"
)

// The order between FIFO groups (spec 2.12): by default a group is served in the order it became available,
// so a group whose messages come back waits behind the groups already waiting; with GroupOrderOldestMessage
// the group whose oldest message was sent first comes first. Each scenario runs on both orders and asserts
// the exact order of each. Every unexported top-level name starts with "go".

// goOrders are the group orders, each scenario's expectation per order.
type goOrders struct{ available, oldest []string }

func (w goOrders) of(o fifoq.GroupOrder) []string {
	if o == fifoq.GroupOrderOldestMessage {
		return w.oldest
	}
	return w.available
}

// goEachOrder runs f on both group orders, each on both clocks.
func goEachOrder(t *testing.T, f func(t *testing.T, c fvClock, order fifoq.GroupOrder)) {
	t.Helper()
	for _, order := range []fifoq.GroupOrder{fifoq.GroupOrderAvailable, fifoq.GroupOrderOldestMessage} {
		t.Run(order.String(), func(t *testing.T) {
			fvEachClock(t, func(t *testing.T, c fvClock) { f(t, c, order) })
		})
	}
}

// goSendAll sends each "group-body" pair's body to its group.
func goSendAll(t *testing.T, q *fifoq.Queue, msgs ...[2]string) {
	t.Helper()
	for _, m := range msgs {
		fvSend(t, q, m[0], m[1])
	}
}

// goVT0 receives up to n messages with a visibility timeout of 0: they stay visible.
func goVT0(t *testing.T, q *fifoq.Queue, n int) []fifoq.Delivery {
	t.Helper()
	return fvRecv(t, q, fifoq.ReceiveOptions{MaxMessages: n, NoVisibilityTimeout: true})
}

// TestGroupOrderRecordedOnAWS replays the three exchanges recorded on AWS (spec 2.12) and checks the default
// order gives exactly AWS's answers, and the oldest-message order its own.
func TestGroupOrderRecordedOnAWS(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, c fvClock, order fifoq.GroupOrder) []string // returns the last receive
		want goOrders
	}{
		{
			name: "receive 3 then 10 with VT 0",
			run: func(t *testing.T, c fvClock, order fifoq.GroupOrder) []string {
				q := fvNew(t, c, "aws-a.fifo", fifoq.WithGroupOrder(order))
				goSendAll(t, q, [2]string{"g1", "g1-m1"}, [2]string{"g2", "g2-m1"}, [2]string{"g2", "g2-m2"},
					[2]string{"g3", "g3-m1"}, [2]string{"g1", "g1-m2"})
				require.Equal(t, []string{"g1-m1", "g1-m2", "g2-m1"}, fvBodies(goVT0(t, q, 3)))
				return fvBodies(goVT0(t, q, 10))
			},
			want: goOrders{
				available: []string{"g3-m1", "g1-m1", "g1-m2", "g2-m1", "g2-m2"},
				oldest:    []string{"g1-m1", "g1-m2", "g2-m1", "g2-m2", "g3-m1"},
			},
		},
		{
			name: "change visibility to 1s",
			run: func(t *testing.T, c fvClock, order fifoq.GroupOrder) []string {
				q := fvNew(t, c, "aws-b.fifo", fifoq.WithGroupOrder(order))
				goSendAll(t, q, [2]string{"g1", "g1-m1"}, [2]string{"g1", "g1-m2"}, [2]string{"g2", "g2-m1"})
				ds := fvRecvN(t, q, 2)
				require.Equal(t, []string{"g1-m1", "g1-m2"}, fvBodies(ds))
				require.NoError(t, q.ChangeVisibility(context.Background(), ds[0].ReceiptHandle, time.Second))
				c.advance(2 * time.Second)
				return fvBodies(fvRecvN(t, q, 3))
			},
			want: goOrders{available: []string{"g2-m1", "g1-m1"}, oldest: []string{"g1-m1", "g2-m1"}},
		},
		{
			name: "visibility timeout shared in group",
			run: func(t *testing.T, c fvClock, order fifoq.GroupOrder) []string {
				q := fvNew(t, c, "aws-c.fifo", fifoq.WithGroupOrder(order), fifoq.WithVisibilityTimeout(time.Second))
				goSendAll(t, q, [2]string{"g1", "g1-m1"}, [2]string{"g1", "g1-m2"}, [2]string{"g1", "g1-m3"},
					[2]string{"g1", "g1-m4"}, [2]string{"g2", "g2-m1"}, [2]string{"g3", "g3-m1"})
				require.Equal(t, []string{"g1-m1", "g1-m2"}, fvBodies(fvRecvN(t, q, 2)))
				require.Equal(t, []string{"g2-m1"}, fvBodies(fvRecvN(t, q, 1)))
				c.advance(time.Second)
				return fvBodies(goVT0(t, q, 10))
			},
			want: goOrders{
				available: []string{"g3-m1", "g1-m1", "g1-m2", "g1-m3", "g1-m4", "g2-m1"},
				oldest:    []string{"g1-m1", "g1-m2", "g1-m3", "g1-m4", "g2-m1", "g3-m1"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			goEachOrder(t, func(t *testing.T, c fvClock, order fifoq.GroupOrder) {
				require.Equal(t, tc.want.of(order), tc.run(t, c, order))
			})
		})
	}
}

// TestGroupOrderReturn checks each way a group comes back, or is unblocked: group g1 (a1, a2) is received
// first, g2 (b1) waits meanwhile, and g3 (c1) is sent after g1 came back. By default g1 comes back behind
// g2; by the oldest message, before it.
func TestGroupOrderReturn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		opts []fifoq.Option
		vt   time.Duration // of the first receive; 0: the queue's (30s)
		noVT bool          // the first receive with NoVisibilityTimeout
		back func(t *testing.T, c fvClock, q *fifoq.Queue, a1 fifoq.Delivery)
		want goOrders
		dlq  []string // what the dead-letter queue holds at the end
	}{
		{
			name: "visibility timeout ends",
			vt:   time.Second,
			back: func(t *testing.T, c fvClock, q *fifoq.Queue, a1 fifoq.Delivery) { c.advance(time.Second) },
			want: goOrders{available: []string{"b1", "a1", "a2", "c1"}, oldest: []string{"a1", "a2", "b1", "c1"}},
		},
		{
			name: "ChangeVisibility 0",
			back: func(t *testing.T, c fvClock, q *fifoq.Queue, a1 fifoq.Delivery) {
				require.NoError(t, q.ChangeVisibility(ctx, a1.ReceiptHandle, 0))
			},
			want: goOrders{available: []string{"b1", "a1", "a2", "c1"}, oldest: []string{"a1", "a2", "b1", "c1"}},
		},
		{
			name: "ChangeVisibilityBatch 0",
			back: func(t *testing.T, c fvClock, q *fifoq.Queue, a1 fifoq.Delivery) {
				require.NoError(t, q.ChangeVisibilityBatch(ctx, []fifoq.VisibilityChange{{ReceiptHandle: a1.ReceiptHandle}}))
			},
			want: goOrders{available: []string{"b1", "a1", "a2", "c1"}, oldest: []string{"a1", "a2", "b1", "c1"}},
		},
		{
			name: "received with NoVisibilityTimeout",
			noVT: true,
			back: func(t *testing.T, c fvClock, q *fifoq.Queue, a1 fifoq.Delivery) {},
			want: goOrders{available: []string{"b1", "a1", "a2", "c1"}, oldest: []string{"a1", "a2", "b1", "c1"}},
		},
		{
			name: "in-flight head deleted",
			back: func(t *testing.T, c fvClock, q *fifoq.Queue, a1 fifoq.Delivery) {
				require.NoError(t, q.Delete(ctx, a1.ReceiptHandle))
			},
			want: goOrders{available: []string{"b1", "a2", "c1"}, oldest: []string{"a2", "b1", "c1"}},
		},
		{
			name: "in-flight head deleted by DeleteBatch",
			back: func(t *testing.T, c fvClock, q *fifoq.Queue, a1 fifoq.Delivery) {
				require.NoError(t, q.DeleteBatch(ctx, []string{a1.ReceiptHandle}))
			},
			want: goOrders{available: []string{"b1", "a2", "c1"}, oldest: []string{"a2", "b1", "c1"}},
		},
		{
			// a1 comes back at 1s past its receive limit: the receive that finds g1 in its place moves a1
			// to the dead-letter queue and goes on with a2.
			name: "head moved to the dead-letter queue",
			vt:   time.Second,
			back: func(t *testing.T, c fvClock, q *fifoq.Queue, a1 fifoq.Delivery) { c.advance(time.Second) },
			want: goOrders{available: []string{"b1", "a2", "c1"}, oldest: []string{"a2", "b1", "c1"}},
			dlq:  []string{"a1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			goEachOrder(t, func(t *testing.T, c fvClock, order fifoq.GroupOrder) {
				opts := []fifoq.Option{fifoq.WithGroupOrder(order)}
				var dlq *fifoq.Queue
				if tc.dlq != nil {
					dlq = fvNew(t, c, "return-dlq.fifo", fifoq.WithGroupOrder(order))
					opts = append(opts, fifoq.WithDeadLetterQueue(dlq, 1))
				}
				q := fvNew(t, c, "return.fifo", opts...)
				goSendAll(t, q, [2]string{"g1", "a1"}, [2]string{"g1", "a2"}, [2]string{"g2", "b1"})
				a1 := fvOnly(t, fvRecv(t, q, fifoq.ReceiveOptions{MaxMessages: 1, VisibilityTimeout: tc.vt, NoVisibilityTimeout: tc.noVT}))
				require.Equal(t, "a1", a1.Body)
				tc.back(t, c, q, a1)
				fvSend(t, q, "g3", "c1")
				require.Equal(t, tc.want.of(order), fvBodies(fvRecvN(t, q, 10)))
				if dlq != nil {
					var in []string
					for sn := range dlq.Messages() {
						in = append(in, sn.Body)
					}
					require.Equal(t, tc.dlq, in, "the dead-letter queue")
				}
			})
		})
	}
}

// TestGroupOrderRetention checks that a group whose in-flight head passes its retention becomes available
// at that moment: before a group whose head became visible later, even when both come due between the same
// two calls. At 30s g1's a2 and g4's d1 are sent and d1 received for 35s; g2's b1 is sent at 40s; a1 (in
// flight since 0s) expires at 60s and d1 comes back at 65s; the receive at 70s finds g2 (40s), g1 (60s),
// g4 (65s).
func TestGroupOrderRetention(t *testing.T) {
	t.Parallel()
	goEachOrder(t, func(t *testing.T, c fvClock, order fifoq.GroupOrder) {
		q := fvNew(t, c, "retention.fifo", fifoq.WithGroupOrder(order), fifoq.WithRetention(time.Minute))
		fvSend(t, q, "g1", "a1")
		require.Equal(t, "a1", fvOnly(t, fvRecv(t, q, fifoq.ReceiveOptions{VisibilityTimeout: 10 * time.Minute})).Body)
		c.advance(30 * time.Second)
		goSendAll(t, q, [2]string{"g1", "a2"}, [2]string{"g4", "d1"})
		require.Equal(t, "d1", fvOnly(t, fvRecv(t, q, fifoq.ReceiveOptions{VisibilityTimeout: 35 * time.Second})).Body)
		c.advance(10 * time.Second)
		fvSend(t, q, "g2", "b1")
		c.advance(30 * time.Second)
		want := goOrders{available: []string{"b1", "a2", "d1"}, oldest: []string{"a2", "d1", "b1"}}
		require.Equal(t, want.of(order), fvBodies(fvRecvN(t, q, 10)))
	})
}

// TestGroupOrderDelay checks that a new group counts from the end of its delay, not from its send. With a
// queue delay of 10s, a1 (g1) is sent at 0s and received at 10s; b1 (g2) is sent at 5s and visible at 15s.
// a1 coming back at 20s waits behind g2 by default; coming back at 12s, it does not.
func TestGroupOrderDelay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		vt   time.Duration
		want goOrders
	}{
		{10 * time.Second, goOrders{available: []string{"b1", "a1"}, oldest: []string{"a1", "b1"}}},
		{2 * time.Second, goOrders{available: []string{"a1", "b1"}, oldest: []string{"a1", "b1"}}},
	} {
		t.Run(fmt.Sprint("back after ", tc.vt), func(t *testing.T) {
			t.Parallel()
			goEachOrder(t, func(t *testing.T, c fvClock, order fifoq.GroupOrder) {
				q := fvNew(t, c, "delay.fifo", fifoq.WithGroupOrder(order), fifoq.WithDelay(10*time.Second))
				fvSend(t, q, "g1", "a1")
				c.advance(5 * time.Second)
				fvSend(t, q, "g2", "b1")
				c.advance(5 * time.Second)
				require.Equal(t, "a1", fvOnly(t, fvRecv(t, q, fifoq.ReceiveOptions{VisibilityTimeout: tc.vt})).Body)
				c.advance(15 * time.Second)
				require.Equal(t, tc.want.of(order), fvBodies(fvRecvN(t, q, 10)))
			})
		})
	}
}

// TestGroupOrderConsumer checks a failed Consumer batch: its groups come back behind the groups waiting, at
// once with RetryImmediately, else when their visibility timeout ends. The Consumer runs one batch at a
// time, of 2 messages. The first batch, [a1 a2] of g1, fails.
//
// With RetryImmediately g2 (b1) was waiting: the next batch is [b1 a1] by default, [a1 a2] by the oldest
// message. Without it, g1 comes back at 3s; meanwhile [b1] is handled, which takes 10s, and c1 (g3) is sent
// at 1s: the next batch is [c1 a1] by default, [a1 a2] by the oldest message.
func TestGroupOrderConsumer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		retry bool
		want  goOrders // the batches, as "body body"
	}{
		{true, goOrders{available: []string{"a1 a2", "b1 a1", "a2"}, oldest: []string{"a1 a2", "a1 a2", "b1"}}},
		{false, goOrders{available: []string{"a1 a2", "b1", "c1 a1", "a2"}, oldest: []string{"a1 a2", "b1", "a1 a2", "c1"}}},
	} {
		for _, order := range []fifoq.GroupOrder{fifoq.GroupOrderAvailable, fifoq.GroupOrderOldestMessage} {
			t.Run(fmt.Sprintf("RetryImmediately %v/%v", tc.retry, order), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					want := tc.want.of(order)
					q := fvNew(t, fvBubble{}, "consumer.fifo", fifoq.WithGroupOrder(order), fifoq.WithVisibilityTimeout(3*time.Second))
					goSendAll(t, q, [2]string{"g1", "a1"}, [2]string{"g1", "a2"}, [2]string{"g2", "b1"})
					ctx, cancel := context.WithCancel(t.Context())
					defer cancel()
					var (
						mu      sync.Mutex
						batches []string
					)
					h := func(ctx context.Context, batch []fifoq.Delivery) error {
						s := fmt.Sprint(fvBodies(batch))
						s = s[1 : len(s)-1]
						mu.Lock()
						batches = append(batches, s)
						n := len(batches)
						if n == len(want) {
							cancel()
						}
						mu.Unlock()
						switch {
						case n == 1:
							return errors.New("the first batch fails")
						case s == "b1" && !tc.retry:
							time.Sleep(10 * time.Second)
						}
						return nil
					}
					c, err := fifoq.NewConsumer(q, h, fifoq.ConsumerOptions{
						Batch: fifoq.BatchOptions{Size: 2}, MaxConcurrency: 1, RetryImmediately: tc.retry,
					})
					require.NoError(t, err)
					done := make(chan error, 1)
					go func() { done <- c.Run(ctx) }()
					if !tc.retry {
						time.Sleep(time.Second)
						fvSend(t, q, "g3", "c1")
					}
					require.NoError(t, <-done)
					mu.Lock()
					defer mu.Unlock()
					require.Equal(t, want, batches)
				})
			})
		}
	}
}

// TestGroupOrderBatcherRelease checks that messages a Batcher gives back (a receive returned more than
// MaxBytes allows) come back behind the groups waiting: by default, by the oldest message before them.
func TestGroupOrderBatcherRelease(t *testing.T) {
	t.Parallel()
	for _, order := range []fifoq.GroupOrder{fifoq.GroupOrderAvailable, fifoq.GroupOrderOldestMessage} {
		t.Run(order.String(), func(t *testing.T) {
			q := fvNew(t, fvNewManual(), "release.fifo", fifoq.WithGroupOrder(order))
			goSendAll(t, q, [2]string{"g1", "a1"}, [2]string{"g2", "b1"}, [2]string{"g3", "c1"}, [2]string{"g4", "d1"})
			b, err := fifoq.NewBatcher(q, fifoq.BatchOptions{Size: 3, MaxBytes: 4}) // two bodies of 2 bytes
			require.NoError(t, err)
			batch, err := b.Next(context.Background())
			require.NoError(t, err)
			require.Equal(t, []string{"a1", "b1"}, fvBodies(batch), "c1 did not fit and was given back")
			want := goOrders{available: []string{"d1", "c1"}, oldest: []string{"c1", "d1"}}
			require.Equal(t, want.of(order), fvBodies(fvRecvN(t, q, 10)))
		})
	}
}

// TestGroupOrderSetAttributes checks that a change of group order keeps the groups waiting in their current
// order when it switches to GroupOrderAvailable, and orders them by their oldest message when it switches to
// GroupOrderOldestMessage; and that Attributes reports the order.
func TestGroupOrderSetAttributes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := fvNew(t, fvNewManual(), "set.fifo")
	require.Equal(t, fifoq.GroupOrderAvailable, q.Attributes().GroupOrder, "the default")
	goSendAll(t, q, [2]string{"g1", "a1"}, [2]string{"g2", "b1"}, [2]string{"g3", "c1"})
	a1 := fvOnly(t, fvRecvN(t, q, 1))
	require.NoError(t, q.ChangeVisibility(ctx, a1.ReceiptHandle, 0)) // waiting: g2, g3, g1

	set := func(o fifoq.GroupOrder) {
		t.Helper()
		a := q.Attributes()
		a.GroupOrder = o
		require.NoError(t, q.SetAttributes(a))
		require.Equal(t, o, q.Attributes().GroupOrder)
	}
	peek := func() []string { // what a receive would take, given back at once
		t.Helper()
		return fvBodies(goVT0(t, q, 10))
	}
	set(fifoq.GroupOrderOldestMessage)
	require.Equal(t, []string{"a1", "b1", "c1"}, peek())
	// The VT-0 receive gave them back in that order: by default they now wait in it.
	set(fifoq.GroupOrderAvailable)
	b1 := fvOnly(t, fvRecvN(t, q, 1))
	require.Equal(t, "a1", b1.Body)
	require.NoError(t, q.ChangeVisibility(ctx, b1.ReceiptHandle, 0))
	require.Equal(t, []string{"b1", "c1", "a1"}, peek())
}

// TestGroupOrderInvalid checks that an unknown group order is refused with ErrInvalidQueueAttribute, by New
// and by SetAttributes, which then changes nothing; and that a standard queue accepts the option.
func TestGroupOrderInvalid(t *testing.T) {
	t.Parallel()
	_, err := fifoq.New("bad.fifo", fifoq.WithGroupOrder(fifoq.GroupOrder(2)))
	require.ErrorIs(t, err, fifoq.ErrInvalidQueueAttribute)
	require.Equal(t, "InvalidAttributeValue", fifoq.ErrorCode(err))

	q := fvNew(t, fvNewManual(), "bad.fifo", fifoq.WithGroupOrder(fifoq.GroupOrderOldestMessage))
	a := q.Attributes()
	a.GroupOrder = 7
	require.ErrorIs(t, q.SetAttributes(a), fifoq.ErrInvalidQueueAttribute)
	require.Equal(t, fifoq.GroupOrderOldestMessage, q.Attributes().GroupOrder, "unchanged")

	std := fvNew(t, fvNewManual(), "standard", fifoq.WithGroupOrder(fifoq.GroupOrderOldestMessage))
	require.Equal(t, fifoq.GroupOrderOldestMessage, std.Attributes().GroupOrder)
	require.Equal(t, "GroupOrder(invalid)", fifoq.GroupOrder(7).String())
}

// TestGroupOrderMoveTask checks the order in which a move task takes a FIFO dead-letter queue's messages:
// by default group by group, as a receive would, in the order the groups became available; by the oldest
// message, in the order they arrived. Either way each group keeps its order.
func TestGroupOrderMoveTask(t *testing.T) {
	t.Parallel()
	for _, order := range []fifoq.GroupOrder{fifoq.GroupOrderAvailable, fifoq.GroupOrderOldestMessage} {
		t.Run(order.String(), func(t *testing.T) {
			ctx := context.Background()
			c := fvNewManual()
			dlq := fvNew(t, c, "move-dlq.fifo", fifoq.WithGroupOrder(order))
			src := fvNew(t, c, "move-src.fifo", fifoq.WithGroupOrder(order), fifoq.WithDeadLetterQueue(dlq, 1),
				fifoq.WithVisibilityTimeout(0))
			dest := fvNew(t, c, "move-dest.fifo")
			// Receive with VT 0, then again: the second receive moves what the first returned.
			goSendAll(t, src, [2]string{"g1", "a1"}, [2]string{"g2", "b1"})
			require.Equal(t, []string{"a1", "b1"}, fvBodies(fvRecvN(t, src, 10)))
			fvRequireEmpty(t, src, "a1, b1 moved")
			fvSend(t, src, "g1", "a2")
			require.Equal(t, []string{"a2"}, fvBodies(fvRecvN(t, src, 10)))
			fvRequireEmpty(t, src, "a2 moved")
			var in []string
			for sn := range dlq.Messages() {
				in = append(in, sn.Body)
			}
			require.Equal(t, []string{"a1", "b1", "a2"}, in, "arrival order in the dead-letter queue")
			task, err := dlq.StartMoveTask(ctx, dest, 0)
			require.NoError(t, err)
			require.NoError(t, task.Wait(ctx))
			var moved []string
			for sn := range dest.Messages() {
				moved = append(moved, sn.Body)
			}
			want := goOrders{available: []string{"a1", "a2", "b1"}, oldest: []string{"a1", "b1", "a2"}}
			require.Equal(t, want.of(order), moved)
		})
	}
}

// TestGroupOrderRecovery checks the order of the groups available when a durable queue is opened again: by
// when their oldest message became visible, then by send order; groups that become available later queue
// behind them. The store keeps no more, so a group unblocked by a delete counts from when its oldest
// message became visible, not from the delete.
func TestGroupOrderRecovery(t *testing.T) {
	t.Parallel()
	for _, crash := range []bool{false, true} {
		for _, order := range []fifoq.GroupOrder{fifoq.GroupOrderAvailable, fifoq.GroupOrderOldestMessage} {
			t.Run(fmt.Sprintf("crash %v/%v", crash, order), func(t *testing.T) {
				ctx := context.Background()
				d := newStDisk(t)
				q := d.queue("recover.fifo", fifoq.WithGroupOrder(order), fifoq.WithVisibilityTimeout(time.Second))
				// 0s: g1 a1 a2, g2 b1, g3 c1, g4 e1; a1 received (until 1s), c1 received (until 3s).
				goSendAll(t, q, [2]string{"g1", "a1"}, [2]string{"g1", "a2"}, [2]string{"g2", "b1"})
				goSendAll(t, q, [2]string{"g3", "c1"}, [2]string{"g4", "e1"})
				require.Equal(t, []string{"a1", "a2"}, fvBodies(fvRecv(t, q, fifoq.ReceiveOptions{MaxMessages: 2, VisibilityTimeout: time.Second})))
				require.Equal(t, []string{"b1"}, fvBodies(fvRecvN(t, q, 1)))
				require.NoError(t, q.Delete(ctx, fvOnly(t, fvRecvN(t, q, 1)).ReceiptHandle)) // c1 deleted: g3 is empty
				goSendAll(t, q, [2]string{"g3", "c2"})                                       // g3 again, at 0s
				e1 := fvOnly(t, fvRecv(t, q, fifoq.ReceiveOptions{VisibilityTimeout: 10 * time.Second}))
				require.Equal(t, "e1", e1.Body)
				d.clock.Advance(2 * time.Second) // a1, a2, b1 visible again at 1s
				goSendAll(t, q, [2]string{"g5", "f1"})
				d.clock.Advance(time.Second)
				require.NoError(t, q.Delete(ctx, e1.ReceiptHandle)) // g4 empty
				goSendAll(t, q, [2]string{"g4", "e2"})              // at 3s
				want := goOrders{
					available: []string{"c2", "a1", "a2", "b1", "f1", "e2"},
					oldest:    []string{"a1", "a2", "b1", "c2", "f1", "e2"},
				}
				d.restart(crash)
				q = d.queue("recover.fifo", fifoq.WithGroupOrder(order), fifoq.WithVisibilityTimeout(time.Second))
				goSendAll(t, q, [2]string{"g6", "h1"})
				require.Equal(t, append(slices.Clone(want.of(order)), "h1"), fvBodies(goVT0(t, q, 10)))
			})
		}
	}
}

// TestGroupOrderRecoveryAtEpoch checks the recovered order when a time that orders the groups falls on the
// instant the queue is opened, its first instant. Queue delay 2s: a1 (g1) is sent at 0s, b1 (g2) at 1s, so g1
// is available from 2s, g2 from 3s. The store is opened again at 3s, when b1's delay ends; or at 1s, and
// SetAttributes with delay 0 right then ends b1's delay, which the store records, and it is opened again at
// 2s. Either way g2 became available after g1 and must stay behind it, not count from b1's send.
func TestGroupOrderRecoveryAtEpoch(t *testing.T) {
	t.Parallel()
	for _, crash := range []bool{false, true} {
		t.Run(fmt.Sprintf("delay ends at the open/crash %v", crash), func(t *testing.T) {
			d := newStDisk(t)
			q := d.queue("epoch.fifo", fifoq.WithDelay(2*time.Second))
			goSendAll(t, q, [2]string{"g1", "a1"})
			d.clock.Advance(time.Second)
			goSendAll(t, q, [2]string{"g2", "b1"})
			d.clock.Advance(2 * time.Second)
			d.restart(crash)
			q = d.queue("epoch.fifo", fifoq.WithDelay(2*time.Second))
			require.Equal(t, []string{"a1", "b1"}, fvBodies(goVT0(t, q, 10)))
		})
		t.Run(fmt.Sprintf("delay ended by SetAttributes at the open/crash %v", crash), func(t *testing.T) {
			d := newStDisk(t)
			q := d.queue("epoch.fifo")
			goSendAll(t, q, [2]string{"g1", "a1"})
			require.Equal(t, []string{"a1"}, fvBodies(fvRecv(t, q, fifoq.ReceiveOptions{VisibilityTimeout: 500 * time.Millisecond})))
			goSetDelay(t, q, 10*time.Second)
			goSendAll(t, q, [2]string{"g2", "b1"}) // at 0s, delayed to 10s
			d.clock.Advance(time.Second)           // a1 visible again at 0.5s
			d.restart(crash)
			q = d.queue("epoch.fifo", fifoq.WithDelay(10*time.Second))
			goSetDelay(t, q, 0) // at 1s, the queue's first instant: b1 visible now
			d.clock.Advance(time.Second)
			d.restart(crash)
			q = d.queue("epoch.fifo")
			require.Equal(t, []string{"a1", "b1"}, fvBodies(goVT0(t, q, 10)))
		})
	}
}

// goSetDelay sets q's delay.
func goSetDelay(t *testing.T, q *fifoq.Queue, delay time.Duration) {
	t.Helper()
	a := q.Attributes()
	a.Delay = delay
	require.NoError(t, q.SetAttributes(a))
}

// TestGroupOrderConsumerPartial checks a partial failure with RetryImmediately: the batch [a1 a2 b1] names
// a2 and b1 failed. a1 is deleted first, then a2 and b1 are given back, so g1 and g2 come back in batch order,
// behind g3, which was waiting: [c1 a2 b1] by default, [a2 b1 c1] by the oldest message.
func TestGroupOrderConsumerPartial(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		order fifoq.GroupOrder
		want  []string
	}{
		{fifoq.GroupOrderAvailable, []string{"a1 a2 b1", "c1 a2 b1"}},
		{fifoq.GroupOrderOldestMessage, []string{"a1 a2 b1", "a2 b1 c1"}},
	} {
		t.Run(tc.order.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := fvNew(t, fvBubble{}, "partial.fifo", fifoq.WithGroupOrder(tc.order))
				goSendAll(t, q, [2]string{"g1", "a1"}, [2]string{"g1", "a2"}, [2]string{"g2", "b1"}, [2]string{"g3", "c1"})
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				var batches []string // the handler runs one batch at a time
				h := func(ctx context.Context, batch []fifoq.Delivery) error {
					s := fmt.Sprint(fvBodies(batch))
					batches = append(batches, s[1:len(s)-1])
					if len(batches) > 1 {
						cancel()
						return nil
					}
					return &fifoq.BatchItemFailures{MessageIDs: []string{batch[1].MessageID, batch[2].MessageID}}
				}
				c, err := fifoq.NewConsumer(q, h, fifoq.ConsumerOptions{
					Batch: fifoq.BatchOptions{Size: 3}, MaxConcurrency: 1, RetryImmediately: true, ReportBatchItemFailures: true,
				})
				require.NoError(t, err)
				require.NoError(t, c.Run(ctx))
				require.Equal(t, tc.want, batches)
			})
		})
	}
}

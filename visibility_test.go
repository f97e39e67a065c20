package fifoq_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/stretchr/testify/require"
)

// Tests of spec 1.2 (visibility timeout), 1.3 (receipt handles) and 2.15 (receive request attempt ids).
// Shared helpers are in fifo_test.go.

// fvQueueNames are a standard and a FIFO queue name, for rules that hold on both.
var fvQueueNames = []string{"std", "q.fifo"}

// fvVisibleAt returns when the only stored message of q becomes visible, from the side-effect-free snapshot.
func fvVisibleAt(t *testing.T, q *fifoq.Queue) time.Time {
	t.Helper()
	var out []time.Time
	for s := range q.Messages() {
		out = append(out, s.VisibleAt)
	}
	require.Len(t, out, 1, "want one stored message")
	return out[0]
}

// fvRequireVisibleAfter asserts that the message in flight in q becomes visible exactly d from now: not at
// d-1ns, but at d (a receive of 10 is then the probe). It returns that receive.
func fvRequireVisibleAfter(t *testing.T, c fvClock, q *fifoq.Queue, d time.Duration, why string) []fifoq.Delivery {
	t.Helper()
	c.advance(d - time.Nanosecond)
	fvRequireEmpty(t, q, "%s: visible before %v", why, d)
	c.advance(time.Nanosecond)
	ds := fvRecvN(t, q, 10)
	require.NotEmpty(t, ds, "%s: not visible after %v", why, d)
	return ds
}

// TestVisibilityQueueDefault checks spec 1.2.1 and 1.2.3: a received message stays invisible for the queue's
// visibility timeout (default 30 s, or the one set), counted from the receive.
func TestVisibilityQueueDefault(t *testing.T) {
	t.Parallel()
	for _, name := range fvQueueNames {
		for _, tc := range []struct {
			label string
			opts  []fifoq.Option
			want  time.Duration
		}{
			{"default", nil, 30 * time.Second},
			{"set", []fifoq.Option{fifoq.WithVisibilityTimeout(7 * time.Second)}, 7 * time.Second},
		} {
			t.Run(name+"/"+tc.label, func(t *testing.T) {
				t.Parallel()
				fvEachClock(t, func(t *testing.T, c fvClock) {
					q := fvNew(t, c, name, tc.opts...)
					fvSend(t, q, "g", "m")
					c.advance(time.Second) // the timeout counts from the receive, not the send
					fvOnly(t, fvRecvN(t, q, 1))
					d := fvOnly(t, fvRequireVisibleAfter(t, c, q, tc.want, "queue visibility timeout"))
					require.Equal(t, 2, d.ReceiveCount)
				})
			})
		}
	}
}

// TestVisibilityReceiveOverride checks spec 1.2.2: a receive's VisibilityTimeout applies to the messages of
// that call only; the next receive uses the queue's again.
func TestVisibilityReceiveOverride(t *testing.T) {
	t.Parallel()
	for _, name := range fvQueueNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fvEachClock(t, func(t *testing.T, c fvClock) {
				q := fvNew(t, c, name, fifoq.WithVisibilityTimeout(30*time.Second))
				fvSend(t, q, "g", "m")
				fvOnly(t, fvRecv(t, q, fifoq.ReceiveOptions{VisibilityTimeout: 5 * time.Second}))
				fvRequireVisibleAfter(t, c, q, 5*time.Second, "receive override 5s")
				fvRequireVisibleAfter(t, c, q, 30*time.Second, "next receive without override: the queue's 30s")
			})
		})
	}
}

// TestVisibilityChangeCountsFromCall checks spec 1.2.4 (scenario 7): queue VT 60 s; at +15 s the timeout is
// set to 10 s; the message is visible at +25 s, not +75 s.
func TestVisibilityChangeCountsFromCall(t *testing.T) {
	t.Parallel()
	for _, name := range fvQueueNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fvEachClock(t, func(t *testing.T, c fvClock) {
				q := fvNew(t, c, name, fifoq.WithVisibilityTimeout(60*time.Second))
				fvSend(t, q, "g", "m")
				d := fvOnly(t, fvRecvN(t, q, 1))
				c.advance(15 * time.Second)
				require.NoError(t, q.ChangeVisibility(context.Background(), d.ReceiptHandle, 10*time.Second))
				fvRequireVisibleAfter(t, c, q, 10*time.Second, "ChangeVisibility(10s) at +15s")
			})
		})
	}
}

// TestVisibilityChangeToZero checks spec 1.2.7 (scenario 6): ChangeVisibility(0) makes the message visible at
// once; the next receive returns it, and the one after returns nothing because it is in flight again.
func TestVisibilityChangeToZero(t *testing.T) {
	t.Parallel()
	for _, name := range fvQueueNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			q := fvNew(t, fvNewManual(), name)
			fvSend(t, q, "g", "m")
			d := fvOnly(t, fvRecvN(t, q, 1))
			fvRequireEmpty(t, q)
			require.NoError(t, q.ChangeVisibility(context.Background(), d.ReceiptHandle, 0))
			require.Equal(t, fifoq.Stats{Visible: 1}, q.Stats())
			again := fvOnly(t, fvRecvN(t, q, 1))
			require.Equal(t, d.MessageID, again.MessageID)
			require.Equal(t, 2, again.ReceiveCount)
			fvRequireEmpty(t, q, "the message is in flight again")
		})
	}
}

// TestVisibilityTwelveHourCap checks spec 1.2.5 (scenario 8): a message stays invisible at most 12 hours
// from its receive. A change past that returns ErrInvalidVisibilityTimeout and changes nothing (no clamping);
// extending does not reset the cap; a new receive starts a new cap.
func TestVisibilityTwelveHourCap(t *testing.T) {
	t.Parallel()
	for _, name := range fvQueueNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fvEachClock(t, func(t *testing.T, c fvClock) {
				ctx := context.Background()
				q := fvNew(t, c, name, fifoq.WithVisibilityTimeout(30*time.Second))
				fvSend(t, q, "g", "m")
				received := c.now()
				h := fvOnly(t, fvRecvN(t, q, 1)).ReceiptHandle
				capAt := received.Add(12 * time.Hour)

				steps := []struct {
					advance time.Duration
					change  time.Duration
					ok      bool
				}{
					{time.Second, 12 * time.Hour, false},    // 12h from +1s passes the cap
					{0, 12*time.Hour - 5*time.Second, true}, // ends at 12h - 4s
					{6 * time.Hour, 6 * time.Hour, false},   // from +6h1s: 12h1s
					{0, 6*time.Hour - time.Second, true},    // exactly 12h after the receive
					{6*time.Hour - 2*time.Second, 2 * time.Second, false},
					{0, time.Second, true},
					{0, time.Second + time.Nanosecond, false},
				}
				want := received.Add(30 * time.Second)
				for i, s := range steps {
					c.advance(s.advance)
					at := c.now().Sub(received)
					err := q.ChangeVisibility(ctx, h, s.change)
					if s.ok {
						require.NoError(t, err, "step %d: ChangeVisibility(%v) at +%v", i, s.change, at)
						want = c.now().Add(s.change)
					} else {
						require.ErrorIs(t, err, fifoq.ErrInvalidVisibilityTimeout, "step %d: ChangeVisibility(%v) at +%v", i, s.change, at)
					}
					fvRequireTime(t, want, fvVisibleAt(t, q), "visible at, after step")
				}
				require.True(t, want.Equal(capAt))
				// Now at 12h - 1s: the message becomes visible at exactly 12h after its receive.
				d := fvOnly(t, fvRequireVisibleAfter(t, c, q, time.Second, "extended to the cap"))
				// A new receive starts a new 12 hours.
				require.NoError(t, q.ChangeVisibility(ctx, d.ReceiptHandle, 12*time.Hour), "12h at the instant of a new receive")
			})
		})
	}
}

// TestVisibilityTwelveHoursAtReceive checks spec 1.2.1 and 1.2.5 as fifoq reads them: at the instant of the
// receive a timeout of exactly 12 h is allowed, on the receive and by ChangeVisibility; more is
// ErrInvalidVisibilityTimeout.
func TestVisibilityTwelveHoursAtReceive(t *testing.T) {
	t.Parallel()
	for _, name := range fvQueueNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			q := fvNew(t, fvNewManual(), name)
			fvSend(t, q, "g", "a")
			fvSend(t, q, "h", "b")
			_, err := q.Receive(ctx, fifoq.ReceiveOptions{VisibilityTimeout: 12*time.Hour + time.Nanosecond})
			require.ErrorIs(t, err, fifoq.ErrInvalidVisibilityTimeout)
			require.Equal(t, fifoq.Stats{Visible: 2}, q.Stats(), "a rejected receive changes nothing")
			d := fvOnly(t, fvRecv(t, q, fifoq.ReceiveOptions{VisibilityTimeout: 12 * time.Hour}))
			require.ErrorIs(t, q.ChangeVisibility(ctx, d.ReceiptHandle, 12*time.Hour+time.Nanosecond), fifoq.ErrInvalidVisibilityTimeout)
			require.NoError(t, q.ChangeVisibility(ctx, d.ReceiptHandle, 12*time.Hour))
			d = fvOnly(t, fvRecvN(t, q, 1))
			require.NoError(t, q.ChangeVisibility(ctx, d.ReceiptHandle, 12*time.Hour))
		})
	}
}

// TestVisibilityChangeAppliesToCurrentReceipt checks spec 1.2.6 (scenario 9): a visibility change lasts for
// its receipt only; the next receive without an override uses the queue's timeout again.
func TestVisibilityChangeAppliesToCurrentReceipt(t *testing.T) {
	t.Parallel()
	for _, name := range fvQueueNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fvEachClock(t, func(t *testing.T, c fvClock) {
				q := fvNew(t, c, name, fifoq.WithVisibilityTimeout(30*time.Second))
				fvSend(t, q, "g", "m")
				d := fvOnly(t, fvRecvN(t, q, 1))
				require.NoError(t, q.ChangeVisibility(context.Background(), d.ReceiptHandle, 300*time.Second))
				fvRequireVisibleAfter(t, c, q, 300*time.Second, "extended to 300s")
				fvRequireVisibleAfter(t, c, q, 30*time.Second, "re-received: the queue's 30s, not 300s")
			})
		})
	}
}

// TestReceiptHandleNewPerReceive checks spec 1.3.1 and 1.4.3 (scenario 1): a message is not received again
// within its visibility timeout; after it, it comes back with ReceiveCount 2 and a different receipt handle.
func TestReceiptHandleNewPerReceive(t *testing.T) {
	t.Parallel()
	for _, name := range fvQueueNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fvEachClock(t, func(t *testing.T, c fvClock) {
				q := fvNew(t, c, name, fifoq.WithVisibilityTimeout(time.Second))
				fvSend(t, q, "g", "m")
				handles := map[string]bool{}
				for i := 1; i <= 3; i++ {
					d := fvOnly(t, fvRecvN(t, q, 1))
					require.Equal(t, i, d.ReceiveCount)
					require.NotEmpty(t, d.ReceiptHandle)
					require.LessOrEqual(t, len(d.ReceiptHandle), 1024)
					require.False(t, handles[d.ReceiptHandle], "receive %d reused handle %q", i, d.ReceiptHandle)
					handles[d.ReceiptHandle] = true
					fvRequireEmpty(t, q, "within the visibility timeout")
					c.advance(time.Second)
				}
			})
		})
	}
}

// TestStandardOldHandleDeletes checks spec 1.3.4 (scenario 2): on a standard queue a handle whose visibility
// timeout has passed still deletes the message, and so does a handle older than the latest receive.
func TestStandardOldHandleDeletes(t *testing.T) {
	t.Parallel()
	fvEachClock(t, func(t *testing.T, c fvClock) {
		ctx := context.Background()
		q := fvNew(t, c, "std", fifoq.WithVisibilityTimeout(time.Second))
		fvSend(t, q, "", "expired")
		h := fvOnly(t, fvRecvN(t, q, 1)).ReceiptHandle
		c.advance(2 * time.Second)
		require.NoError(t, q.Delete(ctx, h), "delete with an expired handle")
		require.Equal(t, fifoq.Stats{}, q.Stats(), "the queue is empty after the delete")
		fvRequireEmpty(t, q)

		fvSend(t, q, "", "old")
		h1 := fvOnly(t, fvRecvN(t, q, 1)).ReceiptHandle
		c.advance(time.Second)
		h2 := fvOnly(t, fvRecvN(t, q, 1)).ReceiptHandle
		require.NotEqual(t, h1, h2)
		require.NoError(t, q.Delete(ctx, h1), "delete with the handle of an earlier receive")
		require.Equal(t, fifoq.Stats{}, q.Stats())
	})
}

// TestStandardDeleteTwice checks spec 1.3.4 (scenario 3): deleting with the same handle three times succeeds
// every time.
func TestStandardDeleteTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := fvNew(t, fvNewManual(), "std")
	fvSend(t, q, "", "m")
	fvSend(t, q, "", "n")
	h := fvOnly(t, fvRecvN(t, q, 1)).ReceiptHandle
	for i := range 3 {
		require.NoError(t, q.Delete(ctx, h), "delete %d", i+1)
	}
	require.Equal(t, fifoq.Stats{Visible: 1}, q.Stats(), "only the received message is gone")
}

// TestFIFODeleteExpiredHandle checks spec 1.3.5 (scenario 10): on a FIFO queue a delete after the visibility
// window returns ErrReceiptHandleExpired and leaves the message; so does a handle of an earlier receive.
func TestFIFODeleteExpiredHandle(t *testing.T) {
	t.Parallel()
	fvEachClock(t, func(t *testing.T, c fvClock) {
		ctx := context.Background()
		q := fvNew(t, c, "expired.fifo", fifoq.WithVisibilityTimeout(time.Second))
		fvSend(t, q, "g", "m")
		h1 := fvOnly(t, fvRecvN(t, q, 1)).ReceiptHandle
		c.advance(2 * time.Second)
		require.ErrorIs(t, q.Delete(ctx, h1), fifoq.ErrReceiptHandleExpired, "delete 2s after a receive with VT 1s")
		require.Equal(t, fifoq.Stats{Visible: 1}, q.Stats(), "the rejected delete left the message")
		d := fvOnly(t, fvRecvN(t, q, 1))
		require.Equal(t, 2, d.ReceiveCount)
		require.ErrorIs(t, q.Delete(ctx, h1), fifoq.ErrReceiptHandleExpired, "handle of an earlier receive")
		require.Equal(t, fifoq.Stats{InFlight: 1}, q.Stats())
		require.NoError(t, q.Delete(ctx, d.ReceiptHandle), "the latest handle, inside its window")
		require.Equal(t, fifoq.Stats{}, q.Stats())
	})
}

// TestFIFODeleteInsideExtendedWindow checks spec 1.3.6 (scenario 11): VT 1 s, extended to 5 s; a delete at
// 1.5 s succeeds and the queue is empty.
func TestFIFODeleteInsideExtendedWindow(t *testing.T) {
	t.Parallel()
	fvEachClock(t, func(t *testing.T, c fvClock) {
		ctx := context.Background()
		q := fvNew(t, c, "extended.fifo", fifoq.WithVisibilityTimeout(time.Second))
		fvSend(t, q, "g", "m")
		h := fvOnly(t, fvRecvN(t, q, 1)).ReceiptHandle
		require.NoError(t, q.ChangeVisibility(ctx, h, 5*time.Second))
		c.advance(1500 * time.Millisecond)
		require.NoError(t, q.Delete(ctx, h))
		require.Equal(t, fifoq.Stats{}, q.Stats())
		c.advance(10 * time.Second)
		fvRequireEmpty(t, q, "the deleted message never comes back")
	})
}

// TestReceiptHandleInvalid checks spec 1.3.4 (scenario 5): Delete and ChangeVisibility with a string that is
// not a receipt handle of this queue, including a real handle of another queue, return
// ErrReceiptHandleInvalid and change nothing.
func TestReceiptHandleInvalid(t *testing.T) {
	t.Parallel()
	for _, name := range fvQueueNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			clk := fvNewManual()
			q := fvNew(t, clk, name)
			other := fvNew(t, clk, "other-"+name)
			fvSend(t, q, "g", "m")
			fvSend(t, other, "g", "m")
			h := fvOnly(t, fvRecvN(t, q, 1)).ReceiptHandle
			otherHandle := fvOnly(t, fvRecvN(t, other, 1)).ReceiptHandle
			for _, bad := range []struct{ label, handle string }{
				{"garbage", "garbage"},
				{"empty", ""},
				{"not base64", strings.Repeat("!", len(h))},
				{"truncated", h[:len(h)-1]},
				{"extended", h + "A"},
				{"another queue's", otherHandle},
			} {
				require.ErrorIs(t, q.Delete(ctx, bad.handle), fifoq.ErrReceiptHandleInvalid, "Delete(%s handle %q)", bad.label, bad.handle)
				require.ErrorIs(t, q.ChangeVisibility(ctx, bad.handle, 0), fifoq.ErrReceiptHandleInvalid, "ChangeVisibility(%s handle %q)", bad.label, bad.handle)
				require.Equal(t, fifoq.Stats{InFlight: 1}, q.Stats(), "after the %s handle", bad.label)
			}
			require.Equal(t, "ReceiptHandleIsInvalid", fifoq.ErrorCode(q.Delete(ctx, "garbage")))
			require.NoError(t, q.Delete(ctx, h), "the real handle still works")
			require.Equal(t, fifoq.Stats{InFlight: 1}, other.Stats(), "the other queue is untouched")
		})
	}
}

// TestChangeVisibilityAfterDelete checks spec 1.3.4 (scenario 4): ChangeVisibility on a deleted message
// returns ErrMessageNotAvailable.
func TestChangeVisibilityAfterDelete(t *testing.T) {
	t.Parallel()
	for _, name := range fvQueueNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			q := fvNew(t, fvNewManual(), name)
			fvSend(t, q, "g", "m")
			h := fvOnly(t, fvRecvN(t, q, 1)).ReceiptHandle
			require.NoError(t, q.Delete(ctx, h))
			for _, v := range []time.Duration{0, 10 * time.Second} {
				err := q.ChangeVisibility(ctx, h, v)
				require.ErrorIs(t, err, fifoq.ErrMessageNotAvailable, "ChangeVisibility(%v) after delete", v)
				require.Equal(t, "InvalidParameterValue", fifoq.ErrorCode(err))
			}
			require.Equal(t, fifoq.Stats{}, q.Stats())
		})
	}
}

// TestStandardChangeVisibilityExpiredHandle checks spec 1.3.4 (the recommended reading of the conflict): on a
// standard queue ChangeVisibility with a handle whose timeout has passed succeeds and does not hide the
// now-visible message again.
func TestStandardChangeVisibilityExpiredHandle(t *testing.T) {
	t.Parallel()
	fvEachClock(t, func(t *testing.T, c fvClock) {
		q := fvNew(t, c, "std", fifoq.WithVisibilityTimeout(time.Second))
		fvSend(t, q, "", "m")
		h := fvOnly(t, fvRecvN(t, q, 1)).ReceiptHandle
		c.advance(2 * time.Second)
		require.NoError(t, q.ChangeVisibility(context.Background(), h, time.Minute))
		require.Equal(t, fifoq.Stats{Visible: 1}, q.Stats(), "the expired handle did not re-hide the message")
		d := fvOnly(t, fvRecvN(t, q, 1))
		require.Equal(t, 2, d.ReceiveCount)
	})
}

// TestStandardOldHandleChangesVisibility checks spec 1.3.4 (AWS-TEST): on a standard queue ChangeVisibility(0)
// with the handle of an earlier receive makes visible a message that a later receive made invisible.
func TestStandardOldHandleChangesVisibility(t *testing.T) {
	t.Parallel()
	fvEachClock(t, func(t *testing.T, c fvClock) {
		q := fvNew(t, c, "std", fifoq.WithVisibilityTimeout(time.Second))
		fvSend(t, q, "", "m")
		h1 := fvOnly(t, fvRecvN(t, q, 1)).ReceiptHandle
		c.advance(time.Second)
		fvOnly(t, fvRecv(t, q, fifoq.ReceiveOptions{VisibilityTimeout: 30 * time.Second}))
		require.NoError(t, q.ChangeVisibility(context.Background(), h1, 0))
		d := fvOnly(t, fvRecvN(t, q, 1))
		require.Equal(t, 3, d.ReceiveCount)
	})
}

// TestFIFOChangeVisibilityExpiredHandle checks spec 1.3.7 (recommended: the error of 1.3.5): on a FIFO queue
// ChangeVisibility with a handle whose window is over returns ErrReceiptHandleExpired and changes nothing.
func TestFIFOChangeVisibilityExpiredHandle(t *testing.T) {
	t.Parallel()
	fvEachClock(t, func(t *testing.T, c fvClock) {
		q := fvNew(t, c, "cvexpired.fifo", fifoq.WithVisibilityTimeout(time.Second))
		fvSend(t, q, "g", "m")
		h := fvOnly(t, fvRecvN(t, q, 1)).ReceiptHandle
		c.advance(2 * time.Second)
		require.ErrorIs(t, q.ChangeVisibility(context.Background(), h, time.Minute), fifoq.ErrReceiptHandleExpired)
		require.Equal(t, fifoq.Stats{Visible: 1}, q.Stats())
	})
}

// TestFIFOAttemptIDReplay checks spec 2.15.2 (scenario 24): a retry with the same receive request attempt id
// within 5 minutes returns the same messages with the same receipt handles, although they are in flight, and
// restarts their visibility timeout.
func TestFIFOAttemptIDReplay(t *testing.T) {
	t.Parallel()
	fvEachClock(t, func(t *testing.T, c fvClock) {
		q := fvNew(t, c, "attempt.fifo", fifoq.WithVisibilityTimeout(30*time.Second))
		fvSend(t, q, "g1", "g1-m1")
		fvSend(t, q, "g1", "g1-m2")
		fvSend(t, q, "g2", "g2-m1")
		o := fifoq.ReceiveOptions{MaxMessages: 10, AttemptID: "attempt-X"}
		first := fvRecv(t, q, o)
		require.Equal(t, []string{"g1-m1", "g1-m2", "g2-m1"}, fvBodies(first))
		c.advance(20 * time.Second)
		retry := fvRecv(t, q, o)
		require.Equal(t, first, retry, "a retry at +20s returns the same deliveries and handles")
		require.Equal(t, fifoq.Stats{InFlight: 3}, q.Stats())
		// The visibility timeout restarted at +20s: nothing at +30s, everything at +50s.
		got := fvRequireVisibleAfter(t, c, q, 30*time.Second, "visibility restarted by the retry")
		require.Equal(t, []string{"g1-m1", "g1-m2", "g2-m1"}, fvBodies(got))
	})
}

// TestFIFOAttemptIDReplayAfterTimeout checks spec 2.15.2: a retry within 5 minutes returns the same
// messages and handles even once their visibility timeout has ended (nobody received them since); they are
// in flight again and the handles delete them.
func TestFIFOAttemptIDReplayAfterTimeout(t *testing.T) {
	t.Parallel()
	fvEachClock(t, func(t *testing.T, c fvClock) {
		ctx := context.Background()
		q := fvNew(t, c, "attempt2.fifo", fifoq.WithVisibilityTimeout(10*time.Second))
		fvSend(t, q, "g", "m1")
		fvSend(t, q, "g", "m2")
		o := fifoq.ReceiveOptions{MaxMessages: 10, AttemptID: "retry-1"}
		first := fvRecv(t, q, o)
		require.Len(t, first, 2)
		c.advance(15 * time.Second)
		require.Equal(t, fifoq.Stats{Visible: 2}, q.Stats())
		retry := fvRecv(t, q, o)
		require.Equal(t, first, retry)
		require.Equal(t, fifoq.Stats{InFlight: 2}, q.Stats(), "the replayed messages are in flight again")
		fvRequireEmpty(t, q)
		for _, d := range retry {
			require.NoError(t, q.Delete(ctx, d.ReceiptHandle), "delete %s with the replayed handle", d.Body)
		}
		require.Equal(t, fifoq.Stats{}, q.Stats())
	})
}

// TestFIFOAttemptIDNotRetryable checks spec 2.15.3 (scenario 25): once a message the attempt returned was
// deleted, had its visibility changed or was received again, a retry with that id returns
// ErrAttemptNotRetryable and changes nothing.
func TestFIFOAttemptIDNotRetryable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		label  string
		modify func(t *testing.T, c fvClock, q *fifoq.Queue, ds []fifoq.Delivery)
	}{
		{"deleted", func(t *testing.T, _ fvClock, q *fifoq.Queue, ds []fifoq.Delivery) {
			require.NoError(t, q.Delete(context.Background(), ds[1].ReceiptHandle))
		}},
		{"visibility changed", func(t *testing.T, _ fvClock, q *fifoq.Queue, ds []fifoq.Delivery) {
			require.NoError(t, q.ChangeVisibility(context.Background(), ds[0].ReceiptHandle, time.Minute))
		}},
		{"visibility terminated", func(t *testing.T, _ fvClock, q *fifoq.Queue, ds []fifoq.Delivery) {
			require.NoError(t, q.ChangeVisibility(context.Background(), ds[1].ReceiptHandle, 0))
		}},
		{"received again", func(t *testing.T, c fvClock, q *fifoq.Queue, ds []fifoq.Delivery) {
			c.advance(10 * time.Second)
			require.Len(t, fvRecvN(t, q, 10), 2)
		}},
	} {
		t.Run(tc.label, func(t *testing.T) {
			t.Parallel()
			fvEachClock(t, func(t *testing.T, c fvClock) {
				q := fvNew(t, c, "notretry.fifo", fifoq.WithVisibilityTimeout(10*time.Second))
				fvSend(t, q, "g", "m1")
				fvSend(t, q, "g", "m2")
				o := fifoq.ReceiveOptions{MaxMessages: 10, AttemptID: "X"}
				ds := fvRecv(t, q, o)
				require.Len(t, ds, 2)
				tc.modify(t, c, q, ds)
				before := q.Stats()
				got, err := q.Receive(context.Background(), o)
				require.ErrorIs(t, err, fifoq.ErrAttemptNotRetryable, "retry after a message was %s: got %v", tc.label, fvBodies(got))
				require.Empty(t, got)
				require.Equal(t, before, q.Stats(), "the rejected retry changed nothing")
			})
		})
	}
}

// TestFIFOAttemptIDReceiveManyRetry checks that an attempt id a ReceiveMany used for more than 10 messages
// replays through a ReceiveMany with room for them, and that a retry with less room (Receive, or a smaller
// ReceiveMany) returns ErrAttemptNotRetryable and changes nothing, rather than overrunning its buffer.
func TestFIFOAttemptIDReceiveManyRetry(t *testing.T) {
	t.Parallel()
	fvEachClock(t, func(t *testing.T, c fvClock) {
		ctx := context.Background()
		q := fvNew(t, c, "many.fifo", fifoq.WithVisibilityTimeout(time.Minute))
		for i := range 30 {
			fvSend(t, q, "g", fmt.Sprint("m", i))
		}
		many := fifoq.ReceiveOptions{MaxMessages: 30, NoWaitTime: true, AttemptID: "big"}
		first, err := q.ReceiveMany(ctx, many)
		require.NoError(t, err)
		require.Len(t, first, 30)
		for _, o := range []fifoq.ReceiveOptions{
			{MaxMessages: 10, NoWaitTime: true, AttemptID: "big"},
			{MaxMessages: 20, NoWaitTime: true, AttemptID: "big"},
		} {
			before := q.Stats()
			got, err := q.ReceiveMany(ctx, o)
			require.ErrorIs(t, err, fifoq.ErrAttemptNotRetryable, "ReceiveMany of %d retrying 30: got %d", o.MaxMessages, len(got))
			require.Empty(t, got)
			require.Equal(t, "InvalidParameterValue", fifoq.ErrorCode(err))
			require.Contains(t, fifoq.ErrorMessage(err), "not retryable")
			require.Equal(t, before, q.Stats(), "the refused retry changed nothing")
		}
		got, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10, NoWaitTime: true, AttemptID: "big"})
		require.ErrorIs(t, err, fifoq.ErrAttemptNotRetryable, "Receive retrying 30: got %d", len(got))
		require.Empty(t, got)
		again, err := q.ReceiveMany(ctx, many)
		require.NoError(t, err)
		require.Equal(t, first, again, "a ReceiveMany with room for them all replays")
	})
}

// TestFIFOAttemptIDExpires checks spec 2.15.3: an attempt id can be replayed for 5 minutes after its receive;
// from then on a receive with it is a fresh receive (new handles), which the id then names.
func TestFIFOAttemptIDExpires(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		after  time.Duration
		replay bool
	}{
		{5*time.Minute - time.Second, true},
		{5 * time.Minute, false},
		{6 * time.Minute, false},
	} {
		t.Run(tc.after.String(), func(t *testing.T) {
			t.Parallel()
			fvEachClock(t, func(t *testing.T, c fvClock) {
				q := fvNew(t, c, "expire.fifo", fifoq.WithVisibilityTimeout(10*time.Second))
				fvSend(t, q, "g", "m")
				o := fifoq.ReceiveOptions{AttemptID: "X"}
				first := fvOnly(t, fvRecv(t, q, o))
				c.advance(tc.after)
				again := fvOnly(t, fvRecv(t, q, o))
				if tc.replay {
					require.Equal(t, first, again, "retry at +%v replays", tc.after)
					return
				}
				require.NotEqual(t, first.ReceiptHandle, again.ReceiptHandle, "at +%v the id is fresh: a new receive", tc.after)
				require.Equal(t, 2, again.ReceiveCount)
				c.advance(time.Second)
				require.Equal(t, again, fvOnly(t, fvRecv(t, q, o)), "the fresh receive is now what the id replays")
			})
		})
	}
}

// TestStandardIgnoresAttemptID checks spec 2.15.5: a standard queue ignores the receive request attempt id,
// even an invalid one; a second receive with it is an ordinary receive.
func TestStandardIgnoresAttemptID(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"X", "not valid: has spaces"} {
		t.Run(id, func(t *testing.T) {
			t.Parallel()
			q := fvNew(t, fvNewManual(), "std")
			fvSend(t, q, "", "m1")
			fvSend(t, q, "", "m2")
			o := fifoq.ReceiveOptions{AttemptID: id}
			first := fvOnly(t, fvRecv(t, q, o))
			second := fvOnly(t, fvRecv(t, q, o))
			require.Equal(t, []string{"m1", "m2"}, []string{first.Body, second.Body})
			fvRequireEmpty(t, q)
		})
	}
}

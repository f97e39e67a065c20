package fifoq_test

import (
	"context"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/stretchr/testify/require"
)

// This file holds the FIFO delivery tests (spec §2, 1.2.8, 1.4, 10.2) and the helpers that fifo_test.go,
// visibility_test.go and longpoll_test.go share. Every unexported top-level name starts with "fv".

// fvClock drives time for a scenario written once and run twice (style item 19): by the ManualClock the queue
// was given, or by sleeping inside a testing/synctest bubble, where the queue's default real clock is virtual.
type fvClock interface {
	// options gives a queue this clock.
	options() []fifoq.Option
	// now is the queue's time.
	now() time.Time
	// advance moves time forward by d and lets what it wakes run.
	advance(d time.Duration)
	// waitPolls returns once n long polls started in other goroutines are waiting.
	waitPolls(n int)
}

// fvManual drives a fifoq.ManualClock by hand.
type fvManual struct{ clk *fifoq.ManualClock }

func (c fvManual) options() []fifoq.Option { return []fifoq.Option{fifoq.WithClock(c.clk)} }
func (c fvManual) now() time.Time          { return c.clk.Now() }
func (c fvManual) advance(d time.Duration) { c.clk.Advance(d) }
func (c fvManual) waitPolls(n int)         { c.clk.WaitTimers(n) }

// fvBubble drives the virtual clock of the synctest bubble the test runs in.
type fvBubble struct{}

func (fvBubble) options() []fifoq.Option { return nil }
func (fvBubble) now() time.Time          { return time.Now() }
func (fvBubble) advance(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}
func (fvBubble) waitPolls(int) { synctest.Wait() }

// fvStart is where every manual clock starts.
var fvStart = time.Date(2025, 3, 28, 12, 0, 0, 0, time.UTC)

// fvNewManual returns a manual clock driver that the test never advances, for rules that do not depend on time.
func fvNewManual() fvManual { return fvManual{fifoq.NewManualClock(fvStart)} }

// fvEachClock runs f twice: inside a synctest bubble (where the queue must be built), then with a ManualClock.
// The ManualClock run is left out when the synctest run failed: a queue that misses a wake-up would block it
// for good, since nothing moves a manual clock on its own, and hide the synctest run's report.
func fvEachClock(t *testing.T, f func(t *testing.T, c fvClock)) {
	t.Helper()
	ok := t.Run("synctest", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) { f(t, fvBubble{}) })
	})
	if !ok {
		return
	}
	t.Run("ManualClock", func(t *testing.T) { f(t, fvNewManual()) })
}

// fvNew creates a queue on clock c.
func fvNew(t *testing.T, c fvClock, name string, opts ...fifoq.Option) *fifoq.Queue {
	t.Helper()
	all := append(c.options(), opts...)
	q, err := fifoq.New(name, all...)
	require.NoError(t, err, "New(%q)", name)
	return q
}

// fvSend sends body to group (the group is left empty on a standard queue when group is "").
func fvSend(t *testing.T, q *fifoq.Queue, group, body string) fifoq.SendResult {
	t.Helper()
	m := fifoq.Message{Body: body, GroupID: group}
	if q.FIFO() {
		m.DeduplicationID = body
	}
	r, err := q.Send(context.Background(), m)
	require.NoError(t, err, "Send(%q, group %q)", body, group)
	require.False(t, r.Duplicate, "Send(%q) was deduplicated", body)
	return r
}

// fvRecv receives with o and fails the test on an error.
func fvRecv(t *testing.T, q *fifoq.Queue, o fifoq.ReceiveOptions) []fifoq.Delivery {
	t.Helper()
	ds, err := q.Receive(context.Background(), o)
	require.NoError(t, err, "Receive(%+v)", o)
	return ds
}

// fvRecvN receives up to n messages with the queue's settings and no wait.
func fvRecvN(t *testing.T, q *fifoq.Queue, n int) []fifoq.Delivery {
	t.Helper()
	return fvRecv(t, q, fifoq.ReceiveOptions{MaxMessages: n})
}

// fvBodies lists the bodies of ds, in order.
func fvBodies(ds []fifoq.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Body
	}
	return out
}

// fvOnly returns the single delivery of ds.
func fvOnly(t *testing.T, ds []fifoq.Delivery) fifoq.Delivery {
	t.Helper()
	require.Len(t, ds, 1, "want exactly one delivery, got %v", fvBodies(ds))
	return ds[0]
}

// fvHandle returns the receipt handle of the delivery with body, from ds.
func fvHandle(t *testing.T, ds []fifoq.Delivery, body string) string {
	t.Helper()
	for _, d := range ds {
		if d.Body == body {
			return d.ReceiptHandle
		}
	}
	require.FailNow(t, "no delivery with body", "want %q in %v", body, fvBodies(ds))
	return ""
}

// fvRequireEmpty asserts that a receive of 10 returns nothing.
func fvRequireEmpty(t *testing.T, q *fifoq.Queue, msgAndArgs ...any) {
	t.Helper()
	ds := fvRecvN(t, q, 10)
	require.Empty(t, fvBodies(ds), msgAndArgs...)
}

// fvRequireTime asserts that got is the instant want.
func fvRequireTime(t *testing.T, want, got time.Time, what string) {
	t.Helper()
	require.True(t, want.Equal(got), "%s: got %v, want %v", what, got, want)
}

// fvByGroup splits deliveries' bodies by group, keeping their order.
func fvByGroup(ds []fifoq.Delivery) map[string][]string {
	out := map[string][]string{}
	for _, d := range ds {
		out[d.GroupID] = append(out[d.GroupID], d.Body)
	}
	return out
}

// fvRequireContiguous asserts that the messages of each group are next to each other in ds (spec 2.6).
func fvRequireContiguous(t *testing.T, ds []fifoq.Delivery) {
	t.Helper()
	seen := map[string]bool{}
	for i, d := range ds {
		if i > 0 && ds[i-1].GroupID == d.GroupID {
			continue
		}
		require.False(t, seen[d.GroupID], "group %q is split in %v", d.GroupID, fvBodies(ds))
		seen[d.GroupID] = true
	}
}

// TestFIFOGroupFillFirst checks spec 2.6 (scenario 14): a receive takes as many messages of one group as it
// can, in order, before it takes another group's.
func TestFIFOGroupFillFirst(t *testing.T) {
	t.Parallel()
	q := fvNew(t, fvNewManual(), "fill.fifo")
	fvSend(t, q, "g1", "g1-m1")
	fvSend(t, q, "g2", "g2-m1")
	fvSend(t, q, "g1", "g1-m2")
	fvSend(t, q, "g1", "g1-m3")
	ds := fvRecvN(t, q, 10)
	require.Equal(t, []string{"g1-m1", "g1-m2", "g1-m3", "g2-m1"}, fvBodies(ds),
		"sent g1-m1, g2-m1, g1-m2, g1-m3, received 10")
	fvRequireContiguous(t, ds)
}

// TestFIFOPartialTakeBlocksRest checks spec 2.6 and 2.8 (scenario 15): a receive that takes only part of a
// group leaves the rest of the group blocked behind the in-flight messages; other groups stay receivable.
func TestFIFOPartialTakeBlocksRest(t *testing.T) {
	t.Parallel()
	q := fvNew(t, fvNewManual(), "partial.fifo")
	for i := 1; i <= 4; i++ {
		fvSend(t, q, "g1", fmt.Sprintf("g1-m%d", i))
	}
	fvSend(t, q, "g2", "g2-m1")
	require.Equal(t, []string{"g1-m1", "g1-m2"}, fvBodies(fvRecvN(t, q, 2)))
	require.Equal(t, []string{"g2-m1"}, fvBodies(fvRecvN(t, q, 1)), "g1-m3 waits behind g1-m1, g1-m2 in flight")
	fvRequireEmpty(t, q, "g1-m3, g1-m4 stay blocked")
}

// TestFIFOGroupBlocking checks spec 2.8 (scenario 12): with a group's first message in flight and its second
// visible, a receive returns nothing of that group but does return other groups' messages.
func TestFIFOGroupBlocking(t *testing.T) {
	t.Parallel()
	q := fvNew(t, fvNewManual(), "block.fifo")
	fvSend(t, q, "A", "A-m1")
	require.Equal(t, []string{"A-m1"}, fvBodies(fvRecvN(t, q, 1)))
	fvSend(t, q, "A", "A-m2")
	fvSend(t, q, "B", "B-m1")
	fvSend(t, q, "B", "B-m2")
	require.Equal(t, []string{"B-m1", "B-m2"}, fvBodies(fvRecvN(t, q, 10)), "A-m1 in flight blocks A-m2")
}

// TestFIFOVisiblePrefix checks spec 2.9 (scenario 16): three messages [A, B, C] of one group are received
// together with VT 1s and one of them is extended to 4s; at 2.5s a receive returns only the messages before
// the first one still in flight. The other group, waiting since its send, comes first by default (spec 2.12),
// last by the oldest message.
func TestFIFOVisiblePrefix(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		extend string
		want   []string
	}{
		{extend: "A", want: nil},
		{extend: "B", want: []string{"A"}},
		{extend: "C", want: []string{"A", "B"}},
	} {
		for _, order := range []fifoq.GroupOrder{fifoq.GroupOrderAvailable, fifoq.GroupOrderOldestMessage} {
			t.Run(fmt.Sprintf("extend %s/%v", tc.extend, order), func(t *testing.T) {
				t.Parallel()
				fvEachClock(t, func(t *testing.T, c fvClock) {
					q := fvNew(t, c, "prefix.fifo", fifoq.WithGroupOrder(order))
					for _, b := range []string{"A", "B", "C"} {
						fvSend(t, q, "g", b)
					}
					fvSend(t, q, "other", "X")
					ds := fvRecv(t, q, fifoq.ReceiveOptions{MaxMessages: 3, VisibilityTimeout: time.Second})
					require.Equal(t, []string{"A", "B", "C"}, fvBodies(ds))
					require.NoError(t, q.ChangeVisibility(context.Background(), fvHandle(t, ds, tc.extend), 4*time.Second))
					c.advance(2500 * time.Millisecond)
					got := fvBodies(fvRecvN(t, q, 10))
					want := append([]string{"X"}, tc.want...) // X waited; g came back at 1s
					if order == fifoq.GroupOrderOldestMessage {
						want = append(slices.Clone(tc.want), "X")
					}
					require.Equal(t, want, got,
						"extended %s to 4s, received at 2.5s: want the visible prefix %v and the other group", tc.extend, tc.want)
				})
			})
		}
	}
}

// TestFIFOTerminatedHeadWhileTailInFlight checks spec 2.9 (scenario 17): after ChangeVisibility(head, 0) the
// head is receivable again while the message after it is still in flight, and that message is never returned.
// The group g1 comes back behind g2, which was waiting (spec 2.12), but by the oldest message.
func TestFIFOTerminatedHeadWhileTailInFlight(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		order fifoq.GroupOrder
		want  []string
	}{
		{fifoq.GroupOrderAvailable, []string{"g2-m1", "g1-m1"}},
		{fifoq.GroupOrderOldestMessage, []string{"g1-m1", "g2-m1"}},
	} {
		t.Run(tc.order.String(), func(t *testing.T) {
			q := fvNew(t, fvNewManual(), "terminate.fifo", fifoq.WithGroupOrder(tc.order))
			fvSend(t, q, "g1", "g1-m1")
			fvSend(t, q, "g1", "g1-m2")
			fvSend(t, q, "g1", "g1-m3")
			fvSend(t, q, "g2", "g2-m1")
			ds := fvRecv(t, q, fifoq.ReceiveOptions{MaxMessages: 2, VisibilityTimeout: 30 * time.Second})
			require.Equal(t, []string{"g1-m1", "g1-m2"}, fvBodies(ds))
			require.NoError(t, q.ChangeVisibility(context.Background(), ds[0].ReceiptHandle, 0))
			got := fvRecvN(t, q, 3)
			require.Equal(t, tc.want, fvBodies(got), "g1-m1 is visible again, g1-m2 still in flight")
			require.Equal(t, 2, got[slices.IndexFunc(got, func(d fifoq.Delivery) bool { return d.Body == "g1-m1" })].ReceiveCount)
			fvRequireEmpty(t, q)
		})
	}
}

// TestFIFODeleteUnblocks checks spec 2.9 (scenarios 18 and 19): deleting only the first of a group's in-flight
// messages keeps the group blocked; deleting all of them unblocks it at once, in order.
func TestFIFODeleteUnblocks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := fvNew(t, fvNewManual(), "delete.fifo")
	for i := 1; i <= 4; i++ {
		fvSend(t, q, "g1", fmt.Sprintf("g1-m%d", i))
	}
	fvSend(t, q, "g2", "g2-m1")
	ds := fvRecvN(t, q, 2)
	require.Equal(t, []string{"g1-m1", "g1-m2"}, fvBodies(ds))

	// Scenario 18: a partial delete keeps the group blocked at g1-m2.
	require.NoError(t, q.Delete(ctx, ds[0].ReceiptHandle))
	require.Equal(t, []string{"g2-m1"}, fvBodies(fvRecvN(t, q, 10)), "g1-m2 still in flight blocks g1-m3")

	// Scenario 19: deleting the last in-flight message unblocks the group immediately.
	require.NoError(t, q.Delete(ctx, ds[1].ReceiptHandle))
	require.Equal(t, []string{"g1-m3", "g1-m4"}, fvBodies(fvRecvN(t, q, 10)))
}

// TestFIFONewSendDoesNotUnblock checks spec 2.10 (scenario 13): a message sent to a group with a message in
// flight waits, even for a long poll, until the in-flight one is deleted; then it is delivered at once.
func TestFIFONewSendDoesNotUnblock(t *testing.T) {
	t.Parallel()
	fvEachClock(t, func(t *testing.T, c fvClock) {
		ctx := context.Background()
		q := fvNew(t, c, "newsend.fifo")
		fvSend(t, q, "A", "m1")
		m1 := fvOnly(t, fvRecvN(t, q, 1))
		fvSend(t, q, "A", "m2")

		start := c.now()
		poll := fvStartPoll(ctx, c, q, fifoq.ReceiveOptions{MaxMessages: 10, WaitTime: 20 * time.Second})
		c.waitPolls(1)
		c.advance(5 * time.Second)
		fvRequirePending(t, poll, "m2 was sent behind m1, which is in flight")
		require.NoError(t, q.Delete(ctx, m1.ReceiptHandle))
		r := <-poll
		require.NoError(t, r.err)
		require.Equal(t, []string{"m2"}, fvBodies(r.ds))
		require.Equal(t, 5*time.Second, r.at.Sub(start), "the delete at 5s unblocks the group at once")
	})
}

// TestFIFORedeliveryOrder checks spec 2.11 (scenario 20): messages whose visibility timeout ends are
// redelivered in their original order, each with ReceiveCount 2.
func TestFIFORedeliveryOrder(t *testing.T) {
	t.Parallel()
	fvEachClock(t, func(t *testing.T, c fvClock) {
		q := fvNew(t, c, "redeliver.fifo", fifoq.WithVisibilityTimeout(time.Second))
		for _, b := range []string{"m1", "m2", "m3"} {
			fvSend(t, q, "g", b)
		}
		first := fvRecvN(t, q, 10)
		require.Equal(t, []string{"m1", "m2", "m3"}, fvBodies(first))
		c.advance(time.Second)
		again := fvRecvN(t, q, 10)
		require.Equal(t, []string{"m1", "m2", "m3"}, fvBodies(again))
		for i, d := range again {
			require.Equal(t, 2, d.ReceiveCount, "%s", d.Body)
			require.Equal(t, first[i].MessageID, d.MessageID, "%s", d.Body)
		}
	})
}

// TestFIFORedeliveredBeforeRestOfGroup checks spec 2.11: a message that becomes visible again is its group's
// head; it comes back before the group's later messages, and a head that is still in flight holds back
// later messages that became visible before it.
func TestFIFORedeliveredBeforeRestOfGroup(t *testing.T) {
	t.Parallel()
	fvEachClock(t, func(t *testing.T, c fvClock) {
		ctx := context.Background()
		q := fvNew(t, c, "head.fifo", fifoq.WithVisibilityTimeout(time.Second))
		for _, b := range []string{"m1", "m2", "m3", "m4"} {
			fvSend(t, q, "g", b)
		}
		ds := fvRecvN(t, q, 3)
		require.Equal(t, []string{"m1", "m2", "m3"}, fvBodies(ds))
		require.NoError(t, q.ChangeVisibility(ctx, ds[0].ReceiptHandle, 5*time.Second))
		c.advance(time.Second)
		fvRequireEmpty(t, q, "m2, m3 are visible again at 1s, but m1 is in flight until 5s")
		c.advance(4 * time.Second)
		got := fvRecvN(t, q, 10)
		require.Equal(t, []string{"m1", "m2", "m3", "m4"}, fvBodies(got))
		require.Equal(t, []int{2, 2, 2, 1}, []int{got[0].ReceiveCount, got[1].ReceiveCount, got[2].ReceiveCount, got[3].ReceiveCount})
	})
}

// TestFIFOInterGroupOldestHeadFirst checks GroupOrderOldestMessage: groups are served by the send order of
// their head (oldest head first), including a head that became visible again.
func TestFIFOInterGroupOldestHeadFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := fvNew(t, fvNewManual(), "intergroup.fifo", fifoq.WithGroupOrder(fifoq.GroupOrderOldestMessage))
	fvSend(t, q, "g1", "a1")
	fvSend(t, q, "g2", "b1")
	fvSend(t, q, "g3", "c1")
	fvSend(t, q, "g1", "a2")
	fvSend(t, q, "g4", "d1")

	a1 := fvOnly(t, fvRecvN(t, q, 1))
	require.Equal(t, "a1", a1.Body)
	require.Equal(t, "b1", fvOnly(t, fvRecvN(t, q, 1)).Body)
	// a1 visible again: g1's head is again the oldest.
	require.NoError(t, q.ChangeVisibility(ctx, a1.ReceiptHandle, 0))
	a1 = fvOnly(t, fvRecvN(t, q, 1))
	require.Equal(t, "a1", a1.Body, "g1's head a1 (sent first) before c1")
	// a1 deleted: g1's head is a2, sent after c1.
	require.NoError(t, q.Delete(ctx, a1.ReceiptHandle))
	require.Equal(t, []string{"c1", "a2", "d1"}, fvBodies(fvRecvN(t, q, 10)))
}

// TestFIFOZeroVisibilityReceive checks spec 1.2.8 (scenario 21): with a visibility timeout of 0 a receive does
// not block the group, and the next receive returns every message again, with each group's order kept.
func TestFIFOZeroVisibilityReceive(t *testing.T) {
	t.Parallel()
	fvEachClock(t, func(t *testing.T, c fvClock) {
		q := fvNew(t, c, "vt0.fifo", fifoq.WithVisibilityTimeout(0))
		for _, m := range [][2]string{{"g1", "g1-m1"}, {"g1", "g1-m2"}, {"g2", "g2-m1"}, {"g2", "g2-m2"}} {
			fvSend(t, q, m[0], m[1])
		}
		ds := fvRecvN(t, q, 3)
		require.Equal(t, []string{"g1-m1", "g1-m2", "g2-m1"}, fvBodies(ds))
		again := fvRecvN(t, q, 10)
		require.Len(t, again, 4, "VT 0: every message is visible again, got %v", fvBodies(again))
		require.Equal(t, map[string][]string{"g1": {"g1-m1", "g1-m2"}, "g2": {"g2-m1", "g2-m2"}}, fvByGroup(again))
		fvRequireContiguous(t, again)
		require.Equal(t, fifoq.Stats{Visible: 4}, q.Stats())
	})
}

// fvUUID is the shape of a MessageID (spec 1.4.1).
var fvUUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// fvDecimal is the shape of a SequenceNumber (spec 1.4.5).
var fvDecimal = regexp.MustCompile(`^[0-9]+$`)

// TestIdentityMessageIDAndSequenceNumber checks spec 1.4.1 and 1.4.5 (scenario 55): MessageIDs are
// UUID-shaped and distinct; on FIFO, SequenceNumbers are decimal and strictly increase within a group (and
// the delivery carries the send's); on standard they are empty.
func TestIdentityMessageIDAndSequenceNumber(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"ids", "ids.fifo"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			q := fvNew(t, fvNewManual(), name)
			ids := map[string]string{} // MessageID -> body
			var last [2]*big.Int       // per group
			for i := range 20 {
				g := i % 2
				body := fmt.Sprintf("g%d-m%d", g, i)
				r := fvSend(t, q, fmt.Sprintf("g%d", g), body)
				require.Regexp(t, fvUUID, r.MessageID, body)
				require.NotContains(t, ids, r.MessageID, "MessageID reused")
				ids[r.MessageID] = body
				if !q.FIFO() {
					require.Empty(t, r.SequenceNumber, "standard send of %s", body)
					continue
				}
				require.Regexp(t, fvDecimal, r.SequenceNumber, body)
				n, ok := new(big.Int).SetString(r.SequenceNumber, 10)
				require.True(t, ok)
				if last[g] != nil {
					require.Equal(t, 1, n.Cmp(last[g]), "%s: sequence number %s after %s", body, n, last[g])
				}
				last[g] = n
			}
			seen := 0
			for range 2 {
				for _, d := range fvRecvN(t, q, 10) {
					require.Equal(t, ids[d.MessageID], d.Body, "delivery's MessageID is the send's")
					delete(ids, d.MessageID)
					require.Regexp(t, fvUUID, d.MessageID)
					if q.FIFO() {
						require.Regexp(t, fvDecimal, d.SequenceNumber)
					} else {
						require.Empty(t, d.SequenceNumber)
					}
					seen++
				}
			}
			require.Equal(t, 20, seen)
		})
	}
}

// TestIdentityDeliverySequenceNumberIsSends checks spec 1.4.5: a FIFO delivery carries the SequenceNumber
// its send returned.
func TestIdentityDeliverySequenceNumberIsSends(t *testing.T) {
	t.Parallel()
	q := fvNew(t, fvNewManual(), "seq.fifo")
	want := map[string]string{}
	for i := range 5 {
		b := fmt.Sprintf("m%d", i)
		want[b] = fvSend(t, q, "g", b).SequenceNumber
	}
	for _, d := range fvRecvN(t, q, 10) {
		require.Equal(t, want[d.Body], d.SequenceNumber, d.Body)
	}
}

// TestIdentityDeliveryAttributes checks spec 1.4.3 and 1.4.4: every delivery has ReceiveCount (1, then 2),
// SentAt (the send's time) and FirstReceivedAt (the first receive's time, constant afterwards).
func TestIdentityDeliveryAttributes(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"attrs", "attrs.fifo"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fvEachClock(t, func(t *testing.T, c fvClock) {
				q := fvNew(t, c, name, fifoq.WithVisibilityTimeout(10*time.Second))
				sent := c.now()
				fvSend(t, q, "g", "m")
				c.advance(3 * time.Second)
				firstAt := c.now()
				d := fvOnly(t, fvRecvN(t, q, 1))
				require.Equal(t, 1, d.ReceiveCount)
				fvRequireTime(t, sent, d.SentAt, "SentAt")
				fvRequireTime(t, firstAt, d.FirstReceivedAt, "FirstReceivedAt, first receive")
				for i := 2; i <= 3; i++ {
					c.advance(10 * time.Second)
					d = fvOnly(t, fvRecvN(t, q, 1))
					require.Equal(t, i, d.ReceiveCount, "receive %d", i)
					fvRequireTime(t, sent, d.SentAt, "SentAt")
					fvRequireTime(t, firstAt, d.FirstReceivedAt, "FirstReceivedAt after a later receive")
				}
			})
		})
	}
}

// TestFIFOStatsCountBlockedAsVisible checks spec 10.2 (scenario 56): FIFO messages waiting behind an in-flight
// message count as Visible; only received ones count as InFlight.
func TestFIFOStatsCountBlockedAsVisible(t *testing.T) {
	t.Parallel()
	fvEachClock(t, func(t *testing.T, c fvClock) {
		q := fvNew(t, c, "stats.fifo", fifoq.WithVisibilityTimeout(30*time.Second))
		for _, g := range []string{"g1", "g2", "g3"} {
			fvSend(t, q, g, g+"-m1")
			fvSend(t, q, g, g+"-m2")
		}
		require.Equal(t, "g1-m1", fvOnly(t, fvRecvN(t, q, 1)).Body)
		require.Equal(t, "g2-m1", fvOnly(t, fvRecvN(t, q, 1)).Body)
		require.Equal(t, fifoq.Stats{Visible: 4, InFlight: 2}, q.Stats(), "after one receive from g1 and one from g2")
		c.advance(30 * time.Second)
		require.Equal(t, fifoq.Stats{Visible: 6}, q.Stats(), "after the visibility timeout")
	})
}

// TestFIFOStatsReceiveFour checks spec 10.2: 5 messages (g1 x3, g2, g3), a receive of 4 leaves Visible 1.
func TestFIFOStatsReceiveFour(t *testing.T) {
	t.Parallel()
	q := fvNew(t, fvNewManual(), "stats4.fifo")
	for _, m := range [][2]string{{"g1", "a"}, {"g1", "b"}, {"g1", "c"}, {"g2", "d"}, {"g3", "e"}} {
		fvSend(t, q, m[0], m[1])
	}
	require.Len(t, fvRecvN(t, q, 4), 4)
	require.Equal(t, fifoq.Stats{Visible: 1, InFlight: 4}, q.Stats())
}

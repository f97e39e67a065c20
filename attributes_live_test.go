package fifoq_test

// Tests of SetAttributes on a live queue: visibility, wait time, size, deduplication and redrive apply to the next call.

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// TestAtVisibilityTimeoutAppliesToNextReceive checks spec 1.2.1 with SetAttributes: a new visibility timeout
// applies to the next receive; a message already in flight keeps the timeout it was received with.
func TestAtVisibilityTimeoutAppliesToNextReceive(t *testing.T) {
	t.Parallel()
	for _, k := range atKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			atEachClock(t, func(t *testing.T, c *atClock) {
				q := atNew(t, c, atName("at-vt", k.fifo))
				atSend(t, q, "g1", "a")
				atSend(t, q, "g2", "b")
				require.Equal(t, []string{"a"}, atBodies(atRecv(t, q, 1)))
				aAt := c.now().Add(30 * time.Second)
				atSet(t, q, func(a *fifoq.Attributes) { a.VisibilityTimeout = 5 * time.Minute })
				atRequireTime(t, aAt, atSnap(t, q, "a").VisibleAt, "a keeps its 30s")
				require.Equal(t, []string{"b"}, atBodies(atRecv(t, q, 1)))
				atRequireTime(t, c.now().Add(5*time.Minute), atSnap(t, q, "b").VisibleAt, "b gets 5m")
				c.advance(30*time.Second - time.Nanosecond)
				require.Empty(t, atRecv(t, q, 10), "at 30s-1ns")
				c.advance(time.Nanosecond)
				ds := atRecv(t, q, 10)
				require.Equal(t, []string{"a"}, atBodies(ds), "at 30s")
				require.Equal(t, 2, ds[0].ReceiveCount)
				atRequireTime(t, c.now().Add(5*time.Minute), atSnap(t, q, "a").VisibleAt, "a's second receive gets 5m")
				atSet(t, q, func(a *fifoq.Attributes) { a.VisibilityTimeout = 0 })
				c.advance(5*time.Minute - 30*time.Second - time.Nanosecond)
				require.Empty(t, atRecv(t, q, 10), "at 5m-1ns")
				c.advance(time.Nanosecond)
				ds = atRecv(t, q, 10)
				require.Equal(t, []string{"b"}, atBodies(ds), "at 5m")
				require.Equal(t, fifoq.StateVisible, atSnap(t, q, "b").State, "received with a timeout of 0")
			})
		})
	}
}

// TestAtReceiveWaitTimeAppliesToNextReceive checks spec 1.5.1 with SetAttributes: a receive without a wait
// time takes the queue's receive wait time as it is at the call.
func TestAtReceiveWaitTimeAppliesToNextReceive(t *testing.T) {
	t.Parallel()
	for _, k := range atKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				q, err := fifoq.New(atName("at-wait", k.fifo))
				require.NoError(t, err)
				for _, wait := range []time.Duration{0, 20 * time.Second, 5 * time.Second, 0} {
					atSet(t, q, func(a *fifoq.Attributes) { a.ReceiveWaitTime = wait })
					start := time.Now()
					require.Empty(t, atRecv(t, q, 1))
					require.Equal(t, wait, time.Since(start), "an empty receive with the queue's wait of %v", wait)
				}
			})
		})
	}
}

// TestAtMaxMessageSizeAppliesToNextSend checks spec 7.1.2 with SetAttributes: the next Send and SendBatch are
// checked against the new maximum size, and a rejected message is not stored.
func TestAtMaxMessageSizeAppliesToNextSend(t *testing.T) {
	t.Parallel()
	for _, k := range atKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			q := atNew(t, atManual(), atName("at-size", k.fifo))
			big := strings.Repeat("b", 1025)
			atSendMsg(t, q, atMsg(q, "g", big))
			atSet(t, q, func(a *fifoq.Attributes) { a.MaxMessageSize = 1024 })
			_, err := q.Send(ctx, atMsg(q, "g", big+"2"))
			atRequireRejected(t, err, fifoq.ErrMessageTooLarge, "Send of 1025 bytes under a maximum of 1024")
			_, err = q.SendBatch(ctx, []fifoq.Message{atMsg(q, "g", big+"3")})
			atRequireRejected(t, err, fifoq.ErrMessageTooLarge, "SendBatch of 1025 bytes under a maximum of 1024")
			edge := strings.Repeat("e", 1024)
			atSendMsg(t, q, atMsg(q, "g", edge))
			require.Equal(t, []string{big, edge}, atStored(q))
			atSet(t, q, func(a *fifoq.Attributes) { a.MaxMessageSize = 2048 })
			atSendMsg(t, q, atMsg(q, "g", big+"4"))
			require.Equal(t, []string{big, edge, big + "4"}, atStored(q))
		})
	}
}

// TestAtContentBasedDeduplicationToggle checks spec 3.12 and 3.1: content-based deduplication can be turned
// on and off on a FIFO queue; off, a send without a deduplication id fails with ErrMissingDeduplicationID
// (in SendBatch the whole call); on, it passes and duplicates by body are dropped.
func TestAtContentBasedDeduplicationToggle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := atNew(t, atManual(), "at-cbd.fifo")
	noID := fifoq.Message{Body: "body", GroupID: "g"}
	_, err := q.Send(ctx, noID)
	atRequireRejected(t, err, fifoq.ErrMissingDeduplicationID, "Send without an id, content-based deduplication off")

	atSet(t, q, func(a *fifoq.Attributes) { a.ContentBasedDeduplication = true })
	atSendMsg(t, q, noID)
	r, err := q.Send(ctx, noID)
	require.NoError(t, err)
	require.True(t, r.Duplicate, "the same body again is a duplicate by its SHA-256")
	_, err = q.SendBatch(ctx, []fifoq.Message{{Body: "batched", GroupID: "g"}})
	require.NoError(t, err)

	atSet(t, q, func(a *fifoq.Attributes) { a.ContentBasedDeduplication = false })
	_, err = q.Send(ctx, fifoq.Message{Body: "other", GroupID: "g"})
	atRequireRejected(t, err, fifoq.ErrMissingDeduplicationID, "Send without an id after turning it off")
	_, err = q.SendBatch(ctx, []fifoq.Message{{Body: "ok", GroupID: "g", DeduplicationID: "id"}, {Body: "other", GroupID: "g"}})
	atRequireRejected(t, err, fifoq.ErrMissingDeduplicationID, "SendBatch with an entry without an id after turning it off")
	atSendMsg(t, q, fifoq.Message{Body: "other", GroupID: "g", DeduplicationID: "explicit"})
	require.Equal(t, []string{"body", "batched", "other"}, atStored(q))
}

// TestAtDeduplicationScopeAppliesToNextSend checks spec 3.6, 3.7 with SetAttributes: a send after the change
// is deduplicated by the new scope.
func TestAtDeduplicationScopeAppliesToNextSend(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := atNew(t, atManual(), "at-scope.fifo")
	send := func(group, id, body string) bool {
		t.Helper()
		r, err := q.Send(ctx, fifoq.Message{Body: body, GroupID: group, DeduplicationID: id})
		require.NoError(t, err)
		return r.Duplicate
	}
	require.False(t, send("g1", "d", "1"))
	require.True(t, send("g2", "d", "2"), "scope queue: the same id in another group is a duplicate")
	atSet(t, q, func(a *fifoq.Attributes) { a.DeduplicationScope = fifoq.DeduplicationScopeMessageGroup })
	require.False(t, send("g1", "e", "3"))
	require.False(t, send("g2", "e", "4"), "scope messageGroup: the same id in another group is new")
	require.True(t, send("g2", "e", "5"), "scope messageGroup: the same id in the same group is a duplicate")
	require.False(t, send("g3", "d", "6"), "scope messageGroup: d, seen under scope queue, does not count")
	atSet(t, q, func(a *fifoq.Attributes) { a.DeduplicationScope = fifoq.DeduplicationScopeQueue })
	require.True(t, send("g4", "d", "7"), "back to scope queue: d, seen under it within 5 minutes, counts again (README)")
	require.Equal(t, []string{"1", "3", "4", "6"}, atStored(q))
}

// TestAtZeroScopeMeansQueue checks the documented zero DeduplicationScope of Attributes: SetAttributes takes
// it as DeduplicationScopeQueue, on a FIFO queue (spec 3.6) as on a standard one (where it is no FIFO-only
// attribute, 3.12).
func TestAtZeroScopeMeansQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, k := range atKinds {
		var opts []fifoq.Option
		if k.fifo {
			opts = append(opts, fifoq.WithDeduplicationScope(fifoq.DeduplicationScopeMessageGroup))
		}
		q := atNew(t, atManual(), atName("at-scope0", k.fifo), opts...)
		a := q.Attributes()
		a.DeduplicationScope = 0
		require.NoError(t, q.SetAttributes(a), "%s: SetAttributes with DeduplicationScope 0", k.name)
		require.Equal(t, fifoq.DeduplicationScopeQueue, q.Attributes().DeduplicationScope, k.name)
		if k.fifo {
			_, err := q.Send(ctx, fifoq.Message{Body: "1", GroupID: "g1", DeduplicationID: "d"})
			require.NoError(t, err)
			r, err := q.Send(ctx, fifoq.Message{Body: "2", GroupID: "g2", DeduplicationID: "d"})
			require.NoError(t, err)
			require.True(t, r.Duplicate, "scope queue: the same id in another group is a duplicate")
		}
	}
}

// TestAtRedriveOnLiveQueue checks spec 6.1, 6.3 with SetAttributes: a redrive policy set on a queue in use
// moves a message on the receive after maxReceiveCount; removed, nothing moves; switched, messages move to
// the new DLQ. A queue is a DLQ while some queue's policy names it (6.8, 6.9.1).
func TestAtRedriveOnLiveQueue(t *testing.T) {
	t.Parallel()
	for _, k := range atKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			c := atManual()
			d1 := atNew(t, c, atName("at-live-d1", k.fifo))
			d2 := atNew(t, c, atName("at-live-d2", k.fifo),
				fifoq.WithRedriveAllowPolicy(fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveByQueue,
					Sources: []string{atName("at-live-src", k.fifo), atName("at-live-src2", k.fifo)}}))
			src := atNew(t, c, atName("at-live-src", k.fifo), fifoq.WithVisibilityTimeout(0))
			recvOne := func(body string, count int) {
				t.Helper()
				ds := atRecv(t, src, 10)
				require.Equal(t, []string{body}, atBodies(ds))
				require.Equal(t, count, ds[0].ReceiveCount, "ReceiveCount of %s", body)
			}

			m1 := atSend(t, src, "g", "m1")
			for i := 1; i <= 3; i++ {
				recvOne("m1", i)
			}
			atRequireNotDLQ(t, d1)
			atSet(t, src, func(a *fifoq.Attributes) { a.DeadLetterQueue, a.MaxReceiveCount = d1, 4 })
			require.NoError(t, src.SetAttributes(src.Attributes()))
			recvOne("m1", 4)
			require.Empty(t, atRecv(t, src, 10), "the 5th receive moves m1")
			require.Equal(t, []string{"m1"}, atStored(d1))
			s := atSnap(t, d1, "m1")
			require.Equal(t, m1.MessageID, s.MessageID)
			require.Equal(t, src.Name(), s.DeadLetterSource)
			require.Equal(t, 4, s.ReceiveCount)

			atSet(t, src, func(a *fifoq.Attributes) { a.DeadLetterQueue, a.MaxReceiveCount = nil, 0 })
			atRequireNotDLQ(t, d1)
			atSend(t, src, "g", "m2")
			for i := 1; i <= 6; i++ {
				recvOne("m2", i)
			}
			require.Equal(t, []string{"m1"}, atStored(d1), "without a policy nothing moves")

			atSet(t, src, func(a *fifoq.Attributes) { a.DeadLetterQueue, a.MaxReceiveCount = d1, 2 })
			require.Empty(t, atRecv(t, src, 10), "m2, received 6 times, moves on the next receive")
			require.Equal(t, []string{"m1", "m2"}, atStored(d1))

			atSet(t, src, func(a *fifoq.Attributes) { a.DeadLetterQueue, a.MaxReceiveCount = d2, 1 })
			atRequireNotDLQ(t, d1)
			atSend(t, src, "g", "m3")
			recvOne("m3", 1)
			require.Empty(t, atRecv(t, src, 10), "m3 moves to the new DLQ")
			require.Equal(t, []string{"m3"}, atStored(d2))
			require.Equal(t, []string{"m1", "m2"}, atStored(d1))
			st := atRequireDLQ(t, d2) // back to src
			require.Equal(t, 1, st.Moved)
			require.Equal(t, []string{"m3"}, atStored(src))
			require.Empty(t, atStored(d2))

			src2 := atNew(t, c, atName("at-live-src2", k.fifo), fifoq.WithDeadLetterQueue(d2, 1))
			atSet(t, src, func(a *fifoq.Attributes) { a.DeadLetterQueue, a.MaxReceiveCount = nil, 0 })
			atRequireDLQ(t, d2) // still src2's
			atSet(t, src2, func(a *fifoq.Attributes) { a.DeadLetterQueue, a.MaxReceiveCount = nil, 0 })
			atRequireNotDLQ(t, d2)
		})
	}
}

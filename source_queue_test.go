package fifoq_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// Tests of what *Queue and ConsumerOptions gained for the optional interfaces of a Source and the deadlines
// of the calls to it: Queue.ReceiveMany, Queue.VisibilityTimeout, ConsumerOptions.SourceTimeout.

var (
	_ fifoq.VisibilitySource  = (*fifoq.Queue)(nil)
	_ fifoq.ReceiveManySource = (*fifoq.Queue)(nil)
	_ fifoq.StatsSource       = (*fifoq.Queue)(nil)
)

// srcMany is a bcSource that can receive more than 10 messages in one call, as a *Queue can.
type srcMany struct{ bcSource }

func (s *srcMany) ReceiveMany(ctx context.Context, o fifoq.ReceiveOptions) ([]fifoq.Delivery, error) {
	s.mu.Lock()
	s.receives++
	s.mu.Unlock()
	return s.q.ReceiveMany(ctx, o)
}

// A FIFO batch holds more than 10 messages of one group from any source that can receive them in one call,
// in one call; from a source that cannot, 10. Before, only a *Queue was asked for more than 10.
func TestBatcherReceiveManySource(t *testing.T) {
	for _, tc := range []struct {
		name     string
		src      func(q *fifoq.Queue) fifoq.Source
		want     int
		receives int // of the wrapper, when it counts them
	}{
		{"Queue", func(q *fifoq.Queue) fifoq.Source { return q }, 25, -1},
		{"ReceiveManySource", func(q *fifoq.Queue) fifoq.Source { return &srcMany{bcSource{q: q}} }, 25, 1},
		{"Source", func(q *fifoq.Queue) fifoq.Source { return &bcSource{q: q} }, 10, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := bcNewQueue(t, "src-many.fifo")
				bcSend(t, q, "g", bcNumbered("m", 30)...)
				src := tc.src(q)
				b, err := fifoq.NewBatcher(src, fifoq.BatchOptions{Size: 25})
				require.NoError(t, err)
				batch, err := b.Next(t.Context())
				require.NoError(t, err)
				require.Equal(t, bcNumbered("m", 30)[:tc.want], bcBodies(batch))
				switch s := src.(type) {
				case *srcMany:
					require.Equal(t, tc.receives, s.receives, "one call took the 25")
				case *bcSource:
					require.Equal(t, tc.receives, s.receives, "one receive, as Lambda's poller: no top-up over a network")
				}
			})
		})
	}
}

// ReceiveMany takes up to 10,000 messages in one call, on FIFO queues more than 10 of one group, with the
// options and errors of Receive otherwise.
func TestQueueReceiveMany(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := bcNewQueue(t, "src-receive-many.fifo", fifoq.WithVisibilityTimeout(30*time.Second))
		bcSend(t, q, "g1", bcNumbered("a", 15)...)
		bcSend(t, q, "g2", bcNumbered("b", 5)...)
		_, err := q.Receive(t.Context(), fifoq.ReceiveOptions{MaxMessages: 11})
		require.ErrorIs(t, err, fifoq.ErrInvalidMaxMessages, "Receive takes at most 10")

		ds, err := q.ReceiveMany(t.Context(), fifoq.ReceiveOptions{MaxMessages: 18, VisibilityTimeout: time.Minute})
		require.NoError(t, err)
		require.Equal(t, append(bcNumbered("a", 15), bcNumbered("b", 5)[:3]...), bcBodies(ds),
			"the whole of g1, then g2, up to 18")
		time.Sleep(30 * time.Second)
		require.Equal(t, fifoq.Stats{Visible: 2, InFlight: 18}, q.Stats(), "the visibility timeout given")

		for _, n := range []int{-1, 10_001} {
			_, err := q.ReceiveMany(t.Context(), fifoq.ReceiveOptions{MaxMessages: n})
			require.ErrorIs(t, err, fifoq.ErrInvalidMaxMessages, "MaxMessages %d", n)
		}
		_, err = q.ReceiveMany(t.Context(), fifoq.ReceiveOptions{WaitTime: time.Minute})
		require.ErrorIs(t, err, fifoq.ErrInvalidWaitTime)
		ds, err = q.ReceiveMany(t.Context(), fifoq.ReceiveOptions{})
		require.NoError(t, err)
		require.Len(t, ds, 0, "MaxMessages 0 means 1, and g2 is in flight")
	})
}

// VisibilityTimeout says the queue's visibility timeout as it is now, whatever the context.
func TestQueueVisibilityTimeout(t *testing.T) {
	t.Parallel()
	q := bcNewQueue(t, "src-vt-queue", fifoq.WithVisibilityTimeout(45*time.Second))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	vt, err := q.VisibilityTimeout(ctx)
	require.NoError(t, err)
	require.Equal(t, 45*time.Second, vt)
	a := q.Attributes()
	a.VisibilityTimeout = 10 * time.Second
	require.NoError(t, q.SetAttributes(a))
	vt, err = q.VisibilityTimeout(t.Context())
	require.NoError(t, err)
	require.Equal(t, 10*time.Second, vt, "as it is now")
}

// SourceTimeout bounds the calls to the source: a delete that hangs ends after it. A negative one is
// rejected.
func TestConsumerSourceTimeout(t *testing.T) {
	_, err := fifoq.NewConsumer(bcNewQueue(t, "src-timeout-bad"), bcNop, fifoq.ConsumerOptions{SourceTimeout: -time.Second})
	require.ErrorIs(t, err, fifoq.ErrInvalidBatchOptions)

	synctest.Test(t, func(t *testing.T) {
		q := bcNewQueue(t, "src-timeout")
		bcSend(t, q, "", "a")
		src := newDLSource(q, func(op string, _ []string, _ time.Duration) bool { return op == "delete" })
		reports, returned, cancel := dlRun(t, src, nil, fifoq.ConsumerOptions{SourceTimeout: 4 * time.Second})
		defer close(src.release)
		time.Sleep(4*time.Second + 4*time.Second/16 + time.Millisecond)
		rs := reports()
		require.Len(t, rs, 1)
		require.ErrorIs(t, rs[0].DeleteErr, context.DeadlineExceeded)
		calls := src.seen()
		del := calls[len(calls)-1]
		require.Equal(t, "delete", del.op)
		require.GreaterOrEqual(t, del.ended-del.at, 4*time.Second)
		require.LessOrEqual(t, del.ended-del.at, 4*time.Second+4*time.Second/16)
		cancel()
		_, ok := returned()
		require.True(t, ok)
	})
}

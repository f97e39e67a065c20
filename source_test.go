package fifoq_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// Tests of the optional interfaces of a Source (fifoq.VisibilitySource, fifoq.ReceiveManySource,
// fifoq.StatsSource): a Batcher and a Consumer use them on any Source that has them, and do without them on
// one that does not, whether or not it is a *Queue.

// srcStats is a bcSource that counts its messages exactly, as a *Queue does.
type srcStats struct{ bcSource }

func (s *srcStats) Stats() fifoq.Stats { return s.q.Stats() }

// srcKnowsVT is a bcSource that knows its visibility timeout without a call, as a *Queue does: it answers
// whatever the context. It records whether the context it was asked with was done.
type srcKnowsVT struct {
	bcSource
	vt        time.Duration
	askedDone []bool
}

func (s *srcKnowsVT) VisibilityTimeout(ctx context.Context) (time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.askedDone = append(s.askedDone, ctx.Err() != nil)
	return s.vt, nil
}

// RunUntilEmpty over any source that counts its messages exactly returns as soon as the queue is empty,
// and waits for messages in flight elsewhere; over one that cannot, it takes a one-second receive that
// finds nothing for empty. Before, only a *Queue was taken at its word.
func TestRunUntilEmptyStatsSource(t *testing.T) {
	for _, exact := range []bool{true, false} {
		t.Run(map[bool]string{true: "StatsSource", false: "Source"}[exact], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := bcNewQueue(t, "src-stats", fifoq.WithVisibilityTimeout(30*time.Second))
				bcSend(t, q, "", "a", "b")
				var src fifoq.Source = &bcSource{q: q}
				if exact {
					src = &srcStats{bcSource{q: q}}
				}
				held, err := q.Receive(t.Context(), fifoq.ReceiveOptions{MaxMessages: 1}) // in flight elsewhere
				require.NoError(t, err)
				require.Len(t, held, 1)
				r := &ueRecorder{start: time.Now()}
				done := ueRun(t, t.Context(), src, r.handle, fifoq.ConsumerOptions{})
				time.Sleep(time.Second)
				_, ok := ueReturned(done)
				if !exact {
					require.True(t, ok, "a one-second receive found nothing: empty, for a source that cannot count")
					require.Equal(t, fifoq.Stats{InFlight: 1}, q.Stats())
					return
				}
				require.False(t, ok, "returned with a message in flight elsewhere")
				time.Sleep(29 * time.Second) // its visibility timeout ends: it is handled
				err, ok = ueReturned(done)
				require.True(t, ok, "returned once the queue was empty")
				require.NoError(t, err)
				require.Equal(t, fifoq.Stats{}, q.Stats())
				require.Len(t, r.handled(), 2)
			})
		})
	}
}

// NewConsumer asks a VisibilitySource with a context that is done already: one that knows its timeout
// without a call answers, and a handler timeout longer than it is rejected at once, as for a *Queue. Run
// asks again, with a live context. Before, only a *Queue's timeout was known to NewConsumer.
func TestNewConsumerAsksVisibilitySource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := bcNewQueue(t, "src-vt")
		src := &srcKnowsVT{bcSource: bcSource{q: q}, vt: 30 * time.Second}
		_, err := fifoq.NewConsumer(src, bcNop, fifoq.ConsumerOptions{HandlerTimeout: time.Minute})
		require.ErrorIs(t, err, fifoq.ErrInvalidBatchOptions, "handler timeout 1m over a 30s visibility timeout")
		require.Equal(t, []bool{true}, src.askedDone, "asked once, with a done context")

		src.askedDone = nil
		c, err := fifoq.NewConsumer(src, bcNop, fifoq.ConsumerOptions{HandlerTimeout: 30 * time.Second})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		require.NoError(t, c.Run(ctx))
		require.Equal(t, []bool{true, false}, src.askedDone, "NewConsumer asked with a done context, Run with its own")
	})
}

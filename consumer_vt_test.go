package fifoq_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// A Source that can say its queue's visibility timeout with a call, as sqsadapter's does: a Consumer with
// no BatchOptions.VisibilityTimeout asks for it when Run starts (see fifoq.VisibilitySource).

// bcVTSource is a bcSource with a VisibilityTimeout method that, like a call over a network, fails with a
// done context (NewBatcher asks with one).
type bcVTSource struct {
	bcSource
	vt    time.Duration
	err   error
	asked int // with a live context
}

func (s *bcVTSource) VisibilityTimeout(ctx context.Context) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked++
	return s.vt, s.err
}

// Over a Source that says its visibility timeout, a handler running past it keeps its messages: the
// Consumer extends their visibility, as over a *Queue. Over one that cannot say it, they come back to
// another batch while the handler runs (the contrast shows the test can fail).
func TestConsumerAsksSourceForVisibilityTimeout(t *testing.T) {
	for _, says := range []bool{true, false} {
		t.Run(map[bool]string{true: "says", false: "cannot say"}[says], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := bcNewQueue(t, "bc-vt.fifo", fifoq.WithVisibilityTimeout(30*time.Second))
				bcSend(t, q, "g1", "a")
				var src fifoq.Source = &bcSource{q: q}
				vtSrc := &bcVTSource{bcSource: bcSource{q: q}, vt: 30 * time.Second}
				if says {
					src = vtSrc
				}
				var (
					mu    sync.Mutex
					calls int
				)
				h := func(_ context.Context, batch []fifoq.Delivery) error {
					mu.Lock()
					calls++
					mu.Unlock()
					time.Sleep(95 * time.Second) // more than 3 visibility timeouts
					return nil
				}
				bcConsume(t, src, h, fifoq.ConsumerOptions{MaxConcurrency: 2, Batch: fifoq.BatchOptions{Size: 1}}, 200*time.Second, nil)
				mu.Lock()
				defer mu.Unlock()
				if says {
					require.Equal(t, 1, vtSrc.asked, "asked once, when Run started")
					require.Equal(t, 1, calls, "the message stayed invisible while its handler ran")
					return
				}
				require.Greater(t, calls, 1, "without a known visibility timeout the message comes back during the handler")
			})
		})
	}
}

// The handler timeout is checked against the visibility timeout the Source says (spec 9.1.8), and a Source
// that cannot say it fails Run.
func TestConsumerSourceVisibilityTimeoutErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := bcNewQueue(t, "bc-vt-errors")
		src := &bcVTSource{bcSource: bcSource{q: q}, vt: 30 * time.Second}
		c, err := fifoq.NewConsumer(src, bcNop, fifoq.ConsumerOptions{HandlerTimeout: time.Minute})
		require.NoError(t, err, "NewConsumer cannot know the visibility timeout yet")
		require.ErrorIs(t, c.Run(t.Context()), fifoq.ErrInvalidBatchOptions, "handler timeout 1m over a 30s visibility timeout")

		boom := errors.New("boom")
		src = &bcVTSource{bcSource: bcSource{q: q}, err: boom}
		c, err = fifoq.NewConsumer(src, bcNop, fifoq.ConsumerOptions{})
		require.NoError(t, err)
		require.ErrorIs(t, c.Run(t.Context()), boom)

		src = &bcVTSource{bcSource: bcSource{q: q}, vt: time.Hour}
		c, err = fifoq.NewConsumer(src, bcNop, fifoq.ConsumerOptions{Batch: fifoq.BatchOptions{VisibilityTimeout: time.Minute}})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		require.NoError(t, c.Run(ctx))
		require.Zero(t, src.asked, "BatchOptions.VisibilityTimeout given: no need to ask")
	})
}

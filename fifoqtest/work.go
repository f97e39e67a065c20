package fifoqtest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/fifoq/fifoq"
)

// Work hands the next batch of q to handler h now, as a [fifoq.Consumer] with options o would, and returns
// it: it receives one batch (up to o.Batch.Size messages, 10 at most, with a receive that does not wait),
// runs h on it, and settles it as the Consumer does: on success the batch is deleted; on failure its
// messages come back after their visibility timeout (at once with o.RetryImmediately), and with a partial
// failure (ReportBatchItemFailures, or [fifoq.PerMessage]) only the failed ones. The Batch returned has
// the deliveries h got, when, and the Consumer's report: its Outcome, Failed ids and the handler's Err.
//
// Work is for tests that drive a consumer step by step, like rivertest's Work: it needs no synctest
// bubble and moves no clock. It fails the test at once if q has no message to receive now, or if the
// Consumer cannot be created with o (o.OnBatch is called after Work has recorded the batch). ctx is the
// Consumer's, so h's context is not cancelled with it, as with [fifoq.Consumer.Run].
func Work(ctx context.Context, tb testing.TB, q fifoq.Source, h fifoq.Handler, o fifoq.ConsumerOptions) Batch {
	tb.Helper()
	if h == nil {
		tb.Fatalf("fifoqtest.Work(%s): nil handler", nameOf(q))
		return Batch{}
	}
	var (
		mu    sync.Mutex
		batch Batch
		ended bool
	)
	src := &oneBatch{q: q}
	handler := func(hctx context.Context, ds []fifoq.Delivery) error {
		mu.Lock()
		batch.Deliveries, batch.At = append([]fifoq.Delivery(nil), ds...), src.now()
		mu.Unlock()
		return h(hctx, ds)
	}
	next := o.OnBatch
	o.OnBatch = func(r fifoq.BatchReport) {
		mu.Lock()
		batch.Report, ended = r, true
		if batch.At.IsZero() {
			batch.At = src.now()
		}
		mu.Unlock()
		if next != nil {
			next(r)
		}
	}
	o.Batch.Window = 0
	var source fifoq.Source = src
	if _, ok := q.(fifoq.VisibilitySource); ok {
		source = oneBatchTimed{src}
	}
	c, err := fifoq.NewConsumer(source, handler, o)
	if err != nil {
		tb.Fatalf("fifoqtest.Work(%s): %v", nameOf(q), err)
		return Batch{}
	}
	err = c.Run(ctx)
	mu.Lock()
	defer mu.Unlock()
	switch {
	case ended:
		return batch
	case errors.Is(err, errNothing):
		tb.Fatalf("fifoqtest.Work: %s", contentsNothing(q))
	case err != nil:
		tb.Fatalf("fifoqtest.Work(%s): %v", nameOf(q), err)
	default:
		tb.Fatalf("fifoqtest.Work(%s): no batch: %v", nameOf(q), ctx.Err())
	}
	return Batch{}
}

var (
	errNothing = errors.New("fifoqtest: nothing to receive")
	errDone    = errors.New("fifoqtest: one batch received")
)

// contentsNothing says that q had no message to receive now, and, for a queue this package can look into,
// what it holds.
func contentsNothing(q fifoq.Source) string {
	if qq, ok := q.(Queue); ok {
		return "no message to receive now; " + contents(qq)
	}
	return "no message to receive now from " + nameOf(q)
}

// oneBatch is a fifoq.Source over q whose first receive does not wait and whose later receives fail, so
// a Consumer's Run handles one batch and returns.
type oneBatch struct {
	q fifoq.Source

	mu       sync.Mutex // guards received
	received bool
}

func (s *oneBatch) FIFO() bool   { return s.q.FIFO() }
func (s *oneBatch) Name() string { return nameOf(s.q) }

// Clock returns the clock of q, or the real clock for a source that has none.
func (s *oneBatch) Clock() fifoq.Clock {
	if c, ok := s.q.(interface{ Clock() fifoq.Clock }); ok {
		return c.Clock()
	}
	return realClock{}
}

// now reads the source's clock.
func (s *oneBatch) now() time.Time { return s.Clock().Now() }

// oneBatchTimed is a oneBatch over a source that says its visibility timeout, and says it too, so that the
// Consumer keeps a long batch's messages in flight as it would over the source itself.
type oneBatchTimed struct{ *oneBatch }

func (s oneBatchTimed) VisibilityTimeout(ctx context.Context) (time.Duration, error) {
	return s.q.(fifoq.VisibilitySource).VisibilityTimeout(ctx)
}

func (s *oneBatch) Receive(ctx context.Context, o fifoq.ReceiveOptions) ([]fifoq.Delivery, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.received {
		return nil, errDone
	}
	o.WaitTime, o.NoWaitTime = 0, true
	ds, err := s.q.Receive(ctx, o)
	if err != nil {
		return nil, err
	}
	if len(ds) == 0 {
		return nil, errNothing
	}
	s.received = true
	return ds, nil
}

func (s *oneBatch) DeleteBatch(ctx context.Context, handles []string) error {
	return s.q.DeleteBatch(ctx, handles)
}

func (s *oneBatch) ChangeVisibilityBatch(ctx context.Context, entries []fifoq.VisibilityChange) error {
	return s.q.ChangeVisibilityBatch(ctx, entries)
}

// realClock reads the time package.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) fifoq.Timer { return time.AfterFunc(d, f) }

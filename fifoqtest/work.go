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
func Work(ctx context.Context, tb testing.TB, q *fifoq.Queue, h fifoq.Handler, o fifoq.ConsumerOptions) Batch {
	tb.Helper()
	if h == nil {
		tb.Fatalf("fifoqtest.Work(%s): nil handler", q.Name())
		return Batch{}
	}
	var (
		mu    sync.Mutex
		batch Batch
		ended bool
	)
	handler := func(hctx context.Context, ds []fifoq.Delivery) error {
		mu.Lock()
		batch.Deliveries, batch.At = append([]fifoq.Delivery(nil), ds...), q.Clock().Now()
		mu.Unlock()
		return h(hctx, ds)
	}
	next := o.OnBatch
	o.OnBatch = func(r fifoq.BatchReport) {
		mu.Lock()
		batch.Report, ended = r, true
		if batch.At.IsZero() {
			batch.At = q.Clock().Now()
		}
		mu.Unlock()
		if next != nil {
			next(r)
		}
	}
	o.Batch.Window = 0
	src := &oneBatch{q: q}
	c, err := fifoq.NewConsumer(src, handler, o)
	if err != nil {
		tb.Fatalf("fifoqtest.Work(%s): %v", q.Name(), err)
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
		tb.Fatalf("fifoqtest.Work(%s): %v", q.Name(), err)
	default:
		tb.Fatalf("fifoqtest.Work(%s): no batch: %v", q.Name(), ctx.Err())
	}
	return Batch{}
}

var (
	errNothing = errors.New("fifoqtest: nothing to receive")
	errDone    = errors.New("fifoqtest: one batch received")
)

// contentsNothing says that q had no message to receive now, and what it holds.
func contentsNothing(q *fifoq.Queue) string {
	return "no message to receive now; " + contents(q)
}

// oneBatch is a fifoq.Source over q whose first receive does not wait and whose later receives fail, so
// a Consumer's Run handles one batch and returns.
type oneBatch struct {
	q *fifoq.Queue

	mu       sync.Mutex // guards received
	received bool
}

func (s *oneBatch) FIFO() bool         { return s.q.FIFO() }
func (s *oneBatch) Name() string       { return s.q.Name() }
func (s *oneBatch) Clock() fifoq.Clock { return s.q.Clock() }
func (s *oneBatch) VisibilityTimeout(context.Context) (time.Duration, error) {
	return s.q.Attributes().VisibilityTimeout, nil
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

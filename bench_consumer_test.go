package fifoq_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fifoq/fifoq"
)

// Benchmarks of the Consumer end to end: a backlog of bcbMessages messages drained through a Consumer with a
// no-op handler, at 1, 100 and 10,000 FIFO groups and a standard queue, at MaxConcurrency 1 and 8, each beside
// an in-run baseline (impl=loop): the same backlog drained by one goroutine calling Receive(10) and
// DeleteBatch, so results can be quoted as ratios.
//
// Each iteration builds a fresh queue (so deduplication ids never collide across iterations), fills it with
// SendBatch and builds the Consumer with the timer stopped, then times only the drain: from Run to its return,
// once the last batch is deleted. The queues run on the real clock, but nothing waits on time: the batch
// window is 0 and every receive finds 10 messages (10,000 is a multiple of 10). With MaxConcurrency 8 the
// Consumer polls while batches are in flight, so it long-polls until a delete hands it messages (on FIFO with
// one group, the group's next ten), and the last poll ends when the OnBatch hook cancels Run's context.
//
// Custom units (over the timed drains only):
//   msgs/s      messages drained per second
//   ns/msg      the same, inverted
//   allocs/msg  heap allocations per message (MemStats.Mallocs delta / messages)
//   B/msg       bytes allocated per message (MemStats.TotalAlloc delta / messages)

const bcbMessages = 10_000 // the backlog each iteration drains

// bcbNop is the handler: it does nothing and succeeds, so the batch is deleted.
func bcbNop(context.Context, []fifoq.Delivery) error { return nil }

// bcbFill returns a fresh queue holding bcbMessages messages, message k in group k%groups on FIFO.
func bcbFill(b *testing.B, fifo bool, groups int) *fifoq.Queue {
	dedup, groupIDs := bnIDs()
	name := "bench-consumer"
	if fifo {
		name += ".fifo"
	}
	// The longest visibility timeout: the drains run on the real clock, and a drain that the machine stalls
	// between a receive and its delete must still find its receipt handles valid. With the default 30 s a
	// stalled consumer's handle expired and the benchmark failed on speed alone.
	q, err := fifoq.New(name, fifoq.WithVisibilityTimeout(12*time.Hour))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	ms := make([]fifoq.Message, bnPerOp)
	for k := 0; k < bcbMessages; k += bnPerOp {
		for i := range ms {
			ms[i] = fifoq.Message{Body: bnBody}
			if fifo {
				ms[i].GroupID, ms[i].DeduplicationID = groupIDs[(k+i)%groups], dedup[k+i]
			}
		}
		if _, err := q.SendBatch(ctx, ms); err != nil {
			b.Fatal(err)
		}
	}
	if s := q.Stats(); s.Visible != bcbMessages {
		b.Fatalf("filled %+v, want %d visible", s, bcbMessages)
	}
	return q
}

// bcbDrain is one way to empty a filled queue: prepare runs with the timer stopped and returns the timed part.
type bcbDrain func(b *testing.B, q *fifoq.Queue) (run func() error)

// bcbLoop is the baseline: Receive(10) and DeleteBatch on one goroutine until every message is deleted.
func bcbLoop(_ *testing.B, q *fifoq.Queue) func() error {
	handles := make([]string, 0, bnPerOp)
	return func() error {
		ctx := context.Background()
		for done := 0; done < bcbMessages; {
			ds, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: bnPerOp})
			if err != nil {
				return err
			}
			if len(ds) == 0 {
				return fmt.Errorf("empty receive after %d messages", done)
			}
			handles = handles[:0]
			for i := range ds {
				handles = append(handles, ds[i].ReceiptHandle)
			}
			if err := q.DeleteBatch(ctx, handles); err != nil {
				return err
			}
			done += len(ds)
		}
		return nil
	}
}

// bcbConsumer drains through a Consumer with MaxConcurrency conc and the no-op handler. The OnBatch hook,
// called after a batch is deleted, cancels Run's context when the last message is done.
func bcbConsumer(conc int) bcbDrain {
	return func(b *testing.B, q *fifoq.Queue) func() error {
		ctx, cancel := context.WithCancel(context.Background())
		var (
			mu       sync.Mutex
			done     int
			firstErr error
		)
		c, err := fifoq.NewConsumer(q, bcbNop, fifoq.ConsumerOptions{
			MaxConcurrency: conc,
			OnBatch: func(r fifoq.BatchReport) {
				mu.Lock()
				defer mu.Unlock()
				if r.Outcome != fifoq.OutcomeSuccess && firstErr == nil {
					firstErr = fmt.Errorf("batch outcome %v: %v", r.Outcome, r.Err)
					cancel()
				}
				if done += r.Size; done == bcbMessages {
					cancel()
				}
			},
		})
		if err != nil {
			b.Fatal(err)
		}
		return func() error {
			defer cancel()
			if err := c.Run(ctx); err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			if firstErr == nil && done != bcbMessages {
				firstErr = fmt.Errorf("run returned after %d messages, want %d", done, bcbMessages)
			}
			return firstErr
		}
	}
}

// bcbMeasure drains a freshly filled queue per b.Loop iteration, timing and counting allocations over the
// drains only, and reports the per-message units.
func bcbMeasure(b *testing.B, fifo bool, groups int, drain bcbDrain) {
	b.ReportAllocs()
	var m0, m1 runtime.MemStats
	var mallocs, bytes uint64
	iters := 0
	for b.Loop() {
		b.StopTimer()
		q := bcbFill(b, fifo, groups)
		run := drain(b, q)
		runtime.ReadMemStats(&m0)
		b.StartTimer()
		err := run()
		b.StopTimer()
		runtime.ReadMemStats(&m1)
		if err != nil {
			b.Fatal(err)
		}
		if s := q.Stats(); s.Visible+s.InFlight+s.Delayed != 0 {
			b.Fatalf("after the drain %+v, want an empty queue", s)
		}
		mallocs += m1.Mallocs - m0.Mallocs
		bytes += m1.TotalAlloc - m0.TotalAlloc
		iters++
		b.StartTimer()
	}
	msgs := float64(iters * bcbMessages)
	b.ReportMetric(msgs/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/msgs, "ns/msg")
	b.ReportMetric(float64(mallocs)/msgs, "allocs/msg")
	b.ReportMetric(float64(bytes)/msgs, "B/msg")
}

// BenchmarkConsumer drains 10,000 messages of 100 bytes per iteration through a Consumer (no-op handler,
// batch size 10, no window) at MaxConcurrency 1 and 8, on FIFO queues with 1, 100 and 10,000 groups and on a
// standard queue, each beside the Receive(10)+DeleteBatch loop on one goroutine (impl=loop).
func BenchmarkConsumer(b *testing.B) {
	type config struct {
		fifo   bool
		groups int
	}
	for _, cf := range []config{{true, 1}, {true, 100}, {true, 10_000}, {false, 0}} {
		name := "standard"
		if cf.fifo {
			name = "fifo/groups=" + strconv.Itoa(cf.groups)
		}
		b.Run(name+"/impl=loop", func(b *testing.B) { bcbMeasure(b, cf.fifo, cf.groups, bcbLoop) })
		for _, conc := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/impl=consumer-conc=%d", name, conc), func(b *testing.B) {
				bcbMeasure(b, cf.fifo, cf.groups, bcbConsumer(conc))
			})
		}
	}
}

package fifoq_test

import (
	"context"
	"fmt"
	"log"
	"strings"
	"sync"
	"time"

	"github.com/fifoq/fifoq"
)

// countingSource is a Source that wraps a *Queue and counts the calls a Consumer makes to it. It has the
// optional methods of the Queue too, so the Consumer over it works as over the Queue itself.
type countingSource struct {
	q *fifoq.Queue

	mu         sync.Mutex
	calls      map[string]int
	noDeadline int
}

func (s *countingSource) count(ctx context.Context, call string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[call]++
	if _, ok := ctx.Deadline(); !ok {
		s.noDeadline++
	}
}

// The four methods of a Source.

func (s *countingSource) FIFO() bool { return s.q.FIFO() }

func (s *countingSource) Receive(ctx context.Context, o fifoq.ReceiveOptions) ([]fifoq.Delivery, error) {
	s.count(ctx, "Receive")
	return s.q.Receive(ctx, o)
}

func (s *countingSource) DeleteBatch(ctx context.Context, handles []string) error {
	s.count(ctx, "DeleteBatch")
	return s.q.DeleteBatch(ctx, handles)
}

func (s *countingSource) ChangeVisibilityBatch(ctx context.Context, entries []fifoq.VisibilityChange) error {
	s.count(ctx, "ChangeVisibilityBatch")
	return s.q.ChangeVisibilityBatch(ctx, entries)
}

// The optional ones: a VisibilitySource, a ReceiveManySource and a StatsSource, with the Queue's clock and name.

func (s *countingSource) VisibilityTimeout(ctx context.Context) (time.Duration, error) {
	return s.q.VisibilityTimeout(ctx) // answers even with a done context: it makes no call
}

func (s *countingSource) ReceiveMany(ctx context.Context, o fifoq.ReceiveOptions) ([]fifoq.Delivery, error) {
	s.count(ctx, "ReceiveMany")
	return s.q.ReceiveMany(ctx, o)
}

func (s *countingSource) Stats() fifoq.Stats { return s.q.Stats() }
func (s *countingSource) Clock() fifoq.Clock { return s.q.Clock() }
func (s *countingSource) Name() string       { return s.q.Name() }

// A Source can wrap a *Queue, to count or trace the calls a Consumer makes. A wrapper that also has the
// Queue's optional methods keeps what they give: ReceiveMany lets a batch of this FIFO queue hold 12 messages
// of one group in one receive (10 is the most a Receive gives), Stats lets RunUntilEmpty return as soon as
// the queue is empty, and VisibilityTimeout lets NewConsumer check the handler timeout. Every call the
// Consumer makes has a context with a deadline.
func ExampleSource() {
	ctx := context.Background()
	q, err := fifoq.New("orders.fifo", fifoq.WithContentBasedDeduplication(),
		fifoq.WithClock(fifoq.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))))
	if err != nil {
		log.Fatal(err)
	}
	for i := range 12 {
		if _, err := q.Send(ctx, fifoq.Message{GroupID: "order-1", Body: fmt.Sprintf("step-%d", i+1)}); err != nil {
			log.Fatal(err)
		}
	}
	src := &countingSource{q: q, calls: map[string]int{}}
	_, err = fifoq.NewConsumer(src, func(context.Context, []fifoq.Delivery) error { return nil },
		fifoq.ConsumerOptions{HandlerTimeout: time.Minute})
	fmt.Println("handler timeout over the visibility timeout:", err)

	c, err := fifoq.NewConsumer(src, func(_ context.Context, batch []fifoq.Delivery) error {
		bodies := make([]string, len(batch))
		for i, d := range batch {
			bodies[i] = d.Body
		}
		fmt.Printf("batch of %d: %s\n", len(batch), strings.Join(bodies, " "))
		return nil
	}, fifoq.ConsumerOptions{Batch: fifoq.BatchOptions{Size: 12}, MaxConcurrency: 1}) // 1: a deterministic count of calls
	if err != nil {
		log.Fatal(err)
	}
	if err := c.RunUntilEmpty(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("calls:", src.calls, "without a deadline:", src.noDeadline)
	// Output:
	// handler timeout over the visibility timeout: fifoq: invalid batch options: queue visibility timeout 30s is less than the handler timeout 1m0s
	// batch of 12: step-1 step-2 step-3 step-4 step-5 step-6 step-7 step-8 step-9 step-10 step-11 step-12
	// calls: map[DeleteBatch:2 ReceiveMany:1] without a deadline: 0
}

// ReceiveMany takes more messages at once than Receive's 10: on a FIFO queue, more than 10 of one group,
// which a second receive would not return while the first ones are in flight.
func ExampleQueue_ReceiveMany() {
	ctx := context.Background()
	q, err := fifoq.New("steps.fifo", fifoq.WithContentBasedDeduplication(),
		fifoq.WithClock(fifoq.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))))
	if err != nil {
		log.Fatal(err)
	}
	for i := range 15 {
		if _, err := q.Send(ctx, fifoq.Message{GroupID: "g", Body: fmt.Sprintf("m%d", i+1)}); err != nil {
			log.Fatal(err)
		}
	}
	first, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10})
	if err != nil {
		log.Fatal(err)
	}
	second, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("Receive: %d, then %d while the group is in flight\n", len(first), len(second))

	changes := make([]fifoq.VisibilityChange, len(first))
	for i, d := range first {
		changes[i] = fifoq.VisibilityChange{ReceiptHandle: d.ReceiptHandle} // visible again at once
	}
	if err := q.ChangeVisibilityBatch(ctx, changes); err != nil {
		log.Fatal(err)
	}
	all, err := q.ReceiveMany(ctx, fifoq.ReceiveOptions{MaxMessages: 100})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("ReceiveMany: %d, from %s to %s\n", len(all), all[0].Body, all[len(all)-1].Body)
	// Output:
	// Receive: 10, then 0 while the group is in flight
	// ReceiveMany: 15, from m1 to m15
}

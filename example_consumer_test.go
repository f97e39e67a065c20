package fifoq_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/fifoq/fifoq"
)

// A Consumer runs a handler over batches, like a Lambda event source mapping over SQS. This handler fails
// "pay" the first time and reports it as a batch item failure: on a FIFO queue the later message of its
// group, "ship", fails with it, the rest of the batch is deleted, and with RetryImmediately the two come
// back at once, in order. MaxConcurrency 1 makes the output deterministic.
func Example_consumer() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q, err := fifoq.New("orders.fifo", fifoq.WithContentBasedDeduplication(),
		fifoq.WithClock(fifoq.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))))
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range []fifoq.Message{
		{GroupID: "order-1", Body: "create"}, {GroupID: "order-1", Body: "pay"},
		{GroupID: "order-1", Body: "ship"}, {GroupID: "order-2", Body: "refund"},
	} {
		if _, err := q.Send(ctx, m); err != nil {
			log.Fatal(err)
		}
	}

	handler := func(ctx context.Context, batch []fifoq.Delivery) error {
		fmt.Print("batch:")
		for _, d := range batch {
			fmt.Printf(" %s/%s#%d", d.GroupID, d.Body, d.ReceiveCount)
		}
		fmt.Println()
		for _, d := range batch {
			if d.Body == "pay" && d.ReceiveCount == 1 {
				return &fifoq.BatchItemFailures{MessageIDs: []string{d.MessageID}}
			}
		}
		return nil
	}
	c, err := fifoq.NewConsumer(q, handler, fifoq.ConsumerOptions{
		Batch:                   fifoq.BatchOptions{Size: 10},
		MaxConcurrency:          1,
		ReportBatchItemFailures: true,
		RetryImmediately:        true,
		OnBatch: func(r fifoq.BatchReport) {
			fmt.Printf("%s: %d failed\n", r.Outcome, len(r.Failed))
			if s := q.Stats(); s.Visible+s.InFlight == 0 {
				cancel() // the queue is empty: stop
			}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("run:", c.Run(ctx)) // returns once ctx is done and the batches in flight are settled
	// Output:
	// batch: order-1/create#1 order-1/pay#1 order-1/ship#1 order-2/refund#1
	// partial: 2 failed
	// batch: order-1/pay#2 order-1/ship#2
	// success: 0 failed
	// run: <nil>
}

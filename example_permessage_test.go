package fifoq_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/fifoq/fifoq"
)

// PerMessage handles a batch one message at a time. Here "pay" of order-1 fails on its first try: "ship",
// behind it in its group, is not handled and comes back with it, while "create" and order-2's "refund" are
// done and deleted. On the retry (at once, with RetryImmediately) only "pay" and "ship" are handled, in
// order. PerMessage's partial failure is honoured without ReportBatchItemFailures.
func ExamplePerMessage() {
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

	handler := fifoq.PerMessage(func(ctx context.Context, d fifoq.Delivery) error {
		fmt.Printf("handle %s/%s#%d\n", d.GroupID, d.Body, d.ReceiveCount)
		if d.Body == "pay" && d.ReceiveCount == 1 {
			return errors.New("card declined")
		}
		return nil
	})
	c, err := fifoq.NewConsumer(q, handler, fifoq.ConsumerOptions{
		MaxConcurrency:   1,
		RetryImmediately: true,
		OnBatch: func(r fifoq.BatchReport) {
			fmt.Printf("%s: %d failed\n", r.Outcome, len(r.Failed))
			var me *fifoq.MessageErrors
			if errors.As(r.Err, &me) {
				for _, e := range me.Errors {
					fmt.Printf("  %s: %v\n", e.GroupID, e.Err)
				}
			}
			if s := q.Stats(); s.Visible+s.InFlight == 0 {
				cancel() // the queue is empty: stop
			}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// handle order-1/create#1
	// handle order-1/pay#1
	// handle order-2/refund#1
	// partial: 2 failed
	//   order-1: card declined
	//   order-1: fifoq: not handled: an earlier message of its group failed
	// handle order-1/pay#2
	// handle order-1/ship#2
	// success: 0 failed
}

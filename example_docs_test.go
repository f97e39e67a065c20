package fifoq_test

// The examples in this file are the code that README.md and docs/*.md show; docs_test.go checks that every
// Go snippet there is a copy of compiled code such as this.

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/fifoq/fifoq"
)

// A FIFO queue keeps each message group in send order, and a receive fills itself from one group before
// it takes the next; a send retried with the same deduplication id is not delivered twice. This is the
// program of README.md.
func Example_readme() {
	ctx := context.Background()
	q, err := fifoq.New("orders.fifo")
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range []fifoq.Message{
		{GroupID: "order-1", DeduplicationID: "order-1/create", Body: "create"},
		{GroupID: "order-2", DeduplicationID: "order-2/refund", Body: "refund"},
		{GroupID: "order-1", DeduplicationID: "order-1/pay", Body: "pay"},
		{GroupID: "order-1", DeduplicationID: "order-1/pay", Body: "pay"}, // a retried send: the same id
		{GroupID: "order-1", DeduplicationID: "order-1/ship", Body: "ship"},
	} {
		r, err := q.Send(ctx, m)
		if err != nil {
			log.Fatal(err)
		}
		if r.Duplicate {
			fmt.Println("duplicate, not delivered again:", m.DeduplicationID)
		}
	}

	ds, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10})
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range ds {
		fmt.Println(d.GroupID, d.Body) // each group in send order
		if err := q.Delete(ctx, d.ReceiptHandle); err != nil {
			log.Fatal(err)
		}
	}
	// Output:
	// duplicate, not delivered again: order-1/pay
	// order-1 create
	// order-1 pay
	// order-1 ship
	// order-2 refund
}

// A message received maxReceiveCount times and never deleted moves to the dead-letter queue on the next
// receive; a move task sends it back once the bug is fixed. This is the example of docs/behaviour.md.
func Example_deadLetterQueueMoveTask() {
	ctx := context.Background()
	clk := fifoq.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	dlq, err := fifoq.New("orders-dlq.fifo", fifoq.WithClock(clk)) // a dead-letter queue exists before its sources
	if err != nil {
		log.Fatal(err)
	}
	q, err := fifoq.New("orders.fifo", fifoq.WithClock(clk), fifoq.WithContentBasedDeduplication(),
		fifoq.WithDeadLetterQueue(dlq, 2)) // maxReceiveCount 2
	if err != nil {
		log.Fatal(err)
	}
	if _, err := q.Send(ctx, fifoq.Message{GroupID: "order-17", Body: "charge card"}); err != nil {
		log.Fatal(err)
	}
	for range 3 { // a handler that always fails: received, never deleted
		if _, err := q.Receive(ctx, fifoq.ReceiveOptions{}); err != nil {
			log.Fatal(err)
		}
		clk.Advance(30 * time.Second) // the visibility timeout ends
	}

	// The third receive moved it: a look at the dead-letter queue, which is not a receive.
	for m := range dlq.Messages() {
		fmt.Println(m.Body, m.DeadLetterSource, m.ReceiveCount)
	}

	task, err := dlq.StartMoveTask(ctx, nil, 0) // nil: back to each message's source; 0: as fast as possible
	if err != nil {
		log.Fatal(err)
	}
	if err := task.Wait(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s %+v\n", task.Status().State, q.Stats())
	// Output:
	// charge card orders.fifo 2
	// COMPLETED {Visible:1 InFlight:0 Delayed:0}
}

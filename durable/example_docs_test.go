package durable_test

// The code in this file is what docs/durability.md shows; the root package's docs_test.go checks that the
// snippet there is a copy of it.

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/durable"
)

// A queue and its dead-letter queue share one store: New opens each by name, with what it held.
func Example_deadLetterQueue() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "fifoq-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	st, err := durable.Open(dir) // github.com/fifoq/fifoq/durable; the directory is made if missing
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	dlq, err := fifoq.New("orders-dlq.fifo", fifoq.WithStore(st))
	if err != nil {
		log.Fatal(err)
	}
	q, err := fifoq.New("orders.fifo", fifoq.WithStore(st), fifoq.WithDeadLetterQueue(dlq, 5))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := q.Send(ctx, fifoq.Message{GroupID: "order-1", DeduplicationID: "1", Body: "create"}); err != nil {
		log.Fatal(err) // once Send returns nil, the message is on disk
	}
	fmt.Println(st.Queues(), q.Stats().Visible)
	// Output:
	// [orders-dlq.fifo orders.fifo] 1
}

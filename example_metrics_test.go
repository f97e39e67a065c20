package fifoq_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/fifoq/fifoq"
)

// Metrics reports a queue's CloudWatch metrics as plain Go values: the message counts, the age of the
// oldest message, and counters since the queue was created. Package fifoqprom exports them to Prometheus.
func ExampleQueue_Metrics() {
	ctx := context.Background()
	clk := fifoq.NewManualClock(exStart)
	q, err := fifoq.New("invoices.fifo", fifoq.WithClock(clk), fifoq.WithContentBasedDeduplication())
	if err != nil {
		log.Fatal(err)
	}
	for _, body := range []string{"invoice 1", "invoice 2", "invoice 1"} { // the second "invoice 1" is a duplicate
		if _, err := q.Send(ctx, fifoq.Message{GroupID: "acme", Body: body}); err != nil {
			log.Fatal(err)
		}
	}
	clk.Advance(time.Minute)
	ds, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 1})
	if err != nil {
		log.Fatal(err)
	}
	if err := q.Delete(ctx, ds[0].ReceiptHandle); err != nil {
		log.Fatal(err)
	}
	clk.Advance(30 * time.Second)

	m := q.Metrics()
	fmt.Printf("stored: %+v\n", m.Stats)
	fmt.Println("oldest message age:", m.OldestAge)
	fmt.Printf("sent %d, duplicates %d, received %d, deleted %d\n", m.Sent, m.Duplicates, m.Received, m.Deleted)
	// Output:
	// stored: {Visible:1 InFlight:0 Delayed:0}
	// oldest message age: 1m30s
	// sent 2, duplicates 1, received 1, deleted 1
}

package idempotency_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/idempotency"
)

// Wrap makes a handler process each message once, even when it is delivered twice. Here the producer
// sent the same order twice (a retry after a timeout, say); the key is the order id the producer put in a
// message attribute, so the second copy is recognised, skipped and deleted: the card is charged once.
func ExampleWrap() {
	ctx := context.Background()
	clock := fifoq.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	q, err := fifoq.New("payments", fifoq.WithClock(clock))
	if err != nil {
		log.Fatal(err)
	}
	order := fifoq.Message{Body: `{"order":"o-1","amount":42}`, Attributes: map[string]fifoq.Attribute{
		"order-id": {DataType: "String", StringValue: "o-1"},
	}}
	for range 2 {
		if _, err := q.Send(ctx, order); err != nil {
			log.Fatal(err)
		}
	}

	charge := func(_ context.Context, batch []fifoq.Delivery) error {
		for _, d := range batch {
			fmt.Println("charge", d.Body)
		}
		return nil
	}
	store := idempotency.NewMemoryStore(idempotency.WithClock(clock))
	orderID := func(d fifoq.Delivery) string { return d.Attributes["order-id"].StringValue }
	h := idempotency.Wrap(charge, store, 30*time.Second, orderID)

	c, err := fifoq.NewConsumer(q, h, fifoq.ConsumerOptions{Batch: fifoq.BatchOptions{Size: 1}, MaxConcurrency: 1})
	if err != nil {
		log.Fatal(err)
	}
	if err := c.RunUntilEmpty(ctx); err != nil {
		log.Fatal(err)
	}
	m := c.Metrics()
	fmt.Printf("%d batches done, queue %+v\n", m.Batches[fifoq.OutcomeSuccess], q.Stats())
	// Output:
	// charge {"order":"o-1","amount":42}
	// 2 batches done, queue {Visible:0 InFlight:0 Delayed:0}
}

package fifoqtest_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/fifoqtest"
)

// placeOrder is the producer under test: it sends an order's events to q.
func placeOrder(ctx context.Context, q *fifoq.Queue, order string) error {
	for _, event := range []string{"create", "pay"} {
		_, err := q.Send(ctx, fifoq.Message{
			GroupID: order, Body: event + " " + order, DeduplicationID: event + "-" + order,
			Attributes: map[string]fifoq.Attribute{"event": {DataType: "String", StringValue: event}},
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// RequireSent checks everything the code under test sent, in order; a Match names only what matters.
func ExampleRequireSent() {
	t := exampleT{} // in a test: its *testing.T
	q := fifoqtest.NewQueue(t, "orders.fifo", fifoq.WithClock(clock()))
	if err := placeOrder(context.Background(), q, "order-1"); err != nil {
		panic(err)
	}

	fifoqtest.RequireSent(t, q,
		fifoqtest.Match{GroupID: "order-1", Attributes: map[string]string{"event": "create"}},
		fifoqtest.Match{GroupID: "order-1", BodyContains: "pay"},
	)
	fmt.Println("passed")
	fifoqtest.RequireSent(t, q, fifoqtest.Match{Body: "ship order-1"})
	// Output:
	// passed
	// FAIL: queue orders.fifo: message 1 is "create order-1" (group "order-1"), want body "ship order-1"
	// queue orders.fifo: 2 messages, want 1
	// queue orders.fifo holds 2 messages:
	// 	"create order-1" (group "order-1", visible, received 0 times)
	// 	"pay order-1" (group "order-1", visible, received 0 times)
	// (the test stops here)
}

// RequireInQueue finds one message the code under test sent, wherever it is in the queue, and returns it.
func ExampleRequireInQueue() {
	t := exampleT{} // in a test: its *testing.T
	q := fifoqtest.NewQueue(t, "orders.fifo", fifoq.WithClock(clock()))
	if err := placeOrder(context.Background(), q, "order-7"); err != nil {
		panic(err)
	}

	s := fifoqtest.RequireInQueue(t, q, fifoqtest.Match{Attributes: map[string]string{"event": "pay"}})
	fmt.Println(s.Body, s.DeduplicationID)
	fifoqtest.RequireNotInQueue(t, q, fifoqtest.Match{BodyContains: "refund"})
	fmt.Println("no refund")
	// Output:
	// pay order-7 pay-order-7
	// no refund
}

// Work hands the next batch to a handler now and settles it as a Consumer would: a test can then look at
// the queue between two steps. With PerMessage, a failed message stays in flight (until its visibility
// timeout) and the others are deleted.
func ExampleWork() {
	t := exampleT{} // in a test: its *testing.T
	ctx := context.Background()
	q := fifoqtest.NewQueue(t, "jobs", fifoq.WithClock(clock()))
	fifoqtest.SendGroup(t, q, "", "resize", "poison", "thumbnail")

	h := fifoq.PerMessage(func(_ context.Context, d fifoq.Delivery) error {
		if d.Body == "poison" {
			return errors.New("cannot decode")
		}
		return nil
	})
	b := fifoqtest.Work(ctx, t, q, h, fifoq.ConsumerOptions{})
	fmt.Println(b.Bodies(), b.Report.Outcome, len(b.Report.Failed), "failed")
	fmt.Printf("%+v\n", q.Stats())
	fifoqtest.RequireSent(t, q, fifoqtest.Match{Body: "poison"}) // what is left
	// Output:
	// [resize poison thumbnail] partial 1 failed
	// {Visible:0 InFlight:1 Delayed:0}
}

package fifoqtest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/fifoqtest"
)

// exampleT stands in for the *testing.T of a test, which an Example does not have: it prints what an
// assertion reports instead of failing.
type exampleT struct{ testing.TB }

func (exampleT) Helper()             {}
func (exampleT) Cleanup(func())      {}
func (exampleT) Failed() bool        { return false }
func (exampleT) FailNow()            { fmt.Println("(the test stops here)") }
func (exampleT) Logf(string, ...any) {}
func (t exampleT) Fatalf(f string, args ...any) {
	t.Errorf(f, args...)
	t.FailNow()
}
func (exampleT) Errorf(f string, args ...any) { fmt.Printf("FAIL: %s\n", fmt.Sprintf(f, args...)) }

// clock returns a ManualClock at 2025-01-01 00:00 UTC.
func clock() *fifoq.ManualClock {
	return fifoq.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
}

// handleOrders is the handler of the examples: it reports the messages whose body is "poison" as batch item
// failures. On a FIFO queue the Consumer fails the later messages of their group with them.
func handleOrders(_ context.Context, batch []fifoq.Delivery) error {
	var failed []string
	for _, d := range batch {
		if d.Body == "poison" {
			failed = append(failed, d.MessageID)
		}
	}
	if failed != nil {
		return &fifoq.BatchItemFailures{MessageIDs: failed}
	}
	return nil
}

// NewQueue fails the test if the queue cannot be created, so the rest of the test uses the queue without
// checking an error.
func ExampleNewQueue() {
	t := exampleT{} // in a test: its *testing.T
	clk := clock()
	dlq := fifoqtest.NewQueue(t, "orders-dlq.fifo", fifoq.WithClock(clk))
	q := fifoqtest.NewQueue(t, "orders.fifo", fifoq.WithClock(clk), fifoq.WithDeadLetterQueue(dlq, 3))
	fmt.Println(q.Name(), q.FIFO(), q.Attributes().MaxReceiveCount)
	// Output:
	// orders.fifo true 3
}

// Send sends messages as given; on a FIFO queue it gives a deduplication id to those without one, so two
// equal bodies are two messages.
func ExampleSend() {
	t := exampleT{}
	q := fifoqtest.NewQueue(t, "orders.fifo", fifoq.WithClock(clock()))
	results := fifoqtest.Send(t, q,
		fifoq.Message{GroupID: "order-1", Body: "retry"},
		fifoq.Message{GroupID: "order-1", Body: "retry"},
		fifoq.Message{GroupID: "order-2", Body: "pay", Attributes: map[string]fifoq.Attribute{
			"amount": {DataType: "Number", StringValue: "12"},
		}},
	)
	for _, r := range results {
		fmt.Println("sequence number", r.SequenceNumber, "duplicate:", r.Duplicate)
	}
	fmt.Printf("%+v\n", q.Stats())
	// Output:
	// sequence number 00000000000000000001 duplicate: false
	// sequence number 00000000000000000002 duplicate: false
	// sequence number 00000000000000000003 duplicate: false
	// {Visible:3 InFlight:0 Delayed:0}
}

// SendGroup is the fixture of a consumer test: a group and its bodies, in order.
func ExampleSendGroup() {
	t := exampleT{}
	q := fifoqtest.NewQueue(t, "orders.fifo", fifoq.WithClock(clock()))
	fifoqtest.SendGroup(t, q, "order-1", "create", "pay", "ship")
	fifoqtest.SendGroup(t, q, "order-2", "create")
	for s := range q.Messages() {
		fmt.Println(s.GroupID, s.Body)
	}
	// Output:
	// order-1 create
	// order-1 pay
	// order-1 ship
	// order-2 create
}

// Drain runs a Consumer until the queue is empty. Here the poison message fails three times, 30 seconds
// apart, and then moves to the dead-letter queue; on the ManualClock those 90 seconds pass at once. The
// handler sees "ship" twice: it is after "poison" in its group, so it fails with it the first time.
func ExampleDrain() {
	t := exampleT{}
	clk := clock()
	dlq := fifoqtest.NewQueue(t, "orders-dlq.fifo", fifoq.WithClock(clk))
	q := fifoqtest.NewQueue(t, "orders.fifo", fifoq.WithClock(clk),
		fifoq.WithVisibilityTimeout(30*time.Second), fifoq.WithDeadLetterQueue(dlq, 3))
	fifoqtest.SendGroup(t, q, "order-1", "create", "pay")
	fifoqtest.SendGroup(t, q, "order-2", "poison", "ship")

	start := clk.Now()
	r := fifoqtest.Drain(t, q, handleOrders, fifoqtest.DrainOptions{
		Consumer: fifoq.ConsumerOptions{ReportBatchItemFailures: true},
	})
	for _, b := range r.Batches {
		fmt.Printf("after %v: %v, %d failed: %q\n", b.At.Sub(start),
			b.Report.Outcome, len(b.Report.Failed), b.Bodies())
	}
	fmt.Println("drained:", r.Drained, "after", r.Elapsed)
	fmt.Printf("%q\n", r.Bodies())
	// Output:
	// after 0s: partial, 2 failed: ["create" "pay" "poison" "ship"]
	// after 30s: partial, 2 failed: ["poison" "ship"]
	// after 1m0s: partial, 2 failed: ["poison" "ship"]
	// drained: true after 1m30s
	// ["create" "pay" "poison" "ship" "poison" "ship" "poison" "ship"]
}

// RequireDeliveredInOrder checks the order of first deliveries per group. The second check shows a
// failure.
func ExampleRequireDeliveredInOrder() {
	t := exampleT{}
	q := fifoqtest.NewQueue(t, "orders.fifo", fifoq.WithClock(clock()))
	fifoqtest.SendGroup(t, q, "order-1", "create", "pay", "ship")
	fifoqtest.SendGroup(t, q, "order-2", "refund")
	r := fifoqtest.Drain(t, q, handleOrders, fifoqtest.DrainOptions{})

	fifoqtest.RequireDeliveredInOrder(t, r, map[string][]string{
		"order-1": {"create", "pay", "ship"},
		"order-2": {"refund"},
	})
	fifoqtest.RequireDeliveredInOrder(t, r, map[string][]string{
		"order-1": {"create", "ship", "pay"},
	})
	// Output:
	// FAIL: group "order-1": delivered ["create" "pay" "ship"], want ["create" "ship" "pay"]
	// group "order-2": delivered ["refund"], want []
	// (the test stops here)
}

// RequireInDLQ checks what a dead-letter queue holds, with the receive counts. The second check shows a
// failure.
func ExampleRequireInDLQ() {
	t := exampleT{}
	clk := clock()
	dlq := fifoqtest.NewQueue(t, "orders-dlq.fifo", fifoq.WithClock(clk))
	q := fifoqtest.NewQueue(t, "orders.fifo", fifoq.WithClock(clk), fifoq.WithDeadLetterQueue(dlq, 5))
	fifoqtest.SendGroup(t, q, "order-1", "create", "poison")
	fifoqtest.Drain(t, q, handleOrders, fifoqtest.DrainOptions{
		Consumer: fifoq.ConsumerOptions{ReportBatchItemFailures: true},
	})

	fifoqtest.RequireInDLQ(t, dlq, map[string]int{"poison": 5})
	fifoqtest.RequireInDLQ(t, dlq, map[string]int{"poison": 3, "ship": 3})
	// Output:
	// FAIL: dead-letter queue orders-dlq.fifo:
	// 	"poison": received 5 times, want 3
	// 	"ship": not in the queue, want received 3 times
	// (the test stops here)
}

// RequireNoneInFlight checks that no message is in flight: here, a handler that never succeeds ran until
// Drain's deadline, and its message is in flight again, received 5 times (at 0s, 30s, ..., 2m0s).
func ExampleRequireNoneInFlight() {
	t := exampleT{}
	q := fifoqtest.NewQueue(t, "jobs", fifoq.WithClock(clock()))
	fifoqtest.SendGroup(t, q, "", "job")
	r := fifoqtest.Drain(t, q, func(context.Context, []fifoq.Delivery) error {
		return errors.New("unavailable")
	}, fifoqtest.DrainOptions{Timeout: 2 * time.Minute})
	fmt.Println("drained:", r.Drained, "batches:", len(r.Batches))

	fifoqtest.RequireNoneInFlight(t, q)
	// Output:
	// drained: false batches: 5
	// FAIL: queue jobs has 1 message in flight, want none:
	// 	"job" (received 5 times, visible in 30s)
	// (the test stops here)
}

// RequireEmpty checks that a queue holds nothing; a failure lists what it holds.
func ExampleRequireEmpty() {
	t := exampleT{}
	q := fifoqtest.NewQueue(t, "orders.fifo", fifoq.WithClock(clock()))
	fifoqtest.RequireEmpty(t, q)

	fifoqtest.SendGroup(t, q, "order-1", "create", "pay")
	if _, err := q.Receive(context.Background(), fifoq.ReceiveOptions{}); err != nil {
		panic(err)
	}
	fifoqtest.RequireEmpty(t, q)
	// Output:
	// FAIL: queue orders.fifo holds 2 messages, want none:
	// 	"create" (group "order-1", in flight, received 1 time, visible in 30s)
	// 	"pay" (group "order-1", visible, received 0 times)
	// (the test stops here)
}

package fifoqtest_test

// The test in this file is the code that docs/consumer.md shows; the root package's docs_test.go checks
// that the snippet there is a copy of it.

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/fifoqtest"
)

// handle is the handler under test: it fails the messages whose body is "poison", reported as batch item
// failures.
func handle(_ context.Context, batch []fifoq.Delivery) error {
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

func TestOrders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { // virtual time: the 90 s of retries below pass at once
		dlq := fifoqtest.NewQueue(t, "orders-dlq.fifo") // fails the test on error; logs what is left if it fails
		q := fifoqtest.NewQueue(t, "orders.fifo", fifoq.WithDeadLetterQueue(dlq, 3))
		fifoqtest.SendGroup(t, q, "order-1", "create", "pay", "ship")
		fifoqtest.SendGroup(t, q, "order-2", "poison")

		r := fifoqtest.Drain(t, q, handle, fifoqtest.DrainOptions{ // a Consumer until the queue is empty
			Consumer: fifoq.ConsumerOptions{ReportBatchItemFailures: true}, // handle fails "poison" alone
		})

		fifoqtest.RequireDeliveredInOrder(t, r, map[string][]string{"order-1": {"create", "pay", "ship"}, "order-2": {"poison"}})
		fifoqtest.RequireInDLQ(t, dlq, map[string]int{"poison": 3}) // body -> receive count
		fifoqtest.RequireEmpty(t, q)
	})
}

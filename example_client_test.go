package fifoq_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/fifoq/fifoq"
)

// placeOrder is code written against fifoq.Sender: it sends to a *fifoq.Queue in a test, and to Amazon SQS
// through package sqsadapter in production, unchanged.
func placeOrder(ctx context.Context, orders fifoq.Sender, account, order string) error {
	_, err := orders.Send(ctx, fifoq.Message{Body: order, GroupID: account, DeduplicationID: order})
	return err
}

// A function that sends takes a fifoq.Sender, and runs over a queue in process as over SQS.
func ExampleSender() {
	ctx := context.Background()
	q, err := fifoq.New("orders.fifo")
	if err != nil {
		log.Fatal(err)
	}
	for _, order := range []string{"order-1", "order-2", "order-1"} { // the retry of order-1 is a duplicate
		if err := placeOrder(ctx, q, "account-7", order); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println(q.Stats().Visible)
	// Output: 2
}

// takeOne is code written against fifoq.QueueClient: it receives by hand, and hands a message it cannot
// handle yet back to the queue for a minute.
func takeOne(ctx context.Context, q fifoq.QueueClient, ready func(string) bool) (string, error) {
	ds, err := q.Receive(ctx, fifoq.ReceiveOptions{NoWaitTime: true})
	if err != nil || len(ds) == 0 {
		return "", err
	}
	d := ds[0]
	if !ready(d.Body) {
		return "", q.ChangeVisibility(ctx, d.ReceiptHandle, time.Minute)
	}
	return d.Body, q.Delete(ctx, d.ReceiptHandle)
}

// A worker that receives by hand takes a fifoq.QueueClient: both halves of a queue, in process or on SQS.
func ExampleQueueClient() {
	ctx := context.Background()
	clk := fifoq.NewManualClock(exStart)
	q, err := fifoq.New("jobs", fifoq.WithClock(clk))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := q.Send(ctx, fifoq.Message{Body: "job 1"}); err != nil {
		log.Fatal(err)
	}
	body, err := takeOne(ctx, q, func(string) bool { return false })
	fmt.Printf("%q %v %+v\n", body, err, q.Stats())
	clk.Advance(time.Minute)
	body, err = takeOne(ctx, q, func(string) bool { return true })
	fmt.Printf("%q %v %+v\n", body, err, q.Stats())
	// Output:
	// "" <nil> {Visible:0 InFlight:1 Delayed:0}
	// "job 1" <nil> {Visible:0 InFlight:0 Delayed:0}
}

// CheckMessage refuses a message every queue of its type would refuse, before anything is sent: the SQS
// adapter checks each message with it, so a bad message fails the same way in process and against SQS.
func ExampleCheckMessage() {
	err := fifoq.CheckMessage(fifoq.Message{Body: "order 1"}, true)
	fmt.Println(fifoq.ErrorCode(err), fifoq.ErrorMessage(err))
	fmt.Println(fifoq.CheckMessage(fifoq.Message{Body: "order 1", GroupID: "account-7"}, true))
	// Output:
	// MissingParameter The request must contain the parameter MessageGroupId.
	// <nil>
}

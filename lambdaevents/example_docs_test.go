package lambdaevents_test

// The code in this file is what docs/consumer.md shows; the root package's docs_test.go checks that the
// snippet there is a copy of it.

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/lambdaevents"
)

// handleSQS is a Lambda function's SQS handler, as written for aws-lambda-go: it reports the records it
// could not process as batch item failures.
func handleSQS(ctx context.Context, e events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	for _, r := range e.Records {
		fmt.Println(r.EventSourceARN, r.Attributes["MessageGroupId"], r.Body, r.Attributes["ApproximateReceiveCount"])
		if r.Body == "poison" {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
		}
	}
	return resp, nil
}

// A Lambda handler runs unchanged on a Consumer: each batch is the events.SQSEvent Lambda would send, and
// the batch item failures of its response fail those messages (on a FIFO queue, with the later messages of
// their group).
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q, err := fifoq.New("orders.fifo", fifoq.WithContentBasedDeduplication(),
		fifoq.WithClock(fifoq.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))))
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range []fifoq.Message{{GroupID: "order-1", Body: "create"}, {GroupID: "order-1", Body: "poison"}} {
		if _, err := q.Send(ctx, m); err != nil {
			log.Fatal(err)
		}
	}

	c, err := fifoq.NewConsumer(q, lambdaevents.Handler(handleSQS, lambdaevents.WithQueueName(q.Name())),
		fifoq.ConsumerOptions{ReportBatchItemFailures: true, OnBatch: func(fifoq.BatchReport) { cancel() }})
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Run(ctx); err != nil { // one batch, then OnBatch cancels ctx
		log.Fatal(err)
	}
	for m := range q.Messages() {
		fmt.Println("left:", m.Body)
	}
	// Output:
	// arn:aws:sqs:us-east-1:000000000000:orders.fifo order-1 create 1
	// arn:aws:sqs:us-east-1:000000000000:orders.fifo order-1 poison 1
	// left: poison
}

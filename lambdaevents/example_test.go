package lambdaevents_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/lambdaevents"
)

// A Lambda function written for aws-lambda-go runs unchanged on a fifoq Consumer: each batch comes as an
// events.SQSEvent with the records Lambda would send, and the item failures of its response fail only
// those messages (and, on a FIFO queue, the later messages of their group). The queue's ManualClock fixes
// the timestamps; RetryImmediately brings the failed messages back at once, and RunUntilEmpty returns once
// the queue is empty.
func ExampleHandler() {
	ctx := context.Background()
	clock := fifoq.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	q, err := fifoq.New("orders.fifo", fifoq.WithClock(clock), fifoq.WithContentBasedDeduplication())
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range []fifoq.Message{
		{GroupID: "order-1", Body: "pay"}, {GroupID: "order-1", Body: "ship"}, {GroupID: "order-2", Body: "refund"},
	} {
		if _, err := q.Send(ctx, m); err != nil {
			log.Fatal(err)
		}
	}

	// The Lambda function: "pay" fails on its first delivery.
	function := func(ctx context.Context, e events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, r := range e.Records {
			fmt.Printf("%s %s group=%s receive=%s sent=%s\n", r.EventSourceARN, r.Body,
				r.Attributes["MessageGroupId"], r.Attributes["ApproximateReceiveCount"], r.Attributes["SentTimestamp"])
			if r.Body == "pay" && r.Attributes["ApproximateReceiveCount"] == "1" {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
			}
		}
		return resp, nil
	}

	c, err := fifoq.NewConsumer(q, lambdaevents.Handler(function, lambdaevents.WithQueueName(q.Name())),
		fifoq.ConsumerOptions{ReportBatchItemFailures: true, RetryImmediately: true, MaxConcurrency: 1})
	if err != nil {
		log.Fatal(err)
	}
	if err := c.RunUntilEmpty(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// arn:aws:sqs:us-east-1:000000000000:orders.fifo pay group=order-1 receive=1 sent=1735689600000
	// arn:aws:sqs:us-east-1:000000000000:orders.fifo ship group=order-1 receive=1 sent=1735689600000
	// arn:aws:sqs:us-east-1:000000000000:orders.fifo refund group=order-2 receive=1 sent=1735689600000
	// arn:aws:sqs:us-east-1:000000000000:orders.fifo pay group=order-1 receive=2 sent=1735689600000
	// arn:aws:sqs:us-east-1:000000000000:orders.fifo ship group=order-1 receive=2 sent=1735689600000
}

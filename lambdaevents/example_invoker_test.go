package lambdaevents_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/lambdaevents"
)

// An Invoker delivers a queue's batches to a function over HTTP, as Lambda's event source mapping delivers
// them to a Lambda function. The function here is an HTTP server in the same process, answering as the
// Runtime Interface Emulator answers for a handler: with the handler's response, here a batch item failure
// for "pay". On a FIFO queue "ship", after "pay" in its group, stays in the queue with it; the others are
// deleted. OnBatch stops the Invoker after one batch.
func ExampleNewInvoker() {
	function := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var e events.SQSEvent
		if err := json.NewDecoder(r.Body).Decode(&e); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var resp events.SQSEventResponse
		for _, rec := range e.Records {
			fmt.Println(rec.EventSourceARN, rec.Attributes["MessageGroupId"], rec.Body)
			if rec.Body == "pay" {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
			}
		}
		_ = json.NewEncoder(w).Encode(resp)
	}))
	defer function.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q, err := fifoq.New("orders.fifo", fifoq.WithContentBasedDeduplication(),
		fifoq.WithClock(fifoq.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))))
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range []fifoq.Message{
		{GroupID: "order-1", Body: "create"}, {GroupID: "order-1", Body: "pay"},
		{GroupID: "order-1", Body: "ship"}, {GroupID: "order-2", Body: "refund"},
	} {
		if _, err := q.Send(ctx, m); err != nil {
			log.Fatal(err)
		}
	}

	inv, err := lambdaevents.NewInvoker(q, lambdaevents.Mapping{
		FunctionURL:           function.URL + "/2015-03-31/functions/function/invocations",
		EventSourceARN:        "arn:aws:sqs:eu-west-1:123456789012:orders.fifo",
		FunctionResponseTypes: []string{lambdaevents.ReportBatchItemFailures},
	}, lambdaevents.Options{OnBatch: func(r fifoq.BatchReport) {
		fmt.Println(r.Outcome, "failed:", len(r.Failed))
		cancel() // one batch, then stop
	}})
	if err != nil {
		log.Fatal(err)
	}
	if err := inv.Run(ctx); err != nil { // returns once ctx is done and the invocations under way have ended
		log.Fatal(err)
	}
	for m := range q.Messages() {
		fmt.Println("left:", m.Body)
	}
	fmt.Println("invocations:", inv.Metrics().Invocations, "item failures:", inv.Metrics().ItemFailures)
	// Output:
	// arn:aws:sqs:eu-west-1:123456789012:orders.fifo order-1 create
	// arn:aws:sqs:eu-west-1:123456789012:orders.fifo order-1 pay
	// arn:aws:sqs:eu-west-1:123456789012:orders.fifo order-1 ship
	// arn:aws:sqs:eu-west-1:123456789012:orders.fifo order-2 refund
	// partial failed: 2
	// left: pay
	// left: ship
	// invocations: 1 item failures: 1
}

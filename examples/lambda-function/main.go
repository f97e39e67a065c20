// Command lambda-function is the function of fifoq's event source mapping example: an SQS handler written
// with aws-lambda-go, as it would be deployed to AWS Lambda, run under the Lambda Runtime Interface Emulator,
// which takes the invocations of fifoq serve: on the machine itself ("go run ./local") or in a container of
// AWS's OS-only base image (docker-compose.yml); see README.md.
//
// It handles an order per record, in the order of the records. An order whose body starts with "fail"
// fails, and so does every later order of its message group in the batch, as AWS asks a FIFO function to
// do; they are reported as batch item failures, so that the others are deleted and these come back after
// the queue's visibility timeout, and move to its dead-letter queue past maxReceiveCount.
package main

import (
	"context"
	"log"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
)

// handle handles a batch of orders, and reports those that failed.
func handle(_ context.Context, event events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	failedGroups := make(map[string]bool)
	for _, r := range event.Records {
		group := r.Attributes["MessageGroupId"]
		if failedGroups[group] || strings.HasPrefix(r.Body, "fail") {
			failedGroups[group] = true // the later orders of the group wait for this one
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
			log.Printf("order %q of %s failed (receive %s)", r.Body, group, r.Attributes["ApproximateReceiveCount"])
			continue
		}
		log.Printf("order %q of %s done", r.Body, group)
	}
	return resp, nil
}

func main() { lambda.Start(handle) }

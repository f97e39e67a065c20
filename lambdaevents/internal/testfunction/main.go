// Command testfunction is the Lambda function of lambdaevents' end-to-end test (rie_test.go): an SQS handler
// written with aws-lambda-go, run by the Lambda Runtime Interface Emulator as its bootstrap.
//
// It writes each event it is given, byte for byte, to a file of its own in $FIFOQ_TEST_EVENTS_DIR, then
// handles the records in order, as AWS asks a FIFO function to: a record whose body starts with "fail" fails,
// and so does every later record of its message group, all reported as batch item failures. A record whose
// body is "boom" makes the whole invocation fail with an error.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

func handle(ctx context.Context, raw json.RawMessage) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	name := "event.json"
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		name = lc.AwsRequestID + ".json"
	}
	if err := os.WriteFile(filepath.Join(os.Getenv("FIFOQ_TEST_EVENTS_DIR"), name), raw, 0o644); err != nil {
		return resp, err
	}
	var e events.SQSEvent
	if err := json.Unmarshal(raw, &e); err != nil {
		return resp, err
	}
	failedGroups := map[string]bool{}
	for _, r := range e.Records {
		group := r.Attributes["MessageGroupId"]
		switch {
		case r.Body == "boom":
			return resp, errors.New("boom")
		case failedGroups[group] || strings.HasPrefix(r.Body, "fail"):
			failedGroups[group] = true
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
		}
	}
	return resp, nil
}

func main() { lambda.Start(handle) }

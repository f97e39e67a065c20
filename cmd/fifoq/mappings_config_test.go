package main

// Tests of the event source mappings of the config file: what is read, and the errors that stop a start
// with status 2, each naming the file, the line and the column, and the mapping (its index and queue).

import (
	"bytes"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq/lambdaevents"
)

// The mappings of a config file, read with their defaults left at zero (lambdaevents fills them in) and
// a 0 that AWS allows (maximumBatchingWindowInSeconds) kept.
func TestLoadConfigMappings(t *testing.T) {
	t.Parallel()
	path := writeFile(t, `{
  "queues": [{"name": "orders.fifo"}, {"name": "jobs"}],
  "eventSourceMappings": [
    {"queue": "orders.fifo", "functionUrl": "http://127.0.0.1:9000/2015-03-31/functions/function/invocations",
     "batchSize": 5, "functionResponseTypes": ["ReportBatchItemFailures"], "maximumConcurrency": 4,
     "functionTimeout": 10, "functionConcurrency": 2, "enabled": false, "maximumBatchingWindowInSeconds": 0},
    {"queue": "arn:aws:sqs:eu-west-1:123456789012:jobs", "functionUrl": "https://fn.example/",
     "batchSize": 100, "maximumBatchingWindowInSeconds": 5}
  ]
}`)
	cfg, err := parseServe([]string{"--config", path}, noEnv, &bytes.Buffer{})
	require.NoError(t, err)
	off := false
	require.Equal(t, []mappingSpec{
		{Queue: "orders.fifo", Mapping: lambdaevents.Mapping{
			FunctionURL: "http://127.0.0.1:9000/2015-03-31/functions/function/invocations", BatchSize: 5,
			FunctionResponseTypes: []string{"ReportBatchItemFailures"}, MaximumConcurrency: 4, Enabled: &off,
			FunctionTimeout: 10 * time.Second, FunctionConcurrency: 2,
		}, origin: "config " + path + ":4:5: event source mapping 0 (queue orders.fifo)"},
		{Queue: "arn:aws:sqs:eu-west-1:123456789012:jobs", Mapping: lambdaevents.Mapping{
			FunctionURL: "https://fn.example/", BatchSize: 100, MaximumBatchingWindow: 5 * time.Second,
		}, origin: "config " + path + ":7:5: event source mapping 1 (queue arn:aws:sqs:eu-west-1:123456789012:jobs)"},
	}, cfg.mappings)
	require.Len(t, cfg.queues, 2)

	cfg, err = parseServe([]string{"--config", writeFile(t, `{"queues": [{"name": "a"}]}`)}, noEnv, &bytes.Buffer{})
	require.NoError(t, err)
	require.Nil(t, cfg.mappings, "no mappings")
}

// Every field is checked as CreateEventSourceMapping checks it, with one error that names the file, the
// line and the column of the mapping, the mapping's index and its queue, the field by its name in the file
// and the rule; a value of the wrong JSON type is named at its own line and column.
func TestMappingConfigErrors(t *testing.T) {
	t.Parallel()
	const fifoMapping = `"queue": "orders.fifo", "functionUrl": "http://127.0.0.1:9000/2015-03-31/functions/function/invocations"`
	const stdMapping = `"queue": "jobs", "functionUrl": "http://127.0.0.1:9000/fn"`
	const at = ":4:3: event source mapping 1 "
	for _, tc := range []struct{ mapping, want string }{
		{`{"functionUrl": "http://127.0.0.1:9000/fn"}`, ":4:3: event source mapping 1: no queue: give \"queue\", a queue's name or ARN"},
		{`{"queue": "arn:aws:sns:us-east-1:000000000000:topic", "functionUrl": "http://h/"}`,
			at + `(queue arn:aws:sns:us-east-1:000000000000:topic): queue "arn:aws:sns:us-east-1:000000000000:topic": want an SQS ARN`},
		{`{"queue": "http://127.0.0.1:9324/000000000000/jobs", "functionUrl": "http://h/"}`,
			at + `(queue http://127.0.0.1:9324/000000000000/jobs): queue "http://127.0.0.1:9324/000000000000/jobs": want a queue's name or an SQS ARN`},
		{`{"queue": "orders.fifo"}`, at + "(queue orders.fifo): invalid functionUrl: empty: the URL to POST the batches to is required"},
		{`{"queue": "jobs", "functionUrl": "ftp://h/fn"}`, at + `(queue jobs): invalid functionUrl: "ftp://h/fn", want an http or https URL`},
		{`{` + fifoMapping + `, "batchSize": 11}`, at + "(queue orders.fifo): invalid batchSize: 11, a FIFO queue takes 1..10"},
		{`{` + fifoMapping + `, "batchSize": 0}`, at + "(queue orders.fifo): invalid batchSize: 0, want 1..10 on a FIFO queue, 1..10000 on a standard one"},
		{`{` + stdMapping + `, "batchSize": 10001, "maximumBatchingWindowInSeconds": 1}`, at + "(queue jobs): invalid batchSize: 10001, want 1..10000"},
		{`{` + stdMapping + `, "batchSize": 11}`, at + "(queue jobs): invalid batchSize: 11 needs a maximumBatchingWindowInSeconds of at least 1s"},
		{`{` + stdMapping + `, "maximumBatchingWindowInSeconds": 301}`, at + "(queue jobs): invalid maximumBatchingWindowInSeconds: 5m1s, want 0..5m0s"},
		{`{` + stdMapping + `, "maximumBatchingWindowInSeconds": -1}`, at + "(queue jobs): invalid maximumBatchingWindowInSeconds: -1s, want 0..5m0s"},
		{`{` + fifoMapping + `, "maximumBatchingWindowInSeconds": 1}`,
			at + "(queue orders.fifo): invalid maximumBatchingWindowInSeconds: 1s: batching window is not supported for FIFO queues"},
		{`{` + fifoMapping + `, "functionResponseTypes": ["ReportBatchItemFailure"]}`,
			at + `(queue orders.fifo): invalid functionResponseTypes: "ReportBatchItemFailure", the one value is "ReportBatchItemFailures"`},
		{`{` + fifoMapping + `, "maximumConcurrency": 1}`, at + "(queue orders.fifo): invalid maximumConcurrency: 1, want 2..1000"},
		{`{` + fifoMapping + `, "maximumConcurrency": 0}`, at + "(queue orders.fifo): invalid maximumConcurrency: 0, want 2..1000"},
		{`{` + fifoMapping + `, "maximumConcurrency": 1001}`, at + "(queue orders.fifo): invalid maximumConcurrency: 1001, want 2..1000"},
		{`{` + fifoMapping + `, "functionTimeout": 901}`, at + "(queue orders.fifo): invalid functionTimeout: 15m1s, want 1s..15m0s"},
		{`{` + fifoMapping + `, "functionTimeout": 0}`, at + "(queue orders.fifo): invalid functionTimeout: 0, want 1..900 seconds"},
		{`{` + fifoMapping + `, "functionConcurrency": 1001}`, at + "(queue orders.fifo): invalid functionConcurrency: 1001, want 1..1000"},
		{`{` + fifoMapping + `, "functionConcurrency": 0}`, at + "(queue orders.fifo): invalid functionConcurrency: 0, want 1..1000"},
	} {
		path := writeFile(t, "{\"queues\": [{\"name\": \"orders.fifo\"}, {\"name\": \"jobs\"}],\n\"eventSourceMappings\": [\n  {"+
			fifoMapping+"},\n  "+tc.mapping+"\n]}")
		var stderr bytes.Buffer
		_, err := parseServe([]string{"--config", path}, noEnv, &stderr)
		require.ErrorIs(t, err, errUsage, "%s", tc.mapping)
		require.Contains(t, stderr.String(), "fifoq serve: config "+path+tc.want, "%s", tc.mapping)
		require.Equal(t, 1, strings.Count(stderr.String(), "\n"), "%s: one line", tc.mapping)
	}

	// The JSON types, named where the value is.
	for _, tc := range []struct{ mapping, want string }{
		{`{"queue": "jobs", "batchSize": "ten"}`, ":4:38: eventSourceMappings.batchSize: want a whole number, not a string"},
		{`{"queue": "jobs", "batchSize": 2.5}`, ":4:36: eventSourceMappings.batchSize: want a whole number, not a number 2.5"},
		{`{"queue": "jobs", "enabled": "yes"}`, ":4:36: eventSourceMappings.enabled: want true or false, not a string"},
		{`{"queue": "jobs", "functionResponseTypes": "ReportBatchItemFailures"}`,
			":4:70: eventSourceMappings.functionResponseTypes: want a list, not a string"},
		{`{"queue": "jobs", "functionName": "fn"}`, `:4:21: unknown field "functionName"`},
	} {
		path := writeFile(t, "{\"queues\": [{\"name\": \"orders.fifo\"}, {\"name\": \"jobs\"}],\n\"eventSourceMappings\": [\n  {},\n  "+
			tc.mapping+"\n]}")
		var stderr bytes.Buffer
		_, err := parseServe([]string{"--config", path}, noEnv, &stderr)
		require.ErrorIs(t, err, errUsage, "%s", tc.mapping)
		require.Contains(t, stderr.String(), "fifoq serve: config "+path+tc.want, "%s", tc.mapping)
	}
}

// A mapping that cannot run with the server's queues stops the start with status 2 and one line naming the
// mapping, before the server listens: a queue the server does not hold (by name or by ARN), a function
// timeout longer than the queue's visibility timeout (AWS's message), a second mapping of a queue to the
// same function.
func TestServeMappingStartErrors(t *testing.T) {
	t.Parallel()
	const fn = "http://127.0.0.1:9/2015-03-31/functions/function/invocations"
	for _, tc := range []struct{ mappings, want string }{
		{`{"queue": "missing", "functionUrl": "` + fn + `"}`,
			`event source mapping 0 (queue missing): the server has no queue missing in account 000000000000 and region us-east-1`},
		{`{"queue": "arn:aws:sqs:eu-west-1:000000000000:jobs", "functionUrl": "` + fn + `"}`,
			`event source mapping 0 (queue arn:aws:sqs:eu-west-1:000000000000:jobs): the server has no queue jobs in account 000000000000 and region eu-west-1`},
		{`{"queue": "jobs", "functionUrl": "` + fn + `", "functionTimeout": 31}`,
			`event source mapping 0 (queue jobs): invalid functionTimeout: Queue visibility timeout: 30 seconds is less than Function timeout: 31 seconds`},
		{`{"queue": "jobs", "functionUrl": "` + fn + `"},` + "\n" + `{"queue": "arn:aws:sqs:us-east-1:000000000000:jobs", "functionUrl": "` + fn + `"}`,
			`event source mapping 1 (queue arn:aws:sqs:us-east-1:000000000000:jobs): the same queue and function as config `},
	} {
		config := writeFile(t, fmt.Sprintf("{\"queues\": [{\"name\": \"jobs\"}],\n\"eventSourceMappings\": [\n%s\n]}", tc.mappings))
		code, stdout, stderr := runProcess(t, nil, "serve", "--addr", "127.0.0.1:0", "--config", config)
		require.Equal(t, 2, code, "%s: stderr %s", tc.mappings, stderr)
		require.Empty(t, stdout, "it never listened")
		require.Contains(t, stderr, "fifoq serve: config "+config+":", tc.mappings)
		require.Contains(t, stderr, tc.want, tc.mappings)
	}

	// A field's error exits 2 too, from the command line's parse.
	config := writeFile(t, `{"queues": [{"name": "jobs"}], "eventSourceMappings": [{"queue": "jobs", "functionUrl": "`+fn+`", "batchSize": 0}]}`)
	code, stdout, stderr := runProcess(t, nil, "serve", "--addr", "127.0.0.1:0", "--config", config)
	require.Equal(t, 2, code, stderr)
	require.Empty(t, stdout)
	require.Equal(t, "fifoq serve: config "+config+":1:56: event source mapping 0 (queue jobs): invalid batchSize: 0, want 1..10 on a FIFO queue, 1..10000 on a standard one\n", stderr)
}

// The config of examples/lambda-function, which its docker-compose.yml gives fifoq serve, starts a server:
// its queues, and its mapping to the function's container (not running here: no message, no invocation).
func TestExampleLambdaFunctionConfig(t *testing.T) {
	t.Parallel()
	c := startChild(t, "serve", "--addr", "127.0.0.1:0", "--config", "../../examples/lambda-function/fifoq.json")
	list, err := c.client().ListQueues(t.Context(), &sqs.ListQueuesInput{})
	require.NoError(t, err)
	require.Equal(t, []string{c.endpoint + "/000000000000/orders-dlq.fifo", c.endpoint + "/000000000000/orders.fifo"}, list.QueueUrls)
	c.stop(syscall.SIGTERM)
	require.Contains(t, c.stderr.String(), `msg="event source mapping" queue=orders.fifo `+
		`function_url=http://function:8080/2015-03-31/functions/function/invocations enabled=true batch_size=10 `+
		`batching_window=0s maximum_concurrency=0 function_concurrency=1 function_timeout=5s report_batch_item_failures=true `+
		`event_source_arn=arn:aws:sqs:us-east-1:000000000000:orders.fifo`)
}

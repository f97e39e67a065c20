package lambdaevents_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/lambdaevents"
)

const testURL = "http://127.0.0.1:9000/2015-03-31/functions/function/invocations"

// TestValidate checks each rule of CreateEventSourceMapping that Validate applies, with its sentinel: the
// values at each limit pass, the values just past it fail, and the error names the field.
func TestValidate(t *testing.T) {
	t.Parallel()
	ok := lambdaevents.Mapping{FunctionURL: testURL}
	with := func(f func(*lambdaevents.Mapping)) lambdaevents.Mapping {
		m := ok
		f(&m)
		return m
	}
	for _, tc := range []struct {
		name string
		m    lambdaevents.Mapping
		fifo bool
		want error // nil: valid
	}{
		{"defaults, standard", ok, false, nil},
		{"defaults, FIFO", ok, true, nil},
		{"no URL", lambdaevents.Mapping{}, false, lambdaevents.ErrInvalidFunctionURL},
		{"relative URL", with(func(m *lambdaevents.Mapping) { m.FunctionURL = "/invocations" }), false, lambdaevents.ErrInvalidFunctionURL},
		{"ftp URL", with(func(m *lambdaevents.Mapping) { m.FunctionURL = "ftp://h/x" }), false, lambdaevents.ErrInvalidFunctionURL},
		{"URL without host", with(func(m *lambdaevents.Mapping) { m.FunctionURL = "http:///x" }), false, lambdaevents.ErrInvalidFunctionURL},
		{"unparsable URL", with(func(m *lambdaevents.Mapping) { m.FunctionURL = "http://h:port:x/" }), false, lambdaevents.ErrInvalidFunctionURL},
		{"https URL", with(func(m *lambdaevents.Mapping) { m.FunctionURL = "https://fn.example/x" }), false, nil},
		{"ARN", with(func(m *lambdaevents.Mapping) { m.EventSourceARN = "arn:aws:sqs:eu-west-1:123456789012:jobs" }), false, nil},
		{"ARN of a FIFO queue", with(func(m *lambdaevents.Mapping) { m.EventSourceARN = "arn:aws:sqs:eu-west-1:123456789012:jobs.fifo" }), true, nil},
		{"ARN of a FIFO queue, standard source", with(func(m *lambdaevents.Mapping) { m.EventSourceARN = "arn:aws:sqs:eu-west-1:123456789012:jobs.fifo" }), false, lambdaevents.ErrInvalidEventSourceARN},
		{"ARN of a standard queue, FIFO source", with(func(m *lambdaevents.Mapping) { m.EventSourceARN = "arn:aws:sqs:eu-west-1:123456789012:jobs" }), true, lambdaevents.ErrInvalidEventSourceARN},
		{"ARN of a topic", with(func(m *lambdaevents.Mapping) { m.EventSourceARN = "arn:aws:sns:eu-west-1:123456789012:jobs" }), false, lambdaevents.ErrInvalidEventSourceARN},
		{"ARN without region", with(func(m *lambdaevents.Mapping) { m.EventSourceARN = "arn:aws:sqs::123456789012:jobs" }), false, lambdaevents.ErrInvalidEventSourceARN},
		{"a queue name", with(func(m *lambdaevents.Mapping) { m.EventSourceARN = "jobs" }), false, lambdaevents.ErrInvalidEventSourceARN},
		{"batch 1", with(func(m *lambdaevents.Mapping) { m.BatchSize = 1 }), true, nil},
		{"batch -1", with(func(m *lambdaevents.Mapping) { m.BatchSize = -1 }), false, lambdaevents.ErrInvalidBatchSize},
		{"batch 10, FIFO", with(func(m *lambdaevents.Mapping) { m.BatchSize = 10 }), true, nil},
		{"batch 11, FIFO", with(func(m *lambdaevents.Mapping) { m.BatchSize = 11 }), true, lambdaevents.ErrInvalidBatchSize},
		{"batch 11 without window", with(func(m *lambdaevents.Mapping) { m.BatchSize = 11 }), false, lambdaevents.ErrInvalidBatchSize},
		{"batch 11 with 1s window", with(func(m *lambdaevents.Mapping) { m.BatchSize, m.MaximumBatchingWindow = 11, time.Second }), false, nil},
		{"batch 10000", with(func(m *lambdaevents.Mapping) { m.BatchSize, m.MaximumBatchingWindow = 10_000, time.Second }), false, nil},
		{"batch 10001", with(func(m *lambdaevents.Mapping) { m.BatchSize, m.MaximumBatchingWindow = 10_001, time.Second }), false, lambdaevents.ErrInvalidBatchSize},
		{"window 300s", with(func(m *lambdaevents.Mapping) { m.MaximumBatchingWindow = 300 * time.Second }), false, nil},
		{"window 301s", with(func(m *lambdaevents.Mapping) { m.MaximumBatchingWindow = 301 * time.Second }), false, lambdaevents.ErrInvalidBatchingWindow},
		{"window -1s", with(func(m *lambdaevents.Mapping) { m.MaximumBatchingWindow = -time.Second }), false, lambdaevents.ErrInvalidBatchingWindow},
		{"window 1.5s", with(func(m *lambdaevents.Mapping) { m.MaximumBatchingWindow = 1500 * time.Millisecond }), false, lambdaevents.ErrInvalidBatchingWindow},
		{"window on FIFO", with(func(m *lambdaevents.Mapping) { m.MaximumBatchingWindow = time.Second }), true, lambdaevents.ErrInvalidBatchingWindow},
		{"ReportBatchItemFailures", with(func(m *lambdaevents.Mapping) { m.FunctionResponseTypes = []string{"ReportBatchItemFailures"} }), true, nil},
		{"empty response types", with(func(m *lambdaevents.Mapping) { m.FunctionResponseTypes = []string{} }), true, nil},
		{"lower-case response type", with(func(m *lambdaevents.Mapping) { m.FunctionResponseTypes = []string{"reportBatchItemFailures"} }), false, lambdaevents.ErrInvalidFunctionResponseTypes},
		{"two response types", with(func(m *lambdaevents.Mapping) {
			m.FunctionResponseTypes = []string{"ReportBatchItemFailures", "ReportBatchItemFailures"}
		}), false, lambdaevents.ErrInvalidFunctionResponseTypes},
		{"concurrency 2", with(func(m *lambdaevents.Mapping) { m.MaximumConcurrency = 2 }), false, nil},
		{"concurrency 1", with(func(m *lambdaevents.Mapping) { m.MaximumConcurrency = 1 }), false, lambdaevents.ErrInvalidMaximumConcurrency},
		{"concurrency 1000", with(func(m *lambdaevents.Mapping) { m.MaximumConcurrency = 1000 }), false, nil},
		{"concurrency 1001", with(func(m *lambdaevents.Mapping) { m.MaximumConcurrency = 1001 }), false, lambdaevents.ErrInvalidMaximumConcurrency},
		{"concurrency -2", with(func(m *lambdaevents.Mapping) { m.MaximumConcurrency = -2 }), false, lambdaevents.ErrInvalidMaximumConcurrency},
		{"timeout 1s", with(func(m *lambdaevents.Mapping) { m.FunctionTimeout = time.Second }), false, nil},
		{"timeout 900s", with(func(m *lambdaevents.Mapping) { m.FunctionTimeout = 900 * time.Second }), false, nil},
		{"timeout 901s", with(func(m *lambdaevents.Mapping) { m.FunctionTimeout = 901 * time.Second }), false, lambdaevents.ErrInvalidFunctionTimeout},
		{"timeout -1s", with(func(m *lambdaevents.Mapping) { m.FunctionTimeout = -time.Second }), false, lambdaevents.ErrInvalidFunctionTimeout},
		{"timeout 500ms", with(func(m *lambdaevents.Mapping) { m.FunctionTimeout = 500 * time.Millisecond }), false, lambdaevents.ErrInvalidFunctionTimeout},
		{"function concurrency 1000", with(func(m *lambdaevents.Mapping) { m.FunctionConcurrency = 1000 }), false, nil},
		{"function concurrency 1001", with(func(m *lambdaevents.Mapping) { m.FunctionConcurrency = 1001 }), false, lambdaevents.ErrInvalidFunctionConcurrency},
		{"function concurrency -1", with(func(m *lambdaevents.Mapping) { m.FunctionConcurrency = -1 }), false, lambdaevents.ErrInvalidFunctionConcurrency},
	} {
		err := tc.m.Validate(tc.fifo)
		if tc.want == nil {
			require.NoError(t, err, "%s: %+v (FIFO %v)", tc.name, tc.m, tc.fifo)
			continue
		}
		require.ErrorIs(t, err, tc.want, "%s: %+v (FIFO %v)", tc.name, tc.m, tc.fifo)
		for _, other := range sentinels {
			if other != tc.want {
				require.NotErrorIs(t, err, other, "%s: %v matches more than its own sentinel", tc.name, err)
			}
		}
	}
}

var sentinels = []error{
	lambdaevents.ErrInvalidFunctionURL, lambdaevents.ErrInvalidEventSourceARN, lambdaevents.ErrInvalidBatchSize,
	lambdaevents.ErrInvalidBatchingWindow, lambdaevents.ErrInvalidFunctionResponseTypes,
	lambdaevents.ErrInvalidMaximumConcurrency, lambdaevents.ErrInvalidFunctionTimeout,
	lambdaevents.ErrInvalidFunctionConcurrency,
}

// TestValidateMessages checks that an error says the field, the value and the rule.
func TestValidateMessages(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		m    lambdaevents.Mapping
		fifo bool
		want string
	}{
		{lambdaevents.Mapping{FunctionURL: testURL, BatchSize: 11}, true, "lambdaevents: invalid BatchSize: 11, a FIFO queue takes 1..10"},
		{lambdaevents.Mapping{FunctionURL: testURL, BatchSize: 100}, false, "lambdaevents: invalid BatchSize: 100 needs a MaximumBatchingWindow of at least 1s"},
		{lambdaevents.Mapping{FunctionURL: testURL, MaximumBatchingWindow: 5 * time.Second}, true,
			"lambdaevents: invalid MaximumBatchingWindow: 5s: batching window is not supported for FIFO queues"},
		{lambdaevents.Mapping{FunctionURL: testURL, MaximumConcurrency: 1}, false, "lambdaevents: invalid MaximumConcurrency: 1, want 2..1000"},
		{lambdaevents.Mapping{FunctionURL: testURL, FunctionTimeout: time.Hour}, false, "lambdaevents: invalid FunctionTimeout: 1h0m0s, want 1s..15m0s"},
		{lambdaevents.Mapping{}, false, "lambdaevents: invalid FunctionURL: empty: the URL to POST the batches to is required"},
	} {
		require.EqualError(t, tc.m.Validate(tc.fifo), tc.want, "%+v", tc.m)
	}
}

// TestNewInvokerVisibilityTimeout checks AWS's rule that the function timeout is at most the queue's
// visibility timeout, with AWS's message, and that NewInvoker validates the mapping for the queue's kind.
func TestNewInvokerVisibilityTimeout(t *testing.T) {
	t.Parallel()
	q, err := fifoq.New("jobs", fifoq.WithVisibilityTimeout(30*time.Second))
	require.NoError(t, err)
	_, err = lambdaevents.NewInvoker(q, lambdaevents.Mapping{FunctionURL: testURL, FunctionTimeout: 60 * time.Second}, lambdaevents.Options{})
	require.ErrorIs(t, err, lambdaevents.ErrInvalidFunctionTimeout)
	require.EqualError(t, err, "lambdaevents: invalid FunctionTimeout: Queue visibility timeout: 30 seconds is less than Function timeout: 60 seconds")
	inv, err := lambdaevents.NewInvoker(q, lambdaevents.Mapping{FunctionURL: testURL, FunctionTimeout: 30 * time.Second}, lambdaevents.Options{})
	require.NoError(t, err)
	m := inv.Mapping()
	require.Equal(t, 10, m.BatchSize)
	require.Equal(t, 1, m.FunctionConcurrency)

	fq, err := fifoq.New("jobs.fifo")
	require.NoError(t, err)
	_, err = lambdaevents.NewInvoker(fq, lambdaevents.Mapping{FunctionURL: testURL, BatchSize: 20, MaximumBatchingWindow: time.Second}, lambdaevents.Options{})
	require.ErrorIs(t, err, lambdaevents.ErrInvalidBatchSize)
}

func ExampleMapping_Validate() {
	m := lambdaevents.Mapping{FunctionURL: testURL, BatchSize: 100} // no batching window
	err := m.Validate(false)
	fmt.Println(errors.Is(err, lambdaevents.ErrInvalidBatchSize))
	fmt.Println(err)
	// Output:
	// true
	// lambdaevents: invalid BatchSize: 100 needs a MaximumBatchingWindow of at least 1s
}

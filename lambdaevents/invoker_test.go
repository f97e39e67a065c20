package lambdaevents_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/lambdaevents"
)

var reportItems = []string{lambdaevents.ReportBatchItemFailures}

// itemFailures answers a partial batch response naming the records with the bodies given.
func itemFailures(bodies ...string) func(events.SQSEvent, int) answer {
	return func(e events.SQSEvent, _ int) answer {
		var items []string
		for _, b := range bodies {
			items = append(items, fmt.Sprintf(`{"itemIdentifier":%q}`, idOf(e, b)))
		}
		return answer{body: `{"batchItemFailures":[` + strings.Join(items, ",") + `]}`}
	}
}

func fixed(a answer) func(events.SQSEvent, int) answer {
	return func(events.SQSEvent, int) answer { return a }
}

// TestInvokerAnswers checks how each answer of the function settles a batch of three messages of one FIFO
// group (and of a standard queue where it differs): what is deleted, what is left to come back after the
// visibility timeout, the batch's outcome and the kind of its error, and the metrics.
func TestInvokerAnswers(t *testing.T) {
	all := []string{"m1", "m2", "m3"}
	for _, tc := range []struct {
		name     string
		report   bool // ReportBatchItemFailures
		standard bool
		answer   func(events.SQSEvent, int) answer
		left     []string
		outcome  fifoq.Outcome
		kind     lambdaevents.ErrorKind // of a whole-batch failure
		items    uint64                 // ItemFailures
	}{
		{name: "no body", report: true, answer: fixed(answer{}), outcome: fifoq.OutcomeSuccess},
		{name: "null", report: true, answer: fixed(answer{body: "null"}), outcome: fifoq.OutcomeSuccess},
		{name: "202, no body", report: true, answer: fixed(answer{status: 202}), outcome: fifoq.OutcomeSuccess},
		{name: "empty list", report: true, answer: fixed(answer{body: `{"batchItemFailures":[]}`}), outcome: fifoq.OutcomeSuccess},
		{name: "null list", report: true, answer: fixed(answer{body: `{"batchItemFailures":null}`}), outcome: fifoq.OutcomeSuccess},
		{name: "empty object", report: true, answer: fixed(answer{body: `{}`}), outcome: fifoq.OutcomeSuccess},
		{name: "other object", report: true, answer: fixed(answer{body: `{"statusCode":200,"BatchItemFailures":[{"itemIdentifier":"x"}]}`}),
			outcome: fifoq.OutcomeSuccess},
		{name: "item failure fails the rest of its group", report: true, answer: itemFailures("m2"),
			left: []string{"m2", "m3"}, outcome: fifoq.OutcomePartial, items: 1},
		{name: "item failure, standard queue", report: true, standard: true, answer: itemFailures("m2"),
			left: []string{"m2"}, outcome: fifoq.OutcomePartial, items: 1},
		{name: "failed and unprocessed, as AWS asks of FIFO functions", report: true, answer: itemFailures("m2", "m3", "m2"),
			left: []string{"m2", "m3"}, outcome: fifoq.OutcomePartial, items: 2},
		{name: "item failures ignored without ReportBatchItemFailures", answer: itemFailures("m2"), outcome: fifoq.OutcomeSuccess},
		{name: "invalid JSON ignored without ReportBatchItemFailures", answer: fixed(answer{body: "done"}), outcome: fifoq.OutcomeSuccess},
		{name: "500", report: true, answer: fixed(answer{status: 500, body: `{"batchItemFailures":[]}`}),
			left: all, outcome: fifoq.OutcomeError, kind: lambdaevents.ErrorStatus},
		{name: "400 of the emulator, busy", answer: fixed(answer{status: 400}),
			left: all, outcome: fifoq.OutcomeError, kind: lambdaevents.ErrorStatus},
		{name: "X-Amz-Function-Error", report: true, answer: fixed(answer{header: "Unhandled", body: `{"batchItemFailures":[]}`}),
			left: all, outcome: fifoq.OutcomeError, kind: lambdaevents.ErrorFunction},
		{name: "error body, as the emulator answers", answer: fixed(answer{body: `{"errorMessage":"boom","errorType":"errorString"}`}),
			left: all, outcome: fifoq.OutcomeError, kind: lambdaevents.ErrorFunction},
		{name: "errorType alone", report: true, answer: fixed(answer{body: `{"errorType":"Runtime.ExitError"}`}),
			left: all, outcome: fifoq.OutcomeError, kind: lambdaevents.ErrorFunction},
		{name: "the emulator's timeout", answer: fixed(answer{body: "Task timed out after 3.00 seconds"}),
			left: all, outcome: fifoq.OutcomeError, kind: lambdaevents.ErrorTimeout},
		{name: "invalid JSON", report: true, answer: fixed(answer{body: `{"batchItemFailures":[`}),
			left: all, outcome: fifoq.OutcomeError, kind: lambdaevents.ErrorResponse},
		{name: "a string", report: true, answer: fixed(answer{body: `"ok"`}),
			left: all, outcome: fifoq.OutcomeError, kind: lambdaevents.ErrorResponse},
		{name: "list not a list", report: true, answer: fixed(answer{body: `{"batchItemFailures":{}}`}),
			left: all, outcome: fifoq.OutcomeError, kind: lambdaevents.ErrorResponse},
		{name: "item not an object", report: true, answer: fixed(answer{body: `{"batchItemFailures":["x"]}`}),
			left: all, outcome: fifoq.OutcomeError, kind: lambdaevents.ErrorResponse},
		{name: "empty itemIdentifier", report: true, answer: fixed(answer{body: `{"batchItemFailures":[{"itemIdentifier":""}]}`}),
			left: all, outcome: fifoq.OutcomeError, kind: lambdaevents.ErrorResponse},
		{name: "null itemIdentifier", report: true, answer: fixed(answer{body: `{"batchItemFailures":[{"itemIdentifier":null}]}`}),
			left: all, outcome: fifoq.OutcomeError, kind: lambdaevents.ErrorResponse},
		{name: "itemIdentifier a number", report: true, answer: fixed(answer{body: `{"batchItemFailures":[{"itemIdentifier":7}]}`}),
			left: all, outcome: fifoq.OutcomeError, kind: lambdaevents.ErrorResponse},
		{name: "bad key name", report: true, answer: fixed(answer{body: `{"batchItemFailures":[{"itemId":"x"}]}`}),
			left: all, outcome: fifoq.OutcomeError, kind: lambdaevents.ErrorResponse},
		{name: "unknown itemIdentifier", report: true, answer: fixed(answer{body: `{"batchItemFailures":[{"itemIdentifier":"nope"}]}`}),
			left: all, outcome: fifoq.OutcomeError, kind: lambdaevents.ErrorResponse},
		{name: "one known, one unknown", report: true, answer: func(e events.SQSEvent, _ int) answer {
			return answer{body: fmt.Sprintf(`{"batchItemFailures":[{"itemIdentifier":%q},{"itemIdentifier":"nope"}]}`, idOf(e, "m1"))}
		}, left: all, outcome: fifoq.OutcomeError, kind: lambdaevents.ErrorResponse},
		{name: "larger than 6 MB", answer: fixed(answer{body: strings.Repeat(" ", 6<<20+1)}),
			left: all, outcome: fifoq.OutcomeError, kind: lambdaevents.ErrorResponse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fn := newFunction(t, tc.answer)
			synctest.Test(t, func(t *testing.T) {
				q, err := newQueue(!tc.standard, fifoq.WithVisibilityTimeout(30*time.Second))
				require.NoError(t, err)
				sendAll(t, q, "g", all...)
				m := lambdaevents.Mapping{FunctionURL: fn.url()}
				if tc.report {
					m.FunctionResponseTypes = reportItems
				}
				inv := start(t, q, m, lambdaevents.Options{})
				synctest.Wait()
				defer inv.stop(t)

				require.Len(t, fn.calls(), 1, "invocations")
				require.Len(t, fn.calls()[0].Records, 3)
				require.Equal(t, tc.left, left(q), "messages left in the queue")
				for s := range q.Messages() {
					require.Equal(t, fifoq.StateInFlight, s.State, "%s comes back after the visibility timeout", s.Body)
				}
				reports := inv.batchReports()
				require.Len(t, reports, 1)
				r := reports[0]
				require.Equal(t, tc.outcome, r.Outcome, "outcome; error %v", r.Err)
				require.Len(t, r.Failed, len(tc.left))
				var fe *lambdaevents.FunctionError
				if tc.kind == 0 {
					require.False(t, errors.As(r.Err, &fe), "a whole-batch failure: %v", r.Err)
				} else {
					require.ErrorAs(t, r.Err, &fe)
					require.Equal(t, tc.kind, fe.Kind, "kind of %v", fe)
				}
				mt := inv.Metrics()
				require.Equal(t, uint64(1), mt.Invocations)
				require.Equal(t, uint64(3), mt.Records)
				require.Equal(t, tc.items, mt.ItemFailures)
				require.Equal(t, uint64(1), mt.Duration.Count)
				for kind, n := range mt.Errors {
					want := uint64(0)
					if kind == tc.kind {
						want = 1
					}
					require.Equal(t, want, n, "Errors[%v]", kind)
				}
			})
		})
	}
}

// TestInvokerFunctionErrorText checks what a FunctionError says.
func TestInvokerFunctionErrorText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a    answer
		want string
	}{
		{answer{status: 502, body: `{"errorMessage":"init failed","errorType":"Runtime.ExitError"}`},
			"lambdaevents: function answered 502 Bad Gateway: Runtime.ExitError: init failed"},
		{answer{body: `{"errorMessage":"boom","errorType":"errorString"}`}, "lambdaevents: function error: errorString: boom"},
		{answer{header: "Unhandled"}, "lambdaevents: function error: Unhandled"},
		{answer{body: `{"batchItemFailures":[{"itemIdentifier":"nope"}]}`},
			`lambdaevents: function answer not accepted: batchItemFailures[0]: itemIdentifier "nope" is not a messageId of the batch`},
	} {
		fn := newFunction(t, fixed(tc.a))
		synctest.Test(t, func(t *testing.T) {
			q, err := fifoq.New("jobs")
			require.NoError(t, err)
			sendAll(t, q, "", "m1")
			inv := start(t, q, lambdaevents.Mapping{FunctionURL: fn.url(), FunctionResponseTypes: reportItems}, lambdaevents.Options{})
			synctest.Wait()
			inv.stop(t)
			require.Len(t, inv.batchReports(), 1)
			require.EqualError(t, inv.batchReports()[0].Err, tc.want)
		})
	}
}

// TestInvokerEvent checks the invocation itself: a POST of application/json whose body is exactly what
// marshalling the event Lambda sends gives, with the mapping's eventSourceARN and awsRegion, decoding into
// the events.SQSEvent that the in-process Handler gives.
func TestInvokerEvent(t *testing.T) {
	t.Parallel()
	fn := newFunction(t, fixed(answer{}))
	synctest.Test(t, func(t *testing.T) {
		q, err := fifoq.New("orders.fifo")
		require.NoError(t, err)
		_, err = q.Send(t.Context(), fifoq.Message{Body: `{"order":1,"note":"<&>"}`, GroupID: "o-1", DeduplicationID: "d-1",
			Attributes: map[string]fifoq.Attribute{"kind": {DataType: "String", StringValue: "create"}}})
		require.NoError(t, err)
		inv := start(t, q, lambdaevents.Mapping{FunctionURL: fn.url(), EventSourceARN: "arn:aws:sqs:eu-central-1:123456789012:orders.fifo"},
			lambdaevents.Options{})
		synctest.Wait()
		inv.stop(t)

		require.Len(t, fn.calls(), 1)
		require.Equal(t, []string{"POST /2015-03-31/functions/function/invocations application/json"}, fn.requestsSeen())
		e := fn.calls()[0]
		require.Len(t, e.Records, 1)
		rec := e.Records[0]
		require.Equal(t, "aws:sqs", rec.EventSource)
		require.Equal(t, "arn:aws:sqs:eu-central-1:123456789012:orders.fifo", rec.EventSourceARN)
		require.Equal(t, "eu-central-1", rec.AWSRegion)
		require.Equal(t, `{"order":1,"note":"<&>"}`, rec.Body)
		require.Equal(t, "o-1", rec.Attributes["MessageGroupId"])
		require.Equal(t, "d-1", rec.Attributes["MessageDeduplicationId"])
		require.Equal(t, "1", rec.Attributes["ApproximateReceiveCount"])
		require.Equal(t, "123456789012", rec.Attributes["SenderId"])
		require.Len(t, rec.Attributes["SequenceNumber"], 20)
		require.Equal(t, "create", *rec.MessageAttributes["kind"].StringValue)
		require.Equal(t, lambdaevents.MD5OfBody(rec.Body), rec.Md5OfBody)

		// The same event, from the in-process Handler, for the same delivery: equal, field for field.
		var inProcess events.SQSEvent
		h := lambdaevents.Handler(func(_ context.Context, e events.SQSEvent) (events.SQSEventResponse, error) {
			inProcess = e
			return events.SQSEventResponse{}, nil
		}, lambdaevents.WithRegion("eu-central-1"), lambdaevents.WithAccountID("123456789012"), lambdaevents.WithQueueName("orders.fifo"))
		d := fifoq.Delivery{Message: fifoq.Message{Body: rec.Body, GroupID: "o-1", DeduplicationID: "d-1",
			Attributes: map[string]fifoq.Attribute{"kind": {DataType: "String", StringValue: "create"}}},
			MessageID: rec.MessageId, ReceiptHandle: rec.ReceiptHandle, SequenceNumber: rec.Attributes["SequenceNumber"],
			ReceiveCount: 1, SentAt: millisTime(t, rec.Attributes["SentTimestamp"]),
			FirstReceivedAt: millisTime(t, rec.Attributes["ApproximateFirstReceiveTimestamp"])}
		require.NoError(t, h(t.Context(), []fifoq.Delivery{d}))
		require.Equal(t, inProcess, e)
		body := fn.bodiesSeen()[0]
		require.True(t, bytes.Contains(body, []byte(`"body":"{\"order\":1,\"note\":\"<&>\"}"`)), "HTML characters as they are: %s", body)
		require.True(t, bytes.HasPrefix(body, []byte(`{"Records":[{"messageId":"`)), "Lambda's field order: %s", body)
	})
}

func millisTime(t *testing.T, s string) time.Time {
	t.Helper()
	ms, err := strconv.ParseInt(s, 10, 64)
	require.NoError(t, err)
	return time.UnixMilli(ms)
}

// TestInvokerOwnClient checks the Invoker's own client, outside a bubble: it follows no redirect (a 3xx is a
// status outside 2xx), and keeps its connections between invocations.
func TestInvokerOwnClient(t *testing.T) {
	t.Parallel()
	var (
		mu    sync.Mutex
		conns = map[string]bool{}
		calls int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		conns[r.RemoteAddr] = true
		calls++
		n := calls
		mu.Unlock()
		if n == 1 {
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
		}
	}))
	defer srv.Close()
	q, err := fifoq.New("jobs", fifoq.WithClock(fifoq.NewManualClock(time.Unix(0, 0))))
	require.NoError(t, err)
	sendAll(t, q, "", "m1", "m2", "m3")
	batches := make(chan fifoq.BatchReport, 3)
	inv, err := lambdaevents.NewInvoker(q, lambdaevents.Mapping{FunctionURL: srv.URL, BatchSize: 1},
		lambdaevents.Options{OnBatch: func(r fifoq.BatchReport) { batches <- r }})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- inv.Run(ctx) }()
	r := await(t, batches, "the first batch")
	var fe *lambdaevents.FunctionError
	require.ErrorAs(t, r.Err, &fe)
	require.Equal(t, lambdaevents.ErrorStatus, fe.Kind)
	require.Equal(t, http.StatusTemporaryRedirect, fe.StatusCode)
	require.Equal(t, fifoq.OutcomeSuccess, await(t, batches, "the second batch").Outcome)
	require.Equal(t, fifoq.OutcomeSuccess, await(t, batches, "the third batch").Outcome)
	cancel()
	require.NoError(t, await(t, done, "Run to return"))
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, 3, calls, "the redirect was not followed")
	require.Len(t, conns, 1, "one kept-alive connection")
}

// TestInvokerLogs checks the record of each batch: Debug for a success, Warn for a partial failure and for a
// function error, with the kind and the status.
func TestInvokerLogs(t *testing.T) {
	t.Parallel()
	fn := newFunction(t, func(e events.SQSEvent, call int) answer {
		switch call {
		case 1:
			return answer{status: 500}
		case 2:
			return itemFailures("m2")(e, call)
		}
		return answer{}
	})
	synctest.Test(t, func(t *testing.T) {
		q, err := fifoq.New("jobs")
		require.NoError(t, err)
		logs := &records{}
		inv := start(t, q, lambdaevents.Mapping{FunctionURL: fn.url(), BatchSize: 2, FunctionResponseTypes: reportItems},
			lambdaevents.Options{Logger: slog.New(logs)})
		for _, b := range [][]fifoq.Message{{{Body: "m0"}}, {{Body: "m1"}, {Body: "m2"}}, {{Body: "m3"}}} {
			_, err := q.SendBatch(t.Context(), b) // at once: one batch
			require.NoError(t, err)
			synctest.Wait()
		}
		inv.stop(t)
		rs := logs.all()
		require.Len(t, rs, 3)
		require.Equal(t, "lambdaevents: function error", rs[0].msg)
		require.Equal(t, slog.LevelWarn, rs[0].level)
		require.Equal(t, "status", rs[0].attrs["kind"])
		require.Equal(t, int64(500), rs[0].attrs["status"])
		require.Equal(t, "error", rs[0].attrs["outcome"])
		require.Equal(t, "jobs", rs[0].attrs["queue"])
		require.Equal(t, fn.url(), rs[0].attrs["function_url"])
		require.Equal(t, "lambdaevents: invocation partly failed", rs[1].msg)
		require.Equal(t, slog.LevelWarn, rs[1].level)
		require.Equal(t, int64(2), rs[1].attrs["batch_size"])
		require.Equal(t, int64(1), rs[1].attrs["failed"])
		require.Equal(t, "lambdaevents: invocation done", rs[2].msg)
		require.Equal(t, slog.LevelDebug, rs[2].level)
		require.Equal(t, "success", rs[2].attrs["outcome"])
	})
}

package conformance_test

// Tests of the review fixes (TestRv*): deleted dead-letter queues, move tasks and deleted queues, the
// AWSTraceHeader limits, large query forms, GetQueueAttributes, the in-process transport and error texts.
// Requests go through ServeHTTP as JSON-protocol calls (rvEnv), so the tests can run inside a
// testing/synctest bubble where a move task's pauses take virtual time. Every top-level name of this file
// starts with "rv" (or TestRv, BenchmarkRv).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/sqsapi"
)

const (
	rvQueueURL = "http://localhost/000000000000/"
	rvARN      = "arn:aws:sqs:us-east-1:000000000000:"
)

// rvEnv is a server and the JSON-protocol calls the tests make on it. clk is nil for a server on the real
// clock (the virtual one inside a synctest bubble).
type rvEnv struct {
	t   *testing.T
	srv *sqsapi.Server
	clk *fifoq.ManualClock
}

// rvSetup makes a server on a manual clock.
func rvSetup(t *testing.T, opts ...sqsapi.Option) *rvEnv {
	t.Helper()
	clk := fifoq.NewManualClock(time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC))
	return &rvEnv{t: t, srv: sqsapi.NewServer(append([]sqsapi.Option{sqsapi.WithClock(clk)}, opts...)...), clk: clk}
}

// rvBubbleSetup makes a server on the real clock, for a test inside a synctest bubble.
func rvBubbleSetup(t *testing.T) *rvEnv {
	t.Helper()
	return &rvEnv{t: t, srv: sqsapi.NewServer()}
}

func rvURL(name string) string { return rvQueueURL + name }

// call serves one JSON-protocol request; it returns the HTTP status, the query error code (from
// X-Amzn-Query-Error, "" on success) and the body.
func (e *rvEnv) call(action string, in any) (int, string, []byte) {
	e.t.Helper()
	body, err := json.Marshal(in)
	require.NoError(e.t, err)
	req := httptest.NewRequest(http.MethodPost, "http://localhost/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	code, _, _ := strings.Cut(rec.Header().Get("X-Amzn-Query-Error"), ";")
	return rec.Code, code, rec.Body.Bytes()
}

// ok calls an action that must succeed, and decodes its result into out when out is not nil.
func (e *rvEnv) ok(action string, in, out any) {
	e.t.Helper()
	status, code, body := e.call(action, in)
	require.Equal(e.t, http.StatusOK, status, "%s %+v: want 200, got %s %s", action, in, code, body)
	if out != nil {
		require.NoError(e.t, json.Unmarshal(body, out), "%s: %s", action, body)
	}
}

// fail calls an action that must fail with code, and returns the error's message.
func (e *rvEnv) fail(action string, in any, code string) string {
	e.t.Helper()
	status, got, body := e.call(action, in)
	require.NotEqual(e.t, http.StatusOK, status, "%s %+v: want %s, got 200 %s", action, in, code, body)
	require.Equal(e.t, code, got, "%s %+v: error code; body %s", action, in, body)
	var out struct{ Message string }
	require.NoError(e.t, json.Unmarshal(body, &out), "%s: %s", action, body)
	return out.Message
}

type rvKV = map[string]any

func (e *rvEnv) create(name string, attrs map[string]string) string {
	e.t.Helper()
	e.ok("CreateQueue", rvKV{"QueueName": name, "Attributes": attrs}, nil)
	return rvURL(name)
}

func (e *rvEnv) deleteQueue(name string) {
	e.t.Helper()
	e.ok("DeleteQueue", rvKV{"QueueUrl": rvURL(name)}, nil)
}

func rvRedrive(dlq string, count int) string {
	return fmt.Sprintf(`{"deadLetterTargetArn":"%s%s","maxReceiveCount":%d}`, rvARN, dlq, count)
}

func (e *rvEnv) attrs(name string, names ...string) map[string]string {
	e.t.Helper()
	var out struct{ Attributes map[string]string }
	e.ok("GetQueueAttributes", rvKV{"QueueUrl": rvURL(name), "AttributeNames": names}, &out)
	return out.Attributes
}

func (e *rvEnv) visible(name string) int {
	e.t.Helper()
	n, err := strconv.Atoi(e.attrs(name, "ApproximateNumberOfMessages")["ApproximateNumberOfMessages"])
	require.NoError(e.t, err)
	return n
}

func (e *rvEnv) send(name, body string) string {
	e.t.Helper()
	var out struct{ MessageId string }
	e.ok("SendMessage", rvKV{"QueueUrl": rvURL(name), "MessageBody": body}, &out)
	return out.MessageId
}

type rvMessage struct {
	MessageId, ReceiptHandle, Body string
	Attributes                     map[string]string
}

// receive is a short poll for up to 10 messages that leaves them visible (VisibilityTimeout 0), so each
// receive counts one more toward maxReceiveCount.
func (e *rvEnv) receive(name string) []rvMessage {
	e.t.Helper()
	var out struct{ Messages []rvMessage }
	e.ok("ReceiveMessage", rvKV{"QueueUrl": rvURL(name), "MaxNumberOfMessages": 10, "VisibilityTimeout": 0,
		"MessageSystemAttributeNames": []string{"All"}}, &out)
	return out.Messages
}

// def returns the catalogue's definition of a queue of the server's default account and region.
func (e *rvEnv) def(name string) catalog.Definition {
	e.t.Helper()
	cat := e.srv.Catalog()
	d, ok := cat.Definition(cat.DefaultNamespace(), name)
	require.True(e.t, ok, "no definition of %s", name)
	return d
}

func (e *rvEnv) sources(dlq string) []string {
	e.t.Helper()
	var out struct{ QueueUrls []string }
	e.ok("ListDeadLetterSourceQueues", rvKV{"QueueUrl": rvURL(dlq)}, &out)
	return out.QueueUrls
}

// toDeadLetter sends bodies to src, whose maxReceiveCount must be 1, and receives until they moved to its
// dead-letter queue.
func (e *rvEnv) toDeadLetter(src string, bodies ...string) {
	e.t.Helper()
	for _, b := range bodies {
		e.send(src, b)
	}
	for len(e.receive(src)) > 0 { // the first receive counts 1; the second moves them
	}
	require.Zero(e.t, e.visible(src), "messages left in %s", src)
}

// A deleted dead-letter queue is no black hole: its sources keep their RedrivePolicy but keep their failed
// messages, and a queue created again with its name takes them back as sources.
func TestRvDeletedDeadLetterQueue(t *testing.T) {
	t.Parallel()
	e := rvSetup(t)
	e.create("rv-dlq", nil)
	e.create("rv-src", map[string]string{"RedrivePolicy": rvRedrive("rv-dlq", 1)})
	require.Equal(t, []string{rvURL("rv-src")}, e.sources("rv-dlq"))
	e.deleteQueue("rv-dlq")

	id := e.send("rv-src", "survivor")
	for receive := 1; receive <= 3; receive++ {
		ms := e.receive("rv-src")
		require.Len(t, ms, 1, "receive %d: the message past maxReceiveCount 1 must stay in its queue, "+
			"not move into the deleted dead-letter queue", receive)
		require.Equal(t, id, ms[0].MessageId)
		require.Equal(t, strconv.Itoa(receive), ms[0].Attributes["ApproximateReceiveCount"])
	}
	require.Equal(t, rvRedrive("rv-dlq", 1), e.attrs("rv-src", "RedrivePolicy")["RedrivePolicy"],
		"the RedrivePolicy the user set, while its dead-letter queue is gone")
	require.Equal(t, rvRedrive("rv-dlq", 1), e.attrs("rv-src", "All")["RedrivePolicy"])
	require.Equal(t, catalog.RedrivePolicy{DeadLetterQueue: "rv-dlq", MaxReceiveCount: 1, Pending: true}, e.def("rv-src").RedrivePolicy,
		"the catalogue holds the policy pending: the queue has no dead-letter queue meanwhile")

	// Other attributes can change meanwhile; the policy stays pending.
	e.ok("SetQueueAttributes", rvKV{"QueueUrl": rvURL("rv-src"), "Attributes": map[string]string{"DelaySeconds": "0"}}, nil)
	require.Equal(t, rvRedrive("rv-dlq", 1), e.attrs("rv-src", "RedrivePolicy")["RedrivePolicy"])

	e.clk.Advance(61 * time.Second)
	e.create("rv-dlq", nil)
	require.Equal(t, []string{rvURL("rv-src")}, e.sources("rv-dlq"), "the new queue of that name is the source's dead-letter queue")
	require.Empty(t, e.receive("rv-src"), "received 3 times already: the message moves to the new dead-letter queue")
	ms := e.receive("rv-dlq")
	require.Len(t, ms, 1)
	require.Equal(t, id, ms[0].MessageId)
	require.Equal(t, rvRedrive("rv-dlq", 1), e.attrs("rv-src", "RedrivePolicy")["RedrivePolicy"])
}

// A pending policy is not taken back by a queue whose RedriveAllowPolicy refuses it, until that changes;
// and a RedrivePolicy set to "" forgets it.
func TestRvPendingRedrivePolicy(t *testing.T) {
	t.Parallel()
	e := rvSetup(t)
	e.create("rv-dlq", nil)
	e.create("rv-a", map[string]string{"RedrivePolicy": rvRedrive("rv-dlq", 2)})
	e.create("rv-b", map[string]string{"RedrivePolicy": rvRedrive("rv-dlq", 3)})
	e.deleteQueue("rv-dlq")
	e.ok("SetQueueAttributes", rvKV{"QueueUrl": rvURL("rv-b"), "Attributes": map[string]string{"RedrivePolicy": ""}}, nil)
	require.NotContains(t, e.attrs("rv-b", "All"), "RedrivePolicy")

	e.clk.Advance(61 * time.Second)
	e.create("rv-dlq", map[string]string{"RedriveAllowPolicy": `{"redrivePermission":"denyAll"}`})
	require.Empty(t, e.sources("rv-dlq"), "denyAll: no source")
	require.Equal(t, rvRedrive("rv-dlq", 2), e.attrs("rv-a", "RedrivePolicy")["RedrivePolicy"], "still pending")

	e.ok("SetQueueAttributes", rvKV{"QueueUrl": rvURL("rv-dlq"), "Attributes": map[string]string{
		"RedriveAllowPolicy": `{"redrivePermission":"byQueue","sourceQueueArns":["` + rvARN + `rv-a","` + rvARN + `rv-b"]}`}}, nil)
	require.Equal(t, []string{rvURL("rv-a")}, e.sources("rv-dlq"), "rv-a is back; rv-b dropped its policy")
	require.Equal(t, catalog.RedrivePolicy{DeadLetterQueue: "rv-dlq", MaxReceiveCount: 2}, e.def("rv-a").RedrivePolicy, "bound")
	// rv-a's live dead-letter queue is the new rv-dlq, with maxReceiveCount 2: a message received twice moves
	// there on the next receive.
	id := e.send("rv-a", "m")
	for receive := 1; receive <= 2; receive++ {
		ms := e.receive("rv-a")
		require.Len(t, ms, 1, "receive %d", receive)
		require.Equal(t, id, ms[0].MessageId)
	}
	require.Empty(t, e.receive("rv-a"), "received twice: the third receive moves it to rv-dlq")
	ms := e.receive("rv-dlq")
	require.Len(t, ms, 1, "the message is in rv-dlq")
	require.Equal(t, id, ms[0].MessageId)
}

// A SetQueueAttributes that gives a queue a RedrivePolicy, racing the DeleteQueue of its dead-letter queue,
// never leaves it pointing at the deleted queue.
func TestRvRedrivePolicyRacesDelete(t *testing.T) {
	t.Parallel()
	e := rvSetup(t)
	e.create("rv-src", nil)
	// A message received 5 times: were rv-src given a dead-letter queue with maxReceiveCount 5, its next
	// receive would move it there.
	id := e.send("rv-src", "survivor")
	for range 5 {
		require.Len(t, e.receive("rv-src"), 1)
	}
	for round := range 200 {
		dlq := "rv-dlq-" + strconv.Itoa(round)
		e.create(dlq, nil)
		var wg sync.WaitGroup
		wg.Go(func() {
			e.call("SetQueueAttributes", rvKV{"QueueUrl": rvURL("rv-src"), "Attributes": map[string]string{"RedrivePolicy": rvRedrive(dlq, 5)}})
		})
		wg.Go(func() { e.call("DeleteQueue", rvKV{"QueueUrl": rvURL(dlq)}) })
		wg.Wait()
		// Every dead-letter queue so far is deleted: rv-src has no policy or a pending one, and keeps the message.
		p := e.def("rv-src").RedrivePolicy
		require.True(t, p.DeadLetterQueue == "" || p.Pending, "round %d: policy %+v bound to a deleted queue", round, p)
		ms := e.receive("rv-src")
		require.Len(t, ms, 1, "round %d: rv-src moves failed messages into the deleted %s", round, dlq)
		require.Equal(t, id, ms[0].MessageId)
	}
}

// rvMoveSetup makes, in a bubble, a dead-letter queue with two sources and three messages from rv-gone in
// it. rv-other keeps the dead-letter queue one once rv-gone is deleted.
func rvMoveSetup(t *testing.T) *rvEnv {
	e := rvBubbleSetup(t)
	e.create("rv-dlq", nil)
	e.create("rv-gone", map[string]string{"RedrivePolicy": rvRedrive("rv-dlq", 1)})
	e.create("rv-other", map[string]string{"RedrivePolicy": rvRedrive("rv-dlq", 1)})
	e.toDeadLetter("rv-gone", "m1", "m2", "m3")
	require.Equal(t, 3, e.visible("rv-dlq"))
	return e
}

// A move task back to the source queues is refused while the dead-letter queue holds messages of a deleted
// queue (fifoq would move them into it, out of reach), even once a queue of that name exists again; with a
// destination it runs.
func TestRvMoveTaskToDeletedSource(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		e := rvMoveSetup(t)
		e.deleteQueue("rv-gone")
		msg := e.fail("StartMessageMoveTask", rvKV{"SourceArn": rvARN + "rv-dlq"}, "InvalidParameterValue")
		require.Contains(t, msg, rvARN+"rv-gone")
		synctest.Wait()
		require.Equal(t, 3, e.visible("rv-dlq"), "the messages stay in the dead-letter queue")

		time.Sleep(61 * time.Second)
		e.create("rv-gone", nil)
		e.fail("StartMessageMoveTask", rvKV{"SourceArn": rvARN + "rv-dlq"}, "InvalidParameterValue")
		synctest.Wait()
		require.Equal(t, 3, e.visible("rv-dlq"), "the new rv-gone is not the queue the messages came from")
		require.Zero(t, e.visible("rv-gone"))

		e.ok("StartMessageMoveTask", rvKV{"SourceArn": rvARN + "rv-dlq", "DestinationArn": rvARN + "rv-gone"}, nil)
		synctest.Wait()
		require.Zero(t, e.visible("rv-dlq"))
		require.Equal(t, 3, e.visible("rv-gone"))
	})
}

// Deleting a queue ends, FAILED, a running move task that would return messages to it.
func TestRvDeleteCancelsMoveTaskBack(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		e := rvMoveSetup(t)
		e.ok("StartMessageMoveTask", rvKV{"SourceArn": rvARN + "rv-dlq", "MaxNumberOfMessagesPerSecond": 1}, nil)
		synctest.Wait() // the task moved m1 back and waits a second
		require.Equal(t, 2, e.visible("rv-dlq"))
		e.deleteQueue("rv-gone")
		time.Sleep(10 * time.Second)
		synctest.Wait()
		require.Equal(t, 2, e.visible("rv-dlq"), "m2 and m3 stay in the dead-letter queue")
		var out struct{ Results []struct{ Status string } }
		e.ok("ListMessageMoveTasks", rvKV{"SourceArn": rvARN + "rv-dlq"}, &out)
		require.Len(t, out.Results, 1)
		require.Equal(t, "FAILED", out.Results[0].Status, "a queue it moved messages into was deleted")
	})
}

// ListMessageMoveTasks lists the last 10 tasks of a queue, newest first.
func TestRvMoveTasksListed(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		e := rvBubbleSetup(t)
		e.create("rv-dlq", nil)
		e.create("rv-src", map[string]string{"RedrivePolicy": rvRedrive("rv-dlq", 1)})
		e.create("rv-sink", nil)
		for i := range 12 {
			e.toDeadLetter("rv-src", "m"+strconv.Itoa(i))
			e.ok("StartMessageMoveTask", rvKV{"SourceArn": rvARN + "rv-dlq", "DestinationArn": rvARN + "rv-sink",
				"MaxNumberOfMessagesPerSecond": i + 1}, nil)
			synctest.Wait() // the task moved the message and ended
		}
		require.Equal(t, 12, e.visible("rv-sink"))
		var out struct {
			Results []struct {
				Status                       string
				MaxNumberOfMessagesPerSecond int
			}
		}
		e.ok("ListMessageMoveTasks", rvKV{"SourceArn": rvARN + "rv-dlq", "MaxResults": 10}, &out)
		require.Len(t, out.Results, 10)
		for i, r := range out.Results {
			require.Equal(t, "COMPLETED", r.Status)
			require.Equal(t, 12-i, r.MaxNumberOfMessagesPerSecond, "task %d, newest first", i)
		}
	})
}

// rvTrace sends a message with an AWSTraceHeader; it returns the status and error code.
func (e *rvEnv) sendTraced(name, body, header string) (int, string) {
	e.t.Helper()
	status, code, _ := e.call("SendMessage", rvKV{"QueueUrl": rvURL(name), "MessageBody": body,
		"MessageSystemAttributes": rvKV{"AWSTraceHeader": rvKV{"DataType": "String", "StringValue": header}}})
	return status, code
}

// An AWSTraceHeader is a String of 1 to 1,024 bytes, and does not count toward the message size.
func TestRvTraceHeaderLimits(t *testing.T) {
	t.Parallel()
	e := rvSetup(t)
	e.create("rv-trace", map[string]string{"MaximumMessageSize": "1024"})
	status, code := e.sendTraced("rv-trace", "b", strings.Repeat("h", 1025))
	require.Equal(t, "InvalidParameterValue", code, "a 1,025-byte trace header (status %d)", status)
	status, code = e.sendTraced("rv-trace", "b", strings.Repeat("h", 1024))
	require.Equal(t, http.StatusOK, status, "a 1,024-byte trace header: %s", code)

	status, code = e.sendTraced("rv-trace", strings.Repeat("b", 1024), strings.Repeat("h", 1024))
	require.Equal(t, http.StatusOK, status, "a body of MaximumMessageSize and a trace header (spec 7.1.2): %s", code)

	e.create("rv-trace-big", nil)
	half := strings.Repeat("x", 1<<19)
	traced := rvKV{"AWSTraceHeader": rvKV{"DataType": "String", "StringValue": strings.Repeat("h", 1024)}}
	var out struct{ Successful []any }
	e.ok("SendMessageBatch", rvKV{"QueueUrl": rvURL("rv-trace-big"), "Entries": []rvKV{
		{"Id": "a", "MessageBody": half, "MessageSystemAttributes": traced},
		{"Id": "b", "MessageBody": half, "MessageSystemAttributes": traced},
	}}, &out)
	require.Len(t, out.Successful, 2, "exactly 1 MiB of bodies, and trace headers that do not count")
}

// A batch over 1 MiB fails whole even when its large entry fails a check of its own before fifoq sees it:
// why sqsapi measures the batch itself rather than leave it to fifoq.ErrBatchTooLong.
func TestRvBatchTooLongCountsRejectedEntries(t *testing.T) {
	t.Parallel()
	e := rvSetup(t)
	e.create("rv-batch", nil)
	half := strings.Repeat("x", 1<<19)
	msg := e.fail("SendMessageBatch", rvKV{"QueueUrl": rvURL("rv-batch"), "Entries": []rvKV{
		{"Id": "a", "MessageBody": half, "DelaySeconds": 901},
		{"Id": "b", "MessageBody": half + "x"},
	}}, "AWS.SimpleQueueService.BatchRequestTooLong")
	require.Equal(t, "Batch requests cannot be longer than 1048576 bytes. You have sent 1048577 bytes.", msg)
	require.Zero(t, e.visible("rv-batch"))
}

// rvBatchForm is a query-protocol SendMessageBatch with n entries. Entries of n > 10 have an Id alone, so
// that 9,990 of them keep within the 10,000 parameters net/url parses.
func rvBatchForm(n int) url.Values {
	v := url.Values{"Action": {"SendMessageBatch"}, "QueueUrl": {rvURL("rv-form")}}
	for i := 1; i <= n; i++ {
		p := "SendMessageBatchRequestEntry." + strconv.Itoa(i) + "."
		v.Set(p+"Id", "e"+strconv.Itoa(i))
		if n <= rvMaxBatch {
			v.Set(p+"MessageBody", "m")
		}
	}
	return v
}

const rvMaxBatch = 10

func rvPostForm(srv *sqsapi.Server, form url.Values) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "http://localhost/", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	return rec
}

// A query-protocol batch of 9,990 entries is rejected with TooManyEntriesInBatchRequest, naming the number
// sent; an entry with 3,000 attributes fails, naming its number. (net/url takes at most 10,000 parameters;
// review_internal_test.go checks that the form is read in one pass.)
func TestRvLargeQueryForms(t *testing.T) {
	t.Parallel()
	e := rvSetup(t)
	e.create("rv-form", nil)
	rec := rvPostForm(e.srv, rvBatchForm(9990))
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Contains(t, rec.Body.String(), "<Code>AWS.SimpleQueueService.TooManyEntriesInBatchRequest</Code>")
	require.Contains(t, rec.Body.String(), "Maximum number of entries per request are 10. You have sent 9990.")

	form := rvBatchForm(1)
	for i := 1; i <= 3000; i++ {
		p := "SendMessageBatchRequestEntry.1.MessageAttribute." + strconv.Itoa(i) + "."
		form.Set(p+"Name", "a"+strconv.Itoa(i))
		form.Set(p+"Value.DataType", "String")
		form.Set(p+"Value.StringValue", "v")
	}
	rec = rvPostForm(e.srv, form)
	require.Equal(t, http.StatusOK, rec.Code, "the entry fails alone: %s", rec.Body)
	require.Contains(t, rec.Body.String(), "Number of message attributes [3000] exceeds the allowed maximum [10].")
	require.Zero(t, e.visible("rv-form"))
}

func BenchmarkRvQueryBatchForm(b *testing.B) {
	srv := sqsapi.NewServer()
	if _, err := srv.DeclareQueue("rv-form", nil); err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{10, 1000, 9990} {
		body := rvBatchForm(n).Encode()
		want := http.StatusOK
		if n > 10 {
			want = http.StatusBadRequest
		}
		b.Run("entries="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "http://localhost/", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				if rec.Code != want {
					b.Fatalf("status %d, want %d: %s", rec.Code, want, rec.Body)
				}
			}
		})
	}
}

// GetQueueAttributes checks every name it is given, "All" among them or not.
func TestRvGetQueueAttributesAllAndBogus(t *testing.T) {
	t.Parallel()
	e := rvSetup(t)
	e.create("rv-attrs", nil)
	for _, names := range [][]string{{"All", "Bogus"}, {"Bogus", "All"}, {"VisibilityTimeout", "All", "Bogus"}} {
		msg := e.fail("GetQueueAttributes", rvKV{"QueueUrl": rvURL("rv-attrs"), "AttributeNames": names}, "InvalidAttributeName")
		require.Equal(t, "Unknown Attribute Bogus.", msg, "names %v", names)
	}
}

// The three counts of one GetQueueAttributes come from one look at the queue: with every message received
// and none deleted, visible + not visible is always the number of messages, whatever receives run meanwhile.
func TestRvGetQueueAttributesCountsAgree(t *testing.T) {
	t.Parallel()
	e := rvSetup(t)
	e.create("rv-counts", map[string]string{"VisibilityTimeout": "1"})
	const n = 200
	for i := range n {
		e.send("rv-counts", "m"+strconv.Itoa(i))
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			e.call("ReceiveMessage", rvKV{"QueueUrl": rvURL("rv-counts"), "MaxNumberOfMessages": 1})
			e.clk.Advance(10 * time.Millisecond) // received messages come back, a few at a time
		}
	})
	defer wg.Wait()
	defer close(done)
	for i := range 3000 {
		a := e.attrs("rv-counts", "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed")
		visible, _ := strconv.Atoi(a["ApproximateNumberOfMessages"])
		inFlight, _ := strconv.Atoi(a["ApproximateNumberOfMessagesNotVisible"])
		require.Equal(t, n, visible+inFlight, "call %d: %v", i, a)
	}
}

// rvCancelOn is a slog handler that cancels a context when the server logs a request of the given action:
// after the action was done and its response written, before the transport returns.
type rvCancelOn struct {
	action string
	cancel context.CancelFunc
}

func (h *rvCancelOn) Enabled(context.Context, slog.Level) bool { return true }
func (h *rvCancelOn) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *rvCancelOn) WithGroup(string) slog.Handler            { return h }
func (h *rvCancelOn) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "sqsapi: request" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "action" && a.Value.String() == h.action {
			h.cancel()
		}
		return true
	})
	return nil
}

// A SendMessage whose context ends after the message was stored returns its result through HTTPClient, not
// the context's error: an SDK that got the error would retry and store the message twice.
func TestRvHTTPClientCanceledAfterSend(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	srv := sqsapi.NewServer(sqsapi.WithLogger(slog.New(&rvCancelOn{action: "SendMessage", cancel: cancel})))
	client := sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://sqs.test"),
		HTTPClient: srv.HTTPClient(), Credentials: aws.AnonymousCredentials{}})
	created, err := client.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String("rv-sent")})
	require.NoError(t, err)

	out, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: created.QueueUrl, MessageBody: aws.String("once")})
	require.Error(t, ctx.Err(), "the context was cancelled during the request")
	require.NoError(t, err, "the message was stored: the caller gets its id")
	q, _ := srv.Queue("rv-sent")
	require.Equal(t, 1, q.Stats().Visible)
	for s := range q.Messages() {
		require.Equal(t, aws.ToString(out.MessageId), s.MessageID)
	}
}

// ReceiptHandleIsInvalid quotes the handle as given, not with Go's escapes.
func TestRvReceiptHandleIsInvalidText(t *testing.T) {
	t.Parallel()
	e := rvSetup(t)
	e.create("rv-handles", nil)
	const handle = `not"a handle é`
	msg := e.fail("DeleteMessage", rvKV{"QueueUrl": rvURL("rv-handles"), "ReceiptHandle": handle}, "ReceiptHandleIsInvalid")
	require.Equal(t, `The input receipt handle "not"a handle é" is not a valid receipt handle.`, msg)
}

// rvAbortWriter panics with http.ErrAbortHandler on its first Write, as a handler that gives up on a response
// does.
type rvAbortWriter struct {
	httptest.ResponseRecorder
	aborted bool
}

func (w *rvAbortWriter) Write(p []byte) (int, error) {
	if !w.aborted {
		w.aborted = true
		panic(http.ErrAbortHandler)
	}
	return w.ResponseRecorder.Write(p)
}

// A panic with http.ErrAbortHandler goes on up to net/http, which aborts the response quietly; it is not
// turned into an InternalFailure answer.
func TestRvAbortHandlerPanics(t *testing.T) {
	t.Parallel()
	srv := sqsapi.NewServer()
	req := httptest.NewRequest(http.MethodPost, "http://localhost/", strings.NewReader(`{"QueueName":"rv-abort"}`))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS.CreateQueue")
	w := &rvAbortWriter{ResponseRecorder: *httptest.NewRecorder()}
	got := func() (v any) {
		defer func() { v = recover() }()
		srv.ServeHTTP(w, req)
		return nil
	}()
	require.Equal(t, http.ErrAbortHandler, got, "ServeHTTP must panic on with http.ErrAbortHandler; it wrote %d %s", w.Code, w.Body)
}

// Deleting the destination of a running move task cancels the task: it would move the rest of the
// messages into the deleted queue, out of reach.
func TestRvDeleteCancelsMoveTaskIntoIt(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		e := rvMoveSetup(t)
		e.create("rv-dest", nil)
		e.ok("StartMessageMoveTask", rvKV{"SourceArn": rvARN + "rv-dlq", "DestinationArn": rvARN + "rv-dest",
			"MaxNumberOfMessagesPerSecond": 1}, nil)
		synctest.Wait() // the task moved m1 and waits a second
		require.Equal(t, 2, e.visible("rv-dlq"))
		e.deleteQueue("rv-dest")
		time.Sleep(10 * time.Second)
		synctest.Wait()
		require.Equal(t, 2, e.visible("rv-dlq"), "m2 and m3 stay in the dead-letter queue")
		var out struct{ Results []struct{ Status string } }
		e.ok("ListMessageMoveTasks", rvKV{"SourceArn": rvARN + "rv-dlq"}, &out)
		require.Len(t, out.Results, 1)
		require.Equal(t, "FAILED", out.Results[0].Status, "a queue it moved messages into was deleted")
	})
}

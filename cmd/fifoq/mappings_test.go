package main

// Tests of the event source mappings of "fifoq serve" as it runs them: the command as a process, a queue
// of its config mapped to a function that is an HTTP server of the test on 127.0.0.1, messages sent through
// the SDK. Each test waits on what the function receives or on the server's answers, with a bound, never
// on a fixed sleep.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"
)

// fnRecord is a record of Lambda's SQS event, the fields the tests look at.
type fnRecord struct {
	MessageID      string            `json:"messageId"`
	ReceiptHandle  string            `json:"receiptHandle"`
	Body           string            `json:"body"`
	Attributes     map[string]string `json:"attributes"`
	EventSource    string            `json:"eventSource"`
	EventSourceARN string            `json:"eventSourceARN"`
	AWSRegion      string            `json:"awsRegion"`
}

// fnCall is an invocation the test function received.
type fnCall struct {
	header  http.Header
	records []fnRecord
	err     error // the body did not decode
}

// fnAnswer answers an invocation: the status and the body of the answer. It may block, until the request's
// context ends.
type fnAnswer func(r *http.Request, records []fnRecord) (int, string)

// function is a function behind a URL, for the mappings: an HTTP server on 127.0.0.1 that decodes each
// invocation's event, sends it on calls, and answers with answer.
type function struct {
	url   string // the invocation URL, as the Runtime Interface Emulator's
	calls chan fnCall
}

func startFunction(t *testing.T, answer fnAnswer) *function {
	t.Helper()
	f := &function{calls: make(chan fnCall, 1000)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev struct {
			Records []fnRecord `json:"Records"`
		}
		body, err := io.ReadAll(r.Body)
		if err == nil {
			err = json.Unmarshal(body, &ev)
		}
		if err == nil && r.URL.Path != "/2015-03-31/functions/function/invocations" {
			err = fmt.Errorf("path %s", r.URL.Path)
		}
		f.calls <- fnCall{header: r.Header.Clone(), records: ev.Records, err: err}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		status, out := answer(r, ev.Records)
		w.WriteHeader(status)
		io.WriteString(w, out) //nolint:errcheck // the mapping reads it or not
	}))
	t.Cleanup(srv.Close)
	f.url = srv.URL + "/2015-03-31/functions/function/invocations"
	return f
}

// next returns the next invocation, failing the test if none comes within a minute.
func (f *function) next(t *testing.T) fnCall {
	t.Helper()
	select {
	case c := <-f.calls:
		require.NoError(t, c.err, "the event")
		return c
	case <-time.After(time.Minute):
		t.Fatal("no invocation within a minute")
		return fnCall{}
	}
}

// ok answers every invocation with a success.
func ok(*http.Request, []fnRecord) (int, string) { return http.StatusOK, "" }

// mappingConfig writes a config file with the queues and the event source mappings given, as JSON lists'
// contents.
func mappingConfig(t *testing.T, queues, mappings string) string {
	t.Helper()
	return writeFile(t, "{\"queues\": ["+queues+"],\n\"eventSourceMappings\": ["+mappings+"]}")
}

// send sends bodies to the queue at url; on a FIFO queue, in the group each body names before its space.
func send(t *testing.T, client *sqs.Client, url string, bodies ...string) {
	t.Helper()
	for _, b := range bodies {
		in := &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(b)}
		if strings.HasSuffix(url, ".fifo") {
			in.MessageGroupId = aws.String(strings.Fields(b)[0])
		}
		_, err := client.SendMessage(t.Context(), in)
		require.NoError(t, err)
	}
}

// counts returns the visible and in-flight messages of the queue at url.
func counts(t *testing.T, client *sqs.Client, url string) (visible, inFlight int) {
	t.Helper()
	out, err := client.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages,
			types.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	require.NoError(t, err)
	visible, _ = strconv.Atoi(out.Attributes["ApproximateNumberOfMessages"])
	inFlight, _ = strconv.Atoi(out.Attributes["ApproximateNumberOfMessagesNotVisible"])
	return visible, inFlight
}

// A served mapping POSTs Lambda's event to the function, and handles its batch item failures as Lambda
// does: on a FIFO queue, the failed message and the later ones of its group come back after the visibility
// timeout, a receive count higher, in order; the others are deleted; once the function succeeds, the queue
// is empty.
func TestServeMapping(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	handled := make(map[string][]string) // the bodies the function took, by group
	fn := startFunction(t, func(_ *http.Request, rs []fnRecord) (int, string) {
		// It fails a message with "fail" in its body the first time, and then, as AWS advises a FIFO
		// function, the later messages of its group in the batch.
		mu.Lock()
		defer mu.Unlock()
		failedGroups := make(map[string]bool)
		var items []string
		for _, r := range rs {
			g := r.Attributes["MessageGroupId"]
			if failedGroups[g] || strings.Contains(r.Body, "fail") && r.Attributes["ApproximateReceiveCount"] == "1" {
				failedGroups[g] = true
				items = append(items, `{"itemIdentifier":"`+r.MessageID+`"}`)
				continue
			}
			handled[g] = append(handled[g], r.Body)
		}
		return http.StatusOK, `{"batchItemFailures":[` + strings.Join(items, ",") + `]}`
	})
	config := mappingConfig(t, `{"name": "orders.fifo", "attributes": {"VisibilityTimeout": 2, "ContentBasedDeduplication": true}}`,
		`{"queue": "orders.fifo", "functionUrl": "`+fn.url+`", "functionResponseTypes": ["ReportBatchItemFailures"], "functionTimeout": 2}`)
	c := startChild(t, "serve", "--addr", "127.0.0.1:0", "--config", config)
	client := c.client()
	url := c.endpoint + "/000000000000/orders.fifo"
	// In one batch, so that the function gets them together: a 3 fails with a 2.
	batch, err := client.SendMessageBatch(t.Context(), &sqs.SendMessageBatchInput{QueueUrl: aws.String(url),
		Entries: []types.SendMessageBatchRequestEntry{
			{Id: aws.String("1"), MessageBody: aws.String("a 1"), MessageGroupId: aws.String("a")},
			{Id: aws.String("2"), MessageBody: aws.String("a 2 fail"), MessageGroupId: aws.String("a")},
			{Id: aws.String("3"), MessageBody: aws.String("a 3"), MessageGroupId: aws.String("a")},
			{Id: aws.String("4"), MessageBody: aws.String("b 1"), MessageGroupId: aws.String("b")},
		}})
	require.NoError(t, err)
	require.Len(t, batch.Successful, 4)

	var calls []fnCall
	for received := 0; received < 4+2; { // a 2 and a 3 twice
		call := fn.next(t)
		calls = append(calls, call)
		received += len(call.records)
	}
	first := calls[0]
	require.Equal(t, "application/json", first.header.Get("Content-Type"))
	require.Equal(t, "RequestResponse", first.header.Get("X-Amz-Invocation-Type"))
	r := first.records[0]
	require.Equal(t, "aws:sqs", r.EventSource)
	require.Equal(t, "arn:aws:sqs:us-east-1:000000000000:orders.fifo", r.EventSourceARN, "the queue's ARN in the server")
	require.Equal(t, "us-east-1", r.AWSRegion)
	require.NotEmpty(t, r.ReceiptHandle)
	require.NotEmpty(t, r.Attributes["SequenceNumber"])

	var redelivered []string
	for _, call := range calls {
		for _, r := range call.records {
			if r.Attributes["ApproximateReceiveCount"] == "2" {
				redelivered = append(redelivered, r.Body)
			}
		}
	}
	require.Equal(t, []string{"a 2 fail", "a 3"}, redelivered, "the failed message and the later one of its group come back")
	require.Eventually(t, func() bool {
		v, f := counts(t, client, url)
		return v+f == 0
	}, time.Minute, 20*time.Millisecond, "the queue empties once the function succeeds")
	mu.Lock()
	require.Equal(t, map[string][]string{"a": {"a 1", "a 2 fail", "a 3"}, "b": {"b 1"}}, handled, "each group in order, each message once")
	mu.Unlock()
	c.stop(syscall.SIGTERM)
	logs := c.stderr.String()
	require.Contains(t, logs, `msg="event source mapping" queue=orders.fifo function_url=`+fn.url+` enabled=true batch_size=10`)
	require.Contains(t, logs, `msg="lambdaevents: invocation partly failed" queue=orders.fifo function_url=`+fn.url,
		"the invoker's records name the queue and the function")
	select {
	case call := <-fn.calls:
		t.Fatalf("an invocation more than the messages needed: %+v", call.records)
	default:
	}
}

// SIGTERM with an invocation under way: the mapping takes no new batch, the invocation finishes (its
// batch settled: deleted) and the process exits 0. Started again on its directory, the server has the
// message that was never invoked, visible, and not the one that was: a server that did not wait for the
// invocation would have left it in flight.
func TestServeMappingSIGTERM(t *testing.T) {
	t.Parallel()
	entered, release := make(chan string, 10), make(chan struct{})
	fn := startFunction(t, func(r *http.Request, rs []fnRecord) (int, string) {
		entered <- rs[0].Body
		select {
		case <-release:
			return http.StatusOK, ""
		case <-r.Context().Done():
			return http.StatusInternalServerError, ""
		}
	})
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	dir := filepath.Join(t.TempDir(), "data")
	config := mappingConfig(t, `{"name": "jobs", "attributes": {"VisibilityTimeout": 600}}`,
		`{"queue": "jobs", "functionUrl": "`+fn.url+`", "batchSize": 1, "functionTimeout": 600}`)
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--shutdown-timeout", "10m", "--config", config}
	c := startChild(t, args...)
	client := c.client()
	url := c.endpoint + "/000000000000/jobs"
	send(t, client, url, "first", "second")
	invoked := <-entered
	fn.next(t)

	// Once the HTTP server has stopped, the process waits for the invocation.
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGTERM))
	require.Eventually(t, func() bool {
		logs := c.stderr.String()
		return strings.Contains(logs, `msg="event source mappings: polling stopped; waiting for the invocations under way" invocations=1 timeout=10m0s`) &&
			strings.Contains(logs, "msg=stopped")
	}, time.Minute, 10*time.Millisecond, "the server stopped but for the mapping: %s", c.stderr.String())
	close(release)
	require.NoError(t, c.cmd.Wait(), "exit status; stderr: %s", c.stderr.String())
	require.NotContains(t, c.stderr.String(), "shutdown timeout")
	select {
	case call := <-fn.calls:
		t.Fatalf("an invocation after SIGTERM: %+v", call.records)
	default:
	}

	c = startChild(t, "serve", "--addr", "127.0.0.1:0", "--data-dir", dir)
	visible, inFlight := counts(t, c.client(), url)
	require.Equal(t, [2]int{1, 0}, [2]int{visible, inFlight}, "the invoked message deleted, the other visible")
	out, err := c.client().ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(url)})
	require.NoError(t, err)
	require.Len(t, out.Messages, 1)
	require.NotEqual(t, invoked, aws.ToString(out.Messages[0].Body), "the message left is the one never invoked")
	c.stop(syscall.SIGTERM)
}

// A durable server stopped with an invocation under way past its shutdown timeout cuts it (exit 1, with a
// log record that says so); started again on its directory, it resumes the mapping, and the message that
// was in flight comes back after its visibility timeout, a receive count higher, and is invoked again.
func TestServeMappingRestart(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	hang := true // the function hangs until the server gives up, then answers
	fn := startFunction(t, func(r *http.Request, _ []fnRecord) (int, string) {
		mu.Lock()
		h := hang
		mu.Unlock()
		if h {
			<-r.Context().Done()
			return http.StatusInternalServerError, ""
		}
		return http.StatusOK, ""
	})
	dir := filepath.Join(t.TempDir(), "data")
	config := mappingConfig(t, `{"name": "jobs", "attributes": {"VisibilityTimeout": 3}}`,
		`{"queue": "jobs", "functionUrl": "`+fn.url+`", "functionTimeout": 3}`)
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--shutdown-timeout", "1s", "--config", config}
	c := startChild(t, args...)
	url := c.endpoint + "/000000000000/jobs"
	send(t, c.client(), url, "job")
	first := fn.next(t).records[0]
	require.Equal(t, "1", first.Attributes["ApproximateReceiveCount"])

	// The invocation hangs; the shutdown gives it 1 s. (The function timeout, 3 s, may come first on a slow
	// machine: the message then comes back in the first server and hangs again. Either way it is in flight
	// when the process exits.)
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGTERM))
	err := c.cmd.Wait()
	require.Error(t, err, "cut at the shutdown timeout: exit 1; stderr: %s", c.stderr.String())
	require.Contains(t, c.stderr.String(), "event source mappings: invocations were still under way after the shutdown timeout: cut")
	mu.Lock()
	hang = false
	mu.Unlock()

	c = startChild(t, args...)
	var again fnRecord
	for again.MessageID != first.MessageID {
		again = fn.next(t).records[0]
	}
	require.Equal(t, "job", again.Body)
	n, _ := strconv.Atoi(again.Attributes["ApproximateReceiveCount"])
	require.GreaterOrEqual(t, n, 2, "the message in flight at the stop came back through its visibility timeout")
	client := c.client()
	require.Eventually(t, func() bool {
		v, f := counts(t, client, url)
		return v+f == 0
	}, time.Minute, 20*time.Millisecond, "the invocation succeeded: the message is deleted")
	c.stop(syscall.SIGTERM)
	require.Contains(t, c.stderr.String(), `msg="event source mapping" queue=jobs`, "the mapping is the config's, again")
}

// /metrics has each mapping's metrics, labelled by queue and function, as the invocations went: a success
// and a function error, one record each; the log record of the error names the queue and the function.
func TestServeMappingMetrics(t *testing.T) {
	t.Parallel()
	fn := startFunction(t, func(_ *http.Request, rs []fnRecord) (int, string) {
		if rs[0].Body == "boom" {
			return http.StatusOK, `{"errorType":"Boom","errorMessage":"it went boom"}`
		}
		return http.StatusOK, "null"
	})
	config := mappingConfig(t, `{"name": "jobs", "attributes": {"VisibilityTimeout": 600}}`,
		`{"queue": "jobs", "functionUrl": "`+fn.url+`", "batchSize": 1, "maximumConcurrency": 2}`)
	c := startChild(t, "serve", "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--config", config)
	metricsURL := c.line()
	url := c.endpoint + "/000000000000/jobs"
	labels := `{function="` + fn.url + `",queue="jobs"}`
	got := scrape(t, metricsURL)
	require.Equal(t, 1.0, got["fifoq_mapping_enabled"+labels])
	require.Equal(t, 0.0, got["fifoq_mapping_invocations_total"+labels])

	send(t, c.client(), url, "fine")
	fn.next(t)
	send(t, c.client(), url, "boom")
	fn.next(t)
	want := map[string]float64{
		"fifoq_mapping_invocations_total" + labels:                                                       2,
		"fifoq_mapping_messages_total" + labels:                                                          2,
		`fifoq_mapping_failed_invocations_total{function="` + fn.url + `",kind="function",queue="jobs"}`: 1,
		`fifoq_mapping_failed_invocations_total{function="` + fn.url + `",kind="status",queue="jobs"}`:   0,
		"fifoq_mapping_reported_failed_messages_total" + labels:                                          0,
		"fifoq_mapping_invocations_in_flight" + labels:                                                   0,
		"fifoq_mapping_backoff_seconds" + labels:                                                         0,
		"fifoq_mapping_invocation_duration_seconds_count" + labels:                                       2,
	}
	require.Eventually(t, func() bool {
		got = scrape(t, metricsURL)
		for k, v := range want {
			if got[k] != v {
				return false
			}
		}
		return true
	}, time.Minute, 20*time.Millisecond, "the mapping's metrics after a success and a function error")
	c.stop(syscall.SIGTERM)
	require.Contains(t, c.stderr.String(), `level=WARN msg="lambdaevents: function error" queue=jobs function_url=`+fn.url)
	require.Contains(t, c.stderr.String(), `kind=function`)
}

// The console's page of a queue shows its mapping, with its settings and counts, and counts.json the counts
// the page refreshes.
func TestServeMappingConsole(t *testing.T) {
	t.Parallel()
	fn := startFunction(t, ok)
	config := mappingConfig(t, `{"name": "jobs"}, {"name": "other"}`,
		`{"queue": "jobs", "functionUrl": "`+fn.url+`", "batchSize": 3, "maximumBatchingWindowInSeconds": 1}, `+
			`{"queue": "other", "functionUrl": "`+fn.url+`", "enabled": false}`)
	c := startChild(t, "serve", "--addr", "127.0.0.1:0", "--console-addr", "127.0.0.1:0", "--config", config)
	consoleURL := c.line()
	send(t, c.client(), c.endpoint+"/000000000000/jobs", "one")
	fn.next(t)
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get(consoleURL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
		return string(b)
	}
	var page string
	require.Eventually(t, func() bool {
		page = get("queue?q=jobs")
		return strings.Contains(page, `data-q="mapping:0" data-f="invocations">1<`)
	}, time.Minute, 20*time.Millisecond, "the invocation counted on the page")
	for _, want := range []string{"Event source mappings", "<code>" + fn.url + "</code>", `<td class="num">3</td>`, "<td>1s</td>",
		`data-q="mapping:0" data-f="state">polling<`} {
		require.Contains(t, page, want)
	}
	require.NotContains(t, page, "mapping:1", "the other queue's mapping")
	require.Contains(t, get("queue?q=other"), `data-q="mapping:1" data-f="state">disabled<`)
	var counts map[string]map[string]string
	require.NoError(t, json.Unmarshal([]byte(get("counts.json")), &counts))
	require.Equal(t, "1", counts["mapping:0"]["invocations"])
	c.stop(syscall.SIGTERM)
}

// A mapping whose queue is deleted while it runs stops, says so in the log and the console, and the server
// goes on serving and stops cleanly.
func TestServeMappingQueueDeleted(t *testing.T) {
	t.Parallel()
	fn := startFunction(t, ok)
	config := mappingConfig(t, `{"name": "jobs"}`, `{"queue": "jobs", "functionUrl": "`+fn.url+`"}`)
	c := startChild(t, "serve", "--addr", "127.0.0.1:0", "--console-addr", "127.0.0.1:0", "--config", config)
	consoleURL := c.line()
	_, err := c.client().DeleteQueue(t.Context(), &sqs.DeleteQueueInput{QueueUrl: aws.String(c.endpoint + "/000000000000/jobs")})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return strings.Contains(c.stderr.String(), `level=WARN msg="event source mapping stopped" queue=jobs function_url=`+fn.url+
			` error="its queue was deleted"`)
	}, time.Minute, 20*time.Millisecond, "the mapping stops: %s", c.stderr.String())
	resp, err := http.Get(consoleURL + "counts.json")
	require.NoError(t, err)
	var counts map[string]map[string]string
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&counts))
	resp.Body.Close()
	require.Equal(t, "stopped: its queue was deleted", counts["mapping:0"]["state"])
	c.stop(syscall.SIGTERM)
}

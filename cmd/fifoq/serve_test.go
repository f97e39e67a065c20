package main

// Tests of "fifoq serve" as a user runs it: the command as a process (the test binary re-executed, see
// TestMain), driven through the AWS SDK or plain HTTP over loopback. Each test waits on what the process
// prints (its endpoint, its metrics URL) or on the responses it gives, never on a fixed sleep.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"
)

// env returns a getenv of the variables in kv ("NAME=value").
func env(kv ...string) func(string) string {
	m := make(map[string]string)
	for _, s := range kv {
		k, v, _ := strings.Cut(s, "=")
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

// Every flag has its variable; a flag on the command line wins over it; a bad value names the variable.
func TestParseServeEnv(t *testing.T) {
	t.Parallel()
	creds := writeFile(t, `{"credentials":[{"accessKeyId":"AKIDFILE","secretAccessKey":"file-secret"}]}`)
	config := writeFile(t, `{"queues":[{"name":"from-config"}]}`)
	all := env("FIFOQ_ADDR=127.0.0.1:7000", "FIFOQ_ALLOW_REMOTE=true", "FIFOQ_METRICS_ADDR=:9090",
		"FIFOQ_REGION=eu-west-1", "FIFOQ_ACCOUNT_ID=123456789012", "FIFOQ_CONFIG="+config,
		"FIFOQ_QUEUE=a;b.fifo,ContentBasedDeduplication=true\nc", "FIFOQ_CREDENTIALS="+creds, "FIFOQ_DATA_DIR=/var/lib/fifoq",
		"FIFOQ_LOG_LEVEL=warn", "FIFOQ_LOG_FORMAT=json", "FIFOQ_SHUTDOWN_TIMEOUT=30s", "FIFOQ_MAX_REQUEST_BYTES=2048",
		"FIFOQ_MAX_HEADER_BYTES=4096", "FIFOQ_ACCESS_KEY_ID=AKIDENV", "FIFOQ_SECRET_ACCESS_KEY=env-secret")
	cfg, err := parseServe(nil, all, io.Discard)
	require.NoError(t, err)
	require.Equal(t, serveConfig{addr: "127.0.0.1:7000", allowRemote: true, metricsAddr: ":9090", region: "eu-west-1",
		account: "123456789012", logLevel: 4, logFormat: "json", shutdownTimeout: 30 * time.Second, maxRequestBytes: 2048,
		maxHeaderBytes: 4096, dataDir: "/var/lib/fifoq",
		queues: []queueSpec{{Name: "from-config", origin: "config " + config + ":1:12"}, {Name: "a", origin: `FIFOQ_QUEUE "a"`},
			{Name: "b.fifo", Attributes: map[string]string{"ContentBasedDeduplication": "true"},
				origin: `FIFOQ_QUEUE "b.fifo,ContentBasedDeduplication=true"`}, {Name: "c", origin: `FIFOQ_QUEUE "c"`}},
		credentials: map[string]string{"AKIDFILE": "file-secret", "AKIDENV": "env-secret"},
	}, cfg)

	// The command line wins, flag by flag.
	cfg, err = parseServe([]string{"--addr", "localhost:0", "--account", "999999999999", "--queue", "z",
		"--log-level", "debug", "--shutdown-timeout", "1s"}, all, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "localhost:0", cfg.addr)
	require.Equal(t, "999999999999", cfg.account, "--account, the alias, wins over FIFOQ_ACCOUNT_ID too")
	require.Equal(t, []queueSpec{{Name: "from-config", origin: "config " + config + ":1:12"}, {Name: "z", origin: `--queue "z"`}},
		cfg.queues, "--queue replaces FIFOQ_QUEUE")
	require.Equal(t, "DEBUG", cfg.logLevel.String())
	require.Equal(t, time.Second, cfg.shutdownTimeout)
	require.Equal(t, "eu-west-1", cfg.region, "the variables of the flags not given still apply")

	for _, tc := range []struct {
		env     []string
		wantErr string
	}{
		{[]string{"FIFOQ_SHUTDOWN_TIMEOUT=soon"}, `FIFOQ_SHUTDOWN_TIMEOUT="soon"`},
		{[]string{"FIFOQ_ALLOW_REMOTE=maybe"}, "FIFOQ_ALLOW_REMOTE"},
		{[]string{"FIFOQ_LOG_LEVEL=loud"}, "FIFOQ_LOG_LEVEL"},
		{[]string{"FIFOQ_QUEUE=ok;,DelaySeconds=1"}, "FIFOQ_QUEUE: queue"},
		{[]string{"FIFOQ_ADDR=0.0.0.0:9324"}, "--addr 0.0.0.0:9324 is not a loopback address"},
		{[]string{"FIFOQ_ACCESS_KEY_ID=AKID"}, "an access key needs an id and a secret"},
		{[]string{"FIFOQ_SECRET_ACCESS_KEY=secret"}, "an access key needs an id and a secret"},
		{[]string{"FIFOQ_CREDENTIALS=" + writeFile(t, `{"credentials":[]}`)}, "no access keys"},
		{[]string{"FIFOQ_CREDENTIALS=" + writeFile(t, `{"credentials":[{"accessKeyId":"A","secret":"s"}]}`)}, `unknown field "secret"`},
		{[]string{"FIFOQ_CREDENTIALS=" + creds, "FIFOQ_ACCESS_KEY_ID=AKIDFILE", "FIFOQ_SECRET_ACCESS_KEY=x"}, "AKIDFILE given twice"},
		{[]string{"FIFOQ_CONFIG=" + writeFile(t, `{"queues":[{"name":"a","attributes":{"VisibilityTimeout":[1]}}]}`)}, "a list is not an attribute value"},
	} {
		var stderr strings.Builder
		_, err := parseServe(nil, env(tc.env...), &stderr)
		require.ErrorIs(t, err, errUsage, "%v", tc.env)
		require.ErrorContains(t, err, tc.wantErr, "%v", tc.env)
		require.Contains(t, stderr.String(), tc.wantErr, "%v: printed", tc.env)
	}
}

// The example config file of the documentation creates its queues, dead-letter queue and redrive policy
// included, in a process configured through its environment alone.
func TestServeExampleConfig(t *testing.T) {
	t.Parallel()
	c := startChildEnv(t, []string{"FIFOQ_ADDR=127.0.0.1:0", "FIFOQ_CONFIG=testdata/fifoq.json", "FIFOQ_LOG_FORMAT=json"}, "serve")
	client := c.client()
	list, err := client.ListQueues(t.Context(), &sqs.ListQueuesInput{})
	require.NoError(t, err)
	require.Equal(t, []string{c.endpoint + "/000000000000/emails", c.endpoint + "/000000000000/orders-dlq.fifo",
		c.endpoint + "/000000000000/orders.fifo"}, list.QueueUrls)
	sources, err := client.ListDeadLetterSourceQueues(t.Context(), &sqs.ListDeadLetterSourceQueuesInput{
		QueueUrl: aws.String(c.endpoint + "/000000000000/orders-dlq.fifo")})
	require.NoError(t, err)
	require.Equal(t, []string{c.endpoint + "/000000000000/orders.fifo"}, sources.QueueUrls)
	attrs, err := client.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(c.endpoint + "/000000000000/emails"), AttributeNames: []types.QueueAttributeName{"All"}})
	require.NoError(t, err)
	require.Equal(t, "5", attrs.Attributes["DelaySeconds"])
	require.Equal(t, "20", attrs.Attributes["ReceiveMessageWaitTimeSeconds"])
	c.stop(syscall.SIGTERM)
	require.Contains(t, c.stderr.String(), `"msg":"queue created","queue":"orders.fifo"`, "JSON logs, from FIFOQ_LOG_FORMAT")
}

// A bad command line or config file stops the process before it listens, with status 2 and the reason.
func TestServeBadStart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env     []string
		args    []string
		wantErr string
	}{
		{nil, []string{"--config", writeFile(t, `{"queues":[{"name":"a"},]}`)}, "invalid character"},
		{nil, []string{"--config", writeFile(t, `{"queues":[{"nmae":"a"}]}`)}, `unknown field "nmae"`},
		{[]string{"FIFOQ_METRICS_ADDR=0.0.0.0:0"}, nil, "--metrics-addr 0.0.0.0:0 is not a loopback address"},
		{[]string{"FIFOQ_MAX_REQUEST_BYTES=lots"}, nil, "FIFOQ_MAX_REQUEST_BYTES"},
	} {
		cmd := command(t, tc.env, append([]string{"serve", "--addr", "127.0.0.1:0"}, tc.args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		var exit interface{ ExitCode() int }
		require.ErrorAs(t, err, &exit, "%v %v", tc.env, tc.args)
		require.Equal(t, 2, exit.ExitCode(), "%v %v: stderr %s", tc.env, tc.args, stderr.String())
		require.Contains(t, stderr.String(), tc.wantErr)
		require.Empty(t, out, "it never listened")
	}
}

// health gets url and returns the status and the body.
func health(t *testing.T, client *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := client.Get(url)
	require.NoError(t, err, "GET %s", url)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// /health answers 200 on both listeners while the server serves, and 503 once it shuts down, while a
// request in progress finishes: here a SendMessage whose body is still being sent when SIGTERM comes. The
// request completes and its message is stored (the process runs on --data-dir, and a restart finds it).
func TestServeHealth(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A shutdown timeout far beyond any stall of the machine: the request in progress must complete
	// however long the test takes to send its body.
	args := []string{"serve", "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--data-dir", dir, "--queue", "q",
		"--shutdown-timeout", "10m"}
	c := startChild(t, args...)
	metricsURL := c.line()
	require.True(t, strings.HasPrefix(metricsURL, "http://127.0.0.1:") && strings.HasSuffix(metricsURL, "/metrics"), metricsURL)
	healthURLs := []string{c.endpoint + "/health", strings.TrimSuffix(metricsURL, "/metrics") + "/health"}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for _, u := range healthURLs {
		status, body := health(t, hc, u)
		require.Equal(t, http.StatusOK, status, u)
		require.Equal(t, "ok\n", body, u)
	}

	// A SendMessage in progress: its headers are read and its handler waits for the body, as the "100
	// Continue" it asked for tells.
	conn, err := net.Dial("tcp", strings.TrimPrefix(c.endpoint, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	body := "Action=SendMessage&QueueUrl=" + c.endpoint + "/000000000000/q&MessageBody=sent+during+the+shutdown"
	_, err = fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\n"+
		"Content-Length: %d\r\nExpect: 100-continue\r\n\r\n", strings.TrimPrefix(c.endpoint, "http://"), len(body))
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "HTTP/1.1 100 Continue\r\n", line)
	_, err = br.ReadString('\n') // the empty line after the interim response
	require.NoError(t, err)

	require.NoError(t, c.cmd.Process.Signal(syscall.SIGTERM))
	// The metrics listener stays up while the API's requests finish: its /health turns to 503. (A server
	// that never turns it is a hang, which go test's -timeout reports.)
	for {
		status, body := health(t, hc, healthURLs[1])
		if status == http.StatusOK {
			continue // the signal is on its way
		}
		require.Equal(t, http.StatusServiceUnavailable, status)
		require.Equal(t, "shutting down\n", body)
		break
	}
	_, err = hc.Get(healthURLs[0])
	require.Error(t, err, "the API listener is closed")

	_, err = io.WriteString(conn, body)
	require.NoError(t, err)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
	require.Contains(t, string(b), "<MessageId>")
	require.True(t, resp.Close, "a response during the shutdown closes its connection")
	require.NoError(t, c.cmd.Wait(), "stderr: %s", c.stderr.String())

	c = startChild(t, args...)
	c.line()
	out, err := c.client().ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(c.endpoint + "/000000000000/q")})
	require.NoError(t, err)
	require.Len(t, out.Messages, 1)
	require.Equal(t, "sent during the shutdown", aws.ToString(out.Messages[0].Body))
	c.stop(syscall.SIGTERM)
}

// scrape reads the metrics at url: each sample, by its name and labels as the text format writes them

// A connection that brings no request does not hold the shutdown up: the server closes it once the
// drain is over, and exits 0 within its timeout. (net/http's Shutdown takes a new connection for idle
// only once it is 5 seconds old; the SDK's clients open such connections under concurrency.) The shutdown
// timeout, 4 s, is shorter than those 5 s, so a server held up by the silent connection always logs its
// shutdown timeout; one that closes it after the drain (about 1 s) logs it only if the machine stalls it
// for 3 s. So a run that logs it is tried again, up to 3 times: the defect fails every try, a stall only
// the one it hit.
func TestServeShutdownSilentConnection(t *testing.T) {
	t.Parallel()
	const tries = 3
	var stderr string
	for try := 1; try <= tries; try++ {
		c := startChild(t, "serve", "--addr", "127.0.0.1:0", "--shutdown-timeout", "4s")
		silent, err := net.Dial("tcp", strings.TrimPrefix(c.endpoint, "http://"))
		require.NoError(t, err)
		hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		status, _ := health(t, hc, c.endpoint+"/health") // accepted after the silent one: it is accepted too
		require.Equal(t, http.StatusOK, status)

		require.NoError(t, c.cmd.Process.Signal(syscall.SIGTERM))
		waitErr := c.cmd.Wait()
		silent.Close()
		stderr = c.stderr.String()
		if !strings.Contains(stderr, "shutdown timeout") {
			require.NoError(t, waitErr, "stderr: %s", stderr)
			return
		}
		t.Logf("try %d: the server hit its shutdown timeout; stderr: %s", try, stderr)
	}
	t.Fatalf("the server hit its shutdown timeout in each of %d tries: the silent connection held the shutdown up; stderr: %s",
		tries, stderr)
}

// (fifoq_queue_messages{queue="work",state="visible"}).
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Content-Type"), "text/plain")
	samples := make(map[string]float64)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		require.NoError(t, err, "line %q", line)
		samples[line[:i]] = v
	}
	require.NoError(t, sc.Err())
	return samples
}

// TestServeMetrics scrapes /metrics from a running server during a workload and checks every counter and
// gauge of the queues against what the workload did: sends (single, batched, suppressed as duplicates),
// receives, deletes, messages left in flight, and a move to a dead-letter queue.
func TestServeMetrics(t *testing.T) {
	t.Parallel()
	c := startChild(t, "serve", "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--queue", "work", "--queue", "dlq",
		"--queue", `src,VisibilityTimeout=0,RedrivePolicy={"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}`,
		"--queue", "orders.fifo,ContentBasedDeduplication=true")
	metricsURL := c.line()
	require.True(t, strings.HasPrefix(metricsURL, "http://127.0.0.1:") && strings.HasSuffix(metricsURL, "/metrics"), metricsURL)
	ctx, client := t.Context(), c.client()
	url := func(name string) *string { return aws.String(c.endpoint + "/000000000000/" + name) }

	// want holds the samples expected of the fifoq collector, all of them: those not listed are 0.
	want := make(map[string]float64)
	check := func(when string) {
		t.Helper()
		got := scrape(t, metricsURL)
		for _, name := range []string{"go_goroutines", "process_resident_memory_bytes", "process_start_time_seconds"} {
			require.Contains(t, got, name, "%s: the Go and process collectors", when)
		}
		fifoq := make(map[string]float64)
		for k, v := range got {
			// The age of the oldest message moves on its own: it is looked at below.
			// The requests' metrics are looked at by TestServeRequestMetrics.
			if strings.HasPrefix(k, "fifoq_queue_") && !strings.HasPrefix(k, "fifoq_queue_oldest_message_age_seconds") && v != 0 {
				fifoq[k] = v
			}
		}
		require.Equal(t, want, fifoq, "%s: the non-zero fifoq samples", when)
		for _, q := range []string{"work", "dlq", "src", "orders.fifo"} {
			require.Contains(t, got, `fifoq_queue_sent_messages_total{queue="`+q+`"}`, "%s: every queue is reported", when)
		}
	}
	check("at the start")

	for i := range 20 {
		_, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: url("work"), MessageBody: aws.String("m" + strconv.Itoa(i))})
		require.NoError(t, err)
	}
	var entries []types.SendMessageBatchRequestEntry
	for i := range 10 {
		entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String("b")})
	}
	batch, err := client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: url("work"), Entries: entries})
	require.NoError(t, err)
	require.Len(t, batch.Successful, 10)
	want[`fifoq_queue_sent_messages_total{queue="work"}`] = 30
	want[`fifoq_queue_messages{queue="work",state="visible"}`] = 30
	check("after 30 sends")

	var handles []*string
	for range 2 {
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url("work"), MaxNumberOfMessages: 10,
			VisibilityTimeout: 3600})
		require.NoError(t, err)
		require.Len(t, out.Messages, 10)
		for _, m := range out.Messages {
			handles = append(handles, m.ReceiptHandle)
		}
	}
	var del []types.DeleteMessageBatchRequestEntry
	for i, h := range handles[:10] {
		del = append(del, types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: h})
	}
	deleted, err := client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: url("work"), Entries: del})
	require.NoError(t, err)
	require.Len(t, deleted.Successful, 10)
	for _, h := range handles[10:15] {
		_, err := client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: url("work"), ReceiptHandle: h})
		require.NoError(t, err)
	}
	want[`fifoq_queue_received_messages_total{queue="work"}`] = 20
	want[`fifoq_queue_deleted_messages_total{queue="work"}`] = 15
	want[`fifoq_queue_messages{queue="work",state="visible"}`] = 10
	want[`fifoq_queue_messages{queue="work",state="in_flight"}`] = 5
	check("after 20 receives and 15 deletes")

	for range 2 {
		_, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: url("orders.fifo"), MessageBody: aws.String("same"),
			MessageGroupId: aws.String("g")})
		require.NoError(t, err)
	}
	_, err = client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: url("src"), MessageBody: aws.String("poison")})
	require.NoError(t, err)
	out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url("src")}) // visible again at once
	require.NoError(t, err)
	require.Len(t, out.Messages, 1, "the first receive")
	out, err = client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url("src")})
	require.NoError(t, err)
	require.Empty(t, out.Messages, "the second receive moves it to the dead-letter queue instead")
	want[`fifoq_queue_sent_messages_total{queue="orders.fifo"}`] = 1
	want[`fifoq_queue_deduplicated_messages_total{queue="orders.fifo"}`] = 1
	want[`fifoq_queue_messages{queue="orders.fifo",state="visible"}`] = 1
	want[`fifoq_queue_sent_messages_total{queue="src"}`] = 1
	want[`fifoq_queue_received_messages_total{queue="src"}`] = 1
	want[`fifoq_queue_dead_letter_moved_out_messages_total{queue="src"}`] = 1
	want[`fifoq_queue_dead_letter_moved_in_messages_total{queue="dlq"}`] = 1
	want[`fifoq_queue_messages{queue="dlq",state="visible"}`] = 1
	check("after a duplicate and a move to the dead-letter queue")

	got := scrape(t, metricsURL)
	require.Greater(t, got[`fifoq_queue_oldest_message_age_seconds{queue="work"}`], 0.0)
	c.stop(syscall.SIGTERM)
	logs := c.stderr.String()
	require.Contains(t, logs, `level=WARN msg="fifoq: message moved to the dead-letter queue" queue=src dead_letter_queue=dlq message_id=`)
}

// apiError returns the code and HTTP status of an error the SDK returned.
func apiError(t *testing.T, err error) (code string, status int) {
	t.Helper()
	var ae smithy.APIError
	require.ErrorAs(t, err, &ae, "want an API error, got %v", err)
	var re *awshttp.ResponseError
	require.ErrorAs(t, err, &re, "want an HTTP response error, got %v", err)
	return ae.ErrorCode(), re.HTTPStatusCode()
}

// The size limits, as the SDK and a plain HTTP client see them: a body over --max-request-bytes is
// RequestEntityTooLarge (413) with SQS's text; a message over its queue's MaximumMessageSize, under that
// limit, is InvalidParameterValue (400) as on SQS; headers (or a query-protocol GET's URL) over
// --max-header-bytes are refused by net/http with 431 before the protocol is known.
func TestServeLimits(t *testing.T) {
	t.Parallel()
	c := startChild(t, "serve", "--addr", "127.0.0.1:0", "--max-request-bytes", "65536", "--max-header-bytes", "8192",
		"--queue", "q", "--queue", "small,MaximumMessageSize=1024")
	ctx, client := t.Context(), c.client()
	send := func(queue string, n int) error {
		_, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(c.endpoint + "/000000000000/" + queue),
			MessageBody: aws.String(strings.Repeat("x", n))})
		return err
	}
	require.NoError(t, send("q", 60<<10))
	err := send("q", 70<<10)
	code, status := apiError(t, err)
	require.Equal(t, "RequestEntityTooLarge", code)
	require.Equal(t, http.StatusRequestEntityTooLarge, status)
	var ae smithy.APIError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, "HTTP content length exceeded 65536 bytes.", ae.ErrorMessage())
	code, status = apiError(t, send("small", 1025))
	require.Equal(t, "InvalidParameterValue", code)
	require.Equal(t, http.StatusBadRequest, status)
	require.NoError(t, send("small", 1024))

	resp, err := http.Get(c.endpoint + "/?Action=ListQueues&QueueNamePrefix=" + strings.Repeat("q", 20<<10)) // net/http allows 4 KiB over the limit
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
	resp, err = http.Get(c.endpoint + "/?Action=ListQueues")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "a GET within the limit")
	c.stop(syscall.SIGTERM)
}

// With --credentials the server checks the signature of every request: a client with a key of the file
// (or of FIFOQ_ACCESS_KEY_ID) is served, one with another key or a wrong secret is refused with the SQS
// errors. Listening beyond loopback without credentials prints a warning; with them it does not.
func TestServeCredentials(t *testing.T) {
	t.Parallel()
	creds := writeFile(t, `{"credentials":[{"accessKeyId":"AKIDFILE","secretAccessKey":"file-secret"}]}`)
	c := startChildEnv(t, []string{"FIFOQ_ACCESS_KEY_ID=AKIDENV", "FIFOQ_SECRET_ACCESS_KEY=env-secret"},
		"serve", "--addr", "127.0.0.1:0", "--credentials", creds, "--queue", "q")
	for _, tc := range []struct {
		id, secret, code string
		status           int
	}{
		{"AKIDFILE", "file-secret", "", 200},
		{"AKIDENV", "env-secret", "", 200},
		{"AKIDFILE", "wrong", "SignatureDoesNotMatch", 403},
		{"AKIDOTHER", "file-secret", "InvalidClientTokenId", 403},
	} {
		client := sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(c.endpoint), Retryer: aws.NopRetryer{},
			Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
				return aws.Credentials{AccessKeyID: tc.id, SecretAccessKey: tc.secret}, nil
			})})
		_, err := client.ListQueues(t.Context(), &sqs.ListQueuesInput{})
		if tc.code == "" {
			require.NoError(t, err, tc.id)
			continue
		}
		code, status := apiError(t, err)
		require.Equal(t, tc.code, code, tc.id)
		require.Equal(t, tc.status, status, tc.id)
	}
	resp, err := http.Get(c.endpoint + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "/health needs no signature")
	c.stop(syscall.SIGTERM)
	require.Contains(t, c.stderr.String(), "signature_verification=true")

	// Beyond loopback (every interface, on a free port).
	const warning = "listening beyond loopback without signature verification"
	c = startChild(t, "serve", "--addr", "0.0.0.0:0", "--allow-remote")
	c.stop(syscall.SIGTERM)
	require.Contains(t, c.stderr.String(), warning)
	c = startChild(t, "serve", "--addr", "0.0.0.0:0", "--allow-remote", "--credentials", creds)
	c.stop(syscall.SIGTERM)
	require.NotContains(t, c.stderr.String(), warning)
	c = startChild(t, "serve", "--addr", "127.0.0.1:0")
	c.stop(syscall.SIGTERM)
	require.NotContains(t, c.stderr.String(), warning)
}

// TestServeSIGTERMDuringLongPolls sends SIGTERM to a durable server while clients long-poll an empty queue
// and others send to, long-poll and delete from a busy one. Every request started before the signal gets a
// valid response (no connection cut, no 5xx); the long polls are answered at once, not after their 20 s;
// the process exits 0 well within its shutdown timeout. Started again on its directory, the server has
// every message whose send was acknowledged: either received by a client (deleted, or still in flight)
// or in the queue; and no message is in flight that no client received, as one taken by a long poll
// answered empty would be.
func TestServeSIGTERMDuringLongPolls(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	// A shutdown timeout far beyond any stall of the machine: the requests in progress always finish.
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--shutdown-timeout", "1m",
		"--queue", "work,VisibilityTimeout=3600", "--queue", "idle"}
	c := startChild(t, args...)
	client := c.client()
	workURL, idleURL := aws.String(c.endpoint+"/000000000000/work"), aws.String(c.endpoint+"/000000000000/idle")
	ctx := context.Background() // the clients never give up on a request

	var (
		stopping atomic.Bool // set just before SIGTERM: no request starts after it
		mu       sync.Mutex  // guards the fields below
		acked    = make(map[string]bool)
		received = make(map[string]bool)
		deleted  = make(map[string]bool)
		failures []error // of requests started before SIGTERM
		enough   = make(chan struct{})
		wg       sync.WaitGroup
	)
	record := func(f func()) {
		mu.Lock()
		defer mu.Unlock()
		f()
		if len(acked) >= 200 && len(deleted) >= 50 && enough != nil {
			close(enough)
			enough = nil
		}
	}
	fail := func(what string, err error) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, fmt.Errorf("%s: %w", what, err))
	}
	ready := enough

	// Long polls on an empty queue, in progress when the signal comes.
	type poll struct {
		err error
		n   int
		at  time.Time
	}
	const idlePolls = 4
	idle := make(chan poll, idlePolls)
	pollStart := time.Now() // before the polls reach the server: their 20 s end after pollStart+20s
	for range idlePolls {
		go func() {
			out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: idleURL, WaitTimeSeconds: 20})
			p := poll{err: err, at: time.Now()}
			if out != nil {
				p.n = len(out.Messages)
			}
			idle <- p
		}()
	}
	for s := range 2 {
		wg.Go(func() {
			for i := 0; !stopping.Load(); i++ {
				out, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: workURL,
					MessageBody: aws.String(fmt.Sprintf("sender %d message %d", s, i))})
				if err != nil {
					fail("SendMessage", err)
					return
				}
				record(func() { acked[aws.ToString(out.MessageId)] = true })
			}
		})
	}
	for range 3 {
		wg.Go(func() {
			for !stopping.Load() {
				out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: workURL, WaitTimeSeconds: 20,
					MaxNumberOfMessages: 10})
				if err != nil {
					fail("ReceiveMessage", err)
					return
				}
				var entries []types.DeleteMessageBatchRequestEntry
				ids := make(map[string]string)
				record(func() {
					for i, m := range out.Messages {
						id := aws.ToString(m.MessageId)
						received[id] = true
						ids[strconv.Itoa(i)] = id
						entries = append(entries, types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)),
							ReceiptHandle: m.ReceiptHandle})
					}
				})
				if len(entries) == 0 || stopping.Load() {
					continue
				}
				del, err := client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: workURL, Entries: entries})
				if err != nil {
					fail("DeleteMessageBatch", err)
					return
				}
				if len(del.Failed) > 0 {
					fail("DeleteMessageBatch", fmt.Errorf("failed entries %+v", del.Failed))
				}
				record(func() {
					for _, e := range del.Successful {
						deleted[ids[aws.ToString(e.Id)]] = true
					}
				})
			}
		})
	}

	<-ready
	stopping.Store(true)
	sigAt := time.Now()
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGTERM))
	for range idlePolls {
		p := <-idle
		require.NoError(t, p.err, "a long poll in progress at SIGTERM")
		require.Zero(t, p.n)
		// A server that let the poll wait out its 20 s answers it after pollStart+20s, whenever SIGTERM came.
		// One that answers it at SIGTERM does so before, unless SIGTERM came late: so the check is made only
		// when SIGTERM came within 10 s, which leaves the answer 10 s or more, far beyond a stall.
		if sigAt.Sub(pollStart) < 10*time.Second {
			require.Less(t, p.at.Sub(pollStart), 20*time.Second, "the long poll is answered at SIGTERM, not after its 20 s")
		}
	}
	wg.Wait()
	require.Empty(t, failures, "every request started before SIGTERM gets a valid response")
	require.NoError(t, c.cmd.Wait(), "exit status; stderr: %s", c.stderr.String())
	exited := time.Since(sigAt)
	logs := c.stderr.String()
	require.Contains(t, logs, "stopped")
	require.NotContains(t, logs, "shutdown timeout", "the long polls held the shutdown up")
	t.Logf("%d sends acknowledged, %d messages received, %d deleted; long polls answered and the process exited %v after SIGTERM",
		len(acked), len(received), len(deleted), exited.Round(time.Millisecond))

	// Started again on the directory: count.
	c = startChild(t, args...)
	client = c.client()
	attrs, err := client.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: workURL,
		AttributeNames: []types.QueueAttributeName{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"}})
	require.NoError(t, err)
	inFlight := 0
	for id := range received {
		if !deleted[id] {
			inFlight++
		}
	}
	require.Equal(t, strconv.Itoa(inFlight), attrs.Attributes["ApproximateNumberOfMessagesNotVisible"],
		"the messages in flight are those received by a client and not deleted: none was taken by a poll answered empty")
	left := make(map[string]bool)
	for {
		out, err := client.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: workURL, MaxNumberOfMessages: 10})
		require.NoError(t, err)
		if len(out.Messages) == 0 {
			break
		}
		for _, m := range out.Messages {
			left[aws.ToString(m.MessageId)] = true
		}
	}
	require.Equal(t, attrs.Attributes["ApproximateNumberOfMessages"], strconv.Itoa(len(left)))
	for id := range acked {
		require.True(t, received[id] || left[id], "acknowledged message %s is neither received nor in the queue", id)
	}
	for id := range left {
		require.True(t, acked[id], "message %s in the queue was never acknowledged", id)
		require.False(t, received[id], "message %s was received, and is visible again", id)
	}
	for id := range deleted {
		require.True(t, received[id])
	}
	require.Equal(t, len(acked), len(received)+len(left), "every acknowledged send, once")
	idleAttrs, err := client.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: idleURL,
		AttributeNames: []types.QueueAttributeName{"All"}})
	require.NoError(t, err)
	require.Equal(t, "0", idleAttrs.Attributes["ApproximateNumberOfMessagesNotVisible"])
	c.stop(syscall.SIGTERM)
}

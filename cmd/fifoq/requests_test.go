package main

// Tests of what fifoq serve exports beyond its queues (issue 16, item 7): the requests by action and error
// code with their durations, the store's health, and the start-up log's count of queues; and promlint over
// the whole registry /metrics shows.

import (
	"bufio"
	"context"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/durable"
	"github.com/fifoq/fifoq/fifoqprom"
	"github.com/fifoq/fifoq/sqsapi"
)

// rmServe runs serve in process with args until the returned stop is called, which returns its logs and
// its error; lines are the lines it printed on stdout before it began to serve (its endpoint, and its
// metrics URL when --metrics-addr is given).
func rmServe(t *testing.T, nLines int, args ...string) (lines []string, stop func() (string, error)) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	stdoutR, stdoutW := io.Pipe()
	var stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), noEnv, stdoutW, &stderr)
		stdoutW.Close()
	}()
	rd := bufio.NewReader(stdoutR)
	for range nLines {
		line, err := rd.ReadString('\n')
		require.NoError(t, err, "stderr: %s", stderr.String())
		lines = append(lines, strings.TrimSpace(line))
	}
	go io.Copy(io.Discard, rd) //nolint:errcheck // keep the writer unblocked
	return lines, func() (string, error) {
		cancel()
		err := <-done
		return stderr.String(), err
	}
}

func rmClient(endpoint string) *sqs.Client {
	return sqs.New(sqs.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Retryer:      aws.NopRetryer{},
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "secret"}, nil
		}),
	})
}

// A durable server's /metrics counts its requests by action and error code, with their durations, and
// shows its store's syncs, size and health.
func TestServeRequestMetrics(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lines, stop := rmServe(t, 2, "--metrics-addr", "127.0.0.1:0", "--data-dir", dir, "--queue", "jobs")
	endpoint, metricsURL := lines[0], lines[1]
	ctx, client := t.Context(), rmClient(endpoint)

	before := scrape(t, metricsURL)
	require.Contains(t, before, "fifoq_store_failed")
	require.Zero(t, before["fifoq_store_failed"], "a working store")
	require.Positive(t, before["fifoq_store_syncs_total"], "the queue's creation was synced")
	require.Positive(t, before["fifoq_store_disk_bytes"])
	for k := range before {
		require.False(t, strings.HasPrefix(k, "fifoq_requests_total"), "no request yet: %s", k)
	}

	jobs := aws.String(endpoint + "/000000000000/jobs")
	for range 5 {
		_, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: jobs, MessageBody: aws.String("m")})
		require.NoError(t, err)
	}
	_, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(endpoint + "/000000000000/nope"),
		MessageBody: aws.String("m")})
	require.Error(t, err)
	out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: jobs, MaxNumberOfMessages: 10})
	require.NoError(t, err)
	require.NotEmpty(t, out.Messages)

	got := scrape(t, metricsURL)
	for k, want := range map[string]float64{
		`fifoq_requests_total{action="SendMessage",code="none"}`:                                    5,
		`fifoq_requests_total{action="SendMessage",code="AWS.SimpleQueueService.NonExistentQueue"}`: 1,
		`fifoq_requests_total{action="ReceiveMessage",code="none"}`:                                 1,
		`fifoq_request_duration_seconds_count{action="SendMessage"}`:                                6,
		`fifoq_request_duration_seconds_count{action="ReceiveMessage"}`:                             1,
	} {
		require.Equal(t, want, got[k], k)
	}
	require.GreaterOrEqual(t, got["fifoq_store_syncs_total"], before["fifoq_store_syncs_total"]+6,
		"each acknowledged send and the receive synced, one request at a time")
	require.Zero(t, got["fifoq_store_failed"])

	logs, err := stop()
	require.NoError(t, err, logs)
}

// The start-up log counts the same queues in "store opened" and "listening": every queue the server holds,
// not only those --queue declares (it said queues=4, then queues=2).
func TestServeLogsQueues(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, stop := rmServe(t, 1, "--data-dir", dir, "--queue", "a", "--queue", "b", "--queue", "c", "--queue", "d")
	logs, err := stop()
	require.NoError(t, err, logs)
	require.Contains(t, logs, `msg=listening `)
	require.Regexp(t, `msg=listening .*queues=4 `, logs)

	_, stop = rmServe(t, 1, "--data-dir", dir, "--queue", "a", "--queue", "b")
	logs, err = stop()
	require.NoError(t, err, logs)
	require.Regexp(t, `msg="store opened" .*queues=4`, logs)
	require.Regexp(t, `msg=listening .*queues=4 `, logs, "the two declared and the two kept from before")

	_, stop = rmServe(t, 1, "--queue", "a", "--queue", "b")
	logs, err = stop()
	require.NoError(t, err, logs)
	require.Regexp(t, `msg=listening .*queues=2 `, logs, "in memory")
}

// Everything /metrics shows passes promlint: the Go and process collectors, a durable server's queues, its
// store and its requests.
func TestServeMetricsLint(t *testing.T) {
	t.Parallel()
	st, err := durable.Open(t.TempDir())
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Close()) }()
	requests := fifoqprom.NewRequestCollector()
	cat, err := catalog.Open(st, catalog.WithDefaultNamespace(catalog.Namespace{Account: "000000000000", Region: "us-east-1"}))
	require.NoError(t, err)
	defer func() { require.NoError(t, cat.Close()) }() // before the store's Close
	api := sqsapi.NewServer(sqsapi.WithCatalog(cat), sqsapi.WithRequestObserver(requests))
	defer api.Close()
	_, err = api.DeclareQueue("jobs", nil)
	require.NoError(t, err)
	for _, form := range []url.Values{
		{"Action": {"SendMessage"}, "QueueUrl": {"http://fifoq.test/000000000000/jobs"}, "MessageBody": {"m"}},
		{"Action": {"Bogus"}},
	} {
		resp, err := api.HTTPClient().PostForm("http://fifoq.test/", form)
		require.NoError(t, err)
		resp.Body.Close()
	}

	reg := newMetricsRegistry(cat, st, requests)
	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	require.Empty(t, problems)
	n, err := testutil.GatherAndCount(reg, "fifoq_requests_total", "fifoq_store_syncs_total", "fifoq_store_disk_bytes", "fifoq_queue_messages")
	require.NoError(t, err)
	require.Equal(t, 2+1+1+3, n, "two request series, the store's syncs and size, a queue's three states")
}

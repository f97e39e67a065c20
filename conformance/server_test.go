package conformance_test

// Tests of the server as a service runs it (TestSv*): BeginShutdown and the long polls, Queues, the
// request size limit and the errors the SDK sees at each limit, and what the server logs.

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/sqsapi"
	"github.com/fifoq/fifoq/storage/storagetest"
)

// svClient returns an SDK client that calls srv in process.
func svClient(srv *sqsapi.Server) *sqs.Client {
	return sdClient(srv, sdStatic("AKIDSVTEST", "sv-test-secret"))
}

// svCreate creates a queue and returns its URL.
func svCreate(t *testing.T, c *sqs.Client, name string, attrs map[string]string) *string {
	t.Helper()
	out, err := c.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: &name, Attributes: attrs})
	require.NoError(t, err, "CreateQueue %s", name)
	return out.QueueUrl
}

// svPoll is the result of a long poll.
type svPoll struct {
	messages []types.Message
	err      error
	took     time.Duration
}

// BeginShutdown answers the long polls in progress at once, empty and with status 200, whether their wait
// comes from WaitTimeSeconds or from the queue's ReceiveMessageWaitTimeSeconds; after it a receive returns
// what is there without waiting, and the other actions are served as before.
func TestSvBeginShutdownEndsLongPolls(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv := sqsapi.NewServer() // the real clock: virtual in the bubble
		c := svClient(srv)
		polls := svCreate(t, c, "polls", nil)
		waits := svCreate(t, c, "waits", map[string]string{"ReceiveMessageWaitTimeSeconds": "20"})
		start := time.Now()
		results := make(chan svPoll, 4)
		poll := func(in *sqs.ReceiveMessageInput) {
			out, err := c.ReceiveMessage(context.Background(), in)
			p := svPoll{err: err, took: time.Since(start)}
			if out != nil {
				p.messages = out.Messages
			}
			results <- p
		}
		for range 3 {
			go poll(&sqs.ReceiveMessageInput{QueueUrl: polls, WaitTimeSeconds: 20, MaxNumberOfMessages: 10})
		}
		go poll(&sqs.ReceiveMessageInput{QueueUrl: waits}) // the queue's wait time
		synctest.Wait()                                    // all four wait
		time.Sleep(5 * time.Second)
		synctest.Wait()
		require.Empty(t, results, "the long polls still wait after 5 s")

		srv.BeginShutdown()
		for range 4 {
			p := <-results
			require.NoError(t, p.err)
			require.Empty(t, p.messages)
			require.Equal(t, 5*time.Second, p.took, "the long poll ended at BeginShutdown, not after its 20 s")
		}

		// Later receives do not wait, and take what is there; other actions are served.
		_, err := c.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: polls, MessageBody: aws.String("after")})
		require.NoError(t, err)
		for _, want := range []int{1, 0} {
			before := time.Now()
			out, err := c.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: polls, WaitTimeSeconds: 20})
			require.NoError(t, err)
			require.Len(t, out.Messages, want)
			require.Zero(t, time.Since(before), "a receive after BeginShutdown does not wait")
			if want == 1 {
				_, err = c.DeleteMessage(t.Context(), &sqs.DeleteMessageInput{QueueUrl: polls, ReceiptHandle: out.Messages[0].ReceiptHandle})
				require.NoError(t, err)
			}
		}
		srv.BeginShutdown() // again: nothing more happens
		require.NoError(t, srv.Close())
	})
}

// Messages sent around BeginShutdown while long polls wait are either received by a poll, which answers
// with them, or left visible: never taken by a poll that answers empty. Sent just before, they go to the
// poll they woke (its wait has ended with them); sent just after, when the polls' waits have ended but
// before they ran, they stay in the queue.
func TestSvBeginShutdownLosesNothing(t *testing.T) {
	t.Parallel()
	for _, before := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			srv := sqsapi.NewServer()
			c := svClient(srv)
			url := svCreate(t, c, "q", nil)
			results := make(chan svPoll, 3)
			for range 3 {
				go func() {
					out, err := c.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: url,
						WaitTimeSeconds: 20, MaxNumberOfMessages: 10})
					p := svPoll{err: err}
					if out != nil {
						p.messages = out.Messages
					}
					results <- p
				}()
			}
			synctest.Wait()
			q, _ := srv.Queue("q")
			send := func() {
				_, err := q.SendBatch(t.Context(), []fifoq.Message{{Body: "a"}, {Body: "b"}})
				require.NoError(t, err)
			}
			if before {
				send()
				srv.BeginShutdown()
			} else {
				srv.BeginShutdown()
				send() // the polls have not run since their waits ended
			}
			received := 0
			for range 3 {
				p := <-results
				require.NoError(t, p.err)
				received += len(p.messages)
			}
			st := q.Stats()
			require.Equal(t, received, st.InFlight, "every message taken was answered")
			require.Equal(t, 2, st.Visible+st.InFlight, "%+v, %d received", st, received)
			if !before {
				require.Equal(t, 2, st.Visible, "sent after BeginShutdown: no poll took them")
			}
		})
	}
}

// The catalogue's Queues returns the server's queues sorted by name, and follows creations and deletions.
func TestSvQueues(t *testing.T) {
	t.Parallel()
	srv := sqsapi.NewServer()
	require.Empty(t, srv.Catalog().Queues())
	for _, name := range []string{"c", "a.fifo", "b"} {
		var attrs map[string]string
		if strings.HasSuffix(name, ".fifo") {
			attrs = map[string]string{"FifoQueue": "true"}
		}
		_, err := srv.DeclareQueue(name, attrs)
		require.NoError(t, err)
	}
	names := func() []string {
		var out []string
		for _, q := range srv.Catalog().Queues() {
			out = append(out, q.Name())
		}
		return out
	}
	require.Equal(t, []string{"a.fifo", "b", "c"}, names())
	c := svClient(srv)
	url, err := c.GetQueueUrl(t.Context(), &sqs.GetQueueUrlInput{QueueName: aws.String("b")})
	require.NoError(t, err)
	_, err = c.DeleteQueue(t.Context(), &sqs.DeleteQueueInput{QueueUrl: url.QueueUrl})
	require.NoError(t, err)
	require.Equal(t, []string{"a.fifo", "c"}, names())
}

// svAPIError returns the code and the HTTP status of an error the SDK returned.
func svAPIError(t *testing.T, err error) (code string, status int) {
	t.Helper()
	var ae smithy.APIError
	require.ErrorAs(t, err, &ae, "want an API error, got %v", err)
	var re *awshttp.ResponseError
	require.ErrorAs(t, err, &re, "want an HTTP response error, got %v", err)
	return ae.ErrorCode(), re.HTTPStatusCode()
}

// The limits on the size of a request and of what it carries, as aws-sdk-go-v2 sees them, in process and
// over a socket (where the server answers an oversized body without reading it): RequestEntityTooLarge
// (413) for a body over the server's limit, InvalidParameterValue for a message over its queue's
// MaximumMessageSize, BatchRequestTooLong for a batch over 1 MiB. A 1 MiB message that the JSON protocol
// doubles in size passes the default limit.
func TestSvRequestLimits(t *testing.T) {
	t.Parallel()
	for _, socket := range []bool{false, true} {
		for _, limit := range []int64{0, 256 << 10} {
			srv := sqsapi.NewServer(sqsapi.WithMaxRequestBytes(limit))
			c := svClient(srv)
			if socket {
				ts := httptest.NewServer(srv)
				defer ts.Close()
				c = sqs.New(sqs.Options{Region: sdRegion, BaseEndpoint: aws.String(ts.URL), Retryer: aws.NopRetryer{},
					Credentials: sdStatic("AKIDSVTEST", "sv-test-secret")})
			}
			url := svCreate(t, c, "q", nil)
			small := svCreate(t, c, "small", map[string]string{"MaximumMessageSize": "1024"})
			send := func(queue *string, body string) error {
				_, err := c.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: queue, MessageBody: &body})
				return err
			}

			quotes := strings.Repeat(`"`, 1<<20) // 2 MiB in JSON
			if limit == 0 {
				require.NoError(t, send(url, quotes), "socket %v: a 1 MiB message under the default limit", socket)
			} else {
				code, status := svAPIError(t, send(url, quotes))
				require.Equal(t, "RequestEntityTooLarge", code, "socket %v", socket)
				require.Equal(t, http.StatusRequestEntityTooLarge, status)
				var ae smithy.APIError
				require.ErrorAs(t, send(url, strings.Repeat("x", 300<<10)), &ae)
				require.Equal(t, "HTTP content length exceeded 262144 bytes.", ae.ErrorMessage())
				require.NoError(t, send(url, "the connection is usable again"), "socket %v", socket)
			}

			code, status := svAPIError(t, send(url, strings.Repeat("x", 1<<20+1)))
			require.Equal(t, map[int64]string{0: "InvalidParameterValue", 256 << 10: "RequestEntityTooLarge"}[limit], code,
				"socket %v, limit %d: a message over 1 MiB", socket, limit)
			require.Equal(t, map[int64]int{0: 400, 256 << 10: 413}[limit], status)

			code, status = svAPIError(t, send(small, strings.Repeat("x", 1025)))
			require.Equal(t, "InvalidParameterValue", code)
			require.Equal(t, http.StatusBadRequest, status)

			if limit == 0 {
				var entries []types.SendMessageBatchRequestEntry
				for _, id := range []string{"a", "b"} {
					entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(id), MessageBody: aws.String(strings.Repeat("x", 600<<10))})
				}
				_, err := c.SendMessageBatch(t.Context(), &sqs.SendMessageBatchInput{QueueUrl: url, Entries: entries})
				code, status = svAPIError(t, err)
				require.Equal(t, "AWS.SimpleQueueService.BatchRequestTooLong", code)
				require.Equal(t, http.StatusBadRequest, status)
			}
		}
	}
}

// svLog is a slog handler that keeps the records, with their attributes as strings.
type svLog struct {
	mu      sync.Mutex
	records []svRecord
}

type svRecord struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

func (h *svLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *svLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *svLog) WithGroup(string) slog.Handler            { return h }
func (h *svLog) Handle(_ context.Context, r slog.Record) error {
	rec := svRecord{level: r.Level, msg: r.Message, attrs: make(map[string]string)}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.String()
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, rec)
	return nil
}

// find returns the records with that message.
func (h *svLog) find(msg string) []svRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []svRecord
	for _, r := range h.records {
		if r.msg == msg {
			out = append(out, r)
		}
	}
	return out
}

// Every request is logged at Debug with the same keys; a request that fails on the server's side is
// logged at Error with its cause (here a store that fails a write), which the client does not see.
func TestSvLogs(t *testing.T) {
	t.Parallel()
	disk := storagetest.NewDisk()
	eng, err := disk.Open()
	require.NoError(t, err)
	st, err := fifoq.OpenStore(eng, "disk")
	require.NoError(t, err)
	var logs svLog
	srv, err := drServe(st, drDefaultNS, []catalog.Option{catalog.WithLogger(slog.New(&logs))}, sqsapi.WithLogger(slog.New(&logs)))
	require.NoError(t, err)
	c := svClient(srv)
	url := svCreate(t, c, "orders", nil)
	_, err = c.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: url, MessageBody: aws.String("x")})
	require.NoError(t, err)
	_, err = c.GetQueueUrl(t.Context(), &sqs.GetQueueUrlInput{QueueName: aws.String("none")})
	require.Error(t, err)

	reqs := logs.find("sqsapi: request")
	require.Len(t, reqs, 3)
	for _, r := range reqs {
		require.Equal(t, slog.LevelDebug, r.level)
		for _, k := range []string{"action", "queue", "protocol", "status", "code", "request_id", "duration"} {
			require.Contains(t, r.attrs, k, "%+v", r)
		}
		require.Equal(t, "json", r.attrs["protocol"])
	}
	require.Equal(t, map[string]string{"action": "SendMessage", "queue": "orders", "status": "200", "code": ""},
		map[string]string{"action": reqs[1].attrs["action"], "queue": reqs[1].attrs["queue"], "status": reqs[1].attrs["status"],
			"code": reqs[1].attrs["code"]})
	require.Equal(t, "AWS.SimpleQueueService.NonExistentQueue", reqs[2].attrs["code"])
	require.Equal(t, "400", reqs[2].attrs["status"])
	require.Empty(t, logs.find("sqsapi: internal error"), "client errors are not server errors")

	eng.FailNextCommit(errors.New("disk full"))
	_, err = c.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: url, MessageBody: aws.String("y")})
	code, status := svAPIError(t, err)
	require.Equal(t, "ServiceUnavailable", code)
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Contains(t, err.Error(), "disk full", "a failed store's cause is named")
	require.Empty(t, logs.find("sqsapi: internal error"))
	failed := logs.find("sqsapi: refused: the store failed or is closed")
	require.Len(t, failed, 1)
	require.Equal(t, slog.LevelDebug, failed[0].level, "the store logs its failure; each request it fails, at Debug")
	require.Equal(t, "SendMessage", failed[0].attrs["action"])
	require.Equal(t, "orders", failed[0].attrs["queue"])
	require.Contains(t, failed[0].attrs["error"], "disk full")
	require.NoError(t, drClose(srv))
	require.ErrorContains(t, st.Close(), "disk full", "the Close of a failed store says why")
}

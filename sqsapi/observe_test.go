package sqsapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq/sqsapi"
)

// Tests of WithRequestObserver: one observation per request, with the action named by the server's own
// spelling (UnknownAction for any other), the error code ("" on success), and no allocation added.

type obRecord struct {
	action, code string
	d            time.Duration
}

type obRecorder struct {
	mu  sync.Mutex
	got []obRecord
}

func (r *obRecorder) ObserveRequest(action, code string, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, obRecord{action, code, d})
}

func (r *obRecorder) take() []obRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	got := r.got
	r.got = nil
	return got
}

func TestObserveRequest(t *testing.T) {
	t.Parallel()
	rec := new(obRecorder)
	srv := sqsapi.NewServer(sqsapi.WithRequestObserver(rec))
	_, err := srv.DeclareQueue("q", nil)
	require.NoError(t, err)
	client := srv.HTTPClient()
	queueURL := "http://fifoq.test/000000000000/q"

	jsonReq := func(target, body string) int {
		req, err := http.NewRequest(http.MethodPost, "http://fifoq.test/", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		req.Header.Set("X-Amz-Target", target)
		resp, err := client.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	queryReq := func(form url.Values) int {
		resp, err := client.PostForm("http://fifoq.test/", form)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}

	for _, tc := range []struct {
		name         string
		do           func() int
		status       int
		action, code string
	}{
		{"json send", func() int {
			return jsonReq("AmazonSQS.SendMessage", `{"QueueUrl":"`+queueURL+`","MessageBody":"a"}`)
		}, 200, "SendMessage", ""},
		{"json receive", func() int {
			return jsonReq("AmazonSQS.ReceiveMessage", `{"QueueUrl":"`+queueURL+`"}`)
		}, 200, "ReceiveMessage", ""},
		{"json missing queue", func() int {
			return jsonReq("AmazonSQS.SendMessage", `{"QueueUrl":"http://fifoq.test/000000000000/nope","MessageBody":"a"}`)
		}, 400, "SendMessage", "AWS.SimpleQueueService.NonExistentQueue"},
		{"json unknown action", func() int {
			return jsonReq("AmazonSQS.BogusAction", `{}`)
		}, 400, sqsapi.UnknownAction, "InvalidAction"},
		{"json target without prefix", func() int {
			return jsonReq("Whatever", `{}`)
		}, 400, sqsapi.UnknownAction, "InvalidAction"},
		{"query list", func() int {
			return queryReq(url.Values{"Action": {"ListQueues"}})
		}, 200, "ListQueues", ""},
		{"query bad value", func() int {
			return queryReq(url.Values{"Action": {"SendMessage"}, "QueueUrl": {queueURL}, "MessageBody": {"a"}, "DelaySeconds": {"9999"}})
		}, 400, "SendMessage", "InvalidParameterValue"},
		{"query unknown action", func() int {
			return queryReq(url.Values{"Action": {"sendmessage"}})
		}, 400, sqsapi.UnknownAction, "InvalidAction"},
		{"query no action", func() int {
			return queryReq(url.Values{"QueueUrl": {queueURL}})
		}, 400, sqsapi.UnknownAction, "MissingAction"},
	} {
		require.Equal(t, tc.status, tc.do(), tc.name)
		got := rec.take()
		require.Len(t, got, 1, "%s: one observation per request", tc.name)
		require.Equal(t, tc.action, got[0].action, tc.name)
		require.Equal(t, tc.code, got[0].code, tc.name)
		require.GreaterOrEqual(t, got[0].d, time.Duration(0), tc.name)
	}
}

// A request whose context ended before it was done is CodeCanceled, not InternalFailure, whatever it
// was answered: a long poll whose client went away, a send that was never made.
func TestObserveRequestCanceled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := new(obRecorder)
		srv := sqsapi.NewServer(sqsapi.WithRequestObserver(rec))
		_, err := srv.DeclareQueue("q", nil)
		require.NoError(t, err)
		serve := func(ctx context.Context, target, body string) int {
			req := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://fifoq.test/", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/x-amz-json-1.0")
			req.Header.Set("X-Amz-Target", target)
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, req)
			return w.Code
		}
		q := `"QueueUrl":"http://fifoq.test/000000000000/q"`

		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan int)
		go func() { done <- serve(ctx, "AmazonSQS.ReceiveMessage", `{`+q+`,"WaitTimeSeconds":20}`) }()
		time.Sleep(5 * time.Second)
		cancel() // the client goes away during its long poll
		require.Equal(t, 200, <-done, "an empty receive")
		got := rec.take()
		require.Len(t, got, 1)
		require.Equal(t, obRecord{"ReceiveMessage", sqsapi.CodeCanceled, 5 * time.Second}, got[0])

		require.Equal(t, 500, serve(ctx, "AmazonSQS.SendMessage", `{`+q+`,"MessageBody":"a"}`), "a send on an ended context")
		got = rec.take()
		require.Len(t, got, 1)
		require.Equal(t, "SendMessage", got[0].action)
		require.Equal(t, sqsapi.CodeCanceled, got[0].code)
		queue, ok := srv.Queue("q")
		require.True(t, ok)
		require.Zero(t, queue.Stats().Visible, "nothing was sent")
	})
}

// obNop is an observer that allocates nothing.
type obNop struct{ n int }

func (o *obNop) ObserveRequest(string, string, time.Duration) { o.n++ }

// An observer costs the hot path no allocation: a send allocates as much with one as without.
func TestObserveRequestAllocs(t *testing.T) {
	if hpRace() {
		t.Skip("the race detector allocates on its own")
	}
	allocs := func(opts ...sqsapi.Option) float64 {
		srv := sqsapi.NewServer(opts...)
		_, err := srv.DeclareQueue("hp", nil)
		require.NoError(t, err)
		c := hpNewClient(t, srv)
		body := []byte(`{"QueueUrl":"http://fifoq.test/000000000000/hp","MessageBody":"hello, world"}`)
		missing := []byte(`{"QueueUrl":"http://fifoq.test/000000000000/nope","MessageBody":"hello, world"}`)
		return testing.AllocsPerRun(500, func() {
			if st, resp := c.do(hpTargetSend, body); st != 200 {
				t.Fatalf("SendMessage: %d %s", st, resp)
			}
			if st, resp := c.do(hpTargetSend, missing); st != 400 {
				t.Fatalf("SendMessage to a missing queue: %d %s", st, resp)
			}
		})
	}
	nop := new(obNop)
	without, with := allocs(), allocs(sqsapi.WithRequestObserver(nop))
	require.Positive(t, nop.n, "the observer was called")
	require.Equal(t, without, with, "allocations of a send and a failed send, without and with an observer")
}

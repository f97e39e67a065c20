package lambdaevents_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/lambdaevents"
)

// A function is an HTTP server on 127.0.0.1 standing in for a Lambda function behind the Runtime Interface
// Emulator: it decodes each invocation into an events.SQSEvent, keeps it, and answers as its answer function
// says. It is made outside any synctest bubble, so that its goroutines are not in one: it shares nothing with
// a bubble but its mutex-guarded fields.
type function struct {
	srv *httptest.Server

	mu       sync.Mutex
	events   []events.SQSEvent
	bodies   [][]byte
	requests []string // method, path and Content-Type of each invocation
	answer   func(e events.SQSEvent, call int) answer
}

// An answer is what the function answers an invocation with.
type answer struct {
	status int    // 0 means 200
	header string // X-Amz-Function-Error, if set
	body   string
}

func newFunction(t *testing.T, a func(e events.SQSEvent, call int) answer) *function {
	t.Helper()
	f := &function{answer: a}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *function) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var e events.SQSEvent
	if err := json.Unmarshal(body, &e); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.events = append(f.events, e)
	f.bodies = append(f.bodies, body)
	f.requests = append(f.requests, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
	a := f.answer(e, len(f.events))
	f.mu.Unlock()
	if a.header != "" {
		w.Header().Set("X-Amz-Function-Error", a.header)
	}
	if a.status != 0 {
		w.WriteHeader(a.status)
	}
	_, _ = io.WriteString(w, a.body)
}

// url is the function's invocation URL, the Runtime Interface Emulator's path on the server's address.
func (f *function) url() string { return f.srv.URL + "/2015-03-31/functions/function/invocations" }

// calls returns the events the function got so far.
func (f *function) calls() []events.SQSEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]events.SQSEvent(nil), f.events...)
}

// requestsSeen returns the method, path and Content-Type of each invocation so far.
func (f *function) requestsSeen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.requests...)
}

// bodiesSeen returns the bodies of the invocations so far.
func (f *function) bodiesSeen() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]byte(nil), f.bodies...)
}

// closedURL returns the invocation URL of a port on 127.0.0.1 where nothing listens: connections to it are
// refused.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://" + addr + "/2015-03-31/functions/function/invocations"
}

// testClient is the client of an Invoker that runs in a synctest bubble: without keep-alive connections,
// whose reading goroutines would block on the network between invocations, and so keep the bubble's time
// from moving.
func testClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
}

// started is an Invoker running in a goroutine of the test.
type started struct {
	*lambdaevents.Invoker
	cancel  context.CancelFunc
	done    chan error
	mu      sync.Mutex
	reports []fifoq.BatchReport
}

// start runs an Invoker of m over src until stop. Its OnBatch keeps the reports.
func start(t *testing.T, src fifoq.Source, m lambdaevents.Mapping, o lambdaevents.Options) *started {
	t.Helper()
	if o.Client == nil {
		o.Client = testClient()
	}
	s := &started{done: make(chan error, 1)}
	o.OnBatch = func(r fifoq.BatchReport) {
		s.mu.Lock()
		s.reports = append(s.reports, r)
		s.mu.Unlock()
	}
	inv, err := lambdaevents.NewInvoker(src, m, o)
	require.NoError(t, err)
	s.Invoker = inv
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() { s.done <- inv.Run(ctx) }()
	return s
}

// stop cancels Run's context and waits for Run to return nil.
func (s *started) stop(t *testing.T) {
	t.Helper()
	s.cancel()
	require.NoError(t, await(t, s.done, "Run to return"))
}

// bound is how long a test waits for another goroutine before it fails: a bound on a failure, never a wait
// that a passing test reaches. Inside a synctest bubble it is virtual time.
const bound = time.Minute

// await receives from ch, failing the test after bound.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(bound):
		t.Fatalf("waited %v for %s", bound, what)
		panic("unreachable")
	}
}

// give sends v on ch, failing the test after bound.
func give[T any](t *testing.T, ch chan<- T, v T, what string) {
	t.Helper()
	select {
	case ch <- v:
	case <-time.After(bound):
		t.Fatalf("waited %v for %s", bound, what)
	}
}

// batchReports returns the reports of the batches so far.
func (s *started) batchReports() []fifoq.BatchReport {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]fifoq.BatchReport(nil), s.reports...)
}

// left returns the bodies of the messages in q, in send order.
func left(q *fifoq.Queue) []string {
	var bodies []string
	for m := range q.Messages() {
		bodies = append(bodies, m.Body)
	}
	return bodies
}

// sendAll sends bodies to q, in group g on a FIFO queue (content-based deduplication).
func sendAll(t *testing.T, q *fifoq.Queue, g string, bodies ...string) {
	t.Helper()
	for _, b := range bodies {
		m := fifoq.Message{Body: b}
		if q.FIFO() {
			m.GroupID = g
		}
		_, err := q.Send(context.Background(), m)
		require.NoError(t, err)
	}
}

// newQueue returns a queue named jobs.fifo (with content-based deduplication) or jobs.
func newQueue(fifo bool, opts ...fifoq.Option) (*fifoq.Queue, error) {
	if fifo {
		return fifoq.New("jobs.fifo", append(opts, fifoq.WithContentBasedDeduplication())...)
	}
	return fifoq.New("jobs", opts...)
}

// idOf returns the messageId of the record with body b.
func idOf(e events.SQSEvent, b string) string {
	for _, r := range e.Records {
		if r.Body == b {
			return r.MessageId
		}
	}
	return "no record with body " + b
}

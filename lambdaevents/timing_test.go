package lambdaevents_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/lambdaevents"
)

// TestInvokerTimeout checks the function timeout, by the queue's clock (a ManualClock here, since a function
// that does not answer keeps a goroutine of the client waiting on the network, where a synctest bubble's time
// would not move): when it passes the request is cancelled, and the batch fails whole with ErrorTimeout.
func TestInvokerTimeout(t *testing.T) {
	t.Parallel()
	arrived, gone := make(chan struct{}, 1), make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body) // then the server notices when the client closes the connection
		arrived <- struct{}{}
		<-r.Context().Done() // no answer: until the client gives up
		gone <- struct{}{}
	}))
	defer srv.Close()
	clock := fifoq.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	q, err := fifoq.New("jobs", fifoq.WithClock(clock), fifoq.WithVisibilityTimeout(30*time.Second))
	require.NoError(t, err)
	sendAll(t, q, "", "m1", "m2")
	inv := start(t, q, lambdaevents.Mapping{FunctionURL: srv.URL, FunctionTimeout: 5 * time.Second}, lambdaevents.Options{})
	await(t, arrived, "the invocation")
	require.Equal(t, 1, inv.Metrics().InFlight)
	clock.Advance(5 * time.Second) // the function timeout: the Invoker cancels the request
	await(t, gone, "the request to be cancelled")
	inv.stop(t) // returns once the batch is settled

	r := inv.batchReports()
	require.Len(t, r, 1)
	var fe *lambdaevents.FunctionError
	require.ErrorAs(t, r[0].Err, &fe)
	require.Equal(t, lambdaevents.ErrorTimeout, fe.Kind)
	require.EqualError(t, fe, "lambdaevents: function timed out: no answer within the function timeout of 5s")
	require.Equal(t, []string{"m1", "m2"}, left(q))
	m := inv.Metrics()
	require.Equal(t, uint64(1), m.Invocations, "a timeout is an invocation")
	require.Equal(t, uint64(1), m.Errors[lambdaevents.ErrorTimeout])
	require.Equal(t, 5*time.Second, m.Duration.Sum, "by the queue's clock")
	require.Equal(t, 0, m.InFlight)
	require.Zero(t, m.Backoff, "a function that times out is reachable")
}

// records is a slog.Handler that keeps what it is given.
type records struct {
	mu sync.Mutex
	rs []record
}

type record struct {
	at    time.Time
	level slog.Level
	msg   string
	attrs map[string]any
}

func (h *records) Enabled(context.Context, slog.Level) bool { return true }
func (h *records) Handle(_ context.Context, r slog.Record) error {
	rec := record{at: time.Now(), level: r.Level, msg: r.Message, attrs: map[string]any{}}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.Any()
		return true
	})
	h.mu.Lock()
	h.rs = append(h.rs, rec)
	h.mu.Unlock()
	return nil
}
func (h *records) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *records) WithGroup(string) slog.Handler      { return h }

func (h *records) all() []record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]record(nil), h.rs...)
}

// switchable is a transport whose connections go to one address or another, as set: the function's
// address stays the same while the function is down, then up.
type switchable struct {
	http.Transport
	addr     atomic.Value // string
	mu       sync.Mutex
	attempts []time.Duration // since start, by the bubble's clock
	start    time.Time
}

func newSwitchable(addr string) *switchable {
	s := &switchable{start: time.Now()}
	s.addr.Store(addr)
	s.DisableKeepAlives = true
	s.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, s.addr.Load().(string))
	}
	return s
}

func (s *switchable) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.attempts = append(s.attempts, time.Since(s.start))
	s.mu.Unlock()
	return s.Transport.RoundTrip(r)
}

func (s *switchable) attemptsSoFar() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.attempts...)
}

// TestInvokerUnreachable checks a function that is down (connections to its port are refused), in the
// virtual time of a synctest bubble: every batch it is given fails, and the Invoker takes one batch at a time,
// after 1, 2, 4, 8, 16, then 30 seconds, even with 5 invocations allowed at once, so the queue's messages are
// received no more than that; it logs the first failure, then at most one record a minute; once the function
// answers, the next try reaches it, the outage's end is logged, and the queue drains.
func TestInvokerUnreachable(t *testing.T) {
	t.Parallel()
	down := closedURL(t)
	fn := newFunction(t, fixed(answer{}))
	up, err := url.Parse(fn.url())
	require.NoError(t, err)
	synctest.Test(t, func(t *testing.T) {
		q, err := fifoq.New("jobs", fifoq.WithVisibilityTimeout(time.Hour))
		require.NoError(t, err)
		for range 300 { // more than the tries take
			sendAll(t, q, "", "m")
		}
		tr := newSwitchable(mustHost(t, down))
		logs := &records{}
		inv := start(t, q, lambdaevents.Mapping{FunctionURL: fn.url(), MaximumConcurrency: 5, FunctionConcurrency: 5},
			lambdaevents.Options{Client: &http.Client{Transport: tr}, Logger: slog.New(logs)})
		time.Sleep(100 * time.Second)
		synctest.Wait()

		attempts := tr.attemptsSoFar()
		atZero := 0
		for _, a := range attempts {
			if a == 0 {
				atZero++
			}
		}
		// At 0 the first batches start before the first failure: up to 5. Then one try per backoff.
		require.GreaterOrEqual(t, atZero, 1)
		require.LessOrEqual(t, atZero, 5)
		sec := time.Second
		require.Equal(t, []time.Duration{1 * sec, 3 * sec, 7 * sec, 15 * sec, 31 * sec, 61 * sec, 91 * sec}, attempts[atZero:],
			"tries after the first failures")
		tries := len(attempts)
		require.Equal(t, uint64(10*tries), q.Metrics().Received, "no receives but the tries'")
		m := inv.Metrics()
		require.Equal(t, uint64(tries), m.Errors[lambdaevents.ErrorUnreachable])
		require.Zero(t, m.Invocations, "none reached the function")
		require.Equal(t, 30*time.Second, m.Backoff)
		for _, r := range inv.batchReports() {
			var fe *lambdaevents.FunctionError
			require.ErrorAs(t, r.Err, &fe)
			require.Equal(t, lambdaevents.ErrorUnreachable, fe.Kind)
			require.ErrorContains(t, fe, "connection refused")
		}

		rs := logs.all()
		require.Len(t, rs, 2, "the first failure, and one a minute later: %v", rs)
		require.Equal(t, "lambdaevents: function unreachable", rs[0].msg)
		require.Equal(t, slog.LevelWarn, rs[0].level)
		require.Equal(t, time.Duration(0), rs[0].at.Sub(tr.start))
		require.Equal(t, time.Second, rs[0].attrs["backoff"])
		require.Equal(t, "jobs", rs[0].attrs["queue"])
		require.Equal(t, fn.url(), rs[0].attrs["function_url"])
		require.Equal(t, 61*time.Second, rs[1].at.Sub(tr.start))
		require.Equal(t, int64(atZero-1+6), rs[1].attrs["failures"], "the others at 0, then 1, 3, 7, 15, 31 and 61 s")
		require.Equal(t, 30*time.Second, rs[1].attrs["backoff"])
		require.Equal(t, 61*time.Second, rs[1].attrs["down_for"])

		tr.addr.Store(up.Host) // the function comes up
		time.Sleep(time.Minute)
		synctest.Wait()
		attempts = tr.attemptsSoFar()
		require.Equal(t, 121*time.Second, attempts[tries], "the next try, 30 s after the last")
		rs = logs.all()
		require.Equal(t, "lambdaevents: function reachable again", rs[2].msg)
		require.Equal(t, slog.LevelInfo, rs[2].level)
		require.Equal(t, int64(tries), rs[2].attrs["failures"])
		require.Equal(t, 121*time.Second, rs[2].attrs["down_for"])
		require.Zero(t, inv.Metrics().Backoff)
		inv.stop(t)
		// The batches that failed are in flight for their hour; the others went through.
		s := q.Stats()
		require.Equal(t, 0, s.Visible)
		require.Equal(t, 10*tries, s.InFlight)
	})
}

func mustHost(t *testing.T, u string) string {
	t.Helper()
	p, err := url.Parse(u)
	require.NoError(t, err)
	return p.Host
}

// orderedSource is a *fifoq.Queue that records the messages its deletes delete, in order.
type orderedSource struct {
	*fifoq.Queue
	mu      sync.Mutex
	ids     map[string]string // receipt handle -> body
	deleted []string
}

func (s *orderedSource) keep(ds []fifoq.Delivery) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range ds {
		s.ids[d.ReceiptHandle] = d.Body
	}
}

func (s *orderedSource) Receive(ctx context.Context, o fifoq.ReceiveOptions) ([]fifoq.Delivery, error) {
	ds, err := s.Queue.Receive(ctx, o)
	s.keep(ds)
	return ds, err
}

func (s *orderedSource) ReceiveMany(ctx context.Context, o fifoq.ReceiveOptions) ([]fifoq.Delivery, error) {
	ds, err := s.Queue.ReceiveMany(ctx, o)
	s.keep(ds)
	return ds, err
}

func (s *orderedSource) DeleteBatch(ctx context.Context, handles []string) error {
	s.mu.Lock()
	for _, h := range handles {
		s.deleted = append(s.deleted, s.ids[h])
	}
	s.mu.Unlock()
	return s.Queue.DeleteBatch(ctx, handles)
}

// TestInvokerFIFOOrder checks a FIFO mapping whose function reports only the record that failed, as a
// naive function would: the later messages of its group fail with it, come back with it after the
// visibility timeout, in order, and are deleted after it; the other groups go on meanwhile; and a
// whole-batch failure retries its group likewise.
func TestInvokerFIFOOrder(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		seen = map[string][]string{} // group -> body#receive, in the order the function got them
	)
	fn := newFunction(t, func(e events.SQSEvent, _ int) answer {
		mu.Lock()
		defer mu.Unlock()
		var failed []string
		for _, r := range e.Records {
			g := r.Attributes["MessageGroupId"]
			seen[g] = append(seen[g], r.Body+"#"+r.Attributes["ApproximateReceiveCount"])
			if r.Body == "a2" && r.Attributes["ApproximateReceiveCount"] == "1" {
				failed = append(failed, `{"itemIdentifier":"`+r.MessageId+`"}`)
			}
			if r.Body == "c1" && r.Attributes["ApproximateReceiveCount"] == "1" {
				return answer{status: 500}
			}
		}
		if len(failed) == 0 {
			return answer{}
		}
		return answer{body: `{"batchItemFailures":[` + failed[0] + `]}`}
	})
	synctest.Test(t, func(t *testing.T) {
		q, err := fifoq.New("jobs.fifo", fifoq.WithContentBasedDeduplication(), fifoq.WithVisibilityTimeout(30*time.Second))
		require.NoError(t, err)
		sendAll(t, q, "g1", "a1", "a2", "a3", "a4")
		sendAll(t, q, "g2", "b1", "b2", "b3")
		sendAll(t, q, "g3", "c1")
		src := &orderedSource{Queue: q, ids: map[string]string{}}
		inv := start(t, src, lambdaevents.Mapping{FunctionURL: fn.url(), BatchSize: 3, FunctionResponseTypes: reportItems,
			MaximumConcurrency: 2, FunctionConcurrency: 2}, lambdaevents.Options{})
		synctest.Wait()
		mu.Lock()
		require.Equal(t, map[string][]string{"g1": {"a1#1", "a2#1", "a3#1"}, "g2": {"b1#1", "b2#1", "b3#1"}, "g3": {"c1#1"}}, seen,
			"first deliveries")
		mu.Unlock()
		require.Equal(t, []string{"a2", "a3", "a4", "c1"}, left(q), "a3 failed with a2; a4 waits behind them")

		time.Sleep(30 * time.Second) // the visibility timeout of the failed messages
		synctest.Wait()
		inv.stop(t)
		require.Empty(t, left(q))
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, []string{"a1#1", "a2#1", "a3#1", "a2#2", "a3#2", "a4#1"}, seen["g1"])
		require.Equal(t, []string{"c1#1", "c1#2"}, seen["g3"])
		byGroup := map[byte][]string{}
		for _, b := range src.deleted {
			byGroup[b[0]] = append(byGroup[b[0]], b)
		}
		require.Equal(t, []string{"a1", "a2", "a3", "a4"}, byGroup['a'], "deleted in group order")
		require.Equal(t, []string{"b1", "b2", "b3"}, byGroup['b'])
		require.Equal(t, []string{"c1"}, byGroup['c'])
	})
}

// TestInvokerDeadLetter checks that a message that keeps failing moves to the dead-letter queue through the
// queue's redrive policy, past maxReceiveCount, as on Lambda; and that a mapping of the dead-letter queue
// gives the function its DeadLetterQueueSourceArn.
func TestInvokerDeadLetter(t *testing.T) {
	t.Parallel()
	fn := newFunction(t, func(e events.SQSEvent, _ int) answer {
		for _, r := range e.Records {
			if r.Body == "poison" && r.EventSourceARN == "arn:aws:sqs:us-east-1:000000000000:jobs" {
				return answer{body: `{"batchItemFailures":[{"itemIdentifier":"` + r.MessageId + `"}]}`}
			}
		}
		return answer{}
	})
	synctest.Test(t, func(t *testing.T) {
		dlq, err := fifoq.New("jobs-dlq")
		require.NoError(t, err)
		q, err := fifoq.New("jobs", fifoq.WithVisibilityTimeout(10*time.Second), fifoq.WithDeadLetterQueue(dlq, 2))
		require.NoError(t, err)
		sendAll(t, q, "", "ok1", "poison", "ok2")
		inv := start(t, q, lambdaevents.Mapping{FunctionURL: fn.url(), FunctionResponseTypes: reportItems}, lambdaevents.Options{})
		time.Sleep(25 * time.Second) // two receives of poison, 10 s apart, then the third moves it
		synctest.Wait()
		inv.stop(t)
		var bodies []string
		for _, e := range fn.calls() {
			for _, r := range e.Records {
				bodies = append(bodies, r.Body+"#"+r.Attributes["ApproximateReceiveCount"])
			}
		}
		require.Equal(t, []string{"ok1#1", "poison#1", "ok2#1", "poison#2"}, bodies)
		require.Empty(t, left(q))
		require.Equal(t, []string{"poison"}, left(dlq))

		dinv := start(t, dlq, lambdaevents.Mapping{FunctionURL: fn.url()}, lambdaevents.Options{})
		synctest.Wait()
		dinv.stop(t)
		last := fn.calls()[len(fn.calls())-1].Records[0]
		require.Equal(t, "arn:aws:sqs:us-east-1:000000000000:jobs-dlq", last.EventSourceARN)
		require.Equal(t, "arn:aws:sqs:us-east-1:000000000000:jobs", last.Attributes["DeadLetterQueueSourceArn"])
		require.Equal(t, "3", last.Attributes["ApproximateReceiveCount"])
		require.Empty(t, left(dlq))
	})
}

// TestInvokerDisabled checks a mapping that is not Enabled: Run polls nothing, and returns with its context.
func TestInvokerDisabled(t *testing.T) {
	t.Parallel()
	fn := newFunction(t, fixed(answer{}))
	synctest.Test(t, func(t *testing.T) {
		q, err := fifoq.New("jobs")
		require.NoError(t, err)
		sendAll(t, q, "", "m1")
		off := false
		inv := start(t, q, lambdaevents.Mapping{FunctionURL: fn.url(), Enabled: &off}, lambdaevents.Options{})
		time.Sleep(time.Minute)
		synctest.Wait()
		inv.stop(t)
		require.Empty(t, fn.calls())
		require.Equal(t, uint64(0), q.Metrics().Received)
		require.False(t, inv.Metrics().Enabled)
	})
}

// TestInvokerConcurrency checks that at most min(MaximumConcurrency, FunctionConcurrency) invocations run at
// once: 1 by default, as the Runtime Interface Emulator takes them.
func TestInvokerConcurrency(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		maximum, function, want int
	}{{0, 0, 1}, {5, 0, 1}, {0, 3, 3}, {2, 8, 2}} {
		var (
			mu        sync.Mutex
			now, most int
		)
		arrived, release := make(chan struct{}, 20), make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			now++
			most = max(most, now)
			mu.Unlock()
			arrived <- struct{}{}
			<-release
			mu.Lock()
			now--
			mu.Unlock()
		}))
		clock := fifoq.NewManualClock(time.Unix(0, 0))
		q, err := fifoq.New("jobs", fifoq.WithClock(clock))
		require.NoError(t, err)
		for range 20 {
			sendAll(t, q, "", "m")
		}
		inv := start(t, q, lambdaevents.Mapping{FunctionURL: srv.URL, BatchSize: 1, MaximumConcurrency: tc.maximum,
			FunctionConcurrency: tc.function}, lambdaevents.Options{})
		arrivals := 0
		for ; arrivals < tc.want; arrivals++ {
			await(t, arrived, "an invocation") // as many invocations under way as allowed
		}
		for range 20 {
			give(t, release, struct{}{}, "an invocation to end") // one ends; the next may start
			if arrivals < 20 {
				await(t, arrived, "the next invocation")
				arrivals++
			}
		}
		inv.stop(t)
		srv.Close()
		require.Equal(t, tc.want, most, "MaximumConcurrency %d, FunctionConcurrency %d", tc.maximum, tc.function)
		require.Equal(t, uint64(20), inv.Metrics().Invocations)
	}
}

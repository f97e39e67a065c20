package fifoqprom_test

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/fifoqprom"
	"github.com/fifoq/fifoq/sqsapi"
	"github.com/fifoq/fifoq/storage/storagetest"
)

// Tests of the request metrics (RequestCollector), the store's (WithStore), and promlint over every
// collector of the package (issue 16, item 7).

// rqServer returns a server whose requests c counts, with a queue "q", and a function that posts a
// query-protocol form to it and returns the status.
func rqServer(t *testing.T, c *fifoqprom.RequestCollector) (*sqsapi.Server, func(url.Values) int) {
	t.Helper()
	srv := sqsapi.NewServer(sqsapi.WithRequestObserver(c))
	_, err := srv.DeclareQueue("q", nil)
	require.NoError(t, err)
	post := func(form url.Values) int {
		resp, err := srv.HTTPClient().PostForm("http://fifoq.test/", form)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	return srv, post
}

const rqQueueURL = "http://fifoq.test/000000000000/q"

// The requests of a server, by action and code; unknown actions fold into one series; each request is in
// the duration histogram of its action.
func TestRequestCollector(t *testing.T) {
	t.Parallel()
	c := fifoqprom.NewRequestCollector()
	_, post := rqServer(t, c)
	for range 3 {
		require.Equal(t, 200, post(url.Values{"Action": {"SendMessage"}, "QueueUrl": {rqQueueURL}, "MessageBody": {"a"}}))
	}
	require.Equal(t, 400, post(url.Values{"Action": {"SendMessage"}, "QueueUrl": {rqQueueURL + "-missing"}, "MessageBody": {"a"}}))
	require.Equal(t, 200, post(url.Values{"Action": {"ReceiveMessage"}, "QueueUrl": {rqQueueURL}}))
	for _, bogus := range []string{"Bogus1", "Bogus2", "sendmessage"} {
		require.Equal(t, 400, post(url.Values{"Action": {bogus}}))
	}

	want := `
# HELP fifoq_requests_total SQS requests answered, by action (Unknown for an action the server does not serve) and error code ("none" when the request succeeded).
# TYPE fifoq_requests_total counter
fifoq_requests_total{action="ReceiveMessage",code="none"} 1
fifoq_requests_total{action="SendMessage",code="AWS.SimpleQueueService.NonExistentQueue"} 1
fifoq_requests_total{action="SendMessage",code="none"} 3
fifoq_requests_total{action="Unknown",code="InvalidAction"} 3
`
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want), "fifoq_requests_total"))

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	require.NoError(t, err)
	counts := map[string]uint64{}
	for _, mf := range mfs {
		if mf.GetName() != "fifoq_request_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			h := m.GetHistogram()
			counts[m.GetLabel()[0].GetValue()] = h.GetSampleCount()
			require.Len(t, h.GetBucket(), 16, "buckets")
			require.Equal(t, 25.0, h.GetBucket()[15].GetUpperBound(), "past the longest long poll")
		}
	}
	require.Equal(t, map[string]uint64{"SendMessage": 4, "ReceiveMessage": 1, "Unknown": 3}, counts,
		"requests in the duration histogram, by action")
}

// A long poll's duration is its wait: a 20 s receive lands past the 20 s bucket, a 5 s one in the 5 s one.
func TestRequestCollectorLongPoll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := fifoqprom.NewRequestCollector()
		_, post := rqServer(t, c)
		require.Equal(t, 200, post(url.Values{"Action": {"ReceiveMessage"}, "QueueUrl": {rqQueueURL}, "WaitTimeSeconds": {"20"}}))
		require.Equal(t, 200, post(url.Values{"Action": {"ReceiveMessage"}, "QueueUrl": {rqQueueURL}, "WaitTimeSeconds": {"5"}}))
		want := `
# HELP fifoq_request_duration_seconds Duration of the SQS requests answered, from their start to the end of their response, long polls' waits included, by action.
# TYPE fifoq_request_duration_seconds histogram
fifoq_request_duration_seconds_bucket{action="ReceiveMessage",le="0.0005"} 0
fifoq_request_duration_seconds_bucket{action="ReceiveMessage",le="0.001"} 0
fifoq_request_duration_seconds_bucket{action="ReceiveMessage",le="0.0025"} 0
fifoq_request_duration_seconds_bucket{action="ReceiveMessage",le="0.005"} 0
fifoq_request_duration_seconds_bucket{action="ReceiveMessage",le="0.01"} 0
fifoq_request_duration_seconds_bucket{action="ReceiveMessage",le="0.025"} 0
fifoq_request_duration_seconds_bucket{action="ReceiveMessage",le="0.05"} 0
fifoq_request_duration_seconds_bucket{action="ReceiveMessage",le="0.1"} 0
fifoq_request_duration_seconds_bucket{action="ReceiveMessage",le="0.25"} 0
fifoq_request_duration_seconds_bucket{action="ReceiveMessage",le="0.5"} 0
fifoq_request_duration_seconds_bucket{action="ReceiveMessage",le="1"} 0
fifoq_request_duration_seconds_bucket{action="ReceiveMessage",le="2.5"} 0
fifoq_request_duration_seconds_bucket{action="ReceiveMessage",le="5"} 1
fifoq_request_duration_seconds_bucket{action="ReceiveMessage",le="10"} 1
fifoq_request_duration_seconds_bucket{action="ReceiveMessage",le="20"} 2
fifoq_request_duration_seconds_bucket{action="ReceiveMessage",le="25"} 2
fifoq_request_duration_seconds_bucket{action="ReceiveMessage",le="+Inf"} 2
fifoq_request_duration_seconds_sum{action="ReceiveMessage"} 25
fifoq_request_duration_seconds_count{action="ReceiveMessage"} 2
`
		require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want), "fifoq_request_duration_seconds"))
	})
}

// Counting a request of a series that exists allocates nothing.
func TestRequestCollectorAllocs(t *testing.T) {
	if rqRace() {
		t.Skip("the race detector allocates on its own")
	}
	c := fifoqprom.NewRequestCollector()
	c.ObserveRequest("SendMessage", "", time.Millisecond)
	c.ObserveRequest("SendMessage", "InvalidParameterValue", time.Millisecond)
	n := testing.AllocsPerRun(1000, func() {
		c.ObserveRequest("SendMessage", "", time.Millisecond)
		c.ObserveRequest("SendMessage", "InvalidParameterValue", time.Millisecond)
	})
	require.Zero(t, n, "allocations per two observations")
}

func rqRace() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// rqStore returns a store over the tests' in-memory engine, and the engine, to fail it.
func rqStore(t *testing.T) (*fifoq.Store, *storagetest.Memory) {
	t.Helper()
	eng, err := storagetest.NewDisk().Open()
	require.NoError(t, err)
	st, err := fifoq.OpenStore(eng, "disk")
	require.NoError(t, err)
	return st, eng
}

// The store's metrics: syncs and size as the engine counts them, failed (0, then 1 once a commit failed).
// (Over Pebble, cmd/fifoq's tests scrape them from fifoq serve --data-dir.)
func TestCollectorStore(t *testing.T) {
	t.Parallel()
	st, eng := rqStore(t)
	q, err := fifoq.New("q", fifoq.WithStore(st))
	require.NoError(t, err)
	c := fifoqprom.NewCollector(fifoqprom.WithStore(st))
	want := func(failed int) string {
		return `
# HELP fifoq_store_failed 1 once a write or a sync of the store failed (a full disk): it refuses every change until it is opened again; 0 while it works.
# TYPE fifoq_store_failed gauge
fifoq_store_failed ` + string(rune('0'+failed)) + `
`
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	value := func(name string) float64 {
		t.Helper()
		mfs, err := reg.Gather()
		require.NoError(t, err)
		for _, mf := range mfs {
			if mf.GetName() == name {
				m := mf.GetMetric()[0]
				if m.GetCounter() != nil {
					return m.GetCounter().GetValue()
				}
				return m.GetGauge().GetValue()
			}
		}
		t.Fatalf("no %s", name)
		return 0
	}
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want(0)), "fifoq_store_failed"))
	syncs, size := value("fifoq_store_syncs_total"), value("fifoq_store_disk_bytes")
	_, err = q.Send(context.Background(), fifoq.Message{Body: "kept"})
	require.NoError(t, err)
	require.Greater(t, value("fifoq_store_syncs_total"), syncs, "a send syncs")
	require.Greater(t, value("fifoq_store_disk_bytes"), size, "a send stores a message")

	eng.FailNextCommit(errors.New("no space left on device"))
	_, err = q.Send(context.Background(), fifoq.Message{Body: "lost"})
	require.ErrorIs(t, err, fifoq.ErrStoreFailed)
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want(1)), "fifoq_store_failed"))
}

// Issue 16, item 7: every metric of the package, queues, consumer, store, requests and mappings, passes promlint.
func TestLintEveryCollector(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, src, dlq := ptQueues(t)
		st, _ := rqStore(t)
		c := fifoqprom.NewCollector(fifoqprom.WithQueues(func() []*fifoq.Queue { return []*fifoq.Queue{src, dlq} }),
			fifoqprom.WithStore(st))
		c.AddConsumer("orders", ptConsumer(t))
		rc := fifoqprom.NewRequestCollector()
		_, post := rqServer(t, rc)
		require.Equal(t, 200, post(url.Values{"Action": {"ListQueues"}}))
		require.Equal(t, 400, post(url.Values{"Action": {"Bogus"}}))
		mc := fifoqprom.NewMappingCollector(func() []fifoqprom.MappingMetrics { return []fifoqprom.MappingMetrics{mpMapping()} })
		for _, col := range []prometheus.Collector{c, rc, mc} {
			problems, err := testutil.CollectAndLint(col)
			require.NoError(t, err)
			require.Empty(t, problems)
		}
		require.Equal(t, 2*15+6+4+1+3, testutil.CollectAndCount(c), "series: 15 per queue, 6 outcomes, 4 consumer series, 1 histogram, 3 of the store")
		require.Equal(t, 2+2, testutil.CollectAndCount(rc), "two request series, two histograms")

		// One scheme: a counter counts messages, batches, invocations, syncs or requests, and says so before
		// _total.
		scheme := regexp.MustCompile(`^fifoq_((queue|consumer|mapping)_([a-z]+_)*(messages|batches|invocations)|store_syncs|requests)_total$`)
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(c, rc, mc)
		mfs, err := reg.Gather()
		require.NoError(t, err)
		counters := 0
		for _, mf := range mfs {
			require.True(t, strings.HasPrefix(mf.GetName(), "fifoq_"), mf.GetName())
			if mf.GetType().String() == "COUNTER" {
				counters++
				require.Regexp(t, scheme, mf.GetName(), "a counter's name")
			}
		}
		require.Equal(t, 11+4+1+1+4, counters, "counters: 11 of a queue, 4 of a consumer, 1 of the store, 1 of requests, 4 of a mapping")
	})
}

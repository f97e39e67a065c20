package fifoqprom_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/fifoqprom"
)

var ptStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// ptQueues returns a FIFO queue with a dead-letter queue on a manual clock, after some traffic: 3 sent, a
// duplicate, 3 received, 1 deleted, 1 moved to the dead-letter queue, 1 in flight, 1 delayed... see the
// expected exposition in TestCollectorExposition.
func ptQueues(t *testing.T) (clk *fifoq.ManualClock, src, dlq *fifoq.Queue) {
	t.Helper()
	ctx := context.Background()
	clk = fifoq.NewManualClock(ptStart)
	dlq, err := fifoq.New("pt-dlq.fifo", fifoq.WithClock(clk))
	require.NoError(t, err)
	src, err = fifoq.New("pt-src.fifo", fifoq.WithClock(clk), fifoq.WithContentBasedDeduplication(),
		fifoq.WithDeadLetterQueue(dlq, 1), fifoq.WithVisibilityTimeout(time.Minute))
	require.NoError(t, err)
	for _, m := range []fifoq.Message{
		{GroupID: "a", Body: "a1"}, {GroupID: "a", Body: "a1"}, {GroupID: "b", Body: "b1"}, {GroupID: "c", Body: "c1"},
	} {
		_, err := src.Send(ctx, m)
		require.NoError(t, err)
	}
	clk.Advance(90 * time.Second)
	ds, err := src.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10, VisibilityTimeout: 10 * time.Second})
	require.NoError(t, err)
	require.Len(t, ds, 3)
	require.NoError(t, src.Delete(ctx, ds[0].ReceiptHandle))                                         // a1
	require.NoError(t, src.ChangeVisibility(ctx, ds[1].ReceiptHandle, 0))                            // b1: visible, moves on the next receive
	ds, err = src.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 1, VisibilityTimeout: time.Minute}) // c1 still in flight
	require.NoError(t, err)
	require.Empty(t, ds, "b1 moved to the dead-letter queue")
	clk.Advance(30 * time.Second)
	return clk, src, dlq
}

// Issue 11, item 1: the exposition of a queue pair and a consumer, exactly, in the Prometheus text format.
func TestCollectorExposition(t *testing.T) {
	t.Parallel()
	_, src, dlq := ptQueues(t)
	c := fifoqprom.NewCollector()
	c.AddQueue(src)
	c.AddQueue(dlq)
	c.AddQueue(src) // once only
	want := `
# HELP fifoq_queue_dead_letter_moved_in_messages_total Messages moved into this queue from the queues whose dead-letter queue it is.
# TYPE fifoq_queue_dead_letter_moved_in_messages_total counter
fifoq_queue_dead_letter_moved_in_messages_total{queue="pt-dlq.fifo"} 1
fifoq_queue_dead_letter_moved_in_messages_total{queue="pt-src.fifo"} 0
# HELP fifoq_queue_dead_letter_moved_out_messages_total Messages moved from this queue to its dead-letter queue, past its maxReceiveCount.
# TYPE fifoq_queue_dead_letter_moved_out_messages_total counter
fifoq_queue_dead_letter_moved_out_messages_total{queue="pt-dlq.fifo"} 0
fifoq_queue_dead_letter_moved_out_messages_total{queue="pt-src.fifo"} 1
# HELP fifoq_queue_deleted_messages_total Messages deleted (NumberOfMessagesDeleted); deleting a message already gone is not counted.
# TYPE fifoq_queue_deleted_messages_total counter
fifoq_queue_deleted_messages_total{queue="pt-dlq.fifo"} 0
fifoq_queue_deleted_messages_total{queue="pt-src.fifo"} 1
# HELP fifoq_queue_deduplicated_messages_total Messages sent but not stored, because their deduplication id was accepted within the last 5 minutes.
# TYPE fifoq_queue_deduplicated_messages_total counter
fifoq_queue_deduplicated_messages_total{queue="pt-dlq.fifo"} 0
fifoq_queue_deduplicated_messages_total{queue="pt-src.fifo"} 1
# HELP fifoq_queue_expired_messages_total Messages dropped at the end of their retention period.
# TYPE fifoq_queue_expired_messages_total counter
fifoq_queue_expired_messages_total{queue="pt-dlq.fifo"} 0
fifoq_queue_expired_messages_total{queue="pt-src.fifo"} 0
# HELP fifoq_queue_messages Messages stored in the queue now, by state: visible (ApproximateNumberOfMessages; on a FIFO queue also those waiting behind an in-flight message of their group), in_flight (ApproximateNumberOfMessagesNotVisible), delayed (ApproximateNumberOfMessagesDelayed).
# TYPE fifoq_queue_messages gauge
fifoq_queue_messages{queue="pt-dlq.fifo",state="delayed"} 0
fifoq_queue_messages{queue="pt-dlq.fifo",state="in_flight"} 0
fifoq_queue_messages{queue="pt-dlq.fifo",state="visible"} 1
fifoq_queue_messages{queue="pt-src.fifo",state="delayed"} 0
fifoq_queue_messages{queue="pt-src.fifo",state="in_flight"} 0
fifoq_queue_messages{queue="pt-src.fifo",state="visible"} 1
# HELP fifoq_queue_oldest_message_age_seconds Age of the oldest message stored in the queue (ApproximateAgeOfOldestMessage); in a dead-letter queue counted from its move there; 0 when the queue is empty.
# TYPE fifoq_queue_oldest_message_age_seconds gauge
fifoq_queue_oldest_message_age_seconds{queue="pt-dlq.fifo"} 30
fifoq_queue_oldest_message_age_seconds{queue="pt-src.fifo"} 120
# HELP fifoq_queue_purged_messages_total Messages deleted by purges.
# TYPE fifoq_queue_purged_messages_total counter
fifoq_queue_purged_messages_total{queue="pt-dlq.fifo"} 0
fifoq_queue_purged_messages_total{queue="pt-src.fifo"} 0
# HELP fifoq_queue_received_messages_total Messages returned by receives (NumberOfMessagesReceived); a message received again counts again.
# TYPE fifoq_queue_received_messages_total counter
fifoq_queue_received_messages_total{queue="pt-dlq.fifo"} 0
fifoq_queue_received_messages_total{queue="pt-src.fifo"} 3
# HELP fifoq_queue_recovered_messages_total Messages found in the store when the queue was opened.
# TYPE fifoq_queue_recovered_messages_total counter
fifoq_queue_recovered_messages_total{queue="pt-dlq.fifo"} 0
fifoq_queue_recovered_messages_total{queue="pt-src.fifo"} 0
# HELP fifoq_queue_redrive_moved_in_messages_total Messages moved into this queue from a dead-letter queue by message move tasks.
# TYPE fifoq_queue_redrive_moved_in_messages_total counter
fifoq_queue_redrive_moved_in_messages_total{queue="pt-dlq.fifo"} 0
fifoq_queue_redrive_moved_in_messages_total{queue="pt-src.fifo"} 0
# HELP fifoq_queue_redrive_moved_out_messages_total Messages taken out of this dead-letter queue by message move tasks.
# TYPE fifoq_queue_redrive_moved_out_messages_total counter
fifoq_queue_redrive_moved_out_messages_total{queue="pt-dlq.fifo"} 0
fifoq_queue_redrive_moved_out_messages_total{queue="pt-src.fifo"} 0
# HELP fifoq_queue_sent_messages_total Messages stored by sends (NumberOfMessagesSent); sends suppressed by deduplication are not counted.
# TYPE fifoq_queue_sent_messages_total counter
fifoq_queue_sent_messages_total{queue="pt-dlq.fifo"} 0
fifoq_queue_sent_messages_total{queue="pt-src.fifo"} 3
`
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want)))
}

// ptConsumer runs a consumer over a queue of one message per outcome inside a bubble, and returns it.
func ptConsumer(t *testing.T) *fifoq.Consumer {
	t.Helper()
	q, err := fifoq.New("pt-consumer.fifo", fifoq.WithContentBasedDeduplication(), fifoq.WithVisibilityTimeout(12*time.Hour))
	require.NoError(t, err)
	for _, g := range []string{"success", "error", "panic", "timeout", "filtered"} {
		_, err := q.Send(t.Context(), fifoq.Message{GroupID: g, Body: g})
		require.NoError(t, err)
	}
	h := func(ctx context.Context, b []fifoq.Delivery) error {
		switch b[0].Body {
		case "success":
			time.Sleep(7 * time.Millisecond)
		case "error":
			time.Sleep(3 * time.Second)
			return errors.New("pt")
		case "panic":
			panic("pt")
		case "timeout":
			<-ctx.Done()
		}
		return nil
	}
	ctx, cancel := context.WithCancel(t.Context())
	var n atomic.Int32
	c, err := fifoq.NewConsumer(q, h, fifoq.ConsumerOptions{
		Batch:          fifoq.BatchOptions{Size: 1},
		MaxConcurrency: 1,
		HandlerTimeout: 20 * time.Minute,
		Filter:         func(d fifoq.Delivery) bool { return d.Body != "filtered" },
		OnBatch: func(fifoq.BatchReport) {
			if n.Add(1) == 5 {
				cancel()
			}
		},
	})
	require.NoError(t, err)
	require.NoError(t, c.Run(ctx))
	return c
}

// Issue 11, item 1: a consumer's batches by outcome, messages, in-flight gauge and handler duration
// histogram, exactly; with queues and consumers passing promlint.
func TestCollectorConsumerExposition(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := fifoqprom.NewCollector()
		c.AddConsumer("orders", ptConsumer(t))
		want := `
# HELP fifoq_consumer_batches_in_flight Batches the consumer is handling now.
# TYPE fifoq_consumer_batches_in_flight gauge
fifoq_consumer_batches_in_flight{consumer="orders",queue="pt-consumer.fifo"} 0
# HELP fifoq_consumer_batches_total Batches the consumer finished, by outcome: success, partial (batch item failures), error, panic, timeout, filtered (the filter deleted every message).
# TYPE fifoq_consumer_batches_total counter
fifoq_consumer_batches_total{consumer="orders",outcome="error",queue="pt-consumer.fifo"} 1
fifoq_consumer_batches_total{consumer="orders",outcome="filtered",queue="pt-consumer.fifo"} 1
fifoq_consumer_batches_total{consumer="orders",outcome="panic",queue="pt-consumer.fifo"} 1
fifoq_consumer_batches_total{consumer="orders",outcome="partial",queue="pt-consumer.fifo"} 0
fifoq_consumer_batches_total{consumer="orders",outcome="success",queue="pt-consumer.fifo"} 1
fifoq_consumer_batches_total{consumer="orders",outcome="timeout",queue="pt-consumer.fifo"} 1
# HELP fifoq_consumer_failed_messages_total Messages the consumer returned to the queue after its handler failed on them.
# TYPE fifoq_consumer_failed_messages_total counter
fifoq_consumer_failed_messages_total{consumer="orders",queue="pt-consumer.fifo"} 3
# HELP fifoq_consumer_filtered_messages_total Messages the consumer's filter rejected and deleted.
# TYPE fifoq_consumer_filtered_messages_total counter
fifoq_consumer_filtered_messages_total{consumer="orders",queue="pt-consumer.fifo"} 1
# HELP fifoq_consumer_handler_duration_seconds Duration of the consumer's handler calls, by the queue's clock.
# TYPE fifoq_consumer_handler_duration_seconds histogram
fifoq_consumer_handler_duration_seconds_bucket{consumer="orders",le="0.005",queue="pt-consumer.fifo"} 1
fifoq_consumer_handler_duration_seconds_bucket{consumer="orders",le="0.01",queue="pt-consumer.fifo"} 2
fifoq_consumer_handler_duration_seconds_bucket{consumer="orders",le="0.025",queue="pt-consumer.fifo"} 2
fifoq_consumer_handler_duration_seconds_bucket{consumer="orders",le="0.05",queue="pt-consumer.fifo"} 2
fifoq_consumer_handler_duration_seconds_bucket{consumer="orders",le="0.1",queue="pt-consumer.fifo"} 2
fifoq_consumer_handler_duration_seconds_bucket{consumer="orders",le="0.25",queue="pt-consumer.fifo"} 2
fifoq_consumer_handler_duration_seconds_bucket{consumer="orders",le="0.5",queue="pt-consumer.fifo"} 2
fifoq_consumer_handler_duration_seconds_bucket{consumer="orders",le="1",queue="pt-consumer.fifo"} 2
fifoq_consumer_handler_duration_seconds_bucket{consumer="orders",le="2.5",queue="pt-consumer.fifo"} 2
fifoq_consumer_handler_duration_seconds_bucket{consumer="orders",le="5",queue="pt-consumer.fifo"} 3
fifoq_consumer_handler_duration_seconds_bucket{consumer="orders",le="10",queue="pt-consumer.fifo"} 3
fifoq_consumer_handler_duration_seconds_bucket{consumer="orders",le="30",queue="pt-consumer.fifo"} 3
fifoq_consumer_handler_duration_seconds_bucket{consumer="orders",le="60",queue="pt-consumer.fifo"} 3
fifoq_consumer_handler_duration_seconds_bucket{consumer="orders",le="300",queue="pt-consumer.fifo"} 3
fifoq_consumer_handler_duration_seconds_bucket{consumer="orders",le="900",queue="pt-consumer.fifo"} 3
fifoq_consumer_handler_duration_seconds_bucket{consumer="orders",le="+Inf",queue="pt-consumer.fifo"} 4
fifoq_consumer_handler_duration_seconds_sum{consumer="orders",queue="pt-consumer.fifo"} 1203.007
fifoq_consumer_handler_duration_seconds_count{consumer="orders",queue="pt-consumer.fifo"} 4
# HELP fifoq_consumer_messages_total Messages in the batches the consumer finished, filtered ones included.
# TYPE fifoq_consumer_messages_total counter
fifoq_consumer_messages_total{consumer="orders",queue="pt-consumer.fifo"} 5
`
		require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want)))
	})
}

// Issue 11, item 1 (names follow Prometheus conventions): promlint finds nothing to say about any metric,
// queue or consumer.
func TestCollectorLint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, src, dlq := ptQueues(t)
		c := fifoqprom.NewCollector(fifoqprom.WithQueues(func() []*fifoq.Queue { return []*fifoq.Queue{src, dlq} }))
		c.AddConsumer("orders", ptConsumer(t))
		problems, err := testutil.CollectAndLint(c)
		require.NoError(t, err)
		require.Empty(t, problems)
		require.Equal(t, 2*(15)+6+4+1, testutil.CollectAndCount(c), "series: 15 per queue (3 states), 6 outcomes, 4 consumer series, 1 histogram")
	})
}

// Issue 11, item 1: the set of queues and consumers changes between scrapes: WithQueues is asked at each
// scrape, AddQueue and AddConsumer add, RemoveQueue and RemoveConsumer remove, a queue both added and
// listed counts once, and two different queues of one name are an error of the scrape, not a panic.
func TestCollectorDynamicSet(t *testing.T) {
	t.Parallel()
	newQ := func(name string) *fifoq.Queue {
		q, err := fifoq.New(name)
		require.NoError(t, err)
		return q
	}
	a, b := newQ("pt-a"), newQ("pt-b")
	var (
		mu     sync.Mutex
		listed []*fifoq.Queue
	)
	c := fifoqprom.NewCollector(fifoqprom.WithQueues(func() []*fifoq.Queue {
		mu.Lock()
		defer mu.Unlock()
		return append([]*fifoq.Queue{nil}, listed...)
	}))
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	queues := func() []string {
		t.Helper()
		mfs, err := reg.Gather()
		require.NoError(t, err)
		var names []string
		for _, mf := range mfs {
			if mf.GetName() != "fifoq_queue_sent_messages_total" {
				continue
			}
			for _, m := range mf.GetMetric() {
				names = append(names, m.GetLabel()[0].GetValue())
			}
		}
		return names
	}
	require.Empty(t, queues())
	mu.Lock()
	listed = []*fifoq.Queue{a}
	mu.Unlock()
	require.Equal(t, []string{"pt-a"}, queues(), "listed")
	c.AddQueue(b)
	c.AddQueue(a)
	require.Equal(t, []string{"pt-a", "pt-b"}, queues(), "added, and listed and added")
	c.RemoveQueue(a)
	c.RemoveQueue(b)
	require.Equal(t, []string{"pt-a"}, queues(), "still listed")

	c.AddQueue(newQ("pt-a"))
	_, err := reg.Gather()
	require.ErrorContains(t, err, "two queues named pt-a")

	mu.Lock()
	listed = nil
	mu.Unlock()
	c.AddConsumer("x", ptIdleConsumer(t, a))
	c.AddConsumer("y", ptIdleConsumer(t, a))
	c.RemoveConsumer("x")
	c.AddConsumer("\xff", ptIdleConsumer(t, a))
	_, err = reg.Gather()
	require.ErrorContains(t, err, "not UTF-8")
	c.RemoveConsumer("\xff")
	require.Equal(t, 1, testutil.CollectAndCount(c, "fifoq_consumer_batches_in_flight"), "only y")
}

func ptIdleConsumer(t *testing.T, q *fifoq.Queue) *fifoq.Consumer {
	t.Helper()
	c, err := fifoq.NewConsumer(q, func(context.Context, []fifoq.Delivery) error { return nil }, fifoq.ConsumerOptions{})
	require.NoError(t, err)
	return c
}

// Issue 11, item 1, under -race: scrapes while producers and consumers run on several queues, a consumer
// among them, and queues come and go. The producers wait for a scrape every 10 messages, so scrapes and
// traffic interleave however fast the machine. Every scrape succeeds, and after the run the counters add up.
func TestCollectorConcurrentScrape(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const queues, perProducer = 3, 300
	var qs []*fifoq.Queue
	for i := range queues {
		// The longest visibility timeout: a consumer that the machine stalls between a receive and its
		// delete still holds its messages, so none is handled twice and no delete finds its handle expired.
		q, err := fifoq.New(fmt.Sprintf("pt-conc-%d.fifo", i), fifoq.WithContentBasedDeduplication(),
			fifoq.WithVisibilityTimeout(12*time.Hour))
		require.NoError(t, err)
		qs = append(qs, q)
	}
	var handled sync.WaitGroup
	handled.Add(perProducer)
	cons, err := fifoq.NewConsumer(qs[0], func(_ context.Context, b []fifoq.Delivery) error {
		for range b {
			handled.Done()
		}
		return nil
	}, fifoq.ConsumerOptions{MaxConcurrency: 4})
	require.NoError(t, err)
	c := fifoqprom.NewCollector(fifoqprom.WithQueues(func() []*fifoq.Queue { return qs[1:] }))
	c.AddQueue(qs[0])
	c.AddConsumer("conc", cons)
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(c))

	errs := make(chan error, queues+2)
	turn := make(chan struct{}) // a scrape happened: a producer may send 10 more
	var workers, producers sync.WaitGroup
	workers.Go(func() { errs <- cons.Run(ctx) })
	for i, q := range qs {
		producers.Go(func() {
			for k := range perProducer {
				if k%10 == 0 {
					<-turn
				}
				m := fifoq.Message{GroupID: fmt.Sprint("g", k%7), Body: fmt.Sprint(i, "-", k)}
				if _, err := q.Send(ctx, m); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	workers.Go(func() { // a plain receiver on the last queue
		for ctx.Err() == nil {
			ds, err := qs[queues-1].Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10, WaitTime: time.Second})
			if err != nil {
				if ctx.Err() == nil {
					errs <- err
				}
				return
			}
			for _, d := range ds {
				if err := qs[queues-1].Delete(ctx, d.ReceiptHandle); err != nil {
					if ctx.Err() == nil { // not the end of the run, which can come between a receive and its delete
						errs <- err
					}
					return
				}
			}
		}
	})
	done := make(chan struct{})
	go func() {
		producers.Wait()
		handled.Wait()
		close(done)
	}()
	extra, err := fifoq.New("pt-conc-extra")
	require.NoError(t, err)
	scrapes := 0
	for stop := false; !stop; scrapes++ {
		if scrapes%2 == 0 {
			c.AddQueue(extra)
		} else {
			c.RemoveQueue(extra)
		}
		_, err := reg.Gather()
		require.NoError(t, err, "scrape %d", scrapes)
		select {
		case turn <- struct{}{}:
		case <-done:
			stop = true
		}
	}
	cancel()
	workers.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.GreaterOrEqual(t, scrapes, queues*perProducer/10, "a scrape for every 10 messages sent")
	require.Equal(t, float64(perProducer), testutil.ToFloat64(ptOne(t, c, "fifoq_consumer_messages_total")))
	for _, q := range qs {
		m := q.Metrics()
		require.Equal(t, uint64(perProducer), m.Sent, "%s", q.Name())
		require.Equal(t, m.Visible+m.InFlight+m.Delayed, int(m.Sent-m.Deleted), "%s: %+v", q.Name(), m)
	}
}

// ptOne is a collector of the one metric named name that c collects.
func ptOne(t *testing.T, c prometheus.Collector, name string) prometheus.Collector {
	t.Helper()
	ch := make(chan prometheus.Metric, 100)
	c.Collect(ch)
	close(ch)
	for m := range ch {
		if strings.Contains(m.Desc().String(), `"`+name+`"`) {
			return ptMetric{m}
		}
	}
	t.Fatalf("no metric %s", name)
	return nil
}

// ptMetric collects one metric.
type ptMetric struct{ m prometheus.Metric }

func (p ptMetric) Describe(ch chan<- *prometheus.Desc) { ch <- p.m.Desc() }
func (p ptMetric) Collect(ch chan<- prometheus.Metric) { ch <- p.m }

// WithNamedQueues labels each queue by its key, so two queues of one name (an sqsapi server's, in two
// regions) both get their series; a queue also added or listed by name is collected once, under its key.
func TestCollectorNamedQueues(t *testing.T) {
	t.Parallel()
	newQ := func(name string) *fifoq.Queue {
		q, err := fifoq.New(name)
		require.NoError(t, err)
		return q
	}
	here, there, plain := newQ("orders.fifo"), newQ("orders.fifo"), newQ("plain")
	named := map[string]*fifoq.Queue{"orders.fifo": here, "111111111111/eu-west-1/orders.fifo": there, "nil": nil}
	c := fifoqprom.NewCollector(fifoqprom.WithNamedQueues(func() map[string]*fifoq.Queue { return named }),
		fifoqprom.WithQueues(func() []*fifoq.Queue { return []*fifoq.Queue{there, plain} }))
	c.AddQueue(here)
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	mfs, err := reg.Gather()
	require.NoError(t, err)
	var labels []string
	for _, mf := range mfs {
		if mf.GetName() == "fifoq_queue_sent_messages_total" {
			for _, m := range mf.GetMetric() {
				labels = append(labels, m.GetLabel()[0].GetValue())
			}
		}
	}
	require.Equal(t, []string{"111111111111/eu-west-1/orders.fifo", "orders.fifo", "plain"}, labels)

	named["\xff"] = newQ("bad")
	_, err = reg.Gather()
	require.ErrorContains(t, err, `queue name "\xff" is not UTF-8`)
}

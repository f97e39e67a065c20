// Package fifoqprom exports the metrics of fifoq queues and consumers to Prometheus: a [Collector], built
// at each scrape from [fifoq.Queue.Metrics] and [fifoq.Consumer.Metrics]. It is a package of its own so
// that fifoq itself needs no Prometheus client.
//
// # Metrics
//
// Per queue, labelled queue (its name):
//
//	fifoq_queue_messages{state}                         gauge: stored now, by state: visible (ApproximateNumberOfMessages),
//	                                                    in_flight (...NotVisible), delayed (...Delayed)
//	fifoq_queue_oldest_message_age_seconds              gauge: ApproximateAgeOfOldestMessage; 0 when empty
//	fifoq_queue_sent_messages_total                     counter: stored by Send and SendBatch (NumberOfMessagesSent)
//	fifoq_queue_deduplicated_messages_total             counter: sends suppressed by deduplication
//	fifoq_queue_received_messages_total                 counter: returned by receives (NumberOfMessagesReceived)
//	fifoq_queue_deleted_messages_total                  counter: deleted (NumberOfMessagesDeleted)
//	fifoq_queue_expired_messages_total                  counter: dropped at the end of their retention
//	fifoq_queue_purged_messages_total                   counter: deleted by Purge
//	fifoq_queue_dead_letter_moved_out_messages_total    counter: moved from this queue to its dead-letter queue
//	fifoq_queue_dead_letter_moved_in_messages_total     counter: moved into this queue as a dead-letter queue
//	fifoq_queue_redrive_moved_out_messages_total        counter: taken out of this dead-letter queue by move tasks
//	fifoq_queue_redrive_moved_in_messages_total         counter: moved into this queue by move tasks
//	fifoq_queue_recovered_messages_total                counter: found in the store when the queue was opened
//
// Per consumer, labelled consumer (the name given to [Collector.AddConsumer]) and queue (its source's name,
// [fifoq.ConsumerMetrics.Queue]):
//
//	fifoq_consumer_batches_total{outcome}               counter: batches ended, by outcome: success, partial,
//	                                                    error, panic, timeout, filtered
//	fifoq_consumer_messages_total                       counter: messages in those batches
//	fifoq_consumer_failed_messages_total                counter: their messages returned to the queue
//	fifoq_consumer_filtered_messages_total              counter: their messages the filter deleted
//	fifoq_consumer_batches_in_flight                    gauge: batches being handled now
//	fifoq_consumer_handler_duration_seconds             histogram: handler calls, by the queue's clock; buckets
//	                                                    5ms..10s (Prometheus' defaults), 30s, 1m, 5m, 15m
//
// Of the store given with [WithStore] ([fifoq.Store.Health]), with no label:
//
//	fifoq_store_syncs_total                             counter: syncs of the store's log that succeeded
//	fifoq_store_failed                                  gauge: 1 once a write or a sync failed, after which the store
//	                                                    refuses every change until it is opened again; else 0
//	fifoq_store_disk_bytes                              gauge: size of the files in the store's directory
//
// Of the requests of an sqsapi server, from a [RequestCollector]:
//
//	fifoq_requests_total{action,code}                   counter: requests answered, by SQS action and error code
//	                                                    ("none" for success, "Canceled" when the client went away)
//	fifoq_request_duration_seconds{action}              histogram: their durations, long polls' waits included
//
// Of event source mappings to functions, from a [MappingCollector], labelled queue and function:
//
//	fifoq_mapping_invocations_total                     counter: invocations that reached the function
//	fifoq_mapping_messages_total                        counter: records in those invocations
//	fifoq_mapping_failed_invocations_total{kind}        counter: invocations that failed their whole batch, by kind
//	fifoq_mapping_reported_failed_messages_total        counter: batch item failures the function reported
//	fifoq_mapping_invocations_in_flight                 gauge: invocations under way now
//	fifoq_mapping_invocation_duration_seconds           histogram: durations of the invocations
//	fifoq_mapping_backoff_seconds                       gauge: the wait while the function is unreachable
//	fifoq_mapping_enabled                               gauge: 1 when the mapping polls, 0 when disabled
//
// Counters start at 0 when the queue, the consumer or the RequestCollector is created (or the queue or the
// store opened), so they reset when the process restarts, as Prometheus expects of counters.
//
// # Names
//
// Every name starts with fifoq_ and the subject (queue_, consumer_, store_, request, mapping_); a counter
// ends in _total, after its unit: fifoq_queue_<what happened>_messages_total counts messages by what happened
// to them, fifoq_consumer_batches_total batches, fifoq_mapping_failed_invocations_total invocations. The names pass promlint (testutil.CollectAndLint);
// docs/metrics.md lists the five that were renamed to follow this scheme.
//
// # Cost
//
// A scrape calls Metrics once per queue and once per consumer, and nothing else of them: a queue's Metrics
// takes its lock once, for O(1) work, as [fifoq.Queue.Stats] does, so a scrape delays a producer or a
// consumer of that queue no more than one Stats call would; a consumer's Metrics reads atomics only.
package fifoqprom

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/topic"
)

// A Collector is a prometheus.Collector of the metrics of fifoq queues and consumers (see the package
// documentation for the list). Queues come from [Collector.AddQueue] and from the functions given with
// [WithQueues] and [WithNamedQueues], consumers from [Collector.AddConsumer]; the sets can change between
// scrapes. A Collector is safe for concurrent use. Create one with [NewCollector] and register it, e.g. with
// prometheus.MustRegister.
type Collector struct {
	queueFuncs []func() []Queue          // set by NewCollector, then only read
	namedFuncs []func() map[string]Queue // the same
	store      *fifoq.Store              // the same

	mu        sync.Mutex // guards the fields below
	queues    []Queue
	consumers map[string]*fifoq.Consumer
}

// A Queue is what a Collector reads of a queue: *fifoq.Queue is one, and so is a catalogue's queue
// (catalog.Queue), whose Name is its name in its namespace.
type Queue interface {
	// Name is the queue's name, its label unless WithNamedQueues gives another.
	Name() string
	// Metrics returns the queue's metrics, as fifoq.Queue.Metrics does: in O(1), never blocking long.
	Metrics() fifoq.Metrics
}

// A Topic is what a TopicCollector reads of a topic: *topic.Topic is one, and so is a catalogue's topic
// (catalog.Topic).
type Topic interface {
	// Metrics returns the topic's metrics, as topic.Topic.Metrics does.
	Metrics() topic.Metrics
}

// some reports whether v is not the zero value of its type (a nil *fifoq.Queue), which the collectors
// skip.
func some[V comparable](v V) bool {
	var zero V
	return v != zero
}

// An Option configures a [Collector].
type Option func(*Collector)

// WithQueues makes the Collector call queues at each scrape and collect the queues it returns, along with
// those added by AddQueue: for a set of queues that changes, such as an sqsapi server's. It is called
// without the Collector's lock, from the scraping goroutine; nil entries are skipped. Given more than once,
// every function is called.
func WithQueues[Q interface {
	Queue
	comparable
}](queues func() []Q) Option {
	return func(c *Collector) {
		if queues == nil {
			return
		}
		c.queueFuncs = append(c.queueFuncs, func() []Queue {
			qs := queues()
			out := make([]Queue, 0, len(qs))
			for _, q := range qs {
				if some(q) {
					out = append(out, q)
				}
			}
			return out
		})
	}
}

// WithNamedQueues is WithQueues for queues whose names are not unique, such as those of an sqsapi server,
// which holds queues for several accounts and regions: each queue is collected under the key it has in the
// map queues returns (for a catalogue's queues, the names of catalog.Catalog.DisplayName: a queue's name in
// the default account and region, "account/region/name" in another) instead of its own name. A queue also
// given by WithQueues or AddQueue is collected once, under its key.
func WithNamedQueues[Q interface {
	Queue
	comparable
}](queues func() map[string]Q) Option {
	return func(c *Collector) {
		if queues == nil {
			return
		}
		c.namedFuncs = append(c.namedFuncs, func() map[string]Queue {
			qs := queues()
			out := make(map[string]Queue, len(qs))
			for name, q := range qs {
				if some(q) {
					out[name] = q
				}
			}
			return out
		})
	}
}

// WithStore makes the Collector collect the health of st at each scrape ([fifoq.Store.Health]): its syncs,
// whether it failed, and the size of its files. Given more than once, the last store is collected.
func WithStore(st *fifoq.Store) Option { return func(c *Collector) { c.store = st } }

// NewCollector returns a Collector of no queues and no consumers, but those the options give.
func NewCollector(opts ...Option) *Collector {
	c := &Collector{consumers: make(map[string]*fifoq.Consumer)}
	for _, o := range opts {
		o(c)
	}
	return c
}

// AddQueue makes the Collector collect q, under its name, until RemoveQueue. Adding a queue twice, or one
// that a WithQueues function also returns, collects it once. Two different queues of the same name make the
// scrape report an error for the second one, since their series would clash.
func (c *Collector) AddQueue(q Queue) {
	if q == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Contains(c.queues, q) {
		c.queues = append(c.queues, q)
	}
}

// RemoveQueue stops collecting q, if AddQueue added it. Its series disappear from the next scrape.
func (c *Collector) RemoveQueue(q Queue) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queues = slices.DeleteFunc(c.queues, func(x Queue) bool { return x == q })
}

// AddConsumer makes the Collector collect cons, labelled consumer=name and queue with the name of its
// source ([fifoq.ConsumerMetrics.Queue]), until RemoveConsumer(name). A consumer added under a name already
// used replaces the one there.
func (c *Collector) AddConsumer(name string, cons *fifoq.Consumer) {
	if cons == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.consumers[name] = cons
}

// RemoveConsumer stops collecting the consumer added under name. Its series disappear from the next scrape.
func (c *Collector) RemoveConsumer(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.consumers, name)
}

// Label names and values.
const (
	labelQueue    = "queue"
	labelConsumer = "consumer"
	labelState    = "state"
	labelOutcome  = "outcome"
)

// The descriptions of the metrics, in the order Describe sends them.
var (
	descMessages = prometheus.NewDesc("fifoq_queue_messages",
		"Messages stored in the queue now, by state: visible (ApproximateNumberOfMessages; on a FIFO queue also those waiting behind an in-flight message of their group), in_flight (ApproximateNumberOfMessagesNotVisible), delayed (ApproximateNumberOfMessagesDelayed).",
		[]string{labelQueue, labelState}, nil)
	descOldestAge = prometheus.NewDesc("fifoq_queue_oldest_message_age_seconds",
		"Age of the oldest message stored in the queue (ApproximateAgeOfOldestMessage); in a dead-letter queue counted from its move there; 0 when the queue is empty.",
		[]string{labelQueue}, nil)
	descSent = queueCounter("sent_messages_total",
		"Messages stored by sends (NumberOfMessagesSent); sends suppressed by deduplication are not counted.")
	descDuplicates = queueCounter("deduplicated_messages_total",
		"Messages sent but not stored, because their deduplication id was accepted within the last 5 minutes.")
	descReceived = queueCounter("received_messages_total",
		"Messages returned by receives (NumberOfMessagesReceived); a message received again counts again.")
	descDeleted = queueCounter("deleted_messages_total",
		"Messages deleted (NumberOfMessagesDeleted); deleting a message already gone is not counted.")
	descExpired = queueCounter("expired_messages_total",
		"Messages dropped at the end of their retention period.")
	descPurged = queueCounter("purged_messages_total",
		"Messages deleted by purges.")
	descDeadLettered = queueCounter("dead_letter_moved_out_messages_total",
		"Messages moved from this queue to its dead-letter queue, past its maxReceiveCount.")
	descDeadLetterArrivals = queueCounter("dead_letter_moved_in_messages_total",
		"Messages moved into this queue from the queues whose dead-letter queue it is.")
	descRedriven = queueCounter("redrive_moved_out_messages_total",
		"Messages taken out of this dead-letter queue by message move tasks.")
	descRedriveArrivals = queueCounter("redrive_moved_in_messages_total",
		"Messages moved into this queue from a dead-letter queue by message move tasks.")
	descRecovered = queueCounter("recovered_messages_total",
		"Messages found in the store when the queue was opened.")

	descBatches = prometheus.NewDesc("fifoq_consumer_batches_total",
		"Batches the consumer finished, by outcome: success, partial (batch item failures), error, panic, timeout, filtered (the filter deleted every message).",
		[]string{labelConsumer, labelQueue, labelOutcome}, nil)
	descConsumerMessages = consumerCounter("messages_total",
		"Messages in the batches the consumer finished, filtered ones included.")
	descConsumerFailed = consumerCounter("failed_messages_total",
		"Messages the consumer returned to the queue after its handler failed on them.")
	descConsumerFiltered = consumerCounter("filtered_messages_total",
		"Messages the consumer's filter rejected and deleted.")
	descInFlight = prometheus.NewDesc("fifoq_consumer_batches_in_flight",
		"Batches the consumer is handling now.",
		[]string{labelConsumer, labelQueue}, nil)
	descHandlerDuration = prometheus.NewDesc("fifoq_consumer_handler_duration_seconds",
		"Duration of the consumer's handler calls, by the queue's clock.",
		[]string{labelConsumer, labelQueue}, nil)

	descStoreSyncs = prometheus.NewDesc("fifoq_store_syncs_total",
		"Syncs of the store's log to disk that succeeded since it was opened; concurrent changes share a sync.",
		nil, nil)
	descStoreFailed = prometheus.NewDesc("fifoq_store_failed",
		"1 once a write or a sync of the store failed (a full disk): it refuses every change until it is opened again; 0 while it works.",
		nil, nil)
	descStoreDiskBytes = prometheus.NewDesc("fifoq_store_disk_bytes",
		"Size of the files in the store's directory.",
		nil, nil)

	allDescs = []*prometheus.Desc{
		descMessages, descOldestAge, descSent, descDuplicates, descReceived, descDeleted, descExpired,
		descPurged, descDeadLettered, descDeadLetterArrivals, descRedriven, descRedriveArrivals, descRecovered,
		descBatches, descConsumerMessages, descConsumerFailed, descConsumerFiltered, descInFlight,
		descHandlerDuration, descStoreSyncs, descStoreFailed, descStoreDiskBytes,
	}
)

func queueCounter(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("fifoq_queue_"+name, help, []string{labelQueue}, nil)
}

func consumerCounter(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("fifoq_consumer_"+name, help, []string{labelConsumer, labelQueue}, nil)
}

// Describe sends the descriptions of every metric the Collector may collect.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

// Collect sends the metrics of every queue and consumer, each read with one Metrics call. The Collector's
// lock is held only to copy its lists: no queue's lock is taken under it.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	queues := slices.Clone(c.queues)
	type named struct {
		name string
		c    *fifoq.Consumer
	}
	consumers := make([]named, 0, len(c.consumers))
	for name, cons := range c.consumers {
		consumers = append(consumers, named{name, cons})
	}
	c.mu.Unlock()
	for _, f := range c.queueFuncs {
		queues = append(queues, f()...)
	}

	seen := make(map[string]Queue, len(queues)) // by label
	done := make(map[Queue]bool, len(queues))
	collect := func(name string, q Queue) {
		if q == nil || done[q] {
			return
		}
		if !utf8.ValidString(name) { // a label value must be UTF-8: MustNewConstMetric would panic
			ch <- prometheus.NewInvalidMetric(descMessages, fmt.Errorf("fifoqprom: queue name %q is not UTF-8", name))
			return
		}
		if first, ok := seen[name]; ok && first != q {
			ch <- prometheus.NewInvalidMetric(descMessages,
				fmt.Errorf("fifoqprom: two queues named %s: the second is not collected", name))
			return
		}
		seen[name], done[q] = q, true
		collectQueue(ch, name, q.Metrics())
	}
	for _, f := range c.namedFuncs {
		named := f()
		for _, name := range slices.Sorted(maps.Keys(named)) {
			collect(name, named[name])
		}
	}
	for _, q := range queues {
		if q != nil {
			collect(q.Name(), q)
		}
	}
	for _, n := range consumers {
		if !utf8.ValidString(n.name) { // a label value must be UTF-8: MustNewConstMetric would panic
			ch <- prometheus.NewInvalidMetric(descBatches, fmt.Errorf("fifoqprom: consumer name %q is not UTF-8", n.name))
			continue
		}
		m := n.c.Metrics()
		if !utf8.ValidString(m.Queue) {
			ch <- prometheus.NewInvalidMetric(descBatches, fmt.Errorf("fifoqprom: queue name %q of consumer %s is not UTF-8", m.Queue, n.name))
			continue
		}
		collectConsumer(ch, n.name, m)
	}
	if c.store != nil {
		collectStore(ch, c.store.Health())
	}
}

func collectStore(ch chan<- prometheus.Metric, h fifoq.StoreHealth) {
	ch <- prometheus.MustNewConstMetric(descStoreSyncs, prometheus.CounterValue, float64(h.Syncs))
	failed := 0.0
	if h.Err != nil {
		failed = 1
	}
	ch <- prometheus.MustNewConstMetric(descStoreFailed, prometheus.GaugeValue, failed)
	if h.DiskBytes >= 0 {
		ch <- prometheus.MustNewConstMetric(descStoreDiskBytes, prometheus.GaugeValue, float64(h.DiskBytes))
	}
}

func collectQueue(ch chan<- prometheus.Metric, name string, m fifoq.Metrics) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), name)
	}
	gauge(descMessages, float64(m.Visible), name, "visible")
	gauge(descMessages, float64(m.InFlight), name, "in_flight")
	gauge(descMessages, float64(m.Delayed), name, "delayed")
	gauge(descOldestAge, m.OldestAge.Seconds(), name)
	counter(descSent, m.Sent)
	counter(descDuplicates, m.Duplicates)
	counter(descReceived, m.Received)
	counter(descDeleted, m.Deleted)
	counter(descExpired, m.Expired)
	counter(descPurged, m.Purged)
	counter(descDeadLettered, m.DeadLettered)
	counter(descDeadLetterArrivals, m.DeadLetterArrivals)
	counter(descRedriven, m.Redriven)
	counter(descRedriveArrivals, m.RedriveArrivals)
	counter(descRecovered, m.Recovered)
}

func collectConsumer(ch chan<- prometheus.Metric, name string, m fifoq.ConsumerMetrics) {
	counter := func(d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), name, m.Queue)
	}
	for o, n := range m.Batches {
		ch <- prometheus.MustNewConstMetric(descBatches, prometheus.CounterValue, float64(n), name, m.Queue, o.String())
	}
	counter(descConsumerMessages, m.Messages)
	counter(descConsumerFailed, m.Failed)
	counter(descConsumerFiltered, m.Filtered)
	ch <- prometheus.MustNewConstMetric(descInFlight, prometheus.GaugeValue, float64(m.InFlight), name, m.Queue)

	h := m.HandlerDuration
	buckets := make(map[float64]uint64, len(h.Bounds))
	var cum uint64
	for i, b := range h.Bounds {
		cum += h.Counts[i]
		buckets[b.Seconds()] = cum
	}
	ch <- prometheus.MustNewConstHistogram(descHandlerDuration, h.Count, h.Sum.Seconds(), buckets, name, m.Queue)
}

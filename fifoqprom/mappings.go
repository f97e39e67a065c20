package fifoqprom

import (
	"fmt"
	"maps"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fifoq/fifoq"
)

// MappingMetrics are the metrics of one event source mapping from a queue to a function (package
// lambdaevents' Invoker, whose Metrics give every field but the labels), as a [MappingCollector] exports
// them. They are plain values, so that this package needs nothing of lambdaevents (nor its dependency on
// aws-lambda-go): the program that runs the mappings fills them in.
type MappingMetrics struct {
	// Queue is the queue's label: its name, as the queue's own metrics are labelled (for an sqsapi server,
	// the name catalog.Catalog.NamedQueues gives it). Function is the function's label: its URL, without a password
	// (url.URL.Redacted), or another name of the function. A mapping is known by the two together, as AWS
	// allows one mapping of a queue to a function; two mappings with the same two labels make the scrape
	// report an error for the second.
	Queue, Function string
	// Enabled is whether the mapping polls its queue.
	Enabled bool
	// Invocations counts the invocations that reached the function (answered, or timed out).
	Invocations uint64
	// Records counts the records (messages) of those invocations.
	Records uint64
	// Errors counts the invocations that failed their whole batch, by kind: status, function, response,
	// timeout and unreachable for lambdaevents (lambdaevents.ErrorKind.String). Each key is a series; the
	// kinds are a fixed set, so the series are bounded.
	Errors map[string]uint64
	// ItemFailures counts the batch item failures the function reported.
	ItemFailures uint64
	// InFlight is the number of invocations under way now.
	InFlight int
	// Duration is the distribution of the durations of the invocations counted in Invocations.
	Duration fifoq.Histogram
	// Backoff is how long the mapping waits before it polls again, while its function is unreachable; 0
	// otherwise.
	Backoff time.Duration
}

// A MappingCollector is a prometheus.Collector of the metrics of event source mappings, each labelled queue
// and function (see [MappingMetrics]):
//
//	fifoq_mapping_invocations_total                     counter: invocations that reached the function, answered or
//	                                                    timed out (Lambda's Invocations)
//	fifoq_mapping_messages_total                        counter: records in those invocations
//	fifoq_mapping_failed_invocations_total{kind}        counter: invocations that failed their whole batch, by kind:
//	                                                    status, function, response, timeout (function errors, Lambda's
//	                                                    Errors), unreachable (the function could not be reached)
//	fifoq_mapping_reported_failed_messages_total        counter: batch item failures the function reported
//	fifoq_mapping_invocations_in_flight                 gauge: invocations under way now
//	fifoq_mapping_invocation_duration_seconds           histogram: durations of the invocations counted in
//	                                                    fifoq_mapping_invocations_total; buckets 5ms..10s, 30s, 1m,
//	                                                    5m, 15m
//	fifoq_mapping_backoff_seconds                       gauge: the wait before the next poll while the function is
//	                                                    unreachable; 0 otherwise
//	fifoq_mapping_enabled                               gauge: 1 when the mapping polls its queue, 0 when it is disabled
//
// The mappings come from a function called at each scrape, so they may change between scrapes. A
// MappingCollector is safe for concurrent use; create one with [NewMappingCollector].
type MappingCollector struct {
	mappings func() []MappingMetrics
}

// NewMappingCollector returns a MappingCollector of the mappings that mappings returns, called at each scrape
// from the scraping goroutine.
func NewMappingCollector(mappings func() []MappingMetrics) *MappingCollector {
	return &MappingCollector{mappings: mappings}
}

// The label names of a mapping's metrics.
const (
	labelFunction = "function"
	labelKind     = "kind"
)

var (
	mappingLabels = []string{labelQueue, labelFunction}

	descMappingInvocations = prometheus.NewDesc("fifoq_mapping_invocations_total",
		"Invocations of the function by the event source mapping that reached it: answered, or timed out (Lambda's Invocations).",
		mappingLabels, nil)
	descMappingMessages = prometheus.NewDesc("fifoq_mapping_messages_total",
		"Records (messages) in the invocations counted by fifoq_mapping_invocations_total.",
		mappingLabels, nil)
	descMappingFailed = prometheus.NewDesc("fifoq_mapping_failed_invocations_total",
		"Invocations that failed their whole batch, by kind: status (a status outside 2xx), function (a function error), response (an answer that cannot be read), timeout (no answer within the function timeout), unreachable (the function could not be reached; not counted as invocations).",
		[]string{labelQueue, labelFunction, labelKind}, nil)
	descMappingItemFailures = prometheus.NewDesc("fifoq_mapping_reported_failed_messages_total",
		"Batch item failures the function reported (ReportBatchItemFailures): the messages it named as failed.",
		mappingLabels, nil)
	descMappingInFlight = prometheus.NewDesc("fifoq_mapping_invocations_in_flight",
		"Invocations of the function by the event source mapping under way now.",
		mappingLabels, nil)
	descMappingDuration = prometheus.NewDesc("fifoq_mapping_invocation_duration_seconds",
		"Duration of the invocations counted by fifoq_mapping_invocations_total, from the request to the end of the answer or the timeout.",
		mappingLabels, nil)
	descMappingBackoff = prometheus.NewDesc("fifoq_mapping_backoff_seconds",
		"How long the event source mapping waits before it polls again, while its function is unreachable; 0 while it is reachable.",
		mappingLabels, nil)
	descMappingEnabled = prometheus.NewDesc("fifoq_mapping_enabled",
		"1 when the event source mapping polls its queue, 0 when it is disabled.",
		mappingLabels, nil)

	mappingDescs = []*prometheus.Desc{
		descMappingInvocations, descMappingMessages, descMappingFailed, descMappingItemFailures,
		descMappingInFlight, descMappingDuration, descMappingBackoff, descMappingEnabled,
	}
)

// Describe sends the descriptions of every metric the MappingCollector may collect.
func (c *MappingCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range mappingDescs {
		ch <- d
	}
}

// Collect sends the metrics of every mapping that the function given to NewMappingCollector returns.
func (c *MappingCollector) Collect(ch chan<- prometheus.Metric) {
	if c.mappings == nil {
		return
	}
	type key struct{ queue, function string }
	seen := make(map[key]bool)
	for _, m := range c.mappings() {
		switch k := (key{m.Queue, m.Function}); {
		case !utf8.ValidString(m.Queue) || !utf8.ValidString(m.Function):
			ch <- prometheus.NewInvalidMetric(descMappingInvocations,
				fmt.Errorf("fifoqprom: mapping of queue %q to function %q: a label is not UTF-8", m.Queue, m.Function))
		case seen[k]:
			ch <- prometheus.NewInvalidMetric(descMappingInvocations,
				fmt.Errorf("fifoqprom: two mappings of queue %s to function %s: the second is not collected", m.Queue, m.Function))
		default:
			seen[k] = true
			collectMapping(ch, &m)
		}
	}
}

func collectMapping(ch chan<- prometheus.Metric, m *MappingMetrics) {
	labels := []string{m.Queue, m.Function}
	counter := func(d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter(descMappingInvocations, m.Invocations)
	counter(descMappingMessages, m.Records)
	for _, kind := range slices.Sorted(maps.Keys(m.Errors)) {
		if !utf8.ValidString(kind) {
			continue
		}
		ch <- prometheus.MustNewConstMetric(descMappingFailed, prometheus.CounterValue, float64(m.Errors[kind]),
			m.Queue, m.Function, kind)
	}
	counter(descMappingItemFailures, m.ItemFailures)
	gauge(descMappingInFlight, float64(m.InFlight))
	gauge(descMappingBackoff, m.Backoff.Seconds())
	enabled := 0.0
	if m.Enabled {
		enabled = 1
	}
	gauge(descMappingEnabled, enabled)

	h := m.Duration
	buckets := make(map[float64]uint64, len(h.Bounds))
	var cum uint64
	for i, b := range h.Bounds {
		if i < len(h.Counts) {
			cum += h.Counts[i]
		}
		buckets[b.Seconds()] = cum
	}
	ch <- prometheus.MustNewConstHistogram(descMappingDuration, h.Count, h.Sum.Seconds(), buckets, labels...)
}

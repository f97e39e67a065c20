package fifoq

import (
	"slices"
	"sync/atomic"
	"time"
)

// The metrics of a Consumer.

// ConsumerMetrics are what a [Consumer] reports for monitoring, from [Consumer.Metrics]: counters since the
// Consumer was created, and the batches it is handling now. They are those of a Lambda function behind an
// event source mapping (Invocations, Errors, Duration, ConcurrentExecutions). Package fifoqprom exports them
// to Prometheus.
type ConsumerMetrics struct {
	// Queue is the name of the Consumer's source, if the source has a Name method, as a *Queue has; ""
	// otherwise. Package fifoqprom labels the Consumer's metrics with it.
	Queue string
	// Batches counts the batches that ended, by outcome; every Outcome is a key, 0 included.
	Batches map[Outcome]uint64
	// Messages counts the messages of those batches, filtered ones included.
	Messages uint64
	// Failed counts their messages returned to the queue after the handler failed on them.
	Failed uint64
	// Filtered counts their messages the filter rejected and deleted.
	Filtered uint64
	// InFlight is the number of batches being handled now: from their receive until they are settled.
	InFlight int
	// HandlerDuration is the distribution of the handler calls' durations, by the queue's clock (as
	// [BatchReport.Duration]); batches the filter emptied, on which the handler did not run, are not in it.
	HandlerDuration Histogram
}

// A Histogram is a distribution of durations in fixed buckets.
type Histogram struct {
	// Bounds are the upper bounds of the buckets, ascending. For handler durations they are Prometheus'
	// default buckets, 5ms to 10s, then 30s, 1m, 5m and 15m, the longest a Lambda function runs.
	Bounds []time.Duration
	// Counts has one count per bucket, and one more for the durations above the last bound: Counts[i]
	// counts the durations d with Bounds[i-1] < d <= Bounds[i]. It is not cumulative: Prometheus' bucket le=Bounds[i] is the sum of Counts[:i+1].
	Counts []uint64
	// Count is the number of durations observed: the sum of Counts.
	Count uint64
	// Sum is the sum of the durations observed.
	Sum time.Duration
}

// handlerDurationBounds are the buckets of ConsumerMetrics.HandlerDuration.
var handlerDurationBounds = [...]time.Duration{
	5 * time.Millisecond, 10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
	30 * time.Second, time.Minute, 5 * time.Minute, 15 * time.Minute,
}

// numOutcomes sizes arrays indexed by Outcome (index 0 unused).
const numOutcomes = int(OutcomeFiltered) + 1

// consumerCounters are a Consumer's metrics as it keeps them: atomics, shared with no queue's lock. Each
// field is exact on its own; a Metrics call reading them while a batch ends may see some of its counts
// and not others yet.
type consumerCounters struct {
	batches  [numOutcomes]atomic.Uint64
	messages atomic.Uint64
	failed   atomic.Uint64
	filtered atomic.Uint64
	inFlight atomic.Int64
	buckets  [len(handlerDurationBounds) + 1]atomic.Uint64
	sum      atomic.Int64 // nanoseconds
}

// observe records a handler call of duration d.
func (k *consumerCounters) observe(d time.Duration) {
	i, _ := slices.BinarySearch(handlerDurationBounds[:], d) // the first bound >= d: d <= bound
	k.buckets[i].Add(1)
	k.sum.Add(int64(d))
}

// ended records a batch that ended as r says.
func (k *consumerCounters) ended(r *BatchReport) {
	k.messages.Add(uint64(r.Size))
	k.failed.Add(uint64(len(r.Failed)))
	k.filtered.Add(uint64(r.Filtered))
	if int(r.Outcome) < numOutcomes {
		k.batches[r.Outcome].Add(1)
	}
}

// Metrics returns the Consumer's metrics as of now. It reads atomics only: it takes no lock, and a scrape
// never delays a batch.
func (c *Consumer) Metrics() ConsumerMetrics {
	k := &c.counters
	m := ConsumerMetrics{
		Queue:    c.queue,
		Batches:  make(map[Outcome]uint64, numOutcomes-1),
		Messages: k.messages.Load(),
		Failed:   k.failed.Load(),
		Filtered: k.filtered.Load(),
		InFlight: int(k.inFlight.Load()),
		HandlerDuration: Histogram{
			Bounds: slices.Clone(handlerDurationBounds[:]),
			Counts: make([]uint64, len(k.buckets)),
			Sum:    time.Duration(k.sum.Load()),
		},
	}
	for o := OutcomeSuccess; int(o) < numOutcomes; o++ {
		m.Batches[o] = k.batches[o].Load()
	}
	for i := range k.buckets {
		n := k.buckets[i].Load()
		m.HandlerDuration.Counts[i] = n
		m.HandlerDuration.Count += n
	}
	return m
}

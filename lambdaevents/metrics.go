package lambdaevents

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/fifoq/fifoq"
)

// Metrics are what an [Invoker] reports for monitoring, from [Invoker.Metrics]: counters since the Invoker
// was created, and its state now. They are a Lambda function's metrics behind an event source mapping
// (Invocations, Errors, Duration, ConcurrentExecutions), with the errors split by kind and the batch item
// failures counted. They are plain values, so that an exporter (package fifoqprom, say) needs nothing of
// this package but them; [Invoker.Consumer] gives the metrics of the batches too (fifoq.ConsumerMetrics).
type Metrics struct {
	// Queue is the name of the queue (the source's Name, as a *fifoq.Queue has; "" for a source without
	// one); FunctionURL is where the batches go. A mapping is known by the two together: AWS allows one
	// mapping of a queue to a function.
	Queue, FunctionURL string
	// Enabled is the mapping's Enabled.
	Enabled bool
	// Invocations counts the invocations that reached the function: those it answered, and those that timed
	// out. As Lambda's Invocations, it counts the ones that failed, and not those that could not reach the
	// function (Errors[ErrorUnreachable]).
	Invocations uint64
	// Records counts the records of those invocations.
	Records uint64
	// Errors counts the invocations that failed their whole batch, by kind (every ErrorKind is a key, 0
	// included). All but ErrorUnreachable are function errors, and counted in Invocations too.
	Errors map[ErrorKind]uint64
	// ItemFailures counts the batch item failures the function reported in the answers the mapping took
	// (with ReportBatchItemFailures): the messages it named, not the later messages of their FIFO groups
	// that failed with them.
	ItemFailures uint64
	// InFlight is the number of invocations under way now.
	InFlight int
	// Duration is the distribution of the durations of the invocations counted in Invocations, from the
	// request to the end of the answer (or the timeout), by the queue's clock.
	Duration fifoq.Histogram
	// Backoff is how long the mapping waits before it polls again after a failure to reach the function,
	// while it is backing off (see Invoker); 0 while the function is reachable.
	Backoff time.Duration
}

// durationBounds are the buckets of Metrics.Duration: those of fifoq.ConsumerMetrics.HandlerDuration,
// Prometheus' default buckets, 5ms to 10s, then 30s, 1m, 5m and 15m, the longest a Lambda function runs.
var durationBounds = [...]time.Duration{
	5 * time.Millisecond, 10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
	30 * time.Second, time.Minute, 5 * time.Minute, 15 * time.Minute,
}

// counters are an Invoker's metrics as it keeps them: atomics. Each is exact on its own; Metrics may see an
// invocation that ends meanwhile in some and not yet in others.
type counters struct {
	invocations  atomic.Uint64
	records      atomic.Uint64
	errors       [numErrorKinds]atomic.Uint64
	itemFailures atomic.Uint64
	inFlight     atomic.Int64
	buckets      [len(durationBounds) + 1]atomic.Uint64
	sum          atomic.Int64 // nanoseconds
}

// invoked counts an invocation that reached the function, with n records, taking d.
func (k *counters) invoked(n int, d time.Duration) {
	k.invocations.Add(1)
	k.records.Add(uint64(n))
	i, _ := slices.BinarySearch(durationBounds[:], d)
	k.buckets[i].Add(1)
	k.sum.Add(int64(d))
}

// Metrics returns the Invoker's metrics as of now. It reads atomics, and takes the backoff's lock once.
func (i *Invoker) Metrics() Metrics {
	k := &i.counters
	m := Metrics{
		Queue:        i.queue,
		FunctionURL:  i.m.FunctionURL,
		Enabled:      i.m.enabled(),
		Invocations:  k.invocations.Load(),
		Records:      k.records.Load(),
		Errors:       make(map[ErrorKind]uint64, numErrorKinds-1),
		ItemFailures: k.itemFailures.Load(),
		InFlight:     int(k.inFlight.Load()),
		Duration: fifoq.Histogram{
			Bounds: slices.Clone(durationBounds[:]),
			Counts: make([]uint64, len(k.buckets)),
			Sum:    time.Duration(k.sum.Load()),
		},
		Backoff: i.gate.state(),
	}
	for kind := ErrorStatus; int(kind) < numErrorKinds; kind++ {
		m.Errors[kind] = k.errors[kind].Load()
	}
	for b := range k.buckets {
		n := k.buckets[b].Load()
		m.Duration.Counts[b] = n
		m.Duration.Count += n
	}
	return m
}

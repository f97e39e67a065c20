package fifoq

import (
	"slices"
	"sync/atomic"
	"time"
)

// Metrics are what a queue reports for monitoring, from [Queue.Metrics]: its message counts and the age of
// its oldest message now, and counters of what happened to its messages since it was created (or opened
// from its store). They are the queue's CloudWatch metrics, exact where SQS's are approximate. Package
// fifoqprom exports them to Prometheus.
type Metrics struct {
	Stats // the messages stored now: ApproximateNumberOfMessages, ...NotVisible, ...Delayed
	// OldestAge is ApproximateAgeOfOldestMessage: how long the oldest stored message (visible, in flight
	// or delayed) has been in the queue; 0 when the queue is empty. A message moved into a dead-letter queue
	// counts from its move, as on SQS, not from its original send. After a restart a message moved into a
	// standard dead-letter queue counts from its original send, since the store keeps no time of the move.
	OldestAge time.Duration
	// Counters are the queue's counts since it was created or opened.
	Counters
}

// Counters count what happened to a queue's messages since the queue was created, or opened from its
// store. They only grow, by one per message: a batch of ten counts ten. The counts of the queue's [Stats]
// follow from them:
//
//	Visible + InFlight + Delayed = Recovered + Sent + DeadLetterArrivals + RedriveArrivals
//	                             - Deleted - Expired - Purged - DeadLettered - Redriven
type Counters struct {
	// Sent counts the messages Send and SendBatch stored (NumberOfMessagesSent). A send that deduplication
	// suppressed counts in Duplicates instead.
	Sent uint64
	// Duplicates counts the sends a FIFO queue accepted but did not store, because their deduplication id
	// was accepted within the last 5 minutes.
	Duplicates uint64
	// Received counts the messages Receive returned (NumberOfMessagesReceived), to a Batcher and a Consumer
	// too; a message received again after its visibility timeout counts again, as does a retried receive
	// of a FIFO queue returning the same messages under a receive request attempt id.
	Received uint64
	// Deleted counts the messages Delete and DeleteBatch deleted (NumberOfMessagesDeleted). Deleting a
	// message that is already gone does not count.
	Deleted uint64
	// Expired counts the messages dropped at the end of their retention period.
	Expired uint64
	// Purged counts the messages Purge deleted.
	Purged uint64
	// DeadLettered counts the messages moved from this queue to its dead-letter queue, past its
	// maxReceiveCount.
	DeadLettered uint64
	// DeadLetterArrivals counts the messages moved into this queue, as the dead-letter queue of others.
	// SQS does not count them as sent, and neither does fifoq.
	DeadLetterArrivals uint64
	// Redriven counts the messages move tasks took out of this dead-letter queue ([Queue.StartMoveTask]).
	Redriven uint64
	// RedriveArrivals counts the messages move tasks moved into this queue, from a dead-letter queue.
	RedriveArrivals uint64
	// Recovered counts the messages the queue found in its store when it was opened: 0 for a queue in
	// memory.
	Recovered uint64
}

// Metrics returns the queue's metrics, exact as of now. Like [Queue.Stats] it takes the queue's lock once, in
// O(1) (plus whatever has come due, as every call), so it may be called as often as a scraper likes.
func (q *Queue) Metrics() Metrics {
	now := q.lock()
	m := Metrics{Stats: q.stats, Counters: q.counters}
	if h := q.all.head; h != nil {
		m.OldestAge = max(now-q.arrivedAt(h), 0)
	}
	q.unlock()
	return m
}

// arrivedAt is when m came into this queue: its send, or its move here. A message moved into a FIFO
// dead-letter queue gets the time of its move as its SentAt; one moved into a standard dead-letter queue
// keeps its original SentAt, and its origin has the time of the move. Since q.all holds messages in arrival
// order, its head is the oldest by this measure.
func (q *Queue) arrivedAt(m *message) tick {
	if q.expiresOutOfOrder(m) {
		return q.origins[m.seq].arrivedAt
	}
	return m.sentAt
}

// countSendLocked counts a producer's send: stored, or suppressed as a duplicate.
func (q *Queue) countSendLocked(dup bool) {
	if dup {
		q.counters.Duplicates++
	} else {
		q.counters.Sent++
	}
}

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

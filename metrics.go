package fifoq

import (
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
	// Received counts the messages Receive and ReceiveMany returned (NumberOfMessagesReceived), whoever
	// called them; a message received again after its visibility timeout counts again, as does a retried receive
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

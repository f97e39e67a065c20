package fifoq

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/fifoq/fifoq/internal/rule"
)

// RedrivePermission is the kind of a [RedriveAllowPolicy].
type RedrivePermission uint8

const (
	// RedriveAllowAll lets any queue use this queue as its dead-letter queue: the default.
	RedriveAllowAll RedrivePermission = iota
	// RedriveDenyAll lets no queue use this queue as its dead-letter queue.
	RedriveDenyAll
	// RedriveByQueue lets the queues named in Sources use this queue as their dead-letter queue.
	RedriveByQueue
)

// String returns the SQS attribute value: "allowAll", "denyAll" or "byQueue".
func (p RedrivePermission) String() string {
	switch p {
	case RedriveAllowAll:
		return "allowAll"
	case RedriveDenyAll:
		return "denyAll"
	case RedriveByQueue:
		return "byQueue"
	}
	return "RedrivePermission(invalid)"
}

// RedriveAllowPolicy says which source queues may use a queue as their dead-letter queue. The zero value
// allows all.
type RedriveAllowPolicy struct {
	Permission RedrivePermission // allow all, deny all, or allow the Sources
	Sources    []string          // queue names, with RedriveByQueue only: 1..10 of them
}

func (p RedriveAllowPolicy) validate() error {
	switch {
	case p.Permission > RedriveByQueue:
		return rule.Reject(ErrInvalidRedriveAllowPolicy, "permission %d", p.Permission)
	}
	if err := rule.CheckRedriveSources(p.Permission == RedriveByQueue, len(p.Sources)); err != nil {
		return err
	}
	for _, name := range p.Sources {
		if err := rule.QueueName(name); err != nil {
			return rule.Reject(ErrInvalidRedriveAllowPolicy, "source %q is not a queue name", name)
		}
	}
	return nil
}

// Allows reports whether the policy lets the queue named source use its queue as a dead-letter queue.
func (p RedriveAllowPolicy) Allows(source string) bool {
	switch p.Permission {
	case RedriveAllowAll:
		return true
	case RedriveByQueue:
		return slices.Contains(p.Sources, source)
	}
	return false
}

// validateRedrive checks the redrive policy of the queue named name (self, nil for a new one) against its
// dead-letter queue (spec 6.1, 6.2, 6.7). A queue that is its own dead-letter queue is checked against the
// redrive allow policy it is given.
func (c *config) validateRedrive(name string, fifo bool, self *Queue) error {
	if err := c.allow.validate(); err != nil {
		return err
	}
	if !c.hasRedrive {
		return nil
	}
	allow := c.allow
	if c.dlq != nil && c.dlq != self {
		allow = c.dlq.conf().allow
	}
	switch {
	case c.dlq == nil:
		return rule.Reject(ErrInvalidRedrivePolicy, "no dead-letter queue")
	case rule.CheckMaxReceiveCount(c.maxReceiveCount) != nil:
		return rule.CheckMaxReceiveCount(c.maxReceiveCount)
	case c.dlq.fifo != fifo:
		return rule.Reject(ErrInvalidRedrivePolicy, "the dead-letter queue %s of %s must be of the same type", c.dlq.name, name)
	case !allow.Allows(name):
		return rule.Reject(ErrRedriveNotAllowed, "the redrive allow policy of %s does not allow %s", c.dlq.name, name)
	case c.dlq.st != c.store:
		return rule.Reject(ErrInvalidRedrivePolicy, "the dead-letter queue %s of %s must be in the same store", c.dlq.name, name)
	case c.dlq.deleted.Load():
		return rule.Reject(ErrInvalidRedrivePolicy, "the dead-letter queue %s of %s was deleted from its store", c.dlq.name, name)
	}
	return nil
}

// addSource records that src uses this queue as its dead-letter queue. It fails when this queue was deleted
// from its store meanwhile: Store.DeleteQueue looks at the sources and marks the queue deleted under the
// same lock, so either it sees src or src sees the deletion.
func (q *Queue) addSource(src *Queue) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.deleted.Load() {
		return rule.Reject(ErrInvalidRedrivePolicy, "the dead-letter queue %s of %s was deleted from its store", q.name, src.name)
	}
	q.sources = append(q.sources, src)
	return nil
}

// removeSource records that src no longer uses this queue as its dead-letter queue.
func (q *Queue) removeSource(src *Queue) {
	q.mu.Lock()
	q.sources = slices.DeleteFunc(q.sources, func(s *Queue) bool { return s == src })
	q.mu.Unlock()
}

// origin is what a message moved from another queue keeps: its MessageID (spec 6.4) and where it came from.
type origin struct {
	messageID  string
	sourceName string
	source     *Queue // nil in a durable queue until a move task looks it up by name
	visibleAt  tick   // in a standard dead-letter queue, while in flight: when it becomes visible (dueAt may be its expiry)
	arrivedAt  tick   // in a standard dead-letter queue: when it was moved here (its sentAt is the original's)
}

// sourceLocked returns the queue o came from: for a message read from a store, the queue of that name open
// on the store, if any.
func (q *Queue) sourceLocked(o *origin) *Queue {
	if o.source == nil && q.st != nil {
		o.source = q.st.openQueue(o.sourceName)
	}
	return o.source
}

// messageIDLocked returns m's MessageID, which a moved message brings with it.
func (q *Queue) messageIDLocked(m *message) string {
	if m.moved {
		return q.origins[m.seq].messageID
	}
	return q.messageID(m.seq)
}

// exhausted reports whether receiving m would take its receive count past the maxReceiveCount of the
// queue's redrive policy: then m goes to the dead-letter queue instead (spec 6.3). A queue that is its own
// dead-letter queue moves nothing: its messages are received past maxReceiveCount, their count going on.
func (q *Queue) exhausted(m *message) bool {
	c := q.conf()
	return c.dlq != nil && c.dlq != q && int(m.receiveCount) >= c.maxReceiveCount
}

// The order of queue locks. A receive that moves a message holds its queue's lock and needs the dead-letter
// queue's. Dead-letter queues may form cycles (a queue may be its own, which moves nothing), so "source
// before dead-letter queue" is no order. Every queue has a rank instead, its place in the order of creation
// in the process, and a call that holds queue locks waits only for the lock of a queue ranked below every
// one it holds. A dead-letter queue created before its source (the usual case) is ranked below it, and its
// lock is waited for. Another is only tried (TryLock); when it is busy, the receive leaves the message where
// it is, stops there and returns what it has, and moves the message afterwards, with the dead-letter queue's
// lock taken before the source's (deadLetterLater).

// queueRanks gives each queue its rank.
var queueRanks atomic.Uint64

// lockUnder takes q's lock for a move into q from src, whose lock is held, when the order of locks allows
// waiting for it or it is free; it reports whether it took it.
func (q *Queue) lockUnder(src *Queue) bool {
	if q.rank < src.rank {
		q.mu.Lock()
		return true
	}
	return q.mu.TryLock()
}

// deadLetterLocked moves m to the dead-letter queue and reports true, or, when the dead-letter queue's lock
// cannot be taken now (see lockUnder), changes nothing and reports false.
func (q *Queue) deadLetterLocked(m *message) bool {
	dlq := q.conf().dlq
	if !dlq.lockUnder(q) {
		return false
	}
	q.moveLocked(m, dlq)
	return true
}

// deadLetterLater moves m, which a receive left in this queue because its dead-letter queue was busy, now
// that the receive released the lock: it takes the dead-letter queue's lock, then this queue's, and moves
// m if it is still here, visible and past its receive limit, and the dead-letter queue is still this
// queue's. It returns what the receive waits for before it returns.
func (q *Queue) deadLetterLater(m *message, seq uint64) commit {
	dlq := q.conf().dlq
	if dlq == nil || dlq == q {
		return commit{}
	}
	dlq.mu.Lock() // ranked above q (else lockUnder would have waited for it): taken first
	q.lock()
	if q.conf().dlq != dlq || int(m.slot) >= len(q.slots) || q.slots[m.slot] != m || m.seq != seq ||
		m.state != StateVisible || !q.exhausted(m) {
		dlq.mu.Unlock()
		return q.unlock()
	}
	q.moveLocked(m, dlq)
	return q.unlock()
}

// moveLocked moves m to dlq, whose lock is held; acceptDeadLetter releases it.
func (q *Queue) moveLocked(m *message, dlq *Queue) {
	o := &origin{messageID: q.messageIDLocked(m), sourceName: q.name, source: q}
	sentAt := q.time(m.sentAt)
	var firstReceivedAt time.Time
	if m.receiveCount > 0 {
		firstReceivedAt = q.time(m.firstReceivedAt)
	}
	if q.logger != nil {
		q.moved = append(q.moved, deadLettered{o.messageID, m.groupID, dlq.name, int(m.receiveCount)})
	}
	q.dropLocked(m)
	q.counters.DeadLettered++
	q.syncLocked()
	dlq.acceptDeadLetter(m, o, sentAt, firstReceivedAt, q)
}

// deadLettered records a move to the dead-letter queue for the log.
type deadLettered struct {
	messageID, groupID, dlq string
	receiveCount            int
}

// acceptDeadLetter stores a message moved here from src (spec 6.4, 5.4): same MessageID, body, attributes
// and group, its receive count carried on; on a FIFO queue its deduplication id becomes its MessageID and
// its retention starts now, on a standard queue retention counts from the original send.
//
// In a store, the move is one batch: src's call has recorded the message's removal; the record of its
// arrival here joins it, and the batch is committed before this queue's lock is released, so no later
// change of the message here can reach the store before it.
//
// The caller holds q.mu, taken in the order of locks (lockUnder); acceptDeadLetter releases it.
func (q *Queue) acceptDeadLetter(from *message, o *origin, sentAt, firstReceivedAt time.Time, src *Queue) {
	now := q.enterLocked()
	m := &message{body: from.body, groupID: from.groupID, dedupID: from.dedupID, attrs: from.attrs, extra: from.extra,
		dueIdx: -1, receiveCount: from.receiveCount, moved: true}
	if !firstReceivedAt.IsZero() {
		m.firstReceivedAt = firstReceivedAt.Sub(q.epoch)
	}
	m.sentAt = sentAt.Sub(q.epoch)
	if q.fifo {
		m.dedupID = o.messageID
		m.sentAt = now
	}
	m.seq = q.takeSeqLocked()
	if q.origins == nil {
		q.origins = make(map[uint64]*origin)
	}
	o.arrivedAt = now
	q.origins[m.seq] = o
	q.counters.DeadLetterArrivals++
	q.addSlotLocked(m)
	q.all.pushBack(m) // in the order messages arrive; see expiresOutOfOrder for retention
	if q.fifo {
		q.groups.add(m)
	}
	q.makeVisibleLocked(m)
	if q.st != nil {
		q.commitLocked() // this queue's own records so far (a new sequence limit): before the message's
		q.putMessageLocked(src.batchLocked(), m, false, 0, false)
		src.commitLocked()
	}
	q.unlock() // only what this queue expired meanwhile, which needs no sync
}

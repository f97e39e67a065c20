package fifoq

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/fifoq/fifoq/internal/rule"
)

// setting resolves a duration of a call where 0 means the queue's setting def, and none (a No... field of
// the call's options, such as ReceiveOptions.NoWaitTime) means 0 whatever the queue's.
func setting(d time.Duration, none bool, def time.Duration) time.Duration {
	switch {
	case none:
		return 0
	case d == 0:
		return def
	}
	return d
}

// Attributes are a queue's settings: those [New] takes as options, and [Queue.SetAttributes] changes.
type Attributes struct {
	VisibilityTimeout         time.Duration      // 0..12h
	Delay                     time.Duration      // 0..15m
	Retention                 time.Duration      // 1m..14 days
	MaxMessageSize            int                // 1 KiB..1 MiB
	ReceiveWaitTime           time.Duration      // 0..20s
	ContentBasedDeduplication bool               // FIFO only
	DeduplicationScope        DeduplicationScope // FIFO only; 0 means DeduplicationScopeQueue
	GroupOrder                GroupOrder         // FIFO; no effect on standard queues (not an SQS attribute)
	DeadLetterQueue           *Queue             // nil: no redrive policy
	MaxReceiveCount           int                // 1..1000 with a DeadLetterQueue, else 0
	RedriveAllowPolicy        RedriveAllowPolicy // which queues may use this one as their dead-letter queue
}

// VisibilityTimeout returns the queue's visibility timeout as it is now, as Attributes does, and a nil
// error. It makes no call and never blocks, and it answers whatever ctx, even a done one.
func (q *Queue) VisibilityTimeout(ctx context.Context) (time.Duration, error) {
	return q.conf().visibility, nil
}

// Attributes returns the queue's settings as they are now.
func (q *Queue) Attributes() Attributes {
	c := q.conf()
	return Attributes{
		VisibilityTimeout:         c.visibility,
		Delay:                     c.delay,
		Retention:                 c.retention,
		MaxMessageSize:            c.maxSize,
		ReceiveWaitTime:           c.waitTime,
		ContentBasedDeduplication: c.contentDedup,
		DeduplicationScope:        c.scope,
		GroupOrder:                c.groupOrder,
		DeadLetterQueue:           c.dlq,
		MaxReceiveCount:           c.maxReceiveCount,
		RedriveAllowPolicy:        RedriveAllowPolicy{c.allow.Permission, slices.Clone(c.allow.Sources)},
	}
}

// redriveMu serializes changes of redrive policies, so that a dead-letter queue's sources are those whose
// policy names it, whatever the order of concurrent changes.
var redriveMu sync.Mutex

// SetAttributes replaces the queue's settings with a, which is usually [Queue.Attributes] with some fields
// changed; the rules are those of [New], and an invalid a returns the same errors and changes nothing. The
// dead-letter queue may be q itself, or lead back to q through other queues' policies, as on SQS: a queue
// that is its own dead-letter queue moves nothing (its messages are received past maxReceiveCount), and in
// a cycle of several queues a message moves on from queue to queue. Concurrent SetAttributes calls do not
// merge: the last one wins.
//
// The changes apply as SQS applies them (spec 4.6, 5.3): a new retention period applies to the messages
// already stored, so shortening it can expire them at once; a new delay applies to the delayed messages of
// a FIFO queue, counted from their send, and only to new messages on a standard queue; a new group order
// keeps the groups waiting now in their current order under GroupOrderAvailable. The other settings
// apply from the next call that uses them; after a deduplication scope change the ids seen under the other
// scope do not count, while those seen earlier under the same scope still do within their 5 minutes.
func (q *Queue) SetAttributes(a Attributes) error {
	p, err := q.SetAttributesNoWait(a)
	if err != nil {
		return err
	}
	return p.Wait()
}

// SetAttributesNoWait is [Queue.SetAttributes] without the wait for the disk: the new settings apply when it
// returns, and on a queue with a store the Pending says when they are durable. A layer above that records
// something of its own with the change (a catalogue, the queue's definition) waits once for both, after
// releasing its own locks.
func (q *Queue) SetAttributesNoWait(a Attributes) (Pending, error) {
	c, err := q.setAttributes(a)
	if err != nil {
		return Pending{}, err
	}
	return q.pending(c), nil
}

// setAttributes is SetAttributes but for its wait for the disk, which it returns.
func (q *Queue) setAttributes(a Attributes) (commit, error) {
	if err := q.check(); err != nil {
		return commit{}, err
	}
	redriveMu.Lock()
	old := q.conf()
	c, err := q.configWith(old, a)
	if err != nil {
		redriveMu.Unlock()
		return commit{}, err
	}
	if d := c.dlq; d != nil && d != old.dlq {
		// Before the policy is published, so a message moved there finds its source listed.
		if err := d.addSource(q); err != nil {
			redriveMu.Unlock()
			return commit{}, err
		}
	}
	now := q.lock()
	q.cfg.Store(c)
	redriveMu.Unlock() // published: the next change can check its cycles against it
	q.syncLocked()     // what the lock expired under the old retention, which the new one may lengthen
	if c.retention != old.retention {
		q.rescheduleExpiriesLocked()
	}
	if q.fifo && c.delay != old.delay {
		q.redelayLocked(now)
	}
	if q.fifo {
		q.groups.setOrder(c.groupOrder)
	}
	done := q.unlock() // the next call expires what the new retention ended

	if d := old.dlq; d != nil && d != c.dlq {
		d.removeSource(q)
	}
	return done, nil
}

// configWith returns old with the settings of a, validated; redriveMu must be held.
func (q *Queue) configWith(old *config, a Attributes) (*config, error) {
	c := *old
	c.visibility, c.delay, c.retention = a.VisibilityTimeout, a.Delay, a.Retention
	c.maxSize, c.waitTime = a.MaxMessageSize, a.ReceiveWaitTime
	c.contentDedup, c.scope, c.groupOrder = a.ContentBasedDeduplication, a.DeduplicationScope, a.GroupOrder
	if c.scope == 0 {
		c.scope = DeduplicationScopeQueue
	}
	c.fifoOnly = nil
	if c.contentDedup {
		c.fifoOnly = append(c.fifoOnly, "ContentBasedDeduplication")
	}
	if c.scope != DeduplicationScopeQueue {
		c.fifoOnly = append(c.fifoOnly, "DeduplicationScope")
	}
	c.dlq, c.maxReceiveCount, c.hasRedrive = a.DeadLetterQueue, a.MaxReceiveCount, a.DeadLetterQueue != nil
	if !c.hasRedrive && a.MaxReceiveCount != 0 {
		return nil, rule.Reject(ErrInvalidRedrivePolicy, "maxReceiveCount %d without a dead-letter queue", a.MaxReceiveCount)
	}
	c.allow = RedriveAllowPolicy{a.RedriveAllowPolicy.Permission, slices.Clone(a.RedriveAllowPolicy.Sources)}
	if err := c.validate(q.fifo); err != nil {
		return nil, err
	}
	if err := c.validateRedrive(q.name, q.fifo, q); err != nil {
		return nil, err
	}
	return &c, nil
}

// rescheduleExpiriesLocked moves the retention due times of messages moved into a standard dead-letter
// queue (see expiresOutOfOrder) to the queue's new retention period. It walks the stored messages: a change
// of settings, not a hot path.
func (q *Queue) rescheduleExpiriesLocked() {
	if q.fifo || len(q.origins) == 0 {
		return
	}
	for m := q.all.head; m != nil; m = next(m, bySend) {
		switch {
		case !m.moved:
		case m.state == StateInFlight:
			q.due.remove(m)
			q.scheduleLocked(m, q.origins[m.seq].visibleAt)
		case m.state == StateVisible:
			q.due.remove(m)
			m.dueAt = q.expiresAt(m)
			q.due.push(m)
			q.waiters.dueAt(m.dueAt)
		}
	}
}

// redelayLocked gives the delayed messages of a FIFO queue the queue's new delay, counted from their send
// (spec 4.6), in memory and in the store. It walks the stored messages: a change of settings, not a hot
// path.
func (q *Queue) redelayLocked(now tick) {
	delay := q.conf().delay
	for m := q.all.head; m != nil; m = next(m, bySend) {
		if m.state != StateDelayed {
			continue
		}
		q.due.remove(m)
		t := m.sentAt + delay
		if t > now {
			q.scheduleLocked(m, t)
		} else {
			q.makeVisibleLocked(m)
			t = now // its delay ended now: the instant recovery orders its group by
		}
		if q.st != nil {
			q.putMessageLocked(q.batchLocked(), m, true, t, true)
			q.jsync = true
		}
	}
}

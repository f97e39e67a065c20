package fifoq

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
)

// recover rebuilds q from its store in one ordered scan of its records: its receive attempt ids and
// deduplication keys (oldest first, skipping the expired ones), then its messages in arrival order, each
// into the send-order list, its group or ready list and the due index, with its receipt read right after
// it. Times are absolute, so visibility timeouts, delays and retention ran on while the process was down.
//
// The store does not keep when a FIFO group became available. Under GroupOrderAvailable the groups available
// at recovery are ordered by when their head became visible (its send or move in, the end of its delay or of
// its last visibility timeout), then by the head's sequence number; groups that become available later
// queue behind them as usual. A group unblocked by a delete counts from its head's visibility, not from
// the delete.
func (q *Queue) recover() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := max(q.clock.Now().Sub(q.epoch), 0)
	q.lastNow = now
	q.recovered = math.MaxUint64 // until the scan ends, every key may be on disk
	r := recovery{q: q, now: now}
	err := r.run()
	if err != nil {
		q.jb, q.jsync = nil, false
		if c, ok := err.(*corruptRecord); ok {
			return fmt.Errorf("%w: %s: queue %s: %v", ErrStoreCorrupt, q.st.location, q.name, c.err)
		}
		return fmt.Errorf("fifoq: recover queue %s from %s: %w", q.name, q.st.location, err)
	}
	q.nextSeq = max(q.seqLimit, r.maxSeq)
	q.recovered = q.nextSeq
	q.counters.Recovered = uint64(q.all.len)
	for i, m := range q.slots {
		if m == nil {
			q.freeSlots = append(q.freeSlots, int32(i))
		}
	}
	q.catchUpLocked(now) // what passed its retention goes now, before the groups take their order
	if q.fifo {
		q.groups.recovered(r.available)
	}
	q.commitLocked() // the receipts of gone messages that it deleted: no sync needed
	return nil
}

// scanChunk is how many records the scan decodes before it hands them to the goroutine that applies them.
const scanChunk = 256

// run scans the queue's records in two stages, one goroutine each, so that recovery takes both cores: the
// caller's goroutine decodes each record the scan reads (decode; a durable engine reads on a goroutine of its
// own, a third stage), and a goroutine of run's applies them in order (apply), chunk by chunk. A record that does not decode stops the scan, and is reported when its turn comes,
// so that the error is the first in the store's order.
func (r *recovery) run() error {
	var (
		chunks  = make(chan []scanned, 2)
		free    = make(chan []scanned, 3)
		done    = make(chan error, 1)
		stopped atomic.Bool // apply failed: the scan stops
	)
	go func() {
		var err error
		for c := range chunks {
			for i := 0; i < len(c) && err == nil; i++ {
				if err = r.apply(&c[i]); err != nil {
					stopped.Store(true)
				}
			}
			clear(c)
			select {
			case free <- c[:0]:
			default:
			}
		}
		if err == nil {
			if err = r.finish(); err != nil {
				err = &corruptRecord{err}
			}
		}
		done <- err
	}()
	c := make([]scanned, 0, scanChunk)
	lo, hi := dataRange(r.q.sid)
	err := r.q.st.eng.Scan(lo, hi, func(k, v []byte) error {
		if stopped.Load() {
			return errStopped
		}
		c = append(c, scanned{})
		if !r.decode(k, v, &c[len(c)-1]) {
			return errStopped
		}
		if len(c) == cap(c) {
			chunks <- c
			select {
			case c = <-free:
			default:
				c = make([]scanned, 0, scanChunk)
			}
		}
		return nil
	})
	chunks <- c
	close(chunks)
	if aerr := <-done; aerr != nil {
		return aerr // a record that does not decode stopped the scan: apply reports it in its turn
	}
	return err
}

// errStopped stops the scan of run.
var errStopped = errors.New("fifoq: recovery stopped")

// A scanned record is one record of a queue's scan, decoded by decode for apply.
type scanned struct {
	kind    byte   // kindAttempt, kindDedup or kindMessage; 0 when err is set
	part    byte   // kindMessage: partBody or partReceipt
	seq     uint64 // kindMessage: the message; kindDedup: the message accepted under the key
	at      tick   // kindAttempt: when it expires; kindDedup: when the key was accepted
	id      string // kindAttempt: the attempt id; kindDedup: the key, or "" when it is past its 5 minutes
	handles []handle
	msg     storedMessage
	receipt storedReceipt
	err     error // the record does not decode (a receipt's error counts only if its message is there)
}

// A corruptRecord is a record that recovery cannot read.
type corruptRecord struct{ err error }

func (c *corruptRecord) Error() string { return c.err.Error() }

// recovery is the state of a queue's recovery between two records of its scan.
type recovery struct {
	q      *Queue
	now    tick
	maxSeq uint64

	msg     *storedMessage // the message read last, until its receipt may follow
	receipt *storedReceipt
	cur     storedMessage
	rec     storedReceipt

	// FIFO: the groups whose first message within its retention is visible, with when it became visible.
	available []recoveredGroup
}

// decode reads the record k, v into d without touching the queue (k and v are the scan's to reuse). It returns false when the record does not decode: d.err says why.
func (r *recovery) decode(k, v []byte, d *scanned) bool {
	fail := func(err error) bool {
		d.kind, d.err = 0, &corruptRecord{err}
		return false
	}
	if len(k) < dataPrefixLen+8 {
		return fail(fmt.Errorf("key %x too short", k))
	}
	d.kind = k[dataPrefixLen-1]
	ns := timeOfSortable(binary.BigEndian.Uint64(k[dataPrefixLen:]))
	switch d.kind {
	case kindAttempt:
		handles, err := decodeAttempt(v)
		if err != nil {
			return fail(fmt.Errorf("attempt id record %x: %v", k, err))
		}
		d.at = r.q.tickOf(ns)
		if d.at > r.now {
			d.id, d.handles = string(k[dataPrefixLen+8:]), handles
		}
	case kindDedup:
		if len(v) != 8 {
			return fail(fmt.Errorf("deduplication record %x: %d bytes", k, len(v)))
		}
		d.seq, d.at = binary.BigEndian.Uint64(v), r.q.tickOf(ns)
		if r.now-d.at < dedupInterval {
			d.id = string(k[dataPrefixLen+8:])
		}
	case kindMessage:
		if len(k) != messageKeyLen {
			return fail(fmt.Errorf("message key %x", k))
		}
		d.seq = binary.BigEndian.Uint64(k[dataPrefixLen:])
		switch d.part = k[messageKeyLen-1]; d.part {
		case partBody:
			s, err := decodeMessage(v)
			if err != nil {
				return fail(fmt.Errorf("message %d: %v", d.seq, err))
			}
			s.seq = d.seq
			d.msg = s
		case partReceipt:
			rc, err := decodeReceipt(v)
			if err != nil {
				d.err = &corruptRecord{fmt.Errorf("receipt of message %d: %v", d.seq, err)}
			}
			d.receipt = rc
		default:
			return fail(fmt.Errorf("message key %x", k))
		}
	default:
		return fail(fmt.Errorf("key %x of kind %q", k, d.kind))
	}
	return true
}

// apply puts a decoded record into the queue, in the store's order.
func (r *recovery) apply(d *scanned) error {
	q := r.q
	switch d.kind {
	case 0:
		return d.err
	case kindAttempt:
		if d.id != "" {
			q.attempts.restore(&attempt{id: d.id, expiresAt: d.at, handles: d.handles})
		}
	case kindDedup:
		r.maxSeq = max(r.maxSeq, d.seq)
		if d.id != "" {
			q.dedup.Restore(d.id, d.seq, d.at)
		}
	case kindMessage:
		if d.part == partBody {
			if err := r.finish(); err != nil {
				return &corruptRecord{err}
			}
			r.cur = d.msg // d's chunk is reused
			r.msg = &r.cur
			return nil
		}
		if r.msg == nil || r.msg.seq != d.seq {
			q.deleteMessage(q.batchLocked(), d.seq, q.scratchKey[:0]) // the receipt of a message that is gone
			return nil
		}
		if d.err != nil {
			return d.err
		}
		r.rec = d.receipt
		r.receipt = &r.rec
	}
	return nil
}

// finish puts the message read last into the queue, as its records say it stands now.
func (r *recovery) finish() error {
	s, rc := r.msg, r.receipt
	r.msg, r.receipt = nil, nil
	if s == nil {
		return nil
	}
	q := r.q
	r.maxSeq = max(r.maxSeq, s.seq)
	if q.fifo && s.msg.GroupID == "" {
		return fmt.Errorf("message %d of a FIFO queue has no group", s.seq)
	}
	m := &message{
		seq:          s.seq,
		slot:         s.slot,
		dueIdx:       -1,
		receiveCount: s.receiveCount,
		moved:        s.moved,
		sentAt:       q.tickOf(s.sentAt),
	}
	m.setContent(&s.msg, s.msg.Attributes)
	if s.receiveCount > 0 {
		m.firstReceivedAt = q.tickOf(s.firstReceivedAt)
	}
	if rc != nil {
		m.receiveCount, m.changed = rc.receiveCount, rc.changed
		m.firstReceivedAt, m.receivedAt = q.tickOf(rc.firstReceivedAt), q.tickOf(rc.receivedAt)
	}
	if int(s.slot) >= len(q.slots) {
		q.slots = append(q.slots, make([]*message, int(s.slot)+1-len(q.slots))...)
	}
	if q.slots[s.slot] != nil {
		return fmt.Errorf("messages %d and %d in one slot", q.slots[s.slot].seq, s.seq)
	}
	q.slots[s.slot] = m
	q.all.pushBack(m)
	if s.moved {
		if q.origins == nil {
			q.origins = make(map[uint64]*origin)
		}
		// The store keeps no time of the move: a message moved into a standard queue counts its age
		// (Metrics.OldestAge) from its original send.
		q.origins[m.seq] = &origin{messageID: s.messageID, sourceName: s.source, arrivedAt: m.sentAt}
	}

	// The store's 0 is no delay; a delay's end can be tick 0, this queue's first instant.
	delayed, delayEnd := s.delayUntil != 0, q.tickOf(s.delayUntil)
	// A visible message takes the state it had before it became visible, for makeVisibleLocked to put it
	// where such a message goes: in flight for one received here, delayed for one never received.
	// visibleAt is when it became visible, if it is.
	state, due, visible, visibleAt := StateDelayed, tick(0), true, m.sentAt
	switch {
	case rc != nil:
		state = StateInFlight
		visibleAt = q.tickOf(rc.visibleAt)
		if visibleAt > r.now {
			due, visible = visibleAt, false
		}
	case delayed && delayEnd > r.now:
		due, visible = delayEnd, false
	case delayed:
		visibleAt = delayEnd
	}
	q.setStateLocked(m, state)
	if q.fifo {
		q.groups.add(m)
	}
	if visible {
		q.makeVisibleLocked(m)
		if q.fifo && q.expiresAt(m) > r.now {
			// The group's head once the messages past their retention are gone (sooner ones expire
			// sooner: a FIFO queue's messages are sent, or moved in, in time order).
			if prev := m.queueLinks.prev; prev == nil || q.expiresAt(prev) <= r.now {
				r.available = append(r.available, recoveredGroup{m.group, visibleAt, m.seq})
			}
		}
	} else {
		q.scheduleLocked(m, due)
	}
	return nil
}

package fifoq

import (
	"encoding/binary"
	"fmt"
	"math"
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
	lo, hi := dataRange(q.sid)
	err := q.st.eng.Scan(lo, hi, func(k, v []byte) error {
		if err := r.record(k, v); err != nil {
			return &corruptRecord{err}
		}
		return nil
	})
	if err == nil {
		if err = r.finish(); err != nil {
			err = &corruptRecord{err}
		}
	}

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
	rec     storedReceipt

	// FIFO: the groups whose first message within its retention is visible, with when it became visible.
	available []recoveredGroup
}

func (r *recovery) record(k, v []byte) error {
	q := r.q
	if len(k) < dataPrefixLen+8 {
		return fmt.Errorf("key %x too short", k)
	}
	ns := timeOfSortable(binary.BigEndian.Uint64(k[dataPrefixLen:]))
	switch kind := k[dataPrefixLen-1]; kind {
	case kindAttempt:
		handles, err := decodeAttempt(v)
		if err != nil {
			return fmt.Errorf("attempt id record %x: %v", k, err)
		}
		if exp := q.tickOf(ns); exp > r.now {
			q.attempts.restore(&attempt{id: string(k[dataPrefixLen+8:]), expiresAt: exp, handles: handles})
		}
	case kindDedup:
		if len(v) != 8 {
			return fmt.Errorf("deduplication record %x: %d bytes", k, len(v))
		}
		seq := binary.BigEndian.Uint64(v)
		r.maxSeq = max(r.maxSeq, seq)
		if at := q.tickOf(ns); r.now-at < dedupInterval {
			if len(q.dedup.cur) == 0 {
				q.dedup.curSince = at // the oldest: every id in cur is younger than 5 minutes from it
			}
			q.dedup.add(string(k[dataPrefixLen+8:]), seq, at)
		}
	case kindMessage:
		if len(k) != messageKeyLen {
			return fmt.Errorf("message key %x", k)
		}
		seq := binary.BigEndian.Uint64(k[dataPrefixLen:])
		switch k[messageKeyLen-1] {
		case partBody:
			if err := r.finish(); err != nil {
				return err
			}
			s, err := decodeMessage(v)
			if err != nil {
				return fmt.Errorf("message %d: %v", seq, err)
			}
			s.seq = seq
			r.msg = &s
		case partReceipt:
			if r.msg == nil || r.msg.seq != seq {
				q.deleteMessage(q.batchLocked(), seq) // the receipt of a message that is gone
				return nil
			}
			rc, err := decodeReceipt(v)
			if err != nil {
				return fmt.Errorf("receipt of message %d: %v", seq, err)
			}
			r.rec = rc
			r.receipt = &r.rec
		default:
			return fmt.Errorf("message key %x", k)
		}
	default:
		return fmt.Errorf("key %x of kind %q", k, kind)
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
		msg:          s.msg,
		slot:         s.slot,
		dueIdx:       -1,
		receiveCount: s.receiveCount,
		moved:        s.moved,
		sentAt:       q.tickOf(s.sentAt),
	}
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

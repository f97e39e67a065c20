package fifoq

import (
	"context"
	"strings"
)

// Send and SendBatch: a message's checks, its deduplication and its place in the queue.

// Send sends one message. On a FIFO queue a message whose deduplication id was accepted in the last 5
// minutes is accepted but not stored: the result has Duplicate set and the original's MessageID and
// SequenceNumber. Invalid messages return a sentinel error and change nothing.
func (q *Queue) Send(ctx context.Context, m Message) (SendResult, error) {
	r, p, err := q.SendNoWait(ctx, m)
	if err != nil {
		return SendResult{}, err
	}
	if err := p.Wait(); err != nil {
		return SendResult{}, err
	}
	return r, nil
}

// SendNoWait is [Queue.Send] without the wait for the disk: once it returns, the message is in the queue (a
// receive may take it), and on a queue with a store the Pending says when it is durable. A caller that sends
// to several queues of one store (a topic's fan-out) sends to each and then waits, for one sync in all. Send
// is SendNoWait and Pending.Wait; an acknowledgement given before the wait is not durable.
func (q *Queue) SendNoWait(ctx context.Context, m Message) (SendResult, Pending, error) {
	if err := ctx.Err(); err != nil {
		return SendResult{}, Pending{}, err
	}
	if err := q.check(); err != nil {
		return SendResult{}, Pending{}, err
	}
	rs := q.rules()
	if err := rs.checkMessage(&m, false); err != nil {
		return SendResult{}, Pending{}, err
	}
	if r := rs.requireFIFOIDs(&m); r != nil {
		return SendResult{}, Pending{}, r
	}
	var key string
	if q.fifo {
		m.DeduplicationID, key = q.dedupKey(&m)
	}
	stored := newMessage(&m)
	now := q.lock()
	seq, dup := q.sendLocked(now, stored, key, m.NoDelay)
	q.countSendLocked(dup)
	c := q.unlock()
	if c.err != nil {
		return SendResult{}, Pending{}, c.err
	}
	var r [1]SendResult
	q.sendResults(r[:], []uint64{seq}, []bool{dup})
	return r[0], q.pending(c), nil
}

// SendBatch sends 1..10 messages, in order. An entry that is invalid on its own (its body, attributes,
// delay or size) fails alone: its result is zero and the returned *BatchError names it. The whole call
// fails, changing nothing, when the batch has no entries or more than 10, when its messages add up to more
// than 1 MiB, or when a FIFO entry lacks a group id or a deduplication id (then with the code
// InvalidParameterValue, where Send's is MissingParameter for a missing group id, as SQS answers). As on
// SQS, an entry whose delay, number of attributes or attribute types and values are invalid fails alone
// before that: it does not fail the call for a missing id.
func (q *Queue) SendBatch(ctx context.Context, ms []Message) ([]SendResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := q.check(); err != nil {
		return nil, err
	}
	var errs [MaxBatchEntries]error
	if err := q.rules().checkBatch(ms, errs[:]); err != nil {
		return nil, err
	}
	var (
		stored [MaxBatchEntries]*message // nil for a failed entry
		keys   [MaxBatchEntries]string
		seqs   [MaxBatchEntries]uint64
		dups   [MaxBatchEntries]bool
	)
	var failed []EntryError
	for i := range ms {
		if errs[i] != nil {
			failed = append(failed, EntryError{Index: i, Err: errs[i]})
			continue
		}
		m := ms[i]
		if q.fifo {
			m.DeduplicationID, keys[i] = q.dedupKey(&m)
		}
		stored[i] = newMessage(&m)
	}
	now := q.lock()
	for i, m := range stored[:len(ms)] {
		if m != nil {
			seqs[i], dups[i] = q.sendLocked(now, m, keys[i], ms[i].NoDelay)
			q.countSendLocked(dups[i])
		}
	}
	if err := q.unlock().wait(q.st); err != nil {
		return nil, err
	}
	results := make([]SendResult, len(ms))
	q.sendResults(results, seqs[:len(ms)], dups[:len(ms)])
	if failed != nil {
		return results, &BatchError{Entries: failed}
	}
	return results, nil
}

// rawSize is the size of m as sent, valid or not: the measure of the 1 MiB batch limit.
func rawSize(m *Message) int {
	n := len(m.Body)
	for name, a := range m.Attributes {
		n += len(name) + len(a.DataType) + len(a.StringValue) + len(a.BinaryValue)
	}
	return n
}

// newMessage makes the stored form of a validated message, outside the lock. Its attributes are copied.
func newMessage(in *Message) *message {
	m := &message{dueIdx: -1}
	m.setContent(in, cloneAttributes(in.Attributes))
	return m
}

// sendLocked stores m and returns its sequence number, unless its deduplication key was accepted within
// the window: then it returns the original's, and dup. An empty key (a move task's message) skips
// deduplication.
func (q *Queue) sendLocked(now tick, m *message, key string, noDelay bool) (seq uint64, dup bool) {
	q.syncLocked() // a duplicate too: it reports the original as stored
	if q.fifo && key != "" {
		if seq, dup := q.dedup.Lookup(key, now); dup {
			return seq, true
		}
	}
	m.seq = q.takeSeqLocked()
	m.sentAt = now
	q.addSlotLocked(m)
	q.all.pushBack(m)
	delay := q.conf().delay
	if !q.fifo {
		delay = setting(m.delay(), noDelay, delay) // a message timer overrides the queue's delay (spec 4.2)
	}
	if q.st != nil {
		q.putMessageLocked(q.batchLocked(), m, delay > 0, now+delay, false)
	}
	if delay > 0 {
		q.setStateLocked(m, StateDelayed)
		q.scheduleLocked(m, now+delay)
	} else {
		q.setStateLocked(m, StateVisible)
	}
	switch {
	case q.fifo:
		q.groups.add(m)
		if key != "" {
			q.dedup.Add(key, m.seq, now)
			q.putDedupLocked(key, m.seq, now)
		}
	case delay == 0:
		q.fresh.pushBack(m)
		m.ready = readyFresh
	}
	return m.seq, false
}

// sendResults fills results with the ids of the messages seqs, all in one allocation. A zero seq is a failed
// entry.
func (q *Queue) sendResults(results []SendResult, seqs []uint64, dups []bool) {
	per := q.idsLen()
	var sb strings.Builder
	sb.Grow(len(seqs) * per)
	var scratch [uuidLen + seqDigits]byte
	for _, seq := range seqs {
		if seq != 0 {
			sb.Write(q.appendIDs(scratch[:0], seq))
		}
	}
	ids := sb.String()
	for i, seq := range seqs {
		if seq == 0 {
			continue
		}
		s := ids[:per]
		ids = ids[per:]
		results[i] = SendResult{MessageID: s[:uuidLen], Duplicate: dups[i]}
		if q.fifo {
			results[i].SequenceNumber = s[uuidLen:]
		}
	}
}

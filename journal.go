package fifoq

import (
	"encoding/binary"
	"fmt"

	"github.com/fifoq/fifoq/storage"
)

// The journal: how a durable queue records its changes in its store (DURABILITY.md). Under the queue's lock a
// call changes the queue in memory and adds the matching records to a batch, in the same order; the batch
// is committed before the lock is released, so the store applies the changes of every call in the order
// they were made; and the call waits for the batch to be durable after releasing the lock, so that
// concurrent callers share the disk's syncs. A change is thus visible to other callers a little before it
// is durable, never acknowledged before.
//
// A call marks its batch for a sync when it records something it will report as done (a send, a receive, a
// delete, ...); what the queue does on its own (removing an expired message) is committed without one, and
// becomes durable with the next synced batch, or is done again after a restart.
//
// An in-memory queue has no store: q.st is nil and none of this runs.

// A commit is what a call waits for once it has released the queue's lock: the last batch it committed
// (the store makes batches durable in order, so the earlier ones are durable by then), or the error of a
// commit.
type commit struct {
	t   storage.Ticket
	err error
}

// wait blocks until the call's changes are durable, and returns the error that kept them from being so.
func (c commit) wait(s *Store) error {
	if c.err != nil {
		return c.err
	}
	if c.t == nil {
		return nil
	}
	if err := c.t.Wait(); err != nil {
		return s.fail(err)
	}
	return nil
}

// then returns what a call waits for when it committed c and, later, d.
func (c commit) then(d commit) commit {
	if c.err != nil {
		return c
	}
	if d.t == nil && d.err == nil {
		return c
	}
	return d
}

// A Pending is a change that a NoWait method ([NewNoWait], [Queue.SendNoWait], [Queue.SetAttributesNoWait],
// [Queue.StartMoveTaskNoWait], [Records.Commit]) made and handed to its store, which may not have made it
// durable yet: other callers see it already. Wait blocks until it is durable. A store makes the changes
// handed to it durable in order, and the changes of concurrent callers share its syncs, so a caller that
// makes several changes and then waits for each waits about as long as for the last. The zero Pending, and
// that of a queue in memory, is durable.
type Pending struct {
	c  commit
	st *Store
}

// Wait blocks until the change is durable, and returns the error that kept it from being so: a failed
// write or sync, which fails the store (ErrStoreFailed), or the store's error when the change was handed
// to it (ErrStoreClosed, ErrQueueDeleted). It may be called any number of times.
func (p Pending) Wait() error {
	if p.st == nil {
		return p.c.err
	}
	return p.c.wait(p.st)
}

// pending returns the Pending of a change of q that committed c.
func (q *Queue) pending(c commit) Pending {
	if q.st == nil {
		return Pending{}
	}
	return Pending{c, q.st}
}

// check returns the error a change of q must return at once: its store failed or was closed, or q was
// deleted from it. It is nil for an in-memory queue.
func (q *Queue) check() error {
	if q.st == nil {
		return nil
	}
	if err := q.st.err(); err != nil {
		return err
	}
	if q.deleted.Load() {
		return fmt.Errorf("%w: %s", ErrQueueDeleted, q.name)
	}
	return nil
}

// batchLocked returns the batch of the call under way, starting one.
func (q *Queue) batchLocked() storage.Batch {
	if q.jb == nil {
		q.jb = q.st.eng.NewBatch()
	}
	return q.jb
}

// commitLocked commits what the call under way recorded so far, with a sync if it asked for one. Once the
// store failed or was closed, or q was deleted from it, it commits nothing and the call returns that error.
func (q *Queue) commitLocked() {
	if q.jb == nil && !q.jsync {
		return
	}
	b, sync, reserve := q.jb, q.jsync, q.jreserve
	q.jb, q.jsync, q.jreserve = nil, false, false
	if q.jerr != nil {
		return
	}
	if err := q.check(); err != nil {
		if sync {
			q.jerr = err
		}
		return
	}
	if b == nil {
		b = q.st.eng.NewBatch() // nothing to write, but the call reports changes another call made: sync them
	}
	t, err := q.st.eng.Commit(b, sync)
	switch {
	case err != nil:
		q.jerr = q.st.fail(err)
		return
	case t != nil:
		q.jlast = t
	}
	if reserve {
		// The record of a new block of sequence numbers: durable before any of them is given out, even on
		// an engine whose synced commits return before the disk has them (storage.Syncer).
		if err := q.st.syncer.Sync(); err != nil {
			q.jerr = q.st.fail(err)
		}
	}
}

// flushLocked commits what the call under way recorded and hands over what it must wait for.
func (q *Queue) flushLocked() commit {
	if q.st == nil {
		return commit{}
	}
	q.commitLocked()
	c := commit{q.jlast, q.jerr}
	q.jlast, q.jerr = nil, nil
	return c
}

// syncLocked asks for the call's changes to be synced before it returns.
func (q *Queue) syncLocked() {
	if q.st != nil {
		q.jsync = true
	}
}

// unixNano returns the Unix time of tick t, as the store keeps times.
func (q *Queue) unixNano(t tick) int64 { return q.epochNs + int64(t) }

// tickOf returns the tick of a Unix time in nanoseconds.
func (q *Queue) tickOf(ns int64) tick { return tick(ns - q.epochNs) }

// A message's keys are written and removed so that the store may remove them with SingleDelete, which lets
// Pebble drop a message's Set and its removal as soon as they meet (in the memtable, or in any compaction)
// rather than carry a tombstone down to the last level: a key of a fresh message (one sent or moved here
// since the queue was opened: q.sentHere) is set once, and before it is set again (a receipt at each
// receive, a body whose delay changes) the earlier value is single-deleted, so that it is never set more
// than once since its last removal. The keys of a message read from the store may have been written
// otherwise (by an earlier version, before a crash): they are removed with Delete.

// sentHere reports whether the keys of message seq were all written since q was opened. It needs no lock:
// q.recovered changes only while q recovers.
func (q *Queue) sentHere(seq uint64) bool { return seq > q.recovered }

// putMessageLocked records m as stored, in b (the queue's batch, or another queue's whose call moves m
// here). If delayed, delayUntil is when m's delay ends, or ended; it may be tick 0, the queue's first
// instant. again says that m's record is in the store already.
func (q *Queue) putMessageLocked(b storage.Batch, m *message, delayed bool, delayUntil tick, again bool) {
	var until int64 // the store's 0 is no delay
	if delayed {
		until = q.unixNano(delayUntil)
	}
	k := messageKey(q.scratchKey[:0], q.sid, m.seq, partBody)
	if again && q.sentHere(m.seq) {
		b.SingleDelete(k)
	}
	q.scratch = q.encodeMessage(q.scratch[:0], m, until)
	b.Set(k, q.scratch)
}

// putReceiptLocked records m's receipt: its receive count, and when it becomes visible. first says that m
// has no receipt in the store yet: its first receive since it was sent here.
func (q *Queue) putReceiptLocked(m *message, visibleAt tick, first bool) {
	if q.st == nil {
		return
	}
	k := messageKey(q.scratchKey[:0], q.sid, m.seq, partReceipt)
	b := q.batchLocked()
	if !first && q.sentHere(m.seq) {
		b.SingleDelete(k) // the receipt before, if any: a key single-deleted while absent is no harm
	}
	q.scratch = q.encodeReceipt(q.scratch[:0], m, visibleAt)
	b.Set(k, q.scratch)
	q.jsync = true
}

// deleteMessage records in b that message seq of q is gone, building its keys in scratch, a buffer of the
// caller's. It needs no lock of q's: a message's keys are never written again once it is gone, so the
// deletion commutes with every other batch.
func (q *Queue) deleteMessage(b storage.Batch, seq uint64, scratch []byte) {
	key := messageKey(scratch[:0], q.sid, seq, partBody)
	del := b.Delete
	if q.sentHere(seq) {
		del = b.SingleDelete
	}
	del(key)
	key[len(key)-1] = partReceipt
	del(key)
}

// dropLocked removes m from the queue and, for a durable queue, from the store.
func (q *Queue) dropLocked(m *message) {
	if q.st != nil {
		q.deleteMessage(q.batchLocked(), m.seq, q.scratchKey[:0])
	}
	q.removeLocked(m)
}

// takeSeqLocked gives out the next sequence number; a durable queue records a new limit every seqBlock,
// and, on a store that syncs on demand, syncs it before the call under way ends (commitLocked): no number
// reaches a caller before a durable record reserves it, so that a loss of power cannot give it out again.
func (q *Queue) takeSeqLocked() uint64 {
	q.nextSeq++
	if q.st != nil && q.nextSeq > q.seqLimit {
		q.seqLimit = q.nextSeq + seqBlock
		q.putQueueLocked()
		q.jreserve = q.st.syncer != nil
	}
	return q.nextSeq
}

// putQueueLocked records the queue's catalog record: its sequence limit and its last purge.
func (q *Queue) putQueueLocked() {
	r := queueRecord{id: q.sid, nonce: q.idNonce, tag: q.tag, seqLimit: q.seqLimit}
	if q.purged {
		r.purgedAt = q.unixNano(q.purgedAt)
	}
	q.scratch = r.encode(q.scratch[:0])
	q.batchLocked().Set(queueKey(q.storeKey), q.scratch)
}

// putDedupLocked records a deduplication key accepted at now.
func (q *Queue) putDedupLocked(key string, seq uint64, now tick) {
	if q.st == nil {
		return
	}
	k := timedKey(q.scratchKey[:0], q.sid, kindDedup, q.unixNano(now), key)
	q.scratch = binary.BigEndian.AppendUint64(q.scratch[:0], seq)
	q.batchLocked().Set(k, q.scratch)
}

// putAttemptLocked records a receive request attempt id and the receipts its receive returned.
func (q *Queue) putAttemptLocked(a *attempt) {
	if q.st == nil {
		return
	}
	k := timedKey(q.scratchKey[:0], q.sid, kindAttempt, q.unixNano(a.expiresAt), a.id)
	q.scratch = encodeAttempt(q.scratch[:0], a.handles)
	q.batchLocked().Set(k, q.scratch)
}

// expireRecordsLocked deletes the deduplication keys accepted at least 5 minutes before now, and the
// attempt ids expired by now.
func (q *Queue) expireRecordsLocked(now tick) {
	if q.st == nil {
		return
	}
	b := q.batchLocked()
	b.DeleteRange(timedRange(q.sid, kindDedup, q.unixNano(now-dedupInterval)))
	b.DeleteRange(timedRange(q.sid, kindAttempt, q.unixNano(now)))
}

// purgeRecordsLocked deletes every record of the queue's messages, deduplication keys and attempt ids.
func (q *Queue) purgeRecordsLocked() {
	if q.st == nil {
		return
	}
	q.batchLocked().DeleteRange(dataRange(q.sid))
	q.putQueueLocked()
	q.jsync = true
}

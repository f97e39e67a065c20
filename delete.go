package fifoq

import (
	"context"

	"github.com/fifoq/fifoq/internal/rule"
)

// Delete, DeleteBatch and Purge.

// Delete deletes the message a receipt handle names. On a standard queue any handle of the message deletes
// it, even while another consumer holds it. On a FIFO queue the handle must be of the latest receive and its
// visibility window must not have ended, else ErrReceiptHandleExpired. On both, deleting a message that is
// already gone (deleted, expired or purged) succeeds. A string that is not a receipt handle of this queue
// returns ErrReceiptHandleInvalid.
func (q *Queue) Delete(ctx context.Context, receiptHandle string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := q.check(); err != nil {
		return err
	}
	h, err := q.parseHandle(receiptHandle)
	if err != nil {
		return err
	}
	q.lock()
	err = q.deleteLocked(h, receiptHandle)
	if werr := q.unlock().wait(q.st); werr != nil {
		return werr
	}
	return err
}

// DeleteBatch deletes 1..10 messages by receipt handle. Entries fail alone, reported in a *BatchError; an
// empty batch or one of more than 10 entries fails whole.
func (q *Queue) DeleteBatch(ctx context.Context, receiptHandles []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := q.check(); err != nil {
		return err
	}
	if err := rule.BatchLen(len(receiptHandles), "DeleteMessageBatchRequestEntry"); err != nil {
		return err
	}
	var failed []EntryError
	q.lock()
	for i, s := range receiptHandles {
		h, err := q.parseHandle(s)
		if err == nil {
			err = q.deleteLocked(h, s)
		}
		if err != nil {
			failed = append(failed, EntryError{Index: i, Err: err})
		}
	}
	if err := q.unlock().wait(q.st); err != nil {
		return err
	}
	if failed != nil {
		return &BatchError{Entries: failed}
	}
	return nil
}

// deleteLocked deletes the message of h, parsed from the receipt handle s.
func (q *Queue) deleteLocked(h handle, s string) error {
	m := q.lookupLocked(h)
	if m == nil {
		q.syncLocked() // deleted, expired or purged already, maybe by a call still syncing
		return nil
	}
	if q.fifo && (m.receipt() != h.receipt || m.state != StateInFlight) {
		return handleExpired(s, "message %s", q.messageIDLocked(m))
	}
	q.dropLocked(m)
	q.counters.Deleted++
	q.syncLocked()
	return nil
}

// Purge deletes every message, in flight and delayed ones too, and on a FIFO queue the deduplication history
// and the receive attempt ids. A queue can be purged once every 60 seconds; sooner returns
// ErrPurgeInProgress.
func (q *Queue) Purge(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := q.check(); err != nil {
		return err
	}
	now := q.lock()
	if q.purged && now-q.purgedAt < purgeInterval {
		q.unlock()
		return rule.Reject(ErrPurgeInProgress, "only one PurgeQueue operation on %s is allowed every %v", q.name, purgeInterval).Says(
			"Only one PurgeQueue operation on %s is allowed every %s seconds.", q.name, rule.Seconds(purgeInterval))
	}
	q.purged, q.purgedAt = true, now
	q.counters.Purged += uint64(q.stats.Visible + q.stats.InFlight + q.stats.Delayed)
	q.purgeRecordsLocked()
	clear(q.slots)
	q.slots, q.freeSlots, q.heldSlots = q.slots[:0], q.freeSlots[:0], q.heldSlots[:0]
	q.all = msgList{kind: bySend}
	q.fresh = msgList{kind: byQueue}
	q.retry = msgList{kind: byQueue}
	if q.fifo {
		q.groups.clear()
	}
	q.due.clear()
	q.dedup.Clear()
	q.attempts.clear()
	clear(q.origins)
	q.stats = Stats{}
	return q.unlock().wait(q.st)
}

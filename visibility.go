package fifoq

import (
	"context"
	"time"

	"github.com/fifoq/fifoq/internal/rule"
)

// VisibilityChange is one entry of [Queue.ChangeVisibilityBatch].
type VisibilityChange struct {
	ReceiptHandle string        // names the receive whose visibility changes
	Timeout       time.Duration // the new visibility timeout, from now: 0 makes the message visible at once
}

// ChangeVisibility makes the message a receipt handle names visible timeout from now: 0 makes it visible at
// once, and a message stays invisible at most 12 hours from its receive; a timeout past that
// returns ErrInvalidVisibilityTimeout, never a shorter one. The change applies to this receipt only. A
// message that was deleted or expired returns ErrMessageNotAvailable. On a standard queue a handle whose
// message is visible again succeeds and does nothing; on a FIFO queue it returns ErrReceiptHandleExpired, as
// does a handle of an earlier receipt.
func (q *Queue) ChangeVisibility(ctx context.Context, receiptHandle string, timeout time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := q.check(); err != nil {
		return err
	}
	now := q.lock()
	err := q.changeVisibilityLocked(now, VisibilityChange{receiptHandle, timeout})
	if werr := q.unlock().wait(q.st); werr != nil {
		return werr
	}
	return err
}

// ChangeVisibilityBatch changes the visibility of 1..10 messages. Entries fail alone, reported in a
// *BatchError; an empty batch or one of more than 10 fails whole.
func (q *Queue) ChangeVisibilityBatch(ctx context.Context, entries []VisibilityChange) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := q.check(); err != nil {
		return err
	}
	if err := rule.BatchLen(len(entries), "ChangeMessageVisibilityBatchRequestEntry"); err != nil {
		return err
	}
	var failed []EntryError
	now := q.lock()
	for i, e := range entries {
		if err := q.changeVisibilityLocked(now, e); err != nil {
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

func (q *Queue) changeVisibilityLocked(now tick, e VisibilityChange) error {
	if err := e.Check(); err != nil {
		return err
	}
	h, err := q.parseHandle(e.ReceiptHandle)
	if err != nil {
		return err
	}
	m := q.lookupLocked(h)
	switch {
	case m == nil:
		return rule.Reject(ErrMessageNotAvailable, "value %s for parameter ReceiptHandle is invalid", e.ReceiptHandle).Says("%s",
			rule.InvalidValue(e.ReceiptHandle, "ReceiptHandle", "Message does not exist or is not available for visibility timeout change."))
	case q.fifo && (m.receipt() != h.receipt || m.state != StateInFlight):
		return handleExpired(e.ReceiptHandle, "message %s", q.messageIDLocked(m))
	case m.state != StateInFlight:
		return nil // standard, visible again: succeed and do nothing (spec 1.3.4)
	case now+e.Timeout > m.receivedAt+maxVisibilityTimeout:
		return visibilityBeyondLimit(e.Timeout, "%v from now passes the 12-hour limit, %v after the receive",
			e.Timeout, maxVisibilityTimeout-(now-m.receivedAt))
	}
	m.changed = true
	q.due.remove(m)
	q.putReceiptLocked(m, now+e.Timeout, false)
	if e.Timeout == 0 {
		q.makeVisibleLocked(m)
		return nil
	}
	q.scheduleLocked(m, now+e.Timeout)
	return nil
}

// visibilityBeyondLimit rejects a visibility change of timeout that would keep a message invisible longer
// than 12 hours from its receive (1.2.5).
func visibilityBeyondLimit(timeout time.Duration, format string, args ...any) error {
	return rule.Reject(ErrInvalidVisibilityTimeout, format, args...).Says("%s", rule.InvalidValue(rule.Seconds(timeout), "VisibilityTimeout",
		"Total VisibilityTimeout for the message is beyond the limit ["+rule.Seconds(maxVisibilityTimeout)+" seconds]"))
}

// Check returns ErrInvalidVisibilityTimeout when c's timeout is out of its range, 0..12h, and nil otherwise.
// [Queue.ChangeVisibility] checks it first, and then that the message stays invisible at most 12 hours from
// its receive. A [Source] that is not a Queue calls it to refuse what a Queue refuses.
func (c VisibilityChange) Check() error {
	switch {
	case c.Timeout < 0:
		return rule.Reject(ErrInvalidVisibilityTimeout, "%v, want 0..%v", c.Timeout, maxVisibilityTimeout).Says("%s",
			rule.InvalidValue(rule.Seconds(c.Timeout), "VisibilityTimeout", "VisibilityTimeout must be >= 0."))
	case c.Timeout > maxVisibilityTimeout:
		return visibilityBeyondLimit(c.Timeout, "%v, want 0..%v", c.Timeout, maxVisibilityTimeout)
	}
	return nil
}

// scheduleLocked makes m come due at t. A long poll sleeping past t is woken to sleep until t instead.
func (q *Queue) scheduleLocked(m *message, t tick) {
	if q.expiresOutOfOrder(m) {
		q.origins[m.seq].visibleAt = t
		t = min(t, q.expiresAt(m)) // its retention may end first
	}
	m.dueAt = t
	q.due.push(m)
	q.waiters.dueAt(t)
}

// dueIndex is a min-heap of in-flight and delayed messages by the time they become visible (then by send
// order), with each message's index kept in it so any one can be removed in O(log n).
type dueIndex []*message

func (h dueIndex) less(i, j int) bool {
	if h[i].dueAt != h[j].dueAt {
		return h[i].dueAt < h[j].dueAt
	}
	return h[i].seq < h[j].seq
}

func (h dueIndex) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].dueIdx, h[j].dueIdx = int32(i), int32(j)
}

func (h dueIndex) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h dueIndex) down(i int) bool {
	start := i
	for {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		c := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			c = r
		}
		if !h.less(c, i) {
			break
		}
		h.swap(i, c)
		i = c
	}
	return i > start
}

func (h *dueIndex) push(m *message) {
	m.dueIdx = int32(len(*h))
	*h = append(*h, m)
	h.up(len(*h) - 1)
}

func (h dueIndex) peek() *message {
	if len(h) == 0 {
		return nil
	}
	return h[0]
}

func (h *dueIndex) pop() *message {
	m := (*h)[0]
	h.remove(m)
	return m
}

func (h *dueIndex) remove(m *message) {
	old := *h
	i, last := int(m.dueIdx), len(old)-1
	if i != last {
		old.swap(i, last)
	}
	old[last] = nil
	*h = old[:last]
	if i != last && !h.down(i) {
		h.up(i)
	}
	m.dueIdx = -1
}

func (h *dueIndex) clear() {
	for _, m := range *h {
		m.dueIdx = -1
	}
	clear(*h)
	*h = (*h)[:0]
}

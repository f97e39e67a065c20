package fifoq

import (
	"context"
	"slices"
	"strings"
	"time"
)

// ReceiveOptions are the parameters of one [Queue.Receive].
type ReceiveOptions struct {
	MaxMessages       int           // 1..10; 0 means 1
	WaitTime          time.Duration // long-poll wait, 0..20s; 0 means the queue's receive wait time
	VisibilityTimeout time.Duration // 0..12h; 0 means the queue's visibility timeout
	AttemptID         string        // FIFO receive request attempt id; ignored on standard queues
}

// Receive returns up to o.MaxMessages visible messages and makes them invisible for the visibility timeout.
//
// On a FIFO queue it takes the available group with the oldest head first, and from each group its visible
// prefix: the messages before the first one in flight (spec 2.6, 2.9), filling the request from one group
// before moving to the next. A group with a message in flight gives nothing more until that message is
// deleted or visible again. On a standard queue it returns messages whose visibility timeout ended first,
// then the others in send order.
//
// With a wait (o.WaitTime or the queue's receive wait time) and nothing to return, Receive waits until a
// message is available and returns it at once, or returns no messages when the wait ends. It returns ctx's
// error as soon as ctx is done.
//
// With an AttemptID on a FIFO queue, a retry within 5 minutes returns the same messages with the same receipt
// handles and restarts their visibility timeout, provided none of them was deleted, changed or received
// again since; otherwise it returns ErrAttemptNotRetryable.
func (q *Queue) Receive(ctx context.Context, o ReceiveOptions) ([]Delivery, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	maxMessages, wait, vt, err := q.receiveParams(o)
	if err != nil {
		return nil, err
	}
	attemptID := ""
	if q.fifo {
		attemptID = o.AttemptID
	}
	now := q.lock()
	if attemptID != "" {
		if out, replayed, err := q.replayLocked(now, attemptID, vt); replayed || err != nil {
			q.unlock()
			return out, err
		}
	}
	out := q.takeLocked(now, maxMessages, vt, attemptID)
	if len(out) > 0 || wait == 0 {
		q.unlock()
		return out, nil
	}
	return q.waitLocked(ctx, now, now+wait, maxMessages, vt, attemptID)
}

func (q *Queue) receiveParams(o ReceiveOptions) (maxMessages int, wait, vt time.Duration, err error) {
	maxMessages, wait, vt = o.MaxMessages, o.WaitTime, o.VisibilityTimeout
	if maxMessages == 0 {
		maxMessages = 1
	}
	if wait == 0 {
		wait = q.cfg.waitTime
	}
	if vt == 0 {
		vt = q.cfg.visibility
	}
	switch {
	case maxMessages < 1 || maxMessages > maxBatchEntries:
		err = reject(ErrInvalidMaxMessages, "%d, must be between 1 and %d", maxMessages, maxBatchEntries)
	case wait < 0 || wait > maxWaitTime:
		err = reject(ErrInvalidWaitTime, "%v, must be >= 0 and <= %v", wait, maxWaitTime)
	case vt < 0 || vt > maxVisibilityTimeout:
		err = reject(ErrInvalidVisibilityTimeout, "%v, want 0..%v", vt, maxVisibilityTimeout)
	case q.fifo && o.AttemptID != "":
		err = validateID(o.AttemptID, ErrInvalidAttemptID)
	}
	return maxMessages, wait, vt, err
}

// waitLocked is the long poll: called with mu held and nothing to receive, it sleeps until signaled, until
// the first message comes due, or until the deadline, and tries again. It returns with mu released.
func (q *Queue) waitLocked(ctx context.Context, now, deadline tick, maxMessages int, vt time.Duration, attemptID string) ([]Delivery, error) {
	w := &waiter{wake: make(chan struct{}, 1)}
	for {
		w.wakeAt = deadline
		if m := q.due.peek(); m != nil && m.dueAt < deadline {
			w.wakeAt = m.dueAt
		}
		q.waiters.add(w)
		q.mu.Unlock()
		t := q.cfg.clock.AfterFunc(w.wakeAt-now, w.poke)
		var ctxDone bool
		select {
		case <-w.wake:
		case <-ctx.Done():
			ctxDone = true
		}
		t.Stop()
		now = q.lock()
		q.waiters.ran(w)
		if ctxDone {
			q.unlock() // hands messages this waiter was signaled for to the next one
			return nil, ctx.Err()
		}
		out := q.takeLocked(now, maxMessages, vt, attemptID)
		if len(out) > 0 || now >= deadline {
			q.unlock()
			return out, nil
		}
	}
}

// takeLocked receives up to maxMessages visible messages.
func (q *Queue) takeLocked(now tick, maxMessages int, vt time.Duration, attemptID string) []Delivery {
	var batch [maxBatchEntries]*message
	n := 0
	if q.fifo {
		for n < maxMessages {
			g, ok := q.groups.popOldest()
			if !ok {
				break
			}
			for m := g.msgs.head; m != nil && m.state == stateVisible && n < maxMessages; m = next(m, byQueue) {
				batch[n] = m
				n++
			}
		}
	} else {
		for ; n < maxMessages; n++ {
			list := &q.retry
			if list.len == 0 {
				list = &q.fresh
			}
			m := list.head
			if m == nil {
				break
			}
			list.remove(m)
			m.ready = readyNone
			batch[n] = m
		}
	}
	if n == 0 {
		return nil
	}
	// One allocation holds every receipt handle of the batch.
	var handles strings.Builder
	handles.Grow(n * handleLen)
	var scratch [handleLen]byte
	for _, m := range batch[:n] {
		q.receiveLocked(now, m, vt)
		handles.Write(q.appendHandle(scratch[:0], m))
	}
	hs := handles.String()
	out := make([]Delivery, n)
	for i, m := range batch[:n] {
		out[i] = q.deliveryLocked(m, hs[i*handleLen:(i+1)*handleLen])
	}
	if attemptID != "" {
		q.attempts.add(now, attemptID, out)
	}
	return out
}

// receiveLocked makes m in flight under a new receipt.
func (q *Queue) receiveLocked(now tick, m *message, vt time.Duration) {
	q.setStateLocked(m, stateInFlight)
	m.receiveCount++
	if m.receiveCount == 1 {
		m.firstReceivedAt = now
	}
	m.receivedAt = now
	q.nextReceipt++
	m.receipt = q.nextReceipt
	m.changed = false
	q.scheduleLocked(m, now+vt)
}

func (q *Queue) deliveryLocked(m *message, receiptHandle string) Delivery {
	d := Delivery{
		Message:         m.msg,
		MessageID:       m.id(),
		ReceiptHandle:   receiptHandle,
		ReceiveCount:    int(m.receiveCount),
		SentAt:          q.time(m.sentAt),
		FirstReceivedAt: q.time(m.firstReceivedAt),
	}
	if m.msg.Attributes != nil {
		d.Attributes = cloneAttributes(m.msg.Attributes)
	}
	if q.fifo {
		d.SequenceNumber = m.sequenceNumber()
	}
	return d
}

// attemptWindow remembers, for 5 minutes, what each FIFO receive with a receive request attempt id returned
// (spec 2.15). Records come due in the order they were made.
type attemptWindow struct {
	byID  map[string]*attempt
	order []*attempt // order[head:] are live
	head  int
}

type attempt struct {
	id         string
	expiresAt  tick
	deliveries []Delivery
}

func newAttemptWindow() attemptWindow { return attemptWindow{byID: make(map[string]*attempt)} }

func (w *attemptWindow) add(now tick, id string, out []Delivery) {
	a := &attempt{id: id, expiresAt: now + dedupInterval, deliveries: slices.Clone(out)}
	w.byID[id] = a
	w.order = append(w.order, a)
}

func (w *attemptWindow) expire(now tick) {
	for w.head < len(w.order) && w.order[w.head].expiresAt <= now {
		delete(w.byID, w.order[w.head].id)
		w.order[w.head] = nil
		w.head++
	}
	if w.head > 64 && w.head*2 >= len(w.order) {
		n := copy(w.order, w.order[w.head:])
		clear(w.order[n:])
		w.order = w.order[:n]
		w.head = 0
	}
}

func (w *attemptWindow) clear() {
	clear(w.byID)
	clear(w.order)
	w.order = w.order[:0]
	w.head = 0
}

// replayLocked answers a retry of the receive with attempt id: the same deliveries, their visibility timeout
// started again, when every message is still under the receipt that attempt gave it and unchanged.
func (q *Queue) replayLocked(now tick, id string, vt time.Duration) ([]Delivery, bool, error) {
	a, ok := q.attempts.byID[id]
	if !ok {
		return nil, false, nil
	}
	msgs := make([]*message, len(a.deliveries))
	for i, d := range a.deliveries {
		h, _ := q.parseHandle(d.ReceiptHandle) // made by this queue
		m := q.lookupLocked(h)
		if m == nil || m.receipt != h.receipt || m.changed {
			return nil, false, reject(ErrAttemptNotRetryable, "value %s for parameter ReceiveRequestAttemptId is invalid", id)
		}
		msgs[i] = m
	}
	for _, m := range msgs {
		if m.state == stateInFlight {
			q.due.remove(m)
		} else {
			q.setStateLocked(m, stateInFlight)
			q.groups.update(m.group)
		}
		m.receivedAt = now
		q.scheduleLocked(m, now+vt)
	}
	out := make([]Delivery, len(a.deliveries))
	copy(out, a.deliveries)
	for i := range out {
		out[i].Attributes = cloneAttributes(out[i].Attributes)
	}
	return out, true, nil
}

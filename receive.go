package fifoq

import (
	"context"
	"strings"
	"time"

	"github.com/fifoq/fifoq/internal/rule"
)

// ReceiveOptions are the parameters of one [Queue.Receive].
type ReceiveOptions struct {
	MaxMessages       int           // 1..10; 0 means 1
	WaitTime          time.Duration // long-poll wait, 0..20s; 0 means the queue's receive wait time (see NoWaitTime)
	VisibilityTimeout time.Duration // 0..12h; 0 means the queue's visibility timeout (see NoVisibilityTimeout)
	AttemptID         string        // FIFO receive request attempt id; ignored on standard queues

	// NoWaitTime makes the receive a short poll, whatever the queue's receive wait time, as a
	// WaitTimeSeconds of 0 given on the wire does; WaitTime must then be 0.
	NoWaitTime bool
	// NoVisibilityTimeout receives the messages with a visibility timeout of 0, whatever the queue's, as a
	// VisibilityTimeout of 0 given on the wire does: each receive counts, and the messages are visible
	// again at once. VisibilityTimeout must then be 0.
	NoVisibilityTimeout bool
}

// Receive returns up to o.MaxMessages visible messages and makes them invisible for the visibility timeout.
//
// On a FIFO queue it takes the available groups (those whose oldest message is visible) in the queue's group
// order (see [WithGroupOrder]; by default the order they became available), and from each group its visible
// prefix: the messages before the first one in flight, filling the request from one group before moving to
// the next. A group with a message in flight gives nothing more until that message is deleted or visible
// again. On a standard queue it returns messages whose visibility timeout ended first,
// then the others in send order.
//
// With a wait (o.WaitTime or the queue's receive wait time) and nothing to return, Receive waits until a
// message is available and returns it at once, or returns no messages when the wait ends. It returns ctx's
// error as soon as ctx is done.
//
// With an AttemptID on a FIFO queue, a retry within 5 minutes returns the same messages with the same receipt
// handles and restarts their visibility timeout, provided none of them was deleted, changed or received
// again since; otherwise it returns ErrAttemptNotRetryable. It returns ErrAttemptNotRetryable too when the
// receive that id names returned more messages than this call can: more than 10 (see [Queue.ReceiveMany]).
func (q *Queue) Receive(ctx context.Context, o ReceiveOptions) ([]Delivery, error) {
	maxMessages, wait, vt, err := q.receiveParams(o, MaxBatchEntries)
	if err != nil {
		return nil, err
	}
	return q.receive(ctx, o, maxMessages, wait, vt)
}

// ReceiveMany is [Queue.Receive] with room for more messages: o.MaxMessages may be 1..10,000, where Receive
// takes at most 10, as SQS does. On a FIFO queue one call can then take
// more than 10 messages of one group, which a second call would not return while the first ones are in
// flight. The other options, the long poll and the errors are those of Receive.
//
// An AttemptID names up to o.MaxMessages messages here. A retry replays them only if it has room for them
// all: a retry by Receive, or by a ReceiveMany with a smaller o.MaxMessages (counting it as 10 if smaller),
// of an attempt that returned more returns ErrAttemptNotRetryable and changes nothing.
func (q *Queue) ReceiveMany(ctx context.Context, o ReceiveOptions) ([]Delivery, error) {
	maxMessages, wait, vt, err := q.receiveParams(o, maxReceiveMany)
	if err != nil {
		return nil, err
	}
	return q.receive(ctx, o, maxMessages, wait, vt)
}

// receive is Receive with its parameters resolved; a wait of 0 is a short poll, whatever the queue's
// receive wait time.
func (q *Queue) receive(ctx context.Context, o ReceiveOptions, maxMessages int, wait, vt time.Duration) ([]Delivery, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := q.check(); err != nil {
		return nil, err
	}
	attemptID := ""
	if q.fifo {
		attemptID = o.AttemptID
	}
	var buf [MaxBatchEntries]take
	got := buf[:]
	if maxMessages > len(buf) { // ReceiveMany
		got = make([]take, maxMessages)
	}
	var deadline tick
	for first := true; ; first = false {
		now := q.lock()
		if first {
			deadline = now + wait
		}
		if attemptID != "" {
			if n, replayed, err := q.replayLocked(now, attemptID, vt, got); replayed || err != nil {
				if werr := q.unlock().wait(q.st); werr != nil {
					return nil, werr
				}
				return q.deliveries(got[:n]), err
			}
		}
		n, stuck := q.takeLocked(now, got[:maxMessages], vt, attemptID)
		var (
			err    error
			waited commit
		)
		if n == 0 && stuck == nil && wait > 0 {
			n, stuck, waited, err = q.waitLocked(ctx, deadline, got[:maxMessages], vt, attemptID)
		}
		done := waited.then(q.unlock())
		if stuck != nil {
			// Past its receive limit, with its dead-letter queue busy: moved now, in the order of locks.
			done = done.then(q.deadLetterLater(stuck, stuck.seq))
		}
		if werr := done.wait(q.st); werr != nil {
			return nil, werr
		}
		if err != nil {
			return nil, err
		}
		if n == 0 && stuck != nil {
			continue // nothing received yet: look again, within the same wait
		}
		return q.deliveries(got[:n]), nil
	}
}

// receiveParams resolves the parameters of a receive of at most limit messages, a zero taking the queue's
// setting, and checks them.
func (q *Queue) receiveParams(o ReceiveOptions, limit int) (maxMessages int, wait, vt time.Duration, err error) {
	maxMessages, wait, vt = o.MaxMessages, o.WaitTime, o.VisibilityTimeout
	if maxMessages == 0 {
		maxMessages = 1
	}
	if err := o.checkNone(); err != nil {
		return maxMessages, wait, vt, err
	}
	c := q.conf()
	wait, vt = setting(wait, o.NoWaitTime, c.waitTime), setting(vt, o.NoVisibilityTimeout, c.visibility)
	checked := ReceiveOptions{MaxMessages: maxMessages, WaitTime: wait, VisibilityTimeout: vt}
	if limit > MaxBatchEntries { // ReceiveMany: past a receive's 10, up to limit
		if maxMessages < 1 || maxMessages > limit {
			return maxMessages, wait, vt, rule.Reject(ErrInvalidMaxMessages, "%d, must be between 1 and %d", maxMessages, limit)
		}
		checked.MaxMessages = 0
	}
	err = checked.Check()
	if err == nil && q.fifo && o.AttemptID != "" {
		err = rule.ID(o.AttemptID, ErrInvalidAttemptID)
	}
	return maxMessages, wait, vt, err
}

// Check returns the error [Queue.Receive] returns for the parameters of o out of their ranges, or nil:
// ErrInvalidMaxMessages, ErrInvalidWaitTime or ErrInvalidVisibilityTimeout. A zero, which means the
// queue's setting, is in range; a duration with its No... field set is not. Check does not check AttemptID,
// which only a FIFO queue reads. A [Source] that is not a Queue calls it to refuse what a Queue refuses.
func (o ReceiveOptions) Check() error {
	if o.MaxMessages != 0 {
		if err := rule.CheckMaxMessages(o.MaxMessages); err != nil {
			return err
		}
	}
	if err := o.checkNone(); err != nil {
		return err
	}
	if wait := o.WaitTime; wait < 0 || wait > maxWaitTime {
		return rule.Reject(ErrInvalidWaitTime, "%v, must be >= 0 and <= %v", wait, maxWaitTime).Says("%s",
			rule.InvalidValue(rule.Seconds(wait), "WaitTimeSeconds", "Must be >= 0 and <= "+rule.Seconds(maxWaitTime)+", if provided."))
	}
	if vt := o.VisibilityTimeout; vt < 0 || vt > maxVisibilityTimeout {
		return rule.Reject(ErrInvalidVisibilityTimeout, "%v, want 0..%v", vt, maxVisibilityTimeout).Says("%s",
			rule.InvalidValue(rule.Seconds(vt), "VisibilityTimeout", "Must be >= 0 and <= "+rule.Seconds(maxVisibilityTimeout)+", if provided."))
	}
	return nil
}

// checkNone refuses a duration given with its No... field set, which asks for a zero.
func (o ReceiveOptions) checkNone() error {
	if o.NoWaitTime && o.WaitTime != 0 {
		return rule.Reject(ErrInvalidWaitTime, "%v with NoWaitTime, want 0", o.WaitTime)
	}
	if o.NoVisibilityTimeout && o.VisibilityTimeout != 0 {
		return rule.Reject(ErrInvalidVisibilityTimeout, "%v with NoVisibilityTimeout, want 0", o.VisibilityTimeout)
	}
	return nil
}

// A take is one message of a receive as it stood under the lock. A message's seq, slot, sentAt and msg never
// change, so a Delivery is built from them after the lock is released; the rest is copied here.
type take struct {
	m               *message
	receipt         uint64
	receiveCount    int32
	firstReceivedAt tick
	origin          *origin // of a message moved from another queue
}

// takeLocked receives up to len(got) visible messages into got and returns how many. A message past its
// receive limit goes to the dead-letter queue instead, and the receive goes on without it; when the
// dead-letter queue's lock cannot be taken now (see lockUnder), the receive stops at that message, leaves it
// where it is, and returns it as stuck, for the caller to move once it has released the lock.
func (q *Queue) takeLocked(now tick, got []take, vt time.Duration, attemptID string) (n int, stuck *message) {
	if q.fifo {
		for n < len(got) && stuck == nil {
			g, ok := q.groups.popOldest()
			if !ok {
				break
			}
			for m := g.msgs.head; m != nil && m.state == StateVisible && n < len(got); {
				nx := next(m, byQueue)
				var moved bool
				if n, moved = q.claimLocked(now, m, vt, got, n); !moved {
					stuck = m
					break
				}
				m = nx
			}
			q.groups.update(g) // a dead-lettered head may leave the group available
		}
	} else {
		for n < len(got) {
			list := &q.retry
			if list.len == 0 {
				list = &q.fresh
			}
			m := list.head
			if m == nil {
				break
			}
			if q.exhausted(m) {
				if !q.deadLetterLocked(m) { // left at the head of its list
					stuck = m
					break
				}
				continue
			}
			list.remove(m)
			m.ready = readyNone
			n, _ = q.claimLocked(now, m, vt, got, n)
		}
	}
	if attemptID != "" && n > 0 {
		if a := q.attempts.add(now, attemptID, got[:n]); a != nil {
			q.putAttemptLocked(a)
		}
	}
	q.counters.Received += uint64(n)
	return n, stuck
}

// claimLocked receives m into got[n], or, past its receive limit, moves it to the dead-letter queue; it
// returns how many got holds then, and false when m is past its limit and could not move now (it is left as
// it was).
func (q *Queue) claimLocked(now tick, m *message, vt time.Duration, got []take, n int) (int, bool) {
	if q.exhausted(m) {
		return n, q.deadLetterLocked(m)
	}
	q.receiveLocked(now, m, vt)
	got[n] = q.takeOfLocked(m)
	return n + 1, true
}

// receiveLocked makes m in flight under a new receipt.
func (q *Queue) receiveLocked(now tick, m *message, vt time.Duration) {
	q.setStateLocked(m, StateInFlight)
	m.receiveCount++
	if m.receiveCount == 1 {
		m.firstReceivedAt = now
	}
	m.receivedAt = now
	m.changed = false
	if m.dueIdx >= 0 { // its retention's due time
		q.due.remove(m)
	}
	q.scheduleLocked(m, now+vt)
	q.putReceiptLocked(m, now+vt, m.receiveCount == 1 && !m.moved)
}

// takeOfLocked records m's current receipt for a Delivery.
func (q *Queue) takeOfLocked(m *message) take {
	t := take{m: m, receipt: m.receipt(), receiveCount: m.receiveCount, firstReceivedAt: m.firstReceivedAt}
	if m.moved {
		t.origin = q.origins[m.seq]
	}
	return t
}

// deliveries builds the Deliveries of a receive, outside the lock. One allocation holds every receipt
// handle, MessageID and sequence number.
func (q *Queue) deliveries(got []take) []Delivery {
	if len(got) == 0 {
		return nil
	}
	per := handleLen + q.idsLen()
	var sb strings.Builder
	sb.Grow(len(got) * per)
	var scratch [handleLen + uuidLen + seqDigits]byte
	for _, t := range got {
		b := q.appendHandle(scratch[:0], handle{slot: t.m.slot, seq: t.m.seq, receipt: t.receipt})
		sb.Write(q.appendIDs(b, t.m.seq))
	}
	s := sb.String()
	out := make([]Delivery, len(got))
	for i, t := range got {
		ids := s[i*per : (i+1)*per]
		d := &out[i] // filled in place: a Delivery is large
		d.Body, d.GroupID, d.DeduplicationID = t.m.body, t.m.groupID, t.m.dedupID
		if x := t.m.extra; x != nil {
			d.Delay, d.TraceHeader = x.delay, x.traceHeader
		}
		d.ReceiptHandle = ids[:handleLen]
		d.MessageID = ids[handleLen : handleLen+uuidLen]
		d.SequenceNumber = ids[handleLen+uuidLen:]
		if t.origin != nil {
			d.MessageID = t.origin.messageID
			d.DeadLetterSource = t.origin.sourceName
		}
		d.ReceiveCount = int(t.receiveCount)
		d.SentAt = q.time(t.m.sentAt)
		d.FirstReceivedAt = q.time(t.firstReceivedAt)
		if t.m.attrs != nil {
			d.Attributes = cloneAttributes(t.m.attrs)
		}
	}
	return out
}

// attemptWindow remembers, for 5 minutes, what each FIFO receive with a receive request attempt id returned
// (spec 2.15). Records come due in the order they were made.
type attemptWindow struct {
	byID  map[string]*attempt
	order []*attempt // order[head:] are live
	head  int
}

type attempt struct {
	id        string
	expiresAt tick
	handles   []handle // what the receive returned
}

func newAttemptWindow() attemptWindow { return attemptWindow{byID: make(map[string]*attempt)} }

// add records the receive of got under attempt id and returns the record, or nil when id has one already.
func (w *attemptWindow) add(now tick, id string, got []take) *attempt {
	if _, ok := w.byID[id]; ok {
		return nil // two long polls with one attempt id both waited: the first to receive keeps it
	}
	a := &attempt{id: id, expiresAt: now + dedupInterval, handles: make([]handle, len(got))}
	for i, t := range got {
		a.handles[i] = handle{slot: t.m.slot, seq: t.m.seq, receipt: t.receipt}
	}
	w.restore(a)
	return a
}

// restore puts a back in the window: a record added now, or read from the store, in the order of expiry.
func (w *attemptWindow) restore(a *attempt) {
	w.byID[a.id] = a
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

// replayLocked answers a retry of the receive with attempt id: the same messages under the same receipts,
// their visibility timeout started again, when every one is still under that receipt and unchanged.
func (q *Queue) replayLocked(now tick, id string, vt time.Duration, got []take) (int, bool, error) {
	a, ok := q.attempts.byID[id]
	if !ok {
		return 0, false, nil
	}
	notRetryable := func() error {
		return rule.Reject(ErrAttemptNotRetryable, "value %s for parameter ReceiveRequestAttemptId is invalid", id).Says("%s",
			rule.InvalidValue(id, "ReceiveRequestAttemptId", "The receiveRequestAttemptId is not valid anymore since the receive call is not retryable."))
	}
	if len(a.handles) > len(got) {
		// A ReceiveMany's attempt retried by a receive with less room: refused, as a changed one is.
		return 0, false, notRetryable()
	}
	for i, h := range a.handles {
		m := q.lookupLocked(h)
		if m == nil || m.receipt() != h.receipt || m.changed {
			return 0, false, notRetryable()
		}
		got[i].m = m
	}
	for i := range a.handles {
		m := got[i].m
		if m.state == StateInFlight {
			q.due.remove(m)
		} else {
			q.setStateLocked(m, StateInFlight)
			q.groups.update(m.group)
		}
		m.receivedAt = now
		q.scheduleLocked(m, now+vt)
		q.putReceiptLocked(m, now+vt, false)
		got[i] = q.takeOfLocked(m)
	}
	q.counters.Received += uint64(len(a.handles))
	return len(a.handles), true, nil
}

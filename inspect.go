package fifoq

import (
	"cmp"
	"encoding/binary"
	"iter"
	"slices"

	"github.com/fifoq/fifoq/internal/rule"
)

// This file holds the side-effect-free looks at a queue's messages other than Messages: a page at a time
// from a cursor, and the blocked groups of a FIFO queue. They are for people looking at a queue (a console,
// a debugging session), not for consumers, and never touch the paths of Send, Receive and Delete.

const (
	maxPageSize = 1000
	// pageScanBudget bounds the messages MessagesAfter visits under one hold of the queue's lock, so a page
	// filtered to a few messages of a long queue does not stall senders: it lets the lock go and takes it
	// again, resuming from a cursor.
	pageScanBudget = 4096
	cursorBytes    = 16 // queue tag, slot, seq
)

// A MessageFilter selects the messages [Queue.MessagesAfter] returns. The zero MessageFilter selects all.
type MessageFilter struct {
	// State selects the messages in that state; 0 selects every state.
	State MessageState
	// GroupID selects the messages of that message group (FIFO only); "" selects every group.
	GroupID string
}

// A pageCursor names a message: where it is (its slot, for an O(1) lookup while it is stored) and which one
// (its sequence number, which grows along the queue's arrival order, to resume after it once it is gone).
type pageCursor struct {
	slot int32
	seq  uint64
}

func (q *Queue) formatCursor(c pageCursor) string {
	var raw [cursorBytes]byte
	binary.BigEndian.PutUint32(raw[0:], q.tag)
	binary.BigEndian.PutUint32(raw[4:], uint32(c.slot))
	binary.BigEndian.PutUint64(raw[8:], c.seq)
	return handleEncoding.EncodeToString(raw[:])
}

func (q *Queue) parseCursor(s string) (pageCursor, error) {
	var raw [cursorBytes]byte
	if handleEncoding.DecodedLen(len(s)) != cursorBytes {
		return pageCursor{}, rule.Reject(ErrInvalidPage, "cursor %q is not a cursor", s)
	}
	if _, err := handleEncoding.Decode(raw[:], []byte(s)); err != nil || binary.BigEndian.Uint32(raw[0:]) != q.tag {
		return pageCursor{}, rule.Reject(ErrInvalidPage, "cursor %q is not a cursor of queue %s", s, q.name)
	}
	return pageCursor{slot: int32(binary.BigEndian.Uint32(raw[4:])), seq: binary.BigEndian.Uint64(raw[8:])}, nil
}

// MessagesAfter returns a page of the stored messages: at most n (1..1000) of those f selects, in the order
// [Queue.Messages] gives them, after the message cursor names ("" starts at the first), and the cursor to
// pass for the next page, "" when there is none. Like Messages it changes nothing; unlike Messages it
// copies only the page, and its snapshots carry a ReceiptHandle. A cursor stays valid while the queue
// lives, even once its message is gone.
//
// The page is not one atomic look: to keep senders and receivers waiting at most a few thousand steps, it
// lets the queue's lock go now and then, and messages that arrive or leave meanwhile may or may not be in
// it; none is returned twice along one walk of the cursors, and a message stored throughout the walk is
// returned once if f selects it throughout.
//
// It costs O(k) for the k messages it visits: from the cursor's message (found in O(1) while it is stored;
// else the walk starts again from the queue's first message, or with f.GroupID from the group's, and skips
// to the cursor) to the last one of the page. A bad cursor (not returned by this queue), an n out of
// 1..1000, a State out of range or a GroupID on a standard queue returns ErrInvalidPage.
func (q *Queue) MessagesAfter(cursor string, n int, f MessageFilter) ([]Snapshot, string, error) {
	var (
		from pageCursor
		err  error
	)
	switch {
	case n < 1 || n > maxPageSize:
		return nil, "", rule.Reject(ErrInvalidPage, "%d messages a page, want 1..%d", n, maxPageSize)
	case f.State > StateDelayed:
		return nil, "", rule.Reject(ErrInvalidPage, "state %v", f.State)
	case f.GroupID != "" && !q.fifo:
		return nil, "", rule.Reject(ErrInvalidPage, "a group id on standard queue %s", q.name)
	}
	started := cursor != ""
	if started {
		if from, err = q.parseCursor(cursor); err != nil {
			return nil, "", err
		}
	}
	// Only messages after the cursor's are returned: by sequence number, which grows along both lists, so
	// that a walk resumed from the front (the cursor's message being gone) skips what came before.
	after, skip := from.seq, started
	var page []Snapshot
	for {
		q.lock()
		m := q.pageStartLocked(started, from, f.GroupID)
		k := q.groupKind(f.GroupID)
		for budget := pageScanBudget; m != nil && budget > 0 && len(page) < n; m, budget = next(m, k), budget-1 {
			if (!skip || m.seq > after) && (f.State == 0 || m.state == f.State) {
				page = append(page, q.snapshotLocked(m))
				page[len(page)-1].ReceiptHandle = q.receiptHandleLocked(m)
			}
			from, started = pageCursor{slot: m.slot, seq: m.seq}, true
		}
		q.unlock()
		switch {
		case m == nil:
			return page, "", nil
		case len(page) == n:
			return page, q.formatCursor(from), nil
		}
	}
}

// groupKind returns the links a page walks: the group's list, or the arrival-order list of all messages.
func (q *Queue) groupKind(group string) linkKind {
	if group != "" {
		return byQueue
	}
	return bySend
}

// pageStartLocked returns the first message of a page: the one after from (the first of all unless
// started), in the queue's arrival order or, with group, in the group's list; nil when there is none.
func (q *Queue) pageStartLocked(started bool, from pageCursor, group string) *message {
	var first *message
	if group != "" {
		g := q.groups.byID[group]
		if g == nil {
			return nil
		}
		first = g.msgs.head
	} else {
		first = q.all.head
	}
	if !started {
		return first
	}
	if m := q.lookupLocked(handle{slot: from.slot, seq: from.seq}); m != nil && (group == "" || m.groupID == group) {
		return next(m, q.groupKind(group))
	}
	// from's message is gone: start again from the front; MessagesAfter skips up to the cursor, a budget
	// of messages at a time.
	return first
}

// receiptHandleLocked returns the handle of m's latest receive for a Snapshot: for a message in flight, and
// on a standard queue for any message (whose Delete takes any handle of it); "" otherwise.
func (q *Queue) receiptHandleLocked(m *message) string {
	if q.fifo && m.state != StateInFlight {
		return ""
	}
	var buf [handleLen]byte
	return string(q.appendHandle(buf[:0], handle{slot: m.slot, seq: m.seq, receipt: m.receipt()}))
}

// snapshotLocked returns a look at m, without its ReceiptHandle.
func (q *Queue) snapshotLocked(m *message) Snapshot {
	s := Snapshot{
		Message:      m.content(),
		MessageID:    q.messageIDLocked(m),
		State:        m.state,
		ReceiveCount: int(m.receiveCount),
		SentAt:       q.time(m.sentAt),
	}
	s.Attributes = cloneAttributes(m.attrs)
	if q.fifo {
		s.SequenceNumber = q.idsFor(m.seq)[uuidLen:]
	}
	if m.receiveCount > 0 {
		s.FirstReceivedAt = q.time(m.firstReceivedAt)
	}
	if m.state != StateVisible {
		s.VisibleAt = q.time(m.dueAt)
		if q.expiresOutOfOrder(m) {
			s.VisibleAt = q.time(q.origins[m.seq].visibleAt)
		}
	}
	if m.moved {
		s.DeadLetterSource = q.origins[m.seq].sourceName
	}
	return s
}

// A BlockedGroup is a message group of a FIFO queue whose later messages wait: a receive serves none of them
// while an earlier message of the group is in flight.
type BlockedGroup struct {
	// GroupID is the group's MessageGroupId.
	GroupID string
	// InFlight holds the group's messages in flight, in send order: the first is the one the group waits on,
	// and its ReceiptHandle lets Delete or ChangeVisibility release the group.
	InFlight []Snapshot
	// Messages counts the group's stored messages, those in flight included.
	Messages int
}

// BlockedGroups returns at most n of the blocked groups of a FIFO queue (none on a standard queue), the
// group blocked longest first: by the receive of its oldest in-flight message. It changes nothing. It costs
// O(d log d) for the d in-flight and delayed messages of the queue, never a walk of all messages.
func (q *Queue) BlockedGroups(n int) []BlockedGroup {
	if !q.fifo || n < 1 {
		return nil
	}
	q.lock()
	defer q.unlock()
	byGroup := make(map[*group][]*message)
	for _, m := range q.due {
		if m.state == StateInFlight {
			byGroup[m.group] = append(byGroup[m.group], m)
		}
	}
	type blocked struct {
		since tick // the earliest receive of its in-flight messages
		msgs  []*message
	}
	groups := make([]blocked, 0, len(byGroup))
	for _, ms := range byGroup {
		slices.SortFunc(ms, func(a, b *message) int { return cmp.Compare(a.seq, b.seq) })
		b := blocked{since: ms[0].receivedAt, msgs: ms}
		for _, m := range ms {
			b.since = min(b.since, m.receivedAt)
		}
		groups = append(groups, b)
	}
	slices.SortFunc(groups, func(a, b blocked) int {
		return cmp.Or(cmp.Compare(a.since, b.since), cmp.Compare(a.msgs[0].seq, b.msgs[0].seq))
	})
	groups = groups[:min(n, len(groups))]
	out := make([]BlockedGroup, len(groups))
	for i, b := range groups {
		h := b.msgs[0]
		out[i] = BlockedGroup{GroupID: h.groupID, Messages: int(h.group.msgs.len), InFlight: make([]Snapshot, len(b.msgs))}
		for j, m := range b.msgs {
			out[i].InFlight[j] = q.snapshotLocked(m)
			out[i].InFlight[j].ReceiptHandle = q.receiptHandleLocked(m)
		}
	}
	return out
}

// Messages returns every stored message as it is now, in the order they arrived: send order, and in a
// dead-letter queue the order messages were moved in. It changes nothing: receive counts and visibility
// stay as they are. The look is taken when iteration starts, in O(n); for a page at a time of a long queue,
// see [Queue.MessagesAfter].
func (q *Queue) Messages() iter.Seq[Snapshot] {
	return func(yield func(Snapshot) bool) {
		q.lock()
		snaps := make([]Snapshot, 0, q.all.len)
		for m := q.all.head; m != nil; m = next(m, bySend) {
			s := q.snapshotLocked(m)
			snaps = append(snaps, s)
		}
		q.unlock()
		for _, s := range snaps {
			if !yield(s) {
				return
			}
		}
	}
}

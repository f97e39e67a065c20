// Package model is a reference model of fifoq's queue semantics, for property tests only.
//
// It is meant to be obviously correct rather than fast: messages live in one slice in send order, every
// operation scans it, and time is an explicit argument. Nothing happens between calls; each call first
// applies, in time order, what came due since the last one: messages becoming visible, messages passing
// their retention, deduplication ids passing their window. A message's state is computed from its times: it
// is hidden before HiddenUntil (delayed if never received, in flight otherwise) and visible from then on.
//
// A FIFO queue also keeps its available groups (those whose oldest message is visible) in a list, in the
// order they became available: a group is appended when it becomes available and removed when it stops
// being so. Receives serve the groups in that order (spec 2.12).
//
// The rules are those of the spec (shared/spec/sqs-semantics.md); comments name them.
package model

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"time"
)

// The SQS limits the model needs.
const (
	DedupInterval        = 5 * time.Minute  // 3.4
	MaxVisibilityTimeout = 12 * time.Hour   // 1.2.1, 1.2.5
	PurgeInterval        = 60 * time.Second // 7.3.3
)

// The errors of the model. Tests map them to fifoq's sentinels.
var (
	ErrReceiptInvalid    = errors.New("model: not a receipt handle")                    // 1.3.4 garbage handle
	ErrReceiptExpired    = errors.New("model: receipt handle expired")                  // 1.3.5, 1.3.7 (FIFO)
	ErrNotAvailable      = errors.New("model: message not available")                   // 1.3.4 change after delete
	ErrVisibilityTimeout = errors.New("model: visibility timeout out of range")         // 1.2.4, 1.2.5
	ErrPurgeInProgress   = errors.New("model: purge within 60 seconds of the last one") // 7.3.3
	ErrNotReceivable     = errors.New("model: message not receivable")                  // a caller bug in Receive
	ErrNotMovable        = errors.New("model: not what a move task moves")              // a caller bug in MoveBack
)

// Config is a queue's configuration.
type Config struct {
	Name         string // what a message moved to a dead-letter queue names as its DeadLetterSource
	FIFO         bool
	Visibility   time.Duration // the queue's visibility timeout
	Delay        time.Duration // the queue's delay
	Retention    time.Duration
	ContentDedup bool // FIFO: a message without a deduplication id is deduplicated by the SHA-256 of its body
	GroupScope   bool // FIFO: deduplicate per message group instead of per queue
	// DLQ is the dead-letter queue (of the same type, without one of its own), nil for none: a message
	// received MaxReceiveCount times moves there on the receive that would raise its count past that (6.3).
	DLQ             *Queue
	MaxReceiveCount int
	// OldestMessageFirst serves FIFO groups by the send order of their oldest message instead of the order
	// they became available (fifoq's GroupOrderOldestMessage).
	OldestMessageFirst bool
}

// Send is what a producer sends.
type Send struct {
	Body            string
	GroupID         string
	DeduplicationID string
	Delay           time.Duration // standard only; 0 means the queue's delay
	Attributes      map[string]string
}

// Message is a stored message.
type Message struct {
	ID              string
	Body            string
	GroupID         string
	DeduplicationID string // FIFO: as sent, or the body's hash (3.3); in a FIFO dead-letter queue the ID (3.11)
	Attributes      map[string]string
	SentAt          time.Time // in a standard dead-letter queue the original send (5.4), so retention counts from it
	HiddenUntil     time.Time // delayed or in flight before this time, visible from it on
	ReceiveCount    int
	FirstReceivedAt time.Time // 1.4.4; zero before the first receive
	Receipt         string    // the current receipt handle; "" before the first receive
	ReceivedAt      time.Time // of the current receipt, for the 12-hour cap

	DeadLetterSource string // in a dead-letter queue: the name of the queue it was moved from
	source           *Queue // ... and that queue

	shown bool // FIFO: its becoming visible at HiddenUntil has been applied to the available groups
}

// State is where a message is in its life.
type State int

// The states, as fifoq's Stats count them.
const (
	Visible State = iota + 1
	InFlight
	Delayed
)

// StateAt returns m's state at now.
func (m *Message) StateAt(now time.Time) State {
	switch {
	case !now.Before(m.HiddenUntil):
		return Visible
	case m.ReceiveCount > 0:
		return InFlight
	}
	return Delayed
}

// Fate is how a message left a queue.
type Fate int

// The fates.
const (
	Deleted      Fate = iota + 1
	Expired           // past its retention (5.2, 5.4)
	Purged            // 7.3.3
	DeadLettered      // moved to the dead-letter queue (6.3)
	MovedOut          // moved out of this dead-letter queue by a move task (6.9)
)

func (f Fate) String() string {
	switch f {
	case Deleted:
		return "deleted"
	case Expired:
		return "expired"
	case Purged:
		return "purged"
	case DeadLettered:
		return "dead-lettered"
	case MovedOut:
		return "moved out"
	}
	return "Fate(?)"
}

// Stats are exact message counts (spec 10.4).
type Stats struct{ Visible, InFlight, Delayed int }

type dedupEntry struct {
	key string
	id  string // of the accepted message
	at  time.Time
}

// Queue is the model of one queue.
type Queue struct {
	cfg       Config
	msgs      []*Message        // stored messages, in send order
	dedup     []dedupEntry      // accepted deduplication keys, oldest first
	receipts  map[string]string // every receipt handle ever given out -> message id
	purgedAt  time.Time
	hasPurged bool
	fates     map[string]Fate // message id -> how it left
	avail     []string        // FIFO: the available groups, in the order they became available
}

// New returns an empty queue.
func New(cfg Config) *Queue {
	return &Queue{cfg: cfg, receipts: map[string]string{}, fates: map[string]Fate{}}
}

// An event is something that came due: a message becoming visible, or passing its retention.
type event struct {
	at     time.Time
	expiry bool // passing its retention; else becoming visible
	index  int  // of the message in send order
	m      *Message
}

// advance applies what came due by now, in time order, at one instant visibility first, then in send
// order: on a FIFO queue, a message becoming visible makes its group available if it is the group's oldest
// (1.2.3, 2.11); a message past its retention (in flight or not: 5.2; in a dead-letter queue counted from
// SentAt as 5.4 sets it) is dropped, which may make its group available. Then it drops the deduplication ids
// past their 5 minutes (3.4).
func (q *Queue) advance(now time.Time) {
	var events []event
	for i, m := range q.msgs {
		if q.cfg.FIFO && !m.shown && !now.Before(m.HiddenUntil) {
			events = append(events, event{at: m.HiddenUntil, index: i, m: m})
		}
		if at := m.SentAt.Add(q.cfg.Retention); !now.Before(at) {
			events = append(events, event{at: at, expiry: true, index: i, m: m})
		}
	}
	slices.SortStableFunc(events, func(a, b event) int {
		switch {
		case !a.at.Equal(b.at):
			return a.at.Compare(b.at)
		case a.expiry != b.expiry:
			if a.expiry {
				return 1
			}
			return -1
		}
		return a.index - b.index
	})
	for _, e := range events {
		if !slices.Contains(q.msgs, e.m) {
			continue // expired earlier in this loop
		}
		if e.expiry {
			q.remove(e.m, Expired)
		} else {
			e.m.shown = true
			q.refresh(e.m.GroupID)
		}
	}
	q.dedup = slices.DeleteFunc(q.dedup, func(e dedupEntry) bool { return !now.Before(e.at.Add(DedupInterval)) })
}

// head returns the oldest stored message of group g, or nil.
func (q *Queue) head(g string) *Message {
	for _, m := range q.msgs {
		if m.GroupID == g {
			return m
		}
	}
	return nil
}

// refresh puts FIFO group g at the end of the available groups if it has just become available (its oldest
// message is visible), and takes it out if it is no longer available.
func (q *Queue) refresh(g string) {
	if !q.cfg.FIFO {
		return
	}
	h := q.head(g)
	available := h != nil && h.shown
	listed := slices.Contains(q.avail, g)
	switch {
	case available && !listed:
		q.avail = append(q.avail, g)
	case !available && listed:
		q.avail = slices.DeleteFunc(q.avail, func(x string) bool { return x == g })
	}
}

// Restart is a restart of the queue at now from a store, which does not keep when groups became available:
// the available groups are ordered again by when their oldest message became visible (its HiddenUntil),
// then by send order (fifoq's recovery).
func (q *Queue) Restart(now time.Time) {
	q.advance(now)
	if q.cfg.OldestMessageFirst {
		return
	}
	slices.SortStableFunc(q.avail, func(a, b string) int {
		ha, hb := q.head(a), q.head(b)
		if c := ha.HiddenUntil.Compare(hb.HiddenUntil); c != 0 {
			return c
		}
		return slices.Index(q.msgs, ha) - slices.Index(q.msgs, hb)
	})
}

// Fate reports how the message id left this queue, if it did.
func (q *Queue) Fate(id string) (Fate, bool) {
	f, ok := q.fates[id]
	return f, ok
}

// remove drops m, which left for fate f.
func (q *Queue) remove(m *Message, f Fate) {
	q.msgs = slices.DeleteFunc(q.msgs, func(x *Message) bool { return x == m })
	q.fates[m.ID] = f
	q.refresh(m.GroupID)
}

// DedupKey returns the key a FIFO send is deduplicated under: its id, or the hex SHA-256 of the body with
// content-based deduplication (3.3), within its group under message-group scope (3.6, 3.7).
func (q *Queue) DedupKey(s Send) string {
	id := s.DeduplicationID
	if id == "" && q.cfg.ContentDedup {
		sum := sha256.Sum256([]byte(s.Body))
		id = hex.EncodeToString(sum[:])
	}
	if q.cfg.GroupScope {
		return s.GroupID + "\x00" + id // group ids are printable ASCII, so NUL separates unambiguously
	}
	return id
}

// Send sends s at now; newID is the id the message gets if it is stored. On a FIFO queue a send whose
// deduplication key was accepted in the last 5 minutes is accepted but not stored (3.4, 3.5): Send returns
// the original's id and duplicate true.
func (q *Queue) Send(now time.Time, s Send, newID string) (id string, duplicate bool) {
	q.advance(now)
	var key string
	if q.cfg.FIFO {
		key = q.DedupKey(s)
		for _, e := range q.dedup {
			if e.key == key {
				return e.id, true
			}
		}
		q.dedup = append(q.dedup, dedupEntry{key: key, id: newID, at: now})
	}
	q.store(now, s, newID)
	return newID, false
}

// SetConfig changes the queue's visibility timeout, delay and retention at now. Retention applies to the
// messages already stored (5.3); on a FIFO queue the new delay applies to the delayed messages, counted from
// their send (4.6): a delay that ended before now ends now; on a standard queue they keep theirs.
func (q *Queue) SetConfig(now time.Time, visibility, delay, retention time.Duration) {
	q.advance(now)
	q.cfg.Visibility, q.cfg.Retention = visibility, retention
	if q.cfg.FIFO && delay != q.cfg.Delay {
		for _, m := range q.msgs {
			if m.StateAt(now) == Delayed {
				m.HiddenUntil = later(m.SentAt.Add(delay), now)
				if !now.Before(m.HiddenUntil) {
					m.shown = true
					q.refresh(m.GroupID)
				}
			}
		}
	}
	q.cfg.Delay = delay
	q.advance(now)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// store adds a new message, deduplication aside.
func (q *Queue) store(now time.Time, s Send, newID string) {
	delay := q.cfg.Delay // 4.1
	if !q.cfg.FIFO && s.Delay > 0 {
		delay = s.Delay // 4.2: a message timer overrides the queue delay
	}
	dedupID := s.DeduplicationID
	if q.cfg.FIFO && dedupID == "" {
		sum := sha256.Sum256([]byte(s.Body)) // delivered with the generated id
		dedupID = hex.EncodeToString(sum[:])
	}
	q.msgs = append(q.msgs, &Message{
		ID: newID, Body: s.Body, GroupID: s.GroupID, DeduplicationID: dedupID, Attributes: s.Attributes,
		SentAt: now, HiddenUntil: now.Add(delay), shown: delay <= 0,
	})
	q.refresh(s.GroupID)
}

// Next returns the ids a receive of up to max messages takes at now, and the ids it moves to the dead-letter
// queue instead (6.3): a visible message already received MaxReceiveCount times.
//
// FIFO, exactly (2.6, 2.9): a group is available when its head (oldest stored message) is visible; groups are
// taken in the order they became available (2.12; with OldestMessageFirst by the send order of their head),
// and from each its visible prefix, the messages before the first hidden one, until max is reached. A
// message past its receive limit met on the way moves to the dead-letter queue and the receive goes on with
// the next one: a dead-lettered head unblocks its group at once (6.5).
//
// Standard: a receive may return any max of the visible messages (best-effort order, 1.1.3), so Next returns
// every visible message under its limit in send order, and every one past it; the caller checks the real
// receive took min(max, len(ids)) of ids, and moved all of dead if it took fewer than max, some of them
// otherwise (the receive stops where it found max).
func (q *Queue) Next(now time.Time, max int) (ids, dead []string) {
	q.advance(now)
	return q.next(now, max, q.msgs)
}

// overLimit reports whether a receive moves m to the dead-letter queue instead of returning it.
func (q *Queue) overLimit(m *Message) bool {
	return q.cfg.DLQ != nil && m.ReceiveCount >= q.cfg.MaxReceiveCount
}

// next is Next over msgs, a subset of the stored messages in send order.
func (q *Queue) next(now time.Time, max int, msgs []*Message) (ids, dead []string) {
	if !q.cfg.FIFO {
		for _, m := range msgs {
			switch {
			case m.StateAt(now) != Visible:
			case q.overLimit(m):
				dead = append(dead, m.ID)
			default:
				ids = append(ids, m.ID)
			}
		}
		return ids, dead
	}
	for _, g := range q.groupOrder(now, msgs) {
		for _, m := range msgs {
			if m.GroupID != g {
				continue
			}
			if m.StateAt(now) != Visible || len(ids) == max {
				break // the end of the visible prefix
			}
			if q.overLimit(m) {
				dead = append(dead, m.ID) // gone: the group's next message is its head now
				continue
			}
			ids = append(ids, m.ID)
		}
	}
	return ids, dead
}

// groupOrder returns the available groups of msgs (a subset of the stored messages in send order), in the
// order they are served.
func (q *Queue) groupOrder(now time.Time, msgs []*Message) []string {
	if !q.cfg.OldestMessageFirst {
		return slices.Clone(q.avail)
	}
	// Group ids in the order of their heads; msgs is in send order, so the first message seen of a group
	// is its head.
	var heads []string
	seen := map[string]bool{}
	for _, m := range msgs {
		if !seen[m.GroupID] {
			seen[m.GroupID] = true
			if m.StateAt(now) == Visible {
				heads = append(heads, m.GroupID)
			}
		}
	}
	return heads
}

// Receive records that a receive at now moved the messages dead to the dead-letter queue, in that order, and
// received the messages ids, the i-th under receipts[i], hidden for vt (1.2.3); it returns their receive
// counts (1.4.3). Every id must be visible, and past its receive limit exactly when it is in dead.
func (q *Queue) Receive(now time.Time, ids, receipts []string, vt time.Duration, dead []string) ([]int, error) {
	q.advance(now)
	for _, id := range dead {
		m := q.find(id)
		if m == nil || m.StateAt(now) != Visible || !q.overLimit(m) {
			return nil, ErrNotReceivable
		}
		q.remove(m, DeadLettered)
		q.cfg.DLQ.acceptDeadLetter(now, m, q)
	}
	counts := make([]int, len(ids))
	for i, id := range ids {
		m := q.find(id)
		if m == nil || m.StateAt(now) != Visible || q.overLimit(m) {
			return nil, ErrNotReceivable
		}
		m.ReceiveCount++
		if m.ReceiveCount == 1 {
			m.FirstReceivedAt = now
		}
		m.Receipt, m.ReceivedAt, m.HiddenUntil = receipts[i], now, now.Add(vt)
		m.shown = false // with vt 0, visible again after this receive: the next call applies it
		q.receipts[receipts[i]] = id
		counts[i] = m.ReceiveCount
		q.refresh(m.GroupID)
	}
	return counts, nil
}

// acceptDeadLetter stores m, moved here at now from src (6.4): it keeps its ID, body, attributes, group and
// receive count (1.4.3), and is visible, with no receipt of this queue. On a FIFO queue its deduplication id
// becomes its ID (3.11) and it counts as sent now, so retention starts again; on a standard queue it keeps
// its SentAt, and retention counts from that (5.4).
func (q *Queue) acceptDeadLetter(now time.Time, m *Message, src *Queue) {
	q.advance(now)
	c := &Message{
		ID: m.ID, Body: m.Body, GroupID: m.GroupID, DeduplicationID: m.DeduplicationID, Attributes: m.Attributes,
		SentAt: m.SentAt, HiddenUntil: now,
		ReceiveCount: m.ReceiveCount, FirstReceivedAt: m.FirstReceivedAt,
		DeadLetterSource: src.cfg.Name, source: src, shown: true,
	}
	if q.cfg.FIFO {
		c.DeduplicationID, c.SentAt = m.ID, now
	}
	q.msgs = append(q.msgs, c) // in the order messages arrive, whatever their SentAt
	q.refresh(c.GroupID)
}

// MoveOrder returns the ids a move task started at now on this dead-letter queue moves, in order: its
// visible messages, oldest first (6.9.4), as Messages lists them; on FIFO only those that keep group order,
// a message moving only after every older message of its group, and, unless OldestMessageFirst, as receives
// would take them: group by group, in the order the groups became available. The spec leaves open the
// order of moved messages sent at the same time in a standard dead-letter queue, which Messages lists in an
// order of its own: the caller compares modulo that.
func (q *Queue) MoveOrder(now time.Time) []string {
	q.advance(now)
	if q.cfg.FIFO && !q.cfg.OldestMessageFirst {
		ids, _ := q.next(now, len(q.msgs), q.msgs)
		return ids
	}
	blocked := map[string]bool{} // FIFO groups with an older message that stays
	var out []string
	for _, m := range q.msgs {
		visible := m.StateAt(now) == Visible
		if q.cfg.FIFO && (!visible || blocked[m.GroupID]) {
			blocked[m.GroupID] = true
			continue
		}
		if visible {
			out = append(out, m.ID)
		}
	}
	return out
}

// MoveBack records a move task of this dead-letter queue, to each message's own source, at now: ids are the
// messages it moved, in the order it moved them: MoveOrder's, up to the order MoveOrder leaves open (MoveBack
// checks the set). Each becomes a new message at the end of its source queue, sent at now with the id newIDs[i],
// the same body, group and attributes, receive count 0, and the source's delay (5.5, 6.9.4); on FIFO it keeps
// the deduplication id it had here, and is not deduplicated: a move is not a retry.
func (q *Queue) MoveBack(now time.Time, ids, newIDs []string) error {
	if !slices.Equal(sortedCopy(ids), sortedCopy(q.MoveOrder(now))) || len(newIDs) != len(ids) {
		return ErrNotMovable
	}
	for _, id := range ids {
		q.find(id).source.advance(now)
	}
	for i, id := range ids {
		m := q.find(id)
		q.remove(m, MovedOut)
		s := Send{Body: m.Body, GroupID: m.GroupID, Attributes: m.Attributes}
		if q.cfg.FIFO {
			s.DeduplicationID = m.DeduplicationID
		}
		m.source.store(now, s, newIDs[i]) // a new message, not deduplicated: a move is not a retry
	}
	return nil
}

func sortedCopy(ids []string) []string {
	s := slices.Clone(ids)
	slices.Sort(s)
	return s
}

func (q *Queue) find(id string) *Message {
	for _, m := range q.msgs {
		if m.ID == id {
			return m
		}
	}
	return nil
}

// Delete deletes the message receipt names (1.3). A message that is gone already is no error. On a standard
// queue any receipt of the message deletes it (1.1.4, 1.3.4). On a FIFO queue only the current receipt does,
// and only while the message is in flight (1.3.5, 1.3.6).
func (q *Queue) Delete(now time.Time, receipt string) error {
	q.advance(now)
	id, ok := q.receipts[receipt]
	if !ok {
		return ErrReceiptInvalid
	}
	m := q.find(id)
	if m == nil {
		return nil
	}
	if q.cfg.FIFO && (m.Receipt != receipt || m.StateAt(now) != InFlight) {
		return ErrReceiptExpired
	}
	q.remove(m, Deleted)
	return nil
}

// ChangeVisibility hides the message receipt names for timeout from now (1.2.4); 0 makes it visible at once
// (1.2.7). The message stays hidden at most 12 hours from its current receive: past that is an error, never
// a clamp (1.2.5). A gone message is ErrNotAvailable (1.3.4). A message that is not in flight is a no-op
// success on a standard queue (1.3.4, recommended reading of the conflict) and ErrReceiptExpired on a FIFO
// queue (1.3.7), as is an earlier receipt on a FIFO queue.
func (q *Queue) ChangeVisibility(now time.Time, receipt string, timeout time.Duration) error {
	q.advance(now)
	if timeout < 0 || timeout > MaxVisibilityTimeout {
		return ErrVisibilityTimeout
	}
	id, ok := q.receipts[receipt]
	if !ok {
		return ErrReceiptInvalid
	}
	m := q.find(id)
	switch {
	case m == nil:
		return ErrNotAvailable
	case q.cfg.FIFO && (m.Receipt != receipt || m.StateAt(now) != InFlight):
		return ErrReceiptExpired
	case m.StateAt(now) != InFlight:
		return nil
	case now.Add(timeout).After(m.ReceivedAt.Add(MaxVisibilityTimeout)):
		return ErrVisibilityTimeout
	}
	m.HiddenUntil = now.Add(timeout)
	if timeout == 0 {
		m.shown = true // visible at once (1.2.7)
		q.refresh(m.GroupID)
	}
	return nil
}

// Purge deletes every message, hidden ones too, and the deduplication history (7.3.3, 3.10), at most once
// every 60 seconds.
func (q *Queue) Purge(now time.Time) error {
	q.advance(now)
	if q.hasPurged && now.Sub(q.purgedAt) < PurgeInterval {
		return ErrPurgeInProgress
	}
	q.hasPurged, q.purgedAt = true, now
	for _, m := range q.msgs {
		q.fates[m.ID] = Purged
	}
	q.msgs, q.dedup, q.avail = nil, nil, nil
	return nil
}

// Stats returns the exact counts at now (10.1, 10.4). On a FIFO queue a message waiting behind an in-flight
// message of its group counts as visible (10.2).
func (q *Queue) Stats(now time.Time) Stats {
	q.advance(now)
	var s Stats
	for _, m := range q.msgs {
		switch m.StateAt(now) {
		case Visible:
			s.Visible++
		case InFlight:
			s.InFlight++
		case Delayed:
			s.Delayed++
		}
	}
	return s
}

// Messages returns copies of the stored messages at now, in the order they arrived: send order, and in a
// dead-letter queue the order messages were moved in.
func (q *Queue) Messages(now time.Time) []Message {
	q.advance(now)
	out := make([]Message, len(q.msgs))
	for i, m := range q.msgs {
		out[i] = *m
	}
	return out
}

// HiddenUntils returns the times at which a stored message becomes visible after now, sorted: the only
// times at which what a receive may take can grow.
func (q *Queue) HiddenUntils(now time.Time) []time.Time {
	q.advance(now)
	var ts []time.Time
	for _, m := range q.msgs {
		if m.HiddenUntil.After(now) {
			ts = append(ts, m.HiddenUntil)
		}
	}
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	return ts
}

// Package model is a reference model of fifoq's queue semantics, for property tests only.
//
// It is meant to be obviously correct rather than fast: messages live in one slice in send order, every
// operation scans it, and time is an explicit argument. Nothing happens between calls; each call first drops
// what has passed its retention or deduplication window at now. A message's state is computed from its
// times, never stored: it is hidden before HiddenUntil (delayed if never received, in flight otherwise) and
// visible from then on.
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
)

// Config is a queue's configuration.
type Config struct {
	FIFO         bool
	Visibility   time.Duration // the queue's visibility timeout
	Delay        time.Duration // the queue's delay
	Retention    time.Duration
	ContentDedup bool // FIFO: a message without a deduplication id is deduplicated by the SHA-256 of its body
	GroupScope   bool // FIFO: deduplicate per message group instead of per queue
}

// Send is what a producer sends.
type Send struct {
	Body            string
	GroupID         string
	DeduplicationID string
	Delay           time.Duration // standard only; 0 means the queue's delay
}

// Message is a stored message.
type Message struct {
	ID              string
	Body            string
	GroupID         string
	SentAt          time.Time
	HiddenUntil     time.Time // delayed or in flight before this time, visible from it on
	ReceiveCount    int
	FirstReceivedAt time.Time // 1.4.4; zero before the first receive
	Receipt         string    // the current receipt handle; "" before the first receive
	ReceivedAt      time.Time // of the current receipt, for the 12-hour cap
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
}

// New returns an empty queue.
func New(cfg Config) *Queue { return &Queue{cfg: cfg, receipts: map[string]string{}} }

// advance drops messages past their retention, in flight or not (5.2), and deduplication ids past their
// 5 minutes (3.4).
func (q *Queue) advance(now time.Time) {
	q.msgs = slices.DeleteFunc(q.msgs, func(m *Message) bool { return !now.Before(m.SentAt.Add(q.cfg.Retention)) })
	q.dedup = slices.DeleteFunc(q.dedup, func(e dedupEntry) bool { return !now.Before(e.at.Add(DedupInterval)) })
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
	delay := q.cfg.Delay // 4.1
	if !q.cfg.FIFO && s.Delay > 0 {
		delay = s.Delay // 4.2: a message timer overrides the queue delay
	}
	q.msgs = append(q.msgs, &Message{
		ID: newID, Body: s.Body, GroupID: s.GroupID,
		SentAt: now, HiddenUntil: now.Add(delay),
	})
	return newID, false
}

// Next returns the ids a receive of up to max messages takes at now.
//
// FIFO, exactly (2.6, 2.9): a group is available when its head (oldest stored message) is visible; groups are
// taken by the send order of their head (fifoq's rule: SQS leaves the order between groups open, 2.12), and
// from each its visible prefix, the messages before the first hidden one, until max is reached.
//
// Standard: a receive may return any max of the visible messages (best-effort order, 1.1.3), so Next returns
// every visible message in send order; the caller checks the real receive took min(max, len) of them.
func (q *Queue) Next(now time.Time, max int) []string {
	q.advance(now)
	var ids []string
	if !q.cfg.FIFO {
		for _, m := range q.msgs {
			if m.StateAt(now) == Visible {
				ids = append(ids, m.ID)
			}
		}
		return ids
	}
	// Group ids in the order of their heads; msgs is in send order, so the first message seen of a group
	// is its head.
	var heads []string
	seen := map[string]bool{}
	for _, m := range q.msgs {
		if !seen[m.GroupID] {
			seen[m.GroupID] = true
			if m.StateAt(now) == Visible {
				heads = append(heads, m.GroupID)
			}
		}
	}
	for _, g := range heads {
		for _, m := range q.msgs {
			if m.GroupID != g {
				continue
			}
			if m.StateAt(now) != Visible || len(ids) == max {
				break // the end of the visible prefix
			}
			ids = append(ids, m.ID)
		}
	}
	return ids
}

// Receive records that the messages ids were received at now, the i-th under receipts[i], hidden for vt
// (1.2.3), and returns their receive counts (1.4.3). Every id must be visible.
func (q *Queue) Receive(now time.Time, ids, receipts []string, vt time.Duration) ([]int, error) {
	q.advance(now)
	counts := make([]int, len(ids))
	for i, id := range ids {
		m := q.find(id)
		if m == nil || m.StateAt(now) != Visible {
			return nil, ErrNotReceivable
		}
		m.ReceiveCount++
		if m.ReceiveCount == 1 {
			m.FirstReceivedAt = now
		}
		m.Receipt, m.ReceivedAt, m.HiddenUntil = receipts[i], now, now.Add(vt)
		q.receipts[receipts[i]] = id
		counts[i] = m.ReceiveCount
	}
	return counts, nil
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
	q.msgs = slices.DeleteFunc(q.msgs, func(x *Message) bool { return x == m })
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
	q.msgs, q.dedup = nil, nil
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

// Messages returns copies of the stored messages at now, in send order.
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

package fifoq

import (
	"crypto/sha256"
	"encoding/hex"
)

// DeduplicationScope says where a FIFO queue looks for an earlier message with the same deduplication id.
type DeduplicationScope uint8

const (
	// DeduplicationScopeQueue deduplicates across all message groups of the queue: the default.
	DeduplicationScopeQueue DeduplicationScope = iota + 1
	// DeduplicationScopeMessageGroup deduplicates within each message group.
	DeduplicationScopeMessageGroup
)

// String returns the SQS attribute value: "queue" or "messageGroup".
func (s DeduplicationScope) String() string {
	switch s {
	case DeduplicationScopeQueue:
		return "queue"
	case DeduplicationScopeMessageGroup:
		return "messageGroup"
	}
	return "DeduplicationScope(invalid)"
}

// dedupWindow remembers the deduplication ids accepted in the last 5 minutes (spec §3). Ids come due in the
// order they were added, so expiry takes them from the front of order: O(1) each, never a scan.
type dedupWindow struct {
	ids   map[string]uint64 // key -> the accepted message's seq, for a duplicate's MessageID and SequenceNumber
	order []dedupExpiry     // in the order added; order[head:] are live
	head  int
}

type dedupExpiry struct {
	key string
	at  tick
}

func newDedupWindow() dedupWindow { return dedupWindow{ids: make(map[string]uint64)} }

// lookup returns the message accepted under key within the window.
func (w *dedupWindow) lookup(key string) (uint64, bool) {
	seq, ok := w.ids[key]
	return seq, ok
}

func (w *dedupWindow) add(key string, seq uint64, now tick) {
	w.ids[key] = seq
	w.order = append(w.order, dedupExpiry{key, now + dedupInterval})
}

// expire forgets the ids accepted 5 minutes or more before now.
func (w *dedupWindow) expire(now tick) {
	for w.head < len(w.order) && w.order[w.head].at <= now {
		delete(w.ids, w.order[w.head].key)
		w.order[w.head] = dedupExpiry{}
		w.head++
	}
	if w.head > 1024 && w.head*2 >= len(w.order) {
		n := copy(w.order, w.order[w.head:])
		clear(w.order[n:])
		w.order = w.order[:n]
		w.head = 0
	}
}

func (w *dedupWindow) clear() {
	clear(w.ids)
	clear(w.order)
	w.order = w.order[:0]
	w.head = 0
}

// dedupKey returns the deduplication id of m on a FIFO queue, its explicit id or else the hex SHA-256 of the
// body alone (3.3), and the key it is looked up under: the id, prefixed by the group under
// DeduplicationScopeMessageGroup (3.7).
func (q *Queue) dedupKey(m *Message) (id, key string) {
	id = m.DeduplicationID
	if id == "" {
		sum := sha256.Sum256([]byte(m.Body))
		id = hex.EncodeToString(sum[:])
	}
	if q.cfg.scope == DeduplicationScopeMessageGroup {
		// Group ids are printable ASCII, so a NUL cannot be part of one.
		return id, m.GroupID + "\x00" + id
	}
	return id, id
}

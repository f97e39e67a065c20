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

// dedupWindow remembers the deduplication ids accepted in the last 5 minutes (spec §3). It holds two
// generations: ids go into cur; when cur is 5 minutes old it becomes prev and the old prev is dropped whole.
// So no id is deleted one by one (a cold hash lookup per message), and an id is dropped only once it is 5
// minutes old; lookups in prev check the age.
type dedupWindow struct {
	cur, prev map[string]dedupEntry
	curSince  tick // when cur started; every id in cur is younger than 5 minutes
}

type dedupEntry struct {
	seq uint64 // the accepted message, for a duplicate's MessageID and SequenceNumber
	at  tick   // when it was accepted
}

func newDedupWindow() dedupWindow {
	return dedupWindow{cur: make(map[string]dedupEntry), prev: make(map[string]dedupEntry)}
}

// lookup returns the message accepted under key in the 5 minutes before now.
func (w *dedupWindow) lookup(key string, now tick) (uint64, bool) {
	if e, ok := w.cur[key]; ok {
		return e.seq, true
	}
	if e, ok := w.prev[key]; ok && now-e.at < dedupInterval {
		return e.seq, true
	}
	return 0, false
}

func (w *dedupWindow) add(key string, seq uint64, now tick) {
	w.cur[key] = dedupEntry{seq: seq, at: now}
}

// expire turns the generations over once cur is 5 minutes old: every id in prev is then older than that.
// It reports whether it did.
func (w *dedupWindow) expire(now tick) bool {
	if now-w.curSince < dedupInterval {
		return false
	}
	clear(w.prev)
	w.cur, w.prev = w.prev, w.cur
	w.curSince = now
	return true
}

func (w *dedupWindow) clear() {
	clear(w.cur)
	clear(w.prev)
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
	if q.conf().scope == DeduplicationScopeMessageGroup {
		// Group ids are printable ASCII, so a NUL cannot be part of one.
		return id, m.GroupID + "\x00" + id
	}
	return id, id
}

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

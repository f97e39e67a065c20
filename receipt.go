package fifoq

import (
	"encoding/base64"
	"encoding/binary"
	"math/rand/v2"

	"github.com/fifoq/fifoq/internal/rule"
)

// Receipt handles: what names a message's receive, how it is written and read, and the slots that find its
// message in O(1).

// A handle is a parsed receipt handle: where the message is, which message, which receive.
type handle struct {
	slot    int32
	seq     uint64
	receipt uint64
}

var handleEncoding = base64.RawURLEncoding

// newTag returns a random queue tag, the first bytes of each of the queue's receipt handles, whose first six
// bits are below 62: so that a handle starts with a letter or a digit, never with '-' or '_', which a
// command line (the AWS CLI's --receipt-handle) would take for an option.
func newTag() uint32 { return rand.Uint32N(62 << 26) }

func (q *Queue) appendHandle(b []byte, h handle) []byte {
	var raw [handleBytes]byte
	binary.BigEndian.PutUint32(raw[0:], q.tag)
	binary.BigEndian.PutUint32(raw[4:], uint32(h.slot))
	binary.BigEndian.PutUint64(raw[8:], h.seq)
	binary.BigEndian.PutUint64(raw[16:], h.receipt)
	return handleEncoding.AppendEncode(b, raw[:])
}

func (q *Queue) parseHandle(s string) (handle, error) {
	var raw [handleBytes]byte
	if len(s) != handleLen {
		return handle{}, handleInvalid(s, "the input receipt handle %q is not a valid receipt handle", s)
	}
	if _, err := handleEncoding.Decode(raw[:], []byte(s)); err != nil || binary.BigEndian.Uint32(raw[0:]) != q.tag {
		return handle{}, handleInvalid(s, "the input receipt handle %q is not a valid receipt handle of queue %s", s, q.name)
	}
	return handle{
		slot:    int32(binary.BigEndian.Uint32(raw[4:])),
		seq:     binary.BigEndian.Uint64(raw[8:]),
		receipt: binary.BigEndian.Uint64(raw[16:]),
	}, nil
}

// handleInvalid rejects the receipt handle s, which is none of this queue's (1.3.4). AWS's message quotes s
// as it was given.
func handleInvalid(s, format string, args ...any) error {
	return rule.Reject(ErrReceiptHandleInvalid, format, args...).Says("The input receipt handle \"%s\" is not a valid receipt handle.", s)
}

// handleExpired rejects the receipt handle s of a message received again since, or whose visibility
// timeout ended: on a FIFO queue it no longer deletes or changes the message (1.3.5).
func handleExpired(s, format string, args ...any) error {
	return rule.Reject(ErrReceiptHandleExpired, format, args...).Says("%s", rule.InvalidValue(s, "ReceiptHandle", "The receipt handle has expired."))
}

// lookupLocked returns the stored message h names, or nil when it is gone.
func (q *Queue) lookupLocked(h handle) *message {
	if h.slot < 0 || int(h.slot) >= len(q.slots) {
		return nil
	}
	if m := q.slots[h.slot]; m != nil && m.seq == h.seq {
		return m
	}
	return nil
}

func (q *Queue) addSlotLocked(m *message) {
	if n := len(q.freeSlots); n > 0 {
		m.slot, q.freeSlots = q.freeSlots[n-1], q.freeSlots[:n-1]
		q.slots[m.slot] = m
		return
	}
	m.slot = int32(len(q.slots))
	q.slots = append(q.slots, m)
}

const (
	handleBytes = 24 // queue tag, slot, seq, receipt
	handleLen   = 32 // base64 of handleBytes
)

package fifoq

import (
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"time"
)

// Message is what a producer sends.
type Message struct {
	// Body is 1 character or more of the characters SQS allows: tab, newline, carriage return, and Unicode
	// from U+0020 except surrogates, U+FFFE and U+FFFF.
	Body string
	// GroupID is the message group: required on FIFO queues, where messages of one group are delivered in
	// send order; accepted on standard queues (fair queues), where it has no effect on order.
	GroupID string
	// DeduplicationID suppresses a second message with the same id for 5 minutes. FIFO only; required
	// unless the queue has content-based deduplication, where a message sent without one gets the hex
	// SHA-256 of its body, and is delivered with it.
	DeduplicationID string
	// Delay is the message timer of a standard queue, 0..15 minutes; 0 means the queue's delay (see
	// NoDelay). FIFO queues reject a delay above 0.
	Delay time.Duration
	// NoDelay sends the message with no delay whatever the queue's delay, as a DelaySeconds of 0 given on
	// the wire does; Delay must then be 0. A FIFO queue accepts it and applies its own delay, as SQS does.
	// It is a request, not part of the message: deliveries do not carry it.
	NoDelay bool
	// Attributes are at most 10 message attributes. They count toward the message size.
	Attributes map[string]Attribute
	// TraceHeader is the AWSTraceHeader system attribute, an AWS X-Ray trace header: at most
	// MaxTraceHeaderLength bytes, "" for none. It does not count toward the message size. It is stored with
	// the message, comes back with each of its deliveries, and goes with it to a dead-letter queue and
	// through a move task, as SQS keeps it.
	TraceHeader string
}

// Attribute is a message attribute value.
type Attribute struct {
	DataType    string // "String", "Number" or "Binary", optionally with a ".custom" suffix
	StringValue string // the value of a String or Number attribute
	BinaryValue []byte // the value of a Binary attribute
}

// SendResult is what a send tells the producer.
type SendResult struct {
	MessageID      string // the message's id (MessageId), which its deliveries carry
	SequenceNumber string // FIFO only: decimal, 20 digits, increasing within a group
	Duplicate      bool   // the send was accepted but suppressed by deduplication (MessageID is the original's)
}

// Delivery is one received message.
type Delivery struct {
	// Message is the message as sent. In a FIFO dead-letter queue its DeduplicationID is the message's
	// MessageID, as on SQS.
	Message
	// MessageID is the id Send returned; it stays the same in a dead-letter queue.
	MessageID string
	// ReceiptHandle names this receive; Delete and ChangeVisibility take it.
	ReceiptHandle string
	// SequenceNumber is the message's place in its queue (FIFO only): 20 decimal digits, increasing
	// within a group. In a FIFO dead-letter queue it is a new one, given at the move.
	SequenceNumber string
	// ReceiveCount is ApproximateReceiveCount: the receives of the message so far, this one included. It
	// carries on in a dead-letter queue.
	ReceiveCount int
	// SentAt is SentTimestamp: when the message was sent, by the queue's clock. In a FIFO dead-letter
	// queue it is the time of the move to that queue, as on SQS; in a standard one, the original send.
	SentAt time.Time
	// FirstReceivedAt is ApproximateFirstReceiveTimestamp: the message's first receive, in the queue it
	// was sent to if it was moved since.
	FirstReceivedAt time.Time
	// DeadLetterSource is set in a dead-letter queue: the name of the queue the message was moved from
	// (DeadLetterQueueSourceArn).
	DeadLetterSource string
}

// tick is a point in time as an offset from the queue's epoch: small, and cheap to compare.
type tick = time.Duration

// message is a stored message. It sits in the queue's send-order list, and either in its group (FIFO) or,
// while visible, in a ready list (standard).
type message struct {
	seq   uint64 // queue-wide send order: the MessageID, the FIFO sequence number, the receipt handle's key
	group *group // FIFO only

	// The message as sent (see content), attributes copied. A Message is not kept whole: its rare fields go
	// to extra, so that the struct stays in its size class (160 bytes).
	body    string
	groupID string
	dedupID string
	attrs   map[string]Attribute
	extra   *messageExtra // nil unless the message has a message timer or a trace header

	slot         int32 // index in Queue.slots
	dueIdx       int32 // index in the due heap; -1 when absent
	receiveCount int32
	state        MessageState // 0 once removed
	ready        uint8        // standard queues: which ready list holds it (readyNone, readyFresh, readyRetry)
	changed      bool         // the visibility of the current receipt was changed (receive attempt ids)
	moved        bool         // moved here from another queue: its MessageID and source are in Queue.origins

	sentAt          tick
	firstReceivedAt tick
	receivedAt      tick // the current receipt's receive, for the 12-hour cap
	dueAt           tick // in flight or delayed: when it becomes visible

	sendLinks  links // Queue.all, in arrival order
	queueLinks links // its group's list (FIFO) or a ready list (standard)
}

type links struct{ prev, next *message }

// messageExtra holds the fields of a Message that few messages have.
type messageExtra struct {
	delay       time.Duration // Message.Delay
	traceHeader string        // Message.TraceHeader
}

// setContent makes m hold the message in, with the attributes attrs (in's, or a copy).
func (m *message) setContent(in *Message, attrs map[string]Attribute) {
	m.body, m.groupID, m.dedupID, m.attrs = in.Body, in.GroupID, in.DeduplicationID, attrs
	m.extra = nil
	if in.Delay != 0 || in.TraceHeader != "" {
		m.extra = &messageExtra{delay: in.Delay, traceHeader: in.TraceHeader}
	}
}

// delay returns the message timer m was sent with.
func (m *message) delay() time.Duration {
	if m.extra == nil {
		return 0
	}
	return m.extra.delay
}

// rawSize is the size of m as sent: the measure of the maximum message size.
func (m *message) rawSize() int {
	n := len(m.body)
	for name, a := range m.attrs {
		n += len(name) + len(a.DataType) + len(a.StringValue) + len(a.BinaryValue)
	}
	return n
}

// content returns the message as sent, sharing its attributes' map.
func (m *message) content() Message {
	c := Message{Body: m.body, GroupID: m.groupID, DeduplicationID: m.dedupID, Attributes: m.attrs}
	if x := m.extra; x != nil {
		c.Delay, c.TraceHeader = x.delay, x.traceHeader
	}
	return c
}

// linkKind names which links of a message a list uses.
type linkKind uint8

const (
	bySend linkKind = iota
	byQueue
)

// receipt names m's current receive in its receipt handles: the receive count, which every receive raises,
// so each receive of a message has a receipt of its own.
func (m *message) receipt() uint64 { return uint64(m.receiveCount) }

func (m *message) links(k linkKind) *links {
	if k == bySend {
		return &m.sendLinks
	}
	return &m.queueLinks
}

// msgList is an intrusive doubly linked list of messages: O(1) to append and to remove any member.
type msgList struct {
	head, tail *message
	len        int32
	kind       linkKind
}

func (l *msgList) pushBack(m *message) {
	ln := m.links(l.kind)
	ln.prev, ln.next = l.tail, nil
	if l.tail != nil {
		l.tail.links(l.kind).next = m
	} else {
		l.head = m
	}
	l.tail = m
	l.len++
}

func (l *msgList) remove(m *message) {
	ln := m.links(l.kind)
	if ln.prev != nil {
		ln.prev.links(l.kind).next = ln.next
	} else {
		l.head = ln.next
	}
	if ln.next != nil {
		ln.next.links(l.kind).prev = ln.prev
	} else {
		l.tail = ln.prev
	}
	ln.prev, ln.next = nil, nil
	l.len--
}

func next(m *message, k linkKind) *message { return m.links(k).next }

const (
	uuidLen   = 36
	seqDigits = 20
)

// appendIDs appends the MessageID of message seq, UUID-shaped (version 8, the custom layout): 8 bytes of the
// queue's random nonce, then seq scrambled by a bijection of 62 bits, so ids are unique per queue and look
// random. On FIFO queues the 20-digit sequence number follows.
func (q *Queue) appendIDs(b []byte, seq uint64) []byte {
	var raw [16]byte
	binary.BigEndian.PutUint64(raw[:8], q.idNonce)
	raw[6] = raw[6]&0x0f | 0x80 // version 8
	const mask62 = 1<<62 - 1
	x := seq * 0x9E3779B97F4A7C15 & mask62
	x ^= x >> 29
	binary.BigEndian.PutUint64(raw[8:], x)
	raw[8] |= 0x80 // variant 10, in the two bits x leaves free
	var hx [32]byte
	hex.Encode(hx[:], raw[:])
	b = append(b, hx[0:8]...)
	b = append(b, '-')
	b = append(b, hx[8:12]...)
	b = append(b, '-')
	b = append(b, hx[12:16]...)
	b = append(b, '-')
	b = append(b, hx[16:20]...)
	b = append(b, '-')
	b = append(b, hx[20:32]...)
	if q.fifo {
		var num [seqDigits]byte
		digits := strconv.AppendUint(num[:0], seq, 10)
		for range seqDigits - len(digits) {
			b = append(b, '0')
		}
		b = append(b, digits...)
	}
	return b
}

// idsLen is the length appendIDs appends.
func (q *Queue) idsLen() int {
	if q.fifo {
		return uuidLen + seqDigits
	}
	return uuidLen
}

// idsFor returns the MessageID of message seq, followed on FIFO queues by its sequence number.
func (q *Queue) idsFor(seq uint64) string {
	var buf [uuidLen + seqDigits]byte
	return string(q.appendIDs(buf[:0], seq))
}

func (q *Queue) messageID(seq uint64) string { return q.idsFor(seq)[:uuidLen] }

// MessageState is where a message is in its life, as [Queue.Messages] shows it.
type MessageState uint8

const (
	// StateVisible messages can be received; on a FIFO queue maybe only once the earlier messages of their
	// group are deleted.
	StateVisible MessageState = iota + 1
	// StateInFlight messages were received and are invisible until their visibility timeout ends.
	StateInFlight
	// StateDelayed messages were sent with a delay that has not ended.
	StateDelayed
)

// String returns "visible", "in flight" or "delayed".
func (s MessageState) String() string {
	switch s {
	case StateVisible:
		return "visible"
	case StateInFlight:
		return "in flight"
	case StateDelayed:
		return "delayed"
	}
	return "MessageState(" + strconv.Itoa(int(s)) + ")"
}

// Snapshot is a look at one stored message, from [Queue.Messages].
type Snapshot struct {
	Message                       // as sent; as for a Delivery in a FIFO dead-letter queue
	MessageID        string       // the id Send returned
	SequenceNumber   string       // FIFO only
	State            MessageState // visible, in flight or delayed
	ReceiveCount     int          // the receives so far (ApproximateReceiveCount)
	SentAt           time.Time    // as Delivery.SentAt
	FirstReceivedAt  time.Time    // zero before the first receive
	VisibleAt        time.Time    // when an in-flight or delayed message becomes visible; zero for visible ones
	DeadLetterSource string       // in a dead-letter queue: the name of the queue the message was moved from
	// ReceiptHandle is set by [Queue.MessagesAfter] and [Queue.BlockedGroups] (never by Messages): for an
	// in-flight message, the handle of its latest receive; on a standard queue, a handle of the message
	// whatever its state. Delete and ChangeVisibility take it as they take a handle from Receive, with the
	// same rules. On a FIFO queue a message that is not in flight has none.
	ReceiptHandle string
}

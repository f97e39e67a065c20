package fifoq

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/fifoq/fifoq/internal/rule"
)

// maxAttemptReceipts bounds the receipts of one attempt record: a ReceiveMany takes up to maxReceiveMany.
const maxAttemptReceipts = maxReceiveMany

// The layout of a store. Keys start with a byte that says what they hold:
//
//	[keyFormat] "fifoq"                       -> the format version
//	[keyQueue] name                           -> a queue: its id, MessageID nonce, receipt tag, sequence limit,
//	                                             last purge
//	[keyData] id(4) 'a' expiresAt(8) attempt  -> a receive request attempt id: the receipts it returned
//	[keyData] id(4) 'd' at(8) key             -> a deduplication key: the sequence number it was accepted as
//	[keyData] id(4) 'm' seq(8) 0              -> a message as stored: what never changes
//	[keyData] id(4) 'm' seq(8) 1              -> a message's receipt: receive count, visibility deadline
//	[keyRecords] ...                          -> the records of a layer above (records.go): a catalogue's
//
// Numbers in keys are big-endian, and times in keys are Unix nanoseconds with the sign bit flipped, so keys
// sort by them: one scan of a queue's data meets its attempt ids and deduplication keys oldest first, then
// its messages in arrival order with each one's receipt right after it, and the expired attempt ids and
// deduplication keys of a queue are one range. Values start with a version byte.
const (
	keyFormat  byte = 0x00
	keyQueue   byte = 0x01
	keyData    byte = 0x02
	keyRecords byte = 0x03

	kindAttempt byte = 'a'
	kindDedup   byte = 'd'
	kindMessage byte = 'm'

	partBody    byte = 0 // the message as stored
	partReceipt byte = 1 // its receipt, once received or changed

	formatVersion  = 1
	recordVersion  = 1
	dataPrefixLen  = 1 + 4 + 1 // keyData, id, kind
	messageKeyLen  = dataPrefixLen + 8 + 1
	formatKeyValue = "fifoq"
)

// ErrStoreCorrupt: a record of a store does not decode, or a store's files are damaged: the store is
// refused rather than read in part.
var ErrStoreCorrupt = errors.New("fifoq: store is corrupt")

func formatKey() []byte { return append([]byte{keyFormat}, formatKeyValue...) }

func queueKey(name string) []byte { return append([]byte{keyQueue}, name...) }

// dataKey appends the key prefix of a queue's records of one kind.
func dataKey(b []byte, id uint32, kind byte) []byte {
	b = append(b, keyData)
	b = binary.BigEndian.AppendUint32(b, id)
	return append(b, kind)
}

// dataRange is the range of every record of queue id.
func dataRange(id uint32) (lo, hi []byte) {
	lo = binary.BigEndian.AppendUint32([]byte{keyData}, id)
	hi = binary.BigEndian.AppendUint32([]byte{keyData}, id+1)
	if id == math.MaxUint32 {
		hi = []byte{keyData + 1}
	}
	return lo, hi
}

func messageKey(b []byte, id uint32, seq uint64, part byte) []byte {
	b = dataKey(b, id, kindMessage)
	b = binary.BigEndian.AppendUint64(b, seq)
	return append(b, part)
}

// sortableTime maps Unix nanoseconds to an unsigned number of the same order.
func sortableTime(ns int64) uint64 { return uint64(ns) ^ 1<<63 }

func timeOfSortable(u uint64) int64 { return int64(u ^ 1<<63) }

// timedKey appends the key of a record that expires: kind, its time, then its own key.
func timedKey(b []byte, id uint32, kind byte, ns int64, key string) []byte {
	b = dataKey(b, id, kind)
	b = binary.BigEndian.AppendUint64(b, sortableTime(ns))
	return append(b, key...)
}

// timedRange is the range of the records of a kind whose time is at most ns.
func timedRange(id uint32, kind byte, ns int64) (lo, hi []byte) {
	lo = dataKey(nil, id, kind)
	hi = binary.BigEndian.AppendUint64(dataKey(nil, id, kind), sortableTime(ns)+1)
	return lo, hi
}

// A queueRecord is what a store keeps about a queue apart from its messages.
type queueRecord struct {
	id       uint32
	nonce    uint64 // Queue.idNonce
	tag      uint32 // Queue.tag
	seqLimit uint64 // no sequence number above it was given out
	purgedAt int64  // Unix nanoseconds of the last purge, 0 for none: a purge waits 60 s for the last
}

func (r *queueRecord) encode(b []byte) []byte {
	b = append(b, recordVersion)
	b = binary.BigEndian.AppendUint32(b, r.id)
	b = binary.BigEndian.AppendUint64(b, r.nonce)
	b = binary.BigEndian.AppendUint32(b, r.tag)
	b = binary.BigEndian.AppendUint64(b, r.seqLimit)
	return binary.BigEndian.AppendUint64(b, uint64(r.purgedAt))
}

func decodeQueueRecord(v []byte) (queueRecord, error) {
	if len(v) != 1+4+8+4+8+8 || v[0] != recordVersion {
		return queueRecord{}, errors.New("bad queue record")
	}
	return queueRecord{
		id:       binary.BigEndian.Uint32(v[1:]),
		nonce:    binary.BigEndian.Uint64(v[5:]),
		tag:      binary.BigEndian.Uint32(v[13:]),
		seqLimit: binary.BigEndian.Uint64(v[17:]),
		purgedAt: int64(binary.BigEndian.Uint64(v[25:])),
	}, nil
}

// Flags of a stored message.
const (
	flagMoved   byte = 1 << iota // moved here from another queue: an origin follows
	flagChanged                  // a receipt's visibility was changed (receive attempt ids)
	flagTraced                   // the message has a trace header: it follows the attributes
)

// A storedMessage is a message record decoded.
type storedMessage struct {
	seq             uint64
	slot            int32
	sentAt          int64 // Unix nanoseconds
	delayUntil      int64 // standard queues: when its delay ends; 0 for none
	receiveCount    int32 // carried from the queue it was moved from
	firstReceivedAt int64 // 0 before the first receive
	msg             Message
	moved           bool
	messageID       string // of a moved message
	source          string // of a moved message
}

// A storedReceipt is a receipt record decoded.
type storedReceipt struct {
	receiveCount    int32
	firstReceivedAt int64
	receivedAt      int64
	visibleAt       int64
	changed         bool
}

// encoder appends the fields of a record.
type encoder struct{ b []byte }

func (e *encoder) uvarint(x uint64) { e.b = binary.AppendUvarint(e.b, x) }
func (e *encoder) varint(x int64)   { e.b = binary.AppendVarint(e.b, x) }
func (e *encoder) str(s string) {
	e.uvarint(uint64(len(s)))
	e.b = append(e.b, s...)
}

// bytesOrNil writes b with a length one higher, so that 0 stands for nil.
func (e *encoder) bytesOrNil(b []byte) {
	if b == nil {
		e.uvarint(0)
		return
	}
	e.uvarint(uint64(len(b)) + 1)
	e.b = append(e.b, b...)
}

// encodeMessage appends the record of m as stored by q.
func (q *Queue) encodeMessage(b []byte, m *message, delayUntil int64) []byte {
	e := encoder{b}
	flags := byte(0)
	var o *origin
	if m.moved {
		flags |= flagMoved
		o = q.origins[m.seq]
	}
	trace := ""
	if m.extra != nil && m.extra.traceHeader != "" {
		flags |= flagTraced
		trace = m.extra.traceHeader
	}
	e.b = append(e.b, recordVersion, flags)
	e.uvarint(uint64(m.slot))
	e.varint(q.unixNano(m.sentAt))
	e.varint(delayUntil)
	e.uvarint(uint64(m.receiveCount))
	if m.receiveCount > 0 {
		e.varint(q.unixNano(m.firstReceivedAt))
	}
	e.varint(int64(m.delay()))
	e.str(m.groupID)
	e.str(m.dedupID)
	e.str(m.body)
	e.uvarint(uint64(len(m.attrs)))
	for name, a := range m.attrs {
		e.str(name)
		e.str(a.DataType)
		e.str(a.StringValue)
		e.bytesOrNil(a.BinaryValue)
	}
	if trace != "" {
		e.str(trace)
	}
	if o != nil {
		e.str(o.messageID)
		e.str(o.sourceName)
	}
	return e.b
}

// encodeReceipt appends the receipt record of m, in flight or visible again at visibleAt.
func (q *Queue) encodeReceipt(b []byte, m *message, visibleAt tick) []byte {
	e := encoder{b}
	flags := byte(0)
	if m.changed {
		flags |= flagChanged
	}
	e.b = append(e.b, recordVersion, flags)
	e.uvarint(uint64(m.receiveCount))
	e.varint(q.unixNano(m.firstReceivedAt))
	e.varint(q.unixNano(m.receivedAt))
	e.varint(q.unixNano(visibleAt))
	return e.b
}

// decoder reads the fields of a record; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

var errShort = errors.New("record too short")

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail(errShort)
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(errShort)
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *decoder) varint() int64 {
	x, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(errShort)
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *decoder) int32() int32 {
	x := d.uvarint()
	if x > math.MaxInt32 {
		d.fail(fmt.Errorf("number %d out of range", x))
		return 0
	}
	return int32(x)
}

func (d *decoder) raw(n uint64) []byte {
	if n > uint64(len(d.b)) {
		d.fail(errShort)
		d.b = nil
		return nil
	}
	s := d.b[:n]
	d.b = d.b[n:]
	return s
}

func (d *decoder) str() string { return string(d.raw(d.uvarint())) }

func (d *decoder) bytesOrNil() []byte {
	n := d.uvarint()
	if n == 0 {
		return nil
	}
	return append([]byte{}, d.raw(n-1)...)
}

func (d *decoder) done() error {
	if d.err == nil && len(d.b) > 0 {
		d.err = fmt.Errorf("%d bytes after the record", len(d.b))
	}
	return d.err
}

func decodeMessage(v []byte) (storedMessage, error) {
	d := decoder{b: v}
	if ver := d.byte(); ver != recordVersion && d.err == nil {
		return storedMessage{}, fmt.Errorf("message record version %d", ver)
	}
	flags := d.byte()
	var s storedMessage
	s.slot = d.int32()
	s.sentAt = d.varint()
	s.delayUntil = d.varint()
	s.receiveCount = d.int32()
	if s.receiveCount > 0 {
		s.firstReceivedAt = d.varint()
	}
	s.msg.Delay = time.Duration(d.varint())
	s.msg.GroupID = d.str()
	s.msg.DeduplicationID = d.str()
	s.msg.Body = d.str()
	n := d.uvarint()
	if n > MaxMessageAttributes {
		d.fail(fmt.Errorf("%d attributes", n))
	}
	if n > 0 && d.err == nil {
		s.msg.Attributes = make(map[string]Attribute, n)
		for range n {
			name := d.str()
			s.msg.Attributes[name] = Attribute{DataType: d.str(), StringValue: d.str(), BinaryValue: d.bytesOrNil()}
		}
	}
	if flags&flagTraced != 0 {
		if s.msg.TraceHeader = d.str(); s.msg.TraceHeader == "" || len(s.msg.TraceHeader) > rule.MaxTraceHeaderLength {
			d.fail(fmt.Errorf("trace header of %d bytes", len(s.msg.TraceHeader)))
		}
	}
	if flags&flagMoved != 0 {
		s.moved = true
		s.messageID = d.str()
		s.source = d.str()
	}
	return s, d.done()
}

func decodeReceipt(v []byte) (storedReceipt, error) {
	d := decoder{b: v}
	if ver := d.byte(); ver != recordVersion && d.err == nil {
		return storedReceipt{}, fmt.Errorf("receipt record version %d", ver)
	}
	flags := d.byte()
	r := storedReceipt{
		changed:         flags&flagChanged != 0,
		receiveCount:    d.int32(),
		firstReceivedAt: d.varint(),
		receivedAt:      d.varint(),
		visibleAt:       d.varint(),
	}
	return r, d.done()
}

// encodeAttempt appends the record of a receive request attempt id: the receipts its receive returned.
func encodeAttempt(b []byte, handles []handle) []byte {
	e := encoder{b}
	e.b = append(e.b, recordVersion)
	e.uvarint(uint64(len(handles)))
	for _, h := range handles {
		e.uvarint(uint64(h.slot))
		e.uvarint(h.seq)
		e.uvarint(h.receipt)
	}
	return e.b
}

func decodeAttempt(v []byte) ([]handle, error) {
	d := decoder{b: v}
	if ver := d.byte(); ver != recordVersion && d.err == nil {
		return nil, fmt.Errorf("attempt record version %d", ver)
	}
	n := d.uvarint()
	if n == 0 || n > maxAttemptReceipts {
		d.fail(fmt.Errorf("%d receipts", n))
	}
	var hs []handle
	for i := uint64(0); i < n && d.err == nil; i++ {
		hs = append(hs, handle{slot: d.int32(), seq: d.uvarint(), receipt: d.uvarint()})
	}
	return hs, d.done()
}

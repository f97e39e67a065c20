package sqsapi

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/sqsmd5"
	"github.com/fifoq/fifoq/storage"
)

// traceIDHeader is the HTTP header of an X-Ray trace: SendMessage and SendMessageBatch take it for the
// AWSTraceHeader of their messages that do not set that system attribute themselves.
const traceIDHeader = "X-Amzn-Trace-Id"

// headerTrace returns the system attributes of a message sent without an AWSTraceHeader of its own (sys
// has none) by a request with an X-Amzn-Trace-Id header: that header as AWSTraceHeader, with the digest
// of it as an attribute, as if given. A header too long for an AWSTraceHeader is ignored. sys is returned
// unchanged when it has a header, or the request none.
func headerTrace(r *http.Request, sys systemAttrs) systemAttrs {
	if sys.traceHeader != "" {
		return sys
	}
	h := r.Header.Get(traceIDHeader)
	if h == "" || len(h) > maxTraceHeaderLen {
		return sys
	}
	return systemAttrs{traceHeader: h, md5: sqsmd5.Attributes(map[string]fifoq.Attribute{
		"AWSTraceHeader": {DataType: "String", StringValue: h}})}
}

// traceStore keeps the AWSTraceHeader system attribute of the messages sent with one, by MessageID. It lives
// beside the queues rather than in fifoq.Message, where a field would cost every stored message 16 bytes
// for an attribute few messages carry. A message keeps its MessageID when it moves to a dead-letter queue,
// so the header follows it there. Entries are dropped once no message could still be stored, after twice
// the longest retention period (a move to a FIFO dead-letter queue starts retention again), or, past
// maxTraces entries, oldest first: a bound on memory, at up to 1 KiB a header. On a durable server each entry
// is also a record of the store, set and deleted with it (records.go), so the headers survive a restart.
type traceStore struct {
	// n is the number of entries, read without mu: get, asked on every receive that wants All system
	// attributes, takes no lock while no message has a trace header.
	n atomic.Int64

	mu      sync.Mutex // guards the fields below
	headers map[string]string
	order   []traceEntry // by time of send; order[head:] are live
	head    int
}

type traceEntry struct {
	id      string
	expires time.Time
}

const (
	traceLife = 2 * 14 * 24 * time.Hour
	maxTraces = 1 << 16

	// maxTraceHeaderLen bounds an AWSTraceHeader value, in bytes; an X-Ray header is about 100.
	maxTraceHeaderLen = 1024
)

// put records the trace header of a message sent at now.
func (t *traceStore) put(id, header string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.putLocked(id, header, now.Add(traceLife), nil)
}

// putLocked records the trace header of a message, to be forgotten at expires. With a batch b, it records
// the changes there too (records.go). t.mu must be held.
func (t *traceStore) putLocked(id, header string, expires time.Time, b storage.Batch) {
	t.evictLocked(expires.Add(-traceLife), b)
	if t.addLocked(id, header, expires) && b != nil {
		b.Set(traceKey(expires, id), encodeTrace(header))
	}
}

// evictLocked forgets the headers that expired by now and, past maxTraces, the oldest; with a batch b, it
// deletes their records there. t.mu must be held.
func (t *traceStore) evictLocked(now time.Time, b storage.Batch) {
	for t.head < len(t.order) && (len(t.order)-t.head >= maxTraces || now.After(t.order[t.head].expires)) {
		if b != nil {
			b.Delete(traceKey(t.order[t.head].expires, t.order[t.head].id))
		}
		delete(t.headers, t.order[t.head].id)
		t.order[t.head] = traceEntry{}
		t.head++
	}
	if t.head > len(t.order)/2 {
		t.order = append(t.order[:0], t.order[t.head:]...)
		t.head = 0
	}
}

// addLocked adds a header, and reports whether its MessageID had none. A MessageID that has a header
// already is not sent again (a duplicate send records none), so its record needs no update. t.mu must be
// held.
func (t *traceStore) addLocked(id, header string, expires time.Time) bool {
	if t.headers == nil {
		t.headers = make(map[string]string)
	}
	_, had := t.headers[id]
	if !had {
		t.order = append(t.order, traceEntry{id, expires})
	}
	t.headers[id] = header
	t.n.Store(int64(len(t.headers)))
	return !had
}

// get returns the trace header of a message.
func (t *traceStore) get(id string) (string, bool) {
	if t.n.Load() == 0 {
		return "", false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	h, ok := t.headers[id]
	return h, ok
}

package sqsapi

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/internal/store"
	"github.com/fifoq/fifoq/storage"
)

// The records of a durable server (Open). fifoq keeps a queue's messages in the store; the server keeps
// beside them what SQS knows of a queue that a fifoq.Queue does not, under keys that start with keyPrefix,
// the byte the store leaves to this package (internal/store.EngineOf):
//
//	[keyPrefix] 'q' name                -> a queue's definition: its account, region and name, its
//	                                       attributes as GetQueueAttributes shows them, its tags, its created
//	                                       and modified times, and its redrive policy (bound, or pending while
//	                                       its dead-letter queue is deleted)
//	[keyPrefix] 'd' name                -> a name deleted less than 60 seconds ago, and when
//	[keyPrefix] 't' expires(8) messageID -> the AWSTraceHeader of a message, until the server forgets it
//	[keyPrefix] 'p'                     -> the plain namespace: the account and region whose queues have their
//	                                       own names in the store
//
// name is the queue's name in fifoq and the store (Server.fifoName): its own name in the plain namespace,
// a hash of its account, region and name elsewhere. The plain namespace is the default account and region
// of the first server opened on the store, recorded then; a store from before namespaces has no such
// record, and its queues are those of the plain namespace, the defaults of the server that opens it.
//
// Every value starts with a version byte, recordVersion. A queue's definition is JSON after it, where
// account, region and name may be missing: a record from before namespaces, of a queue of the plain
// namespace named by its key. The dead-letter queue and the sources of a RedriveAllowPolicy in a
// definition are names in the queue's namespace. A deleted name is the Unix time of its deletion in
// nanoseconds (a varint); at version deletedVersion, the account, region and name follow it, each a uvarint
// length and its bytes. A trace header is its bytes. The plain namespace is JSON. expires is Unix
// nanoseconds, big-endian, with the sign bit flipped, so the trace headers sort oldest first.
//
// Each change of a queue's definition writes the whole definition again, under the queue's lock, so the
// store holds the last one in memory; the action that made it waits for it to be durable after releasing its
// locks (the journal below). A DeleteQueue removes the definition and records the name as deleted, then
// deletes the queue from the store; Open finishes a deletion that a crash interrupted.
const (
	keyPrefix byte = 0x10

	kindQueue   byte = 'q'
	kindDeleted byte = 'd'
	kindTrace   byte = 't'
	kindPlain   byte = 'p'

	recordVersion  byte = 1
	deletedVersion byte = 2 // a deleted name with its account, region and name
)

func recordKey(kind byte, name string) []byte {
	return append([]byte{keyPrefix, kind}, name...)
}

func traceKey(expires time.Time, messageID string) []byte {
	b := []byte{keyPrefix, kindTrace}
	b = binary.BigEndian.AppendUint64(b, uint64(expires.UnixNano())^1<<63)
	return append(b, messageID...)
}

// A queueRecord is a queue's definition as stored.
type queueRecord struct {
	// The queue's namespace and name; all three missing in a record from before namespaces.
	Account string `json:"account,omitempty"`
	Region  string `json:"region,omitempty"`
	Name    string `json:"name,omitempty"`

	Created  int64 `json:"created"` // Unix nanoseconds
	Modified int64 `json:"modified"`

	VisibilityTimeout         time.Duration `json:"visibilityTimeout"`
	Delay                     time.Duration `json:"delay"`
	Retention                 time.Duration `json:"retention"`
	ReceiveWaitTime           time.Duration `json:"receiveWaitTime"`
	MaxMessageSize            int           `json:"maxMessageSize"`
	ContentBasedDeduplication bool          `json:"contentBasedDeduplication,omitempty"`
	DeduplicationScope        string        `json:"deduplicationScope,omitempty"`  // FIFO: queue or messageGroup
	FifoThroughputLimit       string        `json:"fifoThroughputLimit,omitempty"` // FIFO: perQueue or perMessageGroupId

	// RedriveAllowPolicy is the policy given, nil when none was (the default, allowAll, not shown).
	RedriveAllowPolicy *allowRecord `json:"redriveAllowPolicy,omitempty"`

	// DeadLetterQueue is the name of the dead-letter queue of the redrive policy, "" for none. Pending: the
	// policy names a queue deleted since, or one that refused it when created again (queueState.pendingDLQ).
	DeadLetterQueue string `json:"deadLetterQueue,omitempty"`
	MaxReceiveCount int    `json:"maxReceiveCount,omitempty"`
	Pending         bool   `json:"pending,omitempty"`

	Extra map[string]string `json:"extra,omitempty"` // Policy, KMS, SSE: as given
	Tags  map[string]string `json:"tags,omitempty"`
}

type allowRecord struct {
	Permission string   `json:"permission"`        // allowAll, denyAll or byQueue
	Sources    []string `json:"sources,omitempty"` // queue names, in the queue's namespace
}

// recordOfLocked returns qs's definition as stored. qs.mu must be held.
func (s *Server) recordOfLocked(qs *queueState) *queueRecord {
	a := qs.q.Attributes()
	r := &queueRecord{
		Account:           qs.ns.account,
		Region:            qs.ns.region,
		Name:              qs.name,
		Created:           qs.created.UnixNano(),
		Modified:          qs.modified.UnixNano(),
		VisibilityTimeout: a.VisibilityTimeout,
		Delay:             a.Delay,
		Retention:         a.Retention,
		ReceiveWaitTime:   a.ReceiveWaitTime,
		MaxMessageSize:    a.MaxMessageSize,
		Extra:             maps.Clone(qs.extra),
		Tags:              maps.Clone(qs.tags),
	}
	if qs.q.FIFO() {
		r.ContentBasedDeduplication = a.ContentBasedDeduplication
		r.DeduplicationScope = cmpScope(a.DeduplicationScope).String()
		r.FifoThroughputLimit = qs.throughput
	}
	if qs.allowSet {
		r.RedriveAllowPolicy = &allowRecord{Permission: a.RedriveAllowPolicy.Permission.String()}
		for _, fn := range a.RedriveAllowPolicy.Sources {
			r.RedriveAllowPolicy.Sources = append(r.RedriveAllowPolicy.Sources, s.keyOf(fn).name) // in qs.ns: checkSources
		}
	}
	switch {
	case a.DeadLetterQueue != nil:
		r.DeadLetterQueue, r.MaxReceiveCount = s.keyOf(a.DeadLetterQueue.Name()).name, a.MaxReceiveCount // in qs.ns
	case qs.pendingDLQ != "":
		k, _ := parseARN(qs.pendingDLQ) // made by namespace.arn, in qs.ns
		r.DeadLetterQueue, r.MaxReceiveCount, r.Pending = k.name, qs.pendingCount, true
	}
	return r
}

// cmpScope returns the deduplication scope a zero stands for.
func cmpScope(s fifoq.DeduplicationScope) fifoq.DeduplicationScope {
	if s == 0 {
		return fifoq.DeduplicationScopeQueue
	}
	return s
}

func (r *queueRecord) encode() []byte {
	data, err := json.Marshal(r)
	if err != nil {
		panic("sqsapi: encoding a queue record: " + err.Error()) // numbers, strings and maps of strings
	}
	return append([]byte{recordVersion}, data...)
}

// decodeQueueRecord reads a queue's definition and checks what fifoq.New will not. name is its key's.
func decodeQueueRecord(name string, v []byte) (*queueRecord, error) {
	if len(v) == 0 || v[0] != recordVersion {
		return nil, badVersion(v)
	}
	dec := json.NewDecoder(bytes.NewReader(v[1:]))
	dec.DisallowUnknownFields()
	r := &queueRecord{}
	if err := dec.Decode(r); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the definition")
	}
	fifo := strings.HasSuffix(name, ".fifo")
	switch {
	case (r.Account == "") != (r.Name == "") || (r.Account == "") != (r.Region == ""):
		return nil, errors.New("an account, region and name, not all three")
	case r.Name != "" && strings.HasSuffix(r.Name, ".fifo") != fifo:
		return nil, fmt.Errorf("name %s", r.Name)
	case r.Created <= 0 || r.Modified <= 0:
		return nil, fmt.Errorf("created %d, modified %d", r.Created, r.Modified)
	case !fifo && (r.ContentBasedDeduplication || r.DeduplicationScope != "" || r.FifoThroughputLimit != ""):
		return nil, errors.New("FIFO attributes on a standard queue")
	case fifo && r.FifoThroughputLimit != "perQueue" && r.FifoThroughputLimit != "perMessageGroupId":
		return nil, fmt.Errorf("FifoThroughputLimit %q", r.FifoThroughputLimit)
	case r.DeadLetterQueue == "" && (r.MaxReceiveCount != 0 || r.Pending):
		return nil, errors.New("a maxReceiveCount without a dead-letter queue")
	case r.DeadLetterQueue != "" && (r.MaxReceiveCount < 1 || r.MaxReceiveCount > 1000):
		return nil, fmt.Errorf("maxReceiveCount %d", r.MaxReceiveCount)
	}
	if fifo {
		if _, ok := parseScope(r.DeduplicationScope); !ok {
			return nil, fmt.Errorf("DeduplicationScope %q", r.DeduplicationScope)
		}
	}
	if p := r.RedriveAllowPolicy; p != nil {
		if _, ok := parsePermission(p.Permission); !ok {
			return nil, fmt.Errorf("redrivePermission %q", p.Permission)
		}
	}
	for k := range r.Extra {
		if !slices.Contains(extraAttributes, k) {
			return nil, fmt.Errorf("attribute %s", k)
		}
	}
	return r, nil
}

// extraAttributes are the attributes the server stores and returns, and fifoq knows nothing of.
var extraAttributes = []string{"Policy", "KmsMasterKeyId", "KmsDataKeyReusePeriodSeconds", "SqsManagedSseEnabled"}

// parseScope reads a DeduplicationScope attribute, as the API and the records spell it.
func parseScope(v string) (fifoq.DeduplicationScope, bool) {
	switch v {
	case "queue":
		return fifoq.DeduplicationScopeQueue, true
	case "messageGroup":
		return fifoq.DeduplicationScopeMessageGroup, true
	}
	return 0, false
}

// parsePermission reads the redrivePermission of a RedriveAllowPolicy, as the API and the records spell it.
func parsePermission(v string) (fifoq.RedrivePermission, bool) {
	switch v {
	case "allowAll":
		return fifoq.RedriveAllowAll, true
	case "denyAll":
		return fifoq.RedriveDenyAll, true
	case "byQueue":
		return fifoq.RedriveByQueue, true
	}
	return 0, false
}

// allowPolicy returns the redrive allow policy of the record, its sources named by fifoName(ns, source).
func (r *queueRecord) allowPolicy(fifoName func(string) string) fifoq.RedriveAllowPolicy {
	if r.RedriveAllowPolicy == nil {
		return fifoq.RedriveAllowPolicy{}
	}
	p, _ := parsePermission(r.RedriveAllowPolicy.Permission) // checked by decodeQueueRecord
	out := fifoq.RedriveAllowPolicy{Permission: p}
	for _, src := range r.RedriveAllowPolicy.Sources {
		out.Sources = append(out.Sources, fifoName(src))
	}
	return out
}

// allows reports whether the record's redrive allow policy lets source (a name in the queue's namespace) use
// the queue as its dead-letter queue.
func (r *queueRecord) allows(source string) bool {
	if r.RedriveAllowPolicy == nil {
		return true
	}
	switch p, _ := parsePermission(r.RedriveAllowPolicy.Permission); p {
	case fifoq.RedriveAllowAll:
		return true
	case fifoq.RedriveByQueue:
		return slices.Contains(r.RedriveAllowPolicy.Sources, source)
	}
	return false
}

// options returns the fifoq options of the queue the record defines: its attributes, with the dead-letter
// queue dlq (nil for none) and, unless allowAll, its redrive allow policy (fifoName names its sources).
func (r *queueRecord) options(dlq *fifoq.Queue, allowAll bool, fifoName func(string) string) []fifoq.Option {
	opts := []fifoq.Option{
		fifoq.WithVisibilityTimeout(r.VisibilityTimeout),
		fifoq.WithDelay(r.Delay),
		fifoq.WithRetention(r.Retention),
		fifoq.WithReceiveWaitTime(r.ReceiveWaitTime),
		fifoq.WithMaxMessageSize(r.MaxMessageSize),
	}
	if r.ContentBasedDeduplication {
		opts = append(opts, fifoq.WithContentBasedDeduplication())
	}
	if scope, _ := parseScope(r.DeduplicationScope); scope != 0 && scope != fifoq.DeduplicationScopeQueue {
		opts = append(opts, fifoq.WithDeduplicationScope(scope))
	}
	if dlq != nil {
		opts = append(opts, fifoq.WithDeadLetterQueue(dlq, r.MaxReceiveCount))
	}
	if !allowAll {
		opts = append(opts, fifoq.WithRedriveAllowPolicy(r.allowPolicy(fifoName)))
	}
	return opts
}

func encodeDeleted(k queueKey, at time.Time) []byte {
	b := binary.AppendVarint([]byte{deletedVersion}, at.UnixNano())
	for _, s := range []string{k.ns.account, k.ns.region, k.name} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// decodeDeleted reads a deleted name. A record of version 1 has no namespace: the returned key is then
// zero, for a name of the plain namespace.
func decodeDeleted(v []byte) (queueKey, time.Time, error) {
	if len(v) == 0 || v[0] != recordVersion && v[0] != deletedVersion {
		return queueKey{}, time.Time{}, fmt.Errorf("version %d, want %d or %d", v[0], recordVersion, deletedVersion)
	}
	at, n := binary.Varint(v[1:])
	if n <= 0 {
		return queueKey{}, time.Time{}, errors.New("bad time")
	}
	rest := v[1+n:]
	if v[0] == recordVersion {
		if len(rest) != 0 {
			return queueKey{}, time.Time{}, errors.New("bad time")
		}
		return queueKey{}, time.Unix(0, at), nil
	}
	var parts [3]string
	for i := range parts {
		l, n := binary.Uvarint(rest)
		if n <= 0 || l == 0 || uint64(len(rest)-n) < l {
			return queueKey{}, time.Time{}, errors.New("bad account, region or name")
		}
		parts[i], rest = string(rest[n:n+int(l)]), rest[n+int(l):]
	}
	if len(rest) != 0 {
		return queueKey{}, time.Time{}, errors.New("data after the name")
	}
	return queueKey{namespace{account: parts[0], region: parts[1]}, parts[2]}, time.Unix(0, at), nil
}

// A plainRecord is the plain namespace as stored.
type plainRecord struct {
	Account string `json:"account"`
	Region  string `json:"region"`
}

func encodePlain(ns namespace) []byte {
	data, _ := json.Marshal(plainRecord{Account: ns.account, Region: ns.region}) // strings only
	return append([]byte{recordVersion}, data...)
}

func decodePlain(v []byte) (namespace, error) {
	if len(v) == 0 || v[0] != recordVersion {
		return namespace{}, badVersion(v)
	}
	var r plainRecord
	if err := json.Unmarshal(v[1:], &r); err != nil {
		return namespace{}, err
	}
	if r.Account == "" || r.Region == "" {
		return namespace{}, errors.New("no account or region")
	}
	return namespace{account: r.Account, region: r.Region}, nil
}

func encodeTrace(header string) []byte { return append([]byte{recordVersion}, header...) }

func decodeTrace(k, v []byte) (expires time.Time, id, header string, err error) {
	if len(v) == 0 || v[0] != recordVersion {
		return time.Time{}, "", "", badVersion(v)
	}
	if len(k) <= 2+8 || len(v) == 1 || len(v)-1 > maxTraceHeaderLen {
		return time.Time{}, "", "", fmt.Errorf("%d bytes of key, %d of header", len(k), len(v)-1)
	}
	ns := int64(binary.BigEndian.Uint64(k[2:]) ^ 1<<63)
	return time.Unix(0, ns), string(k[2+8:]), string(v[1:]), nil
}

func badVersion(v []byte) error {
	if len(v) == 0 {
		return errors.New("empty value")
	}
	return fmt.Errorf("version %d, want %d", v[0], recordVersion)
}

// recordName names the record of key k in errors.
func recordName(k []byte) string {
	if len(k) >= 2 {
		switch k[1] {
		case kindQueue:
			return "queue record " + string(k[2:])
		case kindDeleted:
			return "deleted-name record " + string(k[2:])
		case kindTrace:
			if len(k) > 2+8 {
				return "AWSTraceHeader record of message " + string(k[2+8:])
			}
		case kindPlain:
			return "plain namespace record"
		case kindTask:
			if name, seq, ok := bytes.Cut(k[2:], []byte{0}); ok && len(seq) == 8 {
				return fmt.Sprintf("move task record %d of queue %s", binary.BigEndian.Uint64(seq), name)
			}
		}
	}
	return fmt.Sprintf("record %q", k)
}

// A journal is what an action committed to the store: the ticket of its last batch, or the error that
// stopped it. The action waits for it (Server.wait) once it has released its locks, so that concurrent
// actions share the disk's syncs; the store makes batches durable in the order they were committed, so
// waiting for the last one waits for all. On a server in memory a journal commits nothing.
type journal struct {
	t   storage.Ticket
	err error
}

// commit commits b, to be synced before the action returns.
func (s *Server) commit(j *journal, b storage.Batch) {
	if j.err != nil {
		return
	}
	if err := s.check(); err != nil {
		j.err = err
		return
	}
	t, err := s.eng.Commit(b, true)
	if err != nil {
		j.err = s.fail(err)
		return
	}
	j.t = t
}

// add records that the action committed the batch of t (from fifoq, through internal/store) after the
// others: j waits for it. t nil: nothing to wait for.
func (j *journal) add(t storage.Ticket) {
	if t != nil && j.err == nil {
		j.t = t
	}
}

// setAttributes changes the attributes of q; on a durable server the wait for the disk is left to j, so
// that the action waits for it after releasing its locks.
func (s *Server) setAttributes(j *journal, q *fifoq.Queue, a fifoq.Attributes) error {
	if s.st == nil {
		return q.SetAttributes(a)
	}
	t, err := store.SetAttributesLater(q, a)
	if err != nil {
		return err
	}
	j.add(t)
	return nil
}

// wait blocks until what j committed is durable.
func (s *Server) wait(j *journal) error {
	if j.err != nil || j.t == nil {
		return j.err
	}
	if err := j.t.Wait(); err != nil {
		return s.fail(err)
	}
	return nil
}

// check returns the error that every change returns once the store failed (a write of the queues' or of
// the server's records failed) or was closed, or nil.
func (s *Server) check() error {
	if s.st == nil {
		return nil
	}
	return s.st.Err()
}

// fail records that a write of the server's records failed: the store fails as a failed write of a queue
// makes it, so that every later change fails too (the definitions in memory may be ahead of the store's),
// until it is opened again. It returns the error the caller returns.
func (s *Server) fail(cause error) error {
	return store.FailStore(s.st, fmt.Errorf("sqsapi records: %w", cause))
}

// putQueueLocked records qs's definition, unless qs was deleted. qs.mu must be held: the definitions of a
// queue reach the store in the order of its changes.
func (s *Server) putQueueLocked(j *journal, qs *queueState) {
	if s.eng == nil || qs.gone {
		return
	}
	b := s.eng.NewBatch()
	b.Set(recordKey(kindQueue, qs.q.Name()), s.recordOfLocked(qs).encode())
	s.commit(j, b)
}

// putTrace records the trace header of a message sent at now, in memory and, on a durable server, in the
// store, forgetting the oldest headers as traceStore.put does.
func (s *Server) putTrace(j *journal, id, header string, now time.Time) {
	if s.eng == nil {
		s.traces.put(id, header, now)
		return
	}
	t := &s.traces
	t.mu.Lock()
	defer t.mu.Unlock()
	b := s.eng.NewBatch()
	t.putLocked(id, header, now.Add(traceLife), b)
	s.commit(j, b) // under t.mu: a header's record is set before the batch that forgets it deletes it
}

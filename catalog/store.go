package catalog

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/internal/rule"
)

// The records of a catalogue in a store, beside the queues' own (codec.go):
//
//	[keyCatalog] 'n'                   -> the default namespace: the account and region whose queues have their
//	                                      own names in the store
//	[keyCatalog] 'q' name              -> a queue's definition: its namespace and name, its settings, its redrive
//	                                      policy (bound, or pending), what it keeps for SQS, its tags and times
//	[keyCatalog] 'd' name              -> a name deleted less than 60 seconds ago: its namespace and name, and when
//	[keyCatalog] 't' name 0x00 seq(8)  -> a move task of the queue, the seq-th the catalogue started (big-endian,
//	                                      so a queue's tasks sort oldest first)
//
// name is the queue's name in fifoq and the store (Catalog.queueName). Every value is catalogVersion and JSON.
// Each change of a queue's definition writes it whole again, under the queue's lock, so the store holds the
// last one in memory; the call that made it waits for it after releasing its locks. A DeleteQueue removes the
// definition and the tasks and records the name as deleted, then deletes the queue from the store;
// Open finishes a deletion that a crash cut short. A move task's record is written by the task (a
// taskRecord): when it starts, with each step (so the count of moved messages is exact after a crash) and when
// it ends; a catalogue that closes pauses its tasks without recording an end, so they go on when it is
// opened again.
const (
	catalogHome     byte = 'n'
	catalogQueue    byte = 'q'
	catalogDeleted  byte = 'd'
	kindCatalogTask byte = 't'

	catalogVersion byte = 1
)

// catalogKeyOf returns the key of a record of that kind and name, in the store's records area.
func catalogKeyOf(kind byte, name string) []byte { return append([]byte{kind}, name...) }

// taskKey returns the key of the seq-th task, of the queue of fifoq name fn.
func taskKey(fn string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(append(catalogKeyOf(kindCatalogTask, fn), 0), seq)
}

// taskRange returns the keys of the tasks of the queue of fifoq name fn.
func taskRange(fn string) (lo, hi []byte) {
	return append(catalogKeyOf(kindCatalogTask, fn), 0), append(catalogKeyOf(kindCatalogTask, fn), 1)
}

// A definitionRecord is a queue's definition as stored. The dead-letter queue and the sources of a redrive
// allow policy are names in the queue's namespace.
type definitionRecord struct {
	Account  string `json:"account"`
	Region   string `json:"region"`
	Name     string `json:"name"`
	Created  int64  `json:"created"` // Unix nanoseconds
	Modified int64  `json:"modified"`

	VisibilityTimeout         time.Duration `json:"visibilityTimeout"`
	Delay                     time.Duration `json:"delay"`
	Retention                 time.Duration `json:"retention"`
	ReceiveWaitTime           time.Duration `json:"receiveWaitTime"`
	MaxMessageSize            int           `json:"maxMessageSize"`
	ContentBasedDeduplication bool          `json:"contentBasedDeduplication,omitempty"`
	DeduplicationScope        uint8         `json:"deduplicationScope,omitempty"` // FIFO: a fifoq.DeduplicationScope
	ThroughputLimit           uint8         `json:"throughputLimit,omitempty"`    // FIFO: a ThroughputLimit

	RedriveAllowPolicy *allowRecord `json:"redriveAllowPolicy,omitempty"`
	DeadLetterQueue    string       `json:"deadLetterQueue,omitempty"`
	MaxReceiveCount    int          `json:"maxReceiveCount,omitempty"`
	Pending            bool         `json:"pending,omitempty"`

	Policy                string            `json:"policy,omitempty"`
	KMSMasterKeyID        string            `json:"kmsMasterKeyId,omitempty"`
	KMSDataKeyReusePeriod time.Duration     `json:"kmsDataKeyReusePeriod,omitempty"`
	SQSManagedSSE         bool              `json:"sqsManagedSse,omitempty"`
	Tags                  map[string]string `json:"tags,omitempty"`
}

type allowRecord struct {
	Permission uint8    `json:"permission"` // a fifoq.RedrivePermission
	Sources    []string `json:"sources,omitempty"`
}

// encodeDefinition returns the record of queue k's definition d.
func encodeDefinition(k catalogKey, d *Definition) []byte {
	r := definitionRecord{
		Account: k.ns.Account, Region: k.ns.Region, Name: k.name,
		Created: d.Created.UnixNano(), Modified: d.Modified.UnixNano(),
		VisibilityTimeout: d.VisibilityTimeout, Delay: d.Delay, Retention: d.Retention,
		ReceiveWaitTime: d.ReceiveWaitTime, MaxMessageSize: d.MaxMessageSize,
		ContentBasedDeduplication: d.ContentBasedDeduplication, DeduplicationScope: uint8(d.DeduplicationScope),
		ThroughputLimit: uint8(d.ThroughputLimit),
		DeadLetterQueue: d.RedrivePolicy.DeadLetterQueue, MaxReceiveCount: d.RedrivePolicy.MaxReceiveCount,
		Pending: d.RedrivePolicy.Pending, Policy: d.Policy, KMSMasterKeyID: d.KMSMasterKeyID,
		KMSDataKeyReusePeriod: d.KMSDataKeyReusePeriod, SQSManagedSSE: d.SQSManagedSSE, Tags: d.Tags,
	}
	if p := d.RedriveAllowPolicy; p != nil {
		r.RedriveAllowPolicy = &allowRecord{Permission: uint8(p.Permission), Sources: p.Sources}
	}
	return encodeRecord(r)
}

// decodeDefinition reads the record of the queue whose fifoq name is fn, and checks it.
func (c *Catalog) decodeDefinition(fn string, v []byte) (catalogKey, *Definition, error) {
	var r definitionRecord
	if err := decodeRecord(v, &r); err != nil {
		return catalogKey{}, nil, err
	}
	k := catalogKey{Namespace{Account: r.Account, Region: r.Region}, r.Name}
	if err := rule.QueueName(k.name); err != nil {
		return k, nil, err
	}
	if want := c.queueName(k.ns, k.name); want != fn {
		return k, nil, fmt.Errorf("queue %s of %v, whose name in the store is %s", k.name, k.ns, want)
	}
	if r.Created <= 0 || r.Modified <= 0 {
		return k, nil, fmt.Errorf("created %d, modified %d", r.Created, r.Modified)
	}
	d := &Definition{
		VisibilityTimeout: r.VisibilityTimeout, Delay: r.Delay, Retention: r.Retention, ReceiveWaitTime: r.ReceiveWaitTime,
		MaxMessageSize: r.MaxMessageSize, ContentBasedDeduplication: r.ContentBasedDeduplication,
		DeduplicationScope: fifoq.DeduplicationScope(r.DeduplicationScope), ThroughputLimit: ThroughputLimit(r.ThroughputLimit),
		RedrivePolicy: RedrivePolicy{DeadLetterQueue: r.DeadLetterQueue, MaxReceiveCount: r.MaxReceiveCount, Pending: r.Pending},
		Policy:        r.Policy, KMSMasterKeyID: r.KMSMasterKeyID, KMSDataKeyReusePeriod: r.KMSDataKeyReusePeriod,
		SQSManagedSSE: r.SQSManagedSSE, Tags: r.Tags, Created: time.Unix(0, r.Created), Modified: time.Unix(0, r.Modified),
	}
	if p := r.RedriveAllowPolicy; p != nil {
		d.RedriveAllowPolicy = &fifoq.RedriveAllowPolicy{Permission: fifoq.RedrivePermission(p.Permission), Sources: p.Sources}
	}
	fifo := fifoName(k.name)
	switch {
	case fifo && (d.DeduplicationScope == 0 || d.ThroughputLimit == 0):
		return k, nil, errors.New("a FIFO queue without a deduplication scope or a throughput limit")
	case !fifo && (d.ContentBasedDeduplication || d.DeduplicationScope != 0 || d.ThroughputLimit != 0):
		return k, nil, errors.New("FIFO settings on a standard queue")
	case d.RedrivePolicy.Pending && d.RedrivePolicy.DeadLetterQueue == "":
		return k, nil, errors.New("a pending redrive policy without a dead-letter queue")
	}
	if err := d.Check(fifo, AllFields); err != nil {
		return k, nil, err
	}
	return k, d, nil
}

// A deletedRecord is a name deleted less than 60 seconds ago.
type deletedRecord struct {
	Account string `json:"account"`
	Region  string `json:"region"`
	Name    string `json:"name"`
	At      int64  `json:"at"` // Unix nanoseconds
}

func encodeDeleted(k catalogKey, at time.Time) []byte {
	return encodeRecord(deletedRecord{Account: k.ns.Account, Region: k.ns.Region, Name: k.name, At: at.UnixNano()})
}

// homeRecord is the default namespace as stored.
type homeRecord struct {
	Account string `json:"account"`
	Region  string `json:"region"`
}

// A taskRecordValue is a move task as stored.
type taskRecordValue struct {
	ID          string              `json:"id"`
	Destination string              `json:"destination,omitempty"` // fifoq name; "" when messages go back to their sources
	Rate        int                 `json:"rate"`
	State       fifoq.MoveTaskState `json:"state"` // running, completed, cancelled or failed
	Moved       int                 `json:"moved"`
	ToMove      int                 `json:"toMove"`
	Failure     string              `json:"failure,omitempty"`
	Started     int64               `json:"started"` // Unix nanoseconds
}

// encode returns t's record with status st: the encoding its fifoq.MoveTask calls for each write of it. A task
// being cancelled is recorded as cancelled: its end.
func (t *catalogTask) encode(st fifoq.MoveTaskStatus) []byte {
	r := taskRecordValue{ID: t.id, Rate: st.Rate, State: st.State, Moved: st.Moved, ToMove: st.ToMove,
		Failure: st.Failure, Started: st.StartedAt.UnixNano()}
	r.Destination = t.destFn
	if r.State == fifoq.MoveTaskCancelling {
		r.State = fifoq.MoveTaskCancelled
	}
	return encodeRecord(r)
}

func encodeRecord(r any) []byte {
	data, err := json.Marshal(r)
	if err != nil {
		panic("catalog: encoding a catalogue record: " + err.Error()) // numbers, strings and maps of strings
	}
	return append([]byte{catalogVersion}, data...)
}

// decodeRecord reads a record into r, strictly.
func decodeRecord(v []byte, r any) error {
	if len(v) == 0 {
		return errors.New("empty value")
	}
	if v[0] != catalogVersion {
		return fmt.Errorf("version %d, want %d", v[0], catalogVersion)
	}
	dec := json.NewDecoder(bytes.NewReader(v[1:]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(r); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the record")
	}
	return nil
}

// recordName names the record of key k in errors.
func recordName(k []byte) string {
	if len(k) >= 1 {
		switch k[0] {
		case catalogQueue:
			return "catalogue record of queue " + string(k[1:])
		case catalogDeleted:
			return "catalogue record of deleted queue " + string(k[1:])
		case catalogHome:
			return "catalogue record of the default namespace"
		case kindCatalogTask:
			if name, seq, ok := bytes.Cut(k[1:], []byte{0}); ok && len(seq) == 8 {
				return fmt.Sprintf("catalogue record of move task %d of queue %s", binary.BigEndian.Uint64(seq), name)
			}
		}
	}
	return fmt.Sprintf("catalogue record %q", k)
}

// putDefinitionLocked records e's definition, unless e was deleted. e.mu must be held (or c.mu, for an entry
// nobody else can reach yet): the definitions of a queue reach the store in the order of its changes.
func (c *Catalog) putDefinitionLocked(j *journal, e *catalogEntry) {
	if c.st == nil || e.gone {
		return
	}
	b := c.rec.NewBatch()
	d := c.definitionLocked(e)
	b.Set(catalogKeyOf(catalogQueue, e.q.Name()), encodeDefinition(e.key, &d))
	c.commit(j, b)
}

// storedCatalog is what Open reads of a store: the records, by fifoq name.
type storedCatalog struct {
	home    *Namespace // nil: not recorded
	queues  map[string]*storedQueue
	deleted map[string]deletedRecord
	tasks   map[string][]storedTask
	topics  storedTopics
}

type storedQueue struct {
	key catalogKey
	def *Definition
}

type storedTask struct {
	seq uint64
	r   taskRecordValue
}

// Open returns the catalogue kept in st, or a new, empty one when st holds none: its queues with
// their messages (each opened on st), their definitions and redrive policies (bound to their dead-letter
// queue, or pending, as they were), the names deleted less than 60 seconds ago (so the rule counts the time
// the program was down) and the last 10 move tasks of each queue, a task that was running going on from its
// counts. It finishes a DeleteQueue that a crash cut short. Queues in st without a definition (made with [New]
// and [fifoq.WithStore]) are left alone.
//
// A record that does not decode returns fifoq.ErrStoreCorrupt, naming it: the catalogue is never opened in part.
// The queues of st must not be open already (fifoq.ErrQueueOpen). Open does not close st on an error, and
// the queues it opened before the error stay open on st (with no move task running): close st. Call [Catalog.Close] when done with the
// catalogue, then close st.
func Open(st *fifoq.Store, opts ...Option) (*Catalog, error) {
	if st == nil {
		return nil, errors.New("catalog: Open: nil store")
	}
	c := New(opts...)
	c.st, c.rec = st, st.Records()
	c.deletions = 1 // a queue may hold messages of a queue deleted before the restart
	sc, err := c.readRecords()
	if err != nil {
		return nil, err
	}
	if err := c.recover(sc); err != nil {
		return nil, err
	}
	return c, nil
}

// errBadRecord stops a scan at a record that cannot be used.
var errBadRecord = errors.New("catalog: bad record")

// corrupt returns the error of a record that cannot be used.
func (c *Catalog) corrupt(k []byte, err error) error {
	return fmt.Errorf("%w: %s: %s: %w", fifoq.ErrStoreCorrupt, c.st, recordName(k), err)
}

// readRecords reads every record of the catalogue.
func (c *Catalog) readRecords() (*storedCatalog, error) {
	sc := &storedCatalog{queues: make(map[string]*storedQueue), deleted: make(map[string]deletedRecord),
		tasks: make(map[string][]storedTask)}
	var raw [][2][]byte // the definitions, decoded once the default namespace is known
	var bad error
	err := c.rec.Scan(nil, nil, func(k, v []byte) error {
		var err error
		switch {
		case len(k) == 1 && k[0] == catalogHome:
			var h homeRecord
			err = decodeRecord(v, &h)
			sc.home = &Namespace{Account: h.Account, Region: h.Region}
		case len(k) < 2:
			err = errors.New("unknown key")
		case k[0] == catalogQueue:
			raw = append(raw, [2][]byte{bytes.Clone(k), bytes.Clone(v)})
		case k[0] == catalogDeleted:
			var d deletedRecord
			if err = decodeRecord(v, &d); err == nil && (d.Name == "" || d.At <= 0) {
				err = fmt.Errorf("name %q, deleted at %d", d.Name, d.At)
			}
			sc.deleted[string(k[1:])] = d
		case k[0] == catalogTopicKind || k[0] == catalogSubscriptionKind:
			_, err = readTopicRecord(&sc.topics, k, v)
		case k[0] == kindCatalogTask:
			var fn string
			var t storedTask
			if fn, t, err = decodeTask(k, v); err == nil {
				sc.tasks[fn] = append(sc.tasks[fn], t)
			}
		default:
			err = errors.New("unknown key")
		}
		if err != nil {
			bad = c.corrupt(bytes.Clone(k), err)
			return errBadRecord
		}
		return nil
	})
	if bad != nil {
		return nil, bad
	}
	if err != nil {
		return nil, fmt.Errorf("catalog: reading the catalogue of %s: %w", c.st, err)
	}
	if sc.home != nil {
		c.home = *sc.home
	}
	for _, kv := range raw {
		fn := string(kv[0][1:])
		k, d, err := c.decodeDefinition(fn, kv[1])
		if err != nil {
			return nil, c.corrupt(kv[0], err)
		}
		sc.queues[fn] = &storedQueue{key: k, def: d}
	}
	return sc, nil
}

func decodeTask(k, v []byte) (fn string, t storedTask, err error) {
	name, seq, ok := bytes.Cut(k[1:], []byte{0})
	if !ok || len(seq) != 8 || len(name) == 0 {
		return "", t, errors.New("bad key")
	}
	if err := decodeRecord(v, &t.r); err != nil {
		return "", t, err
	}
	r := &t.r
	switch {
	case r.ID == "":
		return "", t, errors.New("no id")
	case r.State != fifoq.MoveTaskRunning && r.State != fifoq.MoveTaskCompleted && r.State != fifoq.MoveTaskCancelled && r.State != fifoq.MoveTaskFailed:
		return "", t, fmt.Errorf("state %d", r.State)
	case r.Rate < 0 || r.Rate > rule.MaxMoveRate || r.Moved < 0 || r.ToMove < 0 || r.Started <= 0:
		return "", t, fmt.Errorf("rate %d, moved %d, to move %d, started %d", r.Rate, r.Moved, r.ToMove, r.Started)
	}
	t.seq = binary.BigEndian.Uint64(seq)
	return string(name), t, nil
}

// recover re-creates the catalogue from its records.
func (c *Catalog) recover(sc *storedCatalog) error {
	now := c.now()
	tidy := c.rec.NewBatch() // records of no more use, and the default namespace
	if sc.home == nil {
		tidy.Set([]byte{catalogHome}, encodeRecord(homeRecord{Account: c.home.Account, Region: c.home.Region}))
	}

	// Deleted names: finish the deletion of a queue that a crash interrupted.
	inStore := make(map[string]bool)
	for _, name := range c.st.Queues() {
		inStore[name] = true
	}
	for _, fn := range sortedKeys(sc.deleted) {
		d := sc.deleted[fn]
		k := catalogKey{Namespace{Account: d.Account, Region: d.Region}, d.Name}
		if want := c.queueName(k.ns, k.name); want != fn {
			return c.corrupt(catalogKeyOf(catalogDeleted, fn), fmt.Errorf("queue %s of %v, whose name in the store is %s", k.name, k.ns, want))
		}
		if sc.queues[fn] != nil { // created again: the record was about to go
			tidy.Delete(catalogKeyOf(catalogDeleted, fn))
			continue
		}
		if inStore[fn] {
			if err := c.st.DeleteQueue(fn); err != nil {
				return fmt.Errorf("catalog: finishing the deletion of queue %s: %w", fn, err)
			}
		}
		at := time.Unix(0, d.At)
		if now.Sub(at) >= deletedReuseDelay {
			tidy.Delete(catalogKeyOf(catalogDeleted, fn))
			continue
		}
		c.deleted[k] = at
		c.rememberName(fn, k)
	}
	if err := c.recoverQueues(sc.queues, inStore); err != nil {
		return err
	}
	if err := c.recoverTopics(&sc.topics, tidy); err != nil {
		return err
	}
	// The tasks last, since a running one starts moving: on an error from here on, the tasks resumed are
	// halted (as Close halts them, their records untouched), so none runs on for a catalogue not opened.
	if err := c.recoverTasks(sc.tasks, tidy); err != nil {
		_ = c.Close() // it returns nil
		return err
	}
	// No sync: what is not durable is tidied again at the next open.
	if _, err := c.rec.Commit(tidy, false); err != nil {
		_ = c.Close() // it returns nil
		return err
	}
	return nil
}

// recoverQueues re-creates the queues of the records, each on the store, dead-letter queues before their
// sources. qs are by fifoq name.
func (c *Catalog) recoverQueues(qs map[string]*storedQueue, inStore map[string]bool) error {
	dlqOf := func(sq *storedQueue) string { // the fifoq name of its dead-letter queue, in its namespace
		if p := sq.def.RedrivePolicy; p.DeadLetterQueue != "" {
			return c.queueName(sq.key.ns, p.DeadLetterQueue)
		}
		return ""
	}
	// The order: a queue after the dead-letter queue its policy is bound to, where the policies form no
	// cycle. A queue whose dead-letter queue comes after it (its policy closes a cycle, or names the queue
	// itself) is created without its policy, which is bound once every queue is there.
	var order []string
	state := make(map[string]int) // 1: being visited, 2: ordered
	var visit func(fn string)
	visit = func(fn string) {
		if state[fn] != 0 {
			return
		}
		state[fn] = 1
		if sq := qs[fn]; !sq.def.RedrivePolicy.Pending && qs[dlqOf(sq)] != nil {
			visit(dlqOf(sq))
		}
		state[fn] = 2
		order = append(order, fn)
	}
	for _, fn := range sortedKeys(qs) {
		visit(fn)
	}

	// A dead-letter queue whose redrive allow policy refuses a source bound to it (the policy changed after
	// the source took it) is created allowing all, and gets its policy once its sources are bound.
	refusing := make(map[string]bool)
	for _, sq := range qs {
		if d := qs[dlqOf(sq)]; d != nil && !sq.def.RedrivePolicy.Pending && d.def.RedriveAllowPolicy != nil &&
			!d.def.RedriveAllowPolicy.Allows(sq.key.name) {
			refusing[dlqOf(sq)] = true
		}
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	var closing []string // the queues created without their bound policy, which closes a cycle
	for _, fn := range order {
		sq := qs[fn]
		d := sq.def
		p := d.RedrivePolicy
		allow := d.RedriveAllowPolicy
		if refusing[fn] {
			d.RedriveAllowPolicy = nil // before the copy below: the queue is made allowing all
		}
		create := d
		if p.DeadLetterQueue != "" && !p.Pending {
			switch {
			case c.byName[dlqOf(sq)] != nil:
			case qs[dlqOf(sq)] != nil: // later in the order: the policy closes a cycle
				closing = append(closing, fn)
				without := *d
				without.RedrivePolicy = RedrivePolicy{}
				create = &without
			default:
				c.warn("fifoq: the dead-letter queue of a redrive policy is not there: the policy is pending",
					"queue", sq.key.name, "dead_letter_queue", p.DeadLetterQueue)
				d.RedrivePolicy.Pending = true
			}
		}
		if !inStore[fn] {
			c.warn("fifoq: a queue defined has no messages stored: it is created empty", "queue", sq.key.name, "store", c.st)
		}
		opts, err := c.optionsLocked(sq.key.ns, create, nil)
		q, err2 := fifoq.New(fn, opts...)
		if err == nil {
			err = err2
		}
		if p.DeadLetterQueue != "" && !d.RedrivePolicy.Pending && (errors.Is(err, fifoq.ErrInvalidRedrivePolicy) || errors.Is(err, fifoq.ErrRedriveNotAllowed)) {
			c.warn("fifoq: the redrive policy of a queue is refused by its dead-letter queue: the policy is pending",
				"queue", sq.key.name, "dead_letter_queue", p.DeadLetterQueue, "error", err)
			d.RedrivePolicy.Pending = true
			opts, _ = c.optionsLocked(sq.key.ns, d, nil)
			q, err = fifoq.New(fn, opts...)
		}
		if err != nil {
			if fifoq.ErrorCode(err) != "" {
				return c.corrupt(catalogKeyOf(catalogQueue, fn), err)
			}
			return fmt.Errorf("catalog: opening queue %s of %v: %w", sq.key.name, sq.key.ns, err)
		}
		d.RedriveAllowPolicy = allow
		e := &catalogEntry{q: q, key: sq.key, created: d.Created, def: *d}
		if !d.RedrivePolicy.Pending {
			e.def.RedrivePolicy = RedrivePolicy{} // bound: its Queue's
		} else {
			c.pendLocked(e)
		}
		c.addLocked(e)
	}
	for _, fn := range closing {
		e, p := c.byName[fn], qs[fn].def.RedrivePolicy
		a := e.q.Attributes()
		a.DeadLetterQueue, a.MaxReceiveCount = c.byName[dlqOf(qs[fn])].q, p.MaxReceiveCount
		err := e.q.SetAttributes(a)
		switch {
		case errors.Is(err, fifoq.ErrInvalidRedrivePolicy) || errors.Is(err, fifoq.ErrRedriveNotAllowed):
			c.warn("fifoq: the redrive policy of a queue is refused by its dead-letter queue: the policy is pending",
				"queue", e.key.name, "dead_letter_queue", p.DeadLetterQueue, "error", err)
			e.def.RedrivePolicy = p
			e.def.RedrivePolicy.Pending = true
			c.pendLocked(e)
		case err != nil:
			if fifoq.ErrorCode(err) != "" {
				return c.corrupt(catalogKeyOf(catalogQueue, fn), err)
			}
			return fmt.Errorf("catalog: opening queue %s of %v: %w", e.key.name, e.key.ns, err)
		}
	}
	for _, fn := range sortedKeys(refusing) {
		e := c.byName[fn]
		a := e.q.Attributes()
		a.RedriveAllowPolicy = c.allowPolicy(e.key.ns, e.def.RedriveAllowPolicy)
		if err := e.q.SetAttributes(a); err != nil {
			if fifoq.ErrorCode(err) != "" {
				return c.corrupt(catalogKeyOf(catalogQueue, fn), err)
			}
			return fmt.Errorf("catalog: opening queue %s of %v: %w", e.key.name, e.key.ns, err)
		}
	}
	return nil
}

// recoverTasks re-creates the move tasks of the records, after the queues: each queue's last rule.MaxListedMoveTasks,
// a running one going on from its counts. A task whose source is gone, or was deleted and created again
// since the task started, is deleted in tidy, as are the older tasks; a running task whose destination is
// gone ends FAILED, as a task whose destination is deleted while it runs does.
func (c *Catalog) recoverTasks(tasks map[string][]storedTask, tidy *fifoq.RecordBatch) error {
	for _, fn := range sortedKeys(tasks) {
		list := tasks[fn]
		slices.SortFunc(list, func(a, b storedTask) int { return cmp.Compare(a.seq, b.seq) })
		src := c.byName[fn]
		for i, st := range list {
			c.taskSeq = max(c.taskSeq, st.seq)
			if src == nil || i < len(list)-rule.MaxListedMoveTasks || time.Unix(0, st.r.Started).Before(src.created) {
				tidy.Delete(taskKey(fn, st.seq))
				continue
			}
			if err := c.resumeTask(src, fn, st); errors.Is(err, fifoq.ErrMoveTaskRunning) {
				// Two running tasks of one queue, which no change of the catalogue records: the later is dropped.
				c.warn("fifoq: a second running move task of a queue is stored: it is dropped", "queue", src.key.name,
					"record", recordName(taskKey(fn, st.seq)))
				tidy.Delete(taskKey(fn, st.seq))
			} else if err != nil {
				return err
			}
		}
	}
	return nil
}

// resumeTask re-creates the task of a record of queue src.
func (c *Catalog) resumeTask(src *catalogEntry, fn string, st storedTask) error {
	r := st.r
	t := &catalogTask{id: r.ID, source: src, key: taskKey(fn, st.seq)}
	status := fifoq.MoveTaskStatus{State: r.State, Moved: r.Moved, ToMove: r.ToMove, Rate: r.Rate,
		StartedAt: time.Unix(0, r.Started), Failure: r.Failure}
	var dest *fifoq.Queue
	if r.Destination != "" {
		// A destination deleted since is still named: the task is not one that returned messages to their
		// sources.
		t.destName, t.destFn, status.Destination = c.keyOf(r.Destination).name, r.Destination, r.Destination
		if t.dest = c.byName[r.Destination]; t.dest == nil || t.dest.key.ns != src.key.ns {
			t.dest = nil
			if status.State == fifoq.MoveTaskRunning {
				status.State, status.Failure = fifoq.MoveTaskFailed, failedNonExistent
			}
		} else {
			dest = t.dest.q
		}
	}
	task, _, err := src.q.StartMoveTaskNoWait(dest, r.Rate, fifoq.MoveTaskOptions{
		Record: &fifoq.TaskRecord{Key: t.key, Encode: t.encode}, Resume: &status})
	if err != nil {
		return fmt.Errorf("catalog: resuming a move task of %s: %w", src.key.name, err)
	}
	t.task = task
	c.tasks[t.id] = t
	src.tasks = append(src.tasks, t)
	return nil
}

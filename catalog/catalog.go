package catalog

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/internal/rule"
)

// A Namespace is an account and a region, as Amazon SQS scopes queue names: the same name in two namespaces
// names two queues. A program with no use for namespaces uses the zero Namespace.
type Namespace struct {
	Account string // an AWS account id, such as "000000000000"
	Region  string // an AWS region, such as "us-east-1"
}

// ParseQueueARN returns the namespace and name of the queue an SQS ARN names,
// arn:<partition>:sqs:<region>:<account>:<name>; ok is false for any other string.
func ParseQueueARN(arn string) (ns Namespace, name string, ok bool) {
	a, err := rule.ParseARN(arn)
	if err != nil || !rule.IsARN(arn) || a.Partition == "" || a.Service != "sqs" || a.Region == "" || a.Account == "" ||
		a.Resource == "" || strings.Contains(a.Resource, ":") {
		return Namespace{}, "", false
	}
	return Namespace{Account: a.Account, Region: a.Region}, a.Resource, true
}

// QueueARN returns the ARN of the queue name of ns: arn:<partition>:sqs:<region>:<account>:<name>, where the
// partition is that of the region: aws-cn in China's regions, aws-us-gov in GovCloud's, aws elsewhere.
func (ns Namespace) QueueARN(name string) string {
	return rule.MakeARN("sqs", ns.Region, ns.Account, name)
}

// TopicARN returns the ARN of the topic name of ns: arn:<partition>:sns:<region>:<account>:<name>, with the
// partition of the region.
func (ns Namespace) TopicARN(name string) string {
	return rule.MakeARN("sns", ns.Region, ns.Account, name)
}

// A Catalog holds named queues by namespace and name, each with its [Definition], and applies the rules of
// SQS's control plane to them: CreateQueue of an existing queue, names deleted less than 60 seconds ago,
// dead-letter queues in the namespace of their sources, redrive policies left pending while their
// dead-letter queue is deleted and bound again when it comes back, and move tasks that it lists and, in a
// [Store], resumes after a restart. It is what a service built on fifoq keeps its queues in: package sqsapi
// serves the SQS API from one.
//
// A catalogue made with [New] keeps its queues in memory; one opened with [Open] keeps them in a
// Store, definitions, deleted names and move tasks included, so that a catalogue opened again on the store
// after a restart or a crash has them all back. Every change a method reports as done is on disk when it
// returns. A change holds the catalogue's lock while it is made in memory and waits for the disk after
// releasing it, so no call about another queue waits for its sync.
//
// Queue names: a queue of the catalogue's default namespace ([WithDefaultNamespace]; on a store, the default
// namespace of the first catalogue opened on it, which the store records) has its own name as its
// [Queue.Name], in the store and in the DeadLetterSource of the messages it moves to a dead-letter queue. A
// queue of another namespace is named there "ns-" and 32 hexadecimal digits of a hash of its namespace and
// name, with ".fifo" for a FIFO queue: a valid queue name, unique in the store. [Catalog.Find] tells the
// namespace and name of either.
//
// A Catalog is safe for concurrent use. Use New or Open; the zero Catalog is not usable.
type Catalog struct {
	st     *fifoq.Store   // nil: in memory
	rec    *fifoq.Records // the store's records, nil in memory
	clock  fifoq.Clock    // nil: the real clock
	logger *slog.Logger   // nil: the queues do not log
	home   Namespace      // the namespace whose queues have their own names in fifoq and the store

	// mu guards the fields below. It is a read-write lock because every call looks a queue up, and only
	// the calls that create, change or delete one change the catalogue. Lock order: Catalog.mu before
	// catalogEntry.mu, never two entries' at once.
	mu      sync.RWMutex
	queues  map[Namespace]map[string]*catalogEntry // by namespace and name
	byName  map[string]*catalogEntry               // the same queues, by fifoq name
	deleted map[catalogKey]time.Time               // the names deleted less than 60 s ago, and when
	// pending holds, by the namespace and name of a dead-letter queue, the queues whose redrive policy
	// waits for it (RedrivePolicy.Pending).
	pending map[catalogKey]map[*catalogEntry]struct{}
	// deletions counts the queues deleted; with none, no message can come from a deleted queue. A
	// catalogue opened on a store starts at 1: its queues may hold messages of queues deleted before.
	deletions int
	// unfinished holds the fifoq names of deleted queues still being removed from the store: their
	// QueueDeletedRecently rule does not end before that.
	unfinished map[string]struct{}

	// namesMu guards names: the namespace and name of each fifoq name of another namespace than home, for
	// the queues the catalogue holds and the names deleted less than 60 s ago (those of c.deleted), so
	// that it grows with them only, whatever names requests ask about. It is taken last.
	namesMu sync.RWMutex
	names   map[string]catalogKey

	// topics holds the catalogue's topics (catalog_topic.go), made on first use.
	topicsOnce sync.Once
	topics     *topicBook

	// tasksMu guards the fields below. It is taken last: no other lock is taken (a fifoq.MoveTask's included),
	// and nothing is written to the store, while it is held.
	tasksMu sync.Mutex
	tasks   map[string]*catalogTask // by id: the tasks of the entries' lists
	taskSeq uint64                  // the number of the last task started, in its record's key
}

// A catalogKey names a queue of a catalogue: its namespace and its name there.
type catalogKey struct {
	ns   Namespace
	name string
}

// A catalogEntry is a queue of a catalogue.
type catalogEntry struct {
	q   *fifoq.Queue
	key catalogKey
	// created is def.Created, which never changes: kept here, it is read with no lock (a change replaces
	// def under mu).
	created time.Time

	// mu guards the fields below, and serializes the changes of the queue's definition, so that they reach
	// the store in order.
	mu sync.Mutex
	// def is the queue's definition but for its settings and bound redrive policy, which are its Queue's
	// (definitionLocked). A pending RedrivePolicy is written with Catalog.mu held for writing as well as mu,
	// so it can be read under either.
	def   Definition
	tasks []*catalogTask // the last rule.MaxListedMoveTasks move tasks started, oldest first
	gone  bool           // deleted: its definition is no longer recorded
}

// Errors of a catalogue.
var (
	// ErrQueueExists: CreateQueue of a queue that exists with a different value of a setting given. AWS's
	// message names the first such setting.
	ErrQueueExists = rule.New("QueueAlreadyExists", "catalog: a queue of that name exists with other settings")
	// ErrQueueDeletedRecently: a queue's name can be used again 60 seconds after the queue was deleted.
	ErrQueueDeletedRecently = rule.NewSaying("AWS.SimpleQueueService.QueueDeletedRecently", "catalog: queue deleted recently",
		"You must wait 60 seconds after deleting a queue before you can create another with the same name.")
	// ErrQueueDoesNotExist: the catalogue holds no queue of that namespace and name.
	ErrQueueDoesNotExist = rule.NewSaying("AWS.SimpleQueueService.NonExistentQueue", "catalog: queue does not exist",
		"The specified queue does not exist.")
	// ErrMoveTaskNotFound: the catalogue holds no move task of that id: it never did, or forgot it (it keeps
	// the last 10 of a queue, and none of a deleted queue).
	ErrMoveTaskNotFound = rule.NewSaying("ResourceNotFoundException", "catalog: move task does not exist", "Task does not exist.")
	// ErrEncryptionConflict: a change turns on server-side encryption with a KMS key and with SQS-managed
	// keys at once.
	ErrEncryptionConflict = rule.NewSaying("InvalidAttributeName", "catalog: a KMS key and SQS-managed encryption at once",
		"You can use one type of server-side encryption (SSE) at one time. You can either enable KMS SSE or SQS SSE.")
	// ErrInvalidTags: a queue has at most 50 tags, with keys of 1..128 characters and values of at most 256.
	ErrInvalidTags = rule.New("InvalidParameterValue", "catalog: invalid tags")
)

// deletedReuseDelay is how long a deleted queue's name stays unusable (ErrQueueDeletedRecently).
const deletedReuseDelay = 60 * time.Second

// A Option configures a [Catalog].
type Option func(*catalogConfig)

type catalogConfig struct {
	clock  fifoq.Clock
	logger *slog.Logger
	home   Namespace
}

// WithClock sets the clock of the catalogue's queues and of its own rules and timestamps (created and
// modified times, the 60 seconds before a deleted name can be used again). The default is the real clock.
func WithClock(clk fifoq.Clock) Option { return func(c *catalogConfig) { c.clock = clk } }

// WithLogger gives the catalogue's queues the logger l ([WithLogger]), and makes the catalogue log
// there, at level Warn, what [Open] finds amiss in a store. By default nothing is logged.
func WithLogger(l *slog.Logger) Option { return func(c *catalogConfig) { c.logger = l } }

// WithDefaultNamespace sets the namespace whose queues have their own names as their Queue.Name (see
// [Catalog]); by default the zero Namespace. [Open] uses it only for a store that records none yet.
func WithDefaultNamespace(ns Namespace) Option { return func(c *catalogConfig) { c.home = ns } }

// New returns an empty catalogue that keeps its queues in memory.
func New(opts ...Option) *Catalog {
	var cfg catalogConfig
	for _, o := range opts {
		o(&cfg)
	}
	return &Catalog{
		clock:      cfg.clock,
		logger:     cfg.logger,
		home:       cfg.home,
		queues:     make(map[Namespace]map[string]*catalogEntry),
		byName:     make(map[string]*catalogEntry),
		deleted:    make(map[catalogKey]time.Time),
		pending:    make(map[catalogKey]map[*catalogEntry]struct{}),
		unfinished: make(map[string]struct{}),
		names:      make(map[string]catalogKey),
		tasks:      make(map[string]*catalogTask),
	}
}

// DisplayName returns the name under which a server shows the queue or topic name of ns, unique in the
// catalogue: name itself in the catalogue's default namespace, account/region/name in another. The web
// console and the metrics of fifoq serve name queues and topics so.
func (c *Catalog) DisplayName(ns Namespace, name string) string {
	if ns == c.home {
		return name
	}
	return ns.Account + "/" + ns.Region + "/" + name
}

// ParseDisplayName returns the namespace and name of a DisplayName; ok is false for a string that is none.
func (c *Catalog) ParseDisplayName(s string) (ns Namespace, name string, ok bool) {
	switch parts := strings.Split(s, "/"); len(parts) {
	case 1:
		return c.home, s, s != ""
	case 3:
		return Namespace{Account: parts[0], Region: parts[1]}, parts[2], parts[2] != ""
	}
	return Namespace{}, "", false
}

// Store returns the store the catalogue keeps its queues in, nil for a catalogue in memory.
func (c *Catalog) Store() *fifoq.Store { return c.st }

// DefaultNamespace returns the namespace whose queues have their own names in fifoq (see [Catalog]).
func (c *Catalog) DefaultNamespace() Namespace { return c.home }

// queueName returns the fifoq name of the queue name of ns (see Catalog).
func (c *Catalog) queueName(ns Namespace, name string) string {
	if ns == c.home {
		return name
	}
	h := sha256.Sum256([]byte(ns.Account + "\x00" + ns.Region + "\x00" + name))
	fn := "ns-" + hex.EncodeToString(h[:16])
	if fifoName(name) {
		fn += ".fifo"
	}
	return fn
}

// rememberName records k as the namespace and name of fn, its fifoq name, for keyOf: a queue added to the
// catalogue, or a name deleted less than 60 s ago read from the store.
func (c *Catalog) rememberName(fn string, k catalogKey) {
	if k.ns == c.home {
		return
	}
	c.namesMu.Lock()
	c.names[fn] = k
	c.namesMu.Unlock()
}

// forgetName forgets what rememberName recorded of fn, the fifoq name of k.
func (c *Catalog) forgetName(fn string, k catalogKey) {
	if k.ns == c.home {
		return
	}
	c.namesMu.Lock()
	delete(c.names, fn)
	c.namesMu.Unlock()
}

// keyOf returns the namespace and name of the queue whose fifoq name is fn. A name rememberName did not
// record (nor one of a queue the catalogue holds, or deleted less than 60 s ago) is one of the default
// namespace.
func (c *Catalog) keyOf(fn string) catalogKey {
	if strings.HasPrefix(fn, "ns-") {
		c.namesMu.RLock()
		k, ok := c.names[fn]
		c.namesMu.RUnlock()
		if ok {
			return k
		}
	}
	return catalogKey{c.home, fn}
}

// Find returns the queue whose fifoq name ([Queue.FifoqName], or a DeadLetterSource) is name: its namespace
// and name, and the Queue if the catalogue holds it (ok). For a queue it no longer holds (deleted, or not in
// the catalogue), the namespace and name are those the catalogue knows for the name (it knows those of its
// queues, and of the queues deleted less than 60 seconds ago), else the default namespace and the name
// itself.
func (c *Catalog) Find(name string) (k QueueKey, q Queue, ok bool) {
	ck := c.keyOf(name)
	k = QueueKey{Namespace: ck.ns, Name: ck.name}
	c.mu.RLock()
	e := c.byName[name]
	c.mu.RUnlock()
	if e == nil {
		return k, Queue{}, false
	}
	return k, Queue{ns: ck.ns, name: e.key.name, q: e.q}, true
}

// Queue returns the queue name of ns. It keeps no reference to name, and is cheap enough to be called on
// every request.
func (c *Catalog) Queue(ns Namespace, name string) (q Queue, ok bool) {
	c.mu.RLock()
	e := c.queues[ns][name]
	c.mu.RUnlock()
	if e == nil {
		return Queue{}, false
	}
	return Queue{ns: ns, name: e.key.name, q: e.q}, true
}

// lookup returns the entry of the queue name of ns, or nil.
func (c *Catalog) lookup(ns Namespace, name string) *catalogEntry {
	c.mu.RLock()
	e := c.queues[ns][name]
	c.mu.RUnlock()
	return e
}

// holdsLocked reports whether e is the catalogue's queue of its name, not deleted. c.mu must be held.
func (c *Catalog) holdsLocked(e *catalogEntry) bool { return c.queues[e.key.ns][e.key.name] == e }

// List returns the queues of ns whose names start with prefix, in name order.
func (c *Catalog) List(ns Namespace, prefix string) []Queue {
	c.mu.RLock()
	out := make([]Queue, 0, len(c.queues[ns]))
	for name, e := range c.queues[ns] {
		if strings.HasPrefix(name, prefix) {
			out = append(out, Queue{ns: ns, name: name, q: e.q})
		}
	}
	c.mu.RUnlock()
	slices.SortFunc(out, func(a, b Queue) int { return strings.Compare(a.name, b.name) })
	return out
}

// DeadLetterSources returns the queues of ns whose redrive policy sends their messages to the queue name of
// ns (ListDeadLetterSourceQueues), in name order: the policies bound to it, not those pending.
func (c *Catalog) DeadLetterSources(ns Namespace, name string) []Queue {
	c.mu.RLock()
	dlq := c.queues[ns][name]
	var out []Queue
	if dlq != nil {
		for n, e := range c.queues[ns] { // a dead-letter queue's sources are in its namespace
			if e.q.Attributes().DeadLetterQueue == dlq.q {
				out = append(out, Queue{ns: ns, name: n, q: e.q})
			}
		}
	}
	c.mu.RUnlock()
	slices.SortFunc(out, func(a, b Queue) int { return strings.Compare(a.name, b.name) })
	return out
}

// Queues returns every queue of the catalogue, of every namespace, ordered by name, then account, then
// region: a snapshot, which later creations and deletions do not change.
func (c *Catalog) Queues() []Queue {
	c.mu.RLock()
	out := make([]Queue, 0, len(c.byName))
	for _, e := range c.byName {
		out = append(out, Queue{ns: e.key.ns, name: e.key.name, q: e.q})
	}
	c.mu.RUnlock()
	slices.SortFunc(out, func(a, b Queue) int {
		return cmp.Or(strings.Compare(a.name, b.name), strings.Compare(a.ns.Account, b.ns.Account),
			strings.Compare(a.ns.Region, b.ns.Region))
	})
	return out
}

// NamedQueues returns every queue of the catalogue under its display name ([Catalog.DisplayName]): its own name
// in the default namespace, account/region/name in another. It is the form of the queues a metrics collector or
// a console asks for at each scrape or page (fifoqprom.WithNamedQueues, fifoqweb.New).
func (c *Catalog) NamedQueues() map[string]Queue {
	qs := c.Queues()
	out := make(map[string]Queue, len(qs))
	for _, q := range qs {
		out[c.DisplayName(q.ns, q.name)] = q
	}
	return out
}

// Definition returns the definition of the queue name of ns as it is now, its settings read from its queue;
// ok is false when the catalogue holds no such queue.
func (c *Catalog) Definition(ns Namespace, name string) (d Definition, ok bool) {
	e := c.lookup(ns, name)
	if e == nil {
		return Definition{}, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return c.definitionLocked(e), true
}

// definitionLocked returns e's definition, its settings read from its Queue. e.mu (or c.mu for writing)
// must be held.
func (c *Catalog) definitionLocked(e *catalogEntry) Definition {
	return e.def.clone().withAttributes(e.q.Attributes(), e.q.FIFO(), func(q *fifoq.Queue) string { return c.keyOf(q.Name()).name })
}

// CreateQueue creates the queue name of ns: a FIFO queue when name ends in ".fifo", a standard queue
// otherwise. Its definition is [NewDefinition] with the settings of def that fields lists (see
// [Definition.Apply]); the others, and def's Created and Modified, are ignored.
//
// When the queue exists, CreateQueue returns it if each setting fields lists has the value it has in def (as
// SQS shows it; tags are not compared, nor changed), and otherwise an error that wraps ErrQueueExists, whose
// AWS message names the first setting that differs. A name deleted less than 60 seconds ago returns
// ErrQueueDeletedRecently. Settings out of range return the errors of [Definition.Check]; a redrive policy
// whose dead-letter queue is not a queue of ns returns fifoq.ErrInvalidRedrivePolicy, one that the dead-letter
// queue's redrive allow policy refuses fifoq.ErrRedriveNotAllowed. A refused call creates nothing.
//
// In a store, the queue and its definition are on disk when CreateQueue returns, and a queue that the store
// holds without a definition (made with [New] and [fifoq.WithStore]) is taken over with its messages. ctx governs
// the start of the call only.
func (c *Catalog) CreateQueue(ctx context.Context, ns Namespace, name string, def Definition, fields Fields) (Queue, error) {
	if err := ctx.Err(); err != nil {
		return Queue{}, err
	}
	if err := rule.QueueName(name); err != nil {
		return Queue{}, err
	}
	var j journal
	q, err := c.createQueue(&j, catalogKey{ns, name}, def, fields)
	if err != nil {
		return Queue{}, err
	}
	if err := j.wait(); err != nil {
		return Queue{}, err
	}
	return Queue{ns: ns, name: name, q: q}, nil
}

// CheckCreate returns the error [Catalog.CreateQueue] of the queue name of ns returns before it looks at the
// settings: nil when the queue exists, or when it can be created; ErrQueueDeletedRecently for a name deleted
// less than 60 seconds ago; the store's error once it failed. A front end calls it when a request's settings
// do not decode, to refuse the request in the order SQS does.
func (c *Catalog) CheckCreate(ns Namespace, name string) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.queues[ns][name] != nil {
		return nil
	}
	if err := c.err(); err != nil {
		return err
	}
	at, ok := c.deleted[catalogKey{ns, name}]
	if _, busy := c.unfinished[c.queueName(ns, name)]; ok && (busy || c.now().Sub(at) < deletedReuseDelay) {
		return rule.Reject(ErrQueueDeletedRecently, "queue %s was deleted less than %v ago", name, deletedReuseDelay)
	}
	return nil
}

func (c *Catalog) createQueue(j *journal, k catalogKey, def Definition, fields Fields) (*fifoq.Queue, error) {
	fifo := fifoName(k.name)
	if err := def.Check(fifo, fields); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.queues[k.ns][k.name]; e != nil {
		e.mu.Lock()
		defer e.mu.Unlock()
		cur := c.definitionLocked(e)
		want := cur.clone()
		want.Apply(def, fields)
		if err := want.Check(fifo, AllFields); err != nil {
			return nil, err // a rule between settings, which the settings given break on this queue
		}
		if name := cur.firstDifference(&want, fields); name != "" {
			return nil, rule.Reject(ErrQueueExists, "queue %s has another %s", k.name, name).Says(
				"A queue already exists with the same name and a different value for attribute %s", name)
		}
		return e.q, nil
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	now := c.now()
	c.pruneDeletedLocked(j, now)
	if _, ok := c.deleted[k]; ok {
		return nil, rule.Reject(ErrQueueDeletedRecently, "queue %s was deleted less than %v ago", k.name, deletedReuseDelay)
	}
	d := NewDefinition(fifo)
	d.Apply(def, fields)
	if err := d.Check(fifo, AllFields); err != nil {
		return nil, err
	}
	d.Created, d.Modified = now, now
	fn := c.queueName(k.ns, k.name)
	if other := c.byName[fn]; other != nil {
		// Only a queue made on purpose with the name of another's hash.
		return nil, fmt.Errorf("catalog: create queue %s of %v: its name in fifoq, %s, is taken by %s of %v", k.name, k.ns, fn,
			other.key.name, other.key.ns)
	}
	opts, err := c.optionsLocked(k.ns, &d, nil)
	if err != nil {
		return nil, err
	}
	q, created, err := fifoq.NewNoWait(fn, opts...) // its record is waited for once c.mu is released
	if err != nil {
		if fifoq.ErrorCode(err) == "" {
			err = fmt.Errorf("catalog: create queue %s of %v: %w", k.name, k.ns, err)
		}
		return nil, err
	}
	j.add(created, nil)
	e := &catalogEntry{q: q, key: k, created: d.Created, def: d}
	e.def.RedrivePolicy = RedrivePolicy{} // bound: its Queue's
	c.addLocked(e)
	c.putDefinitionLocked(j, e) // e.mu is not needed yet: nobody else can reach e while c.mu is held
	c.rebindLocked(j, e)
	return q, nil
}

// optionsLocked returns the options of New that make the queue of d in ns: its settings, its dead-letter
// queue (dlq, or the queue d's redrive policy names), its redrive allow policy unless allowAll, and the
// catalogue's clock, logger and store. c.mu must be held.
func (c *Catalog) optionsLocked(ns Namespace, d *Definition, dlq *fifoq.Queue) ([]fifoq.Option, error) {
	opts := []fifoq.Option{
		fifoq.WithVisibilityTimeout(d.VisibilityTimeout), fifoq.WithDelay(d.Delay), fifoq.WithRetention(d.Retention),
		fifoq.WithReceiveWaitTime(d.ReceiveWaitTime), fifoq.WithMaxMessageSize(d.MaxMessageSize),
	}
	if c.clock != nil {
		opts = append(opts, fifoq.WithClock(c.clock))
	}
	if d.ContentBasedDeduplication {
		opts = append(opts, fifoq.WithContentBasedDeduplication())
	}
	if s := d.DeduplicationScope; s != 0 && s != fifoq.DeduplicationScopeQueue {
		opts = append(opts, fifoq.WithDeduplicationScope(s))
	}
	if p := d.RedrivePolicy; p.DeadLetterQueue != "" && !p.Pending {
		if dlq == nil {
			var err error
			if dlq, err = c.deadLetterQueueLocked(ns, p.DeadLetterQueue); err != nil {
				return nil, err
			}
		}
		opts = append(opts, fifoq.WithDeadLetterQueue(dlq, p.MaxReceiveCount))
	}
	if p := d.RedriveAllowPolicy; p != nil {
		opts = append(opts, fifoq.WithRedriveAllowPolicy(c.allowPolicy(ns, p)))
	}
	if c.logger != nil {
		opts = append(opts, fifoq.WithLogger(c.logger))
	}
	if c.st != nil {
		opts = append(opts, fifoq.WithStore(c.st))
	}
	return opts, nil
}

// deadLetterQueueLocked returns the queue name of ns, a redrive policy's dead-letter queue. c.mu must be held.
func (c *Catalog) deadLetterQueueLocked(ns Namespace, name string) (*fifoq.Queue, error) {
	e := c.queues[ns][name]
	if e == nil {
		return nil, rule.Reject(fifoq.ErrInvalidRedrivePolicy, "dead-letter queue %s does not exist", name).Says("Dead-letter target does not exist.")
	}
	return e.q, nil
}

// allowPolicy returns a definition's redrive allow policy as its Queue takes it: sources by fifoq name.
func (c *Catalog) allowPolicy(ns Namespace, p *fifoq.RedriveAllowPolicy) fifoq.RedriveAllowPolicy {
	out := fifoq.RedriveAllowPolicy{Permission: p.Permission}
	for _, s := range p.Sources {
		out.Sources = append(out.Sources, c.queueName(ns, s))
	}
	return out
}

// addLocked adds e to the catalogue. c.mu must be held for writing.
func (c *Catalog) addLocked(e *catalogEntry) {
	m := c.queues[e.key.ns]
	if m == nil {
		m = make(map[string]*catalogEntry)
		c.queues[e.key.ns] = m
	}
	m[e.key.name] = e
	c.byName[e.q.Name()] = e
	c.rememberName(e.q.Name(), e.key)
}

// removeLocked removes e from the catalogue. c.mu must be held for writing.
func (c *Catalog) removeLocked(e *catalogEntry) {
	m := c.queues[e.key.ns]
	delete(m, e.key.name)
	if len(m) == 0 {
		delete(c.queues, e.key.ns)
	}
	delete(c.byName, e.q.Name())
}

// pruneDeletedLocked forgets the deleted names that can be used again, and their records. c.mu must be held
// for writing.
func (c *Catalog) pruneDeletedLocked(j *journal, now time.Time) {
	var b *fifoq.RecordBatch
	for k, at := range c.deleted {
		fn := c.queueName(k.ns, k.name)
		if _, busy := c.unfinished[fn]; busy || now.Sub(at) < deletedReuseDelay {
			continue
		}
		delete(c.deleted, k)
		if c.byName[fn] == nil { // not created again yet
			c.forgetName(fn, k)
		}
		if c.st != nil {
			if b == nil {
				b = c.rec.NewBatch()
			}
			b.Delete(catalogKeyOf(catalogDeleted, fn))
		}
	}
	if b != nil {
		c.commit(j, b)
	}
}

// err returns the error every change returns once the store failed or was closed, or nil.
func (c *Catalog) err() error {
	if c.st == nil {
		return nil
	}
	return c.st.Err()
}

// A journal is what a call waits for once it has released the catalogue's locks: the changes it handed to
// the store, or the first error that kept one from being handed over (after which it hands over no more).
type journal struct {
	pending []fifoq.Pending
	err     error
}

// add records a change handed over, or the error of one that was not.
func (j *journal) add(p fifoq.Pending, err error) {
	if j.err == nil {
		if err != nil {
			j.err = err
			return
		}
		j.pending = append(j.pending, p)
	}
}

// wait blocks until the changes are durable. The store makes them durable in order, so it waits about as
// long as for the last.
func (j *journal) wait() error {
	if j.err != nil {
		return j.err
	}
	for _, p := range j.pending {
		if err := p.Wait(); err != nil {
			return err
		}
	}
	return nil
}

// commit commits b, a batch of the catalogue's records, for the call to wait for (j) before it returns.
func (c *Catalog) commit(j *journal, b *fifoq.RecordBatch) {
	if j.err != nil {
		return
	}
	j.add(c.rec.Commit(b, true))
}

// Close pauses the catalogue's running move tasks and waits for them to stop. In a store, they are not
// recorded as ended: a catalogue opened again on the store resumes them. In memory, they end cancelled.
// Close closes no store, and changes nothing else: call it when the catalogue is no longer used, before
// closing its store. It returns nil.
func (c *Catalog) Close() error {
	c.tasksMu.Lock()
	tasks := slices.Collect(maps.Values(c.tasks))
	c.tasksMu.Unlock()
	for _, t := range tasks {
		t.task.Halt() // an ended task stays as it was
	}
	for _, t := range tasks {
		_ = t.task.Wait(context.Background()) // a halted task stops after the batch it has taken
	}
	return nil
}

// now reads the catalogue's clock.
func (c *Catalog) now() time.Time {
	if c.clock == nil {
		return time.Now()
	}
	return c.clock.Now()
}

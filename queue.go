package fifoq

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fifoq/fifoq/storage"
)

// A Queue is an in-process queue with the semantics of Amazon SQS: a FIFO queue when its name ends in ".fifo",
// a standard queue otherwise. A Queue is safe for concurrent use by multiple goroutines. Use [New]; the zero
// Queue is not usable.
//
// A Queue starts no goroutines. Each call first applies whatever has come due by the queue's clock (visibility
// timeouts and delays ending, deduplication ids and messages passing their retention), then does its work.
type Queue struct {
	name    string
	fifo    bool
	clock   Clock
	logger  *slog.Logger
	cfg     atomic.Pointer[config] // replaced whole by SetAttributes, under mu
	epoch   time.Time              // tick 0
	tag     uint32                 // in every receipt handle, so a handle of another queue is refused
	idNonce uint64                 // the first half of every MessageID

	// A durable queue's store (nil for a queue in memory), its id and name there, and the Unix time of
	// its epoch, in nanoseconds: the store keeps times as such.
	st       *Store
	sid      uint32
	storeKey string
	epochNs  int64
	deleted  atomic.Bool // deleted from its store; set under mu

	// mu guards the fields below.
	mu        sync.Mutex
	lastNow   tick
	nextSeq   uint64
	slots     []*message // receipt handle lookup: slots[m.slot] == m; nil entries are free
	freeSlots []int32
	all       msgList  // every stored message, in arrival order: retention comes due from its front
	groups    groupSet // FIFO
	fresh     msgList  // standard: visible messages never received, in send order
	retry     msgList  // standard: visible messages received before, served first
	due       dueIndex // in-flight and delayed messages by the time they become visible
	dedup     dedupWindow
	attempts  attemptWindow
	stats     Stats
	counters  Counters // Metrics: what happened to the messages since New
	purgedAt  tick
	purged    bool
	waiters   waitList
	origins   map[uint64]*origin // by seq: the messages moved here from another queue
	sources   []*Queue           // the queues whose dead-letter queue this is
	moveTasks []*MoveTask        // oldest first
	heldSlots []int32            // durable: slots of messages a move task took, free once their removal is durable
	moved     []deadLettered     // to log once the lock is released

	// The journal of a durable queue (journal.go): the records of the call under way, whether it must
	// sync them, the last batch it committed and the error of a commit; the highest sequence number
	// recorded as given out; and buffers to encode records in.
	jb         storage.Batch
	jsync      bool
	jlast      storage.Ticket
	jerr       error
	seqLimit   uint64
	recovered  uint64 // the messages up to this sequence number may have been read from the store (sentHere)
	scratch    []byte
	scratchKey [messageKeyLen + 8 + maxIDLength*2 + 1]byte
}

// Stats are a queue's message counts. fifoq counts exactly; SQS calls them approximate.
type Stats struct {
	Visible  int // ApproximateNumberOfMessages (FIFO: includes messages waiting behind an in-flight message)
	InFlight int // ApproximateNumberOfMessagesNotVisible
	Delayed  int // ApproximateNumberOfMessagesDelayed
}

// config holds a queue's attributes. A queue's config is never changed in place: SetAttributes swaps in a
// new one, so code outside the lock reads a consistent set.
type config struct {
	visibility   time.Duration
	delay        time.Duration
	retention    time.Duration
	maxSize      int
	waitTime     time.Duration
	contentDedup bool
	scope        DeduplicationScope
	groupOrder   GroupOrder
	fifoOnly     []string // FIFO-only options given, for the error on a standard queue
	clock        Clock

	hasRedrive      bool   // WithDeadLetterQueue was given
	dlq             *Queue // the dead-letter queue, nil without a redrive policy
	maxReceiveCount int
	allow           RedriveAllowPolicy // who may use this queue as a dead-letter queue
	logger          *slog.Logger

	store    *Store // nil: in memory
	storeKey string // the queue's name in the store: its name, but for this package's tests
	// later, when set (by a Catalog), receives what New would wait for, so that the caller waits for it
	// after releasing its own locks.
	later *storage.Ticket
}

// An Option sets a queue attribute at [New].
type Option func(*config)

// WithVisibilityTimeout sets how long a received message stays invisible: 0..12h, default 30s.
func WithVisibilityTimeout(d time.Duration) Option { return func(c *config) { c.visibility = d } }

// WithDelay sets the queue delay, how long a new message stays invisible: 0..15m, default 0.
func WithDelay(d time.Duration) Option { return func(c *config) { c.delay = d } }

// WithRetention sets how long a message is kept: 1m..14 days, default 4 days.
func WithRetention(d time.Duration) Option { return func(c *config) { c.retention = d } }

// WithMaxMessageSize sets the largest message, body plus attributes, in bytes: 1 KiB..1 MiB, default 1 MiB.
func WithMaxMessageSize(n int) Option { return func(c *config) { c.maxSize = n } }

// WithReceiveWaitTime sets the long-poll wait of a receive that does not give one: 0..20s, default 0.
func WithReceiveWaitTime(d time.Duration) Option { return func(c *config) { c.waitTime = d } }

// WithContentBasedDeduplication makes a FIFO queue deduplicate a message without a DeduplicationID by the
// SHA-256 of its body.
func WithContentBasedDeduplication() Option {
	return func(c *config) {
		c.contentDedup = true
		c.fifoOnly = append(c.fifoOnly, "ContentBasedDeduplication")
	}
}

// WithDeduplicationScope sets where a FIFO queue deduplicates: DeduplicationScopeQueue (the default) or
// DeduplicationScopeMessageGroup.
func WithDeduplicationScope(s DeduplicationScope) Option {
	return func(c *config) {
		c.scope = s
		c.fifoOnly = append(c.fifoOnly, "DeduplicationScope")
	}
}

// WithGroupOrder sets the order in which a FIFO queue serves its message groups: GroupOrderAvailable (the
// default) serves them in the order they became available, as SQS is observed to, so a group whose messages
// come back waits behind the groups already waiting; GroupOrderOldestMessage serves first the group whose
// oldest message was sent first. Either way a receive fills its response from one group before it takes the
// next, and keeps each group in send order. SQS promises no order between groups: code that must also work on
// SQS should not depend on it. A standard queue accepts the option, which has no effect there. An unknown
// order returns ErrInvalidQueueAttribute.
func WithGroupOrder(o GroupOrder) Option { return func(c *config) { c.groupOrder = o } }

// WithClock sets the queue's clock; the default is the real clock, which is also the virtual clock inside a
// testing/synctest bubble.
func WithClock(clk Clock) Option { return func(c *config) { c.clock = clk } }

// New creates a queue. A name ending in ".fifo" makes a FIFO queue, any other name a standard queue. Names
// are 1..80 characters of [A-Za-z0-9_-], ".fifo" included. Options out of range return
// ErrInvalidQueueAttribute; FIFO-only options on a standard queue return ErrFIFOOnly.
func New(name string, opts ...Option) (*Queue, error) {
	if err := validateQueueName(name); err != nil {
		return nil, err
	}
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	suiteStore(&cfg)
	fifo := strings.HasSuffix(name, ".fifo")
	if err := cfg.validate(fifo); err != nil {
		return nil, err
	}
	if err := cfg.validateRedrive(name, fifo); err != nil {
		return nil, err
	}
	q := &Queue{
		name:     name,
		fifo:     fifo,
		clock:    cfg.clock,
		logger:   cfg.logger,
		epoch:    cfg.clock.Now(),
		tag:      rand.Uint32(),
		idNonce:  rand.Uint64(),
		all:      msgList{kind: bySend},
		fresh:    msgList{kind: byQueue},
		retry:    msgList{kind: byQueue},
		dedup:    newDedupWindow(),
		attempts: newAttemptWindow(),
	}
	q.epochNs = q.epoch.UnixNano()
	q.cfg.Store(&cfg)
	if fifo {
		q.groups = newGroupSet(cfg.groupOrder)
	}
	if d := cfg.dlq; d != nil {
		if err := d.addSource(q); err != nil {
			return nil, err
		}
	}
	if st := cfg.store; st != nil {
		q.storeKey = cmp.Or(cfg.storeKey, name)
		if err := st.attach(q, q.storeKey, cfg.later); err != nil {
			if d := cfg.dlq; d != nil {
				d.removeSource(q)
			}
			return nil, err
		}
	}
	return q, nil
}

// defaultConfig returns the settings of a queue made without options.
func defaultConfig() config {
	return config{
		visibility: 30 * time.Second,
		retention:  4 * 24 * time.Hour,
		maxSize:    MaxMessageSize,
		scope:      DeduplicationScopeQueue,
		clock:      realClock{},
	}
}

// validate checks the settings of c for a queue of the type fifo says; the redrive policy is
// validateRedrive's. AWS's message for a setting out of its range names it as SQS does.
func (c *config) validate(fifo bool) error {
	inRange := func(name, attribute string, d, lo, hi time.Duration) error {
		if d < lo || d > hi {
			return badAttribute(attribute, "%s %v, want %v..%v", name, d, lo, hi)
		}
		return nil
	}
	switch {
	case !fifo && len(c.fifoOnly) > 0:
		return reject(ErrFIFOOnly, "unknown attribute %s on standard queue", c.fifoOnly[0])
	case c.scope != DeduplicationScopeQueue && c.scope != DeduplicationScopeMessageGroup:
		return reject(ErrInvalidQueueAttribute, "deduplication scope %d", c.scope)
	case c.groupOrder != GroupOrderAvailable && c.groupOrder != GroupOrderOldestMessage:
		return reject(ErrInvalidQueueAttribute, "group order %d", c.groupOrder)
	case c.maxSize < minMessageSize || c.maxSize > MaxMessageSize:
		return badAttribute("MaximumMessageSize", "maximum message size %d, want %d..%d", c.maxSize, minMessageSize, MaxMessageSize)
	case c.clock == nil:
		return reject(ErrInvalidQueueAttribute, "nil clock")
	}
	if err := inRange("visibility timeout", "VisibilityTimeout", c.visibility, 0, maxVisibilityTimeout); err != nil {
		return err
	}
	if err := inRange("delay", "DelaySeconds", c.delay, 0, maxDelay); err != nil {
		return err
	}
	if err := inRange("retention", "MessageRetentionPeriod", c.retention, minRetention, maxRetention); err != nil {
		return err
	}
	return inRange("receive wait time", "ReceiveMessageWaitTimeSeconds", c.waitTime, 0, maxWaitTime)
}

// badAttribute rejects the setting that SQS calls attribute (ErrInvalidQueueAttribute).
func badAttribute(attribute, format string, args ...any) error {
	return reject(ErrInvalidQueueAttribute, format, args...).says("Invalid value for the parameter %s.", attribute)
}

// CheckOptions returns the error [New] returns for the settings opts make on a queue of the type fifo says
// (a FIFO queue or a standard one): ErrInvalidQueueAttribute for a setting out of its range, ErrFIFOOnly for
// a FIFO-only setting on a standard queue; nil when they are good. It makes no queue, and leaves out the
// redrive policy and the redrive allow policy ([WithDeadLetterQueue], [WithRedriveAllowPolicy]), whose
// checks need the queues. A front end calls it as it reads each setting of a request, so as to refuse the
// first bad one in the order SQS does.
func CheckOptions(fifo bool, opts ...Option) error {
	c := defaultConfig()
	for _, o := range opts {
		o(&c)
	}
	return c.validate(fifo)
}

// Name returns the queue's name.
func (q *Queue) Name() string { return q.name }

// FIFO reports whether q is a FIFO queue.
func (q *Queue) FIFO() bool { return q.fifo }

// Clock returns the queue's clock. A [Batcher] over a *Queue times its batch window by it, and an
// idempotency store can share it.
func (q *Queue) Clock() Clock { return q.clock }

// conf returns the queue's attributes as they are now.
func (q *Queue) conf() *config { return q.cfg.Load() }

// lock takes mu and applies everything that has come due; it returns the time.
func (q *Queue) lock() tick {
	q.mu.Lock()
	now := max(q.clock.Now().Sub(q.epoch), q.lastNow) // a clock that steps back does not move the queue back
	q.lastNow = now
	q.catchUpLocked(now)
	return now
}

// unlock commits the records of the call (for a durable queue), hands visible messages to a waiting long
// poll, then releases mu, then logs the messages moved to the dead-letter queue meanwhile. It returns what
// the call waits for before it returns: the durability of its changes.
func (q *Queue) unlock() commit {
	c := q.flushLocked()
	if q.waiters.len() > 0 && q.hasVisibleLocked() {
		q.waiters.signal()
	}
	moved := q.moved
	q.moved = nil
	q.mu.Unlock()
	for _, d := range moved {
		q.logDeadLettered(d)
	}
	return c
}

func (q *Queue) hasVisibleLocked() bool {
	if q.fifo {
		return q.groups.hasAvailable()
	}
	return q.fresh.len+q.retry.len > 0
}

func (q *Queue) time(t tick) time.Time { return q.epoch.Add(t) }

// catchUpLocked applies everything due at now, each in O(log n): visibility timeouts and delays ending,
// messages passing their retention (spec 5.2, in flight or not), deduplication ids and receive attempt ids
// passing their 5 minutes.
//
// Visibility and retention come due in time order (at one instant, visibility first), so that FIFO groups
// become available in the order they did: a group whose in-flight head passed its retention comes before a
// group whose head became visible later.
func (q *Queue) catchUpLocked(now tick) {
	for {
		m, old := q.due.peek(), q.all.head
		dueFirst := m != nil && m.dueAt <= now && (old == nil || m.dueAt <= q.expiresAt(old))
		if !dueFirst && (old == nil || q.expiresAt(old) > now) {
			break
		}
		if !dueFirst {
			m = old
		} else if q.expiresAt(m) > m.dueAt {
			q.due.pop()
			q.makeVisibleLocked(m) // if its retention ends by now too, it goes when that comes due
			continue
		}
		q.dropLocked(m) // past its retention: from the front, or from the index
		q.counters.Expired++
	}
	if q.fifo {
		if q.dedup.expire(now) {
			q.expireRecordsLocked(now)
		}
		q.attempts.expire(now)
	}
}

// setStateLocked moves m to state s, keeping the counts exact.
func (q *Queue) setStateLocked(m *message, s MessageState) {
	q.countLocked(m.state, -1)
	m.state = s
	q.countLocked(s, 1)
}

func (q *Queue) countLocked(s MessageState, d int) {
	switch s {
	case StateVisible:
		q.stats.Visible += d
	case StateInFlight:
		q.stats.InFlight += d
	case StateDelayed:
		q.stats.Delayed += d
	}
}

// Ready lists of a standard queue.
const (
	readyNone uint8 = iota
	readyFresh
	readyRetry
)

// makeVisibleLocked ends m's delay or visibility timeout. On a FIFO queue it becomes its group's head again
// if it was (2.11); on a standard queue a message received before goes to the retry list, served first.
func (q *Queue) makeVisibleLocked(m *message) {
	was := m.state
	q.setStateLocked(m, StateVisible)
	switch {
	case q.fifo:
		q.groups.update(m.group)
	case was == StateInFlight:
		q.retry.pushBack(m)
		m.ready = readyRetry
	default:
		q.fresh.pushBack(m)
		m.ready = readyFresh
	}
	if q.expiresOutOfOrder(m) {
		m.dueAt = q.expiresAt(m)
		q.due.push(m)
	}
}

// expiresAt is when m's retention ends: its retention period after its SentAt (which a FIFO dead-letter
// queue sets to the time of the move, spec 5.4).
func (q *Queue) expiresAt(m *message) tick { return m.sentAt + q.conf().retention }

// expiresOutOfOrder reports whether m's retention can end before that of messages stored before it: a
// message moved into a standard dead-letter queue keeps its original send time (spec 5.4). Its retention
// comes due from the due index, in O(log n), rather than from the front of q.all.
func (q *Queue) expiresOutOfOrder(m *message) bool { return m.moved && !q.fifo }

// removeLocked deletes m from every structure that holds it.
func (q *Queue) removeLocked(m *message) {
	q.slots[m.slot] = nil
	q.freeSlots = append(q.freeSlots, m.slot)
	q.unlinkLocked(m)
}

// unlinkLocked deletes m from every structure that holds it but its slot.
func (q *Queue) unlinkLocked(m *message) {
	q.all.remove(m)
	if m.dueIdx >= 0 {
		q.due.remove(m)
	}
	switch {
	case q.fifo:
		q.groups.remove(m)
	case m.ready == readyFresh:
		q.fresh.remove(m)
	case m.ready == readyRetry:
		q.retry.remove(m)
	}
	m.ready = readyNone
	q.countLocked(m.state, -1)
	m.state = 0
	if m.moved {
		delete(q.origins, m.seq)
	}
}

// Send sends one message. On a FIFO queue a message whose deduplication id was accepted in the last 5
// minutes is accepted but not stored: the result has Duplicate set and the original's MessageID and
// SequenceNumber. Invalid messages return a sentinel error and change nothing.
func (q *Queue) Send(ctx context.Context, m Message) (SendResult, error) {
	if err := ctx.Err(); err != nil {
		return SendResult{}, err
	}
	if err := q.check(); err != nil {
		return SendResult{}, err
	}
	if err := q.checkMessage(&m, false); err != nil {
		return SendResult{}, err
	}
	if r := q.requireFIFOIDs(&m); r != nil {
		return SendResult{}, r
	}
	var key string
	if q.fifo {
		m.DeduplicationID, key = q.dedupKey(&m)
	}
	stored := newMessage(&m)
	now := q.lock()
	seq, dup := q.sendLocked(now, stored, key)
	q.countSendLocked(dup)
	if err := q.unlock().wait(q.st); err != nil {
		return SendResult{}, err
	}
	var r [1]SendResult
	q.sendResults(r[:], []uint64{seq}, []bool{dup})
	return r[0], nil
}

// SendBatch sends 1..10 messages, in order. An entry that is invalid on its own (its body, attributes,
// delay or size) fails alone: its result is zero and the returned *BatchError names it. The whole call
// fails, changing nothing, when the batch has no entries or more than 10, when its messages add up to more
// than 1 MiB, or when a FIFO entry lacks a group id or a deduplication id (then with the code
// InvalidParameterValue, where Send's is MissingParameter for a missing group id, as SQS answers). As on
// SQS, an entry whose delay, number of attributes or attribute types and values are invalid fails alone
// before that: it does not fail the call for a missing id.
func (q *Queue) SendBatch(ctx context.Context, ms []Message) ([]SendResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := q.check(); err != nil {
		return nil, err
	}
	if err := checkBatchLen(len(ms), "SendMessageBatchRequestEntry"); err != nil {
		return nil, err
	}
	var (
		stored [MaxBatchEntries]*message // nil for a failed entry
		keys   [MaxBatchEntries]string
		seqs   [MaxBatchEntries]uint64
		dups   [MaxBatchEntries]bool
		errs   [MaxBatchEntries]error
		total  int
	)
	for i := range ms {
		total += rawSize(&ms[i])
	}
	if total > MaxMessageSize {
		return nil, reject(ErrBatchTooLong, "batch requests cannot be longer than %d bytes, you have sent %d bytes", MaxMessageSize, total).says(
			"Batch requests cannot be longer than %d bytes. You have sent %d bytes.", MaxMessageSize, total)
	}
	for i := range ms {
		errs[i] = q.checkParams(&ms[i])
	}
	for i := range ms {
		if errs[i] != nil {
			continue
		}
		if r := q.requireFIFOIDs(&ms[i]); r != nil {
			return nil, &coded{code: "InvalidParameterValue", err: fmt.Errorf("entry %d: %w", i, r)}
		}
	}
	var failed []EntryError
	for i := range ms {
		if errs[i] == nil {
			errs[i] = q.checkContent(&ms[i], true)
		}
		if errs[i] != nil {
			failed = append(failed, EntryError{Index: i, Err: errs[i]})
			continue
		}
		m := ms[i]
		if q.fifo {
			m.DeduplicationID, keys[i] = q.dedupKey(&m)
		}
		stored[i] = newMessage(&m)
	}
	now := q.lock()
	for i, m := range stored[:len(ms)] {
		if m != nil {
			seqs[i], dups[i] = q.sendLocked(now, m, keys[i])
			q.countSendLocked(dups[i])
		}
	}
	if err := q.unlock().wait(q.st); err != nil {
		return nil, err
	}
	results := make([]SendResult, len(ms))
	q.sendResults(results, seqs[:len(ms)], dups[:len(ms)])
	if failed != nil {
		return results, &BatchError{Entries: failed}
	}
	return results, nil
}

// checkBatchLen checks the number of entries of a batch call (7.2.1); entry names them in AWS's message
// about an empty batch, as the SQS action calls its entries.
func checkBatchLen(n int, entry string) error {
	if n == 0 {
		return reject(ErrEmptyBatch, "no entries").says("There should be at least one %s in the request.", entry)
	}
	return CheckBatchLen(n)
}

// CheckBatchLen returns ErrTooManyEntries when a batch call has n entries, more than [MaxBatchEntries], and
// nil otherwise; [ErrorMessage] gives AWS's message for it, which names n. The batch methods check it
// themselves (and return ErrEmptyBatch for no entries), so a caller of theirs needs it only to check the
// number first: a front end that reads at most MaxBatchEntries+1 entries of a longer batch request, or
// checks something of its own on each entry that SQS checks after their number.
func CheckBatchLen(n int) error {
	if n > MaxBatchEntries {
		return reject(ErrTooManyEntries, "maximum number of entries per request are %d, you have sent %d", MaxBatchEntries, n).says(
			"Maximum number of entries per request are %d. You have sent %d.", MaxBatchEntries, n)
	}
	return nil
}

// rawSize is the size of m as sent, valid or not: the measure of the 1 MiB batch limit.
func rawSize(m *Message) int {
	n := len(m.Body)
	for name, a := range m.Attributes {
		n += len(name) + len(a.DataType) + len(a.StringValue) + len(a.BinaryValue)
	}
	return n
}

// newMessage makes the stored form of a validated message, outside the lock. Its attributes are copied.
func newMessage(in *Message) *message {
	m := &message{dueIdx: -1}
	m.setContent(in, cloneAttributes(in.Attributes))
	return m
}

// sendLocked stores m and returns its sequence number, unless its deduplication key was accepted within
// the window: then it returns the original's, and dup. An empty key (a move task's message) skips
// deduplication.
func (q *Queue) sendLocked(now tick, m *message, key string) (seq uint64, dup bool) {
	q.syncLocked() // a duplicate too: it reports the original as stored
	if q.fifo && key != "" {
		if seq, dup := q.dedup.lookup(key, now); dup {
			return seq, true
		}
	}
	m.seq = q.takeSeqLocked()
	m.sentAt = now
	q.addSlotLocked(m)
	q.all.pushBack(m)
	delay := q.conf().delay
	if !q.fifo {
		delay = explicit(m.delay(), delay) // a message timer overrides the queue's delay (spec 4.2)
	}
	if x := m.extra; x != nil && x.delay == ExplicitZero {
		x.delay = 0 // as sent: no message timer; ExplicitZero is a request, not a value to show
	}
	if q.st != nil {
		q.putMessageLocked(q.batchLocked(), m, delay > 0, now+delay, false)
	}
	if delay > 0 {
		q.setStateLocked(m, StateDelayed)
		q.scheduleLocked(m, now+delay)
	} else {
		q.setStateLocked(m, StateVisible)
	}
	switch {
	case q.fifo:
		q.groups.add(m)
		if key != "" {
			q.dedup.add(key, m.seq, now)
			q.putDedupLocked(key, m.seq, now)
		}
	case delay == 0:
		q.fresh.pushBack(m)
		m.ready = readyFresh
	}
	return m.seq, false
}

// sendResults fills results with the ids of the messages seqs, all in one allocation. A zero seq is a failed
// entry.
func (q *Queue) sendResults(results []SendResult, seqs []uint64, dups []bool) {
	per := q.idsLen()
	var sb strings.Builder
	sb.Grow(len(seqs) * per)
	var scratch [uuidLen + seqDigits]byte
	for _, seq := range seqs {
		if seq != 0 {
			sb.Write(q.appendIDs(scratch[:0], seq))
		}
	}
	ids := sb.String()
	for i, seq := range seqs {
		if seq == 0 {
			continue
		}
		s := ids[:per]
		ids = ids[per:]
		results[i] = SendResult{MessageID: s[:uuidLen], Duplicate: dups[i]}
		if q.fifo {
			results[i].SequenceNumber = s[uuidLen:]
		}
	}
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

// Delete deletes the message a receipt handle names. On a standard queue any handle of the message deletes
// it, even while another consumer holds it. On a FIFO queue the handle must be of the latest receive and its
// visibility window must not have ended, else ErrReceiptHandleExpired. On both, deleting a message that is
// already gone (deleted, expired or purged) succeeds. A string that is not a receipt handle of this queue
// returns ErrReceiptHandleInvalid.
func (q *Queue) Delete(ctx context.Context, receiptHandle string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := q.check(); err != nil {
		return err
	}
	h, err := q.parseHandle(receiptHandle)
	if err != nil {
		return err
	}
	q.lock()
	err = q.deleteLocked(h, receiptHandle)
	if werr := q.unlock().wait(q.st); werr != nil {
		return werr
	}
	return err
}

// DeleteBatch deletes 1..10 messages by receipt handle. Entries fail alone, reported in a *BatchError; an
// empty batch or one of more than 10 entries fails whole.
func (q *Queue) DeleteBatch(ctx context.Context, receiptHandles []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := q.check(); err != nil {
		return err
	}
	if err := checkBatchLen(len(receiptHandles), "DeleteMessageBatchRequestEntry"); err != nil {
		return err
	}
	var failed []EntryError
	q.lock()
	for i, s := range receiptHandles {
		h, err := q.parseHandle(s)
		if err == nil {
			err = q.deleteLocked(h, s)
		}
		if err != nil {
			failed = append(failed, EntryError{Index: i, Err: err})
		}
	}
	if err := q.unlock().wait(q.st); err != nil {
		return err
	}
	if failed != nil {
		return &BatchError{Entries: failed}
	}
	return nil
}

// deleteLocked deletes the message of h, parsed from the receipt handle s.
func (q *Queue) deleteLocked(h handle, s string) error {
	m := q.lookupLocked(h)
	if m == nil {
		q.syncLocked() // deleted, expired or purged already, maybe by a call still syncing
		return nil
	}
	if q.fifo && (m.receipt() != h.receipt || m.state != StateInFlight) {
		return handleExpired(s, "message %s", q.messageIDLocked(m))
	}
	q.dropLocked(m)
	q.counters.Deleted++
	q.syncLocked()
	return nil
}

// Stats returns the queue's counts, exact as of now.
func (q *Queue) Stats() Stats {
	q.lock()
	s := q.stats
	q.unlock()
	return s
}

// Purge deletes every message, in flight and delayed ones too, and on a FIFO queue the deduplication history
// and the receive attempt ids. A queue can be purged once every 60 seconds; sooner returns
// ErrPurgeInProgress.
func (q *Queue) Purge(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := q.check(); err != nil {
		return err
	}
	now := q.lock()
	if q.purged && now-q.purgedAt < purgeInterval {
		q.unlock()
		return reject(ErrPurgeInProgress, "only one PurgeQueue operation on %s is allowed every %v", q.name, purgeInterval).says(
			"Only one PurgeQueue operation on %s is allowed every %s seconds.", q.name, seconds(purgeInterval))
	}
	q.purged, q.purgedAt = true, now
	q.counters.Purged += uint64(q.stats.Visible + q.stats.InFlight + q.stats.Delayed)
	q.purgeRecordsLocked()
	clear(q.slots)
	q.slots, q.freeSlots, q.heldSlots = q.slots[:0], q.freeSlots[:0], q.heldSlots[:0]
	q.all = msgList{kind: bySend}
	q.fresh = msgList{kind: byQueue}
	q.retry = msgList{kind: byQueue}
	if q.fifo {
		q.groups.clear()
	}
	q.due.clear()
	q.dedup.clear()
	q.attempts.clear()
	clear(q.origins)
	q.stats = Stats{}
	return q.unlock().wait(q.st)
}

// Messages returns every stored message as it is now, in the order they arrived: send order, and in a
// dead-letter queue the order messages were moved in. It changes nothing: receive counts and visibility
// stay as they are. The look is taken when iteration starts, in O(n); for a page at a time of a long queue,
// see [Queue.MessagesAfter].
func (q *Queue) Messages() iter.Seq[Snapshot] {
	return func(yield func(Snapshot) bool) {
		q.lock()
		snaps := make([]Snapshot, 0, q.all.len)
		for m := q.all.head; m != nil; m = next(m, bySend) {
			s := q.snapshotLocked(m)
			snaps = append(snaps, s)
		}
		q.unlock()
		for _, s := range snaps {
			if !yield(s) {
				return
			}
		}
	}
}

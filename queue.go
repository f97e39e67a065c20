package fifoq

import (
	"cmp"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fifoq/fifoq/internal/dedup"
	"github.com/fifoq/fifoq/internal/rule"
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
	rank    uint64                 // in the order of locks (see lockUnder)

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
	dedup     dedup.Window
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
	// sync them, whether they reserve a new block of sequence numbers, the last batch it committed and the
	// error of a commit; the highest sequence number recorded as given out; and buffers to encode records in.
	jb         storage.Batch
	jsync      bool
	jreserve   bool
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

// New creates a queue. A name ending in ".fifo" makes a FIFO queue, any other name a standard queue. Names
// are 1..80 characters of [A-Za-z0-9_-], ".fifo" included. Options out of range return
// ErrInvalidQueueAttribute; FIFO-only options on a standard queue return ErrFIFOOnly.
func New(name string, opts ...Option) (*Queue, error) {
	q, p, err := NewNoWait(name, opts...)
	if err != nil {
		return nil, err
	}
	if err := p.Wait(); err != nil {
		return nil, err
	}
	return q, nil
}

// NewNoWait is [New] without the wait for the disk: with [WithStore], the queue's record is handed to the
// store and the returned Pending says when it is durable. A layer above that creates a queue and records
// something of its own about it (a catalogue, its definition) waits once for both, after releasing its own
// locks. An in-memory queue's Pending is durable at once.
func NewNoWait(name string, opts ...Option) (*Queue, Pending, error) {
	if err := rule.QueueName(name); err != nil {
		return nil, Pending{}, err
	}
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	suiteStore(&cfg)
	fifo := strings.HasSuffix(name, ".fifo")
	if err := cfg.validate(fifo); err != nil {
		return nil, Pending{}, err
	}
	if err := cfg.validateRedrive(name, fifo, nil); err != nil {
		return nil, Pending{}, err
	}
	q := &Queue{
		name:     name,
		fifo:     fifo,
		clock:    cfg.clock,
		logger:   cfg.logger,
		epoch:    cfg.clock.Now(),
		tag:      newTag(),
		idNonce:  rand.Uint64(),
		rank:     queueRanks.Add(1),
		all:      msgList{kind: bySend},
		fresh:    msgList{kind: byQueue},
		retry:    msgList{kind: byQueue},
		dedup:    dedup.NewWindow(),
		attempts: newAttemptWindow(),
	}
	q.epochNs = q.epoch.UnixNano()
	q.cfg.Store(&cfg)
	if fifo {
		q.groups = newGroupSet(cfg.groupOrder)
	}
	if d := cfg.dlq; d != nil {
		if err := d.addSource(q); err != nil {
			return nil, Pending{}, err
		}
	}
	if st := cfg.store; st != nil {
		q.storeKey = cmp.Or(cfg.storeKey, name)
		c, err := st.attach(q, q.storeKey)
		if err != nil {
			if d := cfg.dlq; d != nil {
				d.removeSource(q)
			}
			return nil, Pending{}, err
		}
		return q, Pending{c, st}, nil
	}
	return q, Pending{}, nil
}

// Name returns the queue's name.
func (q *Queue) Name() string { return q.name }

// FIFO reports whether q is a FIFO queue.
func (q *Queue) FIFO() bool { return q.fifo }

// Clock returns the queue's clock, for code that times what it does with the queue by the queue's time
// (a batch window, an idempotency store's lock timeout).
func (q *Queue) Clock() Clock { return q.clock }

// conf returns the queue's attributes as they are now.
func (q *Queue) conf() *config { return q.cfg.Load() }

// lock takes mu and applies everything that has come due; it returns the time.
func (q *Queue) lock() tick {
	q.mu.Lock()
	return q.enterLocked()
}

// enterLocked is lock once mu is taken.
func (q *Queue) enterLocked() tick {
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
		if q.dedup.Expire(now) {
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

// Stats returns the queue's counts, exact as of now.
func (q *Queue) Stats() Stats {
	q.lock()
	s := q.stats
	q.unlock()
	return s
}

// Package idempotency makes a fifoq batch handler process each message once, even when the message is
// delivered more than once: by a producer that sent it twice beyond the deduplication window, or by a
// redelivery after a visibility timeout ended while another consumer was still at work.
//
// A [Store] holds a processing lock and a processed mark per message id. [Wrap] takes the lock of each
// message before the handler sees it, skips the messages that are processed or being processed under a live
// lock, marks the ones that succeeded, and releases the ones that failed so a retry can take them again. A
// lock that outlives its lock timeout (its handler crashed or hangs) can be taken again.
package idempotency

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/fifoq/fifoq"
)

// A Store keeps, per message id, whether it is being processed (under a lock that expires) or processed.
// Implementations must be safe for concurrent use.
type Store interface {
	// Acquire takes the processing lock for id for lockTimeout; false means it is processed, or being
	// processed under a live lock.
	Acquire(ctx context.Context, id string, lockTimeout time.Duration) (bool, error)
	// MarkProcessed records that id was processed, so it is never acquired again (while remembered).
	MarkProcessed(ctx context.Context, id string) error
	// Release drops the processing lock for id, so it can be acquired again at once.
	Release(ctx context.Context, id string) error
}

// A MemoryStore is a Store in memory, driven by a clock like a fifoq queue's. It is safe for concurrent use.
// Create one with [NewMemoryStore].
type MemoryStore struct {
	clock  fifoq.Clock
	retain time.Duration

	mu      sync.Mutex // guards the fields below
	records map[string]record
	order   []expiry // processed ids in the order marked, for forgetting them; order[head:] are live
	head    int
}

type record struct {
	processed bool
	until     time.Time // the lock's end, or when a processed mark is forgotten
}

type expiry struct {
	id    string
	until time.Time
}

// A MemoryOption configures a [MemoryStore].
type MemoryOption func(*MemoryStore)

// WithClock sets the store's clock; the default is the real clock, which is also the virtual clock inside a
// testing/synctest bubble. Give it the queue's clock (fifoq.Queue.Clock) to move both together.
func WithClock(c fifoq.Clock) MemoryOption { return func(s *MemoryStore) { s.clock = c } }

// WithRetention sets how long a processed id is remembered; the default is 24 hours. Keep it longer than
// any redelivery can come. NewMemoryStore panics when d is not positive: that would turn idempotency off.
func WithRetention(d time.Duration) MemoryOption { return func(s *MemoryStore) { s.retain = d } }

// NewMemoryStore returns an empty store.
func NewMemoryStore(opts ...MemoryOption) *MemoryStore {
	s := &MemoryStore{retain: 24 * time.Hour, records: make(map[string]record)}
	for _, o := range opts {
		o(s)
	}
	if s.retain <= 0 {
		panic("idempotency: WithRetention needs a positive duration")
	}
	if s.clock == nil {
		s.clock = realClock{}
	}
	return s
}

type realClock struct{}

func (realClock) Now() time.Time                                  { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) fifoq.Timer { return time.AfterFunc(d, f) }

// ErrInvalidLockTimeout is returned by Acquire for a lock timeout that is not positive.
var ErrInvalidLockTimeout = errors.New("idempotency: lock timeout must be positive")

// Acquire takes the processing lock for id: it succeeds when id is unknown, or its lock has expired.
func (s *MemoryStore) Acquire(ctx context.Context, id string, lockTimeout time.Duration) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if lockTimeout <= 0 {
		return false, ErrInvalidLockTimeout
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.forgetLocked()
	if r, ok := s.records[id]; ok && (r.processed || now.Before(r.until)) {
		return false, nil
	}
	s.records[id] = record{until: now.Add(lockTimeout)}
	return true, nil
}

// MarkProcessed records id as processed, for the store's retention.
func (s *MemoryStore) MarkProcessed(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.forgetLocked()
	until := now.Add(s.retain)
	s.records[id] = record{processed: true, until: until}
	s.order = append(s.order, expiry{id, until})
	return nil
}

// Release drops the processing lock for id; a processed id stays processed.
func (s *MemoryStore) Release(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.records[id]; ok && !r.processed {
		delete(s.records, id)
	}
	return nil
}

// forgetLocked drops processed marks past their retention, oldest first, and returns the time. Expired
// locks need no sweep: Acquire takes them over, and they are few.
func (s *MemoryStore) forgetLocked() time.Time {
	now := s.clock.Now()
	for s.head < len(s.order) && !now.Before(s.order[s.head].until) {
		e := s.order[s.head]
		if r, ok := s.records[e.id]; ok && r.processed && r.until.Equal(e.until) {
			delete(s.records, e.id)
		}
		s.order[s.head] = expiry{}
		s.head++
	}
	if s.head > 1024 && s.head*2 >= len(s.order) {
		n := copy(s.order, s.order[s.head:])
		clear(s.order[n:])
		s.order, s.head = s.order[:n], 0
	}
	return now
}

// Wrap makes h idempotent. For each message of a batch it takes the processing lock of its key (key(d), or
// the MessageID when key is nil) for lockTimeout; messages it cannot lock are processed, or being processed
// elsewhere, and are left out, so the consumer deletes them. h gets the rest, in order. When h succeeds
// their keys are marked processed; when it fails or panics their locks are released so a retry takes them
// again. A *fifoq.BatchItemFailures from h marks the messages it does not name and releases the ones it
// names, and on FIFO queues every later message of their groups, which the consumer fails too; one that
// names a message h was not given fails them all, as it fails the whole batch.
//
// Two calls never process one key at the same time, as long as a call ends within lockTimeout. So choose
// a lockTimeout at least the handler timeout, and at most the visibility timeout: a copy skipped because
// another call holds its lock is deleted, and if that call then dies, only the lock timeout running out
// before the message's visibility timeout lets the message be processed again.
//
// Wrap panics when lockTimeout is not positive: every call would fail.
func Wrap(h fifoq.Handler, s Store, lockTimeout time.Duration, key func(fifoq.Delivery) string) fifoq.Handler {
	if lockTimeout <= 0 {
		panic("idempotency: Wrap needs a positive lock timeout")
	}
	if key == nil {
		key = func(d fifoq.Delivery) string { return d.MessageID }
	}
	return func(ctx context.Context, batch []fifoq.Delivery) (err error) {
		var mine []fifoq.Delivery
		var keys []string
		for _, d := range batch {
			k := key(d)
			ok, err := s.Acquire(ctx, k, lockTimeout)
			if err != nil {
				releaseAll(s, keys)
				return err
			}
			if ok {
				mine = append(mine, d)
				keys = append(keys, k)
			}
		}
		if len(mine) == 0 {
			return nil
		}
		settled := false
		defer func() {
			if !settled { // h panicked: the consumer fails the batch, so free its messages for the retry
				releaseAll(s, keys)
			}
		}()
		err = h(ctx, mine)
		settled = true
		ctx = context.WithoutCancel(ctx) // record the outcome even when h ran to its deadline
		var items *fifoq.BatchItemFailures
		switch {
		case err == nil:
			return markAll(ctx, s, keys)
		case errors.As(err, &items):
			failed, valid := failedOf(mine, items)
			if !valid {
				releaseAll(s, keys)
				return err
			}
			errs := []error{err}
			for i, d := range mine {
				if failed[d.MessageID] {
					releaseAll(s, keys[i:i+1])
				} else {
					errs = append(errs, s.MarkProcessed(ctx, keys[i]))
				}
			}
			return errors.Join(errs...)
		default:
			releaseAll(s, keys)
			return err
		}
	}
}

// failedOf returns the ids of the messages a partial failure fails: those it names and, on FIFO queues
// (deliveries with a sequence number), the later messages of their groups. It is not valid when it names a
// message that is not in batch (or an empty id).
func failedOf(batch []fifoq.Delivery, f *fifoq.BatchItemFailures) (failed map[string]bool, valid bool) {
	failed = make(map[string]bool)
	if f == nil {
		return failed, true
	}
	named := make(map[string]bool, len(f.MessageIDs))
	for _, id := range f.MessageIDs {
		named[id] = true
	}
	groups := make(map[string]bool)
	for _, d := range batch {
		fifo := d.SequenceNumber != ""
		if named[d.MessageID] || fifo && groups[d.GroupID] {
			failed[d.MessageID] = true
			if fifo {
				groups[d.GroupID] = true
			}
		}
		delete(named, d.MessageID)
	}
	return failed, len(named) == 0
}

func markAll(ctx context.Context, s Store, keys []string) error {
	var errs []error
	for _, k := range keys {
		errs = append(errs, s.MarkProcessed(ctx, k))
	}
	return errors.Join(errs...)
}

// releaseAll releases keys whatever ctx says: a lock left behind would hold the message off until its timeout.
func releaseAll(s Store, keys []string) {
	for _, k := range keys {
		_ = s.Release(context.Background(), k)
	}
}

package fifoq

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/fifoq/fifoq/storage"
)

// A Store keeps queues on disk, so that a restart or a crash of the process loses none of their messages.
// Open one with durable.Open (package github.com/fifoq/fifoq/durable, which brings the storage engine, so a
// program that keeps its queues in memory does not build it), or with [OpenStore] over another engine, and
// hand it to [New] with [WithStore]. One Store holds any number of queues, each by name; a dead-letter queue
// and its sources share one.
//
// What a durable queue keeps: every message with its receive count, visibility deadline and dead-letter
// origin, the deduplication ids and receive request attempt ids of the last 5 minutes, and the MessageIDs
// and receipt handles it gave out, which stay valid after a restart. Its settings are the options New is
// given, each time, as without a store. Every change a call reports as done is on disk when the call
// returns: sends, receives (their receive counts and visibility deadlines), deletes, visibility changes,
// purges, moves to a dead-letter queue and a move task's steps. Concurrent callers share the disk's syncs.
//
// A Store is safe for concurrent use. When a write or a sync fails (a full disk), the store fails for good:
// every later change of any of its queues returns ErrStoreFailed, while Stats, Messages and Attributes go
// on; open the directory again to recover what is on disk.
type Store struct {
	eng      storage.Engine
	syncer   storage.Syncer // eng, if it can sync on demand: a queue reserves its sequence numbers with it
	location string

	// failed is set once: the error every change returns after the store failed or was closed.
	failed atomic.Pointer[error]
	// open holds the queues open on the store: name → *Queue. It changes under mu, and is read without it,
	// so a queue can look a source up while it holds its own lock, which must not wait for mu.
	open sync.Map

	// mu guards the fields below. Lock order: Store.mu before Queue.mu.
	mu      sync.Mutex
	catalog map[string]*queueRecord // every queue stored, by name
	nextID  uint32
	closed  bool
}

// Errors of durable queues. They are not rejections by an SQS rule: fifoq.ErrorCode returns "" for them.
var (
	// ErrStoreClosed: the queue's store was closed.
	ErrStoreClosed = errors.New("fifoq: store is closed")
	// ErrStoreFailed: a write or a sync of the queue's store failed; it refuses every change until it is
	// opened again. The error wraps the engine's, such as ENOSPC.
	ErrStoreFailed = errors.New("fifoq: store failed")
	// ErrQueueOpen: a queue of that name is open on the store already: a store holds one Queue per name.
	ErrQueueOpen = errors.New("fifoq: queue is open already")
	// ErrQueueDeleted: the queue was deleted from its store.
	ErrQueueDeleted = errors.New("fifoq: queue was deleted")
	// ErrQueueInUse: a dead-letter queue cannot be deleted while a queue open on the store sends to it.
	ErrQueueInUse = errors.New("fifoq: queue is in use")
)

// OpenStore returns the Store kept in the storage engine e, or a new, empty one when e holds nothing;
// location names it in errors, such as the engine's directory. Package durable's Open calls it with its
// Pebble engine; another engine that keeps the contract of package storage may stand in its place. The
// Store takes e over: its Close closes e.
//
// A store whose records do not decode, or that holds records without fifoq's format record (its first, never
// deleted), returns ErrStoreCorrupt. A failed write of the format record of a new store returns
// ErrStoreFailed.
func OpenStore(e storage.Engine, location string) (*Store, error) {
	s := &Store{eng: e, location: location, catalog: make(map[string]*queueRecord)}
	s.syncer, _ = e.(storage.Syncer)
	formatSeen := false
	err := e.Scan([]byte{keyFormat}, []byte{keyQueue + 1}, func(k, v []byte) error {
		switch k[0] {
		case keyFormat:
			if string(k[1:]) != formatKeyValue || len(v) != 1 || v[0] != formatVersion {
				return fmt.Errorf("%w: %s: format record %q = %q, want version %d", ErrStoreCorrupt, location, k, v, formatVersion)
			}
			formatSeen = true
		case keyQueue:
			r, err := decodeQueueRecord(v)
			if err != nil {
				return fmt.Errorf("%w: %s: queue %q: %v", ErrStoreCorrupt, location, k[1:], err)
			}
			s.catalog[string(k[1:])] = &r
			s.nextID = max(s.nextID, r.id+1)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !formatSeen {
		if len(s.catalog) > 0 {
			return nil, fmt.Errorf("%w: %s: queues stored without a format record", ErrStoreCorrupt, location)
		}
		if found, err := holdsAny(e); err != nil || found {
			if err == nil {
				err = fmt.Errorf("%w: %s: records stored without a format record", ErrStoreCorrupt, location)
			}
			return nil, err
		}
		b := e.NewBatch()
		b.Set(formatKey(), []byte{formatVersion})
		t, err := e.Commit(b, true)
		if err == nil {
			err = t.Wait()
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrStoreFailed, location, err)
		}
	}
	return s, nil
}

// holdsAny reports whether e holds any key.
func holdsAny(e storage.Engine) (bool, error) {
	found := false
	err := e.Scan([]byte{0}, bytes.Repeat([]byte{0xff}, 8), func(k, v []byte) error {
		found = true
		return errStopped
	})
	if errors.Is(err, errStopped) {
		err = nil
	}
	return found, err
}

// String returns where the store is, such as its directory.
func (s *Store) String() string { return s.location }

// Queues returns the names of the queues the store holds, in order, open or not.
func (s *Store) Queues() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.catalog))
}

// Close makes every change durable and closes the store. The queues open on it refuse changes from then on
// (ErrStoreClosed); Stats, Messages and Attributes go on. A second Close returns nil.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	closed := fmt.Errorf("%w: %s", ErrStoreClosed, s.location)
	s.failed.CompareAndSwap(nil, &closed)
	s.mu.Unlock()
	// Closed, the store opens no queue more, so the range sees every queue that can commit.
	s.open.Range(func(_, v any) bool {
		// A barrier: a call under way now commits nothing and returns ErrStoreClosed, so once every
		// queue's lock was taken, no batch can reach the engine after its Close.
		q := v.(*Queue)
		q.mu.Lock()
		q.mu.Unlock() //lint:ignore SA2001 an empty critical section is the barrier
		return true
	})
	return s.eng.Close()
}

// DeleteQueue removes a queue and every message it holds from the store. An open Queue of that name
// refuses every change from then on (ErrQueueDeleted). A dead-letter queue that another queue open on the
// store uses cannot be deleted (ErrQueueInUse); one that is its own goes with its policy. Deleting a queue that the store does not hold does nothing.
func (s *Store) DeleteQueue(name string) error {
	c, err := s.deleteQueue(name)
	if err != nil {
		return err
	}
	return c.wait(s) // after releasing s.mu: the other queues' creations and deletions do not wait for this sync
}

func (s *Store) deleteQueue(name string) (commit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.err(); err != nil {
		return commit{}, err
	}
	rec := s.catalog[name]
	if rec == nil {
		return commit{}, nil
	}
	b := s.eng.NewBatch()
	b.Delete(queueKey(name))
	b.DeleteRange(dataRange(rec.id))
	var c commit
	if q := s.openQueue(name); q != nil {
		// Under the queue's lock: no source can start using it (addSource looks at deleted under it),
		// every change it committed before is ordered before the range deletion, and it commits none after.
		q.mu.Lock()
		for _, src := range q.sources {
			if src != q { // its own dead-letter queue goes with it
				q.mu.Unlock()
				return commit{}, fmt.Errorf("%w: %s is the dead-letter queue of %s", ErrQueueInUse, name, src.name)
			}
		}
		q.commitLocked()
		q.deleted.Store(true)
		c.t, c.err = s.eng.Commit(b, true)
		q.mu.Unlock()
		if d := q.conf().dlq; d != nil {
			d.removeSource(q) // so that its dead-letter queue can be deleted in turn
		}
	} else {
		c.t, c.err = s.eng.Commit(b, true)
	}
	delete(s.catalog, name)
	s.setOpen(name, nil)
	if c.err != nil {
		c.err = s.fail(c.err)
	}
	return c, nil
}

// err returns the error of a failed or closed store, or nil. A store whose engine broke on its own (a
// flush of its files that failed while no queue wrote) fails at the first look.
func (s *Store) err() error {
	if p := s.failed.Load(); p != nil {
		return *p
	}
	select {
	case <-s.eng.Failed():
		return s.fail(s.eng.Health().Err)
	default:
		return nil
	}
}

// fail records that a write or a sync failed: the store refuses every later change. It returns the error
// the caller returns.
func (s *Store) fail(cause error) error {
	err := fmt.Errorf("%w: %s: %w", ErrStoreFailed, s.location, cause)
	if errors.Is(cause, storage.ErrClosed) {
		err = fmt.Errorf("%w: %s", ErrStoreClosed, s.location)
	}
	if s.failed.CompareAndSwap(nil, &err) {
		return err
	}
	return *s.failed.Load()
}

// Err returns the error every change of the store's queues returns: nil while the store works; once a
// write or a sync failed (a queue's, or one of the engine's own, such as a flush of its files), an error
// that wraps ErrStoreFailed and the engine's error (errors.Is(err, syscall.ENOSPC) on a full disk); after
// Close, one that wraps ErrStoreClosed.
func (s *Store) Err() error { return s.err() }

// Failed returns a channel that is closed when the store fails (a write or a sync failed, a queue's or one
// of the engine's own, on an idle store too; Err tells why), so that a server can report it and stop, to be
// restarted on the directory, which recovers every change acknowledged before the failure. Close does not
// close it.
func (s *Store) Failed() <-chan struct{} { return s.eng.Failed() }

// setOpen records q as the open queue of that name, or forgets the name when q is nil. s.mu must be held.
func (s *Store) setOpen(name string, q *Queue) {
	if q == nil {
		s.open.Delete(name)
	} else {
		s.open.Store(name, q)
	}
}

// openQueue returns the queue of that name open on the store, or nil.
func (s *Store) openQueue(name string) *Queue {
	v, _ := s.open.Load(name)
	q, _ := v.(*Queue)
	return q
}

// seqBlock is how many sequence numbers a queue takes at a time: the catalog record is written once per
// seqBlock messages, and a restart skips at most that many.
const seqBlock = 1 << 12

// attach opens the stored queue of q's name, or stores a new one, and recovers q's messages. key is the
// name the store knows the queue by: its name, except for the queues of this package's tests. A new queue's
// record is not waited for: attach returns it, for the caller to wait on.
func (s *Store) attach(q *Queue, key string) (commit, error) {
	s.mu.Lock()
	if err := s.err(); err != nil {
		s.mu.Unlock()
		return commit{}, err
	}
	if s.openQueue(key) != nil {
		s.mu.Unlock()
		return commit{}, fmt.Errorf("%w: %s in %s", ErrQueueOpen, key, s.location)
	}
	rec, found := s.catalog[key]
	if !found {
		rec = &queueRecord{id: s.nextID, nonce: rand.Uint64(), tag: newTag()}
		s.nextID++
		s.catalog[key] = rec
	}
	s.setOpen(key, q)
	s.mu.Unlock()

	q.st, q.sid, q.idNonce, q.tag, q.seqLimit = s, rec.id, rec.nonce, rec.tag, rec.seqLimit
	if rec.purgedAt != 0 {
		q.purged, q.purgedAt = true, q.tickOf(rec.purgedAt)
	}
	var err error
	var c commit
	if found {
		err = q.recover()
	} else {
		b := s.eng.NewBatch()
		b.DeleteRange(dataRange(rec.id)) // ids are reused after a restart: nothing of a deleted queue's may stay
		b.Set(queueKey(key), rec.encode(nil))
		if c.t, err = s.eng.Commit(b, true); err != nil {
			err = s.fail(err) // a failed wait fails the store later: nothing to undo then
		}
	}
	if err != nil {
		s.mu.Lock()
		s.setOpen(key, nil)
		if !found {
			delete(s.catalog, key)
		}
		s.mu.Unlock()
		return commit{}, err
	}
	return c, nil
}

package storagetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/google/btree"

	"github.com/fifoq/fifoq/storage"
)

// A Disk is what Memory engines keep across crashes and restarts: the writes that were made durable. It
// stands for a directory; at most one engine is open on it at a time, as a lock file would ensure.
type Disk struct {
	mu   sync.Mutex
	data *btree.BTreeG[kv] // durable
	open *Memory
}

type kv struct {
	key   string
	value []byte
}

func kvLess(a, b kv) bool { return a.key < b.key }

// NewDisk returns an empty disk.
func NewDisk() *Disk { return &Disk{data: btree.NewG(16, kvLess)} }

// ErrLocked is what Disk.Open returns while an engine is open on the disk.
var ErrLocked = errors.New("storagetest: the disk is in use by another engine")

// Open opens an engine on the disk, holding what was durable on it.
func (d *Disk) Open() (*Memory, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.open != nil {
		return nil, ErrLocked
	}
	m := &Memory{disk: d, live: d.data.Clone(), sets: make(map[string]int), failed: make(chan struct{})}
	d.open = m
	return m, nil
}

// Len returns how many keys are durable on the disk.
func (d *Disk) Len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.data.Len()
}

// Memory is a storage.Engine in memory, for tests. A committed batch is applied at once; it becomes durable
// (written to its Disk) when a Ticket of it or of a later batch is waited on, or at Close. Crash loses what
// was not durable. Faults can be injected: a failed commit, a failed sync, a sync that waits to be let go.
type Memory struct {
	disk *Disk

	// gate, when held by PauseSyncs, keeps Wait from syncing until ResumeSyncs.
	gate sync.Mutex

	// waiting counts the Waits at the gate; changed is closed and replaced when it grows.
	waitMu  sync.Mutex
	waiting int
	changed chan struct{}

	mu         sync.Mutex
	live       *btree.BTreeG[kv]     // everything applied
	sets       map[string]int        // live keys set by this engine: Sets since the key was last removed
	log        []*memBatch           // committed, not durable yet, in commit order
	committed  uint64                // batches committed
	durable    uint64                // batches durable: the first durable ones of those committed
	syncs      int                   // syncs done
	failCommit error                 // the next Commit fails with it
	failSync   error                 // the next sync fails with it
	broken     error                 // a commit or a sync failed, or a crash: every later call returns it
	closed     error                 // storage.ErrClosed, or the crash's error
	holdMatch  func(key string) bool // HoldSyncsOf: the keys whose batches' Waits are held
	holdCh     chan struct{}         // closed by ReleaseHeld
	failed     chan struct{}         // closed when the engine breaks (a failed commit or sync, a crash): Failed
	holdCommit chan struct{}         // HoldNextCommit: the next Commit takes it and waits for it to close
	heldCommit chan struct{}         // what HoldNextCommit made, for ReleaseHeld to close
}

var _ storage.Engine = (*Memory)(nil)

type opKind uint8

const (
	opSet opKind = iota
	opDelete
	opDeleteRange
	opSingleDelete
)

type op struct {
	kind  opKind
	key   string
	value []byte // opSet
	hi    string // opDeleteRange
}

type memBatch struct {
	ops []op
	seq uint64
}

func (b *memBatch) Set(key, value []byte) {
	b.ops = append(b.ops, op{kind: opSet, key: string(key), value: bytes.Clone(value)})
}
func (b *memBatch) Delete(key []byte) { b.ops = append(b.ops, op{kind: opDelete, key: string(key)}) }
func (b *memBatch) SingleDelete(key []byte) {
	b.ops = append(b.ops, op{kind: opSingleDelete, key: string(key)})
}
func (b *memBatch) DeleteRange(lo, hi []byte) {
	b.ops = append(b.ops, op{kind: opDeleteRange, key: string(lo), hi: string(hi)})
}
func (b *memBatch) Len() int { return len(b.ops) }

func (b *memBatch) applyTo(t *btree.BTreeG[kv]) {
	for _, o := range b.ops {
		applyOp(t, o)
	}
}

func applyOp(t *btree.BTreeG[kv], o op) {
	switch o.kind {
	case opSet:
		t.ReplaceOrInsert(kv{o.key, o.value})
	case opDelete, opSingleDelete:
		t.Delete(kv{key: o.key})
	case opDeleteRange:
		var doomed []kv
		t.AscendRange(kv{key: o.key}, kv{key: o.hi}, func(x kv) bool {
			doomed = append(doomed, x)
			return true
		})
		for _, x := range doomed {
			t.Delete(x)
		}
	}
}

// applyLocked applies b to the live keys. It panics when b single-deletes a key that was set more than
// once since it was last removed, which Pebble's SingleDelete would make undefined (Batch.SingleDelete): a
// key this engine found on its disk counts as set more than once, as this engine cannot tell how often.
func (m *Memory) applyLocked(b *memBatch) {
	for _, o := range b.ops {
		switch o.kind {
		case opSet:
			if n, ok := m.sets[o.key]; ok {
				m.sets[o.key] = n + 1
			} else if m.live.Has(kv{key: o.key}) {
				m.sets[o.key] = 2 // set before this engine opened: how often is not known
			} else {
				m.sets[o.key] = 1
			}
		case opSingleDelete:
			n, ok := m.sets[o.key]
			if !ok && m.live.Has(kv{key: o.key}) {
				panic(fmt.Sprintf("storagetest: SingleDelete of key %x, which was set before the engine opened", o.key))
			}
			if n > 1 {
				panic(fmt.Sprintf("storagetest: SingleDelete of key %x, set %d times since it was last removed", o.key, n))
			}
			delete(m.sets, o.key)
		case opDelete:
			delete(m.sets, o.key)
		case opDeleteRange:
			// Every key of sets is live: the live keys in the range are those to forget, without a walk
			// over every key set (a queue's creation removes its range of keys, each time).
			m.live.AscendRange(kv{key: o.key}, kv{key: o.hi}, func(x kv) bool {
				delete(m.sets, x.key)
				return true
			})
		}
		applyOp(m.live, o)
	}
}

// NewBatch returns an empty batch.
func (m *Memory) NewBatch() storage.Batch { return &memBatch{} }

// Commit applies b at once; its ticket makes it durable.
func (m *Memory) Commit(b storage.Batch, sync bool) (storage.Ticket, error) {
	mb := b.(*memBatch)
	m.mu.Lock()
	if hold := m.holdCommit; hold != nil {
		m.holdCommit = nil
		m.mu.Unlock()
		m.arrive(1)
		<-hold
		m.arrive(-1)
		m.mu.Lock()
	}
	defer m.mu.Unlock()
	if err := m.errLocked(); err != nil {
		return nil, err
	}
	if err := m.failCommit; err != nil {
		m.failCommit = nil
		m.breakLocked(err)
		return nil, err
	}
	m.committed++
	mb.seq = m.committed
	m.applyLocked(mb)
	m.log = append(m.log, mb)
	if !sync {
		return nil, nil
	}
	t := &memTicket{m: m, seq: mb.seq}
	if m.holdMatch != nil && slices.ContainsFunc(mb.ops, func(o op) bool { return m.holdMatch(o.key) }) {
		t.hold = m.holdCh
	}
	return t, nil
}

func (m *Memory) errLocked() error {
	if m.closed != nil {
		return m.closed
	}
	return m.broken
}

type memTicket struct {
	m    *Memory
	seq  uint64
	hold chan struct{} // HoldSyncsOf: Wait waits for it to close
}

// Wait writes the log up to the ticket's batch to the disk, unless it is there already.
func (t *memTicket) Wait() error {
	m := t.m
	if t.hold != nil {
		m.arrive(1)
		<-t.hold
		m.arrive(-1)
	}
	m.arrive(1)
	m.gate.Lock()
	//lint:ignore SA2001 the gate is a barrier that PauseSyncs holds
	m.gate.Unlock()
	m.arrive(-1)
	m.mu.Lock()
	defer m.mu.Unlock()
	if t.seq <= m.durable {
		return nil
	}
	if err := m.errLocked(); err != nil {
		return err
	}
	if err := m.failSync; err != nil {
		m.failSync = nil
		m.breakLocked(err)
		return err
	}
	m.syncLocked(m.committed) // as an fsync does, everything written so far
	return nil
}

// syncLocked writes the log up to batch seq to the disk.
func (m *Memory) syncLocked(seq uint64) {
	d := m.disk
	d.mu.Lock()
	n := 0
	for n < len(m.log) && m.log[n].seq <= seq {
		m.log[n].applyTo(d.data)
		n++
	}
	d.mu.Unlock()
	m.log = append(m.log[:0], m.log[n:]...)
	m.durable = seq
	m.syncs++
}

// Scan reads what was applied.
func (m *Memory) Scan(lo, hi []byte, fn func(key, value []byte) error) error {
	m.mu.Lock()
	if err := m.closed; err != nil {
		m.mu.Unlock()
		return err
	}
	var found []kv
	m.live.AscendRange(kv{key: string(lo)}, kv{key: string(hi)}, func(x kv) bool {
		found = append(found, x)
		return true
	})
	m.mu.Unlock()
	for _, x := range found {
		if err := fn([]byte(x.key), x.value); err != nil {
			return err
		}
	}
	return nil
}

// Close makes everything committed durable, unless a sync failed, and releases the disk.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed != nil {
		return nil
	}
	err := m.broken
	if err == nil {
		m.syncLocked(m.committed)
	}
	m.closed = storage.ErrClosed
	m.release()
	return err
}

// ErrCrashed is what an engine returns after Crash.
var ErrCrashed = errors.New("storagetest: crashed")

// Crash stops the engine as a killed process would: what was not durable is lost, and later calls fail.
func (m *Memory) Crash() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed != nil {
		return
	}
	m.closed = ErrCrashed
	m.log = nil
	m.release()
	m.breakLocked(ErrCrashed)
}

// breakLocked records that the engine is broken, with err.
func (m *Memory) breakLocked(err error) {
	if m.broken == nil {
		m.broken = err
		close(m.failed)
	}
}

// Failed returns a channel that is closed when the engine breaks: a commit or a sync that FailNextCommit or
// FailNextSync made fail, or a Crash.
func (m *Memory) Failed() <-chan struct{} { return m.failed }

func (m *Memory) release() {
	m.disk.mu.Lock()
	if m.disk.open == m {
		m.disk.open = nil
	}
	m.disk.mu.Unlock()
}

// FailNextCommit makes the next Commit return err, applying nothing; the engine is broken from then on, as
// the contract of package storage says.
func (m *Memory) FailNextCommit(err error) {
	m.mu.Lock()
	m.failCommit = err
	m.mu.Unlock()
}

// FailNextSync makes the next sync fail with err; the engine is broken from then on, as a disk whose
// fsync failed cannot be trusted.
func (m *Memory) FailNextSync(err error) {
	m.mu.Lock()
	m.failSync = err
	m.mu.Unlock()
}

// HoldSyncsOf makes the Wait of each synced batch committed from now on that writes or deletes a key
// (a range deletion: its first key) for which match is true block until ReleaseHeld: a disk whose syncs
// take long for some writes only, while the others go on. WaitBlocked counts the Waits held.
func (m *Memory) HoldSyncsOf(match func(key string) bool) {
	m.mu.Lock()
	m.holdMatch, m.holdCh = match, make(chan struct{})
	m.mu.Unlock()
}

// HoldNextCommit makes the next Commit block, before it applies its batch, until ReleaseHeld: a caller
// stopped between its change in memory and its write, while others go on. WaitBlocked counts it.
func (m *Memory) HoldNextCommit() {
	m.mu.Lock()
	m.holdCommit = make(chan struct{})
	m.heldCommit = m.holdCommit
	m.mu.Unlock()
}

// ReleaseHeld lets the Waits that HoldSyncsOf held and the Commit that HoldNextCommit held go on, and holds
// no more.
func (m *Memory) ReleaseHeld() {
	m.mu.Lock()
	for _, ch := range []chan struct{}{m.holdCh, m.heldCommit} {
		if ch != nil {
			close(ch)
		}
	}
	m.holdMatch, m.holdCh, m.holdCommit, m.heldCommit = nil, nil, nil, nil
	m.mu.Unlock()
}

// PauseSyncs makes Wait block before syncing until ResumeSyncs: a slow disk.
func (m *Memory) PauseSyncs() { m.gate.Lock() }

// ResumeSyncs lets the Waits that PauseSyncs held go on.
func (m *Memory) ResumeSyncs() { m.gate.Unlock() }

func (m *Memory) arrive(d int) {
	m.waitMu.Lock()
	m.waiting += d
	if d > 0 && m.changed != nil {
		close(m.changed)
		m.changed = nil
	}
	m.waitMu.Unlock()
}

// WaitBlocked blocks until at least n Waits are at the gate that PauseSyncs closed.
func (m *Memory) WaitBlocked(n int) {
	for {
		m.waitMu.Lock()
		if m.waiting >= n {
			m.waitMu.Unlock()
			return
		}
		if m.changed == nil {
			m.changed = make(chan struct{})
		}
		ch := m.changed
		m.waitMu.Unlock()
		<-ch
	}
}

// Syncs returns how many syncs the engine has done: fewer than the Waits when callers share them.
func (m *Memory) Syncs() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.syncs
}

// Health reports the syncs made and the error that broke the engine, if one did. DiskBytes is the size of
// the keys and values durable on its disk.
func (m *Memory) Health() storage.Health {
	m.mu.Lock()
	h := storage.Health{Syncs: uint64(m.syncs), Err: m.broken}
	m.mu.Unlock()
	m.disk.mu.Lock()
	m.disk.data.Ascend(func(x kv) bool {
		h.DiskBytes += int64(len(x.key) + len(x.value))
		return true
	})
	m.disk.mu.Unlock()
	return h
}

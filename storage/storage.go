// Package storage is the seam between fifoq's durable queues and the storage engine under them: an ordered
// key-value store whose writes arrive in atomic batches, applied in the order they are committed and made
// durable in groups. Package github.com/fifoq/fifoq/durable implements it over Pebble; any other engine that
// keeps the contract below can stand in its place: hand it to fifoq.OpenStore. Package storagetest holds the
// conformance suite every engine should pass, and an engine in memory that injects the crashes and faults the
// queue's own tests need.
//
// # How a queue uses an engine
//
// A queue changes its messages under its lock, adds the records of the change to a Batch in the same order,
// and commits the batch before it releases the lock, so batches reach the engine in the order of the changes
// they record. It then waits on the batch's Ticket with the lock released, so that concurrent callers share
// one sync of the disk. It reads the engine only with Scan, when it opens, to rebuild its state.
//
// # The contract
//
//   - Order: Commit applies a batch after every batch committed before it; a Scan sees every batch committed
//     before it started.
//   - Atomicity: after a crash a batch is there whole or not at all.
//   - Durability: once a Ticket's Wait returns nil, its batch and every batch committed before it survive a
//     crash of the process and of the machine. A batch committed without a sync is durable once a later
//     synced batch is, or once Close returns nil.
//   - Failure is for good: once Commit or a Ticket's Wait returned an error other than ErrClosed, the engine
//     is broken: every later Commit and Wait returns an error, Health reports it and Failed is closed, so that
//     the queues stop changing what they can no longer record (fail-stop). An engine that fails in the
//     background (a flush or a compaction that cannot write) breaks the same way, at once.
//   - Keys: a queue's keys are at most a few hundred bytes; values up to a few megabytes. Keys sort as byte
//     strings.
//   - Concurrency: every method may be called from any goroutine, concurrently with the others. A caller may
//     be inside a testing/synctest bubble, so an engine must not make a caller wait on something another
//     goroutine outside the bubble signals through a channel or timer made inside it: a caller may block only
//     on a mutex or on a channel the engine made outside any bubble.
package storage

import "errors"

// An Engine is an ordered key-value store with atomic batches. It is safe for concurrent use.
type Engine interface {
	// NewBatch returns an empty batch to fill and hand to Commit.
	NewBatch() Batch
	// Commit applies b after every batch committed before it and takes b back: the caller must not use it
	// again. It does not wait for the disk. With sync, the returned Ticket waits until b is durable; without,
	// it is nil, and b is durable once a later synced batch is. An error means b was not applied; an error
	// other than ErrClosed means the engine is broken.
	Commit(b Batch, sync bool) (Ticket, error)
	// Scan calls fn with every key in [lo, hi) and its value, in key order, as of after every batch
	// committed before the call, on the caller's goroutine. fn must not keep the slices. An error from fn
	// ends the scan and is returned.
	Scan(lo, hi []byte, fn func(key, value []byte) error) error
	// Health returns the engine's health as of now. It is safe to call at any time, during and after Close
	// included, and never waits for a commit or a sync.
	Health() Health
	// Failed returns a channel that is closed when the engine breaks (Health's Err says why): a commit, a
	// sync or the engine's own background work failed. Close does not close it.
	Failed() <-chan struct{}
	// Close makes every committed batch durable and closes the engine. Later calls return ErrClosed; a
	// second Close returns nil.
	Close() error
}

// A Syncer is an Engine that can make what was committed durable on demand. An engine whose synced
// Tickets may return before the disk has their batches (package durable's WithSyncEvery, which syncs its
// log every interval instead) must implement it for queues to keep their numbering across a loss of power;
// any engine may. A queue calls Sync under its lock after it records a new block of sequence numbers and
// before it gives out the first of them (once per 4096 numbers, and once after each open), so that it
// never gives out a sequence number, and so a MessageID, that no durable record reserves: a power loss
// could otherwise take back the record, and the queue give the numbers of the messages lost to new ones.
type Syncer interface {
	// Engine is the engine that syncs.
	Engine
	// Sync returns once every batch committed before the call is durable, as a synced Ticket's Wait does
	// by default, or with the error that kept them from being so, which breaks the engine.
	Sync() error
}

// A Batch is a group of writes applied atomically: all of them or, after a crash, none.
type Batch interface {
	// Set writes value under key. The batch copies both.
	Set(key, value []byte)
	// Delete removes key.
	Delete(key []byte)
	// SingleDelete removes key, which must have been Set at most once since it was last removed (by any of
	// the three removals) or since it was made: otherwise its older values may come back. An engine may
	// then drop the Set and the SingleDelete together as soon as they meet, where a Delete stays until
	// nothing older can be under it (Pebble's SingleDelete). An engine without such an optimisation may
	// treat it as Delete.
	SingleDelete(key []byte)
	// DeleteRange removes every key in [lo, hi).
	DeleteRange(lo, hi []byte)
	// Len returns the number of writes in the batch.
	Len() int
}

// A Ticket is a committed batch that a caller can wait on.
type Ticket interface {
	// Wait blocks until the batch, and every batch committed before it, is durable. It returns the error
	// that kept them from being so; an engine that returned one is broken for good.
	Wait() error
}

// Health is what an engine reports of itself, for monitoring (fifoq.Store.Health).
type Health struct {
	// Syncs counts the syncs of the engine's log that succeeded since it was opened: each made the
	// batches committed before it durable. 0 for an engine that does not count them.
	Syncs uint64
	// Err is the error that broke the engine (a failed write or sync, in a call or in the background): nil
	// while it works.
	Err error
	// DiskBytes is the size of the engine's files, in bytes, or -1 when it is not known.
	DiskBytes int64
}

// ErrClosed is what an engine returns once it is closed.
var ErrClosed = errors.New("storage: engine is closed")

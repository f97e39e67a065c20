// Package store is the interface between a durable fifoq queue and the storage engine under it: an ordered
// key-value store whose writes arrive in atomic batches, applied in the order they are committed and made
// durable in groups. Package durable implements it over Pebble; Memory implements it in memory, with the
// crashes and faults the queue's tests inject.
//
// A queue commits a batch while it holds its lock, so batches reach the engine in the order of the
// changes they record, and waits for the batch to be durable after releasing it, so that concurrent callers
// share one sync of the disk (DURABILITY.md).
package store

// An Engine is an ordered key-value store with atomic batches. It is safe for concurrent use.
//
// An Engine must work for callers inside a testing/synctest bubble: a caller may block only on a mutex or
// on a channel made outside any bubble, never on something another goroutine outside the bubble signals
// through a bubbled primitive.
type Engine interface {
	// NewBatch returns an empty batch to fill and hand to Commit.
	NewBatch() Batch
	// Commit applies b after every batch committed before it and takes b back: the caller must not use
	// it again. It does not wait for the disk. With sync, the returned Ticket waits until b is durable;
	// without, it is nil, and b is durable once a later synced batch is. An error means b was not applied.
	Commit(b Batch, sync bool) (Ticket, error)
	// Scan calls fn with every key in [lo, hi) and its value, in key order, as of after every batch
	// committed before the call, on the caller's goroutine. fn must not keep the slices. An error from fn
	// ends the scan and is returned.
	Scan(lo, hi []byte, fn func(key, value []byte) error) error
	// Close makes every committed batch durable and closes the engine. Later calls return ErrClosed;
	// a second Close returns nil.
	Close() error
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
	// nothing older can be under it (Pebble's SingleDelete).
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

// NewStore makes a *fifoq.Store over an engine; location names it in errors (a directory). Package fifoq
// sets it when it is initialized, so that package durable can open a store without fifoq exporting a way to
// make one from an Engine.
var NewStore func(e Engine, location string) (any, error)

// EngineOf returns the engine of a *fifoq.Store, for package sqsapi, which keeps its own records in it under
// keys that start with 0x10 (fifoq's own start with bytes below it). Package fifoq sets it.
var EngineOf func(s any) Engine

// FailStore makes a *fifoq.Store fail for good with cause, as a failed write of its own does, and returns
// the error its changes return from then on: package sqsapi calls it when a write of its records fails.
// Package fifoq sets it.
var FailStore func(s any, cause error) error

// SyncLater returns a fifoq.Option (as any) that makes fifoq.New store a new queue without waiting for the
// disk: what it would wait for goes to *t, for the caller to wait on after releasing its own locks (package
// sqsapi, which creates queues under its registry lock). Package fifoq sets it.
var SyncLater func(t *Ticket) any

// SetAttributesLater is fifoq.Queue.SetAttributes(a) on q (a *fifoq.Queue and a fifoq.Attributes) without
// its wait for the disk: it returns the ticket to wait on, nil for none. Package fifoq sets it.
var SetAttributesLater func(q, a any) (Ticket, error)

// StartMoveTask starts a move task of the dead-letter queue src (a *fifoq.Queue) to dest (a *fifoq.Queue,
// nil: back to the messages' sources) at rate, whose status (a fifoq.MoveTaskStatus, which encode turns
// into the record's value) is kept in the store under key: when it starts, in the batch of each step, and
// when it ends. With resume (a *fifoq.MoveTaskStatus) the task is one read back from the store: a running
// one goes on from its counts, an ended one is only listed. It returns the *fifoq.MoveTask. Package fifoq
// sets it, for package sqsapi, whose move tasks survive a restart.
var StartMoveTask func(src, dest any, rate int, key []byte, encode func(status any) []byte, resume any) (any, error)

// HaltMoveTask stops a running move task (a *fifoq.MoveTask) without recording its end, so that it goes
// on when the store is opened again. Package fifoq sets it.
var HaltMoveTask func(task any)

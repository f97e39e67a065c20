// Package store holds the hooks through which package sqsapi reaches what package fifoq does not export
// yet: the engine under a Store, and queue operations that hand their wait for the disk to the caller.
// Package fifoq sets them when it is initialized.
package store

import "github.com/fifoq/fifoq/storage"

// EngineOf returns the engine of a *fifoq.Store, for package sqsapi, which keeps its own records in it under
// keys that start with 0x10 (fifoq's own start with bytes below it). Package fifoq sets it.
var EngineOf func(s any) storage.Engine

// FailStore makes a *fifoq.Store fail for good with cause, as a failed write of its own does, and returns
// the error its changes return from then on: package sqsapi calls it when a write of its records fails.
// Package fifoq sets it.
var FailStore func(s any, cause error) error

// SyncLater returns a fifoq.Option (as any) that makes fifoq.New store a new queue without waiting for the
// disk: what it would wait for goes to *t, for the caller to wait on after releasing its own locks (package
// sqsapi, which creates queues under its registry lock). Package fifoq sets it.
var SyncLater func(t *storage.Ticket) any

// SetAttributesLater is fifoq.Queue.SetAttributes(a) on q (a *fifoq.Queue and a fifoq.Attributes) without
// its wait for the disk: it returns the ticket to wait on, nil for none. Package fifoq sets it.
var SetAttributesLater func(q, a any) (storage.Ticket, error)

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

package fifoq

import (
	"github.com/fifoq/fifoq/storage"
)

// Records is the part of a [Store] kept for the records of a layer above fifoq: what a service built on the
// library must keep beside its queues, such as the definitions, names and move tasks of a catalogue of
// queues (package catalog). Its keys are the layer's own, in a key space of their own that no queue's
// record shares; one layer uses it per store.
//
// Its changes share the store's fail-stop: a write or a sync of a record that fails fails the store, as a
// queue's does (every later change of its queues and records returns ErrStoreFailed), and once the store
// failed or was closed a commit returns that error and writes nothing. A commit of records and the changes
// of the store's queues are made durable in the order they were handed to the store, so waiting for the
// last of several changes waits for them all.
//
// Records is safe for concurrent use. A layer writes a record of its own only through Commit, and a move
// task's steps through a [TaskRecord].
type Records struct {
	s *Store
}

// Records returns the store's records area.
func (s *Store) Records() *Records { return &Records{s} }

// key returns the engine's key of the record k.
func recordKey(dst, k []byte) []byte { return append(append(dst, keyRecords), k...) }

// Scan calls fn with each record whose key is in [start, end), in key order; an end of nil means no end.
// The slices fn is given are valid during the call only. An error fn returns stops the scan and is returned.
func (r *Records) Scan(start, end []byte, fn func(key, value []byte) error) error {
	lo := recordKey(nil, start)
	hi := []byte{keyRecords + 1}
	if end != nil {
		hi = recordKey(nil, end)
	}
	return r.s.eng.Scan(lo, hi, func(k, v []byte) error { return fn(k[1:], v) })
}

// A RecordBatch is a set of changes of records, committed together by [Records.Commit]: all of them are
// durable, or none. It is not safe for concurrent use. Make one with [Records.NewBatch].
type RecordBatch struct {
	b storage.Batch
}

// NewBatch returns an empty batch.
func (r *Records) NewBatch() *RecordBatch { return &RecordBatch{b: r.s.eng.NewBatch()} }

// Set sets the record of key to value; the batch copies both.
func (b *RecordBatch) Set(key, value []byte) { b.b.Set(recordKey(nil, key), value) }

// Delete deletes the record of key.
func (b *RecordBatch) Delete(key []byte) { b.b.Delete(recordKey(nil, key)) }

// DeleteRange deletes the records whose keys are in [start, end).
func (b *RecordBatch) DeleteRange(start, end []byte) {
	b.b.DeleteRange(recordKey(nil, start), recordKey(nil, end))
}

// Commit hands b to the store, after every change handed to it before, and returns what to wait for: with
// sync, the Pending's Wait returns once b is durable; without, b becomes durable with the next change that
// is synced, or is lost in a crash before it. A store that failed or was closed returns its error and
// writes nothing; a write that fails fails the store and returns the error.
func (r *Records) Commit(b *RecordBatch, sync bool) (Pending, error) {
	s := r.s
	if err := s.err(); err != nil {
		return Pending{}, err
	}
	t, err := s.eng.Commit(b.b, sync)
	if err != nil {
		return Pending{}, s.fail(err)
	}
	if !sync {
		return Pending{}, nil
	}
	return Pending{commit{t: t}, s}, nil
}

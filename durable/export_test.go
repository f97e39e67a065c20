package durable

import (
	"bytes"
	"context"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/storage"
)

// WithFS makes the store use fs for its files, so that the tests can inject faults (durable_test.go). It
// exists only in this package's tests.
func WithFS(fs vfs.FS) Option { return func(c *config) { c.fs = fs } }

// WithoutSyncMark makes the store keep no sync mark (syncmark.go), for the benchmark that measures what
// the mark costs. It exists only in this package's tests.
func WithoutSyncMark() Option { return func(c *config) { c.noSyncMark = true } }

// SyncTicks are the ticks of the interval of a store opened WithSyncEvery and WithSyncTicks, which the tests
// give. It exists only in this package's tests.
type SyncTicks struct {
	tick chan time.Time
	done chan struct{}
}

// NewSyncTicks returns ticks for WithSyncTicks.
func NewSyncTicks() *SyncTicks {
	return &SyncTicks{tick: make(chan time.Time), done: make(chan struct{})}
}

// Tick is one tick of the interval: it returns once the sync it starts is done (or found nothing to sync).
func (s *SyncTicks) Tick() {
	s.tick <- time.Now()
	<-s.done
}

// WithSyncTicks makes a store opened WithSyncEvery sync its log at each of ticks' Tick, rather than on a
// ticker of its own, so that the tests decide when. It exists only in this package's tests.
func WithSyncTicks(ticks *SyncTicks) Option {
	return func(c *config) { c.syncTicks, c.syncTicked = ticks.tick, ticks.done }
}

// WithWriteHook calls fn with each write the store makes to Pebble (a batch's representation, valid during the
// call) and whether it is synced, for the benchmark that replays a store's writes into Pebble alone. It
// exists only in this package's tests.
func WithWriteHook(fn func(repr []byte, sync bool)) Option { return func(c *config) { c.onWrite = fn } }

// WithSyncHook calls fn, in a store opened WithSyncEvery, as each real sync of its write-ahead logs begins
// (done false) and once it succeeded (done true, with the same began): the sync every interval, and the
// sync of a log as Pebble closes it. Everything written to the logs before began is durable once it is
// done. It exists only in this package's tests.
func WithSyncHook(fn func(began time.Time, done bool)) Option {
	return func(c *config) { c.onSync = fn }
}

// Tune sets the options of Pebble's that a store opened with no options sets.
func Tune(o *pebble.Options) { tune(o, defaultConfig()) }

// OpenEngine opens the engine of the store in dir, with opts, as Open does before it hands the engine to
// fifoq.OpenStore: for the conformance suite of package storage, and for the tests that write records fifoq
// would not. It exists only in this package's tests.
func OpenEngine(dir string, opts ...Option) (storage.Engine, error) {
	c, err := configOf(opts)
	if err != nil {
		return nil, err
	}
	return openEngine(dir, c)
}

// OpenWithEngine is Open, which also returns the store's engine, for Flush and Compact. It exists only in
// this package's tests.
func OpenWithEngine(dir string, opts ...Option) (*fifoq.Store, storage.Engine, error) {
	st, e, err := open(dir, opts)
	if err != nil {
		return nil, nil, err
	}
	return st, e, nil
}

// Flush makes the Pebble of the engine e (from OpenWithEngine) flush its memtable to a table file, as it
// does on its own when the memtable fills up, and returns at once: what the flush meets reaches the store
// through Pebble's events, as on an idle store. It exists only in this package's tests.
func Flush(e storage.Engine) {
	_, _ = e.(*engine).db.AsyncFlush()
}

// Compact makes the Pebble of the engine e (from OpenWithEngine) compact all its table files, as it does on
// its own once level 0 holds too many, and returns the compaction's error: what it meets reaches the store
// through Pebble's events. It exists only in this package's tests.
func Compact(e storage.Engine) error {
	return e.(*engine).db.Compact(context.Background(), []byte{0}, bytes.Repeat([]byte{0xff}, 16), false)
}

// Queued returns how many commits and scans the engine e (from OpenEngine) holds that its loop has not
// taken yet, for the tests that put several in one round. It exists only in this package's tests.
func Queued(e storage.Engine) int {
	en := e.(*engine)
	en.mu.Lock()
	defer en.mu.Unlock()
	return len(en.queue)
}

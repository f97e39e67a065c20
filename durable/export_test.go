package durable

import (
	"log/slog"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/fifoq/fifoq/storage"
)

// WithFS makes the store use fs for its files, so that the tests can inject faults (durable_test.go). It
// exists only in this package's tests.
func WithFS(fs vfs.FS) Option { return func(c *config) { c.fs = fs } }

// WithoutSyncMark makes the store keep no sync mark (syncmark.go), for the benchmark that measures what
// the mark costs. It exists only in this package's tests.
func WithoutSyncMark() Option { return func(c *config) { c.noSyncMark = true } }

// WithSyncTicks makes a store opened WithSyncEvery sync its log when ticks delivers, rather than on a
// ticker of its own, so that the tests decide when. It exists only in this package's tests.
func WithSyncTicks(ticks <-chan time.Time) Option { return func(c *config) { c.syncTicks = ticks } }

// WithWriteHook calls fn with each write the store makes to Pebble (a batch's representation, valid during the
// call) and whether it is synced, for the benchmark that replays a store's writes into Pebble alone. It
// exists only in this package's tests.
func WithWriteHook(fn func(repr []byte, sync bool)) Option { return func(c *config) { c.onWrite = fn } }

// OpenEngine opens the engine of the store in dir, with no options, as Open does before it hands the engine
// to fifoq.OpenStore: for the tests that write records fifoq would not. It exists only in this package's
// tests.
func OpenEngine(dir string) (storage.Engine, error) {
	c := defaultConfig()
	c.logger = slog.Default()
	return openEngine(dir, c)
}

// Tune sets the options of Pebble's that a store opened with no options sets.
func Tune(o *pebble.Options) { tune(o, defaultConfig()) }

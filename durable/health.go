package durable

import (
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/fifoq/fifoq/storage"
)

// health is what the engine counts for its Health: atomics, which the engine's goroutine updates without a
// lock and Health reads without one.
type health struct {
	fs    vfs.FS // where the store's files are: set by openEngine, then only read
	syncs atomic.Uint64
}

// Health reports the engine's syncs, the error that failed it, and the size of the files in its directory.
// It takes the engine's lock only to read that error, and reads the directory (a listing and a stat of
// each file: Pebble's metrics are not safe to read while the store closes), so it suits a scrape, not a hot
// path.
func (e *engine) Health() storage.Health {
	e.mu.Lock()
	err := e.broken
	e.mu.Unlock()
	return storage.Health{Syncs: e.health.syncs.Load(), Err: err, DiskBytes: e.diskBytes()}
}

// diskBytes returns the total size of the files in the store's directory, or -1 when it cannot be listed.
// A file removed between the listing and its stat (a compaction's input) is left out.
func (e *engine) diskBytes() int64 {
	fs := e.health.fs
	if fs == nil {
		return -1
	}
	names, err := fs.List(e.dir)
	if err != nil {
		return -1
	}
	var n int64
	for _, name := range names {
		if fi, err := fs.Stat(fs.PathJoin(e.dir, name)); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
	}
	return n
}

package durable

import (
	"strings"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// WithSyncCount counts in n the syncs of the store's write-ahead log (a Sync or SyncData of a file whose
// name ends in ".log"), so that the benchmarks (bench_test.go) can report how many messages one sync
// carries. It exists only in this package's tests.
func WithSyncCount(n *atomic.Int64) Option {
	return func(c *config) { c.fs = &syncCountFS{FS: c.fs, n: n} }
}

// syncCountFS is a vfs.FS whose log files count their syncs in n.
type syncCountFS struct {
	vfs.FS
	n *atomic.Int64
}

func (fs *syncCountFS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil || !strings.HasSuffix(name, ".log") {
		return f, err
	}
	return &syncCountFile{File: f, n: fs.n}, nil
}

func (fs *syncCountFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	return fs.wrap(name, f, err)
}

func (fs *syncCountFS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, category, opts...)
	return fs.wrap(name, f, err)
}

func (fs *syncCountFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	return fs.wrap(newname, f, err)
}

func (fs *syncCountFS) Unwrap() vfs.FS { return fs.FS }

// syncCountFile is a log file that counts its syncs.
type syncCountFile struct {
	vfs.File
	n *atomic.Int64
}

func (f *syncCountFile) Sync() error {
	f.n.Add(1)
	return f.File.Sync()
}

func (f *syncCountFile) SyncData() error {
	f.n.Add(1)
	return f.File.SyncData()
}

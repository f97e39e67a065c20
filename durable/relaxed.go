package durable

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// ErrSyncInterval: WithSyncEvery was given an interval that is not positive.
var ErrSyncInterval = errors.New("durable: the sync interval must be positive")

// WithSyncEvery trades the durability of the last moments before a power loss for speed. By default each
// change a queue acknowledges is on the disk (its write-ahead log synced) before the call returns, so that
// neither a crash of the process nor a loss of power loses it. With WithSyncEvery(interval), an
// acknowledged change has been written to the operating system before the call returns, and the log is
// synced every interval, by a goroutine of its own that no commit waits for or delays (a commit that Pebble
// holds in a write stall does not hold the sync): a crash of the process (a panic, SIGKILL, the OOM killer)
// still loses nothing, and a crash of the machine or a loss of power loses at most what was acknowledged
// after the last sync that completed began, the last interval and the sync under way, as SQLite's
// synchronous=NORMAL in WAL mode does. Close syncs everything. An interval that is not positive makes Open
// return ErrSyncInterval.
//
// After a power loss the disk may hold the log's unsynced end in part, later pages without earlier ones.
// Pebble tells a torn log from a damaged one by the sync offsets it records, which this mode advances before
// the disk has the data. So the store's sync mark records, after each real sync, how far it covered the
// log, and is synced too; Open cuts the log at its first damaged chunk past that offset, keeping a copy of
// it in the store's directory fifoq-cut-logs (with those of the last 8 cuts: an older copy is removed when
// a new one is made) and logging a warning, and opens the store with everything up to the last real sync.
// Damage before the offset makes Open return fifoq.ErrStoreCorrupt, naming the log.
func WithSyncEvery(interval time.Duration) Option {
	return func(c *config) {
		c.syncEvery = interval
		if interval <= 0 {
			c.err = fmt.Errorf("%w: %v", ErrSyncInterval, interval)
		}
	}
}

// relaxedFS is the vfs.FS of a store opened WithSyncEvery: a sync of a write-ahead log does nothing, so
// that Pebble's synced commit returns once the log's records are written to the operating system, and the
// engine syncs every open log itself every interval (engine.syncLogs, on the goroutine of startSyncs). A log is synced before it is closed,
// so that one log is complete on the disk before the next one holds anything synced.
type relaxedFS struct {
	vfs.FS
	onSync func(began time.Time, done bool) // the tests' WithSyncHook, or nil

	mu   sync.Mutex
	logs map[*relaxedFile]struct{} // the open logs
}

func newRelaxedFS(fs vfs.FS, onSync func(began time.Time, done bool)) *relaxedFS {
	return &relaxedFS{FS: fs, onSync: onSync, logs: make(map[*relaxedFile]struct{})}
}

// hook tells the tests' WithSyncHook that a real sync began at began, or that the one that began then is
// done.
func (fs *relaxedFS) hook(began time.Time, done bool) {
	if fs.onSync != nil {
		fs.onSync(began, done)
	}
}

func (fs *relaxedFS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil || !strings.HasSuffix(name, ".log") {
		return f, err
	}
	num, _ := strconv.ParseUint(strings.TrimSuffix(name[strings.LastIndexAny(name, `/\`)+1:], ".log"), 10, 64)
	rf := &relaxedFile{File: f, fs: fs, num: num}
	fs.mu.Lock()
	fs.logs[rf] = struct{}{}
	fs.mu.Unlock()
	return rf, nil
}

func (fs *relaxedFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	return fs.wrap(name, f, err)
}

func (fs *relaxedFS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, category, opts...)
	return fs.wrap(name, f, err)
}

func (fs *relaxedFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	return fs.wrap(newname, f, err)
}

func (fs *relaxedFS) Unwrap() vfs.FS { return fs.FS }

// A logSync is how far a sync of the logs synced the newest one: its number, and the bytes written to it
// before the sync began, which the sync covered. Pebble writes a log in whole chunks, so that is the end
// of one, or of the mark that ends a log Pebble is closing (cutTorn passes over it).
type logSync struct {
	num    uint64
	offset int64
}

// syncLogs syncs every open log for real, and returns how far it synced the newest one.
func (fs *relaxedFS) syncLogs() (logSync, error) {
	began := time.Now()
	fs.hook(began, false)
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var newest logSync
	for f := range fs.logs {
		written := f.written.Load()
		if err := f.File.SyncData(); err != nil {
			return logSync{}, err
		}
		if f.num >= newest.num {
			newest = logSync{num: f.num, offset: written}
		}
	}
	fs.hook(began, true)
	return newest, nil
}

// relaxedFile is a write-ahead log of a relaxedFS: its syncs do nothing; its Close syncs. It counts the
// bytes written to it (Pebble writes a log from its start, a recycled one too), for the sync mark.
type relaxedFile struct {
	vfs.File
	fs      *relaxedFS
	num     uint64 // the log's number
	written atomic.Int64
}

func (f *relaxedFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	f.written.Add(int64(n))
	return n, err
}

func (f *relaxedFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	for end := off + int64(n); ; {
		w := f.written.Load()
		if end <= w || f.written.CompareAndSwap(w, end) {
			break
		}
	}
	return n, err
}

func (f *relaxedFile) Sync() error     { return nil }
func (f *relaxedFile) SyncData() error { return nil }

func (f *relaxedFile) SyncTo(length int64) (fullSync bool, err error) { return false, nil }

func (f *relaxedFile) Close() error {
	f.fs.mu.Lock()
	delete(f.fs.logs, f)
	f.fs.mu.Unlock()
	began := time.Now()
	f.fs.hook(began, false)
	err := f.File.SyncData()
	if err == nil {
		f.fs.hook(began, true)
	}
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	return err
}

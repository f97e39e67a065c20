package durable

import (
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// A fence stops every change of a failed store's files, so that they stay as they were when the failure
// happened, as a crash would leave them, and opening the directory again recovers as after a crash.
//
// Without it, Pebble's own goroutines write on after a failure: a failed flush is retried at once, again
// and again (DB.flush in pebble/v2 compaction.go, "TODO(peter): count consecutive flush errors and
// backoff"), and after a failed sync of the MANIFEST, which Pebble takes for fatal (Logger.Fatalf in
// versionSet.UpdateVersionLocked, version_set.go) and the store survives, each retry appends an edit that
// adds a new table with the same keys, which Pebble, opened again, refuses with a panic ("invariant
// violation: ... out of order" in a compaction).
//
// Once raised, a change of a write-ahead log fails at once, so that a commit under way returns; a change of
// another file waits until Close lets it go on, then fails: the goroutine that retries a flush waits rather
// than spins, and DB.Close, which waits for it, can end. (Commits write logs only: the engine's goroutine,
// which commits, never waits at the fence.) The fence of a store whose Open failed is raised with a
// sandbox instead, which takes the changes in memory, so that Pebble's Open can end (sandbox.go).
type fence struct {
	raised atomic.Bool
	opened chan struct{} // closed by open
	once   sync.Once
	lock   atomic.Pointer[onceCloser] // the directory's lock, taken by Pebble (open.go)

	// sandbox, if set before the fence is raised, takes every change once it is raised, which then neither
	// waits nor fails (sandbox.go): the fence of a failed Open's Pebble.
	sandbox atomic.Pointer[sandbox]
}

// errFenced is what a change of a failed store's files returns.
var errFenced = errors.New("durable: the store failed: its files are not changed any more")

func newFence() *fence { return &fence{opened: make(chan struct{})} }

// raise makes every later change wait.
func (f *fence) raise() { f.raised.Store(true) }

// open lets the changes that wait go on, and fail.
func (f *fence) open() { f.once.Do(func() { close(f.opened) }) }

// check returns nil, nil before the fence is raised: the change goes to the disk. After, it returns the
// sandbox that takes the change, if the fence has one, or else errFenced, once open was called unless path
// is a write-ahead log.
func (f *fence) check(path string) (*sandbox, error) {
	if !f.raised.Load() {
		return nil, nil
	}
	if s := f.sandbox.Load(); s != nil {
		return s, nil
	}
	if !strings.HasSuffix(path, ".log") {
		<-f.opened
	}
	return nil, &os.PathError{Op: "write", Path: path, Err: errFenced}
}

// fenceFS is the vfs.FS of a store: its changes go through the fence.
type fenceFS struct {
	vfs.FS
	f       *fence
	lastLog *atomic.Uint64 // the number of the newest log Pebble made (syncmark.go)
}

func (fs *fenceFS) wrap(name string, file vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return file, err
	}
	return &fenceFile{File: file, f: fs.f, name: name}, nil
}

func (fs *fenceFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	if s, err := fs.f.check(name); s != nil || err != nil {
		if s != nil {
			return s.create(name, category)
		}
		return nil, err
	}
	file, err := fs.FS.Create(name, category)
	fs.noteLog(name)
	return fs.wrap(name, file, err)
}

func (fs *fenceFS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	if s, err := fs.f.check(name); s != nil || err != nil {
		if s != nil {
			return s.openReadWrite(name, category, opts...)
		}
		return nil, err
	}
	file, err := fs.FS.OpenReadWrite(name, category, opts...)
	return fs.wrap(name, file, err)
}

func (fs *fenceFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	if s, err := fs.f.check(newname); s != nil || err != nil {
		if s != nil {
			return s.reuseForWrite(oldname, newname, category)
		}
		return nil, err
	}
	file, err := fs.FS.ReuseForWrite(oldname, newname, category)
	fs.noteLog(newname)
	return fs.wrap(newname, file, err)
}

func (fs *fenceFS) Link(oldname, newname string) error {
	if s, err := fs.f.check(newname); s != nil || err != nil {
		if s != nil {
			return s.link(oldname, newname)
		}
		return err
	}
	return fs.FS.Link(oldname, newname)
}

func (fs *fenceFS) Remove(name string) error {
	if s, err := fs.f.check(name); s != nil || err != nil {
		if s != nil {
			return s.remove(name)
		}
		return err
	}
	return fs.FS.Remove(name)
}

func (fs *fenceFS) RemoveAll(name string) error {
	if s, err := fs.f.check(name); s != nil || err != nil {
		if s != nil {
			return s.removeAll(name)
		}
		return err
	}
	return fs.FS.RemoveAll(name)
}

func (fs *fenceFS) Rename(oldname, newname string) error {
	if s, err := fs.f.check(newname); s != nil || err != nil {
		if s != nil {
			return s.rename(oldname, newname)
		}
		return err
	}
	return fs.FS.Rename(oldname, newname)
}

func (fs *fenceFS) Unwrap() vfs.FS { return fs.FS }

// fenceFile is a file of a fenceFS: its writes and syncs go through the fence.
type fenceFile struct {
	vfs.File
	f    *fence
	name string
}

func (f *fenceFile) Write(p []byte) (int, error) {
	if s, err := f.f.check(f.name); s != nil || err != nil {
		return dropped(len(p), s, err)
	}
	return f.File.Write(p)
}

func (f *fenceFile) WriteAt(p []byte, off int64) (int, error) {
	if s, err := f.f.check(f.name); s != nil || err != nil {
		return dropped(len(p), s, err)
	}
	return f.File.WriteAt(p, off)
}

func (f *fenceFile) Preallocate(off, n int64) error {
	if s, err := f.f.check(f.name); s != nil || err != nil {
		return err
	}
	return f.File.Preallocate(off, n)
}

func (f *fenceFile) Sync() error {
	if s, err := f.f.check(f.name); s != nil || err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *fenceFile) SyncData() error {
	if s, err := f.f.check(f.name); s != nil || err != nil {
		return err
	}
	return f.File.SyncData()
}

func (f *fenceFile) SyncTo(length int64) (bool, error) {
	if s, err := f.f.check(f.name); s != nil || err != nil {
		return s != nil, err
	}
	return f.File.SyncTo(length)
}

// dropped is what a write of n bytes returns at the fence: it fails with err, or, in a sandbox, which
// takes no write to a file of the disk, succeeds without changing it.
func dropped(n int, s *sandbox, err error) (int, error) {
	if s != nil {
		return n, nil
	}
	return 0, err
}

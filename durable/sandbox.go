package durable

import (
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// The sandbox: where the Pebble of a failed Open ends, changing nothing on the disk.
//
// Pebble's Open flushes the memtables it recovered from the logs and waits for the flush, which it retries
// at once, again and again, while it fails (openDB, open.go). Pebble has no way to cancel an Open, so once
// openDB gave up on one, its goroutines (the Open's, the flush's, the cleaner's and the others it had
// started), the files it had opened and its memtables stayed for the life of the process: seven goroutines
// and five files more with each failed Open of a program that tries again. Instead, openDB lets that Open
// finish in a sandbox: a file system in memory laid over the store's directory, which takes every change
// of the store's files from then on, while a read of a file the sandbox does not hold goes to the disk. The
// flush writes its table there, Pebble's Open writes its MANIFEST, its log and its OPTIONS there and
// returns, and openDB closes the store it returned: its goroutines end, its files close, its memory is
// freed, and the files on the disk stay as they were when the flush failed, as a crash would have left
// them. A write to a file the store had opened on the disk before (a MANIFEST) is dropped.
type sandbox struct {
	disk vfs.FS // the store's file system, beneath the fence: read only
	mem  vfs.FS // the files made in the sandbox

	mu   sync.Mutex
	gone map[string]bool // files of the disk removed or renamed in the sandbox: hidden from it
}

func newSandbox(disk vfs.FS) *sandbox {
	return &sandbox{disk: disk, mem: vfs.NewMem(), gone: make(map[string]bool)}
}

// inMem reports whether the sandbox holds the file (or directory) name.
func (s *sandbox) inMem(name string) bool {
	_, err := s.mem.Stat(name)
	return err == nil
}

// hidden reports whether name, or a directory above it, was removed in the sandbox.
func (s *sandbox) hidden(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for d := filepath.Clean(name); ; d = filepath.Dir(d) {
		if s.gone[d] {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

func (s *sandbox) hide(name string, gone bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if gone {
		s.gone[filepath.Clean(name)] = true
	} else {
		delete(s.gone, filepath.Clean(name))
	}
}

// onDisk reports whether the sandbox sees name on the disk: there, not hidden, and not made anew in
// the sandbox.
func (s *sandbox) onDisk(name string) bool {
	if s.inMem(name) || s.hidden(name) {
		return false
	}
	_, err := s.disk.Stat(name)
	return err == nil
}

func notExist(op, name string) error { return &os.PathError{Op: op, Path: name, Err: os.ErrNotExist} }

func (s *sandbox) create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	if err := s.mem.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return nil, err
	}
	f, err := s.mem.Create(name, category)
	if err == nil {
		s.hide(name, false)
	}
	return f, err
}

// copyIn copies the file from of the disk into the sandbox as to.
func (s *sandbox) copyIn(from, to string) error {
	src, err := s.disk.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := s.create(to, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	return err
}

func (s *sandbox) openReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	if s.onDisk(name) {
		if err := s.copyIn(name, name); err != nil {
			return nil, err
		}
	}
	if !s.inMem(name) {
		return s.create(name, category)
	}
	return s.mem.OpenReadWrite(name, category, opts...)
}

func (s *sandbox) remove(name string) error {
	switch {
	case s.inMem(name):
		return s.mem.Remove(name)
	case s.onDisk(name):
		s.hide(name, true)
		return nil
	}
	return notExist("remove", name)
}

func (s *sandbox) removeAll(name string) error {
	if err := s.mem.RemoveAll(name); err != nil {
		return err
	}
	s.hide(name, true)
	return nil
}

func (s *sandbox) rename(from, to string) error {
	if s.onDisk(from) {
		if err := s.copyIn(from, to); err != nil {
			return err
		}
		s.hide(from, true)
		return nil
	}
	if err := s.mem.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	if err := s.mem.Rename(from, to); err != nil {
		return err
	}
	s.hide(to, false)
	return nil
}

func (s *sandbox) link(from, to string) error {
	if s.onDisk(from) {
		return s.copyIn(from, to)
	}
	if err := s.mem.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	if err := s.mem.Link(from, to); err != nil {
		return err
	}
	s.hide(to, false)
	return nil
}

func (s *sandbox) reuseForWrite(from, to string, category vfs.DiskWriteCategory) (vfs.File, error) {
	if err := s.remove(from); err != nil {
		return nil, err
	}
	return s.create(to, category)
}

func (s *sandbox) open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	switch {
	case s.inMem(name):
		return s.mem.Open(name, opts...)
	case s.hidden(name):
		return nil, notExist("open", name)
	}
	return s.disk.Open(name, opts...)
}

func (s *sandbox) openDir(name string) (vfs.File, error) {
	switch {
	case s.inMem(name):
		return s.mem.OpenDir(name)
	case s.hidden(name):
		return nil, notExist("open", name)
	}
	return s.disk.OpenDir(name) // its Sync changes nothing
}

func (s *sandbox) stat(name string) (vfs.FileInfo, error) {
	switch {
	case s.inMem(name):
		return s.mem.Stat(name)
	case s.hidden(name):
		return nil, notExist("stat", name)
	}
	return s.disk.Stat(name)
}

// list lists dir as the sandbox sees it: the disk's files that it did not remove, and its own.
func (s *sandbox) list(dir string) ([]string, error) {
	names, derr := s.disk.List(dir)
	if s.hidden(dir) {
		names, derr = nil, notExist("open", dir)
	}
	var out []string
	for _, n := range names {
		if !s.hidden(filepath.Join(dir, n)) && !s.inMem(filepath.Join(dir, n)) {
			out = append(out, n)
		}
	}
	mine, merr := s.mem.List(dir)
	if derr != nil && merr != nil {
		return nil, derr
	}
	return append(out, mine...), nil
}

// sandboxed returns the fence's sandbox, once raised with one (openDB), or nil.
func (f *fence) sandboxed() *sandbox {
	if !f.raised.Load() {
		return nil
	}
	return f.sandbox.Load()
}

func (fs *fenceFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	if s := fs.f.sandboxed(); s != nil {
		return s.open(name, opts...)
	}
	return fs.FS.Open(name, opts...)
}

func (fs *fenceFS) OpenDir(name string) (vfs.File, error) {
	if s := fs.f.sandboxed(); s != nil {
		return s.openDir(name)
	}
	return fs.FS.OpenDir(name)
}

func (fs *fenceFS) Stat(name string) (vfs.FileInfo, error) {
	if s := fs.f.sandboxed(); s != nil {
		return s.stat(name)
	}
	return fs.FS.Stat(name)
}

func (fs *fenceFS) List(dir string) ([]string, error) {
	if s := fs.f.sandboxed(); s != nil {
		return s.list(dir)
	}
	return fs.FS.List(dir)
}

func (fs *fenceFS) MkdirAll(dir string, perm os.FileMode) error {
	if s := fs.f.sandboxed(); s != nil {
		return s.mem.MkdirAll(dir, perm)
	}
	return fs.FS.MkdirAll(dir, perm)
}

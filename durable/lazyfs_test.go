package durable_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// The power-loss rig of the durable tests, in the spirit of Jepsen's LazyFS: a pass-through FUSE file system
// over a directory of the machine's (its backing directory) that remembers, for each file, what was
// written to it since its last fsync or fdatasync, and at a power cut (lazyFS.cut) puts every file back as
// it was at its last sync: the ranges that a later write overwrote hold their synced bytes again, and what
// was written past the synced end is cut off. Everything goes to the backing directory at once, so the
// processes that use the mount read back what they wrote, as from an operating system's page cache; the rig
// keeps, for each write since the file's last sync, the bytes it overwrote and the file's size before it
// (an undo log), and a cut replays them backwards.
//
// Metadata (a file made, renamed, linked or removed, a directory made or removed) is durable at once in the
// lenient mode; in the strict mode, only once the directory that holds the entry is fsynced (both
// directories of a rename), and a cut undoes the rest, newest first: a file made comes out of its
// directory, a file removed comes back (the rig keeps it aside in its graveyard meanwhile, with its
// content), a rename goes back. A cut unmounts the file system, puts the backing directory back, and
// mounts it again: the kernel's caches of the mount go with it, as a machine's do with its power.
//
// ignoreSync makes the fsyncs of the files whose names it matches do nothing: what the rig proves it can
// fail with (a disk that ignores fsync).

// lazyFS is a mounted power-loss rig.
type lazyFS struct {
	backing string // the backing directory: what the mount shows
	grave   string // where the strict mode keeps what was removed until it is durably gone
	mnt     string // the mount point
	server  *fuse.Server
	dev     uint64 // the mount's device

	mu         sync.Mutex
	strict     bool                   // metadata durable only once its directory is fsynced
	ignoreSync func(name string) bool // fsyncs of these files do nothing (nil: none)
	syncDelay  time.Duration          // how long each fsync takes, as a disk's would
	files      map[uint64]*lazyFile   // by backing inode: what was written since its last sync
	ops        []*lazyOp              // strict: the metadata changes not yet durable, oldest first
	graves     int                    // names given in grave
	stats      lazyStats              // since the rig was made
}

// lazyStats counts what the rig did since it was made.
type lazyStats struct {
	writes, syncs int // writes and truncations seen; syncs of files that made them durable
	ignored       int // syncs that ignoreSync made do nothing
	dirSyncs      int // syncs of directories
	opsDurable    int // metadata changes made durable by a sync of their directories
	cuts          int
	lazyCut       // what the cuts undid, in all
}

// lazyCut is what a cut undid.
type lazyCut struct {
	files     int   // files put back as they were at their last sync
	bytes     int64 // bytes written since a sync that it took back (overwritten, or past the synced end)
	ops       int   // metadata changes undone
	opsFailed int   // metadata changes it could not undo (a later durable change stood in the way)
}

// lazyFile is what was written to a file since its last sync: how to put it back.
type lazyFile struct {
	fd   int        // a descriptor of the file, read-write, the rig's own
	undo []lazyUndo // oldest first
	name string     // the file's path in the mount when it was last written, for messages
}

// lazyUndo undoes one change of a file: its size before it, and the bytes it overwrote at off.
type lazyUndo struct {
	off  int64
	old  []byte
	size int64
}

// lazyOp is a metadata change of the strict mode that is not durable yet.
type lazyOp struct {
	kind  string          // create, mkdir, link, unlink, rmdir, rename
	dirs  map[uint64]bool // the directories (by inode) whose fsync it still waits for
	path  string          // the entry made or removed, or the rename's source (backing paths)
	to    string          // the rename's target
	grave string          // the entry removed (or replaced by the rename), kept aside
}

// lazyUnavailable says in one line why the rig cannot run here, or "" when it can: it needs Linux, the
// device /dev/fuse and root (it mounts with mount(2), as there may be no fusermount).
func lazyUnavailable() string {
	switch {
	case runtime.GOOS != "linux":
		return "the power-loss rig needs Linux's FUSE (GOOS=" + runtime.GOOS + ")"
	case os.Geteuid() != 0:
		return "the power-loss rig mounts a FUSE file system with mount(2), which needs root"
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return "the power-loss rig needs /dev/fuse: " + err.Error()
	}
	return ""
}

// newLazyFS mounts a rig at mnt over the directory backing (grave beside it), in the strict or lenient
// metadata mode. An error says why the mount was refused.
func newLazyFS(backing, grave, mnt string, strict bool) (*lazyFS, error) {
	l := &lazyFS{backing: backing, grave: grave, mnt: mnt, strict: strict, files: make(map[uint64]*lazyFile)}
	for _, d := range []string{backing, grave, mnt} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := l.mount(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *lazyFS) mount() error {
	root, err := fs.NewLoopbackRoot(l.backing)
	if err != nil {
		return err
	}
	node := &lazyNode{LoopbackNode: root.(*fs.LoopbackNode), l: l}
	node.RootData.RootNode = node
	server, err := fs.Mount(l.mnt, node, &fs.Options{MountOptions: fuse.MountOptions{
		DirectMountStrict: true, // there may be no fusermount; root may mount(2)
		FsName:            "fifoq-lazyfs",
		Name:              "lazyfs",
		// Reads and writes through the daemon, never straight to the backing file.
		DisabledCapabilities: fuse.CAP_PASSTHROUGH,
	}})
	if err != nil {
		return fmt.Errorf("mount %s: %w", l.mnt, err)
	}
	l.server = server
	var st syscall.Stat_t
	if err := syscall.Stat(l.mnt, &st); err != nil {
		_ = l.unmount()
		return fmt.Errorf("mount %s: %w", l.mnt, err)
	}
	l.dev = st.Dev
	return nil
}

// unmount unmounts the rig; every file of the mount must be closed.
func (l *lazyFS) unmount() error {
	if l.server == nil {
		return nil
	}
	if err := l.server.Unmount(); err != nil {
		return fmt.Errorf("unmount %s: %w", l.mnt, err)
	}
	l.server.Wait()
	l.server = nil
	return nil
}

// close unmounts the rig, leaving the backing directory as it is (not cut). When a file of the mount is
// still open (a test that failed with a store open), it aborts the mount's connection instead: a process
// that ends with a file open on a FUSE mount that it serves itself would hang as it closes the file.
func (l *lazyFS) close() error {
	err := l.unmount()
	if err != nil {
		l.abort()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range l.files {
		_ = syscall.Close(f.fd)
	}
	clear(l.files)
	return err
}

// abort aborts the mount's FUSE connection (through the fusectl file system, mounted if it is not) and
// detaches the mount: every request fails from then on, and none waits for the rig.
func (l *lazyFS) abort() {
	const ctl = "/sys/fs/fuse/connections"
	if names, err := os.ReadDir(ctl); err == nil && len(names) == 0 {
		_ = syscall.Mount("none", ctl, "fusectl", 0, "")
	}
	// The connection is named by the minor number of the mount's device.
	minor := l.dev&0xff | l.dev>>12&0xfff00
	_ = os.WriteFile(filepath.Join(ctl, strconv.FormatUint(minor, 10), "abort"), []byte("1"), 0o200)
	_ = syscall.Unmount(l.mnt, syscall.MNT_DETACH)
	if l.server != nil {
		l.server.Wait()
		l.server = nil
	}
}

// setMode sets the metadata mode from now on: what is pending stays pending until a sync or a cut, or, in
// the lenient mode, a later change in its directory (record).
func (l *lazyFS) setMode(strict bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.strict = strict
}

// setSyncDelay makes each fsync (of a file or a directory) take d, as a disk's takes time: the rig's
// syncs are free otherwise, since what they make durable is only its own record.
func (l *lazyFS) setSyncDelay(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.syncDelay = d
}

// pause waits as long as a sync takes (setSyncDelay), outside l.mu.
func (l *lazyFS) pause() {
	l.mu.Lock()
	d := l.syncDelay
	l.mu.Unlock()
	if d > 0 {
		time.Sleep(d) // the disk's time, in the file system's server: not a test waiting for its queue
	}
}

// setIgnoreSync makes the fsyncs of the files whose mount paths match do nothing (nil: none).
func (l *lazyFS) setIgnoreSync(match func(name string) bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ignoreSync = match
}

// cut is a power cut: every process that used the mount must have ended (the rig unmounts it). It undoes
// the metadata changes that are not durable, newest first, puts every file back as it was at its last
// sync, and mounts the backing directory again.
func (l *lazyFS) cut() (lazyCut, error) {
	if err := l.unmount(); err != nil {
		return lazyCut{}, err
	}
	l.mu.Lock()
	var c lazyCut
	var errs []error
	for i := len(l.ops) - 1; i >= 0; i-- {
		if err := l.ops[i].undo(); err != nil {
			c.opsFailed++
			errs = append(errs, err)
			continue
		}
		c.ops++
	}
	l.ops = nil
	for _, f := range l.files {
		for i := len(f.undo) - 1; i >= 0; i-- {
			u := f.undo[i]
			var st syscall.Stat_t
			if err := syscall.Fstat(f.fd, &st); err == nil && st.Size > u.size {
				c.bytes += st.Size - u.size
			}
			c.bytes += int64(len(u.old))
			if err := syscall.Ftruncate(f.fd, u.size); err != nil {
				errs = append(errs, fmt.Errorf("cut %s: truncate to %d: %w", f.name, u.size, err))
			}
			if len(u.old) > 0 {
				if _, err := syscall.Pwrite(f.fd, u.old, u.off); err != nil {
					errs = append(errs, fmt.Errorf("cut %s: put back %d bytes at %d: %w", f.name, len(u.old), u.off, err))
				}
			}
		}
		c.files++
		_ = syscall.Close(f.fd)
	}
	clear(l.files)
	if err := os.RemoveAll(l.grave); err != nil {
		errs = append(errs, err)
	}
	if err := os.MkdirAll(l.grave, 0o755); err != nil {
		errs = append(errs, err)
	}
	l.stats.cuts++
	l.stats.files += c.files
	l.stats.bytes += c.bytes
	l.stats.ops += c.ops
	l.stats.opsFailed += c.opsFailed
	l.mu.Unlock()
	if err := l.mount(); err != nil {
		errs = append(errs, err)
	}
	return c, errors.Join(errs...)
}

// undo undoes a metadata change, in the backing directory.
func (op *lazyOp) undo() error {
	var err error
	switch op.kind {
	case "create", "link":
		err = os.Remove(op.path)
	case "mkdir":
		err = os.RemoveAll(op.path)
	case "unlink", "rmdir":
		err = os.Rename(op.grave, op.path)
	case "rename":
		err = os.Rename(op.to, op.path)
		if err == nil && op.grave != "" {
			err = os.Rename(op.grave, op.to)
		}
	}
	if err != nil {
		return fmt.Errorf("undo %s %s: %w", op.kind, op.path, err)
	}
	return nil
}

// file returns the record of the file with inode ino, making it with a descriptor of the rig's own (a dup
// of fd, or the file at path opened read-write when fd is -1).
func (l *lazyFS) file(ino uint64, fd int, path, name string) (*lazyFile, error) {
	f := l.files[ino]
	if f == nil {
		var own int
		var err error
		if fd >= 0 {
			own, err = syscall.Dup(fd)
		} else {
			own, err = syscall.Open(path, syscall.O_RDWR|syscall.O_CLOEXEC, 0)
		}
		if err != nil {
			return nil, err
		}
		f = &lazyFile{fd: own}
		l.files[ino] = f
	}
	f.name = name
	return f, nil
}

// remember records how to undo a change of the file f that will set the bytes [off, off+n) (n may be 0)
// or its size: the bytes it overwrites, and the file's size before it.
func (l *lazyFS) remember(f *lazyFile, off, n int64) error {
	var st syscall.Stat_t
	if err := syscall.Fstat(f.fd, &st); err != nil {
		return err
	}
	u := lazyUndo{off: off, size: st.Size}
	if off < st.Size && n > 0 {
		u.old = make([]byte, min(n, st.Size-off))
		if _, err := syscall.Pread(f.fd, u.old, off); err != nil {
			return err
		}
	}
	f.undo = append(f.undo, u)
	l.stats.writes++
	return nil
}

// synced makes what was written to the file with inode ino durable.
func (l *lazyFS) synced(ino uint64, name string) {
	l.pause()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ignoreSync != nil && l.ignoreSync(name) {
		l.stats.ignored++
		return
	}
	if f := l.files[ino]; f != nil {
		_ = syscall.Close(f.fd)
		delete(l.files, ino)
	}
	l.stats.syncs++
}

// dirSynced makes the metadata changes in the directory with inode ino durable, those that wait for no
// other directory.
func (l *lazyFS) dirSynced(ino uint64) {
	l.pause()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stats.dirSyncs++
	l.durableIn(ino)
}

// durableIn makes the metadata changes in the directory with inode ino durable, those that wait for no
// other directory; l.mu is held.
func (l *lazyFS) durableIn(ino uint64) {
	var gone []string // directories whose removal became durable
	kept := l.ops[:0]
	for _, op := range l.ops {
		delete(op.dirs, ino)
		if len(op.dirs) > 0 {
			kept = append(kept, op)
			continue
		}
		l.stats.opsDurable++
		if op.grave != "" {
			_ = os.RemoveAll(op.grave)
		}
		if op.kind == "rmdir" {
			gone = append(gone, op.path+string(filepath.Separator))
		}
	}
	clear(l.ops[len(kept):])
	l.ops = kept
	// What was made or removed in a directory whose removal is durable is gone with it, whether or not the
	// directory was synced after: it was empty when it went.
	kept = l.ops[:0]
	for _, op := range l.ops {
		inside := false
		for _, d := range gone {
			inside = inside || strings.HasPrefix(op.path, d) || op.to != "" && strings.HasPrefix(op.to, d)
		}
		if !inside {
			kept = append(kept, op)
			continue
		}
		l.stats.opsDurable++
		if op.grave != "" {
			_ = os.RemoveAll(op.grave)
		}
	}
	clear(l.ops[len(kept):])
	l.ops = kept
}

// record records a metadata change in the strict mode; l.mu is held.
//
// In the lenient mode the change is durable at once, and so are the changes in its directories before it
// that the strict mode left pending (the mode changed since): a file system's journal commits a directory's
// changes in order, so a removal cannot come back over a later entry of the same name.
func (l *lazyFS) record(op *lazyOp, dirs ...uint64) {
	if !l.strict {
		for _, d := range dirs {
			l.durableIn(d)
		}
		if op.grave != "" {
			_ = os.RemoveAll(op.grave)
		}
		return
	}
	op.dirs = make(map[uint64]bool)
	for _, d := range dirs {
		op.dirs[d] = true
	}
	l.ops = append(l.ops, op)
}

// newGrave returns a new path in the graveyard; l.mu is held.
func (l *lazyFS) newGrave() string {
	l.graves++
	return filepath.Join(l.grave, strconv.Itoa(l.graves))
}

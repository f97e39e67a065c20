package durable_test

import (
	"context"
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

// setMode sets the metadata mode from now on: what is pending stays pending until a sync or a cut.
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
func (l *lazyFS) record(op *lazyOp, dirs ...uint64) {
	if !l.strict {
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

// lazyNode is a node of the mount: a loopback node whose changes the rig records.
type lazyNode struct {
	*fs.LoopbackNode
	l *lazyFS
}

var (
	_ fs.NodeWrapChilder     = (*lazyNode)(nil)
	_ fs.NodeCreater         = (*lazyNode)(nil)
	_ fs.NodeOpener          = (*lazyNode)(nil)
	_ fs.NodeOpendirHandler  = (*lazyNode)(nil)
	_ fs.NodeFsyncer         = (*lazyNode)(nil)
	_ fs.NodeSetattrer       = (*lazyNode)(nil)
	_ fs.NodeUnlinker        = (*lazyNode)(nil)
	_ fs.NodeRmdirer         = (*lazyNode)(nil)
	_ fs.NodeRenamer         = (*lazyNode)(nil)
	_ fs.NodeMkdirer         = (*lazyNode)(nil)
	_ fs.NodeLinker          = (*lazyNode)(nil)
	_ fs.NodeSymlinker       = (*lazyNode)(nil)
	_ fs.NodeMknoder         = (*lazyNode)(nil)
	_ fs.NodeCopyFileRanger  = (*lazyNode)(nil)
	_ fs.FileFsyncdirer      = (*lazyDir)(nil)
	_ fs.FileWriter          = (*lazyHandle)(nil)
	_ fs.FileFsyncer         = (*lazyHandle)(nil)
	_ fs.FileAllocater       = (*lazyHandle)(nil)
	_ fs.FileReleaser        = (*lazyHandle)(nil)
	_ fs.FileGetattrer       = (*lazyHandle)(nil)
	_ fs.FileReader          = (*lazyHandle)(nil)
	_ fs.FileFlusher         = (*lazyHandle)(nil)
	_ fs.FileLseeker         = (*lazyHandle)(nil)
	_ fs.FilePassthroughFder = (*fs.LoopbackFile)(nil) // which lazyHandle must not be: it would bypass the rig
)

// WrapChild makes every node of the mount a lazyNode.
func (n *lazyNode) WrapChild(ctx context.Context, ops fs.InodeEmbedder) fs.InodeEmbedder {
	return &lazyNode{LoopbackNode: ops.(*fs.LoopbackNode), l: n.l}
}

// rel returns the node's path in the mount, and its path in the backing directory.
func (n *lazyNode) paths() (rel, backing string) {
	rel = n.Path(nil)
	return rel, filepath.Join(n.l.backing, rel)
}

func (n *lazyNode) ino() uint64 { return n.StableAttr().Ino }

// handle makes the rig's handle of a loopback file handle.
func (n *lazyNode) handle(fh fs.FileHandle, name string) (fs.FileHandle, syscall.Errno) {
	lf, ok := fh.(*fs.LoopbackFile)
	if !ok {
		return fh, 0
	}
	fd, ok := lf.PassthroughFd()
	if !ok {
		_ = lf.Release(context.Background())
		return nil, syscall.EBADF
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		_ = lf.Release(context.Background())
		return nil, fs.ToErrno(err)
	}
	return &lazyHandle{lf: lf, fd: fd, ino: st.Ino, name: name, l: n.l}, 0
}

// readWrite opens regular files read-write whatever the caller asked, so that the rig can read what a
// write overwrites (root may).
func readWrite(flags uint32) uint32 {
	return flags&^uint32(syscall.O_ACCMODE) | uint32(syscall.O_RDWR)
}

func (n *lazyNode) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	rel, dir := n.paths()
	path := filepath.Join(dir, name)
	n.l.mu.Lock()
	defer n.l.mu.Unlock()
	_, err := os.Lstat(path)
	existed := err == nil
	ch, fh, fuseFlags, errno := n.LoopbackNode.Create(ctx, name, readWrite(flags)&^uint32(syscall.O_TRUNC), mode, out)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	if !existed {
		n.l.record(&lazyOp{kind: "create", path: path}, n.ino())
	}
	h, errno := n.handle(fh, filepath.Join(rel, name))
	if errno == 0 && existed && flags&syscall.O_TRUNC != 0 {
		errno = h.(*lazyHandle).truncate(0)
	}
	if errno != 0 {
		return nil, nil, 0, errno
	}
	return ch, h, fuseFlags, 0
}

func (n *lazyNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	rel, _ := n.paths()
	fh, fuseFlags, errno := n.LoopbackNode.Open(ctx, readWrite(flags)&^uint32(syscall.O_TRUNC))
	if errno != 0 {
		return nil, 0, errno
	}
	h, errno := n.handle(fh, rel)
	if errno == 0 && flags&syscall.O_TRUNC != 0 { // the kernel truncates with a SETATTR first, but in case
		n.l.mu.Lock()
		errno = h.(*lazyHandle).truncate(0)
		n.l.mu.Unlock()
	}
	return h, fuseFlags, errno
}

func (n *lazyNode) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, fuseFlags, errno := n.LoopbackNode.OpendirHandle(ctx, flags)
	if errno != 0 {
		return nil, 0, errno
	}
	return &lazyDir{FileHandle: fh, n: n}, fuseFlags, 0
}

// Fsync of a directory (without a handle of the rig's) makes its metadata changes durable; of a file,
// what was written to it.
func (n *lazyNode) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno {
	if h, ok := f.(*lazyHandle); ok {
		return h.Fsync(ctx, flags)
	}
	if n.IsDir() {
		n.l.dirSynced(n.ino())
		return 0
	}
	rel, _ := n.paths()
	n.l.synced(n.ino(), rel)
	return 0
}

func (n *lazyNode) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if size, ok := in.GetSize(); ok && !n.IsDir() {
		rel, path := n.paths()
		fd := -1
		if h, ok := f.(*lazyHandle); ok {
			fd = h.fd
		}
		n.l.mu.Lock()
		lf, err := n.l.file(n.ino(), fd, path, rel)
		if err == nil {
			err = n.l.remember(lf, int64(size), 1<<62)
		}
		if err == nil {
			err = syscall.Ftruncate(lf.fd, int64(size))
		}
		n.l.mu.Unlock()
		if err != nil {
			return fs.ToErrno(err)
		}
		in.Valid &^= fuse.FATTR_SIZE
	}
	if _, ok := f.(*lazyHandle); ok {
		f = nil // the loopback node then changes the file by its path
	}
	return n.LoopbackNode.Setattr(ctx, f, in, out)
}

func (n *lazyNode) Unlink(ctx context.Context, name string) syscall.Errno {
	return n.remove(ctx, name, "unlink")
}

func (n *lazyNode) Rmdir(ctx context.Context, name string) syscall.Errno {
	return n.remove(ctx, name, "rmdir")
}

// remove removes the entry name: in the strict mode, into the graveyard, to come back if a cut comes
// before the directory's sync.
func (n *lazyNode) remove(ctx context.Context, name, kind string) syscall.Errno {
	_, dir := n.paths()
	path := filepath.Join(dir, name)
	n.l.mu.Lock()
	defer n.l.mu.Unlock()
	if !n.l.strict {
		if kind == "rmdir" {
			return fs.ToErrno(syscall.Rmdir(path))
		}
		return fs.ToErrno(syscall.Unlink(path))
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return fs.ToErrno(err)
	}
	isDir := st.Mode&syscall.S_IFMT == syscall.S_IFDIR
	switch {
	case kind == "rmdir" && !isDir:
		return syscall.ENOTDIR
	case kind == "unlink" && isDir:
		return syscall.EISDIR
	}
	if isDir {
		if names, err := os.ReadDir(path); err != nil || len(names) > 0 {
			return syscall.ENOTEMPTY
		}
	}
	grave := n.l.newGrave()
	if err := syscall.Rename(path, grave); err != nil {
		return fs.ToErrno(err)
	}
	n.l.record(&lazyOp{kind: kind, path: path, grave: grave}, n.ino())
	return 0
}

func (n *lazyNode) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	np, ok := newParent.(*lazyNode)
	if !ok {
		return syscall.EXDEV
	}
	if flags&^uint32(unixRenameNoReplace) != 0 {
		return syscall.EINVAL // RENAME_EXCHANGE, RENAME_WHITEOUT: nothing here uses them
	}
	_, dir := n.paths()
	_, newDir := np.paths()
	from, to := filepath.Join(dir, name), filepath.Join(newDir, newName)
	n.l.mu.Lock()
	defer n.l.mu.Unlock()
	op := &lazyOp{kind: "rename", path: from, to: to}
	if _, err := os.Lstat(to); err == nil {
		if flags&unixRenameNoReplace != 0 {
			return syscall.EEXIST
		}
		if n.l.strict {
			// The entry replaced comes back if a cut comes before the directory's sync.
			op.grave = n.l.newGrave()
			if err := os.Link(to, op.grave); err != nil {
				return fs.ToErrno(err)
			}
		}
	}
	if err := syscall.Rename(from, to); err != nil {
		if op.grave != "" {
			_ = os.Remove(op.grave)
		}
		return fs.ToErrno(err)
	}
	n.l.record(op, n.ino(), np.ino())
	return 0
}

// unixRenameNoReplace is RENAME_NOREPLACE of renameat2(2).
const unixRenameNoReplace = 1

func (n *lazyNode) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	_, dir := n.paths()
	n.l.mu.Lock()
	defer n.l.mu.Unlock()
	ch, errno := n.LoopbackNode.Mkdir(ctx, name, mode, out)
	if errno == 0 {
		n.l.record(&lazyOp{kind: "mkdir", path: filepath.Join(dir, name)}, n.ino())
	}
	return ch, errno
}

func (n *lazyNode) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	t, ok := target.(*lazyNode)
	if !ok {
		return nil, syscall.EXDEV
	}
	_, dir := n.paths()
	n.l.mu.Lock()
	defer n.l.mu.Unlock()
	ch, errno := n.LoopbackNode.Link(ctx, t.LoopbackNode, name, out)
	if errno == 0 {
		n.l.record(&lazyOp{kind: "link", path: filepath.Join(dir, name)}, n.ino())
	}
	return ch, errno
}

func (n *lazyNode) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	_, dir := n.paths()
	n.l.mu.Lock()
	defer n.l.mu.Unlock()
	ch, errno := n.LoopbackNode.Symlink(ctx, target, name, out)
	if errno == 0 {
		n.l.record(&lazyOp{kind: "create", path: filepath.Join(dir, name)}, n.ino())
	}
	return ch, errno
}

func (n *lazyNode) Mknod(ctx context.Context, name string, mode, rdev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	_, dir := n.paths()
	n.l.mu.Lock()
	defer n.l.mu.Unlock()
	ch, errno := n.LoopbackNode.Mknod(ctx, name, mode, rdev, out)
	if errno == 0 {
		n.l.record(&lazyOp{kind: "create", path: filepath.Join(dir, name)}, n.ino())
	}
	return ch, errno
}

// CopyFileRange is refused: the copy would write to a file behind the rig's back (the kernel falls back
// to reads and writes).
func (n *lazyNode) CopyFileRange(ctx context.Context, fhIn fs.FileHandle, offIn uint64, out *fs.Inode, fhOut fs.FileHandle,
	offOut uint64, len uint64, flags uint64) (uint32, syscall.Errno) {
	return 0, syscall.ENOTSUP
}

// lazyDir is an open directory of the mount, whose fsync makes its metadata changes durable.
type lazyDir struct {
	fs.FileHandle
	n *lazyNode
}

func (d *lazyDir) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	d.n.l.dirSynced(d.n.ino())
	return 0
}

func (d *lazyDir) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	return d.FileHandle.(fs.FileReaddirenter).Readdirent(ctx)
}

func (d *lazyDir) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	return d.FileHandle.(fs.FileSeekdirer).Seekdir(ctx, off)
}

func (d *lazyDir) Releasedir(ctx context.Context, flags uint32) {
	d.FileHandle.(fs.FileReleasedirer).Releasedir(ctx, flags)
}

// lazyHandle is an open file of the mount: its writes are remembered, its syncs make them durable.
type lazyHandle struct {
	lf   *fs.LoopbackFile // owns fd
	fd   int
	ino  uint64
	name string // the file's path in the mount when opened
	l    *lazyFS
}

func (h *lazyHandle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	h.l.mu.Lock()
	defer h.l.mu.Unlock()
	f, err := h.l.file(h.ino, h.fd, "", h.name)
	if err == nil {
		err = h.l.remember(f, off, int64(len(data)))
	}
	if err != nil {
		return 0, fs.ToErrno(err)
	}
	n, err := syscall.Pwrite(h.fd, data, off)
	return uint32(max(n, 0)), fs.ToErrno(err)
}

// truncate sets the file's size, remembering what it cuts off; l.mu is held.
func (h *lazyHandle) truncate(size int64) syscall.Errno {
	f, err := h.l.file(h.ino, h.fd, "", h.name)
	if err == nil {
		err = h.l.remember(f, size, 1<<62)
	}
	if err == nil {
		err = syscall.Ftruncate(h.fd, size)
	}
	return fs.ToErrno(err)
}

func (h *lazyHandle) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	h.l.synced(h.ino, h.name)
	return 0
}

func (h *lazyHandle) Allocate(ctx context.Context, off, size uint64, mode uint32) syscall.Errno {
	const keepSize = 1 // FALLOC_FL_KEEP_SIZE: no change a reader can see
	switch mode {
	case keepSize:
	case 0:
		h.l.mu.Lock()
		defer h.l.mu.Unlock()
		f, err := h.l.file(h.ino, h.fd, "", h.name)
		if err == nil {
			err = h.l.remember(f, int64(off), 0)
		}
		if err != nil {
			return fs.ToErrno(err)
		}
	default:
		return syscall.EOPNOTSUPP
	}
	return h.lf.Allocate(ctx, off, size, mode)
}

func (h *lazyHandle) Read(ctx context.Context, buf []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	return h.lf.Read(ctx, buf, off)
}

func (h *lazyHandle) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	return h.lf.Getattr(ctx, out)
}

func (h *lazyHandle) Lseek(ctx context.Context, off uint64, whence uint32) (uint64, syscall.Errno) {
	return h.lf.Lseek(ctx, off, whence)
}

func (h *lazyHandle) Flush(ctx context.Context) syscall.Errno { return 0 }

func (h *lazyHandle) Release(ctx context.Context) syscall.Errno { return h.lf.Release(ctx) }

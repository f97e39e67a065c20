package durable_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// The power-loss rig's FUSE side (lazyfs_test.go has the rest): the nodes and open files of the mount, go-fuse's
// loopback ones, whose changes the rig records before it makes them.

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

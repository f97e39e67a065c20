package durable

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// The files fifoq writes outside the storage engine (the sync mark, the copies of cut logs, and beside a
// store the files of a program such as fifoq serve's signing key) are written so that a crash or a loss of
// power at any moment leaves the old content or the new, never an empty or torn file: to a temporary file
// in the same directory, synced, then renamed over the file, and the directory synced so that the rename
// is durable. A directory made for them is made durable the same way: its parent is synced.

// WriteFile writes data to the file named path, as os.WriteFile does, but so that a crash of the process or
// a loss of power at any moment leaves either the file as it was (or no file, if there was none) or the
// new content whole, never an empty or torn file: it writes data to a temporary file beside path (named
// after it, with the suffix ".tmp"), syncs it, renames it to path, and syncs the directory. The file has
// the permissions perm, which the umask does not reduce (perm 0 leaves those the system gives a new
// file). The directory must exist: MkdirAll makes one durably.
//
// On an error, path is as it was; the temporary file may be left, and the next WriteFile of path replaces
// it.
func WriteFile(path string, data []byte, perm iofs.FileMode) error {
	return writeFileAtomic(vfs.Default, path, tempOf(path), data, perm)
}

// MkdirAll makes the directory dir and its missing parents, as os.MkdirAll does, with the permissions perm,
// and syncs the parent of each directory it makes, so that a loss of power cannot take them back. A dir
// that exists already is left as it is.
func MkdirAll(dir string, perm iofs.FileMode) error {
	return mkdirAllSynced(vfs.Default, dir, perm)
}

// tempOf is the temporary file of WriteFile(path): beside it, so that the rename stays in one directory
// (and one file system).
func tempOf(path string) string { return path + ".tmp" }

// writeFileAtomic writes data to path through the temporary file tmp, in the file system fs: written and
// synced, renamed to path, and the directories of both synced. perm, if not 0, sets the file's
// permissions (fs must then make files that have a Chmod method, as vfs.Default's do); the store's own
// files pass 0, which leaves those fs gives.
func writeFileAtomic(fs vfs.FS, path, tmp string, data []byte, perm iofs.FileMode) (err error) {
	fail := func(err error) error { return fmt.Errorf("durable: write %s: %w", path, err) }
	f, err := fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fail(err)
	}
	if perm != 0 {
		c, ok := f.(interface{ Chmod(iofs.FileMode) error })
		if !ok {
			err = errors.New("the file system cannot set a file's permissions")
		} else {
			err = c.Chmod(perm)
		}
	}
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fs.Rename(tmp, path)
	}
	if err != nil {
		_ = fs.Remove(tmp)
		return fail(err)
	}
	dir := fs.PathDir(path)
	if err := syncDir(fs, dir); err != nil {
		return fail(err)
	}
	if tdir := fs.PathDir(tmp); tdir != dir {
		if err := syncDir(fs, tdir); err != nil {
			return fail(err)
		}
	}
	return nil
}

// mkdirAllSynced makes dir and its missing parents with permissions perm, and syncs the parent of each
// directory it made, outermost first.
func mkdirAllSynced(fs vfs.FS, dir string, perm iofs.FileMode) error {
	made := madeDirs(fs, dir)
	if err := fs.MkdirAll(dir, perm); err != nil {
		return fmt.Errorf("durable: %w", err)
	}
	for _, d := range made {
		if err := syncDir(fs, filepath.Dir(d)); err != nil {
			return fmt.Errorf("durable: make %s: sync its parent: %w", d, err)
		}
	}
	return nil
}

// syncDir syncs the directory dir, so that what was made, renamed or removed in it is durable.
func syncDir(fs vfs.FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

package durable_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// startLazyFS mounts a power-loss rig in a temporary directory, or skips the test saying in one line why it
// cannot (not Linux, not root, no /dev/fuse, the mount refused). The rig is unmounted when the test ends.
func startLazyFS(t testing.TB, strict bool) *lazyFS {
	t.Helper()
	if why := lazyUnavailable(); why != "" {
		t.Skip(why)
	}
	base := t.TempDir()
	l, err := newLazyFS(filepath.Join(base, "backing"), filepath.Join(base, "grave"), filepath.Join(base, "mnt"), strict)
	if err != nil {
		t.Skipf("the power-loss rig's FUSE mount was refused: %v", err)
	}
	t.Cleanup(func() {
		if err := l.close(); err != nil {
			t.Errorf("power-loss rig: %v", err)
		}
	})
	return l
}

// lazyWrite writes b at off of the file path (made if missing), and syncs it when sync.
func lazyWrite(t *testing.T, path string, off int64, b string, sync bool) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte(b), off)
	require.NoError(t, err)
	if sync {
		require.NoError(t, f.Sync())
	}
	require.NoError(t, f.Close())
}

// syncDir fsyncs the directory dir.
func lazySyncDir(t *testing.T, dir string) {
	t.Helper()
	d, err := os.Open(dir)
	require.NoError(t, err)
	require.NoError(t, d.Sync())
	require.NoError(t, d.Close())
}

// lazyRead returns the content of path, or "<missing>".
func lazyRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "<missing>"
	}
	require.NoError(t, err)
	return string(b)
}

// TestLazyFSData: at a cut, every file is as it was at its last fsync: what was appended since is cut off,
// what overwrote synced bytes is undone, a truncation is undone, and a file never synced is empty; what
// was synced stays, in both metadata modes.
func TestLazyFSData(t *testing.T) {
	t.Parallel()
	for _, strict := range []bool{false, true} {
		t.Run(map[bool]string{false: "lenient", true: "strict"}[strict], func(t *testing.T) {
			t.Parallel()
			l := startLazyFS(t, strict)
			a, b, c := filepath.Join(l.mnt, "a"), filepath.Join(l.mnt, "b"), filepath.Join(l.mnt, "c")
			lazyWrite(t, a, 0, "synced-one", true)
			lazyWrite(t, b, 0, "0123456789", true)
			lazyWrite(t, c, 0, "0123456789", true)
			lazySyncDir(t, l.mnt)

			lazyWrite(t, a, 10, "+appended", false)                  // past the synced end
			lazyWrite(t, b, 2, "XY", false)                          // over synced bytes
			lazyWrite(t, b, 8, "ZZZZ", false)                        // over the end and past it
			require.NoError(t, os.Truncate(c, 3))                    // a truncation
			lazyWrite(t, c, 5, "w", false)                           // then a write past the new end
			lazyWrite(t, filepath.Join(l.mnt, "n"), 0, "new", false) // never synced
			require.Equal(t, "01XY4567ZZZZ", lazyRead(t, b), "the mount shows what was written, as a page cache does")

			cut, err := l.cut()
			require.NoError(t, err)
			require.Equal(t, "synced-one", lazyRead(t, a))
			require.Equal(t, "0123456789", lazyRead(t, b))
			require.Equal(t, "0123456789", lazyRead(t, c))
			if strict {
				require.Equal(t, "<missing>", lazyRead(t, filepath.Join(l.mnt, "n")), "its directory was never synced")
			} else {
				require.Equal(t, "", lazyRead(t, filepath.Join(l.mnt, "n")), "made at once, its content never synced")
			}
			require.Equal(t, 4, cut.files)
			require.Positive(t, cut.bytes)

			lazyWrite(t, a, 10, "+again", true)
			cut, err = l.cut()
			require.NoError(t, err)
			require.Equal(t, "synced-one+again", lazyRead(t, a), "synced after the first cut")
			require.Zero(t, cut.files)
		})
	}
}

// TestLazyFSMetadata: in the strict mode a file made, renamed, linked or removed, or a directory made, is
// durable only once its directory is fsynced (a rename's two directories), and a cut undoes the rest,
// putting a removed file back with its synced content; in the lenient mode every such change is durable at
// once.
func TestLazyFSMetadata(t *testing.T) {
	t.Parallel()
	type files map[string]string
	scenario := func(t *testing.T, l *lazyFS) {
		m := l.mnt
		lazyWrite(t, filepath.Join(m, "kept"), 0, "kept", true)
		lazyWrite(t, filepath.Join(m, "old"), 0, "old", true)
		lazyWrite(t, filepath.Join(m, "gone"), 0, "gone", true)
		require.NoError(t, os.Mkdir(filepath.Join(m, "d"), 0o755))
		lazySyncDir(t, m)
		lazyWrite(t, filepath.Join(m, "d", "in"), 0, "in", true)
		lazySyncDir(t, filepath.Join(m, "d"))

		// Not durable in the strict mode: no sync of their directories follows.
		lazyWrite(t, filepath.Join(m, "tmp"), 0, "new", true) // a file made and synced
		require.NoError(t, os.Rename(filepath.Join(m, "tmp"), filepath.Join(m, "old")))
		require.NoError(t, os.Remove(filepath.Join(m, "gone")))
		require.NoError(t, os.Link(filepath.Join(m, "kept"), filepath.Join(m, "linked")))
		require.NoError(t, os.Mkdir(filepath.Join(m, "e"), 0o755))
		lazyWrite(t, filepath.Join(m, "e", "x"), 0, "x", true)
		lazySyncDir(t, filepath.Join(m, "e")) // not its parent
		require.NoError(t, os.Remove(filepath.Join(m, "d", "in")))
		require.NoError(t, os.Remove(filepath.Join(m, "d")))

		// Durable in both modes: a file made in a directory that is then synced.
		require.NoError(t, os.Mkdir(filepath.Join(m, "f"), 0o755))
		lazyWrite(t, filepath.Join(m, "f", "y"), 0, "y", true)
		lazySyncDir(t, filepath.Join(m, "f"))
	}
	read := func(t *testing.T, root string) files {
		got := files{}
		require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			require.NoError(t, err)
			rel, _ := filepath.Rel(root, p)
			switch {
			case rel == ".":
			case d.IsDir():
				got[rel+"/"] = ""
			default:
				got[rel] = lazyRead(t, p)
			}
			return nil
		}))
		return got
	}

	t.Run("strict", func(t *testing.T) {
		t.Parallel()
		l := startLazyFS(t, true)
		scenario(t, l)
		cut, err := l.cut()
		require.NoError(t, err)
		require.Equal(t, files{"kept": "kept", "old": "old", "gone": "gone", "d/": "", "d/in": "in"}, read(t, l.mnt),
			"the root was not synced after its changes: each is undone, the removed files come back")
		require.Zero(t, cut.opsFailed)
		require.Positive(t, cut.ops)

		l = startLazyFS(t, true)
		scenario(t, l)
		lazySyncDir(t, l.mnt)
		_, err = l.cut()
		require.NoError(t, err)
		require.Equal(t, files{"kept": "kept", "linked": "kept", "old": "new", "e/": "", "e/x": "x", "f/": "", "f/y": "y"}, read(t, l.mnt),
			"the root synced last: every change is durable")
	})
	// A directory removed in the strict mode, not durably, then made again once the mode is lenient (the
	// power-loss test's rounds change modes): the later change is durable, and so the removal before it.
	t.Run("strict, then lenient", func(t *testing.T) {
		t.Parallel()
		l := startLazyFS(t, true)
		require.NoError(t, os.Mkdir(filepath.Join(l.mnt, "d"), 0o755))
		lazySyncDir(t, l.mnt)
		require.NoError(t, os.Remove(filepath.Join(l.mnt, "d")))
		l.setMode(false)
		require.NoError(t, os.Mkdir(filepath.Join(l.mnt, "d"), 0o755))
		lazyWrite(t, filepath.Join(l.mnt, "d", "x"), 0, "x", true)
		cut, err := l.cut()
		require.NoError(t, err)
		require.Zero(t, cut.ops)
		require.Equal(t, files{"d/": "", "d/x": "x"}, read(t, l.mnt))
	})
	t.Run("lenient", func(t *testing.T) {
		t.Parallel()
		l := startLazyFS(t, false)
		scenario(t, l)
		cut, err := l.cut()
		require.NoError(t, err)
		require.Zero(t, cut.ops)
		require.Equal(t, files{"kept": "kept", "linked": "kept", "old": "new", "e/": "", "e/x": "x", "f/": "", "f/y": "y"}, read(t, l.mnt))
	})
}

// TestLazyFSIgnoreSync: the rig's switch that makes the fsyncs of some files do nothing, as a disk that
// ignores them: at a cut those files lose what was written to them, synced or not; the others keep it.
func TestLazyFSIgnoreSync(t *testing.T) {
	t.Parallel()
	l := startLazyFS(t, false)
	l.setIgnoreSync(func(name string) bool { return strings.HasSuffix(name, ".log") })
	lazyWrite(t, filepath.Join(l.mnt, "000001.log"), 0, "record", true)
	lazyWrite(t, filepath.Join(l.mnt, "MANIFEST"), 0, "manifest", true)
	_, err := l.cut()
	require.NoError(t, err)
	require.Equal(t, "", lazyRead(t, filepath.Join(l.mnt, "000001.log")), "its sync was ignored")
	require.Equal(t, "manifest", lazyRead(t, filepath.Join(l.mnt, "MANIFEST")))
	require.Equal(t, 1, l.stats.ignored)
}

package durable_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/durable"
	"github.com/fifoq/fifoq/storage/storagetest"
)

// Faults met as a store opens (issue 16, items 1 and 4): a full disk, damaged or missing files. Each is
// refused at once with one line that names the cause and the file.

// fill writes a file in dir until the disk is full, and returns its path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "fill")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			require.ErrorIs(t, err, syscall.ENOSPC)
			return path
		}
	}
}

// A store whose logs hold records that no table holds yet, opened on a full disk: Pebble flushes them to a
// table file before its Open returns, and retries the failed flush forever, so Open never returned (it
// spun a core). Now Open returns an error that wraps ENOSPC and names the table file; it releases the
// directory, so that, once the disk has room, the store opens in this same process with every message.
// Without the fix the test hangs, until go test's -timeout.
func TestOpenDiskFull(t *testing.T) {
	t.Parallel()
	disk := storagetest.SmallDisk(t, 1<<20)
	dir := filepath.Join(disk, "store")
	st := openStore(t, dir)
	q := openQueue(t, st, fifoq.NewManualClock(t0), "q")
	var sent []string
	for i := range 100 {
		b := fmt.Sprintf("%03d-%s", i, strings.Repeat("x", 1000))
		send(t, q, b)
		sent = append(sent, b)
	}
	require.NoError(t, st.Close()) // the records stay in the log: Close does not flush
	require.Empty(t, filesOf(t, dir, "*.sst"))
	filler := fill(t, disk)

	for range 2 { // the second Open finds the directory released
		_, err := durable.Open(dir, durable.WithLogger(quiet))
		t.Log(err)
		require.ErrorIs(t, err, syscall.ENOSPC)
		require.NotErrorIs(t, err, durable.ErrLocked)
		require.ErrorContains(t, err, dir+string(filepath.Separator))
		require.ErrorContains(t, err, ".sst")
		require.NotContains(t, err.Error(), "\n")
	}

	require.NoError(t, os.Remove(filler))
	got, stage, err := reopen(t, dir)
	require.NoError(t, err, stage)
	require.Equal(t, sent, got)
}

// Open of a new directory on a full disk fails with ENOSPC, and removes the directories it made: a failed
// start leaves nothing behind. A directory that was there before is left.
func TestOpenNewDirDiskFull(t *testing.T) {
	t.Parallel()
	disk := storagetest.SmallDisk(t, 64<<10)
	fill(t, disk)
	dir := filepath.Join(disk, "a", "b")
	_, err := durable.Open(dir, durable.WithLogger(quiet))
	t.Log(err)
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.ErrorContains(t, err, dir+string(filepath.Separator), "names the file")
	_, serr := os.Stat(filepath.Join(disk, "a"))
	require.ErrorIs(t, serr, os.ErrNotExist, "the directories Open made are removed")

	existing := filepath.Join(disk, "existing")
	require.NoError(t, os.Mkdir(existing, 0o755))
	_, err = durable.Open(existing, durable.WithLogger(quiet))
	require.ErrorIs(t, err, syscall.ENOSPC)
	_, serr = os.Stat(existing)
	require.NoError(t, serr, "a directory that was there is kept")
}

// A directory that cannot be written: Open fails with EACCES naming it, and makes nothing. (Root passes
// every permission check, so the test makes the directory read-only by mounting it so where it can.)
func TestOpenReadOnlyDisk(t *testing.T) {
	t.Parallel()
	disk := storagetest.SmallDisk(t, 1<<20)
	dir := filepath.Join(disk, "store")
	st := openStore(t, dir)
	send(t, openQueue(t, st, fifoq.NewManualClock(t0), "q"), "a")
	require.NoError(t, st.Close())
	if out, err := exec.Command("mount", "-o", "remount,ro", disk).CombinedOutput(); err != nil {
		t.Skipf("remount read-only: %v: %s", err, out)
	}
	_, err := durable.Open(dir, durable.WithLogger(quiet))
	require.Error(t, err)
	t.Log(err)
	require.True(t, errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EACCES), "%v", err)
	require.ErrorContains(t, err, dir)
	require.NotContains(t, err.Error(), "\n")
}

// What a failed Open leaves running: Pebble's goroutines (those with a frame of Pebble's in their stack)
// and the process's open files.
func leftovers(t *testing.T) (goroutines, files int) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "github.com/cockroachdb/pebble") {
			goroutines++
		}
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return goroutines, -1
	}
	return goroutines, len(ents)
}

// files returns the names and sizes of the files in dir.
func files(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := map[string]int64{}
	for _, e := range ents {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			out[e.Name()] = info.Size()
		}
	}
	return out
}

// A program that retries Open on a full disk (an embedding service might) must not leak: each failed Open
// left Pebble's Open behind, blocked for the life of the process with seven goroutines, five open files and
// its memtables. Now a failed Open ends it before it returns (in a sandbox, sandbox.go): the goroutines of
// Pebble's and the open files after 20 failed Opens are those before the first; the files on the disk stay
// as the first failure left them; and once the disk has room, the store opens with every message. The disk
// fills at the table file the flush writes (a small tmpfs, where the tests run as root), or, through a
// faulty file system, at the table or the MANIFEST, at a write or a sync. Not parallel: it counts the
// process's goroutines.
func TestOpenDiskFullRepeated(t *testing.T) {
	isTable := func(name string) bool { return strings.HasSuffix(name, ".sst") }
	isManifest := func(name string) bool { return strings.HasPrefix(filepath.Base(name), "MANIFEST-") }
	for _, tc := range []struct {
		name   string
		tmpfs  bool // a full tmpfs, rather than a faulty file system
		mode   int32
		hit    func(string) bool
		reason string // what the error says
	}{
		{name: "tmpfs", tmpfs: true},
		{name: "table", mode: diskFull, hit: isTable},
		{name: "table sync", mode: syncsFail, hit: isTable},
		{name: "manifest", mode: diskFull, hit: isManifest},
		{name: "manifest sync", mode: syncsFail, hit: isManifest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var dir, filler string
			fs := newFaultFS(tc.hit)
			if tc.tmpfs {
				dir = filepath.Join(storagetest.SmallDisk(t, 1<<20), "store")
			} else {
				dir = t.TempDir()
			}
			st := openStore(t, dir, durable.WithFS(fs))
			q := openQueue(t, st, fifoq.NewManualClock(t0), "q")
			var sent []string
			for i := range 100 {
				b := fmt.Sprintf("%03d-%s", i, strings.Repeat("x", 1000))
				send(t, q, b)
				sent = append(sent, b)
			}
			require.NoError(t, st.Close()) // the records stay in the log: Close does not flush
			if tc.tmpfs {
				filler = fill(t, filepath.Dir(dir))
			}
			fs.mode.Store(tc.mode)

			const n = 20
			g0, f0 := leftovers(t)
			var after1 map[string]int64
			for i := range n {
				_, err := durable.Open(dir, durable.WithLogger(quiet), durable.WithFS(fs))
				require.ErrorIs(t, err, syscall.ENOSPC, "Open %d", i)
				require.NotErrorIs(t, err, durable.ErrLocked, "Open %d", i)
				if i == 0 {
					t.Log(err)
					after1 = files(t, dir)
				}
			}
			g1, f1 := leftovers(t)
			t.Logf("after %d failed Opens: %d goroutines of Pebble's (%d before), %d open files (%d before)", n, g1, g0, f1, f0)
			// A closed store's table statistics collector may not have seen yet that it is closed (it
			// ends once it does, DB.collectTableStats): a few at most, not one per failed Open.
			require.LessOrEqual(t, g1, g0+4, "goroutines of Pebble's left running by %d failed Opens", n)
			if f0 >= 0 {
				require.LessOrEqual(t, f1, f0, "files left open by %d failed Opens", n)
			}
			// The failed Opens change no file of the store, and leave only the table files and MANIFESTs
			// that their flushes began on the disk before they failed, which Pebble removes once the store
			// opens (as after a crash).
			last := files(t, dir)
			for name, size := range after1 {
				require.Contains(t, last, name, "a file of the store after 20 failed Opens")
				require.Equal(t, size, last[name], "the size of %s after 20 failed Opens", name)
			}
			var orphans []string
			for name := range last {
				if _, ok := after1[name]; !ok {
					require.True(t, strings.HasSuffix(name, ".sst") || strings.HasPrefix(name, "MANIFEST-"), "%s, made by a failed Open", name)
					orphans = append(orphans, name)
				}
			}

			fs.mode.Store(healthy)
			if tc.tmpfs {
				require.NoError(t, os.Remove(filler))
			}
			st = openStore(t, dir, durable.WithFS(fs))
			require.Equal(t, sent, bodies(openQueue(t, st, fifoq.NewManualClock(t0), "q")))
			require.NoError(t, st.Close())
			last = files(t, dir)
			manifests := 0
			for name := range last {
				if strings.HasPrefix(name, "MANIFEST-") {
					manifests++
				}
			}
			require.LessOrEqual(t, manifests, 2, "MANIFESTs once the store opened (Pebble keeps the one before the current one): %v", last)
			for _, name := range orphans {
				if strings.HasSuffix(name, ".sst") {
					require.NotContains(t, last, name, "a table file that a failed Open began, once the store opened")
				}
			}
		})
	}
}

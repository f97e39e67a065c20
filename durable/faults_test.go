package durable_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/durable"
	"github.com/fifoq/fifoq/internal/testdisk"
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
	disk := testdisk.Small(t, 1<<20)
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
	disk := testdisk.Small(t, 64<<10)
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
	disk := testdisk.Small(t, 1<<20)
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

package durable

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
)

// TestPebbleTexts makes the Pebble of go.mod report each condition that durable tells only by the text of
// its error (pebbletext.go), and checks that pebbleSays still tells it: an upgrade of Pebble that changes a
// text fails here, not in a decision made on it.
func TestPebbleTexts(t *testing.T) {
	t.Parallel()
	quietOpts := func(l *pebble.EventListener) *pebble.Options {
		o := &pebble.Options{FS: vfs.Default, Logger: quietLogger{}}
		if l != nil {
			o.EventListener = l
		}
		return o
	}
	// fill writes n keys and flushes them to a table file, then closes the store.
	fill := func(t *testing.T, dir string, n int) {
		t.Helper()
		db, err := pebble.Open(dir, quietOpts(nil))
		require.NoError(t, err)
		for i := range n {
			require.NoError(t, db.Set(fmt.Appendf(nil, "key-%05d", i), make([]byte, 100), pebble.Sync))
		}
		require.NoError(t, db.Flush())
		require.NoError(t, db.Close())
	}
	files := func(t *testing.T, dir, pattern string) []string {
		t.Helper()
		fs, err := filepath.Glob(filepath.Join(dir, pattern))
		require.NoError(t, err)
		require.NotEmpty(t, fs, pattern)
		return fs
	}

	t.Run("lock held", func(t *testing.T) {
		dir := t.TempDir()
		db, err := pebble.Open(dir, quietOpts(nil))
		require.NoError(t, err)
		defer db.Close()
		_, err = pebble.Open(dir, quietOpts(nil))
		require.True(t, pebbleSays(err, textLockHeld), "a second Open in the process: %v", err)
	})
	t.Run("table cut short", func(t *testing.T) {
		dir := t.TempDir()
		fill(t, dir, 100)
		table := files(t, dir, "*.sst")[0]
		fi, err := os.Stat(table)
		require.NoError(t, err)
		require.NoError(t, os.Truncate(table, fi.Size()-10))
		_, err = pebble.Open(dir, quietOpts(nil))
		require.True(t, pebbleSays(err, textSizeMismatch), "a table cut short: %v", err)
	})
	t.Run("table missing", func(t *testing.T) {
		dir := t.TempDir()
		fill(t, dir, 100)
		table := files(t, dir, "*.sst")[0]
		require.NoError(t, os.Remove(table))
		_, err := pebble.Open(dir, quietOpts(nil))
		require.Error(t, err)
		require.Equal(t, []string{table}, tablesNamed(vfs.Default, dir, err), "the table its error names: %v", err)
	})
	t.Run("damaged log", func(t *testing.T) {
		dir := t.TempDir()
		o := &pebble.Options{FS: vfs.Default, Logger: quietLogger{}, FormatMajorVersion: pebble.FormatNewest}
		db, err := pebble.Open(dir, o)
		require.NoError(t, err)
		require.NoError(t, db.Close()) // a store's first log lacks the sync offsets that tell damage from a torn end
		db, err = pebble.Open(dir, o)
		require.NoError(t, err)
		for i := range 800 { // in the log only: several blocks of it
			require.NoError(t, db.Set(fmt.Appendf(nil, "key-%05d", i), make([]byte, 200), pebble.Sync))
		}
		require.NoError(t, db.Close())
		log := files(t, dir, "*.log")
		b, err := os.ReadFile(log[len(log)-1])
		require.NoError(t, err)
		require.Greater(t, len(b), 3*32<<10, "a log of several blocks")
		b[40<<10] ^= 0xff // in the second block, with synced blocks after it
		require.NoError(t, os.WriteFile(log[len(log)-1], b, 0o644))
		_, err = pebble.Open(dir, quietOpts(nil))
		require.True(t, pebbleSays(err, textReplayingWAL), "a damaged log: %v", err)
	})
	t.Run("empty flush", func(t *testing.T) {
		dir := t.TempDir()
		flushErrs := make(chan error, 4)
		db, err := pebble.Open(dir, quietOpts(&pebble.EventListener{FlushEnd: func(info pebble.FlushInfo) {
			if info.Err != nil {
				flushErrs <- info.Err
			}
		}}))
		require.NoError(t, err)
		defer db.Close()
		require.NoError(t, db.Set([]byte("k"), []byte("v"), nil))
		require.NoError(t, db.SingleDelete([]byte("k"), nil)) // the two meet in the flush: nothing to write
		require.NoError(t, db.Flush())
		select {
		case err := <-flushErrs:
			require.True(t, pebbleSays(err, textEmptyTable), "the flush of an emptied memtable: %v", err)
		default:
			t.Fatal("the flush of an emptied memtable reported no error: pebbleSays(textEmptyTable) is never asked")
		}
		require.False(t, pebbleSays(os.ErrNotExist, textEmptyTable))
	})
}

// quietLogger drops Pebble's messages.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}

// A batch whose write Pebble refused is not committed: Commit returns the error and the engine breaks, as
// after any failed commit, rather than commit the batch without the write.
func TestBatchWriteError(t *testing.T) {
	t.Parallel()
	st, e, err := open(t.TempDir(), []Option{WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))})
	require.NoError(t, err)
	defer st.Close()
	b := e.NewBatch()
	b.Set([]byte("kept"), []byte("v"))
	boom := errors.New("pebble: batch too large")
	b.(*batch).keep(boom) // as a write past Pebble's 4 GB batch limit returns
	_, err = e.Commit(b, true)
	require.ErrorIs(t, err, boom)
	select {
	case <-e.Failed():
	default:
		t.Fatal("the engine did not break")
	}
	require.ErrorIs(t, st.Err(), boom, "the store over it fails")
}

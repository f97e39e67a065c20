package durable_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/durable"
	"github.com/fifoq/fifoq/storage"
)

// Store.Health over Pebble: each acknowledged change of a caller alone is one sync; the files' size follows
// what was written; a full disk shows as the error that failed the store, and the syncs stop.
func TestHealth(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fs := newFaultFS(func(name string) bool { return strings.HasSuffix(name, ".log") })
	st := openStore(t, dir, durable.WithFS(fs))
	q := openQueue(t, st, fifoq.NewManualClock(t0), "q")

	h0 := st.Health()
	require.NoError(t, h0.Err, "a new store")
	require.Positive(t, h0.Syncs, "opening the queue synced its record")
	require.Positive(t, h0.DiskBytes)

	const n, size = 20, 64 << 10
	body := strings.Repeat("x", size)
	for range n {
		send(t, q, body)
	}
	h1 := st.Health()
	require.NoError(t, h1.Err)
	require.Equal(t, h0.Syncs+n, h1.Syncs, "one sync per send of a lone caller")
	// Not h0.DiskBytes+n*size: a new store's directory may still hold, at h0, an OPTIONS file that Pebble has
	// replaced and deletes on a goroutine of its own (2,782 bytes; seen on a loaded machine).
	require.GreaterOrEqual(t, h1.DiskBytes, int64(n*size), "the log holds the bodies")

	fs.mode.Store(diskFull)
	_, err := q.Send(context.Background(), fifoq.Message{Body: "lost"})
	require.ErrorIs(t, err, fifoq.ErrStoreFailed)
	h2 := st.Health()
	require.ErrorIs(t, h2.Err, fifoq.ErrStoreFailed, "Health after the disk filled")
	require.ErrorIs(t, h2.Err, syscall.ENOSPC)
	require.Contains(t, h2.Err.Error(), dir, "the error names the store")
	require.Equal(t, h1.Syncs, h2.Syncs, "no sync succeeded")

	require.ErrorIs(t, st.Close(), fifoq.ErrStoreFailed)
	h3 := st.Health()
	require.ErrorIs(t, h3.Err, syscall.ENOSPC, "Health after Close")
	require.Positive(t, h3.DiskBytes)
}

// A flush or a compaction that Pebble runs on its own goroutines and that fails (a full disk) fails the
// store at once, with no write of the store's to meet it: Health reports the error, Failed is closed (so a
// server's /health turns 503 and it stops, to be restarted), and every change after it fails. Before, a
// failed flush showed only in Health, and a failed compaction nowhere: Failed stayed open until a queue's
// write failed, which on an idle store might be never. The flush and the compaction are started by hand
// here, as Pebble starts them on its own, and the fault is a full disk at the table file they write.
func TestHealthBackgroundFailure(t *testing.T) {
	t.Parallel()
	isTable := func(name string) bool { return strings.HasSuffix(name, ".sst") }
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, dir string, fs *faultFS) (st *fifoq.Store, e storage.Engine, acked []string)
		start   func(e storage.Engine) <-chan error
	}{
		{
			name: "flush",
			prepare: func(t *testing.T, dir string, fs *faultFS) (*fifoq.Store, storage.Engine, []string) {
				st, e := openStoreEngine(t, dir, durable.WithFS(fs))
				q := openQueue(t, st, fifoq.NewManualClock(t0), "q")
				send(t, q, "a", "b", "c") // in the memtable and the log, not in a table file
				return st, e, []string{"a", "b", "c"}
			},
			start: func(e storage.Engine) <-chan error {
				durable.Flush(e)
				return nil
			},
		},
		{
			name: "compaction",
			prepare: func(t *testing.T, dir string, fs *faultFS) (*fifoq.Store, storage.Engine, []string) {
				// Table files whose keys overlap (sends, then receives and deletes of the same
				// messages), so that a compaction writes a new one; then the store opened again, with
				// an empty memtable, so that the compaction starts with no flush.
				st := openStore(t, dir, durable.WithFS(fs), durable.WithMemTableSize(64<<10))
				q := openQueue(t, st, fifoq.NewManualClock(t0), "q")
				var acked []string
				for i := range 200 {
					b := fmt.Sprintf("%03d-%s", i, strings.Repeat("x", 1000))
					send(t, q, b)
					acked = append(acked, b)
				}
				for range 100 {
					require.NoError(t, q.Delete(context.Background(), receive(t, q).ReceiptHandle))
				}
				require.NoError(t, st.Close())
				require.GreaterOrEqual(t, len(filesOf(t, dir, "*.sst")), 2, "table files")
				st, e := openStoreEngine(t, dir, durable.WithFS(fs), durable.WithMemTableSize(64<<10))
				return st, e, acked[100:]
			},
			start: func(e storage.Engine) <-chan error {
				done := make(chan error, 1)
				go func() { done <- durable.Compact(e) }()
				return done
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			fs := newFaultFS(isTable)
			st, e, acked := tc.prepare(t, dir, fs)
			require.NoError(t, st.Health().Err)

			fs.mode.Store(diskFull)
			began := time.Now()
			done := tc.start(e)
			select {
			case <-st.Failed():
				t.Logf("the store failed %v after the %s began", time.Since(began), tc.name)
			case <-time.After(time.Minute): // a bound on a failure, not a wait for success
				t.Fatalf("the store did not fail within a minute of a failed %s; its Health: %+v", tc.name, st.Health())
			}
			h := st.Health()
			require.ErrorIs(t, h.Err, fifoq.ErrStoreFailed, "Health")
			require.ErrorIs(t, h.Err, syscall.ENOSPC, "Health")
			require.Contains(t, h.Err.Error(), dir, "the error names the store")
			require.ErrorIs(t, st.Err(), syscall.ENOSPC, "Err")
			_, err := fifoq.New("new", fifoq.WithStore(st))
			require.ErrorIs(t, err, fifoq.ErrStoreFailed, "a change after the failure")
			if done != nil {
				require.ErrorIs(t, <-done, syscall.ENOSPC, "the %s's own error", tc.name)
			}
			require.ErrorIs(t, st.Close(), syscall.ENOSPC, "Close")

			fs.mode.Store(healthy)
			got, stage, err := reopen(t, dir)
			require.NoError(t, err, stage)
			require.Equal(t, acked, got, "after reopening")
		})
	}
}

package durable_test

import (
	"context"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/durable"
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
	require.GreaterOrEqual(t, h1.DiskBytes, h0.DiskBytes+n*size, "the log holds the bodies")

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

package durable_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/durable"
)

// TestSyncEvery: with WithSyncEvery, acknowledged sends do not sync the log; a tick of the interval syncs
// it once, and Close syncs what came after; what was sent is there when the directory is opened again.
// By default every send syncs it.
func TestSyncEvery(t *testing.T) {
	ctx := context.Background()
	send := func(t *testing.T, q *fifoq.Queue, from, n int) {
		t.Helper()
		for i := from; i < from+n; i++ {
			_, err := q.Send(ctx, fifoq.Message{Body: "m", GroupID: "g", DeduplicationID: string(rune('a' + i))})
			require.NoError(t, err)
		}
	}
	t.Run("every", func(t *testing.T) {
		dir := t.TempDir()
		var syncs atomic.Int64
		ticks := make(chan time.Time)
		st, err := durable.Open(dir, durable.WithSyncEvery(time.Hour), durable.WithSyncTicks(ticks),
			durable.WithSyncCount(&syncs), durable.WithLogger(quiet))
		require.NoError(t, err)
		q, err := fifoq.New("q.fifo", fifoq.WithStore(st))
		require.NoError(t, err)
		n0 := syncs.Load()
		send(t, q, 0, 5)
		require.Equal(t, n0, syncs.Load(), "syncs of the log during 5 acknowledged sends")

		ticks <- time.Now() // run takes it, and syncs before it takes the next send
		send(t, q, 5, 1)
		require.Equal(t, n0+1, syncs.Load(), "syncs once the interval passed")
		ticks <- time.Now()
		ticks <- time.Now() // nothing written since the last sync: no sync
		send(t, q, 6, 1)
		require.Equal(t, n0+2, syncs.Load(), "syncs after three ticks, one of them after nothing was written")

		require.NoError(t, st.Close())
		require.Greater(t, syncs.Load(), n0+2, "Close syncs what the last tick did not")
		st, err = durable.Open(dir, durable.WithLogger(quiet))
		require.NoError(t, err)
		defer st.Close()
		q, err = fifoq.New("q.fifo", fifoq.WithStore(st))
		require.NoError(t, err)
		require.Equal(t, 7, q.Stats().Visible)
	})
	t.Run("default", func(t *testing.T) {
		var syncs atomic.Int64
		st, err := durable.Open(t.TempDir(), durable.WithSyncCount(&syncs), durable.WithLogger(quiet))
		require.NoError(t, err)
		defer st.Close()
		q, err := fifoq.New("q.fifo", fifoq.WithStore(st))
		require.NoError(t, err)
		n0 := syncs.Load()
		send(t, q, 0, 5)
		require.Equal(t, n0+5, syncs.Load(), "syncs of the log during 5 sends, one at a time")
	})
}

// TestSyncEveryNotPositive: an interval that is not positive is refused with ErrSyncInterval, and nothing
// is made.
func TestSyncEveryNotPositive(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second} {
		dir := filepath.Join(t.TempDir(), "store")
		_, err := durable.Open(dir, durable.WithSyncEvery(d))
		require.ErrorIs(t, err, durable.ErrSyncInterval, "WithSyncEvery(%v)", d)
		_, serr := os.Stat(dir)
		require.True(t, errors.Is(serr, os.ErrNotExist), "the directory of a refused Open: %v", serr)
	}
}

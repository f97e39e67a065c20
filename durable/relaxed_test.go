package durable_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
		ticks := durable.NewSyncTicks()
		st, err := durable.Open(dir, durable.WithSyncEvery(time.Hour), durable.WithSyncTicks(ticks),
			durable.WithSyncCount(&syncs), durable.WithLogger(quiet))
		require.NoError(t, err)
		q, err := fifoq.New("q.fifo", fifoq.WithStore(st))
		require.NoError(t, err)
		n0 := syncs.Load()
		send(t, q, 0, 1)
		require.Equal(t, n0+1, syncs.Load(), "the first send syncs the record of the queue's first block of sequence numbers")
		n0++
		send(t, q, 1, 4)
		require.Equal(t, n0, syncs.Load(), "syncs of the log during 4 more acknowledged sends")

		ticks.Tick()
		send(t, q, 5, 1)
		require.Equal(t, n0+1, syncs.Load(), "syncs once the interval passed")
		ticks.Tick()
		ticks.Tick() // nothing written since the last sync: no sync
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

// TestSyncEveryMarkCatchesUp: with WithSyncEvery, a write of the sync mark that fails after a real sync of
// the log leaves the mark behind it (the store goes on: the changes are durable), and the next tick
// writes it again, though nothing was written since: the mark records the log's synced offset once more,
// which Open needs after a power loss to tell the synced part of the log from its torn end. Before, the
// mark stayed behind until a change was written and synced again, which on an idle store might be never.
func TestSyncEveryMarkCatchesUp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fs := newFaultFS(func(name string) bool { return filepath.Base(name) == "fifoq-synced" })
	fs.faulted = make(chan struct{}, 1)
	ticks := durable.NewSyncTicks()
	logs := &logHandler{}
	st, err := durable.Open(dir, durable.WithFS(fs), durable.WithSyncEvery(time.Hour), durable.WithSyncTicks(ticks),
		durable.WithLogger(slog.New(logs)))
	require.NoError(t, err)
	q := openQueue(t, st, fifoq.NewManualClock(t0), "q")
	tick := ticks.Tick

	send(t, q, "a")
	tick()
	log1, off1, _ := markOffset(t, dir)
	live := lastOf(t, dir, "*.log")
	info, err := os.Stat(live)
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("%06d.log", log1), filepath.Base(live), "the mark names the live log")
	require.Equal(t, uint64(info.Size()), off1, "the mark records how far the sync covered the log")

	send(t, q, "b")
	fs.mode.Store(diskFull) // the mark's write fails, once
	ticks.Tick()
	<-fs.faulted // after the log's sync
	fs.mode.Store(healthy)
	require.NoError(t, st.Err(), "a failed write of the mark fails no store: the log's sync succeeded")
	log2, off2, _ := markOffset(t, dir)
	require.Equal(t, off1, off2, "the mark lags after its write failed")
	require.Equal(t, log1, log2)

	tick() // nothing written since the last sync
	info, err = os.Stat(live)
	require.NoError(t, err)
	log3, off3, relaxed := markOffset(t, dir)
	require.True(t, relaxed)
	require.Equal(t, log1, log3)
	require.Greater(t, off3, off1, "the mark caught up with the sync")
	require.Equal(t, uint64(info.Size()), off3, "the mark records how far the last sync covered the log")
	require.Empty(t, logs.logged(), "nothing logged at Error")

	require.NoError(t, st.Close())
	got, stage, err := reopen(t, dir)
	require.NoError(t, err, stage)
	require.Equal(t, []string{"a", "b"}, got)
}

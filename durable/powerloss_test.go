package durable_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/durable"
)

// markOffset returns what the sync mark of the store in dir records (syncmark.go: two slots of 40 bytes,
// generation, sequence number, log number, synced offset, flags, CRC-32C; the newer slot that checks out
// counts): the log's number, the offset up to which the last real sync covered it, and whether the store
// was in relaxed mode.
func markOffset(t *testing.T, dir string) (log, offset uint64, relaxed bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "fifoq-synced"))
	require.NoError(t, err)
	var gen uint64
	for i := 0; i+40 <= len(b) && i < 80; i += 40 {
		s := b[i : i+40]
		if crc32.Checksum(s[:36], crc32.MakeTable(crc32.Castagnoli)) != binary.LittleEndian.Uint32(s[36:]) {
			continue
		}
		if g := binary.LittleEndian.Uint64(s); g > gen {
			gen, log, offset = g, binary.LittleEndian.Uint64(s[16:]), binary.LittleEndian.Uint64(s[24:])
			relaxed = binary.LittleEndian.Uint32(s[32:])&1 != 0
		}
	}
	require.NotZero(t, gen, "no slot of %s checks out", filepath.Join(dir, "fifoq-synced"))
	return log, offset, relaxed
}

// TestPowerLossRelaxed: a store opened WithSyncEvery, after a power loss that wrote back a later part of
// the log's unsynced end and not an earlier one. Each acknowledged send's chunks record a sync (the one
// the relaxed mode let return without syncing) beyond the hole, which Pebble takes for damage; the sync
// mark records how far the last real sync went, so Open cuts the log at the hole, keeps a copy of it, says
// so in a warning, and opens the store with everything the real sync covered. Damage before that offset
// is still refused, naming the log.
func TestPowerLossRelaxed(t *testing.T) {
	t.Parallel()
	// crashed makes a relaxed store, sends a (then the interval passes: a real sync) and b (no sync), and
	// returns what a power loss would leave if every write reached the disk: a copy of its files made while
	// it is open, its log's path in the copy, and the offset the mark says the real sync covered.
	crashed := func(t *testing.T) (image, log string, synced int64, a, b []string) {
		dir := t.TempDir()
		ticks := make(chan time.Time)
		st := openStore(t, dir, durable.WithSyncEvery(time.Hour), durable.WithSyncTicks(ticks))
		q := openQueue(t, st, fifoq.NewManualClock(t0), "q")
		for i := range 10 {
			a = append(a, fmt.Sprintf("a%02d-%s", i, strings.Repeat("a", 1000)))
		}
		send(t, q, a...)
		ticks <- time.Now() // taken by the engine's loop, which syncs before it takes the next send
		for i := range 40 {
			b = append(b, fmt.Sprintf("b%02d-%s", i, strings.Repeat("b", 4000)))
		}
		send(t, q, b...)
		image = copyDir(t, dir)
		require.NoError(t, st.Close())

		num, off, relaxed := markOffset(t, image)
		require.True(t, relaxed, "the mark of a store opened WithSyncEvery says so")
		log = lastOf(t, image, "*.log")
		require.Equal(t, fmt.Sprintf("%06d.log", num), filepath.Base(log), "the mark names the live log")
		info, err := os.Stat(log)
		require.NoError(t, err)
		require.Greater(t, off, uint64(10*1000), "the real sync covered the sends of a")
		require.Greater(t, info.Size(), int64(off)+3*32<<10, "the sends of b, unsynced, fill blocks of the log after it")
		return image, log, int64(off), a, b
	}
	open := func(t *testing.T, dir string) (got []string, logged string, err error) {
		var buf bytes.Buffer
		st, err := durable.Open(dir, durable.WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
		if err != nil {
			return nil, buf.String(), err
		}
		defer func() { require.NoError(t, st.Close()) }()
		q, err := fifoq.New("q", fifoq.WithStore(st), fifoq.WithClock(fifoq.NewManualClock(t0)))
		require.NoError(t, err)
		return bodies(q), buf.String(), nil
	}
	// zero zeroes the bytes [from, to) of the file path: pages that the power loss kept from the disk.
	zero := func(t *testing.T, path string, from, to int64) {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		clear(b[from:to])
		require.NoError(t, os.WriteFile(path, b, 0o644))
	}

	t.Run("unsynced end torn", func(t *testing.T) {
		t.Parallel()
		image, log, synced, a, _ := crashed(t)
		orig, err := os.ReadFile(log)
		require.NoError(t, err)
		// The rest of the block of the synced offset did not reach the disk; the next blocks did.
		end := (synced/(32<<10) + 1) * (32 << 10)
		zero(t, log, synced, end)
		got, logged, err := open(t, image)
		require.NoError(t, err)
		require.Equal(t, a, got[:min(len(a), len(got))], "every send the real sync covered")
		require.Len(t, got, len(a), "the sends of b after the hole are dropped, as the log is cut there")
		require.Contains(t, logged, "level=WARN")
		require.Contains(t, logged, "file="+log)
		require.Contains(t, logged, fmt.Sprintf("offset=%d", synced))
		require.Contains(t, logged, fmt.Sprintf("dropped_bytes=%d", len(orig)-int(synced)))
		kept, err := os.ReadFile(filepath.Join(image, "fifoq-cut-logs", filepath.Base(log)))
		require.NoError(t, err, "the log as it was is kept")
		want := bytes.Clone(orig)
		clear(want[synced:end])
		require.Equal(t, want, kept, "the copy is the log as Open found it")

		got, _, err = open(t, image)
		require.NoError(t, err, "opened again")
		require.Equal(t, a, got)
	})

	t.Run("unsynced end torn later", func(t *testing.T) {
		t.Parallel()
		image, log, synced, a, b := crashed(t)
		// A page of the block after the synced offset's did not reach the disk; those before and after did.
		from := (synced/(32<<10) + 1) * (32 << 10)
		zero(t, log, from+8<<10, from+12<<10)
		got, logged, err := open(t, image)
		require.NoError(t, err)
		require.Greater(t, len(got), len(a), "the sends of b before the hole")
		require.Less(t, len(got), len(a)+len(b), "the sends of b from the hole on are dropped")
		require.Equal(t, append(append([]string(nil), a...), b[:len(got)-len(a)]...), got, "in order, with no gap")
		require.Contains(t, logged, "level=WARN")
	})

	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, log string, synced int64)
	}{
		// In the last send of a, which the real sync covered.
		{"byte flipped", func(t *testing.T, log string, synced int64) { flip(t, log, synced-100) }},
		{"cut short", func(t *testing.T, log string, synced int64) { cut(t, log, synced-100) }},
		{"zeroed", func(t *testing.T, log string, synced int64) { zero(t, log, synced-100, synced+100) }},
	} {
		t.Run("synced part damaged: "+tc.name, func(t *testing.T) {
			t.Parallel()
			image, log, synced, _, _ := crashed(t)
			tc.damage(t, log, synced)
			got, _, err := open(t, image)
			require.ErrorIs(t, err, fifoq.ErrStoreCorrupt, "opened with %d messages", len(got))
			require.ErrorContains(t, err, log)
			require.ErrorContains(t, err, fmt.Sprintf("synced up to offset %d", synced))
			require.NoDirExists(t, filepath.Join(image, "fifoq-cut-logs"), "nothing cut")
		})
	}
}

package durable_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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
		ticks := durable.NewSyncTicks()
		st := openStore(t, dir, durable.WithSyncEvery(time.Hour), durable.WithSyncTicks(ticks))
		q := openQueue(t, st, fifoq.NewManualClock(t0), "q")
		for i := range 10 {
			a = append(a, fmt.Sprintf("a%02d-%s", i, strings.Repeat("a", 1000)))
		}
		send(t, q, a...)
		ticks.Tick() // a real sync, done before the next send
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

// setMarkOffset rewrites the newer slot of the sync mark of the store in dir to record offset as how far its
// log was synced (the layout markOffset reads).
func setMarkOffset(t *testing.T, dir string, offset uint64) {
	t.Helper()
	path := filepath.Join(dir, "fifoq-synced")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	table := crc32.MakeTable(crc32.Castagnoli)
	newest, gen := -1, uint64(0)
	for i := 0; i+40 <= len(b) && i < 80; i += 40 {
		if s := b[i : i+40]; crc32.Checksum(s[:36], table) == binary.LittleEndian.Uint32(s[36:]) && binary.LittleEndian.Uint64(s) > gen {
			newest, gen = i, binary.LittleEndian.Uint64(s)
		}
	}
	require.GreaterOrEqual(t, newest, 0, "no slot of %s checks out", path)
	s := b[newest : newest+40]
	binary.LittleEndian.PutUint64(s[24:], offset)
	binary.LittleEndian.PutUint32(s[36:], crc32.Checksum(s[:36], table))
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// TestPowerLossRelaxedClosedLog: Pebble ends a log it rotates away from with an end mark (a chunk header of
// the next log's number) before it closes the file, and a relaxed store's sync every interval may come in
// between: the sync mark then records an offset that covers the end mark, and a power loss before the next
// log holds anything synced leaves the closed log the last one. Open must take it for the closed log it
// is, not for damage before the synced offset (the power-loss test met it: "the record at offset 49180 is
// damaged, and the log had been synced up to offset 49191"). A mark past the end mark's end is still
// refused.
func TestPowerLossRelaxedClosedLog(t *testing.T) {
	t.Parallel()
	closed := func(t *testing.T) (dir, log string, end uint64, a []string) {
		dir = t.TempDir()
		ticks := durable.NewSyncTicks()
		st := openStore(t, dir, durable.WithSyncEvery(time.Hour), durable.WithSyncTicks(ticks))
		q := openQueue(t, st, fifoq.NewManualClock(t0), "q")
		for i := range 10 {
			a = append(a, fmt.Sprintf("a%02d-%s", i, strings.Repeat("a", 1000)))
		}
		send(t, q, a...)
		require.NoError(t, st.Close()) // syncs the log, then Pebble closes it with its end mark
		log = lastOf(t, dir, "*.log")
		num, off, relaxed := markOffset(t, dir)
		require.True(t, relaxed)
		require.Equal(t, fmt.Sprintf("%06d.log", num), filepath.Base(log), "the mark names the last log")
		info, err := os.Stat(log)
		require.NoError(t, err)
		require.Equal(t, int64(off)+11, info.Size(), "the log is the synced records and the end mark (11 bytes), written after the last sync")
		return dir, log, uint64(info.Size()), a
	}

	t.Run("mark covers the end mark", func(t *testing.T) {
		t.Parallel()
		dir, _, end, a := closed(t)
		setMarkOffset(t, dir, end) // what a sync between the end mark's write and the file's close records
		var buf bytes.Buffer
		st, err := durable.Open(dir, durable.WithSyncEvery(time.Hour), durable.WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
		require.NoError(t, err)
		q := openQueue(t, st, fifoq.NewManualClock(t0), "q")
		require.Equal(t, a, bodies(q))
		require.NoError(t, st.Close())
		require.NotContains(t, buf.String(), "level=WARN", "nothing cut")
		require.NoDirExists(t, filepath.Join(dir, "fifoq-cut-logs"))
	})

	t.Run("mark past the end mark", func(t *testing.T) {
		t.Parallel()
		dir, log, end, _ := closed(t)
		setMarkOffset(t, dir, end+1)
		_, err := durable.Open(dir, durable.WithLogger(quiet))
		require.ErrorIs(t, err, fifoq.ErrStoreCorrupt)
		require.ErrorContains(t, err, log)
		require.ErrorContains(t, err, fmt.Sprintf("synced up to offset %d", end+1))
	})
}

// rotatedChildDir is the environment variable that makes TestRelaxedRotatedChild the child of
// TestPowerLossRelaxedRotated, writing the store in the directory it names.
const rotatedChildDir = "FIFOQ_DURABLE_ROTATED_CHILD_DIR"

// rotatedSends are the bodies that TestRelaxedRotatedChild sends: 10 of 1 KB (a), then the interval
// passes (a real sync), then n of 4 KB (b).
func rotatedSends(n int) (a, b []string) {
	for i := range 10 {
		a = append(a, fmt.Sprintf("a%02d-%s", i, strings.Repeat("a", 1000)))
	}
	for i := range n {
		b = append(b, fmt.Sprintf("b%03d-%s", i, strings.Repeat("b", 4000)))
	}
	return a, b
}

// TestRelaxedRotatedChild is the child of TestPowerLossRelaxedRotated; run otherwise, it does nothing. It
// opens a relaxed store with a small memtable, sends a, lets the interval pass (a real sync), and sends b
// until the log rotated three times after that sync and the live log holds three sends at least; then it
// prints how many it sent of b, every one acknowledged, and waits to be killed.
func TestRelaxedRotatedChild(t *testing.T) {
	dir := os.Getenv(rotatedChildDir)
	if dir == "" {
		return
	}
	ticks := durable.NewSyncTicks()
	st := openStore(t, dir, durable.WithSyncEvery(time.Hour), durable.WithSyncTicks(ticks), durable.WithMemTableSize(64<<10))
	q := openQueue(t, st, fifoq.NewManualClock(t0), "q")
	a, b := rotatedSends(1000)
	send(t, q, a...)
	ticks.Tick() // a real sync, done before the next send
	rotations, since, live := 0, 0, lastOf(t, dir, "*.log")
	n := 0
	for ; rotations < 3 || since < 3; n++ {
		require.Less(t, n, len(b), "the log did not rotate")
		send(t, q, b[n])
		since++
		if l := lastOf(t, dir, "*.log"); l != live {
			rotations, since, live = rotations+1, 0, l
		}
	}
	fmt.Printf("sent %d\n", n)
	_, err := io.Copy(io.Discard, os.Stdin) // until the parent kills it
	require.NoError(t, err)
}

// TestPowerLossRelaxedRotated: a store opened WithSyncEvery whose write-ahead log rotated after its last
// real sync (the memtable filled up), so that the sync mark names a log older than the live one, and
// records nothing synced of the live one. The process is killed (SIGKILL), which leaves the store as a
// crash of the machine would if every write had reached the disk; then the live log is torn, or lost, as a
// power loss may leave it. Pebble syncs a log as it closes it (relaxedFS), so every log before the live
// one is whole; Open keeps them, and cuts the live one at its first damaged chunk when a later chunk
// claims a sync beyond it: nothing acknowledged before the last real sync is lost, and what survives of
// the rest is in order, with no gap.
func TestPowerLossRelaxedRotated(t *testing.T) {
	t.Parallel()
	dir, a, b := rotatedCrash(t)
	// crashed returns a copy of the store that the killed child left, and what it sent.
	crashed := func(t *testing.T) (image string, _, _ []string) { return copyDir(t, dir), a, b }
	// open opens the store in dir and returns its queue's bodies and what it logged.
	open := func(t *testing.T, dir string) (got []string, logged string) {
		var buf bytes.Buffer
		st, err := durable.Open(dir, durable.WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
		require.NoError(t, err, "Open; it logged: %s", &buf)
		defer func() { require.NoError(t, st.Close()) }()
		q, err := fifoq.New("q", fifoq.WithStore(st), fifoq.WithClock(fifoq.NewManualClock(t0)))
		require.NoError(t, err)
		return bodies(q), buf.String()
	}
	// prefix checks that got is a, then the first sends of b, in order, with no gap, and returns how many
	// of b it holds.
	prefix := func(t *testing.T, got, a, b []string) int {
		require.GreaterOrEqual(t, len(got), len(a), "every send before the last real sync")
		require.Equal(t, a, got[:len(a)], "every send before the last real sync")
		n := len(got) - len(a)
		require.LessOrEqual(t, n, len(b))
		require.Equal(t, b[:n], got[len(a):], "the sends after the last real sync, in order, with no gap")
		return n
	}

	t.Run("crash of the process", func(t *testing.T) {
		t.Parallel()
		image, a, b := crashed(t)
		got, logged := open(t, image)
		require.Equal(t, append(append([]string(nil), a...), b...), got, "everything written to the operating system")
		require.NotContains(t, logged, "level=WARN")
		require.NoDirExists(t, filepath.Join(image, "fifoq-cut-logs"), "nothing cut")
	})

	t.Run("live log torn", func(t *testing.T) {
		t.Parallel()
		image, a, b := crashed(t)
		live := lastOf(t, image, "*.log")
		orig, err := os.ReadFile(live)
		require.NoError(t, err)
		require.Greater(t, len(orig), 12<<10, "the live log holds sends of b")
		// A page in the middle of the live log did not reach the disk; what follows it did, its chunks
		// claiming syncs beyond the hole (which the relaxed mode let return at once).
		torn := bytes.Clone(orig)
		// The page of the live log's first send did not reach the disk; those of the next sends did,
		// their chunks claiming syncs beyond it (which the relaxed mode let return at once). (The live
		// log may be a recycled one, whose end holds an older log's chunks: Pebble stops at those.)
		clear(torn[100:200])
		require.NoError(t, os.WriteFile(live, torn, 0o644))
		got, logged := open(t, image)
		n := prefix(t, got, a, b)
		t.Logf("kept %d of the %d sends of b", n, len(b))
		require.LessOrEqual(t, n, len(b)-3, "the sends of b in the live log are dropped")
		require.Contains(t, logged, "level=WARN")
		require.Contains(t, logged, "file="+live)
		require.Contains(t, logged, "offset=0 synced=0", "cut at its first chunk: the last real sync covered none of it")
		kept, err := os.ReadFile(filepath.Join(image, "fifoq-cut-logs", filepath.Base(live)))
		require.NoError(t, err, "the log as it was is kept")
		require.Equal(t, torn, kept)

		again, _ := open(t, image)
		require.Equal(t, got, again, "opened again")
	})

	t.Run("live log lost", func(t *testing.T) {
		t.Parallel()
		image, a, b := crashed(t)
		live := lastOf(t, image, "*.log")
		info, err := os.Stat(live)
		require.NoError(t, err)
		// None of the live log's pages reached the disk, only its size.
		require.NoError(t, os.WriteFile(live, make([]byte, info.Size()), 0o644))
		got, _ := open(t, image)
		n := prefix(t, got, a, b)
		t.Logf("kept %d of the %d sends of b", n, len(b))
		require.LessOrEqual(t, n, len(b)-3, "the sends of b in the live log are lost")
		require.Positive(t, n, "the sends of b in the logs before the live one, which Pebble synced as it closed them")
		require.NoDirExists(t, filepath.Join(image, "fifoq-cut-logs"), "nothing to cut: Pebble stops at the zeroes")
	})
}

// rotatedCrash runs TestRelaxedRotatedChild on a new directory, kills it with SIGKILL once it has sent, and
// returns the directory and what it sent. The store's sync mark names a log older than the live one.
func rotatedCrash(t *testing.T) (dir string, a, b []string) {
	t.Helper()
	dir = t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRelaxedRotatedChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), rotatedChildDir+"="+dir)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	var n int
	if err == nil {
		_, err = fmt.Sscanf(line, "sent %d\n", &n)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	werr := cmd.Wait()
	require.NoError(t, err, "the child's first line %q; its stderr: %s", line, &stderr)
	var exit *exec.ExitError
	require.ErrorAs(t, werr, &exit, "the child's stderr: %s", &stderr)
	ws, ok := exit.Sys().(syscall.WaitStatus)
	require.True(t, ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL, "the child ended with %v, not by SIGKILL; its stderr: %s", werr, &stderr)

	num, _, relaxed := markOffset(t, dir)
	require.True(t, relaxed)
	live := lastOf(t, dir, "*.log")
	require.Greater(t, filepath.Base(live), fmt.Sprintf("%06d.log", num), "the log rotated after the mark's log was synced")
	a, b = rotatedSends(n)
	return dir, a, b
}

// TestCutLogsBounded: each Open that cuts a torn log keeps a copy of it in fifoq-cut-logs, and the
// directory holds the last 8 copies: an older one is removed when a new one is made (it grew without
// bound before), and a cut that a crash cut short leaves nothing there. Ten times over, a relaxed store is
// left as a power loss leaves it, its log torn after its last real sync, and opened.
func TestCutLogsBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cuts := filepath.Join(dir, "fifoq-cut-logs")
	var made []string // the logs cut, in order
	for round := range 10 {
		ticks := durable.NewSyncTicks()
		st := openStore(t, dir, durable.WithSyncEvery(time.Hour), durable.WithSyncTicks(ticks))
		q := openQueue(t, st, fifoq.NewManualClock(t0), "q")
		send(t, q, fmt.Sprintf("a%02d-%s", round, strings.Repeat("a", 1000)))
		ticks.Tick() // a real sync, done before the next send
		for i := range 40 {
			send(t, q, fmt.Sprintf("b%02d-%02d-%s", round, i, strings.Repeat("b", 4000)))
		}
		image := copyDir(t, dir) // what a power loss leaves, if every write reached the disk
		require.NoError(t, st.Close())

		// The store in dir becomes the image, with the rest of the block after its last real sync lost.
		ents, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range ents {
			if e.Type().IsRegular() {
				require.NoError(t, os.Remove(filepath.Join(dir, e.Name())))
			}
		}
		ents, err = os.ReadDir(image)
		require.NoError(t, err)
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join(image, e.Name()))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644))
		}
		_, synced, _ := markOffset(t, dir)
		live := lastOf(t, dir, "*.log")
		b, err := os.ReadFile(live)
		require.NoError(t, err)
		end := (int(synced)/(32<<10) + 1) * (32 << 10)
		require.Greater(t, len(b), end, "round %d: the unsynced sends fill blocks after the synced offset's", round)
		clear(b[synced:end])
		require.NoError(t, os.WriteFile(live, b, 0o644))

		if round == 9 { // what a cut that a crash cut short left
			require.NoError(t, os.WriteFile(filepath.Join(cuts, "000001.log.cut"), []byte("x"), 0o644))
		}
		var logged bytes.Buffer
		st, err = durable.Open(dir, durable.WithLogger(slog.New(slog.NewTextHandler(&logged, nil))))
		require.NoError(t, err, "round %d", round)
		require.Contains(t, logged.String(), "file="+live, "round %d: the log is cut", round)
		require.NoError(t, st.Close())
		made = append(made, filepath.Base(live))

		ents, err = os.ReadDir(cuts)
		require.NoError(t, err)
		var kept []string
		for _, e := range ents {
			kept = append(kept, e.Name())
		}
		require.Equal(t, made[max(0, len(made)-8):], kept, "round %d: the copies in %s", round, cuts)
	}
}

package durable_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/durable"
)

// Damaged stores: each is refused with fifoq.ErrStoreCorrupt and an error that names the damaged file (or
// record), by durable.Open or, for damage that Pebble meets only when it reads the block, by fifoq.New,
// whose recovery reads every record of the queue. Never a panic, never a queue opened without the
// messages it held.

// filesOf returns the paths of the files in dir that match pattern, ordered by name (Pebble's file numbers
// have six digits or more, so name order is number order).
func filesOf(t *testing.T, dir, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, pattern))
	require.NoError(t, err)
	slices.Sort(m)
	return m
}

// lastOf returns the last file in dir that matches pattern.
func lastOf(t *testing.T, dir, pattern string) string {
	t.Helper()
	m := filesOf(t, dir, pattern)
	require.NotEmpty(t, m, "no %s in %s", pattern, dir)
	return m[len(m)-1]
}

// flip flips a bit of the byte at offset off of the file path; off < 0 counts from its end.
func flip(t *testing.T, path string, off int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	if off < 0 {
		off += int64(len(b))
	}
	require.Less(t, off, int64(len(b)), "flip past the end of %s", path)
	b[off] ^= 0x10
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// cut truncates the file path to n bytes.
func cut(t *testing.T, path string, n int64) {
	t.Helper()
	require.NoError(t, os.Truncate(path, n))
}

// copyDir copies the files of the store in dir, but its lock, to a new directory: what a crash at this
// moment would leave on disk, as every write the store acknowledged is synced.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	to := t.TempDir()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		if e.Name() == "LOCK" || !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(to, e.Name()), b, 0o644))
	}
	return to
}

// reopen opens the store in dir and its queue "q", returning the queue's bodies, or what failed ("Open" or
// "New") and its error.
func reopen(t *testing.T, dir string) (got []string, stage string, err error) {
	t.Helper()
	st, err := durable.Open(dir, durable.WithLogger(quiet))
	if err != nil {
		return nil, "Open", err
	}
	defer func() { require.NoError(t, st.Close()) }()
	q, err := fifoq.New("q", fifoq.WithStore(st), fifoq.WithClock(fifoq.NewManualClock(t0)))
	if err != nil {
		return nil, "New", err
	}
	return bodies(q), "", nil
}

// fillTables makes a store in dir whose queue "q" holds 200 messages of 1 KB, most of them in table files
// (its memtables are 64 KiB), and closes it.
func fillTables(t *testing.T, dir string) []string {
	t.Helper()
	st := openStore(t, dir, durable.WithMemTableSize(64<<10))
	q := openQueue(t, st, fifoq.NewManualClock(t0), "q")
	var sent []string
	for i := range 200 {
		b := fmt.Sprintf("%03d-%s", i, strings.Repeat("x", 1000))
		send(t, q, b)
		sent = append(sent, b)
	}
	require.NoError(t, st.Close())
	require.GreaterOrEqual(t, len(filesOf(t, dir, "*.sst")), 2, "table files")
	return sent
}

// The damaged files of a store with table files. Pebble checks at Open that the MANIFEST's tables are
// there with their sizes; it reads a table's blocks, and checks their checksums, only when a read needs
// them; and it takes a MANIFEST record that does not check out for the torn end of the file, which a crash
// leaves, and reads no further (durable checks that no record follows it: verify.go).
func TestCorruptFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		stage  string                                       // where it is refused: "Open", "New", or "" for either
		damage func(t *testing.T, dir string) (file string) // returns what the error must name
	}{
		{"table: a byte of a data block flipped", "New", func(t *testing.T, dir string) string {
			// The last table holds messages only: Open reads none of it, the recovery scan reads it all.
			f := lastOf(t, dir, "*.sst")
			flip(t, f, 100)
			return f
		}},
		{"table: a byte of its footer flipped", "", func(t *testing.T, dir string) string {
			f := lastOf(t, dir, "*.sst")
			flip(t, f, -10)
			return f
		}},
		{"table: cut short", "Open", func(t *testing.T, dir string) string {
			f := filesOf(t, dir, "*.sst")[0]
			info, err := os.Stat(f)
			require.NoError(t, err)
			cut(t, f, info.Size()/2)
			return f
		}},
		{"table: missing", "Open", func(t *testing.T, dir string) string {
			f := filesOf(t, dir, "*.sst")[0]
			require.NoError(t, os.Remove(f))
			return f
		}},
		{"MANIFEST: a byte of its first record flipped", "Open", func(t *testing.T, dir string) string {
			f := lastOf(t, dir, "MANIFEST-*")
			flip(t, f, 10)
			return f
		}},
		{"MANIFEST: a byte of its last record but one flipped", "Open", func(t *testing.T, dir string) string {
			// Pebble would drop the last two records, and the tables they add, and open the store
			// without their messages.
			f := lastOf(t, dir, "MANIFEST-*")
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			var starts []int64 // of its records: each is one chunk, of a 7-byte header and a payload
			for off := int64(0); off < int64(len(b)); off += 7 + int64(binary.LittleEndian.Uint16(b[off+4:])) {
				starts = append(starts, off)
			}
			require.GreaterOrEqual(t, len(starts), 3, "MANIFEST records")
			flip(t, f, starts[len(starts)-2]+8)
			return f
		}},
		{"MANIFEST: missing", "Open", func(t *testing.T, dir string) string {
			f := lastOf(t, dir, "MANIFEST-*")
			require.NoError(t, os.Remove(f))
			return filepath.Base(f)
		}},
		{"MANIFEST: its marker missing", "Open", func(t *testing.T, dir string) string {
			require.NoError(t, os.Remove(lastOf(t, dir, "marker.manifest.*")))
			return "marker.manifest"
		}},
		{"MANIFEST: cut in its second record", "Open", func(t *testing.T, dir string) string {
			// Pebble takes this for a crash during a MANIFEST write, and opens the store as its first
			// record has it: made at the last Open, before any table. durable refuses a store that held
			// tables and opens without fifoq's first record. (Had the cut lost only later tables, nothing
			// would tell: see the package's tests' notes in the report.)
			f := lastOf(t, dir, "MANIFEST-*")
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			first := 7 + int64(binary.LittleEndian.Uint16(b[4:6]))
			require.Greater(t, int64(len(b)), first+10, "a MANIFEST of one record")
			cut(t, f, first+10)
			return f
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			fillTables(t, dir)
			named := tc.damage(t, dir)
			got, stage, err := reopen(t, dir)
			require.ErrorIs(t, err, fifoq.ErrStoreCorrupt, "opened with %d messages", len(got))
			require.ErrorContains(t, err, named)
			if tc.stage != "" {
				require.Equal(t, tc.stage, stage, "refused by: %v", err)
			}
			_, _, err2 := reopen(t, dir)
			require.ErrorIs(t, err2, fifoq.ErrStoreCorrupt, "refused again: nothing was repaired or deleted")
		})
	}
}

// fillLog makes a store in dir and sends n messages to its queue "q", returning the size of its last
// write-ahead log and the content of its sync mark (the file fifoq-synced) before the first send and after
// each (Pebble's memtable holds them all, so they are all in that log), and closes it.
func fillLog(t *testing.T, dir string, n int) (sent []string, sizes []int64, marks [][]byte) {
	t.Helper()
	st := openStore(t, dir)
	q := openQueue(t, st, fifoq.NewManualClock(t0), "q")
	log := lastOf(t, dir, "*.log")
	size := func() int64 {
		info, err := os.Stat(log)
		require.NoError(t, err)
		return info.Size()
	}
	mark := func() []byte {
		b, err := os.ReadFile(filepath.Join(dir, "fifoq-synced"))
		require.NoError(t, err)
		return b
	}
	sizes, marks = append(sizes, size()), append(marks, mark())
	for i := range n {
		b := fmt.Sprintf("%03d-%s", i, strings.Repeat("y", 200))
		send(t, q, b)
		sent = append(sent, b)
		sizes, marks = append(sizes, size()), append(marks, mark())
		require.Greater(t, sizes[i+1], sizes[i], "the log grows with each acknowledged send")
		require.NotEqual(t, marks[i], marks[i+1], "the mark moves with each acknowledged send")
	}
	require.Equal(t, log, lastOf(t, dir, "*.log"), "one log")
	require.NoError(t, st.Close())
	return sent, sizes, marks
}

// The last write-ahead log. Its torn end is what a crash leaves (the writes being made, which no caller
// was told were done): Pebble recovers up to it, and a cut there loses only what is after it, never an
// earlier acknowledged send. The store's sync mark (fifoq-synced, durable's syncmark.go) tells the two
// apart: it records how far the log was synced, after each sync, so a crash leaves a mark no further than
// the log, and a log that lost acknowledged sends (cut short, zero-filled, replaced, deleted, a byte flipped
// in one of its last records) is refused, naming the log.
//
// A damaged record with an intact one after it, written after a sync that covered it, is damage too, even
// with a mark that lags (after a power loss): refused, naming the log. (Pebble, reading on from damage,
// looks at the later 32 KiB blocks of the log only; durable checks the rest of the damaged one too:
// verify.go.)
func TestLastLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const n = 40
	sent, sizes, marks := fillLog(t, dir, n)
	log := filepath.Base(lastOf(t, dir, "*.log"))
	// image copies the store, with its mark as it was after k sends: what a crash leaves.
	image := func(t *testing.T, k int) string {
		image := copyDir(t, dir)
		require.NoError(t, os.WriteFile(filepath.Join(image, "fifoq-synced"), marks[k], 0o644))
		return image
	}

	for _, k := range []int{0, 1, 17, n - 1} {
		for _, at := range []struct {
			name string
			off  int64
		}{{"in", (sizes[k] + sizes[k+1]) / 2}, {"before", sizes[k]}} {
			t.Run(fmt.Sprintf("crash %s send %d", at.name, k), func(t *testing.T) {
				t.Parallel()
				image := image(t, k)
				cut(t, filepath.Join(image, log), at.off)
				got, stage, err := reopen(t, image)
				require.NoError(t, err, stage)
				require.Equal(t, sent[:k], got, "the sends before the cut, and only them")
				require.Empty(t, filesOf(t, image, "fifoq-*-logs*"), "no logs kept for a store that passed")
			})
			t.Run(fmt.Sprintf("acknowledged sends lost: cut %s send %d", at.name, k), func(t *testing.T) {
				t.Parallel()
				image := image(t, n)
				cut(t, filepath.Join(image, log), at.off)
				got, _, err := reopen(t, image)
				require.ErrorIs(t, err, fifoq.ErrStoreCorrupt, "opened with %d of %d messages", len(got), n)
				require.ErrorContains(t, err, filepath.Join(image, log)+" is damaged or cut short")
				// Pebble replaced the log as it opened the store; the log as it was is kept.
				kept := filepath.Join(image, "fifoq-refused-logs")
				require.ErrorContains(t, err, "the logs as they were are in "+kept)
				info, serr := os.Stat(filepath.Join(kept, log))
				require.NoError(t, serr)
				require.Equal(t, at.off, info.Size(), "the log kept is the one cut")
				_, _, err = reopen(t, image)
				require.ErrorIs(t, err, fifoq.ErrStoreCorrupt, "refused again")
				info, serr = os.Stat(filepath.Join(kept, log))
				require.NoError(t, serr)
				require.Equal(t, at.off, info.Size(), "the first refusal's logs are kept")
			})
		}
	}

	for _, tc := range []struct {
		name   string
		damage func(path string)
		want   string
	}{
		{"deleted", func(path string) { require.NoError(t, os.Remove(path)) }, " is missing"},
		{"zero-filled", func(path string) {
			require.NoError(t, os.WriteFile(path, make([]byte, sizes[n]), 0o644))
		}, " is damaged or cut short"},
		{"replaced by garbage", func(path string) {
			b := make([]byte, sizes[n])
			for i := range b {
				b[i] = byte(i*7919 + i/13)
			}
			require.NoError(t, os.WriteFile(path, b, 0o644))
		}, ""},
		{"emptied", func(path string) { cut(t, path, 0) }, " is damaged or cut short"},
		{"byte flipped in the last send", func(path string) { flip(t, path, (sizes[n-1]+sizes[n])/2) }, " is damaged or cut short"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			image := image(t, n)
			tc.damage(filepath.Join(image, log))
			got, _, err := reopen(t, image)
			require.ErrorIs(t, err, fifoq.ErrStoreCorrupt, "opened with %d of %d messages", len(got), n)
			require.ErrorContains(t, err, filepath.Join(image, log)+tc.want)
		})
	}

	for _, k := range []int{0, 17, n - 3} {
		t.Run(fmt.Sprintf("byte flipped in send %d, mark lagging", k), func(t *testing.T) {
			t.Parallel()
			image := image(t, k)
			flip(t, filepath.Join(image, log), (sizes[k]+sizes[k+1])/2)
			got, _, err := reopen(t, image)
			require.ErrorIs(t, err, fifoq.ErrStoreCorrupt, "opened with %d of %d messages", len(got), n)
			require.ErrorContains(t, err, filepath.Join(image, log))
		})
	}

	t.Run("mark torn", func(t *testing.T) {
		t.Parallel()
		image := image(t, n)
		// The newer slot torn: the older one counts, one sync behind: the store opens whole.
		b := slices.Clone(marks[n])
		older := slices.Clone(marks[n-1])
		const slot = 40 // syncmark.go's markSlotSize
		for i := 0; i+slot <= len(b); i += slot {
			if !bytes.Equal(b[i:i+slot], older[i:i+slot]) {
				b[i+5] ^= 0xff
			}
		}
		require.NoError(t, os.WriteFile(filepath.Join(image, "fifoq-synced"), b, 0o644))
		got, stage, err := reopen(t, image)
		require.NoError(t, err, stage)
		require.Equal(t, sent, got)
	})
}

// A write-ahead log that is not the last one was closed, with a mark at its end, before the next began,
// so Pebble reads it strictly: any damage in it is refused, and durable names the log.
//
// Two logs hold messages only while the first one's memtable is being flushed: the test holds the flush
// back (a table file's making waits) and copies the store's files meanwhile, as a crash would leave them.
func TestEarlierLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fs := newFaultFS(nil)
	fs.mode.Store(tablesWait)
	st := openStore(t, dir, durable.WithFS(fs), durable.WithMemTableSize(64<<10))
	q := openQueue(t, st, fifoq.NewManualClock(t0), "q")
	var sent []string
	for i := 0; ; i++ {
		require.Less(t, i, 1000, "no flush began")
		b := fmt.Sprintf("%03d-%s", i, strings.Repeat("z", 1000))
		send(t, q, b)
		sent = append(sent, b)
		select {
		case <-fs.waiting: // the memtable is full and waits to be flushed: later sends go to a new log
		default:
			continue
		}
		break
	}
	for i := range 5 {
		b := fmt.Sprintf("after-%d", i)
		send(t, q, b)
		sent = append(sent, b)
	}
	image := copyDir(t, dir)
	fs.mode.Store(healthy)
	close(fs.goOn)
	require.NoError(t, st.Close())

	logs := filesOf(t, image, "*.log")
	require.GreaterOrEqual(t, len(logs), 2, "two logs")
	earlier := logs[len(logs)-2]
	intact := copyDir(t, image)
	got, _, err := reopen(t, intact)
	require.NoError(t, err)
	require.Equal(t, sent, got, "the copy, undamaged, holds every acknowledged send")

	b, err := os.ReadFile(earlier)
	require.NoError(t, err)
	for _, off := range []int64{100, int64(len(b)) / 2, int64(len(b)) - 100} {
		t.Run(strconv.FormatInt(off, 10), func(t *testing.T) {
			damaged := copyDir(t, image)
			flip(t, filepath.Join(damaged, filepath.Base(earlier)), off)
			got, _, err := reopen(t, damaged)
			require.ErrorIs(t, err, fifoq.ErrStoreCorrupt, "opened with %d of %d messages", len(got), len(sent))
			require.ErrorContains(t, err, filepath.Join(damaged, filepath.Base(earlier)))
		})
	}
}

// A record that does not decode makes New fail with ErrStoreCorrupt naming the queue and the record, or,
// for the queue's own record, Open fail naming it: never a queue opened without it.
func TestCorruptRecord(t *testing.T) {
	t.Parallel()
	isMessage := func(part byte) func(k []byte) bool {
		return func(k []byte) bool { return len(k) == 15 && k[0] == 0x02 && k[5] == 'm' && k[14] == part }
	}
	for _, tc := range []struct {
		name  string
		lo    []byte
		key   func(k []byte) bool
		stage string
		want  []string
	}{
		{"message", []byte{0x02}, isMessage(0), "New", []string{"queue q", "message 1"}},
		{"receipt", []byte{0x02}, isMessage(1), "New", []string{"queue q", "receipt of message 1"}},
		{"queue", []byte{0x01}, func(k []byte) bool { return bytes.Equal(k, []byte("\x01q")) }, "Open", []string{`queue "q"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			st := openStore(t, dir)
			q := openQueue(t, st, fifoq.NewManualClock(t0), "q")
			send(t, q, "a", "b")
			receive(t, q) // a receipt record for message 1

			require.NoError(t, st.Close())
			eng, err := durable.OpenEngine(dir)
			require.NoError(t, err)
			var key []byte
			require.NoError(t, eng.Scan(tc.lo, []byte{tc.lo[0] + 1}, func(k, _ []byte) error {
				if key == nil && tc.key(k) {
					key = bytes.Clone(k)
				}
				return nil
			}))
			require.NotNil(t, key, "the record to damage")
			b := eng.NewBatch()
			b.Set(key, []byte{1, 0, 0xff, 0xff})
			ticket, err := eng.Commit(b, true)
			require.NoError(t, err)
			require.NoError(t, ticket.Wait())
			require.NoError(t, eng.Close())

			got, stage, err := reopen(t, dir)
			require.ErrorIs(t, err, fifoq.ErrStoreCorrupt, "opened with %v", got)
			require.Equal(t, tc.stage, stage, "refused by: %v", err)
			require.ErrorContains(t, err, dir)
			for _, w := range tc.want {
				require.ErrorContains(t, err, w)
			}
		})
	}
}

package durable

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/fifoq/fifoq"
)

// The sync mark: how far the store's changes were made durable, kept in a file of its own
// (syncMarkName), outside Pebble, so that a write-ahead log that is lost, cut short, zero-filled or
// replaced is told from the torn end that a crash leaves.
//
// Pebble numbers the records it writes (its sequence numbers), and its logs and tables keep those numbers
// across a flush, a compaction and a restart. After each successful sync of the log, the engine writes the
// number of the last record the sync covered to the mark, with one pwrite and no fsync: it reaches the
// page cache, which survives the process's end (kill -9), but not always a power loss. Open, once Pebble
// has recovered the store, compares the number of the last record it recovered with the mark: fewer is
// acknowledged changes lost, which Open refuses with fifoq.ErrStoreCorrupt, naming the log that held them.
//
// A store opened WithSyncEvery syncs the mark too, after each real sync (once per interval), and records
// in it how far that sync covered the live log, so that Open can cut the log's torn unsynced end after a
// power loss rather than refuse the store (relaxed.go; verify.go, cutTorn).
//
// The mark is written only after the sync returned, so it is never ahead of what the disk holds: after a
// power loss it may be older than the last sync (its page was not written back), which weakens the check,
// never makes it refuse a sound store. A torn write of it cannot be taken for damage either: it has two
// slots, written in turn, each with a checksum, and the newer slot that checks out counts.
const syncMarkName = "fifoq-synced"

// A slot of the mark: generation (8 bytes), sequence number (8), number of the log (8), the offset in that
// log up to which it was synced (8; relaxed mode only), flags (4), CRC-32C of the 36 bytes before it (4).
const (
	markSlotSize = 40
	markSlots    = 2
	markCRCAt    = 36
)

// markRelaxed, a flag of a slot: the store was opened WithSyncEvery when the slot was written, so the sync
// offsets in its log's chunks were written before the disk had the data, and the slot's offset says how far
// the log was really synced (relaxed.go).
const markRelaxed = 1

// A syncMark is the open mark of a store.
type syncMark struct {
	path    string
	f       vfs.File
	mu      sync.Mutex
	gen     uint64
	seq     uint64         // the sequence number it records
	lastLog *atomic.Uint64 // the number of the newest log, the engine's
	relaxed bool           // WithSyncEvery: each slot is synced, and records the log's synced offset
	buf     [markSlotSize]byte
}

// markState is what a mark records.
type markState struct {
	gen, seq, log uint64
	offset        uint64 // with relaxed, how far the log numbered log was really synced
	relaxed       bool   // written by a store opened WithSyncEvery
	logThere      bool   // the log named existed before Pebble opened the store
}

var markCRC = crc32.MakeTable(crc32.Castagnoli)

// readMark returns the mark of the store in dir, if it has one.
func readMark(fs vfs.FS, dir string) (markState, bool, error) {
	path := fs.PathJoin(dir, syncMarkName)
	b, err := readFile(fs, path)
	if errors.Is(err, os.ErrNotExist) {
		return markState{}, false, nil
	}
	if err != nil {
		return markState{}, false, fmt.Errorf("durable: %s: %w", path, err)
	}
	var best markState
	found := false
	for i := 0; i+markSlotSize <= len(b) && i < markSlots*markSlotSize; i += markSlotSize {
		s := b[i : i+markSlotSize]
		if crc32.Checksum(s[:markCRCAt], markCRC) != binary.LittleEndian.Uint32(s[markCRCAt:]) {
			continue // torn, or never written
		}
		m := markState{gen: binary.LittleEndian.Uint64(s), seq: binary.LittleEndian.Uint64(s[8:]), log: binary.LittleEndian.Uint64(s[16:]),
			offset: binary.LittleEndian.Uint64(s[24:]), relaxed: binary.LittleEndian.Uint32(s[32:])&markRelaxed != 0}
		if !found || m.gen > best.gen {
			best, found = m, true
		}
	}
	if found {
		_, err := fs.Stat(fs.PathJoin(dir, fmt.Sprintf("%06d.log", best.log)))
		best.logThere = err == nil
	}
	return best, found, nil
}

// openMark opens (or makes) the mark of the store in dir, recording seq. A relaxed store's mark is
// written anew, naming the log Pebble opened with nothing of it synced, so that the mark of an earlier
// mode or log does not stand for it.
func openMark(fs vfs.FS, dir string, from markState, seq uint64, lastLog *atomic.Uint64, relaxed bool) (*syncMark, error) {
	path := fs.PathJoin(dir, syncMarkName)
	m := &syncMark{path: path, gen: from.gen, seq: from.seq, lastLog: lastLog, relaxed: relaxed}
	if relaxed {
		m.seq = 0 // write it
	}
	if _, err := fs.Stat(path); errors.Is(err, os.ErrNotExist) {
		// A new mark is made whole and durable at once (atomicfile.go): a power cut cannot leave it empty,
		// nor take back its name (its directory is synced).
		var b [markSlots * markSlotSize]byte
		gen, at, slot := m.encode(max(seq, from.seq), lastLog.Load(), 0)
		copy(b[at:], slot)
		if err := writeFileAtomic(fs, path, tempOf(path), b[:], 0); err != nil {
			return nil, err
		}
		m.gen, m.seq = gen, max(seq, from.seq)
		if m.f, err = fs.OpenReadWrite(path, vfs.WriteCategoryUnspecified); err != nil {
			return nil, fmt.Errorf("durable: %s: %w", path, err)
		}
		return m, nil
	}
	f, err := fs.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return nil, fmt.Errorf("durable: %s: %w", path, err)
	}
	m.f = f
	if err := m.write(max(seq, from.seq), lastLog.Load(), 0); err != nil {
		_ = f.Close()
		return nil, err
	}
	if err := f.Sync(); err != nil { // once, so that what Open recorded is there
		_ = f.Close()
		return nil, fmt.Errorf("durable: %s: %w", path, err)
	}
	return m, nil
}

// write records seq, and the log numbered log, in the next slot; for a relaxed store, with how far that
// log was synced (offset), and synced, so that Open can trust the offset after a power loss (relaxed.go).
// A write that fails changes neither what the mark holds nor which slot is next: the slot of the last
// write that succeeded stays as it was, and the next write, of the same seq too, writes the other one.
func (m *syncMark) write(seq, log, offset uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if seq <= m.seq && m.gen > 0 {
		return nil
	}
	gen, at, b := m.encode(seq, log, offset)
	if _, err := m.f.WriteAt(b, at); err != nil {
		return fmt.Errorf("durable: %s: %w", m.path, err)
	}
	if m.relaxed {
		// One sync per interval, not per acknowledgement: the offset must not be lost with the power, or
		// Open would take a synced part of the log for its unsynced end.
		if err := m.f.SyncData(); err != nil {
			return fmt.Errorf("durable: %s: %w", m.path, err)
		}
	}
	m.gen, m.seq = gen, seq
	return nil
}

// encode makes the next slot of the mark, recording seq, log and offset, in m.buf: its generation, its
// offset in the file, and its bytes. A slot is 40 bytes at a multiple of 40, which a write never tears
// across a sector; a torn one fails its checksum, and the other slot counts.
func (m *syncMark) encode(seq, log, offset uint64) (gen uint64, at int64, b []byte) {
	gen = m.gen + 1
	b = m.buf[:]
	var flags uint32
	if m.relaxed {
		flags = markRelaxed
	} else {
		offset = 0
	}
	binary.LittleEndian.PutUint64(b, gen)
	binary.LittleEndian.PutUint64(b[8:], seq)
	binary.LittleEndian.PutUint64(b[16:], log)
	binary.LittleEndian.PutUint64(b[24:], offset)
	binary.LittleEndian.PutUint32(b[32:], flags)
	binary.LittleEndian.PutUint32(b[markCRCAt:], crc32.Checksum(b[:markCRCAt], markCRC))
	return gen, int64(gen%markSlots) * markSlotSize, b
}

// markSynced records that every record up to the sequence number seq is durable. It is the engine's hook:
// call it only once a sync of the log returned that covered the record seq (in a mode that syncs later
// than the apply, with the number of the last batch applied before that sync began), so that the mark
// never leads the log.
//
// When the mark cannot be written, the sync still succeeded: the changes are durable, and the mark only
// lags, which weakens its check (with WithSyncEvery, Open would take damage to what the last sync covered
// for a torn end, and cut it). So markBehind is set, and the next sync writes it; with WithSyncEvery, the
// next tick writes it even when nothing was written since (engine.syncLogs), so that an idle store's mark
// catches up.
func (e *engine) markSynced(seq uint64) {
	if e.mark == nil {
		return
	}
	log, offset := e.lastLog.Load(), uint64(0)
	if e.relaxed != nil {
		log, offset = e.logSynced.num, uint64(e.logSynced.offset)
	}
	err := e.mark.write(seq, log, offset)
	if err != nil {
		e.log.Warn("durable: the sync mark could not be written: it lags until the next sync", "file", e.mark.path, "error", err.Error())
	} else if e.markBehind {
		e.log.Info("durable: the sync mark caught up", "file", e.mark.path)
	}
	e.markBehind = err != nil
}

// lastSeqOf returns the sequence number of the last record of pb, once applied (of the one before it, for
// a batch of no record).
func lastSeqOf(pb *pebble.Batch) uint64 {
	return uint64(pb.SeqNum()) + uint64(pb.Count()) - 1
}

// lastSeq returns the sequence number of the last record the store holds, as Pebble recovered it: an
// empty batch takes the next number without using it.
func lastSeq(db *pebble.DB) (uint64, error) {
	b := db.NewBatch()
	defer b.Close()
	if err := b.LogData(nil, nil); err != nil {
		return 0, err
	}
	if err := db.Apply(b, pebble.NoSync); err != nil {
		return 0, err
	}
	return uint64(b.SeqNum()) - 1, nil
}

// checkMark refuses a store that recovered fewer records than its mark says were synced, and opens the
// mark for the engine. It runs once Pebble has opened the store.
func (e *engine) checkMark(fs vfs.FS, from markState, found, keep bool) error {
	got, err := e.guard2(func() (uint64, error) { return lastSeq(e.db) })
	if err != nil {
		return fmt.Errorf("durable: open %s: %w", e.dir, err)
	}
	if found && got < from.seq {
		log := fs.PathJoin(e.dir, fmt.Sprintf("%06d.log", from.log))
		what := "is damaged or cut short"
		if !from.logThere {
			what = "is missing"
		}
		kept := settleKept(fs, e.dir, e.kept, true)
		e.kept = ""
		if kept != "" {
			kept = "; the logs as they were are in " + kept
		}
		return fmt.Errorf("%w: %s %s: the store had made its changes durable up to record %d, and recovered them up to record %d only (%s says so)%s",
			fifoq.ErrStoreCorrupt, log, what, from.seq, got, syncMarkName, kept)
	}
	settleKept(fs, e.dir, e.kept, false)
	e.kept = ""
	if !keep {
		return nil
	}
	m, err := openMark(fs, e.dir, from, got, &e.lastLog, e.relaxed != nil)
	if err != nil {
		return err
	}
	e.mark = m
	return nil
}

// guard2 is guard for a function with a result.
func (e *engine) guard2(f func() (uint64, error)) (v uint64, err error) {
	err = e.guard(func() error {
		var ferr error
		v, ferr = f()
		return ferr
	})
	return v, err
}

// closeMark closes the mark's file.
func (e *engine) closeMark() {
	if e.mark != nil {
		_ = e.mark.f.Close()
	}
}

// noteLog records the number of the log that Pebble makes, for the mark to name it.
func (fs *fenceFS) noteLog(name string) {
	base := name[strings.LastIndexAny(name, `/\`)+1:]
	if num, ok := logNumber(base); ok && fs.lastLog != nil {
		fs.lastLog.Store(uint64(num))
	}
}

// The logs as they were when the store was opened. Pebble, opening a store, writes what it recovered from
// the logs to a table file and deletes them, so a store that the mark refuses no longer holds the damaged
// log. Before Pebble opens a store that has a mark, Open links its logs (no copy) into keptLogs, and
// removes that directory once the store passed the check; a refused store keeps them, in refusedLogs.
const (
	keptLogs    = "fifoq-logs-at-open"
	refusedLogs = "fifoq-refused-logs"
)

// keepLogs links the logs of dir into dir/keptLogs, and returns that directory ("" if it could not).
func keepLogs(fs vfs.FS, dir string) string {
	kept := fs.PathJoin(dir, keptLogs)
	if err := fs.RemoveAll(kept); err != nil { // what an Open cut short left
		return ""
	}
	names, err := fs.List(dir)
	if err != nil {
		return ""
	}
	if err := fs.MkdirAll(kept, 0o755); err != nil {
		return ""
	}
	for _, n := range names {
		if _, ok := logNumber(n); ok {
			if err := fs.Link(fs.PathJoin(dir, n), fs.PathJoin(kept, n)); err != nil {
				_ = fs.RemoveAll(kept)
				return ""
			}
		}
	}
	return kept
}

// settleKept removes the logs kept for a store that passed the check, or keeps them in dir/refusedLogs
// for one that was refused (unless an earlier refusal kept them there already), and returns where.
func settleKept(fs vfs.FS, dir, kept string, refused bool) string {
	if kept == "" {
		return ""
	}
	if refused {
		to := fs.PathJoin(dir, refusedLogs)
		if _, err := fs.Stat(to); err == nil {
			_ = fs.RemoveAll(kept)
			return to
		}
		if err := fs.Rename(kept, to); err == nil {
			_ = syncDir(fs, dir) // kept for the operator, through a power loss too
			return to
		}
	}
	_ = fs.RemoveAll(kept)
	return ""
}

package durable

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/atomicfs"

	"github.com/fifoq/fifoq"
)

// Checks of a store's log files before Pebble opens it, for damage that Pebble takes for the torn end of a
// file, which a crash leaves, and so passes over without a word, dropping what follows it.
//
// The MANIFEST lists the store's table files; Pebble reads its records up to the first one that does not
// check out and ignores the rest (versionSet.load in pebble/v2 version_set.go), so a flipped byte in an old
// record drops the tables that later records add, and Pebble then deletes them as obsolete. The write-ahead
// log of the last memtable is read the same way (DB.replayWAL in open.go, strictWALTail false for the
// last log): past a damaged chunk, Pebble reads the later 32 KiB blocks of the log looking for a chunk
// that records a sync beyond the damage (record.Reader.readAheadForCorruption in record/record.go), but
// not the rest of the damaged chunk's own block, so a flipped byte there loses up to 32 KiB of
// acknowledged writes.
//
// A torn end is what a crash leaves: the record being written when it happened, and nothing written after
// it. So a record that does not check out, followed by one that does, is damage, not a torn end: for the
// MANIFEST, any complete record after it (its writer writes and syncs one record at a time, and stops at
// the first error); for the log, a chunk of the same log that says a sync covered the damaged offset.

// The format of Pebble's log files (pebble/v2 record/record.go): 32 KiB blocks of chunks; a chunk has a
// masked CRC-32C of its type and payload (4 bytes), the payload's length (2), its type (1), then, by type,
// the log's number (4) and the offset the log was synced up to when the chunk was written (8).
const (
	recordBlockSize = 32 << 10
	legacyHeader    = 7
	recycledHeader  = 11
	syncHeader      = 19
)

// chunk types: full, first, middle, last, in the three formats.
const (
	chunkFull       = 1
	chunkFirst      = 2
	chunkRecycled   = 5 // + full, first, middle, last
	chunkSync       = 9 // + full, first, middle, last
	chunkTypesEnd   = 13
	chunkSyncOffset = 11 // where a sync chunk's synced offset is in its header
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// chunkCRC is Pebble's masked CRC-32C (internal/crc).
func chunkCRC(b []byte) uint32 {
	c := crc32.Update(0, crcTable, b)
	return (c>>15 | c<<17) + 0xa282ead8
}

// A chunk is a chunk of a log file, as its header describes it.
type chunk struct {
	typ          byte
	logNum       uint32 // recycled and sync chunks
	syncedOffset uint64 // sync chunks
	start, end   int    // its offset, and the offset just past it
}

// chunkAt returns the chunk whose header is at offset off of the file b, if the header is one: a known
// type, and a length that ends the chunk within its block.
func chunkAt(b []byte, off int) (chunk, bool) {
	blockEnd := min((off/recordBlockSize+1)*recordBlockSize, len(b))
	if off+legacyHeader > blockEnd {
		return chunk{}, false
	}
	h := b[off:]
	c := chunk{typ: h[6], start: off}
	header := legacyHeader
	switch {
	case c.typ == 0 || c.typ >= chunkTypesEnd:
		return chunk{}, false
	case c.typ >= chunkSync:
		header = syncHeader
	case c.typ >= chunkRecycled:
		header = recycledHeader
	}
	c.end = off + header + int(binary.LittleEndian.Uint16(h[4:6]))
	if c.end > blockEnd {
		return chunk{}, false
	}
	if header > legacyHeader {
		c.logNum = binary.LittleEndian.Uint32(h[7:11])
	}
	if header == syncHeader {
		c.syncedOffset = binary.LittleEndian.Uint64(h[chunkSyncOffset:])
	}
	return c, true
}

// intact reports whether c's checksum matches its type and payload.
func (c chunk) intact(b []byte) bool {
	return chunkCRC(b[c.start+6:c.end]) == binary.LittleEndian.Uint32(b[c.start:])
}

// firstBad walks the chunks of b from the start and returns the offset of the first one that does not
// check out or, for logNum != 0, belongs to another log (an end marker, or what a recycled file held
// before), skipping the zeroed end of each block as Pebble does; len(b) if there is none.
func firstBad(b []byte, logNum uint32) int {
	off := 0
	for off < len(b) {
		rest := recordBlockSize - off%recordBlockSize
		if rest < syncHeader && allZero(b[off:min(off+rest, len(b))]) {
			off += rest // the block's zeroed end
			continue
		}
		c, ok := chunkAt(b, off)
		if !ok || !c.intact(b) || (logNum != 0 && c.typ >= chunkRecycled && c.logNum != logNum) {
			return off
		}
		off = c.end
	}
	return len(b)
}

// endMark reports whether the chunk at off is the mark Pebble writes at the end of a closed log: the header
// of an empty full chunk of the log numbered one higher, with no checksum (its checksum field is zero;
// LogWriter.emitEOFTrailer in pebble/v2 record/log_writer.go).
func endMark(b []byte, off int, logNum uint32) bool {
	c, ok := chunkAt(b, off)
	return ok && c.typ == chunkRecycled && c.end == off+recycledHeader && c.logNum == logNum+1 &&
		binary.LittleEndian.Uint32(b[off:]) == 0
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// proofAfter reports whether an intact chunk after offset bad, in bad's block or a later one, proves that
// bad is damage rather than a torn end: proves(c) says whether c would. In bad's block every offset is
// tried, as the damage may be in a chunk's length; later blocks start with a chunk, so their chunks are
// walked.
func proofAfter(b []byte, bad int, proves func(chunk) bool) bool {
	blockEnd := min((bad/recordBlockSize+1)*recordBlockSize, len(b))
	for off := bad + 1; off < blockEnd; off++ {
		if c, ok := chunkAt(b, off); ok && proves(c) && c.intact(b) {
			return true
		}
	}
	for block := blockEnd; block < len(b); block += recordBlockSize {
		for off := block; off < min(block+recordBlockSize, len(b)); {
			c, ok := chunkAt(b, off)
			if !ok || !c.intact(b) {
				break
			}
			if proves(c) {
				return true
			}
			off = c.end
		}
	}
	return false
}

// verifyLogs checks the store's MANIFEST and its last write-ahead log, if dir holds a store. It returns
// the MANIFEST's path if the directory holds table files too. mark is the store's sync mark, if it has
// one: a relaxed store's last log may be cut (cutTorn), which it reports.
func verifyLogs(fs vfs.FS, dir string, mark *markState) (manifestWithTables string, cut *logCut, err error) {
	manifest, err := atomicfs.ReadMarker(fs, dir, "manifest")
	if err != nil || manifest == "" {
		return "", nil, nil // no store, or one that Pebble refuses itself
	}
	manifest = fs.PathJoin(dir, manifest)
	if err := verifyManifest(fs, manifest); err != nil {
		return "", nil, err
	}
	names, err := fs.List(dir)
	if err != nil {
		return "", nil, nil
	}
	tables := false
	var last string
	var lastNum uint64
	for _, n := range names {
		tables = tables || strings.HasSuffix(n, ".sst")
		if _, ok := logNumber(n); ok {
			if num, _ := strconv.ParseUint(strings.TrimSuffix(n, ".log"), 10, 64); last == "" || num > lastNum {
				last, lastNum = n, num
			}
		}
	}
	if !tables {
		manifest = ""
	}
	if last == "" {
		return manifest, nil, nil
	}
	path := fs.PathJoin(dir, last)
	if mark != nil && mark.relaxed && mark.log <= lastNum {
		synced := uint64(0) // a log newer than the mark's: the last real sync covered none of it
		if mark.log == lastNum {
			synced = mark.offset
		}
		cut, err := cutTorn(fs, dir, path, uint32(lastNum), synced)
		return manifest, cut, err
	}
	return manifest, nil, verifyLastLog(fs, path, uint32(lastNum))
}

// logNumber returns the number of a write-ahead log from its file name, such as 000012.log; Pebble writes
// the low 32 bits of it in its chunks.
func logNumber(name string) (uint32, bool) {
	num, ok := strings.CutSuffix(name, ".log")
	if !ok {
		return 0, false
	}
	x, err := strconv.ParseUint(num, 10, 64)
	return uint32(x), err == nil
}

// damagedLogs returns the paths of the write-ahead logs that do not end as a closed log does, with its end
// mark: Pebble names no file when it finds a damaged log.
func damagedLogs(fs vfs.FS, dir string) []string {
	names, err := fs.List(dir)
	if err != nil {
		return nil
	}
	slices.Sort(names)
	var out []string
	for _, n := range names {
		num, ok := logNumber(n)
		if !ok {
			continue
		}
		path := fs.PathJoin(dir, n)
		b, err := readFile(fs, path)
		if err != nil {
			continue
		}
		if end := firstBad(b, num); end < len(b) && !endMark(b, end, num) {
			out = append(out, path)
		}
	}
	return out
}

// verifyManifest refuses a MANIFEST with a damaged record that a complete one follows.
func verifyManifest(fs vfs.FS, path string) error {
	b, err := readFile(fs, path)
	if err != nil {
		return nil // Pebble says what is wrong with it
	}
	bad := firstBad(b, 0)
	if bad == len(b) {
		return nil
	}
	if proofAfter(b, bad, func(c chunk) bool { return (c.typ-1)%4 == chunkFull-1 || (c.typ-1)%4 == chunkFirst-1 }) {
		return fmt.Errorf("%w: %s: the record at offset %d is damaged, and records follow it", fifoq.ErrStoreCorrupt, path, bad)
	}
	return nil
}

// verifyLastLog refuses the last write-ahead log when a chunk of it after a damaged one records a sync
// beyond the damage: what was damaged had been made durable.
func verifyLastLog(fs vfs.FS, path string, logNum uint32) error {
	b, err := readFile(fs, path)
	if err != nil {
		return nil
	}
	bad := firstBad(b, logNum)
	if bad == len(b) || endMark(b, bad, logNum) {
		return nil // closed, or cut off at the end of the last sync
	}
	proves := func(c chunk) bool {
		return c.typ >= chunkSync && c.logNum == logNum && c.syncedOffset > uint64(bad)
	}
	if proofAfter(b, bad, proves) {
		return fmt.Errorf("%w: %s: the record at offset %d is damaged, and a later one says it was synced",
			fifoq.ErrStoreCorrupt, path, bad)
	}
	return nil
}

// A logCut is a relaxed store's last log cut at Open (cutTorn).
type logCut struct {
	path    string // the log
	at      int    // where it was cut: its first damaged chunk
	synced  uint64 // how far it had been synced, as the sync mark says
	dropped int    // the bytes cut off
	copy    string // the log as it was
}

// cutLogs is the directory of a store where Open keeps a copy of a log it cut (cutTorn), the last keptCuts
// of them: pruneCuts removes the older ones as a new one is made.
const (
	cutLogs  = "fifoq-cut-logs"
	keptCuts = 8
)

// cutTorn checks the last write-ahead log of a store opened WithSyncEvery, given how far the sync mark
// says it was really synced, and cuts off its end after a power loss tore it: what Pebble would refuse.
//
// Such a store writes its records to the log without syncing it, and syncs it every interval, so a power
// loss can leave the log's unsynced end in part: a later block on the disk, an earlier one not. Pebble
// takes that for damage, since the later block's chunks record a sync beyond the hole: the sync that the
// relaxed mode let return without syncing (relaxedFS). The mark records the offset the last real sync
// covered, and is synced itself; a damaged chunk before that offset is damage, refused as by default. A
// damaged chunk after it, with a later chunk that claims a sync beyond it, is the torn unsynced end: the
// log is cut at the damaged chunk, losing only what the last real sync had not covered, after a copy of it
// as it was is kept in the directory cutLogs. A log whose damaged chunk has no such chunk after it is left
// to Pebble, which stops there as at any torn end.
func cutTorn(fs vfs.FS, dir, path string, logNum uint32, synced uint64) (*logCut, error) {
	b, err := readFile(fs, path)
	if err != nil {
		return nil, nil
	}
	bad := firstBad(b, logNum)
	if endMark(b, bad, logNum) && synced <= uint64(bad+recycledHeader) {
		// A closed log: Pebble writes its end mark before it closes the file, and a real sync in between
		// covers the mark too (it rotated away from the log and the power went before the next one held
		// anything synced).
		return nil, nil
	}
	if uint64(bad) < synced {
		return nil, fmt.Errorf("%w: %s: the record at offset %d is damaged, and the log had been synced up to offset %d (%s says so)",
			fifoq.ErrStoreCorrupt, path, bad, synced, syncMarkName)
	}
	if bad == len(b) || endMark(b, bad, logNum) {
		return nil, nil
	}
	proves := func(c chunk) bool {
		return c.typ >= chunkSync && c.logNum == logNum && c.syncedOffset > uint64(bad)
	}
	if !proofAfter(b, bad, proves) {
		return nil, nil // a torn end that Pebble passes over itself
	}
	c := &logCut{path: path, at: bad, synced: synced, dropped: len(b) - bad}
	base := path[strings.LastIndexAny(path, `/\`)+1:]
	keep := fs.PathJoin(dir, cutLogs)
	c.copy = fs.PathJoin(keep, base)
	tmp := fs.PathJoin(keep, base+".cut")
	fail := func(err error) (*logCut, error) {
		return nil, fmt.Errorf("durable: %s: cutting the log's torn end at offset %d: %w", path, bad, err)
	}
	// Each file is written whole and durably (atomicfile.go): a crash or a power cut during the cut leaves
	// the log as it was or cut, never empty or torn, and it is cut again at the next Open.
	if err := mkdirAllSynced(fs, keep, 0o755); err != nil {
		return fail(err)
	}
	if err := writeFileAtomic(fs, c.copy, tempOf(c.copy), b, 0); err != nil {
		return fail(err)
	}
	if err := writeFileAtomic(fs, path, tmp, b[:bad], 0); err != nil {
		return fail(err)
	}
	pruneCuts(fs, keep)
	return c, nil
}

// pruneCuts removes from the directory keep the copies of cut logs but the keptCuts newest, and what a cut
// cut short left there (a .cut or .tmp file). Pebble numbers its logs in the order it makes them, and a log is cut
// only while it is a store's newest, so the copies' numbers order the cuts. What cannot be removed is
// left: a copy is kept for the operator, and its loss fails nothing.
func pruneCuts(fs vfs.FS, keep string) {
	names, err := fs.List(keep)
	if err != nil {
		return
	}
	type copied struct {
		name string
		num  uint64
	}
	var copies []copied
	for _, n := range names {
		if strings.HasSuffix(n, ".log.cut") || strings.HasSuffix(n, ".log"+tempOf("")) {
			_ = fs.Remove(fs.PathJoin(keep, n))
			continue
		}
		if _, ok := logNumber(n); ok {
			num, _ := strconv.ParseUint(strings.TrimSuffix(n, ".log"), 10, 64)
			copies = append(copies, copied{n, num})
		}
	}
	slices.SortFunc(copies, func(a, b copied) int { return cmp.Compare(a.num, b.num) })
	for _, c := range copies[:max(0, len(copies)-keptCuts)] {
		_ = fs.Remove(fs.PathJoin(keep, c.name))
	}
}

func readFile(fs vfs.FS, path string) ([]byte, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

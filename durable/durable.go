// Package durable opens fifoq stores on disk, over the Pebble storage engine (github.com/cockroachdb/pebble/v2:
// a write-ahead log with group commit, atomic batches, and the crash testing of CockroachDB). A queue given
// a store with fifoq.WithStore survives a restart or a crash of the process with nothing lost:
//
//	st, err := durable.Open("/var/lib/orders")
//	if err != nil {
//		return err
//	}
//	defer st.Close()
//	q, err := fifoq.New("orders.fifo", fifoq.WithStore(st), fifoq.WithContentBasedDeduplication())
//
// The root package does not import this one, so a program that keeps its queues in memory does not build
// Pebble.
//
// # How changes reach the disk
//
// A queue commits the records of each call while it holds its lock, in the order of the changes, and waits
// for them to be durable after releasing it. The store hands batches to one goroutine that applies them to
// Pebble in rounds, in that order, each round as one Pebble batch with one sync of the log: group commit,
// so that the disk's sync rate bounds the rate of rounds, not of calls. A round does not start the moment
// the previous one ends: the callers that round woke would miss it, and callers would take turns, half of
// them in each sync. It waits for them to commit again, for at most half the time a round takes to write
// and sync (a moving average): a sync then carries about twice as many calls. The batches are applied with
// Pebble's plain Apply on that goroutine, rather than with ApplyNoSyncWait on the caller's: Pebble's commit
// pipeline signals a batch from whichever goroutine publishes it, which testing/synctest forbids across a
// bubble's edge, and fifoq's tests run queues inside bubbles.
//
// By default every round that holds a change a call reports is synced before the call returns: neither a
// crash of the process nor a loss of power loses an acknowledged change. WithSyncEvery trades the last
// moments before a power loss for speed: a round is written to the operating system before its calls
// return, and the log is synced every interval (and at Close) by a goroutine of its own, which a commit
// round that Pebble holds does not delay, so that a crash of the process still loses nothing, and a power
// loss at most what the last interval acknowledged (and the sync under way), as SQLite's synchronous=NORMAL.
//
// # Failures
//
// When a write or a sync fails (a full disk), the store fails for good, as fifoq.Store says: the call
// under way and every later change of its queues return fifoq.ErrStoreFailed, which wraps the cause
// (errors.Is(err, syscall.ENOSPC)), while their reads go on. This holds as well for what Pebble writes on
// its own goroutines (a memtable's flush to a table file, a compaction, the MANIFEST), whose failures
// Pebble's own logger would end the process for, or Pebble would retry without end: the store fails at
// once, on an idle store too, and its Failed channel is closed. From the failure on, the store's files are
// not changed any more, so that they stay as a crash would have left them: Close releases them and returns
// the failure, and opening the directory again recovers every change that was acknowledged.
//
// The files the store writes beside Pebble's (its sync mark, the copies of logs it cut) are written whole
// and durably, as WriteFile does, and the directories Open makes are synced into their parents: a loss of
// power at any moment leaves none of them empty, torn, or gone.
//
// Open refuses a damaged store with fifoq.ErrStoreCorrupt, naming the file, and fifoq.New does for damage
// found as it reads the queue's records. A store that cannot be opened (a full disk, a directory it may not
// write) makes Open return at once with the cause (errors.Is(err, syscall.ENOSPC)) and the file; a failed
// Open removes the directories it made and leaves nothing running (no goroutine, no open file), so a
// program may try again.
//
// The write-ahead log is checked against the store's sync mark, the file fifoq-synced: after each sync of
// the log, the store writes there the number of the last record the sync covered (one pwrite, no fsync;
// WithSyncEvery syncs it, with how far the sync covered the log, see there), and Open refuses a store that recovers fewer records, naming the log: a live log deleted, emptied,
// zero-filled, replaced or cut short while it held acknowledged writes (the logs as they were are kept in
// the directory fifoq-refused-logs of the store, which the error names). The mark is written only after the
// sync returned, so a crash leaves it no further than the log, and it has two checksummed slots, so a torn
// write of it is never taken for damage. What is still taken for the torn end that a crash leaves, as
// Pebble does:
//
//   - after a power loss (not a crash of the process, whose writes the page cache keeps), damage to what the
//     last syncs wrote, as the mark may not have reached the disk since: it may lag, never lead;
//   - damage to the last record of the MANIFEST, or a MANIFEST cut short, which loses the table files that
//     those records added (refused only when it lost every table): the mark checks the last record
//     recovered, not each one;
//   - any loss in a store whose mark is deleted too, or that an earlier fifoq made (the mark is made at its
//     first Open by this one).
package durable

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/storage"
)

// ErrLocked: another process (or another Store of this one) has the directory open. A directory holds one
// open store at a time; Pebble's LOCK file in it says which.
var ErrLocked = errors.New("durable: the store's directory is in use")

// An Option configures Open.
type Option func(*config)

type config struct {
	cacheSize    int64
	memTableSize uint64
	logger       *slog.Logger
	fs           vfs.FS                           // the tests' faults
	noSyncMark   bool                             // the benchmark of the sync mark's cost
	syncEvery    time.Duration                    // WithSyncEvery; 0 for a sync per commit
	syncTicks    <-chan time.Time                 // the tests' ticks of WithSyncEvery, for its ticker's
	syncTicked   chan<- struct{}                  // told when the sync of each of the tests' ticks is done
	onWrite      func(repr []byte, sync bool)     // the benchmark that replays a store's writes into Pebble alone
	onSync       func(began time.Time, done bool) // the power-loss test's record of WithSyncEvery's real syncs
	err          error                            // an option's
}

func defaultConfig() config {
	return config{cacheSize: 8 << 20, memTableSize: 4 << 20, fs: vfs.Default}
}

// tune sets the options of Pebble's that the store's workload decides.
func tune(o *pebble.Options, c config) {
	o.MemTableSize = c.memTableSize
	// Messages are read only at Open, so a compaction out of L0 may wait for twice Pebble's default count
	// of sublevels: each such compaction rewrites the backlog's tables once, and half as many of them wrote
	// 31% fewer bytes, took 10% less CPU a message at 8 producers and 8 consumers, and recovered 1,000,000
	// messages no slower (docs/benchmarks.md).
	o.L0CompactionThreshold = 8
	o.L0StopWritesThreshold = 24
}

// WithCacheSize sets the size of Pebble's block cache in bytes: default 8 MiB. Recovery reads every record
// once, so a larger cache speeds up little but the reads of a queue's records after a restart.
func WithCacheSize(bytes int64) Option { return func(c *config) { c.cacheSize = bytes } }

// WithMemTableSize sets the size of Pebble's memtable in bytes: default 4 MiB. Messages sent and deleted
// within one memtable never reach a table file; two memtables can be in memory at once.
func WithMemTableSize(bytes uint64) Option { return func(c *config) { c.memTableSize = bytes } }

// WithLogger sets where Pebble's messages go: its errors at level Error, the rest at Debug. The default is
// slog.Default().
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// Open opens the store in the directory dir, creating dir and an empty store when there is none, and
// returns it for fifoq.WithStore. Close it when done.
//
// A directory held open by another process, or by another Store of this one, returns ErrLocked. A damaged
// store (a checksum that does not match, a missing or short file, a record that does not decode) returns
// fifoq.ErrStoreCorrupt with the file or the record named: it is not opened in part, nor replaced by an
// empty one (see Failures in the package documentation for what cannot be told from a crash).
func Open(dir string, opts ...Option) (*fifoq.Store, error) {
	st, _, err := open(dir, opts)
	return st, err
}

// configOf returns the configuration opts make.
func configOf(opts []Option) (config, error) {
	c := defaultConfig()
	for _, o := range opts {
		o(&c)
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	return c, c.err
}

// open is Open, which also returns the store's engine.
func open(dir string, opts []Option) (*fifoq.Store, *engine, error) {
	c, err := configOf(opts)
	if err != nil {
		return nil, nil, err
	}
	made := madeDirs(c.fs, dir)
	e, err := openEngine(dir, c)
	if err != nil {
		removeMade(c.fs, made, c.logger)
		return nil, nil, err
	}
	if err := e.checkFormat(); err != nil {
		_ = e.Close()
		return nil, nil, err
	}
	st, err := fifoq.OpenStore(e, dir)
	if err != nil {
		if errors.Is(err, fifoq.ErrStoreCorrupt) && e.manifest != "" {
			err = fmt.Errorf("%w (the store held table files: see its MANIFEST %s and its logs)", err, e.manifest)
		}
		_ = e.Close()
		removeMade(c.fs, made, c.logger)
		return nil, nil, err
	}
	return st, e, nil
}

// checkFormat refuses a store whose directory held table files but which holds no record: its MANIFEST or
// its logs lost them, and Pebble opened what was left, nothing. (Without table files, it may be a store
// whose making a crash cut short, which fifoq completes. A store that lost some records but not all is
// fifoq.OpenStore's to refuse: fifoq's first record, which it never deletes, is then missing.)
func (e *engine) checkFormat() error {
	if e.manifest == "" {
		return nil
	}
	found := false
	err := e.Scan(nil, bytes.Repeat([]byte{0xff}, 8), func(k, v []byte) error {
		found = true
		return errFound
	})
	if errors.Is(err, errFound) {
		err = nil
	}
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("%w: %s holds table files but no record: its MANIFEST (%s) or its logs are damaged",
			fifoq.ErrStoreCorrupt, e.dir, e.manifest)
	}
	return nil
}

// errFound stops checkFormat's scan at the first record.
var errFound = errors.New("durable: found a record")

// unborn reports whether the files of a directory in which Pebble found no store are those of a store that
// was never made: none, or Pebble's lock file, which it makes before it looks for a store, and the first
// MANIFEST, which it writes before the marker that names it: a process killed in between leaves it.
func unborn(names []string) bool {
	for _, n := range names {
		if n != "LOCK" && n != firstManifest {
			return false
		}
	}
	return true
}

// firstManifest is the MANIFEST of a new store.
const firstManifest = "MANIFEST-000001"

func openEngine(dir string, c config) (*engine, error) {
	if err := mkdirAllSynced(c.fs, dir, 0o755); err != nil { // durable, so that a power cut cannot take the store's directory back
		return nil, err
	}
	// Check the logs under the directory's lock, so that another process's store is ErrLocked, not
	// read while it writes; Pebble takes the lock again in Open.
	lock, err := c.fs.Lock(c.fs.PathJoin(dir, "LOCK"))
	if err != nil {
		return nil, openError(c.fs, dir, err)
	}
	mark, marked, err := readMark(c.fs, dir)
	var manifest string
	var torn *logCut
	if err == nil {
		var m *markState // a relaxed store's last log may be cut (verify.go, cutTorn)
		if marked && !c.noSyncMark {
			m = &mark
		}
		manifest, torn, err = verifyLogs(c.fs, dir, m)
	}
	if torn != nil {
		c.logger.Warn("durable: the write-ahead log's end, after its last sync, was torn (a power loss with WithSyncEvery): cut it there, dropping what followed",
			"file", torn.path, "offset", torn.at, "synced", torn.synced, "dropped_bytes", torn.dropped, "copy", torn.copy)
	}
	if err == nil {
		o := &pebble.Options{FS: c.fs}
		o.EnsureDefaults()
		err = checkOptions(c.fs, dir, o)
	}
	kept := ""
	if err == nil && marked && !c.noSyncMark {
		kept = keepLogs(c.fs, dir) // for a store that the mark refuses (syncmark.go)
	}
	if cerr := lock.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("durable: %s: %w", dir, cerr)
	}
	if err != nil {
		return nil, err
	}

	cache := pebble.NewCache(c.cacheSize)
	defer cache.Unref()
	e := &engine{dir: dir, log: c.logger, manifest: manifest, kept: kept, fence: newFence(), wake: make(chan struct{}, 1),
		full: make(chan struct{}, 1), exited: make(chan struct{}), openFailed: onceSignal{c: make(chan struct{})}, failedCh: make(chan struct{}),
		every: c.syncEvery, ticks: c.syncTicks, ticked: c.syncTicked, onWrite: c.onWrite}
	e.health.fs = c.fs
	fs := c.fs
	if e.every > 0 {
		e.relaxed = newRelaxedFS(fs, c.onSync)
		fs = e.relaxed
	}
	opts := &pebble.Options{
		FS:                 &fenceFS{FS: fs, f: e.fence, lastLog: &e.lastLog},
		Cache:              cache,
		FormatMajorVersion: pebble.FormatNewest,
		ErrorIfNotExists:   true,
		Logger:             &logger{l: c.logger, e: e},
		EventListener:      e.events(),
	}
	tune(opts, c)
	db, err := e.openDB(dir, opts)
	if errors.Is(err, pebble.ErrDBDoesNotExist) {
		// No store here: make one, unless the directory holds files of one whose manifest is gone. An
		// empty store there would lose its queues without a word.
		names, lerr := c.fs.List(dir)
		if lerr != nil {
			return nil, fmt.Errorf("durable: %w", lerr)
		}
		if !unborn(names) {
			names = slices.DeleteFunc(names, func(n string) bool { return n == "LOCK" })
			slices.Sort(names)
			return nil, fmt.Errorf("%w: %s holds %v but no store manifest (marker.manifest.*): not opening it as an empty store",
				fifoq.ErrStoreCorrupt, dir, names)
		}
		if slices.Contains(names, firstManifest) {
			if err := c.fs.Remove(c.fs.PathJoin(dir, firstManifest)); err != nil {
				return nil, fmt.Errorf("durable: %s: remove the MANIFEST of a store never made: %w", dir, err)
			}
		}
		opts.ErrorIfNotExists = false
		if db, err = e.openDB(dir, opts); err == nil {
			// Pebble makes a store at its oldest format and moves it to the newest once its first log is
			// made, so that log lacks the sync offsets that tell damage from a torn end (open.go, Open:
			// WriteWALSyncOffsets, then ratchetFormatMajorVersionLocked). Open it again, so that no record
			// goes to that log.
			if err = e.guard(db.Close); err == nil {
				opts.ErrorIfNotExists = true
				db, err = e.openDB(dir, opts)
			}
		}
	}
	if err != nil {
		settleKept(c.fs, dir, kept, false)
		return nil, openError(c.fs, dir, err)
	}
	e.db = db
	if c.noSyncMark {
		marked, mark = false, markState{}
	}
	if err := e.checkMark(c.fs, mark, marked, !c.noSyncMark); err != nil {
		_ = e.guard(db.Close)
		return nil, err
	}
	e.round = newRound()
	e.pool.New = func() any { return &batch{pb: db.NewBatch()} }
	e.opened.Store(true)
	go e.run()
	return e, nil
}

// openError says why Pebble did not open dir.
func openError(vfs vfs.FS, dir string, err error) error {
	var pathErr *fs.PathError
	switch {
	case (errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES)) && !errors.As(err, &pathErr), // fcntl's
		pebbleSays(err, textLockHeld):
		return fmt.Errorf("%w: %s (its LOCK file is held): %w", ErrLocked, dir, err)
	case errors.Is(err, pebble.ErrDBNotPristine) && missingFormatMarker(vfs, dir) != "":
		return fmt.Errorf("%w: %s is missing: the store holds a MANIFEST but no format version marker", fifoq.ErrStoreCorrupt,
			missingFormatMarker(vfs, dir))
	case pebble.IsCorruptionError(err), errors.Is(err, fs.ErrNotExist), errors.Is(err, os.ErrNotExist),
		pebbleSays(err, textSizeMismatch):
		files := tablesNamed(vfs, dir, err)
		slices.Sort(files)
		files = slices.Compact(files)
		if pebbleSays(err, textReplayingWAL) {
			files = damagedLogs(vfs, dir)
		}
		if len(files) > 0 {
			return fmt.Errorf("%w: %s: %w", fifoq.ErrStoreCorrupt, strings.Join(files, ", "), oneLine(err))
		}
		return fmt.Errorf("%w: %s: %w", fifoq.ErrStoreCorrupt, dir, oneLine(err))
	}
	return fmt.Errorf("durable: open %s: %w", dir, oneLine(err))
}

// engine is the storage.Engine over Pebble. Commits go to a queue that one goroutine, run, empties in rounds:
// it writes the round's batches to Pebble as one batch and syncs the log once, then wakes the round's
// waiters.
type engine struct {
	db       *pebble.DB
	dir      string
	manifest string // the MANIFEST's path, if the directory held table files when it was opened
	log      *slog.Logger
	fence    *fence // raised when the store fails, once open
	opened   atomic.Bool
	pool     sync.Pool // of *batch
	wake     chan struct{}
	full     chan struct{} // the round holds the commits that run waits for (gather)
	exited   chan struct{}
	scans    sync.WaitGroup
	health   health                       // health.go
	every    time.Duration                // WithSyncEvery's interval, or 0: a sync per round
	ticks    <-chan time.Time             // the tests' ticks for WithSyncEvery, or nil
	ticked   chan<- struct{}              // told when the sync of each of the tests' ticks is done
	relaxed  *relaxedFS                   // WithSyncEvery's
	onWrite  func(repr []byte, sync bool) // the tests' WithWriteHook, or nil

	// run's own
	merged  *pebble.Batch // a round's batches, as one
	latency time.Duration // a moving average of the time a synced round takes to write and sync
	written uint64        // the sequence number of the last record applied, synced or not

	// Written by run, read by the goroutine that syncs every interval (WithSyncEvery: syncEvery)
	unsynced atomic.Bool   // a round was written since the last sync of the logs
	applied  atomic.Uint64 // the sequence number of the last record in the log, with those before it (syncmark.go)

	// With WithSyncEvery, syncLogs's, under syncMu (on the syncing goroutine, a caller's in Sync, run's at
	// Close); by default, run's synced rounds'
	syncMu     sync.Mutex
	logSynced  logSync // WithSyncEvery: how far the last sync of the logs went, for the mark
	markBehind bool    // the last write of the sync mark failed (syncmark.go)

	mu     sync.Mutex
	queue  []item // committed, not yet applied
	round  *round // the round of the batches in queue
	closed bool
	broken error // an apply or a sync failed: every later commit fails with it

	openFailed onceSignal    // a flush failed while Pebble opened the store (open.go)
	failedCh   chan struct{} // closed when broken is set: Failed
	mark       *syncMark     // how far the log was synced (syncmark.go)
	kept       string        // the directory of the logs kept while the store opens (syncmark.go)
	lastLog    atomic.Uint64 // the number of the newest log
}

var _ storage.Engine = (*engine)(nil)

// An item is what run does, in order: apply a batch or start a scan.
type item struct {
	b    *batch
	scan *scan
}

// A scan reads a range of keys for a caller; run starts it after the batches committed before it. Its
// goroutine copies the records into chunks that Scan hands to fn on the caller's goroutine, so that fn runs
// where the caller does (in its synctest bubble, if any) while the scan reads on. run's goroutine makes the
// channels, outside any bubble.
type scan struct {
	lo, hi []byte
	err    error           // the scan's own, read once chunks is closed
	chunks chan *scanChunk // closed by the scan's goroutine when it ends
	free   chan *scanChunk // chunks fn is done with, for the scan to fill again
	stop   chan struct{}   // closed by Scan when fn fails: the scan ends
}

// A scanChunk holds records read by a scan: each key, then its value, end to end in buf.
type scanChunk struct {
	buf  []byte
	ends []int // where each key and each value ends in buf
}

// A chunk goes to the caller once it holds scanChunkRecords records or scanChunkBytes bytes.
const (
	scanChunkRecords = 256
	scanChunkBytes   = 64 << 10
)

// Scan queues a scan for run, which opens an iterator once the batches committed before are applied and
// hands it to a goroutine of its own, outside any synctest bubble; Scan calls fn with what it reads.
func (e *engine) Scan(lo, hi []byte, fn func(k, v []byte) error) error {
	s := &scan{lo: lo, hi: hi}
	r, err := e.enqueue(item{scan: s}, false)
	if err != nil {
		return err
	}
	err = r.Wait()
	if s.chunks == nil { // not started: a batch before it failed
		return cmp.Or(err, storage.ErrClosed)
	}
	var ferr error
	for c := range s.chunks {
		start := 0
		for i := 0; ferr == nil && i < len(c.ends); i += 2 {
			ferr = fn(c.buf[start:c.ends[i]], c.buf[c.ends[i]:c.ends[i+1]])
			start = c.ends[i+1]
		}
		if ferr != nil && s.stop != nil {
			close(s.stop)
			s.stop = nil // the scan's goroutine has its own copy
		}
		c.buf, c.ends = c.buf[:0], c.ends[:0]
		select {
		case s.free <- c:
		default:
		}
	}
	return cmp.Or(ferr, s.err)
}

// startScan runs s on a goroutine of its own; it runs on run's goroutine, so the channels it makes are made
// outside any bubble.
func (e *engine) startScan(s *scan) {
	s.chunks, s.free, s.stop = make(chan *scanChunk, 2), make(chan *scanChunk, 2), make(chan struct{})
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: s.lo, UpperBound: s.hi})
	if err != nil {
		s.err = fmt.Errorf("durable: %s: %w", e.dir, err)
		close(s.chunks)
		return
	}
	e.scans.Add(1)
	stop := s.stop
	go func() {
		defer e.scans.Done()
		defer close(s.chunks)
		// send hands c to Scan, and returns the next chunk to fill, or nil when Scan stopped the scan.
		send := func(c *scanChunk) *scanChunk {
			select {
			case s.chunks <- c:
			case <-stop:
				return nil
			}
			select {
			case c = <-s.free:
				return c
			default:
				return &scanChunk{}
			}
		}
		c := &scanChunk{}
		for ok := it.First(); ok; ok = it.Next() {
			v, err := it.ValueAndErr()
			if err != nil {
				s.err = err
				break
			}
			c.buf = append(c.buf, it.Key()...)
			c.ends = append(c.ends, len(c.buf))
			c.buf = append(c.buf, v...)
			c.ends = append(c.ends, len(c.buf))
			if len(c.ends) >= 2*scanChunkRecords || len(c.buf) >= scanChunkBytes {
				if c = send(c); c == nil {
					break
				}
			}
		}
		if c != nil && len(c.ends) > 0 && s.err == nil {
			send(c)
		}
		if err := it.Close(); s.err == nil && err != nil {
			s.err = err
		}
		if s.err != nil && pebble.IsCorruptionError(s.err) {
			where := e.dir
			if info := pebble.ExtractDataCorruptionInfo(s.err); info != nil {
				where = info.Path
			}
			s.err = fmt.Errorf("%w: %s: %w", fifoq.ErrStoreCorrupt, where, oneLine(s.err))
		}
	}()
}

// Close applies and syncs what was committed, then closes Pebble and releases the directory. After the
// store failed, it still closes them, and returns the error that failed it, as fifoq.ErrStoreFailed:
// what was committed after that error is not on disk.
func (e *engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
	<-e.exited
	e.scans.Wait()
	e.mu.Lock()
	err := e.broken
	e.mu.Unlock()
	if err != nil {
		err = fmt.Errorf("%w: %s: %w", fifoq.ErrStoreFailed, e.dir, err)
	}
	e.fence.open() // the changes that wait fail, so that Pebble's goroutines end
	if cerr := e.guard(e.db.Close); err == nil && cerr != nil {
		err = fmt.Errorf("durable: close %s: %w", e.dir, cerr)
	}
	e.closeMark()
	return err
}

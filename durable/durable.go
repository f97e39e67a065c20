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
// return, and the log is synced every interval (and at Close), so that a crash of the process still loses
// nothing, and a power loss at most what the last interval acknowledged, as SQLite's synchronous=NORMAL.
//
// # Failures
//
// When a write or a sync fails (a full disk), the store fails for good, as fifoq.Store says: the call
// under way and every later change of its queues return fifoq.ErrStoreFailed, which wraps the cause
// (errors.Is(err, syscall.ENOSPC)), while their reads go on. This holds as well for what Pebble writes on
// its own goroutines (a memtable's flush to a table file, the MANIFEST), whose failures Pebble's own logger
// would end the process for. From the failure on, the store's files are not changed any more, so that
// they stay as a crash would have left them: Close releases them and returns the failure, and opening the
// directory again recovers every change that was acknowledged.
//
// Open refuses a damaged store with fifoq.ErrStoreCorrupt, naming the file, and fifoq.New does for damage
// found as it reads the queue's records. A store that cannot be opened (a full disk, a directory it may not
// write) makes Open return at once with the cause (errors.Is(err, syscall.ENOSPC)) and the file; a failed
// Open removes the directories it made.
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
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/internal/store"
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
	fs           vfs.FS           // the tests' faults
	noSyncMark   bool             // the benchmark of the sync mark's cost
	syncEvery    time.Duration    // WithSyncEvery; 0 for a sync per commit
	syncTicks    <-chan time.Time // the tests' ticks of WithSyncEvery, for its ticker's
	err          error            // an option's
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
	c := config{cacheSize: 8 << 20, memTableSize: 4 << 20, fs: vfs.Default}
	for _, o := range opts {
		o(&c)
	}
	if c.err != nil {
		return nil, c.err
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	made := madeDirs(c.fs, dir)
	e, err := openEngine(dir, c)
	if err != nil {
		removeMade(c.fs, made, c.logger)
		return nil, err
	}
	if err := e.checkFormat(); err != nil {
		_ = e.Close()
		return nil, err
	}
	s, err := store.NewStore(e, dir)
	if err != nil {
		_ = e.Close()
		removeMade(c.fs, made, c.logger)
		return nil, err
	}
	return s.(*fifoq.Store), nil
}

// checkFormat refuses a store whose directory held table files but which holds no record of fifoq's format
// (a key that starts with 0x00, see fifoq's codec.go), which is its first record and is never deleted: its
// MANIFEST or its logs lost it, and whatever else Pebble did not find. (Without table files, it may be a
// store whose making a crash cut short, which fifoq completes.)
func (e *engine) checkFormat() error {
	if e.manifest == "" {
		return nil
	}
	found := false
	err := e.Scan([]byte{0x00}, []byte{0x01}, func(k, v []byte) error {
		found = true
		return nil
	})
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("%w: %s holds table files but not the store's first record: its MANIFEST (%s) or its logs are damaged",
			fifoq.ErrStoreCorrupt, e.dir, e.manifest)
	}
	return nil
}

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
	if err := c.fs.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("durable: %w", err)
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
		full: make(chan struct{}, 1), exited: make(chan struct{}), openFailed: onceSignal{c: make(chan struct{})},
		every: c.syncEvery, ticks: c.syncTicks}
	e.health.fs = c.fs
	fs := c.fs
	if e.every > 0 {
		e.relaxed = newRelaxedFS(fs)
		fs = e.relaxed
	}
	opts := &pebble.Options{
		FS:                 &fenceFS{FS: fs, f: e.fence, lastLog: &e.lastLog},
		Cache:              cache,
		MemTableSize:       c.memTableSize,
		FormatMajorVersion: pebble.FormatNewest,
		ErrorIfNotExists:   true,
		Logger:             &logger{l: c.logger, e: e},
		EventListener:      e.events(),
	}
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
		strings.Contains(err.Error(), "lock held by current process"): // Pebble's own check, a plain error
		return fmt.Errorf("%w: %s (its LOCK file is held): %w", ErrLocked, dir, err)
	case errors.Is(err, pebble.ErrDBNotPristine) && missingFormatMarker(vfs, dir) != "":
		return fmt.Errorf("%w: %s is missing: the store holds a MANIFEST but no format version marker", fifoq.ErrStoreCorrupt,
			missingFormatMarker(vfs, dir))
	case pebble.IsCorruptionError(err), errors.Is(err, fs.ErrNotExist), errors.Is(err, os.ErrNotExist),
		strings.Contains(err.Error(), "object size mismatch"): // checkConsistency in open.go: a table cut short
		files := tablesNamed(vfs, dir, err)
		if strings.Contains(err.Error(), "replaying WAL") {
			files = damagedLogs(vfs, dir)
		}
		if len(files) > 0 {
			return fmt.Errorf("%w: %s: %w", fifoq.ErrStoreCorrupt, strings.Join(files, ", "), oneLine(err))
		}
		return fmt.Errorf("%w: %s: %w", fifoq.ErrStoreCorrupt, dir, oneLine(err))
	}
	return fmt.Errorf("durable: open %s: %w", dir, oneLine(err))
}

// engine is the store.Engine over Pebble. Commits go to a queue that one goroutine, run, empties in rounds:
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
	health   health           // health.go
	every    time.Duration    // WithSyncEvery's interval, or 0: a sync per round
	ticks    <-chan time.Time // the tests' ticks for WithSyncEvery, or nil
	relaxed  *relaxedFS       // WithSyncEvery's

	// run's own
	merged    *pebble.Batch // a round's batches, as one
	latency   time.Duration // a moving average of the time a synced round takes to write and sync
	unsynced  bool          // WithSyncEvery: a round was written since the last sync of the logs
	applied   uint64        // the sequence number of the last record written (syncmark.go)
	logSynced logSync       // WithSyncEvery: how far the last sync of the logs went, for the mark

	mu     sync.Mutex
	queue  []item // committed, not yet applied
	round  *round // the round of the batches in queue
	closed bool
	broken error // an apply or a sync failed: every later commit fails with it

	openFailed onceSignal    // a flush failed while Pebble opened the store (open.go)
	mark       *syncMark     // how far the log was synced (syncmark.go)
	kept       string        // the directory of the logs kept while the store opens (syncmark.go)
	lastLog    atomic.Uint64 // the number of the newest log
}

var _ store.Engine = (*engine)(nil)

// An item is what run does, in order: apply a batch or start a scan.
type item struct {
	b    *batch
	scan *scan
}

// A round is the batches that one sync makes durable; its Ticket waits for them. run makes rounds, so their
// channel is made outside any synctest bubble.
type round struct {
	done    chan struct{}
	err     error
	sync    bool // a batch of the round asks for a sync
	waiters int  // the commits of the round that asked for a sync
	want    int  // run waits for so many waiters before it starts the round (gather), or 0
}

func newRound() *round { return &round{done: make(chan struct{})} }

func (r *round) Wait() error {
	<-r.done
	return r.err
}

type batch struct{ pb *pebble.Batch }

func (b *batch) Set(key, value []byte)     { _ = b.pb.Set(key, value, nil) }
func (b *batch) Delete(key []byte)         { _ = b.pb.Delete(key, nil) }
func (b *batch) SingleDelete(key []byte)   { _ = b.pb.SingleDelete(key, nil) }
func (b *batch) DeleteRange(lo, hi []byte) { _ = b.pb.DeleteRange(lo, hi, nil) }
func (b *batch) Len() int                  { return int(b.pb.Count()) }

func (e *engine) NewBatch() store.Batch { return e.pool.Get().(*batch) }

func (e *engine) release(b *batch) {
	b.pb.Reset()
	e.pool.Put(b)
}

// Commit queues b for run and returns the round it belongs to.
func (e *engine) Commit(sb store.Batch, sync bool) (store.Ticket, error) {
	b := sb.(*batch)
	r, err := e.enqueue(item{b: b}, sync)
	if err != nil {
		e.release(b)
		return nil, err
	}
	if !sync {
		return nil, nil
	}
	return r, nil
}

func (e *engine) enqueue(it item, sync bool) (*round, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, store.ErrClosed
	}
	if e.broken != nil {
		return nil, e.broken
	}
	e.queue = append(e.queue, it)
	r := e.round
	if sync {
		r.sync = true
		r.waiters++
		if r.waiters == r.want {
			select {
			case e.full <- struct{}{}:
			default:
			}
		}
	}
	if len(e.queue) == 1 {
		select {
		case e.wake <- struct{}{}:
		default:
		}
	}
	return r, nil
}

// maxGather bounds how long a round waits for its callers (gather), whatever the disk.
const maxGather = 10 * time.Millisecond

// run applies the queued batches round by round until Close; with WithSyncEvery, it syncs the logs every
// interval too.
func (e *engine) run() {
	defer close(e.exited)
	tick := e.ticks
	if e.every > 0 && tick == nil {
		t := time.NewTicker(e.every)
		defer t.Stop()
		tick = t.C
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var items []item
	for {
		select {
		case <-e.wake:
		case <-tick:
			e.syncLogs()
			continue
		}
		e.gather(timer)
		e.mu.Lock()
		items, e.queue = e.queue, items[:0]
		r := e.round
		if len(items) > 0 {
			e.round = newRound()
		}
		closing := e.closed
		e.mu.Unlock()
		if len(items) > 0 {
			r.err = e.apply(items, r.sync || closing)
			e.expect(r.waiters)
			close(r.done)
			clear(items)
		}
		if closing {
			e.syncLogs()
			e.mu.Lock()
			e.round.err = store.ErrClosed
			close(e.round.done)
			e.mu.Unlock()
			return
		}
	}
}

// expect sets how many commits that wait for a sync the next round should gather (gather), as a round
// ends, before it wakes its waiters: those that arrived while it was written and synced, and the round's
// own waiters, who may come back.
func (e *engine) expect(waiters int) {
	if e.every > 0 || waiters == 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	select {
	case <-e.full: // a signal of an earlier round, which did not wait for it
	default:
	}
	e.round.want = e.round.waiters + waiters
}

// gather waits, before a round starts, for the callers that the last round woke to commit again: a round
// that started at once would leave them to the next one, so that callers would take turns, each sync
// carrying half of them. It waits until the round holds the commits that expect asked for, or for half the
// time a synced round takes (its moving average, at most maxGather), whichever comes first: a caller that
// does not come back costs a round half a sync's time at most. With WithSyncEvery, whose rounds do not
// wait for the disk, it does not wait.
func (e *engine) gather(timer *time.Timer) {
	window := min(e.latency/2, maxGather)
	if window <= 0 {
		return
	}
	e.mu.Lock()
	r := e.round
	wait := !e.closed && len(e.queue) > 0 && r.want > 0 && r.waiters < r.want
	e.mu.Unlock()
	if !wait {
		return
	}
	timer.Reset(window)
	select {
	case <-e.full:
	case <-timer.C:
	}
	timer.Stop()
}

// apply writes a round's batches to Pebble, in order, as one batch, with a sync when the round asks for
// one, and starts its scans after the batches committed before them.
func (e *engine) apply(items []item, sync bool) error {
	e.mu.Lock()
	err := e.broken
	e.mu.Unlock()
	failed := err != nil
	start := time.Now()
	var buf [16]*batch // a round's batches are few
	pending := buf[:0]
	wrote := false
	for _, it := range items {
		switch {
		case it.b != nil:
			if err == nil && it.b.pb.Count() > 0 {
				pending = append(pending, it.b)
				continue // released once written
			}
			e.release(it.b)
		case it.scan != nil && err == nil:
			err = e.write(pending, pebble.NoSync, &wrote)
			for _, b := range pending {
				e.release(b)
			}
			pending = pending[:0]
			if err == nil {
				e.startScan(it.scan)
			}
		}
	}
	opts := pebble.NoSync
	if sync {
		opts = pebble.Sync
	}
	if err == nil {
		err = e.write(pending, opts, &wrote)
		if err == nil && sync && !wrote {
			err = e.guard(func() error { return e.db.LogData(nil, pebble.Sync) }) // nothing written: sync what was
		}
	}
	for _, b := range pending {
		e.release(b)
	}
	switch {
	case err == nil && sync && e.every == 0:
		e.synced(time.Since(start))
	case err == nil && wrote:
		e.unsynced = true
	case err != nil && !failed:
		e.fail(err)
		e.mu.Lock()
		err = e.broken
		e.mu.Unlock()
	}
	return err
}

// write applies batches to Pebble as one write, with opts, and marks wrote when it wrote something. With
// WithSyncEvery, a sync writes the log to the operating system without syncing it (relaxedFS).
func (e *engine) write(batches []*batch, opts *pebble.WriteOptions, wrote *bool) error {
	var pb *pebble.Batch
	switch len(batches) {
	case 0:
		return nil
	case 1:
		pb = batches[0].pb
	default:
		if e.merged == nil {
			e.merged = e.db.NewBatch()
		}
		pb = e.merged
		defer pb.Reset()
		for _, b := range batches {
			if err := pb.Apply(b.pb, nil); err != nil {
				return err
			}
		}
	}
	*wrote = true
	err := e.guard(func() error { return e.db.Apply(pb, opts) })
	if err == nil {
		e.applied = lastSeqOf(pb)
	}
	return err
}

// syncLogs syncs the logs, with WithSyncEvery, when a round was written since they were last synced.
func (e *engine) syncLogs() {
	if e.relaxed == nil || !e.unsynced || e.failed() {
		return
	}
	start := time.Now()
	synced, err := e.relaxed.syncLogs()
	if err != nil {
		e.fail(fmt.Errorf("sync of the log: %w", err))
		return
	}
	e.logSynced = synced
	e.unsynced = false
	e.synced(time.Since(start))
}

// synced runs after each successful sync of the write-ahead log, on run's goroutine: a synced round's (it
// took took to write and sync), or with WithSyncEvery the logs' sync every interval.
func (e *engine) synced(took time.Duration) {
	e.markSynced(e.applied) // what the sync made durable: record it (syncmark.go)
	e.health.syncs.Add(1)
	if e.latency == 0 {
		e.latency = took
	} else {
		e.latency += (took - e.latency) / 8
	}
}

// fatal is the panic of logger.Fatalf: Pebble calls it when its commit pipeline cannot go on.
type fatal struct{ err error }

// guard calls f, turning a fatal error of Pebble's into an error. Pebble's commit pipeline is left broken
// by one, so the engine commits nothing more after it.
func (e *engine) guard(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			ft, ok := r.(fatal)
			if !ok {
				panic(r)
			}
			err = ft.err
		}
	}()
	return f()
}

// guardName is the name of engine.guard in stacks.
var guardName = runtime.FuncForPC(reflect.ValueOf((*engine).guard).Pointer()).Name()

// guarded reports whether its caller runs under guard.
func guarded() bool {
	var pcs [64]uintptr
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs[:])])
	for {
		f, more := frames.Next()
		if f.Function == guardName {
			return true
		}
		if !more {
			return false
		}
	}
}

// fail makes the store refuse every later commit with err, and raises the fence, which stops every
// change of its files: fail-stop, as PostgreSQL does after a failed fsync. (While Pebble opens the store,
// the fence stays down: Open fails with Pebble's error, or the engine's first scan with err.)
func (e *engine) fail(err error) {
	if e.opened.Load() {
		e.fence.raise()
	}
	e.mu.Lock()
	first := e.broken == nil
	if first {
		e.broken = err // fifoq.Store names the directory
	}
	e.mu.Unlock()
	if first && e.opened.Load() {
		e.log.Error("durable: the store failed: it refuses every change until it is opened again", "dir", e.dir, "error", err.Error())
	} else if first {
		e.log.Debug("durable: the store failed while it opened", "dir", e.dir, "error", err.Error()) // Open returns it
	}
}

// failed reports whether the store refuses commits.
func (e *engine) failed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.broken != nil
}

// emptyFlush is the error of a flush that wrote no table, which is no failure (errEmptyTable in pebble/v2
// compaction.go).
const emptyFlush = "pebble: empty table"

// events are what the engine does on Pebble's events: a failed flush (a full disk) fails the store, which
// would otherwise take commits until its memtables filled up and then hang them; Pebble retries the flush
// at once, again and again, until the store is closed, so its errors are logged at Debug once the store
// failed. A damaged table is logged at Debug, and the read that met it returns ErrStoreCorrupt, naming it
// (Pebble's default calls Logger.Fatalf).
func (e *engine) events() *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: func(err error) {
			level := slog.LevelError
			if e.failed() {
				level = slog.LevelDebug
			}
			if !e.opened.Load() {
				level = slog.LevelDebug // Open returns it
			}
			e.log.Log(context.Background(), level, "durable: pebble background error", "dir", e.dir, "error", err.Error())
			e.log.Debug("durable: pebble background error, in detail", "dir", e.dir, "error", fmt.Sprintf("%+v", err))
		},
		FlushEnd: func(info pebble.FlushInfo) {
			if info.Err != nil && info.Err.Error() != emptyFlush {
				e.fail(fmt.Errorf("flush: %w", info.Err))
				if !e.opened.Load() {
					e.openFailed.signal(info.Err)
				}
			}
		},
		DataCorruption: func(info pebble.DataCorruptionInfo) {
			// The read that met it returns the error, which names the file: logged at Debug only.
			e.log.Debug("durable: pebble found a damaged file", "dir", e.dir, "file", info.Path, "error", fmt.Sprintf("%+v", info.Details))
		},
	}
}

// A scan reads a range of keys for a caller; run starts it after the batches committed before it.
type scan struct {
	lo, hi []byte
	fn     func(k, v []byte) error
	err    error
	done   chan struct{} // made by run when it starts the scan, closed by the scan's goroutine
}

// Scan queues a scan for run, which opens an iterator once the batches committed before are applied and
// hands it to a goroutine of its own, outside any synctest bubble, that calls fn.
func (e *engine) Scan(lo, hi []byte, fn func(k, v []byte) error) error {
	s := &scan{lo: lo, hi: hi, fn: fn}
	r, err := e.enqueue(item{scan: s}, false)
	if err != nil {
		return err
	}
	err = r.Wait()
	if s.done == nil { // not started: a batch before it failed
		return cmp.Or(err, store.ErrClosed)
	}
	<-s.done
	return s.err
}

// startScan runs s on a goroutine of its own; it runs on run's goroutine, so the channel it makes is made
// outside any bubble.
func (e *engine) startScan(s *scan) {
	s.done = make(chan struct{})
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: s.lo, UpperBound: s.hi})
	if err != nil {
		s.err = fmt.Errorf("durable: %s: %w", e.dir, err)
		close(s.done)
		return
	}
	e.scans.Add(1)
	go func() {
		defer e.scans.Done()
		defer close(s.done)
		for ok := it.First(); ok && s.err == nil; ok = it.Next() {
			v, err := it.ValueAndErr()
			if err != nil {
				s.err = err
				break
			}
			s.err = s.fn(it.Key(), v)
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

// logger passes Pebble's messages to slog. Pebble calls Fatalf when it cannot go on, and expects it not to
// return (its DefaultLogger exits the process):
//
//   - On a commit, under guard (a write or a sync of the log failed: DB.Apply in db.go), it panics with
//     fatal, which guard turns into the commit's error; the store refuses every commit after it.
//   - On one of Pebble's own goroutines, for a failed write of an I/O error (a flush's or a compaction's
//     MANIFEST write or sync: versionSet.UpdateVersionLocked in version_set.go), it fails the store and
//     returns, and Pebble's code goes on to return that error, as after a failed flush: the process goes on,
//     its queues refuse changes, and opening the directory again recovers from what is on disk.
//   - Otherwise (one of Pebble's consistency checks, with no error to return) it panics, which stops the
//     process, as Pebble's own logger would.
type logger struct {
	l *slog.Logger
	e *engine
}

func (l *logger) Infof(format string, args ...any) {
	l.l.Debug("pebble: "+fmt.Sprintf(format, args...), "dir", l.e.dir)
}

func (l *logger) Errorf(format string, args ...any) {
	l.l.Debug("pebble: "+fmt.Sprintf(format, args...), "dir", l.e.dir)
	l.l.Error("pebble: "+flatMessage(format, args), "dir", l.e.dir)
}

func (l *logger) Fatalf(format string, args ...any) {
	l.l.Debug("pebble: "+fmt.Sprintf(format, args...), "dir", l.e.dir) // the detail: stacks, with %+v
	err := fatalError(format, args)
	l.e.fail(err) // which logs it, once
	if guarded() || len(err.errs) == 0 {
		panic(fatal{err})
	}
}

// A fatalErr is the message of a Fatalf, which wraps the errors among its arguments (such as ENOSPC).
type fatalErr struct {
	msg  string
	errs []error
}

func fatalError(format string, args []any) *fatalErr {
	msg := flatMessage(format, args)
	if !strings.HasPrefix(msg, "pebble") {
		msg = "pebble: " + msg
	}
	e := &fatalErr{msg: msg}
	for _, a := range args {
		if err, ok := a.(error); ok {
			e.errs = append(e.errs, err)
		}
	}
	return e
}

func (e *fatalErr) Error() string   { return e.msg }
func (e *fatalErr) Unwrap() []error { return e.errs }

package durable_test

import (
	"bytes"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/durable"
	"github.com/fifoq/fifoq/storage"
)

// TestSyncEveryWhileRoundHeld: with WithSyncEvery, the sync every interval does not wait for a commit round
// that Pebble holds. Pebble holds a round when its memtables wait for a flush (a write stall), which a slow
// disk makes long; the round here is held in the write of the log. What was acknowledged before is synced
// on time meanwhile. Before, the store synced its logs on the goroutine that applies the rounds, so no
// sync came until the held round was done: a power cut during a stall lost what had been acknowledged more
// than an interval before it, as long before as the stall lasted (the power-loss test measured 0.3 s with
// an interval of 0.1 s and fsyncs of 30 ms). The test would wait for the tick's sync until its deadline
// then.
func TestSyncEveryWhileRoundHeld(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fs := &holdFS{FS: vfs.Default, held: make(chan struct{}), release: make(chan struct{}), marked: -1}
	ticks := durable.NewSyncTicks()
	var mu sync.Mutex
	var synced []time.Time // when each real sync that is done began
	st, err := durable.Open(dir, durable.WithFS(fs), durable.WithSyncEvery(time.Hour), durable.WithSyncTicks(ticks),
		durable.WithLogger(quiet), durable.WithSyncHook(func(began time.Time, done bool) {
			if done {
				mu.Lock()
				synced = append(synced, began)
				mu.Unlock()
			}
		}))
	require.NoError(t, err)
	q := openQueue(t, st, fifoq.NewManualClock(t0), "q")
	send(t, q, "a0") // synced at once: it reserves the queue's first block of sequence numbers (storage.Syncer)
	send(t, q, "a")
	acked := time.Now()

	fs.hold.Store(true)
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		send(t, q, "b") // held in the log's write, in Pebble
	}()
	<-fs.held
	before := fs.syncs.Load()
	taken := make(chan struct{})
	go func() {
		ticks.Tick()
		close(taken)
	}()
	var deadline <-chan time.Time
	if d, ok := t.Deadline(); ok {
		timer := time.NewTimer(time.Until(d) - 10*time.Second) // go test's -timeout, not a time a slow machine reaches
		defer timer.Stop()
		deadline = timer.C
	}
	select {
	case <-taken:
	case <-deadline:
		close(fs.release)
		require.FailNow(t, "no sync while a commit round was held: the store took no tick until the test's deadline")
	}
	require.Greater(t, fs.syncs.Load(), before, "the logs were synced while the round was held")
	mu.Lock()
	require.True(t, len(synced) > 0 && synced[len(synced)-1].After(acked), "a real sync began after a was acknowledged, and is done")
	mu.Unlock()
	select {
	case <-sent:
		require.FailNow(t, "the send of b returned while its write was held")
	default:
	}

	close(fs.release)
	<-sent
	require.NoError(t, st.Close())
	got, stage, err := reopen(t, dir)
	require.NoError(t, err, stage)
	require.Equal(t, []string{"a0", "a", "b"}, got)
}

// holdFS holds the writes of the write-ahead logs while hold is set, until release is closed, and counts
// their syncs.
type holdFS struct {
	vfs.FS
	hold    atomic.Bool
	held    chan struct{} // closed as the first write is held
	release chan struct{}
	once    sync.Once
	syncs   atomic.Int64

	mark     []byte     // set before the writes start: the writes that hold it are counted
	mu       sync.Mutex // over what follows
	writes   int        // writes of the logs
	marked   int        // the number of the first write that held mark, or -1
	lastSync int        // how many writes came before the last sync
}

func (fs *holdFS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil || !strings.HasSuffix(name, ".log") {
		return f, err
	}
	return &holdFile{File: f, fs: fs}, nil
}

func (fs *holdFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	return fs.wrap(name, f, err)
}

func (fs *holdFS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, category, opts...)
	return fs.wrap(name, f, err)
}

func (fs *holdFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	return fs.wrap(newname, f, err)
}

func (fs *holdFS) Unwrap() vfs.FS { return fs.FS }

// holdFile is a write-ahead log of a holdFS.
type holdFile struct {
	vfs.File
	fs *holdFS
}

func (f *holdFile) wait() {
	if f.fs.hold.Load() {
		f.fs.once.Do(func() { close(f.fs.held) })
		<-f.fs.release
	}
}

func (f *holdFile) wrote(p []byte) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	f.fs.writes++
	if f.fs.marked < 0 && f.fs.mark != nil && bytes.Contains(p, f.fs.mark) {
		f.fs.marked = f.fs.writes
	}
}

func (f *holdFile) synced() {
	f.fs.syncs.Add(1)
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	f.fs.lastSync = f.fs.writes
}

func (f *holdFile) Write(p []byte) (int, error) {
	f.wait()
	n, err := f.File.Write(p)
	f.wrote(p)
	return n, err
}

func (f *holdFile) WriteAt(p []byte, off int64) (int, error) {
	f.wait()
	n, err := f.File.WriteAt(p, off)
	f.wrote(p)
	return n, err
}

func (f *holdFile) Sync() error {
	err := f.File.Sync()
	f.synced()
	return err
}

func (f *holdFile) SyncData() error {
	err := f.File.SyncData()
	f.synced()
	return err
}

// TestSyncRoundEndsWithScan: a commit round whose synced batch is followed by a scan, and nothing after,
// syncs the log before the batch's commit returns. The round writes the batches before a scan without a
// sync (the scan must see them), and the sync rides on the last write; when none came after the scan, no
// sync was made, and the commit returned with its batch written and not synced: a power cut would lose it.
func TestSyncRoundEndsWithScan(t *testing.T) {
	t.Parallel()
	fs := &holdFS{FS: vfs.Default, held: make(chan struct{}), release: make(chan struct{}), marked: -1}
	e, err := durable.OpenEngine(t.TempDir(), durable.WithFS(fs), durable.WithLogger(quiet))
	require.NoError(t, err)
	defer func() { require.NoError(t, e.Close()) }()
	commit := func(key string) storage.Ticket {
		b := e.NewBatch()
		b.Set([]byte(key), []byte("v"))
		tk, err := e.Commit(b, true)
		require.NoError(t, err)
		return tk
	}

	// A first round, held in the log's write, so that the next round gathers a synced batch, then a scan.
	fs.hold.Store(true)
	first := commit("a")
	<-fs.held
	fs.mark = []byte("the-key-of-b")
	second := commit(string(fs.mark))
	scanned := make(chan error, 1)
	go func() { scanned <- e.Scan(nil, []byte{0xff}, func(k, v []byte) error { return nil }) }()
	for durable.Queued(e) < 2 {
		runtime.Gosched() // the scan is queued, behind b
	}
	fs.hold.Store(false)
	close(fs.release)
	require.NoError(t, first.Wait())
	require.NoError(t, second.Wait())
	fs.mu.Lock()
	marked, synced := fs.marked, fs.lastSync
	fs.mu.Unlock()
	require.True(t, marked > 0 && synced >= marked, "b was written to the log (write %d) and synced after (the last sync came after write %d) before its commit returned",
		marked, synced)
	require.NoError(t, <-scanned)
}

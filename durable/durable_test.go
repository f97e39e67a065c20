package durable_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/durable"
	"github.com/fifoq/fifoq/storage"
)

// Package durable's tests, on the real Pebble engine (issue 10, item 6): a directory in use is ErrLocked;
// a full disk fails the store, not the process, and loses nothing acknowledged; Close. The damaged stores
// are in corrupt_test.go.

// quiet is the logger of the stores whose Pebble messages the tests do not read.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// t0 is where every test's manual clock starts: queues never wait on real time.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// openStore opens the store in dir, quiet unless opts say otherwise.
func openStore(t *testing.T, dir string, opts ...durable.Option) *fifoq.Store {
	t.Helper()
	st, err := durable.Open(dir, append([]durable.Option{durable.WithLogger(quiet)}, opts...)...)
	require.NoError(t, err, "Open(%s)", dir)
	return st
}

// openStoreEngine is openStore, which also returns the store's engine (for durable.Flush and Compact).
func openStoreEngine(t *testing.T, dir string, opts ...durable.Option) (*fifoq.Store, storage.Engine) {
	t.Helper()
	st, e, err := durable.OpenWithEngine(dir, append([]durable.Option{durable.WithLogger(quiet)}, opts...)...)
	require.NoError(t, err, "Open(%s)", dir)
	return st, e
}

// openQueue opens the queue of that name in st, on clock.
func openQueue(t *testing.T, st *fifoq.Store, clock fifoq.Clock, name string) *fifoq.Queue {
	t.Helper()
	q, err := fifoq.New(name, fifoq.WithStore(st), fifoq.WithClock(clock))
	require.NoError(t, err, "New(%s)", name)
	return q
}

// send sends bodies to q, one call each.
func send(t *testing.T, q *fifoq.Queue, bodies ...string) {
	t.Helper()
	for _, b := range bodies {
		m := fifoq.Message{Body: b}
		if q.FIFO() {
			m.GroupID, m.DeduplicationID = "g", b
		}
		_, err := q.Send(context.Background(), m)
		require.NoError(t, err, "Send(%s)", b)
	}
}

// receive receives one message from q.
func receive(t *testing.T, q *fifoq.Queue) fifoq.Delivery {
	t.Helper()
	ds, err := q.Receive(context.Background(), fifoq.ReceiveOptions{})
	require.NoError(t, err)
	require.Len(t, ds, 1, "Receive")
	return ds[0]
}

// state lists q's messages in send order as body/state/receive count.
func state(q *fifoq.Queue) []string {
	var out []string
	for m := range q.Messages() {
		out = append(out, fmt.Sprintf("%s/%v/%d", m.Body, m.State, m.ReceiveCount))
	}
	return out
}

// bodies lists the bodies of q's messages in send order.
func bodies(q *fifoq.Queue) []string {
	out := []string{}
	for m := range q.Messages() {
		out = append(out, m.Body)
	}
	return out
}

// A second Open of a directory in this process fails with ErrLocked, naming the directory; once the first
// store is closed, it opens.
func TestOpenLockedInProcess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := openStore(t, dir)
	clock := fifoq.NewManualClock(t0)
	send(t, openQueue(t, st, clock, "q"), "a")

	_, err := durable.Open(dir, durable.WithLogger(quiet))
	require.ErrorIs(t, err, durable.ErrLocked)
	require.ErrorContains(t, err, dir)
	require.NotErrorIs(t, err, fifoq.ErrStoreCorrupt)

	require.NoError(t, st.Close())
	st = openStore(t, dir)
	require.Equal(t, []string{"a"}, bodies(openQueue(t, st, clock, "q")))
	require.NoError(t, st.Close())
}

// lockChildDir is the environment variable that makes TestLockHolderProcess the child of
// TestOpenLockedByAnotherProcess, holding the store in the directory it names.
const lockChildDir = "FIFOQ_DURABLE_LOCK_CHILD_DIR"

// A directory that another process has open fails with ErrLocked, naming the directory. The other process
// is this test binary run again (TestLockHolderProcess): it opens the store, sends a message, says "ready"
// and holds the store until its stdin closes. Once it has exited, the directory opens, with its message.
func TestOpenLockedByAnotherProcess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHolderProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), lockChildDir+"="+dir)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "the child's first line; its stderr: %s", &stderr)
	require.Equal(t, "ready\n", line, "the child's stderr: %s", &stderr)

	_, err = durable.Open(dir, durable.WithLogger(quiet))
	require.ErrorIs(t, err, durable.ErrLocked, "while the child holds %s", dir)
	require.ErrorContains(t, err, dir)

	require.NoError(t, stdin.Close())
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	require.NoError(t, cmd.Wait(), "the child's stderr: %s", &stderr)

	st := openStore(t, dir)
	require.Equal(t, []string{"from the child"}, bodies(openQueue(t, st, fifoq.NewManualClock(t0), "q")))
	require.NoError(t, st.Close())
}

// TestLockHolderProcess is the child of TestOpenLockedByAnotherProcess; run otherwise, it does nothing.
func TestLockHolderProcess(t *testing.T) {
	dir := os.Getenv(lockChildDir)
	if dir == "" {
		return
	}
	st := openStore(t, dir)
	send(t, openQueue(t, st, fifoq.NewManualClock(t0), "q"), "from the child")
	fmt.Println("ready")
	_, err := io.Copy(io.Discard, os.Stdin) // until the parent closes it
	require.NoError(t, err)
	require.NoError(t, st.Close())
}

// Close makes everything durable and can be called twice: the second returns nil. The queues refuse changes
// after it with ErrStoreClosed, while their reads go on; opening the directory again shows every change.
func TestClose(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	clock := fifoq.NewManualClock(t0)
	st := openStore(t, dir)
	q := openQueue(t, st, clock, "q.fifo")
	send(t, q, "a", "b", "c")
	d := receive(t, q)
	require.NoError(t, q.Delete(ctx, d.ReceiptHandle))
	receive(t, q)
	want := []string{"b/in flight/1", "c/visible/0"}

	require.NoError(t, st.Close())
	require.NoError(t, st.Close(), "a second Close")
	_, err := q.Send(ctx, fifoq.Message{Body: "d", GroupID: "g", DeduplicationID: "d"})
	require.ErrorIs(t, err, fifoq.ErrStoreClosed)
	_, err = q.Receive(ctx, fifoq.ReceiveOptions{})
	require.ErrorIs(t, err, fifoq.ErrStoreClosed)
	require.ErrorIs(t, q.Purge(ctx), fifoq.ErrStoreClosed)
	_, err = fifoq.New("r", fifoq.WithStore(st))
	require.ErrorIs(t, err, fifoq.ErrStoreClosed)
	require.Equal(t, fifoq.Stats{Visible: 1, InFlight: 1}, q.Stats(), "reads go on")
	require.Equal(t, want, state(q), "reads go on")

	st = openStore(t, dir)
	require.Equal(t, want, state(openQueue(t, st, clock, "q.fifo")))
	require.NoError(t, st.Close())
}

// Fault modes of a faultFS.
const (
	healthy    int32 = iota
	diskFull         // writes, syncs and file creations fail with ENOSPC
	syncsFail        // syncs fail with ENOSPC; writes reach the page cache
	tablesWait       // making a table file waits until the test lets it go on
)

// faultFS is a vfs.FS whose files fail, from the moment the test sets its mode, as a full disk's do. Only
// the files that hit accepts are affected (all when it is nil).
type faultFS struct {
	vfs.FS
	mode atomic.Int32
	hit  func(name string) bool

	faults  atomic.Int64  // errors returned
	faulted chan struct{} // if not nil, signalled (without blocking) at each error returned
	waiting chan struct{} // tablesWait: closed once a table file waits
	goOn    chan struct{} // tablesWait: closed by the test to let them go on
	once    sync.Once
}

func newFaultFS(hit func(name string) bool) *faultFS {
	return &faultFS{FS: vfs.Default, hit: hit, waiting: make(chan struct{}), goOn: make(chan struct{})}
}

// fault returns the error that an operation on the file name fails with, or nil.
func (fs *faultFS) fault(name string, sync bool) error {
	m := fs.mode.Load()
	if (m != diskFull && (m != syncsFail || !sync)) || (fs.hit != nil && !fs.hit(name)) {
		return nil
	}
	fs.faults.Add(1)
	select {
	case fs.faulted <- struct{}{}:
	default:
	}
	op := "write"
	if sync {
		op = "sync"
	}
	return &os.PathError{Op: op, Path: name, Err: syscall.ENOSPC}
}

func (fs *faultFS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return f, err
	}
	return &faultFile{File: f, fs: fs, name: name}, nil
}

func (fs *faultFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	if fs.mode.Load() == tablesWait && strings.HasSuffix(name, ".sst") {
		fs.once.Do(func() { close(fs.waiting) })
		<-fs.goOn
	}
	if err := fs.fault(name, false); err != nil {
		return nil, err
	}
	f, err := fs.FS.Create(name, category)
	return fs.wrap(name, f, err)
}

func (fs *faultFS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, category, opts...)
	return fs.wrap(name, f, err)
}

func (fs *faultFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	if err := fs.fault(newname, false); err != nil {
		return nil, err
	}
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	return fs.wrap(newname, f, err)
}

func (fs *faultFS) Unwrap() vfs.FS { return fs.FS }

// faultFile is a file of a faultFS.
type faultFile struct {
	vfs.File
	fs   *faultFS
	name string
}

func (f *faultFile) Write(p []byte) (int, error) {
	if err := f.fs.fault(f.name, false); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.fault(f.name, false); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

func (f *faultFile) Preallocate(off, n int64) error {
	if err := f.fs.fault(f.name, false); err != nil {
		return err
	}
	return f.File.Preallocate(off, n)
}

func (f *faultFile) Sync() error {
	if err := f.fs.fault(f.name, true); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *faultFile) SyncData() error {
	if err := f.fs.fault(f.name, true); err != nil {
		return err
	}
	return f.File.SyncData()
}

func (f *faultFile) SyncTo(length int64) (bool, error) {
	if err := f.fs.fault(f.name, true); err != nil {
		return false, err
	}
	return f.File.SyncTo(length)
}

// logHandler is a slog.Handler that counts the records at each level, and keeps the messages of those at
// Error.
type logHandler struct {
	mu     sync.Mutex
	errors []string
}

func (h *logHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *logHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logHandler) WithGroup(string) slog.Handler            { return h }
func (h *logHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		h.mu.Lock()
		h.errors = append(h.errors, r.Message)
		h.mu.Unlock()
	}
	return nil
}

func (h *logHandler) logged() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.errors)
}

// A full disk fails the store, never the process: the call under way returns an error that is both
// ErrStoreFailed and ENOSPC; from then on every change of every queue of the store fails, while Stats and
// Messages go on; Close closes the files and returns the error that failed the store; and the directory,
// opened again on a disk with room, holds every change that was acknowledged.
//
// The disk fills where it would first be met: the write or the sync of the write-ahead log (on a commit:
// Pebble calls Logger.Fatalf, which durable turns into the commit's error), or a table file or the
// MANIFEST, written by one of Pebble's own goroutines when it flushes a memtable (a failed flush fails the
// store; a failed MANIFEST write or sync makes Pebble call Fatalf on that goroutine, which fails the store
// and returns). Pebble retries a failed flush at once, again and again: durable's fence (fence.go) keeps
// the retries from changing the files, which after a failed MANIFEST sync would add the same keys twice
// and make Pebble panic when it opens the store again.
func TestDiskFull(t *testing.T) {
	t.Parallel()
	isLog := func(name string) bool { return strings.HasSuffix(name, ".log") }
	isTable := func(name string) bool { return strings.HasSuffix(name, ".sst") }
	isManifest := func(name string) bool { return strings.HasPrefix(filepath.Base(name), "MANIFEST-") }
	for _, tc := range []struct {
		name  string
		mode  int32
		hit   func(string) bool
		flush bool // the fault is met by a flush: send until a send fails
	}{
		{name: "log write", mode: diskFull, hit: isLog},
		{name: "log sync", mode: syncsFail, hit: isLog},
		{name: "every file", mode: diskFull},
		{name: "table", mode: diskFull, hit: isTable, flush: true},
		{name: "manifest", mode: diskFull, hit: isManifest, flush: true},
		{name: "table sync", mode: syncsFail, hit: isTable, flush: true},
		{name: "manifest sync", mode: syncsFail, hit: isManifest, flush: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dir := t.TempDir()
			fs := newFaultFS(tc.hit)
			logs := &logHandler{}
			clock := fifoq.NewManualClock(t0)
			st, err := durable.Open(dir, durable.WithFS(fs), durable.WithMemTableSize(64<<10),
				durable.WithLogger(slog.New(logs)))
			require.NoError(t, err)
			q := openQueue(t, st, clock, "q")
			other := openQueue(t, st, clock, "other")

			// Acknowledged before the disk fills: a receive, a delete, sends.
			send(t, q, "a", "b")
			inFlight := receive(t, q)
			require.Equal(t, "a", inFlight.Body)
			require.NoError(t, q.Delete(ctx, receive(t, q).ReceiptHandle))
			send(t, q, "c")
			send(t, other, "x")
			acked := []string{"a/in flight/1", "c/visible/0"}

			fs.mode.Store(tc.mode)
			var failed error
			var lost string // the body of the send that failed
			for i := 0; failed == nil; i++ {
				require.Less(t, i, 5000, "no send failed with the disk full")
				lost = "lost"
				if tc.flush {
					lost = fmt.Sprintf("%s-%d", strings.Repeat("m", 1000), i)
				}
				if _, failed = q.Send(ctx, fifoq.Message{Body: lost}); failed == nil {
					require.True(t, tc.flush, "a send to a full disk succeeded")
					acked = append(acked, lost+"/visible/0")
				}
			}
			require.ErrorIs(t, failed, fifoq.ErrStoreFailed)
			require.ErrorIs(t, failed, syscall.ENOSPC)
			require.Positive(t, fs.faults.Load())

			// Fail-stop: every change of every queue fails.
			_, err = other.Send(ctx, fifoq.Message{Body: "y"})
			require.ErrorIs(t, err, fifoq.ErrStoreFailed, "another queue")
			require.ErrorIs(t, err, syscall.ENOSPC)
			_, err = q.Receive(ctx, fifoq.ReceiveOptions{})
			require.ErrorIs(t, err, fifoq.ErrStoreFailed)
			require.ErrorIs(t, q.Delete(ctx, inFlight.ReceiptHandle), fifoq.ErrStoreFailed)
			require.ErrorIs(t, q.Purge(ctx), fifoq.ErrStoreFailed)
			_, err = fifoq.New("new", fifoq.WithStore(st))
			require.ErrorIs(t, err, fifoq.ErrStoreFailed)
			require.ErrorIs(t, st.DeleteQueue("other"), fifoq.ErrStoreFailed)

			// Reads go on, showing memory: the failed send is there, as it was visible before it failed.
			got := state(q)
			require.Equal(t, acked, got[:len(acked)], "Messages after the failure")
			require.Equal(t, 1, q.Stats().InFlight)
			require.Equal(t, []string{"x/visible/0"}, state(other))
			require.Equal(t, []string{"other", "q"}, st.Queues())

			err = st.Close()
			require.ErrorIs(t, err, fifoq.ErrStoreFailed, "Close of a failed store")
			require.ErrorIs(t, err, syscall.ENOSPC)
			require.NoError(t, st.Close(), "a second Close")
			require.NotEmpty(t, logs.logged(), "the failure is logged")

			// On a disk with room: everything acknowledged, and nothing else but the send that failed,
			// if its write reached the disk before its sync failed (after a flush failed, the store
			// refuses the syncs of the commits under way).
			fs.mode.Store(healthy)
			st = openStore(t, dir)
			got = state(openQueue(t, st, clock, "q"))
			if (tc.mode == syncsFail || tc.flush) && len(got) == len(acked)+1 {
				require.Equal(t, lost+"/visible/0", got[len(acked)], "the send that failed")
				got = got[:len(acked)]
			}
			require.Equal(t, acked, got, "after reopening")
			require.Equal(t, []string{"x/visible/0"}, state(openQueue(t, st, clock, "other")))
			require.NoError(t, st.Close())
		})
	}
}

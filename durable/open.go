package durable

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/fifoq/fifoq"
)

// What Open does so that a store that cannot be opened fails at once, with one line that names the file
// and the cause, and leaves nothing behind.

// openDB is pebble.Open, but it returns once a flush fails while Pebble opens the store. Pebble flushes the
// memtables it recovered from the logs before its Open returns, and retries a failed flush at once, again
// and again, while Open waits for it (DB.Open in pebble/v2 open.go, then DB.flush in compaction.go): on a
// full disk it would never return. openDB raises the fence with a sandbox (sandbox.go), so that the next
// retry succeeds in memory, changing no file of the disk, and Pebble's Open returns; it closes the store
// that Open returned, so that nothing of it is left behind, and releases the directory's lock, so that
// the store can be opened again, in this process too, once the disk has room.
func (e *engine) openDB(dir string, opts *pebble.Options) (*pebble.DB, error) {
	type result struct {
		db  *pebble.DB
		err error
	}
	done := make(chan result, 1)
	go func() {
		db, err := pebble.Open(dir, opts)
		done <- result{db, err}
	}()
	select {
	case r := <-done:
		return r.db, r.err
	case <-e.openFailed.c:
	}
	select {
	case r := <-done: // Open returned as well
		if r.err == nil {
			return r.db, nil
		}
		return nil, r.err
	default:
	}
	e.fence.sandbox.Store(newSandbox(opts.FS.(*fenceFS).FS))
	e.fence.raise()
	closeDB := func(r result) {
		if r.db != nil {
			_ = e.guard(r.db.Close)
		}
	}
	wait := time.NewTimer(sandboxWait)
	defer wait.Stop()
	select {
	case r := <-done:
		closeDB(r)
	case <-wait.C: // not expected: every change succeeds in the sandbox
		e.log.Warn("durable: the store that a failed Open left behind did not end: it is left running", "dir", dir, "waited", sandboxWait)
		go func() { closeDB(<-done) }()
	}
	e.fence.releaseLock()
	return nil, fmt.Errorf("the records recovered from its logs cannot be written to a table file: %w", e.openFailed.err)
}

// sandboxWait bounds how long a failed Open waits for Pebble's Open to end in the sandbox, which takes
// milliseconds: beyond it, Open returns and leaves it running.
const sandboxWait = 10 * time.Second

// onceSignal is closed, once, with the error of the first failed flush while the store opens.
type onceSignal struct {
	once sync.Once
	c    chan struct{}
	err  error
}

func (s *onceSignal) signal(err error) {
	s.once.Do(func() {
		s.err = err
		close(s.c)
	})
}

// onceCloser closes a lock once, whether Pebble or openDB closes it first.
type onceCloser struct {
	once sync.Once
	c    io.Closer
	err  error
}

func (l *onceCloser) Close() error {
	l.once.Do(func() { l.err = l.c.Close() })
	return l.err
}

// Lock takes the directory's lock for Pebble, keeping it so that openDB can release it.
func (fs *fenceFS) Lock(name string) (io.Closer, error) {
	c, err := fs.FS.Lock(name)
	if err != nil {
		return nil, err
	}
	l := &onceCloser{c: c}
	fs.f.lock.Store(l)
	return l, nil
}

// releaseLock releases the lock that Pebble took, if any.
func (f *fence) releaseLock() {
	if l := f.lock.Load(); l != nil {
		_ = l.Close()
	}
}

// madeDirs returns the directories that MkdirAll(dir) would make, the outermost first: those of the path
// that do not exist.
func madeDirs(fs vfs.FS, dir string) []string {
	var out []string
	for d := filepath.Clean(dir); ; {
		if _, err := fs.Stat(d); !errors.Is(err, os.ErrNotExist) {
			break
		}
		out = append(out, d)
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	slices.Reverse(out)
	return out
}

// removeMade removes the directories that a failed Open made, with what it put in them: a failed start
// leaves no new directory behind.
func removeMade(fs vfs.FS, made []string, log *slog.Logger) {
	if len(made) == 0 {
		return
	}
	if err := fs.RemoveAll(made[0]); err != nil {
		log.Debug("durable: removing the directory that a failed Open made", "dir", made[0], "error", err.Error())
	}
}

// checkOptions refuses a store whose latest OPTIONS file does not parse, naming it: Pebble's error names no
// file. (Pebble checks the options of the latest OPTIONS file against its own; durable always opens with
// the same ones.)
func checkOptions(fs vfs.FS, dir string, opts *pebble.Options) error {
	names, err := fs.List(dir)
	if err != nil {
		return nil // Pebble says what is wrong
	}
	latest := ""
	for _, n := range names {
		if strings.HasPrefix(n, "OPTIONS-") && n > latest {
			latest = n
		}
	}
	if latest == "" {
		return nil
	}
	path := fs.PathJoin(dir, latest)
	b, err := readFile(fs, path)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", fifoq.ErrStoreCorrupt, path, err)
	}
	if err := opts.CheckCompatibility(dir, string(b)); err != nil {
		return fmt.Errorf("%w: %s: %w", fifoq.ErrStoreCorrupt, path, oneLine(err))
	}
	return nil
}

// missingFormatMarker names the file that Pebble's ErrDBNotPristine is about when a store holds a
// MANIFEST but no format version marker: Pebble takes it for a store whose making a crash cut short, and
// refuses it without naming the file.
func missingFormatMarker(fs vfs.FS, dir string) string {
	names, err := fs.List(dir)
	if err != nil {
		return ""
	}
	manifest, format := false, false
	for _, n := range names {
		manifest = manifest || strings.HasPrefix(n, "marker.manifest.")
		format = format || strings.HasPrefix(n, "marker.format-version.")
	}
	if manifest && !format {
		return fs.PathJoin(dir, "marker.format-version.*")
	}
	return ""
}

// oneLine is err on one line, for errors (of Pebble's, made with cockroachdb/errors) whose message may hold
// line breaks: the detail goes to the Debug log, not to the operator's terminal.
// It drops the placeholder that cockroachdb/errors writes for a detail it keeps from Error's message
// ("<corruption detail carrier>", of the errors of pebble.IsCorruptionError).
func oneLine(err error) error {
	msg := err.Error()
	if !strings.ContainsAny(msg, "\r\n") && !strings.Contains(msg, detailCarrier) {
		return err
	}
	msg = strings.ReplaceAll(msg, detailCarrier, "")
	return &flatError{msg: strings.Join(strings.Fields(msg), " "), err: err}
}

// A flatError is an error whose message is put on one line; it still wraps the error.
type flatError struct {
	msg string
	err error
}

func (e *flatError) Error() string { return e.msg }
func (e *flatError) Unwrap() error { return e.err }

// flatMessage formats a message of Pebble's on one line, with the errors among args as their Error says:
// Pebble formats some with %+v (base.MustExist in internal/base/filenames.go), which writes their stacks.
func flatMessage(format string, args []any) string {
	format = strings.ReplaceAll(format, "%+v", "%v")
	return strings.Join(strings.Fields(fmt.Sprintf(format, args...)), " ")
}

package durable

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime"
	"strings"

	"github.com/cockroachdb/pebble/v2"
)

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
// the fence stays down: Open fails with Pebble's error, or the engine's first scan with err.) It closes the
// engine's Failed channel, so that the fifoq.Store over it is failed at once (its Failed closed, its Err
// set) even when no queue writes: a failure on one of Pebble's own goroutines (a flush, a compaction) shows
// on an idle store. It takes no lock but the engine's, for a moment: Pebble calls it from its event
// listener, which holds Pebble's own.
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
	if first {
		close(e.failedCh) // fifoq.Store.Failed
	}
}

// Failed returns a channel that is closed when the engine breaks: a write or a sync failed, in a commit or
// on one of Pebble's own goroutines (a flush, a compaction), so that fifoq.Store.Failed says so on an idle
// store too.
func (e *engine) Failed() <-chan struct{} { return e.failedCh }

// failed reports whether the store refuses commits.
func (e *engine) failed() bool { return e.brokenErr() != nil }

// brokenErr returns the error that broke the engine, or nil.
func (e *engine) brokenErr() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.broken
}

// events are what the engine does on Pebble's events: a failed flush (a full disk) fails the store, which
// would otherwise take commits until its memtables filled up and then hang them; Pebble retries the flush
// at once, again and again, until the store is closed, so its errors are logged at Debug once the store
// failed. A failed compaction fails the store too: it is a write of the store's files that failed, on a
// disk that is full or failing, which fail-stop covers wherever it happens; Pebble would retry it without
// end ("TODO(peter): count consecutive compaction errors and backoff", DB.handleCompactFailure in
// compaction.go), and the fence keeps the files as they are. A compaction that Pebble cancelled is no
// failure. A damaged table is logged at Debug, and the read that met it returns ErrStoreCorrupt, naming it
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
			if info.Err != nil && !pebbleSays(info.Err, textEmptyTable) {
				e.fail(fmt.Errorf("flush: %w", info.Err))
				if !e.opened.Load() {
					e.openFailed.signal(info.Err)
				}
			}
		},
		CompactionEnd: func(info pebble.CompactionInfo) {
			if info.Err != nil && !errors.Is(info.Err, pebble.ErrCancelledCompaction) {
				e.fail(fmt.Errorf("compaction: %w", info.Err))
			}
		},
		DataCorruption: func(info pebble.DataCorruptionInfo) {
			// The read that met it returns the error, which names the file: logged at Debug only.
			e.log.Debug("durable: pebble found a damaged file", "dir", e.dir, "file", info.Path, "error", fmt.Sprintf("%+v", info.Details))
		},
	}
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

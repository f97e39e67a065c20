package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/durable"
)

// The start-up of "serve --data-dir": each stage that can take long (opening the store, reading its
// queues) gives way to a signal, and a failed start leaves no new directory behind.

// errStopped is the error of a start that a signal stopped.
var errStopped = errors.New("stopped by a signal")

// interruptible runs f, and returns its error, unless ctx is done first: then it returns errStopped at once,
// leaving f to end on its own goroutine, and calls undo with f's result if f succeeds after all.
func interruptible[T any](ctx context.Context, f func() (T, error), undo func(T)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		go func() {
			if r := <-done; r.err == nil {
				undo(r.v)
			}
		}()
		var zero T
		return zero, errStopped
	}
}

// openStore opens the store in dir, or stops at a signal. It returns the directories it made (dir, and its
// parents that did not exist), for removeNew.
func openStore(ctx context.Context, dir string, opts ...durable.Option) (*fifoq.Store, []string, error) {
	made := newDirs(dir)
	st, err := interruptible(ctx, func() (*fifoq.Store, error) {
		return durable.Open(dir, opts...)
	}, func(st *fifoq.Store) { _ = st.Close() })
	if errors.Is(err, errStopped) {
		return nil, nil, fmt.Errorf("--data-dir %s: %w while opening the store", dir, err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("--data-dir: %w", err) // durable's errors name the directory or the file
	}
	return st, made, nil
}

// openCatalog reads the queues and topics of st, or stops at a signal.
func openCatalog(ctx context.Context, st *fifoq.Store, opts []catalog.Option) (*catalog.Catalog, error) {
	return interruptible(ctx, func() (*catalog.Catalog, error) { return catalog.Open(st, opts...) },
		func(c *catalog.Catalog) { _ = c.Close() })
}

// storeFailure returns the failure of st: nil while it works, and after Close; once a write or a sync
// failed, an error that wraps fifoq.ErrStoreFailed and the cause.
func storeFailure(st *fifoq.Store) error {
	if err := st.Err(); errors.Is(err, fifoq.ErrStoreFailed) {
		return err
	}
	return nil
}

// newDirs returns the directories of the path dir that do not exist, the outermost first.
func newDirs(dir string) []string {
	var out []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); !errors.Is(err, os.ErrNotExist) {
			break
		}
		out = append([]string{d}, out...)
		if filepath.Dir(d) == d {
			break
		}
	}
	return out
}

// removeNew removes the directories that a failed start made (made, from openStore), with the store it
// put there, once the store is closed; made is nil once the server has served.
func removeNew(made []string, logger *slog.Logger) {
	if len(made) == 0 {
		return
	}
	if err := os.RemoveAll(made[0]); err != nil {
		logger.Warn("could not remove the data directory of a failed start", "dir", made[0], "error", err.Error())
		return
	}
	logger.Info("removed the data directory of a failed start", "dir", made[0])
}

// oneLine is the message of err on one line, for stderr: Pebble's errors may hold line breaks.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// errorsAsText is the ReplaceAttr of the logger: an error is logged as its Error says, on one line. (The
// text handler formats other values with %+v, which writes the stacks of Pebble's errors.)
func errorsAsText(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindAny {
		if err, ok := a.Value.Any().(error); ok {
			return slog.String(a.Key, oneLine(err))
		}
	}
	return a
}

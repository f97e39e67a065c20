package fifoqtest_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/fifoqtest"
)

// fakeTB is a testing.TB that records what the helpers report instead of failing the test. FailNow and
// Fatalf only record: the helpers return right after calling them. Methods it does not define panic
// (the embedded TB is nil), which shows a helper calling one it should not.
type fakeTB struct {
	testing.TB

	mu       sync.Mutex // guards the fields below
	errors   []string   // Errorf and Fatalf messages
	fatal    bool       // Fatalf or FailNow was called
	logs     []string
	cleanups []func()
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	f.FailNow()
}

func (f *fakeTB) FailNow() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fatal = true
}

func (f *fakeTB) Failed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.errors) > 0 || f.fatal
}

func (f *fakeTB) Logf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}

func (f *fakeTB) Cleanup(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, fn)
}

// runCleanups runs the cleanups, last registered first, as testing does.
func (f *fakeTB) runCleanups() {
	f.mu.Lock()
	fns := slices.Clone(f.cleanups)
	f.cleanups = nil
	f.mu.Unlock()
	for _, fn := range slices.Backward(fns) {
		fn()
	}
}

// report returns the recorded failure messages, one after the other.
func (f *fakeTB) report() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.errors, "\n")
}

func (f *fakeTB) logged() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.logs, "\n")
}

// epoch is where manual clocks start.
var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// bothClocks runs f twice: inside a synctest bubble with the queues on the real clock (clock is empty),
// and outside one with the queues on a ManualClock (clock is its WithClock option). A scenario gives the
// same times under both.
func bothClocks(t *testing.T, f func(t *testing.T, clock []fifoq.Option)) {
	t.Helper()
	t.Run("synctest", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) { f(t, nil) })
	})
	t.Run("ManualClock", func(t *testing.T) {
		t.Parallel()
		f(t, []fifoq.Option{fifoq.WithClock(fifoq.NewManualClock(epoch))})
	})
}

// with returns the options of a queue on clock.
func with(clock []fifoq.Option, opts ...fifoq.Option) []fifoq.Option {
	return append(slices.Clone(clock), opts...)
}

// timeline describes each batch of r as "at: outcome [bodies]", at counted from start.
func timeline(r *fifoqtest.Result, start time.Time) []string {
	var lines []string
	for _, b := range r.Batches {
		lines = append(lines, fmt.Sprintf("%v: %s %q", b.At.Sub(start), b.Report.Outcome, b.Bodies()))
	}
	return lines
}

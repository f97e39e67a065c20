package fifoq

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// The deadlines of the calls a Batcher and a Consumer make to their source (see ConsumerOptions.SourceTimeout).

// errReceiveTimeout is what a receive that ran past its deadline, while the context of its Run or Next was
// not done, ends with: it counts as a receive that returned nothing.
var errReceiveTimeout = errors.New("fifoq: receive from the source timed out")

// sourceCalls are the contexts of the calls of one Run, or one Next, to a source.
type sourceCalls struct {
	// receive ends with the context of the Run, and maxWaitTime and the source timeout after a receive starts.
	receive callDeadlines
	// cleanup has the values of the Run's context, not its cancellation, and ends the source timeout after a
	// delete or a release starts: those settle batches that go on after the Run's context is done.
	cleanup callDeadlines
}

// newSourceCalls returns the contexts of calls to a source made for ctx, by clock, with timeout.
func newSourceCalls(ctx context.Context, clock Clock, timeout time.Duration) *sourceCalls {
	s := new(sourceCalls)
	s.receive.init(ctx, clock, maxWaitTime+timeout)
	s.cleanup.init(context.WithoutCancel(ctx), clock, timeout)
	return s
}

// stop ends the contexts handed out; no call may be using them.
func (s *sourceCalls) stop() {
	s.receive.stop()
	s.cleanup.stop()
}

// callDeadlines hands out the contexts of calls: derived from base, each ends at least bound after its call
// starts, and at most two grains (bound/16) more. The calls that start within one grain share a context and
// its timer, and take it without reading the clock: a timer marks the context stale a grain after it was
// made, and the next call makes another. A busy Consumer thus makes a context about once a grain, not one
// for each call, and an idle one none.
type callDeadlines struct {
	base  context.Context
	clock Clock
	bound time.Duration
	grain time.Duration

	fresh atomic.Pointer[callDeadline] // the context handed out now; nil once stale

	mu    sync.Mutex     // guards the fields below, and the making of a context
	live  []callDeadline // the contexts made whose deadline had not passed when the last was made
	timer Timer          // makes fresh stale
}

// A callDeadline is a context of callDeadlines.
type callDeadline struct {
	deadline time.Time
	ctx      context.Context
	cancel   context.CancelFunc
}

func (d *callDeadlines) init(base context.Context, clock Clock, bound time.Duration) {
	d.base, d.clock, d.bound = base, clock, bound
	d.grain = max(bound/32, 1)
}

// get returns the context of a call that starts now.
func (d *callDeadlines) get() context.Context {
	if c := d.fresh.Load(); c != nil {
		return c.ctx
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if c := d.fresh.Load(); c != nil {
		return c.ctx
	}
	now := d.clock.Now()
	passed := 0
	for _, l := range d.live {
		if l.deadline.After(now) {
			break
		}
		l.cancel() // its timer ended it; this frees it
		passed++
	}
	d.live = append(d.live[:0], d.live[passed:]...)
	// Handed out until the timer below marks it stale, a grain from now or, on a loaded machine, a little
	// later: the second grain keeps every deadline at least bound after its call starts.
	c := callDeadline{deadline: now.Add(d.bound + 2*d.grain)}
	c.ctx, c.cancel = withDeadline(d.base, d.clock, c.deadline)
	d.live = append(d.live, c)
	d.fresh.Store(&c)
	if d.timer == nil {
		d.timer = d.clock.AfterFunc(d.grain, func() { d.fresh.Store(nil) })
	} else {
		d.timer.Reset(d.grain)
	}
	return c.ctx
}

// stop ends the contexts handed out, and their timers; no call may be using them.
func (d *callDeadlines) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil {
		d.timer.Stop()
	}
	d.fresh.Store(nil)
	for _, l := range d.live {
		l.cancel()
	}
	d.live = nil
}

// withTimeout returns a copy of ctx that ends d from now by clock, and the function that releases it.
func withTimeout(ctx context.Context, clock Clock, d time.Duration) (context.Context, context.CancelFunc) {
	return withDeadline(ctx, clock, clock.Now().Add(d))
}

// withDeadline returns a copy of ctx that ends at t by clock, and the function that releases it. For the real
// clock (which is virtual in a testing/synctest bubble) that is context.WithDeadline; for another, such as a
// ManualClock, a timer of that clock ends it, so the deadline moves with the clock.
func withDeadline(ctx context.Context, clock Clock, t time.Time) (context.Context, context.CancelFunc) {
	if _, ok := clock.(realClock); ok {
		return context.WithDeadline(ctx, t)
	}
	cctx, cancel := context.WithCancelCause(ctx)
	timer := clock.AfterFunc(t.Sub(clock.Now()), func() { cancel(context.DeadlineExceeded) })
	return clockDeadline{cctx, t}, func() {
		timer.Stop()
		cancel(context.Canceled)
	}
}

// clockDeadline is a context that a timer of a Clock ends at deadline, with context.DeadlineExceeded. Its
// Deadline is a time of that clock.
type clockDeadline struct {
	context.Context
	deadline time.Time
}

func (c clockDeadline) Deadline() (time.Time, bool) { return c.deadline, true }

func (c clockDeadline) Err() error {
	err := c.Context.Err()
	if err != nil && context.Cause(c.Context) == context.DeadlineExceeded {
		return context.DeadlineExceeded
	}
	return err
}

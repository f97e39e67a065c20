package fifoq

import (
	"container/heap"
	"sync"
	"sync/atomic"
	"time"
)

// A Clock is a queue's only source of time. The default is the real clock, which also serves inside a
// testing/synctest bubble, where time is virtual. [ManualClock] is a clock driven by hand.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f, in its own goroutine or in the goroutine that advances the clock, once d has passed,
	// unless the returned Timer is stopped first. A queue uses it only to end a long poll.
	AfterFunc(d time.Duration, f func()) Timer
}

// A Timer is a pending AfterFunc call; *time.Timer is one.
type Timer interface {
	// Stop prevents the call from happening; it reports whether it did.
	Stop() bool
	// Reset makes the call happen d from now instead, or again; it reports whether it was pending.
	Reset(d time.Duration) bool
}

// realClock reads the time package.
type realClock struct{}

func (realClock) Now() time.Time                            { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// A ManualClock is a Clock that moves only when told to, for tests and examples. It is safe for concurrent
// use. Create one with [NewManualClock].
type ManualClock struct {
	start   time.Time
	offset  atomic.Int64 // nanoseconds past start: Now reads it without the lock
	mu      sync.Mutex   // guards the fields below and changes of offset
	timers  manualTimers
	seq     uint64
	changed chan struct{} // closed and replaced whenever a timer is added
}

// NewManualClock returns a clock that reads start until it is advanced.
func NewManualClock(start time.Time) *ManualClock {
	return &ManualClock{start: start, changed: make(chan struct{})}
}

// Now returns the clock's time.
func (c *ManualClock) Now() time.Time { return c.start.Add(time.Duration(c.offset.Load())) }

// AfterFunc arranges for f to be called by the Advance that moves the clock d or more past now.
func (c *ManualClock) AfterFunc(d time.Duration, f func()) Timer {
	t := &manualTimer{clock: c, f: f, index: -1}
	t.resetAt(c.Now().Add(d))
	return t
}

// afterFuncAt is AfterFunc with an absolute deadline: f runs at once if the clock reads at or later.
func (c *ManualClock) afterFuncAt(at time.Time, f func()) *manualTimer {
	t := &manualTimer{clock: c, f: f, index: -1}
	t.resetAt(at)
	return t
}

// Advance moves the clock forward by d; a negative d does nothing. Timers that come due fire in order of
// their deadline, each with the clock reading its deadline, in the goroutine that calls Advance.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := time.Duration(c.offset.Load()) + max(d, 0)
	for len(c.timers) > 0 && c.timers[0].at <= end {
		t := heap.Pop(&c.timers).(*manualTimer)
		if int64(t.at) > c.offset.Load() {
			c.offset.Store(int64(t.at))
		}
		c.mu.Unlock()
		t.f()
		c.mu.Lock()
	}
	if int64(end) > c.offset.Load() {
		c.offset.Store(int64(end))
	}
	c.mu.Unlock()
}

// Timers returns the number of pending timers: how many long polls wait on this clock.
func (c *ManualClock) Timers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// WaitTimers blocks until at least n timers are pending, so a test can advance the clock knowing that a
// long poll started in another goroutine is waiting.
func (c *ManualClock) WaitTimers(n int) {
	for {
		c.mu.Lock()
		if len(c.timers) >= n {
			c.mu.Unlock()
			return
		}
		ch := c.changed
		c.mu.Unlock()
		<-ch
	}
}

type manualTimer struct {
	clock *ManualClock
	at    time.Duration // past clock.start
	seq   uint64
	f     func()
	index int // in clock.timers; -1 once fired or stopped
}

// Stop removes the timer; it reports whether the timer was still pending.
func (t *manualTimer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.index < 0 {
		return false
	}
	heap.Remove(&c.timers, t.index)
	return true
}

// Reset makes the timer fire d after the clock's current time; it reports whether it was pending.
func (t *manualTimer) Reset(d time.Duration) bool { return t.resetAt(t.clock.Now().Add(d)) }

// resetAt makes the timer fire when the clock reads at, at once if it does already; it reports whether it
// was pending.
func (t *manualTimer) resetAt(at time.Time) bool {
	c := t.clock
	c.mu.Lock()
	pending := t.index >= 0
	if pending {
		heap.Remove(&c.timers, t.index)
	}
	t.at = at.Sub(c.start)
	if t.at <= time.Duration(c.offset.Load()) {
		c.mu.Unlock()
		t.f()
		return pending
	}
	c.seq++
	t.seq = c.seq
	heap.Push(&c.timers, t)
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	return pending
}

// manualTimers is a heap of timers by deadline, then creation order.
type manualTimers []*manualTimer

func (h manualTimers) Len() int { return len(h) }
func (h manualTimers) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h manualTimers) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *manualTimers) Push(x any) {
	t := x.(*manualTimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *manualTimers) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}

package fifoq

import (
	"context"
	"slices"
	"time"
)

// Long polls: the receives that wait for a message, each a waiter woken in the order it came (semaphore-
// style), and the wait of a receive.

// A waiter is a long poll with nothing to receive yet. Waiters are reused, timer and all.
type waiter struct {
	wake     chan struct{} // capacity 1: a signal or a timer pokes it
	pokeFunc func()        // w.poke, made once
	timer    Timer         // nil until first used
	wakeAt   tick          // when its timer fires
	signaled bool          // it was handed visible messages: it must receive or pass them on
}

func (w *waiter) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// sleep waits until w is poked, until the clock reads until, or until ctx is done; it reports whether ctx
// is done. A ManualClock gets the deadline itself, so an Advance racing with the setting of the timer
// cannot make it late.
func (w *waiter) sleep(ctx context.Context, clock Clock, until time.Time) bool {
	switch c := clock.(type) {
	case *ManualClock:
		if w.timer == nil {
			w.timer = c.afterFuncAt(until, w.pokeFunc)
		} else {
			w.timer.(*manualTimer).resetAt(until)
		}
	default:
		d := until.Sub(clock.Now())
		if w.timer == nil {
			w.timer = clock.AfterFunc(d, w.pokeFunc)
		} else {
			w.timer.Reset(d)
		}
	}
	defer w.timer.Stop()
	select {
	case <-w.wake:
		return false
	case <-ctx.Done():
		return true
	}
}

// waitList holds the long polls in arrival order. One at a time is handed visible messages (signal); when it
// has received, the next one is, while messages remain. Every long poll sleeps until its wait ends; the
// first one also until the next message comes due, so a due time wakes one poll, not all of them. When the
// first one leaves, the next one is woken to take over that watch.
type waitList struct {
	list    []*waiter
	granted int // signaled waiters that have not run yet
	idle    []*waiter
}

func (l *waitList) get() *waiter {
	if n := len(l.idle); n > 0 {
		w := l.idle[n-1]
		l.idle = l.idle[:n-1]
		return w
	}
	w := &waiter{wake: make(chan struct{}, 1)}
	w.pokeFunc = w.poke
	return w
}

// put keeps w for another long poll. A poke still in its channel only makes that poll look once more.
func (l *waitList) put(w *waiter) {
	select {
	case <-w.wake:
	default:
	}
	l.idle = append(l.idle, w)
}

func (l *waitList) len() int { return len(l.list) }

// first reports whether w watches for due times.
func (l *waitList) first(w *waiter) bool { return len(l.list) > 0 && l.list[0] == w }

func (l *waitList) add(w *waiter) { l.list = append(l.list, w) }

// remove takes w out of the list; if it was first, the next one is woken to watch for due times.
func (l *waitList) remove(w *waiter) {
	for i, x := range l.list {
		if x == w {
			l.list = slices.Delete(l.list, i, i+1)
			if i == 0 && len(l.list) > 0 {
				l.list[0].poke()
			}
			return
		}
	}
}

// signal wakes the first waiter to receive, unless one woken before has not run yet.
func (l *waitList) signal() {
	if l.granted > 0 || len(l.list) == 0 {
		return
	}
	w := l.list[0]
	l.remove(w)
	w.signaled = true
	l.granted++
	w.poke()
}

// ran records that w has the queue's lock again after sleeping; it reports whether w is still in the list.
func (l *waitList) ran(w *waiter) (listed bool) {
	if w.signaled {
		w.signaled = false
		l.granted--
		return false
	}
	return true
}

// dueAt wakes the first waiter if it sleeps past t, so it sleeps until t at most.
func (l *waitList) dueAt(t tick) {
	if len(l.list) > 0 && t < l.list[0].wakeAt {
		l.list[0].poke()
	}
}

// waitLocked is the long poll: called with mu held and nothing to receive, it sleeps until signaled, until
// the first message comes due (if it is the first waiter), or until the deadline, and tries again. It
// returns with mu held, and with what the call committed before it last released mu. Like takeLocked, it
// returns a message it could not move to its dead-letter queue now, for the caller to move.
func (q *Queue) waitLocked(ctx context.Context, deadline tick, got []take, vt time.Duration, attemptID string) (int, *message, commit, error) {
	w := q.waiters.get()
	defer q.waiters.put(w)
	q.waiters.add(w)
	var c commit
	for {
		w.wakeAt = deadline
		if m := q.due.peek(); m != nil && m.dueAt < deadline && q.waiters.first(w) {
			w.wakeAt = m.dueAt
		}
		c = c.then(q.flushLocked()) // the lock is released: commit what the call recorded
		q.mu.Unlock()
		ctxDone := w.sleep(ctx, q.clock, q.time(w.wakeAt))
		now := q.lock()
		listed := q.waiters.ran(w)
		n := 0
		var stuck *message
		if !ctxDone {
			n, stuck = q.takeLocked(now, got, vt, attemptID)
		}
		switch {
		case ctxDone || n > 0 || stuck != nil || now >= deadline:
			if listed {
				q.waiters.remove(w)
			}
			if ctxDone {
				return 0, nil, c, ctx.Err() // the caller's unlock hands on what this waiter was signaled for
			}
			return n, stuck, c, nil
		case !listed:
			q.waiters.add(w) // signaled, but another receive was first: wait again, last in line
		}
	}
}

package lambdaevents

import (
	"context"
	"sync"
	"time"

	"github.com/fifoq/fifoq"
)

// How an Invoker backs off from a function it cannot reach, by the queue's clock.
const (
	// minBackoff is the wait before the first poll after a failure to reach the function.
	minBackoff = time.Second
	// maxBackoff caps the wait, which doubles with each round that fails: 1 s, 2 s, 4 s, ... 30 s.
	maxBackoff = 30 * time.Second
	// unreachableLogInterval is the least time between two records of an Invoker's log that say the function
	// is unreachable.
	unreachableLogInterval = time.Minute
)

// A gate holds back the polls of an Invoker while its function is unreachable. After an invocation that
// could not reach the function, no receive takes a batch until the backoff has passed (minBackoff, doubling
// to maxBackoff); then one batch is taken and invoked (the probe), and the receives wait for how it went: if
// it reached the function, the gate opens; if not, the next backoff, twice as long, begins. So a function that
// is down sees one invocation per backoff, whatever the mapping's concurrency, and the queue's messages are not
// received meanwhile, so their receive counts do not rise. Invocations already under way when the first one
// failed end as they do; their failures do not lengthen the backoff.
type gate struct {
	clock fifoq.Clock
	log   func(unreachableRecord) // called without mu held

	mu       sync.Mutex    // guards the fields below
	failures int           // rounds that failed in a row; 0: the function is reachable
	retryAt  time.Time     // while failures > 0: when a receive may take the next batch
	probing  bool          // a batch taken at or after retryAt is being invoked
	changed  chan struct{} // closed and replaced when the fields above change
	down     time.Time     // when the first failure of this outage happened
	lastLog  time.Time     // when the last record of this outage was logged; zero for none yet
	unlogged int           // failures since the last record
	total    int           // failures since down
}

// unreachableRecord is what the gate logs: a failure (reachable false), or the end of an outage.
type unreachableRecord struct {
	reachable bool
	err       error         // the failure's (failures only)
	failures  int           // failures since the last record (a failure: this one included); of the outage (an end)
	backoff   time.Duration // the wait before the next poll (failures only)
	downFor   time.Duration // since the outage began
}

func newGate(clock fifoq.Clock, log func(unreachableRecord)) *gate {
	return &gate{clock: clock, log: log, changed: make(chan struct{})}
}

// backoff is the wait after the nth failed round in a row (n >= 1).
func backoff(n int) time.Duration {
	if n > 5 { // 1s << 5 = 32s is past maxBackoff already
		return maxBackoff
	}
	return min(minBackoff<<(n-1), maxBackoff)
}

// await waits, at most wait (by the gate's clock), until a receive may take a batch. It reports whether one
// may, and for how long it waited; it returns ctx's error when ctx is done first.
func (g *gate) await(ctx context.Context, wait time.Duration) (bool, time.Duration, error) {
	start := g.clock.Now()
	for {
		g.mu.Lock()
		now := g.clock.Now()
		if g.failures == 0 || !g.probing && !now.Before(g.retryAt) {
			g.mu.Unlock()
			return true, now.Sub(start), nil
		}
		left := wait - now.Sub(start)
		if left <= 0 {
			g.mu.Unlock()
			return false, now.Sub(start), nil
		}
		if !g.probing {
			left = min(left, g.retryAt.Sub(now))
		}
		changed := g.changed
		g.mu.Unlock()

		fire := make(chan struct{})
		t := g.clock.AfterFunc(left, func() { close(fire) })
		select {
		case <-changed:
		case <-fire:
		case <-ctx.Done():
			t.Stop()
			return false, g.clock.Now().Sub(start), ctx.Err()
		}
		t.Stop()
	}
}

// took records that a receive the gate let through took n messages: while the function is backed off from,
// a batch that is taken is the probe, and no other is taken until it has been invoked.
func (g *gate) took(n int) {
	if n == 0 {
		return
	}
	g.mu.Lock()
	if g.failures > 0 {
		g.probing = true
	}
	g.mu.Unlock()
}

// reachable records an invocation that reached the function: the gate opens.
func (g *gate) reachable() {
	g.mu.Lock()
	if g.failures == 0 {
		g.mu.Unlock()
		return
	}
	r := unreachableRecord{reachable: true, failures: g.total, downFor: g.clock.Now().Sub(g.down)}
	g.failures, g.probing, g.total, g.unlogged, g.lastLog = 0, false, 0, 0, time.Time{}
	g.broadcastLocked()
	g.mu.Unlock()
	g.log(r)
}

// unreachable records an invocation that could not reach the function: a failure that ends a round (the
// first, or the probe) starts the next backoff, twice as long as the last.
func (g *gate) unreachable(err error) {
	g.mu.Lock()
	now := g.clock.Now()
	if g.failures == 0 {
		g.down = now
	}
	if g.failures == 0 || !now.Before(g.retryAt) {
		g.failures++
		g.retryAt = now.Add(backoff(g.failures))
	}
	g.probing = false
	g.total++
	g.unlogged++
	g.broadcastLocked()
	var r *unreachableRecord
	if g.lastLog.IsZero() || now.Sub(g.lastLog) >= unreachableLogInterval {
		r = &unreachableRecord{err: err, failures: g.unlogged, backoff: g.retryAt.Sub(now), downFor: now.Sub(g.down)}
		g.lastLog, g.unlogged = now, 0
	}
	g.mu.Unlock()
	if r != nil {
		g.log(*r)
	}
}

// state returns the current backoff: 0 while the function is reachable.
func (g *gate) state() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.failures == 0 {
		return 0
	}
	return backoff(g.failures)
}

func (g *gate) broadcastLocked() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// gatedSource is the Source an Invoker's Consumer polls: the queue's, with its receives held back by the
// gate. It has the methods of the optional interfaces a Consumer's Run uses when the queue's source has
// them (VisibilitySource, ReceiveManySource: see newGatedSource), and always a Clock and a Name.
type gatedSource struct {
	fifoq.Source
	gate  *gate
	clock fifoq.Clock
	name  string
}

func (s *gatedSource) Receive(ctx context.Context, o fifoq.ReceiveOptions) ([]fifoq.Delivery, error) {
	return s.receive(ctx, o, s.Source.Receive)
}

// receive waits for the gate, at most the receive's wait time, then receives with what is left of it. A
// wait that ends with the gate closed is a receive that found nothing.
func (s *gatedSource) receive(ctx context.Context, o fifoq.ReceiveOptions,
	recv func(context.Context, fifoq.ReceiveOptions) ([]fifoq.Delivery, error)) ([]fifoq.Delivery, error) {
	wait := o.WaitTime // 0 (a short poll, or the queue's) counts as none
	ok, waited, err := s.gate.await(ctx, wait)
	if err != nil || !ok {
		return nil, err
	}
	if waited > 0 && o.WaitTime > 0 {
		if o.WaitTime -= waited; o.WaitTime <= 0 {
			o.WaitTime, o.NoWaitTime = 0, true
		}
	}
	ds, err := recv(ctx, o)
	s.gate.took(len(ds))
	return ds, err
}

// Clock returns the queue's clock, or the real clock.
func (s *gatedSource) Clock() fifoq.Clock { return s.clock }

// Name returns the queue's name, or "".
func (s *gatedSource) Name() string { return s.name }

type gatedVisibility struct {
	*gatedSource
	vs fifoq.VisibilitySource
}

func (s gatedVisibility) VisibilityTimeout(ctx context.Context) (time.Duration, error) {
	return s.vs.VisibilityTimeout(ctx)
}

type gatedMany struct {
	*gatedSource
	many fifoq.ReceiveManySource
}

func (s gatedMany) ReceiveMany(ctx context.Context, o fifoq.ReceiveOptions) ([]fifoq.Delivery, error) {
	return s.receive(ctx, o, s.many.ReceiveMany)
}

type gatedVisibilityMany struct {
	gatedVisibility
	many fifoq.ReceiveManySource
}

func (s gatedVisibilityMany) ReceiveMany(ctx context.Context, o fifoq.ReceiveOptions) ([]fifoq.Delivery, error) {
	return s.receive(ctx, o, s.many.ReceiveMany)
}

// newGatedSource wraps src: the result is a VisibilitySource and a ReceiveManySource when src is. It is not a
// StatsSource: Invoker.Run never runs until the queue is empty.
func newGatedSource(src fifoq.Source, g *gate, clock fifoq.Clock, name string) fifoq.Source {
	s := &gatedSource{Source: src, gate: g, clock: clock, name: name}
	vs, isVS := src.(fifoq.VisibilitySource)
	many, isMany := src.(fifoq.ReceiveManySource)
	switch {
	case isVS && isMany:
		return gatedVisibilityMany{gatedVisibility{s, vs}, many}
	case isVS:
		return gatedVisibility{s, vs}
	case isMany:
		return gatedMany{s, many}
	}
	return s
}

// realClock reads the time package, for a source without a Clock method.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) fifoq.Timer {
	return time.AfterFunc(d, f)
}

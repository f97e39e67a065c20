package fifoqtest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fifoq/fifoq"
)

// DrainOptions configure [Drain].
type DrainOptions struct {
	// Consumer configures the Consumer that Drain runs, as for [fifoq.NewConsumer]. Its OnBatch, if set, is
	// called after Drain has recorded the batch. On a ManualClock, Batch.Window must be 0.
	Consumer fifoq.ConsumerOptions
	// Timeout is how long Drain lets the consumer run, by the queue's clock: 0 means an hour. Messages that
	// come due at the deadline itself are still handled; then Drain stops the consumer, whatever the queue
	// holds.
	Timeout time.Duration
}

// defaultTimeout is the Timeout of a zero DrainOptions: long enough for the default visibility timeout
// (30s) to run out 120 times, short enough that a handler that never succeeds stops soon.
const defaultTimeout = time.Hour

// maxBatches stops a consumer that never drains and never lets time pass: a handler that always fails
// with RetryImmediately and no dead-letter queue. A variable so that tests can lower it.
var maxBatches = 10_000

// stallTimeout is how long, in real time, Drain on a ManualClock waits for a batch to end before it logs a
// hint that a handler may be waiting for the clock, which only Drain moves; it goes on waiting. A variable
// for tests.
var stallTimeout = time.Minute

// Result is what [Drain] saw.
type Result struct {
	// Batches are the batches the consumer handled, in the order their handler was called; a batch the
	// handler did not see (Filter rejected every message) comes when it ended.
	Batches []Batch
	// Drained reports whether the queue held no message when Drain returned; false means the deadline
	// (or the batch limit) came first.
	Drained bool
	// Elapsed is how long Drain ran, by the queue's clock.
	Elapsed time.Duration
}

// Batch is one batch of a [Result].
type Batch struct {
	// Deliveries are the messages the handler got, in its order; nil if the handler did not run.
	Deliveries []fifoq.Delivery
	// At is when the handler was called, by the queue's clock (without a call, when the batch ended).
	At time.Time
	// Report is what the Consumer reported about the batch: its Outcome, the ids of the messages that
	// Failed, the handler's error.
	Report fifoq.BatchReport
}

// Bodies returns the bodies of the batch's deliveries, in order.
func (b Batch) Bodies() []string {
	bodies := make([]string, len(b.Deliveries))
	for i, d := range b.Deliveries {
		bodies[i] = d.Body
	}
	return bodies
}

// Bodies returns the bodies of every delivery the handler got, in order, redeliveries included.
func (r *Result) Bodies() []string {
	var bodies []string
	for _, b := range r.Batches {
		bodies = append(bodies, b.Bodies()...)
	}
	return bodies
}

// Drain runs a [fifoq.Consumer] of q with handler h until q holds no message (none visible, in flight or
// delayed) and the consumer has nothing running, or until o.Timeout has passed on q's clock, and returns
// every batch it handled. A handler error is not a test failure: it is recorded in the Result. Drain fails
// the test at once if the consumer cannot be created, or if q's clock is the real clock outside a
// testing/synctest bubble.
//
// Time moves as follows:
//
//   - On the real clock inside [synctest.Test], time is virtual and moves by itself whenever every
//     goroutine of the bubble waits. Drain waits with [synctest.Wait] until the consumer is idle, then
//     checks q, or sleeps until the next message of q comes due.
//   - On a [fifoq.ManualClock] (in a bubble or not), Drain moves the clock itself, and only while no batch
//     is being handled: once every message in flight is one whose batch has ended, it advances the clock
//     to the next time a message becomes visible (or to the deadline), so each redelivery happens at the
//     time it would on the real clock. Time does not move while a handler runs, so a handler must not wait
//     for the clock (its context's deadline, say): Drain would wait for it for ever, logging a hint every
//     minute, until go test's -timeout reports the hang. BatchOptions.Window must be 0: use synctest for
//     those. Nothing but the consumer may receive from q meanwhile.
//
// Drain also stops after 10,000 batches, which only a consumer that retries at once forever reaches.
// When it stops before q is drained, it logs what q still holds.
func Drain(tb testing.TB, q *fifoq.Queue, h fifoq.Handler, o DrainOptions) *Result {
	tb.Helper()
	manual, _ := q.Clock().(*fifoq.ManualClock)
	switch {
	case h == nil:
		tb.Fatalf("fifoqtest.Drain(%s): nil handler", q.Name())
		return nil
	case o.Timeout < 0:
		tb.Fatalf("fifoqtest.Drain(%s): negative timeout %v", q.Name(), o.Timeout)
		return nil
	case manual != nil && o.Consumer.Batch.Window > 0:
		tb.Fatalf("fifoqtest.Drain(%s): a batch window on a ManualClock: Drain moves that clock only between "+
			"batches, so it cannot end a window; use the real clock inside synctest.Test", q.Name())
		return nil
	case manual == nil && !inBubble():
		tb.Fatalf("fifoqtest.Drain(%s): the queue's clock is not a *fifoq.ManualClock, so it must be the real "+
			"clock inside synctest.Test, where time is virtual; call Drain in a bubble or give the queue a "+
			"ManualClock", q.Name())
		return nil
	}

	d := &drainer{
		q:       q,
		manual:  manual,
		retry:   o.Consumer.RetryImmediately,
		events:  make(chan struct{}, 1),
		waiting: make(map[string]int),
	}
	co := o.Consumer
	co.OnBatch = d.onBatch(o.Consumer.OnBatch)
	c, err := fifoq.NewConsumer(q, d.handler(h), co)
	if err != nil {
		tb.Fatalf("fifoqtest.Drain(%s): %v", q.Name(), err)
		return nil
	}
	if manual != nil {
		// Messages in flight already were received by the test: to Drain they wait for their visibility
		// timeout, as failed ones do.
		for s := range q.Messages() {
			if s.State == fifoq.StateInFlight {
				d.waiting[s.MessageID] = s.ReceiveCount
			}
		}
	}

	start := q.Clock().Now()
	deadline := start.Add(cmp.Or(o.Timeout, defaultTimeout))
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel = cancel
	ran := make(chan error, 1)
	go func() { ran <- c.Run(ctx) }()
	if manual != nil {
		d.driveManual(tb, deadline)
	} else {
		d.driveBubble(deadline)
	}
	cancel()
	if err := <-ran; err != nil {
		tb.Errorf("fifoqtest.Drain(%s): the consumer stopped: %v", q.Name(), err)
	}

	r := &Result{Drained: q.Stats() == fifoq.Stats{}, Elapsed: q.Clock().Now().Sub(start)}
	for _, b := range d.batches {
		r.Batches = append(r.Batches, *b)
	}
	if !r.Drained {
		why := "its deadline"
		if len(r.Batches) >= maxBatches {
			why = fmt.Sprintf("%d batches", maxBatches)
		}
		tb.Logf("fifoqtest.Drain(%s) stopped at %s, after %v: %s", q.Name(), why, r.Elapsed, contents(q))
	}
	return r
}

// inBubble reports whether the calling goroutine runs in a testing/synctest bubble, where synctest.Wait
// returns (once the bubble's other goroutines wait) instead of panicking.
func inBubble() (in bool) {
	defer func() {
		if recover() != nil {
			in = false
		}
	}()
	synctest.Wait()
	return true
}

// A drainer records the batches of one Drain and decides when to stop (and, on a ManualClock, when to
// move the clock).
type drainer struct {
	q      *fifoq.Queue
	manual *fifoq.ManualClock // nil: the real clock in a synctest bubble
	retry  bool               // RetryImmediately: failed messages are visible at once
	cancel context.CancelFunc
	events chan struct{} // a batch ended

	// settling is held from a handler call's return to its batch's report, which come in the same
	// goroutine: a report that comes while it is held is about that call (unless it is about a batch
	// the handler did not see), so reports pair with calls exactly although BatchReport does not name
	// its batch. It serializes only the settling of batches, not their handlers; waiting for a Mutex
	// is not durable blocking, so in a bubble no virtual time passes meanwhile.
	settling sync.Mutex

	mu       sync.Mutex // guards the fields below
	batches  []*Batch
	returned *call          // the call that holds settling
	reports  int            // batches reported
	waiting  map[string]int // ManualClock: MessageID -> receive count of an in-flight message whose batch ended
}

// A call is one handler call, until its batch is reported.
type call struct {
	batch  *Batch
	counts map[string]int // MessageID -> ReceiveCount of its deliveries
}

// handler wraps h to record each call.
func (d *drainer) handler(h fifoq.Handler) fifoq.Handler {
	return func(ctx context.Context, batch []fifoq.Delivery) error {
		c := &call{
			batch:  &Batch{Deliveries: slices.Clone(batch), At: d.q.Clock().Now()},
			counts: make(map[string]int, len(batch)),
		}
		for _, m := range batch {
			c.counts[m.MessageID] = m.ReceiveCount
		}
		d.mu.Lock()
		d.batches = append(d.batches, c.batch)
		d.mu.Unlock()
		defer func() { // also when h panics, which the Consumer recovers before it reports
			d.settling.Lock()
			d.mu.Lock()
			d.returned = c
			d.mu.Unlock()
		}()
		return h(ctx, batch)
	}
}

// onBatch returns the OnBatch hook: it records the report, calls next, then tells the driver.
func (d *drainer) onBatch(next func(fifoq.BatchReport)) func(fifoq.BatchReport) {
	return func(r fifoq.BatchReport) {
		now := d.q.Clock().Now()
		d.mu.Lock()
		c := d.returned
		// A batch the handler did not see is all filtered, or failed (its filter panicked) with none of
		// the returned call's messages: those are in flight until that call's batch is settled.
		if c != nil && r.Outcome != fifoq.OutcomeFiltered && (len(r.Failed) == 0 || c.counts[r.Failed[0]] > 0) {
			d.returned = nil
			c.batch.Report = r
		} else {
			c = nil
			d.batches = append(d.batches, &Batch{At: now, Report: r})
		}
		d.reports++
		if d.reports >= maxBatches {
			d.cancel()
		}
		d.mu.Unlock()
		if c != nil {
			d.settling.Unlock()
		}
		if d.manual != nil && (len(r.Failed) > 0 || r.DeleteErr != nil) {
			d.noteWaiting(r, c)
		}
		if next != nil {
			next(r)
		}
		select {
		case d.events <- struct{}{}:
		default:
		}
	}
}

// noteWaiting records, on a ManualClock, the messages of an ended batch that are still in flight under
// the receive of that batch: they wait for their visibility timeout, and the driver may move the clock
// past it. A message the batch released (RetryImmediately) is visible, or in flight under a later
// receive, and is not recorded.
func (d *drainer) noteWaiting(r fifoq.BatchReport, c *call) {
	counts := make(map[string]int)
	if c != nil {
		for id, n := range c.counts {
			counts[id] = n
		}
	}
	if !d.retry {
		for _, id := range r.Failed {
			if _, ok := counts[id]; !ok {
				counts[id] = 0 // a batch the handler did not see: no later receive can have taken it
			}
		}
	}
	if len(counts) == 0 {
		return
	}
	var found []fifoq.Snapshot
	for s := range d.q.Messages() {
		if n, ok := counts[s.MessageID]; ok && s.State == fifoq.StateInFlight && (n == 0 || n == s.ReceiveCount) {
			found = append(found, s)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range found {
		d.waiting[s.MessageID] = s.ReceiveCount
	}
}

// driveBubble waits, in a synctest bubble, until the queue is drained or the deadline has passed.
// synctest.Wait returns once every other goroutine of the bubble waits: the consumer in a long poll, with
// no batch running, or handlers waiting for their own reasons. Then the queue is drained if it is empty.
// Otherwise Drain sleeps until a batch ends, the next message comes due (a receive may then move it to the
// dead-letter queue, which ends no batch) or the deadline, and looks again.
func (d *drainer) driveBubble(deadline time.Time) {
	for {
		synctest.Wait()
		if d.q.Stats() == (fifoq.Stats{}) || d.stopped() {
			return
		}
		now := d.q.Clock().Now()
		if !now.Before(deadline) {
			return
		}
		wake := deadline
		if due, ok := nextDue(d.q); ok && due.Before(wake) {
			wake = due
		}
		t := time.NewTimer(wake.Sub(now))
		select {
		case <-d.events:
		case <-t.C:
		}
		t.Stop()
	}
}

// nextDue returns when the next in-flight or delayed message of q becomes visible.
func nextDue(q Queue) (time.Time, bool) {
	var due time.Time
	for s := range q.Messages() {
		if s.State != fifoq.StateVisible && (due.IsZero() || s.VisibleAt.Before(due)) {
			due = s.VisibleAt
		}
	}
	return due, !due.IsZero()
}

// stopped reports whether the batch limit cancelled the consumer.
func (d *drainer) stopped() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.reports >= maxBatches
}

// driveManual drives a ManualClock until the queue is drained or the deadline has passed; see Drain. It
// looks at the queue after every batch and every move of the clock:
//
//   - While a message is visible and receivable, or in flight in a batch that has not ended, the consumer
//     has work: wait for a batch to end.
//   - Visible messages past the queue's maxReceiveCount go to the dead-letter queue at the next receive,
//     which ends no batch: Drain receives once itself to move them (it receives nothing else, as nothing
//     else is receivable).
//   - Otherwise every message is in flight after its batch ended, or delayed: the consumer waits for the
//     clock. Advance it to the next due time, or to the deadline.
func (d *drainer) driveManual(tb testing.TB, deadline time.Time) {
	tb.Helper()
	moved := false // the last step was a receive to move exhausted messages
	for !d.stopped() {
		st := d.inspect()
		switch {
		case st.empty:
			return
		case st.busy > 0 || st.exhausted > 0 && moved:
			moved = false
			d.awaitBatch(tb)
		case st.exhausted > 0:
			moved = true
			d.moveExhausted(tb)
		default:
			moved = false
			now := d.manual.Now()
			if !now.Before(deadline) {
				return
			}
			target := deadline
			if st.due && st.nextDue.Before(target) {
				target = st.nextDue
			}
			d.manual.Advance(target.Sub(now))
		}
	}
}

// awaitBatch waits for a batch to end, as long as that takes: a slow machine must not fail a test. Every
// stallTimeout of real time without one, it logs what may be wrong (a handler waiting for the clock, which
// only Drain moves, never ends); a handler that really hangs is reported by go test's -timeout, with the
// stacks of every goroutine.
func (d *drainer) awaitBatch(tb testing.TB) {
	tb.Helper()
	t := time.NewTicker(stallTimeout)
	defer t.Stop()
	for waited := stallTimeout; ; waited += stallTimeout {
		select {
		case <-d.events:
			return
		case <-t.C:
			tb.Logf("fifoqtest.Drain(%s): no batch has ended in %v of real time; on a ManualClock time moves only "+
				"between batches, so a handler must not wait for the clock; %s", d.q.Name(), waited, contents(d.q))
		}
	}
}

// moveExhausted receives from the queue once, so that its visible messages past maxReceiveCount move to
// the dead-letter queue. driveManual calls it when no other message is receivable, so it receives none;
// one it does receive anyway (sent meanwhile by something else) is left visible, and fails the test.
func (d *drainer) moveExhausted(tb testing.TB) {
	tb.Helper()
	ds, err := d.q.Receive(context.Background(), fifoq.ReceiveOptions{
		MaxMessages: 10, NoWaitTime: true, NoVisibilityTimeout: true,
	})
	switch {
	case err != nil:
		tb.Errorf("fifoqtest.Drain(%s): receiving to move messages to the dead-letter queue: %v", d.q.Name(), err)
	case len(ds) > 0:
		tb.Errorf("fifoqtest.Drain(%s): received %s while moving messages to the dead-letter queue: "+
			"something other than the consumer uses the queue", d.q.Name(), plural(len(ds), "message"))
	}
}

// A state is what driveManual sees in the queue.
type state struct {
	empty     bool
	busy      int       // messages the consumer has to handle: receivable, or in a batch that has not ended
	exhausted int       // visible messages the next receive moves to the dead-letter queue
	due       bool      // a message is in flight after its batch ended, or delayed
	nextDue   time.Time // the first time one of those becomes visible
}

// inspect classifies the queue's messages. On a FIFO queue a visible message is receivable only if no
// earlier message of its group is in flight or delayed.
func (d *drainer) inspect() state {
	a := d.q.Attributes()
	snaps := slices.Collect(d.q.Messages())
	d.mu.Lock()
	defer d.mu.Unlock()
	st := state{empty: len(snaps) == 0}
	blocked := make(map[string]bool)
	for _, s := range snaps {
		if s.State == fifoq.StateVisible {
			switch {
			case d.q.FIFO() && blocked[s.GroupID]:
			case a.DeadLetterQueue != nil && s.ReceiveCount >= a.MaxReceiveCount:
				st.exhausted++
			default:
				st.busy++
			}
			continue
		}
		blocked[s.GroupID] = true
		if s.State == fifoq.StateInFlight && d.waiting[s.MessageID] != s.ReceiveCount {
			st.busy++
			continue
		}
		if !st.due || s.VisibleAt.Before(st.nextDue) {
			st.due, st.nextDue = true, s.VisibleAt
		}
	}
	return st
}

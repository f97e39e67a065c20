package fifoq

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fifoq/fifoq/internal/rule"
)

// A Handler processes one batch. Returning nil deletes the batch; an error fails it, and with
// ReportBatchItemFailures a *BatchItemFailures fails only the messages it names. The context ends at the
// handler timeout.
//
// A failed batch comes back whole: one message that keeps failing (a poison message) makes the messages
// handled with it be handled again on every retry, and drags them to the dead-letter queue with it once
// the queue's maxReceiveCount is reached. [PerMessage] makes a Handler of a function of one message that
// fails only the messages that failed.
type Handler func(ctx context.Context, batch []Delivery) error

// BatchItemFailures, returned by a [Handler] whose consumer has ReportBatchItemFailures, reports a partial
// failure by message id: the messages it names fail, the others are deleted. On FIFO queues every later
// message of the same group in the batch fails too, so group order holds. An id that is not in the batch,
// or an empty one, fails the whole batch; no ids at all is a success.
type BatchItemFailures struct {
	MessageIDs []string // the ids of the messages that failed
}

// Error lists the failed message ids.
func (f *BatchItemFailures) Error() string {
	if f == nil {
		return "fifoq: no batch item failures"
	}
	return "fifoq: batch item failures: " + strings.Join(f.MessageIDs, ", ")
}

// A PanicError is the failure of a batch whose handler panicked.
type PanicError struct {
	Value any    // what the handler panicked with
	Stack []byte // the handler goroutine's stack
}

// Error describes the panic.
func (e *PanicError) Error() string { return fmt.Sprintf("fifoq: handler panicked: %v", e.Value) }

// ErrHandlerTimeout is the failure of a batch whose handler ran past ConsumerOptions.HandlerTimeout.
var ErrHandlerTimeout = errors.New("fifoq: handler timed out")

// ConsumerOptions configure a [Consumer], as the settings of a Lambda event source mapping.
type ConsumerOptions struct {
	// Batch configures the batches, as for a Batcher.
	Batch BatchOptions
	// MaxConcurrency is the most batches handled at once (ScalingConfig.MaximumConcurrency): 1..1000,
	// default 2; Strict in Batch requires 2 or more. On FIFO queues it is also bounded by the groups with
	// visible messages, since a group is never in two batches at once.
	MaxConcurrency int
	// ReportBatchItemFailures honours a *BatchItemFailures returned by the handler (FunctionResponseTypes);
	// without it any error fails the whole batch, except the *MessageErrors of a PerMessage handler, which
	// is always honoured.
	ReportBatchItemFailures bool
	// HandlerTimeout bounds one handler call (the function timeout) through its context; a call that runs
	// past it fails its batch. It must not exceed the visibility timeout of the receives. 0 means none.
	HandlerTimeout time.Duration
	// RetryImmediately makes the messages of a failed batch visible at once, instead of after their
	// visibility timeout as on Lambda. On a FIFO queue the failed groups then wait behind the groups that
	// were waiting already (by default: see [WithGroupOrder]), in batch order.
	RetryImmediately bool
	// Filter, if set, is asked about each message first (FilterCriteria): a message it rejects is deleted
	// without being handled.
	Filter func(Delivery) bool
	// Logger, if set, gets one record per batch: its size, groups, outcome, failed messages and duration,
	// at level Debug when it went well, Warn when it failed, Error when the handler panicked or a delete
	// failed (see the package documentation, # Logging).
	Logger *slog.Logger
	// SourceTimeout bounds each call the Consumer makes to its source, through the call's context (by the
	// source's clock): a delete, or a release (of RetryImmediately, or of messages that do not fit in a
	// batch), may take SourceTimeout; a receive, the longest long-poll wait (20 seconds) and SourceTimeout
	// more; a visibility change of the heartbeat, SourceTimeout or a quarter of the visibility timeout,
	// whichever is shorter, so that the next beat, half a visibility timeout later, comes before the
	// visibility it extended ends. Calls that start close together share a context, whose deadline may come
	// up to a sixteenth of the bound later. A call still running at its deadline is given up: a receive
	// counts as one that returned nothing, and the Consumer polls again; a delete fails with the context's
	// error, in the batch's DeleteErr; releases and visibility changes are best effort. Receives also end
	// with Run's context; deletes, releases and visibility changes do not, since they settle batches that go
	// on after it. 0 means 30 seconds.
	SourceTimeout time.Duration
	// OnBatch, if set, is called after each batch with what the Logger records. It runs in the goroutine
	// that handled the batch, never under a queue's lock. Unlike the handler and Filter, it must not panic:
	// a panic there is not recovered.
	OnBatch func(BatchReport)
}

// Outcome is how a batch ended.
type Outcome uint8

const (
	// OutcomeSuccess: the handler returned nil and the batch was deleted.
	OutcomeSuccess Outcome = iota + 1
	// OutcomePartial: the handler reported batch item failures; the other messages were deleted.
	OutcomePartial
	// OutcomeError: the handler returned an error; the batch failed.
	OutcomeError
	// OutcomePanic: the handler panicked; the batch failed.
	OutcomePanic
	// OutcomeTimeout: the handler ran past the handler timeout; the batch failed.
	OutcomeTimeout
	// OutcomeFiltered: the filter rejected every message, which were deleted; the handler did not run.
	OutcomeFiltered
)

// String returns the outcome in lower case, such as "success".
func (o Outcome) String() string {
	switch o {
	case OutcomeSuccess:
		return "success"
	case OutcomePartial:
		return "partial"
	case OutcomeError:
		return "error"
	case OutcomePanic:
		return "panic"
	case OutcomeTimeout:
		return "timeout"
	case OutcomeFiltered:
		return "filtered"
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// BatchReport is what a [Consumer] reports about one batch.
type BatchReport struct {
	Size      int           // messages received in the batch
	Groups    []string      // its message groups, in batch order (FIFO)
	Filtered  int           // messages the filter rejected and deleted
	Failed    []string      // ids of the messages that failed, returned to the queue
	Outcome   Outcome       // how the batch ended
	Err       error         // the handler's error, a *PanicError or ErrHandlerTimeout; nil on success
	DeleteErr error         // what deleting the handled (or filtered) messages failed with, if anything
	Duration  time.Duration // of the handler call, by the queue's clock
}

// A Consumer runs a handler over the batches of a [Batcher], at most MaxConcurrency at once, like a Lambda
// event source mapping: success deletes the batch; a failure leaves its messages to come back after their
// visibility timeout (or at once with RetryImmediately), counting a receive, and to move to the
// dead-letter queue past the queue's maxReceiveCount. A failed batch comes back whole, the messages the
// handler got right included, unless the handler reports which ones failed: see [PerMessage].
type Consumer struct {
	src      Source
	batcher  *Batcher
	h        Handler
	o        ConsumerOptions
	queue    string // the source's name, for the log, if it has one
	counters consumerCounters
}

const (
	defaultConcurrency   = 2
	maxConcurrency       = 1000
	defaultSourceTimeout = 30 * time.Second
)

// NewConsumer returns a Consumer of src that runs h. Options out of range return ErrInvalidBatchOptions.
func NewConsumer(src Source, h Handler, o ConsumerOptions) (*Consumer, error) {
	if h == nil {
		return nil, rule.Reject(ErrInvalidBatchOptions, "nil handler")
	}
	b, err := NewBatcher(src, o.Batch)
	if err != nil {
		return nil, err
	}
	o.MaxConcurrency = cmp.Or(o.MaxConcurrency, defaultConcurrency)
	switch {
	case o.MaxConcurrency < 1 || o.MaxConcurrency > maxConcurrency:
		return nil, rule.Reject(ErrInvalidBatchOptions, "maximum concurrency %d, want 1..%d", o.MaxConcurrency, maxConcurrency)
	case o.Batch.Strict && o.MaxConcurrency < 2:
		return nil, rule.Reject(ErrInvalidBatchOptions, "maximum concurrency %d, Lambda's minimum is 2", o.MaxConcurrency)
	case o.HandlerTimeout < 0:
		return nil, rule.Reject(ErrInvalidBatchOptions, "handler timeout %v", o.HandlerTimeout)
	case o.SourceTimeout < 0:
		return nil, rule.Reject(ErrInvalidBatchOptions, "source timeout %v", o.SourceTimeout)
	}
	o.SourceTimeout = cmp.Or(o.SourceTimeout, defaultSourceTimeout)
	b.timeout = o.SourceTimeout
	if vt, ok := b.visibilityTimeout(); ok && o.HandlerTimeout > vt {
		return nil, rule.Reject(ErrInvalidBatchOptions, "queue visibility timeout %v is less than the handler timeout %v", vt, o.HandlerTimeout)
	}
	c := &Consumer{src: src, batcher: b, h: h, o: o}
	if n, ok := src.(interface{ Name() string }); ok {
		c.queue = n.Name()
	}
	return c, nil
}

// Run polls and handles batches until ctx is done, then waits for the batches in flight and returns nil.
// Handlers keep running after ctx is done, to their end or their timeout: their context is not ctx's. No
// goroutine Run starts outlives it. It returns an error only when the source fails.
func (c *Consumer) Run(ctx context.Context) error {
	if end, err := c.run(ctx, false); end == runFailed {
		return err
	}
	return nil
}

// runEnd is why run returned.
type runEnd uint8

const (
	runDone   runEnd = iota + 1 // ctx is done
	runEmpty                    // the source is empty (untilEmpty)
	runFailed                   // the source failed, or the options do not fit its visibility timeout
)

// run is the loop of Run and RunUntilEmpty: it polls through the Batcher and hands each batch to a
// goroutine of its own, at most MaxConcurrency at once, until ctx is done or the source fails, or, with
// untilEmpty, the source is empty (see RunUntilEmpty) while none of its batches is in flight. It returns
// when every batch it started has been settled, with why it ended and the error (ctx's when ctx is done).
//
// Without untilEmpty each poll waits for a first message as long as it takes. With untilEmpty, while its
// batches are in flight a poll takes only what is there at once, and when nothing is, waits for a batch to
// end before it polls again; with none in flight, it returns if a StatsSource says the queue is empty, else
// polls for a second and looks again, or from any other source waits a second and returns if nothing came.
func (c *Consumer) run(ctx context.Context, untilEmpty bool) (runEnd, error) {
	if err := c.learnVisibilityTimeout(ctx); err != nil {
		if ctx.Err() != nil {
			return runDone, ctx.Err()
		}
		return runFailed, err
	}
	calls := newSourceCalls(ctx, c.batcher.clock, c.o.SourceTimeout)
	defer calls.stop()
	hb := c.newHeartbeat(ctx)
	defer hb.stop()
	var (
		wg      sync.WaitGroup
		running atomic.Int64 // batches in flight
	)
	defer wg.Wait()
	detached := context.WithoutCancel(ctx) // the batches' context: they go on after ctx is done
	slots := make(chan struct{}, c.o.MaxConcurrency)
	ended := make(chan struct{}, 1) // a batch ended
	counts, exact := c.src.(StatsSource)
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return runDone, ctx.Err()
		}
		if ctx.Err() != nil {
			<-slots
			return runDone, ctx.Err()
		}
		wait, idle := time.Duration(-1), false // Run: wait as long as it takes
		if untilEmpty {
			select { // a batch that ends from now on signals again
			case <-ended:
			default:
			}
			wait, idle = 0, running.Load() == 0
			switch {
			case idle && exact:
				if s := counts.Stats(); s.Visible+s.InFlight+s.Delayed == 0 {
					<-slots
					return runEmpty, nil
				}
				wait = emptyCheckWait // then a look at Stats again: a message may leave without a receive's return
			case idle:
				wait = emptyCheckWait
			}
		}
		batch, err := c.batcher.next(ctx, calls, wait)
		switch {
		case errors.Is(err, errReceiveTimeout): // as a receive that returned nothing, but never empty
			<-slots
			continue
		case err != nil:
			<-slots
			if ctx.Err() != nil {
				return runDone, ctx.Err()
			}
			return runFailed, err
		}
		if len(batch) == 0 { // untilEmpty only: the wait ended with nothing
			<-slots
			switch {
			case idle && !exact:
				return runEmpty, nil
			case !idle:
				select {
				case <-ended:
				case <-ctx.Done():
				}
			}
			continue
		}
		running.Add(1)
		wg.Go(func() {
			defer func() {
				running.Add(-1)
				<-slots
				select {
				case ended <- struct{}{}:
				default:
				}
			}()
			c.handle(detached, batch, hb, calls)
		})
	}
}

// learnVisibilityTimeout asks a VisibilitySource for its visibility timeout when Run starts, unless the
// options give one, and checks the handler timeout against it as NewConsumer does with what it knows.
func (c *Consumer) learnVisibilityTimeout(ctx context.Context) error {
	src, ok := c.src.(VisibilitySource)
	if !ok || c.o.Batch.VisibilityTimeout > 0 {
		return nil
	}
	ctx, cancel := withTimeout(ctx, c.batcher.clock, c.o.SourceTimeout)
	defer cancel()
	vt, err := src.VisibilityTimeout(ctx)
	switch {
	case err != nil:
		return fmt.Errorf("fifoq: the visibility timeout of the source: %w", err)
	case c.o.HandlerTimeout > vt:
		return rule.Reject(ErrInvalidBatchOptions, "queue visibility timeout %v is less than the handler timeout %v", vt, c.o.HandlerTimeout)
	}
	c.batcher.vt, c.batcher.vtKnown = vt, true
	return nil
}

// handle runs the handler on one batch and settles the batch's messages, with the cleanup contexts of calls.
// ctx is Run's, without its cancellation.
func (c *Consumer) handle(ctx context.Context, batch []Delivery, hb *heartbeat, calls *sourceCalls) {
	c.counters.inFlight.Add(1)
	r := BatchReport{Size: len(batch)}
	if c.o.Logger != nil || c.o.OnBatch != nil {
		r.Groups = groupsOf(batch)
	}
	beating := hb.join(batch)
	var drop []Delivery
	batch, drop, r.Err = c.filter(batch)
	r.Filtered = len(drop)
	r.DeleteErr = c.delete(calls, drop)
	if len(batch) == 0 && r.Err == nil {
		hb.leave(beating)
		r.Outcome = OutcomeFiltered
		c.report(r)
		return
	}
	start := c.batcher.clock.Now()
	if r.Err == nil {
		r.Err = c.call(ctx, slices.Clone(batch)) // the handler may reorder its copy
		r.Duration = c.batcher.clock.Now().Sub(start)
		c.counters.observe(r.Duration)
	}
	hb.leave(beating)
	var failed []Delivery
	var items *BatchItemFailures
	switch {
	case r.Err == nil:
		r.Outcome = OutcomeSuccess
	case errors.Is(r.Err, ErrHandlerTimeout):
		r.Outcome, failed = OutcomeTimeout, batch
	case errors.As(r.Err, new(*PanicError)):
		r.Outcome, failed = OutcomePanic, batch
	case (c.o.ReportBatchItemFailures || errors.As(r.Err, new(*MessageErrors))) && errors.As(r.Err, &items):
		var valid bool
		failed, valid = c.itemFailures(batch, items)
		switch {
		case !valid:
			r.Outcome = OutcomeError
		case len(failed) == 0:
			r.Outcome, r.Err = OutcomeSuccess, nil
		default:
			r.Outcome = OutcomePartial
		}
	default:
		r.Outcome, failed = OutcomeError, batch
	}
	r.DeleteErr = errors.Join(r.DeleteErr, c.settle(calls, batch, failed))
	for _, d := range failed {
		r.Failed = append(r.Failed, d.MessageID)
	}
	c.report(r)
}

// filter splits batch by ConsumerOptions.Filter into the messages to handle and the ones to delete. A
// panic in the filter fails the batch, as one in the handler does.
func (c *Consumer) filter(batch []Delivery) (keep, drop []Delivery, err error) {
	if c.o.Filter == nil {
		return batch, nil, nil
	}
	defer func() {
		if v := recover(); v != nil {
			keep, drop, err = batch, nil, &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	for _, d := range batch {
		if c.o.Filter(d) {
			keep = append(keep, d)
		} else {
			drop = append(drop, d)
		}
	}
	return keep, drop, nil
}

// A heartbeat keeps the batches being handled invisible: half a visibility timeout after the last beat
// ended (its calls take at most a quarter of one) it extends the visibility of every batch in its set, so a handler that runs long (or past its timeout, ignoring its
// context) never lets its messages be received by another batch, and two batches of one FIFO group never
// run at once. One timer serves every batch of a Run.
//
// A beat takes the batches under mu and makes its calls after releasing it, one goroutine a batch, so a slow
// call holds up no other batch: not their extensions, and not a batch that ends (leave). leave cancels the
// call extending its own batch, if one is under way, and waits for it to return, so that no extension
// lands after the batch is deleted or released.
type heartbeat struct {
	src     Source
	clock   Clock
	vt      time.Duration   // 0: the visibility timeout is not known, and nothing is extended
	ctx     context.Context // the base of the calls: Run's, without its cancellation
	timeout time.Duration   // how long the calls of one beat may take: at most vt/4

	mu      sync.Mutex // guards the fields below; never held during a call to src
	active  map[int]beating
	nextID  int
	timer   Timer
	armed   bool
	stopped bool
	cancel  context.CancelFunc // ends the calls of the beat under way, if one is
	beats   sync.WaitGroup     // the beat under way, which stop waits for
}

// beating is a batch in a heartbeat's set.
type beating struct {
	batch  []Delivery
	cancel context.CancelFunc // while a call extends the batch: ends that call
	done   chan struct{}      // while a call extends the batch: closed when it returned
}

// newHeartbeat returns the heartbeat of one Run, whose calls have ctx's values, not its cancellation.
func (c *Consumer) newHeartbeat(ctx context.Context) *heartbeat {
	vt, _ := c.batcher.visibilityTimeout()
	return &heartbeat{
		src:     c.src,
		clock:   c.batcher.clock,
		vt:      vt,
		ctx:     context.WithoutCancel(ctx),
		timeout: min(c.o.SourceTimeout, vt/4),
		active:  make(map[int]beating),
	}
}

// join adds batch to the set; leave(id) takes it out, after which its visibility is not extended again.
func (h *heartbeat) join(batch []Delivery) (id int) {
	if h.vt <= 0 {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.nextID++
	h.active[h.nextID] = beating{batch: batch}
	if !h.armed && !h.stopped {
		h.arm()
	}
	return h.nextID
}

// leave takes a batch out of the set. If a call is extending it, leave ends that call and waits for it to
// return; it waits for no other batch's call.
func (h *heartbeat) leave(id int) {
	if h.vt <= 0 {
		return
	}
	h.mu.Lock()
	b := h.active[id]
	delete(h.active, id)
	h.mu.Unlock()
	if b.done != nil {
		b.cancel()
		<-b.done
	}
}

func (h *heartbeat) arm() {
	if h.timer == nil {
		h.timer = h.clock.AfterFunc(h.vt/2, h.beat)
	} else {
		h.timer.Reset(h.vt / 2)
	}
	h.armed = true
}

// beat extends the visibility of the batches in the set, each in a goroutine, waits for the calls, and
// arms the timer again while batches remain.
func (h *heartbeat) beat() {
	h.mu.Lock()
	h.armed = false
	if h.stopped || len(h.active) == 0 {
		h.mu.Unlock()
		return
	}
	h.beats.Add(1)
	defer h.beats.Done()
	ctx, cancel := withTimeout(h.ctx, h.clock, h.timeout)
	defer cancel()
	h.cancel = cancel
	var wg sync.WaitGroup
	for id, b := range h.active {
		bctx, bcancel := context.WithCancel(ctx)
		done := make(chan struct{})
		b.cancel, b.done = bcancel, done
		h.active[id] = b
		wg.Go(func() {
			defer close(done)
			defer bcancel()
			h.extend(bctx, b.batch)
		})
	}
	h.mu.Unlock()
	wg.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, b := range h.active {
		if b.done != nil {
			b.cancel, b.done = nil, nil
			h.active[id] = b
		}
	}
	h.cancel = nil
	if !h.stopped && len(h.active) > 0 {
		h.arm()
	}
}

// extend makes a batch invisible for another visibility timeout, 10 messages a call.
func (h *heartbeat) extend(ctx context.Context, batch []Delivery) {
	for chunk := range slices.Chunk(batch, MaxBatchEntries) {
		entries := make([]VisibilityChange, len(chunk))
		for i, d := range chunk {
			entries[i] = VisibilityChange{ReceiptHandle: d.ReceiptHandle, Timeout: h.vt}
		}
		// Best effort: a message past the 12-hour limit comes back when its visibility ends.
		if h.src.ChangeVisibilityBatch(ctx, entries) != nil && ctx.Err() != nil {
			return
		}
	}
}

// stop ends the heartbeat when its Run returns: it ends the calls of a beat under way and waits for them.
func (h *heartbeat) stop() {
	h.mu.Lock()
	h.stopped = true
	if h.timer != nil {
		h.timer.Stop()
	}
	h.armed = false
	cancel := h.cancel
	h.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	h.beats.Wait()
}

// call runs the handler under the handler timeout, by the queue's clock, turning a panic into a
// *PanicError.
func (c *Consumer) call(ctx context.Context, batch []Delivery) (err error) {
	if d := c.o.HandlerTimeout; d > 0 {
		cctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		timer := c.batcher.clock.AfterFunc(d, func() { cancel(ErrHandlerTimeout) })
		defer timer.Stop()
		ctx = deadlineContext{cctx, c.batcher.clock.Now().Add(d)}
	}
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	err = c.h(ctx, batch)
	if errors.Is(context.Cause(ctx), ErrHandlerTimeout) {
		err = fmt.Errorf("%w after %v", ErrHandlerTimeout, c.o.HandlerTimeout)
	}
	return err
}

// deadlineContext is a context cancelled by the queue's clock at deadline, which it reports as its
// Deadline; on a ManualClock that is a time of the manual clock.
type deadlineContext struct {
	context.Context
	deadline time.Time
}

func (c deadlineContext) Deadline() (time.Time, bool) { return c.deadline, true }

// itemFailures returns the messages a partial failure fails: those it names and, on FIFO, every later
// message of their groups in the batch. An id that is not in the batch, or an empty one, makes it invalid:
// the whole batch fails (spec 9.3.4). A nil f names none.
func (c *Consumer) itemFailures(batch []Delivery, f *BatchItemFailures) (failed []Delivery, valid bool) {
	if f == nil {
		return nil, true
	}
	inBatch := make(map[string]bool, len(batch))
	for _, d := range batch {
		inBatch[d.MessageID] = true
	}
	named := make(map[string]bool, len(f.MessageIDs))
	for _, id := range f.MessageIDs {
		if !inBatch[id] {
			return batch, false
		}
		named[id] = true
	}
	failedGroups := make(map[string]bool)
	for _, d := range batch {
		if named[d.MessageID] || c.src.FIFO() && failedGroups[d.GroupID] {
			failed = append(failed, d)
			failedGroups[d.GroupID] = true
		}
	}
	return failed, true
}

// settle deletes the messages of batch that did not fail and returns the failed ones to the queue: at once
// with RetryImmediately, else when their visibility timeout ends. It returns what the deletes failed with.
func (c *Consumer) settle(calls *sourceCalls, batch, failed []Delivery) error {
	if len(failed) == 0 {
		return c.delete(calls, batch)
	}
	isFailed := make(map[string]bool, len(failed))
	for _, d := range failed {
		isFailed[d.ReceiptHandle] = true
	}
	var ok []Delivery
	for _, d := range batch {
		if !isFailed[d.ReceiptHandle] {
			ok = append(ok, d)
		}
	}
	// Deleted first, so that on a FIFO queue no failed group is unblocked by the delete of its handled
	// messages: with RetryImmediately the failed groups become available again in batch order.
	err := c.delete(calls, ok)
	if c.o.RetryImmediately {
		c.batcher.release(calls, failed)
	}
	return err
}

// delete deletes ds, 10 at a time, with a cleanup context of calls: a batch is settled after Run's context
// is done, but not for longer than SourceTimeout.
func (c *Consumer) delete(calls *sourceCalls, ds []Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	ctx := calls.cleanup.get()
	var errs []error
	for chunk := range slices.Chunk(ds, MaxBatchEntries) {
		handles := make([]string, len(chunk))
		for i, d := range chunk {
			handles[i] = d.ReceiptHandle
		}
		errs = append(errs, c.src.DeleteBatch(ctx, handles))
	}
	return errors.Join(errs...)
}

// report counts a batch that ended in the Consumer's metrics, then logs it and hands it to OnBatch, so that
// Metrics called from OnBatch counts the batch, and no longer as in flight.
func (c *Consumer) report(r BatchReport) {
	c.counters.ended(&r)
	c.counters.inFlight.Add(-1)
	if c.o.Logger != nil {
		c.logBatch(&r)
	}
	if c.o.OnBatch != nil {
		c.o.OnBatch(r)
	}
}

// groupsOf returns the distinct groups of a batch in order.
func groupsOf(batch []Delivery) []string {
	var gs []string
	for i, d := range batch {
		if d.GroupID != "" && (i == 0 || d.GroupID != batch[i-1].GroupID) {
			gs = append(gs, d.GroupID)
		}
	}
	return gs
}

package fifoq

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fifoq/fifoq/internal/rule"
)

// The limits of a Lambda event source mapping for SQS, as Lambda's CreateEventSourceMapping checks them:
// BatchOptions and package lambdaevents's mappings both keep to them.
const (
	// DefaultBatchSize is the batch size of a mapping that gives none.
	DefaultBatchSize = 10
	// MaxBatchSize is the largest batch size of a standard queue's mapping; a FIFO queue's is
	// MaxBatchEntries, and a standard queue's above MaxBatchEntries needs a batching window of a second or
	// more. A Batcher receives a batch over a Queue in one ReceiveMany.
	MaxBatchSize = maxReceiveMany
	// MaxBatchWindow is the longest batching window (MaximumBatchingWindowInSeconds 300).
	MaxBatchWindow = 5 * time.Minute

	defaultBatchBytes = 6 << 20 // the 6 MB payload of a synchronous Lambda invocation
)

// BatchOptions configure a [Batcher], as the batching settings of a Lambda event source mapping.
type BatchOptions struct {
	// Size is the most messages in a batch (BatchSize): 1..10,000; 0 means 10. Lambda allows at most 10
	// on FIFO queues; see Strict.
	Size int
	// Window is how long a batch may gather messages (MaximumBatchingWindowInSeconds): 0..5m. With 0 a
	// batch is returned as soon as a message is available, with what is available then. Lambda allows none
	// on FIFO queues; see Strict.
	Window time.Duration
	// MaxBytes is the most bytes of body and attributes in a batch; 0 means 6 MB, Lambda's payload limit.
	// A message larger than MaxBytes on its own makes a batch of one.
	MaxBytes int
	// VisibilityTimeout is the visibility timeout of the receives; 0 means the queue's.
	VisibilityTimeout time.Duration
	// Strict rejects what Lambda rejects: on FIFO a Size above 10 or a Window; on standard queues a Size
	// above 10 without a Window.
	Strict bool
}

// A Batcher builds batches of messages from a source the way a Lambda event source mapping builds the
// payload of one invocation. On a FIFO queue the messages of one group are contiguous and in order, groups
// are taken in the queue's group order (by default the order they became available, so a group whose
// messages come back waits behind the groups already waiting; see [WithGroupOrder]), and a group is never in
// two batches at once, since a receive never returns a group with messages in flight. A Batcher is meant for
// one goroutine at a time.
type Batcher struct {
	src     Source
	many    ReceiveManySource // src, if it is one
	o       BatchOptions
	clock   Clock
	vt      time.Duration // the visibility timeout of the receives, if vtKnown
	vtKnown bool
	timeout time.Duration // how long a call to src may take, past a receive's wait (ConsumerOptions.SourceTimeout)
}

// visibilityTimeout returns the visibility timeout of the Batcher's receives, when it is known: set in the
// options, or said by the source.
func (b *Batcher) visibilityTimeout() (time.Duration, bool) { return b.vt, b.vtKnown }

// alreadyDone is a context that is done already: NewBatcher asks a VisibilitySource with it.
var alreadyDone = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// NewBatcher returns a Batcher over src. Options out of range return ErrInvalidBatchOptions. When the
// options give no visibility timeout and src is a [VisibilitySource], NewBatcher asks it with a context that
// is done already; a source that answers only with a call is asked again when a Consumer's Run starts.
func NewBatcher(src Source, o BatchOptions) (*Batcher, error) {
	if err := o.validate(src.FIFO()); err != nil {
		return nil, err
	}
	o.Size = cmp.Or(o.Size, DefaultBatchSize)
	o.MaxBytes = cmp.Or(o.MaxBytes, defaultBatchBytes)
	b := &Batcher{src: src, o: o, clock: realClock{}, timeout: defaultSourceTimeout}
	if s, ok := src.(interface{ Clock() Clock }); ok {
		b.clock = s.Clock()
	}
	b.many, _ = src.(ReceiveManySource)
	if o.VisibilityTimeout > 0 {
		b.vt, b.vtKnown = o.VisibilityTimeout, true
	} else if s, ok := src.(VisibilitySource); ok {
		if vt, err := s.VisibilityTimeout(alreadyDone); err == nil {
			b.vt, b.vtKnown = vt, true
		}
	}
	return b, nil
}

func (o BatchOptions) validate(fifo bool) error {
	switch {
	case o.Size < 0 || o.Size > MaxBatchSize:
		return rule.Reject(ErrInvalidBatchOptions, "batch size %d, want 1..%d", o.Size, MaxBatchSize)
	case o.Window < 0 || o.Window > MaxBatchWindow:
		return rule.Reject(ErrInvalidBatchOptions, "batch window %v, want 0..%v", o.Window, MaxBatchWindow)
	case o.MaxBytes < 0:
		return rule.Reject(ErrInvalidBatchOptions, "max bytes %d", o.MaxBytes)
	case o.VisibilityTimeout < 0 || o.VisibilityTimeout > maxVisibilityTimeout:
		return rule.Reject(ErrInvalidBatchOptions, "visibility timeout %v, want 0..%v", o.VisibilityTimeout, maxVisibilityTimeout)
	case !o.Strict:
		return nil
	case fifo && o.Size > MaxBatchEntries:
		return rule.Reject(ErrInvalidBatchOptions, "batch size %d: FIFO queues take at most %d", o.Size, MaxBatchEntries)
	case fifo && o.Window > 0:
		return rule.Reject(ErrInvalidBatchOptions, "batching window is not supported for FIFO queues")
	case !fifo && o.Size > MaxBatchEntries && o.Window < time.Second:
		return rule.Reject(ErrInvalidBatchOptions, "batch size %d needs a batch window of at least 1s", o.Size)
	}
	return nil
}

// Next returns the next batch, when the first of these happens: Size messages are gathered, the Window
// ends (with at least one message), or the next message would take the batch past MaxBytes. It waits for
// a first message as long as it takes, and returns ctx's error when ctx is done; messages gathered by then
// are made visible again first.
//
// With a Window, messages are received with the visibility timeout extended by what is left of the window,
// so none comes back while the batch gathers (Lambda extends it likewise). Messages a receive returned that
// do not fit in the batch (MaxBytes) are made visible again at once; their receive count has risen by one.
// With no Window, a source that is not a [ReceiveManySource] gives the messages of one receive, as Lambda's
// poller does: over a network a second receive to fill the batch would cost a round trip.
//
// Each receive is given a context of ctx's that ends 50 seconds after it starts (the longest long-poll
// wait, 20 seconds, and a Consumer's default SourceTimeout, 30 seconds), or up to a sixteenth more (see
// [ConsumerOptions.SourceTimeout]); one still running then counts as a receive that returned nothing. A
// release is given a context that ctx does not cancel, which ends 30 seconds after it starts.
//
// On a FIFO queue a batch holds groups in the order the receives give them: by default the order in which
// they became available, as observed on SQS, so messages made visible again (released, failed, timed out)
// queue behind the groups already waiting. SQS does not guarantee an order between groups; a handler should
// not depend on it.
func (b *Batcher) Next(ctx context.Context) ([]Delivery, error) {
	calls := newSourceCalls(ctx, b.clock, b.timeout)
	defer calls.stop()
	return b.next(ctx, calls, -1)
}

// next is Next, with the contexts of calls for its calls to the source, waiting at most firstWait for a
// first message when firstWait >= 0: it returns no batch and no error when none came by then, and
// errReceiveTimeout when the receive ran past its deadline.
func (b *Batcher) next(ctx context.Context, calls *sourceCalls, firstWait time.Duration) ([]Delivery, error) {
	var (
		batch    []Delivery
		bytes    int
		deadline time.Time
		at       map[string]int // MessageID -> index in batch, with a Window
	)
	for {
		wait, left := maxWaitTime, b.o.Window
		if len(batch) == 0 && firstWait >= 0 {
			wait = firstWait
		}
		if len(batch) > 0 {
			if left = deadline.Sub(b.clock.Now()); b.o.Window == 0 {
				wait = 0
			} else if wait = min(left, maxWaitTime); wait <= 0 {
				return batch, nil
			}
		}
		ds, err := b.receive(ctx, calls, b.o.Size-len(batch), wait, left)
		if errors.Is(err, errReceiveTimeout) && (len(batch) > 0 || firstWait < 0) {
			ds, err = nil, nil // as a receive that returned nothing
		}
		if err != nil {
			b.release(calls, batch)
			return nil, err
		}
		if len(batch) == 0 && len(ds) == 0 && firstWait >= 0 {
			return nil, nil
		}
		if batch == nil {
			batch = ds[:0] // the first receive's deliveries are the start of the batch: no copy
		}
		if len(batch) == 0 && len(ds) > 0 && b.o.Window > 0 {
			deadline = b.clock.Now().Add(b.o.Window)
			at = make(map[string]int)
		}
		full := false
		for i, d := range ds {
			if j, ok := at[d.MessageID]; ok {
				// Received again: its visibility ran out while the window gathered (an unknown visibility
				// timeout). Keep its place, with the new receipt.
				batch[j] = d
				continue
			}
			size := deliverySize(&d)
			if len(batch) > 0 && bytes+size > b.o.MaxBytes {
				b.release(calls, ds[i:])
				full = true
				break
			}
			if at != nil {
				at[d.MessageID] = len(batch)
			}
			batch = append(batch, d)
			bytes += size
		}
		switch {
		case full, len(batch) == b.o.Size:
			return batch, nil
		case len(batch) > 0 && b.o.Window == 0 && (len(ds) == 0 || b.many == nil):
			return batch, nil
		}
	}
}

// receive receives up to n messages, waiting up to wait for the first; wait 0 is a short poll. With a
// window, left of it, the visibility timeout is extended by left when the Batcher knows it. The call has a
// context of calls; if it runs past its deadline while ctx is not done, receive returns errReceiveTimeout.
//
// From a ReceiveManySource it receives all n at once, more than a receive's 10: so a FIFO batch can hold
// more than 10 messages of one group, which a second receive would not give while the first ones are in
// flight.
func (b *Batcher) receive(ctx context.Context, calls *sourceCalls, n int, wait, left time.Duration) ([]Delivery, error) {
	// A wait of 0 is a short poll, whatever the queue's receive wait time.
	o := ReceiveOptions{MaxMessages: n, WaitTime: wait, NoWaitTime: wait == 0, VisibilityTimeout: b.o.VisibilityTimeout}
	if vt, ok := b.visibilityTimeout(); ok {
		o.VisibilityTimeout = min(vt+max(left, 0), maxVisibilityTimeout)
		o.NoVisibilityTimeout = o.VisibilityTimeout == 0 // a queue whose visibility timeout is 0
	}
	cctx := calls.receive.get()
	var (
		ds  []Delivery
		err error
	)
	if b.many != nil {
		ds, err = b.many.ReceiveMany(cctx, o)
	} else {
		o.MaxMessages = min(n, MaxBatchEntries)
		ds, err = b.src.Receive(cctx, o)
	}
	if err != nil && ctx.Err() == nil && cctx.Err() != nil {
		return nil, fmt.Errorf("%w: %w", errReceiveTimeout, err)
	}
	return ds, err
}

// release makes ds visible again at once. It is cleanup, which must happen even when the context of the Run
// or Next is done: its calls have a cleanup context of calls.
func (b *Batcher) release(calls *sourceCalls, ds []Delivery) {
	if len(ds) == 0 {
		return
	}
	ctx := calls.cleanup.get()
	for chunk := range slices.Chunk(ds, MaxBatchEntries) {
		entries := make([]VisibilityChange, len(chunk))
		for i, d := range chunk {
			entries[i] = VisibilityChange{ReceiptHandle: d.ReceiptHandle}
		}
		// Best effort: a message whose handle expired is visible already.
		_ = b.src.ChangeVisibilityBatch(ctx, entries)
	}
}

// deliverySize is a message's body plus attributes, as SQS counts message size.
func deliverySize(d *Delivery) int { return rawSize(&d.Message) }

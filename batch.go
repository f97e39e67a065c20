package fifoq

import (
	"cmp"
	"context"
	"time"
)

// The Lambda event source mapping limits (spec 9.1).
const (
	defaultBatchSize  = 10
	maxBatchSize      = 10_000
	maxBatchWindow    = 5 * time.Minute
	defaultBatchBytes = 6 << 20 // the 6 MB payload of a synchronous Lambda invocation
)

// A Source is what a [Batcher] and a [Consumer] need of a queue. *Queue is one; an adapter over real SQS can
// be another, so the same consumer code runs on both.
type Source interface {
	// FIFO reports whether the source is a FIFO queue.
	FIFO() bool
	// Receive receives messages, as [Queue.Receive].
	Receive(ctx context.Context, o ReceiveOptions) ([]Delivery, error)
	// DeleteBatch deletes up to 10 messages, as [Queue.DeleteBatch].
	DeleteBatch(ctx context.Context, receiptHandles []string) error
	// ChangeVisibilityBatch changes the visibility of up to 10 messages, as [Queue.ChangeVisibilityBatch].
	ChangeVisibilityBatch(ctx context.Context, entries []VisibilityChange) error
}

// Clock returns the queue's clock. A [Batcher] over a *Queue times its batch window by it.
func (q *Queue) Clock() Clock { return q.cfg.clock }

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
// are taken oldest first, and a group is never in two batches at once, since a receive never returns a
// group with messages in flight. A Batcher is meant for one goroutine at a time.
type Batcher struct {
	src   Source
	o     BatchOptions
	clock Clock
}

// NewBatcher returns a Batcher over src. Options out of range return ErrInvalidBatchOptions.
func NewBatcher(src Source, o BatchOptions) (*Batcher, error) {
	if err := o.validate(src.FIFO()); err != nil {
		return nil, err
	}
	o.Size = cmp.Or(o.Size, defaultBatchSize)
	o.MaxBytes = cmp.Or(o.MaxBytes, defaultBatchBytes)
	var clock Clock = realClock{}
	if q, ok := src.(interface{ Clock() Clock }); ok {
		clock = q.Clock()
	}
	return &Batcher{src: src, o: o, clock: clock}, nil
}

func (o BatchOptions) validate(fifo bool) error {
	switch {
	case o.Size < 0 || o.Size > maxBatchSize:
		return reject(ErrInvalidBatchOptions, "batch size %d, want 1..%d", o.Size, maxBatchSize)
	case o.Window < 0 || o.Window > maxBatchWindow:
		return reject(ErrInvalidBatchOptions, "batch window %v, want 0..%v", o.Window, maxBatchWindow)
	case o.MaxBytes < 0:
		return reject(ErrInvalidBatchOptions, "max bytes %d", o.MaxBytes)
	case o.VisibilityTimeout < 0 || o.VisibilityTimeout > maxVisibilityTimeout:
		return reject(ErrInvalidBatchOptions, "visibility timeout %v, want 0..%v", o.VisibilityTimeout, maxVisibilityTimeout)
	case !o.Strict:
		return nil
	case fifo && o.Size > maxBatchEntries:
		return reject(ErrInvalidBatchOptions, "batch size %d: FIFO queues take at most %d", o.Size, maxBatchEntries)
	case fifo && o.Window > 0:
		return reject(ErrInvalidBatchOptions, "batching window is not supported for FIFO queues")
	case !fifo && o.Size > maxBatchEntries && o.Window < time.Second:
		return reject(ErrInvalidBatchOptions, "batch size %d needs a batch window of at least 1s", o.Size)
	}
	return nil
}

// Next returns the next batch, when the first of these happens: Size messages are gathered, the Window
// ends (with at least one message), or the next message would take the batch past MaxBytes. It waits for
// a first message as long as it takes, and returns ctx's error when ctx is done; messages gathered by then
// are made visible again first.
//
// Messages a receive returned that do not fit in the batch (MaxBytes) are made visible again at once; their
// receive count has risen by one.
func (b *Batcher) Next(ctx context.Context) ([]Delivery, error) {
	var (
		batch    []Delivery
		bytes    int
		deadline time.Time
	)
	for {
		wait := maxWaitTime
		if len(batch) > 0 {
			if b.o.Window == 0 {
				wait = 0
			} else if wait = min(deadline.Sub(b.clock.Now()), maxWaitTime); wait <= 0 {
				return batch, nil
			}
		}
		ds, err := b.src.Receive(ctx, ReceiveOptions{
			MaxMessages:       min(maxBatchEntries, b.o.Size-len(batch)),
			WaitTime:          max(wait, time.Nanosecond), // 0 would mean the queue's wait time
			VisibilityTimeout: b.o.VisibilityTimeout,
		})
		if err != nil {
			b.release(batch)
			return nil, err
		}
		if len(batch) == 0 && len(ds) > 0 && b.o.Window > 0 {
			deadline = b.clock.Now().Add(b.o.Window)
		}
		full := false
		for i, d := range ds {
			size := deliverySize(&d)
			if len(batch) > 0 && bytes+size > b.o.MaxBytes {
				b.release(ds[i:])
				full = true
				break
			}
			batch = append(batch, d)
			bytes += size
		}
		if full || len(batch) == b.o.Size || len(batch) > 0 && b.o.Window == 0 && len(ds) == 0 {
			return batch, nil
		}
	}
}

// release makes ds visible again at once.
func (b *Batcher) release(ds []Delivery) {
	for len(ds) > 0 {
		n := min(len(ds), maxBatchEntries)
		entries := make([]VisibilityChange, n)
		for i := range entries {
			entries[i] = VisibilityChange{ReceiptHandle: ds[i].ReceiptHandle}
		}
		// Best effort: a message whose handle expired is visible already.
		_ = b.src.ChangeVisibilityBatch(context.Background(), entries)
		ds = ds[n:]
	}
}

// deliverySize is a message's body plus attributes, as SQS counts message size.
func deliverySize(d *Delivery) int { return rawSize(&d.Message) }

package fifoq

import (
	"context"
	"time"
)

// A Source is what a [Batcher] and a [Consumer] need of a queue. *Queue is one, a catalogue's queue
// (package catalog) another, and the Source of the sqsadapter module, over Amazon SQS, a third: the same
// consumer code runs on each. Batchers and Consumers work with any implementation, and so do the packages
// built on them (lambdaevents, fifoqtest's Work).
//
// A Source may also have methods that a Batcher and a Consumer use when it has them, as io.Copy uses an
// io.WriterTo:
//
//   - [VisibilitySource]: VisibilityTimeout, its queue's visibility timeout, to keep long batches invisible
//     and to check ConsumerOptions.HandlerTimeout against it;
//   - [ReceiveManySource]: ReceiveMany, a receive of more than 10 messages, so that a FIFO batch can hold more
//     than 10 messages of one group;
//   - [StatsSource]: Stats, exact counts, for [Consumer.RunUntilEmpty] to tell that the queue is empty;
//   - Clock() Clock: the clock to time the batch window, the handler timeout, the heartbeat and the
//     deadlines of the calls to the source by (the real clock otherwise);
//   - Name() string: the queue's name, for the logs and metrics of a Consumer.
//
// A *Queue has them all. A Source that wraps another (to trace or count its calls, say) should have those of
// the wrapped one too, or a Consumer over it does without them.
//
// Every call a Batcher or a Consumer makes to a Source has a context with a deadline: a receive may take the
// longest long-poll wait (20 seconds) and [ConsumerOptions.SourceTimeout] more; any other call
// SourceTimeout. Receives are cancelled with the context of Run (or Next); deletes, visibility changes and
// releases, which settle batches that outlive it, are not. A call that does not return before its deadline
// holds up nothing but its own batch: no call is made while other batches wait for it.
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

// A VisibilitySource is a [Source] that can say its queue's visibility timeout, as *[Queue] and the Source of
// the sqsadapter module can. When BatchOptions.VisibilityTimeout is 0 (the queue's), a [Batcher] uses it to
// extend the visibility of its receives by what is left of the batch window, and a [Consumer] to extend the
// visibility of the batches it is handling every half visibility timeout, so that a handler that runs long
// keeps its messages (and on a FIFO queue its groups) to itself. Without it the messages of a long batch
// come back to another batch once their visibility timeout ends.
//
// The timeout is asked for at two moments:
//
//   - by [NewBatcher] (and so [NewConsumer]), with a context that is done already. A source that knows the
//     timeout without a call, as a *Queue does, answers, and NewConsumer checks HandlerTimeout against it. A
//     source that needs a call to learn it should return ctx.Err() at once, without the call, as a call with
//     a done context does;
//   - when [Consumer.Run] or [Consumer.RunUntilEmpty] starts, with a context of Run's that ends after
//     [ConsumerOptions.SourceTimeout]. An error makes Run return it, and a timeout shorter than
//     HandlerTimeout makes Run return ErrInvalidBatchOptions.
type VisibilitySource interface {
	// VisibilityTimeout returns the queue's visibility timeout.
	VisibilityTimeout(ctx context.Context) (time.Duration, error)
}

// A ReceiveManySource is a [Source] that can receive more than 10 messages in one call, as *[Queue] can. A
// [Batcher] with a Size above 10 receives what a batch still needs in one call to it, so that a FIFO batch
// can hold more than 10 messages of one group: a second receive would return none of a group while its
// first messages are in flight. Over a source that is not one, every receive asks for at most 10 messages.
//
// A ReceiveManySource is also taken to be cheap to call, as a queue in the same process is: with no batch
// window, a Batcher tops a batch up with receives that do not wait, as long as they return messages. Over
// any other source it returns what one receive gave, as Lambda's poller does: over a network each receive
// costs a round trip.
type ReceiveManySource interface {
	// ReceiveMany is Receive with room for up to o.MaxMessages messages, 1..10,000.
	ReceiveMany(ctx context.Context, o ReceiveOptions) ([]Delivery, error)
}

// A StatsSource is a [Source] that counts its messages exactly, as *[Queue] does. [Consumer.RunUntilEmpty]
// over it returns once Stats is all zero (nothing visible, in flight or delayed) and none of its batches is
// in flight. Over any other source it returns once a receive that waits a second finds nothing: see
// RunUntilEmpty. A source whose counts are approximate, as those of SQS are, should not be a StatsSource.
type StatsSource interface {
	// Stats returns the queue's counts, exact as of now. It is called with no lock of the Consumer held,
	// and should not block.
	Stats() Stats
}

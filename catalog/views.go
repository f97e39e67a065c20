package catalog

import (
	"context"
	"iter"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/topic"
)

// What a catalogue hands out: views of its queues and topics that read them and move their messages, and
// change nothing the catalogue records. A queue's settings, redrive policies and move tasks, a topic's
// settings and subscriptions, change through the catalogue's methods, which record them; a view has no
// method that could change them behind its back.

// A Queue is a queue of a [Catalog]: its namespace and name, and its messages. It has the methods of
// [fifoq.Queue] that send, receive, delete, change visibility, purge and look, so it is a [fifoq.Source] (with
// its optional methods) for a Consumer; it has none that changes the queue's settings or starts a move task:
// those go through the catalogue ([Catalog.Update], [Catalog.StartMoveTask]), which records them. A Queue is a
// value, safe for concurrent use; the zero Queue is not usable.
type Queue struct {
	ns   Namespace
	name string
	q    *fifoq.Queue
}

// Namespace returns the queue's namespace.
func (q Queue) Namespace() Namespace { return q.ns }

// Name returns the queue's name in its namespace. Its name in fifoq, which its messages carry as their
// DeadLetterSource in a dead-letter queue, is [Queue.FifoqName].
func (q Queue) Name() string { return q.name }

// FifoqName returns the queue's name in fifoq and in the store (see [Catalog]).
func (q Queue) FifoqName() string { return q.q.Name() }

// ARN returns the queue's ARN, arn:<partition>:sqs:<region>:<account>:<name>.
func (q Queue) ARN() string { return q.ns.QueueARN(q.name) }

// FIFO reports whether the queue is a FIFO queue.
func (q Queue) FIFO() bool { return q.q.FIFO() }

// Clock returns the queue's clock.
func (q Queue) Clock() fifoq.Clock { return q.q.Clock() }

// Send is [fifoq.Queue.Send].
func (q Queue) Send(ctx context.Context, m fifoq.Message) (fifoq.SendResult, error) {
	return q.q.Send(ctx, m)
}

// SendNoWait is [fifoq.Queue.SendNoWait].
func (q Queue) SendNoWait(ctx context.Context, m fifoq.Message) (fifoq.SendResult, fifoq.Pending, error) {
	return q.q.SendNoWait(ctx, m)
}

// SendBatch is [fifoq.Queue.SendBatch].
func (q Queue) SendBatch(ctx context.Context, ms []fifoq.Message) ([]fifoq.SendResult, error) {
	return q.q.SendBatch(ctx, ms)
}

// Receive is [fifoq.Queue.Receive].
func (q Queue) Receive(ctx context.Context, o fifoq.ReceiveOptions) ([]fifoq.Delivery, error) {
	return q.q.Receive(ctx, o)
}

// ReceiveMany is [fifoq.Queue.ReceiveMany].
func (q Queue) ReceiveMany(ctx context.Context, o fifoq.ReceiveOptions) ([]fifoq.Delivery, error) {
	return q.q.ReceiveMany(ctx, o)
}

// Delete is [fifoq.Queue.Delete].
func (q Queue) Delete(ctx context.Context, receiptHandle string) error {
	return q.q.Delete(ctx, receiptHandle)
}

// DeleteBatch is [fifoq.Queue.DeleteBatch].
func (q Queue) DeleteBatch(ctx context.Context, receiptHandles []string) error {
	return q.q.DeleteBatch(ctx, receiptHandles)
}

// ChangeVisibility is [fifoq.Queue.ChangeVisibility].
func (q Queue) ChangeVisibility(ctx context.Context, receiptHandle string, timeout time.Duration) error {
	return q.q.ChangeVisibility(ctx, receiptHandle, timeout)
}

// ChangeVisibilityBatch is [fifoq.Queue.ChangeVisibilityBatch].
func (q Queue) ChangeVisibilityBatch(ctx context.Context, entries []fifoq.VisibilityChange) error {
	return q.q.ChangeVisibilityBatch(ctx, entries)
}

// VisibilityTimeout is [fifoq.Queue.VisibilityTimeout].
func (q Queue) VisibilityTimeout(ctx context.Context) (time.Duration, error) {
	return q.q.VisibilityTimeout(ctx)
}

// Purge is [fifoq.Queue.Purge].
func (q Queue) Purge(ctx context.Context) error { return q.q.Purge(ctx) }

// Stats is [fifoq.Queue.Stats].
func (q Queue) Stats() fifoq.Stats { return q.q.Stats() }

// Metrics is [fifoq.Queue.Metrics].
func (q Queue) Metrics() fifoq.Metrics { return q.q.Metrics() }

// Messages is [fifoq.Queue.Messages].
func (q Queue) Messages() iter.Seq[fifoq.Snapshot] { return q.q.Messages() }

// MessagesAfter is [fifoq.Queue.MessagesAfter].
func (q Queue) MessagesAfter(cursor string, n int, f fifoq.MessageFilter) ([]fifoq.Snapshot, string, error) {
	return q.q.MessagesAfter(cursor, n, f)
}

// BlockedGroups is [fifoq.Queue.BlockedGroups].
func (q Queue) BlockedGroups(n int) []fifoq.BlockedGroup { return q.q.BlockedGroups(n) }

// A Topic is a topic of a [Catalog]: its namespace and name, and what publishes to it and reads it. It has
// the methods of [topic.Topic] that publish and look; its settings and subscriptions change through the
// catalogue ([Catalog.UpdateTopic], [Catalog.Subscribe], [Catalog.DeleteTopic]), which records them. A Topic is
// a value, safe for concurrent use; the zero Topic is not usable.
type Topic struct {
	ns   Namespace
	name string
	t    *topic.Topic
}

// Namespace returns the topic's namespace.
func (t Topic) Namespace() Namespace { return t.ns }

// Name returns the topic's name in its namespace.
func (t Topic) Name() string { return t.name }

// ARN returns the topic's ARN, arn:<partition>:sns:<region>:<account>:<name>.
func (t Topic) ARN() string { return t.t.ARN() }

// FIFO reports whether the topic is a FIFO topic.
func (t Topic) FIFO() bool { return t.t.FIFO() }

// Attributes returns the topic's settings as they are now.
func (t Topic) Attributes() topic.Attributes { return t.t.Attributes() }

// Metrics is [topic.Topic.Metrics].
func (t Topic) Metrics() topic.Metrics { return t.t.Metrics() }

// Publish is [topic.Topic.Publish].
func (t Topic) Publish(ctx context.Context, m topic.Message, opts ...topic.PublishOption) (topic.PublishResult, error) {
	return t.t.Publish(ctx, m, opts...)
}

// PublishBatch is [topic.Topic.PublishBatch].
func (t Topic) PublishBatch(ctx context.Context, ms []topic.Message, opts ...topic.PublishOption) ([]topic.PublishResult, error) {
	return t.t.PublishBatch(ctx, ms, opts...)
}

// A catalogue's queues and topics are clients of the interfaces code is written against, as *fifoq.Queue
// and *topic.Topic are.
var (
	_ fifoq.QueueClient = Queue{}
	_ topic.Publisher   = Topic{}
)

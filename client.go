package fifoq

import (
	"context"
	"time"
)

// The interfaces a program's queue code is written against, so that the same code runs over a *Queue in
// process (a unit test, a service on one machine) and over Amazon SQS through package sqsadapter: the way
// past one machine. Administration (creating and deleting queues, their settings, purges, move tasks) is not
// in them: a catalogue (package catalog) does it in process, infrastructure code does it on AWS.

// A Sender sends messages to a queue. *Queue is one, and so are a catalogue's queues and the queues of
// package sqsadapter, which send to Amazon SQS.
type Sender interface {
	// FIFO reports whether the queue is a FIFO queue.
	FIFO() bool
	// Send sends one message, as [Queue.Send].
	Send(ctx context.Context, m Message) (SendResult, error)
	// SendBatch sends 1..10 messages, as [Queue.SendBatch]: the entries that fail alone are named by a
	// *BatchError, in entry order.
	SendBatch(ctx context.Context, ms []Message) ([]SendResult, error)
}

// A QueueClient is both halves of a queue, for a program that sends and consumes: a [Source] for a
// [Consumer] or a [Batcher], a [Sender], and Delete and ChangeVisibility for code that receives by hand.
// *Queue is one, and so are a catalogue's queues and the queues of package sqsadapter.
type QueueClient interface {
	// Source receives, deletes and changes visibility in batches, for a Consumer or a Batcher.
	Source
	// Sender sends.
	Sender
	// Delete deletes a received message, as [Queue.Delete].
	Delete(ctx context.Context, receiptHandle string) error
	// ChangeVisibility changes how long a received message stays invisible, as [Queue.ChangeVisibility].
	ChangeVisibility(ctx context.Context, receiptHandle string, timeout time.Duration) error
}

var (
	_ Sender      = (*Queue)(nil)
	_ QueueClient = (*Queue)(nil)
)

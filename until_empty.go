package fifoq

import (
	"context"
	"time"
)

// emptyCheckWait is how long RunUntilEmpty's receives wait for a message while none of its batches is in
// flight: from a StatsSource it looks at Stats again after each, since a message may leave the queue without
// a receive returning it (moved to the dead-letter queue by that very receive, expired, deleted by another
// consumer); a Source that is not a StatsSource is taken for empty when one finds nothing. On SQS a receive
// that waits at all asks every server, where a short poll asks a sample of them and may miss the last few
// messages.
const emptyCheckWait = time.Second

// RunUntilEmpty is [Consumer.Run] for a one-shot worker, a batch job or a test: it handles batches until
// the source is empty and none of its batches is in flight, then returns nil. It returns ctx's error when
// ctx is done first (after waiting for the batches in flight, as Run does), and an error when the source
// fails.
//
// Empty means, for a source that counts its messages exactly (a [StatsSource], such as a *[Queue]), that
// the queue holds no message at all: none visible, none in flight and none delayed ([Queue.Stats] all
// zero). So RunUntilEmpty waits for what is in flight, in its own batches or another consumer's, and for
// delayed messages: a message that a failed batch returned to the queue comes back after its visibility
// timeout and is handled (or moves to the dead-letter queue) before RunUntilEmpty returns. It returns within
// a second of the queue becoming empty, however its last message left: deleted, moved to the dead-letter
// queue, or expired.
//
// For any other [Source], such as an SQS adapter, which cannot count its messages exactly, empty means that
// a receive that waits one second for a message finds none while none of this Consumer's batches is in
// flight. Messages in flight elsewhere or delayed are not waited for, nor are the messages of this
// Consumer's failed batches until their visibility timeout ends (with RetryImmediately they are visible
// again at once, and are handled).
//
// While batches are in flight, RunUntilEmpty starts another only with messages available at once; it waits
// for a batch to end before it looks again.
func (c *Consumer) RunUntilEmpty(ctx context.Context) error {
	end, err := c.run(ctx, true)
	if end == runEmpty {
		return nil
	}
	return err
}

package fifoq

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// emptyCheckWait is how long RunUntilEmpty's last receive from a Source that is not a StatsSource waits
// for a message before it takes the source for empty. On SQS a receive that waits at all asks every server,
// where a short poll asks a sample of them and may miss the last few messages.
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
// timeout and is handled (or moves to the dead-letter queue) before RunUntilEmpty returns. It may return up
// to 20 seconds (the longest receive wait) after the queue became empty by another way than this Consumer's
// deletes, such as a message moving to the dead-letter queue or expiring.
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
	if err := c.learnVisibilityTimeout(ctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	hb := c.newHeartbeat()
	defer hb.stop()
	var (
		wg      sync.WaitGroup
		running atomic.Int64 // this call's batches in flight
	)
	defer wg.Wait()
	slots := make(chan struct{}, c.o.MaxConcurrency)
	ended := make(chan struct{}, 1) // a batch ended
	counts, exact := c.src.(StatsSource)
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		if ctx.Err() != nil {
			<-slots
			return ctx.Err()
		}
		select { // a batch that ends from now on signals again
		case <-ended:
		default:
		}
		idle := running.Load() == 0
		wait := time.Duration(0)
		switch {
		case idle && exact:
			if s := counts.Stats(); s.Visible+s.InFlight+s.Delayed == 0 {
				<-slots
				return nil
			}
			wait = maxWaitTime
		case idle:
			wait = emptyCheckWait
		}
		batch, err := c.batcher.next(ctx, wait)
		if err != nil {
			<-slots
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		if len(batch) == 0 {
			<-slots
			switch {
			case idle && !exact:
				return nil
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
			c.handle(context.WithoutCancel(ctx), batch, hb)
		})
	}
}

package fifoq_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// Dead-letter queues that form cycles, which SQS accepts (recorded: a SetQueueAttributes whose RedrivePolicy
// names the queue's own ARN succeeds in both protocols, LocalStack's AWS-validated test_set_empty_redrive_policy).
// A queue that is its own dead-letter queue moves nothing: its messages are received past maxReceiveCount. In
// a cycle of several queues a message moves on from queue to queue, keeping its MessageID and its receive
// count; the lock order (lockUnder) keeps concurrent receives on every queue of a cycle from deadlocking.

// cyQueue makes a queue on a manual clock that nobody advances, with a visibility timeout of 0, so that
// every receive counts and a message is visible again at once.
func cyQueue(t *testing.T, name string, opts ...fifoq.Option) *fifoq.Queue {
	t.Helper()
	q, err := fifoq.New(name, append([]fifoq.Option{fifoq.WithClock(fifoq.NewManualClock(rdStart)),
		fifoq.WithVisibilityTimeout(0)}, opts...)...)
	require.NoError(t, err, "New(%s)", name)
	return q
}

// cyPoint makes dlq q's dead-letter queue, with maxReceiveCount max.
func cyPoint(t *testing.T, q, dlq *fifoq.Queue, max int) {
	t.Helper()
	a := q.Attributes()
	a.DeadLetterQueue, a.MaxReceiveCount = dlq, max
	require.NoError(t, q.SetAttributes(a), "%s -> %s", q.Name(), dlq.Name())
}

// cyWhere returns body/receive count/dead-letter source of each message of q.
func cyWhere(q *fifoq.Queue) []string {
	var out []string
	for m := range q.Messages() {
		out = append(out, fmt.Sprintf("%s/%d/%s", m.Body, m.ReceiveCount, m.DeadLetterSource))
	}
	return out
}

// A queue that is its own dead-letter queue keeps its messages past maxReceiveCount: each receive returns
// them, their receive count going on; nothing is dead-lettered. The policy reads back and can be removed. A
// move task may start on it (it is a dead-letter queue), and fails on a message sent to it directly, which
// has no source to return to.
func TestRedriveOwnDeadLetterQueue(t *testing.T) {
	t.Parallel()
	for _, fifo := range []bool{false, true} {
		t.Run(fmt.Sprint("fifo=", fifo), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			q := cyQueue(t, rdName("cy-self", fifo))
			cyPoint(t, q, q, 2)
			require.Same(t, q, q.Attributes().DeadLetterQueue)
			require.Equal(t, 2, q.Attributes().MaxReceiveCount)
			sent := rdSend(t, q, "g", "m")
			for i := 1; i <= 5; i++ {
				d := rdOnly(t, rdRecv(t, q, 10))
				require.Equal(t, sent.MessageID, d.MessageID)
				require.Equal(t, i, d.ReceiveCount, "receive %d", i)
				require.Empty(t, d.DeadLetterSource)
			}
			require.Zero(t, q.Metrics().DeadLettered)
			require.Zero(t, q.Metrics().DeadLetterArrivals)

			task, err := q.StartMoveTask(ctx, nil, 0)
			require.NoError(t, err, "a queue that is its own dead-letter queue is a dead-letter queue")
			require.NoError(t, task.Wait(ctx))
			require.Equal(t, fifoq.MoveTaskFailed, task.Status().State)
			require.Contains(t, task.Status().Failure, "no source to return to")
			_, err = q.StartMoveTask(ctx, q, 0)
			require.ErrorIs(t, err, fifoq.ErrInvalidMoveTask, "a task's destination is not its source")
			require.Equal(t, []string{"m/5/"}, cyWhere(q), "the message stays where it is")

			a := q.Attributes()
			a.DeadLetterQueue, a.MaxReceiveCount = nil, 0
			require.NoError(t, q.SetAttributes(a))
			require.Nil(t, q.Attributes().DeadLetterQueue)
			_, err = q.StartMoveTask(ctx, nil, 0)
			require.ErrorIs(t, err, fifoq.ErrNotDeadLetterQueue, "no queue's dead-letter queue any more")
		})
	}
}

// Its own dead-letter queue is checked against the redrive allow policy given with it.
func TestRedriveOwnDeadLetterQueueAllowPolicy(t *testing.T) {
	t.Parallel()
	q := cyQueue(t, "cy-self-allow")
	a := q.Attributes()
	a.DeadLetterQueue, a.MaxReceiveCount = q, 1
	a.RedriveAllowPolicy = fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveDenyAll}
	require.ErrorIs(t, q.SetAttributes(a), fifoq.ErrRedriveNotAllowed)
	a.RedriveAllowPolicy = fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveByQueue, Sources: []string{"cy-self-allow"}}
	require.NoError(t, q.SetAttributes(a))
	require.Same(t, q, q.Attributes().DeadLetterQueue)
}

// In a cycle of two, a message goes to the other queue each time it passes the limit of the queue it is in,
// keeping its MessageID and receive count, and naming the queue it came from.
func TestRedriveCycleOfTwo(t *testing.T) {
	t.Parallel()
	for _, fifo := range []bool{false, true} {
		t.Run(fmt.Sprint("fifo=", fifo), func(t *testing.T) {
			t.Parallel()
			a := cyQueue(t, rdName("cy-a", fifo))
			b := cyQueue(t, rdName("cy-b", fifo), fifoq.WithDeadLetterQueue(a, 3)) // b -> a
			cyPoint(t, a, b, 1)                                                    // a -> b: the cycle
			sent := rdSend(t, a, "g", "m")

			d := rdOnly(t, rdRecv(t, a, 10))
			require.Equal(t, 1, d.ReceiveCount)
			require.Empty(t, rdRecv(t, a, 10), "past a's limit: moved to b")
			require.Equal(t, []string{"m/1/" + a.Name()}, cyWhere(b))
			for i := 2; i <= 3; i++ {
				d = rdOnly(t, rdRecv(t, b, 10))
				require.Equal(t, sent.MessageID, d.MessageID)
				require.Equal(t, i, d.ReceiveCount)
				require.Equal(t, a.Name(), d.DeadLetterSource)
			}
			require.Empty(t, rdRecv(t, b, 10), "past b's limit: moved back to a")
			require.Empty(t, cyWhere(b))
			require.Equal(t, []string{"m/3/" + b.Name()}, cyWhere(a))
			require.Empty(t, rdRecv(t, a, 10), "still past a's limit: moved on to b")
			require.Equal(t, []string{"m/3/" + a.Name()}, cyWhere(b))
			require.Equal(t, uint64(2), a.Metrics().DeadLettered)
			require.Equal(t, uint64(1), b.Metrics().DeadLettered)
		})
	}
}

// In a cycle of three with maxReceiveCount 1, a message received once goes round and round, one queue per
// receive, never delivered again: SQS's documentation forbids no such cycle.
func TestRedriveCycleOfThree(t *testing.T) {
	t.Parallel()
	a := cyQueue(t, "cy3-a")
	b := cyQueue(t, "cy3-b", fifoq.WithDeadLetterQueue(a, 1)) // b -> a
	c := cyQueue(t, "cy3-c", fifoq.WithDeadLetterQueue(b, 1)) // c -> b
	cyPoint(t, a, c, 1)                                       // a -> c
	rdSend(t, a, "", "m")
	require.Len(t, rdRecv(t, a, 1), 1)
	for _, step := range []struct {
		from, to *fifoq.Queue
	}{{a, c}, {c, b}, {b, a}, {a, c}} {
		require.Empty(t, rdRecv(t, step.from, 10), "receive on %s", step.from.Name())
		require.Equal(t, []string{"m/1/" + step.from.Name()}, cyWhere(step.to), "moved from %s", step.from.Name())
	}
}

// Receives on every queue of a cycle of 1, 2 or 3 dead-letter queues, concurrently, with messages moving
// all the time (a visibility timeout of 0 and low limits), never deadlock, lose or duplicate a message: each
// message sent and not deleted is in exactly one queue afterwards. In a store, the moves survive a crash:
// every queue holds after it what it held before. Run under -race. The test runs on real goroutines rather
// than in a synctest bubble: a deadlock of mutexes does not block durably, so only a real-time watchdog can
// report one.
func TestRedriveCycleConcurrent(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 3} {
		for _, fifo := range []bool{false, true} {
			for _, stored := range []bool{false, true} {
				t.Run(fmt.Sprintf("len=%d/fifo=%v/store=%v", n, fifo, stored), func(t *testing.T) {
					t.Parallel()
					cyConcurrent(t, n, fifo, stored)
				})
			}
		}
	}
}

func cyConcurrent(t *testing.T, n int, fifo, stored bool) {
	ctx := context.Background()
	var d *stDisk
	open := func(name string) *fifoq.Queue {
		if stored {
			return d.queue(name, fifoq.WithVisibilityTimeout(0))
		}
		return cyQueue(t, name)
	}
	names := make([]string, n)
	for i := range names {
		names[i] = rdName(fmt.Sprintf("cyc%d-%d", n, i), fifo)
	}
	limits := []int{1, 2, 1}
	// Queue i's dead-letter queue is queue i+1 (the last's, queue 0): the first are created first, so
	// most edges point up the order of locks, and the last closes the cycle down it.
	build := func() []*fifoq.Queue {
		qs := make([]*fifoq.Queue, n)
		for i, name := range names {
			qs[i] = open(name)
		}
		for i, q := range qs {
			cyPoint(t, q, qs[(i+1)%n], limits[i])
		}
		return qs
	}
	if stored {
		d = newStDisk(t)
	}
	qs := build()

	const prefill, senders, perSender, receivers, rounds = 20, 2, 40, 3, 300
	// Messages in every queue before the receives start, so that they move from the first rounds on, and
	// more sent while they run.
	for i := range prefill {
		group := ""
		if fifo {
			group = fmt.Sprintf("p%d", i%3)
		}
		_, err := qs[i%n].Send(ctx, fifoq.Message{Body: fmt.Sprintf("p-%d", i), GroupID: group, DeduplicationID: dedupID(fifo, 9, i)})
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, senders+receivers*n)
	for s := range senders {
		wg.Go(func() {
			for i := range perSender {
				group := fmt.Sprintf("g%d", i%4)
				if !fifo {
					group = ""
				}
				_, err := qs[i%n].Send(ctx, fifoq.Message{Body: fmt.Sprintf("s%d-%d", s, i), GroupID: group,
					DeduplicationID: dedupID(fifo, s, i)})
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		})
	}
	for _, q := range qs {
		for r := range receivers {
			wg.Go(func() {
				for i := range rounds {
					ds, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 1 + i%10})
					if err != nil {
						errs <- err
						return
					}
					for j, dl := range ds {
						// A FIFO handle expires with a visibility timeout of 0: the delete then fails, and
						// a standard one of a message moved on deletes nothing. Metrics counts what went.
						if (i+j+r)%7 == 0 {
							if err := q.Delete(ctx, dl.ReceiptHandle); err != nil && !errors.Is(err, fifoq.ErrReceiptHandleExpired) {
								errs <- err
								return
							}
						}
					}
					if i%16 == 0 {
						runtime.Gosched()
					}
				}
				errs <- nil
			})
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		buf := make([]byte, 1<<20)
		t.Fatalf("the receives did not end within a minute: deadlock?\n%s", buf[:runtime.Stack(buf, true)])
	}
	for range senders + receivers*n {
		require.NoError(t, <-errs)
	}

	// Each message sent is deleted or in exactly one queue.
	where := func(qs []*fifoq.Queue) map[string][]string {
		held := make(map[string][]string) // MessageID -> the queues holding it
		for _, q := range qs {
			for m := range q.Messages() {
				held[m.MessageID] = append(held[m.MessageID], q.Name())
			}
		}
		return held
	}
	held := where(qs)
	for id, in := range held {
		require.Len(t, in, 1, "message %s is in %v", id, in)
	}
	deleted := 0
	for _, q := range qs {
		deleted += int(q.Metrics().Deleted)
	}
	require.Equal(t, prefill+senders*perSender, len(held)+deleted, "held %d, deleted %d", len(held), deleted)
	if n > 1 {
		moved := uint64(0)
		for _, q := range qs {
			moved += q.Metrics().DeadLettered
		}
		require.NotZero(t, moved, "messages moved round the cycle")
	}

	if stored {
		before := make(map[string][]string)
		for _, q := range qs {
			for m := range q.Messages() {
				before[q.Name()] = append(before[q.Name()], m.MessageID)
			}
		}
		d.restart(true)
		qs = build()
		after := make(map[string][]string)
		for _, q := range qs {
			for m := range q.Messages() {
				after[q.Name()] = append(after[q.Name()], m.MessageID)
			}
		}
		for k := range before {
			slices.Sort(before[k])
			slices.Sort(after[k])
		}
		require.Equal(t, before, after, "every move is durable once the receive returned")
	}
}

// dedupID is the deduplication id of message i of sender s on a FIFO queue (none on a standard queue).
func dedupID(fifo bool, s, i int) string {
	if !fifo {
		return ""
	}
	return fmt.Sprintf("d%d-%d", s, i)
}

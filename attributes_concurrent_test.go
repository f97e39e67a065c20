package fifoq_test

// TestAtConcurrentSetAttributes: SetAttributes racing sends, receives and deletes, under -race.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// atLedger is the concurrency test's record of every message, by MessageID. The goroutines never call
// require: they report the first problem through fail.
type atLedger struct {
	mu       sync.Mutex
	sent     map[string]bool
	held     map[string]bool // received and neither deleted nor given back yet
	received map[string]int  // deliveries of each message
	deleted  map[string]bool
	err      error
}

func (l *atLedger) failLocked(format string, args ...any) {
	if l.err == nil {
		l.err = fmt.Errorf(format, args...)
	}
}

func (l *atLedger) fail(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failLocked(format, args...)
}

// atSettings are the visibility timeouts and retention periods the concurrency test sets together, so a
// reader can tell a torn set from a whole one.
var atSettings = []struct{ visibility, retention time.Duration }{
	{10 * time.Minute, time.Hour}, {time.Hour, 2 * time.Hour}, {30 * time.Minute, 3 * time.Hour},
}

// TestAtConcurrentSetAttributes runs SetAttributes (delay, retention, visibility timeout, wait time, maximum
// size, redrive policy, content-based deduplication) in a loop while other goroutines send, receive, give
// back, delete and read the attributes; under -race. The clock does not move and the retention is at least
// 1h, so nothing expires and every message ends up deleted exactly once or stored in exactly one queue.
func TestAtConcurrentSetAttributes(t *testing.T) {
	t.Parallel()
	for _, k := range atKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) { atConcurrent(t, k.fifo) })
		})
	}
}

func atConcurrent(t *testing.T, fifo bool) {
	const (
		producers, perProducer = 3, 150
		consumers              = 3
		minRounds              = 200       // of the setter and the reader, which go on until the consumers end
		maxStall               = 1_000_000 // rounds in a row with no send or receive done: a livelock
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := fifoq.NewManualClock(atStart)
	c := &atClock{opts: []fifoq.Option{fifoq.WithClock(clk)}, now: clk.Now, advance: clk.Advance}
	dlqA := atNew(t, c, atName("at-conc-a", fifo), fifoq.WithRetention(time.Hour))
	dlqB := atNew(t, c, atName("at-conc-b", fifo), fifoq.WithRetention(time.Hour))
	q := atNew(t, c, atName("at-conc", fifo), fifoq.WithVisibilityTimeout(atSettings[1].visibility),
		fifoq.WithRetention(atSettings[1].retention))
	l := &atLedger{sent: map[string]bool{}, held: map[string]bool{}, received: map[string]int{}, deleted: map[string]bool{}}
	var wg, producing, consuming sync.WaitGroup
	producersDone, consumersDone := make(chan struct{}), make(chan struct{})
	var progress atomic.Int64                // sends and receives done: on a store, each waits for the disk in real time
	rounds := func(yield func(i int) bool) { // minRounds, then until the consumers end
		last, stalled := progress.Load(), 0
		for i := 0; ; i++ {
			if p := progress.Load(); p != last {
				last, stalled = p, 0
			} else if stalled++; stalled >= maxStall {
				l.fail("no send or receive done in %d rounds", maxStall)
				cancel() // ends any long poll
				return
			}
			if i >= minRounds {
				select {
				case <-consumersDone:
					return
				default:
				}
			}
			if !yield(i) {
				return
			}
			runtime.Gosched()
		}
	}

	for p := range producers {
		producing.Go(func() {
			for i := range perProducer {
				body := fmt.Sprintf("p%d-%d", p, i)
				m := fifoq.Message{Body: body}
				if fifo {
					m.GroupID, m.DeduplicationID = fmt.Sprintf("g%d", i%7), body
				}
				r, err := q.Send(ctx, m)
				if err != nil || r.Duplicate {
					l.fail("Send(%q): %+v, %v", body, r, err)
					return
				}
				progress.Add(1)
				l.mu.Lock()
				l.sent[r.MessageID] = true
				l.mu.Unlock()
				runtime.Gosched()
			}
		})
	}
	wg.Go(func() {
		producing.Wait()
		close(producersDone)
	})
	for w := range consumers {
		consuming.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for empty := 0; empty < 3; { // 3 empty receives in a row once the producers are done
				ds, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10, NoWaitTime: true})
				if err != nil {
					l.fail("Receive: %v", err)
					return
				}
				progress.Add(1)
				if len(ds) == 0 {
					select {
					case <-producersDone:
						empty++
					default:
					}
					runtime.Gosched()
					continue
				}
				empty = 0
				for _, d := range ds {
					l.mu.Lock()
					if l.held[d.MessageID] {
						l.failLocked("%s (%q) delivered while in flight", d.MessageID, d.Body)
					}
					l.held[d.MessageID] = true
					l.received[d.MessageID]++
					if n := l.received[d.MessageID]; d.ReceiveCount != n {
						l.failLocked("%q: ReceiveCount %d on delivery %d", d.Body, d.ReceiveCount, n)
					}
					l.mu.Unlock()
					if rng.IntN(3) == 0 { // give it back
						l.mu.Lock()
						delete(l.held, d.MessageID)
						l.mu.Unlock()
						if err := q.ChangeVisibility(ctx, d.ReceiptHandle, 0); err != nil {
							l.fail("ChangeVisibility(%q, 0): %v", d.Body, err)
						}
						continue
					}
					if err := q.Delete(ctx, d.ReceiptHandle); err != nil {
						l.fail("Delete(%q): %v", d.Body, err)
					}
					l.mu.Lock()
					delete(l.held, d.MessageID)
					l.deleted[d.MessageID] = true
					l.mu.Unlock()
				}
			}
		})
	}
	wg.Go(func() {
		consuming.Wait()
		close(consumersDone)
	})
	wg.Go(func() {
		for i := range rounds {
			a := q.Attributes()
			s := atSettings[i%len(atSettings)]
			a.VisibilityTimeout, a.Retention = s.visibility, s.retention
			a.Delay = []time.Duration{0, time.Second, 0, 5 * time.Minute}[i%4]
			a.ReceiveWaitTime = []time.Duration{0, 20 * time.Second}[i%2]
			a.MaxMessageSize = []int{1 << 20, 1024}[i%2]
			switch i % 5 {
			case 0:
				a.DeadLetterQueue, a.MaxReceiveCount = nil, 0
			case 1, 2:
				a.DeadLetterQueue, a.MaxReceiveCount = dlqA, 1
			default:
				a.DeadLetterQueue, a.MaxReceiveCount = dlqB, 2
			}
			if fifo {
				a.ContentBasedDeduplication = i%2 == 0
			}
			if err := q.SetAttributes(a); err != nil {
				l.fail("SetAttributes round %d: %v", i, err)
				return
			}
			d := dlqA.Attributes()
			d.Retention = []time.Duration{time.Hour, 4 * atDay}[i%2]
			if err := dlqA.SetAttributes(d); err != nil {
				l.fail("SetAttributes of the DLQ, round %d: %v", i, err)
				return
			}
		}
	})
	wg.Go(func() {
		for range rounds {
			a := q.Attributes()
			whole := false
			for _, s := range atSettings {
				whole = whole || a.VisibilityTimeout == s.visibility && a.Retention == s.retention
			}
			redrive := a.DeadLetterQueue == nil && a.MaxReceiveCount == 0 ||
				a.DeadLetterQueue == dlqA && a.MaxReceiveCount == 1 || a.DeadLetterQueue == dlqB && a.MaxReceiveCount == 2
			if !whole || !redrive {
				l.fail("torn attributes: visibility %v, retention %v, DLQ %s with maxReceiveCount %d",
					a.VisibilityTimeout, a.Retention, atQueueName(a.DeadLetterQueue), a.MaxReceiveCount)
				return
			}
			if s := q.Stats(); s.Visible < 0 || s.InFlight < 0 || s.Delayed < 0 {
				l.fail("negative counts %+v", s)
				return
			}
			if n := clk.Timers(); n > 0 { // a receive with NoWaitTime took the queue's wait time
				l.fail("%d receives wait on the clock", n)
				cancel()
				return
			}
		}
	})
	wg.Wait()

	require.NoError(t, l.err)
	require.Empty(t, l.held, "every delivery was deleted or given back")
	require.Len(t, l.sent, producers*perProducer, "distinct MessageIDs sent")
	stored := map[string]string{} // MessageID -> queue
	total := 0
	for _, x := range []*fifoq.Queue{q, dlqA, dlqB} {
		s := x.Stats()
		total += s.Visible + s.InFlight + s.Delayed
		require.Zero(t, s.InFlight, "%s: nothing is held", x.Name())
		for snap := range x.Messages() {
			if prev, ok := stored[snap.MessageID]; ok {
				require.Failf(t, "message stored twice", "%q in %s and %s", snap.Body, prev, x.Name())
			}
			stored[snap.MessageID] = x.Name()
			require.True(t, l.sent[snap.MessageID], "%q in %s was never sent", snap.Body, x.Name())
			require.False(t, l.deleted[snap.MessageID], "%q in %s was deleted", snap.Body, x.Name())
		}
	}
	require.Equal(t, len(stored), total, "Stats and Messages agree")
	for id := range l.sent {
		require.True(t, l.deleted[id] || stored[id] != "", "message %s was lost", id)
	}
	require.Equal(t, len(l.sent), len(l.deleted)+len(stored), "sent = deleted + stored")
	moved := 0
	for _, where := range stored {
		if where != q.Name() {
			moved++
		}
	}
	t.Logf("%d sent, %d deleted, %d stored in the source, %d in the DLQs", len(l.sent), len(l.deleted),
		len(stored)-moved, moved)
}

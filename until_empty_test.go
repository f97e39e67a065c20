package fifoq_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/stretchr/testify/require"
)

// ueRecorder is a handler that records the bodies it handles, with the bubble time since start.
type ueRecorder struct {
	start time.Time
	mu    sync.Mutex
	calls []string // "body@elapsed#receiveCount"
	fail  func(fifoq.Delivery) bool
	block chan struct{} // if set, every call waits for it to be closed
}

func (r *ueRecorder) handle(ctx context.Context, batch []fifoq.Delivery) error {
	if r.block != nil {
		<-r.block
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var err error
	for _, d := range batch {
		r.calls = append(r.calls, d.Body+"@"+time.Since(r.start).String()+"#"+strconv.Itoa(d.ReceiveCount))
		if r.fail != nil && r.fail(d) {
			err = errors.New("fail " + d.Body)
		}
	}
	return err
}

func (r *ueRecorder) handled() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

// ueRun starts RunUntilEmpty in a goroutine and returns a channel that gets its result.
func ueRun(t *testing.T, ctx context.Context, src fifoq.Source, h fifoq.Handler, o fifoq.ConsumerOptions) <-chan error {
	t.Helper()
	c, err := fifoq.NewConsumer(src, h, o)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- c.RunUntilEmpty(ctx) }()
	return done
}

// ueReturned reports whether done has a result, after the bubble settled.
func ueReturned(done <-chan error) (error, bool) {
	synctest.Wait()
	select {
	case err := <-done:
		return err, true
	default:
		return nil, false
	}
}

// RunUntilEmpty handles what is there and returns at once, with no wait, when the queue is empty; on an
// empty queue it returns at once too.
func TestRunUntilEmptyReturnsWhenEmpty(t *testing.T) {
	for _, name := range []string{"ue.fifo", "ue-std"} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := bcNewQueue(t, name)
				group := ""
				if name == "ue.fifo" {
					group = "g"
				}
				r := &ueRecorder{start: time.Now()}
				done := ueRun(t, t.Context(), q, r.handle, fifoq.ConsumerOptions{})
				err, ok := ueReturned(done)
				require.True(t, ok, "RunUntilEmpty on an empty queue returns")
				require.NoError(t, err)
				require.Empty(t, r.handled())

				bcSend(t, q, group, bcNumbered("m", 25)...)
				done = ueRun(t, t.Context(), q, r.handle, fifoq.ConsumerOptions{MaxConcurrency: 3})
				err, ok = ueReturned(done)
				require.True(t, ok, "RunUntilEmpty returns once the messages are handled")
				require.NoError(t, err)
				require.Len(t, r.handled(), 25)
				require.Equal(t, fifoq.Stats{}, q.Stats())
				require.Zero(t, time.Since(r.start), "no wait: the last delete emptied the queue")
			})
		})
	}
}

// RunUntilEmpty does not return while one of its batches is in flight, even though nothing is visible,
// for a *Queue and for another Source.
func TestRunUntilEmptyWaitsForBatchInFlight(t *testing.T) {
	for _, wrapped := range []bool{false, true} {
		t.Run(map[bool]string{false: "Queue", true: "Source"}[wrapped], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := bcNewQueue(t, "ue-inflight.fifo", fifoq.WithVisibilityTimeout(time.Minute))
				var src fifoq.Source = q
				if wrapped {
					src = &bcSource{q: q}
				}
				bcSend(t, q, "g1", "a")
				r := &ueRecorder{start: time.Now(), block: make(chan struct{})}
				done := ueRun(t, t.Context(), src, r.handle, fifoq.ConsumerOptions{})
				time.Sleep(45 * time.Second) // past the 1-second empty check of a Source, within the visibility timeout
				_, ok := ueReturned(done)
				require.False(t, ok, "RunUntilEmpty returned while its batch was in flight")
				require.Equal(t, fifoq.Stats{InFlight: 1}, q.Stats())
				bcSend(t, q, "g2", "b") // sent meanwhile: handled before the return
				close(r.block)
				if wrapped {
					time.Sleep(time.Second) // the empty check of a Source: a one-second receive
				}
				err, ok := ueReturned(done)
				require.True(t, ok, "RunUntilEmpty returns once its batch ended and the queue is empty")
				require.NoError(t, err)
				require.Equal(t, []string{"a@45s#1", "b@45s#1"}, r.handled())
				require.Equal(t, fifoq.Stats{}, q.Stats())
			})
		})
	}
}

// A message that a failed batch returned to the queue is handled again, after its visibility timeout,
// before RunUntilEmpty returns; on a Source other than a *Queue, only with RetryImmediately.
func TestRunUntilEmptyRetriesFailures(t *testing.T) {
	fail := func(d fifoq.Delivery) bool { return d.Body == "b" && d.ReceiveCount == 1 }
	t.Run("Queue", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := bcNewQueue(t, "ue-retry-std", fifoq.WithVisibilityTimeout(30*time.Second))
			bcSend(t, q, "", "a", "b")
			r := &ueRecorder{start: time.Now(), fail: fail}
			done := ueRun(t, t.Context(), q, fifoq.PerMessage(func(ctx context.Context, d fifoq.Delivery) error {
				return r.handle(ctx, []fifoq.Delivery{d})
			}), fifoq.ConsumerOptions{})
			_, ok := ueReturned(done)
			require.False(t, ok, "returned with b in flight, to come back")
			time.Sleep(30 * time.Second)
			err, ok := ueReturned(done)
			require.True(t, ok)
			require.NoError(t, err)
			require.Equal(t, []string{"a@0s#1", "b@0s#1", "b@30s#2"}, r.handled())
			require.Equal(t, fifoq.Stats{}, q.Stats())
		})
	})
	t.Run("Source with RetryImmediately", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := bcNewQueue(t, "ue-retry-src.fifo", fifoq.WithVisibilityTimeout(30*time.Second))
			bcSend(t, q, "g", "a", "b", "c")
			r := &ueRecorder{start: time.Now(), fail: fail}
			done := ueRun(t, t.Context(), &bcSource{q: q}, fifoq.PerMessage(func(ctx context.Context, d fifoq.Delivery) error {
				return r.handle(ctx, []fifoq.Delivery{d})
			}), fifoq.ConsumerOptions{RetryImmediately: true})
			time.Sleep(time.Second)
			err, ok := ueReturned(done)
			require.True(t, ok)
			require.NoError(t, err)
			require.Equal(t, []string{"a@0s#1", "b@0s#1", "b@0s#2", "c@0s#2"}, r.handled())
			require.Equal(t, fifoq.Stats{}, q.Stats())
		})
	})
	t.Run("Source without RetryImmediately returns with the failed message in flight", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := bcNewQueue(t, "ue-retry-src2", fifoq.WithVisibilityTimeout(30*time.Second))
			bcSend(t, q, "", "a", "b")
			r := &ueRecorder{start: time.Now(), fail: fail}
			done := ueRun(t, t.Context(), &bcSource{q: q}, fifoq.PerMessage(func(ctx context.Context, d fifoq.Delivery) error {
				return r.handle(ctx, []fifoq.Delivery{d})
			}), fifoq.ConsumerOptions{})
			time.Sleep(time.Second)
			err, ok := ueReturned(done)
			require.True(t, ok, "a one-second receive found nothing")
			require.NoError(t, err)
			require.Equal(t, []string{"a@0s#1", "b@0s#1"}, r.handled())
			require.Equal(t, fifoq.Stats{InFlight: 1}, q.Stats())
		})
	})
}

// A delayed message is waited for; a message that keeps failing goes to the dead-letter queue, after which
// the queue is empty.
func TestRunUntilEmptyDelayedAndDeadLettered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dlq := bcNewQueue(t, "ue-dlq")
		q := bcNewQueue(t, "ue-src", fifoq.WithVisibilityTimeout(10*time.Second), fifoq.WithDeadLetterQueue(dlq, 2))
		_, err := q.Send(t.Context(), fifoq.Message{Body: "later", Delay: time.Minute})
		require.NoError(t, err)
		bcSend(t, q, "", "poison")
		r := &ueRecorder{start: time.Now(), fail: func(d fifoq.Delivery) bool { return d.Body == "poison" }}
		done := ueRun(t, t.Context(), q, fifoq.PerMessage(func(ctx context.Context, d fifoq.Delivery) error {
			return r.handle(ctx, []fifoq.Delivery{d})
		}), fifoq.ConsumerOptions{})
		time.Sleep(time.Minute + 20*time.Second)
		err, ok := ueReturned(done)
		require.True(t, ok)
		require.NoError(t, err)
		require.Equal(t, []string{"poison@0s#1", "poison@10s#2", "later@1m0s#1"}, r.handled())
		require.Equal(t, fifoq.Stats{}, q.Stats())
		require.Equal(t, fifoq.Stats{Visible: 1}, dlq.Stats())
	})
}

// When ctx ends first, RunUntilEmpty waits for its batches in flight and returns ctx's error.
func TestRunUntilEmptyContextDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := bcNewQueue(t, "ue-ctx", fifoq.WithVisibilityTimeout(10*time.Second))
		bcSend(t, q, "", "forever")
		r := &ueRecorder{start: time.Now(), fail: func(fifoq.Delivery) bool { return true }}
		ctx, cancel := context.WithTimeout(t.Context(), 25*time.Second)
		defer cancel()
		done := ueRun(t, ctx, q, r.handle, fifoq.ConsumerOptions{})
		time.Sleep(25 * time.Second)
		err, ok := ueReturned(done)
		require.True(t, ok)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Equal(t, []string{"forever@0s#1", "forever@10s#2", "forever@20s#3"}, r.handled())

		// Cancelled while a batch is in flight: it waits for the batch.
		r2 := &ueRecorder{start: time.Now(), block: make(chan struct{})}
		ctx2, cancel2 := context.WithCancel(t.Context())
		time.Sleep(10 * time.Second)
		done = ueRun(t, ctx2, q, r2.handle, fifoq.ConsumerOptions{})
		synctest.Wait()
		cancel2()
		_, ok = ueReturned(done)
		require.False(t, ok, "returned before its batch ended")
		close(r2.block)
		err, ok = ueReturned(done)
		require.True(t, ok)
		require.ErrorIs(t, err, context.Canceled)
		require.Len(t, r2.handled(), 1)
	})
}

// RunUntilEmpty over a queue returns within a second of the queue becoming empty, however its last message
// left: moved to the dead-letter queue by the receive that would have returned it, or expired while another
// consumer held it.
func TestRunUntilEmptyReturnsWithinASecond(t *testing.T) {
	t.Run("dead-lettered", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			dlq := bcNewQueue(t, "ue1-dlq")
			q := bcNewQueue(t, "ue1", fifoq.WithVisibilityTimeout(10*time.Second), fifoq.WithDeadLetterQueue(dlq, 1))
			bcSend(t, q, "", "poison")
			start := time.Now()
			done := ueRun(t, t.Context(), q, func(context.Context, []fifoq.Delivery) error { return errors.New("fail") },
				fifoq.ConsumerOptions{})
			err := <-done
			require.NoError(t, err)
			// The message came back at 10 s, and the receive then under way moved it to the dead-letter queue.
			require.LessOrEqual(t, time.Since(start), 11*time.Second, "returned %v after the start", time.Since(start))
			require.Equal(t, fifoq.Stats{Visible: 1}, dlq.Stats())
		})
	})
	t.Run("expired", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := bcNewQueue(t, "ue2", fifoq.WithRetention(time.Minute), fifoq.WithVisibilityTimeout(time.Hour))
			bcSend(t, q, "", "held")
			ds, err := q.Receive(t.Context(), fifoq.ReceiveOptions{}) // another consumer holds it, and never deletes it
			require.NoError(t, err)
			require.Len(t, ds, 1)
			start := time.Now()
			done := ueRun(t, t.Context(), q, func(context.Context, []fifoq.Delivery) error { return nil }, fifoq.ConsumerOptions{})
			require.NoError(t, <-done)
			require.LessOrEqual(t, time.Since(start), time.Minute+time.Second, "returned %v after the start", time.Since(start))
			require.GreaterOrEqual(t, time.Since(start), time.Minute, "not before the message expired")
		})
	})
}

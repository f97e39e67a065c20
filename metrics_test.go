package fifoq_test

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// mtEnv is a source queue with a dead-letter queue (maxReceiveCount 1, so a second receive moves a message)
// on a manual clock, for the counter table.
type mtEnv struct {
	t        *testing.T
	clk      *fifoq.ManualClock
	src, dlq *fifoq.Queue
}

func mtSetup(t *testing.T, fifo bool) *mtEnv {
	t.Helper()
	name, dlqName := "mt-src", "mt-dlq"
	if fifo {
		name, dlqName = name+".fifo", dlqName+".fifo"
	}
	clk := fifoq.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	dlq, err := fifoq.New(dlqName, fifoq.WithClock(clk))
	require.NoError(t, err)
	src, err := fifoq.New(name, fifoq.WithClock(clk), fifoq.WithVisibilityTimeout(time.Minute),
		fifoq.WithRetention(time.Hour), fifoq.WithDeadLetterQueue(dlq, 1))
	require.NoError(t, err)
	return &mtEnv{t: t, clk: clk, src: src, dlq: dlq}
}

func (e *mtEnv) msg(body string) fifoq.Message {
	m := fifoq.Message{Body: body}
	if e.src.FIFO() {
		m.GroupID, m.DeduplicationID = "g", body
	}
	return m
}

func (e *mtEnv) send(q *fifoq.Queue, bodies ...string) {
	e.t.Helper()
	for _, b := range bodies {
		_, err := q.Send(context.Background(), e.msg(b))
		require.NoError(e.t, err, "Send(%s)", b)
	}
}

func (e *mtEnv) receive(q *fifoq.Queue, o fifoq.ReceiveOptions) []fifoq.Delivery {
	e.t.Helper()
	o.MaxMessages = 10
	ds, err := q.Receive(context.Background(), o)
	require.NoError(e.t, err)
	return ds
}

// mtHandles returns the receipt handles of ds.
func mtHandles(ds []fifoq.Delivery) []string {
	hs := make([]string, len(ds))
	for i, d := range ds {
		hs[i] = d.ReceiptHandle
	}
	return hs
}

// Issue 11, item 1: each operation moves exactly the counters it should, on the queue it acts on and, for
// moves, on the other queue; and the counters always account for the messages stored.
func TestQueueMetricsCounters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name     string
		fifoOnly bool
		setup    func(e *mtEnv) // before the counters are read
		op       func(e *mtEnv)
		src, dlq fifoq.Counters // what op adds
	}{
		{
			name: "send",
			op:   func(e *mtEnv) { e.send(e.src, "a") },
			src:  fifoq.Counters{Sent: 1},
		},
		{
			name:     "duplicate send counts Duplicates, not Sent",
			fifoOnly: true,
			setup:    func(e *mtEnv) { e.send(e.src, "a") },
			op:       func(e *mtEnv) { e.send(e.src, "a") },
			src:      fifoq.Counters{Duplicates: 1},
		},
		{
			name: "send batch with a duplicate and an invalid entry",
			op: func(e *mtEnv) {
				ms := []fifoq.Message{e.msg("a"), e.msg("b"), e.msg("c"), e.msg("bad")}
				ms[3].Body = "\uFFFF" // a character SQS refuses: the entry fails alone
				if e.src.FIFO() {
					ms[2].DeduplicationID = "a"
				}
				_, err := e.src.SendBatch(ctx, ms)
				var be *fifoq.BatchError
				require.ErrorAs(e.t, err, &be)
				require.Len(e.t, be.Entries, 1)
			},
			src: fifoq.Counters{Sent: 3}, // FIFO: Sent 2, Duplicates 1 (set below)
		},
		{
			name: "rejected send counts nothing",
			op: func(e *mtEnv) {
				_, err := e.src.Send(ctx, fifoq.Message{})
				require.Error(e.t, err)
			},
		},
		{
			name:  "receive",
			setup: func(e *mtEnv) { e.send(e.src, "a", "b") },
			op:    func(e *mtEnv) { require.Len(e.t, e.receive(e.src, fifoq.ReceiveOptions{}), 2) },
			src:   fifoq.Counters{Received: 2},
		},
		{
			name:  "empty receive",
			setup: func(e *mtEnv) { e.send(e.src, "a") },
			op: func(e *mtEnv) {
				e.receive(e.src, fifoq.ReceiveOptions{})
				require.Empty(e.t, e.receive(e.src, fifoq.ReceiveOptions{}))
			},
			src: fifoq.Counters{Received: 1},
		},
		{
			name:     "a retried receive attempt counts again",
			fifoOnly: true,
			setup:    func(e *mtEnv) { e.send(e.src, "a", "b") },
			op: func(e *mtEnv) {
				require.Len(e.t, e.receive(e.src, fifoq.ReceiveOptions{AttemptID: "x"}), 2)
				require.Len(e.t, e.receive(e.src, fifoq.ReceiveOptions{AttemptID: "x"}), 2)
			},
			src: fifoq.Counters{Received: 4},
		},
		{
			name:  "delete, and a second delete of the same message",
			setup: func(e *mtEnv) { e.send(e.src, "a") },
			op: func(e *mtEnv) {
				ds := e.receive(e.src, fifoq.ReceiveOptions{})
				require.NoError(e.t, e.src.Delete(ctx, ds[0].ReceiptHandle))
				require.NoError(e.t, e.src.Delete(ctx, ds[0].ReceiptHandle), "already gone: succeeds")
			},
			src: fifoq.Counters{Received: 1, Deleted: 1},
		},
		{
			name:  "delete batch",
			setup: func(e *mtEnv) { e.send(e.src, "a", "b", "c") },
			op: func(e *mtEnv) {
				ds := e.receive(e.src, fifoq.ReceiveOptions{})
				require.NoError(e.t, e.src.DeleteBatch(ctx, mtHandles(ds)))
			},
			src: fifoq.Counters{Received: 3, Deleted: 3},
		},
		{
			name:  "visibility changes count nothing",
			setup: func(e *mtEnv) { e.send(e.src, "a") },
			op: func(e *mtEnv) {
				ds := e.receive(e.src, fifoq.ReceiveOptions{})
				require.NoError(e.t, e.src.ChangeVisibility(ctx, ds[0].ReceiptHandle, time.Hour))
				require.NoError(e.t, e.src.ChangeVisibilityBatch(ctx, []fifoq.VisibilityChange{{ReceiptHandle: ds[0].ReceiptHandle}}))
			},
			src: fifoq.Counters{Received: 1},
		},
		{
			name: "purge counts every stored message",
			setup: func(e *mtEnv) {
				e.send(e.src, "a", "b", "c")
				e.receive(e.src, fifoq.ReceiveOptions{})
				e.send(e.src, "d")
			},
			op:  func(e *mtEnv) { require.NoError(e.t, e.src.Purge(ctx)) },
			src: fifoq.Counters{Purged: 4},
		},
		{
			name: "expiry by retention, in flight or not",
			setup: func(e *mtEnv) {
				e.send(e.src, "a", "b")
				e.receive(e.src, fifoq.ReceiveOptions{VisibilityTimeout: 12 * time.Hour})
				e.send(e.src, "c")
			},
			op:  func(e *mtEnv) { e.clk.Advance(time.Hour) },
			src: fifoq.Counters{Expired: 3},
		},
		{
			name: "a dead-letter move counts on both queues",
			setup: func(e *mtEnv) {
				e.send(e.src, "a", "b")
				e.receive(e.src, fifoq.ReceiveOptions{NoVisibilityTimeout: true})
			},
			op:  func(e *mtEnv) { require.Empty(e.t, e.receive(e.src, fifoq.ReceiveOptions{})) },
			src: fifoq.Counters{DeadLettered: 2},
			dlq: fifoq.Counters{DeadLetterArrivals: 2},
		},
		{
			name: "a move task counts on both queues",
			setup: func(e *mtEnv) {
				e.send(e.src, "a", "b")
				e.receive(e.src, fifoq.ReceiveOptions{NoVisibilityTimeout: true})
				e.receive(e.src, fifoq.ReceiveOptions{})
			},
			op: func(e *mtEnv) {
				task, err := e.dlq.StartMoveTask(ctx, nil, 0)
				require.NoError(e.t, err)
				require.NoError(e.t, task.Wait(ctx))
				require.Equal(e.t, 2, task.Status().Moved)
			},
			src: fifoq.Counters{RedriveArrivals: 2},
			dlq: fifoq.Counters{Redriven: 2},
		},
		{
			name: "messages sent to a dead-letter queue directly count as sent there",
			op:   func(e *mtEnv) { e.send(e.dlq, "a") },
			dlq:  fifoq.Counters{Sent: 1},
		},
	}
	for _, fifo := range []bool{false, true} {
		for _, tt := range tests {
			if tt.fifoOnly && !fifo {
				continue
			}
			t.Run(fmt.Sprintf("fifo=%v/%s", fifo, tt.name), func(t *testing.T) {
				t.Parallel()
				e := mtSetup(t, fifo)
				if tt.setup != nil {
					tt.setup(e)
				}
				src0, dlq0 := e.src.Metrics().Counters, e.dlq.Metrics().Counters
				tt.op(e)
				wantSrc := tt.src
				if tt.name == "send batch with a duplicate and an invalid entry" && fifo {
					wantSrc = fifoq.Counters{Sent: 2, Duplicates: 1}
				}
				src, dlq := e.src.Metrics(), e.dlq.Metrics()
				require.Equal(t, wantSrc, mtDelta(src.Counters, src0), "source counters")
				require.Equal(t, tt.dlq, mtDelta(dlq.Counters, dlq0), "dead-letter queue counters")
				for _, m := range []fifoq.Metrics{src, dlq} {
					require.Equal(t, m.Visible+m.InFlight+m.Delayed, mtStored(m.Counters), "conservation in %+v", m)
				}
			})
		}
	}
}

// mtDelta returns b's counters minus a's.
func mtDelta(b, a fifoq.Counters) fifoq.Counters {
	return fifoq.Counters{
		Sent:               b.Sent - a.Sent,
		Duplicates:         b.Duplicates - a.Duplicates,
		Received:           b.Received - a.Received,
		Deleted:            b.Deleted - a.Deleted,
		Expired:            b.Expired - a.Expired,
		Purged:             b.Purged - a.Purged,
		DeadLettered:       b.DeadLettered - a.DeadLettered,
		DeadLetterArrivals: b.DeadLetterArrivals - a.DeadLetterArrivals,
		Redriven:           b.Redriven - a.Redriven,
		RedriveArrivals:    b.RedriveArrivals - a.RedriveArrivals,
		Recovered:          b.Recovered - a.Recovered,
	}
}

// mtStored is the number of stored messages the counters account for.
func mtStored(c fifoq.Counters) int {
	in := c.Recovered + c.Sent + c.DeadLetterArrivals + c.RedriveArrivals
	out := c.Deleted + c.Expired + c.Purged + c.DeadLettered + c.Redriven
	return int(int64(in) - int64(out))
}

// Issue 11, item 1 (ApproximateAgeOfOldestMessage): OldestAge is the age of the oldest stored message,
// visible, in flight or delayed; 0 when the queue is empty; in a dead-letter queue counted from the move,
// whether the queue keeps the original SentAt (standard) or not (FIFO).
func TestQueueMetricsOldestAge(t *testing.T) {
	t.Parallel()
	for _, fifo := range []bool{false, true} {
		t.Run(fmt.Sprint("fifo=", fifo), func(t *testing.T) {
			t.Parallel()
			e := mtSetup(t, fifo)
			age := func(q *fifoq.Queue) time.Duration { return q.Metrics().OldestAge }
			require.Zero(t, age(e.src), "empty")

			e.send(e.src, "a")
			e.clk.Advance(10 * time.Second)
			e.send(e.src, "b")
			e.clk.Advance(5 * time.Second)
			require.Equal(t, 15*time.Second, age(e.src))

			ds := e.receive(e.src, fifoq.ReceiveOptions{NoVisibilityTimeout: true})
			require.Len(t, ds, 2)
			require.Equal(t, 15*time.Second, age(e.src), "received, visible again")
			ds = e.receive(e.src, fifoq.ReceiveOptions{MaxMessages: 1})
			require.Empty(t, ds, "both moved to the dead-letter queue")
			require.Zero(t, age(e.src))
			require.Zero(t, age(e.dlq), "in the dead-letter queue the age starts at the move")
			e.clk.Advance(time.Minute)
			require.Equal(t, time.Minute, age(e.dlq))
			for m := range e.dlq.Messages() {
				require.Equal(t, fifo, m.SentAt.Equal(e.clk.Now().Add(-time.Minute)), "a FIFO dead-letter queue resets SentAt, a standard one keeps it")
			}

			e.send(e.src, "c")
			e.clk.Advance(time.Second)
			ds = e.receive(e.src, fifoq.ReceiveOptions{})
			require.Len(t, ds, 1)
			require.Equal(t, time.Second, age(e.src), "in flight")
			require.NoError(t, e.src.Delete(context.Background(), ds[0].ReceiptHandle))
			require.Zero(t, age(e.src), "deleted")
		})
	}
	t.Run("delayed", func(t *testing.T) {
		t.Parallel()
		clk := fifoq.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
		q, err := fifoq.New("mt-delayed", fifoq.WithClock(clk), fifoq.WithDelay(time.Minute))
		require.NoError(t, err)
		_, err = q.Send(context.Background(), fifoq.Message{Body: "a"})
		require.NoError(t, err)
		clk.Advance(20 * time.Second)
		m := q.Metrics()
		require.Equal(t, fifoq.Stats{Delayed: 1}, m.Stats)
		require.Equal(t, 20*time.Second, m.OldestAge, "a delayed message ages from its send")
	})
}

// Issue 11, item 1: the counters count since the queue was opened. A queue opened from its store counts the
// messages it found there as Recovered, and starts its other counters at 0; a message moved into a standard
// dead-letter queue then ages from its original send, since the store keeps no time of the move.
func TestQueueMetricsRecovered(t *testing.T) {
	ctx := context.Background()
	d := newStDisk(t)
	dlq := d.queue("dlq")
	q := d.queue("src", fifoq.WithVisibilityTimeout(0), fifoq.WithDeadLetterQueue(dlq, 1))
	stSend(t, q, "", "poison", "a", "b")
	d.clock.Advance(time.Minute)
	for range 2 {
		_, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10})
		require.NoError(t, err)
	}
	require.Equal(t, fifoq.Stats{Visible: 3}, dlq.Stats())
	d.clock.Advance(time.Minute)
	require.Equal(t, time.Minute, dlq.Metrics().OldestAge)

	d.restart(false)
	dlq = d.queue("dlq")
	q = d.queue("src", fifoq.WithVisibilityTimeout(0), fifoq.WithDeadLetterQueue(dlq, 1))
	require.Equal(t, fifoq.Metrics{Stats: fifoq.Stats{Visible: 3}, OldestAge: 2 * time.Minute,
		Counters: fifoq.Counters{Recovered: 3}}, dlq.Metrics())
	require.Equal(t, fifoq.Metrics{}, q.Metrics())
}

// Issue 11, item 1: Metrics takes the queue's lock once and allocates nothing; the counting itself adds no
// allocation to the hot path (BenchmarkCycle shows it adds no time either).
func TestQueueMetricsAllocs(t *testing.T) {
	if mtRace() {
		t.Skip("the race detector allocates on its own")
	}
	q, err := fifoq.New("mt-allocs")
	require.NoError(t, err)
	_, err = q.Send(context.Background(), fifoq.Message{Body: "a"})
	require.NoError(t, err)
	require.Zero(t, testing.AllocsPerRun(100, func() { q.Metrics() }))
}

// mtRace reports whether the test binary was built with the race detector.
func mtRace() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// Issue 11, item 1: a Consumer's metrics, one batch of each outcome, inside a bubble so the handler
// durations are exact: batches by outcome, messages, failed and filtered ones, the histogram's buckets, and
// the batches in flight while a handler blocks.
func TestConsumerMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Failed messages come back after 12 hours, when the test is over.
		q := bcNewQueue(t, "mt-consumer.fifo", fifoq.WithVisibilityTimeout(12*time.Hour))
		// One batch per group, in this order; the handler acts by the group's name.
		for _, g := range []string{"success", "partial", "error", "panic", "timeout", "filtered", "block"} {
			bcSend(t, q, g, g+"-1", g+"-2")
		}
		release := make(chan struct{})
		h := func(ctx context.Context, batch []fifoq.Delivery) error {
			switch batch[0].GroupID {
			case "success":
				time.Sleep(3 * time.Millisecond)
			case "partial":
				time.Sleep(2 * time.Second)
				return &fifoq.BatchItemFailures{MessageIDs: []string{batch[1].MessageID}}
			case "error":
				time.Sleep(20 * time.Second)
				return errors.New("mt error")
			case "panic":
				panic("mt panic")
			case "timeout":
				<-ctx.Done()
			case "block":
				<-release
				time.Sleep(time.Hour) // past the timeout, ignoring ctx; past the last bound: the overflow bucket
			}
			return nil
		}
		var c *fifoq.Consumer
		inFlight := make(chan int, 10) // as OnBatch sees it
		o := fifoq.ConsumerOptions{
			Batch:                   fifoq.BatchOptions{Size: 2},
			MaxConcurrency:          1,
			ReportBatchItemFailures: true,
			HandlerTimeout:          time.Minute,
			Filter:                  func(d fifoq.Delivery) bool { return d.GroupID != "filtered" },
			OnBatch:                 func(fifoq.BatchReport) { inFlight <- c.Metrics().InFlight },
		}
		c, err := fifoq.NewConsumer(q, h, o)
		require.NoError(t, err)
		require.Equal(t, fifoq.ConsumerMetrics{
			Queue: "mt-consumer.fifo", // the source's name
			Batches: map[fifoq.Outcome]uint64{
				fifoq.OutcomeSuccess: 0, fifoq.OutcomePartial: 0, fifoq.OutcomeError: 0, fifoq.OutcomePanic: 0,
				fifoq.OutcomeTimeout: 0, fifoq.OutcomeFiltered: 0,
			},
			HandlerDuration: fifoq.Histogram{
				Bounds: []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 25 * time.Millisecond,
					50 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
					time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second, 30 * time.Second,
					time.Minute, 5 * time.Minute, 15 * time.Minute},
				Counts: make([]uint64, 16),
			},
		}, c.Metrics(), "a new consumer")

		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- c.Run(ctx) }()
		// Six batches end; the seventh blocks in its handler.
		for range 6 {
			require.Equal(t, 0, <-inFlight, "OnBatch sees its batch no longer in flight")
		}
		synctest.Wait()
		m := c.Metrics()
		require.Equal(t, 1, m.InFlight, "the blocked batch")
		require.Equal(t, uint64(2+2+2+2+2+2), m.Messages, "six batches ended")
		close(release)
		time.Sleep(time.Hour)
		synctest.Wait()
		cancel()
		require.NoError(t, <-done)

		m = c.Metrics()
		require.Equal(t, map[fifoq.Outcome]uint64{
			fifoq.OutcomeSuccess: 1, fifoq.OutcomePartial: 1, fifoq.OutcomeError: 1, fifoq.OutcomePanic: 1,
			fifoq.OutcomeTimeout: 2, fifoq.OutcomeFiltered: 1,
		}, m.Batches, "the blocked batch timed out")
		require.Equal(t, uint64(14), m.Messages)
		require.Equal(t, uint64(1+2+2+2+2), m.Failed, "partial 1, error, panic and both timeouts 2 each")
		require.Equal(t, uint64(2), m.Filtered)
		require.Zero(t, m.InFlight)
		h6 := m.HandlerDuration
		require.Equal(t, uint64(6), h6.Count, "the filtered batch ran no handler")
		require.Equal(t, 3*time.Millisecond+2*time.Second+20*time.Second+time.Minute+time.Hour, h6.Sum)
		want := make([]uint64, 16)
		want[0] = 2  // success 3ms, panic 0s: <= 5ms
		want[8] = 1  // partial 2s: <= 2.5s
		want[11] = 1 // error 20s: <= 30s
		want[12] = 1 // timeout 1m: <= 1m
		want[15] = 1 // block 1h: above 15m
		require.Equal(t, want, h6.Counts)
	})
}

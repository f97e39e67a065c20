package fifoqtest_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/fifoqtest"
	"github.com/stretchr/testify/require"
)

// errFlaky is what the handlers of these tests fail with.
var errFlaky = errors.New("flaky")

// A failed batch comes back after the visibility timeout, with its receive count one higher, in group
// order; with batch item failures only the failed message and those after it in its group come back.
func TestDrainRetriesAfterVisibilityTimeout(t *testing.T) {
	bothClocks(t, func(t *testing.T, clock []fifoq.Option) {
		q := fifoqtest.NewQueue(t, "orders.fifo", with(clock, fifoq.WithVisibilityTimeout(30*time.Second))...)
		fifoqtest.SendGroup(t, q, "g1", "a", "b", "c")
		fifoqtest.SendGroup(t, q, "g2", "x")
		start := q.Clock().Now()
		h := func(_ context.Context, batch []fifoq.Delivery) error {
			for _, d := range batch {
				if d.Body == "b" && d.ReceiveCount == 1 {
					return &fifoq.BatchItemFailures{MessageIDs: []string{d.MessageID}}
				}
			}
			return nil
		}
		r := fifoqtest.Drain(t, q, h, fifoqtest.DrainOptions{
			Consumer: fifoq.ConsumerOptions{ReportBatchItemFailures: true},
		})
		require.Equal(t, []string{
			`0s: partial ["a" "b" "c" "x"]`,
			`30s: success ["b" "c"]`,
		}, timeline(r, start))
		require.Len(t, r.Batches[0].Report.Failed, 2, "b and c, after it in its group, failed")
		require.Equal(t, 2, r.Batches[1].Deliveries[0].ReceiveCount)
		require.True(t, r.Drained)
		require.Equal(t, 30*time.Second, r.Elapsed)
		require.Equal(t, []string{"a", "b", "c", "x", "b", "c"}, r.Bodies())
		fifoqtest.RequireDeliveredInOrder(t, r, map[string][]string{"g1": {"a", "b", "c"}, "g2": {"x"}})
		fifoqtest.RequireEmpty(t, q)
	})
}

// A message that always fails moves to the dead-letter queue at the receive after its maxReceiveCount-th,
// which ends no batch; Drain sees the queue empty then.
func TestDrainDeadLetter(t *testing.T) {
	bothClocks(t, func(t *testing.T, clock []fifoq.Option) {
		dlq := fifoqtest.NewQueue(t, "orders-dlq.fifo", clock...)
		q := fifoqtest.NewQueue(t, "orders.fifo", with(clock,
			fifoq.WithVisibilityTimeout(30*time.Second), fifoq.WithDeadLetterQueue(dlq, 3))...)
		fifoqtest.SendGroup(t, q, "g1", "a", "b")
		fifoqtest.SendGroup(t, q, "g2", "poison")
		start := q.Clock().Now()
		h := func(_ context.Context, batch []fifoq.Delivery) error {
			for _, d := range batch {
				if d.Body == "poison" {
					return &fifoq.BatchItemFailures{MessageIDs: []string{d.MessageID}}
				}
			}
			return nil
		}
		r := fifoqtest.Drain(t, q, h, fifoqtest.DrainOptions{
			Consumer: fifoq.ConsumerOptions{ReportBatchItemFailures: true},
		})
		require.Equal(t, []string{
			`0s: partial ["a" "b" "poison"]`,
			`30s: partial ["poison"]`,
			`1m0s: partial ["poison"]`,
		}, timeline(r, start))
		require.True(t, r.Drained)
		require.Equal(t, 90*time.Second, r.Elapsed, "moved when its third visibility timeout ended")
		fifoqtest.RequireInDLQ(t, dlq, map[string]int{"poison": 3})
		fifoqtest.RequireEmpty(t, q)
		fifoqtest.RequireDeliveredInOrder(t, r, map[string][]string{"g1": {"a", "b"}, "g2": {"poison"}})
	})
}

// A handler that never succeeds, with no dead-letter queue, runs until the deadline: the message that
// comes due at the deadline itself is still handled. Drain logs what is left.
func TestDrainDeadline(t *testing.T) {
	bothClocks(t, func(t *testing.T, clock []fifoq.Option) {
		q := fifoqtest.NewQueue(t, "jobs", with(clock, fifoq.WithVisibilityTimeout(30*time.Second))...)
		fifoqtest.SendGroup(t, q, "", "job")
		start := q.Clock().Now()
		var calls atomic.Int32
		h := func(context.Context, []fifoq.Delivery) error {
			calls.Add(1)
			return errFlaky
		}
		tb := &fakeTB{}
		r := fifoqtest.Drain(tb, q, h, fifoqtest.DrainOptions{Timeout: 5 * time.Minute})
		require.Empty(t, tb.report())
		require.False(t, r.Drained)
		require.Equal(t, 5*time.Minute, r.Elapsed)
		require.Equal(t, int32(11), calls.Load(), "at 0s, 30s, ..., 5m0s")
		require.Len(t, r.Batches, 11)
		for i, b := range r.Batches {
			require.Equal(t, time.Duration(i)*30*time.Second, b.At.Sub(start), "batch %d", i)
			require.Equal(t, fifoq.OutcomeError, b.Report.Outcome, "batch %d", i)
			require.ErrorIs(t, b.Report.Err, errFlaky, "batch %d", i)
		}
		require.Equal(t, "fifoqtest.Drain(jobs) stopped at its deadline, after 5m0s: queue jobs holds 1 message:\n"+
			"\t\"job\" (in flight, received 11 times, visible in 30s)", tb.logged())

		fifoqtest.RequireNoneInFlight(tb, q)
		require.Equal(t, "queue jobs has 1 message in flight, want none:\n\t\"job\" (received 11 times, visible in 30s)",
			tb.report())
	})
}

// The queue empty from the start: Drain returns at once.
func TestDrainEmpty(t *testing.T) {
	bothClocks(t, func(t *testing.T, clock []fifoq.Option) {
		q := fifoqtest.NewQueue(t, "empty.fifo", clock...)
		r := fifoqtest.Drain(t, q, func(context.Context, []fifoq.Delivery) error { return nil }, fifoqtest.DrainOptions{})
		require.True(t, r.Drained)
		require.Zero(t, r.Elapsed)
		require.Empty(t, r.Batches)
	})
}

// A message the test received before Drain stays in flight until its visibility timeout; Drain waits for
// it (on a ManualClock, it counts such messages as waiting from the start).
func TestDrainMessageInFlightAtStart(t *testing.T) {
	bothClocks(t, func(t *testing.T, clock []fifoq.Option) {
		q := fifoqtest.NewQueue(t, "jobs.fifo", with(clock, fifoq.WithVisibilityTimeout(30*time.Second))...)
		fifoqtest.SendGroup(t, q, "g", "a")
		ds, err := q.Receive(t.Context(), fifoq.ReceiveOptions{})
		require.NoError(t, err)
		require.Len(t, ds, 1)
		start := q.Clock().Now()
		r := fifoqtest.Drain(t, q, func(context.Context, []fifoq.Delivery) error { return nil }, fifoqtest.DrainOptions{})
		require.Equal(t, []string{`30s: success ["a"]`}, timeline(r, start))
		require.Equal(t, 2, r.Batches[0].Deliveries[0].ReceiveCount)
		require.True(t, r.Drained)
	})
}

// A visible message past maxReceiveCount when Drain starts moves to the dead-letter queue at the first
// receive; no batch handles it.
func TestDrainExhaustedAtStart(t *testing.T) {
	bothClocks(t, func(t *testing.T, clock []fifoq.Option) {
		dlq := fifoqtest.NewQueue(t, "dlq", clock...)
		q := fifoqtest.NewQueue(t, "jobs", with(clock, fifoq.WithDeadLetterQueue(dlq, 1),
			fifoq.WithVisibilityTimeout(0))...)
		fifoqtest.SendGroup(t, q, "", "a")
		_, err := q.Receive(t.Context(), fifoq.ReceiveOptions{})
		require.NoError(t, err)
		require.Equal(t, fifoq.Stats{Visible: 1}, q.Stats(), "received once, visible again at once")
		r := fifoqtest.Drain(t, q, func(context.Context, []fifoq.Delivery) error { return nil }, fifoqtest.DrainOptions{})
		require.Empty(t, r.Batches)
		require.True(t, r.Drained)
		fifoqtest.RequireInDLQ(t, dlq, map[string]int{"a": 1})
	})
}

// Every batch gets the report of its own handler call, although batches run at once and end in another
// order than they started (in the bubble, each handler sleeps a time of its own).
func TestDrainPairsReportsWithCalls(t *testing.T) {
	bothClocks(t, func(t *testing.T, clock []fifoq.Option) {
		q := fifoqtest.NewQueue(t, "numbers", with(clock, fifoq.WithVisibilityTimeout(time.Minute))...)
		for i := range 60 {
			fifoqtest.SendGroup(t, q, "", strconv.Itoa(i))
		}
		// On its first receive, a number divisible by 3 fails as a batch item failure, 7 and 8 fail their
		// whole batch, and 5 panics. expect says what the Consumer must report about a batch.
		first := func(d fifoq.Delivery, bodies ...string) bool {
			return d.ReceiveCount == 1 && slices.Contains(bodies, d.Body)
		}
		fails := func(d fifoq.Delivery) bool {
			n, _ := strconv.Atoi(d.Body)
			return d.ReceiveCount == 1 && n%3 == 0
		}
		expect := func(batch []fifoq.Delivery) (fifoq.Outcome, []string) {
			var all, failed []string
			for _, d := range batch {
				all = append(all, d.MessageID)
			}
			for _, d := range batch {
				switch {
				case first(d, "7", "8"):
					return fifoq.OutcomeError, all
				case first(d, "5"):
					return fifoq.OutcomePanic, all
				case fails(d):
					failed = append(failed, d.MessageID)
				}
			}
			if failed != nil {
				return fifoq.OutcomePartial, failed
			}
			return fifoq.OutcomeSuccess, nil
		}
		synced := len(clock) == 0
		h := func(_ context.Context, batch []fifoq.Delivery) error {
			var failed []string
			for i, d := range batch {
				if synced {
					n, _ := strconv.Atoi(d.Body)
					time.Sleep(time.Duration((n*7+i)%5) * time.Second)
				}
				switch {
				case first(d, "7", "8"):
					return errFlaky
				case first(d, "5"):
					panic("five")
				case fails(d):
					failed = append(failed, d.MessageID)
				}
			}
			if failed != nil {
				return &fifoq.BatchItemFailures{MessageIDs: failed}
			}
			return nil
		}
		r := fifoqtest.Drain(t, q, h, fifoqtest.DrainOptions{Consumer: fifoq.ConsumerOptions{
			Batch: fifoq.BatchOptions{Size: 3}, MaxConcurrency: 4, ReportBatchItemFailures: true,
		}})
		require.True(t, r.Drained)
		delivered := map[string]bool{}
		for i, b := range r.Batches {
			require.NotNil(t, b.Deliveries, "batch %d: every batch was handled", i)
			outcome, failed := expect(b.Deliveries)
			require.Equal(t, outcome, b.Report.Outcome, "batch %d %q", i, b.Bodies())
			require.ElementsMatch(t, failed, b.Report.Failed, "batch %d %q", i, b.Bodies())
			require.Equal(t, len(b.Deliveries), b.Report.Size, "batch %d %q", i, b.Bodies())
			for _, body := range b.Bodies() {
				delivered[body] = true
			}
		}
		require.Len(t, delivered, 60, "every number was delivered")
	})
}

// Batches the filter rejects entirely are recorded without deliveries; OnBatch of the options is still
// called, after Drain recorded the batch.
func TestDrainFilterAndOnBatch(t *testing.T) {
	bothClocks(t, func(t *testing.T, clock []fifoq.Option) {
		q := fifoqtest.NewQueue(t, "events", clock...)
		fifoqtest.SendGroup(t, q, "", "a", "skip", "b")
		var (
			mu       sync.Mutex
			outcomes []string
		)
		r := fifoqtest.Drain(t, q, func(context.Context, []fifoq.Delivery) error { return nil }, fifoqtest.DrainOptions{
			Consumer: fifoq.ConsumerOptions{
				Batch:          fifoq.BatchOptions{Size: 1},
				MaxConcurrency: 1,
				Filter:         func(d fifoq.Delivery) bool { return d.Body != "skip" },
				OnBatch: func(r fifoq.BatchReport) {
					mu.Lock()
					defer mu.Unlock()
					outcomes = append(outcomes, r.Outcome.String())
				},
			},
		})
		require.True(t, r.Drained)
		require.Equal(t, []string{"success", "filtered", "success"}, outcomes)
		require.Len(t, r.Batches, 3)
		require.Equal(t, []string{"a"}, r.Batches[0].Bodies())
		require.Nil(t, r.Batches[1].Deliveries)
		require.Equal(t, fifoq.OutcomeFiltered, r.Batches[1].Report.Outcome)
		require.Equal(t, []string{"b"}, r.Batches[2].Bodies())
		fifoqtest.RequireDeliveredInOrder(t, r, map[string][]string{"": {"a", "b"}})
	})
}

// In a bubble, a handler may wait for the clock: a handler timeout fails its batch, and a handler that
// sleeps past the visibility timeout keeps its messages (the Consumer extends their visibility meanwhile).
func TestDrainSynctestHandlerWaitsForTheClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := fifoqtest.NewQueue(t, "slow.fifo", fifoq.WithVisibilityTimeout(30*time.Second))
		fifoqtest.SendGroup(t, q, "g", "hang")
		start := time.Now()
		r := fifoqtest.Drain(t, q, func(ctx context.Context, batch []fifoq.Delivery) error {
			if batch[0].ReceiveCount == 1 {
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		}, fifoqtest.DrainOptions{Consumer: fifoq.ConsumerOptions{HandlerTimeout: 10 * time.Second}})
		require.Equal(t, []string{`0s: timeout ["hang"]`, `30s: success ["hang"]`}, timeline(r, start))
		require.Equal(t, 10*time.Second, r.Batches[0].Report.Duration)
		require.True(t, r.Drained)
		require.Equal(t, 30*time.Second, r.Elapsed)

		fifoqtest.SendGroup(t, q, "g", "sleep")
		start = time.Now()
		r = fifoqtest.Drain(t, q, func(context.Context, []fifoq.Delivery) error {
			time.Sleep(time.Minute)
			return nil
		}, fifoqtest.DrainOptions{})
		require.Equal(t, []string{`0s: success ["sleep"]`}, timeline(r, start))
		require.Equal(t, time.Minute, r.Batches[0].Report.Duration)
		require.True(t, r.Drained)
		require.Equal(t, time.Minute, r.Elapsed)
	})
}

// In a bubble, a batch window gathers messages for its length, the one sent meanwhile too.
func TestDrainSynctestBatchWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := fifoqtest.NewQueue(t, "events")
		fifoqtest.SendGroup(t, q, "", "a", "b")
		sent := make(chan error, 1)
		go func() {
			time.Sleep(2 * time.Second)
			_, err := q.Send(context.Background(), fifoq.Message{Body: "c"})
			sent <- err
		}()
		start := time.Now()
		r := fifoqtest.Drain(t, q, func(context.Context, []fifoq.Delivery) error { return nil }, fifoqtest.DrainOptions{
			Consumer: fifoq.ConsumerOptions{Batch: fifoq.BatchOptions{Window: 5 * time.Second}},
		})
		require.NoError(t, <-sent)
		require.Equal(t, []string{`5s: success ["a" "b" "c"]`}, timeline(r, start))
		require.True(t, r.Drained)
	})
}

// A handler that always fails with RetryImmediately, and no dead-letter queue, never lets time pass: Drain
// stops it at the batch limit. Not parallel: it lowers the limit.
func TestDrainBatchLimit(t *testing.T) {
	fifoqtest.SetMaxBatches(t, 50)
	q := fifoqtest.NewQueue(t, "loop", fifoq.WithClock(fifoq.NewManualClock(epoch)))
	fifoqtest.SendGroup(t, q, "", "forever")
	tb := &fakeTB{}
	r := fifoqtest.Drain(tb, q, func(context.Context, []fifoq.Delivery) error { return errFlaky }, fifoqtest.DrainOptions{
		Consumer: fifoq.ConsumerOptions{MaxConcurrency: 1, RetryImmediately: true},
	})
	require.Empty(t, tb.report())
	require.False(t, r.Drained)
	require.Len(t, r.Batches, 50)
	require.Zero(t, r.Elapsed)
	require.Contains(t, tb.logged(), "fifoqtest.Drain(loop) stopped at 50 batches, after 0s: queue loop holds 1 message")
}

// On a ManualClock a handler must not wait for the clock. A batch that takes long is no failure (a machine
// can be slow): Drain logs a hint every stall timeout of real time and goes on waiting. Run in a bubble,
// where the stall timeout is virtual. Not parallel: it sets the stall timeout.
func TestDrainManualClockStall(t *testing.T) {
	fifoqtest.SetStallTimeout(t, 5*time.Second)
	synctest.Test(t, func(t *testing.T) {
		q := fifoqtest.NewQueue(t, "slow", fifoq.WithClock(fifoq.NewManualClock(epoch)))
		fifoqtest.SendGroup(t, q, "", "slow")
		release := make(chan struct{})
		go func() {
			time.Sleep(12 * time.Second) // a handler stalled for two stall timeouts and more
			close(release)
		}()
		tb := &fakeTB{}
		r := fifoqtest.Drain(tb, q, func(ctx context.Context, _ []fifoq.Delivery) error {
			<-release
			return nil
		}, fifoqtest.DrainOptions{})
		require.Empty(t, tb.report(), "a slow batch fails nothing")
		require.True(t, r.Drained)
		require.Len(t, r.Batches, 1)
		require.Equal(t, fifoq.OutcomeSuccess, r.Batches[0].Report.Outcome)
		for _, waited := range []string{"5s", "10s"} {
			require.Contains(t, tb.logged(), "fifoqtest.Drain(slow): no batch has ended in "+waited+" of real time; on a "+
				"ManualClock time moves only between batches, so a handler must not wait for the clock; queue slow holds 1 message:\n"+
				"\t\"slow\" (in flight, received 1 time, visible in 30s)")
		}
		require.NotContains(t, tb.logged(), "no batch has ended in 15s")
	})
}

// Drain fails the test at once on what it cannot drive.
func TestDrainRejects(t *testing.T) {
	t.Parallel()
	nop := func(context.Context, []fifoq.Delivery) error { return nil }
	manual := fifoq.WithClock(fifoq.NewManualClock(epoch))
	for _, tc := range []struct {
		name string
		q    *fifoq.Queue
		h    fifoq.Handler
		o    fifoqtest.DrainOptions
		want string
	}{
		{"real clock outside a bubble", fifoqtest.NewQueue(t, "real"), nop, fifoqtest.DrainOptions{},
			"fifoqtest.Drain(real): the queue's clock is not a *fifoq.ManualClock, so it must be the real clock " +
				"inside synctest.Test, where time is virtual; call Drain in a bubble or give the queue a ManualClock"},
		{"window on a ManualClock", fifoqtest.NewQueue(t, "window", manual), nop,
			fifoqtest.DrainOptions{Consumer: fifoq.ConsumerOptions{Batch: fifoq.BatchOptions{Window: time.Second}}},
			"fifoqtest.Drain(window): a batch window on a ManualClock: Drain moves that clock only between batches, " +
				"so it cannot end a window; use the real clock inside synctest.Test"},
		{"nil handler", fifoqtest.NewQueue(t, "nil", manual), nil, fifoqtest.DrainOptions{},
			"fifoqtest.Drain(nil): nil handler"},
		{"negative timeout", fifoqtest.NewQueue(t, "negative", manual), nop, fifoqtest.DrainOptions{Timeout: -1},
			"fifoqtest.Drain(negative): negative timeout -1ns"},
		{"bad consumer options", fifoqtest.NewQueue(t, "options", manual), nop,
			fifoqtest.DrainOptions{Consumer: fifoq.ConsumerOptions{MaxConcurrency: -1}},
			"fifoqtest.Drain(options): "},
	} {
		tb := &fakeTB{}
		r := fifoqtest.Drain(tb, tc.q, tc.h, tc.o)
		require.Nil(t, r, tc.name)
		require.True(t, tb.fatal, tc.name)
		require.Contains(t, tb.report(), tc.want, tc.name)
	}
}

// Drain's results and the assertions agree with a hand-run consumer on a larger FIFO load: every group in
// order, under concurrency, with retries.
func TestDrainManyGroups(t *testing.T) {
	bothClocks(t, func(t *testing.T, clock []fifoq.Option) {
		q := fifoqtest.NewQueue(t, "load.fifo", with(clock, fifoq.WithVisibilityTimeout(10*time.Second))...)
		want := map[string][]string{}
		for g := range 8 {
			group := fmt.Sprintf("g%d", g)
			for i := range 12 {
				want[group] = append(want[group], fmt.Sprintf("%s-%d", group, i))
			}
		}
		for i := range 12 { // interleaved sends
			for g := range 8 {
				fifoqtest.SendGroup(t, q, fmt.Sprintf("g%d", g), want[fmt.Sprintf("g%d", g)][i])
			}
		}
		h := func(_ context.Context, batch []fifoq.Delivery) error {
			for _, d := range batch {
				if d.ReceiveCount == 1 && strings.HasSuffix(d.Body, "-5") {
					return &fifoq.BatchItemFailures{MessageIDs: []string{d.MessageID}}
				}
			}
			return nil
		}
		r := fifoqtest.Drain(t, q, h, fifoqtest.DrainOptions{Consumer: fifoq.ConsumerOptions{
			Batch: fifoq.BatchOptions{Size: 4}, MaxConcurrency: 3, ReportBatchItemFailures: true,
		}})
		require.True(t, r.Drained)
		fifoqtest.RequireDeliveredInOrder(t, r, want)
		fifoqtest.RequireEmpty(t, q)
	})
}

// Delayed messages become visible by the clock too: a standard queue's message timers, a FIFO queue's
// delay.
func TestDrainDelayed(t *testing.T) {
	bothClocks(t, func(t *testing.T, clock []fifoq.Option) {
		nop := func(context.Context, []fifoq.Delivery) error { return nil }
		q := fifoqtest.NewQueue(t, "timers", clock...)
		start := q.Clock().Now()
		fifoqtest.Send(t, q, fifoq.Message{Body: "later", Delay: 2 * time.Minute}, fifoq.Message{Body: "soon", Delay: time.Minute})
		r := fifoqtest.Drain(t, q, nop, fifoqtest.DrainOptions{})
		require.Equal(t, []string{`1m0s: success ["soon"]`, `2m0s: success ["later"]`}, timeline(r, start))
		require.True(t, r.Drained)

		q = fifoqtest.NewQueue(t, "delayed.fifo", with(clock, fifoq.WithDelay(5*time.Minute))...)
		start = q.Clock().Now()
		fifoqtest.SendGroup(t, q, "g", "a", "b")
		r = fifoqtest.Drain(t, q, nop, fifoqtest.DrainOptions{})
		require.Equal(t, []string{`5m0s: success ["a" "b"]`}, timeline(r, start))
		require.Equal(t, 5*time.Minute, r.Elapsed)
	})
}

// The example of the package doc, as written there.
func TestPackageDocExample(t *testing.T) {
	handle := func(_ context.Context, batch []fifoq.Delivery) error {
		for _, d := range batch {
			if d.Body == "poison" {
				return &fifoq.BatchItemFailures{MessageIDs: []string{d.MessageID}}
			}
		}
		return nil
	}
	synctest.Test(t, func(t *testing.T) {
		dlq := fifoqtest.NewQueue(t, "orders-dlq.fifo")
		q := fifoqtest.NewQueue(t, "orders.fifo", fifoq.WithDeadLetterQueue(dlq, 3))
		fifoqtest.SendGroup(t, q, "order-1", "create", "pay", "ship")
		fifoqtest.SendGroup(t, q, "order-2", "poison")

		r := fifoqtest.Drain(t, q, handle, fifoqtest.DrainOptions{
			Consumer: fifoq.ConsumerOptions{ReportBatchItemFailures: true},
		})

		fifoqtest.RequireDeliveredInOrder(t, r, map[string][]string{
			"order-1": {"create", "pay", "ship"},
			"order-2": {"poison"},
		})
		fifoqtest.RequireInDLQ(t, dlq, map[string]int{"poison": 3})
		fifoqtest.RequireEmpty(t, q)
		require.Equal(t, 90*time.Second, r.Elapsed, "the doc's 90 seconds")
	})
}

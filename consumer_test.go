package fifoq_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/stretchr/testify/require"
)

// Tests of the Consumer (issue item 2 and its observability paragraph, spec 9.1.4-9.1.8, 9.2.2, 9.3, 9.4.3,
// scenarios 59-64). Helpers shared with batch_test.go live there. Every test that runs a Consumer runs inside
// a testing/synctest bubble: synctest.Test fails if a goroutine outlives it, which proves Run leaves none.

// bcNop is a handler that succeeds.
func bcNop(context.Context, []fifoq.Delivery) error { return nil }

// bcConsume runs a Consumer of src with h and o in the calling goroutine until stop, called after each batch
// with the reports so far, returns true; or, failing that, for at most limit of bubble time. It returns the
// reports and requires that Run returned nil and that stop was reached. Set o.MaxConcurrency to 1 for a
// deterministic stop: Run then starts no batch after the one whose report stopped it.
func bcConsume(t *testing.T, src fifoq.Source, h fifoq.Handler, o fifoq.ConsumerOptions, limit time.Duration,
	stop func([]fifoq.BatchReport) bool) []fifoq.BatchReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	var (
		mu      sync.Mutex
		reports []fifoq.BatchReport
		stopped bool
	)
	o.OnBatch = func(r fifoq.BatchReport) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, r)
		if !stopped && stop != nil && stop(reports) {
			stopped = true
			cancel()
		}
	}
	c, err := fifoq.NewConsumer(src, h, o)
	require.NoError(t, err, "NewConsumer(%+v)", o)
	require.NoError(t, c.Run(ctx), "Run")
	mu.Lock()
	defer mu.Unlock()
	if stop != nil {
		require.True(t, stopped, "the consumer did not reach its stop condition within %v; reports: %+v", limit, reports)
	}
	return slices.Clone(reports)
}

// bcAfter returns a stop condition: after n reports.
func bcAfter(n int) func([]fifoq.BatchReport) bool {
	return func(rs []fifoq.BatchReport) bool { return len(rs) >= n }
}

// bcIDsOf maps bodies to message ids through ds.
func bcIDsOf(ds []fifoq.Delivery, bodies ...string) []string {
	var ids []string
	for _, b := range bodies {
		id := "unknown-" + b
		for _, d := range ds {
			if d.Body == b {
				id = d.MessageID
			}
		}
		ids = append(ids, id)
	}
	return ids
}

// bcLog is a slog.Handler that records every record, and optionally runs probe in Handle.
type bcLog struct {
	mu      sync.Mutex // guards records
	records []slog.Record
	probe   func(slog.Record)
}

func (h *bcLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *bcLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *bcLog) WithGroup(string) slog.Handler            { return h }
func (h *bcLog) Handle(_ context.Context, r slog.Record) error {
	if h.probe != nil {
		h.probe(r)
	}
	h.mu.Lock()
	h.records = append(h.records, r.Clone())
	h.mu.Unlock()
	return nil
}

// bcRecords returns the records so far.
func (h *bcLog) bcRecords() []slog.Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.records)
}

// bcAttrs returns a record's attributes by key.
func bcAttrs(r slog.Record) map[string]slog.Value {
	m := make(map[string]slog.Value)
	r.Attrs(func(a slog.Attr) bool {
		m[a.Key] = a.Value.Resolve()
		return true
	})
	return m
}

// Issue item 2 (MaxConcurrency 1..1000, default 2; nil handler; HandlerTimeout >= 0): NewConsumer rejects
// options out of range with ErrInvalidBatchOptions.
func TestNewConsumerOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		h       fifoq.Handler
		o       fifoq.ConsumerOptions
		wantErr bool
	}{
		{"defaults", bcNop, fifoq.ConsumerOptions{}, false},
		{"nil handler", nil, fifoq.ConsumerOptions{}, true},
		{"max concurrency 1", bcNop, fifoq.ConsumerOptions{MaxConcurrency: 1}, false},
		{"max concurrency 1000", bcNop, fifoq.ConsumerOptions{MaxConcurrency: 1000}, false},
		{"max concurrency 1001", bcNop, fifoq.ConsumerOptions{MaxConcurrency: 1001}, true},
		{"max concurrency -1", bcNop, fifoq.ConsumerOptions{MaxConcurrency: -1}, true},
		{"strict max concurrency 1 (Lambda's minimum is 2)", bcNop, fifoq.ConsumerOptions{MaxConcurrency: 1, Batch: fifoq.BatchOptions{Strict: true}}, true},
		{"strict max concurrency 2", bcNop, fifoq.ConsumerOptions{MaxConcurrency: 2, Batch: fifoq.BatchOptions{Strict: true}}, false},
		{"handler timeout -1ns", bcNop, fifoq.ConsumerOptions{HandlerTimeout: -1}, true},
		{"bad batch options", bcNop, fifoq.ConsumerOptions{Batch: fifoq.BatchOptions{Size: 10_001}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q := bcNewQueue(t, "bc-copts")
			c, err := fifoq.NewConsumer(q, tt.h, tt.o)
			if tt.wantErr {
				require.ErrorIs(t, err, fifoq.ErrInvalidBatchOptions, "NewConsumer(%+v)", tt.o)
				require.Nil(t, c)
				return
			}
			require.NoError(t, err, "NewConsumer(%+v)", tt.o)
			require.NotNil(t, c)
		})
	}
}

// Spec 9.1.8, scenario 59: a handler timeout greater than the visibility timeout of the receives is rejected
// at NewConsumer.
func TestNewConsumerHandlerTimeoutVsVisibility(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		queueVT  time.Duration
		batchVT  time.Duration
		timeout  time.Duration
		viaProxy bool // through a Source that is not a *Queue
		wantErr  bool
	}{
		{"scenario 59: timeout 60s, queue VT 30s", 30 * time.Second, 0, 60 * time.Second, false, true},
		{"timeout equal to the queue VT", 30 * time.Second, 0, 30 * time.Second, false, false},
		{"timeout below the queue VT", 30 * time.Second, 0, 29 * time.Second, false, false},
		{"no timeout", 30 * time.Second, 0, 0, false, false},
		{"the batch VT overrides the queue's: larger", 30 * time.Second, 90 * time.Second, 60 * time.Second, false, false},
		{"the batch VT overrides the queue's: smaller", 30 * time.Second, 10 * time.Second, 20 * time.Second, false, true},
		{"queue VT 0, timeout 1s", 0, 0, time.Second, false, true},
		{"through a Source, batch VT 30s, timeout 60s", 30 * time.Second, 30 * time.Second, 60 * time.Second, true, true},
		{"through a Source, batch VT 60s, timeout 60s", 30 * time.Second, 60 * time.Second, 60 * time.Second, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q := bcNewQueue(t, "bc-vt", fifoq.WithVisibilityTimeout(tt.queueVT))
			var src fifoq.Source = q
			if tt.viaProxy {
				src = &bcSource{q: q}
			}
			o := fifoq.ConsumerOptions{HandlerTimeout: tt.timeout, Batch: fifoq.BatchOptions{VisibilityTimeout: tt.batchVT}}
			c, err := fifoq.NewConsumer(src, bcNop, o)
			if tt.wantErr {
				require.ErrorIs(t, err, fifoq.ErrInvalidBatchOptions,
					"handler timeout %v, queue VT %v, batch VT %v", tt.timeout, tt.queueVT, tt.batchVT)
				require.Nil(t, c)
				return
			}
			require.NoError(t, err, "handler timeout %v, queue VT %v, batch VT %v", tt.timeout, tt.queueVT, tt.batchVT)
		})
	}
}

// Spec 9.2.2, issue item 2: a batch whose handler returns nil is deleted, on standard and FIFO queues.
func TestConsumerSuccessDeletesBatch(t *testing.T) {
	for _, name := range []string{"bc-ok", "bc-ok.fifo"} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := bcNewQueue(t, name)
				bcSend(t, q, "g1", "a", "b", "c")
				var got [][]string
				var mu sync.Mutex
				h := func(_ context.Context, batch []fifoq.Delivery) error {
					mu.Lock()
					got = append(got, bcBodies(batch))
					mu.Unlock()
					return nil
				}
				rs := bcConsume(t, q, h, fifoq.ConsumerOptions{MaxConcurrency: 1}, time.Hour, bcAfter(1))
				require.Equal(t, [][]string{{"a", "b", "c"}}, got)
				require.Len(t, rs, 1)
				require.Equal(t, fifoq.OutcomeSuccess, rs[0].Outcome)
				require.NoError(t, rs[0].Err)
				require.Empty(t, rs[0].Failed)
				require.Equal(t, fifoq.Stats{}, q.Stats(), "a successful batch must be deleted")
				stored, _ := bcStored(q)
				require.Empty(t, stored)
			})
		})
	}
}

// Spec 9.3.1, scenario 61, issue item 2: an error, a panic (a *PanicError) or the handler timeout
// (ErrHandlerTimeout) fails the whole batch: nothing is deleted, and the messages come back after their
// visibility timeout, or at once with RetryImmediately, counting a receive.
func TestConsumerWholeBatchFailure(t *testing.T) {
	boom := errors.New("bc boom")
	kinds := []struct {
		name        string
		h           fifoq.Handler
		o           fifoq.ConsumerOptions
		wantOutcome fifoq.Outcome
		checkErr    func(t *testing.T, err error)
	}{
		{
			name:        "error",
			h:           func(context.Context, []fifoq.Delivery) error { return boom },
			wantOutcome: fifoq.OutcomeError,
			checkErr:    func(t *testing.T, err error) { require.ErrorIs(t, err, boom) },
		},
		{
			name:        "wrapped error",
			h:           func(context.Context, []fifoq.Delivery) error { return fmt.Errorf("handling: %w", boom) },
			wantOutcome: fifoq.OutcomeError,
			checkErr:    func(t *testing.T, err error) { require.ErrorIs(t, err, boom) },
		},
		{
			name:        "panic",
			h:           func(context.Context, []fifoq.Delivery) error { panic("bc panic value") },
			wantOutcome: fifoq.OutcomePanic,
			checkErr: func(t *testing.T, err error) {
				var pe *fifoq.PanicError
				require.ErrorAs(t, err, &pe)
				require.Equal(t, "bc panic value", pe.Value)
				require.Contains(t, pe.Error(), "bc panic value")
				require.Contains(t, string(pe.Stack), "TestConsumerWholeBatchFailure", "the stack is the handler's")
			},
		},
		{
			name: "timeout, handler honours ctx",
			h: func(ctx context.Context, _ []fifoq.Delivery) error {
				<-ctx.Done()
				return ctx.Err()
			},
			o:           fifoq.ConsumerOptions{HandlerTimeout: 5 * time.Second},
			wantOutcome: fifoq.OutcomeTimeout,
			checkErr:    func(t *testing.T, err error) { require.ErrorIs(t, err, fifoq.ErrHandlerTimeout) },
		},
		{
			name: "timeout, handler ignores ctx and returns nil late",
			h: func(context.Context, []fifoq.Delivery) error {
				time.Sleep(8 * time.Second)
				return nil
			},
			o:           fifoq.ConsumerOptions{HandlerTimeout: 5 * time.Second},
			wantOutcome: fifoq.OutcomeTimeout,
			checkErr:    func(t *testing.T, err error) { require.ErrorIs(t, err, fifoq.ErrHandlerTimeout) },
		},
		{
			name: "item failures without ReportBatchItemFailures",
			h: func(_ context.Context, batch []fifoq.Delivery) error {
				return &fifoq.BatchItemFailures{MessageIDs: []string{batch[1].MessageID}}
			},
			wantOutcome: fifoq.OutcomeError,
			checkErr: func(t *testing.T, err error) {
				var f *fifoq.BatchItemFailures
				require.ErrorAs(t, err, &f)
			},
		},
	}
	const vt = 30 * time.Second
	for _, k := range kinds {
		for _, retry := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/retryImmediately=%v", k.name, retry), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					q := bcNewQueue(t, "bc-fail.fifo", fifoq.WithVisibilityTimeout(vt))
					ids := bcSend(t, q, "g1", "a", "b", "c")
					start := time.Now()
					o := k.o
					o.MaxConcurrency, o.RetryImmediately = 1, retry
					rs := bcConsume(t, q, k.h, o, time.Hour, bcAfter(1))
					require.Len(t, rs, 1)
					r := rs[0]
					require.Equal(t, k.wantOutcome, r.Outcome, "outcome (err %v)", r.Err)
					require.Error(t, r.Err)
					k.checkErr(t, r.Err)
					require.Equal(t, ids, r.Failed, "the whole batch fails")
					stored, _ := bcStored(q)
					require.Equal(t, []string{"a", "b", "c"}, stored, "nothing may be deleted")

					if !retry {
						require.Equal(t, fifoq.Stats{InFlight: 3}, q.Stats(), "failed messages wait for their visibility timeout")
						time.Sleep(time.Until(start.Add(vt - time.Millisecond)))
						require.Equal(t, fifoq.Stats{InFlight: 3}, q.Stats(), "visible before the visibility timeout ended")
						time.Sleep(time.Millisecond)
					}
					require.Equal(t, fifoq.Stats{Visible: 3}, q.Stats(), "failed messages must be visible again")
					ds := bcDrain(t, q)
					require.Equal(t, []string{"a", "b", "c"}, bcBodies(ds), "group order kept")
					for _, d := range ds {
						require.Equal(t, 2, d.ReceiveCount, "the failed receive counts: %s", d.Body)
					}
				})
			})
		}
	}
}

// Issue item 2, style 16: a panicking handler fails its batch, is reported as a *PanicError, and neither
// crashes the process nor stops the Consumer: the next batch (the same messages, retried) is handled.
func TestConsumerPanicDoesNotStopRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := bcNewQueue(t, "bc-panic.fifo", fifoq.WithVisibilityTimeout(time.Minute))
		bcSend(t, q, "g1", "a", "b")
		var (
			mu    sync.Mutex
			calls [][]int // receive counts per call
		)
		h := func(_ context.Context, batch []fifoq.Delivery) error {
			mu.Lock()
			n := len(calls)
			var counts []int
			for _, d := range batch {
				counts = append(counts, d.ReceiveCount)
			}
			calls = append(calls, counts)
			mu.Unlock()
			if n == 0 {
				_ = counts[n+len(batch)] // a runtime error panic: index out of range
			}
			return nil
		}
		rs := bcConsume(t, q, h, fifoq.ConsumerOptions{MaxConcurrency: 1, RetryImmediately: true}, time.Hour, bcAfter(2))
		require.Equal(t, [][]int{{1, 1}, {2, 2}}, calls, "the batch is retried after the panic")
		require.Equal(t, fifoq.OutcomePanic, rs[0].Outcome)
		var pe *fifoq.PanicError
		require.ErrorAs(t, rs[0].Err, &pe)
		require.ErrorContains(t, pe, "index out of range")
		require.NotEmpty(t, pe.Stack)
		require.Equal(t, fifoq.OutcomeSuccess, rs[1].Outcome)
		require.Equal(t, fifoq.Stats{}, q.Stats())
	})
}

// Issue item 2 (handler timeout): the handler's ctx carries the deadline receive + HandlerTimeout; a call that
// ends past it fails with ErrHandlerTimeout, one that ends before it does not.
func TestConsumerHandlerTimeout(t *testing.T) {
	const timeout = 5 * time.Second
	tests := []struct {
		name        string
		runFor      time.Duration // then return nil; -1: wait for ctx.Done and return ctx.Err()
		wantOutcome fifoq.Outcome
		wantDur     time.Duration
	}{
		{"waits for ctx", -1, fifoq.OutcomeTimeout, timeout},
		{"returns nil just before", timeout - time.Millisecond, fifoq.OutcomeSuccess, timeout - time.Millisecond},
		{"returns nil after, ignoring ctx", 2 * timeout, fifoq.OutcomeTimeout, 2 * timeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := bcNewQueue(t, "bc-timeout", fifoq.WithVisibilityTimeout(time.Minute))
				bcSend(t, q, "", "a")
				start := time.Now()
				deadlines := make(chan time.Time, 1)
				h := func(ctx context.Context, _ []fifoq.Delivery) error {
					d, ok := ctx.Deadline()
					if !ok {
						d = time.Time{}
					}
					deadlines <- d
					if tt.runFor < 0 {
						<-ctx.Done()
						return ctx.Err()
					}
					time.Sleep(tt.runFor)
					return nil
				}
				rs := bcConsume(t, q, h, fifoq.ConsumerOptions{MaxConcurrency: 1, HandlerTimeout: timeout}, time.Hour, bcAfter(1))
				require.Equal(t, start.Add(timeout), <-deadlines, "the handler ctx deadline")
				r := rs[0]
				require.Equal(t, tt.wantOutcome, r.Outcome, "err %v", r.Err)
				require.Equal(t, tt.wantDur, r.Duration)
				if tt.wantOutcome == fifoq.OutcomeTimeout {
					require.ErrorIs(t, r.Err, fifoq.ErrHandlerTimeout)
					require.Equal(t, fifoq.Stats{InFlight: 1}, q.Stats(), "a timed-out batch is not deleted")
				} else {
					require.NoError(t, r.Err)
					require.Equal(t, fifoq.Stats{}, q.Stats())
				}
			})
		})
	}
}

// Spec 9.3.3, 9.3.4, 9.3.5, scenarios 60 and 62, issue item 2 (ReportBatchItemFailures): a *BatchItemFailures
// fails only the listed messages (on FIFO, every later message of the same group in the batch too) and deletes
// the rest; an id not in the batch, or an empty one, fails the whole batch; no ids is a success.
func TestConsumerBatchItemFailures(t *testing.T) {
	type send struct{ group, body string }
	fifo3 := []send{{"g1", "m1"}, {"g1", "m2"}, {"g1", "m3"}}
	fifo2x2 := []send{{"g1", "a1"}, {"g1", "a2"}, {"g2", "b1"}, {"g2", "b2"}}
	std3 := []send{{"", "m1"}, {"", "m2"}, {"", "m3"}}
	fair3 := []send{{"g1", "m1"}, {"g1", "m2"}, {"g1", "m3"}} // standard queue, group ids (fair queue)
	tests := []struct {
		name        string
		fifo        bool
		sends       []send
		report      bool     // ReportBatchItemFailures
		fail        []string // bodies to report; "!" + x reports x verbatim as the id
		wrap        bool     // return the failures wrapped in another error
		wantFailed  []string // bodies, batch order
		wantOutcome fifoq.Outcome
	}{
		{"standard: one item", false, std3, true, []string{"m2"}, false, []string{"m2"}, fifoq.OutcomePartial},
		{"standard with groups: no group rule", false, fair3, true, []string{"m1"}, false, []string{"m1"}, fifoq.OutcomePartial},
		{"scenario 60: fifo m2 and m3 reported", true, fifo3, true, []string{"m2", "m3"}, false, []string{"m2", "m3"}, fifoq.OutcomePartial},
		{"scenario 60: fifo only m2 reported keeps m3", true, fifo3, true, []string{"m2"}, false, []string{"m2", "m3"}, fifoq.OutcomePartial},
		{"fifo last item", true, fifo3, true, []string{"m3"}, false, []string{"m3"}, fifoq.OutcomePartial},
		{"fifo head fails its group only", true, fifo2x2, true, []string{"a1"}, false, []string{"a1", "a2"}, fifoq.OutcomePartial},
		{"fifo two groups", true, fifo2x2, true, []string{"a2", "b1"}, false, []string{"a2", "b1", "b2"}, fifoq.OutcomePartial},
		{"wrapped failures", true, fifo3, true, []string{"m2"}, true, []string{"m2", "m3"}, fifoq.OutcomePartial},
		{"no ids is a success", true, fifo3, true, nil, false, nil, fifoq.OutcomeSuccess},
		{"scenario 62: id not in the batch", true, fifo3, true, []string{"!not-a-message-id"}, false, []string{"m1", "m2", "m3"}, 0},
		{"scenario 62: empty id", true, fifo3, true, []string{"!"}, false, []string{"m1", "m2", "m3"}, 0},
		{"scenario 62: a good id and a bad one", false, std3, true, []string{"m3", "!nope"}, false, []string{"m1", "m2", "m3"}, 0},
		{"ReportBatchItemFailures off", true, fifo3, false, []string{"m3"}, false, []string{"m1", "m2", "m3"}, fifoq.OutcomeError},
	}
	const vt = 30 * time.Second
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				name := "bc-items"
				if tt.fifo {
					name += ".fifo"
				}
				q := bcNewQueue(t, name, fifoq.WithVisibilityTimeout(vt))
				var all []string
				for _, s := range tt.sends {
					bcSend(t, q, s.group, s.body)
					all = append(all, s.body)
				}
				var batchIDs []string
				h := func(_ context.Context, batch []fifoq.Delivery) error {
					f := &fifoq.BatchItemFailures{}
					for _, b := range tt.fail {
						if id, ok := strings.CutPrefix(b, "!"); ok {
							f.MessageIDs = append(f.MessageIDs, id)
						} else {
							f.MessageIDs = append(f.MessageIDs, bcIDsOf(batch, b)...)
						}
					}
					batchIDs = bcIDsOf(batch, all...)
					if tt.wrap {
						return fmt.Errorf("handler: %w", f)
					}
					return f
				}
				o := fifoq.ConsumerOptions{MaxConcurrency: 1, ReportBatchItemFailures: tt.report}
				rs := bcConsume(t, q, h, o, time.Hour, bcAfter(1))
				require.Len(t, rs, 1)
				r := rs[0]
				require.Equal(t, len(all), r.Size, "one batch with everything")
				if tt.wantOutcome != 0 {
					require.Equal(t, tt.wantOutcome, r.Outcome, "err %v", r.Err)
				}
				wantIDs := bcIDsOf(nil, tt.wantFailed...)
				for i, b := range tt.wantFailed {
					wantIDs[i] = batchIDs[slices.Index(all, b)]
				}
				if len(wantIDs) == 0 {
					wantIDs = nil
					require.NoError(t, r.Err)
				}
				require.Equal(t, wantIDs, r.Failed, "failed ids (bodies %v)", tt.wantFailed)

				stored, inFlight := bcStored(q)
				require.Equal(t, tt.wantFailed, stored, "only the failed messages stay in the queue")
				require.Equal(t, len(tt.wantFailed), inFlight, "failed messages wait for their visibility timeout")
				time.Sleep(vt)
				ds := bcDrain(t, q)
				require.Equal(t, tt.wantFailed, bcNilIfEmpty(bcBodies(ds)), "after the visibility timeout")
				for _, d := range ds {
					require.Equal(t, 2, d.ReceiveCount, "%s", d.Body)
				}
			})
		})
	}
}

// bcNilIfEmpty is s, or nil when s is empty.
func bcNilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// Scenario 60, spec 9.3.5, 9.4.2: after a FIFO partial failure the group's next invocation, after the
// visibility timeout, starts with the first failed message (receive count 2), and the group's order holds.
func TestConsumerScenario60FIFOPartialOrder(t *testing.T) {
	for _, reported := range [][]string{{"m2", "m3"}, {"m2"}} {
		t.Run(strings.Join(reported, "+"), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const vt = 30 * time.Second
				q := bcNewQueue(t, "bc-s60.fifo", fifoq.WithVisibilityTimeout(vt))
				bcSend(t, q, "g1", "m1", "m2", "m3")
				start := time.Now()
				type call struct {
					at     time.Duration
					bodies []string
					counts []int
				}
				var (
					mu    sync.Mutex
					calls []call
				)
				h := func(_ context.Context, batch []fifoq.Delivery) error {
					c := call{at: time.Since(start), bodies: bcBodies(batch)}
					for _, d := range batch {
						c.counts = append(c.counts, d.ReceiveCount)
					}
					mu.Lock()
					calls = append(calls, c)
					n := len(calls)
					mu.Unlock()
					if n == 1 {
						return &fifoq.BatchItemFailures{MessageIDs: bcIDsOf(batch, reported...)}
					}
					return nil
				}
				o := fifoq.ConsumerOptions{MaxConcurrency: 1, ReportBatchItemFailures: true}
				bcConsume(t, q, h, o, time.Hour, bcAfter(2))
				require.Equal(t, []call{
					{0, []string{"m1", "m2", "m3"}, []int{1, 1, 1}},
					{vt, []string{"m2", "m3"}, []int{2, 2}},
				}, calls)
				require.Equal(t, fifoq.Stats{}, q.Stats())
			})
		})
	}
}

// Scenario 61, spec 9.3.1, 6.3: a batch that always fails comes back after each visibility timeout with its
// receive count rising, and moves to the dead-letter queue past maxReceiveCount, where the count carries on.
// The queue's WithLogger logs each move.
func TestConsumerDeadLetter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const vt = 10 * time.Second
		dlq := bcNewQueue(t, "bc-dlq.fifo")
		log := &bcLog{}
		q := bcNewQueue(t, "bc-src.fifo", fifoq.WithVisibilityTimeout(vt), fifoq.WithDeadLetterQueue(dlq, 3),
			fifoq.WithLogger(slog.New(log)))
		ids := bcSend(t, q, "g1", "a", "b")
		start := time.Now()
		var (
			mu    sync.Mutex
			calls []string
		)
		h := func(_ context.Context, batch []fifoq.Delivery) error {
			mu.Lock()
			calls = append(calls, fmt.Sprintf("%v %v count=%d", time.Since(start), bcBodies(batch), batch[0].ReceiveCount))
			mu.Unlock()
			return errors.New("always")
		}
		bcConsume(t, q, h, fifoq.ConsumerOptions{}, 45*time.Second, nil)
		require.Equal(t, []string{
			"0s [a b] count=1",
			"10s [a b] count=2",
			"20s [a b] count=3",
		}, calls, "three failed receives, then the move")
		require.Equal(t, fifoq.Stats{}, q.Stats(), "the source queue is empty")
		ds := bcDrain(t, dlq)
		require.Equal(t, []string{"a", "b"}, bcBodies(ds))
		for i, d := range ds {
			require.Equal(t, ids[i], d.MessageID, "same MessageID in the dead-letter queue")
			require.Equal(t, "bc-src.fifo", d.DeadLetterSource)
			require.Equal(t, 4, d.ReceiveCount, "the receive count carries on in the dead-letter queue")
		}

		recs := log.bcRecords()
		require.Len(t, recs, 2, "one log record per moved message")
		for i, r := range recs {
			require.Equal(t, slog.LevelWarn, r.Level)
			require.Contains(t, r.Message, "dead-letter")
			a := bcAttrs(r)
			require.Equal(t, ids[i], a["message_id"].String())
			require.Equal(t, "g1", a["group"].String())
			require.Equal(t, "bc-src.fifo", a["queue"].String())
			require.Equal(t, "bc-dlq.fifo", a["dead_letter_queue"].String())
			require.Equal(t, int64(3), a["receive_count"].Int64())
		}
	})
}

// Issue observability ("no user code runs under the queue's lock"): the queue's logger runs after the queue
// and its dead-letter queue released their locks, so it may call back into both. Run outside a bubble (where
// a goroutine blocked on a lock would keep the bubble from ever idling) on a ManualClock. The probe calls
// Stats of both queues from another goroutine and waits for it without a time limit: a logger called under
// a lock would deadlock there, a hang that go test's -timeout reports; a limit would fail on a slow machine.
func TestQueueLoggerRunsOutsideTheLock(t *testing.T) {
	t.Parallel()
	clk := fifoq.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	dlq := bcNewQueue(t, "bc-lockdlq.fifo", fifoq.WithClock(clk))
	var q *fifoq.Queue
	probed := 0
	log := &bcLog{probe: func(slog.Record) {
		for _, x := range []*fifoq.Queue{q, dlq} {
			done := make(chan struct{})
			go func() {
				x.Stats()
				close(done)
			}()
			<-done
			probed++
		}
	}}
	q = bcNewQueue(t, "bc-lock.fifo", fifoq.WithClock(clk), fifoq.WithVisibilityTimeout(time.Second),
		fifoq.WithDeadLetterQueue(dlq, 1), fifoq.WithLogger(slog.New(log)))
	ids := bcSend(t, q, "g1", "a")
	ds, err := q.Receive(t.Context(), fifoq.ReceiveOptions{}) // the queue's wait time: 0, a short poll
	require.NoError(t, err)
	require.Len(t, ds, 1)
	clk.Advance(time.Second)
	ds, err = q.Receive(t.Context(), fifoq.ReceiveOptions{})
	require.NoError(t, err)
	require.Empty(t, ds, "the message moved to the dead-letter queue instead")
	recs := log.bcRecords()
	require.Len(t, recs, 1)
	require.Equal(t, ids[0], bcAttrs(recs[0])["message_id"].String())
	require.Equal(t, 2, probed, "the probe read both queues from another goroutine while the logger ran")
	require.Equal(t, fifoq.Stats{Visible: 1}, dlq.Stats())
}

// Spec 9.4.3, scenario 63, issue item 2: on FIFO, 6 groups with a backlog and MaxConcurrency 10 give at most 6
// concurrent handler calls, measured inside the handler, and never two concurrent calls holding one group.
// Each group's messages are handled once each, in send order.
func TestConsumerScenario63FIFOConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const groups, perGroup = 6, 20
		q := bcNewQueue(t, "bc-s63.fifo", fifoq.WithVisibilityTimeout(time.Minute))
		for m := 1; m <= perGroup; m++ { // interleaved sends
			for g := 1; g <= groups; g++ {
				bcSend(t, q, fmt.Sprintf("g%d", g), fmt.Sprintf("g%d-%02d", g, m))
			}
		}
		var (
			mu        sync.Mutex
			active    int
			maxActive int
			holding   = make(map[string]bool)
			overlaps  []string
			handled   = make(map[string][]string)
			total     int
		)
		h := func(_ context.Context, batch []fifoq.Delivery) error {
			mu.Lock()
			active++
			maxActive = max(maxActive, active)
			gs := make(map[string]bool)
			for _, d := range batch {
				gs[d.GroupID] = true
				handled[d.GroupID] = append(handled[d.GroupID], d.Body)
			}
			for g := range gs {
				if holding[g] {
					overlaps = append(overlaps, g)
				}
				holding[g] = true
			}
			mu.Unlock()
			time.Sleep(time.Second)
			mu.Lock()
			for g := range gs {
				holding[g] = false
			}
			active--
			total += len(batch)
			mu.Unlock()
			return nil
		}
		o := fifoq.ConsumerOptions{MaxConcurrency: 10, Batch: fifoq.BatchOptions{Size: 10}}
		bcConsume(t, q, h, o, time.Hour, func(rs []fifoq.BatchReport) bool {
			n := 0
			for _, r := range rs {
				n += r.Size
			}
			return n == groups*perGroup
		})
		require.Empty(t, overlaps, "two concurrent handler calls held these groups")
		require.Equal(t, groups, maxActive, "concurrency must be min(groups with messages, MaxConcurrency)")
		require.Equal(t, groups*perGroup, total)
		for g := 1; g <= groups; g++ {
			id := fmt.Sprintf("g%d", g)
			want := make([]string, perGroup)
			for m := range want {
				want[m] = fmt.Sprintf("%s-%02d", id, m+1)
			}
			require.Equal(t, want, handled[id], "group %s handled once each, in order", id)
		}
		require.Equal(t, fifoq.Stats{}, q.Stats())
	})
}

// Issue item 2, spec 9.1.4: at most MaxConcurrency batches run at once (default 2), and that many do run when
// there is work; on FIFO also at most one per group with visible messages.
func TestConsumerMaxConcurrency(t *testing.T) {
	tests := []struct {
		name   string
		fifo   bool
		groups int
		maxC   int
		want   int
	}{
		{"standard default 2", false, 0, 0, 2},
		{"standard 1", false, 0, 1, 1},
		{"standard 5", false, 0, 5, 5},
		{"fifo 2 groups, max 10", true, 2, 10, 2},
		{"fifo 8 groups, max 3", true, 8, 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				name := "bc-conc"
				if tt.fifo {
					name += ".fifo"
				}
				q := bcNewQueue(t, name, fifoq.WithVisibilityTimeout(time.Minute))
				const n = 24
				for i := range n {
					g := ""
					if tt.fifo {
						g = fmt.Sprintf("g%d", i%tt.groups)
					}
					bcSend(t, q, g, fmt.Sprintf("m%02d", i))
				}
				var mu sync.Mutex
				active, maxActive := 0, 0
				h := func(context.Context, []fifoq.Delivery) error {
					mu.Lock()
					active++
					maxActive = max(maxActive, active)
					mu.Unlock()
					time.Sleep(time.Second)
					mu.Lock()
					active--
					mu.Unlock()
					return nil
				}
				o := fifoq.ConsumerOptions{MaxConcurrency: tt.maxC, Batch: fifoq.BatchOptions{Size: 1}}
				bcConsume(t, q, h, o, time.Hour, func(rs []fifoq.BatchReport) bool { return len(rs) == n })
				require.Equal(t, tt.want, maxActive, "most concurrent handler calls")
				require.Equal(t, fifoq.Stats{}, q.Stats())
			})
		})
	}
}

// Scenario 64, spec 9.1.7, issue item 2 (Filter): messages the filter rejects are deleted without being
// handled, whatever becomes of the rest of the batch; a batch the filter rejects whole never reaches the
// handler.
func TestConsumerFilter(t *testing.T) {
	keep := func(d fifoq.Delivery) bool { return !strings.HasPrefix(d.Body, "skip") }
	tests := []struct {
		name        string
		fifo        bool
		bodies      []string
		fail        bool
		wantHandled []string // nil: the handler is not called
		wantLeft    []string
		wantOutcome fifoq.Outcome
	}{
		{"scenario 64", false, []string{"a", "skip-1", "b", "skip-2"}, false, []string{"a", "b"}, nil, fifoq.OutcomeSuccess},
		{"fifo, mid-group", true, []string{"a", "skip-1", "b"}, false, []string{"a", "b"}, nil, fifoq.OutcomeSuccess},
		{"all rejected: no handler call", true, []string{"skip-1", "skip-2"}, false, nil, nil, fifoq.OutcomeFiltered},
		{"rejected ones go even when the batch fails", true, []string{"a", "skip-1", "b"}, true, []string{"a", "b"}, []string{"a", "b"}, fifoq.OutcomeError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				name := "bc-filter"
				if tt.fifo {
					name += ".fifo"
				}
				q := bcNewQueue(t, name, fifoq.WithVisibilityTimeout(time.Minute))
				bcSend(t, q, "g1", tt.bodies...)
				var (
					mu      sync.Mutex
					handled []string
				)
				h := func(_ context.Context, batch []fifoq.Delivery) error {
					mu.Lock()
					handled = append(handled, bcBodies(batch)...)
					mu.Unlock()
					if tt.fail {
						return errors.New("fail")
					}
					return nil
				}
				o := fifoq.ConsumerOptions{MaxConcurrency: 1, Filter: keep}
				rs := bcConsume(t, q, h, o, time.Hour, bcAfter(1))
				require.Equal(t, tt.wantHandled, handled, "messages the handler saw")
				require.Equal(t, tt.wantOutcome, rs[0].Outcome)
				require.Equal(t, len(tt.bodies), rs[0].Size)
				require.Equal(t, len(tt.bodies)-len(tt.wantHandled), rs[0].Filtered)
				stored, _ := bcStored(q)
				require.Equal(t, tt.wantLeft, stored, "rejected messages must be deleted")
			})
		})
	}
}

// Issue item 2 (shutdown): when ctx is done Run stops polling, lets the handlers in flight finish with a
// context that is not cancelled, settles their batches, and returns nil once they are done.
func TestConsumerShutdownDrainsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := bcNewQueue(t, "bc-stop", fifoq.WithVisibilityTimeout(time.Minute))
		bcSend(t, q, "", "a", "b", "c", "d", "e")
		type call struct {
			body           string
			errAtStart     error
			errAtEnd       error
			cancelledAtEnd bool
		}
		var (
			mu    sync.Mutex
			calls []call
		)
		h := func(ctx context.Context, batch []fifoq.Delivery) error {
			c := call{body: batch[0].Body, errAtStart: ctx.Err()}
			time.Sleep(10 * time.Second)
			c.errAtEnd = ctx.Err()
			select {
			case <-ctx.Done():
				c.cancelledAtEnd = true
			default:
			}
			mu.Lock()
			calls = append(calls, c)
			mu.Unlock()
			return nil
		}
		c, err := fifoq.NewConsumer(q, h, fifoq.ConsumerOptions{MaxConcurrency: 2, HandlerTimeout: 30 * time.Second,
			Batch: fifoq.BatchOptions{Size: 1}})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		type result struct {
			err error
			at  time.Duration
		}
		done := make(chan result, 1)
		start := time.Now()
		go func() {
			err := c.Run(ctx)
			done <- result{err, time.Since(start)}
		}()
		time.Sleep(time.Second)
		cancel()
		synctest.Wait()
		select {
		case r := <-done:
			t.Fatalf("Run returned at %v (err %v) with two handlers in flight", r.at, r.err)
		default:
		}
		r := <-done
		require.NoError(t, r.err, "Run after ctx is done")
		require.Equal(t, 10*time.Second, r.at, "Run returns when the handlers in flight finish")
		slices.SortFunc(calls, func(a, b call) int { return strings.Compare(a.body, b.body) })
		require.Equal(t, []call{{body: "a"}, {body: "b"}}, calls,
			"two handler calls, none after ctx is done, their ctx never cancelled")
		stored, inFlight := bcStored(q)
		require.Equal(t, []string{"c", "d", "e"}, stored, "the drained batches are deleted, the rest untouched")
		require.Zero(t, inFlight, "no batch started after ctx was done")
	})
}

// Issue item 2 (shutdown): an idle Run, waiting in a long poll, returns nil as soon as ctx is done; a Run
// whose ctx is done already returns nil without handling anything.
func TestConsumerShutdownIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := bcNewQueue(t, "bc-idle.fifo")
		called := make(chan struct{}, 10)
		h := func(context.Context, []fifoq.Delivery) error {
			called <- struct{}{}
			return nil
		}
		c, err := fifoq.NewConsumer(q, h, fifoq.ConsumerOptions{})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- c.Run(ctx) }()
		time.Sleep(time.Minute)
		cancel()
		require.NoError(t, <-done)
		require.Equal(t, time.Minute, time.Since(start), "Run must return at once when ctx is done")

		// Run picks between a free slot and ctx.Done at random: try it often enough to see both.
		bcSend(t, q, "g1", "x")
		for i := range 20 {
			require.NoError(t, c.Run(ctx), "Run %d with ctx done already", i)
			synctest.Wait()
			require.Zero(t, len(called), "Run %d with ctx done already polled and called the handler", i)
		}
		require.Equal(t, fifoq.Stats{Visible: 1}, q.Stats(), "Run with ctx done already must not receive")
	})
}

// Issue item 0: a Consumer runs over any Source; here a test double wrapping a *Queue. Deletes and the
// releases of RetryImmediately go through the Source.
func TestConsumerOverSource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := bcNewQueue(t, "bc-csrc.fifo", fifoq.WithVisibilityTimeout(time.Minute))
		src := &bcSource{q: q}
		bcSend(t, q, "g1", "a", "b")
		bcSend(t, q, "g2", "c")
		var (
			mu      sync.Mutex
			batches [][]fifoq.Delivery
		)
		h := func(_ context.Context, batch []fifoq.Delivery) error {
			mu.Lock()
			defer mu.Unlock()
			batches = append(batches, batch)
			if len(batches) == 1 {
				return errors.New("first call fails")
			}
			return nil
		}
		o := fifoq.ConsumerOptions{MaxConcurrency: 1, RetryImmediately: true}
		rs := bcConsume(t, src, h, o, time.Hour, bcAfter(2))
		require.Equal(t, fifoq.OutcomeError, rs[0].Outcome)
		require.Equal(t, fifoq.OutcomeSuccess, rs[1].Outcome)
		require.Equal(t, []string{"a", "b", "c"}, bcBodies(batches[0]))
		require.Equal(t, []string{"a", "b", "c"}, bcBodies(batches[1]))
		require.Equal(t, []string{"g1", "g2"}, rs[0].Groups)

		receives, deleted, changed := src.bcCalls()
		require.GreaterOrEqual(t, receives, 2)
		var released []string
		for _, c := range changed {
			require.Zero(t, c.Timeout, "RetryImmediately makes messages visible at once")
			released = append(released, c.ReceiptHandle)
		}
		var first, second []string
		for i := range batches[0] {
			first = append(first, batches[0][i].ReceiptHandle)
			second = append(second, batches[1][i].ReceiptHandle)
		}
		require.Equal(t, first, released, "the failed batch is released through the Source")
		require.Equal(t, second, deleted, "the good batch is deleted through the Source")
		require.Equal(t, fifoq.Stats{}, q.Stats())
	})
}

// Issue observability (OnBatch): each batch gets one report with its size, groups in batch order, filtered
// count, failed ids, outcome, error and handler duration (by the queue's clock).
func TestConsumerOnBatchReport(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := bcNewQueue(t, "bc-report.fifo", fifoq.WithVisibilityTimeout(time.Minute))
		bcSend(t, q, "g2", "b1")
		bcSend(t, q, "g1", "a1", "skip", "a2")
		bcSend(t, q, "g2", "b2")
		var failedID string
		h := func(_ context.Context, batch []fifoq.Delivery) error {
			time.Sleep(3 * time.Second)
			failedID = bcIDsOf(batch, "a2")[0]
			return &fifoq.BatchItemFailures{MessageIDs: []string{failedID}}
		}
		o := fifoq.ConsumerOptions{
			MaxConcurrency:          1,
			ReportBatchItemFailures: true,
			Filter:                  func(d fifoq.Delivery) bool { return d.Body != "skip" },
		}
		rs := bcConsume(t, q, h, o, time.Hour, bcAfter(1))
		require.Len(t, rs, 1)
		r := rs[0]
		var f *fifoq.BatchItemFailures
		require.ErrorAs(t, r.Err, &f)
		require.Equal(t, []string{failedID}, f.MessageIDs)
		r.Err = nil
		require.Equal(t, fifoq.BatchReport{
			Size:     5,
			Groups:   []string{"g2", "g1"},
			Filtered: 1,
			Failed:   []string{failedID},
			Outcome:  fifoq.OutcomePartial,
			Duration: 3 * time.Second,
		}, r)
		require.Equal(t, "partial", r.Outcome.String())
	})
}

// Issue observability (ConsumerOptions.Logger), issue 11 item 2: one record per batch, Debug on success and
// Warn on failure, with its queue, size, groups, outcome, failed and filtered counts, duration and error.
func TestConsumerLogger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := bcNewQueue(t, "bc-log.fifo", fifoq.WithVisibilityTimeout(time.Minute))
		bcSend(t, q, "g1", "a", "b")
		bcSend(t, q, "g2", "c")
		log := &bcLog{}
		var (
			mu    sync.Mutex
			calls int
		)
		h := func(context.Context, []fifoq.Delivery) error {
			time.Sleep(2 * time.Second)
			mu.Lock()
			defer mu.Unlock()
			calls++
			if calls == 1 {
				return errors.New("bc logged failure")
			}
			return nil
		}
		o := fifoq.ConsumerOptions{MaxConcurrency: 1, RetryImmediately: true, Logger: slog.New(log)}
		bcConsume(t, q, h, o, time.Hour, bcAfter(2))
		recs := log.bcRecords()
		require.Len(t, recs, 2, "one record per batch")

		require.Equal(t, slog.LevelWarn, recs[0].Level, "a failed batch logs at Warn")
		a := bcAttrs(recs[0])
		require.Equal(t, "bc-log.fifo", a["queue"].String())
		require.Equal(t, int64(3), a["batch_size"].Int64())
		require.Equal(t, int64(2), a["groups"].Int64())
		require.Equal(t, "error", a["outcome"].String())
		require.Equal(t, int64(3), a["failed"].Int64())
		require.Equal(t, int64(0), a["filtered"].Int64())
		require.Equal(t, 2*time.Second, a["duration"].Duration())
		require.Contains(t, a["error"].String(), "bc logged failure")

		require.Equal(t, slog.LevelDebug, recs[1].Level, "a good batch logs at Debug")
		a = bcAttrs(recs[1])
		require.Equal(t, "success", a["outcome"].String())
		require.Equal(t, int64(0), a["failed"].Int64())
	})
}

// Spec 9.3.4 (a null response is a complete success), issue item 2 ("no ids = success"; a handler never
// crashes the process): a handler that returns a nil *BatchItemFailures, Go's null partial response, succeeds.
// The Consumer runs in a child process, so that a crash fails this test instead of the whole test binary.
func TestConsumerNilBatchItemFailures(t *testing.T) {
	if os.Getenv("BC_NIL_ITEMS_CHILD") == "1" {
		synctest.Test(t, func(t *testing.T) {
			q := bcNewQueue(t, "bc-nilitems.fifo", fifoq.WithVisibilityTimeout(time.Minute))
			bcSend(t, q, "g1", "a", "b")
			h := func(context.Context, []fifoq.Delivery) error {
				var none *fifoq.BatchItemFailures
				return none
			}
			o := fifoq.ConsumerOptions{MaxConcurrency: 1, ReportBatchItemFailures: true}
			rs := bcConsume(t, q, h, o, time.Hour, bcAfter(1))
			require.Equal(t, fifoq.OutcomeSuccess, rs[0].Outcome)
			require.Empty(t, rs[0].Failed)
			require.Equal(t, fifoq.Stats{}, q.Stats(), "the batch is deleted")
		})
		return
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestConsumerNilBatchItemFailures$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "BC_NIL_ITEMS_CHILD=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the consumer's process failed or crashed:\n%s", out)
	require.Contains(t, string(out), "--- PASS: TestConsumerNilBatchItemFailures", "the child ran the test:\n%s", out)
}

// TestConsumerSlowHandlerKeepsItsGroup checks item 2 of the Consumer rules, "two batches of one group never
// run at the same time", for a handler that runs past the visibility timeout (no handler timeout): the
// Consumer keeps its batch invisible while it runs, so no other batch gets the group, and the deletes
// after it succeed.
func TestConsumerSlowHandlerKeepsItsGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := bcNewQueue(t, "bc-slow.fifo", fifoq.WithVisibilityTimeout(30*time.Second))
		bcSend(t, q, "g1", "a", "b")
		bcSend(t, q, "g2", "c")
		var (
			mu            sync.Mutex
			active        = map[string]int{}
			overlaps      int
			calls         int
			handledBodies []string
			handlerTime   = 95 * time.Second // more than 3 visibility timeouts
		)
		h := func(_ context.Context, batch []fifoq.Delivery) error {
			mu.Lock()
			calls++
			for _, g := range bcGroupsOf(batch) {
				if active[g]++; active[g] > 1 {
					overlaps++
				}
			}
			mu.Unlock()
			time.Sleep(handlerTime)
			mu.Lock()
			defer mu.Unlock()
			for _, g := range bcGroupsOf(batch) {
				active[g]--
			}
			handledBodies = append(handledBodies, bcBodies(batch)...)
			return nil
		}
		rs := bcConsume(t, q, h, fifoq.ConsumerOptions{MaxConcurrency: 4, Batch: fifoq.BatchOptions{Size: 1}}, time.Hour,
			func(rs []fifoq.BatchReport) bool { return len(rs) == 3 })
		require.Zero(t, overlaps, "a group was in two handler calls at once")
		require.Equal(t, 3, calls, "each message handled once: none came back while its handler ran")
		require.ElementsMatch(t, []string{"a", "b", "c"}, handledBodies)
		for _, r := range rs {
			require.Equal(t, fifoq.OutcomeSuccess, r.Outcome)
			require.NoError(t, r.DeleteErr, "the receipt stayed valid, so the delete worked")
		}
		require.Equal(t, fifoq.Stats{}, q.Stats())
	})
}

// TestConsumerHandlerTimeoutManualClock checks that the handler timeout is measured by the queue's clock:
// on a ManualClock it fires when the clock is advanced past it, not after real time.
func TestConsumerHandlerTimeoutManualClock(t *testing.T) {
	clk := fifoq.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	q := bcNewQueue(t, "bc-manual-timeout.fifo", fifoq.WithClock(clk), fifoq.WithVisibilityTimeout(time.Hour))
	bcSend(t, q, "g1", "a")
	started := make(chan time.Time, 1)
	h := func(ctx context.Context, _ []fifoq.Delivery) error {
		dl, ok := ctx.Deadline()
		if !ok {
			dl = time.Time{}
		}
		started <- dl
		<-ctx.Done()
		return ctx.Err()
	}
	reports := make(chan fifoq.BatchReport, 1)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	c, err := fifoq.NewConsumer(q, h, fifoq.ConsumerOptions{
		MaxConcurrency: 1,
		HandlerTimeout: 10 * time.Minute,
		OnBatch:        func(r fifoq.BatchReport) { reports <- r; cancel() },
	})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	deadline := <-started
	require.Equal(t, clk.Now().Add(10*time.Minute), deadline, "the handler's deadline is by the queue's clock")
	clk.Advance(10*time.Minute - time.Nanosecond)
	select {
	case r := <-reports:
		require.FailNow(t, "the handler timed out before the clock reached its timeout", "%+v", r)
	default:
	}
	clk.Advance(time.Nanosecond)
	r := <-reports
	require.Equal(t, fifoq.OutcomeTimeout, r.Outcome)
	require.ErrorIs(t, r.Err, fifoq.ErrHandlerTimeout)
	require.Equal(t, 10*time.Minute, r.Duration)
	require.NoError(t, <-done)
}

// TestConsumerFilterPanic checks that a Filter that panics fails the batch, as a handler panic does,
// instead of crashing the process; the messages come back and the next batch is handled.
func TestConsumerFilterPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := bcNewQueue(t, "bc-filter-panic.fifo", fifoq.WithVisibilityTimeout(time.Minute))
		bcSend(t, q, "g1", "a")
		var calls int
		filter := func(fifoq.Delivery) bool {
			if calls++; calls == 1 {
				panic("filter bug")
			}
			return true
		}
		rs := bcConsume(t, q, bcNop, fifoq.ConsumerOptions{MaxConcurrency: 1, RetryImmediately: true, Filter: filter}, time.Hour, bcAfter(2))
		require.Equal(t, fifoq.OutcomePanic, rs[0].Outcome)
		var pe *fifoq.PanicError
		require.ErrorAs(t, rs[0].Err, &pe)
		require.Equal(t, "filter bug", pe.Value)
		require.Equal(t, fifoq.OutcomeSuccess, rs[1].Outcome)
		require.Equal(t, fifoq.Stats{}, q.Stats())
	})
}

// TestConsumerHandlerReordersItsBatch checks that a handler that sorts the batch it was given does not change
// which messages a FIFO partial failure returns: the Consumer judges "later in the group" by its own copy.
func TestConsumerHandlerReordersItsBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := bcNewQueue(t, "bc-reorder.fifo", fifoq.WithVisibilityTimeout(time.Minute))
		bcSend(t, q, "g1", "a", "b", "c")
		h := func(_ context.Context, batch []fifoq.Delivery) error {
			var failed string
			for _, d := range batch {
				if d.Body == "b" {
					failed = d.MessageID
				}
			}
			slices.Reverse(batch) // the handler's own business
			return &fifoq.BatchItemFailures{MessageIDs: []string{failed}}
		}
		rs := bcConsume(t, q, h, fifoq.ConsumerOptions{MaxConcurrency: 1, ReportBatchItemFailures: true}, time.Hour, bcAfter(1))
		require.Equal(t, fifoq.OutcomePartial, rs[0].Outcome)
		require.Len(t, rs[0].Failed, 2, "b and c, the message after it in its group, fail")
		bodies, inFlight := bcStored(q)
		require.Equal(t, []string{"b", "c"}, bodies, "a was deleted; b and c stay, in order")
		require.Equal(t, 2, inFlight)
	})
}

// bcGroupsOf returns the distinct groups of a batch.
func bcGroupsOf(batch []fifoq.Delivery) []string {
	var gs []string
	for _, d := range batch {
		if !slices.Contains(gs, d.GroupID) {
			gs = append(gs, d.GroupID)
		}
	}
	return gs
}

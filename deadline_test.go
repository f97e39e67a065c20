package fifoq_test

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// Tests of the calls a Consumer makes to its source: each has a context with a deadline, a call that hangs
// until its context ends holds up no other batch, and no call is made while other batches wait for it.

// dlSource is a Source over a *Queue, not one itself, that records each call and holds the calls that hold
// picks (by the bodies of the messages they are about): after forwarding them, as a network call whose answer
// is slow to come back (a held receive is not forwarded), until their context ends or, with ignoreCtx, until
// release is closed. Closing release ends every hold, so that a test of a Consumer that would wait for such a
// call forever can still end.
type dlSource struct {
	q         *fifoq.Queue
	hold      func(op string, bodies []string, timeout time.Duration) bool
	ignoreCtx bool
	release   chan struct{}
	start     time.Time

	mu     sync.Mutex // guards the fields below
	calls  []dlCall
	bodies map[string]string // receipt handle -> body
}

// dlCall is a call a dlSource saw.
type dlCall struct {
	op          string   // receive, delete, change
	bodies      []string // of the messages it is about
	hasDeadline bool
	held        bool
	at, ended   time.Duration // since start
	err         error         // the context's error when a held call ended
}

func newDLSource(q *fifoq.Queue, hold func(op string, bodies []string, timeout time.Duration) bool) *dlSource {
	return &dlSource{q: q, hold: hold, release: make(chan struct{}), start: time.Now(), bodies: map[string]string{}}
}

func (s *dlSource) FIFO() bool { return s.q.FIFO() }

// do makes a call: it forwards it (unless it is a held receive), then holds it if hold says so.
func (s *dlSource) do(ctx context.Context, op string, handles []string, timeout time.Duration, forward func() error) error {
	_, hasDeadline := ctx.Deadline()
	c := dlCall{op: op, hasDeadline: hasDeadline, at: time.Since(s.start)}
	s.mu.Lock()
	for _, h := range handles {
		c.bodies = append(c.bodies, s.bodies[h])
	}
	s.mu.Unlock()
	c.held = s.hold != nil && s.hold(op, c.bodies, timeout)
	var err error
	if !c.held || op != "receive" {
		err = forward()
	}
	if c.held {
		done := ctx.Done()
		if s.ignoreCtx {
			done = nil
		}
		select {
		case <-done:
			c.err = ctx.Err()
			err = cmp.Or(err, c.err)
		case <-s.release:
		}
	}
	c.ended = time.Since(s.start)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
	return err
}

func (s *dlSource) Receive(ctx context.Context, o fifoq.ReceiveOptions) (ds []fifoq.Delivery, err error) {
	err = s.do(ctx, "receive", nil, 0, func() error {
		ds, err = s.q.Receive(ctx, o)
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, d := range ds {
			s.bodies[d.ReceiptHandle] = d.Body
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return ds, nil
}

func (s *dlSource) DeleteBatch(ctx context.Context, handles []string) error {
	return s.do(ctx, "delete", handles, 0, func() error { return s.q.DeleteBatch(ctx, handles) })
}

func (s *dlSource) ChangeVisibilityBatch(ctx context.Context, entries []fifoq.VisibilityChange) error {
	handles := make([]string, len(entries))
	for i, e := range entries {
		handles[i] = e.ReceiptHandle
	}
	timeout := time.Duration(0)
	if len(entries) > 0 {
		timeout = entries[0].Timeout
	}
	return s.do(ctx, "change", handles, timeout, func() error { return s.q.ChangeVisibilityBatch(ctx, entries) })
}

// seen returns the calls so far.
func (s *dlSource) seen() []dlCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// noDeadline returns the calls whose context had no deadline.
func (s *dlSource) noDeadline() []dlCall {
	var no []dlCall
	for _, c := range s.seen() {
		if !c.hasDeadline {
			no = append(no, c)
		}
	}
	return no
}

// dlRun runs a Consumer of src in a goroutine, each message's handler sleeping the time given for its body.
// It returns the reports so far, a function that tells whether Run returned (and with what), and cancel.
func dlRun(t *testing.T, src fifoq.Source, sleep map[string]time.Duration, o fifoq.ConsumerOptions) (
	reports func() []fifoq.BatchReport, returned func() (error, bool), cancel context.CancelFunc) {
	t.Helper()
	var (
		mu sync.Mutex
		rs []fifoq.BatchReport
	)
	o.OnBatch = func(r fifoq.BatchReport) {
		mu.Lock()
		defer mu.Unlock()
		rs = append(rs, r)
	}
	h := func(_ context.Context, batch []fifoq.Delivery) error {
		for _, d := range batch {
			time.Sleep(sleep[d.Body])
		}
		return nil
	}
	c, err := fifoq.NewConsumer(src, h, o)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	var (
		ended  bool
		result error
	)
	returned = func() (error, bool) {
		synctest.Wait()
		if !ended {
			select {
			case result = <-done:
				ended = true
			default:
			}
		}
		return result, ended
	}
	reports = func() []fifoq.BatchReport {
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(rs)
	}
	return reports, returned, cancel
}

// dlGroups returns the first group of each report, in order.
func dlGroups(rs []fifoq.BatchReport) []string {
	var gs []string
	for _, r := range rs {
		gs = append(gs, r.Groups...)
	}
	return gs
}

// A heartbeat call that hangs until its context ends holds up no other batch: while the extension of a slow
// batch hangs, a fast batch ends, is deleted, and the hung call ends at its deadline, a quarter of the
// visibility timeout after it started. Before, the heartbeat made its calls with context.Background()
// holding the lock that a batch that ends waits on, so the fast batch was never settled.
func TestConsumerHungHeartbeatCallHoldsUpNoBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := bcNewQueue(t, "dl-hung.fifo", fifoq.WithVisibilityTimeout(30*time.Second))
		bcSend(t, q, "slow", "s")
		bcSend(t, q, "fast", "f")
		src := newDLSource(q, func(op string, _ []string, timeout time.Duration) bool {
			return op == "change" && timeout > 0 // the heartbeat's extensions
		})
		reports, returned, cancel := dlRun(t, src,
			map[string]time.Duration{"s": 100 * time.Second, "f": 20 * time.Second},
			fifoq.ConsumerOptions{MaxConcurrency: 2, Batch: fifoq.BatchOptions{Size: 1, VisibilityTimeout: 30 * time.Second}})

		time.Sleep(20 * time.Second) // the first beat, at 15 s, hangs; the fast handler ends
		atFast := reports()
		statsAtFast := q.Stats()
		time.Sleep(5 * time.Second)
		callsAt25 := src.seen()
		close(src.release) // lets a heartbeat that waits for the hung call forever go on
		time.Sleep(80 * time.Second)
		cancel()
		err, ok := returned()
		all := reports()

		require.Equal(t, []string{"fast"}, dlGroups(atFast), "the fast batch was settled at 20 s, while the heartbeat call hung")
		require.Equal(t, fifoq.Stats{InFlight: 1}, statsAtFast, "the fast batch was deleted at 20 s")
		var hung []dlCall
		for _, c := range callsAt25 {
			if c.held {
				hung = append(hung, c)
			}
		}
		require.Len(t, hung, 2, "the first beat extended both batches, and each call hung until its context ended: %+v", callsAt25)
		for _, c := range hung {
			require.Equal(t, 15*time.Second, c.at, "the beat came at half the visibility timeout")
			if c.ended == 20*time.Second {
				require.ErrorIs(t, c.err, context.Canceled, "the fast batch ended its own extension when it left")
			} else {
				require.Equal(t, 15*time.Second+30*time.Second/4, c.ended, "a heartbeat call may take a quarter of the visibility timeout")
				require.ErrorIs(t, c.err, context.DeadlineExceeded)
			}
		}
		require.True(t, ok, "Run returned")
		require.NoError(t, err)
		require.Equal(t, []string{"fast", "slow"}, dlGroups(all), "each batch was handled once: the slow one stayed invisible")
		for _, r := range all {
			require.NoError(t, r.DeleteErr)
		}
		require.Equal(t, fifoq.Stats{}, q.Stats())
		require.Empty(t, src.noDeadline(), "every call to the source had a deadline")
	})
}

// A batch that ends is not held up by a slow heartbeat call of another batch, even one that ignores its
// context: the heartbeat makes its calls after releasing its lock, each batch in a goroutine of its own.
// Before, leave waited for the heartbeat's lock, which the slow call held.
func TestConsumerLeaveNotBlockedBySlowHeartbeatCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := bcNewQueue(t, "dl-leave.fifo", fifoq.WithVisibilityTimeout(30*time.Second))
		bcSend(t, q, "slow", "s")
		bcSend(t, q, "fast", "f")
		src := newDLSource(q, func(op string, bodies []string, timeout time.Duration) bool {
			return op == "change" && timeout > 0 && slices.Contains(bodies, "s") // the slow batch's extensions
		})
		src.ignoreCtx = true
		reports, returned, cancel := dlRun(t, src,
			map[string]time.Duration{"s": 100 * time.Second, "f": 20 * time.Second},
			fifoq.ConsumerOptions{MaxConcurrency: 2, Batch: fifoq.BatchOptions{Size: 1, VisibilityTimeout: 30 * time.Second}})

		time.Sleep(20 * time.Second) // the beat at 15 s is stuck in the slow batch's call; the fast batch ends
		atFast := reports()
		time.Sleep(5 * time.Second)
		close(src.release)
		time.Sleep(80 * time.Second)
		cancel()
		err, ok := returned()

		require.Equal(t, []string{"fast"}, dlGroups(atFast), "the fast batch was settled at 20 s, while another batch's heartbeat call was stuck")
		require.True(t, ok, "Run returned")
		require.NoError(t, err)
		require.Equal(t, fifoq.Stats{}, q.Stats())
	})
}

// A receive that hangs until its context ends ends at its deadline, the longest long-poll wait and the
// source timeout after it started, and the Consumer polls again. Before, it had Run's context alone and
// hung until Run ended.
func TestConsumerHungReceivePollsAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := bcNewQueue(t, "dl-receive")
		bcSend(t, q, "", "a")
		var (
			mu    sync.Mutex
			first = true
		)
		src := newDLSource(q, func(op string, _ []string, _ time.Duration) bool {
			mu.Lock()
			defer mu.Unlock()
			if op == "receive" && first {
				first = false
				return true
			}
			return false
		})
		reports, returned, cancel := dlRun(t, src, nil, fifoq.ConsumerOptions{MaxConcurrency: 1})
		time.Sleep(2 * time.Minute)
		handled := reports()
		cancel()
		err, ok := returned()

		require.Len(t, handled, 1, "the message was handled once the hung receive ended")
		calls := src.seen()
		require.True(t, calls[0].held)
		require.ErrorIs(t, calls[0].err, context.DeadlineExceeded)
		require.GreaterOrEqual(t, calls[0].ended, 50*time.Second, "a receive may take 20 s and the source timeout, 30 s")
		require.LessOrEqual(t, calls[0].ended, 50*time.Second+50*time.Second/16, "at most a sixteenth more")
		require.True(t, ok)
		require.NoError(t, err)
		require.Empty(t, src.noDeadline(), "every call to the source had a deadline")
	})
}

// A delete after Run's context is done is not cancelled with it, but it is bounded: one that hangs ends after
// the source timeout, fails the batch's delete, and Run returns. Before, it had context.Background() and Run
// never returned.
func TestConsumerHungDeleteAfterCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := bcNewQueue(t, "dl-delete")
		bcSend(t, q, "", "a")
		src := newDLSource(q, func(op string, _ []string, _ time.Duration) bool { return op == "delete" })
		reports, returned, cancel := dlRun(t, src, map[string]time.Duration{"a": 10 * time.Second}, fifoq.ConsumerOptions{})
		time.Sleep(5 * time.Second)
		cancel() // while the batch is in flight: Run waits for it
		_, ok := returned()
		require.False(t, ok, "Run returned before its batch ended")
		time.Sleep(5*time.Second + 30*time.Second + 30*time.Second/16 + time.Millisecond) // the handler ends; the delete hangs
		_, returnedInTime := returned()
		close(src.release)
		err, ok := returned()
		rs := reports()

		require.True(t, returnedInTime, "Run returned once the hung delete reached its deadline")
		require.True(t, ok)
		require.NoError(t, err)
		require.Len(t, rs, 1)
		require.ErrorIs(t, rs[0].DeleteErr, context.DeadlineExceeded, "the delete failed with its context's error")
		calls := src.seen()
		del := calls[len(calls)-1]
		require.Equal(t, "delete", del.op)
		require.Equal(t, 10*time.Second, del.at, "deleted after Run's context was done")
		require.GreaterOrEqual(t, del.ended-del.at, 30*time.Second)
		require.LessOrEqual(t, del.ended-del.at, 30*time.Second+30*time.Second/16)
		require.Empty(t, src.noDeadline(), "every call to the source had a deadline")
	})
}

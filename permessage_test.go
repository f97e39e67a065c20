package fifoq_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/stretchr/testify/require"
)

// pmBatch builds a batch of deliveries from "group/body" specs; fifo gives them sequence numbers. A spec
// without a slash has no group. The message id is the body.
func pmBatch(fifo bool, specs ...string) []fifoq.Delivery {
	var batch []fifoq.Delivery
	for i, s := range specs {
		group, body, ok := strings.Cut(s, "/")
		if !ok {
			group, body = "", s
		}
		d := fifoq.Delivery{Message: fifoq.Message{Body: body, GroupID: group}, MessageID: body, ReceiptHandle: "rh-" + body}
		if fifo {
			d.SequenceNumber = fmt.Sprintf("%020d", i+1)
		}
		batch = append(batch, d)
	}
	return batch
}

// pmOutcome is what a PerMessage handler did with a batch: the bodies it was called with, in order, and
// the failed message ids with the text of their errors.
type pmOutcome struct {
	called []string
	failed []string // "id: error"
}

// pmRun runs PerMessage(h) over batch, h failing the bodies in fail and panicking on those in panics.
func pmRun(t *testing.T, ctx context.Context, batch []fifoq.Delivery, fail, panics []string, onCall func(string)) (pmOutcome, error) {
	t.Helper()
	var out pmOutcome
	h := fifoq.PerMessage(func(_ context.Context, d fifoq.Delivery) error {
		out.called = append(out.called, d.Body)
		if onCall != nil {
			onCall(d.Body)
		}
		if contains(panics, d.Body) {
			panic("poison " + d.Body)
		}
		if contains(fail, d.Body) {
			return errors.New("bad " + d.Body)
		}
		return nil
	})
	err := h(ctx, batch)
	if err == nil {
		return out, nil
	}
	var me *fifoq.MessageErrors
	require.ErrorAs(t, err, &me, "PerMessage's error")
	for _, m := range me.Errors {
		out.failed = append(out.failed, m.MessageID+": "+m.Err.Error())
	}
	return out, err
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// PerMessage: per-group stop on FIFO, lone failures on standard queues, panics as failures, and the
// *BatchItemFailures it carries names the failed messages in batch order.
func TestPerMessage(t *testing.T) {
	t.Parallel()
	const skipped = "fifoq: not handled: an earlier message of its group failed"
	tests := []struct {
		name       string
		fifo       bool
		batch      []string
		fail       []string
		wantCalled []string
		wantFailed []string
	}{
		{
			name: "fifo all succeed", fifo: true,
			batch:      []string{"a/1", "a/2", "b/3"},
			wantCalled: []string{"1", "2", "3"},
		},
		{
			name: "fifo failure in the middle of a group", fifo: true,
			batch: []string{"a/1", "a/2", "a/3", "a/4"}, fail: []string{"2"},
			wantCalled: []string{"1", "2"},
			wantFailed: []string{"2: bad 2", "3: " + skipped, "4: " + skipped},
		},
		{
			name: "fifo first message fails", fifo: true,
			batch: []string{"a/1", "a/2", "a/3"}, fail: []string{"1"},
			wantCalled: []string{"1"},
			wantFailed: []string{"1: bad 1", "2: " + skipped, "3: " + skipped},
		},
		{
			name: "fifo last message fails", fifo: true,
			batch: []string{"a/1", "a/2", "a/3"}, fail: []string{"3"},
			wantCalled: []string{"1", "2", "3"},
			wantFailed: []string{"3: bad 3"},
		},
		{
			name: "fifo two groups: the other group goes on", fifo: true,
			batch: []string{"a/1", "a/2", "a/3", "b/4", "b/5"}, fail: []string{"2"},
			wantCalled: []string{"1", "2", "4", "5"},
			wantFailed: []string{"2: bad 2", "3: " + skipped},
		},
		{
			name: "fifo two groups interleaved, both fail", fifo: true,
			batch: []string{"a/1", "b/2", "a/3", "b/4", "a/5", "b/6"}, fail: []string{"2", "3"},
			wantCalled: []string{"1", "2", "3"},
			wantFailed: []string{"2: bad 2", "3: bad 3", "4: " + skipped, "5: " + skipped, "6: " + skipped},
		},
		{
			name:  "standard queue: each message fails alone",
			batch: []string{"1", "2", "3", "4"}, fail: []string{"1", "3"},
			wantCalled: []string{"1", "2", "3", "4"},
			wantFailed: []string{"1: bad 1", "3: bad 3"},
		},
		{
			name:  "standard queue with group ids (fair queue): groups order nothing",
			batch: []string{"a/1", "a/2", "a/3"}, fail: []string{"1"},
			wantCalled: []string{"1", "2", "3"},
			wantFailed: []string{"1: bad 1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			batch := pmBatch(tt.fifo, tt.batch...)
			out, err := pmRun(t, t.Context(), batch, tt.fail, nil, nil)
			require.Equal(t, tt.wantCalled, out.called, "handled, in order; batch %v failing %v", tt.batch, tt.fail)
			require.Equal(t, tt.wantFailed, out.failed, "failed messages; batch %v failing %v", tt.batch, tt.fail)
			if tt.wantFailed == nil {
				require.NoError(t, err)
				return
			}
			var items *fifoq.BatchItemFailures
			require.ErrorAs(t, err, &items)
			var ids []string
			for _, f := range tt.wantFailed {
				id, _, _ := strings.Cut(f, ":")
				ids = append(ids, id)
			}
			require.Equal(t, ids, items.MessageIDs, "the *BatchItemFailures PerMessage's error holds")
			require.False(t, errors.As(err, new(*fifoq.PanicError)), "a message error does not unwrap")
		})
	}
}

// A panic in h fails its message with a *PanicError that keeps the stack, and the batch goes on.
func TestPerMessagePanic(t *testing.T) {
	t.Parallel()
	batch := pmBatch(true, "a/1", "a/2", "b/3")
	out, err := pmRun(t, t.Context(), batch, nil, []string{"1"}, nil)
	require.Equal(t, []string{"1", "3"}, out.called)
	require.Equal(t, []string{"1: fifoq: handler panicked: poison 1", "2: " + fifoq.ErrEarlierMessageFailed.Error()}, out.failed)
	var me *fifoq.MessageErrors
	require.ErrorAs(t, err, &me)
	var pe *fifoq.PanicError
	require.ErrorAs(t, me.Errors[0].Err, &pe)
	require.Equal(t, "poison 1", pe.Value)
	require.Contains(t, string(pe.Stack), "permessage_test.go", "the stack of the panic, down to the handler")
	require.ErrorIs(t, me.Errors[1].Err, fifoq.ErrEarlierMessageFailed)
	require.Equal(t, "a", me.Errors[1].GroupID)
}

// Once the context is done, h is not called again, and the rest fail with the context's cause.
func TestPerMessageContextCancel(t *testing.T) {
	t.Parallel()
	for _, fifo := range []bool{true, false} {
		t.Run(fmt.Sprint("fifo=", fifo), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancelCause(t.Context())
			defer cancel(nil)
			stop := errors.New("shutting down")
			batch := pmBatch(fifo, "a/1", "a/2", "b/3", "b/4")
			out, err := pmRun(t, ctx, batch, nil, nil, func(body string) {
				if body == "2" {
					cancel(stop)
				}
			})
			require.Equal(t, []string{"1", "2"}, out.called, "no call after the context is done")
			require.Equal(t, []string{"3: fifoq: not handled: shutting down", "4: fifoq: not handled: shutting down"}, out.failed,
				"message 2 succeeded although the context ended during its call")
			var me *fifoq.MessageErrors
			require.ErrorAs(t, err, &me)
			require.ErrorIs(t, me.Errors[0].Err, stop)
		})
	}
}

func TestPerMessageNilHandler(t *testing.T) {
	t.Parallel()
	require.PanicsWithValue(t, "fifoq: PerMessage with a nil handler", func() { fifoq.PerMessage(nil) })
}

// The poison-message trap, end to end on a Consumer: group g sends a, b (poison), c, d and group other x,
// all in one batch; the queue's maxReceiveCount is 3. Neither consumer sets ReportBatchItemFailures:
// PerMessage's partial failure is honoured anyway.
//
//   - A plain handler that handles every message and returns their errors fails the whole batch: every
//     message is handled on each of the three receives, and all of them go to the dead-letter queue.
//   - PerMessage: a and x are handled once and deleted; b is handled on each receive, and c and d, behind
//     it in their group, never (they come back with b, unhandled). Every receive counts for c and d too, so
//     they reach the dead-letter queue with b, as on SQS.
//   - PerMessage whose handler parks b on its third receive (the recipe of PerMessage's documentation):
//     b is handled three times, then parked alone, and c and d are handled after it once each, in order.
func TestConsumerPerMessagePoison(t *testing.T) {
	const maxReceives = 3
	type result struct {
		handled []string // group g, in order
		counts  map[string]int
		dead    []string
		parked  []string
	}
	run := func(t *testing.T, perMessage, park bool) result {
		const vt = 10 * time.Second
		dlq := bcNewQueue(t, "pm-dlq.fifo")
		q := bcNewQueue(t, "pm-src.fifo", fifoq.WithVisibilityTimeout(vt), fifoq.WithDeadLetterQueue(dlq, maxReceives))
		bcSend(t, q, "g", "a", "b", "c", "d")
		bcSend(t, q, "other", "x")
		var (
			mu sync.Mutex
			r  = result{counts: make(map[string]int)}
		)
		one := func(_ context.Context, d fifoq.Delivery) error {
			mu.Lock()
			defer mu.Unlock()
			if d.GroupID == "g" {
				r.handled = append(r.handled, d.Body)
			}
			r.counts[d.Body]++
			if d.Body != "b" {
				return nil
			}
			if park && d.ReceiveCount >= maxReceives {
				r.parked = append(r.parked, d.Body)
				return nil
			}
			return errors.New("poison")
		}
		h := func(ctx context.Context, batch []fifoq.Delivery) error { // handles all, reports any failure
			var errs []error
			for _, d := range batch {
				errs = append(errs, one(ctx, d))
			}
			return errors.Join(errs...)
		}
		if perMessage {
			h = fifoq.PerMessage(one)
		}
		bcConsume(t, q, h, fifoq.ConsumerOptions{MaxConcurrency: 1}, 5*time.Minute, nil)
		require.Equal(t, fifoq.Stats{}, q.Stats(), "the source queue is empty")
		r.dead = bcBodies(bcDrain(t, dlq))
		return r
	}
	t.Run("plain handler", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := run(t, false, false)
			require.Equal(t, []string{"a", "b", "c", "d", "x"}, r.dead, "the whole batch goes to the dead-letter queue with b")
			require.Equal(t, map[string]int{"a": maxReceives, "b": maxReceives, "c": maxReceives, "d": maxReceives, "x": maxReceives},
				r.counts, "every message of the batch is handled on every receive; group g: %v", r.handled)
		})
	})
	t.Run("PerMessage", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := run(t, true, false)
			require.Equal(t, map[string]int{"a": 1, "b": maxReceives, "x": 1}, r.counts, "group g: %v", r.handled)
			require.Equal(t, []string{"a", "b", "b", "b"}, r.handled)
			require.Equal(t, []string{"b", "c", "d"}, r.dead, "c and d, received with b each time, follow it")
		})
	})
	t.Run("PerMessage parking the poison message", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := run(t, true, true)
			require.Equal(t, []string{"b"}, r.parked, "b is parked alone")
			require.Empty(t, r.dead)
			require.Equal(t, map[string]int{"a": 1, "b": maxReceives, "c": 1, "d": 1, "x": 1}, r.counts, "group g: %v", r.handled)
			require.Equal(t, []string{"a", "b", "b", "b", "c", "d"}, r.handled, "c and d once each, after b, in order")
		})
	})
}

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

// Tests of the Batcher (issue item 1, spec 9.1.1-9.1.3, 9.4.4) and the Source interface (issue item 0).
// batch_test.go and consumer_test.go share the helpers below; every unexported top-level name starts with "bc".
// Everything that involves time runs inside a testing/synctest bubble, where the queue's real clock is virtual.

// bcNewQueue returns a queue named name: FIFO queues get content-based deduplication, so bodies must differ.
func bcNewQueue(t *testing.T, name string, opts ...fifoq.Option) *fifoq.Queue {
	t.Helper()
	if strings.HasSuffix(name, ".fifo") {
		opts = append([]fifoq.Option{fifoq.WithContentBasedDeduplication()}, opts...)
	}
	q, err := fifoq.New(name, opts...)
	require.NoError(t, err, "New(%q)", name)
	return q
}

// bcSend sends bodies to q in order, in group (FIFO) or without one (standard when group is ""), and returns
// their message ids.
func bcSend(t *testing.T, q *fifoq.Queue, group string, bodies ...string) []string {
	t.Helper()
	ids := make([]string, len(bodies))
	for i, b := range bodies {
		r, err := q.Send(context.Background(), fifoq.Message{Body: b, GroupID: group})
		require.NoError(t, err, "Send(%q, group %q)", b, group)
		require.False(t, r.Duplicate, "Send(%q) was suppressed as a duplicate", b)
		ids[i] = r.MessageID
	}
	return ids
}

// bcBodies returns the bodies of ds in order.
func bcBodies(ds []fifoq.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Body
	}
	return out
}

// bcNumbered returns prefix-1 .. prefix-n.
func bcNumbered(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i+1)
	}
	return out
}

// bcStored returns the bodies of the messages still in q, oldest first, and how many of them are in flight.
func bcStored(q *fifoq.Queue) (bodies []string, inFlight int) {
	for s := range q.Messages() {
		bodies = append(bodies, s.Body)
		if s.State == fifoq.StateInFlight {
			inFlight++
		}
	}
	return bodies, inFlight
}

// bcDrain receives every visible message of q (visibility timeout 1h) and returns them in receive order.
func bcDrain(t *testing.T, q *fifoq.Queue) []fifoq.Delivery {
	t.Helper()
	var all []fifoq.Delivery
	for {
		ds, err := q.Receive(context.Background(), fifoq.ReceiveOptions{MaxMessages: 10, WaitTime: time.Nanosecond, VisibilityTimeout: time.Hour})
		require.NoError(t, err)
		if len(ds) == 0 {
			return all
		}
		all = append(all, ds...)
	}
}

// bcSource is a Source that is not a *Queue: it wraps one and records the calls it forwards, to prove that
// NewBatcher and NewConsumer work through the interface alone (issue item 0).
type bcSource struct {
	q *fifoq.Queue

	mu       sync.Mutex // guards the fields below
	receives int
	deleted  []string // receipt handles passed to DeleteBatch
	changed  []fifoq.VisibilityChange
}

var _ fifoq.Source = (*bcSource)(nil)

func (s *bcSource) FIFO() bool { return s.q.FIFO() }

func (s *bcSource) Receive(ctx context.Context, o fifoq.ReceiveOptions) ([]fifoq.Delivery, error) {
	s.mu.Lock()
	s.receives++
	s.mu.Unlock()
	return s.q.Receive(ctx, o)
}

func (s *bcSource) DeleteBatch(ctx context.Context, handles []string) error {
	s.mu.Lock()
	s.deleted = append(s.deleted, handles...)
	s.mu.Unlock()
	return s.q.DeleteBatch(ctx, handles)
}

func (s *bcSource) ChangeVisibilityBatch(ctx context.Context, entries []fifoq.VisibilityChange) error {
	s.mu.Lock()
	s.changed = append(s.changed, entries...)
	s.mu.Unlock()
	return s.q.ChangeVisibilityBatch(ctx, entries)
}

// bcCalls returns what the source has seen so far.
func (s *bcSource) bcCalls() (receives int, deleted []string, changed []fifoq.VisibilityChange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.receives, append([]string(nil), s.deleted...), append([]fifoq.VisibilityChange(nil), s.changed...)
}

// bcNextResult is what a Next called in another goroutine returned.
type bcNextResult struct {
	batch []fifoq.Delivery
	err   error
	at    time.Duration // since the call, on the bubble's clock
}

// bcNextAsync calls b.Next in a new goroutine and sends the result on the returned channel.
func bcNextAsync(ctx context.Context, b *fifoq.Batcher) <-chan bcNextResult {
	ch := make(chan bcNextResult, 1)
	start := time.Now()
	go func() {
		batch, err := b.Next(ctx)
		ch <- bcNextResult{batch, err, time.Since(start)}
	}()
	return ch
}

// bcPending reports whether ch has no result yet, after everything in the bubble has run. A result found
// there is consumed: the caller fails the test on it.
func bcPending(ch <-chan bcNextResult) bool {
	synctest.Wait()
	select {
	case <-ch:
		return false
	default:
		return true
	}
}

// Spec 9.1.1, 9.1.2, scenario 58; issue item 1 (ranges and Strict): NewBatcher rejects options out of range
// with ErrInvalidBatchOptions, and with Strict what Lambda rejects.
func TestNewBatcherOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		fifo    bool
		o       fifoq.BatchOptions
		wantErr bool
	}{
		{"zero options (defaults)", false, fifoq.BatchOptions{}, false},
		{"size -1", false, fifoq.BatchOptions{Size: -1}, true},
		{"size 1", false, fifoq.BatchOptions{Size: 1}, false},
		{"size 10000", false, fifoq.BatchOptions{Size: 10_000}, false},
		{"size 10001", false, fifoq.BatchOptions{Size: 10_001}, true},
		{"window -1ns", false, fifoq.BatchOptions{Window: -1}, true},
		{"window 5m", false, fifoq.BatchOptions{Window: 5 * time.Minute}, false},
		{"window 5m+1ns", false, fifoq.BatchOptions{Window: 5*time.Minute + 1}, true},
		{"max bytes -1", false, fifoq.BatchOptions{MaxBytes: -1}, true},
		{"visibility timeout -1ns", false, fifoq.BatchOptions{VisibilityTimeout: -1}, true},
		{"visibility timeout 12h", false, fifoq.BatchOptions{VisibilityTimeout: 12 * time.Hour}, false},
		{"visibility timeout 12h+1ns", false, fifoq.BatchOptions{VisibilityTimeout: 12*time.Hour + 1}, true},
		{"fifo size 10001", true, fifoq.BatchOptions{Size: 10_001}, true},
		// Not strict: fifoq goes past Lambda.
		{"fifo size 11 not strict", true, fifoq.BatchOptions{Size: 11}, false},
		{"fifo window not strict", true, fifoq.BatchOptions{Window: 5 * time.Second}, false},
		{"standard size 100 window 0 not strict", false, fifoq.BatchOptions{Size: 100}, false},
		// Strict: what Lambda rejects (scenario 58).
		{"strict fifo size 10", true, fifoq.BatchOptions{Size: 10, Strict: true}, false},
		{"strict fifo size 11", true, fifoq.BatchOptions{Size: 11, Strict: true}, true},
		{"strict fifo window 5s", true, fifoq.BatchOptions{Window: 5 * time.Second, Strict: true}, true},
		{"strict fifo window 1ns", true, fifoq.BatchOptions{Window: 1, Strict: true}, true},
		{"strict standard size 10 window 0", false, fifoq.BatchOptions{Size: 10, Strict: true}, false},
		{"strict standard size 100 window 0", false, fifoq.BatchOptions{Size: 100, Strict: true}, true},
		{"strict standard size 11 window 999ms", false, fifoq.BatchOptions{Size: 11, Window: 999 * time.Millisecond, Strict: true}, true},
		{"strict standard size 100 window 1s", false, fifoq.BatchOptions{Size: 100, Window: time.Second, Strict: true}, false},
		{"strict standard size 10000 window 5m", false, fifoq.BatchOptions{Size: 10_000, Window: 5 * time.Minute, Strict: true}, false},
		{"strict still checks ranges", false, fifoq.BatchOptions{Size: 10_001, Window: time.Second, Strict: true}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			name := "bc-opts"
			if tt.fifo {
				name += ".fifo"
			}
			q := bcNewQueue(t, name)
			b, err := fifoq.NewBatcher(q, tt.o)
			if tt.wantErr {
				require.ErrorIs(t, err, fifoq.ErrInvalidBatchOptions, "NewBatcher(fifo=%v, %+v)", tt.fifo, tt.o)
				require.Nil(t, b)
				// NewConsumer takes the same batch options and rejects the same way.
				c, err := fifoq.NewConsumer(q, func(context.Context, []fifoq.Delivery) error { return nil },
					fifoq.ConsumerOptions{Batch: tt.o})
				require.ErrorIs(t, err, fifoq.ErrInvalidBatchOptions, "NewConsumer(fifo=%v, %+v)", tt.fifo, tt.o)
				require.Nil(t, c)
				return
			}
			require.NoError(t, err, "NewBatcher(fifo=%v, %+v)", tt.fifo, tt.o)
			require.NotNil(t, b)
		})
	}
}

// Issue item 1 (Size): a batch holds at most Size messages (default 10), gathered over as many receives as
// it takes, and Next returns as soon as Size is reached, before the window ends.
func TestBatcherSize(t *testing.T) {
	tests := []struct {
		name   string
		o      fifoq.BatchOptions
		sent   int
		want   int
		wantAt time.Duration // when Next returns
	}{
		{"default size is 10", fifoq.BatchOptions{}, 15, 10, 0},
		{"size 3", fifoq.BatchOptions{Size: 3}, 5, 3, 0},
		{"size 1", fifoq.BatchOptions{Size: 1}, 2, 1, 0},
		{"size 25 over three receives", fifoq.BatchOptions{Size: 25}, 30, 25, 0},
		{"size reached before the window", fifoq.BatchOptions{Size: 25, Window: time.Minute}, 30, 25, 0},
		{"window ends before the size", fifoq.BatchOptions{Size: 25, Window: time.Minute}, 12, 12, time.Minute},
		{"size 10000 takes what there is when the window ends", fifoq.BatchOptions{Size: 10_000, Window: 2 * time.Second}, 105, 105, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := bcNewQueue(t, "bc-size", fifoq.WithVisibilityTimeout(5*time.Minute))
				bcSend(t, q, "", bcNumbered("m", tt.sent)...)
				b, err := fifoq.NewBatcher(q, tt.o)
				require.NoError(t, err)
				start := time.Now()
				batch, err := b.Next(t.Context())
				require.NoError(t, err)
				require.Equal(t, bcNumbered("m", tt.want), bcBodies(batch), "batch of %+v with %d sent", tt.o, tt.sent)
				require.Equal(t, tt.wantAt, time.Since(start), "Next returned at the wrong time")
				s := q.Stats()
				require.Equal(t, fifoq.Stats{Visible: tt.sent - tt.want, InFlight: tt.want}, s, "the batch is in flight, the rest visible")
			})
		})
	}
}

// Issue item 1 (Window): the window starts with the first message and Next returns when it ends, with
// everything that arrived meanwhile; with no message Next waits as long as it takes.
func TestBatcherWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := bcNewQueue(t, "bc-window")
		b, err := fifoq.NewBatcher(q, fifoq.BatchOptions{Window: 2 * time.Second})
		require.NoError(t, err)
		ch := bcNextAsync(t.Context(), b)

		time.Sleep(45 * time.Second) // past two 20 s long polls: still waiting for a first message
		require.True(t, bcPending(ch), "Next returned with an empty queue")
		bcSend(t, q, "", "m-1") // the window starts now: at 45 s
		time.Sleep(time.Second)
		bcSend(t, q, "", "m-2")
		time.Sleep(999 * time.Millisecond)
		require.True(t, bcPending(ch), "Next returned before the window ended")
		time.Sleep(time.Millisecond)
		r := <-ch
		require.NoError(t, r.err)
		require.Equal(t, []string{"m-1", "m-2"}, bcBodies(r.batch))
		require.Equal(t, 47*time.Second, r.at, "Next should return when the 2 s window that began at 45 s ends")
	})
}

// Issue item 1 (Window), spec 9.1.2: a batch never holds one message twice, even when the window outlasts the
// visibility timeout of the messages it gathered (Lambda extends the effective visibility timeout instead).
func TestBatcherWindowLongerThanVisibility(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := bcNewQueue(t, "bc-window-vt", fifoq.WithVisibilityTimeout(30*time.Second))
		bcSend(t, q, "", "a", "b")
		b, err := fifoq.NewBatcher(q, fifoq.BatchOptions{Size: 100, Window: time.Minute})
		require.NoError(t, err)
		batch, err := b.Next(t.Context())
		require.NoError(t, err)
		seen := make(map[string]int)
		for _, d := range batch {
			seen[d.MessageID]++
		}
		for id, n := range seen {
			require.Equal(t, 1, n, "message %s is %d times in one batch (bodies %v)", id, n, bcBodies(batch))
		}
		require.ElementsMatch(t, []string{"a", "b"}, bcBodies(batch))
	})
}

// Issue item 1 (Window 0): with no window Next returns as soon as at least one message is available, with what
// is available then.
func TestBatcherWindowZero(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := bcNewQueue(t, "bc-window0", fifoq.WithVisibilityTimeout(5*time.Minute))
		b, err := fifoq.NewBatcher(q, fifoq.BatchOptions{})
		require.NoError(t, err)

		bcSend(t, q, "", "a", "b", "c")
		start := time.Now()
		batch, err := b.Next(t.Context())
		require.NoError(t, err)
		require.Equal(t, []string{"a", "b", "c"}, bcBodies(batch))
		require.Less(t, time.Since(start), time.Millisecond, "Next waited with messages available")

		ch := bcNextAsync(t.Context(), b)
		time.Sleep(30 * time.Second)
		require.True(t, bcPending(ch), "Next returned with an empty queue")
		bcSend(t, q, "", "d")
		synctest.Wait()
		r := <-ch
		require.NoError(t, r.err)
		require.Equal(t, []string{"d"}, bcBodies(r.batch))
		require.Equal(t, 30*time.Second, r.at, "Next should return as soon as the message was sent")
	})
}

// Issue item 1 (Window 0) on a ManualClock: a batch returns as soon as a message is available, without anyone
// advancing the clock, over the *Queue itself and over a Source wrapping it. The bubble is only there so that a
// Next that waits on the clock ends by its context's deadline instead of hanging the test.
func TestBatcherWindowZeroManualClock(t *testing.T) {
	for _, viaSource := range []bool{false, true} {
		t.Run(fmt.Sprintf("viaSource=%v", viaSource), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				clk := fifoq.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
				q := bcNewQueue(t, "bc-manual.fifo", fifoq.WithClock(clk))
				bcSend(t, q, "g1", "a", "b")
				var src fifoq.Source = q
				if viaSource {
					src = &bcSource{q: q}
				}
				b, err := fifoq.NewBatcher(src, fifoq.BatchOptions{})
				require.NoError(t, err)
				ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
				defer cancel()
				batch, err := b.Next(ctx)
				require.NoError(t, err, "Next with Window 0 and 2 messages available, the manual clock never advanced")
				require.Equal(t, []string{"a", "b"}, bcBodies(batch))
			})
		})
	}
}

// Issue item 1, spec 9.1.3 (MaxBytes): a batch ends before the message that would take it past MaxBytes
// (body plus attributes); that message and the rest of its receive are visible again at once, their receive
// counted. A message larger than MaxBytes alone makes a batch of one.
func TestBatcherMaxBytes(t *testing.T) {
	body := func(c byte, n int) string { return strings.Repeat(string(c), n) }
	attr := func(n int) map[string]fifoq.Attribute {
		// name "a" (1) + "String" (6) + value (n-7) = n bytes.
		return map[string]fifoq.Attribute{"a": {DataType: "String", StringValue: strings.Repeat("v", n-7)}}
	}
	tests := []struct {
		name      string
		fifo      bool
		maxBytes  int
		msgs      []fifoq.Message
		wantBatch int // messages in the first batch
	}{
		{"third body passes the limit", false, 250, []fifoq.Message{
			{Body: body('a', 100)}, {Body: body('b', 100)}, {Body: body('c', 100)}, {Body: body('d', 10)},
		}, 2},
		{"exactly the limit fits", false, 300, []fifoq.Message{
			{Body: body('a', 100)}, {Body: body('b', 100)}, {Body: body('c', 100)}, {Body: body('d', 1)},
		}, 3},
		{"attributes count", false, 250, []fifoq.Message{
			{Body: body('a', 100)}, {Body: body('b', 10), Attributes: attr(100)}, {Body: body('c', 10), Attributes: attr(100)},
		}, 2},
		{"a message larger than MaxBytes alone", false, 50, []fifoq.Message{
			{Body: body('a', 100)}, {Body: body('b', 10)},
		}, 1},
		{"default 6 MB: 1 MiB messages", false, 0, []fifoq.Message{
			{Body: body('a', 1<<20)}, {Body: body('b', 1<<20)}, {Body: body('c', 1<<20)}, {Body: body('d', 1<<20)},
			{Body: body('e', 1<<20)}, {Body: body('f', 1<<20)}, {Body: body('g', 1<<20)},
		}, 6},
		{"fifo: 10 messages of 1 MiB are split", true, 0, []fifoq.Message{
			{Body: body('a', 1<<20)}, {Body: body('b', 1<<20)}, {Body: body('c', 1<<20)}, {Body: body('d', 1<<20)},
			{Body: body('e', 1<<20)}, {Body: body('f', 1<<20)}, {Body: body('g', 1<<20)}, {Body: body('h', 1<<20)},
			{Body: body('i', 1<<20)}, {Body: body('j', 1<<20)},
		}, 6},
		{"fifo: overflow within one group", true, 250, []fifoq.Message{
			{Body: body('a', 100)}, {Body: body('b', 100)}, {Body: body('c', 100)}, {Body: body('d', 100)},
		}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				name := "bc-bytes"
				if tt.fifo {
					name += ".fifo"
				}
				q := bcNewQueue(t, name, fifoq.WithVisibilityTimeout(time.Minute))
				for _, m := range tt.msgs {
					if tt.fifo {
						m.GroupID = "g1"
					}
					_, err := q.Send(t.Context(), m)
					require.NoError(t, err)
				}
				b, err := fifoq.NewBatcher(q, fifoq.BatchOptions{MaxBytes: tt.maxBytes})
				require.NoError(t, err)
				batch, err := b.Next(t.Context())
				require.NoError(t, err)
				want := make([]string, len(tt.msgs))
				for i, m := range tt.msgs {
					want[i] = m.Body
				}
				require.Equal(t, want[:tt.wantBatch], bcBodies(batch), "first batch with MaxBytes %d", tt.maxBytes)
				rest := len(tt.msgs) - tt.wantBatch
				require.Equal(t, fifoq.Stats{Visible: rest, InFlight: tt.wantBatch}, q.Stats(),
					"the messages past MaxBytes must be visible again at once")

				// The rest comes next, in order; those a receive returned and released count that receive.
				for _, d := range batch {
					require.NoError(t, q.Delete(t.Context(), d.ReceiptHandle))
				}
				var got []fifoq.Delivery
				for len(got) < rest {
					batch, err := b.Next(t.Context())
					require.NoError(t, err)
					got = append(got, batch...)
					for _, d := range batch {
						require.NoError(t, q.Delete(t.Context(), d.ReceiptHandle))
					}
				}
				require.Equal(t, want[tt.wantBatch:], bcBodies(got), "the messages after the first batch")
				require.Equal(t, fifoq.Stats{}, q.Stats())
			})
		})
	}
}

// Issue item 1, spec 9.4.4, 2.6: on FIFO the messages of one group are contiguous and in send order, and groups
// are taken oldest head first.
func TestBatcherFIFOGroupsContiguousOldestFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := bcNewQueue(t, "bc-groups.fifo")
		bcSend(t, q, "g2", "g2-1")
		bcSend(t, q, "g1", "g1-1")
		bcSend(t, q, "g3", "g3-1")
		bcSend(t, q, "g1", "g1-2")
		bcSend(t, q, "g2", "g2-2")
		bcSend(t, q, "g1", "g1-3")
		b, err := fifoq.NewBatcher(q, fifoq.BatchOptions{Size: 10})
		require.NoError(t, err)
		batch, err := b.Next(t.Context())
		require.NoError(t, err)
		require.Equal(t, []string{"g2-1", "g2-2", "g1-1", "g1-2", "g1-3", "g3-1"}, bcBodies(batch))
	})
}

// Issue item 1, spec 2.8: a group is never in two batches at once; what is left of a group whose messages are
// in a batch waits until that batch is deleted or comes back.
func TestBatcherFIFOGroupNeverInTwoBatches(t *testing.T) {
	tests := []struct {
		name   string
		size   int
		sends  [][2]string // group, body
		want   [][]string  // successive batches, each deleted before the next
		second []string    // the batch taken while the first is still in flight
	}{
		{
			name:   "size 3 splits g1",
			size:   3,
			sends:  [][2]string{{"g1", "g1-1"}, {"g1", "g1-2"}, {"g1", "g1-3"}, {"g1", "g1-4"}, {"g2", "g2-1"}, {"g2", "g2-2"}},
			want:   [][]string{{"g1-1", "g1-2", "g1-3"}, {"g1-4"}},
			second: []string{"g2-1", "g2-2"},
		},
		{
			name:   "size 20 (not strict) fills from g1 past 10; g2 while g1 is in flight",
			size:   20,
			sends:  append(bcPairs("g1", bcNumbered("g1", 25)), bcPairs("g2", bcNumbered("g2", 3))...),
			want:   [][]string{bcNumbered("g1", 20), {"g1-21", "g1-22", "g1-23", "g1-24", "g1-25"}},
			second: bcNumbered("g2", 3),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := bcNewQueue(t, "bc-two.fifo", fifoq.WithVisibilityTimeout(time.Minute))
				for _, s := range tt.sends {
					bcSend(t, q, s[0], s[1])
				}
				b, err := fifoq.NewBatcher(q, fifoq.BatchOptions{Size: tt.size})
				require.NoError(t, err)
				first, err := b.Next(t.Context())
				require.NoError(t, err)
				require.Equal(t, tt.want[0], bcBodies(first), "first batch")

				// While the first batch is in flight, its groups give nothing.
				ch := bcNextAsync(t.Context(), b)
				if tt.second == nil {
					require.True(t, bcPending(ch), "a second batch while every group is in flight")
				} else {
					r := <-ch
					require.NoError(t, r.err)
					require.Equal(t, tt.second, bcBodies(r.batch), "second batch, the first in flight")
					for _, d := range r.batch {
						require.NoError(t, q.Delete(t.Context(), d.ReceiptHandle))
					}
				}
				for _, d := range first {
					require.NoError(t, q.Delete(t.Context(), d.ReceiptHandle))
				}
				if tt.second != nil {
					ch = bcNextAsync(t.Context(), b)
				} // else the pending Next gets the next batch now
				synctest.Wait()
				r := <-ch
				require.NoError(t, r.err)
				require.Equal(t, tt.want[1], bcBodies(r.batch), "batch after the first was deleted")
			})
		})
	}
}

// bcPairs pairs each body with group.
func bcPairs(group string, bodies []string) [][2]string {
	out := make([][2]string, len(bodies))
	for i, b := range bodies {
		out[i] = [2]string{group, b}
	}
	return out
}

// Issue item 1: when ctx ends while a batch is gathering, Next returns ctx's error and the messages gathered
// so far are visible again at once.
func TestBatcherNextContextDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := bcNewQueue(t, "bc-ctx.fifo", fifoq.WithVisibilityTimeout(time.Hour))
		bcSend(t, q, "g1", "a", "b")
		b, err := fifoq.NewBatcher(q, fifoq.BatchOptions{Size: 5, Window: time.Minute})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		ch := bcNextAsync(ctx, b)
		time.Sleep(10 * time.Second)
		require.True(t, bcPending(ch), "Next returned before its window ended")
		require.Equal(t, fifoq.Stats{InFlight: 2}, q.Stats(), "gathered messages are in flight")
		cancel()
		r := <-ch
		require.ErrorIs(t, r.err, context.Canceled)
		require.Empty(t, r.batch)
		require.Equal(t, fifoq.Stats{Visible: 2}, q.Stats(), "gathered messages must be visible again at once")
		ds := bcDrain(t, q)
		require.Equal(t, []string{"a", "b"}, bcBodies(ds), "order kept after the release")
	})
}

// Issue item 0: a Batcher works over any Source; here a test double wrapping a *Queue. Overflow past MaxBytes
// is released through the Source's ChangeVisibilityBatch.
func TestBatcherOverSource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := bcNewQueue(t, "bc-src.fifo", fifoq.WithVisibilityTimeout(time.Minute))
		src := &bcSource{q: q}
		bcSend(t, q, "g1", "a1", "a2", strings.Repeat("x", 200))
		bcSend(t, q, "g2", "b1")
		b, err := fifoq.NewBatcher(src, fifoq.BatchOptions{MaxBytes: 100})
		require.NoError(t, err)
		batch, err := b.Next(t.Context())
		require.NoError(t, err)
		require.Equal(t, []string{"a1", "a2"}, bcBodies(batch))
		receives, _, changed := src.bcCalls()
		require.GreaterOrEqual(t, receives, 1, "Next must receive through the Source")
		require.Len(t, changed, 2, "the overflow (a 200-byte message and b1) goes back through the Source")
		for _, c := range changed {
			require.Zero(t, c.Timeout, "overflow is made visible at once")
		}

		// A strict FIFO check asks the Source whether it is FIFO.
		_, err = fifoq.NewBatcher(src, fifoq.BatchOptions{Size: 11, Strict: true})
		require.ErrorIs(t, err, fifoq.ErrInvalidBatchOptions)
	})
}

// Errors returned by the Source reach the caller of Next, and messages gathered before are released.
func TestBatcherSourceError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := bcNewQueue(t, "bc-srcerr")
		bcSend(t, q, "", "a")
		boom := errors.New("boom")
		src := &bcFailingSource{bcSource: bcSource{q: q}, failAt: 2, err: boom}
		b, err := fifoq.NewBatcher(src, fifoq.BatchOptions{Size: 5, Window: time.Second})
		require.NoError(t, err)
		batch, err := b.Next(t.Context())
		require.ErrorIs(t, err, boom)
		require.Empty(t, batch)
		require.Equal(t, fifoq.Stats{Visible: 1}, q.Stats(), "the message gathered before the error is visible again")
	})
}

// bcFailingSource fails its failAt-th receive with err.
type bcFailingSource struct {
	bcSource
	failAt int
	err    error
	n      int
}

func (s *bcFailingSource) Receive(ctx context.Context, o fifoq.ReceiveOptions) ([]fifoq.Delivery, error) {
	s.n++
	if s.n == s.failAt {
		return nil, s.err
	}
	return s.bcSource.Receive(ctx, o)
}

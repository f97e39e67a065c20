package fifoq_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// Tests of Queue.Attributes, Queue.SetAttributes and ExplicitZero: spec 1.2, 1.5, 3.12, 4.2, 4.4, 4.6,
// 5.2-5.4, 6.1, 6.2, 6.7 and scenarios 38, 39, 42. Every rule that depends on time runs twice through
// atEachClock: on a fifoq.ManualClock advanced by hand, and on the virtual clock of a testing/synctest
// bubble. Every unexported top-level name starts with "at".

const atDay = 24 * time.Hour

// atStart is where every manual clock starts.
var atStart = time.Date(2025, 9, 1, 6, 0, 0, 0, time.UTC)

// atKinds are the two queue types.
var atKinds = []struct {
	name string
	fifo bool
}{{"standard", false}, {"fifo", true}}

// atName makes a queue name of the type asked for.
func atName(base string, fifo bool) string {
	if fifo {
		return base + ".fifo"
	}
	return base
}

// atClock drives the time of the queues a test makes with it.
type atClock struct {
	opts    []fifoq.Option        // give a queue this clock
	now     func() time.Time      // the queues' time
	advance func(d time.Duration) // move time forward by exactly d and let what it wakes run
}

// atManual is a clock that moves only when advanced.
func atManual() *atClock {
	clk := fifoq.NewManualClock(atStart)
	return &atClock{opts: []fifoq.Option{fifoq.WithClock(clk)}, now: clk.Now, advance: clk.Advance}
}

// atBubble is the virtual clock of the synctest bubble the caller runs in.
func atBubble() *atClock {
	return &atClock{now: time.Now, advance: func(d time.Duration) {
		time.Sleep(d)
		synctest.Wait()
	}}
}

// atEachClock runs f on a manual clock, then inside a synctest bubble (where the queues must be built).
func atEachClock(t *testing.T, f func(t *testing.T, c *atClock)) {
	t.Helper()
	t.Run("ManualClock", func(t *testing.T) { f(t, atManual()) })
	t.Run("synctest", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) { f(t, atBubble()) })
	})
}

// atNew creates a queue on clock c.
func atNew(t *testing.T, c *atClock, name string, opts ...fifoq.Option) *fifoq.Queue {
	t.Helper()
	q, err := fifoq.New(name, append(slices.Clone(c.opts), opts...)...)
	require.NoError(t, err, "New(%q)", name)
	return q
}

// atMsg is body as a message for q: on a FIFO queue in group, with a deduplication id made of the body (its
// length and end, for a long body).
func atMsg(q *fifoq.Queue, group, body string) fifoq.Message {
	m := fifoq.Message{Body: body}
	if q.FIFO() {
		id := "d-" + body
		if len(id) > 100 {
			id = fmt.Sprintf("d%d-%s", len(body), body[len(body)-50:])
		}
		m.GroupID, m.DeduplicationID = group, id
	}
	return m
}

// atSendMsg sends m, which must be stored as a new message.
func atSendMsg(t *testing.T, q *fifoq.Queue, m fifoq.Message) fifoq.SendResult {
	t.Helper()
	r, err := q.Send(context.Background(), m)
	require.NoError(t, err, "Send(%q) to %s", m.Body, q.Name())
	require.False(t, r.Duplicate, "Send(%q) to %s was deduplicated", m.Body, q.Name())
	require.NotEmpty(t, r.MessageID)
	return r
}

// atSend sends body (in group, on a FIFO queue).
func atSend(t *testing.T, q *fifoq.Queue, group, body string) fifoq.SendResult {
	t.Helper()
	return atSendMsg(t, q, atMsg(q, group, body))
}

// atRecvWith receives with o.
func atRecvWith(t *testing.T, q *fifoq.Queue, o fifoq.ReceiveOptions) []fifoq.Delivery {
	t.Helper()
	ds, err := q.Receive(context.Background(), o)
	require.NoError(t, err, "Receive(%+v) from %s", o, q.Name())
	return ds
}

// atRecv receives up to n messages with the queue's wait and visibility timeout.
func atRecv(t *testing.T, q *fifoq.Queue, n int) []fifoq.Delivery {
	t.Helper()
	return atRecvWith(t, q, fifoq.ReceiveOptions{MaxMessages: n})
}

// atDelete deletes the deliveries.
func atDelete(t *testing.T, q *fifoq.Queue, ds ...fifoq.Delivery) {
	t.Helper()
	for _, d := range ds {
		require.NoError(t, q.Delete(context.Background(), d.ReceiptHandle), "Delete(%q)", d.Body)
	}
}

// atBodies lists the bodies of ds, in order.
func atBodies(ds []fifoq.Delivery) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.Body)
	}
	return out
}

// atSnaps is every message of q, oldest first.
func atSnaps(q *fifoq.Queue) []fifoq.Snapshot { return slices.Collect(q.Messages()) }

// atStored lists the bodies of q's messages, oldest first.
func atStored(q *fifoq.Queue) []string {
	out := []string{}
	for s := range q.Messages() {
		out = append(out, s.Body)
	}
	return out
}

// atSnap is the stored message with this body.
func atSnap(t *testing.T, q *fifoq.Queue, body string) fifoq.Snapshot {
	t.Helper()
	for s := range q.Messages() {
		if s.Body == body {
			return s
		}
	}
	require.FailNow(t, "message not stored", "%q is not in %s, which holds %v", body, q.Name(), atStored(q))
	return fifoq.Snapshot{}
}

// atRequireTime asserts that got is the instant want.
func atRequireTime(t *testing.T, want, got time.Time, what string) {
	t.Helper()
	require.True(t, want.Equal(got), "%s: got %v, want %v", what, got, want)
}

// atRequireRejected asserts that err is sentinel, by errors.Is, with its SQS code.
func atRequireRejected(t *testing.T, err error, sentinel *fifoq.Error, what string) {
	t.Helper()
	require.ErrorIs(t, err, sentinel, what)
	require.Equal(t, sentinel.Code, fifoq.ErrorCode(err), "%s: ErrorCode(%v)", what, err)
}

// atQueueName names q, or says there is none.
func atQueueName(q *fifoq.Queue) string {
	if q == nil {
		return "<nil>"
	}
	return q.Name()
}

// atRequireAttrs asserts that got equals want. The dead-letter queues are compared by identity (a deep
// comparison would read the queues' guarded fields).
func atRequireAttrs(t *testing.T, want, got fifoq.Attributes, what string) {
	t.Helper()
	require.True(t, want.DeadLetterQueue == got.DeadLetterQueue, "%s: DeadLetterQueue %s, want %s",
		what, atQueueName(got.DeadLetterQueue), atQueueName(want.DeadLetterQueue))
	want.DeadLetterQueue, got.DeadLetterQueue = nil, nil
	require.Equal(t, want, got, what)
}

// atSet changes q's attributes by mod, which must be accepted and then be what Attributes reports.
func atSet(t *testing.T, q *fifoq.Queue, mod func(a *fifoq.Attributes)) {
	t.Helper()
	a := q.Attributes()
	mod(&a)
	require.NoError(t, q.SetAttributes(a), "SetAttributes(%+v) on %s", a, q.Name())
	atRequireAttrs(t, a, q.Attributes(), "Attributes after SetAttributes")
}

// atRequireNotDLQ asserts that q is no queue's dead-letter queue: a move task cannot start.
func atRequireNotDLQ(t *testing.T, q *fifoq.Queue) {
	t.Helper()
	tk, err := q.StartMoveTask(context.Background(), nil, 0)
	if tk != nil { // end it before failing, and do not print it: its goroutine runs
		_ = tk.Cancel()
		_ = tk.Wait(context.Background())
		require.FailNow(t, "a move task started", "%s is still a dead-letter queue (status %+v)", q.Name(), tk.Status())
	}
	atRequireRejected(t, err, fifoq.ErrNotDeadLetterQueue, "StartMoveTask on "+q.Name())
}

// atRequireDLQ asserts that q is some queue's dead-letter queue: a move task back to the sources starts, and
// it completes. It returns the task's final status.
func atRequireDLQ(t *testing.T, q *fifoq.Queue) fifoq.MoveTaskStatus {
	t.Helper()
	tk, err := q.StartMoveTask(context.Background(), nil, 0)
	require.NoError(t, err, "StartMoveTask on %s", q.Name())
	require.NoError(t, tk.Wait(context.Background()))
	st := tk.Status()
	require.Equal(t, fifoq.MoveTaskCompleted, st.State, "%+v", st)
	return st
}

// TestAtAttributesReportNewOptions checks that Attributes reports what New's options set, and the defaults
// where none was given (spec 1.2.1, 4.1, 5.1, 7.1.2, 1.5.1, 3.6, 6.1, 6.7), and that SetAttributes of what
// Attributes returns changes nothing: the attributes, the messages, the dead-letter queue's sources.
func TestAtAttributesReportNewOptions(t *testing.T) {
	t.Parallel()
	defaults := fifoq.Attributes{
		VisibilityTimeout:  30 * time.Second,
		Delay:              0,
		Retention:          4 * atDay,
		MaxMessageSize:     1 << 20,
		ReceiveWaitTime:    0,
		DeduplicationScope: fifoq.DeduplicationScopeQueue,
		RedriveAllowPolicy: fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveAllowAll},
	}
	byQueue := fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveByQueue, Sources: []string{"at-a", "at-b"}}
	for _, tc := range []struct {
		name string
		fifo bool
		opts func(dlq *fifoq.Queue) []fifoq.Option
		want func(a *fifoq.Attributes, dlq *fifoq.Queue) // the changes from defaults
	}{
		{name: "standard/defaults", opts: func(*fifoq.Queue) []fifoq.Option { return nil },
			want: func(*fifoq.Attributes, *fifoq.Queue) {}},
		{name: "fifo/defaults", fifo: true, opts: func(*fifoq.Queue) []fifoq.Option { return nil },
			want: func(*fifoq.Attributes, *fifoq.Queue) {}},
		{name: "standard/every option, lower edges",
			opts: func(dlq *fifoq.Queue) []fifoq.Option {
				return []fifoq.Option{fifoq.WithVisibilityTimeout(0), fifoq.WithDelay(0), fifoq.WithRetention(time.Minute),
					fifoq.WithMaxMessageSize(1024), fifoq.WithReceiveWaitTime(0), fifoq.WithDeadLetterQueue(dlq, 1),
					fifoq.WithRedriveAllowPolicy(byQueue)}
			},
			want: func(a *fifoq.Attributes, dlq *fifoq.Queue) {
				a.VisibilityTimeout, a.Retention, a.MaxMessageSize = 0, time.Minute, 1024
				a.DeadLetterQueue, a.MaxReceiveCount, a.RedriveAllowPolicy = dlq, 1, byQueue
			}},
		{name: "standard/every option, upper edges",
			opts: func(dlq *fifoq.Queue) []fifoq.Option {
				return []fifoq.Option{fifoq.WithVisibilityTimeout(12 * time.Hour), fifoq.WithDelay(15 * time.Minute),
					fifoq.WithRetention(14 * atDay), fifoq.WithMaxMessageSize(1 << 20),
					fifoq.WithReceiveWaitTime(20 * time.Second), fifoq.WithDeadLetterQueue(dlq, 1000),
					fifoq.WithRedriveAllowPolicy(fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveDenyAll})}
			},
			want: func(a *fifoq.Attributes, dlq *fifoq.Queue) {
				a.VisibilityTimeout, a.Delay, a.Retention = 12*time.Hour, 15*time.Minute, 14*atDay
				a.ReceiveWaitTime, a.DeadLetterQueue, a.MaxReceiveCount = 20*time.Second, dlq, 1000
				a.RedriveAllowPolicy = fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveDenyAll}
			}},
		{name: "fifo/every option", fifo: true,
			opts: func(dlq *fifoq.Queue) []fifoq.Option {
				return []fifoq.Option{fifoq.WithVisibilityTimeout(time.Hour), fifoq.WithDelay(time.Second),
					fifoq.WithRetention(time.Hour), fifoq.WithMaxMessageSize(4096), fifoq.WithReceiveWaitTime(time.Second),
					fifoq.WithContentBasedDeduplication(), fifoq.WithDeduplicationScope(fifoq.DeduplicationScopeMessageGroup),
					fifoq.WithDeadLetterQueue(dlq, 7), fifoq.WithRedriveAllowPolicy(byQueue)}
			},
			want: func(a *fifoq.Attributes, dlq *fifoq.Queue) {
				a.VisibilityTimeout, a.Delay, a.Retention, a.MaxMessageSize = time.Hour, time.Second, time.Hour, 4096
				a.ReceiveWaitTime, a.ContentBasedDeduplication = time.Second, true
				a.DeduplicationScope = fifoq.DeduplicationScopeMessageGroup
				a.DeadLetterQueue, a.MaxReceiveCount, a.RedriveAllowPolicy = dlq, 7, byQueue
			}},
		{name: "fifo/default values given", fifo: true,
			opts: func(*fifoq.Queue) []fifoq.Option {
				return []fifoq.Option{fifoq.WithDeduplicationScope(fifoq.DeduplicationScopeQueue),
					fifoq.WithRedriveAllowPolicy(fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveAllowAll}),
					fifoq.WithVisibilityTimeout(30 * time.Second), fifoq.WithRetention(4 * atDay)}
			},
			want: func(*fifoq.Attributes, *fifoq.Queue) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := atManual()
			dlq := atNew(t, c, atName("at-opts-dlq", tc.fifo))
			q := atNew(t, c, atName("at-opts", tc.fifo), tc.opts(dlq)...)
			want := defaults
			tc.want(&want, dlq)
			atRequireAttrs(t, want, q.Attributes(), "Attributes of a new queue")

			for i := range 3 {
				atSend(t, q, "g", fmt.Sprintf("m%d", i))
			}
			if want.ReceiveWaitTime == 0 { // a long poll would wait on a clock that does not move
				atRecv(t, q, 1)
			}
			snaps, stats := atSnaps(q), q.Stats()
			for range 2 {
				require.NoError(t, q.SetAttributes(q.Attributes()), "SetAttributes(Attributes())")
				atRequireAttrs(t, want, q.Attributes(), "after SetAttributes(Attributes())")
			}
			require.Equal(t, snaps, atSnaps(q), "SetAttributes(Attributes()) changes no message")
			require.Equal(t, stats, q.Stats())
			if want.DeadLetterQueue == nil {
				atRequireNotDLQ(t, dlq)
				return
			}
			// q was registered as the DLQ's source once, however many no-op SetAttributes: removing the
			// policy once leaves the DLQ without sources.
			atRequireDLQ(t, dlq)
			atSet(t, q, func(a *fifoq.Attributes) { a.DeadLetterQueue, a.MaxReceiveCount = nil, 0 })
			atRequireNotDLQ(t, dlq)
		})
	}
}

// TestAtAttributesCopySources checks style item 25 for SetAttributes and Attributes: a RedriveAllowPolicy's
// Sources are copied on the way in and on the way out, so the caller's slice is never the queue's.
func TestAtAttributesCopySources(t *testing.T) {
	t.Parallel()
	c := atManual()
	dlq := atNew(t, c, "at-copy-dlq")
	a := dlq.Attributes()
	in := []string{"at-x", "at-z"}
	a.RedriveAllowPolicy = fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveByQueue, Sources: in}
	require.NoError(t, dlq.SetAttributes(a))
	in[0] = "at-y"
	require.Equal(t, []string{"at-x", "at-z"}, dlq.Attributes().RedriveAllowPolicy.Sources,
		"changing the slice given to SetAttributes changed the queue")
	out := dlq.Attributes()
	out.RedriveAllowPolicy.Sources[0] = "at-y"
	require.Equal(t, []string{"at-x", "at-z"}, dlq.Attributes().RedriveAllowPolicy.Sources,
		"changing the slice Attributes returned changed the queue")
	_, err := fifoq.New("at-y", append(slices.Clone(c.opts), fifoq.WithDeadLetterQueue(dlq, 1))...)
	atRequireRejected(t, err, fifoq.ErrRedriveNotAllowed, "New(at-y) with the DLQ")
	atNew(t, c, "at-x", fifoq.WithDeadLetterQueue(dlq, 1))
}

// TestAtNewCopiesRedriveAllowSources checks style item 25 for New: the Sources of WithRedriveAllowPolicy are
// copied, so Attributes reports, and the queue enforces, the policy New was given.
func TestAtNewCopiesRedriveAllowSources(t *testing.T) {
	t.Parallel()
	c := atManual()
	in := []string{"at-src", "at-other"}
	dlq := atNew(t, c, "at-newcopy-dlq",
		fifoq.WithRedriveAllowPolicy(fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveByQueue, Sources: in}))
	in[0] = "at-changed"
	require.Equal(t, []string{"at-src", "at-other"}, dlq.Attributes().RedriveAllowPolicy.Sources,
		"changing the slice given to WithRedriveAllowPolicy changed the queue's policy")
	atNew(t, c, "at-src", fifoq.WithDeadLetterQueue(dlq, 1))
}

// atInvalidEnv is the queue an invalid SetAttributes is tried on, with the clock and the DLQ it has.
type atInvalidEnv struct {
	c    *atClock
	fifo bool
	q    *fifoq.Queue // visibility timeout 1h, retention 2h, dead-letter queue dlq with maxReceiveCount 5
	dlq  *fifoq.Queue
}

// queue makes another queue on the env's clock.
func (e *atInvalidEnv) queue(t *testing.T, base string, fifo bool, opts ...fifoq.Option) *fifoq.Queue {
	t.Helper()
	return atNew(t, e.c, atName(base, fifo), opts...)
}

// atInvalidCase changes a queue's attributes into an invalid set.
type atInvalidCase struct {
	name string
	only string // "standard" or "fifo" for a case of one queue type only
	want *fifoq.Error
	// mod makes a invalid; it returns the queues that must not become a dead-letter queue by the rejected call.
	mod func(t *testing.T, e *atInvalidEnv, a *fifoq.Attributes) []*fifoq.Queue
}

// atField is a case that changes fields only.
func atField(f func(a *fifoq.Attributes)) func(*testing.T, *atInvalidEnv, *fifoq.Attributes) []*fifoq.Queue {
	return func(_ *testing.T, _ *atInvalidEnv, a *fifoq.Attributes) []*fifoq.Queue {
		f(a)
		return nil
	}
}

// atInvalidCases are the invalid attribute sets: each field just outside its range, FIFO-only fields on a
// standard queue, bad redrive and redrive allow policies, cycles of dead-letter queues, and valid changes
// (retention, delay) that would change the stored messages, made together with an invalid one.
func atInvalidCases() []atInvalidCase {
	allow := func(p fifoq.RedriveAllowPolicy) func(*testing.T, *atInvalidEnv, *fifoq.Attributes) []*fifoq.Queue {
		return atField(func(a *fifoq.Attributes) { a.RedriveAllowPolicy = p })
	}
	dlqWith := func(opts ...fifoq.Option) func(*testing.T, *atInvalidEnv, *fifoq.Attributes) []*fifoq.Queue {
		return func(t *testing.T, e *atInvalidEnv, a *fifoq.Attributes) []*fifoq.Queue {
			d := e.queue(t, "at-inv-target", e.fifo, opts...)
			a.DeadLetterQueue, a.MaxReceiveCount = d, 3
			return []*fifoq.Queue{d}
		}
	}
	deny := fifoq.WithRedriveAllowPolicy(fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveDenyAll})
	elevenSources := make([]string, 11)
	for i := range elevenSources {
		elevenSources[i] = fmt.Sprintf("at-s%d", i)
	}
	invalidAttr, fifoOnly := fifoq.ErrInvalidQueueAttribute, fifoq.ErrFIFOOnly
	badPolicy, notAllowed := fifoq.ErrInvalidRedrivePolicy, fifoq.ErrRedriveNotAllowed
	badAllow := fifoq.ErrInvalidRedriveAllowPolicy
	return []atInvalidCase{
		{name: "1.2.1/visibility -1ns", want: invalidAttr, mod: atField(func(a *fifoq.Attributes) { a.VisibilityTimeout = -1 })},
		{name: "1.2.1/visibility 12h+1ns", want: invalidAttr,
			mod: atField(func(a *fifoq.Attributes) { a.VisibilityTimeout = 12*time.Hour + 1 })},
		{name: "1.2.1/visibility ExplicitZero", want: invalidAttr,
			mod: atField(func(a *fifoq.Attributes) { a.VisibilityTimeout = fifoq.ExplicitZero })},
		{name: "4.1/delay -1ns", want: invalidAttr, mod: atField(func(a *fifoq.Attributes) { a.Delay = -1 })},
		{name: "4.1/delay 15m+1ns", want: invalidAttr, mod: atField(func(a *fifoq.Attributes) { a.Delay = 15*time.Minute + 1 })},
		{name: "4.1/delay ExplicitZero", want: invalidAttr, mod: atField(func(a *fifoq.Attributes) { a.Delay = fifoq.ExplicitZero })},
		{name: "5.1/retention 1m-1ns", want: invalidAttr, mod: atField(func(a *fifoq.Attributes) { a.Retention = time.Minute - 1 })},
		{name: "5.1/retention 14d+1ns", want: invalidAttr, mod: atField(func(a *fifoq.Attributes) { a.Retention = 14*atDay + 1 })},
		{name: "5.1/retention 0", want: invalidAttr, mod: atField(func(a *fifoq.Attributes) { a.Retention = 0 })},
		{name: "7.1.2/max size 1023", want: invalidAttr, mod: atField(func(a *fifoq.Attributes) { a.MaxMessageSize = 1023 })},
		{name: "7.1.2/max size 1MiB+1", want: invalidAttr, mod: atField(func(a *fifoq.Attributes) { a.MaxMessageSize = 1<<20 + 1 })},
		{name: "7.1.2/max size 0", want: invalidAttr, mod: atField(func(a *fifoq.Attributes) { a.MaxMessageSize = 0 })},
		{name: "1.5.1/wait -1ns", want: invalidAttr, mod: atField(func(a *fifoq.Attributes) { a.ReceiveWaitTime = -1 })},
		{name: "1.5.1/wait 20s+1ns", want: invalidAttr,
			mod: atField(func(a *fifoq.Attributes) { a.ReceiveWaitTime = 20*time.Second + 1 })},
		{name: "1.5.1/wait ExplicitZero", want: invalidAttr,
			mod: atField(func(a *fifoq.Attributes) { a.ReceiveWaitTime = fifoq.ExplicitZero })},
		{name: "3.12/content-based deduplication on standard", only: "standard", want: fifoOnly,
			mod: atField(func(a *fifoq.Attributes) { a.ContentBasedDeduplication = true })},
		{name: "3.12/scope messageGroup on standard", only: "standard", want: fifoOnly,
			mod: atField(func(a *fifoq.Attributes) { a.DeduplicationScope = fifoq.DeduplicationScopeMessageGroup })},
		{name: "3.12/scope 3 on standard", only: "standard", want: fifoOnly,
			mod: atField(func(a *fifoq.Attributes) { a.DeduplicationScope = 3 })},
		{name: "3.7/scope 3", only: "fifo", want: invalidAttr, mod: atField(func(a *fifoq.Attributes) { a.DeduplicationScope = 3 })},
		{name: "6.2/dead-letter queue of the other type", want: badPolicy,
			mod: func(t *testing.T, e *atInvalidEnv, a *fifoq.Attributes) []*fifoq.Queue {
				d := e.queue(t, "at-inv-other", !e.fifo)
				a.DeadLetterQueue, a.MaxReceiveCount = d, 3
				return []*fifoq.Queue{d}
			}},
		{name: "6.1/maxReceiveCount 0 with the DLQ", want: badPolicy, mod: atField(func(a *fifoq.Attributes) { a.MaxReceiveCount = 0 })},
		{name: "6.1/maxReceiveCount 1001 with the DLQ", want: badPolicy,
			mod: atField(func(a *fifoq.Attributes) { a.MaxReceiveCount = 1001 })},
		{name: "6.1/maxReceiveCount -1 with the DLQ", want: badPolicy, mod: atField(func(a *fifoq.Attributes) { a.MaxReceiveCount = -1 })},
		{name: "6.1/maxReceiveCount 1001 with a new DLQ", want: badPolicy,
			mod: func(t *testing.T, e *atInvalidEnv, a *fifoq.Attributes) []*fifoq.Queue {
				untouched := dlqWith()(t, e, a)
				a.MaxReceiveCount = 1001
				return untouched
			}},
		{name: "6.1/maxReceiveCount without a DLQ", want: badPolicy,
			mod: atField(func(a *fifoq.Attributes) { a.DeadLetterQueue = nil })},
		{name: "6.7/DLQ denyAll", want: notAllowed, mod: dlqWith(deny)},
		{name: "6.7/DLQ byQueue without this queue", want: notAllowed,
			mod: dlqWith(fifoq.WithRedriveAllowPolicy(fifoq.RedriveAllowPolicy{
				Permission: fifoq.RedriveByQueue, Sources: []string{"at-inv-someone", "at-inv-else.fifo"}}))},
		{name: "6.7/allow policy permission 7", want: badAllow, mod: allow(fifoq.RedriveAllowPolicy{Permission: 7})},
		{name: "6.7/allow policy byQueue without sources", want: badAllow,
			mod: allow(fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveByQueue})},
		{name: "6.7/allow policy byQueue with 11 sources", want: badAllow,
			mod: allow(fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveByQueue, Sources: elevenSources})},
		{name: "6.7/allow policy allowAll with sources", want: badAllow,
			mod: allow(fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveAllowAll, Sources: []string{"at-a"}})},
		{name: "6.7/allow policy denyAll with sources", want: badAllow,
			mod: allow(fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveDenyAll, Sources: []string{"at-a"}})},
		{name: "6.7/allow policy byQueue naming no queue", want: badAllow,
			mod: allow(fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveByQueue, Sources: []string{"not a name"}})},
		{name: "6.1/own dead-letter queue", want: badPolicy,
			mod: func(_ *testing.T, e *atInvalidEnv, a *fifoq.Attributes) []*fifoq.Queue {
				a.DeadLetterQueue = e.q
				return []*fifoq.Queue{e.q}
			}},
		{name: "6.1/cycle of two", want: badPolicy,
			mod: func(t *testing.T, e *atInvalidEnv, a *fifoq.Attributes) []*fifoq.Queue {
				b := e.queue(t, "at-inv-b", e.fifo, fifoq.WithDeadLetterQueue(e.q, 3)) // b -> q
				a.DeadLetterQueue = b                                                  // q -> b
				return []*fifoq.Queue{b}
			}},
		{name: "6.1/cycle of three", want: badPolicy,
			mod: func(t *testing.T, e *atInvalidEnv, a *fifoq.Attributes) []*fifoq.Queue {
				b := e.queue(t, "at-inv-b", e.fifo, fifoq.WithDeadLetterQueue(e.q, 3)) // b -> q
				d := e.queue(t, "at-inv-d", e.fifo, fifoq.WithDeadLetterQueue(b, 3))   // d -> b
				a.DeadLetterQueue = d                                                  // q -> d
				return []*fifoq.Queue{d}
			}},
		{name: "5.3/retention 1m with wait 21s", want: invalidAttr, mod: atField(func(a *fifoq.Attributes) {
			a.Retention, a.ReceiveWaitTime = time.Minute, 21*time.Second
		})},
		{name: "5.3/retention 1m with a denyAll DLQ", want: notAllowed,
			mod: func(t *testing.T, e *atInvalidEnv, a *fifoq.Attributes) []*fifoq.Queue {
				a.Retention = time.Minute
				return dlqWith(deny)(t, e, a)
			}},
		{name: "5.3/retention 1m with a cycle", want: badPolicy,
			mod: func(t *testing.T, e *atInvalidEnv, a *fifoq.Attributes) []*fifoq.Queue {
				a.Retention = time.Minute
				a.DeadLetterQueue = e.q
				return nil
			}},
		{name: "4.6/delay 1m with maxReceiveCount 0", want: badPolicy, mod: atField(func(a *fifoq.Attributes) {
			a.Delay, a.MaxReceiveCount = time.Minute, 0
		})},
		{name: "4.6/delay 1m with content-based deduplication on standard", only: "standard", want: fifoOnly,
			mod: atField(func(a *fifoq.Attributes) { a.Delay, a.ContentBasedDeduplication = time.Minute, true })},
	}
}

// TestAtSetAttributesRejectsInvalid checks that every invalid attribute set returns its sentinel error and
// changes nothing (style item 7): not the attributes, not the stored messages (none expires, none of a FIFO
// queue's delayed messages becomes visible), not the dead-letter queues' sources. Spec 1.2.1, 4.1, 5.1,
// 7.1.2, 1.5.1, 3.12, 6.1, 6.2, 6.7.
func TestAtSetAttributesRejectsInvalid(t *testing.T) {
	t.Parallel()
	for _, k := range atKinds {
		for _, tc := range atInvalidCases() {
			if tc.only != "" && tc.only != k.name {
				continue
			}
			t.Run(k.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				c := atManual()
				e := &atInvalidEnv{c: c, fifo: k.fifo}
				e.dlq = e.queue(t, "at-inv-dlq", k.fifo)
				e.q = e.queue(t, "at-inv", k.fifo, fifoq.WithVisibilityTimeout(time.Hour), fifoq.WithRetention(2*time.Hour),
					fifoq.WithDeadLetterQueue(e.dlq, 5))
				atSend(t, e.q, "a", "inflight")
				require.Equal(t, []string{"inflight"}, atBodies(atRecv(t, e.q, 1)))
				atSend(t, e.q, "b", "visible")
				if k.fifo {
					atSet(t, e.q, func(a *fifoq.Attributes) { a.Delay = 10 * time.Minute })
					atSend(t, e.q, "c", "delayed")
				} else {
					atSendMsg(t, e.q, fifoq.Message{Body: "delayed", Delay: 10 * time.Minute})
				}
				c.advance(5 * time.Minute) // every message is older than 1 minute; "delayed" is delayed for 5 more
				require.Equal(t, fifoq.Stats{Visible: 1, InFlight: 1, Delayed: 1}, e.q.Stats())

				before, snaps := e.q.Attributes(), atSnaps(e.q)
				a := e.q.Attributes()
				untouched := tc.mod(t, e, &a)
				err := e.q.SetAttributes(a)
				atRequireRejected(t, err, tc.want, fmt.Sprintf("SetAttributes(%+v)", a))
				atRequireAttrs(t, before, e.q.Attributes(), "Attributes after a rejected SetAttributes")
				require.Equal(t, snaps, atSnaps(e.q), "messages after a rejected SetAttributes")
				require.Equal(t, fifoq.Stats{Visible: 1, InFlight: 1, Delayed: 1}, e.q.Stats())
				for _, u := range untouched {
					atRequireNotDLQ(t, u)
				}
				// q is still the source of its dead-letter queue, and the only one.
				atRequireDLQ(t, e.dlq)
				atSet(t, e.q, func(a *fifoq.Attributes) { a.DeadLetterQueue, a.MaxReceiveCount = nil, 0 })
				atRequireNotDLQ(t, e.dlq)
			})
		}
	}
}

// TestAtRetentionLoweredExpiresAtOnce checks spec 5.3 (scenario 42) and 5.2: a lower retention period applies
// to the messages already stored, so those older than it expire at once, visible, delayed and in flight; the
// younger ones expire when they reach the new period.
func TestAtRetentionLoweredExpiresAtOnce(t *testing.T) {
	t.Parallel()
	for _, k := range atKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			atEachClock(t, func(t *testing.T, c *atClock) {
				q := atNew(t, c, atName("at-ret42", k.fifo), fifoq.WithDelay(15*time.Minute),
					fifoq.WithVisibilityTimeout(time.Hour))
				atSend(t, q, "a", "inflight")
				atSend(t, q, "b", "visible")
				c.advance(15 * time.Minute)
				ds := atRecv(t, q, 1)
				require.Equal(t, []string{"inflight"}, atBodies(ds), "at 15m")
				atSend(t, q, "c", "delayed") // visible at 30m
				c.advance(14 * time.Minute)
				atSend(t, q, "d", "young") // at 29m, visible at 44m
				require.Equal(t, fifoq.Stats{Visible: 1, InFlight: 1, Delayed: 2}, q.Stats(), "at 29m")

				atSet(t, q, func(a *fifoq.Attributes) { a.Retention = 10 * time.Minute })
				require.Equal(t, fifoq.Stats{Delayed: 1}, q.Stats(), "right after the retention became 10m")
				require.Equal(t, []string{"young"}, atStored(q), "inflight and visible are 29m old, delayed 14m")
				require.Empty(t, atRecv(t, q, 10))
				if !k.fifo {
					require.NoError(t, q.Delete(context.Background(), ds[0].ReceiptHandle),
						"5.2: deleting an expired in-flight message succeeds on a standard queue")
				}
				c.advance(10*time.Minute - time.Nanosecond)
				require.Equal(t, []string{"young"}, atStored(q), "young is 10m-1ns old")
				c.advance(time.Nanosecond)
				require.Empty(t, atStored(q), "young is 10m old")
				require.Equal(t, fifoq.Stats{}, q.Stats())
			})
		})
	}
}

// TestAtRetentionRaisedKeepsMessages checks spec 5.3: a higher retention period applies to the messages
// already stored, so those the old period would have expired stay, visible, delayed and in flight.
func TestAtRetentionRaisedKeepsMessages(t *testing.T) {
	t.Parallel()
	for _, k := range atKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			atEachClock(t, func(t *testing.T, c *atClock) {
				q := atNew(t, c, atName("at-ret-up", k.fifo), fifoq.WithDelay(15*time.Minute),
					fifoq.WithVisibilityTimeout(time.Hour), fifoq.WithRetention(30*time.Minute))
				atSend(t, q, "a", "inflight")
				atSend(t, q, "b", "visible")
				c.advance(15 * time.Minute)
				require.Equal(t, []string{"inflight"}, atBodies(atRecv(t, q, 1)), "at 15m") // visible again at 1h15m
				atSend(t, q, "c", "delayed")                                                // visible at 30m
				c.advance(14 * time.Minute)
				require.Equal(t, fifoq.Stats{Visible: 1, InFlight: 1, Delayed: 1}, q.Stats(), "at 29m")

				atSet(t, q, func(a *fifoq.Attributes) { a.Retention = 2 * time.Hour })
				c.advance(time.Minute)
				require.Equal(t, fifoq.Stats{Visible: 2, InFlight: 1}, q.Stats(),
					"at 30m, when the old retention would have expired inflight and visible")
				require.Equal(t, []string{"inflight", "visible", "delayed"}, atStored(q))
				c.advance(45 * time.Minute)
				require.Equal(t, fifoq.Stats{Visible: 3}, q.Stats(), "at 1h15m inflight's visibility timeout ends")
				c.advance(45*time.Minute - time.Nanosecond)
				require.Equal(t, []string{"inflight", "visible", "delayed"}, atStored(q), "at 2h-1ns")
				c.advance(time.Nanosecond)
				require.Equal(t, []string{"delayed"}, atStored(q), "at 2h, the new retention of the first two")
				c.advance(15*time.Minute - time.Nanosecond)
				require.Equal(t, []string{"delayed"}, atStored(q), "at 2h15m-1ns")
				c.advance(time.Nanosecond)
				require.Empty(t, atStored(q), "at 2h15m")
			})
		})
	}
}

// TestAtRetentionStandardDLQ checks spec 5.4 with 5.3: messages moved into a standard dead-letter queue keep
// their original send time, and a new retention period of the DLQ reschedules their expiry, lower or higher,
// visible or in flight. A message sent to the DLQ itself, stored before them but younger, expires later.
func TestAtRetentionStandardDLQ(t *testing.T) {
	t.Parallel()
	const inFlight = 12 * time.Hour // the visibility timeout of the moved message received from the DLQ
	for _, tc := range []struct {
		name          string
		before, after time.Duration // the DLQ's retention
	}{
		{"lowered, moved messages expire 1h later", 4 * atDay, atDay + time.Hour},
		{"lowered, moved messages expire at once", 4 * atDay, 23 * time.Hour},
		{"lowered, moved messages expire after the timeout", 4 * atDay, 2 * atDay},
		{"raised", atDay + time.Hour, 3 * atDay},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			atEachClock(t, func(t *testing.T, c *atClock) {
				ctx := context.Background()
				dlq := atNew(t, c, "at-ret-dlq", fifoq.WithRetention(tc.before))
				src := atNew(t, c, "at-ret-src", fifoq.WithVisibilityTimeout(0), fifoq.WithDeadLetterQueue(dlq, 1))
				atSend(t, src, "", "m1")
				atSend(t, src, "", "m2")
				require.Equal(t, []string{"m1", "m2"}, atBodies(atRecv(t, src, 10)))
				c.advance(atDay)
				atSend(t, dlq, "", "direct")
				require.Empty(t, atRecv(t, src, 10), "both move to the DLQ")
				require.Equal(t, []string{"direct", "m1", "m2"}, atStored(dlq))
				ds := atRecvWith(t, dlq, fifoq.ReceiveOptions{MaxMessages: 10, VisibilityTimeout: inFlight})
				require.Equal(t, []string{"direct", "m1", "m2"}, atBodies(ds))
				require.NoError(t, dlq.ChangeVisibility(ctx, ds[0].ReceiptHandle, 0))
				require.NoError(t, dlq.ChangeVisibility(ctx, ds[2].ReceiptHandle, 0))
				require.Equal(t, fifoq.Stats{Visible: 2, InFlight: 1}, dlq.Stats())
				m1VisibleAt := c.now().Add(inFlight)
				atRequireTime(t, m1VisibleAt, atSnap(t, dlq, "m1").VisibleAt, "m1's VisibleAt")

				atSet(t, dlq, func(a *fifoq.Attributes) { a.Retention = tc.after })
				movedLeft := tc.after - atDay // m1 and m2 were sent a day ago
				elapsed := time.Duration(0)
				at := func(d time.Duration) { // go to d after the change
					c.advance(d - elapsed)
					elapsed = d
				}
				if movedLeft <= 0 {
					require.Equal(t, []string{"direct"}, atStored(dlq), "m1 and m2 are older than the new retention")
					require.Equal(t, fifoq.Stats{Visible: 1}, dlq.Stats())
				} else {
					atRequireTime(t, m1VisibleAt, atSnap(t, dlq, "m1").VisibleAt, "m1's VisibleAt after the change")
					if movedLeft > inFlight {
						at(inFlight - time.Nanosecond)
						require.Equal(t, fifoq.Stats{Visible: 2, InFlight: 1}, dlq.Stats(), "m1 in flight until its timeout")
						at(inFlight)
						require.Equal(t, fifoq.Stats{Visible: 3}, dlq.Stats(), "m1 visible at its timeout")
					}
					at(movedLeft - time.Nanosecond)
					require.Equal(t, []string{"direct", "m1", "m2"}, atStored(dlq), "%v after the change", movedLeft-time.Nanosecond)
					if movedLeft <= inFlight {
						require.Equal(t, fifoq.Stats{Visible: 2, InFlight: 1}, dlq.Stats())
					}
					at(movedLeft)
					require.Equal(t, []string{"direct"}, atStored(dlq), "%v after the change", movedLeft)
					require.Equal(t, fifoq.Stats{Visible: 1}, dlq.Stats())
				}
				at(tc.after - time.Nanosecond)
				require.Equal(t, []string{"direct"}, atStored(dlq), "direct, sent at the change, at its retention-1ns")
				at(tc.after)
				require.Empty(t, atStored(dlq), "direct at its retention")
			})
		})
	}
}

// TestAtDelayChangeStandardKeepsDelayedMessages checks spec 4.6 (scenario 39) on a standard queue: a new queue
// delay applies to new messages only; the delayed ones keep the delay they were sent with, higher or lower.
func TestAtDelayChangeStandardKeepsDelayedMessages(t *testing.T) {
	t.Parallel()
	atEachClock(t, func(t *testing.T, c *atClock) {
		q := atNew(t, c, "at-delay39", fifoq.WithDelay(10*time.Minute), fifoq.WithVisibilityTimeout(time.Hour))
		atSend(t, q, "", "a")
		aAt := c.now().Add(10 * time.Minute)
		c.advance(time.Minute)
		atSet(t, q, func(a *fifoq.Attributes) { a.Delay = 2 * time.Minute })
		atRequireTime(t, aAt, atSnap(t, q, "a").VisibleAt, "a after the delay became 2m")
		atSend(t, q, "", "b") // at 1m, visible at 3m
		atSet(t, q, func(a *fifoq.Attributes) { a.Delay = 0 })
		atRequireTime(t, aAt, atSnap(t, q, "a").VisibleAt, "a after the delay became 0")
		require.Equal(t, fifoq.Stats{Delayed: 2}, q.Stats(), "a cut does not release a or b")
		atSend(t, q, "", "c")
		require.Equal(t, []string{"c"}, atBodies(atRecv(t, q, 10)), "at 1m")
		c.advance(2*time.Minute - time.Nanosecond)
		require.Empty(t, atRecv(t, q, 10), "at 3m-1ns")
		c.advance(time.Nanosecond)
		require.Equal(t, []string{"b"}, atBodies(atRecv(t, q, 10)), "at 3m b's 2m delay ends")
		atSet(t, q, func(a *fifoq.Attributes) { a.Delay = 15 * time.Minute })
		atRequireTime(t, aAt, atSnap(t, q, "a").VisibleAt, "a after the delay became 15m")
		atSend(t, q, "", "d") // at 3m, visible at 18m
		c.advance(7*time.Minute - time.Nanosecond)
		require.Empty(t, atRecv(t, q, 10), "at 10m-1ns")
		c.advance(time.Nanosecond)
		require.Equal(t, []string{"a"}, atBodies(atRecv(t, q, 10)), "at 10m a's original delay ends")
		c.advance(8*time.Minute - time.Nanosecond)
		require.Empty(t, atRecv(t, q, 10), "at 18m-1ns")
		c.advance(time.Nanosecond)
		require.Equal(t, []string{"d"}, atBodies(atRecv(t, q, 10)), "at 18m")
	})
}

// atStep is a receive at a time: the messages it must return, which are then deleted.
type atStep struct {
	at   time.Duration // since the first send
	want []string
}

// TestAtDelayChangeFIFORedelays checks spec 4.6 (scenario 39) on a FIFO queue: a new queue delay applies to
// the delayed messages, counted from their send. A raise keeps them delayed longer; a cut to a time already
// passed makes them visible at once, in group order. New messages get the new delay.
func TestAtDelayChangeFIFORedelays(t *testing.T) {
	t.Parallel()
	// m1 (g1) and x (g2) are sent at 0, m2 (g1) at 1m, all with a delay of 10m; the delay changes at 2m and
	// n (g3) is sent then.
	for _, tc := range []struct {
		name  string
		delay time.Duration
		steps []atStep
	}{
		{"raised to 15m", 15 * time.Minute, []atStep{
			{2 * time.Minute, nil},
			{15*time.Minute - 1, nil}, {15 * time.Minute, []string{"m1", "x"}},
			{16*time.Minute - 1, nil}, {16 * time.Minute, []string{"m2"}},
			{17*time.Minute - 1, nil}, {17 * time.Minute, []string{"n"}},
		}},
		{"cut to 5m", 5 * time.Minute, []atStep{
			{2 * time.Minute, nil},
			{5*time.Minute - 1, nil}, {5 * time.Minute, []string{"m1", "x"}},
			{6*time.Minute - 1, nil}, {6 * time.Minute, []string{"m2"}},
			{7*time.Minute - 1, nil}, {7 * time.Minute, []string{"n"}},
		}},
		{"cut to 90s, passed for m1 and x", 90 * time.Second, []atStep{
			{2 * time.Minute, []string{"m1", "x"}},
			{150*time.Second - 1, nil}, {150 * time.Second, []string{"m2"}},
			{210*time.Second - 1, nil}, {210 * time.Second, []string{"n"}},
		}},
		{"cut to 1m, passed for all", time.Minute, []atStep{
			{2 * time.Minute, []string{"m1", "m2", "x"}},
			{3*time.Minute - 1, nil}, {3 * time.Minute, []string{"n"}},
		}},
		{"cut to 0", 0, []atStep{
			{2 * time.Minute, []string{"m1", "m2", "x", "n"}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			atEachClock(t, func(t *testing.T, c *atClock) {
				q := atNew(t, c, "at-delay39.fifo", fifoq.WithDelay(10*time.Minute), fifoq.WithVisibilityTimeout(time.Hour))
				start := c.now()
				atSend(t, q, "g1", "m1")
				atSend(t, q, "g2", "x")
				c.advance(time.Minute)
				atSend(t, q, "g1", "m2")
				c.advance(time.Minute)
				require.Equal(t, fifoq.Stats{Delayed: 3}, q.Stats(), "at 2m")

				atSet(t, q, func(a *fifoq.Attributes) { a.Delay = tc.delay })
				for body, sentAt := range map[string]time.Duration{"m1": 0, "x": 0, "m2": time.Minute} {
					s := atSnap(t, q, body)
					if due := sentAt + tc.delay; due > 2*time.Minute {
						require.Equal(t, fifoq.StateDelayed, s.State, "%s", body)
						atRequireTime(t, start.Add(due), s.VisibleAt, body+"'s VisibleAt")
					} else {
						require.Equal(t, fifoq.StateVisible, s.State, "%s: its new delay has passed", body)
					}
				}
				atSend(t, q, "g3", "n")
				elapsed := 2 * time.Minute
				for _, st := range tc.steps {
					c.advance(st.at - elapsed)
					elapsed = st.at
					ds := atRecv(t, q, 10)
					want := st.want
					if want == nil {
						want = []string{}
					}
					require.Equal(t, want, atBodies(ds), "at %v", st.at)
					atDelete(t, q, ds...)
				}
				require.Equal(t, fifoq.Stats{}, q.Stats(), "every message was received")
			})
		})
	}
}

// TestAtDelayCutWakesLongPoll checks spec 4.6 with 1.5.2: a cut of a FIFO queue's delay that makes a message
// visible at once returns it to a waiting long poll at once.
func TestAtDelayCutWakesLongPoll(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		q, err := fifoq.New("at-wake.fifo", fifoq.WithDelay(10*time.Minute))
		require.NoError(t, err)
		atSend(t, q, "g", "m")
		type result struct {
			ds  []fifoq.Delivery
			err error
			at  time.Time
		}
		ch := make(chan result, 1)
		start := time.Now()
		go func() {
			ds, err := q.Receive(context.Background(), fifoq.ReceiveOptions{WaitTime: 20 * time.Second})
			ch <- result{ds, err, time.Now()}
		}()
		synctest.Wait()
		select {
		case r := <-ch:
			require.FailNow(t, "the long poll returned before the change", "%v, %v", atBodies(r.ds), r.err)
		default:
		}
		atSet(t, q, func(a *fifoq.Attributes) { a.Delay = 0 })
		r := <-ch // a poll the change did not wake returns empty when its 20s end
		require.NoError(t, r.err)
		require.Equal(t, []string{"m"}, atBodies(r.ds))
		require.Equal(t, time.Duration(0), r.at.Sub(start), "returned at once")
	})
}

// TestAtVisibilityTimeoutAppliesToNextReceive checks spec 1.2.1 with SetAttributes: a new visibility timeout
// applies to the next receive; a message already in flight keeps the timeout it was received with.
func TestAtVisibilityTimeoutAppliesToNextReceive(t *testing.T) {
	t.Parallel()
	for _, k := range atKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			atEachClock(t, func(t *testing.T, c *atClock) {
				q := atNew(t, c, atName("at-vt", k.fifo))
				atSend(t, q, "g1", "a")
				atSend(t, q, "g2", "b")
				require.Equal(t, []string{"a"}, atBodies(atRecv(t, q, 1)))
				aAt := c.now().Add(30 * time.Second)
				atSet(t, q, func(a *fifoq.Attributes) { a.VisibilityTimeout = 5 * time.Minute })
				atRequireTime(t, aAt, atSnap(t, q, "a").VisibleAt, "a keeps its 30s")
				require.Equal(t, []string{"b"}, atBodies(atRecv(t, q, 1)))
				atRequireTime(t, c.now().Add(5*time.Minute), atSnap(t, q, "b").VisibleAt, "b gets 5m")
				c.advance(30*time.Second - time.Nanosecond)
				require.Empty(t, atRecv(t, q, 10), "at 30s-1ns")
				c.advance(time.Nanosecond)
				ds := atRecv(t, q, 10)
				require.Equal(t, []string{"a"}, atBodies(ds), "at 30s")
				require.Equal(t, 2, ds[0].ReceiveCount)
				atRequireTime(t, c.now().Add(5*time.Minute), atSnap(t, q, "a").VisibleAt, "a's second receive gets 5m")
				atSet(t, q, func(a *fifoq.Attributes) { a.VisibilityTimeout = 0 })
				c.advance(5*time.Minute - 30*time.Second - time.Nanosecond)
				require.Empty(t, atRecv(t, q, 10), "at 5m-1ns")
				c.advance(time.Nanosecond)
				ds = atRecv(t, q, 10)
				require.Equal(t, []string{"b"}, atBodies(ds), "at 5m")
				require.Equal(t, fifoq.StateVisible, atSnap(t, q, "b").State, "received with a timeout of 0")
			})
		})
	}
}

// TestAtReceiveWaitTimeAppliesToNextReceive checks spec 1.5.1 with SetAttributes: a receive without a wait
// time takes the queue's receive wait time as it is at the call.
func TestAtReceiveWaitTimeAppliesToNextReceive(t *testing.T) {
	t.Parallel()
	for _, k := range atKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				q, err := fifoq.New(atName("at-wait", k.fifo))
				require.NoError(t, err)
				for _, wait := range []time.Duration{0, 20 * time.Second, 5 * time.Second, 0} {
					atSet(t, q, func(a *fifoq.Attributes) { a.ReceiveWaitTime = wait })
					start := time.Now()
					require.Empty(t, atRecv(t, q, 1))
					require.Equal(t, wait, time.Since(start), "an empty receive with the queue's wait of %v", wait)
				}
			})
		})
	}
}

// TestAtMaxMessageSizeAppliesToNextSend checks spec 7.1.2 with SetAttributes: the next Send and SendBatch are
// checked against the new maximum size, and a rejected message is not stored.
func TestAtMaxMessageSizeAppliesToNextSend(t *testing.T) {
	t.Parallel()
	for _, k := range atKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			q := atNew(t, atManual(), atName("at-size", k.fifo))
			big := strings.Repeat("b", 1025)
			atSendMsg(t, q, atMsg(q, "g", big))
			atSet(t, q, func(a *fifoq.Attributes) { a.MaxMessageSize = 1024 })
			_, err := q.Send(ctx, atMsg(q, "g", big+"2"))
			atRequireRejected(t, err, fifoq.ErrMessageTooLarge, "Send of 1025 bytes under a maximum of 1024")
			_, err = q.SendBatch(ctx, []fifoq.Message{atMsg(q, "g", big+"3")})
			atRequireRejected(t, err, fifoq.ErrMessageTooLarge, "SendBatch of 1025 bytes under a maximum of 1024")
			edge := strings.Repeat("e", 1024)
			atSendMsg(t, q, atMsg(q, "g", edge))
			require.Equal(t, []string{big, edge}, atStored(q))
			atSet(t, q, func(a *fifoq.Attributes) { a.MaxMessageSize = 2048 })
			atSendMsg(t, q, atMsg(q, "g", big+"4"))
			require.Equal(t, []string{big, edge, big + "4"}, atStored(q))
		})
	}
}

// TestAtContentBasedDeduplicationToggle checks spec 3.12 and 3.1: content-based deduplication can be turned
// on and off on a FIFO queue; off, a send without a deduplication id fails with ErrMissingDeduplicationID
// (in SendBatch the whole call); on, it passes and duplicates by body are dropped.
func TestAtContentBasedDeduplicationToggle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := atNew(t, atManual(), "at-cbd.fifo")
	noID := fifoq.Message{Body: "body", GroupID: "g"}
	_, err := q.Send(ctx, noID)
	atRequireRejected(t, err, fifoq.ErrMissingDeduplicationID, "Send without an id, content-based deduplication off")

	atSet(t, q, func(a *fifoq.Attributes) { a.ContentBasedDeduplication = true })
	atSendMsg(t, q, noID)
	r, err := q.Send(ctx, noID)
	require.NoError(t, err)
	require.True(t, r.Duplicate, "the same body again is a duplicate by its SHA-256")
	_, err = q.SendBatch(ctx, []fifoq.Message{{Body: "batched", GroupID: "g"}})
	require.NoError(t, err)

	atSet(t, q, func(a *fifoq.Attributes) { a.ContentBasedDeduplication = false })
	_, err = q.Send(ctx, fifoq.Message{Body: "other", GroupID: "g"})
	atRequireRejected(t, err, fifoq.ErrMissingDeduplicationID, "Send without an id after turning it off")
	_, err = q.SendBatch(ctx, []fifoq.Message{{Body: "ok", GroupID: "g", DeduplicationID: "id"}, {Body: "other", GroupID: "g"}})
	atRequireRejected(t, err, fifoq.ErrMissingDeduplicationID, "SendBatch with an entry without an id after turning it off")
	atSendMsg(t, q, fifoq.Message{Body: "other", GroupID: "g", DeduplicationID: "explicit"})
	require.Equal(t, []string{"body", "batched", "other"}, atStored(q))
}

// TestAtDeduplicationScopeAppliesToNextSend checks spec 3.6, 3.7 with SetAttributes: a send after the change
// is deduplicated by the new scope.
func TestAtDeduplicationScopeAppliesToNextSend(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := atNew(t, atManual(), "at-scope.fifo")
	send := func(group, id, body string) bool {
		t.Helper()
		r, err := q.Send(ctx, fifoq.Message{Body: body, GroupID: group, DeduplicationID: id})
		require.NoError(t, err)
		return r.Duplicate
	}
	require.False(t, send("g1", "d", "1"))
	require.True(t, send("g2", "d", "2"), "scope queue: the same id in another group is a duplicate")
	atSet(t, q, func(a *fifoq.Attributes) { a.DeduplicationScope = fifoq.DeduplicationScopeMessageGroup })
	require.False(t, send("g1", "e", "3"))
	require.False(t, send("g2", "e", "4"), "scope messageGroup: the same id in another group is new")
	require.True(t, send("g2", "e", "5"), "scope messageGroup: the same id in the same group is a duplicate")
	require.Equal(t, []string{"1", "3", "4"}, atStored(q))
}

// TestAtZeroScopeMeansQueue checks the documented zero DeduplicationScope of Attributes: SetAttributes takes
// it as DeduplicationScopeQueue, on a FIFO queue (spec 3.6) as on a standard one (where it is no FIFO-only
// attribute, 3.12).
func TestAtZeroScopeMeansQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, k := range atKinds {
		var opts []fifoq.Option
		if k.fifo {
			opts = append(opts, fifoq.WithDeduplicationScope(fifoq.DeduplicationScopeMessageGroup))
		}
		q := atNew(t, atManual(), atName("at-scope0", k.fifo), opts...)
		a := q.Attributes()
		a.DeduplicationScope = 0
		require.NoError(t, q.SetAttributes(a), "%s: SetAttributes with DeduplicationScope 0", k.name)
		require.Equal(t, fifoq.DeduplicationScopeQueue, q.Attributes().DeduplicationScope, k.name)
		if k.fifo {
			_, err := q.Send(ctx, fifoq.Message{Body: "1", GroupID: "g1", DeduplicationID: "d"})
			require.NoError(t, err)
			r, err := q.Send(ctx, fifoq.Message{Body: "2", GroupID: "g2", DeduplicationID: "d"})
			require.NoError(t, err)
			require.True(t, r.Duplicate, "scope queue: the same id in another group is a duplicate")
		}
	}
}

// TestAtRedriveOnLiveQueue checks spec 6.1, 6.3 with SetAttributes: a redrive policy set on a queue in use
// moves a message on the receive after maxReceiveCount; removed, nothing moves; switched, messages move to
// the new DLQ. A queue is a DLQ while some queue's policy names it (6.8, 6.9.1).
func TestAtRedriveOnLiveQueue(t *testing.T) {
	t.Parallel()
	for _, k := range atKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			c := atManual()
			d1 := atNew(t, c, atName("at-live-d1", k.fifo))
			d2 := atNew(t, c, atName("at-live-d2", k.fifo),
				fifoq.WithRedriveAllowPolicy(fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveByQueue,
					Sources: []string{atName("at-live-src", k.fifo), atName("at-live-src2", k.fifo)}}))
			src := atNew(t, c, atName("at-live-src", k.fifo), fifoq.WithVisibilityTimeout(0))
			recvOne := func(body string, count int) {
				t.Helper()
				ds := atRecv(t, src, 10)
				require.Equal(t, []string{body}, atBodies(ds))
				require.Equal(t, count, ds[0].ReceiveCount, "ReceiveCount of %s", body)
			}

			m1 := atSend(t, src, "g", "m1")
			for i := 1; i <= 3; i++ {
				recvOne("m1", i)
			}
			atRequireNotDLQ(t, d1)
			atSet(t, src, func(a *fifoq.Attributes) { a.DeadLetterQueue, a.MaxReceiveCount = d1, 4 })
			require.NoError(t, src.SetAttributes(src.Attributes()))
			recvOne("m1", 4)
			require.Empty(t, atRecv(t, src, 10), "the 5th receive moves m1")
			require.Equal(t, []string{"m1"}, atStored(d1))
			s := atSnap(t, d1, "m1")
			require.Equal(t, m1.MessageID, s.MessageID)
			require.Equal(t, src.Name(), s.DeadLetterSource)
			require.Equal(t, 4, s.ReceiveCount)

			atSet(t, src, func(a *fifoq.Attributes) { a.DeadLetterQueue, a.MaxReceiveCount = nil, 0 })
			atRequireNotDLQ(t, d1)
			atSend(t, src, "g", "m2")
			for i := 1; i <= 6; i++ {
				recvOne("m2", i)
			}
			require.Equal(t, []string{"m1"}, atStored(d1), "without a policy nothing moves")

			atSet(t, src, func(a *fifoq.Attributes) { a.DeadLetterQueue, a.MaxReceiveCount = d1, 2 })
			require.Empty(t, atRecv(t, src, 10), "m2, received 6 times, moves on the next receive")
			require.Equal(t, []string{"m1", "m2"}, atStored(d1))

			atSet(t, src, func(a *fifoq.Attributes) { a.DeadLetterQueue, a.MaxReceiveCount = d2, 1 })
			atRequireNotDLQ(t, d1)
			atSend(t, src, "g", "m3")
			recvOne("m3", 1)
			require.Empty(t, atRecv(t, src, 10), "m3 moves to the new DLQ")
			require.Equal(t, []string{"m3"}, atStored(d2))
			require.Equal(t, []string{"m1", "m2"}, atStored(d1))
			st := atRequireDLQ(t, d2) // back to src
			require.Equal(t, 1, st.Moved)
			require.Equal(t, []string{"m3"}, atStored(src))
			require.Empty(t, atStored(d2))

			src2 := atNew(t, c, atName("at-live-src2", k.fifo), fifoq.WithDeadLetterQueue(d2, 1))
			atSet(t, src, func(a *fifoq.Attributes) { a.DeadLetterQueue, a.MaxReceiveCount = nil, 0 })
			atRequireDLQ(t, d2) // still src2's
			atSet(t, src2, func(a *fifoq.Attributes) { a.DeadLetterQueue, a.MaxReceiveCount = nil, 0 })
			atRequireNotDLQ(t, d2)
		})
	}
}

// TestAtExplicitZeroWaitTime checks ExplicitZero as ReceiveOptions.WaitTime (spec 1.5.1): a short poll on a
// queue whose receive wait time is 20s, returning at once with nothing, where a WaitTime of 0 waits the 20s.
func TestAtExplicitZeroWaitTime(t *testing.T) {
	t.Parallel()
	for _, k := range atKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				q, err := fifoq.New(atName("at-ez-wait", k.fifo), fifoq.WithReceiveWaitTime(20*time.Second))
				require.NoError(t, err)
				start := time.Now()
				require.Empty(t, atRecvWith(t, q, fifoq.ReceiveOptions{WaitTime: fifoq.ExplicitZero}))
				require.Equal(t, time.Duration(0), time.Since(start), "WaitTime ExplicitZero: no wait")
				require.Empty(t, atRecvWith(t, q, fifoq.ReceiveOptions{}))
				require.Equal(t, 20*time.Second, time.Since(start), "WaitTime 0: the queue's 20s")
			})
		})
	}
}

// TestAtExplicitZeroWaitTimeManualClock checks the same on a manual clock: the short poll returns without
// waiting on the clock. The receive runs in a goroutine of a synctest bubble, so a poll that waits is seen
// (by synctest.Wait) and released rather than blocking the test.
func TestAtExplicitZeroWaitTimeManualClock(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		clk := fifoq.NewManualClock(atStart)
		q, err := fifoq.New("at-ez-wait-manual", fifoq.WithClock(clk), fifoq.WithReceiveWaitTime(20*time.Second))
		require.NoError(t, err)
		type result struct {
			ds  []fifoq.Delivery
			err error
		}
		ch := make(chan result, 1)
		go func() {
			ds, err := q.Receive(context.Background(), fifoq.ReceiveOptions{WaitTime: fifoq.ExplicitZero, MaxMessages: 10})
			ch <- result{ds, err}
		}()
		synctest.Wait()
		var r result
		select {
		case r = <-ch:
		default:
			t.Errorf("the receive with WaitTime ExplicitZero waits on the clock (%d timers)", clk.Timers())
			clk.Advance(20 * time.Second)
			r = <-ch
		}
		require.NoError(t, r.err)
		require.Empty(t, r.ds)
		require.Zero(t, clk.Timers(), "a short poll leaves no timer")
		atRequireTime(t, atStart, clk.Now(), "the clock")
	})
}

// TestAtExplicitZeroVisibilityTimeout checks ExplicitZero as ReceiveOptions.VisibilityTimeout (spec 1.2.7,
// 1.2.8): the received message stays visible, and the next receive gets it again with receive count 2.
func TestAtExplicitZeroVisibilityTimeout(t *testing.T) {
	t.Parallel()
	for _, k := range atKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			c := atManual()
			q := atNew(t, c, atName("at-ez-vt", k.fifo)) // visibility timeout 30s
			atSend(t, q, "g", "m")
			ds := atRecvWith(t, q, fifoq.ReceiveOptions{VisibilityTimeout: fifoq.ExplicitZero})
			require.Equal(t, []string{"m"}, atBodies(ds))
			require.Equal(t, 1, ds[0].ReceiveCount)
			require.Equal(t, fifoq.Stats{Visible: 1}, q.Stats(), "received with an explicit 0: still visible")
			ds = atRecv(t, q, 10)
			require.Equal(t, []string{"m"}, atBodies(ds), "the next receive gets it again")
			require.Equal(t, 2, ds[0].ReceiveCount)
			require.Equal(t, fifoq.Stats{InFlight: 1}, q.Stats(), "received with the queue's 30s")
			atRequireTime(t, c.now().Add(30*time.Second), atSnap(t, q, "m").VisibleAt, "VisibleAt")
		})
	}
}

// TestAtExplicitZeroDelayStandard checks ExplicitZero as a standard queue's Message.Delay (spec 4.2, scenario
// 38): with a queue delay of 10s, a message with an explicit 0 is visible at once, one with 5s at 5s, and one
// with 0 (omitted) at 10s; the same through SendBatch.
func TestAtExplicitZeroDelayStandard(t *testing.T) {
	t.Parallel()
	for _, batch := range []bool{false, true} {
		t.Run(map[bool]string{false: "Send", true: "SendBatch"}[batch], func(t *testing.T) {
			t.Parallel()
			atEachClock(t, func(t *testing.T, c *atClock) {
				q := atNew(t, c, "at-ez-delay", fifoq.WithDelay(10*time.Second))
				ms := []fifoq.Message{
					{Body: "explicit0", Delay: fifoq.ExplicitZero},
					{Body: "5s", Delay: 5 * time.Second},
					{Body: "omitted"},
				}
				if batch {
					res, err := q.SendBatch(context.Background(), ms)
					require.NoError(t, err)
					require.Len(t, res, 3)
				} else {
					for _, m := range ms {
						atSendMsg(t, q, m)
					}
				}
				require.Equal(t, fifoq.Stats{Visible: 1, Delayed: 2}, q.Stats())
				require.Equal(t, []string{"explicit0"}, atBodies(atRecv(t, q, 10)), "at 0")
				c.advance(5*time.Second - time.Nanosecond)
				require.Empty(t, atRecv(t, q, 10), "at 5s-1ns")
				c.advance(time.Nanosecond)
				require.Equal(t, []string{"5s"}, atBodies(atRecv(t, q, 10)), "at 5s")
				c.advance(5*time.Second - time.Nanosecond)
				require.Empty(t, atRecv(t, q, 10), "at 10s-1ns")
				c.advance(time.Nanosecond)
				require.Equal(t, []string{"omitted"}, atBodies(atRecv(t, q, 10)), "at 10s, the queue delay")
			})
		})
	}
}

// TestAtExplicitZeroDelayFIFO checks spec 4.4 and 4.3: a FIFO queue accepts an explicit 0 as Message.Delay and
// applies its queue delay, and still rejects a delay above 0.
func TestAtExplicitZeroDelayFIFO(t *testing.T) {
	t.Parallel()
	atEachClock(t, func(t *testing.T, c *atClock) {
		ctx := context.Background()
		q := atNew(t, c, "at-ez-delay.fifo", fifoq.WithDelay(10*time.Second), fifoq.WithContentBasedDeduplication())
		atSendMsg(t, q, fifoq.Message{Body: "explicit0", GroupID: "g", Delay: fifoq.ExplicitZero})
		_, err := q.SendBatch(ctx, []fifoq.Message{{Body: "batched", GroupID: "g", Delay: fifoq.ExplicitZero}})
		require.NoError(t, err)
		atSendMsg(t, q, fifoq.Message{Body: "omitted", GroupID: "g"})
		_, err = q.Send(ctx, fifoq.Message{Body: "5s", GroupID: "g", Delay: 5 * time.Second})
		atRequireRejected(t, err, fifoq.ErrInvalidDelay, "FIFO Send with Delay 5s")
		require.Equal(t, fifoq.Stats{Delayed: 3}, q.Stats(), "the queue delay applies to all three")
		c.advance(10*time.Second - time.Nanosecond)
		require.Empty(t, atRecv(t, q, 10), "at 10s-1ns")
		c.advance(time.Nanosecond)
		require.Equal(t, []string{"explicit0", "batched", "omitted"}, atBodies(atRecv(t, q, 10)), "at 10s")
	})
}

// TestAtNegativeDurationsRejected checks that ExplicitZero is the only negative duration accepted: other
// negative delays, wait times and visibility timeouts are rejected as before (spec 4.1, 4.2, 1.5.1, 1.2.2),
// and change nothing; ExplicitZero is no queue option value.
func TestAtNegativeDurationsRejected(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, k := range atKinds {
		for _, d := range []time.Duration{-time.Nanosecond, -time.Second, fifoq.ExplicitZero + 1} {
			t.Run(fmt.Sprintf("%s/%d", k.name, d), func(t *testing.T) {
				t.Parallel()
				q := atNew(t, atManual(), atName("at-neg", k.fifo))
				m := atMsg(q, "g", "m")
				m.Delay = d
				_, err := q.Send(ctx, m)
				atRequireRejected(t, err, fifoq.ErrInvalidDelay, fmt.Sprintf("Send with Delay %d", d))
				require.Empty(t, atStored(q))
				atSend(t, q, "g", "stored")
				_, err = q.Receive(ctx, fifoq.ReceiveOptions{WaitTime: d})
				atRequireRejected(t, err, fifoq.ErrInvalidWaitTime, fmt.Sprintf("Receive with WaitTime %d", d))
				_, err = q.Receive(ctx, fifoq.ReceiveOptions{VisibilityTimeout: d})
				atRequireRejected(t, err, fifoq.ErrInvalidVisibilityTimeout, fmt.Sprintf("Receive with VisibilityTimeout %d", d))
				require.Equal(t, fifoq.Stats{Visible: 1}, q.Stats(), "rejected receives take nothing")
			})
		}
	}
	for name, opt := range map[string]fifoq.Option{
		"WithDelay":             fifoq.WithDelay(fifoq.ExplicitZero),
		"WithVisibilityTimeout": fifoq.WithVisibilityTimeout(fifoq.ExplicitZero),
		"WithReceiveWaitTime":   fifoq.WithReceiveWaitTime(fifoq.ExplicitZero),
	} {
		q, err := fifoq.New("at-neg-opt", opt)
		require.Nil(t, q, name)
		atRequireRejected(t, err, fifoq.ErrInvalidQueueAttribute, name+"(ExplicitZero)")
	}
}

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
		minRounds              = 200 // of the setter and the reader, which go on until the consumers end
		maxRounds              = 1_000_000
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
	rounds := func(yield func(i int) bool) { // minRounds, then until the consumers end
		for i := 0; ; i++ {
			if i >= maxRounds {
				l.fail("the consumers did not end within %d rounds", maxRounds)
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
				ds, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10, WaitTime: fifoq.ExplicitZero})
				if err != nil {
					l.fail("Receive: %v", err)
					return
				}
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
			if n := clk.Timers(); n > 0 { // a receive with WaitTime ExplicitZero took the queue's wait time
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

package fifoq_test

// Helpers of the Attributes and SetAttributes tests (TestAt*): the two clocks, queues, sends, receives, checks.

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// Tests of Queue.Attributes, Queue.SetAttributes and the No... fields of a call: spec 1.2, 1.5, 3.12, 4.2, 4.4, 4.6,
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

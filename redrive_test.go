package fifoq_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/stretchr/testify/require"
)

// Tests of dead-letter queues (spec 6.1-6.7, 5.4, 3.11, 1.4.3; scenarios 43-47), and the helpers that
// movetask_test.go shares. Every unexported top-level name starts with "rd".

// rdClock drives time for a scenario written once and run twice (style item 19): inside a testing/synctest
// bubble, where the queue's default clock is virtual, or by a ManualClock moved by hand.
type rdClock interface {
	// options gives a queue this clock.
	options() []fifoq.Option
	// now is the queues' time.
	now() time.Time
	// advance moves time forward by d and lets what it wakes run.
	advance(d time.Duration)
	// waitPolls returns once n long polls started in other goroutines are waiting.
	waitPolls(n int)
	// settle returns once tk has ended or waits on the clock (between two rate-limited batches). After a
	// Cancel, use tk.Wait instead: the timer of the pause being cancelled may still be pending.
	settle(tk *fifoq.MoveTask)
}

// rdManual drives a fifoq.ManualClock.
type rdManual struct{ clk *fifoq.ManualClock }

func (c rdManual) options() []fifoq.Option { return []fifoq.Option{fifoq.WithClock(c.clk)} }
func (c rdManual) now() time.Time          { return c.clk.Now() }
func (c rdManual) advance(d time.Duration) { c.clk.Advance(d) }
func (c rdManual) waitPolls(n int)         { c.clk.WaitTimers(n) }

// settle waits, with no real waiting and no polling, until the task's goroutine has ended or has set a
// timer on the clock (the only timers of the tests that call it). Both helper goroutines are gone when it
// returns.
func (c rdManual) settle(tk *fifoq.MoveTask) {
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan struct{})
	go func() {
		_ = tk.Wait(ctx)
		close(ended)
	}()
	paused := make(chan struct{})
	go func() {
		c.clk.WaitTimers(1)
		close(paused)
	}()
	select {
	case <-ended:
	case <-paused:
	}
	cancel()
	<-ended
	unblock := c.clk.AfterFunc(time.Hour, func() {}) // lets WaitTimers return if the task set no timer
	<-paused
	unblock.Stop()
}

// rdBubble drives the virtual clock of the synctest bubble the test runs in.
type rdBubble struct{}

func (rdBubble) options() []fifoq.Option { return nil }
func (rdBubble) now() time.Time          { return time.Now() }
func (rdBubble) advance(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}
func (rdBubble) waitPolls(int)             { synctest.Wait() }
func (rdBubble) settle(tk *fifoq.MoveTask) { synctest.Wait() }

// rdStart is where every manual clock starts.
var rdStart = time.Date(2025, 6, 1, 8, 0, 0, 0, time.UTC)

// rdNewManual returns a manual clock driver; tests of rules that do not depend on time never advance it.
func rdNewManual() rdManual { return rdManual{fifoq.NewManualClock(rdStart)} }

// rdEachClock runs f inside a synctest bubble (where the queues must be built), then with a ManualClock. The
// ManualClock run is left out when the synctest run failed: a missed wake-up would block it for good.
func rdEachClock(t *testing.T, f func(t *testing.T, c rdClock)) {
	t.Helper()
	ok := t.Run("synctest", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) { f(t, rdBubble{}) })
	})
	if !ok {
		return
	}
	t.Run("ManualClock", func(t *testing.T) { f(t, rdNewManual()) })
}

// rdKinds are the two queue types.
var rdKinds = []struct {
	name string
	fifo bool
}{{"standard", false}, {"fifo", true}}

// rdName makes a queue name of the type asked for.
func rdName(base string, fifo bool) string {
	if fifo {
		return base + ".fifo"
	}
	return base
}

// rdNew creates a queue on clock c.
func rdNew(t *testing.T, c rdClock, name string, opts ...fifoq.Option) *fifoq.Queue {
	t.Helper()
	q, err := fifoq.New(name, append(c.options(), opts...)...)
	require.NoError(t, err, "New(%q)", name)
	return q
}

// rdPair creates a dead-letter queue and a source queue that moves a message there on its second receive
// (maxReceiveCount 1, visibility timeout 0).
func rdPair(t *testing.T, c rdClock, fifo bool, base string, srcOpts ...fifoq.Option) (src, dlq *fifoq.Queue) {
	t.Helper()
	dlq = rdNew(t, c, rdName(base+"-dlq", fifo))
	opts := append([]fifoq.Option{fifoq.WithDeadLetterQueue(dlq, 1), fifoq.WithVisibilityTimeout(0)}, srcOpts...)
	src = rdNew(t, c, rdName(base+"-src", fifo), opts...)
	return src, dlq
}

// rdAttrs is a set of message attributes of every type.
func rdAttrs() map[string]fifoq.Attribute {
	return map[string]fifoq.Attribute{
		"s": {DataType: "String", StringValue: "text"},
		"n": {DataType: "Number.int", StringValue: "42"},
		"b": {DataType: "Binary", BinaryValue: []byte{0, 1, 2, 0xff}},
	}
}

// rdAttrsSize is the size rdAttrs adds to a message: names, types and values.
const rdAttrsSize = 1 + 6 + 4 + 1 + 10 + 2 + 1 + 6 + 4

// rdSend sends body to group with rdAttrs; on a FIFO queue the deduplication id is made of the body.
func rdSend(t *testing.T, q *fifoq.Queue, group, body string) fifoq.SendResult {
	t.Helper()
	m := fifoq.Message{Body: body, GroupID: group, Attributes: rdAttrs()}
	if q.FIFO() {
		m.DeduplicationID = fmt.Sprintf("d%d-%s", len(body), body[:min(len(body), 64)])
	}
	r, err := q.Send(context.Background(), m)
	require.NoError(t, err, "Send(%q) to %s", body, q.Name())
	require.False(t, r.Duplicate, "Send(%q) to %s was deduplicated", body, q.Name())
	return r
}

// rdRecv receives up to n messages with no wait and the queue's visibility timeout.
func rdRecv(t *testing.T, q *fifoq.Queue, n int) []fifoq.Delivery {
	t.Helper()
	ds, err := q.Receive(context.Background(), fifoq.ReceiveOptions{MaxMessages: n})
	require.NoError(t, err, "Receive(%d) from %s", n, q.Name())
	return ds
}

// rdOnly returns the single delivery of ds.
func rdOnly(t *testing.T, ds []fifoq.Delivery) fifoq.Delivery {
	t.Helper()
	require.Len(t, ds, 1, "want exactly one delivery, got %v", rdBodies(ds))
	return ds[0]
}

// rdBodies lists the bodies of ds, in order.
func rdBodies(ds []fifoq.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Body
	}
	return out
}

// rdSnaps is every message of q, oldest first.
func rdSnaps(q *fifoq.Queue) []fifoq.Snapshot { return slices.Collect(q.Messages()) }

// rdSnapBodies lists the bodies of q's messages, oldest first.
func rdSnapBodies(q *fifoq.Queue) []string {
	var out []string
	for s := range q.Messages() {
		out = append(out, s.Body)
	}
	return out
}

// rdTotal is the number of messages q holds, by its Stats.
func rdTotal(q *fifoq.Queue) int {
	s := q.Stats()
	return s.Visible + s.InFlight + s.Delayed
}

// rdFail sends bodies to src, which rdPair made, in group "g", and receives until every message of src has
// moved to its dead-letter queue. It returns the MessageIDs of the sends.
func rdFail(t *testing.T, src *fifoq.Queue, bodies ...string) []string {
	t.Helper()
	ids := make([]string, len(bodies))
	for i, b := range bodies {
		ids[i] = rdSend(t, src, "g", b).MessageID
	}
	for range 2*len(bodies) + 4 {
		if rdTotal(src) == 0 {
			break
		}
		rdRecv(t, src, 10)
	}
	require.Zero(t, rdTotal(src), "every message of %s moved to its dead-letter queue", src.Name())
	return ids
}

// rdBodyList returns prefix0, prefix1, ... prefix(n-1).
func rdBodyList(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

// rdRequireTime asserts that got is the instant want.
func rdRequireTime(t *testing.T, want, got time.Time, what string) {
	t.Helper()
	require.True(t, want.Equal(got), "%s: got %v, want %v", what, got, want)
}

// rdRequireRejected asserts that err is sentinel, by errors.Is, and carries its SQS code (and code, when the
// spec gives one).
func rdRequireRejected(t *testing.T, err error, sentinel *fifoq.Error, code string) {
	t.Helper()
	require.ErrorIs(t, err, sentinel)
	require.NotEmpty(t, sentinel.Code)
	require.Equal(t, sentinel.Code, fifoq.ErrorCode(err), "ErrorCode(%v)", err)
	if code != "" {
		require.Equal(t, code, fifoq.ErrorCode(err), "the SQS code of the rule, for %v", err)
	}
}

// rdStartTask starts a move task from q and makes sure it has ended when the test ends, failed or not: a
// task left waiting on the clock would outlive a synctest bubble, where time stops with the test.
func rdStartTask(t *testing.T, q, dest *fifoq.Queue, rate int) *fifoq.MoveTask {
	t.Helper()
	tk, err := q.StartMoveTask(context.Background(), dest, rate)
	require.NoError(t, err, "StartMoveTask from %s, rate %d", q.Name(), rate)
	t.Cleanup(func() {
		_ = tk.Cancel()
		_ = tk.Wait(context.Background())
	})
	return tk
}

// rdRequireNotDLQ asserts that q is no queue's dead-letter queue (and starts no task trying).
func rdRequireNotDLQ(t *testing.T, q *fifoq.Queue) {
	t.Helper()
	tk, err := q.StartMoveTask(context.Background(), nil, 0)
	require.Nil(t, tk)
	rdRequireRejected(t, err, fifoq.ErrNotDeadLetterQueue, "InvalidParameterValue")
	require.Empty(t, q.MoveTasks())
}

// TestRedrivePolicyValidation checks spec 6.1 (maxReceiveCount 1..1000, a DLQ must be given), 6.2
// (scenario 45: the DLQ is of the source's type) and 6.7 (scenario 46: RedriveAllowPolicy). A policy is
// checked at New, with a sentinel error and its SQS code, and a rejected New changes nothing: the DLQ does
// not become a dead-letter queue.
func TestRedrivePolicyValidation(t *testing.T) {
	t.Parallel()
	byQueue := func(names ...string) *fifoq.RedriveAllowPolicy {
		return &fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveByQueue, Sources: names}
	}
	ten := append(rdBodyList("other", 9), "src")
	eleven := append(rdBodyList("other", 10), "src")
	for _, tc := range []struct {
		name    string
		dlqName string
		allow   *fifoq.RedriveAllowPolicy // nil: the default
		dlqErr  *fifoq.Error              // New of the DLQ fails with this
		srcName string
		noDLQ   bool // WithDeadLetterQueue(nil, max)
		max     int
		srcErr  *fifoq.Error // New of the source fails with this
		code    string       // the SQS code the spec gives, if any
	}{
		{name: "6.1/maxReceiveCount 0", dlqName: "dlq", srcName: "src", max: 0,
			srcErr: fifoq.ErrInvalidRedrivePolicy, code: "InvalidParameterValue"},
		{name: "6.1/maxReceiveCount -1", dlqName: "dlq", srcName: "src", max: -1,
			srcErr: fifoq.ErrInvalidRedrivePolicy, code: "InvalidParameterValue"},
		{name: "6.1/maxReceiveCount 1001", dlqName: "dlq", srcName: "src", max: 1001,
			srcErr: fifoq.ErrInvalidRedrivePolicy, code: "InvalidParameterValue"},
		{name: "6.1/maxReceiveCount 1001 FIFO", dlqName: "dlq.fifo", srcName: "src.fifo", max: 1001,
			srcErr: fifoq.ErrInvalidRedrivePolicy, code: "InvalidParameterValue"},
		{name: "6.1/maxReceiveCount 1", dlqName: "dlq", srcName: "src", max: 1},
		{name: "6.1/maxReceiveCount 1000", dlqName: "dlq", srcName: "src", max: 1000},
		{name: "6.1/no dead-letter queue", dlqName: "dlq", srcName: "src", noDLQ: true, max: 3,
			srcErr: fifoq.ErrInvalidRedrivePolicy, code: "InvalidParameterValue"},
		{name: "6.2/scenario 45/standard source, FIFO DLQ", dlqName: "dlq.fifo", srcName: "src", max: 3,
			srcErr: fifoq.ErrInvalidRedrivePolicy},
		{name: "6.2/scenario 45/FIFO source, standard DLQ", dlqName: "dlq", srcName: "src.fifo", max: 3,
			srcErr: fifoq.ErrInvalidRedrivePolicy},
		{name: "6.2/standard with standard", dlqName: "dlq", srcName: "src", max: 3},
		{name: "6.2/FIFO with FIFO", dlqName: "dlq.fifo", srcName: "src.fifo", max: 3},
		{name: "6.7/allowAll is the default", dlqName: "dlq", srcName: "any-name", max: 3},
		{name: "6.7/allowAll", dlqName: "dlq", allow: &fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveAllowAll},
			srcName: "src", max: 3},
		{name: "6.7/scenario 46/denyAll", dlqName: "dlq", allow: &fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveDenyAll},
			srcName: "src", max: 3, srcErr: fifoq.ErrRedriveNotAllowed},
		{name: "6.7/scenario 46/denyAll FIFO", dlqName: "dlq.fifo",
			allow: &fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveDenyAll}, srcName: "src.fifo", max: 3,
			srcErr: fifoq.ErrRedriveNotAllowed},
		{name: "6.7/scenario 46/byQueue naming the source", dlqName: "dlq", allow: byQueue("src"), srcName: "src", max: 3},
		{name: "6.7/byQueue naming the FIFO source", dlqName: "dlq.fifo", allow: byQueue("src.fifo"),
			srcName: "src.fifo", max: 3},
		{name: "6.7/byQueue with 10 sources", dlqName: "dlq", allow: byQueue(ten...), srcName: "src", max: 3},
		{name: "6.7/byQueue not naming the source", dlqName: "dlq", allow: byQueue("other"), srcName: "src", max: 3,
			srcErr: fifoq.ErrRedriveNotAllowed},
		{name: "6.7/scenario 46/byQueue with 11 sources", dlqName: "dlq", allow: byQueue(eleven...),
			dlqErr: fifoq.ErrInvalidRedriveAllowPolicy},
		{name: "6.7/sources with allowAll", dlqName: "dlq",
			allow:  &fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveAllowAll, Sources: []string{"src"}},
			dlqErr: fifoq.ErrInvalidRedriveAllowPolicy},
		{name: "6.7/sources with denyAll", dlqName: "dlq",
			allow:  &fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveDenyAll, Sources: []string{"src"}},
			dlqErr: fifoq.ErrInvalidRedriveAllowPolicy},
		{name: "6.7/unknown permission", dlqName: "dlq", allow: &fifoq.RedriveAllowPolicy{Permission: 7},
			dlqErr: fifoq.ErrInvalidRedriveAllowPolicy},
		{name: "6.7/byQueue source that is no queue name", dlqName: "dlq", allow: byQueue("not a name"),
			dlqErr: fifoq.ErrInvalidRedriveAllowPolicy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var dlqOpts []fifoq.Option
			if tc.allow != nil {
				dlqOpts = append(dlqOpts, fifoq.WithRedriveAllowPolicy(*tc.allow))
			}
			dlq, err := fifoq.New(tc.dlqName, dlqOpts...)
			if tc.dlqErr != nil {
				require.Nil(t, dlq)
				rdRequireRejected(t, err, tc.dlqErr, tc.code)
				return
			}
			require.NoError(t, err)
			target := dlq
			if tc.noDLQ {
				target = nil
			}
			src, err := fifoq.New(tc.srcName, fifoq.WithDeadLetterQueue(target, tc.max))
			if tc.srcErr != nil {
				require.Nil(t, src)
				rdRequireRejected(t, err, tc.srcErr, tc.code)
				rdRequireNotDLQ(t, dlq) // a rejected New changes nothing
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.srcName, src.Name())
			// Now dlq is a dead-letter queue: an (empty) move task can start and completes.
			tk := rdStartTask(t, dlq, nil, 0)
			require.NoError(t, tk.Wait(context.Background()))
			st := tk.Status()
			require.Equal(t, fifoq.MoveTaskCompleted, st.State, "%v", st)
			require.Zero(t, st.Moved)
			require.Zero(t, st.ToMove)
		})
	}
}

// TestRedriveMovePointScenario43 checks spec 6.3, 6.4 and 1.4.3 (scenario 43, and the 1.4.3 test with
// maxReceiveCount 1): receives 1..maxReceiveCount return the message; the next receive moves it to the DLQ
// instead of returning it. In the DLQ it keeps MessageID, body, attributes and group; DeadLetterSource names
// the source; its receive count carries on (3 on the first DLQ receive with maxReceiveCount 2). On a FIFO
// DLQ its deduplication id is its MessageID (3.11) and SentAt is the move (5.4); on a standard one SentAt
// stays the original send.
func TestRedriveMovePointScenario43(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		fifo bool
		max  int
		vt   time.Duration
	}{
		{"standard/max 2/VT 0", false, 2, 0}, // scenario 43 as written
		{"fifo/max 2/VT 0", true, 2, 0},
		{"standard/max 1/VT 0", false, 1, 0}, // 1.4.3: 2 on the first DLQ receive
		{"fifo/max 1/VT 0", true, 1, 0},
		{"standard/max 3/VT 10s", false, 3, 10 * time.Second},
		{"fifo/max 2/VT 10s", true, 2, 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rdEachClock(t, func(t *testing.T, c rdClock) {
				ctx := context.Background()
				dlq := rdNew(t, c, rdName("dlq43", tc.fifo))
				src := rdNew(t, c, rdName("src43", tc.fifo),
					fifoq.WithDeadLetterQueue(dlq, tc.max), fifoq.WithVisibilityTimeout(tc.vt))
				sent := rdSend(t, src, "g", "m")
				sentAt := c.now()
				c.advance(time.Second)
				firstAt := c.now()
				for i := 1; i <= tc.max; i++ {
					d := rdOnly(t, rdRecv(t, src, 10))
					require.Equal(t, sent.MessageID, d.MessageID)
					require.Equal(t, i, d.ReceiveCount, "receive %d in the source", i)
					require.Empty(t, d.DeadLetterSource, "not moved yet")
					c.advance(tc.vt + time.Second)
				}
				moveAt := c.now()
				require.Empty(t, rdBodies(rdRecv(t, src, 10)), "receive %d moves the message instead of returning it", tc.max+1)
				require.Equal(t, fifoq.Stats{}, src.Stats(), "the source holds nothing")
				require.Equal(t, fifoq.Stats{Visible: 1}, dlq.Stats(), "the DLQ holds the message, visible")

				wantDedup, wantSentAt := "", sentAt
				if tc.fifo {
					wantDedup, wantSentAt = sent.MessageID, moveAt
				}
				snaps := rdSnaps(dlq)
				require.Len(t, snaps, 1)
				s := snaps[0]
				require.Equal(t, sent.MessageID, s.MessageID, "6.4: same MessageID")
				require.Equal(t, "m", s.Body)
				require.Equal(t, "g", s.GroupID, "6.4: the group is kept")
				require.Equal(t, rdAttrs(), s.Attributes, "6.4: attributes are kept")
				require.Equal(t, src.Name(), s.DeadLetterSource, "Snapshot.DeadLetterSource")
				require.Equal(t, tc.max, s.ReceiveCount, "the receive that moved it did not count")
				require.Equal(t, fifoq.StateVisible, s.State)
				require.Equal(t, wantDedup, s.DeduplicationID, "3.11")
				rdRequireTime(t, wantSentAt, s.SentAt, "Snapshot.SentAt (5.4)")
				rdRequireTime(t, firstAt, s.FirstReceivedAt, "Snapshot.FirstReceivedAt")

				c.advance(time.Second)
				d := rdOnly(t, rdRecv(t, dlq, 10))
				require.Equal(t, sent.MessageID, d.MessageID, "6.4: same MessageID")
				require.Equal(t, "m", d.Body)
				require.Equal(t, "g", d.GroupID)
				require.Equal(t, rdAttrs(), d.Attributes)
				require.Equal(t, src.Name(), d.DeadLetterSource, "Delivery.DeadLetterSource")
				require.Equal(t, tc.max+1, d.ReceiveCount, "1.4.3: the receive count carries on in the DLQ")
				require.Equal(t, wantDedup, d.DeduplicationID, "3.11")
				rdRequireTime(t, wantSentAt, d.SentAt, "Delivery.SentAt (5.4)")
				rdRequireTime(t, firstAt, d.FirstReceivedAt, "Delivery.FirstReceivedAt")
				require.NoError(t, dlq.Delete(ctx, d.ReceiptHandle), "the DLQ's own handle deletes it")
				require.Equal(t, fifoq.Stats{}, dlq.Stats())
			})
		})
	}
}

// TestRedriveReceiveGoesOn checks spec 6.3: the receive that moves a message to the DLQ does not return it,
// but goes on with the other messages.
func TestRedriveReceiveGoesOn(t *testing.T) {
	t.Parallel()
	c := rdNewManual()
	src, dlq := rdPair(t, c, false, "goes-on")
	for _, b := range []string{"m1", "m2", "m3"} {
		rdSend(t, src, "", b)
	}
	require.Equal(t, []string{"m1"}, rdBodies(rdRecv(t, src, 1)))
	ds := rdRecv(t, src, 10)
	require.ElementsMatch(t, []string{"m2", "m3"}, rdBodies(ds), "m1 moved; the same receive returned the others")
	for _, d := range ds {
		require.Equal(t, 1, d.ReceiveCount)
	}
	require.Equal(t, []string{"m1"}, rdSnapBodies(dlq))
	require.Equal(t, fifoq.Stats{Visible: 2}, src.Stats(), "VT 0: m2, m3 are visible again")
}

// TestRedriveFIFOUnblocksGroupScenario44 checks spec 6.5 and 3.11 (scenario 44): a FIFO head that keeps
// failing blocks its group until it moves; the receive that moves it goes on with the next messages of the
// same group, and other groups. In the DLQ its deduplication id is its MessageID.
func TestRedriveFIFOUnblocksGroupScenario44(t *testing.T) {
	t.Parallel()
	for _, vt := range []time.Duration{0, 10 * time.Second} {
		t.Run(fmt.Sprintf("VT %v", vt), func(t *testing.T) {
			t.Parallel()
			rdEachClock(t, func(t *testing.T, c rdClock) {
				dlq := rdNew(t, c, "dlq44.fifo")
				src := rdNew(t, c, "src44.fifo", fifoq.WithDeadLetterQueue(dlq, 2), fifoq.WithVisibilityTimeout(vt))
				head := rdSend(t, src, "g", "g-m1")
				rdSend(t, src, "g", "g-m2")
				rdSend(t, src, "g", "g-m3")
				for i := 1; i <= 2; i++ {
					d := rdOnly(t, rdRecv(t, src, 1))
					require.Equal(t, "g-m1", d.Body, "receive %d: the group's head", i)
					require.Equal(t, i, d.ReceiveCount)
					c.advance(vt)
				}
				// Sent after g came back: a group waiting before would be served before g.
				rdSend(t, src, "h", "h-m1")
				ds := rdRecv(t, src, 10)
				require.Equal(t, []string{"g-m2", "g-m3", "h-m1"}, rdBodies(ds),
					"g-m1 moved, and the same receive returned the rest of its group, then the other group")
				for _, d := range ds {
					require.Equal(t, 1, d.ReceiveCount, "%s", d.Body)
				}
				d := rdOnly(t, rdRecv(t, dlq, 10))
				require.Equal(t, "g-m1", d.Body)
				require.Equal(t, head.MessageID, d.MessageID)
				require.Equal(t, head.MessageID, d.DeduplicationID, "3.11: the deduplication id is the MessageID")
				require.Equal(t, "g", d.GroupID)
				require.Equal(t, 3, d.ReceiveCount)
				require.Equal(t, src.Name(), d.DeadLetterSource)
			})
		})
	}
}

// TestRedriveFIFOSameGroupMovesTogether checks spec 6.3 and 6.5 on a FIFO queue: several failing messages
// of one group all move on one receive, in order, and the DLQ keeps their group order.
func TestRedriveFIFOSameGroupMovesTogether(t *testing.T) {
	t.Parallel()
	src, dlq := rdPair(t, rdNewManual(), true, "together")
	for _, b := range []string{"a1", "a2", "a3"} {
		rdSend(t, src, "a", b)
	}
	require.Equal(t, []string{"a1", "a2", "a3"}, rdBodies(rdRecv(t, src, 10)))
	rdSend(t, src, "a", "a4")
	require.Equal(t, []string{"a4"}, rdBodies(rdRecv(t, src, 10)), "a1..a3 moved; a4 is next in the group")
	require.Equal(t, []string{"a1", "a2", "a3"}, rdBodies(rdRecv(t, dlq, 10)), "group order kept in the DLQ")
}

// TestRedriveDLQRetentionScenario47 checks spec 5.4 (scenario 47): in a standard DLQ a message expires by
// its original send time, in a FIFO DLQ by the time of the move.
func TestRedriveDLQRetentionScenario47(t *testing.T) {
	t.Parallel()
	const day = 24 * time.Hour
	for _, tc := range []struct {
		name         string
		fifo         bool
		age          time.Duration // in the source before the move
		dlqRetention time.Duration
		life         time.Duration // in the DLQ after the move
	}{
		{"standard/1 day old, 4 days", false, day, 4 * day, 3 * day}, // scenario 47
		{"fifo/1 day old, 4 days", true, day, 4 * day, 4 * day},      // scenario 47
		{"standard/2 days old, 1 day", false, 2 * day, day, 0},
		{"fifo/2 days old, 1 day", true, 2 * day, day, day},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rdEachClock(t, func(t *testing.T, c rdClock) {
				dlq := rdNew(t, c, rdName("dlq47", tc.fifo), fifoq.WithRetention(tc.dlqRetention))
				src := rdNew(t, c, rdName("src47", tc.fifo),
					fifoq.WithDeadLetterQueue(dlq, 1), fifoq.WithVisibilityTimeout(30*time.Second))
				sent := rdSend(t, src, "g", "m")
				sentAt := c.now()
				rdOnly(t, rdRecv(t, src, 1))
				c.advance(tc.age)
				require.Empty(t, rdRecv(t, src, 1), "moved")
				moveAt := c.now()
				require.Zero(t, rdTotal(src))
				if tc.life == 0 {
					require.Equal(t, fifoq.Stats{}, dlq.Stats(), "older than the DLQ's retention: gone at once")
					require.Empty(t, rdSnaps(dlq))
					return
				}
				snaps := rdSnaps(dlq)
				require.Len(t, snaps, 1)
				require.Equal(t, sent.MessageID, snaps[0].MessageID)
				want := sentAt
				if tc.fifo {
					want = moveAt
				}
				rdRequireTime(t, want, snaps[0].SentAt, "SentAt in the DLQ")
				c.advance(tc.life - time.Second)
				require.Equal(t, fifoq.Stats{Visible: 1}, dlq.Stats(), "one second before the end of its retention")
				c.advance(time.Second)
				require.Equal(t, fifoq.Stats{}, dlq.Stats(), "%v after the move", tc.life)
				require.Empty(t, rdSnaps(dlq))
			})
		})
	}
}

// TestRedriveConservation checks spec 6.3 (conservation, style item 20): a message is in the source, in the
// DLQ or deleted, never in two places or none, by the Stats of both queues after every call.
func TestRedriveConservation(t *testing.T) {
	t.Parallel()
	for _, k := range rdKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			c := rdNewManual()
			dlq := rdNew(t, c, rdName("cons-dlq", k.fifo))
			src := rdNew(t, c, rdName("cons-src", k.fifo),
				fifoq.WithDeadLetterQueue(dlq, 3), fifoq.WithVisibilityTimeout(10*time.Second))
			const n = 30
			sent := map[string]string{} // MessageID -> body
			for i := range n {
				b := fmt.Sprintf("m%02d", i)
				sent[rdSend(t, src, fmt.Sprintf("g%d", i%4), b).MessageID] = b
			}
			deleted := map[string]bool{}
			check := func(step string) {
				t.Helper()
				require.Equal(t, n, rdTotal(src)+rdTotal(dlq)+len(deleted),
					"%s: source %+v + DLQ %+v + %d deleted", step, src.Stats(), dlq.Stats(), len(deleted))
			}
			for round := 0; rdTotal(src) > 0; round++ {
				require.Less(t, round, 100, "the source never empties")
				for _, d := range rdRecv(t, src, 7) {
					var i int
					_, err := fmt.Sscanf(d.Body, "m%d", &i)
					require.NoError(t, err)
					if i%5 == 0 && d.ReceiveCount == 2 {
						require.NoError(t, src.Delete(context.Background(), d.ReceiptHandle))
						deleted[d.MessageID] = true
					}
				}
				check(fmt.Sprintf("round %d", round))
				c.advance(10 * time.Second)
				check(fmt.Sprintf("after round %d", round))
			}
			var want []string
			for id, b := range sent {
				if !deleted[id] {
					want = append(want, b)
				}
			}
			var got []string
			for s := range dlq.Messages() {
				require.Equal(t, sent[s.MessageID], s.Body, "MessageID kept")
				require.Equal(t, 3, s.ReceiveCount)
				got = append(got, s.Body)
			}
			require.ElementsMatch(t, want, got, "every message not deleted is in the DLQ, once")
			require.Len(t, deleted, 6)
		})
	}
}

// TestRedriveSourceHandleAfterMove checks spec 1.3.4 and 1.3.5 with 6.3: once a message has moved, a receipt
// handle of the source names nothing: Delete succeeds (standard: any handle; FIFO: the message is gone) and
// deletes nothing else, not even a new message in the same slot, and ChangeVisibility says the message is not
// available. The DLQ refuses the source's handle.
func TestRedriveSourceHandleAfterMove(t *testing.T) {
	t.Parallel()
	for _, k := range rdKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			rdEachClock(t, func(t *testing.T, c rdClock) {
				ctx := context.Background()
				dlq := rdNew(t, c, rdName("handle-dlq", k.fifo))
				src := rdNew(t, c, rdName("handle-src", k.fifo),
					fifoq.WithDeadLetterQueue(dlq, 1), fifoq.WithVisibilityTimeout(10*time.Second))
				sent := rdSend(t, src, "g", "m")
				d := rdOnly(t, rdRecv(t, src, 1))
				require.Equal(t, "m", d.Body)
				c.advance(10 * time.Second)
				// Sent after m came back: on FIFO a group waiting before would be served before m's.
				rdSend(t, src, "h", "other")
				if k.fifo {
					err := src.Delete(ctx, d.ReceiptHandle)
					rdRequireRejected(t, err, fifoq.ErrReceiptHandleExpired, "InvalidParameterValue")
				}
				require.Equal(t, []string{"other"}, rdBodies(rdRecv(t, src, 1)), "m moved; the receive went on")
				require.Equal(t, []string{"m"}, rdSnapBodies(dlq))
				rdSend(t, src, "g", "new") // may take the moved message's place
				require.NoError(t, src.Delete(ctx, d.ReceiptHandle), "the message is gone: Delete succeeds")
				require.NoError(t, src.Delete(ctx, d.ReceiptHandle), "and again")
				err := src.ChangeVisibility(ctx, d.ReceiptHandle, 5*time.Second)
				rdRequireRejected(t, err, fifoq.ErrMessageNotAvailable, "InvalidParameterValue")
				require.ElementsMatch(t, []string{"other", "new"}, rdSnapBodies(src), "the old handle deleted nothing")
				require.Equal(t, fifoq.Stats{Visible: 1, InFlight: 1}, src.Stats())
				err = dlq.Delete(ctx, d.ReceiptHandle)
				rdRequireRejected(t, err, fifoq.ErrReceiptHandleInvalid, "ReceiptHandleIsInvalid")
				snaps := rdSnaps(dlq)
				require.Len(t, snaps, 1, "the DLQ still holds the message")
				require.Equal(t, sent.MessageID, snaps[0].MessageID)
			})
		})
	}
}

// TestRedriveLongPollOnDLQWokenByMove checks spec 1.5.2 with 6.3: a long poll waiting on an empty DLQ returns
// the moment a receive on the source moves a message there.
func TestRedriveLongPollOnDLQWokenByMove(t *testing.T) {
	t.Parallel()
	type result struct {
		ds  []fifoq.Delivery
		err error
		at  time.Time
	}
	for _, k := range rdKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			rdEachClock(t, func(t *testing.T, c rdClock) {
				src, dlq := rdPair(t, c, k.fifo, "poll")
				sent := rdSend(t, src, "g", "m")
				rdOnly(t, rdRecv(t, src, 1))
				start := c.now()
				ctx, cancel := context.WithCancel(context.Background())
				t.Cleanup(cancel) // ends the poll if the test fails first
				poll := make(chan result, 1)
				go func() {
					ds, err := dlq.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10, WaitTime: 20 * time.Second})
					poll <- result{ds, err, c.now()}
				}()
				c.waitPolls(1)
				c.advance(2 * time.Second)
				select {
				case r := <-poll:
					require.FailNow(t, "the long poll returned before the move", "%v, %v", rdBodies(r.ds), r.err)
				default:
				}
				require.Empty(t, rdRecv(t, src, 1), "this receive moves m")
				r := <-poll
				require.NoError(t, r.err)
				d := rdOnly(t, r.ds)
				require.Equal(t, sent.MessageID, d.MessageID)
				require.Equal(t, src.Name(), d.DeadLetterSource)
				require.Equal(t, 2, d.ReceiveCount)
				require.Equal(t, 2*time.Second, r.at.Sub(start), "woken by the move, not by the end of its wait")
			})
		})
	}
}

// TestRedriveChain checks spec 6.3 and 6.4 across a chain of dead-letter queues: a DLQ with its own redrive
// policy moves a message on again, counting the receives it had before; DeadLetterSource names the queue it
// came from last, and the MessageID stays the original's.
func TestRedriveChain(t *testing.T) {
	t.Parallel()
	for _, k := range rdKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			rdEachClock(t, func(t *testing.T, c rdClock) {
				last := rdNew(t, c, rdName("chain-last", k.fifo))
				mid := rdNew(t, c, rdName("chain-mid", k.fifo), fifoq.WithDeadLetterQueue(last, 2), fifoq.WithVisibilityTimeout(0))
				src := rdNew(t, c, rdName("chain-src", k.fifo), fifoq.WithDeadLetterQueue(mid, 1), fifoq.WithVisibilityTimeout(0))
				sent := rdSend(t, src, "g", "m")
				require.Equal(t, 1, rdOnly(t, rdRecv(t, src, 1)).ReceiveCount)
				require.Empty(t, rdRecv(t, src, 1))
				c.advance(time.Minute)
				d := rdOnly(t, rdRecv(t, mid, 1))
				require.Equal(t, 2, d.ReceiveCount, "carried on from the source")
				require.Equal(t, src.Name(), d.DeadLetterSource)
				require.Equal(t, sent.MessageID, d.MessageID)
				c.advance(time.Minute)
				moveAt := c.now()
				require.Empty(t, rdRecv(t, mid, 1), "the count reached mid's maxReceiveCount 2: moved on")
				require.Zero(t, rdTotal(mid))
				d = rdOnly(t, rdRecv(t, last, 1))
				require.Equal(t, 3, d.ReceiveCount)
				require.Equal(t, mid.Name(), d.DeadLetterSource, "the queue it came from last")
				require.Equal(t, sent.MessageID, d.MessageID)
				require.Equal(t, "m", d.Body)
				require.Equal(t, rdAttrs(), d.Attributes)
				if k.fifo {
					require.Equal(t, sent.MessageID, d.DeduplicationID, "3.11")
					rdRequireTime(t, moveAt, d.SentAt, "5.4: SentAt on a FIFO DLQ is the last move")
				}
			})
		})
	}
}

// TestRedriveMoveInLongPoll checks spec 6.3 with 1.5.2: the move happens on a receive, a long poll's too. A
// long poll on the source wakes when the message's visibility timeout ends, moves the message instead of
// returning it, and waits on to the end of its wait; the DLQ holds the message from that moment.
func TestRedriveMoveInLongPoll(t *testing.T) {
	t.Parallel()
	type result struct {
		ds  []fifoq.Delivery
		err error
		at  time.Time
	}
	for _, k := range rdKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			rdEachClock(t, func(t *testing.T, c rdClock) {
				dlq := rdNew(t, c, rdName("lp-dlq", k.fifo))
				src := rdNew(t, c, rdName("lp-src", k.fifo),
					fifoq.WithDeadLetterQueue(dlq, 1), fifoq.WithVisibilityTimeout(5*time.Second))
				sent := rdSend(t, src, "g", "m")
				start := c.now()
				rdOnly(t, rdRecv(t, src, 1))
				ctx, cancel := context.WithCancel(context.Background())
				t.Cleanup(cancel)
				poll := make(chan result, 1)
				go func() {
					ds, err := src.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10, WaitTime: 20 * time.Second})
					poll <- result{ds, err, c.now()}
				}()
				c.waitPolls(1)
				c.advance(5 * time.Second)
				c.waitPolls(1) // the poll moved the message and waits again
				require.Equal(t, fifoq.Stats{}, src.Stats(), "moved by the long poll at 5s")
				snaps := rdSnaps(dlq)
				require.Len(t, snaps, 1)
				require.Equal(t, sent.MessageID, snaps[0].MessageID)
				if k.fifo {
					rdRequireTime(t, start.Add(5*time.Second), snaps[0].SentAt, "SentAt in a FIFO DLQ: the move")
				}
				select {
				case r := <-poll:
					require.FailNow(t, "the long poll returned at the move", "%v, %v", rdBodies(r.ds), r.err)
				default:
				}
				c.advance(15 * time.Second)
				r := <-poll
				require.NoError(t, r.err)
				require.Empty(t, rdBodies(r.ds))
				require.Equal(t, 20*time.Second, r.at.Sub(start), "the poll waited to the end")
			})
		})
	}
}

package fifoqtest_test

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/fifoqtest"
	"github.com/stretchr/testify/require"
)

// check runs an assertion with a fakeTB and returns what it reported: "" for a pass. A failure must stop
// the test (FailNow).
func check(t *testing.T, assert func(tb testing.TB)) string {
	t.Helper()
	tb := &fakeTB{}
	assert(tb)
	require.Equal(t, tb.report() != "", tb.fatal, "a failure reports and stops the test; a pass does neither")
	return tb.report()
}

// deliveries makes the deliveries of a batch from "group/body#receiveCount" (group and count optional),
// with the body as MessageID.
func deliveries(specs ...string) []fifoq.Delivery {
	var ds []fifoq.Delivery
	for _, s := range specs {
		group, rest, ok := strings.Cut(s, "/")
		if !ok {
			group, rest = "", s
		}
		body, count, _ := strings.Cut(rest, "#")
		n, err := strconv.Atoi(cmp.Or(count, "1"))
		if err != nil {
			panic(err)
		}
		ds = append(ds, fifoq.Delivery{Message: fifoq.Message{GroupID: group, Body: body}, MessageID: body, ReceiveCount: n})
	}
	return ds
}

func TestRequireDeliveredInOrder(t *testing.T) {
	t.Parallel()
	r := &fifoqtest.Result{Batches: []fifoqtest.Batch{
		{Deliveries: deliveries("g1/a", "g1/c", "g2/x")},
		{Deliveries: deliveries("g1/c#2", "g1/b")}, // c again: a redelivery does not count
		{}, // a batch the handler did not see
	}}
	for _, tc := range []struct {
		name string
		want map[string][]string
		msg  string
	}{
		{"right", map[string][]string{"g1": {"a", "c", "b"}, "g2": {"x"}}, ""},
		{"swapped", map[string][]string{"g1": {"a", "b", "c"}, "g2": {"x"}},
			`group "g1": delivered ["a" "c" "b"], want ["a" "b" "c"]`},
		{"missing and extra groups", map[string][]string{"g1": {"a", "c", "b"}, "g3": {"y"}},
			`group "g2": delivered ["x"], want []` + "\n" + `group "g3": delivered [], want ["y"]`},
		{"every difference, sorted by group", map[string][]string{"g1": {"a"}, "g2": {}},
			`group "g1": delivered ["a" "c" "b"], want ["a"]` + "\n" + `group "g2": delivered ["x"], want []`},
	} {
		got := check(t, func(tb testing.TB) { fifoqtest.RequireDeliveredInOrder(tb, r, tc.want) })
		require.Equal(t, tc.msg, got, tc.name)
	}

	standard := &fifoqtest.Result{Batches: []fifoqtest.Batch{{Deliveries: deliveries("a", "b")}}}
	require.Empty(t, check(t, func(tb testing.TB) {
		fifoqtest.RequireDeliveredInOrder(tb, standard, map[string][]string{"": {"a", "b"}})
	}), "no group is group \"\"")
	require.Equal(t, `group "": delivered ["a" "b"], want ["b" "a"]`, check(t, func(tb testing.TB) {
		fifoqtest.RequireDeliveredInOrder(tb, standard, map[string][]string{"": {"b", "a"}})
	}))
	require.Equal(t, "no Result (Drain failed)", check(t, func(tb testing.TB) {
		fifoqtest.RequireDeliveredInOrder(tb, nil, nil)
	}))
}

// deadLetters returns a dead-letter queue holding bodies, each moved after maxReceiveCount receives.
func deadLetters(t *testing.T, maxReceiveCount int, bodies ...string) *fifoq.Queue {
	t.Helper()
	clk := fifoq.NewManualClock(epoch)
	dlq := fifoqtest.NewQueue(t, "dlq.fifo", fifoq.WithClock(clk))
	q := fifoqtest.NewQueue(t, "src.fifo", fifoq.WithClock(clk), fifoq.WithVisibilityTimeout(0),
		fifoq.WithDeadLetterQueue(dlq, maxReceiveCount))
	for _, b := range bodies {
		fifoqtest.SendGroup(t, q, "g-"+b, b)
	}
	for range maxReceiveCount + 1 { // the last receive moves them
		_, err := q.Receive(t.Context(), fifoq.ReceiveOptions{MaxMessages: 10})
		require.NoError(t, err)
	}
	require.Equal(t, fifoq.Stats{}, q.Stats())
	return dlq
}

func TestRequireInDLQ(t *testing.T) {
	t.Parallel()
	dlq := deadLetters(t, 3, "poison", "ok")
	other := deadLetters(t, 2, "poison")
	for _, tc := range []struct {
		name string
		dlq  *fifoq.Queue
		want map[string]int
		msg  string
	}{
		{"right", dlq, map[string]int{"poison": 3, "ok": 3}, ""},
		{"receive count", other, map[string]int{"poison": 3},
			"dead-letter queue dlq.fifo:\n\t\"poison\": received 2 times, want 3"},
		{"missing and extra", dlq, map[string]int{"poison": 3, "late": 1},
			"dead-letter queue dlq.fifo:\n\t\"late\": not in the queue, want received 1 time\n" +
				"\t\"ok\": in the queue (received 3 times), want not"},
		{"want none", other, nil,
			"dead-letter queue dlq.fifo:\n\t\"poison\": in the queue (received 2 times), want not"},
	} {
		got := check(t, func(tb testing.TB) { fifoqtest.RequireInDLQ(tb, tc.dlq, tc.want) })
		require.Equal(t, tc.msg, got, tc.name)
	}

	twice := deadLetters(t, 1, "same", "same")
	require.Equal(t, "dead-letter queue dlq.fifo:\n\t\"same\": 2 messages (received 1, 1 times), want 1 received 1 time",
		check(t, func(tb testing.TB) { fifoqtest.RequireInDLQ(tb, twice, map[string]int{"same": 1}) }))
}

func TestRequireNoneInFlightAndEmpty(t *testing.T) {
	t.Parallel()
	clk := fifoq.NewManualClock(epoch)
	q := fifoqtest.NewQueue(t, "q.fifo", fifoq.WithClock(clk))
	noneInFlight := func(tb testing.TB) { fifoqtest.RequireNoneInFlight(tb, q) }
	empty := func(tb testing.TB) { fifoqtest.RequireEmpty(tb, q) }
	require.Empty(t, check(t, noneInFlight))
	require.Empty(t, check(t, empty))

	fifoqtest.SendGroup(t, q, "g1", "a", "b")
	require.Empty(t, check(t, noneInFlight), "visible messages are not in flight")
	require.Equal(t, "queue q.fifo holds 2 messages, want none:\n"+
		"\t\"a\" (group \"g1\", visible, received 0 times)\n"+
		"\t\"b\" (group \"g1\", visible, received 0 times)", check(t, empty))

	ds, err := q.Receive(t.Context(), fifoq.ReceiveOptions{})
	require.NoError(t, err)
	clk.Advance(10 * time.Second)
	require.Equal(t, "queue q.fifo has 1 message in flight, want none:\n"+
		"\t\"a\" (group \"g1\", received 1 time, visible in 20s)", check(t, noneInFlight))
	require.Equal(t, "queue q.fifo holds 2 messages, want none:\n"+
		"\t\"a\" (group \"g1\", in flight, received 1 time, visible in 20s)\n"+
		"\t\"b\" (group \"g1\", visible, received 0 times)", check(t, empty))

	require.NoError(t, q.Delete(t.Context(), ds[0].ReceiptHandle))
	require.Empty(t, check(t, noneInFlight))
	ds, err = q.Receive(t.Context(), fifoq.ReceiveOptions{})
	require.NoError(t, err)
	require.NoError(t, q.Delete(context.Background(), ds[0].ReceiptHandle))
	require.Empty(t, check(t, empty))
}

func TestNewQueue(t *testing.T) {
	t.Parallel()
	tb := &fakeTB{}
	require.Nil(t, fifoqtest.NewQueue(tb, "bad name"))
	require.True(t, tb.fatal)
	require.Contains(t, tb.report(), `fifoqtest.NewQueue("bad name"): `)

	// A passing test logs nothing at its end; a failing one logs what each queue holds.
	tb = &fakeTB{}
	clk := fifoq.NewManualClock(epoch)
	dlq := fifoqtest.NewQueue(tb, "dlq", fifoq.WithClock(clk))
	q := fifoqtest.NewQueue(tb, "jobs", fifoq.WithClock(clk), fifoq.WithDeadLetterQueue(dlq, 1))
	fifoqtest.SendGroup(tb, q, "", "a")
	tb.runCleanups()
	require.Empty(t, tb.logged())

	tb = &fakeTB{}
	dlq, dlqLine := fifoqtest.NewQueue(tb, "dlq", fifoq.WithClock(clk)), thisLine()
	opts := []fifoq.Option{fifoq.WithClock(clk), fifoq.WithDeadLetterQueue(dlq, 1), fifoq.WithVisibilityTimeout(0)}
	q, qLine := fifoqtest.NewQueue(tb, "jobs", opts...), thisLine()
	fifoqtest.SendGroup(tb, q, "", "a")
	for range 2 { // the second receive moves a
		_, err := q.Receive(t.Context(), fifoq.ReceiveOptions{})
		require.NoError(t, err)
	}
	fifoqtest.SendGroup(tb, q, "", "b")
	tb.Errorf("the test failed")
	tb.runCleanups()
	require.Equal(t, "fifoqtest: "+qLine+": at the end of the test, queue jobs holds 1 message:\n"+
		"\t\"b\" (visible, received 0 times)\n"+
		"fifoqtest: "+dlqLine+": at the end of the test, queue dlq holds 1 message:\n"+
		"\t\"a\" (visible, received 1 time, from jobs)", tb.logged())
}

func TestSend(t *testing.T) {
	t.Parallel()
	clk := fifoq.NewManualClock(epoch)

	// A FIFO queue without content-based deduplication: a message without an id gets a new one; one with
	// an id keeps it.
	q := fifoqtest.NewQueue(t, "orders.fifo", fifoq.WithClock(clk))
	rs := fifoqtest.Send(t, q,
		fifoq.Message{GroupID: "g", Body: "same"},
		fifoq.Message{GroupID: "g", Body: "same"},
		fifoq.Message{GroupID: "g", Body: "mine", DeduplicationID: "id-1"},
		fifoq.Message{GroupID: "g", Body: "mine again", DeduplicationID: "id-1"},
	)
	require.Len(t, rs, 4)
	require.False(t, rs[1].Duplicate, "equal bodies are two messages")
	require.True(t, rs[3].Duplicate, "an explicit id is kept")
	require.Equal(t, fifoq.Stats{Visible: 3}, q.Stats())
	for s := range q.Messages() {
		require.NotEmpty(t, s.DeduplicationID)
	}

	// With content-based deduplication the queue deduplicates by body.
	q = fifoqtest.NewQueue(t, "content.fifo", fifoq.WithClock(clk), fifoq.WithContentBasedDeduplication())
	rs = fifoqtest.SendGroup(t, q, "g", "same", "same")
	require.True(t, rs[1].Duplicate)

	// A standard queue takes no group and no deduplication id.
	q = fifoqtest.NewQueue(t, "standard", fifoq.WithClock(clk))
	fifoqtest.SendGroup(t, q, "", "a", "b")
	for s := range q.Messages() {
		require.Empty(t, s.DeduplicationID)
	}
	require.Equal(t, fifoq.Stats{Visible: 2}, q.Stats())

	// An error fails the test at once: the messages before it are sent.
	tb := &fakeTB{}
	q = fifoqtest.NewQueue(t, "groups.fifo", fifoq.WithClock(clk))
	rs = fifoqtest.Send(tb, q, fifoq.Message{GroupID: "g", Body: "ok"}, fifoq.Message{Body: "no group"},
		fifoq.Message{GroupID: "g", Body: "never"})
	require.Len(t, rs, 1)
	require.True(t, tb.fatal)
	require.Contains(t, tb.report(), `fifoqtest.Send to groups.fifo, message 1 ("no group"): `)
	require.Equal(t, fifoq.Stats{Visible: 1}, q.Stats())
}

// thisLine returns "file.go:line" of its caller: the line an end-of-test report must name.
func thisLine() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", filepath.Base(file), line)
}

// nextLine returns "file.go:line" of the line after its caller's.
func nextLine() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", filepath.Base(file), line+1)
}

package fifoqtest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/fifoqtest"
	"github.com/stretchr/testify/require"
)

// sentQueue returns a FIFO queue holding what a producer under test sent: "create" and "pay" in order-1
// (pay with a String attribute), "refund-42" in order-2, and "pay" received once (in flight).
func sentQueue(t *testing.T) *fifoq.Queue {
	t.Helper()
	q := fifoqtest.NewQueue(t, "sent.fifo", fifoq.WithClock(fifoq.NewManualClock(epoch)))
	fifoqtest.Send(t, q,
		fifoq.Message{GroupID: "order-1", Body: "create"},
		fifoq.Message{GroupID: "order-1", Body: "pay", Attributes: map[string]fifoq.Attribute{
			"kind": {DataType: "String", StringValue: "card"},
			"blob": {DataType: "Binary", BinaryValue: []byte("xyz")},
		}},
		fifoq.Message{GroupID: "order-2", Body: "refund-42"},
	)
	return q
}

func TestMatch(t *testing.T) {
	t.Parallel()
	msg := fifoq.Message{GroupID: "g", Body: "hello world", Attributes: map[string]fifoq.Attribute{
		"n": {DataType: "Number", StringValue: "7"}, "b": {DataType: "Binary.gz", BinaryValue: []byte("raw")},
	}}
	for _, tc := range []struct {
		m    fifoqtest.Match
		want bool
		str  string
	}{
		{fifoqtest.Match{}, true, "any message"},
		{fifoqtest.Match{Body: "hello world"}, true, `body "hello world"`},
		{fifoqtest.Match{Body: "hello"}, false, `body "hello"`},
		{fifoqtest.Match{BodyContains: "lo wo"}, true, `body containing "lo wo"`},
		{fifoqtest.Match{BodyContains: "bye"}, false, `body containing "bye"`},
		{fifoqtest.Match{GroupID: "g"}, true, `group "g"`},
		{fifoqtest.Match{GroupID: "h"}, false, `group "h"`},
		{fifoqtest.Match{Attributes: map[string]string{"n": "7", "b": "raw"}}, true, `attribute b="raw", attribute n="7"`},
		{fifoqtest.Match{Attributes: map[string]string{"n": "8"}}, false, `attribute n="8"`},
		{fifoqtest.Match{Attributes: map[string]string{"missing": ""}}, false, `attribute missing=""`},
		{fifoqtest.Match{Body: "hello world", GroupID: "h"}, false, `body "hello world", group "h"`},
	} {
		require.Equal(t, tc.want, tc.m.Matches(msg), "%s", tc.str)
		require.Equal(t, tc.str, tc.m.String())
	}
}

func TestRequireSent(t *testing.T) {
	t.Parallel()
	q := sentQueue(t)
	_, err := q.Receive(t.Context(), fifoq.ReceiveOptions{MaxMessages: 1}) // create is in flight: still sent
	require.NoError(t, err)
	holds := "queue sent.fifo holds 3 messages:\n" +
		"\t\"create\" (group \"order-1\", in flight, received 1 time, visible in 30s)\n" +
		"\t\"pay\" (group \"order-1\", visible, received 0 times)\n" +
		"\t\"refund-42\" (group \"order-2\", visible, received 0 times)"
	for _, tc := range []struct {
		name string
		want []fifoqtest.Match
		msg  string
	}{
		{"right", []fifoqtest.Match{
			{Body: "create", GroupID: "order-1"},
			{Body: "pay", Attributes: map[string]string{"kind": "card", "blob": "xyz"}},
			{BodyContains: "refund", GroupID: "order-2"},
		}, ""},
		{"wrong order", []fifoqtest.Match{{Body: "pay"}, {Body: "create"}, {}},
			"queue sent.fifo: message 1 is \"create\" (group \"order-1\"), want body \"pay\"\n" +
				"queue sent.fifo: message 2 is \"pay\" (group \"order-1\"), want body \"create\"\n" + holds},
		{"one too many sent", []fifoqtest.Match{{}, {}},
			"queue sent.fifo: 3 messages, want 2\n" + holds},
		{"one missing", []fifoqtest.Match{{}, {}, {}, {BodyContains: "ship"}},
			"queue sent.fifo: 3 messages, want 4\nqueue sent.fifo: no message for body containing \"ship\"\n" + holds},
		{"wrong attribute", []fifoqtest.Match{{}, {Attributes: map[string]string{"kind": "cash"}}, {}},
			"queue sent.fifo: message 2 is \"pay\" (group \"order-1\"), want attribute kind=\"cash\"\n" + holds},
	} {
		got := check(t, func(tb testing.TB) { fifoqtest.RequireSent(tb, q, tc.want...) })
		require.Equal(t, tc.msg, got, tc.name)
	}
	empty := fifoqtest.NewQueue(t, "none")
	require.Empty(t, check(t, func(tb testing.TB) { fifoqtest.RequireSent(tb, empty) }), "nothing sent, nothing wanted")
	require.Equal(t, "queue none: 0 messages, want 1\nqueue none: no message for any message\nqueue none is empty",
		check(t, func(tb testing.TB) { fifoqtest.RequireSent(tb, empty, fifoqtest.Match{}) }))
}

func TestRequireInQueue(t *testing.T) {
	t.Parallel()
	q := sentQueue(t)
	var s fifoq.Snapshot
	require.Empty(t, check(t, func(tb testing.TB) {
		s = fifoqtest.RequireInQueue(tb, q, fifoqtest.Match{GroupID: "order-1"})
	}))
	require.Equal(t, "create", s.Body, "the first match in send order")
	require.Empty(t, check(t, func(tb testing.TB) {
		s = fifoqtest.RequireInQueue(tb, q, fifoqtest.Match{Attributes: map[string]string{"kind": "card"}})
	}))
	require.Equal(t, "pay", s.Body)
	require.Equal(t, "queue sent.fifo holds no message with body containing \"ship\"; queue sent.fifo holds 3 messages:\n"+
		"\t\"create\" (group \"order-1\", visible, received 0 times)\n"+
		"\t\"pay\" (group \"order-1\", visible, received 0 times)\n"+
		"\t\"refund-42\" (group \"order-2\", visible, received 0 times)",
		check(t, func(tb testing.TB) { fifoqtest.RequireInQueue(tb, q, fifoqtest.Match{BodyContains: "ship"}) }))
}

func TestRequireNotInQueue(t *testing.T) {
	t.Parallel()
	q := sentQueue(t)
	require.Empty(t, check(t, func(tb testing.TB) { fifoqtest.RequireNotInQueue(tb, q, fifoqtest.Match{Body: "ship"}) }))
	require.Equal(t, "queue sent.fifo holds 2 messages with group \"order-1\", want none:\n"+
		"\t\"create\" (group \"order-1\", visible, received 0 times)\n"+
		"\t\"pay\" (group \"order-1\", visible, received 0 times)",
		check(t, func(tb testing.TB) { fifoqtest.RequireNotInQueue(tb, q, fifoqtest.Match{GroupID: "order-1"}) }))
}

// RequireEmptyAtEnd reports in a cleanup, naming the line that called it.
func TestRequireEmptyAtEnd(t *testing.T) {
	t.Parallel()
	tb := &fakeTB{}
	q := fifoqtest.NewQueue(tb, "end", fifoq.WithClock(fifoq.NewManualClock(epoch)))
	line := nextLine()
	fifoqtest.RequireEmptyAtEnd(tb, q)
	fifoqtest.SendGroup(tb, q, "", "left")
	require.Empty(t, tb.report(), "nothing is reported before the end")
	tb.runCleanups()
	require.Equal(t, line+": at the end of the test, queue end holds 1 message, want none:\n"+
		"\t\"left\" (visible, received 0 times)", tb.report())

	tb = &fakeTB{}
	q = fifoqtest.NewQueue(tb, "end", fifoq.WithClock(fifoq.NewManualClock(epoch)))
	fifoqtest.RequireEmptyAtEnd(tb, q)
	tb.runCleanups()
	require.Empty(t, tb.report(), "an empty queue passes")
}

// Work receives one batch now, runs the handler and settles the batch as the Consumer does.
func TestWork(t *testing.T) {
	t.Parallel()
	clk := fifoq.NewManualClock(epoch)
	q := fifoqtest.NewQueue(t, "work.fifo", fifoq.WithClock(clk), fifoq.WithVisibilityTimeout(time.Minute))
	fifoqtest.SendGroup(t, q, "g1", "a", "b", "c")
	fifoqtest.SendGroup(t, q, "g2", "x")
	poison := func(_ context.Context, d fifoq.Delivery) error {
		if d.Body == "b" {
			return errors.New("poison")
		}
		return nil
	}

	// PerMessage: a and x are deleted, b and c come back after the visibility timeout.
	b := fifoqtest.Work(t.Context(), t, q, fifoq.PerMessage(poison), fifoq.ConsumerOptions{})
	require.Equal(t, []string{"a", "b", "c", "x"}, b.Bodies())
	require.Equal(t, fifoq.OutcomePartial, b.Report.Outcome)
	require.Equal(t, []string{b.Deliveries[1].MessageID, b.Deliveries[2].MessageID}, b.Report.Failed)
	require.Equal(t, epoch, b.At)
	require.Equal(t, fifoq.Stats{InFlight: 2}, q.Stats())
	require.Equal(t, "fifoqtest.Work: no message to receive now; queue work.fifo holds 2 messages:\n"+
		"\t\"b\" (group \"g1\", in flight, received 1 time, visible in 1m0s)\n"+
		"\t\"c\" (group \"g1\", in flight, received 1 time, visible in 1m0s)",
		check(t, func(tb testing.TB) {
			fifoqtest.Work(t.Context(), tb, q, fifoq.PerMessage(poison), fifoq.ConsumerOptions{})
		}))

	// A plain handler error fails the whole batch; with RetryImmediately it is visible again at once.
	clk.Advance(time.Minute)
	b = fifoqtest.Work(t.Context(), t, q, func(context.Context, []fifoq.Delivery) error { return errors.New("down") },
		fifoq.ConsumerOptions{RetryImmediately: true})
	require.Equal(t, []string{"b", "c"}, b.Bodies())
	require.Equal(t, fifoq.OutcomeError, b.Report.Outcome)
	require.EqualError(t, b.Report.Err, "down")
	require.Equal(t, fifoq.Stats{Visible: 2}, q.Stats())

	// Success deletes; Batch.Size bounds the batch.
	b = fifoqtest.Work(t.Context(), t, q, func(context.Context, []fifoq.Delivery) error { return nil },
		fifoq.ConsumerOptions{Batch: fifoq.BatchOptions{Size: 1}})
	require.Equal(t, []string{"b"}, b.Bodies())
	require.Equal(t, 3, b.Deliveries[0].ReceiveCount)
	require.Equal(t, fifoq.OutcomeSuccess, b.Report.Outcome)
	require.Equal(t, fifoq.Stats{Visible: 1}, q.Stats())
	b = fifoqtest.Work(t.Context(), t, q, func(context.Context, []fifoq.Delivery) error { return nil }, fifoq.ConsumerOptions{})
	require.Equal(t, []string{"c"}, b.Bodies())
	fifoqtest.RequireEmpty(t, q)

	// Bad options and a nil handler fail the test.
	require.Equal(t, "fifoqtest.Work(work.fifo): nil handler",
		check(t, func(tb testing.TB) { fifoqtest.Work(t.Context(), tb, q, nil, fifoq.ConsumerOptions{}) }))
	require.Contains(t, check(t, func(tb testing.TB) {
		fifoqtest.Work(t.Context(), tb, q, func(context.Context, []fifoq.Delivery) error { return nil },
			fifoq.ConsumerOptions{MaxConcurrency: -1})
	}), "fifoqtest.Work(work.fifo): fifoq: invalid batch options")
}

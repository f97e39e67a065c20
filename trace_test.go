package fifoq_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/internal/rule"
)

const trHeader = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"

// A trace header comes back with each delivery and in a look at the queue, and a message without one has none.
func TestTraceHeaderDelivered(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"q", "q.fifo"} {
		q, err := fifoq.New(name, fifoq.WithContentBasedDeduplication())
		if name == "q" {
			q, err = fifoq.New(name)
		}
		require.NoError(t, err)
		g := ""
		if q.FIFO() {
			g = "g"
		}
		_, err = q.Send(t.Context(), fifoq.Message{Body: "traced", GroupID: g, TraceHeader: trHeader})
		require.NoError(t, err)
		_, err = q.Send(t.Context(), fifoq.Message{Body: "plain", GroupID: g})
		require.NoError(t, err)
		var looked []string
		for s := range q.Messages() {
			looked = append(looked, s.Body+":"+s.TraceHeader)
		}
		require.Equal(t, []string{"traced:" + trHeader, "plain:"}, looked, name)
		ds, err := q.Receive(t.Context(), fifoq.ReceiveOptions{MaxMessages: 10})
		require.NoError(t, err)
		require.Len(t, ds, 2, name)
		require.Equal(t, trHeader, ds[0].TraceHeader, name)
		require.Empty(t, ds[1].TraceHeader, name)
	}
}

// A trace header over MaxTraceHeaderLength bytes is refused, with the message SQS sends; it does not count
// toward the message size.
func TestTraceHeaderLimit(t *testing.T) {
	t.Parallel()
	q, err := fifoq.New("q", fifoq.WithMaxMessageSize(1024))
	require.NoError(t, err)
	long := strings.Repeat("h", rule.MaxTraceHeaderLength)
	_, err = q.Send(t.Context(), fifoq.Message{Body: strings.Repeat("b", 1024), TraceHeader: long})
	require.NoError(t, err, "a full message with the longest header")
	_, err = q.Send(t.Context(), fifoq.Message{Body: "b", TraceHeader: long + "h"})
	require.ErrorIs(t, err, fifoq.ErrInvalidMessageAttribute)
	require.Equal(t, "Message system attribute 'AWSTraceHeader' must be at most 1024 bytes long.", fifoq.ErrorMessage(err))
	require.NoError(t, rule.CheckTraceHeader(""))
	require.Equal(t, 1, q.Stats().Visible, "the refused message changed nothing")
}

// The trace header goes with its message to the dead-letter queue, and back out with a move task.
func TestTraceHeaderFollowsMoves(t *testing.T) {
	t.Parallel()
	clock := fifoq.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	dlq, err := fifoq.New("dlq", fifoq.WithClock(clock))
	require.NoError(t, err)
	src, err := fifoq.New("src", fifoq.WithClock(clock), fifoq.WithDeadLetterQueue(dlq, 1), fifoq.WithVisibilityTimeout(0))
	require.NoError(t, err)
	_, err = src.Send(t.Context(), fifoq.Message{Body: "m", TraceHeader: trHeader})
	require.NoError(t, err)
	for range 2 {
		_, err := src.Receive(t.Context(), fifoq.ReceiveOptions{})
		require.NoError(t, err)
	}
	ds, err := dlq.Receive(t.Context(), fifoq.ReceiveOptions{NoVisibilityTimeout: true})
	require.NoError(t, err)
	require.Len(t, ds, 1)
	require.Equal(t, "src", ds[0].DeadLetterSource)
	require.Equal(t, trHeader, ds[0].TraceHeader, "in the dead-letter queue")
	task, err := dlq.StartMoveTask(t.Context(), nil, 0)
	require.NoError(t, err)
	require.NoError(t, task.Wait(t.Context()))
	ds, err = src.Receive(t.Context(), fifoq.ReceiveOptions{})
	require.NoError(t, err)
	require.Len(t, ds, 1)
	require.Equal(t, trHeader, ds[0].TraceHeader, "moved back to its source")
}

// A durable queue keeps the trace header in the message's own record: a send with one costs one sync, as a
// send without, and the header is back after a crash, in the queue and in its dead-letter queue.
func TestTraceHeaderDurable(t *testing.T) {
	d := newStDisk(t)
	dlq := d.queue("dlq")
	q := d.queue("q", fifoq.WithDeadLetterQueue(dlq, 1))
	before := d.eng.Syncs()
	_, err := q.Send(t.Context(), fifoq.Message{Body: "traced", TraceHeader: trHeader})
	require.NoError(t, err)
	require.Equal(t, 1, d.eng.Syncs()-before, "syncs of a send with a trace header")
	_, err = q.Send(t.Context(), fifoq.Message{Body: "moved", TraceHeader: "Root=2"})
	require.NoError(t, err)
	ds, err := q.Receive(t.Context(), fifoq.ReceiveOptions{MaxMessages: 10, NoVisibilityTimeout: true})
	require.NoError(t, err)
	require.Len(t, ds, 2)
	ds, err = q.Receive(t.Context(), fifoq.ReceiveOptions{MaxMessages: 10})
	require.NoError(t, err)
	require.Empty(t, ds, "both moved to the dead-letter queue")

	d.restart(true)
	dlq = d.queue("dlq")
	d.queue("q", fifoq.WithDeadLetterQueue(dlq, 1))
	var got []string
	for s := range dlq.Messages() {
		got = append(got, s.Body+":"+s.TraceHeader)
	}
	require.Equal(t, []string{"traced:" + trHeader, "moved:Root=2"}, got)
}

package fifoqtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/fifoqtest"
)

// The helpers take the interfaces, so a catalogue's queue (what fifoq serve holds) is sent to, worked and
// checked as a *fifoq.Queue is.
func TestHelpersOverACatalogQueue(t *testing.T) {
	t.Parallel()
	clk := fifoq.NewManualClock(epoch)
	cat := catalog.New(catalog.WithClock(clk))
	t.Cleanup(func() { require.NoError(t, cat.Close()) })
	q, err := cat.CreateQueue(t.Context(), cat.DefaultNamespace(), "orders.fifo",
		catalog.Definition{VisibilityTimeout: time.Minute}, 0)
	require.NoError(t, err)

	fifoqtest.SendGroup(t, q, "g1", "create", "pay")
	fifoqtest.SendGroup(t, q, "g1", "create") // a new deduplication id: a second message
	fifoqtest.RequireSent(t, q, fifoqtest.Match{Body: "create", GroupID: "g1"}, fifoqtest.Match{Body: "pay"},
		fifoqtest.Match{Body: "create"})

	b := fifoqtest.Work(t.Context(), t, q, func(context.Context, []fifoq.Delivery) error { return nil },
		fifoq.ConsumerOptions{Batch: fifoq.BatchOptions{Size: 2}})
	require.Equal(t, []string{"create", "pay"}, b.Bodies())
	require.Equal(t, epoch, b.At, "the batch's time is read from the queue's clock")
	fifoqtest.RequireNoneInFlight(t, q)
	require.Equal(t, `queue orders.fifo holds 1 message, want none:`+"\n"+
		`	"create" (group "g1", visible, received 0 times)`,
		check(t, func(tb testing.TB) { fifoqtest.RequireEmpty(tb, q) }))
}

// sourceOnly is a fifoq.Source and nothing more, as a queue on SQS is to this package: no name, no clock,
// no look inside.
type sourceOnly struct{ q *fifoq.Queue }

func (s sourceOnly) FIFO() bool { return s.q.FIFO() }
func (s sourceOnly) Receive(ctx context.Context, o fifoq.ReceiveOptions) ([]fifoq.Delivery, error) {
	return s.q.Receive(ctx, o)
}
func (s sourceOnly) DeleteBatch(ctx context.Context, handles []string) error {
	return s.q.DeleteBatch(ctx, handles)
}
func (s sourceOnly) ChangeVisibilityBatch(ctx context.Context, entries []fifoq.VisibilityChange) error {
	return s.q.ChangeVisibilityBatch(ctx, entries)
}

// Work takes any Source; one that cannot be looked into is named "the queue" when there is nothing to
// receive.
func TestWorkOverAnySource(t *testing.T) {
	t.Parallel()
	q := fifoqtest.NewQueue(t, "plain", fifoq.WithClock(fifoq.NewManualClock(epoch)))
	fifoqtest.SendGroup(t, sourceOnly{q}.q, "", "a")
	fails := func(_ context.Context, _ []fifoq.Delivery) error { return context.DeadlineExceeded }

	b := fifoqtest.Work(t.Context(), t, sourceOnly{q}, fails, fifoq.ConsumerOptions{})
	require.Equal(t, []string{"a"}, b.Bodies())
	require.Equal(t, fifoq.OutcomeError, b.Report.Outcome)
	require.Equal(t, fifoq.Stats{InFlight: 1}, q.Stats(), "a failed batch stays in flight until its timeout")
	require.Equal(t, "fifoqtest.Work: no message to receive now from the queue",
		check(t, func(tb testing.TB) { fifoqtest.Work(t.Context(), tb, sourceOnly{q}, fails, fifoq.ConsumerOptions{}) }))
}

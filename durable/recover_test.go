package durable_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/durable"
)

// A queue recovers inside a synctest bubble from a store opened outside it, although the store scans on a
// goroutine of its own, outside the bubble: recovery hands the records it decodes there to the goroutine
// that rebuilds the queue, in the bubble, many chunks of them, without a channel of the bubble's.
func TestRecoverInBubble(t *testing.T) {
	const n = 3000
	dir := t.TempDir()
	clock := fifoq.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st, err := durable.Open(dir)
	require.NoError(t, err)
	q, err := fifoq.New("q.fifo", fifoq.WithStore(st), fifoq.WithClock(clock))
	require.NoError(t, err)
	ms := make([]fifoq.Message, 10)
	for i := 0; i < n; i += len(ms) {
		for j := range ms {
			k := i + j
			ms[j] = fifoq.Message{Body: fmt.Sprint(k), GroupID: fmt.Sprint("g", k%7), DeduplicationID: fmt.Sprint(k)}
		}
		_, err := q.SendBatch(context.Background(), ms)
		require.NoError(t, err)
	}
	require.NoError(t, st.Close())

	st, err = durable.Open(dir)
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Close()) }()
	synctest.Test(t, func(t *testing.T) {
		q, err := fifoq.New("q.fifo", fifoq.WithStore(st), fifoq.WithClock(clock))
		require.NoError(t, err)
		require.Equal(t, fifoq.Stats{Visible: n}, q.Stats())
		ds, err := q.Receive(context.Background(), fifoq.ReceiveOptions{MaxMessages: 10})
		require.NoError(t, err)
		require.Len(t, ds, 10)
		require.Equal(t, "0", ds[0].Body, "the oldest group's first message first")
	})
}

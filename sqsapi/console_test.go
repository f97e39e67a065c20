package sqsapi_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/sqsapi"
)

// The move task methods of a server's catalogue, which a web console over it (fifoqweb.NewCatalog) starts and
// cancels its redrives with, refuse what the wire actions refuse, with errors that match the sentinels, and
// a refusal starts or cancels nothing. Queues are named as the console names them (Catalog.DisplayName).
func TestMoveTaskMethods(t *testing.T) {
	ctx := context.Background()
	s := sqsapi.NewServer(sqsapi.WithClock(fifoq.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))))
	cat := s.Catalog()
	for name, attrs := range map[string]map[string]string{
		"dlq":       nil,
		"dest":      nil,
		"fifo.fifo": {"FifoQueue": "true"},
	} {
		_, err := s.DeclareQueue(name, attrs)
		require.NoError(t, err)
	}
	_, err := s.DeclareQueue("src", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}`})
	require.NoError(t, err)
	dlq, ok := s.Queue("dlq")
	require.True(t, ok)
	for range 5 {
		_, err = dlq.Send(ctx, fifoq.Message{Body: "dead"})
		require.NoError(t, err)
	}
	// running returns the id of the running task of the queue of that display name, or "".
	running := func(name string) string {
		t.Helper()
		ns, name, ok := cat.ParseDisplayName(name)
		require.True(t, ok)
		for _, task := range cat.MoveTasks(ns, name) {
			if task.Status().State == fifoq.MoveTaskRunning {
				return task.ID
			}
		}
		return ""
	}
	start := func(source, dest string, rate int) (catalog.Task, error) {
		ns, source, ok := cat.ParseDisplayName(source)
		require.True(t, ok)
		return cat.StartMoveTask(ctx, ns, source, dest, rate)
	}

	_, _, ok = cat.ParseDisplayName("a/b/c/d")
	require.False(t, ok, "not a name the console gives a queue")
	for _, tc := range []struct {
		source, dest string
		rate         int
		is           error
	}{
		{"nosuch", "", 0, catalog.ErrQueueDoesNotExist},
		{"000000000000/eu-west-1/dlq", "", 0, catalog.ErrQueueDoesNotExist},
		{"dlq", "nosuch", 0, catalog.ErrQueueDoesNotExist},
		{"dlq", "", 501, fifoq.ErrInvalidMoveTask},
		{"dlq", "", -1, fifoq.ErrInvalidMoveTask},
		{"dlq", "dlq", 0, fifoq.ErrInvalidMoveTask},
		{"dlq", "fifo.fifo", 0, fifoq.ErrInvalidMoveTask},
		{"dest", "", 0, fifoq.ErrNotDeadLetterQueue},
	} {
		_, err := start(tc.source, tc.dest, tc.rate)
		require.ErrorIs(t, err, tc.is, "%+v: %v", tc, err)
		require.Empty(t, running("dlq"), "nothing started")
		require.Empty(t, cat.MoveTasks(cat.DefaultNamespace(), "dlq"), "nothing started")
	}
	task, err := start("dlq", "dest", 1)
	require.NoError(t, err)
	require.Equal(t, task.ID, running("dlq"))
	require.Empty(t, running("dest"))
	_, err = start("dlq", "", 0)
	require.ErrorIs(t, err, fifoq.ErrMoveTaskRunning)
	require.Equal(t, task.ID, running("dlq"), "the first runs on")

	for _, id := range []string{"", "not a uuid", "00000000-0000-4000-8000-000000000000"} {
		_, err = cat.CancelMoveTask(ctx, id)
		require.ErrorIs(t, err, catalog.ErrMoveTaskNotFound, "%q", id)
	}
	require.Equal(t, task.ID, running("dlq"), "still running")

	cancelled, err := cat.CancelMoveTask(ctx, task.ID)
	require.NoError(t, err)
	require.Equal(t, task.ID, cancelled.ID)
	require.NoError(t, cancelled.Wait(ctx)) // in memory, CancelMoveTask does not wait for the task's end
	require.Equal(t, fifoq.MoveTaskCancelled, cancelled.Status().State)
	require.Empty(t, running("dlq"))
	_, err = cat.CancelMoveTask(ctx, task.ID)
	require.ErrorIs(t, err, fifoq.ErrMoveTaskNotRunning)
	require.False(t, errors.Is(err, catalog.ErrMoveTaskNotFound))
}

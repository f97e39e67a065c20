package sqsapi_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/sqsapi"
)

// The Go move task methods refuse what the wire actions refuse, with errors that match fifoq's sentinels,
// and a refusal starts or cancels nothing. Queues are named as NamedQueues names them.
func TestMoveTaskMethods(t *testing.T) {
	ctx := context.Background()
	s := sqsapi.NewServer(sqsapi.WithClock(fifoq.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))))
	dlq, err := s.CreateQueue("dlq", nil)
	require.NoError(t, err)
	_, err = s.CreateQueue("dest", nil)
	require.NoError(t, err)
	_, err = s.CreateQueue("src", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}`})
	require.NoError(t, err)
	_, err = s.CreateQueue("fifo.fifo", map[string]string{"FifoQueue": "true"})
	require.NoError(t, err)
	for range 5 {
		_, err = dlq.Send(ctx, fifoq.Message{Body: "dead"})
		require.NoError(t, err)
	}

	for _, tc := range []struct {
		source, dest string
		rate         int
		is           error
	}{
		{"nosuch", "", 0, fifoq.ErrInvalidMoveTask},
		{"dlq", "nosuch", 0, fifoq.ErrInvalidMoveTask},
		{"a/b/c/d", "", 0, fifoq.ErrInvalidMoveTask},
		{"dlq", "", 501, fifoq.ErrInvalidMoveTask},
		{"dlq", "", -1, fifoq.ErrInvalidMoveTask},
		{"dlq", "dlq", 0, fifoq.ErrInvalidMoveTask},
		{"dlq", "fifo.fifo", 0, fifoq.ErrInvalidMoveTask},
		{"dest", "", 0, fifoq.ErrNotDeadLetterQueue},
	} {
		_, err := s.StartMoveTask(ctx, tc.source, tc.dest, tc.rate)
		require.ErrorIs(t, err, tc.is, "%+v: %v", tc, err)
		require.Empty(t, s.RunningMoveTask("dlq"), "nothing started")
		require.Empty(t, dlq.MoveTasks(), "nothing started")
	}
	handle, err := s.StartMoveTask(ctx, "dlq", "dest", 1)
	require.NoError(t, err)
	require.Equal(t, handle, s.RunningMoveTask("dlq"))
	require.Empty(t, s.RunningMoveTask("dest"))
	_, err = s.StartMoveTask(ctx, "dlq", "", 0)
	require.ErrorIs(t, err, fifoq.ErrMoveTaskRunning)
	require.Equal(t, handle, s.RunningMoveTask("dlq"), "the first runs on")

	require.ErrorIs(t, s.CancelMoveTask(ctx, ""), fifoq.ErrInvalidMoveTask)
	require.ErrorIs(t, s.CancelMoveTask(ctx, "not base64"), fifoq.ErrInvalidMoveTask)
	other := "eyJ0YXNrSWQiOiJ4Iiwic291cmNlQXJuIjoiYXJuOmF3czpzcXM6dXMtZWFzdC0xOjAwMDAwMDAwMDAwMDpkbHEifQ=="
	require.ErrorIs(t, s.CancelMoveTask(ctx, other), fifoq.ErrInvalidMoveTask, "well formed, of no task")
	require.Equal(t, handle, s.RunningMoveTask("dlq"), "still running")

	require.NoError(t, s.CancelMoveTask(ctx, handle))
	require.Empty(t, s.RunningMoveTask("dlq"))
	err = s.CancelMoveTask(ctx, handle)
	require.ErrorIs(t, err, fifoq.ErrMoveTaskNotRunning)
	require.False(t, errors.Is(err, fifoq.ErrInvalidMoveTask))
}

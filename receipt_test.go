package fifoq_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// A receipt handle starts with a letter or a digit, never with '-' or '_', which the AWS CLI's
// --receipt-handle takes for an option: the handle's first character comes from the queue's random tag, so
// 500 queues try it (each tag had a chance of 1 in 32 to start so).
func TestReceiptHandleFirstCharacter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for i := range 500 {
		q, err := fifoq.New(fmt.Sprintf("rh-%d", i))
		require.NoError(t, err)
		_, err = q.Send(ctx, fifoq.Message{Body: "m"})
		require.NoError(t, err)
		ds, err := q.Receive(ctx, fifoq.ReceiveOptions{})
		require.NoError(t, err)
		require.Len(t, ds, 1)
		c := ds[0].ReceiptHandle[0]
		require.True(t, c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9',
			"queue %d: receipt handle %q starts with %q", i, ds[0].ReceiptHandle, c)
	}
}

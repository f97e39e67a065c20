package conformance_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/sqsapi"
)

// A caller that gives up during a long poll through HTTPClient gets its context's error, as over a socket,
// not an empty answer that reads as "no messages".
func TestHTTPClientLongPollCanceled(t *testing.T) {
	clock := fifoq.NewManualClock(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	srv := sqsapi.NewServer(sqsapi.WithClock(clock))
	client := smokeClient(srv)
	created, err := client.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String("polled")})
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: created.QueueUrl, WaitTimeSeconds: 20},
			func(o *sqs.Options) { o.Retryer = aws.NopRetryer{} })
		done <- err
	}()
	clock.WaitTimers(1) // the long poll is waiting on the clock
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
}

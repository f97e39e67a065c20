package sqsadapter_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/sqsadapter"
)

// A Source's name is the last segment of its queue's URL, and a Consumer over it reports it as its queue.
func TestSourceName(t *testing.T) {
	t.Parallel()
	client := sqs.New(sqs.Options{Region: "us-east-1"})
	for url, want := range map[string]string{
		"https://sqs.us-east-1.amazonaws.com/123456789012/orders.fifo": "orders.fifo",
		"http://127.0.0.1:9324/000000000000/jobs/":                     "jobs",
		"jobs": "jobs",
	} {
		require.Equal(t, want, sqsadapter.New(client, url).Name(), url)
	}
	src := sqsadapter.New(client, "https://sqs.us-east-1.amazonaws.com/123456789012/orders.fifo")
	c, err := fifoq.NewConsumer(src, func(context.Context, []fifoq.Delivery) error { return nil }, fifoq.ConsumerOptions{})
	require.NoError(t, err)
	require.Equal(t, "orders.fifo", c.Metrics().Queue)
}

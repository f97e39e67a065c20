package main

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/sqsadapter"
	"github.com/fifoq/fifoq/sqsadapter/sqsadaptertest"
	"github.com/fifoq/fifoq/sqsapi"
)

// The same Charges and Settle on three targets: a queue in process, fifoq serve's SQS API, and moto's server
// (a third-party SQS), the last two through sqsadapter. Only the making of the queue differs.
func TestThreeTargets(t *testing.T) {
	ctx := context.Background()
	targets := map[string]func(t *testing.T) fifoq.QueueClient{
		"in process": func(t *testing.T) fifoq.QueueClient {
			q, err := fifoq.New("payments.fifo")
			require.NoError(t, err)
			return q
		},
		"fifoq serve": func(t *testing.T) fifoq.QueueClient {
			srv := sqsapi.NewServer()
			hs := httptest.NewServer(srv)
			t.Cleanup(hs.Close)
			return sqsQueue(t, sqsadaptertest.SQSClient(hs.URL))
		},
		"moto": func(t *testing.T) fifoq.QueueClient {
			endpoint := sqsadaptertest.Moto(t)
			if endpoint == "" {
				t.Skip("moto_server is not installed") // sqsadaptertest.Moto said why; in CI it failed the test
			}
			return sqsQueue(t, sqsadaptertest.SQSClient(endpoint))
		},
	}
	for name, make := range targets {
		t.Run(name, func(t *testing.T) {
			q := make(t)
			require.NoError(t, Charges(ctx, q, []Charge{{"c-1", "alice", 1250}, {"c-2", "bob", 300}, {"c-3", "alice", 99},
				{"c-2", "bob", 300}}))
			totals, err := Settle(ctx, q)
			require.NoError(t, err)
			require.Equal(t, map[string]int{"alice": 1349, "bob": 300}, totals, "each charge once, the retry deduplicated")
		})
	}
}

// sqsQueue creates payments.fifo at the endpoint of client and opens it by name.
func sqsQueue(t *testing.T, client *sqs.Client) fifoq.QueueClient {
	t.Helper()
	_, err := client.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String("payments.fifo"),
		Attributes: map[string]string{"FifoQueue": "true"}})
	require.NoError(t, err)
	q, err := sqsadapter.Open(t.Context(), client, "payments.fifo")
	require.NoError(t, err)
	return q
}

// The command in process prints each account's total.
func TestRun(t *testing.T) {
	var out strings.Builder
	require.NoError(t, run(context.Background(), &out, "", "payments.fifo"))
	require.Equal(t, "alice: 13.49\nbob: 3.00\n", out.String())
}

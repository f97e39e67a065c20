package main

import (
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"
)

// TestServeRestartLoop is a supervisor's crash-restart loop: the same command line starts the server, a
// client changes at run time an attribute the command line declares (and one it does not), the process is
// killed, and started again with the same command line. It starts each time: the declared attribute is back
// to its declared value, with a warning naming the attribute and both values; the other keeps its change;
// the messages are there.
func TestServeRestartLoop(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dir,
		"--queue", "jobs,VisibilityTimeout=30", "--queue", "orders.fifo,ContentBasedDeduplication=true"}
	for round := range 4 {
		c := startChild(t, args...)
		ctx, client := t.Context(), c.client()
		jobs, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("jobs")})
		require.NoError(t, err, "round %d", round)
		orders, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("orders.fifo")})
		require.NoError(t, err)
		attrs, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: jobs.QueueUrl,
			AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
		require.NoError(t, err)
		require.Equal(t, "30", attrs.Attributes["VisibilityTimeout"], "round %d: the declared value", round)
		if round > 0 {
			require.Equal(t, "7", attrs.Attributes["DelaySeconds"], "an attribute not declared keeps its change")
			require.Contains(t, c.stderr.String(), `msg="stored attribute differs from the declared one: set to the declared value" `+
				`queue=jobs attribute=VisibilityTimeout stored=`+strconv.Itoa(100+round-1)+` declared=30`)
			require.Contains(t, c.stderr.String(), `queue=orders.fifo attribute=ContentBasedDeduplication stored=false declared=true`)
			n, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: jobs.QueueUrl,
				AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages,
					types.QueueAttributeNameApproximateNumberOfMessagesDelayed}})
			require.NoError(t, err)
			total, _ := strconv.Atoi(n.Attributes["ApproximateNumberOfMessages"])
			delayed, _ := strconv.Atoi(n.Attributes["ApproximateNumberOfMessagesDelayed"])
			require.Equal(t, round, total+delayed, "the messages sent before")
		}
		_, err = client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: jobs.QueueUrl,
			Attributes: map[string]string{"VisibilityTimeout": strconv.Itoa(100 + round), "DelaySeconds": "7"}})
		require.NoError(t, err)
		_, err = client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: orders.QueueUrl,
			Attributes: map[string]string{"ContentBasedDeduplication": "false"}})
		require.NoError(t, err)
		_, err = client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: jobs.QueueUrl, MessageBody: aws.String("job")})
		require.NoError(t, err)
		c.stop(syscall.SIGKILL)
	}
}

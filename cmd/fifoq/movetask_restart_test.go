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

// TestServeMoveTaskRestart starts a slow move task on "serve --data-dir", stops the process (SIGTERM, then
// SIGKILL) and starts it again: ListMessageMoveTasks lists the task with its handle, RUNNING, with at
// least the messages it had moved, and every message is in one queue or the other.
func TestServeMoveTaskRestart(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dir}
	c := startChild(t, args...)
	ctx, client := t.Context(), c.client()
	urls := map[string]*string{}
	for _, name := range []string{"dlq", "dest", "src"} {
		in := &sqs.CreateQueueInput{QueueName: aws.String(name)}
		if name == "src" {
			in.Attributes = map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}`}
		}
		out, err := client.CreateQueue(ctx, in)
		require.NoError(t, err)
		urls[name] = out.QueueUrl
	}
	const n = 40
	for i := range n {
		_, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: urls["dlq"], MessageBody: aws.String("m" + strconv.Itoa(i))})
		require.NoError(t, err)
	}
	started, err := client.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{
		SourceArn:                    aws.String("arn:aws:sqs:us-east-1:000000000000:dlq"),
		DestinationArn:               aws.String("arn:aws:sqs:us-east-1:000000000000:dest"),
		MaxNumberOfMessagesPerSecond: aws.Int32(1),
	})
	require.NoError(t, err)
	task := func(client *sqs.Client) types.ListMessageMoveTasksResultEntry {
		out, err := client.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String("arn:aws:sqs:us-east-1:000000000000:dlq")})
		require.NoError(t, err)
		require.Len(t, out.Results, 1)
		return out.Results[0]
	}
	count := func(client *sqs.Client, name string) int {
		out, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: urls[name],
			AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages}})
		require.NoError(t, err)
		v, _ := strconv.Atoi(out.Attributes["ApproximateNumberOfMessages"])
		return v
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		before := task(client)
		c.stop(sig)
		c = startChild(t, args...)
		client = c.client()
		after := task(client)
		require.Equal(t, aws.ToString(started.TaskHandle), aws.ToString(after.TaskHandle), "%v", sig)
		require.Equal(t, "RUNNING", aws.ToString(after.Status), "%v", sig)
		require.EqualValues(t, n, aws.ToInt64(after.ApproximateNumberOfMessagesToMove))
		require.GreaterOrEqual(t, after.ApproximateNumberOfMessagesMoved, before.ApproximateNumberOfMessagesMoved, "%v", sig)
		require.Equal(t, n, count(client, "dlq")+count(client, "dest"), "every message in one queue or the other")
	}
	c.stop(syscall.SIGTERM)
}

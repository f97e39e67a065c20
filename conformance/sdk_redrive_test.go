package conformance_test

// SDK tests of dead-letter queues: ListDeadLetterSourceQueues and the message move tasks.

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"
)

func TestSdListDeadLetterSourceQueues(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	dlq := e.create("sd-lds-dlq", nil)
	redrive := sdKV("RedrivePolicy", `{"deadLetterTargetArn":"`+sdArn("sd-lds-dlq")+`","maxReceiveCount":3}`)
	s1 := e.create("sd-lds-1", redrive)
	s2 := e.create("sd-lds-2", nil)
	require.NoError(t, e.setAttrs(s2, redrive))
	e.create("sd-lds-unrelated", nil)
	list := func(url string, in *sqs.ListDeadLetterSourceQueuesInput) *sqs.ListDeadLetterSourceQueuesOutput {
		t.Helper()
		in.QueueUrl = &url
		out, err := e.c.ListDeadLetterSourceQueues(e.ctx, in)
		require.NoError(t, err)
		return out
	}
	out := list(dlq, &sqs.ListDeadLetterSourceQueuesInput{})
	require.ElementsMatch(t, []string{s1, s2}, out.QueueUrls)
	require.Nil(t, out.NextToken)
	require.Empty(t, list(s1, &sqs.ListDeadLetterSourceQueuesInput{}).QueueUrls, "a queue that is no dead-letter queue")

	page1 := list(dlq, &sqs.ListDeadLetterSourceQueuesInput{MaxResults: aws.Int32(1)})
	require.Len(t, page1.QueueUrls, 1)
	require.NotNil(t, page1.NextToken)
	page2 := list(dlq, &sqs.ListDeadLetterSourceQueuesInput{MaxResults: aws.Int32(1), NextToken: page1.NextToken})
	require.Len(t, page2.QueueUrls, 1)
	require.Nil(t, page2.NextToken)
	require.ElementsMatch(t, []string{s1, s2}, append(page1.QueueUrls, page2.QueueUrls...))

	require.NoError(t, e.setAttrs(s1, sdKV("RedrivePolicy", "")))
	require.Equal(t, []string{s2}, list(dlq, &sqs.ListDeadLetterSourceQueuesInput{}).QueueUrls, "a removed policy removes the source")

	for _, n := range []int32{0, 1001} {
		_, err := e.c.ListDeadLetterSourceQueues(e.ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: &dlq, MaxResults: aws.Int32(n)})
		t.Logf("MaxResults %d", n)
		sdWantErr(t, err, sdBadParam, "")
	}
}

func TestSdMessageMoveTasks(t *testing.T) {
	// The task runs in a goroutine of its own: synctest.Wait tells when it has moved what it can.
	synctest.Test(t, func(t *testing.T) {
		e := sdSetup(t)
		e.create("sd-mv-dlq", nil)
		src := e.create("sd-mv-src", sdKV("VisibilityTimeout", "0",
			"RedrivePolicy", `{"deadLetterTargetArn":"`+sdArn("sd-mv-dlq")+`","maxReceiveCount":1}`))
		dlq := e.create("sd-mv-dlq", nil)
		dest := e.create("sd-mv-dest", nil)
		e.create("sd-mv-dest.fifo", sdKV("FifoQueue", "true"))
		var original []string
		for i := range 3 {
			original = append(original, *e.send(src, fmt.Sprintf("m%d", i)).MessageId)
		}
		require.Len(t, e.receiveN(src, 10), 3)
		require.Empty(t, e.receiveN(src, 10), "moved to the dead-letter queue")
		require.Equal(t, "3/0/0", e.counts(dlq))

		start := func(in *sqs.StartMessageMoveTaskInput) (*sqs.StartMessageMoveTaskOutput, error) {
			return e.c.StartMessageMoveTask(e.ctx, in)
		}
		tasks := func(max *int32) []types.ListMessageMoveTasksResultEntry {
			t.Helper()
			out, err := e.c.ListMessageMoveTasks(e.ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(sdArn("sd-mv-dlq")), MaxResults: max})
			require.NoError(t, err)
			return out.Results
		}

		// 6.9.1, 6.9.2
		_, err := start(&sqs.StartMessageMoveTaskInput{SourceArn: aws.String(sdArn("sd-mv-src"))})
		sdWantErr(t, err, sdBadParam, "Source queue must be configured as a Dead Letter Queue.")
		_, err = start(&sqs.StartMessageMoveTaskInput{SourceArn: aws.String(sdArn("sd-mv-dlq")), DestinationArn: aws.String(sdArn("sd-mv-nowhere"))})
		sdWantErr(t, err, sdNotFound, "The resource that you specified for the DestinationArn parameter doesn't exist.")
		_, err = start(&sqs.StartMessageMoveTaskInput{SourceArn: aws.String(sdArn("sd-mv-dlq")), DestinationArn: aws.String(sdArn("sd-mv-dest.fifo"))})
		sdWantErr(t, err, sdBadParam, "")
		_, err = start(&sqs.StartMessageMoveTaskInput{SourceArn: aws.String(sdArn("sd-mv-dlq")), MaxNumberOfMessagesPerSecond: aws.Int32(501)})
		sdWantErr(t, err, sdBadParam, "")
		_, err = start(&sqs.StartMessageMoveTaskInput{SourceArn: aws.String(sdArn("sd-mv-nowhere"))})
		sdWantErr(t, err, sdNotFound, "The resource that you specified for the SourceArn parameter doesn't exist.")
		require.Empty(t, tasks(aws.Int32(10)), "rejected starts leave no task")

		// A rate-limited task back to the source: it moves one message and waits a second on the clock.
		startedAt := e.clk.Now()
		running, err := start(&sqs.StartMessageMoveTaskInput{SourceArn: aws.String(sdArn("sd-mv-dlq")), MaxNumberOfMessagesPerSecond: aws.Int32(1)})
		require.NoError(t, err)
		require.NotEmpty(t, aws.ToString(running.TaskHandle))
		synctest.Wait()
		list := tasks(nil)
		require.Len(t, list, 1)
		r := list[0]
		require.Equal(t, "RUNNING", aws.ToString(r.Status))
		require.Equal(t, *running.TaskHandle, aws.ToString(r.TaskHandle), "TaskHandle while RUNNING (6.9.7)")
		require.Equal(t, sdArn("sd-mv-dlq"), aws.ToString(r.SourceArn))
		require.Nil(t, r.DestinationArn, "no destination given")
		require.Equal(t, int32(1), aws.ToInt32(r.MaxNumberOfMessagesPerSecond))
		require.Equal(t, int64(1), r.ApproximateNumberOfMessagesMoved)
		require.Equal(t, int64(3), aws.ToInt64(r.ApproximateNumberOfMessagesToMove), "captured at start")
		require.Equal(t, startedAt.UnixMilli(), r.StartedTimestamp, "StartedTimestamp in epoch milliseconds")

		_, err = start(&sqs.StartMessageMoveTaskInput{SourceArn: aws.String(sdArn("sd-mv-dlq"))})
		sdWantErr(t, err, sdBadParam, "There is already a task running. Only one active task is allowed for a source queue arn at a given time.")

		// 6.9.6
		_, err = e.c.CancelMessageMoveTask(e.ctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: aws.String("garbage")})
		sdWantErr(t, err, sdBadParam, "Value for parameter TaskHandle is invalid.")
		twin := sdSetup(t) // same names, no tasks: a well-formed handle of a task it does not have
		twin.create("sd-mv-dlq", nil)
		twin.create("sd-mv-src", sdKV("RedrivePolicy", `{"deadLetterTargetArn":"`+sdArn("sd-mv-dlq")+`","maxReceiveCount":1}`))
		_, err = twin.c.CancelMessageMoveTask(twin.ctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: running.TaskHandle})
		sdWantErr(t, err, sdNotFound, "Task does not exist.")

		cancelled, err := e.c.CancelMessageMoveTask(e.ctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: running.TaskHandle})
		require.NoError(t, err)
		require.Equal(t, int64(1), cancelled.ApproximateNumberOfMessagesMoved)
		synctest.Wait()
		list = tasks(nil)
		require.Len(t, list, 1)
		require.Contains(t, []string{"CANCELLING", "CANCELLED"}, aws.ToString(list[0].Status))
		require.Nil(t, list[0].TaskHandle, "no TaskHandle once not RUNNING")
		require.Equal(t, "2/0/0", e.counts(dlq), "what was moved stays moved")
		back := e.receive(src, &sqs.ReceiveMessageInput{VisibilityTimeout: 30, MessageSystemAttributeNames: []types.MessageSystemAttributeName{"ApproximateReceiveCount"}})
		require.Len(t, back, 1)
		require.Equal(t, "m0", *back[0].Body, "oldest first (6.9.4)")
		require.NotContains(t, original, *back[0].MessageId, "a moved message is a new message (5.5)")
		require.Equal(t, "1", back[0].Attributes["ApproximateReceiveCount"])
		_, err = e.c.CancelMessageMoveTask(e.ctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: running.TaskHandle})
		require.Error(t, err, "cancel works only while RUNNING (6.9.6)")

		// An unlimited task to another queue completes.
		e.clk.Advance(time.Minute)
		done, err := start(&sqs.StartMessageMoveTaskInput{SourceArn: aws.String(sdArn("sd-mv-dlq")), DestinationArn: aws.String(sdArn("sd-mv-dest"))})
		require.NoError(t, err)
		require.NotEmpty(t, aws.ToString(done.TaskHandle))
		synctest.Wait()
		list = tasks(aws.Int32(10))
		require.Len(t, list, 2)
		require.Equal(t, "COMPLETED", aws.ToString(list[0].Status), "newest first (6.9.7)")
		require.Nil(t, list[0].TaskHandle)
		require.Equal(t, sdArn("sd-mv-dest"), aws.ToString(list[0].DestinationArn))
		require.Nil(t, list[0].MaxNumberOfMessagesPerSecond, "no rate given")
		require.Equal(t, int64(2), list[0].ApproximateNumberOfMessagesMoved)
		require.Equal(t, int64(2), aws.ToInt64(list[0].ApproximateNumberOfMessagesToMove))
		require.Equal(t, e.clk.Now().UnixMilli(), list[0].StartedTimestamp)
		require.Equal(t, "CANCELLED", aws.ToString(list[1].Status))
		require.Len(t, tasks(nil), 1, "MaxResults defaults to 1 (6.9.7)")
		require.Equal(t, "0/0/0", e.counts(dlq))
		require.ElementsMatch(t, []string{"m1", "m2"}, sdBodies(e.receiveN(dest, 10)))

		// A message that did not come from a source queue cannot go back to one: the task fails (6.9.7 FAILED).
		e.send(dlq, "orphan")
		_, err = start(&sqs.StartMessageMoveTaskInput{SourceArn: aws.String(sdArn("sd-mv-dlq"))})
		require.NoError(t, err)
		synctest.Wait()
		list = tasks(nil)
		require.Equal(t, "FAILED", aws.ToString(list[0].Status))
		require.NotEmpty(t, aws.ToString(list[0].FailureReason))
		require.Nil(t, list[0].TaskHandle)

		for _, n := range []int32{0, 11} {
			_, err := e.c.ListMessageMoveTasks(e.ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(sdArn("sd-mv-dlq")), MaxResults: aws.Int32(n)})
			t.Logf("MaxResults %d", n)
			sdWantErr(t, err, sdBadParam, "")
		}
	})
}

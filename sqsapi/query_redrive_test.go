package sqsapi_test

// Query-protocol tests of dead-letter queues: RedriveAllowPolicy, ListDeadLetterSourceQueues, message move tasks.

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/fifoq/fifoq"
	"github.com/stretchr/testify/require"
)

// qpDeadLetterPair creates a dead-letter queue and a source with maxReceiveCount 1, sends bodies to the source
// and has them moved to the dead-letter queue by receiving them twice.
func qpDeadLetterPair(t *testing.T, e *qpEnv, src, dlq string, bodies ...string) (srcURL, dlqURL string) {
	t.Helper()
	dlqURL = qpCreate(t, e, dlq)
	srcURL = qpCreate(t, e, src, "RedrivePolicy",
		`{"deadLetterTargetArn":"`+qpArn(dlq)+`","maxReceiveCount":1}`)
	for _, b := range bodies {
		qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", srcURL, "MessageBody", b)
	}
	r := qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", srcURL, "MaxNumberOfMessages", "10",
		"VisibilityTimeout", "0")
	require.Len(t, r.Messages, len(bodies))
	r = qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", srcURL, "MaxNumberOfMessages", "10")
	require.Empty(t, r.Messages, "past maxReceiveCount 1 the messages move to the dead-letter queue (spec 6.3)")
	require.Len(t, qpMessages(t, e, dlq), len(bodies))
	return srcURL, dlqURL
}

func TestQpRedriveAllowPolicy(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	policy := func(dlq string) string {
		return `{"deadLetterTargetArn":"` + qpArn(dlq) + `","maxReceiveCount":2}`
	}
	// denyAll: no queue may use it (spec 6.7).
	qpCreate(t, e, "qp-ra-deny", "RedriveAllowPolicy", `{"redrivePermission":"denyAll"}`)
	qpFail(t, e, 400, "InvalidParameterValue", "CreateQueue", "QueueName", "qp-ra-src0",
		"Attribute.1.Name", "RedrivePolicy", "Attribute.1.Value", policy("qp-ra-deny"))
	_, ok := e.srv.Queue("qp-ra-src0")
	require.False(t, ok)

	// byQueue: only the queues named.
	dlq := qpCreate(t, e, "qp-ra-by", "RedriveAllowPolicy",
		`{"redrivePermission":"byQueue","sourceQueueArns":["`+qpArn("qp-ra-src1")+`"]}`)
	qpCreate(t, e, "qp-ra-src1", "RedrivePolicy", policy("qp-ra-by"))
	require.Equal(t, 2, qpDef(t, e, "qp-ra-src1").RedrivePolicy.MaxReceiveCount)
	qpFail(t, e, 400, "InvalidParameterValue", "CreateQueue", "QueueName", "qp-ra-src2",
		"Attribute.1.Name", "RedrivePolicy", "Attribute.1.Value", policy("qp-ra-by"))
	got := qpNameValues(t, "RedriveAllowPolicy", qpCall[qpGetQueueAttributesResult](t, e, "GetQueueAttributes",
		"QueueUrl", dlq, "AttributeName.1", "RedriveAllowPolicy").Attributes)
	var rap struct {
		RedrivePermission string   `json:"redrivePermission"`
		SourceQueueArns   []string `json:"sourceQueueArns"`
	}
	require.NoError(t, json.Unmarshal([]byte(got["RedriveAllowPolicy"]), &rap), "RedriveAllowPolicy %q", got["RedriveAllowPolicy"])
	require.Equal(t, "byQueue", rap.RedrivePermission)
	require.Equal(t, []string{qpArn("qp-ra-src1")}, rap.SourceQueueArns)
	require.Equal(t, &fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveByQueue, Sources: []string{"qp-ra-src1"}},
		qpDef(t, e, "qp-ra-by").RedriveAllowPolicy)

	// sourceQueueArns only with byQueue, and 1 to 10 of them (spec 6.7; the spec gives no code).
	qpFail(t, e, 400, "", "CreateQueue", "QueueName", "qp-ra-bad1", "Attribute.1.Name", "RedriveAllowPolicy",
		"Attribute.1.Value", `{"redrivePermission":"allowAll","sourceQueueArns":["`+qpArn("qp-ra-src1")+`"]}`)
	var arns []string
	for i := range 11 {
		arns = append(arns, `"`+qpArn("q"+strconv.Itoa(i))+`"`)
	}
	qpFail(t, e, 400, "", "CreateQueue", "QueueName", "qp-ra-bad2", "Attribute.1.Name", "RedriveAllowPolicy",
		"Attribute.1.Value", `{"redrivePermission":"byQueue","sourceQueueArns":[`+strings.Join(arns, ",")+`]}`)
	qpFail(t, e, 400, "", "SetQueueAttributes", "QueueUrl", dlq, "Attribute.1.Name", "RedriveAllowPolicy",
		"Attribute.1.Value", `{"redrivePermission":"sometimes"}`)
	for _, name := range []string{"qp-ra-bad1", "qp-ra-bad2"} {
		_, ok := e.srv.Queue(name)
		require.False(t, ok, "a rejected CreateQueue created %s", name)
	}
	require.Equal(t, fifoq.RedriveByQueue, qpDef(t, e, "qp-ra-by").RedriveAllowPolicy.Permission)

	// A FIFO queue's dead-letter queue is FIFO, and a standard one's standard (spec 6.2).
	qpCreate(t, e, "qp-ra-std-dlq")
	qpFail(t, e, 400, "InvalidParameterValue", "CreateQueue", "QueueName", "qp-ra.fifo",
		"Attribute.1.Name", "FifoQueue", "Attribute.1.Value", "true",
		"Attribute.2.Name", "RedrivePolicy", "Attribute.2.Value", policy("qp-ra-std-dlq"))
	qpFail(t, e, 400, "InvalidParameterValue", "CreateQueue", "QueueName", "qp-ra-nodlq",
		"Attribute.1.Name", "RedrivePolicy", "Attribute.1.Value", policy("qp-ra-missing"))
}

func TestQpListDeadLetterSourceQueues(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	dlqURL := qpCreate(t, e, "qp-dl")
	policy := `{"deadLetterTargetArn":"` + qpArn("qp-dl") + `","maxReceiveCount":5}`
	s1 := qpCreate(t, e, "qp-dl-src1", "RedrivePolicy", policy)
	s2 := qpCreate(t, e, "qp-dl-src2", "RedrivePolicy", policy)
	qpCreate(t, e, "qp-dl-other")
	r := qpCall[qpListDeadLetterSourceQueuesResult](t, e, "ListDeadLetterSourceQueues", "QueueUrl", dlqURL)
	require.ElementsMatch(t, []string{s1, s2}, r.QueueURLs)
	first := qpCall[qpListDeadLetterSourceQueuesResult](t, e, "ListDeadLetterSourceQueues", "QueueUrl", dlqURL, "MaxResults", "1")
	require.Len(t, first.QueueURLs, 1)
	require.NotEmpty(t, first.NextToken)
	second := qpCall[qpListDeadLetterSourceQueuesResult](t, e, "ListDeadLetterSourceQueues", "QueueUrl", dlqURL,
		"MaxResults", "1", "NextToken", first.NextToken)
	require.ElementsMatch(t, []string{s1, s2}, append(first.QueueURLs, second.QueueURLs...))
	none := qpCall[qpListDeadLetterSourceQueuesResult](t, e, "ListDeadLetterSourceQueues", "QueueUrl", s1)
	require.Empty(t, none.QueueURLs)
	qpFail(t, e, 400, "AWS.SimpleQueueService.NonExistentQueue", "ListDeadLetterSourceQueues",
		"QueueUrl", strings.Replace(dlqURL, "qp-dl", "qp-none", 1))
}

func TestQpMessageMoveTasks(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	qpDeadLetterPair(t, e, "qp-mv-src", "qp-mv-dlq", "a", "b", "c")
	for _, s := range qpMessages(t, e, "qp-mv-dlq") {
		require.Equal(t, "qp-mv-src", s.DeadLetterSource)
	}
	dlqArn := qpArn("qp-mv-dlq")

	// Rejected starts (spec 6.9.1, 6.9.2).
	er := qpFail(t, e, 400, "InvalidParameterValue", "StartMessageMoveTask", "SourceArn", qpArn("qp-mv-src"))
	require.Equal(t, "Source queue must be configured as a Dead Letter Queue.", er.Message, "spec 6.9.1")
	er = qpFail(t, e, 404, "ResourceNotFoundException", "StartMessageMoveTask", "SourceArn", dlqArn,
		"DestinationArn", qpArn("qp-mv-none"))
	require.Equal(t, "The resource that you specified for the DestinationArn parameter doesn't exist.", er.Message,
		"spec 6.9.1")
	qpFail(t, e, 400, "InvalidParameterValue", "StartMessageMoveTask", "SourceArn", dlqArn,
		"MaxNumberOfMessagesPerSecond", "501")
	require.Empty(t, qpCall[qpListMessageMoveTasksResult](t, e, "ListMessageMoveTasks", "SourceArn", dlqArn).Results)

	// A task at one message a second waits on the server's clock between moves.
	start := qpCall[qpStartMessageMoveTaskResult](t, e, "StartMessageMoveTask", "SourceArn", dlqArn,
		"MaxNumberOfMessagesPerSecond", "1")
	require.NotEmpty(t, start.TaskHandle)
	er = qpFail(t, e, 400, "InvalidParameterValue", "StartMessageMoveTask", "SourceArn", dlqArn)
	require.Equal(t, "There is already a task running. Only one active task is allowed for a source queue arn at a "+
		"given time.", er.Message, "spec 6.9.3")
	qpWaitTimers(t, e.clock, 1)
	moved := int64(len(qpMessages(t, e, "qp-mv-src")))
	require.Equal(t, int64(3), moved+int64(len(qpMessages(t, e, "qp-mv-dlq"))), "messages lost in the move")

	tasks := qpCall[qpListMessageMoveTasksResult](t, e, "ListMessageMoveTasks", "SourceArn", dlqArn).Results
	require.Len(t, tasks, 1)
	task := tasks[0]
	require.Equal(t, "RUNNING", task.Status)
	require.Equal(t, start.TaskHandle, task.TaskHandle)
	require.Equal(t, dlqArn, task.SourceArn)
	require.Empty(t, task.DestinationArn, "no destination was given (spec 6.9.7)")
	require.NotNil(t, task.MaxNumberOfMessagesPerSecond)
	require.Equal(t, 1, *task.MaxNumberOfMessagesPerSecond)
	require.NotNil(t, task.ApproximateNumberOfMessagesToMove)
	require.Equal(t, int64(3), *task.ApproximateNumberOfMessagesToMove)
	require.Equal(t, moved, task.ApproximateNumberOfMessagesMoved)
	require.Equal(t, qpStart.UnixMilli(), task.StartedTimestamp, "epoch milliseconds")

	// Cancel (spec 6.9.6).
	er = qpFail(t, e, 400, "InvalidParameterValue", "CancelMessageMoveTask", "TaskHandle", "foobared")
	require.Equal(t, "Value for parameter TaskHandle is invalid.", er.Message, "spec 6.9.6")
	c := qpCall[qpCancelMessageMoveTaskResult](t, e, "CancelMessageMoveTask", "TaskHandle", start.TaskHandle)
	require.Equal(t, moved, c.ApproximateNumberOfMessagesMoved)
	tasks = qpCall[qpListMessageMoveTasksResult](t, e, "ListMessageMoveTasks", "SourceArn", dlqArn).Results
	require.Len(t, tasks, 1)
	require.Contains(t, []string{"CANCELLING", "CANCELLED"}, tasks[0].Status)
	require.Empty(t, tasks[0].TaskHandle, "the handle is given only for RUNNING tasks (model)")

	// A task without a rate moves everything back to the source as new messages (spec 5.5, 6.9.4).
	e2 := qpSetup(t)
	src2, _ := qpDeadLetterPair(t, e2, "qp-mv2-src", "qp-mv2-dlq", "x", "y")
	old := map[string]bool{}
	for _, s := range qpMessages(t, e2, "qp-mv2-dlq") {
		old[s.MessageID] = true
	}
	qpCall[qpStartMessageMoveTaskResult](t, e2, "StartMessageMoveTask", "SourceArn", qpArn("qp-mv2-dlq"))
	var got []qpMessage
	for len(got) < 2 {
		r := qpCall[qpReceiveMessageResult](t, e2, "ReceiveMessage", "QueueUrl", src2, "WaitTimeSeconds", "20",
			"MaxNumberOfMessages", "10", "AttributeName.1", "ApproximateReceiveCount")
		got = append(got, r.Messages...)
	}
	require.Len(t, got, 2)
	require.ElementsMatch(t, []string{"x", "y"}, []string{got[0].Body, got[1].Body})
	for _, m := range got {
		require.False(t, old[m.MessageID], "a moved message gets a new MessageId (spec 6.9.4)")
		require.Equal(t, "1", qpNameValues(t, "moved", m.Attributes)["ApproximateReceiveCount"])
	}
	tasks = qpCall[qpListMessageMoveTasksResult](t, e2, "ListMessageMoveTasks", "SourceArn", qpArn("qp-mv2-dlq"),
		"MaxResults", "10").Results
	require.Len(t, tasks, 1)
	require.Nil(t, tasks[0].MaxNumberOfMessagesPerSecond, "no rate was given (model)")
	require.NotNil(t, tasks[0].ApproximateNumberOfMessagesToMove)
	require.Equal(t, int64(2), *tasks[0].ApproximateNumberOfMessagesToMove)
	qpFail(t, e2, 400, "InvalidParameterValue", "ListMessageMoveTasks", "SourceArn", qpArn("qp-mv2-dlq"), "MaxResults", "11")
}

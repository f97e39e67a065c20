package sqsapi_test

// Query-protocol tests of queue actions: CreateQueue, GetQueueUrl, DeleteQueue, ListQueues, attributes, PurgeQueue, tags.

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/stretchr/testify/require"
)

func TestQpCreateQueue(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	create := []string{"QueueName", "qp-std",
		"Attribute.1.Name", "VisibilityTimeout", "Attribute.1.Value", "45",
		"Attribute.2.Name", "MessageRetentionPeriod", "Attribute.2.Value", "3600",
		"Attribute.3.Name", "MaximumMessageSize", "Attribute.3.Value", "2048",
		"Attribute.4.Name", "DelaySeconds", "Attribute.4.Value", "5",
		"Attribute.5.Name", "ReceiveMessageWaitTimeSeconds", "Attribute.5.Value", "2",
		"Tag.1.Key", "team", "Tag.1.Value", "core",
		"Tag.2.Key", "env", "Tag.2.Value", "test",
	}
	r := qpCall[qpCreateQueueResult](t, e, "CreateQueue", create...)
	qpRequireQueueURL(t, r.QueueURL, "qp-std")

	a := qpDef(t, e, "qp-std")
	require.Equal(t, 45*time.Second, a.VisibilityTimeout)
	require.Equal(t, time.Hour, a.Retention)
	require.Equal(t, 2048, a.MaxMessageSize)
	require.Equal(t, 5*time.Second, a.Delay)
	require.Equal(t, 2*time.Second, a.ReceiveWaitTime)

	got := qpNameValues(t, "GetQueueAttributes All", qpCall[qpGetQueueAttributesResult](t, e, "GetQueueAttributes",
		"QueueUrl", r.QueueURL, "AttributeName.1", "All").Attributes)
	created := strconv.FormatInt(qpStart.Unix(), 10) // epoch seconds (spec 7.3.7)
	for name, want := range map[string]string{
		"VisibilityTimeout": "45", "MessageRetentionPeriod": "3600", "MaximumMessageSize": "2048",
		"DelaySeconds": "5", "ReceiveMessageWaitTimeSeconds": "2", "QueueArn": qpArn("qp-std"),
		"CreatedTimestamp": created, "LastModifiedTimestamp": created,
		"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0",
		"ApproximateNumberOfMessagesDelayed": "0",
	} {
		require.Equal(t, want, got[name], "GetQueueAttributes All: %s, in %v", name, got)
	}
	for _, name := range []string{"FifoQueue", "ContentBasedDeduplication", "DeduplicationScope", "FifoThroughputLimit"} {
		require.NotContains(t, got, name, "a standard queue has no FIFO attributes (spec 3.12)")
	}
	tags := qpCall[qpListQueueTagsResult](t, e, "ListQueueTags", "QueueUrl", r.QueueURL)
	require.Equal(t, map[string]string{"team": "core", "env": "test"}, qpTags(tags.Tags))

	// The same name and attributes return the same URL; other attributes are an error (spec 7.3.2).
	again := qpCall[qpCreateQueueResult](t, e, "CreateQueue", create...)
	require.Equal(t, r.QueueURL, again.QueueURL, "CreateQueue with identical attributes is idempotent")
	qpFail(t, e, 400, "QueueAlreadyExists", "CreateQueue", "QueueName", "qp-std",
		"Attribute.1.Name", "VisibilityTimeout", "Attribute.1.Value", "46")
	require.Equal(t, 45*time.Second, qpDef(t, e, "qp-std").VisibilityTimeout)

	// Rejected creations create nothing.
	for _, c := range []struct {
		name, code string
		kv         []string
	}{
		{"bad name!", "InvalidParameterValue", nil},
		{strings.Repeat("a", 81), "InvalidParameterValue", nil},
		{"qp-nosuffix", "InvalidParameterValue", []string{"FifoQueue", "true"}},               // spec 2.1
		{"qp-suffix.fifo", "InvalidParameterValue", nil},                                      // spec 2.1
		{"qp-cbd", "InvalidAttributeName", []string{"ContentBasedDeduplication", "false"}},    // spec 3.12
		{"qp-fifofalse", "InvalidAttributeName", []string{"FifoQueue", "false"}},              // spec 3.12
		{"qp-scope", "InvalidAttributeName", []string{"DeduplicationScope", "queue"}},         // spec 3.12
		{"qp-vt", "InvalidAttributeValue", []string{"VisibilityTimeout", "43201"}},            // spec 1.2.1
		{"qp-delay", "InvalidAttributeValue", []string{"DelaySeconds", "901"}},                // spec 4.1
		{"qp-ret", "InvalidAttributeValue", []string{"MessageRetentionPeriod", "59"}},         // spec 5.1
		{"qp-size", "InvalidAttributeValue", []string{"MaximumMessageSize", "1023"}},          // spec 7.1.2
		{"qp-wait", "InvalidAttributeValue", []string{"ReceiveMessageWaitTimeSeconds", "21"}}, // spec 1.5.1
		{"qp-nan", "InvalidAttributeValue", []string{"VisibilityTimeout", "ten"}},
		{"qp-unknown", "InvalidAttributeName", []string{"NoSuchAttribute", "1"}},
	} {
		kv := []string{"QueueName", c.name}
		for i := 0; i < len(c.kv); i += 2 {
			n := strconv.Itoa(i/2 + 1)
			kv = append(kv, "Attribute."+n+".Name", c.kv[i], "Attribute."+n+".Value", c.kv[i+1])
		}
		qpFail(t, e, 400, c.code, "CreateQueue", kv...)
		_, ok := e.srv.Queue(c.name)
		require.False(t, ok, "a rejected CreateQueue of %q created it", c.name)
	}
	qpFail(t, e, 400, "MissingParameter", "CreateQueue")
	list := qpCall[qpListQueuesResult](t, e, "ListQueues")
	require.Equal(t, []string{r.QueueURL}, list.QueueURLs, "rejected CreateQueue calls created queues")

	// Attributes given with their default values are identical to attributes left out (spec 7.3.2).
	plain := qpCreate(t, e, "qp-plain")
	require.Equal(t, plain, qpCreate(t, e, "qp-plain", "VisibilityTimeout", "30", "DelaySeconds", "0"))
	qpFail(t, e, 400, "QueueAlreadyExists", "CreateQueue", "QueueName", "qp-plain",
		"Attribute.1.Name", "DelaySeconds", "Attribute.1.Value", "1")

	// Names are case-sensitive, and 80 characters at most (spec 7.3.1).
	upper := qpCreate(t, e, "QP-PLAIN")
	require.NotEqual(t, plain, upper)
	qpCreate(t, e, strings.Repeat("n", 80))
}

func TestQpCreateQueueFIFO(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	// Every FIFO attribute (spec 2.1, 3.12, 3.13).
	fifoURL := qpCreate(t, e, "qp.fifo", "FifoQueue", "true", "ContentBasedDeduplication", "true",
		"DeduplicationScope", "messageGroup", "FifoThroughputLimit", "perMessageGroupId")
	fq := qpQueue(t, e, "qp.fifo")
	require.True(t, fq.FIFO())
	require.True(t, qpDef(t, e, "qp.fifo").ContentBasedDeduplication)
	require.Equal(t, fifoq.DeduplicationScopeMessageGroup, qpDef(t, e, "qp.fifo").DeduplicationScope)
	got := qpNameValues(t, "GetQueueAttributes All (FIFO)", qpCall[qpGetQueueAttributesResult](t, e, "GetQueueAttributes",
		"QueueUrl", fifoURL, "AttributeName.1", "All").Attributes)
	for name, want := range map[string]string{
		"FifoQueue": "true", "ContentBasedDeduplication": "true", "DeduplicationScope": "messageGroup",
		"FifoThroughputLimit": "perMessageGroupId", "QueueArn": qpArn("qp.fifo"), "VisibilityTimeout": "30",
		"MessageRetentionPeriod": "345600", "MaximumMessageSize": "1048576", "DelaySeconds": "0",
		"ReceiveMessageWaitTimeSeconds": "0",
	} {
		require.Equal(t, want, got[name], "GetQueueAttributes All (FIFO): %s, in %v", name, got)
	}
	// FIFO queues reject a FifoThroughputLimit of perMessageGroupId
	// without DeduplicationScope messageGroup (spec 3.13, which gives no code).
	qpFail(t, e, 400, "", "CreateQueue", "QueueName", "qp-ht.fifo",
		"Attribute.1.Name", "FifoQueue", "Attribute.1.Value", "true",
		"Attribute.2.Name", "FifoThroughputLimit", "Attribute.2.Value", "perMessageGroupId")
	_, ok := e.srv.Queue("qp-ht.fifo")
	require.False(t, ok)

	// ".fifo" counts in the 80 characters (spec 2.1, 7.3.1).
	qpCreate(t, e, strings.Repeat("f", 75)+".fifo", "FifoQueue", "true")
	qpFail(t, e, 400, "InvalidParameterValue", "CreateQueue", "QueueName", strings.Repeat("f", 76)+".fifo",
		"Attribute.1.Name", "FifoQueue", "Attribute.1.Value", "true")
}

func TestQpGetQueueURLAndDeleteQueue(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-get")
	r := qpCall[qpGetQueueURLResult](t, e, "GetQueueUrl", "QueueName", "qp-get")
	require.Equal(t, u, r.QueueURL)
	r = qpCall[qpGetQueueURLResult](t, e, "GetQueueUrl", "QueueName", "qp-get", "QueueOwnerAWSAccountId", qpAccount)
	require.Equal(t, u, r.QueueURL)
	er := qpFail(t, e, 400, "AWS.SimpleQueueService.NonExistentQueue", "GetQueueUrl", "QueueName", "qp-missing")
	require.Contains(t, er.Message, "does not exist", "spec 7.3.4")

	qpCall[qpNoResult](t, e, "DeleteQueue", "QueueUrl", u)
	_, ok := e.srv.Queue("qp-get")
	require.False(t, ok, "DeleteQueue left the queue")
	qpFail(t, e, 400, "AWS.SimpleQueueService.NonExistentQueue", "GetQueueUrl", "QueueName", "qp-get")
	qpFail(t, e, 400, "AWS.SimpleQueueService.NonExistentQueue", "DeleteQueue", "QueueUrl", u)
	qpFail(t, e, 400, "AWS.SimpleQueueService.NonExistentQueue", "SendMessage", "QueueUrl", u, "MessageBody", "x")

	// A deleted name can be reused after 60 seconds (spec 7.3.2).
	qpFail(t, e, 400, "AWS.SimpleQueueService.QueueDeletedRecently", "CreateQueue", "QueueName", "qp-get")
	e.clock.Advance(61 * time.Second)
	require.Equal(t, u, qpCreate(t, e, "qp-get"))
}

func TestQpListQueues(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	empty := qpCall[qpListQueuesResult](t, e, "ListQueues")
	require.Empty(t, empty.QueueURLs)
	require.Empty(t, empty.NextToken)

	urls := map[string]string{}
	for _, name := range []string{"qp-a1", "qp-a2", "qp-b1"} {
		urls[name] = qpCreate(t, e, name)
	}
	all := qpCall[qpListQueuesResult](t, e, "ListQueues")
	require.ElementsMatch(t, slices.Collect(maps.Values(urls)), all.QueueURLs)
	prefixed := qpCall[qpListQueuesResult](t, e, "ListQueues", "QueueNamePrefix", "qp-a")
	require.ElementsMatch(t, []string{urls["qp-a1"], urls["qp-a2"]}, prefixed.QueueURLs)
	none := qpCall[qpListQueuesResult](t, e, "ListQueues", "QueueNamePrefix", "zz")
	require.Empty(t, none.QueueURLs)

	// Pages of 2 (spec 7.3.6: MaxResults with NextToken).
	first := qpCall[qpListQueuesResult](t, e, "ListQueues", "MaxResults", "2")
	require.Len(t, first.QueueURLs, 2)
	require.NotEmpty(t, first.NextToken, "a first page of 2 out of 3 has a NextToken")
	second := qpCall[qpListQueuesResult](t, e, "ListQueues", "MaxResults", "2", "NextToken", first.NextToken)
	require.Len(t, second.QueueURLs, 1)
	require.Empty(t, second.NextToken, "the last page has no NextToken")
	require.ElementsMatch(t, all.QueueURLs, append(first.QueueURLs, second.QueueURLs...))

	qpFail(t, e, 400, "InvalidParameterValue", "ListQueues", "MaxResults", "1001")
	qpFail(t, e, 400, "InvalidParameterValue", "ListQueues", "MaxResults", "0")
}

func TestQpQueueAttributes(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-attrs")
	get := func(names ...string) map[string]string {
		t.Helper()
		kv := []string{"QueueUrl", u}
		for i, n := range names {
			kv = append(kv, "AttributeName."+strconv.Itoa(i+1), n)
		}
		return qpNameValues(t, "GetQueueAttributes", qpCall[qpGetQueueAttributesResult](t, e, "GetQueueAttributes", kv...).Attributes)
	}
	require.Empty(t, get(), "no AttributeName, no attributes (model)")
	require.Equal(t, map[string]string{"VisibilityTimeout": "30", "ApproximateNumberOfMessages": "0"},
		get("VisibilityTimeout", "ApproximateNumberOfMessages"))

	// The message counts.
	for i := range 3 {
		qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "m"+strconv.Itoa(i))
	}
	qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "later", "DelaySeconds", "60")
	qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u)
	require.Equal(t, map[string]string{"ApproximateNumberOfMessages": "2", "ApproximateNumberOfMessagesNotVisible": "1",
		"ApproximateNumberOfMessagesDelayed": "1"},
		get("ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed"))

	// SetQueueAttributes.
	e.clock.Advance(5 * time.Second)
	qpCall[qpNoResult](t, e, "SetQueueAttributes", "QueueUrl", u,
		"Attribute.1.Name", "VisibilityTimeout", "Attribute.1.Value", "100",
		"Attribute.2.Name", "DelaySeconds", "Attribute.2.Value", "3",
		"Attribute.3.Name", "MessageRetentionPeriod", "Attribute.3.Value", "600")
	a := qpDef(t, e, "qp-attrs")
	require.Equal(t, 100*time.Second, a.VisibilityTimeout)
	require.Equal(t, 3*time.Second, a.Delay)
	require.Equal(t, 10*time.Minute, a.Retention)
	got := get("All")
	require.Equal(t, "100", got["VisibilityTimeout"])
	require.Equal(t, "3", got["DelaySeconds"])
	require.Equal(t, "600", got["MessageRetentionPeriod"])
	require.Equal(t, strconv.FormatInt(qpStart.Unix(), 10), got["CreatedTimestamp"])
	require.Equal(t, strconv.FormatInt(qpStart.Add(5*time.Second).Unix(), 10), got["LastModifiedTimestamp"])

	// Rejections change nothing.
	qpCreate(t, e, "qp-attrs-dlq")
	for _, c := range []struct{ name, value, code string }{
		{"VisibilityTimeout", "-1", "InvalidAttributeValue"},
		{"VisibilityTimeout", "43201", "InvalidAttributeValue"},
		{"MaximumMessageSize", "2000000", "InvalidAttributeValue"},
		{"NoSuchAttribute", "1", "InvalidAttributeName"},
		{"FifoQueue", "true", "InvalidAttributeName"},                                                         // spec 2.1
		{"ContentBasedDeduplication", "true", "InvalidAttributeName"},                                         // spec 3.12
		{"RedrivePolicy", `{"deadLetterTargetArn":"` + qpArn("qp-attrs-dlq") + `"}`, "InvalidParameterValue"}, // spec 6.1
	} {
		qpFail(t, e, 400, c.code, "SetQueueAttributes", "QueueUrl", u,
			"Attribute.1.Name", "DelaySeconds", "Attribute.1.Value", "7",
			"Attribute.2.Name", c.name, "Attribute.2.Value", c.value)
		require.Equal(t, a, qpDef(t, e, "qp-attrs"), "a rejected SetQueueAttributes (%s=%s) changed the queue",
			c.name, c.value)
	}
	qpFail(t, e, 400, "InvalidAttributeName", "GetQueueAttributes", "QueueUrl", u, "AttributeName.1", "NoSuchAttribute")

	// A redrive policy, read back as the JSON SQS gives (spec 6.1), and removed with "".
	qpCall[qpNoResult](t, e, "SetQueueAttributes", "QueueUrl", u, "Attribute.1.Name", "RedrivePolicy",
		"Attribute.1.Value", `{"deadLetterTargetArn":"`+qpArn("qp-attrs-dlq")+`","maxReceiveCount":"4"}`)
	a = qpDef(t, e, "qp-attrs")
	require.Equal(t, catalog.RedrivePolicy{DeadLetterQueue: "qp-attrs-dlq", MaxReceiveCount: 4}, a.RedrivePolicy)
	var policy struct {
		DeadLetterTargetArn string `json:"deadLetterTargetArn"`
		MaxReceiveCount     int    `json:"maxReceiveCount"`
	}
	require.NoError(t, json.Unmarshal([]byte(get("RedrivePolicy")["RedrivePolicy"]), &policy))
	require.Equal(t, qpArn("qp-attrs-dlq"), policy.DeadLetterTargetArn)
	require.Equal(t, 4, policy.MaxReceiveCount)
	qpCall[qpNoResult](t, e, "SetQueueAttributes", "QueueUrl", u, "Attribute.1.Name", "RedrivePolicy", "Attribute.1.Value", "")
	require.Zero(t, qpDef(t, e, "qp-attrs").RedrivePolicy)
	require.NotContains(t, get("All"), "RedrivePolicy")

	// FIFO: FifoQueue=true is a no-op, false an error (spec 2.1).
	fu := qpCreate(t, e, "qp-attrs.fifo", "FifoQueue", "true")
	qpCall[qpNoResult](t, e, "SetQueueAttributes", "QueueUrl", fu, "Attribute.1.Name", "FifoQueue", "Attribute.1.Value", "true")
	qpFail(t, e, 400, "InvalidAttributeValue", "SetQueueAttributes", "QueueUrl", fu,
		"Attribute.1.Name", "FifoQueue", "Attribute.1.Value", "false")
	qpCall[qpNoResult](t, e, "SetQueueAttributes", "QueueUrl", fu,
		"Attribute.1.Name", "ContentBasedDeduplication", "Attribute.1.Value", "true") // spec 3.12
	require.True(t, qpDef(t, e, "qp-attrs.fifo").ContentBasedDeduplication)
}

func TestQpPurgeQueue(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-purge")
	qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "a")
	qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "b", "DelaySeconds", "30")
	qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "c")
	qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u)
	qpCall[qpNoResult](t, e, "PurgeQueue", "QueueUrl", u)
	require.Empty(t, qpMessages(t, e, "qp-purge"), "a purge deletes in-flight and delayed messages too (spec 7.3.3)")

	qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "d")
	e.clock.Advance(59 * time.Second)
	er := qpFail(t, e, 403, "AWS.SimpleQueueService.PurgeQueueInProgress", "PurgeQueue", "QueueUrl", u)
	require.Equal(t, "Only one PurgeQueue operation on qp-purge is allowed every 60 seconds.", er.Message, "spec 7.3.3")
	require.Len(t, qpMessages(t, e, "qp-purge"), 1, "a rejected purge deleted messages")
	e.clock.Advance(time.Second)
	qpCall[qpNoResult](t, e, "PurgeQueue", "QueueUrl", u)
	require.Empty(t, qpMessages(t, e, "qp-purge"))
	qpFail(t, e, 400, "AWS.SimpleQueueService.NonExistentQueue", "PurgeQueue",
		"QueueUrl", strings.Replace(u, "qp-purge", "qp-none", 1))
}

func TestQpTags(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-tags")
	list := func() map[string]string {
		t.Helper()
		return qpTags(qpCall[qpListQueueTagsResult](t, e, "ListQueueTags", "QueueUrl", u).Tags)
	}
	require.Empty(t, list())
	qpCall[qpNoResult](t, e, "TagQueue", "QueueUrl", u, "Tag.1.Key", "a", "Tag.1.Value", "1", "Tag.2.Key", "b", "Tag.2.Value", "2")
	require.Equal(t, map[string]string{"a": "1", "b": "2"}, list())
	qpCall[qpNoResult](t, e, "TagQueue", "QueueUrl", u, "Tag.1.Key", "a", "Tag.1.Value", "3")
	require.Equal(t, map[string]string{"a": "3", "b": "2"}, list())
	qpCall[qpNoResult](t, e, "UntagQueue", "QueueUrl", u, "TagKey.1", "a", "TagKey.2", "never-set")
	require.Equal(t, map[string]string{"b": "2"}, list())
	missing := strings.Replace(u, "qp-tags", "qp-none", 1)
	qpFail(t, e, 400, "AWS.SimpleQueueService.NonExistentQueue", "TagQueue", "QueueUrl", missing, "Tag.1.Key", "a", "Tag.1.Value", "1")
	qpFail(t, e, 400, "AWS.SimpleQueueService.NonExistentQueue", "ListQueueTags", "QueueUrl", missing)
	qpFail(t, e, 400, "AWS.SimpleQueueService.NonExistentQueue", "UntagQueue", "QueueUrl", missing, "TagKey.1", "a")
}

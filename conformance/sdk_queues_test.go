package conformance_test

// SDK tests of queue lifecycle actions: CreateQueue, GetQueueUrl, ListQueues, DeleteQueue, PurgeQueue, tags, unknown queues.

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"
)

func TestSdCreateQueue(t *testing.T) {
	t.Parallel()

	t.Run("standard", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-std", nil)
		require.True(t, strings.HasSuffix(url, "/"+sdAccount+"/sd-std"), "QueueUrl %q, want …/%s/sd-std", url, sdAccount)
		got := e.attrs(url, types.QueueAttributeNameAll)
		require.Equal(t, sdArn("sd-std"), got["QueueArn"])
		for _, name := range []string{"FifoQueue", "ContentBasedDeduplication", "DeduplicationScope", "FifoThroughputLimit", "RedrivePolicy"} {
			require.NotContains(t, got, name, "attributes of a standard queue")
		}
		// Names are case-sensitive (7.3.1): another case is another queue.
		other := e.create("SD-STD", nil)
		require.NotEqual(t, url, other)
	})

	t.Run("fifo", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-fifo.fifo", sdKV("FifoQueue", "true"))
		require.True(t, strings.HasSuffix(url, "/"+sdAccount+"/sd-fifo.fifo"), "QueueUrl %q", url)
		got := e.attrs(url, types.QueueAttributeNameAll)
		require.Equal(t, "true", got["FifoQueue"])
		require.Equal(t, "false", got["ContentBasedDeduplication"])
		require.Equal(t, "queue", got["DeduplicationScope"], "3.13 default")
		require.Equal(t, "perQueue", got["FifoThroughputLimit"], "3.13 default")
		require.Equal(t, sdArn("sd-fifo.fifo"), got["QueueArn"])
	})

	t.Run("attributes", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		want := sdKV("VisibilityTimeout", "45", "DelaySeconds", "5", "MessageRetentionPeriod", "3600",
			"MaximumMessageSize", "2048", "ReceiveMessageWaitTimeSeconds", "7")
		url := e.create("sd-attrs", want)
		got := e.attrs(url, types.QueueAttributeNameAll)
		for k, v := range want {
			require.Equal(t, v, got[k], "attribute %s", k)
		}
		f := e.create("sd-attrs.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true",
			"DeduplicationScope", "messageGroup", "FifoThroughputLimit", "perMessageGroupId"))
		got = e.attrs(f, types.QueueAttributeNameAll)
		require.Equal(t, "true", got["ContentBasedDeduplication"])
		require.Equal(t, "messageGroup", got["DeduplicationScope"])
		require.Equal(t, "perMessageGroupId", got["FifoThroughputLimit"])
		// DeduplicationScope=messageGroup works without perMessageGroupId (3.7).
		e.create("sd-scope.fifo", sdKV("FifoQueue", "true", "DeduplicationScope", "messageGroup"))
	})

	t.Run("tags", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		tags := sdKV("team", "queues", "env", "test")
		out, err := e.c.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String("sd-tagged"), Tags: tags})
		require.NoError(t, err)
		lt, err := e.c.ListQueueTags(e.ctx, &sqs.ListQueueTagsInput{QueueUrl: out.QueueUrl})
		require.NoError(t, err)
		require.Equal(t, tags, lt.Tags)
	})

	t.Run("idempotent and QueueAlreadyExists", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-same", sdKV("DelaySeconds", "5", "VisibilityTimeout", "60"))
		require.Equal(t, url, e.create("sd-same", sdKV("DelaySeconds", "5", "VisibilityTimeout", "60")), "same name and attributes (7.3.2)")
		_, err := e.c.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String("sd-same"), Attributes: sdKV("DelaySeconds", "6")})
		sdWantErr(t, err, sdQueueExists, "A queue already exists with the same name and a different value for attribute DelaySeconds…")
		require.Equal(t, "5", e.attr(url, types.QueueAttributeNameDelaySeconds), "the existing queue is unchanged")

		f := e.create("sd-same.fifo", sdKV("FifoQueue", "true"))
		require.Equal(t, f, e.create("sd-same.fifo", sdKV("FifoQueue", "true")))
		_, err = e.c.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String("sd-same.fifo"),
			Attributes: sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true")})
		sdWantErr(t, err, sdQueueExists, "A queue already exists with the same name and a different value for attribute ContentBasedDeduplication…")
	})

	t.Run("QueueDeletedRecently", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-reuse", nil)
		e.send(url, "old")
		_, err := e.c.DeleteQueue(e.ctx, &sqs.DeleteQueueInput{QueueUrl: &url})
		require.NoError(t, err)
		_, err = e.c.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String("sd-reuse")})
		sdWantErr(t, err, sdDeletedRecently, "")
		e.clk.Advance(59 * time.Second)
		_, err = e.c.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String("sd-reuse")})
		sdWantErr(t, err, sdDeletedRecently, "")
		e.clk.Advance(time.Second) // 60 s after the delete (7.3.2: wait ≥ 60 s)
		url = e.create("sd-reuse", nil)
		require.Equal(t, "0/0/0", e.counts(url), "a new queue under an old name starts empty")
		// Other names are not affected.
		e.create("sd-other", nil)
	})

	t.Run("invalid names", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		_, err := e.c.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String("")})
		sdWantErr(t, err, sdMissing, "The request must contain the parameter QueueName.") // as an empty body (7.1.1)
		for _, tc := range []struct {
			name  string
			attrs map[string]string
		}{
			{strings.Repeat("a", 81), nil},
			{"has space", nil},
			{"has.dot", nil},
			{"bang!", nil},
			{"ünïcode", nil},
			{"std.fifo", nil},                        // a standard queue cannot have the suffix (2.1)
			{"no-suffix", sdKV("FifoQueue", "true")}, // FIFO needs it (2.1)
			{strings.Repeat("a", 76) + ".fifo", sdKV("FifoQueue", "true")}, // the suffix counts toward 80
			{".fifo", sdKV("FifoQueue", "true")},
			{"a b.fifo", sdKV("FifoQueue", "true")},
		} {
			_, err := e.c.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String(tc.name), Attributes: tc.attrs})
			t.Logf("name %q %v", tc.name, tc.attrs)
			sdWantErr(t, err, sdBadParam, "")
		}
		out, err := e.c.ListQueues(e.ctx, &sqs.ListQueuesInput{})
		require.NoError(t, err)
		require.Empty(t, out.QueueUrls, "rejected CreateQueue calls created nothing")
		e.create(strings.Repeat("a", 80), nil)
		e.create(strings.Repeat("b", 75)+".fifo", sdKV("FifoQueue", "true"))
		e.create("Az09_-", nil)
	})

	t.Run("FIFO attribute rules", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		for _, tc := range []struct {
			name        string
			attrs       map[string]string
			code, msg   string
			description string
		}{
			{"sd-s1", sdKV("FifoQueue", "false"), sdBadAttrName, "Unknown Attribute FifoQueue.", "3.12"},
			{"sd-s2", sdKV("ContentBasedDeduplication", "false"), sdBadAttrName, "Unknown Attribute ContentBasedDeduplication.", "3.12"},
			{"sd-s3", sdKV("DeduplicationScope", "queue"), sdBadAttrName, "You can specify the DeduplicationScope only when FifoQueue is set to true.", "3.12"},
			{"sd-s4", sdKV("FifoThroughputLimit", "perQueue"), sdBadAttrName, "You can specify the FifoThroughputLimit only when FifoQueue is set to true.", "3.12"},
			{"sd-f1.fifo", sdKV("FifoQueue", "true", "FifoThroughputLimit", "perMessageGroupId", "DeduplicationScope", "queue"), sdBadAttrValue, "", "3.13"},
			{"sd-f2.fifo", sdKV("FifoQueue", "true", "FifoThroughputLimit", "perMessageGroupId"), sdBadAttrValue, "", "3.13: the default scope is queue"},
			{"sd-f3.fifo", sdKV("FifoQueue", "true", "DeduplicationScope", "group"), sdBadAttrValue, "", "3.13"},
			{"sd-f4.fifo", sdKV("FifoQueue", "true", "FifoThroughputLimit", "perGroup"), sdBadAttrValue, "", "3.13"},
		} {
			_, err := e.c.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String(tc.name), Attributes: tc.attrs})
			t.Logf("%s %v (%s)", tc.name, tc.attrs, tc.description)
			sdWantErr(t, err, tc.code, tc.msg)
		}
	})

	t.Run("invalid attributes", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		for _, tc := range []struct {
			attrs     map[string]string
			code, msg string
		}{
			{sdKV("VisibilityTimeout", "43201"), sdBadAttrValue, ""},
			{sdKV("DelaySeconds", "901"), sdBadAttrValue, ""},
			{sdKV("MessageRetentionPeriod", "59"), sdBadAttrValue, ""},
			{sdKV("MaximumMessageSize", "1023"), sdBadAttrValue, ""},
			{sdKV("ReceiveMessageWaitTimeSeconds", "21"), sdBadAttrValue, ""},
			{sdKV("VisibilityTimeout", "soon"), sdBadAttrValue, ""},
			{sdKV("NoSuchAttribute", "1"), sdBadAttrName, ""},
		} {
			_, err := e.c.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String("sd-bad"), Attributes: tc.attrs})
			t.Logf("attributes %v", tc.attrs)
			sdWantErr(t, err, tc.code, tc.msg)
		}
		_, err := e.c.GetQueueUrl(e.ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("sd-bad")})
		sdWantErr(t, err, sdNonExistentQueue, sdNoQueueText)
	})
}

func TestSdGetQueueUrl(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	url := e.create("sd-url", nil)
	furl := e.create("sd-url.fifo", sdKV("FifoQueue", "true"))

	out, err := e.c.GetQueueUrl(e.ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("sd-url")})
	require.NoError(t, err)
	require.Equal(t, url, aws.ToString(out.QueueUrl))
	out, err = e.c.GetQueueUrl(e.ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("sd-url.fifo"), QueueOwnerAWSAccountId: aws.String(sdAccount)})
	require.NoError(t, err)
	require.Equal(t, furl, aws.ToString(out.QueueUrl))

	for _, name := range []string{"sd-nope", "SD-URL", "sd-url.fif"} {
		_, err = e.c.GetQueueUrl(e.ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
		sdWantErr(t, err, sdNonExistentQueue, sdNoQueueText)
	}
}

func TestSdListQueues(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	var all []string
	for i := range 25 {
		all = append(all, e.create(fmt.Sprintf("sd-list-%02d", i), nil))
	}
	other := e.create("other-queue", nil)

	list := func(in *sqs.ListQueuesInput) *sqs.ListQueuesOutput {
		t.Helper()
		out, err := e.c.ListQueues(e.ctx, in)
		require.NoError(t, err, "ListQueues %+v", in)
		return out
	}

	out := list(&sqs.ListQueuesInput{})
	require.ElementsMatch(t, append(slices.Clone(all), other), out.QueueUrls)
	require.Nil(t, out.NextToken, "no NextToken without MaxResults")

	out = list(&sqs.ListQueuesInput{QueueNamePrefix: aws.String("sd-list-1")})
	require.ElementsMatch(t, all[10:20], out.QueueUrls, "prefix sd-list-1")
	require.Empty(t, list(&sqs.ListQueuesInput{QueueNamePrefix: aws.String("nothing")}).QueueUrls)
	require.Empty(t, list(&sqs.ListQueuesInput{QueueNamePrefix: aws.String("SD-LIST")}).QueueUrls, "prefixes are case-sensitive")

	// Paging: MaxResults 10 over 25 queues gives 10, 10 and 5, with a NextToken on all pages but the last.
	var paged []string
	var sizes []int
	var token *string
	for range 5 {
		out = list(&sqs.ListQueuesInput{QueueNamePrefix: aws.String("sd-list-"), MaxResults: aws.Int32(10), NextToken: token})
		paged = append(paged, out.QueueUrls...)
		sizes = append(sizes, len(out.QueueUrls))
		if token = out.NextToken; token == nil {
			break
		}
	}
	require.Equal(t, []int{10, 10, 5}, sizes, "page sizes")
	require.ElementsMatch(t, all, paged, "every queue exactly once over the pages")

	// The paginator the SDK ships walks the same pages.
	p := sqs.NewListQueuesPaginator(e.c, &sqs.ListQueuesInput{MaxResults: aws.Int32(7)})
	var viaPaginator []string
	for p.HasMorePages() {
		page, err := p.NextPage(e.ctx)
		require.NoError(t, err)
		viaPaginator = append(viaPaginator, page.QueueUrls...)
	}
	require.ElementsMatch(t, append(slices.Clone(all), other), viaPaginator)

	// MaxResults is 1..1000 (7.3.6).
	for _, n := range []int32{0, 1001, -1} {
		_, err := e.c.ListQueues(e.ctx, &sqs.ListQueuesInput{MaxResults: aws.Int32(n)})
		t.Logf("MaxResults %d", n)
		sdWantErr(t, err, sdBadParam, "")
	}
}

func TestSdDeleteQueue(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	url := e.create("sd-del", nil)
	keep := e.create("sd-keep", nil)
	e.send(url, "gone with the queue")
	_, err := e.c.DeleteQueue(e.ctx, &sqs.DeleteQueueInput{QueueUrl: &url})
	require.NoError(t, err)

	// Deletion may take up to 60 s (7.3.2); after that the queue is gone for every action.
	e.clk.Advance(60 * time.Second)
	_, err = e.c.GetQueueUrl(e.ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("sd-del")})
	sdWantErr(t, err, sdNonExistentQueue, sdNoQueueText)
	_, err = e.trySend(url, "x")
	sdWantErr(t, err, sdNonExistentQueue, sdNoQueueText)
	_, err = e.c.DeleteQueue(e.ctx, &sqs.DeleteQueueInput{QueueUrl: &url})
	sdWantErr(t, err, sdNonExistentQueue, sdNoQueueText)
	out, err := e.c.ListQueues(e.ctx, &sqs.ListQueuesInput{})
	require.NoError(t, err)
	require.Equal(t, []string{keep}, out.QueueUrls)
	_, ok := e.srv.Queue("sd-del")
	require.False(t, ok, "Server.Queue after DeleteQueue")
}

func TestSdPurgeQueue(t *testing.T) {
	t.Parallel()

	t.Run("standard", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-purge", nil)
		e.send(url, "in flight")
		e.receiveOne(url)
		e.send(url, "visible")
		e.send(url, "delayed", sdDelay(30))
		require.Equal(t, "1/1/1", e.counts(url))
		_, err := e.c.PurgeQueue(e.ctx, &sqs.PurgeQueueInput{QueueUrl: &url})
		require.NoError(t, err)
		require.Equal(t, "0/0/0", e.counts(url), "purge removes visible, in-flight and delayed messages (7.3.3)")

		// Once per 60 s.
		_, err = e.c.PurgeQueue(e.ctx, &sqs.PurgeQueueInput{QueueUrl: &url})
		sdWantErr(t, err, sdPurgeInProgress, "Only one PurgeQueue operation on sd-purge is allowed every 60 seconds.")
		var re *awshttp.ResponseError
		require.ErrorAs(t, err, &re)
		require.Equal(t, http.StatusForbidden, re.HTTPStatusCode(), "PurgeQueueInProgress is HTTP 403")

		e.clk.Advance(sdDefaultVT + time.Second)
		require.Empty(t, e.receiveN(url, 10), "purged messages never come back after their visibility timeout or delay")
		e.clk.Advance(28 * time.Second) // 59 s after the purge
		_, err = e.c.PurgeQueue(e.ctx, &sqs.PurgeQueueInput{QueueUrl: &url})
		sdWantErr(t, err, sdPurgeInProgress, "")
		e.clk.Advance(2 * time.Second)
		_, err = e.c.PurgeQueue(e.ctx, &sqs.PurgeQueueInput{QueueUrl: &url})
		require.NoError(t, err, "61 s after the first purge")

		// Another queue is not limited by this one's purge.
		other := e.create("sd-purge-2", nil)
		_, err = e.c.PurgeQueue(e.ctx, &sqs.PurgeQueueInput{QueueUrl: &other})
		require.NoError(t, err)
	})

	t.Run("FIFO clears deduplication", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-purge.fifo", sdKV("FifoQueue", "true"))
		e.send(url, "first", sdGroup("g"), sdDedup("d"))
		_, err := e.c.PurgeQueue(e.ctx, &sqs.PurgeQueueInput{QueueUrl: &url})
		require.NoError(t, err)
		e.send(url, "again", sdGroup("g"), sdDedup("d"))
		require.Equal(t, []string{"again"}, sdBodies(e.receiveN(url, 10)), "a purge clears the deduplication ids (3.10)")
	})
}

func TestSdQueueTags(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	url := e.create("sd-tags", nil)
	list := func() map[string]string {
		t.Helper()
		out, err := e.c.ListQueueTags(e.ctx, &sqs.ListQueueTagsInput{QueueUrl: &url})
		require.NoError(t, err)
		return out.Tags
	}
	require.Empty(t, list())
	_, err := e.c.TagQueue(e.ctx, &sqs.TagQueueInput{QueueUrl: &url, Tags: sdKV("a", "1", "b", "2")})
	require.NoError(t, err)
	require.Equal(t, sdKV("a", "1", "b", "2"), list())
	_, err = e.c.TagQueue(e.ctx, &sqs.TagQueueInput{QueueUrl: &url, Tags: sdKV("b", "3", "c", "4")})
	require.NoError(t, err)
	require.Equal(t, sdKV("a", "1", "b", "3", "c", "4"), list(), "TagQueue adds and overwrites")
	_, err = e.c.UntagQueue(e.ctx, &sqs.UntagQueueInput{QueueUrl: &url, TagKeys: []string{"a", "no-such-key"}})
	require.NoError(t, err)
	require.Equal(t, sdKV("b", "3", "c", "4"), list())
	other := e.create("sd-tags-2", nil)
	out, err := e.c.ListQueueTags(e.ctx, &sqs.ListQueueTagsInput{QueueUrl: &other})
	require.NoError(t, err)
	require.Empty(t, out.Tags, "tags belong to their queue")
}

// TestSdUnknownQueue sends every action that takes a queue URL to a queue that does not exist (7.3.4).
func TestSdUnknownQueue(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	url := e.unknownURL("sd-no-such-queue")
	h := aws.String("handle")
	for name, call := range map[string]func(ctx context.Context, c *sqs.Client) error{
		"DeleteQueue": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &url})
			return err
		},
		"GetQueueAttributes": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: []types.QueueAttributeName{"All"}})
			return err
		},
		"SetQueueAttributes": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &url, Attributes: sdKV("DelaySeconds", "1")})
			return err
		},
		"PurgeQueue": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: &url})
			return err
		},
		"SendMessage": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("b")})
			return err
		},
		"SendMessageBatch": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: []types.SendMessageBatchRequestEntry{
				{Id: aws.String("a"), MessageBody: aws.String("b")}}})
			return err
		},
		"ReceiveMessage": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url})
			return err
		},
		"DeleteMessage": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: h})
			return err
		},
		"DeleteMessageBatch": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &url, Entries: []types.DeleteMessageBatchRequestEntry{
				{Id: aws.String("a"), ReceiptHandle: h}}})
			return err
		},
		"ChangeMessageVisibility": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: h, VisibilityTimeout: 5})
			return err
		},
		"ChangeMessageVisibilityBatch": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &url,
				Entries: []types.ChangeMessageVisibilityBatchRequestEntry{{Id: aws.String("a"), ReceiptHandle: h, VisibilityTimeout: 5}}})
			return err
		},
		"TagQueue": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.TagQueue(ctx, &sqs.TagQueueInput{QueueUrl: &url, Tags: sdKV("a", "b")})
			return err
		},
		"UntagQueue": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.UntagQueue(ctx, &sqs.UntagQueueInput{QueueUrl: &url, TagKeys: []string{"a"}})
			return err
		},
		"ListQueueTags": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: &url})
			return err
		},
		"ListDeadLetterSourceQueues": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: &url})
			return err
		},
		"AddPermission": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.AddPermission(ctx, &sqs.AddPermissionInput{QueueUrl: &url, Label: aws.String("l"),
				AWSAccountIds: []string{sdAccount}, Actions: []string{"SendMessage"}})
			return err
		},
		"RemovePermission": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.RemovePermission(ctx, &sqs.RemovePermissionInput{QueueUrl: &url, Label: aws.String("l")})
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			sdWantErr(t, call(t.Context(), e.c), sdNonExistentQueue, sdNoQueueText)
		})
	}
	t.Run("ListMessageMoveTasks", func(t *testing.T) {
		_, err := e.c.ListMessageMoveTasks(t.Context(), &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(sdArn("sd-no-such-queue"))})
		sdWantErr(t, err, sdNotFound, "")
	})
}

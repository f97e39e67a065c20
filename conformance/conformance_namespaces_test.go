package conformance_test

// Accounts and regions through the SDK (TestNs*): one server holds the queues of many accounts and regions
// apart; the region comes from the request's credential scope or its host, the account from a 12-digit
// access key id; a queue name stands for a QueueUrl; move task handles; AWSTraceHeader from
// X-Amzn-Trace-Id.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/sqsapi"
)

// nsClient returns a client that signs for region with the access key id keyID, sent to endpoint.
func nsClient(srv *sqsapi.Server, region, keyID, endpoint string) *sqs.Client {
	var creds aws.CredentialsProvider = aws.AnonymousCredentials{}
	if keyID != "" {
		creds = sdStatic(keyID, "secret")
	}
	return sqs.New(sqs.Options{Region: region, BaseEndpoint: aws.String(endpoint), HTTPClient: srv.HTTPClient(),
		Credentials: creds, Retryer: aws.NopRetryer{}})
}

// deletedReuse is how long after its deletion a queue's name can be used again, and a second more.
const deletedReuse = 61 * time.Second

// nsURL is the URL of a queue as the server answers it to a client of endpoint http://fifoq.test: a queue
// outside the default region names its region (LocalStack's path form), the host naming none.
func nsURL(region, account, name string) string {
	if region != sdRegion {
		return "http://fifoq.test/queue/" + region + "/" + account + "/" + name
	}
	return "http://fifoq.test/" + account + "/" + name
}

// nsArn is the ARN AWS gives a queue: in the partition of its region, aws-us-gov in GovCloud's regions,
// aws-cn in China's, aws in the others.
func nsArn(region, account, name string) string {
	partition := "aws"
	switch {
	case strings.HasPrefix(region, "us-gov-"):
		partition = "aws-us-gov"
	case strings.HasPrefix(region, "cn-"):
		partition = "aws-cn"
	}
	return "arn:" + partition + ":sqs:" + region + ":" + account + ":" + name
}

func nsCreate(t *testing.T, c *sqs.Client, name string, attrs map[string]string) string {
	t.Helper()
	out, err := c.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: &name, Attributes: attrs})
	require.NoError(t, err, "CreateQueue %s", name)
	return aws.ToString(out.QueueUrl)
}

func nsAttr(t *testing.T, c *sqs.Client, url, name string) string {
	t.Helper()
	out, err := c.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeName(name)}})
	require.NoError(t, err, "GetQueueAttributes %s %s", url, name)
	return out.Attributes[name]
}

func nsReceive(t *testing.T, c *sqs.Client, url string) []types.Message {
	t.Helper()
	out, err := c.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{"All"}})
	require.NoError(t, err, "ReceiveMessage %s", url)
	return out.Messages
}

// The same name in two regions and in two accounts is three different queues, each with its own URL (which
// carries its account), ARN, messages, ListQueues and GetQueueUrl.
func TestNsSameNameApart(t *testing.T) {
	t.Parallel()
	srv := sqsapi.NewServer(sqsapi.WithClock(fifoq.NewManualClock(sdStart)))
	type ns struct{ region, account, keyID string }
	spaces := []ns{
		{"us-east-1", sdAccount, "AKIDNOTANACCOUNT"},  // the defaults
		{"eu-west-1", sdAccount, "AKIDNOTANACCOUNT"},  // another region
		{"us-east-1", "111111111111", "111111111111"}, // another account
		{"eu-west-1", "222222222222", "222222222222"}, // both
	}
	urls := make([]string, len(spaces))
	for i, n := range spaces {
		c := nsClient(srv, n.region, n.keyID, "http://fifoq.test")
		for _, name := range []string{"orders", "orders.fifo"} {
			attrs := map[string]string(nil)
			if strings.HasSuffix(name, ".fifo") {
				attrs = map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"}
			}
			u := nsCreate(t, c, name, attrs)
			require.Equal(t, nsURL(n.region, n.account, name), u, "URL in %v", n)
			require.Equal(t, nsArn(n.region, n.account, name), nsAttr(t, c, u, "QueueArn"))
			if name == "orders" {
				urls[i] = u
			}
		}
	}
	for i, n := range spaces {
		c := nsClient(srv, n.region, n.keyID, "http://fifoq.test")
		_, err := c.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: &urls[i], MessageBody: aws.String("to " + n.region + "/" + n.account)})
		require.NoError(t, err)
		_, err = c.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String("orders.fifo"),
			MessageBody: aws.String("fifo " + n.region + "/" + n.account), MessageGroupId: aws.String("g")})
		require.NoError(t, err)
	}
	for i, n := range spaces {
		c := nsClient(srv, n.region, n.keyID, "http://fifoq.test")
		require.Equal(t, []string{"to " + n.region + "/" + n.account}, sdBodies(nsReceive(t, c, urls[i])), "orders of %v", n)
		require.Equal(t, []string{"fifo " + n.region + "/" + n.account}, sdBodies(nsReceive(t, c, "orders.fifo")), "orders.fifo of %v", n)
		list, err := c.ListQueues(t.Context(), &sqs.ListQueuesInput{})
		require.NoError(t, err)
		require.Equal(t, []string{urls[i], urls[i] + ".fifo"}, list.QueueUrls, "ListQueues in %v", n)
		got, err := c.GetQueueUrl(t.Context(), &sqs.GetQueueUrlInput{QueueName: aws.String("orders")})
		require.NoError(t, err)
		require.Equal(t, urls[i], aws.ToString(got.QueueUrl), "GetQueueUrl in %v", n)
	}
	// A queue of one namespace only does not exist in another.
	nsCreate(t, nsClient(srv, "eu-west-1", "AKID", "http://fifoq.test"), "only-eu", nil)
	_, err := nsClient(srv, "us-east-1", "AKID", "http://fifoq.test").GetQueueUrl(t.Context(), &sqs.GetQueueUrlInput{QueueName: aws.String("only-eu")})
	sdWantErr(t, err, sdNonExistentQueue, sdNoQueueText)
	// QueueOwnerAWSAccountId names another account of the request's region.
	got, err := nsClient(srv, "us-east-1", "AKID", "http://fifoq.test").GetQueueUrl(t.Context(),
		&sqs.GetQueueUrlInput{QueueName: aws.String("orders"), QueueOwnerAWSAccountId: aws.String("111111111111")})
	require.NoError(t, err)
	require.Equal(t, urls[2], aws.ToString(got.QueueUrl))
	// Server.Queue is of the default namespace; the catalogue's Queues has them all.
	q, ok := srv.Queue("orders")
	require.True(t, ok)
	require.Equal(t, "orders", q.Name())
	require.Len(t, srv.Catalog().Queues(), 2*len(spaces)+1)
}

// Without a credential scope, the region is the first label of the host that is a region name; a signed
// request's scope wins over its host.
func TestNsHostRegion(t *testing.T) {
	t.Parallel()
	srv := sqsapi.NewServer(sqsapi.WithClock(fifoq.NewManualClock(sdStart)))
	for _, tc := range []struct{ endpoint, region string }{
		{"http://sqs.eu-west-1.localhost", "eu-west-1"},
		{"http://eu-central-2.queue.localhost:9324", "eu-central-2"},
		{"https://sqs.ap-southeast-2.amazonaws.com", "ap-southeast-2"},
		{"http://sqs.us-gov-west-1.localhost", "us-gov-west-1"},
		{"http://localhost:9324", "us-east-1"},
		{"http://sqs.not-a-region.localhost", "us-east-1"},
	} {
		c := nsClient(srv, "us-east-1", "", tc.endpoint) // anonymous: no Authorization header
		name := "host-" + strings.NewReplacer(".", "-", ":", "-", "/", "").Replace(tc.endpoint)
		u := nsCreate(t, c, name, nil)
		require.Equal(t, nsArn(tc.region, sdAccount, name), nsAttr(t, c, u, "QueueArn"), "endpoint %s", tc.endpoint)
		// A client signing for that region reaches the same queue from any host.
		signed := nsClient(srv, tc.region, "AKID", "http://localhost")
		_, err := signed.GetQueueUrl(t.Context(), &sqs.GetQueueUrlInput{QueueName: &name})
		require.NoError(t, err, "signed for %s", tc.region)
	}
	// The credential scope wins over the host.
	c := nsClient(srv, "us-west-2", "AKID", "http://sqs.eu-west-1.localhost")
	u := nsCreate(t, c, "scope-wins", nil)
	require.Equal(t, nsArn("us-west-2", sdAccount, "scope-wins"), nsAttr(t, c, u, "QueueArn"))
}

// A queue URL that names another account reaches that account's queue, in the request's region.
func TestNsCrossAccountURL(t *testing.T) {
	t.Parallel()
	srv := sqsapi.NewServer(sqsapi.WithClock(fifoq.NewManualClock(sdStart)))
	owner := nsClient(srv, "eu-west-1", "111111111111", "http://fifoq.test")
	other := nsClient(srv, "eu-west-1", "222222222222", "http://fifoq.test")
	u := nsCreate(t, owner, "shared", nil)
	nsCreate(t, other, "shared", nil) // its own, of the same name
	_, err := other.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: &u, MessageBody: aws.String("across")})
	require.NoError(t, err)
	require.Equal(t, []string{"across"}, sdBodies(nsReceive(t, owner, "shared")))
	require.Empty(t, nsReceive(t, other, "shared"), "the sender's own queue of that name")
	// In another region the URL names a queue that does not exist.
	_, err = nsClient(srv, "us-east-1", "222222222222", "http://fifoq.test").SendMessage(t.Context(),
		&sqs.SendMessageInput{QueueUrl: &u, MessageBody: aws.String("x")})
	sdWantErr(t, err, sdNonExistentQueue, sdNoQueueText)
}

// nsAction is an action that takes a QueueUrl, called with the URL given.
type nsAction struct {
	name string
	call func(ctx context.Context, c *sqs.Client, url string, handle string) error
}

// nsQueueURLActions are all the actions that take a QueueUrl; DeleteQueue is last.
var nsQueueURLActions = []nsAction{
	{"SendMessage", func(ctx context.Context, c *sqs.Client, u, _ string) error {
		_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &u, MessageBody: aws.String("b")})
		return err
	}},
	{"SendMessageBatch", func(ctx context.Context, c *sqs.Client, u, _ string) error {
		_, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &u,
			Entries: []types.SendMessageBatchRequestEntry{{Id: aws.String("1"), MessageBody: aws.String("b")}}})
		return err
	}},
	{"ReceiveMessage", func(ctx context.Context, c *sqs.Client, u, _ string) error {
		_, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &u})
		return err
	}},
	{"ChangeMessageVisibility", func(ctx context.Context, c *sqs.Client, u, h string) error {
		_, err := c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &u, ReceiptHandle: &h, VisibilityTimeout: 60})
		return err
	}},
	{"ChangeMessageVisibilityBatch", func(ctx context.Context, c *sqs.Client, u, h string) error {
		_, err := c.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &u,
			Entries: []types.ChangeMessageVisibilityBatchRequestEntry{{Id: aws.String("1"), ReceiptHandle: &h, VisibilityTimeout: 60}}})
		return err
	}},
	{"DeleteMessageBatch", func(ctx context.Context, c *sqs.Client, u, h string) error {
		_, err := c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &u,
			Entries: []types.DeleteMessageBatchRequestEntry{{Id: aws.String("1"), ReceiptHandle: &h}}})
		return err
	}},
	{"DeleteMessage", func(ctx context.Context, c *sqs.Client, u, h string) error {
		_, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &u, ReceiptHandle: &h})
		return err
	}},
	{"GetQueueAttributes", func(ctx context.Context, c *sqs.Client, u, _ string) error {
		_, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &u})
		return err
	}},
	{"SetQueueAttributes", func(ctx context.Context, c *sqs.Client, u, _ string) error {
		_, err := c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &u, Attributes: map[string]string{"DelaySeconds": "0"}})
		return err
	}},
	{"TagQueue", func(ctx context.Context, c *sqs.Client, u, _ string) error {
		_, err := c.TagQueue(ctx, &sqs.TagQueueInput{QueueUrl: &u, Tags: map[string]string{"k": "v"}})
		return err
	}},
	{"ListQueueTags", func(ctx context.Context, c *sqs.Client, u, _ string) error {
		_, err := c.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: &u})
		return err
	}},
	{"UntagQueue", func(ctx context.Context, c *sqs.Client, u, _ string) error {
		_, err := c.UntagQueue(ctx, &sqs.UntagQueueInput{QueueUrl: &u, TagKeys: []string{"k"}})
		return err
	}},
	{"AddPermission", func(ctx context.Context, c *sqs.Client, u, _ string) error {
		_, err := c.AddPermission(ctx, &sqs.AddPermissionInput{QueueUrl: &u, Label: aws.String("l"),
			AWSAccountIds: []string{"111111111111"}, Actions: []string{"SendMessage"}})
		return err
	}},
	{"RemovePermission", func(ctx context.Context, c *sqs.Client, u, _ string) error {
		_, err := c.RemovePermission(ctx, &sqs.RemovePermissionInput{QueueUrl: &u, Label: aws.String("l")})
		return err
	}},
	{"ListDeadLetterSourceQueues", func(ctx context.Context, c *sqs.Client, u, _ string) error {
		_, err := c.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: &u})
		return err
	}},
	{"PurgeQueue", func(ctx context.Context, c *sqs.Client, u, _ string) error {
		_, err := c.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: &u})
		return err
	}},
	{"DeleteQueue", func(ctx context.Context, c *sqs.Client, u, _ string) error {
		_, err := c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &u})
		return err
	}},
}

// A queue name stands for a QueueUrl, in every action that takes one, resolved in the request's account and
// region: a name of another namespace's queue does not exist.
func TestNsQueueNameAsURL(t *testing.T) {
	t.Parallel()
	srv := sqsapi.NewServer(sqsapi.WithClock(fifoq.NewManualClock(sdStart)))
	eu := nsClient(srv, "eu-west-1", "111111111111", "http://fifoq.test")
	us := nsClient(srv, "us-east-1", "111111111111", "http://fifoq.test")
	u := nsCreate(t, eu, "by-name", nil)
	_, err := eu.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: &u, MessageBody: aws.String("m")})
	require.NoError(t, err)
	_, err = eu.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: &u, MessageBody: aws.String("m")})
	require.NoError(t, err)
	ms := nsReceive(t, eu, u)
	require.Len(t, ms, 2)
	handles := []string{aws.ToString(ms[0].ReceiptHandle), aws.ToString(ms[1].ReceiptHandle)}
	for _, a := range nsQueueURLActions {
		h := handles[0]
		if a.name == "DeleteMessage" {
			h = handles[1]
		}
		err := a.call(t.Context(), us, "by-name", h)
		sdWantErr(t, err, sdNonExistentQueue, sdNoQueueText)
		require.NoError(t, a.call(t.Context(), eu, "by-name", h), "%s with QueueUrl=by-name", a.name)
	}
	_, err = eu.GetQueueUrl(t.Context(), &sqs.GetQueueUrlInput{QueueName: aws.String("by-name")})
	sdWantErr(t, err, sdNonExistentQueue, sdNoQueueText) // DeleteQueue by name deleted it
}

// A dead-letter queue is in the account and region of its sources: a RedrivePolicy or RedriveAllowPolicy
// that names a queue of another namespace is refused, and one of the same namespace works there, with its
// ARNs and URLs of that namespace.
func TestNsRedriveNamespaces(t *testing.T) {
	t.Parallel()
	clock := fifoq.NewManualClock(sdStart)
	srv := sqsapi.NewServer(sqsapi.WithClock(clock))
	eu := nsClient(srv, "eu-west-1", "111111111111", "http://fifoq.test")
	us := nsClient(srv, "us-east-1", "111111111111", "http://fifoq.test")
	other := nsClient(srv, "eu-west-1", "222222222222", "http://fifoq.test")
	dlqURL := nsCreate(t, eu, "dlq", nil)
	dlqARN := nsArn("eu-west-1", "111111111111", "dlq")
	policy := `{"deadLetterTargetArn":"` + dlqARN + `","maxReceiveCount":1}`
	noTarget := "Value " + policy + " for parameter RedrivePolicy is invalid. Reason: Dead-letter target does not exist."
	for _, c := range []*sqs.Client{us, other} {
		_, err := c.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String("src"),
			Attributes: map[string]string{"RedrivePolicy": policy}})
		sdWantErr(t, err, sdBadParam, noTarget)
		u := nsCreate(t, c, "plain", nil)
		_, err = c.SetQueueAttributes(t.Context(), &sqs.SetQueueAttributesInput{QueueUrl: &u, Attributes: map[string]string{"RedrivePolicy": policy}})
		sdWantErr(t, err, sdBadParam, noTarget)
	}
	allow := `{"redrivePermission":"byQueue","sourceQueueArns":["` + nsArn("us-east-1", "111111111111", "src") + `"]}`
	_, err := eu.SetQueueAttributes(t.Context(), &sqs.SetQueueAttributesInput{QueueUrl: &dlqURL, Attributes: map[string]string{"RedriveAllowPolicy": allow}})
	sdWantErr(t, err, sdBadAttrValue, "Invalid value for the parameter RedriveAllowPolicy. Reason: Invalid source queue ARN "+
		nsArn("us-east-1", "111111111111", "src")+".")

	// In its namespace.
	srcARN := nsArn("eu-west-1", "111111111111", "src")
	_, err = eu.SetQueueAttributes(t.Context(), &sqs.SetQueueAttributesInput{QueueUrl: &dlqURL,
		Attributes: map[string]string{"RedriveAllowPolicy": `{"redrivePermission":"byQueue","sourceQueueArns":["` + srcARN + `"]}`}})
	require.NoError(t, err)
	require.JSONEq(t, `{"redrivePermission":"byQueue","sourceQueueArns":["`+srcARN+`"]}`, nsAttr(t, eu, dlqURL, "RedriveAllowPolicy"))
	srcURL := nsCreate(t, eu, "src", map[string]string{"RedrivePolicy": policy})
	require.JSONEq(t, policy, nsAttr(t, eu, srcURL, "RedrivePolicy"))
	sources, err := eu.ListDeadLetterSourceQueues(t.Context(), &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: &dlqURL})
	require.NoError(t, err)
	require.Equal(t, []string{nsURL("eu-west-1", "111111111111", "src")}, sources.QueueUrls)
	_, err = eu.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: &srcURL, MessageBody: aws.String("poison")})
	require.NoError(t, err)
	require.Len(t, nsReceive(t, eu, srcURL), 1)
	clock.Advance(31 * time.Second) // past the visibility timeout: the next receive moves it
	require.Empty(t, nsReceive(t, eu, srcURL), "moved to the dead-letter queue")
	ms := nsReceive(t, eu, dlqURL)
	require.Len(t, ms, 1)
	require.Equal(t, srcARN, ms[0].Attributes["DeadLetterQueueSourceArn"])
}

// A move task's handle is base64 of a JSON object with the task's id and its source's ARN; a well-formed
// handle of no task is ResourceNotFoundException, a malformed one InvalidParameterValue.
func TestNsMoveTaskHandle(t *testing.T) {
	t.Parallel()
	clock := fifoq.NewManualClock(sdStart)
	srv := sqsapi.NewServer(sqsapi.WithClock(clock))
	c := nsClient(srv, "eu-west-1", "111111111111", "http://fifoq.test")
	dlqURL := nsCreate(t, c, "h-dlq", nil)
	dlqARN := nsArn("eu-west-1", "111111111111", "h-dlq")
	destURL := nsCreate(t, c, "h-dest", nil)
	destARN := nsArn("eu-west-1", "111111111111", "h-dest")
	nsCreate(t, c, "h-src", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + dlqARN + `","maxReceiveCount":1}`})
	for _, b := range []string{"m1", "m2", "m3"} {
		_, err := c.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: &dlqURL, MessageBody: &b})
		require.NoError(t, err)
	}
	out, err := c.StartMessageMoveTask(t.Context(), &sqs.StartMessageMoveTaskInput{SourceArn: &dlqARN,
		DestinationArn: &destARN, MaxNumberOfMessagesPerSecond: aws.Int32(1)})
	require.NoError(t, err)
	handle := aws.ToString(out.TaskHandle)
	raw, err := base64.StdEncoding.DecodeString(handle)
	require.NoError(t, err, "a TaskHandle is base64 (standard encoding): %q", handle)
	var decoded map[string]string
	require.NoError(t, json.Unmarshal(raw, &decoded), "a TaskHandle is JSON: %s", raw)
	require.Equal(t, dlqARN, decoded["sourceArn"], "%s", raw)
	require.Regexp(t, regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`), decoded["taskId"])
	require.Len(t, decoded, 2, "%s", raw)

	for _, h := range []struct{ handle, message string }{
		{base64.StdEncoding.EncodeToString([]byte(`{"taskId":"00000000-0000-4000-8000-000000000000","sourceArn":"` + dlqARN + `"}`)),
			"Task does not exist."},
		// The task's id with the ARN of a queue of another region, which does not exist (as AWS recorded).
		{base64.StdEncoding.EncodeToString([]byte(`{"taskId":"` + decoded["taskId"] + `","sourceArn":"` + nsArn("us-east-1", "111111111111", "h-dlq") + `"}`)),
			"The resource that you specified for the SourceArn parameter doesn't exist."},
	} {
		_, err := c.CancelMessageMoveTask(t.Context(), &sqs.CancelMessageMoveTaskInput{TaskHandle: &h.handle})
		sdWantErr(t, err, sdNotFound, h.message)
	}
	for _, h := range []string{"not-a-handle", base64.StdEncoding.EncodeToString([]byte("not json")),
		base64.StdEncoding.EncodeToString([]byte(`{"taskId":"x"}`)), base64.RawURLEncoding.EncodeToString([]byte("0123456789abcdef" + dlqARN))} {
		_, err := c.CancelMessageMoveTask(t.Context(), &sqs.CancelMessageMoveTaskInput{TaskHandle: &h})
		sdWantErr(t, err, sdBadParam, "Value for parameter TaskHandle is invalid.")
	}

	// The task waits on the manual clock after its first message: deleting its destination ends it, FAILED.
	_, err = c.DeleteQueue(t.Context(), &sqs.DeleteQueueInput{QueueUrl: &destURL})
	require.NoError(t, err)
	list, err := c.ListMessageMoveTasks(t.Context(), &sqs.ListMessageMoveTasksInput{SourceArn: &dlqARN})
	require.NoError(t, err)
	require.Len(t, list.Results, 1)
	r := list.Results[0]
	require.Equal(t, "FAILED", aws.ToString(r.Status))
	require.Equal(t, "AWS.SimpleQueueService.NonExistentQueue", aws.ToString(r.FailureReason))
	require.Nil(t, r.TaskHandle, "only a running task shows its handle")
	require.Equal(t, destARN, aws.ToString(r.DestinationArn))
	_, err = c.CancelMessageMoveTask(t.Context(), &sqs.CancelMessageMoveTaskInput{TaskHandle: &handle})
	sdWantErr(t, err, sdBadParam, "Only tasks in status RUNNING can be cancelled.")
}

// nsHeader is a transport that adds a header to every request.
type nsHeader struct {
	rt          http.RoundTripper
	name, value string
}

func (h nsHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return h.rt.RoundTrip(r)
}

// SendMessage and every entry of SendMessageBatch take the X-Amzn-Trace-Id header for AWSTraceHeader, unless
// the message has an AWSTraceHeader of its own; MD5OfMessageSystemAttributes is the digest of the header
// taken, as if it had been given.
func TestNsTraceHeaderFromHTTP(t *testing.T) {
	t.Parallel()
	srv := sqsapi.NewServer(sqsapi.WithClock(fifoq.NewManualClock(sdStart)))
	const fromHTTP = "Root=1-67891233-abcdef012345678912345678;Parent=463ac35c9f6413ad;Sampled=1"
	plain := sdClient(srv, sdStatic("AKID", "secret"))
	traced := sqs.New(sqs.Options{Region: sdRegion, BaseEndpoint: aws.String("http://fifoq.test"), Credentials: sdStatic("AKID", "secret"),
		Retryer: aws.NopRetryer{}, HTTPClient: &http.Client{Transport: nsHeader{srv.HTTPClient().Transport, "X-Amzn-Trace-Id", fromHTTP}}})
	u := nsCreate(t, plain, "traced", nil)

	// The digests of the same header given as the attribute.
	given := func(h string) string {
		out, err := plain.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: &u, MessageBody: aws.String("ref"),
			MessageSystemAttributes: map[string]types.MessageSystemAttributeValue{"AWSTraceHeader": {DataType: aws.String("String"), StringValue: &h}}})
		require.NoError(t, err)
		return aws.ToString(out.MD5OfMessageSystemAttributes)
	}
	md5HTTP, md5Explicit := given(fromHTTP), given(sdTraceHeader)
	require.Len(t, nsReceive(t, plain, u), 2)
	_, err := plain.PurgeQueue(t.Context(), &sqs.PurgeQueueInput{QueueUrl: &u})
	require.NoError(t, err)

	one, err := traced.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: &u, MessageBody: aws.String("header")})
	require.NoError(t, err)
	require.Equal(t, md5HTTP, aws.ToString(one.MD5OfMessageSystemAttributes))
	two, err := traced.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: &u, MessageBody: aws.String("explicit"),
		MessageSystemAttributes: map[string]types.MessageSystemAttributeValue{"AWSTraceHeader": {DataType: aws.String("String"), StringValue: aws.String(sdTraceHeader)}}})
	require.NoError(t, err)
	require.Equal(t, md5Explicit, aws.ToString(two.MD5OfMessageSystemAttributes), "the explicit attribute wins")
	batch, err := traced.SendMessageBatch(t.Context(), &sqs.SendMessageBatchInput{QueueUrl: &u, Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("a"), MessageBody: aws.String("batch a")},
		{Id: aws.String("b"), MessageBody: aws.String("batch b"), MessageSystemAttributes: map[string]types.MessageSystemAttributeValue{
			"AWSTraceHeader": {DataType: aws.String("String"), StringValue: aws.String(sdTraceHeader)}}},
		{Id: aws.String("c"), MessageBody: aws.String("batch c")},
	}})
	require.NoError(t, err)
	require.Len(t, batch.Successful, 3)
	for _, e := range batch.Successful {
		want := md5HTTP
		if aws.ToString(e.Id) == "b" {
			want = md5Explicit
		}
		require.Equal(t, want, aws.ToString(e.MD5OfMessageSystemAttributes), "entry %s", aws.ToString(e.Id))
	}
	_, err = plain.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: &u, MessageBody: aws.String("untraced")})
	require.NoError(t, err)

	got := map[string]string{}
	for _, m := range nsReceive(t, plain, u) {
		got[aws.ToString(m.Body)] = m.Attributes["AWSTraceHeader"]
	}
	require.Equal(t, map[string]string{"header": fromHTTP, "explicit": sdTraceHeader, "batch a": fromHTTP,
		"batch b": sdTraceHeader, "batch c": fromHTTP, "untraced": ""}, got)
}

// A durable server keeps the queues of each account and region apart across restarts, clean or a crash:
// their messages, attributes, tags and redrive policies, and the names deleted in the last 60 seconds; and
// a server opened again with other defaults keeps the namespaces the queues were made in.
func TestNsDurableRestart(t *testing.T) {
	t.Parallel()
	for _, crash := range []bool{false, true} {
		t.Run(fmt.Sprintf("crash=%v", crash), func(t *testing.T) {
			t.Parallel()
			d := drMemory(t)
			eu := func() *sqs.Client { return nsClient(d.srv, "eu-west-1", "111111111111", "http://fifoq.test") }
			us := func() *sqs.Client { return nsClient(d.srv, "us-east-1", "000000000000", "http://fifoq.test") }
			dlqARN := nsArn("eu-west-1", "111111111111", "dlq.fifo")
			srcARN := nsArn("eu-west-1", "111111111111", "orders.fifo")
			fifo := map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"}
			nsCreate(t, eu(), "dlq.fifo", map[string]string{"FifoQueue": "true",
				"RedriveAllowPolicy": `{"redrivePermission":"byQueue","sourceQueueArns":["` + srcARN + `"]}`})
			nsCreate(t, eu(), "orders.fifo", map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true",
				"RedrivePolicy": `{"deadLetterTargetArn":"` + dlqARN + `","maxReceiveCount":2}`})
			nsCreate(t, us(), "orders.fifo", fifo)
			nsCreate(t, eu(), "gone", nil)
			_, err := eu().DeleteQueue(t.Context(), &sqs.DeleteQueueInput{QueueUrl: aws.String("gone")})
			require.NoError(t, err)
			for _, c := range []struct {
				c    *sqs.Client
				body string
			}{{eu(), "eu"}, {us(), "us"}} {
				_, err := c.c.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String("orders.fifo"), MessageBody: &c.body, MessageGroupId: aws.String("g")})
				require.NoError(t, err)
			}
			_, err = eu().TagQueue(t.Context(), &sqs.TagQueueInput{QueueUrl: aws.String("orders.fifo"), Tags: map[string]string{"ns": "eu"}})
			require.NoError(t, err)
			attrs := func(c *sqs.Client, name string) map[string]string {
				out, err := c.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: &name, AttributeNames: []types.QueueAttributeName{"All"}})
				require.NoError(t, err)
				delete(out.Attributes, "ApproximateNumberOfMessages")
				return out.Attributes
			}
			before := []map[string]string{attrs(eu(), "orders.fifo"), attrs(eu(), "dlq.fifo"), attrs(us(), "orders.fifo")}

			d.restart(crash)
			require.Equal(t, before, []map[string]string{attrs(eu(), "orders.fifo"), attrs(eu(), "dlq.fifo"), attrs(us(), "orders.fifo")})
			require.Equal(t, []string{"eu"}, sdBodies(nsReceive(t, eu(), "orders.fifo")))
			require.Equal(t, []string{"us"}, sdBodies(nsReceive(t, us(), "orders.fifo")))
			tags, err := eu().ListQueueTags(t.Context(), &sqs.ListQueueTagsInput{QueueUrl: aws.String("orders.fifo")})
			require.NoError(t, err)
			require.Equal(t, map[string]string{"ns": "eu"}, tags.Tags)
			tags, err = us().ListQueueTags(t.Context(), &sqs.ListQueueTagsInput{QueueUrl: aws.String("orders.fifo")})
			require.NoError(t, err)
			require.Empty(t, tags.Tags)
			sources, err := eu().ListDeadLetterSourceQueues(t.Context(), &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: aws.String("dlq.fifo")})
			require.NoError(t, err)
			require.Equal(t, []string{nsURL("eu-west-1", "111111111111", "orders.fifo")}, sources.QueueUrls)
			_, err = eu().CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String("gone")})
			sdWantErr(t, err, sdDeletedRecently, "You must wait 60 seconds after deleting a queue before you can create another with the same name.")
			nsCreate(t, us(), "gone", nil) // another namespace's name

			// Other defaults: the queues stay where they were made.
			d.stop(false)
			d.st = d.openStore()
			d.srv, err = drServe(d.st, catalog.Namespace{Account: "111111111111", Region: "eu-west-1"},
				[]catalog.Option{catalog.WithClock(d.clk)})
			require.NoError(t, err)
			d.c = sdClient(d.srv, sdStatic("AKID", "secret"))
			unsigned := nsClient(d.srv, "", "", "http://localhost") // the new defaults
			list, err := unsigned.ListQueues(t.Context(), &sqs.ListQueuesInput{})
			require.NoError(t, err)
			require.Equal(t, []string{"http://localhost/111111111111/dlq.fifo", "http://localhost/111111111111/orders.fifo"}, list.QueueUrls)
			list, err = us().ListQueues(t.Context(), &sqs.ListQueuesInput{})
			require.NoError(t, err)
			// us-east-1 is no longer the default region: its URLs name it.
			require.Equal(t, []string{"http://fifoq.test/queue/us-east-1/000000000000/gone",
				"http://fifoq.test/queue/us-east-1/000000000000/orders.fifo"}, list.QueueUrls)
			// A queue of the new defaults with the name of a queue of the old ones is another queue.
			_, err = unsigned.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String("gone")})
			sdWantErr(t, err, sdDeletedRecently, "You must wait 60 seconds after deleting a queue before you can create another with the same name.")
			d.clk.Advance(deletedReuse)
			u := nsCreate(t, unsigned, "gone", nil)
			require.Equal(t, nsArn("eu-west-1", "111111111111", "gone"), nsAttr(t, unsigned, u, "QueueArn"))
			require.Equal(t, nsArn("us-east-1", "000000000000", "gone"), nsAttr(t, us(), "gone", "QueueArn"))
		})
	}
}

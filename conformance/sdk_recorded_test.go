package conformance_test

// Answers that AWS gave on record (issue "AWS-exact, the last steps"), through aws-sdk-go-v2: each test names
// where AWS's answer was recorded. sqsapi/recorded_test.go sends the same requests raw in both protocols.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq/sqsapi"
)

// Item 1: a queue may be its own dead-letter queue, and queues may form longer cycles. Recorded (2024):
// SetQueueAttributes with RedrivePolicy {"deadLetterTargetArn": <own ARN>, "maxReceiveCount": "42"}
// succeeds, GetQueueAttributes returns it, RedrivePolicy "" removes it (LocalStack's AWS-validated
// test_set_empty_redrive_policy, tests/aws/services/sqs/test_sqs.py).
func TestSdOwnDeadLetterQueue(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	q := e.create("sd-self", sdKV("VisibilityTimeout", "0"))
	require.NoError(t, e.setAttrs(q, sdKV("RedrivePolicy", `{"deadLetterTargetArn":"`+sdArn("sd-self")+`","maxReceiveCount":"42"}`)))
	var p map[string]any
	require.NoError(t, json.Unmarshal([]byte(e.attr(q, types.QueueAttributeNameRedrivePolicy)), &p))
	require.Equal(t, map[string]any{"deadLetterTargetArn": sdArn("sd-self"), "maxReceiveCount": 42.0}, p)
	src, err := e.c.ListDeadLetterSourceQueues(e.ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: &q})
	require.NoError(t, err)
	require.Equal(t, []string{q}, src.QueueUrls)

	// Its messages are received past maxReceiveCount: a move into the queue itself leaves them where they are.
	require.NoError(t, e.setAttrs(q, sdKV("RedrivePolicy", `{"deadLetterTargetArn":"`+sdArn("sd-self")+`","maxReceiveCount":1}`)))
	sent := e.send(q, "m")
	for i := range 3 {
		ms := e.receive(q, &sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{"All"}})
		require.Len(t, ms, 1, "receive %d", i+1)
		require.Equal(t, *sent.MessageId, *ms[0].MessageId)
		require.NotContains(t, ms[0].Attributes, "DeadLetterQueueSourceArn")
	}

	// A cycle of two: the message moves on to b, then back.
	b := e.create("sd-cycle-b", sdKV("RedrivePolicy", `{"deadLetterTargetArn":"`+sdArn("sd-self")+`","maxReceiveCount":"5"}`))
	require.NoError(t, e.setAttrs(q, sdKV("RedrivePolicy", `{"deadLetterTargetArn":"`+sdArn("sd-cycle-b")+`","maxReceiveCount":"1"}`)))
	require.Empty(t, e.receiveN(q, 1), "past q's limit: moved to b")
	ms := e.receive(b, &sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{"All"}})
	require.Len(t, ms, 1)
	require.Equal(t, *sent.MessageId, *ms[0].MessageId)
	require.Equal(t, sdArn("sd-self"), ms[0].Attributes["DeadLetterQueueSourceArn"])
	require.Equal(t, "4", ms[0].Attributes["ApproximateReceiveCount"], "the receive count carries on")

	require.NoError(t, e.setAttrs(q, sdKV("RedrivePolicy", "")))
	require.NotContains(t, e.attrs(q, types.QueueAttributeNameAll), "RedrivePolicy")
}

// Item 3: CancelMessageMoveTask with a well-formed handle whose source queue does not exist: 404
// ResourceNotFoundException for the SourceArn parameter; with a source that exists and no such task, "Task
// does not exist." Recorded 2024-01-05 (LocalStack, tests/aws/services/sqs/test_sqs_move_task.snapshot.json,
// test_cancel_with_invalid_source_arn_in_task_handle, test_cancel_with_invalid_task_id_in_task_handle).
func TestSdCancelMoveTaskUnknownSource(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	e.create("sd-mt-src", nil)
	handle := func(id, source string) *string {
		b, _ := json.Marshal(map[string]string{"taskId": id, "sourceArn": source})
		return aws.String(base64.StdEncoding.EncodeToString(b))
	}
	_, err := e.c.CancelMessageMoveTask(e.ctx, &sqs.CancelMessageMoveTaskInput{
		TaskHandle: handle("10f57157-fc38-4da9-a113-4de7e12d05dd", "arn:aws:sqs:us-east-1:878966065785:test-queue-doesnt-exist-123456")})
	sdWantErr(t, err, sdNotFound, "The resource that you specified for the SourceArn parameter doesn't exist.")
	_, err = e.c.CancelMessageMoveTask(e.ctx, &sqs.CancelMessageMoveTaskInput{
		TaskHandle: handle("10f57157-fc38-4da9-a113-4de7e12d05aa", sdArn("sd-mt-src"))})
	sdWantErr(t, err, sdNotFound, "Task does not exist.")
}

// Item 6: a MessageDeduplicationId on a standard queue. A single SendMessage gets the framed text recorded in
// a production log ("Value <uuid> for parameter MessageDeduplicationId is invalid. Reason: The request include
// parameter that is not valid for this queue type."); a batch entry the unframed one (aws/aws-sdk-js#4216).
func TestSdDeduplicationIDOnStandardQueue(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	q := e.create("sd-dedup-std", nil)
	_, err := e.trySend(q, "m", sdDedup("2f1c-id"))
	sdWantErr(t, err, sdBadParam, "Value 2f1c-id for parameter MessageDeduplicationId is invalid. Reason: "+
		"The request include parameter that is not valid for this queue type.")
	out, err := e.c.SendMessageBatch(e.ctx, &sqs.SendMessageBatchInput{QueueUrl: &q, Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("a"), MessageBody: aws.String("m"), MessageDeduplicationId: aws.String("2f1c-id")}}})
	require.NoError(t, err)
	require.Len(t, out.Failed, 1)
	require.Equal(t, "The request include parameter that is not valid for this queue type", aws.ToString(out.Failed[0].Message))
	require.Equal(t, sdBadParam, aws.ToString(out.Failed[0].Code))
}

// Item 6: UntagQueue with an empty tag key is refused as TagQueue refuses one; with an empty TagKeys list,
// AWS's answer to botocore's untag_queue(TagKeys=[]) (getmoto/moto#1686): InvalidParameterValue "Tag keys must
// be between 1 and 128 characters in length.". Nothing is removed.
func TestSdUntagQueueEmptyKeys(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	q := e.create("sd-untag", nil)
	_, err := e.c.TagQueue(e.ctx, &sqs.TagQueueInput{QueueUrl: &q, Tags: sdKV("a", "1")})
	require.NoError(t, err)
	_, err = e.c.TagQueue(e.ctx, &sqs.TagQueueInput{QueueUrl: &q, Tags: sdKV("", "1")})
	sdWantErr(t, err, sdBadParam, "Value  for parameter TagKey is invalid. Reason: Tag keys must be between 1 and 128 characters in length.")
	_, err = e.c.UntagQueue(e.ctx, &sqs.UntagQueueInput{QueueUrl: &q, TagKeys: []string{""}})
	sdWantErr(t, err, sdBadParam, "Value  for parameter TagKey is invalid. Reason: Tag keys must be between 1 and 128 characters in length.")
	_, err = e.c.UntagQueue(e.ctx, &sqs.UntagQueueInput{QueueUrl: &q, TagKeys: []string{}})
	sdWantErr(t, err, sdBadParam, "Tag keys must be between 1 and 128 characters in length.")
	tags, err := e.c.ListQueueTags(e.ctx, &sqs.ListQueueTagsInput{QueueUrl: &q})
	require.NoError(t, err)
	require.Equal(t, sdKV("a", "1"), tags.Tags)
}

// sdShiftedSigner signs requests as if the clock read by shift more than it does.
type sdShiftedSigner struct {
	v4    *v4.Signer
	shift time.Duration
}

func (s sdShiftedSigner) SignHTTP(ctx context.Context, creds aws.Credentials, r *http.Request, payloadHash, service, region string,
	signingTime time.Time, optFns ...func(*v4.SignerOptions)) error {
	return s.v4.SignHTTP(ctx, creds, r, payloadHash, service, region, signingTime.Add(s.shift), optFns...)
}

// Item 6: a request signed more than 15 minutes ahead of the server's clock gets AWS's "Signature not yet
// current: <date> is still later than <now+15> (<now> + 15 min.)" (recorded, e.g. from ECR in 2018:
// "Signature not yet current: 20180404T155030Z is still later than 20180404T070416Z (20180404T064916Z + 15
// min.)"), and one more than 15 minutes behind it "Signature expired: <date> is now earlier than <now-15>
// (<now> - 15 min.)". Both are SignatureDoesNotMatch, 403.
func TestSdSignatureTime(t *testing.T) {
	t.Parallel()
	srv := sqsapi.NewServer(sqsapi.WithSignatureVerification(func(id string) (string, bool) { return "s3cr3t", id == "AKIDTIME" }))
	for _, c := range []struct {
		shift time.Duration
		re    string
	}{
		{20 * time.Minute, `^Signature not yet current: (\d{8}T\d{6}Z) is still later than (\d{8}T\d{6}Z) \((\d{8}T\d{6}Z) \+ 15 min\.\)$`},
		{-20 * time.Minute, `^Signature expired: (\d{8}T\d{6}Z) is now earlier than (\d{8}T\d{6}Z) \((\d{8}T\d{6}Z) - 15 min\.\)$`},
	} {
		client := sqs.New(sqs.Options{Region: sdRegion, BaseEndpoint: aws.String("http://fifoq.test"), HTTPClient: srv.HTTPClient(),
			Credentials: sdStatic("AKIDTIME", "s3cr3t"), Retryer: aws.NopRetryer{},
			HTTPSignerV4: sdShiftedSigner{v4.NewSigner(), c.shift}})
		before := time.Now().UTC()
		_, err := client.ListQueues(t.Context(), &sqs.ListQueuesInput{})
		var ae smithy.APIError
		require.ErrorAs(t, err, &ae, "shift %v", c.shift)
		require.Equal(t, "SignatureDoesNotMatch", ae.ErrorCode())
		var re *awshttp.ResponseError
		require.ErrorAs(t, err, &re)
		require.Equal(t, http.StatusForbidden, re.HTTPStatusCode())
		m := regexp.MustCompile(c.re).FindStringSubmatch(ae.ErrorMessage())
		require.NotNil(t, m, "message %q, want %s", ae.ErrorMessage(), c.re)
		signed, _ := time.Parse("20060102T150405Z", m[1])
		limit, _ := time.Parse("20060102T150405Z", m[2])
		now, _ := time.Parse("20060102T150405Z", m[3])
		require.WithinDuration(t, before.Add(c.shift), signed, 2*time.Second, "the signing date")
		require.WithinDuration(t, before, now, 5*time.Second, "the server's now")
		if c.shift > 0 {
			require.Equal(t, now.Add(15*time.Minute), limit)
		} else {
			require.Equal(t, now.Add(-15*time.Minute), limit)
		}
	}
}

// Item 4: AddPermission with a principal that is not a 12-digit account id is 400 InvalidParameterValue
// "Value [<entry>] for parameter PrincipalId is invalid. Reason: Unable to verify." and changes nothing
// (recorded: MuleSoft's SQS connector test against AWS). Item 6: the policy keeps AWS's key order.
func TestSdAddPermissionPrincipals(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	q := e.create("sd-perm", nil)
	add := func(label string, ids ...string) error {
		_, err := e.c.AddPermission(e.ctx, &sqs.AddPermissionInput{QueueUrl: &q, Label: &label, AWSAccountIds: ids,
			Actions: []string{"SendMessage"}})
		return err
	}
	for _, id := range []string{"*", "arn:aws:iam::123456789012:root", ""} {
		sdWantErr(t, add("l", id), sdBadParam, "Value ["+id+"] for parameter PrincipalId is invalid. Reason: Unable to verify.")
	}
	require.NotContains(t, e.attrs(q, types.QueueAttributeNameAll), "Policy")
	require.NoError(t, add("l", "111111111111"))
	arn := sdArn("sd-perm")
	require.Equal(t, `{"Version":"2008-10-17","Id":"`+arn+`/SQSDefaultPolicy","Statement":[{"Sid":"l","Effect":"Allow",`+
		`"Principal":{"AWS":"arn:aws:iam::111111111111:root"},"Action":"SQS:SendMessage","Resource":"`+arn+`"}]}`,
		e.attr(q, types.QueueAttributeNamePolicy))
}

// Item 2 changed the keys of the query protocol's JSON answers (Accept: application/json), which no SDK asks
// for: the SDKs' JSON protocol keeps the model's names (QueueUrls, Messages) and leaves absent members out.
func TestSdJSONProtocolKeysUnchanged(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	q := e.create("sd-keys", nil)
	var raw []byte
	capture := func(o *sqs.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			return s.Deserialize.Add(middleware.DeserializeMiddlewareFunc("sdCapture", func(ctx context.Context,
				in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleDeserialize(ctx, in)
				if resp, ok := out.RawResponse.(*smithyhttp.Response); ok {
					raw, _ = io.ReadAll(resp.Body)
					resp.Body = io.NopCloser(bytes.NewReader(raw))
				}
				return out, md, err
			}), middleware.After)
		})
	}
	_, err := e.c.ListQueues(e.ctx, &sqs.ListQueuesInput{QueueNamePrefix: aws.String("sd-keys")}, capture)
	require.NoError(t, err)
	require.JSONEq(t, `{"QueueUrls":["`+q+`"]}`, string(raw))
	_, err = e.c.SendMessage(e.ctx, &sqs.SendMessageInput{QueueUrl: &q, MessageBody: aws.String("m")}, capture)
	require.NoError(t, err)
	require.NotContains(t, string(raw), "null")
	out, err := e.c.ReceiveMessage(e.ctx, &sqs.ReceiveMessageInput{QueueUrl: &q}, capture)
	require.NoError(t, err)
	require.Len(t, out.Messages, 1)
	require.Contains(t, string(raw), `{"Messages":[{`)
	require.NotContains(t, string(raw), "null")
}

// Item 5: a client per region, both pointed at one endpoint (as most test set-ups do), get different URLs
// for queue-x: the server's default region /<account>/queue-x, another /queue/<region>/<account>/queue-x
// (LocalStack's path form). Each URL reaches its own region's queue; the old form still works, in the
// request's region.
func TestSdRegionalURLs(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	eu := sqs.New(sqs.Options{Region: "eu-west-1", BaseEndpoint: aws.String("http://fifoq.test"), HTTPClient: e.srv.HTTPClient(),
		Credentials: sdStatic("AKIDSDKTEST", "sdk-test-secret"), Retryer: aws.NopRetryer{}})
	home := e.create("queue-x", nil)
	out, err := eu.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String("queue-x")})
	require.NoError(t, err)
	away := aws.ToString(out.QueueUrl)
	require.Equal(t, "http://fifoq.test/"+sdAccount+"/queue-x", home)
	require.Equal(t, "http://fifoq.test/queue/eu-west-1/"+sdAccount+"/queue-x", away)
	got, err := eu.GetQueueUrl(e.ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("queue-x")})
	require.NoError(t, err)
	require.Equal(t, away, aws.ToString(got.QueueUrl))
	list, err := eu.ListQueues(e.ctx, &sqs.ListQueuesInput{})
	require.NoError(t, err)
	require.Equal(t, []string{away}, list.QueueUrls)

	e.send(home, "home")
	_, err = eu.SendMessage(e.ctx, &sqs.SendMessageInput{QueueUrl: &away, MessageBody: aws.String("away")})
	require.NoError(t, err)
	_, err = eu.SendMessage(e.ctx, &sqs.SendMessageInput{QueueUrl: &home, MessageBody: aws.String("old form")})
	require.NoError(t, err, "the old form, in the request's region")
	require.Equal(t, []string{"home"}, sdBodies(e.receiveN(home, 10)))
	r, err := eu.ReceiveMessage(e.ctx, &sqs.ReceiveMessageInput{QueueUrl: &away, MaxNumberOfMessages: 10})
	require.NoError(t, err)
	require.Equal(t, []string{"away", "old form"}, sdBodies(r.Messages))
	a, err := eu.GetQueueAttributes(e.ctx, &sqs.GetQueueAttributesInput{QueueUrl: &away, AttributeNames: []types.QueueAttributeName{"QueueArn"}})
	require.NoError(t, err)
	require.Equal(t, "arn:aws:sqs:eu-west-1:"+sdAccount+":queue-x", a.Attributes["QueueArn"])
}

package conformance_test

import (
	"context"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/sqsapi"
)

var smokeCredentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "secret"}, nil
})

// smokeClient returns an SDK client that calls srv in process.
func smokeClient(srv *sqsapi.Server) *sqs.Client {
	return sqs.New(sqs.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String("http://fifoq.test"),
		HTTPClient:   srv.HTTPClient(),
		Credentials:  smokeCredentials,
	})
}

func TestSmokeStandardQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := fifoq.NewManualClock(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	srv := sqsapi.NewServer(sqsapi.WithClock(clock))
	client := smokeClient(srv)

	created, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{
		QueueName:  aws.String("jobs"),
		Attributes: map[string]string{"VisibilityTimeout": "45"},
	})
	require.NoError(t, err)
	require.Equal(t, "http://fifoq.test/000000000000/jobs", aws.ToString(created.QueueUrl))
	url := created.QueueUrl

	sent, err := client.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl:    url,
		MessageBody: aws.String("hello"),
		MessageAttributes: map[string]types.MessageAttributeValue{
			"color": {DataType: aws.String("String"), StringValue: aws.String("blue")},
			"size":  {DataType: aws.String("Number.int"), StringValue: aws.String("42")},
			"blob":  {DataType: aws.String("Binary"), BinaryValue: []byte{0, 1, 2, 255}},
		},
	})
	require.NoError(t, err, "the SDK checks MD5OfMessageBody")
	require.NotEmpty(t, aws.ToString(sent.MessageId))
	require.Len(t, aws.ToString(sent.MD5OfMessageAttributes), 32)

	got, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:                    url,
		MaxNumberOfMessages:         10,
		MessageAttributeNames:       []string{"All"},
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
	})
	require.NoError(t, err)
	require.Len(t, got.Messages, 1)
	m := got.Messages[0]
	require.Equal(t, "hello", aws.ToString(m.Body))
	require.Equal(t, aws.ToString(sent.MessageId), aws.ToString(m.MessageId))
	require.Equal(t, aws.ToString(sent.MD5OfMessageAttributes), aws.ToString(m.MD5OfMessageAttributes))
	require.Equal(t, "42", aws.ToString(m.MessageAttributes["size"].StringValue))
	require.Equal(t, []byte{0, 1, 2, 255}, m.MessageAttributes["blob"].BinaryValue)
	require.Equal(t, "1", m.Attributes["ApproximateReceiveCount"])
	require.Equal(t, "1735787045000", m.Attributes["SentTimestamp"])

	attrs, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       url,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll},
	})
	require.NoError(t, err)
	require.Equal(t, "1", attrs.Attributes["ApproximateNumberOfMessagesNotVisible"])
	require.Equal(t, "45", attrs.Attributes["VisibilityTimeout"])
	require.Equal(t, "arn:aws:sqs:us-east-1:000000000000:jobs", attrs.Attributes["QueueArn"])

	_, err = client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: url, ReceiptHandle: m.ReceiptHandle})
	require.NoError(t, err)
	q, ok := srv.Queue("jobs")
	require.True(t, ok)
	require.Equal(t, fifoq.Stats{}, q.Stats())

	// A long poll waits on the server's clock: it ends when the clock passes its wait time.
	done := make(chan *sqs.ReceiveMessageOutput)
	go func() {
		out, _ := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url, WaitTimeSeconds: 5})
		done <- out
	}()
	clock.WaitTimers(1)
	clock.Advance(5 * time.Second)
	out := <-done
	require.NotNil(t, out)
	require.Empty(t, out.Messages)
}

func TestSmokeFIFOQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := sqsapi.NewServer(sqsapi.WithClock(fifoq.NewManualClock(time.Unix(1_700_000_000, 0))))
	client := smokeClient(srv)

	created, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{
		QueueName:  aws.String("orders.fifo"),
		Attributes: map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"},
	})
	require.NoError(t, err)
	url := created.QueueUrl

	entry := func(id, group, body string) types.SendMessageBatchRequestEntry {
		return types.SendMessageBatchRequestEntry{Id: aws.String(id), MessageGroupId: aws.String(group), MessageBody: aws.String(body)}
	}
	sent, err := client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{
		QueueUrl: url,
		Entries:  []types.SendMessageBatchRequestEntry{entry("a", "g1", "one"), entry("b", "g2", "two"), entry("c", "g1", "three")},
	})
	require.NoError(t, err)
	require.Len(t, sent.Successful, 3)
	require.Empty(t, sent.Failed)
	require.NotEmpty(t, aws.ToString(sent.Successful[0].SequenceNumber))

	// A duplicate (same body, content-based deduplication) is accepted and suppressed.
	dup, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: url, MessageBody: aws.String("one"), MessageGroupId: aws.String("g1")})
	require.NoError(t, err)
	require.Equal(t, aws.ToString(sent.Successful[0].MessageId), aws.ToString(dup.MessageId))

	got, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:                    url,
		MaxNumberOfMessages:         10,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameMessageGroupId},
	})
	require.NoError(t, err)
	var bodies, groups []string
	var entries []types.DeleteMessageBatchRequestEntry
	for i, m := range got.Messages {
		bodies = append(bodies, aws.ToString(m.Body))
		groups = append(groups, m.Attributes["MessageGroupId"])
		entries = append(entries, types.DeleteMessageBatchRequestEntry{Id: aws.String(string(rune('a' + i))), ReceiptHandle: m.ReceiptHandle})
	}
	require.Equal(t, []string{"one", "three", "two"}, bodies, "group g1 first, in order, then g2")
	require.Equal(t, []string{"g1", "g1", "g2"}, groups)

	deleted, err := client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: url, Entries: entries})
	require.NoError(t, err)
	require.Len(t, deleted.Successful, 3)
	require.Empty(t, deleted.Failed)

	// A FIFO send without a group fails with SQS's error code and text.
	_, err = client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: url, MessageBody: aws.String("x")})
	var apiErr smithy.APIError
	require.True(t, errors.As(err, &apiErr), "got %v", err)
	require.Equal(t, "MissingParameter", apiErr.ErrorCode())
	require.Equal(t, "The request must contain the parameter MessageGroupId.", apiErr.ErrorMessage())

	// A queue that does not exist is the SDK's QueueDoesNotExist, with the query-compatible code.
	_, err = client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("nope")})
	var notExist *types.QueueDoesNotExist
	require.True(t, errors.As(err, &notExist), "got %v", err)
	require.Equal(t, "AWS.SimpleQueueService.NonExistentQueue", notExist.ErrorCode())
}

// smokeSendMessageResponse is the XML of a query-protocol SendMessage response.
type smokeSendMessageResponse struct {
	XMLName xml.Name `xml:"SendMessageResponse"`
	Result  struct {
		MessageID              string `xml:"MessageId"`
		MD5OfMessageBody       string `xml:"MD5OfMessageBody"`
		MD5OfMessageAttributes string `xml:"MD5OfMessageAttributes"`
	} `xml:"SendMessageResult"`
	RequestID string `xml:"ResponseMetadata>RequestId"`
}

func TestSmokeQueryProtocol(t *testing.T) {
	t.Parallel()
	srv := sqsapi.NewServer()
	_, err := srv.DeclareQueue("legacy", nil)
	require.NoError(t, err)

	form := url.Values{
		"Action":                               {"SendMessage"},
		"Version":                              {"2012-11-05"},
		"QueueUrl":                             {"http://localhost:9324/000000000000/legacy"},
		"MessageBody":                          {"foobar"},
		"MessageAttribute.1.Name":              {"MyAttribute"},
		"MessageAttribute.1.Value.DataType":    {"String"},
		"MessageAttribute.1.Value.StringValue": {"foobar"},
	}
	resp, err := srv.HTTPClient().PostForm("http://localhost:9324/", form)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)

	var out smokeSendMessageResponse
	require.NoError(t, xml.Unmarshal(body, &out), "%s", body)
	require.Equal(t, "3858f62230ac3c915f300c664312c63f", out.Result.MD5OfMessageBody, "spec 1.4.6 vector")
	require.Equal(t, "adb59cd4678ea5a855436b949cd07ab6", out.Result.MD5OfMessageAttributes, "spec 1.4.6 vector")
	require.NotEmpty(t, out.Result.MessageID)
	require.NotEmpty(t, out.RequestID)

	// An error is an ErrorResponse.
	resp, err = srv.HTTPClient().Get("http://localhost:9324/?Action=GetQueueUrl&QueueName=missing")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, string(body), "<Code>AWS.SimpleQueueService.NonExistentQueue</Code>")
}

func TestSmokeOverTheNetwork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	keys := map[string]string{"AKIDTEST": "secret"}
	srv := sqsapi.NewServer(sqsapi.WithSignatureVerification(func(id string) (string, bool) {
		s, ok := keys[id]
		return s, ok
	}))
	ts := httptest.NewServer(srv)
	defer ts.Close()
	client := sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(ts.URL), Credentials: smokeCredentials})

	created, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("net")})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(aws.ToString(created.QueueUrl), ts.URL+"/"), "the URL names the host the request went to")

	_, err = client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: created.QueueUrl, MessageBody: aws.String("over tcp")})
	require.NoError(t, err)
	got, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: created.QueueUrl})
	require.NoError(t, err)
	require.Len(t, got.Messages, 1)
	require.Equal(t, "over tcp", aws.ToString(got.Messages[0].Body))

	// A wrong secret fails the signature check.
	bad := sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(ts.URL),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "wrong"}, nil
		})})
	_, err = bad.ListQueues(ctx, &sqs.ListQueuesInput{})
	var apiErr smithy.APIError
	require.True(t, errors.As(err, &apiErr), "got %v", err)
	require.Equal(t, "SignatureDoesNotMatch", apiErr.ErrorCode())
}

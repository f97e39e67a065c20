package conformance

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq/snsapi"
	"github.com/fifoq/fifoq/sqsapi"
	snstopic "github.com/fifoq/fifoq/topic"
)

// SNS through aws-sdk-go-v2's sns client, on the endpoint that also serves SQS (snsapi.Route), as fifoq
// serve runs them; the messages are received through aws-sdk-go-v2's sqs client.

// snsEnv starts SNS and SQS on one loopback endpoint, the SNS server signing with a key of its own.
func snsEnv(t *testing.T) (*sns.Client, *sqs.Client, string) {
	t.Helper()
	key, certPEM := snsTestKey(t)
	sq := sqsapi.NewServer()
	hs := httptest.NewServer(snsapi.Route(snsapi.NewServer(sq.Catalog(), snsapi.WithSigningKey(key, certPEM)), sq))
	t.Cleanup(hs.Close)
	creds := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: "AKIDCONFORMANCE", SecretAccessKey: "secret"}, nil
	})
	sn := sns.New(sns.Options{Region: "us-east-1", BaseEndpoint: aws.String(hs.URL), Credentials: creds})
	sqc := sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(hs.URL), Credentials: creds})
	return sn, sqc, hs.URL
}

// TestSNSSDKFanOut publishes to a topic with a filtered subscription and a raw one, and receives through SQS.
func TestSNSSDKFanOut(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	sn, sqc, _ := snsEnv(t)
	topic, err := sn.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("orders")})
	require.NoError(t, err)
	require.Equal(t, "arn:aws:sns:us-east-1:000000000000:orders", aws.ToString(topic.TopicArn))
	queues := map[string]*string{}
	for _, name := range []string{"raw", "big"} {
		q, err := sqc.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name)})
		require.NoError(t, err)
		queues[name] = q.QueueUrl
	}
	_, err = sn.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"),
		Endpoint: aws.String("arn:aws:sqs:us-east-1:000000000000:raw"), Attributes: map[string]string{"RawMessageDelivery": "true"}})
	require.NoError(t, err)
	sub, err := sn.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"),
		Endpoint:   aws.String("arn:aws:sqs:us-east-1:000000000000:big"),
		Attributes: map[string]string{"FilterPolicy": `{"total": [{"numeric": [">=", 100]}]}`}})
	require.NoError(t, err)

	for _, total := range []string{"5", "250"} {
		_, err := sn.Publish(ctx, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String("order of " + total),
			MessageAttributes: map[string]snstypes.MessageAttributeValue{"total": {DataType: aws.String("Number"), StringValue: aws.String(total)}}})
		require.NoError(t, err)
	}
	batch, err := sn.PublishBatch(ctx, &sns.PublishBatchInput{TopicArn: topic.TopicArn, PublishBatchRequestEntries: []snstypes.PublishBatchRequestEntry{
		{Id: aws.String("a"), Message: aws.String("batched")}}})
	require.NoError(t, err)
	require.Len(t, batch.Successful, 1)

	raw, err := sqc.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: queues["raw"], MaxNumberOfMessages: 10,
		MessageAttributeNames: []string{"All"}})
	require.NoError(t, err)
	require.Len(t, raw.Messages, 3, "delivered before Publish answered")
	require.Equal(t, "order of 5", aws.ToString(raw.Messages[0].Body))
	require.Equal(t, "5", aws.ToString(raw.Messages[0].MessageAttributes["total"].StringValue), "raw delivery keeps the attributes")

	big, err := sqc.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: queues["big"], MaxNumberOfMessages: 10})
	require.NoError(t, err)
	require.Len(t, big.Messages, 1, "the filter policy lets 250 through only")
	env, err := snstopic.ParseEnvelope(aws.ToString(big.Messages[0].Body))
	require.NoError(t, err)
	require.Equal(t, "order of 250", env.Message)
	resp, err := http.Get(env.SigningCertURL)
	require.NoError(t, err)
	certPEM, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	block, _ := pem.Decode(certPEM)
	require.NotNil(t, block)
	cert, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	require.NoError(t, env.Verify(cert.PublicKey.(*rsa.PublicKey)))

	attrs, err := sn.GetSubscriptionAttributes(ctx, &sns.GetSubscriptionAttributesInput{SubscriptionArn: sub.SubscriptionArn})
	require.NoError(t, err)
	require.Equal(t, "MessageAttributes", attrs.Attributes["FilterPolicyScope"])
	list, err := sn.ListSubscriptionsByTopic(ctx, &sns.ListSubscriptionsByTopicInput{TopicArn: topic.TopicArn})
	require.NoError(t, err)
	require.Len(t, list.Subscriptions, 2)
	tags, err := sn.ListTagsForResource(ctx, &sns.ListTagsForResourceInput{ResourceArn: topic.TopicArn})
	require.NoError(t, err)
	require.Empty(t, tags.Tags)
}

// TestSNSSDKErrors compares the SDK's errors with AWS's recorded answers (LocalStack's snapshots of
// test_sns.py): their codes, messages and modeled types.
func TestSNSSDKErrors(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	sn, _, _ := snsEnv(t)
	_, err := sn.GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: aws.String("arn:aws:sns:us-east-1:000000000000:none")})
	var notFound *snstypes.NotFoundException
	require.ErrorAs(t, err, &notFound)
	require.Equal(t, "Topic does not exist", notFound.ErrorMessage())

	topic, err := sn.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("t")})
	require.NoError(t, err)
	_, err = sn.Publish(ctx, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String("")})
	var invalid *snstypes.InvalidParameterException
	require.ErrorAs(t, err, &invalid)
	require.Equal(t, "Invalid parameter: Empty message", invalid.ErrorMessage())
	_, err = sn.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"),
		Endpoint: aws.String("https://sqs.us-east-1.amazonaws.com/000000000000/q")})
	require.ErrorAs(t, err, &invalid)
	require.Equal(t, "Invalid parameter: SQS endpoint ARN", invalid.ErrorMessage())
	_, err = sn.Publish(ctx, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String("m"),
		MessageAttributes: map[string]snstypes.MessageAttributeValue{"a^b": {DataType: aws.String("String"), StringValue: aws.String("v")}}})
	var pvi *snstypes.InvalidParameterValueException
	require.ErrorAs(t, err, &pvi)
	require.Equal(t, "ParameterValueInvalid", pvi.ErrorCode())
	require.Equal(t, "Invalid non-alphanumeric character '#x5E' was found in the message attribute name. Can only include "+
		"alphanumeric characters, hyphens, underscores, or dots.", pvi.ErrorMessage())
	_, err = sn.ListTagsForResource(ctx, &sns.ListTagsForResourceInput{ResourceArn: aws.String("arn:aws:sns:us-east-1:000000000000:none")})
	var rnf *snstypes.ResourceNotFoundException
	require.ErrorAs(t, err, &rnf)
	var ae smithy.APIError
	require.True(t, errors.As(err, &ae))
	require.Equal(t, "ResourceNotFound", ae.ErrorCode())
}

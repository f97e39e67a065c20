package conformance_test

// SDK tests of SigV4 signature verification and of the server's region and account ID.

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/sqsapi"
)

func TestSdSignatureVerification(t *testing.T) {
	t.Parallel()
	secrets := map[string]string{"AKIDGOOD": "the-right-secret"}
	lookup := func(id string) (string, bool) {
		s, ok := secrets[id]
		return s, ok
	}
	// The real clock: the SDK signs with time.Now.
	srv := sqsapi.NewServer(sqsapi.WithSignatureVerification(lookup))
	ctx := t.Context()
	good := sdClient(srv, sdStatic("AKIDGOOD", "the-right-secret"))
	out, err := good.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("sd-signed"), Attributes: sdKV("DelaySeconds", "0")})
	require.NoError(t, err, "the right secret")
	url := *out.QueueUrl
	_, err = good.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("signed ✓ body"),
		MessageAttributes: sdAllTypes()})
	require.NoError(t, err, "a signed body with attributes")
	_, err = good.ListQueues(ctx, &sqs.ListQueuesInput{QueueNamePrefix: aws.String("sd-")})
	require.NoError(t, err)
	withToken := sdClient(srv, aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: "AKIDGOOD", SecretAccessKey: "the-right-secret", SessionToken: "session-token", Source: "sdk_test"}, nil
	}))
	_, err = withToken.ListQueues(ctx, &sqs.ListQueuesInput{})
	require.NoError(t, err, "the right secret, with a session token (a signed X-Amz-Security-Token header)")

	wantDenied := func(err error, code string) {
		t.Helper()
		require.Error(t, err)
		var ae smithy.APIError
		require.ErrorAs(t, err, &ae)
		if code != "" {
			require.Equal(t, code, ae.ErrorCode(), "%v", err)
		}
		var re *awshttp.ResponseError
		require.ErrorAs(t, err, &re)
		require.Equal(t, http.StatusForbidden, re.HTTPStatusCode(), "%v", err)
	}
	wrong := sdClient(srv, sdStatic("AKIDGOOD", "a-wrong-secret"))
	_, err = wrong.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("sd-forged")})
	wantDenied(err, "SignatureDoesNotMatch")
	_, err = wrong.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("forged")})
	wantDenied(err, "SignatureDoesNotMatch")
	unknown := sdClient(srv, sdStatic("AKIDUNKNOWN", "the-right-secret"))
	_, err = unknown.ListQueues(ctx, &sqs.ListQueuesInput{})
	wantDenied(err, "InvalidClientTokenId")
	anonymous := sdClient(srv, aws.AnonymousCredentials{})
	_, err = anonymous.ListQueues(ctx, &sqs.ListQueuesInput{})
	wantDenied(err, "")

	// A body changed after signing fails the signature.
	_, err = good.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("original")},
		func(o *sqs.Options) {
			o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
				return s.Finalize.Add(middleware.FinalizeMiddlewareFunc("sdTamper", func(ctx context.Context, in middleware.FinalizeInput,
					next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
					req := in.Request.(*smithyhttp.Request)
					raw, err := io.ReadAll(req.GetStream())
					if err != nil {
						return middleware.FinalizeOutput{}, middleware.Metadata{}, err
					}
					raw = bytes.Replace(raw, []byte("original"), []byte("tampered"), 1)
					if in.Request, err = req.SetStream(bytes.NewReader(raw)); err != nil {
						return middleware.FinalizeOutput{}, middleware.Metadata{}, err
					}
					return next.HandleFinalize(ctx, in)
				}), middleware.After)
			})
		})
	wantDenied(err, "SignatureDoesNotMatch")

	// Nothing the denied calls asked for happened.
	_, err = good.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("sd-forged")})
	sdWantErr(t, err, sdNonExistentQueue, sdNoQueueText)
	got, err := good.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10})
	require.NoError(t, err)
	require.Equal(t, []string{"signed ✓ body"}, sdBodies(got.Messages))

	// By default any credentials pass, signed or not.
	open := sqsapi.NewServer()
	for _, creds := range []aws.CredentialsProvider{sdStatic("ANY", "thing"), sdStatic("AKIDGOOD", "a-wrong-secret"), aws.AnonymousCredentials{}} {
		_, err := sdClient(open, creds).ListQueues(ctx, &sqs.ListQueuesInput{})
		require.NoError(t, err, "no verification by default")
	}
}

func TestSdRegionAndAccount(t *testing.T) {
	t.Parallel()
	srv := sqsapi.NewServer(sqsapi.WithRegion("eu-west-1"), sqsapi.WithAccountID("123456789012"),
		sqsapi.WithClock(fifoq.NewManualClock(sdStart)))
	// The client signs for the server's default region: a request acts in its credential scope's region.
	c := sqs.New(sqs.Options{Region: "eu-west-1", BaseEndpoint: aws.String("http://localhost"), HTTPClient: srv.HTTPClient(),
		Credentials: sdStatic("AKID", "secret")})
	out, err := c.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String("sd-region")})
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(*out.QueueUrl, "/123456789012/sd-region"), "QueueUrl %q", *out.QueueUrl)
	a, err := c.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl, AttributeNames: []types.QueueAttributeName{"QueueArn"}})
	require.NoError(t, err)
	require.Equal(t, "arn:aws:sqs:eu-west-1:123456789012:sd-region", a.Attributes["QueueArn"])
	q, ok := srv.Queue("sd-region")
	require.True(t, ok)
	require.NotNil(t, q)
	// The server's catalogue, from Go, shares the registry with the API, in the server's default account and region.
	_, err = srv.Catalog().CreateQueue(t.Context(), catalog.Namespace{Account: "123456789012", Region: "eu-west-1"}, "sd-go",
		catalog.Definition{VisibilityTimeout: 7 * time.Second}, catalog.FieldVisibilityTimeout)
	require.NoError(t, err)
	u, err := c.GetQueueUrl(t.Context(), &sqs.GetQueueUrlInput{QueueName: aws.String("sd-go")})
	require.NoError(t, err)
	a, err = c.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: u.QueueUrl, AttributeNames: []types.QueueAttributeName{"VisibilityTimeout"}})
	require.NoError(t, err)
	require.Equal(t, "7", a.Attributes["VisibilityTimeout"])
}

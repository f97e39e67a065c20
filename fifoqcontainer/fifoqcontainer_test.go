package fifoqcontainer_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/stretchr/testify/require"
	"github.com/testcontainers/testcontainers-go"
	tcexec "github.com/testcontainers/testcontainers-go/exec"

	"github.com/fifoq/fifoq/fifoqcontainer"
)

// run starts the image in the host's network on a free loopback port (this machine and CI allow traffic
// on loopback only, and their Docker has no bridge), with opts, and terminates it when the test ends.
func run(t *testing.T, opts ...testcontainers.ContainerCustomizer) *fifoqcontainer.Container {
	t.Helper()
	img := testImage(t)
	ctr, err := fifoqcontainer.Run(t.Context(), img, append([]testcontainers.ContainerCustomizer{
		fifoqcontainer.WithHostNetwork(freePort(t))}, opts...)...)
	testcontainers.CleanupContainer(t, ctr)
	require.NoError(t, err)
	return ctr
}

// sdk returns an aws-sdk-go-v2 SQS client for the container, signing with the given key.
func sdk(t *testing.T, ctr *fifoqcontainer.Container, region, id, secret string) *sqs.Client {
	t.Helper()
	endpoint, err := ctr.EndpointURL(t.Context())
	require.NoError(t, err)
	return sqs.New(sqs.Options{
		Region:       region,
		BaseEndpoint: aws.String(endpoint),
		Retryer:      aws.NopRetryer{},
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: id, SecretAccessKey: secret}, nil
		}),
	})
}

// The story of a user: start the image, create a FIFO queue with aws-sdk-go-v2, send to two groups and
// receive each group in order; the queues of a config file are there, dead-letter queue and all.
func TestRunFIFO(t *testing.T) {
	ctr := run(t, fifoqcontainer.WithConfigFile("testdata/fifoq.json"))
	ctx := t.Context()
	client := sdk(t, ctr, "us-east-1", "test", "test")

	created, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("jobs.fifo"),
		Attributes: map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"}})
	require.NoError(t, err)
	endpoint, err := ctr.EndpointURL(ctx)
	require.NoError(t, err)
	require.Equal(t, endpoint+"/000000000000/jobs.fifo", aws.ToString(created.QueueUrl), "the URL is on the host the request came in on")
	url, err := ctr.QueueURL(ctx, "jobs.fifo")
	require.NoError(t, err)
	require.Equal(t, aws.ToString(created.QueueUrl), url)

	for _, m := range []struct{ group, body string }{{"a", "a1"}, {"b", "b1"}, {"a", "a2"}, {"a", "a2"}, {"b", "b2"}} {
		_, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: created.QueueUrl, MessageGroupId: aws.String(m.group),
			MessageBody: aws.String(m.body)})
		require.NoError(t, err)
	}
	var got []string
	for len(got) < 4 {
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: created.QueueUrl, MaxNumberOfMessages: 10,
			WaitTimeSeconds: 1})
		require.NoError(t, err)
		require.NotEmpty(t, out.Messages, "received %v so far", got)
		for _, m := range out.Messages {
			got = append(got, aws.ToString(m.Body))
			_, err := client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: created.QueueUrl, ReceiptHandle: m.ReceiptHandle})
			require.NoError(t, err)
		}
	}
	require.Equal(t, []string{"a1", "a2", "b1", "b2"}, got, "each group in order, the duplicate a2 dropped by content")

	list, err := client.ListQueues(ctx, &sqs.ListQueuesInput{})
	require.NoError(t, err)
	require.Equal(t, []string{endpoint + "/000000000000/jobs.fifo", endpoint + "/000000000000/orders-dlq.fifo",
		endpoint + "/000000000000/orders.fifo"}, list.QueueUrls)
	sources, err := client.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{
		QueueUrl: aws.String(endpoint + "/000000000000/orders-dlq.fifo")})
	require.NoError(t, err)
	require.Equal(t, []string{endpoint + "/000000000000/orders.fifo"}, sources.QueueUrls, "the config file's redrive policy")
}

// Queues by name, in a region and an account of the options; access keys checked when given.
func TestRunQueuesRegionCredentials(t *testing.T) {
	ctr := run(t, fifoqcontainer.WithQueues("emails,DelaySeconds=5", "orders.fifo"), fifoqcontainer.WithQueues("audit"),
		fifoqcontainer.WithRegion("eu-west-1"), fifoqcontainer.WithAccountID("123456789012"),
		fifoqcontainer.WithCredentials("AKIDTEST", "s3cret"))
	ctx := t.Context()
	client := sdk(t, ctr, "eu-west-1", "AKIDTEST", "s3cret")
	list, err := client.ListQueues(ctx, &sqs.ListQueuesInput{})
	require.NoError(t, err)
	require.Len(t, list.QueueUrls, 3)
	url, err := ctr.QueueURL(ctx, "emails")
	require.NoError(t, err)
	require.Contains(t, list.QueueUrls, url)
	attrs, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	require.NoError(t, err)
	require.Equal(t, "5", attrs.Attributes["DelaySeconds"])
	require.Equal(t, "arn:aws:sqs:eu-west-1:123456789012:emails", attrs.Attributes["QueueArn"])

	_, err = sdk(t, ctr, "eu-west-1", "AKIDTEST", "wrong").ListQueues(ctx, &sqs.ListQueuesInput{})
	var apiErr smithy.APIError
	require.True(t, errors.As(err, &apiErr), "%v", err)
	require.Equal(t, "SignatureDoesNotMatch", apiErr.ErrorCode())
}

// The image as Docker sees it: its HEALTHCHECK (fifoq health, from a scratch image with no curl) turns the
// container healthy; fifoq version runs in it; it runs as no root, with the OCI labels and the defaults a
// container needs.
func TestImage(t *testing.T) {
	ctr := run(t)
	ctx := t.Context()
	info, err := ctr.Inspect(ctx)
	require.NoError(t, err)
	require.Equal(t, "65532:65532", info.Config.User)
	require.Contains(t, info.Config.Env, "FIFOQ_ADDR="+strings.TrimPrefix(mustEndpoint(t, ctr), "http://"),
		"the option's address, over the image's default")
	require.Contains(t, info.Config.Env, "FIFOQ_ALLOW_REMOTE=true")
	require.Equal(t, []string{"CMD", "/usr/local/bin/fifoq", "health"}, info.Config.Healthcheck.Test)
	for _, l := range []string{"org.opencontainers.image.source", "org.opencontainers.image.licenses",
		"org.opencontainers.image.version", "org.opencontainers.image.revision", "org.opencontainers.image.created"} {
		require.NotEmpty(t, info.Config.Labels[l], "label %s", l)
	}
	require.Contains(t, info.Config.Labels["org.opencontainers.image.description"], "SQS and SNS endpoint")

	// The first line of stdout is the endpoint's URL, one a user can open (with the image's 0.0.0.0,
	// 127.0.0.1: TestImageDefaultAddress).
	require.Equal(t, mustEndpoint(t, ctr), firstLine(t, ctr))

	// Docker runs the first check an interval (5 s) after the start.
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err = ctr.Inspect(ctx)
		require.NoError(t, err)
		if info.State.Health != nil && info.State.Health.Status == "healthy" {
			break
		}
		require.True(t, time.Now().Before(deadline), "not healthy within 30 s: %+v", info.State.Health)
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	last := info.State.Health.Log[len(info.State.Health.Log)-1]
	require.Equal(t, 0, last.ExitCode)
	require.Equal(t, mustEndpoint(t, ctr)+"/health: ok\n", last.Output)

	code, out, err := ctr.Exec(ctx, []string{"/usr/local/bin/fifoq", "version"}, tcexec.Multiplexed())
	require.NoError(t, err)
	require.Equal(t, 0, code)
	b, err := io.ReadAll(out)
	require.NoError(t, err)
	require.Contains(t, string(b), "fifoq ")
}

// The option's default, for users: the port published on a random port of the Docker host. It needs a
// Docker with a bridge network, which this repository's CI has not (dockerd --bridge=none): set
// FIFOQ_TEST_BRIDGE=1 where Docker has one.
func TestRunPublishedPort(t *testing.T) {
	if os.Getenv("FIFOQ_TEST_BRIDGE") != "1" {
		t.Skip("needs a Docker bridge network; set FIFOQ_TEST_BRIDGE=1 where Docker has one (CI's dockerd runs with --bridge=none)")
	}
	img := testImage(t)
	ctr, err := fifoqcontainer.Run(t.Context(), img, fifoqcontainer.WithQueues("orders.fifo"))
	testcontainers.CleanupContainer(t, ctr)
	require.NoError(t, err)
	client := sdk(t, ctr, "us-east-1", "test", "test")
	url, err := ctr.QueueURL(t.Context(), "orders.fifo")
	require.NoError(t, err)
	_, err = client.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("hi"),
		MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("1")})
	require.NoError(t, err)
}

func mustEndpoint(t *testing.T, ctr *fifoqcontainer.Container) string {
	t.Helper()
	endpoint, err := ctr.EndpointURL(t.Context())
	require.NoError(t, err)
	return endpoint
}

// firstLine returns the first line the container wrote to its stdout (not stderr, where its logs go), which
// the server writes once it listens.
func firstLine(t *testing.T, ctr *fifoqcontainer.Container) string {
	t.Helper()
	provider, err := testcontainers.NewDockerProvider()
	require.NoError(t, err)
	defer provider.Close()
	rc, err := provider.Client().ContainerLogs(t.Context(), ctr.GetContainerID(), client.ContainerLogsOptions{ShowStdout: true})
	require.NoError(t, err)
	defer rc.Close()
	var stdout bytes.Buffer
	_, err = stdcopy.StdCopy(&stdout, io.Discard, rc)
	require.NoError(t, err)
	line, err := bufio.NewReader(&stdout).ReadString('\n')
	require.NoError(t, err, "stdout: %q", stdout.String())
	return line[:len(line)-1]
}

// The image as it is, on its own address (FIFOQ_ADDR=0.0.0.0:9324) in the host's network: the first line of
// stdout is http://127.0.0.1:9324, a URL a user can open, not http://[::]:9324. It takes the host's port
// 9324, so it runs only where that port is free.
func TestImageDefaultAddress(t *testing.T) {
	img := testImage(t)
	if ln, err := net.Listen("tcp", "127.0.0.1:9324"); err != nil {
		t.Skipf("port 9324 is taken here: %v", err)
	} else {
		ln.Close()
	}
	ctr, err := fifoqcontainer.Run(t.Context(), img, testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
		hc.NetworkMode = "host"
	}), testcontainers.WithEndpointSettingsModifier(func(settings map[string]*network.EndpointSettings) { clear(settings) }),
		testcontainers.WithEnv(map[string]string{"FIFOQ_ACCESS_KEY_ID": "AKIDTEST", "FIFOQ_SECRET_ACCESS_KEY": "secret"}))
	testcontainers.CleanupContainer(t, ctr)
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:9324", mustEndpoint(t, ctr))
	require.Equal(t, "http://127.0.0.1:9324", firstLine(t, ctr))
}

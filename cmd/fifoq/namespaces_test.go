package main

import (
	"bytes"
	"context"
	"flag"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq/sqsapi"
)

// serve -h says that accounts and regions are per request, --region and --account-id the defaults.
func TestServeHelpNamespaces(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	require.ErrorIs(t, run(t.Context(), []string{"serve", "-h"}, noEnv, &stdout, &stderr), flag.ErrHelp)
	help := stderr.String()
	require.Contains(t, help, "Accounts and regions are per request")
	require.Regexp(t, `(?m)^  -region region\n\s+default AWS region`, help)
	require.Regexp(t, `(?m)^  -account-id id\n\s+default AWS account id`, help)
}

// The server of --region and --account-id serves other regions and accounts too, the queues of --queue in
// the defaults.
func TestServeDefaultsNamespaces(t *testing.T) {
	t.Parallel()
	cfg, err := parseServe([]string{"--region", "eu-west-1", "--account-id", "123456789012", "--queue", "jobs"}, noEnv, &bytes.Buffer{})
	require.NoError(t, err)
	srv := sqsapi.NewServer(sqsapi.WithRegion(cfg.region), sqsapi.WithAccountID(cfg.account))
	_, err = srv.DeclareQueue(cfg.queues[0].Name, cfg.queues[0].Attributes)
	require.NoError(t, err)
	client := func(region, key string) *sqs.Client {
		return sqs.New(sqs.Options{Region: region, BaseEndpoint: aws.String("http://localhost"), HTTPClient: srv.HTTPClient(),
			Retryer: aws.NopRetryer{}, Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
				return aws.Credentials{AccessKeyID: key, SecretAccessKey: "secret"}, nil
			})})
	}
	u, err := client("eu-west-1", "AKID").GetQueueUrl(t.Context(), &sqs.GetQueueUrlInput{QueueName: aws.String("jobs")})
	require.NoError(t, err)
	require.Equal(t, "http://localhost/123456789012/jobs", aws.ToString(u.QueueUrl))
	_, err = client("us-east-1", "AKID").GetQueueUrl(t.Context(), &sqs.GetQueueUrlInput{QueueName: aws.String("jobs")})
	require.Error(t, err, "another region has no such queue")
	out, err := client("us-east-1", "210987654321").CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String("jobs")})
	require.NoError(t, err)
	require.Equal(t, "http://localhost/queue/us-east-1/210987654321/jobs", aws.ToString(out.QueueUrl),
		"a queue outside the default region: its URL names the region, the host naming none")
}

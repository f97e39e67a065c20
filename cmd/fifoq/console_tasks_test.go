package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/sqsapi"
)

// The console of fifoq serve hands its redrives to the catalogue the server serves: one started in the
// console is the server's running move task, which ListMessageMoveTasks lists and CancelMessageMoveTask
// ends. (The manual clock keeps it running at 1 a second.)
func TestServeConsoleRedriveIsTheServers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := catalog.Namespace{Account: "000000000000", Region: "us-east-1"}
	cat := catalog.New(catalog.WithClock(fifoq.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))),
		catalog.WithDefaultNamespace(home))
	defer cat.Close()
	api := sqsapi.NewServer(sqsapi.WithCatalog(cat))
	defer api.Close()
	_, err := api.DeclareQueue("dlq", nil)
	require.NoError(t, err)
	_, err = api.DeclareQueue("orders", map[string]string{
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}`})
	require.NoError(t, err)
	dlq, ok := api.Queue("dlq")
	require.True(t, ok)
	for range 3 {
		_, err := dlq.Send(ctx, fifoq.Message{Body: "dead"})
		require.NoError(t, err)
	}
	cfg := serveConfig{consoleAddr: "127.0.0.1:0", shutdownTimeout: 5 * time.Second}
	consoleURL, stop, err := startConsole(ctx, &net.ListenConfig{}, cfg, cat, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer stop()

	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(consoleURL)
	require.NoError(t, err)
	resp.Body.Close()
	u, err := url.Parse(consoleURL)
	require.NoError(t, err)
	var token string
	for _, c := range jar.Cookies(u) {
		if c.Name == "fifoq_console_csrf" {
			token = c.Value
		}
	}
	require.NotEmpty(t, token)
	resp, err = client.PostForm(consoleURL+"redrive?q=dlq", url.Values{"csrf": {token}, "confirm": {"yes"},
		"dest": {"orders"}, "rate": {"1"}})
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, string(body))

	tasks := cat.MoveTasks(home, "dlq")
	require.Len(t, tasks, 1, "the console's redrive is the catalogue's")
	require.Equal(t, fifoq.MoveTaskRunning, tasks[0].Status().State)
	sqsClient := sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://localhost"),
		HTTPClient: api.HTTPClient(), Retryer: aws.NopRetryer{},
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKID", SecretAccessKey: "secret"}, nil
		})})
	list, err := sqsClient.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{
		SourceArn: aws.String("arn:aws:sqs:us-east-1:000000000000:dlq")})
	require.NoError(t, err)
	require.Len(t, list.Results, 1, "the server lists it")
	require.Equal(t, "RUNNING", aws.ToString(list.Results[0].Status))
	require.Equal(t, "arn:aws:sqs:us-east-1:000000000000:orders", aws.ToString(list.Results[0].DestinationArn))
	_, err = sqsClient.CancelMessageMoveTask(ctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: list.Results[0].TaskHandle})
	require.NoError(t, err, "the server cancels it")
	require.NoError(t, tasks[0].Wait(ctx))
	require.Equal(t, fifoq.MoveTaskCancelled, tasks[0].Status().State)
}

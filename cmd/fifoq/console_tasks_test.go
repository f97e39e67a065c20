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

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/sqsapi"
)

// The console of fifoq serve hands its redrives to the server: one started in the console is the server's
// running move task, which the server's cancel ends. (The manual clock keeps it running at 1 a second.)
func TestServeConsoleRedriveIsTheServers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	api := sqsapi.NewServer(sqsapi.WithClock(fifoq.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))))
	dlq, err := api.CreateQueue("dlq", nil)
	require.NoError(t, err)
	_, err = api.CreateQueue("orders", map[string]string{
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}`})
	require.NoError(t, err)
	for range 3 {
		_, err := dlq.Send(ctx, fifoq.Message{Body: "dead"})
		require.NoError(t, err)
	}
	cfg := serveConfig{consoleAddr: "127.0.0.1:0", shutdownTimeout: 5 * time.Second}
	consoleURL, stop, err := startConsole(ctx, &net.ListenConfig{}, cfg, api, slog.New(slog.DiscardHandler))
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

	handle := api.RunningMoveTask("dlq")
	require.NotEmpty(t, handle, "the console's redrive is the server's")
	require.NoError(t, api.CancelMoveTask(ctx, handle))
	require.Equal(t, fifoq.MoveTaskCancelled, dlq.MoveTasks()[0].State)
}

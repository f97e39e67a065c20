package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"
)

func TestParseServe(t *testing.T) {
	t.Parallel()
	// defaults returns the configuration of no flags, changed by f.
	defaults := func(f func(c *serveConfig)) serveConfig {
		c := serveConfig{addr: "127.0.0.1:9324", region: "us-east-1", account: "000000000000",
			logLevel: slog.LevelInfo, logFormat: "text", shutdownTimeout: 10 * time.Second,
			maxRequestBytes: 8 << 20, maxHeaderBytes: 64 << 10}
		if f != nil {
			f(&c)
		}
		return c
	}
	for _, tc := range []struct {
		name    string
		args    []string
		want    serveConfig // checked when err is ""
		wantErr string      // a part of the error, "" for none
	}{
		{name: "defaults", args: nil, want: defaults(nil)},
		{name: "every flag", args: []string{"--addr", "[::1]:0", "--region", "eu-west-1", "--account", "123456789012",
			"--log-level", "debug", "--shutdown-timeout", "3s", "--queue", "a", "--queue", "b.fifo,FifoQueue=true,VisibilityTimeout=60"},
			want: serveConfig{addr: "[::1]:0", region: "eu-west-1", account: "123456789012", logLevel: slog.LevelDebug,
				logFormat: "text", shutdownTimeout: 3 * time.Second, maxRequestBytes: 8 << 20, maxHeaderBytes: 64 << 10,
				queues: []queueSpec{
					{Name: "a", origin: `--queue "a"`},
					{Name: "b.fifo", Attributes: map[string]string{"FifoQueue": "true", "VisibilityTimeout": "60"},
						origin: `--queue "b.fifo,FifoQueue=true,VisibilityTimeout=60"`},
				}}},
		{name: "the other flags", args: []string{"--account-id", "111111111111", "--metrics-addr", "localhost:0",
			"--log-format", "json", "--max-request-bytes", "2097152", "--max-header-bytes", "8192", "--data-dir", "/tmp/q"},
			want: defaults(func(c *serveConfig) {
				c.account, c.metricsAddr, c.logFormat, c.maxRequestBytes, c.maxHeaderBytes, c.dataDir =
					"111111111111", "localhost:0", "json", 2<<20, 8192, "/tmp/q"
			})},
		{name: "sync every", args: []string{"--data-dir", "/tmp/q", "--sync", "250ms"},
			want: defaults(func(c *serveConfig) { c.dataDir, c.syncEvery = "/tmp/q", 250*time.Millisecond })},
		{name: "sync ack", args: []string{"--data-dir", "/tmp/q", "--sync", "ack"},
			want: defaults(func(c *serveConfig) { c.dataDir = "/tmp/q" })},
		{name: "single dash", args: []string{"-addr=localhost:9000", "-log-level=WARN"},
			want: defaults(func(c *serveConfig) { c.addr, c.logLevel = "localhost:9000", slog.LevelWarn })},
		{name: "JSON value with commas", args: []string{"--queue",
			`src,RedrivePolicy={"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":"3"},DelaySeconds=5`},
			want: defaults(func(c *serveConfig) {
				c.queues = []queueSpec{{Name: "src", Attributes: map[string]string{
					"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":"3"}`,
					"DelaySeconds":  "5",
				}, origin: `--queue "src,RedrivePolicy={\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:dlq\",\"maxReceiveCount\":\"3\"},DelaySeconds=5"`}}
			})},

		// The loopback rule.
		{name: "127.0.0.2", args: []string{"--addr", "127.0.0.2:9324"},
			want: defaults(func(c *serveConfig) { c.addr = "127.0.0.2:9324" })},
		{name: "remote allowed", args: []string{"--addr", "0.0.0.0:9324", "--allow-remote"},
			want: defaults(func(c *serveConfig) { c.addr, c.allowRemote = "0.0.0.0:9324", true })},
		{name: "all interfaces", args: []string{"--addr", ":9324"}, wantErr: "not a loopback address"},
		{name: "0.0.0.0", args: []string{"--addr", "0.0.0.0:9324"}, wantErr: "--allow-remote"},
		{name: "[::]", args: []string{"--addr", "[::]:9324"}, wantErr: "not a loopback address"},
		{name: "metrics on all interfaces", args: []string{"--metrics-addr", ":9090"}, wantErr: "--metrics-addr :9090 is not a loopback address"},
		{name: "metrics remote allowed", args: []string{"--metrics-addr", ":9090", "--allow-remote"},
			want: defaults(func(c *serveConfig) { c.metricsAddr, c.allowRemote = ":9090", true })},
		{name: "LAN address", args: []string{"--addr", "192.168.1.10:9324"}, wantErr: "not a loopback address"},
		{name: "host name", args: []string{"--addr", "example.com:9324"}, wantErr: "not a loopback address"},
		{name: "no port", args: []string{"--addr", "127.0.0.1"}, wantErr: "missing port"},

		// Bad command lines.
		{name: "unknown flag", args: []string{"--bogus"}, wantErr: "unknown flag --bogus"},
		{name: "log level", args: []string{"--log-level", "loud"}, wantErr: "log-level"},
		{name: "queue without a name", args: []string{"--queue", ",VisibilityTimeout=5"}, wantErr: "has no name"},
		{name: "attribute without a value", args: []string{"--queue", "q,VisibilityTimeout"}, wantErr: "not Attr=Value"},
		{name: "attribute twice", args: []string{"--queue", "q,DelaySeconds=1,DelaySeconds=2"}, wantErr: "given twice"},
		{name: "argument", args: []string{"extra"}, wantErr: `unexpected argument "extra"`},
		{name: "empty region", args: []string{"--region", ""}, wantErr: "cannot be empty"},
		{name: "shutdown timeout", args: []string{"--shutdown-timeout", "0s"}, wantErr: "shutdown-timeout"},
		{name: "request limit", args: []string{"--max-request-bytes", "10"}, wantErr: "--max-request-bytes 10, want at least 1024"},
		{name: "header limit", args: []string{"--max-header-bytes", "-1"}, wantErr: "--max-header-bytes -1"},
		{name: "log format", args: []string{"--log-format", "xml"}, wantErr: `--log-format "xml"`},
		{name: "sync bad", args: []string{"--data-dir", "/tmp/q", "--sync", "often"}, wantErr: `"often": want ack or a positive duration`},
		{name: "sync zero", args: []string{"--data-dir", "/tmp/q", "--sync", "0s"}, wantErr: "want ack or a positive duration"},
		{name: "sync in memory", args: []string{"--sync", "1s"}, wantErr: "--sync applies only with --data-dir"},
		{name: "missing config", args: []string{"--config", filepath.Join(t.TempDir(), "none.json")}, wantErr: "no such file"},
	} {
		var stderr bytes.Buffer
		got, err := parseServe(tc.args, noEnv, &stderr)
		if tc.wantErr != "" {
			require.ErrorIs(t, err, errUsage, "%s: parseServe(%q)", tc.name, tc.args)
			require.ErrorContains(t, err, tc.wantErr, "%s: parseServe(%q)", tc.name, tc.args)
			require.Contains(t, stderr.String(), tc.wantErr, "%s: the error is printed", tc.name)
			continue
		}
		require.NoError(t, err, "%s: parseServe(%q)", tc.name, tc.args)
		require.Equal(t, tc.want, got, "%s: parseServe(%q)", tc.name, tc.args)
		require.Empty(t, stderr.String(), tc.name)
	}
}

// noEnv is an empty environment.
func noEnv(string) string { return "" }

func TestRunUsage(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	require.ErrorIs(t, run(t.Context(), nil, noEnv, &stdout, &stderr), errUsage)
	require.Contains(t, stderr.String(), "fifoq serve")
	require.ErrorIs(t, run(t.Context(), []string{"frobnicate"}, noEnv, &stdout, &stderr), errUsage)
	require.Contains(t, stderr.String(), `unknown command "frobnicate"`)
	require.NoError(t, run(t.Context(), []string{"help"}, noEnv, &stdout, &stderr))
	for _, cmd := range []string{"fifoq serve", "fifoq health", "fifoq version"} {
		require.Contains(t, stdout.String(), cmd, "the usage lists every command")
	}

	stderr.Reset()
	require.ErrorIs(t, run(t.Context(), []string{"serve", "-h"}, noEnv, &stdout, &stderr), flag.ErrHelp)
	help := stderr.String()
	for _, f := range []string{"-addr", "-allow-remote", "-queue", "-config", "-region", "-account-id", "-log-level",
		"-log-format", "-data-dir", "-metrics-addr", "-credentials", "-shutdown-timeout", "-max-request-bytes",
		"-max-header-bytes"} {
		require.Regexp(t, `(?m)^  `+f+`( |$)`, help, "serve -h lists %s", f)
		env := "FIFOQ_" + strings.ToUpper(strings.ReplaceAll(f[1:], "-", "_"))
		require.Contains(t, help, "(env "+env+")", "serve -h names the variable of %s", f)
	}
	require.Contains(t, help, "FIFOQ_ACCESS_KEY_ID")
	require.Contains(t, help, "FIFOQ_SECRET_ACCESS_KEY")
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fifoq.json")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	path := writeFile(t, `{
		"queues": [
			{"name": "orders-dlq.fifo", "attributes": {"FifoQueue": "true"}},
			{"name": "orders.fifo", "attributes": {
				"FifoQueue": true,
				"ContentBasedDeduplication": "true",
				"VisibilityTimeout": 60,
				"RedrivePolicy": {"deadLetterTargetArn": "arn:aws:sqs:us-east-1:000000000000:orders-dlq.fifo", "maxReceiveCount": 5}
			}},
			{"name": "plain"}
		]
	}`)
	qs, err := loadConfig(path)
	require.NoError(t, err)
	require.Equal(t, []queueSpec{
		{Name: "orders-dlq.fifo", Attributes: map[string]string{"FifoQueue": "true"}, origin: "config " + path + ":3:4"},
		{Name: "orders.fifo", Attributes: map[string]string{
			"FifoQueue":                 "true",
			"ContentBasedDeduplication": "true",
			"VisibilityTimeout":         "60",
			"RedrivePolicy":             `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:orders-dlq.fifo","maxReceiveCount":5}`,
		}, origin: "config " + path + ":4:4"},
		{Name: "plain", origin: "config " + path + ":10:4"},
	}, qs)

	// The config file's queues come first, then the flags'.
	cfg, err := parseServe([]string{"--queue", "extra", "--config", path}, noEnv, io.Discard)
	require.NoError(t, err)
	names := make([]string, len(cfg.queues))
	for i, q := range cfg.queues {
		names[i] = q.Name
	}
	require.Equal(t, []string{"orders-dlq.fifo", "orders.fifo", "plain", "extra"}, names)

	for _, tc := range []struct {
		content, wantErr string
	}{
		{`{"queues": [{"name": "a", "attributes": {"VisibilityTimeout": "5"}}, ]}`, "invalid character"},
		{`{"queues": [{"name": "a", "atributes": {}}]}`, `unknown field "atributes"`},
		{`{"queue": []}`, `unknown field "queue"`},
		{`{"queues": [{"attributes": {}}]}`, "queue 0 has no name"},
		{`{"queues": [{"name": "a", "attributes": {"DelaySeconds": null}}]}`, "attribute DelaySeconds: no value"},
		{`{"queues": [{"name": "a", "attributes": {"DelaySeconds": [1]}}]}`, "a list is not an attribute value"},
		{`{"queues": []} {"queues": []}`, "data after the JSON object"},
		{`{"queues": "orders"}`, "queues: want a list, not a string"},
		{``, "the file is empty"},
	} {
		_, err := loadConfig(writeFile(t, tc.content))
		require.ErrorContains(t, err, tc.wantErr, "config %s", tc.content)
	}
}

// syncBuffer is a bytes.Buffer safe for the server's logger and the test at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestServe runs the command on a free port and talks to it with aws-sdk-go-v2 over the socket: a queue
// from the command line and one from the config file, a send and a receive, and a clean stop when the
// context ends (as on SIGINT).
func TestServe(t *testing.T) {
	t.Parallel()
	// FifoQueue is implied by the name.
	config := writeFile(t, `{"queues":[{"name":"orders.fifo","attributes":{"ContentBasedDeduplication":"true"}}]}`)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stdoutR, stdoutW := io.Pipe()
	var stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--config", config, "--queue", "jobs,VisibilityTimeout=5",
			"--region", "eu-west-1", "--account", "123456789012", "--log-level", "debug"}, noEnv, stdoutW, &stderr)
		stdoutW.Close()
	}()

	// The first line of stdout is the endpoint, once it listens.
	line, err := bufio.NewReader(stdoutR).ReadString('\n')
	require.NoError(t, err, "stderr: %s", stderr.String())
	endpoint := strings.TrimSpace(line)
	require.True(t, strings.HasPrefix(endpoint, "http://127.0.0.1:"), "endpoint %q", endpoint)
	go io.Copy(io.Discard, stdoutR) //nolint:errcheck // nothing more is expected; keep the writer unblocked

	client := sqs.New(sqs.Options{
		Region:       "eu-west-1",
		BaseEndpoint: aws.String(endpoint),
		Retryer:      aws.NopRetryer{},
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "secret"}, nil
		}),
	})
	list, err := client.ListQueues(ctx, &sqs.ListQueuesInput{})
	require.NoError(t, err)
	require.Len(t, list.QueueUrls, 2, "queues %v", list.QueueUrls)
	for _, u := range list.QueueUrls {
		require.Contains(t, u, "/123456789012/", "the account is the one given")
	}

	url, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("orders.fifo")})
	require.NoError(t, err)
	_, err = client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: url.QueueUrl, MessageBody: aws.String("hello"),
		MessageGroupId: aws.String("g")})
	require.NoError(t, err)
	out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url.QueueUrl, WaitTimeSeconds: 1})
	require.NoError(t, err)
	require.Len(t, out.Messages, 1)
	require.Equal(t, "hello", aws.ToString(out.Messages[0].Body))

	jobs, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("jobs")})
	require.NoError(t, err)
	attrs, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: jobs.QueueUrl,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameVisibilityTimeout, types.QueueAttributeNameQueueArn}})
	require.NoError(t, err)
	require.Equal(t, "5", attrs.Attributes["VisibilityTimeout"])
	require.Equal(t, "arn:aws:sqs:eu-west-1:123456789012:jobs", attrs.Attributes["QueueArn"])

	cancel()
	require.NoError(t, <-done, "stderr: %s", stderr.String())

	logs := stderr.String()
	for _, want := range []string{"queue created", "queue=orders.fifo", "queue=jobs", "listening", endpoint[len("http://"):],
		"shutting down", "stopped"} {
		require.Contains(t, logs, want, "the logs")
	}
	_, err = client.ListQueues(context.Background(), &sqs.ListQueuesInput{})
	require.Error(t, err, "the server is gone")
	require.False(t, errors.Is(err, context.Canceled))
}

// TestServeHTTPShutdown checks that a stop ends the long polls in progress through beginShutdown (as
// sqsapi.Server.BeginShutdown does) and returns nil once they are answered, without waiting for the shutdown
// timeout; and that a request still in progress at the timeout has its context ended and its connection
// closed, and makes serveHTTP fail.
func TestServeHTTPShutdown(t *testing.T) {
	t.Parallel()
	for _, stuck := range []bool{false, true} {
		entered, polls, ended, release := make(chan struct{}), make(chan struct{}), make(chan error, 1), make(chan struct{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			close(entered)
			if stuck {
				<-r.Context().Done() // a request that does not end before the timeout
				ended <- r.Context().Err()
				<-release // returns after serveHTTP, which closed the connection
				return
			}
			<-polls // a long poll, until the server begins to shut down
			w.WriteHeader(http.StatusOK)
		})
		ln, err := new(net.ListenConfig).Listen(t.Context(), "tcp", "127.0.0.1:0")
		require.NoError(t, err)
		var logs syncBuffer
		logger := slog.New(slog.NewTextHandler(&logs, nil))
		ctx, cancel := context.WithCancel(t.Context())
		timeout := time.Hour
		if stuck {
			timeout = 50 * time.Millisecond
		}
		done := make(chan error, 1)
		go func() {
			done <- serveHTTP(ctx, serveOptions{api: ln, handler: h, beginShutdown: func() { close(polls) },
				logger: logger, timeout: timeout, maxHeaderBytes: 1 << 20})
		}()

		resp := make(chan error, 1)
		go func() {
			r, err := http.Get("http://" + ln.Addr().String() + "/")
			if err == nil {
				r.Body.Close()
				if r.StatusCode != http.StatusOK {
					err = fmt.Errorf("status %d", r.StatusCode)
				}
			}
			resp <- err
		}()
		<-entered
		cancel()
		if stuck {
			require.ErrorContains(t, <-done, "still in progress after the shutdown timeout", "logs: %s", logs.String())
			close(release)
			require.ErrorIs(t, <-ended, context.Canceled, "the request's context ends")
			require.Error(t, <-resp, "the connection was closed")
			require.Contains(t, logs.String(), "shutdown timeout")
			continue
		}
		require.NoError(t, <-done, "logs: %s", logs.String())
		require.NoError(t, <-resp, "the request in progress got its response")
		require.NotContains(t, logs.String(), "shutdown timeout")
		require.Contains(t, logs.String(), "stopped")
	}
}

// TestMain runs the command itself, main and all, when a test re-executes the test binary with
// FIFOQ_TEST_MAIN set: see TestSignals.
func TestMain(m *testing.M) {
	if os.Getenv("FIFOQ_TEST_MAIN") == "1" {
		flag.Parse() // the test binary's flags; the command's come after "--"
		os.Args = append([]string{"fifoq"}, flag.Args()...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestSignals runs the command as a process and stops it with SIGINT, then SIGTERM: it exits with
// status 0 after a clean shutdown.
func TestSignals(t *testing.T) {
	t.Parallel()
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		c := startChild(t, "serve", "--addr", "127.0.0.1:0")
		require.True(t, strings.HasPrefix(c.endpoint, "http://127.0.0.1:"), "endpoint %q", c.endpoint)
		c.stop(sig)
		require.Contains(t, c.stderr.String(), "stopped", "%v: logs", sig)
	}
}

// child is the command run as a process (the test binary, re-executed with FIFOQ_TEST_MAIN set).
type child struct {
	t        *testing.T
	cmd      *exec.Cmd
	endpoint string // the first line of stdout
	stdout   *bufio.Reader
	stderr   *syncBuffer
}

// startChild runs the command with args and waits until it prints its endpoint, as it does once it listens.
func startChild(t *testing.T, args ...string) *child {
	t.Helper()
	return startChildEnv(t, nil, args...)
}

// startChildEnv is startChild with the environment variables env added (see command).
func startChildEnv(t *testing.T, env []string, args ...string) *child {
	t.Helper()
	cmd := command(t, env, args...)
	c := &child{t: t, cmd: cmd, stderr: &syncBuffer{}}
	cmd.Stderr = c.stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	c.stdout = bufio.NewReader(stdout)
	c.endpoint = c.line()
	return c
}

// command returns the command as a process, with the environment variables env ("NAME=value") added to
// the test's, less the test's own FIFOQ_ variables.
func command(t *testing.T, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(t.Context(), os.Args[0], append([]string{"-test.run=^$", "--"}, args...)...)
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "FIFOQ_") })
	// Under the race detector, the process would sleep a second before it exits.
	cmd.Env = append(cmd.Env, "FIFOQ_TEST_MAIN=1", "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// line returns the next line of the child's stdout, without its newline.
func (c *child) line() string {
	c.t.Helper()
	line, err := c.stdout.ReadString('\n')
	require.NoError(c.t, err, "stderr: %s", c.stderr.String())
	return strings.TrimSpace(line)
}

// stop sends sig and waits for the process to exit: with status 0 after SIGINT or SIGTERM, killed by
// SIGKILL.
func (c *child) stop(sig os.Signal) {
	c.t.Helper()
	require.NoError(c.t, c.cmd.Process.Signal(sig))
	err := c.cmd.Wait()
	if sig == syscall.SIGKILL {
		var exit *exec.ExitError
		require.ErrorAs(c.t, err, &exit, "SIGKILL: exit status")
		require.False(c.t, exit.Exited(), "killed by SIGKILL, not exited")
		return
	}
	require.NoError(c.t, err, "%v: exit status; stderr: %s", sig, c.stderr.String())
}

// client returns an SDK client for the endpoint.
func (c *child) client() *sqs.Client {
	return sqs.New(sqs.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(c.endpoint),
		Retryer:      aws.NopRetryer{},
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "secret"}, nil
		}),
	})
}

// TestServeDataDir runs "serve --data-dir" as a process, creates queues with attributes and tags and sends
// messages through the SDK over loopback, stops it (SIGTERM, then SIGKILL: an acknowledged request is on
// disk either way), starts it again on the same directory, and finds everything.
func TestServeDataDir(t *testing.T) {
	t.Parallel()
	for _, sig := range []os.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "data") // made by the command
			args := []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--queue", "jobs,VisibilityTimeout=3600"}
			c := startChild(t, args...)
			ctx, client := t.Context(), c.client()

			orders, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("orders.fifo"),
				Attributes: map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true",
					"VisibilityTimeout": "3600", "Policy": `{"Version":"2012-10-17"}`},
				Tags: map[string]string{"team": "payments"}})
			require.NoError(t, err)
			jobs, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("jobs")})
			require.NoError(t, err)
			_, err = client.TagQueue(ctx, &sqs.TagQueueInput{QueueUrl: jobs.QueueUrl, Tags: map[string]string{"env": "test"}})
			require.NoError(t, err)
			var ids []string
			for _, g := range []string{"g1", "g2", "g3"} {
				out, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: orders.QueueUrl, MessageBody: aws.String("order " + g),
					MessageGroupId: aws.String(g)})
				require.NoError(t, err)
				ids = append(ids, aws.ToString(out.MessageId))
			}
			batch, err := client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: jobs.QueueUrl, Entries: []types.SendMessageBatchRequestEntry{
				{Id: aws.String("1"), MessageBody: aws.String("job 1"), MessageAttributes: map[string]types.MessageAttributeValue{
					"kind": {DataType: aws.String("String"), StringValue: aws.String("nightly")}},
					MessageSystemAttributes: map[string]types.MessageSystemAttributeValue{
						"AWSTraceHeader": {DataType: aws.String("String"), StringValue: aws.String("Root=1-5759e988-bd862e3fe1be46a994272793")}}},
				{Id: aws.String("2"), MessageBody: aws.String("job 2")},
			}})
			require.NoError(t, err)
			require.Len(t, batch.Successful, 2)
			got, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: orders.QueueUrl})
			require.NoError(t, err)
			require.Len(t, got.Messages, 1, "one order in flight")
			inFlight := aws.ToString(got.Messages[0].MessageId)

			view := func(client *sqs.Client) map[string]any {
				out := map[string]any{}
				list, err := client.ListQueues(ctx, &sqs.ListQueuesInput{})
				require.NoError(t, err)
				out["queues"] = len(list.QueueUrls)
				for _, url := range []*string{orders.QueueUrl, jobs.QueueUrl} {
					attrs, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: url,
						AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
					require.NoError(t, err)
					tags, err := client.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: url})
					require.NoError(t, err)
					out[*url] = []map[string]string{attrs.Attributes, tags.Tags}
				}
				return out
			}
			before := view(client)
			c.stop(sig)

			c = startChild(t, args...)
			client = c.client()
			require.Equal(t, before, view(client), "queues, attributes and tags after the restart")
			require.Contains(t, c.stderr.String(), "queue kept", "the --queue flag found jobs stored")

			got, err = client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: orders.QueueUrl, MaxNumberOfMessages: 10})
			require.NoError(t, err)
			var gotIDs []string
			for _, m := range got.Messages {
				gotIDs = append(gotIDs, aws.ToString(m.MessageId))
			}
			require.ElementsMatch(t, slices.DeleteFunc(ids, func(id string) bool { return id == inFlight }), gotIDs,
				"the orders not in flight")
			got, err = client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: jobs.QueueUrl, MaxNumberOfMessages: 10,
				MessageAttributeNames:       []string{"All"},
				MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
			require.NoError(t, err)
			require.Len(t, got.Messages, 2)
			for _, m := range got.Messages {
				if aws.ToString(m.Body) == "job 1" {
					require.Equal(t, "nightly", aws.ToString(m.MessageAttributes["kind"].StringValue))
					require.Equal(t, "Root=1-5759e988-bd862e3fe1be46a994272793", m.Attributes["AWSTraceHeader"])
				}
			}
			c.stop(syscall.SIGTERM)
			require.Contains(t, c.stderr.String(), "store closed")
		})
	}
}

// TestServeDataDirQueues starts "serve --data-dir" with a --queue flag, then again with the same one, with
// another dir's lock held, and with different attributes: the declared ones win.
func TestServeDataDirQueues(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// start runs the command in process until the returned stop is called.
	start := func(args ...string) (stop func() (string, error)) {
		ctx, cancel := context.WithCancel(t.Context())
		stdoutR, stdoutW := io.Pipe()
		var stderr syncBuffer
		done := make(chan error, 1)
		go func() {
			done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dir}, args...), noEnv, stdoutW, &stderr)
			stdoutW.Close()
		}()
		line, err := bufio.NewReader(stdoutR).ReadString('\n')
		require.NoError(t, err, "stderr: %s", stderr.String())
		require.True(t, strings.HasPrefix(line, "http://"), "stdout %q", line)
		go io.Copy(io.Discard, stdoutR) //nolint:errcheck // keep the writer unblocked
		return func() (string, error) {
			cancel()
			err := <-done
			return stderr.String(), err
		}
	}

	stop := start("--queue", "jobs,VisibilityTimeout=5")
	// The directory is in use.
	var stderr bytes.Buffer
	err := run(t.Context(), []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dir}, noEnv, io.Discard, &stderr)
	require.ErrorContains(t, err, "in use", "a second server on the directory")
	logs, err := stop()
	require.NoError(t, err, logs)
	require.Contains(t, logs, "queue created")

	stop = start("--queue", "jobs,VisibilityTimeout=5")
	logs, err = stop()
	require.NoError(t, err, logs)
	require.Contains(t, logs, "queue kept")

	// Other attributes declared: they win, with a warning.
	stop = start("--queue", "jobs,VisibilityTimeout=6")
	logs, err = stop()
	require.NoError(t, err, logs)
	require.Contains(t, logs, `level=WARN msg="stored attribute differs from the declared one: set to the declared value" queue=jobs attribute=VisibilityTimeout stored=5 declared=6`)
	require.Contains(t, logs, "queue kept")

	// A queue declared twice: the declarations must agree.
	err = run(t.Context(), []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--queue", "jobs,VisibilityTimeout=6",
		"--queue", "jobs,VisibilityTimeout=7"}, noEnv, io.Discard, &stderr)
	require.ErrorContains(t, err, `--queue "jobs,VisibilityTimeout=7": queue jobs declared twice, with other attributes: `+
		`map[VisibilityTimeout:6] and map[VisibilityTimeout:7]`)
}

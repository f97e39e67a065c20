package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// freeAddr returns a loopback address that nothing listened on a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// isOpen reports whether something listens on addr: a connection is accepted (into the listener's backlog,
// whether it serves yet or not).
func isOpen(addr string) bool {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// watchWriter calls see with each write, before it writes it to w.
type watchWriter struct {
	w   io.Writer
	see func(p []byte)
}

func (ww *watchWriter) Write(p []byte) (int, error) {
	ww.see(p)
	return ww.w.Write(p)
}

// Every listener is open before the server says it is ready, and the API's is bound last: a check that waits
// for the API's port finds the metrics and the console open too, and so do the first line of stdout, the
// "listening" log, and /health. (Before, the metrics listener was bound after the API's, and the RSA key of
// the SNS envelopes was made between the two: a check that got the API's port and then asked the metrics'
// /health found nothing there.)
func TestServeListenersOpenBeforeReady(t *testing.T) {
	t.Parallel()
	api, metrics, console := freeAddr(t), freeAddr(t), freeAddr(t)
	all := []string{api, metrics, console}
	cfg, err := parseServe([]string{"--addr", api, "--metrics-addr", metrics, "--console-addr", console}, noEnv, io.Discard)
	require.NoError(t, err)

	var mu sync.Mutex
	var problems []string
	closed := func(when string, addrs ...string) {
		for _, a := range addrs {
			if !isOpen(a) {
				mu.Lock()
				problems = append(problems, a+" not open "+when)
				mu.Unlock()
			}
		}
	}
	var apiBound bool
	cfg.listen = func(ctx context.Context, network, address string) (net.Listener, error) {
		if address == api {
			closed("when the API's listener was bound", metrics, console)
			apiBound = true
		}
		return new(net.ListenConfig).Listen(ctx, network, address)
	}
	stdoutR, stdoutW := io.Pipe()
	stdout := &watchWriter{w: stdoutW, see: func([]byte) { closed("at a line of stdout", all...) }}
	var logs syncBuffer
	stderr := &watchWriter{w: &logs, see: func(p []byte) {
		if strings.Contains(string(p), "msg=listening") {
			closed("at the listening log", all...)
		}
	}}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, cfg, stdout, stderr)
		stdoutW.Close()
	}()
	lines := bufio.NewReader(stdoutR)
	var urls []string
	for range 3 {
		line, err := lines.ReadString('\n')
		require.NoError(t, err, "logs: %s", logs.String())
		urls = append(urls, strings.TrimSpace(line))
	}
	go io.Copy(io.Discard, stdoutR) //nolint:errcheck // nothing more is expected
	require.Equal(t, []string{"http://" + api, "http://" + metrics + "/metrics", "http://" + console + "/"}, urls)
	for _, u := range []string{"http://" + api + "/health", "http://" + metrics + "/health"} {
		resp, err := http.Get(u)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, u)
	}
	cancel()
	require.NoError(t, <-done, "logs: %s", logs.String())
	require.True(t, apiBound, "the API's listener went through cfg.listen")
	mu.Lock()
	defer mu.Unlock()
	require.Empty(t, problems)
}

// A server on every interface prints URLs a user can open: 127.0.0.1 for 0.0.0.0, ::, or no host.
func TestURLOf(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		"0.0.0.0:9324":   "http://127.0.0.1:9324",
		"[::]:9324":      "http://127.0.0.1:9324",
		":9324":          "http://127.0.0.1:9324",
		"127.0.0.1:9324": "http://127.0.0.1:9324",
		"[::1]:9324":     "http://[::1]:9324",
		"localhost:9324": "http://localhost:9324",
		"10.1.2.3:9324":  "http://10.1.2.3:9324",
	} {
		require.Equal(t, want, urlOf(addr), addr)
	}
}

// In a container the server listens on every interface (FIFOQ_ADDR=0.0.0.0:9324): its first line is a URL a
// user can open, not http://[::]:9324; so are the metrics' and the console's. (Listening on every interface
// sends nothing beyond this machine: the test connects on loopback.)
func TestServeEveryInterfacePrintsLoopback(t *testing.T) {
	t.Parallel()
	c := startChildEnv(t, []string{"FIFOQ_ADDR=0.0.0.0:0", "FIFOQ_ALLOW_REMOTE=true", "FIFOQ_METRICS_ADDR=0.0.0.0:0",
		"FIFOQ_CONSOLE_ADDR=0.0.0.0:0", "FIFOQ_ACCESS_KEY_ID=AKIDTEST", "FIFOQ_SECRET_ACCESS_KEY=secret"}, "serve")
	require.True(t, strings.HasPrefix(c.endpoint, "http://127.0.0.1:"), "endpoint %q", c.endpoint)
	metricsURL, consoleURL := c.line(), c.line()
	require.True(t, strings.HasPrefix(metricsURL, "http://127.0.0.1:") && strings.HasSuffix(metricsURL, "/metrics"), "%q", metricsURL)
	require.True(t, strings.HasPrefix(consoleURL, "http://127.0.0.1:") && strings.HasSuffix(consoleURL, "/"), "%q", consoleURL)
	resp, err := http.Get(c.endpoint + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	c.stop(syscall.SIGTERM)
}

package main

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseServeConsole(t *testing.T) {
	t.Parallel()
	creds := writeFile(t, `{"credentials":[{"accessKeyId":"AKID","secretAccessKey":"s3cret"}]}`)
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"loopback", []string{"--console-addr", "127.0.0.1:0"}, ""},
		{"read-only", []string{"--console-addr", "localhost:8080", "--console-read-only"}, ""},
		{"remote with login", []string{"--console-addr", "0.0.0.0:8080", "--allow-remote", "--credentials", creds}, ""},
		{"remote", []string{"--console-addr", "0.0.0.0:8080"}, "--console-addr 0.0.0.0:8080 is not a loopback address"},
		{"remote without login", []string{"--console-addr", ":8080", "--allow-remote"}, "needs --credentials"},
		{"read-only without console", []string{"--console-read-only"}, "there is no console"},
	} {
		var stderr bytes.Buffer
		_, err := parseServe(tc.args, noEnv, &stderr)
		if tc.wantErr == "" {
			require.NoError(t, err, tc.name)
			continue
		}
		require.ErrorIs(t, err, errUsage, tc.name)
		require.ErrorContains(t, err, tc.wantErr, tc.name)
	}
}

func TestServeConsole(t *testing.T) {
	t.Parallel()
	creds := writeFile(t, `{"credentials":[{"accessKeyId":"AKID","secretAccessKey":"s3cret"}]}`)
	c := startChild(t, "serve", "--addr", "127.0.0.1:0", "--console-addr", "127.0.0.1:0", "--console-read-only",
		"--credentials", creds, "--queue", "orders")
	consoleURL := c.line()
	require.True(t, strings.HasPrefix(consoleURL, "http://127.0.0.1:"), consoleURL)
	do := func(method, user, pass string) (int, string) {
		t.Helper()
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(url.Values{"body": {"x"}}.Encode())
		}
		req, err := http.NewRequestWithContext(t.Context(), method, consoleURL+map[string]string{"GET": "", "POST": "send?q=orders"}[method], body)
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	code, _ := do(http.MethodGet, "", "")
	require.Equal(t, http.StatusUnauthorized, code, "no login")
	code, body := do(http.MethodGet, "AKID", "s3cret")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `href="queue?q=orders"`)
	require.Contains(t, body, `<span class="version">fifoq `, "the console shows the version")
	code, body = do(http.MethodPost, "AKID", "s3cret")
	require.Equal(t, http.StatusForbidden, code, "read-only")
	require.Contains(t, body, "read-only")
	code, _ = do(http.MethodGet, "AKID", "wrong") // last: it makes this address wait (TestServeConsoleLoginThrottle)
	require.Equal(t, http.StatusUnauthorized, code, "wrong secret")
}

// Over a real server: wrong logins in a row soon get 429 with Retry-After, the right secret included, and
// each failure is logged at Warn with the client's address.
func TestServeConsoleLoginThrottle(t *testing.T) {
	t.Parallel()
	creds := writeFile(t, `{"credentials":[{"accessKeyId":"AKID","secretAccessKey":"s3cret"}]}`)
	c := startChild(t, "serve", "--addr", "127.0.0.1:0", "--console-addr", "127.0.0.1:0", "--credentials", creds)
	consoleURL := c.line()
	get := func(pass string) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, consoleURL, nil)
		require.NoError(t, err)
		req.SetBasicAuth("AKID", pass)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body) //nolint:errcheck // only the status matters
		resp.Body.Close()
		return resp
	}
	// The waits double from 100 ms: by the tenth failure the address waits 51 s, so a refusal comes
	// within 10 tries however slow the machine.
	failures := 0
	var refused *http.Response
	for range 11 {
		resp := get("guess")
		if resp.StatusCode == http.StatusTooManyRequests {
			refused = resp
			break
		}
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		failures++
	}
	require.NotNil(t, refused, "no 429 after %d failed logins", failures)
	require.NotEmpty(t, refused.Header.Get("Retry-After"))
	require.Equal(t, http.StatusTooManyRequests, get("s3cret").StatusCode, "the right secret waits too")
	require.Eventually(t, func() bool {
		return strings.Contains(c.stderr.String(), `level=WARN msg="console login failed" addr=127.0.0.1 user=AKID failures=1 retry_after=100ms`)
	}, 10*time.Second, 10*time.Millisecond, "the failure is logged: %s", c.stderr.String())
	c.stop(syscall.SIGTERM)
}

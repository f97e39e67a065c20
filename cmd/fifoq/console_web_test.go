package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/durable"
)

// consoleClient is a browser of a console behind a login: it keeps the console's cookie.
type consoleClient struct {
	t          *testing.T
	base       string
	user, pass string
	http       *http.Client
}

func newConsoleClient(t *testing.T, base, user, pass string) *consoleClient {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &consoleClient{t: t, base: base, user: user, pass: pass,
		http: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (c *consoleClient) do(method, path string, form url.Values) (int, string) {
	c.t.Helper()
	var body io.Reader
	if form != nil {
		u, err := url.Parse(c.base)
		require.NoError(c.t, err)
		for _, ck := range c.http.Jar.Cookies(u) {
			if ck.Name == "fifoq_console_csrf" {
				form.Set("csrf", ck.Value)
			}
		}
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(c.t.Context(), method, c.base+path, body)
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if c.user != "" {
		req.SetBasicAuth(c.user, c.pass)
	}
	resp, err := c.http.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	return resp.StatusCode, string(b)
}

// The console of fifoq serve shows the server on its server page: its version, its store (directory, size,
// sync, health) and its listeners; and its new forms, as every change, need the login, and are refused when
// it is read-only.
func TestServeConsoleServerPageAndForms(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := durable.Open(dir, durable.WithSyncEvery(100*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	home := catalog.Namespace{Account: "000000000000", Region: "us-east-1"}
	cat, err := catalog.Open(st, catalog.WithDefaultNamespace(home))
	require.NoError(t, err)
	t.Cleanup(func() { _ = cat.Close() })
	creds := map[string]string{"AKID": "s3cret"}
	cfg := serveConfig{addr: "127.0.0.1:9324", metricsAddr: "127.0.0.1:9325", consoleAddr: "127.0.0.1:0",
		dataDir: dir, syncEvery: 100 * time.Millisecond, credentials: creds, shutdownTimeout: 5 * time.Second}
	consoleURL, stop, err := startConsole(ctx, &net.ListenConfig{}, cfg, cat, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(stop)

	anon := newConsoleClient(t, consoleURL, "", "")
	code, _ := anon.do(http.MethodGet, "server", nil)
	require.Equal(t, http.StatusUnauthorized, code, "the server page needs the login")
	code, _ = anon.do(http.MethodPost, "createqueue", url.Values{"name": {"x"}, "type": {"standard"}, "confirm": {"yes"}})
	require.Equal(t, http.StatusUnauthorized, code, "so does every form")

	c := newConsoleClient(t, consoleURL, "AKID", "s3cret")
	code, body := c.do(http.MethodGet, "server", nil)
	require.Equal(t, http.StatusOK, code, body)
	for _, want := range []string{"fifoq ", dir, "every 100ms (--sync 100ms)", "working", "SQS and SNS API",
		"http://127.0.0.1:9324/", "http://127.0.0.1:9325/metrics", "console (login)", consoleURL, " KiB"} {
		require.Contains(t, body, want)
	}
	code, body = c.do(http.MethodPost, "createqueue", url.Values{"name": {"made-in-console"}, "type": {"standard"},
		"VisibilityTimeout": {"45"}, "confirm": {"yes"}})
	require.Equal(t, http.StatusSeeOther, code, body)
	d, ok := cat.Definition(home, "made-in-console")
	require.True(t, ok, "created in the server's catalogue")
	require.Equal(t, 45*time.Second, d.VisibilityTimeout)

	require.Equal(t, "http://0.0.0.0:9324/", listenURL(":9324"), "an address of every interface")

	cfg.consoleReadOnly = true
	roURL, stopRO, err := startConsole(ctx, &net.ListenConfig{}, cfg, cat, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(stopRO)
	ro := newConsoleClient(t, roURL, "AKID", "s3cret")
	code, body = ro.do(http.MethodGet, "server", nil)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "console (read-only, login)")
	for _, path := range []string{"createqueue", "updatequeue?q=made-in-console", "deletequeue?q=made-in-console", "createtopic", "subscribe", "publish"} {
		code, body = ro.do(http.MethodPost, path, url.Values{"name": {"y"}, "type": {"standard"}, "VisibilityTimeout": {"5"}, "confirm": {"yes"}})
		require.Equal(t, http.StatusForbidden, code, path)
		require.Contains(t, body, "read-only", path)
	}
	d, _ = cat.Definition(home, "made-in-console")
	require.Equal(t, 45*time.Second, d.VisibilityTimeout, "read-only: nothing changed")
	require.Len(t, cat.Queues(), 1)
}

package main

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHealthURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ addr, want, wantErr string }{
		{"127.0.0.1:9324", "http://127.0.0.1:9324/health", ""},
		{"0.0.0.0:9324", "http://127.0.0.1:9324/health", ""},
		{":9324", "http://127.0.0.1:9324/health", ""},
		{"[::]:9324", "http://127.0.0.1:9324/health", ""},
		{"[::1]:80", "http://[::1]:80/health", ""},
		{"localhost:1", "http://localhost:1/health", ""},
		{"127.0.0.1", "", "missing port"},
		{"127.0.0.1:0", "", "give the port the server listens on"},
	} {
		got, err := healthURL(tc.addr)
		if tc.wantErr != "" {
			require.ErrorContains(t, err, tc.wantErr, tc.addr)
			continue
		}
		require.NoError(t, err, tc.addr)
		require.Equal(t, tc.want, got, tc.addr)
	}
}

// "fifoq health" against a server that answers 200, 503, or nothing: exit 0 with one line on stdout, or
// exit 1 with one line on stderr.
func TestHealthCommand(t *testing.T) {
	t.Parallel()
	status := http.StatusServiceUnavailable
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		w.Write([]byte("fifoq: store failed: /data: no space left on device\n"))
	}))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"health", "--addr", addr}, noEnv, &stdout, &stderr)
	require.ErrorIs(t, err, errUnhealthy)
	require.Empty(t, stdout.String())
	require.Equal(t, "fifoq health: http://"+addr+"/health: 503 Service Unavailable: fifoq: store failed: /data: no space left on device\n",
		stderr.String())

	// From FIFOQ_ADDR, a wildcard host asked on 127.0.0.1.
	_, port, _ := net.SplitHostPort(addr)
	for _, bad := range []string{"--bogus", "extra", "--timeout=0s"} {
		stderr.Reset()
		require.ErrorIs(t, run(t.Context(), []string{"health", bad}, noEnv, &stdout, &stderr), errUnhealthy, bad)
		require.Equal(t, 1, strings.Count(stderr.String(), "\n"), "%s: one line: %s", bad, stderr.String())
	}
	stderr.Reset()
	require.ErrorIs(t, run(t.Context(), []string{"health"}, env("FIFOQ_ADDR=0.0.0.0:"+port), &stdout, &stderr), errUnhealthy)
	require.Contains(t, stderr.String(), "http://127.0.0.1:"+port+"/health: 503")
}

// The command as a process, as a HEALTHCHECK runs it: 0 while the server serves (the address from
// FIFOQ_ADDR, given as the container image gives it: every interface), 1 once it is gone.
func TestHealthProcess(t *testing.T) {
	t.Parallel()
	c := startChild(t, "serve", "--addr", "127.0.0.1:0")
	hostport := strings.TrimPrefix(c.endpoint, "http://")
	_, port, err := net.SplitHostPort(hostport)
	require.NoError(t, err)
	code, stdout, stderr := runProcess(t, []string{"FIFOQ_ADDR=0.0.0.0:" + port}, "health")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "http://127.0.0.1:"+port+"/health: ok\n", stdout)
	require.Empty(t, stderr)
	code, stdout, _ = runProcess(t, nil, "health", "--addr", hostport)
	require.Equal(t, 0, code)
	require.Equal(t, "http://"+hostport+"/health: ok\n", stdout)

	c.stop(syscall.SIGTERM)
	code, stdout, stderr = runProcess(t, nil, "health", "--addr", hostport)
	require.Equal(t, 1, code, "the server is gone")
	require.Empty(t, stdout)
	require.Contains(t, stderr, "fifoq health: http://"+hostport+"/health: dial tcp "+hostport+": connect: connection refused")
	require.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %s", stderr)
}

func TestBuildVersion(t *testing.T) {
	t.Parallel()
	info := func(version string, settings ...string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/fifoq/fifoq/cmd/fifoq", Version: version}}
			for i := 0; i+1 < len(settings); i += 2 {
				bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
			}
			return bi, true
		}
	}
	rev := "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		read        func() (*debug.BuildInfo, bool)
		want, short string
	}{
		{info("v0.1.0"), "v0.1.0", "v0.1.0"},
		{info("(devel)", "vcs.revision", rev, "vcs.time", "2026-11-27T10:00:00Z", "vcs.modified", "false"),
			"(devel), revision " + rev + " (2026-11-27T10:00:00Z)", "(devel) 0123456789ab"},
		{info("v0.0.0-20261127100000-0123456789ab+dirty", "vcs.revision", rev, "vcs.modified", "true"),
			"v0.0.0-20261127100000-0123456789ab+dirty, revision " + rev + ", modified", "v0.0.0-20261127100000-0123456789ab+dirty 0123456789ab"},
		{info(""), "(devel)", "(devel)"},
		{func() (*debug.BuildInfo, bool) { return nil, false }, "(unknown: the binary has no build information)", ""},
	} {
		require.Equal(t, tc.want, buildVersion(tc.read))
		require.Equal(t, tc.short, shortVersion(tc.read))
	}

	code, stdout, stderr := runProcess(t, nil, "version")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `^fifoq \S.*; `+runtime.Version()+` `+runtime.GOOS+`/`+runtime.GOARCH+`\n$`, stdout)
	_, stdout2, _ := runProcess(t, nil, "--version")
	require.Equal(t, stdout, stdout2, "--version is version")
	code, _, stderr = runProcess(t, nil, "version", "extra")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `unexpected argument "extra"`)
}

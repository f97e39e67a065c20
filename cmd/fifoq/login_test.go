package main

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testClock is a clock a test moves by hand.
type testClock struct{ t time.Time }

func (c *testClock) now() time.Time          { return c.t }
func (c *testClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestLoginDelay(t *testing.T) {
	t.Parallel()
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond,
		1600 * time.Millisecond, 3200 * time.Millisecond, 6400 * time.Millisecond, 12800 * time.Millisecond,
		25600 * time.Millisecond, 51200 * time.Millisecond, time.Minute, time.Minute}
	for i, w := range want {
		require.Equal(t, w, loginDelay(i+1), "after %d failures", i+1)
	}
	require.Equal(t, time.Minute, loginDelay(1000))
}

// The throttle's bookkeeping: the wait grows with each failure of one address and touches no other; it is
// cleared by a success and forgotten after loginForget; the addresses remembered are bounded.
func TestLoginThrottle(t *testing.T) {
	t.Parallel()
	clk := &testClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	th := newLoginThrottle(clk.now)
	require.Zero(t, th.wait("10.0.0.1"))
	for i := 1; i <= 3; i++ {
		n, d := th.failed("10.0.0.1")
		require.Equal(t, i, n)
		require.Equal(t, loginDelay(i), d)
		require.Equal(t, d, th.wait("10.0.0.1"))
		require.Zero(t, th.wait("10.0.0.2"), "another address is not held back")
		clk.advance(d / 2)
		require.Equal(t, d-d/2, th.wait("10.0.0.1"))
		clk.advance(d - d/2)
		require.Zero(t, th.wait("10.0.0.1"), "the wait is over")
	}
	th.succeeded("10.0.0.1")
	n, _ := th.failed("10.0.0.1")
	require.Equal(t, 1, n, "a good login starts the count again")
	th.failed("10.0.0.1")
	clk.advance(loginForget)
	require.Zero(t, th.wait("10.0.0.1"))
	n, _ = th.failed("10.0.0.1")
	require.Equal(t, 1, n, "forgotten after loginForget")

	// Bounded: past loginMaxClients, the address whose last failure is oldest goes first.
	th = newLoginThrottle(clk.now)
	for i := range loginMaxClients {
		th.failed(fmt.Sprintf("addr-%d", i))
		clk.advance(time.Millisecond)
	}
	th.failed("one-more")
	require.Len(t, th.clients, loginMaxClients)
	require.NotContains(t, th.clients, "addr-0")
	require.Contains(t, th.clients, "addr-1")
	require.Contains(t, th.clients, "one-more")
	clk.advance(loginForget)
	th.failed("after-a-while")
	require.Len(t, th.clients, 1, "the forgotten are dropped when room is needed")
}

// The console's login: a request without a login gets the challenge and counts nothing; a wrong login gets
// 401, is logged at Warn with the address, and makes the address wait; a request during the wait gets 429
// with Retry-After, its password unchecked (the right one too); after the wait a good login passes and
// clears the count.
func TestBasicAuthThrottle(t *testing.T) {
	t.Parallel()
	clk := &testClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := basicAuth(map[string]string{"AKID": "s3cret"}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "console")
	}), newLoginThrottle(clk.now), logger)
	do := func(addr, user, pass string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = addr + ":40000"
		if user != "" {
			r.SetBasicAuth(user, pass)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	w := do("192.0.2.7", "", "")
	require.Equal(t, http.StatusUnauthorized, w.Code)
	require.Contains(t, w.Header().Get("WWW-Authenticate"), "Basic")
	require.Empty(t, logs.String(), "no login given: no failure")

	for i := 1; i <= 4; i++ {
		w = do("192.0.2.7", "AKID", "guess")
		require.Equal(t, http.StatusUnauthorized, w.Code, "failure %d", i)
		require.Contains(t, logs.String(), fmt.Sprintf(`level=WARN msg="console login failed" addr=192.0.2.7 user=AKID failures=%d retry_after=%v`,
			i, loginDelay(i)))
		w = do("192.0.2.7", "AKID", "s3cret")
		require.Equal(t, http.StatusTooManyRequests, w.Code, "during the wait even the right secret is refused")
		require.Equal(t, "1", w.Header().Get("Retry-After"))
		require.Contains(t, w.Body.String(), "too many failed logins from 192.0.2.7: try again in "+loginDelay(i).String())
		require.Equal(t, http.StatusOK, do("198.51.100.1", "AKID", "s3cret").Code, "another address logs in")
		clk.advance(loginDelay(i))
	}
	require.Equal(t, 4, strings.Count(logs.String(), "level=WARN"), "a warning per failed login, none per refusal")
	require.Contains(t, logs.String(), `level=DEBUG msg="console login refused: too many failed logins" addr=192.0.2.7`)
	for i := 5; i <= 10; i++ { // the waits double: 51.2 s after the tenth failure
		require.Equal(t, http.StatusUnauthorized, do("192.0.2.7", "AKID", "guess").Code, "failure %d", i)
		clk.advance(loginDelay(i))
	}
	require.Equal(t, http.StatusUnauthorized, do("192.0.2.7", "nobody", "guess").Code, "an unknown user is a failure too")
	w = do("192.0.2.7", "AKID", "s3cret")
	require.Equal(t, http.StatusTooManyRequests, w.Code)
	require.Equal(t, "60", w.Header().Get("Retry-After"), "a minute at most")

	clk.advance(time.Minute)
	w = do("192.0.2.7", "AKID", "s3cret")
	require.Equal(t, http.StatusOK, w.Code)
	require.Equal(t, "console", w.Body.String())
	w = do("192.0.2.7", "AKID", "guess")
	require.Equal(t, http.StatusUnauthorized, w.Code)
	require.Contains(t, logs.String(), "failures=1 retry_after=100ms", "the good login cleared the count")
}

package main

import (
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// The console's logins are throttled by client address: after a failed login, the address must wait before
// its next request is looked at, and the wait doubles with each failure in a row, from loginBaseDelay up to
// loginMaxDelay. A request that comes sooner is refused with 429 and Retry-After without its password being
// checked, so that guesses sent in parallel gain nothing. A good login clears the address's count, and so
// do loginForget without a failure. Each failed login is logged at Warn with the address.
const (
	loginBaseDelay = 100 * time.Millisecond
	loginMaxDelay  = time.Minute
	loginForget    = 15 * time.Minute
	// loginMaxClients bounds the addresses remembered: past it, the one whose last failure is oldest is
	// forgotten first.
	loginMaxClients = 10_000
)

// loginThrottle counts the failed logins of each client address. It is safe for concurrent use.
type loginThrottle struct {
	now func() time.Time // time.Now, or a test's clock

	mu      sync.Mutex // guards the field below
	clients map[string]*loginFailures
}

// loginFailures are the failed logins in a row of one address.
type loginFailures struct {
	count int
	last  time.Time // of the last failure
	until time.Time // the address's next request is refused before this
}

func newLoginThrottle(now func() time.Time) *loginThrottle {
	return &loginThrottle{now: now, clients: make(map[string]*loginFailures)}
}

// loginDelay is the wait after n failed logins in a row: loginBaseDelay doubled n-1 times, at most
// loginMaxDelay.
func loginDelay(n int) time.Duration {
	d := loginBaseDelay
	for i := 1; i < n && d < loginMaxDelay; i++ {
		d *= 2
	}
	return min(d, loginMaxDelay)
}

// wait returns how long addr must still wait before a login is looked at; 0 when it need not.
func (t *loginThrottle) wait(addr string) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.clients[addr]
	if f == nil {
		return 0
	}
	now := t.now()
	if now.Sub(f.last) >= loginForget {
		delete(t.clients, addr)
		return 0
	}
	return max(f.until.Sub(now), 0)
}

// failed counts a failed login of addr, and returns the failures in a row and the wait before the next.
func (t *loginThrottle) failed(addr string) (count int, delay time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	f := t.clients[addr]
	if f != nil && now.Sub(f.last) >= loginForget {
		f = nil
	}
	if f == nil {
		if len(t.clients) >= loginMaxClients {
			t.forgetOldestLocked(now)
		}
		f = &loginFailures{}
		t.clients[addr] = f
	}
	f.count++
	f.last = now
	delay = loginDelay(f.count)
	f.until = now.Add(delay)
	return f.count, delay
}

// succeeded clears the failures of addr.
func (t *loginThrottle) succeeded(addr string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.clients, addr)
}

// forgetOldestLocked makes room for one more address: it forgets those whose last failure is older than
// loginForget, or else the one whose last failure is oldest. O(n), and only when the map is full.
func (t *loginThrottle) forgetOldestLocked(now time.Time) {
	var oldest string
	for addr, f := range t.clients {
		if now.Sub(f.last) >= loginForget {
			delete(t.clients, addr)
			continue
		}
		if oldest == "" || f.last.Before(t.clients[oldest].last) {
			oldest = addr
		}
	}
	if len(t.clients) >= loginMaxClients {
		delete(t.clients, oldest)
	}
}

// clientAddr is the address a request came from, without its port. Behind a proxy it is the proxy's: the
// console trusts no X-Forwarded-For header, which any client can write.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// basicAuth lets through the requests with an HTTP basic login of one of keys: an access key id as the
// user, its secret access key as the password. The others get 401 and a challenge, and a failed login
// (one that gave a user and a password) is counted by throttle and logged at Warn; a request from an
// address that must still wait gets 429.
func basicAuth(keys map[string]string, h http.Handler, throttle *loginThrottle, logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		addr := clientAddr(r)
		if wait := throttle.wait(addr); wait > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
			logger.Debug("console login refused: too many failed logins", "addr", addr, "retry_after", wait)
			http.Error(w, fmt.Sprintf("fifoq console: too many failed logins from %s: try again in %v", addr,
				wait.Round(time.Millisecond)), http.StatusTooManyRequests)
			return
		}
		id, secret, ok := r.BasicAuth()
		want, known := keys[id]
		if !ok || !known || subtle.ConstantTimeCompare([]byte(secret), []byte(want)) != 1 {
			if ok { // a browser's first request carries no login: no failure yet
				n, delay := throttle.failed(addr)
				logger.Warn("console login failed", "addr", addr, "user", id, "failures", n, "retry_after", delay)
			}
			w.Header().Set("WWW-Authenticate", `Basic realm="fifoq console", charset="UTF-8"`)
			http.Error(w, "fifoq console: log in with an access key id of --credentials and its secret access key", http.StatusUnauthorized)
			return
		}
		throttle.succeeded(addr)
		h.ServeHTTP(w, r)
	})
}

package fifoqweb

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// wtStart is the manual clock's start.
var wtStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// wtQueues are the queues of a test: a standard queue with a DLQ, and a FIFO queue.
type wtQueues struct {
	clk              *fifoq.ManualClock
	orders, dlq, fif *fifoq.Queue
}

func wtSetup(t *testing.T, opts ...Option) (wtQueues, *Handler) {
	t.Helper()
	clk := fifoq.NewManualClock(wtStart)
	dlq, err := fifoq.New("orders-dlq", fifoq.WithClock(clk))
	require.NoError(t, err)
	orders, err := fifoq.New("orders", fifoq.WithClock(clk), fifoq.WithVisibilityTimeout(time.Minute))
	require.NoError(t, err)
	a := orders.Attributes()
	a.DeadLetterQueue, a.MaxReceiveCount = dlq, 1
	require.NoError(t, orders.SetAttributes(a))
	fif, err := fifoq.New("jobs.fifo", fifoq.WithClock(clk), fifoq.WithVisibilityTimeout(time.Minute))
	require.NoError(t, err)
	qs := wtQueues{clk, orders, dlq, fif}
	h := New(Queues(orders, dlq, fif), append([]Option{WithClock(clk)}, opts...)...)
	t.Cleanup(func() { _ = h.Close() })
	return qs, h
}

// wtClient is a browser of the console: it keeps the CSRF cookie.
type wtClient struct {
	t    *testing.T
	h    http.Handler
	csrf string
}

func (c *wtClient) get(path string) (int, string) {
	c.t.Helper()
	r := httptest.NewRequest(http.MethodGet, "/"+path, nil)
	if c.csrf != "" {
		r.AddCookie(&http.Cookie{Name: csrfCookie, Value: c.csrf})
	}
	w := httptest.NewRecorder()
	c.h.ServeHTTP(w, r)
	for _, ck := range w.Result().Cookies() {
		if ck.Name == csrfCookie {
			c.csrf = ck.Value
		}
	}
	b, _ := io.ReadAll(w.Result().Body)
	return w.Code, string(b)
}

// post posts a form to path with the client's token; confirm adds confirm=yes.
func (c *wtClient) post(path string, form url.Values, confirm bool) *httptest.ResponseRecorder {
	c.t.Helper()
	if c.csrf == "" {
		c.get("")
	}
	f := url.Values{"csrf": {c.csrf}}
	for k, v := range form {
		f[k] = v
	}
	if confirm {
		f.Set("confirm", "yes")
	}
	r := httptest.NewRequest(http.MethodPost, "/"+path, strings.NewReader(f.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.AddCookie(&http.Cookie{Name: csrfCookie, Value: c.csrf})
	w := httptest.NewRecorder()
	c.h.ServeHTTP(w, r)
	return w
}

func wtSend(t *testing.T, q *fifoq.Queue, n int) {
	t.Helper()
	for i := range n {
		m := fifoq.Message{Body: fmt.Sprintf("body %d", i)}
		if q.FIFO() {
			m.GroupID, m.DeduplicationID = fmt.Sprintf("g%d", i%2), fmt.Sprintf("d%d", i)
		}
		_, err := q.Send(context.Background(), m)
		require.NoError(t, err)
	}
}

func TestIndexAndQueuePages(t *testing.T) {
	t.Parallel()
	qs, h := wtSetup(t)
	wtSend(t, qs.orders, 3)
	wtSend(t, qs.fif, 4)
	c := &wtClient{t: t, h: h}
	code, body := c.get("")
	require.Equal(t, http.StatusOK, code, body)
	for _, want := range []string{`href="queue?q=orders"`, `href="queue?q=jobs.fifo"`, "orders-dlq", `data-q="orders" data-f="visible">3<`} {
		require.Contains(t, body, want)
	}
	code, body = c.get("queue?q=jobs.fifo")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, "body 3")
	require.Contains(t, body, "No group is blocked.")
	_, err := qs.fif.Receive(context.Background(), fifoq.ReceiveOptions{MaxMessages: 1})
	require.NoError(t, err)
	_, body = c.get("queue?q=jobs.fifo")
	require.Contains(t, body, `href="queue?group=g0&amp;q=jobs.fifo">g0</a>`, "g0 blocked")
	before := qs.fif.Stats()
	for range 2 {
		c.get("queue?q=jobs.fifo&state=inflight")
	}
	require.Equal(t, before, qs.fif.Stats(), "looking changes nothing")
}

// The page weight docs/console.md states: the script and the style sheet, and the pages of a small setup.
func TestPageWeight(t *testing.T) {
	t.Parallel()
	qs, h := wtSetup(t)
	wtSend(t, qs.orders, 50)
	c := &wtClient{t: t, h: h}
	size := func(path string) int {
		code, body := c.get(path)
		require.Equal(t, http.StatusOK, code, path)
		return len(body)
	}
	js, css := size("console.js"), size("console.css")
	index, queue := size(""), size("queue?q=orders")
	t.Logf("console.js %d bytes, console.css %d bytes; the list of 3 queues %d bytes, a page of 50 messages %d bytes",
		js, css, index, queue)
	require.LessOrEqual(t, js+css, 6<<10, "script and style stay under 6 KiB")
	require.LessOrEqual(t, index, 16<<10, "the list of 3 queues, with the three charts of all queues")
	require.LessOrEqual(t, queue, 64<<10, "a page of 50 short messages")
}

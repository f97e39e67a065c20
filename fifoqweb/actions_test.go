package fifoqweb

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/storage/storagetest"
)

// wtState is what a bad request must leave as it was.
func wtState(qs wtQueues) [3]fifoq.Metrics {
	return [3]fifoq.Metrics{qs.orders.Metrics(), qs.dlq.Metrics(), qs.fif.Metrics()}
}

func TestActionsConfirmThenChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	qs, h := wtSetup(t)
	c := &wtClient{t: t, h: h}

	// Send: the first post shows the confirmation page and changes nothing.
	form := url.Values{"body": {"hello"}, "group": {"g1"}, "dedup": {"d1"}, "attr1_name": {"kind"}, "attr1_type": {"String"}, "attr1_value": {"test"}}
	w := c.post("send?q=jobs.fifo", form, false)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	require.Contains(t, w.Body.String(), `name="confirm" value="yes"`)
	require.Contains(t, w.Body.String(), "Send a message of 5 bytes to jobs.fifo")
	require.Equal(t, fifoq.Stats{}, qs.fif.Stats(), "not confirmed: nothing sent")
	w = c.post("send?q=jobs.fifo", form, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	require.Equal(t, "queue?done=send&q=jobs.fifo", w.Header().Get("Location"))
	var sent []fifoq.Snapshot
	for s := range qs.fif.Messages() {
		sent = append(sent, s)
	}
	require.Len(t, sent, 1)
	require.Equal(t, "hello", sent[0].Body)
	require.Equal(t, "g1", sent[0].GroupID)
	require.Equal(t, "d1", sent[0].DeduplicationID)
	require.Equal(t, fifoq.Attribute{DataType: "String", StringValue: "test"}, sent[0].Attributes["kind"])
	w = c.post("send?q=jobs.fifo", form, true)
	require.Equal(t, "queue?done=duplicate&q=jobs.fifo", w.Header().Get("Location"), "the same dedup id again")

	// Change visibility and delete an in-flight message by the handle the page shows.
	ds, err := qs.fif.Receive(ctx, fifoq.ReceiveOptions{})
	require.NoError(t, err)
	_, body := c.get("queue?q=jobs.fifo")
	require.Contains(t, body, `name="handle" value="`+ds[0].ReceiptHandle+`"`)
	w = c.post("visibility?q=jobs.fifo", url.Values{"handle": {ds[0].ReceiptHandle}, "timeout": {"0"}}, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	require.Equal(t, fifoq.Stats{Visible: 1}, qs.fif.Stats(), "visible again")
	ds, err = qs.fif.Receive(ctx, fifoq.ReceiveOptions{})
	require.NoError(t, err)
	w = c.post("delete?q=jobs.fifo", url.Values{"handle": {ds[0].ReceiptHandle}, "id": {ds[0].MessageID}}, false)
	require.Contains(t, w.Body.String(), "Delete message &#34;"+ds[0].MessageID+"&#34;")
	require.Equal(t, fifoq.Stats{InFlight: 1}, qs.fif.Stats())
	w = c.post("delete?q=jobs.fifo", url.Values{"handle": {ds[0].ReceiptHandle}}, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	require.Equal(t, fifoq.Stats{}, qs.fif.Stats(), "deleted")

	// Purge, and the 60-second rule.
	wtSend(t, qs.orders, 2)
	w = c.post("purge?q=orders", nil, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	require.Equal(t, fifoq.Stats{}, qs.orders.Stats())
	wtSend(t, qs.orders, 1)
	w = c.post("purge?q=orders", nil, true)
	require.Equal(t, http.StatusConflict, w.Code)
	require.Contains(t, w.Body.String(), "only one PurgeQueue operation")
	require.Equal(t, fifoq.Stats{Visible: 1}, qs.orders.Stats(), "refused: nothing purged")
	qs.clk.Advance(time.Minute)
	require.Equal(t, http.StatusSeeOther, c.post("purge?q=orders", nil, true).Code, "60 seconds later")

	// A message received past its maxReceiveCount goes to the DLQ; redrive it back, then cancel.
	wtSend(t, qs.orders, 3)
	for range 2 {
		_, err := qs.orders.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10, NoVisibilityTimeout: true})
		require.NoError(t, err)
	}
	require.Equal(t, 3, qs.dlq.Stats().Visible)
	w = c.post("cancel?q=orders-dlq", url.Values{"task": {consoleTask}}, true)
	require.Equal(t, http.StatusConflict, w.Code, "no redrive of the console to cancel")
	require.Contains(t, w.Body.String(), errNoConsoleTask.Error())
	w = c.post("redrive?q=orders-dlq", url.Values{"dest": {""}, "rate": {"1"}}, false)
	require.Contains(t, w.Body.String(), "Move the 3 visible messages of orders-dlq back to the queues they came from, at 1 a second.")
	w = c.post("redrive?q=orders-dlq", url.Values{"dest": {""}, "rate": {"1"}}, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	w = c.post("redrive?q=orders-dlq", url.Values{"rate": {"1"}}, true)
	require.Equal(t, http.StatusConflict, w.Code, "one running task a queue")
	_, body = c.get("queue?q=orders-dlq")
	require.Contains(t, body, "Cancel redrive…")
	handle := shownHandle(t, c, "orders-dlq")
	require.Equal(t, consoleTask, handle, "the page's form names the console's redrive")
	w = c.post("cancel?q=orders-dlq", url.Values{"task": {handle}}, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	ts := qs.dlq.MoveTasks()
	require.Len(t, ts, 1)
	require.Contains(t, []fifoq.MoveTaskState{fifoq.MoveTaskCancelling, fifoq.MoveTaskCancelled}, ts[0].State)
}

func TestRedriveMovesBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	qs, h := wtSetup(t)
	c := &wtClient{t: t, h: h}
	wtSend(t, qs.orders, 2)
	for range 2 {
		_, err := qs.orders.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10, NoVisibilityTimeout: true})
		require.NoError(t, err)
	}
	require.Equal(t, http.StatusSeeOther, c.post("redrive?q=orders-dlq", nil, true).Code)
	h.plain.mu.Lock()
	task := h.plain.tasks[qs.dlq]
	h.plain.mu.Unlock()
	require.NoError(t, task.Wait(ctx))
	require.Equal(t, fifoq.MoveTaskCompleted, task.Status().State)
	require.Equal(t, 2, qs.orders.Stats().Visible, "moved back")
	_, body := c.get("queue?q=orders-dlq")
	require.Contains(t, body, "redrive completed: 2 of 2 moved")
}

func TestBadRequestsChangeNothing(t *testing.T) {
	t.Parallel()
	qs, h := wtSetup(t)
	wtSend(t, qs.orders, 2)
	wtSend(t, qs.fif, 2)
	_, err := qs.fif.Receive(context.Background(), fifoq.ReceiveOptions{})
	require.NoError(t, err)
	c := &wtClient{t: t, h: h}
	before := wtState(qs)
	big := strings.Repeat("x", 2<<20)
	for _, tc := range []struct {
		name, path string
		form       url.Values
		status     int
		says       string
	}{
		{"unknown queue", "send?q=nope", url.Values{"body": {"x"}}, 404, `no queue named &#34;nope&#34;`},
		{"no queue", "purge", nil, 400, "the q parameter is missing"},
		{"unknown action", "explode?q=orders", nil, 404, "no page /explode"},
		{"empty body", "send?q=orders", url.Values{"body": {""}}, 400, "MessageBody"},
		{"fifo without group", "send?q=jobs.fifo", url.Values{"body": {"x"}, "dedup": {"d"}}, 400, "MessageGroupId"},
		{"bad group id", "send?q=jobs.fifo", url.Values{"body": {"x"}, "group": {"a b\x01"}, "dedup": {"d"}}, 400, "invalid message group id"},
		{"bad delay", "send?q=orders", url.Values{"body": {"x"}, "delay": {"soon"}}, 400, `delay &#34;soon&#34;`},
		{"delay too long", "send?q=orders", url.Values{"body": {"x"}, "delay": {"901"}}, 400, "invalid delay"},
		{"bad attribute type", "send?q=orders", url.Values{"body": {"x"}, "attr1_name": {"a"}, "attr1_type": {"Blob"}, "attr1_value": {"v"}}, 400, "invalid message attribute"},
		{"bad binary", "send?q=orders", url.Values{"body": {"x"}, "attr1_name": {"a"}, "attr1_type": {"Binary"}, "attr1_value": {"!!"}}, 400, "base64"},
		{"too large for the queue", "send?q=orders", url.Values{"body": {strings.Repeat("x", 1<<20+1)}}, 400, "message too large"},
		{"oversize request", "send?q=orders", url.Values{"body": {big}}, 413, "request body over"},
		{"malformed handle", "delete?q=orders", url.Values{"handle": {"garbage"}}, 400, "not a valid receipt handle"},
		{"another queue's handle", "visibility?q=orders", url.Values{"handle": {"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}, "timeout": {"0"}}, 400, "receipt handle"},
		{"bad timeout", "visibility?q=orders", url.Values{"handle": {"x"}, "timeout": {"-"}}, 400, "want whole seconds"},
		{"timeout too long", "visibility?q=jobs.fifo", url.Values{"handle": {"x"}, "timeout": {"43201"}}, 400, "invalid visibility timeout"},
		{"redrive of no DLQ", "redrive?q=orders", nil, 400, "dead letter queue"},
		{"redrive to unknown", "redrive?q=orders-dlq", url.Values{"dest": {"nope"}}, 400, `no queue named &#34;nope&#34;`},
		{"redrive bad rate", "redrive?q=orders-dlq", url.Values{"rate": {"fast"}}, 400, "want whole messages"},
		{"redrive rate too high", "redrive?q=orders-dlq", url.Values{"rate": {"501"}}, 400, "invalid message move task"},
		{"redrive to other type", "redrive?q=orders-dlq", url.Values{"dest": {"jobs.fifo"}}, 400, "invalid message move task"},
	} {
		w := c.post(tc.path, tc.form, true)
		require.Equal(t, tc.status, w.Code, "%s: %s", tc.name, w.Body.String())
		require.Contains(t, w.Body.String(), tc.says, tc.name)
		require.Equal(t, before, wtState(qs), "%s changed the queues", tc.name)
	}
	for _, tc := range []struct{ name, path, says string }{
		{"unknown queue", "queue?q=nope", "no queue named"},
		{"bad state", "queue?q=orders&state=lost", "want visible, inflight, delayed"},
		{"bad page size", "queue?q=orders&n=0", "page size"},
		{"huge page size", "queue?q=orders&n=100000", "page size"},
		{"malformed cursor", "queue?q=orders&after=zzz", "invalid message page"},
		{"group on standard", "queue?q=orders&group=g", "only FIFO queues have groups"},
	} {
		code, body := c.get(tc.path)
		require.Contains(t, []int{400, 404}, code, tc.name)
		require.Contains(t, body, tc.says, tc.name)
	}
	require.Equal(t, before, wtState(qs))
}

func TestReadOnlyAndCSRF(t *testing.T) {
	t.Parallel()
	qs, h := wtSetup(t, WithReadOnly(true))
	wtSend(t, qs.orders, 1)
	c := &wtClient{t: t, h: h}
	code, body := c.get("queue?q=orders")
	require.Equal(t, http.StatusOK, code)
	require.NotContains(t, body, "<form method=\"post\"", "read-only pages offer no action")
	require.Contains(t, body, "read-only")
	for name := range actions {
		w := c.post(name+"?q=orders", url.Values{"body": {"x"}}, true)
		require.Equal(t, http.StatusForbidden, w.Code, name)
		require.Contains(t, w.Body.String(), "the console is read-only: "+name+" refused")
	}
	require.Equal(t, fifoq.Stats{Visible: 1}, qs.orders.Stats())

	qs, h = wtSetup(t)
	c = &wtClient{t: t, h: h}
	c.get("")
	c.csrf = strings.Repeat("0", 32) // a token the form does not carry: the cookie of another page
	f := url.Values{"csrf": {strings.Repeat("1", 32)}, "body": {"x"}, "confirm": {"yes"}}
	r := httptest.NewRequest(http.MethodPost, "/send?q=orders", strings.NewReader(f.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.AddCookie(&http.Cookie{Name: csrfCookie, Value: c.csrf})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	require.Equal(t, http.StatusForbidden, w.Code)
	require.Contains(t, w.Body.String(), "token")
	r = httptest.NewRequest(http.MethodPost, "/send?q=orders", strings.NewReader(f.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Sec-Fetch-Site", "cross-site")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	require.Equal(t, http.StatusForbidden, w.Code)
	require.Contains(t, w.Body.String(), "cross-origin")
	require.Equal(t, fifoq.Stats{}, qs.orders.Stats())
}

func TestMountedUnderPrefix(t *testing.T) {
	t.Parallel()
	_, h := wtSetup(t)
	mux := http.NewServeMux()
	mux.Handle("/admin/queues/", http.StripPrefix("/admin/queues", h))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	client := srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Get(srv.URL + "/admin/queues/")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var csrf *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == csrfCookie {
			csrf = ck
		}
	}
	require.NotNil(t, csrf)
	require.Equal(t, "/admin/queues/", csrf.Path, "the cookie is the mount's")
	require.Equal(t, http.SameSiteStrictMode, csrf.SameSite)
	resp.Body.Close()
	resp, err = client.Get(srv.URL + "/admin/queues/console.js")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	resp.Body.Close()

	mux = http.NewServeMux()
	mux.Handle("/ops", http.StripPrefix("/ops", h))
	srv2 := httptest.NewServer(mux)
	defer srv2.Close()
	resp, err = client.Get(srv2.URL + "/ops")
	require.NoError(t, err)
	require.Equal(t, http.StatusMovedPermanently, resp.StatusCode)
	require.Equal(t, "/ops/", resp.Header.Get("Location"), "so relative links resolve under the prefix")
	resp.Body.Close()
}

func TestCountsAndRates(t *testing.T) {
	t.Parallel()
	qs, h := wtSetup(t)
	c := &wtClient{t: t, h: h}
	read := func() map[string]liveCounts {
		code, body := c.get("counts.json")
		require.Equal(t, http.StatusOK, code)
		var m map[string]liveCounts
		require.NoError(t, json.Unmarshal([]byte(body), &m))
		return m
	}
	require.Equal(t, "–", read()["orders"].Send, "no rate before two looks")
	wtSend(t, qs.orders, 10)
	qs.clk.Advance(2 * time.Second)
	m := read()
	require.Equal(t, "5.0/s", m["orders"].Send, "10 sends in 2 seconds")
	require.Equal(t, "10", m["orders"].Visible)
	require.Equal(t, "2.0s", m["orders"].Oldest)
	require.Equal(t, "10", m[""].Visible, "the totals")
	wtSend(t, qs.orders, 10)
	qs.clk.Advance(time.Second / 2)
	require.Equal(t, "5.0/s", read()["orders"].Send, "within a second of the last look: its rate")
}

// Paging through 10,000 messages with the Next links visits each once, in order.
func TestPagingLinks(t *testing.T) {
	t.Parallel()
	qs, h := wtSetup(t)
	wtSend(t, qs.orders, 1234)
	c := &wtClient{t: t, h: h}
	path, pages, seen := "queue?q=orders&n=500", 0, 0
	for path != "" {
		code, body := c.get(strings.ReplaceAll(path, "&amp;", "&"))
		require.Equal(t, http.StatusOK, code, body)
		pages++
		seen += strings.Count(body, "<details>")
		path = ""
		if i := strings.Index(body, `rel="next"`); i >= 0 {
			j := strings.LastIndex(body[:i], `href="`)
			path = body[j+6 : i-2]
		}
	}
	require.Equal(t, 3, pages)
	require.Equal(t, 1234, seen)
}

// The console over durable queues: what it sends is stored, and a cursor it gave still pages once the
// store is opened again.
func TestDurableQueues(t *testing.T) {
	t.Parallel()
	disk := storagetest.NewDisk()
	open := func() (*fifoq.Store, *fifoq.Queue) {
		eng, err := disk.Open()
		require.NoError(t, err)
		s, err := fifoq.OpenStore(eng, "memory")
		require.NoError(t, err)
		st := s
		q, err := fifoq.New("kept.fifo", fifoq.WithStore(st), fifoq.WithContentBasedDeduplication())
		require.NoError(t, err)
		return st, q
	}
	st, q := open()
	c := &wtClient{t: t, h: New(Queues(q))}
	for i := range 5 {
		w := c.post("send?q=kept.fifo", url.Values{"body": {fmt.Sprintf("kept %d", i)}, "group": {"g"}}, true)
		require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	}
	code, body := c.get("queue?q=kept.fifo&n=2")
	require.Equal(t, http.StatusOK, code)
	i := strings.Index(body, `rel="next"`)
	require.Positive(t, i, "a next page")
	next := strings.ReplaceAll(body[strings.LastIndex(body[:i], `href="`)+6:i-2], "&amp;", "&")
	require.NoError(t, st.Close())

	st, q = open()
	defer st.Close()
	require.Equal(t, fifoq.Stats{Visible: 5}, q.Stats(), "the sends were stored")
	c.h = New(Queues(q))
	code, body = c.get(next)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, "kept 2")
	require.Contains(t, body, "kept 3")
	require.NotContains(t, body, "kept 1")
}

// Close ends the redrives the console started, before a service closes its store.
func TestCloseEndsRedrives(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	qs, h := wtSetup(t)
	c := &wtClient{t: t, h: h}
	wtSend(t, qs.orders, 5)
	for range 2 {
		_, err := qs.orders.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10, NoVisibilityTimeout: true})
		require.NoError(t, err)
	}
	require.Equal(t, 5, qs.dlq.Stats().Visible)
	require.Equal(t, http.StatusSeeOther, c.post("redrive?q=orders-dlq", url.Values{"rate": {"1"}}, true).Code)
	require.NoError(t, h.Close())
	st := qs.dlq.MoveTasks()[0]
	require.Equal(t, fifoq.MoveTaskCancelled, st.State, "the manual clock never moves: cancelled after the first batch")
	require.Less(t, st.Moved, 5)
	require.NoError(t, h.Close(), "again")
}

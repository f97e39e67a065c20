package browsertest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/fifoqweb"
)

// browser returns the path of a Chromium to drive: $FIFOQ_CHROMIUM, else the first of the usual names on
// $PATH. The tests skip, saying why, when there is none.
func browser(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("FIFOQ_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium on this machine (install Debian's chromium, or set FIFOQ_CHROMIUM): the console's browser tests cannot run")
	return ""
}

// newBrowser starts a headless Chromium with a profile of its own and returns a tab's context.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser(t)),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, 5*time.Minute)
	t.Cleanup(cancelTimeout)
	require.NoError(t, chromedp.Do(ctx), "start Chromium")
	return ctx
}

// btQueues are the queues of the console under test.
type btQueues struct {
	orders, dlq, jobs *fifoq.Queue
}

func btSetup(t *testing.T) btQueues {
	t.Helper()
	ctx := context.Background()
	dlq, err := fifoq.New("orders-dlq")
	require.NoError(t, err)
	orders, err := fifoq.New("orders", fifoq.WithVisibilityTimeout(time.Hour))
	require.NoError(t, err)
	a := orders.Attributes()
	a.DeadLetterQueue, a.MaxReceiveCount = dlq, 2
	require.NoError(t, orders.SetAttributes(a))
	jobs, err := fifoq.New("jobs.fifo", fifoq.WithVisibilityTimeout(10*time.Minute), fifoq.WithContentBasedDeduplication())
	require.NoError(t, err)
	for i := range 6 {
		_, err := orders.Send(ctx, fifoq.Message{Body: fmt.Sprintf(`{"order":%d,"total":"%d.99"}`, 1000+i, 10+i),
			Attributes: map[string]fifoq.Attribute{"tenant": {DataType: "String", StringValue: "acme"}}})
		require.NoError(t, err)
	}
	for i := range 9 {
		_, err := jobs.Send(ctx, fifoq.Message{Body: fmt.Sprintf("resize image %d", i), GroupID: fmt.Sprintf("user-%d", i%3)})
		require.NoError(t, err)
	}
	// Two orders fail twice and land in the dead-letter queue; one group of jobs is stuck in flight.
	for range 2 {
		ds, err := orders.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 2, NoVisibilityTimeout: true})
		require.NoError(t, err)
		require.Len(t, ds, 2)
	}
	_, err = orders.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 2, NoVisibilityTimeout: true}) // moves them
	require.NoError(t, err)
	_, err = jobs.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 1})
	require.NoError(t, err)
	return btQueues{orders, dlq, jobs}
}

// serve mounts the console of qs under /console/ and, read-only, under /ro/, and returns the server's URL.
func serve(t *testing.T, qs ...*fifoq.Queue) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/console/", http.StripPrefix("/console", fifoqweb.New(fifoqweb.Queues(qs...))))
	mux.Handle("/ro/", http.StripPrefix("/ro", fifoqweb.New(fifoqweb.Queues(qs...), fifoqweb.WithReadOnly(true))))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// text returns the text of the first element sel matches.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	require.NoError(t, err, "text of %s", sel)
	return s
}

// confirm submits the form of the button sel matches, then says yes on the confirmation page, and returns
// the text of the page it lands on.
func confirm(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(sel)),
		chromedp.WaitVisible(chromedp.CSS(`form.confirm button`)),
	), "submit %s", sel)
	what := text(t, ctx, `form.confirm p`)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`form.confirm button`)),
		chromedp.WaitNotPresent(chromedp.CSS(`form.confirm`)),
		chromedp.WaitVisible(chromedp.CSS(`body > main h1`)),
	))
	return what
}

func TestConsoleInBrowser(t *testing.T) {
	ctx := newBrowser(t)
	qs := btSetup(t)
	base := serve(t, qs.orders, qs.dlq, qs.jobs) + "/console/"

	// List: every queue, with its counts, its dead-letter queue and its sources.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(base), chromedp.WaitVisible(chromedp.CSS(`table`))))
	table := text(t, ctx, `table`)
	for _, want := range []string{"orders", "orders-dlq", "jobs.fifo", "FIFO", "standard", "after 2 receives"} {
		require.Contains(t, table, want)
	}
	require.Equal(t, "4", text(t, ctx, `[data-q="orders"][data-f="visible"]`))
	require.Equal(t, "2", text(t, ctx, `[data-q="orders-dlq"][data-f="visible"]`))

	// Live counts: a send elsewhere shows without a reload.
	_, err := qs.orders.Send(context.Background(), fifoq.Message{Body: "late order"})
	require.NoError(t, err)
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](
		`document.querySelector('[data-q="orders"][data-f="visible"]').textContent === "5"`,
		chromedp.WithPollingTimeout(30*time.Second)))
	require.NoError(t, err, "the count refreshes without a reload")

	// Peek: the FIFO queue's messages and its blocked group, and looking changed nothing.
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`a[href="queue?q=jobs.fifo"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#blocked-h`))))
	blocked := text(t, ctx, `section[aria-labelledby="blocked-h"] table`)
	require.Contains(t, blocked, "user-0")
	require.Contains(t, blocked, "resize image 0")
	require.Contains(t, text(t, ctx, `table.messages`), "resize image 8")
	require.Equal(t, fifoq.Stats{Visible: 8, InFlight: 1}, qs.jobs.Stats(), "peeking changes nothing")
	if path := os.Getenv("FIFOQ_SCREENSHOT"); path != "" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, png, 0o644))
		t.Logf("screenshot of the jobs.fifo page written to %s (%d bytes)", path, len(png))
	}

	// Release the stuck group: its in-flight message becomes visible.
	what := confirm(t, ctx, `section[aria-labelledby="blocked-h"] form[action^="visibility"] button`)
	require.Contains(t, what, "visible now")
	require.Equal(t, "Visibility changed.", text(t, ctx, `p.done`))
	require.Equal(t, fifoq.Stats{Visible: 9}, qs.jobs.Stats())

	// Send, with a group and an attribute.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#body`), "from the browser"),
		chromedp.SendKeys(chromedp.CSS(`#group`), "user-9"),
		chromedp.SendKeys(chromedp.CSS(`input[name="attr1_name"]`), "source"),
		chromedp.SendKeys(chromedp.CSS(`input[name="attr1_value"]`), "console"),
	))
	what = confirm(t, ctx, `form.send button`)
	require.Contains(t, what, `Send a message of 16 bytes to jobs.fifo, group "user-9", with 1 attributes.`)
	require.Equal(t, "Message sent.", text(t, ctx, `p.done`))
	var last fifoq.Snapshot
	for s := range qs.jobs.Messages() {
		last = s
	}
	require.Equal(t, "from the browser", last.Body)
	require.Equal(t, "console", last.Attributes["source"].StringValue)

	// Redrive the dead-letter queue back to orders, and watch it end.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(base+"queue?q=orders-dlq"), chromedp.WaitVisible(chromedp.CSS(`#redrive-h`))))
	what = confirm(t, ctx, `form[action^="redrive"] button`)
	require.Contains(t, what, "Move the 2 visible messages of orders-dlq back to the queues they came from")
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](
		`document.querySelector('[data-q="orders-dlq"][data-f="task"]').textContent.startsWith("redrive completed: 2 of 2")`,
		chromedp.WithPollingTimeout(30*time.Second)))
	require.NoError(t, err, "the redrive's status refreshes")
	require.Equal(t, 7, qs.orders.Stats().Visible)

	// Purge, and the 60-second rule's refusal.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(base+"queue?q=orders"), chromedp.WaitVisible(chromedp.CSS(`#purge-h`))))
	what = confirm(t, ctx, `form[action^="purge"] button`)
	require.Contains(t, what, "Purge orders: delete all its 7 messages")
	require.Equal(t, "Queue purged.", text(t, ctx, `p.done`))
	require.Equal(t, fifoq.Stats{}, qs.orders.Stats())
	confirm(t, ctx, `form[action^="purge"] button`)
	require.Contains(t, text(t, ctx, `p.error`), "only one PurgeQueue operation")

	// Read-only: no forms, and a POST is refused.
	_, err = qs.orders.Send(context.Background(), fifoq.Message{Body: "kept"})
	require.NoError(t, err)
	ro := strings.Replace(base, "/console/", "/ro/", 1)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(ro+"queue?q=orders"), chromedp.WaitVisible(chromedp.CSS(`table.messages`))))
	forms, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('form[method="post"]').length`))
	require.NoError(t, err)
	status, err := chromedp.Run(ctx, chromedp.Evaluate[int](`fetch("purge?q=orders", {method: "POST"}).then(r => r.status)`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	require.Zero(t, forms, "read-only pages offer no action")
	require.Equal(t, http.StatusForbidden, status)
	require.Equal(t, fifoq.Stats{Visible: 1}, qs.orders.Stats())
}

// A queue of a million messages pages in the browser: the first page, the next ones through their links,
// and a filter that finds the few in-flight messages among them. The times are logged, not asserted.
func TestConsoleMillionMessages(t *testing.T) {
	ctx := newBrowser(t)
	big, err := fifoq.New("big")
	require.NoError(t, err)
	const n = 1_000_000
	batch := make([]fifoq.Message, 10)
	for i := 0; i < n; i += len(batch) {
		for j := range batch {
			batch[j] = fifoq.Message{Body: "message " + strconv.Itoa(i+j)}
		}
		_, err := big.SendBatch(context.Background(), batch)
		require.NoError(t, err)
	}
	_, err = big.Receive(context.Background(), fifoq.ReceiveOptions{MaxMessages: 3})
	require.NoError(t, err)
	base := serve(t, big) + "/console/"

	timed := func(what string, actions ...chromedp.Action[chromedp.Void]) time.Duration {
		t.Helper()
		start := time.Now()
		require.NoError(t, chromedp.Do(ctx, actions...), what)
		d := time.Since(start)
		t.Logf("%s: %v", what, d)
		return d
	}
	timed("first page of 1,000,000 (50 messages)", chromedp.Navigate(base+"queue?q=big"), chromedp.WaitVisible(chromedp.CSS(`table.messages`)))
	first := text(t, ctx, `table.messages tbody tr:first-child`)
	require.Contains(t, first, "message 0")
	require.Contains(t, first, "in flight", "the three received are in flight")
	for i := range 5 {
		timed(fmt.Sprintf("next page %d", i+2), chromedp.Click(chromedp.CSS(`a[rel="next"]`)), chromedp.WaitVisible(chromedp.CSS(`table.messages`)))
	}
	require.Contains(t, text(t, ctx, `table.messages tbody tr:first-child`), "message 250")
	// The server's part, without the browser: a page of 50 from the middle of the queue, by its cursor.
	_, mid, err := big.MessagesAfter("", 1000, fifoq.MessageFilter{})
	require.NoError(t, err)
	for range n / 2 / 1000 {
		_, mid, err = big.MessagesAfter(mid, 1000, fifoq.MessageFilter{})
		require.NoError(t, err)
	}
	start := time.Now()
	resp, err := http.Get(base + "queue?q=big&after=" + mid)
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	t.Logf("the server alone, a page of 50 from the middle: %v", time.Since(start))
	timed("a page of 500", chromedp.Navigate(base+"queue?q=big&n=500"), chromedp.WaitVisible(chromedp.CSS(`table.messages`)))
	timed("the in-flight messages among 1,000,000", chromedp.Navigate(base+"queue?q=big&state=inflight"), chromedp.WaitVisible(chromedp.CSS(`table.messages`)))
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('table.messages tbody tr').length`))
	require.NoError(t, err)
	require.Equal(t, 3, rows)
	require.Equal(t, fifoq.Stats{Visible: n - 3, InFlight: 3}, big.Stats())
}

package browsertest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
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

// newBrowser starts a headless Chromium with a profile of its own and returns a tab's context. Nothing the
// tests wait for has a deadline of its own: each wait ends on an event of the page (a load, an element that
// appears, a script's condition that turns true), however slow the machine; go test's -timeout is the only
// bound.
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
		chromedp.WSURLReadTimeout(noDeadline), // chromedp's default: 20 s for Chromium to start
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	require.NoError(t, chromedp.Do(ctx), "start Chromium")
	return ctx
}

// noDeadline stands for no time limit where chromedp wants one.
const noDeadline = 100 * 365 * 24 * time.Hour

// waitJS waits until the script cond is true in the page, however long that takes. A navigation under way
// ends the page the script polls in: it polls again in the next.
func waitJS(t *testing.T, ctx context.Context, cond string) {
	t.Helper()
	for {
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(0)))
		if err != nil && ctx.Err() == nil && (strings.Contains(err.Error(), "Cannot find context") ||
			strings.Contains(err.Error(), "context was destroyed") || strings.Contains(err.Error(), "target navigated")) {
			continue
		}
		require.NoError(t, err, "wait for %s", cond)
		return
	}
}

// clickAndWait clicks what sel matches and waits for the page it leads to to load.
func clickAndWait(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.fifoqOld = true`))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel))), "click %s", sel)
	waitJS(t, ctx, `!window.fifoqOld && document.readyState === "complete"`)
}

// shot writes a screenshot of the whole page to $FIFOQ_SCREENSHOTS/name, when that names a directory (the
// pictures of docs/console.md: FIFOQ_SCREENSHOTS=docs).
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("FIFOQ_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot %s (%d bytes)", path, len(png))
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
	rw, ro := fifoqweb.New(fifoqweb.Queues(qs...)), fifoqweb.New(fifoqweb.Queues(qs...), fifoqweb.WithReadOnly(true))
	t.Cleanup(func() { _, _ = rw.Close(), ro.Close() })
	mux.Handle("/console/", http.StripPrefix("/console", rw))
	mux.Handle("/ro/", http.StripPrefix("/ro", ro))
	srv := newServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// newServer starts a test server of h on 127.0.0.1.
func newServer(h http.Handler) *httptest.Server { return httptest.NewServer(h) }

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
	waitJS(t, ctx, `document.querySelector('[data-q="orders"][data-f="visible"]').textContent === "5"`) // without a reload

	// Peek: the FIFO queue's messages and its blocked group, and looking changed nothing.
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`a[href="queue?q=jobs.fifo"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#blocked-h`))))
	blocked := text(t, ctx, `section[aria-labelledby="blocked-h"] table`)
	require.Contains(t, blocked, "user-0")
	require.Contains(t, blocked, "resize image 0")
	require.Contains(t, text(t, ctx, `table.messages`), "resize image 8")
	require.Equal(t, fifoq.Stats{Visible: 8, InFlight: 1}, qs.jobs.Stats(), "peeking changes nothing")
	shot(t, ctx, "console.png")

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
	waitJS(t, ctx, `document.querySelector('[data-q="orders-dlq"][data-f="task"]').textContent.startsWith("redrive completed: 2 of 2")`)
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

package browsertest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/fifoqweb"
)

// fill sends n messages, "message 0" to "message n-1", to q from 4 goroutines in batches of 10 (n a multiple
// of 40), and returns the id of each.
func fill(t *testing.T, q *fifoq.Queue, n int) []string {
	t.Helper()
	ids := make([]string, n)
	const senders = 4
	per := n / senders
	var wg sync.WaitGroup
	errs := make(chan error, senders)
	for g := range senders {
		wg.Go(func() {
			batch := make([]fifoq.Message, 10)
			for i := g * per; i < (g+1)*per; i += len(batch) {
				for j := range batch {
					batch[j] = fifoq.Message{Body: "message " + strconv.Itoa(i+j)}
				}
				rs, err := q.SendBatch(context.Background(), batch)
				if err != nil {
					errs <- err
					return
				}
				for j, r := range rs {
					ids[i+j] = r.MessageID
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	require.NoError(t, <-errs)
	return ids
}

// consoleManyMessages: a queue of n messages pages in the browser (the first page, the next ones through
// their links, a page of 500, a filter that finds the 3 in-flight messages among them), and its search finds
// a message by its id and by its body, without receiving. The times are logged, not asserted: the test waits
// for each page, however long it takes.
func consoleManyMessages(t *testing.T, n int) {
	ctx := newBrowser(t)
	// On a clock of its own: the three received stay in flight however long the browser takes (on the real
	// clock, their 30 s visibility timeout ran out beside 8 CPU-bound processes).
	big, err := fifoq.New("big", fifoq.WithClock(fifoq.NewManualClock(btStart)))
	require.NoError(t, err)
	start := time.Now()
	ids := fill(t, big, n)
	t.Logf("%d messages sent in %v", n, time.Since(start))
	_, err = big.Receive(context.Background(), fifoq.ReceiveOptions{MaxMessages: 3})
	require.NoError(t, err)
	h := fifoqweb.New(fifoqweb.Queues(big), fifoqweb.WithSearchLimits(2*n, 0)) // no time bound: the test may run slow
	t.Cleanup(func() { _ = h.Close() })
	mux := http.NewServeMux()
	mux.Handle("/console/", http.StripPrefix("/console", h))
	base := serveMux(t, mux) + "/console/"

	timed := func(what string, actions ...chromedp.Action[chromedp.Void]) time.Duration {
		t.Helper()
		start := time.Now()
		require.NoError(t, chromedp.Do(ctx, actions...), what)
		d := time.Since(start)
		t.Logf("%s: %v", what, d)
		return d
	}
	timed(fmt.Sprintf("first page of %d (50 messages)", n), chromedp.Navigate(base+"queue?q=big"), chromedp.WaitVisible(chromedp.CSS(`table.messages`)))
	first := text(t, ctx, `table.messages tbody tr:first-child`)
	require.Contains(t, first, "message ")
	require.Contains(t, first, "in flight", "the three received are in flight")
	for i := range 5 {
		start := time.Now()
		clickAndWait(t, ctx, `a[rel="next"]`)
		t.Logf("next page %d: %v", i+2, time.Since(start))
	}
	require.Contains(t, text(t, ctx, `table.messages tbody tr:first-child`), "message ")
	// The server's part, without the browser: a page of 50 from the middle of the queue, by its cursor.
	_, mid, err := big.MessagesAfter("", 1000, fifoq.MessageFilter{})
	require.NoError(t, err)
	for range n / 2 / 1000 {
		_, mid, err = big.MessagesAfter(mid, 1000, fifoq.MessageFilter{})
		require.NoError(t, err)
	}
	start = time.Now()
	resp, err := http.Get(base + "queue?q=big&after=" + mid)
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	t.Logf("the server alone, a page of 50 from the middle: %v", time.Since(start))
	timed("a page of 500", chromedp.Navigate(base+"queue?q=big&n=500"), chromedp.WaitVisible(chromedp.CSS(`table.messages`)))
	timed(fmt.Sprintf("the in-flight messages among %d", n), chromedp.Navigate(base+"queue?q=big&state=inflight"), chromedp.WaitVisible(chromedp.CSS(`table.messages`)))
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('table.messages tbody tr').length`))
	require.NoError(t, err)
	require.Equal(t, 3, rows)

	// Search, from the queue's page: the last message sent by the last sender, by its id and by its body.
	// The 4 senders interleave, so it is among the last ones of the queue: nearly every message is looked at.
	want := ids[n-1]
	before := big.Metrics()
	for _, by := range []struct{ by, v string }{{"id", want}, {"body", "message " + strconv.Itoa(n-1)}} {
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(base+"queue?q=big"), chromedp.WaitVisible(chromedp.CSS(`form.search`)),
			chromedp.SetValue(chromedp.CSS(`form.search select[name="by"]`), by.by),
			chromedp.SendKeys(chromedp.CSS(`form.search input[name="v"]`), by.v)))
		start := time.Now()
		clickAndWait(t, ctx, `form.search button`)
		t.Logf("search by %s among %d messages, in the browser: %v; the page says %q", by.by, n, time.Since(start),
			text(t, ctx, `p[role="status"]`))
		require.Equal(t, want, text(t, ctx, `table.results tbody th code`), by.by)
		require.Contains(t, text(t, ctx, `p[role="status"]`), "1 found among")
		if by.by == "body" {
			shot(t, ctx, "console-search.png")
		}
	}
	after := big.Metrics()
	require.Equal(t, before.Counters, after.Counters, "searching receives nothing")
	require.Equal(t, fifoq.Stats{Visible: n - 3, InFlight: 3}, big.Stats())
}

// serveMux serves mux on a test server and returns its URL.
func serveMux(t *testing.T, mux *http.ServeMux) string {
	t.Helper()
	srv := newServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

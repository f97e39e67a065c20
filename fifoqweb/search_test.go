package fifoqweb

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// found returns the message ids a search page lists, and its link to go on ("" for none).
func found(t *testing.T, body string) (ids []string, next string) {
	t.Helper()
	for _, m := range regexp.MustCompile(`<th scope="row"><code>([^<]*)</code>`).FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	if m := regexp.MustCompile(`<a href="([^"]*)" rel="next">Go on from there</a>`).FindStringSubmatch(body); m != nil {
		next = html.UnescapeString(m[1])
	}
	return ids, next
}

// Search finds messages by id, group id, deduplication id and body, in one queue or in all, and looking
// changes nothing: no receive, no count moves.
func TestSearchFinds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	qs, h := wtSetup(t)
	c := &wtClient{t: t, h: h}
	var ids []string
	for i := range 30 {
		r, err := qs.orders.Send(ctx, fifoq.Message{Body: fmt.Sprintf(`{"order":%d}`, i)})
		require.NoError(t, err)
		ids = append(ids, r.MessageID)
	}
	var fifoIDs []string
	for i := range 12 {
		r, err := qs.fif.Send(ctx, fifoq.Message{Body: fmt.Sprintf("job %d", i), GroupID: "user-" + strconv.Itoa(i%3),
			DeduplicationID: "dedup-" + strconv.Itoa(i)})
		require.NoError(t, err)
		fifoIDs = append(fifoIDs, r.MessageID)
	}
	_, err := qs.orders.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 3})
	require.NoError(t, err)
	before := wtState(qs)

	for _, tc := range []struct {
		name, path string
		want       []string
	}{
		{"id in a queue", "search?q=orders&by=id&v=" + ids[17], ids[17:18]},
		{"id in every queue", "search?by=id&v=" + fifoIDs[5], fifoIDs[5:6]},
		{"an in-flight message by id", "search?by=id&v=" + ids[1], ids[1:2]},
		{"group", "search?q=jobs.fifo&by=group&v=user-1", []string{fifoIDs[1], fifoIDs[4], fifoIDs[7], fifoIDs[10]}},
		{"group in every queue", "search?by=group&v=user-2", []string{fifoIDs[2], fifoIDs[5], fifoIDs[8], fifoIDs[11]}},
		{"dedup", "search?q=jobs.fifo&by=dedup&v=dedup-9", fifoIDs[9:10]},
		{"body", "search?by=body&v=%22order%22:2", append([]string{ids[2]}, ids[20:30]...)},
		{"body in a FIFO queue", "search?q=jobs.fifo&by=body&v=job+1", []string{fifoIDs[1], fifoIDs[10], fifoIDs[11]}},
		{"nothing", "search?by=body&v=nowhere", nil},
	} {
		code, body := c.get(tc.path)
		require.Equal(t, http.StatusOK, code, "%s: %s", tc.name, body)
		got, next := found(t, body)
		require.Equal(t, tc.want, got, tc.name)
		require.Empty(t, next, "%s: it looked at everything", tc.name)
		require.Contains(t, body, fmt.Sprintf("%d found among", len(tc.want)), tc.name)
	}
	require.Equal(t, before, wtState(qs), "searching changes nothing")

	for _, tc := range []struct {
		name, path string
		status     int
		says       string
	}{
		{"unknown kind", "search?by=color&v=x", 400, `search by &#34;color&#34;`},
		{"unknown queue", "search?q=nope&by=id&v=x", 404, `no queue named &#34;nope&#34;`},
		{"group of a standard queue", "search?q=orders&by=group&v=g", 400, "orders is a standard queue"},
		{"bad cursor", "search?q=orders&by=body&v=x&from=orders&after=zzzz", 400, "cursor"},
		{"go on from no queue", "search?by=body&v=x&from=nope", 400, `no queue named &#34;nope&#34; to go on from`},
	} {
		code, body := c.get(tc.path)
		require.Equal(t, tc.status, code, tc.name)
		require.Contains(t, body, tc.says, tc.name)
	}
	code, body := c.get("search")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `role="search"`)
	require.NotContains(t, body, "found among", "no search without a value")
}

// A search stops at its bound of messages, says so, and its link goes on from there, to the end: every
// match once, in order.
func TestSearchBoundedAndGoesOn(t *testing.T) {
	t.Parallel()
	qs, h := wtSetup(t, WithSearchLimits(1000, 0))
	c := &wtClient{t: t, h: h}
	ctx := context.Background()
	batch := make([]fifoq.Message, 10)
	var want []string
	for i := 0; i < 3000; i += 10 {
		for j := range batch {
			batch[j] = fifoq.Message{Body: "m" + strconv.Itoa(i+j)}
		}
		rs, err := qs.orders.SendBatch(ctx, batch)
		require.NoError(t, err)
		for j, r := range rs {
			if strings.Contains(strconv.Itoa(i+j), "7") {
				want = append(want, r.MessageID)
			}
		}
	}
	for i := range 5 {
		r, err := qs.dlq.Send(ctx, fifoq.Message{Body: "d" + strconv.Itoa(i) + "7"})
		require.NoError(t, err)
		want = append(want, r.MessageID)
	}
	path, pages, scanned := "search?by=body&v=7", 0, 0
	var got []string
	for path != "" {
		code, body := c.get(path)
		require.Equal(t, http.StatusOK, code, body)
		pages++
		ids, next := found(t, body)
		got = append(got, ids...)
		if next != "" {
			require.Regexp(t, "Stopped before the end: it (looked at 1000 messages|found 50 messages), its most.", body)
		}
		m := regexp.MustCompile(`among ([\d,]+) messages`).FindStringSubmatch(body)
		require.NotNil(t, m)
		n, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
		require.LessOrEqual(t, n, 1000, "the bound holds")
		scanned += n
		path = next
	}
	require.Equal(t, 3005, scanned, "every message looked at once, over the pages")
	require.Equal(t, want, got, "every match once, in order")
	require.Greater(t, pages, 3)
}

// A search stops at its time bound, by the console's clock, and says so.
func TestSearchTimeBound(t *testing.T) {
	t.Parallel()
	q, err := fifoq.New("big")
	require.NoError(t, err)
	batch := make([]fifoq.Message, 10)
	for i := 0; i < 2000; i += 10 {
		for j := range batch {
			batch[j] = fifoq.Message{Body: "m" + strconv.Itoa(i+j)}
		}
		_, err := q.SendBatch(context.Background(), batch)
		require.NoError(t, err)
	}
	clk := &steppingClock{at: wtStart, step: 300 * time.Millisecond}
	h := New(Queues(q), WithClock(clk), WithSearchLimits(1_000_000, time.Second))
	t.Cleanup(func() { _ = h.Close() })
	c := &wtClient{t: t, h: h}
	code, body := c.get("search?by=body&v=m1999")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "Stopped before the end: it took 1s, its longest.")
	ids, next := found(t, body)
	require.Empty(t, ids)
	require.NotEmpty(t, next)
	for next != "" {
		code, body = c.get(next)
		require.Equal(t, http.StatusOK, code)
		ids, next = found(t, body)
	}
	require.Len(t, ids, 1, "found at last")
}

// A search stops at 50 results, and goes on after the 50th.
func TestSearchResultsBound(t *testing.T) {
	t.Parallel()
	qs, h := wtSetup(t)
	c := &wtClient{t: t, h: h}
	ctx := context.Background()
	var want []string
	for i := range 120 {
		r, err := qs.fif.Send(ctx, fifoq.Message{Body: "x", GroupID: "g", DeduplicationID: strconv.Itoa(i)})
		require.NoError(t, err)
		want = append(want, r.MessageID)
	}
	for _, by := range []string{"group&v=g", "body&v=x"} {
		var got []string
		path := "search?q=jobs.fifo&by=" + by
		for path != "" {
			code, body := c.get(path)
			require.Equal(t, http.StatusOK, code, body)
			ids, next := found(t, body)
			require.LessOrEqual(t, len(ids), maxSearchResults)
			if next != "" {
				require.Contains(t, body, "it found 50 messages, its most")
			}
			got = append(got, ids...)
			path = next
		}
		require.Equal(t, want, got, by)
	}
}

// steppingClock is a clock that moves on by step at each look, as if each took that long; its timers never
// fire.
type steppingClock struct {
	mu   sync.Mutex
	at   time.Time
	step time.Duration
}

func (c *steppingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at.Add(c.step)
	return c.at
}

func (c *steppingClock) AfterFunc(time.Duration, func()) fifoq.Timer { return stoppedTimer{} }

type stoppedTimer struct{}

func (stoppedTimer) Stop() bool               { return false }
func (stoppedTimer) Reset(time.Duration) bool { return false }

// BenchmarkSearchMillion measures a search of a queue of 1,000,000 messages for one of its last: by a
// substring of its body (every message looked at), and by its id (most of them: the 4 senders of the fill
// interleave). docs/console.md states the times.
func BenchmarkSearchMillion(b *testing.B) {
	q, err := fifoq.New("big")
	require.NoError(b, err)
	last := fillMillion(b, q, 1_000_000)
	h := New(Queues(q), WithSearchLimits(2_000_000, 0))
	b.Cleanup(func() { _ = h.Close() })
	for _, tc := range []struct{ name, path string }{
		{"body", "/search?q=big&by=body&v=message+999999"},
		{"id", "/search?q=big&by=id&v=" + last},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				w := httpGet(h, tc.path)
				if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "1 found among ") {
					b.Fatalf("%d: %.300s", w.Code, w.Body.String())
				}
			}
		})
	}
}

// httpGet serves a GET of path.
func httpGet(h http.Handler, path string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	return w
}

// fillMillion sends n messages ("message 0", ...) to q, from 4 goroutines in batches of 10, and returns the
// id of the last.
func fillMillion(tb testing.TB, q *fifoq.Queue, n int) string {
	tb.Helper()
	var wg sync.WaitGroup
	var last atomic.Value
	const senders = 4
	per := n / senders
	for g := range senders {
		wg.Go(func() {
			batch := make([]fifoq.Message, 10)
			for i := g * per; i < (g+1)*per; i += len(batch) {
				for j := range batch {
					batch[j] = fifoq.Message{Body: "message " + strconv.Itoa(i+j)}
				}
				rs, err := q.SendBatch(context.Background(), batch)
				if err != nil {
					panic(err)
				}
				if g == senders-1 && i+len(batch) == (g+1)*per {
					last.Store(rs[len(rs)-1].MessageID)
				}
			}
		})
	}
	wg.Wait()
	return last.Load().(string)
}

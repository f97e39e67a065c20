package fifoqweb

import (
	"context"
	"errors"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/topic"
)

// crawl follows every link of the console from its first page, and returns the pages reached (by path)
// and, for each page, the links of its header.
func crawl(t *testing.T, c *wtClient) (pages map[string]bool, headers map[string][]string) {
	t.Helper()
	pages, headers = map[string]bool{}, map[string][]string{}
	href := regexp.MustCompile(`href="([^"]*)"`)
	nav := regexp.MustCompile(`(?s)<nav aria-label="Console">(.*?)</nav>`)
	seen := map[string]bool{}
	todo := []string{""}
	for len(todo) > 0 {
		path := todo[0]
		todo = todo[1:]
		if seen[path] || len(seen) > 200 {
			continue
		}
		seen[path] = true
		code, body := c.get(path)
		require.Equal(t, http.StatusOK, code, "%q: a link leads to an error: %s", path, body)
		page, _, _ := strings.Cut(path, "?")
		if strings.HasSuffix(page, ".css") || strings.HasSuffix(page, ".js") {
			continue
		}
		pages[page] = true
		m := nav.FindStringSubmatch(body)
		require.NotNil(t, m, "%q has the header's navigation", path)
		var links []string
		for _, l := range href.FindAllStringSubmatch(m[1], -1) {
			links = append(links, l[1])
		}
		headers[path] = links
		for _, l := range href.FindAllStringSubmatch(body, -1) {
			u := html.UnescapeString(l[1])
			if strings.Contains(u, "://") || strings.HasPrefix(u, "#") || strings.Contains(u, "after=") {
				continue
			}
			todo = append(todo, strings.TrimPrefix(u, "./"))
		}
	}
	return pages, headers
}

// navSetup returns a catalogue's console with a queue of each kind, a topic and a redrive, and its routes.
func navSetup(t *testing.T, opts ...Option) *wtClient {
	t.Helper()
	cat, _, c := stCatalog(t, opts...)
	_, err := cat.CreateTopic(context.Background(), catalog.Namespace{}, "alerts", catalog.TopicDefinition{})
	require.NoError(t, err)
	return c
}

// Every page the console serves is reached by links from its first page, and every page's header links
// the same pages: all those of the console's top level.
func TestEveryPageLinked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		c     *wtClient
		pages []string // every HTML page the console serves
	}{
		{"catalogue", navSetup(t), []string{"", "queue", "settings", "newqueue", "topics", "topic", "newtopic", "search", "server"}},
		{"catalogue, read-only", navSetup(t, WithReadOnly(true)), []string{"", "queue", "settings", "topics", "topic", "search", "server"}},
		{"program's queues and topics", plainWithTopics(t), []string{"", "queue", "settings", "topics", "topic", "search", "server"}},
		{"program's queues", func() *wtClient { _, h := wtSetup(t); return &wtClient{t: t, h: h} }(), []string{"", "queue", "settings", "search", "server"}},
	} {
		pages, headers := crawl(t, tc.c)
		got := slices.Sorted(func(yield func(string) bool) {
			for p := range pages {
				if !yield(p) {
					return
				}
			}
		})
		want := slices.Clone(tc.pages)
		slices.Sort(want)
		require.Equal(t, want, got, tc.name)
		var first []string
		for path, links := range headers {
			if first == nil {
				first = links
			}
			require.Equal(t, first, links, "%s: the header of %q", tc.name, path)
		}
		wantNav := []string{"./", "search", "server"}
		if slices.Contains(tc.pages, "topics") {
			wantNav = []string{"./", "topics", "search", "server"}
		}
		require.Equal(t, wantNav, first, tc.name)
	}
}

func plainWithTopics(t *testing.T) *wtClient {
	alerts, err := topic.New("alerts")
	require.NoError(t, err)
	qs, _ := wtSetup(t)
	h := New(Queues(qs.orders, qs.dlq, qs.fif), WithClock(qs.clk), WithTopics(func() map[string]*topic.Topic { return map[string]*topic.Topic{"alerts": alerts} }))
	t.Cleanup(func() { _ = h.Close() })
	return &wtClient{t: t, h: h}
}

// Every change of the console, old and new, is refused in read-only mode, without the form's token, and
// from another site, and changes nothing.
func TestEveryActionGuarded(t *testing.T) {
	t.Parallel()
	forms := map[string]url.Values{
		"send?q=orders":            {"body": {"x"}},
		"purge?q=orders":           {},
		"delete?q=orders":          {"handle": {"x"}},
		"visibility?q=orders":      {"handle": {"x"}, "timeout": {"0"}},
		"redrive?q=orders-dlq":     {},
		"cancel?q=orders-dlq":      {"task": {"x"}},
		"createqueue":              {"name": {"new"}, "type": {"standard"}},
		"updatequeue?q=orders":     {"VisibilityTimeout": {"5"}},
		"deletequeue?q=orders-dlq": {},
		"createtopic":              {"name": {"new"}, "type": {"standard"}},
		"subscribe":                {"topic": {"alerts"}, "queue": {"orders"}},
		"publish":                  {"topic": {"alerts"}, "message": {"x"}},
	}
	paths := regexp.MustCompile(`^POST /(\w+)$`)
	var routes []string
	for name := range actions {
		routes = append(routes, name)
	}
	routes = append(routes, "createqueue", "updatequeue", "deletequeue", "createtopic", "subscribe", "publish")
	for _, r := range routes {
		found := false
		for p := range forms {
			found = found || strings.HasPrefix(p, r+"?") || p == r
		}
		require.True(t, found, "a form of every POST route: %s", r)
		require.True(t, paths.MatchString("POST /"+r))
	}
	state := func(cat *catalog.Catalog) any {
		type all struct {
			Defs   map[string]catalog.Definition
			Topics map[string][]string
			Stats  []fifoq.Stats
		}
		a := all{catState(cat), topicState(cat), nil}
		for _, q := range cat.Queues() {
			a.Stats = append(a.Stats, q.Stats())
		}
		if tp, ok := cat.Topic(catalog.Namespace{}, "alerts"); ok {
			a.Stats = append(a.Stats, fifoq.Stats{Visible: int(tp.Metrics().Published)})
		}
		return a
	}
	setup := func(opts ...Option) (*catalog.Catalog, *wtClient) {
		cat, _, c := stCatalog(t, opts...)
		_, err := cat.CreateTopic(context.Background(), catalog.Namespace{}, "alerts", catalog.TopicDefinition{})
		require.NoError(t, err)
		q, _ := cat.Queue(catalog.Namespace{}, "orders")
		_, err = q.Send(context.Background(), fifoq.Message{Body: "kept"})
		require.NoError(t, err)
		return cat, c
	}

	cat, c := setup(WithReadOnly(true))
	before := state(cat)
	for path, form := range forms {
		w := c.post(path, form, true)
		require.Equal(t, http.StatusForbidden, w.Code, path)
		require.Contains(t, w.Body.String(), "the console is read-only", path)
	}
	require.Equal(t, before, state(cat), "read-only: nothing changed")
	for _, path := range []string{"newqueue", "newtopic"} {
		code, _ := c.get(path)
		require.Equal(t, http.StatusForbidden, code, path)
	}
	_, body := c.get("settings?q=orders")
	require.NotContains(t, body, `<form method="post"`)

	cat, c = setup()
	before = state(cat)
	c.get("")
	for path, form := range forms {
		for _, how := range []string{"no token", "wrong token", "cross-site"} {
			f := url.Values{"confirm": {"yes"}}
			for k, v := range form {
				f[k] = v
			}
			if how == "wrong token" {
				f.Set("csrf", strings.Repeat("1", 32))
			}
			r := httptest.NewRequest(http.MethodPost, "/"+path, strings.NewReader(f.Encode()))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.AddCookie(&http.Cookie{Name: csrfCookie, Value: c.csrf})
			if how == "cross-site" {
				f.Set("csrf", c.csrf)
				r = httptest.NewRequest(http.MethodPost, "/"+path, strings.NewReader(f.Encode()))
				r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				r.AddCookie(&http.Cookie{Name: csrfCookie, Value: c.csrf})
				r.Header.Set("Sec-Fetch-Site", "cross-site")
			}
			w := httptest.NewRecorder()
			c.h.ServeHTTP(w, r)
			require.Equal(t, http.StatusForbidden, w.Code, "%s: %s", path, how)
		}
		w := c.post(path, form, false)
		require.NotEqual(t, http.StatusSeeOther, w.Code, "%s: not confirmed, not done", path)
	}
	require.Equal(t, before, state(cat), "refused or not confirmed: nothing changed")
}

// The server page shows what WithServerInfo gives (version, uptime, store, listeners), the mappings and
// every queue's redrives, running ones first.
func TestServerPage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := fifoq.NewManualClock(wtStart)
	started := wtStart.Add(-90 * time.Minute)
	var storeErr error
	info := func() ServerInfo {
		return ServerInfo{Version: "fifoq v9.9.9", Started: started,
			Store: &StoreInfo{Path: "/var/lib/fifoq", Sync: "every 100ms",
				Health: fifoq.StoreHealth{Syncs: 42, DiskBytes: 3 << 20, Err: storeErr}},
			Listeners: []Listener{{"SQS and SNS API", "http://127.0.0.1:9324"}, {"console", "http://127.0.0.1:9325/"}}}
	}
	dlq, err := fifoq.New("orders-dlq", fifoq.WithClock(clk))
	require.NoError(t, err)
	src, err := fifoq.New("orders", fifoq.WithClock(clk), fifoq.WithDeadLetterQueue(dlq, 1))
	require.NoError(t, err)
	wtSend(t, src, 3)
	for range 2 {
		_, err := src.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10, NoVisibilityTimeout: true})
		require.NoError(t, err)
	}
	done, err := dlq.StartMoveTask(ctx, nil, 0)
	require.NoError(t, err)
	require.NoError(t, done.Wait(ctx))
	wtSend(t, src, 2)
	for range 2 {
		_, err := src.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10, NoVisibilityTimeout: true})
		require.NoError(t, err)
	}
	running, err := dlq.StartMoveTask(ctx, nil, 1) // a message a second: the manual clock keeps it running
	require.NoError(t, err)
	t.Cleanup(func() { _ = running.Cancel() })
	h := New(Queues(src, dlq), WithClock(clk), WithServerInfo(info), WithMappings(func() []MappingView {
		return []MappingView{{Queue: "orders", FunctionURL: "http://127.0.0.1:9000/fn", Enabled: true, Invocations: 7}}
	}))
	t.Cleanup(func() { _ = h.Close() })
	c := &wtClient{t: t, h: h}
	code, body := c.get("server")
	require.Equal(t, http.StatusOK, code, body)
	for _, want := range []string{"fifoq v9.9.9", "1h30m", "/var/lib/fifoq", "3.0 MiB", "every 100ms", "working", "42",
		"SQS and SNS API", "http://127.0.0.1:9324", "http://127.0.0.1:9000/fn", "polling", ">7<", `aria-current="page">Server`} {
		require.Contains(t, body, want)
	}
	i, j := strings.Index(body, "redrive running"), strings.Index(body, "redrive completed: 3 of 3 moved")
	require.True(t, i > 0 && j > i, "the running redrive first: %s", body)
	storeErr = errors.New("fifoq: store failed: /var/lib/fifoq: no space left on device")
	_, body = c.get("server")
	require.Contains(t, body, `class="error" role="alert">fifoq: store failed: /var/lib/fifoq: no space left on device`)

	// Without WithServerInfo: the console's own start, no store, no listeners.
	h2 := New(Queues(src), WithClock(clk), WithVersion("app 1.2"))
	t.Cleanup(func() { _ = h2.Close() })
	clk.Advance(2 * time.Minute)
	code, body = (&wtClient{t: t, h: h2}).get("server")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "app 1.2")
	require.Contains(t, body, "2m00s")
	require.Contains(t, body, "None: the queues are in memory")
}

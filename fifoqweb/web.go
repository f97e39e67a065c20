package fifoqweb

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/topic"
)

//go:embed assets
var assets embed.FS

// A Handler is the console: an http.Handler. It is safe for concurrent use. Use New; the zero Handler is
// not usable.
type Handler struct {
	b        backend
	plain    *queuesBackend // b, for New; nil for NewCatalog
	readOnly bool
	maxBody  int64
	mux      *http.ServeMux
	guard    http.Handler
	pages    *template.Template
	version  string // shown in the header of every page; "" for none
	clock    fifoq.Clock
	started  time.Time // when the console was made, by clock
	samp     *sampler  // the charts' series

	// mappings gives the event source mappings of WithMappings; nil: none.
	mappings func() []MappingView
	// publishOpts are WithPublishOptions'.
	publishOpts []topic.PublishOption
	// server gives WithServerInfo's; nil: none.
	server func() ServerInfo
	// The bounds of a search: messages looked at, and time by clock (0: none).
	searchMessages int
	searchTime     time.Duration
	hasTopics      bool // the console has a topics page

	mu    sync.Mutex        // guards the fields below
	rates map[queue]*sample // the counters of each queue at the last look, for its rates
}

// An Option configures a [Handler].
type Option func(*Handler)

// WithReadOnly makes the console show queues and change nothing when on is true: every action returns 403
// Forbidden, and the pages offer none.
func WithReadOnly(on bool) Option { return func(h *Handler) { h.readOnly = on } }

// WithVersion shows v, such as the version of the program that serves the console ("fifoq v0.1.0"), in
// the header of every page. Defaults to none.
func WithVersion(v string) Option { return func(h *Handler) { h.version = v } }

// WithClock sets the clock the console samples its charts by (every 10 seconds) and times its searches
// with. The default is the real clock; a test passes a [fifoq.ManualClock] and advances it.
func WithClock(clk fifoq.Clock) Option { return func(h *Handler) { h.clock = clk } }

// WithSearchLimits bounds each search of the console: it looks at no more than messages messages (default
// 1,000,000) and takes no longer than d by the console's clock (default 2 seconds; 0 for no time limit).
// A search that reaches a bound says so, and offers to go on from where it stopped.
func WithSearchLimits(messages int, d time.Duration) Option {
	return func(h *Handler) { h.searchMessages, h.searchTime = max(messages, 1), max(d, 0) }
}

// WithMaxRequestBytes sets the largest request body an action takes; a larger one is refused with 413
// Request Entity Too Large before any change. Defaults to 1 MiB and 64 KiB: a message of SQS's largest size
// and its attributes, form-encoded.
func WithMaxRequestBytes(n int64) Option { return func(h *Handler) { h.maxBody = n } }

// MoveTasks is the owner of the console's queues' redrives: a server that runs, lists and keeps them, such
// as an sqsapi server. Queues are named as the console names them.
type MoveTasks interface {
	// StartMoveTask starts a redrive of the dead-letter queue source to destination ("" for back to the
	// messages' sources), at rate messages a second (0: as fast as possible), and returns its handle.
	StartMoveTask(ctx context.Context, source, destination string, rate int) (handle string, err error)
	// CancelMoveTask cancels the running redrive of that handle.
	CancelMoveTask(ctx context.Context, handle string) error
	// RunningMoveTask returns the handle of the running redrive of the queue source, or "" when none runs.
	RunningMoveTask(source string) (handle string)
}

// WithMoveTasks makes a console made with [New] start and cancel redrives through m instead of the queues'
// own StartMoveTask: a redrive it starts is then m's, as one started by m's own API is, and the console
// cancels the running redrive of any queue, whoever started it. [Handler.Close] leaves m's redrives running.
// A console made with [NewCatalog] runs its redrives through the catalogue.
func WithMoveTasks(m MoveTasks) Option {
	return func(h *Handler) {
		if h.plain != nil {
			h.plain.owner = m
		}
	}
}

// Queues returns a source of queues for [New] that always gives qs, each under its own name.
func Queues(qs ...*fifoq.Queue) func() map[string]*fifoq.Queue {
	m := make(map[string]*fifoq.Queue, len(qs))
	for _, q := range qs {
		m[q.Name()] = q
	}
	return func() map[string]*fifoq.Queue { return m }
}

// New returns a console over a program's own queues: those that queues returns, called at each request (so
// the set may change), under the names it gives them ([Queues] for a fixed set). Nil queues are skipped. The
// console runs the redrives it starts itself, unless [WithMoveTasks] gives their owner.
func New(queues func() map[string]*fifoq.Queue, opts ...Option) *Handler {
	b := &queuesBackend{all: queues}
	return newHandler(b, b, opts)
}

// NewCatalog returns a console over the queues and topics of cat, the catalogue of a server such as fifoq
// serve: a queue or topic of the catalogue's default namespace under its name, one of another namespace
// under account/region/name. Its redrives are the catalogue's, listed and recorded by it; the topics page
// shows the catalogue's topics and subscriptions.
func NewCatalog(cat *catalog.Catalog, opts ...Option) *Handler {
	return newHandler(&catalogBackend{cat: cat}, nil, opts)
}

func newHandler(b backend, plain *queuesBackend, opts []Option) *Handler {
	h := &Handler{
		b:              b,
		plain:          plain,
		maxBody:        fifoq.MaxMessageSize + 64<<10, // a largest message, and the form around it
		mux:            http.NewServeMux(),
		rates:          make(map[queue]*sample),
		clock:          realClock{},
		searchMessages: defaultSearchMessages,
		searchTime:     defaultSearchTime,
	}
	for _, o := range opts {
		o(h)
	}
	h.started = h.clock.Now()
	if c, ok := b.(*catalogBackend); ok {
		c.publishOpts = h.publishOpts
	} else {
		plain.publishOpts = h.publishOpts
	}
	h.pages = template.Must(template.New("").Funcs(funcs).ParseFS(assets, "assets/*.html"))
	static, _ := fs.Sub(assets, "assets")
	files := http.FileServerFS(static)
	h.mux.Handle("GET /console.js", files)
	h.mux.Handle("GET /console.css", files)
	h.mux.HandleFunc("GET /{$}", h.index)
	h.mux.HandleFunc("GET /queue", h.queuePage)
	h.mux.HandleFunc("GET /counts.json", h.counts)
	h.mux.HandleFunc("GET /chart.svg", h.chartSVG)
	h.mux.HandleFunc("GET /search", h.searchPage)
	h.mux.HandleFunc("GET /server", h.serverPage)
	h.mountSettings() // settings.go
	h.mountTopics()   // topics.go
	for name, act := range actions {
		h.mux.HandleFunc("POST /"+name, func(w http.ResponseWriter, r *http.Request) { h.act(w, r, name, act) })
	}
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.fail(w, r, http.StatusNotFound, "no page "+r.URL.Path+" in the console")
	})
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.fail(w, r, http.StatusForbidden, "cross-origin request refused: use the console's own forms")
	}))
	h.guard = cop.Handler(h.mux)
	h.startSampler()
	return h
}

// realClock is the default clock: the time package's.
type realClock struct{}

func (realClock) Now() time.Time                                  { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) fifoq.Timer { return time.AfterFunc(d, f) }

// ServeHTTP serves the console. Mounted under a prefix, it expects the prefix stripped (http.StripPrefix);
// a request for the prefix without its final slash is redirected to it, so relative links resolve.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "" {
		http.Redirect(w, r, requestPath(r)+"/", http.StatusMovedPermanently)
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'")
	w.Header().Set("Referrer-Policy", "no-referrer")
	h.guard.ServeHTTP(w, r)
}

// Close stops the sampling of the charts, cancels the redrives the console started that still run, and
// waits until they end (a cancelled redrive ends after the batch it has taken). A service calls it before it
// closes the store of durable queues, as it stops its own move tasks. The console goes on serving, its charts
// no longer growing; Close is safe to call again. It returns nil (it is an io.Closer).
func (h *Handler) Close() error {
	h.samp.stop()
	return h.b.close()
}

// requestPath returns the path the client asked for, before any prefix was stripped.
func requestPath(r *http.Request) string {
	if u, err := url.ParseRequestURI(r.RequestURI); err == nil && u.Path != "" {
		return u.Path
	}
	return r.URL.Path
}

// mountPath returns the prefix the console is mounted under, with a final slash, for its cookie.
func mountPath(r *http.Request) string {
	p := requestPath(r)
	if base, ok := strings.CutSuffix(p, r.URL.Path); ok && r.URL.Path != "" {
		return base + "/"
	}
	return "/"
}

// list returns the queues, by name.
func (h *Handler) list() []named { return h.b.queues() }

// errUnknownQueue is the error of a request naming no queue of the console.
var errUnknownQueue = errors.New("unknown queue")

// lookup returns the queue a request names in its q parameter.
func (h *Handler) lookup(r *http.Request) (named, error) {
	name := r.URL.Query().Get("q")
	if n, ok := h.b.lookup(name); ok {
		return n, nil
	}
	if name == "" {
		return named{}, errors.New("no queue named: the q parameter is missing")
	}
	return named{}, errUnknownQueue
}

// A sample is a queue's counters at one look, and the rates worked out at it.
type sample struct {
	at                  time.Time
	c                   fifoq.Counters
	send, receive, dele float64
	rated               bool
}

// minRateWindow is the shortest time over which rates are worked out: looks closer together show the
// rates of the last look.
const minRateWindow = time.Second

// rate returns the send, receive and delete rates of q, a second each, from the change of its counters since
// an earlier look (false before there are two looks far enough apart).
func (h *Handler) rate(q queue, m fifoq.Metrics) (s sample) {
	now := q.Clock().Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	last := h.rates[q]
	if last == nil {
		h.rates[q] = &sample{at: now, c: m.Counters}
		return sample{}
	}
	if d := now.Sub(last.at); d >= minRateWindow {
		secs := d.Seconds()
		*last = sample{
			at:      now,
			c:       m.Counters,
			send:    float64(m.Sent-last.c.Sent) / secs,
			receive: float64(m.Received-last.c.Received) / secs,
			dele:    float64(m.Deleted-last.c.Deleted) / secs,
			rated:   true,
		}
	}
	return *last
}

// forget drops what the handler keeps of queues it no longer has.
func (h *Handler) forget(keep []named) {
	live := make(map[queue]bool, len(keep))
	for _, n := range keep {
		live[n.Q] = true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for q := range h.rates {
		if !live[q] {
			delete(h.rates, q)
		}
	}
}

const csrfCookie = "fifoq_console_csrf"

// csrfToken returns the request's token, setting a new one in a cookie when it has none.
func (h *Handler) csrfToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) == 32 {
		return c.Value
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	tok := hex.EncodeToString(b[:])
	http.SetCookie(w, &http.Cookie{
		Name: csrfCookie, Value: tok, Path: mountPath(r),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	return tok
}

// csrfOK reports whether a form carries the token of its cookie.
func csrfOK(r *http.Request) bool {
	c, err := r.Cookie(csrfCookie)
	if err != nil || len(c.Value) != 32 {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostFormValue("csrf"))) == 1
}

// errorPage is the data of the error page.
type errorPage struct {
	basePage
	Status  int
	Message string
}

// basePage is what every page's layout needs.
type basePage struct {
	Title    string
	ReadOnly bool
	CSRF     string
	Version  string // WithVersion's
	Nav      []navLink
}

// A navLink is a page of the header.
type navLink struct {
	Name, Href string
	Current    bool
}

// The pages of the header, by the name base takes.
const (
	navQueues = "Queues"
	navTopics = "Topics"
	navSearch = "Search"
	navServer = "Server"
)

// plainBase returns the base of a page without a form: the header names every page of the console, current
// the one shown ("" for none).
func (h *Handler) plainBase(title, current string) basePage {
	b := basePage{Title: title, ReadOnly: h.readOnly, Version: h.version}
	pages := []navLink{{navQueues, "./", false}}
	if h.hasTopics {
		pages = append(pages, navLink{navTopics, "topics", false})
	}
	pages = append(pages, navLink{navSearch, "search", false}, navLink{navServer, "server", false})
	for i := range pages {
		pages[i].Current = pages[i].Name == current
	}
	b.Nav = pages
	return b
}

// fail answers with an error page: one line naming the cause.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	p := errorPage{h.plainBase(http.StatusText(status), ""), status, msg}
	h.render(w, r, status, "error", p)
}

// render writes a page.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	var b strings.Builder
	if err := h.pages.ExecuteTemplate(&b, name, data); err != nil {
		http.Error(w, "fifoqweb: page "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte(b.String()))
	}
}

// query returns the relative URL of a console page with parameters (empty ones left out).
func query(page string, kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			v.Set(kv[i], kv[i+1])
		}
	}
	if len(v) == 0 {
		return cmp.Or(page, "./")
	}
	return cmp.Or(page, "./") + "?" + v.Encode()
}

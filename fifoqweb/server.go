package fifoqweb

import (
	"cmp"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/fifoq/fifoq"
)

// The server page: what serves the console (version, uptime, its store and listeners, from WithServerInfo),
// the event source mappings (WithMappings) and the redrives of every queue.

// ServerInfo is what the server page shows of the program that serves the console: [WithServerInfo] gives
// it, asked at each look at the page. A program without one shows the console's own start and version.
type ServerInfo struct {
	// Version is the program's version, such as "fifoq v0.1.0"; "" shows [WithVersion]'s.
	Version string
	// Started is when the program started; the zero time shows when the console was made.
	Started time.Time
	// Store is the store of the program's queues; nil for queues in memory.
	Store *StoreInfo
	// Listeners are the addresses the program serves on.
	Listeners []Listener
}

// StoreInfo is a store as the server page shows it.
type StoreInfo struct {
	// Path is where the store is, such as its directory.
	Path string
	// Sync says when the store syncs its changes to disk, such as "before each acknowledgement" or "every
	// 100ms".
	Sync string
	// Health is the store's health now ([fifoq.Store.Health]): its size on disk, its syncs, its failure.
	Health fifoq.StoreHealth
}

// A Listener is an address the program serves on.
type Listener struct {
	// Name says what is served there, such as "SQS and SNS API", "metrics" or "console".
	Name string
	// Addr is the address, or the URL, it is served on.
	Addr string
}

// WithServerInfo makes the server page show what info returns, called at each look at the page: the
// version, start, store and listeners of the program that serves the console, such as fifoq serve.
func WithServerInfo(info func() ServerInfo) Option { return func(h *Handler) { h.server = info } }

// serverPageData is the data of the server page.
type serverPageData struct {
	basePage
	Version, Go      string
	Started, Uptime  string
	ConsoleStarted   string
	Store            *storeView
	Listeners        []Listener
	Queues, Topics   int
	Messages         int
	Sampled          int // queues whose charts are kept
	SeriesKiB        int // their memory
	Mappings         []serverMapping
	Tasks            []serverTask
	HasMappingSource bool
}

type storeView struct {
	Path, Sync, Size, Health string
	Failed                   bool
	Syncs                    uint64
}

// A serverMapping is an event source mapping as the server page lists it.
type serverMapping struct {
	Queue, QueueLink, FunctionURL string
	Enabled                       bool
	mappingCounts
}

// A serverTask is a redrive as the server page lists it.
type serverTask struct {
	Queue, QueueLink, Summary, Destination, Started, Rate string
	Running                                               bool
}

func (h *Handler) serverPage(w http.ResponseWriter, r *http.Request) {
	now := h.clock.Now()
	p := serverPageData{basePage: h.base(w, r, "Server", navServer), Version: h.version, Go: runtime.Version(),
		ConsoleStarted: stamp(h.started)}
	info := ServerInfo{}
	if h.server != nil {
		info = h.server()
	}
	p.Version = cmp.Or(info.Version, p.Version)
	started := info.Started
	if started.IsZero() {
		started = h.started
	}
	p.Started, p.Uptime = stamp(started), age(now.Sub(started))
	if s := info.Store; s != nil {
		v := &storeView{Path: s.Path, Sync: s.Sync, Health: "working", Syncs: s.Health.Syncs, Size: "unknown"}
		if s.Health.DiskBytes >= 0 {
			v.Size = byteSize(s.Health.DiskBytes)
		}
		if s.Health.Err != nil {
			v.Health, v.Failed = s.Health.Err.Error(), true
		}
		p.Store = v
	}
	p.Listeners = info.Listeners
	qs := h.list()
	p.Queues = len(qs)
	p.Topics = len(h.b.topics())
	for _, n := range qs {
		st := n.Q.Stats()
		p.Messages += st.Visible + st.InFlight + st.Delayed
		for _, t := range h.b.moveTasks(n) {
			task := serverTask{Queue: n.Name, QueueLink: query("queue", "q", n.Name), Summary: taskSummary(t),
				Destination: cmp.Or(t.Destination, "back to their sources"), Started: timeOf(t.StartedAt, now).Rel,
				Rate: "as fast as possible", Running: t.State == fifoq.MoveTaskRunning}
			if t.Rate > 0 {
				task.Rate = strconv.Itoa(t.Rate) + " a second"
			}
			p.Tasks = append(p.Tasks, task)
		}
	}
	slices.SortStableFunc(p.Tasks, func(a, b serverTask) int {
		switch {
		case a.Running == b.Running:
			return 0
		case a.Running:
			return -1
		}
		return 1
	})
	p.Sampled = min(len(qs), maxSampledQueues)
	p.SeriesKiB = (p.Sampled + 1) * queueSeriesSize / 1024
	if h.mappings != nil {
		p.HasMappingSource = true
		for _, m := range h.mappings() {
			p.Mappings = append(p.Mappings, serverMapping{Queue: m.Queue, QueueLink: query("queue", "q", m.Queue),
				FunctionURL: m.FunctionURL, Enabled: m.Enabled, mappingCounts: countsOf(&m)})
		}
	}
	h.render(w, r, http.StatusOK, "server", p)
}

// queueSeriesSize is the memory of a queue's series, in bytes: its points and what goes with them
// (TestSeriesBytes holds it to the size of the type).
const queueSeriesSize = samplesKept*36 + 144

// stamp formats a time for the server page.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// byteSize formats a size in bytes: 512 B, 3.2 KiB, 41.0 MiB, 1.3 GiB.
func byteSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

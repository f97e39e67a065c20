package fifoqweb

import (
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fifoq/fifoq"
)

// funcs are the templates' functions.
var funcs = template.FuncMap{
	"query": query,
	"pair":  func(p queueView, m msgView) msgOf { return msgOf{p, m} },
	"has":   slices.Contains[[]string],
	"num":   thousands,
	"seq": func(n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = i + 1
		}
		return out
	},
}

// msgOf is a message with its page, for the template of a message's actions.
type msgOf struct {
	Page queueView
	Msg  msgView
}

// A queueRow is a queue as the list and the queue page show it.
type queueRow struct {
	Name, Link                 string
	FIFO                       bool
	Visible, InFlight, Delayed int
	Oldest                     string
	Send, Receive, Delete      string
	DLQ, DLQLink               string // its dead-letter queue, if it has one
	MaxReceiveCount            int
	Sources                    []link // the queues whose dead-letter queue it is
	Task                       string // its latest move task, if any
}

// A link is a queue's name and the link to its page.
type link struct{ Name, Link string }

// rows returns every queue's row.
func (h *Handler) rows(qs []named) []queueRow {
	out := make([]queueRow, len(qs))
	index := make(map[string]int, len(qs))
	for i, n := range qs {
		out[i] = h.row(n)
		index[n.Name] = i
	}
	for i, n := range qs {
		if r := out[i]; r.DLQLink != "" {
			if j, ok := index[r.DLQ]; ok {
				out[j].Sources = append(out[j].Sources, link{n.Name, query("queue", "q", n.Name)})
			}
		}
	}
	return out
}

// row returns a queue's row, without its sources.
func (h *Handler) row(n named) queueRow {
	m := n.Q.Metrics()
	s := h.rate(n.Q, m)
	set := h.b.settings(n)
	r := queueRow{
		Name: n.Name, Link: query("queue", "q", n.Name), FIFO: n.Q.FIFO(),
		Visible: m.Visible, InFlight: m.InFlight, Delayed: m.Delayed,
		Oldest: age(m.OldestAge), Send: "–", Receive: "–", Delete: "–",
		MaxReceiveCount: set.maxReceiveCount,
	}
	if s.rated {
		r.Send, r.Receive, r.Delete = perSecond(s.send), perSecond(s.receive), perSecond(s.dele)
	}
	if set.dlq != "" {
		r.DLQ = set.dlq
		if set.dlqShown {
			r.DLQLink = query("queue", "q", r.DLQ)
		} else {
			r.DLQ += " (not in this console)"
		}
	}
	if ts := h.b.moveTasks(n); len(ts) > 0 {
		r.Task = taskSummary(ts[0])
	}
	return r
}

func taskSummary(t fifoq.MoveTaskStatus) string {
	s := fmt.Sprintf("redrive %s: %d of %d moved", strings.ToLower(t.State.String()), t.Moved, t.ToMove)
	if t.Failure != "" {
		s += " (" + t.Failure + ")"
	}
	return s
}

// age formats a duration for a person: seconds below a minute, else minutes and seconds, hours and
// minutes, days and hours.
func age(d time.Duration) string {
	switch {
	case d <= 0:
		return "–"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
}

// thousands formats n with a comma every three digits: 1,000,000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func perSecond(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) + "/s" }

// indexPage is the data of the queue list.
type indexPage struct {
	basePage
	Queues                     []queueRow
	Visible, InFlight, Delayed int
	Charts                     []chartView // of all queues together
	CanCreate                  bool        // the create form is offered
	Done                       string      // what the last action did
}

func (h *Handler) index(w http.ResponseWriter, r *http.Request) {
	qs := h.list()
	h.forget(qs)
	p := indexPage{basePage: h.base(w, r, "Queues", navQueues), Queues: h.rows(qs), Charts: h.queueCharts(""),
		CanCreate: h.b.canCreate() && !h.readOnly, Done: done[r.URL.Query().Get("done")]}
	for _, q := range p.Queues {
		p.Visible, p.InFlight, p.Delayed = p.Visible+q.Visible, p.InFlight+q.InFlight, p.Delayed+q.Delayed
	}
	h.render(w, r, http.StatusOK, "index", p)
}

// base returns the base of a page, with the token of its forms; current names its page in the header.
func (h *Handler) base(w http.ResponseWriter, r *http.Request, title, current string) basePage {
	b := h.plainBase(title, current)
	if !h.readOnly {
		b.CSRF = h.csrfToken(w, r)
	}
	return b
}

// liveCounts are one queue's counts as the page script shows them.
type liveCounts struct {
	Visible  string `json:"visible"`
	InFlight string `json:"inFlight"`
	Delayed  string `json:"delayed"`
	Oldest   string `json:"oldest"`
	Send     string `json:"send"`
	Receive  string `json:"receive"`
	Delete   string `json:"delete"`
	Task     string `json:"task"`
	// Sampled is the number of samples the charts have, in the entry of all queues: the page script redraws
	// its charts when it changes.
	Sampled string `json:"sampled,omitempty"`
}

// counts answers the page script: every queue's counts, formatted as the pages show them.
func (h *Handler) counts(w http.ResponseWriter, r *http.Request) {
	qs := h.list()
	out := make(map[string]liveCounts, len(qs))
	var total [3]int
	for _, row := range h.rows(qs) {
		out[row.Name] = liveCounts{
			strconv.Itoa(row.Visible), strconv.Itoa(row.InFlight), strconv.Itoa(row.Delayed),
			row.Oldest, row.Send, row.Receive, row.Delete, row.Task, "",
		}
		total[0], total[1], total[2] = total[0]+row.Visible, total[1]+row.InFlight, total[2]+row.Delayed
	}
	out[""] = liveCounts{Visible: strconv.Itoa(total[0]), InFlight: strconv.Itoa(total[1]), Delayed: strconv.Itoa(total[2]),
		Sampled: strconv.FormatUint(h.samp.samples(), 10)}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(h.withMappingCounts(out))
}

// A msgView is a message as the queue page shows it.
type msgView struct {
	ID, Seq, State, Group, Dedup, Source string
	DedupShort                           string // Dedup cut to a column's width
	ReceiveCount                         int
	Sent, FirstReceived, VisibleAt       timeView
	Preview, Body                        string
	Size                                 int
	Truncated                            bool
	Attributes                           []string
	Handle                               string
	InFlight                             bool
}

// A timeView is a time as an age from now, with the time itself for a tooltip.
type timeView struct{ Rel, Abs string }

func timeOf(t, now time.Time) timeView {
	if t.IsZero() {
		return timeView{}
	}
	abs := t.UTC().Format(time.RFC3339)
	if d := now.Sub(t); d < 100*time.Millisecond && d > -100*time.Millisecond {
		return timeView{"just now", abs}
	} else if d >= 0 {
		return timeView{age(d) + " ago", abs}
	}
	return timeView{"in " + age(t.Sub(now)), abs}
}

const (
	previewBytes = 80
	dedupShown   = 24
	maxShownBody = 4 << 10
)

func viewOf(s fifoq.Snapshot, now time.Time) msgView {
	v := msgView{
		ID: s.MessageID, Seq: s.SequenceNumber, State: s.State.String(), Group: s.GroupID,
		Dedup: s.DeduplicationID, Source: s.DeadLetterSource, ReceiveCount: s.ReceiveCount,
		Sent: timeOf(s.SentAt, now), FirstReceived: timeOf(s.FirstReceivedAt, now),
		VisibleAt: timeOf(s.VisibleAt, now), Size: len(s.Body), Handle: s.ReceiptHandle,
		InFlight: s.State == fifoq.StateInFlight,
	}
	v.DedupShort, _ = cut(s.DeduplicationID, dedupShown)
	v.Preview, _ = cut(s.Body, previewBytes)
	v.Body, v.Truncated = cut(s.Body, maxShownBody)
	for _, k := range sortedKeys(s.Attributes) {
		a := s.Attributes[k]
		val := a.StringValue
		if strings.HasPrefix(a.DataType, "Binary") {
			val = fmt.Sprintf("%d bytes", len(a.BinaryValue))
		}
		val, _ = cut(val, previewBytes)
		v.Attributes = append(v.Attributes, fmt.Sprintf("%s (%s) = %s", k, a.DataType, val))
	}
	return v
}

// cut returns s up to n bytes, cut at a rune boundary, and whether it cut anything.
func cut(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…", true
}

// A blockedView is a blocked FIFO group as the queue page shows it.
type blockedView struct {
	Group    string
	Messages int
	InFlight []msgView
}

// queueView is the data of a queue's page.
type queueView struct {
	basePage
	queueRow
	Attrs        []string // its settings, formatted
	IsDLQ        bool
	Tasks        []string
	CanCancel    bool
	TaskHandle   string   // of the running redrive to cancel, with WithMoveTasks
	Destinations []string // queues a redrive can move messages to
	Blocked      []blockedView
	Messages     []msgView
	State, Group string // the filter
	N            int
	Next, First  string // links to the next page and the first
	Paged        bool   // the page shown is not the first
	Done         string // what the last action did

	// Mappings are the queue's event source mappings (WithMappings).
	Mappings []mappingRow
	// Charts are the queue's charts of the last hour.
	Charts []chartView
}

// Page sizes of the message list.
const (
	defaultPageSize = 50
	maxPageSize     = 500
	shownBlocked    = 20
)

var states = map[string]fifoq.MessageState{
	"": 0, "visible": fifoq.StateVisible, "inflight": fifoq.StateInFlight, "delayed": fifoq.StateDelayed,
}

// done are the messages shown after an action, by the code its redirect carries.
var done = map[string]string{
	"send":       "Message sent.",
	"duplicate":  "Message accepted but suppressed as a duplicate within the 5-minute deduplication window.",
	"purge":      "Queue purged.",
	"delete":     "Message deleted.",
	"visibility": "Visibility changed.",
	"redrive":    "Redrive started.",
	"cancel":     "Redrive cancelling.",
	"created":    "Queue created.",
	"settings":   "Settings changed.",
	"deleted":    "Queue deleted.",
}

func (h *Handler) queuePage(w http.ResponseWriter, r *http.Request) {
	n, err := h.lookup(r)
	if err != nil {
		h.failLookup(w, r, err)
		return
	}
	qv := r.URL.Query()
	state, ok := states[qv.Get("state")]
	if !ok {
		h.fail(w, r, http.StatusBadRequest, fmt.Sprintf("state %q: want visible, inflight, delayed or nothing", qv.Get("state")))
		return
	}
	size := defaultPageSize
	if s := qv.Get("n"); s != "" {
		if size, err = strconv.Atoi(s); err != nil || size < 1 || size > maxPageSize {
			h.fail(w, r, http.StatusBadRequest, fmt.Sprintf("page size %q: want 1..%d", s, maxPageSize))
			return
		}
	}
	group := qv.Get("group")
	if group != "" && !n.Q.FIFO() {
		h.fail(w, r, http.StatusBadRequest, "a group filter on standard queue "+n.Name+": only FIFO queues have groups")
		return
	}
	page, next, err := n.Q.MessagesAfter(qv.Get("after"), size, fifoq.MessageFilter{State: state, GroupID: group})
	if err != nil {
		h.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	qs := h.list()
	v := queueView{
		basePage: h.base(w, r, n.Name, navQueues),
		State:    qv.Get("state"), Group: group, N: size, Paged: qv.Get("after") != "",
		Done: done[qv.Get("done")],
	}
	for _, row := range h.rows(qs) {
		if row.Name == n.Name {
			v.queueRow = row
		}
	}
	sizeParam := ""
	if size != defaultPageSize {
		sizeParam = strconv.Itoa(size)
	}
	v.First = query("queue", "q", n.Name, "state", v.State, "group", group, "n", sizeParam)
	if next != "" {
		v.Next = query("queue", "q", n.Name, "state", v.State, "group", group, "n", sizeParam, "after", next)
	}
	now := n.Q.Clock().Now()
	for _, s := range page {
		v.Messages = append(v.Messages, viewOf(s, now))
	}
	v.Attrs = h.b.settings(n).lines
	v.IsDLQ = len(v.Sources) > 0
	for _, t := range h.b.moveTasks(n) {
		v.Tasks = append(v.Tasks, taskSummary(t)+", started "+timeOf(t.StartedAt, now).Rel)
	}
	v.TaskHandle = h.b.runningTask(n)
	v.CanCancel = v.TaskHandle != ""
	for _, x := range qs {
		if x.Q != n.Q && x.Q.FIFO() == n.Q.FIFO() {
			v.Destinations = append(v.Destinations, x.Name)
		}
	}
	for _, b := range n.Q.BlockedGroups(shownBlocked) {
		bv := blockedView{Group: b.GroupID, Messages: b.Messages}
		for _, s := range b.InFlight {
			bv.InFlight = append(bv.InFlight, viewOf(s, now))
		}
		v.Blocked = append(v.Blocked, bv)
	}
	v.Mappings = h.mappingRows(n.Name)
	v.Charts = h.queueCharts(n.Name)
	h.render(w, r, http.StatusOK, "queue", v)
}

// failLookup answers a request whose queue was not found.
func (h *Handler) failLookup(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, errUnknownQueue) {
		h.fail(w, r, http.StatusNotFound, fmt.Sprintf("no queue named %q in this console", r.URL.Query().Get("q")))
		return
	}
	h.fail(w, r, http.StatusBadRequest, err.Error())
}

func sortedKeys(m map[string]fifoq.Attribute) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

package fifoqweb

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/fifoq/fifoq"
)

// Search: the messages of a queue, or of every queue, with a message id, a group id, a deduplication id, or
// a body that holds a string, found without receiving anything. It reads pages of Queue.MessagesAfter, which
// copies only the page and changes nothing: a group id is looked up among its group's messages only (the
// queue keeps each group's list), the others by a walk of every message. Each search stops at a bound (the
// messages it looked at, its time by the console's clock, or 50 results), says which, and offers to go on
// from where it stopped.

// The bounds of a search, and the size of the pages it reads.
const (
	defaultSearchMessages = 1_000_000
	defaultSearchTime     = 2 * time.Second
	searchChunk           = 256
	maxSearchResults      = 50
)

// The kinds of search, by the by parameter.
var searchKinds = []struct{ By, Name string }{
	{"id", "message id"}, {"group", "group id"}, {"dedup", "deduplication id"}, {"body", "body contains"},
}

// searchPageData is the data of the search page.
type searchPageData struct {
	basePage
	Queue     string // the queue searched; "" for every queue
	By, Value string
	Kinds     []struct{ By, Name string }
	Queues    []string
	Searched  bool // a search was made: the results below are its
	Results   []searchResult
	Scanned   int
	QueuesRun int    // the queues looked at
	Took      string // its time, by the console's clock
	Stopped   string // why it stopped before the end; "" when it looked at every message it could match
	Next      string // the link that goes on from where it stopped
}

// A searchResult is a message found, with its queue.
type searchResult struct {
	Queue, QueueLink string
	msgView
}

// errBadSearch is the error of a search the console cannot make.
var errBadSearch = errors.New("bad search")

func (h *Handler) searchPage(w http.ResponseWriter, r *http.Request) {
	qv := r.URL.Query()
	p := searchPageData{basePage: h.base(w, r, "Search", navSearch), Queue: qv.Get("q"), By: qv.Get("by"),
		Value: qv.Get("v"), Kinds: searchKinds}
	if p.By == "" {
		p.By = "id"
	}
	all := h.list()
	for _, n := range all {
		p.Queues = append(p.Queues, n.Name)
	}
	if p.Value == "" {
		h.render(w, r, http.StatusOK, "search", p)
		return
	}
	qs := all
	if p.Queue != "" {
		n, ok := h.b.lookup(p.Queue)
		if !ok {
			h.fail(w, r, http.StatusNotFound, fmt.Sprintf("no queue named %q in this console", p.Queue))
			return
		}
		qs = []named{n}
	}
	if err := h.search(&p, qs, qv.Get("from"), qv.Get("after")); err != nil {
		h.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	h.render(w, r, http.StatusOK, "search", p)
}

// search fills p with the results of its search among qs, in order, going on from the queue from after the
// cursor after when from is given.
func (h *Handler) search(p *searchPageData, qs []named, from, after string) error {
	known := false
	for _, k := range searchKinds {
		known = known || k.By == p.By
	}
	if !known {
		return fmt.Errorf("%w: search by %q: want id, group, dedup or body", errBadSearch, p.By)
	}
	if len(qs) == 1 && !qs[0].Q.FIFO() && (p.By == "group" || p.By == "dedup") {
		return fmt.Errorf("%w: %s is a standard queue: only FIFO queues have group and deduplication ids", errBadSearch, qs[0].Name)
	}
	if from != "" {
		i := 0
		for i < len(qs) && qs[i].Name != from {
			i++
		}
		if i == len(qs) {
			return fmt.Errorf("%w: no queue named %q to go on from", errBadSearch, from)
		}
		qs = qs[i:]
	}
	p.Searched = true
	start := h.clock.Now()
	defer func() { p.Took = h.clock.Now().Sub(start).Round(time.Millisecond).String() }()
	stop := func(why, queue, cursor string) {
		p.Stopped = why
		p.Next = query("search", "q", p.Queue, "by", p.By, "v", p.Value, "from", queue, "after", cursor)
	}
	for i, n := range qs {
		fifo := n.Q.FIFO()
		if !fifo && (p.By == "group" || p.By == "dedup") {
			continue
		}
		p.QueuesRun++
		f := fifoq.MessageFilter{}
		if p.By == "group" {
			f.GroupID = p.Value
		}
		cursor := ""
		if i == 0 && from != "" {
			cursor = after
		}
		for {
			if p.Scanned >= h.searchMessages {
				stop(fmt.Sprintf("it looked at %d messages, its most", h.searchMessages), n.Name, cursor)
				return nil
			}
			if h.searchTime > 0 && h.clock.Now().Sub(start) >= h.searchTime {
				stop("it took "+h.searchTime.String()+", its longest", n.Name, cursor)
				return nil
			}
			size := min(searchChunk, h.searchMessages-p.Scanned)
			if p.By == "group" {
				size = min(size, maxSearchResults-len(p.Results)) // every message of the group matches
			}
			page, next, err := n.Q.MessagesAfter(cursor, size, f)
			if err != nil {
				return fmt.Errorf("%w: %s: %s", errBadSearch, n.Name, messageOf(err))
			}
			now := n.Q.Clock().Now()
			for j, s := range page {
				p.Scanned++
				if !matches(p.By, p.Value, s) {
					continue
				}
				p.Results = append(p.Results, searchResult{Queue: n.Name, QueueLink: query("queue", "q", n.Name), msgView: viewOf(s, now)})
				if p.By == "id" {
					return nil // an id names one message
				}
				if len(p.Results) == maxSearchResults {
					if j < len(page)-1 || next != "" {
						// Go on after this message: the cursor of the page that ends with it.
						_, at, err := n.Q.MessagesAfter(cursor, j+1, f)
						if err != nil {
							return fmt.Errorf("%w: %s: %s", errBadSearch, n.Name, messageOf(err))
						}
						stop(fmt.Sprintf("it found %d messages, its most", maxSearchResults), n.Name, at)
					} else if i < len(qs)-1 {
						stop(fmt.Sprintf("it found %d messages, its most", maxSearchResults), qs[i+1].Name, "")
					}
					return nil
				}
			}
			if next == "" {
				break
			}
			cursor = next
		}
	}
	return nil
}

// matches reports whether s is a message the search looks for.
func matches(by, v string, s fifoq.Snapshot) bool {
	switch by {
	case "id":
		return s.MessageID == v
	case "group":
		return s.GroupID == v
	case "dedup":
		return s.DeduplicationID == v
	}
	return strings.Contains(s.Body, v)
}

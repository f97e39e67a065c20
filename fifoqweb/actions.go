package fifoqweb

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/fifoq/fifoq"
)

// An action is a change the console makes: prepare reads and checks its form, and returns what it will do,
// in words for the confirmation page, and the change itself, which returns the code of its done message.
type action func(h *Handler, n named, f url.Values) (what string, run func(context.Context) (string, error), err error)

// actions are the console's changes, by the path of their form.
var actions = map[string]action{
	"send":       prepareSend,
	"purge":      preparePurge,
	"delete":     prepareDelete,
	"visibility": prepareVisibility,
	"redrive":    prepareRedrive,
	"cancel":     prepareCancel,
}

// confirmPage is the data of the confirmation page: the form again, with confirm=yes.
type confirmPage struct {
	basePage
	Queue, QueueLink, What, Action string
	Fields                         []field
}

// A field is a form field the confirmation page posts again.
type field struct{ Name, Value string }

// errBadForm is the error of a form field the console cannot read.
var errBadForm = errors.New("bad form")

// act serves a POST of an action: checks, confirmation, change, and a redirect to the queue's page.
func (h *Handler) act(w http.ResponseWriter, r *http.Request, name string, prepare action) {
	if h.readOnly {
		h.fail(w, r, http.StatusForbidden, "the console is read-only: "+name+" refused, nothing changed")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, h.maxBody)
	if err := r.ParseForm(); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			h.fail(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes: nothing changed", tooLarge.Limit))
			return
		}
		h.fail(w, r, http.StatusBadRequest, "unreadable form: "+err.Error())
		return
	}
	n, err := h.lookup(r)
	if err != nil {
		h.failLookup(w, r, err)
		return
	}
	if !csrfOK(r) {
		h.fail(w, r, http.StatusForbidden, "the form's token does not match this browser's: reload the console and try again")
		return
	}
	what, run, err := prepare(h, n, r.PostForm)
	if err != nil {
		h.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	if r.PostForm.Get("confirm") != "yes" {
		p := confirmPage{
			basePage: h.base(w, r, "Confirm "+name, ""),
			Queue:    n.Name, QueueLink: query("queue", "q", n.Name), What: what,
			Action: query(name, "q", n.Name),
		}
		for k, vs := range r.PostForm {
			if k == "csrf" || k == "confirm" {
				continue
			}
			for _, v := range vs {
				p.Fields = append(p.Fields, field{k, v})
			}
		}
		h.render(w, r, http.StatusOK, "confirm", p)
		return
	}
	code, err := run(r.Context())
	if err != nil {
		h.fail(w, r, statusOf(err), name+" on "+n.Name+": "+err.Error())
		return
	}
	// Relative, so it resolves under whatever prefix the console is mounted (http.Redirect would make it
	// absolute from the stripped path).
	w.Header().Set("Location", query("queue", "q", n.Name, "done", code))
	w.WriteHeader(http.StatusSeeOther)
}

// statusOf returns the HTTP status of a queue's refusal.
func statusOf(err error) int {
	var rule *fifoq.Error
	switch {
	case errors.Is(err, fifoq.ErrPurgeInProgress), errors.Is(err, fifoq.ErrMoveTaskRunning),
		errors.Is(err, fifoq.ErrMoveTaskNotRunning), errors.Is(err, errNoConsoleTask):
		return http.StatusConflict
	case errors.As(err, &rule), errors.Is(err, errBadForm):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// maxFormAttributes is the number of attribute rows of the send form.
const maxFormAttributes = 3

func prepareSend(_ *Handler, n named, f url.Values) (string, func(context.Context) (string, error), error) {
	m := fifoq.Message{Body: f.Get("body"), GroupID: f.Get("group"), DeduplicationID: f.Get("dedup")}
	if s := f.Get("delay"); s != "" {
		secs, err := strconv.Atoi(s)
		if err != nil {
			return "", nil, fmt.Errorf("%w: delay %q: want whole seconds", errBadForm, s)
		}
		m.Delay, m.NoDelay = time.Duration(secs)*time.Second, secs == 0
	}
	for i := 1; i <= maxFormAttributes; i++ {
		k := f.Get("attr" + strconv.Itoa(i) + "_name")
		if k == "" {
			continue
		}
		a := fifoq.Attribute{DataType: f.Get("attr" + strconv.Itoa(i) + "_type")}
		v := f.Get("attr" + strconv.Itoa(i) + "_value")
		if len(a.DataType) >= 6 && a.DataType[:6] == "Binary" {
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				return "", nil, fmt.Errorf("%w: attribute %q: a Binary value is base64: %v", errBadForm, k, err)
			}
			a.BinaryValue = b
		} else {
			a.StringValue = v
		}
		if m.Attributes == nil {
			m.Attributes = make(map[string]fifoq.Attribute)
		}
		m.Attributes[k] = a
	}
	what := fmt.Sprintf("Send a message of %d bytes to %s", len(m.Body), n.Name)
	if m.GroupID != "" {
		what += ", group " + strconv.Quote(m.GroupID)
	}
	if len(m.Attributes) > 0 {
		what += fmt.Sprintf(", with %d attributes", len(m.Attributes))
	}
	return what + ".", func(ctx context.Context) (string, error) {
		r, err := n.Q.Send(ctx, m)
		if err == nil && r.Duplicate {
			return "duplicate", nil
		}
		return "send", err
	}, nil
}

func preparePurge(_ *Handler, n named, _ url.Values) (string, func(context.Context) (string, error), error) {
	st := n.Q.Stats()
	what := fmt.Sprintf("Purge %s: delete all its %d messages (%d visible, %d in flight, %d delayed). A queue can be purged once every 60 seconds.",
		n.Name, st.Visible+st.InFlight+st.Delayed, st.Visible, st.InFlight, st.Delayed)
	return what, func(ctx context.Context) (string, error) { return "purge", n.Q.Purge(ctx) }, nil
}

func prepareDelete(_ *Handler, n named, f url.Values) (string, func(context.Context) (string, error), error) {
	handle := f.Get("handle")
	what := fmt.Sprintf("Delete message %s from %s. A deleted message cannot be brought back.", msgName(f), n.Name)
	return what, func(ctx context.Context) (string, error) { return "delete", n.Q.Delete(ctx, handle) }, nil
}

func prepareVisibility(_ *Handler, n named, f url.Values) (string, func(context.Context) (string, error), error) {
	s := f.Get("timeout")
	secs, err := strconv.Atoi(s)
	if err != nil {
		return "", nil, fmt.Errorf("%w: visibility timeout %q: want whole seconds", errBadForm, s)
	}
	timeout := time.Duration(secs) * time.Second
	what := fmt.Sprintf("Make message %s of %s visible in %v.", msgName(f), n.Name, timeout)
	if secs == 0 {
		what = fmt.Sprintf("Make message %s of %s visible now, so the next receive can take it.", msgName(f), n.Name)
	}
	handle := f.Get("handle")
	return what, func(ctx context.Context) (string, error) {
		return "visibility", n.Q.ChangeVisibility(ctx, handle, timeout)
	}, nil
}

// msgName names the message of a form, by the id the form shows.
func msgName(f url.Values) string {
	if id := f.Get("id"); id != "" {
		return strconv.Quote(id)
	}
	return "(no id given)"
}

func prepareRedrive(h *Handler, n named, f url.Values) (string, func(context.Context) (string, error), error) {
	rate := 0
	if s := f.Get("rate"); s != "" {
		var err error
		if rate, err = strconv.Atoi(s); err != nil {
			return "", nil, fmt.Errorf("%w: rate %q: want whole messages a second", errBadForm, s)
		}
	}
	dest := f.Get("dest")
	where := "back to the queues they came from"
	if dest != "" {
		if _, ok := h.b.lookup(dest); !ok {
			return "", nil, fmt.Errorf("%w: destination: no queue named %q in this console", errBadForm, dest)
		}
		where = "to " + dest
	}
	pace := "as fast as possible"
	if rate > 0 {
		pace = fmt.Sprintf("at %d a second", rate)
	}
	what := fmt.Sprintf("Move the %d visible messages of %s %s, %s.", n.Q.Stats().Visible, n.Name, where, pace)
	return what, func(ctx context.Context) (string, error) {
		if err := h.b.startMoveTask(ctx, n, dest, rate); err != nil {
			return "", err
		}
		return "redrive", nil
	}, nil
}

// errNoConsoleTask: the console cancels only the redrives it started.
var errNoConsoleTask = errors.New("no redrive started by this console to cancel")

func prepareCancel(h *Handler, n named, f url.Values) (string, func(context.Context) (string, error), error) {
	what := fmt.Sprintf("Cancel the redrive of %s; the messages it moved stay moved.", n.Name)
	handle := f.Get("task")
	if handle == "" {
		return "", nil, fmt.Errorf("%w: no redrive handle given to cancel", errBadForm)
	}
	return what, func(ctx context.Context) (string, error) {
		// The handle must name the redrive of this queue, the one the confirmation page spoke of.
		running := h.b.runningTask(n)
		if running == "" && handle == consoleTask {
			return "", fmt.Errorf("%w on %s", errNoConsoleTask, n.Name)
		}
		if running != handle {
			return "", fmt.Errorf("%w: %q is not the running redrive of %s", fifoq.ErrMoveTaskNotRunning, handle, n.Name)
		}
		return "cancel", h.b.cancelMoveTask(ctx, n, handle)
	}, nil
}

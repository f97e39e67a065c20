package fifoqweb

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/internal/rule"
)

// The pages and posts of the queue settings forms (settings.go reads and checks them).

// queueFormPage is the data of the create form and of a queue's settings form.
type queueFormPage struct {
	basePage
	Create           bool   // the create form; else the form of Queue
	Queue, QueueLink string // the queue of the settings form
	Action           string // where the form posts
	FIFO             bool
	Name, Type       string // the create form's name and type (standard or fifo)
	NameErr          string
	Tags, TagsErr    string // the create form's tags, key=value a line
	Fields           []settingField
	DLQs             []string // the queues the form offers as dead-letter queue
	Fixed            []string // settings the form shows but does not change
	Err              string   // a refusal of the form as a whole
	Notice           string
	Done             string
	CanDelete        bool
	Messages         int // the queue's messages, for its delete form
}

// mountSettings adds the settings forms: a queue's always, the create form and deletion when the backend
// creates queues.
func (h *Handler) mountSettings() {
	h.mux.HandleFunc("GET /settings", h.settingsPage)
	h.mux.HandleFunc("POST /updatequeue", h.updateQueue)
	if h.b.canCreate() {
		h.mux.HandleFunc("GET /newqueue", h.newQueuePage)
		h.mux.HandleFunc("POST /createqueue", h.createQueue)
		h.mux.HandleFunc("POST /deletequeue", h.deleteQueue)
	}
}

// readPost reads a post of the action name and checks it: the console is not read-only, the body is not too
// large, the form's token is the cookie's. It answers the refusals itself, and reports whether to go on.
func (h *Handler) readPost(w http.ResponseWriter, r *http.Request, name string) bool {
	if h.readOnly {
		h.fail(w, r, http.StatusForbidden, "the console is read-only: "+name+" refused, nothing changed")
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, h.maxBody)
	if err := r.ParseForm(); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			h.fail(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes: nothing changed", tooLarge.Limit))
			return false
		}
		h.fail(w, r, http.StatusBadRequest, "unreadable form: "+err.Error())
		return false
	}
	if !csrfOK(r) {
		h.fail(w, r, http.StatusForbidden, "the form's token does not match this browser's: reload the console and try again")
		return false
	}
	return true
}

// confirmForm answers a post not yet confirmed: a page that says what will happen, and posts the form again
// with confirm=yes; back and backName are where its "No" goes.
func (h *Handler) confirmForm(w http.ResponseWriter, r *http.Request, what, action, backName, back string) {
	p := confirmPage{basePage: h.base(w, r, "Confirm", ""), Queue: backName, QueueLink: back, What: what, Action: action}
	for _, k := range slices.Sorted(maps.Keys(r.PostForm)) {
		if k == "csrf" || k == "confirm" {
			continue
		}
		for _, v := range r.PostForm[k] {
			p.Fields = append(p.Fields, field{k, v})
		}
	}
	h.render(w, r, http.StatusOK, "confirm", p)
}

// confirmed reports whether a post is its confirmation.
func confirmed(r *http.Request) bool { return r.PostForm.Get("confirm") == "yes" }

// seeOther redirects to a page of the console, relatively, so that it resolves under any prefix.
func seeOther(w http.ResponseWriter, to string) {
	w.Header().Set("Location", to)
	w.WriteHeader(http.StatusSeeOther)
}

// newQueueForm returns the create form, empty.
func (h *Handler) newQueueForm(w http.ResponseWriter, r *http.Request) queueFormPage {
	p := queueFormPage{basePage: h.base(w, r, "Create a queue", navQueues), Create: true, Action: "createqueue",
		Type: "standard", Fields: settingFields()}
	for _, n := range h.list() {
		p.DLQs = append(p.DLQs, n.Name)
	}
	return p
}

func (h *Handler) newQueuePage(w http.ResponseWriter, r *http.Request) {
	if h.readOnly {
		h.fail(w, r, http.StatusForbidden, "the console is read-only: it creates no queue")
		return
	}
	h.render(w, r, http.StatusOK, "queueform", h.newQueueForm(w, r))
}

// createQueue creates the queue of the create form, once confirmed.
func (h *Handler) createQueue(w http.ResponseWriter, r *http.Request) {
	if !h.readPost(w, r, "create queue") {
		return
	}
	p := h.newQueueForm(w, r)
	f := r.PostForm
	p.Name, p.Type, p.Tags = strings.TrimSpace(f.Get(fieldName)), f.Get(fieldType), f.Get(fieldTags)
	p.FIFO = p.Type == "fifo"
	if p.Type != "standard" && p.Type != "fifo" {
		p.NameErr = "Choose the type of the queue: standard or FIFO."
	}
	base := p.Name[strings.LastIndexByte(p.Name, '/')+1:]
	switch {
	case p.NameErr != "":
	case p.Name == "":
		p.NameErr = "A queue needs a name."
	case rule.QueueName(base) != nil:
		p.NameErr = messageOf(rule.QueueName(base))
	case p.FIFO && !strings.HasSuffix(base, ".fifo"):
		p.NameErr = "The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, " +
			"must end with .fifo suffix and be 1 to 80 in length."
	case !p.FIFO && strings.HasSuffix(base, ".fifo"):
		p.NameErr = "Only a FIFO queue's name ends in .fifo: choose the FIFO type, or another name."
	default:
		if _, ok := h.b.lookup(p.Name); ok {
			p.NameErr = "A queue named " + p.Name + " exists already: change it on its settings page."
		}
	}
	d, given := readSettings(p.Fields, f, p.FIFO, true)
	tags, err := readTags(p.Tags)
	if err == nil && len(tags) > 0 {
		d.Tags, given = tags, given|catalog.FieldTags
		err = d.Check(p.FIFO, catalog.FieldTags)
	}
	if err != nil {
		p.TagsErr = messageOf(err)
	}
	h.checkDeadLetterQueue(&p, p.FIFO)
	if !p.refused() {
		// The rules between settings, each of which passed alone.
		if err := checkable(d).Check(p.FIFO, given); err != nil {
			p.setErr(err)
		}
	}
	if p.refused() {
		h.render(w, r, http.StatusBadRequest, "queueform", p)
		return
	}
	if !confirmed(r) {
		kind := "standard"
		if p.FIFO {
			kind = "FIFO"
		}
		h.confirmForm(w, r, "Create the "+kind+" queue "+p.Name+describeSettings(p.Fields, nil, tags)+".", "createqueue",
			"the create form", "newqueue")
		return
	}
	if err := h.b.createQueue(context.WithoutCancel(r.Context()), p.Name, d, given); err != nil {
		p.setErr(err)
		h.render(w, r, statusOf(err), "queueform", p)
		return
	}
	seeOther(w, query("queue", "q", p.Name, "done", "created"))
}

// readTags reads the tags of the create form: key=value, a line each.
func readTags(s string) (map[string]string, error) {
	tags := map[string]string{}
	for i, line := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, &formError{msg: fmt.Sprintf("Line %d: %q is not key=value.", i+1, line), sentinel: catalog.ErrInvalidTags}
		}
		tags[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return tags, nil
}

// checkDeadLetterQueue refuses, beside the field, a dead-letter queue that is no queue of the console or
// not of the queue's type, in the wire API's words.
func (h *Handler) checkDeadLetterQueue(p *queueFormPage, fifo bool) {
	for i := range p.Fields {
		f := &p.Fields[i]
		if f.Kind != "redrive" || f.Err != "" || f.Value == "" {
			continue
		}
		dlq, ok := h.b.lookup(f.Value)
		switch {
		case !ok:
			f.Err = messageOf(noDeadLetterTarget(f.Value))
		case dlq.Q.FIFO() != fifo:
			f.Err = "Dead-letter queue must be same type of queue as the source."
		}
	}
}

// refused reports whether a field or the form was refused.
func (p *queueFormPage) refused() bool {
	if p.NameErr != "" || p.TagsErr != "" || p.Err != "" {
		return true
	}
	for _, f := range p.Fields {
		if f.Err != "" {
			return true
		}
	}
	return false
}

// setErr puts a refusal of the backend beside its field, or on the form.
func (p *queueFormPage) setErr(err error) {
	name := fieldOf(err)
	switch name {
	case fieldName:
		p.NameErr = messageOf(err)
		return
	case fieldTags:
		p.TagsErr = messageOf(err)
		return
	}
	for i := range p.Fields {
		if name != "" && p.Fields[i].Name == name {
			p.Fields[i].Err = messageOf(err)
			return
		}
	}
	p.Err = messageOf(err)
}

// describeSettings says what a form sets: each setting given, from its old value when old is not nil.
func describeSettings(fields []settingField, old []settingField, tags map[string]string) string {
	var parts []string
	for i, f := range fields {
		if old == nil && f.Value == "" && f.Value2 == "" || old != nil && f.Value == old[i].Value && sameSources(f.Value2, old[i].Value2) {
			continue
		}
		parts = append(parts, f.Name+" "+shown(f, old == nil))
		if old != nil {
			parts[len(parts)-1] = f.Name + " " + shown(old[i], false) + " → " + shown(f, false)
		}
	}
	if len(tags) > 0 {
		parts = append(parts, fmt.Sprintf("%d tags", len(tags)))
	}
	if len(parts) == 0 {
		return ""
	}
	if old == nil {
		return " with " + strings.Join(parts, ", ")
	}
	return ": " + strings.Join(parts, "; ")
}

// shown returns a setting as the confirmation page says it.
func shown(f settingField, create bool) string {
	switch {
	case f.Kind == "redrive" && f.Value == "":
		return "none"
	case f.Kind == "redrive":
		return f.Value + " after " + f.Value2 + " receives"
	case f.Kind == "allow" && f.Value == "":
		return "none (all allowed)"
	case f.Kind == "allow" && f.Value2 != "":
		return f.Value + " (" + strings.Join(splitList(f.Value2), ", ") + ")"
	case f.Value == "" && !create:
		return "(none)"
	case f.Kind == "textarea":
		return fmt.Sprintf("(%d characters)", len(f.Value))
	}
	return f.Value
}

// settingsForm returns the settings form of the queue n, showing its settings now.
func (h *Handler) settingsForm(w http.ResponseWriter, r *http.Request, n named) queueFormPage {
	fifo := n.Q.FIFO()
	p := queueFormPage{basePage: h.base(w, r, "Settings of "+n.Name, navQueues), Queue: n.Name,
		QueueLink: query("queue", "q", n.Name), Action: query("updatequeue", "q", n.Name), FIFO: fifo,
		CanDelete: h.b.canCreate() && !h.readOnly, Done: done[r.URL.Query().Get("done")]}
	d := h.b.definition(n)
	editable := h.b.editable()
	for _, f := range settingFields() {
		if f.field&editable != 0 && (fifo || !f.FIFO) {
			p.Fields = append(p.Fields, f)
		}
	}
	showSettings(p.Fields, d, fifo)
	for _, x := range h.list() {
		if x.Q.FIFO() == fifo {
			p.DLQs = append(p.DLQs, x.Name)
		}
	}
	if editable&catalog.FieldTags == 0 && len(d.Tags) > 0 {
		for _, k := range slices.Sorted(maps.Keys(d.Tags)) {
			p.Fixed = append(p.Fixed, "tag "+k+" = "+d.Tags[k])
		}
	}
	if !d.Created.IsZero() {
		p.Fixed = append(p.Fixed, "created "+d.Created.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	if !d.Modified.IsZero() {
		p.Fixed = append(p.Fixed, "last changed "+d.Modified.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	st := n.Q.Stats()
	p.Messages = st.Visible + st.InFlight + st.Delayed
	return p
}

func (h *Handler) settingsPage(w http.ResponseWriter, r *http.Request) {
	n, err := h.lookup(r)
	if err != nil {
		h.failLookup(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "queueform", h.settingsForm(w, r, n))
}

// updateQueue changes the settings of a queue that its form changes, once confirmed.
func (h *Handler) updateQueue(w http.ResponseWriter, r *http.Request) {
	if !h.readPost(w, r, "change settings") {
		return
	}
	n, err := h.lookup(r)
	if err != nil {
		h.failLookup(w, r, err)
		return
	}
	p := h.settingsForm(w, r, n)
	old := slices.Clone(p.Fields)
	d, given := readSettings(p.Fields, r.PostForm, p.FIFO, false)
	h.checkDeadLetterQueue(&p, p.FIFO)
	if !p.refused() && given != 0 {
		// The rules between settings, each of which passed alone, on the settings the change leaves.
		next := h.b.definition(n)
		next.Apply(d, given)
		if err := checkable(next).Check(p.FIFO, h.b.editable()); err != nil {
			p.setErr(err)
		}
	}
	if p.refused() {
		h.render(w, r, http.StatusBadRequest, "queueform", p)
		return
	}
	if given == 0 {
		p.Notice = "No setting differs from the queue's: nothing to change."
		h.render(w, r, http.StatusOK, "queueform", p)
		return
	}
	if !confirmed(r) {
		h.confirmForm(w, r, "Change the settings of "+n.Name+describeSettings(p.Fields, old, nil)+".",
			query("updatequeue", "q", n.Name), n.Name, query("settings", "q", n.Name))
		return
	}
	if err := h.b.updateQueue(context.WithoutCancel(r.Context()), n, d, given); err != nil {
		p.setErr(err)
		h.render(w, r, statusOf(err), "queueform", p)
		return
	}
	seeOther(w, query("queue", "q", n.Name, "done", "settings"))
}

// deleteQueue deletes a queue, once confirmed.
func (h *Handler) deleteQueue(w http.ResponseWriter, r *http.Request) {
	if !h.readPost(w, r, "delete queue") {
		return
	}
	n, err := h.lookup(r)
	if err != nil {
		h.failLookup(w, r, err)
		return
	}
	if !confirmed(r) {
		st := n.Q.Stats()
		what := fmt.Sprintf("Delete the queue %s and its %d messages (%d visible, %d in flight, %d delayed). They cannot be "+
			"brought back, and the name can be used again after 60 seconds.", n.Name, st.Visible+st.InFlight+st.Delayed,
			st.Visible, st.InFlight, st.Delayed)
		var sources []string
		for _, row := range h.rows(h.list()) {
			if row.DLQ == n.Name {
				sources = append(sources, row.Name)
			}
		}
		if len(sources) > 0 {
			what += " It is the dead-letter queue of " + strings.Join(sources, ", ") +
				": they keep their redrive policy, waiting for a queue of this name, and move no message meanwhile."
		}
		h.confirmForm(w, r, what, query("deletequeue", "q", n.Name), n.Name, query("settings", "q", n.Name))
		return
	}
	if err := h.b.deleteQueue(context.WithoutCancel(r.Context()), n); err != nil {
		h.fail(w, r, statusOf(err), "delete queue "+n.Name+": "+messageOf(err))
		return
	}
	seeOther(w, query("", "done", "deleted"))
}

package fifoqweb

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/topic"
)

// The topics: their list (topics), each topic's page (topic?t=) with its chart, its subscriptions and the
// forms that subscribe a queue and publish a test message, and the create form (newtopic) of a catalogue's
// console. Each form is checked by the topic's own rules, refused beside its field, and confirmed first.

// WithTopics makes a console made with [New] show the topics that topics returns at each request, each
// under its key, on a Topics page (/topics), with forms that subscribe a queue of the console to a topic
// and publish to it (unless the console is read-only), as Subscribe and Publish do. A console made with
// [NewCatalog] shows the catalogue's topics, and creates them too.
func WithTopics(topics func() map[string]*topic.Topic) Option {
	return func(h *Handler) {
		if h.plain != nil {
			h.plain.topicsOf = topics
		}
	}
}

// WithPublishOptions makes the topics page's form publish with the options opts: a server's endpoint and
// signer (snsapi.Server.PublishOptions), so that the envelopes name the server as its own publishes do.
func WithPublishOptions(opts ...topic.PublishOption) Option {
	return func(h *Handler) { h.publishOpts = opts }
}

// topicsPage is the data of the topics page.
type topicsPage struct {
	basePage
	Topics    []topicView
	CanCreate bool
	Done      string
}

type topicView struct {
	Name          string
	Link          string
	ARN           string
	FIFO          bool
	Metrics       topic.Metrics
	Subscriptions []subscriptionView
}

type subscriptionView struct {
	ARN, Queue, FilterPolicy, Scope string
	QueueLink                       string // "" when the queue is not one of the console's
	Raw                             bool
}

// topicPageData is the data of a topic's page: the topic, and its forms as posted, with their refusals.
type topicPageData struct {
	basePage
	topicView
	Charts []chartView
	Queues []string          // the queues a subscription may name
	Form   map[string]string // the posted values of the forms
	Errs   map[string]string // refusals, by field
	Err    string            // a refusal of a form as a whole
	Done   string
}

// topicFormPage is the data of the create form of a topic.
type topicFormPage struct {
	basePage
	Form map[string]string
	Errs map[string]string
	Err  string
}

// mountTopics adds the topics pages and their forms to the console, when it has topics.
func (h *Handler) mountTopics() {
	if h.b.topics() == nil {
		return
	}
	h.hasTopics = true
	h.mux.HandleFunc("GET /topics", h.topicsPage)
	h.mux.HandleFunc("GET /topic", h.topicPage)
	h.mux.HandleFunc("POST /publish", h.publish)
	h.mux.HandleFunc("POST /subscribe", h.subscribe)
	if h.b.canCreate() {
		h.mux.HandleFunc("GET /newtopic", h.newTopicPage)
		h.mux.HandleFunc("POST /createtopic", h.createTopic)
	}
}

// findTopic returns the topic the console names name.
func (h *Handler) findTopic(name string) (topicInfo, bool) {
	for _, t := range h.b.topics() {
		if t.view.Name == name {
			return t, true
		}
	}
	return topicInfo{}, false
}

// topicDone are the messages shown after a change of a topic, by the code its redirect carries.
var topicDone = map[string]string{
	"created":    "Topic created.",
	"subscribed": "Queue subscribed.",
}

func (h *Handler) topicsPage(w http.ResponseWriter, r *http.Request) {
	p := topicsPage{basePage: h.base(w, r, "Topics", navTopics), CanCreate: h.b.canCreate() && !h.readOnly}
	for _, t := range h.b.topics() {
		p.Topics = append(p.Topics, h.linked(t.view))
	}
	p.Done = topicDone[r.URL.Query().Get("done")]
	h.render(w, r, http.StatusOK, "topics", p)
}

// linked returns v with the links of its page and its subscribed queues.
func (h *Handler) linked(v topicView) topicView {
	v.Link = query("topic", "t", v.Name)
	for i, s := range v.Subscriptions {
		if _, ok := h.b.lookup(s.Queue); ok {
			v.Subscriptions[i].QueueLink = query("queue", "q", s.Queue)
		}
	}
	return v
}

// topicPageOf returns the page of t, its forms empty.
func (h *Handler) topicPageOf(w http.ResponseWriter, r *http.Request, t topicInfo) topicPageData {
	p := topicPageData{basePage: h.base(w, r, "Topic "+t.view.Name, navTopics), topicView: h.linked(t.view),
		Charts: h.topicCharts(t.view.Name), Form: map[string]string{"scope": string(topic.FilterPolicyScopeMessageAttributes)},
		Errs: map[string]string{}}
	for _, n := range h.list() {
		p.Queues = append(p.Queues, n.Name)
	}
	return p
}

func (h *Handler) topicPage(w http.ResponseWriter, r *http.Request) {
	t, ok := h.findTopic(r.URL.Query().Get("t"))
	if !ok {
		h.fail(w, r, http.StatusNotFound, fmt.Sprintf("no topic named %q in this console", r.URL.Query().Get("t")))
		return
	}
	p := h.topicPageOf(w, r, t)
	p.Done = topicDone[r.URL.Query().Get("done")]
	if id := r.URL.Query().Get("published"); id != "" {
		p.Done = "Published message " + id + "."
	}
	h.render(w, r, http.StatusOK, "topic", p)
}

// postedTopic returns the topic a post names in its topic field, answering the refusal when there is none.
func (h *Handler) postedTopic(w http.ResponseWriter, r *http.Request) (topicInfo, bool) {
	t, ok := h.findTopic(r.PostForm.Get("topic"))
	if !ok {
		h.fail(w, r, http.StatusNotFound, fmt.Sprintf("no topic named %q in this console", r.PostForm.Get("topic")))
	}
	return t, ok
}

// keep copies the posted values of fields into p's form, to show them again.
func keep(p map[string]string, f map[string][]string, fields ...string) {
	for _, k := range fields {
		if v := f[k]; len(v) > 0 {
			p[k] = v[0]
		}
	}
}

// publishFields are the fields of the publish form.
var publishFields = []string{"message", "subject", "attr-name", "attr-value", "group", "dedup"}

// publish publishes the form's test message to its topic, once confirmed.
func (h *Handler) publish(w http.ResponseWriter, r *http.Request) {
	if !h.readPost(w, r, "publish") {
		return
	}
	t, ok := h.postedTopic(w, r)
	if !ok {
		return
	}
	f := r.PostForm
	m := topic.Message{Message: f.Get("message"), Subject: f.Get("subject"), GroupID: f.Get("group"), DeduplicationID: f.Get("dedup")}
	if name := strings.TrimSpace(f.Get("attr-name")); name != "" {
		m.Attributes = map[string]fifoq.Attribute{name: {DataType: "String", StringValue: f.Get("attr-value")}}
	}
	if !confirmed(r) {
		what := fmt.Sprintf("Publish a message of %d bytes to %s, which delivers it to the %d queues its subscriptions' "+
			"filter policies accept.", len(m.Message), t.view.Name, len(t.view.Subscriptions))
		h.confirmForm(w, r, what, "publish", t.view.Name, query("topic", "t", t.view.Name))
		return
	}
	res, err := t.publish(context.WithoutCancel(r.Context()), m)
	if err != nil {
		p := h.topicPageOf(w, r, t)
		keep(p.Form, f, publishFields...)
		p.refuse(err, publishFieldOf(err))
		h.render(w, r, statusOf(err), "topic", p)
		return
	}
	seeOther(w, query("topic", "t", t.view.Name, "published", res.MessageID))
}

// refuse puts a refusal beside the field name, or on the form for "".
func (p *topicPageData) refuse(err error, name string) {
	if name == "" {
		p.Err = messageOf(err)
		return
	}
	p.Errs[name] = messageOf(err)
}

// publishFieldOf returns the field of the publish form a refusal is about.
func publishFieldOf(err error) string {
	switch {
	case errors.Is(err, topic.ErrEmptyMessage), errors.Is(err, topic.ErrMessageTooLarge), errors.Is(err, topic.ErrInvalidMessage):
		return "message"
	case errors.Is(err, topic.ErrInvalidSubject):
		return "subject"
	case errors.Is(err, topic.ErrInvalidMessageAttribute):
		return "attr-name"
	case errors.Is(err, topic.ErrMissingGroupID), errors.Is(err, topic.ErrInvalidGroupID):
		return "group"
	case errors.Is(err, topic.ErrMissingDeduplicationID), errors.Is(err, topic.ErrInvalidDeduplicationID):
		return "dedup"
	}
	return ""
}

// subscribeFields are the fields of the subscribe form.
var subscribeFields = []string{"queue", "policy", "scope", "raw"}

// subscribe subscribes the form's queue to its topic, with its filter policy, once confirmed.
func (h *Handler) subscribe(w http.ResponseWriter, r *http.Request) {
	if !h.readPost(w, r, "subscribe") {
		return
	}
	t, ok := h.postedTopic(w, r)
	if !ok {
		return
	}
	f := r.PostForm
	p := h.topicPageOf(w, r, t)
	keep(p.Form, f, subscribeFields...)
	a := topic.SubscriptionAttributes{FilterPolicy: strings.ReplaceAll(f.Get("policy"), "\r\n", "\n"),
		FilterPolicyScope: topic.FilterPolicyScope(f.Get("scope")), RawMessageDelivery: f.Get("raw") == "true"}
	queue := f.Get("queue")
	if _, ok := h.b.lookup(queue); !ok {
		p.Errs["queue"] = "No queue named " + strconv.Quote(queue) + " in this console."
	}
	if a.FilterPolicy != "" {
		if _, err := topic.ParseFilterPolicy(a.FilterPolicy, a.FilterPolicyScope); err != nil {
			p.refuse(err, subscribeFieldOf(err))
		}
	}
	if len(p.Errs) > 0 || p.Err != "" {
		h.render(w, r, http.StatusBadRequest, "topic", p)
		return
	}
	if !confirmed(r) {
		what := "Subscribe the queue " + queue + " to " + t.view.Name
		if a.FilterPolicy != "" {
			what += ", with a filter policy on the message's " + map[bool]string{true: "body", false: "attributes"}[a.FilterPolicyScope == topic.FilterPolicyScopeMessageBody]
		}
		if a.RawMessageDelivery {
			what += ", delivering raw messages"
		}
		h.confirmForm(w, r, what+".", "subscribe", t.view.Name, query("topic", "t", t.view.Name))
		return
	}
	if err := h.b.subscribe(context.WithoutCancel(r.Context()), t.view.Name, queue, a); err != nil {
		p.refuse(err, subscribeFieldOf(err))
		h.render(w, r, statusOf(err), "topic", p)
		return
	}
	seeOther(w, query("topic", "t", t.view.Name, "done", "subscribed"))
}

// subscribeFieldOf returns the field of the subscribe form a refusal is about.
func subscribeFieldOf(err error) string {
	switch {
	case errors.Is(err, topic.ErrInvalidFilterPolicy):
		return "policy"
	case errors.Is(err, topic.ErrInvalidFilterPolicyScope):
		return "scope"
	case errors.Is(err, topic.ErrInvalidSubscription):
		return "queue"
	}
	return ""
}

// newTopicForm returns the create form of a topic, with the values posted.
func (h *Handler) newTopicForm(w http.ResponseWriter, r *http.Request) topicFormPage {
	return topicFormPage{basePage: h.base(w, r, "Create a topic", navTopics),
		Form: map[string]string{"type": "standard", "signature": ""}, Errs: map[string]string{}}
}

func (h *Handler) newTopicPage(w http.ResponseWriter, r *http.Request) {
	if h.readOnly {
		h.fail(w, r, http.StatusForbidden, "the console is read-only: it creates no topic")
		return
	}
	h.render(w, r, http.StatusOK, "topicform", h.newTopicForm(w, r))
}

// createTopic creates the topic of the create form, once confirmed.
func (h *Handler) createTopic(w http.ResponseWriter, r *http.Request) {
	if !h.readPost(w, r, "create topic") {
		return
	}
	p := h.newTopicForm(w, r)
	f := r.PostForm
	keep(p.Form, f, "name", "type", "dedup", "signature", "tags")
	name := strings.TrimSpace(p.Form["name"])
	fifo := p.Form["type"] == "fifo"
	base := name[strings.LastIndexByte(name, '/')+1:]
	// Each setting alone, by topic.Check, on a name of the topic's type where the name is not the point.
	stand := map[bool]string{true: "t.fifo", false: "t"}[fifo]
	switch {
	case p.Form["type"] != "standard" && p.Form["type"] != "fifo":
		p.Errs["name"] = "Choose the type of the topic: standard or FIFO."
	case name == "":
		p.Errs["name"] = "A topic needs a name."
	case topic.Check(base, topic.Attributes{}) != nil:
		p.Errs["name"] = messageOf(topic.Check(base, topic.Attributes{}))
	case fifo != strings.HasSuffix(base, ".fifo"):
		p.Errs["name"] = "Invalid parameter: Topic Name: a FIFO topic's name, and only a FIFO topic's, ends in .fifo."
	default:
		if _, ok := h.findTopic(name); ok {
			p.Errs["name"] = "A topic named " + name + " exists already."
		}
	}
	var def catalog.TopicDefinition
	if v := p.Form["dedup"]; v == "true" {
		def.ContentBasedDeduplication = true
		if err := topic.Check(stand, topic.Attributes{ContentBasedDeduplication: true}); err != nil {
			p.Errs["dedup"] = messageOf(err)
		}
	}
	if v := p.Form["signature"]; v != "" {
		def.SignatureVersion = v
		if err := topic.Check(stand, topic.Attributes{SignatureVersion: v}); err != nil {
			p.Errs["signature"] = messageOf(err)
		}
	}
	tags, err := readTags(p.Form["tags"])
	if err != nil {
		p.Errs["tags"] = messageOf(err)
	} else if len(tags) > 0 {
		def.Tags = tags
	}
	if len(p.Errs) > 0 {
		h.render(w, r, http.StatusBadRequest, "topicform", p)
		return
	}
	if !confirmed(r) {
		kind := map[bool]string{true: "FIFO", false: "standard"}[fifo]
		what := "Create the " + kind + " topic " + name
		if len(tags) > 0 {
			what += fmt.Sprintf(", with %d tags", len(tags))
		}
		h.confirmForm(w, r, what+".", "createtopic", "the create form", "newtopic")
		return
	}
	if err := h.b.createTopic(context.WithoutCancel(r.Context()), name, def); err != nil {
		switch {
		case errors.Is(err, catalog.ErrInvalidTopicTags), errors.Is(err, catalog.ErrTopicTagLimitExceeded):
			p.Errs["tags"] = messageOf(err)
		case errors.Is(err, topic.ErrInvalidName), errors.Is(err, catalog.ErrTopicExists):
			p.Errs["name"] = messageOf(err)
		default:
			p.Err = messageOf(err)
		}
		h.render(w, r, statusOf(err), "topicform", p)
		return
	}
	seeOther(w, query("topic", "t", name, "done", "created"))
}

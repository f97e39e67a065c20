package fifoqweb

import (
	"context"
	"net/http"
	"strings"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/topic"
)

// The topics page: every topic, its subscriptions with their filter policies and raw delivery, and a form
// that publishes to it.

// WithTopics makes a console made with [New] show the topics that topics returns at each request, each
// under its key, on a Topics page (/topics), with a form that publishes to a topic (unless the console is
// read-only), as Publish does. A console made with [NewCatalog] shows the catalogue's topics.
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
	Topics  []topicView
	Message string // the result of the last publish
}

type topicView struct {
	Name          string
	ARN           string
	FIFO          bool
	Metrics       topic.Metrics
	Subscriptions []subscriptionView
}

type subscriptionView struct {
	ARN, Queue, FilterPolicy, Scope string
	Raw                             bool
}

// mountTopics adds the topics page and its publish form to the console, when it has topics.
func (h *Handler) mountTopics() {
	if h.b.topics() == nil {
		return
	}
	h.mux.HandleFunc("GET /topics", h.topicsPage)
	h.mux.HandleFunc("POST /publish", h.publish)
}

func (h *Handler) topicsPage(w http.ResponseWriter, r *http.Request) {
	p := topicsPage{basePage: basePage{Title: "Topics", ReadOnly: h.readOnly, CSRF: h.csrfToken(w, r), Version: h.version},
		Message: r.URL.Query().Get("published")}
	for _, t := range h.b.topics() {
		p.Topics = append(p.Topics, t.view)
	}
	h.render(w, r, http.StatusOK, "topics", p)
}

// publish publishes the form's message to its topic, and goes back to the topics page.
func (h *Handler) publish(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, h.maxBody)
	if h.readOnly {
		h.fail(w, r, http.StatusForbidden, "the console is read-only")
		return
	}
	if !csrfOK(r) {
		h.fail(w, r, http.StatusForbidden, "the form has expired: reload the page and try again")
		return
	}
	var t *topicInfo
	for _, x := range h.b.topics() {
		if x.view.Name == r.PostFormValue("topic") {
			t = &x
		}
	}
	if t == nil {
		h.fail(w, r, http.StatusNotFound, "no topic "+r.PostFormValue("topic"))
		return
	}
	m := topic.Message{Message: r.PostFormValue("message"), Subject: r.PostFormValue("subject"),
		GroupID: r.PostFormValue("group"), DeduplicationID: r.PostFormValue("dedup")}
	if name := strings.TrimSpace(r.PostFormValue("attr-name")); name != "" {
		m.Attributes = map[string]fifoq.Attribute{name: {DataType: "String", StringValue: r.PostFormValue("attr-value")}}
	}
	res, err := t.publish(context.WithoutCancel(r.Context()), m)
	if err != nil {
		h.fail(w, r, http.StatusBadRequest, "publish to "+r.PostFormValue("topic")+": "+fifoq.ErrorMessage(err))
		return
	}
	http.Redirect(w, r, query("topics", "published", "published "+res.MessageID+" to "+r.PostFormValue("topic")), http.StatusSeeOther)
}

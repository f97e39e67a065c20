package fifoqweb

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/topic"
)

// topicErr returns the refusal shown in a page's form beside the field that follows the field name, ""
// for none: the topic forms put it right after their input.
func topicErr(t *testing.T, body, name string) string {
	t.Helper()
	m := regexp.MustCompile(`name="` + regexp.QuoteMeta(name) + `"[^>]*>(?:[^<]*</textarea>)?(?:[^<]|<option[^>]*>[^<]*</option>|</?select[^>]*>| = <input[^>]*>)*<p class="field-error" role="alert">([^<]*)</p>`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// topicState is what a refused topic form must leave as it was: the topics and their subscriptions.
func topicState(cat *catalog.Catalog) map[string][]string {
	out := map[string][]string{}
	for _, tp := range cat.Topics() {
		subs, _ := cat.TopicSubscriptions(tp.Namespace(), tp.Name())
		var s []string
		for _, x := range subs {
			s = append(s, x.Definition.Queue.Name+" "+x.Definition.FilterPolicy)
		}
		out[tp.Name()] = s
	}
	return out
}

// Creating a topic: checked by the topic's rules, refused beside the field, confirmed, then made by the
// catalogue.
func TestCreateTopic(t *testing.T) {
	t.Parallel()
	cat, _, c := stCatalog(t)
	code, body := c.get("topics")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `href="newtopic"`)
	code, _ = c.get("newtopic")
	require.Equal(t, http.StatusOK, code)
	before := topicState(cat)
	for _, tc := range []struct {
		name  string
		form  url.Values
		field string
		says  string
	}{
		{"no name", url.Values{"type": {"standard"}}, "name", "A topic needs a name."},
		{"bad name", url.Values{"name": {"a b"}, "type": {"standard"}}, "name", "Invalid parameter: Topic Name"},
		{"fifo without .fifo", url.Values{"name": {"events"}, "type": {"fifo"}}, "name", "ends in .fifo"},
		{"dedup on standard", url.Values{"name": {"events"}, "type": {"standard"}, "dedup": {"true"}}, "dedup", "Content-based deduplication can only be set for FIFO topics"},
		{"bad signature", url.Values{"name": {"events"}, "type": {"standard"}, "signature": {"3"}}, "signature", "SignatureVersion"},
		{"tags", url.Values{"name": {"events"}, "type": {"standard"}, "tags": {"x"}}, "tags", "is not key=value"},
	} {
		w := c.post("createtopic", tc.form, true)
		require.Equal(t, http.StatusBadRequest, w.Code, tc.name)
		require.Contains(t, topicErr(t, w.Body.String(), tc.field), tc.says, "%s: %s", tc.name, w.Body.String())
		require.Equal(t, before, topicState(cat), tc.name)
	}
	w := c.post("createtopic", url.Values{"name": {"events.fifo"}, "type": {"fifo"}, "dedup": {"true"}, "tags": {"team=ops"}}, false)
	require.Equal(t, http.StatusOK, w.Code)
	require.Contains(t, w.Body.String(), "Create the FIFO topic events.fifo, with 1 tags.")
	require.Equal(t, before, topicState(cat), "not confirmed")
	w = c.post("createtopic", url.Values{"name": {"events.fifo"}, "type": {"fifo"}, "dedup": {"true"}, "tags": {"team=ops"}}, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	require.Equal(t, "topic?done=created&t=events.fifo", w.Header().Get("Location"))
	tp, ok := cat.Topic(catalog.Namespace{}, "events.fifo")
	require.True(t, ok)
	require.True(t, tp.Attributes().ContentBasedDeduplication)
	d, _ := cat.TopicDefinition(catalog.Namespace{}, "events.fifo")
	require.Equal(t, map[string]string{"team": "ops"}, d.Tags)
	w = c.post("createtopic", url.Values{"name": {"events.fifo"}, "type": {"fifo"}}, true)
	require.Equal(t, http.StatusBadRequest, w.Code)
	require.Contains(t, topicErr(t, w.Body.String(), "name"), "exists already")
	w = c.post("createtopic", url.Values{"name": {"many"}, "type": {"standard"}, "tags": {strings.Repeat("k=v\n", 1) + tagLines(51)}}, true)
	require.Equal(t, http.StatusBadRequest, w.Code)
	require.Contains(t, topicErr(t, w.Body.String(), "tags"), "tag quota", "the catalogue's refusal, beside the field")
	_, ok = cat.Topic(catalog.Namespace{}, "many")
	require.False(t, ok)
}

func tagLines(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("k" + strings.Repeat("x", i) + "=v\n")
	}
	return b.String()
}

// Subscribing a queue with a filter policy: the policy checked by the topic's parser, refused beside the
// field; a FIFO queue refused by a standard topic; confirmed, then made by the catalogue.
func TestSubscribeAndPublish(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _, c := stCatalog(t)
	ns := catalog.Namespace{}
	_, err := cat.CreateTopic(ctx, ns, "alerts", catalog.TopicDefinition{})
	require.NoError(t, err)
	_, err = cat.CreateTopic(ctx, ns, "jobs.fifo", catalog.TopicDefinition{})
	require.NoError(t, err)
	code, body := c.get("topic?t=alerts")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `action="subscribe"`)
	require.Contains(t, body, `action="publish"`)
	before := topicState(cat)
	for _, tc := range []struct {
		name  string
		form  url.Values
		field string
		says  string
	}{
		{"bad policy", url.Values{"topic": {"alerts"}, "queue": {"orders"}, "policy": {`{"sev": "high"}`}}, "policy", "Invalid parameter: FilterPolicy"},
		{"not JSON", url.Values{"topic": {"alerts"}, "queue": {"orders"}, "policy": {`{`}}, "policy", "FilterPolicy"},
		{"bad scope", url.Values{"topic": {"alerts"}, "queue": {"orders"}, "policy": {`{"sev": ["high"]}`}, "scope": {"Everything"}}, "scope", "FilterPolicyScope"},
		{"no such queue", url.Values{"topic": {"alerts"}, "queue": {"nope"}}, "queue", `No queue named "nope" in this console.`},
		{"FIFO queue, standard topic", url.Values{"topic": {"alerts"}, "queue": {"jobs.fifo"}}, "queue", "FIFO"},
	} {
		w := c.post("subscribe", tc.form, true)
		require.Equal(t, http.StatusBadRequest, w.Code, "%s: %s", tc.name, w.Body.String())
		require.Contains(t, topicErr(t, w.Body.String(), tc.field), tc.says, "%s: %s", tc.name, w.Body.String())
		require.Equal(t, before, topicState(cat), tc.name)
	}
	w := c.post("subscribe", url.Values{"topic": {"nope"}, "queue": {"orders"}}, true)
	require.Equal(t, http.StatusNotFound, w.Code)

	sub := url.Values{"topic": {"alerts"}, "queue": {"orders"}, "policy": {`{"sev": ["high"]}`}, "scope": {"MessageAttributes"}, "raw": {"true"}}
	w = c.post("subscribe", sub, false)
	require.Equal(t, http.StatusOK, w.Code)
	require.Contains(t, w.Body.String(), "Subscribe the queue orders to alerts, with a filter policy on the message&#39;s attributes, delivering raw messages.")
	require.Equal(t, before, topicState(cat), "not confirmed")
	w = c.post("subscribe", sub, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	subs, _ := cat.TopicSubscriptions(ns, "alerts")
	require.Len(t, subs, 1)
	require.Equal(t, `{"sev": ["high"]}`, subs[0].Definition.FilterPolicy)
	require.True(t, subs[0].Definition.RawMessageDelivery)

	// Publish: confirmed, filtered by the policy; a FIFO topic's message without a group refused beside the
	// field, nothing published.
	orders, _ := cat.Queue(ns, "orders")
	pub := url.Values{"topic": {"alerts"}, "message": {"disk full"}, "attr-name": {"sev"}, "attr-value": {"high"}}
	w = c.post("publish", pub, false)
	require.Contains(t, w.Body.String(), "Publish a message of 9 bytes to alerts")
	require.Equal(t, fifoq.Stats{}, orders.Stats(), "not confirmed")
	w = c.post("publish", pub, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	require.Equal(t, fifoq.Stats{Visible: 1}, orders.Stats())
	pub.Set("attr-value", "low")
	require.Equal(t, http.StatusSeeOther, c.post("publish", pub, true).Code)
	require.Equal(t, fifoq.Stats{Visible: 1}, orders.Stats(), "filtered out")
	jobs, _ := cat.Topic(ns, "jobs.fifo")
	w = c.post("publish", url.Values{"topic": {"jobs.fifo"}, "message": {"x"}}, true)
	require.Equal(t, http.StatusBadRequest, w.Code)
	require.Contains(t, topicErr(t, w.Body.String(), "group"), "MessageGroupId", w.Body.String())
	require.Zero(t, jobs.Metrics().Published)
	w = c.post("publish", url.Values{"topic": {"alerts"}, "message": {""}}, true)
	require.Equal(t, http.StatusBadRequest, w.Code)
	require.Contains(t, topicErr(t, w.Body.String(), "message"), "Empty message")
}

// A program's console subscribes its queues to its topics through Subscribe, and creates no topic.
func TestPlainConsoleSubscribes(t *testing.T) {
	t.Parallel()
	q, err := fifoq.New("pager")
	require.NoError(t, err)
	alerts, err := topic.New("alerts")
	require.NoError(t, err)
	h := New(Queues(q), WithTopics(func() map[string]*topic.Topic { return map[string]*topic.Topic{"alerts": alerts} }))
	t.Cleanup(func() { _ = h.Close() })
	c := &wtClient{t: t, h: h}
	_, body := c.get("topics")
	require.NotContains(t, body, "newtopic")
	w := c.post("subscribe", url.Values{"topic": {"alerts"}, "queue": {"pager"}, "policy": {`{"sev": ["high"]}`}}, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	require.Len(t, alerts.Subscriptions(), 1)
	require.Equal(t, `{"sev": ["high"]}`, alerts.Subscriptions()[0].Attributes().FilterPolicy)
}

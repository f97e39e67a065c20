package fifoqweb_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/fifoqweb"
	"github.com/fifoq/fifoq/topic"
)

// A topic's page shows its subscriptions with their filter policies and raw delivery, and its form publishes
// to the topic, once confirmed.
func TestTopicsPagePublishes(t *testing.T) {
	t.Parallel()
	alerts, err := topic.New("alerts")
	require.NoError(t, err)
	q, err := fifoq.New("pager")
	require.NoError(t, err)
	_, err = alerts.Subscribe(q, topic.SubscriptionAttributes{RawMessageDelivery: true, FilterPolicy: `{"sev": ["high"]}`})
	require.NoError(t, err)
	h := fifoqweb.New(fifoqweb.Queues(q), fifoqweb.WithTopics(func() map[string]*topic.Topic { return map[string]*topic.Topic{"alerts": alerts} }))
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)

	resp, err := http.Get(hs.URL + "/topic?t=alerts")
	require.NoError(t, err)
	var b strings.Builder
	_, err = io.Copy(&b, resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode, b.String())
	page := b.String()
	for _, want := range []string{"alerts", "pager", `{&#34;sev&#34;: [&#34;high&#34;]}`, "<td>yes</td>", `action="publish"`} {
		require.Contains(t, page, want)
	}
	var csrf *http.Cookie
	for _, c := range resp.Cookies() {
		csrf = c
	}
	require.NotNil(t, csrf)
	form := url.Values{"csrf": {csrf.Value}, "topic": {"alerts"}, "message": {"disk full"}, "attr-name": {"sev"}, "attr-value": {"high"},
		"confirm": {"yes"}}
	req, _ := http.NewRequest("POST", hs.URL+"/publish", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(csrf)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.EqualValues(t, 1, alerts.Metrics().Delivered, "the form's message reached the queue")
	var bodies []string
	for m := range q.Messages() {
		bodies = append(bodies, m.Body)
	}
	require.Equal(t, []string{"disk full"}, bodies)
}

package browsertest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/fifoqweb"
)

// fillIn sets the fields of the form sel matches: name, value pairs (inputs, selects and text areas alike).
func fillIn(t *testing.T, ctx context.Context, sel string, kv ...string) {
	t.Helper()
	var actions []chromedp.Action[chromedp.Void]
	for i := 0; i+1 < len(kv); i += 2 {
		actions = append(actions, chromedp.SetValue(chromedp.CSS(sel+` [name="`+kv[i]+`"]`), kv[i+1]))
	}
	require.NoError(t, chromedp.Do(ctx, actions...), "fill in %s", sel)
}

// yes says yes on the confirmation page, returns what it said, and waits for the page it leads to.
func yes(t *testing.T, ctx context.Context) string {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`form.confirm button`))))
	what := text(t, ctx, `form.confirm p`)
	clickAndWait(t, ctx, `form.confirm button`)
	return what
}

// The forms of the settings, in a browser: each refuses bad input beside its field and changes nothing,
// then, corrected and confirmed, makes its change.
func TestConsoleForms(t *testing.T) {
	ctx := newBrowser(t)
	cc := newCatalogConsole(t)
	ns := catalog.Namespace{}
	queues := func() int { return len(cc.cat.Queues()) }

	// Create a queue: a FIFO queue's name without .fifo, a visibility timeout out of range.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(cc.base), chromedp.WaitVisible(chromedp.CSS(`a[href="newqueue"]`))))
	clickAndWait(t, ctx, `a[href="newqueue"]`)
	fillIn(t, ctx, `form.settings`, "name", "payments", "type", "fifo", "VisibilityTimeout", "99999",
		"RedrivePolicy", "jobs.fifo", "maxReceiveCount", "5", "Tags", "team=payments")
	clickAndWait(t, ctx, `form.settings button`)
	require.Contains(t, text(t, ctx, `#e-name`), "must end with .fifo suffix")
	require.Equal(t, "Invalid value for the parameter VisibilityTimeout.", text(t, ctx, `#e-VisibilityTimeout`))
	require.Equal(t, 3, queues(), "refused: nothing created")
	shot(t, ctx, "console-create-queue.png")
	fillIn(t, ctx, `form.settings`, "name", "payments.fifo", "VisibilityTimeout", "120")
	clickAndWait(t, ctx, `form.settings button`)
	what := yes(t, ctx)
	require.Contains(t, what, "Create the FIFO queue payments.fifo with VisibilityTimeout 120, RedrivePolicy jobs.fifo after 5 receives, 1 tags.")
	require.Equal(t, "Queue created.", text(t, ctx, `p.done`))
	d, ok := cc.cat.Definition(ns, "payments.fifo")
	require.True(t, ok)
	require.Equal(t, 2*time.Minute, d.VisibilityTimeout)
	require.Equal(t, catalog.RedrivePolicy{DeadLetterQueue: "jobs.fifo", MaxReceiveCount: 5}, d.RedrivePolicy)
	require.Equal(t, map[string]string{"team": "payments"}, d.Tags)

	// Change a queue's settings: a delay out of range, then a good one.
	clickAndWait(t, ctx, `a[href="settings?q=payments.fifo"]`)
	fillIn(t, ctx, `form.settings`, "DelaySeconds", "1000", "ContentBasedDeduplication", "true")
	clickAndWait(t, ctx, `form.settings button`)
	require.Equal(t, "Invalid value for the parameter DelaySeconds.", text(t, ctx, `#e-DelaySeconds`))
	d2, _ := cc.cat.Definition(ns, "payments.fifo")
	require.Equal(t, d, d2, "refused: nothing changed")
	shot(t, ctx, "console-settings.png")
	fillIn(t, ctx, `form.settings`, "DelaySeconds", "10")
	clickAndWait(t, ctx, `form.settings button`)
	require.Equal(t, "Change the settings of payments.fifo: DelaySeconds 0 → 10; ContentBasedDeduplication false → true.", yes(t, ctx))
	require.Equal(t, "Settings changed.", text(t, ctx, `p.done`))
	d, _ = cc.cat.Definition(ns, "payments.fifo")
	require.Equal(t, 10*time.Second, d.Delay)
	require.True(t, d.ContentBasedDeduplication)

	// Delete a queue.
	_, err := cc.cat.CreateQueue(context.Background(), ns, "scratch", catalog.Definition{}, 0)
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(cc.base+"settings?q=scratch"), chromedp.WaitVisible(chromedp.CSS(`#delete-h`))))
	clickAndWait(t, ctx, `form[action^="deletequeue"] button`)
	require.Contains(t, yes(t, ctx), "Delete the queue scratch and its 0 messages")
	require.Equal(t, "Queue deleted.", text(t, ctx, `p.done`))
	_, ok = cc.cat.Queue(ns, "scratch")
	require.False(t, ok)

	// Create a topic: a bad name, then a good one.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(cc.base+"topics"), chromedp.WaitVisible(chromedp.CSS(`a[href="newtopic"]`))))
	clickAndWait(t, ctx, `a[href="newtopic"]`)
	fillIn(t, ctx, `form.topicform`, "name", "billing events")
	clickAndWait(t, ctx, `form.topicform button`)
	require.Equal(t, "Invalid parameter: Topic Name", text(t, ctx, `form.topicform .field-error`))
	require.Len(t, cc.cat.Topics(), 1, "refused: nothing created")
	fillIn(t, ctx, `form.topicform`, "name", "billing")
	clickAndWait(t, ctx, `form.topicform button`)
	require.Equal(t, "Create the standard topic billing.", yes(t, ctx))
	require.Equal(t, "Topic created.", text(t, ctx, `p.done`))

	// Subscribe a queue with a filter policy: a bad one, then a good one.
	fillIn(t, ctx, `form.subscribe`, "queue", "orders", "policy", `{"kind": "invoice"}`)
	clickAndWait(t, ctx, `form.subscribe button`)
	require.Contains(t, text(t, ctx, `form.subscribe .field-error`), "Invalid parameter: FilterPolicy")
	subs, _ := cc.cat.TopicSubscriptions(ns, "billing")
	require.Empty(t, subs, "refused: nothing subscribed")
	fillIn(t, ctx, `form.subscribe`, "policy", `{"kind": ["invoice"]}`)
	clickAndWait(t, ctx, `form.subscribe button`)
	require.Equal(t, "Subscribe the queue orders to billing, with a filter policy on the message's attributes.", yes(t, ctx))
	require.Equal(t, "Queue subscribed.", text(t, ctx, `p.done`))
	subs, _ = cc.cat.TopicSubscriptions(ns, "billing")
	require.Len(t, subs, 1)

	// Publish a test message: refused empty, then published and delivered.
	orders, _ := cc.cat.Queue(ns, "orders")
	before := orders.Stats().Visible
	clickAndWait(t, ctx, `form.publish button`)
	yes(t, ctx)
	require.Equal(t, "Invalid parameter: Empty message", text(t, ctx, `form.publish .field-error`))
	require.Zero(t, subs[0].Topic.Metrics().Published)
	fillIn(t, ctx, `form.publish`, "message", "invoice 7 paid", "attr-name", "kind", "attr-value", "invoice")
	clickAndWait(t, ctx, `form.publish button`)
	require.Contains(t, yes(t, ctx), "Publish a message of 14 bytes to billing")
	require.True(t, strings.HasPrefix(text(t, ctx, `p.done`), "Published message "))
	require.Equal(t, before+1, orders.Stats().Visible, "delivered to the subscribed queue")

	// The page of a topic with half an hour of traffic, for docs/console.md.
	traffic(t, cc, 30)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(cc.base+"topic?t=alerts"), chromedp.WaitVisible(chromedp.CSS(`form.publish`))))
	shot(t, ctx, "console-topic.png")
}

// The server page, in a browser: what serves the console, its mappings and its redrives.
func TestConsoleServerPage(t *testing.T) {
	ctx := newBrowser(t)
	started := btStart.Add(-26 * time.Hour) // by the console's clock
	cc := newCatalogConsole(t, fifoqweb.WithVersion("fifoq v0.1.0"), fifoqweb.WithServerInfo(func() fifoqweb.ServerInfo {
		return fifoqweb.ServerInfo{Version: "fifoq v0.1.0", Started: started,
			Store: &fifoqweb.StoreInfo{Path: "/var/lib/fifoq", Sync: "before each acknowledgement (--sync ack)",
				Health: fifoq.StoreHealth{Syncs: 18342, DiskBytes: 48 << 20}},
			Listeners: []fifoqweb.Listener{{Name: "SQS and SNS API", Addr: "http://127.0.0.1:9324"},
				{Name: "metrics and health", Addr: "http://127.0.0.1:9090/metrics"}, {Name: "console (login)", Addr: "http://127.0.0.1:9325/"}}}
	}), fifoqweb.WithMappings(func() []fifoqweb.MappingView {
		return []fifoqweb.MappingView{{Queue: "orders", FunctionURL: "http://127.0.0.1:9000/2015-03-31/functions/bill/invocations",
			BatchSize: 10, Enabled: true, Invocations: 1532, Errors: 3, ItemFailures: 12, InFlight: 2}}
	}))
	ctx2 := context.Background()
	dlq, _ := cc.cat.Queue(catalog.Namespace{}, "orders-dlq")
	for range 4 {
		_, err := dlq.Send(ctx2, fifoq.Message{Body: "dead"})
		require.NoError(t, err)
	}
	_, err := cc.cat.StartMoveTask(ctx2, catalog.Namespace{}, "orders-dlq", "orders", 1) // the manual clock keeps it running
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(cc.base+"server"), chromedp.WaitVisible(chromedp.CSS(`#tasks-h`))))
	page := text(t, ctx, `main`)
	for _, want := range []string{"fifoq v0.1.0", "1d02h", "/var/lib/fifoq", "48.0 MiB", "before each acknowledgement", "working",
		"http://127.0.0.1:9324", "bill/invocations", "1532", "redrive running"} {
		require.Contains(t, page, want)
	}
	shot(t, ctx, "console-server.png")
}

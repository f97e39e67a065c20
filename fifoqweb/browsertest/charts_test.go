package browsertest_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/fifoqweb"
	"github.com/fifoq/fifoq/topic"
)

// btStart is the manual clocks' start.
var btStart = time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)

// catalogConsole is a catalogue, as fifoq serve has one, with the queues orders (whose dead-letter queue is
// orders-dlq, after 2 receives) and jobs.fifo and the topic alerts, which orders subscribes to; its clock, which
// the console samples its charts by; and the console's URL. opts are the console's.
type catalogConsole struct {
	cat  *catalog.Catalog
	clk  *fifoq.ManualClock
	base string
}

func newCatalogConsole(t *testing.T, opts ...fifoqweb.Option) catalogConsole {
	t.Helper()
	ctx := context.Background()
	clk := fifoq.NewManualClock(btStart)
	cat := catalog.New(catalog.WithClock(clk))
	t.Cleanup(func() { _ = cat.Close() })
	ns := catalog.Namespace{}
	for _, name := range []string{"orders-dlq", "jobs.fifo"} {
		_, err := cat.CreateQueue(ctx, ns, name, catalog.Definition{}, 0)
		require.NoError(t, err)
	}
	_, err := cat.CreateQueue(ctx, ns, "orders", catalog.Definition{VisibilityTimeout: 30 * time.Second,
		RedrivePolicy: catalog.RedrivePolicy{DeadLetterQueue: "orders-dlq", MaxReceiveCount: 2}},
		catalog.FieldVisibilityTimeout|catalog.FieldRedrivePolicy)
	require.NoError(t, err)
	_, err = cat.CreateTopic(ctx, ns, "alerts", catalog.TopicDefinition{})
	require.NoError(t, err)
	_, err = cat.Subscribe(ctx, ns, "alerts", catalog.SubscriptionDefinition{Queue: catalog.QueueKey{Name: "orders"},
		FilterPolicy: `{"severity": ["high"]}`})
	require.NoError(t, err)
	h := fifoqweb.NewCatalog(cat, append([]fifoqweb.Option{fifoqweb.WithClock(clk)}, opts...)...)
	t.Cleanup(func() { _ = h.Close() })
	return catalogConsole{cat: cat, clk: clk, base: newServerURL(t, h) + "/"}
}

func newServerURL(t *testing.T, h http.Handler) string {
	srv := newServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// traffic runs minutes of traffic on the queues and the topic of cc, a sample's worth (10 seconds) at a
// time: sends that rise and fall, a consumer that falls behind and catches up, and deletes what it receives
// but poison messages (which go to the dead-letter queue at their third receive), publishes of which a
// quarter pass the filter.
func traffic(t *testing.T, cc catalogConsole, minutes int) {
	t.Helper()
	ctx := context.Background()
	ns := catalog.Namespace{}
	orders, _ := cc.cat.Queue(ns, "orders")
	jobs, _ := cc.cat.Queue(ns, "jobs.fifo")
	alerts, _ := cc.cat.Topic(ns, "alerts")
	batch := make([]fifoq.Message, 10)
	for step := range minutes * 6 {
		x := float64(step) / 18
		sends := 20 + int(15*math.Sin(x)) + step/6
		for i := 0; i < sends; i += 10 {
			for j := range batch {
				batch[j] = fifoq.Message{Body: fmt.Sprintf(`{"order":%d}`, step*100+i+j)}
				if (i+j)%25 == 7 {
					batch[j].Body = fmt.Sprintf(`{"order":%d,"poison":true}`, step*100+i+j)
				}
			}
			_, err := orders.SendBatch(ctx, batch[:min(10, sends-i)])
			require.NoError(t, err)
		}
		consumed := sends + int(12*math.Cos(x/3))
		ds, err := orders.ReceiveMany(ctx, fifoq.ReceiveOptions{MaxMessages: max(consumed, 1)})
		require.NoError(t, err)
		for _, d := range ds {
			if !strings.Contains(d.Body, "poison") { // a poison message fails, and comes back
				require.NoError(t, orders.Delete(ctx, d.ReceiptHandle))
			}
		}
		_, err = jobs.Send(ctx, fifoq.Message{Body: "job " + strconv.Itoa(step), GroupID: "g" + strconv.Itoa(step%3),
			DeduplicationID: strconv.Itoa(step)})
		require.NoError(t, err)
		for i := range 8 {
			sev := map[bool]string{true: "high", false: "low"}[i%4 == 0]
			_, err := alerts.Publish(ctx, topicMessage("disk at "+strconv.Itoa(80+i)+"%", sev))
			require.NoError(t, err)
		}
		cc.clk.Advance(10 * time.Second)
	}
}

// topicMessage is a message to publish with its severity attribute.
func topicMessage(body, severity string) topic.Message {
	return topic.Message{Message: body, Attributes: map[string]fifoq.Attribute{"severity": {DataType: "String", StringValue: severity}}}
}

// The charts appear on the pages, redraw in place after a sample, and change after traffic; an hour of
// them says where its data starts.
func TestConsoleCharts(t *testing.T) {
	ctx := newBrowser(t)
	cc := newCatalogConsole(t)
	orders, _ := cc.cat.Queue(catalog.Namespace{}, "orders")

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(cc.base), chromedp.WaitVisible(chromedp.CSS(`figure.chart svg`))))
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('figure.chart svg').length`))
	require.NoError(t, err)
	require.Equal(t, 3, n, "the three charts of all queues")
	require.Contains(t, svgText(t, ctx, `figure.chart svg`), "No sample yet")

	// A sample: the page redraws its charts without a reload.
	cc.clk.Advance(10 * time.Second)
	waitJS(t, ctx, `document.querySelector('figure.chart svg').dataset.points === "1"`)
	// Traffic, then a sample: the rates show it.
	for i := range 50 {
		_, err := orders.Send(context.Background(), fifoq.Message{Body: "order " + strconv.Itoa(i)})
		require.NoError(t, err)
	}
	cc.clk.Advance(10 * time.Second)
	waitJS(t, ctx, `document.querySelector('figure.chart [data-series="sent"]').dataset.last === "5/s"`)
	waitJS(t, ctx, `document.querySelectorAll('figure.chart')[1].querySelector('[data-series="visible"]').dataset.last === "50"`)

	// 40 minutes of traffic: the queue's page draws them, and says where its data starts.
	traffic(t, cc, 40)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(cc.base+"queue?q=orders"), chromedp.WaitVisible(chromedp.CSS(`#history-h`))))
	points, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('figure.chart svg').dataset.points`))
	require.NoError(t, err)
	require.Equal(t, "242", points, "a sample every 10 seconds")
	require.Contains(t, svgText(t, ctx, `figure.chart svg`), "data from 09:00:10 UTC (the console started then)")
	require.Positive(t, orders.Metrics().DeadLettered)
	path, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('figure.chart [data-series="deadLettered"] path').getAttribute("d")`))
	require.NoError(t, err)
	require.Regexp(t, `[ML][\d.]+ (\d|1[0-3]\d)(\.\d)? `, path, "the dead-letter line leaves the axis (y 140)")
	shotOf(t, ctx, `section[aria-labelledby="history-h"]`, "console-charts.png")
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(cc.base), chromedp.WaitVisible(chromedp.CSS(`#charts-h`))))
	shot(t, ctx, "console-queues.png")
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(cc.base+"topic?t=alerts"), chromedp.WaitVisible(chromedp.CSS(`figure.chart svg`))))
	published, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('figure.chart [data-series="published"]').dataset.last`))
	require.NoError(t, err)
	require.Equal(t, "0.8/s", published, "8 publishes in 10 seconds")
}

// svgText returns the text of the first SVG element sel matches.
func svgText(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(`+strconv.Quote(sel)+`).textContent`))
	require.NoError(t, err, "text of %s", sel)
	return s
}

// shotOf writes a screenshot of the element sel matches to $FIFOQ_SCREENSHOTS/name (see shot).
func shotOf(t *testing.T, ctx context.Context, sel, name string) {
	t.Helper()
	dir := os.Getenv("FIFOQ_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(sel)))
	require.NoError(t, err)
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot %s (%d bytes)", path, len(png))
}

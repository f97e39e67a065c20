package fifoqweb

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/topic"
)

// lineLast returns the value a chart's SVG shows now for its series key, "" when it shows none.
func lineLast(t *testing.T, svg, key string) string {
	t.Helper()
	m := regexp.MustCompile(`data-series="` + key + `"[^>]*?(?: data-last="([^"]*)")?>`).FindStringSubmatch(svg)
	require.NotNil(t, m, "series %s in %s", key, svg)
	return m[1]
}

// chartOf fetches a chart alone.
func chartOf(t *testing.T, c *wtClient, path string) string {
	t.Helper()
	code, svg := c.get(path)
	require.Equal(t, http.StatusOK, code, svg)
	require.True(t, strings.HasPrefix(svg, "<svg "), svg)
	return svg
}

// The charts sample every queue every 10 seconds by the console's clock: the first sample has the counts,
// the next ones the rates over the 10 seconds before; all queues together add them up.
func TestChartsSampleOnTheClock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	qs, h := wtSetup(t)
	c := &wtClient{t: t, h: h}
	svg := chartOf(t, c, "chart.svg?q=orders&c=rates")
	require.Contains(t, svg, "No sample yet")
	require.Contains(t, svg, `data-points="0"`)
	require.Equal(t, uint64(0), h.samp.samples())

	wtSend(t, qs.orders, 5)
	qs.clk.Advance(sampleEvery) // the first sample: counts, no rate
	require.Equal(t, uint64(1), h.samp.samples())
	svg = chartOf(t, c, "chart.svg?q=orders&c=counts")
	require.Contains(t, svg, `data-points="1"`)
	require.Equal(t, "5", lineLast(t, svg, "visible"))
	require.Equal(t, "", lineLast(t, chartOf(t, c, "chart.svg?q=orders&c=rates"), "sent"), "no rate from one sample")

	wtSend(t, qs.orders, 20)
	wtSend(t, qs.dlq, 10)
	ds, err := qs.orders.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10})
	require.NoError(t, err)
	for _, d := range ds[:5] {
		require.NoError(t, qs.orders.Delete(ctx, d.ReceiptHandle))
	}
	qs.clk.Advance(sampleEvery)
	svg = chartOf(t, c, "chart.svg?q=orders&c=rates")
	require.Equal(t, "2/s", lineLast(t, svg, "sent"), "20 in 10 s")
	require.Equal(t, "1/s", lineLast(t, svg, "received"))
	require.Equal(t, "0.5/s", lineLast(t, svg, "deleted"))
	require.Equal(t, "0/s", lineLast(t, svg, "deadLettered"))
	svg = chartOf(t, c, "chart.svg?q=orders&c=counts")
	require.Equal(t, "15", lineLast(t, svg, "visible"))
	require.Equal(t, "5", lineLast(t, svg, "inFlight"))
	require.Equal(t, "10s", lineLast(t, chartOf(t, c, "chart.svg?q=orders&c=age"), "oldest"), "the first 5 deleted, the next sent 10 s ago")
	all := chartOf(t, c, "chart.svg?c=rates")
	require.Equal(t, "3/s", lineLast(t, all, "sent"), "all queues: 30 in 10 s")
	require.Equal(t, "25", lineLast(t, chartOf(t, c, "chart.svg?c=counts"), "visible"))

	// A receive past maxReceiveCount moves the messages to the dead-letter queue: its rate.
	qs.clk.Advance(time.Minute) // the in-flight five come back
	_, err = qs.orders.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10})
	require.NoError(t, err)
	qs.clk.Advance(sampleEvery)
	require.NotEqual(t, "0/s", lineLast(t, chartOf(t, c, "chart.svg?q=orders&c=rates"), "deadLettered"))

	// The page embeds the charts, and counts.json says how many samples there are, for the page script.
	code, page := c.get("queue?q=orders")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, 3, strings.Count(page, `<figure class="chart" data-chart="chart.svg?`), page)
	_, body := c.get("counts.json")
	var counts map[string]liveCounts
	require.NoError(t, json.Unmarshal([]byte(body), &counts))
	require.Equal(t, "9", counts[""].Sampled)
	qs.clk.Advance(sampleEvery)
	_, body = c.get("counts.json")
	require.NoError(t, json.Unmarshal([]byte(body), &counts))
	require.Equal(t, "10", counts[""].Sampled)
}

// A chart whose data starts within its hour shades the time before and says why; an hour later it does not.
// The ring keeps an hour: 360 points, whatever the time sampled. Close stops the sampling.
func TestChartsSayWhereTheirDataStarts(t *testing.T) {
	t.Parallel()
	qs, h := wtSetup(t)
	c := &wtClient{t: t, h: h}
	qs.clk.Advance(sampleEvery)
	svg := chartOf(t, c, "chart.svg?q=orders&c=counts")
	require.Contains(t, svg, "data from 00:00:10 UTC (the console started then)")
	require.Contains(t, svg, `class="nodata"`)

	// A queue first seen later: its series starts then.
	late, err := fifoq.New("late", fifoq.WithClock(qs.clk))
	require.NoError(t, err)
	set := map[string]*fifoq.Queue{"orders": qs.orders, "late": late}
	h2 := New(func() map[string]*fifoq.Queue { return set }, WithClock(qs.clk))
	t.Cleanup(func() { _ = h2.Close() })
	c2 := &wtClient{t: t, h: h2}
	qs.clk.Advance(sampleEvery)
	require.Contains(t, chartOf(t, c2, "chart.svg?q=late&c=counts"), "(the console started then)")
	replaced, err := fifoq.New("late", fifoq.WithClock(qs.clk))
	require.NoError(t, err)
	set["late"] = replaced // deleted and made again under the same name: another queue
	qs.clk.Advance(sampleEvery)
	svg = chartOf(t, c2, "chart.svg?q=late&c=counts")
	require.Contains(t, svg, "data from 00:00:30 UTC (first seen then)")
	require.Contains(t, svg, `data-points="1"`)

	qs.clk.Advance(2 * time.Hour)
	svg = chartOf(t, c, "chart.svg?q=orders&c=counts")
	require.NotContains(t, svg, "data from", "the data spans the hour")
	require.Contains(t, svg, `data-points="360"`, "an hour of samples, no more")
	h.samp.mu.Lock()
	n := h.samp.queues["orders"].points.n
	h.samp.mu.Unlock()
	require.Equal(t, samplesKept, n)

	taken := h.samp.samples()
	require.NoError(t, h.Close())
	qs.clk.Advance(time.Hour)
	require.Equal(t, taken, h.samp.samples(), "Close stops the sampling")
	require.Equal(t, http.StatusOK, c.must("chart.svg?q=orders&c=rates"), "the console goes on serving")
}

func (c *wtClient) must(path string) int {
	code, _ := c.get(path)
	return code
}

// The memory of a queue's series is what docs/console.md says.
func TestSeriesBytes(t *testing.T) {
	t.Parallel()
	require.Equal(t, queueSeriesSize, int(unsafe.Sizeof(queueSeries{})))
	t.Logf("a queue's series: %d bytes (%d points of %d bytes); a topic's: %d bytes", unsafe.Sizeof(queueSeries{}),
		samplesKept, unsafe.Sizeof(queuePoint{}), unsafe.Sizeof(topicSeries{}))
	require.Equal(t, 36, int(unsafe.Sizeof(queuePoint{})))
	require.Equal(t, 20, int(unsafe.Sizeof(topicPoint{})))
}

// A topic's page draws its publishes and deliveries a second.
func TestTopicChart(t *testing.T) {
	t.Parallel()
	clk := fifoq.NewManualClock(wtStart)
	q, err := fifoq.New("pager", fifoq.WithClock(clk))
	require.NoError(t, err)
	alerts, err := topic.New("alerts", topic.WithClock(clk))
	require.NoError(t, err)
	_, err = alerts.Subscribe(q, topic.SubscriptionAttributes{FilterPolicy: `{"sev": ["high"]}`})
	require.NoError(t, err)
	h := New(Queues(q), WithClock(clk), WithTopics(func() map[string]*topic.Topic { return map[string]*topic.Topic{"alerts": alerts} }))
	t.Cleanup(func() { _ = h.Close() })
	c := &wtClient{t: t, h: h}
	clk.Advance(sampleEvery)
	for i := range 40 {
		sev := "low"
		if i%4 == 0 {
			sev = "high"
		}
		_, err := alerts.Publish(context.Background(), topic.Message{Message: "m",
			Attributes: map[string]fifoq.Attribute{"sev": {DataType: "String", StringValue: sev}}})
		require.NoError(t, err)
	}
	clk.Advance(sampleEvery)
	svg := chartOf(t, c, "chart.svg?t=alerts&c=topic")
	require.Equal(t, "4/s", lineLast(t, svg, "published"))
	require.Equal(t, "1/s", lineLast(t, svg, "delivered"))
	require.Equal(t, "3/s", lineLast(t, svg, "filteredOut"))
	code, page := c.get("topic?t=alerts")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, page, `data-chart="chart.svg?c=topic&amp;t=alerts"`)
	code, _ = c.get("chart.svg?t=nope&c=topic")
	require.Equal(t, http.StatusNotFound, code)
	code, _ = c.get("chart.svg?q=nope&c=rates")
	require.Equal(t, http.StatusNotFound, code)
	code, _ = c.get("chart.svg?c=pie")
	require.Equal(t, http.StatusBadRequest, code)
}

// The drawing: each line its own dash pattern and marker, the legend with both and the values now, a
// line broken where a sample is missing, the description for a screen reader.
func TestDrawChart(t *testing.T) {
	t.Parallel()
	now := wtStart.Add(time.Hour)
	times := []time.Time{now.Add(-40 * time.Second), now.Add(-30 * time.Second), now.Add(-20 * time.Second), now.Add(-10 * time.Second)}
	c := chart{ID: "x", Title: "Queue <q>: things", Now: now, Times: times, Format: formatRate,
		Since: times[0], Why: "the console started then",
		Lines: []chartLine{{"a", "sent", []float64{math.NaN(), 1, 2, 3}}, {"b", "received", []float64{0, 0.5, math.NaN(), 0.25}}}}
	svg := drawChart(c)
	require.Contains(t, svg, `<title id="x-t">Queue &lt;q&gt;: things</title>`, "escaped")
	require.Contains(t, svg, "Now: sent 3/s, received 0.25/s.")
	require.Contains(t, svg, "data from 00:59:20 UTC (the console started then)")
	require.Contains(t, svg, `stroke-dasharray="7 4"`, "the second line is dashed")
	require.Equal(t, 2, strings.Count(svg, "<rect class=\"mark\""), "the second line's markers: at its end and in the legend")
	require.Equal(t, 2, strings.Count(svg, "<circle class=\"mark\""))
	b := regexp.MustCompile(`data-series="b"[^>]*><path d="([^"]*)"`).FindStringSubmatch(svg)
	require.NotNil(t, b)
	require.Equal(t, 2, strings.Count(b[1], "M"), "broken at the missing sample: %s", b[1])
	require.Contains(t, svg, ">4/s<", "the axis tops at a round value")

	require.Equal(t, 1.0, niceStep(0))
	require.Equal(t, 0.5, niceStep(0.3))
	require.Equal(t, 2.0, niceStep(2))
	require.Equal(t, 50.0, niceStep(21))
	require.Equal(t, 600.0, durationStep(500), "10 minutes, not 8m20s")
	require.Equal(t, 2*86400.0, durationStep(100000))
	for v, want := range map[float64]string{0: "0", 0.25: "0.25", 3.5: "3.5", 12.4: "12", 1500: "1.5k", 25000: "25k", 2.5e6: "2.5M"} {
		require.Equal(t, want, formatCount(v), "%v", v)
	}
	for v, want := range map[float64]string{0: "0", 45: "45s", 60: "1m", 150: "2m30s", 3900: "1h05m", 7200: "2h"} {
		require.Equal(t, want, formatSeconds(v), "%v", v)
	}
}

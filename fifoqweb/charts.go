package fifoqweb

import (
	"html/template"
	"math"
	"net/http"
	"time"
)

// The charts of the pages: a queue's (or all queues') rates, counts and oldest age, a topic's rates, drawn
// from the sampler's series; and chart.svg, which serves one alone, for the page script to redraw it in place.

// The charts a queue has, by the c parameter of chart.svg.
const (
	chartRates  = "rates"
	chartCounts = "counts"
	chartAge    = "age"
	chartTopic  = "topic"
)

// A chartView is a chart as a page embeds it: its SVG, and the URL the page script redraws it from.
type chartView struct {
	SVG template.HTML // drawChart escapes every text it draws
	URL string
}

// queueChart returns the chart kind of the queue name ("" for all queues).
func (h *Handler) queueChart(name, kind string) chart {
	hist := h.samp.queueHistory(name)
	now := h.clock.Now()
	c := chart{ID: "chart-" + kind, Now: now, Since: hist.since, Why: "first seen then", Format: formatCount,
		Empty: "No sample yet: the first comes within " + sampleEvery.String() + "."}
	if hist.first {
		c.Why = "the console started then"
	}
	if hist.capped {
		c.Empty = "Not sampled: the console samples its first 1000 queues by name."
	}
	of := "Queue " + name
	if name == "" {
		of = "All queues"
	}
	c.Times = make([]time.Time, len(hist.points))
	for i, p := range hist.points {
		c.Times[i] = hist.start.Add(time.Duration(p.at) * tick)
	}
	// rate returns, for each point, what f counts in its interval over the interval's length; NaN for the
	// first point, which has none.
	rate := func(f func(queuePoint) uint32) []float64 {
		out := make([]float64, len(hist.points))
		for i, p := range hist.points {
			out[i] = math.NaN()
			if i > 0 && p.at > hist.points[i-1].at {
				out[i] = float64(f(p)) / (float64(p.at-hist.points[i-1].at) * tick.Seconds())
			}
		}
		return out
	}
	gauge := func(f func(queuePoint) uint32) []float64 {
		out := make([]float64, len(hist.points))
		for i, p := range hist.points {
			out[i] = float64(f(p))
		}
		return out
	}
	switch kind {
	case chartRates:
		c.Title, c.Format = of+": messages a second", formatRate
		c.Lines = []chartLine{
			{"sent", "sent", rate(func(p queuePoint) uint32 { return p.sent })},
			{"received", "received", rate(func(p queuePoint) uint32 { return p.received })},
			{"deleted", "deleted", rate(func(p queuePoint) uint32 { return p.deleted })},
			{"deadLettered", "dead-lettered", rate(func(p queuePoint) uint32 { return p.deadLettered })},
		}
	case chartCounts:
		c.Title = of + ": messages stored"
		c.Lines = []chartLine{
			{"visible", "visible", gauge(func(p queuePoint) uint32 { return p.visible })},
			{"inFlight", "in flight", gauge(func(p queuePoint) uint32 { return p.inFlight })},
			{"delayed", "delayed", gauge(func(p queuePoint) uint32 { return p.delayed })},
		}
	case chartAge:
		c.Title, c.Format, c.Step = of+": age of the oldest message", formatSeconds, durationStep
		c.Lines = []chartLine{{"oldest", "oldest message", gauge(func(p queuePoint) uint32 { return p.oldest })}}
	}
	if name == "" && kind == chartAge {
		c.Title = "All queues: age of the oldest message of any queue"
	}
	return c
}

// topicChart returns the chart of the topic name: its publishes and deliveries a second.
func (h *Handler) topicChart(name string) chart {
	hist := h.samp.topicHistory(name)
	c := chart{ID: "chart-topic", Title: "Topic " + name + ": messages a second", Now: h.clock.Now(), Since: hist.since,
		Why: "first seen then", Format: formatRate, Empty: "No sample yet: the first comes within " + sampleEvery.String() + "."}
	if hist.first {
		c.Why = "the console started then"
	}
	c.Times = make([]time.Time, len(hist.points))
	for i, p := range hist.points {
		c.Times[i] = hist.start.Add(time.Duration(p.at) * tick)
	}
	rate := func(f func(topicPoint) uint32) []float64 {
		out := make([]float64, len(hist.points))
		for i, p := range hist.points {
			out[i] = math.NaN()
			if i > 0 && p.at > hist.points[i-1].at {
				out[i] = float64(f(p)) / (float64(p.at-hist.points[i-1].at) * tick.Seconds())
			}
		}
		return out
	}
	c.Lines = []chartLine{
		{"published", "published", rate(func(p topicPoint) uint32 { return p.published })},
		{"delivered", "delivered", rate(func(p topicPoint) uint32 { return p.delivered })},
		{"filteredOut", "filtered out", rate(func(p topicPoint) uint32 { return p.filteredOut })},
		{"failed", "failed", rate(func(p topicPoint) uint32 { return p.failed })},
	}
	return c
}

// queueCharts returns the three charts of the queue name ("" for all queues), for a page.
func (h *Handler) queueCharts(name string) []chartView {
	var out []chartView
	for _, kind := range []string{chartRates, chartCounts, chartAge} {
		out = append(out, chartView{SVG: template.HTML(drawChart(h.queueChart(name, kind))),
			URL: query("chart.svg", "q", name, "c", kind)})
	}
	return out
}

// topicCharts returns the chart of the topic name, for its page.
func (h *Handler) topicCharts(name string) []chartView {
	return []chartView{{SVG: template.HTML(drawChart(h.topicChart(name))), URL: query("chart.svg", "t", name, "c", chartTopic)}}
}

// chartSVG serves one chart: chart.svg?c=rates|counts|age&q=queue ("" or none for all queues), or
// chart.svg?c=topic&t=topic.
func (h *Handler) chartSVG(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var c chart
	switch kind := q.Get("c"); kind {
	case chartRates, chartCounts, chartAge:
		name := q.Get("q")
		if name != "" {
			if _, ok := h.b.lookup(name); !ok {
				h.failLookup(w, r, errUnknownQueue)
				return
			}
		}
		c = h.queueChart(name, kind)
	case chartTopic:
		if _, ok := h.findTopic(q.Get("t")); !ok {
			h.fail(w, r, http.StatusNotFound, "no topic named "+q.Get("t")+" in this console")
			return
		}
		c = h.topicChart(q.Get("t"))
	default:
		h.fail(w, r, http.StatusBadRequest, "chart "+kind+": want rates, counts, age or topic")
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "no-store")
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte(drawChart(c)))
	}
}

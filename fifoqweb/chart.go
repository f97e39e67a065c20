package fifoqweb

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"time"
)

// The charts: SVG drawn by the server from a series, with no script and nothing from outside. Each line has
// its own dash pattern and end marker besides its colour, and the legend shows both, so that a chart reads
// without colour; the SVG's title and description give its values now, for a screen reader.

// chartWindow is the time a chart spans, up to now.
const chartWindow = time.Hour

// A chartLine is a series of values, one a point (NaN for none: the line breaks there).
type chartLine struct {
	Key, Name string // its data-series key, and its name in the legend
	Values    []float64
}

// A chart is what drawChart draws.
type chart struct {
	ID, Title string
	Now       time.Time
	Times     []time.Time // of the points, oldest first
	Lines     []chartLine // at most len(lineStyles)
	Format    func(float64) string
	// Step returns the step of the value axis for a raw step: niceStep, or durationStep for seconds.
	Step func(float64) float64
	// Since is the first sample of the data: a chart whose data starts within the window shades the time
	// before it and says why (Why: "the console started", "first seen").
	Since time.Time
	Why   string
	Empty string // said when there is no point yet
}

// textAttrs are the presentation attributes of a chart's text, for an SVG opened alone.
var textAttrs = ` fill="#444" font-size="` + strconv.Itoa(chartFontSize) + `" font-family="system-ui,sans-serif"`

// lineStyles are the lines' dash patterns and end markers, in order.
var lineStyles = []struct{ dash, marker, colour string }{
	{"", "circle", "#0b57d0"}, {"7 4", "square", "#b3261e"}, {"2 3", "triangle", "#1e7b34"}, {"9 3 2 3", "diamond", "#7a4f00"},
}

// The chart's geometry, in the units of its viewBox.
const (
	chartW, chartH       = 640, 190
	plotX0, plotX1       = 60, 628
	plotY0, plotY1       = 10, 140
	axisLabelY, legendY  = 156, 178
	gapFactor            = 2.5 // points further apart than this many sample intervals are not joined
	yTicks               = 4
	chartFontSize        = 11
	legendItemWidth      = 145
	legendSwatchWidth    = 24
	chartMinNiceFraction = 1e-9
)

// drawChart returns the SVG of c.
func drawChart(c chart) string {
	var b strings.Builder
	esc := html.EscapeString
	from := c.Now.Add(-chartWindow)
	x := func(t time.Time) float64 {
		f := float64(t.Sub(from)) / float64(chartWindow)
		return plotX0 + math.Max(0, math.Min(1, f))*(plotX1-plotX0)
	}
	top := 0.0
	for _, l := range c.Lines {
		for i, v := range l.Values {
			if !math.IsNaN(v) && !c.Times[i].Before(from) {
				top = math.Max(top, v)
			}
		}
	}
	stepOf := c.Step
	if stepOf == nil {
		stepOf = niceStep
	}
	step := stepOf(top * 1.05 / yTicks) // some room above the highest point
	top = step * yTicks
	y := func(v float64) float64 { return plotY1 - v/top*(plotY1-plotY0) }

	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" class="chart" role="img" aria-labelledby="%s-t %s-d" data-points="%d">`,
		chartW, chartH, esc(c.ID), esc(c.ID), len(c.Times))
	fmt.Fprintf(&b, `<title id="%s-t">%s</title><desc id="%s-d">%s</desc>`, esc(c.ID), esc(c.Title), esc(c.ID), esc(describe(c)))
	// The grid and the value axis.
	for i := 0; i <= yTicks; i++ {
		v := step * float64(i)
		fmt.Fprintf(&b, `<line class="grid" x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>`, plotX0, plotX1, y(v), y(v))
		fmt.Fprintf(&b, `<text class="axis" x="%d" y="%.1f" text-anchor="end"%s>%s</text>`, plotX0-6, y(v)+4, textAttrs, esc(c.Format(v)))
	}
	// The time axis: every quarter of an hour, back from now.
	for i := 0; i <= 4; i++ {
		t := c.Now.Add(-chartWindow + time.Duration(i)*chartWindow/4)
		label := fmt.Sprintf("−%d min", int(c.Now.Sub(t).Minutes()))
		if i == 4 {
			label = "now"
		}
		fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%d" text-anchor="middle"%s>%s</text>`, x(t), axisLabelY, textAttrs, label)
	}
	// Where the data starts, when within the window.
	if !c.Since.IsZero() && c.Since.After(from) {
		xs := x(c.Since)
		fmt.Fprintf(&b, `<rect class="nodata" x="%d" y="%d" width="%.1f" height="%d" fill="#f1f1f1"/>`, plotX0, plotY0, xs-plotX0, plotY1-plotY0)
		fmt.Fprintf(&b, `<line class="since" x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#555" stroke-dasharray="3 3"/>`, xs, xs, plotY0, plotY1)
		anchor, tx := "end", xs-4
		if xs-plotX0 < 200 {
			anchor, tx = "start", xs+4
		}
		fmt.Fprintf(&b, `<text class="since" x="%.1f" y="%d" text-anchor="%s"%s>data from %s UTC (%s)</text>`,
			tx, plotY0+12, anchor, textAttrs, c.Since.UTC().Format("15:04:05"), esc(c.Why))
	}
	if len(c.Times) == 0 {
		fmt.Fprintf(&b, `<text class="empty" x="%d" y="%d" text-anchor="middle"%s>%s</text>`, (plotX0+plotX1)/2, (plotY0+plotY1)/2, textAttrs, esc(c.Empty))
	}
	// The lines.
	for i, l := range c.Lines {
		st := lineStyles[i%len(lineStyles)]
		last, lastX, lastY := math.NaN(), 0.0, 0.0
		fmt.Fprintf(&b, `<g class="line s%d" data-series="%s" stroke="%s" fill="%s"`, i+1, esc(l.Key), st.colour, st.colour)
		var path strings.Builder
		pen := false
		for j, v := range l.Values {
			t := c.Times[j]
			if math.IsNaN(v) || t.Before(from) {
				pen = false
				continue
			}
			if j > 0 && t.Sub(c.Times[j-1]) > time.Duration(gapFactor*float64(sampleEvery)) {
				pen = false
			}
			cmd := "L"
			if !pen {
				cmd = "M"
			}
			fmt.Fprintf(&path, "%s%.1f %.1f ", cmd, x(t), y(v))
			pen = true
			last, lastX, lastY = v, x(t), y(v)
		}
		if !math.IsNaN(last) {
			fmt.Fprintf(&b, ` data-last="%s">`, esc(c.Format(last)))
		} else {
			b.WriteString(`>`)
		}
		if path.Len() > 0 {
			fmt.Fprintf(&b, `<path d="%s" fill="none" stroke-width="2"%s/>`, strings.TrimSpace(path.String()), dashAttr(st.dash))
			b.WriteString(marker(st.marker, lastX, lastY))
		}
		b.WriteString(`</g>`)
	}
	// The legend: each line's pattern and marker, its name and its value now.
	for i, l := range c.Lines {
		st := lineStyles[i%len(lineStyles)]
		lx := float64(plotX0 + i*legendItemWidth)
		now := "–"
		if v := lastValue(l.Values); !math.IsNaN(v) {
			now = c.Format(v)
		}
		fmt.Fprintf(&b, `<g class="legend s%d" stroke="%s" fill="%s"><line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke-width="2"%s/>%s<text x="%.1f" y="%d" stroke="none" fill="#1b1b1b" font-size="%d">%s %s</text></g>`,
			i+1, st.colour, st.colour, lx, lx+legendSwatchWidth, legendY-4, legendY-4, dashAttr(st.dash), marker(st.marker, lx+legendSwatchWidth/2, legendY-4),
			lx+legendSwatchWidth+5, legendY, chartFontSize, esc(l.Name), esc(now))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

func dashAttr(dash string) string {
	if dash == "" {
		return ""
	}
	return ` stroke-dasharray="` + dash + `"`
}

// marker returns the SVG of a line's end marker at x, y.
func marker(kind string, x, y float64) string {
	const r = 3.5
	switch kind {
	case "square":
		return fmt.Sprintf(`<rect class="mark" x="%.1f" y="%.1f" width="%.1f" height="%.1f"/>`, x-r, y-r, 2*r, 2*r)
	case "triangle":
		return fmt.Sprintf(`<path class="mark" d="M%.1f %.1fL%.1f %.1fL%.1f %.1fZ"/>`, x, y-r-1, x+r+1, y+r, x-r-1, y+r)
	case "diamond":
		return fmt.Sprintf(`<path class="mark" d="M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ"/>`, x, y-r-1, x+r+1, y, x, y+r+1, x-r-1, y)
	}
	return fmt.Sprintf(`<circle class="mark" cx="%.1f" cy="%.1f" r="%.1f"/>`, x, y, r)
}

// describe says what a chart shows, and its values now, for its description.
func describe(c chart) string {
	var parts []string
	for _, l := range c.Lines {
		v := lastValue(l.Values)
		if math.IsNaN(v) {
			parts = append(parts, l.Name+" not yet known")
			continue
		}
		parts = append(parts, l.Name+" "+c.Format(v))
	}
	s := "The last hour, sampled every " + sampleEvery.String() + "."
	if len(parts) > 0 {
		s += " Now: " + strings.Join(parts, ", ") + "."
	}
	if !c.Since.IsZero() && c.Since.After(c.Now.Add(-chartWindow)) {
		s += " Data from " + c.Since.UTC().Format("15:04:05") + " UTC (" + c.Why + ")."
	}
	return s
}

func lastValue(vs []float64) float64 {
	for i := len(vs) - 1; i >= 0; i-- {
		if !math.IsNaN(vs[i]) {
			return vs[i]
		}
	}
	return math.NaN()
}

// niceStep returns the smallest of 1, 2 and 5 times a power of ten that is at least raw; 1 for raw 0.
func niceStep(raw float64) float64 {
	if raw <= chartMinNiceFraction {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw*(1-1e-12) {
			return m * p
		}
	}
	return 10 * p
}

// durationSteps are the steps of a value axis in seconds: those a clock shows.
var durationSteps = []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400}

// durationStep returns the smallest of durationSteps that is at least raw seconds, or a whole number of days.
func durationStep(raw float64) float64 {
	for _, s := range durationSteps {
		if s >= raw {
			return s
		}
	}
	return math.Ceil(raw/86400) * 86400
}

// formatRate formats a rate a second.
func formatRate(v float64) string { return formatCount(v) + "/s" }

// formatCount formats a number shortly: 0, 0.25, 3.5, 120, 4.5k, 1.2M.
func formatCount(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return trimFloat(v/1e6, 1) + "M"
	case a >= 1e4:
		return trimFloat(v/1e3, 0) + "k"
	case a >= 1e3:
		return trimFloat(v/1e3, 1) + "k"
	case a >= 10 || a == math.Trunc(a):
		return trimFloat(v, 0)
	case a >= 1:
		return trimFloat(v, 1)
	}
	return trimFloat(v, 2)
}

func trimFloat(v float64, prec int) string {
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// formatSeconds formats an age in seconds: 0, 45s, 2m30s, 1h05m.
func formatSeconds(v float64) string {
	d := time.Duration(v * float64(time.Second)).Round(time.Second)
	switch {
	case d <= 0:
		return "0"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		if d%time.Minute == 0 {
			return fmt.Sprintf("%dm", int(d.Minutes()))
		}
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	if d%time.Hour == 0 {
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

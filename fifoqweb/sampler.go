package fifoqweb

import (
	"sync"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/topic"
)

// The charts' data: every sampleEvery the console reads each queue's Metrics and each topic's, and keeps the
// last samplesKept of them in a ring per queue and per topic (and one for all queues together), in the
// process: nothing is stored, so after a restart a chart starts again, and says where. A queue's ring is
// a fixed array of small points, whatever its traffic (docs/console.md states its size; TestSeriesBytes
// holds it).

const (
	// sampleEvery is the time between two samples.
	sampleEvery = 10 * time.Second
	// samplesKept is the number of samples a ring holds: an hour of them.
	samplesKept = 360
	// maxSampledQueues bounds the queues (and, apart, the topics) sampled: the first ones by name. A console
	// of more shows no chart for the others, and says so.
	maxSampledQueues = 1000
	// tick is the unit of a point's time: a tenth of a second, so that a uint32 spans 13 years.
	tick = 100 * time.Millisecond
)

// A queuePoint is one sample of a queue: what happened in the interval that ends at it, and its counts at
// it. The first point of a series has no interval: its rates are not drawn.
type queuePoint struct {
	at                                    uint32 // ticks after the sampler's start
	sent, received, deleted, deadLettered uint32 // counted in the interval before at
	visible, inFlight, delayed            uint32
	oldest                                uint32 // the age of the oldest message, in seconds
}

// A topicPoint is one sample of a topic: what it did in the interval that ends at it.
type topicPoint struct {
	at                                        uint32
	published, delivered, filteredOut, failed uint32
}

// A ring holds the last samplesKept points of a series, oldest first from start.
type ring[P any] struct {
	buf   [samplesKept]P
	n     int // points held
	start int // index of the oldest
}

func (r *ring[P]) add(p P) {
	if r.n < samplesKept {
		r.buf[(r.start+r.n)%samplesKept] = p
		r.n++
		return
	}
	r.buf[r.start] = p
	r.start = (r.start + 1) % samplesKept
}

// points returns a copy of the points, oldest first.
func (r *ring[P]) points() []P {
	out := make([]P, r.n)
	for i := range out {
		out[i] = r.buf[(r.start+i)%samplesKept]
	}
	return out
}

// queueSeries is a queue's samples.
type queueSeries struct {
	q      queue          // the queue sampled: another one under the same name starts a new series
	since  time.Time      // the time of its first sample
	last   fifoq.Counters // the counters at the last sample
	points ring[queuePoint]
}

// topicSeries is a topic's samples.
type topicSeries struct {
	ident  any // the topic sampled (its *topic.Topic, or catalog.Topic view)
	since  time.Time
	last   topic.Metrics
	points ring[topicPoint]
}

// A sampler keeps the series. Its timer runs on the Handler's clock; Close stops it.
type sampler struct {
	clock fifoq.Clock
	start time.Time // when it started: the points' times count from it

	mu     sync.Mutex // guards the fields below
	queues map[string]*queueSeries
	topics map[string]*topicSeries
	total  queueSeries // all queues together
	taken  uint64      // samples taken
	first  time.Time   // the time of the first sample: no chart has data before
	capped int         // queues left out of the last sample (over maxSampledQueues)

	runMu  sync.Mutex // held by a sample under way, and by stop
	timer  fifoq.Timer
	closed bool
}

// startSampler schedules the samples, every sampleEvery by the Handler's clock from now, until stop. The
// first is taken sampleEvery from now, not at once: a program may make its console before its queues.
func (h *Handler) startSampler() {
	s := &sampler{clock: h.clock, start: h.clock.Now(), queues: make(map[string]*queueSeries),
		topics: make(map[string]*topicSeries)}
	h.samp = s
	s.runMu.Lock()
	defer s.runMu.Unlock()
	s.timer = s.clock.AfterFunc(sampleEvery, h.tick)
}

// tick takes a sample and schedules the next: at the next multiple of sampleEvery after the start, so that
// samples do not drift with the time each takes.
func (h *Handler) tick() {
	s := h.samp
	s.runMu.Lock()
	defer s.runMu.Unlock()
	if s.closed {
		return
	}
	now := s.clock.Now()
	h.sample(now)
	next := s.start.Add((now.Sub(s.start)/sampleEvery + 1) * sampleEvery)
	s.timer = s.clock.AfterFunc(next.Sub(now), h.tick)
}

// stop stops the sampling, waiting for a sample under way. It is safe to call again.
func (s *sampler) stop() {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	s.closed = true
	if s.timer != nil {
		s.timer.Stop()
	}
}

// sample reads every queue's and topic's metrics and adds them to their series.
func (h *Handler) sample(now time.Time) {
	qs := h.list()
	capped := 0
	if len(qs) > maxSampledQueues {
		capped, qs = len(qs)-maxSampledQueues, qs[:maxSampledQueues]
	}
	ms := make([]fifoq.Metrics, len(qs))
	for i, n := range qs {
		ms[i] = n.Q.Metrics()
	}
	ts := h.b.topics()
	if len(ts) > maxSampledQueues {
		ts = ts[:maxSampledQueues]
	}
	s := h.samp
	at := uint32(now.Sub(s.start) / tick)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.taken == 0 {
		s.first, s.total.since = now, now
	}
	s.taken++
	s.capped = capped
	total := queuePoint{at: at}
	seen := make(map[string]bool, len(qs))
	for i, n := range qs {
		seen[n.Name] = true
		m := ms[i]
		se := s.queues[n.Name]
		p := queuePoint{at: at, visible: clamp(m.Visible), inFlight: clamp(m.InFlight), delayed: clamp(m.Delayed),
			oldest: clamp(int(m.OldestAge / time.Second))}
		if se == nil || se.q != n.Q || counterFell(se.last, m.Counters) {
			se = &queueSeries{q: n.Q, since: now}
			s.queues[n.Name] = se
		} else {
			p.sent = delta(se.last.Sent, m.Sent)
			p.received = delta(se.last.Received, m.Received)
			p.deleted = delta(se.last.Deleted, m.Deleted)
			p.deadLettered = delta(se.last.DeadLettered, m.DeadLettered)
		}
		se.last = m.Counters
		se.points.add(p)
		total.sent += p.sent
		total.received += p.received
		total.deleted += p.deleted
		total.deadLettered += p.deadLettered
		total.visible += p.visible
		total.inFlight += p.inFlight
		total.delayed += p.delayed
		total.oldest = max(total.oldest, p.oldest)
	}
	for name := range s.queues {
		if !seen[name] {
			delete(s.queues, name)
		}
	}
	s.total.points.add(total)
	seenTopics := make(map[string]bool, len(ts))
	for _, t := range ts {
		seenTopics[t.view.Name] = true
		m := t.view.Metrics
		se := s.topics[t.view.Name]
		p := topicPoint{at: at}
		if se == nil || se.ident != t.ident || m.Published < se.last.Published || m.Delivered < se.last.Delivered {
			se = &topicSeries{ident: t.ident, since: now}
			s.topics[t.view.Name] = se
		} else {
			p.published = delta(se.last.Published, m.Published)
			p.delivered = delta(se.last.Delivered, m.Delivered)
			p.filteredOut = delta(se.last.FilteredOut, m.FilteredOut)
			p.failed = delta(se.last.Failed, m.Failed)
		}
		se.last = m
		se.points.add(p)
	}
	for name := range s.topics {
		if !seenTopics[name] {
			delete(s.topics, name)
		}
	}
}

// counterFell reports whether a counter went down: the queue's counts started again (a queue opened again
// from its store under the same *Queue cannot do this; a view of another queue can).
func counterFell(last, now fifoq.Counters) bool {
	return now.Sent < last.Sent || now.Received < last.Received || now.Deleted < last.Deleted ||
		now.DeadLettered < last.DeadLettered
}

// delta returns now-last, at most what a uint32 holds.
func delta(last, now uint64) uint32 {
	if now < last {
		return 0
	}
	return uint32(min(now-last, 1<<32-1))
}

func clamp(n int) uint32 { return uint32(min(max(n, 0), 1<<32-1)) }

// A queueHistory is a copy of a series, for a chart.
type queueHistory struct {
	since  time.Time // its first sample; zero when there is none
	first  bool      // since is the sampler's first sample (the console started then), not a later first look
	points []queuePoint
	start  time.Time // the sampler's start, which point times count from
	capped bool      // the queue is not sampled: the console has too many
}

// queueHistory returns the series of the queue name, or of all queues for "".
func (s *sampler) queueHistory(name string) queueHistory {
	s.mu.Lock()
	defer s.mu.Unlock()
	se := &s.total
	if name != "" {
		if se = s.queues[name]; se == nil {
			return queueHistory{start: s.start, capped: s.capped > 0}
		}
	}
	return queueHistory{since: se.since, first: se.since.Equal(s.first), points: se.points.points(), start: s.start}
}

// A topicHistory is a copy of a topic's series.
type topicHistory struct {
	since  time.Time
	first  bool
	points []topicPoint
	start  time.Time
}

func (s *sampler) topicHistory(name string) topicHistory {
	s.mu.Lock()
	defer s.mu.Unlock()
	se := s.topics[name]
	if se == nil {
		return topicHistory{start: s.start}
	}
	return topicHistory{since: se.since, first: se.since.Equal(s.first), points: se.points.points(), start: s.start}
}

// samples returns the number of samples taken, which the page script watches to redraw the charts.
func (s *sampler) samples() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.taken
}

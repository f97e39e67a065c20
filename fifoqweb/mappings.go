package fifoqweb

import (
	"strconv"
	"time"
)

// A MappingView is an event source mapping from a queue to a function, as a queue's page shows it: its
// settings, and its counts now. The console does not run mappings: the program that runs them (fifoq serve,
// with package lambdaevents' Invoker) fills these in, so this package depends on nothing of theirs.
type MappingView struct {
	// Queue is the console's name of the queue the mapping polls: the page of that queue shows it.
	Queue string
	// FunctionURL is where the batches go. Leave a password out of it (url.URL.Redacted).
	FunctionURL string
	// BatchSize is the most records in one invocation.
	BatchSize int
	// BatchingWindow is how long a batch may gather records (MaximumBatchingWindowInSeconds); 0 for none.
	BatchingWindow time.Duration
	// MaximumConcurrency is the mapping's ScalingConfig.MaximumConcurrency; 0 for none of its own.
	MaximumConcurrency int
	// Concurrency is the most invocations the mapping runs at once, all bounds taken into account.
	Concurrency int
	// FunctionTimeout is how long an invocation may take before it fails its batch.
	FunctionTimeout time.Duration
	// ReportBatchItemFailures is whether the function may answer with batch item failures
	// (FunctionResponseTypes).
	ReportBatchItemFailures bool
	// Enabled is whether the mapping polls its queue.
	Enabled bool
	// State says what keeps an enabled mapping from polling, such as "its queue was deleted"; "" while it
	// polls (or backs off from an unreachable function: see Backoff).
	State string
	// Invocations counts the invocations that reached the function.
	Invocations uint64
	// Errors counts the invocations that failed their whole batch, of every kind, unreachable function
	// included.
	Errors uint64
	// ItemFailures counts the batch item failures the function reported.
	ItemFailures uint64
	// InFlight is the number of invocations under way now.
	InFlight int
	// Backoff is the wait before the mapping polls again while its function is unreachable; 0 otherwise.
	Backoff time.Duration
}

// WithMappings shows on each queue's page the event source mappings of that queue, from mappings, called at
// each request for a page or for the counts the pages refresh. It should return the mappings in the same
// order at each call (the page script finds each mapping's counts by its place in the list). Defaults to
// none: the pages show no mappings.
func WithMappings(mappings func() []MappingView) Option {
	return func(h *Handler) { h.mappings = mappings }
}

// A mappingRow is a mapping as a queue's page shows it.
type mappingRow struct {
	Key                          string // its key in counts.json
	FunctionURL                  string
	BatchSize                    int
	Window, Concurrency, Timeout string
	Report, Enabled              bool
	mappingCounts
}

// mappingCounts are a mapping's counts as the page shows them and counts.json gives them.
type mappingCounts struct {
	State        string `json:"state"`
	Invocations  string `json:"invocations"`
	Errors       string `json:"errors"`
	ItemFailures string `json:"itemFailures"`
	InFlight     string `json:"inFlight"`
	Backoff      string `json:"backoff"`
}

// mappingKey is the key of the ith mapping in counts.json: no queue's name has a colon.
func mappingKey(i int) string { return "mapping:" + strconv.Itoa(i) }

func countsOf(m *MappingView) mappingCounts {
	c := mappingCounts{
		State:        "polling",
		Invocations:  strconv.FormatUint(m.Invocations, 10),
		Errors:       strconv.FormatUint(m.Errors, 10),
		ItemFailures: strconv.FormatUint(m.ItemFailures, 10),
		InFlight:     strconv.Itoa(m.InFlight),
		Backoff:      "–",
	}
	switch {
	case !m.Enabled:
		c.State = "disabled"
	case m.State != "":
		c.State = m.State
	case m.Backoff > 0:
		c.State = "function unreachable: backing off"
	}
	if m.Backoff > 0 {
		c.Backoff = m.Backoff.String()
	}
	return c
}

// mappingRows returns the rows of the mappings of the queue the console names queue.
func (h *Handler) mappingRows(queue string) []mappingRow {
	if h.mappings == nil {
		return nil
	}
	var out []mappingRow
	for i, m := range h.mappings() {
		if m.Queue != queue {
			continue
		}
		r := mappingRow{
			Key: mappingKey(i), FunctionURL: m.FunctionURL, BatchSize: m.BatchSize,
			Window: "none", Concurrency: strconv.Itoa(m.Concurrency), Timeout: m.FunctionTimeout.String(),
			Report: m.ReportBatchItemFailures, Enabled: m.Enabled, mappingCounts: countsOf(&m),
		}
		if m.BatchingWindow > 0 {
			r.Window = m.BatchingWindow.String()
		}
		if m.MaximumConcurrency > 0 {
			r.Concurrency += " (MaximumConcurrency " + strconv.Itoa(m.MaximumConcurrency) + ")"
		}
		out = append(out, r)
	}
	return out
}

// withMappingCounts returns the counts of counts.json: the queues', and each mapping's under its key.
func (h *Handler) withMappingCounts(queues map[string]liveCounts) any {
	if h.mappings == nil {
		return queues
	}
	out := make(map[string]any, len(queues))
	for k, v := range queues {
		out[k] = v
	}
	for i, m := range h.mappings() {
		out[mappingKey(i)] = countsOf(&m)
	}
	return out
}

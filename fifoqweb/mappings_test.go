package fifoqweb

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A queue's page shows its mappings, and only its own, with their settings and counts; counts.json gives
// the counts the page script refreshes, under the keys the page names; without WithMappings, no mapping.
func TestQueuePageMappings(t *testing.T) {
	t.Parallel()
	var invocations atomic.Uint64
	views := func() []MappingView {
		return []MappingView{
			{Queue: "orders", FunctionURL: "http://127.0.0.1:9000/other", Enabled: true, BatchSize: 10},
			{Queue: "jobs.fifo", FunctionURL: "http://127.0.0.1:9001/2015-03-31/functions/function/invocations",
				BatchSize: 7, MaximumConcurrency: 5, Concurrency: 1, FunctionTimeout: 3 * time.Second,
				ReportBatchItemFailures: true, Enabled: true, Invocations: invocations.Load(), Errors: 2, ItemFailures: 3,
				InFlight: 1, Backoff: 4 * time.Second},
			{Queue: "jobs.fifo", FunctionURL: "http://127.0.0.1:9002/off", BatchSize: 10, Enabled: false},
		}
	}
	invocations.Store(41)
	_, h := wtSetup(t, WithMappings(views))
	c := &wtClient{t: t, h: h}
	code, body := c.get("queue?q=jobs.fifo")
	require.Equal(t, http.StatusOK, code, body)
	for _, want := range []string{
		"Event source mappings",
		"<code>http://127.0.0.1:9001/2015-03-31/functions/function/invocations</code>",
		`<td class="num">7</td>`,
		"<td>1 (MaximumConcurrency 5)</td>",
		"<td>3s</td>",
		`data-q="mapping:1" data-f="invocations">41<`,
		`data-q="mapping:1" data-f="errors">2<`,
		`data-q="mapping:1" data-f="itemFailures">3<`,
		`data-q="mapping:1" data-f="inFlight">1<`,
		`data-q="mapping:1" data-f="backoff">4s<`,
		`data-q="mapping:1" data-f="state">function unreachable: backing off<`,
		`data-q="mapping:2" data-f="state">disabled<`,
	} {
		require.Contains(t, body, want, "the page of jobs.fifo")
	}
	require.NotContains(t, body, "http://127.0.0.1:9000/other", "the mapping of another queue")

	invocations.Store(42)
	code, body = c.get("counts.json")
	require.Equal(t, http.StatusOK, code, body)
	var counts map[string]map[string]string
	require.NoError(t, json.Unmarshal([]byte(body), &counts), body)
	require.Equal(t, map[string]string{"state": "function unreachable: backing off", "invocations": "42", "errors": "2",
		"itemFailures": "3", "inFlight": "1", "backoff": "4s"}, counts["mapping:1"])
	require.Equal(t, "polling", counts["mapping:0"]["state"])
	require.Equal(t, "0", counts["jobs.fifo"]["visible"], "the queues' counts are still there")

	_, body = c.get("queue?q=orders")
	require.Contains(t, body, "http://127.0.0.1:9000/other")
	require.NotContains(t, body, "9001")

	_, plain := wtSetup(t)
	c = &wtClient{t: t, h: plain}
	_, body = c.get("queue?q=jobs.fifo")
	require.NotContains(t, body, "Event source mappings")
	_, body = c.get("counts.json")
	require.False(t, strings.Contains(body, "mapping:"), body)
}

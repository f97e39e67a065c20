package fifoqprom_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/fifoqprom"
)

// mpMapping is a mapping's metrics after some invocations: 3 that reached the function (one of which timed
// out), 5 records, 2 batch item failures, an unreachable function now backed off from for 4 s.
func mpMapping() fifoqprom.MappingMetrics {
	return fifoqprom.MappingMetrics{
		Queue: "orders.fifo", Function: "http://127.0.0.1:9000/2015-03-31/functions/function/invocations",
		Enabled: true, Invocations: 3, Records: 5,
		Errors:       map[string]uint64{"status": 0, "function": 1, "response": 0, "timeout": 1, "unreachable": 2},
		ItemFailures: 2, InFlight: 1, Backoff: 4 * time.Second,
		Duration: fifoq.Histogram{
			Bounds: []time.Duration{10 * time.Millisecond, time.Second, 3 * time.Second},
			Counts: []uint64{1, 1, 1, 0},
			Count:  3, Sum: 3*time.Second + 505*time.Millisecond,
		},
	}
}

// The exposition of a mapping, exactly: each metric labelled by queue and function, the failures by kind.
func TestMappingCollectorExposition(t *testing.T) {
	t.Parallel()
	disabled := mpMapping()
	disabled.Queue, disabled.Enabled, disabled.Errors, disabled.Duration = "jobs", false, nil, fifoq.Histogram{}
	c := fifoqprom.NewMappingCollector(func() []fifoqprom.MappingMetrics {
		return []fifoqprom.MappingMetrics{mpMapping(), disabled}
	})
	const fn = `function="http://127.0.0.1:9000/2015-03-31/functions/function/invocations"`
	want := `
# HELP fifoq_mapping_backoff_seconds How long the event source mapping waits before it polls again, while its function is unreachable; 0 while it is reachable.
# TYPE fifoq_mapping_backoff_seconds gauge
fifoq_mapping_backoff_seconds{` + fn + `,queue="jobs"} 4
fifoq_mapping_backoff_seconds{` + fn + `,queue="orders.fifo"} 4
# HELP fifoq_mapping_enabled 1 when the event source mapping polls its queue, 0 when it is disabled.
# TYPE fifoq_mapping_enabled gauge
fifoq_mapping_enabled{` + fn + `,queue="jobs"} 0
fifoq_mapping_enabled{` + fn + `,queue="orders.fifo"} 1
# HELP fifoq_mapping_failed_invocations_total Invocations that failed their whole batch, by kind: status (a status outside 2xx), function (a function error), response (an answer that cannot be read), timeout (no answer within the function timeout), unreachable (the function could not be reached; not counted as invocations).
# TYPE fifoq_mapping_failed_invocations_total counter
fifoq_mapping_failed_invocations_total{` + fn + `,kind="function",queue="orders.fifo"} 1
fifoq_mapping_failed_invocations_total{` + fn + `,kind="response",queue="orders.fifo"} 0
fifoq_mapping_failed_invocations_total{` + fn + `,kind="status",queue="orders.fifo"} 0
fifoq_mapping_failed_invocations_total{` + fn + `,kind="timeout",queue="orders.fifo"} 1
fifoq_mapping_failed_invocations_total{` + fn + `,kind="unreachable",queue="orders.fifo"} 2
# HELP fifoq_mapping_invocation_duration_seconds Duration of the invocations counted by fifoq_mapping_invocations_total, from the request to the end of the answer or the timeout.
# TYPE fifoq_mapping_invocation_duration_seconds histogram
fifoq_mapping_invocation_duration_seconds_bucket{` + fn + `,queue="jobs",le="+Inf"} 0
fifoq_mapping_invocation_duration_seconds_sum{` + fn + `,queue="jobs"} 0
fifoq_mapping_invocation_duration_seconds_count{` + fn + `,queue="jobs"} 0
fifoq_mapping_invocation_duration_seconds_bucket{` + fn + `,queue="orders.fifo",le="0.01"} 1
fifoq_mapping_invocation_duration_seconds_bucket{` + fn + `,queue="orders.fifo",le="1"} 2
fifoq_mapping_invocation_duration_seconds_bucket{` + fn + `,queue="orders.fifo",le="3"} 3
fifoq_mapping_invocation_duration_seconds_bucket{` + fn + `,queue="orders.fifo",le="+Inf"} 3
fifoq_mapping_invocation_duration_seconds_sum{` + fn + `,queue="orders.fifo"} 3.505
fifoq_mapping_invocation_duration_seconds_count{` + fn + `,queue="orders.fifo"} 3
# HELP fifoq_mapping_invocations_in_flight Invocations of the function by the event source mapping under way now.
# TYPE fifoq_mapping_invocations_in_flight gauge
fifoq_mapping_invocations_in_flight{` + fn + `,queue="jobs"} 1
fifoq_mapping_invocations_in_flight{` + fn + `,queue="orders.fifo"} 1
# HELP fifoq_mapping_invocations_total Invocations of the function by the event source mapping that reached it: answered, or timed out (Lambda's Invocations).
# TYPE fifoq_mapping_invocations_total counter
fifoq_mapping_invocations_total{` + fn + `,queue="jobs"} 3
fifoq_mapping_invocations_total{` + fn + `,queue="orders.fifo"} 3
# HELP fifoq_mapping_messages_total Records (messages) in the invocations counted by fifoq_mapping_invocations_total.
# TYPE fifoq_mapping_messages_total counter
fifoq_mapping_messages_total{` + fn + `,queue="jobs"} 5
fifoq_mapping_messages_total{` + fn + `,queue="orders.fifo"} 5
# HELP fifoq_mapping_reported_failed_messages_total Batch item failures the function reported (ReportBatchItemFailures): the messages it named as failed.
# TYPE fifoq_mapping_reported_failed_messages_total counter
fifoq_mapping_reported_failed_messages_total{` + fn + `,queue="jobs"} 2
fifoq_mapping_reported_failed_messages_total{` + fn + `,queue="orders.fifo"} 2
`
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want)))
}

// Two mappings with the same labels: the second is an error of the scrape, not a clash of series; a nil
// function collects nothing; the set may change between scrapes.
func TestMappingCollectorSet(t *testing.T) {
	t.Parallel()
	var list []fifoqprom.MappingMetrics
	c := fifoqprom.NewMappingCollector(func() []fifoqprom.MappingMetrics { return list })
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	n, err := testutil.GatherAndCount(reg)
	require.NoError(t, err)
	require.Zero(t, n, "no mapping, no series")

	list = []fifoqprom.MappingMetrics{mpMapping()}
	n, err = testutil.GatherAndCount(reg)
	require.NoError(t, err)
	require.Equal(t, 1+1+5+1+1+1+1+1, n, "one mapping: 7 series and 5 kinds of failure")

	list = append(list, mpMapping())
	_, err = reg.Gather()
	require.ErrorContains(t, err, "two mappings of queue orders.fifo to function http://127.0.0.1:9000/")

	require.Zero(t, testutil.CollectAndCount(fifoqprom.NewMappingCollector(nil)))
}

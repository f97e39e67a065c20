package fifoqprom

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// A RequestCollector counts the requests of an sqsapi server, by action and error code, and keeps a
// histogram of their durations by action: fifoq_requests_total{action,code} and
// fifoq_request_duration_seconds{action}. It is the server's sqsapi.RequestObserver (give it with
// sqsapi.WithRequestObserver) and a prometheus.Collector (register it). The server's actions and error codes
// are fixed sets, so the series are bounded whatever clients send. A RequestCollector is safe for concurrent
// use; create one with NewRequestCollector. An observation allocates nothing once its series exists.
type RequestCollector struct {
	requests  *prometheus.CounterVec
	durations *prometheus.HistogramVec
}

// CodeNone is the code label of the requests that succeeded in fifoq_requests_total (a batch some of whose
// entries failed succeeded).
const CodeNone = "none"

// requestDurationBuckets are the buckets of fifoq_request_duration_seconds, in seconds: from half a
// millisecond, for a request served from memory, to 25 seconds, past the longest long poll (20 s), which
// the 20 s bucket tells apart.
var requestDurationBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 25}

// NewRequestCollector returns a RequestCollector that has counted no request.
func NewRequestCollector() *RequestCollector {
	return &RequestCollector{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fifoq_requests_total",
			Help: `SQS requests answered, by action (Unknown for an action the server does not serve) and error code ("none" when the request succeeded).`,
		}, []string{"action", "code"}),
		durations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "fifoq_request_duration_seconds",
			Help:    "Duration of the SQS requests answered, from their start to the end of their response, long polls' waits included, by action.",
			Buckets: requestDurationBuckets,
		}, []string{"action"}),
	}
}

// ObserveRequest counts a request: it is the method of sqsapi.RequestObserver, which the server calls. The
// code "" of a request that succeeded is counted as CodeNone.
func (c *RequestCollector) ObserveRequest(action, code string, d time.Duration) {
	if code == "" {
		code = CodeNone
	}
	c.requests.WithLabelValues(action, code).Inc()
	c.durations.WithLabelValues(action).Observe(d.Seconds())
}

// Describe sends the descriptions of the two metrics.
func (c *RequestCollector) Describe(ch chan<- *prometheus.Desc) {
	c.requests.Describe(ch)
	c.durations.Describe(ch)
}

// Collect sends the series of the requests counted so far.
func (c *RequestCollector) Collect(ch chan<- prometheus.Metric) {
	c.requests.Collect(ch)
	c.durations.Collect(ch)
}

package main

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/fifoqprom"
	"github.com/fifoq/fifoq/sqsapi"
)

// newMetricsRegistry returns the registry that serve shows on /metrics: the Go and process collectors, the
// metrics of api's queues, of its store st (nil for a server in memory), and of its requests, which
// requests counts.
func newMetricsRegistry(api *sqsapi.Server, st *fifoq.Store, requests *fifoqprom.RequestCollector) *prometheus.Registry {
	opts := []fifoqprom.Option{fifoqprom.WithNamedQueues(api.NamedQueues)}
	if st != nil {
		opts = append(opts, fifoqprom.WithStore(st))
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		fifoqprom.NewCollector(opts...), requests, topicCollector(api))
	return reg
}

package main

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/fifoqprom"
)

// newMetricsRegistry returns the registry that serve shows on /metrics: the Go and process collectors, the
// metrics of the queues and topics of cat, each under its display name (catalog.Catalog.NamedQueues, NamedTopics), of its
// store st (nil for a server in memory), and of its requests, which requests counts.
func newMetricsRegistry(cat *catalog.Catalog, st *fifoq.Store, requests *fifoqprom.RequestCollector) *prometheus.Registry {
	opts := []fifoqprom.Option{fifoqprom.WithNamedQueues(cat.NamedQueues)}
	if st != nil {
		opts = append(opts, fifoqprom.WithStore(st))
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		fifoqprom.NewCollector(opts...), requests, fifoqprom.NewTopicCollector(cat.NamedTopics))
	return reg
}

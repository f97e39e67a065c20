package fifoqprom_test

import (
	"strconv"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/fifoqprom"
)

// BenchmarkGather times one scrape (Registry.Gather) of a collector over 100 queues: the collector takes
// each queue's lock once, for one Metrics call; the rest is building the Prometheus metrics outside any
// queue's lock.
func BenchmarkGather(b *testing.B) {
	c := fifoqprom.NewCollector()
	for i := range 100 {
		q, err := fifoq.New("bench-" + strconv.Itoa(i))
		if err != nil {
			b.Fatal(err)
		}
		c.AddQueue(q)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100, "ns/queue")
}

package fifoqprom_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/fifoqprom"
	"github.com/fifoq/fifoq/sqsapi"
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

// BenchmarkRequest times a GetQueueUrl served by an sqsapi server without a request observer (the
// baseline) and with a RequestCollector: the difference is what request metrics cost a request. (A cheap
// request that changes nothing: a send would grow the queue from run to run.)
func BenchmarkRequest(b *testing.B) {
	body := []byte(`{"QueueName":"q"}`)
	for _, bc := range []struct {
		name string
		opts []sqsapi.Option
	}{
		{"observer=none", nil},
		{"observer=RequestCollector", []sqsapi.Option{sqsapi.WithRequestObserver(fifoqprom.NewRequestCollector())}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			srv := sqsapi.NewServer(bc.opts...)
			if _, err := srv.DeclareQueue("q", nil); err != nil {
				b.Fatal(err)
			}
			req := httptest.NewRequest(http.MethodPost, "http://fifoq.test/", nil)
			req.Header.Set("Content-Type", "application/x-amz-json-1.0")
			req.Header.Set("X-Amz-Target", "AmazonSQS.GetQueueUrl")
			req.ContentLength = int64(len(body))
			rd := new(bytes.Reader)
			req.Body = io.NopCloser(rd)
			w := &benchWriter{h: make(http.Header)}
			b.ReportAllocs()
			for b.Loop() {
				rd.Reset(body)
				clear(w.h)
				w.status = 0
				srv.ServeHTTP(w, req)
				if w.status != 0 && w.status != http.StatusOK {
					b.Fatalf("status %d", w.status)
				}
			}
		})
	}
}

// BenchmarkObserveRequest times one observation of a RequestCollector.
func BenchmarkObserveRequest(b *testing.B) {
	c := fifoqprom.NewRequestCollector()
	b.ReportAllocs()
	for b.Loop() {
		c.ObserveRequest("SendMessage", "", time.Millisecond)
	}
}

// benchWriter is a ResponseWriter reused from request to request.
type benchWriter struct {
	h      http.Header
	status int
}

func (w *benchWriter) Header() http.Header         { return w.h }
func (w *benchWriter) WriteHeader(s int)           { w.status = s }
func (w *benchWriter) Write(p []byte) (int, error) { return len(p), nil }

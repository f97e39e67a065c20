package fifoq_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/fifoq/fifoq"
)

// BenchmarkMetrics times Metrics beside Stats, the baseline, on a FIFO queue holding 100,000 messages in
// 10,000 groups, a tenth of them in flight: each takes the queue's lock once, and ns/op is about how long
// it holds it (issue 11: a scrape must not hold the hot path's lock longer than one Stats call).
func BenchmarkMetrics(b *testing.B) {
	ctx := context.Background()
	// The longest visibility timeout keeps the tenth received below in flight however long the benchmark
	// runs on the real clock.
	q, err := fifoq.New("bench-metrics.fifo", fifoq.WithContentBasedDeduplication(), fifoq.WithVisibilityTimeout(12*time.Hour))
	if err != nil {
		b.Fatal(err)
	}
	batch := make([]fifoq.Message, 10)
	for i := 0; i < 100_000; i += len(batch) {
		for j := range batch {
			n := i + j
			batch[j] = fifoq.Message{Body: strconv.Itoa(n), GroupID: "g" + strconv.Itoa(n%10_000)}
		}
		if _, err := q.SendBatch(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	for range 1_000 {
		if _, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("call=Stats", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = q.Stats()
		}
	})
	b.Run("call=Metrics", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = q.Metrics()
		}
	})
}

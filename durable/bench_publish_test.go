package durable_test

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/durable"
	"github.com/fifoq/fifoq/topic"
)

// BenchmarkPublishDurable publishes, one message at a time, to a topic whose subscriptions deliver to n
// queues of one durable store: a publish returns once every delivery is durable. syncs/op counts the syncs
// of the store's write-ahead log per publish (durable.WithSyncCount): the deliveries of a publish share
// their syncs, so it stays near 1 whatever n. Run beside the same benchmark of an earlier version to compare:
//
//	go test -run '^$' -bench PublishDurable -benchtime 2000x ./durable
func BenchmarkPublishDurable(b *testing.B) {
	for _, fifo := range []bool{false, true} {
		for _, n := range []int{1, 4, 16} {
			b.Run(fmt.Sprintf("fifo=%v/subs=%d", fifo, n), func(b *testing.B) {
				var syncs atomic.Int64
				st, err := durable.Open(b.TempDir(), durable.WithSyncCount(&syncs))
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				suffix := ""
				if fifo {
					suffix = ".fifo"
				}
				t, err := topic.New("events" + suffix)
				if err != nil {
					b.Fatal(err)
				}
				for i := range n {
					q, err := fifoq.New("q"+strconv.Itoa(i)+suffix, fifoq.WithStore(st))
					if err != nil {
						b.Fatal(err)
					}
					if _, err := t.Subscribe(q, topic.SubscriptionAttributes{RawMessageDelivery: true}); err != nil {
						b.Fatal(err)
					}
				}
				ctx := context.Background()
				m := topic.Message{Message: "a message of some length, as an event would be"}
				if fifo {
					m.GroupID = "g"
				}
				syncs.Store(0)
				i := 0
				for b.Loop() {
					i++
					if fifo {
						m.DeduplicationID = strconv.Itoa(i)
					}
					if _, err := t.Publish(ctx, m); err != nil {
						b.Fatal(err)
					}
				}
				if d := t.Metrics().Delivered; d != uint64(n*i) {
					b.Fatalf("%d deliveries, want %d", d, n*i)
				}
				b.ReportMetric(float64(syncs.Load())/float64(i), "syncs/op")
			})
		}
	}
}

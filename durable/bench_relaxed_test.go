package durable_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/durable"
)

// The store of durable.WithSyncEvery, beside "memory" and "pebble" (a sync per acknowledgement) in every
// benchmark of bench_test.go: "pebble-every100ms" syncs its log every 100 ms.
const bdRelaxed = "pebble-every100ms"

func init() {
	bdStoreOptions[bdRelaxed] = []durable.Option{durable.WithSyncEvery(100 * time.Millisecond)}
	bdStores = append(bdStores, bdRelaxed)
}

// bdAck holds the last store=pebble msgs/s of each variant, for the vs-ack ratios.
var bdAck sync.Map

// BenchmarkDurableOneByOne is one producer sending one message at a time (Send) and one consumer receiving
// one at a time (Receive of 1, long polling) and deleting it (Delete), b.N messages, on a FIFO queue of
// 10,000 groups: every call waits for its own sync, the case where group commit cannot help. Besides the
// units of bench_test.go, the rows of other stores report vs-ack: their msgs/s divided by the store=pebble
// row's (a sync per acknowledgement) measured last in this process.
func BenchmarkDurableOneByOne(b *testing.B) {
	const groups = 10_000
	variant := "fifo/groups=10000/1P1C/single"
	for _, store := range bdStores {
		b.Run(variant+"/store="+store, func(b *testing.B) {
			e := bdOpen(b, store, b.TempDir(), "one.fifo", bdStart)
			defer e.close(b)
			rate := bdOneByOne(b, e, store, variant, groups)
			switch store {
			case "pebble":
				bdAck.Store(variant, rate)
			case "memory":
			default:
				if base, ok := bdAck.Load(variant); ok {
					b.ReportMetric(rate/base.(float64), "vs-ack")
				}
			}
		})
	}
}

// bdOneByOne runs b.N messages through e's queue one at a time and returns the msgs/s.
func bdOneByOne(b *testing.B, e *bdEnv, store, variant string, groups int) float64 {
	n := b.N
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := &bdErr{cancel: cancel}
	var (
		wg      sync.WaitGroup
		deleted atomic.Int64
	)
	bdIDs()
	var t bdTimed
	t.start(b, e)
	wg.Go(func() {
		for k := range n {
			if _, err := e.q.Send(ctx, bdMessage(k, groups)); err != nil {
				errs.fail(err)
				return
			}
			if k%bdBatch == bdBatch-1 {
				e.clk.Advance(bdTick)
			}
		}
	})
	wg.Go(func() {
		for deleted.Load() < int64(n) {
			ds, err := e.q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 1, WaitTime: 20 * time.Second})
			if err != nil {
				errs.fail(err)
				return
			}
			for _, d := range ds {
				if err := e.q.Delete(ctx, d.ReceiptHandle); err != nil {
					errs.fail(err)
					return
				}
				deleted.Add(1)
			}
		}
	})
	wg.Wait()
	t.stop(b, e, store, variant, n)
	if errs.err != nil {
		b.Fatal(errs.err)
	}
	if s := e.q.Stats(); s != (fifoq.Stats{}) {
		b.Fatalf("stats %+v at the end, want an empty queue", s)
	}
	return float64(n) / b.Elapsed().Seconds()
}

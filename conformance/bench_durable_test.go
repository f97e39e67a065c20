package conformance_test

import (
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/durable"
)

// BenchmarkWireDurable is BenchmarkWire's cycle (SendMessageBatch of 10, ReceiveMessage of 10,
// DeleteMessageBatch) from 4 clients, down the handler and loopback-nosdk paths, on a server whose queues
// are in memory (store=memory, sqsapi.NewServer) and on one over a store in a temporary directory
// (a catalogue kept in durable.Open's store, catalog.Open, served by sqsapi: store=pebble, a sync per acknowledgement, and store=pebble-every100ms,
// durable.WithSyncEvery(100ms)), so that cpu-ns/msg, the CPU the process spends per message, can be
// compared in one run: what a durable server (fifoq serve --data-dir) costs over an in-memory one. The
// temporary directory must be on a real disk. Run:
//
//	go test -run '^$' -bench WireDurable -count 5 ./conformance/
func BenchmarkWireDurable(b *testing.B) {
	stores := []struct {
		name string
		opts []durable.Option // nil: in memory
	}{
		{"memory", nil},
		{"pebble", []durable.Option{}},
		{"pebble-every100ms", []durable.Option{durable.WithSyncEvery(100 * time.Millisecond)}},
	}
	for _, p := range bnPaths {
		if p.name != "handler" && p.name != "loopback-nosdk" {
			continue
		}
		for _, fifo := range []bool{false, true} {
			kind := "standard"
			if fifo {
				kind = "fifo"
			}
			for _, s := range stores {
				par := (bnClients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0)
				name := fmt.Sprintf("%s/%s/batch/clients=%d/store=%s", p.name, kind, par*runtime.GOMAXPROCS(0), s.name)
				b.Run(name, func(b *testing.B) {
					e := bnSetupStore(b, fifo, s.opts)
					bnParallel(b, e, p.setup(b, e), true, par)
				})
			}
		}
	}
}

// bnSetupStore is bnSetup on a server over a store opened with opts in a temporary directory, or in memory
// when opts is nil.
func bnSetupStore(b *testing.B, fifo bool, opts []durable.Option) *bnEnv {
	if opts == nil {
		return bnSetup(b, fifo)
	}
	bnIDs()
	st, err := durable.Open(b.TempDir(), append([]durable.Option{durable.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := st.Close(); err != nil {
			b.Error(err)
		}
	})
	clk := fifoq.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	srv, err := drServe(st, catalog.Namespace{Account: bnAccount, Region: bnRegion}, []catalog.Option{catalog.WithClock(clk)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { // before the store's Close, registered earlier
		if err := drClose(srv); err != nil {
			b.Error(err)
		}
	})
	return bnEnvOf(b, clk, srv, fifo)
}

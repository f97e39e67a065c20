package durable_test

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/fifoq/fifoq/durable"
)

// A bfWrite is one write a store made to Pebble: a batch's representation, and whether it was synced.
type bfWrite struct {
	repr []byte
	sync bool
}

// bfQuiet drops Pebble's messages, but its fatal ones.
type bfQuiet struct{}

func (bfQuiet) Infof(string, ...any)           {}
func (bfQuiet) Errorf(string, ...any)          {}
func (bfQuiet) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }

// BenchmarkDurableFloor measures what Pebble alone costs for the writes a store makes, so that the store's
// CPU a message (BenchmarkDurableCycle's cpu-ns/msg, less the in-memory row's) can be set against the part
// of it that no change around Pebble can remove. It records every write a store makes while it runs
// BenchmarkDurableCycle's work with batches (8 producers, 8 consumers, SendBatch, Receive(10), DeleteBatch,
// FIFO with 10,000 groups, b.N messages; untimed), then replays those writes in order from one goroutine into
// a bare Pebble tuned as the store tunes it: with a sync where the store synced, or none, and with Pebble's
// compactions, or none (L0 then grows without bound: writes are never stopped). cpu-ns/msg is the process's
// CPU per message of the recorded work; msgs/sync is how many messages each synced write carried.
//
//	go test -run '^$' -bench DurableFloor -benchtime 100000x ./durable/
func BenchmarkDurableFloor(b *testing.B) {
	const producers, consumers, groups = 8, 8, 10_000
	for _, v := range []struct {
		name          string
		sync, compact bool
	}{
		{"sync", true, true},
		{"nosync", false, true},
		{"sync/no-compactions", true, false},
		{"nosync/no-compactions", false, false},
	} {
		b.Run(fmt.Sprintf("fifo/groups=%d/%dP%dC/batch/replay=%s", groups, producers, consumers, v.name), func(b *testing.B) {
			n := b.N
			var writes []bfWrite
			syncs := 0
			bdStoreOptions["pebble-recorded"] = []durable.Option{durable.WithWriteHook(func(repr []byte, sync bool) {
				writes = append(writes, bfWrite{repr: append([]byte(nil), repr...), sync: sync})
				if sync {
					syncs++
				}
			})}
			defer delete(bdStoreOptions, "pebble-recorded")
			bdIDs()
			e := bdOpen(b, "pebble-recorded", b.TempDir(), "floor.fifo", bdStart)
			err := bdWork(e, n, producers, consumers, groups, true, true)
			e.close(b)
			if err != nil {
				b.Fatal(err)
			}

			o := &pebble.Options{FormatMajorVersion: pebble.FormatNewest, DisableAutomaticCompactions: !v.compact, Logger: bfQuiet{}}
			durable.Tune(o)
			if !v.compact {
				o.L0StopWritesThreshold = 1 << 30
			}
			cache := pebble.NewCache(8 << 20)
			defer cache.Unref()
			o.Cache = cache
			db, err := pebble.Open(b.TempDir(), o)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			batches := make([]*pebble.Batch, len(writes))
			for i, w := range writes {
				batches[i] = db.NewBatch()
				if err := batches[i].SetRepr(w.repr); err != nil {
					b.Fatal(err)
				}
			}

			cpu0 := bdCPU()
			b.ResetTimer()
			for i, w := range writes {
				opts := pebble.NoSync
				if w.sync && v.sync {
					opts = pebble.Sync
				}
				if err := db.Apply(batches[i], opts); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			cpu := bdCPU() - cpu0
			secs := b.Elapsed().Seconds()
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/msg")
			b.ReportMetric(float64(n)/secs, "msgs/s")
			if v.sync && syncs > 0 {
				b.ReportMetric(float64(n)/float64(syncs), "msgs/sync")
			}
		})
	}
}

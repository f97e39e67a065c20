package durable_test

import (
	"context"
	"testing"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/durable"
)

// BenchmarkSyncMark measures what the sync mark (syncmark.go: one pwrite of 32 bytes after each sync of the
// log) costs a send, each send a sync of its own, against the same store without the mark, in the same
// run: the two variants alternate with -count. On the project's machine (ext4 on a virtual disk):
//
//	go test -run '^$' -bench SyncMark -count 8 ./durable/
func BenchmarkSyncMark(b *testing.B) {
	for _, v := range []struct {
		name string
		opts []durable.Option
	}{{"mark", nil}, {"none", []durable.Option{durable.WithoutSyncMark()}}} {
		b.Run(v.name, func(b *testing.B) {
			st, err := durable.Open(b.TempDir(), append([]durable.Option{durable.WithLogger(quiet)}, v.opts...)...)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			q, err := fifoq.New("q", fifoq.WithStore(st), fifoq.WithClock(fifoq.NewManualClock(t0)))
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			m := fifoq.Message{Body: "a message of some forty bytes, give or take"}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := q.Send(ctx, m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

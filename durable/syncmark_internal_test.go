package durable

import (
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// BenchmarkSyncMarkWrite measures the mark's own cost per sync, one pwrite to the page cache, to set
// against the sync it follows (BenchmarkSyncMark).
func BenchmarkSyncMarkWrite(b *testing.B) {
	var last atomic.Uint64
	m, err := openMark(vfs.Default, b.TempDir(), markState{}, 1, &last, false)
	if err != nil {
		b.Fatal(err)
	}
	defer m.f.Close()
	b.ReportAllocs()
	seq := uint64(1)
	for b.Loop() {
		seq++
		if err := m.write(seq, 1, 0); err != nil {
			b.Fatal(err)
		}
	}
}

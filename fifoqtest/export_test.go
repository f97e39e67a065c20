package fifoqtest

import (
	"testing"
	"time"
)

// SetMaxBatches lowers the batch limit of Drain for the rest of the test. A test that calls it must not
// be parallel.
func SetMaxBatches(tb testing.TB, n int) {
	old := maxBatches
	maxBatches = n
	tb.Cleanup(func() { maxBatches = old })
}

// SetStallTimeout sets how long Drain on a ManualClock waits for a batch to end, for the rest of the
// test. A test that calls it must not be parallel.
func SetStallTimeout(tb testing.TB, d time.Duration) {
	old := stallTimeout
	stallTimeout = d
	tb.Cleanup(func() { stallTimeout = old })
}

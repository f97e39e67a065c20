package fifoq

import (
	"strconv"
	"sync/atomic"
)

// UseTestStore makes New keep every queue that it makes without WithStore in s, each under a name of its
// own, so that the tests written for queues in memory run on durable queues too. Call it before any test
// runs.
func UseTestStore(s *Store) {
	var n atomic.Uint64
	testStore = func() (*Store, string) { return s, "test-" + strconv.FormatUint(n.Add(1), 10) }
}

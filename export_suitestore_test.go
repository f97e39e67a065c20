//go:build fifoq_suitestore

package fifoq

import (
	"strconv"
	"sync/atomic"
)

// UseTestStore makes New keep every queue that it makes without WithStore in s, each under a name of its
// own, so that the tests written for queues in memory run on durable queues too. Call it before any test
// runs. It reports whether it can: only a build with the tag fifoq_suitestore can.
func UseTestStore(s *Store) bool {
	var n atomic.Uint64
	testStore = func() (*Store, string) { return s, "test-" + strconv.FormatUint(n.Add(1), 10) }
	return true
}

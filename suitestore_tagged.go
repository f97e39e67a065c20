//go:build fifoq_suitestore

package fifoq

// testStore, set by this package's tests (UseTestStore) in a build with the tag fifoq_suitestore, keeps every
// queue that New makes without a store in the store it returns, under a name of its own, so that the tests
// written for queues in memory run on durable queues too.
var testStore func() (*Store, string)

// suiteStore puts a queue made without a store in the test store, if there is one.
func suiteStore(c *config) {
	if c.store == nil && testStore != nil {
		c.store, c.storeKey = testStore()
	}
}

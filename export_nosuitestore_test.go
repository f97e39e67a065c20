//go:build !fifoq_suitestore

package fifoq

// UseTestStore reports that this build cannot keep the suite's queues in a store: that takes the tag
// fifoq_suitestore (export_suitestore_test.go).
func UseTestStore(*Store) bool { return false }

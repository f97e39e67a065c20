//go:build !fifoq_suitestore

package fifoq

// suiteStore does nothing: a build with the tag fifoq_suitestore, which only this package's tests use, keeps
// every queue in a store (suitestore_tagged.go).
func suiteStore(*config) {}

// Package storagetest is the test support of package storage: Run, the conformance suite that every storage
// engine should pass; Memory, an engine in memory whose crashes lose what was not synced and whose commits
// and syncs fail, or wait, on demand, for the tests of the queues over it; and SmallDisk, a disk small
// enough to fill, for full-disk tests. It is for tests: a program keeps its queues in an engine such as
// package durable's.
package storagetest

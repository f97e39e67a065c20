package durable

import "github.com/cockroachdb/pebble/v2/vfs"

// WithFS makes the store use fs for its files, so that the tests can inject faults (durable_test.go). It
// exists only in this package's tests.
func WithFS(fs vfs.FS) Option { return func(c *config) { c.fs = fs } }

// WithoutSyncMark makes the store keep no sync mark (syncmark.go), for the benchmark that measures what
// the mark costs. It exists only in this package's tests.
func WithoutSyncMark() Option { return func(c *config) { c.noSyncMark = true } }

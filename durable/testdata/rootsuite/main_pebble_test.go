package fifoq_test

// This file belongs to the root package's tests, not to package durable. The root module cannot import durable
// (its users would get Pebble in go.sum), so .ci/test runs the root package's suite from the durable module with
// this file laid beside the suite by `go test -overlay`:
//
//	FIFOQ_TEST_STORE=pebble go test -overlay=<json naming this file as main_pebble_test.go in the root> github.com/fifoq/fifoq
//
// With it, FIFOQ_TEST_STORE=pebble keeps every queue of the suite in a store of package durable.

import (
	"io"
	"log/slog"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/durable"
)

func init() {
	testStores["pebble"] = func(dir string) (*fifoq.Store, error) {
		return durable.Open(dir, durable.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	}
}

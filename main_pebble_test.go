//go:build fifoqpebble

package fifoq_test

import (
	"io"
	"log/slog"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/durable"
)

// With -tags fifoqpebble, FIFOQ_TEST_STORE=pebble runs the suite on a store of package durable.
func init() {
	testStores["pebble"] = func(dir string) (*fifoq.Store, error) {
		return durable.Open(dir, durable.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	}
}

package durable_test

import (
	"testing"
	"time"

	"github.com/fifoq/fifoq/durable"
	"github.com/fifoq/fifoq/storage"
	"github.com/fifoq/fifoq/storage/storagetest"
)

// The engine over Pebble keeps the contract of package storage.
func TestEngineConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storagetest.Opener {
		dir := t.TempDir()
		return func() (storage.Engine, error) { return durable.OpenEngine(dir) }
	})
}

// So does the engine of a store opened WithSyncEvery, whose syncs are every interval.
func TestEngineConformanceRelaxed(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storagetest.Opener {
		dir := t.TempDir()
		return func() (storage.Engine, error) { return durable.OpenEngine(dir, durable.WithSyncEvery(time.Hour)) }
	})
}

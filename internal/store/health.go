package store

// A HealthReporter is an Engine that reports its health, for fifoq.Store.Health: package durable's engine
// is one. An engine that is not reports nothing.
type HealthReporter interface {
	// Health returns the engine's health as of now. It is safe to call at any time, during and after Close
	// included, and never waits for a commit or a sync.
	Health() Health
}

// Health is what a HealthReporter reports.
type Health struct {
	// Syncs counts the syncs of the engine's log that succeeded since it was opened: each made the
	// batches of one round durable.
	Syncs uint64
	// Err is the error that broke the engine (a failed write or sync): nil while it works.
	Err error
	// DiskBytes is the size of the engine's files, in bytes, or -1 when it could not be read.
	DiskBytes int64
}

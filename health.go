package fifoq

import (
	"errors"
	"fmt"
)

// StoreHealth is the health of a [Store], from [Store.Health], for monitoring: package fifoqprom exports it
// to Prometheus.
type StoreHealth struct {
	// Syncs counts the syncs of the store's log to disk that succeeded since it was opened. Concurrent
	// calls share a sync, so under load it grows slower than the changes made.
	Syncs uint64
	// Err is the error that failed the store: it matches ErrStoreFailed and wraps the cause, such as a
	// full disk's ENOSPC, with the store's directory. A failed store refuses every change until it is
	// opened again. Err is nil while the store works, and after Close if it worked until then.
	Err error
	// DiskBytes is the size of the files in the store's directory, in bytes: -1 when they cannot be read.
	DiskBytes int64
}

// Health returns the health of the store as of now. It takes no queue's lock and waits for no sync; it
// lists the store's directory, so call it as a scrape does (every few seconds), not on every change. It may
// be called after Close.
func (s *Store) Health() StoreHealth {
	eh := s.eng.Health()
	h := StoreHealth{Syncs: eh.Syncs, DiskBytes: eh.DiskBytes}
	if eh.Err != nil {
		h.Err = fmt.Errorf("%w: %s: %w", ErrStoreFailed, s.location, eh.Err)
	}
	if err := s.err(); h.Err == nil && errors.Is(err, ErrStoreFailed) {
		h.Err = err
	}
	return h
}

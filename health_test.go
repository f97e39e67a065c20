package fifoq_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// Store.Health over an engine that reports no health (the tests' in-memory one): no syncs, no size, and the
// error that failed the store as the store saw it; a store closed while it worked is not failed.
func TestStoreHealthWithoutReport(t *testing.T) {
	d := newStDisk(t)
	q := d.queue("q")
	stSend(t, q, "", "kept")
	require.Equal(t, fifoq.StoreHealth{DiskBytes: -1}, d.st.Health(), "a working store")

	boom := errors.New("no space left on device")
	d.eng.FailNextCommit(boom)
	_, err := q.Send(context.Background(), fifoq.Message{Body: "lost"})
	require.ErrorIs(t, err, fifoq.ErrStoreFailed)
	h := d.st.Health()
	require.ErrorIs(t, h.Err, fifoq.ErrStoreFailed, "Health of a failed store")
	require.ErrorIs(t, h.Err, boom)

	d.restart(false)
	require.NoError(t, d.st.Close())
	require.NoError(t, d.st.Health().Err, "a store closed while it worked")
}

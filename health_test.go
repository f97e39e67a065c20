package fifoq_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// Store.Health reports the engine's syncs and disk size, and the error that failed the store, whether the
// store saw it (a failed commit) or the engine reports it (a failed sync); a store closed while it worked is
// not failed.
func TestStoreHealth(t *testing.T) {
	d := newStDisk(t)
	q := d.queue("q")
	h := d.st.Health()
	stSend(t, q, "", "kept")
	after := d.st.Health()
	require.NoError(t, after.Err, "a working store")
	require.Greater(t, after.Syncs, h.Syncs, "a send syncs")
	require.Greater(t, after.DiskBytes, h.DiskBytes, "a send stores its message")

	boom := errors.New("no space left on device")
	d.eng.FailNextCommit(boom)
	_, err := q.Send(context.Background(), fifoq.Message{Body: "lost"})
	require.ErrorIs(t, err, fifoq.ErrStoreFailed)
	h = d.st.Health()
	require.ErrorIs(t, h.Err, fifoq.ErrStoreFailed, "Health of a failed store")
	require.ErrorIs(t, h.Err, boom)

	d.restart(true) // a broken engine does not close
	q = d.queue("q")
	require.Equal(t, []string{"kept/visible/0"}, stState(q))
	d.eng.FailNextSync(boom) // the engine breaks: it reports so
	_, err = q.Send(context.Background(), fifoq.Message{Body: "lost"})
	require.ErrorIs(t, err, fifoq.ErrStoreFailed)
	h = d.st.Health()
	require.ErrorIs(t, h.Err, fifoq.ErrStoreFailed, "Health of a store whose engine broke")
	require.ErrorIs(t, h.Err, boom)

	d.restart(true) // a broken engine cannot close
	require.NoError(t, d.st.Close())
	require.NoError(t, d.st.Health().Err, "a store closed while it worked")
}

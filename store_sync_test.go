package fifoq_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Store.DeleteQueue waits for its sync after releasing the store's lock: while the sync of one queue's
// deletion is held (a disk slow for it), another queue is created and deleted, and a third sends.
func TestStoreDeleteQueueSyncOutsideLock(t *testing.T) {
	d := newStDisk(t)
	a := d.queue("a")
	d.queue("slow-one")
	d.eng.HoldSyncsOf(func(key string) bool { return strings.HasSuffix(key, "slow-one") })
	done := make(chan error, 1)
	go func() { done <- d.st.DeleteQueue("slow-one") }()
	d.eng.WaitBlocked(1)
	d.queue("other")
	require.NoError(t, d.st.DeleteQueue("other"))
	stSend(t, a, "", "m")
	select {
	case err := <-done:
		t.Fatalf("DeleteQueue returned before its sync: %v", err)
	default:
	}
	d.eng.ReleaseHeld()
	require.NoError(t, <-done)
	require.Equal(t, []string{"a"}, d.st.Queues())
	require.NoError(t, d.st.Close())
}

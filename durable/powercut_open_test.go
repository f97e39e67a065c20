package durable_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// A power cut on the rig right after a store was made: what Open makes is durable once it returns.

// TestPowerCutOpenStrict: in the strict metadata mode (a file or directory made is durable only once its
// directory is fsynced), a power cut right after a store was made and closed keeps it whole: the
// directories Open made, however deep (their parents are synced), and the store's sync mark (made whole,
// its directory synced). Before, a store in a directory whose parent Open had made too came back empty,
// and the sync mark of a new store was gone.
func TestPowerCutOpenStrict(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		dir  []string // under the mount
	}{
		{"in directories Open made", []string{"var", "lib", "store"}},
		{"sync mark", []string{"store"}}, // Pebble syncs the parent of the store's directory itself
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := startLazyFS(t, true)
			dir := filepath.Join(append([]string{l.mnt}, tc.dir...)...)
			st := openStore(t, dir)
			q := openQueue(t, st, fifoq.NewManualClock(t0), "q")
			send(t, q, "one", "two")
			require.NoError(t, st.Close())
			_, err := l.cut()
			require.NoError(t, err)

			_, _, _ = markOffset(t, dir) // the mark is there, and a slot of it checks out
			st = openStore(t, dir)
			defer func() { require.NoError(t, st.Close()) }()
			require.Equal(t, []string{"one", "two"}, bodies(openQueue(t, st, fifoq.NewManualClock(t0), "q")))
		})
	}
}

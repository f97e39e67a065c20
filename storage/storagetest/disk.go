package storagetest

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// SmallDisk mounts a tmpfs of size bytes on a new directory and returns it, unmounted at the test's end: a
// disk of the test's own, small enough to fill, for an engine's full-disk tests. The test is skipped, with
// the reason, where that cannot be done: only root can mount (on Linux), and a sandbox may refuse it.
func SmallDisk(t testing.TB, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a full disk needs a small tmpfs, which only root can mount")
	}
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("mount -t tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { // lazily: a Pebble that a failed Open left behind may still hold files
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

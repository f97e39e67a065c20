package fifoq_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/storage/storagetest"
)

// testStores open the store that the whole suite keeps its queues in, by the value of FIFOQ_TEST_STORE:
// none (queues in memory, the default), "memory" (the in-memory engine of storage/storagetest) or "pebble" (a store
// of package durable: .ci/test runs the suite from the durable module with a file laid beside this one that adds
// it, since the root module does not depend on Pebble).
var testStores = map[string]func(dir string) (*fifoq.Store, error){
	"memory": func(string) (*fifoq.Store, error) {
		eng, err := storagetest.NewDisk().Open()
		if err != nil {
			return nil, err
		}
		return fifoq.OpenStore(eng, "memory")
	},
}

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	mode := os.Getenv("FIFOQ_TEST_STORE")
	if mode == "" {
		return m.Run()
	}
	open, ok := testStores[mode]
	if !ok {
		fmt.Fprintf(os.Stderr, "FIFOQ_TEST_STORE=%s: unknown store (pebble runs from the durable module: see .ci/test)\n", mode)
		return 2
	}
	dir, err := os.MkdirTemp("", "fifoq-suite-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer os.RemoveAll(dir)
	s, err := open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open the suite's store:", err)
		return 2
	}
	if !fifoq.UseTestStore(s) {
		fmt.Fprintf(os.Stderr, "FIFOQ_TEST_STORE=%s needs the build tag fifoq_suitestore: go test -tags fifoq_suitestore\n", mode)
		return 2
	}
	code := m.Run()
	if n := len(s.Queues()); n == 0 && code == 0 {
		fmt.Fprintln(os.Stderr, "no queue was kept in the suite's store")
		code = 1
	} else {
		fmt.Printf("FIFOQ_TEST_STORE=%s: %d queues kept in %s\n", mode, n, s)
	}
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close the suite's store:", err)
		code = max(code, 1)
	}
	return code
}

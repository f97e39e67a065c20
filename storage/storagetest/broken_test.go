package storagetest

import (
	"os"
	"os/exec"
	"testing"

	"github.com/fifoq/fifoq/storage"
)

// The conformance suite fails an engine that breaks the contract: each broken engine below runs the suite in
// a child process of this test binary, which must fail.
func TestConformanceFailsBrokenEngines(t *testing.T) {
	if os.Getenv("STORAGETEST_BROKEN") != "" {
		t.Skip("the child of TestConformanceFailsBrokenEngines runs TestBrokenEngine")
	}
	for name := range broken {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenEngine$", "-test.count=1")
			cmd.Env = append(os.Environ(), "STORAGETEST_BROKEN="+name)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed an engine that %s:\n%s", name, out)
			}
		})
	}
}

// TestBrokenEngine runs the suite on the broken engine STORAGETEST_BROKEN names, in the child process of
// TestConformanceFailsBrokenEngines.
func TestBrokenEngine(t *testing.T) {
	wrap := broken[os.Getenv("STORAGETEST_BROKEN")]
	if wrap == nil {
		t.Skip("run by TestConformanceFailsBrokenEngines")
	}
	Run(t, func(t *testing.T) Opener {
		d := NewDisk()
		return func() (storage.Engine, error) {
			m, err := d.Open()
			if err != nil {
				return nil, err
			}
			return wrap(m), nil
		}
	})
}

// broken engines, by what they do wrong.
var broken = map[string]func(*Memory) storage.Engine{
	"ignores DeleteRange":      func(m *Memory) storage.Engine { return brokenEngine{m, "range"} },
	"scans past hi":            func(m *Memory) storage.Engine { return brokenEngine{m, "hi"} },
	"loses unsynced batches":   func(m *Memory) storage.Engine { return brokenEngine{m, "unsynced"} },
	"keeps the caller's slice": func(m *Memory) storage.Engine { return brokenEngine{m, "alias"} },
}

type brokenEngine struct {
	*Memory
	how string
}

type brokenBatch struct {
	storage.Batch
	how  string
	sets *[][2][]byte // "alias": the Sets, by the caller's slices, until Commit
}

func (b brokenBatch) DeleteRange(lo, hi []byte) {
	if b.how != "range" {
		b.Batch.DeleteRange(lo, hi)
	}
}

func (b brokenBatch) Set(key, value []byte) {
	if b.how == "alias" {
		*b.sets = append(*b.sets, [2][]byte{key, value}) // read at Commit, whatever the caller did since
		return
	}
	b.Batch.Set(key, value)
}

func (e brokenEngine) NewBatch() storage.Batch {
	return brokenBatch{e.Memory.NewBatch(), e.how, new([][2][]byte)}
}

func (e brokenEngine) Commit(b storage.Batch, sync bool) (storage.Ticket, error) {
	bb := b.(brokenBatch)
	if e.how == "unsynced" && !sync {
		return nil, nil // applied nowhere
	}
	for _, kv := range *bb.sets {
		bb.Batch.Set(kv[0], kv[1])
	}
	return e.Memory.Commit(bb.Batch, sync)
}

func (e brokenEngine) Scan(lo, hi []byte, fn func(key, value []byte) error) error {
	if e.how == "hi" {
		hi = append(hi, 0)
	}
	return e.Memory.Scan(lo, hi, fn)
}

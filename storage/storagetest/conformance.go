package storagetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/fifoq/fifoq/storage"
)

// An Opener opens the engine of one store. Each call opens the same store again; the engine it opened
// before has been closed by then.
type Opener func() (storage.Engine, error)

// Run runs the conformance suite of a storage engine: the contract of package storage, as far as a test
// in one process can see it (a crash of the machine is for the engine's own tests). newStore returns an
// Opener of a new, empty store; it is called once for each test, which runs in parallel with the others.
// Run it from the engine's tests:
//
//	func TestConformance(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T) storagetest.Opener {
//			dir := t.TempDir()
//			return func() (storage.Engine, error) { return myengine.Open(dir) }
//		})
//	}
func Run(t *testing.T, newStore func(t *testing.T) Opener) {
	for _, c := range conformance {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.test(t, newStore(t))
		})
	}
}

var conformance = []struct {
	name string
	test func(t *testing.T, open Opener)
}{
	{"Empty", testEmpty},
	{"ScanOrderAndBounds", testScanOrder},
	{"BatchLastWriteWins", testBatchOrder},
	{"Deletes", testDeletes},
	{"BatchCopiesItsInput", testBatchCopies},
	{"ScanSeesCommitted", testScanSeesCommitted},
	{"ScanStopsAtError", testScanError},
	{"Tickets", testTickets},
	{"CloseKeepsCommitted", testCloseKeeps},
	{"Closed", testClosed},
	{"ConcurrentCommits", testConcurrentCommits},
	{"LargeValue", testLargeValue},
	{"InSynctestBubble", testInBubble},
	{"Syncer", testSyncer},
}

// kvPair is a key and its value as a Scan saw them.
type kvPair struct{ key, value string }

func mustOpen(t *testing.T, open Opener) storage.Engine {
	t.Helper()
	e, err := open()
	if err != nil {
		t.Fatalf("open the store: %v", err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// commit commits one batch of writes and waits until it is durable.
func commit(t testing.TB, e storage.Engine, write func(b storage.Batch)) {
	t.Helper()
	b := e.NewBatch()
	write(b)
	tk, err := e.Commit(b, true)
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if tk == nil {
		t.Fatal("Commit with sync returned no Ticket")
	}
	if err := tk.Wait(); err != nil {
		t.Fatalf("Wait: %v", err)
	}
}

func scan(t testing.TB, e storage.Engine, lo, hi string) []kvPair {
	t.Helper()
	var out []kvPair
	err := e.Scan([]byte(lo), []byte(hi), func(k, v []byte) error {
		out = append(out, kvPair{string(k), string(v)})
		return nil
	})
	if err != nil {
		t.Fatalf("Scan(%q, %q): %v", lo, hi, err)
	}
	return out
}

func want(t testing.TB, got []kvPair, pairs ...string) {
	t.Helper()
	var w []kvPair
	for i := 0; i < len(pairs); i += 2 {
		w = append(w, kvPair{pairs[i], pairs[i+1]})
	}
	if !slices.Equal(got, w) {
		t.Fatalf("scan found %q, want %q", got, w)
	}
}

// all is a range that holds every key the tests write.
const allLo, allHi = "\x00", "\xff\xff"

func testEmpty(t *testing.T, open Opener) {
	e := mustOpen(t, open)
	want(t, scan(t, e, allLo, allHi))
	if h := e.Health(); h.Err != nil {
		t.Fatalf("Health of a new store: %v", h.Err)
	}
}

func testScanOrder(t *testing.T, open Opener) {
	e := mustOpen(t, open)
	keys := []string{"b", "a", "\x00", "\xff", "ab", "a\x00", "\x01\x02", "b\xff"}
	commit(t, e, func(b storage.Batch) {
		for _, k := range keys {
			b.Set([]byte(k), []byte("v"+k))
		}
	})
	sorted := slices.Clone(keys)
	slices.Sort(sorted) // byte order
	var pairs []string
	for _, k := range sorted {
		pairs = append(pairs, k, "v"+k)
	}
	want(t, scan(t, e, allLo, allHi), pairs...)
	// [lo, hi): lo included, hi not.
	want(t, scan(t, e, "a", "b"), "a", "va", "a\x00", "va\x00", "ab", "vab")
	want(t, scan(t, e, "a\x00", "ab"), "a\x00", "va\x00")
	want(t, scan(t, e, "c", "d"))
}

func testBatchOrder(t *testing.T, open Opener) {
	e := mustOpen(t, open)
	commit(t, e, func(b storage.Batch) {
		b.Set([]byte("k1"), []byte("first"))
		b.Set([]byte("k1"), []byte("second"))
		b.Set([]byte("k2"), []byte("x"))
		b.Delete([]byte("k2"))
		b.Set([]byte("k3"), []byte("x"))
		b.DeleteRange([]byte("k3"), []byte("k4"))
		b.Set([]byte("k3"), []byte("after the range"))
		if b.Len() != 7 {
			t.Errorf("Len() = %d after 7 writes", b.Len())
		}
	})
	want(t, scan(t, e, allLo, allHi), "k1", "second", "k3", "after the range")
	// Later batches win over earlier ones.
	commit(t, e, func(b storage.Batch) { b.Set([]byte("k1"), []byte("third")) })
	want(t, scan(t, e, "k1", "k2"), "k1", "third")
}

func testDeletes(t *testing.T, open Opener) {
	e := mustOpen(t, open)
	commit(t, e, func(b storage.Batch) {
		for _, k := range []string{"a", "b", "c", "d", "e", "f"} {
			b.Set([]byte(k), []byte(k))
		}
	})
	commit(t, e, func(b storage.Batch) {
		b.Delete([]byte("a"))
		b.SingleDelete([]byte("b"))
		b.DeleteRange([]byte("c"), []byte("e")) // c and d, not e
		b.Delete([]byte("absent"))
		b.SingleDelete([]byte("absent too"))
	})
	want(t, scan(t, e, allLo, allHi), "e", "e", "f", "f")
	// A key single-deleted may be set again, and is there.
	commit(t, e, func(b storage.Batch) { b.Set([]byte("b"), []byte("again")) })
	commit(t, e, func(b storage.Batch) {
		b.SingleDelete([]byte("b"))
		b.Set([]byte("b"), []byte("once more"))
	})
	want(t, scan(t, e, "b", "c"), "b", "once more")
}

func testBatchCopies(t *testing.T, open Opener) {
	e := mustOpen(t, open)
	k, v := []byte("key"), []byte("value")
	b := e.NewBatch()
	b.Set(k, v)
	copy(k, "KEY")
	copy(v, "VALUE")
	tk, err := e.Commit(b, true)
	if err == nil {
		err = tk.Wait()
	}
	if err != nil {
		t.Fatal(err)
	}
	want(t, scan(t, e, allLo, allHi), "key", "value")
}

func testScanSeesCommitted(t *testing.T, open Opener) {
	e := mustOpen(t, open)
	b := e.NewBatch()
	b.Set([]byte("unsynced"), []byte("v"))
	tk, err := e.Commit(b, false)
	if err != nil {
		t.Fatal(err)
	}
	if tk != nil {
		t.Fatal("Commit without sync returned a Ticket")
	}
	want(t, scan(t, e, allLo, allHi), "unsynced", "v")
}

func testScanError(t *testing.T, open Opener) {
	e := mustOpen(t, open)
	commit(t, e, func(b storage.Batch) {
		for i := range 10 {
			b.Set(fmt.Appendf(nil, "k%d", i), []byte("v"))
		}
	})
	stop := errors.New("stop")
	n := 0
	err := e.Scan([]byte(allLo), []byte(allHi), func(k, v []byte) error {
		n++
		if n == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 3 {
		t.Fatalf("Scan whose fn fails at the third key: %v after %d keys, want the fn's error after 3", err, n)
	}
}

func testTickets(t *testing.T, open Opener) {
	e := mustOpen(t, open)
	var tickets []storage.Ticket
	for i := range 20 {
		b := e.NewBatch()
		b.Set(fmt.Appendf(nil, "k%02d", i), []byte("v"))
		tk, err := e.Commit(b, i%2 == 0)
		if err != nil {
			t.Fatal(err)
		}
		if (tk != nil) != (i%2 == 0) {
			t.Fatalf("Commit %d (sync %v) returned Ticket %v", i, i%2 == 0, tk)
		}
		if tk != nil {
			tickets = append(tickets, tk)
		}
	}
	for _, tk := range slices.Backward(tickets) { // a later ticket first: an earlier one is durable too
		if err := tk.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	if h := e.Health(); h.Err != nil {
		t.Fatalf("Health after commits: %v", h.Err)
	}
}

func testCloseKeeps(t *testing.T, open Opener) {
	e, err := open()
	if err != nil {
		t.Fatal(err)
	}
	commit(t, e, func(b storage.Batch) { b.Set([]byte("synced"), []byte("1")) })
	b := e.NewBatch()
	b.Set([]byte("unsynced"), []byte("2"))
	if _, err := e.Commit(b, false); err != nil {
		t.Fatal(err)
	}
	syncs := e.Health().Syncs
	if err := e.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if h := e.Health(); h.Syncs < syncs {
		t.Fatalf("Health after Close counts %d syncs, %d before", h.Syncs, syncs)
	}
	e = mustOpen(t, open)
	want(t, scan(t, e, allLo, allHi), "synced", "1", "unsynced", "2")
}

// testSyncer: an engine that implements storage.Syncer syncs what was committed without a sync, counts the
// sync if it counts syncs, and refuses to once closed.
func testSyncer(t *testing.T, open Opener) {
	e, err := open()
	if err != nil {
		t.Fatal(err)
	}
	s, ok := e.(storage.Syncer)
	if !ok {
		_ = e.Close()
		t.Skip("the engine does not implement storage.Syncer")
	}
	b := e.NewBatch()
	b.Set([]byte("k"), []byte("v"))
	if _, err := e.Commit(b, false); err != nil {
		t.Fatal(err)
	}
	before := e.Health().Syncs
	if err := s.Sync(); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if h := e.Health(); h.Syncs != 0 && h.Syncs <= before {
		t.Fatalf("Health counts %d syncs after Sync, %d before", h.Syncs, before)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Sync(); !errors.Is(err, storage.ErrClosed) {
		t.Fatalf("Sync after Close: %v, want storage.ErrClosed", err)
	}
	e = mustOpen(t, open)
	want(t, scan(t, e, allLo, allHi), "k", "v")
}

func testClosed(t *testing.T, open Opener) {
	e, err := open()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("a second Close: %v, want nil", err)
	}
	b := e.NewBatch()
	b.Set([]byte("k"), []byte("v"))
	if _, err := e.Commit(b, true); !errors.Is(err, storage.ErrClosed) {
		t.Fatalf("Commit after Close: %v, want storage.ErrClosed", err)
	}
	if err := e.Scan([]byte(allLo), []byte(allHi), func(k, v []byte) error { return nil }); !errors.Is(err, storage.ErrClosed) {
		t.Fatalf("Scan after Close: %v, want storage.ErrClosed", err)
	}
	_ = e.Health() // safe after Close
}

func testConcurrentCommits(t *testing.T, open Opener) {
	e := mustOpen(t, open)
	const writers, each = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				b := e.NewBatch()
				// Each writer's batches set its own key, in order: the last one stays.
				b.Set(fmt.Appendf(nil, "w%d", w), fmt.Appendf(nil, "%03d", i))
				b.Set(fmt.Appendf(nil, "w%d-%03d", w, i), nil)
				tk, err := e.Commit(b, i%3 == 0)
				if err == nil && tk != nil {
					err = tk.Wait()
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := scan(t, e, allLo, allHi)
	if len(got) != writers*(each+1) {
		t.Fatalf("%d keys after %d writers' %d batches, want %d", len(got), writers, each, writers*(each+1))
	}
	for w := range writers {
		last := scan(t, e, fmt.Sprintf("w%d", w), fmt.Sprintf("w%d\x00", w))
		if len(last) != 1 || last[0].value != fmt.Sprintf("%03d", each-1) {
			t.Fatalf("writer %d's key holds %q, want its last batch's %03d", w, last, each-1)
		}
	}
}

func testLargeValue(t *testing.T, open Opener) {
	e := mustOpen(t, open)
	big := bytes.Repeat([]byte("0123456789abcdef"), 256<<10/16*5) // 1.25 MiB
	commit(t, e, func(b storage.Batch) { b.Set([]byte("big"), big) })
	err := e.Scan([]byte(allLo), []byte(allHi), func(k, v []byte) error {
		if !bytes.Equal(v, big) {
			return fmt.Errorf("a value of %d bytes read back as %d bytes", len(big), len(v))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// testInBubble uses an engine opened outside a testing/synctest bubble from inside one, as a queue made in a
// bubble on a store opened outside it does: the engine must not make the bubble's goroutines wait on what
// only goroutines outside it can signal through the bubble's channels (synctest panics on such a send).
func testInBubble(t *testing.T, open Opener) {
	e := mustOpen(t, open)
	synctest.Test(t, func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for w := range 4 {
			wg.Go(func() {
				for i := range 100 {
					b := e.NewBatch()
					b.Set(fmt.Appendf(nil, "bubble-%d-%03d", w, i), []byte("v"))
					tk, err := e.Commit(b, true)
					if err == nil {
						err = tk.Wait()
					}
					if err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if got := scan(t, e, "bubble-", "bubble."); len(got) != 400 {
			t.Fatalf("%d keys in the bubble, want 400", len(got))
		}
	})
}

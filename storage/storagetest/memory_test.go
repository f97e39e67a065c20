package storagetest

import (
	"testing"

	"github.com/fifoq/fifoq/storage"
)

// TestSingleDeleteChecked: Memory panics on a SingleDelete that Pebble would make undefined (a key set more
// than once since its last removal, or found on the disk when the engine opened), and takes the uses
// that are well defined.
func TestSingleDeleteChecked(t *testing.T) {
	k, v := []byte("k"), []byte("v")
	mustPanic := func(t *testing.T, m *Memory, write func(b storage.Batch)) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Fatal("no panic")
			}
		}()
		commit(t, m, write)
	}
	t.Run("set twice", func(t *testing.T) {
		m, err := NewDisk().Open()
		if err != nil {
			t.Fatal(err)
		}
		commit(t, m, func(b storage.Batch) { b.Set(k, v) })
		commit(t, m, func(b storage.Batch) { b.Set(k, v) })
		mustPanic(t, m, func(b storage.Batch) { b.SingleDelete(k) })
	})
	t.Run("set twice in a batch", func(t *testing.T) {
		m, _ := NewDisk().Open()
		mustPanic(t, m, func(b storage.Batch) { b.Set(k, v); b.Set(k, v); b.SingleDelete(k) })
	})
	t.Run("on the disk before", func(t *testing.T) {
		d := NewDisk()
		m, _ := d.Open()
		commit(t, m, func(b storage.Batch) { b.Set(k, v) })
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		m, err := d.Open()
		if err != nil {
			t.Fatal(err)
		}
		mustPanic(t, m, func(b storage.Batch) { b.SingleDelete(k) })
	})
	t.Run("well defined", func(t *testing.T) {
		d := NewDisk()
		m, _ := d.Open()
		commit(t, m, func(b storage.Batch) { b.SingleDelete(k); b.Set(k, v) })                    // absent, then set once
		commit(t, m, func(b storage.Batch) { b.SingleDelete(k); b.Set(k, v); b.SingleDelete(k) }) // set, removed, set, removed
		commit(t, m, func(b storage.Batch) { b.Set(k, v); b.Set(k, v); b.Delete(k); b.Set(k, v) })
		commit(t, m, func(b storage.Batch) { b.SingleDelete(k) })
		commit(t, m, func(b storage.Batch) { b.Set(k, v); b.Set([]byte("l"), v) })
		commit(t, m, func(b storage.Batch) { b.DeleteRange([]byte("a"), []byte("z")); b.Set(k, v); b.SingleDelete(k) })
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		if n := d.Len(); n != 0 {
			t.Fatalf("%d keys left", n)
		}
		m, _ = d.Open()
		commit(t, m, func(b storage.Batch) { b.Set(k, v) })
		commit(t, m, func(b storage.Batch) { b.Delete(k); b.Set(k, v) }) // a key set before is removed, then set once
		commit(t, m, func(b storage.Batch) { b.SingleDelete(k) })
	})
}

// Memory keeps the contract every engine keeps.
func TestMemoryConformance(t *testing.T) {
	Run(t, func(t *testing.T) Opener {
		d := NewDisk()
		return func() (storage.Engine, error) { return d.Open() }
	})
}

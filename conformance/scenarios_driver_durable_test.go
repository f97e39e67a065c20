package conformance_test

// The durable server of the spec §12 scenarios (scDurable): the wire driver over a server of a catalogue
// kept in a store (catalog.Open) of the in-memory engine, which the restart mode restarts before every request.

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/sqsapi"
	"github.com/fifoq/fifoq/storage/storagetest"
)

// scDurable is an sqs.HTTPClient that serves each request with a durable server (drServe) on a fresh
// disk of the in-memory engine (internal/storagetest.Memory), on the scenario's clock. With restarts, before each
// request but the first it stops the server and its store (closes them, or crashes the engine) and opens
// them again on the same disk and clock: every answer, and so every check of a scenario, comes from a server
// that knows only what was stored. A restart is left out, and the request goes to the server there is, when:
//   - another request is in progress (a long poll of scPoll): stopping the server would end it;
//   - a move task has started: running move tasks, and the tasks ListMessageMoveTasks shows, are not stored
//     (README, Durability: "start them again"), so the scenario runs on from there without restarts.
type scDurable struct {
	clk     *fifoq.ManualClock
	disk    *storagetest.Disk
	restart bool         // restart before every request
	tasked  atomic.Bool  // a move task has started
	served  atomic.Int64 // requests served

	// mu is held shared by each request in progress and exclusively by a restart; it guards the fields
	// below.
	mu       sync.RWMutex
	eng      *storagetest.Memory
	st       *fifoq.Store
	srv      *sqsapi.Server
	restarts int // restarts done
}

// scNewDurable returns a wire driver over a durable server on a new disk, which restarts before every
// request if restarts is set (scDurable). The server and its store are closed when t ends.
func scNewDurable(t *testing.T, clk *fifoq.ManualClock, restarts bool) *scWire {
	t.Helper()
	d := &scDurable{clk: clk, disk: storagetest.NewDisk(), restart: restarts}
	if err := d.openLocked(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if err := d.closeLocked(); err != nil {
			t.Error(err)
		}
		if restarts {
			t.Logf("%d restarts for %d requests", d.restarts, d.served.Load())
		}
	})
	return scWireOver(d)
}

// openLocked opens a store on the disk and a server on it.
func (d *scDurable) openLocked() error {
	eng, err := d.disk.Open()
	if err != nil {
		return fmt.Errorf("durable driver: opening the disk: %w", err)
	}
	st, err := fifoq.OpenStore(eng, "disk")
	if err != nil {
		return fmt.Errorf("durable driver: opening the store: %w", err)
	}
	d.eng, d.st = eng, st
	d.srv, err = drServe(d.st, catalog.Namespace{Account: scAccount, Region: scRegion}, []catalog.Option{catalog.WithClock(d.clk)},
		scServerOptions(d.clk)...)
	if err != nil {
		return fmt.Errorf("durable driver: catalog.Open after %d restarts: %w", d.restarts, err)
	}
	return nil
}

// closeLocked closes the server and its store.
func (d *scDurable) closeLocked() error {
	if err := drClose(d.srv); err != nil {
		return fmt.Errorf("durable driver: Server.Close, Catalog.Close: %w", err)
	}
	if err := d.st.Close(); err != nil {
		return fmt.Errorf("durable driver: Store.Close: %w", err)
	}
	return nil
}

// Do restarts the server if it may, then serves req.
func (d *scDurable) Do(req *http.Request) (*http.Response, error) {
	if d.restart && d.served.Load() > 0 && d.mu.TryLock() {
		err := d.restartLocked()
		d.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	d.served.Add(1)
	resp, err := d.srv.HTTPClient().Do(req)
	if err == nil && resp.StatusCode == http.StatusOK &&
		strings.HasSuffix(req.Header.Get("X-Amz-Target"), ".StartMessageMoveTask") {
		d.tasked.Store(true)
	}
	return resp, err
}

// restartLocked stops the server and its store and opens them again, unless a move task has started. The
// restarts alternate between a clean one (Server.Close, Catalog.Close, Store.Close) and a crash of the engine, which loses
// what was not synced: what a request acknowledged must be on the disk already.
func (d *scDurable) restartLocked() error {
	if d.tasked.Load() {
		return nil
	}
	if d.restarts%2 == 0 {
		if err := d.closeLocked(); err != nil {
			return err
		}
	} else {
		if err := drClose(d.srv); err != nil {
			return fmt.Errorf("durable driver: Server.Close, Catalog.Close: %w", err)
		}
		d.eng.Crash()
	}
	d.restarts++
	return d.openLocked()
}

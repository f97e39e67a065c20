package durable

import (
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/fifoq/fifoq/storage"
)

// A round is the batches that one sync makes durable; its Ticket waits for them. run makes rounds, so their
// channel is made outside any synctest bubble.
type round struct {
	done    chan struct{}
	err     error
	sync    bool // a batch of the round asks for a sync
	waiters int  // the commits of the round that asked for a sync
	want    int  // run waits for so many waiters before it starts the round (gather), or 0
}

func newRound() *round { return &round{done: make(chan struct{})} }

func (r *round) Wait() error {
	<-r.done
	return r.err
}

// A batch is a Pebble batch, with the first error its writes met (a batch past Pebble's 4 GB): Commit
// returns it rather than commit the batch without the write.
type batch struct {
	pb  *pebble.Batch
	err error
}

func (b *batch) keep(err error) {
	if err != nil && b.err == nil {
		b.err = err
	}
}

func (b *batch) Set(key, value []byte)     { b.keep(b.pb.Set(key, value, nil)) }
func (b *batch) Delete(key []byte)         { b.keep(b.pb.Delete(key, nil)) }
func (b *batch) SingleDelete(key []byte)   { b.keep(b.pb.SingleDelete(key, nil)) }
func (b *batch) DeleteRange(lo, hi []byte) { b.keep(b.pb.DeleteRange(lo, hi, nil)) }
func (b *batch) Len() int                  { return int(b.pb.Count()) }

func (e *engine) NewBatch() storage.Batch { return e.pool.Get().(*batch) }

func (e *engine) release(b *batch) {
	b.pb.Reset()
	b.err = nil
	e.pool.Put(b)
}

// Commit queues b for run and returns the round it belongs to. A batch whose write failed is not
// committed: its error breaks the engine, as any failed commit does (fail-stop: the queue changed in memory
// what it could not record).
func (e *engine) Commit(sb storage.Batch, sync bool) (storage.Ticket, error) {
	b := sb.(*batch)
	if err := b.err; err != nil {
		e.release(b)
		err = fmt.Errorf("durable: a write of a batch: %w", err)
		e.fail(err)
		return nil, err
	}
	r, err := e.enqueue(item{b: b}, sync)
	if err != nil {
		e.release(b)
		return nil, err
	}
	if !sync {
		return nil, nil
	}
	return r, nil
}

func (e *engine) enqueue(it item, sync bool) (*round, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, storage.ErrClosed
	}
	if e.broken != nil {
		return nil, e.broken
	}
	e.queue = append(e.queue, it)
	r := e.round
	if sync {
		r.sync = true
		r.waiters++
		if r.waiters == r.want {
			select {
			case e.full <- struct{}{}:
			default:
			}
		}
	}
	if len(e.queue) == 1 {
		select {
		case e.wake <- struct{}{}:
		default:
		}
	}
	return r, nil
}

// maxGather bounds how long a round waits for its callers (gather), whatever the disk.
const maxGather = 10 * time.Millisecond

// run applies the queued batches round by round until Close; with WithSyncEvery, a goroutine of its own
// (syncEvery) syncs the logs every interval meanwhile.
func (e *engine) run() {
	defer close(e.exited)
	var stopSyncs func()
	if e.every > 0 {
		stopSyncs = e.startSyncs()
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var items []item
	for {
		<-e.wake
		e.gather(timer)
		e.mu.Lock()
		items, e.queue = e.queue, items[:0]
		r := e.round
		if len(items) > 0 {
			e.round = newRound()
		}
		closing := e.closed
		e.mu.Unlock()
		if len(items) > 0 {
			r.err = e.apply(items, r.sync || closing)
			e.expect(r.waiters)
			close(r.done)
			clear(items)
		}
		if closing {
			if stopSyncs != nil {
				stopSyncs()
				_ = e.syncLogs() // an error failed the store, which Close returns
			}
			e.mu.Lock()
			e.round.err = storage.ErrClosed
			close(e.round.done)
			e.mu.Unlock()
			return
		}
	}
}

// expect sets how many commits that wait for a sync the next round should gather (gather), as a round
// ends, before it wakes its waiters: those that arrived while it was written and synced, and the round's
// own waiters, who may come back.
func (e *engine) expect(waiters int) {
	if e.every > 0 || waiters == 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	select {
	case <-e.full: // a signal of an earlier round, which did not wait for it
	default:
	}
	e.round.want = e.round.waiters + waiters
}

// startSyncs starts the goroutine that syncs the logs every interval (WithSyncEvery), and returns the
// function that stops it and waits for it to end. The syncs do not wait for a commit round: while Pebble
// holds one (a write stall, its memtables waiting for a flush, which a slow disk makes long), what was
// acknowledged before is synced on time, not once the round is done. Its channels are made on run's
// goroutine, outside any synctest bubble.
func (e *engine) startSyncs() (stop func()) {
	tick := e.ticks
	var ticker *time.Ticker
	if tick == nil {
		ticker = time.NewTicker(e.every)
		tick = ticker.C
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case <-tick:
				_ = e.syncLogs() // an error failed the store
				if e.ticked != nil {
					e.ticked <- struct{}{}
				}
			}
		}
	}()
	return func() {
		close(quit)
		<-done
		if ticker != nil {
			ticker.Stop()
		}
	}
}

// gather waits, before a round starts, for the callers that the last round woke to commit again: a round
// that started at once would leave them to the next one, so that callers would take turns, each sync
// carrying half of them. It waits until the round holds the commits that expect asked for, or for half the
// time a synced round takes (its moving average, at most maxGather), whichever comes first: a caller that
// does not come back costs a round half a sync's time at most. With WithSyncEvery, whose rounds do not
// wait for the disk, it does not wait.
func (e *engine) gather(timer *time.Timer) {
	if e.every > 0 {
		return
	}
	window := min(e.latency/2, maxGather)
	if window <= 0 {
		return
	}
	e.mu.Lock()
	r := e.round
	wait := !e.closed && len(e.queue) > 0 && r.want > 0 && r.waiters < r.want
	e.mu.Unlock()
	if !wait {
		return
	}
	timer.Reset(window)
	select {
	case <-e.full:
	case <-timer.C:
	}
	timer.Stop()
}

// apply writes a round's batches to Pebble, in order, as one batch, with a sync when the round asks for
// one, and starts its scans after the batches committed before them.
func (e *engine) apply(items []item, sync bool) error {
	e.mu.Lock()
	err := e.broken
	e.mu.Unlock()
	failed := err != nil
	start := time.Now()
	var buf [16]*batch // a round's batches are few
	pending := buf[:0]
	wrote := false
	for _, it := range items {
		switch {
		case it.b != nil:
			if err == nil && it.b.pb.Count() > 0 {
				pending = append(pending, it.b)
				continue // released once written
			}
			e.release(it.b)
		case it.scan != nil && err == nil:
			err = e.write(pending, pebble.NoSync, &wrote)
			for _, b := range pending {
				e.release(b)
			}
			pending = pending[:0]
			if err == nil {
				e.startScan(it.scan)
			}
		}
	}
	opts := pebble.NoSync
	if sync {
		opts = pebble.Sync
	}
	if err == nil {
		last := len(pending) > 0
		err = e.write(pending, opts, &wrote)
		if err == nil && sync && !last {
			// Nothing left to write with the sync (nothing written, or all of it before a scan, without
			// one): sync what was.
			err = e.guard(func() error { return e.db.LogData(nil, pebble.Sync) })
			if err == nil {
				e.applied.Store(e.written)
			}
		}
	}
	for _, b := range pending {
		e.release(b)
	}
	switch {
	case err == nil && sync && e.every == 0:
		e.synced(e.applied.Load(), time.Since(start))
	case err == nil && wrote:
		e.unsynced.Store(true)
	case err != nil && !failed:
		e.fail(err)
		e.mu.Lock()
		err = e.broken
		e.mu.Unlock()
	}
	return err
}

// write applies batches to Pebble as one write, with opts, and marks wrote when it wrote something. With
// WithSyncEvery, a sync writes the log to the operating system without syncing it (relaxedFS).
func (e *engine) write(batches []*batch, opts *pebble.WriteOptions, wrote *bool) error {
	var pb *pebble.Batch
	switch len(batches) {
	case 0:
		return nil
	case 1:
		pb = batches[0].pb
	default:
		if e.merged == nil {
			e.merged = e.db.NewBatch()
		}
		pb = e.merged
		defer pb.Reset()
		for _, b := range batches {
			if err := pb.Apply(b.pb, nil); err != nil {
				return err
			}
		}
	}
	*wrote = true
	if e.onWrite != nil {
		e.onWrite(pb.Repr(), opts == pebble.Sync)
	}
	err := e.guard(func() error { return e.db.Apply(pb, opts) })
	if err == nil {
		e.written = lastSeqOf(pb)
	}
	if err == nil && opts == pebble.Sync {
		// Its records are in the log (synced, or with WithSyncEvery written to the operating system), and so
		// are those of every write before it: the mark may record them. A write without a sync returns
		// before Pebble writes the log.
		e.applied.Store(e.written)
	}
	return err
}

// syncLogs syncs the logs, with WithSyncEvery, when a round was written since they were last synced; when
// none was, it writes the sync mark again if its last write failed (markSynced). It runs on the goroutine
// of startSyncs, and once that one ended, on run's, at Close; and on a caller's, in Sync. It returns the
// error that failed the store, if it did.
func (e *engine) syncLogs() error {
	if e.relaxed == nil {
		return nil
	}
	e.syncMu.Lock()
	defer e.syncMu.Unlock()
	if err := e.brokenErr(); err != nil {
		return err
	}
	// What was applied before the sync begins is written to the logs (Pebble wrote it before Apply
	// returned), so the sync covers it: the mark records no more than that.
	applied := e.applied.Load()
	if !e.unsynced.Swap(false) {
		if e.markBehind {
			e.markSynced(applied) // what the last sync covered: nothing was applied since
		}
		return nil
	}
	applied = e.applied.Load() // after the Swap: a round written since sets unsynced again
	start := time.Now()
	synced, err := e.relaxed.syncLogs()
	if err != nil {
		e.fail(fmt.Errorf("sync of the log: %w", err))
		return e.brokenErr()
	}
	e.logSynced = synced
	e.synced(applied, time.Since(start))
	return nil
}

// Sync makes every batch committed before it durable (storage.Syncer): it commits an empty batch with a
// sync and waits for it, which by default syncs the log; with WithSyncEvery, that only writes the log, and
// Sync then syncs the logs itself, at once, rather than at the next interval. A queue calls it after it
// records a new block of sequence numbers, before it gives out the first of them: once per 4096 numbers,
// and once after each start.
func (e *engine) Sync() error {
	t, err := e.Commit(e.NewBatch(), true)
	if err != nil {
		return err
	}
	if err := t.Wait(); err != nil {
		return err
	}
	return e.syncLogs()
}

// synced runs after each successful sync of the write-ahead log, which covered every record up to the
// sequence number applied: a synced round's (on run's goroutine: it took took to write and sync), or with
// WithSyncEvery the logs' sync every interval (on the goroutine of startSyncs).
func (e *engine) synced(applied uint64, took time.Duration) {
	e.markSynced(applied) // what the sync made durable: record it (syncmark.go)
	e.health.syncs.Add(1)
	if e.every > 0 {
		return // the latency is gather's, which a relaxed store does not use
	}
	if e.latency == 0 {
		e.latency = took
	} else {
		e.latency += (took - e.latency) / 8
	}
}

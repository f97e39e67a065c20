package durable_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/durable"
)

// The child process of the crash test (crash_test.go): it opens the store, prints "ready", and sends,
// receives, deletes, fails and redrives through both queue pairs until it is killed, or until its standard
// input closes (the last round), when it stops its goroutines, closes the store and prints "closed".

// crashChild is one child process's workload.
type crashChild struct {
	round  int
	seed   uint64
	base   time.Time // now() is base's wall clock plus the monotonic time since; the queues read it too (crashClock)
	log    *crashLog
	synced atomic.Pointer[crashLog] // the log that the store's real syncs are recorded in, once there is one
	sent   atomic.Int64             // sends acknowledged
	signal func(sent int64)         // called after each acknowledged send
	pairs  [2]*crashPair
	stop   chan struct{}
	calls  atomic.Int64 // receive calls
}

func (c *crashChild) now() int64 { return crashClock{c.base}.Now().UnixNano() }

// at is the moment t (a reading of time.Now, with its monotonic clock) by the child's clock.
func (c *crashChild) at(t time.Time) int64 { return c.base.Add(t.Sub(c.base)).UnixNano() }

// crashClock is the clock of a child's queues: base's wall clock plus the monotonic time since, the
// reckoning of the times the child logs (crashChild.now). With the real clock, each queue's epoch would be
// a reading of the wall clock of its own, taken after the store opened: a step of the wall clock between
// the child's start and that reading would put every time the queue records (a FIFO message's arrival in
// the dead-letter queue, its SentAt there, which the order check compares with the end of receives) off
// the child's by the step, and the checks would see a message move to the dead-letter queue after a receive
// that came after it, or hide one that did.
type crashClock struct{ base time.Time }

func (c crashClock) Now() time.Time { return c.base.Add(time.Since(c.base)) }

func (crashClock) AfterFunc(d time.Duration, f func()) fifoq.Timer { return time.AfterFunc(d, f) }

func (c *crashChild) stopped() bool {
	select {
	case <-c.stop:
		return true
	default:
		return false
	}
}

// pause waits d, or until the child stops.
func (c *crashChild) pause(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.stop:
	}
}

func (c *crashChild) rng(stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(c.seed, stream))
}

func (c *crashChild) pair(q string) *crashPair {
	if q == "f" {
		return c.pairs[0]
	}
	return c.pairs[1]
}

// runCrashChild is the child's whole life. stdin closing asks it to stop. The store is in dir/store, or in
// the directory FIFOQ_CRASH_CHILD_STORE names (the power-loss test's mount); its sync mode is the child's
// choice, or what FIFOQ_CRASH_CHILD_SYNC says: "ack", or WithSyncEvery's interval.
func runCrashChild(dir string, round int, seed uint64, stdin io.Reader, stdout io.Writer) (err error) {
	c := &crashChild{round: round, seed: seed, base: time.Now(), stop: make(chan struct{})}
	js, err := os.ReadFile(crashInputPath(dir, round))
	if err != nil {
		return err
	}
	var in crashInput
	if err := json.Unmarshal(js, &in); err != nil {
		return err
	}
	// A small memtable makes Pebble flush and compact within a round, so that kills land in those too.
	memTable := []uint64{64 << 10, 256 << 10, 4 << 20}[c.rng(500).IntN(3)]
	opts := []durable.Option{durable.WithMemTableSize(memTable)}
	// Half the children sync their log every so often rather than at each acknowledgement
	// (durable.WithSyncEvery): a kill of the process must lose nothing then either.
	syncMode := "ack"
	every := []time.Duration{0, 0, time.Millisecond, time.Hour}[c.rng(501).IntN(4)]
	if s := os.Getenv("FIFOQ_CRASH_CHILD_SYNC"); s != "" {
		every = 0
		if s != "ack" {
			if every, err = time.ParseDuration(s); err != nil {
				return fmt.Errorf("FIFOQ_CRASH_CHILD_SYNC: %w", err)
			}
		}
	}
	if every > 0 {
		// The power-loss test needs when each real sync began: what was acknowledged before is durable.
		opts = append(opts, durable.WithSyncEvery(every), durable.WithSyncHook(func(began time.Time, done bool) {
			if l := c.synced.Load(); l != nil {
				_ = l.write(crashRec{K: recSynced, Start: c.at(began), State: map[bool]string{false: "begin", true: "done"}[done]})
			}
		}))
		syncMode = every.String()
	}
	store := os.Getenv("FIFOQ_CRASH_CHILD_STORE")
	if store == "" {
		store = filepath.Join(dir, "store")
	}
	st, err := durable.Open(store, opts...)
	if err != nil {
		return err
	}
	// On an error the store stays open: the process ends at once, as if killed.
	if c.pairs, err = openCrashQueues(st, fifoq.WithClock(crashClock{c.base})); err != nil {
		return err
	}
	if c.log, err = createCrashLog(crashLogPath(dir, round)); err != nil {
		return err
	}
	c.synced.Store(c.log)
	defer func() {
		if err != nil {
			_ = c.log.write(crashRec{K: recFatal, Err: err.Error()})
		}
		_ = c.log.close()
	}()
	if err := c.log.write(crashRec{K: recBegin, Start: c.now(), State: syncMode}); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(stdout, "ready"); err != nil {
		return err
	}
	// FIFOQ_CRASH_CHILD_SIGNAL_SENT=n: print "sent" once n sends are acknowledged, for a parent that kills
	// the child then.
	if n, _ := strconv.ParseInt(os.Getenv("FIFOQ_CRASH_CHILD_SIGNAL_SENT"), 10, 64); n > 0 {
		var once sync.Once
		c.signal = func(sent int64) {
			if sent >= n {
				once.Do(func() { _, _ = fmt.Fprintln(stdout, "sent") })
			}
		}
	}
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		close(c.stop)
	}()

	var wg sync.WaitGroup
	errc := make(chan error, 16)
	run := func(f func() error) {
		wg.Go(func() {
			if err := f(); err != nil {
				errc <- err
			}
		})
	}
	pending := make([][]string, crashFIFOProducers)
	for _, id := range in.Pending {
		cid, err := parseCrashID(id)
		if err != nil || cid.prod >= crashFIFOProducers {
			return fmt.Errorf("pending send %q: %v", id, err)
		}
		pending[cid.prod] = append(pending[cid.prod], id)
	}
	for p := range crashFIFOProducers {
		run(func() error { return c.produce(c.pairs[0], p, pending[p]) })
	}
	run(func() error { return c.produce(c.pairs[1], 0, nil) })
	if err := c.release(in.Release); err != nil {
		return err
	}
	for i := range crashFIFOConsumers {
		run(func() error { return c.consume(c.pairs[0], uint64(200+i)) })
	}
	run(func() error { return c.consume(c.pairs[1], 300) })
	r := c.rng(400)
	for i, p := range c.pairs {
		if r.IntN(100) < crashRedrivePercent {
			delay := time.Duration(r.IntN(80)) * time.Millisecond
			run(func() error { return c.redrive(p, delay, c.rng(uint64(410+i))) })
		}
	}

	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case err := <-errc:
		return err
	case <-done:
	}
	select {
	case err := <-errc:
		return err
	default:
	}
	if err := st.Close(); err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, "closed")
	return err
}

// produce sends until the child stops: first the FIFO sends that earlier children attempted without
// success (pending, in their order, the same messages with the same deduplication ids), then new messages
// in the producer's own groups, one Send or a SendBatch of 1..10 at a time. Each group has one producer, so
// a group's send order is its producer's.
func (c *crashChild) produce(p *crashPair, prod int, pending []string) error {
	ctx := context.Background()
	stream := uint64(100 + prod)
	if p.q == "s" {
		stream = 150
	}
	r := c.rng(stream)
	var groups []string
	if p.q == "f" {
		for g := prod; g < crashFIFOGroups; g += crashFIFOProducers {
			groups = append(groups, fmt.Sprintf("g%02d", g))
		}
	} else {
		for g := range crashStdGroups {
			groups = append(groups, fmt.Sprintf("g%02d", g))
		}
	}
	message := func(id string) (fifoq.Message, crashRec) {
		cid, _ := parseCrashID(id)
		m := fifoq.Message{
			Body:       crashBodyOf(id),
			GroupID:    cid.group,
			Attributes: map[string]fifoq.Attribute{"id": {DataType: "String", StringValue: id}},
		}
		if p.q == "f" {
			m.DeduplicationID = id
		}
		if cid.delayed() {
			m.Delay = crashDelay
		}
		return m, crashRec{K: recAttempt, Q: p.q, ID: id, Group: cid.group, Dedup: m.DeduplicationID}
	}
	send := func(ms []fifoq.Message, attempts []crashRec) error {
		if err := c.log.write(attempts...); err != nil {
			return err
		}
		var results []fifoq.SendResult
		var err error
		if len(ms) == 1 && r.IntN(2) == 0 {
			var res fifoq.SendResult
			res, err = p.src.Send(ctx, ms[0])
			results = []fifoq.SendResult{res}
		} else {
			results, err = p.src.SendBatch(ctx, ms)
		}
		if err != nil {
			return fmt.Errorf("send to %s: %w", p.src.Name(), err)
		}
		end := c.now()
		sent := make([]crashRec, len(ms))
		for i, res := range results {
			sent[i] = crashRec{K: recSent, Q: p.q, ID: attempts[i].ID, Msg: res.MessageID, Seq: res.SequenceNumber, Dup: res.Duplicate, End: end}
		}
		if err := c.log.write(sent...); err != nil {
			return err
		}
		if n := c.sent.Add(int64(len(sent))); c.signal != nil {
			c.signal(n)
		}
		return nil
	}
	for _, id := range pending { // all of them, even once the child is asked to stop: the last round leaves none
		m, a := message(id)
		if err := send([]fifoq.Message{m}, []crashRec{a}); err != nil {
			return err
		}
	}
	n := 0
	for !c.stopped() {
		if s := p.src.Stats(); s.Visible+s.InFlight > crashBacklog {
			c.pause(5 * time.Millisecond)
			continue
		}
		k := 1 + r.IntN(10)
		ms := make([]fifoq.Message, k)
		attempts := make([]crashRec, k)
		for i := range k {
			id := crashID{q: p.q, round: c.round, prod: prod, group: groups[r.IntN(len(groups))], n: n, poison: r.IntN(100) < crashPoisonPercent}
			n++
			ms[i], attempts[i] = message(id.String())
		}
		if err := send(ms, attempts); err != nil {
			return err
		}
	}
	return nil
}

// release makes the receives that earlier children left open visible again, before any consumer runs.
func (c *crashChild) release(rs []crashRelease) error {
	ctx := context.Background()
	for _, rel := range rs {
		if c.stopped() {
			return nil
		}
		err := c.pair(rel.Q).src.ChangeVisibility(ctx, rel.Handle, 0)
		rec := crashRec{K: recFailed, Q: rel.Q, ID: rel.ID, Msg: rel.Msg, Count: rel.Count, State: crashReleased}
		switch {
		case errors.Is(err, fifoq.ErrReceiptHandleExpired), errors.Is(err, fifoq.ErrMessageNotAvailable):
			rec.K, rec.Err = recFailErr, err.Error()
		case err != nil:
			return fmt.Errorf("release a receive of %s (receive count %d) by an earlier child: %w", rel.ID, rel.Count, err)
		}
		if err := c.log.write(rec); err != nil {
			return err
		}
	}
	return nil
}

// consume receives up to 10 messages at a time until the child stops, logs every delivery, then deletes
// most of them and fails the rest (ChangeVisibility to 0, which returns them at once and counts a
// receive). It does not delete a poison message. A consumer that took longer than crashGuard since its
// receive started leaves its messages to their visibility timeout: a handle used after it ended might
// delete a message that a later receive moved to the dead-letter queue meanwhile (SQS allows that on
// standard queues), which the checks would take for a delete that came back.
func (c *crashChild) consume(p *crashPair, stream uint64) error {
	ctx := context.Background()
	r := c.rng(stream)
	for !c.stopped() {
		began := time.Now()
		start := c.now()
		ds, err := p.src.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10, WaitTime: 50 * time.Millisecond})
		end := c.now()
		if err != nil {
			return fmt.Errorf("receive from %s: %w", p.src.Name(), err)
		}
		if len(ds) == 0 {
			continue
		}
		call := int(c.calls.Add(1))
		recs := make([]crashRec, len(ds))
		var del, fail []int
		for i, d := range ds {
			id := crashIDOf(d.Body)
			if id == "" || d.Attributes["id"].StringValue != id || d.DeadLetterSource != "" {
				return fmt.Errorf("%s delivered a message the test did not send: %+v", p.src.Name(), d)
			}
			recs[i] = crashRec{K: recDelivery, Q: p.q, ID: id, Call: call, Idx: i, Start: start, End: end,
				Msg: d.MessageID, Count: d.ReceiveCount, First: d.FirstReceivedAt.UnixNano(), Sent: d.SentAt.UnixNano(),
				Dedup: d.DeduplicationID, Handle: d.ReceiptHandle}
			cid, _ := parseCrashID(id)
			// A poison message fails every time, except that a FIFO one that a move task brought back (its
			// deduplication id is no longer its identity) is deleted half the time: fixed, as after a redrive.
			poison := cid.poison && (p.q == "s" || d.DeduplicationID == id || r.IntN(2) == 0)
			if poison || r.IntN(100) < crashFailPercent {
				fail = append(fail, i)
			} else {
				del = append(del, i)
			}
		}
		if err := c.log.write(recs...); err != nil {
			return err
		}
		if time.Since(began) > crashGuard {
			continue
		}
		if err := c.delete(p, ds, recs, del, r.IntN(2) == 0); err != nil {
			return err
		}
		if err := c.fail(p, ds, recs, fail, r.IntN(2) == 0); err != nil {
			return err
		}
	}
	return nil
}

// fail fails the deliveries fail of ds (ChangeVisibility to 0), in one ChangeVisibilityBatch or one call
// each, and logs the outcomes.
func (c *crashChild) fail(p *crashPair, ds []fifoq.Delivery, recs []crashRec, fail []int, batch bool) error {
	if len(fail) == 0 {
		return nil
	}
	ctx := context.Background()
	errs := make([]error, len(fail))
	if batch && len(fail) > 1 {
		changes := make([]fifoq.VisibilityChange, len(fail))
		for j, i := range fail {
			changes[j] = fifoq.VisibilityChange{ReceiptHandle: ds[i].ReceiptHandle}
		}
		var be *fifoq.BatchError
		switch err := p.src.ChangeVisibilityBatch(ctx, changes); {
		case errors.As(err, &be):
			for _, e := range be.Entries {
				errs[e.Index] = e.Err
			}
		case err != nil:
			return fmt.Errorf("fail %d receives: %w", len(fail), err)
		}
	} else {
		for j, i := range fail {
			errs[j] = p.src.ChangeVisibility(ctx, ds[i].ReceiptHandle, 0)
		}
	}
	out := make([]crashRec, len(fail))
	for j, i := range fail {
		out[j] = crashRec{K: recFailed, Q: p.q, ID: recs[i].ID, Msg: recs[i].Msg, Count: recs[i].Count}
		switch err := errs[j]; {
		case errors.Is(err, fifoq.ErrReceiptHandleExpired), errors.Is(err, fifoq.ErrMessageNotAvailable):
			out[j].K, out[j].Err = recFailErr, err.Error()
		case err != nil:
			return fmt.Errorf("fail a receive of %s: %w", recs[i].ID, err)
		}
	}
	return c.log.write(out...)
}

// delete deletes the deliveries del of ds, in one DeleteBatch or one Delete each.
func (c *crashChild) delete(p *crashPair, ds []fifoq.Delivery, recs []crashRec, del []int, batch bool) error {
	if len(del) == 0 {
		return nil
	}
	ctx := context.Background()
	if !batch || len(del) == 1 {
		for _, i := range del {
			if err := c.deleteSome(p, recs, []int{i}, func() error { return p.src.Delete(ctx, ds[i].ReceiptHandle) }); err != nil {
				return err
			}
		}
		return nil
	}
	handles := make([]string, len(del))
	for j, i := range del {
		handles[j] = ds[i].ReceiptHandle
	}
	return c.deleteSome(p, recs, del, func() error { return p.src.DeleteBatch(ctx, handles) })
}

// deleteSome logs the delete attempts of the deliveries del, calls call, and logs each one's outcome.
func (c *crashChild) deleteSome(p *crashPair, recs []crashRec, del []int, call func() error) error {
	out := make([]crashRec, len(del))
	start := c.now()
	for j, i := range del {
		out[j] = crashRec{K: recDelAttempt, Q: p.q, ID: recs[i].ID, Msg: recs[i].Msg, Count: recs[i].Count, Start: start}
	}
	if err := c.log.write(out...); err != nil {
		return err
	}
	err := call()
	end := c.now()
	entryErr := make([]error, len(del))
	var be *fifoq.BatchError
	switch {
	case errors.As(err, &be) && len(del) > 1:
		for _, e := range be.Entries {
			entryErr[e.Index] = e.Err
		}
	case err != nil:
		entryErr[0] = err
	}
	for j := range out {
		out[j].K, out[j].Start, out[j].End = recDeleted, 0, end
		switch err := entryErr[j]; {
		case errors.Is(err, fifoq.ErrReceiptHandleExpired):
			out[j].K, out[j].End, out[j].Err = recDelFailed, 0, err.Error()
		case err != nil:
			return fmt.Errorf("delete %s: %w", out[j].ID, err)
		}
	}
	return c.log.write(out...)
}

// redrive runs move tasks that take the messages of the pair's dead-letter queue back to the source, one
// after another until the child stops, each after a pause of up to 80 ms (the first after delay).
func (c *crashChild) redrive(p *crashPair, delay time.Duration, r *rand.Rand) error {
	for c.pause(delay); !c.stopped(); c.pause(time.Duration(r.IntN(80)) * time.Millisecond) {
		if err := c.moveTask(p); err != nil {
			return err
		}
	}
	return nil
}

// moveTask runs a move task that takes the messages of the pair's dead-letter queue back to the source, and
// logs its start and how it ended.
func (c *crashChild) moveTask(p *crashPair) error {
	if err := c.log.write(crashRec{K: recMoveStart, Q: p.q}); err != nil {
		return err
	}
	t, err := p.dlq.StartMoveTask(context.Background(), nil, 0)
	if err != nil {
		return fmt.Errorf("start a move task on %s: %w", p.dlq.Name(), err)
	}
	if err := t.Wait(context.Background()); err != nil {
		return err
	}
	s := t.Status()
	if s.State != fifoq.MoveTaskCompleted {
		return fmt.Errorf("the move task of %s ended %v: %s", p.dlq.Name(), s.State, s.Failure)
	}
	return c.log.write(crashRec{K: recMoveTask, Q: p.q, Moved: s.Moved, ToMove: s.ToMove, State: s.State.String()})
}

// crashPair is a source queue and its dead-letter queue: "f", FIFO, or "s", standard.
type crashPair struct {
	q        string
	src, dlq *fifoq.Queue
}

// openCrashQueues opens the test's queues in st, each dead-letter queue before its source, with the options
// extra too.
func openCrashQueues(st *fifoq.Store, extra ...fifoq.Option) ([2]*crashPair, error) {
	var pairs [2]*crashPair
	for i, names := range [2][3]string{{"f", crashFIFOName, crashFIFODLQName}, {"s", crashStdName, crashStdDLQName}} {
		dlq, err := fifoq.New(names[2], append([]fifoq.Option{fifoq.WithStore(st), fifoq.WithVisibilityTimeout(crashVisibility)}, extra...)...)
		if err != nil {
			return pairs, err
		}
		src, err := fifoq.New(names[1], append([]fifoq.Option{fifoq.WithStore(st), fifoq.WithVisibilityTimeout(crashVisibility),
			fifoq.WithDeadLetterQueue(dlq, crashMaxReceive)}, extra...)...)
		if err != nil {
			return pairs, err
		}
		pairs[i] = &crashPair{q: names[0], src: src, dlq: dlq}
	}
	return pairs, nil
}

// crashSnapshots returns the messages of the pair's queues.
func crashSnapshots(p *crashPair) (src, dlq []fifoq.Snapshot) {
	return slices.Collect(p.src.Messages()), slices.Collect(p.dlq.Messages())
}

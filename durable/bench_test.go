package durable_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/durable"
)

// Benchmarks of durable queues (issue 10, item 8), each beside the same work on an in-memory queue
// (store=memory) measured in the same run, so results can be quoted as ratios:
//
//	BenchmarkDurableCycle     send -> Receive(10) -> delete, 8 producers and 8 consumers, FIFO, 10,000 groups
//	BenchmarkDurableSend64    single-message Send from 64 goroutines: group commit at work
//	BenchmarkDurableMemory    live heap per stored message
//	BenchmarkDurableRecovery  durable.Open + fifoq.New over a filled store: the recovery scan
//
// In the two throughput benchmarks b.N is a number of messages: one run sends b.N messages and (Cycle) ends
// when every one of them has been received and deleted, so ns/op is ns/msg. Only messages deleted count;
// the run fails unless the queue is empty at its end and no send was taken for a duplicate.
//
// The queues run on a manual clock that the producers advance 3 ms per message, as the root package's
// benchmarks do, so that a ring of 262,144 pre-generated deduplication ids (786 s of clock) never meets an id
// still in the 5-minute window, and the window holds its steady ~100,000 ids. Bodies (100 bytes), group ids
// and deduplication ids are shared pre-generated strings: allocations and heap figures are the queue's own.
// Visibility timeouts are 12 hours, so no message comes back while its consumer deletes it.
//
// The durable stores are opened in b.TempDir(), which must be on a real disk for the numbers to mean
// anything (a tmpfs makes fsync free). Each store counts the syncs of its write-ahead log
// (durable.WithSyncCount, bench_sync_test.go).
//
// Custom units:
//
//	msgs/s      messages through the benchmark's work per second of timed wall time
//	ns/msg      the same, inverted
//	allocs/msg  heap allocations per message (MemStats.Mallocs delta over the timed part / messages)
//	B/msg       (Cycle, Send64) bytes allocated per message; (Memory) live heap per stored message
//	cpu-ns/msg  CPU time of the process (user and system, getrusage) per message, over the timed part: less
//	            the store=memory row's, what the store costs
//	syncs/s     syncs of Pebble's log per second (store=pebble)
//	msgs/sync   messages per sync of Pebble's log: what group commit achieves (store=pebble)
//	vs-memory   this row's figure divided by the store=memory row's of the same benchmark and variant, measured
//	            last in this process (a throughput ratio for Cycle and Send64, a memory ratio for Memory)
//
// The benchmarks at 1,000,000 messages (Memory, Recovery) each fill a queue for tens of seconds, so they are
// skipped unless FIFOQ_BENCH_BIG=1; the smaller sizes always run. Commands:
//
//	go test -run '^$' -bench . ./durable/                                          # all, small sizes: about a minute
//	go test -run '^$' -bench 'DurableCycle|DurableSend64' -count 5 ./durable/      # throughput
//	FIFOQ_BENCH_BIG=1 go test -run '^$' -bench 'DurableMemory|DurableRecovery' -timeout 1h ./durable/

const (
	bdBodyLen   = 100
	bdBatch     = 10                    // messages per SendBatch, Receive and DeleteBatch
	bdTick      = 30 * time.Millisecond // clock advance per bdBatch messages sent: 3 ms a message
	bdIDRing    = 1 << 18               // distinct deduplication ids, reused cyclically
	bdMaxGroups = 1_000_000
	bdVisible   = 12 * time.Hour // visibility timeout: no message comes back while it is being deleted
	bdRetention = 14 * 24 * time.Hour
)

// bdBody is the one 100-byte body every message shares, so heap figures exclude body bytes.
var bdBody = strings.Repeat("b", bdBodyLen)

// bdStart is where every manual clock starts.
var bdStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// bdBig reports whether the 1,000,000-message benchmarks run.
var bdBig = os.Getenv("FIFOQ_BENCH_BIG") == "1"

var (
	bdIDsOnce  sync.Once
	bdDedupIDs []string
	bdGroupIDs []string
)

// bdIDs returns the pre-generated deduplication ids (bdIDRing) and group ids (bdMaxGroups), made once per
// process on first use, outside every timed part.
func bdIDs() (dedup, groups []string) {
	bdIDsOnce.Do(func() {
		bdDedupIDs = bdStrings("dedup-", bdIDRing)
		bdGroupIDs = bdStrings("group-", bdMaxGroups)
	})
	return bdDedupIDs, bdGroupIDs
}

// bdStrings returns prefix+"0" .. prefix+(n-1) as substrings of one allocation, so the garbage collector
// marks one object for them rather than n.
func bdStrings(prefix string, n int) []string {
	var all []byte
	ends := make([]int, n)
	for i := range n {
		all = append(all, prefix...)
		all = strconv.AppendInt(all, int64(i), 10)
		ends[i] = len(all)
	}
	s := string(all)
	out := make([]string, n)
	start := 0
	for i, end := range ends {
		out[i], start = s[start:end], end
	}
	return out
}

// bdMessage returns message k of a FIFO queue over groups groups.
func bdMessage(k, groups int) fifoq.Message {
	dedup, groupIDs := bdIDs()
	return fifoq.Message{Body: bdBody, GroupID: groupIDs[k%groups], DeduplicationID: dedup[k%bdIDRing]}
}

// bdStores are the two stores every benchmark compares, the in-memory baseline first.
var bdStores = []string{"memory", "pebble"}

// bdStoreOptions are the options of stores other than "memory" and "pebble" (bench_relaxed_test.go).
var bdStoreOptions = map[string][]durable.Option{}

// bdEnv is one queue under test: in memory, or in a Pebble store in its own directory.
type bdEnv struct {
	q     *fifoq.Queue
	st    *fifoq.Store // nil in memory
	clk   *fifoq.ManualClock
	syncs atomic.Int64 // syncs of the store's log
}

// bdOpen opens a queue named name (".fifo" makes it FIFO) on a manual clock reading start: in memory for
// store "memory", else in the Pebble store in dir, recovering what it holds.
func bdOpen(tb testing.TB, store, dir, name string, start time.Time) *bdEnv {
	tb.Helper()
	e := &bdEnv{clk: fifoq.NewManualClock(start)}
	opts := []fifoq.Option{fifoq.WithClock(e.clk), fifoq.WithVisibilityTimeout(bdVisible), fifoq.WithRetention(bdRetention)}
	if store != "memory" {
		dopts := append([]durable.Option{durable.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
			durable.WithSyncCount(&e.syncs)}, bdStoreOptions[store]...)
		st, err := durable.Open(dir, dopts...)
		if err != nil {
			tb.Fatal(err)
		}
		e.st = st
		opts = append(opts, fifoq.WithStore(st))
	}
	q, err := fifoq.New(name, opts...)
	if err != nil {
		if e.st != nil {
			_ = e.st.Close()
		}
		tb.Fatal(err)
	}
	e.q = q
	return e
}

// close closes the store, if any.
func (e *bdEnv) close(tb testing.TB) {
	tb.Helper()
	if e.st != nil {
		if err := e.st.Close(); err != nil {
			tb.Fatal(err)
		}
	}
}

// bdErr keeps the first error of a group of goroutines and cancels their context.
type bdErr struct {
	once   sync.Once
	err    error
	cancel context.CancelFunc
}

func (f *bdErr) fail(err error) {
	f.once.Do(func() { f.err = err })
	f.cancel()
}

// bdBaselines holds the last store=memory figure of each benchmark variant, for the vs-memory ratios.
var bdBaselines sync.Map // name without "/store=..." -> float64

// bdRatio records v as the baseline of variant on store=memory and returns 0; on another store it returns
// v divided by the baseline, or 0 when there is none (the memory row did not run).
func bdRatio(store, variant string, v float64) float64 {
	if store == "memory" {
		bdBaselines.Store(variant, v)
		return 0
	}
	if base, ok := bdBaselines.Load(variant); ok && base.(float64) > 0 {
		return v / base.(float64)
	}
	return 0
}

// bdTimed holds the counters read around the timed part of a b.N-message run.
type bdTimed struct {
	m0    runtime.MemStats
	syncs int64
	cpu   time.Duration
}

// bdCPU returns the CPU time (user and system) the process used so far, or 0 where getrusage fails.
func bdCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// start resets the timer after a full collection, so that the timed part begins with a clean heap.
func (t *bdTimed) start(b *testing.B, e *bdEnv) {
	runtime.GC()
	runtime.ReadMemStats(&t.m0)
	t.syncs = e.syncs.Load()
	t.cpu = bdCPU()
	b.ResetTimer()
}

// stop stops the timer and reports the per-message units for n messages.
func (t *bdTimed) stop(b *testing.B, e *bdEnv, store, variant string, n int) {
	b.StopTimer()
	cpu := bdCPU() - t.cpu
	var m1 runtime.MemStats
	runtime.ReadMemStats(&m1)
	secs := b.Elapsed().Seconds()
	msgs := float64(n)
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/msgs, "cpu-ns/msg")
	}
	b.ReportMetric(msgs/secs, "msgs/s")
	b.ReportMetric(secs*1e9/msgs, "ns/msg")
	b.ReportMetric(float64(m1.Mallocs-t.m0.Mallocs)/msgs, "allocs/msg")
	b.ReportMetric(float64(m1.TotalAlloc-t.m0.TotalAlloc)/msgs, "B/msg")
	if e.st != nil {
		syncs := float64(e.syncs.Load() - t.syncs)
		b.ReportMetric(syncs/secs, "syncs/s")
		if syncs > 0 {
			b.ReportMetric(msgs/syncs, "msgs/sync")
		}
	}
	if r := bdRatio(store, variant, msgs/secs); r > 0 {
		b.ReportMetric(r, "vs-memory")
	}
}

// BenchmarkDurableCycle is the cycle send -> Receive(10) -> delete on a FIFO queue with 10,000 groups, 100-byte
// bodies and explicit deduplication ids: 8 producers send b.N messages (Send, or SendBatch of 10) while 8
// consumers long-poll Receive(10) and delete what they get (Delete each, or DeleteBatch), until all b.N are
// deleted. Target (issue 10): store=pebble >= 50,000 msgs/s on 2 cores.
func BenchmarkDurableCycle(b *testing.B) {
	const producers, consumers, groups = 8, 8, 10_000
	for _, sendBatch := range []bool{false, true} {
		for _, deleteBatch := range []bool{false, true} {
			variant := fmt.Sprintf("fifo/groups=%d/%dP%dC/send=%s/delete=%s", groups, producers, consumers,
				bdKind(sendBatch), bdKind(deleteBatch))
			for _, store := range bdStores {
				b.Run(variant+"/store="+store, func(b *testing.B) {
					e := bdOpen(b, store, b.TempDir(), "cycle.fifo", bdStart)
					defer e.close(b)
					bdCycle(b, e, store, variant, producers, consumers, groups, sendBatch, deleteBatch)
				})
			}
		}
	}
}

func bdKind(batch bool) string {
	if batch {
		return "batch"
	}
	return "single"
}

// bdCycle runs b.N messages through e's queue and reports the units.
func bdCycle(b *testing.B, e *bdEnv, store, variant string, producers, consumers, groups int, sendBatch, deleteBatch bool) {
	bdIDs()
	var t bdTimed
	t.start(b, e)
	err := bdWork(e, b.N, producers, consumers, groups, sendBatch, deleteBatch)
	t.stop(b, e, store, variant, b.N)
	if err != nil {
		b.Fatal(err)
	}
}

// bdWork sends n messages from producers goroutines while consumers goroutines long-poll Receive(10) and
// delete what they get, until all n are deleted, and checks that the queue is empty then.
func bdWork(e *bdEnv, n, producers, consumers, groups int, sendBatch, deleteBatch bool) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := &bdErr{cancel: cancel}
	var (
		wg      sync.WaitGroup
		next    atomic.Int64 // the next message number to send
		sent    atomic.Int64 // messages stored (not taken for duplicates)
		deleted atomic.Int64
	)
	for range producers {
		wg.Go(func() {
			var ms [bdBatch]fifoq.Message
			for {
				k := int(next.Add(bdBatch)) - bdBatch
				if k >= n {
					return
				}
				batch := ms[:min(bdBatch, n-k)]
				for i := range batch {
					batch[i] = bdMessage(k+i, groups)
				}
				if sendBatch {
					rs, err := e.q.SendBatch(ctx, batch)
					if err != nil {
						errs.fail(err)
						return
					}
					for _, r := range rs {
						if !r.Duplicate {
							sent.Add(1)
						}
					}
				} else {
					for i := range batch {
						r, err := e.q.Send(ctx, batch[i])
						if err != nil {
							errs.fail(err)
							return
						}
						if !r.Duplicate {
							sent.Add(1)
						}
					}
				}
				e.clk.Advance(bdTick)
			}
		})
	}
	for range consumers {
		wg.Go(func() {
			handles := make([]string, 0, bdBatch)
			for deleted.Load() < int64(n) {
				ds, err := e.q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: bdBatch, WaitTime: 20 * time.Second})
				if err != nil {
					if ctx.Err() == nil {
						errs.fail(err)
					}
					return
				}
				if len(ds) == 0 {
					continue
				}
				handles = handles[:0]
				for i := range ds {
					handles = append(handles, ds[i].ReceiptHandle)
				}
				if deleteBatch {
					err = e.q.DeleteBatch(ctx, handles)
				} else {
					for _, h := range handles {
						if err = e.q.Delete(ctx, h); err != nil {
							break
						}
					}
				}
				if err != nil {
					errs.fail(err)
					return
				}
				if deleted.Add(int64(len(ds))) >= int64(n) {
					cancel() // wakes the consumers still polling
				}
			}
		})
	}
	wg.Wait()
	if errs.err != nil {
		return errs.err
	}
	if s, d := sent.Load(), deleted.Load(); s != int64(n) || d != int64(n) {
		return fmt.Errorf("%d messages: %d sent (not duplicates), %d deleted", n, s, d)
	}
	if s := e.q.Stats(); s != (fifoq.Stats{}) {
		return fmt.Errorf("stats %+v at the end, want an empty queue", s)
	}
	return nil
}

// BenchmarkDurableSend64 is single-message Send from 64 goroutines, b.N messages in all (nothing received):
// on store=pebble, concurrent sends share the log's syncs. FIFO with 10,000 groups and explicit
// deduplication ids, and a standard queue. Target (issue 10): store=pebble >= 20,000 msgs/s.
func BenchmarkDurableSend64(b *testing.B) {
	const senders, groups = 64, 10_000
	for _, fifo := range []bool{true, false} {
		variant, name := "standard/64senders", "send64"
		if fifo {
			variant, name = fmt.Sprintf("fifo/groups=%d/64senders", groups), "send64.fifo"
		}
		for _, store := range bdStores {
			b.Run(variant+"/store="+store, func(b *testing.B) {
				e := bdOpen(b, store, b.TempDir(), name, bdStart)
				defer e.close(b)
				bdSend(b, e, store, variant, senders, groups, fifo)
			})
		}
	}
}

func bdSend(b *testing.B, e *bdEnv, store, variant string, senders, groups int, fifo bool) {
	n := b.N
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := &bdErr{cancel: cancel}
	var (
		wg   sync.WaitGroup
		next atomic.Int64
		dups atomic.Int64
	)
	bdIDs()
	var t bdTimed
	t.start(b, e)
	for range senders {
		wg.Go(func() {
			for {
				k := int(next.Add(1)) - 1
				if k >= n {
					return
				}
				m := fifoq.Message{Body: bdBody}
				if fifo {
					m = bdMessage(k, groups)
				}
				r, err := e.q.Send(ctx, m)
				if err != nil {
					errs.fail(err)
					return
				}
				if r.Duplicate {
					dups.Add(1)
				}
				if k%bdBatch == bdBatch-1 {
					e.clk.Advance(bdTick)
				}
			}
		})
	}
	wg.Wait()
	t.stop(b, e, store, variant, n)
	if errs.err != nil {
		b.Fatal(errs.err)
	}
	if s := e.q.Stats(); dups.Load() != 0 || s.Visible != n {
		b.Fatalf("b.N %d: %d duplicates, stats %+v", n, dups.Load(), s)
	}
}

// bdFill sends n messages over groups groups to e's queue with SendBatch(10) from 8 goroutines, advancing
// the clock 3 ms a message, and returns how long it took.
func bdFill(tb testing.TB, e *bdEnv, n, groups int) time.Duration {
	tb.Helper()
	const fillers = 8
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := &bdErr{cancel: cancel}
	var (
		wg   sync.WaitGroup
		next atomic.Int64
	)
	bdIDs()
	t0 := time.Now()
	for range fillers {
		wg.Go(func() {
			var ms [bdBatch]fifoq.Message
			for {
				k := int(next.Add(bdBatch)) - bdBatch
				if k >= n {
					return
				}
				batch := ms[:min(bdBatch, n-k)]
				for i := range batch {
					batch[i] = bdMessage(k+i, groups)
				}
				if _, err := e.q.SendBatch(ctx, batch); err != nil {
					errs.fail(err)
					return
				}
				e.clk.Advance(bdTick)
			}
		})
	}
	wg.Wait()
	took := time.Since(t0)
	if errs.err != nil {
		tb.Fatal(errs.err)
	}
	if s := e.q.Stats(); s.Visible != n {
		tb.Fatalf("filled %d messages: stats %+v", n, s)
	}
	return took
}

// bdHeap returns the live heap after a full collection.
func bdHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// bdRSS returns the process's resident set after returning freed memory to the system: the Go heap and
// what Pebble allocates outside it (with cgo, its memtables and block cache). It is 0 where /proc is not.
func bdRSS() uint64 {
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}

// bdSize is a size of the memory and recovery benchmarks.
type bdSize struct {
	msgs, groups int
	big          bool // runs only with FIFOQ_BENCH_BIG=1
}

func (s bdSize) String() string { return fmt.Sprintf("fifo/msgs=%d/groups=%d", s.msgs, s.groups) }

func (s bdSize) skip(b *testing.B) {
	if s.big && !bdBig {
		b.Skip("1,000,000 messages: set FIFOQ_BENCH_BIG=1 to run")
	}
}

// BenchmarkDurableMemory measures the live Go heap per stored message: n messages sent (with the clock
// advancing 3 ms a message, so the deduplication window holds its steady ~100,000 ids), as the root
// package's BenchmarkMemory does for the in-memory queue. Bodies, group ids and deduplication ids are the
// caller's shared strings, so they are not counted. For store=pebble the heap before is read before
// durable.Open, so the Go-heap share of Pebble counts; its memtables (4 MiB, up to 2 at once) and block
// cache (8 MiB) are allocated outside the Go heap when cgo is on, and show only in rss-B/msg, the growth of
// the resident set (after returning freed memory to the system) per message. Each iteration builds the
// queue from scratch; only the custom units matter, plus fill-msgs/s: SendBatch(10) from 8 goroutines.
// Target (issue 10): store=pebble B/msg <= store=memory + 10%.
func BenchmarkDurableMemory(b *testing.B) {
	for _, sz := range []bdSize{{100_000, 10_000, false}, {1_000_000, 10_000, true}, {1_000_000, 1_000_000, true}} {
		for _, store := range bdStores {
			b.Run(sz.String()+"/store="+store, func(b *testing.B) {
				sz.skip(b)
				bdIDs()
				var perMsg, rssPerMsg, fillRate float64
				for b.Loop() {
					dir := b.TempDir()
					h0, r0 := bdHeap(), bdRSS()
					e := bdOpen(b, store, dir, "memory.fifo", bdStart)
					took := bdFill(b, e, sz.msgs, sz.groups)
					h1, r1 := bdHeap(), bdRSS()
					runtime.KeepAlive(e.q)
					e.close(b)
					perMsg = float64(int64(h1)-int64(h0)) / float64(sz.msgs)
					rssPerMsg = float64(int64(r1)-int64(r0)) / float64(sz.msgs)
					fillRate = float64(sz.msgs) / took.Seconds()
				}
				b.ReportMetric(perMsg, "B/msg")
				if rssPerMsg != 0 {
					b.ReportMetric(rssPerMsg, "rss-B/msg")
				}
				b.ReportMetric(fillRate, "fill-msgs/s")
				if r := bdRatio(store, "memory/"+sz.String(), perMsg); r > 0 {
					b.ReportMetric(r, "vs-memory")
				}
			})
		}
	}
}

// BenchmarkDurableRecovery times the recovery of a FIFO queue: durable.Open plus fifoq.New with the store,
// which scans the queue's records and rebuilds it, over a store filled once (untimed, SendBatch from 8
// goroutines) with n messages, 1% of them received (in flight, with receipts stored), and the last ~100,000
// deduplication ids in their window. Each iteration reopens the same directory on a manual clock reading the
// fill's end, so every recovery finds the same state (recovery changes no stored message then).
//
// Units: s/recovery, msgs/s (messages recovered per second), heap-B/msg (live heap after recovery, less
// before Open, per message: it includes each message's body, group id and deduplication id, which recovery
// allocates, where BenchmarkDurableMemory's callers share them) and rss-B/msg. The baseline impl=memory-fill
// builds the same queue in memory (the same SendBatch fill from 8 goroutines, and the same receives), so
// vs-memory is recovery time / in-memory build time.
func BenchmarkDurableRecovery(b *testing.B) {
	for _, sz := range []bdSize{{100_000, 10_000, false}, {1_000_000, 100_000, true}} {
		b.Run(sz.String(), func(b *testing.B) {
			sz.skip(b)
			inflight := sz.msgs / 100
			dir := b.TempDir() // kept for every iteration of the sub-benchmarks below
			e := bdOpen(b, "pebble", dir, "recover.fifo", bdStart)
			took := bdFill(b, e, sz.msgs, sz.groups)
			bdReceive(b, e.q, inflight)
			end := e.clk.Now()
			e.close(b)
			b.Logf("filled %d messages in %v (%.0f msgs/s)", sz.msgs, took.Round(time.Millisecond), float64(sz.msgs)/took.Seconds())

			var memoryBuild float64 // seconds
			b.Run("impl=memory-fill", func(b *testing.B) {
				var total time.Duration
				iters := 0
				for b.Loop() {
					t0 := time.Now()
					e := bdOpen(b, "memory", "", "recover.fifo", bdStart)
					bdFill(b, e, sz.msgs, sz.groups)
					bdReceive(b, e.q, inflight)
					total += time.Since(t0)
					iters++
				}
				memoryBuild = total.Seconds() / float64(iters)
				b.ReportMetric(memoryBuild, "s/build")
				b.ReportMetric(float64(sz.msgs)/memoryBuild, "msgs/s")
			})
			b.Run("impl=pebble-recover", func(b *testing.B) {
				var total time.Duration
				iters := 0
				heapPerMsg, rssPerMsg := 0.0, 0.0
				for b.Loop() {
					b.StopTimer()
					var h0, r0 uint64
					if iters == 0 {
						h0, r0 = bdHeap(), bdRSS()
					}
					b.StartTimer()
					t0 := time.Now()
					e := bdOpen(b, "pebble", dir, "recover.fifo", end)
					total += time.Since(t0)
					b.StopTimer()
					if s := e.q.Stats(); s.Visible != sz.msgs-inflight || s.InFlight != inflight {
						b.Fatalf("recovered %+v, want %d visible and %d in flight", s, sz.msgs-inflight, inflight)
					}
					if iters == 0 {
						h1, r1 := bdHeap(), bdRSS()
						heapPerMsg = float64(int64(h1)-int64(h0)) / float64(sz.msgs)
						rssPerMsg = float64(int64(r1)-int64(r0)) / float64(sz.msgs)
					}
					runtime.KeepAlive(e.q)
					e.close(b)
					iters++
					b.StartTimer()
				}
				secs := total.Seconds() / float64(iters)
				b.ReportMetric(secs, "s/recovery")
				b.ReportMetric(float64(sz.msgs)/secs, "msgs/s")
				b.ReportMetric(heapPerMsg, "heap-B/msg")
				if rssPerMsg != 0 {
					b.ReportMetric(rssPerMsg, "rss-B/msg")
				}
				if memoryBuild > 0 {
					b.ReportMetric(secs/memoryBuild, "vs-memory")
				}
			})
		})
	}
}

// bdReceive receives n messages (Receive(10) until it has them) and keeps them in flight.
func bdReceive(tb testing.TB, q *fifoq.Queue, n int) {
	tb.Helper()
	for got := 0; got < n; {
		ds, err := q.Receive(context.Background(), fifoq.ReceiveOptions{MaxMessages: min(bdBatch, n-got)})
		if err != nil {
			tb.Fatal(err)
		}
		if len(ds) == 0 {
			tb.Fatalf("nothing to receive after %d of %d messages", got, n)
		}
		got += len(ds)
	}
}

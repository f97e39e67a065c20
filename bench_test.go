package fifoq_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/storage/storagetest"
)

// Benchmarks of the queue's hot path: the cycle send -> receive(10) -> delete, over sizes of groups and
// backlog, each beside an in-run naive baseline (bnNaive) so results can be quoted as ratios. All setup
// (id strings, backlogs) happens inside the benchmark functions, so plain `go test` never runs it.
//
// Custom units:
//   msgs/s        messages through the full cycle per second of benchmark time
//   ns/msg        the same, inverted
//   allocs/msg    heap allocations per message (MemStats.Mallocs delta over the timed loop / messages)
//   B/msg         bytes allocated per message (MemStats.TotalAlloc delta / messages)
//   B/queued-msg  live heap per backlog message (HeapAlloc after GC, before and after filling the backlog)

const (
	bnBodyLen   = 100
	bnPerOp     = 10                    // messages per cycle: 10 sends, one Receive(10), 10 deletes
	bnTickPerOp = 30 * time.Millisecond // 3 ms of clock per message: the 5-minute dedup window holds ~100,000 ids
	bnIDRing    = 1 << 18               // distinct dedup ids, reused cyclically (262,144 messages = 786 s > 5 min)
	bnNaiveCap  = 100_000               // the naive baseline's cap on groups and backlog when there is a backlog
)

// bnBody is the one 100-byte body every message shares, so heap figures exclude body bytes.
var bnBody = strings.Repeat("b", bnBodyLen)

var (
	bnIDsOnce  sync.Once
	bnDedupIDs []string // pre-generated outside every timed loop
	bnGroupIDs []string // bnMaxGroups group ids
)

const bnMaxGroups = 1_000_000

// bnIDs returns the pre-generated dedup ids and group ids, made once per process on first use.
func bnIDs() (dedup, groups []string) {
	bnIDsOnce.Do(func() {
		bnDedupIDs = bnStrings("dedup-", bnIDRing)
		bnGroupIDs = bnStrings("group-", bnMaxGroups)
	})
	return bnDedupIDs, bnGroupIDs
}

// bnStrings returns prefix+"0" .. prefix+(n-1) as substrings of one allocation, so the garbage collector
// marks one object for them rather than n (the tables would otherwise inflate the GC cost of every
// benchmark, whose queue alone may hold little).
func bnStrings(prefix string, n int) []string {
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

// bnQueue is what the cycle needs of a queue, so one body drives fifoq and the naive baseline.
type bnQueue interface {
	send(ctx context.Context, group, dedup string) error
	receive(ctx context.Context, buf []bnHandle) ([]bnHandle, error)
	delete(ctx context.Context, h bnHandle) error
	advance(d time.Duration)
}

// bnHandle is a receipt: a string for fifoq, a number for the naive baseline (which then allocates nothing
// for it, in its favour).
type bnHandle struct {
	s string
	n uint64
}

// bnFifoq adapts a *fifoq.Queue driven by a ManualClock. On a standard queue it sends no group or dedup id.
type bnFifoq struct {
	q    *fifoq.Queue
	clk  *fifoq.ManualClock
	fifo bool
}

func bnNewFifoq(tb testing.TB, fifo bool) *bnFifoq {
	clk := fifoq.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	name := "bench"
	if fifo {
		name += ".fifo"
	}
	q, err := fifoq.New(name, fifoq.WithClock(clk))
	if err != nil {
		tb.Fatal(err)
	}
	return &bnFifoq{q: q, clk: clk, fifo: fifo}
}

func (f *bnFifoq) send(ctx context.Context, group, dedup string) error {
	if !f.fifo {
		group, dedup = "", ""
	}
	_, err := f.q.Send(ctx, fifoq.Message{Body: bnBody, GroupID: group, DeduplicationID: dedup})
	return err
}

func (f *bnFifoq) receive(ctx context.Context, buf []bnHandle) ([]bnHandle, error) {
	ds, err := f.q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: bnPerOp})
	for i := range ds {
		buf = append(buf, bnHandle{s: ds[i].ReceiptHandle})
	}
	return buf, err
}

func (f *bnFifoq) delete(ctx context.Context, h bnHandle) error { return f.q.Delete(ctx, h.s) }

func (f *bnFifoq) advance(d time.Duration) { f.clk.Advance(d) }

// bnNaive is the baseline: the obviously correct slow queue. It keeps every message in one slice in send
// order. A FIFO receive scans that whole slice, marking for each group (found through the message's group
// pointer) whether it is blocked by an in-flight message, collects each unblocked group's visible prefix,
// then walks the slice of groups it met, oldest head first, to fill the batch. A delete scans the slice for
// the receipt and removes it with slices.Delete. Group lookup on send and dedup are maps, as in fifoq, so the
// comparison isolates the receive and delete structures. Receipts are numbers: no allocation.
type bnNaive struct {
	fifo      bool
	now       time.Duration
	msgs      []*bnNaiveMsg
	groups    map[string]*bnNaiveGroup
	dedup     map[string]time.Duration // id -> expiry
	order     []string                 // dedup ids in the order added
	seq       uint64
	receipt   uint64
	scan      uint64
	met       []*bnNaiveGroup // groups met in the current scan with a visible head, oldest head first
	dedupHead int
}

type bnNaiveMsg struct {
	seq      uint64
	body     string
	group    *bnNaiveGroup
	inFlight bool
	receipt  uint64
}

type bnNaiveGroup struct {
	scan    uint64 // the scan that last met the group
	blocked bool
	prefix  []*bnNaiveMsg
}

func bnNewNaive(fifo bool) *bnNaive {
	return &bnNaive{fifo: fifo, groups: make(map[string]*bnNaiveGroup), dedup: make(map[string]time.Duration)}
}

func (n *bnNaive) send(_ context.Context, group, dedup string) error {
	if n.fifo {
		for n.dedupHead < len(n.order) && n.dedup[n.order[n.dedupHead]] <= n.now {
			delete(n.dedup, n.order[n.dedupHead])
			n.dedupHead++
		}
		if n.dedupHead > 1024 && 2*n.dedupHead > len(n.order) {
			n.order = append(n.order[:0], n.order[n.dedupHead:]...)
			n.dedupHead = 0
		}
		if _, dup := n.dedup[dedup]; dup {
			return nil
		}
		n.dedup[dedup] = n.now + 5*time.Minute
		n.order = append(n.order, dedup)
	}
	n.seq++
	m := &bnNaiveMsg{seq: n.seq, body: bnBody}
	if n.fifo {
		g := n.groups[group]
		if g == nil {
			g = &bnNaiveGroup{}
			n.groups[group] = g
		}
		m.group = g
	}
	n.msgs = append(n.msgs, m)
	return nil
}

func (n *bnNaive) receive(_ context.Context, buf []bnHandle) ([]bnHandle, error) {
	take := func(m *bnNaiveMsg) {
		n.receipt++
		m.inFlight, m.receipt = true, n.receipt
		buf = append(buf, bnHandle{n: m.receipt})
	}
	if !n.fifo {
		for _, m := range n.msgs {
			if len(buf) == bnPerOp {
				break
			}
			if !m.inFlight {
				take(m)
			}
		}
		return buf, nil
	}
	n.scan++
	n.met = n.met[:0]
	for _, m := range n.msgs {
		g := m.group
		if g.scan != n.scan { // the group's head
			g.scan, g.blocked, g.prefix = n.scan, m.inFlight, g.prefix[:0]
			if !g.blocked {
				n.met = append(n.met, g)
			}
		}
		switch {
		case g.blocked:
		case m.inFlight:
			g.blocked = true // the visible prefix ends here
		default:
			g.prefix = append(g.prefix, m)
		}
	}
	for _, g := range n.met {
		for _, m := range g.prefix {
			if len(buf) == bnPerOp {
				return buf, nil
			}
			take(m)
		}
	}
	return buf, nil
}

func (n *bnNaive) delete(_ context.Context, h bnHandle) error {
	for i, m := range n.msgs {
		if m.inFlight && m.receipt == h.n {
			n.msgs = slices.Delete(n.msgs, i, i+1)
			return nil
		}
	}
	return fmt.Errorf("naive: receipt %d not found", h.n)
}

func (n *bnNaive) advance(d time.Duration) { n.now += d }

// bnCycle is the shared state of one cycle benchmark: the next message number, and the id tables.
type bnCycle struct {
	q       bnQueue
	groups  int
	next    int
	dedupID []string
	groupID []string
	buf     []bnHandle
	frozen  bool // the clock does not move (every dedup id stays in the window)
}

func (c *bnCycle) sendOne(ctx context.Context) error {
	k := c.next
	c.next++
	return c.q.send(ctx, c.groupID[k%c.groups], c.dedupID[k%bnIDRing])
}

// op runs one cycle: bnPerOp sends, one receive of up to 10, a delete of each message received.
func (c *bnCycle) op(ctx context.Context) error {
	for range bnPerOp {
		if err := c.sendOne(ctx); err != nil {
			return err
		}
	}
	if !c.frozen {
		c.q.advance(bnTickPerOp)
	}
	var err error
	c.buf, err = c.q.receive(ctx, c.buf[:0])
	if err != nil {
		return err
	}
	if len(c.buf) != bnPerOp {
		return fmt.Errorf("received %d messages, want %d", len(c.buf), bnPerOp)
	}
	for _, h := range c.buf {
		if err := c.q.delete(ctx, h); err != nil {
			return err
		}
	}
	return nil
}

// bnHeap returns the live heap after a full collection.
func bnHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// bnMeasure runs body in a b.Loop and reports the per-message units; body handles perIter messages.
func bnMeasure(b *testing.B, perIter int, body func() error) {
	b.ReportAllocs()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	iters := 0
	for b.Loop() {
		if err := body(); err != nil {
			b.Fatal(err)
		}
		iters++
	}
	runtime.ReadMemStats(&m1)
	msgs := float64(iters * perIter)
	b.ReportMetric(msgs/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/msgs, "ns/msg")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/msgs, "allocs/msg")
	b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/msgs, "B/msg")
}

// runCycle fills the backlog (untimed, measuring its live heap), then times the cycle.
func bnRunCycle(b *testing.B, q bnQueue, groups, backlog int) {
	dedup, groupIDs := bnIDs()
	ctx := context.Background()
	c := &bnCycle{q: q, groups: groups, dedupID: dedup, groupID: groupIDs, buf: make([]bnHandle, 0, bnPerOp)}
	queued := -1.0
	if backlog > 0 {
		h0 := bnHeap()
		for range backlog / bnPerOp {
			for range bnPerOp {
				if err := c.sendOne(ctx); err != nil {
					b.Fatal(err)
				}
			}
			q.advance(bnTickPerOp)
		}
		h1 := bnHeap()
		queued = float64(int64(h1)-int64(h0)) / float64(backlog)
	}
	bnMeasure(b, bnPerOp, func() error { return c.op(ctx) })
	if queued >= 0 { // after the loop: b.Loop's first call deletes metrics reported before it
		b.ReportMetric(queued, "B/queued-msg")
	}
	runtime.KeepAlive(q)
}

// BenchmarkCycle is the cycle send -> receive(10) -> delete with 100-byte bodies and explicit dedup ids, for
// FIFO queues over 1..1,000,000 groups and for a standard queue, each with an empty queue and with a
// 1,000,000-message backlog, each beside the naive baseline (impl=naive).
//
// The naive baseline's receive and delete are O(backlog), so with a backlog it runs capped at 100,000 groups
// and a 100,000-message backlog (its lines say which size it really ran): uncapped, a 1,000,000 backlog
// would take ~10x longer per op and minutes to fill and ramp. Ratios against a capped baseline understate
// fifoq's advantage. The groups=100000 rows compare like with like at the size of the 20x target.
func BenchmarkCycle(b *testing.B) {
	type config struct {
		fifo            bool
		groups, backlog int
	}
	var configs []config
	for _, groups := range []int{1, 100, 10_000, 100_000, 1_000_000} {
		for _, backlog := range []int{0, 1_000_000} {
			if groups == 100_000 {
				backlog = min(backlog, 100_000) // the like-for-like row at the naive cap
			}
			configs = append(configs, config{true, groups, backlog})
		}
	}
	configs = append(configs, config{false, 1, 0}, config{false, 1, 1_000_000})
	for _, cf := range configs {
		kind := "standard"
		if cf.fifo {
			kind = "fifo/groups=" + strconv.Itoa(cf.groups)
		}
		name := fmt.Sprintf("%s/backlog=%d", kind, cf.backlog)
		b.Run(name+"/impl=fifoq", func(b *testing.B) {
			bnRunCycle(b, bnNewFifoq(b, cf.fifo), cf.groups, cf.backlog)
		})
		groups, backlog := cf.groups, cf.backlog
		if backlog > 0 {
			groups, backlog = min(groups, bnNaiveCap), min(backlog, bnNaiveCap)
		}
		b.Run(fmt.Sprintf("%s/impl=naive-groups=%d-backlog=%d", name, groups, backlog), func(b *testing.B) {
			bnRunCycle(b, bnNewNaive(cf.fifo), groups, backlog)
		})
	}
}

// BenchmarkProducersConsumers is 4 producers and 4 consumers on one FIFO queue with 10,000 groups: producers
// send (singles, or SendBatch of 10), consumers long-poll Receive(10) and delete (singles, or DeleteBatch).
// One iteration moves 10,000 messages through the queue. Run with -cpu 1,2,4.
func BenchmarkProducersConsumers(b *testing.B) {
	const (
		producers = 4
		consumers = 4
		groups    = 10_000
		perIter   = 10_000
	)
	for _, batch := range []bool{false, true} {
		name := "fifo/groups=10000/4P4C/singles"
		if batch {
			name = "fifo/groups=10000/4P4C/batch"
		}
		b.Run(name, func(b *testing.B) {
			dedup, groupIDs := bnIDs()
			f := bnNewFifoq(b, true)
			var next atomic.Int64
			iter := func() error {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var (
					wg       sync.WaitGroup
					deleted  atomic.Int64
					errOnce  sync.Once
					firstErr error
				)
				fail := func(err error) {
					errOnce.Do(func() { firstErr = err })
					cancel()
				}
				for range producers {
					wg.Go(func() {
						ms := make([]fifoq.Message, bnPerOp)
						for range perIter / producers / bnPerOp {
							k := int(next.Add(bnPerOp)) - bnPerOp
							for i := range ms {
								ms[i] = fifoq.Message{Body: bnBody, GroupID: groupIDs[(k+i)%groups], DeduplicationID: dedup[(k+i)%bnIDRing]}
							}
							if batch {
								if _, err := f.q.SendBatch(ctx, ms); err != nil {
									fail(err)
									return
								}
							} else {
								for i := range ms {
									if _, err := f.q.Send(ctx, ms[i]); err != nil {
										fail(err)
										return
									}
								}
							}
							f.clk.Advance(bnTickPerOp)
						}
					})
				}
				for range consumers {
					wg.Go(func() {
						hs := make([]string, 0, bnPerOp)
						for deleted.Load() < perIter {
							ds, err := f.q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: bnPerOp, WaitTime: 20 * time.Second})
							if err != nil {
								if ctx.Err() == nil {
									fail(err)
								}
								return
							}
							if len(ds) == 0 {
								continue
							}
							hs = hs[:0]
							for i := range ds {
								hs = append(hs, ds[i].ReceiptHandle)
							}
							if batch {
								if err := f.q.DeleteBatch(ctx, hs); err != nil {
									fail(err)
									return
								}
							} else {
								for _, h := range hs {
									if err := f.q.Delete(ctx, h); err != nil {
										fail(err)
										return
									}
								}
							}
							if deleted.Add(int64(len(ds))) == perIter {
								cancel() // wakes the consumers still polling
							}
						}
					})
				}
				wg.Wait()
				return firstErr
			}
			bnMeasure(b, perIter, iter)
		})
	}
}

// BenchmarkMemory measures live heap: per queued message (1,000,000 messages queued, clock advancing 3 ms per
// message so the dedup window holds its steady ~100,000 ids), and per dedup entry (100,000 ids in the window,
// their messages deleted). Body, group id and dedup id strings are pre-generated and shared, so they are
// excluded: the figures are the queue's own structures. Each iteration rebuilds from scratch; only the
// custom units matter.
func BenchmarkMemory(b *testing.B) {
	ctx := context.Background()
	for _, cf := range []struct {
		fifo   bool
		groups int
	}{{true, 1}, {true, 10_000}, {true, 1_000_000}, {false, 1}} {
		name := "queued/standard"
		if cf.fifo {
			name = "queued/fifo/groups=" + strconv.Itoa(cf.groups)
		}
		b.Run(name, func(b *testing.B) {
			const n = 1_000_000
			dedup, groupIDs := bnIDs()
			var perMsg float64
			for b.Loop() {
				h0 := bnHeap()
				f := bnNewFifoq(b, cf.fifo)
				c := &bnCycle{q: f, groups: cf.groups, dedupID: dedup, groupID: groupIDs}
				for range n / bnPerOp {
					for range bnPerOp {
						if err := c.sendOne(ctx); err != nil {
							b.Fatal(err)
						}
					}
					f.advance(bnTickPerOp)
				}
				h1 := bnHeap()
				runtime.KeepAlive(f)
				perMsg = float64(int64(h1)-int64(h0)) / n
			}
			b.ReportMetric(perMsg, "B/queued-msg")
		})
	}
	b.Run("dedup-entry/fifo", func(b *testing.B) {
		const n = 100_000
		dedup, _ := bnIDs()
		var perEntry float64
		for b.Loop() {
			h0 := bnHeap()
			f := bnNewFifoq(b, true)
			c := &bnCycle{q: f, groups: 1, dedupID: dedup, groupID: []string{"g"}, buf: make([]bnHandle, 0, bnPerOp), frozen: true}
			for range n / bnPerOp {
				if err := c.op(ctx); err != nil {
					b.Fatal(err)
				}
			}
			h1 := bnHeap()
			if s := f.q.Stats(); s.Visible+s.InFlight != 0 {
				b.Fatalf("stats %+v, want an empty queue", s)
			}
			runtime.KeepAlive(f)
			perEntry = float64(int64(h1)-int64(h0)) / n
		}
		b.ReportMetric(perEntry, "B/dedup-entry")
	})
}

// BenchmarkStoreOpenQueues opens n new queues in one store on the in-memory engine: a server starting over a
// store that holds many. An open does not grow with the queues open already: the queues=10000 row takes some
// 8 times the queues=1000 row (43 times when each open copied the store's map of open queues).
func BenchmarkStoreOpenQueues(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint("queues=", n), func(b *testing.B) {
			for b.Loop() {
				eng, err := storagetest.NewDisk().Open()
				if err != nil {
					b.Fatal(err)
				}
				st, err := fifoq.OpenStore(eng, "memory")
				if err != nil {
					b.Fatal(err)
				}
				for i := range n {
					if _, err := fifoq.New("q"+strconv.Itoa(i), fifoq.WithStore(st)); err != nil {
						b.Fatal(err)
					}
				}
				if err := st.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

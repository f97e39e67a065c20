package fifoq_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// The stress tests run 4 producers and 4 consumers on one FIFO queue inside a synctest bubble (virtual time,
// and the bubble fails the test if a goroutine outlives it): 100,000 messages over 1,000 groups, also under
// -race (about 4 s on 2 cores).

const (
	bnStressMessages  = 100_000
	bnStressProducers = 4
	bnStressConsumers = 4
	bnStressGroups    = 1_000
)

// bnStressConfig is one stress run.
type bnStressConfig struct {
	messages int
	// abandon makes consumers misbehave at random: give a batch back from a random point with
	// ChangeVisibilityBatch(…, 0), or hold it past the visibility timeout and drop it.
	abandon bool
	seed    uint64
}

// bnStressGroup is the test's record of one message group.
type bnStressGroup struct {
	mu      sync.Mutex // held across a Delete and its record, so a later receive of the group sees the record
	deleted []int      // message numbers within the group, in the order their deletes succeeded
}

// bnStressState is what the goroutines share. Goroutines never call require: they report through fail.
type bnStressState struct {
	cfg       bnStressConfig
	q         *fifoq.Queue
	groups    []bnStressGroup
	delivered atomic.Int64
	deleted   atomic.Int64
	abandoned atomic.Int64
	expired   atomic.Int64
	cancel    context.CancelFunc
	errOnce   sync.Once
	err       error
}

func (s *bnStressState) fail(err error) {
	s.errOnce.Do(func() { s.err = err })
	s.cancel()
}

// bnStressBody names message i of group g; bnParseBody reads it back.
func bnStressBody(g, i int) string { return strconv.Itoa(g) + ":" + strconv.Itoa(i) }

func bnParseBody(body string) (g, i int, err error) {
	gs, is, ok := strings.Cut(body, ":")
	if !ok {
		return 0, 0, fmt.Errorf("body %q", body)
	}
	if g, err = strconv.Atoi(gs); err == nil {
		i, err = strconv.Atoi(is)
	}
	return g, i, err
}

// produce sends every message of the groups p, p+4, p+8, …, round-robin over them, in batches of 10, so
// each group's send order is this producer's order.
func (s *bnStressState) produce(ctx context.Context, p int) {
	perGroup := s.cfg.messages / bnStressGroups
	var own []int
	for g := p; g < bnStressGroups; g += bnStressProducers {
		own = append(own, g)
	}
	batch := make([]fifoq.Message, 0, 10)
	flush := func() bool {
		if len(batch) == 0 {
			return true
		}
		rs, err := s.q.SendBatch(ctx, batch)
		if err != nil {
			s.fail(fmt.Errorf("producer %d: SendBatch: %w", p, err))
			return false
		}
		for j, r := range rs {
			if r.Duplicate {
				s.fail(fmt.Errorf("producer %d: %q reported as a duplicate", p, batch[j].Body))
				return false
			}
		}
		batch = batch[:0]
		return true
	}
	for i := range perGroup {
		for _, g := range own {
			body := bnStressBody(g, i)
			batch = append(batch, fifoq.Message{Body: body, GroupID: "g" + strconv.Itoa(g), DeduplicationID: "d" + body})
			if len(batch) == cap(batch) && !flush() {
				return
			}
		}
	}
	flush()
}

// consume long-polls Receive(10) until every message is deleted. Every message it receives must be the next
// undeleted one of its group (checked under the group's lock), which is how "never delivered while an
// earlier message of its group is in flight or waiting" is checked from outside.
func (s *bnStressState) consume(ctx context.Context, c int) {
	rng := rand.New(rand.NewPCG(s.cfg.seed, uint64(c)))
	for s.deleted.Load() < int64(s.cfg.messages) {
		ds, err := s.q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10, WaitTime: 20 * time.Second})
		if err != nil {
			if ctx.Err() == nil {
				s.fail(fmt.Errorf("consumer %d: Receive: %w", c, err))
			}
			return
		}
		if len(ds) == 0 {
			continue // the long poll ended empty
		}
		s.delivered.Add(int64(len(ds)))
		type item struct {
			g, i   int
			handle string
		}
		items := make([]item, len(ds))
		for k, d := range ds {
			g, i, err := bnParseBody(d.Body)
			if err != nil {
				s.fail(err)
				return
			}
			items[k] = item{g, i, d.ReceiptHandle}
			grp := &s.groups[g]
			grp.mu.Lock()
			want := len(grp.deleted)
			grp.mu.Unlock()
			// Within a batch a group's messages are contiguous and in order: the first is the next
			// undeleted one, each later one follows the one before.
			if k > 0 && items[k-1].g == g {
				want = items[k-1].i + 1
			}
			if i != want {
				s.fail(fmt.Errorf("consumer %d: received group %d message %d (receive count %d), want message %d: "+
					"an earlier message of the group is in flight or waiting, or this one was deleted", c, g, i, d.ReceiveCount, want))
				return
			}
		}
		// How this batch ends: deleted in full; or deleted up to keep, the rest given back at once; or held
		// past the visibility timeout and dropped.
		keep := len(items)
		hold := false
		if s.cfg.abandon {
			switch r := rng.IntN(100); {
			case r < 10:
				keep = rng.IntN(len(items))
			case r < 12:
				keep, hold = 0, true
			}
		}
		if hold {
			time.Sleep(bnStressVisibility + time.Second) // virtual time: the bubble moves on when all block
			s.expired.Add(int64(len(items)))
			continue
		}
		for _, it := range items[:keep] {
			grp := &s.groups[it.g]
			grp.mu.Lock()
			err := s.q.Delete(ctx, it.handle)
			if err == nil {
				grp.deleted = append(grp.deleted, it.i)
			}
			grp.mu.Unlock()
			if err != nil {
				if ctx.Err() == nil {
					s.fail(fmt.Errorf("consumer %d: Delete group %d message %d: %w", c, it.g, it.i, err))
				}
				return
			}
			if s.deleted.Add(1) == int64(s.cfg.messages) {
				s.cancel() // wakes the consumers still polling
			}
		}
		if rest := items[keep:]; len(rest) > 0 {
			changes := make([]fifoq.VisibilityChange, len(rest))
			for k, it := range rest {
				changes[k] = fifoq.VisibilityChange{ReceiptHandle: it.handle}
			}
			if err := s.q.ChangeVisibilityBatch(ctx, changes); err != nil {
				if ctx.Err() == nil {
					s.fail(fmt.Errorf("consumer %d: ChangeVisibilityBatch: %w", c, err))
				}
				return
			}
			s.abandoned.Add(int64(len(rest)))
		}
	}
}

// bnStressVisibility is the queue's visibility timeout in the stress tests (virtual time).
const bnStressVisibility = 5 * time.Second

func bnRunStress(t *testing.T, cfg bnStressConfig) {
	t.Helper()
	require.Zero(t, cfg.messages%bnStressGroups, "messages must divide evenly over the groups")
	start := time.Now()
	synctest.Test(t, func(t *testing.T) {
		virtualStart := time.Now()
		q, err := fifoq.New("stress.fifo", fifoq.WithVisibilityTimeout(bnStressVisibility))
		require.NoError(t, err)
		// A lost message would keep the consumers polling forever; an hour of virtual time (a run takes
		// minutes of it at most) turns that into a failure below.
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		s := &bnStressState{cfg: cfg, q: q, groups: make([]bnStressGroup, bnStressGroups), cancel: cancel}
		var wg sync.WaitGroup
		for p := range bnStressProducers {
			wg.Go(func() { s.produce(ctx, p) })
		}
		for c := range bnStressConsumers {
			wg.Go(func() { s.consume(ctx, c) })
		}
		wg.Wait()
		require.NoError(t, s.err)
		require.Equal(t, int64(cfg.messages), s.deleted.Load(), "messages deleted before the virtual deadline; stats %+v", q.Stats())

		perGroup := cfg.messages / bnStressGroups
		for g := range s.groups {
			want := make([]int, perGroup)
			for i := range want {
				want[i] = i
			}
			require.Equal(t, want, s.groups[g].deleted, "group %d: messages deleted, in order of deletion, want each once in send order", g)
		}
		st := q.Stats()
		require.Equal(t, fifoq.Stats{}, st, "stats after every message was deleted")
		if !cfg.abandon {
			require.Equal(t, int64(cfg.messages), s.delivered.Load(), "deliveries: each message exactly once")
		} else {
			require.Equal(t, s.delivered.Load(), s.deleted.Load()+s.abandoned.Load()+s.expired.Load(),
				"deliveries = deleted + given back + held past the visibility timeout")
			require.Positive(t, s.abandoned.Load(), "no batch was given back: the test exercised nothing")
			require.Positive(t, s.expired.Load(), "no batch was held past its visibility timeout")
		}
		t.Logf("%d messages, %d deliveries (%d given back, %d held past the visibility timeout); virtual time %v",
			cfg.messages, s.delivered.Load(), s.abandoned.Load(), s.expired.Load(), time.Since(virtualStart))
	})
	t.Logf("real time %v", time.Since(start).Round(time.Millisecond))
}

// TestStressFIFO: every message delivered and deleted exactly once, each group in send order.
func TestStressFIFO(t *testing.T) {
	t.Parallel()
	bnRunStress(t, bnStressConfig{messages: bnStressMessages, seed: 1})
}

// TestStressFIFOAbandon: consumers give batches back (ChangeVisibilityBatch 0) from a random point or hold
// them past the visibility timeout; every message is still deleted exactly once in send order, and none is
// delivered while an earlier message of its group is in flight.
func TestStressFIFOAbandon(t *testing.T) {
	t.Parallel()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	bnRunStress(t, bnStressConfig{messages: bnStressMessages, abandon: true, seed: seed})
}

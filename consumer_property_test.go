package fifoq_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// This file runs a Consumer end to end over a FIFO queue with a dead-letter queue, as in seed 000 (a strict-order
// FIFO queue feeding Lambda), and checks what the seed promises: per group, messages are processed in send order;
// each is processed once or ends in the dead-letter queue after maxReceiveCount failed receives; a group is never
// in two handler calls at once; concurrency stays within MaxConcurrency and the number of groups. Every
// unexported top-level name starts with "cp".

// cpKind is what a handler call does because of one message on one receive.
type cpKind uint8

const (
	cpOK       cpKind = iota // the message is processed
	cpItemFail               // the message fails alone: a partial failure with ReportBatchItemFailures
	cpError                  // the handler returns an error: the whole batch fails
	cpPanic                  // the handler panics: the whole batch fails
	cpTimeout                // the handler runs past HandlerTimeout: the whole batch fails
)

func (k cpKind) String() string {
	return [...]string{"ok", "itemFail", "error", "panic", "timeout"}[k]
}

// cpStep is the plan for one message on one receive.
type cpStep struct {
	kind       cpKind
	sleep      time.Duration // how long the call takes (less than the handler timeout), or how long past it
	reportRest bool          // cpItemFail: also name the later messages of the group in the batch
}

// cpConfig is one scenario.
type cpConfig struct {
	sendGroups         []int           // the group of each message, in send order
	sendGaps           []time.Duration // nil, or a sleep before each send
	steps              [][]cpStep      // steps[i][r-1]: what message i does on its r-th receive
	maxReceiveCount    int
	visibility         time.Duration
	handlerTimeout     time.Duration
	batch              fifoq.BatchOptions
	maxConcurrency     int
	reportItemFailures bool
	retryImmediately   bool
	poll               time.Duration // how often the test looks whether the source is empty
	limit              time.Duration // virtual time the run may take at most
}

// cpT is what cpRun needs of a *testing.T or a *rapid.T.
type cpT interface {
	require.TestingT
	Helper()
}

// cpState is what the handler and OnBatch record, under mu.
type cpState struct {
	mu           sync.Mutex
	active       int
	maxActive    int
	activeGroups map[string]bool
	violations   []string
	failCount    []int   // failed handler calls per message
	processed    []int   // successful processings per message
	order        [][]int // per group: positions in the group of the messages processed, in processing order
	wantOutcomes map[fifoq.Outcome]int
	calls        int

	gotOutcomes map[fifoq.Outcome]int
	deleted     int // sum over reports of Size - len(Failed)
	failed      int // sum over reports of len(Failed)
}

func (s *cpState) violate(format string, args ...any) {
	if len(s.violations) < 20 {
		s.violations = append(s.violations, fmt.Sprintf(format, args...))
	}
}

func cpGroupID(g int) string { return fmt.Sprintf("g%02d", g) }

// cpResult is what a run leaves, for checks particular to a test.
type cpResult struct {
	src, dlq  *fifoq.Queue
	processed int
	inDLQ     int
	calls     int
	maxActive int
	outcomes  map[fifoq.Outcome]int
	elapsed   time.Duration
}

// cpRun runs the scenario inside the current synctest bubble and checks the invariants.
func cpRun(t cpT, cfg cpConfig) cpResult {
	t.Helper()
	ctx := context.Background()
	start := time.Now()
	dlq, err := fifoq.New("cp-dlq.fifo",
		fifoq.WithVisibilityTimeout(cfg.visibility),
		fifoq.WithRetention(14*24*time.Hour),
		fifoq.WithDeduplicationScope(fifoq.DeduplicationScopeMessageGroup))
	require.NoError(t, err, "New dead-letter queue")
	src, err := fifoq.New("cp-src.fifo",
		fifoq.WithVisibilityTimeout(cfg.visibility),
		fifoq.WithRetention(4*24*time.Hour),
		fifoq.WithDeduplicationScope(fifoq.DeduplicationScopeMessageGroup),
		fifoq.WithDeadLetterQueue(dlq, cfg.maxReceiveCount))
	require.NoError(t, err, "New source queue with maxReceiveCount %d", cfg.maxReceiveCount)

	n := len(cfg.sendGroups)
	groups := 0
	pos := make([]int, n) // position of message i in its group
	var members [][]int   // per group: its messages in send order
	for i, g := range cfg.sendGroups {
		for len(members) <= g {
			members = append(members, nil)
		}
		pos[i] = len(members[g])
		members[g] = append(members[g], i)
	}
	for _, m := range members {
		if len(m) > 0 {
			groups++
		}
	}
	groupOf := func(d fifoq.Delivery) int {
		i, _ := strconv.Atoi(d.Body)
		return cfg.sendGroups[i]
	}

	s := &cpState{
		activeGroups: make(map[string]bool),
		failCount:    make([]int, n),
		processed:    make([]int, n),
		order:        make([][]int, len(members)),
		wantOutcomes: make(map[fifoq.Outcome]int),
		gotOutcomes:  make(map[fifoq.Outcome]int),
	}

	handler := func(ctx context.Context, batch []fifoq.Delivery) error {
		idx := make([]int, len(batch))
		var groupsHeld []string
		s.mu.Lock()
		s.calls++
		s.active++
		s.maxActive = max(s.maxActive, s.active)
		if len(batch) == 0 || len(batch) > cpBatchSize(cfg.batch) {
			s.violate("call %d: batch of %d messages, batch size %d", s.calls, len(batch), cpBatchSize(cfg.batch))
		}
		for k, d := range batch {
			i, err := strconv.Atoi(d.Body)
			if err != nil || i < 0 || i >= n {
				s.violate("call %d: unknown body %q", s.calls, d.Body)
				s.mu.Unlock()
				return errors.New("unknown body")
			}
			idx[k] = i
			if d.GroupID != cpGroupID(cfg.sendGroups[i]) {
				s.violate("message %d: group %q, sent with %q", i, d.GroupID, cpGroupID(cfg.sendGroups[i]))
			}
			if d.ReceiveCount != s.failCount[i]+1 {
				s.violate("message %d: ReceiveCount %d after %d failed calls, want %d", i, d.ReceiveCount, s.failCount[i], s.failCount[i]+1)
			}
			if s.processed[i] > 0 {
				s.violate("message %d delivered again after it was processed", i)
			}
			if k == 0 || d.GroupID != batch[k-1].GroupID {
				if slices.Contains(groupsHeld, d.GroupID) {
					s.violate("call %d: group %s is not contiguous in the batch", s.calls, d.GroupID)
				}
				groupsHeld = append(groupsHeld, d.GroupID)
			} else if pos[i] <= pos[idx[k-1]] {
				s.violate("call %d: group %s out of order in the batch: position %d after %d", s.calls, d.GroupID, pos[i], pos[idx[k-1]])
			}
		}
		for _, g := range groupsHeld {
			if s.activeGroups[g] {
				s.violate("call %d: group %s is already in another handler call", s.calls, g)
			}
			s.activeGroups[g] = true
		}
		step := func(k int) cpStep {
			plan := cfg.steps[idx[k]]
			return plan[min(max(batch[k].ReceiveCount, 1), len(plan))-1]
		}
		kind, sleep := cpOK, step(0).sleep
		for k := range batch {
			if st := step(k); st.kind >= cpError {
				kind, sleep = st.kind, st.sleep
				break
			}
		}
		if kind == cpOK {
			for k := range batch {
				if step(k).kind == cpItemFail {
					kind = cpItemFail
					break
				}
			}
		}
		switch kind {
		case cpError, cpPanic, cpTimeout:
			for _, i := range idx {
				s.failCount[i]++
			}
		case cpItemFail:
			if !cfg.reportItemFailures {
				// A *BatchItemFailures without ReportBatchItemFailures is an error like any other.
				for _, i := range idx {
					s.failCount[i]++
				}
			}
		}
		switch kind {
		case cpOK:
			s.wantOutcomes[fifoq.OutcomeSuccess]++
		case cpItemFail:
			if cfg.reportItemFailures {
				s.wantOutcomes[fifoq.OutcomePartial]++
			} else {
				s.wantOutcomes[fifoq.OutcomeError]++
			}
		case cpError:
			s.wantOutcomes[fifoq.OutcomeError]++
		case cpPanic:
			s.wantOutcomes[fifoq.OutcomePanic]++
		case cpTimeout:
			s.wantOutcomes[fifoq.OutcomeTimeout]++
		}
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.active--
			for _, g := range groupsHeld {
				delete(s.activeGroups, g)
			}
			s.mu.Unlock()
		}()

		switch kind {
		case cpTimeout:
			<-ctx.Done()
			time.Sleep(sleep)
			return nil // ran past the timeout: the Consumer fails the batch all the same
		case cpPanic:
			time.Sleep(sleep)
			panic("cp: handler panics")
		case cpError:
			time.Sleep(sleep)
			return errors.New("cp: handler fails")
		}
		time.Sleep(sleep)

		// Process in batch order. A group stops at its first failure (spec 9.3.5); the failed message is
		// reported, and the later ones of its group when the plan says so: the Consumer must fail them anyway.
		s.mu.Lock()
		defer s.mu.Unlock()
		var report []string
		if kind == cpItemFail && !cfg.reportItemFailures {
			for k, d := range batch {
				if step(k).kind == cpItemFail {
					report = append(report, d.MessageID)
				}
			}
			return &fifoq.BatchItemFailures{MessageIDs: report}
		}
		stopped := make(map[string]bool) // group -> also report the rest
		var dlqBodies map[string]bool
		for k, d := range batch {
			i := idx[k]
			if rest, ok := stopped[d.GroupID]; ok {
				s.failCount[i]++
				if rest {
					report = append(report, d.MessageID)
				}
				continue
			}
			if st := step(k); st.kind == cpItemFail {
				s.failCount[i]++
				stopped[d.GroupID] = st.reportRest
				report = append(report, d.MessageID)
				continue
			}
			g := groupOf(d)
			last := -1
			if o := s.order[g]; len(o) > 0 {
				last = o[len(o)-1]
			}
			if pos[i] <= last {
				s.violate("group %s: message %d (position %d) processed after position %d", d.GroupID, i, pos[i], last)
			}
			for p := last + 1; p < pos[i]; p++ {
				// An earlier message of the group was skipped: it must be in the dead-letter queue by now.
				if dlqBodies == nil {
					dlqBodies = make(map[string]bool)
					for m := range dlq.Messages() {
						dlqBodies[m.Body] = true
					}
				}
				if j := members[g][p]; !dlqBodies[strconv.Itoa(j)] {
					s.violate("group %s: message %d (position %d) processed while message %d (position %d) is neither processed nor in the dead-letter queue",
						d.GroupID, i, pos[i], j, p)
				}
			}
			s.order[g] = append(s.order[g], pos[i])
			s.processed[i]++
		}
		if len(report) == 0 {
			return nil
		}
		return &fifoq.BatchItemFailures{MessageIDs: report}
	}

	c, err := fifoq.NewConsumer(src, handler, fifoq.ConsumerOptions{
		Batch:                   cfg.batch,
		MaxConcurrency:          cfg.maxConcurrency,
		ReportBatchItemFailures: cfg.reportItemFailures,
		HandlerTimeout:          cfg.handlerTimeout,
		RetryImmediately:        cfg.retryImmediately,
		OnBatch: func(r fifoq.BatchReport) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.gotOutcomes[r.Outcome]++
			s.deleted += r.Size - len(r.Failed)
			s.failed += len(r.Failed)
		},
	})
	require.NoError(t, err, "NewConsumer(%+v)", cfg.batch)

	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(runCtx) }()
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-done
	}
	defer func() { _ = stop() }() // also when a check below fails, so the bubble can end

	for i, g := range cfg.sendGroups {
		if i < len(cfg.sendGaps) && cfg.sendGaps[i] > 0 {
			time.Sleep(cfg.sendGaps[i])
		}
		res, err := src.Send(ctx, fifoq.Message{Body: strconv.Itoa(i), GroupID: cpGroupID(g), DeduplicationID: "m" + strconv.Itoa(i)})
		require.NoError(t, err, "Send message %d to group %d", i, g)
		require.False(t, res.Duplicate, "Send message %d: reported a duplicate", i)
	}
	deadline := start.Add(cfg.limit)
	for src.Stats() != (fifoq.Stats{}) {
		require.True(t, time.Now().Before(deadline), "the source is not empty after %v: %+v", cfg.limit, src.Stats())
		time.Sleep(cfg.poll)
	}
	require.NoError(t, stop(), "Run returned an error")

	s.mu.Lock()
	defer s.mu.Unlock()
	require.Empty(t, s.violations, "violations seen by the handler")
	require.Equal(t, 0, s.active, "handler calls still active after Run returned")
	require.LessOrEqual(t, s.maxActive, cfg.maxConcurrency, "concurrent handler calls vs MaxConcurrency")
	require.LessOrEqual(t, s.maxActive, groups, "concurrent handler calls vs the number of groups")

	dlqMsgs := make(map[int]fifoq.Snapshot)
	for m := range dlq.Messages() {
		i, err := strconv.Atoi(m.Body)
		require.NoError(t, err, "dead-letter body %q", m.Body)
		_, dup := dlqMsgs[i]
		require.False(t, dup, "message %d twice in the dead-letter queue", i)
		dlqMsgs[i] = m
	}
	processed := 0
	for i := range n {
		m, inDLQ := dlqMsgs[i]
		switch {
		case inDLQ:
			require.Zero(t, s.processed[i], "message %d is in the dead-letter queue and was processed", i)
			require.Equal(t, cfg.maxReceiveCount, s.failCount[i], "message %d in the dead-letter queue: failed calls", i)
			require.Equal(t, cfg.maxReceiveCount, m.ReceiveCount, "message %d in the dead-letter queue: ReceiveCount carries on", i)
			require.Equal(t, src.Name(), m.DeadLetterSource, "message %d: DeadLetterSource", i)
			require.Equal(t, cpGroupID(cfg.sendGroups[i]), m.GroupID, "message %d in the dead-letter queue: GroupID", i)
		default:
			require.Equal(t, 1, s.processed[i], "message %d (group %d, position %d, %d failed calls) is not in the dead-letter queue: times processed",
				i, cfg.sendGroups[i], pos[i], s.failCount[i])
			require.Less(t, s.failCount[i], cfg.maxReceiveCount, "message %d was processed: failed calls", i)
			processed++
		}
	}
	for g, o := range s.order {
		require.True(t, slices.IsSorted(o) && len(slices.Compact(slices.Clone(o))) == len(o),
			"group %d: positions in processing order %v, want strictly increasing", g, o)
	}
	require.Equal(t, dlq.Stats().Visible, len(dlqMsgs), "dead-letter queue stats")
	require.Equal(t, s.wantOutcomes, s.gotOutcomes, "batch outcomes reported by OnBatch vs planned by the handler")
	require.Equal(t, processed, s.deleted, "messages deleted (OnBatch) vs processed")
	failedCalls := 0
	for _, f := range s.failCount {
		failedCalls += f
	}
	require.Equal(t, failedCalls, s.failed, "messages failed (OnBatch) vs failed by the handler")
	return cpResult{
		src: src, dlq: dlq, processed: processed, inDLQ: len(dlqMsgs), calls: s.calls, maxActive: s.maxActive,
		outcomes: maps.Clone(s.gotOutcomes), elapsed: time.Since(start),
	}
}

func cpBatchSize(o fifoq.BatchOptions) int {
	if o.Size == 0 {
		return 10
	}
	return o.Size
}

// cpSeedPlan builds seed 000's PoC traffic: 300 messages over 20 groups, sent in order, a handler that fails
// at random (a fixed seed) and takes 0..5 s, and a few poison messages that fail every time.
func cpSeedPlan(seed uint64, itemFailures bool) cpConfig {
	r := rand.New(rand.NewPCG(seed, 0))
	const n, groups, maxReceiveCount = 300, 20, 5
	cfg := cpConfig{
		sendGroups:      make([]int, n),
		steps:           make([][]cpStep, n),
		maxReceiveCount: maxReceiveCount,
		handlerTimeout:  10 * time.Second,
		visibility:      60 * time.Second, // 6x the handler timeout
		batch:           fifoq.BatchOptions{Size: 10},
		maxConcurrency:  4,
		poll:            time.Second,
		limit:           24 * time.Hour,
	}
	poison := map[int]bool{}
	for len(poison) < 6 {
		poison[r.IntN(n)] = true
	}
	for i := range n {
		cfg.sendGroups[i] = r.IntN(groups)
		cfg.steps[i] = make([]cpStep, maxReceiveCount)
		for a := range cfg.steps[i] {
			st := cpStep{sleep: time.Duration(r.IntN(5000)) * time.Millisecond}
			switch x := r.IntN(100); {
			case poison[i] && itemFailures:
				st.kind = cpItemFail
			case poison[i]:
				st.kind = cpError
			case itemFailures && x < 6:
				st.kind = cpItemFail
			case x < 2:
				st.kind = cpError
			case x == 2:
				st.kind = cpPanic
			case x == 3:
				st.kind = cpTimeout
			}
			cfg.steps[i][a] = st
		}
	}
	return cfg
}

// TestSeed000PoC runs seed 000's proof of concept: a FIFO queue with a dead-letter queue (maxReceiveCount 5), a
// visibility timeout of 60 s (6x the 10 s handler timeout), batch size 10, and a Consumer with a handler that
// fails at random.
func TestSeed000PoC(t *testing.T) {
	variants := []struct {
		name   string
		window time.Duration
		items  bool // ReportBatchItemFailures and RetryImmediately
	}{
		{name: "NoWindow"},
		{name: "Window30s", window: 30 * time.Second}, // the seed's batch window: allowed on FIFO without Strict
		{name: "ReportBatchItemFailures", items: true},
		{name: "ReportBatchItemFailuresWindow30s", window: 30 * time.Second, items: true},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := cpSeedPlan(0xc2ac33e01c569a94, v.items)
				cfg.batch.Window = v.window
				cfg.reportItemFailures, cfg.retryImmediately = v.items, v.items
				res := cpRun(t, cfg)
				require.Equal(t, 300, res.processed+res.inDLQ, "processed + dead-lettered")
				require.NotZero(t, res.inDLQ, "the poison messages should be in the dead-letter queue")
				require.Greater(t, res.processed, 150, "messages processed")
				if v.items {
					require.NotZero(t, res.outcomes[fifoq.OutcomePartial], "partial failures: %v", res.outcomes)
				} else {
					require.NotZero(t, res.outcomes[fifoq.OutcomeError], "errors: %v", res.outcomes)
					require.NotZero(t, res.outcomes[fifoq.OutcomeTimeout], "timeouts: %v", res.outcomes)
					require.NotZero(t, res.outcomes[fifoq.OutcomePanic], "panics: %v", res.outcomes)
				}
				require.Greater(t, res.maxActive, 1, "the Consumer should run batches concurrently")

				// The first receive from the dead-letter queue counts on from 5.
				ds, err := res.dlq.Receive(context.Background(), fifoq.ReceiveOptions{MaxMessages: 10})
				require.NoError(t, err, "Receive from the dead-letter queue")
				require.NotEmpty(t, ds, "Receive from the dead-letter queue")
				for _, d := range ds {
					require.Equal(t, cfg.maxReceiveCount+1, d.ReceiveCount, "first receive of %s from the dead-letter queue", d.Body)
					require.Equal(t, res.src.Name(), d.DeadLetterSource, "DeadLetterSource of %s", d.Body)
				}
				t.Logf("processed %d, dead-lettered %d, %d calls, max %d at once, outcomes %v, %v of virtual time",
					res.processed, res.inDLQ, res.calls, res.maxActive, res.outcomes, res.elapsed)
			})
		})
	}
}

// TestConsumerProperty checks the seed's guarantees over random scenarios: groups, traffic, failures of every
// kind, concurrency, batch size and window, retry policy and maxReceiveCount.
func TestConsumerProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rapid.SyncTest(t, func(t *rapid.T) {
			groups := rapid.IntRange(1, 8).Draw(t, "groups")
			n := rapid.IntRange(1, 60).Draw(t, "messages")
			maxReceiveCount := rapid.IntRange(1, 5).Draw(t, "maxReceiveCount")
			// Long handlers: no handler timeout, and calls that run past the 60 s visibility timeout, which
			// the Consumer must keep invisible so no other batch gets their groups meanwhile.
			long := rapid.Bool().Draw(t, "longHandlers")
			handlerTimeout, maxSleep := 10*time.Second, 9
			if long {
				handlerTimeout, maxSleep = 0, 150
			}
			cfg := cpConfig{
				sendGroups:      make([]int, n),
				sendGaps:        make([]time.Duration, n),
				steps:           make([][]cpStep, n),
				maxReceiveCount: maxReceiveCount,
				handlerTimeout:  handlerTimeout,
				visibility:      60 * time.Second,
				batch: fifoq.BatchOptions{
					Size:   rapid.IntRange(1, 20).Draw(t, "batchSize"), // past 10: one group can fill a batch
					Window: rapid.SampledFrom([]time.Duration{0, 0, time.Second, 5 * time.Second, 20 * time.Second}).Draw(t, "window"),
				},
				maxConcurrency:     rapid.IntRange(1, 8).Draw(t, "maxConcurrency"),
				reportItemFailures: rapid.Bool().Draw(t, "reportBatchItemFailures"),
				retryImmediately:   rapid.Bool().Draw(t, "retryImmediately"),
				poll:               5 * time.Second,
				limit:              48 * time.Hour,
			}
			gaps := []time.Duration{0, 0, 0, 0, 100 * time.Millisecond, time.Second, 30 * time.Second, 2 * time.Minute}
			for i := range n {
				cfg.sendGroups[i] = rapid.IntRange(0, groups-1).Draw(t, "group")
				cfg.sendGaps[i] = rapid.SampledFrom(gaps).Draw(t, "gap")
				cfg.steps[i] = make([]cpStep, maxReceiveCount)
				for a := range cfg.steps[i] {
					st := cpStep{sleep: time.Duration(rapid.IntRange(0, maxSleep).Draw(t, "sleepSeconds")) * time.Second}
					switch x := rapid.IntRange(0, 99).Draw(t, "kind"); {
					case x < 60:
						st.kind = cpOK
					case x < 78:
						st.kind = cpItemFail
						st.reportRest = x%2 == 1
					case x < 88:
						st.kind = cpError
					case x < 94:
						st.kind = cpPanic
					case long: // no handler timeout to run past
						st.kind = cpError
					default:
						st.kind = cpTimeout
					}
					cfg.steps[i][a] = st
				}
			}
			cpRun(t, cfg)
		})
	})
}

package durable_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/durable"
)

// TestCrash is the crash test of durable queues (DURABILITY.md, "How it is proved"). It runs this test
// binary again as a child process (TestCrashChild) that sends, receives, deletes, fails and redrives through
// a FIFO queue and a standard queue, each with a dead-letter queue (maxReceiveCount 3), on the real clock,
// recording every operation that returned success in a side log (crash_log_test.go; the child's workload is
// in crash_child_test.go). It kills the child with SIGKILL at a random moment, reopens the store in this
// process, and checks it against the side logs of every round so far (crash_check_test.go):
//
//   - lost: every acknowledged send, and every message a child received, is in the source queue or its
//     dead-letter queue, unless a delete of it was attempted;
//   - came-back: no message whose delete was acknowledged is stored, or was received after the delete;
//   - invented: every stored body was sent by some child, unchanged (body, group, attribute, MessageID and
//     sequence number as acknowledged, SentAt as received), and is stored once: a FIFO send that a child
//     retried after a crash, with the same deduplication id, is not stored twice;
//   - order: in each FIFO group, the messages are stored in send order, and a child received a message only
//     when every message sent before it in its group was deleted or in the dead-letter queue, or came before
//     it in the same receive;
//   - count: a stored receive count is never lower than one a child saw, and no child saw one twice;
//   - delay: no child received a message sent with a delay before the delay ended;
//   - dead-letter: a message in a dead-letter queue came from its source, has receive count exactly 3 and is
//     visible; no source message has a count above 3; a message received 3 times and not deleted is in the
//     dead-letter queue, or in the source with count 3 waiting for the receive that moves it, or was moved
//     on by a move task;
//   - log: the side logs agree with themselves, and no child met an error.
//
// The store's directory is the same every round, so what the rounds leave accumulates. Each child retries
// first the FIFO sends that earlier children attempted without an answer (the same messages, the same
// deduplication ids), and makes visible again the receives they left open (so their receipt handles must
// work after a restart); some children run a move task that takes the dead-letter queue back to the source;
// most open the store with a small memtable, so that Pebble flushes and compacts within a round; half sync
// their log every millisecond or every hour (durable.WithSyncEvery) rather than at each acknowledgement,
// which a kill of the process must not tell from the default either. Some
// rounds kill the child before it reports ready, while it opens and recovers the store. The last round
// stops the child gracefully (it closes the store), and the same checks run once more, with one more: every
// attempted send was answered.
//
// A SIGKILL takes what the process held (Pebble's log buffer not yet written, the batches queued for the
// store's commit goroutine, whatever a call had changed in memory) but not what the kernel had been given:
// this tests that no call reports success before its change is written, and that recovery rebuilds each
// queue right. Losing what was written but not synced (a power cut) is what storagetest.Memory's Crash
// does in the root package's tests.
//
// Knobs (environment variables):
//
//	FIFOQ_CRASH_ROUNDS  rounds that end in a kill; default 30 (8 with -short)
//	FIFOQ_CRASH_TIME    time budget of those rounds, a Go duration; default 20s (8s with -short). The loop
//	                    stops at whichever comes first, after at least 3 rounds.
//	FIFOQ_CRASH_SEED    the seed of the kill schedule and of the children's choices (what to send, delete,
//	                    fail, redrive), to replay a run as closely as processes allow (the interleaving of the
//	                    child's goroutines is the scheduler's); default random. The test logs it first, and
//	                    every failure repeats it.
//	FIFOQ_CRASH_DIR     keep the store and the side logs in this directory (made if missing; it must not hold
//	                    a previous run) instead of a temporary one.
//
// The default is the version CI runs (also under -race, where the child is race-built too). The long run:
//
//	FIFOQ_CRASH_ROUNDS=300 FIFOQ_CRASH_TIME=15m go test -run '^TestCrash$' -count=1 -timeout 30m -v ./durable/
func TestCrash(t *testing.T) {
	k := crashKnobsOf(t, "FIFOQ_CRASH", 30, 20*time.Second, 8, 8*time.Second)
	h := &crashHarness{t: t, dir: k.dir, store: filepath.Join(k.dir, "store"), seed: k.seed, rng: rand.New(rand.NewPCG(k.seed, 0)), model: newCrashModel()}
	seed, began := k.seed, time.Now()
	round := h.loop(k)
	tt := h.model.totals
	t.Logf("seed %d: %d rounds in %v: %d kills (%d before the child was ready), then a graceful stop; "+
		"%d sends attempted, %d acknowledged (%d retries answered as duplicates), %d deliveries, %d deletes and "+
		"%d fails acknowledged, %d dead-letter moves seen, %d children synced at each acknowledgement and %d "+
		"WithSyncEvery, %d move tasks started in %d rounds, %d messages moved "+
		"back by move tasks that completed, "+
		"%d receives of killed children released by the next (%d refused: ended or gone), %d torn log lines; "+
		"at the end %d messages stored",
		seed, round+1, time.Since(began).Round(time.Millisecond), tt.kills, tt.earlyKills, tt.attempts, tt.sent,
		tt.dupAcks, tt.deliveries, tt.deletes, tt.fails, tt.dlqSeen, tt.syncAck, tt.syncRelaxed, tt.moveTasks, tt.moveRounds, tt.moved, tt.released, tt.releaseRefused,
		tt.torn, h.stored)
}

// crashKnobs are the knobs of a crash loop, read from the environment variables prefix_ROUNDS, _TIME, _SEED
// and _DIR (see TestCrash).
type crashKnobs struct {
	rounds int
	budget time.Duration
	seed   uint64
	dir    string
}

// crashKnobsOf reads the knobs of prefix, with their defaults (those of -short after).
func crashKnobsOf(t *testing.T, prefix string, rounds int, budget time.Duration, shortRounds int, shortBudget time.Duration) crashKnobs {
	k := crashKnobs{rounds: rounds, budget: budget, seed: rand.Uint64()}
	if testing.Short() {
		k.rounds, k.budget = shortRounds, shortBudget
	}
	if s := os.Getenv(prefix + "_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, prefix+"_ROUNDS")
		k.rounds = n
	}
	if s := os.Getenv(prefix + "_TIME"); s != "" {
		d, err := time.ParseDuration(s)
		require.NoError(t, err, prefix+"_TIME")
		k.budget = d
	}
	if s := os.Getenv(prefix + "_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, prefix+"_SEED")
		k.seed = n
	}
	t.Logf("seed %d (%s_SEED=%d replays the schedule), up to %d rounds in %v", k.seed, prefix, k.seed, k.rounds, k.budget)
	k.dir = os.Getenv(prefix + "_DIR")
	if k.dir == "" {
		k.dir = t.TempDir()
	} else {
		t.Logf("store and side logs in %s", k.dir)
	}
	require.NoError(t, os.MkdirAll(filepath.Join(k.dir, "log"), 0o755))
	entries, err := os.ReadDir(filepath.Join(k.dir, "log"))
	require.NoError(t, err)
	require.Empty(t, entries, "%s_DIR %s holds an earlier run", prefix, k.dir)
	return k
}

// loop runs the rounds that end in a kill, up to k.rounds within k.budget (at least 3), then the graceful
// one, and returns the number of the graceful round.
func (h *crashHarness) loop(k crashKnobs) int {
	t := h.t
	began := time.Now()
	deadline := began.Add(k.budget)
	round := 0
	for ; round < k.rounds && (round < 3 || time.Now().Before(deadline)); round++ {
		require.NoError(t, h.round(round, false))
		if (round+1)%50 == 0 {
			tt := h.model.totals
			t.Logf("round %d, %v: %d sends acknowledged, %d deletes, %d dead-letter moves seen so far",
				round+1, time.Since(began).Round(time.Second), tt.sent, tt.deletes, tt.dlqSeen)
		}
	}
	require.NoError(t, h.round(round, true))
	return round
}

// TestCrashWhileCreating kills a process during its first durable.Open of an empty directory, at random
// moments, and requires the directory to open after each kill: the store was never opened, so nothing can
// be lost by making it again.
//
// A kill after Pebble wrote MANIFEST-000001 and before it wrote the marker that names it (about 1 kill in 20
// when they land in the first 40 ms) leaves a directory holding LOCK and MANIFEST-000001 only: a store that
// was never made, not one whose manifest marker was lost.
func TestCrashWhileCreating(t *testing.T) {
	t.Parallel()
	seed := rand.Uint64()
	r := rand.New(rand.NewPCG(seed, 0))
	base := t.TempDir()
	for i := range 60 {
		dir := filepath.Join(base, strconv.Itoa(i))
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "FIFOQ_CRASH_CREATE="+dir)
		require.NoError(t, cmd.Start())
		time.Sleep(time.Duration(r.IntN(40_000)) * time.Microsecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		_ = cmd.Wait()
		st, err := durable.Open(dir)
		if err == nil {
			err = st.Close()
		}
		var names []string
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			names = append(names, e.Name())
		}
		require.NoError(t, err, "seed %d: open %s after a kill during its creation (it holds %v)", seed, dir, names)
	}
}

// TestCrashChild is the child process of TestCrash and TestCrashWhileCreating; run on its own, it skips.
func TestCrashChild(t *testing.T) {
	if dir := os.Getenv("FIFOQ_CRASH_CREATE"); dir != "" {
		st, err := durable.Open(dir)
		require.NoError(t, err)
		_, err = fifoq.New("created.fifo", fifoq.WithStore(st))
		require.NoError(t, err)
		require.NoError(t, st.Close())
		return
	}
	dir := os.Getenv("FIFOQ_CRASH_CHILD")
	if dir == "" {
		t.Skip("the child process of TestCrash")
	}
	round, err := strconv.Atoi(os.Getenv("FIFOQ_CRASH_CHILD_ROUND"))
	require.NoError(t, err)
	seed, err := strconv.ParseUint(os.Getenv("FIFOQ_CRASH_CHILD_SEED"), 10, 64)
	require.NoError(t, err)
	require.NoError(t, runCrashChild(dir, round, seed, os.Stdin, os.Stdout))
}

// The workload's shape.
const (
	crashFIFOName    = "crash.fifo"
	crashFIFODLQName = "crash-dlq.fifo"
	crashStdName     = "crash"
	crashStdDLQName  = "crash-dlq"

	crashMaxReceive    = 3
	crashDelay         = time.Second // of some standard messages
	crashVisibility    = 5 * time.Second
	crashGuard         = 2 * time.Second // see crashChild.consume
	crashFIFOGroups    = 24
	crashFIFOProducers = 3 // group g is producer g%3's
	crashStdGroups     = 4
	crashFIFOConsumers = 3
	crashBacklog       = 600 // a producer waits while its source holds more messages
	crashPoisonPercent = 5
	crashFailPercent   = 20 // of the other deliveries
	// crashRedrivePercent is the chance that a child runs move tasks on a dead-letter queue: one after another,
	// so that they overlap the receives that move messages in.
	crashRedrivePercent = 60
)

// crashHarness runs the rounds of TestCrash.
type crashHarness struct {
	t      *testing.T
	dir    string      // the side logs' (in dir/log)
	store  string      // the store's directory
	power  *crashPower // the power-loss test's rig, or nil
	seed   uint64
	rng    *rand.Rand
	model  *crashModel
	ready  []time.Duration // how long children took to report ready
	stored int
}

// round runs one child: killed at a random moment, or, when graceful, stopped by closing its standard input;
// with a power-loss rig, cuts the power; then reopens the store and checks it. It returns the violations of
// the invariants, if any, as an error.
func (h *crashHarness) round(round int, graceful bool) error {
	t := h.t
	in := h.model.input(time.Now())
	js, err := json.Marshal(in)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(crashInputPath(h.dir, round), js, 0o644))

	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		"FIFOQ_CRASH_CHILD="+h.dir,
		"FIFOQ_CRASH_CHILD_ROUND="+strconv.Itoa(round),
		"FIFOQ_CRASH_CHILD_SEED="+strconv.FormatUint(h.rng.Uint64(), 10),
		"FIFOQ_CRASH_CHILD_STORE="+h.store)
	if h.power != nil {
		cmd.Env = append(cmd.Env, "FIFOQ_CRASH_CHILD_SYNC="+h.power.begin(round, h.rng))
		if h.power.minSent > 0 {
			cmd.Env = append(cmd.Env, "FIFOQ_CRASH_CHILD_SIGNAL_SENT="+strconv.Itoa(h.power.minSent))
		}
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	started := time.Now()

	// The child's standard output: "ready", then nothing until "closed" (graceful) or the test's verdict
	// ("sent" with FIFOQ_CRASH_CHILD_SIGNAL_SENT).
	ready, sent, eof := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var out strings.Builder // written by the reader until eof is closed
	go func() {
		defer close(eof)
		sc := bufio.NewScanner(stdout)
		readySeen, sentSeen := false, false
		for sc.Scan() {
			switch {
			case sc.Text() == "ready" && !readySeen:
				readySeen = true
				close(ready)
				continue
			case sc.Text() == "sent" && !sentSeen:
				sentSeen = true
				close(sent)
				continue
			}
			out.WriteString(sc.Text() + "\n")
		}
	}()
	exited := make(chan error, 1)
	var waitOnce sync.Once
	wait := func() {
		waitOnce.Do(func() {
			<-eof // Wait closes stdout: let the reader finish first
			err := cmd.Wait()
			if err != nil {
				err = fmt.Errorf("%w\nstdout:\n%s\nstderr:\n%s", err, out.String(), stderr.String())
			}
			exited <- err
		})
	}
	signaled := h.power != nil && h.power.minSent > 0 // killed once it has acknowledged so many sends
	early := !graceful && !signaled && h.rng.IntN(100) < 15
	var delay time.Duration
	switch {
	case early:
		// Kill it at a moment while it opens and recovers the store, or soon after.
		typical := 200 * time.Millisecond
		if len(h.ready) > 0 {
			typical = slices.Max(h.ready)
		}
		delay = time.Duration(h.rng.Int64N(int64(typical) + 1))
	case h.power != nil:
		delay = h.power.delay(h.rng)
	case h.rng.IntN(100) < 10:
		delay = time.Duration(300+h.rng.IntN(400)) * time.Millisecond
	default:
		delay = time.Duration(h.rng.IntN(150)) * time.Millisecond
	}
	fail := func(format string, args ...any) {
		_ = cmd.Process.Kill()
		go wait()
		err := <-exited
		require.FailNow(t, fmt.Sprintf(format, args...), "seed %d round %d: child: %v", h.seed, round, err)
	}
	// The waits for the child have no time limit, which a slow machine could exceed: a child that hangs is
	// reported by go test's -timeout (and stops once the test process is gone, as its standard input closes).
	if !early {
		select {
		case <-ready:
			h.ready = append(h.ready, time.Since(started))
		case <-eof:
			fail("the child ended its output before it reported ready")
		}
	}
	go wait()
	timer := time.NewTimer(delay)
	signal := sent
	if signaled {
		timer.Stop()
	} else {
		signal = nil
	}
	select {
	case <-timer.C:
	case <-signal:
	case err := <-exited:
		require.FailNow(t, "the child exited before it was stopped", "seed %d round %d: %v", h.seed, round, err)
	}
	killedAt := time.Now()
	if graceful {
		require.NoError(t, stdin.Close())
		require.NoError(t, <-exited, "seed %d round %d: the child did not stop cleanly", h.seed, round)
	} else {
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		err := <-exited
		var ee *exec.ExitError
		var ws syscall.WaitStatus
		if errors.As(err, &ee) {
			ws, _ = ee.Sys().(syscall.WaitStatus)
		}
		require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGKILL,
			"seed %d round %d: the child ended with %v, not by SIGKILL", h.seed, round, err)
		h.model.totals.kills++
		if early {
			h.model.totals.earlyKills++
		}
	}

	recs, torn, err := readCrashLog(crashLogPath(h.dir, round), round)
	require.NoError(t, err, "seed %d round %d", h.seed, round)
	if torn {
		h.model.totals.torn++
	}
	if graceful {
		require.False(t, torn, "seed %d round %d: a torn line after a graceful stop", h.seed, round)
	}
	h.model.apply(recs)

	var violations []string
	if h.power != nil {
		h.power.cut(t, round)
	}
	state := h.reopen(round)
	if h.power != nil {
		violations = h.power.settle(h.model, round, state, killedAt)
	}
	violations = append(violations, h.model.check(round, state)...)
	if graceful {
		for _, id := range h.model.input(time.Now()).Pending {
			violations = append(violations, fmt.Sprintf("%s the send of %s was attempted and never acknowledged, after a graceful stop", vLost, id))
		}
	}
	if len(violations) > 0 {
		const show = 40
		msg := strings.Join(violations[:min(len(violations), show)], "\n")
		if len(violations) > show {
			msg += fmt.Sprintf("\n... and %d more", len(violations)-show)
		}
		how := fmt.Sprintf("killed %v after it was ready", delay)
		switch {
		case graceful:
			how = fmt.Sprintf("stopped gracefully %v after it was ready", delay)
		case early:
			how = fmt.Sprintf("killed %v after it started", delay)
		case signaled:
			how = fmt.Sprintf("killed once it had acknowledged %d sends", h.power.minSent)
		}
		replay := "FIFOQ_CRASH_SEED"
		if h.power != nil {
			replay = "FIFOQ_POWERCUT_SEED"
			how += ", then the power was cut (" + h.power.mode + ")"
		}
		return fmt.Errorf("the reopened store breaks the invariants: seed %d round %d (%s=%d to replay; the child was %s): %d violations:\n%s",
			h.seed, round, replay, h.seed, how, len(violations), msg)
	}
	return nil
}

// reopen opens the store as it was left, reads the four queues, and closes it.
func (h *crashHarness) reopen(round int) crashState {
	t := h.t
	st, err := durable.Open(h.store)
	require.NoError(t, err, "seed %d round %d: reopen the store", h.seed, round)
	defer func() { require.NoError(t, st.Close(), "seed %d round %d", h.seed, round) }()
	pairs, err := openCrashQueues(st)
	require.NoError(t, err, "seed %d round %d: reopen the queues", h.seed, round)
	state := make(crashState)
	h.stored = 0
	for _, p := range pairs {
		src, dlq := crashSnapshots(p)
		state[p.q] = [2][]fifoq.Snapshot{src, dlq}
		h.stored += len(src) + len(dlq)
		for i, q := range []*fifoq.Queue{p.src, p.dlq} {
			s := q.Stats() // its visibility timeouts may end meanwhile: compare the sum
			require.Equal(t, len(state[p.q][i]), s.Visible+s.InFlight+s.Delayed,
				"seed %d round %d: the Stats of %s (%+v) against its messages", h.seed, round, q.Name(), s)
		}
	}
	return state
}

package durable_test

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPowerCut is the crash test (TestCrash) with the power cut too: the store lives on the power-loss rig
// (lazyfs_test.go), a FUSE file system that, at a cut, puts every file back as it was at its last fsync.
// Each round a child works on the queues as TestCrash's do, is killed with SIGKILL at a random moment
// (sometimes while it opens and recovers the store), and the rig cuts the power; then the store is opened
// again, as a server starts after a power loss (every open must succeed), and checked against the side
// logs, which live outside the rig and lose nothing. The last round stops the child gracefully, then cuts
// the power too: what a closed store holds is durable.
//
// Each round's child syncs at each acknowledgement, or WithSyncEvery (FIFOQ_POWERCUT_EVERY, 100 ms by
// default). One that syncs at each acknowledgement must lose nothing: the checks are TestCrash's. One
// opened WithSyncEvery may lose what it acknowledged after the last real sync of its logs began, which it
// records in its side log, and nothing else (crash_power_check_test.go): the store left must be a prefix of
// what it did, in order, every message that was stored before still there. The test measures how long
// before the cut the sends it lost were acknowledged. The rig's metadata mode is strict (a file made,
// renamed or removed is durable only once its directory is fsynced) or lenient (at once), by round.
//
// Knobs (environment variables), as TestCrash's:
//
//	FIFOQ_POWERCUT_ROUNDS  rounds that end in a cut; default 24 (8 with -short)
//	FIFOQ_POWERCUT_TIME    their time budget; default 25s (10s with -short); at least 3 rounds run
//	FIFOQ_POWERCUT_SEED    the seed of the schedule, the modes and the children's choices; default random
//	FIFOQ_POWERCUT_DIR     keep the rig's directories and the side logs here instead of a temporary one
//	FIFOQ_POWERCUT_SYNC    ack, relaxed, or mixed (default): the children's sync mode, by round
//	FIFOQ_POWERCUT_EVERY   WithSyncEvery's interval of the relaxed children; default 100ms
//	FIFOQ_POWERCUT_META    strict, lenient, or mixed (default): the rig's metadata mode, by round
//	FIFOQ_POWERCUT_FSYNC   how long each fsync on the rig takes, as a disk's would; default 0
//
// It needs Linux, root and /dev/fuse (CI has them); elsewhere it skips, saying which is missing. A long
// campaign, in one mode:
//
//	FIFOQ_POWERCUT_ROUNDS=1000 FIFOQ_POWERCUT_TIME=3h FIFOQ_POWERCUT_SYNC=relaxed FIFOQ_POWERCUT_META=strict \
//		go test -run '^TestPowerCut$' -count=1 -timeout 4h -v ./durable/
func TestPowerCut(t *testing.T) {
	if why := lazyUnavailable(); why != "" {
		t.Skip(why)
	}
	k := crashKnobsOf(t, "FIFOQ_POWERCUT", 24, 25*time.Second, 8, 10*time.Second)
	h := newPowerHarness(t, k)
	began := time.Now()
	round := h.loop(k)
	tt, p := h.model.totals, h.power
	t.Logf("seed %d: %d rounds in %v: %d power cuts (%d of them killing the child before it was ready) after a kill, "+
		"1 after a graceful stop; %d sends acknowledged, %d deliveries, %d deletes acknowledged, %d dead-letter moves "+
		"seen, %d move tasks started; at the end %d messages stored",
		k.seed, round+1, time.Since(began).Round(time.Millisecond), tt.kills, tt.earlyKills, tt.sent, tt.deliveries,
		tt.deletes, tt.dlqSeen, tt.moveTasks, h.stored)
	p.report(t)
}

// TestPowerCutFsyncIgnored proves that the power-loss test can fail: with the rig's switch that makes the
// fsyncs of the write-ahead logs do nothing (a disk that ignores them), a child that syncs at each
// acknowledgement loses acknowledged sends at the cut, and the checks report them.
func TestPowerCutFsyncIgnored(t *testing.T) {
	t.Parallel()
	if why := lazyUnavailable(); why != "" {
		t.Skip(why)
	}
	k := crashKnobs{seed: rand.Uint64(), dir: t.TempDir()}
	require.NoError(t, os.MkdirAll(filepath.Join(k.dir, "log"), 0o755))
	h := newPowerHarness(t, k)
	h.power.sync, h.power.meta = "ack", "lenient"
	h.power.rig.setIgnoreSync(func(name string) bool { return strings.HasSuffix(name, ".log") })
	h.power.minSent = 20 // a cut once the child acknowledged so many sends, which only the log holds
	var err error
	for round := 0; round < 5 && err == nil; round++ {
		err = h.round(round, false)
	}
	require.Error(t, err, "seed %d: five power cuts with the logs' fsyncs ignored, and nothing acknowledged was lost", k.seed)
	require.ErrorContains(t, err, vLost, "seed %d", k.seed)
	t.Logf("seed %d: reported as it should be: %.300s", k.seed, err)
}

// crashPower is the power-loss rig of a crash harness, and what it measured.
type crashPower struct {
	rig     *lazyFS
	sync    string        // ack, relaxed or mixed
	every   time.Duration // WithSyncEvery's interval of the relaxed children
	meta    string        // strict, lenient or mixed
	minSent int           // TestPowerCutFsyncIgnored: cut once the child acknowledged so many sends

	mode  string // this round's: "<sync>/<meta>"
	cuts  map[string]int
	sends map[string]int // sends acknowledged, by mode
	lost  []time.Duration
	// For the relaxed cuts that lost sends: how long before the cut the last real sync that was done began,
	// and how much longer than the interval plus the sync under way that was.
	sinceSync, excess time.Duration
	measured          bool     // sinceSync and excess were
	late              []string // the cuts whose last real sync began more than an interval late
	undone            lazyCut  // what the cuts undid, in all
	sentBefore        int
}

// newPowerHarness mounts the rig in k.dir and returns a crash harness whose store lives on it.
func newPowerHarness(t *testing.T, k crashKnobs) *crashHarness {
	p := &crashPower{sync: "mixed", every: 100 * time.Millisecond, meta: "mixed", cuts: make(map[string]int), sends: make(map[string]int)}
	if s := os.Getenv("FIFOQ_POWERCUT_SYNC"); s != "" {
		require.Contains(t, []string{"ack", "relaxed", "mixed"}, s, "FIFOQ_POWERCUT_SYNC")
		p.sync = s
	}
	if s := os.Getenv("FIFOQ_POWERCUT_EVERY"); s != "" {
		d, err := time.ParseDuration(s)
		require.NoError(t, err, "FIFOQ_POWERCUT_EVERY")
		require.Positive(t, d, "FIFOQ_POWERCUT_EVERY")
		p.every = d
	}
	if s := os.Getenv("FIFOQ_POWERCUT_META"); s != "" {
		require.Contains(t, []string{"strict", "lenient", "mixed"}, s, "FIFOQ_POWERCUT_META")
		p.meta = s
	}
	var fsync time.Duration
	if s := os.Getenv("FIFOQ_POWERCUT_FSYNC"); s != "" {
		var err error
		fsync, err = time.ParseDuration(s)
		require.NoError(t, err, "FIFOQ_POWERCUT_FSYNC")
	}
	rig, err := newLazyFS(filepath.Join(k.dir, "backing"), filepath.Join(k.dir, "grave"), filepath.Join(k.dir, "mnt"), true)
	if err != nil {
		t.Skipf("the power-loss rig's FUSE mount was refused: %v", err)
	}
	t.Cleanup(func() {
		if err := rig.close(); err != nil {
			t.Errorf("power-loss rig: %v", err)
		}
	})
	rig.setSyncDelay(fsync)
	p.rig = rig
	return &crashHarness{t: t, dir: k.dir, store: filepath.Join(rig.mnt, "store"), power: p, seed: k.seed,
		rng: rand.New(rand.NewPCG(k.seed, 0)), model: newCrashModel()}
}

// begin chooses the round's modes, sets the rig's, and returns the child's FIFOQ_CRASH_CHILD_SYNC.
func (p *crashPower) begin(round int, rng *rand.Rand) string {
	sync, meta := p.sync, p.meta
	if sync == "mixed" {
		sync = []string{"ack", "relaxed"}[rng.IntN(2)]
	}
	if meta == "mixed" {
		meta = []string{"strict", "lenient"}[rng.IntN(2)]
	}
	p.rig.setMode(meta == "strict")
	p.mode = sync + "/" + meta
	if sync == "ack" {
		return "ack"
	}
	return p.every.String()
}

// delay is how long after it is ready a child is killed: long enough for several intervals of the relaxed
// children, some of them spanning a memtable's flush.
func (p *crashPower) delay(rng *rand.Rand) time.Duration {
	return time.Duration(rng.Int64N(int64(600 * time.Millisecond)))
}

// cut cuts the power, once the child has ended.
func (p *crashPower) cut(t *testing.T, round int) {
	c, err := p.rig.cut()
	require.NoError(t, err, "round %d: the power-loss rig's cut", round)
	p.cuts[p.mode]++
	p.undone.files += c.files
	p.undone.bytes += c.bytes
	p.undone.ops += c.ops
}

// settle reconciles the model with the store after the cut that ended round, records what the cut lost,
// and returns the violations of the prefix the store must be.
func (p *crashPower) settle(m *crashModel, round int, state crashState, killedAt time.Time) []string {
	p.sends[p.mode] += m.totals.sent - p.sentBefore
	p.sentBefore = m.totals.sent
	lost, violations := m.settle(round, state)
	s := m.rounds[round]
	if len(lost) == 0 || s == nil {
		return violations
	}
	k := killedAt.UnixNano()
	for _, l := range lost {
		p.lost = append(p.lost, time.Duration(k-l.ackAt))
	}
	if s.synced != math.MinInt64 {
		since := time.Duration(k - s.synced)
		underway := time.Duration(0)
		if s.began > s.synced {
			underway = time.Duration(k - s.began)
		}
		if !p.measured {
			p.sinceSync, p.excess = since, since-p.every-underway
		}
		p.measured = true
		p.sinceSync = max(p.sinceSync, since)
		p.excess = max(p.excess, since-p.every-underway)
		if late := since - p.every - underway; late > p.every {
			p.late = append(p.late, fmt.Sprintf("round %d: %v (%d sends lost, the oldest acknowledged %v before)",
				round, late.Round(time.Millisecond), len(lost), time.Duration(k-slices.MinFunc(lost, func(a, b crashLoss) int {
					return cmp.Compare(a.ackAt, b.ackAt)
				}).ackAt).Round(time.Millisecond)))
		}
	}
	return violations
}

// report logs what the cuts did and lost.
func (p *crashPower) report(t *testing.T) {
	modes := slices.Sorted(func(yield func(string) bool) {
		for m := range p.cuts {
			if !yield(m) {
				return
			}
		}
	})
	var parts []string
	for _, m := range modes {
		parts = append(parts, fmt.Sprintf("%s: %d cuts, %d sends acknowledged", m, p.cuts[m], p.sends[m]))
	}
	t.Logf("power cuts by mode (sync/metadata): %s", strings.Join(parts, "; "))
	t.Logf("the cuts put %d files back as they were at their last sync (%d bytes taken back) and undid %d metadata changes",
		p.undone.files, p.undone.bytes, p.undone.ops)
	if len(p.lost) == 0 {
		t.Logf("no acknowledged send was lost")
		return
	}
	slices.Sort(p.lost)
	t.Logf("relaxed sync (every %v): %d acknowledged sends lost, each acknowledged after the last real sync began; "+
		"acknowledged before the cut by: median %v, 99th percentile %v, most %v",
		p.every, len(p.lost), p.lost[len(p.lost)/2].Round(time.Millisecond), p.lost[len(p.lost)*99/100].Round(time.Millisecond),
		p.lost[len(p.lost)-1].Round(time.Millisecond))
	if p.measured {
		t.Logf("the last real sync done began at most %v before a cut that lost sends: the interval plus the sync under way, "+
			"and at most %v more", p.sinceSync.Round(time.Millisecond), p.excess.Round(time.Millisecond))
	}
	if len(p.late) > 0 {
		t.Logf("cuts whose last real sync began more than an interval later than the interval and the sync under way "+
			"allow (a child kept off the CPU, or held in a write): %s", strings.Join(p.late, "; "))
	}
}

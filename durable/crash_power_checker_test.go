package durable_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPowerCutChecker proves that the checks after a power cut (crash_power_check_test.go) can fail, and
// allow no more than the sync mode does: on the checker's made-up world (TestCrashChecker's), a round
// that ended with a power cut, its child synced at each acknowledgement or WithSyncEvery with its last
// real sync at a given moment; then one thing lost at a time.
func TestPowerCutChecker(t *testing.T) {
	t.Parallel()
	const (
		ccX = "f-r0-p2-g02-n2" // sent by E's producer after E, acknowledged at ccT0+30
		ccY = "f-r0-p2-g02-n3" // then Y, at ccT0+31
	)
	sendXY := func(w *ccWorld) {
		for i, id := range []string{ccX, ccY} {
			w.recs = append(w.recs,
				crashRec{K: recAttempt, Q: "f", ID: id, Group: "g02", Dedup: id},
				crashRec{K: recSent, Q: "f", ID: id, Msg: "M" + id, Seq: ccSeq("f", 8+i), End: ccT0 + 30 + int64(i)})
		}
	}
	for _, tc := range []struct {
		name   string
		sync   string // "ack", or the interval of WithSyncEvery
		synced int64  // the last real sync began at ccT0+synced (WithSyncEvery)
		change func(w *ccWorld)
		want   []string // each a violation must contain; none if nil
		lost   int      // sends found lost, as the window allows
	}{
		{"ack: consistent", "ack", 0, func(*ccWorld) {}, nil, 0},
		{"ack: acknowledged send lost", "ack", 0, func(w *ccWorld) { w.remove("f", 0, ccC) }, []string{vLost + " " + ccC}, 0},
		{"ack: a receive's count lost", "ack", 0, func(w *ccWorld) { w.setCount("f", 0, ccB, 0) }, []string{vCount}, 0},
		{"relaxed: consistent", "100ms", 20, func(*ccWorld) {}, nil, 0},
		{"relaxed: sends after the last sync lost", "100ms", 20, func(w *ccWorld) { sendXY(w) }, nil, 2},
		{"relaxed: the later of two sends lost", "100ms", 20, func(w *ccWorld) {
			sendXY(w)
			w.store("f", 0, ccX, "M"+ccX, 8, 0)
		}, nil, 1},
		{"relaxed: a send before the last sync lost", "100ms", 20, func(w *ccWorld) { w.remove("f", 0, ccC) }, []string{vLost + " " + ccC}, 0},
		{"relaxed: a send lost while a later one of its producer is stored", "100ms", 20, func(w *ccWorld) {
			sendXY(w)
			w.store("f", 0, ccY, "M"+ccY, 9, 0)
		}, []string{vOrder + " " + ccX + " was lost at the power cut, but " + ccY}, 1},
		{"relaxed: a delete after the last sync lost", "100ms", 5, func(w *ccWorld) { storeFirst(w, ccA, "MA", 1, 1) }, nil, 0},
		{"relaxed: a delete before the last sync came back", "100ms", 20, func(w *ccWorld) { storeFirst(w, ccA, "MA", 1, 1) },
			[]string{vBack + " " + ccA}, 0},
		{"relaxed: a receive after the last sync lost", "100ms", 12, func(w *ccWorld) { w.setCount("f", 0, ccB, 0) }, nil, 0},
		{"relaxed: a receive before the last sync lost", "100ms", 20, func(w *ccWorld) { w.setCount("f", 0, ccB, 0) }, []string{vCount}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newCCWorld()
			tc.change(w)
			recs := append([]crashRec{{K: recBegin, State: tc.sync}}, w.recs...)
			if tc.sync != "ack" {
				recs = append(recs, crashRec{K: recSynced, Start: ccT0 + tc.synced, State: "begin"},
					crashRec{K: recSynced, Start: ccT0 + tc.synced, State: "done"},
					crashRec{K: recSynced, Start: ccT0 + 1000, State: "begin"}) // under way at the cut
			}
			m := newCrashModel()
			m.apply(recs)
			lost, got := m.settle(0, w.state)
			got = append(got, m.check(0, w.state)...)
			require.Len(t, lost, tc.lost, "sends found lost: %v", lost)
			if tc.want == nil {
				require.Empty(t, got)
				return
			}
			for _, want := range tc.want {
				found := false
				for _, v := range got {
					found = found || strings.Contains(v, want)
				}
				require.True(t, found, "no violation contains %q; got:\n%s", want, strings.Join(got, "\n"))
			}
		})
	}
}

// storeFirst puts a message holding id first in the FIFO source queue of the checker's world.
func storeFirst(w *ccWorld, id, msg string, seq, count int) {
	w.store("f", 0, id, msg, seq, count)
	qs := w.state["f"]
	src := qs[0]
	qs[0] = append(src[len(src)-1:], src[:len(src)-1]...)
	w.state["f"] = qs
}

// TestPowerCutCheckerRetried: a FIFO send that a child attempted and never saw acknowledged, though its
// message was received and deleted, all after the last real sync, is lost at the cut, send and delete
// alike; the next child retries the send (it is pending), and its message, under a new MessageID, is no
// delete come back nor an invented body; or that retry, acknowledged after its own child's last sync, is
// lost at the next cut, which is allowed too.
func TestPowerCutCheckerRetried(t *testing.T) {
	t.Parallel()
	const ccX = "f-r0-p2-g02-n2"
	for _, next := range []string{"ack", "100ms"} {
		t.Run(next, func(t *testing.T) {
			t.Parallel()
			w := newCCWorld()
			recs := append([]crashRec{{K: recBegin, State: "100ms"}}, w.recs...)
			recs = append(recs,
				crashRec{K: recSynced, Start: ccT0 + 20, State: "done"},
				crashRec{K: recAttempt, Q: "f", ID: ccX, Group: "g02", Dedup: ccX},
				ccDelivery(ccX, "MX0", 1, 90, 0, 30, 31),
				crashRec{K: recDelAttempt, Q: "f", ID: ccX, Msg: "MX0", Count: 1, Start: ccT0 + 32},
				crashRec{K: recDeleted, Q: "f", ID: ccX, Msg: "MX0", Count: 1, End: ccT0 + 33})
			m := newCrashModel()
			m.apply(recs)
			lost, v := m.settle(0, w.state)
			v = append(v, m.check(0, w.state)...)
			require.Empty(t, v)
			require.Empty(t, lost, "deleted, or lost: not counted as a send lost")
			require.Equal(t, []string{ccX}, m.input(time.Unix(0, ccT0)).Pending, "its send is retried")

			retry := []crashRec{{K: recBegin, State: next},
				{K: recAttempt, Q: "f", ID: ccX, Group: "g02", Dedup: ccX},
				{K: recSent, Q: "f", ID: ccX, Msg: "MX1", Seq: ccSeq("f", 9), End: ccT0 + 100}}
			for i := range retry {
				retry[i].round = 1
			}
			m.apply(retry)
			if next == "ack" {
				w.store("f", 0, ccX, "MX1", 9, 0)
			}
			lost, v = m.settle(1, w.state)
			v = append(v, m.check(1, w.state)...)
			require.Empty(t, v)
			if next == "ack" {
				require.Empty(t, lost)
			} else {
				require.Len(t, lost, 1, "the retry, acknowledged with no real sync after it, is lost")
			}
		})
	}
}

package durable_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// TestCrashChecker proves that the crash test's checker can fail: it feeds it side logs and a store made up
// by hand, consistent at first, then with one thing broken at a time, and requires each to be reported.
func TestCrashChecker(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		corrupt func(w *ccWorld)
		want    []string // each a violation must contain, in this order of kinds
	}{
		{"consistent", func(*ccWorld) {}, nil},
		{"acknowledged send lost", func(w *ccWorld) { w.remove("f", 0, ccC) }, []string{vLost + " " + ccC}},
		{"delivered message lost", func(w *ccWorld) { w.remove("f", 0, ccB) }, []string{vLost + " " + ccB}},
		{"acknowledged delete back in the store", func(w *ccWorld) { w.store("f", 0, ccA, "MA", 1, 1) }, []string{vBack + " " + ccA}},
		{"acknowledged delete delivered again", func(w *ccWorld) {
			w.recs = append(w.recs, ccDelivery(ccA, "MA", 2, 99, 0, 20, 21))
			w.store("f", 0, ccA, "MA", 1, 2)
		}, []string{vBack + " " + ccA, vBack + " " + ccA}},
		{"two groups out of order in the store", func(w *ccWorld) {
			w.swap("f", 0, ccB, ccC)
			w.swap("f", 0, ccD, ccE)
		}, []string{vOrder + " in group g00", vOrder + " in group g02"}},
		{"delivered ahead of its group", func(w *ccWorld) {
			w.recs = append(w.recs, ccDelivery(ccC, "MC", 3, 50, 0, 20, 21))
			w.store("f", 0, ccC, "MC", 3, 1)
		}, []string{vOrder + " group g00: " + ccC}},
		{"receive count went back in the store", func(w *ccWorld) { w.setCount("f", 0, ccB, 0) }, []string{vCount}},
		{"receive count seen twice", func(w *ccWorld) {
			w.recs = append(w.recs, ccDelivery(ccB, "MB", 1, 60, 0, 20, 21))
		}, []string{vCount + " " + ccB + " (MessageID MB) was delivered twice"}},
		{"receive count went back between deliveries", func(w *ccWorld) {
			w.recs = append(w.recs, ccDelivery(ccP, "MP", 2, 60, 0, 40, 41))
		}, []string{vCount + " " + ccP + " (MessageID MP) was delivered with receive count 2 after 3"}},
		{"invented body", func(w *ccWorld) { w.store("f", 0, "f-r0-p0-g00-n99", "MX", 9, 0) }, []string{vInvented}},
		{"foreign body", func(w *ccWorld) {
			w.state["s"] = [2][]fifoq.Snapshot{append(w.state["s"][0], fifoq.Snapshot{Message: fifoq.Message{Body: "hello"}}), w.state["s"][1]}
		}, []string{vInvented}},
		{"stored twice", func(w *ccWorld) { w.store("f", 1, ccC, "MC", 3, 0) }, []string{vInvented + " " + ccC + " is stored twice"}},
		{"dead-letter count", func(w *ccWorld) { w.setCount("f", 1, ccP, 2) }, []string{vDLQ, vCount}},
		{"dead-letter source", func(w *ccWorld) { w.edit("f", 1, ccP, func(s *fifoq.Snapshot) { s.DeadLetterSource = "" }) }, []string{vDLQ}},
		{"not moved at maxReceiveCount", func(w *ccWorld) {
			w.remove("f", 1, ccP)
			w.store("f", 0, ccP, "MP", 4, 4)
		}, []string{vDLQ}},
		{"delivered before its delay ended", func(w *ccWorld) {
			w.recs = append(w.recs,
				crashRec{K: recAttempt, Q: "s", ID: "s-r0-p0-g01-n1", Group: "g01"},
				crashRec{K: recSent, Q: "s", ID: "s-r0-p0-g01-n1", Msg: "MT"},
				ccDelivery("s-r0-p0-g01-n1", "MT", 1, 70, 0, 20, 21))
			w.store("s", 0, "s-r0-p0-g01-n1", "MT", 8, 1)
		}, []string{vDelay + " s-r0-p0-g01-n1"}},
		{"a child failed", func(w *ccWorld) {
			w.recs = append(w.recs, crashRec{K: recFatal, Err: "boom"})
		}, []string{vLog + " round 0: the child failed: boom"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newCCWorld()
			tc.corrupt(w)
			m := newCrashModel()
			m.apply(w.recs)
			got := m.check(0, w.state)
			if tc.want == nil {
				require.Empty(t, got, "a consistent world")
				return
			}
			require.NotEmpty(t, got, "the checker found nothing wrong; want %q", tc.want)
			for _, want := range tc.want {
				found := false
				for _, v := range got {
					if strings.Contains(v, want) {
						found = true
						break
					}
				}
				require.True(t, found, "no violation contains %q; got:\n%s", want, strings.Join(got, "\n"))
			}
		})
	}
}

// The consistent world: FIFO group g00 holds A (received once, deleted), B (received once, failed) and C
// (never received); group g02 holds D and E; P, poison in group g01, was received 3 times and is in the
// dead-letter queue; S is in the standard queue.
const (
	ccA = "f-r0-p0-g00-n0"
	ccB = "f-r0-p0-g00-n1"
	ccC = "f-r0-p0-g00-n2"
	ccP = "f-r0-p1-g01-n0-P"
	ccD = "f-r0-p2-g02-n0"
	ccE = "f-r0-p2-g02-n1"
	ccS = "s-r0-p0-g00-n0"
)

const ccT0 = int64(1_800_000_000_000_000_000)

type ccWorld struct {
	recs  []crashRec
	state crashState
}

func newCCWorld() *ccWorld {
	w := &ccWorld{state: crashState{"f": {}, "s": {}}}
	for i, id := range []string{ccA, ccB, ccC, ccP, ccD, ccE, ccS} {
		cid, _ := parseCrashID(id)
		dedup := ""
		if cid.q == "f" {
			dedup = id
		}
		w.recs = append(w.recs,
			crashRec{K: recAttempt, Q: cid.q, ID: id, Group: cid.group, Dedup: dedup},
			crashRec{K: recSent, Q: cid.q, ID: id, Msg: ccMsg(id), Seq: ccSeq(cid.q, i+1)})
	}
	w.recs = append(w.recs,
		ccDelivery(ccA, "MA", 1, 1, 0, 10, 11),
		crashRec{K: recDelAttempt, Q: "f", ID: ccA, Msg: "MA", Count: 1, Start: ccT0 + 12},
		crashRec{K: recDeleted, Q: "f", ID: ccA, Msg: "MA", Count: 1, End: ccT0 + 13},
		ccDelivery(ccB, "MB", 1, 2, 0, 14, 15),
		crashRec{K: recFailed, Q: "f", ID: ccB, Msg: "MB", Count: 1},
	)
	for n := 1; n <= 3; n++ {
		w.recs = append(w.recs,
			ccDelivery(ccP, "MP", n, 2+n, 0, int64(10*n), int64(10*n+1)),
			crashRec{K: recFailed, Q: "f", ID: ccP, Msg: "MP", Count: n})
	}
	w.store("f", 0, ccB, "MB", 2, 1)
	w.store("f", 0, ccC, "MC", 3, 0)
	w.store("f", 0, ccD, "MD", 5, 0)
	w.store("f", 0, ccE, "ME", 6, 0)
	w.store("f", 1, ccP, "MP", 4, 3)
	w.store("s", 0, ccS, "MS", 7, 0)
	return w
}

func ccMsg(id string) string {
	return map[string]string{ccA: "MA", ccB: "MB", ccC: "MC", ccP: "MP", ccD: "MD", ccE: "ME", ccS: "MS"}[id]
}

func ccSeq(q string, n int) string {
	if q != "f" {
		return ""
	}
	return fmt.Sprintf("%020d", n)
}

// ccDelivery is a delivery of id, as sent, in receive call call (start and end are offsets from ccT0).
func ccDelivery(id, msg string, count, call, idx int, start, end int64) crashRec {
	cid, _ := parseCrashID(id)
	dedup := ""
	if cid.q == "f" {
		dedup = id
	}
	first := ccT0 + 10
	if id == ccB || id == ccC {
		first = ccT0 + 14
	}
	return crashRec{K: recDelivery, Q: cid.q, ID: id, Call: call, Idx: idx, Start: ccT0 + start, End: ccT0 + end,
		Msg: msg, Count: count, First: first, Sent: ccT0, Dedup: dedup, Handle: "h-" + msg}
}

// store adds a message holding id to the end of the source (where 0) or dead-letter queue (1) of q.
func (w *ccWorld) store(q string, where int, id, msg string, seq, count int) {
	cid, _ := parseCrashID(id)
	s := fifoq.Snapshot{
		Message: fifoq.Message{
			Body:       crashBodyOf(id),
			GroupID:    cid.group,
			Attributes: map[string]fifoq.Attribute{"id": {DataType: "String", StringValue: id}},
		},
		MessageID:      msg,
		SequenceNumber: ccSeq(q, seq),
		State:          fifoq.StateVisible,
		ReceiveCount:   count,
		SentAt:         time.Unix(0, ccT0),
	}
	if q == "f" {
		s.DeduplicationID = id
	}
	if count > 0 {
		s.FirstReceivedAt = time.Unix(0, ccT0+10)
		if id == ccB || id == ccC {
			s.FirstReceivedAt = time.Unix(0, ccT0+14)
		}
	}
	if where == 1 {
		s.DeadLetterSource = map[string]string{"f": crashFIFOName, "s": crashStdName}[q]
		s.SequenceNumber = ""
		if q == "f" {
			s.DeduplicationID = msg
			s.SentAt = time.Unix(0, ccT0+40)
		}
	}
	qs := w.state[q]
	qs[where] = append(qs[where], s)
	w.state[q] = qs
}

func (w *ccWorld) find(q string, where int, id string) int {
	for i, s := range w.state[q][where] {
		if crashIDOf(s.Body) == id {
			return i
		}
	}
	panic("fifoq: no " + id)
}

func (w *ccWorld) remove(q string, where int, id string) {
	qs := w.state[q]
	i := w.find(q, where, id)
	qs[where] = append(qs[where][:i:i], qs[where][i+1:]...)
	w.state[q] = qs
}

func (w *ccWorld) edit(q string, where int, id string, f func(*fifoq.Snapshot)) {
	f(&w.state[q][where][w.find(q, where, id)])
}

func (w *ccWorld) setCount(q string, where int, id string, n int) {
	w.edit(q, where, id, func(s *fifoq.Snapshot) { s.ReceiveCount = n })
}

// swap exchanges two messages of a queue, keeping the sequence numbers in place.
func (w *ccWorld) swap(q string, where int, a, b string) {
	i, j := w.find(q, where, a), w.find(q, where, b)
	s := w.state[q][where]
	s[i], s[j] = s[j], s[i]
	s[i].SequenceNumber, s[j].SequenceNumber = s[j].SequenceNumber, s[i].SequenceNumber
}

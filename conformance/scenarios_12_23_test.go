package conformance_test

// Scenarios 12-23 of spec §12: FIFO message groups, ordering and MessageGroupId.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"
)

// scS12: FIFO group blocking. Group A has a1 in flight and a2 visible → a receive of 10 returns nothing from
// A; B's message is returned (2.8).
func scS12(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "q.fifo", scFIFO(30))
	scSend(t, d, "q.fifo", "A", "a1")
	require.Equal(t, []string{"a1"}, scBodies(scRecvN(t, d, "q.fifo", 1)))
	scSend(t, d, "q.fifo", "A", "a2")
	scSend(t, d, "q.fifo", "B", "b1")
	require.Equal(t, []string{"b1"}, scBodies(scRecvN(t, d, "q.fifo", 10)), "A is blocked by a1")
	scRequireCounts(t, d, "q.fifo", scCounts{Visible: 1, InFlight: 2}, "a2 waits as visible (10.2)")
}

// scS13: FIFO new message does not unblock. A:m1 in flight; A:m2 sent during a long poll does not end it;
// deleting m1 makes the waiting long poll return m2 at once (2.10, 1.5.2).
func scS13(t *testing.T, d scDriver, tm scTime) {
	scNewQ(t, d, "q.fifo", scFIFO(30))
	scSend(t, d, "q.fifo", "A", "m1")
	h1 := scOnly(t, scRecvN(t, d, "q.fifo", 1)).Handle

	poll := scPoll(t, d, "q.fifo", scRecv{Max: 10, Wait: scSec(2)})
	tm.waitTimers(1)
	scSend(t, d, "q.fifo", "A", "m2")
	tm.settle()
	scPending(t, poll, "m2 was sent behind the in-flight m1")
	tm.advance(2 * time.Second)
	p := <-poll
	scOK(t, p.err, "long poll of 2s")
	require.Empty(t, scBodies(p.gs), "the long poll ends empty")

	poll = scPoll(t, d, "q.fifo", scRecv{Max: 10, Wait: scSec(20)})
	tm.waitTimers(1)
	scOK(t, d.delete(t.Context(), "q.fifo", h1), "delete m1")
	p = <-poll
	scOK(t, p.err, "long poll of 20s")
	require.Equal(t, []string{"m2"}, scBodies(p.gs), "m2 comes as soon as m1 is deleted")
	require.Equal(t, scStart.Add(2*time.Second), tm.now(), "at once")
}

// scS14: FIFO group-fill first. Send g1-m1, g2-m1, g1-m2, g1-m3; a receive of 10 → [g1-m1, g1-m2, g1-m3,
// g2-m1] (2.6).
func scS14(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "q.fifo", scFIFO(30))
	for _, s := range [][2]string{{"g1", "g1-m1"}, {"g2", "g2-m1"}, {"g1", "g1-m2"}, {"g1", "g1-m3"}} {
		scSend(t, d, "q.fifo", s[0], s[1])
	}
	gs := scRecvN(t, d, "q.fifo", 10)
	require.Equal(t, []string{"g1-m1", "g1-m2", "g1-m3", "g2-m1"}, scBodies(gs))
	for _, g := range gs {
		require.Equal(t, g.Body[:2], g.Group, "group of %s", g.Body)
	}
}

// scS15: FIFO partial take blocks the rest. g1 has m1..m4, g2 one message; receive(2) → g1-m1, g1-m2;
// receive(1) → g2-m1, not g1-m3 (2.6, 2.8).
func scS15(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "q.fifo", scFIFO(30))
	for i := 1; i <= 4; i++ {
		scSend(t, d, "q.fifo", "g1", fmt.Sprintf("g1-m%d", i))
	}
	scSend(t, d, "q.fifo", "g2", "g2-m1")
	require.Equal(t, []string{"g1-m1", "g1-m2"}, scBodies(scRecvN(t, d, "q.fifo", 2)))
	require.Equal(t, []string{"g2-m1"}, scBodies(scRecvN(t, d, "q.fifo", 1)))
	scRequireEmpty(t, d, "q.fifo", "g1 is blocked, g2 is in flight")
}

// scS16: FIFO visible prefix. Receive [A, B, C] of one group with VT 1; extend one to 4; at 2.5 s a receive
// returns the messages before the extended one: A extended → [], B → [A], C → [A, B] (2.9).
func scS16(t *testing.T, d scDriver, tm scTime) {
	for i, tc := range []struct {
		extend string
		want   []string
	}{
		{"A", []string{}},
		{"B", []string{"A"}},
		{"C", []string{"A", "B"}},
	} {
		q := fmt.Sprintf("prefix%d.fifo", i)
		scNewQ(t, d, q, scFIFO(30))
		for _, b := range []string{"A", "B", "C"} {
			scSend(t, d, q, "g", b)
		}
		gs := scRecvO(t, d, q, scRecv{Max: 10, VT: scSec(1)})
		require.Equal(t, []string{"A", "B", "C"}, scBodies(gs))
		scOK(t, d.changeVisibility(t.Context(), q, scHandle(t, gs, tc.extend), 4*time.Second), "extend %s", tc.extend)
		tm.advance(2500 * time.Millisecond)
		require.Equal(t, tc.want, scBodies(scRecvN(t, d, q, 10)), "%s extended", tc.extend)
	}
}

// scS17: FIFO head terminated while the tail is in flight. Receive g1-m1, g1-m2 (VT 30); set g1-m1's VT to
// 0 → a receive of 3 returns g1-m1 and other groups' messages, never g1-m2 (2.9).
func scS17(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "q.fifo", scFIFO(30))
	scSend(t, d, "q.fifo", "g1", "g1-m1")
	scSend(t, d, "q.fifo", "g1", "g1-m2")
	gs := scRecvN(t, d, "q.fifo", 2)
	require.Equal(t, []string{"g1-m1", "g1-m2"}, scBodies(gs))
	scSend(t, d, "q.fifo", "g2", "g2-m1")
	scOK(t, d.changeVisibility(t.Context(), "q.fifo", scHandle(t, gs, "g1-m1"), 0), "terminate g1-m1")
	got := scRecvN(t, d, "q.fifo", 3)
	require.Equal(t, map[string][]string{"g1": {"g1-m1"}, "g2": {"g2-m1"}}, scByGroup(got))
	scRequireContiguous(t, got)
}

// scS18: FIFO partial delete. Receive g1-m1, g1-m2; delete only g1-m1 → g1's later messages are not
// returned; other groups' are (2.9).
func scS18(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "q.fifo", scFIFO(30))
	for i := 1; i <= 3; i++ {
		scSend(t, d, "q.fifo", "g1", fmt.Sprintf("g1-m%d", i))
	}
	gs := scRecvN(t, d, "q.fifo", 2)
	require.Equal(t, []string{"g1-m1", "g1-m2"}, scBodies(gs))
	scSend(t, d, "q.fifo", "g2", "g2-m1")
	scOK(t, d.delete(t.Context(), "q.fifo", scHandle(t, gs, "g1-m1")), "delete g1-m1")
	require.Equal(t, []string{"g2-m1"}, scBodies(scRecvN(t, d, "q.fifo", 10)), "g1 is blocked at g1-m2")
}

// scS19: FIFO full delete unblocks. Receive g1-m1, g1-m2; delete both (in one batch) → g1-m3, g1-m4 are
// receivable at once, in order (2.9).
func scS19(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "q.fifo", scFIFO(30))
	for i := 1; i <= 4; i++ {
		scSend(t, d, "q.fifo", "g1", fmt.Sprintf("g1-m%d", i))
	}
	gs := scRecvN(t, d, "q.fifo", 2)
	require.Equal(t, []string{"g1-m1", "g1-m2"}, scBodies(gs))
	codes, err := d.deleteBatch(t.Context(), "q.fifo", []string{gs[0].Handle, gs[1].Handle})
	scOK(t, err, "delete both")
	require.Equal(t, []string{"", ""}, codes)
	require.Equal(t, []string{"g1-m3", "g1-m4"}, scBodies(scRecvN(t, d, "q.fifo", 10)))
}

// scS20: FIFO redelivery order. Three messages of one group, VT 1, receive all, let the VT end → received
// again in the same order, each with count 2 (2.11).
func scS20(t *testing.T, d scDriver, tm scTime) {
	scNewQ(t, d, "q.fifo", scFIFO(1))
	for _, b := range []string{"m1", "m2", "m3"} {
		scSend(t, d, "q.fifo", "g", b)
	}
	first := scRecvN(t, d, "q.fifo", 10)
	require.Equal(t, []string{"m1", "m2", "m3"}, scBodies(first))
	again := scVisibleAfter(t, d, tm, "q.fifo", time.Second, "after the VT")
	require.Equal(t, []string{"m1", "m2", "m3"}, scBodies(again))
	for i, g := range again {
		require.Equal(t, first[i].ID, g.ID)
		require.Equal(t, 2, g.Count, "count of %s", g.Body)
	}
}

// scS21: FIFO VT 0 receive. With g1 ×2 and g2 ×2, a receive of 3 with VT 0 takes one group whole and the
// head of the other; the next receive of 10 with VT 0 returns all four, in order per group. Inter-group
// order is not asserted (1.2.8, 2.12).
func scS21(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "q.fifo", scFIFO(30))
	for _, s := range [][2]string{{"g1", "g1-m1"}, {"g1", "g1-m2"}, {"g2", "g2-m1"}, {"g2", "g2-m2"}} {
		scSend(t, d, "q.fifo", s[0], s[1])
	}
	gs := scRecvO(t, d, "q.fifo", scRecv{Max: 3, VT: scSec(0)})
	require.Len(t, gs, 3, "got %v", scBodies(gs))
	scRequireContiguous(t, gs)
	by := scByGroup(gs)
	whole, head := "g1", "g2"
	if len(by["g2"]) == 2 {
		whole, head = "g2", "g1"
	}
	require.Equal(t, map[string][]string{whole: {whole + "-m1", whole + "-m2"}, head: {head + "-m1"}}, by)
	scRequireCounts(t, d, "q.fifo", scCounts{Visible: 4}, "VT 0 leaves them visible")
	all := scRecvO(t, d, "q.fifo", scRecv{Max: 10, VT: scSec(0)})
	scRequireContiguous(t, all)
	require.Equal(t, map[string][]string{"g1": {"g1-m1", "g1-m2"}, "g2": {"g2-m1", "g2-m2"}}, scByGroup(all))
}

// scS22: FIFO MessageGroupId validation. Missing → MissingParameter; 129 characters or "group 123" →
// InvalidParameterValue; 128 × "a" → OK (2.2, 2.3).
func scS22(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "q.fifo", scFIFO(30))
	_, err := d.send(t.Context(), "q.fifo", scMsg{Body: "m"})
	scWantText(t, scWantCode(t, err, "MissingParameter", "no group id"), "The request must contain the parameter MessageGroupId")
	for _, g := range []string{strings.Repeat("a", 129), "group 123"} {
		_, err := d.send(t.Context(), "q.fifo", scMsg{Body: "m", Group: g})
		scWantCode(t, err, "InvalidParameterValue", "group id %.20q", g)
	}
	scRequireCounts(t, d, "q.fifo", scCounts{}, "nothing was sent")
	scSend(t, d, "q.fifo", strings.Repeat("a", 128), "m")
	got := scOnly(t, scRecvN(t, d, "q.fifo", 1))
	require.Equal(t, strings.Repeat("a", 128), got.Group)
}

// scS22w: a MessageGroupId of "" → InvalidParameterValue (2.3).
func scS22w(t *testing.T, d scDriver, _ scTime) {
	w := d.(*scWire)
	scNewQ(t, d, "q.fifo", scFIFO(30))
	_, err := w.c.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String(w.url("q.fifo")),
		MessageBody: aws.String("m"), MessageGroupId: aws.String("")})
	scWantCode(t, scWireErr(err), "InvalidParameterValue", `group id ""`)
	scRequireCounts(t, d, "q.fifo", scCounts{}, "nothing was sent")
}

// scS23: standard queue with a MessageGroupId (fair queue): accepted, no SequenceNumber, no ordering or
// blocking effect, and the same validation as FIFO (2.4).
func scS23(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "q", scAttrs{VT: scSec(30)})
	s1 := scSend(t, d, "q", "g", "m1")
	require.Empty(t, s1.Seq, "no SequenceNumber on a standard queue")
	scSend(t, d, "q", "g", "m2")
	got := scOnly(t, scRecvN(t, d, "q", 1))
	require.Equal(t, "m1", got.Body)
	require.Equal(t, "g", got.Group, "the group comes back with the message")
	require.Empty(t, got.Seq)
	require.Equal(t, []string{"m2"}, scBodies(scRecvN(t, d, "q", 1)), "m1 in flight does not block m2")
	for _, g := range []string{strings.Repeat("a", 129), "group 123"} {
		_, err := d.send(t.Context(), "q", scMsg{Body: "m", Group: g})
		scWantCode(t, err, "InvalidParameterValue", "group id %.20q", g)
	}
}

package conformance_test

// Scenarios 24-33 of spec §12: ReceiveRequestAttemptId and deduplication.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// scS24: ReceiveRequestAttemptId replay. A retry with X within 5 minutes → the same messages and handles,
// and the VT restarts (2.15.2).
func scS24(t *testing.T, d scDriver, tm scTime) {
	scNewQ(t, d, "q.fifo", scFIFO(30))
	for _, s := range [][2]string{{"g1", "g1-m1"}, {"g1", "g1-m2"}, {"g2", "g2-m1"}} {
		scSend(t, d, "q.fifo", s[0], s[1])
	}
	o := scRecv{Max: 10, AttemptID: "attempt-X"}
	first := scRecvO(t, d, "q.fifo", o)
	require.Len(t, first, 3)
	tm.advance(20 * time.Second)
	require.Equal(t, first, scRecvO(t, d, "q.fifo", o), "a retry at +20s returns the same messages and handles")
	scRequireCounts(t, d, "q.fifo", scCounts{InFlight: 3}, "after the retry")
	got := scVisibleAfter(t, d, tm, "q.fifo", 30*time.Second, "the VT restarted at the retry")
	require.Len(t, got, 3)
}

// scS25: ReceiveRequestAttemptId invalidated. After one of the messages is deleted, a retry with X must not
// return the same set; fifoq rejects it with InvalidParameterValue ("not valid anymore since the receive
// call is not retryable", its reading of the unverified 2.15.3). After 5 minutes the id no longer replays
// either: a receive with it is a fresh one.
func scS25(t *testing.T, d scDriver, tm scTime) {
	scNewQ(t, d, "q.fifo", scFIFO(30))
	scSend(t, d, "q.fifo", "g", "m1")
	scSend(t, d, "q.fifo", "g", "m2")
	o := scRecv{Max: 10, AttemptID: "X"}
	gs := scRecvO(t, d, "q.fifo", o)
	require.Len(t, gs, 2)
	scOK(t, d.delete(t.Context(), "q.fifo", gs[1].Handle), "delete m2")
	again, err := d.receive(t.Context(), "q.fifo", o)
	scWantCode(t, err, "InvalidParameterValue", "retry after a delete (got %v)", scBodies(again))

	scNewQ(t, d, "r.fifo", scFIFO(30))
	scSend(t, d, "r.fifo", "g", "m")
	o = scRecv{AttemptID: "Y"}
	h := scOnly(t, scRecvO(t, d, "r.fifo", o)).Handle
	tm.advance(5 * time.Minute)
	fresh := scOnly(t, scRecvO(t, d, "r.fifo", o))
	require.NotEqual(t, h, fresh.Handle, "after 5 minutes the id does not replay")
	require.Equal(t, 2, fresh.Count)
}

// scS26: dedup within 5 minutes. send(d, b1), send(d, b2) → both succeed, the second with the first's
// MessageId (and SequenceNumber, 3.9); only b1 is ever delivered (3.4).
func scS26(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "q.fifo", scFIFO(30))
	s1 := scSendMsg(t, d, "q.fifo", scMsg{Body: "b1", Group: "g", Dedup: "d"})
	s2 := scSendMsg(t, d, "q.fifo", scMsg{Body: "b2", Group: "g", Dedup: "d"})
	require.Equal(t, s1, s2, "the duplicate returns the original's MessageId and SequenceNumber")
	got := scOnly(t, scRecvN(t, d, "q.fifo", 10))
	require.Equal(t, "b1", got.Body)
	require.Equal(t, "d", got.Dedup)
	scOK(t, d.delete(t.Context(), "q.fifo", got.Handle), "delete b1")
	scRequireCounts(t, d, "q.fifo", scCounts{}, "b2 was never stored")
}

// scS27: dedup survives delete. Send d, receive, delete, resend d → nothing is delivered (3.5).
func scS27(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "q.fifo", scFIFO(30))
	s1 := scSendMsg(t, d, "q.fifo", scMsg{Body: "b1", Group: "g", Dedup: "d"})
	scOK(t, d.delete(t.Context(), "q.fifo", scOnly(t, scRecvN(t, d, "q.fifo", 1)).Handle), "delete")
	s2 := scSendMsg(t, d, "q.fifo", scMsg{Body: "b2", Group: "g", Dedup: "d"})
	require.Equal(t, s1.ID, s2.ID)
	scRequireEmpty(t, d, "q.fifo", "the resend is a duplicate")
	scRequireCounts(t, d, "q.fifo", scCounts{}, "after the resend")
}

// scS28: dedup expiry. Send d, wait more than 5 minutes, resend d → delivered as a new message with a new
// MessageId (3.4).
func scS28(t *testing.T, d scDriver, tm scTime) {
	scNewQ(t, d, "q.fifo", scFIFO(30))
	s1 := scSendMsg(t, d, "q.fifo", scMsg{Body: "b1", Group: "g", Dedup: "d"})
	tm.advance(5*time.Minute + time.Second)
	s2 := scSendMsg(t, d, "q.fifo", scMsg{Body: "b2", Group: "g", Dedup: "d"})
	require.NotEqual(t, s1.ID, s2.ID)
	gs := scRecvN(t, d, "q.fifo", 10)
	require.Equal(t, []string{"b1", "b2"}, scBodies(gs))
	require.Equal(t, s2.ID, gs[1].ID)
}

// scS29: content-based dedup ignores attributes: the same body with different attributes → one delivery.
// The same body with explicit, different dedup ids → two deliveries (3.3).
func scS29(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "q.fifo", scFIFO(30))
	attr := func(v string) map[string]fifoq.Attribute {
		return map[string]fifoq.Attribute{"a": {DataType: "String", StringValue: v}}
	}
	s1 := scSendMsg(t, d, "q.fifo", scMsg{Body: "same", Group: "g", Attrs: attr("1")})
	s2 := scSendMsg(t, d, "q.fifo", scMsg{Body: "same", Group: "g", Attrs: attr("2")})
	require.Equal(t, s1.ID, s2.ID)
	got := scOnly(t, scRecvN(t, d, "q.fifo", 10))
	require.Equal(t, attr("1"), got.Attrs)
	sum := sha256.Sum256([]byte("same"))
	require.Equal(t, hex.EncodeToString(sum[:]), got.Dedup, "the generated id is the hex SHA-256 of the body")
	scOK(t, d.delete(t.Context(), "q.fifo", got.Handle), "delete")
	scSendMsg(t, d, "q.fifo", scMsg{Body: "same", Group: "g", Dedup: "x1"})
	scSendMsg(t, d, "q.fifo", scMsg{Body: "same", Group: "g", Dedup: "x2"})
	require.Equal(t, []string{"same", "same"}, scBodies(scRecvN(t, d, "q.fifo", 10)))
}

// scS30: the default dedup scope (queue): the same dedup id in g1 and g2 → the second is suppressed (3.6).
func scS30(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "q.fifo", scAttrs{VT: scSec(30)})
	scSendMsg(t, d, "q.fifo", scMsg{Body: "b1", Group: "g1", Dedup: "d"})
	scSendMsg(t, d, "q.fifo", scMsg{Body: "b2", Group: "g2", Dedup: "d"})
	require.Equal(t, []string{"b1"}, scBodies(scRecvN(t, d, "q.fifo", 10)))
}

// scS31: dedup scope messageGroup: the same dedup id in g1 and g2 → both delivered; twice in g1 → one
// delivery (3.7).
func scS31(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "q.fifo", scAttrs{VT: scSec(30), Scope: "messageGroup"})
	scSendMsg(t, d, "q.fifo", scMsg{Body: "b1", Group: "g1", Dedup: "d"})
	scSendMsg(t, d, "q.fifo", scMsg{Body: "b2", Group: "g2", Dedup: "d"})
	scSendMsg(t, d, "q.fifo", scMsg{Body: "b3", Group: "g1", Dedup: "d"})
	require.Equal(t, map[string][]string{"g1": {"b1"}, "g2": {"b2"}}, scByGroup(scRecvN(t, d, "q.fifo", 10)))
}

// scS32: missing dedup. A FIFO queue without content-based dedup and a send without a dedup id →
// InvalidParameterValue (3.1).
func scS32(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "q.fifo", scAttrs{})
	_, err := d.send(t.Context(), "q.fifo", scMsg{Body: "b", Group: "g"})
	scWantText(t, scWantCode(t, err, "InvalidParameterValue", "no dedup id"),
		"The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly")
	scRequireCounts(t, d, "q.fifo", scCounts{}, "nothing was sent")
}

// scS33: FIFO-only attributes on a standard queue → InvalidAttributeName (3.12): ContentBasedDeduplication,
// DeduplicationScope (even "queue").
func scS33(t *testing.T, d scDriver, _ scTime) {
	for i, a := range []scAttrs{{CBD: scBool(true)}, {Scope: "messageGroup"}, {Scope: "queue"}} {
		err := d.createQueue(t.Context(), fmt.Sprintf("std%d", i), a)
		scWantCode(t, err, "InvalidAttributeName", "standard queue with %+v", a)
	}
}

// scS33w: FifoThroughputLimit=perMessageGroupId with DeduplicationScope=queue → an error (3.13; the code is
// not documented, so any rejection passes); FIFO-only attributes set to their FIFO defaults on a standard
// queue → InvalidAttributeName (3.12).
func scS33w(t *testing.T, d scDriver, _ scTime) {
	w := d.(*scWire)
	ctx := t.Context()
	_, err := w.createRaw(ctx, "ht.fifo", map[string]string{"FifoQueue": "true",
		"FifoThroughputLimit": "perMessageGroupId", "DeduplicationScope": "queue"})
	require.Error(t, err, "perMessageGroupId with DeduplicationScope queue")
	_, err = w.createRaw(ctx, "ht2.fifo", map[string]string{"FifoQueue": "true",
		"FifoThroughputLimit": "perMessageGroupId", "DeduplicationScope": "messageGroup"})
	scOK(t, err, "high-throughput mode")
	for i, attrs := range []map[string]string{
		{"FifoQueue": "false"},
		{"ContentBasedDeduplication": "false"},
		{"FifoThroughputLimit": "perQueue"},
	} {
		_, err := w.createRaw(ctx, fmt.Sprintf("std%d", i), attrs)
		scWantCode(t, scWireErr(err), "InvalidAttributeName", "standard queue with %v", attrs)
	}
}

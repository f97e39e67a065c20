package conformance_test

// Scenarios 43-49 of spec §12: dead-letter queues and move tasks.

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// scS43: DLQ move point. maxReceiveCount 2, VT 0: receives 1 and 2 return m; receive 3 returns nothing; the
// DLQ holds m with the same MessageId, its source, and receive count 3 on its first DLQ receive (6.3, 6.4,
// 1.4.3).
func scS43(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "dlq", scAttrs{})
	scNewQ(t, d, "src", scAttrs{VT: scSec(0), DLQ: "dlq", MaxReceive: 2})
	sent := scSend(t, d, "src", "", "m")
	for i := 1; i <= 2; i++ {
		got := scOnly(t, scRecvN(t, d, "src", 10))
		require.Equal(t, i, got.Count, "receive %d", i)
	}
	scRequireEmpty(t, d, "src", "receive 3 moves m")
	scRequireCounts(t, d, "src", scCounts{}, "after the move")
	scRequireCounts(t, d, "dlq", scCounts{Visible: 1}, "after the move")
	got := scOnly(t, scRecvN(t, d, "dlq", 10))
	require.Equal(t, scGot{ID: sent.ID, Body: "m", Handle: got.Handle, Count: 3, DLSource: "src"}, got)
}

// scS44: a FIFO head that fails until it moves to the DLQ unblocks its group: the next message of the group
// is then delivered. In the DLQ the dedup id is the original MessageId (6.5, 3.11).
func scS44(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "dlq.fifo", scFIFO(30))
	a := scFIFO(0)
	a.DLQ, a.MaxReceive = "dlq.fifo", 2
	scNewQ(t, d, "src.fifo", a)
	m1 := scSend(t, d, "src.fifo", "g", "m1")
	scSend(t, d, "src.fifo", "g", "m2")
	for i := 1; i <= 2; i++ {
		got := scOnly(t, scRecvN(t, d, "src.fifo", 1))
		require.Equal(t, "m1", got.Body, "receive %d", i)
	}
	got := scOnly(t, scRecvN(t, d, "src.fifo", 1))
	require.Equal(t, "m2", got.Body, "m1 moved; the group goes on")
	require.Equal(t, 1, got.Count)
	dl := scOnly(t, scRecvN(t, d, "dlq.fifo", 10))
	require.Equal(t, scGot{ID: m1.ID, Body: "m1", Group: "g", Dedup: m1.ID, Seq: dl.Seq, Handle: dl.Handle,
		Count: 3, DLSource: "src.fifo"}, dl)
}

// scS45: DLQ type mismatch: a standard source with a FIFO DLQ, or the reverse → InvalidParameterValue (6.2).
func scS45(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "dlq", scAttrs{})
	scNewQ(t, d, "dlq.fifo", scFIFO(30))
	err := d.createQueue(t.Context(), "src", scAttrs{DLQ: "dlq.fifo", MaxReceive: 3})
	scWantCode(t, err, "InvalidParameterValue", "standard source, FIFO DLQ")
	a := scFIFO(30)
	a.DLQ, a.MaxReceive = "dlq", 3
	err = d.createQueue(t.Context(), "src.fifo", a)
	scWantCode(t, err, "InvalidParameterValue", "FIFO source, standard DLQ")
}

// scS46: RedriveAllowPolicy: a denyAll DLQ cannot be a target; byQueue with 11 sources is rejected; byQueue
// lets the listed source in and keeps others out (6.7).
func scS46(t *testing.T, d scDriver, _ scTime) {
	ctx := t.Context()
	scNewQ(t, d, "deny", scAttrs{Allow: &scAllow{Permission: "denyAll"}})
	scWantCode(t, d.createQueue(ctx, "src1", scAttrs{DLQ: "deny", MaxReceive: 3}), "InvalidParameterValue", "denyAll target")
	var eleven []string
	for i := range 11 {
		eleven = append(eleven, fmt.Sprintf("s%d", i))
	}
	err := d.createQueue(ctx, "many", scAttrs{Allow: &scAllow{Permission: "byQueue", Sources: eleven}})
	scWantCode(t, err, "InvalidAttributeValue", "byQueue with 11 sources")
	scNewQ(t, d, "by", scAttrs{Allow: &scAllow{Permission: "byQueue", Sources: []string{"src2"}}})
	scNewQ(t, d, "src2", scAttrs{DLQ: "by", MaxReceive: 3})
	scWantCode(t, d.createQueue(ctx, "src3", scAttrs{DLQ: "by", MaxReceive: 3}), "InvalidParameterValue", "source not listed")
}

// scS47: DLQ retention. Standard: a message 1 day old at the move, with a 4-day DLQ retention, expires 3
// days after the move. FIFO: 4 days after the move (5.4).
func scS47(t *testing.T, d scDriver, tm scTime) {
	const day = 24 * time.Hour
	scNewQ(t, d, "dlq", scAttrs{Retention: scSec(4 * 86400)})
	scNewQ(t, d, "src", scAttrs{VT: scSec(0), DLQ: "dlq", MaxReceive: 1})
	fa := scFIFO(30)
	fa.Retention = scSec(4 * 86400)
	scNewQ(t, d, "dlq.fifo", fa)
	fa = scFIFO(0)
	fa.DLQ, fa.MaxReceive = "dlq.fifo", 1
	scNewQ(t, d, "src.fifo", fa)
	for _, q := range []string{"src", "src.fifo"} {
		scSend(t, d, q, "g", "m")
	}
	tm.advance(day)
	for _, q := range []string{"src", "src.fifo"} {
		scOnly(t, scRecvN(t, d, q, 1))
		scRequireEmpty(t, d, q, "the second receive moves m")
	}
	scRequireCounts(t, d, "dlq", scCounts{Visible: 1}, "moved")
	scRequireCounts(t, d, "dlq.fifo", scCounts{Visible: 1}, "moved")
	tm.advance(3*day - time.Millisecond)
	scRequireCounts(t, d, "dlq", scCounts{Visible: 1}, "standard, 3 days after the move less 1ms")
	tm.advance(time.Millisecond)
	scRequireCounts(t, d, "dlq", scCounts{}, "standard, 3 days after the move: 4 days after the send")
	scRequireCounts(t, d, "dlq.fifo", scCounts{Visible: 1}, "FIFO, 3 days after the move")
	tm.advance(day - time.Millisecond)
	scRequireCounts(t, d, "dlq.fifo", scCounts{Visible: 1}, "FIFO, 4 days after the move less 1ms")
	tm.advance(time.Millisecond)
	scRequireCounts(t, d, "dlq.fifo", scCounts{}, "FIFO, 4 days after the move")
}

// scToDLQ sends bodies to src (VT 0, maxReceiveCount 1) and receives them twice, which moves them to its DLQ.
func scToDLQ(t *testing.T, d scDriver, src string, bodies ...string) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for _, b := range bodies {
		ids[b] = scSend(t, d, src, "", b).ID
	}
	require.Len(t, scRecvN(t, d, src, 10), len(bodies))
	scRequireEmpty(t, d, src, "the second receive moves them")
	return ids
}

// scS48: move task to source. Without a destination, messages return to their own sources with new
// MessageIds. A second start while a task runs → InvalidParameterValue. Cancel while RUNNING → CANCELLING
// or CANCELLED, and the moved messages stay moved (6.9).
func scS48(t *testing.T, d scDriver, tm scTime) {
	ctx := t.Context()
	scNewQ(t, d, "dlq", scAttrs{})
	scNewQ(t, d, "src1", scAttrs{VT: scSec(0), DLQ: "dlq", MaxReceive: 1})
	scNewQ(t, d, "src2", scAttrs{VT: scSec(0), DLQ: "dlq", MaxReceive: 1})
	old := scToDLQ(t, d, "src1", "a")
	for b, id := range scToDLQ(t, d, "src2", "b") {
		old[b] = id
	}
	scRequireCounts(t, d, "dlq", scCounts{Visible: 2}, "before the move")
	_, err := d.startMoveTask(ctx, "dlq", "", 0)
	scOK(t, err, "start a move back to the sources")
	tm.settle()
	tasks, err := d.listMoveTasks(ctx, "dlq")
	scOK(t, err, "list")
	require.Equal(t, []scTask{{Status: "COMPLETED", Moved: 2, ToMove: 2}}, tasks)
	scRequireCounts(t, d, "dlq", scCounts{}, "after the move")
	for src, b := range map[string]string{"src1": "a", "src2": "b"} {
		got := scOnly(t, scRecvN(t, d, src, 10))
		require.Equal(t, b, got.Body, "back in %s", src)
		require.NotEqual(t, old[b], got.ID, "a new MessageId")
		require.Equal(t, 1, got.Count)
		require.Empty(t, got.DLSource)
		scOK(t, d.delete(ctx, src, got.Handle), "delete %s", b)
	}

	scToDLQ(t, d, "src1", "c", "d", "e")
	h, err := d.startMoveTask(ctx, "dlq", "", 1)
	scOK(t, err, "start a move of 1 a second")
	tm.waitTimers(1) // the task moved one message and waits a second
	_, err = d.startMoveTask(ctx, "dlq", "", 0)
	scWantCode(t, err, "InvalidParameterValue", "a second task while one runs")
	tasks, err = d.listMoveTasks(ctx, "dlq")
	scOK(t, err, "list")
	require.Len(t, tasks, 2)
	require.Equal(t, scTask{Status: "RUNNING", Moved: 1, ToMove: 3}, tasks[0])
	scOK(t, d.cancelMoveTask(ctx, h), "cancel")
	tm.settle()
	tasks, err = d.listMoveTasks(ctx, "dlq")
	scOK(t, err, "list")
	require.Contains(t, []string{"CANCELLING", "CANCELLED"}, tasks[0].Status)
	require.Equal(t, 1, tasks[0].Moved)
	scRequireCounts(t, d, "src1", scCounts{Visible: 1}, "the moved message stays moved")
	scRequireCounts(t, d, "dlq", scCounts{Visible: 2}, "the others stay")
}

// scS49: a move task whose source is no dead-letter queue → InvalidParameterValue "Source queue must be
// configured as a Dead Letter Queue." (6.9.1).
func scS49(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "plain", scAttrs{})
	scNewQ(t, d, "dlq", scAttrs{})
	scNewQ(t, d, "src", scAttrs{DLQ: "dlq", MaxReceive: 3})
	for _, q := range []string{"plain", "src"} {
		_, err := d.startMoveTask(t.Context(), q, "", 0)
		scWantText(t, scWantCode(t, err, "InvalidParameterValue", "move task from %s", q),
			"Source queue must be configured as a Dead Letter Queue")
	}
}

// scS49w: a move task to a destination that does not exist → ResourceNotFoundException (6.9.1).
func scS49w(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "dlq", scAttrs{})
	scNewQ(t, d, "src", scAttrs{DLQ: "dlq", MaxReceive: 3})
	_, err := d.startMoveTask(t.Context(), "dlq", "nowhere", 0)
	scWantCode(t, err, "ResourceNotFoundException", "move task to a missing queue")
}

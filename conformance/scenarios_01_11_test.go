package conformance_test

// Scenarios 1-11 of spec §12: visibility timeouts and receipt handles.

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// ---- the scenarios ----

// scS01: standard basic. Send m; receive → m with count 1; receive again within the VT → empty; after the VT
// → m with count 2 and a different receipt handle (1.3.1, 1.4.3).
func scS01(t *testing.T, d scDriver, tm scTime) {
	scNewQ(t, d, "q", scAttrs{VT: scSec(30)})
	sent := scSend(t, d, "q", "", "m")
	first := scOnly(t, scRecvN(t, d, "q", 1))
	require.Equal(t, scGot{ID: sent.ID, Body: "m", Handle: first.Handle, Count: 1}, first)
	require.NotEmpty(t, first.Handle)
	scRequireEmpty(t, d, "q", "within the VT")
	again := scOnly(t, scVisibleAfter(t, d, tm, "q", 30*time.Second, "after the VT"))
	require.Equal(t, sent.ID, again.ID)
	require.Equal(t, 2, again.Count)
	require.NotEqual(t, first.Handle, again.Handle, "a new receive gives a new receipt handle")
}

// scS02: standard old handle delete. Receive with VT 1, wait 2, delete with that handle → success, and the
// queue is empty (1.3.4).
func scS02(t *testing.T, d scDriver, tm scTime) {
	scNewQ(t, d, "q", scAttrs{})
	scSend(t, d, "q", "", "m")
	h := scOnly(t, scRecvO(t, d, "q", scRecv{VT: scSec(1)})).Handle
	tm.advance(2 * time.Second)
	scRequireCounts(t, d, "q", scCounts{Visible: 1}, "visible again after the VT")
	scOK(t, d.delete(t.Context(), "q", h), "delete with the expired handle")
	scRequireCounts(t, d, "q", scCounts{}, "after the delete")
	scRequireEmpty(t, d, "q", "after the delete")
}

// scS03: standard double delete. Deleting with the same handle 3 times succeeds every time (1.3.4).
func scS03(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "q", scAttrs{})
	scSend(t, d, "q", "", "m")
	h := scOnly(t, scRecvN(t, d, "q", 1)).Handle
	for i := range 3 {
		scOK(t, d.delete(t.Context(), "q", h), "delete #%d", i+1)
	}
	scRequireCounts(t, d, "q", scCounts{}, "after the deletes")
}

// scS04: change visibility after delete → InvalidParameterValue, "Message does not exist or is not
// available for visibility timeout change" (1.3.4), on both queue types.
func scS04(t *testing.T, d scDriver, _ scTime) {
	for _, q := range []string{"q", "q.fifo"} {
		a := scAttrs{}
		if strings.HasSuffix(q, ".fifo") {
			a = scFIFO(30)
		}
		scNewQ(t, d, q, a)
		scSend(t, d, q, "g", "m")
		h := scOnly(t, scRecvN(t, d, q, 1)).Handle
		scOK(t, d.delete(t.Context(), q, h), "delete from %s", q)
		e := scWantCode(t, d.changeVisibility(t.Context(), q, h, 10*time.Second), "InvalidParameterValue",
			"change visibility of a deleted message in %s", q)
		scWantText(t, e, "Message does not exist or is not available for visibility timeout change")
	}
}

// scS05: garbage handle. DeleteMessage and ChangeMessageVisibility with "garbage" → ReceiptHandleIsInvalid
// (1.3.4), on both queue types.
func scS05(t *testing.T, d scDriver, _ scTime) {
	for _, q := range []string{"q", "q.fifo"} {
		a := scAttrs{}
		if strings.HasSuffix(q, ".fifo") {
			a = scFIFO(30)
		}
		scNewQ(t, d, q, a)
		scSend(t, d, q, "g", "m")
		scWantCode(t, d.delete(t.Context(), q, "garbage"), "ReceiptHandleIsInvalid", "delete garbage from %s", q)
		scWantCode(t, d.changeVisibility(t.Context(), q, "garbage", 0), "ReceiptHandleIsInvalid",
			"change visibility of garbage in %s", q)
		scRequireCounts(t, d, q, scCounts{Visible: 1}, "nothing changed")
	}
}

// scS06: terminate visibility. Receive, then ChangeMessageVisibility(0) → the next receive returns the same
// MessageId; the one after returns nothing (1.2.7).
func scS06(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "q", scAttrs{VT: scSec(30)})
	sent := scSend(t, d, "q", "", "m")
	h := scOnly(t, scRecvN(t, d, "q", 1)).Handle
	scOK(t, d.changeVisibility(t.Context(), "q", h, 0), "change visibility to 0")
	again := scOnly(t, scRecvN(t, d, "q", 1))
	require.Equal(t, sent.ID, again.ID)
	require.Equal(t, 2, again.Count)
	scRequireEmpty(t, d, "q", "in flight again")
}

// scS07: the new timeout counts from the call. Queue VT 60; at +15 s set 10 → visible at +25 s, not +75 s
// (1.2.4).
func scS07(t *testing.T, d scDriver, tm scTime) {
	scNewQ(t, d, "q", scAttrs{VT: scSec(60)})
	scSend(t, d, "q", "", "m")
	h := scOnly(t, scRecvN(t, d, "q", 1)).Handle
	tm.advance(15 * time.Second)
	scOK(t, d.changeVisibility(t.Context(), "q", h, 10*time.Second), "change visibility to 10 at +15s")
	scOnly(t, scVisibleAfter(t, d, tm, "q", 10*time.Second, "10s after the change"))
	require.Equal(t, scStart.Add(25*time.Second), tm.now())
}

// scS08: the 12 h cap. Right after the receive 43,200 → error and 43,195 → OK; after several extensions a
// request beyond 12 h from the receive → error, with no clamping (1.2.5). fifoq allows exactly 12 h at the
// instant of the receive, so "immediately" is 1 s after it.
func scS08(t *testing.T, d scDriver, tm scTime) {
	scNewQ(t, d, "q", scAttrs{VT: scSec(30)})
	scSend(t, d, "q", "", "m")
	h := scOnly(t, scRecvN(t, d, "q", 1)).Handle
	ctx := t.Context()
	tm.advance(time.Second)
	scWantCode(t, d.changeVisibility(ctx, "q", h, 43200*time.Second), "InvalidParameterValue", "43200 at +1s")
	scOK(t, d.changeVisibility(ctx, "q", h, 43195*time.Second), "43195 at +1s")
	tm.advance(6 * time.Hour)
	scWantCode(t, d.changeVisibility(ctx, "q", h, 6*time.Hour), "InvalidParameterValue", "6h at +6h1s: 12h1s")
	scOK(t, d.changeVisibility(ctx, "q", h, 6*time.Hour-time.Second), "to exactly 12h")
	tm.advance(6*time.Hour - 2*time.Second)
	scWantCode(t, d.changeVisibility(ctx, "q", h, 2*time.Second), "InvalidParameterValue", "2s at 12h-1s")
	scRequireEmpty(t, d, "q", "a rejected change does not clamp or end the visibility")
	scOK(t, d.changeVisibility(ctx, "q", h, time.Second), "1s at 12h-1s")
	got := scOnly(t, scVisibleAfter(t, d, tm, "q", time.Second, "visible 12h after the receive"))
	require.Equal(t, 2, got.Count)
}

// scS09: per-receipt visibility. Extend to 300, let it expire, receive again with no override → the queue's
// 30 s, not 300 (1.2.6).
func scS09(t *testing.T, d scDriver, tm scTime) {
	scNewQ(t, d, "q", scAttrs{VT: scSec(30)})
	scSend(t, d, "q", "", "m")
	h := scOnly(t, scRecvN(t, d, "q", 1)).Handle
	scOK(t, d.changeVisibility(t.Context(), "q", h, 300*time.Second), "extend to 300")
	scVisibleAfter(t, d, tm, "q", 300*time.Second, "the extension ends")
	got := scOnly(t, scVisibleAfter(t, d, tm, "q", 30*time.Second, "the next receipt has the queue's 30s"))
	require.Equal(t, 3, got.Count)
}

// scS10: FIFO expired-handle delete. VT 1, receive, wait 2, delete → InvalidParameterValue "The receipt
// handle has expired." (1.3.5); the message stays.
func scS10(t *testing.T, d scDriver, tm scTime) {
	scNewQ(t, d, "q.fifo", scFIFO(1))
	scSend(t, d, "q.fifo", "g", "m")
	h := scOnly(t, scRecvN(t, d, "q.fifo", 1)).Handle
	tm.advance(2 * time.Second)
	e := scWantCode(t, d.delete(t.Context(), "q.fifo", h), "InvalidParameterValue", "delete with an expired handle")
	scWantText(t, e, "The receipt handle has expired")
	scRequireCounts(t, d, "q.fifo", scCounts{Visible: 1}, "the message stays")
}

// scS11: FIFO extended-handle delete. VT 1, receive, extend to 5, wait 1.5, delete → OK, and the queue is
// empty (1.3.6).
func scS11(t *testing.T, d scDriver, tm scTime) {
	scNewQ(t, d, "q.fifo", scFIFO(1))
	scSend(t, d, "q.fifo", "g", "m")
	h := scOnly(t, scRecvN(t, d, "q.fifo", 1)).Handle
	scOK(t, d.changeVisibility(t.Context(), "q.fifo", h, 5*time.Second), "extend to 5")
	tm.advance(1500 * time.Millisecond)
	scOK(t, d.delete(t.Context(), "q.fifo", h), "delete inside the extended window")
	scRequireCounts(t, d, "q.fifo", scCounts{}, "after the delete")
	tm.advance(5 * time.Second)
	scRequireEmpty(t, d, "q.fifo", "after the extension would have ended")
}

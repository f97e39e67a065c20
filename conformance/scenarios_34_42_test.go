package conformance_test

// Scenarios 34-42 of spec §12: purge, delays and retention.

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// scS34: purge clears dedup. Send d, purge, resend d → delivered (3.10).
func scS34(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "q.fifo", scFIFO(30))
	s1 := scSendMsg(t, d, "q.fifo", scMsg{Body: "b1", Group: "g", Dedup: "d"})
	scOK(t, d.purge(t.Context(), "q.fifo"), "purge")
	s2 := scSendMsg(t, d, "q.fifo", scMsg{Body: "b2", Group: "g", Dedup: "d"})
	require.NotEqual(t, s1.ID, s2.ID)
	require.Equal(t, []string{"b2"}, scBodies(scRecvN(t, d, "q.fifo", 10)))
}

// scS35: purge rate limit. Two purges within 60 s → the second is AWS.SimpleQueueService.PurgeQueueInProgress
// and deletes nothing; at 60 s a purge is allowed again (7.3.3).
func scS35(t *testing.T, d scDriver, tm scTime) {
	scNewQ(t, d, "q", scAttrs{})
	scOK(t, d.purge(t.Context(), "q"), "first purge")
	scSend(t, d, "q", "", "kept")
	tm.advance(59 * time.Second)
	scWantCode(t, d.purge(t.Context(), "q"), "AWS.SimpleQueueService.PurgeQueueInProgress", "purge at 59s")
	scRequireCounts(t, d, "q", scCounts{Visible: 1}, "a rejected purge deletes nothing")
	tm.advance(time.Second)
	scOK(t, d.purge(t.Context(), "q"), "purge at 60s")
	scRequireCounts(t, d, "q", scCounts{}, "after the purge at 60s")
}

// scS36: purge removes in-flight and delayed messages: they never reappear after their VT or delay (7.3.3).
func scS36(t *testing.T, d scDriver, tm scTime) {
	scNewQ(t, d, "q", scAttrs{VT: scSec(30)})
	scSend(t, d, "q", "", "inflight")
	scOnly(t, scRecvN(t, d, "q", 1))
	scSendMsg(t, d, "q", scMsg{Body: "delayed", Delay: scSec(10)})
	scSend(t, d, "q", "", "visible")
	scRequireCounts(t, d, "q", scCounts{Visible: 1, InFlight: 1, Delayed: 1}, "before the purge")
	scOK(t, d.purge(t.Context(), "q"), "purge")
	scRequireCounts(t, d, "q", scCounts{}, "after the purge")
	tm.advance(time.Minute)
	scRequireEmpty(t, d, "q", "after their VT and delay")
	scRequireCounts(t, d, "q", scCounts{}, "a minute after the purge")
}

// scS37: FIFO per-message delay. DelaySeconds 2 → InvalidParameterValue; DelaySeconds 0 with queue delay 2
// → invisible for 2 s (4.3, 4.4).
func scS37(t *testing.T, d scDriver, tm scTime) {
	a := scFIFO(30)
	a.Delay = scSec(2)
	scNewQ(t, d, "q.fifo", a)
	_, err := d.send(t.Context(), "q.fifo", scMsg{Body: "m2", Group: "g", Delay: scSec(2)})
	scWantCode(t, err, "InvalidParameterValue", "DelaySeconds 2 on FIFO")
	scSendMsg(t, d, "q.fifo", scMsg{Body: "m0", Group: "g", Delay: scSec(0)})
	scRequireCounts(t, d, "q.fifo", scCounts{Delayed: 1}, "the queue delay applies")
	require.Equal(t, []string{"m0"}, scBodies(scVisibleAfter(t, d, tm, "q.fifo", 2*time.Second, "the queue delay")))
}

// scS38: the standard message timer overrides the queue delay. Queue 10; message 0 → visible at once;
// message 5 → at 5 s; no timer → at 10 s (4.2).
func scS38(t *testing.T, d scDriver, tm scTime) {
	scNewQ(t, d, "q", scAttrs{VT: scSec(60), Delay: scSec(10)})
	scSendMsg(t, d, "q", scMsg{Body: "m0", Delay: scSec(0)})
	scSendMsg(t, d, "q", scMsg{Body: "m5", Delay: scSec(5)})
	scSendMsg(t, d, "q", scMsg{Body: "queue"})
	require.Equal(t, []string{"m0"}, scBodies(scRecvN(t, d, "q", 10)), "DelaySeconds 0 overrides the queue's 10")
	require.Equal(t, []string{"m5"}, scBodies(scVisibleAfter(t, d, tm, "q", 5*time.Second, "DelaySeconds 5")))
	require.Equal(t, []string{"queue"}, scBodies(scVisibleAfter(t, d, tm, "q", 5*time.Second, "the queue's 10")))
}

// scS39: delay-change retroactivity. Changing the queue delay while a message is delayed: a standard queue
// keeps the old delay, a FIFO queue applies the new one (4.6).
func scS39(t *testing.T, d scDriver, tm scTime) {
	scNewQ(t, d, "q", scAttrs{Delay: scSec(10)})
	scSend(t, d, "q", "", "m")
	scOK(t, d.setAttributes(t.Context(), "q", scAttrs{Delay: scSec(2)}), "set the standard delay to 2")
	scVisibleAfter(t, d, tm, "q", 10*time.Second, "standard: the old delay")

	a := scFIFO(30)
	a.Delay = scSec(10)
	scNewQ(t, d, "q.fifo", a)
	scSend(t, d, "q.fifo", "g", "m")
	scOK(t, d.setAttributes(t.Context(), "q.fifo", scAttrs{Delay: scSec(2)}), "set the FIFO delay to 2")
	scVisibleAfter(t, d, tm, "q.fifo", 2*time.Second, "FIFO: the new delay")
}

// scS40: a delayed message counts in ApproximateNumberOfMessagesDelayed, not as visible (10.1).
func scS40(t *testing.T, d scDriver, tm scTime) {
	scNewQ(t, d, "q", scAttrs{})
	scSendMsg(t, d, "q", scMsg{Body: "m", Delay: scSec(10)})
	scRequireCounts(t, d, "q", scCounts{Delayed: 1}, "delayed")
	tm.advance(10 * time.Second)
	scRequireCounts(t, d, "q", scCounts{Visible: 1}, "after the delay")
}

// scS41: retention 60: a message never received is gone after 60 s, and so is one received with a VT
// longer than that, in flight (5.2). Both queue types.
func scS41(t *testing.T, d scDriver, tm scTime) {
	for _, q := range []string{"q", "q.fifo"} {
		a := scAttrs{Retention: scSec(60)}
		if strings.HasSuffix(q, ".fifo") {
			a.CBD = scBool(true)
		}
		scNewQ(t, d, q, a)
		scSend(t, d, q, "g1", "inflight")
		scSend(t, d, q, "g2", "never")
		require.Equal(t, []string{"inflight"}, scBodies(scRecvO(t, d, q, scRecv{VT: scSec(120)})))
	}
	tm.advance(time.Minute - time.Millisecond)
	for _, q := range []string{"q", "q.fifo"} {
		scRequireCounts(t, d, q, scCounts{Visible: 1, InFlight: 1}, "just before 60s")
	}
	tm.advance(time.Millisecond)
	for _, q := range []string{"q", "q.fifo"} {
		scRequireCounts(t, d, q, scCounts{}, "at 60s")
	}
	tm.advance(time.Minute)
	for _, q := range []string{"q", "q.fifo"} {
		scRequireEmpty(t, d, q, "after the in-flight VT")
	}
}

// scS42: lowering the retention period expires the older messages at once (5.3).
func scS42(t *testing.T, d scDriver, tm scTime) {
	scNewQ(t, d, "q", scAttrs{})
	scSend(t, d, "q", "", "old")
	tm.advance(90 * time.Second)
	scSend(t, d, "q", "", "young")
	tm.advance(30 * time.Second)
	scOK(t, d.setAttributes(t.Context(), "q", scAttrs{Retention: scSec(60)}), "lower the retention to 60")
	scRequireCounts(t, d, "q", scCounts{Visible: 1}, "the 2-minute-old message expired")
	tm.advance(30*time.Second - time.Millisecond)
	scRequireCounts(t, d, "q", scCounts{Visible: 1}, "young at 60s-1ms")
	tm.advance(time.Millisecond)
	scRequireCounts(t, d, "q", scCounts{}, "young at 60s")
}

package conformance_test

// Helpers shared by the spec §12 scenarios.

import (
	"cmp"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// ---- helpers shared by the scenarios ----

// scSec is n seconds, for the pointer fields of scAttrs, scMsg and scRecv.
func scSec(n int) *time.Duration {
	d := time.Duration(n) * time.Second
	return &d
}

// scBool is a pointer to b.
func scBool(b bool) *bool { return &b }

// scFIFO are the attributes of a FIFO queue in §12 ("unless stated otherwise, FIFO queues use
// ContentBasedDeduplication=true"), with a visibility timeout of vt seconds.
func scFIFO(vt int) scAttrs { return scAttrs{VT: scSec(vt), CBD: scBool(true)} }

// scOK fails the test on an error.
func scOK(t *testing.T, err error, what string, args ...any) {
	t.Helper()
	require.NoError(t, err, fmt.Sprintf(what, args...))
}

// scStatus is the HTTP status of an SQS error code on the wire, where it is not 400: the awsQueryError
// status of the SQS model (service/sqs schemas), and spec 7.3.3 for PurgeQueueInProgress.
var scStatus = map[string]int{
	"AWS.SimpleQueueService.PurgeQueueInProgress": http.StatusForbidden,
	"ReceiptHandleIsInvalid":                      http.StatusNotFound,
	"ResourceNotFoundException":                   http.StatusNotFound,
}

// scWantCode asserts that err is the SQS rejection code; on the wire, with the HTTP status of that code.
func scWantCode(t *testing.T, err error, code, what string, args ...any) *scErr {
	t.Helper()
	label := fmt.Sprintf(what, args...)
	require.Error(t, err, "%s: want %s", label, code)
	var e *scErr
	require.ErrorAs(t, err, &e, "%s: want SQS error %s, got %v", label, code, err)
	require.Equal(t, code, e.Code, "%s: error %v", label, err)
	if e.Status != 0 {
		require.Equal(t, cmp.Or(scStatus[code], http.StatusBadRequest), e.Status, "%s: HTTP status of %s", label, code)
	}
	return e
}

// scWantText asserts that a rejection's message holds text, the wording spec §12 quotes, ignoring case
// (fifoq's messages are lower case).
func scWantText(t *testing.T, e *scErr, text string) {
	t.Helper()
	require.Contains(t, strings.ToLower(e.Msg), strings.ToLower(text), "message of %s", e.Code)
}

// scNewQ creates a queue.
func scNewQ(t *testing.T, d scDriver, name string, a scAttrs) {
	t.Helper()
	scOK(t, d.createQueue(t.Context(), name, a), "CreateQueue(%q, %+v)", name, a)
}

// scSend sends body to group (none when ""), with no deduplication id.
func scSend(t *testing.T, d scDriver, q, group, body string) scSent {
	t.Helper()
	return scSendMsg(t, d, q, scMsg{Body: body, Group: group})
}

// scSendMsg sends m.
func scSendMsg(t *testing.T, d scDriver, q string, m scMsg) scSent {
	t.Helper()
	s, err := d.send(t.Context(), q, m)
	scOK(t, err, "send %+v to %s", m, q)
	require.NotEmpty(t, s.ID, "send %+v to %s: MessageId", m, q)
	return s
}

// scRecvO receives with o.
func scRecvO(t *testing.T, d scDriver, q string, o scRecv) []scGot {
	t.Helper()
	gs, err := d.receive(t.Context(), q, o)
	scOK(t, err, "receive %+v from %s", o, q)
	return gs
}

// scRecvN receives up to n messages with the queue's settings.
func scRecvN(t *testing.T, d scDriver, q string, n int) []scGot {
	t.Helper()
	return scRecvO(t, d, q, scRecv{Max: n})
}

// scOnly returns the single message of gs.
func scOnly(t *testing.T, gs []scGot) scGot {
	t.Helper()
	require.Len(t, gs, 1, "want one message, got %v", scBodies(gs))
	return gs[0]
}

// scBodies lists the bodies of gs, in order.
func scBodies(gs []scGot) []string {
	out := []string{}
	for _, g := range gs {
		out = append(out, g.Body)
	}
	return out
}

// scByGroup splits the bodies of gs by group, in order.
func scByGroup(gs []scGot) map[string][]string {
	out := map[string][]string{}
	for _, g := range gs {
		out[g.Group] = append(out[g.Group], g.Body)
	}
	return out
}

// scRequireContiguous asserts that the messages of each group are next to each other in gs (spec 2.6).
func scRequireContiguous(t *testing.T, gs []scGot) {
	t.Helper()
	seen := map[string]bool{}
	for i, g := range gs {
		if i > 0 && gs[i-1].Group == g.Group {
			continue
		}
		require.False(t, seen[g.Group], "group %q is split in %v", g.Group, scBodies(gs))
		seen[g.Group] = true
	}
}

// scHandle returns the receipt handle of the message with body in gs.
func scHandle(t *testing.T, gs []scGot, body string) string {
	t.Helper()
	for _, g := range gs {
		if g.Body == body {
			return g.Handle
		}
	}
	require.FailNow(t, "no message with body", "want %q in %v", body, scBodies(gs))
	return ""
}

// scRequireEmpty asserts that a receive of 10 gets nothing.
func scRequireEmpty(t *testing.T, d scDriver, q, what string) {
	t.Helper()
	require.Empty(t, scBodies(scRecvN(t, d, q, 10)), "%s: receive from %s", what, q)
}

// scRequireCounts asserts a queue's counts.
func scRequireCounts(t *testing.T, d scDriver, q string, want scCounts, what string) {
	t.Helper()
	got, err := d.counts(t.Context(), q)
	scOK(t, err, "counts of %s", q)
	require.Equal(t, want, got, "%s: counts of %s", what, q)
}

// scVisibleAfter moves the clock to 1 ms before after and checks that nothing can be received, then to after
// and returns what a receive of 10 gets there, which is not nothing.
func scVisibleAfter(t *testing.T, d scDriver, tm scTime, q string, after time.Duration, what string) []scGot {
	t.Helper()
	tm.advance(after - time.Millisecond)
	scRequireEmpty(t, d, q, what+": 1ms before")
	tm.advance(time.Millisecond)
	gs := scRecvN(t, d, q, 10)
	require.NotEmpty(t, gs, "%s: at %v from %s", what, after, q)
	return gs
}

// scPolled is what a receive in another goroutine returned.
type scPolled struct {
	gs  []scGot
	err error
}

// scPoll starts a receive in a goroutine and returns where its result arrives. The caller must take the
// result before its scenario ends.
func scPoll(t *testing.T, d scDriver, q string, o scRecv) <-chan scPolled {
	ctx := t.Context()
	ch := make(chan scPolled, 1)
	go func() {
		gs, err := d.receive(ctx, q, o)
		ch <- scPolled{gs, err}
	}()
	return ch
}

// scPending asserts that a poll has not returned yet.
func scPending(t *testing.T, ch <-chan scPolled, what string) {
	t.Helper()
	select {
	case p := <-ch:
		require.FailNow(t, "the long poll returned early", "%s: got %v, %v", what, scBodies(p.gs), p.err)
	default:
	}
}

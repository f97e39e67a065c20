package sqsapi_test

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/sqsapi"
)

// The scenarios of spec §12 (shared/spec/sqs-semantics.md, 1 to 57), each written once against a small
// driver interface (scDriver) and run twice, with the same code and the same expectations: over the Go API
// (fifoq.New and the Queue methods) and over the SQS wire API (aws-sdk-go-v2 against a sqsapi.Server, in
// process). Subtests are named driver/scenario: go/01_standard_basic, wire/01_standard_basic. Every
// top-level name of this file starts with "sc".
//
// Time: the Go queues and the server share one fifoq.ManualClock, which the scenarios advance (scTime);
// nothing sleeps. Each scenario runs in a testing/synctest bubble (the in-process HTTP client serves a
// request in the calling goroutine, so it works there): synctest.Wait lets what an Advance woke run, settles
// a move task, and confirms that a long poll started in a goroutine (scPoll) is waiting; a goroutine that
// outlives its scenario fails it.
//
// Error codes: a failure is compared by its SQS error code. The Go API gives it with fifoq.ErrorCode (per
// entry of a *fifoq.BatchError); the SDK gives it with smithy's ErrorCode(), which for SQS, an
// awsQueryCompatible service, is the code of the X-Amzn-Query-Error header when there is one (smithy-go
// transport/http/protocol/awsjson: deserializeError), i.e. the query-protocol code such as
// "AWS.SimpleQueueService.NonExistentQueue" or "QueueAlreadyExists", and otherwise the shape name of the
// JSON __type ("QueueDoesNotExist"). fifoq's codes are already the query codes, so the two sides are
// compared as they are, with no normalization. On the wire scWantCode also checks the HTTP status of the
// code (403 for PurgeQueueInProgress, as 7.3.3 says; the SQS model's status for the others).
//
// Zero values: where API.md gives a zero its own meaning (a receive's VisibilityTimeout and WaitTime, a
// message's Delay), the Go driver writes an explicit zero as fifoq.ExplicitZero. aws-sdk-go-v2 omits every
// zero int32 member (DelaySeconds, VisibilityTimeout and WaitTimeSeconds of ReceiveMessage,
// MaxNumberOfMessages), so the wire driver adds an explicit 0 to the JSON body itself (scExplicitZero), as
// other SDKs send it.
//
// Covered on both drivers: 1-32, 33 (the FIFO-only attributes fifoq has, given to a standard queue), 34-48,
// 49 (a source that is no dead-letter queue), 50, 51 (all but the entry ids), 52 (all but the digests), 53
// (all but MaxNumberOfMessages 0), 54-56.
//
// Wire only, because the Go API cannot express them (their go/ subtests are skipped with the reason):
//   - 22w: a MessageGroupId of "" (in Go an empty GroupID is a missing one: that half of 22 runs on both);
//   - 33w: FifoThroughputLimit (fifoq has no such setting) and FIFO-only attributes set to false on a
//     standard queue (Go cannot give WithContentBasedDeduplication a false);
//   - 49w: a destination that does not exist (StartMoveTask takes a *Queue, which exists);
//   - 51w: duplicate and invalid batch entry ids (Go batch entries have no ids, only positions);
//   - 52w: the MD5 digests (the Go API computes none) and the AWSTraceHeader system attribute;
//   - 53w: MaxNumberOfMessages 0 (in Go MaxMessages 0 means 1);
//   - 57: CreateQueue idempotency, QueueAlreadyExists, QueueDeletedRecently and NonExistentQueue (fifoq.New
//     keeps no registry of names, and there is no DeleteQueue).
//
// Left out: nothing of 1-57. Scenarios 58-64 are about the Lambda event source mapping (fifoq.Consumer),
// which the wire API does not serve; the root package tests them.

// scRegion, scAccount and scARNPrefix say where the server's queues are.
const (
	scRegion    = "us-east-1"
	scAccount   = "000000000000"
	scARNPrefix = "arn:aws:sqs:" + scRegion + ":" + scAccount + ":"
)

// scStart is where every scenario's clock starts.
var scStart = time.Date(2025, 3, 28, 12, 0, 0, 0, time.UTC)

// scAttrs are queue attributes in neutral form. Nil or zero fields are not given (the default on create,
// unchanged on set).
type scAttrs struct {
	VT, Delay, Retention, Wait *time.Duration // VisibilityTimeout, DelaySeconds, MessageRetentionPeriod, ReceiveMessageWaitTimeSeconds
	MaxSize                    int            // MaximumMessageSize
	CBD                        *bool          // ContentBasedDeduplication
	Scope                      string         // DeduplicationScope: "queue" or "messageGroup"
	DLQ                        string         // RedrivePolicy: the dead-letter queue's name,
	MaxReceive                 int            // and maxReceiveCount
	Allow                      *scAllow       // RedriveAllowPolicy
}

// scAllow is a RedriveAllowPolicy in neutral form.
type scAllow struct {
	Permission string   // "allowAll", "denyAll" or "byQueue"
	Sources    []string // queue names
}

// scMsg is a message to send. An empty Group or Dedup is not given; a nil Delay is not given, a zero one is
// an explicit 0.
type scMsg struct {
	Body, Group, Dedup string
	Delay              *time.Duration
	Attrs              map[string]fifoq.Attribute
}

// scSent is what a send returns.
type scSent struct{ ID, Seq string }

// scEntry is the outcome of one entry of a batch: what it returned, or the code it failed with.
type scEntry struct {
	scSent
	Code string
}

// scRecv are the parameters of a receive. Max 0 is not given (1); a nil Wait or VT is not given, a zero one
// is an explicit 0.
type scRecv struct {
	Max       int
	Wait, VT  *time.Duration
	AttemptID string
}

// scGot is a received message.
type scGot struct {
	ID, Body, Group, Dedup, Seq, Handle string
	Count                               int    // ApproximateReceiveCount
	DLSource                            string // DeadLetterQueueSourceArn, as a queue name
	Attrs                               map[string]fifoq.Attribute
}

// scCounts are a queue's message counts.
type scCounts struct{ Visible, InFlight, Delayed int }

// scTask is one entry of ListMessageMoveTasks.
type scTask struct {
	Status        string
	Moved, ToMove int
	Dest          string // a queue name; "" when messages go back to their sources
}

// scErr is an SQS rejection in neutral form.
type scErr struct {
	Code   string
	Status int // the HTTP status, on the wire; 0 from the Go API
	Msg    string
}

func (e *scErr) Error() string { return e.Code + ": " + e.Msg }

// scDriver is what the scenarios do to queues, named by queue name. A rejection is an *scErr; any other
// error is a failure of the driver itself. Methods are safe for concurrent use (scPoll).
type scDriver interface {
	createQueue(ctx context.Context, name string, a scAttrs) error
	setAttributes(ctx context.Context, q string, a scAttrs) error
	send(ctx context.Context, q string, m scMsg) (scSent, error)
	// sendBatch returns one entry per message when the call as a whole succeeds.
	sendBatch(ctx context.Context, q string, ms []scMsg) ([]scEntry, error)
	receive(ctx context.Context, q string, o scRecv) ([]scGot, error)
	delete(ctx context.Context, q, handle string) error
	// deleteBatch returns the code of each entry ("" for success) when the call as a whole succeeds.
	deleteBatch(ctx context.Context, q string, handles []string) ([]string, error)
	changeVisibility(ctx context.Context, q, handle string, timeout time.Duration) error
	purge(ctx context.Context, q string) error
	counts(ctx context.Context, q string) (scCounts, error)
	// startMoveTask starts moving the messages of dead-letter queue src to dest ("": back to their
	// sources), rate a second (0: not given); it returns the task handle.
	startMoveTask(ctx context.Context, src, dest string, rate int) (string, error)
	cancelMoveTask(ctx context.Context, handle string) error
	// listMoveTasks lists src's move tasks, newest first.
	listMoveTasks(ctx context.Context, src string) ([]scTask, error)
}

// scTime drives the clock the queues of a scenario share. It is used inside the scenario's bubble.
type scTime struct{ clk *fifoq.ManualClock }

// now is the queues' time.
func (tm scTime) now() time.Time { return tm.clk.Now() }

// advance moves the clock forward by d and lets what it woke run.
func (tm scTime) advance(d time.Duration) {
	tm.clk.Advance(d)
	synctest.Wait()
}

// waitTimers returns once n timers are pending on the clock (long polls, a rate-limited move task between
// two batches) and every other goroutine of the bubble is blocked.
func (tm scTime) waitTimers(n int) {
	tm.clk.WaitTimers(n)
	synctest.Wait()
}

// settle returns once every other goroutine of the bubble is blocked: a move task has ended or waits on the
// clock.
func (tm scTime) settle() { synctest.Wait() }

// scScenario is one entry of the table.
type scScenario struct {
	name     string
	wireOnly string // why the Go API cannot express it; "" runs on both drivers
	run      func(t *testing.T, d scDriver, tm scTime)
}

// TestScScenarios runs every scenario on both drivers.
func TestScScenarios(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"go", "wire"} {
		for _, sc := range scScenarios {
			t.Run(kind+"/"+sc.name, func(t *testing.T) {
				if kind == "go" && sc.wireOnly != "" {
					t.Skip("wire only: " + sc.wireOnly)
				}
				t.Parallel()
				synctest.Test(t, func(t *testing.T) {
					clk := fifoq.NewManualClock(scStart)
					var d scDriver
					if kind == "go" {
						d = scNewGo(clk)
					} else {
						d = scNewWire(clk)
					}
					sc.run(t, d, scTime{clk})
				})
			})
		}
	}
}

var scScenarios = []scScenario{
	{name: "01 standard basic", run: scS01},
	{name: "02 standard old handle delete", run: scS02},
	{name: "03 standard double delete", run: scS03},
	{name: "04 change visibility after delete", run: scS04},
	{name: "05 garbage handle", run: scS05},
	{name: "06 terminate visibility", run: scS06},
	{name: "07 change visibility counts from the call", run: scS07},
	{name: "08 12h cap", run: scS08},
	{name: "09 per-receipt visibility", run: scS09},
	{name: "10 FIFO expired-handle delete", run: scS10},
	{name: "11 FIFO extended-handle delete", run: scS11},
	{name: "12 FIFO group blocking", run: scS12},
	{name: "13 FIFO new message does not unblock", run: scS13},
	{name: "14 FIFO group-fill first", run: scS14},
	{name: "15 FIFO partial take blocks the rest", run: scS15},
	{name: "16 FIFO visible prefix", run: scS16},
	{name: "17 FIFO head terminated while tail in flight", run: scS17},
	{name: "18 FIFO partial delete", run: scS18},
	{name: "19 FIFO full delete unblocks", run: scS19},
	{name: "20 FIFO redelivery order", run: scS20},
	{name: "21 FIFO VT 0 receive", run: scS21},
	{name: "22 FIFO MessageGroupId validation", run: scS22},
	{name: "22w FIFO MessageGroupId empty", run: scS22w,
		wireOnly: `an empty GroupID is a missing one in Go (MissingParameter); only the wire can send ""`},
	{name: "23 standard with MessageGroupId", run: scS23},
	{name: "24 ReceiveRequestAttemptId replay", run: scS24},
	{name: "25 ReceiveRequestAttemptId invalidated", run: scS25},
	{name: "26 dedup within 5 minutes", run: scS26},
	{name: "27 dedup survives delete", run: scS27},
	{name: "28 dedup expiry", run: scS28},
	{name: "29 content-based dedup ignores attributes", run: scS29},
	{name: "30 dedup scope queue", run: scS30},
	{name: "31 dedup scope messageGroup", run: scS31},
	{name: "32 missing dedup", run: scS32},
	{name: "33 FIFO attributes on a standard queue", run: scS33},
	{name: "33w high-throughput attribute validity", run: scS33w,
		wireOnly: "fifoq has no FifoThroughputLimit, and Go cannot give a FIFO-only option the value false"},
	{name: "34 purge clears dedup", run: scS34},
	{name: "35 purge rate limit", run: scS35},
	{name: "36 purge removes in-flight and delayed", run: scS36},
	{name: "37 FIFO per-message delay", run: scS37},
	{name: "38 standard message timer", run: scS38},
	{name: "39 delay change retroactivity", run: scS39},
	{name: "40 delayed counter", run: scS40},
	{name: "41 retention", run: scS41},
	{name: "42 retention reduced", run: scS42},
	{name: "43 DLQ move point", run: scS43},
	{name: "44 FIFO DLQ unblocks the group", run: scS44},
	{name: "45 DLQ type mismatch", run: scS45},
	{name: "46 RedriveAllowPolicy", run: scS46},
	{name: "47 DLQ retention", run: scS47},
	{name: "48 move task to source", run: scS48},
	{name: "49 move task invalid source", run: scS49},
	{name: "49w move task missing destination", run: scS49w,
		wireOnly: "StartMoveTask takes a *Queue, so Go cannot name a queue that does not exist"},
	{name: "50 size limits", run: scS50},
	{name: "51 batch rules", run: scS51},
	{name: "51w batch entry ids", run: scS51w, wireOnly: "Go batch entries have no ids, only positions"},
	{name: "52 message attributes", run: scS52},
	{name: "52w MD5 digests", run: scS52w,
		wireOnly: "the Go API computes no MD5 digests and takes no system attributes"},
	{name: "53 receive parameter validation", run: scS53},
	{name: "53w MaxNumberOfMessages 0", run: scS53w, wireOnly: "in Go MaxMessages 0 means 1"},
	{name: "54 long poll returns early", run: scS54},
	{name: "55 SequenceNumber", run: scS55},
	{name: "56 FIFO approximate counts", run: scS56},
	{name: "57 CreateQueue idempotency", run: scS57,
		wireOnly: "fifoq.New keeps no registry of queue names and there is no DeleteQueue"},
}

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

// scS50: size limits. A body of 1,048,576 bytes → OK, one byte more → InvalidParameterValue. With
// MaximumMessageSize 1024, 1,025 bytes of body plus attributes are rejected (7.1.2).
func scS50(t *testing.T, d scDriver, _ scTime) {
	const mib = 1 << 20
	scNewQ(t, d, "q", scAttrs{})
	scSend(t, d, "q", "", strings.Repeat("a", mib))
	_, err := d.send(t.Context(), "q", scMsg{Body: strings.Repeat("a", mib+1)})
	scWantCode(t, err, "InvalidParameterValue", "1 MiB + 1")
	scNewQ(t, d, "small", scAttrs{MaxSize: 1024})
	attr := func(n int) map[string]fifoq.Attribute { // 1 + 6 + n bytes
		return map[string]fifoq.Attribute{"k": {DataType: "String", StringValue: strings.Repeat("v", n)}}
	}
	_, err = d.send(t.Context(), "small", scMsg{Body: strings.Repeat("a", 1000), Attrs: attr(18)})
	scWantCode(t, err, "InvalidParameterValue", "1025 bytes with the attribute")
	scSendMsg(t, d, "small", scMsg{Body: strings.Repeat("a", 1000), Attrs: attr(17)})
	scRequireCounts(t, d, "q", scCounts{Visible: 1}, "the 1 MiB message")
	scRequireCounts(t, d, "small", scCounts{Visible: 1}, "the 1024-byte message")
}

// scS51: batch rules. 11 entries → TooManyEntriesInBatchRequest; more than 1 MiB in all →
// BatchRequestTooLong; one invalid body among 10 → 9 sent and 1 failed with InvalidMessageContents; a FIFO
// batch where one entry lacks MessageGroupId → the whole request fails with InvalidParameterValue and
// nothing is enqueued (7.2, 7.1.1, 2.2).
func scS51(t *testing.T, d scDriver, _ scTime) {
	ctx := t.Context()
	batch := func(n int, group string) []scMsg {
		ms := make([]scMsg, n)
		for i := range ms {
			ms[i] = scMsg{Body: fmt.Sprintf("m%d", i), Group: group}
		}
		return ms
	}
	scNewQ(t, d, "q", scAttrs{})
	_, err := d.sendBatch(ctx, "q", batch(11, ""))
	scWantCode(t, err, "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", "11 entries")
	const half = 1 << 19
	_, err = d.sendBatch(ctx, "q", []scMsg{{Body: strings.Repeat("a", half)}, {Body: strings.Repeat("b", half+1)}})
	scWantCode(t, err, "AWS.SimpleQueueService.BatchRequestTooLong", "1 MiB + 1 in all")
	scRequireCounts(t, d, "q", scCounts{}, "nothing sent")

	ms := batch(10, "")
	ms[3].Body = "bad \x00 body"
	res, err := d.sendBatch(ctx, "q", ms)
	scOK(t, err, "10 entries, one bad")
	for i, e := range res {
		if i == 3 {
			require.Equal(t, scEntry{Code: "InvalidMessageContents"}, e, "entry 3")
			continue
		}
		require.Empty(t, e.Code, "entry %d", i)
		require.NotEmpty(t, e.ID, "entry %d", i)
	}
	scRequireCounts(t, d, "q", scCounts{Visible: 9}, "9 sent")

	scNewQ(t, d, "q.fifo", scFIFO(30))
	ms = batch(10, "g")
	ms[5].Group = ""
	_, err = d.sendBatch(ctx, "q.fifo", ms)
	scWantCode(t, err, "InvalidParameterValue", "FIFO entry 5 without a group")
	scRequireCounts(t, d, "q.fifo", scCounts{}, "nothing enqueued")
	res, err = d.sendBatch(ctx, "q.fifo", batch(3, "g"))
	scOK(t, err, "a FIFO batch")
	require.Len(t, res, 3)
	require.Equal(t, []string{"m0", "m1", "m2"}, scBodies(scRecvN(t, d, "q.fifo", 10)), "in batch order")
}

// scS51w: duplicate entry ids → BatchEntryIdsNotDistinct; an id "a b" → InvalidBatchEntryId (7.2.1).
func scS51w(t *testing.T, d scDriver, _ scTime) {
	w := d.(*scWire)
	scNewQ(t, d, "q", scAttrs{})
	ms := []scMsg{{Body: "a"}, {Body: "b"}}
	_, err := w.sendBatchIDs(t.Context(), "q", []string{"x", "x"}, ms)
	scWantCode(t, err, "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", "duplicate ids")
	_, err = w.sendBatchIDs(t.Context(), "q", []string{"a b", "c"}, ms)
	scWantCode(t, err, "AWS.SimpleQueueService.InvalidBatchEntryId", `id "a b"`)
	scRequireCounts(t, d, "q", scCounts{}, "nothing sent")
}

// scS52: message attributes. 11 attributes, an empty String value, a name starting "AWS." →
// InvalidParameterValue; a Number.int attribute is accepted and echoed (7.1.3).
func scS52(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "q", scAttrs{})
	str := func(v string) fifoq.Attribute { return fifoq.Attribute{DataType: "String", StringValue: v} }
	eleven := map[string]fifoq.Attribute{}
	for i := range 11 {
		eleven[fmt.Sprintf("a%d", i)] = str("v")
	}
	for what, attrs := range map[string]map[string]fifoq.Attribute{
		"11 attributes":      eleven,
		"empty String value": {"k": str("")},
		"name AWS.x":         {"AWS.x": str("v")},
	} {
		_, err := d.send(t.Context(), "q", scMsg{Body: "m", Attrs: attrs})
		scWantCode(t, err, "InvalidParameterValue", "%s", what)
	}
	scRequireCounts(t, d, "q", scCounts{}, "nothing sent")
	attrs := map[string]fifoq.Attribute{
		"n":   {DataType: "Number.int", StringValue: "42"},
		"b":   {DataType: "Binary.png", BinaryValue: []byte{0x89, 'P', 'N', 'G'}},
		"s":   str("héllo"),
		"ten": {DataType: "Number", StringValue: "10"},
	}
	scSendMsg(t, d, "q", scMsg{Body: "m", Attrs: attrs})
	require.Equal(t, attrs, scOnly(t, scRecvN(t, d, "q", 1)).Attrs)
}

// scS52w: the MD5 vectors of 1.4.6: MD5OfMessageBody("foobar"), MD5OfMessageAttributes of {"MyAttribute":
// String "foobar"} on send and receive, MD5OfMessageSystemAttributes of the AWSTraceHeader vector on send;
// no attribute digests for a message without attributes; and the AWSTraceHeader itself on receive (1.4.2).
func scS52w(t *testing.T, d scDriver, _ scTime) {
	w := d.(*scWire)
	ctx := t.Context()
	scNewQ(t, d, "q", scAttrs{})
	const trace = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
	out, err := w.c.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl:    aws.String(w.url("q")),
		MessageBody: aws.String("foobar"),
		MessageAttributes: map[string]types.MessageAttributeValue{
			"MyAttribute": {DataType: aws.String("String"), StringValue: aws.String("foobar")},
		},
		MessageSystemAttributes: map[string]types.MessageSystemAttributeValue{
			"AWSTraceHeader": {DataType: aws.String("String"), StringValue: aws.String(trace)},
		},
	})
	scOK(t, err, "send")
	require.Equal(t, "3858f62230ac3c915f300c664312c63f", aws.ToString(out.MD5OfMessageBody))
	require.Equal(t, "adb59cd4678ea5a855436b949cd07ab6", aws.ToString(out.MD5OfMessageAttributes))
	require.Equal(t, "5ae4d5d7636402d80f4eb6d213245a88", aws.ToString(out.MD5OfMessageSystemAttributes))
	out2, err := w.c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(w.url("q")), MessageBody: aws.String("plain")})
	scOK(t, err, "send without attributes")
	require.Nil(t, out2.MD5OfMessageAttributes, "no attributes, no digest")
	require.Nil(t, out2.MD5OfMessageSystemAttributes, "no system attributes, no digest")
	rcv, err := w.c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(w.url("q")),
		MaxNumberOfMessages: 1, MessageAttributeNames: []string{"All"},
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
	scOK(t, err, "receive")
	require.Len(t, rcv.Messages, 1)
	m := rcv.Messages[0]
	require.Equal(t, "3858f62230ac3c915f300c664312c63f", aws.ToString(m.MD5OfBody))
	require.Equal(t, "adb59cd4678ea5a855436b949cd07ab6", aws.ToString(m.MD5OfMessageAttributes))
	require.Equal(t, trace, m.Attributes["AWSTraceHeader"], "the system attribute comes back with All (1.4.2)")
}

// scS53: receive parameter validation. MaxNumberOfMessages 11 → InvalidParameterValue; WaitTimeSeconds −1
// or 21 → InvalidParameterValue (1.5.1, 1.5.4); nothing is received.
func scS53(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "q", scAttrs{})
	scSend(t, d, "q", "", "m")
	for what, o := range map[string]scRecv{
		"MaxNumberOfMessages 11": {Max: 11},
		"WaitTimeSeconds -1":     {Wait: scSec(-1)},
		"WaitTimeSeconds 21":     {Wait: scSec(21)},
	} {
		_, err := d.receive(t.Context(), "q", o)
		scWantCode(t, err, "InvalidParameterValue", "%s", what)
	}
	scRequireCounts(t, d, "q", scCounts{Visible: 1}, "nothing received")
}

// scS53w: MaxNumberOfMessages 0 → InvalidParameterValue (1.5.4).
func scS53w(t *testing.T, d scDriver, _ scTime) {
	w := d.(*scWire)
	scNewQ(t, d, "q", scAttrs{})
	scSend(t, d, "q", "", "m")
	_, err := w.c.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(w.url("q"))},
		scExplicitZero("MaxNumberOfMessages"))
	scWantCode(t, scWireErr(err), "InvalidParameterValue", "MaxNumberOfMessages 0")
	scRequireCounts(t, d, "q", scCounts{Visible: 1}, "nothing received")
}

// scS54: a long poll (WaitTimeSeconds 20, MaxNumberOfMessages 10) returns as soon as a message is sent at
// t = 2, with that one message (1.5.2).
func scS54(t *testing.T, d scDriver, tm scTime) {
	scNewQ(t, d, "q", scAttrs{})
	poll := scPoll(t, d, "q", scRecv{Max: 10, Wait: scSec(20)})
	tm.waitTimers(1)
	tm.advance(2 * time.Second)
	scPending(t, poll, "nothing sent yet")
	scSend(t, d, "q", "", "m")
	p := <-poll
	scOK(t, p.err, "long poll")
	require.Equal(t, []string{"m"}, scBodies(p.gs))
	require.Equal(t, scStart.Add(2*time.Second), tm.now())
}

// scS55: SequenceNumber. FIFO sends to one group give strictly increasing numeric strings, received as sent;
// a standard send has none (1.4.5).
func scS55(t *testing.T, d scDriver, _ scTime) {
	scNewQ(t, d, "q.fifo", scFIFO(30))
	var seqs []string
	prev := new(big.Int)
	for i := range 3 {
		s := scSend(t, d, "q.fifo", "g", fmt.Sprintf("m%d", i))
		n, ok := new(big.Int).SetString(s.Seq, 10)
		require.True(t, ok, "SequenceNumber %q is a decimal number", s.Seq)
		require.Equal(t, 1, n.Cmp(prev), "SequenceNumber %s after %s", n, prev)
		prev = n
		seqs = append(seqs, s.Seq)
	}
	var got []string
	for _, g := range scRecvN(t, d, "q.fifo", 10) {
		got = append(got, g.Seq)
	}
	require.Equal(t, seqs, got)
	scNewQ(t, d, "q", scAttrs{})
	require.Empty(t, scSend(t, d, "q", "", "m").Seq)
	require.Empty(t, scOnly(t, scRecvN(t, d, "q", 1)).Seq)
}

// scS56: FIFO approximate counts. 6 messages, 3 groups × 2; receive 1 from one group and 1 from another →
// Visible 4, NotVisible 2; after the VT → 6/0 (10.2).
func scS56(t *testing.T, d scDriver, tm scTime) {
	scNewQ(t, d, "q.fifo", scFIFO(30))
	for _, g := range []string{"g1", "g2", "g3"} {
		scSend(t, d, "q.fifo", g, g+"-m1")
		scSend(t, d, "q.fifo", g, g+"-m2")
	}
	a := scOnly(t, scRecvN(t, d, "q.fifo", 1))
	b := scOnly(t, scRecvN(t, d, "q.fifo", 1))
	require.NotEqual(t, a.Group, b.Group)
	scRequireCounts(t, d, "q.fifo", scCounts{Visible: 4, InFlight: 2}, "two in flight")
	tm.advance(30 * time.Second)
	scRequireCounts(t, d, "q.fifo", scCounts{Visible: 6}, "after the VT")
}

// scS57: CreateQueue with the same name and attributes → the same URL; with a different DelaySeconds →
// QueueAlreadyExists; recreated within 60 s of its deletion → QueueDeletedRecently, and after 60 s it can be
// created again (7.3.2). An unknown queue is AWS.SimpleQueueService.NonExistentQueue (7.3.4).
func scS57(t *testing.T, d scDriver, tm scTime) {
	w := d.(*scWire)
	ctx := t.Context()
	u1, err := w.createRaw(ctx, "q", map[string]string{"DelaySeconds": "5"})
	scOK(t, err, "create")
	u2, err := w.createRaw(ctx, "q", map[string]string{"DelaySeconds": "5"})
	scOK(t, err, "create again, same attributes")
	require.Equal(t, u1, u2)
	_, err = w.createRaw(ctx, "q", map[string]string{"DelaySeconds": "6"})
	scWantCode(t, scWireErr(err), "QueueAlreadyExists", "create again, another DelaySeconds")
	_, err = w.c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(u1)})
	scOK(t, err, "delete")
	tm.advance(59 * time.Second)
	_, err = w.createRaw(ctx, "q", map[string]string{"DelaySeconds": "5"})
	scWantCode(t, scWireErr(err), "AWS.SimpleQueueService.QueueDeletedRecently", "recreate 59s after the delete")
	tm.advance(time.Second)
	_, err = w.createRaw(ctx, "q", map[string]string{"DelaySeconds": "5"})
	scOK(t, err, "recreate 60s after the delete")
	_, err = w.c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("nowhere")})
	scWantCode(t, scWireErr(err), "AWS.SimpleQueueService.NonExistentQueue", "GetQueueUrl of an unknown queue")
	_, err = d.send(ctx, "nowhere", scMsg{Body: "m"})
	scWantCode(t, err, "AWS.SimpleQueueService.NonExistentQueue", "send to an unknown queue")
}

// ---- the Go driver ----

// scGo drives fifoq queues directly.
type scGo struct {
	clk fifoq.Clock

	mu     sync.Mutex // guards the fields below
	queues map[string]*fifoq.Queue
	tasks  map[string]*fifoq.MoveTask
}

func scNewGo(clk fifoq.Clock) *scGo {
	return &scGo{clk: clk, queues: map[string]*fifoq.Queue{}, tasks: map[string]*fifoq.MoveTask{}}
}

// queue returns the queue named name.
func (g *scGo) queue(name string) (*fifoq.Queue, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	q, ok := g.queues[name]
	if !ok {
		return nil, fmt.Errorf("go driver: no queue %q", name)
	}
	return q, nil
}

// scGoErr turns a fifoq rejection into an *scErr; other errors stay as they are.
func scGoErr(err error) error {
	if err == nil {
		return nil
	}
	if code := fifoq.ErrorCode(err); code != "" {
		return &scErr{Code: code, Msg: err.Error()}
	}
	return err
}

// scGoDuration is a neutral optional duration as the Go API takes it: nil is 0 (the queue's setting) and
// an explicit 0 is fifoq.ExplicitZero.
func scGoDuration(d *time.Duration) time.Duration {
	switch {
	case d == nil:
		return 0
	case *d == 0:
		return fifoq.ExplicitZero
	}
	return *d
}

// scGoPermission is the RedrivePermission named p.
func scGoPermission(p string) (fifoq.RedrivePermission, error) {
	for _, perm := range []fifoq.RedrivePermission{fifoq.RedriveAllowAll, fifoq.RedriveDenyAll, fifoq.RedriveByQueue} {
		if perm.String() == p {
			return perm, nil
		}
	}
	return 0, fmt.Errorf("go driver: no redrive permission %q", p)
}

// scGoScope is the DeduplicationScope named s.
func scGoScope(s string) (fifoq.DeduplicationScope, error) {
	for _, sc := range []fifoq.DeduplicationScope{fifoq.DeduplicationScopeQueue, fifoq.DeduplicationScopeMessageGroup} {
		if sc.String() == s {
			return sc, nil
		}
	}
	return 0, fmt.Errorf("go driver: no deduplication scope %q", s)
}

func (g *scGo) createQueue(_ context.Context, name string, a scAttrs) error {
	opts := []fifoq.Option{fifoq.WithClock(g.clk)}
	if a.VT != nil {
		opts = append(opts, fifoq.WithVisibilityTimeout(*a.VT))
	}
	if a.Delay != nil {
		opts = append(opts, fifoq.WithDelay(*a.Delay))
	}
	if a.Retention != nil {
		opts = append(opts, fifoq.WithRetention(*a.Retention))
	}
	if a.Wait != nil {
		opts = append(opts, fifoq.WithReceiveWaitTime(*a.Wait))
	}
	if a.MaxSize != 0 {
		opts = append(opts, fifoq.WithMaxMessageSize(a.MaxSize))
	}
	if a.CBD != nil {
		if !*a.CBD {
			return errors.New("go driver: ContentBasedDeduplication=false cannot be given")
		}
		opts = append(opts, fifoq.WithContentBasedDeduplication())
	}
	if a.Scope != "" {
		s, err := scGoScope(a.Scope)
		if err != nil {
			return err
		}
		opts = append(opts, fifoq.WithDeduplicationScope(s))
	}
	if a.DLQ != "" {
		dlq, err := g.queue(a.DLQ)
		if err != nil {
			return err
		}
		opts = append(opts, fifoq.WithDeadLetterQueue(dlq, a.MaxReceive))
	}
	if a.Allow != nil {
		p, err := scGoPermission(a.Allow.Permission)
		if err != nil {
			return err
		}
		opts = append(opts, fifoq.WithRedriveAllowPolicy(fifoq.RedriveAllowPolicy{Permission: p, Sources: a.Allow.Sources}))
	}
	q, err := fifoq.New(name, opts...)
	if err != nil {
		return scGoErr(err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.queues[name] = q
	return nil
}

func (g *scGo) setAttributes(_ context.Context, name string, a scAttrs) error {
	q, err := g.queue(name)
	if err != nil {
		return err
	}
	at := q.Attributes()
	if a.VT != nil {
		at.VisibilityTimeout = *a.VT
	}
	if a.Delay != nil {
		at.Delay = *a.Delay
	}
	if a.Retention != nil {
		at.Retention = *a.Retention
	}
	if a.Wait != nil {
		at.ReceiveWaitTime = *a.Wait
	}
	if a.MaxSize != 0 {
		at.MaxMessageSize = a.MaxSize
	}
	if a.CBD != nil {
		at.ContentBasedDeduplication = *a.CBD
	}
	if a.Scope != "" {
		if at.DeduplicationScope, err = scGoScope(a.Scope); err != nil {
			return err
		}
	}
	if a.DLQ != "" {
		if at.DeadLetterQueue, err = g.queue(a.DLQ); err != nil {
			return err
		}
		at.MaxReceiveCount = a.MaxReceive
	}
	if a.Allow != nil {
		p, err := scGoPermission(a.Allow.Permission)
		if err != nil {
			return err
		}
		at.RedriveAllowPolicy = fifoq.RedriveAllowPolicy{Permission: p, Sources: a.Allow.Sources}
	}
	return scGoErr(q.SetAttributes(at))
}

// scGoMessage is m as the Go API takes it.
func scGoMessage(m scMsg) fifoq.Message {
	delay := time.Duration(0)
	if m.Delay != nil {
		delay = scGoDuration(m.Delay)
	}
	return fifoq.Message{Body: m.Body, GroupID: m.Group, DeduplicationID: m.Dedup, Delay: delay, Attributes: m.Attrs}
}

func (g *scGo) send(ctx context.Context, name string, m scMsg) (scSent, error) {
	q, err := g.queue(name)
	if err != nil {
		return scSent{}, err
	}
	r, err := q.Send(ctx, scGoMessage(m))
	if err != nil {
		return scSent{}, scGoErr(err)
	}
	return scSent{ID: r.MessageID, Seq: r.SequenceNumber}, nil
}

func (g *scGo) sendBatch(ctx context.Context, name string, ms []scMsg) ([]scEntry, error) {
	q, err := g.queue(name)
	if err != nil {
		return nil, err
	}
	in := make([]fifoq.Message, len(ms))
	for i, m := range ms {
		in[i] = scGoMessage(m)
	}
	res, err := q.SendBatch(ctx, in)
	var be *fifoq.BatchError
	if err != nil && !errors.As(err, &be) {
		return nil, scGoErr(err)
	}
	out := make([]scEntry, len(res))
	for i, r := range res {
		out[i].scSent = scSent{ID: r.MessageID, Seq: r.SequenceNumber}
	}
	if be != nil {
		for _, e := range be.Entries {
			out[e.Index] = scEntry{Code: fifoq.ErrorCode(e.Err)}
		}
	}
	return out, nil
}

func (g *scGo) receive(ctx context.Context, name string, o scRecv) ([]scGot, error) {
	q, err := g.queue(name)
	if err != nil {
		return nil, err
	}
	ds, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: o.Max, WaitTime: scGoDuration(o.Wait),
		VisibilityTimeout: scGoDuration(o.VT), AttemptID: o.AttemptID})
	if err != nil {
		return nil, scGoErr(err)
	}
	out := make([]scGot, len(ds))
	for i, d := range ds {
		out[i] = scGot{ID: d.MessageID, Body: d.Body, Group: d.GroupID, Dedup: d.DeduplicationID,
			Seq: d.SequenceNumber, Handle: d.ReceiptHandle, Count: d.ReceiveCount, DLSource: d.DeadLetterSource}
		if len(d.Attributes) > 0 {
			out[i].Attrs = d.Attributes
		}
	}
	return out, nil
}

func (g *scGo) delete(ctx context.Context, name, handle string) error {
	q, err := g.queue(name)
	if err != nil {
		return err
	}
	return scGoErr(q.Delete(ctx, handle))
}

func (g *scGo) deleteBatch(ctx context.Context, name string, handles []string) ([]string, error) {
	q, err := g.queue(name)
	if err != nil {
		return nil, err
	}
	err = q.DeleteBatch(ctx, handles)
	var be *fifoq.BatchError
	if err != nil && !errors.As(err, &be) {
		return nil, scGoErr(err)
	}
	codes := make([]string, len(handles))
	if be != nil {
		for _, e := range be.Entries {
			codes[e.Index] = fifoq.ErrorCode(e.Err)
		}
	}
	return codes, nil
}

func (g *scGo) changeVisibility(ctx context.Context, name, handle string, timeout time.Duration) error {
	q, err := g.queue(name)
	if err != nil {
		return err
	}
	return scGoErr(q.ChangeVisibility(ctx, handle, timeout))
}

func (g *scGo) purge(ctx context.Context, name string) error {
	q, err := g.queue(name)
	if err != nil {
		return err
	}
	return scGoErr(q.Purge(ctx))
}

func (g *scGo) counts(_ context.Context, name string) (scCounts, error) {
	q, err := g.queue(name)
	if err != nil {
		return scCounts{}, err
	}
	s := q.Stats()
	return scCounts{Visible: s.Visible, InFlight: s.InFlight, Delayed: s.Delayed}, nil
}

func (g *scGo) startMoveTask(ctx context.Context, src, dest string, rate int) (string, error) {
	q, err := g.queue(src)
	if err != nil {
		return "", err
	}
	var dq *fifoq.Queue
	if dest != "" {
		if dq, err = g.queue(dest); err != nil {
			return "", err
		}
	}
	tk, err := q.StartMoveTask(ctx, dq, rate)
	if err != nil {
		return "", scGoErr(err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	h := fmt.Sprintf("task-%d", len(g.tasks)+1)
	g.tasks[h] = tk
	return h, nil
}

func (g *scGo) cancelMoveTask(_ context.Context, handle string) error {
	g.mu.Lock()
	tk, ok := g.tasks[handle]
	g.mu.Unlock()
	if !ok {
		return fmt.Errorf("go driver: no task %q", handle)
	}
	return scGoErr(tk.Cancel())
}

func (g *scGo) listMoveTasks(_ context.Context, src string) ([]scTask, error) {
	q, err := g.queue(src)
	if err != nil {
		return nil, err
	}
	var out []scTask
	for _, s := range q.MoveTasks() {
		out = append(out, scTask{Status: s.State.String(), Moved: s.Moved, ToMove: s.ToMove, Dest: s.Destination})
	}
	return out, nil
}

// ---- the wire driver ----

// scWire drives a sqsapi.Server through aws-sdk-go-v2, in process.
type scWire struct {
	c *sqs.Client

	mu   sync.Mutex // guards urls
	urls map[string]string
}

func scNewWire(clk fifoq.Clock) *scWire {
	srv := sqsapi.NewServer(sqsapi.WithRegion(scRegion), sqsapi.WithAccountID(scAccount), sqsapi.WithClock(clk))
	c := sqs.New(sqs.Options{
		Region:       scRegion,
		BaseEndpoint: aws.String("http://fifoq.test"),
		HTTPClient:   srv.HTTPClient(),
		Credentials:  aws.AnonymousCredentials{},
		Retryer:      aws.NopRetryer{}, // a retry would hide what the server answered first
	})
	return &scWire{c: c, urls: map[string]string{}}
}

// url is the URL CreateQueue returned for name, or, for a queue never created, the URL it would have.
func (w *scWire) url(name string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if u, ok := w.urls[name]; ok {
		return u
	}
	return "http://fifoq.test/" + scAccount + "/" + name
}

// arn is the ARN of the queue named name.
func (w *scWire) arn(name string) string { return scARNPrefix + name }

// scWireErr turns an SQS error of the SDK into an *scErr; other errors stay as they are.
func scWireErr(err error) error {
	if err == nil {
		return nil
	}
	var api interface{ ErrorCode() string }
	if !errors.As(err, &api) {
		return err
	}
	e := &scErr{Code: api.ErrorCode(), Msg: err.Error()}
	var status interface{ HTTPStatusCode() int }
	if errors.As(err, &status) {
		e.Status = status.HTTPStatusCode()
	}
	return e
}

// scSeconds is d in whole seconds, as the wire takes it.
func scSeconds(d time.Duration) (int32, error) {
	if d%time.Second != 0 {
		return 0, fmt.Errorf("wire driver: %v is not a whole number of seconds", d)
	}
	return int32(d / time.Second), nil
}

// scExplicitZero makes the request carry the given top-level members with the value 0, which
// aws-sdk-go-v2 leaves out of the JSON body when they are 0.
func scExplicitZero(members ...string) func(*sqs.Options) {
	return func(o *sqs.Options) {
		if len(members) == 0 {
			return
		}
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
			return st.Build.Add(middleware.BuildMiddlewareFunc("scExplicitZero", func(ctx context.Context,
				in middleware.BuildInput, next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
				req, ok := in.Request.(*smithyhttp.Request)
				if !ok {
					return middleware.BuildOutput{}, middleware.Metadata{}, fmt.Errorf("scExplicitZero: request is %T", in.Request)
				}
				body, err := io.ReadAll(req.GetStream())
				if err != nil {
					return middleware.BuildOutput{}, middleware.Metadata{}, err
				}
				fields := map[string]json.RawMessage{}
				if err := json.Unmarshal(body, &fields); err != nil {
					return middleware.BuildOutput{}, middleware.Metadata{}, fmt.Errorf("scExplicitZero: %w", err)
				}
				for _, m := range members {
					fields[m] = json.RawMessage("0")
				}
				if body, err = json.Marshal(fields); err != nil {
					return middleware.BuildOutput{}, middleware.Metadata{}, err
				}
				if in.Request, err = req.SetStream(bytes.NewReader(body)); err != nil {
					return middleware.BuildOutput{}, middleware.Metadata{}, err
				}
				return next.HandleBuild(ctx, in)
			}), middleware.Before)
		})
	}
}

// attributes are a as SQS queue attributes. On create, a FIFO name gets FifoQueue=true.
func (w *scWire) attributes(name string, a scAttrs, create bool) (map[string]string, error) {
	m := map[string]string{}
	for attr, d := range map[string]*time.Duration{"VisibilityTimeout": a.VT, "DelaySeconds": a.Delay,
		"MessageRetentionPeriod": a.Retention, "ReceiveMessageWaitTimeSeconds": a.Wait} {
		if d == nil {
			continue
		}
		s, err := scSeconds(*d)
		if err != nil {
			return nil, err
		}
		m[attr] = strconv.Itoa(int(s))
	}
	if a.MaxSize != 0 {
		m["MaximumMessageSize"] = strconv.Itoa(a.MaxSize)
	}
	if a.CBD != nil {
		m["ContentBasedDeduplication"] = strconv.FormatBool(*a.CBD)
	}
	if a.Scope != "" {
		m["DeduplicationScope"] = a.Scope
	}
	if create && strings.HasSuffix(name, ".fifo") {
		m["FifoQueue"] = "true"
	}
	if a.DLQ != "" {
		b, err := json.Marshal(map[string]any{"deadLetterTargetArn": w.arn(a.DLQ), "maxReceiveCount": a.MaxReceive})
		if err != nil {
			return nil, err
		}
		m["RedrivePolicy"] = string(b)
	}
	if a.Allow != nil {
		p := map[string]any{"redrivePermission": a.Allow.Permission}
		if a.Allow.Sources != nil {
			var arns []string
			for _, s := range a.Allow.Sources {
				arns = append(arns, w.arn(s))
			}
			p["sourceQueueArns"] = arns
		}
		b, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		m["RedriveAllowPolicy"] = string(b)
	}
	return m, nil
}

// createRaw calls CreateQueue with attrs as they are, and records the URL it returns.
func (w *scWire) createRaw(ctx context.Context, name string, attrs map[string]string) (string, error) {
	out, err := w.c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		return "", err
	}
	u := aws.ToString(out.QueueUrl)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.urls[name] = u
	return u, nil
}

func (w *scWire) createQueue(ctx context.Context, name string, a scAttrs) error {
	attrs, err := w.attributes(name, a, true)
	if err != nil {
		return err
	}
	_, err = w.createRaw(ctx, name, attrs)
	return scWireErr(err)
}

func (w *scWire) setAttributes(ctx context.Context, name string, a scAttrs) error {
	attrs, err := w.attributes(name, a, false)
	if err != nil {
		return err
	}
	_, err = w.c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(w.url(name)), Attributes: attrs})
	return scWireErr(err)
}

// scWireAttrs are message attributes as the SDK takes them: a Binary type carries BinaryValue, the others
// StringValue, even empty.
func scWireAttrs(attrs map[string]fifoq.Attribute) map[string]types.MessageAttributeValue {
	if attrs == nil {
		return nil
	}
	out := make(map[string]types.MessageAttributeValue, len(attrs))
	for k, a := range attrs {
		v := types.MessageAttributeValue{DataType: aws.String(a.DataType)}
		if strings.HasPrefix(a.DataType, "Binary") {
			v.BinaryValue = a.BinaryValue
		} else {
			v.StringValue = aws.String(a.StringValue)
		}
		out[k] = v
	}
	return out
}

// scOptional is s, or nil when it is empty.
func scOptional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (w *scWire) send(ctx context.Context, name string, m scMsg) (scSent, error) {
	in := &sqs.SendMessageInput{QueueUrl: aws.String(w.url(name)), MessageBody: aws.String(m.Body),
		MessageGroupId: scOptional(m.Group), MessageDeduplicationId: scOptional(m.Dedup),
		MessageAttributes: scWireAttrs(m.Attrs)}
	var zero []string
	if m.Delay != nil {
		s, err := scSeconds(*m.Delay)
		if err != nil {
			return scSent{}, err
		}
		in.DelaySeconds = s
		if s == 0 {
			zero = append(zero, "DelaySeconds")
		}
	}
	out, err := w.c.SendMessage(ctx, in, scExplicitZero(zero...))
	if err != nil {
		return scSent{}, scWireErr(err)
	}
	return scSent{ID: aws.ToString(out.MessageId), Seq: aws.ToString(out.SequenceNumber)}, nil
}

// sendBatchIDs is SendMessageBatch with the given entry ids.
func (w *scWire) sendBatchIDs(ctx context.Context, name string, ids []string, ms []scMsg) ([]scEntry, error) {
	in := &sqs.SendMessageBatchInput{QueueUrl: aws.String(w.url(name))}
	for i, m := range ms {
		e := types.SendMessageBatchRequestEntry{Id: aws.String(ids[i]), MessageBody: aws.String(m.Body),
			MessageGroupId: scOptional(m.Group), MessageDeduplicationId: scOptional(m.Dedup),
			MessageAttributes: scWireAttrs(m.Attrs)}
		if m.Delay != nil {
			s, err := scSeconds(*m.Delay)
			if err != nil || s == 0 {
				return nil, fmt.Errorf("wire driver: batch entry delay %v is not supported", *m.Delay)
			}
			e.DelaySeconds = s
		}
		in.Entries = append(in.Entries, e)
	}
	out, err := w.c.SendMessageBatch(ctx, in)
	if err != nil {
		return nil, scWireErr(err)
	}
	res := make([]scEntry, len(ms))
	at := map[string]int{}
	for i, id := range ids {
		at[id] = i
		res[i].Code = "(entry missing from the response)"
	}
	for _, s := range out.Successful {
		res[at[aws.ToString(s.Id)]] = scEntry{scSent: scSent{ID: aws.ToString(s.MessageId), Seq: aws.ToString(s.SequenceNumber)}}
	}
	for _, f := range out.Failed {
		res[at[aws.ToString(f.Id)]] = scEntry{Code: aws.ToString(f.Code)}
	}
	return res, nil
}

func (w *scWire) sendBatch(ctx context.Context, name string, ms []scMsg) ([]scEntry, error) {
	ids := make([]string, len(ms))
	for i := range ids {
		ids[i] = fmt.Sprintf("e%d", i)
	}
	return w.sendBatchIDs(ctx, name, ids, ms)
}

// scARNName is the queue name of a queue ARN of the server; any other value stays as it is, so that a
// comparison shows it.
func scARNName(arn string) string {
	if name, ok := strings.CutPrefix(arn, scARNPrefix); ok {
		return name
	}
	return arn
}

func (w *scWire) receive(ctx context.Context, name string, o scRecv) ([]scGot, error) {
	in := &sqs.ReceiveMessageInput{QueueUrl: aws.String(w.url(name)), MaxNumberOfMessages: int32(o.Max),
		MessageAttributeNames:       []string{"All"},
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		ReceiveRequestAttemptId:     scOptional(o.AttemptID)}
	var zero []string
	for member, p := range map[string]struct {
		d   *time.Duration
		dst *int32
	}{"WaitTimeSeconds": {o.Wait, &in.WaitTimeSeconds}, "VisibilityTimeout": {o.VT, &in.VisibilityTimeout}} {
		if p.d == nil {
			continue
		}
		s, err := scSeconds(*p.d)
		if err != nil {
			return nil, err
		}
		*p.dst = s
		if s == 0 {
			zero = append(zero, member)
		}
	}
	slices.Sort(zero)
	out, err := w.c.ReceiveMessage(ctx, in, scExplicitZero(zero...))
	if err != nil {
		return nil, scWireErr(err)
	}
	gs := make([]scGot, len(out.Messages))
	for i, m := range out.Messages {
		sa := m.Attributes
		count, err := strconv.Atoi(sa["ApproximateReceiveCount"])
		if err != nil {
			return nil, fmt.Errorf("wire driver: ApproximateReceiveCount %q: %w", sa["ApproximateReceiveCount"], err)
		}
		gs[i] = scGot{ID: aws.ToString(m.MessageId), Body: aws.ToString(m.Body), Group: sa["MessageGroupId"],
			Dedup: sa["MessageDeduplicationId"], Seq: sa["SequenceNumber"], Handle: aws.ToString(m.ReceiptHandle),
			Count: count, DLSource: scARNName(sa["DeadLetterQueueSourceArn"])}
		if len(m.MessageAttributes) > 0 {
			gs[i].Attrs = map[string]fifoq.Attribute{}
			for k, v := range m.MessageAttributes {
				gs[i].Attrs[k] = fifoq.Attribute{DataType: aws.ToString(v.DataType), StringValue: aws.ToString(v.StringValue),
					BinaryValue: v.BinaryValue}
			}
		}
	}
	return gs, nil
}

func (w *scWire) delete(ctx context.Context, name, handle string) error {
	_, err := w.c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(w.url(name)), ReceiptHandle: aws.String(handle)})
	return scWireErr(err)
}

func (w *scWire) deleteBatch(ctx context.Context, name string, handles []string) ([]string, error) {
	in := &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(w.url(name))}
	for i, h := range handles {
		in.Entries = append(in.Entries, types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(h)})
	}
	out, err := w.c.DeleteMessageBatch(ctx, in)
	if err != nil {
		return nil, scWireErr(err)
	}
	codes := make([]string, len(handles))
	for i := range codes {
		codes[i] = "(entry missing from the response)"
	}
	for _, s := range out.Successful {
		i, _ := strconv.Atoi(aws.ToString(s.Id))
		codes[i] = ""
	}
	for _, f := range out.Failed {
		i, _ := strconv.Atoi(aws.ToString(f.Id))
		codes[i] = aws.ToString(f.Code)
	}
	return codes, nil
}

func (w *scWire) changeVisibility(ctx context.Context, name, handle string, timeout time.Duration) error {
	s, err := scSeconds(timeout)
	if err != nil {
		return err
	}
	_, err = w.c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(w.url(name)),
		ReceiptHandle: aws.String(handle), VisibilityTimeout: s})
	return scWireErr(err)
}

func (w *scWire) purge(ctx context.Context, name string) error {
	_, err := w.c.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(w.url(name))})
	return scWireErr(err)
}

func (w *scWire) counts(ctx context.Context, name string) (scCounts, error) {
	out, err := w.c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(w.url(name)),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages,
			types.QueueAttributeNameApproximateNumberOfMessagesNotVisible, types.QueueAttributeNameApproximateNumberOfMessagesDelayed}})
	if err != nil {
		return scCounts{}, scWireErr(err)
	}
	var c scCounts
	for attr, dst := range map[string]*int{"ApproximateNumberOfMessages": &c.Visible,
		"ApproximateNumberOfMessagesNotVisible": &c.InFlight, "ApproximateNumberOfMessagesDelayed": &c.Delayed} {
		if *dst, err = strconv.Atoi(out.Attributes[attr]); err != nil {
			return scCounts{}, fmt.Errorf("wire driver: %s %q: %w", attr, out.Attributes[attr], err)
		}
	}
	return c, nil
}

func (w *scWire) startMoveTask(ctx context.Context, src, dest string, rate int) (string, error) {
	in := &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(w.arn(src))}
	if dest != "" {
		in.DestinationArn = aws.String(w.arn(dest))
	}
	if rate != 0 {
		in.MaxNumberOfMessagesPerSecond = aws.Int32(int32(rate))
	}
	out, err := w.c.StartMessageMoveTask(ctx, in)
	if err != nil {
		return "", scWireErr(err)
	}
	return aws.ToString(out.TaskHandle), nil
}

func (w *scWire) cancelMoveTask(ctx context.Context, handle string) error {
	_, err := w.c.CancelMessageMoveTask(ctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: aws.String(handle)})
	return scWireErr(err)
}

func (w *scWire) listMoveTasks(ctx context.Context, src string) ([]scTask, error) {
	out, err := w.c.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(w.arn(src)),
		MaxResults: aws.Int32(10)})
	if err != nil {
		return nil, scWireErr(err)
	}
	var ts []scTask
	for _, r := range out.Results {
		task := scTask{Status: aws.ToString(r.Status), Moved: int(r.ApproximateNumberOfMessagesMoved),
			ToMove: int(aws.ToInt64(r.ApproximateNumberOfMessagesToMove))}
		if r.DestinationArn != nil {
			task.Dest = scARNName(*r.DestinationArn)
		}
		ts = append(ts, task)
	}
	return ts, nil
}

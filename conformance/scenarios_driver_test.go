package conformance_test

// The spec §12 scenarios' driver interface, its types and clock, and TestScScenarios, which runs the table on
// every driver.

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fifoq/fifoq"
)

// The scenarios of spec §12 (shared/spec/sqs-semantics.md, 1 to 57), each written once against a small
// driver interface (scDriver) and run four times, with the same code and the same expectations: over the Go
// API (fifoq.New and the Queue methods, "go") and over the SQS wire API (aws-sdk-go-v2 against a
// sqsapi.Server, in process) with three servers: in memory (sqsapi.NewServer, "wire"), durable (sqsapi.Open
// on a fresh store of the in-memory engine of storage/storagetest, "durable"), and durable restarted before every
// request, by a close or a crash of the engine in turn ("restart"; scDurable says when it does not), so that
// every expectation holds across restarts too. Subtests are named driver/scenario: go/01_standard_basic,
// wire/01_standard_basic, durable/01_standard_basic, restart/01_standard_basic. Every top-level name of this
// file starts with "sc".
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
// message's Delay), the Go driver writes an explicit zero with the Go API's No... fields (NoWaitTime,
// NoVisibilityTimeout, NoDelay). aws-sdk-go-v2 omits every
// zero int32 member (DelaySeconds, VisibilityTimeout and WaitTimeSeconds of ReceiveMessage,
// MaxNumberOfMessages), so the wire driver adds an explicit 0 to the JSON body itself (scExplicitZero), as
// other SDKs send it.
//
// Covered on every driver: 1-32, 33 (the FIFO-only attributes fifoq has, given to a standard queue), 34-48,
// 49 (a source that is no dead-letter queue), 50, 51 (all but the entry ids), 52 (all but the digests), 53
// (all but MaxNumberOfMessages 0), 54-56.
//
// Wire only (the three servers), because the Go API cannot express them (their go/ subtests are skipped
// with the reason):
//   - 22w: a MessageGroupId of "" (in Go an empty GroupID is a missing one: that half of 22 runs on all four);
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
	wireOnly string // why the Go API cannot express it; "" runs on every driver
	run      func(t *testing.T, d scDriver, tm scTime)
}

// TestScScenarios runs every scenario on every driver.
func TestScScenarios(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"go", "wire", "durable", "restart"} {
		for _, sc := range scScenarios {
			t.Run(kind+"/"+sc.name, func(t *testing.T) {
				if kind == "go" && sc.wireOnly != "" {
					t.Skip("wire only: " + sc.wireOnly)
				}
				t.Parallel()
				synctest.Test(t, func(t *testing.T) {
					clk := fifoq.NewManualClock(scStart)
					var d scDriver
					switch kind {
					case "go":
						d = scNewGo(clk)
					case "wire":
						d = scNewWire(clk)
					default:
						d = scNewDurable(t, clk, kind == "restart")
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

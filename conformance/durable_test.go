package conformance_test

// Tests of a durable server (a catalogue kept in a store, catalog.Open, served by sqsapi, TestDr*): what survives a restart, clean or a crash. They run on
// the in-memory engine of storage/storagetest, whose disk outlives the engine and whose Crash loses what was not
// synced, and on durable.Open in a temporary directory. Time moves only on the manual clock.

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/durable"
	"github.com/fifoq/fifoq/sqsapi"
	"github.com/fifoq/fifoq/storage/storagetest"
)

// drEnv is a durable server and an SDK client for it, on a store that survives restarts: the disk of the
// in-memory engine, or a directory.
type drEnv struct {
	*sdEnv
	disk *storagetest.Disk // nil: a directory
	dir  string
	eng  *storagetest.Memory
	st   *fifoq.Store
}

// drMemory returns a durable server on the in-memory engine.
func drMemory(t *testing.T) *drEnv {
	t.Helper()
	d := &drEnv{sdEnv: &sdEnv{t: t, ctx: t.Context(), clk: fifoq.NewManualClock(sdStart)}, disk: storagetest.NewDisk()}
	d.open()
	return d
}

// drDir returns a durable server on durable.Open in a temporary directory.
func drDir(t *testing.T) *drEnv {
	t.Helper()
	d := &drEnv{sdEnv: &sdEnv{t: t, ctx: t.Context(), clk: fifoq.NewManualClock(sdStart)}, dir: t.TempDir()}
	d.open()
	t.Cleanup(func() { _ = d.st.Close() }) // before the directory is removed; a second Close does nothing
	return d
}

func (d *drEnv) openStore() *fifoq.Store {
	d.t.Helper()
	if d.disk == nil {
		st, err := durable.Open(d.dir)
		require.NoError(d.t, err, "durable.Open")
		return st
	}
	eng, err := d.disk.Open()
	require.NoError(d.t, err)
	st, err := fifoq.OpenStore(eng, "disk")
	require.NoError(d.t, err)
	d.eng = eng
	return st
}

// drDefaultNS is the default account and region of a server made with no WithAccountID or WithRegion.
var drDefaultNS = catalog.Namespace{Account: "000000000000", Region: "us-east-1"}

// drServe opens the catalogue kept in st with catOpts, ns its default namespace if st records none yet, and
// returns a server over it whose default account and region are ns, with opts. Close it with drClose.
func drServe(st *fifoq.Store, ns catalog.Namespace, catOpts []catalog.Option, opts ...sqsapi.Option) (*sqsapi.Server, error) {
	cat, err := catalog.Open(st, append([]catalog.Option{catalog.WithDefaultNamespace(ns)}, catOpts...)...)
	if err != nil {
		return nil, err
	}
	return sqsapi.NewServer(append([]sqsapi.Option{sqsapi.WithCatalog(cat), sqsapi.WithAccountID(ns.Account),
		sqsapi.WithRegion(ns.Region)}, opts...)...), nil
}

// drClose closes a server of drServe and then its catalogue, which stops its move tasks and waits for them:
// the store can be closed after it.
func drClose(srv *sqsapi.Server) error {
	return errors.Join(srv.Close(), srv.Catalog().Close())
}

// open opens the store and the server on it.
func (d *drEnv) open() {
	d.t.Helper()
	d.st = d.openStore()
	srv, err := drServe(d.st, drDefaultNS, []catalog.Option{catalog.WithClock(d.clk)})
	require.NoError(d.t, err, "catalog.Open")
	d.srv, d.c = srv, sdClient(srv, sdStatic("AKIDSDKTEST", "sdk-test-secret"))
}

// stop closes the server and its store, or crashes the in-memory engine under them.
func (d *drEnv) stop(crash bool) {
	d.t.Helper()
	if crash {
		require.NotNil(d.t, d.disk, "a crash needs the in-memory engine")
		d.eng.Crash()
		return
	}
	require.NoError(d.t, drClose(d.srv), "Server.Close, Catalog.Close")
	require.NoError(d.t, d.st.Close(), "Store.Close")
}

func (d *drEnv) restart(crash bool) {
	d.t.Helper()
	d.stop(crash)
	d.open()
}

// url returns the URL of a queue.
func (d *drEnv) url(name string) string {
	d.t.Helper()
	out, err := d.c.GetQueueUrl(d.ctx, &sqs.GetQueueUrlInput{QueueName: &name})
	require.NoError(d.t, err, "GetQueueUrl %s", name)
	return aws.ToString(out.QueueUrl)
}

// drView is what the SDK shows of the server's queues, messages aside.
type drView struct {
	Queues  []string
	Attrs   map[string]map[string]string // GetQueueAttributes All
	Tags    map[string]map[string]string
	Sources map[string][]string // ListDeadLetterSourceQueues
}

func (d *drEnv) view() drView {
	d.t.Helper()
	list, err := d.c.ListQueues(d.ctx, &sqs.ListQueuesInput{})
	require.NoError(d.t, err, "ListQueues")
	v := drView{Queues: list.QueueUrls, Attrs: map[string]map[string]string{}, Tags: map[string]map[string]string{},
		Sources: map[string][]string{}}
	for _, url := range list.QueueUrls {
		name := url[strings.LastIndexByte(url, '/')+1:]
		v.Attrs[name] = d.attrs(url, types.QueueAttributeNameAll)
		tags, err := d.c.ListQueueTags(d.ctx, &sqs.ListQueueTagsInput{QueueUrl: &url})
		require.NoError(d.t, err, "ListQueueTags %s", name)
		v.Tags[name] = tags.Tags
		src, err := d.c.ListDeadLetterSourceQueues(d.ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: &url})
		require.NoError(d.t, err, "ListDeadLetterSourceQueues %s", name)
		v.Sources[name] = src.QueueUrls
	}
	return v
}

// messages returns every message of every queue, as fifoq keeps them: state, receive count, times.
func (d *drEnv) messages() map[string][]fifoq.Snapshot {
	d.t.Helper()
	out := map[string][]fifoq.Snapshot{}
	for name := range d.view().Attrs {
		q, ok := d.srv.Queue(name)
		require.True(d.t, ok, "Server.Queue %s", name)
		for m := range q.Messages() {
			for _, t := range []*time.Time{&m.SentAt, &m.FirstReceivedAt, &m.VisibleAt} {
				if !t.IsZero() {
					*t = time.Unix(0, t.UnixNano()).UTC()
				}
			}
			out[name] = append(out[name], m)
		}
	}
	return out
}

// receiveAll is a short poll for up to 10 messages with every attribute.
func (d *drEnv) receiveAll(url string) []types.Message {
	d.t.Helper()
	return d.receive(url, &sqs.ReceiveMessageInput{MaxNumberOfMessages: 10, MessageAttributeNames: []string{"All"},
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
}

func (d *drEnv) createTagged(name string, attrs, tags map[string]string) string {
	d.t.Helper()
	out, err := d.c.CreateQueue(d.ctx, &sqs.CreateQueueInput{QueueName: &name, Attributes: attrs, Tags: tags})
	require.NoError(d.t, err, "CreateQueue %s", name)
	return aws.ToString(out.QueueUrl)
}

const drPolicy = `{"Version":"2012-10-17","Id":"orders-policy","Statement":[{"Sid":"s1","Effect":"Allow",` +
	`"Principal":"*","Action":"sqs:SendMessage","Resource":"*"}]}`

// drQueues creates the queues of the restart tests: a FIFO queue and a standard one, each with a
// dead-letter queue, and a queue with the attributes left, then changes some of them later.
func drQueues(d *drEnv) {
	d.t.Helper()
	d.create("orders-dlq.fifo", sdKV("FifoQueue", "true", "MessageRetentionPeriod", "1209600",
		"RedriveAllowPolicy", `{"redrivePermission":"byQueue","sourceQueueArns":["`+sdArn("orders.fifo")+`"]}`))
	d.createTagged("orders.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true",
		"DeduplicationScope", "messageGroup", "FifoThroughputLimit", "perMessageGroupId", "VisibilityTimeout", "60",
		"RedrivePolicy", `{"deadLetterTargetArn":"`+sdArn("orders-dlq.fifo")+`","maxReceiveCount":2}`,
		"Policy", drPolicy, "KmsMasterKeyId", "alias/aws/sqs", "KmsDataKeyReusePeriodSeconds", "600"),
		sdKV("team", "payments", "env", "test"))
	d.create("jobs-dlq", sdKV("RedriveAllowPolicy", `{"redrivePermission":"allowAll"}`))
	jobs := d.createTagged("jobs", sdKV("RedrivePolicy", `{"deadLetterTargetArn":"`+sdArn("jobs-dlq")+`","maxReceiveCount":"1"}`,
		"MaximumMessageSize", "2048", "MessageRetentionPeriod", "3600", "SqsManagedSseEnabled", "true"),
		sdKV("team", "batch", "old", "x"))
	d.create("idle", sdKV("ReceiveMessageWaitTimeSeconds", "20", "DelaySeconds", "5"))

	d.clk.Advance(10 * time.Second) // LastModifiedTimestamp after CreatedTimestamp
	require.NoError(d.t, d.setAttrs(jobs, sdKV("VisibilityTimeout", "45")))
	_, err := d.c.TagQueue(d.ctx, &sqs.TagQueueInput{QueueUrl: &jobs, Tags: sdKV("owner", "ops")})
	require.NoError(d.t, err, "TagQueue")
	_, err = d.c.UntagQueue(d.ctx, &sqs.UntagQueueInput{QueueUrl: &jobs, TagKeys: []string{"old"}})
	require.NoError(d.t, err, "UntagQueue")
	_, err = d.c.AddPermission(d.ctx, &sqs.AddPermissionInput{QueueUrl: &jobs, Label: aws.String("senders"),
		AWSAccountIds: []string{"111122223333"}, Actions: []string{"SendMessage"}})
	require.NoError(d.t, err, "AddPermission")
}

// TestDrRestart creates queues with every kind of attribute, policy and tag, sends messages (with message
// attributes and AWSTraceHeader) and receives some, restarts the server, and finds it all as it was: the
// queues, their attributes and tags, every message with its receive count and visibility, the
// deduplication of a FIFO queue, and the trace headers; the redrive policies then move messages to the
// dead-letter queues at their maxReceiveCount, and a second restart keeps the moves.
func TestDrRestart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		env   func(*testing.T) *drEnv
		crash bool
	}{
		{"memory/clean", drMemory, false},
		{"memory/crash", drMemory, true},
		{"pebble/clean", drDir, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := tc.env(t)
			drQueues(d)
			orders, jobs, idle := d.url("orders.fifo"), d.url("jobs"), d.url("idle")

			a := d.send(orders, "a", sdGroup("g1"), sdAttrs(sdAllTypes()), sdTrace(sdTraceHeader))
			b := d.send(orders, "b", sdGroup("g1"))
			d.send(orders, "c", sdGroup("g2"))
			x := d.send(jobs, "x", sdAttrs(sdAllTypes()), sdTrace(sdTraceHeader))
			d.send(jobs, "y")
			d.send(idle, "later")
			require.Equal(t, "a", aws.ToString(d.receiveOne(orders).Body))
			require.Equal(t, "x", aws.ToString(d.receiveOne(jobs).Body))

			before, msgs := d.view(), d.messages()
			require.Len(t, before.Queues, 5)
			require.Equal(t, "2/1/0", d.counts(orders), "orders: b and c visible, a in flight")
			require.Equal(t, "0/0/1", d.counts(idle), "idle: one delayed")

			d.restart(tc.crash)
			require.Equal(t, before, d.view(), "queues, attributes, tags and sources after the restart")
			require.Equal(t, msgs, d.messages(), "messages after the restart")

			// Deduplication ids came back: b again is b.
			again := d.send(orders, "b", sdGroup("g1"))
			require.Equal(t, aws.ToString(b.MessageId), aws.ToString(again.MessageId), "a duplicate of b after the restart")

			// a becomes visible again, with its second receive, its attributes and its trace header.
			d.clk.Advance(61 * time.Second)
			// g2 waited since its send: it comes before g1, back at 60s.
			got := d.receiveAll(orders)
			require.Equal(t, []string{"c", "a", "b"}, sdBodies(got))
			require.Equal(t, aws.ToString(a.MessageId), aws.ToString(got[1].MessageId))
			require.Equal(t, "2", got[1].Attributes["ApproximateReceiveCount"])
			require.Equal(t, sdTraceHeader, got[1].Attributes["AWSTraceHeader"])
			sdRequireAttrs(t, sdAllTypes(), got[1])
			require.Equal(t, "1", got[2].Attributes["ApproximateReceiveCount"])
			require.NotContains(t, got[2].Attributes, "AWSTraceHeader")

			// Past maxReceiveCount (2), a moves to the dead-letter queue with its MessageId and trace header;
			// x (maxReceiveCount 1) too.
			d.clk.Advance(61 * time.Second)
			require.Equal(t, []string{"b", "c"}, sdBodies(d.receiveAll(orders)), "a went to the dead-letter queue")
			require.Equal(t, []string{"y"}, sdBodies(d.receiveAll(jobs)), "x went to the dead-letter queue")
			for _, dlq := range []struct {
				name, source, body, id string
			}{{"orders-dlq.fifo", "orders.fifo", "a", aws.ToString(a.MessageId)}, {"jobs-dlq", "jobs", "x", aws.ToString(x.MessageId)}} {
				got := d.receiveAll(d.url(dlq.name))
				require.Equal(t, []string{dlq.body}, sdBodies(got), dlq.name)
				require.Equal(t, dlq.id, aws.ToString(got[0].MessageId), "%s: MessageId", dlq.name)
				require.Equal(t, sdArn(dlq.source), got[0].Attributes["DeadLetterQueueSourceArn"], dlq.name)
				require.Equal(t, sdTraceHeader, got[0].Attributes["AWSTraceHeader"], dlq.name)
				sdRequireAttrs(t, sdAllTypes(), got[0])
			}

			before, msgs = d.view(), d.messages()
			d.restart(tc.crash)
			require.Equal(t, before, d.view(), "after the second restart")
			require.Equal(t, msgs, d.messages(), "messages after the second restart")
			got = d.receive(d.url("orders-dlq.fifo"), &sqs.ReceiveMessageInput{
				MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAWSTraceHeader}})
			require.Empty(t, got, "a is in flight in the dead-letter queue")

			// A CreateQueue of a stored queue: the same attributes return it, different ones are refused.
			cat := d.srv.Catalog()
			_, err := cat.CreateQueue(d.ctx, drDefaultNS, "jobs", catalog.Definition{VisibilityTimeout: 45 * time.Second,
				MaxMessageSize: 2048}, catalog.FieldVisibilityTimeout|catalog.FieldMaxMessageSize)
			require.NoError(t, err, "CreateQueue with the stored attributes")
			_, err = cat.CreateQueue(d.ctx, drDefaultNS, "jobs", catalog.Definition{VisibilityTimeout: 30 * time.Second},
				catalog.FieldVisibilityTimeout)
			require.ErrorIs(t, err, catalog.ErrQueueExists, "CreateQueue with another VisibilityTimeout")
			require.Equal(t, sdQueueExists, fifoq.ErrorCode(err), "CreateQueue with another VisibilityTimeout: %v", err)
		})
	}
}

// TestDrDeleteQueue deletes a queue that holds messages and a dead-letter queue in use, restarts, and finds
// them gone with their messages, the 60-second rule still on, and the source's redrive policy pending;
// creating the dead-letter queue again binds the policy, which a restart keeps.
func TestDrDeleteQueue(t *testing.T) {
	t.Parallel()
	for _, crash := range []bool{false, true} {
		t.Run("crash="+strconv.FormatBool(crash), func(t *testing.T) {
			t.Parallel()
			d := drMemory(t)
			d.create("dlq", nil)
			src := d.create("src", sdKV("RedrivePolicy", `{"deadLetterTargetArn":"`+sdArn("dlq")+`","maxReceiveCount":1}`))
			victim := d.create("victim", nil)
			d.send(victim, "doomed")
			d.send(src, "m")
			policy := d.attr(src, types.QueueAttributeNameRedrivePolicy)

			for _, url := range []string{victim, d.url("dlq")} {
				_, err := d.c.DeleteQueue(d.ctx, &sqs.DeleteQueueInput{QueueUrl: &url})
				require.NoError(t, err, "DeleteQueue %s", url)
			}
			require.Equal(t, []string{"src"}, d.st.Queues(), "the store holds the queues left")

			d.clk.Advance(30 * time.Second)
			d.restart(crash)
			require.Equal(t, []string{"src"}, d.st.Queues(), "after the restart")
			list, err := d.c.ListQueues(d.ctx, &sqs.ListQueuesInput{})
			require.NoError(t, err)
			require.Equal(t, []string{src}, list.QueueUrls)
			require.Equal(t, policy, d.attr(src, types.QueueAttributeNameRedrivePolicy), "the pending policy")

			// 30 s after the deletion: the name is not free yet.
			_, err = d.c.CreateQueue(d.ctx, &sqs.CreateQueueInput{QueueName: aws.String("victim")})
			sdWantErr(t, err, sdDeletedRecently, "")

			// Pending: a message received past maxReceiveCount stays.
			require.Equal(t, "m", aws.ToString(d.receiveOne(src).Body))
			d.clk.Advance(31 * time.Second)
			require.Equal(t, "m", aws.ToString(d.receiveOne(src).Body), "no dead-letter queue to move m to")

			victim = d.create("victim", nil)
			require.Equal(t, "0/0/0", d.counts(victim), "a new queue, without the old one's messages")
			dlq := d.create("dlq", nil)
			d.restart(crash)
			src2, err := d.c.ListDeadLetterSourceQueues(d.ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: &dlq})
			require.NoError(t, err)
			require.Equal(t, []string{src}, src2.QueueUrls, "the policy bound to the new dead-letter queue")
			d.clk.Advance(31 * time.Second)
			require.Empty(t, d.receiveN(src, 10), "m moved")
			require.Equal(t, "m", aws.ToString(d.receiveOne(dlq).Body))
		})
	}
}

// TestDrRedriveEdges restarts with the redrive policies that a plain order of creation would not re-create:
// policies that form a cycle (a pending policy bound again when its dead-letter queue comes back, closing
// one, as SQS accepts; and a queue that is its own dead-letter queue), and a source whose dead-letter queue's
// RedriveAllowPolicy now refuses it. Each comes back as it was.
func TestDrRedriveEdges(t *testing.T) {
	t.Parallel()
	d := drMemory(t)
	redrive := func(dlq string) map[string]string {
		return sdKV("RedrivePolicy", `{"deadLetterTargetArn":"`+sdArn(dlq)+`","maxReceiveCount":3}`)
	}
	// a's policy names b; b is deleted, so a's is pending; b comes back with a policy naming a, and a's is
	// bound again: a and b are each other's dead-letter queue.
	d.create("b", nil)
	a := d.create("a", redrive("b"))
	_, err := d.c.DeleteQueue(d.ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(d.url("b"))})
	require.NoError(t, err)
	d.clk.Advance(time.Minute)
	b := d.create("b", redrive("a"))
	// self is its own dead-letter queue.
	self := d.create("self", nil)
	require.NoError(t, d.setAttrs(self, redrive("self")))
	// s uses t, whose RedriveAllowPolicy then refuses it.
	tq := d.create("t", nil)
	d.create("s", redrive("t"))
	require.NoError(t, d.setAttrs(tq, sdKV("RedriveAllowPolicy", `{"redrivePermission":"denyAll"}`)))

	before := d.view()
	require.Equal(t, []string{b}, before.Sources["a"], "b's policy is bound")
	require.Equal(t, []string{a}, before.Sources["b"], "a's policy is bound again, closing the cycle")
	require.Equal(t, []string{self}, before.Sources["self"])
	require.Equal(t, []string{d.url("s")}, before.Sources["t"], "s stays bound")
	d.restart(true)
	require.Equal(t, before, d.view())

	// m goes round the cycle: 3 receives in a, then 3 receives' worth in b, and back; and self keeps its
	// messages past maxReceiveCount.
	d.send(a, "m")
	d.send(self, "mine")
	for range 3 {
		require.Len(t, d.receiveN(a, 1), 1, "m in a")
		require.Len(t, d.receiveN(self, 1), 1, "mine in self")
		d.clk.Advance(31 * time.Second)
	}
	require.Empty(t, d.receiveN(a, 1), "m moved to b")
	require.Len(t, d.receiveN(self, 1), 1, "mine stays in self")
	require.Equal(t, "1", d.attrs(b, types.QueueAttributeNameApproximateNumberOfMessages)["ApproximateNumberOfMessages"], "m in b")
	require.Empty(t, d.receiveN(b, 1), "m, past b's limit of 3 too, moved back to a")
	require.Equal(t, "1", d.attrs(a, types.QueueAttributeNameApproximateNumberOfMessages)["ApproximateNumberOfMessages"], "m in a")
}

// TestDrConcurrentChanges changes one queue's attributes and tags from many goroutines at once, then
// crashes: the store holds the last change in memory, not an earlier one.
func TestDrConcurrentChanges(t *testing.T) {
	t.Parallel()
	d := drMemory(t)
	url := d.create("busy", nil)
	const writers, rounds = 8, 25
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for r := range rounds {
				v := strconv.Itoa(w*rounds + r)
				if err := d.setAttrs(url, sdKV("VisibilityTimeout", v, "Policy", `{"v":`+v+`}`)); err != nil {
					errs <- err
					return
				}
				if _, err := d.c.TagQueue(d.ctx, &sqs.TagQueueInput{QueueUrl: &url, Tags: sdKV("last", v, "w"+strconv.Itoa(w), v)}); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		})
	}
	wg.Wait()
	for range writers {
		require.NoError(t, <-errs)
	}
	before := d.view()
	d.restart(true)
	require.Equal(t, before, d.view())
}

// TestDrStoreFailure fails a write of the server's records: the action fails with ServiceUnavailable naming
// the cause, and so does every later change (fail-stop: the store fails as a whole), until the store is
// opened again, without the change that failed.
func TestDrStoreFailure(t *testing.T) {
	t.Parallel()
	d := drMemory(t)
	url := d.create("q", nil)
	d.eng.FailNextCommit(errors.New("disk full"))
	_, err := d.c.TagQueue(d.ctx, &sqs.TagQueueInput{QueueUrl: &url, Tags: sdKV("a", "1")})
	drWantUnavailable(t, err, "the TagQueue whose write failed")
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"TagQueue", func() error {
			_, err := d.c.TagQueue(d.ctx, &sqs.TagQueueInput{QueueUrl: &url, Tags: sdKV("b", "2")})
			return err
		}},
		{"SetQueueAttributes", func() error { return d.setAttrs(url, sdKV("DelaySeconds", "1")) }},
		{"CreateQueue", func() error {
			_, err := d.c.CreateQueue(d.ctx, &sqs.CreateQueueInput{QueueName: aws.String("other")})
			return err
		}},
		{"DeleteQueue", func() error {
			_, err := d.c.DeleteQueue(d.ctx, &sqs.DeleteQueueInput{QueueUrl: &url})
			return err
		}},
	} {
		drWantUnavailable(t, c.call(), c.name+" after the failure")
	}
	_, err = d.c.SendMessage(d.ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("refused")})
	drWantUnavailable(t, err, "a send after the failure: the store failed as a whole")

	d.restart(true)
	tags, err := d.c.ListQueueTags(d.ctx, &sqs.ListQueueTagsInput{QueueUrl: &url})
	require.NoError(t, err)
	require.Empty(t, tags.Tags, "the failed TagQueue left nothing")
	require.Equal(t, "0/0/0", d.counts(url))
	_, err = d.c.TagQueue(d.ctx, &sqs.TagQueueInput{QueueUrl: &url, Tags: sdKV("a", "1")})
	require.NoError(t, err, "a store opened again takes changes")
}

// drWantUnavailable checks that err is a ServiceUnavailable, a fault of the server's, naming its cause.
func drWantUnavailable(t *testing.T, err error, what string) {
	t.Helper()
	var ae smithy.APIError
	require.ErrorAs(t, err, &ae, "%s: want an API error, got %v", what, err)
	require.Equal(t, "ServiceUnavailable", ae.ErrorCode(), "%s: %v", what, err)
	require.Equal(t, smithy.FaultServer, ae.ErrorFault(), "%s: %v", what, err)
	require.Contains(t, ae.ErrorMessage(), "disk full", "%s: the cause", what)
	var re *awshttp.ResponseError
	require.ErrorAs(t, err, &re, "%s: want an HTTP response error", what)
	require.Equal(t, http.StatusServiceUnavailable, re.HTTPStatusCode(), what)
}

// TestDrTraceHeaders keeps a trace header as long as its message is stored: it is part of the message.
func TestDrTraceHeaders(t *testing.T) {
	t.Parallel()
	d := drMemory(t)
	url := d.create("q", sdKV("MessageRetentionPeriod", "1209600"))
	d.send(url, "m", sdTrace(sdTraceHeader))
	d.clk.Advance(13 * 24 * time.Hour)
	d.restart(true)
	require.Equal(t, sdTraceHeader, d.receiveAll(url)[0].Attributes["AWSTraceHeader"], "13 days later")
	d.clk.Advance(16 * 24 * time.Hour)
	d.restart(false)
	require.Equal(t, "0/0/0", d.counts(url), "the message, and its header, are gone 29 days later")
}

// TestDrOpenErrors: Open refuses a nil store, and a store whose queues are open already.
func TestDrOpenErrors(t *testing.T) {
	t.Parallel()
	_, err := catalog.Open(nil)
	require.Error(t, err)

	d := drMemory(t)
	d.create("q", nil)
	_, err = catalog.Open(d.st)
	require.ErrorIs(t, err, fifoq.ErrQueueOpen, "a second catalogue on the same store")
}

// TestDrMoveTaskClose: Close (the server's, then the catalogue's) cancels a running move task and waits for it.
func TestDrMoveTaskClose(t *testing.T) {
	t.Parallel()
	d := drMemory(t)
	dlq := d.create("dlq", nil)
	d.create("src", sdKV("RedrivePolicy", `{"deadLetterTargetArn":"`+sdArn("dlq")+`","maxReceiveCount":1}`))
	for i := range 3 {
		d.send(dlq, fmt.Sprint("m", i))
	}
	out, err := d.c.StartMessageMoveTask(d.ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(sdArn("dlq")),
		DestinationArn: aws.String(sdArn("src")), MaxNumberOfMessagesPerSecond: aws.Int32(1)})
	require.NoError(t, err)
	require.NotEmpty(t, aws.ToString(out.TaskHandle))
	done := make(chan error, 1)
	go func() { done <- drClose(d.srv) }()
	require.NoError(t, sdAwait(t, done, "Close"))
	tasks, err := d.c.ListMessageMoveTasks(d.ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(sdArn("dlq"))})
	require.NoError(t, err)
	require.Equal(t, "CANCELLED", aws.ToString(tasks.Results[0].Status))
}

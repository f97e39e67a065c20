package sqsadapter_test

import (
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/snsapi"
	"github.com/fifoq/fifoq/sqsadapter"
	"github.com/fifoq/fifoq/sqsadapter/sqsadaptertest"
	"github.com/fifoq/fifoq/sqsapi"
	"github.com/fifoq/fifoq/topic"
)

// One behaviour suite, three targets: the scenarios below are written once against fifoq's interfaces
// (fifoq.QueueClient), and run over a *fifoq.Queue in process, over sqsadapter against fifoq serve's SQS
// API, and over sqsadapter against moto's server, a third-party SQS implementation. Administration (making
// the queues) is each target's own, as it is a program's: in process with fifoq.New, over the wire with
// CreateQueue. Where a target is known to answer otherwise than AWS, the scenario says so, with the
// evidence, rather than being skipped silently.

// queueSpec is a queue a scenario needs.
type queueSpec struct {
	name         string
	contentDedup bool
	dlq          string // the name of its dead-letter queue, made before it; "" for none
	maxReceives  int
}

// topicSpec is a topic a scenario needs, with its subscriptions.
type topicSpec struct {
	name string
	subs []subSpec
}

// subSpec subscribes a queue the scenario made (by its queueSpec name) to a topic.
type subSpec struct {
	queue  string
	filter string // a filter policy on the message attributes; "" for none
	raw    bool   // raw message delivery
}

// A target makes queues and topics, and hands them out as QueueClients and Publishers.
type target struct {
	name string
	// queue makes the queue of spec (named uniquely by the target) and returns it.
	queue func(t *testing.T, spec queueSpec) fifoq.QueueClient
	// topic makes the topic of spec (named uniquely) with its subscriptions, and returns it.
	topic func(t *testing.T, spec topicSpec) topic.Publisher
	// known holds, by a short name, the answers this target is known to give otherwise than AWS, with the
	// evidence: a scenario asks differs before it checks such an answer, and checks the target's instead.
	known map[string]string
}

// differs reports whether the target answers the case otherwise than AWS, and logs why when it does.
func (tg *target) differs(t *testing.T, what string) bool {
	t.Helper()
	why, ok := tg.known[what]
	if ok {
		t.Logf("%s answers %s otherwise than AWS: %s", tg.name, what, why)
	}
	return ok
}

// scenario is one behaviour, run on each target.
type scenario struct {
	name string
	run  func(t *testing.T, tg *target)
}

// receiveAll short-polls q until a poll returns nothing, and returns what it got.
func receiveAll(t *testing.T, q fifoq.QueueClient, o fifoq.ReceiveOptions) []fifoq.Delivery {
	t.Helper()
	o.MaxMessages, o.NoWaitTime = 10, true
	var out []fifoq.Delivery
	for {
		ds, err := q.Receive(t.Context(), o)
		require.NoError(t, err)
		if len(ds) == 0 {
			return out
		}
		out = append(out, ds...)
	}
}

func bodiesOf(ds []fifoq.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Body
	}
	return out
}

var scenarios = []scenario{
	{"send, receive, delete", func(t *testing.T, tg *target) {
		q := tg.queue(t, queueSpec{name: "basic"})
		for _, b := range []string{"a", "b", "c"} {
			r, err := q.Send(t.Context(), fifoq.Message{Body: b, TraceHeader: "Root=1-5759e988-bd862e3fe1be46a99427279" + b,
				Attributes: map[string]fifoq.Attribute{"kind": {DataType: "String", StringValue: "k-" + b}}})
			require.NoError(t, err)
			require.NotEmpty(t, r.MessageID)
		}
		ds := receiveAll(t, q, fifoq.ReceiveOptions{})
		require.ElementsMatch(t, []string{"a", "b", "c"}, bodiesOf(ds))
		for _, d := range ds {
			require.Equal(t, "k-"+d.Body, d.Attributes["kind"].StringValue)
			require.Equal(t, "Root=1-5759e988-bd862e3fe1be46a99427279"+d.Body, d.TraceHeader)
			require.Equal(t, 1, d.ReceiveCount)
			require.NoError(t, q.Delete(t.Context(), d.ReceiptHandle))
		}
		err := q.ChangeVisibility(t.Context(), ds[0].ReceiptHandle, 0)
		if tg.differs(t, "visibility of a deleted message") {
			require.ErrorIs(t, err, fifoq.ErrReceiptHandleInvalid)
		} else {
			require.ErrorIs(t, err, fifoq.ErrMessageNotAvailable)
		}
		require.Empty(t, receiveAll(t, q, fifoq.ReceiveOptions{}))
	}},
	{"groups in order", func(t *testing.T, tg *target) {
		q := tg.queue(t, queueSpec{name: "groups.fifo", contentDedup: true})
		for _, m := range []struct{ g, b string }{{"g1", "a1"}, {"g2", "b1"}, {"g1", "a2"}, {"g2", "b2"}, {"g1", "a3"}} {
			_, err := q.Send(t.Context(), fifoq.Message{Body: m.b, GroupID: m.g})
			require.NoError(t, err)
		}
		first, err := q.Receive(t.Context(), fifoq.ReceiveOptions{MaxMessages: 1, NoWaitTime: true})
		require.NoError(t, err)
		require.Len(t, first, 1)
		rest := receiveAll(t, q, fifoq.ReceiveOptions{})
		for _, d := range rest {
			require.NotEqual(t, first[0].GroupID, d.GroupID, "a group's message while its first is in flight")
		}
		require.NoError(t, q.Delete(t.Context(), first[0].ReceiptHandle))
		for _, d := range rest {
			require.NoError(t, q.ChangeVisibility(t.Context(), d.ReceiptHandle, 0))
		}
		byGroup := map[string][]string{first[0].GroupID: {first[0].Body}}
		for _, d := range receiveAll(t, q, fifoq.ReceiveOptions{}) {
			byGroup[d.GroupID] = append(byGroup[d.GroupID], d.Body)
		}
		require.Equal(t, map[string][]string{"g1": {"a1", "a2", "a3"}, "g2": {"b1", "b2"}}, byGroup)
	}},
	{"visibility", func(t *testing.T, tg *target) {
		q := tg.queue(t, queueSpec{name: "visibility"})
		_, err := q.Send(t.Context(), fifoq.Message{Body: "m"})
		require.NoError(t, err)
		ds := receiveAll(t, q, fifoq.ReceiveOptions{VisibilityTimeout: time.Hour})
		require.Len(t, ds, 1)
		require.Empty(t, receiveAll(t, q, fifoq.ReceiveOptions{}), "in flight: not received again")
		require.NoError(t, q.ChangeVisibility(t.Context(), ds[0].ReceiptHandle, 0))
		again := receiveAll(t, q, fifoq.ReceiveOptions{})
		require.Len(t, again, 1)
		require.Equal(t, ds[0].MessageID, again[0].MessageID)
		require.Equal(t, 2, again[0].ReceiveCount)
		require.ErrorIs(t, q.ChangeVisibility(t.Context(), again[0].ReceiptHandle, 13*time.Hour), fifoq.ErrInvalidVisibilityTimeout)
	}},
	{"batches and partial failures", func(t *testing.T, tg *target) {
		q := tg.queue(t, queueSpec{name: "batches"})
		res, err := q.SendBatch(t.Context(), []fifoq.Message{{Body: "one"}, {Body: ""}, {Body: "three", Delay: time.Second}})
		var be *fifoq.BatchError
		require.ErrorAs(t, err, &be)
		require.Len(t, be.Entries, 1)
		require.Equal(t, 1, be.Entries[0].Index)
		require.ErrorIs(t, be.Entries[0].Err, fifoq.ErrEmptyBody)
		require.NotEmpty(t, res[0].MessageID)
		require.Empty(t, res[1].MessageID)
		require.NotEmpty(t, res[2].MessageID)
		_, err = q.SendBatch(t.Context(), make([]fifoq.Message, 11))
		require.ErrorIs(t, err, fifoq.ErrTooManyEntries)

		ds := receiveAll(t, q, fifoq.ReceiveOptions{})
		require.Equal(t, []string{"one"}, bodiesOf(ds), "three is delayed a second")
		err = q.DeleteBatch(t.Context(), []string{ds[0].ReceiptHandle, "not-a-receipt-handle"})
		require.ErrorAs(t, err, &be)
		require.Len(t, be.Entries, 1)
		require.Equal(t, 1, be.Entries[0].Index)
		require.ErrorIs(t, be.Entries[0].Err, fifoq.ErrReceiptHandleInvalid)
	}},
	{"deduplication", func(t *testing.T, tg *target) {
		q := tg.queue(t, queueSpec{name: "dedup.fifo"})
		for _, id := range []string{"pay-1", "pay-2", "pay-1"} {
			_, err := q.Send(t.Context(), fifoq.Message{Body: "payment " + id, GroupID: "account-7", DeduplicationID: id})
			require.NoError(t, err)
		}
		_, err := q.Send(t.Context(), fifoq.Message{Body: "no id", GroupID: "account-7"})
		require.ErrorIs(t, err, fifoq.ErrMissingDeduplicationID)
		require.Equal(t, []string{"payment pay-1", "payment pay-2"}, bodiesOf(receiveAll(t, q, fifoq.ReceiveOptions{})))
	}},
	{"dead-letter queue", func(t *testing.T, tg *target) {
		dlq := tg.queue(t, queueSpec{name: "dlq"})
		q := tg.queue(t, queueSpec{name: "src", dlq: "dlq", maxReceives: 1})
		_, err := q.Send(t.Context(), fifoq.Message{Body: "poison"})
		require.NoError(t, err)
		ds := receiveAll(t, q, fifoq.ReceiveOptions{})
		require.Len(t, ds, 1)
		require.NoError(t, q.ChangeVisibility(t.Context(), ds[0].ReceiptHandle, 0))
		require.Empty(t, receiveAll(t, q, fifoq.ReceiveOptions{}), "received once, maxReceiveCount 1: moved, not returned")
		moved := receiveAll(t, dlq, fifoq.ReceiveOptions{})
		require.Equal(t, []string{"poison"}, bodiesOf(moved))
	}},
}

// publishScenarios are the scenarios of topics.
var publishScenarios = []scenario{
	{"a publish fanned out through a filter policy", func(t *testing.T, tg *target) {
		all := tg.queue(t, queueSpec{name: "all"})
		eu := tg.queue(t, queueSpec{name: "eu"})
		orders := tg.topic(t, topicSpec{name: "orders", subs: []subSpec{
			{queue: "all", raw: true},
			{queue: "eu", raw: true, filter: `{"region": ["eu"], "total": [{"numeric": [">=", 100]}]}`},
		}})
		require.False(t, orders.FIFO())
		attrs := func(region, total string) map[string]fifoq.Attribute {
			return map[string]fifoq.Attribute{"region": {DataType: "String", StringValue: region},
				"total": {DataType: "Number", StringValue: total}}
		}
		r, err := orders.Publish(t.Context(), topic.Message{Message: "m1", Attributes: attrs("eu", "120"),
			TraceHeader: "Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1"})
		require.NoError(t, err)
		require.NotEmpty(t, r.MessageID)
		_, err = orders.Publish(t.Context(), topic.Message{Message: "m2", Attributes: attrs("us", "500")})
		require.NoError(t, err)
		rs, err := orders.PublishBatch(t.Context(), []topic.Message{
			{Message: "m3", Attributes: attrs("eu", "100")},
			{Message: "m4", Attributes: attrs("eu", "99.5")},
			{Message: "m5"},
		})
		require.NoError(t, err)
		require.Len(t, rs, 3)
		for _, r := range rs {
			require.NotEmpty(t, r.MessageID)
		}
		_, err = orders.Publish(t.Context(), topic.Message{})
		require.ErrorIs(t, err, topic.ErrEmptyMessage, "checked by fifoq's rules on every target")

		got := receiveAll(t, all, fifoq.ReceiveOptions{})
		require.ElementsMatch(t, []string{"m1", "m2", "m3", "m4", "m5"}, bodiesOf(got))
		toEU := receiveAll(t, eu, fifoq.ReceiveOptions{})
		require.ElementsMatch(t, []string{"m1", "m3"}, bodiesOf(toEU), "region eu and a total of at least 100")
		for _, d := range toEU {
			require.Equal(t, "eu", d.Attributes["region"].StringValue, "raw delivery: the attributes are the message's")
			if d.Body == "m1" {
				if tg.differs(t, "trace header of a publish") {
					require.Empty(t, d.TraceHeader)
				} else {
					require.Equal(t, "Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1", d.TraceHeader)
				}
			}
		}
	}},
	{"a FIFO topic delivers each group in order", func(t *testing.T, tg *target) {
		q := tg.queue(t, queueSpec{name: "ledger.fifo"})
		ledger := tg.topic(t, topicSpec{name: "ledger.fifo", subs: []subSpec{{queue: "ledger.fifo", raw: true}}})
		require.True(t, ledger.FIFO())
		_, err := ledger.Publish(t.Context(), topic.Message{Message: "no group", DeduplicationID: "x"})
		require.ErrorIs(t, err, topic.ErrMissingGroupID)
		for i, b := range []string{"open", "credit", "debit"} {
			_, err := ledger.Publish(t.Context(), topic.Message{Message: b, GroupID: "acct-1", DeduplicationID: "d" + strconv.Itoa(i)})
			require.NoError(t, err)
		}
		rs, err := ledger.PublishBatch(t.Context(), []topic.Message{
			{Message: "close", GroupID: "acct-1", DeduplicationID: "d3"},
			{Message: "credit", GroupID: "acct-1", DeduplicationID: "d1"}, // a duplicate: accepted, not delivered
		})
		require.NoError(t, err)
		if tg.differs(t, "sequence numbers of a FIFO PublishBatch") {
			require.Empty(t, rs[0].SequenceNumber)
		} else {
			require.NotEmpty(t, rs[0].SequenceNumber)
		}
		require.Equal(t, []string{"open", "credit", "debit", "close"}, bodiesOf(receiveAll(t, q, fifoq.ReceiveOptions{})))
	}},
}

// TestBehaviour runs every scenario on every target.
func TestBehaviour(t *testing.T) {
	targets := []*target{inProcess(), fifoqServe(t)}
	if m := moto(t); m != nil {
		targets = append(targets, m)
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			for _, sc := range append(scenarios, publishScenarios...) {
				t.Run(sc.name, func(t *testing.T) { sc.run(t, tg) })
			}
		})
	}
}

// inProcess is the target of *fifoq.Queue and *topic.Topic values.
func inProcess() *target {
	var mu sync.Mutex
	made := make(map[string]*fifoq.Queue)
	return &target{name: "in process", topic: func(t *testing.T, spec topicSpec) topic.Publisher {
		tp, err := topic.New(uniqueName(spec.name))
		require.NoError(t, err)
		for _, sub := range spec.subs {
			mu.Lock()
			q := made[t.Name()+"/"+sub.queue]
			mu.Unlock()
			_, err := tp.Subscribe(q, topic.SubscriptionAttributes{RawMessageDelivery: sub.raw, FilterPolicy: sub.filter})
			require.NoError(t, err)
		}
		return tp
	}, queue: func(t *testing.T, spec queueSpec) fifoq.QueueClient {
		mu.Lock()
		defer mu.Unlock()
		var opts []fifoq.Option
		if spec.contentDedup {
			opts = append(opts, fifoq.WithContentBasedDeduplication())
		}
		if spec.dlq != "" {
			opts = append(opts, fifoq.WithDeadLetterQueue(made[t.Name()+"/"+spec.dlq], spec.maxReceives))
		}
		q, err := fifoq.New(uniqueName(spec.name), opts...)
		require.NoError(t, err)
		made[t.Name()+"/"+spec.name] = q
		return q
	}}
}

// names numbers the queues the scenarios make, so that no two runs share one.
var names struct {
	sync.Mutex
	n int
}

// uniqueName returns name with a number, before a ".fifo".
func uniqueName(name string) string {
	names.Lock()
	defer names.Unlock()
	names.n++
	base, fifo := strings.CutSuffix(name, ".fifo")
	name = base + "-" + strconv.Itoa(names.n)
	if fifo {
		name += ".fifo"
	}
	return name
}

// overTheWire is a target that makes its queues with CreateQueue through client, and its topics with
// CreateTopic and Subscribe through snsClient, and reaches them through sqsadapter.Open and OpenTopic, by
// name.
func overTheWire(name string, client *sqs.Client, snsClient *sns.Client) *target {
	var mu sync.Mutex
	arns := make(map[string]string)
	return &target{name: name, topic: func(t *testing.T, spec topicSpec) topic.Publisher {
		tn := uniqueName(spec.name)
		var attrs map[string]string
		if strings.HasSuffix(tn, ".fifo") {
			attrs = map[string]string{"FifoTopic": "true"}
		}
		created, err := snsClient.CreateTopic(t.Context(), &sns.CreateTopicInput{Name: aws.String(tn), Attributes: attrs})
		require.NoError(t, err)
		for _, sub := range spec.subs {
			mu.Lock()
			queueARN := arns[t.Name()+"/"+sub.queue]
			mu.Unlock()
			subAttrs := map[string]string{"RawMessageDelivery": strconv.FormatBool(sub.raw)}
			if sub.filter != "" {
				subAttrs["FilterPolicy"] = sub.filter
			}
			_, err := snsClient.Subscribe(t.Context(), &sns.SubscribeInput{TopicArn: created.TopicArn, Protocol: aws.String("sqs"),
				Endpoint: aws.String(queueARN), Attributes: subAttrs})
			require.NoError(t, err)
		}
		tp, err := sqsadapter.OpenTopic(t.Context(), snsClient, tn)
		require.NoError(t, err)
		require.Equal(t, aws.ToString(created.TopicArn), tp.ARN(), "opened by name")
		return tp
	}, queue: func(t *testing.T, spec queueSpec) fifoq.QueueClient {
		attrs := map[string]string{}
		if strings.HasSuffix(spec.name, ".fifo") {
			attrs["FifoQueue"] = "true"
		}
		if spec.contentDedup {
			attrs["ContentBasedDeduplication"] = "true"
		}
		if spec.dlq != "" {
			mu.Lock()
			arn := arns[t.Name()+"/"+spec.dlq]
			mu.Unlock()
			attrs["RedrivePolicy"] = fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":%d}`, arn, spec.maxReceives)
		}
		qn := uniqueName(spec.name)
		out, err := client.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String(qn), Attributes: attrs})
		require.NoError(t, err)
		got, err := client.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl,
			AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
		require.NoError(t, err)
		mu.Lock()
		arns[t.Name()+"/"+spec.name] = got.Attributes["QueueArn"]
		mu.Unlock()
		q, err := sqsadapter.Open(t.Context(), client, qn)
		require.NoError(t, err)
		require.Equal(t, aws.ToString(out.QueueUrl), q.URL(), "opened by name")
		return q
	}}
}

// fifoqServe is the target of fifoq serve's SQS API, on a loopback port.
func fifoqServe(t *testing.T) *target {
	srv := sqsapi.NewServer()
	hs := httptest.NewServer(snsapi.Route(snsapi.NewServer(srv.Catalog()), srv))
	t.Cleanup(func() {
		hs.Close()
		srv.Close()
	})
	return overTheWire("fifoq serve", sqsadaptertest.SQSClient(hs.URL), sqsadaptertest.SNSClient(hs.URL))
}

// moto is the target of moto's server, a third-party SQS (sqsadaptertest.Moto starts it), or nil when moto
// is not installed.
func moto(t *testing.T) *target {
	endpoint := sqsadaptertest.Moto(t)
	if endpoint == "" {
		return nil
	}
	tg := overTheWire("moto", sqsadaptertest.SQSClient(endpoint), sqsadaptertest.SNSClient(endpoint))
	tg.known = map[string]string{
		"visibility of a deleted message": "moto 5.2.1 answers ReceiptHandleIsInvalid; AWS answers InvalidParameterValue, " +
			"\"Message does not exist or is not available for visibility timeout change.\" (recorded against AWS by " +
			"LocalStack's test_change_visibility_on_deleted_message_raises_invalid_parameter_value)",
		"trace header of a publish": "moto 5.2.1 drops the X-Amzn-Trace-Id of a Publish; AWS passes it to the " +
			"subscribed queues as AWSTraceHeader (X-Ray developer guide, \"Amazon SNS and AWS X-Ray\": SNS passes " +
			"the trace context from publisher to subscribers)",
		"sequence numbers of a FIFO PublishBatch": "moto 5.2.1 answers a FIFO topic's PublishBatch without " +
			"SequenceNumber; AWS gives each successful entry one (SNS API reference, PublishBatchResultEntry: " +
			"SequenceNumber applies to FIFO topics)",
	}
	return tg
}

package topic_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/storage/storagetest"
	"github.com/fifoq/fifoq/topic"
)

// Tests of topics: names and ARNs, the pairing of topics and queues, Publish's checks with SNS's codes and
// texts, the envelope and raw delivery, filtering, dead-letter queues and metrics. The FIFO topics' window
// and order are in topic_fifo_test.go.

var tpStart = time.Date(2025, 3, 4, 5, 6, 7, 890_000_000, time.UTC)

// tpTopic returns a topic on a frozen manual clock.
func tpTopic(t *testing.T, name string, opts ...topic.Option) *topic.Topic {
	t.Helper()
	tp, err := topic.New(name, append([]topic.Option{topic.WithClock(fifoq.NewManualClock(tpStart))}, opts...)...)
	require.NoError(t, err, "NewTopic(%q)", name)
	return tp
}

// tpQueue returns a queue whose messages stay visible (no visibility timeout).
func tpQueue(t *testing.T, name string, opts ...fifoq.Option) *fifoq.Queue {
	t.Helper()
	q, err := fifoq.New(name, append([]fifoq.Option{fifoq.WithVisibilityTimeout(0)}, opts...)...)
	require.NoError(t, err, "New(%q)", name)
	return q
}

// tpSubscribe subscribes q to tp, failing the test on error.
func tpSubscribe(t *testing.T, tp *topic.Topic, q topic.Endpoint, attrs topic.SubscriptionAttributes) *topic.Subscription {
	t.Helper()
	s, err := tp.Subscribe(q, attrs)
	require.NoError(t, err, "Subscribe(%s, %+v)", q.Name(), attrs)
	return s
}

// tpReceive returns everything q holds, without changing it.
func tpReceive(t *testing.T, q *fifoq.Queue) []fifoq.Snapshot {
	t.Helper()
	var out []fifoq.Snapshot
	for s := range q.Messages() {
		out = append(out, s)
	}
	return out
}

// tpBodies returns the bodies of what q holds.
func tpBodies(t *testing.T, q *fifoq.Queue) []string {
	t.Helper()
	var out []string
	for _, s := range tpReceive(t, q) {
		out = append(out, s.Body)
	}
	return out
}

func TestTopicNames(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"a", "A-b_9", strings.Repeat("x", 256), strings.Repeat("x", 251) + ".fifo", "t.fifo"} {
		tp, err := topic.New(name)
		require.NoError(t, err, "NewTopic(%q)", name)
		require.Equal(t, strings.HasSuffix(name, ".fifo"), tp.FIFO(), "FIFO of %q", name)
		require.Equal(t, name, tp.Name())
	}
	for _, name := range []string{"", ".fifo", strings.Repeat("x", 257), strings.Repeat("x", 252) + ".fifo", "a b", "a.b", "é"} {
		_, err := topic.New(name)
		require.ErrorIs(t, err, topic.ErrInvalidName, "NewTopic(%q)", name)
		require.Equal(t, "InvalidParameter", fifoq.ErrorCode(err))
		require.Equal(t, "Invalid parameter: Topic Name", fifoq.ErrorMessage(err))
	}

	tp := tpTopic(t, "orders")
	require.Equal(t, "arn:aws:sns:us-east-1:000000000000:orders", tp.ARN())
	tp = tpTopic(t, "orders.fifo", topic.WithARN("eu-west-3", "123456789012"))
	require.Equal(t, "arn:aws:sns:eu-west-3:123456789012:orders.fifo", tp.ARN())
	tp = tpTopic(t, "o", topic.WithARN("cn-north-1", "123456789012"))
	require.Equal(t, "arn:aws-cn:sns:cn-north-1:123456789012:o", tp.ARN())

	_, err := topic.New("std", topic.WithContentBasedDeduplication())
	require.ErrorIs(t, err, topic.ErrInvalidAttribute)
	require.Equal(t, "Invalid parameter: ContentBasedDeduplication Reason: Content-based deduplication can only be set for FIFO topics",
		fifoq.ErrorMessage(err))
	_, err = topic.New("std", topic.WithSignatureVersion("3"))
	require.ErrorIs(t, err, topic.ErrInvalidAttribute)
	_, err = topic.New("std", topic.WithClock(nil))
	require.NoError(t, err, "a nil clock is the real clock")

	require.NoError(t, tp.SetAttributes(topic.Attributes{SignatureVersion: "2"}))
	require.Equal(t, topic.Attributes{SignatureVersion: "2"}, tp.Attributes())
	require.ErrorIs(t, tp.SetAttributes(topic.Attributes{ContentBasedDeduplication: true}), topic.ErrInvalidAttribute)
}

func TestTopicSubscribePairing(t *testing.T) {
	t.Parallel()
	std, fifo := tpTopic(t, "std"), tpTopic(t, "f.fifo")
	sq, fq := tpQueue(t, "sq"), tpQueue(t, "fq.fifo", fifoq.WithContentBasedDeduplication())

	_, err := std.Subscribe(fq, topic.SubscriptionAttributes{})
	require.ErrorIs(t, err, topic.ErrInvalidSubscription)
	require.Equal(t, "InvalidParameter", fifoq.ErrorCode(err))
	require.Equal(t, "Invalid parameter: Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be subscribed to standard SNS topics",
		fifoq.ErrorMessage(err))
	tpSubscribe(t, std, sq, topic.SubscriptionAttributes{})
	tpSubscribe(t, fifo, fq, topic.SubscriptionAttributes{})
	tpSubscribe(t, fifo, sq, topic.SubscriptionAttributes{}) // SNS FIFO topics deliver to standard queues too

	// Subscribing again: the same subscription with the same attributes, an error with others.
	s1 := tpSubscribe(t, std, tpQueue(t, "again"), topic.SubscriptionAttributes{RawMessageDelivery: true})
	s2 := tpSubscribe(t, std, s1.Endpoint(), topic.SubscriptionAttributes{RawMessageDelivery: true})
	require.Same(t, s1, s2)
	_, err = std.Subscribe(s1.Endpoint(), topic.SubscriptionAttributes{})
	require.ErrorIs(t, err, topic.ErrInvalidSubscription)
	require.Equal(t, "Invalid parameter: Attributes Reason: Subscription already exists with different attributes", fifoq.ErrorMessage(err))
	require.Len(t, std.Subscriptions(), 2)
	require.True(t, strings.HasPrefix(s1.ARN(), std.ARN()+":"), "subscription ARN %s", s1.ARN())
	require.Same(t, std, s1.Topic())

	// Dead-letter queues: FIFO for a FIFO queue on a FIFO topic, standard on a standard topic.
	_, err = fifo.Subscribe(tpQueue(t, "fq2.fifo", fifoq.WithContentBasedDeduplication()),
		topic.SubscriptionAttributes{DeadLetterQueue: tpQueue(t, "dlq")})
	require.ErrorIs(t, err, topic.ErrInvalidRedrivePolicy)
	require.Equal(t, "Invalid parameter: RedrivePolicy: must use a FIFO queue as DLQ for a FIFO Subscription to a FIFO Topic.", fifoq.ErrorMessage(err))
	_, err = std.Subscribe(tpQueue(t, "sq2"), topic.SubscriptionAttributes{DeadLetterQueue: tpQueue(t, "dlq.fifo")})
	require.ErrorIs(t, err, topic.ErrInvalidRedrivePolicy)

	// A filter policy is checked at Subscribe with Subscribe's words, and at SetAttributes with its own.
	_, err = std.Subscribe(tpQueue(t, "sq3"), topic.SubscriptionAttributes{FilterPolicy: `{"a": "b"}`})
	require.ErrorIs(t, err, topic.ErrInvalidFilterPolicy)
	require.Equal(t, `Invalid parameter: Attributes Reason: FilterPolicy: "a" must be an object or an array`+
		"\n at [Source: (String)\"{\"a\":\"b\"}\"; line: 1, column: 7]", fifoq.ErrorMessage(err))
	err = s1.SetAttributes(topic.SubscriptionAttributes{FilterPolicy: `{"a": {"b": ["c"]}}`})
	require.ErrorIs(t, err, topic.ErrInvalidFilterPolicy)
	require.Equal(t, "Invalid parameter: Filter policy scope MessageAttributes does not support nested filter policy", fifoq.ErrorMessage(err))
	require.NoError(t, s1.SetAttributes(topic.SubscriptionAttributes{FilterPolicy: `{"a": {"b": ["c"]}}`, FilterPolicyScope: topic.FilterPolicyScopeMessageBody}))
	require.Equal(t, topic.FilterPolicyScopeMessageBody, s1.Attributes().FilterPolicyScope)
	err = s1.SetAttributes(topic.SubscriptionAttributes{FilterPolicyScope: "RandomValue"})
	require.ErrorIs(t, err, topic.ErrInvalidFilterPolicyScope)
	require.Equal(t, topic.FilterPolicyScopeMessageAttributes, tpSubscribe(t, std, tpQueue(t, "sq4"), topic.SubscriptionAttributes{}).Attributes().FilterPolicyScope)

	// Unsubscribe and Delete.
	s1.Unsubscribe()
	s1.Unsubscribe() // twice: nothing more
	require.ErrorIs(t, s1.SetAttributes(topic.SubscriptionAttributes{}), topic.ErrSubscriptionNotFound)
	require.Len(t, std.Subscriptions(), 2)
	std.Delete()
	require.Empty(t, std.Subscriptions())
	_, err = std.Publish(context.Background(), topic.Message{Message: "m"})
	require.ErrorIs(t, err, topic.ErrNotFound)
	require.Equal(t, "NotFound", fifoq.ErrorCode(err))
	require.Equal(t, "Topic does not exist", fifoq.ErrorMessage(err))
	_, err = std.Subscribe(sq, topic.SubscriptionAttributes{})
	require.ErrorIs(t, err, topic.ErrNotFound)
}

// TestTopicPublishChecks checks each rule of Publish with SNS's code and message; a refused message reaches
// no queue.
func TestTopicPublishChecks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	std, fifo := tpTopic(t, "std"), tpTopic(t, "f.fifo")
	sq, fq := tpQueue(t, "sq"), tpQueue(t, "fq.fifo", fifoq.WithContentBasedDeduplication())
	tpSubscribe(t, std, sq, topic.SubscriptionAttributes{})
	tpSubscribe(t, fifo, fq, topic.SubscriptionAttributes{})
	attr := func(name string, a fifoq.Attribute) topic.Message {
		return topic.Message{Message: "m", Attributes: map[string]fifoq.Attribute{name: a}}
	}
	cases := []struct {
		name     string
		topic    *topic.Topic
		msg      topic.Message
		sentinel error
		code     string
		message  string
	}{
		{"empty message", std, topic.Message{}, topic.ErrEmptyMessage, "InvalidParameter", "Invalid parameter: Empty message"},
		{"message not UTF-8", std, topic.Message{Message: "\xff"}, topic.ErrInvalidMessage, "InvalidParameter", "Invalid parameter: Message"},
		{"message too long", std, topic.Message{Message: strings.Repeat("a", 256<<10+1)}, topic.ErrMessageTooLarge,
			"InvalidParameter", "Invalid parameter: Message too long"},
		{"attributes count toward the size", std, topic.Message{Message: strings.Repeat("a", 256<<10-10),
			Attributes: map[string]fifoq.Attribute{"k": fpStr("12345")}}, topic.ErrMessageTooLarge, "InvalidParameter", "Invalid parameter: Message too long"},
		{"subject with a line break", std, topic.Message{Message: "m", Subject: "a\nb"}, topic.ErrInvalidSubject, "InvalidParameter", "Invalid parameter: Subject"},
		{"subject of 100 characters", std, topic.Message{Message: "m", Subject: strings.Repeat("s", 100)}, topic.ErrInvalidSubject,
			"InvalidParameter", "Invalid parameter: Subject"},
		{"subject starting with a space", std, topic.Message{Message: "m", Subject: " s"}, topic.ErrInvalidSubject, "InvalidParameter", "Invalid parameter: Subject"},
		{"attribute type", std, attr("a", fifoq.Attribute{DataType: "Text", StringValue: "x"}), topic.ErrInvalidMessageAttribute, "ParameterValueInvalid",
			"The message attribute 'a' has an invalid message attribute type, the set of supported type prefixes is Binary, Number, and String."},
		{"empty attribute value", std, attr("a", fifoq.Attribute{DataType: "String"}), topic.ErrInvalidMessageAttribute, "ParameterValueInvalid",
			"The message attribute 'a' must contain non-empty message attribute value for message attribute type 'String'."},
		{"binary in a string", std, attr("a", fifoq.Attribute{DataType: "String", BinaryValue: []byte("x")}), topic.ErrInvalidMessageAttribute,
			"ParameterValueInvalid", "The message attribute 'a' with type 'String' must use field 'String'."},
		{"not a number", std, attr("a", fpNum("ten")), topic.ErrInvalidMessageAttribute, "ParameterValueInvalid",
			"Could not cast message attribute 'a' value to number."},
		{"name with a space", std, attr("a b", fpStr("x")), topic.ErrInvalidMessageAttribute, "ParameterValueInvalid",
			"Invalid non-alphanumeric character '#x20' was found in the message attribute name. Can only include alphanumeric characters, hyphens, underscores, or dots."},
		{"name ending with a period", std, attr("a.", fpStr("x")), topic.ErrInvalidMessageAttribute, "ParameterValueInvalid",
			"Invalid message attribute name ending with character '.' was found."},
		{"name with two periods", std, attr("a..b", fpStr("x")), topic.ErrInvalidMessageAttribute, "ParameterValueInvalid",
			"Message attribute name can not have successive '.' character."},
		{"name too long", std, attr(strings.Repeat("n", 257), fpStr("x")), topic.ErrInvalidMessageAttribute, "ParameterValueInvalid",
			"Length of message attribute name must be less than 256 bytes."},
		{"deduplication id on a standard topic", std, topic.Message{Message: "m", DeduplicationID: "d"}, topic.ErrInvalidDeduplicationID,
			"InvalidParameter", "Invalid parameter: MessageDeduplicationId Reason: The request includes MessageDeduplicationId parameter that is not valid for this topic type"},
		{"FIFO without a group", fifo, topic.Message{Message: "m", DeduplicationID: "d"}, topic.ErrMissingGroupID,
			"InvalidParameter", "Invalid parameter: The MessageGroupId parameter is required for FIFO topics"},
		{"FIFO without a deduplication id", fifo, topic.Message{Message: "m", GroupID: "g"}, topic.ErrMissingDeduplicationID,
			"InvalidParameter", "Invalid parameter: The topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly"},
		{"group id with a space", fifo, topic.Message{Message: "m", GroupID: "g 1", DeduplicationID: "d"}, topic.ErrInvalidGroupID,
			"InvalidParameter", "Invalid parameter: MessageGroupId Reason: MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length."},
		{"long deduplication id", fifo, topic.Message{Message: "m", GroupID: "g", DeduplicationID: strings.Repeat("d", 129)}, topic.ErrInvalidDeduplicationID,
			"InvalidParameter", "Invalid parameter: MessageDeduplicationId Reason: MessageDeduplicationId can only include alphanumeric and punctuation characters. 1 to 128 in length."},
		{"structure other than json", std, topic.Message{Message: "m", MessageStructure: "xml"}, topic.ErrInvalidMessage,
			"InvalidParameter", "Invalid parameter: MessageStructure"},
		{"json structure without default", std, topic.Message{Message: `{"sqs": "x"}`, MessageStructure: "json"}, topic.ErrInvalidMessage,
			"InvalidParameter", "Invalid parameter: Message Structure - No default entry in JSON message body"},
		{"json structure not JSON", std, topic.Message{Message: `{`, MessageStructure: "json"}, topic.ErrInvalidMessage,
			"InvalidParameter", "Invalid parameter: Message Structure - JSON message body failed to parse"},
	}
	for _, c := range cases {
		_, err := c.topic.Publish(ctx, c.msg)
		require.ErrorIs(t, err, c.sentinel, c.name)
		require.Equal(t, c.code, fifoq.ErrorCode(err), c.name)
		require.Equal(t, c.message, fifoq.ErrorMessage(err), c.name)
	}
	require.Empty(t, tpBodies(t, sq), "a refused message reached a queue")
	require.Empty(t, tpBodies(t, fq), "a refused message reached a queue")
	require.Zero(t, std.Metrics().Published)

	_, err := std.Publish(ctx, topic.Message{Message: "m", Subject: strings.Repeat("s", 99)})
	require.NoError(t, err, "a subject of 99 characters")
	_, err = std.Publish(ctx, topic.Message{Message: "m", Subject: "¿Qué?"})
	require.NoError(t, err, "a subject that starts with a punctuation mark")

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = std.Publish(cancelled, topic.Message{Message: "m"})
	require.ErrorIs(t, err, context.Canceled)
}

// TestTopicEnvelope checks the body a queue receives without raw delivery: SNS's envelope, in SNS's layout.
func TestTopicEnvelope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tp := tpTopic(t, "news", topic.WithEndpoint("http://localhost:9324/"))
	q := tpQueue(t, "inbox")
	s := tpSubscribe(t, tp, q, topic.SubscriptionAttributes{})
	res, err := tp.Publish(ctx, topic.Message{Message: "Hello \"world\"\n<&>", Subject: "Greeting",
		Attributes: map[string]fifoq.Attribute{"b": fpBin("\x00\x01"), "a": fpStr("x"), "n": fpNum("1.5")}})
	require.NoError(t, err)
	require.Empty(t, res.SequenceNumber)
	bodies := tpBodies(t, q)
	require.Len(t, bodies, 1)
	want := `{
  "Type" : "Notification",
  "MessageId" : "` + res.MessageID + `",
  "TopicArn" : "arn:aws:sns:us-east-1:000000000000:news",
  "Subject" : "Greeting",
  "Message" : "Hello \"world\"\n<&>",
  "Timestamp" : "2025-03-04T05:06:07.890Z",
  "SignatureVersion" : "1",
  "Signature" : "",
  "SigningCertURL" : "",
  "UnsubscribeURL" : "http://localhost:9324/?Action=Unsubscribe&SubscriptionArn=` + s.ARN() + `",
  "MessageAttributes" : {
    "a" : {"Type":"String","Value":"x"},
    "b" : {"Type":"Binary","Value":"AAE="},
    "n" : {"Type":"Number","Value":"1.5"}
  }
}`
	require.Equal(t, want, bodies[0])
	require.True(t, json.Valid([]byte(bodies[0])))
	e, err := topic.ParseEnvelope(bodies[0])
	require.NoError(t, err)
	require.Equal(t, "Hello \"world\"\n<&>", e.Message)
	require.Equal(t, topic.EnvelopeAttribute{Type: "Binary", Value: "AAE="}, e.MessageAttributes["b"])
	require.Equal(t, "Message\nHello \"world\"\n<&>\nMessageId\n"+res.MessageID+"\nSubject\nGreeting\nTimestamp\n2025-03-04T05:06:07.890Z\n"+
		"TopicArn\narn:aws:sns:us-east-1:000000000000:news\nType\nNotification\n", e.StringToSign())

	_, err = topic.ParseEnvelope("plain text")
	require.Error(t, err)

	// A FIFO topic's envelope: a SequenceNumber, no signature fields, no attributes when there are none.
	ft := tpTopic(t, "news.fifo")
	fq := tpQueue(t, "inbox.fifo", fifoq.WithContentBasedDeduplication())
	fs := tpSubscribe(t, ft, fq, topic.SubscriptionAttributes{})
	fres, err := ft.Publish(ctx, topic.Message{Message: "m", GroupID: "g", DeduplicationID: "d1"})
	require.NoError(t, err)
	snaps := tpReceive(t, fq)
	require.Len(t, snaps, 1)
	require.Equal(t, `{
  "Type" : "Notification",
  "MessageId" : "`+fres.MessageID+`",
  "SequenceNumber" : "`+fres.SequenceNumber+`",
  "TopicArn" : "arn:aws:sns:us-east-1:000000000000:news.fifo",
  "Message" : "m",
  "Timestamp" : "2025-03-04T05:06:07.890Z",
  "UnsubscribeURL" : "https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=`+fs.ARN()+`"
}`, snaps[0].Body)
	require.Equal(t, "g", snaps[0].GroupID)
	require.Equal(t, "d1", snaps[0].DeduplicationID, "SNS passes the deduplication id on to a FIFO queue")
	require.Len(t, fres.SequenceNumber, 20)
}

// TestTopicRawDelivery checks raw delivery: the message is the body, the attributes the queue message's.
func TestTopicRawDelivery(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tp := tpTopic(t, "raw")
	q := tpQueue(t, "rawq")
	tpSubscribe(t, tp, q, topic.SubscriptionAttributes{RawMessageDelivery: true})
	attrs := map[string]fifoq.Attribute{
		"s": fpStr("x"), "n": fpNum("-2.5e3"), "arr": fpArr(`["a", 1, true]`), "b": fpBin("\x00\xff"), "c": {DataType: "String.custom", StringValue: "y"},
	}
	_, err := tp.Publish(ctx, topic.Message{Message: "payload", Subject: "dropped", Attributes: attrs, GroupID: "fair"})
	require.NoError(t, err)
	snaps := tpReceive(t, q)
	require.Len(t, snaps, 1)
	require.Equal(t, "payload", snaps[0].Body)
	require.Equal(t, attrs, snaps[0].Attributes)
	require.Equal(t, "fair", snaps[0].GroupID, "a standard topic passes the group id on (fair queues)")

	// MessageStructure json: the queue gets the "sqs" entry, or else "default".
	_, err = tp.Publish(ctx, topic.Message{Message: `{"default": "d", "sqs": "for queues", "email": "e"}`, MessageStructure: "json"})
	require.NoError(t, err)
	_, err = tp.Publish(ctx, topic.Message{Message: `{"default": "d", "email": "e"}`, MessageStructure: "json"})
	require.NoError(t, err)
	require.Equal(t, []string{"payload", "for queues", "d"}, tpBodies(t, q))
}

// TestTopicFiltering checks that each subscription gets what its policy matches, and the metrics count it.
func TestTopicFiltering(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tp := tpTopic(t, "events")
	all, sports, bodyq := tpQueue(t, "all"), tpQueue(t, "sports"), tpQueue(t, "body")
	tpSubscribe(t, tp, all, topic.SubscriptionAttributes{RawMessageDelivery: true})
	tpSubscribe(t, tp, sports, topic.SubscriptionAttributes{RawMessageDelivery: true, FilterPolicy: `{"category": ["sports"]}`})
	tpSubscribe(t, tp, bodyq, topic.SubscriptionAttributes{RawMessageDelivery: true,
		FilterPolicy: `{"order": {"total": [{"numeric": [">", 100]}]}}`, FilterPolicyScope: topic.FilterPolicyScopeMessageBody})
	msgs := []topic.Message{
		{Message: `{"order": {"total": 150}}`, Attributes: map[string]fifoq.Attribute{"category": fpStr("sports")}},
		{Message: `{"order": {"total": 50}}`, Attributes: map[string]fifoq.Attribute{"category": fpStr("music")}},
		{Message: `not json`},
		{Message: `{"order": {"total": 101}}`, Attributes: map[string]fifoq.Attribute{"category": fpArr(`not an array`)}},
	}
	for _, m := range msgs {
		_, err := tp.Publish(ctx, m)
		require.NoError(t, err)
	}
	require.Equal(t, []string{msgs[0].Message, msgs[1].Message, msgs[2].Message, msgs[3].Message}, tpBodies(t, all))
	require.Equal(t, []string{msgs[0].Message}, tpBodies(t, sports))
	require.Equal(t, []string{msgs[0].Message, msgs[3].Message}, tpBodies(t, bodyq))
	require.Equal(t, topic.Metrics{
		Subscriptions:                  3,
		Published:                      4,
		PublishedBytes:                 uint64(len(msgs[0].Message) + 8 + 6 + 6 + len(msgs[1].Message) + 8 + 6 + 5 + len(msgs[2].Message) + len(msgs[3].Message) + 8 + 12 + 12),
		Delivered:                      4 + 1 + 2,
		FilteredOut:                    2, // sports: music; body: a total of 50
		FilteredOutNoMessageAttributes: 1, // sports: not json, no attributes
		FilteredOutInvalidAttributes:   1, // sports: not an array
		FilteredOutInvalidMessageBody:  1, // body: not json
	}, tp.Metrics())
}

// TestTopicDeadLetterQueue checks that a message a queue refuses goes to the subscription's dead-letter
// queue as the queue would have received it, and is counted; without one it is lost, and counted.
func TestTopicDeadLetterQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tp := tpTopic(t, "t")
	small := tpQueue(t, "small", fifoq.WithMaxMessageSize(1024))
	dlq := tpQueue(t, "dlq")
	tpSubscribe(t, tp, small, topic.SubscriptionAttributes{RawMessageDelivery: true, DeadLetterQueue: dlq})
	lossy := tpQueue(t, "lossy", fifoq.WithMaxMessageSize(1024))
	tpSubscribe(t, tp, lossy, topic.SubscriptionAttributes{RawMessageDelivery: true})

	big := strings.Repeat("x", 2000)
	_, err := tp.Publish(ctx, topic.Message{Message: big, Attributes: map[string]fifoq.Attribute{"k": fpStr("v")}})
	require.NoError(t, err, "a delivery that fails does not fail Publish")
	// SQS refuses a NUL in a body; SNS takes it.
	_, err = tp.Publish(ctx, topic.Message{Message: "a\x00b"})
	require.NoError(t, err)
	// Raw delivery maps attributes to queue attributes: SQS takes at most 10.
	eleven := map[string]fifoq.Attribute{}
	for i := range 11 {
		eleven[string(rune('a'+i))] = fpStr("v")
	}
	_, err = tp.Publish(ctx, topic.Message{Message: "ok", Attributes: eleven})
	require.NoError(t, err)
	_, err = tp.Publish(ctx, topic.Message{Message: "fits"})
	require.NoError(t, err)

	require.Equal(t, []string{"fits"}, tpBodies(t, small))
	dead := tpReceive(t, dlq)
	require.Len(t, dead, 1, "the NUL and the 11 attributes are refused by the dead-letter queue too")
	require.Equal(t, big, dead[0].Body)
	require.Equal(t, map[string]fifoq.Attribute{"k": fpStr("v")}, dead[0].Attributes)
	m := tp.Metrics()
	require.Equal(t, uint64(2), m.Delivered)
	require.Equal(t, uint64(6), m.Failed)
	require.Equal(t, uint64(1), m.RedrivenToDLQ)
	require.Equal(t, uint64(2), m.FailedToRedriveToDLQ)
}

// TestTopicPublishBatch checks PublishBatch: whole-call failures, for the batch and for any entry, as SNS
// fails the whole request, and order.
func TestTopicPublishBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tp := tpTopic(t, "b")
	q := tpQueue(t, "bq")
	tpSubscribe(t, tp, q, topic.SubscriptionAttributes{RawMessageDelivery: true})
	res, err := tp.PublishBatch(ctx, []topic.Message{{Message: "1"}, {}, {Message: "3", Subject: "\n"}})
	require.ErrorIs(t, err, topic.ErrEmptyMessage, "the first failing entry's error")
	require.Equal(t, "Invalid parameter: Empty message", fifoq.ErrorMessage(err))
	require.Contains(t, err.Error(), "entry 1: ")
	require.Nil(t, res)
	require.Empty(t, tpBodies(t, q), "a batch with a bad entry publishes nothing")
	require.Zero(t, tp.Metrics().Published)
	res, err = tp.PublishBatch(ctx, []topic.Message{{Message: "1"}, {Message: "2"}})
	require.NoError(t, err)
	require.NotEmpty(t, res[0].MessageID)
	require.NotEmpty(t, res[1].MessageID)
	require.Equal(t, []string{"1", "2"}, tpBodies(t, q))

	for _, c := range []struct {
		batch    []topic.Message
		sentinel error
		code     string
		message  string
	}{
		{nil, topic.ErrEmptyBatch, "EmptyBatchRequest", "The batch request doesn't contain any entries."},
		{make([]topic.Message, 11), topic.ErrTooManyEntries, "TooManyEntriesInBatchRequest", "The batch request contains more entries than permissible."},
		{[]topic.Message{{Message: strings.Repeat("a", 200<<10)}, {Message: strings.Repeat("a", 60<<10)}}, topic.ErrBatchTooLong,
			"BatchRequestTooLong", "The length of all the messages put together is more than the limit."},
	} {
		_, err := tp.PublishBatch(ctx, c.batch)
		require.ErrorIs(t, err, c.sentinel)
		require.Equal(t, c.code, fifoq.ErrorCode(err))
		require.Equal(t, c.message, fifoq.ErrorMessage(err))
	}

	ft := tpTopic(t, "b.fifo")
	fq := tpQueue(t, "bq.fifo", fifoq.WithContentBasedDeduplication())
	tpSubscribe(t, ft, fq, topic.SubscriptionAttributes{RawMessageDelivery: true})
	_, err = ft.PublishBatch(ctx, []topic.Message{{Message: "1", GroupID: "g", DeduplicationID: "1"}, {Message: "2", DeduplicationID: "2"}})
	require.ErrorIs(t, err, topic.ErrMissingGroupID)
	require.Empty(t, tpBodies(t, fq), "a batch that fails whole publishes nothing")
	res, err = ft.PublishBatch(ctx, []topic.Message{
		{Message: "1", GroupID: "g", DeduplicationID: "1"}, {Message: "2", GroupID: "g", DeduplicationID: "2"}, {Message: "1 again", GroupID: "g", DeduplicationID: "1"},
	})
	require.NoError(t, err)
	require.True(t, res[2].Duplicate)
	require.Equal(t, res[0].MessageID, res[2].MessageID)
	require.Equal(t, res[0].SequenceNumber, res[2].SequenceNumber)
	require.Less(t, res[0].SequenceNumber, res[1].SequenceNumber)
	require.Equal(t, []string{"1", "2"}, tpBodies(t, fq))
}

// TestTopicErrorSentinels checks that each topic sentinel is an *Error with SNS's code.
func TestTopicErrorSentinels(t *testing.T) {
	t.Parallel()
	for sentinel, code := range map[*fifoq.Error]string{
		topic.ErrInvalidName: "InvalidParameter", topic.ErrInvalidAttribute: "InvalidParameter",
		topic.ErrNotFound: "NotFound", topic.ErrSubscriptionNotFound: "NotFound",
		topic.ErrInvalidSubscription: "InvalidParameter", topic.ErrInvalidFilterPolicy: "InvalidParameter",
		topic.ErrInvalidFilterPolicyScope: "InvalidParameter", topic.ErrInvalidRedrivePolicy: "InvalidParameter",
		topic.ErrEmptyMessage: "InvalidParameter", topic.ErrInvalidMessage: "InvalidParameter",
		topic.ErrInvalidSubject: "InvalidParameter", topic.ErrMessageTooLarge: "InvalidParameter",
		topic.ErrInvalidMessageAttribute: "ParameterValueInvalid", topic.ErrMissingGroupID: "InvalidParameter",
		topic.ErrMissingDeduplicationID: "InvalidParameter", topic.ErrInvalidGroupID: "InvalidParameter",
		topic.ErrInvalidDeduplicationID: "InvalidParameter", topic.ErrEmptyBatch: "EmptyBatchRequest",
		topic.ErrTooManyEntries: "TooManyEntriesInBatchRequest", topic.ErrBatchTooLong: "BatchRequestTooLong",
	} {
		require.Equal(t, code, sentinel.Code, "%v", sentinel)
		require.Equal(t, code, fifoq.ErrorCode(sentinel), "%v", sentinel)
		require.True(t, strings.HasPrefix(sentinel.Error(), "topic: "), "%v", sentinel)
	}
}

// TestTopicDeletedQueue: a queue deleted from its store refuses the delivery, which goes to the dead-letter
// queue; the topic goes on delivering to its other queues.
func TestTopicDeletedQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eng, err := storagetest.NewDisk().Open()
	require.NoError(t, err)
	st, err := fifoq.OpenStore(eng, "disk")
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	q, err := fifoq.New("gone", fifoq.WithStore(st))
	require.NoError(t, err)
	dlq := tpQueue(t, "gone-dlq")
	other := tpQueue(t, "other")
	tp := tpTopic(t, "t")
	tpSubscribe(t, tp, q, topic.SubscriptionAttributes{RawMessageDelivery: true, DeadLetterQueue: dlq})
	tpSubscribe(t, tp, other, topic.SubscriptionAttributes{RawMessageDelivery: true})
	_, err = tp.Publish(ctx, topic.Message{Message: "before"})
	require.NoError(t, err)
	require.NoError(t, st.DeleteQueue("gone"))
	_, err = tp.Publish(ctx, topic.Message{Message: "after"})
	require.NoError(t, err)
	require.Equal(t, []string{"after"}, tpBodies(t, dlq))
	require.Equal(t, []string{"before", "after"}, tpBodies(t, other))
	m := tp.Metrics()
	require.Equal(t, uint64(3), m.Delivered)
	require.Equal(t, uint64(1), m.Failed)
	require.Equal(t, uint64(1), m.RedrivenToDLQ)
}

// TestTopicLogsFailedDeliveries: one record per failed delivery, at Warn when the dead-letter queue took the
// message and at Error when it is lost, with the documented keys.
func TestTopicLogsFailedDeliveries(t *testing.T) {
	t.Parallel()
	var buf strings.Builder
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	tp := tpTopic(t, "logged", topic.WithLogger(logger))
	tpSubscribe(t, tp, tpQueue(t, "small", fifoq.WithMaxMessageSize(1024)), topic.SubscriptionAttributes{DeadLetterQueue: tpQueue(t, "dlq")})
	tpSubscribe(t, tp, tpQueue(t, "lossy", fifoq.WithMaxMessageSize(1024)), topic.SubscriptionAttributes{})
	tpSubscribe(t, tp, tpQueue(t, "fine"), topic.SubscriptionAttributes{})
	res, err := tp.Publish(context.Background(), topic.Message{Message: strings.Repeat("x", 2000), GroupID: "g"})
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 2, "records:\n%s", buf.String())
	for _, want := range []string{`level=WARN`, `msg="fifoq: notification moved to the dead-letter queue"`, "topic=logged", "queue=small",
		"dead_letter_queue=dlq", "message_id=" + res.MessageID, "group=g", "subscription=arn:aws:sns:", "error="} {
		require.Contains(t, lines[0], want)
	}
	for _, want := range []string{`level=ERROR`, `msg="fifoq: notification lost"`, "queue=lossy", "error="} {
		require.Contains(t, lines[1], want)
	}
	require.NotContains(t, lines[1], "dead_letter_queue")
}

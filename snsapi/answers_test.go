package snsapi_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Tests of the answers of issue 35: SNS's texts and order, as recorded from AWS (LocalStack's AWS-validated
// snapshots of test_sns.py and test_sns_filter_policy.py, moto's SNS backend), each pinned exactly.

// fail calls an action that must fail and returns its status, code and message.
func (e *env) fail(action string, kv ...string) (int, string, string) {
	e.t.Helper()
	status, body := e.call(action, kv...)
	require.NotEqual(e.t, 200, status, "%s %v: %s", action, kv, body)
	return status, value(e.t, body, "Code"), value(e.t, body, "Message")
}

const redacted = "\n at [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: 1, column: "

// TestFilterPolicyAndJSONErrorTexts: filter-policy and JSON errors with Jackson's locations, as Subscribe and
// SetSubscriptionAttributes answer them (item 1).
func TestFilterPolicyAndJSONErrorTexts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := value(t, e.ok("CreateTopic", "Name", "t"), "TopicArn")
	q := "arn:aws:sqs:us-east-1:000000000000:q"
	sub := func(policy string) string {
		_, code, msg := e.fail("Subscribe", "TopicArn", topic, "Protocol", "sqs", "Endpoint", q,
			"Attributes.entry.1.key", "FilterPolicy", "Attributes.entry.1.value", policy)
		require.Equal(t, "InvalidParameter", code)
		return msg
	}
	require.Equal(t, "Invalid parameter: Attributes Reason: FilterPolicy: failed to parse JSON. Unrecognized token 'invalid': "+
		"was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')"+redacted+"8]", sub("invalid-json"))
	require.Equal(t, "Invalid parameter: Attributes Reason: FilterPolicy: Unrecognized match type wrong-operator\n at [Source: "+
		`(String)"{"key":[{"wrong-operator":true}]}"; line: 1, column: 31]`, sub(`{"key": [{"wrong-operator": true}]}`))
	require.Equal(t, "Invalid parameter: Attributes Reason: FilterPolicy: Filter policy can not have more than 5 keys",
		sub(`{"k1": ["v"], "k2": ["v"], "k3": ["v"], "k4": ["v"], "k5": ["v"], "k6": ["v"]}`))

	arn := value(t, e.ok("Subscribe", "TopicArn", topic, "Protocol", "sqs", "Endpoint", q), "SubscriptionArn")
	set := func(name, v string) string {
		_, code, msg := e.fail("SetSubscriptionAttributes", "SubscriptionArn", arn, "AttributeName", name, "AttributeValue", v)
		require.Equal(t, "InvalidParameter", code)
		return msg
	}
	const unexpected = "Unexpected character ('i' (code 105)): was expecting double-quote to start field name"
	require.Equal(t, "Invalid parameter: RedrivePolicy: failed to parse JSON. "+unexpected+redacted+"2]", set("RedrivePolicy", "{invalidjson}"))
	require.Equal(t, "Invalid parameter: FilterPolicy: failed to parse JSON. "+unexpected+redacted+"2]", set("FilterPolicy", "{invalidjson}"))
	require.Equal(t, "Invalid parameter: FilterPolicy: \"key_a\" must be an object or an array\n at [Source: "+
		`(String)"{"key_a":"value_one"}"; line: 1, column: 11]`, func() string {
		e.ok("SetSubscriptionAttributes", "SubscriptionArn", arn, "AttributeName", "FilterPolicyScope", "AttributeValue", "MessageBody")
		return set("FilterPolicy", `{"key_a": "value_one"}`)
	}())
	_, _, msg := e.fail("Subscribe", "TopicArn", topic, "Protocol", "sqs", "Endpoint", "arn:aws:sqs:us-east-1:000000000000:q2",
		"Attributes.entry.1.key", "RedrivePolicy", "Attributes.entry.1.value", "{invalidjson}")
	require.Equal(t, "Invalid parameter: Attributes Reason: RedrivePolicy: failed to parse JSON. "+unexpected+redacted+"2]", msg)
}

// TestSubscribeChecksAttributesFirst: Subscribe checks its attributes before it refuses a protocol fifoq does
// not deliver to (item 2).
func TestSubscribeChecksAttributesFirst(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := value(t, e.ok("CreateTopic", "Name", "t"), "TopicArn")
	for _, protocol := range []string{"email", "sms", "http", "lambda"} {
		_, _, msg := e.fail("Subscribe", "TopicArn", topic, "Protocol", protocol, "Endpoint", "x",
			"Attributes.entry.1.key", "FilterPolicy", "Attributes.entry.1.value", `{"key": []}`)
		require.Equal(t, "Invalid parameter: Attributes Reason: FilterPolicy: Empty arrays are not allowed\n at [Source: "+
			`(String)"{"key":[]}"; line: 1, column: 10]`, msg, protocol)
		_, _, msg = e.fail("Subscribe", "TopicArn", topic, "Protocol", protocol, "Endpoint", "x",
			"Attributes.entry.1.key", "RawMessageDelivery", "Attributes.entry.1.value", "maybe")
		require.Equal(t, "Invalid parameter: Attributes Reason: RawMessageDelivery: Invalid value [maybe]. Must be true or false.", msg, protocol)
		_, _, msg = e.fail("Subscribe", "TopicArn", topic, "Protocol", protocol, "Endpoint", "x",
			"Attributes.entry.1.key", "FilterPolicy", "Attributes.entry.1.value", `{"key": ["a"]}`)
		require.Equal(t, "Invalid parameter: Amazon SNS does not support this protocol string: "+protocol+
			" Reason: fifoq delivers to the sqs protocol only", msg, protocol)
	}
}

// TestCreateFIFOTopicName: FifoTopic=true with a name without .fifo, new or an existing standard topic's
// (item 5).
func TestCreateFIFOTopicName(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.ok("CreateTopic", "Name", "std")
	for _, name := range []string{"fresh", "std"} {
		status, code, msg := e.fail("CreateTopic", "Name", name, "Attributes.entry.1.key", "FifoTopic", "Attributes.entry.1.value", "true")
		require.Equal(t, 400, status)
		require.Equal(t, "InvalidParameter", code)
		require.Equal(t, "Invalid parameter: Topic Name", msg, name)
	}
	require.NotContains(t, e.ok("ListTopics"), "fresh")
}

// TestIdempotentReapplies: Subscribe and CreateTopic of what exists, as recorded from AWS
// (test_subscribe_idempotency, test_create_duplicate_topic_check_idempotency, ..._with_more_tags) (item 6).
func TestIdempotentReapplies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := value(t, e.ok("CreateTopic", "Name", "t"), "TopicArn")
	q := "arn:aws:sqs:us-east-1:000000000000:q"
	subscribe := func(attrs ...string) (int, string) {
		kv := []string{"TopicArn", topic, "Protocol", "sqs", "Endpoint", q}
		for i := 0; i < len(attrs); i += 2 {
			n := "Attributes.entry." + itoa(i/2+1)
			kv = append(kv, n+".key", attrs[i], n+".value", attrs[i+1])
		}
		return e.call("Subscribe", kv...)
	}
	_, body := subscribe("RawMessageDelivery", "true")
	arn := value(t, body, "SubscriptionArn")
	for _, attrs := range [][]string{
		{"RawMessageDelivery", "true"},
		{"RawMessageDelivery", "True"},
		{"RawMessageDelivery", "true", "FilterPolicyScope", "MessageAttributes"},
		{},
		{"FilterPolicyScope", "MessageAttributes"},
	} {
		status, body := subscribe(attrs...)
		require.Equal(t, 200, status, "%v: %s", attrs, body)
		require.Equal(t, arn, value(t, body, "SubscriptionArn"), "%v", attrs)
	}
	status, body := subscribe("RawMessageDelivery", "false", "FilterPolicyScope", "MessageBody")
	require.Equal(t, 400, status)
	require.Equal(t, "Invalid parameter: Attributes Reason: Subscription already exists with different attributes", value(t, body, "Message"))
	_, body = subscribe("FilterPolicy", `{"a": ["b"]}`)
	require.Equal(t, "Invalid parameter: Attributes Reason: Subscription already exists with different attributes", value(t, body, "Message"),
		"a filter policy given to a subscription without one")
	require.Contains(t, e.ok("GetSubscriptionAttributes", "SubscriptionArn", arn), "<value>true</value>", "nothing changed")
	require.NotContains(t, e.ok("GetSubscriptionAttributes", "SubscriptionArn", arn), "FilterPolicy")

	// A filter policy equals the same JSON, however it is spaced.
	fq := "arn:aws:sqs:us-east-1:000000000000:f"
	first := value(t, e.ok("Subscribe", "TopicArn", topic, "Protocol", "sqs", "Endpoint", fq,
		"Attributes.entry.1.key", "FilterPolicy", "Attributes.entry.1.value", `{"a": ["b"], "c": [1]}`), "SubscriptionArn")
	again := value(t, e.ok("Subscribe", "TopicArn", topic, "Protocol", "sqs", "Endpoint", fq,
		"Attributes.entry.1.key", "FilterPolicy", "Attributes.entry.1.value", `{"c":[1.0],"a":["b"]}`), "SubscriptionArn")
	require.Equal(t, first, again)

	tags := []string{"Tags.member.1.Key", "a", "Tags.member.1.Value", "1", "Tags.member.2.Key", "b", "Tags.member.2.Value", "2"}
	tagged := value(t, e.ok("CreateTopic", append([]string{"Name", "tagged"}, tags...)...), "TopicArn")
	for _, again := range [][]string{tags, tags[:4], {}} {
		require.Equal(t, tagged, value(t, e.ok("CreateTopic", append([]string{"Name", "tagged"}, again...)...), "TopicArn"), "%v", again)
	}
	listed := e.ok("ListTagsForResource", "ResourceArn", tagged)
	require.Contains(t, listed, "<Key>b</Key>", "a subset of the tags leaves the others")
	_, _, msg := e.fail("CreateTopic", "Name", "tagged", "Tags.member.1.Key", "a", "Tags.member.1.Value", "other")
	require.Equal(t, "Invalid parameter: Tags Reason: Topic already exists with different tags", msg)
	_, _, msg = e.fail("CreateTopic", "Name", "t", "Tags.member.1.Key", "key1", "Tags.member.1.Value", "value1")
	require.Equal(t, "Invalid parameter: Tags Reason: Topic already exists with different tags", msg)
}

// TestPublishTraceHeader: a publish's X-Amzn-Trace-Id reaches SQS as AWSTraceHeader, from Publish and from
// PublishBatch (item 7).
func TestPublishTraceHeader(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const trace = "Root=1-3152b799-8954dae64eda91bc9a23a7e8;Parent=7fa8c0f79203be72;Sampled=1"
	topic := value(t, e.ok("CreateTopic", "Name", "t"), "TopicArn")
	e.ok("CreateQueue", "QueueName", "q")
	e.ok("Subscribe", "TopicArn", topic, "Protocol", "sqs", "Endpoint", "arn:aws:sqs:us-east-1:000000000000:q")
	h := http.Header{"X-Amzn-Trace-Id": {trace}}
	status, body := e.callWith(h, "Publish", "TopicArn", topic, "Message", "X-Ray propagation test msg")
	require.Equal(t, 200, status, body)
	status, body = e.callWith(h, "PublishBatch", "TopicArn", topic, "PublishBatchRequestEntries.member.1.Id", "1",
		"PublishBatchRequestEntries.member.1.Message", "batched")
	require.Equal(t, 200, status, body)
	for range 2 {
		got := e.ok("ReceiveMessage", "QueueUrl", e.url+"/000000000000/q", "AttributeName.1", "All", "VisibilityTimeout", "60")
		require.Contains(t, got, "<Name>AWSTraceHeader</Name>")
		require.Contains(t, got, "<Value>"+trace+"</Value>")
	}
}

// TestAddPermissionOrder: the topic, then an existing label, then each action name (item 8).
func TestAddPermissionOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := value(t, e.ok("CreateTopic", "Name", "t"), "TopicArn")
	add := func(topicARN, label, action string) (int, string) {
		return e.call("AddPermission", "TopicArn", topicARN, "Label", label, "AWSAccountId.member.1", "123456789012",
			"ActionName.member.1", action)
	}
	e.ok("AddPermission", "TopicArn", topic, "Label", "pub", "AWSAccountId.member.1", "123456789012", "ActionName.member.1", "Publish")
	for _, c := range []struct {
		topic, label, action string
		status               int
		message              string
	}{
		{topic + "-none", "pub", "Bogus", 404, "Topic does not exist"},
		{topic, "pub", "Bogus", 400, "Invalid parameter: Statement already exists"},
		{topic, "new", "Bogus", 400, "Invalid parameter: Policy statement action out of service scope!"},
		{topic, "new", "CreateTopic", 400, "Invalid parameter: Policy statement action out of service scope!"},
		{topic, "new", "*", 400, "Invalid parameter: Policy statement action out of service scope!"},
	} {
		status, body := add(c.topic, c.label, c.action)
		require.Equal(t, c.status, status, "%+v: %s", c, body)
		require.Equal(t, c.message, value(t, body, "Message"), "%+v", c)
	}
	for _, action := range []string{"Subscribe", "AddPermission", "Receive"} {
		status, body := add(topic, "l-"+action, action)
		require.Equal(t, 200, status, "%s: %s", action, body)
	}
}

// TestPublishStructureAndBatchIDs: MessageStructure before the FIFO ids, in Publish and PublishBatch; the
// ids of batch entries; and a bad entry fails the whole batch, publishing nothing (item 9).
func TestPublishStructureAndBatchIDs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fifo := value(t, e.ok("CreateTopic", "Name", "f.fifo", "Attributes.entry.1.key", "FifoTopic", "Attributes.entry.1.value", "true"), "TopicArn")
	const noDefault = "Invalid parameter: Message Structure - No default entry in JSON message body"
	_, code, msg := e.fail("Publish", "TopicArn", fifo, "Message", `{"sqs": "test sqs"}`, "MessageStructure", "json")
	require.Equal(t, "InvalidParameter", code)
	require.Equal(t, noDefault, msg)
	_, code, msg = e.fail("PublishBatch", "TopicArn", fifo, "PublishBatchRequestEntries.member.1.Id", "1",
		"PublishBatchRequestEntries.member.1.Message", `{"sqs": "test sqs"}`, "PublishBatchRequestEntries.member.1.MessageStructure", "json")
	require.Equal(t, "InvalidParameter", code)
	require.Equal(t, noDefault, msg)

	topic := value(t, e.ok("CreateTopic", "Name", "t"), "TopicArn")
	e.ok("CreateQueue", "QueueName", "q")
	e.ok("Subscribe", "TopicArn", topic, "Protocol", "sqs", "Endpoint", "arn:aws:sqs:us-east-1:000000000000:q",
		"Attributes.entry.1.key", "RawMessageDelivery", "Attributes.entry.1.value", "true")
	batch := func(ids ...string) []string {
		kv := []string{"TopicArn", topic}
		for i, id := range ids {
			p := "PublishBatchRequestEntries.member." + itoa(i+1) + "."
			kv = append(kv, p+"Id", id, p+"Message", "m"+itoa(i))
		}
		return kv
	}
	long := strings.Repeat("a", 81)
	for _, c := range []struct {
		ids           []string
		code, message string
	}{
		{[]string{"ok", "bad id!"}, "InvalidBatchEntryId", "The Id of a batch entry in the batch request contains an impermissible character: bad id!"},
		{[]string{long}, "InvalidBatchEntryId", "The Id of a batch entry in the batch request is too long: " + long},
		{[]string{"bad.id", "bad.id"}, "BatchEntryIdsNotDistinct", "Two or more batch entries in the request have the same Id."},
	} {
		status, code, msg := e.fail("PublishBatch", batch(c.ids...)...)
		require.Equal(t, 400, status)
		require.Equal(t, c.code, code, "%v", c.ids)
		require.Equal(t, c.message, msg, "%v", c.ids)
	}
	require.Contains(t, e.ok("PublishBatch", batch("a-b_C9", strings.Repeat("z", 80))...), "<Id>a-b_C9</Id>")
	require.Equal(t, []string{"m0", "m1"}, e.receive("q"))

	_, _, msg = e.fail("PublishBatch", "TopicArn", topic,
		"PublishBatchRequestEntries.member.1.Id", "1", "PublishBatchRequestEntries.member.1.Message", "good",
		"PublishBatchRequestEntries.member.2.Id", "2", "PublishBatchRequestEntries.member.2.Message", "")
	require.Equal(t, "Invalid parameter: Empty message", msg)
	require.Empty(t, e.receive("q"), "a batch with a bad entry publishes none of its entries")
}

// TestConfirmSubscriptionTokenFirst: the token is checked before the topic, as recorded from AWS
// (test_sns_confirm_subscription_wrong_token, test_subscribe_external_http_endpoint) (item 10).
func TestConfirmSubscriptionTokenFirst(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := value(t, e.ok("CreateTopic", "Name", "t"), "TopicArn")
	const hexToken = "51b2ff3edb475b7d91550e0ab6edf0c1de2a34e6ebaf6c2262a001bcb7e051c43aa00022ceecce70bd2a67b2042da8d8eb47f"
	for _, c := range []struct{ topic, token, message string }{
		{topic[:len(topic)-1] + "i", hexToken, "Invalid parameter: Token"},
		{topic, "randomtoken", "Invalid token"},
		{topic, hexToken, "Invalid parameter: Token"},
		{"broken", hexToken, "Invalid parameter: Topic"},
		{"arn:aws:sns:eu-west-1:000000000000:t", hexToken, "Invalid parameter: Topic"},
		{"broken", "randomtoken", "Invalid token"},
	} {
		status, code, msg := e.fail("ConfirmSubscription", "TopicArn", c.topic, "Token", c.token)
		require.Equal(t, 400, status)
		require.Equal(t, "InvalidParameter", code)
		require.Equal(t, c.message, msg, "%+v", c)
	}
}

// TestEmptyARNParameters: an ARN parameter given empty is an ARN of one element; one not given has no value
// (item 11).
func TestEmptyARNParameters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const one = "Invalid parameter: TopicArn Reason: An ARN must have at least 6 elements, not 1"
	for _, action := range []string{"Publish", "GetTopicAttributes", "Subscribe", "PublishBatch"} {
		_, code, msg := e.fail(action, "TopicArn", "", "Message", "m", "Protocol", "sqs")
		require.Equal(t, "InvalidParameter", code)
		require.Equal(t, one, msg, action)
	}
	_, _, msg := e.fail("GetTopicAttributes")
	require.Equal(t, "Invalid parameter: TopicArn Reason: no value for required parameter", msg)
	_, _, msg = e.fail("Unsubscribe", "SubscriptionArn", "")
	require.Equal(t, "Invalid parameter: SubscriptionArn Reason: no value for required parameter", msg)
}

// TestDeliveryPolicyNormalised: a topic's DeliveryPolicy reads back as SNS stores it, as recorded from AWS
// (test_topic_delivery_policy_crud, test_subscribe_external_http_endpoint_content_type) (item 12).
func TestDeliveryPolicyNormalised(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := value(t, e.ok("CreateTopic", "Name", "t.fifo", "Attributes.entry.1.key", "FifoTopic", "Attributes.entry.1.value", "true",
		"Attributes.entry.2.key", "DeliveryPolicy", "Attributes.entry.2.value", `{"http": {"defaultRequestPolicy": {"headerContentType": "application/json"}}}`), "TopicArn")
	policy := func() string {
		body := e.ok("GetTopicAttributes", "TopicArn", topic)
		i := strings.Index(body, "<key>DeliveryPolicy</key>")
		if i < 0 {
			return ""
		}
		return value(t, body[i:], "value")
	}
	require.Equal(t, `{"http":{"disableSubscriptionOverrides":false,"defaultRequestPolicy":{"headerContentType":"application/json"}}}`, policy())
	for _, c := range []struct{ set, want string }{
		{`{"http": {"defaultHealthyRetryPolicy": {"minDelayTarget": 5, "maxDelayTarget": 6, "numRetries": 1}}}`,
			`{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":5,"maxDelayTarget":6,"numRetries":1},"disableSubscriptionOverrides":false}}`},
		{`{"http": {"defaultHealthyRetryPolicy": null}}`, `{"http":{"disableSubscriptionOverrides":false}}`},
		{`{"http": {"disableSubscriptionOverrides": true, "defaultHealthyRetryPolicy": {"numRetries": 2, "backoffFunction": null}}}`,
			`{"http":{"defaultHealthyRetryPolicy":{"numRetries":2},"disableSubscriptionOverrides":true}}`},
		{"", ""},
	} {
		e.ok("SetTopicAttributes", "TopicArn", topic, "AttributeName", "DeliveryPolicy", "AttributeValue", c.set)
		require.Equal(t, c.want, policy(), c.set)
	}
	// The same policy given again to CreateTopic is the topic's.
	e.ok("SetTopicAttributes", "TopicArn", topic, "AttributeName", "DeliveryPolicy", "AttributeValue", `{"http": {}}`)
	e.ok("CreateTopic", "Name", "t.fifo", "Attributes.entry.1.key", "FifoTopic", "Attributes.entry.1.value", "true",
		"Attributes.entry.2.key", "DeliveryPolicy", "Attributes.entry.2.value", `{"http":{ }}`)
}

// TestDataProtectionPolicy: PutDataProtectionPolicy and GetDataProtectionPolicy store and return the
// document (item 13).
func TestDataProtectionPolicy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := value(t, e.ok("CreateTopic", "Name", "t"), "TopicArn")
	require.Equal(t, "", value(t, e.ok("GetDataProtectionPolicy", "ResourceArn", topic), "DataProtectionPolicy"))
	const doc = `{"Name":"basic","Description":"","Version":"2021-06-01","Statement":[{"Sid":"audit","DataDirection":"Inbound",` +
		`"Principal":["*"],"DataIdentifier":["arn:aws:dataprotection::aws:data-identifier/EmailAddress"],"Operation":{"Audit":{"SampleRate":"99"}}}]}`
	body := e.ok("PutDataProtectionPolicy", "ResourceArn", topic, "DataProtectionPolicy", doc)
	require.NotContains(t, body, "Result")
	require.Equal(t, doc, value(t, e.ok("GetDataProtectionPolicy", "ResourceArn", topic), "DataProtectionPolicy"))
	require.Contains(t, e.ok("GetTopicAttributes", "TopicArn", topic), "<key>DataProtectionPolicy</key>")

	_, body = e.call("Publish", "TopicArn", topic, "Message", "mail me at someone@example.com")
	require.NotContains(t, body, "Error", "no masking or denial")
	_, _, msg := e.fail("PutDataProtectionPolicy", "ResourceArn", topic, "DataProtectionPolicy", "{")
	require.Equal(t, "Invalid parameter: DataProtectionPolicy Reason: failed to parse JSON", msg)
	status, _, msg := e.fail("GetDataProtectionPolicy", "ResourceArn", topic+"-none")
	require.Equal(t, 404, status)
	require.Equal(t, "Topic does not exist", msg)
	e.ok("PutDataProtectionPolicy", "ResourceArn", topic, "DataProtectionPolicy", "")
	require.Equal(t, "", value(t, e.ok("GetDataProtectionPolicy", "ResourceArn", topic), "DataProtectionPolicy"))
}

func itoa(n int) string { return strconv.Itoa(n) }

package topic_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/topic"
)

// Tests of the filter policy language: one table per operator, from the examples of SNS's documentation
// (subscription filter policies, string, numeric and key matching, AND/OR logic), and the checks SNS makes
// when a policy is set, with the texts SNS answers (as recorded from AWS by LocalStack's validated tests).

// fpStr, fpNum, fpArr and fpBin make message attributes.
func fpStr(v string) fifoq.Attribute { return fifoq.Attribute{DataType: "String", StringValue: v} }
func fpNum(v string) fifoq.Attribute { return fifoq.Attribute{DataType: "Number", StringValue: v} }
func fpArr(v string) fifoq.Attribute {
	return fifoq.Attribute{DataType: "String.Array", StringValue: v}
}
func fpBin(v string) fifoq.Attribute {
	return fifoq.Attribute{DataType: "Binary", BinaryValue: []byte(v)}
}

// fpAttrs is a message with the given attributes.
func fpAttrs(kv ...any) topic.Message {
	m := topic.Message{Message: "m", Attributes: map[string]fifoq.Attribute{}}
	for i := 0; i < len(kv); i += 2 {
		m.Attributes[kv[i].(string)] = kv[i+1].(fifoq.Attribute)
	}
	return m
}

// fpBody is a message with the given body.
func fpBody(body string) topic.Message { return topic.Message{Message: body} }

// fpCase is one message and whether the policy of its table matches it.
type fpCase struct {
	name  string
	msg   topic.Message
	match bool
}

// fpRun checks that policy, in scope, matches the messages it should and no other.
func fpRun(t *testing.T, policy string, scope topic.FilterPolicyScope, cases []fpCase) {
	t.Helper()
	p, err := topic.ParseFilterPolicy(policy, scope)
	require.NoError(t, err, "policy %s", policy)
	for _, c := range cases {
		require.Equal(t, c.match, p.Match(c.msg), "policy %s, scope %s, message %s: match", policy, scope, c.name)
	}
}

func TestFilterPolicyExactString(t *testing.T) {
	t.Parallel()
	fpRun(t, `{"customer_interests": ["rugby", "tennis"]}`, "", []fpCase{
		{"rugby", fpAttrs("customer_interests", fpStr("rugby")), true},
		{"tennis", fpAttrs("customer_interests", fpStr("tennis")), true},
		{"array with rugby", fpAttrs("customer_interests", fpArr(`["rugby", "tennis"]`)), true},
		{"baseball", fpAttrs("customer_interests", fpStr("baseball")), false},
		{"array of baseball", fpAttrs("customer_interests", fpArr(`["baseball"]`)), false},
		{"case differs", fpAttrs("customer_interests", fpStr("Rugby")), false},
		{"other attribute", fpAttrs("sport", fpStr("rugby")), false},
		{"no attributes", fpAttrs(), false},
		{"binary is ignored", fpAttrs("customer_interests", fpBin("rugby")), false},
	})
	fpRun(t, `{"customer_interests": ["rugby", "tennis"]}`, topic.FilterPolicyScopeMessageBody, []fpCase{
		{"rugby", fpBody(`{"customer_interests": "rugby"}`), true},
		{"tennis in an array", fpBody(`{"customer_interests": ["baseball", "tennis"]}`), true},
		{"baseball", fpBody(`{"customer_interests": "baseball"}`), false},
		{"not JSON", fpBody(`rugby`), false},
		{"JSON, not an object", fpBody(`"rugby"`), false},
	})
}

func TestFilterPolicyPrefixSuffixIgnoreCase(t *testing.T) {
	t.Parallel()
	fpRun(t, `{"customer_interests": [{"prefix": "bas"}]}`, "", []fpCase{
		{"baseball", fpAttrs("customer_interests", fpStr("baseball")), true},
		{"basketball", fpAttrs("customer_interests", fpStr("basketball")), true},
		{"rugby", fpAttrs("customer_interests", fpStr("rugby")), false},
		{"contains, does not start with", fpAttrs("customer_interests", fpStr("debase")), false},
		{"a number is not a string", fpAttrs("customer_interests", fpNum("300")), false},
	})
	fpRun(t, `{"customer_interests": [{"suffix": "ball"}]}`, "", []fpCase{
		{"baseball", fpAttrs("customer_interests", fpStr("baseball")), true},
		{"basketball", fpAttrs("customer_interests", fpStr("basketball")), true},
		{"rugby", fpAttrs("customer_interests", fpStr("rugby")), false},
		{"contains, does not end with", fpAttrs("customer_interests", fpStr("ballroom")), false},
	})
	fpRun(t, `{"customer_interests": [{"equals-ignore-case": "tennis"}]}`, "", []fpCase{
		{"TENNIS", fpAttrs("customer_interests", fpStr("TENNIS")), true},
		{"Tennis", fpAttrs("customer_interests", fpStr("Tennis")), true},
		{"tennis", fpAttrs("customer_interests", fpStr("tennis")), true},
		{"baseball", fpAttrs("customer_interests", fpStr("baseball")), false},
	})
	fpRun(t, `{"customer_interests": [{"suffix": "ball"}]}`, topic.FilterPolicyScopeMessageBody, []fpCase{
		{"baseball", fpBody(`{"customer_interests": "baseball"}`), true},
		{"rugby", fpBody(`{"customer_interests": "rugby"}`), false},
	})
}

func TestFilterPolicyAnythingBut(t *testing.T) {
	t.Parallel()
	fpRun(t, `{"customer_interests": [{"anything-but": ["rugby", "tennis"]}]}`, "", []fpCase{
		{"baseball", fpAttrs("customer_interests", fpStr("baseball")), true},
		{"football", fpAttrs("customer_interests", fpStr("football")), true},
		{"array with a value not listed", fpAttrs("customer_interests", fpArr(`["rugby", "baseball"]`)), true},
		{"rugby", fpAttrs("customer_interests", fpStr("rugby")), false},
		{"array of listed values only", fpAttrs("customer_interests", fpArr(`["rugby", "tennis"]`)), false},
		{"absent", fpAttrs("other", fpStr("baseball")), false},
	})
	fpRun(t, `{"customer_interests": [{"anything-but": "rugby"}]}`, "", []fpCase{
		{"tennis", fpAttrs("customer_interests", fpStr("tennis")), true},
		{"rugby", fpAttrs("customer_interests", fpStr("rugby")), false},
	})
	fpRun(t, `{"event": [{"anything-but": {"prefix": "order-"}}]}`, "", []fpCase{
		{"data-entry", fpAttrs("event", fpStr("data-entry")), true},
		{"order_number", fpAttrs("event", fpStr("order_number")), true},
		{"order-cancelled", fpAttrs("event", fpStr("order-cancelled")), false},
	})
	fpRun(t, `{"price": [{"anything-but": [100, 500]}]}`, "", []fpCase{
		{"101", fpAttrs("price", fpNum("101")), true},
		{"100.1", fpAttrs("price", fpNum("100.1")), true},
		{"array with 50", fpAttrs("price", fpArr(`[100, 50]`)), true},
		{"100", fpAttrs("price", fpNum("100")), false},
		{"1e2", fpAttrs("price", fpNum("1e2")), false},
		{"500.0", fpAttrs("price", fpNum("500.0")), false},
	})
	// anything-but combined with exists:false, as SNS's documentation suggests: absent or not rugby.
	fpRun(t, `{"customer_interests": [{"anything-but": "rugby"}, {"exists": false}]}`, "", []fpCase{
		{"absent", fpAttrs("other", fpStr("x")), true},
		{"tennis", fpAttrs("customer_interests", fpStr("tennis")), true},
		{"rugby", fpAttrs("customer_interests", fpStr("rugby")), false},
	})
	fpRun(t, `{"price": [{"anything-but": [100, 500]}]}`, topic.FilterPolicyScopeMessageBody, []fpCase{
		{"101", fpBody(`{"price": 101}`), true},
		{"array with 50", fpBody(`{"price": [100, 50]}`), true},
		{"100", fpBody(`{"price": 100}`), false},
	})
}

func TestFilterPolicyNumeric(t *testing.T) {
	t.Parallel()
	fpRun(t, `{"price_usd": [{"numeric": ["=", 301.5]}]}`, "", []fpCase{
		{"301.5", fpAttrs("price_usd", fpNum("301.5")), true},
		{"3.015e2", fpAttrs("price_usd", fpNum("3.015e2")), true},
		{"301.6", fpAttrs("price_usd", fpNum("301.6")), false},
		{"a string is not a number", fpAttrs("price_usd", fpStr("301.5")), false},
	})
	fpRun(t, `{"price_usd": [{"numeric": ["<", 0]}]}`, "", []fpCase{
		{"-1", fpAttrs("price_usd", fpNum("-1")), true},
		{"0", fpAttrs("price_usd", fpNum("0")), false},
	})
	fpRun(t, `{"price_usd": [{"numeric": [">", 0, "<=", 150]}]}`, "", []fpCase{
		{"150", fpAttrs("price_usd", fpNum("150")), true},
		{"0.01", fpAttrs("price_usd", fpNum("0.01")), true},
		{"0", fpAttrs("price_usd", fpNum("0")), false},
		{"150.01", fpAttrs("price_usd", fpNum("150.01")), false},
	})
	fpRun(t, `{"price_usd": [{"numeric": [">=", 10, "<", 20]}]}`, "", []fpCase{
		{"10", fpAttrs("price_usd", fpNum("10")), true},
		{"19.99", fpAttrs("price_usd", fpNum("19.99")), true},
		{"20", fpAttrs("price_usd", fpNum("20")), false},
	})
	fpRun(t, `{"price_usd": [300]}`, "", []fpCase{
		{"300", fpAttrs("price_usd", fpNum("300")), true},
		{"3e2", fpAttrs("price_usd", fpNum("3e2")), true},
		{"string 300", fpAttrs("price_usd", fpStr("300")), false},
	})
	fpRun(t, `{"price_usd": [{"numeric": ["=", 301.5]}]}`, topic.FilterPolicyScopeMessageBody, []fpCase{
		{"301.5", fpBody(`{"price_usd": 301.5}`), true},
		{"3.015e2", fpBody(`{"price_usd": 3.015e2}`), true},
		{"string", fpBody(`{"price_usd": "301.5"}`), false},
	})
}

func TestFilterPolicyExists(t *testing.T) {
	t.Parallel()
	fpRun(t, `{"store": [{"exists": true}]}`, "", []fpCase{
		{"store and def", fpAttrs("store", fpNum("99"), "def", fpNum("99")), true},
		{"only attr1", fpAttrs("attr1", fpNum("111")), false},
		{"binary store is ignored", fpAttrs("store", fpBin("x")), false},
	})
	fpRun(t, `{"store": [{"exists": false}]}`, "", []fpCase{
		{"only def", fpAttrs("def", fpNum("99")), true},
		{"no attributes", fpAttrs(), true},
		{"store and def", fpAttrs("store", fpNum("99"), "def", fpNum("99")), false},
	})
	// The body policy of SNS's payload-filtering announcement, as recorded from AWS.
	fpRun(t, `{"object": {"key": [{"prefix": "auto-"}, "hardcodedvalue"], "nested_key": [{"exists": false}]}, "test": [{"exists": false}]}`,
		topic.FilterPolicyScopeMessageBody, []fpCase{
			{"auto-test", fpBody(`{"object": {"key": "auto-test"}}`), true},
			{"hardcodedvalue", fpBody(`{"object": {"key": "hardcodedvalue"}}`), true},
			{"test-auto", fpBody(`{"object": {"key": "test-auto"}}`), false},
			{"with test", fpBody(`{"object": {"key": "auto-test"}, "test": "just-exists"}`), false},
			{"with nested_key", fpBody(`{"object": {"key": "auto-test", "nested_key": "just-exists"}}`), false},
			{"no key", fpBody(`{"object": {"test": "auto-test"}}`), false},
			{"no object", fpBody(`{"test": "auto-test"}`), false},
			{"not JSON", fpBody(`Regular string message`), false},
		})
	// A null value exists in a body; an attribute of that name never does.
	fpRun(t, `{"a": [{"exists": true}]}`, topic.FilterPolicyScopeMessageBody, []fpCase{
		{"null", fpBody(`{"a": null}`), true},
		{"empty array", fpBody(`{"a": []}`), false},
	})
}

func TestFilterPolicyNullAndBooleans(t *testing.T) {
	t.Parallel()
	// As recorded from AWS: null does not match a missing attribute, nor does anything-but.
	fpRun(t, `{"attr1": [null, {"anything-but": "whatever"}]}`, "", []fpCase{
		{"no attributes", fpAttrs(), false},
		{"attr1 other", fpAttrs("attr1", fpStr("x")), true},
		{"attr1 whatever", fpAttrs("attr1", fpStr("whatever")), false},
		{"null in an array", fpAttrs("attr1", fpArr(`[null]`)), true},
	})
	fpRun(t, `{"flag": [true], "gone": [null]}`, topic.FilterPolicyScopeMessageBody, []fpCase{
		{"true and null", fpBody(`{"flag": true, "gone": null}`), true},
		{"false", fpBody(`{"flag": false, "gone": null}`), false},
		{"string true", fpBody(`{"flag": "true", "gone": null}`), false},
	})
}

func TestFilterPolicyCIDR(t *testing.T) {
	t.Parallel()
	fpRun(t, `{"source_ip": [{"cidr": "10.0.0.0/24"}]}`, "", []fpCase{
		{"10.0.0.0", fpAttrs("source_ip", fpStr("10.0.0.0")), true},
		{"10.0.0.255", fpAttrs("source_ip", fpStr("10.0.0.255")), true},
		{"10.1.1.0", fpAttrs("source_ip", fpStr("10.1.1.0")), false},
		{"not an address", fpAttrs("source_ip", fpStr("ten")), false},
	})
}

func TestFilterPolicyAndOr(t *testing.T) {
	t.Parallel()
	fpRun(t, `{"customer_interests": ["rugby"], "price_usd": [{"numeric": [">", 100]}]}`, "", []fpCase{
		{"both", fpAttrs("customer_interests", fpStr("rugby"), "price_usd", fpNum("101")), true},
		{"cheap", fpAttrs("customer_interests", fpStr("rugby"), "price_usd", fpNum("100")), false},
		{"no price", fpAttrs("customer_interests", fpStr("rugby")), false},
	})
	fpRun(t, `{"source": ["aws.cloudwatch"], "$or": [{"metricName": ["CPUUtilization"]}, {"namespace": ["AWS/EC2"]}]}`, "", []fpCase{
		{"metricName", fpAttrs("source", fpStr("aws.cloudwatch"), "metricName", fpStr("CPUUtilization")), true},
		{"namespace", fpAttrs("source", fpStr("aws.cloudwatch"), "namespace", fpStr("AWS/EC2")), true},
		{"neither", fpAttrs("source", fpStr("aws.cloudwatch"), "namespace", fpStr("AWS/ES")), false},
		{"no source", fpAttrs("metricName", fpStr("CPUUtilization")), false},
	})
	// "$or" with an array of values, not of two objects or more, is an ordinary attribute name.
	fpRun(t, `{"source": ["aws.cloudwatch"], "$or": ["metricName", "namespace"]}`, "", []fpCase{
		{"attribute $or", fpAttrs("source", fpStr("aws.cloudwatch"), "$or", fpStr("namespace")), true},
		{"metricName", fpAttrs("source", fpStr("aws.cloudwatch"), "metricName", fpStr("CPUUtilization")), false},
	})
	// The nested $or policy of LocalStack's AWS-validated test: 7 of its 12 messages pass.
	policy := `{"$or": [{"metricName": ["CPUUtilization", "ReadLatency"]}, {"namespace": ["AWS/EC2", "AWS/ES"]}],
		"detail": {"scope": ["Service"], "$or": [{"source": ["aws.cloudwatch"]}, {"type": ["CloudWatch Alarm State Change"]}]}}`
	fpRun(t, policy, topic.FilterPolicyScopeMessageBody, []fpCase{
		{"1", fpBody(`{"metricName": "CPUUtilization", "detail": {"scope": "aws.cloudwatch", "type": "CloudWatch Alarm State Change"}}`), false},
		{"2", fpBody(`{"metricName": "CPUUtilization", "detail": {"scope": "Service", "type": "CPUUtilization"}}`), false},
		{"3", fpBody(`{"metricName": "CPUUtilization", "detail": {"type": "CloudWatch Alarm State Change"}}`), false},
		{"4", fpBody(`{"metricName": "CPUUtilization", "detail": {"scope": "Service"}}`), false},
		{"5", fpBody(`{"metricName": "CPUUtilization", "scope": "Service"}`), false},
		{"6", fpBody(`{"metricName": "CPUUtilization", "detail": {"scope": "Service", "source": "aws.cloudwatch"}}`), true},
		{"7", fpBody(`{"metricName": "ReadLatency", "detail": {"scope": "Service", "source": "aws.cloudwatch"}}`), true},
		{"8", fpBody(`{"namespace": "AWS/EC2", "detail": {"scope": "Service", "source": "aws.cloudwatch"}}`), true},
		{"9", fpBody(`{"namespace": "AWS/ES", "detail": {"scope": "Service", "source": "aws.cloudwatch"}}`), true},
		{"10", fpBody(`{"metricName": "CPUUtilization", "detail": {"scope": "Service", "type": "CloudWatch Alarm State Change"}}`), true},
		{"11", fpBody(`{"metricName": "AWS/EC2", "detail": {"scope": "Service", "type": "CloudWatch Alarm State Change"}}`), false},
		{"12", fpBody(`{"namespace": "CPUUtilization", "detail": {"scope": "Service", "type": "CloudWatch Alarm State Change"}}`), false},
	})
}

func TestFilterPolicyNestedKeysAndArrays(t *testing.T) {
	t.Parallel()
	// As recorded from AWS: a dotted key and nested keys name the same path, both in policies and bodies.
	fpRun(t, `{"object.nested": ["string.value"]}`, topic.FilterPolicyScopeMessageBody, []fpCase{
		{"nested", fpBody(`{"object": {"nested": "string.value"}}`), true},
		{"dotted", fpBody(`{"object.nested": "string.value"}`), true},
		{"other value", fpBody(`{"object": {"nested": "test-auto"}}`), false},
	})
	fpRun(t, `{"object": {"nested.test": ["string.value"]}}`, topic.FilterPolicyScopeMessageBody, []fpCase{
		{"nested", fpBody(`{"object": {"nested": {"test": "string.value"}}}`), true},
		{"dotted", fpBody(`{"object.nested.test": "string.value"}`), true},
		{"half dotted", fpBody(`{"object.nested": {"test": "string.value"}}`), true},
		{"other value", fpBody(`{"object": {"nested": {"test": "string.notvalue"}}}`), false},
	})
	fpRun(t, `{"headers": {"route-to": ["queue1"]}}`, topic.FilterPolicyScopeMessageBody, []fpCase{
		{"queue3", fpBody(`{"headers": {"route-to": ["queue3"]}}`), false},
		{"queue1", fpBody(`{"headers": {"route-to": ["queue1"]}}`), true},
		{"queue2", fpBody(`{"headers": {"route-to": ["queue2"]}}`), false},
		{"both", fpBody(`{"headers": {"route-to": ["queue1", "queue2"]}}`), true},
	})
	// Arrays of objects, at any depth, as recorded from AWS with S3 events.
	fpRun(t, `{"Records": {"s3": {"object": {"key": [{"prefix": "auto-"}]}}, "eventName": [{"prefix": "ObjectCreated:"}]}}`,
		topic.FilterPolicyScopeMessageBody, []fpCase{
			{"two records", fpBody(`{"Records": [{"eventName": "ObjectCreated:Put", "s3": {"object": [[{"key": "auto-insurance-2314.xml"}]]}},
				{"eventName": "ObjectRemoved:Delete", "s3": {"object": {"key": "home-insurance-2314.xml"}}}]}`), true},
			{"removed", fpBody(`{"Records": [{"eventName": "ObjectRemoved:Delete", "s3": {"object": {"key": "auto-insurance-2314.xml"}}}]}`), false},
			{"home", fpBody(`{"Records": [{"eventName": "ObjectCreated:Put", "s3": {"object": {"key": "home-insurance-2314.xml"}}}]}`), false},
			{"created", fpBody(`{"Records": [{"eventName": "ObjectCreated:Put", "s3": {"object": {"key": "auto-insurance-2314.xml"}}}]}`), true},
		})
}

// TestFilterPolicyInvalid checks the policies SNS refuses, each with the text SNS answers a
// SetSubscriptionAttributes call before the location its rule compiler adds ("\n at [Source: ...]", which
// TestFilterPolicyErrorLocations checks).
func TestFilterPolicyInvalid(t *testing.T) {
	t.Parallel()
	many := make([]string, 151)
	for i := range many {
		many[i] = fmt.Sprintf("%q", fmt.Sprint("value", i))
	}
	cases := []struct {
		policy string
		scope  topic.FilterPolicyScope
		want   string // after "Invalid parameter: "
	}{
		{`{"key": [["value"]]}`, "", "FilterPolicy: Match value must be String, number, true, false, or null"},
		{`{"key": [{"wrong-operator": true}]}`, "", "FilterPolicy: Unrecognized match type wrong-operator"},
		{`{"key": [{"suffix": "value", "prefix": "value2"}]}`, "", "FilterPolicy: Only one key allowed in match expression"},
		{`{"key": [{"suffix": 100}]}`, "", "FilterPolicy: suffix match pattern must be a string"},
		{`{"key": [{"suffix": null}]}`, "", "FilterPolicy: suffix match pattern must be a string"},
		{`{"key": {"suffix": "value"}}`, "", `FilterPolicy: "suffix" must be an object or an array`},
		{`{"key": [{"suffix": []}]}`, "", "FilterPolicy: suffix match pattern must be a string"},
		{`{"key": [{"suffix": ["test", "test2"]}]}`, "", "FilterPolicy: suffix match pattern must be a string"},
		{`{"key": {"suffix": "value", "prefix": "value"}}`, "", `FilterPolicy: "suffix" must be an object or an array`},
		{`{"key": {"not-an-operator": "value"}}`, "", `FilterPolicy: "not-an-operator" must be an object or an array`},
		{`{"key": [{"numeric": []}]}`, "", "FilterPolicy: Invalid member in numeric match: ]"},
		{`{"key": [{"numeric": ["operator"]}]}`, "", "FilterPolicy: Unrecognized numeric range operator: operator"},
		{`{"key": [{"numeric": [1, "<="]}]}`, "", "FilterPolicy: Invalid member in numeric match: 1"},
		{`{"key": [{"numeric": ["=", "000"]}]}`, "", "FilterPolicy: Value of equals must be numeric"},
		{`{"key": [{"numeric": [">="]}]}`, "", "FilterPolicy: Value of >= must be numeric"},
		{`{"key": [{"numeric": ["<", 100, ">", 10]}]}`, "", "FilterPolicy: Too many elements in numeric expression"},
		{`{"key": [{"numeric": [">=", 1, ">", 2]}]}`, "", "FilterPolicy: Bad numeric range operator: >"},
		{`{"key": [{"numeric": [">", 3, "<", 1]}]}`, "", "FilterPolicy: Bottom must be less than top"},
		{`{"key": [{"numeric": [">", 20, "<="]}]}`, "", "FilterPolicy: Value of <= must be numeric"},
		{`{"key": [{"numeric": [">", 20, 30]}]}`, "", "FilterPolicy: Bad value in numeric range: 30"},
		{`{"key": [{"numeric": [">", 20, "test"]}]}`, "", "FilterPolicy: Bad numeric range operator: test"},
		{`{"key": [{"numeric": [">", "20", "<", "30"]}]}`, "", "FilterPolicy: Value of > must be numeric"},
		{`{"key": [{"numeric": [">", 20, "<", "30"]}]}`, "", "FilterPolicy: Value of < must be numeric"},
		{`{"key": [{"numeric": [">", 20, "<", 30, "<", 50]}]}`, "", "FilterPolicy: Too many terms in numeric range expression"},
		{`{"key": [{"exists": null}]}`, "", "FilterPolicy: exists match pattern must be either true or false."},
		{`{"key": [{"exists": "no"}]}`, "", "FilterPolicy: exists match pattern must be either true or false."},
		{`{"key": [{"anything-but": {"wrong-operator": null}}]}`, "", "FilterPolicy: Unsupported anything-but pattern: wrong-operator"},
		{`{"key": [{"anything-but": {"suffix": "test"}}]}`, "", "FilterPolicy: Unsupported anything-but pattern: suffix"},
		{`{"key": [{"anything-but": {"exists": false}}]}`, "", "FilterPolicy: Unsupported anything-but pattern: exists"},
		{`{"key": [{"anything-but": {"prefix": false}}]}`, "", "FilterPolicy: prefix match pattern must be a string"},
		{`{"key": [{"anything-but": ["a", 1]}]}`, "", "FilterPolicy: Inside anything but list, either all values are number or string, mixed type is not supported"},
		{`{"key": [{"anything-but": [null]}]}`, "", "FilterPolicy: Inside anything but list, start|null|boolean is not supported."},
		{`{"key": [{"anything-but": true}]}`, "", "FilterPolicy: Value of anything-but must be an array or single string/number value."},
		{`{"key": [{"cidr": "10.0.0.0"}]}`, "", "FilterPolicy: Malformed CIDR, one '/' required"},
		{`{"key": [{"cidr": "10.0.0.0/x"}]}`, "", "FilterPolicy: Malformed CIDR, mask bits must be an integer"},
		{`{"key": [{"cidr": "10.0.0/8"}]}`, "", "FilterPolicy: Nonstandard IP address: 10.0.0"},
		{`{"key": [{}]}`, "", "FilterPolicy: Match expression name not found"},
		{`{"key": []}`, "", "FilterPolicy: Empty arrays are not allowed"},
		{`{}`, "", "FilterPolicy: Empty objects are not allowed"},
		{`["key"]`, "", "FilterPolicy: Filter is not an object"},
		{`{"key": ["a"`, "", "FilterPolicy: failed to parse JSON. Unexpected end-of-input: expected close marker for Array (start marker at " +
			"[Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: 1, column: 9])"},
		{`{"key_a": "value_one"}`, topic.FilterPolicyScopeMessageBody, `FilterPolicy: "key_a" must be an object or an array`},
		{`{"object": {"key": [{"prefix": "auto-"}]}}`, "", "Filter policy scope MessageAttributes does not support nested filter policy"},
		{`{"k1": ["v"], "k2": ["v"], "k3": ["v"], "k4": ["v"], "k5": ["v"], "k6": ["v"]}`, "", "FilterPolicy: Filter policy can not have more than 5 keys"},
		{`{"key": [` + strings.Join(many, ",") + `]}`, "", "FilterPolicy: Filter policy is too complex"},
		{`{"key1": [` + strings.Join(many[:100], ",") + `], "key2": [` + strings.Join(many[:51], ",") + `]}`, "", "FilterPolicy: Filter policy is too complex"},
		// 3 x 4 x 2 x 3 x 1 x 3 = 216: values times depth, multiplied.
		{`{"key_a": {"key_b": {"key_c": ["1", "2", "3", "4"]}}, "key_d": {"key_e": ["1", "2", "3"]}, "key_f": ["1", "2", "3"]}`,
			topic.FilterPolicyScopeMessageBody, "FilterPolicy: Filter policy is too complex"},
		// (4 x 6) + (4 x 4 x 4) + (4 x 4 x 4) = 152.
		{`{"source": ["a", "b", "c", "d"], "$or": [{"metricName": ["1", "2", "3", "4", "5", "6"]},
			{"metricType": ["1", "2", "3", "4"], "$or": [{"metricId": [1, 2, 3, 4]}, {"spaceId": [1, 2, 3, 4]}]}]}`,
			"", "FilterPolicy: Filter policy is too complex"},
		// (3 x 4 x 2) + (3 x 4 x 6) + (2 x 4 x 2) + (2 x 4 x 6) = 160.
		{`{"$or": [{"metricName": ["a", "b", "c"]}, {"namespace": ["a", "b"]}],
			"detail": {"scope": ["a", "b"], "$or": [{"source": ["a"]}, {"type": ["a", "b", "c"]}]}}`,
			topic.FilterPolicyScopeMessageBody, "FilterPolicy: Filter policy is too complex"},
		{`{"key": ["` + strings.Repeat("x", 256<<10) + `"]}`, "", "FilterPolicy: Filter policy can not be larger than 262144 bytes"},
	}
	for _, c := range cases {
		_, err := topic.ParseFilterPolicy(c.policy, c.scope)
		require.ErrorIs(t, err, topic.ErrInvalidFilterPolicy, "policy %.200s", c.policy)
		require.Equal(t, "InvalidParameter", fifoq.ErrorCode(err), "policy %.200s", c.policy)
		msg, _, _ := strings.Cut(fifoq.ErrorMessage(err), "\n at [Source: ")
		require.Equal(t, "Invalid parameter: "+c.want, msg, "policy %.200s", c.policy)
	}

	_, err := topic.ParseFilterPolicy(`{"a": ["b"]}`, "RandomValue")
	require.ErrorIs(t, err, topic.ErrInvalidFilterPolicyScope)
	require.Equal(t, "Invalid parameter: FilterPolicyScope: Invalid value [RandomValue]. Please use either MessageBody or MessageAttributes",
		fifoq.ErrorMessage(err))
}

// TestFilterPolicyValidLimits checks policies at the limits, which SNS takes.
func TestFilterPolicyValidLimits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		policy string
		scope  topic.FilterPolicyScope
	}{
		// (3 x 6) + (3 x 4 x 4) + (3 x 4 x 7) = 150, as recorded from AWS.
		{`{"source": ["a", "b", "c"], "$or": [{"metricName": ["1", "2", "3", "4", "5", "6"]},
			{"metricType": ["1", "2", "3", "4"], "$or": [{"metricId": [1, 2, 3, 4]}, {"spaceId": [1, 2, 3, 4, 5, 6, 7]}]}]}`, ""},
		{`{"k1": ["v"], "k2": ["v"], "k3": ["v"], "k4": ["v"], "k5": ["v"]}`, ""},
		{`{"key": [{"anything-but": {"prefix": "test-"}}]}`, ""},
		{`{"key": [{"anything-but": ["test", "test2"]}]}`, ""},
		{`{"key": [{"anything-but": "test"}]}`, ""},
		{`{"attr1": [null, {"anything-but": "whatever"}]}`, ""},
		{`{"key_a": {"key_b": {"key_c": ["1", "2", "3", "4"]}}, "key_d": {"key_e": ["1", "2", "3"]}}`, topic.FilterPolicyScopeMessageBody},
	} {
		p, err := topic.ParseFilterPolicy(c.policy, c.scope)
		require.NoError(t, err, "policy %s", c.policy)
		require.Equal(t, c.policy, p.String())
	}
}

// TestFilterPolicyErrorsAreSentinels checks that every refusal matches a sentinel, with SNS's code.
func TestFilterPolicyErrorsAreSentinels(t *testing.T) {
	t.Parallel()
	_, err := topic.ParseFilterPolicy(`{"a": 1}`, "")
	var e *fifoq.Error
	require.True(t, errors.As(err, &e))
	require.Equal(t, "InvalidParameter", e.Code)
	require.Contains(t, err.Error(), "topic: invalid filter policy")
}

// TestFilterPolicyDeepJSON checks the bound on the nesting of the JSON a filter reads (256 levels): a policy
// nested deeper is refused as too complex, a body nested deeper matches nothing, as a body that is not JSON
// does, and a String.Array attribute nested deeper is invalid; each is read without recursing once per level
// of its 256 KiB. A policy whose keys nest 150 deep, SNS's most by its complexity limit, is taken.
func TestFilterPolicyDeepJSON(t *testing.T) {
	t.Parallel()
	nest := func(open, close string, n int, inner string) string {
		return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
	}
	deep := (256<<10 - 16) / 2 // as many "[" as a 256 KiB body holds

	for _, policy := range []string{
		`{"a": ` + nest("[", "]", deep, `"x"`) + `}`,
		nest(`{"a": `, `}`, 300, `["x"]`),
	} {
		_, err := topic.ParseFilterPolicy(policy, topic.FilterPolicyScopeMessageBody)
		require.ErrorIs(t, err, topic.ErrInvalidFilterPolicy, "policy %.50s...", policy)
		require.Equal(t, "Invalid parameter: FilterPolicy: Filter policy is too complex", fifoq.ErrorMessage(err), "policy %.50s...", policy)
	}
	keys150 := nest(`{"a": `, `}`, 150, `["x"]`)
	_, err := topic.ParseFilterPolicy(keys150, topic.FilterPolicyScopeMessageBody)
	require.NoError(t, err, "keys nested 150 deep: complexity 150")

	fpRun(t, `{"a": ["x"]}`, topic.FilterPolicyScopeMessageBody, []fpCase{
		{"255 arrays deep", fpBody(`{"a": "x", "b": ` + nest("[", "]", 255, "1") + `}`), true},
		{"256 arrays deep", fpBody(`{"a": "x", "b": ` + nest("[", "]", 256, "1") + `}`), false},
		{"256 KiB deep", fpBody(`{"a": "x", "b": ` + nest("[", "]", deep-16, "1") + `}`), false},
	})
	fpRun(t, `{"a": [{"exists": false}]}`, "", []fpCase{
		{"String.Array 256 KiB deep", fpAttrs("a", fpArr(nest("[", "]", deep, "1"))), false},
	})
}

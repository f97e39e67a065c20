package topic_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/topic"
)

// fpRecorded are the filter-policy errors recorded from AWS (LocalStack's AWS-validated snapshots of
// test_sns_filter_policy.py and test_sns.py, and the cases of issue 35): the policy as the test sent it
// (Python's json.dumps, with spaces), the text after "FilterPolicy: ", and the location AWS added: the policy
// as SNS re-serialised it, without spaces, and the column just past the last token its rule compiler read.
var fpRecorded = []struct {
	policy string
	scope  topic.FilterPolicyScope
	reason string
	source string
	column int
}{
	{`{"key": [["value"]]}`, "", "Match value must be String, number, true, false, or null", `{"key":[["value"]]}`, 10},
	{`{"key": [{"wrong-operator": true}]}`, "", "Unrecognized match type wrong-operator", `{"key":[{"wrong-operator":true}]}`, 31},
	{`{"key": [{"suffix": "value", "prefix": "value2"}]}`, "", "Only one key allowed in match expression", `{"key":[{"suffix":"value","prefix":"value2"}]}`, 37},
	{`{"key": [{"suffix": 100}]}`, "", "suffix match pattern must be a string", `{"key":[{"suffix":100}]}`, 22},
	{`{"key": [{"suffix": null}]}`, "", "suffix match pattern must be a string", `{"key":[{"suffix":null}]}`, 23},
	{`{"key": {"suffix": "value"}}`, "", `"suffix" must be an object or an array`, `{"key":{"suffix":"value"}}`, 19},
	{`{"key": [{"suffix": []}]}`, "", "suffix match pattern must be a string", `{"key":[{"suffix":[]}]}`, 20},
	{`{"key": [{"suffix": ["test", "test2"]}]}`, "", "suffix match pattern must be a string", `{"key":[{"suffix":["test","test2"]}]}`, 20},
	{`{"key": {"suffix": "value", "prefix": "value"}}`, "", `"suffix" must be an object or an array`, `{"key":{"suffix":"value","prefix":"value"}}`, 19},
	{`{"key": {"not-an-operator": "value"}}`, "", `"not-an-operator" must be an object or an array`, `{"key":{"not-an-operator":"value"}}`, 28},
	{`{"key": [{"numeric": []}]}`, "", "Invalid member in numeric match: ]", `{"key":[{"numeric":[]}]}`, 22},
	{`{"key": [{"numeric": ["operator"]}]}`, "", "Unrecognized numeric range operator: operator", `{"key":[{"numeric":["operator"]}]}`, 32},
	{`{"key": [{"numeric": [1, "<="]}]}`, "", "Invalid member in numeric match: 1", `{"key":[{"numeric":[1,"<="]}]}`, 22},
	{`{"key": [{"numeric": ["=", "000"]}]}`, "", "Value of equals must be numeric", `{"key":[{"numeric":["=","000"]}]}`, 26},
	{`{"key": [{"numeric": [">="]}]}`, "", "Value of >= must be numeric", `{"key":[{"numeric":[">="]}]}`, 26},
	{`{"key": [{"numeric": ["<", 100, ">", 10]}]}`, "", "Too many elements in numeric expression", `{"key":[{"numeric":["<",100,">",10]}]}`, 30},
	{`{"key": [{"numeric": [">=", 1, ">", 2]}]}`, "", "Bad numeric range operator: >", `{"key":[{"numeric":[">=",1,">",2]}]}`, 31},
	{`{"key": [{"numeric": [">", 3, "<", 1]}]}`, "", "Bottom must be less than top", `{"key":[{"numeric":[">",3,"<",1]}]}`, 33},
	{`{"key": [{"numeric": [">", 20, "<="]}]}`, "", "Value of <= must be numeric", `{"key":[{"numeric":[">",20,"<="]}]}`, 33},
	{`{"key": [{"numeric": [">", 20, 30]}]}`, "", "Bad value in numeric range: 30", `{"key":[{"numeric":[">",20,30]}]}`, 30},
	{`{"key": [{"numeric": [">", 20, "test"]}]}`, "", "Bad numeric range operator: test", `{"key":[{"numeric":[">",20,"test"]}]}`, 34},
	{`{"key": [{"numeric": [">", "20", "<", "30"]}]}`, "", "Value of > must be numeric", `{"key":[{"numeric":[">","20","<","30"]}]}`, 26},
	{`{"key": [{"numeric": [">", 20, "<", "30"]}]}`, "", "Value of < must be numeric", `{"key":[{"numeric":[">",20,"<","30"]}]}`, 33},
	{`{"key": [{"numeric": [">", 20, "<", 30, "<", 50]}]}`, "", "Too many terms in numeric range expression", `{"key":[{"numeric":[">",20,"<",30,"<",50]}]}`, 36},
	{`{"key": [{"exists": null}]}`, "", "exists match pattern must be either true or false.", `{"key":[{"exists":null}]}`, 23},
	{`{"key": [{"exists": "no"}]}`, "", "exists match pattern must be either true or false.", `{"key":[{"exists":"no"}]}`, 20},
	{`{"key": [{"anything-but": {"wrong-operator": null}}]}`, "", "Unsupported anything-but pattern: wrong-operator", `{"key":[{"anything-but":{"wrong-operator":null}}]}`, 47},
	{`{"key": [{"anything-but": {"suffix": "test"}}]}`, "", "Unsupported anything-but pattern: suffix", `{"key":[{"anything-but":{"suffix":"test"}}]}`, 36},
	{`{"key": [{"anything-but": {"exists": false}}]}`, "", "Unsupported anything-but pattern: exists", `{"key":[{"anything-but":{"exists":false}}]}`, 40},
	{`{"key": [{"anything-but": {"prefix": false}}]}`, "", "prefix match pattern must be a string", `{"key":[{"anything-but":{"prefix":false}}]}`, 40},
	{`{"key_a": "value_one"}`, topic.FilterPolicyScopeMessageBody, `"key_a" must be an object or an array`, `{"key_a":"value_one"}`, 11},
	{`{"key": []}`, "", "Empty arrays are not allowed", `{"key":[]}`, 10},
}

// TestFilterPolicyErrorLocations checks every recorded filter-policy error, with the location AWS adds, as
// SetSubscriptionAttributes ("Invalid parameter: FilterPolicy: ...") and Subscribe ("Invalid parameter:
// Attributes Reason: FilterPolicy: ...") answer it.
func TestFilterPolicyErrorLocations(t *testing.T) {
	t.Parallel()
	tp := tpTopic(t, "locations")
	q := tpQueue(t, "locations-q")
	for _, c := range fpRecorded {
		want := "FilterPolicy: " + c.reason + "\n at [Source: (String)\"" + c.source + "\"; line: 1, column: " + itoa(c.column) + "]"
		_, err := topic.ParseFilterPolicy(c.policy, c.scope)
		require.ErrorIs(t, err, topic.ErrInvalidFilterPolicy, "policy %s", c.policy)
		require.Equal(t, "Invalid parameter: "+want, fifoq.ErrorMessage(err), "policy %s", c.policy)
		require.NotContains(t, err.Error(), "\n", "the Go text is one line")

		_, err = tp.Subscribe(q, topic.SubscriptionAttributes{FilterPolicy: c.policy, FilterPolicyScope: c.scope})
		require.ErrorIs(t, err, topic.ErrInvalidFilterPolicy, "policy %s", c.policy)
		require.Equal(t, "Invalid parameter: Attributes Reason: "+want, fifoq.ErrorMessage(err), "policy %s", c.policy)
	}
	require.Empty(t, tp.Subscriptions(), "no refused policy subscribed")
}

// TestFilterPolicyJSONErrors checks JSON syntax errors, which AWS answers with Jackson's message and a
// location without the source: the recorded cases, and the text of each kind of fault.
func TestFilterPolicyJSONErrors(t *testing.T) {
	t.Parallel()
	redacted := func(line, col int) string {
		return "\n at [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: " + itoa(line) + ", column: " + itoa(col) + "]"
	}
	expecting := "(JSON String, Number, Array, Object or token 'null', 'true' or 'false')"
	for _, c := range []struct {
		policy  string
		message string
		line    int
		column  int
	}{
		// Recorded from AWS.
		{`{invalidjson}`, "Unexpected character ('i' (code 105)): was expecting double-quote to start field name", 1, 2},
		{`invalid-json`, "Unrecognized token 'invalid': was expecting " + expecting, 1, 8},
		// Jackson's words for the other faults, located as Jackson 2.17 locates them.
		{`{"key": ["a"`, "Unexpected end-of-input: expected close marker for Array (start marker at [Source: REDACTED " +
			"(`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: 1, column: 9])", 1, 13},
		{`{"a": }`, "Unexpected character ('}' (code 125)): expected a valid value " + expecting, 1, 7},
		{`{"a": ["b",]}`, "Unexpected character (']' (code 93)): expected a valid value " + expecting, 1, 12},
		{`{"a": ["b"],}`, "Unexpected character ('}' (code 125)): was expecting double-quote to start field name", 1, 13},
		{"{\n  \"a\" [\"b\"]}", "Unexpected character ('[' (code 91)): was expecting a colon to separate field name and value", 2, 7},
		{`{"a": ["b" "c"]}`, "Unexpected character ('\"' (code 34)): was expecting comma to separate Array entries", 1, 12},
		{`[{]}`, "Unexpected close marker ']': expected '}' (for Object starting at [Source: REDACTED " +
			"(`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: 1, column: 2])", 1, 3},
		{`{"a": [tru]}`, "Unrecognized token 'tru': was expecting " + expecting, 1, 11},
		{`{"a": [01]}`, "Invalid numeric value: Leading zeroes not allowed", 1, 9},
		{"{\"a\": [\"b\x01\"]}", "Illegal unquoted character ((CTRL-CHAR, code 1)): has to be escaped using backslash to be included in string value", 1, 11},
		{`{"a": ["\q"]}`, "Unrecognized character escape 'q' (code 113)", 1, 11},
		{`{"a": ["b"] /* c */}`, "Unexpected character ('/' (code 47)): maybe a (non-standard) comment? (not recognized as one since " +
			"Feature 'ALLOW_COMMENTS' not enabled for parser)", 1, 13},
		{`{'a': ["b"]}`, "Unexpected character (''' (code 39)): was expecting double-quote to start field name", 1, 2},
		{`{"a`, "Unexpected end-of-input in field name", 1, 4},
	} {
		_, err := topic.ParseFilterPolicy(c.policy, "")
		require.ErrorIs(t, err, topic.ErrInvalidFilterPolicy, "policy %q", c.policy)
		require.Equal(t, "Invalid parameter: FilterPolicy: failed to parse JSON. "+c.message+redacted(c.line, c.column),
			fifoq.ErrorMessage(err), "policy %q", c.policy)
	}
	// As Jackson's readTree, SNS reads the first value and nothing after it.
	p, err := topic.ParseFilterPolicy(`{"a": ["b"]} trailing`, "")
	require.NoError(t, err)
	require.True(t, p.Match(fpAttrs("a", fpStr("b"))))
	// A key given twice keeps its first place and its last value, as Jackson's tree keeps it.
	p, err = topic.ParseFilterPolicy(`{"a": ["x"], "b": ["y"], "a": ["z"]}`, "")
	require.NoError(t, err)
	require.True(t, p.Match(fpAttrs("a", fpStr("z"), "b", fpStr("y"))))
	require.False(t, p.Match(fpAttrs("a", fpStr("x"), "b", fpStr("y"))))
	_, err = topic.ParseFilterPolicy(`{"a": ["x"], "b": {"c": 1}, "a": []}`, "")
	require.Equal(t, "Invalid parameter: FilterPolicy: Empty arrays are not allowed\n at [Source: (String)\"{\"a\":[],\"b\":{\"c\":1}}\"; line: 1, column: 8]",
		fifoq.ErrorMessage(err), "the compiler reads the re-serialised tree: the later a, in the first place")
}

// TestFilterPolicyErrorsWithoutLocation checks the errors AWS gives without a location (they are not the
// rule compiler's grammar errors), and how a location names a policy re-serialised as SNS does: numbers as
// Java writes them, a long policy cut after 500 characters.
func TestFilterPolicyErrorsWithoutLocation(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ policy, want string }{
		{`{"k1": ["v"], "k2": ["v"], "k3": ["v"], "k4": ["v"], "k5": ["v"], "k6": ["v"]}`, "FilterPolicy: Filter policy can not have more than 5 keys"},
		{`{"key": [{"cidr": "10.0.0.0"}]}`, "FilterPolicy: Malformed CIDR, one '/' required"},
		{`{"key": [{"cidr": "10.0.0.0/x"}]}`, "FilterPolicy: Malformed CIDR, mask bits must be an integer"},
		{`{"key": [{"cidr": "10.0.0/8"}]}`, "FilterPolicy: Nonstandard IP address: 10.0.0"},
		{`{"object": {"key": [{"prefix": "auto-"}]}}`, "Filter policy scope MessageAttributes does not support nested filter policy"},
	} {
		_, err := topic.ParseFilterPolicy(c.policy, "")
		require.Equal(t, "Invalid parameter: "+c.want, fifoq.ErrorMessage(err), "policy %s", c.policy)
	}
	_, err := topic.ParseFilterPolicy(`{"key": [{"numeric": [">", 1.50, "<", 1.0e0, "x"]}]}`, "")
	require.Equal(t, "Invalid parameter: FilterPolicy: Too many terms in numeric range expression\n at [Source: (String)"+
		`"{"key":[{"numeric":[">",1.5,"<",1.0,"x"]}]}"; line: 1, column: 38]`, fifoq.ErrorMessage(err))
	long := `{"key": [{"numeric": ["=", 1, 2]}], "k": ["` + strings.Repeat("x", 600) + `"]}`
	_, err = topic.ParseFilterPolicy(long, "")
	compact := `{"key":[{"numeric":["=",1,2]}],"k":["` + strings.Repeat("x", 600) + `"]}`
	require.Equal(t, "Invalid parameter: FilterPolicy: Too many elements in numeric expression\n at [Source: (String)\""+
		compact[:500]+"\"[truncated "+itoa(len(compact)-500)+" chars]; line: 1, column: 28]", fifoq.ErrorMessage(err))
}

func itoa(n int) string { return strconv.Itoa(n) }

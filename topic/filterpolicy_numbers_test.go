package topic_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/topic"
)

// TestFilterPolicyNumericPrecision checks that numbers compare at SNS's precision, that of its rule engine's
// comparable numbers (event-ruler's ComparableNumber): 10^6 × (10^9 + n), truncated, so numbers that agree to
// 6 decimal places are the same (100.123456789 and 100.1234567), and numbers that differ in the sixth are
// not. It holds for exact numbers, numbers in a String.Array and in a body, numeric operators and ranges,
// and anything-but.
func TestFilterPolicyNumericPrecision(t *testing.T) {
	t.Parallel()
	fpRun(t, `{"p": [100.123456789]}`, "", []fpCase{
		{"7 decimals", fpAttrs("p", fpNum("100.1234567")), true},
		{"9 decimals", fpAttrs("p", fpNum("100.123456789")), true},
		{"in a String.Array", fpAttrs("p", fpArr(`[1, 100.1234567]`)), true},
		{"the sixth decimal differs", fpAttrs("p", fpNum("100.1234577")), false},
		{"a string is not a number", fpAttrs("p", fpStr("100.1234567")), false},
	})
	fpRun(t, `{"p": [100.123456789]}`, topic.FilterPolicyScopeMessageBody, []fpCase{
		{"in the body", fpBody(`{"p": 100.1234567}`), true},
		{"in an array of the body", fpBody(`{"p": [3, 100.1234567]}`), true},
		{"the sixth decimal differs", fpBody(`{"p": 100.1234577}`), false},
	})
	fpRun(t, `{"p": [{"numeric": ["=", 100.123456789]}]}`, "", []fpCase{
		{"equal to 6 decimals", fpAttrs("p", fpNum("100.1234567")), true},
		{"the sixth decimal differs", fpAttrs("p", fpNum("100.1234577")), false},
	})
	fpRun(t, `{"p": [{"numeric": [">", 5.0000001]}]}`, "", []fpCase{
		{"more, but not at 6 decimals", fpAttrs("p", fpNum("5.0000002")), false},
		{"more at 6 decimals", fpAttrs("p", fpNum("5.000001")), true},
	})
	fpRun(t, `{"p": [{"numeric": [">=", 5.0000001, "<", 5.000002]}]}`, "", []fpCase{
		{"the bottom at 6 decimals", fpAttrs("p", fpNum("5.0000002")), true},
		{"the top at 6 decimals", fpAttrs("p", fpNum("5.0000021")), false},
	})
	fpRun(t, `{"p": [{"anything-but": [100.123456789]}]}`, "", []fpCase{
		{"the same at 6 decimals", fpAttrs("p", fpNum("100.1234567")), false},
		{"another", fpAttrs("p", fpNum("100.1234577")), true},
	})
	// A message's number outside -10^9..10^9 is in no numeric range; an exact number there compares as a
	// double.
	fpRun(t, `{"p": [{"numeric": [">", 0]}]}`, "", []fpCase{
		{"in range", fpAttrs("p", fpNum("1000000000")), true},
		{"out of range", fpAttrs("p", fpNum("1000000001")), false},
	})
	fpRun(t, `{"p": [5000000000]}`, "", []fpCase{
		{"the same double", fpAttrs("p", fpNum("5e9")), true},
		{"another", fpAttrs("p", fpNum("5000000001")), false},
	})
}

// TestFilterPolicyNumericRange checks the range of a policy's numeric bounds and anything-but numbers:
// -10^9..10^9, refused with the compiler's message, located after the array that holds the number (numeric)
// or the number (a list of anything-but), and without a location for a single anything-but number.
func TestFilterPolicyNumericRange(t *testing.T) {
	t.Parallel()
	const outOfRange = "Invalid parameter: FilterPolicy: Value must be between -1.0E9 and 1.0E9, inclusive"
	for _, c := range []struct{ policy, want string }{
		{`{"p": [{"numeric": [">", 1000000001]}]}`, outOfRange + "\n at [Source: (String)\"{\"p\":[{\"numeric\":[\">\",1000000001]}]}\"; line: 1, column: 34]"},
		{`{"p": [{"numeric": ["=", -1e10]}]}`, outOfRange + "\n at [Source: (String)\"{\"p\":[{\"numeric\":[\"=\",-1.0E10]}]}\"; line: 1, column: 31]"},
		{`{"p": [{"numeric": [">", 0, "<", 2e9]}]}`, outOfRange + "\n at [Source: (String)\"{\"p\":[{\"numeric\":[\">\",0,\"<\",2.0E9]}]}\"; line: 1, column: 35]"},
		{`{"p": [{"anything-but": [1, 2e10]}]}`, outOfRange + "\n at [Source: (String)\"{\"p\":[{\"anything-but\":[1,2.0E10]}]}\"; line: 1, column: 32]"},
		{`{"p": [{"anything-but": 2e10}]}`, outOfRange},
	} {
		_, err := topic.ParseFilterPolicy(c.policy, "")
		require.ErrorIs(t, err, topic.ErrInvalidFilterPolicy, "policy %s", c.policy)
		require.Equal(t, c.want, fifoq.ErrorMessage(err), "policy %s", c.policy)
	}
	for _, policy := range []string{
		`{"p": [{"numeric": [">=", -1000000000, "<=", 1000000000]}]}`,
		`{"p": [{"anything-but": [-1e9, 1e9]}]}`,
		`{"p": [1e300]}`,
	} {
		_, err := topic.ParseFilterPolicy(policy, "")
		require.NoError(t, err, "policy %s", policy)
	}
}

package topic_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/topic"
)

// FuzzFilterPolicy feeds the filter policy parser any text: it never panics, a policy it refuses is refused
// with ErrInvalidFilterPolicy (SNS's InvalidParameter and an "Invalid parameter: " message), a policy it
// takes keeps its text, and matching it against a message of either kind never panics and is
// deterministic.
func FuzzFilterPolicy(f *testing.F) {
	for _, seed := range []string{
		`{"a": ["b"]}`, `{"a": [{"prefix": "x"}]}`, `{"a": [{"anything-but": [1, 2]}]}`,
		`{"a": [{"numeric": [">", 0, "<=", 5]}]}`, `{"a": {"b": [{"exists": false}]}}`,
		`{"$or": [{"a": ["x"]}, {"b": [{"suffix": "y"}]}]}`, `{"a": [{"cidr": "10.0.0.0/8"}]}`,
		`{"a": [null, true, 1.5e3]}`, `{"a": [{"equals-ignore-case": "X"}]}`, `{}`, `[`, `{"a": [[]]}`,
	} {
		f.Add(seed, false, `{"a": "x", "b": [1, {"c": null}]}`)
		f.Add(seed, true, `{"a": {"b": "x"}}`)
	}
	f.Fuzz(func(t *testing.T, policy string, body bool, message string) {
		scope := topic.FilterPolicyScopeMessageAttributes
		if body {
			scope = topic.FilterPolicyScopeMessageBody
		}
		p, err := topic.ParseFilterPolicy(policy, scope)
		if err != nil {
			require.True(t, errors.Is(err, topic.ErrInvalidFilterPolicy), "policy %q: error %v is not ErrInvalidFilterPolicy", policy, err)
			require.Equal(t, "InvalidParameter", fifoq.ErrorCode(err))
			require.True(t, strings.HasPrefix(fifoq.ErrorMessage(err), "Invalid parameter: "), "message %q", fifoq.ErrorMessage(err))
			return
		}
		require.Equal(t, policy, p.String())
		require.Equal(t, scope, p.Scope())
		m := topic.Message{Message: message, Attributes: map[string]fifoq.Attribute{
			"a": {DataType: "String", StringValue: message},
			"b": {DataType: "String.Array", StringValue: message},
			"c": {DataType: "Number", StringValue: "12.5"},
		}}
		got := p.Match(m)
		require.Equal(t, got, p.Match(m), "policy %q on %q: not deterministic", policy, message)
	})
}

// fpGenValue draws a value an attribute can hold, from a small set so that conditions hit it. It makes a
// new generator on each call: a rapid generator is not safe to share between parallel tests.
func fpGenValue() *rapid.Generator[string] {
	return rapid.SampledFrom([]string{"rugby", "tennis", "baseball", "Rugby", "order-1", "data"})
}

// fpGenCondition draws one condition of a key's array, as JSON, from the string operators.
func fpGenCondition(t *rapid.T, label string) string {
	v := fpGenValue().Draw(t, label+" value")
	switch rapid.IntRange(0, 4).Draw(t, label+" operator") {
	case 0:
		return fmt.Sprintf("%q", v)
	case 1:
		return fmt.Sprintf(`{"prefix": %q}`, v[:rapid.IntRange(1, len(v)).Draw(t, label+" prefix length")])
	case 2:
		return fmt.Sprintf(`{"suffix": %q}`, v[len(v)-rapid.IntRange(1, len(v)).Draw(t, label+" suffix length"):])
	case 3:
		return fmt.Sprintf(`{"equals-ignore-case": %q}`, v)
	}
	return fmt.Sprintf(`{"anything-but": %q}`, v)
}

// fpGenBranch draws a policy object: one to two keys of one to two conditions each.
func fpGenBranch(t *rapid.T, label string) string {
	keys := rapid.SampledFrom([]string{"sport", "store", "event"})
	n := rapid.IntRange(1, 2).Draw(t, label+" keys")
	var fields []string
	for i := range n {
		k := keys.Draw(t, fmt.Sprint(label, " key ", i))
		var conds []string
		for j := range rapid.IntRange(1, 2).Draw(t, fmt.Sprint(label, " conditions ", i)) {
			conds = append(conds, fpGenCondition(t, fmt.Sprint(label, " ", i, ".", j)))
		}
		fields = append(fields, fmt.Sprintf("%q: [%s]", k, strings.Join(conds, ", ")))
	}
	return "{" + strings.Join(fields, ", ") + "}"
}

// fpGenMessage draws a message with some of the attributes the policies name.
func fpGenMessage(t *rapid.T) topic.Message {
	m := topic.Message{Message: "m", Attributes: map[string]fifoq.Attribute{}}
	for _, k := range []string{"sport", "store", "event"} {
		if rapid.Bool().Draw(t, k+" present") {
			m.Attributes[k] = fifoq.Attribute{DataType: "String", StringValue: fpGenValue().Draw(t, k)}
		}
	}
	return m
}

func fpMustParse(t *rapid.T, policy string) *topic.FilterPolicy {
	p, err := topic.ParseFilterPolicy(policy, "")
	if err != nil {
		t.Fatalf("policy %s: %v", policy, err)
	}
	return p
}

// TestFilterPolicyOrIsUnion: a policy {"$or": [A, B]} matches exactly the messages A or B matches.
func TestFilterPolicyOrIsUnion(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		a, b := fpGenBranch(t, "A"), fpGenBranch(t, "B")
		or := fpMustParse(t, fmt.Sprintf(`{"$or": [%s, %s]}`, a, b))
		pa, pb := fpMustParse(t, a), fpMustParse(t, b)
		m := fpGenMessage(t)
		if got, want := or.Match(m), pa.Match(m) || pb.Match(m); got != want {
			t.Fatalf("$or of %s and %s on %v: %v, want %v", a, b, m.Attributes, got, want)
		}
	})
}

// TestFilterPolicyAnythingButIsNegation: on a key with one value, {"anything-but": X} matches exactly when
// the key is present and X does not match; and it never matches an absent key.
func TestFilterPolicyAnythingButIsNegation(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		vals := rapid.SliceOfNDistinct(fpGenValue(), 1, 3, func(s string) string { return s }).Draw(t, "values")
		var quoted []string
		for _, v := range vals {
			quoted = append(quoted, fmt.Sprintf("%q", v))
		}
		list := strings.Join(quoted, ", ")
		var inner string
		if rapid.Bool().Draw(t, "prefix") {
			inner = fmt.Sprintf(`{"prefix": %q}`, vals[0][:rapid.IntRange(1, len(vals[0])).Draw(t, "prefix length")])
		} else {
			inner = "[" + list + "]"
		}
		neg := fpMustParse(t, fmt.Sprintf(`{"sport": [{"anything-but": %s}]}`, inner))
		pos := fpMustParse(t, `{"sport": [`+list+`]}`)
		if strings.HasPrefix(inner, "{") {
			pos = fpMustParse(t, fmt.Sprintf(`{"sport": [%s]}`, inner))
		}
		m := fpGenMessage(t)
		_, present := m.Attributes["sport"]
		if got, want := neg.Match(m), present && !pos.Match(m); got != want {
			t.Fatalf("anything-but %s on %v: %v, want %v", inner, m.Attributes, got, want)
		}
	})
}

// TestFilterPolicyKeysAreConjunction: a policy of two keys matches exactly what each key alone matches.
func TestFilterPolicyKeysAreConjunction(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		c1, c2 := fpGenCondition(t, "1"), fpGenCondition(t, "2")
		both := fpMustParse(t, fmt.Sprintf(`{"sport": [%s], "store": [%s]}`, c1, c2))
		p1 := fpMustParse(t, fmt.Sprintf(`{"sport": [%s]}`, c1))
		p2 := fpMustParse(t, fmt.Sprintf(`{"store": [%s]}`, c2))
		m := fpGenMessage(t)
		if got, want := both.Match(m), p1.Match(m) && p2.Match(m); got != want {
			t.Fatalf("%s and %s on %v: %v, want %v", c1, c2, m.Attributes, got, want)
		}
	})
}

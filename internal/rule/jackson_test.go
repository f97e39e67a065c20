package rule_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq/internal/rule"
)

// TestJavaDouble checks Double.toString's forms: plain from 10^-3 up to 10^7, at least one digit after the
// point, and Java's scientific notation outside.
func TestJavaDouble(t *testing.T) {
	t.Parallel()
	for f, want := range map[float64]string{
		100: "100.0", 1.5: "1.5", 0.001: "0.001", 1e-4: "1.0E-4", 9999999: "9999999.0", 1e7: "1.0E7",
		12345678.9: "1.23456789E7", 123.456: "123.456", -2.5e-10: "-2.5E-10", 1e22: "1.0E22", 0.1: "0.1",
		1e9: "1.0E9", -1e9: "-1.0E9", 100.123456789: "100.123456789",
	} {
		require.Equal(t, want, rule.JavaDouble(f), "%v", f)
	}
	for text, want := range map[string]string{
		"-0": "0", "12345678901234567890123": "12345678901234567890123", "1.50": "1.5", "1e2": "100.0", "1E400": `"Infinity"`,
		"-1e400": `"-Infinity"`, "-0.0": "-0.0",
	} {
		require.Equal(t, want, rule.JSONNumberText(text, strings.ContainsAny(text, ".eE")), text)
	}
}

// TestParseJSONTree checks the tree Jackson reads and writes back: keys in their first place with their
// last value, escapes as Jackson writes them, the value read and nothing after it.
func TestParseJSONTree(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"a": 1, "b": [true, null, "x"], "a": {"c": 2.50}}`: `{"a":{"c":2.5},"b":[true,null,"x"]}`,
		"{\"t\": \"tab\\there \\u0001 \\/ é \\\" \\\\\"}":    `{"t":"tab\there \u0001 / é \" \\"}`,
		`[1, 2] trailing, ignored`:                           `[1,2]`,
		"\r\n  \"s\"  ":                                      `"s"`,
	} {
		v, present, err := rule.ParseJSON(in, 10)
		require.NoError(t, err, in)
		require.True(t, present)
		require.Equal(t, want, v.Compact(), in)
	}
	_, present, err := rule.ParseJSON(" \n\t", 10)
	require.NoError(t, err)
	require.False(t, present, "white space holds no value")

	_, _, err = rule.ParseJSON(`[[[1]]]`, 2)
	require.ErrorIs(t, err, rule.ErrJSONTooDeep)
	_, _, err = rule.ParseJSON(`[[1]]`, 2)
	require.NoError(t, err)
}

// TestParseJSONErrors checks Jackson's messages and locations: lines counted at LF, CR and CRLF, columns in
// UTF-16 units.
func TestParseJSONErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, msg      string
		line, column int
	}{
		{"{\r\n\"a\": 1,\r  x}", "Unexpected character ('x' (code 120)): was expecting double-quote to start field name", 3, 3},
		{`["😀", @]`, "Unexpected character ('@' (code 64)): expected a valid value (JSON String, Number, Array, Object or token 'null', 'true' or 'false')", 1, 8},
		{`{"a": 1 "b": 2}`, "Unexpected character ('\"' (code 34)): was expecting comma to separate Object entries", 1, 9},
		{`{"a": 1,`, "Unexpected end-of-input within/between Object entries", 1, 9},
		{`12x`, "Unexpected character ('x' (code 120)): Expected space separating root-level values", 1, 3},
		{`-x`, "Unexpected character ('x' (code 120)) in numeric value: expected digit (0-9) to follow minus sign, for valid numeric value", 1, 3},
		{`[1.]`, "Unexpected character (']' (code 93)) in numeric value: Decimal point not followed by a digit", 1, 5},
		{`[1e]`, "Unexpected character (']' (code 93)) in numeric value: Exponent indicator not followed by a digit", 1, 5},
		{`[+1]`, "Unexpected character ('+' (code 43)) in numeric value: JSON spec does not allow numbers to have plus signs: enable " +
			"`JsonReadFeature.ALLOW_LEADING_PLUS_SIGN_FOR_NUMBERS` to allow", 1, 4},
		{`[NaN]`, "Non-standard token 'NaN': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow", 1, 5},
		{`]`, "Unexpected close marker ']': expected '}' (for root starting at [Source: REDACTED " +
			"(`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: 1, column: 0])", 1, 1},
		{"[\"a\u0080\", \x01]", "Illegal character ((CTRL-CHAR, code 1)): only regular white space (\\r, \\n, \\t) is allowed between tokens", 1, 9},
		{`{"a": truex}`, "Unrecognized token 'truex': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')", 1, 12},
		{`["\u12g4"]`, "Unexpected character ('g' (code 103)): expected a hex-digit for character escape sequence", 1, 7},
	} {
		_, _, err := rule.ParseJSON(c.in, 10)
		var se *rule.JSONSyntaxError
		require.True(t, errors.As(err, &se), "%q: %v", c.in, err)
		require.Equal(t, c.msg, se.Message, "%q", c.in)
		require.Equal(t, []int{c.line, c.column}, []int{se.Line, se.Column}, "%q: line and column", c.in)
		require.True(t, strings.HasSuffix(err.Error(), "; line: "+itoa(c.line)+", column: "+itoa(c.column)+"]"), err.Error())
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

package sqsapi

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// jdString decodes the JSON string literal lit with the hand decoder.
func jdString(t *testing.T, lit string) (string, error) {
	t.Helper()
	d := &jsonDecoder{data: []byte(lit)}
	b, err := d.rawString()
	return string(b), err
}

// The hand decoder keeps what is not UTF-8 instead of replacing it by U+FFFD as encoding/json does: invalid
// bytes as they are, a lone surrogate escape as the three bytes of its code point. Valid strings decode as
// encoding/json decodes them.
func TestJSONDecoderKeepsInvalidUTF8(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ lit, want string }{
		{`"a\ud800b"`, "a\xed\xa0\x80b"},
		{`"\udc00"`, "\xed\xb0\x80"},
		{`"\ud83d"`, "\xed\xa0\xbd"},
		{`"\ud83d\ud83d"`, "\xed\xa0\xbd\xed\xa0\xbd"},
		{`"\ude00\ud83d"`, "\xed\xb8\x80\xed\xa0\xbd"},
		{`"\ud83dx\ude00"`, "\xed\xa0\xbdx\xed\xb8\x80"},
		{`"\ud83d\u0041"`, "\xed\xa0\xbdA"},
		{"\"a\xffb\"", "a\xffb"},
		{"\"a\xff\\nb\"", "a\xff\nb"},
		{`"\ud83d\ude00"`, "😀"},
		{`"\uD83D\uDE00x"`, "😀x"},
		{`"\ufffd"`, "\uFFFD"},
		{`"a\u00e9\t\"\\\/"`, "aé\t\"\\/"},
	} {
		got, err := jdString(t, tc.lit)
		require.NoError(t, err, "%s", tc.lit)
		require.Equal(t, tc.want, got, "%s", tc.lit)
		if utf8.ValidString(tc.want) {
			var std string
			require.NoError(t, json.Unmarshal([]byte(tc.lit), &std))
			require.Equal(t, std, got, "a valid string decodes as encoding/json decodes it: %s", tc.lit)
		}
	}
}

// FuzzJSONDecoderString: on every string literal encoding/json accepts, the hand decoder succeeds too, and
// gives encoding/json's result wherever that has no U+FFFD; where it differs, its result is not UTF-8 (it
// kept what encoding/json replaced).
func FuzzJSONDecoderString(f *testing.F) {
	for _, s := range []string{`"a"`, `"\ud800"`, `"\ud83d\ude00"`, "\"\xff\"", `"\ufffd"`, `"\\u"`, `"\ud83d\ud83d\ude00"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, lit string) {
		var std string
		if !strings.HasPrefix(lit, `"`) || json.Unmarshal([]byte(lit), &std) != nil {
			return
		}
		got, err := jdString(t, lit)
		require.NoError(t, err, "encoding/json accepts %q", lit)
		if got != std {
			require.False(t, utf8.ValidString(got), "%q: %q, encoding/json %q", lit, got, std)
			require.Contains(t, std, "\uFFFD", "%q: encoding/json replaced something", lit)
		}
	})
}

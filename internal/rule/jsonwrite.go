package rule

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Writing JSON back as Jackson writes a tree, and numbers as Java writes them: SNS shows a filter policy so in
// the location of its errors.

// Compact returns v as Jackson writes a tree (JsonNode.toString): no white space; strings escaped as
// Jackson escapes them (quote, backslash, control characters); an integer in its shortest decimal form; a
// number with a fraction or an exponent read as a Java double and written as Java writes one ("100.0",
// "1.0E-5"), or "Infinity" in quotes past a double's range.
func (v *JSONValue) Compact() string {
	var b strings.Builder
	v.appendCompact(&b)
	return b.String()
}

func (v *JSONValue) appendCompact(b *strings.Builder) {
	switch v.Kind {
	case JSONNull:
		b.WriteString("null")
	case JSONBool:
		b.WriteString(v.Text)
	case JSONString:
		appendJSONString(b, v.Text)
	case JSONNumber:
		b.WriteString(JSONNumberText(v.Text, v.Float))
	case JSONArray:
		b.WriteByte('[')
		for i := range v.Items {
			if i > 0 {
				b.WriteByte(',')
			}
			v.Items[i].appendCompact(b)
		}
		b.WriteByte(']')
	case JSONObject:
		b.WriteByte('{')
		for i := range v.Members {
			if i > 0 {
				b.WriteByte(',')
			}
			appendJSONString(b, v.Members[i].Key)
			b.WriteByte(':')
			v.Members[i].Value.appendCompact(b)
		}
		b.WriteByte('}')
	}
}

func appendJSONString(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hex[r>>4])
			b.WriteByte(hex[r&0xf])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// JSONNumberText returns the number written text as Jackson writes it back: an integer (float false) in
// its shortest decimal form ("-0" is "0"), a number with a fraction or an exponent as JavaDouble writes its
// value, or "Infinity" or "-Infinity" in quotes past a double's range.
func JSONNumberText(text string, float bool) string {
	if !float {
		var n big.Int
		if _, ok := n.SetString(text, 10); ok {
			return n.String()
		}
		return text
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return text
	}
	switch {
	case math.IsInf(f, 1):
		return `"Infinity"`
	case math.IsInf(f, -1):
		return `"-Infinity"`
	}
	return JavaDouble(f)
}

// JavaDouble returns f as Java's Double.toString writes it: the shortest digits that read back as f, in
// plain notation with at least one digit after the point from 10^-3 up to 10^7 ("100.0", "0.001"), and in
// Java's scientific notation otherwise ("1.0E7", "1.2345E-5").
func JavaDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // [-]d[.ddd]e±xx
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	mant, expText, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expText)
	digits := strings.Replace(mant, ".", "", 1)
	if a := math.Abs(f); a >= 1e-3 && a < 1e7 {
		if exp >= 0 {
			for len(digits) < exp+1 {
				digits += "0"
			}
			frac := digits[exp+1:]
			if frac == "" {
				frac = "0"
			}
			return sign + digits[:exp+1] + "." + frac
		}
		return sign + "0." + strings.Repeat("0", -exp-1) + digits
	}
	frac := digits[1:]
	if frac == "" {
		frac = "0"
	}
	return sign + digits[:1] + "." + frac + "E" + strconv.Itoa(exp)
}

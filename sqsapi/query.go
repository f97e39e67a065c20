package sqsapi

import (
	"encoding/base64"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/sqsmd5"
)

// form holds the parameters of a query-protocol request (awsQuery): the form-encoded body of a POST, or the
// query string of a GET. Lists and maps are flattened into numbered keys: AttributeName.1,
// Attribute.1.Name and Attribute.1.Value, SendMessageBatchRequestEntry.1.Id, and so on.
type form struct {
	values url.Values
	// index holds, for every prefix of a key that a number follows (prefix.N or prefix.N.<anything>), the
	// numbers, unsorted and repeated. It is built on first use, in one pass over the keys, so reading a
	// batch of n entries costs O(keys), not O(n * keys).
	index map[string][]int
	// keyScans counts the keys visited to build the index, for tests.
	keyScans int
}

func newForm(values url.Values) form { return form{values: values} }

func (f *form) get(name string) string {
	if v := f.values[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func (f *form) has(name string) bool { return len(f.values[name]) > 0 }

// optString returns the parameter, unset when it is absent (an empty value is present).
func (f *form) optString(name string) optString {
	if v := f.values[name]; len(v) > 0 {
		return optString{v[0], true}
	}
	return optString{}
}

// optIntValue is optInt as an optInt value.
func (f *form) optIntValue(name string) (optInt, *apiError) {
	p, err := f.optInt(name)
	if p == nil || err != nil {
		return optInt{}, err
	}
	return optInt{*p, true}, nil
}

// optInt returns the integer parameter, or nil when it is absent.
func (f *form) optInt(name string) (*int, *apiError) {
	v := f.values[name]
	if len(v) == 0 {
		return nil, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v[0]))
	if err != nil {
		return nil, invalidValue(v[0], name, "Must be an integer.")
	}
	return &n, nil
}

// maxIndex is the largest number a numbered key may have.
const maxIndex = 1 << 20

// buildIndex indexes the numbered keys (see form.index).
func (f *form) buildIndex() {
	f.index = make(map[string][]int)
	for k := range f.values {
		f.keyScans++
		// Every '.' that a number follows, up to the end or the next '.', ends a prefix.
		for i := strings.IndexByte(k, '.'); i > 0; {
			rest := k[i+1:]
			num, _, more := strings.Cut(rest, ".")
			if n, ok := parseIndex(num); ok {
				f.index[k[:i]] = append(f.index[k[:i]], n)
			}
			if !more {
				break
			}
			i += 1 + len(num)
		}
	}
}

// parseIndex reads the number of a numbered key: 1..maxIndex, in decimal without leading zeros.
func parseIndex(s string) (int, bool) {
	if s == "" || len(s) > 7 || s[0] == '0' {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, n <= maxIndex
}

// indices returns the numbers N of the keys prefix.N and prefix.N.<anything>, in increasing order: the
// limit smallest of them when limit > 0 and there are more. It also returns how many numbers there are, so
// that a caller that stops at the most it accepts plus one can still say how many it was sent.
func (f *form) indices(prefix string, limit int) ([]int, int) {
	if f.index == nil {
		f.buildIndex()
	}
	all := f.index[prefix]
	if len(all) == 0 {
		return nil, 0
	}
	ns := slices.Clone(all)
	slices.Sort(ns)
	ns = slices.Compact(ns)
	n := len(ns)
	if limit > 0 && n > limit {
		ns = ns[:limit]
	}
	return ns, n
}

// list returns the values of prefix.1, prefix.2, ...
func (f *form) list(prefix string) []string {
	ns, _ := f.indices(prefix, 0)
	var out []string
	for _, n := range ns {
		if v, ok := f.values[prefix+"."+strconv.Itoa(n)]; ok && len(v) > 0 {
			out = append(out, v[0])
		}
	}
	return out
}

// pairs returns the map flattened as prefix.N.<key> and prefix.N.<value>.
func (f *form) pairs(prefix, key, value string) map[string]string {
	ns, _ := f.indices(prefix, 0)
	if len(ns) == 0 {
		return nil
	}
	out := make(map[string]string, len(ns))
	for _, n := range ns {
		p := prefix + "." + strconv.Itoa(n) + "."
		if f.has(p + key) {
			out[f.get(p+key)] = f.get(p + value)
		}
	}
	return out
}

// attributes returns the message attributes flattened as prefix.N.Name and prefix.N.Value.DataType,
// .StringValue and .BinaryValue (base64). It decodes at most fifoq.MaxMessageAttributes+1 of them, enough
// for the check of their number; when there are more, it also returns how many (else 0).
func (f *form) attributes(prefix string) (map[string]fifoq.Attribute, int, *apiError) {
	ns, given := f.indices(prefix, fifoq.MaxMessageAttributes+1)
	if len(ns) == 0 {
		return nil, 0, nil
	}
	if given == len(ns) {
		given = 0
	}
	out := make(map[string]fifoq.Attribute, len(ns))
	for _, n := range ns {
		p := prefix + "." + strconv.Itoa(n) + "."
		a := fifoq.Attribute{DataType: f.get(p + "Value.DataType"), StringValue: f.get(p + "Value.StringValue")}
		if b, ok := f.values[p+"Value.BinaryValue"]; ok && len(b) > 0 {
			v, err := base64.StdEncoding.DecodeString(b[0])
			if err != nil {
				return nil, 0, invalidValue(b[0], p+"Value.BinaryValue", "Must be base64 encoded.")
			}
			a.BinaryValue = v
		}
		out[f.get(p+"Name")] = a
	}
	return out, given, nil
}

// xmlNamespace is the namespace of every query-protocol response.
const xmlNamespace = "http://queue.amazonaws.com/doc/2012-11-05/"

// xmlEncoder writes the result element of a query-protocol response. Lists and maps are flattened, as SQS
// sends them: a list is its items one after another (<Message>…</Message><Message>…</Message>), a map its
// entries (<Attribute><Name>…</Name><Value>…</Value></Attribute>).
type xmlEncoder struct {
	b     []byte
	stack []xmlFrame
}

// xmlFrame is an open list (item) or map (item, key and value element names).
type xmlFrame struct{ item, key, value string }

func (e *xmlEncoder) reset() {
	e.b = e.b[:0]
	e.stack = e.stack[:0]
}

func (e *xmlEncoder) start(name string) { e.b = append(append(append(e.b, '<'), name...), '>') }
func (e *xmlEncoder) end(name string)   { e.b = append(append(append(e.b, '<', '/'), name...), '>') }

func (e *xmlEncoder) element(name, v string) {
	e.start(name)
	e.b = appendXMLText(e.b, v)
	e.end(name)
}

func (e *xmlEncoder) top() xmlFrame { return e.stack[len(e.stack)-1] }

func (e *xmlEncoder) str(name, v string) { e.element(name, v) }

func (e *xmlEncoder) num(name string, v int64) {
	e.start(name)
	e.b = strconv.AppendInt(e.b, v, 10)
	e.end(name)
}

func (e *xmlEncoder) boolean(name string, v bool) {
	e.start(name)
	e.b = strconv.AppendBool(e.b, v)
	e.end(name)
}

func (e *xmlEncoder) md5Body(name, body string) {
	e.start(name)
	e.b = sqsmd5.AppendBody(e.b, body) // hex digits: nothing to escape
	e.end(name)
}

func (e *xmlEncoder) md5Attributes(name string, attrs map[string]fifoq.Attribute) {
	e.start(name)
	e.b = sqsmd5.AppendAttributes(e.b, attrs)
	e.end(name)
}

func (e *xmlEncoder) blob(name string, v []byte) {
	e.start(name)
	e.b = base64.StdEncoding.AppendEncode(e.b, v)
	e.end(name)
}

func (e *xmlEncoder) beginList(_, item string) { e.stack = append(e.stack, xmlFrame{item: item}) }
func (e *xmlEncoder) endList()                 { e.stack = e.stack[:len(e.stack)-1] }
func (e *xmlEncoder) listStr(v string)         { e.element(e.top().item, v) }
func (e *xmlEncoder) beginItem()               { e.start(e.top().item) }
func (e *xmlEncoder) endItem()                 { e.end(e.top().item) }

func (e *xmlEncoder) beginMap(_, entry, key, value string) {
	e.stack = append(e.stack, xmlFrame{entry, key, value})
}

func (e *xmlEncoder) endMap() { e.stack = e.stack[:len(e.stack)-1] }

func (e *xmlEncoder) mapStr(k, v string) {
	f := e.top()
	e.start(f.item)
	e.element(f.key, k)
	e.element(f.value, v)
	e.end(f.item)
}

func (e *xmlEncoder) beginMapItem(k string) {
	f := e.top()
	e.start(f.item)
	e.element(f.key, k)
	e.start(f.value)
}

func (e *xmlEncoder) endMapItem() {
	f := e.top()
	e.end(f.value)
	e.end(f.item)
}

// appendXMLText appends s as XML character data. Carriage returns are escaped so that XML parsers do not
// turn them into newlines; characters XML 1.0 cannot carry at all (and bytes that are not UTF-8) become
// U+FFFD.
func appendXMLText(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		var esc string
		n := 1
		switch {
		case c == '&':
			esc = "&amp;"
		case c == '<':
			esc = "&lt;"
		case c == '>':
			esc = "&gt;"
		case c == '"':
			esc = "&quot;"
		case c == '\'':
			esc = "&apos;"
		case c == '\r':
			esc = "&#xD;"
		case c == '\n' || c == '\t':
		case c < 0x20:
			esc = "\uFFFD"
		case c >= utf8.RuneSelf:
			var r rune
			r, n = utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 || r == 0xFFFE || r == 0xFFFF {
				esc = "\uFFFD"
			}
		}
		if esc != "" {
			b = append(b, s[start:i]...)
			b = append(b, esc...)
			start = i + n
		}
		i += n
	}
	return append(b, s[start:]...)
}

package sqsapi

import (
	"encoding/base64"
	"strconv"
	"unicode/utf8"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/sqsmd5"
)

// jsonEncoder writes a response of the JSON protocol (awsJson1_0) by appending to a byte slice: no
// reflection, and no allocation beyond the buffer, which is pooled. A list with no items is left out, as
// SQS leaves out Messages when none was received and Failed (or Successful) when no entry failed (or
// succeeded): SDKs tell an absent list from an empty one (aws-sdk-java-v2's hasFailed, for one).
type jsonEncoder struct {
	b     []byte
	first []bool     // per open object or array: whether the next member is its first
	lists []listMark // per open list: where it started, to take it back out if it stays empty
}

// A listMark is where an open list's member began, and whether it was its object's first member.
type listMark struct {
	start       int
	parentFirst bool
}

func (e *jsonEncoder) reset() {
	e.b = append(e.b[:0], '{')
	e.first = append(e.first[:0], true)
	e.lists = e.lists[:0]
}

func (e *jsonEncoder) finish() []byte {
	e.b = append(e.b, '}')
	return e.b
}

func (e *jsonEncoder) sep() {
	n := len(e.first) - 1
	if e.first[n] {
		e.first[n] = false
	} else {
		e.b = append(e.b, ',')
	}
}

func (e *jsonEncoder) key(name string) {
	e.sep()
	e.b = appendJSONString(e.b, name)
	e.b = append(e.b, ':')
}

func (e *jsonEncoder) open(c byte) {
	e.b = append(e.b, c)
	e.first = append(e.first, true)
}

func (e *jsonEncoder) close(c byte) {
	e.b = append(e.b, c)
	e.first = e.first[:len(e.first)-1]
}

func (e *jsonEncoder) str(name, v string) {
	e.key(name)
	e.b = appendJSONString(e.b, v)
}

func (e *jsonEncoder) num(name string, v int64) {
	e.key(name)
	e.b = strconv.AppendInt(e.b, v, 10)
}

func (e *jsonEncoder) boolean(name string, v bool) {
	e.key(name)
	e.b = strconv.AppendBool(e.b, v)
}

func (e *jsonEncoder) md5Body(name, body string) {
	e.key(name)
	e.b = append(e.b, '"')
	e.b = sqsmd5.AppendBody(e.b, body) // hex digits: nothing to escape
	e.b = append(e.b, '"')
}

func (e *jsonEncoder) md5Attributes(name string, attrs map[string]fifoq.Attribute) {
	e.key(name)
	e.b = append(e.b, '"')
	e.b = sqsmd5.AppendAttributes(e.b, attrs)
	e.b = append(e.b, '"')
}

func (e *jsonEncoder) blob(name string, v []byte) {
	e.key(name)
	e.b = append(e.b, '"')
	e.b = base64.StdEncoding.AppendEncode(e.b, v)
	e.b = append(e.b, '"')
}

func (e *jsonEncoder) beginList(name, _ string) {
	e.lists = append(e.lists, listMark{len(e.b), e.first[len(e.first)-1]})
	e.key(name)
	e.open('[')
}

func (e *jsonEncoder) endList() {
	m := e.lists[len(e.lists)-1]
	e.lists = e.lists[:len(e.lists)-1]
	if n := len(e.first) - 1; e.first[n] { // no item: leave the list out
		e.b = e.b[:m.start]
		e.first = e.first[:n]
		e.first[n-1] = m.parentFirst
		return
	}
	e.close(']')
}

func (e *jsonEncoder) listStr(v string) {
	e.sep()
	e.b = appendJSONString(e.b, v)
}

func (e *jsonEncoder) beginItem() {
	e.sep()
	e.open('{')
}

func (e *jsonEncoder) endItem() { e.close('}') }

func (e *jsonEncoder) beginMap(name, _, _, _ string) {
	e.key(name)
	e.open('{')
}

func (e *jsonEncoder) endMap() { e.close('}') }

func (e *jsonEncoder) mapStr(k, v string) { e.str(k, v) }

func (e *jsonEncoder) beginMapItem(k string) {
	e.key(k)
	e.open('{')
}

func (e *jsonEncoder) endMapItem() { e.close('}') }

// queryJSONEncoder writes the result of a query-protocol request that asked for JSON (Accept:
// application/json), as SQS answers one: the XML document's structure in JSON, with each member under its
// member name (Attributes, not Attribute), lists as arrays, and maps as arrays of {"Name": k, "Value": v}
// entries (the key and value names of the map's XML entries), as recorded for GetQueueAttributes. The
// actions whose answers in this format are on record differ, and write them as recorded (see their
// encodeQueryJSON methods): ListQueues, ReceiveMessage and SendMessage.
type queryJSONEncoder struct {
	jsonEncoder
	maps []xmlFrame // per open map: its key and value names
}

// null writes the member name with the value null: the answers on record in this format name absent
// members so (ListQueues, ReceiveMessage, SendMessage).
func (e *queryJSONEncoder) null(name string) {
	e.key(name)
	e.b = append(e.b, "null"...)
}

// strOrNull writes the member name with the value v, or null when v is "".
func (e *queryJSONEncoder) strOrNull(name, v string) {
	if v == "" {
		e.null(name)
		return
	}
	e.str(name, v)
}

func (e *queryJSONEncoder) reset() {
	e.jsonEncoder.reset()
	e.maps = e.maps[:0]
}

func (e *queryJSONEncoder) beginMap(name, _, key, value string) {
	e.maps = append(e.maps, xmlFrame{key: key, value: value})
	e.key(name)
	e.open('[')
}

func (e *queryJSONEncoder) endMap() {
	e.maps = e.maps[:len(e.maps)-1]
	e.close(']')
}

func (e *queryJSONEncoder) mapStr(k, v string) {
	f := e.maps[len(e.maps)-1]
	e.sep()
	e.open('{')
	e.str(f.key, k)
	e.str(f.value, v)
	e.close('}')
}

func (e *queryJSONEncoder) beginMapItem(k string) {
	f := e.maps[len(e.maps)-1]
	e.sep()
	e.open('{')
	e.str(f.key, k)
	e.key(f.value)
	e.open('{')
}

func (e *queryJSONEncoder) endMapItem() {
	e.close('}')
	e.close('}')
}

// jsonSafe[c] is true for the ASCII bytes that go into a JSON string as they are.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendJSONString appends s as a JSON string. Control characters are escaped, and bytes that are not
// valid UTF-8 become U+FFFD, so the output is valid JSON whatever s holds.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += n
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

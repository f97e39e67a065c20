package sqsapi

import (
	"encoding/base64"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/fifoq/fifoq"
)

// jsonDecoder reads a JSON-protocol request body without reflection, for the inputs of the actions on the
// hot path (sending, receiving and deleting messages), which decode themselves with it (jsonInput). Member
// names are matched exactly, as SQS does; unknown members are skipped; null leaves a member unset. The other
// actions go through encoding/json.
type jsonDecoder struct {
	data    []byte
	pos     int
	depth   int
	scratch []byte // for strings with escapes

	// unescaped reports that the last string rawString returned is in scratch rather than in data.
	unescaped bool
	// whole is data as one string, made on first use by span: the strings a request needs only while it
	// is served (receipt handles) are slices of it, one allocation for them all.
	whole string
}

// optString is an optional string parameter: set tells an empty value (which the checks reject as invalid)
// from an absent one (a missing parameter). A value rather than a *string, so decoding it allocates no
// pointer.
type optString struct {
	v   string
	set bool
}

// optInt is an optional integer parameter, as optString.
type optInt struct {
	v   int
	set bool
}

// A jsonInput is an input that decodes itself from a JSON-protocol body.
type jsonInput interface {
	fromJSON(d *jsonDecoder) error
}

// maxJSONDepth bounds the nesting of skipped values.
const maxJSONDepth = 64

// errJSON is the error of a body that is not well-formed JSON.
var errJSON = &apiError{codeSerialization, "The request body is not well-formed JSON.", 400, nil}

func typeError(member, want string) *apiError {
	return newError(codeSerialization, "Value for parameter %s is invalid: expected %s.", member, want)
}

// decodeJSON decodes body, a JSON object, into in. d's scratch buffer is kept for the next call: a decoder
// pooled with its call (call.jdec) allocates for escapes only while its buffer grows.
func (d *jsonDecoder) decodeJSON(body []byte, in jsonInput) error {
	*d = jsonDecoder{data: body, scratch: d.scratch[:0]}
	d.ws()
	if d.pos == len(d.data) {
		return nil // an empty body is an empty input
	}
	if err := in.fromJSON(d); err != nil {
		return err
	}
	d.ws()
	if d.pos != len(d.data) {
		return errJSON
	}
	return nil
}

func (d *jsonDecoder) ws() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, or 0 at the end.
func (d *jsonDecoder) peek() byte {
	d.ws()
	if d.pos < len(d.data) {
		return d.data[d.pos]
	}
	return 0
}

// null consumes a null and reports whether there was one.
func (d *jsonDecoder) null() bool {
	if d.peek() == 'n' && len(d.data)-d.pos >= 4 && string(d.data[d.pos:d.pos+4]) == "null" {
		d.pos += 4
		return true
	}
	return false
}

// object reads an object (or null), calling member for each member with its name; member must read the
// value. The name is valid only during the call.
func (d *jsonDecoder) object(what string, member func(name []byte) error) error {
	if d.null() {
		return nil
	}
	if d.peek() != '{' {
		return typeError(what, "an object")
	}
	d.pos++
	if d.peek() == '}' {
		d.pos++
		return nil
	}
	for {
		if d.peek() != '"' {
			return errJSON
		}
		name, err := d.rawString()
		if err != nil {
			return err
		}
		if d.peek() != ':' {
			return errJSON
		}
		d.pos++
		if err := member(name); err != nil {
			return err
		}
		switch d.peek() {
		case ',':
			d.pos++
		case '}':
			d.pos++
			return nil
		default:
			return errJSON
		}
	}
}

// array reads an array (or null), calling elem for each element; elem must read it.
func (d *jsonDecoder) array(what string, elem func() error) error {
	if d.null() {
		return nil
	}
	if d.peek() != '[' {
		return typeError(what, "a list")
	}
	d.pos++
	if d.peek() == ']' {
		d.pos++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch d.peek() {
		case ',':
			d.pos++
		case ']':
			d.pos++
			return nil
		default:
			return errJSON
		}
	}
}

// str reads a string; null leaves *dst as it is.
func (d *jsonDecoder) str(what string, dst *string) error {
	if d.null() {
		return nil
	}
	if d.peek() != '"' {
		return typeError(what, "a string")
	}
	b, err := d.rawString()
	if err != nil {
		return err
	}
	*dst = string(b)
	return nil
}

// optStr reads a string and marks it given; null leaves *dst unset.
func (d *jsonDecoder) optStr(what string, dst *optString) error {
	if d.null() {
		return nil
	}
	if err := d.str(what, &dst.v); err != nil {
		return err
	}
	dst.set = true
	return nil
}

// span reads a string needed only while the request is served, such as a receipt handle: without escapes,
// it is a slice of the body's string (d.whole), which it makes on first use; null leaves *dst as it is.
// It must never be stored beyond the request, which a substring would keep whole in memory.
func (d *jsonDecoder) span(what string, dst *string) error {
	if d.null() {
		return nil
	}
	if d.peek() != '"' {
		return typeError(what, "a string")
	}
	b, err := d.rawString()
	if err != nil {
		return err
	}
	if d.unescaped {
		*dst = string(b)
		return nil
	}
	if d.whole == "" {
		d.whole = string(d.data)
	}
	start := cap(d.data) - cap(b) // b is d.data[start:end]
	*dst = d.whole[start : start+len(b)]
	return nil
}

// rawBytes reads a string needed only while the request is decoded and served, such as a QueueUrl: a
// slice of the body, or a copy of it when it had escapes (scratch is reused by the next one); null leaves
// *dst as it is.
func (d *jsonDecoder) rawBytes(what string, dst *[]byte) error {
	if d.null() {
		return nil
	}
	if d.peek() != '"' {
		return typeError(what, "a string")
	}
	b, err := d.rawString()
	if err != nil {
		return err
	}
	if d.unescaped {
		b = append([]byte(nil), b...)
	}
	*dst = b
	return nil
}

// strList reads a list of strings.
func (d *jsonDecoder) strList(what string, dst *[]string) error {
	return d.array(what, func() error {
		var s string
		if err := d.str(what, &s); err != nil {
			return err
		}
		*dst = append(*dst, s)
		return nil
	})
}

// optInt reads an integer into a new pointer; null leaves *dst nil. Like encoding/json, it takes only
// integers that fit an int: no fraction, no exponent.
func (d *jsonDecoder) optInt(what string, dst **int) error {
	var v optInt
	if err := d.optIntValue(what, &v); err != nil || !v.set {
		return err
	}
	n := v.v
	*dst = &n
	return nil
}

// optIntValue is optInt into an optInt, without the pointer.
func (d *jsonDecoder) optIntValue(what string, dst *optInt) error {
	if d.null() {
		return nil
	}
	c := d.peek()
	if c != '-' && (c < '0' || c > '9') {
		return typeError(what, "an integer")
	}
	start := d.pos
	neg := c == '-'
	if neg {
		d.pos++
	}
	var n uint64
	digits := 0
	for d.pos < len(d.data) && '0' <= d.data[d.pos] && d.data[d.pos] <= '9' {
		n = n*10 + uint64(d.data[d.pos]-'0')
		digits++
		d.pos++
		if n > 1<<53 {
			return typeError(what, "an integer")
		}
	}
	if digits == 0 || digits > 1 && d.data[start+btoi(neg)] == '0' {
		return errJSON
	}
	if d.pos < len(d.data) {
		switch d.data[d.pos] {
		case '.', 'e', 'E':
			return typeError(what, "an integer")
		}
	}
	v := int(n)
	if neg {
		v = -v
	}
	*dst = optInt{v, true}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// blob reads a base64 string.
func (d *jsonDecoder) blob(what string, dst *[]byte) error {
	if d.null() {
		return nil
	}
	if d.peek() != '"' {
		return typeError(what, "a base64 string")
	}
	b, err := d.rawString()
	if err != nil {
		return err
	}
	out := make([]byte, base64.StdEncoding.DecodedLen(len(b)))
	n, err := base64.StdEncoding.Decode(out, b)
	if err != nil {
		return typeError(what, "a base64 string")
	}
	*dst = out[:n]
	return nil
}

// skip reads any value.
func (d *jsonDecoder) skip() error {
	switch c := d.peek(); {
	case c == '"':
		_, err := d.rawString()
		return err
	case c == '{' || c == '[':
		d.depth++
		defer func() { d.depth-- }()
		if d.depth > maxJSONDepth {
			return errJSON
		}
		if c == '{' {
			return d.object("", func([]byte) error { return d.skip() })
		}
		return d.array("", d.skip)
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if len(d.data)-d.pos >= len(lit) && string(d.data[d.pos:d.pos+len(lit)]) == lit {
				d.pos += len(lit)
				return nil
			}
		}
		return errJSON
	case c == '-' || '0' <= c && c <= '9':
		return d.number()
	}
	return errJSON
}

// number reads a number of any form.
func (d *jsonDecoder) number() error {
	start := d.pos
	if d.data[d.pos] == '-' {
		d.pos++
	}
	digits := func() int {
		n := 0
		for d.pos < len(d.data) && '0' <= d.data[d.pos] && d.data[d.pos] <= '9' {
			d.pos++
			n++
		}
		return n
	}
	intStart := d.pos
	if n := digits(); n == 0 || n > 1 && d.data[intStart] == '0' {
		return errJSON
	}
	if d.pos < len(d.data) && d.data[d.pos] == '.' {
		d.pos++
		if digits() == 0 {
			return errJSON
		}
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if digits() == 0 {
			return errJSON
		}
	}
	if d.pos == start {
		return errJSON
	}
	return nil
}

// rawString reads a string at d.pos (a '"') and returns its contents, unescaped; it is valid until the next
// call. Unlike encoding/json, it replaces nothing by U+FFFD: bytes that are not UTF-8 are kept as they are,
// and so is a lone surrogate escape (\ud800 without its pair), written as the three bytes of its code point,
// which are not UTF-8 either. The checks of the values then see them: a body or attribute value that is not
// valid UTF-8 is rejected as the same bytes sent with the query protocol are, never stored altered.
func (d *jsonDecoder) rawString() ([]byte, error) {
	d.unescaped = false
	d.pos++ // the opening quote
	start := d.pos
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			b := d.data[start:d.pos]
			d.pos++
			return b, nil
		case c == '\\':
			end, err := d.stringEnd(start)
			if err != nil {
				return nil, err
			}
			b := d.data[start:end]
			d.pos = end + 1
			return d.unescape(b)
		case c < 0x20:
			return nil, errJSON
		}
		d.pos++
	}
	return nil, errJSON
}

// stringEnd returns the index of the quote that ends the string starting at start.
func (d *jsonDecoder) stringEnd(start int) (int, error) {
	for i := start; i < len(d.data); i++ {
		switch c := d.data[i]; {
		case c == '"':
			return i, nil
		case c == '\\':
			i++
		case c < 0x20:
			return 0, errJSON
		}
	}
	return 0, errJSON
}

// unescape decodes the escapes of a string's contents; other bytes, UTF-8 or not, are copied as they are.
func (d *jsonDecoder) unescape(b []byte) ([]byte, error) {
	out := d.scratch[:0]
	for i := 0; i < len(b); {
		c := b[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(b) {
			return nil, errJSON
		}
		i++
		switch e := b[i]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(b[i+1:])
			if !ok {
				return nil, errJSON
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if r < 0xDC00 && i+2 < len(b) && b[i+1] == '\\' && b[i+2] == 'u' {
					if r2, ok := hex4(b[i+3:]); ok {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							out = utf8.AppendRune(out, dec)
							i += 7
							continue
						}
					}
				}
				out = appendSurrogate(out, r) // lone: kept, as bytes that are not UTF-8
				i++
				continue
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, errJSON
		}
		i++
	}
	d.scratch = out
	d.unescaped = true
	return out, nil
}

// appendSurrogate appends the three-byte form of the surrogate code point r, which UTF-8 does not allow
// (utf8.AppendRune would write U+FFFD instead): a check of the string finds it invalid.
func appendSurrogate(b []byte, r rune) []byte {
	return append(b, 0xE0|byte(r>>12), 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
}

// hex4 reads four hex digits.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// The inputs on the hot path decode themselves.

// attributeFromJSON reads a MessageAttributeValue or MessageSystemAttributeValue; a null or missing
// StringValue reads as "".
func attributeFromJSON(d *jsonDecoder, what string, a *fifoq.Attribute) error {
	return d.object(what, func(name []byte) error {
		switch string(name) {
		case "DataType":
			return d.str("DataType", &a.DataType)
		case "StringValue":
			return d.str("StringValue", &a.StringValue)
		case "BinaryValue":
			return d.blob("BinaryValue", &a.BinaryValue)
		}
		return d.skip()
	})
}

func attributesFromJSON(d *jsonDecoder, what string, dst *map[string]fifoq.Attribute) error {
	return d.object(what, func(name []byte) error {
		key := string(name)
		var a fifoq.Attribute
		if err := attributeFromJSON(d, what, &a); err != nil {
			return err
		}
		if *dst == nil {
			*dst = make(map[string]fifoq.Attribute, 2)
		}
		(*dst)[key] = a
		return nil
	})
}

// newEntry appends a zero entry to a batch's entries and returns it, to be decoded in place; the first
// takes room for a full batch.
func newEntry[E any](entries *[]E) *E {
	if *entries == nil {
		*entries = make([]E, 0, fifoq.MaxBatchEntries)
	}
	var zero E
	*entries = append(*entries, zero)
	return &(*entries)[len(*entries)-1]
}

// member reads one member of a send entry; it reports false for a name that is not one.
func (e *sendEntry) member(d *jsonDecoder, name []byte) (bool, error) {
	switch string(name) {
	case "Id":
		return true, d.str("Id", &e.Id)
	case "MessageBody":
		return true, d.str("MessageBody", &e.MessageBody)
	case "DelaySeconds":
		return true, d.optIntValue("DelaySeconds", &e.DelaySeconds)
	case "MessageAttributes":
		return true, attributesFromJSON(d, "MessageAttributes", &e.MessageAttributes)
	case "MessageSystemAttributes":
		return true, attributesFromJSON(d, "MessageSystemAttributes", &e.MessageSystemAttributes)
	case "MessageDeduplicationId":
		return true, d.optStr("MessageDeduplicationId", &e.MessageDeduplicationId)
	case "MessageGroupId":
		return true, d.optStr("MessageGroupId", &e.MessageGroupId)
	}
	return false, nil
}

func (in *sendMessageInput) fromJSON(d *jsonDecoder) error {
	return d.object("input", func(name []byte) error {
		if string(name) == "QueueUrl" {
			return d.rawBytes("QueueUrl", &in.QueueUrl)
		}
		if ok, err := in.member(d, name); ok || err != nil {
			return err
		}
		return d.skip()
	})
}

func (in *sendMessageBatchInput) fromJSON(d *jsonDecoder) error {
	return d.object("input", func(name []byte) error {
		switch string(name) {
		case "QueueUrl":
			return d.rawBytes("QueueUrl", &in.QueueUrl)
		case "Entries":
			return d.array("Entries", func() error {
				e := newEntry(&in.Entries)
				return d.object("Entries", func(name []byte) error {
					if ok, err := e.member(d, name); ok || err != nil {
						return err
					}
					return d.skip()
				})
			})
		}
		return d.skip()
	})
}

func (in *receiveMessageInput) fromJSON(d *jsonDecoder) error {
	return d.object("input", func(name []byte) error {
		switch string(name) {
		case "QueueUrl":
			return d.rawBytes("QueueUrl", &in.QueueUrl)
		case "AttributeNames":
			return d.strList("AttributeNames", &in.AttributeNames)
		case "MessageSystemAttributeNames":
			return d.strList("MessageSystemAttributeNames", &in.MessageSystemAttributeNames)
		case "MessageAttributeNames":
			return d.strList("MessageAttributeNames", &in.MessageAttributeNames)
		case "MaxNumberOfMessages":
			return d.optIntValue("MaxNumberOfMessages", &in.MaxNumberOfMessages)
		case "VisibilityTimeout":
			return d.optIntValue("VisibilityTimeout", &in.VisibilityTimeout)
		case "WaitTimeSeconds":
			return d.optIntValue("WaitTimeSeconds", &in.WaitTimeSeconds)
		case "ReceiveRequestAttemptId":
			return d.optStr("ReceiveRequestAttemptId", &in.ReceiveRequestAttemptId)
		}
		return d.skip()
	})
}

func (in *deleteMessageInput) fromJSON(d *jsonDecoder) error {
	return d.object("input", func(name []byte) error {
		switch string(name) {
		case "QueueUrl":
			return d.str("QueueUrl", &in.QueueUrl)
		case "ReceiptHandle":
			return d.str("ReceiptHandle", &in.ReceiptHandle)
		}
		return d.skip()
	})
}

func (in *deleteMessageBatchInput) fromJSON(d *jsonDecoder) error {
	return d.object("input", func(name []byte) error {
		switch string(name) {
		case "QueueUrl":
			return d.rawBytes("QueueUrl", &in.QueueUrl)
		case "Entries":
			return d.array("Entries", func() error {
				e := newEntry(&in.Entries)
				return d.object("Entries", func(name []byte) error {
					switch string(name) {
					case "Id":
						return d.span("Id", &e.Id)
					case "ReceiptHandle":
						return d.span("ReceiptHandle", &e.ReceiptHandle)
					}
					return d.skip()
				})
			})
		}
		return d.skip()
	})
}

func (in *changeVisibilityInput) fromJSON(d *jsonDecoder) error {
	return d.object("input", func(name []byte) error {
		switch string(name) {
		case "QueueUrl":
			return d.str("QueueUrl", &in.QueueUrl)
		case "ReceiptHandle":
			return d.str("ReceiptHandle", &in.ReceiptHandle)
		case "VisibilityTimeout":
			return d.optInt("VisibilityTimeout", &in.VisibilityTimeout)
		}
		return d.skip()
	})
}

func (in *changeVisibilityBatchInput) fromJSON(d *jsonDecoder) error {
	return d.object("input", func(name []byte) error {
		switch string(name) {
		case "QueueUrl":
			return d.str("QueueUrl", &in.QueueUrl)
		case "Entries":
			return d.array("Entries", func() error {
				e := newEntry(&in.Entries)
				return d.object("Entries", func(name []byte) error {
					switch string(name) {
					case "Id":
						return d.str("Id", &e.Id)
					case "ReceiptHandle":
						return d.str("ReceiptHandle", &e.ReceiptHandle)
					case "VisibilityTimeout":
						return d.optInt("VisibilityTimeout", &e.VisibilityTimeout)
					}
					return d.skip()
				})
			})
		}
		return d.skip()
	})
}

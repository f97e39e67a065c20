package rule

import (
	"errors"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf16"
)

// JSON as SNS reads it. SNS parses the JSON of an attribute (a FilterPolicy, a RedrivePolicy) with Jackson's
// tree model (ObjectMapper.readTree, Jackson 2.17, default settings) and answers a syntax error with
// Jackson's message and location: "Unexpected character ('i' (code 105)): was expecting double-quote to
// start field name\n at [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line:
// 1, column: 2]". ParseJSON reads as Jackson's ReaderBasedJsonParser does, token by token, so that the first
// fault found, its words and its line and column are Jackson's; Compact writes a tree back as Jackson's
// JsonNode.toString does.

// JSONKind is the kind of a JSONValue.
type JSONKind uint8

// The kinds of JSON values.
const (
	JSONNull JSONKind = iota + 1
	JSONBool
	JSONNumber
	JSONString
	JSONArray
	JSONObject
)

// A JSONValue is a JSON value as Jackson's tree model holds it: the members of an object in the order of
// their first appearance, a key given twice holding its last value there.
type JSONValue struct {
	Kind    JSONKind
	Text    string // a string's value, a number as written, "true" or "false"
	Float   bool   // a number with a fraction or an exponent, which Jackson reads as a double
	Items   []JSONValue
	Members []JSONMember
}

// A JSONMember is one key of an object and its value.
type JSONMember struct {
	Key   string
	Value JSONValue
}

// Member returns the value of key in an object, and whether it has one.
func (v *JSONValue) Member(key string) (*JSONValue, bool) {
	for i := range v.Members {
		if v.Members[i].Key == key {
			return &v.Members[i].Value, true
		}
	}
	return nil, false
}

// A JSONSyntaxError is Jackson's error for JSON it cannot read: its message and the 1-based line and column
// (in UTF-16 units, as Java counts) it points at. Its Error is the whole text Jackson gives, the location in
// the form of a parser that does not include its source.
type JSONSyntaxError struct {
	Message      string
	Line, Column int
}

func (e *JSONSyntaxError) Error() string {
	return e.Message + "\n at " + jsonLocation(e.Line, e.Column)
}

// ErrJSONTooDeep is ParseJSON's error for containers nested deeper than it was asked to read.
var ErrJSONTooDeep = errors.New("JSON nested too deep")

// jsonLocation is a location as Jackson prints it when it does not include the source.
func jsonLocation(line, col int) string {
	return "[Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: " +
		strconv.Itoa(line) + ", column: " + strconv.Itoa(col) + "]"
}

// jsonValidValues is what Jackson says it expected where a value is missing.
const jsonValidValues = "(JSON String, Number, Array, Object or token 'null', 'true' or 'false')"

// ParseJSON reads the JSON value s starts with, as ObjectMapper.readTree does: what follows the value is not
// read (Jackson's default), and s of white space only holds no value (present is false). Containers nest at
// most maxDepth deep; deeper ones return ErrJSONTooDeep. A syntax error returns a *JSONSyntaxError.
func ParseJSON(s string, maxDepth int) (v JSONValue, present bool, err error) {
	p := &jsonParser{buf: utf16.Encode([]rune(s)), row: 1, maxDepth: maxDepth}
	p.ctx = []jsonContext{{kind: ctxRoot, index: -1, row: 1, col: 0}}
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(jsonFailure)
			if !ok {
				panic(r)
			}
			v, present, err = JSONValue{}, false, f.err
		}
	}()
	t := p.nextToken()
	if t == tokEOF {
		return JSONValue{}, false, nil
	}
	return p.readValue(t), true, nil
}

// jsonFailure carries an error out of the parser's recursion.
type jsonFailure struct{ err error }

type jsonToken uint8

const (
	tokEOF jsonToken = iota
	tokStartObject
	tokEndObject
	tokStartArray
	tokEndArray
	tokFieldName
	tokString
	tokNumber
	tokTrue
	tokFalse
	tokNull
)

const (
	ctxRoot = iota
	ctxArray
	ctxObject
)

// A jsonContext is one container being read, or the root: Jackson's JsonReadContext.
type jsonContext struct {
	kind     int
	index    int // entries seen, less one
	row, col int // where the container starts, 1-based
}

func (c *jsonContext) typeDesc() string {
	switch c.kind {
	case ctxArray:
		return "Array"
	case ctxObject:
		return "Object"
	}
	return "root"
}

// jsonParser reads UTF-16 units as Jackson's ReaderBasedJsonParser reads chars.
type jsonParser struct {
	buf           []uint16
	ptr           int
	row, rowStart int
	ctx           []jsonContext
	maxDepth      int

	cur        jsonToken
	next       jsonToken // the value after a field name, read with it
	incomplete bool      // the current token is a string whose content is not read yet
	name       string    // the current field name
	number     string    // the current number, as written
	float      bool      // it has a fraction or an exponent
	tokRow     int       // where the current value starts
	tokCol     int
}

func (p *jsonParser) top() *jsonContext { return &p.ctx[len(p.ctx)-1] }

// fail stops the parse with msg, located at column (1-based) of the current row.
func (p *jsonParser) fail(msg string, col int) {
	panic(jsonFailure{&JSONSyntaxError{Message: msg, Line: p.row, Column: col}})
}

// reportError fails at the current position, just past what was read.
func (p *jsonParser) reportError(msg string) { p.fail(msg, p.ptr-p.rowStart+1) }

// unexpectedChar fails at the character just read, as Jackson 2.17 locates an unexpected character.
func (p *jsonParser) unexpectedChar(ch uint16, comment string) {
	msg := "Unexpected character (" + jsonCharDesc(ch) + ")"
	if comment != "" {
		msg += ": " + comment
	}
	p.fail(msg, p.ptr-1-p.rowStart+1)
}

func (p *jsonParser) invalidEOF(msg string) { p.reportError("Unexpected end-of-input" + msg) }

// jsonCharDesc describes a character as Jackson's messages do.
func jsonCharDesc(ch uint16) string {
	r := rune(ch)
	if r < 0x20 || r >= 0x7f && r <= 0x9f {
		return "(CTRL-CHAR, code " + strconv.Itoa(int(ch)) + ")"
	}
	c := string(r)
	if utf16.IsSurrogate(r) {
		c = string(unicode.ReplacementChar)
	}
	if ch > 255 {
		return "'" + c + "' (code " + strconv.Itoa(int(ch)) + " / 0x" + strconv.FormatInt(int64(ch), 16) + ")"
	}
	return "'" + c + "' (code " + strconv.Itoa(int(ch)) + ")"
}

// javaIdentifierStart and javaIdentifierPart approximate Java's Character methods of those names, which
// Jackson uses to find the extent of an unrecognized token.
func javaIdentifierStart(ch uint16) bool {
	r := rune(ch)
	return unicode.IsLetter(r) || r == '$' || r == '_' || unicode.In(r, unicode.Sc, unicode.Pc, unicode.Nl)
}

func javaIdentifierPart(ch uint16) bool {
	r := rune(ch)
	return javaIdentifierStart(ch) || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Cf) ||
		r <= 8 || r >= 0x0e && r <= 0x1b || r >= 0x7f && r <= 0x9f
}

func (p *jsonParser) push(kind int) {
	if len(p.ctx) > p.maxDepth { // the root plus maxDepth containers are there already
		panic(jsonFailure{ErrJSONTooDeep})
	}
	p.ctx = append(p.ctx, jsonContext{kind: kind, index: -1, row: p.tokRow, col: p.tokCol})
}

// nextToken is ReaderBasedJsonParser.nextToken.
func (p *jsonParser) nextToken() jsonToken {
	if p.cur == tokFieldName {
		t := p.next
		p.next = tokEOF
		switch t {
		case tokStartArray:
			p.push(ctxArray)
		case tokStartObject:
			p.push(ctxObject)
		}
		p.cur = t
		return t
	}
	if p.incomplete {
		p.readString(false)
	}
	i, ok := p.skipWSOrEnd()
	if !ok {
		p.cur = tokEOF
		return tokEOF
	}
	if i|0x20 == '}' {
		p.closeScope(i)
		return p.cur
	}
	c := p.top()
	c.index++
	if c.kind != ctxRoot && c.index > 0 {
		i = p.skipComma(i)
	}
	inObject := c.kind == ctxObject
	if inObject {
		if i != '"' {
			p.unexpectedChar(i, "was expecting double-quote to start field name")
		}
		p.name = p.readName()
		p.cur = tokFieldName
		i = p.skipColon()
	}
	p.tokRow, p.tokCol = p.row, p.ptr-p.rowStart
	var t jsonToken
	switch {
	case i == '"':
		p.incomplete = true
		t = tokString
	case i == '[':
		if !inObject {
			p.push(ctxArray)
		}
		t = tokStartArray
	case i == '{':
		if !inObject {
			p.push(ctxObject)
		}
		t = tokStartObject
	case i == 't':
		p.matchToken("true", 1)
		t = tokTrue
	case i == 'f':
		p.matchToken("false", 1)
		t = tokFalse
	case i == 'n':
		p.matchToken("null", 1)
		t = tokNull
	case i == '-' || '0' <= i && i <= '9':
		p.readNumber(i == '-')
		t = tokNumber
	default:
		t = p.handleOddValue(i)
	}
	if inObject {
		p.next = t
		return tokFieldName
	}
	p.cur = t
	return t
}

// closeScope reads a ']' or '}'.
func (p *jsonParser) closeScope(i uint16) {
	c := p.top()
	want, exp, t := ctxArray, '}', tokEndArray
	if i == '}' {
		want, exp, t = ctxObject, ']', tokEndObject
	}
	if c.kind != want {
		p.fail(fmt.Sprintf("Unexpected close marker '%c': expected '%c' (for %s starting at %s)", rune(i), exp, c.typeDesc(),
			jsonLocation(c.row, c.col)), p.ptr-1-p.rowStart+1)
	}
	p.ctx = p.ctx[:len(p.ctx)-1]
	p.cur = t
}

// skipWS skips white space and returns the next character, past it; ok is false at the end of the input.
func (p *jsonParser) skipWS() (uint16, bool) {
	for p.ptr < len(p.buf) {
		i := p.buf[p.ptr]
		p.ptr++
		switch {
		case i > ' ':
			if i == '/' {
				p.unexpectedChar(i, "maybe a (non-standard) comment? (not recognized as one since Feature 'ALLOW_COMMENTS' not enabled for parser)")
			}
			return i, true
		case i == '\n':
			p.row, p.rowStart = p.row+1, p.ptr
		case i == '\r':
			if p.ptr < len(p.buf) && p.buf[p.ptr] == '\n' {
				p.ptr++
			}
			p.row, p.rowStart = p.row+1, p.ptr
		case i != ' ' && i != '\t':
			p.reportError("Illegal character (" + jsonCharDesc(i) + "): only regular white space (\\r, \\n, \\t) is allowed between tokens")
		}
	}
	return 0, false
}

// skipWSOrEnd is skipWS where the input may end: at its end, a container left open is an error.
func (p *jsonParser) skipWSOrEnd() (uint16, bool) {
	i, ok := p.skipWS()
	if !ok {
		if c := p.top(); c.kind != ctxRoot {
			marker := "Object"
			if c.kind == ctxArray {
				marker = "Array"
			}
			p.invalidEOF(fmt.Sprintf(": expected close marker for %s (start marker at %s)", marker, jsonLocation(c.row, c.col)))
		}
	}
	return i, ok
}

func (p *jsonParser) skipComma(i uint16) uint16 {
	if i != ',' {
		p.unexpectedChar(i, "was expecting comma to separate "+p.top().typeDesc()+" entries")
	}
	i, ok := p.skipWS()
	if !ok {
		p.reportError("Unexpected end-of-input within/between " + p.top().typeDesc() + " entries")
	}
	return i
}

func (p *jsonParser) skipColon() uint16 {
	gotColon := false
	for {
		i, ok := p.skipWS()
		if !ok {
			p.invalidEOF(" within/between " + p.top().typeDesc() + " entries")
		}
		if gotColon {
			return i
		}
		if i != ':' {
			p.unexpectedChar(i, "was expecting a colon to separate field name and value")
		}
		gotColon = true
	}
}

// readName reads a field name, past its opening quote.
func (p *jsonParser) readName() string {
	var out []uint16
	for {
		if p.ptr >= len(p.buf) {
			p.invalidEOF(" in field name")
		}
		c := p.buf[p.ptr]
		p.ptr++
		switch {
		case c == '\\':
			c = p.decodeEscaped()
		case c == '"':
			return string(utf16.Decode(out))
		case c < ' ':
			p.reportError("Illegal unquoted character (" + jsonCharDesc(c) + "): has to be escaped using backslash to be included in name")
		}
		out = append(out, c)
	}
}

// readString reads the rest of the current string value and returns it when keep.
func (p *jsonParser) readString(keep bool) string {
	p.incomplete = false
	var out []uint16
	for {
		if p.ptr >= len(p.buf) {
			p.invalidEOF(": was expecting closing quote for a string value")
		}
		c := p.buf[p.ptr]
		p.ptr++
		switch {
		case c == '\\':
			c = p.decodeEscaped()
		case c == '"':
			return string(utf16.Decode(out))
		case c < ' ':
			p.reportError("Illegal unquoted character (" + jsonCharDesc(c) + "): has to be escaped using backslash to be included in string value")
		}
		if keep {
			out = append(out, c)
		}
	}
}

func (p *jsonParser) decodeEscaped() uint16 {
	if p.ptr >= len(p.buf) {
		p.invalidEOF(" in character escape sequence")
	}
	c := p.buf[p.ptr]
	p.ptr++
	switch c {
	case 'b':
		return '\b'
	case 't':
		return '\t'
	case 'n':
		return '\n'
	case 'f':
		return '\f'
	case 'r':
		return '\r'
	case '"', '/', '\\':
		return c
	case 'u':
	default:
		p.reportError("Unrecognized character escape " + jsonCharDesc(c))
	}
	var v uint16
	for range 4 {
		if p.ptr >= len(p.buf) {
			p.invalidEOF(" in character escape sequence")
		}
		ch := p.buf[p.ptr]
		p.ptr++
		d := hexDigit(ch)
		if d < 0 {
			p.unexpectedChar(ch, "expected a hex-digit for character escape sequence")
		}
		v = v<<4 | uint16(d)
	}
	return v
}

func hexDigit(ch uint16) int {
	switch {
	case '0' <= ch && ch <= '9':
		return int(ch - '0')
	case 'a' <= ch && ch <= 'f':
		return int(ch-'a') + 10
	case 'A' <= ch && ch <= 'F':
		return int(ch-'A') + 10
	}
	return -1
}

// matchToken reads the rest of the literal s, whose first i characters were read.
func (p *jsonParser) matchToken(s string, i int) {
	for ; i < len(s); i++ {
		if p.ptr >= len(p.buf) || p.buf[p.ptr] != uint16(s[i]) {
			p.invalidToken(s[:i])
		}
		p.ptr++
	}
	if p.ptr < len(p.buf) {
		if ch := p.buf[p.ptr]; ch >= '0' && ch != ']' && ch != '}' && javaIdentifierPart(ch) {
			p.invalidToken(s)
		}
	}
}

// invalidToken reports the token that starts with matched, as far as it looks like an identifier.
func (p *jsonParser) invalidToken(matched string) {
	tok := utf16.Encode([]rune(matched))
	for p.ptr < len(p.buf) {
		c := p.buf[p.ptr]
		if !javaIdentifierPart(c) {
			break
		}
		p.ptr++
		tok = append(tok, c)
		if len(tok) >= 256 {
			tok = append(tok, '.', '.', '.')
			break
		}
	}
	p.reportError("Unrecognized token '" + string(utf16.Decode(tok)) + "': was expecting " + jsonValidValues)
}

func (p *jsonParser) handleOddValue(i uint16) jsonToken {
	switch i {
	case 'N':
		p.matchToken("NaN", 1)
		p.reportError("Non-standard token 'NaN': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow")
	case 'I':
		p.matchToken("Infinity", 1)
		p.reportError("Non-standard token 'Infinity': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow")
	case '+':
		if p.ptr >= len(p.buf) {
			p.invalidEOF(" in a Number value")
		}
		c := p.buf[p.ptr]
		p.ptr++
		p.invalidNumberStart(c, false, true)
	}
	if javaIdentifierStart(i) {
		p.invalidToken(string(rune(i)))
	}
	p.unexpectedChar(i, "expected a valid value "+jsonValidValues)
	return tokEOF
}

func (p *jsonParser) numberChar(ch uint16, comment string) {
	p.reportError("Unexpected character (" + jsonCharDesc(ch) + ") in numeric value: " + comment)
}

func (p *jsonParser) invalidNumberStart(ch uint16, negative, hasSign bool) {
	if ch == 'I' && p.ptr < len(p.buf) {
		sign := "+"
		if negative {
			sign = "-"
		}
		if c := p.buf[p.ptr]; c == 'N' || c == 'n' {
			p.ptr++
			match := sign + "INF"
			if c == 'n' {
				match = sign + "Infinity"
			}
			p.matchToken(match, 3)
			p.reportError("Non-standard token '" + match + "': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow")
		}
	}
	if hasSign && !negative {
		p.numberChar('+', "JSON spec does not allow numbers to have plus signs: enable `JsonReadFeature.ALLOW_LEADING_PLUS_SIGN_FOR_NUMBERS` to allow")
	}
	if negative {
		p.numberChar(ch, "expected digit (0-9) to follow minus sign, for valid numeric value")
	}
	p.numberChar(ch, "expected digit (0-9) for valid numeric value")
}

func isDigit16(c uint16) bool { return '0' <= c && c <= '9' }

// readNumber reads a number whose first character ('-' or a digit) was read.
func (p *jsonParser) readNumber(negative bool) {
	start := p.ptr - 1
	if negative {
		if p.ptr >= len(p.buf) {
			p.invalidEOF(": No digit following minus sign")
		}
		c := p.buf[p.ptr]
		p.ptr++
		if !isDigit16(c) {
			p.invalidNumberStart(c, true, true)
		}
	}
	if p.buf[p.ptr-1] == '0' && p.ptr < len(p.buf) && isDigit16(p.buf[p.ptr]) {
		p.reportError("Invalid numeric value: Leading zeroes not allowed")
	}
	for p.ptr < len(p.buf) && isDigit16(p.buf[p.ptr]) {
		p.ptr++
	}
	float := false
	if p.ptr < len(p.buf) && p.buf[p.ptr] == '.' {
		float = true
		p.ptr++
		n := 0
		for p.ptr < len(p.buf) && isDigit16(p.buf[p.ptr]) {
			p.ptr++
			n++
		}
		if n == 0 {
			c := uint16('.')
			if p.ptr < len(p.buf) {
				c = p.buf[p.ptr]
				p.ptr++
			}
			p.numberChar(c, "Decimal point not followed by a digit")
		}
	}
	if p.ptr < len(p.buf) && (p.buf[p.ptr] == 'e' || p.buf[p.ptr] == 'E') {
		float = true
		p.ptr++
		c := p.expChar()
		if c == '-' || c == '+' {
			c = p.expChar()
		}
		if !isDigit16(c) {
			p.numberChar(c, "Exponent indicator not followed by a digit")
		}
		for p.ptr < len(p.buf) && isDigit16(p.buf[p.ptr]) {
			p.ptr++
		}
	}
	p.number, p.float = string(utf16.Decode(p.buf[start:p.ptr])), float
	if p.top().kind == ctxRoot && p.ptr < len(p.buf) {
		c := p.buf[p.ptr]
		p.ptr++
		switch c {
		case ' ', '\t':
		case '\r':
			if p.ptr < len(p.buf) && p.buf[p.ptr] == '\n' {
				p.ptr++
			}
			p.row, p.rowStart = p.row+1, p.ptr
		case '\n':
			p.row, p.rowStart = p.row+1, p.ptr
		default:
			p.unexpectedChar(c, "Expected space separating root-level values")
		}
	}
}

func (p *jsonParser) expChar() uint16 {
	if p.ptr >= len(p.buf) {
		p.invalidEOF(": expected a digit for number exponent")
	}
	c := p.buf[p.ptr]
	p.ptr++
	return c
}

// readValue reads the value that starts with t, as Jackson's JsonNodeDeserializer builds a tree.
func (p *jsonParser) readValue(t jsonToken) JSONValue {
	switch t {
	case tokStartObject:
		v := JSONValue{Kind: JSONObject}
		var index map[string]int
		for p.nextToken() != tokEndObject {
			key := p.name
			val := p.readValue(p.nextToken())
			if index == nil {
				index = make(map[string]int)
			}
			if i, dup := index[key]; dup {
				v.Members[i].Value = val
				continue
			}
			index[key] = len(v.Members)
			v.Members = append(v.Members, JSONMember{Key: key, Value: val})
		}
		return v
	case tokStartArray:
		v := JSONValue{Kind: JSONArray}
		for t := p.nextToken(); t != tokEndArray; t = p.nextToken() {
			v.Items = append(v.Items, p.readValue(t))
		}
		return v
	case tokString:
		return JSONValue{Kind: JSONString, Text: p.readString(true)}
	case tokNumber:
		return JSONValue{Kind: JSONNumber, Text: p.number, Float: p.float}
	case tokTrue:
		return JSONValue{Kind: JSONBool, Text: "true"}
	case tokFalse:
		return JSONValue{Kind: JSONBool, Text: "false"}
	}
	return JSONValue{Kind: JSONNull}
}

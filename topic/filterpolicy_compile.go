package topic

import (
	"math"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/fifoq/fifoq/internal/rule"
)

// How SNS compiles a filter policy, which this file mirrors. SNS reads the policy's JSON into a tree
// (Jackson's readTree, rule.ParseJSON here), writes the tree back without white space (a key given twice
// keeps its first place and its last value; numbers are rewritten as Java writes them), and compiles that
// text with its rule compiler (an early version of aws/event-ruler's JsonRuleCompiler), which reads it token
// by token. A grammar error the compiler raises ends with the location its JSON parser is at: the source
// text and the column just past the last token read, where a string value is read lazily (up to its opening
// quote until its text is asked for) and a field name is read together with the first token of its value.
// The compiler's other errors (a malformed CIDR, a single out-of-range number in anything-but) carry no
// location.

// policyTokenKind is the kind of a token of a compacted policy.
type policyTokenKind uint8

const (
	ptEOF policyTokenKind = iota
	ptStartObject
	ptEndObject
	ptStartArray
	ptEndArray
	ptField
	ptString
	ptNumber
	ptTrue
	ptFalse
	ptNull
)

// A policyToken is one token of a compacted policy; start and end are its offsets in UTF-16 units, as Java
// counts columns.
type policyToken struct {
	kind       policyTokenKind
	start, end int
	text       string  // a string's value, a field's name, otherwise the token as written
	num        float64 // a number's value
}

// lexCompactPolicy splits the compact JSON text Compact wrote into tokens.
func lexCompactPolicy(src string) []policyToken {
	var toks []policyToken
	off := 0 // UTF-16 offset of src[i]
	for i := 0; i < len(src); {
		start := off
		switch c := src[i]; c {
		case '{', '}', '[', ']':
			kind := ptStartObject
			switch c {
			case '}':
				kind = ptEndObject
			case '[':
				kind = ptStartArray
			case ']':
				kind = ptEndArray
			}
			toks = append(toks, policyToken{kind: kind, start: start, end: start + 1, text: string(c)})
			i, off = i+1, off+1
		case ',':
			i, off = i+1, off+1
		case '"':
			var b strings.Builder
			i, off = i+1, off+1
			for src[i] != '"' {
				if src[i] == '\\' {
					e := src[i+1]
					switch e {
					case 'u':
						v, _ := strconv.ParseUint(src[i+2:i+6], 16, 16)
						b.WriteRune(rune(v))
						i, off = i+6, off+6
						continue
					case 'b':
						e = '\b'
					case 't':
						e = '\t'
					case 'n':
						e = '\n'
					case 'f':
						e = '\f'
					case 'r':
						e = '\r'
					}
					b.WriteByte(e)
					i, off = i+2, off+2
					continue
				}
				r, n := utf8.DecodeRuneInString(src[i:])
				b.WriteString(src[i : i+n])
				i, off = i+n, off+utf16.RuneLen(r)
			}
			i, off = i+1, off+1
			t := policyToken{kind: ptString, start: start, end: off, text: b.String()}
			if i < len(src) && src[i] == ':' {
				t.kind = ptField
				i, off = i+1, off+1
			}
			toks = append(toks, t)
		default:
			j := i
			for j < len(src) && !strings.ContainsRune(",]}", rune(src[j])) {
				j++
			}
			t := policyToken{kind: ptNumber, start: start, end: start + j - i, text: src[i:j]}
			switch t.text {
			case "true":
				t.kind = ptTrue
			case "false":
				t.kind = ptFalse
			case "null":
				t.kind = ptNull
			default:
				t.num, _ = strconv.ParseFloat(t.text, 64)
			}
			toks = append(toks, t)
			off += j - i
			i = j
		}
	}
	return toks
}

// A policyCursor reads the tokens of a compacted policy as Jackson's parser hands them to the compiler,
// keeping the parser's input pointer: where an error the compiler raises is located.
type policyCursor struct {
	src       string // the compacted policy
	toks      []policyToken
	i         int  // the current token
	pos       int  // the parser's input pointer, in UTF-16 units
	afterName bool // the current token is a field name whose value's first token is read already
	open      bool // the current token is a string whose text is not read yet
}

func newPolicyCursor(src string) *policyCursor {
	return &policyCursor{src: src, toks: lexCompactPolicy(src), i: -1}
}

// next reads the next token (Jackson's nextToken).
func (c *policyCursor) next() policyTokenKind {
	if c.afterName {
		c.afterName = false
		c.i++
		c.open = c.toks[c.i].kind == ptString
		return c.toks[c.i].kind
	}
	c.open = false
	c.i++
	if c.i >= len(c.toks) {
		c.i = len(c.toks)
		c.pos = utf16Len(c.src)
		return ptEOF
	}
	t := &c.toks[c.i]
	switch t.kind {
	case ptField:
		v := &c.toks[c.i+1]
		c.pos = v.end
		if v.kind == ptString || v.kind == ptStartObject || v.kind == ptStartArray {
			c.pos = v.start + 1
		}
		c.afterName = true
	case ptString:
		c.pos = t.start + 1
		c.open = true
	default:
		c.pos = t.end
	}
	return t.kind
}

// token returns the current token.
func (c *policyCursor) token() *policyToken {
	if c.i >= len(c.toks) {
		return &policyToken{}
	}
	return &c.toks[c.i]
}

// text returns the current token's text (Jackson's getText), reading the rest of a string value.
func (c *policyCursor) text() string {
	t := c.token()
	if c.open {
		c.pos, c.open = t.end, false
	}
	return t.text
}

// barf is the compiler's grammar error: msg, located where the parser is.
func (c *policyCursor) barf(msg string) error {
	return policyErrorf("FilterPolicy: %s\n at [Source: (String)%s; line: 1, column: %d]", msg, sourceSnippet(c.src), c.pos+1)
}

// sourceSnippet is a source string as Jackson shows it in a location: quoted, cut after 500 characters.
func sourceSnippet(s string) string {
	const max = 500
	n := utf16Len(s)
	if n <= max {
		return `"` + s + `"`
	}
	units, cut := 0, 0
	for i, r := range s {
		if units+utf16.RuneLen(r) > max {
			cut = i
			break
		}
		units += utf16.RuneLen(r)
	}
	return `"` + s[:cut] + `"[truncated ` + strconv.Itoa(n-units) + " chars]"
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// compilePolicy compiles a compacted policy (doCompile): the root object and whether it nests keys.
func (c *policyCursor) compilePolicy() (*policyObject, bool, error) {
	if c.next() != ptStartObject {
		return nil, false, c.barf("Filter is not an object")
	}
	return c.compileObject()
}

// compileObject compiles the keys of an object whose "{" was read (parseObject); nested reports whether the
// object has nested keys (an object as a key's value), outside $or or inside.
func (c *policyCursor) compileObject() (obj *policyObject, nested bool, err error) {
	obj = &policyObject{}
	for c.next() != ptEndObject {
		f := policyField{key: c.token().text}
		if f.key == "$or" && c.orArrayAhead() {
			c.next() // [
			for c.next() != ptEndArray {
				sub, subNested, err := c.compileObject()
				if err != nil {
					return nil, false, err
				}
				f.or = append(f.or, sub)
				nested = nested || subNested
			}
			obj.fields = append(obj.fields, f)
			continue
		}
		switch c.next() {
		case ptStartObject:
			if f.nested, _, err = c.compileObject(); err != nil {
				return nil, false, err
			}
			nested = true
		case ptStartArray:
			if f.conds, err = c.compileConditions(); err != nil {
				return nil, false, err
			}
		default:
			return nil, false, c.barf(strconv.Quote(f.key) + " must be an object or an array")
		}
		obj.fields = append(obj.fields, f)
	}
	if len(obj.fields) == 0 {
		return nil, false, c.barf("Empty objects are not allowed")
	}
	return obj, nested, nil
}

// The names of the match expressions: an object in $or whose keys include one is not a branch, and the
// "$or" key is then an ordinary key.
var matchTypes = map[string]bool{
	"prefix": true, "suffix": true, "equals-ignore-case": true, "anything-but": true, "numeric": true,
	"exists": true, "cidr": true,
}

// orArrayAhead reports whether the value of the current field, "$or", makes it SNS's OR operator: an array of
// at least two objects, none with a key that names a match expression. Otherwise "$or" is a key like any
// other. It reads nothing.
func (c *policyCursor) orArrayAhead() bool {
	i := c.i + 1
	if c.toks[i].kind != ptStartArray {
		return false
	}
	objects, depth := 0, 0
	for i++; ; i++ {
		t := &c.toks[i]
		switch t.kind {
		case ptStartArray, ptStartObject:
			if depth == 0 {
				if t.kind != ptStartObject {
					return false
				}
				objects++
			}
			depth++
		case ptEndArray, ptEndObject:
			if depth == 0 {
				return objects >= 2
			}
			depth--
		case ptField:
			if depth == 1 && matchTypes[t.text] {
				return false
			}
		default:
			if depth == 0 {
				return false
			}
		}
	}
}

// compileConditions compiles a key's array of conditions, whose "[" was read (writeRules).
func (c *policyCursor) compileConditions() ([]condition, error) {
	var conds []condition
	for {
		var cond condition
		switch c.next() {
		case ptEndArray:
			if len(conds) == 0 {
				return nil, c.barf("Empty arrays are not allowed")
			}
			return conds, nil
		case ptStartObject:
			var err error
			if cond, err = c.compileMatchExpression(); err != nil {
				return nil, err
			}
		case ptString:
			cond = condition{kind: condString, str: c.text()}
		case ptNumber:
			cond = condition{kind: condNumber, num: c.token().num}
		case ptTrue, ptFalse:
			cond = condition{kind: condBool, flag: c.token().kind == ptTrue}
		case ptNull:
			cond = condition{kind: condNull}
		default:
			return nil, c.barf("Match value must be String, number, true, false, or null")
		}
		conds = append(conds, cond)
	}
}

// compileMatchExpression compiles an object of a key's array, whose "{" was read (processMatchExpression):
// one operator and its operand.
func (c *policyCursor) compileMatchExpression() (condition, error) {
	if c.next() != ptField {
		return condition{}, c.barf("Match expression name not found")
	}
	op := c.token().text
	onlyOne := func(cond condition, err error) (condition, error) {
		if err == nil && c.next() != ptEndObject {
			return condition{}, c.barf("Only one key allowed in match expression")
		}
		return cond, err
	}
	switch op {
	case "prefix", "suffix", "equals-ignore-case":
		if c.next() != ptString {
			return condition{}, c.barf(op + " match pattern must be a string")
		}
		kind := condEqualsIgnoreCase
		switch op {
		case "prefix":
			kind = condPrefix
		case "suffix":
			kind = condSuffix
		}
		return onlyOne(condition{kind: kind, str: c.text()}, nil)
	case "exists":
		k := c.next()
		if k != ptTrue && k != ptFalse {
			return condition{}, c.barf("exists match pattern must be either true or false.")
		}
		return onlyOne(condition{kind: condExists, flag: k == ptTrue}, nil)
	case "cidr":
		if c.next() != ptString {
			return condition{}, c.barf("prefix match pattern must be a string")
		}
		p, err := parseCIDR(c.text())
		return onlyOne(condition{kind: condCIDR, prefix: p}, err)
	case "numeric":
		if c.next() != ptStartArray {
			return condition{}, c.barf("Value of numeric must be an array.")
		}
		cond, err := c.compileNumeric()
		if err == nil && c.next() != ptEndObject {
			return condition{}, c.barf("Too many elements in numeric expression")
		}
		return cond, err
	case "anything-but":
		cond, err := c.compileAnythingBut()
		if err == nil && c.next() != ptEndObject {
			return condition{}, c.barf("Too many elements in numeric expression")
		}
		return cond, err
	}
	return condition{}, c.barf("Unrecognized match type " + op)
}

// outOfRange is the compiler's error for a number its comparable numbers cannot hold, with the bounds as Java
// writes them.
var outOfRange = "Value must be between " + rule.JavaDouble(-maxComparable) + " and " + rule.JavaDouble(maxComparable) + ", inclusive"

// numericBound returns the range check of the compiler (Range's): nil when f is a comparable number.
func (c *policyCursor) numericBound(fs ...float64) error {
	for _, f := range fs {
		if _, ok := numberKey(f); !ok {
			return c.barf(outOfRange)
		}
	}
	return nil
}

// compileNumeric compiles the array of a numeric condition, whose "[" was read
// (processNumericMatchExpression): ["=", n], ["<" or "<=", n], or [">" or ">=", n], optionally followed by
// "<" or "<=" and a larger number.
func (c *policyCursor) compileNumeric() (condition, error) {
	if c.next() != ptString {
		return condition{}, c.barf("Invalid member in numeric match: " + c.token().text)
	}
	op := c.text()
	k := c.next()
	cond := condition{kind: condNumeric, lo: math.Inf(-1), hi: math.Inf(1)}
	name := op
	if op == "=" {
		name = "equals"
	}
	switch op {
	case "=", "<", "<=", ">", ">=":
	default:
		return condition{}, c.barf("Unrecognized numeric range operator: " + op)
	}
	if k != ptNumber {
		return condition{}, c.barf("Value of " + name + " must be numeric")
	}
	x := c.token().num
	switch op {
	case "=":
		cond.lo, cond.hi = x, x
	case "<", "<=":
		cond.hi, cond.hiOpen = x, op == "<"
	default:
		cond.lo, cond.loOpen = x, op == ">"
	}
	k = c.next()
	if k == ptEndArray {
		return cond.keyed(), c.numericBound(x)
	}
	if op != ">" && op != ">=" {
		return condition{}, c.barf("Too many elements in numeric expression")
	}
	if k != ptString {
		return condition{}, c.barf("Bad value in numeric range: " + c.token().text)
	}
	op2 := c.text()
	if op2 != "<" && op2 != "<=" {
		return condition{}, c.barf("Bad numeric range operator: " + op2)
	}
	if c.next() != ptNumber {
		return condition{}, c.barf("Value of " + op2 + " must be numeric")
	}
	cond.hi, cond.hiOpen = c.token().num, op2 == "<"
	if c.next() != ptEndArray {
		return condition{}, c.barf("Too many terms in numeric range expression")
	}
	if !(cond.lo < cond.hi) {
		return condition{}, c.barf("Bottom must be less than top")
	}
	return cond.keyed(), c.numericBound(cond.lo, cond.hi)
}

// compileAnythingBut compiles the operand of anything-but, whose name was read: a string, a number, an array
// of strings or of numbers, or {"prefix": s}. SNS takes no other operator inside anything-but (it refuses
// suffix, unlike EventBridge).
func (c *policyCursor) compileAnythingBut() (condition, error) {
	cond := condition{kind: condAnythingBut}
	switch c.next() {
	case ptStartObject:
		if c.next() != ptField {
			return condition{}, c.barf("Anything-But expression name not found")
		}
		if inner := c.token().text; inner != "prefix" {
			return condition{}, c.barf("Unsupported anything-but pattern: " + inner)
		}
		if c.next() != ptString {
			return condition{}, c.barf("prefix match pattern must be a string")
		}
		cond.not = []condition{{kind: condPrefix, str: c.text()}}
		if c.next() != ptEndObject {
			return condition{}, c.barf("Only one key allowed in match expression")
		}
	case ptString:
		cond.not = []condition{{kind: condString, str: c.text()}}
	case ptNumber:
		x := c.token().num
		if _, ok := numberKey(x); !ok {
			return condition{}, policyErrorf("FilterPolicy: %s", outOfRange)
		}
		cond.not = []condition{{kind: condNumber, num: x}}
	case ptStartArray:
		strs, nums := 0, 0
		for k := c.next(); k != ptEndArray; k = c.next() {
			switch k {
			case ptString:
				strs++
				cond.not = append(cond.not, condition{kind: condString, str: c.text()})
			case ptNumber:
				nums++
				x := c.token().num
				if err := c.numericBound(x); err != nil {
					return condition{}, err
				}
				cond.not = append(cond.not, condition{kind: condNumber, num: x})
			default:
				return condition{}, c.barf("Inside anything but list, start|null|boolean is not supported.")
			}
		}
		if (strs == 0) == (nums == 0) {
			return condition{}, c.barf("Inside anything but list, either all values are number or string, mixed type is not supported")
		}
	default:
		return condition{}, c.barf("Value of anything-but must be an array or single string/number value.")
	}
	return cond, nil
}

// parseCIDR parses the operand of cidr, with SNS's messages, which carry no location.
func parseCIDR(s string) (netip.Prefix, error) {
	addr, bits, ok := strings.Cut(s, "/")
	if !ok || strings.Contains(bits, "/") {
		return netip.Prefix{}, policyErrorf("FilterPolicy: Malformed CIDR, one '/' required")
	}
	if _, err := strconv.Atoi(bits); err != nil {
		return netip.Prefix{}, policyErrorf("FilterPolicy: Malformed CIDR, mask bits must be an integer")
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, policyErrorf("FilterPolicy: Nonstandard IP address: %s", addr)
	}
	return p.Masked(), nil
}

package topic

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/netip"
	"strconv"
	"strings"

	"github.com/fifoq/fifoq/internal/rule"
)

// FilterPolicyScope says what a subscription's filter policy looks at: the message attributes (SNS's
// default) or the message body, as a JSON object.
type FilterPolicyScope string

const (
	// FilterPolicyScopeMessageAttributes filters on the message attributes: the default, which "" also
	// means.
	FilterPolicyScopeMessageAttributes FilterPolicyScope = "MessageAttributes"
	// FilterPolicyScopeMessageBody filters on the message body, a JSON object; keys may nest.
	FilterPolicyScopeMessageBody FilterPolicyScope = "MessageBody"
)

// The limits of a filter policy.
const (
	maxFilterPolicySize         = 256 << 10 // bytes of JSON
	maxFilterPolicyKeys         = 5         // keys at the top level
	maxFilterPolicyCombinations = 150       // the complexity: see policyCombinations
)

// checkFilterPolicyScope returns ErrInvalidFilterPolicyScope unless s is "", MessageAttributes or
// MessageBody; [ErrorMessage] gives SNS's message, which names s.
func checkFilterPolicyScope(s FilterPolicyScope) error {
	switch s {
	case "", FilterPolicyScopeMessageAttributes, FilterPolicyScopeMessageBody:
		return nil
	}
	return rule.InvalidParameter(ErrInvalidFilterPolicyScope, "FilterPolicyScope: Invalid value ["+string(s)+
		"]. Please use either MessageBody or MessageAttributes", "%q, want MessageAttributes or MessageBody", string(s))
}

// A FilterPolicy is a subscription filter policy, parsed and checked: it says which messages a subscription
// receives. It is immutable and safe for concurrent use. Make one with [ParseFilterPolicy]; a
// [Subscription] parses its own from [SubscriptionAttributes.FilterPolicy].
type FilterPolicy struct {
	src      string
	scope    FilterPolicyScope
	branches [][]policyKey // the policy matches when every key of one branch matches ($or expanded)
}

// policyKey is one key of a branch: the attribute name, or the dotted path into the body, and the
// conditions of which one must hold.
type policyKey struct {
	name  string
	conds []condition
}

// ParseFilterPolicy parses and checks a filter policy for the given scope, as SNS does when a subscription's
// FilterPolicy is set: the JSON must be an object of at most 5 keys, each naming an array of conditions or,
// with the MessageBody scope, an object of nested keys; a "$or" key takes an array of two or more such
// objects. Conditions are SNS's: exact strings, numbers, true, false and null, and objects with one of
// prefix, suffix, equals-ignore-case, anything-but, numeric, exists and cidr. The policy's combinations
// (the product of its arrays' lengths, each times its depth, summed over the branches of "$or") must not
// pass 150, and the policy is at most 256 KiB; a policy whose JSON nests deeper than 256 levels is too complex
// too. Anything else returns ErrInvalidFilterPolicy, whose
// [ErrorMessage] is SNS's ("Invalid parameter: FilterPolicy: ..."), or ErrInvalidFilterPolicyScope.
func ParseFilterPolicy(policy string, scope FilterPolicyScope) (*FilterPolicy, error) {
	p, err := parseFilterPolicy(policy, scope)
	if err != nil {
		return nil, rejectPolicy(err, false)
	}
	return p, nil
}

// rejectPolicy makes err, from parseFilterPolicy, the rejection of a Subscribe call (subscribe) or of a
// change of a subscription's attributes.
func rejectPolicy(err error, subscribe bool) error {
	var pe *policyError
	if !errors.As(err, &pe) {
		return err
	}
	return policyRejection(ErrInvalidFilterPolicy, pe.reason, subscribe)
}

// String returns the policy as it was given.
func (p *FilterPolicy) String() string { return p.src }

// Scope returns the policy's scope: MessageAttributes or MessageBody.
func (p *FilterPolicy) Scope() FilterPolicyScope { return p.scope }

// parseFilterPolicy is ParseFilterPolicy, returning a *policyError for a policy SNS refuses.
func parseFilterPolicy(src string, scope FilterPolicyScope) (*FilterPolicy, error) {
	if err := checkFilterPolicyScope(scope); err != nil {
		return nil, err
	}
	if scope == "" {
		scope = FilterPolicyScopeMessageAttributes
	}
	if len(src) > maxFilterPolicySize {
		return nil, policyErrorf("FilterPolicy: Filter policy can not be larger than %d bytes", maxFilterPolicySize)
	}
	root, err := parseJSONTree(src)
	if errors.Is(err, errJSONTooDeep) {
		return nil, policyErrorf("FilterPolicy: Filter policy is too complex")
	}
	if err != nil {
		return nil, policyErrorf("FilterPolicy: failed to parse JSON.")
	}
	if root.kind != jsonObject {
		return nil, policyErrorf("FilterPolicy: Filter is not an object")
	}
	obj, nested, err := compileObject(&root)
	if err != nil {
		return nil, err
	}
	if nested && scope == FilterPolicyScopeMessageAttributes {
		return nil, policyErrorf("Filter policy scope MessageAttributes does not support nested filter policy")
	}
	if len(obj.fields) > maxFilterPolicyKeys {
		return nil, policyErrorf("FilterPolicy: Filter policy can not have more than %d keys", maxFilterPolicyKeys)
	}
	if policyCombinations(obj, 1, 1) > maxFilterPolicyCombinations {
		return nil, policyErrorf("FilterPolicy: Filter policy is too complex")
	}
	return &FilterPolicy{src: src, scope: scope, branches: expandBranches(obj, "", [][]policyKey{nil})}, nil
}

// A policyObject is a JSON object of a policy, compiled: its keys in order.
type policyObject struct {
	fields []policyField
}

// A policyField is one key of a policyObject: conditions, an object of nested keys, or the objects of $or.
type policyField struct {
	key    string
	conds  []condition
	nested *policyObject
	or     []*policyObject
}

// compileObject compiles a policy object, checking it as SNS's parser does, in document order; nested
// reports whether the object has nested keys (an object as a key's value), outside $or or inside.
func compileObject(n *jsonNode) (obj *policyObject, nested bool, err error) {
	if len(n.members) == 0 {
		return nil, false, policyErrorf("FilterPolicy: Empty objects are not allowed")
	}
	obj = &policyObject{}
	for i := range n.members {
		m := &n.members[i]
		f := policyField{key: m.key}
		switch {
		case m.val.kind == jsonObject:
			sub, _, err := compileObject(&m.val)
			if err != nil {
				return nil, false, err
			}
			f.nested, nested = sub, true
		case m.val.kind == jsonArray && m.key == "$or" && isOrArray(&m.val):
			for j := range m.val.items {
				sub, subNested, err := compileObject(&m.val.items[j])
				if err != nil {
					return nil, false, err
				}
				f.or = append(f.or, sub)
				nested = nested || subNested
			}
		case m.val.kind == jsonArray:
			if f.conds, err = compileConditions(&m.val); err != nil {
				return nil, false, err
			}
		default:
			return nil, false, policyErrorf("FilterPolicy: %q must be an object or an array", m.key)
		}
		obj.fields = append(obj.fields, f)
	}
	return obj, nested, nil
}

// The names of the match expressions: an object in $or whose keys include one is not a branch, and the
// "$or" key is then an ordinary key.
var matchTypes = map[string]bool{
	"prefix": true, "suffix": true, "equals-ignore-case": true, "anything-but": true, "numeric": true,
	"exists": true, "cidr": true,
}

// isOrArray reports whether the array of a "$or" key makes it SNS's OR operator: at least two objects, none
// with a key that names a match expression. Otherwise "$or" is a key like any other.
func isOrArray(n *jsonNode) bool {
	if len(n.items) < 2 {
		return false
	}
	for i := range n.items {
		it := &n.items[i]
		if it.kind != jsonObject {
			return false
		}
		for _, m := range it.members {
			if matchTypes[m.key] {
				return false
			}
		}
	}
	return true
}

// policyCombinations returns the complexity of obj, SNS's measure: the product, over its keys, of the
// number of values in each array times its depth (1 at the top level), where a $or key counts the sum of its
// branches. A running product comes in as comb and goes out multiplied; it saturates well above the limit.
func policyCombinations(obj *policyObject, depth, comb int) int {
	const ceiling = 1 << 40
	for _, f := range obj.fields {
		switch {
		case f.nested != nil:
			comb = policyCombinations(f.nested, depth+1, comb)
		case f.or != nil:
			sum := 0
			for _, b := range f.or {
				sum = min(sum+policyCombinations(b, depth, comb), ceiling)
			}
			comb = sum
		default:
			comb = min(comb*len(f.conds)*depth, ceiling)
		}
	}
	return comb
}

// expandBranches returns the branches of obj, the keys under prefix (a dotted path, "" at the top level)
// added to each of the branches given: a $or key multiplies them, one copy per alternative.
func expandBranches(obj *policyObject, prefix string, branches [][]policyKey) [][]policyKey {
	for _, f := range obj.fields {
		name := f.key
		if prefix != "" {
			name = prefix + "." + f.key
		}
		switch {
		case f.nested != nil:
			branches = expandBranches(f.nested, name, branches)
		case f.or != nil:
			var out [][]policyKey
			for _, alt := range f.or {
				copies := make([][]policyKey, len(branches))
				for i, b := range branches {
					copies[i] = append([]policyKey(nil), b...)
				}
				out = append(out, expandBranches(alt, prefix, copies)...)
			}
			branches = out
		default:
			for i := range branches {
				branches[i] = append(branches[i], policyKey{name: name, conds: f.conds})
			}
		}
	}
	return branches
}

// condKind is the kind of a condition.
type condKind uint8

const (
	condString           condKind = iota + 1 // an exact string
	condNumber                               // an exact number: numerically equal
	condBool                                 // true or false
	condNull                                 // null
	condPrefix                               // {"prefix": s}
	condSuffix                               // {"suffix": s}
	condEqualsIgnoreCase                     // {"equals-ignore-case": s}
	condNumeric                              // {"numeric": [op, n, op, n]}
	condExists                               // {"exists": b}
	condCIDR                                 // {"cidr": "a.b.c.d/n"}
	condAnythingBut                          // {"anything-but": ...}: the negation of its inner condition
)

// A condition is one element of a key's array.
type condition struct {
	kind condKind
	str  string  // condString, condPrefix, condSuffix, condEqualsIgnoreCase
	num  float64 // condNumber
	flag bool    // condBool, condExists
	// condNumeric: the range; a missing bound is infinite.
	lo, hi         float64
	loOpen, hiOpen bool
	prefix         netip.Prefix // condCIDR
	// condAnythingBut: matches a value none of these match (exact strings, exact numbers, or one prefix).
	not []condition
}

// compileConditions compiles a key's array of conditions.
func compileConditions(n *jsonNode) ([]condition, error) {
	if len(n.items) == 0 {
		return nil, policyErrorf("FilterPolicy: Empty arrays are not allowed")
	}
	conds := make([]condition, 0, len(n.items))
	for i := range n.items {
		it := &n.items[i]
		var c condition
		switch it.kind {
		case jsonString:
			c = condition{kind: condString, str: it.text}
		case jsonNumber:
			c = condition{kind: condNumber, num: it.num}
		case jsonBool:
			c = condition{kind: condBool, flag: it.text == "true"}
		case jsonNull:
			c = condition{kind: condNull}
		case jsonObject:
			var err error
			if c, err = compileMatchExpression(it); err != nil {
				return nil, err
			}
		default:
			return nil, policyErrorf("FilterPolicy: Match value must be String, number, true, false, or null")
		}
		conds = append(conds, c)
	}
	return conds, nil
}

// compileMatchExpression compiles an object of a key's array: one operator and its operand.
func compileMatchExpression(n *jsonNode) (condition, error) {
	if len(n.members) == 0 {
		return condition{}, policyErrorf("FilterPolicy: Match expression name not found")
	}
	op, v := n.members[0].key, &n.members[0].val
	onlyOne := func(c condition) (condition, error) {
		if len(n.members) > 1 {
			return condition{}, policyErrorf("FilterPolicy: Only one key allowed in match expression")
		}
		return c, nil
	}
	switch op {
	case "prefix", "suffix", "equals-ignore-case":
		if v.kind != jsonString {
			return condition{}, policyErrorf("FilterPolicy: %s match pattern must be a string", op)
		}
		kind := condEqualsIgnoreCase
		switch op {
		case "prefix":
			kind = condPrefix
		case "suffix":
			kind = condSuffix
		}
		return onlyOne(condition{kind: kind, str: v.text})
	case "exists":
		if v.kind != jsonBool {
			return condition{}, policyErrorf("FilterPolicy: exists match pattern must be either true or false.")
		}
		return onlyOne(condition{kind: condExists, flag: v.text == "true"})
	case "cidr":
		if v.kind != jsonString {
			return condition{}, policyErrorf("FilterPolicy: prefix match pattern must be a string")
		}
		p, err := parseCIDR(v.text)
		if err != nil {
			return condition{}, err
		}
		return onlyOne(condition{kind: condCIDR, prefix: p})
	case "numeric":
		if v.kind != jsonArray {
			return condition{}, policyErrorf("FilterPolicy: Value of numeric must be an array.")
		}
		c, err := compileNumeric(v.items)
		if err != nil {
			return condition{}, err
		}
		if len(n.members) > 1 {
			return condition{}, policyErrorf("FilterPolicy: Too many elements in numeric expression")
		}
		return c, nil
	case "anything-but":
		c, err := compileAnythingBut(v)
		if err != nil {
			return condition{}, err
		}
		if len(n.members) > 1 {
			return condition{}, policyErrorf("FilterPolicy: Too many elements in numeric expression")
		}
		return c, nil
	}
	return condition{}, policyErrorf("FilterPolicy: Unrecognized match type %s", op)
}

// compileNumeric compiles the array of a numeric condition: ["=", n], ["<" or "<=", n], or [">" or ">=",
// n], optionally followed by "<" or "<=" and a larger number.
func compileNumeric(items []jsonNode) (condition, error) {
	text := func(i int) string {
		if i < len(items) {
			return items[i].token()
		}
		return "]"
	}
	isNum := func(i int) bool { return i < len(items) && items[i].kind == jsonNumber }
	if len(items) == 0 || items[0].kind != jsonString {
		return condition{}, policyErrorf("FilterPolicy: Invalid member in numeric match: %s", text(0))
	}
	op := items[0].text
	c := condition{kind: condNumeric, lo: math.Inf(-1), hi: math.Inf(1)}
	switch op {
	case "=", "<", "<=", ">", ">=":
	default:
		return condition{}, policyErrorf("FilterPolicy: Unrecognized numeric range operator: %s", op)
	}
	if !isNum(1) {
		name := op
		if op == "=" {
			name = "equals"
		}
		return condition{}, policyErrorf("FilterPolicy: Value of %s must be numeric", name)
	}
	x := items[1].num
	switch op {
	case "=":
		c.lo, c.hi = x, x
	case "<", "<=":
		c.hi, c.hiOpen = x, op == "<"
	default:
		c.lo, c.loOpen = x, op == ">"
	}
	if len(items) == 2 {
		return c, nil
	}
	if op != ">" && op != ">=" {
		return condition{}, policyErrorf("FilterPolicy: Too many elements in numeric expression")
	}
	if items[2].kind != jsonString {
		return condition{}, policyErrorf("FilterPolicy: Bad value in numeric range: %s", text(2))
	}
	op2 := items[2].text
	if op2 != "<" && op2 != "<=" {
		return condition{}, policyErrorf("FilterPolicy: Bad numeric range operator: %s", op2)
	}
	if !isNum(3) {
		return condition{}, policyErrorf("FilterPolicy: Value of %s must be numeric", op2)
	}
	if len(items) > 4 {
		return condition{}, policyErrorf("FilterPolicy: Too many terms in numeric range expression")
	}
	c.hi, c.hiOpen = items[3].num, op2 == "<"
	if !(c.lo < c.hi) {
		return condition{}, policyErrorf("FilterPolicy: Bottom must be less than top")
	}
	return c, nil
}

// compileAnythingBut compiles the operand of anything-but: a string, a number, an array of strings or of
// numbers, or {"prefix": s}. SNS takes no other operator inside anything-but (it refuses suffix, unlike
// EventBridge).
func compileAnythingBut(v *jsonNode) (condition, error) {
	c := condition{kind: condAnythingBut}
	switch v.kind {
	case jsonString:
		c.not = []condition{{kind: condString, str: v.text}}
	case jsonNumber:
		c.not = []condition{{kind: condNumber, num: v.num}}
	case jsonArray:
		strs, nums := 0, 0
		for i := range v.items {
			switch it := &v.items[i]; it.kind {
			case jsonString:
				strs++
				c.not = append(c.not, condition{kind: condString, str: it.text})
			case jsonNumber:
				nums++
				c.not = append(c.not, condition{kind: condNumber, num: it.num})
			default:
				return condition{}, policyErrorf("FilterPolicy: Inside anything but list, start|null|boolean is not supported.")
			}
		}
		if (strs == 0) == (nums == 0) {
			return condition{}, policyErrorf("FilterPolicy: Inside anything but list, either all values are number or string, mixed type is not supported")
		}
	case jsonObject:
		if len(v.members) == 0 {
			return condition{}, policyErrorf("FilterPolicy: Anything-But expression name not found")
		}
		inner, val := v.members[0].key, &v.members[0].val
		if inner != "prefix" {
			return condition{}, policyErrorf("FilterPolicy: Unsupported anything-but pattern: %s", inner)
		}
		if val.kind != jsonString {
			return condition{}, policyErrorf("FilterPolicy: prefix match pattern must be a string")
		}
		if len(v.members) > 1 {
			return condition{}, policyErrorf("FilterPolicy: Only one key allowed in match expression")
		}
		c.not = []condition{{kind: condPrefix, str: val.text}}
	default:
		return condition{}, policyErrorf("FilterPolicy: Value of anything-but must be an array or single string/number value.")
	}
	return c, nil
}

// parseCIDR parses the operand of cidr, with SNS's messages.
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

// jsonKind is the kind of a jsonNode.
type jsonKind uint8

const (
	jsonNull jsonKind = iota + 1
	jsonBool
	jsonNumber
	jsonString
	jsonArray
	jsonObject
)

// A jsonNode is a JSON value that keeps the order of an object's keys (and repeated keys), as SNS's
// streaming parser sees them, so a policy's first fault is the one SNS reports.
type jsonNode struct {
	kind    jsonKind
	text    string  // a string's value, a number as written, "true" or "false"
	num     float64 // a number's value (±Inf beyond float64's range)
	items   []jsonNode
	members []jsonMember
}

type jsonMember struct {
	key string
	val jsonNode
}

// token returns the text SNS's messages show for n: a scalar as written, "[" or "{" for containers.
func (n *jsonNode) token() string {
	switch n.kind {
	case jsonNull:
		return "null"
	case jsonArray:
		return "["
	case jsonObject:
		return "{"
	}
	return n.text
}

// maxJSONDepth bounds the nesting of the JSON a filter reads: a policy, a message body (MessageBody scope) and
// a String.Array attribute. Nothing else bounds it: readJSONValue recurses once per level, and encoding/json's
// Decoder.Token, which it reads through, lets 256 KiB of "[" nest 256K levels deep. No policy SNS accepts is
// this deep: its complexity (see policyCombinations) grows with the depth of its keys, which passes 150 first.
const maxJSONDepth = 256

// errJSONTooDeep is parseJSONTree's error for a value nested deeper than maxJSONDepth.
var errJSONTooDeep = errors.New("JSON nested too deep")

// parseJSONTree parses one JSON value, and nothing after it; a value nested deeper than maxJSONDepth returns
// errJSONTooDeep.
func parseJSONTree(s string) (jsonNode, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	n, err := readJSONNode(dec, 0)
	if err != nil {
		return jsonNode{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return jsonNode{}, errors.New("data after the JSON value")
	}
	return n, nil
}

// readJSONNode reads a value inside depth containers.
func readJSONNode(dec *json.Decoder, depth int) (jsonNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return jsonNode{}, err
	}
	return readJSONValue(dec, tok, depth)
}

func readJSONValue(dec *json.Decoder, tok json.Token, depth int) (jsonNode, error) {
	switch t := tok.(type) {
	case nil:
		return jsonNode{kind: jsonNull}, nil
	case bool:
		return jsonNode{kind: jsonBool, text: strconv.FormatBool(t)}, nil
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return jsonNode{}, err
		}
		return jsonNode{kind: jsonNumber, text: string(t), num: f}, nil
	case string:
		return jsonNode{kind: jsonString, text: t}, nil
	case json.Delim:
		if depth++; depth > maxJSONDepth {
			return jsonNode{}, errJSONTooDeep
		}
		switch t {
		case '[':
			n := jsonNode{kind: jsonArray}
			for dec.More() {
				it, err := readJSONNode(dec, depth)
				if err != nil {
					return jsonNode{}, err
				}
				n.items = append(n.items, it)
			}
			_, err := dec.Token() // ]
			return n, err
		case '{':
			n := jsonNode{kind: jsonObject}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return jsonNode{}, err
				}
				key, _ := kt.(string)
				v, err := readJSONNode(dec, depth)
				if err != nil {
					return jsonNode{}, err
				}
				n.members = append(n.members, jsonMember{key: key, val: v})
			}
			_, err := dec.Token() // }
			return n, err
		}
	}
	return jsonNode{}, errors.New("unexpected JSON token")
}

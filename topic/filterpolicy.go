package topic

import (
	"encoding/json"
	"errors"
	"io"
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
// too. A numeric bound or an anything-but number is from -10^9 to 10^9. Anything else returns
// ErrInvalidFilterPolicy, whose [fifoq.ErrorMessage] is SNS's ("Invalid parameter: FilterPolicy: ..."),
// ending, as SNS's does, with the location its rule compiler or JSON parser reached (a line break, then
// `at [Source: (String)"<the policy without white space>"; line: 1, column: <N>]`), or
// ErrInvalidFilterPolicyScope. The JSON is read as SNS reads it: its first value and nothing after it; a key
// given twice holds its last value.
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
	root, present, err := rule.ParseJSON(src, maxJSONDepth)
	if errors.Is(err, rule.ErrJSONTooDeep) {
		return nil, policyErrorf("FilterPolicy: Filter policy is too complex")
	}
	if err != nil {
		return nil, policyErrorf("FilterPolicy: failed to parse JSON. %s", err)
	}
	compact := ""
	if present {
		compact = root.Compact()
	}
	obj, nested, err := newPolicyCursor(compact).compilePolicy()
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
	// condNumeric: the range; a missing bound is infinite. The keys are the bounds as comparable numbers
	// (numberKey), math.MinInt64 and math.MaxInt64 for missing ones.
	lo, hi         float64
	loOpen, hiOpen bool
	loKey, hiKey   int64
	prefix         netip.Prefix // condCIDR
	// condAnythingBut: matches a value none of these match (exact strings, exact numbers, or one prefix).
	not []condition
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

package topic

import (
	"math"
	"net/netip"
	"strconv"
	"strings"

	"github.com/fifoq/fifoq"
)

// Match reports whether the subscription whose policy p is receives m. With the MessageAttributes scope a
// key names a message attribute: a String attribute is one string, a Number one number, a String.Array each
// of its elements (strings, numbers, true, false and null), and a Binary attribute is ignored, as if absent.
// With the MessageBody scope a key is a path into the body, which must be a JSON object: nested keys and
// keys with dots name the same path ({"a": {"b": ...}} and {"a.b": ...} alike), and a value inside an array,
// at any depth, counts as a value of its path. A key matches when one of its conditions holds for one of
// its values; {"exists": false} holds when the key has no value. The policy matches when every key of it
// matches, or of one alternative of each "$or". Numbers compare as SNS compares them, to 6 decimal places
// (100.123456789 equals 100.1234567), and a number outside -10^9..10^9 is in no numeric range. A String.Array
// attribute that is not a JSON array of scalars, or a body that is not a JSON object, matches nothing; nor
// does a body nested deeper than 256 levels, which counts as a body that is not JSON.
func (p *FilterPolicy) Match(m Message) bool {
	return p.evaluate(&m, newMessageView(&m)) == filterMatch
}

// filterOutcome is what a filter policy made of a message; the outcomes other than filterMatch are the
// reasons SNS's metrics tell apart.
type filterOutcome uint8

const (
	filterMatch             filterOutcome = iota + 1
	filterNoMatch                         // NumberOfNotificationsFilteredOut
	filterNoAttributes                    // ...-NoMessageAttributes: attribute scope, message without attributes
	filterInvalidAttributes               // ...-InvalidAttributes: a String.Array the policy names is not an array
	filterInvalidBody                     // ...-InvalidMessageBody: body scope, body not a JSON object
)

// A value is one value a policy key is matched against: a string, a number, a boolean or null.
type value struct {
	kind jsonKind
	str  string // jsonString; "true" or "false" for jsonBool
	num  float64
}

// attrValues are the values of one message attribute, for the MessageAttributes scope.
type attrValues struct {
	vals    []value
	invalid bool // a String.Array that is not a JSON array of scalars
}

// A messageView is a published message as filter policies look at it, worked out at most once per
// message however many subscriptions look: its attributes' values and its body's leaves.
type messageView struct {
	m        *Message
	attrs    map[string]attrValues
	body     map[string][]value
	bodyDone bool
	bodyOK   bool
}

func newMessageView(m *Message) *messageView { return &messageView{m: m} }

// attribute returns the values of attribute name; present is false for one the message lacks, or a Binary
// one.
func (v *messageView) attribute(name string) (a attrValues, present bool) {
	if v.attrs == nil {
		v.attrs = make(map[string]attrValues, len(v.m.Attributes))
		for n, at := range v.m.Attributes {
			if vals, ok := attributeValues(at); ok || vals.invalid {
				v.attrs[n] = vals
			}
		}
	}
	a, present = v.attrs[name]
	return a, present
}

// attributeValues returns the values of an attribute; ok is false for a Binary one, which filters ignore.
func attributeValues(a fifoq.Attribute) (attrValues, bool) {
	base, custom, _ := strings.Cut(a.DataType, ".")
	switch {
	case base == "String" && custom == "Array":
		n, err := parseJSONTree(a.StringValue)
		if err != nil || n.kind != jsonArray {
			return attrValues{invalid: true}, false
		}
		out := attrValues{vals: make([]value, 0, len(n.items))}
		for i := range n.items {
			it := &n.items[i]
			if it.kind == jsonArray || it.kind == jsonObject {
				return attrValues{invalid: true}, false
			}
			out.vals = append(out.vals, scalarValue(it))
		}
		return out, true
	case base == "String":
		return attrValues{vals: []value{{kind: jsonString, str: a.StringValue}}}, true
	case base == "Number":
		f, err := strconv.ParseFloat(strings.TrimSpace(a.StringValue), 64)
		if err != nil {
			return attrValues{invalid: true}, false
		}
		return attrValues{vals: []value{{kind: jsonNumber, num: f}}}, true
	}
	return attrValues{}, false
}

func scalarValue(n *jsonNode) value {
	return value{kind: n.kind, str: n.text, num: n.num}
}

// bodyValues returns the leaves of the body at path; ok is false when the body is not a JSON object.
func (v *messageView) bodyValues(path string) (vals []value, ok bool) {
	if !v.bodyDone {
		v.bodyDone = true
		n, err := parseJSONTree(v.m.Message)
		if err == nil && n.kind == jsonObject {
			v.bodyOK = true
			v.body = make(map[string][]value)
			flattenBody(&n, "", v.body)
		}
	}
	return v.body[path], v.bodyOK
}

// flattenBody adds the leaves under n to out, by their dotted paths; the elements of an array are values of
// the array's path.
func flattenBody(n *jsonNode, path string, out map[string][]value) {
	switch n.kind {
	case jsonObject:
		for i := range n.members {
			m := &n.members[i]
			p := m.key
			if path != "" {
				p = path + "." + m.key
			}
			flattenBody(&m.val, p, out)
		}
	case jsonArray:
		for i := range n.items {
			flattenBody(&n.items[i], path, out)
		}
	default:
		out[path] = append(out[path], scalarValue(n))
	}
}

// evaluate applies p to the message v looks at.
func (p *FilterPolicy) evaluate(m *Message, v *messageView) filterOutcome {
	if p.scope == FilterPolicyScopeMessageBody {
		if _, ok := v.bodyValues(""); !ok {
			return filterInvalidBody
		}
	}
	invalid := false
	for _, branch := range p.branches {
		if p.matchBranch(branch, v, &invalid) {
			return filterMatch
		}
	}
	switch {
	case invalid:
		return filterInvalidAttributes
	case p.scope != FilterPolicyScopeMessageBody && len(m.Attributes) == 0:
		return filterNoAttributes
	}
	return filterNoMatch
}

// matchBranch reports whether every key of branch matches; it sets *invalid when a key names an attribute
// whose value filters cannot read.
func (p *FilterPolicy) matchBranch(branch []policyKey, v *messageView, invalid *bool) bool {
	for i := range branch {
		k := &branch[i]
		var vals []value
		var present bool
		if p.scope == FilterPolicyScopeMessageBody {
			vals, _ = v.bodyValues(k.name)
			present = len(vals) > 0
		} else {
			a, ok := v.attribute(k.name)
			if a.invalid {
				*invalid = true
				return false
			}
			vals, present = a.vals, ok
		}
		if !k.matches(vals, present) {
			return false
		}
	}
	return true
}

// matches reports whether one of k's conditions holds for one of vals; present says whether the key has
// values at all, for exists.
func (k *policyKey) matches(vals []value, present bool) bool {
	for i := range k.conds {
		c := &k.conds[i]
		if c.kind == condExists {
			if c.flag == present {
				return true
			}
			continue
		}
		for _, x := range vals {
			if c.holds(x) {
				return true
			}
		}
	}
	return false
}

// holds reports whether condition c holds for value x.
func (c *condition) holds(x value) bool {
	switch c.kind {
	case condString:
		return x.kind == jsonString && x.str == c.str
	case condNumber:
		return x.kind == jsonNumber && sameNumber(x.num, c.num)
	case condBool:
		return x.kind == jsonBool && (x.str == "true") == c.flag
	case condNull:
		return x.kind == jsonNull
	case condPrefix:
		return x.kind == jsonString && strings.HasPrefix(x.str, c.str)
	case condSuffix:
		return x.kind == jsonString && strings.HasSuffix(x.str, c.str)
	case condEqualsIgnoreCase:
		return x.kind == jsonString && strings.EqualFold(x.str, c.str)
	case condNumeric:
		if x.kind != jsonNumber {
			return false
		}
		k, ok := numberKey(x.num)
		above := k > c.loKey || !c.loOpen && k == c.loKey
		below := k < c.hiKey || !c.hiOpen && k == c.hiKey
		return ok && above && below
	case condCIDR:
		if x.kind != jsonString {
			return false
		}
		a, err := netip.ParseAddr(x.str)
		return err == nil && c.prefix.Contains(a.Unmap())
	case condAnythingBut:
		for i := range c.not {
			if c.not[i].holds(x) {
				return false
			}
		}
		return true
	}
	return false
}

// Numbers compare as SNS's rule engine compares them (event-ruler's ComparableNumber, in the version SNS
// runs): a number from -10^9 to 10^9 becomes the integer part of 10^6 × (10^9 + n), computed in doubles, so
// numbers that agree to 6 decimal places are equal (100.123456789 equals 100.1234567) and ranges compare
// those integers. A policy's numeric bounds and anything-but numbers must be in that range; exact numbers
// outside it, in a policy or a message, compare as doubles, and a message's number outside it is in no
// numeric range.
const maxComparable = 1e9

// numberKey returns f as a comparable number; ok is false outside -maxComparable..maxComparable.
func numberKey(f float64) (k int64, ok bool) {
	if !(f >= -maxComparable && f <= maxComparable) {
		return 0, false
	}
	sum := float64(maxComparable + f)
	return int64(float64(1e6 * sum)), true
}

// sameNumber reports whether a and b are the same number to SNS: equal comparable numbers, or equal doubles
// when either is out of range.
func sameNumber(a, b float64) bool {
	ka, oka := numberKey(a)
	kb, okb := numberKey(b)
	if oka && okb {
		return ka == kb
	}
	return a == b
}

// keyed returns c, a numeric condition, with the comparable numbers of its bounds.
func (c condition) keyed() condition {
	c.loKey, c.hiKey = math.MinInt64, math.MaxInt64
	if k, ok := numberKey(c.lo); ok {
		c.loKey = k
	}
	if k, ok := numberKey(c.hi); ok {
		c.hiKey = k
	}
	return c
}

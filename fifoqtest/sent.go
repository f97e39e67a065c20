package fifoqtest

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/fifoq/fifoq"
)

// A Match selects stored messages by what their producer sent. Every field that is set must match; the
// zero Match matches every message.
type Match struct {
	// Body, if set, is the whole body.
	Body string
	// BodyContains, if set, is a part of the body.
	BodyContains string
	// GroupID, if set, is the message group.
	GroupID string
	// Attributes, if set, maps message attribute names to their values: the StringValue of a String or
	// Number attribute, the bytes of a Binary one as a string. Each must be there with that value.
	Attributes map[string]string
}

// Matches reports whether m selects message msg.
func (m Match) Matches(msg fifoq.Message) bool {
	switch {
	case m.Body != "" && msg.Body != m.Body,
		m.BodyContains != "" && !strings.Contains(msg.Body, m.BodyContains),
		m.GroupID != "" && msg.GroupID != m.GroupID:
		return false
	}
	for name, want := range m.Attributes {
		a, ok := msg.Attributes[name]
		if !ok || attributeValue(a) != want {
			return false
		}
	}
	return true
}

// String describes m as a failure shows it, such as `body "pay", group "order-1"`; "any message" for the
// zero Match.
func (m Match) String() string {
	var parts []string
	if m.Body != "" {
		parts = append(parts, fmt.Sprintf("body %q", m.Body))
	}
	if m.BodyContains != "" {
		parts = append(parts, fmt.Sprintf("body containing %q", m.BodyContains))
	}
	if m.GroupID != "" {
		parts = append(parts, fmt.Sprintf("group %q", m.GroupID))
	}
	for _, name := range sortedKeys(m.Attributes, map[string]bool(nil)) {
		parts = append(parts, fmt.Sprintf("attribute %s=%q", name, m.Attributes[name]))
	}
	if len(parts) == 0 {
		return "any message"
	}
	return strings.Join(parts, ", ")
}

func attributeValue(a fifoq.Attribute) string {
	if strings.HasPrefix(a.DataType, "Binary") {
		return string(a.BinaryValue)
	}
	return a.StringValue
}

// RequireSent checks what the code under test sent to q: q holds exactly len(want) messages (visible, in
// flight or delayed), and the i-th of them in send order matches want[i]. A failure names each position
// that differs, then lists what q holds:
//
//	queue q.fifo: message 2 is "pay" (group "order-1"), want body "ship"
//	queue q.fifo: 3 messages, want 2
//	queue q.fifo holds 3 messages:
//		...
func RequireSent(tb testing.TB, q Queue, want ...Match) {
	tb.Helper()
	var got []fifoq.Snapshot
	for s := range q.Messages() {
		got = append(got, s)
	}
	var problems []string
	for i, s := range got {
		if i < len(want) && !want[i].Matches(s.Message) {
			problems = append(problems, fmt.Sprintf("queue %s: message %d is %s, want %s", q.Name(), i+1, sentAs(s), want[i]))
		}
	}
	if len(got) != len(want) {
		problems = append(problems, fmt.Sprintf("queue %s: %s, want %d", q.Name(), plural(len(got), "message"), len(want)))
		for _, m := range want[min(len(got), len(want)):] {
			problems = append(problems, fmt.Sprintf("queue %s: no message for %s", q.Name(), m))
		}
	}
	if len(problems) > 0 {
		problems = append(problems, contents(q))
	}
	fail(tb, problems...)
}

// RequireInQueue checks that q holds a message (visible, in flight or delayed) that m matches, and returns
// the first of them in send order. A failure says what was looked for and lists what q holds:
//
//	queue q.fifo holds no message with body containing "refund"; queue q.fifo holds 1 message:
//		"pay" (group "order-1", visible, received 0 times)
func RequireInQueue(tb testing.TB, q Queue, m Match) fifoq.Snapshot {
	tb.Helper()
	for s := range q.Messages() {
		if m.Matches(s.Message) {
			return s
		}
	}
	fail(tb, fmt.Sprintf("queue %s holds no message with %s; %s", q.Name(), m, contents(q)))
	return fifoq.Snapshot{}
}

// RequireNotInQueue checks that q holds no message that m matches. A failure lists the ones it holds:
//
//	queue q.fifo holds 1 message with body "poison", want none:
//		"poison" (group "g", in flight, received 1 time, visible in 30s)
func RequireNotInQueue(tb testing.TB, q Queue, m Match) {
	tb.Helper()
	now := q.Clock().Now()
	var lines []string
	for s := range q.Messages() {
		if m.Matches(s.Message) {
			lines = append(lines, describe(s, now, true))
		}
	}
	if len(lines) > 0 {
		fail(tb, fmt.Sprintf("queue %s holds %s with %s, want none:\n\t%s",
			q.Name(), plural(len(lines), "message"), m, strings.Join(lines, "\n\t")))
	}
}

// RequireEmptyAtEnd checks, when the test ends (in a Cleanup), that q holds no message, as [RequireEmpty]
// does. Its report names the line that called RequireEmptyAtEnd, since by then the test function has
// returned:
//
//	orders_test.go:42: at the end of the test, queue q.fifo holds 1 message, want none:
//		"b" (group "g1", in flight, received 1 time, visible in 30s)
func RequireEmptyAtEnd(tb testing.TB, q Queue) {
	tb.Helper()
	at := callerLine(1)
	tb.Cleanup(func() {
		tb.Helper()
		if n, lines := listing(q); n > 0 {
			tb.Errorf("%s: at the end of the test, queue %s holds %s, want none:%s", at, q.Name(), plural(n, "message"), lines)
		}
	})
}

// callerLine returns "file.go:line" of the caller skip frames above callerLine's caller.
func callerLine(skip int) string {
	_, file, line, ok := runtime.Caller(skip + 1)
	if !ok {
		return "unknown line"
	}
	if i := strings.LastIndexAny(file, `/\`); i >= 0 {
		file = file[i+1:]
	}
	return fmt.Sprintf("%s:%d", file, line)
}

// sentAs names a stored message by its body, with its group.
func sentAs(s fifoq.Snapshot) string {
	if s.GroupID != "" {
		return fmt.Sprintf("%q (group %q)", s.Body, s.GroupID)
	}
	return fmt.Sprintf("%q", s.Body)
}

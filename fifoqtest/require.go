package fifoqtest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/fifoq/fifoq"
)

// RequireDeliveredInOrder checks the order in which r's handler first got the messages of each group:
// want maps every group that had a delivery to the bodies of its messages, in the order of their first
// delivery (a redelivery does not count again). Messages without a group, on a standard queue, are group
// "". A group missing from want, or in want and not delivered, is a failure. A failure names each group
// that differs:
//
//	group "g1": delivered ["a" "c" "b"], want ["a" "b" "c"]
func RequireDeliveredInOrder(tb testing.TB, r *Result, want map[string][]string) {
	tb.Helper()
	if r == nil {
		fail(tb, "no Result (Drain failed)")
		return
	}
	got := make(map[string][]string)
	seen := make(map[string]bool)
	for _, b := range r.Batches {
		for _, d := range b.Deliveries {
			if !seen[d.MessageID] {
				seen[d.MessageID] = true
				got[d.GroupID] = append(got[d.GroupID], d.Body)
			}
		}
	}
	var problems []string
	for _, g := range sortedKeys(got, want) {
		if !slices.Equal(got[g], want[g]) {
			problems = append(problems, fmt.Sprintf("group %q: delivered %q, want %q", g, got[g], want[g]))
		}
	}
	fail(tb, problems...)
}

// RequireInDLQ checks that the dead-letter queue dlq holds exactly the messages of want, which maps each
// body to its receive count there (maxReceiveCount, for a message moved by a redrive policy). The bodies
// of want must be distinct. A failure names each body that differs, after the dead-letter queue's name:
//
//	"poison": received 3 times, want 5
//	"ok": in the queue (received 1 time), want not
//	"late": not in the queue, want received 5 times
func RequireInDLQ(tb testing.TB, dlq Queue, want map[string]int) {
	tb.Helper()
	got := make(map[string][]int)
	for s := range dlq.Messages() {
		got[s.Body] = append(got[s.Body], s.ReceiveCount)
	}
	var problems []string
	for _, body := range sortedKeys(got, want) {
		counts, n := got[body], want[body]
		_, wanted := want[body]
		switch {
		case !wanted:
			problems = append(problems, fmt.Sprintf("%q: in the queue (%s), want not", body, receivedTimes(counts)))
		case len(counts) == 0:
			problems = append(problems, fmt.Sprintf("%q: not in the queue, want received %s", body, plural(n, "time")))
		case len(counts) > 1:
			problems = append(problems, fmt.Sprintf("%q: %d messages (%s), want 1 received %s",
				body, len(counts), receivedTimes(counts), plural(n, "time")))
		case counts[0] != n:
			problems = append(problems, fmt.Sprintf("%q: received %s, want %d", body, plural(counts[0], "time"), n))
		}
	}
	if len(problems) > 0 {
		fail(tb, fmt.Sprintf("dead-letter queue %s:\n\t%s", dlq.Name(), strings.Join(problems, "\n\t")))
	}
}

// RequireNoneInFlight checks that q has no message in flight: every message received was deleted or came
// back. A failure lists the messages in flight:
//
//	queue q.fifo has 1 message in flight, want none:
//		"b" (group "g1", received 2 times, visible in 30s)
func RequireNoneInFlight(tb testing.TB, q Queue) {
	tb.Helper()
	now := q.Clock().Now()
	var lines []string
	for s := range q.Messages() {
		if s.State == fifoq.StateInFlight {
			lines = append(lines, describe(s, now, false))
		}
	}
	if len(lines) > 0 {
		fail(tb, fmt.Sprintf("queue %s has %s in flight, want none:\n\t%s",
			q.Name(), plural(len(lines), "message"), strings.Join(lines, "\n\t")))
	}
}

// RequireEmpty checks that q holds no message: none visible, in flight or delayed. A failure lists what it
// holds:
//
//	queue q.fifo holds 2 messages, want none:
//		"b" (group "g1", in flight, received 1 time, visible in 30s)
//		"c" (group "g1", visible, received 0 times)
func RequireEmpty(tb testing.TB, q Queue) {
	tb.Helper()
	if n, lines := listing(q); n > 0 {
		fail(tb, fmt.Sprintf("queue %s holds %s, want none:%s", q.Name(), plural(n, "message"), lines))
	}
}

// fail reports problems, one a line, and stops the test; no problems is a pass.
func fail(tb testing.TB, problems ...string) {
	tb.Helper()
	if len(problems) == 0 {
		return
	}
	tb.Errorf("%s", strings.Join(problems, "\n"))
	tb.FailNow()
}

// sortedKeys returns the keys of a and b, sorted.
func sortedKeys[V1, V2 any](a map[string]V1, b map[string]V2) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// receivedTimes reads "received 5 times", or "received 5, 3 times" for several messages.
func receivedTimes(counts []int) string {
	if len(counts) == 1 {
		return "received " + plural(counts[0], "time")
	}
	parts := make([]string, len(counts))
	for i, n := range counts {
		parts[i] = fmt.Sprint(n)
	}
	return "received " + strings.Join(parts, ", ") + " times"
}

package main

import (
	"strings"
	"testing"
	"testing/synctest"
)

// TestRun runs the program inside a synctest bubble, where time is virtual and moves only when every
// goroutine waits: however slow or busy the machine, no time limit of the program can run out while it
// works, and a program stuck for good fails at once (synctest reports the deadlock) instead of hanging.
func TestRun(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	synctest.Test(t, func(t *testing.T) {
		if err := run(&out); err != nil {
			t.Fatalf("run: %v; output so far:\n%s", err, out.String())
		}
	})
	got := out.String()

	// Each line, in this order, in the output. The numbers do not depend on timing: the injected failures
	// are fixed by the seed, per sub-task.
	want := []string{
		`ventilator: job "count-words" split into 12 sub-tasks, 16 messages sent (4 sub-tasks sent twice)`,
		"audit: 16 envelopes from topic arn:aws:sns:us-east-1:000000000000:sub-tasks, one per message published",
		"processors: 21 deliveries of 16 messages: 5 crashes before the delete brought sub-tasks back (4 at random, 1 right after the consolidator)",
		"processors: 12 sub-tasks counted, 9 repeated deliveries ignored by the conditional status",
		"batch record: total 12, finished 12, status consolidated (an unconditional counter would read 21)",
		"consolidator: ran 1 time(s): 94 words in 12 lines",
		"every sub-task was counted once and the consolidator ran exactly once",
	}
	rest := got
	for _, line := range want {
		i := strings.Index(rest, line)
		if i < 0 {
			t.Fatalf("output lacks %q after the lines before it; output:\n%s", line, got)
		}
		rest = rest[i+len(line):]
	}
}

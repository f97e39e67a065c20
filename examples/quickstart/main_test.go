package main

import (
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	if err := run(&out); err != nil {
		t.Fatalf("run: %v; output so far:\n%s", err, out.String())
	}
	got := out.String()

	// Each line, in this order, in the output.
	want := []string{
		"[t=0s] sent \"a1: create order\" group customer-a, sequence number 1",
		"[t=0s] stats: 6 visible, 0 in flight, 0 delayed",
		"[t=0s] receive 3: a1 (receive 1), a2 (receive 1), a3 (receive 1)",
		"[t=0s] receive 10: b1 (receive 1), b2 (receive 1)",
		"[t=0s] stats: 1 visible, 5 in flight, 0 delayed",
		"[t=0s] receive 10: nothing",
		"[t=29s] receive 10: nothing",
		"[t=30s] receive 10: a3 (receive 2), a4 (receive 1)",
		"[t=30s] stats: 0 visible, 0 in flight, 0 delayed",
		"[t=30s] sent c1: stored",
		"[t=30s] sent c1: duplicate, not stored",
		"[t=30s] stats: 1 visible, 0 in flight, 0 delayed",
		"[t=5m30s] sent c1: stored",
		"[t=5m30s] stats: 2 visible, 0 in flight, 0 delayed",
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

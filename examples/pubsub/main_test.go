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

	// Each line, in this order, in the output. The numbers do not depend on timing: the subscriptions and
	// the injected failures are fixed by the seed, per post, job and (user, post).
	want := []string{
		"subscribers: 1000 users; entertainment 336 movies 232 music 700 sports 399",
		"API: created 6 posts, each published to the topic posts.fifo",
		`topic: music-feed.fifo got posts [p1 p3 p6] through the filter policy {"category": ["music"]}; 9 notifications delivered, 3 filtered out`,
		"scheduler: 6 posts -> 14 jobs of at most 300 users; it crashed 1 time(s) after sending, so 15 job messages were sent",
		"dispatcher: 15 job messages -> 4089 email messages; it crashed 7 time(s) half-way through a job",
		"sender: 4469 deliveries; 221 refused by the mail server and retried, 159 crashes before the delete",
		"sender: 1181 repeats (duplicate messages, redeliveries after a crash) skipped by the idempotency store",
		"outbox: post p1 (music): 700 emails for 700 subscribers",
		"outbox: post p2 (sports): 399 emails for 399 subscribers",
		"outbox: post p3 (music): 700 emails for 700 subscribers",
		"outbox: post p4 (movies): 232 emails for 232 subscribers",
		"outbox: post p5 (entertainment): 336 emails for 336 subscribers",
		"outbox: post p6 (music): 700 emails for 700 subscribers",
		"outbox: 3067 emails: every subscriber got exactly one email per post in their category",
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

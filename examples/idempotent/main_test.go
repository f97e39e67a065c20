package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRun checks the example's claim: every order gets exactly one gift card, although order-1001 is stored
// twice (a producer retry after the deduplication window), order-1002 is handled twice (a failure, then an
// immediate retry) and order-1003 is delivered twice (its first worker crashed holding the lock).
func TestRun(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	require.NoError(t, run(&out), "run; output so far:\n%s", out.String())
	got := out.String()

	for _, order := range []string{"order-1001", "order-1002", "order-1003"} {
		require.Equal(t, 1, strings.Count(got, "granted a $50 gift card for "+order+"\n"),
			"gift cards granted for %s; output:\n%s", order, got)
	}

	// Each line, in this order, in the output.
	want := []string{
		"[t=0s] producer: sent order-1001: stored as a new message",
		"[t=0s]   gift-card service: granted a $50 gift card for order-1001",
		"[t=1m0s] producer: sent order-1001: duplicate, dropped by the queue",
		"[t=7m0s] producer: sent order-1001: stored as a new message",
		"[t=7m0s] worker-1: received order-1001 (receive 1)",
		"[t=7m0s] worker-1: the wrapped handler skipped order-1001: already processed",
		"[t=7m0s] worker-1: deleted order-1001 (receive 1)",

		"[t=7m0s]   gift-card service: timeout granting the card of order-1002",
		"[t=7m0s] worker-1: received order-1002 (receive 2)",
		"[t=7m0s]   gift-card service: granted a $50 gift card for order-1002",

		"[t=7m0s] worker-2: locked order-1003 for 20s, then crashed",
		"[t=7m20s] worker-1: nothing to receive",
		"[t=7m30s] worker-1: received order-1003 (receive 2)",
		"[t=7m30s]   gift-card service: granted a $50 gift card for order-1003",
		"[t=7m30s] worker-1: deleted order-1003 (receive 2)",

		"[t=7m30s] every order got exactly one gift card: 5 sends, 4 messages stored, 6 deliveries",
	}
	rest := got
	for _, line := range want {
		i := strings.Index(rest, line)
		require.GreaterOrEqual(t, i, 0, "output lacks %q after the lines before it; output:\n%s", line, got)
		rest = rest[i+len(line):]
	}
}

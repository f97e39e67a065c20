//go:build race

package browsertest_test

import "testing"

// The race detector's twin of the million-message test (many_norace_test.go): 100,000 messages, the same
// steps.
func TestConsoleMillionMessages(t *testing.T) { consoleManyMessages(t, 100_000) }

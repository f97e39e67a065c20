//go:build !race

package browsertest_test

import "testing"

// A queue of a million messages, in the browser: paging and search (many_test.go). Under the race detector,
// which makes the sends ten times slower, its twin in many_race_test.go takes 100,000.
func TestConsoleMillionMessages(t *testing.T) { consoleManyMessages(t, 1_000_000) }

//go:build race

package fifoq_test

// bnStressMessages is smaller under the race detector so `go test -race` stays fast; stress_norace_test.go
// runs the full 100,000.
const bnStressMessages = 20_000

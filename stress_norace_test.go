//go:build !race

package fifoq_test

// bnStressMessages is the full stress size; stress_race_test.go is the smaller twin run under -race.
const bnStressMessages = 100_000

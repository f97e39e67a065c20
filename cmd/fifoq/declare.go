package main

import (
	"errors"
	"fmt"

	"github.com/fifoq/fifoq"
)

// A usageError is an error of "fifoq serve" that is the command line's fault although found only once the
// server runs, such as a queue of --config whose attributes CreateQueue refuses: run prints it and returns
// it wrapping errUsage, so that the process exits 2, as for a bad flag.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// declareError is the error of creating the declared queue q: a usage error that names where q was
// declared (the config file, its line and column; or the flag or variable), unless the store failed, which
// is no fault of the command line.
func declareError(q queueSpec, err error) error {
	if q.origin == "" {
		return err
	}
	return originError(q.origin, err)
}

// originError is the error of declaring what origin names (a queue, a topic, a subscription: "config
// FILE:LINE:COL: ..."): a usage error that starts with origin, unless the store failed.
func originError(origin string, err error) error {
	if errors.Is(err, fifoq.ErrStoreFailed) {
		return err
	}
	return &usageError{fmt.Errorf("%s: %w", origin, err)}
}

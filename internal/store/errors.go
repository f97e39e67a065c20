package store

import "errors"

// ErrClosed is what an engine returns once it is closed.
var ErrClosed = errors.New("store: closed")

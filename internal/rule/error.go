package rule

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// An Error is a rule of AWS's: its error code, the Go text of its sentinel, and the message AWS sends for
// every call it rejects, when that message does not depend on the call. fifoq.Error is this type.
type Error struct {
	// Code is the AWS error code of the rule, such as "InvalidParameterValue" or
	// "AWS.SimpleQueueService.PurgeQueueInProgress".
	Code string
	msg  string
	aws  string
}

// Error returns the rule's message.
func (e *Error) Error() string { return e.msg }

// New returns the sentinel of a rule whose AWS message depends on the call. msg is its whole Go text, its
// package's prefix included ("fifoq: invalid delay").
func New(code, msg string) *Error { return &Error{Code: code, msg: msg} }

// NewSaying returns the sentinel of a rule whose AWS message is aws, whatever the call.
func NewSaying(code, msg, aws string) *Error { return &Error{Code: code, msg: msg, aws: aws} }

// A Rejection is a sentinel's rule applied to one call: Error is the sentinel's text and the detail of the
// call, Go's way; its AWS message is the one AWS sends for the case, with the values it puts in it.
type Rejection struct {
	sentinel *Error
	detail   string
	aws      string
}

// Reject wraps a sentinel with the detail of one call, in Go's words; Says adds AWS's.
func Reject(sentinel *Error, format string, args ...any) *Rejection {
	return &Rejection{sentinel: sentinel, detail: fmt.Sprintf(format, args...)}
}

// Says sets the message AWS sends for the rejection, and returns it.
func (r *Rejection) Says(format string, args ...any) *Rejection {
	r.aws = fmt.Sprintf(format, args...)
	return r
}

// Error returns the sentinel's text and the call's detail.
func (r *Rejection) Error() string { return r.sentinel.msg + ": " + r.detail }

// Unwrap returns the sentinel.
func (r *Rejection) Unwrap() error { return r.sentinel }

// Sentinel returns the rule rejected by.
func (r *Rejection) Sentinel() *Error { return r.sentinel }

func (r *Rejection) message() string {
	if r.aws != "" {
		return r.aws
	}
	return r.sentinel.aws
}

// coded gives err the code of a rule whose code depends on the call: a FIFO batch entry without a group id
// fails the whole SendBatch with InvalidParameterValue, where a single Send says MissingParameter. Its AWS
// message is err's.
type coded struct {
	code string
	err  error
}

func (e *coded) Error() string { return e.err.Error() }
func (e *coded) Unwrap() error { return e.err }

// WithCode returns err with the AWS error code code in place of its rule's.
func WithCode(code string, err error) error { return &coded{code: code, err: err} }

// Code returns the AWS error code carried by err, or "" when err is nil or no rejection by a rule.
func Code(err error) string {
	for err != nil {
		switch e := err.(type) {
		case *coded:
			return e.code
		case *Rejection:
			return e.sentinel.Code
		case *Error:
			return e.Code
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if c := Code(e); c != "" {
					return c
				}
			}
			return ""
		default:
			return ""
		}
	}
	return ""
}

// Message returns the message AWS sends with the error code of err (see Code) for the case err rejects, with
// the values AWS puts in it. Where fifoq does not know AWS's words for a case, it is err's text made a
// sentence, without its package's prefix ("fifoq: "). It is "" when err is nil or no rejection by a rule. Of
// an error that joins several (a batch's), it is the message of the first.
func Message(err error) string {
	var r *Rejection
	var e *Error
	switch {
	case errors.As(err, &r):
		if m := r.message(); m != "" {
			return m
		}
		return sentence(r.Error())
	case errors.As(err, &e):
		if e.aws != "" {
			return e.aws
		}
		return sentence(e.msg)
	}
	return ""
}

// sentence makes a Go error text a sentence: its package's prefix dropped, a capital, a final period.
func sentence(s string) string {
	if p, rest, ok := strings.Cut(s, ": "); ok && p != "" && strings.IndexFunc(p, func(r rune) bool { return r < 'a' || r > 'z' }) < 0 {
		s = rest
	}
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

// InvalidValue is the message SQS sends for most values out of their range: "Value v for parameter param is
// invalid. Reason: reason".
func InvalidValue(v any, param, reason string) string {
	return fmt.Sprintf("Value %v for parameter %s is invalid. Reason: %s", v, param, reason)
}

// InvalidParameter rejects a call by the rule of sentinel, with detail in Go's words and SNS's message
// "Invalid parameter: " + reason.
func InvalidParameter(sentinel *Error, reason, format string, args ...any) *Rejection {
	return Reject(sentinel, format, args...).Says("Invalid parameter: %s", reason)
}

// Seconds formats d as SQS names a duration in a message: in seconds, a whole number for the whole seconds
// the wire API can give.
func Seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

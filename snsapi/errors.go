package snsapi

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/internal/rule"
)

// An apiError is a refused request as SNS reports it: its query error code, message and HTTP status.
type apiError struct {
	code    string
	message string
	status  int
	cause   error // of an internal error: what went wrong, for the log; never sent
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

func newError(code, format string, args ...any) *apiError {
	return &apiError{code: code, message: fmt.Sprintf(format, args...), status: statusOf(code)}
}

// statusOf returns the HTTP status SNS answers an error code with, as its model gives it (httpStatusCode):
// 400 unless listed.
func statusOf(code string) int {
	switch code {
	case "NotFound", "ResourceNotFound":
		return 404
	case "AuthorizationError", "InvalidSecurity", "FilterPolicyLimitExceeded", "SubscriptionLimitExceeded",
		"TopicLimitExceeded", "MissingAuthenticationToken", "InvalidClientTokenId", "SignatureDoesNotMatch", "IncompleteSignature":
		return 403
	case "Throttled":
		return 429
	case "InternalError", "InternalFailure":
		return 500
	case "ServiceUnavailable":
		return 503
	}
	return 400
}

var errInternal = &apiError{code: "InternalError", message: "We encountered an internal error. Please try again.", status: 500}

// invalidParameter is SNS's InvalidParameter for a parameter, with an optional reason:
// "Invalid parameter: Name" or "Invalid parameter: Name Reason: reason".
func invalidParameter(name, reason string) *apiError {
	if reason == "" {
		return newError("InvalidParameter", "Invalid parameter: %s", name)
	}
	return newError("InvalidParameter", "Invalid parameter: %s Reason: %s", name, reason)
}

// validationError is the answer to a request without a member the model requires.
func validationError(member string) *apiError {
	return newError("ValidationError", "1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null", member)
}

// toAPIError translates an error into SNS's: an apiError as it is; a fifoq error by its code (fifoq.ErrorCode)
// and SNS's message (fifoq.ErrorMessage); a failed store ServiceUnavailable; anything else InternalError.
func toAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &apiError{code: "InternalError", message: "The request was canceled before it was done.", status: 500}
	case errors.Is(err, fifoq.ErrStoreFailed), errors.Is(err, fifoq.ErrStoreClosed):
		return &apiError{code: "ServiceUnavailable", status: 503, message: "The server's store failed or is closed: " + err.Error()}
	}
	if code := fifoq.ErrorCode(err); code != "" {
		return &apiError{code: code, status: statusOf(code), message: fifoq.ErrorMessage(err)}
	}
	return &apiError{code: errInternal.code, message: errInternal.message, status: 500, cause: err}
}

func itoa(n int) string { return strconv.Itoa(n) }

// maxJSONDepth is the deepest nesting of the JSON of an attribute SNS reads: Jackson's default limit.
const maxJSONDepth = 1000

// jsonErrorText is what SNS says of the JSON of an attribute it cannot read (err from rule.ParseJSON):
// Jackson's message and location, or Jackson's message for JSON nested deeper than its limit.
func jsonErrorText(err error) string {
	if errors.Is(err, rule.ErrJSONTooDeep) {
		return "Document nesting depth (" + itoa(maxJSONDepth+1) + ") exceeds the maximum allowed (" + itoa(maxJSONDepth) +
			", from `StreamReadConstraints.getMaxNestingDepth()`)"
	}
	return err.Error()
}

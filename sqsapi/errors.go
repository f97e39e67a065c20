package sqsapi

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/internal/sigv4"
)

// An apiError is a rejected request as SQS reports it: a query error code (the one in the XML error, in the
// x-amzn-query-error header and in batch Failed entries), a message and an HTTP status. The JSON __type is
// derived from the code by shapeOf.
type apiError struct {
	code    string
	message string
	status  int
	cause   error // of an internal error: what went wrong, for the log; never sent
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

// Unwrap returns the cause of an internal error or of a failed store's refusal, so that errors.Is(err,
// fifoq.ErrStoreFailed) holds for an error that a Go method (CreateQueue, DeclareQueue) returns.
func (e *apiError) Unwrap() error { return e.cause }

func newError(code, format string, args ...any) *apiError {
	return &apiError{code: code, message: fmt.Sprintf(format, args...), status: statusOf(code)}
}

// The query error codes this package sends, but for those of package sigv4 (sigv4.CodeMissingToken, ...).
// Codes whose JSON error shape has another name are translated by shapeOf; the others are their own shape
// name.
const (
	codeInvalidParameterValue = "InvalidParameterValue"
	codeMissingParameter      = "MissingParameter"
	codeInvalidAttributeName  = "InvalidAttributeName"
	codeInvalidAttributeValue = "InvalidAttributeValue"
	codeNonExistentQueue      = "AWS.SimpleQueueService.NonExistentQueue"
	codeQueueAlreadyExists    = "QueueAlreadyExists"
	codeIDsNotDistinct        = "AWS.SimpleQueueService.BatchEntryIdsNotDistinct"
	codeInvalidBatchEntryID   = "AWS.SimpleQueueService.InvalidBatchEntryId"
	codeResourceNotFound      = "ResourceNotFoundException"
	codeInvalidAction         = "InvalidAction"
	codeMissingAction         = "MissingAction"
	codeUnknownOperation      = "UnknownOperationException"
	codeSerialization         = "SerializationException"
	codeTooLarge              = "RequestEntityTooLarge"
	codeInternal              = "InternalFailure"
	codeUnavailable           = "ServiceUnavailable"
)

// shapeOf returns the name of the error shape that SQS's JSON protocol names in __type (after
// "com.amazonaws.sqs#") for a query error code: the SQS model's shape whose awsQueryError code it is, and for
// the two codes the model leaves to the common errors, the names AWS sends (InvalidParameterValueException,
// MissingRequiredParameterException). Botocore reports the shape name as QueryErrorCode and the query code
// (from x-amzn-query-error) as the error's Code; aws-sdk-go-v2 picks its modeled error type by the shape name.
func shapeOf(code string) string {
	switch code {
	case codeInvalidParameterValue:
		return "InvalidParameterValueException"
	case codeMissingParameter:
		return "MissingRequiredParameterException"
	case "AccessDenied":
		return "AccessDeniedException"
	case codeNonExistentQueue:
		return "QueueDoesNotExist"
	case codeQueueAlreadyExists:
		return "QueueNameExists"
	case "KMS.AccessDeniedException":
		return "KmsAccessDenied"
	case "KMS.DisabledException":
		return "KmsDisabled"
	case "KMS.InvalidKeyUsageException":
		return "KmsInvalidKeyUsage"
	case "KMS.InvalidStateException":
		return "KmsInvalidState"
	case "KMS.NotFoundException":
		return "KmsNotFound"
	case "KMS.OptInRequired":
		return "KmsOptInRequired"
	case "KMS.ThrottlingException":
		return "KmsThrottled"
	}
	return strings.TrimPrefix(code, "AWS.SimpleQueueService.")
}

// statusOf returns the HTTP status of an error code this package sends, as the SQS model gives it (httpError
// traits): 400 unless listed.
func statusOf(code string) int {
	switch code {
	case "AWS.SimpleQueueService.PurgeQueueInProgress", "InvalidSecurity", "OverLimit", sigv4.CodeMissingToken,
		sigv4.CodeInvalidClientTokenID, sigv4.CodeSignatureDoesNotMatch:
		return 403
	case "ReceiptHandleIsInvalid", codeResourceNotFound, codeUnknownOperation, "InvalidAddress":
		return 404
	case codeTooLarge:
		return 413
	case codeInternal:
		return 500
	case codeUnavailable:
		return 503
	}
	return 400
}

// Errors of the request as a whole.
var (
	errInternal = &apiError{codeInternal, "We encountered an internal error. Please try again.", 500, nil}
	// errCanceled is the answer to a request whose context ended before the action was done, and so did
	// nothing (fifoq checks the context before it changes anything). The client is gone or the server is
	// closing, so it is hardly ever read; the in-process transport returns the context's error instead.
	errCanceled = &apiError{codeInternal, "The request was canceled before it was done.", 500, nil}
)

// tooLarge is the answer to a request whose body is over the server's limit (WithMaxRequestBytes). SQS
// answers such a request with HTTP 413 and the text "HTTP content length exceeded 1662976 bytes." (the
// limit when messages were up to 256 KiB), a plain-text body that the SDKs failed to parse: "Unable to
// unmarshall error response (HTTP content length exceeded 1662976 bytes.) (Service: AmazonSQS; Status Code:
// 413; Error Code: 413 Request Entity Too Large" in aws-sdk-java (spring-cloud-aws issue 111), an
// XMLParserError with statusCode 413 in aws-sdk-js (issue 479). This server keeps the status and SQS's text
// and sends them as an error the SDKs parse, with the code RequestEntityTooLarge (the name of the status,
// as SQS's other protocol errors are named).
func tooLarge(limit int64) *apiError {
	return newError(codeTooLarge, "HTTP content length exceeded %d bytes.", limit)
}

func missing(param string) *apiError {
	return newError(codeMissingParameter, "The request must contain the parameter %s.", param)
}

func invalidValue(value any, param, reason string) *apiError {
	return newError(codeInvalidParameterValue, "Value %v for parameter %s is invalid. Reason: %s", value, param, reason)
}

func queueDoesNotExist(query bool) *apiError {
	if query {
		return newError(codeNonExistentQueue, "The specified queue does not exist for this wsdl version.")
	}
	return newError(codeNonExistentQueue, "The specified queue does not exist.")
}

// coreError translates an error of the fifoq package into an SQS error: the error code fifoq gives it
// (fifoq.ErrorCode), the HTTP status of the code, and the message SQS sends for the case, which fifoq gives
// too (fifoq.ErrorMessage). The errors that are no SQS rule's are this package's: the end of the request's
// context, a queue deleted by a DeleteQueue that came first, a failed store, and any other error, an
// internal one.
func coreError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	if isContextErr(err) {
		return errCanceled
	}
	if errors.Is(err, fifoq.ErrQueueDeleted) {
		return queueDoesNotExist(false) // by a DeleteQueue that came first
	}
	if ae := storeError(err); ae != nil {
		return ae
	}
	code := fifoq.ErrorCode(err)
	if code == "" {
		// Another failure of the server: the client gets InternalFailure, the log the cause.
		return &apiError{code: codeInternal, message: errInternal.message, status: 500, cause: err}
	}
	return &apiError{code: code, status: statusOf(code), message: fifoq.ErrorMessage(err)}
}

// storeError returns the answer to a request that a failed or closed store refused, or nil for another
// error. It is ServiceUnavailable, HTTP 503, which the SDKs retry, and its message names the cause (such as
// "no space left on device"): a client's log says what is wrong, and a retry after the server was
// restarted on its store succeeds. The cause goes to the server's log as well (call.fail).
func storeError(err error) *apiError {
	switch {
	case errors.Is(err, fifoq.ErrStoreFailed):
		return &apiError{code: codeUnavailable, status: 503, cause: err,
			message: "The server's store failed, and the server refuses every change until it is restarted: " + err.Error()}
	case errors.Is(err, fifoq.ErrStoreClosed):
		return &apiError{code: codeUnavailable, status: 503, cause: err,
			message: "The server is stopping: its store is closed."}
	}
	return nil
}

// isContextErr reports whether err is the end of the request's context (a client gone, a server closing).
func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

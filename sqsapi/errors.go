package sqsapi

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fifoq/fifoq"
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

// The query error codes this package sends. Codes whose JSON error shape has another name are translated
// by shapeOf; the others are their own shape name.
const (
	codeInvalidParameterValue = "InvalidParameterValue"
	codeMissingParameter      = "MissingParameter"
	codeInvalidAttributeName  = "InvalidAttributeName"
	codeInvalidAttributeValue = "InvalidAttributeValue"
	codeNonExistentQueue      = "AWS.SimpleQueueService.NonExistentQueue"
	codeQueueAlreadyExists    = "QueueAlreadyExists"
	codeQueueDeletedRecently  = "AWS.SimpleQueueService.QueueDeletedRecently"
	codeEmptyBatch            = "AWS.SimpleQueueService.EmptyBatchRequest"
	codeTooManyEntries        = "AWS.SimpleQueueService.TooManyEntriesInBatchRequest"
	codeIDsNotDistinct        = "AWS.SimpleQueueService.BatchEntryIdsNotDistinct"
	codeInvalidBatchEntryID   = "AWS.SimpleQueueService.InvalidBatchEntryId"
	codeBatchTooLong          = "AWS.SimpleQueueService.BatchRequestTooLong"
	codeResourceNotFound      = "ResourceNotFoundException"
	codeInvalidAction         = "InvalidAction"
	codeMissingAction         = "MissingAction"
	codeUnknownOperation      = "UnknownOperationException"
	codeSerialization         = "SerializationException"
	codeTooLarge              = "RequestEntityTooLarge"
	codeInternal              = "InternalFailure"
	codeUnavailable           = "ServiceUnavailable"
	codeMissingToken          = "MissingAuthenticationToken"
	codeIncompleteSignature   = "IncompleteSignature"
	codeInvalidClientTokenID  = "InvalidClientTokenId"
	codeSignatureDoesNotMatch = "SignatureDoesNotMatch"
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
	case "AWS.SimpleQueueService.PurgeQueueInProgress", "InvalidSecurity", codeMissingToken, codeInvalidClientTokenID, codeSignatureDoesNotMatch:
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

// errCtx is what a rejected call was about, for the texts SQS puts in its messages.
type errCtx struct {
	queue   *fifoq.Queue
	handle  string         // the receipt handle of a delete or visibility change
	message *fifoq.Message // the message of a send
	timeout int            // the visibility timeout of a change, in seconds
	attempt string         // the receive request attempt id
	batch   bool           // the error is about one entry of a batch
}

// coreError translates an error of the fifoq package into an SQS error, with SQS's message text where the
// spec gives one. An error without an SQS code is an internal error.
func coreError(err error, c errCtx) *apiError {
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
	e := &apiError{code: code, status: statusOf(code), message: detail(err)}
	m := c.message
	if m == nil {
		m = &fifoq.Message{}
	}
	fifo := c.queue != nil && c.queue.FIFO()
	switch {
	case errors.Is(err, fifoq.ErrEmptyBody):
		e.message = "The request must contain the parameter MessageBody."
	case errors.Is(err, fifoq.ErrInvalidMessageContents):
		e.message = "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | " +
			"#xE000 to #xFFFD | #x10000 to #x10FFFF"
	case errors.Is(err, fifoq.ErrMessageTooLarge):
		size := 1 << 20
		if c.queue != nil {
			size = c.queue.Attributes().MaxMessageSize
		}
		verb := "are invalid"
		if c.batch {
			verb = "cannot be validated"
		}
		e.message = fmt.Sprintf("One or more parameters %s. Reason: Message must be shorter than %d bytes.", verb, size)
	case errors.Is(err, fifoq.ErrMissingGroupID):
		e.message = "The request must contain the parameter MessageGroupId."
		if c.batch {
			e.code = codeInvalidParameterValue // spec 2.2: a batch fails whole, with InvalidParameterValue
		}
	case errors.Is(err, fifoq.ErrInvalidGroupID):
		e.message = fmt.Sprintf("Value %s for parameter MessageGroupId is invalid. Reason: MessageGroupId can only "+
			"include alphanumeric and punctuation characters. 1 to 128 in length.", m.GroupID)
	case errors.Is(err, fifoq.ErrMissingDeduplicationID):
		e.message = "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly"
	case errors.Is(err, fifoq.ErrInvalidDeduplicationID):
		if !fifo { // AWS's words, recorded for a batch entry on a standard queue
			e.message = "The request include parameter that is not valid for this queue type"
			break
		}
		e.message = fmt.Sprintf("Value %s for parameter MessageDeduplicationId is invalid. Reason: MessageDeduplicationId "+
			"can only include alphanumeric and punctuation characters. 1 to 128 in length.", m.DeduplicationID)
	case errors.Is(err, fifoq.ErrInvalidDelay):
		e.message = fmt.Sprintf("Value %d for parameter DelaySeconds is invalid. Reason: The request include "+
			"parameter that is not valid for this queue type.", int64(m.Delay.Seconds()))
	case errors.Is(err, fifoq.ErrReceiptHandleInvalid):
		e.message = "The input receipt handle \"" + c.handle + "\" is not a valid receipt handle."
	case errors.Is(err, fifoq.ErrReceiptHandleExpired):
		e.message = fmt.Sprintf("Value %s for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.", c.handle)
	case errors.Is(err, fifoq.ErrMessageNotAvailable):
		e.message = fmt.Sprintf("Value %s for parameter ReceiptHandle is invalid. Reason: Message does not exist "+
			"or is not available for visibility timeout change.", c.handle)
	case errors.Is(err, fifoq.ErrInvalidVisibilityTimeout):
		e.message = fmt.Sprintf("Value %d for parameter VisibilityTimeout is invalid. Reason: Total "+
			"VisibilityTimeout for the message is beyond the limit [%d seconds]", c.timeout, maxVisibilitySeconds)
	case errors.Is(err, fifoq.ErrInvalidAttemptID):
		e.message = fmt.Sprintf("Value %s for parameter ReceiveRequestAttemptId is invalid. Reason: "+
			"ReceiveRequestAttemptId can only include alphanumeric and punctuation characters. 1 to 128 in length.", c.attempt)
	case errors.Is(err, fifoq.ErrAttemptNotRetryable):
		e.message = fmt.Sprintf("Value %s for parameter ReceiveRequestAttemptId is invalid. Reason: The "+
			"receiveRequestAttemptId is not valid anymore since the receive call is not retryable.", c.attempt)
	case errors.Is(err, fifoq.ErrPurgeInProgress):
		name := ""
		if c.queue != nil {
			name = c.queue.Name()
		}
		e.message = fmt.Sprintf("Only one PurgeQueue operation on %s is allowed every 60 seconds.", name)
	case errors.Is(err, fifoq.ErrNotDeadLetterQueue):
		e.message = "Source queue must be configured as a Dead Letter Queue."
	case errors.Is(err, fifoq.ErrMoveTaskRunning):
		e.message = "There is already a task running. Only one active task is allowed for a source queue arn at a given time."
	case errors.Is(err, fifoq.ErrInvalidQueueName):
		e.message = "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length"
	}
	return e
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

// detail is the text of a fifoq error without its package prefix, for the rules whose SQS text the spec
// does not give.
func detail(err error) string {
	s := strings.TrimPrefix(err.Error(), "fifoq: ") // never empty: every fifoq error says what it rejects
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

// isContextErr reports whether err is the end of the request's context (a client gone, a server closing).
func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

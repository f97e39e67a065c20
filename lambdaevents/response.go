package lambdaevents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// maxResponseBytes is the largest answer an invocation may give: 6 MB, the response payload of a synchronous
// Lambda invocation. A larger one is a function error, as on Lambda.
const maxResponseBytes = 6 << 20

// An ErrorKind is why an invocation failed its whole batch.
type ErrorKind uint8

const (
	// ErrorStatus: the function answered with a status outside 2xx.
	ErrorStatus ErrorKind = iota + 1
	// ErrorFunction: the function reported an error: the X-Amz-Function-Error header of Lambda's Invoke API,
	// or a body with errorType or errorMessage, as a runtime posts it and the Runtime Interface Emulator
	// answers it.
	ErrorFunction
	// ErrorResponse: the mapping could not take the answer: with ReportBatchItemFailures, invalid JSON or a
	// malformed batchItemFailures (not a list, an item without an itemIdentifier string, an empty one, or one
	// that is not a messageId of the batch); or an answer larger than 6 MB.
	ErrorResponse
	// ErrorTimeout: no answer within the function timeout, or the Runtime Interface Emulator's answer that
	// the function timed out ("Task timed out after ...").
	ErrorTimeout
	// ErrorUnreachable: no answer at all: the connection was refused, could not be made, or broke before the
	// answer came. The mapping backs off before it polls again (see [Invoker]).
	ErrorUnreachable
)

// numErrorKinds sizes arrays indexed by ErrorKind (index 0 unused).
const numErrorKinds = int(ErrorUnreachable) + 1

// String returns the kind in lower case, such as "timeout": a label for logs and metrics.
func (k ErrorKind) String() string {
	switch k {
	case ErrorStatus:
		return "status"
	case ErrorFunction:
		return "function"
	case ErrorResponse:
		return "response"
	case ErrorTimeout:
		return "timeout"
	case ErrorUnreachable:
		return "unreachable"
	}
	return "ErrorKind(" + strconv.Itoa(int(k)) + ")"
}

// A FunctionError is the failure of an invocation, which fails its whole batch: the messages come back when
// their visibility timeout ends, as on Lambda. An [Invoker]'s handler returns it, so it is the Err of the
// fifoq.BatchReport of the batch (except for a timeout, whose Err is fifoq.ErrHandlerTimeout), and the
// error of the Invoker's log record. Match it with errors.As.
type FunctionError struct {
	Kind         ErrorKind // why the batch failed
	StatusCode   int       // the answer's HTTP status; 0 when there was none
	ErrorType    string    // the function's errorType, or the X-Amz-Function-Error header, if it said
	ErrorMessage string    // the function's errorMessage, if it said
	Err          error     // the underlying error: the request's, or what is wrong with the answer
}

// Error describes the failure.
func (e *FunctionError) Error() string {
	var b strings.Builder
	b.WriteString("lambdaevents: function ")
	switch e.Kind {
	case ErrorStatus:
		fmt.Fprintf(&b, "answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	case ErrorFunction:
		b.WriteString("error")
	case ErrorResponse:
		b.WriteString("answer not accepted")
	case ErrorTimeout:
		b.WriteString("timed out")
	case ErrorUnreachable:
		b.WriteString("unreachable")
	default:
		b.WriteString(e.Kind.String())
	}
	if e.ErrorType != "" {
		b.WriteString(": " + e.ErrorType)
	}
	if e.ErrorMessage != "" {
		b.WriteString(": " + e.ErrorMessage)
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *FunctionError) Unwrap() error { return e.Err }

// rieTimeout starts the answer of the Runtime Interface Emulator for an invocation that ran past the
// function's timeout (its AWS_LAMBDA_FUNCTION_TIMEOUT): a 200 whose body is "Task timed out after 3.00
// seconds".
const rieTimeout = "Task timed out after "

// interpret reads an answer as Lambda reads a function's: it returns the ids of the messages the function
// reports as failed (none: success), or the FunctionError that fails the whole batch. inBatch holds the
// message ids of the batch; reportItems is ReportBatchItemFailures. The body is at most maxResponseBytes;
// truncated says it was longer.
func interpret(status int, header http.Header, body []byte, truncated bool, inBatch map[string]bool,
	reportItems bool) ([]string, *FunctionError) {
	if status < 200 || status > 299 {
		fe := &FunctionError{Kind: ErrorStatus, StatusCode: status}
		fe.ErrorType, fe.ErrorMessage = errorBody(body)
		return nil, fe
	}
	if truncated {
		return nil, &FunctionError{Kind: ErrorResponse, StatusCode: status,
			Err: fmt.Errorf("answer larger than %d bytes, the payload limit of a synchronous invocation", maxResponseBytes)}
	}
	if t := header.Get("X-Amz-Function-Error"); t != "" {
		fe := &FunctionError{Kind: ErrorFunction, StatusCode: status}
		fe.ErrorType, fe.ErrorMessage = errorBody(body)
		if fe.ErrorType == "" {
			fe.ErrorType = t
		}
		return nil, fe
	}
	if errorType, errorMessage := errorBody(body); errorType != "" || errorMessage != "" {
		return nil, &FunctionError{Kind: ErrorFunction, StatusCode: status, ErrorType: errorType, ErrorMessage: errorMessage}
	}
	if bytes.HasPrefix(body, []byte(rieTimeout)) {
		return nil, &FunctionError{Kind: ErrorTimeout, StatusCode: status, ErrorMessage: string(body)}
	}
	if !reportItems {
		return nil, nil // Lambda ignores the answer of a function that does not report item failures
	}
	failed, err := batchItemFailures(body, inBatch)
	if err != nil {
		return nil, &FunctionError{Kind: ErrorResponse, StatusCode: status, Err: err}
	}
	return failed, nil
}

// errorBody returns the errorType and errorMessage of a body that is a JSON object with either, as a
// runtime reports an error: {"errorMessage":"...","errorType":"..."}.
func errorBody(body []byte) (errorType, errorMessage string) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return "", ""
	}
	var e struct {
		ErrorType    *json.RawMessage `json:"errorType"`
		ErrorMessage *json.RawMessage `json:"errorMessage"`
	}
	if json.Unmarshal(body, &e) != nil || e.ErrorType == nil && e.ErrorMessage == nil {
		return "", ""
	}
	// Present: an error, whatever the values are. Report strings as they are, anything else as its JSON.
	text := func(raw *json.RawMessage) string {
		if raw == nil {
			return ""
		}
		var s string
		if json.Unmarshal(*raw, &s) == nil {
			return s
		}
		return string(*raw)
	}
	errorType, errorMessage = text(e.ErrorType), text(e.ErrorMessage)
	if errorType == "" && errorMessage == "" {
		errorType = "null" // {"errorType": null}: still an error
	}
	return errorType, errorMessage
}

// Why a partial batch response fails the whole batch (Lambda: "an invalid JSON response, an empty string
// itemIdentifier, a null itemIdentifier, an itemIdentifier with a bad key name, an itemIdentifier value with
// a message ID that doesn't exist").
var (
	errInvalidJSON     = errors.New("the answer is not valid JSON")
	errNotAnObject     = errors.New("the answer is neither a JSON object nor null")
	errFailuresNotList = errors.New("batchItemFailures is not a list")
)

// batchItemFailures parses a partial batch response: the ids it names, in order and once each. An empty
// body, null, an object without batchItemFailures, a null one or an empty one name none: success. The keys
// are matched exactly, as Lambda does: "BatchItemFailures" is not "batchItemFailures".
func batchItemFailures(body []byte, inBatch map[string]bool) ([]string, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, nil
	}
	if !json.Valid(body) {
		return nil, errInvalidJSON
	}
	if string(body) == "null" {
		return nil, nil
	}
	var resp map[string]json.RawMessage
	if json.Unmarshal(body, &resp) != nil {
		return nil, errNotAnObject
	}
	raw, ok := resp["batchItemFailures"]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil, errFailuresNotList
	}
	var ids []string
	seen := make(map[string]bool, len(items))
	for i, item := range items {
		var fields map[string]json.RawMessage
		if json.Unmarshal(item, &fields) != nil {
			return nil, fmt.Errorf("batchItemFailures[%d] is %s, not an object", i, item)
		}
		rawID, ok := fields["itemIdentifier"]
		if !ok {
			return nil, fmt.Errorf("batchItemFailures[%d] has no itemIdentifier", i)
		}
		var id string
		switch {
		case string(rawID) == "null":
			return nil, fmt.Errorf("batchItemFailures[%d]: itemIdentifier is null", i)
		case json.Unmarshal(rawID, &id) != nil:
			return nil, fmt.Errorf("batchItemFailures[%d]: itemIdentifier %s is not a string", i, rawID)
		case id == "":
			return nil, fmt.Errorf("batchItemFailures[%d]: itemIdentifier is empty", i)
		case !inBatch[id]:
			return nil, fmt.Errorf("batchItemFailures[%d]: itemIdentifier %q is not a messageId of the batch", i, id)
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, nil
}

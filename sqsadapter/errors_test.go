package sqsadapter_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/sqsadapter"
)

// canned is an http.RoundTripper that answers every request with one JSON-protocol response, as SQS would
// send it: the errors that an in-process server never gives, or gives only one way.
type canned struct {
	status     int
	queryError string // the X-Amzn-Query-Error header, if any
	body       string
}

func (c canned) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	h := http.Header{"Content-Type": {"application/x-amz-json-1.0"}, "X-Amzn-Requestid": {"req-1"}}
	if c.queryError != "" {
		h.Set("X-Amzn-Query-Error", c.queryError)
	}
	return &http.Response{
		Status: http.StatusText(c.status), StatusCode: c.status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(strings.NewReader(c.body)), ContentLength: int64(len(c.body)), Request: req,
	}, nil
}

func cannedSource(c canned, queue string) *sqsadapter.Source {
	client := sqs.New(sqs.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String("https://sqs.us-east-1.amazonaws.com"),
		HTTPClient:   &http.Client{Transport: c},
		Credentials:  aws.AnonymousCredentials{},
		Retryer:      aws.NopRetryer{},
	})
	return sqsadapter.New(client, "https://sqs.us-east-1.amazonaws.com/123456789012/"+queue)
}

// TestErrorMapping checks that SQS errors of whole calls match the fifoq sentinel of their code (with or
// without the query protocol's code header) and keep the SDK's error.
func TestErrorMapping(t *testing.T) {
	t.Parallel()
	errorBody := func(shape, msg string) string {
		return `{"__type":"com.amazonaws.sqs#` + shape + `","message":"` + msg + `"}`
	}
	receive := func(src *sqsadapter.Source) error {
		_, err := src.Receive(context.Background(), fifoq.ReceiveOptions{MaxMessages: 10})
		return err
	}
	deleteBatch := func(src *sqsadapter.Source) error { return src.DeleteBatch(context.Background(), []string{"h"}) }
	changeBatch := func(src *sqsadapter.Source) error {
		return src.ChangeVisibilityBatch(context.Background(), []fifoq.VisibilityChange{{ReceiptHandle: "h"}})
	}
	for _, tc := range []struct {
		name string
		call func(*sqsadapter.Source) error
		resp canned
		want error  // the sentinel, or nil for none
		code string // the SDK error's code
		as   any    // a pointer to the SDK error type it must match, or nil for a generic API error
	}{
		{
			"too many entries, query header", deleteBatch,
			canned{400, "AWS.SimpleQueueService.TooManyEntriesInBatchRequest;Sender",
				errorBody("TooManyEntriesInBatchRequest", "Maximum number of entries per request are 10. You have sent 11.")},
			fifoq.ErrTooManyEntries, "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", new(*types.TooManyEntriesInBatchRequest),
		},
		{
			"too many entries, JSON only", changeBatch,
			canned{400, "", errorBody("TooManyEntriesInBatchRequest", "Maximum number of entries per request are 10.")},
			fifoq.ErrTooManyEntries, "TooManyEntriesInBatchRequest", new(*types.TooManyEntriesInBatchRequest),
		},
		{
			"empty batch", deleteBatch,
			canned{400, "AWS.SimpleQueueService.EmptyBatchRequest;Sender", errorBody("EmptyBatchRequest", "There should be at least one entry.")},
			fifoq.ErrEmptyBatch, "AWS.SimpleQueueService.EmptyBatchRequest", new(*types.EmptyBatchRequest),
		},
		{
			"receipt handle invalid", deleteBatch,
			canned{404, "ReceiptHandleIsInvalid;Sender", errorBody("ReceiptHandleIsInvalid", `The input receipt handle \"h\" is not a valid receipt handle.`)},
			fifoq.ErrReceiptHandleInvalid, "ReceiptHandleIsInvalid", new(*types.ReceiptHandleIsInvalid),
		},
		{
			"message not in flight", changeBatch,
			canned{400, "AWS.SimpleQueueService.MessageNotInflight;Sender", errorBody("MessageNotInflight", "The message referred to isn't in flight.")},
			fifoq.ErrReceiptHandleExpired, "AWS.SimpleQueueService.MessageNotInflight", new(*types.MessageNotInflight),
		},
		{
			"max messages", receive,
			canned{400, "InvalidParameterValue;Sender", errorBody("InvalidParameterValue",
				"Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.")},
			fifoq.ErrInvalidMaxMessages, "InvalidParameterValue", nil,
		},
		{
			"wait time", receive,
			canned{400, "InvalidParameterValue;Sender", errorBody("InvalidParameterValue",
				"Value 21 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided.")},
			fifoq.ErrInvalidWaitTime, "InvalidParameterValue", nil,
		},
		{
			"visibility timeout", receive,
			canned{400, "", errorBody("InvalidParameterValue", "Value 43201 for parameter VisibilityTimeout is invalid.")},
			fifoq.ErrInvalidVisibilityTimeout, "InvalidParameterValue", nil,
		},
		{
			"attempt id", receive,
			canned{400, "InvalidParameterValue;Sender", errorBody("InvalidParameterValue",
				"Value a b for parameter ReceiveRequestAttemptId is invalid. Reason: ReceiveRequestAttemptId can only include alphanumeric and punctuation characters. 1 to 128 in length.")},
			fifoq.ErrInvalidAttemptID, "InvalidParameterValue", nil,
		},
		{
			"attempt not retryable", receive,
			canned{400, "InvalidParameterValue;Sender", errorBody("InvalidParameterValue",
				"Value a1 for parameter ReceiveRequestAttemptId is invalid. Reason: The receiveRequestAttemptId is not valid anymore since the receive call is not retryable.")},
			fifoq.ErrAttemptNotRetryable, "InvalidParameterValue", nil,
		},
		{
			"another invalid parameter", receive,
			canned{400, "InvalidParameterValue;Sender", errorBody("InvalidParameterValue", "Value x for parameter Something is invalid.")},
			nil, "InvalidParameterValue", nil,
		},
		{
			"over limit", receive,
			canned{403, "OverLimit;Sender", errorBody("OverLimit", "Too many messages in flight.")},
			nil, "OverLimit", new(*types.OverLimit),
		},
		{
			"queue does not exist", deleteBatch,
			canned{400, "AWS.SimpleQueueService.NonExistentQueue;Sender", errorBody("QueueDoesNotExist", "The specified queue does not exist.")},
			catalog.ErrQueueDoesNotExist, "AWS.SimpleQueueService.NonExistentQueue", new(*types.QueueDoesNotExist),
		},
	} {
		err := tc.call(cannedSource(tc.resp, "q.fifo"))
		require.Error(t, err, tc.name)
		if tc.want != nil {
			require.ErrorIs(t, err, tc.want, "%s: %v", tc.name, err)
		} else {
			require.Empty(t, fifoq.ErrorCode(err), "%s: %v matches a fifoq rule", tc.name, err)
		}
		var apiErr smithy.APIError
		require.ErrorAs(t, err, &apiErr, tc.name)
		require.Equal(t, tc.code, apiErr.ErrorCode(), tc.name)
		if tc.as != nil {
			require.ErrorAs(t, err, tc.as, tc.name)
		} else {
			var generic *smithy.GenericAPIError
			require.ErrorAs(t, err, &generic, tc.name)
		}
	}
}

// TestBatchEntryErrors checks that the failed entries of a batch call come back in request order, each
// matching the sentinel of its code and carrying its code, message and fault.
func TestBatchEntryErrors(t *testing.T) {
	t.Parallel()
	src := cannedSource(canned{200, "", `{"Successful":[{"Id":"1"},{"Id":"3"}],"Failed":[` +
		`{"Id":"4","Code":"ReceiptHandleIsInvalid","SenderFault":true,"Message":"The input receipt handle \"x\" is not a valid receipt handle."},` +
		`{"Id":"2","Code":"InvalidParameterValue","SenderFault":true,"Message":"Value h2 for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired."},` +
		`{"Id":"0","Code":"InternalError","SenderFault":false,"Message":"We encountered an internal error."}]}`}, "q.fifo")
	err := src.ChangeVisibilityBatch(context.Background(), []fifoq.VisibilityChange{
		{ReceiptHandle: "h0"}, {ReceiptHandle: "h1"}, {ReceiptHandle: "h2"}, {ReceiptHandle: "h3"}, {ReceiptHandle: "x"},
	})
	var be *fifoq.BatchError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Entries, 3)
	for i, want := range []struct {
		index    int
		sentinel error
		code     string
		fault    smithy.ErrorFault
	}{
		{0, nil, "InternalError", smithy.FaultServer},
		{2, fifoq.ErrReceiptHandleExpired, "InvalidParameterValue", smithy.FaultClient},
		{4, fifoq.ErrReceiptHandleInvalid, "ReceiptHandleIsInvalid", smithy.FaultClient},
	} {
		entry := be.Entries[i]
		require.Equal(t, want.index, entry.Index)
		if want.sentinel != nil {
			require.ErrorIs(t, entry.Err, want.sentinel)
		} else {
			require.Empty(t, fifoq.ErrorCode(entry.Err))
		}
		var apiErr *smithy.GenericAPIError
		require.ErrorAs(t, entry.Err, &apiErr)
		require.Equal(t, want.code, apiErr.Code)
		require.Equal(t, want.fault, apiErr.Fault)
		require.NotEmpty(t, apiErr.Message)
	}
	require.ErrorIs(t, err, fifoq.ErrReceiptHandleExpired)
	require.ErrorIs(t, err, fifoq.ErrReceiptHandleInvalid)

	// An entry id the request did not have is an error of the whole call, not a made-up index.
	src = cannedSource(canned{200, "", `{"Successful":[],"Failed":[{"Id":"7","Code":"InternalError","SenderFault":false}]}`}, "q.fifo")
	err = src.DeleteBatch(context.Background(), []string{"h0"})
	require.ErrorContains(t, err, `"7"`)
	require.False(t, errors.As(err, &be))

	// All entries successful: no error.
	src = cannedSource(canned{200, "", `{"Successful":[{"Id":"0"}],"Failed":[]}`}, "q.fifo")
	require.NoError(t, src.DeleteBatch(context.Background(), []string{"h0"}))
}

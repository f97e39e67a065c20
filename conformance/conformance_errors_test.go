package conformance_test

// Errors of the JSON protocol as SQS sends them and as aws-sdk-go-v2 reads them. For each error the test
// provokes it through the SDK and checks both sides: on the wire, the HTTP status, the body's __type
// ("com.amazonaws.sqs#<shape>", the shape of the SQS model, or for InvalidParameterValue and
// MissingParameter the names AWS sends: InvalidParameterValueException, MissingRequiredParameterException)
// and message, and the x-amzn-query-error header ("<query code>;Sender"); in the SDK, ErrorCode() (the
// query code, from the header), the fault, the message, and the modeled type that errors.As finds (or
// *smithy.GenericAPIError for the codes the model leaves out). The names and texts are those of AWS's
// recorded answers (the SQS API reference's example error, LocalStack's AWS-validated snapshots).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/sqsapi"
)

// ceRecorder is an SDK HTTP client that keeps the last response it passed on, body and all.
type ceRecorder struct {
	next   *http.Client
	status int
	header http.Header
	body   []byte
}

func (r *ceRecorder) Do(req *http.Request) (*http.Response, error) {
	resp, err := r.next.Do(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	r.status, r.header, r.body = resp.StatusCode, resp.Header.Clone(), b
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, nil
}

// ceQueues are the queues every case may use.
type ceQueues struct{ std, fifo, missing string }

type ceCase struct {
	name    string
	call    func(ctx context.Context, c *sqs.Client, q ceQueues) error
	status  int
	shape   string // the __type after "com.amazonaws.sqs#"
	code    string // the query code: x-amzn-query-error and ErrorCode()
	message string // exact; "prefix…" wants a prefix
	modeled func(error) bool
}

func ceAs[T error](err error) bool {
	var target T
	return errors.As(err, &target)
}

func ceGeneric(err error) bool {
	var g *smithy.GenericAPIError
	return errors.As(err, &g)
}

func TestConformanceJSONErrors(t *testing.T) {
	batchOf := func(n int, id func(i int) string) []types.SendMessageBatchRequestEntry {
		es := make([]types.SendMessageBatchRequestEntry, n)
		for i := range es {
			es[i] = types.SendMessageBatchRequestEntry{Id: aws.String(id(i)), MessageBody: aws.String("m")}
		}
		return es
	}
	cases := []ceCase{{
		name: "QueueDoesNotExist",
		call: func(ctx context.Context, c *sqs.Client, q ceQueues) error {
			_, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("ce-none")})
			return err
		},
		status: 400, shape: "QueueDoesNotExist", code: "AWS.SimpleQueueService.NonExistentQueue",
		message: "The specified queue does not exist.", modeled: ceAs[*types.QueueDoesNotExist],
	}, {
		name: "QueueDoesNotExist by URL",
		call: func(ctx context.Context, c *sqs.Client, q ceQueues) error {
			_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &q.missing, MessageBody: aws.String("m")})
			return err
		},
		status: 400, shape: "QueueDoesNotExist", code: "AWS.SimpleQueueService.NonExistentQueue",
		message: "The specified queue does not exist.", modeled: ceAs[*types.QueueDoesNotExist],
	}, {
		name: "InvalidParameterValue",
		call: func(ctx context.Context, c *sqs.Client, q ceQueues) error {
			_, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &q.std, MaxNumberOfMessages: 11})
			return err
		},
		status: 400, shape: "InvalidParameterValueException", code: "InvalidParameterValue",
		message: "Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.",
		modeled: ceGeneric,
	}, {
		name: "InvalidParameterValue delay on FIFO",
		call: func(ctx context.Context, c *sqs.Client, q ceQueues) error {
			_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &q.fifo, MessageBody: aws.String("m"),
				MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("d"), DelaySeconds: 2})
			return err
		},
		status: 400, shape: "InvalidParameterValueException", code: "InvalidParameterValue",
		message: "Value 2 for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type.",
		modeled: ceGeneric,
	}, {
		// AWS's answer to a single SendMessage, recorded in a production log: "Value <id> for parameter
		// MessageDeduplicationId is invalid. Reason: The request include parameter that is not valid for this
		// queue type." (a batch entry's is unframed, aws/aws-sdk-js#4216: sdk_send_test.go).
		name: "InvalidParameterValue deduplication id on a standard queue",
		call: func(ctx context.Context, c *sqs.Client, q ceQueues) error {
			_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &q.std, MessageBody: aws.String("m"),
				MessageDeduplicationId: aws.String("d")})
			return err
		},
		status: 400, shape: "InvalidParameterValueException", code: "InvalidParameterValue",
		message: "Value d for parameter MessageDeduplicationId is invalid. Reason: The request include parameter that is not valid for this queue type.",
		modeled: ceGeneric,
	}, {
		name: "InvalidParameterValue no deduplication id",
		call: func(ctx context.Context, c *sqs.Client, q ceQueues) error {
			_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &q.fifo, MessageBody: aws.String("m"),
				MessageGroupId: aws.String("g")})
			return err
		},
		status: 400, shape: "InvalidParameterValueException", code: "InvalidParameterValue",
		message: "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
		modeled: ceGeneric,
	}, {
		name: "MissingParameter",
		call: func(ctx context.Context, c *sqs.Client, q ceQueues) error {
			_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &q.fifo, MessageBody: aws.String("m"),
				MessageDeduplicationId: aws.String("d")})
			return err
		},
		status: 400, shape: "MissingRequiredParameterException", code: "MissingParameter",
		message: "The request must contain the parameter MessageGroupId.", modeled: ceGeneric,
	}, {
		name: "MissingParameter MessageBody",
		call: func(ctx context.Context, c *sqs.Client, q ceQueues) error {
			_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &q.std, MessageBody: aws.String("")})
			return err
		},
		status: 400, shape: "MissingRequiredParameterException", code: "MissingParameter",
		message: "The request must contain the parameter MessageBody.", modeled: ceGeneric,
	}, {
		name: "QueueNameExists",
		call: func(ctx context.Context, c *sqs.Client, q ceQueues) error {
			_, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("ce-std"),
				Attributes: map[string]string{"DelaySeconds": "5"}})
			return err
		},
		status: 400, shape: "QueueNameExists", code: "QueueAlreadyExists",
		message: "A queue already exists with the same name and a different value for attribute DelaySeconds",
		modeled: ceAs[*types.QueueNameExists],
	}, {
		name: "InvalidAttributeName",
		call: func(ctx context.Context, c *sqs.Client, q ceQueues) error {
			_, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &q.std,
				AttributeNames: []types.QueueAttributeName{"Foobar"}})
			return err
		},
		status: 400, shape: "InvalidAttributeName", code: "InvalidAttributeName",
		message: "Unknown Attribute Foobar.", modeled: ceAs[*types.InvalidAttributeName],
	}, {
		name: "InvalidAttributeValue",
		call: func(ctx context.Context, c *sqs.Client, q ceQueues) error {
			_, err := c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &q.std,
				Attributes: map[string]string{"VisibilityTimeout": "-1"}})
			return err
		},
		status: 400, shape: "InvalidAttributeValue", code: "InvalidAttributeValue",
		message: "Invalid value for the parameter VisibilityTimeout.…", modeled: ceAs[*types.InvalidAttributeValue],
	}, {
		name: "ReceiptHandleIsInvalid",
		call: func(ctx context.Context, c *sqs.Client, q ceQueues) error {
			_, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &q.std, ReceiptHandle: aws.String("garbage")})
			return err
		},
		status: 404, shape: "ReceiptHandleIsInvalid", code: "ReceiptHandleIsInvalid",
		message: `The input receipt handle "garbage" is not a valid receipt handle.`, modeled: ceAs[*types.ReceiptHandleIsInvalid],
	}, {
		name: "InvalidMessageContents",
		call: func(ctx context.Context, c *sqs.Client, q ceQueues) error {
			_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &q.std, MessageBody: aws.String("a\x00b")})
			return err
		},
		status: 400, shape: "InvalidMessageContents", code: "InvalidMessageContents",
		message: "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF",
		modeled: ceAs[*types.InvalidMessageContents],
	}, {
		name: "EmptyBatchRequest",
		call: func(ctx context.Context, c *sqs.Client, q ceQueues) error {
			_, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &q.std,
				Entries: []types.SendMessageBatchRequestEntry{}})
			return err
		},
		status: 400, shape: "EmptyBatchRequest", code: "AWS.SimpleQueueService.EmptyBatchRequest",
		message: "There should be at least one SendMessageBatchRequestEntry in the request.",
		modeled: ceAs[*types.EmptyBatchRequest],
	}, {
		name: "TooManyEntriesInBatchRequest",
		call: func(ctx context.Context, c *sqs.Client, q ceQueues) error {
			_, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &q.std,
				Entries: batchOf(20, strconv.Itoa)})
			return err
		},
		status: 400, shape: "TooManyEntriesInBatchRequest", code: "AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
		message: "Maximum number of entries per request are 10. You have sent 20.",
		modeled: ceAs[*types.TooManyEntriesInBatchRequest],
	}, {
		name: "BatchEntryIdsNotDistinct",
		call: func(ctx context.Context, c *sqs.Client, q ceQueues) error {
			_, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &q.std,
				Entries: batchOf(2, func(int) string { return "same" })})
			return err
		},
		status: 400, shape: "BatchEntryIdsNotDistinct", code: "AWS.SimpleQueueService.BatchEntryIdsNotDistinct",
		message: "Id same repeated.", modeled: ceAs[*types.BatchEntryIdsNotDistinct],
	}, {
		name: "InvalidBatchEntryId",
		call: func(ctx context.Context, c *sqs.Client, q ceQueues) error {
			_, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &q.std,
				Entries: batchOf(1, func(int) string { return "invalid:id" })})
			return err
		},
		status: 400, shape: "InvalidBatchEntryId", code: "AWS.SimpleQueueService.InvalidBatchEntryId",
		message: "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.",
		modeled: ceAs[*types.InvalidBatchEntryId],
	}, {
		name: "BatchRequestTooLong",
		call: func(ctx context.Context, c *sqs.Client, q ceQueues) error {
			es := batchOf(2, strconv.Itoa)
			es[0].MessageBody = aws.String(strings.Repeat("a", 1<<20))
			_, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &q.std, Entries: es})
			return err
		},
		status: 400, shape: "BatchRequestTooLong", code: "AWS.SimpleQueueService.BatchRequestTooLong",
		message: "Batch requests cannot be longer than 1048576 bytes. You have sent 1048577 bytes.",
		modeled: ceAs[*types.BatchRequestTooLong],
	}, {
		name: "PurgeQueueInProgress",
		call: func(ctx context.Context, c *sqs.Client, q ceQueues) error {
			if _, err := c.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: &q.std}); err != nil {
				return err
			}
			_, err := c.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: &q.std})
			return err
		},
		status: 403, shape: "PurgeQueueInProgress", code: "AWS.SimpleQueueService.PurgeQueueInProgress",
		message: "Only one PurgeQueue operation on ce-std is allowed every 60 seconds.",
		modeled: ceAs[*types.PurgeQueueInProgress],
	}, {
		name: "QueueDeletedRecently",
		call: func(ctx context.Context, c *sqs.Client, q ceQueues) error {
			out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("ce-gone")})
			if err != nil {
				return err
			}
			if _, err := c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: out.QueueUrl}); err != nil {
				return err
			}
			_, err = c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("ce-gone")})
			return err
		},
		status: 400, shape: "QueueDeletedRecently", code: "AWS.SimpleQueueService.QueueDeletedRecently",
		message: "You must wait 60 seconds after deleting a queue before you can create another with the same name.",
		modeled: ceAs[*types.QueueDeletedRecently],
	}, {
		name: "ResourceNotFoundException",
		call: func(ctx context.Context, c *sqs.Client, q ceQueues) error {
			_, err := c.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{
				SourceArn: aws.String("arn:aws:sqs:us-east-1:000000000000:ce-none")})
			return err
		},
		status: 404, shape: "ResourceNotFoundException", code: "ResourceNotFoundException",
		modeled: ceAs[*types.ResourceNotFoundException],
	}}

	clk := fifoq.NewManualClock(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	srv := sqsapi.NewServer(sqsapi.WithClock(clk))
	rec := &ceRecorder{next: srv.HTTPClient()}
	c := sqs.New(sqs.Options{
		Region: "us-east-1", BaseEndpoint: aws.String("http://fifoq.test"), HTTPClient: rec, Retryer: aws.NopRetryer{},
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDCONFORMANCE", SecretAccessKey: "secret"}, nil
		}),
	})
	ctx := t.Context()
	mustURL := func(name string, attrs map[string]string) string {
		out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: &name, Attributes: attrs})
		if err != nil {
			t.Fatalf("CreateQueue %s: %v", name, err)
		}
		return *out.QueueUrl
	}
	q := ceQueues{std: mustURL("ce-std", nil), fifo: mustURL("ce.fifo", map[string]string{"FifoQueue": "true"})}
	q.missing = strings.TrimSuffix(q.std, "ce-std") + "ce-none"

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(ctx, c, q)
			if err == nil {
				t.Fatalf("no error; want %s", tc.code)
			}
			// The wire.
			if rec.status != tc.status {
				t.Errorf("HTTP status %d, want %d", rec.status, tc.status)
			}
			if ct := rec.header.Get("Content-Type"); ct != "application/x-amz-json-1.0" {
				t.Errorf("Content-Type %q", ct)
			}
			if h := rec.header.Get("X-Amzn-Query-Error"); h != tc.code+";Sender" {
				t.Errorf("x-amzn-query-error %q, want %q", h, tc.code+";Sender")
			}
			var body map[string]string
			if err := json.Unmarshal(rec.body, &body); err != nil {
				t.Fatalf("body %s: %v", rec.body, err)
			}
			if want := "com.amazonaws.sqs#" + tc.shape; body["__type"] != want {
				t.Errorf("__type %q, want %q", body["__type"], want)
			}
			if len(body) != 2 {
				t.Errorf("body %s: want __type and message only", rec.body)
			}
			ceWantText(t, "body message", body["message"], tc.message)
			// The SDK.
			var ae smithy.APIError
			if !errors.As(err, &ae) {
				t.Fatalf("%T %v: not a smithy.APIError", err, err)
			}
			if ae.ErrorCode() != tc.code {
				t.Errorf("ErrorCode() %q, want %q", ae.ErrorCode(), tc.code)
			}
			if ae.ErrorFault() != smithy.FaultClient {
				t.Errorf("ErrorFault() %v, want client", ae.ErrorFault())
			}
			ceWantText(t, "ErrorMessage()", ae.ErrorMessage(), tc.message)
			if !tc.modeled(err) {
				t.Errorf("errors.As does not find the expected type in %T: %v", ae, err)
			}
		})
	}
}

// ceWantText checks a message: want "" checks nothing, "x…" wants the prefix x, anything else the exact text.
func ceWantText(t *testing.T, what, got, want string) {
	t.Helper()
	if p, ok := strings.CutSuffix(want, "…"); ok {
		if !strings.HasPrefix(got, p) {
			t.Errorf("%s %q, want it to start %q", what, got, p)
		}
		return
	}
	if want != "" && got != want {
		t.Errorf("%s %q, want %q", what, got, want)
	}
}

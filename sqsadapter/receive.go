package sqsadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/fifoq/fifoq"
)

// Receive receives up to o.MaxMessages messages (1..10; 0 means 1) with one ReceiveMessage call, asking
// for every system and message attribute, and returns them as Deliveries.
//
// o.WaitTime becomes WaitTimeSeconds and o.VisibilityTimeout becomes VisibilityTimeout, rounded up to
// whole seconds, SQS's unit: a long poll never ends empty before its wait, and a message stays invisible
// at least as long as asked. A zero leaves the parameter out, so the queue's setting applies;
// o.NoWaitTime and o.NoVisibilityTimeout send 0: a short poll, or messages left visible. o.AttemptID becomes
// ReceiveRequestAttemptId on a FIFO queue and is ignored on a standard one. Options out of range return
// fifoq's sentinels (ErrInvalidMaxMessages, ErrInvalidWaitTime, ErrInvalidVisibilityTimeout) without a
// request. When ctx is done, Receive returns ctx's error; messages SQS returned meanwhile come back after
// their visibility timeout.
//
// Each message becomes a Delivery: its body; GroupID, DeduplicationID and SequenceNumber from
// MessageGroupId, MessageDeduplicationId and SequenceNumber; its message attributes, with their data
// types; MessageID and ReceiptHandle; ReceiveCount from ApproximateReceiveCount; SentAt and
// FirstReceivedAt from SentTimestamp and ApproximateFirstReceiveTimestamp (to the millisecond); and
// DeadLetterSource, the queue name at the end of DeadLetterQueueSourceArn. A Delivery's Delay is always 0:
// SQS does not return a message's delay.
func (s *Source) Receive(ctx context.Context, o fifoq.ReceiveOptions) ([]fifoq.Delivery, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	in := &sqs.ReceiveMessageInput{
		QueueUrl:                    aws.String(s.url),
		MaxNumberOfMessages:         int32(max(o.MaxMessages, 1)),
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"},
	}
	var zeros []string // the parameters to send as an explicit 0, which the SDK leaves out
	if o.NoWaitTime {
		zeros = append(zeros, "WaitTimeSeconds")
	} else {
		in.WaitTimeSeconds = seconds(o.WaitTime)
	}
	if o.NoVisibilityTimeout {
		zeros = append(zeros, "VisibilityTimeout")
	} else {
		in.VisibilityTimeout = seconds(o.VisibilityTimeout)
	}
	if s.fifo && o.AttemptID != "" {
		in.ReceiveRequestAttemptId = aws.String(o.AttemptID)
	}
	var optFns []func(*sqs.Options)
	if len(zeros) > 0 {
		optFns = append(optFns, sendZeros(zeros))
	}
	out, err := s.client.ReceiveMessage(ctx, in, optFns...)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, mapError(err)
	}
	if len(out.Messages) == 0 && ctx.Err() != nil {
		return nil, ctx.Err() // an endpoint may end a long poll early with no messages when its caller gives up
	}
	ds := make([]fifoq.Delivery, len(out.Messages))
	for i, m := range out.Messages {
		ds[i] = delivery(m)
	}
	return ds, nil
}

// delivery maps an SQS message to a Delivery.
func delivery(m types.Message) fifoq.Delivery {
	a := m.Attributes
	d := fifoq.Delivery{
		Message: fifoq.Message{
			Body:            aws.ToString(m.Body),
			GroupID:         a[string(types.MessageSystemAttributeNameMessageGroupId)],
			DeduplicationID: a[string(types.MessageSystemAttributeNameMessageDeduplicationId)],
			TraceHeader:     a[string(types.MessageSystemAttributeNameAWSTraceHeader)],
		},
		MessageID:        aws.ToString(m.MessageId),
		ReceiptHandle:    aws.ToString(m.ReceiptHandle),
		SequenceNumber:   a[string(types.MessageSystemAttributeNameSequenceNumber)],
		SentAt:           millis(a[string(types.MessageSystemAttributeNameSentTimestamp)]),
		FirstReceivedAt:  millis(a[string(types.MessageSystemAttributeNameApproximateFirstReceiveTimestamp)]),
		DeadLetterSource: queueName(a[string(types.MessageSystemAttributeNameDeadLetterQueueSourceArn)]),
	}
	d.ReceiveCount, _ = strconv.Atoi(a[string(types.MessageSystemAttributeNameApproximateReceiveCount)])
	if len(m.MessageAttributes) > 0 {
		d.Attributes = make(map[string]fifoq.Attribute, len(m.MessageAttributes))
		for name, v := range m.MessageAttributes {
			d.Attributes[name] = fifoq.Attribute{
				DataType:    aws.ToString(v.DataType),
				StringValue: aws.ToString(v.StringValue),
				BinaryValue: v.BinaryValue,
			}
		}
	}
	return d
}

// millis reads an epoch-milliseconds timestamp; a missing or malformed one is the zero time.
func millis(s string) time.Time {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(n)
}

// queueName returns the queue name at the end of a queue ARN (arn:aws:sqs:region:account:name).
func queueName(arn string) string {
	return arn[strings.LastIndexByte(arn, ':')+1:]
}

// sendZeros makes a call send the named integer parameters as an explicit 0. The SDK leaves an int32
// parameter out when it is 0, which to SQS means "the queue's setting"; this splices the parameters into
// the serialized JSON body, before its length and signature are computed.
func sendZeros(names []string) func(*sqs.Options) {
	var fields bytes.Buffer
	for _, name := range names {
		fmt.Fprintf(&fields, "%q:0,", name)
	}
	return patchBody("sqsadapter.SendZeros", func(body []byte) ([]byte, error) {
		patched := append([]byte{'{'}, fields.Bytes()...)
		if rest := bytes.TrimSpace(body[1:]); rest[0] == '}' {
			patched = patched[:len(patched)-1] // no member follows: drop the last comma
		}
		return append(patched, body[1:]...), nil
	})
}

// sendEntryZeros is sendZeros for the entries of a batch call: it sends field as an explicit 0 in each
// entry of the list member list whose Id is one of ids.
func sendEntryZeros(list string, ids []string, field string) func(*sqs.Options) {
	return patchBody("sqsadapter.SendEntryZeros", func(body []byte) ([]byte, error) {
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(body, &doc); err != nil {
			return nil, err
		}
		var entries []map[string]json.RawMessage
		if err := json.Unmarshal(doc[list], &entries); err != nil {
			return nil, err
		}
		for _, e := range entries {
			var id string
			if err := json.Unmarshal(e["Id"], &id); err == nil && slices.Contains(ids, id) {
				e[field] = json.RawMessage("0")
			}
		}
		raw, err := json.Marshal(entries)
		if err != nil {
			return nil, err
		}
		doc[list] = raw
		return json.Marshal(doc)
	})
}

// patchBody makes a call rewrite its serialized JSON body with patch, before its length and signature are
// computed. It refuses a request of another protocol: the SDK's SQS client speaks JSON.
func patchBody(id string, patch func(body []byte) ([]byte, error)) func(*sqs.Options) {
	mw := middleware.SerializeMiddlewareFunc(id, func(ctx context.Context,
		in middleware.SerializeInput, next middleware.SerializeHandler,
	) (middleware.SerializeOutput, middleware.Metadata, error) {
		req, ok := in.Request.(*smithyhttp.Request)
		if !ok {
			return middleware.SerializeOutput{}, middleware.Metadata{}, fmt.Errorf("sqsadapter: unexpected request type %T", in.Request)
		}
		if ct := req.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-amz-json-") {
			return middleware.SerializeOutput{}, middleware.Metadata{},
				fmt.Errorf("sqsadapter: cannot send an explicit 0 in a %q request; use the JSON protocol", ct)
		}
		var body []byte
		if r := req.GetStream(); r != nil {
			var err error
			if body, err = io.ReadAll(r); err != nil {
				return middleware.SerializeOutput{}, middleware.Metadata{}, fmt.Errorf("sqsadapter: read request: %w", err)
			}
		}
		body = bytes.TrimSpace(body)
		if len(body) < 2 || body[0] != '{' {
			return middleware.SerializeOutput{}, middleware.Metadata{}, fmt.Errorf("sqsadapter: request body %q is not a JSON object", body)
		}
		patched, err := patch(body)
		if err != nil {
			return middleware.SerializeOutput{}, middleware.Metadata{}, fmt.Errorf("sqsadapter: rewrite request: %w", err)
		}
		if req, err = req.SetStream(bytes.NewReader(patched)); err != nil {
			return middleware.SerializeOutput{}, middleware.Metadata{}, fmt.Errorf("sqsadapter: set request: %w", err)
		}
		in.Request = req
		return next.HandleSerialize(ctx, in)
	})
	return func(o *sqs.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Serialize.Add(mw, middleware.After)
		})
	}
}

package sqsadapter

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/fifoq/fifoq"
)

// Send sends m with one SendMessage call, after checking it with fifoq's own rules ([fifoq.CheckMessage]),
// so that a message a *fifoq.Queue refuses is refused the same way here, with the same sentinel, before
// any request. Every field maps: GroupID and DeduplicationID to MessageGroupId and MessageDeduplicationId;
// the attributes, with their data types; TraceHeader to the AWSTraceHeader system attribute; Delay to
// DelaySeconds, rounded up to whole seconds as SQS takes it; NoDelay to an explicit DelaySeconds of 0, so
// that the queue's delay does not apply. The result has the MessageID and, on a FIFO queue, the
// SequenceNumber; Duplicate is always false: SQS does not say that it took a send for a duplicate (it
// answers with a MessageID all the same).
func (s *Source) Send(ctx context.Context, m fifoq.Message) (fifoq.SendResult, error) {
	if err := fifoq.CheckMessage(m, s.fifo); err != nil {
		return fifoq.SendResult{}, err
	}
	in := &sqs.SendMessageInput{
		QueueUrl:                aws.String(s.url),
		MessageBody:             aws.String(m.Body),
		MessageGroupId:          optional(m.GroupID),
		MessageDeduplicationId:  optional(m.DeduplicationID),
		DelaySeconds:            seconds(m.Delay),
		MessageAttributes:       messageAttributes(m.Attributes),
		MessageSystemAttributes: systemAttributes(m.TraceHeader),
	}
	var optFns []func(*sqs.Options)
	if m.NoDelay {
		optFns = append(optFns, sendZeros([]string{"DelaySeconds"}))
	}
	out, err := s.client.SendMessage(ctx, in, optFns...)
	if err != nil {
		return fifoq.SendResult{}, mapError(err)
	}
	return fifoq.SendResult{MessageID: aws.ToString(out.MessageId), SequenceNumber: aws.ToString(out.SequenceNumber)}, nil
}

// SendBatch sends 1..10 messages with one SendMessageBatch call, each mapped as by Send. The messages are
// checked first with fifoq's rules ([fifoq.CheckBatch]): what fails the whole call (no entries, more than
// 10, more than 1 MiB in all, a FIFO entry without a group id) fails it with no request; an entry that
// fails alone is not sent. The entries that fifoq refused and those SQS reports failed come back together
// in a *fifoq.BatchError, in entry order, each result of a failed entry zero, as from a *fifoq.Queue.
func (s *Source) SendBatch(ctx context.Context, ms []fifoq.Message) ([]fifoq.SendResult, error) {
	var failed []fifoq.EntryError
	if err := fifoq.CheckBatch(ms, s.fifo); err != nil {
		var be *fifoq.BatchError
		if !errors.As(err, &be) {
			return nil, err
		}
		failed = be.Entries
	}
	results := make([]fifoq.SendResult, len(ms))
	bad := make([]bool, len(ms))
	for _, f := range failed {
		bad[f.Index] = true
	}
	entries := make([]types.SendMessageBatchRequestEntry, 0, len(ms))
	var zeros []string // the ids of the entries whose DelaySeconds must be an explicit 0
	for i, m := range ms {
		if bad[i] {
			continue
		}
		id := strconv.Itoa(i)
		entries = append(entries, types.SendMessageBatchRequestEntry{
			Id:                      aws.String(id),
			MessageBody:             aws.String(m.Body),
			MessageGroupId:          optional(m.GroupID),
			MessageDeduplicationId:  optional(m.DeduplicationID),
			DelaySeconds:            seconds(m.Delay),
			MessageAttributes:       messageAttributes(m.Attributes),
			MessageSystemAttributes: systemAttributes(m.TraceHeader),
		})
		if m.NoDelay {
			zeros = append(zeros, id)
		}
	}
	if len(entries) > 0 {
		var optFns []func(*sqs.Options)
		if len(zeros) > 0 {
			optFns = append(optFns, sendEntryZeros("Entries", zeros, "DelaySeconds"))
		}
		out, err := s.client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(s.url), Entries: entries}, optFns...)
		if err != nil {
			return nil, mapError(err)
		}
		for _, ok := range out.Successful {
			i, err := strconv.Atoi(aws.ToString(ok.Id))
			if err != nil || i < 0 || i >= len(ms) || bad[i] {
				return nil, errors.New("sqsadapter: SQS reported a sent entry with id " + strconv.Quote(aws.ToString(ok.Id)) + ", not one of the request's")
			}
			results[i] = fifoq.SendResult{MessageID: aws.ToString(ok.MessageId), SequenceNumber: aws.ToString(ok.SequenceNumber)}
		}
		if err := batchError(out.Failed, len(ms)); err != nil {
			var be *fifoq.BatchError
			if !errors.As(err, &be) {
				return nil, err
			}
			failed = append(failed, be.Entries...)
		}
	}
	if len(failed) > 0 {
		slices.SortFunc(failed, func(a, b fifoq.EntryError) int { return a.Index - b.Index })
		return results, &fifoq.BatchError{Entries: failed}
	}
	return results, nil
}

// Delete deletes a received message by its receipt handle with one DeleteMessage call.
func (s *Source) Delete(ctx context.Context, receiptHandle string) error {
	_, err := s.client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(s.url), ReceiptHandle: aws.String(receiptHandle)})
	return mapError(err)
}

// ChangeVisibility makes a received message invisible for timeout from now, rounded up to whole seconds
// (0 makes it visible at once), with one ChangeMessageVisibility call; a timeout out of 0..12h returns
// fifoq.ErrInvalidVisibilityTimeout with no request.
func (s *Source) ChangeVisibility(ctx context.Context, receiptHandle string, timeout time.Duration) error {
	if err := (fifoq.VisibilityChange{ReceiptHandle: receiptHandle, Timeout: timeout}).Check(); err != nil {
		return err
	}
	_, err := s.client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl:          aws.String(s.url),
		ReceiptHandle:     aws.String(receiptHandle),
		VisibilityTimeout: seconds(timeout),
	})
	return mapError(err)
}

// optional returns a pointer to s, or nil for "", which the SDK leaves out.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// messageAttributes maps fifoq's message attributes to SQS's.
func messageAttributes(in map[string]fifoq.Attribute) map[string]types.MessageAttributeValue {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]types.MessageAttributeValue, len(in))
	for name, a := range in {
		v := types.MessageAttributeValue{DataType: aws.String(a.DataType)}
		if a.BinaryValue != nil {
			v.BinaryValue = a.BinaryValue
		} else {
			v.StringValue = aws.String(a.StringValue)
		}
		out[name] = v
	}
	return out
}

// systemAttributes maps a trace header to the AWSTraceHeader system attribute.
func systemAttributes(traceHeader string) map[string]types.MessageSystemAttributeValue {
	if traceHeader == "" {
		return nil
	}
	return map[string]types.MessageSystemAttributeValue{
		string(types.MessageSystemAttributeNameForSendsAWSTraceHeader): {DataType: aws.String("String"), StringValue: aws.String(traceHeader)},
	}
}

var (
	_ fifoq.Sender      = (*Source)(nil)
	_ fifoq.QueueClient = (*Source)(nil)
)

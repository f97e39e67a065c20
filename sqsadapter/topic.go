package sqsadapter

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/topic"
)

// A Topic is a [topic.Publisher] over an Amazon SNS topic, or any SNS endpoint, through aws-sdk-go-v2's SNS
// client: code that publishes to a *topic.Topic in a test publishes to SNS unchanged. It is safe for
// concurrent use.
type Topic struct {
	client *sns.Client
	arn    string
	name   string
	fifo   bool
}

// NewTopic returns the Topic of the SNS topic whose ARN is topicARN, through client. It makes no request: a
// topic that does not exist fails the first publish with topic.ErrNotFound. Its name is the ARN's last
// part, and it is FIFO when that ends in ".fifo", as SNS's FIFO topics' names do.
func NewTopic(client *sns.Client, topicARN string) *Topic {
	name := topicARN[strings.LastIndexByte(topicARN, ':')+1:]
	return &Topic{client: client, arn: topicARN, name: name, fifo: strings.HasSuffix(name, ".fifo")}
}

// OpenTopic returns the Topic that topicName names, through client: its ARN, as NewTopic takes it, or its
// name, which OpenTopic finds among the topics of the client's account and region with ListTopics calls
// (SNS has no call that turns a name into an ARN). A name no topic has returns topic.ErrNotFound.
func OpenTopic(ctx context.Context, client *sns.Client, topicName string) (*Topic, error) {
	if strings.HasPrefix(topicName, "arn:") {
		return NewTopic(client, topicName), nil
	}
	pages := sns.NewListTopicsPaginator(client, &sns.ListTopicsInput{})
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return nil, mapSNSError(err)
		}
		for _, t := range out.Topics {
			if arn := aws.ToString(t.TopicArn); strings.HasSuffix(arn, ":"+topicName) {
				return NewTopic(client, arn), nil
			}
		}
	}
	return nil, fmt.Errorf("sqsadapter: topic %q: %w", topicName, topic.ErrNotFound)
}

// Name returns the topic's name, the last part of its ARN.
func (t *Topic) Name() string { return t.name }

// ARN returns the topic's ARN.
func (t *Topic) ARN() string { return t.arn }

// FIFO reports whether the topic is a FIFO topic.
func (t *Topic) FIFO() bool { return t.fifo }

// Publish publishes m with one Publish call, after checking it with fifoq's own rules
// ([topic.CheckMessage]), so that a message a *topic.Topic refuses is refused the same way here, with the
// same sentinel, before any request. Every field maps: Message, Subject, MessageStructure, GroupID and
// DeduplicationID to SNS's parameters, the attributes with their data types, and TraceHeader to the
// X-Amzn-Trace-Id header, which SNS passes to SQS as AWSTraceHeader. opts are ignored: they shape the
// envelopes fifoq writes, and SNS writes and signs its own. The result has the MessageID and, on a FIFO
// topic, the SequenceNumber; Duplicate is always false: SNS does not say that it took a publish for a
// duplicate.
func (t *Topic) Publish(ctx context.Context, m topic.Message, _ ...topic.PublishOption) (topic.PublishResult, error) {
	if err := topic.CheckMessage(m, t.fifo); err != nil {
		return topic.PublishResult{}, err
	}
	out, err := t.client.Publish(ctx, &sns.PublishInput{
		TopicArn:               aws.String(t.arn),
		Message:                aws.String(m.Message),
		Subject:                optional(m.Subject),
		MessageStructure:       optional(m.MessageStructure),
		MessageGroupId:         optional(m.GroupID),
		MessageDeduplicationId: optional(m.DeduplicationID),
		MessageAttributes:      snsAttributes(m.Attributes),
	}, traceHeader(m.TraceHeader)...)
	if err != nil {
		return topic.PublishResult{}, mapSNSError(err)
	}
	return topic.PublishResult{MessageID: aws.ToString(out.MessageId), SequenceNumber: aws.ToString(out.SequenceNumber)}, nil
}

// PublishBatch publishes 1..10 messages, in order, each mapped as by Publish, after checking them with
// fifoq's rules ([topic.CheckBatch]): a batch a *topic.Topic refuses as a whole is refused the same way,
// with no request. SNS takes one trace header for a whole PublishBatch call, so the messages go in one call
// per run of consecutive messages with the same TraceHeader (one call when they share it, the usual case),
// in order. Entries SNS reports failed come back in a *fifoq.BatchError, in entry order, each a
// *smithy.GenericAPIError with SNS's code and message, matched to topic's sentinels as Publish's errors are;
// when a call fails as a whole after earlier calls of the batch succeeded, its entries and those after it
// are the failed entries, with its error. opts are ignored, as by Publish.
func (t *Topic) PublishBatch(ctx context.Context, ms []topic.Message, _ ...topic.PublishOption) ([]topic.PublishResult, error) {
	if err := topic.CheckBatch(ms, t.fifo); err != nil {
		return nil, err
	}
	results := make([]topic.PublishResult, len(ms))
	var failed []fifoq.EntryError
	for start := 0; start < len(ms); {
		end := start + 1
		for end < len(ms) && ms[end].TraceHeader == ms[start].TraceHeader {
			end++
		}
		entries, err := t.publishRun(ctx, ms, start, end, results)
		if err != nil {
			if start == 0 {
				return nil, err
			}
			for i := start; i < len(ms); i++ {
				failed = append(failed, fifoq.EntryError{Index: i, Err: err})
			}
			break
		}
		failed = append(failed, entries...)
		start = end
	}
	if len(failed) > 0 {
		slices.SortFunc(failed, func(a, b fifoq.EntryError) int { return a.Index - b.Index })
		return results, &fifoq.BatchError{Entries: failed}
	}
	return results, nil
}

// publishRun publishes ms[start:end], which share a trace header, with one PublishBatch call, and fills
// their results. It returns the entries SNS reported failed, or the error of the whole call.
func (t *Topic) publishRun(ctx context.Context, ms []topic.Message, start, end int, results []topic.PublishResult) ([]fifoq.EntryError, error) {
	entries := make([]snstypes.PublishBatchRequestEntry, 0, end-start)
	for i := start; i < end; i++ {
		m := ms[i]
		entries = append(entries, snstypes.PublishBatchRequestEntry{
			Id:                     aws.String(strconv.Itoa(i)),
			Message:                aws.String(m.Message),
			Subject:                optional(m.Subject),
			MessageStructure:       optional(m.MessageStructure),
			MessageGroupId:         optional(m.GroupID),
			MessageDeduplicationId: optional(m.DeduplicationID),
			MessageAttributes:      snsAttributes(m.Attributes),
		})
	}
	out, err := t.client.PublishBatch(ctx, &sns.PublishBatchInput{TopicArn: aws.String(t.arn), PublishBatchRequestEntries: entries},
		traceHeader(ms[start].TraceHeader)...)
	if err != nil {
		return nil, mapSNSError(err)
	}
	entryIndex := func(id string) (int, error) {
		i, err := strconv.Atoi(id)
		if err != nil || i < start || i >= end || strconv.Itoa(i) != id {
			return 0, fmt.Errorf("sqsadapter: SNS reported an entry with id %q, not one of the request's", id)
		}
		return i, nil
	}
	for _, ok := range out.Successful {
		i, err := entryIndex(aws.ToString(ok.Id))
		if err != nil {
			return nil, err
		}
		results[i] = topic.PublishResult{MessageID: aws.ToString(ok.MessageId), SequenceNumber: aws.ToString(ok.SequenceNumber)}
	}
	var failed []fifoq.EntryError
	for _, f := range out.Failed {
		i, err := entryIndex(aws.ToString(f.Id))
		if err != nil {
			return nil, err
		}
		fault := smithy.FaultServer
		if f.SenderFault {
			fault = smithy.FaultClient
		}
		failed = append(failed, fifoq.EntryError{Index: i,
			Err: mapSNSError(&smithy.GenericAPIError{Code: aws.ToString(f.Code), Message: aws.ToString(f.Message), Fault: fault})})
	}
	return failed, nil
}

// snsAttributes maps fifoq's message attributes to SNS's.
func snsAttributes(in map[string]fifoq.Attribute) map[string]snstypes.MessageAttributeValue {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]snstypes.MessageAttributeValue, len(in))
	for name, a := range in {
		v := snstypes.MessageAttributeValue{DataType: aws.String(a.DataType)}
		if a.BinaryValue != nil {
			v.BinaryValue = a.BinaryValue
		} else {
			v.StringValue = aws.String(a.StringValue)
		}
		out[name] = v
	}
	return out
}

// traceHeader returns the options that send h as a call's X-Amzn-Trace-Id header, which SNS's Publish and
// PublishBatch take (the SDK has no parameter for it); none for "".
func traceHeader(h string) []func(*sns.Options) {
	if h == "" {
		return nil
	}
	mw := middleware.BuildMiddlewareFunc("sqsadapter.TraceHeader", func(ctx context.Context,
		in middleware.BuildInput, next middleware.BuildHandler,
	) (middleware.BuildOutput, middleware.Metadata, error) {
		req, ok := in.Request.(*smithyhttp.Request)
		if !ok {
			return middleware.BuildOutput{}, middleware.Metadata{}, fmt.Errorf("sqsadapter: unexpected request type %T", in.Request)
		}
		req.Header.Set("X-Amzn-Trace-Id", h)
		return next.HandleBuild(ctx, in)
	})
	return []func(*sns.Options){func(o *sns.Options) {
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error { return st.Build.Add(mw, middleware.After) })
	}}
}

var _ topic.Publisher = (*Topic)(nil)

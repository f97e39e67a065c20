package lambdaevents_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/lambdaevents"
)

// TestMD5Vectors checks spec 1.4.6 against the values AWS recorded (LocalStack snapshots).
func TestMD5Vectors(t *testing.T) {
	require.Equal(t, "3858f62230ac3c915f300c664312c63f", lambdaevents.MD5OfBody("foobar"))
	require.Equal(t, "adb59cd4678ea5a855436b949cd07ab6", lambdaevents.MD5OfMessageAttributes(map[string]fifoq.Attribute{
		"MyAttribute": {DataType: "String", StringValue: "foobar"},
	}))
	// Order does not depend on map order, and Binary uses transport type 2: a change of either changes the sum.
	a := map[string]fifoq.Attribute{
		"b": {DataType: "Binary.png", BinaryValue: []byte{1, 2}},
		"a": {DataType: "Number.int", StringValue: "7"},
	}
	first := lambdaevents.MD5OfMessageAttributes(a)
	for range 20 {
		require.Equal(t, first, lambdaevents.MD5OfMessageAttributes(a))
	}
	require.NotEqual(t, first, lambdaevents.MD5OfMessageAttributes(map[string]fifoq.Attribute{
		"b": {DataType: "String.png", StringValue: "\x01\x02"},
		"a": {DataType: "Number.int", StringValue: "7"},
	}))
}

// call runs one batch of q through the wrapped handler and returns the event it was given and the error it
// returned.
func call(t *testing.T, q *fifoq.Queue, opts ...lambdaevents.Option) (events.SQSEvent, []fifoq.Delivery) {
	t.Helper()
	ds, err := q.Receive(t.Context(), fifoq.ReceiveOptions{MaxMessages: 10})
	require.NoError(t, err)
	var got events.SQSEvent
	h := lambdaevents.Handler(func(_ context.Context, e events.SQSEvent) (events.SQSEventResponse, error) {
		got = e
		return events.SQSEventResponse{}, nil
	}, opts...)
	require.NoError(t, h(t.Context(), ds))
	return got, ds
}

// TestEventRecordsFIFO checks spec 9.2.1: each record carries what Lambda sends, FIFO attributes included.
func TestEventRecordsFIFO(t *testing.T) {
	clk := fifoq.NewManualClock(time.UnixMilli(1_700_000_000_123))
	q, err := fifoq.New("orders.fifo", fifoq.WithClock(clk))
	require.NoError(t, err)
	_, err = q.Send(t.Context(), fifoq.Message{Body: "hello", GroupID: "g1", DeduplicationID: "d1",
		Attributes: map[string]fifoq.Attribute{
			"s": {DataType: "String", StringValue: "v"},
			"b": {DataType: "Binary", BinaryValue: []byte{9}},
		}})
	require.NoError(t, err)
	clk.Advance(5 * time.Second)
	e, ds := call(t, q, lambdaevents.WithRegion("eu-west-1"), lambdaevents.WithAccountID("123456789012"),
		lambdaevents.WithQueueName("orders.fifo"))
	require.Len(t, e.Records, 1)
	r, d := e.Records[0], ds[0]
	require.Equal(t, d.MessageID, r.MessageId)
	require.Equal(t, d.ReceiptHandle, r.ReceiptHandle)
	require.Equal(t, "hello", r.Body)
	require.Equal(t, lambdaevents.MD5OfBody("hello"), r.Md5OfBody)
	require.Equal(t, lambdaevents.MD5OfMessageAttributes(d.Attributes), r.Md5OfMessageAttributes)
	require.Equal(t, "aws:sqs", r.EventSource)
	require.Equal(t, "arn:aws:sqs:eu-west-1:123456789012:orders.fifo", r.EventSourceARN)
	require.Equal(t, "eu-west-1", r.AWSRegion)
	require.Equal(t, map[string]string{
		"ApproximateReceiveCount":          "1",
		"SentTimestamp":                    "1700000000123",
		"SenderId":                         "123456789012",
		"ApproximateFirstReceiveTimestamp": strconv.FormatInt(1_700_000_005_123, 10),
		"SequenceNumber":                   d.SequenceNumber,
		"MessageGroupId":                   "g1",
		"MessageDeduplicationId":           "d1",
	}, r.Attributes)
	require.Equal(t, "String", r.MessageAttributes["s"].DataType)
	require.Equal(t, "v", *r.MessageAttributes["s"].StringValue)
	require.Nil(t, r.MessageAttributes["b"].StringValue)
	require.Equal(t, []byte{9}, r.MessageAttributes["b"].BinaryValue)
}

// TestEventRecordsStandardDeadLetter checks that a standard queue's records carry no FIFO attributes, and a
// dead-letter queue's carry DeadLetterQueueSourceArn.
func TestEventRecordsStandardDeadLetter(t *testing.T) {
	clk := fifoq.NewManualClock(time.Unix(0, 0))
	dlq, err := fifoq.New("dlq", fifoq.WithClock(clk))
	require.NoError(t, err)
	src, err := fifoq.New("src", fifoq.WithClock(clk), fifoq.WithVisibilityTimeout(0), fifoq.WithDeadLetterQueue(dlq, 1))
	require.NoError(t, err)
	_, err = src.Send(t.Context(), fifoq.Message{Body: "poison"})
	require.NoError(t, err)
	e, _ := call(t, src)
	require.NotContains(t, e.Records[0].Attributes, "SequenceNumber")
	require.NotContains(t, e.Records[0].Attributes, "MessageGroupId")
	require.NotContains(t, e.Records[0].Attributes, "DeadLetterQueueSourceArn")
	require.Empty(t, e.Records[0].Md5OfMessageAttributes, "no attributes, no digest")
	ds, err := src.Receive(t.Context(), fifoq.ReceiveOptions{})
	require.NoError(t, err)
	require.Empty(t, ds, "the second receive moved it to the dead-letter queue")
	e, _ = call(t, dlq, lambdaevents.WithQueueName("dlq"))
	require.Equal(t, "arn:aws:sqs:us-east-1:000000000000:src", e.Records[0].Attributes["DeadLetterQueueSourceArn"])
	require.Equal(t, "2", e.Records[0].Attributes["ApproximateReceiveCount"])
}

// TestResponses checks spec 9.3: the handler's response on a Consumer with ReportBatchItemFailures. Item
// failures fail what they name (and on FIFO the rest of the group); an empty or unknown identifier, or an
// error, fails the whole batch; no failures deletes it.
func TestResponses(t *testing.T) {
	for _, tc := range []struct {
		name     string
		respond  func(e events.SQSEvent) (events.SQSEventResponse, error)
		wantLeft []string // bodies left in the queue, in order
	}{
		{"success", func(events.SQSEvent) (events.SQSEventResponse, error) { return events.SQSEventResponse{}, nil }, nil},
		{"item failure fails the rest of its group", func(e events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: e.Records[1].MessageId}}}, nil
		}, []string{"m2", "m3"}},
		{"empty identifier fails all", func(events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: ""}}}, nil
		}, []string{"m1", "m2", "m3"}},
		{"unknown identifier fails all", func(events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: "nope"}}}, nil
		}, []string{"m1", "m2", "m3"}},
		{"error fails all", func(events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{}, errors.New("boom")
		}, []string{"m1", "m2", "m3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q, err := fifoq.New("jobs.fifo", fifoq.WithContentBasedDeduplication(), fifoq.WithVisibilityTimeout(time.Minute))
				require.NoError(t, err)
				for _, b := range []string{"m1", "m2", "m3"} {
					_, err := q.Send(t.Context(), fifoq.Message{Body: b, GroupID: "g"})
					require.NoError(t, err)
				}
				ctx, cancel := context.WithCancel(t.Context())
				var once sync.Once
				c, err := fifoq.NewConsumer(q, lambdaevents.Handler(func(_ context.Context, e events.SQSEvent) (events.SQSEventResponse, error) {
					return tc.respond(e)
				}), fifoq.ConsumerOptions{
					MaxConcurrency:          1,
					ReportBatchItemFailures: true,
					OnBatch:                 func(fifoq.BatchReport) { once.Do(cancel) },
				})
				require.NoError(t, err)
				require.NoError(t, c.Run(ctx))
				var left []string
				for s := range q.Messages() {
					left = append(left, s.Body)
				}
				require.Equal(t, tc.wantLeft, left)
			})
		})
	}
}

package lambdaevents

import (
	"context"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/sqsmd5"
)

// config is what the records say about where they come from.
type config struct {
	ns              catalog.Namespace // the queue's account and region
	queue, senderID string
}

// defaultNamespace is the account and region of the records unless options say otherwise: fifoq serve's.
var defaultNamespace = catalog.Namespace{Account: "000000000000", Region: "us-east-1"}

// An Option sets what the records say about their source.
type Option func(*config)

// WithRegion sets the records' awsRegion and the region of their ARNs; the default is "us-east-1".
func WithRegion(r string) Option { return func(c *config) { c.ns.Region = r } }

// WithAccountID sets the account of the records' ARNs; the default is "000000000000".
func WithAccountID(id string) Option { return func(c *config) { c.ns.Account = id } }

// WithQueueName sets the queue named by the records' eventSourceARN; the default is "fifoq".
func WithQueueName(name string) Option { return func(c *config) { c.queue = name } }

// WithSenderID sets the records' SenderId attribute; the default is the account id.
func WithSenderID(id string) Option { return func(c *config) { c.senderID = id } }

// Handler returns a fifoq.Handler that calls h with each batch as an events.SQSEvent. The item failures of
// h's response come back as a *fifoq.BatchItemFailures, which the Consumer honours with
// ReportBatchItemFailures (and then validates as Lambda does: an identifier that is not in the batch, or an
// empty one, fails the whole batch); an error from h fails the whole batch.
func Handler(h func(context.Context, events.SQSEvent) (events.SQSEventResponse, error), opts ...Option) fifoq.Handler {
	c := config{ns: defaultNamespace, queue: "fifoq"}
	for _, o := range opts {
		o(&c)
	}
	if c.senderID == "" {
		c.senderID = c.ns.Account
	}
	return func(ctx context.Context, batch []fifoq.Delivery) error {
		resp, err := h(ctx, c.event(batch))
		if err != nil {
			return err
		}
		if len(resp.BatchItemFailures) == 0 {
			return nil
		}
		f := &fifoq.BatchItemFailures{MessageIDs: make([]string, len(resp.BatchItemFailures))}
		for i, item := range resp.BatchItemFailures {
			f.MessageIDs[i] = item.ItemIdentifier
		}
		return f
	}
}

func (c *config) arn(queue string) string {
	return c.ns.QueueARN(queue)
}

// event is the SQSEvent Lambda would send for batch (spec 9.2.1), as its JSON decodes: messageAttributes is
// an empty map when the message has none, and each attribute's stringListValues and binaryListValues are
// empty lists, never nil.
func (c *config) event(batch []fifoq.Delivery) events.SQSEvent {
	e := events.SQSEvent{Records: make([]events.SQSMessage, len(batch))}
	for i, d := range batch {
		r := events.SQSMessage{
			MessageId:         d.MessageID,
			ReceiptHandle:     d.ReceiptHandle,
			Body:              d.Body,
			Md5OfBody:         MD5OfBody(d.Body),
			EventSource:       "aws:sqs",
			EventSourceARN:    c.arn(c.queue),
			AWSRegion:         c.ns.Region,
			MessageAttributes: make(map[string]events.SQSMessageAttribute, len(d.Attributes)),
			Attributes: map[string]string{
				"ApproximateReceiveCount":          strconv.Itoa(d.ReceiveCount),
				"SentTimestamp":                    millis(d.SentAt),
				"SenderId":                         c.senderID,
				"ApproximateFirstReceiveTimestamp": millis(d.FirstReceivedAt),
			},
		}
		if d.SequenceNumber != "" { // FIFO
			r.Attributes["SequenceNumber"] = d.SequenceNumber
			r.Attributes["MessageGroupId"] = d.GroupID
			r.Attributes["MessageDeduplicationId"] = d.DeduplicationID
		}
		if d.DeadLetterSource != "" {
			r.Attributes["DeadLetterQueueSourceArn"] = c.arn(d.DeadLetterSource)
		}
		if len(d.Attributes) > 0 {
			r.Md5OfMessageAttributes = MD5OfMessageAttributes(d.Attributes)
			for name, a := range d.Attributes {
				ma := events.SQSMessageAttribute{DataType: a.DataType, BinaryValue: a.BinaryValue,
					StringListValues: []string{}, BinaryListValues: [][]byte{}}
				if !sqsmd5.IsBinary(a.DataType) {
					s := a.StringValue
					ma.StringValue = &s
				}
				r.MessageAttributes[name] = ma
			}
		}
		e.Records[i] = r
	}
	return e
}

// millis is a time as SQS gives it in message attributes: epoch milliseconds as a decimal string.
func millis(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

// MD5OfBody is the hex MD5 of a message body, as SQS returns it in MD5OfMessageBody (spec 1.4.6).
func MD5OfBody(body string) string { return sqsmd5.Body(body) }

// MD5OfMessageAttributes is the hex MD5 SQS returns in MD5OfMessageAttributes (spec 1.4.6): over the
// attributes sorted by name, each as its name, its data type (both with a 4-byte big-endian length), a
// transport byte (1 for String and Number, 2 for Binary) and its value (with a 4-byte length).
func MD5OfMessageAttributes(attrs map[string]fifoq.Attribute) string { return sqsmd5.Attributes(attrs) }

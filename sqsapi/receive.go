package sqsapi

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/internal/rule"
	"github.com/fifoq/fifoq/sqsmd5"
)

// ReceiveMessage.

type receiveMessageInput struct {
	QueueUrl                    []byte // needed only while the request is served
	AttributeNames              []string
	MessageSystemAttributeNames []string
	MessageAttributeNames       []string
	MaxNumberOfMessages         optInt
	VisibilityTimeout           optInt
	WaitTimeSeconds             optInt
	ReceiveRequestAttemptId     optString
}

func (in *receiveMessageInput) fromQuery(f *form) error {
	in.QueueUrl = []byte(f.get("QueueUrl"))
	// The SDKs send MessageSystemAttributeNames as AttributeName.N too; accept its own name as well.
	in.AttributeNames = f.list("AttributeName")
	in.MessageSystemAttributeNames = f.list("MessageSystemAttributeName")
	in.MessageAttributeNames = f.list("MessageAttributeName")
	var err *apiError
	if in.MaxNumberOfMessages, err = f.optIntValue("MaxNumberOfMessages"); err != nil {
		return err
	}
	if in.VisibilityTimeout, err = f.optIntValue("VisibilityTimeout"); err != nil {
		return err
	}
	if in.WaitTimeSeconds, err = f.optIntValue("WaitTimeSeconds"); err != nil {
		return err
	}
	in.ReceiveRequestAttemptId = f.optString("ReceiveRequestAttemptId")
	return nil
}

// The message system attributes a receive can ask for, as bits.
const (
	sysSenderID uint16 = 1 << iota
	sysSentTimestamp
	sysReceiveCount
	sysFirstReceive
	sysSequenceNumber
	sysDeduplicationID
	sysGroupID
	sysTraceHeader
	sysDeadLetterSource
	sysAll = 1<<iota - 1
)

var systemAttributeBits = map[string]uint16{
	"All":                              sysAll,
	"SenderId":                         sysSenderID,
	"SentTimestamp":                    sysSentTimestamp,
	"ApproximateReceiveCount":          sysReceiveCount,
	"ApproximateFirstReceiveTimestamp": sysFirstReceive,
	"SequenceNumber":                   sysSequenceNumber,
	"MessageDeduplicationId":           sysDeduplicationID,
	"MessageGroupId":                   sysGroupID,
	"AWSTraceHeader":                   sysTraceHeader,
	"DeadLetterQueueSourceArn":         sysDeadLetterSource,
}

// options converts the receive's parameters, which fifoq checks as it receives. It checks here only what
// fifoq.ReceiveOptions cannot carry: a MaxNumberOfMessages of 0 (which fifoq reads as 1) and an attempt id
// given empty (which fifoq reads as none).
func (in *receiveMessageInput) options(fifo bool) (fifoq.ReceiveOptions, *apiError) {
	var o fifoq.ReceiveOptions
	if n := in.MaxNumberOfMessages; n.set {
		if n.v == 0 {
			return o, coreError(rule.CheckMaxMessages(n.v))
		}
		o.MaxMessages = n.v
	}
	// A 0 given is a zero, where fifoq reads a zero duration as the queue's setting.
	if w := in.WaitTimeSeconds; w.set {
		o.WaitTime, o.NoWaitTime = secondsOf(w.v), w.v == 0
	}
	if v := in.VisibilityTimeout; v.set {
		o.VisibilityTimeout, o.NoVisibilityTimeout = secondsOf(v.v), v.v == 0
	}
	if a := in.ReceiveRequestAttemptId; a.set && fifo {
		if a.v == "" {
			return o, coreError(rule.ID("", fifoq.ErrInvalidAttemptID))
		}
		o.AttemptID = a.v
	}
	return o, nil
}

// secondsOf converts a number of seconds given on the wire to a duration. A number beyond a duration's
// range, which no rule accepts, becomes the largest number of seconds a duration holds, of its sign.
func secondsOf(n int) time.Duration {
	const limit = math.MaxInt64 / int64(time.Second)
	return time.Duration(max(-limit, min(int64(n), limit))) * time.Second
}

func receiveMessage(s *Server, c *call, in *receiveMessageInput) (output, error) {
	q, err := s.resolveBytes(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	o, aerr := in.options(q.FIFO())
	if aerr != nil {
		return nil, aerr
	}
	ds, err := s.receive(c, q, o)
	if err != nil {
		if isContextErr(err) && c.ctx.Err() != nil {
			c.canceled = true
			return &c.hot.received, nil // empty; the caller is gone or the server is closing: nothing was received
		}
		return nil, coreError(err)
	}
	out := &c.hot.received
	*out = receiveOutput{s: s, deliveries: ds, fifo: q.FIFO()}
	for _, name := range in.AttributeNames {
		out.system |= systemAttributeBits[name]
	}
	for _, name := range in.MessageSystemAttributeNames {
		out.system |= systemAttributeBits[name]
	}
	out.names = in.MessageAttributeNames
	return out, nil
}

// receive runs a receive on q. A long poll ends early, with no messages and no error, when the server begins
// to shut down (BeginShutdown); once it has, a receive does not wait. fifoq takes no message for a receive
// whose context ended while it waited (a message that woke it goes to the next waiter), so ending the wait
// this way loses nothing. Every receive but an explicit short poll is registered as a long poll: whether it
// waits, and how long, fifoq decides (by the queue's receive wait time when the request gives none).
func (s *Server) receive(c *call, q catalog.Queue, o fifoq.ReceiveOptions) ([]fifoq.Delivery, error) {
	if o.NoWaitTime { // WaitTimeSeconds=0: a short poll
		return q.Receive(c.ctx, o)
	}
	ctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	if !s.addPoll(c, cancel) {
		o.WaitTime, o.NoWaitTime = 0, true // shutting down: no waiting
		return q.Receive(c.ctx, o)
	}
	ds, err := q.Receive(ctx, o)
	if !s.removePoll(c) && err != nil && isContextErr(err) && c.ctx.Err() == nil {
		return nil, nil // BeginShutdown ended the wait, as a wait that runs out ends
	}
	return ds, err
}

// addPoll registers the long poll of c, whose wait cancel ends, unless the server is shutting down; it
// reports whether it did.
func (s *Server) addPoll(c *call, cancel context.CancelFunc) bool {
	s.pollsMu.Lock()
	defer s.pollsMu.Unlock()
	if s.shutdown {
		return false
	}
	s.polls[c] = cancel
	return true
}

// removePoll forgets the long poll of c; it reports false when BeginShutdown ended it first.
func (s *Server) removePoll(c *call) bool {
	s.pollsMu.Lock()
	defer s.pollsMu.Unlock()
	_, ok := s.polls[c]
	delete(s.polls, c)
	return ok
}

// receiveOutput is the result of ReceiveMessage. The messages are encoded straight from the deliveries.
type receiveOutput struct {
	s          *Server
	deliveries []fifoq.Delivery
	fifo       bool
	system     uint16   // the system attributes asked for
	names      []string // the message attributes asked for: names, "All", ".*" or "prefix.*"
}

func (o *receiveOutput) encode(e encoder) {
	if qe, ok := e.(*queryJSONEncoder); ok {
		o.encodeQueryJSON(qe)
		return
	}
	if len(o.deliveries) == 0 {
		return
	}
	e.beginList("Messages", "Message")
	for i := range o.deliveries {
		e.beginItem()
		o.encodeMessage(e, &o.deliveries[i])
		e.endItem()
	}
	e.endList()
}

func (o *receiveOutput) encodeMessage(e encoder, d *fifoq.Delivery) {
	e.str("MessageId", d.MessageID)
	e.str("ReceiptHandle", d.ReceiptHandle)
	e.md5Body("MD5OfBody", d.Body)
	e.str("Body", d.Body)
	if o.system != 0 {
		o.encodeSystem(e, d)
	}
	attrs := o.selectAttributes(d.Attributes)
	if len(attrs) == 0 {
		return
	}
	e.md5Attributes("MD5OfMessageAttributes", attrs)
	encodeMessageAttributes(e, attrs)
}

// encodeQueryJSON writes ReceiveMessage's result as AWS answers a query request that asks for JSON, as
// recorded: the list is "messages" (aws-samples/serverless-patterns, APIGateway-SQS-ReceiveMessages, 2024),
// null when empty; each message has its members in alphabetical order, null when absent (Attributes,
// MD5OfMessageAttributes, MessageAttributes), and its system attributes as an object (JustSaying's capture of
// AWS's answer, 2019). No answer on record shows message attributes: they are written as
// GetQueueAttributes' map is, a list of Name/Value entries.
func (o *receiveOutput) encodeQueryJSON(e *queryJSONEncoder) {
	if len(o.deliveries) == 0 {
		e.null("messages")
		return
	}
	e.key("messages")
	e.open('[')
	for i := range o.deliveries {
		d := &o.deliveries[i]
		e.beginItem()
		if o.system != 0 {
			o.encodeSystem(&e.jsonEncoder, d) // a JSON object
		} else {
			e.null("Attributes")
		}
		e.str("Body", d.Body)
		e.md5Body("MD5OfBody", d.Body)
		if attrs := o.selectAttributes(d.Attributes); len(attrs) > 0 {
			e.md5Attributes("MD5OfMessageAttributes", attrs)
			encodeMessageAttributes(e, attrs)
		} else {
			e.null("MD5OfMessageAttributes")
			e.null("MessageAttributes")
		}
		e.str("MessageId", d.MessageID)
		e.str("ReceiptHandle", d.ReceiptHandle)
		e.endItem()
	}
	e.close(']')
}

// encodeMessageAttributes writes a message's MessageAttributes.
func encodeMessageAttributes(e encoder, attrs map[string]fifoq.Attribute) {
	e.beginMap("MessageAttributes", "MessageAttribute", "Name", "Value")
	for name, a := range attrs {
		e.beginMapItem(name)
		if sqsmd5.IsBinary(a.DataType) {
			e.blob("BinaryValue", a.BinaryValue)
		} else {
			e.str("StringValue", a.StringValue)
		}
		e.str("DataType", a.DataType)
		e.endMapItem()
	}
	e.endMap()
}

func (o *receiveOutput) encodeSystem(e encoder, d *fifoq.Delivery) {
	want := func(bit uint16) bool { return o.system&bit != 0 }
	e.beginMap("Attributes", "Attribute", "Name", "Value")
	if want(sysSenderID) {
		e.mapStr("SenderId", o.s.account)
	}
	if want(sysSentTimestamp) {
		e.mapStr("SentTimestamp", itoa(d.SentAt.UnixMilli()))
	}
	if want(sysReceiveCount) {
		e.mapStr("ApproximateReceiveCount", itoa(int64(d.ReceiveCount)))
	}
	if want(sysFirstReceive) && !d.FirstReceivedAt.IsZero() {
		e.mapStr("ApproximateFirstReceiveTimestamp", itoa(d.FirstReceivedAt.UnixMilli()))
	}
	if want(sysSequenceNumber) && d.SequenceNumber != "" {
		e.mapStr("SequenceNumber", d.SequenceNumber)
	}
	if want(sysDeduplicationID) && d.DeduplicationID != "" && o.fifo {
		e.mapStr("MessageDeduplicationId", d.DeduplicationID)
	}
	if want(sysTraceHeader) && d.TraceHeader != "" {
		e.mapStr("AWSTraceHeader", d.TraceHeader)
	}
	if want(sysGroupID) && d.GroupID != "" {
		e.mapStr("MessageGroupId", d.GroupID)
	}
	if want(sysDeadLetterSource) && d.DeadLetterSource != "" {
		e.mapStr("DeadLetterQueueSourceArn", o.s.arnOfName(d.DeadLetterSource))
	}
	e.endMap()
}

// selectAttributes returns the message attributes the receive asked for, as SQS selects them: "All", ".*"
// and "*" select every attribute; "prefix.*" those whose name starts with prefix ("Hel.*" selects Hello and
// Help.Me); any other string the attribute of that exact name. A name no attribute has, even one no
// attribute could have (such as "AWS."), selects nothing and is no error. MD5OfMessageAttributes is the
// digest of the selection.
func (o *receiveOutput) selectAttributes(attrs map[string]fifoq.Attribute) map[string]fifoq.Attribute {
	if len(attrs) == 0 || len(o.names) == 0 {
		return nil
	}
	for _, n := range o.names {
		if n == "All" || n == ".*" || n == "*" {
			return attrs
		}
	}
	var out map[string]fifoq.Attribute
	for name, a := range attrs {
		if selected(name, o.names) {
			if out == nil {
				out = make(map[string]fifoq.Attribute, len(attrs))
			}
			out[name] = a
		}
	}
	return out
}

// selected reports whether one of the filters of a receive selects the attribute name.
func selected(name string, filters []string) bool {
	for _, f := range filters {
		if prefix, ok := strings.CutSuffix(f, ".*"); ok && strings.HasPrefix(name, prefix) || name == f {
			return true
		}
	}
	return false
}

package sqsapi

import (
	"strconv"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/internal/rule"
	"github.com/fifoq/fifoq/sqsmd5"
)

// SendMessage and SendMessageBatch.

// sendEntry is a message to send: the input of SendMessage, or one entry of SendMessageBatch. Message
// attributes (MessageAttributeValue, MessageSystemAttributeValue) are decoded straight into fifoq.Attribute
// values: a missing StringValue reads as "", which the checks reject alike, and the list values, reserved by
// SQS, are ignored. The map of MessageAttributes becomes the message's own, so it is built once here (fifoq
// copies it once more as it stores the message).
type sendEntry struct {
	Id                      string // batch only
	MessageBody             string
	DelaySeconds            optInt
	MessageAttributes       map[string]fifoq.Attribute
	MessageSystemAttributes map[string]fifoq.Attribute
	MessageDeduplicationId  optString
	MessageGroupId          optString

	// attributesGiven is how many message attributes a query-protocol form gave when it gave more than the
	// 11 it decodes (see form.attributes); 0 otherwise.
	attributesGiven int
}

// fromQuery reads the entry's parameters, each named prefix + member.
func (e *sendEntry) fromQuery(f *form, prefix string) error {
	e.Id = f.get(prefix + "Id")
	e.MessageBody = f.get(prefix + "MessageBody")
	var err *apiError
	if e.DelaySeconds, err = f.optIntValue(prefix + "DelaySeconds"); err != nil {
		return err
	}
	if e.MessageAttributes, e.attributesGiven, err = f.attributes(prefix + "MessageAttribute"); err != nil {
		return err
	}
	if e.MessageSystemAttributes, _, err = f.attributes(prefix + "MessageSystemAttribute"); err != nil {
		return err
	}
	e.MessageDeduplicationId = f.optString(prefix + "MessageDeduplicationId")
	e.MessageGroupId = f.optString(prefix + "MessageGroupId")
	return nil
}

// message converts the entry to a fifoq.Message, which fifoq checks as it sends it. It checks here only
// what a fifoq.Message cannot carry: an id given empty (which fifoq reads as none), more attributes than
// the query protocol reads, and the system attributes, which it returns.
func (e *sendEntry) message(fifo bool) (fifoq.Message, systemAttrs, *apiError) {
	m := fifoq.Message{Body: e.MessageBody, Attributes: e.MessageAttributes}
	if d := e.DelaySeconds; d.set {
		m.Delay, m.NoDelay = secondsOf(d.v), d.v == 0 // a 0 given is no delay, whatever the queue's
	}
	if g := e.MessageGroupId; g.set {
		if g.v == "" {
			return m, systemAttrs{}, coreError(rule.ID("", fifoq.ErrInvalidGroupID))
		}
		m.GroupID = g.v
	}
	if d := e.MessageDeduplicationId; d.set {
		if d.v == "" && fifo {
			return m, systemAttrs{}, coreError(rule.ID("", fifoq.ErrInvalidDeduplicationID))
		}
		m.DeduplicationID = d.v
	}
	if e.attributesGiven > 0 {
		return m, systemAttrs{}, coreError(rule.CheckAttributeCount(e.attributesGiven))
	}
	sys, err := systemAttributes(e.MessageSystemAttributes)
	if err != nil {
		return m, systemAttrs{}, err
	}
	return m, sys, nil
}

// systemAttrs are the message system attributes of a send: AWSTraceHeader, the only one SQS takes.
type systemAttrs struct {
	traceHeader string
	md5         string // MD5OfMessageSystemAttributes
}

// systemAttributes checks the message system attributes of a send: AWSTraceHeader alone, a String of 1 to
// rule.MaxTraceHeaderLength bytes. They do not count toward the message's size (spec 7.1.2).
func systemAttributes(in map[string]fifoq.Attribute) (systemAttrs, *apiError) {
	if len(in) == 0 {
		return systemAttrs{}, nil
	}
	for name, a := range in {
		if name != "AWSTraceHeader" {
			return systemAttrs{}, newError(codeInvalidParameterValue, "Message system attribute name '%s' is invalid.", name)
		}
		if a.DataType != "String" || a.StringValue == "" {
			return systemAttrs{}, newError(codeInvalidParameterValue, "Message system attribute '%s' must contain a non-empty value of type 'String'.", name)
		}
		if err := rule.CheckTraceHeader(a.StringValue); err != nil {
			return systemAttrs{}, coreError(err)
		}
	}
	// in holds AWSTraceHeader alone, of type String: its digest covers the StringValue only.
	return systemAttrs{traceHeader: in["AWSTraceHeader"].StringValue, md5: sqsmd5.Attributes(in)}, nil
}

// sendResult is the result of one sent message. The digests of the body and attributes are written
// straight into the response as it is encoded.
type sendResult struct {
	id, messageID, sequenceNumber string
	body                          string
	attrs                         map[string]fifoq.Attribute
	md5System                     string
}

func (r *sendResult) encode(e encoder) {
	if qe, ok := e.(*queryJSONEncoder); ok && r.id == "" {
		r.encodeQueryJSON(qe)
		return
	}
	if r.id != "" {
		e.str("Id", r.id)
	}
	e.str("MessageId", r.messageID)
	e.md5Body("MD5OfMessageBody", r.body)
	if len(r.attrs) > 0 {
		e.md5Attributes("MD5OfMessageAttributes", r.attrs)
	}
	if r.md5System != "" {
		e.str("MD5OfMessageSystemAttributes", r.md5System)
	}
	if r.sequenceNumber != "" {
		e.str("SequenceNumber", r.sequenceNumber)
	}
}

// encodeQueryJSON writes SendMessage's result as AWS answers a query request that asks for JSON, as
// recorded (aws-samples/serverless-patterns, an API Gateway to SQS SendMessage pattern): every member in
// alphabetical order, null when it has no value.
func (r *sendResult) encodeQueryJSON(e *queryJSONEncoder) {
	if len(r.attrs) > 0 {
		e.md5Attributes("MD5OfMessageAttributes", r.attrs)
	} else {
		e.null("MD5OfMessageAttributes")
	}
	e.md5Body("MD5OfMessageBody", r.body)
	e.strOrNull("MD5OfMessageSystemAttributes", r.md5System)
	e.str("MessageId", r.messageID)
	e.strOrNull("SequenceNumber", r.sequenceNumber)
}

// sent returns the result of a send.
func sent(id string, m *fifoq.Message, r fifoq.SendResult, sys systemAttrs) sendResult {
	return sendResult{id: id, messageID: r.MessageID, sequenceNumber: r.SequenceNumber, body: m.Body,
		attrs: m.Attributes, md5System: sys.md5}
}

type sendMessageInput struct {
	QueueUrl []byte // needed only while the request is served
	sendEntry
}

func (in *sendMessageInput) fromQuery(f *form) error {
	in.QueueUrl = []byte(f.get("QueueUrl"))
	return in.sendEntry.fromQuery(f, "")
}

func sendMessage(s *Server, c *call, in *sendMessageInput) (output, error) {
	q, err := s.resolveBytes(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	m, sys, aerr := in.message(q.FIFO())
	if aerr != nil {
		return nil, aerr
	}
	sys = headerTrace(c.r, sys)
	m.TraceHeader = sys.traceHeader
	r, err := q.Send(c.ctx, m)
	if err != nil {
		return nil, coreError(err)
	}
	out := &c.hot.sent
	*out = sent("", &m, r, sys)
	return out, nil
}

type sendMessageBatchInput struct {
	QueueUrl []byte // needed only while the request is served
	Entries  []sendEntry

	entriesGiven int // entries a query-protocol form gave, of which it decodes 11 at most; 0 from JSON
}

func (in *sendMessageBatchInput) fromQuery(f *form) error {
	in.QueueUrl = []byte(f.get("QueueUrl"))
	const prefix = "SendMessageBatchRequestEntry"
	ns, given := f.indices(prefix, fifoq.MaxBatchEntries+1)
	in.entriesGiven = given
	for _, n := range ns {
		var e sendEntry
		if err := e.fromQuery(f, prefix+"."+strconv.Itoa(n)+"."); err != nil {
			return err
		}
		in.Entries = append(in.Entries, e)
	}
	return nil
}

func sendMessageBatch(s *Server, c *call, in *sendMessageBatchInput) (output, error) {
	q, err := s.resolveBytes(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if err := checkBatch(in.entriesGiven, in.Entries); err != nil {
		return nil, err
	}

	out := &c.hot.sentBatch
	fifo := q.FIFO()
	var (
		msgBuf    [fifoq.MaxBatchEntries]fifoq.Message
		indexBuf  [fifoq.MaxBatchEntries]int // msgs[k] is entry index[k]
		systemBuf [fifoq.MaxBatchEntries]systemAttrs
	)
	msgs, index := msgBuf[:0], indexBuf[:0]
	for i := range in.Entries {
		m, sys, err := in.Entries[i].message(fifo)
		if err != nil {
			out.failed = append(out.failed, failedEntry{i, in.Entries[i].Id, err})
			continue
		}
		sys = headerTrace(c.r, sys)
		m.TraceHeader = sys.traceHeader
		systemBuf[len(msgs)] = sys
		msgs, index = append(msgs, m), append(index, i)
	}
	if len(msgs) > 0 || len(in.Entries) == 0 { // fifoq refuses an empty batch
		results, err := q.SendBatch(c.ctx, msgs)
		var entryErrs [fifoq.MaxBatchEntries]error
		if err := sortEntryErrors(err, len(msgs), &entryErrs); err != nil {
			return nil, coreError(err)
		}
		if cap(out.ok) < len(msgs) {
			out.ok = make([]sendResult, 0, max(len(msgs), fifoq.MaxBatchEntries))
		}
		for k := range msgs {
			i := index[k]
			if entryErrs[k] != nil {
				out.failed = append(out.failed, failedEntry{i, in.Entries[i].Id, coreError(entryErrs[k])})
				continue
			}
			out.ok = append(out.ok, sent(in.Entries[i].Id, &msgs[k], results[k], systemBuf[k]))
		}
	}
	sortFailed(out.failed)
	return out, nil
}

// sendBatchOutput is the result of SendMessageBatch.
type sendBatchOutput struct {
	ok     []sendResult
	failed []failedEntry
}

func (o *sendBatchOutput) encode(e encoder) {
	e.beginList("Successful", "SendMessageBatchResultEntry")
	for i := range o.ok {
		e.beginItem()
		o.ok[i].encode(e)
		e.endItem()
	}
	e.endList()
	encodeFailed(e, o.failed)
}

package sqsapi

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/internal/sqsmd5"
)

// SendMessage and SendMessageBatch.

// attrValue is a message attribute on the wire (MessageAttributeValue, MessageSystemAttributeValue). The
// list values are reserved by SQS and ignored.
type attrValue struct {
	DataType    string
	StringValue *string
	BinaryValue []byte // base64 in JSON, decoded by encoding/json
}

// sendEntry is a message to send: the input of SendMessage, or one entry of SendMessageBatch.
type sendEntry struct {
	Id                      string // batch only
	MessageBody             string
	DelaySeconds            *int
	MessageAttributes       map[string]attrValue
	MessageSystemAttributes map[string]attrValue
	MessageDeduplicationId  *string
	MessageGroupId          *string
}

// fromQuery reads the entry's parameters, each named prefix + member.
func (e *sendEntry) fromQuery(f form, prefix string) error {
	e.Id = f.get(prefix + "Id")
	e.MessageBody = f.get(prefix + "MessageBody")
	var err *apiError
	if e.DelaySeconds, err = f.optInt(prefix + "DelaySeconds"); err != nil {
		return err
	}
	if e.MessageAttributes, err = f.attributes(prefix + "MessageAttribute"); err != nil {
		return err
	}
	if e.MessageSystemAttributes, err = f.attributes(prefix + "MessageSystemAttribute"); err != nil {
		return err
	}
	e.MessageDeduplicationId = f.optString(prefix + "MessageDeduplicationId")
	e.MessageGroupId = f.optString(prefix + "MessageGroupId")
	return nil
}

// maxAttributes is the most message attributes a message has (spec 7.1.3).
const maxAttributes = 10

// message converts the entry to a fifoq.Message, with the checks whose SQS texts need the wire values. It
// also returns the system attributes, which the message cannot carry.
func (e *sendEntry) message(fifo bool) (fifoq.Message, systemAttrs, *apiError) {
	m := fifoq.Message{Body: e.MessageBody}
	if d := e.DelaySeconds; d != nil {
		switch {
		case *d < 0 || *d > 900:
			return m, systemAttrs{}, invalidValue(*d, "DelaySeconds", "DelaySeconds must be >= 0 and <= 900.")
		case *d == 0:
			m.Delay = fifoq.ExplicitZero
		default:
			m.Delay = time.Duration(*d) * time.Second
		}
	}
	if g := e.MessageGroupId; g != nil {
		if *g == "" {
			return m, systemAttrs{}, invalidValue("", "MessageGroupId", "MessageGroupId can only include alphanumeric and "+
				"punctuation characters. 1 to 128 in length.")
		}
		m.GroupID = *g
	}
	if d := e.MessageDeduplicationId; d != nil {
		if *d == "" && fifo {
			return m, systemAttrs{}, invalidValue("", "MessageDeduplicationId", "MessageDeduplicationId can only include "+
				"alphanumeric and punctuation characters. 1 to 128 in length.")
		}
		m.DeduplicationID = *d
	}
	attrs, err := userAttributes(e.MessageAttributes)
	if err != nil {
		return m, systemAttrs{}, err
	}
	m.Attributes = attrs
	sys, err := systemAttributes(e.MessageSystemAttributes)
	if err != nil {
		return m, systemAttrs{}, err
	}
	return m, sys, nil
}

// userAttributes converts message attributes, with SQS's texts for the mistakes it names (the fifoq queue
// checks the rest).
func userAttributes(in map[string]attrValue) (map[string]fifoq.Attribute, *apiError) {
	if len(in) == 0 {
		return nil, nil
	}
	if len(in) > maxAttributes {
		return nil, newError(codeInvalidParameterValue, "Number of message attributes [%d] exceeds the allowed maximum [%d].",
			len(in), maxAttributes)
	}
	out := make(map[string]fifoq.Attribute, len(in))
	for name, a := range in {
		base, _, _ := strings.Cut(a.DataType, ".")
		switch base {
		case "":
			return nil, newError(codeInvalidParameterValue, "The message attribute '%s' must contain non-empty message attribute type.", name)
		case "String", "Number":
			if a.StringValue == nil || *a.StringValue == "" {
				return nil, newError(codeInvalidParameterValue, "Message (user) attribute '%s' must contain a non-empty value of type '%s'.", name, base)
			}
		case "Binary":
			if len(a.BinaryValue) == 0 {
				return nil, newError(codeInvalidParameterValue, "Message (user) attribute '%s' must contain a non-empty value of type 'Binary'.", name)
			}
		default:
			return nil, newError(codeInvalidParameterValue, "The type of message (user) attribute '%s' is invalid. You must use "+
				"only the following supported type prefixes: Binary, Number, String.", name)
		}
		v := fifoq.Attribute{DataType: a.DataType, BinaryValue: a.BinaryValue}
		if a.StringValue != nil {
			v.StringValue = *a.StringValue
		}
		out[name] = v
	}
	return out, nil
}

// systemAttrs are the message system attributes of a send: AWSTraceHeader, the only one SQS takes.
type systemAttrs struct {
	traceHeader string
	md5         string // MD5OfMessageSystemAttributes
}

// systemAttributes checks the message system attributes of a send.
func systemAttributes(in map[string]attrValue) (systemAttrs, *apiError) {
	if len(in) == 0 {
		return systemAttrs{}, nil
	}
	attrs := make(map[string]fifoq.Attribute, len(in))
	for name, a := range in {
		if name != "AWSTraceHeader" {
			return systemAttrs{}, newError(codeInvalidParameterValue, "Message system attribute name '%s' is invalid.", name)
		}
		if a.DataType != "String" || a.StringValue == nil || *a.StringValue == "" {
			return systemAttrs{}, newError(codeInvalidParameterValue, "Message system attribute '%s' must contain a non-empty value of type 'String'.", name)
		}
		attrs[name] = fifoq.Attribute{DataType: a.DataType, StringValue: *a.StringValue}
	}
	return systemAttrs{traceHeader: attrs["AWSTraceHeader"].StringValue, md5: sqsmd5.Attributes(attrs)}, nil
}

// entrySize is what an entry adds to the size of a SendMessageBatch (spec 7.2.2): body and attributes.
func entrySize(e *sendEntry) int {
	n := len(e.MessageBody)
	for name, a := range e.MessageAttributes {
		n += len(name) + len(a.DataType) + len(a.BinaryValue)
		if a.StringValue != nil {
			n += len(*a.StringValue)
		}
	}
	return n
}

// sendResult is the result of one sent message.
type sendResult struct {
	id, messageID, sequenceNumber string
	md5Body, md5Attrs, md5System  string
}

func (r *sendResult) encode(e encoder) {
	if r.id != "" {
		e.str("Id", r.id)
	}
	e.str("MessageId", r.messageID)
	e.str("MD5OfMessageBody", r.md5Body)
	if r.md5Attrs != "" {
		e.str("MD5OfMessageAttributes", r.md5Attrs)
	}
	if r.md5System != "" {
		e.str("MD5OfMessageSystemAttributes", r.md5System)
	}
	if r.sequenceNumber != "" {
		e.str("SequenceNumber", r.sequenceNumber)
	}
}

// sent records what the server keeps of a sent message beside the queue, and returns the send's result.
func (s *Server) sent(id string, m *fifoq.Message, r fifoq.SendResult, sys systemAttrs) sendResult {
	if sys.traceHeader != "" && !r.Duplicate {
		s.traces.put(r.MessageID, sys.traceHeader, s.now())
	}
	out := sendResult{id: id, messageID: r.MessageID, sequenceNumber: r.SequenceNumber, md5System: sys.md5}
	out.md5Body = sqsmd5.Body(m.Body)
	if len(m.Attributes) > 0 {
		out.md5Attrs = sqsmd5.Attributes(m.Attributes)
	}
	return out
}

type sendMessageInput struct {
	QueueUrl string
	sendEntry
}

func (in *sendMessageInput) fromQuery(f form) error {
	in.QueueUrl = f.get("QueueUrl")
	return in.sendEntry.fromQuery(f, "")
}

func sendMessage(s *Server, c *call, in *sendMessageInput) (output, error) {
	qs, err := s.resolve(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	m, sys, aerr := in.message(qs.q.FIFO())
	if aerr != nil {
		return nil, aerr
	}
	r, err := qs.q.Send(c.ctx, m)
	if err != nil {
		return nil, coreError(err, errCtx{queue: qs.q, message: &m})
	}
	out := s.sent("", &m, r, sys)
	return &out, nil
}

type sendMessageBatchInput struct {
	QueueUrl string
	Entries  []sendEntry
}

func (in *sendMessageBatchInput) fromQuery(f form) error {
	in.QueueUrl = f.get("QueueUrl")
	const prefix = "SendMessageBatchRequestEntry"
	for _, n := range f.indices(prefix) {
		var e sendEntry
		if err := e.fromQuery(f, prefix+"."+strconv.Itoa(n)+"."); err != nil {
			return err
		}
		in.Entries = append(in.Entries, e)
	}
	return nil
}

// maxBatchBytes is the most a SendMessageBatch may carry (spec 7.2.2).
const maxBatchBytes = 1 << 20

func sendMessageBatch(s *Server, c *call, in *sendMessageBatchInput) (output, error) {
	qs, err := s.resolve(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(in.Entries))
	size := 0
	for i := range in.Entries {
		ids[i] = in.Entries[i].Id
		size += entrySize(&in.Entries[i])
	}
	if err := checkBatch(ids, "SendMessageBatchRequestEntry"); err != nil {
		return nil, err
	}
	if size > maxBatchBytes {
		return nil, newError(codeBatchTooLong, "Batch requests cannot be longer than %d bytes. You have sent %d bytes.", maxBatchBytes, size)
	}

	out := &sendBatchOutput{}
	fifo := qs.q.FIFO()
	msgs := make([]fifoq.Message, 0, len(in.Entries))
	index := make([]int, 0, len(in.Entries)) // msgs[k] is entry index[k]
	system := make([]systemAttrs, 0, len(in.Entries))
	for i := range in.Entries {
		m, sys, err := in.Entries[i].message(fifo)
		if err != nil {
			out.failed = append(out.failed, failedEntry{i, ids[i], err})
			continue
		}
		msgs, index, system = append(msgs, m), append(index, i), append(system, sys)
	}
	if len(msgs) > 0 {
		results, err := qs.q.SendBatch(c.ctx, msgs)
		entryErrs := make([]error, len(msgs))
		var be *fifoq.BatchError
		switch {
		case errors.As(err, &be):
			for _, x := range be.Entries {
				entryErrs[x.Index] = x.Err
			}
		case err != nil:
			return nil, coreError(err, errCtx{queue: qs.q, batch: true})
		}
		for k, m := range msgs {
			i := index[k]
			if entryErrs[k] != nil {
				out.failed = append(out.failed, failedEntry{i, ids[i], coreError(entryErrs[k], errCtx{queue: qs.q, message: &msgs[k], batch: true})})
				continue
			}
			out.ok = append(out.ok, s.sent(ids[i], &m, results[k], system[k]))
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

package sqsapi

import (
	"strconv"
	"strings"
	"time"

	"github.com/fifoq/fifoq"
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

// maxAttributes is the most message attributes a message has (spec 7.1.3).
const maxAttributes = 10

// message converts the entry to a fifoq.Message, with the checks whose SQS texts need the wire values. It
// also returns the system attributes, which the message cannot carry.
func (e *sendEntry) message(fifo bool) (fifoq.Message, systemAttrs, *apiError) {
	m := fifoq.Message{Body: e.MessageBody}
	if d := e.DelaySeconds; d.set {
		switch {
		case d.v < 0 || d.v > maxDelaySeconds:
			return m, systemAttrs{}, invalidValue(d.v, "DelaySeconds", "DelaySeconds must be >= 0 and <= "+strconv.Itoa(maxDelaySeconds)+".")
		case d.v == 0:
			m.Delay = fifoq.ExplicitZero
		default:
			m.Delay = time.Duration(d.v) * time.Second
		}
	}
	if g := e.MessageGroupId; g.set {
		if g.v == "" {
			return m, systemAttrs{}, invalidValue("", "MessageGroupId", "MessageGroupId can only include alphanumeric and "+
				"punctuation characters. 1 to 128 in length.")
		}
		m.GroupID = g.v
	}
	if d := e.MessageDeduplicationId; d.set {
		if d.v == "" && fifo {
			return m, systemAttrs{}, invalidValue("", "MessageDeduplicationId", "MessageDeduplicationId can only include "+
				"alphanumeric and punctuation characters. 1 to 128 in length.")
		}
		m.DeduplicationID = d.v
	}
	if err := checkUserAttributes(e.MessageAttributes, max(e.attributesGiven, len(e.MessageAttributes))); err != nil {
		return m, systemAttrs{}, err
	}
	m.Attributes = e.MessageAttributes
	sys, err := systemAttributes(e.MessageSystemAttributes)
	if err != nil {
		return m, systemAttrs{}, err
	}
	return m, sys, nil
}

// checkUserAttributes checks message attributes, n of them, with SQS's texts for the mistakes it names (the
// fifoq queue checks the rest).
func checkUserAttributes(in map[string]fifoq.Attribute, n int) *apiError {
	if n > maxAttributes {
		return newError(codeInvalidParameterValue, "Number of message attributes [%d] exceeds the allowed maximum [%d].",
			n, maxAttributes)
	}
	for name, a := range in {
		base, _, _ := strings.Cut(a.DataType, ".")
		switch base {
		case "":
			return newError(codeInvalidParameterValue, "The message attribute '%s' must contain non-empty message attribute type.", name)
		case "String", "Number":
			if a.StringValue == "" {
				return newError(codeInvalidParameterValue, "Message (user) attribute '%s' must contain a non-empty value of type '%s'.", name, base)
			}
		case "Binary":
			if len(a.BinaryValue) == 0 {
				return newError(codeInvalidParameterValue, "Message (user) attribute '%s' must contain a non-empty value of type 'Binary'.", name)
			}
		default:
			return newError(codeInvalidParameterValue, "The type of message (user) attribute '%s' is invalid. You must use "+
				"only the following supported type prefixes: Binary, Number, String.", name)
		}
	}
	return nil
}

// systemAttrs are the message system attributes of a send: AWSTraceHeader, the only one SQS takes.
type systemAttrs struct {
	traceHeader string
	md5         string // MD5OfMessageSystemAttributes
}

// systemAttributes checks the message system attributes of a send: AWSTraceHeader alone, a String of 1 to
// maxTraceHeaderLen bytes. They do not count toward the message's size (spec 7.1.2).
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
		if len(a.StringValue) > maxTraceHeaderLen {
			return systemAttrs{}, newError(codeInvalidParameterValue, "Message system attribute '%s' must be at most %d bytes long.", name, maxTraceHeaderLen)
		}
	}
	// in holds AWSTraceHeader alone, of type String: its digest covers the StringValue only.
	return systemAttrs{traceHeader: in["AWSTraceHeader"].StringValue, md5: sqsmd5.Attributes(in)}, nil
}

// entrySize is what an entry adds to the size of a SendMessageBatch (spec 7.2.2): body and attributes, as
// fifoq measures a batch. sqsapi checks the sum itself because the entries it rejects before fifoq sees
// them (a bad DelaySeconds, an empty attribute value, ...) count too: the request fails whole, with the size
// of every entry in its message.
func entrySize(e *sendEntry) int {
	n := len(e.MessageBody)
	for name, a := range e.MessageAttributes {
		n += len(name) + len(a.DataType) + len(a.StringValue) + len(a.BinaryValue)
	}
	return n
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

// sent records what the server keeps of a sent message beside the queue (in j, on a durable server), and
// returns the send's result.
func (s *Server) sent(j *journal, id string, m *fifoq.Message, r fifoq.SendResult, sys systemAttrs) sendResult {
	if sys.traceHeader != "" && !r.Duplicate {
		s.putTrace(j, r.MessageID, sys.traceHeader, s.now())
	}
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
	qs, err := s.resolveBytes(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	m, sys, aerr := in.message(qs.q.FIFO())
	if aerr != nil {
		return nil, aerr
	}
	sys = headerTrace(c.r, sys)
	r, err := qs.q.Send(c.ctx, m)
	if err != nil {
		failed := m // a copy, so that m stays on the stack
		return nil, coreError(err, errCtx{queue: qs.q, message: &failed})
	}
	out := &c.hot.sent
	var j journal
	*out = s.sent(&j, "", &m, r, sys)
	if err := s.wait(&j); err != nil {
		return nil, err
	}
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
	ns, given := f.indices(prefix, maxBatchEntries+1)
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

// maxBatchBytes is the most a SendMessageBatch may carry (spec 7.2.2).
const maxBatchBytes = 1 << 20

func sendMessageBatch(s *Server, c *call, in *sendMessageBatchInput) (output, error) {
	qs, err := s.resolveBytes(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	size := 0
	for i := range in.Entries {
		size += entrySize(&in.Entries[i])
	}
	if err := checkBatch(in.entriesGiven, in.Entries, "SendMessageBatchRequestEntry"); err != nil {
		return nil, err
	}
	if size > maxBatchBytes {
		return nil, newError(codeBatchTooLong, "Batch requests cannot be longer than %d bytes. You have sent %d bytes.", maxBatchBytes, size)
	}

	out := &c.hot.sentBatch
	fifo := qs.q.FIFO()
	var (
		msgBuf    [maxBatchEntries]fifoq.Message
		indexBuf  [maxBatchEntries]int // msgs[k] is entry index[k]
		systemBuf [maxBatchEntries]systemAttrs
	)
	msgs, index := msgBuf[:0], indexBuf[:0]
	for i := range in.Entries {
		m, sys, err := in.Entries[i].message(fifo)
		if err != nil {
			out.failed = append(out.failed, failedEntry{i, in.Entries[i].Id, err})
			continue
		}
		systemBuf[len(msgs)] = headerTrace(c.r, sys)
		msgs, index = append(msgs, m), append(index, i)
	}
	var j journal
	if len(msgs) > 0 {
		results, err := qs.q.SendBatch(c.ctx, msgs)
		var entryErrs [maxBatchEntries]error
		if err := sortEntryErrors(err, len(msgs), &entryErrs); err != nil {
			return nil, coreError(err, errCtx{queue: qs.q, batch: true})
		}
		if cap(out.ok) < len(msgs) {
			out.ok = make([]sendResult, 0, max(len(msgs), maxBatchEntries))
		}
		for k := range msgs {
			i := index[k]
			if entryErrs[k] != nil {
				m := msgs[k] // a copy, so that msgBuf stays on the stack
				out.failed = append(out.failed, failedEntry{i, in.Entries[i].Id, coreError(entryErrs[k], errCtx{queue: qs.q, message: &m, batch: true})})
				continue
			}
			out.ok = append(out.ok, s.sent(&j, in.Entries[i].Id, &msgs[k], results[k], systemBuf[k]))
		}
	}
	if err := s.wait(&j); err != nil {
		return nil, err
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

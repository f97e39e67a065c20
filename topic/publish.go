package topic

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/internal/rule"
)

// A Message is what a publisher publishes to a [Topic]: the parameters of SNS's Publish.
type Message struct {
	// Message is the message, 1 character or more of UTF-8: the body a queue receives, raw or in the
	// envelope's Message.
	Message string
	// Subject is the envelope's Subject; "" for none. Raw delivery drops it.
	Subject string
	// MessageStructure is "" or "json". With "json", Message is a JSON object of strings, one per
	// protocol: a queue receives its "sqs" entry, or its "default" entry, which it must have.
	MessageStructure string
	// GroupID (MessageGroupId) is required on FIFO topics, whose messages of one group reach a queue in
	// publish order. A FIFO topic passes it on to its FIFO queues only; a standard topic passes it on to its
	// queues, all standard (SQS fair queues), where it has no effect on order.
	GroupID string
	// DeduplicationID (MessageDeduplicationId) makes a FIFO topic drop a second message with the same id
	// for 5 minutes. FIFO only; required unless the topic has content-based deduplication, where a message
	// without one is deduplicated by the SHA-256 of Message. A FIFO queue receives it as its
	// deduplication id.
	DeduplicationID string
	// Attributes are the message attributes: DataType "String", "String.Array" (a JSON array of strings,
	// numbers, true, false and null, as a string), "Number" or "Binary", each optionally with a custom
	// ".suffix". They count toward the message size.
	Attributes map[string]fifoq.Attribute
	// TraceHeader is an AWS X-Ray trace header (the X-Amzn-Trace-Id header of SNS's Publish), at most
	// 1024 bytes; "" for none. Every queue receives it as its AWSTraceHeader system attribute
	// ([fifoq.Message.TraceHeader]). It does not count toward the message size.
	TraceHeader string
}

// A Publisher publishes messages to a topic: a *[Topic], a catalogue's topic (package catalog), or the
// topic of the sqsadapter module, which publishes to Amazon SNS. Code written against it runs on each
// unchanged. Options shape the envelopes fifoq writes; a Publisher over SNS, which writes its own, ignores
// them.
type Publisher interface {
	// FIFO reports whether the topic is a FIFO topic.
	FIFO() bool
	// Publish publishes one message, as [Topic.Publish].
	Publish(ctx context.Context, m Message, opts ...PublishOption) (PublishResult, error)
	// PublishBatch publishes 1..10 messages, as [Topic.PublishBatch].
	PublishBatch(ctx context.Context, ms []Message, opts ...PublishOption) ([]PublishResult, error)
}

var _ Publisher = (*Topic)(nil)

// PublishResult is what a publish tells the publisher.
type PublishResult struct {
	MessageID      string // the message's id (MessageId), which its envelopes carry
	SequenceNumber string // FIFO only: 20 decimal digits, increasing
	Duplicate      bool   // FIFO: accepted but dropped as a duplicate; MessageID is the original's
}

// The limits of a published message.
const (
	maxTopicMessageSize = 256 << 10 // message and attributes; also a whole PublishBatch
	maxSubjectLength    = 99        // characters: "less than 100"
	maxTopicAttrName    = 256
	maxTopicAttrType    = 256
)

// checkSubject returns ErrInvalidSubject unless subject is a valid Subject: 1..99 characters of UTF-8 text,
// without line breaks or control characters, that starts with a letter, number or punctuation mark.
// Publish reads an empty Subject as none, so it never rejects one; a front end whose protocol tells an empty
// subject given from none calls checkSubject for the subject it was given.
func checkSubject(subject string) error {
	if subject == "" {
		return rule.Reject(ErrInvalidSubject, "empty subject")
	}
	if !utf8.ValidString(subject) {
		return rule.Reject(ErrInvalidSubject, "subject is not UTF-8")
	}
	if n := utf8.RuneCountInString(subject); n > maxSubjectLength {
		return rule.Reject(ErrInvalidSubject, "subject has %d characters, want 1..%d", n, maxSubjectLength)
	}
	first, _ := utf8.DecodeRuneInString(subject)
	if !unicode.IsLetter(first) && !unicode.IsNumber(first) && !unicode.IsPunct(first) && !unicode.IsSymbol(first) {
		return rule.Reject(ErrInvalidSubject, "subject starts with %q, want a letter, number or punctuation mark", first)
	}
	for _, r := range subject {
		if unicode.IsControl(r) {
			return rule.Reject(ErrInvalidSubject, "subject has the control character %q", r)
		}
	}
	return nil
}

// A publication is a message accepted for publishing: checked, its caller's data copied.
type publication struct {
	msg     Message // attributes copied
	content string  // what a queue receives: Message, or its "sqs" or "default" entry
	size    int
	dedupID string // FIFO: the explicit id or the content's SHA-256

	messageID, seq, timestamp string
	out                       publishConfig // the endpoint and signer of its envelopes

	// env is its envelope but for the UnsubscribeURL, which alone differs between subscriptions and is not
	// signed: built, and signed, by the first subscription that delivers an envelope, for the others to
	// copy. envErr is the signer's error then (the envelope is unsigned).
	env    *Envelope
	envErr error
}

// prepare checks m as SNS's Publish does and returns it ready to publish; contentDedup is the topic's setting.
func (t *Topic) prepare(m *Message, contentDedup bool) (*publication, error) {
	content, size, err := messageRules{fifo: t.fifo, name: t.name, contentDedup: contentDedup}.check(m)
	if err != nil {
		return nil, err
	}
	p := &publication{msg: *m, content: content, size: size}
	if t.fifo {
		p.dedupID = m.DeduplicationID
		if p.dedupID == "" {
			sum := sha256.Sum256([]byte(m.Message))
			p.dedupID = hex.EncodeToString(sum[:])
		}
	}
	return p, nil
}

// messageRules are the rules of a topic's messages: its type, its name (for the errors' texts) and whether
// it deduplicates by content. A Topic checks with its own; [CheckMessage] with those of any topic of a type.
type messageRules struct {
	fifo         bool
	name         string
	contentDedup bool
}

// CheckMessage returns the error [Topic.Publish] of m returns on a topic of the type fifo says before it
// looks at the topic's own settings: an empty or bad message, subject, message structure, attribute, group
// or deduplication id or trace header, a message over 256 KiB, a FIFO message without a group id; nil
// otherwise. It publishes nothing. The SNS adapter (module sqsadapter) checks each message with it before the
// network, so that a message fifoq refuses fails the same way against Amazon SNS; a FIFO message without a
// deduplication id is left to the topic, which takes it when it deduplicates by content.
func CheckMessage(m Message, fifo bool) error {
	_, _, err := messageRules{fifo: fifo, contentDedup: true}.check(&m)
	return err
}

// CheckBatch is [CheckMessage] for the messages of a [Topic.PublishBatch]: it returns the error that fails
// the whole call, as PublishBatch does (no entries or more than 10, more than 256 KiB in all, or the first
// entry that fails a check, wrapped with its index), or nil.
func CheckBatch(ms []Message, fifo bool) error {
	if err := checkBatchShape(ms); err != nil {
		return err
	}
	r := messageRules{fifo: fifo, contentDedup: true}
	for i := range ms {
		if _, _, err := r.check(&ms[i]); err != nil {
			return fmt.Errorf("entry %d: %w", i, err)
		}
	}
	return nil
}

// checkBatchShape checks what SNS checks of a PublishBatch as a whole: 1..10 entries, 256 KiB in all.
func checkBatchShape(ms []Message) error {
	if len(ms) == 0 {
		return rule.Reject(ErrEmptyBatch, "no entries")
	}
	if len(ms) > fifoq.MaxBatchEntries {
		return rule.Reject(ErrTooManyEntries, "%d entries, at most %d", len(ms), fifoq.MaxBatchEntries)
	}
	total := 0
	for i := range ms {
		total += topicMessageSize(&ms[i])
	}
	if total > maxTopicMessageSize {
		return rule.Reject(ErrBatchTooLong, "%d bytes, at most %d", total, maxTopicMessageSize)
	}
	return nil
}

// check checks m as SNS's Publish does, in SNS's order (its message structure before its FIFO ids), and
// returns what a queue receives of it and its size.
func (r messageRules) check(m *Message) (content string, size int, err error) {
	if m.Subject != "" {
		if err := checkSubject(m.Subject); err != nil {
			return "", 0, err
		}
	}
	if m.Message == "" {
		return "", 0, rule.Reject(ErrEmptyMessage, "empty message")
	}
	if !utf8.ValidString(m.Message) {
		return "", 0, rule.InvalidParameter(ErrInvalidMessage, "Message", "message is not UTF-8")
	}
	names := make([]string, 0, len(m.Attributes))
	for name := range m.Attributes {
		names = append(names, name)
	}
	slices.Sort(names) // the first bad attribute, deterministically
	for _, name := range names {
		if err := checkTopicAttribute(name, m.Attributes[name]); err != nil {
			return "", 0, err
		}
	}
	size = topicMessageSize(m)
	if size > maxTopicMessageSize {
		return "", 0, rule.Reject(ErrMessageTooLarge, "%d bytes, at most %d", size, maxTopicMessageSize)
	}
	content, err = structuredContent(m)
	if err != nil {
		return "", 0, err
	}
	if err := r.checkIDs(m); err != nil {
		return "", 0, err
	}
	if len(m.TraceHeader) > rule.MaxTraceHeaderLength {
		return "", 0, rule.InvalidParameter(ErrInvalidMessage, "X-Amzn-Trace-Id", "trace header of %d bytes, want at most %d",
			len(m.TraceHeader), rule.MaxTraceHeaderLength)
	}
	return content, size, nil
}

// topicName names the topic in the texts of errors: "topic NAME", or "a topic" for the rules of any.
func (r messageRules) topicName() string {
	if r.name == "" {
		return "a topic"
	}
	return "topic " + r.name
}

// checkIDs checks the group and deduplication ids of m: FIFO topics need a group id, and a deduplication id
// unless they deduplicate by content; standard topics take no deduplication id.
func (r messageRules) checkIDs(m *Message) error {
	if err := r.requireFIFOIDs(m); err != nil {
		return err
	}
	if m.GroupID != "" && !rule.ValidID(m.GroupID) {
		return rule.InvalidParameter(ErrInvalidGroupID, "MessageGroupId Reason: MessageGroupId can only include "+
			"alphanumeric and punctuation characters. 1 to 128 in length.", "%q", m.GroupID)
	}
	if m.DeduplicationID == "" {
		return nil
	}
	if !r.fifo {
		return rule.InvalidParameter(ErrInvalidDeduplicationID, "MessageDeduplicationId Reason: The request includes "+
			"MessageDeduplicationId parameter that is not valid for this topic type", "standard %s", r.topicName())
	}
	if !rule.ValidID(m.DeduplicationID) {
		return rule.InvalidParameter(ErrInvalidDeduplicationID, "MessageDeduplicationId Reason: MessageDeduplicationId "+
			"can only include alphanumeric and punctuation characters. 1 to 128 in length.", "%q", m.DeduplicationID)
	}
	return nil
}

// requireFIFOIDs checks that a message to a FIFO topic has the ids it needs.
func (r messageRules) requireFIFOIDs(m *Message) error {
	switch {
	case !r.fifo:
		return nil
	case m.GroupID == "":
		return rule.Reject(ErrMissingGroupID, "FIFO %s", r.topicName())
	case m.DeduplicationID == "" && !r.contentDedup:
		return rule.Reject(ErrMissingDeduplicationID, "FIFO %s", r.topicName())
	}
	return nil
}

// topicMessageSize is the size SNS limits: the message, and each attribute's name, type and value.
func topicMessageSize(m *Message) int {
	n := len(m.Message)
	for name, a := range m.Attributes {
		n += len(name) + len(a.DataType) + len(a.StringValue) + len(a.BinaryValue)
	}
	return n
}

// structuredContent returns what a queue receives of m: Message, or with MessageStructure "json" its "sqs"
// entry, else its "default" one.
func structuredContent(m *Message) (string, error) {
	switch m.MessageStructure {
	case "":
		return m.Message, nil
	case "json":
	default:
		return "", rule.InvalidParameter(ErrInvalidMessage, "MessageStructure", "message structure %q, want json", m.MessageStructure)
	}
	var entries map[string]any
	if err := json.Unmarshal([]byte(m.Message), &entries); err != nil {
		return "", rule.InvalidParameter(ErrInvalidMessage, "Message Structure - JSON message body failed to parse",
			"message structure json: %v", err)
	}
	def, ok := entries["default"].(string)
	if !ok {
		return "", rule.InvalidParameter(ErrInvalidMessage, "Message Structure - No default entry in JSON message body",
			"message structure json without a default string")
	}
	if s, ok := entries["sqs"].(string); ok {
		return s, nil
	}
	return def, nil
}

// checkTopicAttribute checks one message attribute as SNS does.
func checkTopicAttribute(name string, a fifoq.Attribute) error {
	if err := checkTopicAttributeName(name); err != nil {
		return err
	}
	base, custom, hasCustom := strings.Cut(a.DataType, ".")
	if a.DataType == "" {
		return badTopicAttribute(fmt.Sprintf("The message attribute '%s' must contain non-empty message attribute type.", name),
			"attribute %q: no data type", name)
	}
	if base != "String" && base != "Number" && base != "Binary" || hasCustom && custom == "" ||
		len(a.DataType) > maxTopicAttrType || !rule.ValidChars(a.DataType) {
		return badTopicAttribute(fmt.Sprintf("The message attribute '%s' has an invalid message attribute type, the set "+
			"of supported type prefixes is Binary, Number, and String.", name), "attribute %q: data type %q", name, a.DataType)
	}
	field, empty := "String", a.StringValue == ""
	wrong := a.BinaryValue != nil
	if base == "Binary" {
		field, empty, wrong = "Binary", len(a.BinaryValue) == 0, a.StringValue != ""
	}
	if empty && wrong {
		return badTopicAttribute(fmt.Sprintf("The message attribute '%s' with type '%s' must use field '%s'.", name, a.DataType, field),
			"attribute %q of type %q has its value in the wrong field", name, a.DataType)
	}
	if empty {
		return badTopicAttribute(fmt.Sprintf("The message attribute '%s' must contain non-empty message attribute value "+
			"for message attribute type '%s'.", name, a.DataType), "attribute %q: empty value", name)
	}
	if base != "Binary" && !utf8.ValidString(a.StringValue) {
		return badTopicAttribute(fmt.Sprintf("The message attribute '%s' must contain a valid UTF-8 value.", name),
			"attribute %q: the value is not UTF-8", name)
	}
	if base == "Number" && !rule.ValidNumber(a.StringValue) {
		return badTopicAttribute(fmt.Sprintf("Could not cast message attribute '%s' value to number.", name),
			"attribute %q: %q is not a number", name, a.StringValue)
	}
	return nil
}

// checkTopicAttributeName checks a message attribute name: 1..256 characters of [A-Za-z0-9_.-], no leading,
// trailing or doubled period, no AWS. or Amazon. prefix.
func checkTopicAttributeName(name string) error {
	switch {
	case name == "":
		return badTopicAttribute("The message attribute name can not be empty.", "empty attribute name")
	case len(name) > maxTopicAttrName:
		return badTopicAttribute("Length of message attribute name must be less than 256 bytes.",
			"attribute name of %d bytes", len(name))
	case name[0] == '.':
		return badTopicAttribute("Invalid message attribute name starting with character '.' was found.",
			"attribute name %q starts with a period", name)
	case name[len(name)-1] == '.':
		return badTopicAttribute("Invalid message attribute name ending with character '.' was found.",
			"attribute name %q ends with a period", name)
	}
	for i, r := range name {
		if r < utf8.RuneSelf && (rule.IsWordChar(byte(r)) || r == '-' || r == '.') {
			if r == '.' && name[i-1] == '.' {
				return badTopicAttribute("Message attribute name can not have successive '.' character.",
					"attribute name %q has two periods in a row", name)
			}
			continue
		}
		return badTopicAttribute(fmt.Sprintf("Invalid non-alphanumeric character '#x%X' was found in the message "+
			"attribute name. Can only include alphanumeric characters, hyphens, underscores, or dots.", r),
			"attribute name %q has %q", name, r)
	}
	if rule.HasPrefixFold(name, "aws.") || rule.HasPrefixFold(name, "amazon.") {
		return badTopicAttribute("The message attribute name can not start with the reserved prefix AWS. or Amazon.",
			"attribute name %q has a reserved prefix", name)
	}
	return nil
}

// A PublishOption changes how one Publish or PublishBatch writes its envelopes.
type PublishOption func(*publishConfig)

// publishConfig holds what the options of a publish set; nil fields mean the topic's settings.
type publishConfig struct {
	endpoint *string
	signer   *Signer
}

// WithPublishEndpoint makes the envelopes of this publish name endpoint as their SNS service
// (UnsubscribeURL), in place of the topic's ([WithEndpoint]): a server sets the URL its client reached
// it at.
func WithPublishEndpoint(endpoint string) PublishOption {
	e := strings.TrimSuffix(endpoint, "/")
	return func(c *publishConfig) { c.endpoint = &e }
}

// WithPublishSigner makes this publish sign its envelopes with s, in place of the topic's signer
// ([WithSigner]); a nil s signs nothing.
func WithPublishSigner(s Signer) PublishOption { return func(c *publishConfig) { c.signer = &s } }

// newPublishConfig applies opts over t's settings.
func (t *Topic) newPublishConfig(opts []PublishOption) publishConfig {
	c := publishConfig{endpoint: &t.cfg.endpoint, signer: &t.cfg.signer}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// Publish publishes one message (Publish): it checks m as SNS does, then delivers it to each subscribed queue
// whose filter policy it matches, before it returns. A message SNS would refuse returns a sentinel error and
// is delivered nowhere. A delivery a queue refuses does not fail the call: the message goes to the
// subscription's dead-letter queue, if it has one, and counts in [Topic.Metrics]. On a FIFO topic a message
// whose deduplication id was accepted in the last 5 minutes is accepted but not delivered: the result has
// Duplicate set and the original's MessageID and SequenceNumber. Deliveries go on if ctx is cancelled once
// the message is accepted.
func (t *Topic) Publish(ctx context.Context, m Message, opts ...PublishOption) (PublishResult, error) {
	if err := ctx.Err(); err != nil {
		return PublishResult{}, err
	}
	p, err := t.prepare(&m, t.Attributes().ContentBasedDeduplication)
	if err != nil {
		return PublishResult{}, err
	}
	p.out = t.newPublishConfig(opts)
	dctx := context.WithoutCancel(ctx)
	var pending []delivery
	if t.fifo {
		t.order.Lock()
	}
	res, subs, err := t.accept(p)
	if err == nil && !res.Duplicate {
		pending = t.deliver(dctx, p, subs, nil)
	}
	if t.fifo {
		t.order.Unlock()
	}
	t.settle(dctx, pending)
	return res, err
}

// PublishBatch publishes 1..10 messages, in order (PublishBatch). The whole call fails, publishing nothing,
// when the batch has no entries (ErrEmptyBatch) or more than 10 (ErrTooManyEntries), when its
// messages and their attributes add up to more than 256 KiB (ErrBatchTooLong), or when an entry fails one
// of Publish's checks, as SNS fails the whole request: the error is the first failing entry's, in entry
// order, wrapped with its index. Entries reached after a concurrent [Topic.Delete] fail alone, with
// ErrNotFound: their results are zero and the returned *fifoq.BatchError names them, while the entries
// before them are published. Batch entries have no ids here: a front end maps each entry's Id to its
// position.
func (t *Topic) PublishBatch(ctx context.Context, ms []Message, opts ...PublishOption) ([]PublishResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkBatchShape(ms); err != nil {
		return nil, err
	}
	contentDedup := t.Attributes().ContentBasedDeduplication
	pubs := make([]*publication, len(ms))
	out := t.newPublishConfig(opts)
	for i := range ms {
		p, err := t.prepare(&ms[i], contentDedup)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		p.out = out
		pubs[i] = p
	}
	var failed []fifoq.EntryError
	results := make([]PublishResult, len(ms))
	dctx := context.WithoutCancel(ctx)
	var pending []delivery
	if t.fifo {
		t.order.Lock()
	}
	for i, p := range pubs {
		res, subs, err := t.accept(p)
		if err != nil { // the topic was deleted meanwhile: this entry and those after it fail
			failed = append(failed, fifoq.EntryError{Index: i, Err: err})
			continue
		}
		results[i] = res
		if !res.Duplicate {
			pending = t.deliver(dctx, p, subs, pending)
		}
	}
	if t.fifo {
		t.order.Unlock()
	}
	t.settle(dctx, pending)
	if failed != nil {
		return results, &fifoq.BatchError{Entries: failed}
	}
	return results, nil
}

// accept takes p in: on a FIFO topic it deduplicates and numbers it. It returns the result and the
// subscriptions to deliver to.
func (t *Topic) accept(p *publication) (PublishResult, []*Subscription, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.deleted {
		return PublishResult{}, nil, rule.Reject(ErrNotFound, "%s", t.name)
	}
	now := t.nowLocked()
	t.counters.published.Add(1)
	t.counters.publishedBytes.Add(uint64(p.size))
	if t.fifo {
		if seq, dup := t.dedup.Lookup(p.dedupID, now); dup {
			t.counters.duplicates.Add(1)
			return PublishResult{MessageID: t.fifoMessageID(seq), SequenceNumber: sequenceNumber(seq), Duplicate: true}, nil, nil
		}
		t.nextSeq++
		t.dedup.Add(p.dedupID, t.nextSeq, now)
		p.messageID, p.seq = t.fifoMessageID(t.nextSeq), sequenceNumber(t.nextSeq)
	} else {
		p.messageID = newUUID()
	}
	p.timestamp = t.epoch.Add(now).UTC().Format(snsTimestamp)
	return PublishResult{MessageID: p.messageID, SequenceNumber: p.seq}, t.subs, nil
}

// snsTimestamp is the layout of an envelope's Timestamp.
const snsTimestamp = "2006-01-02T15:04:05.000Z"

func sequenceNumber(seq uint64) string { return fmt.Sprintf("%020d", seq) }

// fifoMessageID returns the MessageID of a FIFO topic's message seq: UUID-shaped, unique per topic, the same
// for a duplicate's result as for the original's, from the topic's ARN and epoch and seq.
func (t *Topic) fifoMessageID(seq uint64) string {
	h := sha256.New()
	h.Write([]byte(t.arn))
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(t.epoch.UnixNano()))
	binary.BigEndian.PutUint64(b[8:], seq)
	h.Write(b[:])
	copy(b[:], h.Sum(nil))
	return formatUUID(b, 8) // version 8: a custom layout
}

// A delivery is a message a queue took, not yet durable: what settle waits for.
type delivery struct {
	s       *Subscription
	cfg     *subscriptionConfig
	p       *publication
	qm      fifoq.Message
	pending fifoq.Pending
}

// deliver sends p to each of subs whose filter policy it matches, and returns the sends to settle, appended
// to pending. A send a queue refuses goes to the subscription's dead-letter queue at once. On a FIFO topic it
// runs under the order lock: every queue takes a group's messages in sequence order, while their syncs are
// waited for after the lock is released.
func (t *Topic) deliver(ctx context.Context, p *publication, subs []*Subscription, pending []delivery) []delivery {
	filtered := p.msg
	filtered.Message = p.content
	view := newMessageView(&filtered)
	for _, s := range subs {
		cfg := s.cfg.Load()
		if cfg.policy != nil {
			if t.countFiltered(cfg.policy.evaluate(&filtered, view)) {
				continue
			}
		}
		qm, err := t.queueMessage(s, cfg, p)
		var pend fifoq.Pending
		if err == nil {
			_, pend, err = s.endpoint.SendNoWait(ctx, qm)
		}
		if err != nil {
			t.counters.failed.Add(1)
			t.redrive(ctx, s, cfg, p, qm, err)
			continue
		}
		pending = append(pending, delivery{s: s, cfg: cfg, p: p, qm: qm, pending: pend})
	}
	return pending
}

// settle waits for the deliveries to be durable, and counts them. Queues in one store make their changes
// durable in order and share syncs, so a publish to any number of durable queues waits for one sync. A
// delivery whose sync failed (its store failed) counts as failed, and goes to the dead-letter queue, if it
// has one, as a refused one does.
func (t *Topic) settle(ctx context.Context, pending []delivery) {
	for _, d := range pending {
		if err := d.pending.Wait(); err != nil {
			t.counters.failed.Add(1)
			t.redrive(ctx, d.s, d.cfg, d.p, d.qm, err)
			continue
		}
		t.counters.delivered.Add(1)
	}
}

// countFiltered counts a filter's outcome; it reports whether the message was filtered out.
func (t *Topic) countFiltered(o filterOutcome) bool {
	c := &t.counters
	switch o {
	case filterMatch:
		return false
	case filterNoAttributes:
		c.filteredNoAttributes.Add(1)
	case filterInvalidAttributes:
		c.filteredInvalidAttrs.Add(1)
	case filterInvalidBody:
		c.filteredBody.Add(1)
	default:
		c.filteredOut.Add(1)
	}
	return true
}

// queueMessage returns the message subscription s sends its queue for p: the envelope, or with raw delivery
// the content and the attributes, and the trace header. The error is a signer's: the message is then
// unsigned.
func (t *Topic) queueMessage(s *Subscription, cfg *subscriptionConfig, p *publication) (fifoq.Message, error) {
	qm := fifoq.Message{TraceHeader: p.msg.TraceHeader}
	t.setIDs(&qm, s.endpoint.FIFO(), p)
	if cfg.attrs.RawMessageDelivery {
		qm.Body = p.content
		qm.Attributes = p.msg.Attributes // the queue copies them
		return qm, nil
	}
	e, err := t.envelope(s, p)
	qm.Body = string(e.marshal())
	return qm, err
}

// setIDs sets the ids of qm, the message p sent to a queue (a FIFO queue when fifoQueue), as SNS sets them:
// a FIFO queue gets the deduplication id; the group id goes to a FIFO queue from a FIFO topic and to a
// standard queue from a standard topic (an SQS fair queue), not to a standard queue from a FIFO topic.
func (t *Topic) setIDs(qm *fifoq.Message, fifoQueue bool, p *publication) {
	qm.GroupID, qm.DeduplicationID = "", ""
	if fifoQueue == t.fifo {
		qm.GroupID = p.msg.GroupID
	}
	if fifoQueue {
		qm.DeduplicationID = p.dedupID
	}
}

// redrive sends qm, which s's queue refused with cause, to s's dead-letter queue, and logs the failure.
func (t *Topic) redrive(ctx context.Context, s *Subscription, cfg *subscriptionConfig, p *publication, qm fifoq.Message, cause error) {
	dlq := cfg.attrs.DeadLetterQueue
	var dlqErr error
	if dlq != nil {
		dm := qm
		t.setIDs(&dm, dlq.FIFO(), p)
		var pend fifoq.Pending
		if _, pend, dlqErr = dlq.SendNoWait(ctx, dm); dlqErr == nil {
			dlqErr = pend.Wait()
		}
		if dlqErr == nil {
			t.counters.redriven.Add(1)
		} else {
			t.counters.failedToRedrive.Add(1)
		}
	}
	if t.logger == nil {
		return
	}
	level, msg := slog.LevelError, "fifoq: notification lost"
	attrs := []slog.Attr{
		slog.String(attrTopic, t.name),
		slog.String(attrSubscription, s.arn),
		slog.String(attrQueue, s.endpoint.Name()),
		slog.String(attrMessageID, p.messageID),
		slog.Any(attrError, cause),
	}
	if p.msg.GroupID != "" {
		attrs = append(attrs, slog.String(attrGroup, p.msg.GroupID))
	}
	if dlq != nil {
		attrs = append(attrs, slog.String(attrDeadLetterQueue, dlq.Name()))
		if dlqErr == nil {
			level, msg = slog.LevelWarn, "fifoq: notification moved to the dead-letter queue"
		} else {
			attrs = append(attrs, slog.Any(attrDeadLetterError, dlqErr))
		}
	}
	t.logger.LogAttrs(ctx, level, msg, attrs...)
}

// The keys of a topic's log records: those of package fifoq's, and the topic's own.
const (
	attrTopic           = "topic"             // the topic's name
	attrSubscription    = "subscription"      // the subscription's ARN
	attrQueue           = "queue"             // the subscribed queue's name
	attrMessageID       = "message_id"        // the published message's MessageId
	attrGroup           = "group"             // its MessageGroupId
	attrError           = "error"             // what the queue refused it with
	attrDeadLetterQueue = "dead_letter_queue" // the subscription's dead-letter queue
	attrDeadLetterError = "dead_letter_error" // what the dead-letter queue refused it with
)

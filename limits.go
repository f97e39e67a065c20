package fifoq

import (
	"bytes"
	"fmt"
	"maps"
	"time"

	"github.com/fifoq/fifoq/internal/dedup"
	"github.com/fifoq/fifoq/internal/rule"
)

// The SQS limits that layers above fifoq need: sqsapi sizes its buffers by them, a front end that reads
// the entries of a batch request one by one stops after MaxBatchEntries+1 of them.
const (
	// MaxBatchEntries is the most entries of a batch call ([Queue.SendBatch], [Queue.DeleteBatch],
	// [Queue.ChangeVisibilityBatch]) and the most messages one [Queue.Receive] returns (spec 7.2.1, 1.5.4).
	MaxBatchEntries = 10
	// MaxMessageAttributes is the most message attributes a message has (spec 7.1.3).
	MaxMessageAttributes = 10
	// MaxMessageSize is the largest message, body and attributes, a queue can take (spec 7.1.2): the
	// default and the maximum of [WithMaxMessageSize]. It is also the most the messages of one
	// [Queue.SendBatch] may add up to (spec 7.2.2).
	MaxMessageSize = 1 << 20
)

// maxReceiveMany is the most messages one ReceiveMany returns.
const maxReceiveMany = 10_000

// The other SQS limits (spec §7, 1.2, 1.5, 4.1, 5.1).
const (
	maxVisibilityTimeout = 12 * time.Hour
	maxDelay             = 15 * time.Minute
	minRetention         = time.Minute
	maxRetention         = 14 * 24 * time.Hour
	maxWaitTime          = 20 * time.Second
	minMessageSize       = 1 << 10
	maxAttributeName     = 256
	maxAttributeType     = 256
	maxIDLength          = 128 // group, deduplication and receive attempt ids
	maxQueueName         = 80
	dedupInterval        = dedup.Interval // also the life of a receive request attempt id
	purgeInterval        = 60 * time.Second
)

// Checking a message: checkMessage, then requireFIFOIDs. SendBatch runs them apart, as SQS checks a batch
// (checkBatch): an entry that fails checkParams fails alone and is not looked at by the checks that fail a
// whole batch; requireFIFOIDs is one of them (2.2, 3.1); then an entry that fails checkContent fails alone.

// messageRules are what a message is checked against: the queue's type and name, its maximum message size,
// and whether it derives a FIFO message's deduplication id from its body.
type messageRules struct {
	fifo         bool
	name         string
	maxSize      int
	contentDedup bool
}

// rules returns the rules of q's messages as its settings are now.
func (q *Queue) rules() messageRules {
	c := q.conf()
	return messageRules{fifo: q.fifo, name: q.name, maxSize: c.maxSize, contentDedup: c.contentDedup}
}

// CheckMessage returns the error [Queue.Send] of m returns on a queue of the type fifo says before it
// looks at the queue's own settings: a bad body, attribute, id, delay or trace header, a message larger than
// any queue takes ([MaxMessageSize]), a FIFO message without a group id; nil otherwise. It sends nothing.
// The SQS adapter (package sqsadapter) checks each message with it before the network, so that a message
// fifoq refuses fails the same way against Amazon SQS; a queue's own rules (its maximum message size, a
// deduplication id on a FIFO queue without content-based deduplication) are left to the queue.
func CheckMessage(m Message, fifo bool) error {
	r := messageRules{fifo: fifo, name: "of this type", maxSize: MaxMessageSize, contentDedup: true}
	if err := r.checkMessage(&m, false); err != nil {
		return err
	}
	if err := r.requireFIFOIDs(&m); err != nil {
		return err
	}
	return nil
}

// CheckBatch is [CheckMessage] for the messages of a [Queue.SendBatch]: it returns the error that fails the
// whole call (no entries or more than 10, more than 1 MiB in all, a FIFO entry without a group id), or a
// *[BatchError] naming the entries that would fail alone, or nil.
func CheckBatch(ms []Message, fifo bool) error {
	r := messageRules{fifo: fifo, name: "of this type", maxSize: MaxMessageSize, contentDedup: true}
	var errs [MaxBatchEntries]error
	if err := r.checkBatch(ms, errs[:]); err != nil {
		return err
	}
	var failed []EntryError
	for i, e := range errs {
		if e != nil {
			failed = append(failed, EntryError{Index: i, Err: e})
		}
	}
	if failed != nil {
		return &BatchError{Entries: failed}
	}
	return nil
}

// checkBatch checks the messages of a SendBatch as SQS does: it returns the error that fails the whole
// batch, or sets errs[i] to the error of each entry i that fails alone (errs has room for MaxBatchEntries).
func (r messageRules) checkBatch(ms []Message, errs []error) error {
	if err := rule.BatchLen(len(ms), "SendMessageBatchRequestEntry"); err != nil {
		return err
	}
	total := 0
	for i := range ms {
		total += rawSize(&ms[i])
	}
	if total > MaxMessageSize {
		return rule.Reject(ErrBatchTooLong, "batch requests cannot be longer than %d bytes, you have sent %d bytes", MaxMessageSize, total).Says(
			"Batch requests cannot be longer than %d bytes. You have sent %d bytes.", MaxMessageSize, total)
	}
	for i := range ms {
		errs[i] = r.checkParams(&ms[i])
	}
	for i := range ms {
		if errs[i] != nil {
			continue
		}
		if rj := r.requireFIFOIDs(&ms[i]); rj != nil {
			return rule.WithCode("InvalidParameterValue", fmt.Errorf("entry %d: %w", i, rj))
		}
	}
	for i := range ms {
		if errs[i] == nil {
			errs[i] = r.checkContent(&ms[i], true)
		}
	}
	return nil
}

// checkMessage checks everything about m that does not depend on the other entries of its batch, its size
// (body plus attributes) included (7.1). batch tells whether m is an entry of a SendBatch, whose AWS message
// for a message too large differs.
func (r messageRules) checkMessage(m *Message, batch bool) error {
	if err := r.checkParams(m); err != nil {
		return err
	}
	return r.checkContent(m, batch)
}

// checkParams checks the delay of m, the number of its attributes, that each has a known data type and
// a value of it, and the length of its trace header: the checks SQS makes first.
func (r messageRules) checkParams(m *Message) error {
	if m.NoDelay && m.Delay != 0 {
		return rule.Reject(ErrInvalidDelay, "%v with NoDelay, want 0", m.Delay)
	}
	if d := m.Delay; d < 0 || d > maxDelay {
		return rule.Reject(ErrInvalidDelay, "%v, want 0..%v", d, maxDelay).Says("%s", rule.InvalidValue(rule.Seconds(d), "DelaySeconds",
			"DelaySeconds must be >= 0 and <= "+rule.Seconds(maxDelay)+"."))
	}
	if len(m.Attributes) > 0 { // most messages have none: no map to walk
		if err := rule.CheckAttributeCount(len(m.Attributes)); err != nil {
			return err
		}
		for name, a := range m.Attributes {
			if err := rule.AttributeValue(name, a.DataType, a.StringValue, a.BinaryValue); err != nil {
				return err
			}
		}
	}
	if m.TraceHeader == "" {
		return nil
	}
	return rule.CheckTraceHeader(m.TraceHeader)
}

// checkContent checks the body of m, the names and values of its attributes, its size and its ids, and
// that a FIFO queue's message has no delay of its own.
func (r messageRules) checkContent(m *Message, batch bool) error {
	if m.Body == "" {
		return rule.Reject(ErrEmptyBody, "empty body")
	}
	if !rule.ValidChars(m.Body) {
		return rule.Reject(ErrInvalidMessageContents, "body")
	}
	size := len(m.Body)
	if len(m.Attributes) > 0 {
		for name, a := range m.Attributes {
			n, err := rule.MessageAttribute(name, a.DataType, a.StringValue, a.BinaryValue)
			if err != nil {
				return err
			}
			size += n
		}
	}
	if size > r.maxSize {
		verb := "are invalid"
		if batch {
			verb = "cannot be validated"
		}
		return rule.Reject(ErrMessageTooLarge, "%d bytes, message must be shorter than %d bytes", size, r.maxSize).Says(
			"One or more parameters %s. Reason: Message must be shorter than %d bytes.", verb, r.maxSize)
	}
	if m.GroupID != "" {
		if err := rule.ID(m.GroupID, ErrInvalidGroupID); err != nil {
			return err
		}
	}
	if m.DeduplicationID != "" {
		if !r.fifo {
			// AWS's words, recorded: a batch entry's failure unframed (aws/aws-sdk-js#4216), a single
			// send's framed as an invalid value, with a final period.
			if batch {
				return rule.Reject(ErrInvalidDeduplicationID, "only FIFO queues take a deduplication id").Says(
					"The request include parameter that is not valid for this queue type")
			}
			return rule.Reject(ErrInvalidDeduplicationID, "only FIFO queues take a deduplication id").Says("%s", rule.InvalidValue(
				m.DeduplicationID, "MessageDeduplicationId", "The request include parameter that is not valid for this queue type."))
		}
		if err := rule.ID(m.DeduplicationID, ErrInvalidDeduplicationID); err != nil {
			return err
		}
	}
	if m.Delay > 0 && r.fifo {
		return rule.Reject(ErrInvalidDelay, "%v: FIFO queues take no per-message delay", m.Delay).Says("%s", rule.InvalidValue(
			rule.Seconds(m.Delay), "DelaySeconds", "The request include parameter that is not valid for this queue type."))
	}
	return nil
}

// requireFIFOIDs checks 2.2 and 3.1 on a FIFO queue: a group id, and a deduplication id unless the queue
// derives one from the body.
func (r messageRules) requireFIFOIDs(m *Message) *rule.Rejection {
	if !r.fifo {
		return nil
	}
	if m.GroupID == "" {
		return rule.Reject(ErrMissingGroupID, "FIFO queue %s", r.name)
	}
	if m.DeduplicationID == "" && !r.contentDedup {
		return rule.Reject(ErrMissingDeduplicationID, "FIFO queue %s", r.name)
	}
	return nil
}

// cloneAttributes copies caller-owned attributes, values included.
func cloneAttributes(in map[string]Attribute) map[string]Attribute {
	if in == nil {
		return nil
	}
	out := maps.Clone(in)
	for k, a := range out {
		if a.BinaryValue != nil {
			a.BinaryValue = bytes.Clone(a.BinaryValue)
			out[k] = a
		}
	}
	return out
}

// CheckBatchLen returns ErrTooManyEntries when a batch call has n entries, more than [MaxBatchEntries], and
// nil otherwise; [ErrorMessage] gives AWS's message for it, which names n. The batch methods check it
// themselves (and return ErrEmptyBatch for no entries), so a caller of theirs needs it only to check the
// number first, as the SQS adapter does before a call goes over the network.
func CheckBatchLen(n int) error { return rule.CheckBatchLen(n) }

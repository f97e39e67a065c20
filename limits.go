package fifoq

import (
	"bytes"
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
	// MaxReceiveMany is the most messages one [Queue.ReceiveMany] returns.
	MaxReceiveMany = 10_000
)

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

// Checking a message: checkMessage, then requireFIFOIDs. SendBatch runs them apart, as SQS checks a batch:
// an entry that fails checkParams fails alone and is not looked at by the checks that fail a whole batch;
// requireFIFOIDs is one of them (2.2, 3.1); then an entry that fails checkContent fails alone.

// checkMessage checks everything about m that does not depend on the other entries of its batch, its size
// (body plus attributes) included (7.1). batch tells whether m is an entry of a SendBatch, whose AWS message
// for a message too large differs.
func (q *Queue) checkMessage(m *Message, batch bool) error {
	if err := q.checkParams(m); err != nil {
		return err
	}
	return q.checkContent(m, batch)
}

// checkParams checks the delay of m, the number of its attributes, that each has a known data type and
// a value of it, and the length of its trace header: the checks SQS makes first.
func (q *Queue) checkParams(m *Message) error {
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
func (q *Queue) checkContent(m *Message, batch bool) error {
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
	if maxSize := q.conf().maxSize; size > maxSize {
		verb := "are invalid"
		if batch {
			verb = "cannot be validated"
		}
		return rule.Reject(ErrMessageTooLarge, "%d bytes, message must be shorter than %d bytes", size, maxSize).Says(
			"One or more parameters %s. Reason: Message must be shorter than %d bytes.", verb, maxSize)
	}
	if m.GroupID != "" {
		if err := rule.ID(m.GroupID, ErrInvalidGroupID); err != nil {
			return err
		}
	}
	if m.DeduplicationID != "" {
		if !q.fifo {
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
	if m.Delay > 0 && q.fifo {
		return rule.Reject(ErrInvalidDelay, "%v: FIFO queues take no per-message delay", m.Delay).Says("%s", rule.InvalidValue(
			rule.Seconds(m.Delay), "DelaySeconds", "The request include parameter that is not valid for this queue type."))
	}
	return nil
}

// requireFIFOIDs checks 2.2 and 3.1 on a FIFO queue: a group id, and a deduplication id unless the queue
// derives one from the body.
func (q *Queue) requireFIFOIDs(m *Message) *rule.Rejection {
	if !q.fifo {
		return nil
	}
	if m.GroupID == "" {
		return rule.Reject(ErrMissingGroupID, "FIFO queue %s", q.name)
	}
	if m.DeduplicationID == "" && !q.conf().contentDedup {
		return rule.Reject(ErrMissingDeduplicationID, "FIFO queue %s", q.name)
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

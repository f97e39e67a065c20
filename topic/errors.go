package topic

import (
	"fmt"
	"strings"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/internal/rule"
)

// The sentinel errors of topics, with the error codes of Amazon SNS: InvalidParameter for a parameter SNS
// refuses, ParameterValueInvalid for a bad message attribute, NotFound for a topic or subscription that is
// gone, and the batch codes of PublishBatch. [fifoq.ErrorMessage] returns the message SNS sends, which starts
// "Invalid parameter: " for InvalidParameter. A call that returns one of them published or changed nothing.
var (
	// ErrInvalidName: a topic name is 1..256 characters of [A-Za-z0-9_-], ".fifo" included for FIFO
	// topics.
	ErrInvalidName = rule.NewSaying("InvalidParameter", "topic: invalid name", "Invalid parameter: Topic Name")
	// ErrInvalidAttribute: a topic option is out of its range: a signature version other than 1 or 2,
	// content-based deduplication on a standard topic.
	ErrInvalidAttribute = rule.New("InvalidParameter", "topic: invalid attribute")
	// ErrNotFound: the topic was deleted ([Topic.Delete]).
	ErrNotFound = rule.NewSaying("NotFound", "topic: topic does not exist", "Topic does not exist")
	// ErrSubscriptionNotFound: the subscription was unsubscribed, or its topic deleted.
	ErrSubscriptionNotFound = rule.NewSaying("NotFound", "topic: subscription does not exist", "Subscription does not exist")
	// ErrInvalidSubscription: a FIFO queue subscribed to a standard topic, or a queue subscribed again with
	// other attributes.
	ErrInvalidSubscription = rule.New("InvalidParameter", "topic: invalid subscription")
	// ErrInvalidFilterPolicy: a filter policy SNS refuses: not JSON, not in the filter policy language, more
	// than 5 keys, more than 150 combinations, nested keys with the MessageAttributes scope, larger than
	// 256 KiB.
	ErrInvalidFilterPolicy = rule.New("InvalidParameter", "topic: invalid filter policy")
	// ErrInvalidFilterPolicyScope: the scope is MessageAttributes or MessageBody.
	ErrInvalidFilterPolicyScope = rule.New("InvalidParameter", "topic: invalid filter policy scope")
	// ErrInvalidRedrivePolicy: a subscription's dead-letter queue is a FIFO queue for a FIFO
	// queue subscribed to a FIFO topic, and a standard queue for a standard topic.
	ErrInvalidRedrivePolicy = rule.New("InvalidParameter", "topic: invalid subscription redrive policy")

	// ErrEmptyMessage: a published message has at least one character.
	ErrEmptyMessage = rule.NewSaying("InvalidParameter", "topic: empty message", "Invalid parameter: Empty message")
	// ErrInvalidMessage: a message that is not valid UTF-8, a MessageStructure json message that is not a
	// JSON object with a "default" string, or a trace header longer than 1024 bytes.
	ErrInvalidMessage = rule.New("InvalidParameter", "topic: invalid message")
	// ErrInvalidSubject: a subject is 1..99 characters of UTF-8 text, without line breaks or control
	// characters, and starts with a letter, number or punctuation mark.
	ErrInvalidSubject = rule.NewSaying("InvalidParameter", "topic: invalid subject", "Invalid parameter: Subject")
	// ErrMessageTooLarge: a message and its attributes (names, types and values) add up to at most
	// 256 KiB.
	ErrMessageTooLarge = rule.NewSaying("InvalidParameter", "topic: message too long", "Invalid parameter: Message too long")
	// ErrInvalidMessageAttribute: a bad attribute name, data type or value.
	ErrInvalidMessageAttribute = rule.New("ParameterValueInvalid", "topic: invalid message attribute")
	// ErrMissingGroupID: every message published to a FIFO topic has a message group id.
	ErrMissingGroupID = rule.NewSaying("InvalidParameter", "topic: the MessageGroupId parameter is required for FIFO topics",
		"Invalid parameter: The MessageGroupId parameter is required for FIFO topics")
	// ErrMissingDeduplicationID: a FIFO topic without content-based deduplication needs a
	// deduplication id.
	ErrMissingDeduplicationID = rule.NewSaying("InvalidParameter", "topic: the topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
		"Invalid parameter: The topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly")
	// ErrInvalidGroupID: a message group id is 1..128 alphanumeric or punctuation characters.
	ErrInvalidGroupID = rule.New("InvalidParameter", "topic: invalid message group id")
	// ErrInvalidDeduplicationID: a deduplication id is 1..128 alphanumeric or punctuation characters,
	// and only FIFO topics take one.
	ErrInvalidDeduplicationID = rule.New("InvalidParameter", "topic: invalid message deduplication id")

	// ErrEmptyBatch: PublishBatch has at least one entry.
	ErrEmptyBatch = rule.NewSaying("EmptyBatchRequest", "topic: batch request has no entries",
		"The batch request doesn't contain any entries.")
	// ErrTooManyEntries: PublishBatch has at most 10 entries.
	ErrTooManyEntries = rule.NewSaying("TooManyEntriesInBatchRequest", "topic: too many entries in batch request",
		"The batch request contains more entries than permissible.")
	// ErrBatchTooLong: the messages of one PublishBatch, with their attributes, add up to at most
	// 256 KiB.
	ErrBatchTooLong = rule.NewSaying("BatchRequestTooLong", "topic: batch request too long",
		"The length of all the messages put together is more than the limit.")
)

// badTopicAttribute rejects a message attribute: ParameterValueInvalid, with SNS's message aws.
func badTopicAttribute(aws string, format string, args ...any) *rule.Rejection {
	return rule.Reject(ErrInvalidMessageAttribute, format, args...).Says("%s", aws)
}

// policyRejection rejects a filter policy: reason is SNS's text after "Invalid parameter: ", which Subscribe
// prefixes with "Attributes Reason: " as SNS does for the attributes of a Subscribe call.
func policyRejection(sentinel *fifoq.Error, reason string, subscribe bool) *rule.Rejection {
	r := rule.Reject(sentinel, "%s", strings.ReplaceAll(reason, "\n", ""))
	if subscribe {
		return r.Says("Invalid parameter: Attributes Reason: %s", reason)
	}
	return r.Says("Invalid parameter: %s", reason)
}

// policyError is a filter policy's rule broken, before it is made a rejection: reason is SNS's text.
type policyError struct{ reason string }

func (e *policyError) Error() string { return e.reason }

func policyErrorf(format string, args ...any) *policyError {
	return &policyError{reason: fmt.Sprintf(format, args...)}
}

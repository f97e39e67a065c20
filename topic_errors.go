package fifoq

import (
	"errors"
	"fmt"

	"github.com/fifoq/fifoq/internal/rule"
)

// The sentinel errors of topics, with the error codes of Amazon SNS: InvalidParameter for a parameter SNS
// refuses, ParameterValueInvalid for a bad message attribute, NotFound for a topic or subscription that is
// gone, and the batch codes of PublishBatch. [ErrorMessage] returns the message SNS sends, which starts
// "Invalid parameter: " for InvalidParameter. A call that returns one of them published or changed nothing.
var (
	// ErrInvalidTopicName: a topic name is 1..256 characters of [A-Za-z0-9_-], ".fifo" included for FIFO
	// topics.
	ErrInvalidTopicName = rule.NewSaying("InvalidParameter", "fifoq: invalid topic name", "Invalid parameter: Topic Name")
	// ErrInvalidTopicAttribute: a topic option is out of its range: a signature version other than 1 or 2,
	// content-based deduplication on a standard topic, a nil clock.
	ErrInvalidTopicAttribute = rule.New("InvalidParameter", "fifoq: invalid topic attribute")
	// ErrTopicNotFound: the topic was deleted ([Topic.Delete]).
	ErrTopicNotFound = rule.NewSaying("NotFound", "fifoq: topic does not exist", "Topic does not exist")
	// ErrSubscriptionNotFound: the subscription was unsubscribed, or its topic deleted.
	ErrSubscriptionNotFound = rule.NewSaying("NotFound", "fifoq: subscription does not exist", "Subscription does not exist")
	// ErrInvalidSubscription: a FIFO queue subscribed to a standard topic, or a queue subscribed again with
	// other attributes.
	ErrInvalidSubscription = rule.New("InvalidParameter", "fifoq: invalid subscription")
	// ErrInvalidFilterPolicy: a filter policy SNS refuses: not JSON, not in the filter policy language, more
	// than 5 keys, more than 150 combinations, nested keys with the MessageAttributes scope, larger than
	// 256 KiB.
	ErrInvalidFilterPolicy = rule.New("InvalidParameter", "fifoq: invalid filter policy")
	// ErrInvalidFilterPolicyScope: the scope is MessageAttributes or MessageBody.
	ErrInvalidFilterPolicyScope = rule.New("InvalidParameter", "fifoq: invalid filter policy scope")
	// ErrInvalidSubscriptionRedrivePolicy: a subscription's dead-letter queue is a FIFO queue for a FIFO
	// queue subscribed to a FIFO topic, and a standard queue for a standard topic.
	ErrInvalidSubscriptionRedrivePolicy = rule.New("InvalidParameter", "fifoq: invalid subscription redrive policy")

	// ErrEmptyTopicMessage: a published message has at least one character.
	ErrEmptyTopicMessage = rule.NewSaying("InvalidParameter", "fifoq: empty message", "Invalid parameter: Empty message")
	// ErrInvalidTopicMessage: a message that is not valid UTF-8, or a MessageStructure json message that
	// is not a JSON object with a "default" string.
	ErrInvalidTopicMessage = rule.New("InvalidParameter", "fifoq: invalid message")
	// ErrInvalidSubject: a subject is 1..99 characters of UTF-8 text, without line breaks or control
	// characters, and starts with a letter, number or punctuation mark.
	ErrInvalidSubject = rule.NewSaying("InvalidParameter", "fifoq: invalid subject", "Invalid parameter: Subject")
	// ErrTopicMessageTooLarge: a message and its attributes (names, types and values) add up to at most
	// 256 KiB.
	ErrTopicMessageTooLarge = rule.NewSaying("InvalidParameter", "fifoq: message too long", "Invalid parameter: Message too long")
	// ErrInvalidTopicMessageAttribute: a bad attribute name, data type or value.
	ErrInvalidTopicMessageAttribute = rule.New("ParameterValueInvalid", "fifoq: invalid message attribute")
	// ErrTopicMissingGroupID: every message published to a FIFO topic has a message group id.
	ErrTopicMissingGroupID = rule.NewSaying("InvalidParameter", "fifoq: the MessageGroupId parameter is required for FIFO topics",
		"Invalid parameter: The MessageGroupId parameter is required for FIFO topics")
	// ErrTopicMissingDeduplicationID: a FIFO topic without content-based deduplication needs a
	// deduplication id.
	ErrTopicMissingDeduplicationID = rule.NewSaying("InvalidParameter", "fifoq: the topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
		"Invalid parameter: The topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly")
	// ErrTopicInvalidGroupID: a message group id is 1..128 alphanumeric or punctuation characters.
	ErrTopicInvalidGroupID = rule.New("InvalidParameter", "fifoq: invalid message group id")
	// ErrTopicInvalidDeduplicationID: a deduplication id is 1..128 alphanumeric or punctuation characters,
	// and only FIFO topics take one.
	ErrTopicInvalidDeduplicationID = rule.New("InvalidParameter", "fifoq: invalid message deduplication id")

	// ErrTopicEmptyBatch: PublishBatch has at least one entry.
	ErrTopicEmptyBatch = rule.NewSaying("EmptyBatchRequest", "fifoq: batch request has no entries",
		"The batch request doesn't contain any entries.")
	// ErrTopicTooManyEntries: PublishBatch has at most 10 entries.
	ErrTopicTooManyEntries = rule.NewSaying("TooManyEntriesInBatchRequest", "fifoq: too many entries in batch request",
		"The batch request contains more entries than permissible.")
	// ErrTopicBatchTooLong: the messages of one PublishBatch, with their attributes, add up to at most
	// 256 KiB.
	ErrTopicBatchTooLong = rule.NewSaying("BatchRequestTooLong", "fifoq: batch request too long",
		"The length of all the messages put together is more than the limit.")
)

// ErrCatalogSubscription: [Subscription.Unsubscribe] of a subscription of a [Catalog], which
// [Catalog.Unsubscribe] ends, so that the catalogue records it. It is no rule of SNS: [ErrorCode] returns ""
// for it.
var ErrCatalogSubscription = errors.New("fifoq: subscription of a catalogue")

// invalidParameter rejects a call by the rule of sentinel, with detail in Go's words and SNS's message
// "Invalid parameter: " + reason.
func invalidParameter(sentinel *Error, reason, format string, args ...any) *rule.Rejection {
	return rule.Reject(sentinel, format, args...).Says("Invalid parameter: %s", reason)
}

// badTopicAttribute rejects a message attribute: ParameterValueInvalid, with SNS's message aws.
func badTopicAttribute(aws string, format string, args ...any) *rule.Rejection {
	return rule.Reject(ErrInvalidTopicMessageAttribute, format, args...).Says("%s", aws)
}

// policyRejection rejects a filter policy: reason is SNS's text after "Invalid parameter: ", which Subscribe
// prefixes with "Attributes Reason: " as SNS does for the attributes of a Subscribe call.
func policyRejection(sentinel *Error, reason string, subscribe bool) *rule.Rejection {
	r := rule.Reject(sentinel, "%s", reason)
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

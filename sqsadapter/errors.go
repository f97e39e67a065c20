package sqsadapter

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/topic"
)

// A rule matches an SQS or SNS error to a fifoq sentinel: by its code (without the
// "AWS.SimpleQueueService." prefix of the query protocol's codes), and, where several sentinels share a
// code, by a phrase of its message. Phrases are lower case; they cover both AWS's messages and fifoq's own,
// which an endpoint serving fifoq queues and topics may return.
type rule struct {
	code     string
	phrases  []string // any one of them, in the lower-cased message; none: the code alone decides
	sentinel error
}

// rules covers the errors of the calls a Source makes, in the order they are tried: a phrase that is part
// of a later one comes after it.
var rules = []rule{
	{"ReceiptHandleIsInvalid", nil, fifoq.ErrReceiptHandleInvalid},
	{"TooManyEntriesInBatchRequest", nil, fifoq.ErrTooManyEntries},
	{"EmptyBatchRequest", nil, fifoq.ErrEmptyBatch},
	{"MessageNotInflight", nil, fifoq.ErrReceiptHandleExpired},
	{"InvalidParameterValue", []string{"receipt handle has expired"}, fifoq.ErrReceiptHandleExpired},
	{"InvalidParameterValue", []string{"not available for visibility timeout change"}, fifoq.ErrMessageNotAvailable},
	{"InvalidParameterValue", []string{"not retryable"}, fifoq.ErrAttemptNotRetryable},
	{"InvalidParameterValue", []string{"maxnumberofmessages", "maxmessages"}, fifoq.ErrInvalidMaxMessages},
	{"InvalidParameterValue", []string{"waittimeseconds", "wait time"}, fifoq.ErrInvalidWaitTime},
	{"InvalidParameterValue", []string{"visibilitytimeout", "visibility timeout"}, fifoq.ErrInvalidVisibilityTimeout},
	{"InvalidParameterValue", []string{"receiverequestattemptid", "attempt id"}, fifoq.ErrInvalidAttemptID},
	{"MissingParameter", []string{"messagegroupid"}, fifoq.ErrMissingGroupID},
	{"InvalidParameterValue", []string{"contentbaseddeduplication enabled or messagededuplicationid"}, fifoq.ErrMissingDeduplicationID},
	{"InvalidParameterValue", []string{"message must be shorter"}, fifoq.ErrMessageTooLarge},
	{"InvalidMessageContents", nil, fifoq.ErrInvalidMessageContents},
	{"BatchRequestTooLong", nil, fifoq.ErrBatchTooLong},
	{"PurgeQueueInProgress", nil, fifoq.ErrPurgeInProgress},
	{"NonExistentQueue", nil, catalog.ErrQueueDoesNotExist},
	{"QueueDoesNotExist", nil, catalog.ErrQueueDoesNotExist},
}

// snsRules covers the errors of the calls a Topic makes, as rules does those of a Source.
var snsRules = []rule{
	{"NotFound", []string{"topic"}, topic.ErrNotFound},
	{"InvalidParameter", []string{"messagegroupid parameter is required"}, topic.ErrMissingGroupID},
	{"InvalidParameter", []string{"contentbaseddeduplication enabled or messagededuplicationid"}, topic.ErrMissingDeduplicationID},
	{"InvalidParameter", []string{"messagededuplicationid"}, topic.ErrInvalidDeduplicationID},
	{"InvalidParameter", []string{"messagegroupid"}, topic.ErrInvalidGroupID},
	{"InvalidParameter", []string{"message too long"}, topic.ErrMessageTooLarge},
	{"InvalidParameter", []string{"empty message"}, topic.ErrEmptyMessage},
	{"InvalidParameter", []string{"subject"}, topic.ErrInvalidSubject},
	{"InvalidParameter", []string{"message structure", "messagestructure"}, topic.ErrInvalidMessage},
	{"ParameterValueInvalid", nil, topic.ErrInvalidMessageAttribute},
	{"EmptyBatchRequest", nil, topic.ErrEmptyBatch},
	{"TooManyEntriesInBatchRequest", nil, topic.ErrTooManyEntries},
	{"BatchRequestTooLong", nil, topic.ErrBatchTooLong},
}

// sentinelFor returns the fifoq sentinel an error code and message stand for by rules, or nil.
func sentinelFor(rules []rule, code, message string) error {
	code = strings.TrimPrefix(code, "AWS.SimpleQueueService.")
	message = strings.ToLower(message)
	for _, r := range rules {
		if r.code != code {
			continue
		}
		if r.phrases == nil || slices.ContainsFunc(r.phrases, func(p string) bool { return strings.Contains(message, p) }) {
			return r.sentinel
		}
	}
	return nil
}

// mapError gives an error of the SDK the fifoq sentinel its SQS error code stands for, if any, so that
// errors.Is matches it; the SDK's error stays in the chain for errors.As.
func mapError(err error) error { return mapErrorBy(rules, err) }

// mapSNSError is mapError for the errors of SNS, matched to package topic's sentinels.
func mapSNSError(err error) error { return mapErrorBy(snsRules, err) }

func mapErrorBy(rules []rule, err error) error {
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		return err
	}
	if s := sentinelFor(rules, apiErr.ErrorCode(), apiErr.ErrorMessage()); s != nil {
		return fmt.Errorf("%w: %w", s, err)
	}
	return err
}

// batchError turns the failed entries of a batch call of n entries, whose ids are their indexes, into a
// *fifoq.BatchError in request order; nil when none failed. Each entry's error is a
// *smithy.GenericAPIError with its code and message, matched to a fifoq sentinel as by mapError.
func batchError(failed []types.BatchResultErrorEntry, n int) error {
	if len(failed) == 0 {
		return nil
	}
	be := &fifoq.BatchError{}
	seen := make([]bool, n)
	for _, f := range failed {
		id := aws.ToString(f.Id)
		i, err := strconv.Atoi(id)
		if err != nil || i < 0 || i >= n || strconv.Itoa(i) != id {
			return fmt.Errorf("sqsadapter: SQS reported a failed entry with id %q, not one of the request's", id)
		}
		if seen[i] {
			continue
		}
		seen[i] = true
		fault := smithy.FaultServer
		if f.SenderFault {
			fault = smithy.FaultClient
		}
		err = mapError(&smithy.GenericAPIError{Code: aws.ToString(f.Code), Message: aws.ToString(f.Message), Fault: fault})
		be.Entries = append(be.Entries, fifoq.EntryError{Index: i, Err: err})
	}
	slices.SortFunc(be.Entries, func(a, b fifoq.EntryError) int { return a.Index - b.Index })
	return be
}

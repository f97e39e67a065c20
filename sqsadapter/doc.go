// Package sqsadapter implements fifoq's interfaces over Amazon SQS and SNS, or any SQS or SNS endpoint (fifoq
// serve among them), through aws-sdk-go-v2, so that code written against them in process runs unchanged on
// AWS:
//
//   - a [Source] is a fifoq.QueueClient over an SQS queue: the fifoq.Source a Batcher and a Consumer take
//     (Receive, DeleteBatch, ChangeVisibilityBatch), and fifoq.Sender (Send, SendBatch), Delete and
//     ChangeVisibility. [Open] opens a queue by its name or its URL; [New] takes a URL and makes no request.
//   - a [Topic] is a topic.Publisher over an SNS topic (Publish, PublishBatch). [OpenTopic] opens a topic
//     by its name or its ARN; [NewTopic] takes an ARN and makes no request.
//
// Administration stays out: creating queues and topics, their attributes, subscriptions, purges and move
// tasks are the business of infrastructure code (CloudFormation, Terraform, the AWS CLI) on AWS, as they are
// a catalogue's in process.
//
// # Running a Consumer over SQS
//
//	cfg, err := config.LoadDefaultConfig(ctx) // github.com/aws/aws-sdk-go-v2/config
//	if err != nil {
//		return err
//	}
//	src, err := sqsadapter.Open(ctx, sqs.NewFromConfig(cfg), "orders.fifo")
//	if err != nil {
//		return err
//	}
//	c, err := fifoq.NewConsumer(src, handle, fifoq.ConsumerOptions{
//		Batch:                   fifoq.BatchOptions{Size: 10},
//		MaxConcurrency:          5,
//		ReportBatchItemFailures: true,
//	})
//	if err != nil {
//		return err
//	}
//	return c.Run(ctx) // until ctx is done
//
// The Consumer does what a Lambda event source mapping does: it long-polls the queue, runs the handler on
// each batch, deletes what succeeded and leaves what failed to come back after its visibility timeout, and
// to the queue's dead-letter queue past its maxReceiveCount (the redrive policy stays on the queue). On a
// FIFO queue SQS returns no messages of a group with messages in flight, so a group is never in two
// batches at once.
//
// A Consumer whose BatchOptions give no VisibilityTimeout asks [Source.VisibilityTimeout] for the queue's
// (GetQueueAttributes) once, when Run starts: it extends the visibility of the batches it is handling, so a
// handler that runs past the queue's visibility timeout keeps its messages, and it checks HandlerTimeout
// against it (NewConsumer asks too, with a done context, for a source that knows the timeout without a
// call; Source.VisibilityTimeout then makes no request). A Batcher used alone does not ask: give it
// BatchOptions.VisibilityTimeout, which a Window needs to extend the visibility of its receives.
//
// # Every field maps
//
// A message sent or published keeps its group id, deduplication id, message attributes (with their data
// types) and trace header (the AWSTraceHeader system attribute on SQS, the X-Amzn-Trace-Id header of SNS's
// Publish, which SNS passes on to its queues); a message received has them back, with its receive count,
// send and first-receive times, sequence number and dead-letter source. A delay is sent in whole seconds,
// rounded up, and fifoq.Message.NoDelay as an explicit DelaySeconds of 0 on the wire (the SDK leaves a 0
// out, which to SQS means the queue's delay). Each message is checked with fifoq's own rules before the
// network (fifoq.CheckMessage and CheckBatch, topic.CheckMessage and CheckBatch): a message a *fifoq.Queue
// or a *topic.Topic refuses is refused here the same way, with the same sentinel, and no request is made.
//
// # What cannot be hidden, and what to do about it
//
//   - SQS and SNS never say that they took a send or a publish for a duplicate: SendResult.Duplicate and
//     PublishResult.Duplicate are always false. Make the deduplication id the business key, so that a
//     retried send is harmless whatever the result says, and do not branch on Duplicate.
//   - Durations count in whole seconds: delays and visibility timeouts are rounded up, so a 1.5-second
//     timeout lasts 2. Use whole seconds in settings meant for production.
//   - A call carries at most 10 messages, and a receive returns at most 10: a Source is no
//     fifoq.ReceiveManySource, so a FIFO batch of a Consumer holds at most 10 messages of one group, and a
//     Batcher's Size above 10 gathers several receives. Send in batches of 10 (SendBatch) to save calls.
//   - FIFO queues throttle past 300 calls a second per action (3,000 messages in batches of 10; more in
//     high throughput mode) with ThrottlingException, which the SDK retries with backoff before it returns
//     the error. Batch, spread the load over message groups, or enable high throughput; a send that still
//     fails may have been sent, so send it again with the same deduplication id.
//   - SQS counts its messages only approximately, so a Source is no fifoq.StatsSource, and
//     Consumer.RunUntilEmpty over it takes a one-second receive that finds nothing for empty. Assert
//     exact counts in tests in process, not against SQS.
//   - Every call is a round trip that can fail or hang: each has a context with a deadline
//     (fifoq.ConsumerOptions.SourceTimeout for a Consumer's), and holds up no other batch meanwhile.
//   - SNS takes one trace header for a whole PublishBatch call: a batch whose messages carry different
//     ones goes in one call per run of messages that share one, in order.
//   - A publish's topic.PublishOptions shape the envelopes fifoq writes; SNS writes and signs its own, and
//     a Topic ignores them.
//   - Delays and message timers are the queue's business: a Delivery's Delay is 0.
//
// The IAM permissions each role needs, and when to move past one machine, are in the repository's
// docs/scaling.md.
//
// # Errors
//
// An error SQS or SNS returns keeps the SDK's error (a smithy.APIError, matched with errors.As) and, where
// its code stands for one fifoq rule, also matches that rule's sentinel with errors.Is, as a queue or topic
// in process would return. Of SQS's: ReceiptHandleIsInvalid is fifoq.ErrReceiptHandleInvalid;
// TooManyEntriesInBatchRequest fifoq.ErrTooManyEntries; EmptyBatchRequest fifoq.ErrEmptyBatch;
// BatchRequestTooLong fifoq.ErrBatchTooLong; MessageNotInflight, and InvalidParameterValue saying "the
// receipt handle has expired", fifoq.ErrReceiptHandleExpired; InvalidParameterValue on a message "not
// available for visibility timeout change" fifoq.ErrMessageNotAvailable; InvalidParameterValue naming
// MaxNumberOfMessages, WaitTimeSeconds, VisibilityTimeout or ReceiveRequestAttemptId, the sentinel of that
// parameter (fifoq.ErrAttemptNotRetryable for an attempt id that is "not retryable"); MissingParameter
// naming MessageGroupId fifoq.ErrMissingGroupID, and the deduplication and size texts
// fifoq.ErrMissingDeduplicationID and fifoq.ErrMessageTooLarge; InvalidMessageContents
// fifoq.ErrInvalidMessageContents; PurgeQueueInProgress fifoq.ErrPurgeInProgress; NonExistentQueue and
// QueueDoesNotExist catalog.ErrQueueDoesNotExist. Of SNS's: NotFound for a topic is topic.ErrNotFound;
// ParameterValueInvalid topic.ErrInvalidMessageAttribute; the batch codes topic.ErrEmptyBatch,
// ErrTooManyEntries and ErrBatchTooLong; InvalidParameter, by the parameter its message names, the sentinel
// of that rule (topic.ErrMissingGroupID, ErrMissingDeduplicationID, ErrInvalidGroupID,
// ErrInvalidDeduplicationID, ErrMessageTooLarge, ErrEmptyMessage, ErrInvalidSubject, ErrInvalidMessage).
// Other codes match no sentinel. The entries of a batch call that SQS or SNS reports failed come back in a
// *fifoq.BatchError, in request order, each a *smithy.GenericAPIError with the entry's code and message,
// matched the same way.
package sqsadapter

// Package sqsadapter runs the fifoq Batcher and Consumer over Amazon SQS, or any SQS endpoint, through
// aws-sdk-go-v2: [New] returns a [Source], a [fifoq.Source] that receives, deletes and changes visibility
// with SQS calls. A handler tested against an in-process *fifoq.Queue runs unchanged, with the same
// ConsumerOptions, against the real queue.
//
// # Running a Consumer over SQS
//
//	cfg, err := config.LoadDefaultConfig(ctx) // github.com/aws/aws-sdk-go-v2/config
//	if err != nil {
//		return err
//	}
//	src := sqsadapter.New(sqs.NewFromConfig(cfg), "https://sqs.us-east-1.amazonaws.com/123456789012/orders.fifo")
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
// # What differs from a *fifoq.Queue
//
// A Consumer whose BatchOptions give no VisibilityTimeout asks [Source.VisibilityTimeout] for the queue's
// (GetQueueAttributes) once, when Run starts: it extends the visibility of the batches it is handling, so a
// handler that runs past the queue's visibility timeout keeps its messages, and it checks HandlerTimeout
// against it (NewConsumer asks too, with a done context, for a source that knows the timeout without a
// call; Source.VisibilityTimeout then makes no request). A Batcher used alone does not ask: give it
// BatchOptions.VisibilityTimeout, which a Window needs to extend the visibility of its receives.
//
// SQS counts seconds: durations are rounded up to whole seconds. Each receive asks for at most 10
// messages, so a FIFO batch holds at most 10 messages of one group (a *fifoq.Queue, a
// fifoq.ReceiveManySource, gives a Batcher more at once). SQS counts its messages only approximately, so a
// Source is no fifoq.StatsSource, and Consumer.RunUntilEmpty over it takes a one-second receive that finds
// nothing for empty. Every call has a context with a deadline (fifoq.ConsumerOptions.SourceTimeout): a call
// whose connection hangs ends there, and holds up no other batch meanwhile. Delays and message timers are
// the queue's business: a Delivery's Delay is 0.
//
// # Errors
//
// An error SQS returns keeps the SDK's error (a smithy.APIError, matched with errors.As) and, where its
// code stands for one fifoq rule, also matches that rule's sentinel with errors.Is: ReceiptHandleIsInvalid
// is fifoq.ErrReceiptHandleInvalid; TooManyEntriesInBatchRequest fifoq.ErrTooManyEntries;
// EmptyBatchRequest fifoq.ErrEmptyBatch; MessageNotInflight, and InvalidParameterValue saying "the receipt
// handle has expired", fifoq.ErrReceiptHandleExpired; InvalidParameterValue on a message "not available
// for visibility timeout change" fifoq.ErrMessageNotAvailable; and InvalidParameterValue naming
// MaxNumberOfMessages, WaitTimeSeconds, VisibilityTimeout or ReceiveRequestAttemptId, the sentinel of that
// parameter (fifoq.ErrAttemptNotRetryable for an attempt id that is "not retryable"). Other codes match no
// sentinel. The entries of a batch call that SQS reports failed come back in a *fifoq.BatchError, in
// request order, each a *smithy.GenericAPIError with the entry's code and message, matched the same way.
package sqsadapter

// Package lambdaevents runs Lambda functions for SQS against fifoq queues, with the events and answers of
// Lambda's SQS event source mapping, two ways.
//
// # In process: a Go handler on a Consumer
//
// [Handler] runs an aws-lambda-go SQS handler, unchanged, on a fifoq.Consumer: each batch becomes an
// events.SQSEvent with the records Lambda would send, and the handler's events.SQSEventResponse becomes a
// partial batch failure.
//
//	c, err := fifoq.NewConsumer(q, lambdaevents.Handler(myLambdaHandler, lambdaevents.WithQueueName(q.Name())),
//		fifoq.ConsumerOptions{ReportBatchItemFailures: true})
//
// Both ways work over any fifoq.Source, not only a *fifoq.Queue: a catalogue's queue in fifoq serve, or the
// Source of the sqsadapter module over Amazon SQS, so that a function tested here runs its events from the
// queue it will read in production.
//
// # Over HTTP: an event source mapping to a function URL
//
// An [Invoker] runs an event source mapping ([Mapping]) from a queue to a function reached over HTTP, in any
// language: typically the Lambda Runtime Interface Emulator, which runs a function's container image locally
// and takes invocations at http://HOST:PORT/2015-03-31/functions/function/invocations. Each batch is POSTed
// as the JSON Lambda sends, byte for byte, and the answer settles it as Lambda would: success deletes the
// batch, batch item failures fail those messages, a function error fails the whole batch, which comes back
// after the queue's visibility timeout and moves to its dead-letter queue past maxReceiveCount.
//
//	inv, err := lambdaevents.NewInvoker(q, lambdaevents.Mapping{
//		FunctionURL:           "http://127.0.0.1:9000/2015-03-31/functions/function/invocations",
//		FunctionResponseTypes: []string{lambdaevents.ReportBatchItemFailures},
//	}, lambdaevents.Options{Logger: logger})
//	...
//	err = inv.Run(ctx) // until ctx is done, then the invocations under way end
//
// [Mapping.Validate] checks a mapping as AWS's CreateEventSourceMapping does, with one sentinel error a field
// (ErrInvalidBatchSize, ...). [Invoker.Metrics] counts invocations, errors by [ErrorKind], batch item failures
// and durations; a failed invocation is a [*FunctionError]. The repository's docs/event-source-mappings.md
// says every rule and choice.
package lambdaevents

// Package fifoq provides an in-process message queue with the semantics of Amazon SQS: standard and FIFO
// queues, message groups, visibility timeouts, delays, retention, deduplication, long polling and dead-letter
// queues. It is meant for testing consumer code without AWS, deterministically and in milliseconds, and for
// embedding a queue in a service.
//
// A queue is created with [New]. A name ending in ".fifo" makes a FIFO queue, any other name a standard
// queue. Producers call [Queue.Send]; consumers call [Queue.Receive], handle each [Delivery], and then call
// [Queue.Delete] with its receipt handle. A message that is not deleted becomes visible again when its
// visibility timeout ends, and is received again.
//
// # SQS actions and attributes
//
// Each SQS action maps to a Go call, and each SQS attribute or parameter (in parentheses) to an option or a
// field:
//
//   - CreateQueue: [New], with [WithVisibilityTimeout] (VisibilityTimeout), [WithDelay] (DelaySeconds),
//     [WithRetention] (MessageRetentionPeriod), [WithMaxMessageSize] (MaximumMessageSize),
//     [WithReceiveWaitTime] (ReceiveMessageWaitTimeSeconds), [WithContentBasedDeduplication]
//     (ContentBasedDeduplication), [WithDeduplicationScope] (DeduplicationScope), [WithDeadLetterQueue]
//     (RedrivePolicy) and [WithRedriveAllowPolicy] (RedriveAllowPolicy). A name ending in ".fifo" stands for
//     FifoQueue=true.
//   - SendMessage: [Queue.Send] with a [Message]: [Message.Body] (MessageBody), [Message.GroupID]
//     (MessageGroupId), [Message.DeduplicationID] (MessageDeduplicationId), [Message.Delay] (DelaySeconds),
//     [Message.Attributes] (MessageAttributes), [Message.TraceHeader] (the AWSTraceHeader system attribute).
//     It returns a [SendResult] (MessageId, SequenceNumber).
//   - SendMessageBatch: [Queue.SendBatch].
//   - ReceiveMessage: [Queue.Receive] with [ReceiveOptions]: [ReceiveOptions.MaxMessages]
//     (MaxNumberOfMessages), [ReceiveOptions.WaitTime] (WaitTimeSeconds), [ReceiveOptions.VisibilityTimeout]
//     (VisibilityTimeout), [ReceiveOptions.AttemptID] (ReceiveRequestAttemptId).
//   - Message system attributes: fields of [Delivery]: [Delivery.MessageID] (MessageId),
//     [Delivery.ReceiptHandle] (ReceiptHandle), [Delivery.SequenceNumber] (SequenceNumber),
//     [Delivery.ReceiveCount] (ApproximateReceiveCount), [Delivery.SentAt] (SentTimestamp),
//     [Delivery.FirstReceivedAt] (ApproximateFirstReceiveTimestamp), [Delivery.DeadLetterSource]
//     (DeadLetterQueueSourceArn, as a queue name), and in the embedded [Message], [Message.GroupID]
//     (MessageGroupId), [Message.DeduplicationID] (MessageDeduplicationId) and [Message.TraceHeader]
//     (AWSTraceHeader).
//   - DeleteMessage: [Queue.Delete]. DeleteMessageBatch: [Queue.DeleteBatch].
//   - ChangeMessageVisibility: [Queue.ChangeVisibility]. ChangeMessageVisibilityBatch:
//     [Queue.ChangeVisibilityBatch].
//   - GetQueueAttributes, for the message counts: [Queue.Stats]: [Stats.Visible]
//     (ApproximateNumberOfMessages), [Stats.InFlight] (ApproximateNumberOfMessagesNotVisible),
//     [Stats.Delayed] (ApproximateNumberOfMessagesDelayed). fifoq counts exactly. For the settings:
//     [Queue.Attributes].
//   - SetQueueAttributes: [Queue.SetAttributes] with [Attributes], the settings [New] takes as options. A
//     new retention period applies to the stored messages and a new delay to a FIFO queue's delayed
//     messages, as on SQS.
//   - PurgeQueue: [Queue.Purge].
//   - StartMessageMoveTask: [Queue.StartMoveTask] on the dead-letter queue. CancelMessageMoveTask:
//     [MoveTask.Cancel]. ListMessageMoveTasks: [Queue.MoveTasks], and [MoveTask.Status] for one task.
//   - Error codes: every rejection wraps a sentinel error such as [ErrMissingGroupID], matched with
//     [errors.Is]; [ErrorCode] returns its SQS error code and [ErrorMessage] the message SQS sends for the
//     case, while the error's own text stays Go's. Batch calls report the entries that failed in a
//     [*BatchError]; batch entries have no ids of their own, only their position in the call. The limits
//     and rules live here once: a front end of its own reads [MaxBatchEntries] and the Check functions
//     ([CheckBatchLen], [CheckID], ...) for values fifoq's types cannot carry as given.
//   - Lambda event source mapping (CreateEventSourceMapping on an SQS queue): [NewConsumer] with
//     [ConsumerOptions]: [BatchOptions.Size] (BatchSize), [BatchOptions.Window]
//     (MaximumBatchingWindowInSeconds), [BatchOptions.MaxBytes] (the 6 MB invocation payload),
//     [ConsumerOptions.MaxConcurrency] (ScalingConfig.MaximumConcurrency),
//     [ConsumerOptions.ReportBatchItemFailures] with a [*BatchItemFailures] (FunctionResponseTypes
//     ReportBatchItemFailures), [ConsumerOptions.HandlerTimeout] (the function timeout),
//     [ConsumerOptions.Filter] (FilterCriteria). See "Batcher and Consumer" below.
//
// Where SQS tells an omitted parameter from an explicit 0, a zero Go duration means "the queue's setting",
// and a field of its own asks for the 0: [ReceiveOptions].NoWaitTime (a short poll), NoVisibilityTimeout
// (messages left visible) and [Message].NoDelay (no message timer, whatever the queue's delay).
//
// A Go program holds its queues as values. A service that holds them by name, as SQS does, keeps them in a
// catalogue (package github.com/fifoq/fifoq/catalog): queues and topics by account, region and name, each with
// its definition, under the rules of SQS's control plane (CreateQueue of an existing queue,
// QueueDeletedRecently, redrive policies by name, tags, permissions, move tasks), in memory or in a [Store].
// Package github.com/fifoq/fifoq/topic fans messages out to queues as SNS does, and
// github.com/fifoq/fifoq/sqsapi serves the whole SQS API, both protocols, from a catalogue, for the AWS SDKs
// and CLI. [Queue.Messages] has no SQS counterpart: it lists every stored message without receiving it, for
// tests and debugging.
//
// Code that sends and consumes can be written against interfaces rather than *Queue: [Sender], [Source] and
// [QueueClient]. A *Queue satisfies them in a test or on one machine, and the queues of the sqsadapter module
// satisfy them over Amazon SQS, so the same code runs in both.
//
// # FIFO and message groups
//
// Every message sent to a FIFO queue has a group id. Within a group, messages are delivered in the order they
// were sent, and a message is never delivered while an earlier message of its group is in flight: a group
// with a message in flight gives nothing more until that message is deleted or becomes visible again, and a
// message that becomes visible again is delivered before the later messages of its group.
//
// A group is available when its oldest message is visible. A receive takes the available groups in the order
// they became available, as observed on SQS: a new group from its first message's arrival (or the end of its
// delay), a group whose messages become visible again (visibility timeout ending, [Queue.ChangeVisibility] to
// 0, a receive with NoVisibilityTimeout, a failed [Consumer] batch) or whose in-flight messages
// are deleted or moved to the dead-letter queue from that moment on, behind the groups already waiting. From
// each group it returns as many messages as the request has room for, then goes on to the next group.
// [WithGroupOrder] ([GroupOrderOldestMessage]) serves first the group whose oldest message was sent first
// instead. Inter-group order is not an SQS guarantee: fifoq's order is deterministic, but code that must work
// on SQS should not depend on it. A receive finds the next group in O(log g) for g groups and never looks at
// a blocked one.
//
// Standard queues have no ordering guarantee on SQS. fifoq delivers their messages in the order they became
// visible (send order, for messages without a delay), except that messages whose visibility timeout ended are
// served before messages never received, and it never delivers a message twice at once. A group id on a
// standard queue is accepted (SQS fair queues) and has no effect on order.
//
// # Visibility
//
// A received message is in flight: invisible to other receives for the visibility timeout, 30 seconds unless
// [WithVisibilityTimeout] or [ReceiveOptions.VisibilityTimeout] says otherwise. [Queue.ChangeVisibility]
// sets a new timeout counted from the call, up to 12 hours after the receive; a timeout of 0 makes the
// message visible at once. Each receive gives a new receipt handle. On a FIFO queue only the latest handle
// acts, and only while the message is in flight; later calls return [ErrReceiptHandleExpired]. On a standard
// queue any handle of a message deletes it.
//
// Messages sent with a delay ([WithDelay], or [Message.Delay] on standard queues) stay invisible until it
// ends. Messages older than the retention period ([WithRetention]) are removed, in flight or not.
//
// # Deduplication
//
// A FIFO queue accepts each deduplication id once every 5 minutes. A later send with the same id succeeds but
// stores nothing: its [SendResult] has Duplicate set and the MessageID and SequenceNumber of the message first
// accepted. The id is [Message.DeduplicationID], or with [WithContentBasedDeduplication] the SHA-256 of the
// body when no id is given. The id counts across the queue, or per message group with
// [DeduplicationScopeMessageGroup]. Deleting a message does not forget its id; [Queue.Purge] does.
//
// # Dead-letter queues
//
// [WithDeadLetterQueue] gives a queue a redrive policy: a dead-letter queue and a maxReceiveCount of 1 to
// 1000. The dead-letter queue is a *[Queue] of the same type (FIFO with FIFO, standard with standard).
// [New] rejects a bad policy with [ErrInvalidRedrivePolicy]. As on SQS, dead-letter queues may form cycles,
// set with [Queue.SetAttributes]: a queue may be its own dead-letter queue, which moves nothing (its
// messages are received past maxReceiveCount, their receive count going on, as without a policy), and in a
// cycle of several queues a message moves on from one to the next each time it passes its limit.
//
// The move happens on a receive: a message already received maxReceiveCount times and not deleted is moved by
// the next receive that would return it, and that receive goes on without it. On a FIFO queue this unblocks
// the message's group, so the same receive can return the next message of that group. A message that is never
// received again stays in its source queue until it is deleted or expires.
//
// A moved message keeps its MessageID, body, attributes and group id, and its receive count carries on and
// keeps counting: a message received maxReceiveCount times in its source reports maxReceiveCount+1 on its
// first receive from the dead-letter queue. [Delivery.DeadLetterSource] names the queue it came from. In a
// FIFO dead-letter queue its deduplication id becomes its MessageID, and its send time, and with it its
// retention, starts at the move. In a standard dead-letter queue it keeps its send time, so its retention
// counts from the original send and it may expire soon after the move.
//
// [WithRedriveAllowPolicy] on the dead-letter queue says which queues may use it: all of them
// ([RedriveAllowAll], the default), none ([RedriveDenyAll]), or those named in [RedriveAllowPolicy.Sources]
// ([RedriveByQueue], 1 to 10 queue names). A source that the policy does not allow gets
// [ErrRedriveNotAllowed] from [New].
//
// [Queue.StartMoveTask] on a dead-letter queue starts a [MoveTask] (a DLQ redrive) that moves its messages,
// oldest first, to a destination queue of the same type, or with a nil destination each back to the queue it
// came from, at most a given number a second (up to 500; 0 is as fast as possible). Moved messages are new
// messages: a new MessageID, send time and retention, a receive count of 0, and the destination's delay. A
// task sets out to move the messages visible when it starts and ends early when none is visible. A queue runs
// one task at a time ([ErrMoveTaskRunning]), and only a queue that is some queue's dead-letter queue can
// start one ([ErrNotDeadLetterQueue]).
//
// A task is RUNNING ([MoveTaskRunning]) until it ends: COMPLETED ([MoveTaskCompleted]); CANCELLED
// ([MoveTaskCancelled]) after [MoveTask.Cancel], by way of CANCELLING ([MoveTaskCancelling]) while it stops;
// or FAILED ([MoveTaskFailed]) when a message cannot be moved, because it was sent to the dead-letter queue
// directly and has no source to return to, or because it is too large for the destination. That message stays
// in the dead-letter queue, and the messages moved before it stay moved. [MoveTask.Wait] waits for a task to
// end; [MoveTask.Status] and [Queue.MoveTasks] report its progress. A task takes messages out of the
// dead-letter queue directly, not by receiving them, so it raises no receive count; on a FIFO queue it takes
// only the head of each group, so group order holds.
//
// # Batcher and Consumer
//
// A [Consumer] does in process what a Lambda event source mapping does for a function: it polls a queue
// through a [Batcher], runs a [Handler] on each batch, at most [ConsumerOptions.MaxConcurrency] batches at
// once, and deletes a batch whose handler returns nil. A failed batch is not deleted: its messages come back
// when their visibility timeout ends, their receive count one higher, and move to the dead-letter queue past
// the queue's maxReceiveCount. A Batcher can also be used alone: [Batcher.Next] returns a batch when it is
// full, when its window ends, or when the next message would take it past its byte limit. On a FIFO queue
// the messages of a group are contiguous and in order in a batch, and a group is never in two batches at
// once, so concurrency is also bounded by the groups with visible messages. [Consumer.Run] returns nil when
// its context is done, after the batches in flight are settled; handlers do not see that cancellation.
// [Consumer.RunUntilEmpty] is Run for a one-shot worker: it returns once the queue holds no message and no
// batch is in flight.
//
// A failed batch comes back whole, as on Lambda: a handler that fails because of one bad message (a poison
// message) makes every message of its batch be handled again on each retry, and they all move to the
// dead-letter queue with it. [PerMessage] turns a function of one message into a Handler that fails only
// the messages that failed (and, on a FIFO queue, the later messages of their group in the batch, which
// must wait for them); the Consumer honours that partial failure even without ReportBatchItemFailures. On a
// FIFO queue the messages behind a poison message in its group still come back with it on each retry,
// unhandled, and with a dead-letter queue follow it there, as on SQS; see [PerMessage] for a way out.
//
// The settings of an event source mapping are options ([NewBatcher] and [NewConsumer] reject values out of
// range with [ErrInvalidBatchOptions]):
//
//   - BatchSize: [BatchOptions.Size], default 10, up to 10,000.
//   - MaximumBatchingWindowInSeconds: [BatchOptions.Window], 0 to 5 minutes, any duration.
//   - The 6 MB payload of a synchronous invocation: [BatchOptions.MaxBytes], default 6 MB of bodies and
//     attributes. A message larger than that on its own makes a batch of one.
//   - ScalingConfig.MaximumConcurrency: [ConsumerOptions.MaxConcurrency], 1 to 1000, default 2.
//   - FunctionResponseTypes ReportBatchItemFailures: [ConsumerOptions.ReportBatchItemFailures]. The handler
//     returns a [*BatchItemFailures] naming the failed messages by MessageID; the others are deleted. An id
//     that is not in the batch, or an empty one, fails the whole batch; no ids is a success. Without the
//     option any error fails the whole batch.
//   - The function timeout: [ConsumerOptions.HandlerTimeout], the deadline of the handler's context. As on
//     Lambda it may not exceed the visibility timeout of the receives (the queue's, or
//     [BatchOptions.VisibilityTimeout]).
//   - FilterCriteria: [ConsumerOptions.Filter]. Messages it rejects are deleted without being handled.
//   - The redrive policy stays on the queue ([WithDeadLetterQueue]), as on Lambda.
//
// A Batcher and a Consumer read the queue through a [Source]: FIFO, Receive, DeleteBatch and
// ChangeVisibilityBatch, and nothing else of a *[Queue]. A *Queue is one; an adapter over real SQS can be
// another, so the same handler and options run on both. What not every source can do is optional, as
// io.WriterTo is to io.Copy: a [VisibilitySource] says its visibility timeout, a [ReceiveManySource]
// receives more than 10 messages at once, a [StatsSource] counts its messages exactly; a *Queue is all
// three. A source with a Clock method, as [Queue.Clock], times the batch window by that clock; any other by
// the real clock. Every call to a source has a context with a deadline
// ([ConsumerOptions.SourceTimeout]), and none is made while other batches wait for it, so a call that hangs
// holds up its own batch only.
//
// fifoq deliberately allows more than Lambda does, unless [BatchOptions.Strict] is set (it is off by
// default), which rejects what Lambda rejects:
//
//   - Batches larger than 10 and batch windows on FIFO queues; on standard queues, batches larger than 10
//     without a window of at least a second.
//   - MaxConcurrency 1, for handlers that must run one batch at a time (Lambda's minimum is 2).
//
// And always:
//
//   - [ConsumerOptions.RetryImmediately] makes failed messages visible again at once, instead of after their
//     visibility timeout.
//   - [ConsumerOptions.Filter] is a Go function of the whole [Delivery], not a JSON pattern on the body.
//   - On a FIFO queue a partial failure also fails every later message of the failed message's group in the
//     batch, so group order holds. Lambda leaves that to the function and deletes whatever it does not name.
//
// A handler that panics fails its batch with a [*PanicError] and does not stop the Consumer. A handler that
// runs past its timeout (measured by the queue's clock) is not stopped (Go cannot stop a goroutine): it
// keeps its concurrency slot until it returns, and its batch fails with [ErrHandlerTimeout] whatever it
// returns. While a handler runs, the Consumer extends its batch's visibility every half visibility timeout,
// so no other batch receives those messages meanwhile: two batches of one FIFO group never run at once. Messages a receive returned that
// do not fit under MaxBytes are made visible again at once, with their receive count one higher.
// [ConsumerOptions.Logger] and [ConsumerOptions.OnBatch] report every batch ([BatchReport]).
//
// # Packages
//
// The root package needs nothing but the standard library and a B-tree. The packages beside and above it
// each bring what one use needs:
//
//   - github.com/fifoq/fifoq/topic: topics with the semantics of Amazon SNS, which fan a published message
//     out to the queues subscribed to them, through filter policies.
//   - github.com/fifoq/fifoq/catalog: queues and topics by account, region and name with SQS's and SNS's
//     control-plane rules, in memory or in a [Store].
//   - github.com/fifoq/fifoq/durable: a store on disk (Pebble) for [WithStore] and catalogues, when queues
//     must survive a restart or a crash of the process.
//   - github.com/fifoq/fifoq/fifoqprom: a Prometheus collector of [Queue.Metrics] and [Consumer.Metrics],
//     for a service that embeds queues and is scraped.
//   - github.com/fifoq/fifoq/sqsapi and snsapi: http.Handlers serving the SQS and SNS APIs from a catalogue,
//     for clients in any language, the AWS SDKs and the AWS CLI.
//   - github.com/fifoq/fifoq/cmd/fifoq: the fifoq command; "fifoq serve" runs sqsapi and snsapi as a
//     standalone endpoint, in memory or durable, for local development and integration tests.
//   - github.com/fifoq/fifoq/sqsadapter: [Source], [Sender] and [QueueClient] over Amazon SQS, and topics'
//     publishing over SNS (aws-sdk-go-v2), to run the same code against real queues in production.
//   - github.com/fifoq/fifoq/lambdaevents: runs an aws-lambda-go SQS handler, unchanged, on a Consumer, to
//     test a Lambda function against fifoq queues.
//   - github.com/fifoq/fifoq/idempotency: wraps a Handler so each message is processed once even when it
//     is delivered twice (a redelivery after a visibility timeout, or a producer's resend).
//   - github.com/fifoq/fifoq/fifoqtest: test helpers: queues and fixtures that fail the test on error,
//     draining a queue through a Consumer, handing one batch to a handler, and assertions on what was
//     delivered, dead-lettered and sent.
//
// # Metrics
//
// [Queue.Metrics] returns a queue's CloudWatch metrics as a [Metrics]: the counts of [Stats], the age of the
// oldest message (ApproximateAgeOfOldestMessage), and [Counters] of messages sent (NumberOfMessagesSent),
// received, deleted, suppressed as duplicates, expired, purged, and moved in and out by dead-letter redrive
// and move tasks, since the queue was created. [Consumer.Metrics] returns a Consumer's [ConsumerMetrics]:
// batches by [Outcome], messages, the batches in flight, and a histogram of the handler's durations. Both
// are plain Go values, so the package needs no metrics library; package
// github.com/fifoq/fifoq/fifoqprom exports them to Prometheus. A queue counts under the lock its calls take
// anyway, with no atomics and no allocations, and Metrics takes that lock once, in O(1), like Stats; a
// Consumer counts with atomics, and its Metrics takes no lock at all.
//
// # Logging
//
// fifoq logs through [log/slog], only where given a logger: [WithLogger] for a queue, [ConsumerOptions.Logger]
// for a Consumer. Nothing is logged under a queue's lock. The records:
//
//   - "fifoq: message moved to the dead-letter queue", at Warn, one per message, from the source queue's
//     logger: queue, dead_letter_queue, message_id, receive_count, and group when the message has one.
//   - One record per batch from a Consumer: "fifoq: batch done" and "fifoq: batch filtered" at Debug;
//     "fifoq: batch failed", "fifoq: batch partly failed" and "fifoq: handler timed out" at Warn (the
//     messages come back and are retried, and reach the dead-letter queue if they keep failing);
//     "fifoq: handler panicked" at Error, with the stack. A batch whose messages could not be deleted logs
//     at Error, whatever its outcome. Keys: queue (when the [Source] has a Name method, as a *[Queue] has),
//     outcome ([Outcome.String]), batch_size, groups (how many), group (when there is exactly one),
//     failed, filtered, duration (of the handler call), error, stack and delete_error (when there is one).
//   - A topic logs its failed deliveries through its own logger (see package github.com/fifoq/fifoq/topic).
//
// The keys are snake_case and stable: a key is not renamed in a later version, and means the same in every
// record that has it, so log queries and [slog.HandlerOptions.ReplaceAttr] functions can rely on them.
//
// # Concurrency
//
// A [Queue] is safe for concurrent use by any number of producers and consumers. All of its state sits behind
// one mutex; no call holds it while waiting. A receive that moves a message to a dead-letter queue takes that
// queue's mutex inside its own when the dead-letter queue was created before the source; otherwise (in a
// cycle of dead-letter queues, say) it only tries it, and when it is busy the receive returns what it has
// and moves the message afterwards, taking the two mutexes in the other order. Queues created in one order
// are locked in one order, so cycles of dead-letter queues cannot deadlock.
// Apart from a move task, which runs in a goroutine of its own until it ends, a queue starts no goroutines:
// each call first applies what has come due by the queue's clock (visibility timeouts and delays ending,
// messages and deduplication ids expiring), so an idle queue costs nothing. Long polls
// ([ReceiveOptions.WaitTime] or [WithReceiveWaitTime]) wait without polling, are woken in arrival order as
// messages become visible, and return as soon as their context is done.
//
// # Time and testing
//
// A queue reads time only from its [Clock]. The default is the real clock, which inside a testing/synctest
// bubble is the bubble's virtual clock, so a test can run a queue there and move time with [time.Sleep].
// Outside synctest, give the queue a [ManualClock] with [WithClock] and move time with [ManualClock.Advance]:
// visibility timeouts, delays, retention and the deduplication window all follow it. [ManualClock.WaitTimers]
// waits until a long poll in another goroutine is waiting, so a test can advance the clock past its wait time
// without sleeping. A rate-limited move task waits on its dead-letter queue's clock in the same way.
//
// Because time is an input, a queue gives the same results for the same calls at the same clock readings.
// Message ids and receipt handles are random per queue; everything else, sequence numbers included, is
// deterministic.
package fifoq

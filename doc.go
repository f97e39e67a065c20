// Package fifoq provides an in-process message queue with the semantics of Amazon SQS: standard and FIFO
// queues, message groups, visibility timeouts, delays, retention, deduplication and long polling. It is
// meant for testing consumer code without AWS, deterministically and in milliseconds, and for embedding a
// queue in a service.
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
//     (ContentBasedDeduplication) and [WithDeduplicationScope] (DeduplicationScope). A name ending in
//     ".fifo" stands for FifoQueue=true.
//   - SendMessage: [Queue.Send] with a [Message]: [Message.Body] (MessageBody), [Message.GroupID]
//     (MessageGroupId), [Message.DeduplicationID] (MessageDeduplicationId), [Message.Delay] (DelaySeconds),
//     [Message.Attributes] (MessageAttributes). It returns a [SendResult] (MessageId, SequenceNumber).
//   - SendMessageBatch: [Queue.SendBatch].
//   - ReceiveMessage: [Queue.Receive] with [ReceiveOptions]: [ReceiveOptions.MaxMessages]
//     (MaxNumberOfMessages), [ReceiveOptions.WaitTime] (WaitTimeSeconds), [ReceiveOptions.VisibilityTimeout]
//     (VisibilityTimeout), [ReceiveOptions.AttemptID] (ReceiveRequestAttemptId).
//   - Message system attributes: fields of [Delivery]: [Delivery.MessageID] (MessageId),
//     [Delivery.ReceiptHandle] (ReceiptHandle), [Delivery.SequenceNumber] (SequenceNumber),
//     [Delivery.ReceiveCount] (ApproximateReceiveCount), [Delivery.SentAt] (SentTimestamp),
//     [Delivery.FirstReceivedAt] (ApproximateFirstReceiveTimestamp), and in the embedded [Message],
//     [Message.GroupID] (MessageGroupId) and [Message.DeduplicationID] (MessageDeduplicationId).
//   - DeleteMessage: [Queue.Delete]. DeleteMessageBatch: [Queue.DeleteBatch].
//   - ChangeMessageVisibility: [Queue.ChangeVisibility]. ChangeMessageVisibilityBatch:
//     [Queue.ChangeVisibilityBatch].
//   - GetQueueAttributes, for the message counts: [Queue.Stats]: [Stats.Visible]
//     (ApproximateNumberOfMessages), [Stats.InFlight] (ApproximateNumberOfMessagesNotVisible),
//     [Stats.Delayed] (ApproximateNumberOfMessagesDelayed). fifoq counts exactly.
//   - PurgeQueue: [Queue.Purge].
//   - Error codes: every rejection wraps a sentinel error such as [ErrMissingGroupID], matched with
//     [errors.Is]; [ErrorCode] returns its SQS error code. Batch calls report the entries that failed in a
//     [*BatchError]; batch entries have no ids of their own, only their position in the call.
//
// There is no SetQueueAttributes: a queue's attributes are fixed when it is created. [Queue.Messages] has no
// SQS counterpart: it lists every stored message without receiving it, for tests and debugging.
//
// # FIFO and message groups
//
// Every message sent to a FIFO queue has a group id. Within a group, messages are delivered in the order they
// were sent, and a message is never delivered while an earlier message of its group is in flight: a group
// with a message in flight gives nothing more until that message is deleted or becomes visible again, and a
// message that becomes visible again is delivered before the later messages of its group.
//
// A receive takes the available group whose oldest message was sent first, returns as many of that group's
// messages as the request has room for, then goes on to the next group. SQS does not promise any order
// between groups; fifoq's choice is deterministic, but code that works on SQS should not depend on it. A
// receive finds the next group in O(log g) for g groups and never looks at a blocked one.
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
// # Concurrency
//
// A [Queue] is safe for concurrent use by any number of producers and consumers. All of its state sits
// behind one mutex; no call holds it while waiting. A queue starts no goroutines: each call first applies
// what has come due by the queue's clock (visibility timeouts and delays ending, messages and deduplication
// ids expiring), so an idle queue costs nothing. Long polls ([ReceiveOptions.WaitTime] or
// [WithReceiveWaitTime]) wait without polling, are woken in arrival order as messages become visible, and
// return as soon as their context is done.
//
// # Time and testing
//
// A queue reads time only from its [Clock]. The default is the real clock, which inside a testing/synctest
// bubble is the bubble's virtual clock, so a test can run a queue there and move time with [time.Sleep].
// Outside synctest, give the queue a [ManualClock] with [WithClock] and move time with
// [ManualClock.Advance]: visibility timeouts, delays, retention and the deduplication window all follow it.
// [ManualClock.WaitTimers] waits until a long poll in another goroutine is waiting, so a test can advance
// the clock past its wait time without sleeping.
//
// Because time is an input, a queue gives the same results for the same calls at the same clock readings.
// Message ids and receipt handles are random per queue; everything else, sequence numbers included, is
// deterministic.
package fifoq

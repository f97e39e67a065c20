package rule

// The sentinels of the SQS rules, which package fifoq exports under the same names.
var (
	// ErrInvalidQueueName: a queue name is 1..80 characters of [A-Za-z0-9_-], plus ".fifo" for FIFO queues.
	ErrInvalidQueueName = NewSaying("InvalidParameterValue", "fifoq: invalid queue name",
		"Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length")
	// ErrInvalidQueueAttribute: a queue option is out of its range.
	ErrInvalidQueueAttribute = New("InvalidAttributeValue", "fifoq: invalid queue attribute")
	// ErrFIFOOnly: a FIFO-only option (content-based deduplication, deduplication scope) on a standard queue.
	ErrFIFOOnly = New("InvalidAttributeName", "fifoq: attribute is valid only on FIFO queues")

	// ErrEmptyBody: a message body has at least one character.
	ErrEmptyBody = NewSaying("MissingParameter", "fifoq: the request must contain the parameter MessageBody",
		"The request must contain the parameter MessageBody.")
	// ErrInvalidMessageContents: a body holds a character SQS does not allow, or is not valid UTF-8.
	ErrInvalidMessageContents = NewSaying("InvalidMessageContents", "fifoq: invalid characters in message",
		"Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | "+
			"#x10000 to #x10FFFF")
	// ErrMessageTooLarge: body plus attributes exceed the queue's maximum message size.
	ErrMessageTooLarge = New("InvalidParameterValue", "fifoq: message too large")
	// ErrInvalidMessageAttribute: more than 10 attributes, or a bad attribute name, type or value (a String
	// or Number value with a character a body could not hold among them).
	ErrInvalidMessageAttribute = New("InvalidParameterValue", "fifoq: invalid message attribute")
	// ErrMissingGroupID: every message sent to a FIFO queue needs a message group id.
	ErrMissingGroupID = NewSaying("MissingParameter", "fifoq: the request must contain the parameter MessageGroupId",
		"The request must contain the parameter MessageGroupId.")
	// ErrInvalidGroupID: a group id is 1..128 alphanumeric or punctuation characters.
	ErrInvalidGroupID = New("InvalidParameterValue", "fifoq: invalid message group id")
	// ErrMissingDeduplicationID: a FIFO queue without content-based deduplication needs a deduplication id.
	ErrMissingDeduplicationID = NewSaying("InvalidParameterValue",
		"fifoq: the queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
		"The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly")
	// ErrInvalidDeduplicationID: a deduplication id is 1..128 alphanumeric or punctuation characters, and only
	// FIFO queues take one.
	ErrInvalidDeduplicationID = New("InvalidParameterValue", "fifoq: invalid message deduplication id")
	// ErrInvalidDelay: a message delay is 0..15 minutes, and FIFO queues take none per message.
	ErrInvalidDelay = New("InvalidParameterValue", "fifoq: invalid delay")

	// ErrEmptyBatch: a batch call has at least one entry.
	ErrEmptyBatch = New("AWS.SimpleQueueService.EmptyBatchRequest", "fifoq: batch request has no entries")
	// ErrTooManyEntries: a batch call has at most 10 entries.
	ErrTooManyEntries = New("AWS.SimpleQueueService.TooManyEntriesInBatchRequest", "fifoq: too many entries in batch request")
	// ErrBatchTooLong: the messages of one SendBatch add up to at most 1 MiB.
	ErrBatchTooLong = New("AWS.SimpleQueueService.BatchRequestTooLong", "fifoq: batch request too long")

	// ErrInvalidMaxMessages: a receive asks for 1..10 messages.
	ErrInvalidMaxMessages = New("InvalidParameterValue", "fifoq: invalid MaxMessages")
	// ErrInvalidWaitTime: a receive waits 0..20 seconds.
	ErrInvalidWaitTime = New("InvalidParameterValue", "fifoq: invalid wait time")
	// ErrInvalidVisibilityTimeout: a visibility timeout is 0..12 hours, and a message stays invisible at most
	// 12 hours from its receive.
	ErrInvalidVisibilityTimeout = New("InvalidParameterValue", "fifoq: invalid visibility timeout")
	// ErrInvalidAttemptID: a receive request attempt id is 1..128 alphanumeric or punctuation characters.
	ErrInvalidAttemptID = New("InvalidParameterValue", "fifoq: invalid receive request attempt id")
	// ErrAttemptNotRetryable: a receive request attempt id whose messages were deleted, changed or received
	// again within its 5 minutes cannot be replayed; use a new one.
	ErrAttemptNotRetryable = New("InvalidParameterValue",
		"fifoq: the receive request attempt id is not valid anymore since the receive call is not retryable")

	// ErrReceiptHandleInvalid: the string is not a receipt handle of this queue.
	ErrReceiptHandleInvalid = New("ReceiptHandleIsInvalid", "fifoq: receipt handle is invalid")
	// ErrReceiptHandleExpired: on a FIFO queue, the handle's visibility window is over, or the message was
	// received again since.
	ErrReceiptHandleExpired = New("InvalidParameterValue", "fifoq: the receipt handle has expired")
	// ErrMessageNotAvailable: ChangeVisibility on a message that was deleted or expired.
	ErrMessageNotAvailable = New("InvalidParameterValue",
		"fifoq: message does not exist or is not available for visibility timeout change")

	// ErrInvalidRedrivePolicy: a dead-letter queue must be given, of the same type as its source, with a
	// maxReceiveCount of 1..1000.
	ErrInvalidRedrivePolicy = New("InvalidParameterValue", "fifoq: invalid redrive policy")
	// ErrRedriveNotAllowed: the dead-letter queue's redrive allow policy does not allow the source queue.
	ErrRedriveNotAllowed = New("InvalidParameterValue", "fifoq: the dead-letter queue does not allow this source queue")
	// ErrInvalidRedriveAllowPolicy: sources are named only with RedriveByQueue, which takes 1..10 of them.
	ErrInvalidRedriveAllowPolicy = New("InvalidAttributeValue", "fifoq: invalid redrive allow policy")
	// ErrNotDeadLetterQueue: a move task's source must be some queue's dead-letter queue.
	ErrNotDeadLetterQueue = NewSaying("InvalidParameterValue", "fifoq: source queue must be configured as a dead letter queue",
		"Source queue must be configured as a Dead Letter Queue.")
	// ErrInvalidMoveTask: a move task moves at most 500 messages a second, to a queue of the source's type
	// other than the source.
	ErrInvalidMoveTask = New("InvalidParameterValue", "fifoq: invalid message move task")
	// ErrMoveTaskRunning: a queue has at most one running move task.
	ErrMoveTaskRunning = NewSaying("InvalidParameterValue",
		"fifoq: there is already a task running; only one active task is allowed for a source queue at a given time",
		"There is already a task running. Only one active task is allowed for a source queue arn at a given time.")
	// ErrMoveTaskNotRunning: only a running move task can be cancelled.
	ErrMoveTaskNotRunning = New("InvalidParameterValue", "fifoq: the move task is not running")

	// ErrInvalidBatchOptions: Batcher and Consumer options out of their range, or, with Strict, beyond what
	// Lambda allows.
	ErrInvalidBatchOptions = New("InvalidParameterValueException", "fifoq: invalid batch options")

	// ErrPurgeInProgress: a queue can be purged once every 60 seconds.
	ErrPurgeInProgress = New("AWS.SimpleQueueService.PurgeQueueInProgress",
		"fifoq: only one PurgeQueue operation is allowed every 60 seconds")

	// ErrInvalidPage: MessagesAfter takes a cursor it returned for this queue (or ""), 1..1000 messages a
	// page, and a filter of a valid state (a group id only on a FIFO queue).
	ErrInvalidPage = New("InvalidParameterValue", "fifoq: invalid message page")
)

package rule

import "time"

// The limits of SQS that more than one package applies. Package fifoq exports those a program needs.
const (
	MaxBatchEntries      = 10      // entries of a batch call, messages of a receive
	MaxMessageAttributes = 10      // message attributes of a message
	MaxMessageSize       = 1 << 20 // a message, body and attributes; a SendBatch's messages together
	MinMessageSize       = 1 << 10 // the least MaximumMessageSize
	MaxListedMoveTasks   = 10      // move tasks a queue lists (ListMessageMoveTasks' MaxResults)
	MaxReceiveCount      = 1000    // the highest maxReceiveCount of a redrive policy
	MaxIDLength          = 128     // group, deduplication and receive attempt ids
	MaxQueueName         = 80      // a queue name, ".fifo" included

	MaxVisibilityTimeout = 12 * time.Hour
	MaxDelay             = 15 * time.Minute
	MinRetention         = time.Minute
	MaxRetention         = 14 * 24 * time.Hour
	MaxWaitTime          = 20 * time.Second

	maxAttributeName = 256
	maxAttributeType = 256
)

package fifoq

import (
	"context"
	"log/slog"
)

// The keys of the attributes fifoq logs. They are part of the API, listed in the package documentation
// (# Logging): a key is never renamed, and means the same in every record that has it.
const (
	attrQueue           = "queue"             // the queue's name
	attrDeadLetterQueue = "dead_letter_queue" // the name of the dead-letter queue a message moved to
	attrGroup           = "group"             // a message's MessageGroupID
	attrMessageID       = "message_id"        // a message's MessageID
	attrReceiveCount    = "receive_count"     // a message's ApproximateReceiveCount
)

// logDeadLettered logs the move of one message to the dead-letter queue, at level Warn: nothing is lost,
// but a message that keeps failing needs a look. It runs after the queue released its lock.
func (q *Queue) logDeadLettered(d deadLettered) {
	ctx := context.Background()
	if !q.logger.Enabled(ctx, slog.LevelWarn) {
		return
	}
	attrs := [5]slog.Attr{
		slog.String(attrQueue, q.name),
		slog.String(attrDeadLetterQueue, d.dlq),
		slog.String(attrMessageID, d.messageID),
		slog.Int(attrReceiveCount, d.receiveCount),
	}
	n := 4
	if d.groupID != "" {
		attrs[n] = slog.String(attrGroup, d.groupID)
		n++
	}
	q.logger.LogAttrs(ctx, slog.LevelWarn, "fifoq: message moved to the dead-letter queue", attrs[:n]...)
}

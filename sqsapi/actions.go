package sqsapi

// actionTable maps each SQS action to its handler.
var actionTable = map[string]handler{
	"AddPermission":                handle(addPermission),
	"CancelMessageMoveTask":        handle(cancelMessageMoveTask),
	"ChangeMessageVisibility":      handle(changeMessageVisibility),
	"ChangeMessageVisibilityBatch": handle(changeMessageVisibilityBatch),
	"CreateQueue":                  handle(createQueue),
	"DeleteMessage":                handle(deleteMessage),
	"DeleteMessageBatch":           handlePooled(func(c *call) *deleteMessageBatchInput { return &c.hot.delBatch }, deleteMessageBatch),
	"DeleteQueue":                  handle(deleteQueue),
	"GetQueueAttributes":           handle(getQueueAttributes),
	"GetQueueUrl":                  handle(getQueueURL),
	"ListDeadLetterSourceQueues":   handle(listDeadLetterSourceQueues),
	"ListMessageMoveTasks":         handle(listMessageMoveTasks),
	"ListQueueTags":                handle(listQueueTags),
	"ListQueues":                   handle(listQueues),
	"PurgeQueue":                   handle(purgeQueue),
	"ReceiveMessage":               handlePooled(func(c *call) *receiveMessageInput { return &c.hot.receive }, receiveMessage),
	"RemovePermission":             handle(removePermission),
	"SendMessage":                  handlePooled(func(c *call) *sendMessageInput { return &c.hot.send }, sendMessage),
	"SendMessageBatch":             handlePooled(func(c *call) *sendMessageBatchInput { return &c.hot.sendBatch }, sendMessageBatch),
	"SetQueueAttributes":           handle(setQueueAttributes),
	"StartMessageMoveTask":         handle(startMessageMoveTask),
	"TagQueue":                     handle(tagQueue),
	"UntagQueue":                   handle(untagQueue),
}

package sqsapi

// actionTable maps each SQS action to its handler. It is filled in init, since AddPermission checks action
// names against it.
var actionTable map[string]handler

func init() {
	actionTable = map[string]handler{
		"AddPermission":                handle(addPermission),
		"CancelMessageMoveTask":        handle(cancelMessageMoveTask),
		"ChangeMessageVisibility":      handle(changeMessageVisibility),
		"ChangeMessageVisibilityBatch": handle(changeMessageVisibilityBatch),
		"CreateQueue":                  handle(createQueue),
		"DeleteMessage":                handle(deleteMessage),
		"DeleteMessageBatch":           handle(deleteMessageBatch),
		"DeleteQueue":                  handle(deleteQueue),
		"GetQueueAttributes":           handle(getQueueAttributes),
		"GetQueueUrl":                  handle(getQueueURL),
		"ListDeadLetterSourceQueues":   handle(listDeadLetterSourceQueues),
		"ListMessageMoveTasks":         handle(listMessageMoveTasks),
		"ListQueueTags":                handle(listQueueTags),
		"ListQueues":                   handle(listQueues),
		"PurgeQueue":                   handle(purgeQueue),
		"ReceiveMessage":               handle(receiveMessage),
		"RemovePermission":             handle(removePermission),
		"SendMessage":                  handle(sendMessage),
		"SendMessageBatch":             handle(sendMessageBatch),
		"SetQueueAttributes":           handle(setQueueAttributes),
		"StartMessageMoveTask":         handle(startMessageMoveTask),
		"TagQueue":                     handle(tagQueue),
		"UntagQueue":                   handle(untagQueue),
	}
}

package sqsadapter

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// Open returns a Source over the queue that queue names, through client: its URL, as New takes it, or its
// name, which Open resolves to its URL with one GetQueueUrl call in the client's account and region (so the
// same configuration names the queue in process, by name, and on AWS). A queue that does not exist returns
// the SDK's QueueDoesNotExist error.
func Open(ctx context.Context, client *sqs.Client, queue string, opts ...Option) (*Source, error) {
	if strings.Contains(queue, "://") {
		return New(client, queue, opts...), nil
	}
	out, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(queue)})
	if err != nil {
		return nil, mapError(err)
	}
	return New(client, aws.ToString(out.QueueUrl), opts...), nil
}

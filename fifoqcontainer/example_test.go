package fifoqcontainer_test

import (
	"context"
	"fmt"
	"log"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/testcontainers/testcontainers-go"

	"github.com/fifoq/fifoq/fifoqcontainer"
)

// A test's set-up with the container: start fifoq:dev (bash .ci/image builds it) with a FIFO queue, point
// aws-sdk-go-v2 at it, send and receive. It needs Docker, so it is compiled but not run by go test (no
// Output comment); TestRunFIFO runs the same steps.
func ExampleRun() {
	ctx := context.Background()
	ctr, err := fifoqcontainer.Run(ctx, "fifoq:dev",
		fifoqcontainer.WithQueues("orders.fifo,ContentBasedDeduplication=true"))
	defer func() {
		if err := testcontainers.TerminateContainer(ctr); err != nil {
			log.Print(err)
		}
	}()
	if err != nil {
		log.Fatal(err)
	}
	endpoint, err := ctr.EndpointURL(ctx) // http://localhost:<a published port>
	if err != nil {
		log.Fatal(err)
	}
	client := sqs.New(sqs.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  aws.AnonymousCredentials{}, // any are accepted unless WithCredentials is given
	})
	queueURL, err := ctr.QueueURL(ctx, "orders.fifo")
	if err != nil {
		log.Fatal(err)
	}
	_, err = client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(queueURL),
		MessageGroupId: aws.String("order-1"), MessageBody: aws.String("created")})
	if err != nil {
		log.Fatal(err)
	}
	out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(aws.ToString(out.Messages[0].Body))
}

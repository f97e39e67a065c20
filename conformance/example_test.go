package conformance_test

import (
	"context"
	"fmt"
	"log"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/fifoq/fifoq/sqsapi"
)

// Code written against aws-sdk-go-v2 talks to a Server in process, with no socket: only the client's
// options change.
func Example() {
	ctx := context.Background()
	srv := sqsapi.NewServer()
	client := sqs.New(sqs.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String("http://sqs.test"),
		HTTPClient:   srv.HTTPClient(),
		Credentials:  aws.AnonymousCredentials{},
	})

	created, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{
		QueueName:  aws.String("orders.fifo"),
		Attributes: map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, body := range []string{"created", "paid"} {
		_, err := client.SendMessage(ctx, &sqs.SendMessageInput{
			QueueUrl: created.QueueUrl, MessageBody: aws.String(body), MessageGroupId: aws.String("order-1"),
		})
		if err != nil {
			log.Fatal(err)
		}
	}
	got, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: created.QueueUrl, MaxNumberOfMessages: 10})
	if err != nil {
		log.Fatal(err) // the SDK has checked each MD5OfBody
	}
	fmt.Println(aws.ToString(created.QueueUrl))
	for _, m := range got.Messages {
		fmt.Println(aws.ToString(m.Body))
	}

	q, _ := srv.Queue("orders.fifo") // the queue behind the URL
	fmt.Printf("%+v\n", q.Stats())
	// Output:
	// http://sqs.test/000000000000/orders.fifo
	// created
	// paid
	// {Visible:0 InFlight:2 Delayed:0}
}

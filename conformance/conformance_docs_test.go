package conformance_test

// The code in this file is what docs/wire-api.md shows; the root package's docs_test.go checks that the
// snippet there is a copy of it. It uses aws-sdk-go-v2, hence the file's name: the SDK-based tests of
// sqsapi live in files named conformance_*_test.go.

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/sqsapi"
)

// placeOrder is the code under test: it sends an order's events through any *sqs.Client.
func placeOrder(ctx context.Context, client *sqs.Client, order string) error {
	url, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("orders.fifo")})
	if err != nil {
		return err
	}
	for _, event := range []string{"created", "paid"} {
		_, err := client.SendMessage(ctx, &sqs.SendMessageInput{
			QueueUrl: url.QueueUrl, MessageBody: aws.String(order + " " + event), MessageGroupId: aws.String(order),
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Code written against an aws-sdk-go-v2 *sqs.Client runs on a Server in process, with no socket, and on a
// manual clock; the test then looks at the queue behind the URL.
func Example_sdkInProcess() {
	ctx := context.Background()
	clock := fifoq.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	srv := sqsapi.NewServer(sqsapi.WithClock(clock)) // optional: a fifoq.ManualClock drives every queue
	client := sqs.New(sqs.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String("http://sqs.test"), // any host: the server resolves a queue by its URL's path
		HTTPClient:   srv.HTTPClient(),              // calls the server in process
		Credentials:  aws.AnonymousCredentials{},
	})
	if _, err := srv.DeclareQueue("orders.fifo", map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"}); err != nil {
		log.Fatal(err)
	}
	if err := placeOrder(ctx, client, "order-1"); err != nil { // the code under test uses client
		log.Fatal(err)
	}
	q, _ := srv.Queue("orders.fifo") // the queue behind the URL, to look at with Messages() or Stats()
	for m := range q.Messages() {
		fmt.Println(m.GroupID, m.Body)
	}
	// Output:
	// order-1 order-1 created
	// order-1 order-1 paid
}

package sqsadapter_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/snsapi"
	"github.com/fifoq/fifoq/sqsadapter"
	"github.com/fifoq/fifoq/sqsapi"
	"github.com/fifoq/fifoq/topic"
)

// A fifoq Consumer runs over an SQS queue through the SDK. Here the endpoint is a sqsapi server in process,
// so the example runs anywhere; against SQS only the client and the queue URL change (see Example_aws).
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	srv := sqsapi.NewServer()
	if _, err := srv.DeclareQueue("orders.fifo", map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"}); err != nil {
		log.Fatal(err)
	}
	client := sqs.New(sqs.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String("http://fifoq.test"),
		HTTPClient:   srv.HTTPClient(),
		Credentials:  aws.AnonymousCredentials{},
	})
	url, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("orders.fifo")})
	if err != nil {
		log.Fatal(err)
	}
	for _, body := range []string{"created", "paid", "shipped"} {
		_, err := client.SendMessage(ctx, &sqs.SendMessageInput{
			QueueUrl: url.QueueUrl, MessageBody: aws.String(body), MessageGroupId: aws.String("order-1"),
		})
		if err != nil {
			log.Fatal(err)
		}
	}

	src := sqsadapter.New(client, aws.ToString(url.QueueUrl))
	var (
		mu   sync.Mutex
		seen []string
	)
	c, err := fifoq.NewConsumer(src, func(ctx context.Context, batch []fifoq.Delivery) error {
		mu.Lock()
		defer mu.Unlock()
		for _, d := range batch {
			seen = append(seen, d.Body)
		}
		if len(seen) == 3 {
			cancel() // enough for an example: stop the consumer
		}
		return nil
	}, fifoq.ConsumerOptions{}) // Run asks the queue for its visibility timeout
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.Join(seen, ", "))
	// Output: created, paid, shipped
}

// Against Amazon SQS, the client comes from the usual AWS configuration (with
// github.com/aws/aws-sdk-go-v2/config, config.LoadDefaultConfig and sqs.NewFromConfig), or, as here, from
// the environment. The example needs AWS credentials and a queue, so it has no output to check.
func Example_aws() {
	ctx := context.Background()
	client := sqs.New(sqs.Options{
		Region: os.Getenv("AWS_REGION"),
		Credentials: aws.NewCredentialsCache(aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{
				AccessKeyID:     os.Getenv("AWS_ACCESS_KEY_ID"),
				SecretAccessKey: os.Getenv("AWS_SECRET_ACCESS_KEY"),
				SessionToken:    os.Getenv("AWS_SESSION_TOKEN"),
			}, nil
		})),
	})
	src := sqsadapter.New(client, os.Getenv("QUEUE_URL")) // https://sqs.<region>.amazonaws.com/<account>/<name>
	c, err := fifoq.NewConsumer(src, func(ctx context.Context, batch []fifoq.Delivery) error {
		var failed []string
		for _, d := range batch {
			if err := process(ctx, d); err != nil {
				failed = append(failed, d.MessageID)
			}
		}
		if failed != nil {
			return &fifoq.BatchItemFailures{MessageIDs: failed}
		}
		return nil
	}, fifoq.ConsumerOptions{
		Batch:                   fifoq.BatchOptions{Size: 10},
		MaxConcurrency:          5,
		ReportBatchItemFailures: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Run(ctx); err != nil { // until ctx is done
		log.Fatal(err)
	}
}

func process(_ context.Context, d fifoq.Delivery) error {
	fmt.Println(d.Body)
	return nil
}

// A Topic publishes to SNS through the SDK: code that takes a topic.Publisher publishes to a *topic.Topic
// in a test and to SNS in production. Here the endpoint is fifoq's SNS API in process, over a catalogue that
// holds the topic and a queue subscribed to it.
func ExampleOpenTopic() {
	ctx := context.Background()
	srv := sqsapi.NewServer()
	cat := srv.Catalog()
	ns := cat.DefaultNamespace()
	inbox, err := cat.CreateQueue(ctx, ns, "inbox", catalog.Definition{}, 0)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := cat.CreateTopic(ctx, ns, "releases", catalog.TopicDefinition{}); err != nil {
		log.Fatal(err)
	}
	_, err = cat.Subscribe(ctx, ns, "releases", catalog.SubscriptionDefinition{
		Queue: catalog.QueueKey{Namespace: ns, Name: "inbox"}, RawMessageDelivery: true})
	if err != nil {
		log.Fatal(err)
	}
	client := sns.New(sns.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String("http://fifoq.test"),
		HTTPClient:   &http.Client{Transport: handlerTransport{snsapi.Route(snsapi.NewServer(cat), srv)}},
		Credentials:  aws.AnonymousCredentials{},
	})

	releases, err := sqsadapter.OpenTopic(ctx, client, "releases") // by name, or by ARN
	if err != nil {
		log.Fatal(err)
	}
	if err := announce(ctx, releases, "v1.2.0"); err != nil {
		log.Fatal(err)
	}
	for s := range inbox.Messages() {
		fmt.Println(s.Body)
	}
	// Output: v1.2.0
}

// announce is code written against topic.Publisher.
func announce(ctx context.Context, releases topic.Publisher, version string) error {
	_, err := releases.Publish(ctx, topic.Message{Message: version})
	return err
}

// handlerTransport is an http.RoundTripper that serves each request with an http.Handler, in process.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req)
	return rec.Result(), nil
}

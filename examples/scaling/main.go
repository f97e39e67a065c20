// Command scaling runs code written against fifoq's interfaces in process and against Amazon SQS, unchanged:
// a producer (Charge) that takes a fifoq.Sender and a worker (Settle) that takes a fifoq.QueueClient. In a
// test and on one machine they get a *fifoq.Queue; past one machine, the queue of package sqsadapter, which
// speaks to SQS (or fifoq serve, or any SQS endpoint) through aws-sdk-go-v2. Only the line that makes the
// queue differs.
//
// In process:
//
//	go run ./examples/scaling
//
// Against an SQS endpoint, with credentials and a region from the environment as for any AWS SDK (the queue
// must exist, a FIFO queue with content-based deduplication off):
//
//	AWS_DEFAULT_REGION=us-east-1 go run ./examples/scaling -endpoint http://127.0.0.1:9324 -queue payments.fifo
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/sqsadapter"
)

// A Charge is an amount to take from an account, with an id that makes a retried send of it harmless.
type Charge struct {
	ID      string
	Account string
	Cents   int
}

// Charges sends each charge to payments, in its account's message group, deduplicated by its id: a charge
// sent twice within 5 minutes is settled once, in process as on SQS.
func Charges(ctx context.Context, payments fifoq.Sender, charges []Charge) error {
	for _, c := range charges {
		_, err := payments.Send(ctx, fifoq.Message{Body: strconv.Itoa(c.Cents), GroupID: c.Account, DeduplicationID: c.ID})
		if err != nil {
			return fmt.Errorf("charge %s: %w", c.ID, err)
		}
	}
	return nil
}

// Settle handles the charges of payments until it has none left, with a fifoq.Consumer (one batch per
// account at a time, in send order), and returns the total charged to each account.
func Settle(ctx context.Context, payments fifoq.QueueClient) (map[string]int, error) {
	totals := make(map[string]int)
	handle := fifoq.PerMessage(func(ctx context.Context, d fifoq.Delivery) error {
		cents, err := strconv.Atoi(d.Body)
		if err != nil {
			return fmt.Errorf("charge %s: %w", d.MessageID, err)
		}
		totals[d.GroupID] += cents // one batch per account at a time, and batches of one account in order
		return nil
	})
	c, err := fifoq.NewConsumer(payments, handle, fifoq.ConsumerOptions{MaxConcurrency: 1, ReportBatchItemFailures: true})
	if err != nil {
		return nil, err
	}
	if err := c.RunUntilEmpty(ctx); err != nil {
		return nil, err
	}
	return totals, nil
}

func main() {
	endpoint := flag.String("endpoint", "", "an SQS endpoint to run against (empty: a queue in process)")
	queue := flag.String("queue", "payments.fifo", "the queue's name or URL at the endpoint")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *endpoint, *queue); err != nil {
		fmt.Fprintln(os.Stderr, "scaling:", err)
		os.Exit(1)
	}
}

// run charges and settles a day's charges on the queue: in process, or at endpoint.
func run(ctx context.Context, w io.Writer, endpoint, queue string) error {
	var payments fifoq.QueueClient
	if endpoint == "" {
		q, err := fifoq.New(queue)
		if err != nil {
			return err
		}
		payments = q
	} else {
		cfg, err := config.LoadDefaultConfig(ctx)
		if err != nil {
			return err
		}
		// On AWS: sqs.NewFromConfig(cfg). Here the endpoint is another SQS, such as fifoq serve.
		client := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(endpoint) })
		q, err := sqsadapter.Open(ctx, client, queue) // a queue's name or URL
		if err != nil {
			return err
		}
		payments = q
	}
	charges := []Charge{
		{"c-1", "alice", 1250}, {"c-2", "bob", 300}, {"c-3", "alice", 99},
		{"c-2", "bob", 300}, // a retry: deduplicated
	}
	if err := Charges(ctx, payments, charges); err != nil {
		return err
	}
	totals, err := Settle(ctx, payments)
	if err != nil {
		return err
	}
	var lines []string
	for account, cents := range totals {
		lines = append(lines, fmt.Sprintf("%s: %d.%02d", account, cents/100, cents%100))
	}
	slices.Sort(lines)
	_, err = fmt.Fprintln(w, strings.Join(lines, "\n"))
	return err
}

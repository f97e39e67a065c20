package sqsadapter

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/fifoq/fifoq"
)

// A Source is a [fifoq.Source] over one SQS queue, reached through an aws-sdk-go-v2 client: a
// [fifoq.Batcher] and a [fifoq.Consumer] run over it as they run over a *fifoq.Queue. Receive,
// DeleteBatch, ChangeVisibilityBatch and VisibilityTimeout each make one SQS call (none when their input is
// out of range); FIFO and Clock make none. A Source is safe for concurrent use by multiple goroutines, as
// the client is. Use New; the zero Source is not usable.
type Source struct {
	client *sqs.Client
	url    string
	fifo   bool
	clock  fifoq.Clock
}

// An Option configures a Source at New.
type Option func(*Source)

// WithClock sets the clock a Batcher and a Consumer over the Source time by (Source.Clock): the batch
// window, the handler timeout and the visibility heartbeat. The default is the real clock, which is
// the right one against SQS, and also inside a testing/synctest bubble. Against an in-process endpoint
// whose queues run on a [fifoq.ManualClock], give that clock, so that the Consumer's time and the queue's
// move together.
func WithClock(c fifoq.Clock) Option { return func(s *Source) { s.clock = c } }

// New returns a Source over the SQS queue at queueURL, through client: the same fifoq Batcher and Consumer
// run over real SQS (or any SQS endpoint). The queue is FIFO when the last segment of its URL ends in
// ".fifo", as SQS names FIFO queues. New makes no call; a wrong URL shows in the first Receive.
func New(client *sqs.Client, queueURL string, opts ...Option) *Source {
	s := &Source{
		client: client,
		url:    queueURL,
		fifo:   strings.HasSuffix(strings.TrimRight(queueURL, "/"), ".fifo"),
		clock:  realClock{},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// FIFO reports whether the queue is a FIFO queue, by its URL.
func (s *Source) FIFO() bool { return s.fifo }

// Clock returns the clock a Batcher and a Consumer over s time by: the real clock unless WithClock says
// otherwise.
func (s *Source) Clock() fifoq.Clock { return s.clock }

// VisibilityTimeout reads the queue's visibility timeout (its VisibilityTimeout attribute) with
// GetQueueAttributes; it makes s a [fifoq.VisibilitySource]. A Consumer whose BatchOptions give no
// visibility timeout calls it once, when Run starts, so that it can extend the visibility of the batches it
// is handling: long handlers keep their messages (and on FIFO queues, their groups) to themselves. Each
// call is one request; the value is not cached, since the attribute can change. When ctx is done it returns
// ctx's error and makes no request: fifoq.NewBatcher and fifoq.NewConsumer ask with a done context, for a
// source that knows the timeout without a call.
func (s *Source) VisibilityTimeout(ctx context.Context) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	out, err := s.client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(s.url),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameVisibilityTimeout},
	})
	if err != nil {
		return 0, mapError(err)
	}
	v, ok := out.Attributes[string(types.QueueAttributeNameVisibilityTimeout)]
	if !ok {
		return 0, fmt.Errorf("sqsadapter: GetQueueAttributes returned no VisibilityTimeout for %s", s.url)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("sqsadapter: GetQueueAttributes returned VisibilityTimeout %q for %s", v, s.url)
	}
	return time.Duration(n) * time.Second, nil
}

// DeleteBatch deletes 1..10 messages by receipt handle with one DeleteMessageBatch call. Entries that SQS
// reports failed come back in a *fifoq.BatchError, by their index in receiptHandles; an error that fails
// the whole call (no entries, more than 10, or an SQS or transport error) comes back alone. See the
// package documentation for how SQS errors match fifoq's sentinels.
func (s *Source) DeleteBatch(ctx context.Context, receiptHandles []string) error {
	if err := checkBatch(len(receiptHandles)); err != nil {
		return err
	}
	entries := make([]types.DeleteMessageBatchRequestEntry, len(receiptHandles))
	for i, h := range receiptHandles {
		entries[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(h)}
	}
	out, err := s.client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(s.url), Entries: entries})
	if err != nil {
		return mapError(err)
	}
	return batchError(out.Failed, len(entries))
}

// ChangeVisibilityBatch changes the visibility of 1..10 messages with one ChangeMessageVisibilityBatch
// call. SQS counts in whole seconds: a timeout is rounded up to the next second, so a message is never
// visible sooner than asked, and must be 0..12h (0 makes the message visible at once). Failed entries and whole-call errors come back as from
// DeleteBatch.
func (s *Source) ChangeVisibilityBatch(ctx context.Context, entries []fifoq.VisibilityChange) error {
	if err := checkBatch(len(entries)); err != nil {
		return err
	}
	in := make([]types.ChangeMessageVisibilityBatchRequestEntry, len(entries))
	for i, e := range entries {
		if err := e.Check(); err != nil {
			return fmt.Errorf("entry %d: %w", i, err)
		}
		in[i] = types.ChangeMessageVisibilityBatchRequestEntry{
			Id:                aws.String(strconv.Itoa(i)),
			ReceiptHandle:     aws.String(e.ReceiptHandle),
			VisibilityTimeout: seconds(e.Timeout),
		}
	}
	out, err := s.client.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{
		QueueUrl: aws.String(s.url),
		Entries:  in,
	})
	if err != nil {
		return mapError(err)
	}
	return batchError(out.Failed, len(in))
}

// checkBatch rejects a batch call of no entries, or of more than fifoq.MaxBatchEntries, as a *fifoq.Queue
// does, without a request.
func checkBatch(n int) error {
	if n == 0 {
		return fifoq.ErrEmptyBatch
	}
	return fifoq.CheckBatchLen(n)
}

// seconds rounds d up to whole seconds, SQS's unit; d is at most 12 hours.
func seconds(d time.Duration) int32 {
	return int32((d + time.Second - 1) / time.Second)
}

// realClock is the default clock: the time package's.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) fifoq.Timer { return time.AfterFunc(d, f) }

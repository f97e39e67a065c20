package sqsadapter_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// The workload of TestConsumerFIFOWorkload.
const (
	workGroups     = 8
	workPerGroup   = 50
	workMaxReceive = 10 // the source queue's maxReceiveCount
)

// workMessage is what the workload's handler does with one message, by its place in its group.
type workMessage struct {
	group, pos int
}

func (m workMessage) body() string { return fmt.Sprintf("g%d-%02d", m.group, m.pos) }

// poison messages fail every time and end in the dead-letter queue. Each is the last of its group, so no
// message behind it in a batch shares its receive counts (which would send those to the dead-letter
// queue with it, as on SQS and Lambda).
func (m workMessage) poison() bool { return m.pos == workPerGroup-1 && (m.group == 0 || m.group == 5) }

// failsOnce messages fail their first receive: the handler reports them as batch item failures.
func (m workMessage) failsOnce() bool { return m.pos%12 == 5 }

// failsBatch messages fail the whole batch they are in on their first receive: the handler returns a
// plain error.
func (m workMessage) failsBatch() bool { return m.pos == 23 && m.group%2 == 1 }

// slow messages make their batch take 45 s, past the 30 s visibility timeout: the Consumer's heartbeat
// must keep the batch (and its group) invisible meanwhile.
func (m workMessage) slow() bool { return m.pos == 0 && m.group == 2 }

func parseWork(body string) workMessage {
	var m workMessage
	if _, err := fmt.Sscanf(body, "g%d-%d", &m.group, &m.pos); err != nil {
		panic(fmt.Sprintf("body %q: %v", body, err))
	}
	return m
}

// TestConsumerFIFOWorkload runs a fifoq Consumer over sqsadapter, over aws-sdk-go-v2, over sqsapi, on a
// FIFO workload whose handler fails some messages (partial batch failures), some whole batches, and some
// messages always (to the dead-letter queue), and checks that every message is processed once, in send
// order within its group, that no two batches of one group run at once, and that batches of different
// groups do. It runs in a synctest bubble: the retries wait out visibility timeouts of virtual time.
func TestConsumerFIFOWorkload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := setup(t)
		dlq, _ := e.queue(t, "work-dlq.fifo", map[string]string{"FifoQueue": "true"})
		src, q := e.queue(t, "work.fifo", map[string]string{
			"FifoQueue":         "true",
			"VisibilityTimeout": "30",
			"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:work-dlq.fifo","maxReceiveCount":"` +
				strconv.Itoa(workMaxReceive) + `"}`,
		})

		// Send the groups interleaved, 10 messages a call, as producers of several customers would.
		url := e.url(t, "work.fifo")
		var sent []workMessage
		for pos := range workPerGroup {
			for g := range workGroups {
				sent = append(sent, workMessage{g, pos})
			}
		}
		for chunk := range slices.Chunk(sent, 10) {
			entries := make([]types.SendMessageBatchRequestEntry, len(chunk))
			for i, m := range chunk {
				entries[i] = types.SendMessageBatchRequestEntry{
					Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(m.body()),
					MessageGroupId: aws.String("g" + strconv.Itoa(m.group)), MessageDeduplicationId: aws.String(m.body()),
				}
			}
			out, err := e.client.SendMessageBatch(t.Context(), &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: entries})
			require.NoError(t, err)
			require.Empty(t, out.Failed)
		}
		want := make(map[int][]string) // per group, the bodies to process, in send order
		poisoned := 0
		for _, m := range sent {
			if m.poison() {
				poisoned++
				continue
			}
			want[m.group] = append(want[m.group], m.body())
		}

		var (
			mu         sync.Mutex // guards the fields below
			processed  = make(map[int][]string)
			count      int
			active     = make(map[string]bool) // groups with a batch in the handler
			overlaps   []string
			running    int
			maxRunning int
			outcomes   = make(map[fifoq.Outcome]int)
			failedOnce = make(map[string]bool)
		)
		done := make(chan struct{})
		handler := func(ctx context.Context, batch []fifoq.Delivery) error {
			groups := make(map[string]bool)
			mu.Lock()
			for _, d := range batch {
				if active[d.GroupID] && !groups[d.GroupID] {
					overlaps = append(overlaps, d.GroupID)
				}
				groups[d.GroupID] = true
			}
			for g := range groups {
				active[g] = true
			}
			running++
			maxRunning = max(maxRunning, running)
			mu.Unlock()
			defer func() {
				mu.Lock()
				for g := range groups {
					active[g] = false
				}
				running--
				mu.Unlock()
			}()

			work := time.Second // processing takes time, so batches of several groups overlap
			wholeFailure := false
			for _, d := range batch {
				m := parseWork(d.Body)
				if m.slow() {
					work = 45 * time.Second
				}
				if m.failsBatch() && d.ReceiveCount == 1 {
					wholeFailure = true
				}
			}
			time.Sleep(work)
			if wholeFailure {
				return errors.New("whole batch failed")
			}

			// As an SQS FIFO handler should with partial failures: once a message of a group fails, the rest
			// of the group in the batch fails unprocessed (spec 9.3.5).
			var failed []string
			failedGroup := make(map[string]bool)
			var ok []fifoq.Delivery
			mu.Lock()
			defer mu.Unlock()
			for _, d := range batch {
				m := parseWork(d.Body)
				switch {
				case failedGroup[d.GroupID]:
				case m.poison(), m.failsOnce() && !failedOnce[d.MessageID]:
					failedOnce[d.MessageID] = true
					failedGroup[d.GroupID] = true
				default:
					ok = append(ok, d)
					continue
				}
				failed = append(failed, d.MessageID)
			}
			for _, d := range ok {
				m := parseWork(d.Body)
				processed[m.group] = append(processed[m.group], d.Body)
				count++
			}
			if len(ok) > 0 && count == len(sent)-poisoned {
				close(done)
			}
			if len(failed) > 0 {
				return &fifoq.BatchItemFailures{MessageIDs: failed}
			}
			return nil
		}

		c, err := fifoq.NewConsumer(src, handler, fifoq.ConsumerOptions{
			Batch:                   fifoq.BatchOptions{Size: 10}, // Run asks the queue for its visibility timeout
			MaxConcurrency:          4,
			ReportBatchItemFailures: true,
			OnBatch: func(r fifoq.BatchReport) {
				mu.Lock()
				outcomes[r.Outcome]++
				mu.Unlock()
				if r.Outcome == fifoq.OutcomePanic || r.Outcome == fifoq.OutcomeTimeout {
					t.Errorf("batch %v: %v: %v", r.Groups, r.Outcome, r.Err)
				}
				if r.DeleteErr != nil {
					t.Errorf("batch %v: delete: %v", r.Groups, r.DeleteErr)
				}
			},
		})
		require.NoError(t, err)

		// The dead-letter queue has a consumer of its own, over the adapter too.
		var dead []fifoq.Delivery
		deadDone := make(chan struct{})
		dlqConsumer, err := fifoq.NewConsumer(dlq, func(_ context.Context, batch []fifoq.Delivery) error {
			mu.Lock()
			defer mu.Unlock()
			dead = append(dead, batch...)
			if len(batch) > 0 && len(dead) == poisoned {
				close(deadDone)
			}
			return nil
		}, fifoq.ConsumerOptions{})
		require.NoError(t, err)

		start := time.Now()
		ctx, cancel := context.WithCancel(t.Context())
		runErr := make(chan error, 2)
		go func() { runErr <- c.Run(ctx) }()
		go func() { runErr <- dlqConsumer.Run(ctx) }()
		for _, ch := range []chan struct{}{done, deadDone} {
			select {
			case <-ch:
			case <-time.After(24 * time.Hour): // virtual time: a guard against a lost message, not a wait
				cancel()
				mu.Lock()
				n := count
				mu.Unlock()
				t.Fatalf("workload not done after a virtual day: %d of %d processed", n, len(sent)-poisoned)
			}
		}
		took := time.Since(start)
		cancel()
		require.NoError(t, <-runErr)
		require.NoError(t, <-runErr)

		mu.Lock()
		defer mu.Unlock()
		require.Empty(t, overlaps, "groups handled by two batches at once")
		for g := range workGroups {
			require.Equal(t, want[g], processed[g], "group g%d: processed, in order", g)
		}
		require.Len(t, dead, poisoned)
		for _, d := range dead {
			require.True(t, parseWork(d.Body).poison(), "%s in the dead-letter queue", d.Body)
			require.Equal(t, "work.fifo", d.DeadLetterSource)
			require.Equal(t, workMaxReceive+1, d.ReceiveCount, "%s", d.Body)
		}
		require.Equal(t, fifoq.Stats{}, q.Stats(), "source queue left")
		require.GreaterOrEqual(t, maxRunning, 2, "batches of different groups ran at once")
		require.Positive(t, outcomes[fifoq.OutcomePartial], "partial failures")
		require.Positive(t, outcomes[fifoq.OutcomeError], "whole-batch failures")
		require.Positive(t, outcomes[fifoq.OutcomeSuccess], "successes")
		t.Logf("%d messages in %d groups: %d processed, %d to the dead-letter queue, in %v of virtual time; "+
			"%d batches at most at once; outcomes %v", len(sent), workGroups, count, len(dead), took, maxRunning, outcomes)
	})
}

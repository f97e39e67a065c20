// Command fanout shows fan-out / fan-in over a fifoq queue (seed 002): a ventilator splits a job into
// sub-tasks, processors run them in parallel through a Consumer, and a batch record decides when the last
// one has finished, so that a consolidator runs exactly once.
//
// The ventilator publishes the sub-tasks to a topic, as it would to SNS in front of SQS: the processors'
// queue is subscribed with raw delivery, so it gets each sub-task as it was published, and an audit queue
// is subscribed too, getting SNS's envelope of every sub-task for the job's record. Adding a consumer of
// the sub-tasks is a subscription, not a change to the ventilator.
//
// Delivery is at least once, so the processors see sub-tasks more than once: the ventilator sends some of
// them twice (as a ventilator retried after a timeout would), and some processors "crash" after recording
// their result but before the message is deleted, so the sub-task is delivered again. The batch record
// keeps a status per sub-task and changes it from pending to finished only once, in the same step that
// increments the finished counter, so a repeated sub-task is never counted twice. The delivery that makes
// finished reach total is the only one told it was last, so a redelivered last sub-task does not run the
// consolidator again.
//
//	go run ./examples/fanout
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/topic"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fanout:", err)
		os.Exit(1)
	}
}

// The job: count the words of a text, one line per sub-task.
const jobID = "count-words"

var text = []string{
	"a ventilator splits a large job into small sub-tasks",
	"and sends each sub-task to a queue",
	"processors take the sub-tasks from the queue in parallel",
	"each one does its part of the work",
	"and records its result in a batch record",
	"the batch record knows how many sub-tasks there are",
	"and how many have finished",
	"a queue delivers every message at least once",
	"so a sub-task can come back after it was done",
	"a conditional status per sub-task counts it only once",
	"when the last sub-task finishes",
	"the consolidator gathers the results exactly once",
}

// seed drives every injected failure, so each run prints the same numbers.
const seed = 2

// run runs the job and writes what happened to w. It fails if a sub-task was counted twice or the
// consolidator did not run exactly once.
func run(w io.Writer) error {
	// A standard queue: processors take sub-tasks in any order, many at once. A failed delivery comes back
	// at once (RetryImmediately below) instead of after the visibility timeout, so no time has to pass:
	// the queue runs on a manual clock that is never advanced, and waits only for messages.
	clk := fifoq.NewManualClock(time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC))
	q, err := fifoq.New("sub-tasks", fifoq.WithClock(clk))
	if err != nil {
		return err
	}
	// The topic the ventilator publishes to, and its two subscribers.
	tasks, err := topic.New("sub-tasks", topic.WithClock(clk))
	if err != nil {
		return err
	}
	if _, err := tasks.Subscribe(q, topic.SubscriptionAttributes{RawMessageDelivery: true}); err != nil {
		return err
	}
	audit, err := fifoq.New("audit", fifoq.WithClock(clk))
	if err != nil {
		return err
	}
	if _, err := tasks.Subscribe(audit, topic.SubscriptionAttributes{}); err != nil {
		return err
	}
	ctx := context.Background()

	db := newStore()
	rng := rand.New(rand.NewPCG(seed, 0))
	sent, err := ventilate(ctx, tasks, db, rng)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "ventilator: job %q split into %d sub-tasks, %d messages sent (%d sub-tasks sent twice)\n",
		jobID, len(text), sent, sent-len(text))
	if err := checkAudit(w, audit, tasks, sent); err != nil {
		return err
	}

	p := &processor{db: db, crashes: newChaos(seed, 40)}
	c, err := fifoq.NewConsumer(q, p.handle, fifoq.ConsumerOptions{
		Batch:            fifoq.BatchOptions{Size: 1}, // one sub-task per invocation, as in the seed
		MaxConcurrency:   4,
		RetryImmediately: true,
	})
	if err != nil {
		return err
	}
	// A one-shot job: run until every message is deleted, then go on.
	if err := c.RunUntilEmpty(ctx); err != nil {
		return err
	}

	b := db.batch(jobID)
	crashes := p.crashes.failures()
	fmt.Fprintf(w, "processors: %d deliveries of %d messages: %d crashes before the delete brought sub-tasks back (%d at random, 1 right after the consolidator)\n",
		p.deliveries.Load(), sent, crashes+1, crashes)
	fmt.Fprintf(w, "processors: %d sub-tasks counted, %d repeated deliveries ignored by the conditional status\n",
		p.counted.Load(), p.ignored.Load())
	fmt.Fprintf(w, "batch record: total %d, finished %d, status %s (an unconditional counter would read %d)\n",
		b.total, b.finished, b.status, p.deliveries.Load())
	fmt.Fprintf(w, "consolidator: ran %d time(s): %d words in %d lines\n", p.consolidations.Load(), b.words, b.total)

	switch want := countWords(text); {
	case b.finished != b.total || int(p.counted.Load()) != len(text):
		return fmt.Errorf("%d of %d sub-tasks counted", p.counted.Load(), len(text))
	case p.consolidations.Load() != 1:
		return fmt.Errorf("the consolidator ran %d times, want once", p.consolidations.Load())
	case b.words != want:
		return fmt.Errorf("consolidated %d words, want %d", b.words, want)
	}
	fmt.Fprintln(w, "every sub-task was counted once and the consolidator ran exactly once")
	return nil
}

// subTask is the body of a message: which job, which part of it.
type subTask struct {
	Job   string `json:"job"`
	Index int    `json:"index"`
	Line  string `json:"line"`
}

// ventilate creates the batch record, then publishes one message per sub-task. Some sub-tasks are published
// twice, chosen by rng, as by a ventilator that timed out waiting for an answer and published again.
func ventilate(ctx context.Context, tasks *topic.Topic, db *store, rng *rand.Rand) (sent int, err error) {
	if err := db.createBatch(jobID, len(text)); err != nil {
		return 0, err
	}
	for i, line := range text {
		body, err := json.Marshal(subTask{Job: jobID, Index: i, Line: line})
		if err != nil {
			return sent, err
		}
		copies := 1
		if rng.IntN(4) == 0 {
			copies = 2
		}
		for range copies {
			m := topic.Message{
				Message:    string(body),
				Attributes: map[string]fifoq.Attribute{"job": {DataType: "String", StringValue: jobID}},
			}
			if _, err := tasks.Publish(ctx, m); err != nil {
				return sent, err
			}
			sent++
		}
	}
	return sent, nil
}

// checkAudit reads the audit queue: one SNS envelope per message published, from the topic, each with its
// sub-task as the message and the job as an attribute.
func checkAudit(w io.Writer, audit *fifoq.Queue, tasks *topic.Topic, sent int) error {
	n := 0
	for s := range audit.Messages() {
		e, err := topic.ParseEnvelope(s.Body)
		if err != nil {
			return err
		}
		var t subTask
		if err := json.Unmarshal([]byte(e.Message), &t); err != nil {
			return err
		}
		if e.TopicARN != tasks.ARN() || e.MessageAttributes["job"].Value != t.Job {
			return fmt.Errorf("audit: envelope of topic %s, job %q, for a sub-task of job %q", e.TopicARN, e.MessageAttributes["job"].Value, t.Job)
		}
		n++
	}
	if n != sent {
		return fmt.Errorf("audit: %d envelopes, want %d", n, sent)
	}
	fmt.Fprintf(w, "audit: %d envelopes from topic %s, one per message published\n", n, tasks.ARN())
	return nil
}

// errCrash is the failure of a processor that crashed after its work, before the message was deleted.
var errCrash = errors.New("processor crashed before the delete")

// processor handles sub-tasks; it is the Lambda function of the seed.
type processor struct {
	db      *store
	crashes *chaos

	deliveries, counted, ignored, consolidations atomic.Int64
}

// handle processes one sub-task: it skips one already finished, does the work, and records the result
// under the conditional status. The delivery that finishes the last sub-task runs the consolidator.
func (p *processor) handle(ctx context.Context, batch []fifoq.Delivery) error {
	for _, d := range batch {
		p.deliveries.Add(1)
		var t subTask
		if err := json.Unmarshal([]byte(d.Body), &t); err != nil {
			return err
		}
		counted, last := false, false
		// A cheap check first (seed step 4): a sub-task that is finished needs no work. The conditional
		// update below is what makes it safe when two deliveries of one sub-task run at once.
		if p.db.status(t.Job, t.Index) == pending {
			counted, last = p.db.finish(t.Job, t.Index, len(strings.Fields(t.Line)))
		}
		if counted {
			p.counted.Add(1)
		} else {
			p.ignored.Add(1)
		}
		if last {
			p.consolidate(t.Job)
			// Crash right after: the last sub-task is delivered again, finds its status finished, and
			// is not last a second time.
			return errCrash
		}
		if p.crashes.fail(fmt.Sprint(t.Index)) {
			return errCrash
		}
	}
	return nil
}

// consolidate is the fan-in: it gathers the results of every sub-task of a job.
func (p *processor) consolidate(job string) {
	p.consolidations.Add(1)
	p.db.consolidate(job)
}

// The statuses of a sub-task and of a batch.
const (
	pending      = "pending"
	finished     = "finished"
	consolidated = "consolidated"
)

// store stands for the table of the seed (DynamoDB there): a batch record per job and a status per
// sub-task. One mutex makes each method a transaction with its condition.
type store struct {
	mu      sync.Mutex
	batches map[string]*batchRecord
}

type batchRecord struct {
	total, finished int
	status          string
	subTasks        []subTaskRecord
	words           int // the consolidated result
}

type subTaskRecord struct {
	status string
	words  int
}

func newStore() *store { return &store{batches: make(map[string]*batchRecord)} }

// createBatch creates the batch record of a job, on condition that there is none: a ventilator that runs
// twice does not start the job twice.
func (s *store) createBatch(job string, total int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.batches[job]; ok {
		return fmt.Errorf("batch %q exists", job)
	}
	b := &batchRecord{total: total, status: pending, subTasks: make([]subTaskRecord, total)}
	for i := range b.subTasks {
		b.subTasks[i].status = pending
	}
	s.batches[job] = b
	return nil
}

func (s *store) status(job string, i int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.batches[job].subTasks[i].status
}

// finish records the result of sub-task i and increments the finished counter, on condition that the
// sub-task is pending (seed step 4's transaction). counted reports whether it was; last whether this call
// made finished reach total, which is true for exactly one call.
func (s *store) finish(job string, i, words int) (counted, last bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.batches[job]
	if b.subTasks[i].status != pending {
		return false, false
	}
	b.subTasks[i] = subTaskRecord{status: finished, words: words}
	b.finished++
	return true, b.finished == b.total
}

// consolidate sums the results of a job's sub-tasks and closes its batch.
func (s *store) consolidate(job string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.batches[job]
	for _, t := range b.subTasks {
		b.words += t.words
	}
	b.status = consolidated
}

// batch returns a copy of a job's batch record.
func (s *store) batch(job string) batchRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.batches[job]
}

// chaos injects failures that do not depend on timing: a key chosen by the seed, with the given percent
// chance, fails on its first one or two attempts, whichever goroutine makes them.
type chaos struct {
	seed    uint64
	percent int

	mu       sync.Mutex
	attempts map[string]int
	failed   int
}

func newChaos(seed uint64, percent int) *chaos {
	return &chaos{seed: seed, percent: percent, attempts: make(map[string]int)}
}

// fail counts an attempt for key and reports whether it fails.
func (c *chaos) fail(key string) bool {
	h := fnv.New64a()
	h.Write([]byte(key))
	r := rand.New(rand.NewPCG(c.seed, h.Sum64()))
	failures := 0
	if r.IntN(100) < c.percent {
		failures = 1 + r.IntN(2)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.attempts[key]++
	if c.attempts[key] > failures {
		return false
	}
	c.failed++
	return true
}

// failures returns how many attempts failed.
func (c *chaos) failures() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failed
}

func countWords(lines []string) int {
	n := 0
	for _, l := range lines {
		n += len(strings.Fields(l))
	}
	return n
}

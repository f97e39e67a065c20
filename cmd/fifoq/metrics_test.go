package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"
)

// readMetrics is scrape without testify, for a goroutine other than the test's: each sample of the text
// format, by its name and labels as written (fifoq_queue_messages{queue="jobs",state="visible"}).
func readMetrics(ctx context.Context, client *http.Client, url string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %d", url, resp.StatusCode)
	}
	samples := make(map[string]float64)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			return nil, fmt.Errorf("line %q: no value", line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("line %q: %w", line, err)
		}
		samples[line[:i]] = v
	}
	return samples, sc.Err()
}

// queueSample is the key of a per-queue sample in a scrape; state is "" but for fifoq_queue_messages.
func queueSample(name, queue, state string) string {
	if state != "" {
		return name + `{queue="` + queue + `",state="` + state + `"}`
	}
	return name + `{queue="` + queue + `"}`
}

// queueCounters are the names of the per-queue counters, without the fifoq_queue_ prefix and _total suffix.
var queueCounters = []string{"sent_messages", "deduplicated_messages", "received_messages", "deleted_messages",
	"expired_messages", "purged_messages", "dead_letter_moved_out_messages", "dead_letter_moved_in_messages", "redrive_moved_out_messages",
	"redrive_moved_in_messages", "recovered_messages"}

// queueView is one queue's samples of one scrape.
type queueView struct {
	counters                   map[string]float64 // by the names of queueCounters
	visible, inFlight, delayed float64
	oldestAge                  float64
}

// view reads queue's samples out of a scrape; every one must be there.
func view(samples map[string]float64, queue string) (queueView, error) {
	v := queueView{counters: make(map[string]float64, len(queueCounters))}
	get := func(key string) (float64, error) {
		x, ok := samples[key]
		if !ok {
			return 0, fmt.Errorf("no sample %s", key)
		}
		return x, nil
	}
	var err error
	for _, c := range queueCounters {
		if v.counters[c], err = get(queueSample("fifoq_queue_"+c+"_total", queue, "")); err != nil {
			return v, err
		}
	}
	for _, s := range []struct {
		state string
		to    *float64
	}{{"visible", &v.visible}, {"in_flight", &v.inFlight}, {"delayed", &v.delayed}} {
		if *s.to, err = get(queueSample("fifoq_queue_messages", queue, s.state)); err != nil {
			return v, err
		}
	}
	v.oldestAge, err = get(queueSample("fifoq_queue_oldest_message_age_seconds", queue, ""))
	return v, err
}

// consistent checks what one scrape says of one queue on its own: its counters are those of one Metrics
// call, so the messages stored are what came in less what went out, exactly; counters of what the workload
// never does stay 0; the oldest age is 0 exactly when the queue is empty.
func (v queueView) consistent() error {
	c := v.counters
	stored := v.visible + v.inFlight + v.delayed
	in := c["recovered_messages"] + c["sent_messages"] + c["dead_letter_moved_in_messages"] + c["redrive_moved_in_messages"]
	out := c["deleted_messages"] + c["expired_messages"] + c["purged_messages"] + c["dead_letter_moved_out_messages"] + c["redrive_moved_out_messages"]
	var errs []error
	if stored != in-out {
		errs = append(errs, fmt.Errorf("visible %v + in_flight %v + delayed %v = %v, want recovered+sent+arrivals %v - deleted-expired-purged-moved %v = %v",
			v.visible, v.inFlight, v.delayed, stored, in, out, in-out))
	}
	if v.visible < 0 || v.inFlight < 0 || v.delayed != 0 {
		errs = append(errs, fmt.Errorf("visible %v, in_flight %v, delayed %v", v.visible, v.inFlight, v.delayed))
	}
	if v.inFlight > c["received_messages"]-c["deleted_messages"] {
		errs = append(errs, fmt.Errorf("in_flight %v > received %v - deleted %v: every message in flight was received, and not deleted",
			v.inFlight, c["received_messages"], c["deleted_messages"]))
	}
	for _, name := range []string{"expired_messages", "purged_messages", "redrive_moved_out_messages", "redrive_moved_in_messages", "recovered_messages"} {
		if c[name] != 0 {
			errs = append(errs, fmt.Errorf("%s_total %v, want 0", name, c[name]))
		}
	}
	if v.oldestAge < 0 || stored == 0 && v.oldestAge != 0 {
		errs = append(errs, fmt.Errorf("oldest_message_age_seconds %v with %v messages stored", v.oldestAge, stored))
	}
	return errors.Join(errs...)
}

// loadQueue is the tally the workload keeps of one source queue: what it started (counted before a request
// goes) and what the server acknowledged (counted after its response). A scrape in between sees the
// server's counters between the two: the acknowledged tally read before the scrape, the started one read
// after it.
type loadQueue struct {
	name, dlq string
	fifo      bool

	sendsStarted, sendsAcked atomic.Int64 // messages first sent
	dupsStarted, dupsAcked   atomic.Int64 // sends repeated with the same deduplication id (FIFO)
	// receiveCeil is 10 per receive started, less what its response did not use: never below the
	// messages the server has returned. delivered counts those messages as the consumers got them.
	receiveCeil, delivered     atomic.Int64
	deletesStarted, deleteAcks atomic.Int64 // messages in DeleteMessage(Batch) requests; deleted
	// exhausted counts the poison messages received maxReceiveCount times, when their last failure is
	// about to make them visible again: a move to the dead-letter queue needs that. exhaustedAcked counts
	// those whose ChangeMessageVisibility was acknowledged.
	exhausted, exhaustedAcked atomic.Int64

	mu     sync.Mutex
	poison []string // the bodies of the poison messages whose send was acknowledged
}

// settled reports whether every message of the queue is deleted or on its way to the dead-letter queue:
// then a receive returns nothing and moves the rest.
func (q *loadQueue) settled(total, poison int64) bool {
	return q.deleteAcks.Load() == total-poison && q.exhaustedAcked.Load() == poison
}

// The bounds of one source queue's counters, from the tally.
type bounds struct {
	sent, dups, received, deleted, exhausted int64
}

func (q *loadQueue) acked() bounds {
	return bounds{q.sendsAcked.Load(), q.dupsAcked.Load(), q.delivered.Load(), q.deleteAcks.Load(), 0}
}

func (q *loadQueue) started() bounds {
	return bounds{q.sendsStarted.Load(), q.dupsStarted.Load(), q.receiveCeil.Load(), q.deletesStarted.Load(), q.exhausted.Load()}
}

// TestServeMetricsUnderLoad scrapes /metrics of a running "fifoq serve" as fast as it answers while a
// concurrent workload goes through the SDK over loopback: 4 producers send to a standard queue and a FIFO
// queue, singly and in batches (and, on the FIFO queue, repeat some sends with the same deduplication id);
// 4 consumers receive 10 at a time and delete, but fail the poison messages with ChangeMessageVisibility 0
// until a receive moves them to their dead-letter queue (maxReceiveCount 2). During the run every scrape
// must show each queue consistent with itself (stored = in - out, from one Metrics call), every counter
// no lower than at the previous scrape, and each between what the workload had acknowledged before the
// scrape and what it had started by its end; and each move in both its source and its dead-letter queue.
// After it, the counters are exactly what the workload was acknowledged, and the dead-letter queues hold
// exactly the poison messages.
func TestServeMetricsUnderLoad(t *testing.T) {
	t.Parallel()
	const (
		producers       = 4
		consumers       = 4
		perProducer     = 120 // messages to each queue, in chunks of 10: a batch, then 10 single sends
		poisonEvery     = 10  // message i of a producer is poison when i%poisonEvery == 3
		dupEvery        = 8   // FIFO message i is sent again when i%dupEvery == 5
		maxReceiveCount = 2
		total           = producers * perProducer
		poisonTotal     = producers * perProducer / poisonEvery
		dupsTotal       = producers * perProducer / dupEvery
	)
	redrive := func(dlq string) string {
		return fmt.Sprintf(`RedrivePolicy={"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:%s","maxReceiveCount":%d}`,
			dlq, maxReceiveCount)
	}
	// Named so that each source sorts before its dead-letter queue: a scrape reads a source first (see
	// below).
	queues := []*loadQueue{{name: "jobs", dlq: "jobs_dlq"}, {name: "orders.fifo", dlq: "orders_dlq.fifo", fifo: true}}
	// The sources' visibility timeout is the longest SQS allows: a consumer that the machine stalls between
	// a receive and its delete still holds a valid receipt handle, so the test does not depend on speed (a
	// poison message comes back by ChangeMessageVisibility 0, not by the timeout).
	const vt = "VisibilityTimeout=43200,"
	c := startChild(t, "serve", "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0",
		"--queue", "jobs_dlq", "--queue", "jobs,"+vt+redrive("jobs_dlq"),
		"--queue", "orders_dlq.fifo", "--queue", "orders.fifo,"+vt+redrive("orders_dlq.fifo"))
	metricsURL := c.line()
	// The SDK's connections are closed before the stop: under concurrency the transport dials some that
	// carry no request, which would hold up the server's shutdown by net/http's 5 s rule for new
	// connections.
	transport := &http.Transport{MaxIdleConnsPerHost: producers + consumers}
	client := sqs.New(c.client().Options(), func(o *sqs.Options) { o.HTTPClient = &http.Client{Transport: transport} })
	url := func(name string) *string { return aws.String(c.endpoint + "/000000000000/" + name) }

	// Any error of a goroutine ends the workload: it cancels ctx with the error as its cause. There is no
	// time budget: a slow or stalled machine only makes the workload take longer, and a workload that never
	// ends is a hang that go test's -timeout reports with every goroutine's stack.
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	fail := func(format string, args ...any) { cancel(fmt.Errorf(format, args...)) }

	start := time.Now()
	// The producers stop half-way until the scraper has seen the workload there twice, so scrapes in the
	// middle of the workload happen however the machine schedules the scraper.
	midway := make(chan struct{})
	var workers sync.WaitGroup
	for p := range producers {
		workers.Go(func() {
			for chunk := 0; chunk < perProducer/10; chunk++ {
				if chunk == perProducer/20 {
					select {
					case <-midway:
					case <-ctx.Done():
						return
					}
				}
				for _, q := range queues {
					if !produce(ctx, client, url(q.name), q, p, chunk, poisonEvery, dupEvery, fail) {
						return
					}
				}
			}
		})
	}
	for i := range consumers {
		q := queues[i%len(queues)]
		workers.Go(func() { consume(ctx, client, url(q.name), q, total, poisonTotal, maxReceiveCount, fail) })
	}

	// The scraper, until the workload ends.
	workloadDone := make(chan struct{})
	type scrapeStats struct{ scrapes, midway int }
	scraped := make(chan scrapeStats, 1)
	var last map[string]float64 // the scraper's last scrape, read after scraped
	go func() {
		var st scrapeStats
		defer func() { scraped <- st }()
		hc := &http.Client{Transport: &http.Transport{}}
		defer hc.CloseIdleConnections()
		for {
			select {
			case <-workloadDone:
				return
			case <-ctx.Done():
				return
			default:
			}
			lower := make([]bounds, len(queues))
			for i, q := range queues {
				lower[i] = q.acked()
			}
			got, err := readMetrics(ctx, hc, metricsURL)
			if err != nil {
				if ctx.Err() == nil {
					fail("scrape %d: %w", st.scrapes+1, err)
				}
				return
			}
			upper := make([]bounds, len(queues))
			for i, q := range queues {
				upper[i] = q.started()
			}
			st.scrapes++
			if err := checkScrape(got, last, queues, lower, upper); err != nil {
				fail("scrape %d, %v after the start: %w", st.scrapes, time.Since(start), err)
				return
			}
			if sent := got[queueSample("fifoq_queue_sent_messages_total", "jobs", "")]; sent > 0 && sent < total {
				if st.midway++; st.midway == 2 {
					close(midway)
				}
			}
			last = got
		}
	}()

	workers.Wait()
	close(workloadDone)
	st := <-scraped
	require.NoError(t, context.Cause(ctx), "the workload")
	elapsed := time.Since(start)

	// After the workload: the counters are what it was acknowledged, exactly.
	got := scrape(t, metricsURL)
	require.NoError(t, checkScrape(got, last, queues, nil, nil), "the scrape after the workload")
	for _, q := range queues {
		src, err := view(got, q.name)
		require.NoError(t, err)
		require.Equal(t, map[string]float64{
			"sent_messages": total, "deduplicated_messages": float64(q.dupsAcked.Load()),
			"received_messages": float64(q.delivered.Load()), "deleted_messages": total - poisonTotal,
			"expired_messages": 0, "purged_messages": 0, "dead_letter_moved_out_messages": poisonTotal,
			"dead_letter_moved_in_messages": 0, "redrive_moved_out_messages": 0, "redrive_moved_in_messages": 0, "recovered_messages": 0,
		}, src.counters, "%s: counters after the workload", q.name)
		require.Equal(t, float64(q.sendsAcked.Load()), src.counters["sent_messages"], q.name)
		require.Equal(t, float64(q.deleteAcks.Load()), src.counters["deleted_messages"], q.name)
		require.Equal(t, float64(q.exhaustedAcked.Load()), src.counters["dead_letter_moved_out_messages"], q.name)
		require.Equal(t, int64(total-poisonTotal+poisonTotal*maxReceiveCount), q.delivered.Load(),
			"%s: each message received once, each poison message %d times", q.name, maxReceiveCount)
		require.Zero(t, src.visible+src.inFlight+src.delayed, "%s: empty", q.name)
		dups := 0
		if q.fifo {
			dups = dupsTotal
		}
		require.Equal(t, int64(dups), q.dupsAcked.Load(), q.name)

		dlq, err := view(got, q.dlq)
		require.NoError(t, err)
		require.Equal(t, float64(poisonTotal), dlq.counters["dead_letter_moved_in_messages"], q.dlq)
		require.Equal(t, float64(poisonTotal), dlq.visible, "%s: every move waits there", q.dlq)

		// What the dead-letter queue holds: the poison messages, each once.
		var found []string
		for {
			out, err := client.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: url(q.dlq), MaxNumberOfMessages: 10,
				VisibilityTimeout: 3600, MessageSystemAttributeNames: []types.MessageSystemAttributeName{"ApproximateReceiveCount"}})
			require.NoError(t, err)
			if len(out.Messages) == 0 {
				break
			}
			var entries []types.DeleteMessageBatchRequestEntry
			for i, m := range out.Messages {
				found = append(found, aws.ToString(m.Body))
				require.Equal(t, strconv.Itoa(maxReceiveCount+1), m.Attributes["ApproximateReceiveCount"],
					"the receive count goes on in the dead-letter queue")
				entries = append(entries, types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
			}
			del, err := client.DeleteMessageBatch(t.Context(), &sqs.DeleteMessageBatchInput{QueueUrl: url(q.dlq), Entries: entries})
			require.NoError(t, err)
			require.Len(t, del.Successful, len(entries))
		}
		q.mu.Lock()
		require.ElementsMatch(t, q.poison, found, "%s: the poison messages", q.dlq)
		q.mu.Unlock()
		require.Len(t, found, int(src.counters["dead_letter_moved_out_messages"]), "%s: the moves are the messages found in %s", q.name, q.dlq)
	}
	final := scrape(t, metricsURL)
	require.NoError(t, checkScrape(final, got, queues, nil, nil), "the scrape after the dead-letter queues were emptied")
	for _, q := range queues {
		dlq, err := view(final, q.dlq)
		require.NoError(t, err)
		require.Equal(t, []float64{poisonTotal, poisonTotal, poisonTotal, 0},
			[]float64{dlq.counters["dead_letter_moved_in_messages"], dlq.counters["received_messages"], dlq.counters["deleted_messages"],
				dlq.visible + dlq.inFlight + dlq.delayed}, "%s: arrivals, received, deleted, stored", q.dlq)
	}
	transport.CloseIdleConnections()
	c.stop(syscall.SIGTERM)
	require.NotContains(t, c.stderr.String(), "level=ERROR")
	t.Logf("%d messages to each of 2 queues (%d poison, %d duplicate sends), %d producers, %d consumers: %v; %d scrapes during the workload, %d of them with jobs partly sent",
		total, poisonTotal, dupsTotal, producers, consumers, elapsed.Round(time.Millisecond), st.scrapes, st.midway)
	require.Greater(t, st.midway, 1, "scrapes in the middle of the workload")
}

// checkScrape checks a scrape taken during or after the workload: every queue consistent with itself; every
// counter no lower than in prev (if not nil); each source's move counted in its dead-letter queue (which a
// scrape reads after it, and which the move reaches under the source's lock); and, with lower and upper
// (the tally of queues[i] before and after the scrape), the sources' counters between the two.
func checkScrape(got, prev map[string]float64, queues []*loadQueue, lower, upper []bounds) error {
	var errs []error
	for key, v := range prev {
		if strings.HasPrefix(key, "fifoq_") && strings.Contains(key, "_total{") && got[key] < v {
			errs = append(errs, fmt.Errorf("%s went down from %v to %v", key, v, got[key]))
		}
	}
	for i, q := range queues {
		src, err := view(got, q.name)
		if err != nil {
			return err
		}
		dlq, err := view(got, q.dlq)
		if err != nil {
			return err
		}
		if err := src.consistent(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", q.name, err))
		}
		if err := dlq.consistent(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", q.dlq, err))
		}
		moves, arrivals := src.counters["dead_letter_moved_out_messages"], dlq.counters["dead_letter_moved_in_messages"]
		if moves > arrivals {
			errs = append(errs, fmt.Errorf("%s: dead_letter_moved_out_messages %v > dead_letter_moved_in_messages %v of %s, read after it",
				q.name, moves, arrivals, q.dlq))
		}
		if lower == nil {
			continue
		}
		if dlq.counters["received_messages"] != 0 || dlq.inFlight != 0 {
			errs = append(errs, fmt.Errorf("%s: received %v, in flight %v: nothing receives from it during the workload",
				q.dlq, dlq.counters["received_messages"], dlq.inFlight))
		}
		for _, b := range []struct {
			name   string
			v      float64
			lo, hi int64
		}{
			{"sent_messages", src.counters["sent_messages"], lower[i].sent, upper[i].sent},
			{"deduplicated_messages", src.counters["deduplicated_messages"], lower[i].dups, upper[i].dups},
			{"received_messages", src.counters["received_messages"], lower[i].received, upper[i].received},
			{"deleted_messages", src.counters["deleted_messages"], lower[i].deleted, upper[i].deleted},
			{"dead_letter_moved_out_messages", moves, 0, upper[i].exhausted},
			{"dead_letter_moved_in_messages of " + q.dlq, arrivals, 0, upper[i].exhausted},
		} {
			if b.v < float64(b.lo) || b.v > float64(b.hi) {
				errs = append(errs, fmt.Errorf("%s: %s_total %v, want between %d (acknowledged before the scrape) and %d (started by its end)",
					q.name, b.name, b.v, b.lo, b.hi))
			}
		}
	}
	return errors.Join(errs...)
}

// produce sends producer p's chunk of 10 messages to q: in one SendMessageBatch for an even chunk, in 10
// SendMessage for an odd one. On a FIFO queue each message has a deduplication id, some are sent again with
// it (suppressed), and the poison ones have a group each, so that their failures hold up no other message.
// It reports false after an error, which it gave to fail.
func produce(ctx context.Context, client *sqs.Client, url *string, q *loadQueue, p, chunk, poisonEvery, dupEvery int,
	fail func(string, ...any)) bool {
	type msg struct{ body, group, dedup string }
	msgs := make([]msg, 10)
	var poison []string
	for j := range msgs {
		i := chunk*10 + j
		m := msg{body: fmt.Sprintf("%s p%d m%d", q.name, p, i)}
		if i%poisonEvery == 3 {
			m.body = "poison " + m.body
			poison = append(poison, m.body)
		}
		if q.fifo {
			// Ids of alphanumeric characters and punctuation, no spaces.
			m.group, m.dedup = fmt.Sprintf("p%d-g%d", p, i%3), strings.ReplaceAll(m.body, " ", "-")
			if strings.HasPrefix(m.body, "poison") {
				m.group = m.dedup
			}
		}
		msgs[j] = m
	}
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return aws.String(s)
	}
	ids := make(map[string]string) // by body
	if chunk%2 == 0 {
		entries := make([]types.SendMessageBatchRequestEntry, len(msgs))
		for j, m := range msgs {
			entries[j] = types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(j)), MessageBody: aws.String(m.body),
				MessageGroupId: opt(m.group), MessageDeduplicationId: opt(m.dedup)}
		}
		q.sendsStarted.Add(int64(len(entries)))
		out, err := client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: url, Entries: entries})
		if err != nil {
			fail("SendMessageBatch to %s: %w", q.name, err)
			return false
		}
		q.sendsAcked.Add(int64(len(out.Successful)))
		if len(out.Failed) > 0 {
			fail("SendMessageBatch to %s: failed entries %s", q.name, batchErrors(out.Failed))
			return false
		}
		for _, e := range out.Successful {
			j, _ := strconv.Atoi(aws.ToString(e.Id))
			ids[msgs[j].body] = aws.ToString(e.MessageId)
		}
	} else {
		for _, m := range msgs {
			q.sendsStarted.Add(1)
			out, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: url, MessageBody: aws.String(m.body),
				MessageGroupId: opt(m.group), MessageDeduplicationId: opt(m.dedup)})
			if err != nil {
				fail("SendMessage to %s: %w", q.name, err)
				return false
			}
			q.sendsAcked.Add(1)
			ids[m.body] = aws.ToString(out.MessageId)
		}
	}
	q.mu.Lock()
	q.poison = append(q.poison, poison...)
	q.mu.Unlock()
	if !q.fifo {
		return true
	}
	for j, m := range msgs {
		if (chunk*10+j)%dupEvery != 5 {
			continue
		}
		q.dupsStarted.Add(1)
		out, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: url, MessageBody: aws.String(m.body),
			MessageGroupId: opt(m.group), MessageDeduplicationId: opt(m.dedup)})
		if err != nil {
			fail("SendMessage of a duplicate to %s: %w", q.name, err)
			return false
		}
		q.dupsAcked.Add(1)
		if id := aws.ToString(out.MessageId); id != ids[m.body] {
			fail("%s: a duplicate of %s got MessageId %s, want %s", q.name, m.body, id, ids[m.body])
			return false
		}
	}
	return true
}

// consume receives from q, 10 at a time, until every message is settled (see loadQueue.settled) and a
// receive after that returned nothing. It deletes the messages, alternately one DeleteMessageBatch and
// single DeleteMessage calls, and fails the poison ones with ChangeMessageVisibility 0 (batched on a FIFO
// queue), which a later receive moves to the dead-letter queue after maxReceiveCount receives.
func consume(ctx context.Context, client *sqs.Client, url *string, q *loadQueue, total, poison int64, maxReceiveCount int,
	fail func(string, ...any)) {
	for round := 0; ; round++ {
		settled := q.settled(total, poison)
		q.receiveCeil.Add(10)
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url, MaxNumberOfMessages: 10,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{"ApproximateReceiveCount"}})
		if err != nil {
			if ctx.Err() == nil {
				fail("ReceiveMessage from %s: %w", q.name, err)
			}
			return
		}
		q.delivered.Add(int64(len(out.Messages)))
		q.receiveCeil.Add(int64(len(out.Messages) - 10))
		if settled {
			if len(out.Messages) > 0 {
				fail("%s: %d messages received after every message was deleted or failed for good", q.name, len(out.Messages))
			}
			return
		}
		var deletes, failures []types.Message
		var exhausted int64
		for _, m := range out.Messages {
			if !strings.HasPrefix(aws.ToString(m.Body), "poison") {
				deletes = append(deletes, m)
				continue
			}
			failures = append(failures, m)
			if n, _ := strconv.Atoi(m.Attributes["ApproximateReceiveCount"]); n == maxReceiveCount {
				exhausted++
			}
		}

		// The failures first: the last ones of a poison message make it visible for its move.
		q.exhausted.Add(exhausted)
		if q.fifo && len(failures) > 0 {
			var entries []types.ChangeMessageVisibilityBatchRequestEntry
			for i, m := range failures {
				entries = append(entries, types.ChangeMessageVisibilityBatchRequestEntry{Id: aws.String(strconv.Itoa(i)),
					ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0})
			}
			out, err := client.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: url, Entries: entries})
			if err != nil {
				if ctx.Err() == nil {
					fail("ChangeMessageVisibilityBatch on %s: %w", q.name, err)
				}
				return
			}
			if len(out.Failed) > 0 {
				fail("ChangeMessageVisibilityBatch on %s: failed entries %s", q.name, batchErrors(out.Failed))
				return
			}
		} else {
			for _, m := range failures {
				_, err := client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: url,
					ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0})
				if err != nil {
					if ctx.Err() == nil {
						fail("ChangeMessageVisibility on %s: %w", q.name, err)
					}
					return
				}
			}
		}
		q.exhaustedAcked.Add(exhausted)

		if round%2 == 0 && len(deletes) > 0 {
			entries := make([]types.DeleteMessageBatchRequestEntry, len(deletes))
			for i, m := range deletes {
				entries[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle}
			}
			q.deletesStarted.Add(int64(len(entries)))
			out, err := client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: url, Entries: entries})
			if err != nil {
				if ctx.Err() == nil {
					fail("DeleteMessageBatch on %s: %w", q.name, err)
				}
				return
			}
			q.deleteAcks.Add(int64(len(out.Successful)))
			if len(out.Failed) > 0 {
				fail("DeleteMessageBatch on %s: failed entries %s", q.name, batchErrors(out.Failed))
				return
			}
			continue
		}
		for _, m := range deletes {
			q.deletesStarted.Add(1)
			if _, err := client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: url, ReceiptHandle: m.ReceiptHandle}); err != nil {
				if ctx.Err() == nil {
					fail("DeleteMessage on %s: %w", q.name, err)
				}
				return
			}
			q.deleteAcks.Add(1)
		}
	}
}

// batchErrors formats the failed entries of a batch.
func batchErrors(failed []types.BatchResultErrorEntry) string {
	s := make([]string, len(failed))
	for i, e := range failed {
		s[i] = fmt.Sprintf("%s: %s %s", aws.ToString(e.Id), aws.ToString(e.Code), aws.ToString(e.Message))
	}
	return strings.Join(s, "; ")
}

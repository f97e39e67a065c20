// Command strictorder replays a database's change log through a FIFO queue into a Lambda-style Consumer, the
// set-up of seed 000 ("Strict Order FIFO Q working with Lambda"), and proves that the copy of the table it
// builds is right even though the consumer fails at random and some events can never be applied.
//
// The rules it shows:
//
//   - Order holds within a message group. The group id is the account, so each account's inserts, updates
//     and deletes are applied in the order they were committed, while different accounts run in parallel
//     (at most one batch per group at a time: concurrency is bounded by the number of groups).
//   - A failure blocks its group. A failed message comes back after its visibility timeout, and the messages
//     behind it in its group wait for it; other groups go on.
//   - The dead-letter queue unblocks it. After maxReceiveCount (5) receives, a poison message moves to the
//     dead-letter queue and its group moves on.
//   - Delivery is at least once. The handler is idempotent: an event applied twice changes nothing.
//
// The settings are the seed's proof of concept: a FIFO queue with a FIFO dead-letter queue, maxReceiveCount
// 5, a visibility timeout of 6x the handler (function) timeout, batches of 10. The clock is real but short,
// a 50 ms handler timeout and so a 300 ms visibility timeout, so the run takes a few seconds:
//
//	go run ./examples/strictorder
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fifoq/fifoq"
)

const (
	handlerTimeout  = 50 * time.Millisecond
	visibility      = 6 * handlerTimeout // the seed's rule: 6x the function timeout
	maxReceiveCount = 5                  // the seed's rule: then to the dead-letter queue
	batchSize       = 10                 // the most Lambda allows on a FIFO queue
	seed            = 5                  // of the random choices: the output is the same on every run
)

// The change log, in two bursts: the second is committed once the first has settled. Each line is one
// account's changes in commit order; publish interleaves the accounts at random (seeded).
//
// Two events are poison, which no retry can apply: bob's update of a row he deleted, and carol's "upsert",
// an operation the consumer does not know. Each is its account's last change in the first burst, because
// the events queued behind a poison event in its group are received with it on every try and so would
// follow it to the dead-letter queue (the seed: "消息则会全部被送往 DLQ"). The second burst shows bob's and
// carol's groups moving on once their poison event is out of the way.
var bursts = [][]string{
	{
		"alice: insert 100, update 130, update 90, update 95",
		"bob:   insert 50, update 70, delete, update 80",
		"carol: insert 10, update 20, update 30, upsert 35",
		"dave:  insert 500, update 450, delete, insert 10, update 15",
		"erin:  insert 1, update 2, update 3, update 4, update 5, update 6",
	},
	{
		"alice: update 100, delete",
		"bob:   insert 80, update 85",
		"carol: update 40",
		"dave:  update 20",
		"erin:  update 7, update 8",
	},
}

func main() {
	start := time.Now()
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "strictorder:", err)
		os.Exit(1)
	}
	fmt.Printf("\n(ran in %v)\n", time.Since(start).Round(10*time.Millisecond))
}

// run sends the change log through the queue to the consumer and reports on the table it built.
func run(w io.Writer) error {
	dlq, err := fifoq.New("account-changes-dlq.fifo") // a FIFO queue's DLQ must be FIFO too
	if err != nil {
		return err
	}
	q, err := fifoq.New("account-changes.fifo",
		fifoq.WithVisibilityTimeout(visibility),
		fifoq.WithDeadLetterQueue(dlq, maxReceiveCount),
	)
	if err != nil {
		return err
	}
	db := newDatabase()
	c, err := fifoq.NewConsumer(q, db.handle, fifoq.ConsumerOptions{
		Batch:                   fifoq.BatchOptions{Size: batchSize, Strict: true}, // reject what Lambda rejects
		MaxConcurrency:          len(bursts[0]),                                    // one batch per account at most
		HandlerTimeout:          handlerTimeout,
		ReportBatchItemFailures: true, // the handler names the events it could not apply
		// RetryImmediately stays false: as on Lambda, a failed message waits out its visibility timeout.
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: group id = account, visibility timeout %v = 6x the %v handler timeout\n",
		q.Name(), visibility, handlerTimeout)
	fmt.Fprintf(w, "%s: its dead-letter queue, after %d receives\n", dlq.Name(), maxReceiveCount)
	fmt.Fprintf(w, "consumer: batches of up to %d, failures reported per event\n\n", batchSize)

	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- c.Run(ctx) }()
	log, err := publish(w, q, dlq)
	cancel()
	if err := errors.Join(err, <-ran); err != nil {
		return err
	}
	return report(w, log, db, dlq)
}

// publish sends each burst of the change log to q and waits for it to settle before the next one. It
// returns the whole log.
func publish(w io.Writer, q, dlq *fifoq.Queue) ([]change, error) {
	r := rand.New(rand.NewPCG(seed, 0))
	var log []change
	for i, lines := range bursts {
		burst, err := interleave(r, lines, len(log))
		if err != nil {
			return nil, err
		}
		for _, c := range burst {
			// The account is the group: its events stay in order. The log position is the deduplication
			// id, so a producer that sends an event twice (say, after a timeout) stores it once.
			body, _ := json.Marshal(c)
			m := fifoq.Message{GroupID: c.Account, DeduplicationID: strconv.Itoa(c.Seq), Body: string(body)}
			if _, err := q.Send(context.Background(), m); err != nil {
				return nil, err
			}
		}
		log = append(log, burst...)
		if err := settle(q); err != nil {
			return nil, err
		}
		fmt.Fprintf(w, "burst %d: events #%d..#%d sent and settled; %d in the dead-letter queue\n",
			i+1, burst[0].Seq, burst[len(burst)-1].Seq, dlq.Stats().Visible)
	}
	return log, nil
}

// settle waits until q is empty: every event is applied or in the dead-letter queue.
func settle(q *fifoq.Queue) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(30 * time.Second)
	for q.Stats() != (fifoq.Stats{}) {
		select {
		case <-tick.C:
		case <-timeout:
			return fmt.Errorf("%s did not settle in 30s: %+v", q.Name(), q.Stats())
		}
	}
	return nil
}

// A change is one event of the change log: a row of the balances table inserted, updated or deleted.
type change struct {
	Seq     int    `json:"seq"` // position in the log
	Account string `json:"account"`
	Op      string `json:"op"`
	Balance int    `json:"balance,omitempty"`
}

func (c change) String() string { return fmt.Sprintf("#%d", c.Seq) }

// interleave merges the accounts' changes into one log, as a database commits them: accounts in a random
// order, each account's changes in its own order, numbered from after.
func interleave(r *rand.Rand, lines []string, after int) ([]change, error) {
	var accounts [][]change
	for _, line := range lines {
		cs, err := parse(line)
		if err != nil {
			return nil, err
		}
		accounts = append(accounts, cs)
	}
	var log []change
	for len(accounts) > 0 {
		i := r.IntN(len(accounts))
		c := accounts[i][0]
		c.Seq = after + len(log) + 1
		log = append(log, c)
		if accounts[i] = accounts[i][1:]; len(accounts[i]) == 0 {
			accounts = slices.Delete(accounts, i, i+1)
		}
	}
	return log, nil
}

// parse reads one account's changes: "bob: insert 50, update 70, delete".
func parse(line string) ([]change, error) {
	account, ops, _ := strings.Cut(line, ":")
	var cs []change
	for op := range strings.SplitSeq(ops, ",") {
		f := strings.Fields(op)
		c := change{Account: account, Op: f[0]}
		if len(f) > 1 {
			var err error
			if c.Balance, err = strconv.Atoi(f[1]); err != nil {
				return nil, fmt.Errorf("%q: %w", line, err)
			}
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// A table is the balances table, and for each account the events applied to its row, in order.
type table struct {
	rows    map[string]int
	applied map[string][]int // account: seqs
}

func newTable() *table { return &table{rows: map[string]int{}, applied: map[string][]int{}} }

// equal reports whether t and u have the same rows, built by the same events in the same order.
func (t *table) equal(u *table) bool {
	return maps.Equal(t.rows, u.rows) && maps.EqualFunc(t.applied, u.applied, slices.Equal)
}

// apply applies one change, or changes nothing and says why not.
func (t *table) apply(c change) error {
	_, exists := t.rows[c.Account]
	switch {
	case c.Op == "insert" && exists:
		return fmt.Errorf("%v: insert: %s exists", c, c.Account)
	case (c.Op == "update" || c.Op == "delete") && !exists:
		return fmt.Errorf("%v: %s: no row %s", c, c.Op, c.Account)
	case c.Op == "insert" || c.Op == "update":
		t.rows[c.Account] = c.Balance
	case c.Op == "delete":
		delete(t.rows, c.Account)
	default:
		return fmt.Errorf("%v: unknown operation %q", c, c.Op)
	}
	t.applied[c.Account] = append(t.applied[c.Account], c.Seq)
	return nil
}

// A database holds the table the consumer builds. Its writes fail at random.
type database struct {
	mu     sync.Mutex
	t      *table
	done   map[int]bool // events applied
	tried  map[int]bool // events whose write was attempted
	flakes int          // writes that failed at random
}

func newDatabase() *database {
	return &database{t: newTable(), done: map[int]bool{}, tried: map[int]bool{}}
}

var errFlaky = errors.New("database: connection reset")

// flaky reports whether the first write of event seq fails: one in four, each event's fate drawn from a
// generator seeded with its seq, so it is the same whatever the goroutines' timing.
//
// A failure sends back the failed event and those behind it in its group, each counting a receive, so an
// event's receive count grows with the flaky events ahead of it in its burst. With this seed an account has
// at most one flaky event in a burst, far from the 5 receives that would take a sound event to the
// dead-letter queue (TestFlakyWrites checks it).
func flaky(seq int) bool { return rand.New(rand.NewPCG(seed, uint64(seq))).IntN(4) == 0 }

// handle is the Lambda function. It applies a batch's events in order. At the first one that fails in a
// group it stops that group: the events behind it must not be applied before it. It reports the failed
// event and the skipped ones (as Lambda asks of FIFO handlers; fifoq adds the skipped ones anyway), and
// the Consumer deletes the rest of the batch.
func (db *database) handle(_ context.Context, batch []fifoq.Delivery) error {
	var failed []string
	stopped := map[string]bool{} // groups with a failed event in this batch
	for _, d := range batch {
		if stopped[d.GroupID] || db.write(d.Body) != nil {
			stopped[d.GroupID] = true
			failed = append(failed, d.MessageID)
		}
	}
	if failed != nil {
		return &fifoq.BatchItemFailures{MessageIDs: failed}
	}
	return nil
}

// write applies one event. Delivery is at least once: an event can come back after it was applied (if, say,
// its visibility timeout ran out before the delete), so a repeat is skipped.
func (db *database) write(body string) error {
	var c change
	if err := json.Unmarshal([]byte(body), &c); err != nil {
		return err
	}
	db.mu.Lock() // one write at a time, as a database row lock would; batches of other accounts run meanwhile
	defer db.mu.Unlock()
	if db.done[c.Seq] {
		return nil
	}
	if !db.tried[c.Seq] && flaky(c.Seq) {
		db.tried[c.Seq] = true
		db.flakes++
		return errFlaky
	}
	db.tried[c.Seq] = true
	if err := db.t.apply(c); err != nil {
		return err
	}
	db.done[c.Seq] = true
	return nil
}

// report prints the table, the dead-letter queue, and the check: the table is what applying each account's
// events in log order gives, leaving out the events in the dead-letter queue.
func report(w io.Writer, log []change, db *database, dlq *fifoq.Queue) error {
	fmt.Fprintf(w, "\n%d events failed their first write at random; they and the events behind them in their\n", db.flakes)
	fmt.Fprintf(w, "group came back after the visibility timeout, and were applied in order on a later try\n")
	printTable(w, db.t)
	dead, err := printDeadLetters(w, dlq, db.t)
	if err != nil {
		return err
	}
	want := newTable()
	for _, c := range log {
		if !dead[c.Seq] {
			if err := want.apply(c); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(w, "\ncheck: table == events applied in order per account: %v\n", want.equal(db.t))
	return nil
}

// printTable prints each account's row, or "deleted", and the events applied to it.
func printTable(w io.Writer, t *table) {
	fmt.Fprintf(w, "\ntable: account, balance, events applied in order\n")
	for _, account := range slices.Sorted(maps.Keys(t.applied)) {
		balance := "deleted"
		if b, ok := t.rows[account]; ok {
			balance = strconv.Itoa(b)
		}
		fmt.Fprintf(w, "  %-6s %7s  %s\n", account, balance, seqs(t.applied[account]))
	}
}

// printDeadLetters prints the messages of dlq in log order, each with the events of its account applied
// after it, and returns their seqs.
func printDeadLetters(w io.Writer, dlq *fifoq.Queue, t *table) (map[int]bool, error) {
	type deadLetter struct {
		fifoq.Snapshot
		change
	}
	var dls []deadLetter
	for s := range dlq.Messages() { // a look that does not receive them
		dl := deadLetter{Snapshot: s}
		if err := json.Unmarshal([]byte(s.Body), &dl.change); err != nil {
			return nil, err
		}
		dls = append(dls, dl)
	}
	slices.SortFunc(dls, func(a, b deadLetter) int { return a.Seq - b.Seq })

	fmt.Fprintf(w, "\ndead-letter queue %s:\n", dlq.Name())
	dead := map[int]bool{}
	for _, dl := range dls {
		dead[dl.Seq] = true
		var later []int
		for _, seq := range t.applied[dl.Account] {
			if seq > dl.Seq {
				later = append(later, seq)
			}
		}
		fmt.Fprintf(w, "  %s\n    received %d times, from %s; %s's group moved on: %s applied after it\n",
			dl.Body, dl.ReceiveCount, dl.DeadLetterSource, dl.Account, seqs(later))
	}
	return dead, nil
}

func seqs(ss []int) string {
	var b strings.Builder
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "#%d", s)
	}
	return b.String()
}

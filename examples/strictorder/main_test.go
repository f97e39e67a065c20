package main

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/fifoqtest"
)

// TestRun runs the example inside a synctest bubble, where the queues' real clock is virtual: the two
// seconds the program takes on its own (the poison events wait out five visibility timeouts) pass at once,
// and no handler can miss its 50 ms timeout on a slow machine. It checks what the program claims: the
// table is the events applied in order per account, and the dead-letter queue holds the two poison events
// and nothing else.
func TestRun(t *testing.T) {
	var out strings.Builder
	synctest.Test(t, func(t *testing.T) {
		if err := run(&out); err != nil {
			t.Fatalf("run: %v; output so far:\n%s", err, out.String())
		}
	})
	got := out.String()

	// Each line, in this order, in the output. The random choices are seeded, so the output is the same
	// on every run, whatever the timing.
	want := []string{
		"burst 1: events #1..#23 sent and settled; 2 in the dead-letter queue",
		"burst 2: events #24..#31 sent and settled; 2 in the dead-letter queue",
		"8 events failed their first write at random",
		"table: account, balance, events applied in order",
		"  alice  deleted  #4 #6 #12 #15 #26 #27\n",
		"  bob         85  #8 #10 #16 #24 #28\n",
		"  carol       40  #1 #2 #3 #30\n",
		"  dave        20  #7 #18 #19 #20 #23 #29\n",
		"  erin         8  #5 #9 #11 #13 #21 #22 #25 #31\n",
		"dead-letter queue account-changes-dlq.fifo:\n",
		`  {"seq":14,"account":"carol","op":"upsert","balance":35}`,
		"    received 5 times, from account-changes.fifo; carol's group moved on: #30 applied after it\n",
		`  {"seq":17,"account":"bob","op":"update","balance":80}`,
		"    received 5 times, from account-changes.fifo; bob's group moved on: #24 #28 applied after it\n",
		"\ncheck: table == events applied in order per account: true\n",
	}
	rest := got
	for _, line := range want {
		i := strings.Index(rest, line)
		if i < 0 {
			t.Fatalf("output lacks %q after the lines before it; output:\n%s", line, got)
		}
		rest = rest[i+len(line):]
	}
	if n := strings.Count(got, "\n  {"); n != 2 {
		t.Errorf("the dead-letter queue lists %d messages, want the 2 poison events; output:\n%s", n, got)
	}
}

// TestFlakyWrites checks the assumption that keeps sound events out of the dead-letter queue: a failure
// sends back the events behind it in its group, so an account's flaky events in one burst must be fewer
// than maxReceiveCount.
func TestFlakyWrites(t *testing.T) {
	r := rand.New(rand.NewPCG(seed, 0))
	after := 0
	for i, lines := range bursts {
		burst, err := interleave(r, lines, after)
		if err != nil {
			t.Fatal(err)
		}
		after += len(burst)
		perAccount := map[string]int{}
		for _, c := range burst {
			if flaky(c.Seq) {
				perAccount[c.Account]++
			}
		}
		for account, n := range perAccount {
			if n >= maxReceiveCount {
				t.Errorf("burst %d: %s has %d flaky events, want fewer than %d", i+1, account, n, maxReceiveCount)
			}
		}
	}
}

// TestHandle runs the handler alone, with fifoqtest, on queues set up as run sets them up: each account's
// events are first delivered in log order, whatever fails at random meanwhile; the poison events (bob's
// update of a deleted row, carol's unknown "upsert") are in the dead-letter queue after maxReceiveCount
// receives; the table holds what the sound events built; and nothing is left in the queue.
func TestHandle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dlq := fifoqtest.NewQueue(t, "account-changes-dlq.fifo")
		q := fifoqtest.NewQueue(t, "account-changes.fifo",
			fifoq.WithVisibilityTimeout(visibility), fifoq.WithDeadLetterQueue(dlq, maxReceiveCount))
		events := map[string][]string{} // account: bodies, in log order
		r := rand.New(rand.NewPCG(seed, 0))
		log, err := interleave(r, []string{"bob: insert 50, update 70, delete, update 80", "carol: insert 10, upsert 35"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range log {
			body, _ := json.Marshal(c)
			fifoqtest.SendGroup(t, q, c.Account, string(body))
			events[c.Account] = append(events[c.Account], string(body))
		}

		db := newDatabase()
		res := fifoqtest.Drain(t, q, db.handle, fifoqtest.DrainOptions{Consumer: fifoq.ConsumerOptions{
			Batch: fifoq.BatchOptions{Size: batchSize}, HandlerTimeout: handlerTimeout, ReportBatchItemFailures: true,
		}})

		fifoqtest.RequireDeliveredInOrder(t, res, events)
		fifoqtest.RequireInDLQ(t, dlq, map[string]int{events["bob"][3]: maxReceiveCount, events["carol"][1]: maxReceiveCount})
		fifoqtest.RequireEmpty(t, q)
		if got := db.t.rows; len(got) != 1 || got["carol"] != 10 {
			t.Errorf("table %v, want only carol at 10 (bob's row deleted)", got)
		}
	})
}

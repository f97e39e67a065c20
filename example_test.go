package fifoq_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/fifoq/fifoq"
)

// exStart is the start time of the manual clocks in these examples; any time would do.
var exStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// exBodies returns the bodies of ds, in order.
func exBodies(ds []fifoq.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Body
	}
	return out
}

// A consumer receives a message, handles it, and deletes it so it is not delivered again.
func ExampleQueue_Receive() {
	ctx := context.Background()
	q, err := fifoq.New("orders", fifoq.WithVisibilityTimeout(time.Hour)) // in flight for an hour after a receive
	if err != nil {
		log.Fatal(err)
	}
	if _, err := q.Send(ctx, fifoq.Message{Body: "order 1"}); err != nil {
		log.Fatal(err)
	}

	ds, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10})
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range ds {
		fmt.Printf("received %q, receive count %d\n", d.Body, d.ReceiveCount)
		fmt.Printf("while in flight: %+v\n", q.Stats())
		if err := q.Delete(ctx, d.ReceiptHandle); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("after delete: %+v\n", q.Stats())
	// Output:
	// received "order 1", receive count 1
	// while in flight: {Visible:0 InFlight:1 Delayed:0}
	// after delete: {Visible:0 InFlight:0 Delayed:0}
}

// A FIFO queue fills a receive from one message group before it takes the next, keeps each group in send
// order, and gives nothing more from a group while one of its messages is in flight.
func Example_groupOrder() {
	ctx := context.Background()
	q, err := fifoq.New("payments.fifo", fifoq.WithContentBasedDeduplication(), fifoq.WithVisibilityTimeout(time.Hour))
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range []fifoq.Message{
		{GroupID: "alice", Body: "alice 1"},
		{GroupID: "bob", Body: "bob 1"},
		{GroupID: "alice", Body: "alice 2"},
		{GroupID: "alice", Body: "alice 3"},
	} {
		if _, err := q.Send(ctx, m); err != nil {
			log.Fatal(err)
		}
	}

	// Group fill first: all of alice, then bob.
	ds, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10, VisibilityTimeout: time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("receive 10:", exBodies(ds))
	for _, d := range ds {
		if err := q.Delete(ctx, d.ReceiptHandle); err != nil {
			log.Fatal(err)
		}
	}

	// Blocking: while "alice 4" is in flight, "alice 5" waits; "bob 2" does not.
	for _, m := range []fifoq.Message{
		{GroupID: "alice", Body: "alice 4"},
		{GroupID: "alice", Body: "alice 5"},
		{GroupID: "bob", Body: "bob 2"},
	} {
		if _, err := q.Send(ctx, m); err != nil {
			log.Fatal(err)
		}
	}
	first, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("receive 1:", exBodies(first))
	ds, err = q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("receive 10 while alice 4 is in flight:", exBodies(ds))
	fmt.Printf("stats: %+v\n", q.Stats())

	// Deleting "alice 4" unblocks the group at once.
	if err := q.Delete(ctx, first[0].ReceiptHandle); err != nil {
		log.Fatal(err)
	}
	ds, err = q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("receive 10 after deleting alice 4:", exBodies(ds))
	// Output:
	// receive 10: [alice 1 alice 2 alice 3 bob 1]
	// receive 1: [alice 4]
	// receive 10 while alice 4 is in flight: [bob 2]
	// stats: {Visible:1 InFlight:2 Delayed:0}
	// receive 10 after deleting alice 4: [alice 5]
}

// A FIFO queue accepts each deduplication id once every 5 minutes. A duplicate send succeeds, stores nothing,
// and reports the original message's id.
func Example_deduplication() {
	ctx := context.Background()
	clk := fifoq.NewManualClock(exStart)
	q, err := fifoq.New("invoices.fifo", fifoq.WithClock(clk))
	if err != nil {
		log.Fatal(err)
	}
	send := func(dedupID, body string) fifoq.SendResult {
		r, err := q.Send(ctx, fifoq.Message{GroupID: "acme", DeduplicationID: dedupID, Body: body})
		if err != nil {
			log.Fatal(err)
		}
		return r
	}

	first := send("invoice-7", "invoice 7")
	again := send("invoice-7", "invoice 7, sent again")
	fmt.Println("second send is a duplicate:", again.Duplicate)
	fmt.Println("same message id:", again.MessageID == first.MessageID)
	fmt.Println("same sequence number:", again.SequenceNumber == first.SequenceNumber)
	fmt.Println("stored messages:", q.Stats().Visible)

	// Deleting the message does not forget its deduplication id.
	ds, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("received:", exBodies(ds))
	if err := q.Delete(ctx, ds[0].ReceiptHandle); err != nil {
		log.Fatal(err)
	}
	fmt.Println("duplicate after delete:", send("invoice-7", "invoice 7, third try").Duplicate)

	// Five minutes after the first send the id is accepted again, as a new message.
	clk.Advance(5 * time.Minute)
	later := send("invoice-7", "invoice 7, next week")
	fmt.Println("duplicate 5 minutes later:", later.Duplicate)
	fmt.Println("new message id:", later.MessageID != first.MessageID)
	ds, err = q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("received:", exBodies(ds))
	// Output:
	// second send is a duplicate: true
	// same message id: true
	// same sequence number: true
	// stored messages: 1
	// received: [invoice 7]
	// duplicate after delete: true
	// duplicate 5 minutes later: false
	// new message id: true
	// received: [invoice 7, next week]
}

// With content-based deduplication, a message without a deduplication id is deduplicated by its body.
func ExampleWithContentBasedDeduplication() {
	ctx := context.Background()
	q, err := fifoq.New("events.fifo", fifoq.WithContentBasedDeduplication())
	if err != nil {
		log.Fatal(err)
	}
	for _, body := range []string{"created", "created", "updated"} {
		r, err := q.Send(ctx, fifoq.Message{GroupID: "doc-1", Body: body})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("send %q: duplicate %v\n", body, r.Duplicate)
	}
	fmt.Println("stored messages:", q.Stats().Visible)
	// Output:
	// send "created": duplicate false
	// send "created": duplicate true
	// send "updated": duplicate false
	// stored messages: 2
}

// A long poll waits for a message instead of returning empty. Here a consumer goroutine long-polls a queue
// that runs on a manual clock; the main goroutine sends once the poll is waiting, then lets a second poll's
// 20 seconds pass without sending anything.
func Example_longPolling() {
	ctx := context.Background()
	clk := fifoq.NewManualClock(exStart)
	q, err := fifoq.New("jobs", fifoq.WithClock(clk), fifoq.WithReceiveWaitTime(20*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	type result struct {
		bodies []string
		waited time.Duration
		err    error
	}
	poll := func() <-chan result {
		ch := make(chan result, 1)
		go func() {
			start := clk.Now()
			ds, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10}) // waits up to the queue's 20s
			ch <- result{exBodies(ds), clk.Now().Sub(start), err}
		}()
		return ch
	}

	// A send wakes the waiting poll at once.
	ch := poll()
	clk.WaitTimers(1) // the poll is waiting
	clk.Advance(3 * time.Second)
	if _, err := q.Send(ctx, fifoq.Message{Body: "resize image 42"}); err != nil {
		log.Fatal(err)
	}
	r := <-ch
	if r.err != nil {
		log.Fatal(r.err)
	}
	fmt.Printf("first poll: %v after %v\n", r.bodies, r.waited)

	// With nothing to receive, the poll returns empty when its wait time ends.
	ch = poll()
	clk.WaitTimers(1)
	clk.Advance(20 * time.Second)
	r = <-ch
	if r.err != nil {
		log.Fatal(r.err)
	}
	fmt.Printf("second poll: %d messages after %v\n", len(r.bodies), r.waited)
	// Output:
	// first poll: [resize image 42] after 3s
	// second poll: 0 messages after 20s
}

// A message that is received but not deleted becomes visible again when its visibility timeout ends, and is
// received again with a higher receive count. A manual clock makes the timeout pass at once.
func Example_visibilityTimeout() {
	ctx := context.Background()
	clk := fifoq.NewManualClock(exStart)
	q, err := fifoq.New("emails.fifo",
		fifoq.WithClock(clk),
		fifoq.WithVisibilityTimeout(30*time.Second),
		fifoq.WithContentBasedDeduplication())
	if err != nil {
		log.Fatal(err)
	}
	for _, body := range []string{"welcome", "receipt"} {
		if _, err := q.Send(ctx, fifoq.Message{GroupID: "user-1", Body: body}); err != nil {
			log.Fatal(err)
		}
	}
	receive := func(when string) []fifoq.Delivery {
		ds, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 1})
		if err != nil {
			log.Fatal(err)
		}
		for _, d := range ds {
			fmt.Printf("%s: %q, receive count %d\n", when, d.Body, d.ReceiveCount)
		}
		if len(ds) == 0 {
			fmt.Printf("%s: nothing\n", when)
		}
		return ds
	}

	receive("t=0s")               // the consumer fails and does not delete it
	clk.Advance(29 * time.Second) // still in flight; "receipt" waits behind it
	receive("t=29s")
	clk.Advance(time.Second) // the visibility timeout ends
	ds := receive("t=30s")   // the same message again, before "receipt"

	// An old receipt handle no longer acts on a FIFO queue.
	clk.Advance(30 * time.Second)
	err = q.Delete(ctx, ds[0].ReceiptHandle)
	fmt.Println("delete after the timeout:", errors.Is(err, fifoq.ErrReceiptHandleExpired))

	// ChangeVisibility(…, 0) makes a message visible at once, for an immediate retry.
	ds = receive("t=60s")
	if err := q.ChangeVisibility(ctx, ds[0].ReceiptHandle, 0); err != nil {
		log.Fatal(err)
	}
	ds = receive("t=60s, after ChangeVisibility 0")
	if err := q.Delete(ctx, ds[0].ReceiptHandle); err != nil {
		log.Fatal(err)
	}
	receive("t=60s, after delete")
	// Output:
	// t=0s: "welcome", receive count 1
	// t=29s: nothing
	// t=30s: "welcome", receive count 2
	// delete after the timeout: true
	// t=60s: "welcome", receive count 3
	// t=60s, after ChangeVisibility 0: "welcome", receive count 4
	// t=60s, after delete: "receipt", receive count 1
}

// Batch calls report the entries that failed in a *BatchError; the other entries succeed.
func ExampleQueue_SendBatch() {
	ctx := context.Background()
	q, err := fifoq.New("logs")
	if err != nil {
		log.Fatal(err)
	}
	results, err := q.SendBatch(ctx, []fifoq.Message{
		{Body: "line 1"},
		{Body: ""}, // a body needs at least one character
		{Body: "line 3"},
	})
	var batchErr *fifoq.BatchError
	if errors.As(err, &batchErr) {
		for _, e := range batchErr.Entries {
			fmt.Printf("entry %d failed: empty body %v, SQS code %s\n",
				e.Index, errors.Is(e.Err, fifoq.ErrEmptyBody), fifoq.ErrorCode(e.Err))
		}
	}
	fmt.Println("results with a message id:", len(results[0].MessageID) > 0, len(results[1].MessageID) > 0, len(results[2].MessageID) > 0)
	fmt.Println("stored messages:", q.Stats().Visible)
	// Output:
	// entry 1 failed: empty body true, SQS code MissingParameter
	// results with a message id: true false true
	// stored messages: 2
}

// A FIFO queue with a dead-letter queue: a message received twice and never deleted moves to the
// dead-letter queue on the next receive, which then delivers the next message of its group. A move task
// later sends it back to its source queue as a new message.
func Example_deadLetterQueue() {
	ctx := context.Background()
	clk := fifoq.NewManualClock(exStart)
	dlq, err := fifoq.New("orders-dlq.fifo", fifoq.WithClock(clk)) // a dead-letter queue exists before its sources
	if err != nil {
		log.Fatal(err)
	}
	q, err := fifoq.New("orders.fifo",
		fifoq.WithClock(clk),
		fifoq.WithContentBasedDeduplication(),
		fifoq.WithDeadLetterQueue(dlq, 2)) // maxReceiveCount 2
	if err != nil {
		log.Fatal(err)
	}
	var poisonID string
	for _, body := range []string{"charge card", "send receipt"} {
		r, err := q.Send(ctx, fifoq.Message{GroupID: "order-17", Body: body})
		if err != nil {
			log.Fatal(err)
		}
		if poisonID == "" {
			poisonID = r.MessageID
		}
	}
	receive := func(from *fifoq.Queue, when string) []fifoq.Delivery {
		ds, err := from.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 1})
		if err != nil {
			log.Fatal(err)
		}
		for _, d := range ds {
			fmt.Printf("%s: %s gives %q, receive count %d\n", when, from.Name(), d.Body, d.ReceiveCount)
		}
		return ds
	}

	// The consumer fails on "charge card" and never deletes it; "send receipt" waits behind it.
	receive(q, "t=0s")
	clk.Advance(30 * time.Second) // the visibility timeout ends
	receive(q, "t=30s")
	clk.Advance(30 * time.Second)
	// The third receive moves "charge card" to the dead-letter queue and unblocks its group.
	ds := receive(q, "t=60s")
	if err := q.Delete(ctx, ds[0].ReceiptHandle); err != nil {
		log.Fatal(err)
	}

	// In the dead-letter queue: the same message, its receive count carried on.
	ds = receive(dlq, "t=60s")
	d := ds[0]
	fmt.Println("dead-letter source:", d.DeadLetterSource)
	fmt.Println("same message id:", d.MessageID == poisonID)
	fmt.Println("deduplication id is the message id:", d.DeduplicationID == poisonID)
	fmt.Println("sent at (FIFO: the move):", d.SentAt.Sub(exStart))

	// Once the bug is fixed, make it visible again and move it back to where it came from.
	if err := dlq.ChangeVisibility(ctx, d.ReceiptHandle, 0); err != nil {
		log.Fatal(err)
	}
	task, err := dlq.StartMoveTask(ctx, nil, 0) // nil: back to each message's source; 0: as fast as possible
	if err != nil {
		log.Fatal(err)
	}
	if err := task.Wait(ctx); err != nil {
		log.Fatal(err)
	}
	st := task.Status()
	fmt.Printf("move task: %v, moved %d of %d from %s to %q\n", st.State, st.Moved, st.ToMove, st.Source, st.Destination)

	// Back in the source it is a new message.
	ds = receive(q, "t=60s")
	fmt.Println("new message id:", ds[0].MessageID != poisonID)
	fmt.Printf("dead-letter source: %q\n", ds[0].DeadLetterSource)
	fmt.Printf("stats: %s %+v, %s %+v\n", q.Name(), q.Stats(), dlq.Name(), dlq.Stats())
	// Output:
	// t=0s: orders.fifo gives "charge card", receive count 1
	// t=30s: orders.fifo gives "charge card", receive count 2
	// t=60s: orders.fifo gives "send receipt", receive count 1
	// t=60s: orders-dlq.fifo gives "charge card", receive count 3
	// dead-letter source: orders.fifo
	// same message id: true
	// deduplication id is the message id: true
	// sent at (FIFO: the move): 1m0s
	// move task: COMPLETED, moved 1 of 1 from orders-dlq.fifo to ""
	// t=60s: orders.fifo gives "charge card", receive count 1
	// new message id: true
	// dead-letter source: ""
	// stats: orders.fifo {Visible:0 InFlight:1 Delayed:0}, orders-dlq.fifo {Visible:0 InFlight:0 Delayed:0}
}

// Settings change on a live queue. On a FIFO queue a new delay applies to the messages still delayed,
// counted from their send (spec 4.6); a new retention period applies to every stored message (spec 5.3).
func ExampleQueue_SetAttributes() {
	ctx := context.Background()
	clock := fifoq.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	q, err := fifoq.New("orders.fifo", fifoq.WithClock(clock), fifoq.WithDelay(time.Minute),
		fifoq.WithContentBasedDeduplication())
	if err != nil {
		log.Fatal(err)
	}
	if _, err := q.Send(ctx, fifoq.Message{Body: "created", GroupID: "order-1"}); err != nil {
		log.Fatal(err)
	}
	clock.Advance(10 * time.Second)
	fmt.Println("after 10s:", q.Stats())

	a := q.Attributes()
	a.Delay = 5 * time.Second // the message was sent 10s ago: its delay is over
	if err := q.SetAttributes(a); err != nil {
		log.Fatal(err)
	}
	fmt.Println("delay 5s:", q.Stats())

	a.Delay = 20 * time.Minute
	err = q.SetAttributes(a)
	fmt.Println(errors.Is(err, fifoq.ErrInvalidQueueAttribute), q.Attributes().Delay)
	// Output:
	// after 10s: {0 0 1}
	// delay 5s: {1 0 0}
	// true 5s
}

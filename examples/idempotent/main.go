// Command idempotent shows seed 004, preventing duplicate processing: a handler wrapped with
// idempotency.Wrap grants one gift card per order although the order's message arrives more than once.
//
//  1. A producer retries its send. Within the queue's 5-minute deduplication window the retry is dropped by
//     the queue; after it, the retry is a new message with a new MessageID, which only an idempotency key
//     that names the business operation (here the order id) recognises.
//  2. The handler fails once: Wrap releases the lock, and the retry, at once, grants the card.
//  3. A worker crashes after taking the lock: its message comes back after the visibility timeout, by when
//     the lock has expired, and the next worker grants the card.
//
// The queue and the store share a manual clock, so the waits pass at once:
//
//	go run ./examples/idempotent
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/idempotency"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "idempotent:", err)
		os.Exit(1)
	}
}

const (
	// visibilityTimeout is how long a received message stays hidden before it is delivered again.
	visibilityTimeout = 30 * time.Second
	// lockTimeout bounds how long a worker may hold an order. It is longer than any handler call (a Consumer
	// would enforce that with HandlerTimeout) and shorter than the visibility timeout, so that when a
	// crashed worker's message comes back, its lock has expired and the message is processed, not dropped
	// as "being processed".
	lockTimeout = 20 * time.Second
)

// run plays the three stories and writes what happens to w. It returns an error if any order got other
// than exactly one gift card.
func run(w io.Writer) error {
	clk := fifoq.NewManualClock(time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC))
	q, err := fifoq.New("gift-cards.fifo", fifoq.WithClock(clk), fifoq.WithVisibilityTimeout(visibilityTimeout))
	if err != nil {
		return err
	}
	e := &env{w: w, q: q, clk: clk, start: clk.Now(), granted: make(map[string]int)}
	e.store = idempotency.NewMemoryStore(idempotency.WithClock(q.Clock()))
	e.handler = idempotency.Wrap(e.grantGiftCards, e.store, lockTimeout, orderID)

	e.section("1. The producer retries a send: once inside the deduplication window, once after it")
	if err := e.send("order-1001", "customer-ann"); err != nil {
		return err
	}
	if err := e.poll("worker-1"); err != nil {
		return err
	}
	clk.Advance(time.Minute)
	e.printf("the scheduler timed out and fires again:\n")
	if err := e.send("order-1001", "customer-ann"); err != nil {
		return err
	}
	clk.Advance(6 * time.Minute)
	e.printf("and again, after the 5-minute deduplication window:\n")
	if err := e.send("order-1001", "customer-ann"); err != nil {
		return err
	}
	if err := e.poll("worker-1"); err != nil {
		return err
	}

	e.section("2. The gift-card service fails once: Wrap releases the lock, so an immediate retry grants the card")
	if err := e.send("order-1002", "customer-bob"); err != nil {
		return err
	}
	e.failNext = 1
	if err := e.poll("worker-1"); err != nil {
		return err
	}
	if err := e.poll("worker-1"); err != nil {
		return err
	}

	e.section("3. A worker crashes holding the lock: the lock expires before the message comes back")
	if err := e.send("order-1003", "customer-cy"); err != nil {
		return err
	}
	if err := e.crash("worker-2"); err != nil {
		return err
	}
	clk.Advance(lockTimeout)
	e.printf("the lock of order-1003 has expired, but its message is still in flight:\n")
	if err := e.poll("worker-1"); err != nil {
		return err
	}
	clk.Advance(visibilityTimeout - lockTimeout)
	if err := e.poll("worker-1"); err != nil {
		return err
	}

	e.section("Result")
	orders := make([]string, 0, len(e.granted))
	for o := range e.granted {
		orders = append(orders, o)
	}
	slices.Sort(orders)
	for _, o := range orders {
		e.printf("%s: %d gift card(s)\n", o, e.granted[o])
		if e.granted[o] != 1 {
			return fmt.Errorf("%s got %d gift cards, want 1", o, e.granted[o])
		}
	}
	if len(orders) != 3 {
		return fmt.Errorf("%d orders got a gift card, want 3", len(orders))
	}
	e.printf("every order got exactly one gift card: %d sends, %d messages stored, %d deliveries\n", e.sends, e.stored, e.deliveries)
	return nil
}

// orderID is the idempotency key: the business operation a message asks for. The MessageID would not do:
// a producer's retry after the deduplication window is a new message with a new MessageID.
func orderID(d fifoq.Delivery) string { return d.Attributes["order-id"].StringValue }

// env is the world of the example: a queue, the store, the wrapped handler and the gift-card ledger.
type env struct {
	w       io.Writer
	q       *fifoq.Queue
	clk     *fifoq.ManualClock
	start   time.Time
	store   *idempotency.MemoryStore
	handler fifoq.Handler

	granted  map[string]int // gift cards per order: the side effect that must happen once
	seen     []string       // orders the inner handler was given in the current poll
	failNext int            // calls of the gift-card service that fail

	sends, stored, deliveries int // what the producer sent, what the queue kept, what workers received
}

// grantGiftCards is the handler before it is made idempotent: it grants a gift card per message.
func (e *env) grantGiftCards(_ context.Context, batch []fifoq.Delivery) error {
	for _, d := range batch {
		order := orderID(d)
		e.seen = append(e.seen, order)
		if e.failNext > 0 {
			e.failNext--
			e.printf("  gift-card service: timeout granting the card of %s\n", order)
			return errors.New("gift-card service timed out")
		}
		e.granted[order]++
		e.printf("  gift-card service: granted a $50 gift card for %s\n", order)
	}
	return nil
}

// send is the producer: the deduplication id is the order id, as a producer that retries should send.
func (e *env) send(order, customer string) error {
	r, err := e.q.Send(context.Background(), fifoq.Message{
		Body:            "grant a $50 gift card for " + order,
		GroupID:         customer,
		DeduplicationID: order,
		Attributes:      map[string]fifoq.Attribute{"order-id": {DataType: "String", StringValue: order}},
	})
	if err != nil {
		return err
	}
	e.sends++
	if !r.Duplicate {
		e.stored++
	}
	if r.Duplicate {
		e.printf("producer: sent %s: duplicate, dropped by the queue\n", order)
	} else {
		e.printf("producer: sent %s: stored as a new message\n", order)
	}
	return nil
}

// poll is one turn of a worker, as a Lambda poller takes it: receive a batch, run the wrapped handler, and
// delete the batch if it succeeded or return it to the queue if it failed.
func (e *env) poll(worker string) error {
	ctx := context.Background()
	ds, err := e.q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10})
	if err != nil {
		return err
	}
	if len(ds) == 0 {
		e.printf("%s: nothing to receive\n", worker)
		return nil
	}
	e.deliveries += len(ds)
	e.printf("%s: received %s\n", worker, describe(ds))
	e.seen = nil
	if err := e.handler(ctx, ds); err != nil {
		// Retry at once, as a Consumer with RetryImmediately does: well inside the lock timeout, so the retry
		// is processed only because Wrap released the lock when the handler failed.
		for _, d := range ds {
			if err := e.q.ChangeVisibility(ctx, d.ReceiptHandle, 0); err != nil {
				return err
			}
		}
		e.printf("%s: handler failed (%v); returned %s to the queue at once\n", worker, err, describe(ds))
		return nil
	}
	for _, d := range ds {
		if !slices.Contains(e.seen, orderID(d)) {
			e.printf("%s: the wrapped handler skipped %s: already processed\n", worker, orderID(d))
		}
		if err := e.q.Delete(ctx, d.ReceiptHandle); err != nil {
			return err
		}
	}
	e.printf("%s: deleted %s\n", worker, describe(ds))
	return nil
}

// crash is a worker that dies after Wrap took the lock of its message and before the handler returned.
//
// A real crash kills the process between Wrap's Acquire and its MarkProcessed or Release. A goroutine cannot
// be killed from outside, so the crashed worker does by hand what Wrap does first (receive the message and
// take its lock with the same key and lock timeout) and then nothing more. That is exactly what a crash
// leaves behind: the message in flight until its visibility timeout and the lock in the store until its
// lock timeout.
func (e *env) crash(worker string) error {
	ctx := context.Background()
	ds, err := e.q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10})
	if err != nil {
		return err
	}
	if len(ds) != 1 {
		return fmt.Errorf("%s received %d messages, want 1", worker, len(ds))
	}
	e.deliveries++
	e.printf("%s: received %s\n", worker, describe(ds))
	ok, err := e.store.Acquire(ctx, orderID(ds[0]), lockTimeout)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s could not lock %s", worker, orderID(ds[0]))
	}
	e.printf("%s: locked %s for %v, then crashed\n", worker, orderID(ds[0]), lockTimeout)
	return nil
}

func (e *env) section(title string) { fmt.Fprintf(e.w, "\n%s\n", title) }

// printf writes a line stamped with the time on the queue's clock.
func (e *env) printf(format string, args ...any) {
	fmt.Fprintf(e.w, "  [t=%v] ", e.clk.Now().Sub(e.start))
	fmt.Fprintf(e.w, format, args...)
}

// describe names the messages of a batch by order, with their receive counts. It never prints MessageIDs,
// which are random.
func describe(ds []fifoq.Delivery) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%s (receive %d)", orderID(d), d.ReceiveCount)
	}
	return strings.Join(parts, ", ")
}

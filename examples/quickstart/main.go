// Command quickstart walks through a fifoq FIFO queue and prints what happens at each step: message groups
// and their order, a group blocked while one of its messages is in flight, redelivery after a visibility
// timeout, deduplication, and the queue's counts.
//
// The queue runs on a manual clock, so the 30-second visibility timeout and the 5-minute deduplication window
// pass at once:
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/fifoq/fifoq"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// run does the walk-through and writes what happens to w.
func run(w io.Writer) error {
	ctx := context.Background()
	clk := fifoq.NewManualClock(time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC))
	q, err := fifoq.New("orders.fifo",
		fifoq.WithClock(clk),
		fifoq.WithVisibilityTimeout(30*time.Second),
		fifoq.WithContentBasedDeduplication(),
	)
	if err != nil {
		return err
	}
	p := printer{w: w, q: q, start: clk.Now(), clk: clk}

	p.section("1. Send six messages to two message groups")
	for _, m := range []fifoq.Message{
		{GroupID: "customer-a", Body: "a1: create order"},
		{GroupID: "customer-b", Body: "b1: create order"},
		{GroupID: "customer-a", Body: "a2: add item"},
		{GroupID: "customer-a", Body: "a3: pay"},
		{GroupID: "customer-b", Body: "b2: cancel"},
		{GroupID: "customer-a", Body: "a4: ship"},
	} {
		r, err := q.Send(ctx, m)
		if err != nil {
			return err
		}
		p.printf("sent %-18q group %s, sequence number %s\n", m.Body, m.GroupID, strings.TrimLeft(r.SequenceNumber, "0"))
	}
	p.stats()

	p.section("2. Receive 3: the oldest group first, in send order")
	batch, err := p.receive(3)
	if err != nil {
		return err
	}

	p.section("3. While a group has messages in flight, nothing more comes from it")
	p.printf("a4 waits behind a1..a3, so only customer-b is available:\n")
	more, err := p.receive(10)
	if err != nil {
		return err
	}
	batch = append(batch, more...)
	p.printf("a4 counts as visible while it waits:\n")
	p.stats()

	p.section("4. Delete what was handled; the consumer of a3 fails and does not delete it")
	for _, d := range batch {
		if short(d.Body) == "a3" {
			continue
		}
		if err := p.delete(d); err != nil {
			return err
		}
	}
	p.printf("customer-a is still blocked by a3, in flight:\n")
	if _, err := p.receive(10); err != nil {
		return err
	}

	p.section("5. After the 30s visibility timeout, a3 is delivered again, before a4")
	clk.Advance(29 * time.Second)
	if _, err := p.receive(10); err != nil {
		return err
	}
	clk.Advance(time.Second)
	retry, err := p.receive(10)
	if err != nil {
		return err
	}
	for _, d := range retry {
		if err := p.delete(d); err != nil {
			return err
		}
	}
	p.stats()

	p.section("6. Deduplication: the same body within 5 minutes is accepted once")
	p.printf("(the queue uses content-based deduplication: the SHA-256 of the body is the deduplication id)\n")
	for range 2 {
		if err := p.send(fifoq.Message{GroupID: "customer-c", Body: "c1: create order"}); err != nil {
			return err
		}
	}
	p.stats()
	clk.Advance(5 * time.Minute)
	p.printf("5 minutes later:\n")
	if err := p.send(fifoq.Message{GroupID: "customer-c", Body: "c1: create order"}); err != nil {
		return err
	}
	p.stats()
	return nil
}

// printer writes the walk-through, each line stamped with the time on the queue's clock.
type printer struct {
	w     io.Writer
	q     *fifoq.Queue
	clk   *fifoq.ManualClock
	start time.Time
}

func (p printer) section(title string) { fmt.Fprintf(p.w, "\n%s\n", title) }

func (p printer) printf(format string, args ...any) {
	fmt.Fprintf(p.w, "  [t=%v] ", p.clk.Now().Sub(p.start))
	fmt.Fprintf(p.w, format, args...)
}

func (p printer) receive(n int) ([]fifoq.Delivery, error) {
	ds, err := p.q.Receive(context.Background(), fifoq.ReceiveOptions{MaxMessages: n})
	if err != nil {
		return nil, err
	}
	if len(ds) == 0 {
		p.printf("receive %d: nothing\n", n)
		return nil, nil
	}
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%s (receive %d)", short(d.Body), d.ReceiveCount)
	}
	p.printf("receive %d: %s\n", n, strings.Join(parts, ", "))
	return ds, nil
}

func (p printer) delete(d fifoq.Delivery) error {
	if err := p.q.Delete(context.Background(), d.ReceiptHandle); err != nil {
		return err
	}
	p.printf("deleted %s\n", short(d.Body))
	return nil
}

func (p printer) send(m fifoq.Message) error {
	r, err := p.q.Send(context.Background(), m)
	if err != nil {
		return err
	}
	if r.Duplicate {
		p.printf("sent %s: duplicate, not stored\n", short(m.Body))
	} else {
		p.printf("sent %s: stored\n", short(m.Body))
	}
	return nil
}

func (p printer) stats() {
	s := p.q.Stats()
	p.printf("stats: %d visible, %d in flight, %d delayed\n", s.Visible, s.InFlight, s.Delayed)
}

// short names a message by its short name, the text before the colon of its body.
func short(body string) string {
	name, _, _ := strings.Cut(body, ":")
	return name
}

package fifoqtest

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
)

// NewQueue creates a queue as [fifoq.New] does, and fails the test at once if New returns an error. When
// the test fails, a cleanup logs every message the queue still holds, with its state and receive count, so
// the failure shows what was left behind; the log names the line that called NewQueue.
func NewQueue(tb testing.TB, name string, opts ...fifoq.Option) *fifoq.Queue {
	tb.Helper()
	q, err := fifoq.New(name, opts...)
	if err != nil {
		tb.Fatalf("fifoqtest.NewQueue(%q): %v", name, err)
		return nil
	}
	at := callerLine(1)
	tb.Cleanup(func() {
		tb.Helper()
		if tb.Failed() {
			tb.Logf("fifoqtest: %s: at the end of the test, %s", at, contents(q))
		}
	})
	return q
}

// dedupIDs numbers the deduplication ids Send gives messages without one.
var dedupIDs atomic.Uint64

// A Queue is a queue whose messages this package's checks and Drain look at without receiving them: a queue
// in process, a *fifoq.Queue or a catalogue's queue (catalog.Queue). Send, SendGroup and Work take any
// fifoq.Sender and fifoq.Source, such as the queues of package sqsadapter, which speak to SQS.
type Queue interface {
	// QueueClient sends, receives and settles messages.
	fifoq.QueueClient
	// Name is the queue's name, for the messages of a failed check.
	Name() string
	// Clock is the queue's clock, which Drain drives when it is a *fifoq.ManualClock.
	Clock() fifoq.Clock
	// Stats returns the queue's exact counts.
	Stats() fifoq.Stats
	// Messages returns every message of the queue, oldest first, as fifoq.Queue.Messages does.
	Messages() iter.Seq[fifoq.Snapshot]
}

var (
	_ Queue = (*fifoq.Queue)(nil)
	_ Queue = catalog.Queue{}
)

// Send sends msgs to q one at a time, in order, and returns their results; it fails the test at once if a
// send returns an error. On a FIFO queue without content-based deduplication, a message with no
// DeduplicationID gets a new one, so fixtures need not invent them: two sends of the same body are two
// messages. (A sender other than a *fifoq.Queue, which cannot say whether its queue deduplicates by
// content, gets ids whenever it is FIFO: an explicit id is taken by either kind of FIFO queue.) A Duplicate
// result is not an error; check it if the test is about deduplication.
func Send(tb testing.TB, q fifoq.Sender, msgs ...fifoq.Message) []fifoq.SendResult {
	tb.Helper()
	fillIDs := q.FIFO()
	if a, ok := q.(interface{ Attributes() fifoq.Attributes }); ok {
		fillIDs = fillIDs && !a.Attributes().ContentBasedDeduplication
	}
	results := make([]fifoq.SendResult, 0, len(msgs))
	for i, m := range msgs {
		if fillIDs && m.DeduplicationID == "" {
			m.DeduplicationID = fmt.Sprintf("fifoqtest-%d", dedupIDs.Add(1))
		}
		r, err := q.Send(context.Background(), m)
		if err != nil {
			tb.Fatalf("fifoqtest.Send to %s, message %d (%q): %v", nameOf(q), i, m.Body, err)
			return results
		}
		results = append(results, r)
	}
	return results
}

// SendGroup sends one message per body to q, in order, all in message group group, as [Send] does. On a
// standard queue group may be "" (no group).
func SendGroup(tb testing.TB, q fifoq.Sender, group string, bodies ...string) []fifoq.SendResult {
	tb.Helper()
	msgs := make([]fifoq.Message, len(bodies))
	for i, b := range bodies {
		msgs[i] = fifoq.Message{GroupID: group, Body: b}
	}
	return Send(tb, q, msgs...)
}

// contents describes every message q holds, one a line, or says that it holds none.
func contents(q Queue) string {
	n, lines := listing(q)
	if n == 0 {
		return fmt.Sprintf("queue %s is empty", q.Name())
	}
	return fmt.Sprintf("queue %s holds %s:%s", q.Name(), plural(n, "message"), lines)
}

// listing returns how many messages q holds, and a line for each, each line starting with a newline.
func listing(q Queue) (int, string) {
	var b strings.Builder
	now := q.Clock().Now()
	n := 0
	for s := range q.Messages() {
		n++
		fmt.Fprintf(&b, "\n\t%s", describe(s, now, true))
	}
	return n, b.String()
}

// describe names a stored message by its body, with its group, its state (if withState) and receive count,
// and when an in-flight or delayed message becomes visible.
func describe(s fifoq.Snapshot, now time.Time, withState bool) string {
	var parts []string
	if s.GroupID != "" {
		parts = append(parts, fmt.Sprintf("group %q", s.GroupID))
	}
	if withState {
		parts = append(parts, s.State.String())
	}
	parts = append(parts, "received "+plural(s.ReceiveCount, "time"))
	if !s.VisibleAt.IsZero() {
		parts = append(parts, fmt.Sprintf("visible in %v", s.VisibleAt.Sub(now)))
	}
	if s.DeadLetterSource != "" {
		parts = append(parts, "from "+s.DeadLetterSource)
	}
	return fmt.Sprintf("%q (%s)", s.Body, strings.Join(parts, ", "))
}

// plural returns "1 message", "2 messages".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// nameOf returns the name of q, if it has one.
func nameOf(q any) string {
	if n, ok := q.(interface{ Name() string }); ok {
		return n.Name()
	}
	return "the queue"
}

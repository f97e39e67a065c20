// Package fifoqtest helps test code that consumes fifoq queues, in the spirit of River's rivertest: it
// creates queues and sends fixtures, runs a [fifoq.Consumer] until a queue is drained, and checks what
// happened, saying what was expected and what was found when a check fails.
//
//	func TestOrders(t *testing.T) {
//		synctest.Test(t, func(t *testing.T) {
//			dlq := fifoqtest.NewQueue(t, "orders-dlq.fifo")
//			q := fifoqtest.NewQueue(t, "orders.fifo", fifoq.WithDeadLetterQueue(dlq, 3))
//			fifoqtest.SendGroup(t, q, "order-1", "create", "pay", "ship")
//			fifoqtest.SendGroup(t, q, "order-2", "poison")
//
//			r := fifoqtest.Drain(t, q, handle, fifoqtest.DrainOptions{
//				Consumer: fifoq.ConsumerOptions{ReportBatchItemFailures: true},
//			})
//
//			fifoqtest.RequireDeliveredInOrder(t, r, map[string][]string{
//				"order-1": {"create", "pay", "ship"},
//				"order-2": {"poison"},
//			})
//			fifoqtest.RequireInDLQ(t, dlq, map[string]int{"poison": 3})
//			fifoqtest.RequireEmpty(t, q)
//		})
//	}
//
// The poison message fails three times, 30 seconds apart (the default visibility timeout); in the bubble
// those 90 seconds are virtual and pass at once.
//
// # Queues and fixtures
//
// [NewQueue] is [fifoq.New] that fails the test on an error and, when the test fails, logs what the queue
// still holds. [Send] and [SendGroup] send fixtures, giving FIFO messages a deduplication id when they
// have none, so that a test never invents one and two equal bodies are two messages.
//
// # Which queues
//
// The helpers take the narrowest interface they need, so that a test of code written against fifoq's
// interfaces can use them whatever the code runs on:
//
//   - [Send] and [SendGroup] take any [fifoq.Sender]: a *fifoq.Queue, a catalogue's queue, or a queue of
//     the sqsadapter module, on fifoq serve or on SQS.
//   - [Work] takes any [fifoq.Source]. Over a source that can say its visibility timeout
//     ([fifoq.VisibilitySource]) the Consumer keeps a long batch in flight as it would over the source.
//   - The checks ([RequireInDLQ], [RequireNoneInFlight], [RequireEmpty], [RequireSent], [RequireInQueue],
//     [RequireNotInQueue], [RequireEmptyAtEnd]) take a [Queue]: a queue in this process whose messages they
//     can look at without receiving them, a *fifoq.Queue or a catalogue's queue. A queue on SQS cannot be
//     looked into that way; test it through what a consumer receives.
//   - [NewQueue] and [Drain] work on a *fifoq.Queue: Drain needs to drive the queue's time and to see its
//     dead-letter queue.
//
// # Draining
//
// [Drain] runs a Consumer with the given handler and options until the queue holds no message and the
// consumer has nothing running, or until a deadline on the queue's clock, and returns a [Result]: every
// batch in the order its handler was called, with what the handler got and what the Consumer reported
// (outcome, failed messages). It needs time it can control:
//
//   - The real clock inside [testing/synctest.Test]. Time is virtual: visibility timeouts, handler
//     timeouts, batch windows and handlers that sleep all work. Drain uses [testing/synctest.Wait] to know
//     when the consumer is idle; that is the first choice.
//   - A [fifoq.ManualClock], in a bubble or not. Drain advances the clock itself, and only between batches,
//     to the next time a message of the queue becomes visible; so handlers must not wait for the clock,
//     and batch windows are not supported.
//
// Drain on the real clock outside a bubble fails the test at once: it would have to wait in real time.
//
// # One batch at a time
//
// [Work] hands the next batch of a queue to a handler now, and settles it as a Consumer would (delete on
// success, the failed messages back to the queue on failure), then returns it: a test can look at the
// queue between two steps, with no synctest bubble and no clock to move.
//
// # Assertions
//
// [RequireDeliveredInOrder], [RequireInDLQ], [RequireNoneInFlight] and [RequireEmpty] check what a
// consumer did. [RequireSent], [RequireInQueue] and [RequireNotInQueue] check what a producer sent, with a
// [Match] of body, part of the body, group and attributes. They report a failure with tb.Errorf, naming
// each difference as "found, want", and then stop the test with tb.FailNow, as testify's require does:
// call them from the test's goroutine.
//
// [RequireEmptyAtEnd] checks a queue when the test ends, in a Cleanup. Since the test function has
// returned by then, its report (and what [NewQueue] logs at the end of a failed test) names the line of the
// test that registered it.
//
// # Choices
//
// Every helper takes a [testing.TB], so it serves tests, benchmarks and fuzz targets alike, and marks
// itself with Helper so that failures point at the caller. The package depends on the standard library
// and fifoq only: a user's tests need not use testify. Drain takes no context: it runs until the queue is
// drained or its deadline, and its handlers get a context that Drain never cancels (only a HandlerTimeout ends it), as
// from [fifoq.Consumer.Run].
// Expectations are maps from group (or body) to what is wanted, so a test lists each group once and the
// failure output is sorted and the same on every run, whatever the consumer's concurrency.
package fifoqtest

package lambdaevents

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
)

// Options configure an [Invoker] beyond its [Mapping]: what is not part of an event source mapping on AWS.
type Options struct {
	// Client sends the invocations. Its Timeout, if any, should not be shorter than the function timeout,
	// which the Invoker applies to each request itself. Defaults to a client of the Invoker's own, with
	// http.DefaultTransport's settings (proxies from the environment, keep-alive connections, closed when Run
	// returns) that follows no redirect.
	Client *http.Client
	// Logger, if set, gets a record for each batch and for a function that cannot be reached: see
	// [Invoker.Run].
	Logger *slog.Logger
	// OnBatch, if set, is called after each batch has been settled (its messages deleted or left to come
	// back), with the Consumer's report: its Err is the invocation's *FunctionError, or a
	// *fifoq.BatchItemFailures. It runs in the goroutine that invoked the function, and must not panic.
	OnBatch func(fifoq.BatchReport)
}

// An Invoker runs an event source mapping ([Mapping]) from a queue to a function URL: it polls the queue
// with a fifoq.Consumer, POSTs each batch to the function as the JSON event Lambda sends an SQS function, and
// settles the batch by the answer as Lambda does. Create one with [NewInvoker]; the zero Invoker is not
// usable. Its methods are safe for concurrent use, but Run runs once at a time.
//
// # The event
//
// Each invocation is a POST of Content-Type application/json whose body is exactly what Lambda sends:
// {"Records":[...]}, one record per message, with messageId, receiptHandle, body, attributes (ApproximateReceiveCount,
// SentTimestamp, SenderId, ApproximateFirstReceiveTimestamp, and on a FIFO queue SequenceNumber,
// MessageGroupId and MessageDeduplicationId, in a dead-letter queue DeadLetterQueueSourceArn),
// messageAttributes ({} when there are none), md5OfMessageAttributes (when there are), md5OfBody,
// eventSource "aws:sqs", eventSourceARN and awsRegion, in Lambda's order. It decodes into the
// events.SQSEvent that [Handler] gives an in-process handler.
//
// # The answer
//
// An invocation fails its whole batch (a [*FunctionError]) when the function answers with a status outside
// 2xx, with the X-Amz-Function-Error header, with a body that has errorType or errorMessage (as the Runtime
// Interface Emulator answers an error), with the emulator's "Task timed out after ..." or with more than
// 6 MB; when it gives no answer within the function timeout; and when it cannot be reached. A failed batch is
// not deleted: its messages come back when their visibility timeout ends, a receive count higher, and move to
// the queue's dead-letter queue past its maxReceiveCount, as on Lambda. Any other answer is a success, and
// deletes the batch, unless the mapping has ReportBatchItemFailures: then the answer is read as Lambda reads
// a partial batch response. An empty body, null, an object without batchItemFailures, and an empty or null
// batchItemFailures are a success; invalid JSON, JSON that is neither an object nor null, a batchItemFailures
// that is not a list, or an item whose itemIdentifier is missing, null, not a string, empty or not a
// messageId of the batch fail the whole batch; otherwise the messages it names fail and the others are
// deleted. On a FIFO queue every later message of a failed message's group in the batch fails too, so that no
// message of a group is handled before an earlier one that failed (Lambda asks the function to report those
// itself, and deletes what it does not name).
//
// # A function that is down
//
// An invocation that cannot reach the function (connection refused, a connection that breaks before the
// answer) fails its batch like a function error. The Invoker then polls nothing for a second, then takes one
// batch and invokes it; if that fails too it waits two seconds, then four, up to 30 seconds between tries, by
// the queue's clock, until an invocation reaches the function. Meanwhile the queue's messages are not
// received, so their receive counts do not rise. The first failure is logged at once, later ones at most once
// a minute, and the return of the function once.
type Invoker struct {
	m        Mapping // with defaults
	o        Options
	src      fifoq.Source
	clock    fifoq.Clock
	queue    string
	logURL   string // m.FunctionURL as the logs show it: without a password
	rec      config
	client   *http.Client
	own      *http.Transport // the transport of the Invoker's own client; nil with Options.Client
	gate     *gate
	consumer *fifoq.Consumer
	counters counters
	running  atomic.Bool
}

// alreadyDone is a context that is done already: NewInvoker asks a VisibilitySource with it, as fifoq's
// NewConsumer does.
var alreadyDone = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// errTimedOut ends the request of an invocation that ran past the function timeout.
var errTimedOut = errors.New("no answer within the function timeout")

// NewInvoker returns an Invoker of the mapping m from src to m.FunctionURL. It checks m with Validate, for a
// FIFO or standard queue as src is, and checks the function timeout against the queue's visibility timeout
// when src can say it at once (a *fifoq.Queue can; a source that needs a call is asked when Run starts), as
// AWS does. The records' eventSourceARN is m.EventSourceARN, or the ARN of src's name in us-east-1 and
// account 000000000000.
func NewInvoker(src fifoq.Source, m Mapping, o Options) (*Invoker, error) {
	fifo := src.FIFO()
	if err := m.Validate(fifo); err != nil {
		return nil, err
	}
	m = m.withDefaults()
	i := &Invoker{m: m, o: o, src: src, clock: realClock{}, logURL: m.FunctionURL}
	if u, err := url.Parse(m.FunctionURL); err == nil {
		i.logURL = u.Redacted()
	}
	if c, ok := src.(interface{ Clock() fifoq.Clock }); ok {
		i.clock = c.Clock()
	}
	if n, ok := src.(interface{ Name() string }); ok {
		i.queue = n.Name()
	}
	i.rec = config{ns: defaultNamespace, queue: i.queue}
	if i.rec.queue == "" {
		i.rec.queue = "fifoq"
	}
	if m.EventSourceARN != "" {
		ns, name, _ := catalog.ParseQueueARN(m.EventSourceARN) // Validate parsed it
		i.rec = config{ns: ns, queue: name}
	}
	i.rec.senderID = i.rec.ns.Account
	if vs, ok := src.(fifoq.VisibilitySource); ok {
		if vt, err := vs.VisibilityTimeout(alreadyDone); err == nil {
			if err := i.checkVisibilityTimeout(vt); err != nil {
				return nil, err
			}
		}
	}
	i.client = o.Client
	if i.client == nil {
		i.own = http.DefaultTransport.(*http.Transport).Clone()
		i.own.MaxIdleConnsPerHost = m.concurrency()
		i.client = &http.Client{Transport: i.own, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // Lambda's Invoke API does not redirect: a 3xx is a function error
		}}
	}
	i.gate = newGate(i.clock, i.logUnreachable)
	c, err := fifoq.NewConsumer(newGatedSource(src, i.gate, i.clock, i.queue), i.invoke, fifoq.ConsumerOptions{
		Batch:                   fifoq.BatchOptions{Size: m.BatchSize, Window: m.MaximumBatchingWindow},
		MaxConcurrency:          m.concurrency(),
		ReportBatchItemFailures: m.reportsItemFailures(),
		OnBatch:                 i.onBatch,
	})
	if err != nil {
		return nil, fmt.Errorf("lambdaevents: %w", err)
	}
	i.consumer = c
	return i, nil
}

// checkVisibilityTimeout refuses a function timeout longer than the queue's visibility timeout, with AWS's
// message.
func (i *Invoker) checkVisibilityTimeout(vt time.Duration) error {
	if i.m.FunctionTimeout > vt {
		return fmt.Errorf("%w: Queue visibility timeout: %d seconds is less than Function timeout: %d seconds",
			ErrInvalidFunctionTimeout, int64(vt/time.Second), int64(i.m.FunctionTimeout/time.Second))
	}
	return nil
}

// Consumer returns the fifoq.Consumer that Run runs, for its metrics ([fifoq.Consumer.Metrics], which package
// fifoqprom exports): batches by outcome, messages, failed messages, batches in flight. Do not run it: Run does.
func (i *Invoker) Consumer() *fifoq.Consumer { return i.consumer }

// Mapping returns the Invoker's mapping, with its defaults filled in (Enabled too).
func (i *Invoker) Mapping() Mapping { return i.m.withDefaults() }

// Run polls the queue and invokes the function with each batch, at most min(MaximumConcurrency,
// FunctionConcurrency) invocations at once, until ctx is done; then it waits for the invocations under way,
// each of which ends by its answer or the function timeout, settles their batches, and returns nil. It
// returns an error only when the queue's source fails, or when the function timeout is longer than the
// queue's visibility timeout (ErrInvalidFunctionTimeout). A mapping that is not Enabled polls nothing: Run
// waits for ctx and returns nil. Run may be called again once it has returned, but not while it runs.
//
// With Options.Logger, Run logs a record for each batch ("lambdaevents: invocation done" at Debug,
// "lambdaevents: invocation partly failed" and "lambdaevents: function error" at Warn, at Error when the
// batch's messages could not be deleted), except the batches whose invocation could not reach the function:
// "lambdaevents: function unreachable" says those, at Warn, for the first failure and then at most once a
// minute; "lambdaevents: function reachable again" at Info ends the outage. Keys: queue, function_url,
// outcome, batch_size, groups, group (one group), failed, duration, error, kind (the ErrorKind), status (the
// HTTP status), delete_error; failures, backoff and down_for for a function that is unreachable.
func (i *Invoker) Run(ctx context.Context) error {
	if !i.running.CompareAndSwap(false, true) {
		panic("lambdaevents: Invoker.Run called while it runs")
	}
	defer i.running.Store(false)
	if !i.m.enabled() {
		<-ctx.Done()
		return nil
	}
	if i.own != nil {
		defer i.own.CloseIdleConnections()
	}
	if vs, ok := i.src.(fifoq.VisibilitySource); ok {
		vctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		vt, err := vs.VisibilityTimeout(vctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			return fmt.Errorf("lambdaevents: the visibility timeout of the queue: %w", err)
		}
		if err := i.checkVisibilityTimeout(vt); err != nil {
			return err
		}
	}
	return i.consumer.Run(ctx)
}

// onBatch logs a batch that ended and hands its report to Options.OnBatch.
func (i *Invoker) onBatch(r fifoq.BatchReport) {
	if i.o.Logger != nil {
		i.logBatch(&r)
	}
	if i.o.OnBatch != nil {
		i.o.OnBatch(r)
	}
}

// invoke is the Consumer's handler: it POSTs batch to the function and reads the answer.
func (i *Invoker) invoke(ctx context.Context, batch []fifoq.Delivery) error {
	e := i.rec.event(batch)
	body := marshalEvent(&e)

	// The function timeout, by the queue's clock. The request's context has no deadline of its own: on a
	// ManualClock a deadline would be a time of that clock, which the network would read by the real one.
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := i.clock.AfterFunc(i.m.FunctionTimeout, func() { cancel(errTimedOut) })
	defer timer.Stop()
	var connected atomic.Bool
	rctx = httptrace.WithClientTrace(rctx, &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { connected.Store(true) }})
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, i.m.FunctionURL, bytes.NewReader(body))
	if err != nil { // the URL was checked by Validate
		return &FunctionError{Kind: ErrorUnreachable, Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Amz-Invocation-Type", "RequestResponse") // as Lambda's Invoke API takes a synchronous call

	i.counters.inFlight.Add(1)
	start := i.clock.Now()
	var (
		status    int
		header    http.Header
		answer    []byte
		truncated bool
	)
	resp, err := i.client.Do(req)
	if err == nil {
		status, header = resp.StatusCode, resp.Header
		answer, err = io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
		resp.Body.Close()
		if len(answer) > maxResponseBytes {
			answer, truncated = answer[:maxResponseBytes], true
		}
	}
	took := i.clock.Now().Sub(start)
	i.counters.inFlight.Add(-1)

	timer.Stop()
	var (
		failed []string
		fe     *FunctionError
	)
	// A whole answer counts, even if the timeout came as it ended. A timeout of Options.Client's own counts as
	// the function timeout.
	var netErr net.Error
	ours := err != nil && errors.Is(context.Cause(rctx), errTimedOut)
	timedOut := ours || err != nil && errors.As(err, &netErr) && netErr.Timeout()
	why := err
	if ours {
		why = fmt.Errorf("%w of %v", errTimedOut, i.m.FunctionTimeout)
	}
	switch {
	case timedOut && connected.Load():
		fe = &FunctionError{Kind: ErrorTimeout, StatusCode: status, Err: why}
	case timedOut: // not even a connection: the function is unreachable
		fe = &FunctionError{Kind: ErrorUnreachable, Err: why}
	case err != nil:
		fe = &FunctionError{Kind: ErrorUnreachable, StatusCode: status, Err: err}
	default:
		inBatch := make(map[string]bool, len(batch))
		for _, d := range batch {
			inBatch[d.MessageID] = true
		}
		failed, fe = interpret(status, header, answer, truncated, inBatch, i.m.reportsItemFailures())
	}

	if fe != nil && fe.Kind == ErrorUnreachable {
		i.counters.errors[ErrorUnreachable].Add(1)
		i.gate.unreachable(fe)
		return fe
	}
	i.counters.invoked(len(batch), took)
	i.gate.reachable()
	if fe != nil {
		i.counters.errors[fe.Kind].Add(1)
		return fe
	}
	if len(failed) > 0 {
		i.counters.itemFailures.Add(uint64(len(failed)))
		return &fifoq.BatchItemFailures{MessageIDs: failed}
	}
	return nil
}

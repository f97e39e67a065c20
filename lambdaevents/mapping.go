package lambdaevents

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
)

// ReportBatchItemFailures is the one value of [Mapping.FunctionResponseTypes]: the function may answer with
// the batch item failures of a partial batch response.
const ReportBatchItemFailures = "ReportBatchItemFailures"

// The limits of an event source mapping for SQS, as Lambda's CreateEventSourceMapping checks them, and the
// defaults of the fields left at zero.
const (
	minMaximumConcurrency      = 2
	maxMaximumConcurrency      = 1000
	defaultFunctionTimeout     = 3 * time.Second // a Lambda function's default timeout
	maxFunctionTimeout         = 900 * time.Second
	defaultFunctionConcurrency = 1
	maxFunctionConcurrency     = 1000
)

// The errors of [Mapping.Validate] and [NewInvoker], one for each field of a Mapping. Each is wrapped with the
// value and the rule it breaks; match them with errors.Is.
var (
	// ErrInvalidFunctionURL: FunctionURL is empty or not an absolute http or https URL.
	ErrInvalidFunctionURL = errors.New("lambdaevents: invalid FunctionURL")
	// ErrInvalidEventSourceARN: EventSourceARN is not an SQS queue's ARN, or names a FIFO queue for a
	// standard source or the other way round.
	ErrInvalidEventSourceARN = errors.New("lambdaevents: invalid EventSourceARN")
	// ErrInvalidBatchSize: BatchSize is out of 1..10 on a FIFO queue or 1..10,000 on a standard one, or above
	// 10 without a MaximumBatchingWindow of at least 1 second.
	ErrInvalidBatchSize = errors.New("lambdaevents: invalid BatchSize")
	// ErrInvalidBatchingWindow: MaximumBatchingWindow is out of 0..300 seconds, not whole seconds, or set on
	// a FIFO queue.
	ErrInvalidBatchingWindow = errors.New("lambdaevents: invalid MaximumBatchingWindow")
	// ErrInvalidFunctionResponseTypes: FunctionResponseTypes holds anything but one "ReportBatchItemFailures".
	ErrInvalidFunctionResponseTypes = errors.New("lambdaevents: invalid FunctionResponseTypes")
	// ErrInvalidMaximumConcurrency: MaximumConcurrency is set and out of 2..1000.
	ErrInvalidMaximumConcurrency = errors.New("lambdaevents: invalid MaximumConcurrency")
	// ErrInvalidFunctionTimeout: FunctionTimeout is out of 1..900 seconds or not whole seconds, or (from
	// NewInvoker and Run) longer than the queue's visibility timeout.
	ErrInvalidFunctionTimeout = errors.New("lambdaevents: invalid FunctionTimeout")
	// ErrInvalidFunctionConcurrency: FunctionConcurrency is out of 1..1000.
	ErrInvalidFunctionConcurrency = errors.New("lambdaevents: invalid FunctionConcurrency")
)

// A Mapping is the configuration of an event source mapping from an SQS queue to a function reached over
// HTTP, as Lambda's CreateEventSourceMapping takes it: each batch of the queue is POSTed to FunctionURL as
// the JSON event Lambda sends an SQS function, and the answer is read as Lambda reads a function's. Its fields
// are AWS's, in Go spelling; a field left at zero takes AWS's default. FunctionConcurrency is not AWS's: see
// there.
//
// The queue is not a field: [NewInvoker] takes it as a fifoq.Source. As on AWS, the queue's own settings stay
// on the queue: its visibility timeout (how long a failed batch waits before it is retried) and its redrive
// policy (the dead-letter queue a message moves to past maxReceiveCount). AWS refuses a second mapping of one
// queue to one function; a program that runs several Mappings should refuse that too.
//
// [Mapping.Validate] checks the fields as CreateEventSourceMapping does. A Mapping is a plain value: copy it
// freely.
type Mapping struct {
	// FunctionURL is where each batch is POSTed: an absolute http or https URL, such as the invocation URL of
	// the Lambda Runtime Interface Emulator, http://HOST:PORT/2015-03-31/functions/function/invocations (the
	// URL of Lambda's Invoke API for a function named "function"). Required.
	FunctionURL string
	// EventSourceARN is the queue's ARN, arn:PARTITION:sqs:REGION:ACCOUNT:NAME: the records' eventSourceARN,
	// and the source of their awsRegion and of the account and region of a DeadLetterQueueSourceArn. Empty
	// means arn:aws:sqs:us-east-1:000000000000:NAME, with the name of the source (its Name method, as a
	// *fifoq.Queue has).
	EventSourceARN string
	// BatchSize is the most records in one invocation: 1..10 on a FIFO queue, 1..10,000 on a standard one,
	// where more than 10 needs a MaximumBatchingWindow of at least 1 second. A batch also ends at 6 MB of
	// bodies and attributes, the payload of a synchronous invocation. Defaults to 10.
	BatchSize int
	// MaximumBatchingWindow (MaximumBatchingWindowInSeconds) is how long a batch may gather records before
	// the function is invoked: whole seconds, 0..300 s. FIFO queues take none. Defaults to 0: a batch is
	// invoked with the messages available when the first one is.
	MaximumBatchingWindow time.Duration
	// FunctionResponseTypes is empty, or holds "ReportBatchItemFailures" ([ReportBatchItemFailures]): the
	// function may then answer {"batchItemFailures":[{"itemIdentifier":"<messageId>"},...]}, which fails
	// only those messages (and on a FIFO queue the later messages of their groups in the batch) and deletes
	// the others. Without it, an answer that is not a function error is a success, whatever it says.
	FunctionResponseTypes []string
	// MaximumConcurrency (ScalingConfig.MaximumConcurrency) is the most invocations of this mapping at once:
	// 2..1000. 0 means no limit of the mapping's own, as on AWS; FunctionConcurrency still bounds it. On a
	// FIFO queue the groups with messages available bound it too, since a group is in one batch at a time.
	MaximumConcurrency int
	// Enabled, when false, makes the mapping poll nothing: [Invoker.Run] waits for its context and returns.
	// Defaults to true (nil).
	Enabled *bool
	// FunctionTimeout is the function's timeout (a Lambda function's Timeout): an invocation with no answer
	// after it fails its batch, and the request is cancelled. Whole seconds, 1..900 s, and no longer than the
	// queue's visibility timeout (AWS refuses the mapping otherwise). Defaults to 3 seconds, as on AWS.
	FunctionTimeout time.Duration
	// FunctionConcurrency is not an AWS field: it is how many invocations the function at FunctionURL takes
	// at once, as the reserved concurrency of a Lambda function would bound it. The Runtime Interface
	// Emulator runs one invocation at a time and answers a second one, while the first runs, with 400 Bad
	// Request, so the default is 1; raise it for a function that serves requests concurrently (several
	// emulators behind a load balancer, or a server of your own). The mapping runs at most
	// min(MaximumConcurrency, FunctionConcurrency) invocations at once: 1..1000. Defaults to 1.
	FunctionConcurrency int
}

// Validate checks m as Lambda's CreateEventSourceMapping does for a queue that is FIFO or standard, as fifo
// says, and returns the first problem, in the order of the fields, wrapped around the field's sentinel
// (ErrInvalidBatchSize and so on): the field's name, the value, and the rule. It cannot check what needs the
// queue (FunctionTimeout against its visibility timeout): [NewInvoker] does.
func (m Mapping) Validate(fifo bool) error {
	if err := validateFunctionURL(m.FunctionURL); err != nil {
		return err
	}
	if m.EventSourceARN != "" {
		_, queue, ok := catalog.ParseQueueARN(m.EventSourceARN)
		if !ok {
			return fmt.Errorf("%w: %q, want arn:PARTITION:sqs:REGION:ACCOUNT:NAME", ErrInvalidEventSourceARN, m.EventSourceARN)
		}
		if isFIFO := strings.HasSuffix(queue, ".fifo"); isFIFO != fifo {
			kind := map[bool]string{true: "a FIFO queue", false: "a standard queue"}
			return fmt.Errorf("%w: %q names %s, and the source is %s", ErrInvalidEventSourceARN, m.EventSourceARN,
				kind[isFIFO], kind[fifo])
		}
	}
	batchSize := m.BatchSize
	if batchSize == 0 {
		batchSize = fifoq.DefaultBatchSize
	}
	switch {
	case fifo && (batchSize < 1 || batchSize > fifoq.MaxBatchEntries):
		return fmt.Errorf("%w: %d, a FIFO queue takes 1..%d", ErrInvalidBatchSize, m.BatchSize, fifoq.MaxBatchEntries)
	case batchSize < 1 || batchSize > fifoq.MaxBatchSize:
		return fmt.Errorf("%w: %d, want 1..%d", ErrInvalidBatchSize, m.BatchSize, fifoq.MaxBatchSize)
	}
	w := m.MaximumBatchingWindow
	switch {
	case w < 0 || w > fifoq.MaxBatchWindow:
		return fmt.Errorf("%w: %v, want 0..%v", ErrInvalidBatchingWindow, w, fifoq.MaxBatchWindow)
	case w%time.Second != 0:
		return fmt.Errorf("%w: %v is not whole seconds (MaximumBatchingWindowInSeconds)", ErrInvalidBatchingWindow, w)
	case fifo && w > 0:
		return fmt.Errorf("%w: %v: batching window is not supported for FIFO queues", ErrInvalidBatchingWindow, w)
	case batchSize > fifoq.MaxBatchEntries && w < time.Second:
		return fmt.Errorf("%w: %d needs a MaximumBatchingWindow of at least 1s", ErrInvalidBatchSize, batchSize)
	}
	switch {
	case len(m.FunctionResponseTypes) > 1:
		return fmt.Errorf("%w: %q, want at most one value", ErrInvalidFunctionResponseTypes, m.FunctionResponseTypes)
	case len(m.FunctionResponseTypes) == 1 && m.FunctionResponseTypes[0] != ReportBatchItemFailures:
		return fmt.Errorf("%w: %q, the one value is %q", ErrInvalidFunctionResponseTypes, m.FunctionResponseTypes[0],
			ReportBatchItemFailures)
	}
	if c := m.MaximumConcurrency; c != 0 && (c < minMaximumConcurrency || c > maxMaximumConcurrency) {
		return fmt.Errorf("%w: %d, want %d..%d", ErrInvalidMaximumConcurrency, c, minMaximumConcurrency, maxMaximumConcurrency)
	}
	switch t := m.FunctionTimeout; {
	case t < 0 || t > maxFunctionTimeout:
		return fmt.Errorf("%w: %v, want 1s..%v", ErrInvalidFunctionTimeout, t, maxFunctionTimeout)
	case t%time.Second != 0:
		return fmt.Errorf("%w: %v is not whole seconds", ErrInvalidFunctionTimeout, t)
	}
	if c := m.FunctionConcurrency; c < 0 || c > maxFunctionConcurrency {
		return fmt.Errorf("%w: %d, want 1..%d", ErrInvalidFunctionConcurrency, c, maxFunctionConcurrency)
	}
	return nil
}

// validateFunctionURL checks that u is an absolute http or https URL with a host.
func validateFunctionURL(u string) error {
	if u == "" {
		return fmt.Errorf("%w: empty: the URL to POST the batches to is required", ErrInvalidFunctionURL)
	}
	p, err := url.Parse(u)
	switch {
	case err != nil:
		return fmt.Errorf("%w: %w", ErrInvalidFunctionURL, err)
	case p.Scheme != "http" && p.Scheme != "https":
		return fmt.Errorf("%w: %q, want an http or https URL", ErrInvalidFunctionURL, u)
	case p.Host == "":
		return fmt.Errorf("%w: %q has no host", ErrInvalidFunctionURL, u)
	}
	return nil
}

// enabled reports whether the mapping polls: Enabled, defaulting to true.
func (m *Mapping) enabled() bool { return m.Enabled == nil || *m.Enabled }

// reportsItemFailures reports whether FunctionResponseTypes holds ReportBatchItemFailures.
func (m *Mapping) reportsItemFailures() bool {
	return len(m.FunctionResponseTypes) == 1 && m.FunctionResponseTypes[0] == ReportBatchItemFailures
}

// withDefaults returns m with its zero fields set to their defaults. m must be valid.
func (m Mapping) withDefaults() Mapping {
	if m.BatchSize == 0 {
		m.BatchSize = fifoq.DefaultBatchSize
	}
	if m.FunctionTimeout == 0 {
		m.FunctionTimeout = defaultFunctionTimeout
	}
	if m.FunctionConcurrency == 0 {
		m.FunctionConcurrency = defaultFunctionConcurrency
	}
	m.FunctionResponseTypes = append([]string(nil), m.FunctionResponseTypes...)
	enabled := m.enabled()
	m.Enabled = &enabled // a copy: changing the caller's bool later changes nothing
	return m
}

// concurrency is how many invocations run at once: min(MaximumConcurrency, FunctionConcurrency).
func (m *Mapping) concurrency() int {
	if m.MaximumConcurrency == 0 {
		return m.FunctionConcurrency
	}
	return min(m.MaximumConcurrency, m.FunctionConcurrency)
}

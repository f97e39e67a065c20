package main

// The event source mappings of "fifoq serve --config": each polls a queue of the server and POSTs its batches
// to a function URL as Lambda's event (package lambdaevents). This file reads and checks them; mappings_serve.go
// runs them.

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/lambdaevents"
)

// mappingJSON is an event source mapping as the config file gives it: the fields of Lambda's
// CreateEventSourceMapping in camel case, as CloudFormation and SAM name them, with the queue by name or ARN
// and the function by URL. A pointer is nil when the field is not given, so that a 0 given is told from
// the default.
type mappingJSON struct {
	Queue                          string   `json:"queue"`
	FunctionURL                    string   `json:"functionUrl"`
	BatchSize                      *int     `json:"batchSize"`
	MaximumBatchingWindowInSeconds *int     `json:"maximumBatchingWindowInSeconds"`
	FunctionResponseTypes          []string `json:"functionResponseTypes"`
	MaximumConcurrency             *int     `json:"maximumConcurrency"`
	Enabled                        *bool    `json:"enabled"`
	// FunctionTimeout is the function's Timeout, in seconds, as SAM's and CloudFormation's
	// AWS::Lambda::Function take it.
	FunctionTimeout *int `json:"functionTimeout"`
	// FunctionConcurrency is lambdaevents.Mapping.FunctionConcurrency: how many invocations the function
	// takes at once (1 for the Runtime Interface Emulator).
	FunctionConcurrency *int `json:"functionConcurrency"`
}

// mappingSpec is an event source mapping of the config file, checked as far as it can be without the
// server's queues.
type mappingSpec struct {
	// Queue is the queue as the file names it: a name of the default account and region, or an ARN.
	Queue string
	// Mapping holds the settings, checked with Validate for the kind of queue the name says (a FIFO queue's
	// name ends in .fifo); its EventSourceARN is set once the queue is found.
	Mapping lambdaevents.Mapping
	// origin names the mapping in its errors: "config FILE:LINE:COL: event source mapping N (queue Q)".
	origin string
}

// configNames are the config file's names of the fields of lambdaevents.Mapping, for its errors, which name
// the Go fields.
var configNames = strings.NewReplacer(
	"FunctionURL", "functionUrl",
	"EventSourceARN", "queue",
	"BatchSize", "batchSize",
	"MaximumBatchingWindow", "maximumBatchingWindowInSeconds",
	"FunctionResponseTypes", "functionResponseTypes",
	"MaximumConcurrency", "maximumConcurrency",
	"FunctionTimeout", "functionTimeout",
	"FunctionConcurrency", "functionConcurrency",
)

// mappingSpecs checks the event source mappings of the config file at path, whose content is data, and
// returns them. Each is checked as Lambda's CreateEventSourceMapping checks it (lambdaevents.Mapping.Validate,
// for the kind of queue its name says); the first problem is returned, naming the file, the line and the
// column of the mapping, its index and its queue.
func mappingSpecs(path string, data []byte, ms []mappingJSON) ([]mappingSpec, error) {
	if len(ms) == 0 {
		return nil, nil
	}
	offsets := listOffsets(data, "eventSourceMappings")
	out := make([]mappingSpec, 0, len(ms))
	for i, mj := range ms {
		at := path
		if i < len(offsets) {
			at = where(path, data, offsets[i])
		}
		s := mappingSpec{Queue: mj.Queue, origin: fmt.Sprintf("config %s: event source mapping %d (queue %s)", at, i, mj.Queue)}
		if mj.Queue == "" {
			s.origin = fmt.Sprintf("config %s: event source mapping %d", at, i)
			return nil, fmt.Errorf("%s: no queue: give \"queue\", a queue's name or ARN", s.origin)
		}
		_, name, err := queueOfMapping(mj.Queue, catalog.Namespace{})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.origin, err)
		}
		if s.Mapping, err = mj.mapping(); err == nil {
			err = s.Mapping.Validate(strings.HasSuffix(name, ".fifo"))
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %s", s.origin, configError(err))
		}
		out = append(out, s)
	}
	return out, nil
}

// mapping returns the lambdaevents.Mapping of mj, or the error of a field given as 0 where 0 would mean its
// default (AWS refuses a BatchSize of 0; lambdaevents takes it for 10).
func (mj *mappingJSON) mapping() (lambdaevents.Mapping, error) {
	m := lambdaevents.Mapping{
		FunctionURL:           mj.FunctionURL,
		FunctionResponseTypes: mj.FunctionResponseTypes,
		Enabled:               mj.Enabled,
	}
	for _, f := range []struct {
		given *int
		set   *int
		err   error
		want  string
	}{
		{mj.BatchSize, &m.BatchSize, lambdaevents.ErrInvalidBatchSize, "1..10 on a FIFO queue, 1..10000 on a standard one"},
		{mj.MaximumConcurrency, &m.MaximumConcurrency, lambdaevents.ErrInvalidMaximumConcurrency, "2..1000"},
		{mj.FunctionConcurrency, &m.FunctionConcurrency, lambdaevents.ErrInvalidFunctionConcurrency, "1..1000"},
	} {
		if f.given == nil {
			continue
		}
		if *f.given == 0 {
			return lambdaevents.Mapping{}, fmt.Errorf("%w: 0, want %s", f.err, f.want)
		}
		*f.set = *f.given
	}
	if mj.MaximumBatchingWindowInSeconds != nil {
		m.MaximumBatchingWindow = seconds(*mj.MaximumBatchingWindowInSeconds)
	}
	if mj.FunctionTimeout != nil {
		if *mj.FunctionTimeout == 0 {
			return lambdaevents.Mapping{}, fmt.Errorf("%w: 0, want 1..900 seconds", lambdaevents.ErrInvalidFunctionTimeout)
		}
		m.FunctionTimeout = seconds(*mj.FunctionTimeout)
	}
	return m, nil
}

// seconds returns n seconds, held within a range where a Duration cannot overflow (and out of every range
// Validate accepts, when n is).
func seconds(n int) time.Duration {
	const bound = 1 << 30
	return time.Duration(min(max(n, -bound), bound)) * time.Second
}

// configError returns the text of an error of lambdaevents.Mapping.Validate with the config file's names of
// the fields: "invalid batchSize: 11, a FIFO queue takes 1..10".
func configError(err error) string {
	return configNames.Replace(strings.TrimPrefix(err.Error(), "lambdaevents: "))
}

// queueOfMapping returns the namespace and name of the queue a mapping names by q: a queue's name, in home
// (the server's default account and region), or an SQS ARN, arn:PARTITION:sqs:REGION:ACCOUNT:NAME.
func queueOfMapping(q string, home catalog.Namespace) (catalog.Namespace, string, error) {
	if !strings.HasPrefix(q, "arn:") {
		if strings.ContainsAny(q, ":/") {
			return catalog.Namespace{}, "", fmt.Errorf("queue %q: want a queue's name or an SQS ARN, arn:aws:sqs:REGION:ACCOUNT:NAME", q)
		}
		return home, q, nil
	}
	ns, name, ok := catalog.ParseQueueARN(q)
	if !ok {
		return catalog.Namespace{}, "", fmt.Errorf("queue %q: want an SQS ARN, arn:aws:sqs:REGION:ACCOUNT:NAME", q)
	}
	return ns, name, nil
}

// redactedURL returns u without its password, for the logs, the metrics and the console.
func redactedURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return p.Redacted()
}

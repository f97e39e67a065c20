package main

// The event source mappings of "fifoq serve" while it serves: one lambdaevents.Invoker for each mapping of
// the config file, over the server's queue, started once the server listens and stopped on SIGINT or
// SIGTERM: no new batch is taken, and the invocations under way have --shutdown-timeout to end.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/fifoqprom"
	"github.com/fifoq/fifoq/fifoqweb"
	"github.com/fifoq/fifoq/lambdaevents"
)

// How a mapping waits for its queue after it stopped (the queue was deleted, or failed).
const (
	// queueCheckInterval is how often a running mapping checks that the server still holds its queue, and a
	// stopped one looks for it again.
	queueCheckInterval = 2 * time.Second
	// maxRestartBackoff caps the wait, doubling from queueCheckInterval, between two tries of a mapping whose
	// queue keeps failing.
	maxRestartBackoff = 30 * time.Second
	// mappingLogInterval is the least time between two records that say a mapping still cannot run.
	mappingLogInterval = time.Minute
)

// mappings are the event source mappings of a server. Use newMappings; their methods are safe for
// concurrent use, but start and stop are called once each, in that order.
type mappings struct {
	list    []*mapping
	logger  *slog.Logger
	timeout time.Duration // --shutdown-timeout

	started bool
	cancel  context.CancelFunc // ends the mappings' polls
	hard    context.CancelFunc // cuts the invocations under way: the shutdown timeout has passed
	cut     chan bool          // whether hard was called: sent once the mappings have ended, after start
	wg      sync.WaitGroup
}

// mapping is one event source mapping of the config file.
type mapping struct {
	ns       catalog.Namespace // the queue's namespace and name in the server
	name     string
	label    string // the queue's name in the metrics and the console: catalog.Catalog.DisplayName
	function string // the function URL without a password
	m        lambdaevents.Mapping
	client   *http.Client
	own      *http.Transport
	logger   *slog.Logger

	mu    sync.Mutex // guards the fields below
	inv   *lambdaevents.Invoker
	q     catalog.Queue // inv's queue
	state string        // why an enabled mapping does not poll; "" while it does
}

// newMappings finds the queue of each mapping of cfg in api and makes its Invoker, which checks it again
// with the queue (the function timeout against the queue's visibility timeout), and logs the mappings. A
// mapping whose queue the server does not hold, or that the Invoker refuses, is a usage error that names
// the mapping.
func newMappings(cat *catalog.Catalog, cfg serveConfig, logger *slog.Logger) (*mappings, error) {
	ms := &mappings{logger: logger, timeout: cfg.shutdownTimeout, cancel: func() {}, cut: make(chan bool, 1)}
	hardCtx, hard := context.WithCancel(context.Background())
	ms.hard = hard
	home := catalog.Namespace{Account: cfg.account, Region: cfg.region} // the server's default account and region
	type key struct {
		ns             catalog.Namespace
		name, function string
	}
	seen := make(map[key]string)
	for _, s := range cfg.mappings {
		ns, name, err := queueOfMapping(s.Queue, home)
		if err != nil { // checked by mappingSpecs
			return nil, &usageError{fmt.Errorf("%s: %w", s.origin, err)}
		}
		q, ok := cat.Queue(ns, name)
		if !ok {
			return nil, &usageError{fmt.Errorf("%s: the server has no queue %s in account %s and region %s: declare it in the "+
				`config's "queues" or with --queue, or name a queue of --data-dir`, s.origin, name, ns.Account, ns.Region)}
		}
		k := key{ns, name, s.Mapping.FunctionURL}
		if other, dup := seen[k]; dup {
			return nil, &usageError{fmt.Errorf("%s: the same queue and function as %s: a queue has one mapping to a function, "+
				"as on AWS (ResourceConflictException)", s.origin, other)}
		}
		seen[k] = s.origin
		m := &mapping{ns: ns, name: name, label: cat.DisplayName(ns, name), function: redactedURL(s.Mapping.FunctionURL),
			m: s.Mapping, logger: logger}
		m.m.EventSourceARN = q.ARN()
		m.own, m.client = newFunctionClient(hardCtx, m.m)
		if err := m.setInvoker(q); err != nil {
			return nil, &usageError{fmt.Errorf("%s: %s", s.origin, configError(err))}
		}
		ms.list = append(ms.list, m)
	}
	for _, m := range ms.list {
		d := m.inv.Mapping()
		logger.Info("event source mapping", "queue", m.label, "function_url", m.function, "enabled", *d.Enabled,
			"batch_size", d.BatchSize, "batching_window", d.MaximumBatchingWindow, "maximum_concurrency", d.MaximumConcurrency,
			"function_concurrency", d.FunctionConcurrency, "function_timeout", d.FunctionTimeout,
			"report_batch_item_failures", len(d.FunctionResponseTypes) > 0, "event_source_arn", d.EventSourceARN)
	}
	return ms, nil
}

// source is a server's queue under the name the server's metrics and console give it, so that the Invoker's
// logs and metrics name it so; the rest is the queue's.
type source struct {
	catalog.Queue
	name string
}

// Name returns the queue's name in the server's metrics and console.
func (s source) Name() string { return s.name }

// setInvoker makes the mapping's Invoker over q.
func (m *mapping) setInvoker(q catalog.Queue) error {
	inv, err := lambdaevents.NewInvoker(source{q, m.label}, m.m, lambdaevents.Options{Client: m.client, Logger: m.logger})
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inv, m.q, m.state = inv, q, ""
	return nil
}

// newFunctionClient returns the client of a mapping's invocations: http.DefaultTransport's settings, no
// redirect followed (Lambda's Invoke API does not redirect), as lambdaevents' own client; and a request
// cut when hard ends, so that a shutdown does not wait past its timeout for an invocation.
func newFunctionClient(hard context.Context, m lambdaevents.Mapping) (*http.Transport, *http.Client) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = max(m.FunctionConcurrency, 1)
	return t, &http.Client{
		Transport: cuttable{base: t, hard: hard},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// errShutdownTimeout cuts the invocations still under way at the shutdown timeout.
var errShutdownTimeout = errors.New("cut at the shutdown timeout")

// cuttable is an http.RoundTripper whose requests end when hard does, their answers unread.
type cuttable struct {
	base http.RoundTripper
	hard context.Context
}

func (c cuttable) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(r.Context())
	stop := context.AfterFunc(c.hard, func() { cancel(errShutdownTimeout) })
	end := func() {
		stop()
		cancel(nil)
	}
	resp, err := c.base.RoundTrip(r.WithContext(ctx))
	if err != nil {
		end()
		if errors.Is(context.Cause(ctx), errShutdownTimeout) && !errors.Is(err, errShutdownTimeout) {
			err = fmt.Errorf("%w: %w", errShutdownTimeout, err)
		}
		return nil, err
	}
	resp.Body = &endingBody{ReadCloser: resp.Body, end: end}
	return resp, nil
}

// endingBody calls end once it is closed: the request's context lives as long as its answer is read.
type endingBody struct {
	io.ReadCloser
	end  func()
	once sync.Once
}

func (b *endingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.end)
	return err
}

// start runs the enabled mappings until ctx is done or stop is called. When that happens, each takes no
// new batch; the invocations under way have the shutdown timeout to end, after which they are cut (their
// messages come back after their visibility timeout, as for any failed batch).
func (ms *mappings) start(ctx context.Context, cat *catalog.Catalog) {
	ctx, ms.cancel = context.WithCancel(ctx)
	ms.started = true
	for _, m := range ms.list {
		if !*m.inv.Mapping().Enabled {
			continue
		}
		ms.wg.Go(func() { m.run(ctx, cat) })
	}
	ended := make(chan struct{})
	go func() {
		ms.wg.Wait()
		close(ended)
	}()
	go func() {
		<-ctx.Done()
		inFlight := 0
		for _, m := range ms.list {
			inv, _ := m.snapshot()
			inFlight += inv.Metrics().InFlight
		}
		if inFlight > 0 {
			ms.logger.Info("event source mappings: polling stopped; waiting for the invocations under way",
				"invocations", inFlight, "timeout", ms.timeout)
		}
		timer := time.NewTimer(ms.timeout)
		defer timer.Stop()
		select {
		case <-ended:
			ms.cut <- false
		case <-timer.C:
			ms.hard()
			<-ended
			ms.cut <- true
		}
	}()
}

// stop stops the mappings that start started, and returns once they have ended: at once if none is under
// way, at most the shutdown timeout after ctx of start ended (and the time the invocations then cut take to
// end). It returns an error if invocations had to be cut.
func (ms *mappings) stop() error {
	defer ms.hard()
	ms.cancel()
	if !ms.started {
		return nil
	}
	if cut := <-ms.cut; cut {
		msg := "event source mappings: invocations were still under way after the shutdown timeout: cut; their messages come back after their visibility timeout"
		ms.logger.Error(msg, "timeout", ms.timeout)
		return errors.New(msg)
	}
	return nil
}

// run runs the mapping until ctx is done. Its Invoker stops when its queue fails (a store that refuses the
// receives) or is no longer the server's (deleted, or deleted and created again): then the mapping looks for
// the server's queue of that name, after a wait that doubles from queueCheckInterval to maxRestartBackoff,
// and runs a new Invoker over it (whose counters start again at 0). It logs that it stopped, then at most
// once a minute that it still cannot run, and that it resumed.
func (m *mapping) run(ctx context.Context, cat *catalog.Catalog) {
	defer m.own.CloseIdleConnections()
	var (
		wait    = queueCheckInterval
		lastLog time.Time
		lastErr string
	)
	stopped := func(err error, msg string) {
		m.mu.Lock()
		m.state = "stopped: " + err.Error()
		m.mu.Unlock()
		if now := time.Now(); err.Error() != lastErr || now.Sub(lastLog) >= mappingLogInterval {
			m.logger.Warn(msg, "queue", m.label, "function_url", m.function, "error", err, "retry_in", wait)
			lastLog, lastErr = now, err.Error()
		}
	}
	for {
		m.mu.Lock()
		inv, q, state := m.inv, m.q, m.state
		m.mu.Unlock()
		if state == "" {
			err := m.runWhileHeld(ctx, inv, q, cat)
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				err = errors.New("its queue was deleted")
			}
			wait, lastErr = queueCheckInterval, ""
			stopped(err, "event source mapping stopped")
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		wait = min(2*wait, maxRestartBackoff)
		cur, ok := cat.Queue(m.ns, m.name)
		if !ok {
			stopped(errors.New("its queue does not exist"), "event source mapping still stopped")
			continue
		}
		if err := m.setInvoker(cur); err != nil {
			stopped(errors.New(configError(err)), "event source mapping still stopped")
			continue
		}
		m.logger.Info("event source mapping resumed", "queue", m.label, "function_url", m.function)
	}
}

// runWhileHeld runs inv over q until ctx is done, inv's queue fails (its error), or the server no longer
// holds q under the mapping's queue's name (nil).
func (m *mapping) runWhileHeld(ctx context.Context, inv *lambdaevents.Invoker, q catalog.Queue, cat *catalog.Catalog) error {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		tick := time.NewTicker(queueCheckInterval)
		defer tick.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-tick.C:
				if cur, ok := cat.Queue(m.ns, m.name); !ok || cur != q {
					cancel()
					return
				}
			}
		}
	}()
	err := inv.Run(rctx)
	if ctx.Err() != nil || rctx.Err() != nil {
		return nil
	}
	if err == nil {
		err = errors.New("the mapping stopped")
	}
	return err
}

// snapshot returns the mapping's Invoker (the last one, while it is stopped) and its state.
func (m *mapping) snapshot() (*lambdaevents.Invoker, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.inv, m.state
}

// metrics returns the mappings' metrics, for fifoqprom.NewMappingCollector.
func (ms *mappings) metrics() []fifoqprom.MappingMetrics {
	out := make([]fifoqprom.MappingMetrics, 0, len(ms.list))
	for _, m := range ms.list {
		inv, _ := m.snapshot()
		x := inv.Metrics()
		mm := fifoqprom.MappingMetrics{
			Queue: m.label, Function: m.function, Enabled: x.Enabled, Invocations: x.Invocations, Records: x.Records,
			Errors: make(map[string]uint64, len(x.Errors)), ItemFailures: x.ItemFailures, InFlight: x.InFlight,
			Duration: x.Duration, Backoff: x.Backoff,
		}
		for k, n := range x.Errors {
			mm.Errors[k.String()] = n
		}
		out = append(out, mm)
	}
	return out
}

// views returns the mappings as the console shows them, in the order of the config file.
func (ms *mappings) views() []fifoqweb.MappingView {
	out := make([]fifoqweb.MappingView, 0, len(ms.list))
	for _, m := range ms.list {
		inv, state := m.snapshot()
		d, x := inv.Mapping(), inv.Metrics()
		v := fifoqweb.MappingView{Queue: m.label, FunctionURL: m.function, State: state, Enabled: *d.Enabled,
			Invocations: x.Invocations, ItemFailures: x.ItemFailures, InFlight: x.InFlight, Backoff: x.Backoff}
		for _, n := range x.Errors {
			v.Errors += n
		}
		v.BatchSize, v.BatchingWindow, v.MaximumConcurrency = d.BatchSize, d.MaximumBatchingWindow, d.MaximumConcurrency
		v.FunctionTimeout, v.ReportBatchItemFailures = d.FunctionTimeout, len(d.FunctionResponseTypes) > 0
		v.Concurrency = d.FunctionConcurrency
		if d.MaximumConcurrency > 0 {
			v.Concurrency = min(d.MaximumConcurrency, d.FunctionConcurrency)
		}
		out = append(out, v)
	}
	return out
}

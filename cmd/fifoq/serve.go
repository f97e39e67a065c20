package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/durable"
	"github.com/fifoq/fifoq/fifoqprom"
	"github.com/fifoq/fifoq/fifoqweb"
	"github.com/fifoq/fifoq/sqsapi"
)

// serve creates the queues of cfg (a name ending in ".fifo" without a FifoQueue attribute makes a FIFO
// queue, as in fifoq.New), then serves the SQS API on cfg.addr, and the metrics on cfg.metricsAddr, until ctx
// is done. The endpoint's URL goes to stdout once it listens, then the metrics URL. With cfg.dataDir the
// queues are kept in that directory, which is closed on the way out.
func serve(ctx context.Context, cfg serveConfig, stdout, stderr io.Writer) (err error) {
	logger := newLogger(cfg, stderr)
	opts := []sqsapi.Option{sqsapi.WithLogger(logger), sqsapi.WithRegion(cfg.region), sqsapi.WithAccountID(cfg.account),
		sqsapi.WithMaxRequestBytes(cfg.maxRequestBytes)}
	if cfg.credentials != nil {
		keys := maps.Clone(cfg.credentials)
		opts = append(opts, sqsapi.WithSignatureVerification(func(id string) (string, bool) {
			secret, ok := keys[id]
			return secret, ok
		}))
	}
	var requests *fifoqprom.RequestCollector // of the requests, when the metrics are served
	if cfg.metricsAddr != "" {
		requests = fifoqprom.NewRequestCollector()
		opts = append(opts, sqsapi.WithRequestObserver(requests))
	}
	home := catalog.Namespace{Account: cfg.account, Region: cfg.region}
	copts := []catalog.Option{catalog.WithLogger(logger), catalog.WithDefaultNamespace(home)}
	var stored *fifoq.Store // the store of --data-dir, for its metrics
	var cat *catalog.Catalog
	var served atomic.Bool // it listened: a failed start's data directory is removed, a served one never
	if cfg.dataDir == "" {
		cat = catalog.New(copts...)
	} else {
		dopts := []durable.Option{durable.WithLogger(logger)}
		if cfg.syncEvery > 0 {
			dopts = append(dopts, durable.WithSyncEvery(cfg.syncEvery))
		}
		st, made, oerr := openStore(ctx, cfg.dataDir, dopts...)
		if oerr != nil {
			return oerr
		}
		stored = st
		defer func() {
			cerr := st.Close()
			if errors.Is(cerr, fifoq.ErrStoreFailed) && errors.Is(err, fifoq.ErrStoreFailed) {
				logger.Info("store closed after its failure", "data_dir", cfg.dataDir) // logged already
			} else if cerr != nil {
				logger.Error("closing the store", "data_dir", cfg.dataDir, "error", cerr)
			} else {
				logger.Info("store closed", "data_dir", cfg.dataDir)
			}
			err = cmp.Or(err, cerr)
			if err != nil && !served.Load() {
				removeNew(made, logger)
			}
		}()
		if cat, oerr = openCatalog(ctx, st, copts); oerr != nil {
			return fmt.Errorf("--data-dir %s: %w", cfg.dataDir, oerr)
		}
		logger.Info("store opened", "data_dir", cfg.dataDir, "queues", len(st.Queues()))
	}
	defer cat.Close() // before the store's Close: it stops the move tasks; it returns nil
	api := sqsapi.NewServer(append(opts, sqsapi.WithCatalog(cat))...)
	defer api.Close() // it ends the long polls; it returns nil

	declared := make(map[string]map[string]string) // the attributes of each queue declared
	for _, q := range cfg.queues {
		if _, ok := q.Attributes["FifoQueue"]; !ok && strings.HasSuffix(q.Name, ".fifo") {
			// As fifoq.New does; SQS itself wants FifoQueue=true with a ".fifo" name.
			q.Attributes = maps.Clone(q.Attributes)
			if q.Attributes == nil {
				q.Attributes = make(map[string]string)
			}
			q.Attributes["FifoQueue"] = "true"
		}
		// The declared attributes win over the stored ones (changed at run time by SetQueueAttributes), as a
		// re-applied Terraform or CloudFormation definition would: a restart with the same command line
		// always starts, with the queues as declared.
		_, stored := api.Queue(q.Name)
		if prev, twice := declared[q.Name]; twice { // declared twice: the declarations must agree, as CreateQueue wants
			if !maps.Equal(prev, q.Attributes) {
				return declareError(q, fmt.Errorf("queue %s declared twice, with other attributes: %v and %v", q.Name, prev, q.Attributes))
			}
			continue
		}
		declared[q.Name] = q.Attributes
		changes, err := api.DeclareQueue(q.Name, q.Attributes)
		switch {
		case err != nil && stored && !errors.Is(err, fifoq.ErrStoreFailed):
			logger.Warn("queue kept with its stored attributes: the declared ones are refused", "queue", q.Name,
				"attributes", q.Attributes, "error", err)
		case err != nil:
			return declareError(q, fmt.Errorf("create queue %s: %w", q.Name, err))
		case stored:
			for _, c := range changes {
				logger.Warn("stored attribute differs from the declared one: set to the declared value", "queue", q.Name,
					"attribute", c.Name, "stored", c.Stored, "declared", c.Declared)
			}
			logger.Info("queue kept", "queue", q.Name, "attributes", q.Attributes)
		default:
			logger.Info("queue created", "queue", q.Name, "attributes", q.Attributes)
		}
	}

	if err := declareTopics(ctx, cat, home, cfg.topics, logger); err != nil { // topicdeclare.go
		return err
	}
	ms, err := newMappings(cat, cfg, logger) // mappings_serve.go
	if err != nil {
		return err
	}
	sns, handler, err := withTopics(cfg, api, logger) // SNS beside SQS: topics.go
	if err != nil {
		return err
	}

	// Every listener is bound before the server says it is ready (its URLs on stdout, the "listening" log,
	// /health), and the API's last, so that a check that waits for the API's port finds the metrics and the
	// console open too. The console's envelopes name the API's endpoint: with port 0, which only stdout
	// tells, the API's listener is bound first, to learn it.
	listen := cfg.listen
	if listen == nil {
		listen = new(net.ListenConfig).Listen
	}
	var ln, metricsLn net.Listener
	closeAll := func() { // on an error; the console, once started, is stopped by its defer
		for _, l := range []net.Listener{ln, metricsLn} {
			if l != nil {
				l.Close()
			}
		}
	}
	listenAPI := func() error {
		if ln, err = listen(ctx, "tcp", cfg.addr); err != nil {
			closeAll()
			return fmt.Errorf("--addr: %w", err)
		}
		return nil
	}
	_, port, _ := net.SplitHostPort(cfg.addr)
	apiFirst := port == "0" || port == ""
	if apiFirst {
		if err := listenAPI(); err != nil {
			return err
		}
	}
	if cfg.metricsAddr != "" {
		if metricsLn, err = listen(ctx, "tcp", cfg.metricsAddr); err != nil {
			closeAll()
			return fmt.Errorf("--metrics-addr: %w", err)
		}
	}
	apiEndpoint := urlOf(cfg.addr)
	if ln != nil {
		apiEndpoint = urlOf(ln.Addr().String())
	}
	ccfg := cfg // the console's server page lists the addresses bound, a port 0's too
	if ln != nil {
		ccfg.addr = ln.Addr().String()
	}
	if metricsLn != nil {
		ccfg.metricsAddr = metricsLn.Addr().String()
	}
	consoleURL, stopConsole, err := startConsole(ctx, new(net.ListenConfig), ccfg, cat, logger, fifoqweb.WithMappings(ms.views),
		fifoqweb.WithPublishOptions(sns.PublishOptions(apiEndpoint)...))
	if err != nil {
		closeAll()
		return err
	}
	defer stopConsole()
	if !apiFirst {
		if err := listenAPI(); err != nil {
			return err
		}
	}

	o := serveOptions{api: ln, handler: handler, beginShutdown: api.BeginShutdown, logger: logger,
		timeout: cfg.shutdownTimeout, maxHeaderBytes: cfg.maxHeaderBytes, metrics: metricsLn}
	if stored != nil {
		o.failed, o.storeErr = stored.Failed(), func() error { return storeFailure(stored) }
	}
	if o.metrics != nil {
		reg := newMetricsRegistry(cat, stored, requests)
		reg.MustRegister(fifoqprom.NewMappingCollector(ms.metrics))
		o.metricsHandler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{
			ErrorLog:      slog.NewLogLogger(logger.Handler(), slog.LevelError),
			ErrorHandling: promhttp.ContinueOnError,
		})
	}

	endpoint := urlOf(ln.Addr().String())
	verified := cfg.credentials != nil
	logger.Info("listening", "addr", ln.Addr().String(), "endpoint", endpoint, "queues", len(cat.Queues()),
		"topics", len(cat.Topics()), "signature_verification", verified, "data_dir", cfg.dataDir)
	if ip := ln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() && !verified {
		logger.Warn("listening beyond loopback without signature verification: anyone who can reach the address "+
			"can send, read and delete messages; give --credentials to check the AWS Signature Version 4 of every request",
			"addr", ln.Addr().String())
	}
	served.Store(true)
	fmt.Fprintln(stdout, endpoint)
	if o.metrics != nil {
		metricsURL := urlOf(o.metrics.Addr().String()) + "/metrics"
		logger.Info("serving metrics", "addr", o.metrics.Addr().String(), "url", metricsURL)
		fmt.Fprintln(stdout, metricsURL)
	}
	if consoleURL != "" {
		fmt.Fprintln(stdout, consoleURL)
	}
	ms.start(ctx, cat)
	err = serveHTTP(ctx, o)
	return cmp.Or(err, ms.stop())
}

// urlOf returns the URL of a server listening on addr, as a user can open it: "http://" and addr, with a
// host that means every interface (0.0.0.0, ::, or none) given as 127.0.0.1, as "fifoq health" asks it.
func urlOf(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// newLogger returns the logger of cfg, on w.
func newLogger(cfg serveConfig, w io.Writer) *slog.Logger {
	ho := &slog.HandlerOptions{Level: cfg.logLevel, ReplaceAttr: errorsAsText}
	if cfg.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, ho))
	}
	return slog.New(slog.NewTextHandler(w, ho))
}

// serveOptions is what serveHTTP serves.
type serveOptions struct {
	api            net.Listener
	handler        http.Handler // the SQS API; serveHTTP adds /health
	beginShutdown  func()       // ends the long polls in progress: sqsapi.Server.BeginShutdown
	metrics        net.Listener // nil: no metrics
	metricsHandler http.Handler // /metrics; serveHTTP adds /health
	logger         *slog.Logger
	timeout        time.Duration // the shutdown timeout
	maxHeaderBytes int
	failed         <-chan struct{} // closed when the store fails: fifoq.Store.Failed; nil: never
	storeErr       func() error    // the store's failure (storeFailure); nil: none
}

// serveHTTP serves the API on o.api, and the metrics on o.metrics, until ctx is done, then shuts down:
//
//  1. /health turns to 503, the API listener closes, the long polls in progress are answered at once
//     (o.beginShutdown), and every response from then on says "Connection: close";
//  2. the kept-alive connections have up to drainGrace (at most half of o.timeout) to bring in the requests
//     their clients had sent already, while the others finish (step 1's responses close their connections);
//  3. the idle connections are closed, and the requests in progress have what is left of o.timeout to finish;
//     after that, their contexts end, their connections are closed, and serveHTTP returns an error;
//  4. the metrics listener closes.
//
// When o.failed is closed (the store failed while serving: a full disk), /health turns to 503 with the
// cause at once, the failure is logged once, and the server shuts down as above, then returns the store's
// error, so that the process exits non-zero and its supervisor restarts it: a restart on the store
// recovers every change acknowledged before the failure. It closes the listeners.
func serveHTTP(ctx context.Context, o serveOptions) error {
	base, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBase()
	health := &healthHandler{storeErr: o.storeErr}
	var draining atomic.Bool
	newServer := func(h http.Handler) *http.Server {
		return &http.Server{
			Handler:           h,
			ReadHeaderTimeout: readHeaderTimeout,
			ReadTimeout:       readTimeout,
			WriteTimeout:      writeTimeout,
			IdleTimeout:       idleTimeout,
			MaxHeaderBytes:    o.maxHeaderBytes,
			BaseContext:       func(net.Listener) context.Context { return base },
			ErrorLog:          slog.NewLogLogger(o.logger.Handler(), slog.LevelWarn),
		}
	}
	hs := newServer(withHealth(o.handler, health, &draining))
	var open atomic.Int64               // the API's connections
	allClosed := make(chan struct{}, 1) // a token when open drops to 0
	var freshMu sync.Mutex
	fresh := make(map[net.Conn]struct{}) // connections on which no request has started yet
	hs.ConnState = func(c net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			open.Add(1)
			freshMu.Lock()
			fresh[c] = struct{}{}
			freshMu.Unlock()
		case http.StateActive:
			freshMu.Lock()
			delete(fresh, c)
			freshMu.Unlock()
		case http.StateClosed, http.StateHijacked:
			freshMu.Lock()
			delete(fresh, c)
			freshMu.Unlock()
			if open.Add(-1) == 0 {
				select {
				case allClosed <- struct{}{}:
				default:
				}
			}
		}
	}
	served := make(chan error, 2)
	var failure error // the store's, when it failed
	go func() { served <- hs.Serve(o.api) }()
	var ms *http.Server
	if o.metrics != nil {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", o.metricsHandler)
		mux.Handle("GET /health", health)
		ms = newServer(mux)
		go func() { served <- ms.Serve(o.metrics) }()
	}

	select {
	case err := <-served:
		hs.Close()
		if ms != nil {
			ms.Close()
		}
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	case <-o.failed:
		failure = fmt.Errorf("while serving: %w", o.storeErr())
		// The store logged its failure, with the cause, at Error: once is enough.
		o.logger.Info("the store failed: shutting down, to be restarted")
	}
	start := time.Now()
	o.logger.Info("shutting down", "timeout", o.timeout, "connections", open.Load())
	o.api.Close() // hs.Serve returns net.ErrClosed; the connections go on
	draining.Store(true)
	health.stopping.Store(true)
	if o.beginShutdown != nil {
		o.beginShutdown()
	}
	sctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	grace := time.NewTimer(min(drainGrace, o.timeout/2))
wait:
	for open.Load() > 0 {
		select {
		case <-allClosed:
		case <-grace.C:
			break wait
		}
	}
	grace.Stop()
	// A connection that has not begun a request by now brings none (Shutdown would take it for idle only
	// once it is 5 seconds old): close it.
	freshMu.Lock()
	for c := range fresh {
		c.Close()
	}
	freshMu.Unlock()

	var cut error
	// Shutdown may also return the error of closing the listener again, which is of no interest.
	if err := hs.Shutdown(sctx); errors.Is(err, context.DeadlineExceeded) {
		cut = fmt.Errorf("requests were still in progress after the shutdown timeout (%v): their connections were closed", o.timeout)
		o.logger.Error("shutdown timeout: closing the connections of the requests still in progress", "timeout", o.timeout)
		cancelBase() // the requests still served see their context end
		hs.Close()
	}
	if ms != nil {
		if err := ms.Shutdown(sctx); err != nil {
			ms.Close()
		}
	}
	n := 1
	if ms != nil {
		n++
	}
	for range n {
		if err := <-served; !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
			return fmt.Errorf("serve: %w", err)
		}
	}
	if cut != nil {
		return cmp.Or(failure, cut)
	}
	o.logger.Info("stopped", "duration", time.Since(start))
	return failure
}

// healthHandler answers GET /health: 200 "ok" while the server serves, 503 once it shuts down, and 503
// with the cause once its store failed.
type healthHandler struct {
	stopping atomic.Bool
	storeErr func() error // nil: no store
}

func (h *healthHandler) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if h.storeErr != nil {
		if err := h.storeErr(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, err.Error()+"\n") // "fifoq: store failed: DIR: the cause"
			return
		}
	}
	if h.stopping.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "shutting down\n")
		return
	}
	io.WriteString(w, "ok\n")
}

// withHealth serves GET (and HEAD) /health with health and every other request with api, and makes each
// response say "Connection: close" once draining is set. No SQS request takes that path: queue URLs are
// /<account>/<name>, and the SDKs post to /.
func withHealth(api http.Handler, health http.Handler, draining *atomic.Bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w = &closingWriter{ResponseWriter: w, draining: draining}
		if r.URL.Path == "/health" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			health.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// closingWriter adds "Connection: close" to a response whose header is written once draining is set (a
// long poll may begin before and end after), so that the client sends no more requests on the connection.
type closingWriter struct {
	http.ResponseWriter
	draining *atomic.Bool
	wrote    bool
}

func (w *closingWriter) WriteHeader(status int) {
	w.header()
	w.ResponseWriter.WriteHeader(status)
}

func (w *closingWriter) Write(b []byte) (int, error) {
	w.header()
	return w.ResponseWriter.Write(b)
}

// Unwrap returns the ResponseWriter of net/http, for http.ResponseController.
func (w *closingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *closingWriter) header() {
	if !w.wrote {
		w.wrote = true
		if w.draining.Load() {
			w.Header().Set("Connection", "close")
		}
	}
}

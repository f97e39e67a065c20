package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/fifoq/fifoq/durable"
	"github.com/fifoq/fifoq/sqsapi"
)

// errUsage is a command line that cannot run; what is wrong with it has been printed already.
var errUsage = errors.New("usage")

const usage = `Usage:
  fifoq serve [flags]   serve fifoq queues over the Amazon SQS API, in memory or in --data-dir
                        (fifoq serve -h for the flags)
`

const serveUsage = `Usage: fifoq serve [flags]

Serve fifoq queues over the Amazon SQS API (JSON and query protocols).

The queues live in memory unless --data-dir is given. With --data-dir they are kept in that
directory and come back when the server starts again on it, after a stop or a crash: their
attributes, policies and tags, and their messages with their receive counts. Every request
returns once its changes are on disk. The queues of --queue and --config are then created as
CreateQueue creates them: a stored queue with the same attributes is kept as it is, one with
different attributes stops the start (change a stored queue with SetQueueAttributes).

Flags:
`

// run runs the command line args (without the program name) until ctx is done. The endpoint's URL goes
// to stdout, once it listens; logs and usage go to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	switch args[0] {
	case "serve":
		cfg, err := parseServe(args[1:], stderr)
		if err != nil {
			return err
		}
		return serve(ctx, cfg, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "fifoq: unknown command %q\n%s", args[0], usage)
	return errUsage
}

// serveConfig is what "fifoq serve" runs with.
type serveConfig struct {
	addr            string
	allowRemote     bool
	region, account string
	logLevel        slog.Level
	shutdownTimeout time.Duration
	dataDir         string      // "": the queues live in memory
	queues          []queueSpec // to create, in order: the config file's, then the --queue flags'
}

// queueSpec is a queue to create: its name and SQS attributes, as CreateQueue takes them.
type queueSpec struct {
	Name       string
	Attributes map[string]string
}

// parseServe parses the flags of "fifoq serve" and loads its config file. A bad command line is
// reported to stderr and returned wrapping errUsage; -h returns flag.ErrHelp.
func parseServe(args []string, stderr io.Writer) (serveConfig, error) {
	cfg := serveConfig{logLevel: slog.LevelInfo}
	var flagQueues []queueSpec
	var configFile string
	fs := flag.NewFlagSet("fifoq serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), serveUsage)
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:9324", "`host:port` to listen on; port 0 picks a free port")
	fs.BoolVar(&cfg.allowRemote, "allow-remote", false,
		"allow an --addr that is not a loopback address (the API has no access control: anyone who can reach it can read and delete messages)")
	fs.StringVar(&cfg.region, "region", "us-east-1", "AWS `region` of the queue ARNs")
	fs.StringVar(&cfg.account, "account", "000000000000", "AWS account `id` of the queue URLs and ARNs")
	fs.StringVar(&configFile, "config", "",
		"JSON `file` of queues to create: {\"queues\":[{\"name\":\"orders.fifo\",\"attributes\":{\"ContentBasedDeduplication\":\"true\"}}]}")
	fs.Func("queue", "create a queue: `name[,Attr=Value...]` with SQS attribute names (a name ending in .fifo implies FifoQueue=true); "+
		"repeatable, created in order after the config file's",
		func(s string) error {
			q, err := parseQueueSpec(s)
			if err != nil {
				return err
			}
			flagQueues = append(flagQueues, q)
			return nil
		})
	fs.Func("log-level", "log `level`: debug, info, warn or error (default info)", func(s string) error {
		return cfg.logLevel.UnmarshalText([]byte(s))
	})
	fs.DurationVar(&cfg.shutdownTimeout, "shutdown-timeout", 10*time.Second,
		"how long requests in progress may take to finish on SIGINT or SIGTERM")
	fs.StringVar(&cfg.dataDir, "data-dir", "",
		"keep the queues in `dir` (created if missing), so that they survive a restart or a crash: their attributes, "+
			"policies, tags and messages; without it the queues live in memory and end with the process")

	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return serveConfig{}, err
		}
		return serveConfig{}, fmt.Errorf("%w: %w", errUsage, err)
	}
	fail := func(err error) (serveConfig, error) {
		fmt.Fprintf(stderr, "fifoq serve: %v\n", err)
		return serveConfig{}, fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fail(fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	if err := checkAddr(cfg.addr, cfg.allowRemote); err != nil {
		return fail(err)
	}
	if cfg.region == "" || cfg.account == "" {
		return fail(errors.New("--region and --account cannot be empty"))
	}
	if cfg.shutdownTimeout <= 0 {
		return fail(fmt.Errorf("--shutdown-timeout %v, want more than 0", cfg.shutdownTimeout))
	}
	if configFile != "" {
		qs, err := loadConfig(configFile)
		if err != nil {
			return fail(err)
		}
		cfg.queues = qs
	}
	cfg.queues = append(cfg.queues, flagQueues...)
	return cfg, nil
}

// checkAddr accepts a host:port to listen on: a loopback one (localhost, 127.0.0.0/8 or ::1), or any with
// allowRemote. An empty host listens on every interface, so it is not loopback.
func checkAddr(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %v", addr, err)
	}
	if allowRemote || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--addr %s is not a loopback address: the SQS API has no access control, "+
		"so listening beyond this machine needs --allow-remote", addr)
}

// parseQueueSpec parses a --queue value, name[,Attr=Value...]. A comma followed by something other than
// an attribute name and "=" belongs to the value before it, so JSON values such as a RedrivePolicy can be
// given as they are.
func parseQueueSpec(s string) (queueSpec, error) {
	parts := strings.Split(s, ",")
	q := queueSpec{Name: strings.TrimSpace(parts[0])}
	if q.Name == "" {
		return queueSpec{}, fmt.Errorf("queue %q has no name", s)
	}
	var last string
	for _, p := range parts[1:] {
		if k, v, ok := strings.Cut(p, "="); ok && isAttributeName(strings.TrimSpace(k)) {
			k = strings.TrimSpace(k)
			if _, dup := q.Attributes[k]; dup {
				return queueSpec{}, fmt.Errorf("queue %s: attribute %s given twice", q.Name, k)
			}
			if q.Attributes == nil {
				q.Attributes = make(map[string]string)
			}
			q.Attributes[k], last = v, k
			continue
		}
		if last == "" {
			return queueSpec{}, fmt.Errorf("queue %s: %q is not Attr=Value", q.Name, p)
		}
		q.Attributes[last] += "," + p
	}
	return q, nil
}

// isAttributeName reports whether s looks like an SQS attribute name: a letter, then letters and digits.
func isAttributeName(s string) bool {
	for i, r := range s {
		switch {
		case r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case i > 0 && r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return s != ""
}

// loadConfig reads the queues of a JSON config file:
//
//	{"queues": [{"name": "orders.fifo", "attributes": {"ContentBasedDeduplication": "true"}}]}
//
// An attribute value is a string as SQS takes it; a number or a boolean stands for its text, and an object
// (such as a RedrivePolicy) for its JSON. Unknown fields are errors, so a typo does not go unnoticed.
func loadConfig(path string) ([]queueSpec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	var file struct {
		Queues []struct {
			Name       string                     `json:"name"`
			Attributes map[string]json.RawMessage `json:"attributes"`
		} `json:"queues"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("config %s: data after the JSON object", path)
	}
	qs := make([]queueSpec, 0, len(file.Queues))
	for i, fq := range file.Queues {
		if fq.Name == "" {
			return nil, fmt.Errorf("config %s: queue %d has no name", path, i)
		}
		q := queueSpec{Name: fq.Name}
		for k, raw := range fq.Attributes {
			v, err := attributeValue(raw)
			if err != nil {
				return nil, fmt.Errorf("config %s: queue %s: attribute %s: %w", path, fq.Name, k, err)
			}
			if q.Attributes == nil {
				q.Attributes = make(map[string]string)
			}
			q.Attributes[k] = v
		}
		qs = append(qs, q)
	}
	return qs, nil
}

// attributeValue turns a JSON attribute value into the string SQS takes.
func attributeValue(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return "", errors.New("no value")
	case raw[0] == '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case raw[0] == '[':
		return "", errors.New("a list is not an attribute value")
	case raw[0] == '{':
		var b bytes.Buffer
		err := json.Compact(&b, raw)
		return b.String(), err
	}
	return string(raw), nil // a number, true or false
}

// serve creates the queues of cfg (a name ending in ".fifo" without a FifoQueue attribute makes a FIFO
// queue, as in fifoq.New), then serves the SQS API on cfg.addr until ctx is done. The endpoint's URL goes
// to stdout once it listens. With cfg.dataDir the queues are kept in that directory, which is closed on
// the way out.
func serve(ctx context.Context, cfg serveConfig, stdout, stderr io.Writer) (err error) {
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.logLevel}))
	opts := []sqsapi.Option{sqsapi.WithLogger(logger), sqsapi.WithRegion(cfg.region), sqsapi.WithAccountID(cfg.account)}
	var api *sqsapi.Server
	if cfg.dataDir == "" {
		api = sqsapi.NewServer(opts...)
	} else {
		st, oerr := durable.Open(cfg.dataDir, durable.WithLogger(logger))
		if oerr != nil {
			return fmt.Errorf("--data-dir: %w", oerr)
		}
		defer func() {
			cerr := st.Close()
			if cerr != nil {
				logger.Error("closing the store", "dir", cfg.dataDir, "error", cerr)
			} else {
				logger.Info("store closed", "dir", cfg.dataDir)
			}
			err = cmp.Or(err, cerr)
		}()
		if api, oerr = sqsapi.Open(st, opts...); oerr != nil {
			return fmt.Errorf("--data-dir %s: %w", cfg.dataDir, oerr)
		}
		defer api.Close() // before the store: it stops the move tasks; it returns nil
		logger.Info("store opened", "dir", cfg.dataDir, "queues", len(st.Queues()))
	}

	for _, q := range cfg.queues {
		if _, ok := q.Attributes["FifoQueue"]; !ok && strings.HasSuffix(q.Name, ".fifo") {
			// As fifoq.New does; SQS itself wants FifoQueue=true with a ".fifo" name.
			q.Attributes = maps.Clone(q.Attributes)
			if q.Attributes == nil {
				q.Attributes = make(map[string]string)
			}
			q.Attributes["FifoQueue"] = "true"
		}
		_, stored := api.Queue(q.Name)
		if _, err := api.CreateQueue(q.Name, q.Attributes); err != nil {
			if stored {
				return fmt.Errorf("queue %s is stored in %s with other attributes: %w "+
					"(change the stored queue with SetQueueAttributes, or the attributes given)", q.Name, cfg.dataDir, err)
			}
			return fmt.Errorf("create queue %s: %w", q.Name, err)
		}
		if stored {
			logger.Info("queue kept", "queue", q.Name, "attributes", q.Attributes)
		} else {
			logger.Info("queue created", "queue", q.Name, "attributes", q.Attributes)
		}
	}

	ln, err := new(net.ListenConfig).Listen(ctx, "tcp", cfg.addr)
	if err != nil {
		return err
	}
	endpoint := "http://" + ln.Addr().String()
	logger.Info("listening", "addr", ln.Addr().String(), "endpoint", endpoint, "queues", len(cfg.queues))
	fmt.Fprintln(stdout, endpoint)
	return serveHTTP(ctx, ln, api, logger, cfg.shutdownTimeout)
}

// serveHTTP serves h on ln until ctx is done, then shuts down: it stops accepting connections, cancels
// the context of the requests in progress (so long polls end), and waits up to timeout for them to finish
// before closing their connections. It closes ln.
func serveHTTP(ctx context.Context, ln net.Listener, h http.Handler, logger *slog.Logger, timeout time.Duration) error {
	base, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBase()
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	hs.RegisterOnShutdown(cancelBase) // called once the listener is closed
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down", "timeout", timeout)
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		logger.Warn("requests still in progress after the shutdown timeout; closing their connections", "error", err)
		hs.Close()
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	logger.Info("stopped")
	return nil
}

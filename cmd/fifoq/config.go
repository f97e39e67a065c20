package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/fifoq/fifoq/sqsapi"
)

// errUsage is a command line that cannot run; what is wrong with it has been printed already.
var errUsage = errors.New("usage")

const usage = `Usage:
  fifoq serve [flags]   serve fifoq queues and topics over the Amazon SQS and SNS APIs, on one
                        endpoint, in memory or in --data-dir (fifoq serve -h for the flags)
  fifoq health [flags]  exit 0 if a server's /health answers 200, else 1 (fifoq health -h)
  fifoq version         print the module version and the VCS revision of this binary
`

const serveUsage = `Usage: fifoq serve [flags]

Serve fifoq queues over the Amazon SQS API (JSON and query protocols) and topics over the Amazon
SNS API (query protocol), on the same endpoint: a request signed for sns, or an unsigned one whose
Action is SNS's, goes to SNS. Topics deliver to the server's queues (the sqs protocol), with
filter policies, raw message delivery, dead-letter queues and FIFO topics.

The queues and topics live in memory unless --data-dir is given. With --data-dir they are kept in
that directory and come back when the server starts again on it, after a stop or a crash: their
attributes, policies and tags, the subscriptions, and the messages with their receive counts.
Every request returns once its changes are on disk (with --sync, once they are written to the
operating system: see --sync). The queues of --queue and --config, then the topics and
subscriptions of --config, are created, or, when stored, given the attributes declared: a stored
attribute that differs (changed at run time by SetQueueAttributes, SetTopicAttributes or
SetSubscriptionAttributes) is set back to the declared value, with a warning; the others are kept.
If the store fails while serving (a full disk), /health turns to 503 with the cause, every change
is answered ServiceUnavailable, and the server shuts down and exits 1, to be restarted.

The endpoint's URL is the first line of stdout, once every listener is open; with
--metrics-addr, the URL of /metrics is the second, and with --console-addr the console's follows.
An address on every interface (0.0.0.0) is printed as 127.0.0.1. GET /health answers 200 "ok"
while the server serves and 503 once it shuts down. On SIGINT or SIGTERM the server stops
accepting connections, answers the long polls in progress at once (with no messages, as a wait
that ends does), gives kept-alive connections up to a second to bring in the requests already
sent on them, lets the requests in progress finish, all within --shutdown-timeout, and exits 0
(1 if it had to cut requests at the timeout); a second signal kills it.

With "eventSourceMappings" in --config, each mapping polls its queue while the server serves and
POSTs each batch to its function URL as Lambda's SQS event (the Lambda Runtime Interface Emulator's
http://HOST:PORT/2015-03-31/functions/function/invocations, say), and settles the batch by the
answer as Lambda does. On SIGINT or SIGTERM the mappings take no new batch, and the invocations
under way have --shutdown-timeout to finish (after it they are cut, and the process exits 1).

Accounts and regions are per request, so one server holds the queues of many, each apart (the
same name in two regions is two queues): a request acts in the region of its SigV4 credential
scope (the SDK's region), failing that the first label of the endpoint's host that is a region
name (sqs.eu-west-1.localhost), failing that --region; and in the account of its access key id
when that is 12 digits, else --account-id. A queue URL names its account (/<account>/<name>).
--region and --account-id are these defaults, and the queues of --queue and --config are theirs.

Every flag can be given by its environment variable instead; the command line wins. Requests
are signed with AWS Signature Version 4 and checked only with --credentials, or with both
FIFOQ_ACCESS_KEY_ID and FIFOQ_SECRET_ACCESS_KEY, which add one key.

Flags:
`

// Limits of the HTTP server, other than those of the flags.
const (
	// readHeaderTimeout bounds the reading of a request's headers.
	readHeaderTimeout = 10 * time.Second
	// readTimeout bounds the reading of a whole request, from its first byte. It must leave room for a
	// long poll (20 s) after the body was read: net/http ends the context of a request whose connection
	// reaches its read deadline while it is served, and a long poll ends with its context.
	readTimeout = time.Minute
	// writeTimeout bounds a request from the end of its headers to the end of its response: a long poll
	// (20 s), the syncs of a durable server, and the writing of a response of up to ten 1 MiB messages.
	writeTimeout = time.Minute
	// idleTimeout closes a kept-alive connection with no request for that long.
	idleTimeout = 2 * time.Minute
	// drainGrace is how long a shutdown lets the kept-alive connections live on after the listener closed
	// (at most half the shutdown timeout; less once every connection is closed). A request a client
	// wrote on such a connection just before the signal, which the server had not read yet, is served
	// rather than cut, as it would be if the idle connections were closed at once; the responses in that
	// time say "Connection: close", so clients with traffic move off the connections in time.
	drainGrace = time.Second
	// defaultMaxHeaderBytes bounds the request line and the headers of a request: a few kilobytes for
	// an SDK's signed request; a query-protocol GET carries its parameters in its URL, so this also bounds
	// a GET's message (use POST, as the SDKs and the AWS CLI do).
	defaultMaxHeaderBytes = 64 << 10
)

// serveConfig is what "fifoq serve" runs with.
type serveConfig struct {
	addr            string
	allowRemote     bool
	metricsAddr     string // "": no metrics listener
	region, account string
	logLevel        slog.Level
	logFormat       string // "text" or "json"
	shutdownTimeout time.Duration
	maxRequestBytes int64
	maxHeaderBytes  int
	dataDir         string            // "": the queues live in memory
	syncEvery       time.Duration     // --sync: 0 for a sync per acknowledgement
	queues          []queueSpec       // to create, in order: the config file's, then the --queue flags'
	topics          []topicSpec       // the config file's topics, declared after the queues (topicconfig.go)
	mappings        []mappingSpec     // the config file's event source mappings (mappings.go)
	credentials     map[string]string // secret access keys by access key id; nil: signatures are not checked
	consoleAddr     string            // "": no web console (console.go)
	consoleReadOnly bool
	// listen binds the listeners of the API and the metrics; nil is net.ListenConfig's. Tests watch the
	// binds through it.
	listen func(ctx context.Context, network, address string) (net.Listener, error)
}

// queueSpec is a queue to create: its name and SQS attributes, as CreateQueue takes them.
type queueSpec struct {
	Name       string
	Attributes map[string]string
	// origin says where the queue was declared, for its errors: "config FILE:LINE:COL", or the --queue flag
	// or the FIFOQ_QUEUE variable with the value given.
	origin string
}

// The environment variables of the one access key that can be given without a --credentials file.
const (
	envAccessKeyID     = "FIFOQ_ACCESS_KEY_ID"
	envSecretAccessKey = "FIFOQ_SECRET_ACCESS_KEY"
)

// parseServe parses the flags of "fifoq serve", with the environment variables that getenv reads for the
// flags not on the command line, and loads its config and credentials files. A bad command line is
// reported to stderr and returned wrapping errUsage; -h returns flag.ErrHelp.
func parseServe(args []string, getenv func(string) string, stderr io.Writer) (serveConfig, error) {
	cfg := serveConfig{logLevel: slog.LevelInfo}
	var flagQueues []queueSpec
	var configFile, credentialsFile string
	fs := flag.NewFlagSet("fifoq serve", flag.ContinueOnError)
	// The flag package would print the whole help after any error: this command prints one line and a hint
	// instead (parseError), and the help only for -h.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	queueOrigin := "--queue" // FIFOQ_QUEUE while the environment is read
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:9324", "`host:port` to listen on; port 0 picks a free port")
	fs.BoolVar(&cfg.allowRemote, "allow-remote", false,
		"allow an --addr or a --metrics-addr that is not a loopback address (without --credentials, anyone who "+
			"can reach the API can read and delete messages: the server warns)")
	fs.StringVar(&cfg.metricsAddr, "metrics-addr", "",
		"`host:port` to serve Prometheus metrics on, at /metrics (and /health); port 0 picks a free port; "+
			"empty: no metrics")
	fs.StringVar(&cfg.consoleAddr, "console-addr", "",
		"`host:port` to serve the web console on; port 0 picks a free port; empty: no console. Beyond loopback "+
			"it needs --allow-remote and --credentials, whose keys log in (user: access key id, password: secret)")
	fs.BoolVar(&cfg.consoleReadOnly, "console-read-only", false, "the web console shows the queues and changes nothing")
	fs.StringVar(&cfg.region, "region", "us-east-1",
		"default AWS `region`: that of a request whose credential scope and endpoint host name no region, and of the queues of --queue and --config")
	fs.StringVar(&cfg.account, "account-id", "000000000000",
		"default AWS account `id`: that of a request whose access key id is not a 12-digit account id, and of the queues of --queue and "+
			"--config; --account is the same flag")
	fs.StringVar(&cfg.account, "account", "000000000000", "the same as --account-id")
	fs.StringVar(&configFile, "config", "",
		"JSON `file` of queues to create: {\"queues\":[{\"name\":\"orders.fifo\",\"attributes\":{\"ContentBasedDeduplication\":\"true\"}}]}, "+
			"of SNS topics and their subscriptions: \"topics\":[{\"name\":\"events.fifo\",\"subscriptions\":[{\"queue\":\"orders.fifo\","+
			"\"filterPolicy\":{...},\"rawMessageDelivery\":true}]}] (docs/wire-api.md), "+
			"and of event source mappings to function URLs: \"eventSourceMappings\":[{\"queue\":\"orders.fifo\",\"functionUrl\":\"http://...\"}] "+
			"(docs/event-source-mappings.md)")
	fs.Func("queue", "create a queue: `name[,Attr=Value...]` with SQS attribute names (a name ending in .fifo implies FifoQueue=true); "+
		"repeatable, created in order after the config file's; the variable holds one or more, separated by semicolons or newlines",
		func(s string) error {
			q, err := parseQueueSpec(s)
			if err != nil {
				return err
			}
			q.origin = fmt.Sprintf("%s %q", queueOrigin, s)
			flagQueues = append(flagQueues, q)
			return nil
		})
	fs.StringVar(&credentialsFile, "credentials", "",
		"JSON `file` of the access keys whose AWS Signature Version 4 the server checks on every request: "+
			"{\"credentials\":[{\"accessKeyId\":\"AKID\",\"secretAccessKey\":\"...\"}]}; without it (or "+
			envAccessKeyID+" and "+envSecretAccessKey+"), any credentials are accepted")
	fs.StringVar(&cfg.dataDir, "data-dir", "",
		"keep the queues and topics in `dir` (created if missing), so that they survive a restart or a crash: their attributes, "+
			"policies, tags, subscriptions and messages; without it they live in memory and end with the process")
	fs.Func("sync", "with --data-dir, when an acknowledged change reaches the disk: `ack` (default), before the request returns, "+
		"so that neither a crash nor a power loss loses it; or a duration such as 100ms, within it: the change is "+
		"written to the operating system before the request returns, so a crash of the process loses nothing, "+
		"and a power loss at most that long", func(s string) error {
		if s == "ack" {
			cfg.syncEvery = 0
			return nil
		}
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return fmt.Errorf("%q: want ack or a positive duration", s)
		}
		cfg.syncEvery = d
		return nil
	})
	fs.Func("log-level", "log `level`: debug (every request), info, warn or error (default info)", func(s string) error {
		return cfg.logLevel.UnmarshalText([]byte(s))
	})
	fs.StringVar(&cfg.logFormat, "log-format", "text", "log `format` on stderr: text or json")
	fs.DurationVar(&cfg.shutdownTimeout, "shutdown-timeout", 10*time.Second,
		"how long the requests in progress, and the invocations of event source mappings, may take to finish on SIGINT or SIGTERM, "+
			"before their connections are closed")
	fs.Int64Var(&cfg.maxRequestBytes, "max-request-bytes", sqsapi.DefaultMaxRequestBytes,
		"the largest request body, in `bytes`; a larger one is refused with RequestEntityTooLarge (HTTP 413). "+
			"The default admits a 1 MiB batch in every encoding; messages are held to their queue's MaximumMessageSize whatever it is")
	fs.IntVar(&cfg.maxHeaderBytes, "max-header-bytes", defaultMaxHeaderBytes,
		"the largest request line and headers of a request, in `bytes` (a query-protocol GET carries its parameters there); "+
			"larger ones are refused with HTTP 431")

	// The environment variable of each flag, named in its help.
	env := map[string]string{"account": ""} // an alias: FIFOQ_ACCOUNT_ID is --account-id's
	fs.VisitAll(func(f *flag.Flag) {
		if _, ok := env[f.Name]; ok {
			return
		}
		env[f.Name] = "FIFOQ_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		f.Usage += " (env " + env[f.Name] + ")"
	})

	help := helpFlags(fs, "account") // before Parse, so that the defaults shown are the defaults
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, serveUsage)
			help.SetOutput(stderr)
			help.PrintDefaults()
			return serveConfig{}, err
		}
		return serveConfig{}, fmt.Errorf("%w: %w", errUsage, parseError(stderr, "fifoq serve", fs, err))
	}
	fail := func(err error) (serveConfig, error) {
		fmt.Fprintf(stderr, "fifoq serve: %v\n", err)
		return serveConfig{}, fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fail(fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}

	// The environment, for the flags not given.
	given := make(map[string]bool)
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	given["account-id"] = given["account-id"] || given["account"]
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		name := env[f.Name]
		if name == "" || given[f.Name] || envErr != nil {
			return
		}
		v := getenv(name)
		if v == "" {
			return
		}
		if f.Name == "queue" {
			queueOrigin = name
			for s := range strings.FieldsFuncSeq(v, func(r rune) bool { return r == ';' || r == '\n' }) {
				if strings.TrimSpace(s) == "" {
					continue
				}
				if err := f.Value.Set(s); err != nil {
					envErr = fmt.Errorf("%s: %v", name, err)
					return
				}
			}
			return
		}
		if err := f.Value.Set(v); err != nil {
			envErr = fmt.Errorf("%s=%q: %v", name, v, err)
		}
	})
	if envErr != nil {
		return fail(envErr)
	}

	if err := checkAddr("--addr", cfg.addr, cfg.allowRemote); err != nil {
		return fail(err)
	}
	if cfg.metricsAddr != "" {
		if err := checkAddr("--metrics-addr", cfg.metricsAddr, cfg.allowRemote); err != nil {
			return fail(err)
		}
	}
	switch {
	case cfg.region == "" || cfg.account == "":
		return fail(errors.New("--region and --account-id cannot be empty"))
	case cfg.syncEvery > 0 && cfg.dataDir == "":
		return fail(errors.New("--sync applies only with --data-dir"))
	case cfg.shutdownTimeout <= 0:
		return fail(fmt.Errorf("--shutdown-timeout %v, want more than 0", cfg.shutdownTimeout))
	case cfg.maxRequestBytes < 1<<10:
		return fail(fmt.Errorf("--max-request-bytes %d, want at least 1024", cfg.maxRequestBytes))
	case cfg.maxHeaderBytes < 1<<10:
		return fail(fmt.Errorf("--max-header-bytes %d, want at least 1024", cfg.maxHeaderBytes))
	case cfg.logFormat != "text" && cfg.logFormat != "json":
		return fail(fmt.Errorf("--log-format %q, want text or json", cfg.logFormat))
	}
	if configFile != "" {
		c, err := loadConfigFile(configFile)
		if err != nil {
			return fail(err)
		}
		cfg.queues, cfg.topics, cfg.mappings = c.queues, c.topics, c.mappings
	}
	cfg.queues = append(cfg.queues, flagQueues...)
	creds, err := loadCredentials(credentialsFile, getenv)
	if err != nil {
		return fail(err)
	}
	cfg.credentials = creds
	if err := checkConsole(cfg); err != nil {
		return fail(err)
	}
	return cfg, nil
}

// checkAddr accepts a host:port to listen on: a loopback one (localhost, 127.0.0.0/8 or ::1), or any with
// allowRemote. An empty host listens on every interface, so it is not loopback.
func checkAddr(flagName, addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s %q: %v", flagName, addr, err)
	}
	if allowRemote || isLoopback(host) {
		return nil
	}
	return fmt.Errorf("%s %s is not a loopback address: listening beyond this machine needs --allow-remote "+
		"(and --credentials, so that the SQS API checks who calls it)", flagName, addr)
}

// isLoopback reports whether a host to listen on is loopback: localhost, 127.0.0.0/8 or ::1.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
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

// decodeFile decodes the JSON object in the file at path into v: unknown fields are errors, so that a typo
// does not go unnoticed, and so is anything after the object.
func decodeFile(what, path string, v any) error {
	_, err := decodeFileData(what, path, v)
	return err
}

// decodeFileData is decodeFile, and returns the file's content. Its errors name the file, and the line and
// the column where it can tell them (jsonError).
func decodeFileData(what, path string, v any) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return nil, jsonError(what, path, data, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s %s: data after the JSON object", what, where(path, data, dec.InputOffset()))
	}
	return data, nil
}

// loadConfig reads the queues of a JSON config file: loadConfigFile without the rest.
func loadConfig(path string) ([]queueSpec, error) {
	c, err := loadConfigFile(path)
	return c.queues, err
}

// fileConfig is what a config file declares.
type fileConfig struct {
	queues   []queueSpec
	topics   []topicSpec   // topicconfig.go
	mappings []mappingSpec // mappings.go
}

// loadConfigFile reads the queues, the topics and the event source mappings of a JSON config file (an
// example is testdata/fifoq.json):
//
//	{"queues": [{"name": "orders.fifo", "attributes": {"ContentBasedDeduplication": "true"}}],
//	 "topics": [{"name": "events.fifo", "subscriptions": [{"queue": "orders.fifo", "rawMessageDelivery": true}]}],
//	 "eventSourceMappings": [{"queue": "orders.fifo", "functionUrl": "http://127.0.0.1:9000/..."}]}
//
// An attribute value is a string as SQS takes it; a number or a boolean stands for its text, and an object
// (such as a RedrivePolicy) for its JSON. Unknown fields are errors, so a typo does not go unnoticed.
func loadConfigFile(path string) (fileConfig, error) {
	var file struct {
		Queues []struct {
			Name       string                     `json:"name"`
			Attributes map[string]json.RawMessage `json:"attributes"`
		} `json:"queues"`
		Topics              []topicJSON   `json:"topics"`
		EventSourceMappings []mappingJSON `json:"eventSourceMappings"`
	}
	data, err := decodeFileData("config", path, &file)
	if err != nil {
		return fileConfig{}, err
	}
	offsets := queueOffsets(data)
	qs := make([]queueSpec, 0, len(file.Queues))
	for i, fq := range file.Queues {
		at := path
		if i < len(offsets) {
			at = where(path, data, offsets[i])
		}
		if fq.Name == "" {
			return fileConfig{}, fmt.Errorf("config %s: queue %d has no name", at, i)
		}
		q := queueSpec{Name: fq.Name, origin: "config " + at}
		for k, raw := range fq.Attributes {
			v, err := attributeValue(raw)
			if err != nil {
				return fileConfig{}, fmt.Errorf("config %s: queue %s: attribute %s: %w", at, fq.Name, k, err)
			}
			if q.Attributes == nil {
				q.Attributes = make(map[string]string)
			}
			q.Attributes[k] = v
		}
		qs = append(qs, q)
	}
	ts, err := topicSpecs(path, data, file.Topics)
	if err != nil {
		return fileConfig{}, err
	}
	ms, err := mappingSpecs(path, data, file.EventSourceMappings)
	if err != nil {
		return fileConfig{}, err
	}
	return fileConfig{queues: qs, topics: ts, mappings: ms}, nil
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

// loadCredentials returns the access keys of a --credentials file (path "" for none) and of the
// FIFOQ_ACCESS_KEY_ID and FIFOQ_SECRET_ACCESS_KEY variables, which must be set together; nil for none.
// The file is
//
//	{"credentials": [{"accessKeyId": "AKIDEXAMPLE", "secretAccessKey": "..."}]}
func loadCredentials(path string, getenv func(string) string) (map[string]string, error) {
	var keys map[string]string
	add := func(what, id, secret string) error {
		switch _, dup := keys[id]; {
		case id == "" || secret == "":
			return fmt.Errorf("%s: an access key needs an id and a secret", what)
		case dup:
			return fmt.Errorf("%s: access key %s given twice", what, id)
		}
		if keys == nil {
			keys = make(map[string]string)
		}
		keys[id] = secret
		return nil
	}
	if path != "" {
		var file struct {
			Credentials []struct {
				AccessKeyID     string `json:"accessKeyId"`
				SecretAccessKey string `json:"secretAccessKey"`
			} `json:"credentials"`
		}
		if err := decodeFile("credentials", path, &file); err != nil {
			return nil, err
		}
		if len(file.Credentials) == 0 {
			return nil, fmt.Errorf("credentials %s: no access keys", path)
		}
		for i, c := range file.Credentials {
			if err := add(fmt.Sprintf("credentials %s: key %d", path, i), c.AccessKeyID, c.SecretAccessKey); err != nil {
				return nil, err
			}
		}
	}
	id, secret := getenv(envAccessKeyID), getenv(envSecretAccessKey)
	if id != "" || secret != "" {
		if err := add(envAccessKeyID+" and "+envSecretAccessKey, id, secret); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

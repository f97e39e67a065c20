// Command fifoq serves fifoq queues and topics over the Amazon SQS and SNS wire APIs, on one endpoint, for
// clients in any language:
//
//	go install ./cmd/fifoq   # from a clone; go install github.com/fifoq/fifoq/cmd/fifoq@latest once released
//	fifoq serve [--addr 127.0.0.1:9324] [--data-dir DIR] [--queue name[,Attr=Value...]]... [--config file.json]
//	fifoq health [--addr host:port]   # exit 0 when the server's /health answers 200, else 1
//	fifoq version                     # the module version and the VCS revision of the binary
//
// Point an AWS SDK or the AWS CLI at the printed endpoint (for example
// "aws --endpoint-url http://127.0.0.1:9324 sqs list-queues"). Run "fifoq serve -h" for the flags; each has an
// environment variable (--addr is FIFOQ_ADDR, --data-dir FIFOQ_DATA_DIR, ...), which a flag on the command
// line overrides. The endpoint's URL is the first line of stdout once every listener is open (0.0.0.0 is
// printed as 127.0.0.1), and the URL of the metrics the second.
//
// The endpoint also answers Amazon SNS's API (query protocol): a request signed for sns, or an unsigned one
// whose Action is SNS's, goes to SNS. Topics deliver to the server's queues (the sqs protocol), with filter
// policies, raw message delivery, dead-letter queues and FIFO topics, and are kept with --data-dir as the
// queues are.
//
// Without --data-dir the queues live in memory and end with the process. With --data-dir DIR they are
// kept in DIR (package github.com/fifoq/fifoq/durable) and come back when the server starts again on it,
// after a stop or a crash: every queue with its attributes, policies and tags, every message with its
// receive count, the AWSTraceHeader of the messages and the names deleted in the last 60 seconds; each
// request returns once its changes are on disk. A message move task running at a stop or a crash goes on at
// the next start, with its counts. The queues of
// --queue and --config are created, or, when stored, given the attributes declared: a stored attribute
// that differs (changed at run time by SetQueueAttributes) is set back to the declared value, with a
// warning, so that a restart with the same command line always starts. A store that fails while serving
// (a full disk) makes every change answer ServiceUnavailable naming the cause, /health answer 503, and the
// process shut down and exit 1, for its supervisor to restart it. One process at a time can use a
// directory. The --config file is JSON (cmd/fifoq/testdata/fifoq.json is an example):
//
//	{"queues": [{"name": "orders.fifo", "attributes": {"ContentBasedDeduplication": true, "VisibilityTimeout": 60}}]}
//
// Its "topics" declare SNS topics and their subscriptions to the server's queues, after the queues, in the
// same way: created, or, when stored, given the attributes and fields declared, with a warning for each that
// differed. A topic has a "name" (".fifo" makes a FIFO topic), "attributes" (FifoTopic,
// ContentBasedDeduplication, SignatureVersion) and "subscriptions", each with its "queue" (a name or an ARN)
// and, as CloudFormation's AWS::SNS::Subscription names them, "filterPolicy", "filterPolicyScope",
// "rawMessageDelivery" and "redrivePolicy" ({"deadLetterTargetArn": ...}):
//
//	{"topics": [{"name": "orders.fifo", "attributes": {"ContentBasedDeduplication": true},
//	  "subscriptions": [{"queue": "billing.fifo", "filterPolicy": {"kind": ["paid"]}, "rawMessageDelivery": true}]}]}
//
// # Event source mappings
//
// The config file's "eventSourceMappings" run Lambda's SQS event source mapping from a queue of the server to
// a function URL, for functions in any language (the Lambda Runtime Interface Emulator of a function's
// container image, typically), with AWS's field names and checks:
//
//	{"eventSourceMappings": [{"queue": "orders.fifo", "functionUrl": "http://127.0.0.1:9000/2015-03-31/functions/function/invocations",
//	  "batchSize": 10, "functionResponseTypes": ["ReportBatchItemFailures"], "functionTimeout": 3}]}
//
// Each batch is POSTed as the JSON Lambda sends and settled by the answer as Lambda reads it (package
// github.com/fifoq/fifoq/lambdaevents). A mapping names its queue by name (in --account-id and --region) or
// ARN; a queue the server does not hold, or a field out of AWS's range, stops the start with status 2. The
// mappings are declared, as the queues are: with --data-dir they come from --config at each start, and the
// messages in flight at a stop come back after their visibility timeout. Their metrics are on /metrics
// (fifoq_mapping_*), the console shows them on their queues' pages, and a function that is down is backed off
// from. docs/event-source-mappings.md has the fields and the choices.
//
// # Access
//
// The server listens on loopback unless given --allow-remote. It checks the AWS Signature Version 4 of every
// request only when given access keys: a --credentials file ({"credentials": [{"accessKeyId": "...",
// "secretAccessKey": "..."}]}), or FIFOQ_ACCESS_KEY_ID and FIFOQ_SECRET_ACCESS_KEY; without them any
// credentials are accepted, and a server listening beyond loopback says so in a warning at start. There is
// no TLS: put a proxy in front for that.
//
// # Operation
//
// GET /health answers 200 "ok" while the server serves and 503 once it shuts down. With --metrics-addr, a
// second listener serves /metrics (the Prometheus text format: the queues' metrics of package
// github.com/fifoq/fifoq/fifoqprom, and the Go and process collectors) and /health.
//
// With --console-addr, another listener serves the web console of package github.com/fifoq/fifoq/fifoqweb
// (with --console-read-only it changes nothing), and its URL follows the others on stdout. Beyond loopback it
// needs --allow-remote and --credentials, whose access keys are its HTTP basic logins. A failed login makes
// its client's address wait before its next request is looked at (100 ms, doubling with each failure in a
// row up to a minute; 429 meanwhile), and is logged at Warn with the address.
//
// "fifoq health" exits 0 when the /health of the server at --addr (or FIFOQ_ADDR; a wildcard host is asked on
// 127.0.0.1) answers 200, else 1, with one line: the container image's HEALTHCHECK. "fifoq version" prints
// the module version and the VCS revision from the binary's build information.
//
// On SIGINT or SIGTERM the server shuts down: /health turns to 503, the listener closes, the ReceiveMessage
// long polls in progress are answered at once with no messages (as a wait that ends does; none had taken a
// message), and every response from then on says "Connection: close". Kept-alive connections get up to a
// second to bring in the requests already sent on them; then the requests in progress finish, within
// --shutdown-timeout (10 s) in all, the data directory is closed and the process exits 0. Requests still in
// progress at the timeout have their connections closed, and the process exits 1. A second signal kills it.
//
// A store that cannot be opened (a full disk, a damaged file, a directory it may not write) stops the
// start: the process exits 1 with one line on stderr that names the cause and the file. SIGINT or SIGTERM
// during the start stops it at once, with status 1. A start that fails removes the data directory it made.
//
// Limits: a request body over --max-request-bytes (8 MiB, which every valid request fits in any encoding) is
// refused with RequestEntityTooLarge (HTTP 413), and a request line and headers over --max-header-bytes
// (64 KiB) with HTTP 431; messages are held to their queue's MaximumMessageSize (InvalidParameterValue) and
// batches to 1 MiB (BatchRequestTooLong), as on SQS. Headers must arrive within 10 s, a whole request within
// a minute, and its response must be written within a minute of its headers (long polls last up to 20 s);
// an idle connection is closed after 2 minutes.
//
// Logs go to stderr, as text or JSON (--log-format), at --log-level: start and stop at Info; a line per
// request at Debug (action, queue, protocol, status, code, request_id, duration); server errors at Error;
// moves to a dead-letter queue at Warn (queue, dead_letter_queue, message_id, receive_count, group); each
// event source mapping at start, and its failed invocations and unreachable function (queue, function_url,
// ...; package lambdaevents) at Warn.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second signal kills the process at once
	}()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUnhealthy):
		os.Exit(1) // said on stderr already; a HEALTHCHECK takes 1 for unhealthy (Docker reserves 2)
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "fifoq:", oneLine(err))
		os.Exit(1)
	}
}

// run runs the command line args (without the program name) until ctx is done, with the environment
// variables getenv reads. The endpoint's URL goes to stdout, once it listens; logs and usage go to stderr.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	switch args[0] {
	case "serve":
		cfg, err := parseServe(args[1:], getenv, stderr)
		if err != nil {
			return err
		}
		err = serve(ctx, cfg, stdout, stderr)
		var ue *usageError
		if errors.As(err, &ue) {
			// A queue declared on the command line or in the config file that cannot be created: the
			// command line's fault, as a bad flag is, so it exits 2.
			fmt.Fprintf(stderr, "fifoq serve: %v\n", ue.err)
			return fmt.Errorf("%w: %w", errUsage, ue.err)
		}
		return err
	case "health":
		return runHealth(ctx, args[1:], getenv, stdout, stderr)
	case "version", "-version", "--version":
		return runVersion(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	if strings.HasPrefix(args[0], "-") {
		fmt.Fprintf(stderr, "fifoq: %s before a command: flags come after it, as in fifoq serve %s\n%s", args[0], args[0], usage)
		return errUsage
	}
	fmt.Fprintf(stderr, "fifoq: unknown command %q%s\n%s", args[0], suggest(args[0], commands), usage)
	return errUsage
}

// Command fifoq serves fifoq queues over the Amazon SQS wire API, for clients in any language:
//
//	fifoq serve [--addr 127.0.0.1:9324] [--data-dir DIR] [--queue name[,Attr=Value...]]... [--config file.json]
//
// Point an AWS SDK or the AWS CLI at the printed endpoint (for example
// "aws --endpoint-url http://127.0.0.1:9324 sqs list-queues"). Run "fifoq serve -h" for the flags.
// The server stops on SIGINT or SIGTERM, letting requests in progress finish; a second signal kills it.
//
// Without --data-dir the queues live in memory and end with the process. With --data-dir DIR they are
// kept in DIR (package github.com/fifoq/fifoq/durable) and come back when the server starts again on it,
// after a stop or a crash: every queue with its attributes, policies and tags, every message with its
// receive count, the AWSTraceHeader of the messages and the names deleted in the last 60 seconds; each
// request returns once its changes are on disk. Message move tasks do not survive a restart. The queues of
// --queue and --config are created as CreateQueue creates them: a stored queue given with the same
// attributes is kept as it is, and one given with different attributes stops the start with
// QueueAlreadyExists (change a stored queue with SetQueueAttributes). One process at a time can use a
// directory.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second signal kills the process at once
	}()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "fifoq:", err)
		os.Exit(1)
	}
}

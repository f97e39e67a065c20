// Command fifoq serves fifoq queues over the Amazon SQS wire API, for clients in any language:
//
//	fifoq serve [--addr 127.0.0.1:9324] [--queue name[,Attr=Value...]]... [--config file.json]
//
// Point an AWS SDK or the AWS CLI at the printed endpoint (for example
// "aws --endpoint-url http://127.0.0.1:9324 sqs list-queues"). Run "fifoq serve -h" for the flags.
// The server stops on SIGINT or SIGTERM, letting requests in progress finish; a second signal kills it.
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

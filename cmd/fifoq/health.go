package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"strings"
	"time"
)

const healthUsage = `Usage: fifoq health [--addr host:port] [--timeout 2s]

Ask the /health of a fifoq server and exit 0 when it answers 200, 1 otherwise (a refused connection,
a timeout, 503 while it shuts down or after its store failed), with one line that says which. A bad
command line exits 1 as well, as a container's HEALTHCHECK wants: it reads any status but 0 as
unhealthy, and Docker reserves 2.

The address is the server's --addr: the flag, else FIFOQ_ADDR, else 127.0.0.1:9324. A host that
listens on every interface (0.0.0.0, ::, or none, as in :9324) is asked on 127.0.0.1, so in the
container image, where FIFOQ_ADDR is 0.0.0.0:9324, "fifoq health" needs no argument.

Flags:
`

// runHealth runs "fifoq health": one line on stdout when the server is healthy, on stderr when not.
func runHealth(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fifoq health", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addr := fs.String("addr", "", "the server's `host:port`, as given to its --addr (env FIFOQ_ADDR; default 127.0.0.1:9324)")
	timeout := fs.Duration("timeout", 2*time.Second, "how long to wait for the answer")
	unhealthy := func(format string, a ...any) error {
		fmt.Fprintf(stderr, "fifoq health: "+format+"\n", a...)
		return errUnhealthy
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fmt.Fprint(stderr, healthUsage)
			fs.PrintDefaults()
			return err
		}
		return unhealthy("%s (fifoq health -h for the flags)", flagMessage(fs, err))
	}
	if fs.NArg() > 0 {
		return unhealthy("unexpected argument %q; the address is --addr host:port", fs.Arg(0))
	}
	if *timeout <= 0 {
		return unhealthy("--timeout %v, want more than 0", *timeout)
	}
	a := *addr
	if a == "" {
		a = getenv("FIFOQ_ADDR")
	}
	if a == "" {
		a = "127.0.0.1:9324"
	}
	url, err := healthURL(a)
	if err != nil {
		return unhealthy("%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return unhealthy("%s: %v", url, err)
	}
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return unhealthy("%s: no answer within %v", url, *timeout)
		}
		var uerr *neturl.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // it repeats the URL
		}
		return unhealthy("%s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	text := strings.Join(strings.Fields(string(body)), " ")
	if resp.StatusCode != http.StatusOK {
		return unhealthy("%s: %s: %s", url, resp.Status, text)
	}
	fmt.Fprintf(stdout, "%s: %s\n", url, text)
	return nil
}

// errUnhealthy is the error of "fifoq health" when the server is not healthy; what is wrong has been printed.
var errUnhealthy = errors.New("unhealthy")

// healthURL returns the URL of /health on a server listening on addr: a wildcard host (none, 0.0.0.0 or
// ::) is asked on 127.0.0.1.
func healthURL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--addr %q: %v", addr, err)
	}
	if port == "" || port == "0" {
		return "", fmt.Errorf("--addr %q: give the port the server listens on", addr)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/health", nil
}

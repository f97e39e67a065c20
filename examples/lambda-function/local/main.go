//go:build unix

// Command local runs the example without Docker, in one command, from examples/lambda-function in a clone:
//
//	go run ./local
//
// It builds the function (../main.go, with -tags lambda.norpc, as the Dockerfile does), the Lambda Runtime
// Interface Emulator from its Go module (go install, into a temporary directory), and fifoq serve from this
// repository, from the module cache: offline, once the modules are there (the first run downloads the
// emulator's from the Go module proxy, and a go test or go build of the repository the others); then it runs
// the emulator with the function on the address of the mapping's functionUrl in fifoq-local.json
// (127.0.0.1:9000), and fifoq serve on that config, with its API on 127.0.0.1:9324, its metrics on
// 127.0.0.1:9090 and its console on 127.0.0.1:8080. fifoq's stdout is this command's (its first line is the
// endpoint); the logs of both go to stderr, each line headed by "fifoq |" or "function |". On SIGINT or
// SIGTERM it stops fifoq serve (which lets the invocations under way finish), then the emulator.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The Lambda Runtime Interface Emulator, from the Go module proxy. No go.mod requires it: go install builds
// it from its own go.mod (it needs a newer Go than this module names), checked against the checksum database.
const (
	riePackage = "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie"
	rieVersion = "v0.0.0-20261030222936-bef5c4ba774d"
)

// fifoqPackage is fifoq serve, built from this repository (the go.work at its root).
const fifoqPackage = "github.com/fifoq/fifoq/cmd/fifoq"

// options are the command line's.
type options struct {
	config      string // fifoq serve's --config, whose event source mapping names the emulator's address
	function    string // the directory of the function's main package
	addr        string // fifoq serve's --addr
	metricsAddr string // fifoq serve's --metrics-addr; "" for none
	consoleAddr string // fifoq serve's --console-addr; "" for none
	timeout     string // the emulator's AWS_LAMBDA_FUNCTION_TIMEOUT, in seconds
}

func main() {
	var o options
	flag.StringVar(&o.config, "config", "fifoq-local.json", "fifoq serve's config `file`; the emulator listens where its event source mapping's functionUrl points")
	flag.StringVar(&o.function, "function", ".", "the `directory` of the function's main package")
	flag.StringVar(&o.addr, "addr", "127.0.0.1:9324", "fifoq serve's API `address`")
	flag.StringVar(&o.metricsAddr, "metrics-addr", "127.0.0.1:9090", "fifoq serve's metrics `address`; empty for none")
	flag.StringVar(&o.consoleAddr, "console-addr", "127.0.0.1:8080", "fifoq serve's console `address`; empty for none")
	flag.StringVar(&o.timeout, "function-timeout", "10", "the emulator's own timeout, in `seconds`: above the mapping's functionTimeout, so that the mapping's comes first")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "local:", err)
		os.Exit(1)
	}
}

// run builds the function, the emulator and fifoq serve, runs them until ctx is done or one of them ends,
// and stops them. fifoq's stdout goes to stdout; its logs, the emulator's and the function's, and what run
// does, go to stderr.
func run(ctx context.Context, o options, stdout, stderr io.Writer) error {
	say := func(format string, a ...any) { fmt.Fprintf(stderr, "local | "+format+"\n", a...) }
	rieAddr, err := emulatorAddr(o.config)
	if err != nil {
		return err
	}
	config, err := filepath.Abs(o.config)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "lambda-function-local-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	start := time.Now()
	say("building the function, the Runtime Interface Emulator (%s) and fifoq serve", rieVersion)
	proxy, err := cacheFirst(ctx)
	if err != nil {
		return err
	}
	builds := []struct {
		env  []string
		args []string
	}{
		{[]string{"CGO_ENABLED=0"}, []string{"build", "-tags", "lambda.norpc", "-o", filepath.Join(dir, "bootstrap"), "."}},
		// Outside the workspace: the emulator's module is built as go install builds it, with its own go.mod,
		// from the module cache when it is there.
		{[]string{"GOBIN=" + dir, "GOWORK=off", "GOFLAGS=", "GOPROXY=" + proxy}, []string{"install", riePackage + "@" + rieVersion}},
		{nil, []string{"build", "-o", filepath.Join(dir, "fifoq"), fifoqPackage}},
	}
	for _, b := range builds {
		cmd := exec.CommandContext(ctx, "go", b.args...)
		cmd.Dir = o.function
		cmd.Env = append(os.Environ(), b.env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %v: %v\n%s", b.args, err, out)
		}
	}
	say("built in %v", time.Since(start).Round(100*time.Millisecond))

	runtimeAPI, err := freeAddr()
	if err != nil {
		return err
	}
	rie := exec.Command(filepath.Join(dir, "aws-lambda-rie"),
		"--runtime-interface-emulator-address", rieAddr, // where the invocations come
		"--runtime-api-address", runtimeAPI, // where the function asks for them
		filepath.Join(dir, "bootstrap"))
	rie.Env = append(os.Environ(), "AWS_LAMBDA_FUNCTION_TIMEOUT="+o.timeout)
	rie.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the emulator and the function it starts; no terminal's signal
	rieEnded, err := startHeaded(rie, nil, stderr, "function | ")
	if err != nil {
		return fmt.Errorf("the emulator: %w", err)
	}
	rieDone := make(chan error, 1) // rieEnded's error, put back by who takes it before the deferred wait
	go func() { rieDone <- <-rieEnded }()
	defer func() {
		_ = syscall.Kill(-rie.Process.Pid, syscall.SIGKILL)
		<-rieDone
	}()
	say("the emulator takes invocations at http://%s/2015-03-31/functions/function/invocations", rieAddr)
	if err := waitListening(ctx, rieAddr, rieDone); err != nil {
		return fmt.Errorf("the emulator: %w", err)
	}

	args := []string{"serve", "--config", config, "--addr", o.addr}
	if o.metricsAddr != "" {
		args = append(args, "--metrics-addr", o.metricsAddr)
	}
	if o.consoleAddr != "" {
		args = append(args, "--console-addr", o.consoleAddr)
	}
	fifoq := exec.Command(filepath.Join(dir, "fifoq"), args...)
	fifoq.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // stopped by this command, once
	fifoqDone, err := startHeaded(fifoq, stdout, stderr, "fifoq | ")
	if err != nil {
		return fmt.Errorf("fifoq serve: %w", err)
	}

	select {
	case <-ctx.Done():
		say("stopping fifoq serve (SIGTERM), then the emulator")
		_ = fifoq.Process.Signal(syscall.SIGTERM)
		return <-fifoqDone
	case err := <-fifoqDone:
		return fmt.Errorf("fifoq serve ended: %v", err)
	case err := <-rieDone:
		rieDone <- err // for the deferred wait
		_ = fifoq.Process.Signal(syscall.SIGTERM)
		<-fifoqDone
		return fmt.Errorf("the emulator ended: %v", err)
	}
}

// cacheFirst returns a GOPROXY that asks the module cache first, then the go command's GOPROXY: go install
// pkg@version looks the module's latest version up (for its deprecation) even when the version given is in
// the cache, which fails offline unless the cache answers.
func cacheFirst(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMODCACHE", "GOPROXY").Output()
	if err != nil {
		return "", fmt.Errorf("go env: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || lines[0] == "" {
		return "", fmt.Errorf("go env GOMODCACHE GOPROXY: %q", out)
	}
	cache := "file://" + filepath.ToSlash(filepath.Join(lines[0], "cache", "download"))
	if lines[1] == "" {
		return cache, nil
	}
	return cache + "," + lines[1], nil
}

// emulatorAddr returns the host:port of the functionUrl of the event source mappings of the config file at
// path, where the emulator is to listen.
func emulatorAddr(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var config struct {
		EventSourceMappings []struct {
			FunctionURL string `json:"functionUrl"`
		} `json:"eventSourceMappings"`
	}
	if err := json.Unmarshal(data, &config); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	addr := ""
	for _, m := range config.EventSourceMappings {
		u, err := url.Parse(m.FunctionURL)
		if err != nil || u.Host == "" {
			return "", fmt.Errorf("%s: functionUrl %q: want http://HOST:PORT/2015-03-31/functions/function/invocations", path, m.FunctionURL)
		}
		if addr != "" && u.Host != addr {
			return "", fmt.Errorf("%s: the mappings name two functions, %s and %s: this command runs one", path, addr, u.Host)
		}
		addr = u.Host
	}
	if addr == "" {
		return "", fmt.Errorf("%s: no event source mapping", path)
	}
	return addr, nil
}

// startHeaded starts cmd with its stdout to stdout (nil: headed, to stderr), and its stderr to stderr, each
// line headed by head, and returns a channel that gets the error of cmd.Wait once it ended and its output
// is all copied.
func startHeaded(cmd *exec.Cmd, stdout, stderr io.Writer, head string) (<-chan error, error) {
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var mu sync.Mutex // one line at a time on stderr
	copyLines := func(r io.Reader, w io.Writer, head string) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			mu.Lock()
			fmt.Fprintf(w, "%s%s\n", head, sc.Text())
			mu.Unlock()
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if stdout != nil {
			copyLines(outPipe, stdout, "")
		} else {
			copyLines(outPipe, stderr, head)
		}
	})
	wg.Go(func() { copyLines(errPipe, stderr, head) })
	done := make(chan error, 1)
	go func() {
		wg.Wait() // Wait closes the pipes: the output is read to its end first
		done <- cmd.Wait()
	}()
	return done, nil
}

// waitListening returns once something listens on addr, or an error when done says the process ended or
// ctx is done first.
func waitListening(ctx context.Context, addr string, done chan error) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return nil
		}
		select {
		case err := <-done:
			done <- err // for the caller's wait
			return fmt.Errorf("ended before it listened on %s: %v", addr, err)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// freeAddr returns an address on 127.0.0.1 that nothing listened on a moment ago.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", errors.Join(errors.New("a free port for the emulator's runtime API"), err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

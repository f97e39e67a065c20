//go:build linux

package lambdaevents_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/lambdaevents"
)

// The Lambda Runtime Interface Emulator the end-to-end test runs, from the Go module proxy. No go.mod
// requires it: "go install" builds it from its own go.mod, checked against the checksum database, so that
// neither lambdaevents nor the modules that use it depend on it.
const (
	riePackage = "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie"
	rieVersion = "v0.0.0-20261030222936-bef5c4ba774d"
)

// lockedBuffer is the output of a process, written by its goroutines and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// goCommand runs the go command that runs the tests, in the package's directory, failing the test with its
// output if it fails.
func goCommand(t *testing.T, ctx context.Context, env []string, args ...string) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	require.NoError(t, err, "the go command, to build the emulator and the function")
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go %v:\n%s", args, out)
}

// freeAddr returns an address on 127.0.0.1 that nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// recordingTransport keeps the body of every request it sends.
type recordingTransport struct {
	http.RoundTripper
	mu     sync.Mutex
	bodies [][]byte
}

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.bodies = append(r.bodies, body)
	r.mu.Unlock()
	req.Body = io.NopCloser(bytes.NewReader(body))
	return r.RoundTripper.RoundTrip(req)
}

// TestRuntimeInterfaceEmulator runs a mapping against a real Lambda function: the Runtime Interface
// Emulator, built from the module proxy, running internal/testfunction, an SQS handler written with
// aws-lambda-go, on loopback. The function gets Lambda's event byte for byte; the batch item failures it
// reports leave exactly those messages in the queue, and the others are deleted; an error it returns fails
// the whole batch. The timeouts below bound a failure; they are not waits.
func TestRuntimeInterfaceEmulator(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the Lambda Runtime Interface Emulator (about a minute); skipped with -short")
	}
	t.Parallel()
	ctx, cancel := testDeadline(t) // go test's -timeout, not a time a slow machine reaches
	defer cancel()
	dir := t.TempDir()
	start := time.Now()
	goCommand(t, ctx, []string{"GOBIN=" + dir, "GOWORK=off"}, "install", riePackage+"@"+rieVersion)
	goCommand(t, ctx, nil, "build", "-o", filepath.Join(dir, "function"), "github.com/fifoq/fifoq/lambdaevents/internal/testfunction")
	t.Logf("built the emulator and the function in %v", time.Since(start).Round(time.Second))

	eventsDir := filepath.Join(dir, "events")
	require.NoError(t, os.Mkdir(eventsDir, 0o755))
	addr := freeAddr(t)
	rie := exec.Command(filepath.Join(dir, "aws-lambda-rie"),
		"--runtime-interface-emulator-address", addr, // where the invocations come: 0.0.0.0:8080 by default
		"--runtime-api-address", freeAddr(t), // where the function asks for them: 127.0.0.1:9001 by default
		filepath.Join(dir, "function"))
	rie.Env = append(os.Environ(), "FIFOQ_TEST_EVENTS_DIR="+eventsDir, "AWS_LAMBDA_FUNCTION_TIMEOUT=30")
	var out lockedBuffer
	rie.Stdout, rie.Stderr = &out, &out
	rie.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the emulator and the function it starts
	require.NoError(t, rie.Start())
	defer func() {
		_ = syscall.Kill(-rie.Process.Pid, syscall.SIGKILL)
		_ = rie.Wait()
		if t.Failed() {
			t.Logf("the emulator's output:\n%s", out.String())
		}
	}()
	// The emulator listens once it has started: try to connect until it does.
	for ready := false; !ready; {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			ready = true
			continue
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			t.Fatalf("the emulator does not listen on %s", addr)
		}
	}

	q, err := fifoq.New("orders.fifo", fifoq.WithContentBasedDeduplication(), fifoq.WithVisibilityTimeout(time.Minute))
	require.NoError(t, err)
	sendAll(t, q, "order-1", "create", "fail-pay", "ship")
	sendAll(t, q, "order-2", "refund")
	tr := &recordingTransport{RoundTripper: http.DefaultTransport.(*http.Transport).Clone()}
	batches := make(chan fifoq.BatchReport, 10)
	inv, err := lambdaevents.NewInvoker(q, lambdaevents.Mapping{
		FunctionURL:           "http://" + addr + "/2015-03-31/functions/function/invocations",
		EventSourceARN:        "arn:aws:sqs:eu-west-1:123456789012:orders.fifo",
		FunctionResponseTypes: []string{lambdaevents.ReportBatchItemFailures},
		FunctionTimeout:       30 * time.Second,
	}, lambdaevents.Options{Client: &http.Client{Transport: tr}, OnBatch: func(r fifoq.BatchReport) { batches <- r }})
	require.NoError(t, err)
	runOne := func() fifoq.BatchReport {
		t.Helper()
		rctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- inv.Run(rctx) }()
		var r fifoq.BatchReport
		select {
		case r = <-batches:
		case <-ctx.Done():
			t.Fatal("no invocation ended")
		}
		stop()
		require.NoError(t, await(t, done, "Run to return"))
		return r
	}

	// One batch: both groups, the first in order. The function fails fail-pay and, after it in its group,
	// ship: exactly those stay in the queue, in flight until their visibility timeout ends.
	r := runOne()
	require.Equal(t, fifoq.OutcomePartial, r.Outcome, "%v", r.Err)
	require.Equal(t, 4, r.Size)
	require.Equal(t, []string{"fail-pay", "ship"}, left(q))
	for s := range q.Messages() {
		require.Equal(t, fifoq.StateInFlight, s.State)
	}

	// The function got the bytes the mapping sent, and they are Lambda's event.
	files, err := filepath.Glob(filepath.Join(eventsDir, "*.json"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	got, err := os.ReadFile(files[0])
	require.NoError(t, err)
	require.Equal(t, string(tr.bodies[0]), string(got), "what the function got")
	var e events.SQSEvent
	require.NoError(t, json.Unmarshal(got, &e))
	var bodies []string
	for _, rec := range e.Records {
		bodies = append(bodies, rec.Body)
		require.Equal(t, "aws:sqs", rec.EventSource)
		require.Equal(t, "arn:aws:sqs:eu-west-1:123456789012:orders.fifo", rec.EventSourceARN)
		require.Equal(t, "eu-west-1", rec.AWSRegion)
		require.Equal(t, "1", rec.Attributes["ApproximateReceiveCount"])
		require.Equal(t, "123456789012", rec.Attributes["SenderId"])
		require.NotEmpty(t, rec.Attributes["SequenceNumber"])
		require.NotEmpty(t, rec.Attributes["MessageDeduplicationId"])
		require.Equal(t, lambdaevents.MD5OfBody(rec.Body), rec.Md5OfBody)
	}
	require.Equal(t, []string{"create", "fail-pay", "ship", "refund"}, bodies)
	require.Equal(t, "order-1", e.Records[0].Attributes["MessageGroupId"])
	require.Equal(t, "order-2", e.Records[3].Attributes["MessageGroupId"])

	// An error of the function fails its whole batch: the emulator answers 200 with its errorType and
	// errorMessage.
	sendAll(t, q, "order-3", "boom")
	r = runOne()
	require.Equal(t, fifoq.OutcomeError, r.Outcome)
	var fe *lambdaevents.FunctionError
	require.ErrorAs(t, r.Err, &fe)
	require.Equal(t, lambdaevents.ErrorFunction, fe.Kind, "%v", fe)
	require.Equal(t, "boom", fe.ErrorMessage)
	require.Equal(t, "errorString", fe.ErrorType)
	require.Equal(t, []string{"fail-pay", "ship", "boom"}, left(q))

	m := inv.Metrics()
	require.Equal(t, uint64(2), m.Invocations)
	require.Equal(t, uint64(5), m.Records)
	require.Equal(t, uint64(2), m.ItemFailures)
	require.Equal(t, uint64(1), m.Errors[lambdaevents.ErrorFunction])
}

// testDeadline returns a context that ends 30 s before go test's -timeout (with the test, if there is none),
// so that a program the test runs is stopped and reported before the test binary is.
func testDeadline(t *testing.T) (context.Context, context.CancelFunc) {
	if d, ok := t.Deadline(); ok {
		return context.WithDeadline(t.Context(), d.Add(-30*time.Second))
	}
	return context.WithCancel(t.Context())
}

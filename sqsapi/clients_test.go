package sqsapi_test

// Conformance through real AWS clients of other languages, over both protocols: each boto3 found runs
// testdata/clients/conformance.py against a server on loopback (the pyenv or pip boto3 on PATH speaks SQS's
// JSON protocol, Debian's python3-boto3 1.26 at /usr/bin/python3 the query protocol), and each AWS CLI found
// (a pip CLI v1 on PATH, JSON; Debian's awscli 2.9 at /usr/bin/aws, query) runs a few commands, one of which
// must fail. A client that is not installed skips its subtest with the reason; CI installs them all. The
// server records which protocol each client used, so the log says what ran. Standard library only: these
// tests need no SDK of Go.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fifoq/fifoq/sqsapi"
)

// clProtocols records the protocols of the requests a server was sent, and the first one's User-Agent.
type clProtocols struct {
	mu    sync.Mutex
	seen  map[string]int
	agent string
}

func (p *clProtocols) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proto := "query"
		if r.Header.Get("X-Amz-Target") != "" {
			proto = "json"
		}
		p.mu.Lock()
		p.seen[proto]++
		if p.agent == "" {
			p.agent = r.Header.Get("User-Agent")
		}
		p.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// only returns the one protocol the server was sent, or "" when it was sent both or none.
func (p *clProtocols) only() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.seen) != 1 {
		return ""
	}
	for k := range p.seen {
		return k
	}
	return ""
}

// counts returns the number of requests by protocol.
func (p *clProtocols) counts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.seen)
}

// userAgent returns the User-Agent of the first request.
func (p *clProtocols) userAgent() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.agent
}

// clServer starts a server of its own on loopback.
func clServer(t *testing.T) (string, *clProtocols) {
	t.Helper()
	p := &clProtocols{seen: map[string]int{}}
	hs := httptest.NewServer(p.wrap(sqsapi.NewServer()))
	t.Cleanup(hs.Close)
	return hs.URL, p
}

// clEnv is the environment of a client process: the machine's, without AWS settings, with dummy
// credentials and a HOME of its own, so no configuration of the machine leaks in.
func clEnv(t *testing.T) (env []string, home string) {
	t.Helper()
	home = t.TempDir()
	config := filepath.Join(home, "config")
	credentials := filepath.Join(home, "credentials")
	for _, f := range []string{config, credentials} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home, "AWS_ACCESS_KEY_ID=AKIDCONFORMANCE", "AWS_SECRET_ACCESS_KEY=conformance-secret",
		"AWS_DEFAULT_REGION=us-east-1", "AWS_CONFIG_FILE="+config, "AWS_SHARED_CREDENTIALS_FILE="+credentials,
		"AWS_PAGER=", "AWS_EC2_METADATA_DISABLED=true")
	return env, home
}

// clRun runs a program and returns its output and exit code; it fails the test if the program cannot be run
// or does not end before go test's -timeout.
func clRun(t *testing.T, env []string, dir, path string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := testDeadline(t) // go test's -timeout, not a time a slow machine reaches
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env, cmd.Dir = env, dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && ctx.Err() == nil:
		code = exit.ExitCode()
	default:
		t.Fatalf("%s %s: %v\nstdout: %s\nstderr: %s", path, strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String(), errb.String(), code
}

// clFind returns the candidates that exist, each once (by the file it resolves to), in order: a name is
// looked up in PATH, a path taken as it is.
func clFind(candidates ...string) []string {
	var found, seen []string
	for _, c := range candidates {
		p := c
		if !strings.Contains(c, "/") {
			var err error
			if p, err = exec.LookPath(c); err != nil {
				continue
			}
		} else if fi, err := os.Stat(c); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			real = p
		}
		if slices.Contains(seen, real) {
			continue
		}
		seen = append(seen, real)
		found = append(found, p)
	}
	return found
}

func TestClientsBoto3(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("testdata", "clients", "conformance.py"))
	if err != nil {
		t.Fatal(err)
	}
	pythons := clFind("python3", "/usr/bin/python3")
	if len(pythons) == 0 {
		t.Skip("no python3: install python3-boto3 (query protocol) and pip's boto3 (JSON protocol) to run this test")
	}
	t.Parallel()
	var mu sync.Mutex
	ran := map[string]string{} // sys.executable -> the python it was found as
	for _, py := range pythons {
		t.Run(strings.ReplaceAll(py, "/", "_"), func(t *testing.T) {
			t.Parallel()
			env, home := clEnv(t)
			// One interpreter found twice (a pyenv shim and the file it runs) runs once.
			exe, errOut, code := clRun(t, env, home, py, "-c", "import sys, boto3; print(sys.executable)")
			if code != 0 {
				t.Skipf("%s has no boto3 (%s): apt-get install python3-boto3, or pip install boto3, to run this test",
					py, strings.TrimSpace(lastLine(errOut)))
			}
			exe = strings.TrimSpace(exe)
			mu.Lock()
			other, dup := ran[exe]
			ran[exe] = py
			mu.Unlock()
			if dup {
				t.Skipf("%s is %s, which %s runs", py, exe, other)
			}
			base, protocols := clServer(t)
			out, errOut, code := clRun(t, env, home, py, script, base)
			t.Logf("%s %s:\n%s", py, script, out)
			if code != 0 {
				t.Fatalf("conformance.py under %s exited %d\nstdout:\n%s\nstderr:\n%s", py, code, out, errOut)
			}
			first, _, _ := strings.Cut(out, "\n")
			proto, _, _ := strings.Cut(strings.TrimPrefix(first, "protocol="), " ")
			if got := protocols.only(); got != proto {
				t.Errorf("the script says botocore speaks %q, the server saw %v", proto, protocols.counts())
			}
			if !strings.Contains(out, "PASS protocol="+proto) {
				t.Errorf("no PASS line in the output")
			}
		})
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func TestClientsAWSCLI(t *testing.T) {
	clis := clFind("aws", "/usr/bin/aws")
	if len(clis) == 0 {
		t.Skip("no AWS CLI: install awscli (v2, query protocol) and pip's awscli (v1, JSON protocol) to run this test")
	}
	t.Parallel()
	for _, cli := range clis {
		t.Run(strings.ReplaceAll(cli, "/", "_"), func(t *testing.T) {
			t.Parallel()
			env, home := clEnv(t)
			base, protocols := clServer(t)
			// Six commands: each starts a Python, a second or more on a loaded machine. AWS_PAGER= keeps
			// either CLI from paging.
			common := []string{"--endpoint-url", base, "--region", "us-east-1", "--output", "json", "sqs"}
			sqs := func(v any, args ...string) {
				t.Helper()
				out, errOut, code := clRun(t, env, home, cli, append(slices.Clone(common), args...)...)
				if code != 0 {
					t.Fatalf("aws sqs %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
				}
				if v != nil {
					if err := json.Unmarshal([]byte(out), v); err != nil {
						t.Fatalf("aws sqs %s printed %q: %v", strings.Join(args, " "), out, err)
					}
				}
			}
			// A visibility timeout of 12 hours keeps received messages in flight however slowly the CLI runs.
			var created struct{ QueueUrl string }
			sqs(&created, "create-queue", "--queue-name", "cl-q.fifo", "--attributes",
				"FifoQueue=true,ContentBasedDeduplication=true,VisibilityTimeout=43200")
			if !strings.HasSuffix(created.QueueUrl, "/cl-q.fifo") {
				t.Fatalf("create-queue QueueUrl %q", created.QueueUrl)
			}
			var sent struct {
				Successful []struct{ Id, MessageId, SequenceNumber string }
				Failed     []any
			}
			sqs(&sent, "send-message-batch", "--queue-url", created.QueueUrl, "--entries",
				`[{"Id":"a","MessageBody":"one","MessageGroupId":"g"},{"Id":"b","MessageBody":"two","MessageGroupId":"g"}]`)
			if len(sent.Successful) != 2 || sent.Successful[0].SequenceNumber == "" || sent.Failed != nil {
				t.Fatalf("send-message-batch printed %+v", sent)
			}
			var got struct {
				Messages []struct {
					Body, ReceiptHandle string
					Attributes          map[string]string
				}
			}
			sqs(&got, "receive-message", "--queue-url", created.QueueUrl, "--max-number-of-messages", "10",
				"--attribute-names", "All")
			if len(got.Messages) != 2 || got.Messages[0].Body != "one" || got.Messages[1].Body != "two" {
				t.Fatalf("receive-message printed %+v; want one, two", got)
			}
			if g := got.Messages[0].Attributes["MessageGroupId"]; g != "g" {
				t.Errorf("MessageGroupId %q", g)
			}
			sqs(nil, "delete-message", "--queue-url", created.QueueUrl, "--receipt-handle", got.Messages[0].ReceiptHandle)
			// An empty receive ("two" is in flight) prints nothing.
			out, errOut, code := clRun(t, env, home, cli, append(slices.Clone(common),
				"receive-message", "--queue-url", created.QueueUrl)...)
			if code != 0 || strings.TrimSpace(out) != "" {
				t.Errorf("empty receive-message: exit %d, printed %q (stderr %q)", code, out, errOut)
			}
			// An error: a non-zero exit and the query code on stderr.
			out, errOut, code = clRun(t, env, home, cli, append(slices.Clone(common),
				"get-queue-url", "--queue-name", "cl-none")...)
			if code == 0 {
				t.Fatalf("get-queue-url of a missing queue succeeded: %s", out)
			}
			if !strings.Contains(errOut, "(AWS.SimpleQueueService.NonExistentQueue)") || !strings.Contains(errOut, "GetQueueUrl") {
				t.Errorf("get-queue-url of a missing queue: exit %d, stderr %q", code, errOut)
			}
			t.Logf("%s (%s) spoke %s (requests by protocol: %v)", cli, protocols.userAgent(),
				protocols.only(), protocols.counts())
			if protocols.only() == "" {
				t.Errorf("the CLI mixed protocols: %v", protocols.counts())
			}
		})
	}
}

// testDeadline returns a context that ends 30 s before go test's -timeout (with the test, if there is none),
// so that a program the test runs is stopped and reported before the test binary is.
func testDeadline(t *testing.T) (context.Context, context.CancelFunc) {
	if d, ok := t.Deadline(); ok {
		return context.WithDeadline(t.Context(), d.Add(-30*time.Second))
	}
	return context.WithCancel(t.Context())
}

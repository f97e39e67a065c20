//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fifoq-local.json is fifoq.json, which docker-compose.yml gives fifoq serve, with the function on loopback.
func TestLocalConfigIsTheComposeConfig(t *testing.T) {
	compose, err := os.ReadFile("../fifoq.json")
	if err != nil {
		t.Fatal(err)
	}
	local, err := os.ReadFile("../fifoq-local.json")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(string(compose), "http://function:8080/", "http://127.0.0.1:9000/", 1)
	if string(local) != want {
		t.Fatalf("fifoq-local.json is not fifoq.json with the function at 127.0.0.1:9000:\n%s", local)
	}
	addr, err := emulatorAddr("../fifoq-local.json")
	if err != nil || addr != "127.0.0.1:9000" {
		t.Fatalf("emulatorAddr: %q, %v", addr, err)
	}
}

// watched is the output of the processes, which the test waits on: each write wakes the waiters.
type watched struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed at the next write
}

func newWatched() *watched { return &watched{changed: make(chan struct{})} }

func (w *watched) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	close(w.changed)
	w.changed = make(chan struct{})
	return w.b.Write(p)
}

func (w *watched) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// waitFor returns once the output holds each of wants, or fails the test when ctx ends first.
func (w *watched) waitFor(t *testing.T, ctx context.Context, wants ...string) {
	t.Helper()
	for {
		w.mu.Lock()
		out, changed := w.b.String(), w.changed
		w.mu.Unlock()
		missing := ""
		for _, want := range wants {
			if !strings.Contains(out, want) {
				missing = want
				break
			}
		}
		if missing == "" {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("no %q in the output:\n%s", missing, out)
		}
	}
}

// sqsCall sends an action of SQS's JSON protocol to endpoint and decodes its answer into out.
func sqsCall(t *testing.T, endpoint, action string, in map[string]any, out any) {
	t.Helper()
	body, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint+"/", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s: %s", action, resp.Status, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: %v: %s", action, err, b)
		}
	}
}

// The README's one command, run as a user runs it, on free ports and with a visibility timeout of 5 s
// rather than 10 (so that the failing order reaches the dead-letter queue sooner): the function
// and the emulator are built offline (no module proxy) and run, fifoq serve maps the queue to them, and the orders sent with the SQS
// API come to the function as the README says: order 1 and order 3 done and deleted; "fail: order 2"
// reported failed, received 3 times, then moved to orders-dlq.fifo. The waits are on the output; the test's
// deadline bounds a failure only.
func TestRunOneCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the Lambda Runtime Interface Emulator and fifoq serve (about a minute the first time); skipped with -short")
	}
	rie, api := freeAddrT(t), freeAddrT(t)
	compose, err := os.ReadFile("../fifoq-local.json")
	if err != nil {
		t.Fatal(err)
	}
	config := strings.Replace(string(compose), "127.0.0.1:9000", rie, 1)
	config = strings.Replace(config, `"VisibilityTimeout": 10`, `"VisibilityTimeout": 5`, 1) // at least the functionTimeout, 5
	path := filepath.Join(t.TempDir(), "fifoq.json")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}

	// Offline: the modules in the module cache (fetched here if need be, as a first run fetches them), then no
	// module proxy at all.
	for _, args := range [][]string{{"install", riePackage + "@" + rieVersion}, {"list", "-deps", fifoqPackage}, {"list", "-deps", ".."}} {
		cmd := exec.CommandContext(t.Context(), "go", args...)
		cmd.Env = append(os.Environ(), "GOBIN="+t.TempDir())
		if args[0] == "install" {
			cmd.Env = append(cmd.Env, "GOWORK=off", "GOFLAGS=")
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %v: %v\n%s", args, err, out)
		}
	}
	t.Setenv("GOPROXY", "off")

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stdoutR, stdoutW := io.Pipe()
	logs := newWatched()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, options{config: path, function: "..", addr: api, timeout: "10"}, stdoutW, logs)
		stdoutW.Close()
	}()
	line, err := bufio.NewReader(stdoutR).ReadString('\n')
	if err != nil {
		t.Fatalf("no endpoint on stdout: %v\n%s", err, logs.String())
	}
	go io.Copy(io.Discard, stdoutR) //nolint:errcheck // nothing more is expected
	endpoint := strings.TrimSpace(line)
	if endpoint != "http://"+api {
		t.Fatalf("endpoint %q, want http://%s", endpoint, api)
	}
	logs.waitFor(t, ctx, "fifoq | ", `msg="event source mapping" queue=orders.fifo function_url=http://`+rie+"/")

	queue := endpoint + "/000000000000/orders.fifo"
	for _, m := range []struct{ group, body string }{{"alice", "order 1"}, {"bob", "fail: order 2"}, {"carol", "order 3"}} {
		sqsCall(t, endpoint, "SendMessage", map[string]any{"QueueUrl": queue, "MessageGroupId": m.group, "MessageBody": m.body}, nil)
	}
	logs.waitFor(t, ctx, `function | `, `order "order 1" of alice done`, `order "order 3" of carol done`,
		`order "fail: order 2" of bob failed (receive 1)`, `order "fail: order 2" of bob failed (receive 3)`,
		"message moved to the dead-letter queue")

	var got struct {
		Attributes map[string]string
	}
	for q, want := range map[string]string{"orders.fifo": "0", "orders-dlq.fifo": "1"} {
		sqsCall(t, endpoint, "GetQueueAttributes", map[string]any{"QueueUrl": endpoint + "/000000000000/" + q,
			"AttributeNames": []string{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"}}, &got)
		if n := got.Attributes["ApproximateNumberOfMessages"]; n != want {
			t.Errorf("%s holds %s messages, want %s: %v", q, n, want, got.Attributes)
		}
	}
	var dead struct {
		Messages []struct{ Body string }
	}
	sqsCall(t, endpoint, "ReceiveMessage", map[string]any{"QueueUrl": endpoint + "/000000000000/orders-dlq.fifo"}, &dead)
	if len(dead.Messages) != 1 || dead.Messages[0].Body != "fail: order 2" {
		t.Errorf("the dead-letter queue gave %+v, want the failed order", dead.Messages)
	}

	cancel() // as Ctrl-C: fifoq serve stops cleanly, then the emulator
	if err := <-done; err != nil {
		t.Fatalf("run: %v\n%s", err, logs.String())
	}
	out := logs.String()
	for _, want := range []string{"local | stopping fifoq serve (SIGTERM), then the emulator", `fifoq | `, `msg=stopped`} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the output:\n%s", want, out)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
	_, err = net.Dial("tcp", rie)
	if err == nil {
		t.Error("the emulator still listens")
	}
}

// freeAddrT returns an address on 127.0.0.1 that nothing listened on a moment ago.
func freeAddrT(t *testing.T) string {
	t.Helper()
	addr, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

package fifoqcontainer_test

import (
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"
	"github.com/testcontainers/testcontainers-go"

	"github.com/fifoq/fifoq/fifoqcontainer"
)

// The tests of this file run as a user would, with none of testcontainers' variables but those the test
// names. testcontainers reads its configuration once per process, so each runs its steps in a child process
// (the test binary, run again with childEnv set and the environment the test gives).

// childEnv, set in a child process, names the test whose steps it runs.
const childEnv = "FIFOQCONTAINER_TEST_CHILD"

// inChild reports whether this process is the child of the test t, which then runs its steps.
func inChild(t *testing.T) bool { return os.Getenv(childEnv) == t.Name() }

// runChild runs the steps of the test t in a child process whose environment is this one's without any
// TESTCONTAINERS_ variable and with HOME in a new directory (no ~/.testcontainers.properties), plus env
// ("NAME=value"). It fails t, with the child's output, if the child's test fails, and returns that output.
func runChild(t *testing.T, env ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "TESTCONTAINERS_") || strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, childEnv+"=")
	})
	cmd.Env = append(cmd.Env, childEnv+"="+t.Name(), "HOME="+t.TempDir())
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the child process:\n%s", out)
	require.Contains(t, string(out), "--- PASS: "+t.Name(), "the child ran the test:\n%s", out)
	return string(out)
}

// In the host's network, Run needs no TESTCONTAINERS_HOST_OVERRIDE: it waits on, and EndpointURL returns,
// the loopback address the server listens on. (Before, inside a container with a Docker that has no bridge,
// testcontainers took a bridge's gateway for the host, and the wait for /health ran out after 60 s with
// "context deadline exceeded".)
func TestHostNetworkNeedsNoHostOverride(t *testing.T) {
	if !inChild(t) {
		img := testImage(t)
		out := runChild(t, "FIFOQ_TEST_IMAGE="+img, "TESTCONTAINERS_RYUK_DISABLED=true")
		t.Logf("child:\n%s", out)
		return
	}
	_, set := os.LookupEnv("TESTCONTAINERS_HOST_OVERRIDE")
	require.False(t, set)
	port := freePort(t)
	start := time.Now()
	ctr, err := fifoqcontainer.Run(t.Context(), os.Getenv("FIFOQ_TEST_IMAGE"), fifoqcontainer.WithQueues("orders.fifo"),
		fifoqcontainer.WithHostNetwork(port))
	testcontainers.CleanupContainer(t, ctr)
	require.NoError(t, err)
	t.Logf("Run took %v", time.Since(start).Round(time.Millisecond))
	require.Equal(t, "http://127.0.0.1:"+strconv.Itoa(port), mustEndpoint(t, ctr))
	url, err := ctr.QueueURL(t.Context(), "orders.fifo")
	require.NoError(t, err)
	client := sdk(t, ctr, "us-east-1", "test", "test")
	_, err = client.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("hi"),
		MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("1")})
	require.NoError(t, err)
}

// With the reaper on (no TESTCONTAINERS_RYUK_DISABLED) and its image neither on the Docker host nor to be
// had, Run fails before it starts anything, within its bounded pull rather than testcontainers' 15 minutes of
// retries, with ErrReaperUnavailable naming the variable to set; a second Run fails at once. The registry
// here is a listener on loopback that accepts connections and never answers (TESTCONTAINERS_HUB_IMAGE_NAME_PREFIX
// sends the reaper's pull there), as a registry behind a network that drops packets does.
func TestReaperUnavailableNamesTheVariable(t *testing.T) {
	if !inChild(t) {
		testcontainers.SkipIfProviderIsNotHealthy(t)
		registry := silentListener(t)
		out := runChild(t, "TESTCONTAINERS_HUB_IMAGE_NAME_PREFIX="+registry+"/fifoq-test")
		t.Logf("child:\n%s", out)
		return
	}
	for i := range 2 {
		start := time.Now()
		ctr, err := fifoqcontainer.Run(t.Context(), "fifoq:never-started", fifoqcontainer.WithHostNetwork(freePort(t)))
		took := time.Since(start)
		require.Nil(t, ctr, "nothing was started")
		require.ErrorIs(t, err, fifoqcontainer.ErrReaperUnavailable)
		require.ErrorContains(t, err, "TESTCONTAINERS_RYUK_DISABLED=true")
		require.ErrorContains(t, err, "testcontainers/ryuk")
		t.Logf("Run %d failed after %v: %v", i, took.Round(time.Millisecond), err)
	}
}

// silentListener returns the address of a listener on loopback that accepts connections and never answers,
// closed when the test ends.
func silentListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

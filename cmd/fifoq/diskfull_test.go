package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq/storage/storagetest"
)

// fill writes a file of zeros to dir until it has at most free bytes left, and returns its path.
func fill(t *testing.T, dir string, free int64) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	var st syscall.Statfs_t
	require.NoError(t, syscall.Statfs(dir, &st))
	avail := int64(st.Bavail) * int64(st.Bsize)
	zeros := make([]byte, 1<<20)
	for n := avail - free; n > 0; n -= int64(len(zeros)) {
		_, err := f.Write(zeros[:min(int64(len(zeros)), n)])
		require.NoError(t, err)
	}
	require.NoError(t, f.Sync())
	return path
}

// TestServeDiskFull fills the disk of a durable server while it serves (a tmpfs of a few megabytes): the
// send that meets the full disk gets ServiceUnavailable naming the cause, the process exits non-zero with
// one line naming it; once space is freed, the same command line starts again and every acknowledged
// message is there.
func TestServeDiskFull(t *testing.T) {
	t.Parallel()
	disk := storagetest.SmallDisk(t, 24<<20)
	filler := fill(t, disk, 6<<20)
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(disk, "data"), "--queue", "jobs"}
	c := startChild(t, args...)
	ctx, client := t.Context(), c.client()
	url, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("jobs")})
	require.NoError(t, err)

	body := strings.Repeat("x", 200<<10)
	acked := map[string]bool{}
	var sendErr error
	for i := 0; i < 1000 && sendErr == nil; i++ {
		var out *sqs.SendMessageOutput
		out, sendErr = client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: url.QueueUrl, MessageBody: aws.String(body)})
		if sendErr == nil {
			acked[aws.ToString(out.MessageId)] = true
		}
	}
	require.Error(t, sendErr, "the disk never filled")
	require.NotEmpty(t, acked)
	code, status := apiError(t, sendErr)
	require.Equal(t, "ServiceUnavailable", code, "%v", sendErr)
	require.Equal(t, 503, status)
	require.Contains(t, sendErr.Error(), "no space left on device")

	// The process stops by itself, non-zero, saying why in one line.
	err = c.cmd.Wait()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "exit: %v; stderr: %s", err, c.stderr.String())
	require.Equal(t, 1, exit.ExitCode(), c.stderr.String())
	logs := c.stderr.String()
	lines := strings.Split(strings.TrimSpace(logs), "\n")
	last := lines[len(lines)-1]
	require.True(t, strings.HasPrefix(last, "fifoq: while serving: fifoq: store failed: "), "last line %q", last)
	require.Contains(t, last, "no space left on device")
	require.Equal(t, 1, strings.Count(logs, "the store failed: shutting down"), logs)
	require.Equal(t, 1, strings.Count(logs, "level=ERROR"), "the failure is logged once:\n%s", logs)

	// Space freed, the supervisor's restart brings every acknowledged message back.
	require.NoError(t, os.Remove(filler))
	c = startChild(t, args...)
	client = c.client()
	got := map[string]bool{}
	for {
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url.QueueUrl, MaxNumberOfMessages: 10,
			VisibilityTimeout: 600})
		require.NoError(t, err)
		if len(out.Messages) == 0 {
			break
		}
		for _, m := range out.Messages {
			got[aws.ToString(m.MessageId)] = true
		}
	}
	for id := range acked {
		require.True(t, got[id], "acknowledged message %s lost", id)
	}
	require.LessOrEqual(t, len(got), len(acked)+1, "nothing but the sends made: at most the one refused")
	c.stop(syscall.SIGTERM)
}

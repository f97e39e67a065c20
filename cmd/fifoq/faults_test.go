package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/durable"
	"github.com/fifoq/fifoq/sqsapi"
	"github.com/fifoq/fifoq/storage/storagetest"
)

// A store that cannot be opened stops "serve --data-dir" at once (issue 16, items 1, 3 and 4): exit status
// 1, and one line on stderr that names the cause and the file, with no stack and no module path. Each
// test runs the command as a process, and waits for it to exit on its own: a start that hangs fails the
// test at go test's -timeout.

// makeStore makes the store of a server in dir with the queue "q" holding n messages of 1 KB, as "serve
// --data-dir" would, with memtables of memTable bytes (small ones put the messages in table files), and
// closes it. Close does not flush: what the last memtable held stays in the log.
func makeStore(t *testing.T, dir string, n int, memTable uint64) {
	t.Helper()
	st, err := durable.Open(dir, durable.WithLogger(slog.New(slog.DiscardHandler)), durable.WithMemTableSize(memTable))
	require.NoError(t, err)
	cat, err := catalog.Open(st, catalog.WithDefaultNamespace(catalog.Namespace{Account: "000000000000", Region: "us-east-1"}))
	require.NoError(t, err)
	api := sqsapi.NewServer(sqsapi.WithCatalog(cat))
	_, err = api.DeclareQueue("q", nil)
	require.NoError(t, err)
	q, ok := api.Queue("q")
	require.True(t, ok)
	for i := range n {
		_, err := q.Send(context.Background(), fifoq.Message{Body: fmt.Sprintf("%03d-%s", i, strings.Repeat("x", 1000))})
		require.NoError(t, err)
	}
	require.NoError(t, api.Close())
	require.NoError(t, cat.Close())
	require.NoError(t, st.Close())
}

// failStart runs "serve --data-dir dir" and returns its stderr, once it has exited with status 1 without
// listening; it checks that stderr is one line, with no stack and no module path.
func failStart(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return failStartStatus(t, 1, dir, args...)
}

// failStartStatus is failStart for a start that exits with status code: 2 for a command line at fault
// (a declared queue's attributes refused), whose line starts "fifoq serve: ".
func failStartStatus(t *testing.T, code int, dir string, args ...string) string {
	t.Helper()
	cmd := command(t, nil, append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dir}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "stderr: %s", &stderr)
	require.Equal(t, code, exit.ExitCode(), "stderr: %s", &stderr)
	require.Empty(t, out, "it never listened")
	var lines []string // but the Info logs of the start
	for l := range strings.Lines(stderr.String()) {
		if !strings.Contains(l, "level=INFO") {
			lines = append(lines, l)
		}
	}
	require.Len(t, lines, 1, "one line: %s", &stderr)
	s := lines[0]
	require.True(t, strings.HasPrefix(s, map[int]string{1: "fifoq: ", 2: "fifoq serve: "}[code]), s)
	for _, bad := range []string{"github.com/", "goroutine", ".go:", "<corruption detail carrier>", "\t"} {
		require.NotContains(t, s, bad)
	}
	return s
}

// A full disk at start-up: Pebble flushes the records of the log to a table file before it opens, which
// fails. The command exited? Never: it spun a core, ignoring SIGTERM. Now it exits 1 with one line that
// names ENOSPC and the table file; given room, it starts with every message.
func TestServeDiskFullStart(t *testing.T) {
	t.Parallel()
	disk := storagetest.SmallDisk(t, 1<<20)
	dir := filepath.Join(disk, "data")
	makeStore(t, dir, 100, 4<<20)
	filler := filepath.Join(disk, "fill")
	f, err := os.Create(filler)
	require.NoError(t, err)
	for err == nil {
		_, err = f.Write(make([]byte, 4096))
	}
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.NoError(t, f.Close())

	line := failStart(t, dir)
	require.Contains(t, line, "no space left on device")
	require.Contains(t, line, dir+string(filepath.Separator))
	require.Contains(t, line, ".sst")

	require.NoError(t, os.Remove(filler))
	c := startChild(t, "serve", "--addr", "127.0.0.1:0", "--data-dir", dir)
	got, err := c.client().GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(c.endpoint + "/000000000000/q"), AttributeNames: []types.QueueAttributeName{"ApproximateNumberOfMessages"}})
	require.NoError(t, err)
	require.Equal(t, "100", got.Attributes["ApproximateNumberOfMessages"])
	c.stop(syscall.SIGTERM)
}

// SIGTERM while the store opens: the start stops at once, exit status 1 and one line. The store's last log
// is a named pipe, whose open blocks the process's read of it (durable reads the logs before Pebble opens
// the store) until the test opens its other end: once it has, the process is inside durable.Open, where it
// stays while the test holds the pipe, and the test signals it there.
func TestServeSIGTERMWhileOpening(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	makeStore(t, dir, 1, 4<<20)
	pipe := filepath.Join(dir, "999999.log")
	require.NoError(t, syscall.Mkfifo(pipe, 0o644))

	cmd := command(t, nil, "serve", "--addr", "127.0.0.1:0", "--data-dir", dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	w, err := os.OpenFile(pipe, os.O_WRONLY, 0) // returns once the process opened the pipe to read it
	require.NoError(t, err)
	defer w.Close()
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err = cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "stderr: %s", &stderr)
	require.Equal(t, 1, exit.ExitCode(), "stderr: %s", &stderr)
	require.Equal(t, fmt.Sprintf("fifoq: --data-dir %s: stopped by a signal while opening the store\n", dir), stderr.String())
}

// A start that fails after the store was made in a new directory removes the directory; one that fails
// on a directory that was there keeps it.
func TestServeFailedStartRemovesNewDir(t *testing.T) {
	t.Parallel()
	parent := filepath.Join(t.TempDir(), "new")
	dir := filepath.Join(parent, "data")
	line := failStartStatus(t, 2, dir, "--queue", "q,VisibilityTimeout=x")
	require.Contains(t, line, "VisibilityTimeout")
	_, err := os.Stat(parent)
	require.ErrorIs(t, err, os.ErrNotExist, "the directories the start made are removed")

	kept := t.TempDir()
	failStartStatus(t, 2, kept, "--queue", "q,VisibilityTimeout=x")
	names, err := os.ReadDir(kept)
	require.NoError(t, err)
	require.NotEmpty(t, names, "the store made in a directory that was there is left")
}

// Damaged files: refused at start with one line naming the file. A log cut short or deleted used to start
// with fewer messages (or none) without a word; a damaged table printed 20 KB of stacks; a damaged OPTIONS
// file or a deleted format marker named no file.
func TestServeDamagedStore(t *testing.T) {
	t.Parallel()
	newest := func(t *testing.T, dir, pattern string) string {
		m, err := filepath.Glob(filepath.Join(dir, pattern))
		require.NoError(t, err)
		require.NotEmpty(t, m, pattern)
		slices.Sort(m)
		return m[len(m)-1]
	}
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string) string // the file named
	}{
		{"log cut short", func(t *testing.T, dir string) string {
			log := newest(t, dir, "*.log")
			info, err := os.Stat(log)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(log, info.Size()/2))
			return log
		}},
		{"log deleted", func(t *testing.T, dir string) string {
			log := newest(t, dir, "*.log")
			require.NoError(t, os.Remove(log))
			return log
		}},
		{"table", func(t *testing.T, dir string) string {
			sst := newest(t, dir, "*.sst")
			b, err := os.ReadFile(sst)
			require.NoError(t, err)
			b[len(b)/3] ^= 0x10
			require.NoError(t, os.WriteFile(sst, b, 0o644))
			return sst
		}},
		{"OPTIONS", func(t *testing.T, dir string) string {
			opts := newest(t, dir, "OPTIONS-*")
			require.NoError(t, os.WriteFile(opts, []byte("\x00\x01garbage[Options]\nx=y\n\xff"), 0o644))
			return opts
		}},
		{"format marker", func(t *testing.T, dir string) string {
			marker := newest(t, dir, "marker.format-version.*")
			require.NoError(t, os.Remove(marker))
			return filepath.Join(dir, "marker.format-version.")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			memTable := uint64(64 << 10) // table files
			if strings.HasPrefix(tc.name, "log") {
				memTable = 4 << 20 // every message in the log
			}
			makeStore(t, dir, 200, memTable)
			file := tc.damage(t, dir)
			line := failStart(t, dir)
			require.Contains(t, line, file)
			require.Contains(t, line, fifoq.ErrStoreCorrupt.Error())
			require.Less(t, len(line), 1000)
		})
	}
}

// stackError is an error that writes a stack when formatted with %+v, as those of cockroachdb/errors (and
// so Pebble's) do.
type stackError struct{}

func (stackError) Error() string { return "pebble: file 000014: checksum mismatch" }
func (stackError) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('+') {
		fmt.Fprint(f, "pebble: file 000014: checksum mismatch\n(1) attached stack trace\n  -- stack trace:\n  | github.com/cockroachdb/pebble/v2.(*DB).Open\n  | \t/home/build/go/pkg/mod/x.go:12")
		return
	}
	fmt.Fprint(f, "pebble: file 000014: checksum mismatch")
}

// The logs of "serve" write an error as its Error says, on one line: the text handler would format it with
// %+v, stack and build-machine paths included.
func TestLoggerErrorsOnOneLine(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"text", "json"} {
		var buf strings.Builder
		logger := newLogger(serveConfig{logLevel: slog.LevelInfo, logFormat: format}, &buf)
		logger.Error("pebble background error", "error", stackError{})
		require.Equal(t, 1, strings.Count(buf.String(), "\n"), buf.String())
		require.Contains(t, buf.String(), "pebble: file 000014: checksum mismatch")
		require.NotContains(t, buf.String(), "stack trace")
	}
}

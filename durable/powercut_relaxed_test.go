package durable_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/durable"
)

// A power cut on the rig at a chosen moment of a store opened WithSyncEvery, deterministic: what it loses
// is what came after its last real sync, no more.

// relaxedChild is the environment variable that makes TestPowerCutRelaxedChild the child of
// TestPowerCutRelaxed: how many sends to make before the real sync, a space, and the store's directory.
const relaxedChild = "FIFOQ_DURABLE_RELAXED_CHILD"

// relaxedSent is what TestPowerCutRelaxedChild reports: the MessageIDs and sequence numbers of its last
// send before the real sync, and of its sends after it.
type relaxedSent struct {
	Before fifoq.SendResult
	After  []fifoq.SendResult
}

// TestPowerCutRelaxedChild is the child of TestPowerCutRelaxed; run otherwise, it does nothing. It opens a
// store WithSyncEvery (its syncs driven by the test), sends n messages a... to a FIFO queue, lets a real
// sync happen, sends b0, b1 and b2, prints what the sends returned as JSON, and waits to be killed.
func TestPowerCutRelaxedChild(t *testing.T) {
	ns, dir, ok := strings.Cut(os.Getenv(relaxedChild), " ")
	if !ok {
		return
	}
	n, err := strconv.Atoi(ns)
	require.NoError(t, err)
	ticks := durable.NewSyncTicks()
	st := openStore(t, dir, durable.WithSyncEvery(time.Hour), durable.WithSyncTicks(ticks))
	q := openQueue(t, st, fifoq.NewManualClock(t0), "q.fifo")
	var sent relaxedSent
	for i := 0; i < n; i += 10 {
		var ms []fifoq.Message
		for j := i; j < min(i+10, n); j++ {
			b := fmt.Sprintf("a%04d", j)
			ms = append(ms, fifoq.Message{Body: b, GroupID: "g", DeduplicationID: b})
		}
		rs, err := q.SendBatch(context.Background(), ms)
		require.NoError(t, err)
		sent.Before = rs[len(rs)-1]
	}
	ticks.Tick() // a real sync, done before the next send
	for _, b := range []string{"b0", "b1", "b2"} {
		r, err := q.Send(context.Background(), fifoq.Message{Body: b, GroupID: "g", DeduplicationID: b})
		require.NoError(t, err)
		sent.After = append(sent.After, r)
	}
	require.NoError(t, json.NewEncoder(os.Stdout).Encode(sent))
	_, err = io.Copy(io.Discard, os.Stdin) // until the parent kills it
	require.NoError(t, err)
}

// TestPowerCutRelaxed: a process that acknowledged sends WithSyncEvery is killed and the power cut, in
// both metadata modes. The store opens; what was acknowledged before the last real sync began is there, of
// what came after, a prefix, in order.
//
// The sends after the cut take new MessageIDs and sequence numbers, never those of a send lost: a queue
// gives out its numbers in blocks of 4096, and records each block, synced for real (storage.Syncer),
// before it gives out its first number. When b0 begins a block (4097 sends before it), its record, and b0
// with it, is synced before b0 is acknowledged, and so survives the cut.
func TestPowerCutRelaxed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		before int // sends before the real sync: 4097 fill the first block, and b0 begins the next
	}{
		{"lenient", 3},
		{"strict", 3},
		{"strict, b0 begins a block", 4097},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := startLazyFS(t, strings.HasPrefix(tc.name, "strict"))
			dir := filepath.Join(l.mnt, "store")
			sent := relaxedCrash(t, dir, tc.before)
			_, err := l.cut()
			require.NoError(t, err)

			st := openStore(t, dir)
			defer func() { require.NoError(t, st.Close()) }()
			q := openQueue(t, st, fifoq.NewManualClock(t0), "q.fifo")
			got := bodies(q)
			// What the real sync covered is there. Of the sends after it, nothing was acknowledged as synced,
			// but Pebble may have synced its log on its own before the cut (a flush of its memtable does, at
			// a moment the load of the machine decides): what is there of them is a prefix, in order.
			require.GreaterOrEqual(t, len(got), tc.before, "what the real sync covered")
			require.Equal(t, fmt.Sprintf("a%04d", tc.before-1), got[tc.before-1])
			kept := got[tc.before:]
			require.Equal(t, []string{"b0", "b1", "b2"}[:len(kept)], kept, "a prefix of the sends after the sync, in order")
			if tc.before == 4097 {
				require.NotEmpty(t, kept, "b0, which began a block, was synced with the block's record")
			}
			for _, b := range []string{"c0", "c1", "c2"} {
				r, err := q.Send(context.Background(), fifoq.Message{Body: b, GroupID: "g", DeduplicationID: b})
				require.NoError(t, err)
				for _, before := range append([]fifoq.SendResult{sent.Before}, sent.After...) {
					require.Greater(t, r.SequenceNumber, before.SequenceNumber, "%s takes a number no send took before the cut", b)
					require.NotEqual(t, before.MessageID, r.MessageID, "%s takes a MessageID no send took before the cut", b)
				}
			}
		})
	}
}

// relaxedCrash runs TestPowerCutRelaxedChild on the store in dir, with n sends before the sync, kills it
// once it has sent, and returns what it sent.
func relaxedCrash(t *testing.T, dir string, n int) relaxedSent {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPowerCutRelaxedChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d %s", relaxedChild, n, dir))
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	line, rerr := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	require.NoError(t, rerr, "the child's stderr: %s", &stderr)
	var sent relaxedSent
	require.NoError(t, json.Unmarshal([]byte(line), &sent), "the child's line %q", line)
	require.Len(t, sent.After, 3)
	return sent
}

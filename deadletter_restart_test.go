package fifoq_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// The crash test once reported a FIFO group delivered past a poison message that had gone to the
// dead-letter queue (and on, by a move task) in a killed process. These tests walk that message's life
// across crashes and restarts, step by step, and check after each that the store holds what the calls
// that returned said: the poison message moved to the dead-letter queue by the receive that returned the
// next message of its group, moved back by a move task as a new message (deduplication id its former
// MessageID), and a retried send of the original (same deduplication id) deduplicated against it.
func TestStorePoisonHeadAcrossRestarts(t *testing.T) {
	ctx := context.Background()
	for _, way := range stWays {
		t.Run(way.name, func(t *testing.T) {
			d := newStDisk(t)
			open := func() (src, dlq *fifoq.Queue) {
				dlq = d.queue("dlq.fifo")
				src = d.queue("src.fifo", fifoq.WithVisibilityTimeout(30*time.Second), fifoq.WithDeadLetterQueue(dlq, 3))
				return src, dlq
			}
			src, _ := open()
			sent := stSend(t, src, "g", "P", "B", "C")
			receive := func(max int, want ...string) []fifoq.Delivery {
				t.Helper()
				ds, err := src.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: max, NoWaitTime: true})
				require.NoError(t, err)
				require.Equal(t, want, stBodies(ds))
				return ds
			}
			for i := 1; i <= 3; i++ {
				ds := receive(1, fmt.Sprintf("P#%d", i))
				require.NoError(t, src.ChangeVisibility(ctx, ds[0].ReceiptHandle, 0))
				if i == 2 { // a restart between the receives of the poison message
					d.restart(way.crash)
					src, _ = open()
				}
			}
			d.clock.Advance(time.Second)
			movedAt := d.clock.Now()
			receive(10, "B#1", "C#1") // P moves to the dead-letter queue; B and C come out
			d.clock.Advance(time.Second)
			d.restart(way.crash)
			src, dlq := open()
			require.Equal(t, []string{"B/in flight/1", "C/in flight/1"}, stState(src))
			var inDLQ []fifoq.Snapshot
			for s := range dlq.Messages() {
				inDLQ = append(inDLQ, s)
			}
			require.Len(t, inDLQ, 1)
			require.Equal(t, "P", inDLQ[0].Body)
			require.Equal(t, sent[0].MessageID, inDLQ[0].MessageID)
			require.Equal(t, sent[0].MessageID, inDLQ[0].DeduplicationID)
			require.Equal(t, 3, inDLQ[0].ReceiveCount)
			require.True(t, inDLQ[0].SentAt.Equal(movedAt), "SentAt %v in the dead-letter queue, moved at %v", inDLQ[0].SentAt, movedAt)

			// A retried send of P, after the restart, is a duplicate of the message now in the dead-letter queue.
			r, err := src.Send(ctx, fifoq.Message{Body: "P", GroupID: "g", DeduplicationID: "P"})
			require.NoError(t, err)
			require.True(t, r.Duplicate)
			require.Equal(t, sent[0].MessageID, r.MessageID)

			// A move task takes P back to the source, as a new message at the group's end.
			task, err := dlq.StartMoveTask(ctx, nil, 0)
			require.NoError(t, err)
			require.NoError(t, task.Wait(ctx))
			require.Equal(t, fifoq.MoveTaskCompleted, task.Status().State)
			d.restart(way.crash)
			src, dlq = open()
			require.Empty(t, stState(dlq))
			var backs []fifoq.Snapshot
			for s := range src.Messages() {
				backs = append(backs, s)
			}
			require.Len(t, backs, 3)
			require.Equal(t, []string{"B", "C", "P"}, []string{backs[0].Body, backs[1].Body, backs[2].Body})
			require.Equal(t, sent[0].MessageID, backs[2].DeduplicationID, "the moved message's deduplication id")
			require.NotEqual(t, sent[0].MessageID, backs[2].MessageID)

			// The original's send retried again, after the move and a restart: still a duplicate.
			r, err = src.Send(ctx, fifoq.Message{Body: "P", GroupID: "g", DeduplicationID: "P"})
			require.NoError(t, err)
			require.True(t, r.Duplicate)
			require.Equal(t, sent[0].MessageID, r.MessageID)
			d.restart(way.crash)
			src, _ = open()
			n := 0
			for s := range src.Messages() {
				if s.Body == "P" {
					n++
					require.NotEqual(t, "P", s.DeduplicationID, "the original came back")
				}
			}
			require.Equal(t, 1, n)
		})
	}
}

// A receive that moves a group's head to the dead-letter queue and returns the next messages, raced by a
// move task of the dead-letter queue whose commit is held: whatever the crash keeps, the head is not in
// the source as it was sent while a later message of its group was returned.
func TestStoreDeadLetterRacingMoveTask(t *testing.T) {
	ctx := context.Background()
	d := newStDisk(t)
	open := func() (src, dlq *fifoq.Queue) {
		dlq = d.queue("dlq.fifo")
		src = d.queue("src.fifo", fifoq.WithVisibilityTimeout(30*time.Second), fifoq.WithDeadLetterQueue(dlq, 1))
		return src, dlq
	}
	src, dlq := open()
	stSend(t, src, "h", "Q")
	ds, err := src.Receive(ctx, fifoq.ReceiveOptions{NoWaitTime: true})
	require.NoError(t, err)
	require.NoError(t, src.ChangeVisibility(ctx, ds[0].ReceiptHandle, 0))
	ds, err = src.Receive(ctx, fifoq.ReceiveOptions{NoWaitTime: true}) // Q moves to the dead-letter queue
	require.NoError(t, err)
	require.Empty(t, ds)

	stSend(t, src, "g", "P", "B")
	ds, err = src.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 1, NoWaitTime: true})
	require.NoError(t, err)
	require.Equal(t, []string{"P#1"}, stBodies(ds))
	require.NoError(t, src.ChangeVisibility(ctx, ds[0].ReceiptHandle, 0))

	d.eng.HoldNextCommit()
	task, err := dlq.StartMoveTask(ctx, nil, 0)
	require.NoError(t, err)
	d.eng.WaitBlocked(1) // Q is out of the dead-letter queue in memory; the source's lock is held by its commit
	got := make(chan []fifoq.Delivery, 1)
	go func() {
		ds, err := src.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10, NoWaitTime: true})
		if err != nil {
			ds = nil
		}
		got <- ds
	}()
	d.eng.ReleaseHeld()
	require.NoError(t, task.Wait(ctx))
	ds = <-got
	require.Equal(t, []string{"B#1", "Q#1"}, stBodies(ds), "P moves, B then Q (moved back) come out")
	d.restart(true)
	src, dlq = open()
	require.Equal(t, []string{"B/in flight/1", "Q/in flight/1"}, stState(src))
	require.Equal(t, []string{"P/visible/1"}, stState(dlq))
}

package fifoq_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/stretchr/testify/require"
)

// Tests of message move tasks, the DLQ redrive (spec 6.9, 5.5; scenarios 48, 49). Helpers are in
// redrive_test.go; every unexported top-level name starts with "rd".

// rdRequireMoveRejected asserts that a rejected StartMoveTask returned no task and changed nothing: no task
// listed, and the DLQ's and the destination's messages as they were.
func rdRequireMoveRejected(t *testing.T, dlq, dest *fifoq.Queue, tk *fifoq.MoveTask, before, destBefore []fifoq.Snapshot) {
	t.Helper()
	require.Nil(t, tk)
	require.Empty(t, dlq.MoveTasks(), "a rejected start lists no task")
	require.Equal(t, before, rdSnaps(dlq), "a rejected start changes nothing in the DLQ")
	if dest != nil {
		require.Equal(t, destBefore, rdSnaps(dest), "a rejected start changes nothing in the destination")
	}
}

// TestMoveTaskStartRejected checks spec 6.9.1, 6.9.2 and scenario 49: the rate is 0..500, the destination
// is of the source's type and not the source, and the source must be some queue's DLQ ("Source queue must
// be configured as a Dead Letter Queue."). Each rejection is a sentinel with its SQS code, and changes
// nothing.
func TestMoveTaskStartRejected(t *testing.T) {
	t.Parallel()
	for _, k := range rdKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) { rdStartRejected(t, k.fifo) })
		})
	}
}

// rdStartRejected is TestMoveTaskStartRejected on one queue type, inside a synctest bubble.
func rdStartRejected(t *testing.T, fifo bool) {
	c := rdBubble{}
	src, dlq := rdPair(t, c, fifo, "reject")
	rdFail(t, src, "m1", "m2")
	dest := rdNew(t, c, rdName("reject-dest", fifo))
	other := rdNew(t, c, rdName("reject-other", !fifo))
	plain := rdNew(t, c, rdName("reject-plain", fifo))
	rdSend(t, plain, "g", "p")
	for _, tc := range []struct {
		name     string
		q        *fifoq.Queue // the source of the task
		dest     *fifoq.Queue
		rate     int
		sentinel *fifoq.Error
		code     string
	}{
		{"6.9.2/rate -1", dlq, nil, -1, fifoq.ErrInvalidMoveTask, "InvalidParameterValue"},
		{"6.9.2/rate 501", dlq, dest, 501, fifoq.ErrInvalidMoveTask, "InvalidParameterValue"},
		{"6.9.1/destination of the other type", dlq, other, 0, fifoq.ErrInvalidMoveTask, "InvalidParameterValue"},
		{"6.9.1/destination is the source", dlq, dlq, 0, fifoq.ErrInvalidMoveTask, "InvalidParameterValue"},
		{"scenario 49/queue with no source", plain, nil, 0, fifoq.ErrNotDeadLetterQueue, "InvalidParameterValue"},
		{"scenario 49/queue with no source, destination given", plain, dest, 10, fifoq.ErrNotDeadLetterQueue, "InvalidParameterValue"},
		{"scenario 49/a source queue is no DLQ", src, dest, 0, fifoq.ErrNotDeadLetterQueue, "InvalidParameterValue"},
	} {
		before, destBefore := rdSnaps(tc.q), []fifoq.Snapshot(nil)
		if tc.dest != nil {
			destBefore = rdSnaps(tc.dest)
		}
		tk, err := tc.q.StartMoveTask(context.Background(), tc.dest, tc.rate)
		rdRequireRejected(t, err, tc.sentinel, tc.code)
		if tc.sentinel == fifoq.ErrNotDeadLetterQueue {
			require.Contains(t, strings.ToLower(err.Error()), "source queue must be configured as a dead letter queue",
				"%s: the SQS message", tc.name)
		}
		dst := tc.dest
		if dst == tc.q {
			dst = nil
		}
		rdRequireMoveRejected(t, tc.q, dst, tk, before, destBefore)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	before := rdSnaps(dlq)
	tk, err := dlq.StartMoveTask(ctx, nil, 0)
	require.ErrorIs(t, err, context.Canceled, "ctx is done")
	rdRequireMoveRejected(t, dlq, nil, tk, before, nil)
	require.Equal(t, 2, rdTotal(dlq))
	require.Zero(t, rdTotal(dest))
	require.Zero(t, rdTotal(other))

	// The limits themselves are accepted.
	for _, rate := range []int{500, 0} {
		tk := rdStartTask(t, dlq, dest, rate)
		require.NoError(t, tk.Wait(context.Background()))
		require.Equal(t, fifoq.MoveTaskCompleted, tk.Status().State, "rate %d", rate)
	}
	require.Equal(t, 2, rdTotal(dest))
}

// TestMoveTaskBackToSourcesScenario48 checks spec 6.9.1 (no destination: each message goes back to the
// queue it came from), 6.9.4 and 5.5 (scenario 48): the moved messages are new messages there (new
// MessageID, send time now, receive count 0, no DeadLetterSource) with the same body, attributes and group,
// oldest first; the task reports COMPLETED with Moved = ToMove.
func TestMoveTaskBackToSourcesScenario48(t *testing.T) {
	t.Parallel()
	for _, k := range rdKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			rdEachClock(t, func(t *testing.T, c rdClock) {
				dlq := rdNew(t, c, rdName("back-dlq", k.fifo))
				a := rdNew(t, c, rdName("back-a", k.fifo), fifoq.WithDeadLetterQueue(dlq, 1), fifoq.WithVisibilityTimeout(0))
				b := rdNew(t, c, rdName("back-b", k.fifo), fifoq.WithDeadLetterQueue(dlq, 1), fifoq.WithVisibilityTimeout(0))
				old := map[string]string{}
				for i, id := range rdFail(t, a, "a1", "a2") {
					old[fmt.Sprintf("a%d", i+1)] = id
				}
				old["b1"] = rdFail(t, b, "b1")[0]
				require.Equal(t, []string{"a1", "a2", "b1"}, rdSnapBodies(dlq))
				c.advance(time.Hour)
				start := c.now()
				tk := rdStartTask(t, dlq, nil, 0)
				c.settle(tk)
				st := tk.Status()
				require.Equal(t, fifoq.MoveTaskStatus{
					State: fifoq.MoveTaskCompleted, Moved: 3, ToMove: 3, Source: dlq.Name(), StartedAt: st.StartedAt,
				}, st)
				rdRequireTime(t, start, st.StartedAt, "StartedAt")
				require.Equal(t, fifoq.Stats{}, dlq.Stats(), "the DLQ is empty")
				require.Equal(t, []string{"a1", "a2"}, rdSnapBodies(a), "back in a, oldest first")
				require.Equal(t, []string{"b1"}, rdSnapBodies(b), "back in b")

				c.advance(time.Second)
				for _, q := range []*fifoq.Queue{a, b} {
					for _, d := range rdRecv(t, q, 10) {
						require.NotEqual(t, old[d.Body], d.MessageID, "5.5: %s is a new message", d.Body)
						require.NotEmpty(t, d.MessageID)
						require.Equal(t, 1, d.ReceiveCount, "5.5: %s's receive count starts again", d.Body)
						require.Empty(t, d.DeadLetterSource)
						rdRequireTime(t, start, d.SentAt, "5.5: SentAt is the move")
						require.Equal(t, "g", d.GroupID)
						require.Equal(t, rdAttrs(), d.Attributes)
					}
				}
				// A new message with a new count: received once above, its next receive moves it to the DLQ
				// again, under its new id.
				require.Empty(t, rdRecv(t, b, 10))
				snaps := rdSnaps(dlq)
				require.Len(t, snaps, 1)
				require.NotEqual(t, old["b1"], snaps[0].MessageID)
				require.Equal(t, b.Name(), snaps[0].DeadLetterSource)
				require.Equal(t, 1, snaps[0].ReceiveCount)
			})
		})
	}
}

// TestMoveTaskRetentionReset checks spec 5.5: a message moved out of a DLQ starts its retention again at the
// move, on both queue types.
func TestMoveTaskRetentionReset(t *testing.T) {
	t.Parallel()
	for _, k := range rdKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			rdEachClock(t, func(t *testing.T, c rdClock) {
				src, dlq := rdPair(t, c, k.fifo, "reset", fifoq.WithRetention(2*time.Minute))
				rdFail(t, src, "m")
				c.advance(90 * time.Second)
				tk := rdStartTask(t, dlq, nil, 0)
				c.settle(tk)
				require.Equal(t, fifoq.MoveTaskCompleted, tk.Status().State)
				require.Equal(t, 1, rdTotal(src))
				c.advance(2*time.Minute - time.Second)
				require.Equal(t, fifoq.Stats{Visible: 1}, src.Stats(), "3m29s after the first send, 1m59s after the move")
				c.advance(time.Second)
				require.Equal(t, fifoq.Stats{}, src.Stats(), "2 minutes after the move")
			})
		})
	}
}

// TestMoveTaskToDestination checks spec 6.9.1 (a destination given) and 6.9.4 (oldest first; no change to
// the messages): every message of the DLQ goes to the destination, which the status names.
func TestMoveTaskToDestination(t *testing.T) {
	t.Parallel()
	for _, k := range rdKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			c := rdNewManual()
			ctx := context.Background()
			dlq := rdNew(t, c, rdName("dest-dlq", k.fifo))
			src := rdNew(t, c, rdName("dest-src", k.fifo), fifoq.WithDeadLetterQueue(dlq, 1), fifoq.WithVisibilityTimeout(0))
			dest := rdNew(t, c, rdName("dest-dest", k.fifo))
			for i := range 12 {
				rdSend(t, src, fmt.Sprintf("g%d", i%3), fmt.Sprintf("m%02d", i))
			}
			for rdTotal(src) > 0 {
				rdRecv(t, src, 10)
			}
			require.Equal(t, 12, rdTotal(dlq))
			tk := rdStartTask(t, dlq, dest, 0)
			require.NoError(t, tk.Wait(ctx))
			st := tk.Status()
			require.Equal(t, fifoq.MoveTaskCompleted, st.State)
			require.Equal(t, 12, st.Moved)
			require.Equal(t, 12, st.ToMove)
			require.Equal(t, dest.Name(), st.Destination)
			require.Equal(t, dlq.Name(), st.Source)
			require.Zero(t, rdTotal(dlq))
			require.Zero(t, rdTotal(src), "nothing went back to the source")
			byGroup := map[string][]string{}
			for s := range dest.Messages() {
				require.Empty(t, s.DeadLetterSource)
				require.Equal(t, 0, s.ReceiveCount)
				require.Equal(t, rdAttrs(), s.Attributes)
				byGroup[s.GroupID] = append(byGroup[s.GroupID], s.Body)
			}
			require.Equal(t, map[string][]string{
				"g0": {"m00", "m03", "m06", "m09"},
				"g1": {"m01", "m04", "m07", "m10"},
				"g2": {"m02", "m05", "m08", "m11"},
			}, byGroup, "oldest first, group order kept")
			if !k.fifo {
				want := make([]string, 12)
				for i := range want {
					want[i] = fmt.Sprintf("m%02d", i)
				}
				require.Equal(t, want, rdSnapBodies(dest), "standard: in send order")
			}
		})
	}
}

// TestMoveTaskOldestFirstAfterReceives checks spec 6.9.4 ("Order: oldest first") on a standard DLQ whose
// messages were received there and became visible again in another order: the task still moves the oldest
// first.
func TestMoveTaskOldestFirstAfterReceives(t *testing.T) {
	t.Parallel()
	rdEachClock(t, func(t *testing.T, c rdClock) {
		ctx := context.Background()
		src, dlq := rdPair(t, c, false, "oldest")
		dest := rdNew(t, c, "oldest-dest")
		rdFail(t, src, "m1", "m2", "m3")
		ds, err := dlq.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10, VisibilityTimeout: time.Minute})
		require.NoError(t, err)
		require.Equal(t, []string{"m1", "m2", "m3"}, rdBodies(ds))
		require.NoError(t, dlq.ChangeVisibility(ctx, ds[2].ReceiptHandle, 0), "m3 is visible again first")
		c.advance(time.Minute)
		require.Equal(t, fifoq.Stats{Visible: 3}, dlq.Stats())
		tk := rdStartTask(t, dlq, dest, 0)
		c.settle(tk)
		require.Equal(t, fifoq.MoveTaskCompleted, tk.Status().State)
		require.Equal(t, []string{"m1", "m2", "m3"}, rdSnapBodies(dest), "oldest first")
	})
}

// TestMoveTaskRateLimit checks spec 6.9.2: a task moves at most rate messages a second, by the queue's
// clock, so it runs inside synctest or on a ManualClock with no real waiting (rate 2 and 6 messages: 2 moved
// at 0s, 4 at 1s, 6 at 2s, and then it is COMPLETED); rate 0 moves everything at once.
func TestMoveTaskRateLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fifo  bool
		rate  int
		n     int
		moved []int // Moved at 0s, 1s, ...
	}{
		{"standard/rate 2/6 messages", false, 2, 6, []int{2, 4, 6}},
		{"fifo/rate 2/6 messages", true, 2, 6, []int{2, 4, 6}},
		{"standard/rate 3/7 messages", false, 3, 7, []int{3, 6, 7}},
		{"fifo/rate 1/3 messages", true, 1, 3, []int{1, 2, 3}},
		{"standard/rate 0/25 messages", false, 0, 25, []int{25}},
		{"fifo/rate 0/25 messages", true, 0, 25, []int{25}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rdEachClock(t, func(t *testing.T, c rdClock) {
				src, dlq := rdPair(t, c, tc.fifo, "rate")
				rdFail(t, src, rdBodyList("m", tc.n)...)
				start := c.now()
				tk := rdStartTask(t, dlq, nil, tc.rate)
				last := len(tc.moved) - 1
				for i, want := range tc.moved {
					c.settle(tk)
					st := tk.Status()
					require.Equal(t, want, st.Moved, "Moved at %ds", i)
					require.Equal(t, tc.n, st.ToMove)
					require.Equal(t, tc.rate, st.Rate)
					rdRequireTime(t, start, st.StartedAt, "StartedAt")
					require.Equal(t, want, rdTotal(src), "in the source at %ds", i)
					require.Equal(t, tc.n-want, rdTotal(dlq), "left in the DLQ at %ds", i)
					if i == last {
						require.Equal(t, fifoq.MoveTaskCompleted, st.State,
							"at %ds all %d messages have moved: the task is over (got %v)", i, tc.n, st.State)
						break
					}
					require.Equal(t, fifoq.MoveTaskRunning, st.State, "at %ds", i)
					c.advance(time.Second - time.Millisecond)
					c.settle(tk)
					require.Equal(t, want, tk.Status().Moved, "not faster than %d a second", tc.rate)
					c.advance(time.Millisecond)
				}
				require.NoError(t, tk.Wait(context.Background()))
				require.Equal(t, []string(nil), rdSnapBodies(dlq))
				require.Equal(t, rdBodyList("m", tc.n), rdSnapBodies(src), "oldest first")
			})
		})
	}
}

// TestMoveTaskCancelScenario48 checks spec 6.9.3 and 6.9.6 (scenario 48): a second start while a task runs
// is refused; Cancel stops a running task (CANCELLING, then CANCELLED), what it moved stays moved, and works
// only while the task runs; another task may start once it has stopped. MoveTasks lists newest first.
func TestMoveTaskCancelScenario48(t *testing.T) {
	t.Parallel()
	for _, k := range rdKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			rdEachClock(t, func(t *testing.T, c rdClock) {
				ctx := context.Background()
				src, dlq := rdPair(t, c, k.fifo, "cancel")
				dest := rdNew(t, c, rdName("cancel-dest", k.fifo))
				rdFail(t, src, "m1", "m2", "m3", "m4")
				tk := rdStartTask(t, dlq, nil, 1)
				c.settle(tk)
				require.Equal(t, fifoq.MoveTaskRunning, tk.Status().State)
				require.Equal(t, 1, tk.Status().Moved)

				for _, d := range []*fifoq.Queue{nil, dest} {
					again, err := dlq.StartMoveTask(ctx, d, 0)
					require.Nil(t, again)
					rdRequireRejected(t, err, fifoq.ErrMoveTaskRunning, "InvalidParameterValue")
				}
				require.Len(t, dlq.MoveTasks(), 1, "the refused start lists no task")
				require.Zero(t, rdTotal(dest))

				require.NoError(t, tk.Cancel())
				require.Contains(t, []fifoq.MoveTaskState{fifoq.MoveTaskCancelling, fifoq.MoveTaskCancelled}, tk.Status().State)
				require.NoError(t, tk.Wait(ctx), "the cancelled task ends with no time passing")
				st := tk.Status()
				require.Equal(t, fifoq.MoveTaskCancelled, st.State)
				require.Equal(t, 1, st.Moved)
				require.Equal(t, 4, st.ToMove)
				c.advance(10 * time.Second)
				require.Equal(t, 1, tk.Status().Moved, "nothing moves after the cancel")
				require.Equal(t, []string{"m1"}, rdSnapBodies(src), "what moved stays moved")
				require.Equal(t, []string{"m2", "m3", "m4"}, rdSnapBodies(dlq))
				err := tk.Cancel()
				rdRequireRejected(t, err, fifoq.ErrMoveTaskNotRunning, "")
				require.Equal(t, fifoq.MoveTaskCancelled, tk.Status().State, "a refused Cancel changes nothing")

				second := rdStartTask(t, dlq, dest, 0)
				c.settle(second)
				st2 := second.Status()
				require.Equal(t, fifoq.MoveTaskCompleted, st2.State)
				require.Equal(t, 3, st2.Moved)
				require.Equal(t, 3, st2.ToMove)
				require.Equal(t, []string{"m2", "m3", "m4"}, rdSnapBodies(dest))
				err = second.Cancel()
				rdRequireRejected(t, err, fifoq.ErrMoveTaskNotRunning, "")
				require.Equal(t, st2, second.Status(), "a refused Cancel changes nothing")

				list := dlq.MoveTasks()
				require.Len(t, list, 2)
				require.Equal(t, st2, list[0], "newest first")
				require.Equal(t, tk.Status(), list[1])
				require.Equal(t, dest.Name(), list[0].Destination)
				require.Empty(t, list[1].Destination)
				require.Equal(t, 1, list[1].Rate)
				require.Equal(t, 0, list[0].Rate)
			})
		})
	}
}

// TestMoveTaskWait checks MoveTask.Wait: it blocks while the task runs, returns ctx's error when ctx is done
// first (the task goes on), and nil once the task has ended.
func TestMoveTaskWait(t *testing.T) {
	t.Parallel()
	rdEachClock(t, func(t *testing.T, c rdClock) {
		src, dlq := rdPair(t, c, false, "wait")
		rdFail(t, src, "m1", "m2", "m3")
		tk := rdStartTask(t, dlq, nil, 1)
		c.settle(tk)

		ctx, cancel := context.WithCancel(context.Background())
		early := make(chan error, 1)
		go func() { early <- tk.Wait(ctx) }()
		cancel()
		require.ErrorIs(t, <-early, context.Canceled)
		require.Equal(t, fifoq.MoveTaskRunning, tk.Status().State, "the task goes on")

		waited := make(chan error, 1)
		go func() { waited <- tk.Wait(context.Background()) }()
		for range 10 {
			if tk.Status().State != fifoq.MoveTaskRunning {
				break
			}
			select {
			case err := <-waited:
				require.FailNow(t, "Wait returned while the task runs", "%v, %+v", err, tk.Status())
			default:
			}
			c.advance(time.Second)
			c.settle(tk)
		}
		require.Equal(t, fifoq.MoveTaskCompleted, tk.Status().State)
		require.NoError(t, <-waited)
		require.NoError(t, tk.Wait(context.Background()), "after the end")

		require.Equal(t, 3, rdTotal(src))
	})
}

// TestMoveTaskWaitAfterEnd checks MoveTask.Wait on a task that has ended: it does not block, and reports the
// end (nil) even when ctx is done too, every time, not ctx's error at random.
func TestMoveTaskWaitAfterEnd(t *testing.T) {
	t.Parallel()
	c := rdNewManual()
	src, dlq := rdPair(t, c, false, "wait-end")
	rdFail(t, src, "m1")
	tk := rdStartTask(t, dlq, nil, 0)
	require.NoError(t, tk.Wait(context.Background()))
	require.Equal(t, fifoq.MoveTaskCompleted, tk.Status().State)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 20 {
		require.NoError(t, tk.Wait(done), "call %d: the task has ended, so Wait says so, even with ctx done", i)
	}
}

// TestMoveTaskToMove checks spec 6.9.7: ToMove is the number of visible messages when the task starts; a
// message in flight in the DLQ is not moved, nor one that arrives while the task runs.
func TestMoveTaskToMove(t *testing.T) {
	t.Parallel()
	rdEachClock(t, func(t *testing.T, c rdClock) {
		ctx := context.Background()
		src, dlq := rdPair(t, c, false, "tomove")
		src2 := rdNew(t, c, "tomove-src2", fifoq.WithDeadLetterQueue(dlq, 1), fifoq.WithVisibilityTimeout(0))
		rdFail(t, src, "m1", "m2", "m3")
		ds, err := dlq.Receive(ctx, fifoq.ReceiveOptions{VisibilityTimeout: time.Hour})
		require.NoError(t, err)
		require.Equal(t, []string{"m1"}, rdBodies(ds))
		tk := rdStartTask(t, dlq, nil, 1)
		c.settle(tk)
		require.Equal(t, 2, tk.Status().ToMove, "m1 is in flight")
		require.Equal(t, 1, tk.Status().Moved)
		rdFail(t, src2, "late") // moved into the DLQ after the start
		for range 5 {
			if tk.Status().State != fifoq.MoveTaskRunning {
				break
			}
			c.advance(time.Second)
			c.settle(tk)
		}
		st := tk.Status()
		require.Equal(t, fifoq.MoveTaskCompleted, st.State)
		require.Equal(t, 2, st.Moved)
		require.Equal(t, 2, st.ToMove)
		require.ElementsMatch(t, []string{"m1", "late"}, rdSnapBodies(dlq))
		require.Equal(t, fifoq.Stats{Visible: 1, InFlight: 1}, dlq.Stats())
		require.ElementsMatch(t, []string{"m2", "m3"}, rdSnapBodies(src))
	})
}

// TestMoveTaskFailed checks the FAILED state of spec 6.9.7: a message sent to the DLQ directly has no source
// to go back to, and a message larger than its destination's maximum size cannot go there. The task moves
// the messages before it, then fails with a Failure reason; the message stays in the DLQ, with the rest.
func TestMoveTaskFailed(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 2000)
	for _, k := range rdKinds {
		for _, tc := range []struct {
			name     string
			toSource bool // dest nil
		}{
			{"no source to return to", true},
			{"too large for the destination", false},
		} {
			t.Run(k.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				rdEachClock(t, func(t *testing.T, c rdClock) {
					ctx := context.Background()
					src, dlq := rdPair(t, c, k.fifo, "failed")
					dest := rdNew(t, c, rdName("failed-dest", k.fifo), fifoq.WithMaxMessageSize(1024))
					first := "first"
					if !tc.toSource {
						first = strings.Repeat("a", 1024-rdAttrsSize) // exactly the destination's limit: it moves
					}
					rdFail(t, src, first)
					var badID string
					if tc.toSource {
						badID = rdSend(t, dlq, "g", "direct").MessageID // sent to the DLQ itself
					} else {
						badID = rdFail(t, src, big)[0]
					}
					rdFail(t, src, "last")
					require.Equal(t, 3, rdTotal(dlq))
					target := dest
					if tc.toSource {
						target = nil
					}
					tk := rdStartTask(t, dlq, target, 0)
					c.settle(tk)
					st := tk.Status()
					require.Equal(t, fifoq.MoveTaskFailed, st.State, "%+v", st)
					require.NotEmpty(t, st.Failure)
					require.Equal(t, 1, st.Moved, "the message before the bad one moved")
					require.Equal(t, 3, st.ToMove)
					require.NoError(t, tk.Wait(ctx))
					rdRequireRejected(t, tk.Cancel(), fifoq.ErrMoveTaskNotRunning, "")
					require.Equal(t, st, dlq.MoveTasks()[0])

					got := rdTotal(src) + rdTotal(dest)
					require.Equal(t, 1, got, "one message moved")
					require.Equal(t, fifoq.Stats{Visible: 2}, dlq.Stats(), "the bad message and the one after it stay, visible")
					found := false
					for s := range dlq.Messages() {
						if s.MessageID == badID {
							found = true
						}
					}
					require.True(t, found, "the bad message stays in the DLQ with its MessageID")
				})
			})
		}
	}
}

// TestMoveTaskConcurrentUse checks spec 6.9.4 under the race detector: a rate-limited task moving into a
// queue that producers send to and consumers long-poll, receive and delete from loses and duplicates nothing
// (conservation), and every goroutine, the task's included, ends (synctest.Test fails otherwise).
func TestMoveTaskConcurrentUse(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel) // ends the producer and the consumers if the test fails first
		c := rdBubble{}
		src, dlq := rdPair(t, c, false, "conc")
		dest := rdNew(t, c, "conc-dest")
		moved := rdBodyList("moved", 60)
		rdFail(t, src, moved...)
		tk := rdStartTask(t, dlq, dest, 10)

		var (
			mu   sync.Mutex
			seen = map[string]int{}
			wg   sync.WaitGroup
			errs = make(chan error, 10)
		)
		wg.Go(func() {
			for i := range 20 {
				if _, err := dest.Send(ctx, fifoq.Message{Body: fmt.Sprintf("direct%d", i)}); err != nil {
					errs <- err
					return
				}
				select {
				case <-time.After(250 * time.Millisecond):
				case <-ctx.Done():
					return
				}
			}
		})
		for range 3 {
			wg.Go(func() {
				for {
					ds, err := dest.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 4, WaitTime: 20 * time.Second})
					if err != nil {
						errs <- err
						return
					}
					if len(ds) == 0 {
						return
					}
					for _, d := range ds {
						mu.Lock()
						seen[d.Body]++
						mu.Unlock()
						if err := dest.Delete(ctx, d.ReceiptHandle); err != nil {
							errs <- err
							return
						}
					}
				}
			})
		}
		require.NoError(t, tk.Wait(ctx))
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		st := tk.Status()
		require.Equal(t, fifoq.MoveTaskCompleted, st.State)
		require.Equal(t, 60, st.Moved)
		require.Len(t, seen, 80)
		for b, n := range seen {
			require.Equal(t, 1, n, "%s received once", b)
		}
		require.Zero(t, rdTotal(dlq))
		require.Zero(t, rdTotal(dest))
	})
}

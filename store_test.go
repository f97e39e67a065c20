package fifoq_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/storage/storagetest"
	"github.com/stretchr/testify/require"
)

// The durable queue's own rules, on the in-memory engine of storage/storagetest, whose crashes lose what was not
// synced and whose commits and syncs fail on demand. (The whole suite also runs on durable queues: see
// main_test.go; and the state machine restarts its store: model_restart_test.go.)

// stDisk is a disk and the store open on it now, with a clock that runs on while the store is down.
type stDisk struct {
	t     *testing.T
	disk  *storagetest.Disk
	eng   *storagetest.Memory
	st    *fifoq.Store
	clock *fifoq.ManualClock
}

func newStDisk(t *testing.T) *stDisk {
	d := &stDisk{t: t, disk: storagetest.NewDisk(), clock: fifoq.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	d.open()
	return d
}

// open opens the store on the disk.
func (d *stDisk) open() *fifoq.Store {
	d.t.Helper()
	eng, err := d.disk.Open()
	require.NoError(d.t, err)
	st, err := fifoq.OpenStore(eng, "disk")
	require.NoError(d.t, err)
	d.eng, d.st = eng, st
	return d.st
}

// restart closes the store, or crashes it, and opens it again.
func (d *stDisk) restart(crash bool) {
	d.t.Helper()
	if crash {
		d.eng.Crash()
	} else {
		require.NoError(d.t, d.st.Close())
	}
	d.open()
}

// queue opens the queue of that name in the store, on the disk's clock.
func (d *stDisk) queue(name string, opts ...fifoq.Option) *fifoq.Queue {
	d.t.Helper()
	q, err := fifoq.New(name, append([]fifoq.Option{fifoq.WithStore(d.st), fifoq.WithClock(d.clock)}, opts...)...)
	require.NoError(d.t, err, "New(%s)", name)
	return q
}

// stState lists the stored messages as body/state/receive count.
func stState(q *fifoq.Queue) []string {
	var out []string
	for m := range q.Messages() {
		out = append(out, fmt.Sprintf("%s/%v/%d", m.Body, m.State, m.ReceiveCount))
	}
	return out
}

func stSend(t *testing.T, q *fifoq.Queue, group string, bodies ...string) []fifoq.SendResult {
	t.Helper()
	var out []fifoq.SendResult
	for _, b := range bodies {
		m := fifoq.Message{Body: b}
		if q.FIFO() {
			m.GroupID, m.DeduplicationID = group, b
		}
		r, err := q.Send(context.Background(), m)
		require.NoError(t, err, "Send(%s)", b)
		out = append(out, r)
	}
	return out
}

func stBodies(ds []fifoq.Delivery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, fmt.Sprintf("%s#%d", d.Body, d.ReceiveCount))
	}
	return out
}

var stWays = []struct {
	name  string
	crash bool
}{{"close", false}, {"crash", true}}

// A restart keeps every message as it was: states, receive counts, group order, receipt handles,
// MessageIDs, and deduplication ids; the clock runs on while the store is down.
func TestStoreRestartKeepsMessages(t *testing.T) {
	ctx := context.Background()
	for _, way := range stWays {
		t.Run(way.name, func(t *testing.T) {
			d := newStDisk(t)
			opts := []fifoq.Option{fifoq.WithVisibilityTimeout(30 * time.Second)}
			q := d.queue("orders.fifo", opts...)
			sent := stSend(t, q, "g", "a", "b", "c")
			stSend(t, q, "h", "x")
			ds, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 2}) // a, b of g: g is blocked
			require.NoError(t, err)
			require.Equal(t, []string{"a#1", "b#1"}, stBodies(ds))
			before := stState(q)

			d.restart(way.crash)
			d.clock.Advance(10 * time.Second) // while it was down
			q = d.queue("orders.fifo", opts...)
			require.Equal(t, before, stState(q), "messages after the restart")
			require.Equal(t, fifoq.Stats{Visible: 2, InFlight: 2}, q.Stats())

			// g stays blocked behind its in-flight head; h is served.
			got, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10})
			require.NoError(t, err)
			require.Equal(t, []string{"x#1"}, stBodies(got), "receive while a and b are in flight")

			// A receipt handle from before the restart still works.
			require.NoError(t, q.Delete(ctx, ds[0].ReceiptHandle), "delete a by its old handle")
			require.NoError(t, q.ChangeVisibility(ctx, ds[1].ReceiptHandle, 0), "give b back by its old handle")
			got, err = q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10})
			require.NoError(t, err)
			require.Equal(t, []string{"b#2", "c#1"}, stBodies(got), "g after a was deleted")
			require.Equal(t, sent[1].MessageID, got[0].MessageID, "b's MessageID")
			require.Equal(t, sent[1].SequenceNumber, got[0].SequenceNumber, "b's sequence number")

			// The deduplication id of a is remembered for its 5 minutes, across the restart.
			r, err := q.Send(ctx, fifoq.Message{Body: "a", GroupID: "g", DeduplicationID: "a"})
			require.NoError(t, err)
			require.True(t, r.Duplicate, "a sent again 10 s after its first send")
			require.Equal(t, sent[0].MessageID, r.MessageID)
		})
	}
}

// Visibility timeouts, delays and retention run on while the store is down, by the clock's absolute time.
func TestStoreTimeRunsWhileDown(t *testing.T) {
	ctx := context.Background()
	d := newStDisk(t)
	opts := []fifoq.Option{fifoq.WithVisibilityTimeout(time.Minute), fifoq.WithRetention(10 * time.Minute)}
	q := d.queue("jobs", opts...)
	_, err := q.Send(ctx, fifoq.Message{Body: "old"})
	require.NoError(t, err)
	d.clock.Advance(5 * time.Minute)
	_, err = q.Send(ctx, fifoq.Message{Body: "timer", Delay: 3 * time.Minute})
	require.NoError(t, err)
	_, err = q.Send(ctx, fifoq.Message{Body: "new"})
	require.NoError(t, err)
	ds, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"old#1", "new#1"}, stBodies(ds))
	require.NoError(t, d.st.Close())

	d.clock.Advance(2 * time.Minute) // the receives' visibility ended
	d.open()
	q = d.queue("jobs", opts...)
	require.Equal(t, fifoq.Stats{Visible: 2, Delayed: 1}, q.Stats(), "after 2 minutes: %v", stState(q))
	require.NoError(t, d.st.Close())

	d.clock.Advance(4 * time.Minute) // old is past its 10 minutes; timer's delay ended
	d.open()
	q = d.queue("jobs", opts...)
	require.Equal(t, []string{"timer/visible/0", "new/visible/1"}, stState(q))
}

// Sequence numbers and MessageIDs are never given out twice, even when the messages that had the last
// ones are gone before a restart.
func TestStoreSequenceNumbersAfterRestart(t *testing.T) {
	ctx := context.Background()
	for _, way := range stWays {
		t.Run(way.name, func(t *testing.T) {
			d := newStDisk(t)
			q := d.queue("seq.fifo")
			first := stSend(t, q, "g", "1", "2", "3")
			require.NoError(t, q.Purge(ctx))
			d.restart(way.crash)
			q = d.queue("seq.fifo")
			again := stSend(t, q, "g", "4")
			require.Greater(t, again[0].SequenceNumber, first[2].SequenceNumber)
			for _, r := range first {
				require.NotEqual(t, r.MessageID, again[0].MessageID)
			}
		})
	}
}

// The 60 seconds between purges hold across a restart, and deduplication ids end after 5 minutes.
func TestStorePurgeAndDedupAcrossRestart(t *testing.T) {
	ctx := context.Background()
	d := newStDisk(t)
	q := d.queue("p.fifo")
	stSend(t, q, "g", "a")
	require.NoError(t, q.Purge(ctx))
	stSend(t, q, "g", "b")
	d.restart(true)
	q = d.queue("p.fifo")
	require.ErrorIs(t, q.Purge(ctx), fifoq.ErrPurgeInProgress, "a purge 0 s after the last one")
	d.clock.Advance(5 * time.Minute)
	r, err := q.Send(ctx, fifoq.Message{Body: "b", GroupID: "g", DeduplicationID: "b"})
	require.NoError(t, err)
	require.False(t, r.Duplicate, "b's deduplication id 5 minutes later")
	require.NoError(t, q.Purge(ctx))
}

// A receive request attempt id can be retried after a restart, within its 5 minutes.
func TestStoreAttemptIDAcrossRestart(t *testing.T) {
	ctx := context.Background()
	d := newStDisk(t)
	q := d.queue("a.fifo")
	stSend(t, q, "g", "a", "b")
	first, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10, AttemptID: "try-1"})
	require.NoError(t, err)
	d.restart(true)
	d.clock.Advance(time.Minute)
	q = d.queue("a.fifo")
	again, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10, AttemptID: "try-1"})
	require.NoError(t, err)
	require.Equal(t, first, again, "the retry returns the same messages and receipt handles")
}

// A message moved to a dead-letter queue stays there with its origin across a restart, and a move task
// started after the restart returns it to its source, which it finds by name.
func TestStoreDeadLetterAcrossRestart(t *testing.T) {
	ctx := context.Background()
	for _, fifo := range []bool{false, true} {
		t.Run(fmt.Sprint("fifo=", fifo), func(t *testing.T) {
			name, dlqName := "src", "dlq"
			if fifo {
				name, dlqName = "src.fifo", "dlq.fifo"
			}
			d := newStDisk(t)
			dlq := d.queue(dlqName)
			srcOpts := func(dlq *fifoq.Queue) []fifoq.Option {
				return []fifoq.Option{fifoq.WithVisibilityTimeout(0), fifoq.WithDeadLetterQueue(dlq, 1)}
			}
			q := d.queue(name, srcOpts(dlq)...)
			sent := stSend(t, q, "g", "poison", "fine")
			ds, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 1})
			require.NoError(t, err)
			require.Equal(t, []string{"poison#1"}, stBodies(ds))
			ds, err = q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10}) // poison moves; fine comes
			require.NoError(t, err)
			require.Equal(t, []string{"fine#1"}, stBodies(ds))

			d.restart(true)
			// Without its source open, the dead-letter queue cannot send the message back.
			dlq = d.queue(dlqName)
			require.Equal(t, []string{"poison/visible/1"}, stState(dlq))
			for m := range dlq.Messages() {
				require.Equal(t, name, m.DeadLetterSource)
				require.Equal(t, sent[0].MessageID, m.MessageID)
			}
			q = d.queue(name, srcOpts(dlq)...)
			task, err := dlq.StartMoveTask(ctx, nil, 0)
			require.NoError(t, err)
			require.NoError(t, task.Wait(ctx))
			require.Equal(t, fifoq.MoveTaskCompleted, task.Status().State, "%+v", task.Status())
			require.Empty(t, stState(dlq))
			require.Equal(t, []string{"fine/visible/1", "poison/visible/0"}, stState(q))

			d.restart(true)
			dlq = d.queue(dlqName)
			q = d.queue(name, srcOpts(dlq)...)
			require.Empty(t, stState(dlq), "after the move and a crash")
			require.Equal(t, []string{"fine/visible/1", "poison/visible/0"}, stState(q), "after the move and a crash")
		})
	}
}

// A move task whose dead-letter queue holds a message of a source that is not open fails, naming it, and
// leaves the message where it is.
func TestStoreMoveTaskSourceNotOpen(t *testing.T) {
	ctx := context.Background()
	d := newStDisk(t)
	dlq := d.queue("dlq")
	q := d.queue("src", fifoq.WithVisibilityTimeout(0), fifoq.WithDeadLetterQueue(dlq, 1))
	stSend(t, q, "", "poison")
	for range 2 {
		_, err := q.Receive(ctx, fifoq.ReceiveOptions{})
		require.NoError(t, err)
	}
	d.restart(false)
	dlq = d.queue("dlq")
	d.queue("other", fifoq.WithDeadLetterQueue(dlq, 1)) // so that dlq is a dead-letter queue
	task, err := dlq.StartMoveTask(ctx, nil, 0)
	require.NoError(t, err)
	require.NoError(t, task.Wait(ctx))
	st := task.Status()
	require.Equal(t, fifoq.MoveTaskFailed, st.State)
	require.Contains(t, st.Failure, "came from src, which is not open")
	require.Equal(t, []string{"poison/visible/1"}, stState(dlq))
}

// A failed write or sync fails the call, and the store for good: every later change of every queue in it
// returns ErrStoreFailed, while Stats and Messages go on. Opening it again recovers what was durable.
func TestStoreFailStop(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("no space left on device")
	for _, fault := range []string{"commit", "sync"} {
		t.Run(fault, func(t *testing.T) {
			d := newStDisk(t)
			q := d.queue("q")
			other := d.queue("other")
			stSend(t, q, "", "kept")
			if fault == "commit" {
				d.eng.FailNextCommit(boom)
			} else {
				d.eng.FailNextSync(boom)
			}
			_, err := q.Send(ctx, fifoq.Message{Body: "lost"})
			require.ErrorIs(t, err, fifoq.ErrStoreFailed)
			require.ErrorIs(t, err, boom, "the engine's error is wrapped")

			_, err = other.Send(ctx, fifoq.Message{Body: "refused"})
			require.ErrorIs(t, err, fifoq.ErrStoreFailed, "another queue of the failed store")
			_, err = q.Receive(ctx, fifoq.ReceiveOptions{})
			require.ErrorIs(t, err, fifoq.ErrStoreFailed, "a receive changes receive counts: refused")
			require.ErrorIs(t, q.Purge(ctx), fifoq.ErrStoreFailed)
			require.ErrorIs(t, q.SetAttributes(q.Attributes()), fifoq.ErrStoreFailed)
			_, err = fifoq.New("new", fifoq.WithStore(d.st))
			require.ErrorIs(t, err, fifoq.ErrStoreFailed)
			require.Equal(t, 0, other.Stats().Visible, "reads go on")
			require.NotEmpty(t, stState(q), "reads go on")

			d.restart(true)
			q = d.queue("q")
			require.Equal(t, []string{"kept/visible/0"}, stState(q), "what was durable")
			stSend(t, q, "", "after")
		})
	}
}

// Concurrent callers share syncs: while one sync runs, the others commit and wait, and one sync makes them
// all durable.
func TestStoreGroupCommit(t *testing.T) {
	ctx := context.Background()
	d := newStDisk(t)
	q := d.queue("q")
	before := d.eng.Syncs()
	d.eng.PauseSyncs()
	const n = 32
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			_, err := q.Send(ctx, fifoq.Message{Body: fmt.Sprint(i)})
			errs <- err
		})
	}
	d.eng.WaitBlocked(n) // every send has committed and waits for the disk
	d.eng.ResumeSyncs()
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.LessOrEqual(t, d.eng.Syncs()-before, 2, "syncs for %d concurrent sends", n)
	d.restart(true)
	require.Equal(t, n, d.queue("q").Stats().Visible)
}

// A change is visible to other callers before it is durable, never reported done before: when the process
// dies in between, the caller that made it and a caller that saw it both fail, and it is gone.
func TestStoreVisibleBeforeDurable(t *testing.T) {
	ctx := context.Background()
	d := newStDisk(t)
	q := d.queue("q")
	d.eng.PauseSyncs()
	sendErr := make(chan error, 1)
	go func() {
		_, err := q.Send(ctx, fifoq.Message{Body: "unsure"})
		sendErr <- err
	}()
	d.eng.WaitBlocked(1)
	require.Equal(t, 1, q.Stats().Visible, "the send is visible while it syncs")
	recvErr := make(chan error, 1)
	go func() {
		_, err := q.Receive(ctx, fifoq.ReceiveOptions{})
		recvErr <- err
	}()
	d.eng.WaitBlocked(2)
	require.Equal(t, 1, q.Stats().InFlight, "received while its send syncs")
	d.eng.Crash()
	d.eng.ResumeSyncs()
	require.ErrorIs(t, <-sendErr, fifoq.ErrStoreFailed, "the send was not durable")
	require.ErrorIs(t, <-recvErr, fifoq.ErrStoreFailed, "the receive was not durable")
	d.open()
	require.Empty(t, stState(d.queue("q")))
}

// One store holds one Queue per name; a store refuses what would mix queues of two stores.
func TestStoreQueueNames(t *testing.T) {
	ctx := context.Background()
	d := newStDisk(t)
	q := d.queue("q")
	_, err := fifoq.New("q", fifoq.WithStore(d.st))
	require.ErrorIs(t, err, fifoq.ErrQueueOpen)
	d.queue("r")
	require.Equal(t, []string{"q", "r"}, d.st.Queues())

	other := newStDisk(t)
	_, err = fifoq.New("s", fifoq.WithStore(other.st), fifoq.WithDeadLetterQueue(q, 1))
	require.ErrorIs(t, err, fifoq.ErrInvalidRedrivePolicy, "a dead-letter queue in another store")
	mem, err := fifoq.New("mem")
	require.NoError(t, err)
	_, err = fifoq.New("s", fifoq.WithStore(d.st), fifoq.WithDeadLetterQueue(mem, 1))
	require.ErrorIs(t, err, fifoq.ErrInvalidRedrivePolicy, "a dead-letter queue in memory")
	src := d.queue("src", fifoq.WithDeadLetterQueue(q, 1))
	_, err = q.StartMoveTask(ctx, mem, 0)
	require.ErrorIs(t, err, fifoq.ErrInvalidMoveTask, "a destination in memory")
	_ = src
}

// DeleteQueue removes a queue and its messages; its Queue refuses changes from then on; a dead-letter
// queue in use cannot be deleted.
func TestStoreDeleteQueue(t *testing.T) {
	ctx := context.Background()
	d := newStDisk(t)
	dlq := d.queue("dlq")
	q := d.queue("q", fifoq.WithDeadLetterQueue(dlq, 1))
	stSend(t, q, "", "a", "b")
	require.ErrorIs(t, d.st.DeleteQueue("dlq"), fifoq.ErrQueueInUse)
	require.NoError(t, d.st.DeleteQueue("q"))
	_, err := q.Send(ctx, fifoq.Message{Body: "c"})
	require.ErrorIs(t, err, fifoq.ErrQueueDeleted)
	require.Equal(t, []string{"dlq"}, d.st.Queues())
	require.NoError(t, d.st.DeleteQueue("q"), "deleting a queue that is not there")

	d.restart(true)
	require.Equal(t, []string{"dlq"}, d.st.Queues(), "after a crash")
	require.Empty(t, stState(d.queue("q")), "a new queue of the same name is empty")
}

// A deleted dead-letter queue cannot become a queue's dead-letter queue again; a deleted source leaves its
// dead-letter queue free to be deleted in turn.
func TestStoreDeleteQueueRedrive(t *testing.T) {
	d := newStDisk(t)
	dlq := d.queue("dlq")
	require.NoError(t, d.st.DeleteQueue("dlq"))
	_, err := fifoq.New("src", fifoq.WithStore(d.st), fifoq.WithDeadLetterQueue(dlq, 1))
	require.ErrorIs(t, err, fifoq.ErrInvalidRedrivePolicy, "a deleted dead-letter queue")
	other := d.queue("other")
	a := other.Attributes()
	a.DeadLetterQueue, a.MaxReceiveCount = dlq, 1
	require.ErrorIs(t, other.SetAttributes(a), fifoq.ErrInvalidRedrivePolicy, "a deleted dead-letter queue")

	dlq = d.queue("dlq")
	d.queue("src", fifoq.WithDeadLetterQueue(dlq, 1))
	require.ErrorIs(t, d.st.DeleteQueue("dlq"), fifoq.ErrQueueInUse)
	require.NoError(t, d.st.DeleteQueue("src"))
	require.NoError(t, d.st.DeleteQueue("dlq"), "its only source is deleted")
	require.Equal(t, []string{"other"}, d.st.Queues())
}

// A new queue may get the id of a queue deleted before a restart: nothing stored under that id may become
// the new queue's. (Here a record is left there by hand, as a bug or a crash between two writes could.)
func TestStoreReusedID(t *testing.T) {
	d := newStDisk(t)
	stSend(t, d.queue("old"), "", "left")
	require.NoError(t, d.st.Close())
	eng, err := d.disk.Open()
	require.NoError(t, err)
	b := eng.NewBatch()
	b.Delete(append([]byte{0x01}, "old"...)) // its catalog record only: its message stays under its id
	tk, err := eng.Commit(b, true)
	require.NoError(t, err)
	require.NoError(t, tk.Wait())
	require.NoError(t, eng.Close())

	d.open()
	require.Empty(t, stState(d.queue("new")), "a new queue, with the old one's id")
	d.restart(false)
	require.Empty(t, stState(d.queue("new")), "after a restart")
}

// A move task whose destination is deleted while it runs loses no message: each one is at its destination
// or still in the dead-letter queue, in memory as on disk.
func TestStoreMoveTaskDestinationDeleted(t *testing.T) {
	ctx := context.Background()
	for range 20 {
		d := newStDisk(t)
		dlq := d.queue("dlq")
		src := d.queue("src", fifoq.WithVisibilityTimeout(0), fifoq.WithDeadLetterQueue(dlq, 1))
		const n = 200
		for i := range n {
			stSend(t, src, "", fmt.Sprint(i))
		}
		for range n / 10 * 2 {
			_, err := src.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10})
			require.NoError(t, err)
		}
		require.Equal(t, n, dlq.Stats().Visible)
		dest := d.queue("dest")
		task, err := dlq.StartMoveTask(ctx, dest, 0)
		require.NoError(t, err)
		for task.Status().Moved < n/2 && task.Status().State == fifoq.MoveTaskRunning {
			runtime.Gosched() // delete it mid-task
		}
		require.NoError(t, d.st.DeleteQueue("dest"))
		require.NoError(t, task.Wait(ctx))
		moved := task.Status().Moved
		require.Equal(t, n-moved, dlq.Stats().Visible, "in the dead-letter queue in memory: %+v", task.Status())
		d.restart(true)
		require.Equal(t, n-moved, d.queue("dlq").Stats().Visible, "in the dead-letter queue on disk: %+v", task.Status())
	}
}

// Close makes everything durable and can be called twice; the queues refuse changes after it.
func TestStoreClose(t *testing.T) {
	ctx := context.Background()
	d := newStDisk(t)
	q := d.queue("q")
	stSend(t, q, "", "a")
	require.NoError(t, d.st.Close())
	require.NoError(t, d.st.Close(), "a second Close")
	_, err := q.Send(ctx, fifoq.Message{Body: "b"})
	require.ErrorIs(t, err, fifoq.ErrStoreClosed)
	require.Equal(t, fifoq.Stats{Visible: 1}, q.Stats(), "reads go on")
	d.open()
	require.Equal(t, []string{"a/visible/0"}, stState(d.queue("q")))
}

// A record that does not decode makes New fail with ErrStoreCorrupt naming the queue and the record, rather
// than open the queue without it.
func TestStoreCorruptRecord(t *testing.T) {
	d := newStDisk(t)
	q := d.queue("q.fifo")
	stSend(t, q, "g", "a", "b")
	require.NoError(t, d.st.Close())
	eng, err := d.disk.Open()
	require.NoError(t, err)
	var key []byte
	require.NoError(t, eng.Scan([]byte{2}, []byte{3}, func(k, v []byte) error {
		if key == nil && len(k) == 15 && k[5] == 'm' {
			key = append([]byte{}, k...)
		}
		return nil
	}))
	require.NotNil(t, key, "a message record")
	b := eng.NewBatch()
	b.Set(key, []byte{1, 0, 0xff})
	tk, err := eng.Commit(b, true)
	require.NoError(t, err)
	require.NoError(t, tk.Wait())
	require.NoError(t, eng.Close())

	d.open()
	_, err = fifoq.New("q.fifo", fifoq.WithStore(d.st))
	require.ErrorIs(t, err, fifoq.ErrStoreCorrupt)
	require.ErrorContains(t, err, "queue q.fifo")
	require.ErrorContains(t, err, "message 1")
	_, err = fifoq.New("q.fifo", fifoq.WithStore(d.st))
	require.ErrorIs(t, err, fifoq.ErrStoreCorrupt, "the name is free again after a failed open")
}

// Recovery decodes records on one goroutine and rebuilds the queue on another, in chunks: whichever stage
// meets it, the error reported is the first in the store's order, and a receipt whose message is gone is
// dropped without being decoded.
func TestStoreRecoveryErrorsInOrder(t *testing.T) {
	const n = 1000 // messages: several chunks of records
	// Each case damages the stored records of a queue of n messages (1..n), and wants New to fail naming
	// want, or to succeed when want is "".
	for _, tc := range []struct {
		name   string
		damage func(set func(seq uint64, part byte, v []byte), body func(seq uint64) []byte)
		want   string
	}{
		{"a body that does not decode, then another", func(set func(uint64, byte, []byte), _ func(uint64) []byte) {
			set(300, 0, []byte{1, 0, 0xff})
			set(700, 0, []byte{1, 0, 0xff})
		}, "message 300:"},
		{"two messages in one slot, then a body that does not decode", func(set func(uint64, byte, []byte), body func(uint64) []byte) {
			set(401, 0, body(400)) // decodes, but takes message 400's slot: found when the queue is rebuilt
			set(700, 0, []byte{1, 0, 0xff})
		}, "messages 400 and 401 in one slot"},
		{"a receipt that does not decode, of a message there", func(set func(uint64, byte, []byte), _ func(uint64) []byte) {
			set(500, 1, []byte{1, 0xff})
			set(800, 0, []byte{1, 0, 0xff})
		}, "receipt of message 500"},
		{"a receipt that does not decode, of a message gone", func(set func(uint64, byte, []byte), _ func(uint64) []byte) {
			set(n+5, 1, []byte{1, 0xff})
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newStDisk(t)
			q := d.queue("q.fifo")
			bodies := make([]string, n)
			for i := range bodies {
				bodies[i] = fmt.Sprintf("m%d", i+1)
			}
			stSend(t, q, "g", bodies...)
			require.NoError(t, d.st.Close())
			eng, err := d.disk.Open()
			require.NoError(t, err)
			var prefix []byte // of the queue's message keys
			values := map[uint64][]byte{}
			require.NoError(t, eng.Scan([]byte{2}, []byte{3}, func(k, v []byte) error {
				if len(k) == 15 && k[5] == 'm' {
					prefix = append(prefix[:0], k[:6]...)
					values[binary.BigEndian.Uint64(k[6:14])] = append([]byte{}, v...)
				}
				return nil
			}))
			require.Len(t, values, n)
			b := eng.NewBatch()
			tc.damage(func(seq uint64, part byte, v []byte) {
				b.Set(append(binary.BigEndian.AppendUint64(append([]byte{}, prefix...), seq), part), v)
			}, func(seq uint64) []byte { return values[seq] })
			tk, err := eng.Commit(b, true)
			require.NoError(t, err)
			require.NoError(t, tk.Wait())
			require.NoError(t, eng.Close())

			d.open()
			q, err = fifoq.New("q.fifo", fifoq.WithStore(d.st), fifoq.WithClock(d.clock))
			if tc.want == "" {
				require.NoError(t, err)
				require.Equal(t, n, q.Stats().Visible)
				return
			}
			require.ErrorIs(t, err, fifoq.ErrStoreCorrupt)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// A move task takes messages out of the dead-letter queue in memory, then records their removal in the batch
// that stores them at their destination. In between, a receive of the source may move another message into
// the dead-letter queue and make it durable at once: it must not take the slot of a message whose removal is
// not durable yet, or a crash leaves two stored messages in one slot and the store will not open. Here the
// move task's commit is held while the receive moves a message in, then the store crashes.
func TestStoreMoveTaskSlotHeldUntilDurable(t *testing.T) {
	ctx := context.Background()
	for _, fifo := range []bool{false, true} {
		t.Run(fmt.Sprint("fifo=", fifo), func(t *testing.T) {
			names := []string{"src", "dlq", "dest"}
			if fifo {
				names = []string{"src.fifo", "dlq.fifo", "dest.fifo"}
			}
			d := newStDisk(t)
			open := func() (src, dlq, dest *fifoq.Queue) {
				dlq = d.queue(names[1])
				src = d.queue(names[0], fifoq.WithVisibilityTimeout(0), fifoq.WithDeadLetterQueue(dlq, 1))
				return src, dlq, d.queue(names[2])
			}
			src, dlq, dest := open()
			receive := func(want ...string) {
				t.Helper()
				ds, err := src.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10})
				require.NoError(t, err)
				require.Equal(t, want, stBodies(ds))
			}
			stSend(t, src, "g", "first")
			receive("first#1")
			receive() // first moves to the dead-letter queue
			stSend(t, src, "g", "second")
			receive("second#1")
			require.Equal(t, []string{"first/visible/1"}, stState(dlq))

			d.eng.HoldNextCommit()
			task, err := dlq.StartMoveTask(ctx, dest, 0)
			require.NoError(t, err)
			d.eng.WaitBlocked(1) // first is out of the dead-letter queue in memory; its removal is not written
			require.Empty(t, stState(dlq))
			receive() // second moves to the dead-letter queue, durably
			require.Equal(t, []string{"second/visible/1"}, stState(dlq))
			d.eng.Crash()
			d.eng.ReleaseHeld()
			require.NoError(t, task.Wait(ctx))
			require.Equal(t, fifoq.MoveTaskFailed, task.Status().State, "%+v", task.Status())

			d.open()
			src, dlq, dest = open()
			require.Equal(t, []string{"first/visible/1", "second/visible/1"}, stState(dlq), "the move was not durable")
			require.Empty(t, stState(dest))
			require.Empty(t, stState(src))

			// The slots work on: the move goes through now, and a receipt handle finds its message.
			task, err = dlq.StartMoveTask(ctx, dest, 0)
			require.NoError(t, err)
			require.NoError(t, task.Wait(ctx))
			require.Equal(t, fifoq.MoveTaskCompleted, task.Status().State, "%+v", task.Status())
			require.Equal(t, []string{"first/visible/0", "second/visible/0"}, stState(dest))
			d.restart(true)
			_, dlq, dest = open()
			require.Empty(t, stState(dlq))
			require.Equal(t, []string{"first/visible/0", "second/visible/0"}, stState(dest))
		})
	}
}

package catalog

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/internal/rule"
)

// The move tasks of a catalogue: started through it, listed by it (the last rule.MaxListedMoveTasks of each queue),
// and in a store recorded and resumed after a restart.

// failedNonExistent is the failure of a move task whose destination was deleted while it ran, as SQS names it.
const failedNonExistent = "AWS.SimpleQueueService.NonExistentQueue"

// A Task is a move task of a [Catalog]'s dead-letter queue (a DLQ redrive), as the catalogue lists it.
type Task struct {
	// ID names the task in the catalogue: a random UUID, which stays the same after a restart.
	ID string
	// Namespace is the namespace of its queues.
	Namespace Namespace
	// Source is the name of the dead-letter queue the task moves messages out of.
	Source string
	// Destination is the name of the queue it moves them to, "" when it returns each to the queue it came
	// from. A destination deleted since keeps its name, but for one of a namespace other than the default
	// deleted more than 60 seconds before a restart, which is then named by its fifoq name (see [Catalog]).
	Destination string

	t *fifoq.MoveTask
}

// Status returns the task's status now.
func (t Task) Status() fifoq.MoveTaskStatus { return t.t.Status() }

// Wait blocks until the task ends, or ctx is done (see [fifoq.MoveTask.Wait]). Cancel a task with
// [Catalog.CancelMoveTask], which records its end.
func (t Task) Wait(ctx context.Context) error { return t.t.Wait(ctx) }

// A SourceDeletedError refuses a move task that would return the messages of a dead-letter queue to their
// sources while one of them came from a queue deleted since (a queue of that name may exist again, created
// after the message left the old one): that message would have nowhere to go. It matches
// fifoq.ErrInvalidMoveTask. Move such messages to a destination instead.
type SourceDeletedError struct {
	// Queue is the name of the deleted queue, in the dead-letter queue's namespace.
	Queue string
}

func (e *SourceDeletedError) Error() string {
	return "catalog: invalid message move task: a message came from queue " + e.Queue + ", deleted since"
}

// Unwrap returns the rejection by fifoq.ErrInvalidMoveTask, whose AWS message ([ErrorMessage]) asks for a
// destination.
func (e *SourceDeletedError) Unwrap() error {
	return rule.Reject(fifoq.ErrInvalidMoveTask, "a message came from queue %s, deleted since", e.Queue).Says(
		"A message in the queue was moved there from %s, which was deleted since. Move the messages to a destination.", e.Queue)
}

// A catalogTask is a move task the catalogue started, or resumed.
type catalogTask struct {
	id     string
	task   *fifoq.MoveTask
	source *catalogEntry
	dest   *catalogEntry // nil when messages go back to their sources, or when dest was gone at a restart
	// destName and destFn are the destination's name, in the namespace and in fifoq ("" when messages go
	// back to their sources), which the task keeps listing and recording when dest is gone.
	destName, destFn string
	key              []byte // of its record, in a store
}

// info returns what the catalogue tells of t.
func (t *catalogTask) info() Task {
	return Task{ID: t.id, Namespace: t.source.key.ns, Source: t.source.key.name, Destination: t.destName, t: t.task}
}

// StartMoveTask starts moving the messages of the dead-letter queue source of ns (see [Queue.StartMoveTask]):
// to the queue destination of ns, or back to the queues they came from when destination is "", at rate
// messages a second (0: as fast as possible). The catalogue lists the task ([Catalog.MoveTasks]) and, in a
// store, records it with each of its steps, so that a task running at a restart goes on from its counts when
// the store is opened again.
//
// A queue the catalogue does not hold returns ErrQueueDoesNotExist; a return to the sources while a message
// came from a queue deleted since, a *SourceDeletedError; and otherwise the errors of Queue.StartMoveTask. A
// refused task changes nothing. ctx governs the start only: the task runs until it ends, is cancelled or the
// catalogue is closed.
func (c *Catalog) StartMoveTask(ctx context.Context, ns Namespace, source, destination string, rate int) (Task, error) {
	if err := ctx.Err(); err != nil {
		return Task{}, err
	}
	t, started, err := c.startMoveTask(ns, source, destination, rate)
	if err != nil {
		return Task{}, err
	}
	if err := started.Wait(); err != nil {
		return Task{}, err // the store failed: the task fails at its first step
	}
	return t.info(), nil
}

// startMoveTask starts a task, under the catalogue's lock, so that a DeleteQueue comes wholly before it or
// after (and then fails the task if it must: failMovesIntoLocked). It returns what to wait for.
func (c *Catalog) startMoveTask(ns Namespace, source, destination string, rate int) (*catalogTask, fifoq.Pending, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	src := c.queues[ns][source]
	if src == nil {
		return nil, fifoq.Pending{}, rule.Reject(ErrQueueDoesNotExist, "source %s", source)
	}
	t := &catalogTask{id: newTaskID(), source: src}
	var dest *fifoq.Queue
	if destination != "" {
		if t.dest = c.queues[ns][destination]; t.dest == nil {
			return nil, fifoq.Pending{}, rule.Reject(ErrQueueDoesNotExist, "destination %s", destination)
		}
		dest = t.dest.q
		t.destName, t.destFn = t.dest.key.name, dest.Name()
	} else if gone := c.staleSourceLocked(src); gone != "" {
		return nil, fifoq.Pending{}, &SourceDeletedError{Queue: c.keyOf(gone).name}
	}
	var o fifoq.MoveTaskOptions
	if c.st != nil {
		c.tasksMu.Lock()
		c.taskSeq++
		t.key = taskKey(src.q.Name(), c.taskSeq)
		c.tasksMu.Unlock()
		o.Record = &fifoq.TaskRecord{Key: t.key, Encode: t.encode}
	}
	task, started, err := src.q.StartMoveTaskNoWait(dest, rate, o)
	if err != nil {
		return nil, fifoq.Pending{}, err
	}
	t.task = task
	src.mu.Lock()
	defer src.mu.Unlock()
	c.tasksMu.Lock()
	c.tasks[t.id] = t
	src.tasks = append(src.tasks, t)
	var b *fifoq.RecordBatch
	if n := len(src.tasks) - rule.MaxListedMoveTasks; n > 0 {
		// The oldest have ended: a queue runs one task at a time, and this one was just started. Their
		// records go without a sync, once tasksMu is released: Open deletes them again if they were
		// not.
		for _, old := range src.tasks[:n] {
			delete(c.tasks, old.id)
			if old.key != nil {
				if b == nil {
					b = c.rec.NewBatch()
				}
				b.Delete(old.key)
			}
		}
		src.tasks = append(src.tasks[:0], src.tasks[n:]...)
		clear(src.tasks[len(src.tasks):cap(src.tasks)])
	}
	c.tasksMu.Unlock()
	if b != nil {
		_, _ = c.rec.Commit(b, false) // a failure fails the store, which the next change reports
	}
	return t, started, nil
}

// newTaskID returns a random UUID (version 4).
func newTaskID() string {
	var u [16]byte
	rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	h := hex.EncodeToString(u[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// staleSourceLocked returns the fifoq name of a queue that a message of dlq was moved from and that was
// deleted since (a queue of that name may exist again, created after the message left the old one), or "".
// c.mu must be held.
func (c *Catalog) staleSourceLocked(dlq *catalogEntry) string {
	if c.deletions == 0 {
		return "" // spare the look at every message
	}
	for m := range dlq.q.Messages() {
		if m.DeadLetterSource == "" {
			continue
		}
		// A message from the queue that has the name now was sent there, or in a FIFO dead-letter queue
		// moved here, after the queue was created; one from an earlier queue of that name, before its
		// deletion, at least deletedReuseDelay before the name was taken again.
		src := c.byName[m.DeadLetterSource]
		if src == nil || m.SentAt.Before(src.created) {
			return m.DeadLetterSource
		}
	}
	return ""
}

// failMovesIntoLocked ends dlq's running move task, FAILED, if it would move messages into gone, a queue
// being deleted: a task whose destination is gone, or one that returns messages to their sources while dlq
// holds a message from gone. A batch of up to 10 messages the task took already still goes there (fifoq
// cannot make a move fail). It returns the task it failed, or nil. c.mu must be held for writing.
func (c *Catalog) failMovesIntoLocked(dlq, gone *catalogEntry) *fifoq.MoveTask {
	dlq.mu.Lock()
	var t *catalogTask
	if n := len(dlq.tasks); n > 0 {
		t = dlq.tasks[n-1]
	}
	dlq.mu.Unlock()
	if t == nil || t.task.Status().State != fifoq.MoveTaskRunning {
		return nil
	}
	if t.dest == gone {
		t.task.Fail(failedNonExistent)
		return t.task
	}
	if t.dest != nil {
		return nil
	}
	for m := range dlq.q.Messages() {
		if m.DeadLetterSource == gone.q.Name() {
			t.task.Fail(failedNonExistent)
			return t.task
		}
	}
	return nil
}

// CancelMoveTask cancels the running move task id (see [fifoq.MoveTask.Cancel]): the messages it moved stay
// moved. It returns once the task has ended (after the batch it had taken) and, in a store, its end is
// recorded, so that a restart does not resume it; ctx bounds that wait. It returns the task,
// ErrMoveTaskNotFound for a task the catalogue does not hold (or whose queue was deleted), and
// fifoq.ErrMoveTaskNotRunning for one that has ended.
func (c *Catalog) CancelMoveTask(ctx context.Context, id string) (Task, error) {
	t, ok := c.task(id)
	if !ok {
		return Task{}, rule.Reject(ErrMoveTaskNotFound, "task %s", id)
	}
	if err := t.task.Cancel(); err != nil {
		return Task{}, err
	}
	if err := t.task.Wait(ctx); err != nil {
		return Task{}, err
	}
	if err := c.err(); err != nil {
		return Task{}, err
	}
	return t.info(), nil
}

// task returns the task id, if the catalogue holds it and its queue.
func (c *Catalog) task(id string) (*catalogTask, bool) {
	c.tasksMu.Lock()
	t := c.tasks[id]
	c.tasksMu.Unlock()
	if t == nil {
		return nil, false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return t, c.holdsLocked(t.source) // deleted since: its tasks are forgotten
}

// fifoq.MoveTask returns the move task id; ok is false when the catalogue does not hold it (see
// ErrMoveTaskNotFound).
func (c *Catalog) MoveTask(id string) (t Task, ok bool) {
	ct, ok := c.task(id)
	if !ok {
		return Task{}, false
	}
	return ct.info(), true
}

// MoveTasks returns the move tasks of the queue name of ns, newest first: the last 10 started through the
// catalogue (before a restart too, in a store).
func (c *Catalog) MoveTasks(ns Namespace, name string) []Task {
	e := c.lookup(ns, name)
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Task, 0, len(e.tasks))
	for i := len(e.tasks) - 1; i >= 0; i-- {
		out = append(out, e.tasks[i].info())
	}
	return out
}

package fifoq

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/fifoq/fifoq/internal/rule"
	"github.com/fifoq/fifoq/storage"
)

// MoveTaskState is the state of a [MoveTask].
type MoveTaskState uint8

const (
	// MoveTaskRunning: the task is moving messages.
	MoveTaskRunning MoveTaskState = iota + 1
	// MoveTaskCompleted: the task moved every message it set out to, or found none left.
	MoveTaskCompleted
	// MoveTaskCancelling: Cancel was called and the task has not stopped yet.
	MoveTaskCancelling
	// MoveTaskCancelled: the task stopped after Cancel; what it moved stays moved.
	MoveTaskCancelled
	// MoveTaskFailed: a message could not be moved; MoveTaskStatus.Failure says why.
	MoveTaskFailed
)

// String returns the SQS name of the state, such as "RUNNING".
func (s MoveTaskState) String() string {
	switch s {
	case MoveTaskRunning:
		return "RUNNING"
	case MoveTaskCompleted:
		return "COMPLETED"
	case MoveTaskCancelling:
		return "CANCELLING"
	case MoveTaskCancelled:
		return "CANCELLED"
	case MoveTaskFailed:
		return "FAILED"
	}
	return fmt.Sprintf("MoveTaskState(%d)", uint8(s))
}

// MoveTaskStatus is what [MoveTask.Status] and [Queue.MoveTasks] report (ListMessageMoveTasks).
type MoveTaskStatus struct {
	State       MoveTaskState // running, completed, cancelled or failed
	Moved       int           // ApproximateNumberOfMessagesMoved
	ToMove      int           // ApproximateNumberOfMessagesToMove: the visible messages when the task started
	Source      string        // the dead-letter queue's name
	Destination string        // "" when messages go back to the queues they came from
	Rate        int           // messages a second; 0 means as fast as possible
	StartedAt   time.Time     // by the source queue's clock
	Failure     string        // why the task failed
}

// A MoveTask moves messages out of a dead-letter queue (a DLQ redrive). It is safe for concurrent use. It
// runs in a goroutine of its own that ends with the task, and waits only on its queue's clock, so a test
// can run a rate-limited move inside testing/synctest or on a [ManualClock] without real waiting.
type MoveTask struct {
	src, dest *Queue
	cancel    chan struct{} // closed by Cancel
	done      chan struct{} // closed when the task ends
	rec       *TaskRecord   // nil: the task's status is not kept in the store
	resumed   bool          // read back from the store: a rate-limited task waits a step's time first

	mu       sync.Mutex // guards the fields below
	status   MoveTaskStatus
	halted   bool   // stopped by Halt: its end is not recorded, so that it goes on after a restart
	failure  string // given by Fail: the task ends FAILED after the batch it has taken
	stopping bool   // cancel is closed
}

// A TaskRecord keeps a move task's status in its queue's store ([Store.Records]), for a layer above that
// lists the tasks and resumes a running one after a restart (a catalogue: package catalog). The task writes
// the record when it starts, in the batch of each step (with the messages it moves, so that the count on
// disk is exact after a crash) and when it ends, before it is listed as ended.
type TaskRecord struct {
	// Key is the record's key in the store's records.
	Key []byte
	// Encode returns the record of the task's status st. A task halted ([MoveTask.Halt]) writes the
	// status RUNNING: it goes on after a restart.
	Encode func(st MoveTaskStatus) []byte
}

// MoveTaskOptions are the options of [Queue.StartMoveTaskNoWait].
type MoveTaskOptions struct {
	// Record keeps the task's status in the store of the queue, under the key it gives. It is ignored for a
	// queue in memory.
	Record *TaskRecord
	// Resume makes the task one read back from a store, with that status: a RUNNING one goes on from its
	// counts (whether the queue is still a dead-letter queue or not: a message that has nowhere to go then
	// fails the task), an ended one is only listed by [Queue.MoveTasks]. A resumed task's record is not
	// written at the start: it is there.
	Resume *MoveTaskStatus
}

// StartMoveTask starts moving the messages of this dead-letter queue, oldest first (on FIFO, group by group,
// in the order a receive would serve the groups): to dest, or, when dest
// is nil, each back to the queue it was moved from. Moved messages are new messages there (new MessageID,
// send time and retention, receive count 0). rate limits the move to that many messages a second, at most
// 500; 0 moves as fast as possible. The task moves as many messages as were visible when it started, and
// ends early when none is visible.
//
// It returns ErrNotDeadLetterQueue unless this queue is some queue's dead-letter queue, ErrMoveTaskRunning
// while another task of this queue runs, and ErrInvalidMoveTask for a bad rate or a destination of the
// other queue type. ctx governs the start only; the task runs until it ends or is cancelled.
func (q *Queue) StartMoveTask(ctx context.Context, dest *Queue, rate int) (*MoveTask, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t, p, err := q.StartMoveTaskNoWait(dest, rate, MoveTaskOptions{})
	if err != nil {
		return nil, err
	}
	if err := p.Wait(); err != nil {
		return nil, err // the store failed: the task fails at its first step
	}
	return t, nil
}

// StartMoveTaskNoWait is [Queue.StartMoveTask] with the options o, and without the wait for the disk: the
// task runs when it returns, and on a queue with a store the Pending says when its start is durable.
func (q *Queue) StartMoveTaskNoWait(dest *Queue, rate int, o MoveTaskOptions) (*MoveTask, Pending, error) {
	t, c, err := q.startMoveTask(dest, rate, o.Record, o.Resume)
	if err != nil {
		return nil, Pending{}, err
	}
	return t, q.pending(c), nil
}

// startMoveTask is StartMoveTaskNoWait, with what to wait for as a commit.
func (q *Queue) startMoveTask(dest *Queue, rate int, rec *TaskRecord, resume *MoveTaskStatus) (*MoveTask, commit, error) {
	if q.st == nil {
		rec = nil
	}
	if rate != 0 {
		if err := rule.CheckMoveRate(rate); err != nil {
			return nil, commit{}, err
		}
	}
	switch {
	case dest == q:
		return nil, commit{}, rule.Reject(ErrInvalidMoveTask, "destination %s is the source", q.name)
	case dest != nil && dest.fifo != q.fifo:
		return nil, commit{}, rule.Reject(ErrInvalidMoveTask, "destination %s is not of the type of %s", dest.name, q.name)
	case dest != nil && dest.st != q.st:
		return nil, commit{}, rule.Reject(ErrInvalidMoveTask, "destination %s is not in the store of %s", dest.name, q.name)
	}
	if err := q.check(); err != nil {
		return nil, commit{}, err
	}
	now := q.lock()
	if len(q.sources) == 0 && resume == nil {
		q.unlock()
		return nil, commit{}, rule.Reject(ErrNotDeadLetterQueue, "%s is no queue's dead-letter queue", q.name)
	}
	running := resume == nil || resume.State == MoveTaskRunning
	for _, t := range q.moveTasks {
		if running && t.active() {
			q.unlock()
			return nil, commit{}, rule.Reject(ErrMoveTaskRunning, "source %s", q.name)
		}
	}
	t := &MoveTask{
		src:    q,
		dest:   dest,
		cancel: make(chan struct{}),
		done:   make(chan struct{}),
		rec:    rec,
		status: MoveTaskStatus{
			State:     MoveTaskRunning,
			ToMove:    q.stats.Visible,
			Source:    q.name,
			Rate:      rate,
			StartedAt: q.time(now),
		},
	}
	if resume != nil {
		t.status = *resume
		t.status.Source, t.status.Rate = q.name, rate
		t.resumed = true
	}
	if dest != nil {
		t.status.Destination = dest.name
	}
	q.moveTasks = append(q.moveTasks, t)
	if !running {
		close(t.done)
		q.unlock()
		return t, commit{}, nil
	}
	if rec != nil && resume == nil {
		q.batchLocked().Set(recordKey(q.scratchKey[:0], rec.Key), rec.Encode(t.status))
		q.syncLocked()
	}
	c := q.unlock()
	go t.run()
	return t, c, nil
}

// MoveTasks returns the status of this queue's move tasks, newest first.
func (q *Queue) MoveTasks() []MoveTaskStatus {
	q.mu.Lock()
	tasks := slices.Clone(q.moveTasks)
	q.mu.Unlock()
	out := make([]MoveTaskStatus, len(tasks))
	for i, t := range tasks {
		out[len(tasks)-1-i] = t.Status()
	}
	return out
}

// Status returns the task's status now.
func (t *MoveTask) Status() MoveTaskStatus {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status
}

// Cancel stops a running task; the messages it moved stay moved. It returns ErrMoveTaskNotRunning when the
// task is not running.
func (t *MoveTask) Cancel() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status.State != MoveTaskRunning || t.failure != "" {
		state := t.status.State
		if t.failure != "" {
			state = MoveTaskFailed
		}
		return rule.Reject(ErrMoveTaskNotRunning, "task of %s is %v", t.status.Source, state)
	}
	t.status.State = MoveTaskCancelling
	t.stopLocked()
	return nil
}

// Wait blocks until the task ends, or ctx is done; it returns ctx's error in the second case. A task that
// has ended returns nil, whatever ctx says.
func (t *MoveTask) Wait(ctx context.Context) error {
	select {
	case <-t.done:
		return nil
	default:
	}
	select {
	case <-t.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// end ends the task as s and failure say. A task cancelled while it finished its last batch ends
// cancelled; one failed by Fail ends FAILED with its failure. A task whose status is kept in the store
// records its end there, unless it was halted, and only then is it listed as ended: a new task of the queue
// cannot start, and be recorded, while the end of this one could still be lost in a crash (opening the
// store would then find two running tasks).
func (t *MoveTask) end(s MoveTaskState, failure string) {
	t.mu.Lock()
	switch {
	case t.failure != "":
		s, failure = MoveTaskFailed, t.failure
	case t.status.State == MoveTaskCancelling && s == MoveTaskCompleted:
		s = MoveTaskCancelled
	}
	status := t.status
	status.State, status.Failure = s, failure
	halted := t.halted
	t.mu.Unlock()
	if t.rec != nil && !halted {
		// A failed or closed store records nothing: the task is found running at the next open, and goes on.
		if st := t.src.st; st.err() == nil {
			b := st.eng.NewBatch()
			b.Set(recordKey(nil, t.rec.Key), t.rec.Encode(status))
			var c commit
			if c.t, c.err = st.eng.Commit(b, true); c.err != nil {
				c.err = st.fail(c.err)
			}
			_ = c.wait(st) // a failure fails the store, which every later change reports
		}
	}
	t.mu.Lock()
	t.status.State, t.status.Failure = status.State, status.Failure
	t.mu.Unlock()
}

// active reports whether the task is running, or stopping: a queue runs one such task at a time.
func (t *MoveTask) active() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status.State == MoveTaskRunning || t.status.State == MoveTaskCancelling
}

// stopLocked closes t.cancel, once; t.mu must be held.
func (t *MoveTask) stopLocked() {
	if !t.stopping {
		t.stopping = true
		close(t.cancel)
	}
}

// Fail ends a running task FAILED, with failure as its status's Failure: it stops after the batch it has
// taken, which still goes to its destination, and is then listed as FAILED. A catalogue that deletes a
// queue the task moves messages into fails it with "AWS.SimpleQueueService.NonExistentQueue", as SQS does.
// It reports whether the task was running.
func (t *MoveTask) Fail(failure string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status.State != MoveTaskRunning || t.failure != "" {
		return false
	}
	t.failure = failure
	t.stopLocked()
	return true
}

// Halt stops a running task without recording its end in the store, so that a task with a [TaskRecord]
// goes on from where it was when the store is opened again: for a catalogue that closes. The task ends
// cancelled in memory. Halting an ended task does nothing.
func (t *MoveTask) Halt() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.halted = true
	if t.status.State == MoveTaskRunning {
		if t.failure == "" {
			t.status.State = MoveTaskCancelling
		}
		t.stopLocked()
	}
}

// A move is one message on its way out of a dead-letter queue.
type move struct {
	to   *Queue
	msg  Message
	seq  uint64 // in the dead-letter queue
	slot int32  // in the dead-letter queue: held until the message's removal is durable
}

func (t *MoveTask) run() {
	defer close(t.done)
	rate := t.status.Rate
	if t.resumed && rate > 0 && !t.pause(time.Duration(min(MaxBatchEntries, rate))*time.Second/time.Duration(rate)) {
		// It may have moved a step just before it stopped: its rate holds across a restart.
		t.end(MoveTaskCancelled, "")
		return
	}
	for {
		select {
		case <-t.cancel:
			t.end(MoveTaskCancelled, "")
			return
		default:
		}
		st := t.Status()
		n := min(MaxBatchEntries, st.ToMove-st.Moved)
		if rate > 0 {
			n = min(n, rate)
		}
		moves, failure := t.step(n)
		switch {
		case failure != "":
			t.end(MoveTaskFailed, failure)
			return
		case len(moves) == 0 || st.Moved+len(moves) >= st.ToMove:
			t.end(MoveTaskCompleted, "")
			return
		}
		if rate > 0 && !t.pause(time.Duration(len(moves))*time.Second/time.Duration(rate)) {
			t.end(MoveTaskCancelled, "")
			return
		}
	}
}

// step moves up to n messages and returns them, with the reason the task must end, if any.
//
// In a store, the step holds the store's lock from the take to the last arrival, so that no queue it moves
// from or to is deleted meanwhile, nor the store closed: a message taken out of the dead-letter queue in
// memory is then always accepted at its destination, where its removal from the dead-letter queue is
// recorded. Only a failure of the store itself can come in between; the store then refuses every change,
// and opening it again finds the messages still in the dead-letter queue.
func (t *MoveTask) step(n int) ([]move, string) {
	if st := t.src.st; st != nil {
		st.mu.Lock()
		defer st.mu.Unlock()
		if err := t.src.check(); err != nil {
			return nil, err.Error()
		}
	}
	moves, failure := t.src.takeMoves(n, t.dest)
	for i := 0; i < len(moves); {
		j := i + 1
		for j < len(moves) && moves[j].to == moves[i].to {
			j++
		}
		var record func(storage.Batch)
		if t.rec != nil {
			n := j - i
			record = func(b storage.Batch) { // in the batch of the moves: the count on disk is exact
				t.mu.Lock()
				st := t.status
				if t.halted {
					st.State = MoveTaskRunning // it goes on after a restart
				}
				t.mu.Unlock()
				st.Moved += n
				b.Set(recordKey(nil, t.rec.Key), t.rec.Encode(st))
			}
		}
		if err := moves[i].to.acceptMoves(t.src, moves[i:j], record); err != nil {
			return moves[:i], err.Error()
		}
		t.src.releaseSlots(moves[i:j])
		t.mu.Lock()
		t.status.Moved += j - i
		t.mu.Unlock()
		i = j
	}
	return moves, failure
}

// pause waits d on the source queue's clock; it reports false when the task was cancelled meanwhile.
func (t *MoveTask) pause(d time.Duration) bool {
	wake := make(chan struct{})
	timer := t.src.clock.AfterFunc(d, func() { close(wake) })
	select {
	case <-wake:
		return true
	case <-t.cancel:
		timer.Stop()
		return false
	}
}

// acceptMoves stores the messages a move task took out of the dead-letter queue src, as new messages. The
// rules cannot refuse them: they passed them when first sent, and takeMoves checked their size against this
// queue's limit. Deduplication does not apply: a move is not a producer's retry, and nothing may be lost.
//
// In a store, the removal of the messages from src and their arrival here are one batch, committed under
// this queue's lock, so a crash leaves each message in one queue or the other. Only a failure of the store
// (or this queue deleted from it meanwhile) returns an error.
//
// record, when not nil, adds the move task's record to the batch.
func (q *Queue) acceptMoves(src *Queue, moves []move, record func(storage.Batch)) error {
	if err := q.check(); err != nil {
		return err
	}
	var ms [MaxBatchEntries]*message
	for i := range moves {
		ms[i] = newMessage(&moves[i].msg)
	}
	now := q.lock()
	if q.st != nil {
		b := q.batchLocked()
		for _, mv := range moves {
			src.deleteMessage(b, mv.seq, q.scratchKey[:0])
		}
		if record != nil {
			record(b)
		}
	}
	for _, m := range ms[:len(moves)] {
		q.sendLocked(now, m, "", false)
	}
	q.counters.RedriveArrivals += uint64(len(moves))
	return q.unlock().wait(q.st)
}

// releaseSlots frees the slots that takeMoves held for moves, whose removal from this queue is durable now.
// A slot a purge released meanwhile is not held any more, and is left alone.
func (q *Queue) releaseSlots(moves []move) {
	if q.st == nil {
		return
	}
	q.lock()
	defer q.unlock()
	for _, mv := range moves {
		if i := slices.Index(q.heldSlots, mv.slot); i >= 0 {
			q.heldSlots = slices.Delete(q.heldSlots, i, i+1)
			q.freeSlots = append(q.freeSlots, mv.slot)
		}
	}
}

// takeMoves takes up to n visible messages out of this dead-letter queue, each bound for dest or for the
// queue it came from. On a FIFO queue only the head of a group can go, so group order holds: the available
// groups' tree gives the group a receive would serve first in O(log g) (the group of the oldest head under
// GroupOrderOldestMessage), and that group keeps its place while its head moves, so a group's messages go
// one after the other. On a standard
// queue it walks the queue from its oldest message, passing over the ones in flight: few, in a dead-letter
// queue. A message that cannot go (it has no source queue to return to, or is too large for its
// destination) stays where it is, and its reason is returned with the moves before it.
func (q *Queue) takeMoves(n int, dest *Queue) ([]move, string) {
	q.lock()
	defer q.unlock()
	var moves []move
	oldest := func() *message { // the oldest message that may move now
		if q.fifo {
			if g, ok := q.groups.popOldest(); ok {
				return g.msgs.head
			}
			return nil
		}
		for m := q.all.head; m != nil; m = next(m, bySend) {
			if m.state == StateVisible {
				return m
			}
		}
		return nil
	}
	for len(moves) < n {
		m := oldest()
		if m == nil {
			break
		}
		to := dest
		if to == nil && m.moved {
			to = q.sourceLocked(q.origins[m.seq])
		}
		failure := ""
		switch {
		case to == nil && m.moved:
			failure = fmt.Sprintf("message %s came from %s, which is not open", q.messageIDLocked(m), q.origins[m.seq].sourceName)
		case to == nil:
			failure = fmt.Sprintf("message %s was not moved here from another queue and has no source to return to", q.messageIDLocked(m))
		case to == q:
			// No receive moves a message into its own queue (see exhausted), so none names it as its source.
			failure = fmt.Sprintf("message %s names this queue as its source: it has no other queue to return to", q.messageIDLocked(m))
		case to.deleted.Load():
			failure = fmt.Sprintf("the destination %s of message %s was deleted", to.name, q.messageIDLocked(m))
		case m.rawSize() > to.conf().maxSize:
			failure = fmt.Sprintf("message %s is larger than the maximum message size of %s", q.messageIDLocked(m), to.name)
		}
		if failure != "" {
			if q.fifo {
				q.groups.update(m.group) // back in the tree it was taken from
			}
			return moves, failure
		}
		msg := m.content()
		msg.Delay = 0 // a new message: the destination's delay applies
		if !to.fifo {
			msg.DeduplicationID = ""
		}
		moves = append(moves, move{to: to, msg: msg, seq: m.seq, slot: m.slot})
		// On FIFO the group goes back in the tree if its next message is visible. acceptMoves records the
		// removal; until it is durable the message's slot stays held, as its records still name that slot:
		// a message moved in meanwhile (by a receive of a source) must not be stored under it.
		if q.st != nil {
			q.slots[m.slot] = nil
			q.heldSlots = append(q.heldSlots, m.slot)
			q.unlinkLocked(m)
		} else {
			q.removeLocked(m)
		}
		q.counters.Redriven++
	}
	return moves, ""
}

package sqsapi

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/internal/store"
	"github.com/fifoq/fifoq/storage"
)

// The move tasks of a durable server are records too, so that a task running at a restart goes on from
// where it was, with its counts, and ListMessageMoveTasks lists the tasks started before:
//
//	[keyPrefix] 'm' name 0x00 seq(8) -> a move task of the queue whose fifoq name is name, the seq-th the
//	                                    server started (big-endian, so a queue's tasks sort oldest first)
//
// The value is recordVersion and JSON: the task's handle, destination, rate and status. fifoq writes it
// (internal/store.StartMoveTask): when the task starts, in the batch of each step, with the messages it
// moves, so the count of moved messages is exact after a crash, and when it ends. A server that stops
// halts its tasks without recording an end: they are found running at the next Open, and go on. Open keeps
// the last maxListedTasks of each queue and deletes the others, and the tasks of queues that are gone.
const kindTask byte = 'm'

// taskKey returns the key of the seq-th task, of the queue of fifoq name fn.
func taskKey(fn string, seq uint64) []byte {
	k := append(recordKey(kindTask, fn), 0)
	return binary.BigEndian.AppendUint64(k, seq)
}

// taskRange returns the keys of the tasks of the queue of fifoq name fn.
func taskRange(fn string) (lo, hi []byte) {
	return append(recordKey(kindTask, fn), 0), append(recordKey(kindTask, fn), 1)
}

// A taskRecord is a move task as stored.
type taskRecord struct {
	Handle      string `json:"handle"`
	Destination string `json:"destination,omitempty"`    // fifoq name; "" when messages go back to their sources
	DestARN     string `json:"destinationArn,omitempty"` // as given
	Rate        int    `json:"rate"`
	RateGiven   bool   `json:"rateGiven,omitempty"`
	State       string `json:"state"` // RUNNING, COMPLETED, CANCELLED or FAILED
	Moved       int    `json:"moved"`
	ToMove      int    `json:"toMove"`
	Failure     string `json:"failure,omitempty"`
	Started     int64  `json:"started"` // Unix nanoseconds
}

// encodeTask returns the record of t with status st: the encoding fifoq calls for each write of it.
func encodeTask(t *moveTask, st fifoq.MoveTaskStatus) []byte {
	r := taskRecord{Handle: t.handle, DestARN: t.destARN, Rate: st.Rate, RateGiven: t.rateGiven, State: st.State.String(),
		Moved: st.Moved, ToMove: st.ToMove, Failure: st.Failure, Started: st.StartedAt.UnixNano()}
	if t.dest != nil {
		r.Destination = t.dest.q.Name()
	}
	switch {
	case t.destGone.Load():
		r.State, r.Failure = fifoq.MoveTaskFailed.String(), failedNonExistent
	case st.State == fifoq.MoveTaskCancelling:
		r.State = fifoq.MoveTaskCancelled.String() // its end is recorded as such
	}
	data, err := json.Marshal(r)
	if err != nil {
		panic("sqsapi: encoding a move task record: " + err.Error()) // strings and numbers
	}
	return append([]byte{recordVersion}, data...)
}

// taskStates are the states a task record may hold.
var taskStates = map[string]fifoq.MoveTaskState{
	"RUNNING": fifoq.MoveTaskRunning, "COMPLETED": fifoq.MoveTaskCompleted, "CANCELLED": fifoq.MoveTaskCancelled,
	"FAILED": fifoq.MoveTaskFailed,
}

// A storedTask is a task record read by Open.
type storedTask struct {
	seq uint64
	r   taskRecord
}

func decodeTask(k, v []byte) (fn string, t storedTask, err error) {
	if len(v) == 0 || v[0] != recordVersion {
		return "", t, badVersion(v)
	}
	name, seq, ok := bytes.Cut(k[2:], []byte{0})
	if !ok || len(seq) != 8 || len(name) == 0 {
		return "", t, errors.New("bad key")
	}
	dec := json.NewDecoder(bytes.NewReader(v[1:]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t.r); err != nil {
		return "", t, err
	}
	r := &t.r
	_, known := taskStates[r.State]
	switch {
	case !wellFormedHandle(r.Handle):
		return "", t, fmt.Errorf("handle %q", r.Handle)
	case !known:
		return "", t, fmt.Errorf("state %q", r.State)
	case r.Rate < 0 || r.Rate > 500 || r.Moved < 0 || r.ToMove < 0 || r.Started <= 0:
		return "", t, fmt.Errorf("rate %d, moved %d, to move %d, started %d", r.Rate, r.Moved, r.ToMove, r.Started)
	}
	t.seq = binary.BigEndian.Uint64(seq)
	return string(name), t, nil
}

// recoverTasks re-creates the move tasks of the records, after the queues: each queue's last
// maxListedTasks, a running one going on from its counts. A task whose source is gone, or was deleted and
// created again since the task started, is deleted in tidy, as are the older tasks; a running task whose
// destination is gone ends FAILED, as a task whose destination is deleted while it runs does.
func (s *Server) recoverTasks(tasks map[string][]storedTask, tidy storage.Batch) error {
	for _, fn := range slices.Sorted(maps.Keys(tasks)) {
		list := tasks[fn]
		slices.SortFunc(list, func(a, b storedTask) int { return compareU64(a.seq, b.seq) })
		src := s.byFifo[fn]
		for i, st := range list {
			s.taskSeq = max(s.taskSeq, st.seq)
			if src == nil || i < len(list)-maxListedTasks || time.Unix(0, st.r.Started).Before(src.created) {
				tidy.Delete(taskKey(fn, st.seq))
				continue
			}
			if err := s.resumeTask(src, fn, st); errors.Is(err, fifoq.ErrMoveTaskRunning) {
				// Two running tasks of one queue, which no change of the server records: the later is dropped.
				s.log.Warn("sqsapi: a second running move task of a queue is stored: it is dropped", "queue", src.arn,
					"record", recordName(taskKey(fn, st.seq)))
				tidy.Delete(taskKey(fn, st.seq))
			} else if err != nil {
				return err
			}
		}
	}
	return nil
}

func compareU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// resumeTask re-creates the task of a record of queue src.
func (s *Server) resumeTask(src *queueState, fn string, st storedTask) error {
	r := st.r
	t := &moveTask{handle: r.Handle, source: src, destARN: r.DestARN, rateGiven: r.RateGiven, key: taskKey(fn, st.seq)}
	status := fifoq.MoveTaskStatus{State: taskStates[r.State], Moved: r.Moved, ToMove: r.ToMove, Rate: r.Rate,
		StartedAt: time.Unix(0, r.Started), Failure: r.Failure}
	var dest *fifoq.Queue
	if r.Destination != "" {
		if t.dest = s.byFifo[r.Destination]; t.dest == nil || t.dest.ns != src.ns {
			t.dest = nil
			if status.State == fifoq.MoveTaskRunning {
				status.State, status.Failure = fifoq.MoveTaskFailed, failedNonExistent
			}
		} else {
			dest = t.dest.q
		}
	}
	if status.State == fifoq.MoveTaskFailed && status.Failure == failedNonExistent {
		t.destGone.Store(true)
	}
	task, err := store.StartMoveTask(src.q, dest, r.Rate, t.key, func(st any) []byte { return encodeTask(t, st.(fifoq.MoveTaskStatus)) }, &status)
	if err != nil {
		return fmt.Errorf("sqsapi: resuming move task of %s: %w", src.arn, err)
	}
	t.task = task.(*fifoq.MoveTask)
	s.tasks[t.handle] = t
	src.tasks = append(src.tasks, t)
	return nil
}

package sqsapi

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/internal/store"
	"github.com/fifoq/fifoq/storage"
)

// StartMessageMoveTask, CancelMessageMoveTask and ListMessageMoveTasks: dead-letter queue redrives, run by
// fifoq.MoveTask.

// A moveTask is a move task started through the API, with the handle that names it.
type moveTask struct {
	handle    string
	task      *fifoq.MoveTask
	source    *queueState
	dest      *queueState // nil when messages go back to their sources
	destARN   string      // as given; "" when messages go back to their sources
	rateGiven bool        // MaxNumberOfMessagesPerSecond was given
	key       []byte      // of its record, on a durable server (taskrecords.go)

	// destGone is set when a queue the task moves messages into was deleted while it ran: the task was
	// cancelled, and it is shown FAILED with the reason failedNonExistent, as SQS ends such a task.
	destGone atomic.Bool
}

// failedNonExistent is the FailureReason of a move task whose destination was deleted while it ran.
const failedNonExistent = "AWS.SimpleQueueService.NonExistentQueue"

// failDestination ends the running task, FAILED, because a queue it moves messages into is being deleted.
func (t *moveTask) failDestination() {
	t.destGone.Store(true)
	if err := t.task.Cancel(); err != nil {
		t.destGone.Store(false) // it ended meanwhile, as it was
	}
}

// A taskHandle is a move task handle, decoded: as on SQS, the base64 (standard encoding) of this JSON.
type taskHandle struct {
	TaskID    string `json:"taskId"`
	SourceArn string `json:"sourceArn"`
}

// newTaskHandle returns a handle for a new task of the queue of that ARN, with a random UUID for its id.
func newTaskHandle(sourceARN string) string {
	var u [16]byte
	rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	h := hex.EncodeToString(u[:])
	b, _ := json.Marshal(taskHandle{TaskID: h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], SourceArn: sourceARN})
	return base64.StdEncoding.EncodeToString(b)
}

// wellFormedHandle reports whether h has the shape of a task handle, known or not: base64 of a JSON object
// with a taskId and an SQS ARN as sourceArn.
func wellFormedHandle(h string) bool {
	b, err := base64.StdEncoding.DecodeString(h)
	if err != nil {
		return false
	}
	var th taskHandle
	if json.Unmarshal(b, &th) != nil || th.TaskID == "" {
		return false
	}
	_, ok := parseARN(th.SourceArn)
	return ok
}

// queueOfParam resolves an ARN parameter of a move task action.
func (s *Server) queueOfParam(arn, param string) (*queueState, *apiError) {
	if arn == "" {
		return nil, missing(param)
	}
	if parts := strings.Split(arn, ":"); len(parts) < 6 || parts[0] != "arn" {
		return nil, newError(codeInvalidParameterValue, "You must use this format to specify the %s: "+
			"arn:<partition>:<service>:<region>:<account-id>:<resource-id>", param)
	}
	qs := s.queueOfARN(arn)
	if qs == nil {
		return nil, newError(codeResourceNotFound, "The resource that you specified for the %s parameter doesn't exist.", param)
	}
	return qs, nil
}

type startMoveTaskInput struct {
	SourceArn                    string
	DestinationArn               string
	MaxNumberOfMessagesPerSecond *int
}

func (in *startMoveTaskInput) fromQuery(f *form) error {
	in.SourceArn, in.DestinationArn = f.get("SourceArn"), f.get("DestinationArn")
	var err *apiError
	if in.MaxNumberOfMessagesPerSecond, err = f.optInt("MaxNumberOfMessagesPerSecond"); err != nil {
		return err
	}
	return nil
}

type taskHandleOutput string

func (o taskHandleOutput) encode(e encoder) { e.str("TaskHandle", string(o)) }

func startMessageMoveTask(s *Server, c *call, in *startMoveTaskInput) (output, error) {
	src, err := s.queueOfParam(in.SourceArn, "SourceArn")
	if err != nil {
		return nil, err
	}
	var (
		destState *queueState
		dest      *fifoq.Queue
	)
	if in.DestinationArn != "" {
		if destState, err = s.queueOfParam(in.DestinationArn, "DestinationArn"); err != nil {
			return nil, err
		}
		dest = destState.q
	}
	rate := 0
	if r := in.MaxNumberOfMessagesPerSecond; r != nil {
		// fifoq's rule, checked here, before the queues are: fifoq would take a 0 for "as fast as possible".
		if err := fifoq.CheckMoveRate(*r); err != nil {
			return nil, coreError(err)
		}
		rate = *r
	}
	// The check of the messages' sources, the start and the registration happen under the registry lock, so
	// a DeleteQueue comes wholly before them or after (and then cancels the task if it must, see
	// cancelMovesIntoLocked).
	s.mu.RLock()
	defer s.mu.RUnlock()
	if !s.holdsLocked(src) {
		return nil, newError(codeResourceNotFound, "The resource that you specified for the SourceArn parameter doesn't exist.")
	}
	if destState != nil && !s.holdsLocked(destState) {
		return nil, newError(codeResourceNotFound, "The resource that you specified for the DestinationArn parameter doesn't exist.")
	}
	if dest == nil {
		// fifoq would return such a message to the deleted queue, where nobody can reach it.
		if gone := s.staleSourceLocked(src); gone != "" {
			return nil, invalidValue(in.SourceArn, "SourceArn", "A message in the queue was moved there from "+
				s.arnOf(gone)+", which was deleted since. Move the messages to a DestinationArn.")
		}
	}
	t := &moveTask{handle: newTaskHandle(src.arn), source: src, dest: destState, destARN: in.DestinationArn, rateGiven: in.MaxNumberOfMessagesPerSecond != nil}
	// The task outlives the request, so it does not get the request's context. On a durable server it
	// keeps its record (taskrecords.go), written before StartMoveTask returns.
	var (
		task *fifoq.MoveTask
		terr error
	)
	if s.st == nil {
		task, terr = src.q.StartMoveTask(context.Background(), dest, rate)
	} else {
		s.tasksMu.Lock()
		s.taskSeq++
		t.key = taskKey(src.q.Name(), s.taskSeq)
		s.tasksMu.Unlock()
		var mt any
		mt, terr = store.StartMoveTask(src.q, dest, rate, t.key, func(st any) []byte { return encodeTask(t, st.(fifoq.MoveTaskStatus)) }, nil)
		if terr == nil {
			task = mt.(*fifoq.MoveTask)
		}
	}
	if terr != nil {
		if errors.Is(terr, fifoq.ErrInvalidMoveTask) && dest != nil {
			return nil, &refusal{invalidValue(in.DestinationArn, "DestinationArn", "The destination queue must be of the same type as the source queue, and not the source queue."), terr}
		}
		ae := coreError(terr)
		if ae.status < 500 {
			return nil, &refusal{ae, terr} // fifoq's error kept for the Go methods (console.go)
		}
		return nil, ae
	}
	t.task = task
	src.mu.Lock()
	defer src.mu.Unlock()
	s.tasksMu.Lock()
	defer s.tasksMu.Unlock()
	s.tasks[t.handle] = t
	src.tasks = append(src.tasks, t)
	if n := len(src.tasks) - maxListedTasks; n > 0 {
		// The oldest have ended: a queue runs one task at a time, and this one was just started. Their
		// records go without a sync: Open deletes them again if they were not.
		var b storage.Batch
		if s.eng != nil {
			b = s.eng.NewBatch()
		}
		for _, old := range src.tasks[:n] {
			delete(s.tasks, old.handle)
			if b != nil {
				b.Delete(old.key)
			}
		}
		if b != nil && s.check() == nil {
			if _, err := s.eng.Commit(b, false); err != nil {
				s.fail(err) //nolint:errcheck // the next change reports it
			}
		}
		src.tasks = append(src.tasks[:0], src.tasks[n:]...)
		clear(src.tasks[len(src.tasks):cap(src.tasks)])
	}
	return taskHandleOutput(t.handle), nil
}

type cancelMoveTaskInput struct{ TaskHandle string }

func (in *cancelMoveTaskInput) fromQuery(f *form) error {
	in.TaskHandle = f.get("TaskHandle")
	return nil
}

type movedOutput int

func (o movedOutput) encode(e encoder) { e.num("ApproximateNumberOfMessagesMoved", int64(o)) }

func cancelMessageMoveTask(s *Server, c *call, in *cancelMoveTaskInput) (output, error) {
	if in.TaskHandle == "" {
		return nil, missing("TaskHandle")
	}
	if !wellFormedHandle(in.TaskHandle) {
		return nil, newError(codeInvalidParameterValue, "Value for parameter TaskHandle is invalid.")
	}
	s.tasksMu.Lock()
	t := s.tasks[in.TaskHandle]
	s.tasksMu.Unlock()
	if t == nil {
		return nil, newError(codeResourceNotFound, "Task does not exist.")
	}
	if s.lookup(t.source.ns, t.source.name) != t.source { // deleted since: its tasks are forgotten
		return nil, newError(codeResourceNotFound, "Task does not exist.")
	}
	if err := t.task.Cancel(); err != nil {
		if errors.Is(err, fifoq.ErrMoveTaskNotRunning) {
			return nil, &refusal{newError(codeInvalidParameterValue, "Only tasks in status RUNNING can be cancelled."), err}
		}
		return nil, coreError(err)
	}
	if s.st != nil {
		// The task ends after the batch it has taken, and records its end: once the cancel is
		// acknowledged, a restart does not resume the task.
		if err := t.task.Wait(c.ctx); err != nil {
			return nil, coreError(err)
		}
		if err := s.check(); err != nil {
			return nil, err
		}
	}
	return movedOutput(t.task.Status().Moved), nil
}

type listMoveTasksInput struct {
	SourceArn  string
	MaxResults *int
}

func (in *listMoveTasksInput) fromQuery(f *form) error {
	in.SourceArn = f.get("SourceArn")
	var err *apiError
	if in.MaxResults, err = f.optInt("MaxResults"); err != nil {
		return err
	}
	return nil
}

// moveTasksOutput is the result of ListMessageMoveTasks.
type moveTasksOutput struct{ tasks []*moveTask }

func (o *moveTasksOutput) encode(e encoder) {
	e.beginList("Results", "ListMessageMoveTasksResultEntry")
	for _, t := range o.tasks {
		st := t.task.Status()
		if t.destGone.Load() {
			st.State, st.Failure = fifoq.MoveTaskFailed, failedNonExistent
		}
		e.beginItem()
		if st.State == fifoq.MoveTaskRunning {
			e.str("TaskHandle", t.handle)
		}
		e.str("Status", st.State.String())
		e.str("SourceArn", t.source.arn)
		if t.destARN != "" {
			e.str("DestinationArn", t.destARN)
		}
		if t.rateGiven {
			e.num("MaxNumberOfMessagesPerSecond", int64(st.Rate))
		}
		e.num("ApproximateNumberOfMessagesMoved", int64(st.Moved))
		e.num("ApproximateNumberOfMessagesToMove", int64(st.ToMove))
		if st.Failure != "" {
			e.str("FailureReason", st.Failure)
		}
		e.num("StartedTimestamp", st.StartedAt.UnixMilli())
		e.endItem()
	}
	e.endList()
}

func listMessageMoveTasks(s *Server, c *call, in *listMoveTasksInput) (output, error) {
	src, err := s.queueOfParam(in.SourceArn, "SourceArn")
	if err != nil {
		return nil, err
	}
	n := 1
	if m := in.MaxResults; m != nil {
		if *m < 1 || *m > 10 {
			return nil, invalidValue(*m, "MaxResults", "Must be between 1 and 10, if provided.")
		}
		n = *m
	}
	out := &moveTasksOutput{}
	src.mu.Lock()
	for i := len(src.tasks) - 1; i >= 0 && len(out.tasks) < n; i-- {
		out.tasks = append(out.tasks, src.tasks[i])
	}
	src.mu.Unlock()
	return out, nil
}

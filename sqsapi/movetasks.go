package sqsapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/internal/rule"
)

// StartMessageMoveTask, CancelMessageMoveTask and ListMessageMoveTasks: dead-letter queue redrives, run and
// kept by the catalogue (catalog.Catalog.StartMoveTask). A task's handle is the wire's name of the catalogue's
// task id.

// A taskHandle is a move task handle, decoded: as on SQS, the base64 (standard encoding) of this JSON.
type taskHandle struct {
	TaskID    string `json:"taskId"`
	SourceArn string `json:"sourceArn"`
}

// handleOf returns the handle of a task of the catalogue.
func handleOf(t catalog.Task) string {
	b, _ := json.Marshal(taskHandle{TaskID: t.ID, SourceArn: t.Namespace.QueueARN(t.Source)})
	return base64.StdEncoding.EncodeToString(b)
}

// parseHandle decodes a handle with the shape of one, known or not: base64 of a JSON object with a taskId
// and an SQS ARN as sourceArn.
func parseHandle(h string) (taskHandle, bool) {
	b, err := base64.StdEncoding.DecodeString(h)
	if err != nil {
		return taskHandle{}, false
	}
	var th taskHandle
	if json.Unmarshal(b, &th) != nil || th.TaskID == "" {
		return taskHandle{}, false
	}
	_, _, ok := catalog.ParseQueueARN(th.SourceArn)
	return th, ok
}

// taskOfHandle returns the task a handle names, if the catalogue holds it.
func (s *Server) taskOfHandle(h string) (catalog.Task, bool) {
	th, ok := parseHandle(h)
	if !ok {
		return catalog.Task{}, false
	}
	t, ok := s.cat.MoveTask(th.TaskID)
	return t, ok && handleOf(t) == h
}

// queueOfParam resolves an ARN parameter of a move task action.
func (s *Server) queueOfParam(a, param string) (catalog.Queue, *apiError) {
	if a == "" {
		return catalog.Queue{}, missing(param)
	}
	if parts := strings.Split(a, ":"); len(parts) < 6 || parts[0] != "arn" {
		return catalog.Queue{}, newError(codeInvalidParameterValue, "You must use this format to specify the %s: "+
			"arn:<partition>:<service>:<region>:<account-id>:<resource-id>", param)
	}
	q, ok := s.queueOfARN(a)
	if !ok {
		return catalog.Queue{}, notFound(param)
	}
	return q, nil
}

// notFound is the answer to a move task action whose queue parameter names no queue.
func notFound(param string) *apiError {
	return newError(codeResourceNotFound, "The resource that you specified for the %s parameter doesn't exist.", param)
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
	var dest catalog.Queue
	if in.DestinationArn != "" {
		if dest, err = s.queueOfParam(in.DestinationArn, "DestinationArn"); err != nil {
			return nil, err
		}
		if dest.Namespace() != src.Namespace() { // the catalogue moves messages within a namespace
			return nil, notFound("DestinationArn")
		}
	}
	rate := 0
	if r := in.MaxNumberOfMessagesPerSecond; r != nil {
		// fifoq's rule, checked here, before the queues are: fifoq would take a 0 for "as fast as possible".
		if err := rule.CheckMoveRate(*r); err != nil {
			return nil, coreError(err)
		}
		rate = *r
	}
	// The task outlives the request, so it does not get the request's context.
	t, terr := s.cat.StartMoveTask(context.Background(), src.Namespace(), src.Name(), dest.Name(), rate)
	if terr != nil {
		var gone *catalog.SourceDeletedError
		switch {
		case errors.As(terr, &gone):
			// fifoq would return such a message to the deleted queue, where nobody can reach it.
			return nil, invalidValue(in.SourceArn, "SourceArn", "A message in the queue was moved there from "+
				src.Namespace().QueueARN(gone.Queue)+", which was deleted since. Move the messages to a DestinationArn.")
		case errors.Is(terr, catalog.ErrQueueDoesNotExist): // deleted meanwhile
			if _, ok := s.cat.Queue(src.Namespace(), src.Name()); !ok {
				return nil, notFound("SourceArn")
			}
			return nil, notFound("DestinationArn")
		case errors.Is(terr, fifoq.ErrInvalidMoveTask) && in.DestinationArn != "":
			return nil, invalidValue(in.DestinationArn, "DestinationArn", "The destination queue must be of the same type as the source queue, and not the source queue.")
		}
		return nil, coreError(terr)
	}
	return taskHandleOutput(handleOf(t)), nil
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
	th, ok := parseHandle(in.TaskHandle)
	if !ok {
		return nil, newError(codeInvalidParameterValue, "Value for parameter TaskHandle is invalid.")
	}
	// The handle names its source queue, which AWS looks up first (recorded: a well-formed handle of a
	// source that does not exist is ResourceNotFoundException for the SourceArn parameter).
	if _, ok := s.queueOfARN(th.SourceArn); !ok {
		return nil, notFound("SourceArn")
	}
	t, ok := s.taskOfHandle(in.TaskHandle)
	if !ok {
		return nil, newError(codeResourceNotFound, "Task does not exist.")
	}
	// On a durable server the task ends after the batch it has taken, and records its end: once the
	// cancel is acknowledged, a restart does not resume the task.
	t, err := s.cat.CancelMoveTask(c.ctx, t.ID)
	switch {
	case errors.Is(err, fifoq.ErrMoveTaskNotRunning):
		return nil, newError(codeInvalidParameterValue, "Only tasks in status RUNNING can be cancelled.")
	case errors.Is(err, catalog.ErrMoveTaskNotFound):
		return nil, newError(codeResourceNotFound, "Task does not exist.") // its queue was deleted meanwhile
	case err != nil:
		return nil, coreError(err)
	}
	return movedOutput(t.Status().Moved), nil
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
type moveTasksOutput struct{ tasks []catalog.Task }

func (o *moveTasksOutput) encode(e encoder) {
	e.beginList("Results", "ListMessageMoveTasksResultEntry")
	for _, t := range o.tasks {
		st := t.Status()
		e.beginItem()
		if st.State == fifoq.MoveTaskRunning {
			e.str("TaskHandle", handleOf(t))
		}
		e.str("Status", st.State.String())
		e.str("SourceArn", t.Namespace.QueueARN(t.Source))
		if t.Destination != "" {
			e.str("DestinationArn", t.Namespace.QueueARN(t.Destination))
		}
		if st.Rate != 0 { // MaxNumberOfMessagesPerSecond was given
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
		if *m < 1 || *m > rule.MaxListedMoveTasks {
			return nil, invalidValue(*m, "MaxResults", "Must be between 1 and "+strconv.Itoa(rule.MaxListedMoveTasks)+", if provided.")
		}
		n = *m
	}
	tasks := s.cat.MoveTasks(src.Namespace(), src.Name())
	return &moveTasksOutput{tasks: tasks[:min(n, len(tasks))]}, nil
}

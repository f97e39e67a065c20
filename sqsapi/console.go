package sqsapi

import (
	"context"
	"fmt"
	"strings"

	"github.com/fifoq/fifoq"
)

// StartMoveTask, CancelMoveTask and RunningMoveTask: the move task actions from Go, for a web console
// (fifoqweb.WithMoveTasks) that hands its redrives to the server.

// StartMoveTask starts a redrive of the dead-letter queue named source, as StartMessageMoveTask does: to the
// queue named destination, or back to the messages' sources when destination is "", at rate messages a
// second (0: as fast as the server moves them). Queues are named as NamedQueues names them. The task is the
// server's: ListMessageMoveTasks lists it, CancelMessageMoveTask and CancelMoveTask cancel it, and on a
// server made with Open it is stored, and goes on after a restart. It returns the task's handle.
//
// Errors match with errors.Is: fifoq.ErrInvalidMoveTask for an unknown queue, a rate outside 0..500 or a
// destination the messages cannot go to, fifoq.ErrNotDeadLetterQueue, fifoq.ErrMoveTaskRunning. A refused
// task changes nothing.
func (s *Server) StartMoveTask(ctx context.Context, source, destination string, rate int) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	src, ok := s.queueNamed(source)
	if !ok {
		return "", &goError{fmt.Sprintf("sqsapi: move task: no queue named %q", source), fifoq.ErrInvalidMoveTask}
	}
	in := &startMoveTaskInput{SourceArn: arnOf(src)}
	if destination != "" {
		dest, ok := s.queueNamed(destination)
		if !ok {
			return "", &goError{fmt.Sprintf("sqsapi: move task of %s: no destination queue named %q", source, destination), fifoq.ErrInvalidMoveTask}
		}
		in.DestinationArn = arnOf(dest)
	}
	if rate != 0 {
		in.MaxNumberOfMessagesPerSecond = &rate
	}
	out, err := startMessageMoveTask(s, &call{ctx: ctx}, in)
	if err != nil {
		return "", goErr("sqsapi: move task of "+source, err)
	}
	return string(out.(taskHandleOutput)), nil
}

// CancelMoveTask cancels the running move task of that handle, as CancelMessageMoveTask does: a task
// started by StartMoveTask or by StartMessageMoveTask. The messages it moved stay moved. It returns once
// the task has ended (after the batch it had taken), and on a server made with Open, once its end is
// stored.
//
// Errors match with errors.Is: fifoq.ErrInvalidMoveTask for a malformed handle or one of no task the
// server holds, fifoq.ErrMoveTaskNotRunning for a task that has ended.
func (s *Server) CancelMoveTask(ctx context.Context, handle string) error {
	if _, ok := parseHandle(handle); !ok {
		return &goError{fmt.Sprintf("sqsapi: cancel move task: malformed handle %q", handle), fifoq.ErrInvalidMoveTask}
	}
	t, ok := s.taskOfHandle(handle)
	if !ok {
		return &goError{fmt.Sprintf("sqsapi: cancel move task: no task of handle %q", handle), fifoq.ErrInvalidMoveTask}
	}
	if _, err := cancelMessageMoveTask(s, &call{ctx: ctx}, &cancelMoveTaskInput{TaskHandle: handle}); err != nil {
		return goErr("sqsapi: cancel move task "+handle, err)
	}
	return t.Task.Wait(ctx) // done already on a server made with Open
}

// RunningMoveTask returns the handle of the running move task of the queue named source, started by
// StartMoveTask or StartMessageMoveTask, or "" when it has none.
func (s *Server) RunningMoveTask(source string) string {
	src, ok := s.queueNamed(source)
	if !ok {
		return ""
	}
	if tasks := s.cat.MoveTasks(src.Namespace, src.Name); len(tasks) > 0 && tasks[0].Task.Status().State == fifoq.MoveTaskRunning {
		return handleOf(tasks[0])
	}
	return ""
}

// queueNamed returns the queue of a name as NamedQueues gives it.
func (s *Server) queueNamed(name string) (fifoq.CatalogQueue, bool) {
	ns := s.defaultNS()
	switch parts := strings.Split(name, "/"); len(parts) {
	case 1:
	case 3:
		ns, name = fifoq.Namespace{Account: parts[0], Region: parts[1]}, parts[2]
	default:
		return fifoq.CatalogQueue{}, false
	}
	return s.cat.Queue(ns, name)
}

// goErr returns the error of a Go method for the refusal err of a move task action, after prefix: a refusal
// by fifoq keeps its error, another refusal of a parameter matches fifoq.ErrInvalidMoveTask, and the others
// (a failed store, an ended context) are returned as they are.
func goErr(prefix string, err error) error {
	if r, ok := err.(*refusal); ok {
		return fmt.Errorf("%s: %w", prefix, r)
	}
	if ae, ok := err.(*apiError); ok && ae.status < 500 {
		return &goError{prefix + ": " + ae.message, fifoq.ErrInvalidMoveTask}
	}
	return err
}

// A goError is the error of a Go method of the server: its message, matching the sentinel is.
type goError struct {
	msg string
	is  error
}

func (e *goError) Error() string { return e.msg }
func (e *goError) Unwrap() error { return e.is }

// A refusal is an action's answer to a refusal by fifoq: the API error the client gets, and fifoq's error,
// which the Go methods' callers match with errors.Is.
type refusal struct {
	ae   *apiError
	core error
}

func (r *refusal) Error() string   { return r.ae.Error() }
func (r *refusal) Unwrap() []error { return []error{r.ae, r.core} }

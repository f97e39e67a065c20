package conformance_test

// The Go driver of the spec §12 scenarios (scGo): fifoq.New and the Queue methods.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fifoq/fifoq"
)

// ---- the Go driver ----

// scGo drives fifoq queues directly.
type scGo struct {
	clk fifoq.Clock

	mu     sync.Mutex // guards the fields below
	queues map[string]*fifoq.Queue
	tasks  map[string]*fifoq.MoveTask
}

func scNewGo(clk fifoq.Clock) *scGo {
	return &scGo{clk: clk, queues: map[string]*fifoq.Queue{}, tasks: map[string]*fifoq.MoveTask{}}
}

// queue returns the queue named name.
func (g *scGo) queue(name string) (*fifoq.Queue, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	q, ok := g.queues[name]
	if !ok {
		return nil, fmt.Errorf("go driver: no queue %q", name)
	}
	return q, nil
}

// scGoErr turns a fifoq rejection into an *scErr; other errors stay as they are.
func scGoErr(err error) error {
	if err == nil {
		return nil
	}
	if code := fifoq.ErrorCode(err); code != "" {
		return &scErr{Code: code, Msg: err.Error()}
	}
	return err
}

// scGoDuration is a neutral optional duration as the Go API takes it: the duration (nil is 0, the queue's
// setting), and whether it is an explicit 0 (the No... field of the Go API).
func scGoDuration(d *time.Duration) (time.Duration, bool) {
	if d == nil {
		return 0, false
	}
	return *d, *d == 0
}

// scGoPermission is the RedrivePermission named p.
func scGoPermission(p string) (fifoq.RedrivePermission, error) {
	for _, perm := range []fifoq.RedrivePermission{fifoq.RedriveAllowAll, fifoq.RedriveDenyAll, fifoq.RedriveByQueue} {
		if perm.String() == p {
			return perm, nil
		}
	}
	return 0, fmt.Errorf("go driver: no redrive permission %q", p)
}

// scGoScope is the DeduplicationScope named s.
func scGoScope(s string) (fifoq.DeduplicationScope, error) {
	for _, sc := range []fifoq.DeduplicationScope{fifoq.DeduplicationScopeQueue, fifoq.DeduplicationScopeMessageGroup} {
		if sc.String() == s {
			return sc, nil
		}
	}
	return 0, fmt.Errorf("go driver: no deduplication scope %q", s)
}

func (g *scGo) createQueue(_ context.Context, name string, a scAttrs) error {
	opts := []fifoq.Option{fifoq.WithClock(g.clk)}
	if a.VT != nil {
		opts = append(opts, fifoq.WithVisibilityTimeout(*a.VT))
	}
	if a.Delay != nil {
		opts = append(opts, fifoq.WithDelay(*a.Delay))
	}
	if a.Retention != nil {
		opts = append(opts, fifoq.WithRetention(*a.Retention))
	}
	if a.Wait != nil {
		opts = append(opts, fifoq.WithReceiveWaitTime(*a.Wait))
	}
	if a.MaxSize != 0 {
		opts = append(opts, fifoq.WithMaxMessageSize(a.MaxSize))
	}
	if a.CBD != nil {
		if !*a.CBD {
			return errors.New("go driver: ContentBasedDeduplication=false cannot be given")
		}
		opts = append(opts, fifoq.WithContentBasedDeduplication())
	}
	if a.Scope != "" {
		s, err := scGoScope(a.Scope)
		if err != nil {
			return err
		}
		opts = append(opts, fifoq.WithDeduplicationScope(s))
	}
	if a.DLQ != "" {
		dlq, err := g.queue(a.DLQ)
		if err != nil {
			return err
		}
		opts = append(opts, fifoq.WithDeadLetterQueue(dlq, a.MaxReceive))
	}
	if a.Allow != nil {
		p, err := scGoPermission(a.Allow.Permission)
		if err != nil {
			return err
		}
		opts = append(opts, fifoq.WithRedriveAllowPolicy(fifoq.RedriveAllowPolicy{Permission: p, Sources: a.Allow.Sources}))
	}
	q, err := fifoq.New(name, opts...)
	if err != nil {
		return scGoErr(err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.queues[name] = q
	return nil
}

func (g *scGo) setAttributes(_ context.Context, name string, a scAttrs) error {
	q, err := g.queue(name)
	if err != nil {
		return err
	}
	at := q.Attributes()
	if a.VT != nil {
		at.VisibilityTimeout = *a.VT
	}
	if a.Delay != nil {
		at.Delay = *a.Delay
	}
	if a.Retention != nil {
		at.Retention = *a.Retention
	}
	if a.Wait != nil {
		at.ReceiveWaitTime = *a.Wait
	}
	if a.MaxSize != 0 {
		at.MaxMessageSize = a.MaxSize
	}
	if a.CBD != nil {
		at.ContentBasedDeduplication = *a.CBD
	}
	if a.Scope != "" {
		if at.DeduplicationScope, err = scGoScope(a.Scope); err != nil {
			return err
		}
	}
	if a.DLQ != "" {
		if at.DeadLetterQueue, err = g.queue(a.DLQ); err != nil {
			return err
		}
		at.MaxReceiveCount = a.MaxReceive
	}
	if a.Allow != nil {
		p, err := scGoPermission(a.Allow.Permission)
		if err != nil {
			return err
		}
		at.RedriveAllowPolicy = fifoq.RedriveAllowPolicy{Permission: p, Sources: a.Allow.Sources}
	}
	return scGoErr(q.SetAttributes(at))
}

// scGoMessage is m as the Go API takes it.
func scGoMessage(m scMsg) fifoq.Message {
	delay, noDelay := scGoDuration(m.Delay)
	return fifoq.Message{Body: m.Body, GroupID: m.Group, DeduplicationID: m.Dedup, Delay: delay, NoDelay: noDelay,
		Attributes: m.Attrs}
}

func (g *scGo) send(ctx context.Context, name string, m scMsg) (scSent, error) {
	q, err := g.queue(name)
	if err != nil {
		return scSent{}, err
	}
	r, err := q.Send(ctx, scGoMessage(m))
	if err != nil {
		return scSent{}, scGoErr(err)
	}
	return scSent{ID: r.MessageID, Seq: r.SequenceNumber}, nil
}

func (g *scGo) sendBatch(ctx context.Context, name string, ms []scMsg) ([]scEntry, error) {
	q, err := g.queue(name)
	if err != nil {
		return nil, err
	}
	in := make([]fifoq.Message, len(ms))
	for i, m := range ms {
		in[i] = scGoMessage(m)
	}
	res, err := q.SendBatch(ctx, in)
	var be *fifoq.BatchError
	if err != nil && !errors.As(err, &be) {
		return nil, scGoErr(err)
	}
	out := make([]scEntry, len(res))
	for i, r := range res {
		out[i].scSent = scSent{ID: r.MessageID, Seq: r.SequenceNumber}
	}
	if be != nil {
		for _, e := range be.Entries {
			out[e.Index] = scEntry{Code: fifoq.ErrorCode(e.Err)}
		}
	}
	return out, nil
}

func (g *scGo) receive(ctx context.Context, name string, o scRecv) ([]scGot, error) {
	q, err := g.queue(name)
	if err != nil {
		return nil, err
	}
	wait, noWait := scGoDuration(o.Wait)
	vt, noVT := scGoDuration(o.VT)
	ds, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: o.Max, WaitTime: wait, NoWaitTime: noWait,
		VisibilityTimeout: vt, NoVisibilityTimeout: noVT, AttemptID: o.AttemptID})
	if err != nil {
		return nil, scGoErr(err)
	}
	out := make([]scGot, len(ds))
	for i, d := range ds {
		out[i] = scGot{ID: d.MessageID, Body: d.Body, Group: d.GroupID, Dedup: d.DeduplicationID,
			Seq: d.SequenceNumber, Handle: d.ReceiptHandle, Count: d.ReceiveCount, DLSource: d.DeadLetterSource}
		if len(d.Attributes) > 0 {
			out[i].Attrs = d.Attributes
		}
	}
	return out, nil
}

func (g *scGo) delete(ctx context.Context, name, handle string) error {
	q, err := g.queue(name)
	if err != nil {
		return err
	}
	return scGoErr(q.Delete(ctx, handle))
}

func (g *scGo) deleteBatch(ctx context.Context, name string, handles []string) ([]string, error) {
	q, err := g.queue(name)
	if err != nil {
		return nil, err
	}
	err = q.DeleteBatch(ctx, handles)
	var be *fifoq.BatchError
	if err != nil && !errors.As(err, &be) {
		return nil, scGoErr(err)
	}
	codes := make([]string, len(handles))
	if be != nil {
		for _, e := range be.Entries {
			codes[e.Index] = fifoq.ErrorCode(e.Err)
		}
	}
	return codes, nil
}

func (g *scGo) changeVisibility(ctx context.Context, name, handle string, timeout time.Duration) error {
	q, err := g.queue(name)
	if err != nil {
		return err
	}
	return scGoErr(q.ChangeVisibility(ctx, handle, timeout))
}

func (g *scGo) purge(ctx context.Context, name string) error {
	q, err := g.queue(name)
	if err != nil {
		return err
	}
	return scGoErr(q.Purge(ctx))
}

func (g *scGo) counts(_ context.Context, name string) (scCounts, error) {
	q, err := g.queue(name)
	if err != nil {
		return scCounts{}, err
	}
	s := q.Stats()
	return scCounts{Visible: s.Visible, InFlight: s.InFlight, Delayed: s.Delayed}, nil
}

func (g *scGo) startMoveTask(ctx context.Context, src, dest string, rate int) (string, error) {
	q, err := g.queue(src)
	if err != nil {
		return "", err
	}
	var dq *fifoq.Queue
	if dest != "" {
		if dq, err = g.queue(dest); err != nil {
			return "", err
		}
	}
	tk, err := q.StartMoveTask(ctx, dq, rate)
	if err != nil {
		return "", scGoErr(err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	h := fmt.Sprintf("task-%d", len(g.tasks)+1)
	g.tasks[h] = tk
	return h, nil
}

func (g *scGo) cancelMoveTask(_ context.Context, handle string) error {
	g.mu.Lock()
	tk, ok := g.tasks[handle]
	g.mu.Unlock()
	if !ok {
		return fmt.Errorf("go driver: no task %q", handle)
	}
	return scGoErr(tk.Cancel())
}

func (g *scGo) listMoveTasks(_ context.Context, src string) ([]scTask, error) {
	q, err := g.queue(src)
	if err != nil {
		return nil, err
	}
	var out []scTask
	for _, s := range q.MoveTasks() {
		out = append(out, scTask{Status: s.State.String(), Moved: s.Moved, ToMove: s.ToMove, Dest: s.Destination})
	}
	return out, nil
}

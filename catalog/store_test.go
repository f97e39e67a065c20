package catalog_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/storage/storagetest"
)

// The catalogue in a store: what a restart, clean or a crash, keeps, and how its changes wait for the disk.

// csEnv is a catalogue on the disk of the in-memory engine, with a clock that runs on while it is down.
type csEnv struct {
	t     *testing.T
	disk  *storagetest.Disk
	eng   *storagetest.Memory
	st    *fifoq.Store
	c     *catalog.Catalog
	clock *fifoq.ManualClock
}

func newCsEnv(t *testing.T) *csEnv {
	e := &csEnv{t: t, disk: storagetest.NewDisk(), clock: fifoq.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	e.open()
	return e
}

func (e *csEnv) open() {
	e.t.Helper()
	eng, err := e.disk.Open()
	require.NoError(e.t, err)
	st, err := fifoq.OpenStore(eng, "disk")
	require.NoError(e.t, err)
	c, err := catalog.Open(st, catalog.WithClock(e.clock), catalog.WithDefaultNamespace(ctNS))
	require.NoError(e.t, err)
	e.eng, e.st, e.c = eng, st, c
}

// restart closes the catalogue and its store, or crashes the engine under them, and opens them again.
func (e *csEnv) restart(crash bool) {
	e.t.Helper()
	if crash {
		e.eng.Crash()
	} else {
		require.NoError(e.t, e.c.Close())
		require.NoError(e.t, e.st.Close())
	}
	e.open()
}

// definitions returns every queue's definition, by namespace and name.
func (e *csEnv) definitions() map[catalog.Namespace]map[string]catalog.Definition {
	out := make(map[catalog.Namespace]map[string]catalog.Definition)
	for _, q := range e.c.Queues() {
		d, ok := e.c.Definition(q.Namespace(), q.Name())
		require.True(e.t, ok)
		d.Created, d.Modified = d.Created.UTC(), d.Modified.UTC()
		if out[q.Namespace()] == nil {
			out[q.Namespace()] = make(map[string]catalog.Definition)
		}
		out[q.Namespace()][q.Name()] = d
	}
	return out
}

// A restart keeps every queue of every namespace with its definition (settings, redrive policies bound or
// pending, what SQS keeps, tags and times), the names deleted less than 60 seconds ago, and the move tasks:
// a task running at the stop goes on from its count.
func TestCatalogStoreRestart(t *testing.T) {
	for _, crash := range []bool{false, true} {
		e := newCsEnv(t)
		c, ctx := e.c, t.Context()
		ctCreate(t, c, ctNS, "dlq.fifo", catalog.Definition{RedriveAllowPolicy: &fifoq.RedriveAllowPolicy{
			Permission: fifoq.RedriveByQueue, Sources: []string{"orders.fifo"}}}, catalog.FieldRedriveAllowPolicy)
		ctCreate(t, c, ctNS, "orders.fifo", catalog.Definition{
			RedrivePolicy:      catalog.RedrivePolicy{DeadLetterQueue: "dlq.fifo", MaxReceiveCount: 2},
			DeduplicationScope: fifoq.DeduplicationScopeMessageGroup, ThroughputLimit: catalog.ThroughputPerMessageGroupID,
			Policy: `{"Version":"2012-10-17"}`, KMSMasterKeyID: "alias/aws/sqs", KMSDataKeyReusePeriod: 10 * time.Minute,
			Tags: map[string]string{"team": "payments"}},
			catalog.FieldRedrivePolicy|catalog.FieldDeduplicationScope|catalog.FieldThroughputLimit|catalog.FieldPolicy|
				catalog.FieldKMSMasterKeyID|catalog.FieldKMSDataKeyReusePeriod|catalog.FieldTags)
		ctCreate(t, c, ctOther, "orders.fifo", catalog.Definition{VisibilityTimeout: time.Minute}, catalog.FieldVisibilityTimeout)
		ctCreate(t, c, ctNS, "gone", catalog.Definition{}, 0)
		ctCreate(t, c, ctNS, "src", catalog.Definition{RedrivePolicy: catalog.RedrivePolicy{DeadLetterQueue: "gone", MaxReceiveCount: 5}},
			catalog.FieldRedrivePolicy)
		e.clock.Advance(10 * time.Second)
		require.NoError(t, c.Update(ctx, ctNS, "src", func(d *catalog.Definition) error { d.Delay = time.Second; return nil }))
		require.NoError(t, c.DeleteQueue(ctx, ctNS, "gone")) // src's policy is pending

		// A move task at 10 messages a second, paused after its first step.
		ctCreate(t, c, ctNS, "dest.fifo", catalog.Definition{}, 0)
		dlq, _ := c.Queue(ctNS, "dlq.fifo")
		for i := range 25 {
			_, err := dlq.Send(ctx, fifoq.Message{Body: "m", GroupID: "g", DeduplicationID: strings.Repeat("d", i+1)})
			require.NoError(t, err)
		}
		task, err := c.StartMoveTask(ctx, ctNS, "dlq.fifo", "dest.fifo", 10)
		require.NoError(t, err)
		require.Eventually(t, func() bool { return task.Status().Moved == 10 }, 10*time.Second, time.Millisecond)

		before := e.definitions()
		e.restart(crash)
		require.Equal(t, before, e.definitions(), "crash %v", crash)
		d, _ := e.c.Definition(ctNS, "src")
		require.True(t, d.RedrivePolicy.Pending)
		_, err = e.c.CreateQueue(ctx, ctNS, "gone", catalog.Definition{}, 0)
		require.ErrorIs(t, err, catalog.ErrQueueDeletedRecently, "the deleted name, after the restart")
		other, _ := e.c.Queue(ctOther, "orders.fifo")
		require.Regexp(t, `^ns-[0-9a-f]{32}\.fifo$`, other.FifoqName())

		tasks := e.c.MoveTasks(ctNS, "dlq.fifo")
		require.Len(t, tasks, 1)
		require.Equal(t, task.ID, tasks[0].ID)
		require.Equal(t, "dest.fifo", tasks[0].Destination)
		st := tasks[0].Status()
		require.Equal(t, fifoq.MoveTaskRunning, st.State, "crash %v", crash)
		require.Equal(t, 10, st.Moved, "the count is exact")
		dest, _ := e.c.Queue(ctNS, "dest.fifo")
		require.Equal(t, 10, dest.Stats().Visible)
		require.Eventually(t, func() bool { // a step's time at its rate, then the next steps
			e.clock.Advance(10 * time.Millisecond)
			return tasks[0].Status().Moved >= 20
		}, 10*time.Second, time.Millisecond)
		_, err = e.c.CancelMoveTask(ctx, tasks[0].ID)
		require.NoError(t, err)

		// The dead-letter queue comes back: src's policy is bound again, and stays so.
		e.clock.Advance(time.Minute)
		ctCreate(t, e.c, ctNS, "gone", catalog.Definition{}, 0)
		e.restart(crash)
		d, _ = e.c.Definition(ctNS, "src")
		require.Equal(t, catalog.RedrivePolicy{DeadLetterQueue: "gone", MaxReceiveCount: 5}, d.RedrivePolicy)
		require.Equal(t, fifoq.MoveTaskCancelled, e.c.MoveTasks(ctNS, "dlq.fifo")[0].Status().State)
		require.NoError(t, e.c.Close())
		require.NoError(t, e.st.Close())
	}
}

// No change of the catalogue waits for the disk under its lock: while the sync of a change of queue b is
// held (a disk slow for b's records), a send to queue a, a look at a, and the creation of another queue
// complete.
func TestCatalogChangesSyncOutsideLock(t *testing.T) {
	e := newCsEnv(t)
	c, ctx := e.c, t.Context()
	defer e.st.Close()
	defer c.Close()
	for _, name := range []string{"a", "b", "dlq"} {
		ctCreate(t, c, ctNS, name, catalog.Definition{}, 0)
	}
	a, _ := c.Queue(ctNS, "a")
	endsWith := func(name string) func(string) bool {
		return func(key string) bool { return strings.HasSuffix(key, name) }
	}
	changes := []struct {
		name   string
		hold   string // the queue whose records' syncs are held
		change func() error
	}{
		{"a redrive policy", "b", func() error {
			return c.Update(ctx, ctNS, "b", func(d *catalog.Definition) error {
				d.RedrivePolicy = catalog.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 3}
				return nil
			})
		}},
		{"a setting", "b", func() error {
			return c.Update(ctx, ctNS, "b", func(d *catalog.Definition) error { d.VisibilityTimeout = time.Minute; return nil })
		}},
		{"a redrive allow policy", "dlq", func() error {
			return c.Update(ctx, ctNS, "dlq", func(d *catalog.Definition) error {
				d.RedriveAllowPolicy = &fifoq.RedriveAllowPolicy{}
				return nil
			})
		}},
		{"tags", "b", func() error { return c.TagQueue(ctx, ctNS, "b", map[string]string{"k": "v"}) }},
		{"a creation", "c", func() error {
			_, err := c.CreateQueue(ctx, ctNS, "c", catalog.Definition{}, 0)
			return err
		}},
		{"a deletion", "b", func() error { return c.DeleteQueue(ctx, ctNS, "b") }},
	}
	for i, ch := range changes {
		e.eng.HoldSyncsOf(endsWith(ch.hold))
		done := make(chan error, 1)
		go func() { done <- ch.change() }()
		e.eng.WaitBlocked(1) // the change waits for its sync, held
		_, err := a.Send(ctx, fifoq.Message{Body: "m"})
		require.NoError(t, err, "%s: send to a", ch.name)
		_, ok := c.Definition(ctNS, "a")
		require.True(t, ok, ch.name)
		ctCreate(t, c, ctNS, "other"+string(rune('0'+i)), catalog.Definition{}, 0)
		select {
		case err := <-done:
			t.Fatalf("%s: returned before its sync: %v", ch.name, err)
		default:
		}
		e.eng.ReleaseHeld()
		require.NoError(t, <-done, ch.name)
	}
	require.Equal(t, len(changes), a.Stats().Visible)
}

// A failed write of the catalogue's records fails the store: the change returns ErrStoreFailed, and so does
// every later one, until the store is opened again, without the change that failed.
func TestCatalogStoreFailure(t *testing.T) {
	e := newCsEnv(t)
	ctx := t.Context()
	ctCreate(t, e.c, ctNS, "q", catalog.Definition{}, 0)
	e.eng.FailNextCommit(syscall.ENOSPC)
	err := e.c.TagQueue(ctx, ctNS, "q", map[string]string{"a": "1"})
	require.ErrorIs(t, err, fifoq.ErrStoreFailed)
	require.ErrorIs(t, err, syscall.ENOSPC)
	_, err = e.c.CreateQueue(ctx, ctNS, "other", catalog.Definition{}, 0)
	require.ErrorIs(t, err, fifoq.ErrStoreFailed)
	require.ErrorIs(t, e.c.CheckCreate(ctNS, "other"), fifoq.ErrStoreFailed)
	require.ErrorIs(t, e.c.Update(ctx, ctNS, "q", func(d *catalog.Definition) error { d.Delay = time.Second; return nil }), fifoq.ErrStoreFailed)
	require.ErrorIs(t, e.c.DeleteQueue(ctx, ctNS, "q"), fifoq.ErrStoreFailed)

	e.restart(true)
	d, ok := e.c.Definition(ctNS, "q")
	require.True(t, ok)
	require.Empty(t, d.Tags, "the failed change left nothing")
	require.NoError(t, e.c.TagQueue(ctx, ctNS, "q", map[string]string{"a": "1"}), "a store opened again takes changes")
	require.NoError(t, e.c.Close())
	require.NoError(t, e.st.Close())
}

// OpenCatalog refuses a nil store, and a store whose queues are open already.
func TestCatalogOpenErrors(t *testing.T) {
	_, err := catalog.Open(nil)
	require.Error(t, err)
	e := newCsEnv(t)
	defer e.st.Close()
	ctCreate(t, e.c, ctNS, "q", catalog.Definition{}, 0)
	_, err = catalog.Open(e.st)
	require.ErrorIs(t, err, fifoq.ErrQueueOpen, "a second catalogue on the same store")
	require.NoError(t, e.c.Close())
}

// A restart restores the redrive policies of two queues that are each other's dead-letter queue, bound,
// although the allow policy of one refuses the other (it changed after the other took it).
func TestCatalogStoreRestartCycleRefused(t *testing.T) {
	e := newCsEnv(t)
	c, ctx := e.c, t.Context()
	ctCreate(t, c, ctNS, "a", catalog.Definition{}, 0)
	ctCreate(t, c, ctNS, "b", catalog.Definition{}, 0)
	for _, p := range [][2]string{{"a", "b"}, {"b", "a"}} {
		require.NoError(t, c.Update(ctx, ctNS, p[0], func(d *catalog.Definition) error {
			d.RedrivePolicy = catalog.RedrivePolicy{DeadLetterQueue: p[1], MaxReceiveCount: 3}
			return nil
		}))
	}
	require.NoError(t, c.Update(ctx, ctNS, "b", func(d *catalog.Definition) error {
		d.RedriveAllowPolicy = &fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveByQueue, Sources: []string{"other"}}
		return nil
	}))
	before := e.definitions()
	require.False(t, before[ctNS]["a"].RedrivePolicy.Pending, "a's policy was bound before b's allow policy changed")
	for _, crash := range []bool{false, true} {
		e.restart(crash)
		require.Equal(t, before, e.definitions(), "crash %v", crash)
		require.Equal(t, "b", catalog.LiveDeadLetterQueue(e.c, ctNS, "a"), "crash %v: a's policy is bound", crash)
		require.Equal(t, "a", catalog.LiveDeadLetterQueue(e.c, ctNS, "b"), "crash %v: b's policy is bound", crash)
		require.Equal(t, fifoq.RedriveByQueue, catalog.LiveAttributes(e.c, ctNS, "b").RedriveAllowPolicy.Permission, "crash %v", crash)
	}
	require.NoError(t, e.c.Close())
	require.NoError(t, e.st.Close())
}

// A move task whose destination was deleted is listed with its destination's name after a restart, and
// again after the next: "" would say that it returned the messages to their sources.
func TestCatalogStoreTaskOfDeletedDestination(t *testing.T) {
	for _, crash := range []bool{false, true} {
		e := newCsEnv(t)
		c, ctx := e.c, t.Context()
		for _, name := range []string{"dlq", "dest", "slow"} {
			ctCreate(t, c, ctNS, name, catalog.Definition{}, 0)
		}
		ctCreate(t, c, ctNS, "src", catalog.Definition{RedrivePolicy: catalog.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 1}},
			catalog.FieldRedrivePolicy)
		dlq, _ := c.Queue(ctNS, "dlq")
		for range 3 {
			_, err := dlq.Send(ctx, fifoq.Message{Body: "m"})
			require.NoError(t, err)
		}
		done, err := c.StartMoveTask(ctx, ctNS, "dlq", "dest", 0)
		require.NoError(t, err)
		require.NoError(t, done.Wait(ctx))
		dest, _ := c.Queue(ctNS, "dest")
		for range 3 { // back to the dead-letter queue, for the next task
			_, err := dlq.Send(ctx, fifoq.Message{Body: "m"})
			require.NoError(t, err)
		}
		require.Equal(t, 3, dest.Stats().Visible)
		failed, err := c.StartMoveTask(ctx, ctNS, "dlq", "slow", 1) // one a second, on the manual clock
		require.NoError(t, err)
		require.NoError(t, c.DeleteQueue(ctx, ctNS, "dest"))
		require.NoError(t, c.DeleteQueue(ctx, ctNS, "slow")) // the running task ends FAILED
		require.NoError(t, failed.Wait(ctx))

		for round := range 2 {
			e.restart(crash)
			tasks := e.c.MoveTasks(ctNS, "dlq")
			require.Len(t, tasks, 2)
			for i, want := range []struct {
				id, dest string
				state    fifoq.MoveTaskState
			}{{failed.ID, "slow", fifoq.MoveTaskFailed}, {done.ID, "dest", fifoq.MoveTaskCompleted}} {
				require.Equal(t, want.id, tasks[i].ID)
				require.Equal(t, want.dest, tasks[i].Destination, "crash %v, restart %d: task %d", crash, round, i)
				require.Equal(t, want.dest, tasks[i].Status().Destination, "crash %v, restart %d: task %d", crash, round, i)
				require.Equal(t, want.state, tasks[i].Status().State, "crash %v, restart %d: task %d", crash, round, i)
			}
		}
		require.NoError(t, e.c.Close())
		require.NoError(t, e.st.Close())
	}
}

// A catalogue takes redrive policies that form cycles, a queue's own included; in a store, a restart (a
// crash too) binds them again. Deleting a queue of a cycle leaves the policy that named it pending, as for
// any dead-letter queue.
func TestCatalogDeadLetterCycles(t *testing.T) {
	t.Parallel()
	e := newCsEnv(t)
	ctx := t.Context()
	policy := func(dlq string, max int) func(d *catalog.Definition) error {
		return func(d *catalog.Definition) error {
			d.Apply(catalog.Definition{RedrivePolicy: catalog.RedrivePolicy{DeadLetterQueue: dlq, MaxReceiveCount: max}}, catalog.FieldRedrivePolicy)
			return nil
		}
	}
	for _, name := range []string{"self", "a", "b", "c"} {
		_, err := e.c.CreateQueue(ctx, ctNS, name, catalog.Definition{}, 0)
		require.NoError(t, err)
	}
	require.NoError(t, e.c.Update(ctx, ctNS, "self", policy("self", 42)))
	require.NoError(t, e.c.Update(ctx, ctNS, "a", policy("b", 1)))
	require.NoError(t, e.c.Update(ctx, ctNS, "b", policy("c", 2)))
	require.NoError(t, e.c.Update(ctx, ctNS, "c", policy("a", 3)))
	dlqs := func() map[string]string {
		out := make(map[string]string)
		for _, q := range e.c.List(ctNS, "") {
			d, ok := e.c.Definition(ctNS, q.Name())
			require.True(t, ok)
			out[q.Name()] = fmt.Sprintf("%s/%d/pending=%v", d.RedrivePolicy.DeadLetterQueue, d.RedrivePolicy.MaxReceiveCount, d.RedrivePolicy.Pending)
			if dlq := catalog.LiveDeadLetterQueue(e.c, ctNS, q.Name()); dlq != "" {
				out[q.Name()] += " bound to " + dlq
			}
		}
		return out
	}
	want := map[string]string{
		"self": "self/42/pending=false bound to self",
		"a":    "b/1/pending=false bound to b",
		"b":    "c/2/pending=false bound to c",
		"c":    "a/3/pending=false bound to a",
	}
	require.Equal(t, want, dlqs())
	self, _ := e.c.Queue(ctNS, "self")
	_, err := self.Send(ctx, fifoq.Message{Body: "m"})
	require.NoError(t, err)
	for _, crash := range []bool{false, true} {
		e.restart(crash)
		require.Equal(t, want, dlqs(), "after a restart (crash %v)", crash)
	}
	self, _ = e.c.Queue(ctNS, "self")
	var where []string
	for m := range self.Messages() {
		where = append(where, fmt.Sprintf("%s/%d/%s", m.Body, m.ReceiveCount, m.DeadLetterSource))
	}
	require.Equal(t, []string{"m/0/"}, where)

	require.NoError(t, e.c.DeleteQueue(ctx, ctNS, "a"))
	want["c"] = "a/3/pending=true"
	delete(want, "a")
	require.Equal(t, want, dlqs())
	require.NoError(t, e.c.DeleteQueue(ctx, ctNS, "self"), "a queue that is its own dead-letter queue can be deleted")
	e.restart(true)
	delete(want, "self")
	require.Equal(t, want, dlqs())
}

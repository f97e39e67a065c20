package catalog_test

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/storage/storagetest"
)

// The catalogue in a store: what a restart, clean or a crash, keeps, and how its changes wait for the disk.

// csEnv is a catalogue on the disk of the in-memory engine, with a clock that runs on while it is down.
type csEnv struct {
	t     *testing.T
	disk  *storagetest.Disk
	eng   *storagetest.Memory
	st    *fifoq.Store
	c     *fifoq.Catalog
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
	c, err := fifoq.Open(st, fifoq.WithClock(e.clock), fifoq.WithDefaultNamespace(ctNS))
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
func (e *csEnv) definitions() map[fifoq.Namespace]map[string]fifoq.Definition {
	out := make(map[fifoq.Namespace]map[string]fifoq.Definition)
	for _, q := range e.c.Queues() {
		d, ok := e.c.Definition(q.Namespace, q.Name)
		require.True(e.t, ok)
		d.Created, d.Modified = d.Created.UTC(), d.Modified.UTC()
		if out[q.Namespace] == nil {
			out[q.Namespace] = make(map[string]fifoq.Definition)
		}
		out[q.Namespace][q.Name] = d
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
		ctCreate(t, c, ctNS, "dlq.fifo", fifoq.Definition{RedriveAllowPolicy: &fifoq.RedriveAllowPolicy{
			Permission: fifoq.RedriveByQueue, Sources: []string{"orders.fifo"}}}, fifoq.FieldRedriveAllowPolicy)
		ctCreate(t, c, ctNS, "orders.fifo", fifoq.Definition{
			RedrivePolicy:      fifoq.RedrivePolicy{DeadLetterQueue: "dlq.fifo", MaxReceiveCount: 2},
			DeduplicationScope: fifoq.DeduplicationScopeMessageGroup, ThroughputLimit: fifoq.ThroughputPerMessageGroupID,
			Policy: `{"Version":"2012-10-17"}`, KMSMasterKeyID: "alias/aws/sqs", KMSDataKeyReusePeriod: 10 * time.Minute,
			Tags: map[string]string{"team": "payments"}},
			fifoq.FieldRedrivePolicy|fifoq.FieldDeduplicationScope|fifoq.FieldThroughputLimit|fifoq.FieldPolicy|
				fifoq.FieldKMSMasterKeyID|fifoq.FieldKMSDataKeyReusePeriod|fifoq.FieldTags)
		ctCreate(t, c, ctOther, "orders.fifo", fifoq.Definition{VisibilityTimeout: time.Minute}, fifoq.FieldVisibilityTimeout)
		ctCreate(t, c, ctNS, "gone", fifoq.Definition{}, 0)
		ctCreate(t, c, ctNS, "src", fifoq.Definition{RedrivePolicy: fifoq.RedrivePolicy{DeadLetterQueue: "gone", MaxReceiveCount: 5}},
			fifoq.FieldRedrivePolicy)
		e.clock.Advance(10 * time.Second)
		require.NoError(t, c.Update(ctx, ctNS, "src", func(d *fifoq.Definition) error { d.Delay = time.Second; return nil }))
		require.NoError(t, c.DeleteQueue(ctx, ctNS, "gone")) // src's policy is pending

		// A move task at 10 messages a second, paused after its first step.
		ctCreate(t, c, ctNS, "dest.fifo", fifoq.Definition{}, 0)
		dlq, _ := c.Queue(ctNS, "dlq.fifo")
		for i := range 25 {
			_, err := dlq.Queue.Send(ctx, fifoq.Message{Body: "m", GroupID: "g", DeduplicationID: strings.Repeat("d", i+1)})
			require.NoError(t, err)
		}
		task, err := c.StartMoveTask(ctx, ctNS, "dlq.fifo", "dest.fifo", 10)
		require.NoError(t, err)
		require.Eventually(t, func() bool { return task.Task.Status().Moved == 10 }, 10*time.Second, time.Millisecond)

		before := e.definitions()
		e.restart(crash)
		require.Equal(t, before, e.definitions(), "crash %v", crash)
		d, _ := e.c.Definition(ctNS, "src")
		require.True(t, d.RedrivePolicy.Pending)
		_, err = e.c.CreateQueue(ctx, ctNS, "gone", fifoq.Definition{}, 0)
		require.ErrorIs(t, err, fifoq.ErrQueueDeletedRecently, "the deleted name, after the restart")
		other, _ := e.c.Queue(ctOther, "orders.fifo")
		require.Regexp(t, `^ns-[0-9a-f]{32}\.fifo$`, other.Queue.Name())

		tasks := e.c.MoveTasks(ctNS, "dlq.fifo")
		require.Len(t, tasks, 1)
		require.Equal(t, task.ID, tasks[0].ID)
		require.Equal(t, "dest.fifo", tasks[0].Destination)
		st := tasks[0].Task.Status()
		require.Equal(t, fifoq.MoveTaskRunning, st.State, "crash %v", crash)
		require.Equal(t, 10, st.Moved, "the count is exact")
		dest, _ := e.c.Queue(ctNS, "dest.fifo")
		require.Equal(t, 10, dest.Queue.Stats().Visible)
		require.Eventually(t, func() bool { // a step's time at its rate, then the next steps
			e.clock.Advance(10 * time.Millisecond)
			return tasks[0].Task.Status().Moved >= 20
		}, 10*time.Second, time.Millisecond)
		_, err = e.c.CancelMoveTask(ctx, tasks[0].ID)
		require.NoError(t, err)

		// The dead-letter queue comes back: src's policy is bound again, and stays so.
		e.clock.Advance(time.Minute)
		ctCreate(t, e.c, ctNS, "gone", fifoq.Definition{}, 0)
		e.restart(crash)
		d, _ = e.c.Definition(ctNS, "src")
		require.Equal(t, fifoq.RedrivePolicy{DeadLetterQueue: "gone", MaxReceiveCount: 5}, d.RedrivePolicy)
		require.Equal(t, fifoq.MoveTaskCancelled, e.c.MoveTasks(ctNS, "dlq.fifo")[0].Task.Status().State)
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
		ctCreate(t, c, ctNS, name, fifoq.Definition{}, 0)
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
			return c.Update(ctx, ctNS, "b", func(d *fifoq.Definition) error {
				d.RedrivePolicy = fifoq.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 3}
				return nil
			})
		}},
		{"a setting", "b", func() error {
			return c.Update(ctx, ctNS, "b", func(d *fifoq.Definition) error { d.VisibilityTimeout = time.Minute; return nil })
		}},
		{"a redrive allow policy", "dlq", func() error {
			return c.Update(ctx, ctNS, "dlq", func(d *fifoq.Definition) error {
				d.RedriveAllowPolicy = &fifoq.RedriveAllowPolicy{}
				return nil
			})
		}},
		{"tags", "b", func() error { return c.TagQueue(ctx, ctNS, "b", map[string]string{"k": "v"}) }},
		{"a creation", "c", func() error {
			_, err := c.CreateQueue(ctx, ctNS, "c", fifoq.Definition{}, 0)
			return err
		}},
		{"a deletion", "b", func() error { return c.DeleteQueue(ctx, ctNS, "b") }},
	}
	for i, ch := range changes {
		e.eng.HoldSyncsOf(endsWith(ch.hold))
		done := make(chan error, 1)
		go func() { done <- ch.change() }()
		e.eng.WaitBlocked(1) // the change waits for its sync, held
		_, err := a.Queue.Send(ctx, fifoq.Message{Body: "m"})
		require.NoError(t, err, "%s: send to a", ch.name)
		_, ok := c.Definition(ctNS, "a")
		require.True(t, ok, ch.name)
		ctCreate(t, c, ctNS, "other"+string(rune('0'+i)), fifoq.Definition{}, 0)
		select {
		case err := <-done:
			t.Fatalf("%s: returned before its sync: %v", ch.name, err)
		default:
		}
		e.eng.ReleaseHeld()
		require.NoError(t, <-done, ch.name)
	}
	require.Equal(t, len(changes), a.Queue.Stats().Visible)
}

// A failed write of the catalogue's records fails the store: the change returns ErrStoreFailed, and so does
// every later one, until the store is opened again, without the change that failed.
func TestCatalogStoreFailure(t *testing.T) {
	e := newCsEnv(t)
	ctx := t.Context()
	ctCreate(t, e.c, ctNS, "q", fifoq.Definition{}, 0)
	e.eng.FailNextCommit(syscall.ENOSPC)
	err := e.c.TagQueue(ctx, ctNS, "q", map[string]string{"a": "1"})
	require.ErrorIs(t, err, fifoq.ErrStoreFailed)
	require.ErrorIs(t, err, syscall.ENOSPC)
	_, err = e.c.CreateQueue(ctx, ctNS, "other", fifoq.Definition{}, 0)
	require.ErrorIs(t, err, fifoq.ErrStoreFailed)
	require.ErrorIs(t, e.c.CheckCreate(ctNS, "other"), fifoq.ErrStoreFailed)
	require.ErrorIs(t, e.c.Update(ctx, ctNS, "q", func(d *fifoq.Definition) error { d.Delay = time.Second; return nil }), fifoq.ErrStoreFailed)
	require.ErrorIs(t, e.c.DeleteQueue(ctx, ctNS, "q"), fifoq.ErrStoreFailed)

	e.restart(true)
	d, ok := e.c.Definition(ctNS, "q")
	require.True(t, ok)
	require.Empty(t, d.Tags, "the failed change left nothing")
	require.NoError(t, e.c.TagQueue(ctx, ctNS, "q", map[string]string{"a": "1"}), "a store opened again takes changes")
	require.NoError(t, e.c.Close())
	require.NoError(t, e.st.Close())
}

// Open refuses a nil store, and a store whose queues are open already.
func TestCatalogOpenErrors(t *testing.T) {
	_, err := fifoq.Open(nil)
	require.Error(t, err)
	e := newCsEnv(t)
	defer e.st.Close()
	ctCreate(t, e.c, ctNS, "q", fifoq.Definition{}, 0)
	_, err = fifoq.Open(e.st)
	require.ErrorIs(t, err, fifoq.ErrQueueOpen, "a second catalogue on the same store")
	require.NoError(t, e.c.Close())
}

// A restart restores the redrive policies of two queues that are each other's dead-letter queue, bound,
// although the allow policy of one refuses the other (it changed after the other took it).
func TestCatalogStoreRestartCycleRefused(t *testing.T) {
	e := newCsEnv(t)
	c, ctx := e.c, t.Context()
	ctCreate(t, c, ctNS, "a", fifoq.Definition{}, 0)
	ctCreate(t, c, ctNS, "b", fifoq.Definition{}, 0)
	for _, p := range [][2]string{{"a", "b"}, {"b", "a"}} {
		require.NoError(t, c.Update(ctx, ctNS, p[0], func(d *fifoq.Definition) error {
			d.RedrivePolicy = fifoq.RedrivePolicy{DeadLetterQueue: p[1], MaxReceiveCount: 3}
			return nil
		}))
	}
	require.NoError(t, c.Update(ctx, ctNS, "b", func(d *fifoq.Definition) error {
		d.RedriveAllowPolicy = &fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveByQueue, Sources: []string{"other"}}
		return nil
	}))
	before := e.definitions()
	require.False(t, before[ctNS]["a"].RedrivePolicy.Pending, "a's policy was bound before b's allow policy changed")
	for _, crash := range []bool{false, true} {
		e.restart(crash)
		require.Equal(t, before, e.definitions(), "crash %v", crash)
		a, _ := e.c.Queue(ctNS, "a")
		b, _ := e.c.Queue(ctNS, "b")
		require.Same(t, b.Queue, a.Queue.Attributes().DeadLetterQueue, "crash %v: a's policy is bound", crash)
		require.Same(t, a.Queue, b.Queue.Attributes().DeadLetterQueue, "crash %v: b's policy is bound", crash)
		require.Equal(t, fifoq.RedriveByQueue, b.Queue.Attributes().RedriveAllowPolicy.Permission, "crash %v", crash)
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
			ctCreate(t, c, ctNS, name, fifoq.Definition{}, 0)
		}
		ctCreate(t, c, ctNS, "src", fifoq.Definition{RedrivePolicy: fifoq.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 1}},
			fifoq.FieldRedrivePolicy)
		dlq, _ := c.Queue(ctNS, "dlq")
		for range 3 {
			_, err := dlq.Queue.Send(ctx, fifoq.Message{Body: "m"})
			require.NoError(t, err)
		}
		done, err := c.StartMoveTask(ctx, ctNS, "dlq", "dest", 0)
		require.NoError(t, err)
		require.NoError(t, done.Task.Wait(ctx))
		dest, _ := c.Queue(ctNS, "dest")
		for range 3 { // back to the dead-letter queue, for the next task
			_, err := dlq.Queue.Send(ctx, fifoq.Message{Body: "m"})
			require.NoError(t, err)
		}
		require.Equal(t, 3, dest.Queue.Stats().Visible)
		failed, err := c.StartMoveTask(ctx, ctNS, "dlq", "slow", 1) // one a second, on the manual clock
		require.NoError(t, err)
		require.NoError(t, c.DeleteQueue(ctx, ctNS, "dest"))
		require.NoError(t, c.DeleteQueue(ctx, ctNS, "slow")) // the running task ends FAILED
		require.NoError(t, failed.Task.Wait(ctx))

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
				require.Equal(t, want.dest, tasks[i].Task.Status().Destination, "crash %v, restart %d: task %d", crash, round, i)
				require.Equal(t, want.state, tasks[i].Task.Status().State, "crash %v, restart %d: task %d", crash, round, i)
			}
		}
		require.NoError(t, e.c.Close())
		require.NoError(t, e.st.Close())
	}
}

package catalog

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/storage"
	"github.com/fifoq/fifoq/storage/storagetest"
)

// Tests of the catalogue's records, which need their layout.

var ciNS = Namespace{Account: "000000000000", Region: "us-east-1"}

// recordsArea is the first byte of the engine's keys of the store's records area (fifoq's records.go), under
// which the catalogue keeps its records.
const recordsArea = 0x03

// ciOpen opens a store and a catalogue on disk.
func ciOpen(t *testing.T, disk *storagetest.Disk, clock fifoq.Clock) (*Catalog, *fifoq.Store, error) {
	t.Helper()
	eng, err := disk.Open()
	require.NoError(t, err)
	st, err := fifoq.OpenStore(eng, "disk")
	require.NoError(t, err)
	c, err := Open(st, WithClock(clock), WithDefaultNamespace(ciNS))
	return c, st, err
}

// ciWrite writes records to the disk while no store is open on it.
func ciWrite(t *testing.T, disk *storagetest.Disk, edit func(b storage.Batch)) {
	t.Helper()
	eng, err := disk.Open()
	require.NoError(t, err)
	b := eng.NewBatch()
	edit(b)
	_, err = eng.Commit(b, false)
	require.NoError(t, err)
	require.NoError(t, eng.Close())
}

// A DeleteQueue cut short by a crash after its deletion was recorded, before the queue was deleted from the
// store, is finished by the next Open: the queue is gone, and its name waits its 60 seconds.
func TestCatalogInterruptedDelete(t *testing.T) {
	clock := fifoq.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	disk := storagetest.NewDisk()
	c, st, err := ciOpen(t, disk, clock)
	require.NoError(t, err)
	victim, err := c.CreateQueue(context.Background(), ciNS, "victim", Definition{}, 0)
	require.NoError(t, err)
	_, err = victim.Send(context.Background(), fifoq.Message{Body: "doomed"})
	require.NoError(t, err)
	_, err = c.CreateQueue(context.Background(), ciNS, "kept", Definition{}, 0)
	require.NoError(t, err)
	var j journal
	_, _, err = c.deleteQueue(&j, ciNS, "victim") // the deletion recorded, and then a crash
	require.NoError(t, err)
	require.NoError(t, j.wait())
	require.NoError(t, c.Close())
	require.NoError(t, st.Close())
	require.Equal(t, []string{"kept", "victim"}, storeQueues(t, disk), "the queue is in the store still")

	c, st, err = ciOpen(t, disk, clock)
	require.NoError(t, err)
	require.Equal(t, []string{"kept"}, st.Queues(), "the deletion finished")
	_, err = c.CreateQueue(context.Background(), ciNS, "victim", Definition{}, 0)
	require.ErrorIs(t, err, ErrQueueDeletedRecently)
	clock.Advance(time.Minute)
	q, err := c.CreateQueue(context.Background(), ciNS, "victim", Definition{}, 0)
	require.NoError(t, err)
	require.Zero(t, q.Stats().Visible, "a new queue, without the old one's messages")
	require.NoError(t, c.Close())
	require.NoError(t, st.Close())
}

// storeQueues returns the queues of the store on disk.
func storeQueues(t *testing.T, disk *storagetest.Disk) []string {
	t.Helper()
	eng, err := disk.Open()
	require.NoError(t, err)
	st, err := fifoq.OpenStore(eng, "disk")
	require.NoError(t, err)
	defer st.Close()
	return st.Queues()
}

// The names deleted more than 60 seconds ago are forgotten, records and all, at the next CreateQueue or
// DeleteQueue.
func TestCatalogDeletedNamesPruned(t *testing.T) {
	clock := fifoq.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	disk := storagetest.NewDisk()
	c, st, err := ciOpen(t, disk, clock)
	require.NoError(t, err)
	defer st.Close()
	defer c.Close()
	ctx := context.Background()
	for _, name := range []string{"a", "b", "c"} {
		_, err := c.CreateQueue(ctx, ciNS, name, Definition{}, 0)
		require.NoError(t, err)
		require.NoError(t, c.DeleteQueue(ctx, ciNS, name))
	}
	require.Len(t, c.deleted, 3)
	require.Equal(t, 3, countRecords(t, st, catalogDeleted))
	clock.Advance(deletedReuseDelay)
	_, err = c.CreateQueue(ctx, ciNS, "other", Definition{}, 0)
	require.NoError(t, err)
	require.Empty(t, c.deleted, "names deleted 60 s ago")
	require.Zero(t, countRecords(t, st, catalogDeleted))
}

func countRecords(t *testing.T, st *fifoq.Store, kind byte) int {
	t.Helper()
	n := 0
	require.NoError(t, st.Records().Scan([]byte{kind}, []byte{kind + 1}, func(k, v []byte) error {
		n++
		return nil
	}))
	return n
}

// A store whose catalogue records do not decode is refused, naming the record: never a panic, never a queue
// left out.
func TestCatalogCorruptRecords(t *testing.T) {
	good := `{"account":"000000000000","region":"us-east-1","name":"jobs","created":1,"modified":1,` +
		`"visibilityTimeout":30000000000,"delay":0,"retention":345600000000000,"receiveWaitTime":0,"maxMessageSize":1048576,` +
		`"sqsManagedSse":true}`
	with := func(name, fields string) string {
		return strings.Replace(strings.Replace(good, `"name":"jobs"`, `"name":"`+name+`"`, 1), "{", "{"+fields, 1)
	}
	for _, tc := range []struct {
		name  string
		key   []byte
		value []byte
		want  string
	}{
		{"version", catalogKeyOf(catalogQueue, "jobs"), append([]byte{2}, good...), "catalogue record of queue jobs: version 2, want 1"},
		{"empty", catalogKeyOf(catalogQueue, "jobs"), nil, "catalogue record of queue jobs: empty value"},
		{"not JSON", catalogKeyOf(catalogQueue, "jobs"), []byte("\x01{"), "catalogue record of queue jobs: unexpected EOF"},
		{"unknown field", catalogKeyOf(catalogQueue, "jobs"), []byte("\x01" + with("jobs", `"colour":"red",`)),
			`catalogue record of queue jobs: json: unknown field "colour"`},
		{"trailing data", catalogKeyOf(catalogQueue, "jobs"), []byte("\x01" + good + "{}"), "catalogue record of queue jobs: data after the record"},
		{"no created", catalogKeyOf(catalogQueue, "jobs"), []byte("\x01" + strings.Replace(good, `"created":1`, `"created":0`, 1)),
			"catalogue record of queue jobs: created 0"},
		{"out of range", catalogKeyOf(catalogQueue, "jobs"), []byte("\x01" + strings.Replace(good, "30000000000", "-1", 1)),
			"catalogue record of queue jobs: fifoq: invalid queue attribute"},
		{"bad name", catalogKeyOf(catalogQueue, "bad name"), []byte("\x01" + with("bad name", "")),
			"catalogue record of queue bad name: fifoq: invalid queue name"},
		{"another key", catalogKeyOf(catalogQueue, "jobs"), []byte("\x01" + with("other", "")),
			"catalogue record of queue jobs: queue other of {000000000000 us-east-1}, whose name in the store is other"},
		{"FIFO attribute", catalogKeyOf(catalogQueue, "jobs"), []byte("\x01" + with("jobs", `"throughputLimit":1,`)),
			"catalogue record of queue jobs: FIFO settings on a standard queue"},
		{"scope", catalogKeyOf(catalogQueue, "jobs.fifo"), []byte("\x01" + with("jobs.fifo", `"throughputLimit":1,"deduplicationScope":7,`)),
			"catalogue record of queue jobs.fifo: fifoq: invalid queue attribute: deduplication scope 7"},
		{"maxReceiveCount", catalogKeyOf(catalogQueue, "jobs"), []byte("\x01" + with("jobs", `"deadLetterQueue":"dlq","maxReceiveCount":0,`)),
			"catalogue record of queue jobs: fifoq: invalid redrive policy: maxReceiveCount 0"},
		{"deleted", catalogKeyOf(catalogDeleted, "gone"), []byte("\x01{}"), `catalogue record of deleted queue gone: name "", deleted at 0`},
		{"task", append(catalogKeyOf(kindCatalogTask, "jobs"), 0, 0, 0, 0, 0, 0, 0, 0, 1), []byte(`{"id":"x"}`),
			"catalogue record of move task 1 of queue jobs: version 123, want 1"},
		{"unknown kind", catalogKeyOf('z', "x"), []byte{1}, `catalogue record "zx": unknown key`},
	} {
		disk := storagetest.NewDisk()
		clock := fifoq.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		c, st, err := ciOpen(t, disk, clock)
		require.NoError(t, err)
		require.NoError(t, c.Close())
		require.NoError(t, st.Close())
		ciWrite(t, disk, func(b storage.Batch) { b.Set(append([]byte{recordsArea}, tc.key...), tc.value) })

		c, st, err = ciOpen(t, disk, clock)
		require.ErrorIs(t, err, fifoq.ErrStoreCorrupt, tc.name)
		require.ErrorContains(t, err, tc.want, tc.name)
		require.Nil(t, c, tc.name)
		require.NoError(t, st.Close())
	}
}

// A store with a running move task and a corrupt topic record is refused, and the task does not run: a
// catalogue that Open does not return resumes no task.
func TestCatalogCorruptTopicResumesNoTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := fifoq.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		disk := storagetest.NewDisk()
		c, st, err := ciOpen(t, disk, clock)
		require.NoError(t, err)
		ctx := context.Background()
		for _, name := range []string{"dlq", "dest"} {
			_, err := c.CreateQueue(ctx, ciNS, name, Definition{}, 0)
			require.NoError(t, err)
		}
		_, err = c.CreateQueue(ctx, ciNS, "src", Definition{RedrivePolicy: RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 1}},
			FieldRedrivePolicy)
		require.NoError(t, err)
		dlq, _ := c.Queue(ciNS, "dlq")
		for range 5 {
			_, err := dlq.Send(ctx, fifoq.Message{Body: "m"})
			require.NoError(t, err)
		}
		task, err := c.StartMoveTask(ctx, ciNS, "dlq", "dest", 1) // one a second, on the manual clock
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, fifoq.MoveTaskRunning, task.Status().State)
		require.NoError(t, c.Close())
		before := dlq.Stats().Visible
		require.NoError(t, st.Close())
		k := catalogKey{ciNS, "bad name"}
		bad := append([]byte{recordsArea}, topicRecordKey(k)...)
		ciWrite(t, disk, func(b storage.Batch) {
			b.Set(bad, encodeRecord(topicRecord{Account: k.ns.Account, Region: k.ns.Region, Name: k.name, Created: 1}))
		})

		c, st, err = ciOpen(t, disk, clock)
		require.ErrorIs(t, err, fifoq.ErrStoreCorrupt)
		require.ErrorContains(t, err, "bad name")
		require.Nil(t, c)
		_, err = fifoq.New("dlq", fifoq.WithStore(st))
		require.ErrorIs(t, err, fifoq.ErrQueueOpen, "the queues opened before the error stay open on the store")
		clock.Advance(time.Minute)
		synctest.Wait()
		require.NoError(t, st.Close())

		// Without the bad record the catalogue opens: the dead-letter queue holds what it held before the
		// failed Open, whose task moved nothing.
		ciWrite(t, disk, func(b storage.Batch) { b.Delete(bad) })
		c, st, err = ciOpen(t, disk, clock)
		require.NoError(t, err)
		dlq, _ = c.Queue(ciNS, "dlq")
		require.Equal(t, before, dlq.Stats().Visible, "no message moved while Open failed")
		require.NoError(t, c.Close())
		require.NoError(t, st.Close())
	})
}

// The catalogue knows the namespace and name of the fifoq names of its queues of other namespaces, and of
// those deleted less than 60 seconds ago, and of no others: names that requests ask about and that name no
// queue leave it as it was.
func TestCatalogNamesBounded(t *testing.T) {
	clock := fifoq.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := New(WithClock(clock), WithDefaultNamespace(ciNS))
	ctx := context.Background()
	other := Namespace{Account: "111111111111", Region: "eu-west-1"}
	_, err := c.CreateQueue(ctx, other, "dlq", Definition{}, 0)
	require.NoError(t, err)
	names := func() int {
		c.namesMu.RLock()
		defer c.namesMu.RUnlock()
		return len(c.names)
	}
	require.Equal(t, 1, names())

	for i := range 1000 {
		name := "missing-" + strconv.Itoa(i)
		require.NoError(t, c.CheckCreate(other, name))
		_, err := c.CreateQueue(ctx, other, name, Definition{VisibilityTimeout: -1}, FieldVisibilityTimeout)
		require.ErrorIs(t, err, fifoq.ErrInvalidQueueAttribute)
		c.Find(c.queueName(other, name))
	}
	for i := range 100 {
		require.NoError(t, c.Update(ctx, other, "dlq", func(d *Definition) error {
			d.RedriveAllowPolicy = &fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveByQueue, Sources: []string{"src-" + strconv.Itoa(i)}}
			return nil
		}))
	}
	require.Equal(t, 1, names(), "1000 names of no queue asked about, 100 allow policies naming no queue")

	fn := c.queueName(other, "dlq")
	require.NoError(t, c.DeleteQueue(ctx, other, "dlq"))
	k, _, ok := c.Find(fn)
	require.False(t, ok)
	require.Equal(t, QueueKey{Namespace: other, Name: "dlq"}, k, "a name deleted less than 60 s ago is known")
	clock.Advance(deletedReuseDelay)
	_, err = c.CreateQueue(ctx, ciNS, "home", Definition{}, 0) // forgets the names deleted 60 s ago
	require.NoError(t, err)
	require.Zero(t, names(), "the deleted name is forgotten with its deletion")
}

// A move task is listed as ended only once its end is durable: while the write of its end is held, it is
// listed as running (or cancelling) and no second task of its queue starts, so a crash then cannot leave two
// running tasks on disk, the second of which a restart would drop. Once the end is written, the next task
// starts, and after a crash the store holds both as they were acknowledged.
func TestCatalogMoveTaskEndDurableBeforeListed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := fifoq.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		disk := storagetest.NewDisk()
		eng, err := disk.Open()
		require.NoError(t, err)
		st, err := fifoq.OpenStore(eng, "disk")
		require.NoError(t, err)
		c, err := Open(st, WithClock(clock), WithDefaultNamespace(ciNS))
		require.NoError(t, err)
		ctx := context.Background()
		for _, name := range []string{"dlq", "dest"} {
			_, err := c.CreateQueue(ctx, ciNS, name, Definition{}, 0)
			require.NoError(t, err)
		}
		_, err = c.CreateQueue(ctx, ciNS, "src", Definition{RedrivePolicy: RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 1}},
			FieldRedrivePolicy)
		require.NoError(t, err)
		dlq, _ := c.Queue(ciNS, "dlq")
		for range 5 {
			_, err := dlq.Send(ctx, fifoq.Message{Body: "m"})
			require.NoError(t, err)
		}
		first, err := c.StartMoveTask(ctx, ciNS, "dlq", "dest", 1) // one a second, on a clock nobody moves
		require.NoError(t, err)
		synctest.Wait() // it moved one message, and waits for its next second

		eng.HoldNextCommit() // the write of the end of the first task
		cancelled := make(chan error, 1)
		go func() {
			_, err := c.CancelMoveTask(ctx, first.ID)
			cancelled <- err
		}()
		synctest.Wait()
		eng.WaitBlocked(1) // the end's write is held
		state := c.MoveTasks(ciNS, "dlq")[0].Status().State
		require.Contains(t, []fifoq.MoveTaskState{fifoq.MoveTaskRunning, fifoq.MoveTaskCancelling}, state,
			"listed as %v before its end is written", state)
		_, err = c.StartMoveTask(ctx, ciNS, "dlq", "dest", 1)
		require.ErrorIs(t, err, fifoq.ErrMoveTaskRunning, "a second task while the end of the first may still be lost")

		eng.ReleaseHeld()
		require.NoError(t, <-cancelled)
		require.Equal(t, fifoq.MoveTaskCancelled, c.MoveTasks(ciNS, "dlq")[0].Status().State)
		second, err := c.StartMoveTask(ctx, ciNS, "dlq", "dest", 1)
		require.NoError(t, err)
		synctest.Wait()
		require.NoError(t, c.Close())
		eng.Crash()

		eng, err = disk.Open()
		require.NoError(t, err)
		st, err = fifoq.OpenStore(eng, "disk")
		require.NoError(t, err)
		c, err = Open(st, WithClock(clock), WithDefaultNamespace(ciNS))
		require.NoError(t, err)
		tasks := c.MoveTasks(ciNS, "dlq")
		require.Len(t, tasks, 2, "both tasks are kept: none was dropped as a second running task")
		require.Equal(t, second.ID, tasks[0].ID)
		require.Equal(t, fifoq.MoveTaskRunning, tasks[0].Status().State)
		require.Equal(t, first.ID, tasks[1].ID)
		require.Equal(t, fifoq.MoveTaskCancelled, tasks[1].Status().State)
		require.NoError(t, c.Close())
		require.NoError(t, st.Close())
	})
}

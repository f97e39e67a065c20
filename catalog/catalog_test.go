package catalog_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
)

// The catalogue's rules, in memory (catalog_store_test.go has them in a store).

var (
	ctNS    = catalog.Namespace{Account: "000000000000", Region: "us-east-1"}
	ctOther = catalog.Namespace{Account: "111111111111", Region: "eu-west-1"}
)

func newCtCatalog(t *testing.T) (*catalog.Catalog, *fifoq.ManualClock) {
	t.Helper()
	clock := fifoq.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := catalog.New(catalog.WithClock(clock), catalog.WithDefaultNamespace(ctNS))
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c, clock
}

func ctCreate(t *testing.T, c *catalog.Catalog, ns catalog.Namespace, name string, d catalog.Definition, f catalog.Fields) catalog.Queue {
	t.Helper()
	q, err := c.CreateQueue(t.Context(), ns, name, d, f)
	require.NoError(t, err, "CreateQueue %s", name)
	return q
}

// CreateQueue makes the queue of the definition given, returns an existing queue when the settings given
// agree with it, and refuses them when one differs, naming the first that does as SQS does.
func TestCatalogCreateQueue(t *testing.T) {
	t.Parallel()
	c, _ := newCtCatalog(t)
	q := ctCreate(t, c, ctNS, "jobs.fifo", catalog.Definition{VisibilityTimeout: time.Minute, ContentBasedDeduplication: true,
		Tags: map[string]string{"team": "a"}}, catalog.FieldVisibilityTimeout|catalog.FieldContentBasedDeduplication|catalog.FieldTags)
	require.True(t, q.FIFO())
	require.Equal(t, time.Minute, catalog.LiveAttributes(c, ctNS, "jobs.fifo").VisibilityTimeout)
	require.True(t, catalog.LiveAttributes(c, ctNS, "jobs.fifo").ContentBasedDeduplication)
	d, ok := c.Definition(ctNS, "jobs.fifo")
	require.True(t, ok)
	require.Equal(t, catalog.ThroughputPerQueue, d.ThroughputLimit, "the default")
	require.True(t, d.SQSManagedSSE, "the default")
	require.Equal(t, map[string]string{"team": "a"}, d.Tags)
	require.False(t, d.Created.IsZero())

	again, err := c.CreateQueue(t.Context(), ctNS, "jobs.fifo", catalog.Definition{VisibilityTimeout: time.Minute,
		SQSManagedSSE: true, Tags: map[string]string{"other": "x"}}, catalog.FieldVisibilityTimeout|catalog.FieldSQSManagedSSE|catalog.FieldTags)
	require.NoError(t, err, "the same settings, and the default given")
	require.Equal(t, q, again)
	d, _ = c.Definition(ctNS, "jobs.fifo")
	require.Equal(t, map[string]string{"team": "a"}, d.Tags, "tags of an existing queue are not changed")
	again, err = c.CreateQueue(t.Context(), ctNS, "jobs.fifo", catalog.Definition{}, 0)
	require.NoError(t, err, "no settings given")
	require.Equal(t, q, again)

	_, err = c.CreateQueue(t.Context(), ctNS, "jobs.fifo", catalog.Definition{VisibilityTimeout: time.Hour, Delay: time.Second},
		catalog.FieldVisibilityTimeout|catalog.FieldDelay)
	require.ErrorIs(t, err, catalog.ErrQueueExists)
	require.Equal(t, "QueueAlreadyExists", fifoq.ErrorCode(err))
	require.Equal(t, "A queue already exists with the same name and a different value for attribute DelaySeconds", fifoq.ErrorMessage(err))

	_, err = c.CreateQueue(t.Context(), ctNS, "bad name", catalog.Definition{}, 0)
	require.ErrorIs(t, err, fifoq.ErrInvalidQueueName)
	_, err = c.CreateQueue(t.Context(), ctNS, "std", catalog.Definition{ContentBasedDeduplication: true}, catalog.FieldContentBasedDeduplication)
	require.ErrorIs(t, err, fifoq.ErrFIFOOnly)
	_, err = c.CreateQueue(t.Context(), ctNS, "std", catalog.Definition{VisibilityTimeout: 13 * time.Hour}, catalog.FieldVisibilityTimeout)
	require.ErrorIs(t, err, fifoq.ErrInvalidQueueAttribute)
	_, err = c.CreateQueue(t.Context(), ctNS, "g.fifo", catalog.Definition{ThroughputLimit: catalog.ThroughputPerMessageGroupID},
		catalog.FieldThroughputLimit)
	require.ErrorIs(t, err, fifoq.ErrInvalidQueueAttribute, "perMessageGroupId needs the messageGroup scope")
	require.Equal(t, "Invalid value for the parameter FifoThroughputLimit. Reason: perMessageGroupId is allowed only when "+
		"DeduplicationScope is messageGroup.", fifoq.ErrorMessage(err))
	_, ok = c.Queue(ctNS, "g.fifo")
	require.False(t, ok, "a refused queue is not created")
}

// A namespace holds its own queues: the same name in two namespaces names two queues, and a queue of a
// namespace other than the default one has a hashed name in fifoq, which Find maps back.
func TestCatalogNamespaces(t *testing.T) {
	t.Parallel()
	c, _ := newCtCatalog(t)
	home := ctCreate(t, c, ctNS, "orders", catalog.Definition{}, 0)
	other := ctCreate(t, c, ctOther, "orders", catalog.Definition{}, 0)
	require.NotEqual(t, home, other)
	require.Equal(t, "orders", home.FifoqName())
	require.Regexp(t, `^ns-[0-9a-f]{32}$`, other.FifoqName())
	k, found, ok := c.Find(other.FifoqName())
	require.True(t, ok)
	require.Equal(t, catalog.QueueKey{Namespace: ctOther, Name: "orders"}, k)
	require.Equal(t, other, found)
	require.Equal(t, []catalog.Queue{home, other}, c.Queues())
	require.Len(t, c.List(ctOther, "ord"), 1)
	require.Empty(t, c.List(ctOther, "x"))

	// A dead-letter queue is a queue of its sources' namespace.
	ctCreate(t, c, ctOther, "dlq", catalog.Definition{}, 0)
	_, err := c.CreateQueue(t.Context(), ctNS, "src", catalog.Definition{RedrivePolicy: catalog.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 1}},
		catalog.FieldRedrivePolicy)
	require.ErrorIs(t, err, fifoq.ErrInvalidRedrivePolicy)
	require.Equal(t, "Dead-letter target does not exist.", fifoq.ErrorMessage(err))
}

// A deleted queue's name can be used again 60 seconds later.
func TestCatalogQueueDeletedRecently(t *testing.T) {
	t.Parallel()
	c, clock := newCtCatalog(t)
	ctCreate(t, c, ctNS, "q", catalog.Definition{}, 0)
	require.NoError(t, c.DeleteQueue(t.Context(), ctNS, "q"))
	require.ErrorIs(t, c.DeleteQueue(t.Context(), ctNS, "q"), catalog.ErrQueueDoesNotExist)
	_, ok := c.Queue(ctNS, "q")
	require.False(t, ok)
	clock.Advance(59 * time.Second)
	_, err := c.CreateQueue(t.Context(), ctNS, "q", catalog.Definition{}, 0)
	require.ErrorIs(t, err, catalog.ErrQueueDeletedRecently)
	require.Equal(t, "AWS.SimpleQueueService.QueueDeletedRecently", fifoq.ErrorCode(err))
	require.ErrorIs(t, c.CheckCreate(ctNS, "q"), catalog.ErrQueueDeletedRecently)
	ctCreate(t, c, ctOther, "q", catalog.Definition{}, 0) // another namespace's name
	clock.Advance(time.Second)
	require.NoError(t, c.CheckCreate(ctNS, "q"))
	ctCreate(t, c, ctNS, "q", catalog.Definition{}, 0)
}

// Update changes a definition as a whole, applies its settings to the queue, and sets Modified; an edit
// that fails, or a definition that breaks a rule, changes nothing. Tags change without Modified.
func TestCatalogUpdate(t *testing.T) {
	t.Parallel()
	c, clock := newCtCatalog(t)
	ctCreate(t, c, ctNS, "q", catalog.Definition{}, 0)
	created, _ := c.Definition(ctNS, "q")
	clock.Advance(time.Minute)
	require.NoError(t, c.Update(t.Context(), ctNS, "q", func(d *catalog.Definition) error {
		d.Apply(catalog.Definition{Delay: 5 * time.Second, KMSMasterKeyID: "alias/k", Policy: `{"v":1}`},
			catalog.FieldDelay|catalog.FieldKMSMasterKeyID|catalog.FieldPolicy)
		return nil
	}))
	require.Equal(t, 5*time.Second, catalog.LiveAttributes(c, ctNS, "q").Delay)
	d, _ := c.Definition(ctNS, "q")
	require.Equal(t, created.Created, d.Created)
	require.Equal(t, created.Created.Add(time.Minute), d.Modified)
	require.Equal(t, "alias/k", d.KMSMasterKeyID)
	require.False(t, d.SQSManagedSSE, "a KMS key turns SQS-managed encryption off")

	boom := errors.New("boom")
	require.ErrorIs(t, c.Update(t.Context(), ctNS, "q", func(d *catalog.Definition) error {
		d.Delay = time.Minute
		return boom
	}), boom)
	require.ErrorIs(t, c.Update(t.Context(), ctNS, "q", func(d *catalog.Definition) error {
		d.Retention = time.Second
		return nil
	}), fifoq.ErrInvalidQueueAttribute)
	require.Equal(t, 5*time.Second, catalog.LiveAttributes(c, ctNS, "q").Delay, "nothing changed")
	require.ErrorIs(t, c.Update(t.Context(), ctNS, "none", func(*catalog.Definition) error { return nil }), catalog.ErrQueueDoesNotExist)

	// SQS-managed encryption given true drops the KMS key.
	require.NoError(t, c.Update(t.Context(), ctNS, "q", func(d *catalog.Definition) error {
		d.Apply(catalog.Definition{SQSManagedSSE: true}, catalog.FieldSQSManagedSSE)
		return nil
	}))
	d, _ = c.Definition(ctNS, "q")
	require.Empty(t, d.KMSMasterKeyID)
	require.True(t, d.SQSManagedSSE)
	err := (&catalog.Definition{KMSMasterKeyID: "k", SQSManagedSSE: true}).Check(false, catalog.FieldKMSMasterKeyID|catalog.FieldSQSManagedSSE)
	require.ErrorIs(t, err, catalog.ErrEncryptionConflict)

	clock.Advance(time.Minute)
	require.NoError(t, c.TagQueue(t.Context(), ctNS, "q", map[string]string{"a": "1", "b": "2"}))
	require.NoError(t, c.UntagQueue(t.Context(), ctNS, "q", []string{"a", "none"}))
	tagged, _ := c.Definition(ctNS, "q")
	require.Equal(t, map[string]string{"b": "2"}, tagged.Tags)
	require.Equal(t, d.Modified, tagged.Modified, "tags are no setting")
	many := make(map[string]string)
	for i := range 50 {
		many["k"+strconv.Itoa(i)] = "v" // 51 with b
	}
	err = c.TagQueue(t.Context(), ctNS, "q", many)
	require.ErrorIs(t, err, catalog.ErrInvalidTags)
	require.Equal(t, "Too many tags added for queue. A queue can have at most 50 tags.", fifoq.ErrorMessage(err))
	require.ErrorIs(t, c.TagQueue(t.Context(), ctNS, "q", map[string]string{"": "v"}), catalog.ErrInvalidTags)

	// UntagQueue refuses what TagQueue refuses, and no keys at all, and then removes nothing.
	for _, keys := range [][]string{{"b", ""}, {strings.Repeat("k", 129)}, {}, nil} {
		err := c.UntagQueue(t.Context(), ctNS, "q", keys)
		require.ErrorIs(t, err, catalog.ErrInvalidTags, "UntagQueue %q", keys)
		if len(keys) == 0 {
			require.Equal(t, "Tag keys must be between 1 and 128 characters in length.", fifoq.ErrorMessage(err))
		}
	}
	require.Equal(t, "Value  for parameter TagKey is invalid. Reason: Tag keys must be between 1 and 128 characters in length.",
		fifoq.ErrorMessage(c.UntagQueue(t.Context(), ctNS, "q", []string{""})))
	require.ErrorIs(t, c.UntagQueue(t.Context(), ctNS, "none", nil), catalog.ErrQueueDoesNotExist)
	tagged, _ = c.Definition(ctNS, "q")
	require.Equal(t, map[string]string{"b": "2"}, tagged.Tags)
}

// Deleting a dead-letter queue leaves its sources' redrive policies pending: their messages stay with them;
// a queue created with that name takes them back as its sources.
func TestCatalogPendingRedrivePolicy(t *testing.T) {
	t.Parallel()
	c, clock := newCtCatalog(t)
	ctx := t.Context()
	ctCreate(t, c, ctNS, "dlq", catalog.Definition{}, 0)
	policy := catalog.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 1}
	src := ctCreate(t, c, ctNS, "src", catalog.Definition{RedrivePolicy: policy, VisibilityTimeout: 0}, catalog.FieldRedrivePolicy|catalog.FieldVisibilityTimeout)
	require.NoError(t, c.DeleteQueue(ctx, ctNS, "dlq"))
	d, _ := c.Definition(ctNS, "src")
	require.Equal(t, catalog.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 1, Pending: true}, d.RedrivePolicy)
	require.Empty(t, catalog.LiveDeadLetterQueue(c, ctNS, "src"))
	_, err := src.Send(ctx, fifoq.Message{Body: "m"})
	require.NoError(t, err)
	for range 3 {
		ds, err := src.Receive(ctx, fifoq.ReceiveOptions{})
		require.NoError(t, err)
		require.Len(t, ds, 1, "the message stays: no dead-letter queue to move it to")
	}

	// A change of another setting keeps the policy pending.
	require.NoError(t, c.Update(ctx, ctNS, "src", func(d *catalog.Definition) error { d.Delay = time.Second; return nil }))
	d, _ = c.Definition(ctNS, "src")
	require.True(t, d.RedrivePolicy.Pending)

	clock.Advance(time.Minute)
	ctCreate(t, c, ctNS, "dlq", catalog.Definition{}, 0)
	require.Equal(t, "dlq", catalog.LiveDeadLetterQueue(c, ctNS, "src"), "bound again")
	d, _ = c.Definition(ctNS, "src")
	require.Equal(t, catalog.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 1}, d.RedrivePolicy)
}

// Move tasks: the catalogue lists the last 10 of a queue, cancels them by id, refuses a return to the
// sources while a message came from a deleted queue, and fails a running task whose destination is deleted.
func TestCatalogMoveTasks(t *testing.T) {
	t.Parallel()
	c, clock := newCtCatalog(t)
	ctx := t.Context()
	for _, name := range []string{"dlq", "dest", "gone"} {
		ctCreate(t, c, ctNS, name, catalog.Definition{}, 0)
	}
	policy := catalog.Definition{RedrivePolicy: catalog.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 1}}
	ctCreate(t, c, ctNS, "src", policy, catalog.FieldRedrivePolicy)
	for range 12 {
		task, err := c.StartMoveTask(ctx, ctNS, "dlq", "", 0)
		require.NoError(t, err)
		require.NoError(t, task.Wait(ctx))
	}
	tasks := c.MoveTasks(ctNS, "dlq")
	require.Len(t, tasks, 10)
	require.Equal(t, fifoq.MoveTaskCompleted, tasks[0].Status().State)
	_, err := c.CancelMoveTask(ctx, tasks[0].ID)
	require.ErrorIs(t, err, fifoq.ErrMoveTaskNotRunning)
	_, err = c.CancelMoveTask(ctx, "no-such-task")
	require.ErrorIs(t, err, catalog.ErrMoveTaskNotFound)
	require.Equal(t, "Task does not exist.", fifoq.ErrorMessage(err))
	_, err = c.StartMoveTask(ctx, ctNS, "none", "", 0)
	require.ErrorIs(t, err, catalog.ErrQueueDoesNotExist)

	// A message from a queue deleted since cannot go back to its source.
	ctCreate(t, c, ctNS, "gone", catalog.Definition{}, 0) // exists already: returned
	require.NoError(t, c.Update(ctx, ctNS, "gone", func(d *catalog.Definition) error {
		d.RedrivePolicy = catalog.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 1}
		d.VisibilityTimeout = 0
		return nil
	}))
	gone, _ := c.Queue(ctNS, "gone")
	for _, body := range []string{"orphan 1", "orphan 2"} { // two: a task at one a second pauses after the first
		_, err = gone.Send(ctx, fifoq.Message{Body: body})
		require.NoError(t, err)
	}
	for range 2 {
		_, err = gone.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10})
		require.NoError(t, err)
	}
	dlq, _ := c.Queue(ctNS, "dlq")
	require.Equal(t, 2, dlq.Stats().Visible)
	require.NoError(t, c.DeleteQueue(ctx, ctNS, "gone"))
	_, err = c.StartMoveTask(ctx, ctNS, "dlq", "", 0)
	var sde *catalog.SourceDeletedError
	require.ErrorAs(t, err, &sde)
	require.Equal(t, "gone", sde.Queue)
	require.ErrorIs(t, err, fifoq.ErrInvalidMoveTask)

	// A running task whose destination is deleted ends FAILED.
	clock.Advance(time.Minute)
	task, err := c.StartMoveTask(ctx, ctNS, "dlq", "dest", 1) // one message a second, on the manual clock
	require.NoError(t, err)
	require.Equal(t, "dest", task.Destination)
	got, ok := c.MoveTask(task.ID)
	require.True(t, ok)
	require.Equal(t, task.ID, got.ID)
	require.NoError(t, c.DeleteQueue(ctx, ctNS, "dest"))
	require.NoError(t, task.Wait(ctx), "the task ends after the batch it had taken")
	st := task.Status()
	require.Equal(t, fifoq.MoveTaskFailed, st.State)
	require.Equal(t, "AWS.SimpleQueueService.NonExistentQueue", st.Failure)
}

// The catalogue's errors carry AWS's codes.
func TestCatalogErrorCodes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		code string
	}{
		{catalog.ErrQueueExists, "QueueAlreadyExists"},
		{catalog.ErrQueueDeletedRecently, "AWS.SimpleQueueService.QueueDeletedRecently"},
		{catalog.ErrQueueDoesNotExist, "AWS.SimpleQueueService.NonExistentQueue"},
		{catalog.ErrMoveTaskNotFound, "ResourceNotFoundException"},
		{catalog.ErrEncryptionConflict, "InvalidAttributeName"},
		{catalog.ErrInvalidTags, "InvalidParameterValue"},
		{&catalog.SourceDeletedError{Queue: "q"}, "InvalidParameterValue"},
	} {
		require.Equal(t, tc.code, fifoq.ErrorCode(tc.err), "%v", tc.err)
	}
	_, err := catalog.New().CreateQueue(context.Background(), catalog.Namespace{}, "q", catalog.Definition{}, 0)
	require.NoError(t, err, "the zero namespace is a namespace")
}

// Starting a move task back to the sources reads when each source was created while Update replaces that
// queue's definition: run with -race.
func TestCatalogMoveTaskWhileSourceUpdated(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		c := catalog.New(catalog.WithDefaultNamespace(ctNS))
		defer func() { require.NoError(t, c.Close()) }()
		ctx := t.Context()
		ctCreate(t, c, ctNS, "dlq", catalog.Definition{}, 0)
		src := ctCreate(t, c, ctNS, "src", catalog.Definition{RedrivePolicy: catalog.RedrivePolicy{DeadLetterQueue: "dlq",
			MaxReceiveCount: 1}}, catalog.FieldRedrivePolicy)
		ctCreate(t, c, ctNS, "other", catalog.Definition{}, 0)
		require.NoError(t, c.DeleteQueue(ctx, ctNS, "other")) // a deletion: the task looks at where messages came from
		const rounds = 20
		for i := range rounds {
			_, err := src.Send(ctx, fifoq.Message{Body: strconv.Itoa(i)})
			require.NoError(t, err)
		}
		for range 2 {
			_, err := src.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10, NoVisibilityTimeout: true})
			require.NoError(t, err)
			_, err = src.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10, NoVisibilityTimeout: true})
			require.NoError(t, err)
		}
		dlq, _ := c.Queue(ctNS, "dlq")
		require.Equal(t, rounds, dlq.Stats().Visible)

		stop := make(chan struct{})
		updated := make(chan error, 1)
		go func() {
			var err error
			for i := 0; err == nil; i++ {
				select {
				case <-stop:
					updated <- nil
					return
				default:
				}
				err = c.Update(ctx, ctNS, "src", func(d *catalog.Definition) error {
					d.VisibilityTimeout = time.Duration(i%2+1) * time.Second
					return nil
				})
			}
			updated <- err
		}()
		for range rounds / 2 {
			task, err := c.StartMoveTask(ctx, ctNS, "dlq", "", 1) // one a second: pauses after the first
			require.NoError(t, err)
			if _, err := c.CancelMoveTask(ctx, task.ID); err != nil {
				require.ErrorIs(t, err, fifoq.ErrMoveTaskNotRunning)
			}
			require.NoError(t, task.Wait(ctx))
		}
		close(stop)
		require.NoError(t, <-updated)
	})
}

// A queue or topic of the default namespace is shown under its own name, one of another namespace as
// account/region/name; ParseDisplayName reads both back, and NamedQueues and NamedTopics key every queue and
// topic so, two of one name in two namespaces apart.
func TestDisplayNames(t *testing.T) {
	c, _ := newCtCatalog(t)
	ctCreate(t, c, ctNS, "orders", catalog.Definition{}, 0)
	ctCreate(t, c, ctOther, "orders", catalog.Definition{}, 0)
	_, err := c.CreateTopic(t.Context(), ctOther, "events", catalog.TopicDefinition{})
	require.NoError(t, err)

	require.Equal(t, "orders", c.DisplayName(ctNS, "orders"))
	require.Equal(t, "111111111111/eu-west-1/orders", c.DisplayName(ctOther, "orders"))
	for _, tc := range []struct {
		s    string
		ns   catalog.Namespace
		name string
		ok   bool
	}{
		{"orders", ctNS, "orders", true},
		{"111111111111/eu-west-1/orders", ctOther, "orders", true},
		{"", catalog.Namespace{}, "", false},
		{"a/b", catalog.Namespace{}, "", false},
		{"a/b/", catalog.Namespace{Account: "a", Region: "b"}, "", false},
		{"a/b/c/d", catalog.Namespace{}, "", false},
	} {
		ns, name, ok := c.ParseDisplayName(tc.s)
		require.Equal(t, tc.ok, ok, tc.s)
		if ok {
			require.Equal(t, tc.ns, ns, tc.s)
			require.Equal(t, tc.name, name, tc.s)
		}
	}

	queues := c.NamedQueues()
	require.Len(t, queues, 2)
	require.Equal(t, ctNS, queues["orders"].Namespace())
	require.Equal(t, ctOther, queues["111111111111/eu-west-1/orders"].Namespace())
	topics := c.NamedTopics()
	require.Len(t, topics, 1)
	require.Equal(t, "events", topics["111111111111/eu-west-1/events"].Name())
}

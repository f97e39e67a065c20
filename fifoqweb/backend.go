package fifoqweb

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/topic"
)

// Where the console's queues and topics come from: a program's own queues (New) or a catalogue (NewCatalog).
// The pages and actions see them through a backend, and each queue through what a *fifoq.Queue and a
// catalog.Queue both have.

// queue is what the console reads of a queue and does to it.
type queue interface {
	FIFO() bool
	Clock() fifoq.Clock
	Stats() fifoq.Stats
	Metrics() fifoq.Metrics
	MessagesAfter(cursor string, n int, f fifoq.MessageFilter) ([]fifoq.Snapshot, string, error)
	BlockedGroups(n int) []fifoq.BlockedGroup
	Send(ctx context.Context, m fifoq.Message) (fifoq.SendResult, error)
	Delete(ctx context.Context, receiptHandle string) error
	ChangeVisibility(ctx context.Context, receiptHandle string, timeout time.Duration) error
	Purge(ctx context.Context) error
}

// named is a queue and its name in the console.
type named struct {
	Name string
	Q    queue
}

// settings are what the console shows of a queue's settings: its dead-letter queue, by its name in the
// console, and the lines of its attributes.
type settings struct {
	dlq             string // "" for none
	dlqShown        bool   // dlq is a queue of the console
	maxReceiveCount int
	lines           []string
}

// A backend is the source of the console's queues and topics, and the owner of their redrives.
type backend interface {
	queues() []named // by name
	lookup(name string) (named, bool)
	settings(n named) settings
	moveTasks(n named) []fifoq.MoveTaskStatus // newest first
	startMoveTask(ctx context.Context, n named, dest string, rate int) error
	// runningTask returns a handle of the queue's running redrive that the console may cancel, or "".
	runningTask(n named) string
	cancelMoveTask(ctx context.Context, n named, handle string) error
	topics() []topicInfo // nil: no topics page
	close() error

	// The settings forms (backend_forms.go). Queues, dead-letter queues and redrive sources are named as
	// the console names them.
	definition(n named) catalog.Definition // the queue's settings now
	editable() catalog.Fields              // the settings the form changes; 0 for none
	canCreate() bool                       // queues can be created and deleted, and topics created
	createQueue(ctx context.Context, name string, d catalog.Definition, f catalog.Fields) error
	updateQueue(ctx context.Context, n named, d catalog.Definition, f catalog.Fields) error
	deleteQueue(ctx context.Context, n named) error
	createTopic(ctx context.Context, name string, d catalog.TopicDefinition) error
	subscribe(ctx context.Context, topicName, queueName string, a topic.SubscriptionAttributes) error
}

// topicInfo is a topic as the topics page shows it, and how to publish to it.
type topicInfo struct {
	view    topicView
	publish func(ctx context.Context, m topic.Message) (topic.PublishResult, error)
	ident   any // the topic itself, comparable: another one under the same name is another topic
}

// attributeLines are the lines of a queue's page that show its settings.
func attributeLines(fifo bool, vt, delay, retention time.Duration, maxSize int, contentDedup bool) []string {
	lines := []string{"visibility timeout " + vt.String(), "delay " + delay.String(), "retention " + retention.String(),
		fmt.Sprintf("max message size %d bytes", maxSize)}
	if fifo {
		lines = append(lines, fmt.Sprintf("content-based deduplication %v", contentDedup))
	}
	return lines
}

// queuesBackend is the backend of New: a program's *fifoq.Queue values, whose redrives the console runs itself
// (or hands to WithMoveTasks' owner), and the topics of WithTopics.
type queuesBackend struct {
	all         func() map[string]*fifoq.Queue
	owner       MoveTasks                      // nil: the console runs its redrives itself
	topicsOf    func() map[string]*topic.Topic // nil: no topics
	publishOpts []topic.PublishOption

	mu    sync.Mutex
	tasks map[*fifoq.Queue]*fifoq.MoveTask // the redrives the console started
}

func (b *queuesBackend) queues() []named {
	m := b.all()
	out := make([]named, 0, len(m))
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if m[name] != nil {
			out = append(out, named{name, m[name]})
		}
	}
	b.forget(m)
	return out
}

// forget drops the console's redrives of queues it no longer has.
func (b *queuesBackend) forget(m map[string]*fifoq.Queue) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.tasks) == 0 {
		return
	}
	live := make(map[*fifoq.Queue]bool, len(m))
	for _, q := range m {
		live[q] = true
	}
	for q := range b.tasks {
		if !live[q] {
			delete(b.tasks, q)
		}
	}
}

func (b *queuesBackend) lookup(name string) (named, bool) {
	q := b.all()[name]
	return named{name, q}, q != nil
}

func (b *queuesBackend) settings(n named) settings {
	q := n.Q.(*fifoq.Queue)
	a := q.Attributes()
	s := settings{maxReceiveCount: a.MaxReceiveCount,
		lines: attributeLines(q.FIFO(), a.VisibilityTimeout, a.Delay, a.Retention, a.MaxMessageSize, a.ContentBasedDeduplication)}
	if d := a.DeadLetterQueue; d != nil {
		for name, x := range b.all() {
			if x == d {
				s.dlq, s.dlqShown = name, true
			}
		}
		if !s.dlqShown {
			s.dlq = d.Name()
		}
	}
	return s
}

func (b *queuesBackend) moveTasks(n named) []fifoq.MoveTaskStatus {
	return n.Q.(*fifoq.Queue).MoveTasks()
}

func (b *queuesBackend) startMoveTask(ctx context.Context, n named, dest string, rate int) error {
	if b.owner != nil {
		_, err := b.owner.StartMoveTask(ctx, n.Name, dest, rate)
		return err
	}
	var d *fifoq.Queue
	if dest != "" {
		d = b.all()[dest]
	}
	t, err := n.Q.(*fifoq.Queue).StartMoveTask(ctx, d, rate)
	if err != nil {
		return err
	}
	b.mu.Lock()
	if b.tasks == nil {
		b.tasks = make(map[*fifoq.Queue]*fifoq.MoveTask)
	}
	b.tasks[n.Q.(*fifoq.Queue)] = t
	b.mu.Unlock()
	return nil
}

// consoleTask is the handle of a redrive the console started itself.
const consoleTask = "console"

func (b *queuesBackend) runningTask(n named) string {
	if b.owner != nil {
		return b.owner.RunningMoveTask(n.Name)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if t := b.tasks[n.Q.(*fifoq.Queue)]; t != nil && t.Status().State == fifoq.MoveTaskRunning {
		return consoleTask
	}
	return ""
}

func (b *queuesBackend) cancelMoveTask(ctx context.Context, n named, handle string) error {
	if b.owner != nil {
		return b.owner.CancelMoveTask(ctx, handle)
	}
	b.mu.Lock()
	t := b.tasks[n.Q.(*fifoq.Queue)]
	b.mu.Unlock()
	if t == nil {
		return fmt.Errorf("%w on %s", errNoConsoleTask, n.Name)
	}
	return t.Cancel()
}

func (b *queuesBackend) topics() []topicInfo {
	if b.topicsOf == nil {
		return nil
	}
	m := b.topicsOf()
	out := []topicInfo{}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		t := m[name]
		if t == nil {
			continue
		}
		v := topicView{Name: name, ARN: t.ARN(), FIFO: t.FIFO(), Metrics: t.Metrics()}
		for _, s := range t.Subscriptions() {
			a := s.Attributes()
			v.Subscriptions = append(v.Subscriptions, subscriptionView{ARN: s.ARN(), Queue: s.QueueName(),
				FilterPolicy: a.FilterPolicy, Scope: string(a.FilterPolicyScope), Raw: a.RawMessageDelivery})
		}
		out = append(out, topicInfo{view: v, ident: t, publish: func(ctx context.Context, m topic.Message) (topic.PublishResult, error) {
			return t.Publish(ctx, m, b.publishOpts...)
		}})
	}
	return out
}

// close cancels the redrives the console started that still run, and waits until they end.
func (b *queuesBackend) close() error {
	b.mu.Lock()
	tasks := slices.Collect(maps.Values(b.tasks))
	b.mu.Unlock()
	for _, t := range tasks {
		_ = t.Cancel() // ErrMoveTaskNotRunning: it ended already
	}
	for _, t := range tasks {
		_ = t.Wait(context.Background()) // nil: the context never ends
	}
	return nil
}

// catalogBackend is the backend of NewCatalog: the queues and topics of a catalogue, named by their names in
// its default namespace, and by account/region/name in the others; their redrives are the catalogue's.
type catalogBackend struct {
	cat         *catalog.Catalog
	publishOpts []topic.PublishOption
}

// nameOf returns the console's name of the queue or topic name of ns.
func (b *catalogBackend) nameOf(ns catalog.Namespace, name string) string {
	return b.cat.DisplayName(ns, name)
}

// parse returns the namespace and name of a console's name.
func (b *catalogBackend) parse(name string) (catalog.Namespace, string, bool) {
	return b.cat.ParseDisplayName(name)
}

func (b *catalogBackend) queues() []named {
	all := b.cat.Queues()
	out := make([]named, len(all))
	for i, q := range all {
		out[i] = named{b.nameOf(q.Namespace(), q.Name()), q}
	}
	slices.SortFunc(out, func(x, y named) int { return strings.Compare(x.Name, y.Name) })
	return out
}

func (b *catalogBackend) lookup(name string) (named, bool) {
	ns, n, ok := b.parse(name)
	if !ok {
		return named{}, false
	}
	q, ok := b.cat.Queue(ns, n)
	return named{name, q}, ok
}

func (b *catalogBackend) settings(n named) settings {
	q := n.Q.(catalog.Queue)
	d, _ := b.cat.Definition(q.Namespace(), q.Name())
	s := settings{lines: attributeLines(q.FIFO(), d.VisibilityTimeout, d.Delay, d.Retention, d.MaxMessageSize,
		d.ContentBasedDeduplication)}
	if p := d.RedrivePolicy; p.DeadLetterQueue != "" {
		s.dlq, s.maxReceiveCount = b.nameOf(q.Namespace(), p.DeadLetterQueue), p.MaxReceiveCount
		_, s.dlqShown = b.cat.Queue(q.Namespace(), p.DeadLetterQueue)
		if p.Pending {
			s.dlq += " (pending: not there)"
		}
	}
	return s
}

func (b *catalogBackend) moveTasks(n named) []fifoq.MoveTaskStatus {
	q := n.Q.(catalog.Queue)
	tasks := b.cat.MoveTasks(q.Namespace(), q.Name())
	out := make([]fifoq.MoveTaskStatus, len(tasks))
	for i, t := range tasks {
		out[i] = t.Status()
	}
	return out
}

func (b *catalogBackend) startMoveTask(ctx context.Context, n named, dest string, rate int) error {
	q := n.Q.(catalog.Queue)
	if dest != "" {
		ns, name, ok := b.parse(dest)
		if !ok || ns != q.Namespace() {
			return fmt.Errorf("%w: destination %s is not a queue of the namespace of %s", fifoq.ErrInvalidMoveTask, dest, n.Name)
		}
		dest = name
	}
	_, err := b.cat.StartMoveTask(ctx, q.Namespace(), q.Name(), dest, rate)
	return err
}

func (b *catalogBackend) runningTask(n named) string {
	q := n.Q.(catalog.Queue)
	if ts := b.cat.MoveTasks(q.Namespace(), q.Name()); len(ts) > 0 && ts[0].Status().State == fifoq.MoveTaskRunning {
		return ts[0].ID
	}
	return ""
}

func (b *catalogBackend) cancelMoveTask(ctx context.Context, n named, handle string) error {
	_, err := b.cat.CancelMoveTask(ctx, handle)
	return err
}

func (b *catalogBackend) topics() []topicInfo {
	out := []topicInfo{}
	for _, t := range b.cat.Topics() {
		v := topicView{Name: b.nameOf(t.Namespace(), t.Name()), ARN: t.ARN(), FIFO: t.FIFO(), Metrics: t.Metrics()}
		subs, _ := b.cat.TopicSubscriptions(t.Namespace(), t.Name())
		for _, s := range subs {
			d := s.Definition
			v.Subscriptions = append(v.Subscriptions, subscriptionView{ARN: s.ARN, Queue: b.nameOf(d.Queue.Namespace, d.Queue.Name),
				FilterPolicy: d.FilterPolicy, Scope: string(d.FilterPolicyScope), Raw: d.RawMessageDelivery})
		}
		out = append(out, topicInfo{view: v, ident: t, publish: func(ctx context.Context, m topic.Message) (topic.PublishResult, error) {
			return t.Publish(ctx, m, b.publishOpts...)
		}})
	}
	return out
}

func (b *catalogBackend) close() error { return nil } // the catalogue's redrives are its own

package fifoqweb

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/topic"
)

// What the settings forms do, by backend: a catalogue's queues and topics are created, changed and deleted
// through the catalogue's own methods (its rules, its records); a program's queues are changed through
// their SetAttributes, and its topics subscribed through their Subscribe. A program's console creates and
// deletes nothing: its program owns the set of its queues.

// A formError is a refusal of the console's own (a name that is no queue of the console, a queue of
// another namespace), with the text shown beside the field. It wraps the sentinel of the rule it stands for.
type formError struct {
	msg      string
	sentinel error
}

func (e *formError) Error() string { return e.msg }
func (e *formError) Unwrap() error { return e.sentinel }

// errNotOffered is the error of a change this console does not make.
var errNotOffered = errors.New("this console does not make this change: its program owns its queues and topics")

// plainFields are the settings of a program's queue that its form changes: those of fifoq.Attributes.
const plainFields = catalog.FieldVisibilityTimeout | catalog.FieldDelay | catalog.FieldRetention |
	catalog.FieldMaxMessageSize | catalog.FieldReceiveWaitTime | catalog.FieldContentBasedDeduplication |
	catalog.FieldDeduplicationScope | catalog.FieldRedrivePolicy | catalog.FieldRedriveAllowPolicy

func (b *queuesBackend) definition(n named) catalog.Definition {
	q := n.Q.(*fifoq.Queue)
	a := q.Attributes()
	d := catalog.Definition{VisibilityTimeout: a.VisibilityTimeout, Delay: a.Delay, Retention: a.Retention,
		MaxMessageSize: a.MaxMessageSize, ReceiveWaitTime: a.ReceiveWaitTime}
	if q.FIFO() {
		d.ContentBasedDeduplication = a.ContentBasedDeduplication
		d.DeduplicationScope = cmp.Or(a.DeduplicationScope, fifoq.DeduplicationScopeQueue)
	}
	if a.DeadLetterQueue != nil {
		d.RedrivePolicy = catalog.RedrivePolicy{DeadLetterQueue: b.settings(n).dlq, MaxReceiveCount: a.MaxReceiveCount}
	}
	if p := a.RedriveAllowPolicy; p.Permission != fifoq.RedriveAllowAll || len(p.Sources) > 0 {
		d.RedriveAllowPolicy = &p
	}
	return d
}

func (b *queuesBackend) editable() catalog.Fields { return plainFields }

func (b *queuesBackend) canCreate() bool { return false }

func (b *queuesBackend) createQueue(context.Context, string, catalog.Definition, catalog.Fields) error {
	return errNotOffered
}

func (b *queuesBackend) deleteQueue(context.Context, named) error { return errNotOffered }

func (b *queuesBackend) createTopic(context.Context, string, catalog.TopicDefinition) error {
	return errNotOffered
}

// updateQueue sets the queue's attributes to d's for the fields f, through its SetAttributes.
func (b *queuesBackend) updateQueue(_ context.Context, n named, d catalog.Definition, f catalog.Fields) error {
	if f&^plainFields != 0 {
		return errNotOffered
	}
	q := n.Q.(*fifoq.Queue)
	a := q.Attributes()
	if f&catalog.FieldVisibilityTimeout != 0 {
		a.VisibilityTimeout = d.VisibilityTimeout
	}
	if f&catalog.FieldDelay != 0 {
		a.Delay = d.Delay
	}
	if f&catalog.FieldRetention != 0 {
		a.Retention = d.Retention
	}
	if f&catalog.FieldMaxMessageSize != 0 {
		a.MaxMessageSize = d.MaxMessageSize
	}
	if f&catalog.FieldReceiveWaitTime != 0 {
		a.ReceiveWaitTime = d.ReceiveWaitTime
	}
	if f&catalog.FieldContentBasedDeduplication != 0 {
		a.ContentBasedDeduplication = d.ContentBasedDeduplication
	}
	if f&catalog.FieldDeduplicationScope != 0 {
		a.DeduplicationScope = d.DeduplicationScope
	}
	if f&catalog.FieldRedrivePolicy != 0 {
		a.DeadLetterQueue, a.MaxReceiveCount = nil, 0
		if p := d.RedrivePolicy; p.DeadLetterQueue != "" {
			dlq := b.all()[p.DeadLetterQueue]
			if dlq == nil {
				return noDeadLetterTarget(p.DeadLetterQueue)
			}
			a.DeadLetterQueue, a.MaxReceiveCount = dlq, p.MaxReceiveCount
		}
	}
	if f&catalog.FieldRedriveAllowPolicy != 0 {
		a.RedriveAllowPolicy = fifoq.RedriveAllowPolicy{}
		if p := d.RedriveAllowPolicy; p != nil {
			a.RedriveAllowPolicy = fifoq.RedriveAllowPolicy{Permission: p.Permission, Sources: slices.Clone(p.Sources)}
		}
	}
	return q.SetAttributes(a)
}

// noDeadLetterTarget is the refusal of a redrive policy whose dead-letter queue is not a queue of the
// console: the wire API's words.
func noDeadLetterTarget(name string) error {
	return &formError{msg: "Dead-letter target does not exist: no queue named " + name + " in this console.",
		sentinel: fifoq.ErrInvalidRedrivePolicy}
}

func (b *queuesBackend) subscribe(_ context.Context, topicName, queueName string, a topic.SubscriptionAttributes) error {
	var t *topic.Topic
	if b.topicsOf != nil {
		t = b.topicsOf()[topicName]
	}
	if t == nil {
		return &formError{msg: "No topic named " + topicName + " in this console.", sentinel: topic.ErrNotFound}
	}
	q := b.all()[queueName]
	if q == nil {
		return &formError{msg: "No queue named " + queueName + " in this console.", sentinel: topic.ErrInvalidSubscription}
	}
	_, err := t.Subscribe(q, a)
	return err
}

func (b *catalogBackend) definition(n named) catalog.Definition {
	q := n.Q.(catalog.Queue)
	d, _ := b.cat.Definition(q.Namespace(), q.Name())
	if p := &d.RedrivePolicy; p.DeadLetterQueue != "" {
		p.DeadLetterQueue = b.nameOf(q.Namespace(), p.DeadLetterQueue)
	}
	if p := d.RedriveAllowPolicy; p != nil {
		for i, s := range p.Sources {
			p.Sources[i] = b.nameOf(q.Namespace(), s)
		}
	}
	return d
}

func (b *catalogBackend) editable() catalog.Fields { return catalog.AllFields &^ catalog.FieldTags }

func (b *catalogBackend) canCreate() bool { return true }

// inNamespace returns d with its dead-letter queue and redrive sources, console names, named in ns: they
// must be queues of ns.
func (b *catalogBackend) inNamespace(ns catalog.Namespace, d catalog.Definition) (catalog.Definition, error) {
	if p := &d.RedrivePolicy; p.DeadLetterQueue != "" {
		dns, name, ok := b.parse(p.DeadLetterQueue)
		if _, there := b.cat.Queue(dns, name); !ok || !there || dns != ns {
			return d, noDeadLetterTarget(p.DeadLetterQueue)
		}
		p.DeadLetterQueue = name
	}
	if p := d.RedriveAllowPolicy; p != nil {
		c := *p
		c.Sources = make([]string, len(p.Sources))
		for i, s := range p.Sources {
			sns, name, ok := b.parse(s)
			if !ok || sns != ns {
				return d, &formError{msg: "Source " + s + " is not a queue name of this queue's account and region.",
					sentinel: fifoq.ErrInvalidRedriveAllowPolicy}
			}
			c.Sources[i] = name
		}
		d.RedriveAllowPolicy = &c
	}
	return d, nil
}

func (b *catalogBackend) createQueue(ctx context.Context, name string, d catalog.Definition, f catalog.Fields) error {
	ns, n, ok := b.parse(name)
	if !ok {
		return &formError{msg: "Not a queue name: name a queue as name, or account/region/name.", sentinel: fifoq.ErrInvalidQueueName}
	}
	d, err := b.inNamespace(ns, d)
	if err != nil {
		return err
	}
	_, err = b.cat.CreateQueue(ctx, ns, n, d, f)
	return err
}

func (b *catalogBackend) updateQueue(ctx context.Context, n named, d catalog.Definition, f catalog.Fields) error {
	q := n.Q.(catalog.Queue)
	d, err := b.inNamespace(q.Namespace(), d)
	if err != nil {
		return err
	}
	return b.cat.Update(ctx, q.Namespace(), q.Name(), func(cur *catalog.Definition) error {
		cur.Apply(d, f)
		return nil
	})
}

func (b *catalogBackend) deleteQueue(ctx context.Context, n named) error {
	q := n.Q.(catalog.Queue)
	return b.cat.DeleteQueue(ctx, q.Namespace(), q.Name())
}

func (b *catalogBackend) createTopic(ctx context.Context, name string, d catalog.TopicDefinition) error {
	ns, n, ok := b.parse(name)
	if !ok {
		return &formError{msg: "Not a topic name: name a topic as name, or account/region/name.", sentinel: topic.ErrInvalidName}
	}
	_, err := b.cat.CreateTopic(ctx, ns, n, d)
	return err
}

func (b *catalogBackend) subscribe(ctx context.Context, topicName, queueName string, a topic.SubscriptionAttributes) error {
	tns, tn, ok := b.parse(topicName)
	if _, there := b.cat.Topic(tns, tn); !ok || !there {
		return &formError{msg: "No topic named " + topicName + " in this console.", sentinel: topic.ErrNotFound}
	}
	qns, qn, ok := b.parse(queueName)
	if _, there := b.cat.Queue(qns, qn); !ok || !there {
		return &formError{msg: "No queue named " + queueName + " in this console.", sentinel: topic.ErrInvalidSubscription}
	}
	_, err := b.cat.Subscribe(ctx, tns, tn, catalog.SubscriptionDefinition{Queue: catalog.QueueKey{Namespace: qns, Name: qn},
		Owner: tns.Account, RawMessageDelivery: a.RawMessageDelivery, FilterPolicy: a.FilterPolicy,
		FilterPolicyScope: a.FilterPolicyScope})
	return err
}

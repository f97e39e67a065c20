package catalog

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/internal/rule"
	"github.com/fifoq/fifoq/topic"
)

// The topics of a catalogue (SNS beside SQS): topics by namespace and name, each a [Topic] with what SNS
// keeps of it, and their subscriptions to the catalogue's queues, by the queue's namespace and name. In a
// store they are kept with the queues' records (catalog_topic_store.go), so a catalogue opened again on the
// store has them back.

// A TopicDefinition is what a catalogue keeps of a topic: the settings fifoq acts on, those SNS keeps that
// fifoq only stores and shows, and its tags.
type TopicDefinition struct {
	// topic.Attributes are the settings the topic acts on: ContentBasedDeduplication, SignatureVersion.
	topic.Attributes
	// Stored holds, by SNS's attribute name, the attributes fifoq keeps and shows but does not act on
	// (DisplayName, Policy, DeliveryPolicy, KmsMasterKeyId, TracingConfig, ...). A front end checks their
	// names and values; the catalogue stores them as given.
	Stored map[string]string
	// Tags are the topic's tags: at most 50, keys of 1..128 characters, values of at most 256.
	Tags map[string]string
	// Created is when the topic was created; the catalogue sets it.
	Created time.Time
}

// clone returns a copy of d that shares no map with it.
func (d TopicDefinition) clone() TopicDefinition {
	d.Stored, d.Tags = maps.Clone(d.Stored), maps.Clone(d.Tags)
	return d
}

// A QueueKey names a queue of a catalogue by its namespace and name, whether the catalogue holds it or not.
type QueueKey struct {
	Namespace Namespace // the queue's namespace
	Name      string    // its name there
}

// A SubscriptionDefinition is what a catalogue keeps of a subscription of a topic to a queue (SNS's sqs
// protocol).
type SubscriptionDefinition struct {
	// Queue is the subscribed queue (the Endpoint). It may be a queue of any namespace, and need not exist:
	// while the catalogue holds no queue of that name, deliveries fail as they do to a deleted queue.
	Queue QueueKey
	// Owner is the account that subscribed it.
	Owner string
	// RawMessageDelivery is that of [topic.SubscriptionAttributes].
	RawMessageDelivery bool
	// FilterPolicy is that of [topic.SubscriptionAttributes]: SNS's JSON, "" for none.
	FilterPolicy string
	// topic.FilterPolicyScope is that of [topic.SubscriptionAttributes]; the catalogue keeps MessageAttributes for "".
	FilterPolicyScope topic.FilterPolicyScope
	// DeadLetterQueue is the queue that receives what cannot be delivered (RedrivePolicy's
	// deadLetterTargetArn), nil for none. As Queue, it is looked up at each failure.
	DeadLetterQueue *QueueKey
	// Stored holds, by SNS's attribute name, the attributes fifoq keeps and shows but does not act on
	// (DeliveryPolicy, SubscriptionRoleArn, ReplayPolicy, ...).
	Stored map[string]string
}

func (d SubscriptionDefinition) clone() SubscriptionDefinition {
	d.Stored = maps.Clone(d.Stored)
	if d.DeadLetterQueue != nil {
		dlq := *d.DeadLetterQueue
		d.DeadLetterQueue = &dlq
	}
	return d
}

// A Subscription is a subscription of a catalogue's topic, as the catalogue keeps it: change it with
// [Catalog.UpdateSubscription] and end it with [Catalog.Unsubscribe], which the catalogue records.
type Subscription struct {
	ARN        string                 // the subscription's ARN: the topic's, a colon and a UUID
	Topic      Topic                  // its topic
	Definition SubscriptionDefinition // what the catalogue keeps of it
}

// Errors of a catalogue's topics.
var (
	// ErrTopicExists: CreateTopic of a topic that exists with other attributes or other tags.
	ErrTopicExists = rule.New("InvalidParameter", "catalog: a topic of that name exists with other settings")
	// ErrInvalidTopicTags: a topic has at most 50 tags, with keys of 1..128 characters and values of at most
	// 256, and a tag change names a key at most once.
	ErrInvalidTopicTags = rule.New("InvalidParameter", "catalog: invalid topic tags")
	// ErrTopicTagLimitExceeded: a topic has at most 50 tags.
	ErrTopicTagLimitExceeded = rule.NewSaying("TagLimitExceeded", "catalog: too many tags",
		"Could not complete request: tag quota of per resource exceeded")
)

// maxTopicTags is the most tags a topic has.
const maxTopicTags = 50

// checkTopicTags checks a topic's tags.
func checkTopicTags(tags map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		if k == "" || len(k) > maxTagKeyLen || len(tags[k]) > maxTagValueLen {
			return rule.InvalidParameter(ErrInvalidTopicTags, "Tags Reason: Keys are 1 to 128 characters and values at most 256",
				"tag %q=%q: want a key of 1..%d characters and a value of at most %d", k, tags[k], maxTagKeyLen, maxTagValueLen)
		}
	}
	if len(tags) > maxTopicTags {
		return rule.Reject(ErrTopicTagLimitExceeded, "%d tags, want at most %d", len(tags), maxTopicTags)
	}
	return nil
}

// topicBook holds a catalogue's topics. Its lock is taken alone: no other lock of the catalogue is held with
// it, so publishes (which look queues up under Catalog.mu) never wait on it while holding another.
type topicBook struct {
	// mu guards the fields below.
	mu     sync.Mutex
	topics map[catalogKey]*catalogTopic
	subs   map[string]*catalogSub // by ARN
}

// A catalogTopic is a topic of a catalogue.
type catalogTopic struct {
	t    *topic.Topic
	key  catalogKey
	def  TopicDefinition // its Stored, Tags and Created; the topic.Attributes are its Topic's
	subs []*catalogSub   // in subscribe order
}

// A catalogSub is a subscription of a catalogue's topic.
type catalogSub struct {
	s     *topic.Subscription
	topic *catalogTopic
	def   SubscriptionDefinition
}

// book returns the catalogue's topic book, made on first use.
func (c *Catalog) book() *topicBook {
	c.topicsOnce.Do(func() {
		c.topics = &topicBook{topics: make(map[catalogKey]*catalogTopic), subs: make(map[string]*catalogSub)}
	})
	return c.topics
}

// topicOptions returns the options of the catalogue's topic name of ns, with attributes a.
func (c *Catalog) topicOptions(ns Namespace, a topic.Attributes) []topic.Option {
	opts := []topic.Option{topic.WithClock(c.clock), topic.WithARN(ns.Region, ns.Account), topic.WithSequenceFloor(c.now())}
	if a.ContentBasedDeduplication {
		opts = append(opts, topic.WithContentBasedDeduplication())
	}
	if a.SignatureVersion != "" {
		opts = append(opts, topic.WithSignatureVersion(a.SignatureVersion))
	}
	if c.logger != nil {
		opts = append(opts, topic.WithLogger(c.logger))
	}
	return opts
}

// CreateTopic creates the topic name of ns (CreateTopic): a FIFO topic when name ends in ".fifo", with the
// settings of def (its Created is ignored). When the topic exists, CreateTopic returns it if def asks for
// nothing else: each setting of def.Stored has the value the topic has, a SignatureVersion given ("" gives
// none) is the topic's, a ContentBasedDeduplication of true is the topic's, and each tag of def.Tags is on
// the topic with its value (as SNS asks: the topic may have more, and no tags ask nothing); otherwise it
// returns ErrTopicExists, whose SNS message says which ("Invalid parameter: Attributes Reason: Topic already
// exists with different attributes", or "Tags Reason: ... different tags"). A bad name returns
// topic.ErrInvalidName, bad settings topic.ErrInvalidAttribute, bad tags ErrInvalidTopicTags or
// ErrTopicTagLimitExceeded. In a store, the topic is on disk when CreateTopic returns.
func (c *Catalog) CreateTopic(ctx context.Context, ns Namespace, name string, def TopicDefinition) (Topic, error) {
	if err := ctx.Err(); err != nil {
		return Topic{}, err
	}
	if err := topic.Check(name, def.Attributes); err != nil {
		return Topic{}, err
	}
	if err := checkTopicTags(def.Tags); err != nil {
		return Topic{}, err
	}
	b := c.book()
	k := catalogKey{ns, name}
	var j journal
	b.mu.Lock()
	if e := b.topics[k]; e != nil {
		b.mu.Unlock()
		if err := e.sameAs(&def); err != nil {
			return Topic{}, err
		}
		return e.view(), nil
	}
	if err := c.err(); err != nil {
		b.mu.Unlock()
		return Topic{}, err
	}
	t, err := topic.New(name, c.topicOptions(ns, def.Attributes)...)
	if err != nil {
		b.mu.Unlock()
		return Topic{}, err
	}
	e := &catalogTopic{t: t, key: k, def: def.clone()}
	e.def.Attributes = topic.Attributes{}
	e.def.Created = c.now()
	b.topics[k] = e
	c.putTopicLocked(&j, e)
	b.mu.Unlock()
	if err := j.wait(); err != nil {
		return Topic{}, err
	}
	return e.view(), nil
}

// hasTags reports whether each of tags is in have, with its value.
func hasTags(have, tags map[string]string) bool {
	for k, v := range tags {
		if hv, ok := have[k]; !ok || hv != v {
			return false
		}
	}
	return true
}

// sameAs returns nil when def asks nothing of e that e has not (CreateTopic of an existing topic), else
// ErrTopicExists.
func (e *catalogTopic) sameAs(def *TopicDefinition) error {
	a := e.t.Attributes()
	differs := def.SignatureVersion != "" && def.SignatureVersion != cmp.Or(a.SignatureVersion, "1") ||
		def.ContentBasedDeduplication && !a.ContentBasedDeduplication
	for k, v := range def.Stored {
		if e.def.Stored[k] != v {
			differs = true
		}
	}
	if differs {
		return rule.InvalidParameter(ErrTopicExists, "Attributes Reason: Topic already exists with different attributes",
			"topic %s exists with other attributes", e.key.name)
	}
	if !hasTags(e.def.Tags, def.Tags) {
		return rule.InvalidParameter(ErrTopicExists, "Tags Reason: Topic already exists with different tags",
			"topic %s exists with other tags", e.key.name)
	}
	return nil
}

// Topic returns the topic name of ns.
func (c *Catalog) Topic(ns Namespace, name string) (Topic, bool) {
	b := c.book()
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.topics[catalogKey{ns, name}]
	if e == nil {
		return Topic{}, false
	}
	return e.view(), true
}

func (e *catalogTopic) view() Topic {
	return Topic{ns: e.key.ns, name: e.key.name, t: e.t}
}

// ListTopics returns the topics of ns, in name order.
func (c *Catalog) ListTopics(ns Namespace) []Topic {
	return c.topicsWhere(func(k catalogKey) bool { return k.ns == ns })
}

// Topics returns every topic of the catalogue, of every namespace, ordered by name, then account, then
// region: a snapshot.
func (c *Catalog) Topics() []Topic {
	return c.topicsWhere(func(catalogKey) bool { return true })
}

// NamedTopics returns every topic of the catalogue under its display name, as [Catalog.NamedQueues] does for
// queues (fifoqprom.NewTopicCollector takes it).
func (c *Catalog) NamedTopics() map[string]Topic {
	ts := c.Topics()
	out := make(map[string]Topic, len(ts))
	for _, t := range ts {
		out[c.DisplayName(t.ns, t.name)] = t
	}
	return out
}

func (c *Catalog) topicsWhere(keep func(catalogKey) bool) []Topic {
	b := c.book()
	b.mu.Lock()
	out := make([]Topic, 0, len(b.topics))
	for k, e := range b.topics {
		if keep(k) {
			out = append(out, e.view())
		}
	}
	b.mu.Unlock()
	slices.SortFunc(out, func(a, b Topic) int {
		return cmp.Or(strings.Compare(a.name, b.name), strings.Compare(a.ns.Account, b.ns.Account),
			strings.Compare(a.ns.Region, b.ns.Region))
	})
	return out
}

// TopicDefinition returns the definition of the topic name of ns as it is now, its topic.Attributes read
// from its Topic.
func (c *Catalog) TopicDefinition(ns Namespace, name string) (TopicDefinition, bool) {
	b := c.book()
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.topics[catalogKey{ns, name}]
	if e == nil {
		return TopicDefinition{}, false
	}
	return e.definition(), true
}

func (e *catalogTopic) definition() TopicDefinition {
	d := e.def.clone()
	d.Attributes = e.t.Attributes()
	return d
}

// UpdateTopic changes the definition of the topic name of ns (SetTopicAttributes, AddPermission,
// RemovePermission, TagResource, UntagResource): edit is given a copy of it, and changes it. The settings
// go to its Topic as [Topic.SetAttributes] takes them, and are checked as it checks them; the tags are
// checked as CreateTopic checks them. An edit that returns an error, or a definition that breaks a rule,
// changes nothing. A topic the catalogue does not hold returns topic.ErrNotFound. edit runs with the
// catalogue's topic lock held: it must not call the catalogue.
func (c *Catalog) UpdateTopic(ctx context.Context, ns Namespace, name string, edit func(d *TopicDefinition) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b := c.book()
	var j journal
	b.mu.Lock()
	e := b.topics[catalogKey{ns, name}]
	if e == nil {
		b.mu.Unlock()
		return rule.Reject(topic.ErrNotFound, "topic %s of %v", name, ns)
	}
	err := c.err()
	next := e.definition()
	if err == nil {
		err = edit(&next)
	}
	if err == nil {
		err = checkTopicTags(next.Tags)
	}
	if err == nil {
		err = e.t.SetAttributes(next.Attributes)
	}
	if err == nil {
		next.Created = e.def.Created
		next.Attributes = topic.Attributes{}
		e.def = next.clone()
		c.putTopicLocked(&j, e)
	}
	b.mu.Unlock()
	if err != nil {
		return err
	}
	return j.wait()
}

// DeleteTopic deletes the topic name of ns and its subscriptions (DeleteTopic); deleting a topic the
// catalogue does not hold does nothing, as SNS answers it. In a store, the topic is gone from disk when
// DeleteTopic returns.
func (c *Catalog) DeleteTopic(ctx context.Context, ns Namespace, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b := c.book()
	var j journal
	b.mu.Lock()
	k := catalogKey{ns, name}
	e := b.topics[k]
	if e == nil {
		b.mu.Unlock()
		return nil
	}
	if err := c.err(); err != nil {
		b.mu.Unlock()
		return err
	}
	delete(b.topics, k)
	for _, s := range e.subs {
		delete(b.subs, s.s.ARN())
	}
	e.subs = nil
	e.t.Delete()
	c.deleteTopicLocked(&j, e)
	b.mu.Unlock()
	return j.wait()
}

// An endpoint is what a subscription of a catalogue's topic delivers to: the queue of a namespace and name,
// looked up at each delivery, so that a queue deleted and created again gets the deliveries again, as SNS
// delivers to an ARN. It is a value: the endpoints of one queue are equal, so that a topic finds a queue's
// subscription when it is subscribed again.
type endpoint struct {
	c   *Catalog
	key QueueKey
}

// Name returns the queue's name in its namespace.
func (e endpoint) Name() string { return e.key.Name }

// FIFO reports whether the queue is a FIFO queue, by its name.
func (e endpoint) FIFO() bool { return fifoName(e.key.Name) }

// SendNoWait sends m to the catalogue's queue of that name, if it holds one, and otherwise returns
// ErrQueueDoesNotExist.
func (e endpoint) SendNoWait(ctx context.Context, m fifoq.Message) (fifoq.SendResult, fifoq.Pending, error) {
	q, ok := e.c.Queue(e.key.Namespace, e.key.Name)
	if !ok {
		return fifoq.SendResult{}, fifoq.Pending{}, rule.Reject(ErrQueueDoesNotExist, "queue %s of %v", e.key.Name, e.key.Namespace)
	}
	return q.q.SendNoWait(ctx, m)
}

// subscriptionAttributes returns the attributes of the topic's subscription that d defines.
func (c *Catalog) subscriptionAttributes(d *SubscriptionDefinition) topic.SubscriptionAttributes {
	a := topic.SubscriptionAttributes{RawMessageDelivery: d.RawMessageDelivery, FilterPolicy: d.FilterPolicy,
		FilterPolicyScope: d.FilterPolicyScope}
	if dlq := d.DeadLetterQueue; dlq != nil {
		a.DeadLetterQueue = endpoint{c, *dlq}
	}
	return a
}

// Subscribe subscribes the queue d names to the topic name of ns (Subscribe, with the sqs protocol), and
// returns the subscription. The queue need not exist yet (SNS takes the ARN of any queue). Its checks are
// those of [topic.Topic.Subscribe]: a FIFO queue on a standard topic returns topic.ErrInvalidSubscription, a
// bad filter policy topic.ErrInvalidFilterPolicy, a dead-letter queue of the wrong type
// topic.ErrInvalidRedrivePolicy. Subscribing a queue that is subscribed already returns its subscription
// when the attributes are the same (Stored and Owner aside), and topic.ErrInvalidSubscription otherwise. A
// topic the catalogue does not hold returns topic.ErrNotFound. In a store, the subscription is on disk when
// Subscribe returns.
func (c *Catalog) Subscribe(ctx context.Context, ns Namespace, name string, d SubscriptionDefinition) (Subscription, error) {
	if err := ctx.Err(); err != nil {
		return Subscription{}, err
	}
	var j journal
	cs, err := c.subscribe(&j, catalogKey{ns, name}, d)
	if err != nil {
		return Subscription{}, err
	}
	return cs.view(), j.wait()
}

func (c *Catalog) subscribe(j *journal, k catalogKey, d SubscriptionDefinition) (*catalogSub, error) {
	b := c.book()
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.topics[k]
	if e == nil {
		return nil, rule.Reject(topic.ErrNotFound, "topic %s of %v", k.name, k.ns)
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	s, err := e.t.Subscribe(endpoint{c, d.Queue}, c.subscriptionAttributes(&d))
	if err != nil {
		return nil, err
	}
	if cs := b.subs[s.ARN()]; cs != nil {
		return cs, nil // subscribed already, with these attributes
	}
	d.FilterPolicyScope = s.Attributes().FilterPolicyScope
	cs := &catalogSub{s: s, topic: e, def: d.clone()}
	e.subs = append(e.subs, cs)
	b.subs[s.ARN()] = cs
	c.putSubscriptionLocked(j, cs)
	return cs, nil
}

func (s *catalogSub) view() Subscription {
	return Subscription{ARN: s.s.ARN(), Topic: s.topic.view(), Definition: s.def.clone()}
}

// Subscription returns the subscription of that ARN.
func (c *Catalog) Subscription(arn string) (Subscription, bool) {
	b := c.book()
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.subs[arn]
	if s == nil {
		return Subscription{}, false
	}
	return s.view(), true
}

// TopicSubscriptions returns the subscriptions of the topic name of ns, in the order they were made; ok is
// false when the catalogue holds no such topic.
func (c *Catalog) TopicSubscriptions(ns Namespace, name string) (subs []Subscription, ok bool) {
	b := c.book()
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.topics[catalogKey{ns, name}]
	if e == nil {
		return nil, false
	}
	subs = make([]Subscription, len(e.subs))
	for i, s := range e.subs {
		subs[i] = s.view()
	}
	return subs, true
}

// UpdateSubscription changes the definition of the subscription of that ARN (SetSubscriptionAttributes):
// edit is given a copy of it, and changes it; its queue and owner cannot change. The attributes are checked
// as [Subscription.SetAttributes] checks them. An edit that returns an error, or a definition that breaks a
// rule, changes nothing. A subscription the catalogue does not hold returns topic.ErrSubscriptionNotFound. edit
// runs with the catalogue's topic lock held: it must not call the catalogue.
func (c *Catalog) UpdateSubscription(ctx context.Context, arn string, edit func(d *SubscriptionDefinition) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b := c.book()
	var j journal
	b.mu.Lock()
	s := b.subs[arn]
	if s == nil {
		b.mu.Unlock()
		return rule.Reject(topic.ErrSubscriptionNotFound, "%s", arn)
	}
	next := s.def.clone()
	err := c.err()
	if err == nil {
		err = edit(&next)
	}
	next.Queue, next.Owner = s.def.Queue, s.def.Owner
	if err == nil {
		err = s.s.SetAttributes(c.subscriptionAttributes(&next))
	}
	if err == nil {
		next.FilterPolicyScope = s.s.Attributes().FilterPolicyScope
		s.def = next.clone()
		c.putSubscriptionLocked(&j, s)
	}
	b.mu.Unlock()
	if err != nil {
		return err
	}
	return j.wait()
}

// Unsubscribe deletes the subscription of that ARN (Unsubscribe); one the catalogue does not hold does
// nothing, as SNS answers it. In a store, it is gone from disk when Unsubscribe returns.
func (c *Catalog) Unsubscribe(ctx context.Context, arn string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b := c.book()
	var j journal
	b.mu.Lock()
	s := b.subs[arn]
	if s == nil {
		b.mu.Unlock()
		return nil
	}
	if err := c.err(); err != nil {
		b.mu.Unlock()
		return err
	}
	delete(b.subs, arn)
	s.topic.subs = slices.DeleteFunc(s.topic.subs, func(o *catalogSub) bool { return o == s })
	s.s.Unsubscribe()
	c.deleteSubscriptionLocked(&j, s)
	b.mu.Unlock()
	return j.wait()
}

// topicCommit commits a batch of topic records, for the call to wait for: c.commit, for a catalogue in a
// store.
func (c *Catalog) topicCommit(j *journal, fill func(b *fifoq.RecordBatch)) {
	if c.st == nil {
		return
	}
	b := c.rec.NewBatch()
	fill(b)
	c.commit(j, b)
}

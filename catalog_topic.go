package fifoq

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fifoq/fifoq/internal/rule"
	"github.com/fifoq/fifoq/storage"
)

// The topics of a catalogue (SNS beside SQS): topics by namespace and name, each a [Topic] with what SNS
// keeps of it, and their subscriptions to the catalogue's queues, by the queue's namespace and name. In a
// store they are kept with the queues' records (catalog_topic_store.go), so a catalogue opened again on the
// store has them back.

// A TopicDefinition is what a catalogue keeps of a topic: the settings fifoq acts on, those SNS keeps that
// fifoq only stores and shows, and its tags.
type TopicDefinition struct {
	// TopicAttributes are the settings the topic acts on: ContentBasedDeduplication, SignatureVersion.
	TopicAttributes
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

// A CatalogTopic is a topic of a [Catalog], with its namespace and name. Topic is the live topic, to publish
// to and read; the catalogue does not record a change made through it (nor its store: a restart undoes it),
// so change the topic with [Catalog.UpdateTopic], [Catalog.Subscribe] and [Catalog.DeleteTopic], not with
// [Topic.SetAttributes], [Topic.Subscribe] or [Topic.Delete].
type CatalogTopic struct {
	Namespace Namespace // the topic's namespace
	Name      string    // its name there
	Topic     *Topic    // the topic, whose ARN is arn:aws:sns:<region>:<account>:<name>
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
	// RawMessageDelivery is that of [SubscriptionAttributes].
	RawMessageDelivery bool
	// FilterPolicy is that of [SubscriptionAttributes]: SNS's JSON, "" for none.
	FilterPolicy string
	// FilterPolicyScope is that of [SubscriptionAttributes]; the catalogue keeps MessageAttributes for "".
	FilterPolicyScope FilterPolicyScope
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

// A CatalogSubscription is a subscription of a catalogue's topic. Subscription is the live subscription, to
// read; change it with [Catalog.UpdateSubscription] and end it with [Catalog.Unsubscribe], which the
// catalogue records: its [Subscription.SetAttributes] panics, and its [Subscription.Unsubscribe] returns
// ErrCatalogSubscription.
type CatalogSubscription struct {
	ARN          string                 // the subscription's ARN: the topic's, a colon and a UUID
	Topic        CatalogTopic           // its topic
	Definition   SubscriptionDefinition // what the catalogue keeps of it
	Subscription *Subscription          // the topic's subscription, for its Queue and attributes
}

// Errors of a catalogue's topics.
var (
	// ErrTopicExists: CreateTopic of a topic that exists with other attributes or other tags.
	ErrTopicExists = rule.New("InvalidParameter", "fifoq: a topic of that name exists with other settings")
	// ErrInvalidTopicTags: a topic has at most 50 tags, with keys of 1..128 characters and values of at most
	// 256, and a tag change names a key at most once.
	ErrInvalidTopicTags = rule.New("InvalidParameter", "fifoq: invalid topic tags")
	// ErrTopicTagLimitExceeded: a topic has at most 50 tags.
	ErrTopicTagLimitExceeded = rule.NewSaying("TagLimitExceeded", "fifoq: too many tags",
		"Could not complete request: tag quota of per resource exceeded")
)

// maxTopicTags is the most tags a topic has.
const maxTopicTags = 50

// checkTopicTags checks a topic's tags.
func checkTopicTags(tags map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		if k == "" || len(k) > maxTagKeyLen || len(tags[k]) > maxTagValueLen {
			return invalidParameter(ErrInvalidTopicTags, "Tags Reason: Keys are 1 to 128 characters and values at most 256",
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
	t    *Topic
	key  catalogKey
	def  TopicDefinition // its Stored, Tags and Created; the TopicAttributes are its Topic's
	subs []*catalogSub   // in subscribe order
}

// A catalogSub is a subscription of a catalogue's topic.
type catalogSub struct {
	s     *Subscription
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
func (c *Catalog) topicOptions(ns Namespace, a TopicAttributes) []TopicOption {
	opts := []TopicOption{WithTopicClock(c.clock), WithTopicARN(ns.Region, ns.Account), withTopicSequenceFloor(c.clock.Now())}
	if a.ContentBasedDeduplication {
		opts = append(opts, WithTopicContentBasedDeduplication())
	}
	if a.SignatureVersion != "" {
		opts = append(opts, WithTopicSignatureVersion(a.SignatureVersion))
	}
	if c.logger != nil {
		opts = append(opts, WithTopicLogger(c.logger))
	}
	return opts
}

// CreateTopic creates the topic name of ns (CreateTopic): a FIFO topic when name ends in ".fifo", with the
// settings of def (its Created is ignored). When the topic exists, CreateTopic returns it if def asks for
// nothing else: each setting of def.Stored has the value the topic has, a SignatureVersion given ("" gives
// none) is the topic's, a ContentBasedDeduplication of true is the topic's, and def.Tags, when given, are
// the topic's tags; otherwise it returns ErrTopicExists, whose SNS message says which ("Invalid parameter:
// Attributes Reason: Topic already exists with different attributes", or "Tags Reason: ... different
// tags"). A bad name returns ErrInvalidTopicName, bad settings ErrInvalidTopicAttribute, bad tags
// ErrInvalidTopicTags or ErrTopicTagLimitExceeded. In a store, the topic is on disk when CreateTopic returns.
func (c *Catalog) CreateTopic(ctx context.Context, ns Namespace, name string, def TopicDefinition) (*Topic, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := validateTopicName(name); err != nil {
		return nil, err
	}
	if err := checkTopicAttributes(def.TopicAttributes, strings.HasSuffix(name, ".fifo")); err != nil {
		return nil, err
	}
	if err := checkTopicTags(def.Tags); err != nil {
		return nil, err
	}
	b := c.book()
	k := catalogKey{ns, name}
	var j commit
	b.mu.Lock()
	if e := b.topics[k]; e != nil {
		b.mu.Unlock()
		return e.t, e.sameAs(&def)
	}
	if err := c.err(); err != nil {
		b.mu.Unlock()
		return nil, err
	}
	t, err := NewTopic(name, c.topicOptions(ns, def.TopicAttributes)...)
	if err != nil {
		b.mu.Unlock()
		return nil, err
	}
	e := &catalogTopic{t: t, key: k, def: def.clone()}
	e.def.TopicAttributes = TopicAttributes{}
	e.def.Created = c.clock.Now()
	b.topics[k] = e
	c.putTopicLocked(&j, e)
	b.mu.Unlock()
	return t, j.wait(c.st)
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
		return invalidParameter(ErrTopicExists, "Attributes Reason: Topic already exists with different attributes",
			"topic %s exists with other attributes", e.key.name)
	}
	if len(def.Tags) > 0 && !maps.Equal(def.Tags, e.def.Tags) {
		return invalidParameter(ErrTopicExists, "Tags Reason: Topic already exists with different tags",
			"topic %s exists with other tags", e.key.name)
	}
	return nil
}

// Topic returns the topic name of ns.
func (c *Catalog) Topic(ns Namespace, name string) (CatalogTopic, bool) {
	b := c.book()
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.topics[catalogKey{ns, name}]
	if e == nil {
		return CatalogTopic{}, false
	}
	return e.view(), true
}

func (e *catalogTopic) view() CatalogTopic {
	return CatalogTopic{Namespace: e.key.ns, Name: e.key.name, Topic: e.t}
}

// ListTopics returns the topics of ns, in name order.
func (c *Catalog) ListTopics(ns Namespace) []CatalogTopic {
	return c.topicsWhere(func(k catalogKey) bool { return k.ns == ns })
}

// Topics returns every topic of the catalogue, of every namespace, ordered by name, then account, then
// region: a snapshot.
func (c *Catalog) Topics() []CatalogTopic {
	return c.topicsWhere(func(catalogKey) bool { return true })
}

func (c *Catalog) topicsWhere(keep func(catalogKey) bool) []CatalogTopic {
	b := c.book()
	b.mu.Lock()
	out := make([]CatalogTopic, 0, len(b.topics))
	for k, e := range b.topics {
		if keep(k) {
			out = append(out, e.view())
		}
	}
	b.mu.Unlock()
	slices.SortFunc(out, func(a, b CatalogTopic) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.Namespace.Account, b.Namespace.Account),
			strings.Compare(a.Namespace.Region, b.Namespace.Region))
	})
	return out
}

// TopicDefinition returns the definition of the topic name of ns as it is now, its TopicAttributes read
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
	d.TopicAttributes = e.t.Attributes()
	return d
}

// UpdateTopic changes the definition of the topic name of ns (SetTopicAttributes, AddPermission,
// RemovePermission, TagResource, UntagResource): edit is given a copy of it, and changes it. The settings
// go to its Topic as [Topic.SetAttributes] takes them, and are checked as it checks them; the tags are
// checked as CreateTopic checks them. An edit that returns an error, or a definition that breaks a rule,
// changes nothing. A topic the catalogue does not hold returns ErrTopicNotFound. edit runs with the
// catalogue's topic lock held: it must not call the catalogue.
func (c *Catalog) UpdateTopic(ctx context.Context, ns Namespace, name string, edit func(d *TopicDefinition) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b := c.book()
	var j commit
	b.mu.Lock()
	e := b.topics[catalogKey{ns, name}]
	if e == nil {
		b.mu.Unlock()
		return rule.Reject(ErrTopicNotFound, "topic %s of %v", name, ns)
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
		err = e.t.SetAttributes(next.TopicAttributes)
	}
	if err == nil {
		next.Created = e.def.Created
		next.TopicAttributes = TopicAttributes{}
		e.def = next.clone()
		c.putTopicLocked(&j, e)
	}
	b.mu.Unlock()
	if err != nil {
		return err
	}
	return j.wait(c.st)
}

// DeleteTopic deletes the topic name of ns and its subscriptions (DeleteTopic); deleting a topic the
// catalogue does not hold does nothing, as SNS answers it. In a store, the topic is gone from disk when
// DeleteTopic returns.
func (c *Catalog) DeleteTopic(ctx context.Context, ns Namespace, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b := c.book()
	var j commit
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
		delete(b.subs, s.s.arn)
	}
	e.subs = nil
	e.t.Delete()
	c.deleteTopicLocked(&j, e)
	b.mu.Unlock()
	return j.wait(c.st)
}

// subscriptionConfig returns the configuration of d's Subscription on topic t, checked; subscribe says
// whether the call is a Subscribe.
func (c *Catalog) subscriptionConfig(t *Topic, d *SubscriptionDefinition, subscribe bool) (*subscriptionConfig, error) {
	attrs := SubscriptionAttributes{RawMessageDelivery: d.RawMessageDelivery, FilterPolicy: d.FilterPolicy,
		FilterPolicyScope: d.FilterPolicyScope}
	cfg, err := t.subscriptionConfig(fifoName(d.Queue.Name), attrs, subscribe)
	if err != nil {
		return nil, err
	}
	if dlq := d.DeadLetterQueue; dlq != nil {
		if err := t.checkDeadLetterQueue(fifoName(d.Queue.Name), fifoName(dlq.Name), dlq.Name); err != nil {
			return nil, err
		}
		cfg.dlq = c.queueTarget(*dlq)
	}
	d.FilterPolicyScope = cfg.attrs.FilterPolicyScope
	return cfg, nil
}

// queueTarget returns the target of the queue k names: the catalogue's queue of that name at each look.
func (c *Catalog) queueTarget(k QueueKey) *queueTarget {
	return &queueTarget{key: catalogKey{k.Namespace, k.Name}, fifo: fifoName(k.Name), queue: func() *Queue {
		q, _ := c.Queue(k.Namespace, k.Name)
		return q.Queue
	}}
}

// Subscribe subscribes the queue d names to the topic name of ns (Subscribe, with the sqs protocol), and
// returns the subscription. The queue need not exist yet (SNS takes the ARN of any queue). Its checks are
// those of [Topic.Subscribe]: a FIFO queue on a standard topic returns ErrInvalidSubscription, a bad
// filter policy ErrInvalidFilterPolicy, a dead-letter queue of the wrong type
// ErrInvalidSubscriptionRedrivePolicy. Subscribing a queue that is subscribed already returns its
// subscription when the attributes are the same (Stored and Owner aside), and ErrInvalidSubscription
// otherwise. A topic the catalogue does not hold returns ErrTopicNotFound. In a store, the subscription is on
// disk when Subscribe returns.
func (c *Catalog) Subscribe(ctx context.Context, ns Namespace, topic string, d SubscriptionDefinition) (CatalogSubscription, error) {
	if err := ctx.Err(); err != nil {
		return CatalogSubscription{}, err
	}
	b := c.book()
	var j commit
	b.mu.Lock()
	e := b.topics[catalogKey{ns, topic}]
	if e == nil {
		b.mu.Unlock()
		return CatalogSubscription{}, rule.Reject(ErrTopicNotFound, "topic %s of %v", topic, ns)
	}
	if fifoName(d.Queue.Name) && !e.t.fifo {
		b.mu.Unlock()
		return CatalogSubscription{}, invalidParameter(ErrInvalidSubscription,
			"Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be subscribed to standard SNS topics",
			"FIFO queue %s on standard topic %s", d.Queue.Name, topic)
	}
	cfg, err := c.subscriptionConfig(e.t, &d, true)
	if err == nil {
		err = c.err()
	}
	if err != nil {
		b.mu.Unlock()
		return CatalogSubscription{}, err
	}
	for _, s := range e.subs {
		if s.def.Queue != d.Queue {
			continue
		}
		b.mu.Unlock()
		if s.s.cfg.Load().attrs != cfg.attrs || !sameDLQ(s.def.DeadLetterQueue, d.DeadLetterQueue) {
			return CatalogSubscription{}, invalidParameter(ErrInvalidSubscription,
				"Attributes Reason: Subscription already exists with different attributes",
				"queue %s is subscribed to %s with other attributes", d.Queue.Name, topic)
		}
		return s.view(), nil
	}
	s, err := e.t.subscribeTarget(c.queueTarget(d.Queue), cfg, "")
	if err != nil {
		b.mu.Unlock()
		return CatalogSubscription{}, err
	}
	cs := &catalogSub{s: s, topic: e, def: d.clone()}
	e.subs = append(e.subs, cs)
	b.subs[s.arn] = cs
	c.putSubscriptionLocked(&j, cs)
	b.mu.Unlock()
	return cs.view(), j.wait(c.st)
}

func sameDLQ(a, b *QueueKey) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func (s *catalogSub) view() CatalogSubscription {
	return CatalogSubscription{ARN: s.s.arn, Topic: s.topic.view(), Definition: s.def.clone(), Subscription: s.s}
}

// Subscription returns the subscription of that ARN.
func (c *Catalog) Subscription(arn string) (CatalogSubscription, bool) {
	b := c.book()
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.subs[arn]
	if s == nil {
		return CatalogSubscription{}, false
	}
	return s.view(), true
}

// TopicSubscriptions returns the subscriptions of the topic name of ns, in the order they were made; ok is
// false when the catalogue holds no such topic.
func (c *Catalog) TopicSubscriptions(ns Namespace, name string) (subs []CatalogSubscription, ok bool) {
	b := c.book()
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.topics[catalogKey{ns, name}]
	if e == nil {
		return nil, false
	}
	subs = make([]CatalogSubscription, len(e.subs))
	for i, s := range e.subs {
		subs[i] = s.view()
	}
	return subs, true
}

// UpdateSubscription changes the definition of the subscription of that ARN (SetSubscriptionAttributes):
// edit is given a copy of it, and changes it; its queue and owner cannot change. The attributes are checked
// as [Subscription.SetAttributes] checks them. An edit that returns an error, or a definition that breaks a
// rule, changes nothing. A subscription the catalogue does not hold returns ErrSubscriptionNotFound. edit
// runs with the catalogue's topic lock held: it must not call the catalogue.
func (c *Catalog) UpdateSubscription(ctx context.Context, arn string, edit func(d *SubscriptionDefinition) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b := c.book()
	var j commit
	b.mu.Lock()
	s := b.subs[arn]
	if s == nil {
		b.mu.Unlock()
		return rule.Reject(ErrSubscriptionNotFound, "%s", arn)
	}
	next := s.def.clone()
	err := c.err()
	if err == nil {
		err = edit(&next)
	}
	next.Queue, next.Owner = s.def.Queue, s.def.Owner
	var cfg *subscriptionConfig
	if err == nil {
		cfg, err = c.subscriptionConfig(s.topic.t, &next, false)
	}
	if err == nil {
		s.s.cfg.Store(cfg)
		s.def = next.clone()
		c.putSubscriptionLocked(&j, s)
	}
	b.mu.Unlock()
	if err != nil {
		return err
	}
	return j.wait(c.st)
}

// Unsubscribe deletes the subscription of that ARN (Unsubscribe); one the catalogue does not hold does
// nothing, as SNS answers it. In a store, it is gone from disk when Unsubscribe returns.
func (c *Catalog) Unsubscribe(ctx context.Context, arn string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b := c.book()
	var j commit
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
	s.s.unsubscribe()
	c.deleteSubscriptionLocked(&j, s)
	b.mu.Unlock()
	return j.wait(c.st)
}

// topicCommit commits a batch of topic records, for the call to wait for: c.commit, for a catalogue in a
// store.
func (c *Catalog) topicCommit(j *commit, fill func(b storage.Batch)) {
	if c.st == nil {
		return
	}
	b := c.st.eng.NewBatch()
	fill(b)
	c.commit(j, b)
}

package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/topic"
)

// A declared change: an attribute of a topic or a subscription that the store held with another value, set
// back to the declared one.
type declaredChange struct{ name, stored, declared string }

// declareTopics declares the topics of the config file in cat, in home (the server's default account and
// region), after the queues, as serve declares queues: a topic the catalogue does not hold is created with
// its attributes; one it holds (on a store) gets the attributes declared, with a warning for each that
// differed, and keeps the others. Then each subscription: a queue not subscribed yet is subscribed; one
// subscribed gets the fields declared, with a warning for each that differed. A subscription's queues must be
// the server's (declared, or held by the store). An error names where the topic or subscription was
// declared, and is a usage error (exit 2) unless the store failed.
func declareTopics(ctx context.Context, cat *catalog.Catalog, home catalog.Namespace, specs []topicSpec, logger *slog.Logger) error {
	for _, s := range specs {
		if err := declareTopic(ctx, cat, home, s, logger); err != nil {
			return err
		}
		for _, sub := range s.Subscriptions {
			if err := declareSubscription(ctx, cat, home, s.Name, sub, logger); err != nil {
				return err
			}
		}
	}
	return nil
}

// declareTopic creates the topic s, or gives the topic the catalogue holds the attributes of s.
func declareTopic(ctx context.Context, cat *catalog.Catalog, home catalog.Namespace, s topicSpec, logger *slog.Logger) error {
	cur, held := cat.TopicDefinition(home, s.Name)
	if !held {
		if _, err := cat.CreateTopic(ctx, home, s.Name, catalog.TopicDefinition{Attributes: s.Attributes}); err != nil {
			return originError(s.origin, fmt.Errorf("create topic: %w", err))
		}
		logger.Info("topic created", "topic", s.Name, "content_based_deduplication", s.Attributes.ContentBasedDeduplication,
			"signature_version", cmp.Or(s.Attributes.SignatureVersion, "1"))
		return nil
	}
	var changes []declaredChange
	if s.declared["ContentBasedDeduplication"] && cur.ContentBasedDeduplication != s.Attributes.ContentBasedDeduplication {
		changes = append(changes, declaredChange{"ContentBasedDeduplication", strconv.FormatBool(cur.ContentBasedDeduplication),
			strconv.FormatBool(s.Attributes.ContentBasedDeduplication)})
	}
	if stored, want := cmp.Or(cur.SignatureVersion, "1"), cmp.Or(s.Attributes.SignatureVersion, "1"); s.declared["SignatureVersion"] && stored != want {
		changes = append(changes, declaredChange{"SignatureVersion", stored, want})
	}
	if len(changes) > 0 {
		err := cat.UpdateTopic(ctx, home, s.Name, func(d *catalog.TopicDefinition) error {
			if s.declared["ContentBasedDeduplication"] {
				d.ContentBasedDeduplication = s.Attributes.ContentBasedDeduplication
			}
			if s.declared["SignatureVersion"] {
				d.SignatureVersion = s.Attributes.SignatureVersion
			}
			return nil
		})
		if err != nil {
			return originError(s.origin, fmt.Errorf("set topic attributes: %w", err))
		}
		for _, c := range changes {
			logger.Warn("stored attribute differs from the declared one: set to the declared value", "topic", s.Name,
				"attribute", c.name, "stored", c.stored, "declared", c.declared)
		}
	}
	logger.Info("topic kept", "topic", s.Name)
	return nil
}

// declareSubscription subscribes the queue of sub to the topic topicName, or gives its subscription the
// fields of sub.
func declareSubscription(ctx context.Context, cat *catalog.Catalog, home catalog.Namespace, topicName string, sub subscriptionSpec,
	logger *slog.Logger) error {
	queue, err := serverQueue(cat, home, sub.Queue)
	if err != nil {
		return originError(sub.origin, err)
	}
	var dlq *catalog.QueueKey
	if sub.DeadLetterQueue != "" {
		k, err := serverQueue(cat, home, sub.DeadLetterQueue)
		if err != nil {
			return originError(sub.origin, fmt.Errorf("redrivePolicy: %w", err))
		}
		dlq = &k
	}
	subs, _ := cat.TopicSubscriptions(home, topicName)
	var cur *catalog.Subscription
	for i := range subs {
		if subs[i].Definition.Queue == queue {
			cur = &subs[i]
		}
	}
	if cur == nil {
		d := catalog.SubscriptionDefinition{Queue: queue, Owner: home.Account}
		sub.apply(&d, dlq)
		s, err := cat.Subscribe(ctx, home, topicName, d)
		if err != nil {
			return originError(sub.origin, fmt.Errorf("subscribe: %w", err))
		}
		logger.Info("subscription created", "topic", topicName, "queue", cat.DisplayName(queue.Namespace, queue.Name),
			"subscription_arn", s.ARN, "raw_message_delivery", d.RawMessageDelivery, "filter_policy", d.FilterPolicy,
			"dead_letter_queue", dlq != nil)
		return nil
	}
	want := cur.Definition
	sub.apply(&want, dlq)
	changes := subscriptionChanges(cur.Definition, want)
	if len(changes) > 0 {
		err := cat.UpdateSubscription(ctx, cur.ARN, func(d *catalog.SubscriptionDefinition) error {
			sub.apply(d, dlq)
			return nil
		})
		if err != nil {
			return originError(sub.origin, fmt.Errorf("set subscription attributes: %w", err))
		}
		for _, c := range changes {
			logger.Warn("stored attribute differs from the declared one: set to the declared value", "topic", topicName,
				"subscription_arn", cur.ARN, "attribute", c.name, "stored", c.stored, "declared", c.declared)
		}
	}
	logger.Info("subscription kept", "topic", topicName, "queue", cat.DisplayName(queue.Namespace, queue.Name),
		"subscription_arn", cur.ARN)
	return nil
}

// apply sets the fields of d that sub declares; dlq is the dead-letter queue it names, resolved.
func (sub *subscriptionSpec) apply(d *catalog.SubscriptionDefinition, dlq *catalog.QueueKey) {
	if sub.RawMessageDelivery != nil {
		d.RawMessageDelivery = *sub.RawMessageDelivery
	}
	if sub.FilterPolicy != nil {
		d.FilterPolicy = *sub.FilterPolicy
	}
	if sub.FilterPolicyScope != nil {
		d.FilterPolicyScope = *sub.FilterPolicyScope
	}
	if sub.redrive {
		d.DeadLetterQueue = dlq
	}
}

// subscriptionChanges returns the fields of a subscription that differ between what is stored and what is
// wanted, by SNS's attribute names.
func subscriptionChanges(stored, want catalog.SubscriptionDefinition) []declaredChange {
	var out []declaredChange
	if stored.RawMessageDelivery != want.RawMessageDelivery {
		out = append(out, declaredChange{"RawMessageDelivery", strconv.FormatBool(stored.RawMessageDelivery),
			strconv.FormatBool(want.RawMessageDelivery)})
	}
	if stored.FilterPolicy != want.FilterPolicy {
		out = append(out, declaredChange{"FilterPolicy", stored.FilterPolicy, want.FilterPolicy})
	}
	if a, b := cmp.Or(stored.FilterPolicyScope, topic.FilterPolicyScopeMessageAttributes),
		cmp.Or(want.FilterPolicyScope, topic.FilterPolicyScopeMessageAttributes); a != b {
		out = append(out, declaredChange{"FilterPolicyScope", string(a), string(b)})
	}
	if dlqName(stored.DeadLetterQueue) != dlqName(want.DeadLetterQueue) {
		out = append(out, declaredChange{"RedrivePolicy", dlqName(stored.DeadLetterQueue), dlqName(want.DeadLetterQueue)})
	}
	return out
}

// dlqName names a subscription's dead-letter queue by its ARN, "" for none.
func dlqName(k *catalog.QueueKey) string {
	if k == nil {
		return ""
	}
	return k.Namespace.QueueARN(k.Name)
}

// serverQueue returns the queue q names (a name in home, or an ARN), which the server must hold.
func serverQueue(cat *catalog.Catalog, home catalog.Namespace, q string) (catalog.QueueKey, error) {
	ns, name, err := queueOfMapping(q, home)
	if err != nil {
		return catalog.QueueKey{}, err
	}
	if _, ok := cat.Queue(ns, name); !ok {
		return catalog.QueueKey{}, fmt.Errorf("the server has no queue %s in account %s and region %s: declare it in the "+
			`config's "queues" or with --queue, or name a queue of --data-dir`, name, ns.Account, ns.Region)
	}
	return catalog.QueueKey{Namespace: ns, Name: name}, nil
}

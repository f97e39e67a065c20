package catalog_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/topic"
)

// The topics of a catalogue: subscriptions by queue name, and what a restart keeps.

// ctReceiveBodies receives up to 10 messages of the queue name of ns and returns their bodies.
func ctReceiveBodies(t *testing.T, c *catalog.Catalog, ns catalog.Namespace, name string) []string {
	t.Helper()
	q, ok := c.Queue(ns, name)
	require.True(t, ok, "queue %s", name)
	ms, err := q.Receive(context.Background(), fifoq.ReceiveOptions{MaxMessages: 10, NoWaitTime: true})
	require.NoError(t, err)
	var bodies []string
	for _, m := range ms {
		bodies = append(bodies, m.Body)
	}
	return bodies
}

func TestCatalogTopicDeliversByQueueName(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := catalog.New(catalog.WithDefaultNamespace(ctNS))
	_, err := c.CreateQueue(ctx, ctNS, "billing", catalog.Definition{}, 0)
	require.NoError(t, err)
	orders, err := c.CreateTopic(ctx, ctNS, "orders", catalog.TopicDefinition{Stored: map[string]string{"DisplayName": "Orders"}})
	require.NoError(t, err)
	require.Equal(t, "arn:aws:sns:"+ctNS.Region+":"+ctNS.Account+":orders", orders.ARN())

	sub, err := c.Subscribe(ctx, ctNS, "orders", catalog.SubscriptionDefinition{
		Queue: catalog.QueueKey{Namespace: ctNS, Name: "billing"}, RawMessageDelivery: true,
		FilterPolicy: `{"kind": ["paid"]}`,
	})
	require.NoError(t, err)
	again, err := c.Subscribe(ctx, ctNS, "orders", catalog.SubscriptionDefinition{
		Queue: catalog.QueueKey{Namespace: ctNS, Name: "billing"}, RawMessageDelivery: true, FilterPolicy: `{"kind": ["paid"]}`,
	})
	require.NoError(t, err)
	require.Equal(t, sub.ARN, again.ARN, "subscribing again with the same attributes returns the subscription")
	_, err = c.Subscribe(ctx, ctNS, "orders", catalog.SubscriptionDefinition{Queue: catalog.QueueKey{Namespace: ctNS, Name: "billing"}})
	require.ErrorIs(t, err, topic.ErrInvalidSubscription)

	paid := topic.Message{Message: "paid", Attributes: map[string]fifoq.Attribute{"kind": {DataType: "String", StringValue: "paid"}}}
	_, err = orders.Publish(ctx, paid)
	require.NoError(t, err)
	_, err = orders.Publish(ctx, topic.Message{Message: "draft"})
	require.NoError(t, err)
	require.Equal(t, []string{"paid"}, ctReceiveBodies(t, c, ctNS, "billing"))

	// The queue deleted: the delivery fails; created again: it gets the messages again, as SNS delivers by ARN.
	require.NoError(t, c.DeleteQueue(ctx, ctNS, "billing"))
	_, err = orders.Publish(ctx, paid)
	require.NoError(t, err)
	require.EqualValues(t, 1, orders.Metrics().Failed)
	_, err = c.CreateQueue(ctx, ctNS, "billing", catalog.Definition{}, 0)
	require.Error(t, err, "the name is usable again 60 seconds later")
	_, err = c.CreateQueue(ctx, ctNS, "billing2", catalog.Definition{}, 0)
	require.NoError(t, err)

	require.NoError(t, c.Unsubscribe(ctx, sub.ARN))
	_, ok := c.Subscription(sub.ARN)
	require.False(t, ok)
	require.NoError(t, c.Unsubscribe(ctx, sub.ARN), "unsubscribing twice does nothing")
}

func TestCatalogTopicQueueCreatedLater(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := catalog.New()
	ns := catalog.Namespace{}
	news, err := c.CreateTopic(ctx, ns, "news", catalog.TopicDefinition{})
	require.NoError(t, err)
	_, err = c.Subscribe(ctx, ns, "news", catalog.SubscriptionDefinition{Queue: catalog.QueueKey{Name: "later"}, RawMessageDelivery: true})
	require.NoError(t, err, "SNS subscribes the ARN of a queue that does not exist")
	_, err = news.Publish(ctx, topic.Message{Message: "lost"})
	require.NoError(t, err)
	_, err = c.CreateQueue(ctx, ns, "later", catalog.Definition{}, 0)
	require.NoError(t, err)
	_, err = news.Publish(ctx, topic.Message{Message: "kept"})
	require.NoError(t, err)
	require.Equal(t, []string{"kept"}, ctReceiveBodies(t, c, ns, "later"))
	m := news.Metrics()
	require.EqualValues(t, 1, m.Failed)
	require.EqualValues(t, 1, m.Delivered)
}

func TestCatalogTopicRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := catalog.New()
	ns := catalog.Namespace{}
	_, err := c.CreateTopic(ctx, ns, "a.b", catalog.TopicDefinition{})
	require.ErrorIs(t, err, topic.ErrInvalidName)
	_, err = c.CreateTopic(ctx, ns, "t", catalog.TopicDefinition{Stored: map[string]string{"DisplayName": "x"}, Tags: map[string]string{"k": "v"}})
	require.NoError(t, err)
	_, err = c.CreateTopic(ctx, ns, "t", catalog.TopicDefinition{Stored: map[string]string{"DisplayName": "x"}})
	require.NoError(t, err, "the same attributes, no tags")
	_, err = c.CreateTopic(ctx, ns, "t", catalog.TopicDefinition{Stored: map[string]string{"DisplayName": "y"}})
	require.ErrorIs(t, err, catalog.ErrTopicExists)
	require.Equal(t, "Invalid parameter: Attributes Reason: Topic already exists with different attributes", fifoq.ErrorMessage(err))
	_, err = c.CreateTopic(ctx, ns, "t", catalog.TopicDefinition{Tags: map[string]string{"k": "w"}})
	require.Equal(t, "Invalid parameter: Tags Reason: Topic already exists with different tags", fifoq.ErrorMessage(err))
	_, err = c.CreateTopic(ctx, ns, "t", catalog.TopicDefinition{Tags: map[string]string{"k": "v", "l": "v"}})
	require.Equal(t, "Invalid parameter: Tags Reason: Topic already exists with different tags", fifoq.ErrorMessage(err),
		"a tag the topic does not have")
	err = c.UpdateTopic(ctx, ns, "t", func(d *catalog.TopicDefinition) error { d.Tags["l"] = "v"; return nil })
	require.NoError(t, err)
	_, err = c.CreateTopic(ctx, ns, "t", catalog.TopicDefinition{Tags: map[string]string{"l": "v"}})
	require.NoError(t, err, "each tag given is on the topic, which has more")
	_, err = c.CreateTopic(ctx, ns, "t", catalog.TopicDefinition{Tags: map[string]string{}})
	require.NoError(t, err, "Tags=[] asks nothing")
	_, err = c.Subscribe(ctx, ns, "t", catalog.SubscriptionDefinition{Queue: catalog.QueueKey{Name: "q.fifo"}})
	require.ErrorIs(t, err, topic.ErrInvalidSubscription)
	_, err = c.Subscribe(ctx, ns, "t", catalog.SubscriptionDefinition{Queue: catalog.QueueKey{Name: "q"}, FilterPolicy: "{"})
	require.ErrorIs(t, err, topic.ErrInvalidFilterPolicy)
	_, err = c.Subscribe(ctx, ns, "none", catalog.SubscriptionDefinition{Queue: catalog.QueueKey{Name: "q"}})
	require.ErrorIs(t, err, topic.ErrNotFound)

	tags := map[string]string{}
	for i := range 51 {
		tags[string(rune('a'+i%26))+string(rune('a'+i/26))] = "v"
	}
	err = c.UpdateTopic(ctx, ns, "t", func(d *catalog.TopicDefinition) error { d.Tags = tags; return nil })
	require.ErrorIs(t, err, catalog.ErrTopicTagLimitExceeded)
	err = c.UpdateTopic(ctx, ns, "t", func(d *catalog.TopicDefinition) error { d.SignatureVersion = "3"; return nil })
	require.ErrorIs(t, err, topic.ErrInvalidAttribute)
	d, ok := c.TopicDefinition(ns, "t")
	require.True(t, ok)
	require.Equal(t, map[string]string{"k": "v", "l": "v"}, d.Tags, "a refused update changes nothing")

	require.NoError(t, c.DeleteTopic(ctx, ns, "t"))
	require.NoError(t, c.DeleteTopic(ctx, ns, "t"), "deleting a deleted topic does nothing, as SNS answers")
	require.Empty(t, c.Topics())
}

func TestCatalogTopicsSurviveRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, crash := range []bool{false, true} {
		e := newCsEnv(t)
		other := catalog.Namespace{Account: "123456789012", Region: "eu-west-1"}
		_, err := e.c.CreateQueue(ctx, ctNS, "raw", catalog.Definition{}, 0)
		require.NoError(t, err)
		_, err = e.c.CreateQueue(ctx, other, "dlq.fifo", catalog.Definition{}, 0)
		require.NoError(t, err)
		_, err = e.c.CreateTopic(ctx, ctNS, "kept", catalog.TopicDefinition{
			Attributes: topic.Attributes{SignatureVersion: "2"},
			Stored:     map[string]string{"DisplayName": "Kept"}, Tags: map[string]string{"team": "a"},
		})
		require.NoError(t, err)
		_, err = e.c.CreateTopic(ctx, other, "f.fifo", catalog.TopicDefinition{Attributes: topic.Attributes{ContentBasedDeduplication: true}})
		require.NoError(t, err)
		_, err = e.c.CreateTopic(ctx, ctNS, "gone", catalog.TopicDefinition{})
		require.NoError(t, err)
		sub, err := e.c.Subscribe(ctx, ctNS, "kept", catalog.SubscriptionDefinition{Queue: catalog.QueueKey{Namespace: ctNS, Name: "raw"},
			RawMessageDelivery: true, FilterPolicy: `{"a": ["b"]}`, Owner: ctNS.Account, Stored: map[string]string{"SubscriptionRoleArn": "r"}})
		require.NoError(t, err)
		fsub, err := e.c.Subscribe(ctx, other, "f.fifo", catalog.SubscriptionDefinition{Queue: catalog.QueueKey{Namespace: ctNS, Name: "ff.fifo"},
			DeadLetterQueue: &catalog.QueueKey{Namespace: other, Name: "dlq.fifo"}})
		require.NoError(t, err)
		_, err = e.c.Subscribe(ctx, ctNS, "gone", catalog.SubscriptionDefinition{Queue: catalog.QueueKey{Namespace: ctNS, Name: "raw"}})
		require.NoError(t, err)
		require.NoError(t, e.c.DeleteTopic(ctx, ctNS, "gone"))
		gsub, err := e.c.Subscribe(ctx, ctNS, "kept", catalog.SubscriptionDefinition{Queue: catalog.QueueKey{Namespace: ctNS, Name: "x"}})
		require.NoError(t, err)
		require.NoError(t, e.c.Unsubscribe(ctx, gsub.ARN))
		require.NoError(t, e.c.UpdateSubscription(ctx, sub.ARN, func(d *catalog.SubscriptionDefinition) error {
			d.FilterPolicy = `{"a": ["c"]}`
			return nil
		}))

		e.restart(crash)
		topics := e.c.Topics()
		require.Len(t, topics, 2, "crash %v", crash)
		d, ok := e.c.TopicDefinition(ctNS, "kept")
		require.True(t, ok)
		require.Equal(t, "2", d.SignatureVersion)
		require.Equal(t, map[string]string{"DisplayName": "Kept"}, d.Stored)
		require.Equal(t, map[string]string{"team": "a"}, d.Tags)
		got, ok := e.c.Subscription(sub.ARN)
		require.True(t, ok)
		require.Equal(t, `{"a": ["c"]}`, got.Definition.FilterPolicy)
		require.True(t, got.Definition.RawMessageDelivery)
		require.Equal(t, map[string]string{"SubscriptionRoleArn": "r"}, got.Definition.Stored)
		fgot, ok := e.c.Subscription(fsub.ARN)
		require.True(t, ok)
		require.Equal(t, &catalog.QueueKey{Namespace: other, Name: "dlq.fifo"}, fgot.Definition.DeadLetterQueue)
		ft, _ := e.c.Topic(other, "f.fifo")
		require.True(t, ft.Attributes().ContentBasedDeduplication)
		_, ok = e.c.Subscription(gsub.ARN)
		require.False(t, ok)
		subs, _ := e.c.TopicSubscriptions(ctNS, "kept")
		require.Len(t, subs, 1)

		// The recovered subscription delivers.
		kt, _ := e.c.Topic(ctNS, "kept")
		_, err = kt.Publish(ctx, topic.Message{Message: "after", Attributes: map[string]fifoq.Attribute{"a": {DataType: "String", StringValue: "c"}}})
		require.NoError(t, err)
		require.Equal(t, []string{"after"}, ctReceiveBodies(t, e.c, ctNS, "raw"))
	}
}

// What a catalogue hands out has no method that changes what it records: a queue's settings and move tasks,
// a topic's settings, subscriptions and deletion, a subscription, a move task's end go through the
// catalogue. (The Go compiler refuses a call of a method a type lacks; this test fails when one is added.)
func TestCatalogViewsChangeNothingRecorded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v    any
		none []string
	}{
		{catalog.Queue{}, []string{"SetAttributes", "SetAttributesNoWait", "Attributes", "StartMoveTask", "StartMoveTaskNoWait", "MoveTasks"}},
		{catalog.Topic{}, []string{"SetAttributes", "Subscribe", "Delete", "Subscriptions"}},
		{catalog.Subscription{}, []string{"SetAttributes", "Unsubscribe"}},
		{catalog.Task{}, []string{"Cancel", "Halt", "Fail"}},
	} {
		typ := reflect.TypeOf(tc.v)
		for _, m := range tc.none {
			_, has := typ.MethodByName(m)
			require.False(t, has, "%v has a method %s", typ, m)
		}
		for i := range typ.NumField() {
			f := typ.Field(i)
			require.False(t, f.IsExported() && (f.Type.Kind() == reflect.Pointer || f.Type.Kind() == reflect.Interface),
				"%v hands out %s %v", typ, f.Name, f.Type)
		}
	}

	// Catalog.Unsubscribe ends a subscription, recorded.
	ctx := context.Background()
	c := catalog.New(catalog.WithDefaultNamespace(ctNS))
	_, err := c.CreateQueue(ctx, ctNS, "billing", catalog.Definition{}, 0)
	require.NoError(t, err)
	orders, err := c.CreateTopic(ctx, ctNS, "orders", catalog.TopicDefinition{})
	require.NoError(t, err)
	sub, err := c.Subscribe(ctx, ctNS, "orders", catalog.SubscriptionDefinition{
		Queue: catalog.QueueKey{Namespace: ctNS, Name: "billing"}, RawMessageDelivery: true})
	require.NoError(t, err)
	_, err = orders.Publish(ctx, topic.Message{Message: "kept"})
	require.NoError(t, err)
	require.Equal(t, []string{"kept"}, ctReceiveBodies(t, c, ctNS, "billing"), "the subscription delivers")
	require.NoError(t, c.Unsubscribe(ctx, sub.ARN))
	_, err = orders.Publish(ctx, topic.Message{Message: "gone"})
	require.NoError(t, err)
	require.Empty(t, ctReceiveBodies(t, c, ctNS, "billing"), "unsubscribed")
	_, ok := c.Subscription(sub.ARN)
	require.False(t, ok)
}

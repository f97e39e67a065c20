package catalog_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// The topics of a catalogue: subscriptions by queue name, and what a restart keeps.

// ctReceiveBodies receives up to 10 messages of the queue name of ns and returns their bodies.
func ctReceiveBodies(t *testing.T, c *fifoq.Catalog, ns fifoq.Namespace, name string) []string {
	t.Helper()
	q, ok := c.Queue(ns, name)
	require.True(t, ok, "queue %s", name)
	ms, err := q.Queue.Receive(context.Background(), fifoq.ReceiveOptions{MaxMessages: 10, NoWaitTime: true})
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
	c := fifoq.New(fifoq.WithDefaultNamespace(ctNS))
	_, err := c.CreateQueue(ctx, ctNS, "billing", fifoq.Definition{}, 0)
	require.NoError(t, err)
	topic, err := c.CreateTopic(ctx, ctNS, "orders", fifoq.TopicDefinition{Stored: map[string]string{"DisplayName": "Orders"}})
	require.NoError(t, err)
	require.Equal(t, "arn:aws:sns:"+ctNS.Region+":"+ctNS.Account+":orders", topic.ARN())

	sub, err := c.Subscribe(ctx, ctNS, "orders", fifoq.SubscriptionDefinition{
		Queue: fifoq.QueueKey{Namespace: ctNS, Name: "billing"}, RawMessageDelivery: true,
		FilterPolicy: `{"kind": ["paid"]}`,
	})
	require.NoError(t, err)
	again, err := c.Subscribe(ctx, ctNS, "orders", fifoq.SubscriptionDefinition{
		Queue: fifoq.QueueKey{Namespace: ctNS, Name: "billing"}, RawMessageDelivery: true, FilterPolicy: `{"kind": ["paid"]}`,
	})
	require.NoError(t, err)
	require.Equal(t, sub.ARN, again.ARN, "subscribing again with the same attributes returns the subscription")
	_, err = c.Subscribe(ctx, ctNS, "orders", fifoq.SubscriptionDefinition{Queue: fifoq.QueueKey{Namespace: ctNS, Name: "billing"}})
	require.ErrorIs(t, err, fifoq.ErrInvalidSubscription)

	paid := fifoq.TopicMessage{Message: "paid", Attributes: map[string]fifoq.Attribute{"kind": {DataType: "String", StringValue: "paid"}}}
	_, err = topic.Publish(ctx, paid)
	require.NoError(t, err)
	_, err = topic.Publish(ctx, fifoq.TopicMessage{Message: "draft"})
	require.NoError(t, err)
	require.Equal(t, []string{"paid"}, ctReceiveBodies(t, c, ctNS, "billing"))

	// The queue deleted: the delivery fails; created again: it gets the messages again, as SNS delivers by ARN.
	require.NoError(t, c.DeleteQueue(ctx, ctNS, "billing"))
	_, err = topic.Publish(ctx, paid)
	require.NoError(t, err)
	require.EqualValues(t, 1, topic.Metrics().Failed)
	_, err = c.CreateQueue(ctx, ctNS, "billing", fifoq.Definition{}, 0)
	require.Error(t, err, "the name is usable again 60 seconds later")
	_, err = c.CreateQueue(ctx, ctNS, "billing2", fifoq.Definition{}, 0)
	require.NoError(t, err)

	require.NoError(t, c.Unsubscribe(ctx, sub.ARN))
	_, ok := c.Subscription(sub.ARN)
	require.False(t, ok)
	require.NoError(t, c.Unsubscribe(ctx, sub.ARN), "unsubscribing twice does nothing")
}

func TestCatalogTopicQueueCreatedLater(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := fifoq.New()
	ns := fifoq.Namespace{}
	topic, err := c.CreateTopic(ctx, ns, "news", fifoq.TopicDefinition{})
	require.NoError(t, err)
	_, err = c.Subscribe(ctx, ns, "news", fifoq.SubscriptionDefinition{Queue: fifoq.QueueKey{Name: "later"}, RawMessageDelivery: true})
	require.NoError(t, err, "SNS subscribes the ARN of a queue that does not exist")
	_, err = topic.Publish(ctx, fifoq.TopicMessage{Message: "lost"})
	require.NoError(t, err)
	_, err = c.CreateQueue(ctx, ns, "later", fifoq.Definition{}, 0)
	require.NoError(t, err)
	_, err = topic.Publish(ctx, fifoq.TopicMessage{Message: "kept"})
	require.NoError(t, err)
	require.Equal(t, []string{"kept"}, ctReceiveBodies(t, c, ns, "later"))
	m := topic.Metrics()
	require.EqualValues(t, 1, m.Failed)
	require.EqualValues(t, 1, m.Delivered)
}

func TestCatalogTopicRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := fifoq.New()
	ns := fifoq.Namespace{}
	_, err := c.CreateTopic(ctx, ns, "a.b", fifoq.TopicDefinition{})
	require.ErrorIs(t, err, fifoq.ErrInvalidTopicName)
	_, err = c.CreateTopic(ctx, ns, "t", fifoq.TopicDefinition{Stored: map[string]string{"DisplayName": "x"}, Tags: map[string]string{"k": "v"}})
	require.NoError(t, err)
	_, err = c.CreateTopic(ctx, ns, "t", fifoq.TopicDefinition{Stored: map[string]string{"DisplayName": "x"}})
	require.NoError(t, err, "the same attributes, no tags")
	_, err = c.CreateTopic(ctx, ns, "t", fifoq.TopicDefinition{Stored: map[string]string{"DisplayName": "y"}})
	require.ErrorIs(t, err, fifoq.ErrTopicExists)
	require.Equal(t, "Invalid parameter: Attributes Reason: Topic already exists with different attributes", fifoq.ErrorMessage(err))
	_, err = c.CreateTopic(ctx, ns, "t", fifoq.TopicDefinition{Tags: map[string]string{"k": "w"}})
	require.Equal(t, "Invalid parameter: Tags Reason: Topic already exists with different tags", fifoq.ErrorMessage(err))
	_, err = c.Subscribe(ctx, ns, "t", fifoq.SubscriptionDefinition{Queue: fifoq.QueueKey{Name: "q.fifo"}})
	require.ErrorIs(t, err, fifoq.ErrInvalidSubscription)
	_, err = c.Subscribe(ctx, ns, "t", fifoq.SubscriptionDefinition{Queue: fifoq.QueueKey{Name: "q"}, FilterPolicy: "{"})
	require.ErrorIs(t, err, fifoq.ErrInvalidFilterPolicy)
	_, err = c.Subscribe(ctx, ns, "none", fifoq.SubscriptionDefinition{Queue: fifoq.QueueKey{Name: "q"}})
	require.ErrorIs(t, err, fifoq.ErrTopicNotFound)

	tags := map[string]string{}
	for i := range 51 {
		tags[string(rune('a'+i%26))+string(rune('a'+i/26))] = "v"
	}
	err = c.UpdateTopic(ctx, ns, "t", func(d *fifoq.TopicDefinition) error { d.Tags = tags; return nil })
	require.ErrorIs(t, err, fifoq.ErrTopicTagLimitExceeded)
	err = c.UpdateTopic(ctx, ns, "t", func(d *fifoq.TopicDefinition) error { d.SignatureVersion = "3"; return nil })
	require.ErrorIs(t, err, fifoq.ErrInvalidTopicAttribute)
	d, ok := c.TopicDefinition(ns, "t")
	require.True(t, ok)
	require.Equal(t, map[string]string{"k": "v"}, d.Tags, "a refused update changes nothing")

	require.NoError(t, c.DeleteTopic(ctx, ns, "t"))
	require.NoError(t, c.DeleteTopic(ctx, ns, "t"), "deleting a deleted topic does nothing, as SNS answers")
	require.Empty(t, c.Topics())
}

func TestCatalogTopicsSurviveRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, crash := range []bool{false, true} {
		e := newCsEnv(t)
		other := fifoq.Namespace{Account: "123456789012", Region: "eu-west-1"}
		_, err := e.c.CreateQueue(ctx, ctNS, "raw", fifoq.Definition{}, 0)
		require.NoError(t, err)
		_, err = e.c.CreateQueue(ctx, other, "dlq.fifo", fifoq.Definition{}, 0)
		require.NoError(t, err)
		_, err = e.c.CreateTopic(ctx, ctNS, "kept", fifoq.TopicDefinition{
			TopicAttributes: fifoq.TopicAttributes{SignatureVersion: "2"},
			Stored:          map[string]string{"DisplayName": "Kept"}, Tags: map[string]string{"team": "a"},
		})
		require.NoError(t, err)
		_, err = e.c.CreateTopic(ctx, other, "f.fifo", fifoq.TopicDefinition{TopicAttributes: fifoq.TopicAttributes{ContentBasedDeduplication: true}})
		require.NoError(t, err)
		_, err = e.c.CreateTopic(ctx, ctNS, "gone", fifoq.TopicDefinition{})
		require.NoError(t, err)
		sub, err := e.c.Subscribe(ctx, ctNS, "kept", fifoq.SubscriptionDefinition{Queue: fifoq.QueueKey{Namespace: ctNS, Name: "raw"},
			RawMessageDelivery: true, FilterPolicy: `{"a": ["b"]}`, Owner: ctNS.Account, Stored: map[string]string{"SubscriptionRoleArn": "r"}})
		require.NoError(t, err)
		fsub, err := e.c.Subscribe(ctx, other, "f.fifo", fifoq.SubscriptionDefinition{Queue: fifoq.QueueKey{Namespace: ctNS, Name: "ff.fifo"},
			DeadLetterQueue: &fifoq.QueueKey{Namespace: other, Name: "dlq.fifo"}})
		require.NoError(t, err)
		_, err = e.c.Subscribe(ctx, ctNS, "gone", fifoq.SubscriptionDefinition{Queue: fifoq.QueueKey{Namespace: ctNS, Name: "raw"}})
		require.NoError(t, err)
		require.NoError(t, e.c.DeleteTopic(ctx, ctNS, "gone"))
		gsub, err := e.c.Subscribe(ctx, ctNS, "kept", fifoq.SubscriptionDefinition{Queue: fifoq.QueueKey{Namespace: ctNS, Name: "x"}})
		require.NoError(t, err)
		require.NoError(t, e.c.Unsubscribe(ctx, gsub.ARN))
		require.NoError(t, e.c.UpdateSubscription(ctx, sub.ARN, func(d *fifoq.SubscriptionDefinition) error {
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
		require.Equal(t, &fifoq.QueueKey{Namespace: other, Name: "dlq.fifo"}, fgot.Definition.DeadLetterQueue)
		ft, _ := e.c.Topic(other, "f.fifo")
		require.True(t, ft.Topic.Attributes().ContentBasedDeduplication)
		_, ok = e.c.Subscription(gsub.ARN)
		require.False(t, ok)
		subs, _ := e.c.TopicSubscriptions(ctNS, "kept")
		require.Len(t, subs, 1)

		// The recovered subscription delivers.
		kt, _ := e.c.Topic(ctNS, "kept")
		_, err = kt.Topic.Publish(ctx, fifoq.TopicMessage{Message: "after", Attributes: map[string]fifoq.Attribute{"a": {DataType: "String", StringValue: "c"}}})
		require.NoError(t, err)
		require.Equal(t, []string{"after"}, ctReceiveBodies(t, e.c, ctNS, "raw"))
	}
}

// The live subscription of a catalogue refuses the changes the catalogue would not record: SetAttributes
// panics, naming the catalogue's method, and Unsubscribe returns ErrCatalogSubscription and leaves the
// subscription delivering; Catalog.Unsubscribe ends it.
func TestCatalogSubscriptionRefusesLiveChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := fifoq.New(fifoq.WithDefaultNamespace(ctNS))
	_, err := c.CreateQueue(ctx, ctNS, "billing", fifoq.Definition{}, 0)
	require.NoError(t, err)
	topic, err := c.CreateTopic(ctx, ctNS, "orders", fifoq.TopicDefinition{})
	require.NoError(t, err)
	sub, err := c.Subscribe(ctx, ctNS, "orders", fifoq.SubscriptionDefinition{
		Queue: fifoq.QueueKey{Namespace: ctNS, Name: "billing"}, RawMessageDelivery: true})
	require.NoError(t, err)

	require.PanicsWithValue(t, "fifoq: Subscription.SetAttributes of a Catalog's subscription: use Catalog.UpdateSubscription",
		func() { _ = sub.Subscription.SetAttributes(fifoq.SubscriptionAttributes{}) })
	err = sub.Subscription.Unsubscribe()
	require.ErrorIs(t, err, fifoq.ErrCatalogSubscription)
	require.ErrorContains(t, err, sub.ARN)
	require.Empty(t, fifoq.ErrorCode(err))
	_, ok := c.Subscription(sub.ARN)
	require.True(t, ok, "the catalogue holds the subscription still")
	_, err = topic.Publish(ctx, fifoq.TopicMessage{Message: "kept"})
	require.NoError(t, err)
	require.Equal(t, []string{"kept"}, ctReceiveBodies(t, c, ctNS, "billing"), "the subscription delivers still")

	require.NoError(t, c.Unsubscribe(ctx, sub.ARN))
	_, err = topic.Publish(ctx, fifoq.TopicMessage{Message: "gone"})
	require.NoError(t, err)
	require.Empty(t, ctReceiveBodies(t, c, ctNS, "billing"))
}

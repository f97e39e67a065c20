package fifoqprom_test

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/fifoqprom"
	"github.com/fifoq/fifoq/topic"
)

// The metrics of a topic: one published message, delivered to one queue and filtered out of another, and
// one that a queue refused.
func TestTopicCollectorExposition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	orders, err := topic.New("orders")
	require.NoError(t, err)
	all, err := fifoq.New("all", fifoq.WithMaxMessageSize(1024))
	require.NoError(t, err)
	eu, err := fifoq.New("eu")
	require.NoError(t, err)
	_, err = orders.Subscribe(all, topic.SubscriptionAttributes{RawMessageDelivery: true})
	require.NoError(t, err)
	_, err = orders.Subscribe(eu, topic.SubscriptionAttributes{FilterPolicy: `{"region": ["eu"]}`})
	require.NoError(t, err)
	_, err = orders.Publish(ctx, topic.Message{Message: "small", Attributes: map[string]fifoq.Attribute{"region": {DataType: "String", StringValue: "us"}}})
	require.NoError(t, err)
	_, err = orders.Publish(ctx, topic.Message{Message: strings.Repeat("x", 2000), Attributes: map[string]fifoq.Attribute{"region": {DataType: "String", StringValue: "us"}}})
	require.NoError(t, err)

	c := fifoqprom.NewTopicCollector(func() map[string]*topic.Topic { return map[string]*topic.Topic{"orders": orders} })
	want := `
# HELP fifoq_topic_delivered_total Deliveries to a subscribed queue that the queue accepted (SNS's NumberOfNotificationsDelivered).
# TYPE fifoq_topic_delivered_total counter
fifoq_topic_delivered_total{topic="orders"} 1
# HELP fifoq_topic_failed_total Deliveries a subscribed queue refused, or whose queue does not exist (SNS's NumberOfNotificationsFailed).
# TYPE fifoq_topic_failed_total counter
fifoq_topic_failed_total{topic="orders"} 1
# HELP fifoq_topic_filtered_out_total Deliveries a subscription's filter policy stopped (SNS's NumberOfNotificationsFilteredOut and its special cases).
# TYPE fifoq_topic_filtered_out_total counter
fifoq_topic_filtered_out_total{topic="orders"} 2
# HELP fifoq_topic_published_total Messages published to the topic, duplicates of a FIFO topic included (SNS's NumberOfMessagesPublished).
# TYPE fifoq_topic_published_total counter
fifoq_topic_published_total{topic="orders"} 2
# HELP fifoq_topic_subscriptions Subscriptions of the topic (SNS's SubscriptionsConfirmed).
# TYPE fifoq_topic_subscriptions gauge
fifoq_topic_subscriptions{topic="orders"} 2
`
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want)))
	problems, err := testutil.CollectAndLint(c)
	require.NoError(t, err)
	require.Empty(t, problems)
}

package fifoqprom

import (
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
)

// A TopicCollector is a prometheus.Collector of the metrics of fifoq topics ([topic.Topic.Metrics]), labelled
// topic:
//
//	fifoq_topic_subscriptions          gauge    the topic's subscriptions (SubscriptionsConfirmed)
//	fifoq_topic_published_total        counter  messages published (NumberOfMessagesPublished)
//	fifoq_topic_delivered_total        counter  deliveries a queue accepted (NumberOfNotificationsDelivered)
//	fifoq_topic_filtered_out_total     counter  deliveries a filter policy stopped (NumberOfNotificationsFilteredOut, its three special cases included)
//	fifoq_topic_failed_total           counter  deliveries a queue refused (NumberOfNotificationsFailed)
//
// It is safe for concurrent use. Create one with [NewTopicCollector].
type TopicCollector struct {
	topics func() map[string]Topic
}

// NewTopicCollector returns a collector of the topics that topics returns at each scrape, each under its
// key in the map (for a catalogue of several accounts and regions, a name unique among them:
// catalog.Catalog.DisplayName). topics is called without any lock of the collector; nil topics are skipped.
func NewTopicCollector[T interface {
	Topic
	comparable
}](topics func() map[string]T) *TopicCollector {
	return &TopicCollector{topics: func() map[string]Topic {
		ts := topics()
		out := make(map[string]Topic, len(ts))
		for name, t := range ts {
			if some(t) {
				out[name] = t
			}
		}
		return out
	}}
}

const labelTopic = "topic"

var (
	descTopicSubscriptions = prometheus.NewDesc("fifoq_topic_subscriptions",
		"Subscriptions of the topic (SNS's SubscriptionsConfirmed).", []string{labelTopic}, nil)
	descTopicPublished = prometheus.NewDesc("fifoq_topic_published_total",
		"Messages published to the topic, duplicates of a FIFO topic included (SNS's NumberOfMessagesPublished).", []string{labelTopic}, nil)
	descTopicDelivered = prometheus.NewDesc("fifoq_topic_delivered_total",
		"Deliveries to a subscribed queue that the queue accepted (SNS's NumberOfNotificationsDelivered).", []string{labelTopic}, nil)
	descTopicFilteredOut = prometheus.NewDesc("fifoq_topic_filtered_out_total",
		"Deliveries a subscription's filter policy stopped (SNS's NumberOfNotificationsFilteredOut and its special cases).", []string{labelTopic}, nil)
	descTopicFailed = prometheus.NewDesc("fifoq_topic_failed_total",
		"Deliveries a subscribed queue refused, or whose queue does not exist (SNS's NumberOfNotificationsFailed).", []string{labelTopic}, nil)
)

// Describe sends the descriptions of the topic metrics.
func (c *TopicCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descTopicSubscriptions, descTopicPublished, descTopicDelivered, descTopicFilteredOut, descTopicFailed} {
		ch <- d
	}
}

// Collect sends the metrics of every topic, each read with one Metrics call.
func (c *TopicCollector) Collect(ch chan<- prometheus.Metric) {
	topics := c.topics()
	for _, name := range slices.Sorted(maps.Keys(topics)) {
		t := topics[name]
		if t == nil {
			continue
		}
		if !utf8.ValidString(name) {
			ch <- prometheus.NewInvalidMetric(descTopicPublished, fmt.Errorf("fifoqprom: topic name %q is not UTF-8", name))
			continue
		}
		m := t.Metrics()
		filtered := m.FilteredOut + m.FilteredOutNoMessageAttributes + m.FilteredOutInvalidAttributes + m.FilteredOutInvalidMessageBody
		ch <- prometheus.MustNewConstMetric(descTopicSubscriptions, prometheus.GaugeValue, float64(m.Subscriptions), name)
		ch <- prometheus.MustNewConstMetric(descTopicPublished, prometheus.CounterValue, float64(m.Published), name)
		ch <- prometheus.MustNewConstMetric(descTopicDelivered, prometheus.CounterValue, float64(m.Delivered), name)
		ch <- prometheus.MustNewConstMetric(descTopicFilteredOut, prometheus.CounterValue, float64(filtered), name)
		ch <- prometheus.MustNewConstMetric(descTopicFailed, prometheus.CounterValue, float64(m.Failed), name)
	}
}

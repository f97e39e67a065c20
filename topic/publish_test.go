package topic_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/topic"
)

// TestTopicGroupIDByQueueType checks which queues receive a message's group id, as SNS passes it on: a FIFO
// topic to its FIFO queues only (a standard queue subscribed to it gets none), a standard topic to its
// (standard) queues, SQS fair queues. Dead-letter queues follow the same rule.
func TestTopicGroupIDByQueueType(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ft, st := tpTopic(t, "g.fifo", topic.WithContentBasedDeduplication()), tpTopic(t, "g")
	fq, sq := tpQueue(t, "gq.fifo", fifoq.WithContentBasedDeduplication()), tpQueue(t, "gq")
	tpSubscribe(t, ft, fq, topic.SubscriptionAttributes{RawMessageDelivery: true})
	tpSubscribe(t, ft, sq, topic.SubscriptionAttributes{RawMessageDelivery: true})
	fair := tpQueue(t, "fair")
	tpSubscribe(t, st, fair, topic.SubscriptionAttributes{RawMessageDelivery: true})

	_, err := ft.Publish(ctx, topic.Message{Message: "from fifo", GroupID: "g1"})
	require.NoError(t, err)
	_, err = st.Publish(ctx, topic.Message{Message: "from standard", GroupID: "g2"})
	require.NoError(t, err)

	got := tpReceive(t, fq)
	require.Len(t, got, 1)
	require.Equal(t, "g1", got[0].GroupID, "a FIFO queue of a FIFO topic")
	require.NotEmpty(t, got[0].DeduplicationID)
	got = tpReceive(t, sq)
	require.Len(t, got, 1)
	require.Empty(t, got[0].GroupID, "a standard queue of a FIFO topic")
	require.Empty(t, got[0].DeduplicationID)
	got = tpReceive(t, fair)
	require.Len(t, got, 1)
	require.Equal(t, "g2", got[0].GroupID, "a standard queue of a standard topic (a fair queue)")

	// Dead-letter queues: a standard queue's refusal goes to its dead-letter queue with the same rule.
	small := tpQueue(t, "small", fifoq.WithMaxMessageSize(1024))
	dlqStd, dlqFIFO := tpQueue(t, "dlq"), tpQueue(t, "dlq.fifo", fifoq.WithContentBasedDeduplication())
	tpSubscribe(t, ft, small, topic.SubscriptionAttributes{RawMessageDelivery: true, DeadLetterQueue: dlqFIFO})
	tpSubscribe(t, st, tpQueue(t, "small2", fifoq.WithMaxMessageSize(1024)), topic.SubscriptionAttributes{RawMessageDelivery: true, DeadLetterQueue: dlqStd})
	big := strings.Repeat("x", 2000)
	_, err = ft.Publish(ctx, topic.Message{Message: big, GroupID: "g3"})
	require.NoError(t, err)
	_, err = st.Publish(ctx, topic.Message{Message: big, GroupID: "g4"})
	require.NoError(t, err)
	got = tpReceive(t, dlqFIFO)
	require.Len(t, got, 1)
	require.Equal(t, "g3", got[0].GroupID, "a FIFO dead-letter queue of a FIFO topic's subscription")
	got = tpReceive(t, dlqStd)
	require.Len(t, got, 1)
	require.Equal(t, "g4", got[0].GroupID, "a standard dead-letter queue of a standard topic's subscription")
}

// TestTopicTraceHeader checks that a publish's trace header reaches every queue as its AWSTraceHeader, with
// raw delivery and without, from Publish and from PublishBatch, and that one over 1024 bytes is refused.
func TestTopicTraceHeader(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const header = "Root=1-3152b799-8954dae64eda91bc9a23a7e8;Parent=7fa8c0f79203be72;Sampled=1"
	tp := tpTopic(t, "traced")
	raw, env := tpQueue(t, "raw"), tpQueue(t, "env")
	tpSubscribe(t, tp, raw, topic.SubscriptionAttributes{RawMessageDelivery: true})
	tpSubscribe(t, tp, env, topic.SubscriptionAttributes{})
	_, err := tp.Publish(ctx, topic.Message{Message: "one", TraceHeader: header})
	require.NoError(t, err)
	_, err = tp.PublishBatch(ctx, []topic.Message{{Message: "two", TraceHeader: header}, {Message: "three"}})
	require.NoError(t, err)
	for _, q := range []*fifoq.Queue{raw, env} {
		got := tpReceive(t, q)
		require.Len(t, got, 3)
		require.Equal(t, header, got[0].TraceHeader, "queue %s", q.Name())
		require.Equal(t, header, got[1].TraceHeader, "queue %s", q.Name())
		require.Empty(t, got[2].TraceHeader, "queue %s", q.Name())
	}
	_, err = tp.Publish(ctx, topic.Message{Message: "m", TraceHeader: strings.Repeat("x", 1025)})
	require.ErrorIs(t, err, topic.ErrInvalidMessage)
	require.Equal(t, "Invalid parameter: X-Amzn-Trace-Id", fifoq.ErrorMessage(err))
}

// TestTopicStructureBeforeIDs checks SNS's order: a message structure is checked before a FIFO topic's group
// and deduplication ids, in Publish and in PublishBatch (recorded from AWS: a batch entry without a group id
// and without a default entry gets "No default entry").
func TestTopicStructureBeforeIDs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ft := tpTopic(t, "s.fifo")
	noDefault := topic.Message{Message: `{"sqs": "test sqs"}`, MessageStructure: "json"}
	const want = "Invalid parameter: Message Structure - No default entry in JSON message body"
	_, err := ft.Publish(ctx, noDefault)
	require.ErrorIs(t, err, topic.ErrInvalidMessage)
	require.Equal(t, want, fifoq.ErrorMessage(err))
	_, err = ft.PublishBatch(ctx, []topic.Message{noDefault})
	require.ErrorIs(t, err, topic.ErrInvalidMessage)
	require.Equal(t, want, fifoq.ErrorMessage(err))
	_, err = ft.Publish(ctx, topic.Message{Message: `{"default": "d"}`, MessageStructure: "json"})
	require.ErrorIs(t, err, topic.ErrMissingGroupID, "a good structure, then the ids")
}

package topic_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/topic"
)

// Tests of FIFO topics (the 5-minute deduplication window, in a synctest bubble; order under concurrent
// publishers), of signed envelopes, and a concurrent stress test for the race detector.

// TestTopicFIFODeduplicationWindow: a deduplication id, explicit or from the content, drops a second message
// for 5 minutes, scope topic, and not after.
func TestTopicFIFODeduplicationWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		tp, err := topic.New("d.fifo", topic.WithContentBasedDeduplication())
		require.NoError(t, err)
		q, err := fifoq.New("d.fifo", fifoq.WithVisibilityTimeout(0))
		require.NoError(t, err)
		_, err = tp.Subscribe(q, topic.SubscriptionAttributes{RawMessageDelivery: true})
		require.NoError(t, err)
		publish := func(m topic.Message) topic.PublishResult {
			t.Helper()
			res, err := tp.Publish(ctx, m)
			require.NoError(t, err)
			return res
		}
		first := publish(topic.Message{Message: "a", GroupID: "g1", DeduplicationID: "id-1"})
		time.Sleep(4*time.Minute + 59*time.Second)
		dup := publish(topic.Message{Message: "other content", GroupID: "g2", DeduplicationID: "id-1"})
		require.True(t, dup.Duplicate, "same id, another group, 4m59s later: a duplicate (scope topic)")
		require.Equal(t, first.MessageID, dup.MessageID)
		require.Equal(t, first.SequenceNumber, dup.SequenceNumber)
		// Content-based: the SHA-256 of the message, whatever the group and attributes.
		c1 := publish(topic.Message{Message: "same", GroupID: "g1"})
		c2 := publish(topic.Message{Message: "same", GroupID: "g3", Attributes: map[string]fifoq.Attribute{"k": fpStr("v")}})
		require.False(t, c1.Duplicate)
		require.True(t, c2.Duplicate)
		time.Sleep(time.Second) // id-1 is 5 minutes old now
		again := publish(topic.Message{Message: "a", GroupID: "g1", DeduplicationID: "id-1"})
		require.False(t, again.Duplicate, "5 minutes after: accepted again")
		require.Greater(t, again.SequenceNumber, c1.SequenceNumber)
		require.Equal(t, []string{"a", "same", "a"}, tpBodies(t, q))
		m := tp.Metrics()
		require.Equal(t, uint64(5), m.Published)
		require.Equal(t, uint64(2), m.Duplicates)
		require.Equal(t, uint64(3), m.Delivered)
	})
}

// TestTopicFIFOOrder: with publishers racing, every FIFO queue receives each group's messages in the order
// of their sequence numbers, the same order in every queue, and once each.
func TestTopicFIFOOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		tp, err := topic.New("o.fifo")
		require.NoError(t, err)
		var queues []*fifoq.Queue
		for i := range 3 {
			q, err := fifoq.New(fmt.Sprintf("o%d.fifo", i), fifoq.WithVisibilityTimeout(0))
			require.NoError(t, err)
			_, err = tp.Subscribe(q, topic.SubscriptionAttributes{RawMessageDelivery: i == 0})
			require.NoError(t, err)
			queues = append(queues, q)
		}
		const publishers, each = 4, 25
		var wg sync.WaitGroup
		errs := make(chan error, publishers)
		for p := range publishers {
			wg.Go(func() {
				for i := range each {
					g := strconv.Itoa(i % 3)
					_, err := tp.Publish(ctx, topic.Message{Message: fmt.Sprintf("%d-%d", p, i), GroupID: g, DeduplicationID: fmt.Sprintf("%d-%d", p, i)})
					if err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		var want []string // from the envelopes of queue 1: message and sequence number, per group
		for qi, q := range queues {
			perGroup := map[string][]string{}
			lastSeq := map[string]string{}
			n := 0
			for s := range q.Messages() {
				n++
				msg := s.Body
				if qi > 0 {
					e, err := topic.ParseEnvelope(s.Body)
					require.NoError(t, err)
					msg = e.Message
					require.Greater(t, e.SequenceNumber, lastSeq[s.GroupID], "queue %s group %s: sequence numbers out of order", q.Name(), s.GroupID)
					lastSeq[s.GroupID] = e.SequenceNumber
				}
				perGroup[s.GroupID] = append(perGroup[s.GroupID], msg)
			}
			require.Equal(t, publishers*each, n, "queue %s", q.Name())
			var got []string
			for g := range 3 {
				got = append(got, perGroup[strconv.Itoa(g)]...)
			}
			if want == nil {
				want = got
			}
			require.Equal(t, want, got, "queue %s has another order than queue 0", q.Name())
		}
	})
}

// TestTopicSignedEnvelopes: with a signer, a standard topic's envelopes verify against the signer's public
// key, with SHA-1 (version 1) or SHA-256 (version 2), and fail once changed.
func TestTopicSignedEnvelopes(t *testing.T) {
	t.Parallel()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	signer := topic.RSASigner{Key: key, CertURL: "https://sns.example/SimpleNotificationService-1.pem"}
	for _, version := range []string{"1", "2"} {
		tp := tpTopic(t, "signed", topic.WithSigner(signer), topic.WithSignatureVersion(version))
		q := tpQueue(t, "signedq")
		tpSubscribe(t, tp, q, topic.SubscriptionAttributes{})
		_, err := tp.Publish(context.Background(), topic.Message{Message: "hello", Subject: "s"})
		require.NoError(t, err)
		e, err := topic.ParseEnvelope(tpBodies(t, q)[0])
		require.NoError(t, err)
		require.Equal(t, version, e.SignatureVersion)
		require.Equal(t, signer.CertURL, e.SigningCertURL)
		require.NoError(t, e.Verify(&key.PublicKey), "version %s", version)
		e.Message = "hellO"
		require.Error(t, e.Verify(&key.PublicKey), "version %s: a changed message still verifies", version)
		e.Message = "hello"
		e.SignatureVersion = map[string]string{"1": "2", "2": "1"}[version]
		require.Error(t, e.Verify(&key.PublicKey), "version %s: verifies as the other version", version)
	}
}

// TestTopicConcurrentStress publishes from many goroutines to a standard and a FIFO topic while
// subscriptions come and go and settings change, for the race detector; every publish is counted once, and
// every delivery is accounted for.
func TestTopicConcurrentStress(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const workers, each = 8, 60
	for _, name := range []string{"stress", "stress.fifo"} {
		tp, err := topic.New(name, topic.WithContentBasedDeduplication())
		if name == "stress" {
			tp, err = topic.New(name)
		}
		require.NoError(t, err)
		fifo := tp.FIFO()
		qname := func(s string) string {
			if fifo {
				return s + ".fifo"
			}
			return s
		}
		stable, err := fifoq.New(qname("stable"), fifoq.WithVisibilityTimeout(0))
		require.NoError(t, err)
		_, err = tp.Subscribe(stable, topic.SubscriptionAttributes{RawMessageDelivery: true})
		require.NoError(t, err)
		var wg sync.WaitGroup
		errs := make(chan error, workers+1)
		done := make(chan struct{})
		wg.Go(func() { // subscriptions come and go
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				q, err := fifoq.New(qname(fmt.Sprint("churn", i)))
				if err != nil {
					errs <- err
					return
				}
				s, err := tp.Subscribe(q, topic.SubscriptionAttributes{FilterPolicy: `{"w": [{"numeric": ["<", 4]}]}`})
				if err != nil {
					errs <- err
					return
				}
				if err := s.SetAttributes(topic.SubscriptionAttributes{RawMessageDelivery: true}); err != nil {
					errs <- err
					return
				}
				_ = tp.Metrics()
				s.Unsubscribe()
			}
		})
		for w := range workers {
			wg.Go(func() {
				for i := range each {
					m := topic.Message{Message: fmt.Sprintf("%d/%d", w, i), Attributes: map[string]fifoq.Attribute{"w": fpNum(strconv.Itoa(w))}}
					if fifo {
						m.GroupID = strconv.Itoa(w)
					}
					var err error
					if i%10 == 0 {
						_, err = tp.PublishBatch(ctx, []topic.Message{m})
					} else {
						_, err = tp.Publish(ctx, m)
					}
					if err != nil {
						errs <- err
						return
					}
				}
			})
		}
		for range workers * each / 10 {
			_ = tp.Subscriptions()
		}
		close(done)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		m := tp.Metrics()
		require.Equal(t, uint64(workers*each), m.Published, "%s", name)
		require.Equal(t, workers*each, stable.Stats().Visible, "%s", name)
		require.Equal(t, m.Delivered+m.FilteredOut, m.Delivered+m.FilteredOut+m.Failed+m.FilteredOutNoMessageAttributes, "%s: failures", name)
		require.GreaterOrEqual(t, m.Delivered, uint64(workers*each), "%s", name)
	}
}

// tpCountingSigner counts the signatures of the signer it wraps.
type tpCountingSigner struct {
	topic.Signer
	n *atomic.Int64
}

func (s tpCountingSigner) Sign(stringToSign []byte, version string) (string, error) {
	s.n.Add(1)
	return s.Signer.Sign(stringToSign, version)
}

// TestTopicSignsOncePerPublication: a publication is signed once, whatever the number of subscriptions
// its envelope goes to (the signature does not cover the UnsubscribeURL, which alone differs), and each
// envelope verifies and names its own subscription.
func TestTopicSignsOncePerPublication(t *testing.T) {
	t.Parallel()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	var n atomic.Int64
	signer := tpCountingSigner{topic.RSASigner{Key: key, CertURL: "https://sns.example/SimpleNotificationService-1.pem"}, &n}
	tp := tpTopic(t, "fanout", topic.WithSigner(signer))
	const subs = 5
	queues := make([]*fifoq.Queue, subs)
	arns := make([]string, subs)
	for i := range queues {
		queues[i] = tpQueue(t, "q"+strconv.Itoa(i))
		arns[i] = tpSubscribe(t, tp, queues[i], topic.SubscriptionAttributes{}).ARN()
	}
	msg := topic.Message{Message: "hello", Attributes: map[string]fifoq.Attribute{"k": {DataType: "String", StringValue: "v"}}}
	_, err = tp.Publish(context.Background(), msg)
	require.NoError(t, err)
	require.EqualValues(t, 1, n.Load(), "signatures for one publication to %d subscriptions", subs)
	_, err = tp.PublishBatch(context.Background(), []topic.Message{msg, msg, msg})
	require.NoError(t, err)
	require.EqualValues(t, 4, n.Load(), "signatures after a batch of 3 more")
	for i, q := range queues {
		bodies := tpBodies(t, q)
		require.Len(t, bodies, 4)
		e, err := topic.ParseEnvelope(bodies[0])
		require.NoError(t, err)
		require.NoError(t, e.Verify(&key.PublicKey), "queue %d", i)
		require.True(t, strings.HasSuffix(e.UnsubscribeURL, "SubscriptionArn="+arns[i]), "queue %d: %s", i, e.UnsubscribeURL)
		require.Equal(t, map[string]topic.EnvelopeAttribute{"k": {Type: "String", Value: "v"}}, e.MessageAttributes)
	}
}

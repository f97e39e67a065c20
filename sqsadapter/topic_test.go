package sqsadapter_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/snsapi"
	"github.com/fifoq/fifoq/sqsadapter"
	"github.com/fifoq/fifoq/sqsapi"
	"github.com/fifoq/fifoq/topic"
)

// snsServer serves fifoq's SQS and SNS APIs on a loopback port, passing each request through wrap first,
// and returns the server, an SNS client of it, and the endpoint.
func snsServer(t *testing.T, wrap func(http.Handler) http.Handler) (*sqsapi.Server, *sns.Client) {
	t.Helper()
	srv := sqsapi.NewServer()
	var h http.Handler = snsapi.Route(snsapi.NewServer(srv.Catalog()), srv)
	if wrap != nil {
		h = wrap(h)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(func() {
		hs.Close()
		srv.Close()
	})
	client := sns.New(sns.Options{Region: "us-east-1", BaseEndpoint: aws.String(hs.URL), Retryer: aws.NopRetryer{},
		Credentials: aws.AnonymousCredentials{}})
	return srv, client
}

// action returns the Action of a query-protocol request, leaving its body to be read again.
func action(r *http.Request) string {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return ""
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	form, _ := url.ParseQuery(string(body))
	return form.Get("Action")
}

// subscribed makes topic name and queue name in srv's catalogue, the queue subscribed with raw delivery.
func subscribed(t *testing.T, srv *sqsapi.Server, name, queue string, td catalog.TopicDefinition) catalog.Queue {
	t.Helper()
	cat := srv.Catalog()
	ns := cat.DefaultNamespace()
	q, err := cat.CreateQueue(t.Context(), ns, queue, catalog.Definition{}, 0)
	require.NoError(t, err)
	_, err = cat.CreateTopic(t.Context(), ns, name, td)
	require.NoError(t, err)
	_, err = cat.Subscribe(t.Context(), ns, name, catalog.SubscriptionDefinition{Queue: catalog.QueueKey{Namespace: ns, Name: queue},
		RawMessageDelivery: true})
	require.NoError(t, err)
	return q
}

// PublishBatch sends one call per run of messages with one trace header, since SNS takes one header for a
// whole call; every message reaches the queue with its own.
func TestPublishBatchTraceHeaders(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv, client := snsServer(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if action(r) == "PublishBatch" {
				calls.Add(1)
			}
			next.ServeHTTP(w, r)
		})
	})
	q := subscribed(t, srv, "traced", "inbox", catalog.TopicDefinition{})
	tp, err := sqsadapter.OpenTopic(t.Context(), client, "traced")
	require.NoError(t, err)
	require.Equal(t, "traced", tp.Name())
	require.False(t, tp.FIFO())

	const a, b = "Root=1-00000000-00000000000000000000000a", "Root=1-00000000-00000000000000000000000b"
	rs, err := tp.PublishBatch(t.Context(), []topic.Message{
		{Message: "1", TraceHeader: a}, {Message: "2", TraceHeader: a}, {Message: "3", TraceHeader: b}, {Message: "4"},
	})
	require.NoError(t, err)
	require.Len(t, rs, 4)
	require.EqualValues(t, 3, calls.Load(), "runs a, b and none")
	traces := map[string]string{}
	for s := range q.Messages() {
		traces[s.Body] = s.TraceHeader
	}
	require.Equal(t, map[string]string{"1": a, "2": a, "3": b, "4": ""}, traces)
}

// When a later call of a batch fails as a whole, the entries it carried and those after it fail with its
// error, and the entries published before keep their results.
func TestPublishBatchLaterCallFails(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv, client := snsServer(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if action(r) == "PublishBatch" && calls.Add(1) > 1 {
				w.Header().Set("Content-Type", "text/xml")
				w.WriteHeader(http.StatusForbidden)
				_, _ = w.Write([]byte(`<ErrorResponse><Error><Type>Sender</Type><Code>AuthorizationError</Code>` +
					`<Message>not allowed</Message></Error><RequestId>r</RequestId></ErrorResponse>`))
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	q := subscribed(t, srv, "half", "inbox", catalog.TopicDefinition{})
	tp := sqsadapter.NewTopic(client, srv.Catalog().DefaultNamespace().TopicARN("half"))
	rs, err := tp.PublishBatch(t.Context(), []topic.Message{{Message: "1"}, {Message: "2", TraceHeader: "Root=x"}, {Message: "3"}})
	var be *fifoq.BatchError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Entries, 2)
	for i, e := range be.Entries {
		require.Equal(t, i+1, e.Index)
		var apiErr smithy.APIError
		require.ErrorAs(t, e.Err, &apiErr)
		require.Equal(t, "AuthorizationError", apiErr.ErrorCode())
	}
	require.NotEmpty(t, rs[0].MessageID)
	require.Empty(t, rs[1].MessageID)
	require.Equal(t, fifoq.Stats{Visible: 1}, q.Stats())

	_, err = tp.PublishBatch(t.Context(), []topic.Message{{Message: "1"}})
	require.Error(t, err, "a first call that fails fails the batch")
	require.False(t, errors.As(err, &be))
}

// SNS's errors match topic's sentinels, as the errors of a *topic.Topic do; what fifoq's rules refuse is
// refused before any request.
func TestTopicErrors(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	srv, client := snsServer(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			requests.Add(1)
			next.ServeHTTP(w, r)
		})
	})
	ns := srv.Catalog().DefaultNamespace()

	_, err := sqsadapter.OpenTopic(t.Context(), client, "missing")
	require.ErrorIs(t, err, topic.ErrNotFound)
	_, err = sqsadapter.NewTopic(client, ns.TopicARN("missing")).Publish(t.Context(), topic.Message{Message: "m"})
	require.ErrorIs(t, err, topic.ErrNotFound)
	var apiErr smithy.APIError
	require.ErrorAs(t, err, &apiErr, "the SDK's error stays in the chain")

	subscribed(t, srv, "prices.fifo", "prices.fifo", catalog.TopicDefinition{})
	tp, err := sqsadapter.OpenTopic(t.Context(), client, ns.TopicARN("prices.fifo"))
	require.NoError(t, err)
	require.True(t, tp.FIFO())
	_, err = tp.Publish(t.Context(), topic.Message{Message: "m", GroupID: "g"})
	require.ErrorIs(t, err, topic.ErrMissingDeduplicationID, "the topic's own setting, which only SNS knows")
	_, err = tp.PublishBatch(t.Context(), []topic.Message{{Message: "m", GroupID: "g"}})
	require.ErrorIs(t, err, topic.ErrMissingDeduplicationID)

	before := requests.Load()
	_, err = tp.Publish(t.Context(), topic.Message{Message: "m"})
	require.ErrorIs(t, err, topic.ErrMissingGroupID)
	_, err = tp.PublishBatch(t.Context(), nil)
	require.ErrorIs(t, err, topic.ErrEmptyBatch)
	_, err = tp.Publish(t.Context(), topic.Message{Message: "m", GroupID: "g", Subject: "\n"})
	require.ErrorIs(t, err, topic.ErrInvalidSubject)
	require.Equal(t, before, requests.Load(), "refused by fifoq's rules before the network")

	r, err := tp.Publish(t.Context(), topic.Message{Message: "m", GroupID: "g", DeduplicationID: "d", Subject: "s",
		Attributes: map[string]fifoq.Attribute{"bin": {DataType: "Binary", BinaryValue: []byte{1, 2}}}})
	require.NoError(t, err)
	require.Len(t, r.SequenceNumber, 20)
}

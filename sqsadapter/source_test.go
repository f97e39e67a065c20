package sqsadapter_test

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/sqsadapter"
	"github.com/fifoq/fifoq/sqsapi"
)

// recorder is an http.RoundTripper that counts the requests it passes on and keeps their bodies.
type recorder struct {
	next http.RoundTripper

	mu     sync.Mutex // guards the fields below
	bodies []string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(strings.NewReader(string(body)))
	}
	r.mu.Lock()
	r.bodies = append(r.bodies, string(body))
	r.mu.Unlock()
	return r.next.RoundTrip(req)
}

// requests returns the bodies of the requests so far.
func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.bodies...)
}

// env is an SQS endpoint in process: a sqsapi server, an SDK client that reaches it with no socket, and a
// recorder of the client's requests.
type env struct {
	srv    *sqsapi.Server
	client *sqs.Client
	rec    *recorder
}

// setup starts a server with opts and a client of it; the client signs with fixed test credentials and
// does not retry, so each call is one request.
func setup(t *testing.T, opts ...sqsapi.Option) *env {
	t.Helper()
	srv := sqsapi.NewServer(opts...)
	rec := &recorder{next: srv.HTTPClient().Transport}
	client := sqs.New(sqs.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String("http://fifoq.test"),
		HTTPClient:   &http.Client{Transport: rec},
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "secret", Source: "test"}, nil
		}),
		Retryer: aws.NopRetryer{},
	})
	return &env{srv: srv, client: client, rec: rec}
}

// queue creates a queue with SQS attributes and returns a Source over it, and the queue itself.
func (e *env) queue(t *testing.T, name string, attrs map[string]string, opts ...sqsadapter.Option) (*sqsadapter.Source, catalog.Queue) {
	t.Helper()
	_, err := e.srv.DeclareQueue(name, attrs)
	require.NoError(t, err, "DeclareQueue(%s, %v)", name, attrs)
	q, ok := e.srv.Queue(name)
	require.True(t, ok, "queue %s after DeclareQueue", name)
	out, err := e.client.GetQueueUrl(t.Context(), &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	require.NoError(t, err)
	return sqsadapter.New(e.client, aws.ToString(out.QueueUrl), opts...), q
}

// send sends bodies to a queue through the SDK, in group (FIFO, with the body as deduplication id) or not.
func (e *env) send(t *testing.T, src string, group string, bodies ...string) []string {
	t.Helper()
	ids := make([]string, len(bodies))
	for i, b := range bodies {
		in := &sqs.SendMessageInput{QueueUrl: aws.String(src), MessageBody: aws.String(b)}
		if group != "" {
			in.MessageGroupId = aws.String(group)
			if strings.HasSuffix(src, ".fifo") {
				in.MessageDeduplicationId = aws.String(b)
			}
		}
		out, err := e.client.SendMessage(t.Context(), in)
		require.NoError(t, err, "SendMessage(%q)", b)
		ids[i] = aws.ToString(out.MessageId)
	}
	return ids
}

func (e *env) url(t *testing.T, name string) string {
	t.Helper()
	out, err := e.client.GetQueueUrl(t.Context(), &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	require.NoError(t, err)
	return aws.ToString(out.QueueUrl)
}

func bodies(ds []fifoq.Delivery) []string {
	bs := make([]string, len(ds))
	for i, d := range ds {
		bs[i] = d.Body
	}
	return bs
}

func handles(ds []fifoq.Delivery) []string {
	hs := make([]string, len(ds))
	for i, d := range ds {
		hs[i] = d.ReceiptHandle
	}
	return hs
}

// short is a short poll that takes the visibility timeout given.
func short(n int, vt time.Duration) fifoq.ReceiveOptions {
	return fifoq.ReceiveOptions{MaxMessages: n, NoWaitTime: true, VisibilityTimeout: vt}
}

// shortVisible is a short poll that leaves the messages visible (a visibility timeout of 0).
func shortVisible(n int) fifoq.ReceiveOptions {
	return fifoq.ReceiveOptions{MaxMessages: n, NoWaitTime: true, NoVisibilityTimeout: true}
}

func TestFIFOFromURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url  string
		fifo bool
	}{
		{"https://sqs.us-east-1.amazonaws.com/123456789012/orders.fifo", true},
		{"https://sqs.us-east-1.amazonaws.com/123456789012/orders.fifo/", true},
		{"http://localhost:9324/000000000000/orders", false},
		{"http://localhost:9324/000000000000/fifo", false},
		{"http://localhost:9324/000000000000/orders-fifo", false},
	} {
		require.Equal(t, tc.fifo, sqsadapter.New(nil, tc.url).FIFO(), "New(%q).FIFO()", tc.url)
	}
}

func TestClock(t *testing.T) {
	t.Parallel()
	clk := fifoq.NewManualClock(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	src := sqsadapter.New(nil, "http://fifoq.test/000000000000/q", sqsadapter.WithClock(clk))
	require.Same(t, clk, src.Clock())

	real := sqsadapter.New(nil, "http://fifoq.test/000000000000/q").Clock()
	before := time.Now()
	require.False(t, real.Now().Before(before), "the default clock reads the time package's")
	fired := make(chan struct{})
	real.AfterFunc(0, func() { close(fired) })
	<-fired
}

// TestReceiveFIFO checks that every field of a Delivery comes from the message SQS returns, on a
// receive and on the receive after it.
func TestReceiveFIFO(t *testing.T) {
	t.Parallel()
	start := time.Date(2025, 6, 1, 12, 0, 0, 123_456_789, time.UTC)
	clk := fifoq.NewManualClock(start)
	e := setup(t, sqsapi.WithClock(clk))
	src, q := e.queue(t, "orders.fifo", map[string]string{"FifoQueue": "true", "VisibilityTimeout": "30"})
	require.True(t, src.FIFO())

	out, err := e.client.SendMessage(t.Context(), &sqs.SendMessageInput{
		QueueUrl:               aws.String(e.url(t, "orders.fifo")),
		MessageBody:            aws.String("order 1"),
		MessageGroupId:         aws.String("customer-7"),
		MessageDeduplicationId: aws.String("dedup-1"),
		MessageAttributes: map[string]types.MessageAttributeValue{
			"Kind":   {DataType: aws.String("String"), StringValue: aws.String("new")},
			"Amount": {DataType: aws.String("Number.cents"), StringValue: aws.String("1250")},
			"Blob":   {DataType: aws.String("Binary"), BinaryValue: []byte{0, 1, 2, 0xff}},
		},
	})
	require.NoError(t, err)
	clk.Advance(1500 * time.Millisecond)
	received := clk.Now()

	ds, err := src.Receive(t.Context(), short(10, 0))
	require.NoError(t, err)
	require.Len(t, ds, 1)
	d := ds[0]
	require.Equal(t, "order 1", d.Body)
	require.Equal(t, "customer-7", d.GroupID)
	require.Equal(t, "dedup-1", d.DeduplicationID)
	require.Zero(t, d.Delay)
	require.Equal(t, map[string]fifoq.Attribute{
		"Kind":   {DataType: "String", StringValue: "new"},
		"Amount": {DataType: "Number.cents", StringValue: "1250"},
		"Blob":   {DataType: "Binary", BinaryValue: []byte{0, 1, 2, 0xff}},
	}, d.Attributes)
	require.Equal(t, aws.ToString(out.MessageId), d.MessageID)
	require.Equal(t, aws.ToString(out.SequenceNumber), d.SequenceNumber)
	require.NotEmpty(t, d.SequenceNumber)
	require.NotEmpty(t, d.ReceiptHandle)
	require.Equal(t, 1, d.ReceiveCount)
	require.True(t, d.SentAt.Equal(start.Truncate(time.Millisecond)), "SentAt %v, want %v", d.SentAt, start)
	require.True(t, d.FirstReceivedAt.Equal(received.Truncate(time.Millisecond)), "FirstReceivedAt %v, want %v", d.FirstReceivedAt, received)
	require.Empty(t, d.DeadLetterSource)

	// The same message, as the queue itself shows it.
	for s := range q.Messages() {
		require.Equal(t, s.MessageID, d.MessageID)
		require.Equal(t, s.SequenceNumber, d.SequenceNumber)
		require.Equal(t, s.ReceiveCount, d.ReceiveCount)
	}

	// Received again after the visibility timeout: a new handle, the count one higher, the first receive kept.
	clk.Advance(30 * time.Second)
	again, err := src.Receive(t.Context(), short(10, 0))
	require.NoError(t, err)
	require.Len(t, again, 1)
	require.Equal(t, d.MessageID, again[0].MessageID)
	require.NotEqual(t, d.ReceiptHandle, again[0].ReceiptHandle)
	require.Equal(t, 2, again[0].ReceiveCount)
	require.True(t, again[0].FirstReceivedAt.Equal(d.FirstReceivedAt), "FirstReceivedAt %v, want %v", again[0].FirstReceivedAt, d.FirstReceivedAt)

	// The request asked for every attribute.
	reqs := e.rec.requests()
	last := reqs[len(reqs)-1]
	require.Contains(t, last, `"MessageSystemAttributeNames":["All"]`)
	require.Contains(t, last, `"MessageAttributeNames":["All"]`)
	require.Contains(t, last, `"MaxNumberOfMessages":10`)
}

func TestReceiveStandard(t *testing.T) {
	t.Parallel()
	e := setup(t, sqsapi.WithClock(fifoq.NewManualClock(time.Unix(1_700_000_000, 0))))
	src, _ := e.queue(t, "jobs", nil)
	require.False(t, src.FIFO())
	e.send(t, e.url(t, "jobs"), "tenant-1", "a") // fair queue: a group id, no order
	e.send(t, e.url(t, "jobs"), "", "b")

	ds, err := src.Receive(t.Context(), short(0, 0)) // MaxMessages 0 means 1
	require.NoError(t, err)
	require.Equal(t, []string{"a"}, bodies(ds))
	require.Equal(t, "tenant-1", ds[0].GroupID)
	require.Empty(t, ds[0].SequenceNumber)
	require.Empty(t, ds[0].DeduplicationID)
	require.Nil(t, ds[0].Attributes)

	ds, err = src.Receive(t.Context(), short(10, 0))
	require.NoError(t, err)
	require.Equal(t, []string{"b"}, bodies(ds))
	require.Empty(t, ds[0].GroupID)
}

func TestReceiveDeadLetterSource(t *testing.T) {
	t.Parallel()
	clk := fifoq.NewManualClock(time.Unix(1_700_000_000, 0))
	e := setup(t, sqsapi.WithClock(clk))
	dlq, _ := e.queue(t, "work-dlq.fifo", map[string]string{"FifoQueue": "true"})
	src, _ := e.queue(t, "work.fifo", map[string]string{
		"FifoQueue":     "true",
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:work-dlq.fifo","maxReceiveCount":"1"}`,
	})
	e.send(t, e.url(t, "work.fifo"), "g", "poison")

	ds, err := src.Receive(t.Context(), shortVisible(1)) // received once, left visible
	require.NoError(t, err)
	require.Equal(t, []string{"poison"}, bodies(ds))
	ds, err = src.Receive(t.Context(), short(1, 0)) // past maxReceiveCount: moved, not returned
	require.NoError(t, err)
	require.Empty(t, ds)

	moved, err := dlq.Receive(t.Context(), short(1, 0))
	require.NoError(t, err)
	require.Equal(t, []string{"poison"}, bodies(moved))
	require.Equal(t, "work.fifo", moved[0].DeadLetterSource)
	require.Equal(t, 2, moved[0].ReceiveCount)
}

// TestReceiveWaitTime checks how WaitTime reaches WaitTimeSeconds: left out for 0 (the queue's 20 s),
// sent as 0 for NoWaitTime, rounded up otherwise. Inside a synctest bubble the long polls take exactly
// their virtual time.
func TestReceiveWaitTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := setup(t)
		src, _ := e.queue(t, "polls", map[string]string{"ReceiveMessageWaitTimeSeconds": "20"})
		for _, tc := range []struct {
			wait  time.Duration
			none  bool // NoWaitTime
			param string
			took  time.Duration
		}{
			{0, false, "", 20 * time.Second},
			{0, true, `"WaitTimeSeconds":0`, 0},
			{time.Nanosecond, false, `"WaitTimeSeconds":1`, time.Second},
			{1500 * time.Millisecond, false, `"WaitTimeSeconds":2`, 2 * time.Second},
			{20 * time.Second, false, `"WaitTimeSeconds":20`, 20 * time.Second},
		} {
			start := time.Now()
			ds, err := src.Receive(t.Context(), fifoq.ReceiveOptions{WaitTime: tc.wait, NoWaitTime: tc.none})
			require.NoError(t, err, "WaitTime %v", tc.wait)
			require.Empty(t, ds)
			require.Equal(t, tc.took, time.Since(start), "WaitTime %v", tc.wait)
			reqs := e.rec.requests()
			body := reqs[len(reqs)-1]
			if tc.param == "" {
				require.NotContains(t, body, "WaitTimeSeconds", "WaitTime %v", tc.wait)
			} else {
				require.Contains(t, body, tc.param, "WaitTime %v", tc.wait)
			}
		}

		// A long poll returns as soon as a message comes.
		got := make(chan []fifoq.Delivery)
		go func() {
			ds, _ := src.Receive(t.Context(), fifoq.ReceiveOptions{WaitTime: 20 * time.Second})
			got <- ds
		}()
		time.Sleep(5 * time.Second)
		start := time.Now()
		e.send(t, e.url(t, "polls"), "", "late")
		require.Equal(t, []string{"late"}, bodies(<-got))
		require.Zero(t, time.Since(start))
	})
}

func TestReceiveContextDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := setup(t)
		src, _ := e.queue(t, "polls", nil)
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		start := time.Now()
		_, err := src.Receive(ctx, fifoq.ReceiveOptions{WaitTime: 20 * time.Second})
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Equal(t, 3*time.Second, time.Since(start))
	})
}

// waitVisible long-polls src, leaving what it receives visible, until a message comes; it returns the
// message and how long that took, in a synctest bubble's virtual time.
func waitVisible(t *testing.T, src *sqsadapter.Source) ([]fifoq.Delivery, time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		ds, err := src.Receive(t.Context(), fifoq.ReceiveOptions{WaitTime: 20 * time.Second, NoVisibilityTimeout: true})
		require.NoError(t, err)
		if len(ds) > 0 {
			return ds, time.Since(start)
		}
	}
}

// TestReceiveVisibilityTimeout checks how VisibilityTimeout reaches the request: left out for 0 (the
// queue's 30 s), sent as 0 for NoVisibilityTimeout (the message stays visible), rounded up otherwise.
func TestReceiveVisibilityTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := setup(t)
		src, _ := e.queue(t, "jobs", map[string]string{"VisibilityTimeout": "30"})
		e.send(t, e.url(t, "jobs"), "", "m")
		for _, tc := range []struct {
			vt        time.Duration
			none      bool // NoVisibilityTimeout
			param     string
			invisible time.Duration
		}{
			{0, false, "", 30 * time.Second},
			{0, true, `"VisibilityTimeout":0`, 0},
			{1500 * time.Millisecond, false, `"VisibilityTimeout":2`, 2 * time.Second},
			{time.Hour, false, `"VisibilityTimeout":3600`, time.Hour},
		} {
			o := short(1, tc.vt)
			o.NoVisibilityTimeout = tc.none
			ds, err := src.Receive(t.Context(), o)
			require.NoError(t, err)
			require.Equal(t, []string{"m"}, bodies(ds), "VisibilityTimeout %v", tc.vt)
			reqs := e.rec.requests()
			body := reqs[len(reqs)-1]
			if tc.param == "" {
				require.NotContains(t, body, "VisibilityTimeout", "VisibilityTimeout %v", tc.vt)
			} else {
				require.Contains(t, body, tc.param, "VisibilityTimeout %v", tc.vt)
			}
			ds, took := waitVisible(t, src)
			require.Equal(t, []string{"m"}, bodies(ds), "VisibilityTimeout %v", tc.vt)
			require.Equal(t, tc.invisible, took, "VisibilityTimeout %v: visible again after", tc.vt)
		}
	})
}

func TestReceiveAttemptID(t *testing.T) {
	t.Parallel()
	e := setup(t, sqsapi.WithClock(fifoq.NewManualClock(time.Unix(1_700_000_000, 0))))
	src, _ := e.queue(t, "orders.fifo", map[string]string{"FifoQueue": "true"})
	e.send(t, e.url(t, "orders.fifo"), "g", "a", "b")

	o := fifoq.ReceiveOptions{MaxMessages: 10, NoWaitTime: true, AttemptID: "attempt-1"}
	first, err := src.Receive(t.Context(), o)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, bodies(first))
	retry, err := src.Receive(t.Context(), o) // a retry returns the same messages and handles
	require.NoError(t, err)
	require.Equal(t, handles(first), handles(retry))
	reqs := e.rec.requests()
	require.Contains(t, reqs[len(reqs)-1], `"ReceiveRequestAttemptId":"attempt-1"`)

	// Deleting one of them makes the attempt id unusable: ErrAttemptNotRetryable, from the SQS error.
	require.NoError(t, src.DeleteBatch(t.Context(), handles(first[:1])))
	_, err = src.Receive(t.Context(), o)
	require.ErrorIs(t, err, fifoq.ErrAttemptNotRetryable)
	var apiErr smithy.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, "InvalidParameterValue", apiErr.ErrorCode())

	// A standard queue takes no attempt id: the adapter leaves it out.
	std, _ := e.queue(t, "jobs", nil)
	_, err = std.Receive(t.Context(), o)
	require.NoError(t, err)
	reqs = e.rec.requests()
	require.NotContains(t, reqs[len(reqs)-1], "ReceiveRequestAttemptId")
}

// TestReceiveRejects checks that options out of range are rejected with fifoq's sentinels, without a
// request.
func TestReceiveRejects(t *testing.T) {
	t.Parallel()
	e := setup(t)
	src, _ := e.queue(t, "jobs", nil)
	before := len(e.rec.requests())
	for _, tc := range []struct {
		o    fifoq.ReceiveOptions
		want error
	}{
		{fifoq.ReceiveOptions{MaxMessages: 11}, fifoq.ErrInvalidMaxMessages},
		{fifoq.ReceiveOptions{MaxMessages: -1}, fifoq.ErrInvalidMaxMessages},
		{fifoq.ReceiveOptions{WaitTime: 21 * time.Second}, fifoq.ErrInvalidWaitTime},
		{fifoq.ReceiveOptions{WaitTime: -time.Second}, fifoq.ErrInvalidWaitTime},
		{fifoq.ReceiveOptions{VisibilityTimeout: 12*time.Hour + time.Second}, fifoq.ErrInvalidVisibilityTimeout},
		{fifoq.ReceiveOptions{VisibilityTimeout: -time.Second}, fifoq.ErrInvalidVisibilityTimeout},
	} {
		_, err := src.Receive(t.Context(), tc.o)
		require.ErrorIs(t, err, tc.want, "Receive(%+v)", tc.o)
	}
	require.Len(t, e.rec.requests(), before, "rejected receives made requests")
}

func TestDeleteBatch(t *testing.T) {
	t.Parallel()
	e := setup(t, sqsapi.WithClock(fifoq.NewManualClock(time.Unix(1_700_000_000, 0))))
	src, q := e.queue(t, "jobs", nil)
	e.send(t, e.url(t, "jobs"), "", "a", "b", "c")
	ds, err := src.Receive(t.Context(), short(10, 0))
	require.NoError(t, err)
	require.Len(t, ds, 3)

	err = src.DeleteBatch(t.Context(), []string{ds[0].ReceiptHandle, "garbage", ds[2].ReceiptHandle, "more garbage"})
	var be *fifoq.BatchError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Entries, 2, "%v", err)
	for i, want := range []int{1, 3} {
		entry := be.Entries[i]
		require.Equal(t, want, entry.Index)
		require.ErrorIs(t, entry.Err, fifoq.ErrReceiptHandleInvalid)
		var apiErr smithy.APIError
		require.ErrorAs(t, entry.Err, &apiErr)
		require.Equal(t, "ReceiptHandleIsInvalid", apiErr.ErrorCode())
		require.Equal(t, smithy.FaultClient, apiErr.ErrorFault())
	}
	require.ErrorIs(t, err, fifoq.ErrReceiptHandleInvalid)
	require.Equal(t, fifoq.Stats{InFlight: 1}, q.Stats(), "a and c deleted, b in flight")

	require.NoError(t, src.DeleteBatch(t.Context(), []string{ds[1].ReceiptHandle}))
	require.Equal(t, fifoq.Stats{}, q.Stats())
}

func TestDeleteBatchExpiredFIFO(t *testing.T) {
	t.Parallel()
	clk := fifoq.NewManualClock(time.Unix(1_700_000_000, 0))
	e := setup(t, sqsapi.WithClock(clk))
	src, _ := e.queue(t, "orders.fifo", map[string]string{"FifoQueue": "true", "VisibilityTimeout": "10"})
	e.send(t, e.url(t, "orders.fifo"), "g", "a")
	ds, err := src.Receive(t.Context(), short(1, 0))
	require.NoError(t, err)
	clk.Advance(10 * time.Second)

	err = src.DeleteBatch(t.Context(), handles(ds))
	var be *fifoq.BatchError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Entries, 1)
	require.Equal(t, 0, be.Entries[0].Index)
	require.ErrorIs(t, be.Entries[0].Err, fifoq.ErrReceiptHandleExpired)
	require.NotErrorIs(t, be.Entries[0].Err, fifoq.ErrReceiptHandleInvalid)
	var apiErr smithy.APIError
	require.ErrorAs(t, be.Entries[0].Err, &apiErr)
	require.Equal(t, "InvalidParameterValue", apiErr.ErrorCode())
}

func TestChangeVisibilityBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := setup(t)
		src, q := e.queue(t, "jobs", map[string]string{"VisibilityTimeout": "30"})
		e.send(t, e.url(t, "jobs"), "", "a", "b", "c")
		ds, err := src.Receive(t.Context(), short(10, 0))
		require.NoError(t, err)
		require.Equal(t, []string{"a", "b", "c"}, bodies(ds))
		require.NoError(t, src.DeleteBatch(t.Context(), handles(ds[2:])))

		err = src.ChangeVisibilityBatch(t.Context(), []fifoq.VisibilityChange{
			{ReceiptHandle: ds[0].ReceiptHandle, Timeout: 0},                  // visible at once
			{ReceiptHandle: ds[1].ReceiptHandle, Timeout: 59*time.Second + 1}, // rounded up to 60 s
			{ReceiptHandle: ds[2].ReceiptHandle, Timeout: time.Minute},        // deleted
			{ReceiptHandle: "garbage", Timeout: time.Minute},                  // not a handle
		})
		var be *fifoq.BatchError
		require.ErrorAs(t, err, &be)
		require.Len(t, be.Entries, 2, "%v", err)
		require.Equal(t, 2, be.Entries[0].Index)
		require.ErrorIs(t, be.Entries[0].Err, fifoq.ErrMessageNotAvailable)
		require.Equal(t, 3, be.Entries[1].Index)
		require.ErrorIs(t, be.Entries[1].Err, fifoq.ErrReceiptHandleInvalid)
		require.Equal(t, fifoq.Stats{Visible: 1, InFlight: 1}, q.Stats())
		reqs := e.rec.requests()
		require.Contains(t, reqs[len(reqs)-1], `"VisibilityTimeout":0`)
		require.Contains(t, reqs[len(reqs)-1], `"VisibilityTimeout":60`)

		again, err := src.Receive(t.Context(), short(10, time.Hour))
		require.NoError(t, err)
		require.Equal(t, []string{"a"}, bodies(again))
		later, took := waitVisible(t, src)
		require.Equal(t, []string{"b"}, bodies(later))
		require.Equal(t, 60*time.Second, took, "b visible 60 s after the change")
		require.NoError(t, src.DeleteBatch(t.Context(), handles(later)))

		// Again, alone.
		require.NoError(t, src.ChangeVisibilityBatch(t.Context(), []fifoq.VisibilityChange{{ReceiptHandle: again[0].ReceiptHandle}}))
		ds, took = waitVisible(t, src)
		require.Equal(t, []string{"a"}, bodies(ds))
		require.Zero(t, took)
	})
}

// TestBatchRejects checks that batches of no entries or more than 10, and timeouts out of range, are
// rejected as a *fifoq.Queue rejects them, without a request.
func TestBatchRejects(t *testing.T) {
	t.Parallel()
	e := setup(t)
	src, _ := e.queue(t, "jobs", nil)
	before := len(e.rec.requests())
	eleven := make([]string, 11)
	for i := range eleven {
		eleven[i] = "h" + strconv.Itoa(i)
	}
	require.ErrorIs(t, src.DeleteBatch(t.Context(), nil), fifoq.ErrEmptyBatch)
	require.ErrorIs(t, src.DeleteBatch(t.Context(), eleven), fifoq.ErrTooManyEntries)
	require.ErrorIs(t, src.ChangeVisibilityBatch(t.Context(), nil), fifoq.ErrEmptyBatch)
	require.ErrorIs(t, src.ChangeVisibilityBatch(t.Context(), make([]fifoq.VisibilityChange, 11)), fifoq.ErrTooManyEntries)
	require.ErrorIs(t, src.ChangeVisibilityBatch(t.Context(), []fifoq.VisibilityChange{{ReceiptHandle: "h", Timeout: 13 * time.Hour}}),
		fifoq.ErrInvalidVisibilityTimeout)
	require.ErrorIs(t, src.ChangeVisibilityBatch(t.Context(), []fifoq.VisibilityChange{{ReceiptHandle: "h", Timeout: -time.Second}}),
		fifoq.ErrInvalidVisibilityTimeout)
	require.ErrorIs(t, src.ChangeVisibilityBatch(t.Context(), []fifoq.VisibilityChange{{ReceiptHandle: "h", Timeout: math.MinInt64}}),
		fifoq.ErrInvalidVisibilityTimeout, "as on a *fifoq.Queue")
	require.Len(t, e.rec.requests(), before, "rejected batches made requests")
}

func TestVisibilityTimeout(t *testing.T) {
	t.Parallel()
	e := setup(t)
	src, _ := e.queue(t, "jobs", map[string]string{"VisibilityTimeout": "45"})
	vt, err := src.VisibilityTimeout(t.Context())
	require.NoError(t, err)
	require.Equal(t, 45*time.Second, vt)

	def, _ := e.queue(t, "defaults.fifo", map[string]string{"FifoQueue": "true"})
	vt, err = def.VisibilityTimeout(t.Context())
	require.NoError(t, err)
	require.Equal(t, 30*time.Second, vt)

	// NewConsumer asks with a done context, which makes no request; Run asks with its own.
	before := len(e.rec.requests())
	c, err := fifoq.NewConsumer(src, func(context.Context, []fifoq.Delivery) error { return nil },
		fifoq.ConsumerOptions{HandlerTimeout: time.Minute})
	require.NoError(t, err, "NewConsumer cannot know the visibility timeout without a request")
	require.Len(t, e.rec.requests(), before, "NewConsumer made a request")
	require.ErrorIs(t, c.Run(t.Context()), fifoq.ErrInvalidBatchOptions, "handler timeout 1m over a 45s visibility timeout")
	require.Len(t, e.rec.requests(), before+1, "Run asks once")
}

// TestQueueDoesNotExist checks SQS's error for a queue that does not exist: it comes back as the SDK's
// error, matching catalog.ErrQueueDoesNotExist (fifoq's error for it, with its code) and no other sentinel.
func TestQueueDoesNotExist(t *testing.T) {
	t.Parallel()
	e := setup(t)
	src := sqsadapter.New(e.client, "http://fifoq.test/000000000000/missing")
	_, err := src.Receive(t.Context(), short(1, 0))
	var missing *types.QueueDoesNotExist
	require.ErrorAs(t, err, &missing, "%v", err)
	require.ErrorIs(t, err, catalog.ErrQueueDoesNotExist)
	require.Equal(t, "AWS.SimpleQueueService.NonExistentQueue", fifoq.ErrorCode(err))
	for _, s := range []error{fifoq.ErrReceiptHandleInvalid, fifoq.ErrReceiptHandleExpired, fifoq.ErrInvalidMaxMessages} {
		require.NotErrorIs(t, err, s)
	}
	require.ErrorIs(t, src.DeleteBatch(t.Context(), []string{"h"}), catalog.ErrQueueDoesNotExist)
	_, err = src.VisibilityTimeout(t.Context())
	require.ErrorAs(t, err, &missing)
	require.ErrorIs(t, err, catalog.ErrQueueDoesNotExist)
	require.False(t, errors.Is(err, context.Canceled))
}

// TestZerosSigned checks that the explicit zeros go into the body before the SDK signs it: a
// server that verifies signatures accepts the request.
func TestZerosSigned(t *testing.T) {
	t.Parallel()
	e := setup(t, sqsapi.WithSignatureVerification(func(id string) (string, bool) { return "secret", id == "AKIDTEST" }))
	src, _ := e.queue(t, "jobs", map[string]string{"ReceiveMessageWaitTimeSeconds": "20"})
	e.send(t, e.url(t, "jobs"), "", "m")
	ds, err := src.Receive(t.Context(), shortVisible(10))
	require.NoError(t, err)
	require.Equal(t, []string{"m"}, bodies(ds))
	ds, err = src.Receive(t.Context(), shortVisible(10)) // left visible
	require.NoError(t, err)
	require.Equal(t, []string{"m"}, bodies(ds))
	reqs := e.rec.requests()
	require.Contains(t, reqs[len(reqs)-1], `{"WaitTimeSeconds":0,"VisibilityTimeout":0,`)
}

// TestBatcherWindow runs a fifoq Batcher with a batch window over the adapter: its receives long-poll what
// is left of the window (rounded up to seconds) and take the visibility timeout given plus that.
func TestBatcherWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := setup(t)
		src, _ := e.queue(t, "jobs", nil)
		url := e.url(t, "jobs")
		e.send(t, url, "", "a")
		go func() {
			time.Sleep(2 * time.Second) // a producer, two seconds later
			_, err := e.client.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("b")})
			if err != nil {
				t.Error(err)
			}
		}()
		b, err := fifoq.NewBatcher(src, fifoq.BatchOptions{Size: 10, Window: 5 * time.Second, VisibilityTimeout: 30 * time.Second})
		require.NoError(t, err)
		start := time.Now()
		batch, err := b.Next(t.Context())
		require.NoError(t, err)
		require.Equal(t, []string{"a", "b"}, bodies(batch))
		require.Equal(t, 5*time.Second, time.Since(start), "the batch closes when its window ends")
		var receives []string
		for _, body := range e.rec.requests() {
			if strings.Contains(body, "MaxNumberOfMessages") {
				receives = append(receives, body)
			}
		}
		require.Len(t, receives, 3, "a first long poll, one that gets b, one that ends the window")
		require.Contains(t, receives[0], `"VisibilityTimeout":35`)
		require.Contains(t, receives[0], `"WaitTimeSeconds":20`)
		require.Contains(t, receives[1], `"WaitTimeSeconds":5`)
		require.Contains(t, receives[2], `"WaitTimeSeconds":3`)
		require.Contains(t, receives[2], `"VisibilityTimeout":33`)
	})
}

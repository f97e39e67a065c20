package sqsapi

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/storage/storagetest"
)

// A store that fails while serving (a full disk): every change is refused with ServiceUnavailable (HTTP 503,
// which the SDKs retry) whose message names the cause and no request logs it at Error, the store's Failed
// is closed and its Err wraps fifoq.ErrStoreFailed and ENOSPC; a restart on the disk has every acknowledged message.
func TestStoreFailsWhileServing(t *testing.T) {
	clock := fifoq.NewManualClock(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	disk := storagetest.NewDisk()
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, st, eng := openMemoryServer(t, disk, WithClock(clock), WithLogger(logger))
	_, err := s.DeclareQueue("a", nil)
	require.NoError(t, err)
	const url0 = "http://localhost/000000000000/a"
	send := func(body string) (int, string) {
		return query(s, url.Values{"Action": {"SendMessage"}, "QueueUrl": {url0}, "MessageBody": {body}})
	}
	code, body := send("kept")
	require.Equal(t, http.StatusOK, code, body)
	require.NoError(t, st.Err())
	select {
	case <-st.Failed():
		t.Fatal("Failed closed before the store failed")
	default:
	}

	eng.FailNextSync(syscall.ENOSPC)
	code, body = send("lost")
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	require.Contains(t, body, "<Code>ServiceUnavailable</Code>")
	require.Contains(t, body, "no space left on device")
	require.NotContains(t, body, "try again")
	<-st.Failed() // closed
	require.ErrorIs(t, st.Err(), fifoq.ErrStoreFailed)
	require.ErrorIs(t, st.Err(), syscall.ENOSPC)

	// Every later change is refused alike, receives and admin actions included, in both protocols.
	for _, p := range []url.Values{
		{"Action": {"SendMessage"}, "QueueUrl": {url0}, "MessageBody": {"x"}},
		{"Action": {"ReceiveMessage"}, "QueueUrl": {url0}},
		{"Action": {"SetQueueAttributes"}, "QueueUrl": {url0}, "Attribute.1.Name": {"VisibilityTimeout"}, "Attribute.1.Value": {"9"}},
		{"Action": {"CreateQueue"}, "QueueName": {"b"}},
		{"Action": {"TagQueue"}, "QueueUrl": {url0}, "Tag.1.Key": {"k"}, "Tag.1.Value": {"v"}},
	} {
		code, body := query(s, p)
		require.Equal(t, http.StatusServiceUnavailable, code, "%s: %s", p["Action"], body)
		require.Contains(t, body, "no space left on device", p["Action"])
	}
	r, _ := http.NewRequest(http.MethodPost, "http://localhost/", strings.NewReader(`{"QueueUrl":"`+url0+`","MessageBody":"j"}`))
	r.Header.Set("X-Amz-Target", "AmazonSQS.SendMessage")
	r.Header.Set("Content-Type", "application/x-amz-json-1.0")
	resp, err := s.HTTPClient().Do(r)
	require.NoError(t, err)
	var jb bytes.Buffer
	_, _ = jb.ReadFrom(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.Equal(t, "ServiceUnavailable;Receiver", resp.Header.Get("X-Amzn-Query-Error"))
	require.Contains(t, jb.String(), `"__type":"com.amazonaws.sqs#ServiceUnavailable"`)
	require.Contains(t, jb.String(), "no space left on device")
	// Reads that change nothing go on.
	code, body = query(s, url.Values{"Action": {"GetQueueAttributes"}, "QueueUrl": {url0}, "AttributeName.1": {"All"}})
	require.Equal(t, http.StatusOK, code, body)

	// The store's failure is logged where it happens (package durable) and by the program that stops
	// on Failed; the requests it fails go to the log at Debug, not each at Error.
	require.NotContains(t, logs.String(), "level=ERROR", logs.String())
	require.Contains(t, logs.String(), "no space left on device")

	// A restart recovers what was acknowledged, and works.
	require.NoError(t, closeDurable(s))
	require.ErrorIs(t, st.Close(), syscall.ENOSPC)
	s, st, _ = openMemoryServer(t, disk, WithClock(clock))
	defer st.Close()
	defer closeDurable(s)
	require.NoError(t, st.Err())
	q, ok := s.Queue("a")
	require.True(t, ok)
	var bodies []string
	for m := range q.Messages() {
		bodies = append(bodies, m.Body)
	}
	require.Contains(t, bodies, "kept")
	code, body = send("again")
	require.Equal(t, http.StatusOK, code, body)
}

// A failed write of the catalogue's records fails the store too: the Go API (DeclareQueue) and the requests
// report it.
func TestRecordsFailureFailsStore(t *testing.T) {
	disk := storagetest.NewDisk()
	s, st, eng := openMemoryServer(t, disk)
	defer st.Close()
	defer closeDurable(s)
	eng.FailNextCommit(syscall.ENOSPC)
	_, err := s.DeclareQueue("a", nil)
	require.ErrorIs(t, err, fifoq.ErrStoreFailed)
	require.ErrorIs(t, err, syscall.ENOSPC)
	<-st.Failed()
	require.True(t, errors.Is(st.Err(), syscall.ENOSPC))
	code, body := query(s, url.Values{"Action": {"CreateQueue"}, "QueueName": {"b"}})
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	require.Contains(t, body, "no space left on device")
}

// The Go methods of a server whose store failed report the cause through errors.Is.
func TestStoreFailureGoAPI(t *testing.T) {
	disk := storagetest.NewDisk()
	s, st, eng := openMemoryServer(t, disk)
	defer st.Close()
	defer closeDurable(s)
	_, err := s.DeclareQueue("a", nil)
	require.NoError(t, err)
	eng.FailNextSync(syscall.ENOSPC)
	_, err = s.DeclareQueue("a", map[string]string{"VisibilityTimeout": "9"})
	require.ErrorIs(t, err, fifoq.ErrStoreFailed)
	require.ErrorIs(t, err, syscall.ENOSPC)
	_, err = s.DeclareQueue("a", map[string]string{"VisibilityTimeout": "10"})
	require.ErrorIs(t, err, syscall.ENOSPC, "refused at once")
	_, err = s.DeclareQueue("b", nil)
	require.ErrorIs(t, err, syscall.ENOSPC)
	q, _ := s.Queue("a")
	_, err = q.Send(t.Context(), fifoq.Message{Body: "x"})
	require.ErrorIs(t, err, syscall.ENOSPC)
}

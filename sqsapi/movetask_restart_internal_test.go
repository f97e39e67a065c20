package sqsapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq/storage/storagetest"
)

// jcall serves one JSON-protocol request in process and decodes its answer.
func jcall(t *testing.T, s *Server, action string, in map[string]any) map[string]any {
	t.Helper()
	body, err := json.Marshal(in)
	require.NoError(t, err)
	r := httptest.NewRequest(http.MethodPost, "http://localhost/", strings.NewReader(string(body)))
	r.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	r.Header.Set("Content-Type", "application/x-amz-json-1.0")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	require.Equal(t, http.StatusOK, w.Code, "%s: %s", action, w.Body.String())
	out := map[string]any{}
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &out))
	return out
}

// A move task running when a durable server stops (Close, or a crash) goes on when the server is opened
// again on its store, with its handle, start time and counts: ListMessageMoveTasks lists it, RUNNING, with
// exactly the messages moved before the stop, and it moves the rest at its rate. The ended task is listed
// after a later restart too, and a cancelled task stays cancelled.
func TestMoveTaskSurvivesRestart(t *testing.T) {
	for _, crash := range []bool{false, true} {
		name := "close"
		if crash {
			name = "crash"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { moveTaskRestart(t, crash) })
		})
	}
}

func moveTaskRestart(t *testing.T, crash bool) {
	disk := storagetest.NewDisk()
	s, st, eng := openMemoryServer(t, disk)
	const base = "http://localhost/000000000000/"
	arn := func(name string) string { return "arn:aws:sqs:us-east-1:000000000000:" + name }
	for _, name := range []string{"dlq", "dest"} {
		jcall(t, s, "CreateQueue", map[string]any{"QueueName": name})
	}
	jcall(t, s, "CreateQueue", map[string]any{"QueueName": "src", "Attributes": map[string]string{
		"RedrivePolicy": `{"deadLetterTargetArn":"` + arn("dlq") + `","maxReceiveCount":1}`}})
	for i := range 25 {
		jcall(t, s, "SendMessage", map[string]any{"QueueUrl": base + "dlq", "MessageBody": "m" + itoa(int64(i))})
	}
	started := jcall(t, s, "StartMessageMoveTask", map[string]any{"SourceArn": arn("dlq"), "DestinationArn": arn("dest"),
		"MaxNumberOfMessagesPerSecond": 10})
	handle := started["TaskHandle"].(string)
	synctest.Wait() // the first step moved 10 and the task waits a second, at its rate

	list := func(s *Server) map[string]any {
		out := jcall(t, s, "ListMessageMoveTasks", map[string]any{"SourceArn": arn("dlq"), "MaxResults": 10})
		results := out["Results"].([]any)
		require.Len(t, results, 1)
		return results[0].(map[string]any)
	}
	count := func(s *Server, name string) int {
		q, ok := s.Queue(name)
		require.True(t, ok)
		return q.Stats().Visible
	}
	before := list(s)
	require.Equal(t, "RUNNING", before["Status"])
	require.EqualValues(t, 10, before["ApproximateNumberOfMessagesMoved"])
	require.EqualValues(t, 25, before["ApproximateNumberOfMessagesToMove"])

	if crash {
		eng.Crash() // the old task fails at its next step, which the crashed engine refuses
	} else {
		require.NoError(t, closeDurable(s))
		require.NoError(t, st.Close())
	}
	s, st, _ = openMemoryServer(t, disk)
	after := list(s)
	require.Equal(t, before, after, "listed as it was, handle and start time included")
	require.Equal(t, handle, after["TaskHandle"])
	require.Equal(t, 10, count(s, "dest"), "what it moved stays moved")

	synctest.Wait() // it waits a step's time at its rate first, then goes on
	require.Equal(t, before, list(s))
	time.Sleep(time.Second) // on the bubble's clock
	synctest.Wait()
	require.EqualValues(t, 20, list(s)["ApproximateNumberOfMessagesMoved"])
	require.Equal(t, 20, count(s, "dest"))
	time.Sleep(time.Second)
	synctest.Wait()
	done := list(s)
	require.Equal(t, "COMPLETED", done["Status"])
	require.EqualValues(t, 25, done["ApproximateNumberOfMessagesMoved"])
	require.Equal(t, 25, count(s, "dest"))
	require.Equal(t, 0, count(s, "dlq"))

	// A cancelled task stays cancelled, and both are listed after a restart.
	for i := range 5 {
		jcall(t, s, "SendMessage", map[string]any{"QueueUrl": base + "dlq", "MessageBody": "n" + itoa(int64(i))})
	}
	second := jcall(t, s, "StartMessageMoveTask", map[string]any{"SourceArn": arn("dlq"), "DestinationArn": arn("dest"),
		"MaxNumberOfMessagesPerSecond": 2})
	synctest.Wait()
	moved := jcall(t, s, "CancelMessageMoveTask", map[string]any{"TaskHandle": second["TaskHandle"]})
	require.EqualValues(t, 2, moved["ApproximateNumberOfMessagesMoved"])
	require.NoError(t, closeDurable(s))
	require.NoError(t, st.Close())
	s, st, _ = openMemoryServer(t, disk)
	defer st.Close()
	defer closeDurable(s)
	out := jcall(t, s, "ListMessageMoveTasks", map[string]any{"SourceArn": arn("dlq"), "MaxResults": 10})
	results := out["Results"].([]any)
	require.Len(t, results, 2)
	require.Equal(t, "CANCELLED", results[0].(map[string]any)["Status"])
	require.EqualValues(t, 2, results[0].(map[string]any)["ApproximateNumberOfMessagesMoved"])
	require.Equal(t, done, results[1].(map[string]any))
	synctest.Wait()
	require.Equal(t, 3, count(s, "dlq"), "the cancelled task did not go on")
}

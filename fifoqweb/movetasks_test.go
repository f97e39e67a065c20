package fifoqweb

import (
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/sqsapi"
	"github.com/fifoq/fifoq/storage/storagetest"
)

// mtARN is the ARN of a queue of the test servers' default account and region.
func mtARN(name string) string { return "arn:aws:sqs:us-east-1:000000000000:" + name }

// mtCall serves one JSON-protocol request of the SQS API in process, and decodes its answer.
func mtCall(t *testing.T, s *sqsapi.Server, action string, in map[string]any) map[string]any {
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

// mtList returns what ListMessageMoveTasks lists of the redrives of dlq, newest first.
func mtList(t *testing.T, s *sqsapi.Server) []map[string]any {
	t.Helper()
	var out []map[string]any
	results, _ := mtCall(t, s, "ListMessageMoveTasks", map[string]any{"SourceArn": mtARN("dlq"), "MaxResults": 10})["Results"].([]any)
	for _, r := range results {
		out = append(out, r.(map[string]any))
	}
	return out
}

// mtQueues makes dlq, the dead-letter queue of src, with 5 messages, and dest.
func mtQueues(t *testing.T, s *sqsapi.Server) {
	t.Helper()
	for _, name := range []string{"dlq", "dest"} {
		mtCall(t, s, "CreateQueue", map[string]any{"QueueName": name})
	}
	mtCall(t, s, "CreateQueue", map[string]any{"QueueName": "src", "Attributes": map[string]string{
		"RedrivePolicy": `{"deadLetterTargetArn":"` + mtARN("dlq") + `","maxReceiveCount":1}`}})
	for range 5 {
		mtCall(t, s, "SendMessage", map[string]any{"QueueUrl": "http://localhost/000000000000/dlq", "MessageBody": "dead"})
	}
}

// taskField matches the hidden field of the cancel form that names the running redrive.
var taskField = regexp.MustCompile(`name="task" value="([^"]*)"`)

// mtShownHandle returns the handle of the running redrive of dlq that the console's page offers to cancel.
func mtShownHandle(t *testing.T, c *wtClient) string {
	t.Helper()
	code, body := c.get("queue?q=dlq")
	require.Equal(t, http.StatusOK, code, body)
	m := taskField.FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// With WithMoveTasks, a redrive started in the console is the server's: ListMessageMoveTasks lists it and
// CancelMessageMoveTask could cancel it; and the console cancels a redrive started through the API. The
// manual clock never moves, so a redrive at 1 a second runs until it is cancelled.
func TestConsoleRedrivesAreTheServers(t *testing.T) {
	t.Parallel()
	s := sqsapi.NewServer(sqsapi.WithClock(fifoq.NewManualClock(wtStart)))
	mtQueues(t, s)
	c := &wtClient{t: t, h: New(s.NamedQueues, WithMoveTasks(s))}

	// Started in the console: listed by the server, RUNNING, with its handle, destination and rate.
	w := c.post("redrive?q=dlq", url.Values{"dest": {"dest"}, "rate": {"1"}}, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	list := mtList(t, s)
	require.Len(t, list, 1)
	require.Equal(t, "RUNNING", list[0]["Status"])
	require.Equal(t, mtARN("dest"), list[0]["DestinationArn"])
	require.EqualValues(t, 1, list[0]["MaxNumberOfMessagesPerSecond"])
	handle := list[0]["TaskHandle"].(string)
	require.Equal(t, handle, mtShownHandle(t, c), "the page offers to cancel it, by its handle")

	// A second one is refused, by the server's rule.
	w = c.post("redrive?q=dlq", url.Values{"dest": {"dest"}}, true)
	require.Equal(t, http.StatusConflict, w.Code, w.Body.String())
	require.Len(t, mtList(t, s), 1, "nothing started")

	// Cancelled in the console: the server's task is cancelled.
	w = c.post("cancel?q=dlq", url.Values{"task": {handle}}, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	list = mtList(t, s)
	require.Equal(t, "CANCELLED", list[0]["Status"], "CancelMoveTask returns once the task has ended")
	require.NotContains(t, list[0], "TaskHandle", "no longer running")
	require.Empty(t, mtShownHandle(t, c), "nothing left to cancel")

	// Started through the API: the console shows it and cancels it. (Not back to the sources: the messages,
	// sent to dlq, have none, and such a task fails at its first message.)
	fromAPI := mtCall(t, s, "StartMessageMoveTask", map[string]any{"SourceArn": mtARN("dlq"), "DestinationArn": mtARN("dest"),
		"MaxNumberOfMessagesPerSecond": 1})["TaskHandle"].(string)
	require.Equal(t, fromAPI, mtShownHandle(t, c))
	w = c.post("cancel?q=dlq", url.Values{"task": {fromAPI}}, false)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	require.Contains(t, w.Body.String(), "Cancel the redrive of dlq")
	w = c.post("cancel?q=dlq", url.Values{"task": {fromAPI}}, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	list = mtList(t, s)
	require.Len(t, list, 2)
	require.Equal(t, "CANCELLED", list[0]["Status"])
	require.NotContains(t, list[0], "TaskHandle")
	require.Empty(t, s.RunningMoveTask("dlq"))
}

// Bad input to a console that hands its redrives to a server gets a clear error and changes nothing: the
// running redrive runs on, listed as it was, and no message moves.
func TestConsoleRedriveBadInputChangesNothing(t *testing.T) {
	t.Parallel()
	synctest.Test(t, badRedrives)
}

func badRedrives(t *testing.T) {
	s := sqsapi.NewServer()
	mtQueues(t, s)
	c := &wtClient{t: t, h: New(s.NamedQueues, WithMoveTasks(s))}
	dest, _ := s.Queue("dest")
	src, _ := s.Queue("src")
	handle := mtCall(t, s, "StartMessageMoveTask", map[string]any{"SourceArn": mtARN("dlq"), "DestinationArn": mtARN("dest"),
		"MaxNumberOfMessagesPerSecond": 1})["TaskHandle"].(string)
	synctest.Wait() // the first batch of 1 moved; the next waits a second of the bubble's clock, which stands still
	require.Equal(t, 1, dest.Stats().Visible)
	before := mtList(t, s)
	stats := [2]fifoq.Stats{dest.Stats(), src.Stats()}

	for _, tc := range []struct {
		path string
		form url.Values
		code int
		says string
	}{
		{"cancel?q=dlq", url.Values{"task": {"not-a-handle"}}, http.StatusConflict, `"not-a-handle" is not the running redrive of dlq`},
		{"cancel?q=dlq", url.Values{}, http.StatusBadRequest, "no redrive handle given"},
		{"cancel?q=src", url.Values{"task": {handle}}, http.StatusConflict, "is not the running redrive of src"},
		{"cancel?q=nosuch", url.Values{"task": {handle}}, http.StatusNotFound, `no queue named "nosuch"`},
		{"redrive?q=nosuch", url.Values{}, http.StatusNotFound, `no queue named "nosuch"`},
		{"redrive?q=dlq", url.Values{"dest": {"nosuch"}}, http.StatusBadRequest, `no queue named "nosuch"`},
		{"redrive?q=dlq", url.Values{"rate": {"501"}}, http.StatusBadRequest, "MaxNumberOfMessagesPerSecond"},
		{"redrive?q=dest", url.Values{}, http.StatusBadRequest, "Dead Letter Queue"},
		{"redrive?q=dlq", url.Values{}, http.StatusConflict, "already a task running"},
	} {
		w := c.post(tc.path, tc.form, true)
		require.Equal(t, tc.code, w.Code, "%s %v: %s", tc.path, tc.form, w.Body.String())
		require.Contains(t, w.Body.String(), html.EscapeString(tc.says), tc.path)
		require.Equal(t, before, mtList(t, s), "%s %v: the redrives are as they were", tc.path, tc.form)
		require.Equal(t, stats, [2]fifoq.Stats{dest.Stats(), src.Stats()}, tc.path)
		require.Equal(t, handle, s.RunningMoveTask("dlq"))
	}
	require.NoError(t, s.CancelMoveTask(t.Context(), handle))
}

// On a durable server, a redrive started in the console is stored: after the server is closed and opened
// again on its store, it is listed with its handle, still running, and the new console cancels it.
func TestConsoleRedriveSurvivesRestart(t *testing.T) {
	t.Parallel()
	disk := storagetest.NewDisk()
	open := func() (*sqsapi.Server, *fifoq.Store) {
		eng, err := disk.Open()
		require.NoError(t, err)
		st, err := fifoq.OpenStore(eng, "memory")
		require.NoError(t, err)
		s, err := sqsapi.Open(st, sqsapi.WithClock(fifoq.NewManualClock(wtStart)))
		require.NoError(t, err)
		return s, st
	}
	s, st := open()
	mtQueues(t, s)
	c := &wtClient{t: t, h: New(s.NamedQueues, WithMoveTasks(s))}
	w := c.post("redrive?q=dlq", url.Values{"dest": {"dest"}, "rate": {"1"}}, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	before := mtList(t, s)
	require.Len(t, before, 1)
	handle := before[0]["TaskHandle"].(string)
	require.NoError(t, c.h.(*Handler).Close(), "the console leaves the server's redrives to it")
	require.Equal(t, handle, s.RunningMoveTask("dlq"))
	require.NoError(t, s.Close())
	require.NoError(t, st.Close())

	s, st = open()
	defer st.Close()
	defer s.Close()
	after := mtList(t, s)
	require.Len(t, after, 1)
	require.Equal(t, "RUNNING", after[0]["Status"])
	require.Equal(t, handle, after[0]["TaskHandle"], "resumed, under its handle")
	c = &wtClient{t: t, h: New(s.NamedQueues, WithMoveTasks(s))}
	require.Equal(t, handle, mtShownHandle(t, c))
	w = c.post("cancel?q=dlq", url.Values{"task": {handle}}, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	require.Equal(t, "CANCELLED", mtList(t, s)[0]["Status"], "a durable server's cancel returns once the end is stored")
}

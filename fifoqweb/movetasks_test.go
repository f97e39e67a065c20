package fifoqweb

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
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

// mtHome is the default namespace of the test servers, whose queues the console names by their names.
var mtHome = catalog.Namespace{Account: "000000000000", Region: "us-east-1"}

// mtTaskID returns the catalogue's task id that a move task handle of the SQS API names (the base64 of a
// JSON object with its taskId): the console names a catalogue's redrives by their ids.
func mtTaskID(t *testing.T, handle string) string {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(handle)
	require.NoError(t, err, handle)
	var h struct {
		TaskID string `json:"taskId"`
	}
	require.NoError(t, json.Unmarshal(b, &h), handle)
	require.NotEmpty(t, h.TaskID, handle)
	return h.TaskID
}

// mtRunning returns the id of the running redrive of dlq in the server's catalogue, or "" when none runs.
func mtRunning(s *sqsapi.Server) string {
	for _, task := range s.Catalog().MoveTasks(mtHome, "dlq") {
		if task.Status().State == fifoq.MoveTaskRunning {
			return task.ID
		}
	}
	return ""
}

// taskField matches the hidden field of the cancel form that names the running redrive.
var taskField = regexp.MustCompile(`name="task" value="([^"]*)"`)

// shownHandle returns the handle of the running redrive of queue q that the console's page offers to
// cancel, "" when it offers none.
func shownHandle(t *testing.T, c *wtClient, q string) string {
	t.Helper()
	code, body := c.get("queue?q=" + url.QueryEscape(q))
	require.Equal(t, http.StatusOK, code, body)
	m := taskField.FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// mtShownHandle returns the handle of the running redrive of dlq that the console's page offers to cancel.
func mtShownHandle(t *testing.T, c *wtClient) string {
	t.Helper()
	return shownHandle(t, c, "dlq")
}

// Over a server's catalogue (NewCatalog), a redrive started in the console is the server's: ListMessageMoveTasks
// lists it and CancelMessageMoveTask could cancel it; and the console cancels a redrive started through the
// API. The console names a redrive by its task id in the catalogue, which the API's handle carries. The
// manual clock never moves, so a redrive at 1 a second runs until it is cancelled.
func TestConsoleRedrivesAreTheServers(t *testing.T) {
	t.Parallel()
	s := sqsapi.NewServer(sqsapi.WithClock(fifoq.NewManualClock(wtStart)))
	mtQueues(t, s)
	c := &wtClient{t: t, h: NewCatalog(s.Catalog())}

	// Started in the console: listed by the server, RUNNING, with its handle, destination and rate.
	w := c.post("redrive?q=dlq", url.Values{"dest": {"dest"}, "rate": {"1"}}, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	list := mtList(t, s)
	require.Len(t, list, 1)
	require.Equal(t, "RUNNING", list[0]["Status"])
	require.Equal(t, mtARN("dest"), list[0]["DestinationArn"])
	require.EqualValues(t, 1, list[0]["MaxNumberOfMessagesPerSecond"])
	handle := mtTaskID(t, list[0]["TaskHandle"].(string))
	require.Equal(t, handle, mtShownHandle(t, c), "the page offers to cancel it, by its id")
	require.Equal(t, handle, mtRunning(s))

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
	fromAPI := mtTaskID(t, mtCall(t, s, "StartMessageMoveTask", map[string]any{"SourceArn": mtARN("dlq"),
		"DestinationArn": mtARN("dest"), "MaxNumberOfMessagesPerSecond": 1})["TaskHandle"].(string))
	require.NotEqual(t, handle, fromAPI)
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
	require.Empty(t, mtRunning(s))
}

// Bad input to a console over a server's catalogue gets a clear error and changes nothing: the running
// redrive runs on, listed as it was, and no message moves.
func TestConsoleRedriveBadInputChangesNothing(t *testing.T) {
	t.Parallel()
	synctest.Test(t, badRedrives)
}

func badRedrives(t *testing.T) {
	s := sqsapi.NewServer()
	t.Cleanup(func() { _ = s.Close() }) // it stops the redrive of a failed test, which the bubble would wait for
	mtQueues(t, s)
	c := &wtClient{t: t, h: NewCatalog(s.Catalog())}
	dest, _ := s.Queue("dest")
	src, _ := s.Queue("src")
	apiHandle := mtCall(t, s, "StartMessageMoveTask", map[string]any{"SourceArn": mtARN("dlq"), "DestinationArn": mtARN("dest"),
		"MaxNumberOfMessagesPerSecond": 1})["TaskHandle"].(string)
	handle := mtTaskID(t, apiHandle)
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
		{"cancel?q=dlq", url.Values{"task": {apiHandle}}, http.StatusConflict, "is not the running redrive of dlq"},
		{"cancel?q=dlq", url.Values{"task": {consoleTask}}, http.StatusConflict, `"console" is not the running redrive of dlq`},
		{"cancel?q=dlq", url.Values{}, http.StatusBadRequest, "no redrive handle given"},
		{"cancel?q=src", url.Values{"task": {handle}}, http.StatusConflict, "is not the running redrive of src"},
		{"cancel?q=nosuch", url.Values{"task": {handle}}, http.StatusNotFound, `no queue named "nosuch"`},
		{"redrive?q=nosuch", url.Values{}, http.StatusNotFound, `no queue named "nosuch"`},
		{"redrive?q=dlq", url.Values{"dest": {"nosuch"}}, http.StatusBadRequest, `no queue named "nosuch"`},
		{"redrive?q=dlq", url.Values{"rate": {"501"}}, http.StatusBadRequest, "invalid message move task: rate 501 messages a second, want 1..500"},
		{"redrive?q=dest", url.Values{}, http.StatusBadRequest, "source queue must be configured as a dead letter queue"},
		{"redrive?q=dlq", url.Values{}, http.StatusConflict, "already a task running"},
	} {
		w := c.post(tc.path, tc.form, true)
		require.Equal(t, tc.code, w.Code, "%s %v: %s", tc.path, tc.form, w.Body.String())
		require.Contains(t, w.Body.String(), html.EscapeString(tc.says), tc.path)
		require.Equal(t, before, mtList(t, s), "%s %v: the redrives are as they were", tc.path, tc.form)
		require.Equal(t, stats, [2]fifoq.Stats{dest.Stats(), src.Stats()}, tc.path)
		require.Equal(t, handle, mtRunning(s))
	}
	_, err := s.Catalog().CancelMoveTask(t.Context(), handle)
	require.NoError(t, err)
}

// On a durable server, a redrive started in the console is stored: after the server is closed and opened
// again on its store, it is listed with its handle, still running, and the new console cancels it.
func TestConsoleRedriveSurvivesRestart(t *testing.T) {
	t.Parallel()
	disk := storagetest.NewDisk()
	open := func() (*sqsapi.Server, *catalog.Catalog, *fifoq.Store) {
		eng, err := disk.Open()
		require.NoError(t, err)
		st, err := fifoq.OpenStore(eng, "memory")
		require.NoError(t, err)
		cat, err := catalog.Open(st, catalog.WithClock(fifoq.NewManualClock(wtStart)), catalog.WithDefaultNamespace(mtHome))
		require.NoError(t, err)
		return sqsapi.NewServer(sqsapi.WithCatalog(cat)), cat, st
	}
	s, cat, st := open()
	mtQueues(t, s)
	c := &wtClient{t: t, h: NewCatalog(cat)}
	w := c.post("redrive?q=dlq", url.Values{"dest": {"dest"}, "rate": {"1"}}, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	before := mtList(t, s)
	require.Len(t, before, 1)
	apiHandle := before[0]["TaskHandle"].(string)
	handle := mtTaskID(t, apiHandle)
	require.NoError(t, c.h.(*Handler).Close(), "the console leaves the catalogue's redrives to it")
	require.Equal(t, handle, mtRunning(s))
	require.NoError(t, s.Close())
	require.NoError(t, cat.Close())
	require.NoError(t, st.Close())

	s, cat, st = open()
	defer st.Close()
	defer cat.Close()
	defer s.Close()
	after := mtList(t, s)
	require.Len(t, after, 1)
	require.Equal(t, "RUNNING", after[0]["Status"])
	require.Equal(t, apiHandle, after[0]["TaskHandle"], "resumed, under its handle")
	c = &wtClient{t: t, h: NewCatalog(cat)}
	require.Equal(t, handle, mtShownHandle(t, c), "under its id")
	w = c.post("cancel?q=dlq", url.Values{"task": {handle}}, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	require.Equal(t, "CANCELLED", mtList(t, s)[0]["Status"], "a durable server's cancel returns once the end is stored")
}

// mtOwner is a program's owner of the redrives of its queues, for WithMoveTasks: a redrive's handle is
// "task-" and the name of its dead-letter queue; its cancel waits until the redrive has ended.
type mtOwner struct {
	queues map[string]*fifoq.Queue

	mu      sync.Mutex
	started map[string]*fifoq.MoveTask // by handle
}

func (o *mtOwner) StartMoveTask(ctx context.Context, source, destination string, rate int) (string, error) {
	var dest *fifoq.Queue
	if destination != "" {
		dest = o.queues[destination]
	}
	t, err := o.queues[source].StartMoveTask(ctx, dest, rate)
	if err != nil {
		return "", err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.started["task-"+source] = t
	return "task-" + source, nil
}

func (o *mtOwner) CancelMoveTask(ctx context.Context, handle string) error {
	o.mu.Lock()
	t := o.started[handle]
	o.mu.Unlock()
	if t == nil {
		return fifoq.ErrMoveTaskNotRunning
	}
	if err := t.Cancel(); err != nil {
		return err
	}
	return t.Wait(ctx)
}

func (o *mtOwner) RunningMoveTask(source string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if t := o.started["task-"+source]; t != nil && t.Status().State == fifoq.MoveTaskRunning {
		return "task-" + source
	}
	return ""
}

// A console made with New and WithMoveTasks starts and cancels redrives through their owner: the redrive it
// starts is the owner's, its page names the running redrive by the owner's handle, it cancels one the owner
// started, and Close leaves the owner's redrives running. The manual clock never moves, so a redrive at 1 a
// second runs until it is cancelled.
func TestConsoleRedrivesOfWithMoveTasks(t *testing.T) {
	t.Parallel()
	qs, _ := wtSetup(t)
	wtSend(t, qs.orders, 3)
	for range 2 {
		_, err := qs.orders.Receive(t.Context(), fifoq.ReceiveOptions{MaxMessages: 10, NoVisibilityTimeout: true})
		require.NoError(t, err)
	}
	require.Equal(t, 3, qs.dlq.Stats().Visible)
	owner := &mtOwner{queues: map[string]*fifoq.Queue{"orders": qs.orders, "orders-dlq": qs.dlq, "jobs.fifo": qs.fif},
		started: make(map[string]*fifoq.MoveTask)}
	h := New(Queues(qs.orders, qs.dlq, qs.fif), WithMoveTasks(owner))
	c := &wtClient{t: t, h: h}

	// Started in the console: the owner's.
	w := c.post("redrive?q=orders-dlq", url.Values{"dest": {"orders"}, "rate": {"1"}}, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	require.Equal(t, "task-orders-dlq", owner.RunningMoveTask("orders-dlq"), "the owner started it")
	require.Equal(t, "task-orders-dlq", shownHandle(t, c, "orders-dlq"), "the page names it by the owner's handle")
	w = c.post("redrive?q=orders-dlq", url.Values{"rate": {"1"}}, true)
	require.Equal(t, http.StatusConflict, w.Code, "one running task a queue: %s", w.Body.String())

	// Close leaves it to its owner.
	require.NoError(t, h.Close())
	require.Equal(t, "task-orders-dlq", owner.RunningMoveTask("orders-dlq"), "still running after the console's Close")

	// A handle that is not the running redrive's is refused; the right one cancels it, through the owner.
	w = c.post("cancel?q=orders-dlq", url.Values{"task": {consoleTask}}, true)
	require.Equal(t, http.StatusConflict, w.Code, w.Body.String())
	require.Equal(t, "task-orders-dlq", owner.RunningMoveTask("orders-dlq"), "refused: still running")
	w = c.post("cancel?q=orders-dlq", url.Values{"task": {"task-orders-dlq"}}, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	require.Equal(t, fifoq.MoveTaskCancelled, qs.dlq.MoveTasks()[0].State, "the owner's cancel returns once it has ended")
	require.Empty(t, shownHandle(t, c, "orders-dlq"), "nothing left to cancel")

	// Started by the owner: the console offers to cancel it, and does.
	handle, err := owner.StartMoveTask(t.Context(), "orders-dlq", "", 1)
	require.NoError(t, err)
	require.Equal(t, handle, shownHandle(t, c, "orders-dlq"))
	w = c.post("cancel?q=orders-dlq", url.Values{"task": {handle}}, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	ts := qs.dlq.MoveTasks()
	require.Len(t, ts, 2)
	require.Equal(t, fifoq.MoveTaskCancelled, ts[0].State)
	require.Empty(t, owner.RunningMoveTask("orders-dlq"))
}

package sqsapi

// Internal tests of the review fixes (TestRv*), where the fix shows only inside the server: what it keeps
// (move task handles, deleted names) and how it reads a query form.

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
)

// rvServe serves one JSON-protocol request that must succeed.
func rvServe(t *testing.T, s *Server, action, body string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "http://localhost/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code, "%s %s: %s", action, body, rec.Body)
}

const rvARN = "arn:aws:sqs:us-east-1:000000000000:"

// The server keeps the handles of the last 10 move tasks of a queue, and none of a deleted queue, so
// neither the tasks nor the queues they name stay in memory.
func TestRvMoveTaskHandlesForgotten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer()
		rvServe(t, s, "CreateQueue", `{"QueueName":"rv-dlq"}`)
		rvServe(t, s, "CreateQueue", `{"QueueName":"rv-src","Attributes":{"RedrivePolicy":`+
			strconv.Quote(`{"deadLetterTargetArn":"`+rvARN+`rv-dlq","maxReceiveCount":1}`)+`}}`)
		var ids []string
		for range 12 {
			rvServe(t, s, "StartMessageMoveTask", `{"SourceArn":"`+rvARN+`rv-dlq"}`)
			synctest.Wait() // the task, with nothing to move, has ended
			tasks := s.cat.MoveTasks(s.defaultNS(), "rv-dlq")
			ids = append(ids, tasks[0].ID)
		}
		held := func() int {
			n := 0
			for _, id := range ids {
				if _, ok := s.cat.MoveTask(id); ok {
					n++
				}
			}
			return n
		}
		require.Equal(t, 10, held(), "task handles after 12 tasks")
		require.Len(t, s.cat.MoveTasks(s.defaultNS(), "rv-dlq"), 10)

		rvServe(t, s, "DeleteQueue", `{"QueueUrl":"http://localhost/000000000000/rv-dlq"}`)
		require.Zero(t, held(), "task handles of a deleted queue")
	})
}

// A name deleted less than 60 seconds ago cannot be created again; 60 seconds later it can.
func TestRvDeletedNamesPruned(t *testing.T) {
	t.Parallel()
	clk := fifoq.NewManualClock(time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC))
	s := NewServer(WithClock(clk))
	for i := range 5 {
		name := "rv-q" + strconv.Itoa(i)
		rvServe(t, s, "CreateQueue", `{"QueueName":"`+name+`"}`)
		rvServe(t, s, "DeleteQueue", `{"QueueUrl":"http://localhost/000000000000/`+name+`"}`)
	}
	for i := range 5 {
		require.ErrorIs(t, s.cat.CheckCreate(s.defaultNS(), "rv-q"+strconv.Itoa(i)), catalog.ErrQueueDeletedRecently)
	}
	clk.Advance(60 * time.Second)
	rvServe(t, s, "CreateQueue", `{"QueueName":"rv-other"}`)
	for i := range 5 {
		require.NoError(t, s.cat.CheckCreate(s.defaultNS(), "rv-q"+strconv.Itoa(i)), "names deleted 60 s ago")
	}
}

// rvForm is a query-protocol SendMessageBatch with n entries (an Id each, and a body for the first 10), the
// first with attrs attributes.
func rvForm(n, attrs int) url.Values {
	v := url.Values{"Action": {"SendMessageBatch"}, "QueueUrl": {"http://localhost/000000000000/q"}}
	for i := 1; i <= n; i++ {
		p := "SendMessageBatchRequestEntry." + strconv.Itoa(i) + "."
		v.Set(p+"Id", "e"+strconv.Itoa(i))
		if i <= fifoq.MaxBatchEntries {
			v.Set(p+"MessageBody", "m")
		}
	}
	for i := 1; i <= attrs; i++ {
		p := "SendMessageBatchRequestEntry.1.MessageAttribute." + strconv.Itoa(i) + "."
		v.Set(p+"Name", "a"+strconv.Itoa(i))
		v.Set(p+"Value.DataType", "String")
		v.Set(p+"Value.StringValue", "v")
	}
	return v
}

// A query form is read in one pass over its keys, however many entries and attributes it has; only as many
// as the checks need are decoded, and the numbers given are kept for their error texts.
func TestRvQueryFormOnePass(t *testing.T) {
	t.Parallel()
	values := rvForm(9990, 5000) // more keys than net/url parses: this reads the form it would give
	f := newForm(values)
	var in sendMessageBatchInput
	require.NoError(t, in.fromQuery(&f))
	require.LessOrEqual(t, f.keyScans, len(values), "keys visited, for %d keys", len(values))
	require.Len(t, in.Entries, fifoq.MaxBatchEntries+1, "entries decoded")
	require.Equal(t, 9990, in.entriesGiven)
	require.Len(t, in.Entries[0].MessageAttributes, fifoq.MaxMessageAttributes+1, "attributes decoded")
	require.Equal(t, 5000, in.Entries[0].attributesGiven)

	err := checkBatch(in.entriesGiven, in.Entries)
	require.NotNil(t, err)
	require.Equal(t, "Maximum number of entries per request are 10. You have sent 9990.", err.message)
	_, _, aerr := in.Entries[0].message(false)
	require.NotNil(t, aerr)
	require.Equal(t, "Number of message attributes [5000] exceeds the allowed maximum [10].", aerr.message)
}

// Numbered keys are indexed at every level: entries, and the attributes of each entry.
func TestRvQueryFormIndices(t *testing.T) {
	t.Parallel()
	f := newForm(url.Values{
		"A.2": {"x"}, "A.1": {"y"}, "A.10.B": {"z"}, "A.1.C.3.D": {"w"}, "A.01": {"no"}, "A.0": {"no"},
		"A.x": {"no"}, "AB.5": {"no"}, "A.2000000": {"no"}, ".1": {"no"},
	})
	ns, n := f.indices("A", 0)
	require.Equal(t, []int{1, 2, 10}, ns)
	require.Equal(t, 3, n)
	ns, n = f.indices("A", 2)
	require.Equal(t, []int{1, 2}, ns)
	require.Equal(t, 3, n)
	ns, _ = f.indices("A.1.C", 0)
	require.Equal(t, []int{3}, ns)
	ns, _ = f.indices("AB", 0)
	require.Equal(t, []int{5}, ns)
	require.Equal(t, []string{"y", "x"}, f.list("A"))
}

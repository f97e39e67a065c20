package sqsapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/internal/rule"
	"github.com/fifoq/fifoq/sqsapi"
)

// The SQS rules live in fifoq, which gives each rejection its code and the message SQS sends; sqsapi passes
// them on. These tests send the same requests to a server and, as fifoq values, to twin queues of the same
// settings, and require the same answers: the same code and message for each rejection (with the HTTP
// status of the code), success for the others. They would fail if sqsapi checked a rule of its own with
// other words, or in another order.

// weAnswer is an error answer of the JSON protocol, or the result of a batch entry.
type weAnswer struct {
	status  int
	code    string
	message string
}

// weCall sends a JSON-protocol request in process and returns its error answer; a 200 gives status 200 and
// out decoded.
func weCall(t *testing.T, srv *sqsapi.Server, action string, in, out any) weAnswer {
	t.Helper()
	body, err := json.Marshal(in)
	require.NoError(t, err)
	rec := qpFuzzDo(srv, "AmazonSQS."+action, body, qpFuzzJSONType)
	if rec.Code == http.StatusOK {
		if out != nil {
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), out), "%s: %s", action, rec.Body)
		}
		return weAnswer{status: http.StatusOK}
	}
	var e struct{ Message string }
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e), "%s: %s", action, rec.Body)
	code, _, _ := strings.Cut(rec.Header().Get("X-Amzn-Query-Error"), ";")
	return weAnswer{rec.Code, code, e.Message}
}

// weWant is the answer to a request that fifoq answered with err.
func weWant(err error) weAnswer {
	if err == nil {
		return weAnswer{status: http.StatusOK}
	}
	code := fifoq.ErrorCode(err)
	status := http.StatusBadRequest
	switch code {
	case "ReceiptHandleIsInvalid":
		status = http.StatusNotFound
	case "AWS.SimpleQueueService.PurgeQueueInProgress":
		status = http.StatusForbidden
	}
	return weAnswer{status, code, fifoq.ErrorMessage(err)}
}

// weMessage is a message as the wire and as fifoq take it.
type weMessage struct {
	wire map[string]any
	m    fifoq.Message
}

// weMessages are messages with every combination of some good and bad values of each field: body, group
// and deduplication ids, delay, attributes. None is given empty: fifoq reads an empty value as none
// (TestWireExplicitValues checks those).
func weMessages() []weMessage {
	type field struct {
		wire any // nil: not given
		set  func(*fifoq.Message)
	}
	none := field{nil, func(*fifoq.Message) {}}
	long := strings.Repeat("x", 129)
	bodies := []string{"", "ok", "a\x00b", "a\uFFFEb"}
	groups := []field{none, {"g", func(m *fifoq.Message) { m.GroupID = "g" }}, {"a b", func(m *fifoq.Message) { m.GroupID = "a b" }},
		{long, func(m *fifoq.Message) { m.GroupID = long }}}
	dedups := []field{none, {"d", func(m *fifoq.Message) { m.DeduplicationID = "d" }},
		{long, func(m *fifoq.Message) { m.DeduplicationID = long }}}
	delays := []field{none, {0, func(m *fifoq.Message) { m.NoDelay = true }},
		{5, func(m *fifoq.Message) { m.Delay = 5 * time.Second }}, {901, func(m *fifoq.Message) { m.Delay = 901 * time.Second }},
		{-1, func(m *fifoq.Message) { m.Delay = -time.Second }}}
	attr := func(name, dataType, value string) field {
		return field{map[string]any{name: map[string]any{"DataType": dataType, "StringValue": value}}, func(m *fifoq.Message) {
			m.Attributes = map[string]fifoq.Attribute{name: {DataType: dataType, StringValue: value}}
		}}
	}
	eleven := field{map[string]any{}, func(m *fifoq.Message) { m.Attributes = map[string]fifoq.Attribute{} }}
	for i := range 11 {
		name := fmt.Sprintf("a%d", i)
		eleven.wire.(map[string]any)[name] = map[string]any{"DataType": "String", "StringValue": "v"}
		set := eleven.set
		eleven.set = func(m *fifoq.Message) {
			set(m)
			m.Attributes[name] = fifoq.Attribute{DataType: "String", StringValue: "v"}
		}
	}
	attrs := []field{none, attr("k", "String", "v"), attr("k", "String", ""), attr("k", "", "v"), attr("k", "Text", "v"),
		attr("AWS.k", "String", "v"), attr("k", "Number", "1e200"), eleven}

	var out []weMessage
	for _, body := range bodies {
		for _, g := range groups {
			for _, d := range dedups {
				for _, delay := range delays {
					for _, a := range attrs {
						w := weMessage{wire: map[string]any{"MessageBody": body}, m: fifoq.Message{Body: body}}
						for name, f := range map[string]field{"MessageGroupId": g, "MessageDeduplicationId": d,
							"DelaySeconds": delay, "MessageAttributes": a} {
							if f.wire != nil {
								w.wire[name] = f.wire
							}
							f.set(&w.m)
						}
						out = append(out, w)
					}
				}
			}
		}
	}
	return out
}

// Every message of weMessages, sent alone and as the second entry of a batch, to a standard and a FIFO
// queue (of explicit deduplication ids, so that a missing one is an error) with a maximum message size of
// 1 KiB: the server answers as fifoq does.
func TestWireErrorsAreFifoqs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := sqsapi.NewServer()
	for _, name := range []string{"we", "we.fifo"} {
		attrs := map[string]string{"MaximumMessageSize": "1024"}
		if strings.HasSuffix(name, ".fifo") {
			attrs["FifoQueue"] = "true"
		}
		_, err := srv.DeclareQueue(name, attrs)
		require.NoError(t, err)
		twin, err := fifoq.New(name, fifoq.WithMaxMessageSize(1024))
		require.NoError(t, err)
		url := qpFuzzURL + name
		good := map[string]any{"Id": "good", "MessageBody": "good"}
		goodMsg := fifoq.Message{Body: "good"}
		if twin.FIFO() {
			good["MessageGroupId"], good["MessageDeduplicationId"] = "g", "good"
			goodMsg.GroupID, goodMsg.DeduplicationID = "g", "good"
		}
		n := 0
		for _, w := range weMessages() {
			in := map[string]any{"QueueUrl": url}
			for k, v := range w.wire {
				in[k] = v
			}
			_, err := twin.Send(ctx, w.m)
			require.Equal(t, weWant(err), weCall(t, srv, "SendMessage", in, nil), "%s: SendMessage %v (fifoq: %v)", name, w.wire, err)

			entry := map[string]any{"Id": "e"}
			for k, v := range w.wire {
				entry[k] = v
			}
			var out struct {
				Failed []struct {
					Id, Code, Message string
					SenderFault       bool
				}
			}
			got := weCall(t, srv, "SendMessageBatch", map[string]any{"QueueUrl": url, "Entries": []any{good, entry}}, &out)
			_, err = twin.SendBatch(ctx, []fifoq.Message{goodMsg, w.m})
			var be *fifoq.BatchError
			if errors.As(err, &be) {
				require.Len(t, be.Entries, 1)
				require.Equal(t, weAnswer{status: http.StatusOK}, got, "%s: SendMessageBatch %v (fifoq: %v)", name, w.wire, err)
				require.Len(t, out.Failed, 1, "%s: SendMessageBatch %v (fifoq: %v)", name, w.wire, err)
				f := out.Failed[0]
				require.Equal(t, weAnswer{400, fifoq.ErrorCode(be.Entries[0].Err), fifoq.ErrorMessage(be.Entries[0].Err)},
					weAnswer{400, f.Code, f.Message}, "%s: SendMessageBatch entry %v", name, w.wire)
				require.True(t, f.SenderFault)
				n++
				continue
			}
			require.Equal(t, weWant(err), got, "%s: SendMessageBatch %v (fifoq: %v)", name, w.wire, err)
			if got.status == http.StatusOK {
				require.Empty(t, out.Failed, "%s: SendMessageBatch %v", name, w.wire)
			}
		}
		require.Positive(t, n, "entries that failed alone")
	}
}

// Receives and visibility changes with good and bad parameters: the server answers as fifoq does.
func TestWireReceiveErrorsAreFifoqs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := sqsapi.NewServer()
	for _, name := range []string{"wr", "wr.fifo"} {
		attrs := map[string]string{}
		if strings.HasSuffix(name, ".fifo") {
			attrs["FifoQueue"] = "true"
		}
		_, err := srv.DeclareQueue(name, attrs)
		require.NoError(t, err)
		twin, err := fifoq.New(name)
		require.NoError(t, err)
		url := qpFuzzURL + name
		secs := func(n int) time.Duration { return time.Duration(n) * time.Second }
		for _, max := range []int{-1, 1, 10, 11, 1000} {
			for _, wait := range []int{-1, 0, 21} { // no wait: the queues are empty
				for _, vt := range []int{-5, 0, 30, 43200, 43201} {
					for _, attempt := range []string{"", "a-1", "a b"} {
						in := map[string]any{"QueueUrl": url, "MaxNumberOfMessages": max, "WaitTimeSeconds": wait, "VisibilityTimeout": vt}
						o := fifoq.ReceiveOptions{MaxMessages: max, WaitTime: secs(wait), VisibilityTimeout: secs(vt),
							NoWaitTime: wait == 0, NoVisibilityTimeout: vt == 0}
						if attempt != "" {
							in["ReceiveRequestAttemptId"], o.AttemptID = attempt, attempt
						}
						_, err := twin.Receive(ctx, o)
						require.Equal(t, weWant(err), weCall(t, srv, "ReceiveMessage", in, nil), "%s: ReceiveMessage %v", name, in)
					}
				}
			}
		}
		for _, vt := range []int{-5, 0, 30, 43200, 43201} {
			for _, handle := range []string{"garbage", strings.Repeat("A", 32)} {
				in := map[string]any{"QueueUrl": url, "ReceiptHandle": handle, "VisibilityTimeout": vt}
				err := twin.ChangeVisibility(ctx, handle, time.Duration(vt)*time.Second)
				require.Equal(t, weWant(err), weCall(t, srv, "ChangeMessageVisibility", in, nil), "%s: %v", name, in)
				err = twin.Delete(ctx, handle)
				require.Equal(t, weWant(err), weCall(t, srv, "DeleteMessage", in, nil), "%s: %v", name, in)
			}
		}
	}
}

// A value given empty or 0, which fifoq reads as none, is refused with fifoq's rule and message for it.
func TestWireExplicitValues(t *testing.T) {
	t.Parallel()
	srv := sqsapi.NewServer()
	_, err := srv.DeclareQueue("wx.fifo", map[string]string{"FifoQueue": "true"})
	require.NoError(t, err)
	url := qpFuzzURL + "wx.fifo"
	for _, tc := range []struct {
		action string
		in     map[string]any
		want   error
	}{
		{"SendMessage", map[string]any{"MessageBody": "b", "MessageGroupId": "", "MessageDeduplicationId": "d"},
			rule.ID("", fifoq.ErrInvalidGroupID)},
		{"SendMessage", map[string]any{"MessageBody": "b", "MessageGroupId": "g", "MessageDeduplicationId": ""},
			rule.ID("", fifoq.ErrInvalidDeduplicationID)},
		{"ReceiveMessage", map[string]any{"ReceiveRequestAttemptId": ""}, rule.ID("", fifoq.ErrInvalidAttemptID)},
		{"ReceiveMessage", map[string]any{"MaxNumberOfMessages": 0}, rule.CheckMaxMessages(0)},
		{"SendMessageBatch", map[string]any{"Entries": []any{}}, func() error {
			q, _ := fifoq.New("x")
			_, err := q.SendBatch(context.Background(), nil)
			return err
		}()},
		{"DeleteMessageBatch", map[string]any{"Entries": make([]any, 11)}, fifoq.CheckBatchLen(11)},
	} {
		tc.in["QueueUrl"] = url
		require.Equal(t, weWant(tc.want), weCall(t, srv, tc.action, tc.in, nil), "%s %v", tc.action, tc.in)
	}
	var task struct{}
	require.Equal(t, weWant(rule.CheckMoveRate(0)), weCall(t, srv, "StartMessageMoveTask",
		map[string]any{"SourceArn": qpArn("wx.fifo"), "MaxNumberOfMessagesPerSecond": 0}, &task))
}

// sqsapi holds none of fifoq's limits or texts: a rule checked here again, in its own words, is what
// this redesign removed (one home per rule).
func TestWireNoRulesOfFifoq(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, s := range []string{
			"exceeds the allowed maximum", "Message (user) attribute", "non-empty message attribute type",
			"supported type prefixes", "can only include alphanumeric and punctuation", "Message must be shorter",
			"Batch requests cannot be longer", "Maximum number of entries", "There should be at least one",
			"is not a valid receipt handle", "The receipt handle has expired", "Total VisibilityTimeout",
			"VisibilityTimeout must be", "DelaySeconds must be", "Invalid characters found", "PurgeQueue operation",
			"not valid for this queue type", "receive call is not retryable", "Unable to verify",
			"Only the queue owner", "Actions were found", "Already exists", "can't find label",
			"Tag keys must be",
			"Must be >= 0 and <= ", "Must be between 1 and 500", "Dead Letter Queue", "already a task running",
			"hyphens, or underscores. 1 to 80 in length\")",
			"maxBatchEntries", "maxAttributes", "maxBatchBytes", "maxDelaySeconds", "maxVisibilitySeconds",
		} {
			require.False(t, strings.Contains(string(b), s), "%s holds a rule of fifoq's: %q", f, s)
		}
	}
}

package sqsapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/sqsapi"
	"github.com/stretchr/testify/require"
)

// Fuzz targets for the wire API: whatever request comes in, the server never panics, answers with a status
// below 500 and a body that parses in the protocol it answers in, and a request that gets an error changes
// nothing (queue names, attributes, tags, messages and move tasks are compared before and after).
//
// Each run gets a fresh server with a standard and a FIFO queue, each with a dead-letter queue, holding
// visible, in-flight, delayed and dead-lettered messages, a tag, a permission and a running move task, and an
// empty queue to long-poll. The
// server runs on a manual clock, and each run inside a testing/synctest bubble, which tells when the
// server's goroutines are all blocked: then the clock is moved on past a long poll that a fuzzed request
// started, and after the request past every rate-limited move task, until no goroutine is left (the bubble
// fails the run if one never ends). Seeds name the setup's receipt handles and task handle by placeholders
// ({{rh}}, {{rh2}}, {{frh}}, {{task}}), which each run replaces with the real ones.

// qpFuzzEnv is the state of one fuzz run.
type qpFuzzEnv struct {
	srv     *sqsapi.Server
	clock   *fifoq.ManualClock
	handles map[string]string // placeholder → receipt handle or task handle
}

const (
	qpFuzzJSONType = "application/x-amz-json-1.0"
	qpFuzzURL      = "http://localhost/000000000000/"
)

// qpFuzzDo serves one request in process.
func qpFuzzDo(srv *sqsapi.Server, target string, body []byte, contentType string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "http://localhost/", bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	if target != "" {
		req.Header.Set("X-Amz-Target", target)
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	return rec
}

// qpFuzzJSON calls an action that must succeed and decodes its JSON result into out (when not nil).
func qpFuzzJSON(t *testing.T, srv *sqsapi.Server, action string, in, out any) {
	t.Helper()
	body, err := json.Marshal(in)
	require.NoError(t, err)
	rec := qpFuzzDo(srv, "AmazonSQS."+action, body, qpFuzzJSONType)
	require.Equal(t, http.StatusOK, rec.Code, "setup %s %s: %s", action, body, rec.Body)
	if out != nil {
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), out), "setup %s: %s", action, rec.Body)
	}
}

// qpFuzzSetup builds the server of one run; it runs inside the run's bubble.
func qpFuzzSetup(t *testing.T) *qpFuzzEnv {
	t.Helper()
	ctx := context.Background()
	clock := fifoq.NewManualClock(qpStart)
	srv := sqsapi.NewServer(sqsapi.WithClock(clock))
	create := func(name string, attrs map[string]string) catalog.Queue {
		_, err := srv.DeclareQueue(name, attrs)
		require.NoError(t, err, "setup: CreateQueue %s", name)
		q, ok := srv.Queue(name)
		require.True(t, ok, "setup: CreateQueue %s", name)
		return q
	}
	redrive := func(dlq string) string {
		return `{"deadLetterTargetArn":"` + qpArn(dlq) + `","maxReceiveCount":1}`
	}
	create("fz-idle", nil)
	create("fz-dlq", nil)
	create("fz-dlq.fifo", map[string]string{"FifoQueue": "true"})
	std := create("fz", map[string]string{"VisibilityTimeout": "43200", "RedrivePolicy": redrive("fz-dlq")})
	fifo := create("fz.fifo", map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true",
		"VisibilityTimeout": "43200", "RedrivePolicy": redrive("fz-dlq.fifo")})

	send := func(q catalog.Queue, m fifoq.Message) {
		_, err := q.Send(ctx, m)
		require.NoError(t, err, "setup: send %q", m.Body)
	}
	receive := func(q catalog.Queue, o fifoq.ReceiveOptions) []fifoq.Delivery {
		ds, err := q.Receive(ctx, o)
		require.NoError(t, err, "setup: receive")
		return ds
	}
	deadLetter := func(q catalog.Queue, n int) {
		require.Len(t, receive(q, fifoq.ReceiveOptions{MaxMessages: 10, NoVisibilityTimeout: true}), n)
		require.Empty(t, receive(q, fifoq.ReceiveOptions{MaxMessages: 10}), "setup: the messages move to the DLQ")
	}

	// Standard: two messages dead-lettered, then one visible, two in flight and one delayed.
	send(std, fifoq.Message{Body: "dead-1"})
	send(std, fifoq.Message{Body: "dead-2", Attributes: map[string]fifoq.Attribute{"k": {DataType: "String", StringValue: "v"}}})
	deadLetter(std, 2)
	send(std, fifoq.Message{Body: "inflight-1"})
	send(std, fifoq.Message{Body: "inflight-2", Attributes: map[string]fifoq.Attribute{
		"bin": {DataType: "Binary", BinaryValue: []byte{0, 1, 2}}, "num": {DataType: "Number", StringValue: "7"}}})
	inflight := receive(std, fifoq.ReceiveOptions{MaxMessages: 2})
	require.Len(t, inflight, 2)
	send(std, fifoq.Message{Body: "visible"})
	send(std, fifoq.Message{Body: "delayed", Delay: 15 * time.Minute})

	// FIFO: two messages dead-lettered, then group g2 with its head in flight and group g3 visible.
	send(fifo, fifoq.Message{Body: "fdead-1", GroupID: "g1"})
	send(fifo, fifoq.Message{Body: "fdead-2", GroupID: "g1"})
	deadLetter(fifo, 2)
	send(fifo, fifoq.Message{Body: "g2-1", GroupID: "g2"})
	send(fifo, fifoq.Message{Body: "g2-2", GroupID: "g2"})
	send(fifo, fifoq.Message{Body: "g3-1", GroupID: "g3", DeduplicationID: "d3"})
	finflight := receive(fifo, fifoq.ReceiveOptions{MaxMessages: 1})
	require.Len(t, finflight, 1)

	qpFuzzJSON(t, srv, "TagQueue", map[string]any{"QueueUrl": qpFuzzURL + "fz", "Tags": map[string]string{"team": "core"}}, nil)
	qpFuzzJSON(t, srv, "AddPermission", map[string]any{"QueueUrl": qpFuzzURL + "fz", "Label": "fzl",
		"AWSAccountIds": []string{"111122223333"}, "Actions": []string{"SendMessage"}}, nil)
	var task struct{ TaskHandle string }
	qpFuzzJSON(t, srv, "StartMessageMoveTask", map[string]any{"SourceArn": qpArn("fz-dlq.fifo"),
		"MaxNumberOfMessagesPerSecond": 1}, &task)
	require.NotEmpty(t, task.TaskHandle)
	synctest.Wait() // the task waits for its next move: nothing changes until the clock moves

	return &qpFuzzEnv{srv: srv, clock: clock, handles: map[string]string{
		"{{rh}}": inflight[0].ReceiptHandle, "{{rh2}}": inflight[1].ReceiptHandle,
		"{{frh}}": finflight[0].ReceiptHandle, "{{task}}": task.TaskHandle,
	}}
}

// qpFuzzQueueState is what a client can see of one queue, plus its stored messages.
type qpFuzzQueueState struct {
	Attributes map[string]string
	Tags       map[string]string
	Messages   []fifoq.Snapshot
	MoveTasks  []fifoq.MoveTaskStatus
}

// qpFuzzState snapshots every queue of the server.
func qpFuzzState(t *testing.T, srv *sqsapi.Server) map[string]qpFuzzQueueState {
	t.Helper()
	var list struct{ QueueUrls []string }
	qpFuzzJSON(t, srv, "ListQueues", map[string]any{}, &list)
	state := make(map[string]qpFuzzQueueState, len(list.QueueUrls))
	for _, u := range list.QueueUrls {
		name := u[strings.LastIndex(u, "/")+1:]
		var attrs struct{ Attributes map[string]string }
		qpFuzzJSON(t, srv, "GetQueueAttributes", map[string]any{"QueueUrl": u, "AttributeNames": []string{"All"}}, &attrs)
		var tags struct{ Tags map[string]string }
		qpFuzzJSON(t, srv, "ListQueueTags", map[string]any{"QueueUrl": u}, &tags)
		q, ok := srv.Queue(name)
		require.True(t, ok, "ListQueues lists %s, which Server.Queue does not know", u)
		var tasks []fifoq.MoveTaskStatus
		for _, task := range srv.Catalog().MoveTasks(q.Namespace(), q.Name()) {
			tasks = append(tasks, task.Status())
		}
		state[name] = qpFuzzQueueState{Attributes: attrs.Attributes, Tags: tags.Tags,
			Messages: slices.Collect(q.Messages()), MoveTasks: tasks}
	}
	return state
}

// qpFuzzCheck checks one response: its status, that its body parses in its protocol, and, for an error,
// that the state did not change.
func qpFuzzCheck(t *testing.T, env *qpFuzzEnv, rec *httptest.ResponseRecorder, before map[string]qpFuzzQueueState,
	wantJSON bool, request string) {
	t.Helper()
	body := rec.Body.Bytes()
	require.Less(t, rec.Code, 500, "a 5xx answer to %s: %s", request, body)
	mediaType, _, _ := mime.ParseMediaType(rec.Header().Get("Content-Type"))
	isErr := rec.Code != http.StatusOK
	switch {
	case strings.Contains(mediaType, "json"):
		var doc map[string]any
		require.NoError(t, json.Unmarshal(body, &doc), "a JSON answer to %s does not parse: %q", request, body)
		if isErr {
			typ, _ := doc["__type"].(string)
			require.NotEmpty(t, typ, "a JSON error answer to %s has no __type: %s", request, body)
		}
	case strings.Contains(mediaType, "xml"):
		require.False(t, wantJSON, "an XML answer to the JSON request %s: %s", request, body)
		root := qpFuzzXMLRoot(t, body, request)
		if isErr {
			var er qpErrorResponse
			require.NoError(t, xml.Unmarshal(body, &er), "an XML error answer to %s: %s", request, body)
			require.NotEmpty(t, er.Code, "an XML error answer to %s has no Error/Code: %s", request, body)
		} else {
			require.True(t, strings.HasSuffix(root, "Response") && root != "ErrorResponse",
				"a 200 answer to %s has root <%s>: %s", request, root, body)
		}
	default:
		t.Fatalf("the answer to %s has Content-Type %q: %q", request, rec.Header().Get("Content-Type"), body)
	}
	if isErr {
		after := qpFuzzState(t, env.srv)
		require.Equal(t, before, after, "%s was answered %d %s, but changed the state", request, rec.Code, body)
	}
}

// qpFuzzXMLRoot requires body to be one well-formed XML document and returns its root element's name.
func qpFuzzXMLRoot(t *testing.T, body []byte, request string) string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(body))
	root, depth := "", 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "the XML answer to %s does not parse: %q", request, body)
		switch tok := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				require.Empty(t, root, "the XML answer to %s has two root elements: %q", request, body)
				root = tok.Name.Local
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			if depth == 0 {
				require.Empty(t, strings.TrimSpace(string(tok)), "text outside the root in the answer to %s: %q", request, body)
			}
		}
	}
	require.NotEmpty(t, root, "the XML answer to %s is empty: %q", request, body)
	return root
}

// qpFuzzJSONSeeds are valid JSON-protocol requests for every action: X-Amz-Target and body.
var qpFuzzJSONSeeds = [][2]string{
	{"AmazonSQS.CreateQueue", `{"QueueName":"fz-new","Attributes":{"VisibilityTimeout":"10","DelaySeconds":"1"},"tags":{"k":"v"}}`},
	{"AmazonSQS.CreateQueue", `{"QueueName":"fz-new.fifo","Attributes":{"FifoQueue":"true","ContentBasedDeduplication":"true","RedrivePolicy":"{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:fz-dlq.fifo\",\"maxReceiveCount\":3}"}}`},
	{"AmazonSQS.CreateQueue", `{"QueueName":"fz","Attributes":{"VisibilityTimeout":"43200"}}`},
	{"AmazonSQS.GetQueueUrl", `{"QueueName":"fz.fifo","QueueOwnerAWSAccountId":"000000000000"}`},
	{"AmazonSQS.ListQueues", `{"QueueNamePrefix":"fz","MaxResults":2,"NextToken":""}`},
	{"AmazonSQS.DeleteQueue", `{"QueueUrl":"` + qpFuzzURL + `fz"}`},
	{"AmazonSQS.GetQueueAttributes", `{"QueueUrl":"` + qpFuzzURL + `fz.fifo","AttributeNames":["All"]}`},
	{"AmazonSQS.SetQueueAttributes", `{"QueueUrl":"` + qpFuzzURL + `fz","Attributes":{"VisibilityTimeout":"60","DelaySeconds":"1","RedrivePolicy":""}}`},
	{"AmazonSQS.SendMessage", `{"QueueUrl":"` + qpFuzzURL + `fz","MessageBody":"hi","DelaySeconds":1,"MessageAttributes":{"a":{"DataType":"String","StringValue":"v"},"b":{"DataType":"Binary","BinaryValue":"AAE="},"n":{"DataType":"Number.int","StringValue":"12"}},"MessageSystemAttributes":{"AWSTraceHeader":{"DataType":"String","StringValue":"` + qpTraceHeader + `"}}}`},
	{"AmazonSQS.SendMessage", `{"QueueUrl":"` + qpFuzzURL + `fz.fifo","MessageBody":"hi","MessageGroupId":"g2","MessageDeduplicationId":"d1"}`},
	{"AmazonSQS.SendMessageBatch", `{"QueueUrl":"` + qpFuzzURL + `fz","Entries":[{"Id":"a","MessageBody":"x"},{"Id":"b","MessageBody":"y","DelaySeconds":2,"MessageAttributes":{"a":{"DataType":"String","StringValue":"v"}}}]}`},
	{"AmazonSQS.SendMessageBatch", `{"QueueUrl":"` + qpFuzzURL + `fz.fifo","Entries":[{"Id":"a","MessageBody":"x","MessageGroupId":"g4"},{"Id":"b","MessageBody":"y","MessageGroupId":"g4","MessageDeduplicationId":"dd"}]}`},
	{"AmazonSQS.ReceiveMessage", `{"QueueUrl":"` + qpFuzzURL + `fz","MaxNumberOfMessages":10,"VisibilityTimeout":5,"WaitTimeSeconds":1,"AttributeNames":["All"],"MessageSystemAttributeNames":["SentTimestamp"],"MessageAttributeNames":["All"]}`},
	{"AmazonSQS.ReceiveMessage", `{"QueueUrl":"` + qpFuzzURL + `fz.fifo","MaxNumberOfMessages":10,"ReceiveRequestAttemptId":"att-1","MessageAttributeNames":["k.*"]}`},
	{"AmazonSQS.ReceiveMessage", `{"QueueUrl":"` + qpFuzzURL + `fz-idle","WaitTimeSeconds":20}`},
	{"AmazonSQS.DeleteMessage", `{"QueueUrl":"` + qpFuzzURL + `fz","ReceiptHandle":"{{rh}}"}`},
	{"AmazonSQS.DeleteMessage", `{"QueueUrl":"` + qpFuzzURL + `fz.fifo","ReceiptHandle":"{{frh}}"}`},
	{"AmazonSQS.DeleteMessageBatch", `{"QueueUrl":"` + qpFuzzURL + `fz","Entries":[{"Id":"a","ReceiptHandle":"{{rh}}"},{"Id":"b","ReceiptHandle":"{{rh2}}"}]}`},
	{"AmazonSQS.ChangeMessageVisibility", `{"QueueUrl":"` + qpFuzzURL + `fz","ReceiptHandle":"{{rh}}","VisibilityTimeout":0}`},
	{"AmazonSQS.ChangeMessageVisibilityBatch", `{"QueueUrl":"` + qpFuzzURL + `fz.fifo","Entries":[{"Id":"a","ReceiptHandle":"{{frh}}","VisibilityTimeout":10}]}`},
	{"AmazonSQS.PurgeQueue", `{"QueueUrl":"` + qpFuzzURL + `fz.fifo"}`},
	{"AmazonSQS.TagQueue", `{"QueueUrl":"` + qpFuzzURL + `fz","Tags":{"k":"v","team":"edge"}}`},
	{"AmazonSQS.UntagQueue", `{"QueueUrl":"` + qpFuzzURL + `fz","TagKeys":["team"]}`},
	{"AmazonSQS.ListQueueTags", `{"QueueUrl":"` + qpFuzzURL + `fz"}`},
	{"AmazonSQS.ListDeadLetterSourceQueues", `{"QueueUrl":"` + qpFuzzURL + `fz-dlq","MaxResults":1}`},
	{"AmazonSQS.StartMessageMoveTask", `{"SourceArn":"arn:aws:sqs:us-east-1:000000000000:fz-dlq","MaxNumberOfMessagesPerSecond":2}`},
	{"AmazonSQS.StartMessageMoveTask", `{"SourceArn":"arn:aws:sqs:us-east-1:000000000000:fz-dlq","DestinationArn":"arn:aws:sqs:us-east-1:000000000000:fz"}`},
	{"AmazonSQS.CancelMessageMoveTask", `{"TaskHandle":"{{task}}"}`},
	{"AmazonSQS.ListMessageMoveTasks", `{"SourceArn":"arn:aws:sqs:us-east-1:000000000000:fz-dlq.fifo","MaxResults":10}`},
	{"AmazonSQS.AddPermission", `{"QueueUrl":"` + qpFuzzURL + `fz","Label":"l2","AWSAccountIds":["111122223333"],"Actions":["ReceiveMessage"]}`},
	{"AmazonSQS.RemovePermission", `{"QueueUrl":"` + qpFuzzURL + `fz","Label":"fzl"}`},
}

// qpFuzzQuerySeeds are valid query-protocol forms for every action.
var qpFuzzQuerySeeds = []string{
	"Action=CreateQueue&Version=2012-11-05&QueueName=fz-new&Attribute.1.Name=VisibilityTimeout&Attribute.1.Value=10&Tag.1.Key=k&Tag.1.Value=v",
	"Action=CreateQueue&Version=2012-11-05&QueueName=fz-new.fifo&Attribute.1.Name=FifoQueue&Attribute.1.Value=true&Attribute.2.Name=DeduplicationScope&Attribute.2.Value=messageGroup",
	"Action=GetQueueUrl&Version=2012-11-05&QueueName=fz",
	"Action=ListQueues&Version=2012-11-05&QueueNamePrefix=fz&MaxResults=2",
	"Action=DeleteQueue&Version=2012-11-05&QueueUrl=" + url.QueryEscape(qpFuzzURL+"fz.fifo"),
	"Action=GetQueueAttributes&Version=2012-11-05&QueueUrl=" + url.QueryEscape(qpFuzzURL+"fz") + "&AttributeName.1=All",
	"Action=SetQueueAttributes&Version=2012-11-05&QueueUrl=" + url.QueryEscape(qpFuzzURL+"fz") + "&Attribute.1.Name=MessageRetentionPeriod&Attribute.1.Value=60&Attribute.2.Name=MaximumMessageSize&Attribute.2.Value=1024",
	"Action=SendMessage&Version=2012-11-05&QueueUrl=" + url.QueryEscape(qpFuzzURL+"fz") + "&MessageBody=hi&DelaySeconds=3&MessageAttribute.1.Name=a&MessageAttribute.1.Value.DataType=String&MessageAttribute.1.Value.StringValue=v&MessageAttribute.2.Name=b&MessageAttribute.2.Value.DataType=Binary&MessageAttribute.2.Value.BinaryValue=AAE%3D&MessageSystemAttribute.1.Name=AWSTraceHeader&MessageSystemAttribute.1.Value.DataType=String&MessageSystemAttribute.1.Value.StringValue=Root%3D1",
	"Action=SendMessage&Version=2012-11-05&QueueUrl=" + url.QueryEscape(qpFuzzURL+"fz.fifo") + "&MessageBody=hi&MessageGroupId=g3&MessageDeduplicationId=d3",
	"Action=SendMessageBatch&Version=2012-11-05&QueueUrl=" + url.QueryEscape(qpFuzzURL+"fz") + "&SendMessageBatchRequestEntry.1.Id=a&SendMessageBatchRequestEntry.1.MessageBody=x&SendMessageBatchRequestEntry.2.Id=b&SendMessageBatchRequestEntry.2.MessageBody=y&SendMessageBatchRequestEntry.2.DelaySeconds=5&SendMessageBatchRequestEntry.2.MessageAttribute.1.Name=k&SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.DataType=Number&SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.StringValue=1",
	"Action=SendMessageBatch&Version=2012-11-05&QueueUrl=" + url.QueryEscape(qpFuzzURL+"fz.fifo") + "&SendMessageBatchRequestEntry.1.Id=a&SendMessageBatchRequestEntry.1.MessageBody=x&SendMessageBatchRequestEntry.1.MessageGroupId=g9",
	"Action=ReceiveMessage&Version=2012-11-05&QueueUrl=" + url.QueryEscape(qpFuzzURL+"fz") + "&MaxNumberOfMessages=10&VisibilityTimeout=0&WaitTimeSeconds=2&AttributeName.1=All&MessageSystemAttributeName.1=SenderId&MessageAttributeName.1=All",
	"Action=ReceiveMessage&Version=2012-11-05&QueueUrl=" + url.QueryEscape(qpFuzzURL+"fz.fifo") + "&MaxNumberOfMessages=3&ReceiveRequestAttemptId=a1&AttributeName.1=MessageGroupId",
	"Action=ReceiveMessage&Version=2012-11-05&QueueUrl=" + url.QueryEscape(qpFuzzURL+"fz-idle") + "&WaitTimeSeconds=20",
	"Action=DeleteMessage&Version=2012-11-05&QueueUrl=" + url.QueryEscape(qpFuzzURL+"fz") + "&ReceiptHandle={{rh}}",
	"Action=DeleteMessageBatch&Version=2012-11-05&QueueUrl=" + url.QueryEscape(qpFuzzURL+"fz") + "&DeleteMessageBatchRequestEntry.1.Id=a&DeleteMessageBatchRequestEntry.1.ReceiptHandle={{rh}}&DeleteMessageBatchRequestEntry.2.Id=b&DeleteMessageBatchRequestEntry.2.ReceiptHandle={{rh2}}",
	"Action=ChangeMessageVisibility&Version=2012-11-05&QueueUrl=" + url.QueryEscape(qpFuzzURL+"fz.fifo") + "&ReceiptHandle={{frh}}&VisibilityTimeout=0",
	"Action=ChangeMessageVisibilityBatch&Version=2012-11-05&QueueUrl=" + url.QueryEscape(qpFuzzURL+"fz") + "&ChangeMessageVisibilityBatchRequestEntry.1.Id=a&ChangeMessageVisibilityBatchRequestEntry.1.ReceiptHandle={{rh}}&ChangeMessageVisibilityBatchRequestEntry.1.VisibilityTimeout=60&ChangeMessageVisibilityBatchRequestEntry.2.Id=b&ChangeMessageVisibilityBatchRequestEntry.2.ReceiptHandle={{rh2}}&ChangeMessageVisibilityBatchRequestEntry.2.VisibilityTimeout=0",
	"Action=PurgeQueue&Version=2012-11-05&QueueUrl=" + url.QueryEscape(qpFuzzURL+"fz"),
	"Action=TagQueue&Version=2012-11-05&QueueUrl=" + url.QueryEscape(qpFuzzURL+"fz.fifo") + "&Tag.1.Key=a&Tag.1.Value=1",
	"Action=UntagQueue&Version=2012-11-05&QueueUrl=" + url.QueryEscape(qpFuzzURL+"fz") + "&TagKey.1=team",
	"Action=ListQueueTags&Version=2012-11-05&QueueUrl=" + url.QueryEscape(qpFuzzURL+"fz"),
	"Action=ListDeadLetterSourceQueues&Version=2012-11-05&QueueUrl=" + url.QueryEscape(qpFuzzURL+"fz-dlq.fifo"),
	"Action=StartMessageMoveTask&Version=2012-11-05&SourceArn=" + url.QueryEscape(qpArn("fz-dlq")) + "&MaxNumberOfMessagesPerSecond=1",
	"Action=CancelMessageMoveTask&Version=2012-11-05&TaskHandle={{task}}",
	"Action=ListMessageMoveTasks&Version=2012-11-05&SourceArn=" + url.QueryEscape(qpArn("fz-dlq.fifo")) + "&MaxResults=1",
	"Action=AddPermission&Version=2012-11-05&QueueUrl=" + url.QueryEscape(qpFuzzURL+"fz") + "&Label=l2&AWSAccountId.1=111122223333&ActionName.1=SendMessage",
	"Action=RemovePermission&Version=2012-11-05&QueueUrl=" + url.QueryEscape(qpFuzzURL+"fz") + "&Label=fzl",
}

// qpFuzzSubstitute replaces the placeholders of a request with the run's handles, escaped by escape.
func qpFuzzSubstitute(b []byte, handles map[string]string, escape func(string) string) []byte {
	if !bytes.Contains(b, []byte("{{")) {
		return b
	}
	for p, h := range handles {
		b = bytes.ReplaceAll(b, []byte(p), []byte(escape(h)))
	}
	return b
}

// qpFuzzServe serves one request in a goroutine of the bubble. Whenever every goroutine of the bubble is
// blocked and the request has not been answered, it is waiting on the clock (a long poll): the clock moves
// on a minute, past the longest wait a receive can ask for.
func qpFuzzServe(t *testing.T, env *qpFuzzEnv, target string, body []byte, contentType string) *httptest.ResponseRecorder {
	t.Helper()
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() { done <- qpFuzzDo(env.srv, target, body, contentType) }()
	for range 100 {
		synctest.Wait()
		select {
		case rec := <-done:
			return rec
		default:
			env.clock.Advance(time.Minute)
		}
	}
	t.Fatalf("the request is still unanswered after 100 minutes of the server's clock: X-Amz-Target %q, body %q", target, body)
	return nil
}

// qpFuzzDrain lets the move tasks of a run end before its bubble does, by moving the clock on while any of
// them waits for its next move (a run moves at most a few dozen messages, at 1 a second or more).
func qpFuzzDrain(t *testing.T, env *qpFuzzEnv) {
	t.Helper()
	for i := 0; env.clock.Timers() > 0; i++ {
		require.Less(t, i, 1000, "timers still wait on the server's clock after 1000 minutes")
		env.clock.Advance(time.Minute)
		synctest.Wait()
	}
}

// qpJSONEscape escapes s for the inside of a JSON string.
func qpJSONEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

func FuzzJSONRequest(f *testing.F) {
	for _, s := range qpFuzzJSONSeeds {
		f.Add(s[0], []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, target string, body []byte) {
		synctest.Test(t, func(t *testing.T) {
			env := qpFuzzSetup(t)
			body := qpFuzzSubstitute(slices.Clone(body), env.handles, qpJSONEscape)
			before := qpFuzzState(t, env.srv)
			rec := qpFuzzServe(t, env, target, body, qpFuzzJSONType)
			qpFuzzCheck(t, env, rec, before, target != "", "X-Amz-Target "+target+" "+string(body))
			qpFuzzDrain(t, env)
		})
	})
}

func FuzzQueryRequest(f *testing.F) {
	for _, s := range qpFuzzQuerySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		synctest.Test(t, func(t *testing.T) {
			env := qpFuzzSetup(t)
			body := qpFuzzSubstitute(slices.Clone(body), env.handles, url.QueryEscape)
			before := qpFuzzState(t, env.srv)
			rec := qpFuzzServe(t, env, "", body, qpFormContentType)
			qpFuzzCheck(t, env, rec, before, false, "form "+string(body))
			qpFuzzDrain(t, env)
		})
	})
}

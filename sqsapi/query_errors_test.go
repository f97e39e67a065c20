package sqsapi_test

// Errors and result forms of the query protocol as SQS writes them (AWS-validated in LocalStack's
// TestSqsQueryApi and snapshots): the XML error's Code, Message and Type with its HTTP status; a queue's
// URL as an endpoint (CreateQueue and ListQueues refused there with InvalidAction, a request without an
// action answered 404 <UnknownOperationException/>); a request with Accept: application/json answered in
// JSON; empty results written <ReceiveMessageResult/>; and in the JSON protocol, empty lists left out.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// qpRequest sends a query request as a plain HTTP client does: method to path (the endpoint's root or a
// queue's path), the form in the query string of a GET or the body of a POST, with the headers given.
func (e *qpEnv) qpRequest(t *testing.T, method, path string, form url.Values, header ...string) (int, http.Header, []byte) {
	t.Helper()
	target := e.base + path
	var body io.Reader
	if method == http.MethodGet {
		if len(form) > 0 {
			target += "?" + form.Encode()
		}
	} else {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	require.NoError(t, err)
	if method != http.MethodGet {
		req.Header.Set("Content-Type", qpFormContentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := e.hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, b
}

func TestQpErrorDocuments(t *testing.T) {
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-err")
	qpCreate(t, e, "qp-err.fifo", "FifoQueue", "true")
	fifo := strings.TrimSuffix(u, "qp-err") + "qp-err.fifo"
	missing := strings.TrimSuffix(u, "qp-err") + "qp-none"
	cases := []struct {
		name    string
		status  int
		code    string
		message string
		action  string
		kv      []string
	}{
		{"no MessageBody", 400, "MissingParameter", "The request must contain the parameter MessageBody.",
			"SendMessage", []string{"QueueUrl", u}},
		{"no QueueUrl", 400, "MissingParameter", "The request must contain the parameter QueueUrl.",
			"GetQueueAttributes", nil},
		{"no MessageGroupId", 400, "MissingParameter", "The request must contain the parameter MessageGroupId.",
			"SendMessage", []string{"QueueUrl", fifo, "MessageBody", "m", "MessageDeduplicationId", "d"}},
		{"no queue", 400, "AWS.SimpleQueueService.NonExistentQueue", "The specified queue does not exist for this wsdl version.",
			"GetQueueAttributes", []string{"QueueUrl", missing, "AttributeName.1", "QueueArn"}},
		{"no queue by name", 400, "AWS.SimpleQueueService.NonExistentQueue", "The specified queue does not exist for this wsdl version.",
			"GetQueueUrl", []string{"QueueName", "qp-none"}},
		{"unknown attribute", 400, "InvalidAttributeName", "Unknown Attribute Foobar.",
			"GetQueueAttributes", []string{"QueueUrl", u, "AttributeName.1", "Foobar"}},
		{"unknown action", 400, "InvalidAction", "The action FooBar is not valid for this endpoint.", "FooBar", nil},
		{"MaxNumberOfMessages", 400, "InvalidParameterValue",
			"Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.",
			"ReceiveMessage", []string{"QueueUrl", u, "MaxNumberOfMessages", "11"}},
		{"bad handle", 404, "ReceiptHandleIsInvalid", `The input receipt handle "garbage" is not a valid receipt handle.`,
			"DeleteMessage", []string{"QueueUrl", u, "ReceiptHandle", "garbage"}},
		{"different attributes", 400, "QueueAlreadyExists",
			"A queue already exists with the same name and a different value for attribute DelaySeconds",
			"CreateQueue", []string{"QueueName", "qp-err", "Attribute.1.Name", "DelaySeconds", "Attribute.1.Value", "5"}},
		{"too many entries", 400, "AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
			"Maximum number of entries per request are 10. You have sent 11.", "DeleteMessageBatch", qpEntries(u, 11)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			er := qpFail(t, e, tc.status, tc.code, tc.action, tc.kv...)
			require.Equal(t, tc.message, er.Message)
		})
	}
	// A purge within 60 s of the last is 403.
	qpCall[qpNoResult](t, e, "PurgeQueue", "QueueUrl", u)
	er := qpFail(t, e, http.StatusForbidden, "AWS.SimpleQueueService.PurgeQueueInProgress", "PurgeQueue", "QueueUrl", u)
	require.Equal(t, "Only one PurgeQueue operation on qp-err is allowed every 60 seconds.", er.Message)
}

// qpEntries is a DeleteMessageBatch of n entries.
func qpEntries(queueURL string, n int) []string {
	kv := []string{"QueueUrl", queueURL}
	for i := 1; i <= n; i++ {
		p := "DeleteMessageBatchRequestEntry." + strconv.Itoa(i) + "."
		kv = append(kv, p+"Id", "e"+strconv.Itoa(i), p+"ReceiptHandle", "h")
	}
	return kv
}

func TestQpQueueURLEndpoint(t *testing.T) {
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-ep")
	path := strings.TrimPrefix(u, e.base)
	require.Equal(t, "/"+qpAccount+"/qp-ep", path)

	// An action on the queue, sent to its URL (GET, as in a browser, and POST): the queue is the URL's.
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		status, header, body := e.qpRequest(t, method, path, qpForm("Action", "GetQueueAttributes", "AttributeName.1", "QueueArn"))
		require.Equal(t, http.StatusOK, status, "%s: %s", method, body)
		res := qpDecode[qpGetQueueAttributesResult](t, "GetQueueAttributes", header, body)
		require.Equal(t, map[string]string{"QueueArn": qpArn("qp-ep")}, qpNameValues(t, "attributes", res.Attributes))
	}
	status, header, body := e.qpRequest(t, http.MethodGet, path, qpForm("Action", "SendMessage"))
	require.Equal(t, http.StatusBadRequest, status)
	er := qpParseError(t, "SendMessage without a body", status, header, body)
	require.Equal(t, "MissingParameter", er.Code)
	require.Equal(t, "The request must contain the parameter MessageBody.", er.Message)

	// CreateQueue and ListQueues are not actions of a queue's URL.
	for _, tc := range []struct{ method, action string }{
		{http.MethodGet, "CreateQueue"}, {http.MethodPost, "CreateQueue"}, {http.MethodGet, "ListQueues"}, {http.MethodPost, "ListQueues"},
	} {
		status, header, body := e.qpRequest(t, tc.method, path, qpForm("Action", tc.action, "QueueName", "qp-other"))
		require.Equal(t, http.StatusBadRequest, status, "%s %s: %s", tc.method, tc.action, body)
		er := qpParseError(t, tc.action, status, header, body)
		require.Equal(t, "InvalidAction", er.Code)
		require.Equal(t, "The action "+tc.action+" is not valid for this endpoint.", er.Message)
	}
	_, ok := e.srv.Queue("qp-other")
	require.False(t, ok, "CreateQueue on a queue's URL created a queue")
	// At the endpoint's root they are actions.
	qpCall[qpListQueuesResult](t, e, "ListQueues")

	// A queue's URL without an action: 404 and <UnknownOperationException/>, XML even to a client that
	// accepts JSON.
	for _, accept := range []string{"", "application/json"} {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			status, _, body := e.qpRequest(t, method, path, nil, "Accept", accept)
			require.Equal(t, http.StatusNotFound, status, "%s Accept %q: %s", method, accept, body)
			require.Equal(t, "<UnknownOperationException/>", string(body), "%s Accept %q", method, accept)
		}
	}
	// The root without an action is still a MissingAction.
	status, header, body = e.qpRequest(t, http.MethodGet, "/", nil)
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "MissingAction", qpParseError(t, "root without action", status, header, body).Code)
}

func TestQpAcceptJSON(t *testing.T) {
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-json")
	path := strings.TrimPrefix(u, e.base)
	accept := []string{"Accept", "application/json"}
	decode := func(t *testing.T, header http.Header, body []byte) map[string]any {
		t.Helper()
		require.Equal(t, "application/json", header.Get("Content-Type"))
		var doc map[string]any
		require.NoError(t, json.Unmarshal(body, &doc), "%s", body)
		return doc
	}

	// GetQueueAttributes: the XML document's structure, each member under its member name, the map as a
	// list of Name/Value entries.
	status, header, body := e.qpRequest(t, http.MethodGet, path, qpForm("Action", "GetQueueAttributes",
		"AttributeName.1", "QueueArn", "AttributeName.2", "VisibilityTimeout"), accept...)
	require.Equal(t, http.StatusOK, status, "%s", body)
	doc := decode(t, header, body)
	resp := doc["GetQueueAttributesResponse"].(map[string]any)
	require.NotEmpty(t, resp["ResponseMetadata"].(map[string]any)["RequestId"])
	attrs := resp["GetQueueAttributesResult"].(map[string]any)["Attributes"].([]any)
	require.ElementsMatch(t, []any{
		map[string]any{"Name": "QueueArn", "Value": qpArn("qp-json")},
		map[string]any{"Name": "VisibilityTimeout", "Value": "30"},
	}, attrs)

	// SendMessage and ReceiveMessage, with a message attribute (a map of structures).
	status, header, body = e.qpRequest(t, http.MethodPost, "/", qpForm("Action", "SendMessage", "QueueUrl", u,
		"MessageBody", "foobar", "MessageAttribute.1.Name", "MyAttribute",
		"MessageAttribute.1.Value.DataType", "String", "MessageAttribute.1.Value.StringValue", "foobar"), accept...)
	require.Equal(t, http.StatusOK, status, "%s", body)
	sent := decode(t, header, body)["SendMessageResponse"].(map[string]any)["SendMessageResult"].(map[string]any)
	require.Equal(t, qpFoobarMD5, sent["MD5OfMessageBody"])
	require.Equal(t, qpMyAttributeMD5, sent["MD5OfMessageAttributes"])
	status, header, body = e.qpRequest(t, http.MethodPost, "/", qpForm("Action", "ReceiveMessage", "QueueUrl", u,
		"MessageAttributeName.1", "All"), accept...)
	require.Equal(t, http.StatusOK, status, "%s", body)
	msgs := decode(t, header, body)["ReceiveMessageResponse"].(map[string]any)["ReceiveMessageResult"].(map[string]any)["messages"].([]any)
	require.Len(t, msgs, 1)
	m := msgs[0].(map[string]any)
	require.Equal(t, "foobar", m["Body"])
	require.Equal(t, sent["MessageId"], m["MessageId"])
	require.Equal(t, []any{map[string]any{"Name": "MyAttribute",
		"Value": map[string]any{"DataType": "String", "StringValue": "foobar"}}}, m["MessageAttributes"])

	// An empty receive: "messages": null (recorded_test.go has the forms on record).
	status, header, body = e.qpRequest(t, http.MethodPost, "/", qpForm("Action", "ReceiveMessage", "QueueUrl", u), accept...)
	require.Equal(t, http.StatusOK, status, "%s", body)
	require.Equal(t, map[string]any{"messages": nil}, decode(t, header, body)["ReceiveMessageResponse"].(map[string]any)["ReceiveMessageResult"])
	// An action without a result has none.
	status, header, body = e.qpRequest(t, http.MethodPost, "/", qpForm("Action", "PurgeQueue", "QueueUrl", u), accept...)
	require.Equal(t, http.StatusOK, status, "%s", body)
	purged := decode(t, header, body)["PurgeQueueResponse"].(map[string]any)
	require.NotContains(t, purged, "PurgeQueueResult")
	require.Contains(t, purged, "ResponseMetadata")

	// Errors: {"Error": {"Type", "Code", "Message"}, "RequestId"}.
	status, header, body = e.qpRequest(t, http.MethodGet, path, qpForm("Action", "ListQueues"), accept...)
	require.Equal(t, http.StatusBadRequest, status)
	doc = decode(t, header, body)
	require.Equal(t, map[string]any{"Type": "Sender", "Code": "InvalidAction",
		"Message": "The action ListQueues is not valid for this endpoint."}, doc["Error"])
	require.NotEmpty(t, doc["RequestId"])
	status, header, body = e.qpRequest(t, http.MethodPost, "/", qpForm("Action", "GetQueueUrl", "QueueName", "qp-none"), accept...)
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "AWS.SimpleQueueService.NonExistentQueue", decode(t, header, body)["Error"].(map[string]any)["Code"])
}

// TestQpEmptyResults checks the forms of empty results: in XML a self-closing result element
// (<ReceiveMessageResult/>), and none for an action without a result; in JSON the empty list left out
// (Messages, QueueUrls, Failed, Successful), as SQS leaves them out.
func TestQpEmptyResults(t *testing.T) {
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-empty")
	for _, tc := range []struct {
		action string
		kv     []string
		want   string
	}{
		{"ReceiveMessage", []string{"QueueUrl", u}, "<ReceiveMessageResult/>"},
		{"ListQueues", []string{"QueueNamePrefix", "qp-nothing"}, "<ListQueuesResult/>"},
		{"GetQueueAttributes", []string{"QueueUrl", u, "AttributeName.1", "Policy"}, "<GetQueueAttributesResult/>"},
		{"ListQueueTags", []string{"QueueUrl", u}, "<ListQueueTagsResult/>"},
		{"DeleteMessage", []string{"QueueUrl", u, "ReceiptHandle", qpHandle(t, e, u)},
			`<DeleteMessageResponse xmlns="` + qpNamespace + `"><ResponseMetadata>`},
	} {
		status, _, body := e.qpPost(t, tc.action, tc.kv...)
		require.Equal(t, http.StatusOK, status, "%s: %s", tc.action, body)
		require.Contains(t, string(body), tc.want, tc.action)
	}

	// JSON: raw requests, to see what is left out.
	post := func(action, body string) string {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, e.base+"/", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
		resp, err := e.hc.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", action, b)
		return string(b)
	}
	q := `"QueueUrl":"` + u + `"`
	require.Equal(t, `{}`, post("ReceiveMessage", `{`+q+`}`))
	require.Equal(t, `{}`, post("ListQueues", `{"QueueNamePrefix":"qp-nothing"}`))
	sent := post("SendMessageBatch", `{`+q+`,"Entries":[{"Id":"a","MessageBody":"x"}]}`)
	require.Contains(t, sent, `"Successful":[{"Id":"a"`)
	require.NotContains(t, sent, `"Failed"`)
	failed := post("DeleteMessageBatch", `{`+q+`,"Entries":[{"Id":"a","ReceiptHandle":"garbage"}]}`)
	require.Contains(t, failed, `"Failed":[{"Id":"a"`)
	require.NotContains(t, failed, `"Successful"`)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(failed), &doc), failed)
	require.Len(t, doc, 1, failed)
}

// qpHandle sends a message to the queue and receives it, and returns its receipt handle.
func qpHandle(t *testing.T, e *qpEnv, queueURL string) string {
	t.Helper()
	qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", queueURL, "MessageBody", "m")
	res := qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", queueURL)
	require.Len(t, res.Messages, 1)
	return res.Messages[0].ReceiptHandle
}

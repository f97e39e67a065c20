package sqsapi_test

// Accounts and regions in the query protocol (TestQn*): raw form posts, with the credential scope, host and
// X-Amzn-Trace-Id each test gives.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// qnWho is how a request is sent: its credential scope (no Authorization header when keyID is ""), its
// Host header ("" for the test server's), and its X-Amzn-Trace-Id ("" for none).
type qnWho struct {
	region, keyID, host, trace string
}

// post sends an action as who and returns the response.
func (who qnWho) post(t *testing.T, e *qpEnv, action string, kv ...string) (int, http.Header, []byte) {
	t.Helper()
	form := qpForm(kv...)
	form.Set("Action", action)
	form.Set("Version", qpVersion)
	req, err := http.NewRequest(http.MethodPost, e.base+"/", strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", qpFormContentType)
	req.Header.Set("X-Amz-Date", "20250304T050607Z")
	if who.keyID != "" {
		req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+who.keyID+"/20250304/"+who.region+"/sqs/aws4_request, "+
			"SignedHeaders=content-type;host;x-amz-date, Signature=0000000000000000000000000000000000000000000000000000000000000000")
	}
	if who.host != "" {
		req.Host = who.host
	}
	if who.trace != "" {
		req.Header.Set("X-Amzn-Trace-Id", who.trace)
	}
	resp, err := e.hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, body
}

// qnCall sends an action that must succeed and returns its result.
func qnCall[R any](t *testing.T, e *qpEnv, who qnWho, action string, kv ...string) R {
	t.Helper()
	status, header, body := who.post(t, e, action, kv...)
	require.Equal(t, http.StatusOK, status, "%s %v as %v: %s", action, kv, who, body)
	return qpDecode[R](t, action, header, body)
}

// qnFail sends an action that must fail with status and code, and returns the error.
func qnFail(t *testing.T, e *qpEnv, who qnWho, status int, code, action string, kv ...string) qpErrorResponse {
	t.Helper()
	got, header, body := who.post(t, e, action, kv...)
	what := fmt.Sprintf("%s %v as %v", action, kv, who)
	require.Equal(t, status, got, "%s: %s", what, body)
	er := qpParseError(t, what, got, header, body)
	require.Equal(t, code, er.Code, "%s: %s", what, body)
	return er
}

func qnAttrs(t *testing.T, e *qpEnv, who qnWho, url string, names ...string) map[string]string {
	t.Helper()
	kv := []string{"QueueUrl", url}
	for i, n := range names {
		kv = append(kv, fmt.Sprintf("AttributeName.%d", i+1), n)
	}
	r := qnCall[qpGetQueueAttributesResult](t, e, who, "GetQueueAttributes", kv...)
	return qpNameValues(t, "attributes", r.Attributes)
}

func qnBodies(ms []qpMessage) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.Body)
	}
	return out
}

// The same name in two regions and two accounts names different queues; URLs carry the account; a URL of
// another account reaches that account's queue; the host names the region of an unsigned request.
func TestQnSameNameApart(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	spaces := []qnWho{
		{region: "us-east-1", keyID: "AKIDEXAMPLE"},
		{region: "eu-west-1", keyID: "AKIDEXAMPLE"},
		{region: "us-east-1", keyID: "111111111111"},
		{region: "eu-west-1", keyID: "222222222222"},
	}
	accounts := []string{qpAccount, qpAccount, "111111111111", "222222222222"}
	urls := make([]string, len(spaces))
	for i, who := range spaces {
		r := qnCall[qpCreateQueueResult](t, e, who, "CreateQueue", "QueueName", "orders")
		require.True(t, strings.HasSuffix(r.QueueURL, "/"+accounts[i]+"/orders"), "URL %s of %v", r.QueueURL, who)
		urls[i] = r.QueueURL
		require.Equal(t, "arn:aws:sqs:"+who.region+":"+accounts[i]+":orders", qnAttrs(t, e, who, "orders", "QueueArn")["QueueArn"])
		qnCall[qpSendMessageResult](t, e, who, "SendMessage", "QueueUrl", r.QueueURL, "MessageBody", "in "+who.region+"/"+accounts[i])
	}
	for i, who := range spaces {
		got := qnCall[qpReceiveMessageResult](t, e, who, "ReceiveMessage", "QueueUrl", urls[i], "MaxNumberOfMessages", "10")
		require.Equal(t, []string{"in " + who.region + "/" + accounts[i]}, qnBodies(got.Messages), "%v", who)
		list := qnCall[qpListQueuesResult](t, e, who, "ListQueues")
		require.Equal(t, []string{urls[i]}, list.QueueURLs, "ListQueues as %v", who)
		u := qnCall[qpGetQueueURLResult](t, e, who, "GetQueueUrl", "QueueName", "orders")
		require.Equal(t, urls[i], u.QueueURL, "GetQueueUrl as %v", who)
	}

	// Another account's URL, in the request's region.
	qnCall[qpSendMessageResult](t, e, spaces[1], "SendMessage", "QueueUrl", urls[3], "MessageBody", "across")
	got := qnCall[qpReceiveMessageResult](t, e, spaces[3], "ReceiveMessage", "QueueUrl", urls[3])
	require.Equal(t, []string{"across"}, qnBodies(got.Messages))
	qnFail(t, e, spaces[0], 400, "AWS.SimpleQueueService.NonExistentQueue", "SendMessage", "QueueUrl", urls[3], "MessageBody", "x")

	// The host, for a request with no credential scope.
	unsigned := qnWho{host: "sqs.eu-west-1.localhost:9324"}
	r := qnCall[qpCreateQueueResult](t, e, unsigned, "CreateQueue", "QueueName", "by-host")
	require.Equal(t, "http://sqs.eu-west-1.localhost:9324/"+qpAccount+"/by-host", r.QueueURL)
	require.Equal(t, "arn:aws:sqs:eu-west-1:"+qpAccount+":by-host", qnAttrs(t, e, unsigned, r.QueueURL, "QueueArn")["QueueArn"])
	qnCall[qpGetQueueURLResult](t, e, spaces[1], "GetQueueUrl", "QueueName", "by-host")
	qnFail(t, e, spaces[0], 400, "AWS.SimpleQueueService.NonExistentQueue", "GetQueueUrl", "QueueName", "by-host")
	// The scope wins over the host.
	qnCall[qpCreateQueueResult](t, e, qnWho{region: "us-west-2", keyID: "AKID", host: "sqs.eu-west-1.localhost"}, "CreateQueue", "QueueName", "scoped")
	qnCall[qpGetQueueURLResult](t, e, qnWho{region: "us-west-2", keyID: "AKID"}, "GetQueueUrl", "QueueName", "scoped")
}

// A queue name stands for a QueueUrl in every action that takes one, in the request's namespace.
func TestQnQueueNameAsURL(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	eu := qnWho{region: "eu-west-1", keyID: "111111111111"}
	us := qnWho{region: "us-east-1", keyID: "111111111111"}
	qnCall[qpCreateQueueResult](t, e, eu, "CreateQueue", "QueueName", "by-name")
	for range 2 {
		qnCall[qpSendMessageResult](t, e, eu, "SendMessage", "QueueUrl", "by-name", "MessageBody", "m")
	}
	ms := qnCall[qpReceiveMessageResult](t, e, eu, "ReceiveMessage", "QueueUrl", "by-name", "MaxNumberOfMessages", "2").Messages
	require.Len(t, ms, 2)
	h0, h1 := ms[0].ReceiptHandle, ms[1].ReceiptHandle
	for _, a := range []struct {
		action string
		kv     []string
	}{
		{"SendMessage", []string{"MessageBody", "b"}},
		{"SendMessageBatch", []string{"SendMessageBatchRequestEntry.1.Id", "1", "SendMessageBatchRequestEntry.1.MessageBody", "b"}},
		{"ReceiveMessage", nil},
		{"ChangeMessageVisibility", []string{"ReceiptHandle", h0, "VisibilityTimeout", "60"}},
		{"ChangeMessageVisibilityBatch", []string{"ChangeMessageVisibilityBatchRequestEntry.1.Id", "1",
			"ChangeMessageVisibilityBatchRequestEntry.1.ReceiptHandle", h0, "ChangeMessageVisibilityBatchRequestEntry.1.VisibilityTimeout", "60"}},
		{"DeleteMessageBatch", []string{"DeleteMessageBatchRequestEntry.1.Id", "1", "DeleteMessageBatchRequestEntry.1.ReceiptHandle", h0}},
		{"DeleteMessage", []string{"ReceiptHandle", h1}},
		{"GetQueueAttributes", []string{"AttributeName.1", "All"}},
		{"SetQueueAttributes", []string{"Attribute.1.Name", "DelaySeconds", "Attribute.1.Value", "0"}},
		{"TagQueue", []string{"Tag.1.Key", "k", "Tag.1.Value", "v"}},
		{"ListQueueTags", nil},
		{"UntagQueue", []string{"TagKey.1", "k"}},
		{"AddPermission", []string{"Label", "l", "AWSAccountId.1", "111111111111", "ActionName.1", "SendMessage"}},
		{"RemovePermission", []string{"Label", "l"}},
		{"ListDeadLetterSourceQueues", nil},
		{"PurgeQueue", nil},
		{"DeleteQueue", nil},
	} {
		kv := append([]string{"QueueUrl", "by-name"}, a.kv...)
		qnFail(t, e, us, 400, "AWS.SimpleQueueService.NonExistentQueue", a.action, kv...)
		status, _, body := eu.post(t, e, a.action, kv...)
		require.Equal(t, http.StatusOK, status, "%s with QueueUrl=by-name: %s", a.action, body)
	}
	qnFail(t, e, eu, 400, "AWS.SimpleQueueService.NonExistentQueue", "GetQueueUrl", "QueueName", "by-name")
}

// Redrive ARNs of another namespace are refused; move task handles are base64 JSON; a deleted destination
// ends a task FAILED.
func TestQnRedriveAndMoveTasks(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	eu := qnWho{region: "eu-west-1", keyID: "111111111111"}
	us := qnWho{region: "us-east-1", keyID: "111111111111"}
	arn := func(region, name string) string { return "arn:aws:sqs:" + region + ":111111111111:" + name }
	dlq := qnCall[qpCreateQueueResult](t, e, eu, "CreateQueue", "QueueName", "dlq").QueueURL
	policy := `{"deadLetterTargetArn":"` + arn("eu-west-1", "dlq") + `","maxReceiveCount":1}`
	er := qnFail(t, e, us, 400, "InvalidParameterValue", "CreateQueue", "QueueName", "src",
		"Attribute.1.Name", "RedrivePolicy", "Attribute.1.Value", policy)
	require.Equal(t, "Value "+policy+" for parameter RedrivePolicy is invalid. Reason: Dead-letter target does not exist.", er.Message)
	er = qnFail(t, e, eu, 400, "InvalidAttributeValue", "SetQueueAttributes", "QueueUrl", dlq, "Attribute.1.Name", "RedriveAllowPolicy",
		"Attribute.1.Value", `{"redrivePermission":"byQueue","sourceQueueArns":["`+arn("us-east-1", "src")+`"]}`)
	require.Contains(t, er.Message, "Invalid source queue ARN "+arn("us-east-1", "src"))
	src := qnCall[qpCreateQueueResult](t, e, eu, "CreateQueue", "QueueName", "src", "Attribute.1.Name", "RedrivePolicy", "Attribute.1.Value", policy).QueueURL
	srcs := qnCall[qpListDeadLetterSourceQueuesResult](t, e, eu, "ListDeadLetterSourceQueues", "QueueUrl", dlq)
	require.Equal(t, []string{src}, srcs.QueueURLs)
	qnCall[qpListDeadLetterSourceQueuesResult](t, e, eu, "ListDeadLetterSourceQueues", "QueueUrl", "dlq")

	dest := qnCall[qpCreateQueueResult](t, e, eu, "CreateQueue", "QueueName", "dest").QueueURL
	for _, b := range []string{"m1", "m2", "m3"} {
		qnCall[qpSendMessageResult](t, e, eu, "SendMessage", "QueueUrl", dlq, "MessageBody", b)
	}
	h := qnCall[qpStartMessageMoveTaskResult](t, e, eu, "StartMessageMoveTask", "SourceArn", arn("eu-west-1", "dlq"),
		"DestinationArn", arn("eu-west-1", "dest"), "MaxNumberOfMessagesPerSecond", "1").TaskHandle
	raw, err := base64.StdEncoding.DecodeString(h)
	require.NoError(t, err)
	var decoded struct{ TaskID, SourceArn string }
	require.NoError(t, json.Unmarshal(raw, &decoded), "%s", raw)
	require.Equal(t, arn("eu-west-1", "dlq"), decoded.SourceArn)
	require.Len(t, decoded.TaskID, 36)
	unknown := base64.StdEncoding.EncodeToString([]byte(`{"taskId":"00000000-0000-4000-8000-000000000000","sourceArn":"` + arn("eu-west-1", "dlq") + `"}`))
	er = qnFail(t, e, eu, 404, "ResourceNotFoundException", "CancelMessageMoveTask", "TaskHandle", unknown)
	require.Equal(t, "Task does not exist.", er.Message)
	er = qnFail(t, e, eu, 400, "InvalidParameterValue", "CancelMessageMoveTask", "TaskHandle", "bm90IGEgaGFuZGxl")
	require.Equal(t, "Value for parameter TaskHandle is invalid.", er.Message)

	// The task waits on the manual clock after its first message; its destination goes.
	qnCall[qpNoResult](t, e, eu, "DeleteQueue", "QueueUrl", dest)
	list := qnCall[qpListMessageMoveTasksResult](t, e, eu, "ListMessageMoveTasks", "SourceArn", arn("eu-west-1", "dlq"))
	require.Len(t, list.Results, 1)
	require.Equal(t, "FAILED", list.Results[0].Status)
	require.Equal(t, "AWS.SimpleQueueService.NonExistentQueue", list.Results[0].FailureReason)
	require.Empty(t, list.Results[0].TaskHandle)
}

// SendMessage and SendMessageBatch take X-Amzn-Trace-Id for AWSTraceHeader unless a message has its own.
func TestQnTraceHeaderFromHTTP(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	const fromHTTP = "Root=1-67891233-abcdef012345678912345678;Sampled=1"
	const explicit = "Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=0"
	plain := qnWho{region: "us-east-1", keyID: "AKID"}
	traced := plain
	traced.trace = fromHTTP
	u := qnCall[qpCreateQueueResult](t, e, plain, "CreateQueue", "QueueName", "traced").QueueURL
	sys := func(prefix, v string) []string {
		return []string{prefix + "MessageSystemAttribute.1.Name", "AWSTraceHeader", prefix + "MessageSystemAttribute.1.Value.DataType", "String",
			prefix + "MessageSystemAttribute.1.Value.StringValue", v}
	}
	md5Of := func(v string) string {
		r := qnCall[qpSendMessageResult](t, e, plain, "SendMessage", append([]string{"QueueUrl", u, "MessageBody", "ref"}, sys("", v)...)...)
		require.NotEmpty(t, r.MD5OfMessageSystemAttributes)
		return r.MD5OfMessageSystemAttributes
	}
	md5HTTP, md5Explicit := md5Of(fromHTTP), md5Of(explicit)
	qnCall[qpNoResult](t, e, plain, "PurgeQueue", "QueueUrl", u)
	e.clock.Advance(61 * time.Second) // the purge is over

	r := qnCall[qpSendMessageResult](t, e, traced, "SendMessage", "QueueUrl", u, "MessageBody", "header")
	require.Equal(t, md5HTTP, r.MD5OfMessageSystemAttributes)
	r = qnCall[qpSendMessageResult](t, e, traced, "SendMessage", append([]string{"QueueUrl", u, "MessageBody", "explicit"}, sys("", explicit)...)...)
	require.Equal(t, md5Explicit, r.MD5OfMessageSystemAttributes)
	b := qnCall[qpSendMessageBatchResult](t, e, traced, "SendMessageBatch", append([]string{"QueueUrl", u,
		"SendMessageBatchRequestEntry.1.Id", "a", "SendMessageBatchRequestEntry.1.MessageBody", "batch a",
		"SendMessageBatchRequestEntry.2.Id", "b", "SendMessageBatchRequestEntry.2.MessageBody", "batch b"},
		sys("SendMessageBatchRequestEntry.2.", explicit)...)...)
	require.Len(t, b.Successful, 2)
	for _, s := range b.Successful {
		want := map[string]string{"a": md5HTTP, "b": md5Explicit}[s.ID]
		require.Equal(t, want, s.MD5OfMessageSystemAttributes, "entry %s", s.ID)
	}
	got := qnCall[qpReceiveMessageResult](t, e, plain, "ReceiveMessage", "QueueUrl", u, "MaxNumberOfMessages", "10",
		"MessageSystemAttributeName.1", "AWSTraceHeader")
	traces := map[string]string{}
	for _, m := range got.Messages {
		traces[m.Body] = qpNameValues(t, "attributes", m.Attributes)["AWSTraceHeader"]
	}
	require.Equal(t, map[string]string{"header": fromHTTP, "explicit": explicit, "batch a": fromHTTP, "batch b": explicit}, traces)
}

// A presigned request's X-Amz-Credential names its account and region, as an Authorization header does.
func TestQnPresignedCredential(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	cred := "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=111111111111%2F20250304%2Feu-west-1%2Fsqs%2Faws4_request" +
		"&X-Amz-Date=20250304T050607Z&X-Amz-SignedHeaders=host&X-Amz-Signature=00"
	resp, err := e.hc.Get(e.base + "/?Action=CreateQueue&QueueName=presigned&Version=" + qpVersion + "&" + cred)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	r := qpDecode[qpCreateQueueResult](t, "CreateQueue", resp.Header, body)
	require.True(t, strings.HasSuffix(r.QueueURL, "/111111111111/presigned"), r.QueueURL)
	eu := qnWho{region: "eu-west-1", keyID: "111111111111"}
	require.Equal(t, "arn:aws:sqs:eu-west-1:111111111111:presigned", qnAttrs(t, e, eu, "presigned", "QueueArn")["QueueArn"])
}

// The server's catalogue names each queue uniquely (Catalog.DisplayName): its own name in the server's
// default account and region, "account/region/name" in another, for metrics labels.
func TestQnDisplayNames(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	spaces := []qnWho{
		{region: "us-east-1", keyID: "AKIDEXAMPLE"},
		{region: "eu-west-1", keyID: "AKIDEXAMPLE"},
		{region: "us-east-1", keyID: "111111111111"},
	}
	for i, who := range spaces {
		r := qnCall[qpCreateQueueResult](t, e, who, "CreateQueue", "QueueName", "orders")
		for range i + 1 {
			qnCall[qpSendMessageResult](t, e, who, "SendMessage", "QueueUrl", r.QueueURL, "MessageBody", "m")
		}
	}
	visible := make(map[string]int)
	cat := e.srv.Catalog()
	for _, q := range cat.Queues() {
		visible[cat.DisplayName(q.Namespace(), q.Name())] = q.Stats().Visible
	}
	require.Equal(t, map[string]int{
		"orders":                        1,
		qpAccount + "/eu-west-1/orders": 2,
		"111111111111/us-east-1/orders": 3,
	}, visible)
}

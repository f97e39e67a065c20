package sqsapi_test

// Answers that AWS gave on record (issue "AWS-exact, the last steps"), each sent in both protocols over
// loopback: the query protocol as the AWS CLI v2 sends it (qpPost), and the JSON protocol as aws-sdk-go-v2 and
// botocore send it (exJSON). Each test names where AWS's answer was recorded. Every top-level name of this file
// starts with "ex".

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/sqsapi"
)

// exJSON sends a JSON-protocol request (awsJson1_0, X-Amz-Target AmazonSQS.<action>) to the server over
// loopback and returns the answer.
func (e *qpEnv) exJSON(t *testing.T, action string, in any) (int, http.Header, []byte) {
	t.Helper()
	body, err := json.Marshal(in)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, e.base+"/", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	req.Header.Set("X-Amz-Date", "20250304T050607Z")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20250304/us-east-1/sqs/aws4_request, "+
		"SignedHeaders=content-type;host;x-amz-date, Signature=0000000000000000000000000000000000000000000000000000000000000000")
	resp, err := e.hc.Do(req)
	require.NoError(t, err, "%s %s", action, body)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, b
}

// exJSONCall sends a JSON-protocol request that must succeed and decodes its result into out (when not nil).
func exJSONCall(t *testing.T, e *qpEnv, action string, in, out any) {
	t.Helper()
	status, _, body := e.exJSON(t, action, in)
	require.Equal(t, http.StatusOK, status, "%s %v: %s", action, in, body)
	if out != nil {
		require.NoError(t, json.Unmarshal(body, out), "%s: %s", action, body)
	}
}

// exJSONFail sends a JSON-protocol request that must fail with status, the query code (of the
// x-amzn-query-error header, which the SDKs report) and the message.
func exJSONFail(t *testing.T, e *qpEnv, status int, code, message, action string, in any) {
	t.Helper()
	got, header, body := e.exJSON(t, action, in)
	require.Equal(t, status, got, "%s %v: %s", action, in, body)
	qcode, fault, _ := strings.Cut(header.Get("X-Amzn-Query-Error"), ";")
	require.Equal(t, code, qcode, "%s %v: x-amzn-query-error, body %s", action, in, body)
	require.Equal(t, "Sender", fault)
	var doc struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}
	require.NoError(t, json.Unmarshal(body, &doc), "%s: %s", action, body)
	require.Equal(t, message, doc.Message, "%s %v", action, in)
}

// exRedrivePolicy reads a RedrivePolicy attribute.
func exRedrivePolicy(t *testing.T, v string) map[string]any {
	t.Helper()
	var p map[string]any
	require.NoError(t, json.Unmarshal([]byte(v), &p), "RedrivePolicy %q", v)
	return p
}

// Item 1: a queue may be its own dead-letter queue. Recorded (2024, both protocols): SetQueueAttributes with
// RedrivePolicy {"deadLetterTargetArn": <the queue's own ARN>, "maxReceiveCount": "42"} succeeds,
// GetQueueAttributes returns it, and RedrivePolicy "" removes it (LocalStack, tests/aws/services/sqs/
// test_sqs.py, test_set_empty_redrive_policy, AWS-validated for sqs and sqs_query). Longer cycles are accepted
// too. fifoq refused both with InvalidParameterValue "...leads back to...".
func TestExOwnDeadLetterQueue(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	policy := func(name string) string {
		return `{"deadLetterTargetArn":"` + qpArn(name) + `","maxReceiveCount":"42"}`
	}

	// Query protocol.
	u := qpCreate(t, e, "ex-self-q")
	qpCall[qpNoResult](t, e, "SetQueueAttributes", "QueueUrl", u, "Attribute.1.Name", "RedrivePolicy",
		"Attribute.1.Value", policy("ex-self-q"))
	got := qpNameValues(t, "RedrivePolicy", qpCall[qpGetQueueAttributesResult](t, e, "GetQueueAttributes",
		"QueueUrl", u, "AttributeName.1", "RedrivePolicy").Attributes)
	require.Equal(t, map[string]any{"deadLetterTargetArn": qpArn("ex-self-q"), "maxReceiveCount": 42.0},
		exRedrivePolicy(t, got["RedrivePolicy"]))
	sources := qpCall[qpListDeadLetterSourceQueuesResult](t, e, "ListDeadLetterSourceQueues", "QueueUrl", u)
	require.Equal(t, []string{u}, sources.QueueURLs, "the queue is its own source")
	// Its messages stay: received past maxReceiveCount.
	qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "m")
	qpCall[qpNoResult](t, e, "SetQueueAttributes", "QueueUrl", u, "Attribute.1.Name", "RedrivePolicy",
		"Attribute.1.Value", `{"deadLetterTargetArn":"`+qpArn("ex-self-q")+`","maxReceiveCount":1}`)
	for range 3 {
		r := qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u, "VisibilityTimeout", "0")
		require.Len(t, r.Messages, 1)
	}
	qpCall[qpNoResult](t, e, "SetQueueAttributes", "QueueUrl", u, "Attribute.1.Name", "RedrivePolicy",
		"Attribute.1.Value", "")
	got = qpNameValues(t, "All", qpCall[qpGetQueueAttributesResult](t, e, "GetQueueAttributes",
		"QueueUrl", u, "AttributeName.1", "All").Attributes)
	require.NotContains(t, got, "RedrivePolicy", `RedrivePolicy "" removes it`)
	// A cycle of two.
	b := qpCreate(t, e, "ex-cycle-b", "RedrivePolicy", `{"deadLetterTargetArn":"`+qpArn("ex-self-q")+`","maxReceiveCount":3}`)
	qpCall[qpNoResult](t, e, "SetQueueAttributes", "QueueUrl", u, "Attribute.1.Name", "RedrivePolicy",
		"Attribute.1.Value", `{"deadLetterTargetArn":"`+qpArn("ex-cycle-b")+`","maxReceiveCount":3}`)
	require.Equal(t, []string{u}, qpCall[qpListDeadLetterSourceQueuesResult](t, e, "ListDeadLetterSourceQueues", "QueueUrl", b).QueueURLs)
	require.Equal(t, []string{b}, qpCall[qpListDeadLetterSourceQueuesResult](t, e, "ListDeadLetterSourceQueues", "QueueUrl", u).QueueURLs)

	// JSON protocol.
	var created struct{ QueueUrl string }
	exJSONCall(t, e, "CreateQueue", map[string]any{"QueueName": "ex-self-j"}, &created)
	j := created.QueueUrl
	exJSONCall(t, e, "SetQueueAttributes", map[string]any{"QueueUrl": j,
		"Attributes": map[string]string{"RedrivePolicy": policy("ex-self-j")}}, nil)
	var attrs struct{ Attributes map[string]string }
	exJSONCall(t, e, "GetQueueAttributes", map[string]any{"QueueUrl": j, "AttributeNames": []string{"RedrivePolicy"}}, &attrs)
	require.Equal(t, map[string]any{"deadLetterTargetArn": qpArn("ex-self-j"), "maxReceiveCount": 42.0},
		exRedrivePolicy(t, attrs.Attributes["RedrivePolicy"]))
	var srcs struct {
		QueueUrls []string `json:"queueUrls"`
	}
	exJSONCall(t, e, "ListDeadLetterSourceQueues", map[string]any{"QueueUrl": j}, &srcs)
	require.Equal(t, []string{j}, srcs.QueueUrls)
	exJSONCall(t, e, "SetQueueAttributes", map[string]any{"QueueUrl": j,
		"Attributes": map[string]string{"RedrivePolicy": ""}}, nil)
	attrs.Attributes = nil
	exJSONCall(t, e, "GetQueueAttributes", map[string]any{"QueueUrl": j, "AttributeNames": []string{"All"}}, &attrs)
	require.NotContains(t, attrs.Attributes, "RedrivePolicy")
}

// exTaskHandle is a move task handle as AWS writes one: base64 of {"taskId": ..., "sourceArn": ...}.
func exTaskHandle(taskID, sourceArn string) string {
	b, _ := json.Marshal(map[string]string{"taskId": taskID, "sourceArn": sourceArn})
	return base64.StdEncoding.EncodeToString(b)
}

// Item 3: CancelMessageMoveTask with a well-formed handle whose source queue does not exist is 404
// ResourceNotFoundException "The resource that you specified for the SourceArn parameter doesn't exist.";
// with a source that exists and a task id that does not, "Task does not exist." Both recorded 2024-01-05
// (LocalStack, tests/aws/services/sqs/test_sqs_move_task.snapshot.json, test_cancel_with_invalid_source_arn_in_
// task_handle and test_cancel_with_invalid_task_id_in_task_handle, with these handles).
func TestExCancelMoveTaskUnknownSource(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	qpCreate(t, e, "ex-mt-src")
	missing := exTaskHandle("10f57157-fc38-4da9-a113-4de7e12d05dd", "arn:aws:sqs:us-east-1:878966065785:test-queue-doesnt-exist-123456")
	missingHere := exTaskHandle("10f57157-fc38-4da9-a113-4de7e12d05dd", qpArn("ex-mt-none"))
	unknownTask := exTaskHandle("10f57157-fc38-4da9-a113-4de7e12d05aa", qpArn("ex-mt-src"))
	const noSource = "The resource that you specified for the SourceArn parameter doesn't exist."
	for _, c := range []struct{ handle, message string }{
		{missing, noSource},
		{missingHere, noSource},
		{unknownTask, "Task does not exist."},
	} {
		er := qpFail(t, e, http.StatusNotFound, "ResourceNotFoundException", "CancelMessageMoveTask", "TaskHandle", c.handle)
		require.Equal(t, c.message, er.Message)
		exJSONFail(t, e, http.StatusNotFound, "ResourceNotFoundException", c.message, "CancelMessageMoveTask",
			map[string]string{"TaskHandle": c.handle})
	}
}

// Item 6: a single SendMessage with a MessageDeduplicationId on a standard queue gets AWS's framed text
// (recorded in a production log: "Value <uuid> for parameter MessageDeduplicationId is invalid. Reason: The
// request include parameter that is not valid for this queue type."), while a batch entry keeps the unframed
// text recorded for it (aws/aws-sdk-js#4216).
func TestExDeduplicationIDOnStandardQueue(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "ex-dedup-std")
	const framed = "Value 2f1c-id for parameter MessageDeduplicationId is invalid. Reason: The request include parameter that is not valid for this queue type."
	const entry = "The request include parameter that is not valid for this queue type"

	er := qpFail(t, e, http.StatusBadRequest, "InvalidParameterValue", "SendMessage", "QueueUrl", u, "MessageBody", "m",
		"MessageDeduplicationId", "2f1c-id")
	require.Equal(t, framed, er.Message)
	r := qpCall[qpSendMessageBatchResult](t, e, "SendMessageBatch", "QueueUrl", u,
		"SendMessageBatchRequestEntry.1.Id", "a", "SendMessageBatchRequestEntry.1.MessageBody", "m",
		"SendMessageBatchRequestEntry.1.MessageDeduplicationId", "2f1c-id")
	require.Equal(t, []qpBatchResultErrorEntry{{ID: "a", SenderFault: true, Code: "InvalidParameterValue", Message: entry}}, r.Failed)

	exJSONFail(t, e, http.StatusBadRequest, "InvalidParameterValue", framed, "SendMessage",
		map[string]string{"QueueUrl": u, "MessageBody": "m", "MessageDeduplicationId": "2f1c-id"})
	var batch struct {
		Failed []struct {
			Id, Code, Message string
			SenderFault       bool
		}
	}
	exJSONCall(t, e, "SendMessageBatch", map[string]any{"QueueUrl": u, "Entries": []map[string]string{
		{"Id": "a", "MessageBody": "m", "MessageDeduplicationId": "2f1c-id"}}}, &batch)
	require.Len(t, batch.Failed, 1)
	require.Equal(t, entry, batch.Failed[0].Message)
	require.Equal(t, "InvalidParameterValue", batch.Failed[0].Code)
}

// Item 6: UntagQueue refuses an empty tag key as TagQueue refuses one, and no keys at all with the message AWS
// gave to botocore's untag_queue(TagKeys=[]) (getmoto/moto#1686, a traceback against AWS: InvalidParameterValue
// "Tag keys must be between 1 and 128 characters in length."). A JSON request without TagKeys lacks a required
// parameter. Nothing is removed.
func TestExUntagQueueEmptyKeys(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "ex-untag")
	qpCall[qpNoResult](t, e, "TagQueue", "QueueUrl", u, "Tag.1.Key", "a", "Tag.1.Value", "1")
	const emptyKey = "Value  for parameter TagKey is invalid. Reason: Tag keys must be between 1 and 128 characters in length."
	const noKeys = "Tag keys must be between 1 and 128 characters in length."

	er := qpFail(t, e, http.StatusBadRequest, "InvalidParameterValue", "TagQueue", "QueueUrl", u, "Tag.1.Key", "", "Tag.1.Value", "v")
	require.Equal(t, emptyKey, er.Message, "TagQueue's answer to an empty key")
	er = qpFail(t, e, http.StatusBadRequest, "InvalidParameterValue", "UntagQueue", "QueueUrl", u, "TagKey.1", "a", "TagKey.2", "")
	require.Equal(t, emptyKey, er.Message)
	er = qpFail(t, e, http.StatusBadRequest, "InvalidParameterValue", "UntagQueue", "QueueUrl", u)
	require.Equal(t, noKeys, er.Message)

	exJSONFail(t, e, http.StatusBadRequest, "InvalidParameterValue", emptyKey, "UntagQueue",
		map[string]any{"QueueUrl": u, "TagKeys": []string{"a", ""}})
	exJSONFail(t, e, http.StatusBadRequest, "InvalidParameterValue", noKeys, "UntagQueue",
		map[string]any{"QueueUrl": u, "TagKeys": []string{}})
	exJSONFail(t, e, http.StatusBadRequest, "MissingParameter", "The request must contain the parameter TagKeys.", "UntagQueue",
		map[string]any{"QueueUrl": u})
	require.Equal(t, map[string]string{"a": "1"}, qpTags(qpCall[qpListQueueTagsResult](t, e, "ListQueueTags", "QueueUrl", u).Tags))
}

// Item 6: with signature verification, a request dated more than 15 minutes ahead of the server's clock gets
// AWS's "Signature not yet current: <date> is still later than <now+15> (<now> + 15 min.)" (recorded, e.g.
// "Signature not yet current: 20180404T155030Z is still later than 20180404T070416Z (20180404T064916Z + 15
// min.)" from ECR; "... (20201122T214327Z + 15 min.)" from DynamoDB), one more than 15 minutes behind it the
// "Signature expired" text: 403 SignatureDoesNotMatch in both protocols. The date is checked before the
// signature, so the requests need none that verifies.
func TestExSignatureTime(t *testing.T) {
	t.Parallel()
	srv := sqsapi.NewServer(sqsapi.WithSignatureVerification(func(id string) (string, bool) { return "s3cr3t", id == "AKIDTIME" }))
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	const layout = "20060102T150405Z"
	send := func(useJSON bool, date time.Time) (int, string, string) {
		t.Helper()
		body, contentType := "Action=ListQueues&Version=2012-11-05", qpFormContentType
		if useJSON {
			body, contentType = "{}", "application/x-amz-json-1.0"
		}
		req, err := http.NewRequest(http.MethodPost, hs.URL+"/", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", contentType)
		if useJSON {
			req.Header.Set("X-Amz-Target", "AmazonSQS.ListQueues")
		}
		amz := date.UTC().Format(layout)
		req.Header.Set("X-Amz-Date", amz)
		req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDTIME/"+amz[:8]+"/us-east-1/sqs/aws4_request, "+
			"SignedHeaders=content-type;host;x-amz-date, Signature=0000000000000000000000000000000000000000000000000000000000000000")
		resp, err := hs.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		if useJSON {
			code, _, _ := strings.Cut(resp.Header.Get("X-Amzn-Query-Error"), ";")
			var doc struct{ Message string }
			require.NoError(t, json.Unmarshal(b, &doc), "%s", b)
			return resp.StatusCode, code, doc.Message
		}
		er := qpParseError(t, "ListQueues", resp.StatusCode, resp.Header, b)
		return resp.StatusCode, er.Code, er.Message
	}
	for _, useJSON := range []bool{false, true} {
		for _, shift := range []time.Duration{20 * time.Minute, -20 * time.Minute} {
			before := time.Now().UTC()
			status, code, message := send(useJSON, before.Add(shift))
			require.Equal(t, http.StatusForbidden, status, "json %v, shift %v: %s", useJSON, shift, message)
			require.Equal(t, "SignatureDoesNotMatch", code)
			re := `^Signature not yet current: (\d{8}T\d{6}Z) is still later than (\d{8}T\d{6}Z) \((\d{8}T\d{6}Z) \+ 15 min\.\)$`
			if shift < 0 {
				re = `^Signature expired: (\d{8}T\d{6}Z) is now earlier than (\d{8}T\d{6}Z) \((\d{8}T\d{6}Z) - 15 min\.\)$`
			}
			m := regexp.MustCompile(re).FindStringSubmatch(message)
			require.NotNil(t, m, "json %v, shift %v: message %q", useJSON, shift, message)
			require.Equal(t, before.Add(shift).Format(layout), m[1])
			limit, _ := time.Parse(layout, m[2])
			now, _ := time.Parse(layout, m[3])
			require.WithinDuration(t, before, now, 5*time.Second)
			require.Equal(t, now.Add(shift/20*15), limit, "now %s 15 minutes", map[bool]string{true: "+", false: "-"}[shift > 0])
		}
	}
}

// Item 4: AddPermission with a principal that is not a 12-digit account id ("*", an IAM ARN, an empty string)
// is 400 InvalidParameterValue "Value [<entry>] for parameter PrincipalId is invalid. Reason: Unable to
// verify." and changes nothing (recorded: MuleSoft's SQS connector test against AWS, with a random id). Item
// 6: the policy AddPermission writes keeps AWS's key order (Version, Id, Statement; Sid, Effect, Principal,
// Action, Resource), as GetQueueAttributes returns it.
func TestExAddPermissionPrincipals(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "ex-perm")
	for _, id := range []string{"*", "arn:aws:iam::123456789012:root", ""} {
		want := "Value [" + id + "] for parameter PrincipalId is invalid. Reason: Unable to verify."
		er := qpFail(t, e, http.StatusBadRequest, "InvalidParameterValue", "AddPermission", "QueueUrl", u, "Label", "l",
			"AWSAccountId.1", id, "ActionName.1", "SendMessage")
		require.Equal(t, want, er.Message)
		exJSONFail(t, e, http.StatusBadRequest, "InvalidParameterValue", want, "AddPermission",
			map[string]any{"QueueUrl": u, "Label": "l", "AWSAccountIds": []string{id}, "Actions": []string{"SendMessage"}})
	}
	got := qpNameValues(t, "All", qpCall[qpGetQueueAttributesResult](t, e, "GetQueueAttributes", "QueueUrl", u,
		"AttributeName.1", "All").Attributes)
	require.NotContains(t, got, "Policy", "a refused AddPermission changes nothing")

	arn := qpArn("ex-perm")
	qpCall[qpNoResult](t, e, "AddPermission", "QueueUrl", u, "Label", "q", "AWSAccountId.1", "111111111111",
		"ActionName.1", "SendMessage")
	exJSONCall(t, e, "AddPermission", map[string]any{"QueueUrl": u, "Label": "j",
		"AWSAccountIds": []string{"111111111111", "222222222222"}, "Actions": []string{"ReceiveMessage", "DeleteMessage"}}, nil)
	want := `{"Version":"2008-10-17","Id":"` + arn + `/SQSDefaultPolicy","Statement":[` +
		`{"Sid":"q","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111111111111:root"},"Action":"SQS:SendMessage","Resource":"` + arn + `"},` +
		`{"Sid":"j","Effect":"Allow","Principal":{"AWS":["arn:aws:iam::111111111111:root","arn:aws:iam::222222222222:root"]},` +
		`"Action":["SQS:ReceiveMessage","SQS:DeleteMessage"],"Resource":"` + arn + `"}]}`
	got = qpNameValues(t, "Policy", qpCall[qpGetQueueAttributesResult](t, e, "GetQueueAttributes", "QueueUrl", u,
		"AttributeName.1", "Policy").Attributes)
	require.Equal(t, want, got["Policy"], "query protocol")
	var attrs struct{ Attributes map[string]string }
	exJSONCall(t, e, "GetQueueAttributes", map[string]any{"QueueUrl": u, "AttributeNames": []string{"Policy"}}, &attrs)
	require.Equal(t, want, attrs.Attributes["Policy"], "JSON protocol")
}

// exQueryJSON sends a query-protocol request that asks for JSON (Accept: application/json), which must
// succeed, and returns its <Action>Result member as raw JSON, the request id checked.
func exQueryJSON(t *testing.T, e *qpEnv, action string, kv ...string) string {
	t.Helper()
	form := qpForm(kv...)
	form.Set("Action", action)
	form.Set("Version", qpVersion)
	status, header, body := e.qpRequest(t, http.MethodPost, "/", form, "Accept", "application/json")
	require.Equal(t, http.StatusOK, status, "%s: %s", action, body)
	require.Equal(t, "application/json", header.Get("Content-Type"))
	var doc map[string]map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(body, &doc), "%s", body)
	resp := doc[action+"Response"]
	var meta struct{ RequestId string }
	require.NoError(t, json.Unmarshal(resp["ResponseMetadata"], &meta))
	require.NotEmpty(t, meta.RequestId)
	return string(resp[action+"Result"])
}

// Item 2: a query request that asks for JSON (Accept: application/json) gets, for the actions whose answers
// in this format are on record, AWS's keys: ListQueues' list is "queueUrls", with explicit nulls for
// NextExclusiveStartQueueName, NextToken and an empty list (a 2020 capture, JuliaCloud/AWS.jl#127);
// ReceiveMessage's list is "messages", null when empty, each message's absent members null and its system
// attributes an object (aws-samples/serverless-patterns APIGateway-SQS-ReceiveMessages, 2024; JustSaying's
// capture, 2019); SendMessage's absent members are null (aws-samples/serverless-patterns). GetQueueAttributes
// keeps its recorded list of Name/Value entries. Answered in XML, nothing changes.
func TestExQueryJSONKeys(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	require.Equal(t, `{"NextExclusiveStartQueueName":null,"NextToken":null,"queueUrls":null}`,
		exQueryJSON(t, e, "ListQueues", "QueueNamePrefix", "ex-json"))
	u := qpCreate(t, e, "ex-json-a")
	u2 := qpCreate(t, e, "ex-json-b")
	require.Equal(t, `{"NextExclusiveStartQueueName":null,"NextToken":null,"queueUrls":["`+u+`","`+u2+`"]}`,
		exQueryJSON(t, e, "ListQueues", "QueueNamePrefix", "ex-json"))
	paged := exQueryJSON(t, e, "ListQueues", "QueueNamePrefix", "ex-json", "MaxResults", "1")
	require.Regexp(t, `^\{"NextExclusiveStartQueueName":null,"NextToken":"[^"]+","queueUrls":\["`+regexp.QuoteMeta(u)+`"\]\}$`, paged)

	require.Equal(t, `{"messages":null}`, exQueryJSON(t, e, "ReceiveMessage", "QueueUrl", u))
	// As API Gateway's integration of the recording sends it: a GET of the queue's URL.
	status, _, body := e.qpRequest(t, http.MethodGet, strings.TrimPrefix(u, e.base), qpForm("Action", "ReceiveMessage"),
		"Accept", "application/json")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, string(body), `"ReceiveMessageResult":{"messages":null}`)
	sent := exQueryJSON(t, e, "SendMessage", "QueueUrl", u, "MessageBody", "foobar")
	var sr struct{ MessageId string }
	require.NoError(t, json.Unmarshal([]byte(sent), &sr))
	require.Equal(t, `{"MD5OfMessageAttributes":null,"MD5OfMessageBody":"`+qpFoobarMD5+`","MD5OfMessageSystemAttributes":null,`+
		`"MessageId":"`+sr.MessageId+`","SequenceNumber":null}`, sent)
	got := exQueryJSON(t, e, "ReceiveMessage", "QueueUrl", u, "VisibilityTimeout", "0")
	var rr struct {
		Messages []struct{ ReceiptHandle string } `json:"messages"`
	}
	require.NoError(t, json.Unmarshal([]byte(got), &rr), got)
	require.Len(t, rr.Messages, 1, got)
	require.Equal(t, `{"messages":[{"Attributes":null,"Body":"foobar","MD5OfBody":"`+qpFoobarMD5+`","MD5OfMessageAttributes":null,`+
		`"MessageAttributes":null,"MessageId":"`+sr.MessageId+`","ReceiptHandle":"`+rr.Messages[0].ReceiptHandle+`"}]}`, got)
	got = exQueryJSON(t, e, "ReceiveMessage", "QueueUrl", u, "VisibilityTimeout", "0", "AttributeName.1", "ApproximateReceiveCount",
		"AttributeName.2", "SenderId")
	require.Contains(t, got, `"Attributes":{"SenderId":"`+qpAccount+`","ApproximateReceiveCount":"2"}`, "the system attributes, an object")

	require.Equal(t, `{"Attributes":[{"Name":"VisibilityTimeout","Value":"30"}]}`,
		exQueryJSON(t, e, "GetQueueAttributes", "QueueUrl", u, "AttributeName.1", "VisibilityTimeout"), "as recorded, unchanged")

	// In XML, the member names of the model.
	r := qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u)
	require.Len(t, r.Messages, 1)
	require.Len(t, qpCall[qpListQueuesResult](t, e, "ListQueues", "QueueNamePrefix", "ex-json").QueueURLs, 2)
}

// exSigned returns the header pairs of a request signed (as far as a server without verification looks) for
// region.
func exSigned(region string) []string {
	return []string{"X-Amz-Date", "20250304T050607Z", "Authorization", "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20250304/" +
		region + "/sqs/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=" + strings.Repeat("0", 64)}
}

// Item 5: two regions on one endpoint. A client per region, both pointed at the server's one address, get
// different URLs for queue-x: the default region's /<account>/queue-x, another region's
// /queue/<region>/<account>/queue-x (LocalStack's path form), since the host names no region. Each URL
// reaches its region's queue: with a client signed for that region, and unsigned, posted to the URL itself.
// The forms answered before are accepted still: /<account>/<name> in the request's region, the name alone, a
// host naming the region (whose URLs keep the first form).
func TestExRegionalURLs(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	_, port, _ := strings.Cut(strings.TrimPrefix(e.base, "http://"), ":")
	wantDefault := e.base + "/" + qpAccount + "/queue-x"
	wantEU := e.base + "/queue/eu-west-1/" + qpAccount + "/queue-x"

	// Query protocol, a signed client per region.
	queryCall := func(region, action string, kv ...string) []byte {
		t.Helper()
		form := qpForm(kv...)
		form.Set("Action", action)
		form.Set("Version", qpVersion)
		status, _, body := e.qpRequest(t, http.MethodPost, "/", form, exSigned(region)...)
		require.Equal(t, http.StatusOK, status, "%s as %s: %s", action, region, body)
		return body
	}
	urlOf := func(body []byte) string {
		var r struct {
			QueueURL string `xml:"CreateQueueResult>QueueUrl"`
			GetURL   string `xml:"GetQueueUrlResult>QueueUrl"`
		}
		require.NoError(t, xml.Unmarshal(body, &r))
		return r.QueueURL + r.GetURL
	}
	require.Equal(t, wantDefault, urlOf(queryCall("us-east-1", "CreateQueue", "QueueName", "queue-x")))
	require.Equal(t, wantEU, urlOf(queryCall("eu-west-1", "CreateQueue", "QueueName", "queue-x")))
	require.Equal(t, wantEU, urlOf(queryCall("eu-west-1", "GetQueueUrl", "QueueName", "queue-x")))
	require.Contains(t, string(queryCall("eu-west-1", "ListQueues")), "<QueueUrl>"+wantEU+"</QueueUrl>")
	queryCall("us-east-1", "SendMessage", "QueueUrl", wantDefault, "MessageBody", "in us-east-1")
	queryCall("eu-west-1", "SendMessage", "QueueUrl", wantEU, "MessageBody", "in eu-west-1")
	queryCall("eu-west-1", "SendMessage", "QueueUrl", wantDefault, "MessageBody", "old form, signed for eu-west-1")
	queryCall("eu-west-1", "SendMessage", "QueueUrl", "queue-x", "MessageBody", "the name alone")
	// Unsigned, to the URL itself: the path names the region.
	status, _, body := e.qpRequest(t, http.MethodPost, strings.TrimPrefix(wantEU, e.base),
		qpForm("Action", "SendMessage", "Version", qpVersion, "MessageBody", "unsigned, to the URL"))
	require.Equal(t, http.StatusOK, status, "%s", body)
	eu := qpMessages(t, e, "queue-x")
	require.Len(t, eu, 1, "the default region's queue-x holds one message")
	euQ := exQueueIn(t, e, "eu-west-1", "queue-x")
	var bodies []string
	for m := range euQ.Messages() {
		bodies = append(bodies, m.Body)
	}
	require.Equal(t, []string{"in eu-west-1", "old form, signed for eu-west-1", "the name alone", "unsigned, to the URL"}, bodies)

	// JSON protocol: the same URLs.
	jsonURL := func(region, action string, in map[string]any) string {
		t.Helper()
		b, _ := json.Marshal(in)
		req, err := http.NewRequest(http.MethodPost, e.base+"/", bytes.NewReader(b))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
		h := exSigned(region)
		req.Header.Set(h[0], h[1])
		req.Header.Set(h[2], h[3])
		resp, err := e.hc.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out struct {
			QueueUrl  string
			QueueUrls []string
		}
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		return out.QueueUrl + strings.Join(out.QueueUrls, " ")
	}
	require.Equal(t, wantEU, jsonURL("eu-west-1", "GetQueueUrl", map[string]any{"QueueName": "queue-x"}))
	require.Equal(t, wantDefault, jsonURL("us-east-1", "GetQueueUrl", map[string]any{"QueueName": "queue-x"}))
	require.Equal(t, wantEU, jsonURL("eu-west-1", "ListQueues", map[string]any{"QueueNamePrefix": "queue-x"}))

	// A host that names the region keeps the first form: the host tells the regions apart.
	named := "sqs.eu-west-1.localhost:" + port
	req, err := http.NewRequest(http.MethodPost, e.base+"/", strings.NewReader(qpForm("Action", "GetQueueUrl",
		"Version", qpVersion, "QueueName", "queue-x").Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", qpFormContentType)
	req.Host = named
	resp, err := e.hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.Equal(t, "http://"+named+"/"+qpAccount+"/queue-x", urlOf(body))
}

// exQueueIn returns the queue of that name in a region of the test account.
func exQueueIn(t *testing.T, e *qpEnv, region, name string) catalog.Queue {
	t.Helper()
	for _, q := range e.srv.Catalog().Queues() {
		if q.Namespace().Region == region && q.Name() == name {
			return q
		}
	}
	t.Fatalf("no queue %s in %s", name, region)
	return catalog.Queue{}
}

package sqsapi_test

// Query-protocol (form post, XML) tests of the attribute rules of conformance_attributes_test.go: the
// filters of ReceiveMessage, message attribute names and values, server-side encryption and AddPermission.
// The same rules hold over both protocols; these send the raw form parameters a query client sends.

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// qpFilterAttrs are the attributes of LocalStack's AWS-validated filter test.
var qpFilterAttrs = map[string]qpAttr{
	"Help.Me": {DataType: "String", String: "Me"},
	"Hello":   {DataType: "String", String: "There"},
	"General": {DataType: "String", String: "Kenobi"},
}

// qpList renders a list parameter: prefix.1, prefix.2, ...
func qpList(prefix string, values ...string) []string {
	var kv []string
	for i, v := range values {
		kv = append(kv, prefix+"."+strconv.Itoa(i+1), v)
	}
	return kv
}

// MessageAttributeName.N filters as in AWS: All, .*, *, prefix.*, exact names; MD5OfMessageAttributes over
// the selection (AWS's recorded digests), absent with nothing selected. AttributeName.N selects system
// attributes by All or exact names.
func TestQpReceiveAttributeFilters(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	url := qpCreate(t, e, "qp-filters", "VisibilityTimeout", "0")
	qpCall[qpSendMessageResult](t, e, "SendMessage", append([]string{"QueueUrl", url, "MessageBody", "msg"},
		qpAttrParams("MessageAttribute", qpFilterAttrs)...)...)
	cases := []struct {
		filter []string
		want   []string
		md5    string
	}{
		{nil, nil, ""},
		{[]string{"All"}, []string{"General", "Hello", "Help.Me"}, "4c360f3fdafd970e05fae2f149d997f5"},
		{[]string{"*"}, []string{"General", "Hello", "Help.Me"}, "4c360f3fdafd970e05fae2f149d997f5"},
		{[]string{".*"}, []string{"General", "Hello", "Help.Me"}, "4c360f3fdafd970e05fae2f149d997f5"},
		{[]string{"Foo", "Help"}, nil, ""},
		{[]string{"Hello", "General"}, []string{"General", "Hello"}, "fca026605781cb4126a1e9044df24232"},
		{[]string{"Foo", "Hello"}, []string{"Hello"}, "a311262e065454b75da111d535b8dacd"},
		{[]string{"Hel.*"}, []string{"Hello", "Help.Me"}, "83fee93c1bcd8b9a5a923ffacdc636c7"},
		{[]string{"AWS."}, nil, ""},
		{[]string{"..foo"}, nil, ""},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.filter, ","), func(t *testing.T) {
			r := qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", append([]string{"QueueUrl", url},
				qpList("MessageAttributeName", tc.filter...)...)...)
			require.Len(t, r.Messages, 1)
			got := qpMessageAttrs(t, r.Messages[0])
			var names []string
			for n, a := range got {
				names = append(names, n)
				require.Equal(t, qpFilterAttrs[n], a)
			}
			require.ElementsMatch(t, tc.want, names)
			require.Equal(t, tc.md5, r.Messages[0].MD5OfMessageAttributes, "MD5OfMessageAttributes of the selection")
			if len(got) > 0 {
				require.Equal(t, qpMD5OfAttributes(got), r.Messages[0].MD5OfMessageAttributes)
			}
		})
	}
	for _, tc := range []struct {
		names []string
		want  []string
	}{
		{[]string{"All"}, []string{"ApproximateFirstReceiveTimestamp", "ApproximateReceiveCount", "SenderId", "SentTimestamp"}},
		{[]string{"SenderId", "SequenceNumber"}, []string{"SenderId"}},
		{[]string{"Sent.*"}, nil},
	} {
		r := qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", append([]string{"QueueUrl", url},
			qpList("AttributeName", tc.names...)...)...)
		require.Len(t, r.Messages, 1)
		var got []string
		for n := range qpNameValues(t, "Attribute", r.Messages[0].Attributes) {
			got = append(got, n)
		}
		require.ElementsMatch(t, tc.want, got, "AttributeName %v", tc.names)
	}
}

// Attribute names of any script are accepted and returned; bad names and values are InvalidParameterValue,
// a bad body InvalidMessageContents; nothing rejected is stored. Form values are bytes: invalid UTF-8 in a
// body or value is rejected, never replaced.
func TestQpMessageAttributeNamesAndValues(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	url := qpCreate(t, e, "qp-attr-names")
	send := func(body, name, value string) []string {
		return append([]string{"QueueUrl", url, "MessageBody", body}, qpAttrParams("MessageAttribute",
			map[string]qpAttr{name: {DataType: "String", String: value}})...)
	}
	for _, name := range []string{"attr.1øßä", "日本語.名前", "Ωμέγα_1"} {
		sent := qpCall[qpSendMessageResult](t, e, "SendMessage", send("test", name, "Valida")...)
		r := qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", url, "MessageAttributeName.1", "All")
		require.Len(t, r.Messages, 1)
		require.Equal(t, map[string]qpAttr{name: {DataType: "String", String: "Valida"}}, qpMessageAttrs(t, r.Messages[0]))
		require.Equal(t, sent.MD5OfMessageAttributes, r.Messages[0].MD5OfMessageAttributes)
		qpCall[qpNoResult](t, e, "DeleteMessage", "QueueUrl", url, "ReceiptHandle", r.Messages[0].ReceiptHandle)
	}
	for _, tc := range []struct {
		name, body, attr, value string
		code, msg               string
	}{
		{"AWS. prefix", "test", "aWs.-Invalid-attr", "v", "InvalidParameterValue", ""},
		{"Amazon. prefix", "test", "AMAZON.-Invalid-attr", "v", "InvalidParameterValue", ""},
		{"section sign", "test", "Invalid-§-attr", "v", "InvalidParameterValue", ""},
		{"257 characters", "test", strings.Repeat("L", 257), "v", "InvalidParameterValue", ""},
		{"trailing period", "test", "Invalid.", "v", "InvalidParameterValue", ""},
		{"double period", "test", "Invalid..Name", "v", "InvalidParameterValue", ""},
		{"invalid UTF-8 name", "test", "a\xffb", "v", "InvalidParameterValue", ""},
		{"value control characters", "test", "attr1", "Invalid-\x08,\x0b", "InvalidParameterValue",
			"Invalid message attribute: attribute \"attr1\": the value has a character SQS does not allow (the characters of a message body)."},
		{"value invalid UTF-8", "test", "attr1", "a\xffb", "InvalidParameterValue", ""},
		{"value encoded surrogate", "test", "attr1", "a\xed\xa0\x80", "InvalidParameterValue", ""},
		{"body invalid UTF-8", "a\xffb", "k", "v", "InvalidMessageContents",
			"Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF"},
		{"body encoded surrogate", "a\xed\xa0\x80", "k", "v", "InvalidMessageContents", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			er := qpFail(t, e, http.StatusBadRequest, tc.code, "SendMessage", send(tc.body, tc.attr, tc.value)...)
			if tc.msg != "" {
				require.Equal(t, tc.msg, er.Message)
			}
			require.Empty(t, qpMessages(t, e, "qp-attr-names"), "nothing stored")
		})
	}
}

// qpSSE returns the encryption attributes of GetQueueAttributes All.
func qpSSE(t *testing.T, e *qpEnv, url string) map[string]string {
	t.Helper()
	r := qpCall[qpGetQueueAttributesResult](t, e, "GetQueueAttributes", "QueueUrl", url, "AttributeName.1", "All")
	out := map[string]string{}
	for k, v := range qpNameValues(t, "Attribute", r.Attributes) {
		if k == "KmsMasterKeyId" || k == "KmsDataKeyReusePeriodSeconds" || k == "SqsManagedSseEnabled" {
			out[k] = v
		}
	}
	return out
}

// The encryption attributes over the query protocol: SqsManagedSseEnabled true on a new queue; KMS and
// SQS-managed encryption in one request is InvalidAttributeName with AWS's text, for CreateQueue and
// SetQueueAttributes, and changes nothing; a KMS key switches SQS-managed encryption off; emptying it
// removes KmsDataKeyReusePeriodSeconds.
func TestQpServerSideEncryption(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	url := qpCreate(t, e, "qp-sse")
	require.Equal(t, map[string]string{"SqsManagedSseEnabled": "true"}, qpSSE(t, e, url), "a new queue")

	set := func(kv ...string) []string {
		out := []string{"QueueUrl", url}
		for i := 0; i < len(kv); i += 2 {
			n := strconv.Itoa(i/2 + 1)
			out = append(out, "Attribute."+n+".Name", kv[i], "Attribute."+n+".Value", kv[i+1])
		}
		return out
	}
	er := qpFail(t, e, http.StatusBadRequest, "InvalidAttributeName", "SetQueueAttributes",
		set("KmsMasterKeyId", "testKeyId", "SqsManagedSseEnabled", "true")...)
	require.Equal(t, "You can use one type of server-side encryption (SSE) at one time. You can either enable KMS SSE or SQS SSE.", er.Message)
	require.Equal(t, map[string]string{"SqsManagedSseEnabled": "true"}, qpSSE(t, e, url), "unchanged")

	er = qpFail(t, e, http.StatusBadRequest, "InvalidAttributeName", "CreateQueue", "QueueName", "qp-sse-both",
		"Attribute.1.Name", "KmsMasterKeyId", "Attribute.1.Value", "k", "Attribute.2.Name", "SqsManagedSseEnabled", "Attribute.2.Value", "true")
	require.Equal(t, "You can use one type of server-side encryption (SSE) at one time. You can either enable KMS SSE or SQS SSE.", er.Message)
	_, ok := e.srv.Queue("qp-sse-both")
	require.False(t, ok, "the queue was not created")

	qpCall[qpNoResult](t, e, "SetQueueAttributes", set("KmsMasterKeyId", "k")...)
	require.Equal(t, map[string]string{"KmsMasterKeyId": "k", "KmsDataKeyReusePeriodSeconds": "300", "SqsManagedSseEnabled": "false"},
		qpSSE(t, e, url))
	qpCall[qpNoResult](t, e, "SetQueueAttributes", set("KmsDataKeyReusePeriodSeconds", "6000")...)
	require.Equal(t, "6000", qpSSE(t, e, url)["KmsDataKeyReusePeriodSeconds"])
	qpCall[qpNoResult](t, e, "SetQueueAttributes", set("KmsMasterKeyId", "")...)
	require.Equal(t, map[string]string{"SqsManagedSseEnabled": "false"}, qpSSE(t, e, url), "no KMS attributes once the key is emptied")
	qpCall[qpNoResult](t, e, "SetQueueAttributes", set("SqsManagedSseEnabled", "true")...)
	require.Equal(t, map[string]string{"SqsManagedSseEnabled": "true"}, qpSSE(t, e, url))
}

// AddPermission over the query protocol (AWSAccountId.N, ActionName.N): AWS's policy shape, OverLimit (403)
// beyond 7 actions, owner-only actions refused, RemovePermission of an unknown label refused.
func TestQpPermissions(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	url := qpCreate(t, e, "qp-perm")
	arn := qpArn("qp-perm")
	add := func(label string, accounts []string, actions ...string) []string {
		kv := append([]string{"QueueUrl", url, "Label", label}, qpList("AWSAccountId", accounts...)...)
		return append(kv, qpList("ActionName", actions...)...)
	}
	policy := func() map[string]any {
		r := qpCall[qpGetQueueAttributesResult](t, e, "GetQueueAttributes", "QueueUrl", url, "AttributeName.1", "Policy")
		raw, ok := qpNameValues(t, "Attribute", r.Attributes)["Policy"]
		if !ok {
			return nil
		}
		var doc map[string]any
		require.NoError(t, json.Unmarshal([]byte(raw), &doc))
		return doc
	}
	qpCall[qpNoResult](t, e, "AddPermission", add("p1", []string{"111111111111"}, "SendMessage")...)
	qpCall[qpNoResult](t, e, "AddPermission", add("p2", []string{"111111111111", "222222222222"}, "ReceiveMessage", "DeleteMessage")...)
	want := map[string]any{"Version": "2008-10-17", "Id": arn + "/SQSDefaultPolicy", "Statement": []any{
		map[string]any{"Sid": "p1", "Effect": "Allow", "Principal": map[string]any{"AWS": "arn:aws:iam::111111111111:root"},
			"Action": "SQS:SendMessage", "Resource": arn},
		map[string]any{"Sid": "p2", "Effect": "Allow",
			"Principal": map[string]any{"AWS": []any{"arn:aws:iam::111111111111:root", "arn:aws:iam::222222222222:root"}},
			"Action":    []any{"SQS:ReceiveMessage", "SQS:DeleteMessage"}, "Resource": arn},
	}}
	require.Equal(t, want, policy())

	er := qpFail(t, e, http.StatusForbidden, "OverLimit", "AddPermission", add("p3", []string{"111111111111"},
		"SendMessage", "ReceiveMessage", "DeleteMessage", "ChangeMessageVisibility", "GetQueueAttributes", "GetQueueUrl",
		"PurgeQueue", "ListDeadLetterSourceQueues")...)
	require.Equal(t, "8 Actions were found, maximum allowed is 7.", er.Message)
	er = qpFail(t, e, http.StatusBadRequest, "InvalidParameterValue", "AddPermission", add("p3", []string{"111111111111"}, "TagQueue")...)
	require.Equal(t, "Value SQS:TagQueue for parameter ActionName is invalid. Reason: Only the queue owner is allowed to invoke this action.", er.Message)
	er = qpFail(t, e, http.StatusBadRequest, "InvalidParameterValue", "AddPermission", add("p3", []string{"111111111111"}, "SendMessageBatch")...)
	require.Equal(t, "Value SQS:SendMessageBatch for parameter ActionName is invalid. Reason: Please refer to the appropriate WSDL for a list of valid actions.", er.Message)
	require.Equal(t, want, policy(), "refused calls change nothing")

	qpCall[qpNoResult](t, e, "RemovePermission", "QueueUrl", url, "Label", "p1")
	qpCall[qpNoResult](t, e, "RemovePermission", "QueueUrl", url, "Label", "p2")
	require.Nil(t, policy(), "no Policy without statements")
	er = qpFail(t, e, http.StatusBadRequest, "InvalidParameterValue", "RemovePermission", "QueueUrl", url, "Label", "p2")
	require.Equal(t, "Value p2 for parameter Label is invalid. Reason: can't find label.", er.Message)
}

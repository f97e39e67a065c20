package conformance_test

// aws-sdk-go-v2 tests of the attribute rules that AWS's recorded answers fix (LocalStack's AWS-validated
// test_sqs snapshots): the filters of ReceiveMessage, message attribute names and values, server-side
// encryption attributes, and the policy AddPermission writes. Each case asserts the error as an SDK user
// sees it (code, status, message) and what the server kept. The top-level names start with "cf".

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"
)

// cfFilterAttrs are the attributes of LocalStack's test_receive_message_message_attribute_names_filters.
func cfFilterAttrs() map[string]types.MessageAttributeValue {
	return map[string]types.MessageAttributeValue{
		"Help.Me": sdStr("Me"), "Hello": sdStr("There"), "General": sdStr("Kenobi"),
	}
}

// ReceiveMessage selects message attributes by MessageAttributeNames as AWS does: "All", ".*" and "*" select
// all of them, "prefix.*" those whose names start with prefix, other strings exact names; names no attribute
// has select nothing, and illegal names ("AWS.", "..foo") are no error. MD5OfMessageAttributes covers the
// selection only (the digests are AWS's recorded ones), and is absent, with the attributes, when nothing is
// selected.
func TestCfReceiveMessageAttributeFilters(t *testing.T) {
	t.Parallel()
	all := []string{"General", "Hello", "Help.Me"}
	cases := []struct {
		filter []string
		want   []string // selected names, sorted
		md5    string   // AWS's recorded MD5OfMessageAttributes of the selection
	}{
		{nil, nil, ""},
		{[]string{"All"}, all, "4c360f3fdafd970e05fae2f149d997f5"},
		{[]string{"*"}, all, "4c360f3fdafd970e05fae2f149d997f5"},
		{[]string{".*"}, all, "4c360f3fdafd970e05fae2f149d997f5"},
		{[]string{"Foo", "Help"}, nil, ""},
		{[]string{"Hello", "General"}, []string{"General", "Hello"}, "fca026605781cb4126a1e9044df24232"},
		{[]string{"Foo", "Hello"}, []string{"Hello"}, "a311262e065454b75da111d535b8dacd"},
		{[]string{"Hel.*"}, []string{"Hello", "Help.Me"}, "83fee93c1bcd8b9a5a923ffacdc636c7"},
		{[]string{"Help.*"}, []string{"Help.Me"}, ""},
		{[]string{"Help.Me.*"}, []string{"Help.Me"}, ""},
		{[]string{"Gen.*", "Hello"}, []string{"General", "Hello"}, "fca026605781cb4126a1e9044df24232"},
		{[]string{"hello"}, nil, ""}, // names are case-sensitive
		{[]string{"AWS."}, nil, ""},
		{[]string{"..foo"}, nil, ""},
		{[]string{"Hel*"}, nil, ""}, // a prefix ends in ".*"
	}
	e := sdSetup(t)
	url := e.create("cf-filters", sdKV("VisibilityTimeout", "0"))
	sent := e.send(url, "msg", sdAttrs(cfFilterAttrs()))
	require.Equal(t, "4c360f3fdafd970e05fae2f149d997f5", aws.ToString(sent.MD5OfMessageAttributes), "AWS's digest of the three")
	for _, tc := range cases {
		t.Run(strings.Join(tc.filter, ","), func(t *testing.T) {
			ms := e.receive(url, &sqs.ReceiveMessageInput{MessageAttributeNames: tc.filter})
			require.Len(t, ms, 1)
			m := ms[0]
			var got []string
			for name, v := range m.MessageAttributes {
				got = append(got, name)
				require.Equal(t, cfFilterAttrs()[name], v, "attribute %s", name)
			}
			require.ElementsMatch(t, tc.want, got, "selected attributes")
			if len(tc.want) == 0 {
				require.Nil(t, m.MD5OfMessageAttributes, "no MD5OfMessageAttributes without a selected attribute")
				return
			}
			want := map[string]types.MessageAttributeValue{}
			for _, n := range tc.want {
				want[n] = cfFilterAttrs()[n]
			}
			require.Equal(t, sdAttrMD5(want), aws.ToString(m.MD5OfMessageAttributes), "digest of the selection")
			if tc.md5 != "" {
				require.Equal(t, tc.md5, aws.ToString(m.MD5OfMessageAttributes), "AWS's recorded digest")
			}
		})
	}
}

// The system attributes of a receive: "All" or exact names, by AttributeNames or MessageSystemAttributeNames;
// an attribute the message does not have (SequenceNumber on a standard queue) is left out, and a prefix form
// selects nothing (AWS documents no wildcard for them).
func TestCfReceiveSystemAttributeFilters(t *testing.T) {
	t.Parallel()
	std := []string{"ApproximateFirstReceiveTimestamp", "ApproximateReceiveCount", "SenderId", "SentTimestamp"}
	type (
		old = []types.QueueAttributeName
		sys = []types.MessageSystemAttributeName
	)
	cases := []struct {
		name  string
		old   old      // AttributeNames
		sys   sys      // MessageSystemAttributeNames
		msg   []string // MessageAttributeNames
		want  []string
		attrs bool // message attributes selected too
	}{
		{name: "All", old: old{"All"}, want: std},
		{name: "All+All", old: old{"All"}, msg: []string{"All"}, want: std, attrs: true},
		{name: "system All", sys: sys{"All"}, want: std},
		{name: "SenderId", old: old{"SenderId"}, want: []string{"SenderId"}},
		{name: "SenderId,SequenceNumber", old: old{"SenderId", "SequenceNumber"}, want: []string{"SenderId"}},
		{name: "system SentTimestamp", sys: sys{"SentTimestamp"}, want: []string{"SentTimestamp"}},
		{name: "both lists", old: old{"SenderId"}, sys: sys{"ApproximateReceiveCount"}, want: []string{"ApproximateReceiveCount", "SenderId"}},
		{name: "prefix", sys: sys{"Sent.*"}},
		{name: "none"},
	}
	e := sdSetup(t)
	url := e.create("cf-sysfilters", sdKV("VisibilityTimeout", "0"))
	e.send(url, "msg", sdWith("Foo", sdStr("Bar")))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := cfOldNames(tc.old)
			in.MessageSystemAttributeNames, in.MessageAttributeNames = tc.sys, tc.msg
			ms := e.receive(url, &in)
			require.Len(t, ms, 1)
			var got []string
			for n := range ms[0].Attributes {
				got = append(got, n)
			}
			require.ElementsMatch(t, tc.want, got, "system attributes")
			if tc.attrs {
				require.Equal(t, "ae7155c6026991b6d54b11589678bf9c", aws.ToString(ms[0].MD5OfMessageAttributes), "AWS's recorded digest of Foo=Bar")
			} else {
				require.Empty(t, ms[0].MessageAttributes)
			}
		})
	}
}

// cfOldNames is a receive with the deprecated AttributeNames.
func cfOldNames(names []types.QueueAttributeName) sqs.ReceiveMessageInput {
	//lint:ignore SA1019 the deprecated AttributeNames is still on the wire, and SDKs still send it
	return sqs.ReceiveMessageInput{AttributeNames: names}
}

// Message attribute names follow AWS: letters and digits of any script, '_', '-', '.'; up to 256
// characters; no leading or trailing period, no ".."; no AWS./Amazon. prefix. A rejected send stores
// nothing; an accepted one returns the attribute, name and value, on receive.
func TestCfMessageAttributeNames(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	url := e.create("cf-names", nil)
	for _, name := range []string{"attr.1øßä", "Ωμέγα_1", "日本語.名前", "a-b_c.D9", strings.Repeat("ø", 256)} {
		sent := e.send(url, "test", sdWith(name, sdStr("Valida")))
		m := e.receive(url, &sqs.ReceiveMessageInput{MessageAttributeNames: []string{"All"}})
		require.Len(t, m, 1, "name %q", name)
		require.Equal(t, map[string]types.MessageAttributeValue{name: sdStr("Valida")}, m[0].MessageAttributes, "name %q", name)
		require.Equal(t, aws.ToString(sent.MD5OfMessageAttributes), aws.ToString(m[0].MD5OfMessageAttributes))
		require.NoError(t, e.deleteMessage(url, aws.ToString(m[0].ReceiptHandle)))
	}
	for _, name := range []string{"aWs.-Invalid-attr", "AMAZON.-Invalid-attr", ".-Invalid-attr", "Invalid-!-attr",
		`Invalid-"-attr`, "Invalid-§-attr", "Invalid-(-attr", "Invalid-?-attr", strings.Repeat("L", 257), "Invalid.",
		"Invalid..Name", "a b", "x²"} {
		_, err := e.trySend(url, "test", sdWith(name, sdStr("Valid")))
		sdWantErr(t, err, sdBadParam, "")
		require.Equal(t, "0/0/0", e.counts(url), "a rejected send (name %q) stores nothing", name)
	}
}

// A String attribute value with a character a body could not hold is InvalidParameterValue (AWS's
// test_invalid_string_attributes_cause_invalid_parameter_value_error), where the same character in the body
// is InvalidMessageContents; the message is not stored.
func TestCfMessageAttributeValueCharacters(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	url := e.create("cf-values", nil)
	for _, v := range []string{"Invalid-\x08,\x0b", "\x00", "\uFFFE", "a\uFFFFb"} {
		_, err := e.trySend(url, "test", sdWith("attr1", sdStr(v)))
		sdWantErr(t, err, sdBadParam, "…attribute \"attr1\": the value has a character SQS does not allow (the characters of a message body).")
		_, err = e.trySend(url, "test", sdWith("attr1", sdTyped("String.custom", v)))
		sdWantErr(t, err, sdBadParam, "")
		_, err = e.trySend(url, "Invalid-"+v)
		sdWantErr(t, err, sdBadContents, "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | "+
			"#x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF")
	}
	require.Equal(t, "0/0/0", e.counts(url), "nothing stored")
	out, err := e.c.SendMessageBatch(e.ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("ok"), MessageBody: aws.String("fine")},
		{Id: aws.String("bad"), MessageBody: aws.String("fine"), MessageAttributes: map[string]types.MessageAttributeValue{"attr1": sdStr("a\x08")}},
	}})
	require.NoError(t, err)
	require.Len(t, out.Successful, 1)
	sdWantFailed(t, out.Failed, "bad", sdBadParam, "…the value has a character SQS does not allow (the characters of a message body).")
	require.Equal(t, "1/0/0", e.counts(url), "the valid entry alone is stored")
}

// cfRawJSON sends body as is (no SDK, no re-encoding) as a JSON-protocol request of action, and returns the
// status, the query error code and the response's message.
func cfRawJSON(t *testing.T, e *sdEnv, action, body string) (int, string, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "http://localhost/", bytes.NewReader([]byte(body)))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	code, _, _ := strings.Cut(rec.Header().Get("X-Amzn-Query-Error"), ";")
	var out struct {
		Message string `json:"message"`
	}
	if rec.Code != http.StatusOK {
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out), "error body %s", rec.Body)
	}
	return rec.Code, code, out.Message
}

// The JSON protocol rejects a body or String attribute value that is not valid UTF-8, or holds a lone
// surrogate escape, as the query protocol rejects the same bytes: InvalidMessageContents for the body,
// InvalidParameterValue for the value, nothing stored. It never stores U+FFFD in their place. A surrogate
// pair is one character and is kept; a literal U+FFFD is a valid character.
func TestCfJSONInvalidUTF8(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	url := e.create("cf-utf8", nil)
	q, err := json.Marshal(url)
	require.NoError(t, err)
	send := func(body, attr string) string {
		s := `{"QueueUrl":` + string(q) + `,"MessageBody":"` + body + `"`
		if attr != "" {
			s += `,"MessageAttributes":{"k":{"DataType":"String","StringValue":"` + attr + `"}}`
		}
		return s + "}"
	}
	cases := []struct {
		name, body, attr string
		code             string
	}{
		{"body lone high surrogate", `a\ud800b`, "", sdBadContents},
		{"body lone low surrogate", `a\udc00`, "", sdBadContents},
		{"body high surrogate at the end", `a\ud83d`, "", sdBadContents},
		{"body two high surrogates", `\ud83d\ud83d`, "", sdBadContents},
		{"body reversed pair", `\ude00\ud83d`, "", sdBadContents},
		{"body invalid UTF-8", "a\xffb", "", sdBadContents},
		{"body invalid UTF-8 with an escape", "a\xff\\nb", "", sdBadContents},
		{"body truncated UTF-8", "a\xc3", "", sdBadContents},
		{"body encoded surrogate", "a\xed\xa0\x80", "", sdBadContents},
		{"value lone surrogate", "ok", `a\ud800b`, sdBadParam},
		{"value invalid UTF-8", "ok", "a\xffb", sdBadParam},
		{"value with a valid escape and invalid UTF-8", "ok", "\\t\xfe", sdBadParam},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, code, msg := cfRawJSON(t, e, "SendMessage", send(tc.body, tc.attr))
			require.Equal(t, http.StatusBadRequest, status, "%s: %s", code, msg)
			require.Equal(t, tc.code, code, msg)
			if tc.code == sdBadContents {
				require.Equal(t, "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to "+
					"#xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF", msg)
			}
			require.Equal(t, "0/0/0", e.counts(url), "nothing stored")
		})
	}
	for _, body := range []string{`\ud83d\ude00`, "😀", `\ufffd`, "\uFFFD", `a\u00e9\u0041`} {
		status, code, msg := cfRawJSON(t, e, "SendMessage", send(body, body))
		require.Equal(t, http.StatusOK, status, "%s: %s %s", body, code, msg)
	}
	ms := e.receive(url, &sqs.ReceiveMessageInput{MaxNumberOfMessages: 10, MessageAttributeNames: []string{"All"}})
	var bodies []string
	for _, m := range ms {
		bodies = append(bodies, aws.ToString(m.Body))
		require.Equal(t, aws.ToString(m.Body), aws.ToString(m.MessageAttributes["k"].StringValue))
	}
	require.ElementsMatch(t, []string{"😀", "😀", "\uFFFD", "\uFFFD", "aéA"}, bodies, "valid strings are kept exactly")
}

// cfSSE returns the encryption attributes GetQueueAttributes All shows.
func cfSSE(e *sdEnv, url string) map[string]string {
	e.t.Helper()
	out := map[string]string{}
	for k, v := range e.attrs(url, types.QueueAttributeNameAll) {
		switch k {
		case "KmsMasterKeyId", "KmsDataKeyReusePeriodSeconds", "SqsManagedSseEnabled":
			out[k] = v
		}
	}
	return out
}

const cfSSEText = "You can use one type of server-side encryption (SSE) at one time. You can either enable KMS SSE or SQS SSE."

// GetQueueAttributes All of a new queue names what AWS's shows (test_create_and_update_queue_attributes,
// test_fifo_set_content_based_deduplication_strategy): SqsManagedSseEnabled true, no KMS attributes, no
// Policy or redrive policies; a FIFO queue adds its four attributes.
func TestCfNewQueueAttributes(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	std := []string{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesDelayed", "ApproximateNumberOfMessagesNotVisible",
		"CreatedTimestamp", "DelaySeconds", "LastModifiedTimestamp", "MaximumMessageSize", "MessageRetentionPeriod",
		"QueueArn", "ReceiveMessageWaitTimeSeconds", "SqsManagedSseEnabled", "VisibilityTimeout"}
	for _, tc := range []struct {
		name  string
		attrs map[string]string
		want  []string
	}{
		{"cf-new", nil, std},
		{"cf-new.fifo", sdKV("FifoQueue", "true"), append([]string{"ContentBasedDeduplication", "DeduplicationScope",
			"FifoQueue", "FifoThroughputLimit"}, std...)},
	} {
		url := e.create(tc.name, tc.attrs)
		got := e.attrs(url, types.QueueAttributeNameAll)
		var names []string
		for k := range got {
			names = append(names, k)
		}
		require.ElementsMatch(t, tc.want, names, "%s: the attributes of All", tc.name)
		require.Equal(t, "true", got["SqsManagedSseEnabled"], "%s: SQS-managed encryption by default", tc.name)
	}
}

// The two kinds of server-side encryption exclude each other. KmsMasterKeyId and SqsManagedSseEnabled=true in
// one CreateQueue or SetQueueAttributes is InvalidAttributeName (AWS's text) and changes nothing; a KMS key
// turns SQS-managed encryption off, SqsManagedSseEnabled=true drops the KMS key; KmsDataKeyReusePeriodSeconds
// is shown only with a KMS key (300 unless set), and goes with it.
func TestCfServerSideEncryption(t *testing.T) {
	t.Parallel()
	type step struct {
		set     map[string]string
		wantErr bool
	}
	cases := []struct {
		name   string
		create map[string]string
		steps  []step
		want   map[string]string // the encryption attributes of All at the end
	}{
		{name: "default", want: sdKV("SqsManagedSseEnabled", "true")},
		{name: "created without", create: sdKV("SqsManagedSseEnabled", "false"), want: sdKV("SqsManagedSseEnabled", "false")},
		{name: "created with KMS", create: sdKV("KmsMasterKeyId", "alias/aws/sqs"),
			want: sdKV("KmsMasterKeyId", "alias/aws/sqs", "KmsDataKeyReusePeriodSeconds", "300", "SqsManagedSseEnabled", "false")},
		{name: "created with KMS and SQS off", create: sdKV("KmsMasterKeyId", "k", "SqsManagedSseEnabled", "false", "KmsDataKeyReusePeriodSeconds", "60"),
			want: sdKV("KmsMasterKeyId", "k", "KmsDataKeyReusePeriodSeconds", "60", "SqsManagedSseEnabled", "false")},
		{name: "set KMS (AWS sse_kms_attributes)", steps: []step{{set: sdKV("KmsMasterKeyId", "testKeyId",
			"KmsDataKeyReusePeriodSeconds", "6000", "SqsManagedSseEnabled", "false")}},
			want: sdKV("KmsMasterKeyId", "testKeyId", "KmsDataKeyReusePeriodSeconds", "6000", "SqsManagedSseEnabled", "false")},
		{name: "set SQS (AWS sse_sqs_attributes)", steps: []step{{set: sdKV("SqsManagedSseEnabled", "true")}},
			want: sdKV("SqsManagedSseEnabled", "true")},
		{name: "set both (AWS test_sse_kms_and_sqs_are_mutually_exclusive)",
			steps: []step{{set: sdKV("KmsMasterKeyId", "testKeyId", "SqsManagedSseEnabled", "true"), wantErr: true}},
			want:  sdKV("SqsManagedSseEnabled", "true")},
		{name: "set both, any case", steps: []step{{set: sdKV("KmsMasterKeyId", "k", "SqsManagedSseEnabled", "TRUE"), wantErr: true}},
			want: sdKV("SqsManagedSseEnabled", "true")},
		{name: "KMS key set while SQS-managed is on", steps: []step{{set: sdKV("KmsMasterKeyId", "k")}},
			want: sdKV("KmsMasterKeyId", "k", "KmsDataKeyReusePeriodSeconds", "300", "SqsManagedSseEnabled", "false")},
		{name: "SQS-managed turned on over KMS", steps: []step{{set: sdKV("KmsMasterKeyId", "k", "KmsDataKeyReusePeriodSeconds", "600")},
			{set: sdKV("SqsManagedSseEnabled", "true")}},
			want: sdKV("SqsManagedSseEnabled", "true")},
		{name: "KMS key emptied", steps: []step{{set: sdKV("KmsMasterKeyId", "k", "KmsDataKeyReusePeriodSeconds", "600")},
			{set: sdKV("KmsMasterKeyId", "")}},
			want: sdKV("SqsManagedSseEnabled", "false")},
		{name: "both on a KMS queue", steps: []step{{set: sdKV("KmsMasterKeyId", "k")},
			{set: sdKV("KmsMasterKeyId", "k2", "SqsManagedSseEnabled", "true"), wantErr: true}},
			want: sdKV("KmsMasterKeyId", "k", "KmsDataKeyReusePeriodSeconds", "300", "SqsManagedSseEnabled", "false")},
		{name: "empty key with SQS on", steps: []step{{set: sdKV("KmsMasterKeyId", "k")},
			{set: sdKV("KmsMasterKeyId", "", "SqsManagedSseEnabled", "true")}},
			want: sdKV("SqsManagedSseEnabled", "true")},
		{name: "reuse period without a key", steps: []step{{set: sdKV("KmsDataKeyReusePeriodSeconds", "120")}},
			want: sdKV("SqsManagedSseEnabled", "true")},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := sdSetup(t)
			url := e.create("cf-sse-"+strings.Repeat("x", i+1), tc.create)
			for _, s := range tc.steps {
				before := e.attrs(url, types.QueueAttributeNameAll)
				err := e.setAttrs(url, s.set)
				if !s.wantErr {
					require.NoError(t, err, "SetQueueAttributes %v", s.set)
					continue
				}
				sdWantErr(t, err, sdBadAttrName, cfSSEText)
				require.Equal(t, before, e.attrs(url, types.QueueAttributeNameAll), "a rejected change changes nothing")
			}
			require.Equal(t, tc.want, cfSSE(e, url))
		})
	}

	t.Run("CreateQueue with both", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		_, err := e.c.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String("cf-sse-both"),
			Attributes: sdKV("SqsManagedSseEnabled", "true", "KmsMasterKeyId", "alias/aws/sqs")})
		sdWantErr(t, err, sdBadAttrName, cfSSEText)
		_, err = e.c.GetQueueUrl(e.ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("cf-sse-both")})
		sdWantErr(t, err, sdNonExistentQueue, sdNoQueueText)
	})

	t.Run("CreateQueue of an existing queue", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("cf-sse-again", nil)
		require.Equal(t, url, e.create("cf-sse-again", sdKV("SqsManagedSseEnabled", "true")), "the default, given again")
		_, err := e.c.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String("cf-sse-again"),
			Attributes: sdKV("SqsManagedSseEnabled", "false")})
		sdWantErr(t, err, sdQueueExists, "A queue already exists with the same name and a different value for attribute SqsManagedSseEnabled")
	})
}

// cfPolicy returns the queue's Policy, decoded; nil when it has none.
func cfPolicy(e *sdEnv, url string) map[string]any {
	e.t.Helper()
	raw, ok := e.attrs(url, types.QueueAttributeNamePolicy)["Policy"]
	if !ok {
		return nil
	}
	var doc map[string]any
	require.NoError(e.t, json.Unmarshal([]byte(raw), &doc), "Policy %s", raw)
	return doc
}

// cfStatement is a statement AddPermission writes, decoded.
func cfStatement(label string, principal, action any, arn string) map[string]any {
	return map[string]any{"Sid": label, "Effect": "Allow", "Principal": map[string]any{"AWS": principal},
		"Action": action, "Resource": arn}
}

// AddPermission writes the policy AWS writes (test_sqs_permission_lifecycle): version 2008-10-17, id
// "<arn>/SQSDefaultPolicy", one statement per label with Sid = the label, Effect Allow, and a single
// principal or action as a plain string, several as a list. RemovePermission removes the label's statement
// and the Policy with its last one; a label twice, or an unknown one, is AWS's InvalidParameterValue.
func TestCfPermissionLifecycle(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	url := e.create("cf-perm", nil)
	arn := sdArn("cf-perm")
	add := func(label string, accounts, actions []string) error {
		_, err := e.c.AddPermission(e.ctx, &sqs.AddPermissionInput{QueueUrl: &url, Label: &label, AWSAccountIds: accounts, Actions: actions})
		return err
	}
	remove := func(label string) error {
		_, err := e.c.RemovePermission(e.ctx, &sqs.RemovePermissionInput{QueueUrl: &url, Label: &label})
		return err
	}
	doc := func(statements ...any) map[string]any {
		return map[string]any{"Version": "2008-10-17", "Id": arn + "/SQSDefaultPolicy", "Statement": statements}
	}
	root := func(id string) string { return "arn:aws:iam::" + id + ":root" }

	require.NoError(t, add("crossaccountpermission", []string{"111111111111", "668614515564"}, []string{"ReceiveMessage"}))
	require.Equal(t, doc(cfStatement("crossaccountpermission", []any{root("111111111111"), root("668614515564")},
		"SQS:ReceiveMessage", arn)), cfPolicy(e, url))
	require.NoError(t, remove("crossaccountpermission"))
	require.Nil(t, cfPolicy(e, url), "the last statement removed, the queue has no Policy")

	require.NoError(t, add("crossaccountpermission", []string{"111111111111"}, []string{"ReceiveMessage"}))
	first := cfStatement("crossaccountpermission", root("111111111111"), "SQS:ReceiveMessage", arn)
	require.Equal(t, doc(first), cfPolicy(e, url))
	sdWantErr(t, add("crossaccountpermission", []string{"668614515564"}, []string{"ReceiveMessage"}), sdBadParam,
		"Value crossaccountpermission for parameter Label is invalid. Reason: Already exists.")
	require.Equal(t, doc(first), cfPolicy(e, url), "a rejected AddPermission changes nothing")

	require.NoError(t, add("crossaccountpermission2", []string{"111111111111"}, []string{"SendMessage", "DeleteMessage"}))
	second := cfStatement("crossaccountpermission2", root("111111111111"), []any{"SQS:SendMessage", "SQS:DeleteMessage"}, arn)
	require.Equal(t, doc(first, second), cfPolicy(e, url))

	require.NoError(t, remove("crossaccountpermission"))
	require.Equal(t, doc(second), cfPolicy(e, url))
	require.NoError(t, remove("crossaccountpermission2"))
	require.Nil(t, cfPolicy(e, url))
	sdWantErr(t, remove("crossaccountpermission2"), sdBadParam,
		"Value crossaccountpermission2 for parameter Label is invalid. Reason: can't find label.")

	// A policy set with SetQueueAttributes keeps its own version and id, and gets the statement.
	own := `{"Version":"2012-10-17","Id":"mine","Statement":[{"Sid":"s1","Effect":"Allow","Principal":"*","Action":"sqs:SendMessage","Resource":"*"}]}`
	require.NoError(t, e.setAttrs(url, sdKV("Policy", own)))
	require.NoError(t, add("extra", []string{"111111111111"}, []string{"*"}))
	got := cfPolicy(e, url)
	require.Equal(t, "2012-10-17", got["Version"])
	require.Equal(t, "mine", got["Id"])
	require.Equal(t, []any{map[string]any{"Sid": "s1", "Effect": "Allow", "Principal": "*", "Action": "sqs:SendMessage", "Resource": "*"},
		cfStatement("extra", root("111111111111"), "SQS:*", arn)}, got["Statement"])
}

// AddPermission grants at most 7 actions (OverLimit, 403), only the actions a permission can grant: the
// actions reserved to the queue's owner are refused with "Only the queue owner is allowed to invoke this
// action.", other names (the batch forms, unknown actions) with the WSDL text. A refused call changes nothing.
func TestCfPermissionActions(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	url := e.create("cf-perm-actions", nil)
	add := func(label string, actions ...string) error {
		_, err := e.c.AddPermission(e.ctx, &sqs.AddPermissionInput{QueueUrl: &url, Label: &label,
			AWSAccountIds: []string{"111111111111"}, Actions: actions})
		return err
	}
	for i, a := range []string{"*", "SendMessage", "ReceiveMessage", "DeleteMessage", "ChangeMessageVisibility",
		"GetQueueAttributes", "GetQueueUrl", "ListDeadLetterSourceQueues", "PurgeQueue"} {
		require.NoError(t, add("ok"+strings.Repeat("x", i), a), "grant %s", a)
	}
	seven := []string{"SendMessage", "ReceiveMessage", "DeleteMessage", "ChangeMessageVisibility", "GetQueueAttributes",
		"GetQueueUrl", "PurgeQueue"}
	require.NoError(t, add("seven", seven...), "7 actions")
	before := e.attrs(url, types.QueueAttributeNamePolicy)

	err := add("eight", append(seven, "ListDeadLetterSourceQueues")...)
	var over *types.OverLimit
	require.ErrorAs(t, err, &over, "8 actions: the SDK's OverLimit")
	require.Equal(t, "OverLimit", over.ErrorCode())
	require.Equal(t, "8 Actions were found, maximum allowed is 7.", over.ErrorMessage())
	var re interface{ HTTPStatusCode() int }
	require.ErrorAs(t, err, &re)
	require.Equal(t, http.StatusForbidden, re.HTTPStatusCode())

	for _, a := range []string{"AddPermission", "RemovePermission", "CreateQueue", "DeleteQueue", "SetQueueAttributes",
		"ListQueues", "ListQueueTags", "TagQueue", "UntagQueue", "StartMessageMoveTask", "CancelMessageMoveTask", "ListMessageMoveTasks"} {
		sdWantErr(t, add("owner", "SendMessage", a), sdBadParam,
			"Value SQS:"+a+" for parameter ActionName is invalid. Reason: Only the queue owner is allowed to invoke this action.")
	}
	for _, a := range []string{"SendMessageBatch", "DeleteMessageBatch", "ChangeMessageVisibilityBatch", "FooBar", "sendmessage"} {
		sdWantErr(t, add("wsdl", a), sdBadParam,
			"Value SQS:"+a+" for parameter ActionName is invalid. Reason: Please refer to the appropriate WSDL for a list of valid actions.")
	}
	require.Equal(t, before, e.attrs(url, types.QueueAttributeNamePolicy), "refused calls change nothing")
}

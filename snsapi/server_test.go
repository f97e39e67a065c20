package snsapi_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"encoding/xml"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/snsapi"
	"github.com/fifoq/fifoq/sqsapi"
	"github.com/fifoq/fifoq/topic"
)

// env is an SQS and an SNS server on one endpoint, as fifoq serve runs them.
type env struct {
	t   *testing.T
	url string
	sqs *sqsapi.Server
	sns *snsapi.Server
	key *rsa.PrivateKey
}

func newEnv(t *testing.T, opts ...snsapi.Option) *env {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sns.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	sqs := sqsapi.NewServer()
	sns := snsapi.NewServer(sqs.Catalog(), append([]snsapi.Option{snsapi.WithSigningKey(key, certPEM)}, opts...)...)
	hs := httptest.NewServer(snsapi.Route(sns, sqs))
	t.Cleanup(hs.Close)
	return &env{t: t, url: hs.URL, sqs: sqs, sns: sns, key: key}
}

// call posts a query-protocol form and returns the status and body.
func (e *env) call(action string, kv ...string) (int, string) {
	e.t.Helper()
	return e.callWith(nil, action, kv...)
}

// callWith is call with the request's headers.
func (e *env) callWith(header http.Header, action string, kv ...string) (int, string) {
	e.t.Helper()
	form := url.Values{"Action": {action}}
	for i := 0; i < len(kv); i += 2 {
		form.Add(kv[i], kv[i+1])
	}
	req, err := http.NewRequest("POST", e.url+"/", strings.NewReader(form.Encode()))
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	return resp.StatusCode, string(b)
}

// ok calls an action that must succeed and returns its body.
func (e *env) ok(action string, kv ...string) string {
	e.t.Helper()
	status, body := e.call(action, kv...)
	require.Equal(e.t, 200, status, "%s: %s", action, body)
	return body
}

// value returns the text of the first element called name in an XML body.
func value(t *testing.T, body, name string) string {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(body))
	for {
		tok, err := d.Token()
		require.NoError(t, err, "no <%s> in %s", name, body)
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == name {
			var s string
			require.NoError(t, d.DecodeElement(&s, &se))
			return s
		}
	}
}

func TestCreateTopicAnswersAsSNS(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := e.ok("CreateTopic", "Name", "orders")
	// SNS's layout: no XML declaration, two spaces a level, a final newline.
	require.Regexp(t, `^<CreateTopicResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/">
  <CreateTopicResult>
    <TopicArn>arn:aws:sns:us-east-1:000000000000:orders</TopicArn>
  </CreateTopicResult>
  <ResponseMetadata>
    <RequestId>[0-9a-f-]{36}</RequestId>
  </ResponseMetadata>
</CreateTopicResponse>
$`, body)
}

func TestErrorsHaveSNSShape(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	status, body := e.call("GetTopicAttributes", "TopicArn", "arn:aws:sns:us-east-1:000000000000:none")
	require.Equal(t, 404, status)
	require.Regexp(t, `^<ErrorResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/">
  <Error>
    <Type>Sender</Type>
    <Code>NotFound</Code>
    <Message>Topic does not exist</Message>
  </Error>
  <RequestId>[0-9a-f-]{36}</RequestId>
</ErrorResponse>
$`, body)
	require.NotContains(t, body, "Detail")

	// Recorded from AWS (LocalStack's snapshots, test_sns.py).
	for _, c := range []struct {
		action string
		kv     []string
		status int
		code   string
		msg    string
	}{
		{"GetTopicAttributes", []string{"TopicArn", "nope"}, 400, "InvalidParameter", "Invalid parameter: TopicArn Reason: An ARN must have at least 6 elements, not 1"},
		{"GetTopicAttributes", []string{"TopicArn", "arn:aws:sns:eu-west-1:000000000000:x"}, 400, "InvalidParameter", "Invalid parameter: TopicArn"},
		{"CreateTopic", []string{"Name", "a:b"}, 400, "InvalidParameter", "Invalid parameter: Topic Name"},
		{"CreateTopic", []string{"Name", "x.fifo"}, 400, "InvalidParameter", "Invalid parameter: Topic Name"},
		{"Unsubscribe", []string{"SubscriptionArn", "arn:aws:sns:us-east-1:000000000000"}, 400, "InvalidParameter", "Invalid parameter: SubscriptionArn Reason: An ARN must have at least 6 elements, not 5"},
		{"Unsubscribe", []string{"SubscriptionArn", "arn:aws:sns:us-east-1:000000000000:t:not-a-uuid"}, 400, "InvalidParameter", "Invalid parameter: SubscriptionId"},
		{"Publish", []string{"TopicArn", "arn:aws:sns:us-east-1:000000000000:none", "Message", "m"}, 404, "NotFound", "Topic does not exist"},
		{"Publish", []string{"TargetArn", "arn:aws:sns:us-east-1:000000000000:none", "Message", "m"}, 400, "InvalidParameter", "Invalid parameter: TargetArn Reason: No endpoint found for the target arn specified"},
		{"ListTagsForResource", []string{"ResourceArn", "arn:aws:sns:us-east-1:000000000000:none"}, 404, "ResourceNotFound", "Resource does not exist"},
	} {
		status, body := e.call(c.action, c.kv...)
		require.Equal(t, c.status, status, "%s %v: %s", c.action, c.kv, body)
		require.Equal(t, c.code, value(t, body, "Code"), "%s %v", c.action, c.kv)
		require.Equal(t, c.msg, value(t, body, "Message"), "%s %v", c.action, c.kv)
	}
	// An action SNS does not have, sent to the SNS server (Route sends an unsigned one to SQS).
	w := httptest.NewRecorder()
	r := httptest.NewRequest("POST", "/", strings.NewReader("Action=Bogus"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	e.sns.ServeHTTP(w, r)
	require.Equal(t, 400, w.Code)
	require.Equal(t, "The action Bogus is not valid for this web service.", value(t, w.Body.String(), "Message"))
	// DeleteTopic and Unsubscribe of what does not exist succeed, as SNS answers them.
	e.ok("DeleteTopic", "TopicArn", "arn:aws:sns:us-east-1:000000000000:none")
	e.ok("Unsubscribe", "SubscriptionArn", "arn:aws:sns:us-east-1:000000000000:none:0f8d6c2e-1d7a-4c5e-9d51-3b7b1f0a2c44")
}

// TestPublishFansOutSigned: a publish to a topic with a filtered subscription and a raw one, received
// through SQS; the envelope's signature verifies against the certificate at its SigningCertURL.
func TestPublishFansOutSigned(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"1", "2"} {
		e := newEnv(t)
		topicARN := value(t, e.ok("CreateTopic", "Name", "news", "Attributes.entry.1.key", "SignatureVersion",
			"Attributes.entry.1.value", version), "TopicArn")
		for _, q := range []string{"raw", "filtered"} {
			e.ok("CreateQueue", "QueueName", q)
		}
		e.ok("Subscribe", "TopicArn", topicARN, "Protocol", "sqs", "Endpoint", "arn:aws:sqs:us-east-1:000000000000:raw",
			"Attributes.entry.1.key", "RawMessageDelivery", "Attributes.entry.1.value", "true")
		sub := value(t, e.ok("Subscribe", "TopicArn", topicARN, "Protocol", "sqs", "Endpoint", "arn:aws:sqs:us-east-1:000000000000:filtered",
			"Attributes.entry.1.key", "FilterPolicy", "Attributes.entry.1.value", `{"kind": ["sports"]}`), "SubscriptionArn")
		for _, kind := range []string{"news", "sports"} {
			e.ok("Publish", "TopicArn", topicARN, "Message", "about "+kind, "Subject", "Hi",
				"MessageAttributes.entry.1.Name", "kind", "MessageAttributes.entry.1.Value.DataType", "String",
				"MessageAttributes.entry.1.Value.StringValue", kind)
		}
		raw := e.receive("raw")
		require.Equal(t, []string{"about news", "about sports"}, raw)
		filtered := e.receive("filtered")
		require.Len(t, filtered, 1)
		env, err := topic.ParseEnvelope(filtered[0])
		require.NoError(t, err)
		require.Equal(t, "about sports", env.Message)
		require.Equal(t, version, env.SignatureVersion)
		require.Equal(t, e.url+"/?Action=Unsubscribe&SubscriptionArn="+sub, env.UnsubscribeURL)
		require.True(t, strings.HasPrefix(env.SigningCertURL, e.url+"/SimpleNotificationService-"), env.SigningCertURL)

		// As the SDKs' message validators do: fetch the certificate, parse it with crypto/x509, verify.
		resp, err := http.Get(env.SigningCertURL)
		require.NoError(t, err)
		pemBytes, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		block, _ := pem.Decode(pemBytes)
		require.NotNil(t, block, "the SigningCertURL serves a PEM certificate: %q", pemBytes)
		cert, err := x509.ParseCertificate(block.Bytes)
		require.NoError(t, err)
		pub := cert.PublicKey.(*rsa.PublicKey)
		require.NoError(t, env.Verify(pub))
		env.Message = "tampered"
		require.Error(t, env.Verify(pub), "a changed envelope does not verify")

		// The UnsubscribeURL unsubscribes, unsigned.
		resp, err = http.Get(e.url + "/?Action=Unsubscribe&SubscriptionArn=" + url.QueryEscape(sub))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode)
		status, _ := e.call("GetSubscriptionAttributes", "SubscriptionArn", sub)
		require.Equal(t, 404, status)
	}
}

// receive receives and deletes up to 10 messages of the queue name.
func (e *env) receive(name string) []string {
	e.t.Helper()
	q, ok := e.sqs.Queue(name)
	require.True(e.t, ok)
	ms, err := q.Receive(context.Background(), fifoq.ReceiveOptions{MaxMessages: 10, NoWaitTime: true})
	require.NoError(e.t, err)
	var out []string
	for _, m := range ms {
		out = append(out, m.Body)
		require.NoError(e.t, q.Delete(context.Background(), m.ReceiptHandle))
	}
	return out
}

func TestSubscriptionAttributesAndLists(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := value(t, e.ok("CreateTopic", "Name", "t.fifo", "Attributes.entry.1.key", "FifoTopic", "Attributes.entry.1.value", "true"), "TopicArn")
	status, body := e.call("Subscribe", "TopicArn", topic, "Protocol", "sqs", "Endpoint", "https://sqs.us-east-1.amazonaws.com/000000000000/q")
	require.Equal(t, 400, status)
	require.Equal(t, "Invalid parameter: SQS endpoint ARN", value(t, body, "Message"))
	_, body = e.call("Subscribe", "TopicArn", topic, "Protocol", "test-protocol", "Endpoint", "x")
	require.Equal(t, "Invalid parameter: Amazon SNS does not support this protocol string: test-protocol", value(t, body, "Message"))
	_, body = e.call("Subscribe", "TopicArn", topic, "Protocol", "sqs", "Endpoint", "arn:aws:sqs:us-east-1:000000000000:q.fifo",
		"Attributes.entry.1.key", "RawMessageDelivery", "Attributes.entry.1.value", "wrongvalue")
	require.Equal(t, "Invalid parameter: Attributes Reason: RawMessageDelivery: Invalid value [wrongvalue]. Must be true or false.", value(t, body, "Message"))

	sub := value(t, e.ok("Subscribe", "TopicArn", topic, "Protocol", "sqs", "Endpoint", "arn:aws:sqs:us-east-1:000000000000:q.fifo"), "SubscriptionArn")
	attrs := e.ok("GetSubscriptionAttributes", "SubscriptionArn", sub)
	for _, want := range []string{"<key>PendingConfirmation</key>", "<value>arn:aws:sqs:us-east-1:000000000000:q.fifo</value>", "<key>RawMessageDelivery</key>"} {
		require.Contains(t, attrs, want)
	}
	_, body = e.call("SetSubscriptionAttributes", "SubscriptionArn", sub, "AttributeName", "Fake", "AttributeValue", "x")
	require.Equal(t, "Invalid parameter: AttributeName", value(t, body, "Message"))
	_, body = e.call("SetSubscriptionAttributes", "SubscriptionArn", sub, "AttributeName", "RedrivePolicy", "AttributeValue", `{"deadLetterTargetArn": "x"}`)
	require.Equal(t, "Invalid parameter: RedrivePolicy: deadLetterTargetArn is an invalid arn", value(t, body, "Message"))
	_, body = e.call("SetSubscriptionAttributes", "SubscriptionArn", sub, "AttributeName", "FilterPolicy", "AttributeValue", `{"a": 1}`)
	require.Equal(t, "Invalid parameter: FilterPolicy: \"a\" must be an object or an array\n at [Source: (String)\"{\"a\":1}\"; line: 1, column: 7]",
		value(t, body, "Message"))
	e.ok("SetSubscriptionAttributes", "SubscriptionArn", sub, "AttributeName", "RedrivePolicy", "AttributeValue",
		`{"deadLetterTargetArn": "arn:aws:sqs:us-east-1:000000000000:dlq.fifo"}`)

	list := e.ok("ListSubscriptionsByTopic", "TopicArn", topic)
	require.Equal(t, sub, value(t, list, "SubscriptionArn"))
	require.Equal(t, "sqs", value(t, list, "Protocol"))
	require.Contains(t, e.ok("ListSubscriptions"), sub)
	require.Contains(t, e.ok("ListTopics"), topic)

	tattrs := e.ok("GetTopicAttributes", "TopicArn", topic)
	for _, want := range []string{"<key>FifoTopic</key>", "<key>ContentBasedDeduplication</key>", "__default_policy_ID", "EffectiveDeliveryPolicy"} {
		require.Contains(t, tattrs, want)
	}
	_, body = e.call("SetTopicAttributes", "TopicArn", topic, "AttributeName", "FifoTopic", "AttributeValue", "false")
	require.Equal(t, "Invalid parameter: AttributeName", value(t, body, "Message"))

	_, body = e.call("ConfirmSubscription", "TopicArn", topic, "Token", "abc")
	require.Equal(t, "Invalid parameter: Token", value(t, body, "Message"))
	_, body = e.call("ConfirmSubscription", "TopicArn", "broken", "Token", "abc")
	require.Equal(t, "Invalid parameter: Topic", value(t, body, "Message"))
}

func TestTagsAndPermissions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := value(t, e.ok("CreateTopic", "Name", "t", "Tags.member.1.Key", "k1", "Tags.member.1.Value", "v1"), "TopicArn")
	_, body := e.call("CreateTopic", "Name", "t", "Tags.member.1.Key", "k1", "Tags.member.1.Value", "v2")
	require.Equal(t, "Invalid parameter: Tags Reason: Topic already exists with different tags", value(t, body, "Message"))
	_, body = e.call("TagResource", "ResourceArn", topic, "Tags.member.1.Key", "k", "Tags.member.1.Value", "a",
		"Tags.member.2.Key", "k", "Tags.member.2.Value", "b")
	require.Equal(t, "Invalid parameter: Duplicated keys are not allowed.", value(t, body, "Message"))
	require.Contains(t, e.ok("TagResource", "ResourceArn", topic, "Tags.member.1.Key", "k2", "Tags.member.1.Value", "v2"), "<TagResourceResult/>")
	e.ok("UntagResource", "ResourceArn", topic, "TagKeys.member.1", "k1")
	tags := e.ok("ListTagsForResource", "ResourceArn", topic)
	require.Equal(t, "k2", value(t, tags, "Key"))
	require.NotContains(t, tags, "k1")

	e.ok("AddPermission", "TopicArn", topic, "Label", "pub", "AWSAccountId.member.1", "123456789012", "ActionName.member.1", "Publish")
	require.Contains(t, e.ok("GetTopicAttributes", "TopicArn", topic), "arn:aws:iam::123456789012:root")
	e.ok("RemovePermission", "TopicArn", topic, "Label", "pub")
	require.NotContains(t, e.ok("GetTopicAttributes", "TopicArn", topic), "123456789012")
}

func TestPublishBatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := value(t, e.ok("CreateTopic", "Name", "b"), "TopicArn")
	e.ok("CreateQueue", "QueueName", "q")
	e.ok("Subscribe", "TopicArn", topic, "Protocol", "sqs", "Endpoint", "arn:aws:sqs:us-east-1:000000000000:q",
		"Attributes.entry.1.key", "RawMessageDelivery", "Attributes.entry.1.value", "true")
	body := e.ok("PublishBatch", "TopicArn", topic,
		"PublishBatchRequestEntries.member.1.Id", "1", "PublishBatchRequestEntries.member.1.Message", "one",
		"PublishBatchRequestEntries.member.2.Id", "2", "PublishBatchRequestEntries.member.2.Message", "two")
	require.Contains(t, body, "<Id>2</Id>")
	require.Equal(t, []string{"one", "two"}, e.receive("q"))
	_, body = e.call("PublishBatch", "TopicArn", topic,
		"PublishBatchRequestEntries.member.1.Id", "1", "PublishBatchRequestEntries.member.1.Message", "one",
		"PublishBatchRequestEntries.member.2.Id", "1", "PublishBatchRequestEntries.member.2.Message", "two")
	require.Equal(t, "BatchEntryIdsNotDistinct", value(t, body, "Code"))
	_, body = e.call("PublishBatch", "TopicArn", topic,
		"PublishBatchRequestEntries.member.1.Id", "1", "PublishBatchRequestEntries.member.1.Message", "one",
		"PublishBatchRequestEntries.member.1.MessageAttributes.entry.1.Name", "a",
		"PublishBatchRequestEntries.member.1.MessageAttributes.entry.1.Value.DataType", "String")
	require.Equal(t, "ParameterValueInvalid", value(t, body, "Code"), "an attribute fails the whole request, as SNS fails it")
	require.Equal(t, "The message attribute 'a' must contain non-empty message attribute value for message attribute type 'String'.", value(t, body, "Message"))
	require.Empty(t, e.receive("q"))
}

func TestRouteBySignatureScope(t *testing.T) {
	t.Parallel()
	sqs := sqsapi.NewServer()
	sns := snsapi.NewServer(sqs.Catalog())
	h := snsapi.Route(sns, sqs)
	for _, c := range []struct {
		auth, target, body string
		sns                bool
	}{
		{auth: "AWS4-HMAC-SHA256 Credential=AKID/20250101/us-east-1/sns/aws4_request, SignedHeaders=host, Signature=x", body: "Action=ListQueues", sns: true},
		{auth: "AWS4-HMAC-SHA256 Credential=AKID/20250101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=x", body: "Action=ListTopics"},
		{target: "AmazonSQS.ListQueues", body: "{}"},
		{body: "Action=ListTopics", sns: true},
		{body: "Action=ListQueues"},
	} {
		r := httptest.NewRequest("POST", "/", strings.NewReader(c.body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if c.auth != "" {
			r.Header.Set("Authorization", c.auth)
		}
		if c.target != "" {
			r.Header.Set("X-Amz-Target", c.target)
		}
		require.Equal(t, c.sns, snsapi.IsSNSRequest(r, sns), "%+v", c)
		rest, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		require.Equal(t, c.body, string(rest), "the body is left whole for the server that serves it")
	}
	w := httptest.NewRecorder()
	r := httptest.NewRequest("POST", "/", strings.NewReader("Action=ListQueues"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	h.ServeHTTP(w, r)
	require.Equal(t, 200, w.Code, w.Body.String())
	require.Contains(t, w.Body.String(), "ListQueuesResponse")
}

// TestWithSigningKeyNil: a nil signing key is refused when the option is made, not by a panic in
// rsa.SignPKCS1v15 at each publish.
func TestWithSigningKeyNil(t *testing.T) {
	t.Parallel()
	require.PanicsWithValue(t, "snsapi: WithSigningKey with a nil key", func() { snsapi.WithSigningKey(nil, nil) })
}

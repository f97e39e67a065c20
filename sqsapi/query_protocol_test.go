package sqsapi_test

// Query-protocol tests of the protocol itself: XML escaping, GET requests, charsets, missing and unknown actions.

import (
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestQpXMLEscaping(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-xml")
	// Every character class the spec allows (7.1.1), and the ones XML treats specially. XML parsers turn a
	// raw carriage return into a newline, so the server must escape it for the body to come back as sent.
	body := "tab\tcr\rcrlf\r\nlf\n<tag attr=\"v\"> & 'q' ]]> \u00e9\u4e2d\U0001F600 \uFFFD\uE000 \x7f"
	attrs := map[string]qpAttr{"s": {DataType: "String", String: body}}
	sent := qpCall[qpSendMessageResult](t, e, "SendMessage",
		append([]string{"QueueUrl", u, "MessageBody", body}, qpAttrParams("MessageAttribute", attrs)...)...)
	require.Equal(t, qpMD5([]byte(body)), sent.MD5OfMessageBody)
	require.Equal(t, qpMD5OfAttributes(attrs), sent.MD5OfMessageAttributes)
	require.Equal(t, body, qpMessages(t, e, "qp-xml")[0].Body)
	r := qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u, "MessageAttributeName.1", "All")
	require.Len(t, r.Messages, 1)
	require.Equal(t, body, r.Messages[0].Body, "the body does not survive the XML response")
	require.Equal(t, qpMD5([]byte(body)), r.Messages[0].MD5OfBody)
	require.Equal(t, attrs, qpMessageAttrs(t, r.Messages[0]), "the attribute does not survive the XML response")
	require.Equal(t, qpMD5OfAttributes(attrs), r.Messages[0].MD5OfMessageAttributes)

	// Text in error messages is escaped too.
	_, _, raw := e.qpPost(t, "GetQueueUrl", "QueueName", "<&>\r")
	var er qpErrorResponse
	require.NoError(t, xml.Unmarshal(raw, &er), "%s", raw)
}

func TestQpProtocol(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-proto")

	// GET with the parameters in the query string.
	q := url.Values{"Action": {"GetQueueUrl"}, "Version": {qpVersion}, "QueueName": {"qp-proto"}}
	resp, err := e.hc.Get(e.base + "/?" + q.Encode())
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode, "%s", body)
	require.Equal(t, u, qpDecode[qpGetQueueURLResult](t, "GetQueueUrl", resp.Header, body).QueueURL)

	// A form without a charset, as older clients send it.
	req, err := http.NewRequest(http.MethodPost, e.base+"/", strings.NewReader(url.Values{"Action": {"ListQueues"},
		"Version": {qpVersion}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err = e.hc.Do(req)
	require.NoError(t, err)
	body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode, "%s", body)
	require.Equal(t, []string{u}, qpDecode[qpListQueuesResult](t, "ListQueues", resp.Header, body).QueueURLs)

	// Unknown and missing actions (AWS common errors InvalidAction and MissingAction).
	qpFail(t, e, 400, "InvalidAction", "NoSuchAction")
	status, header, body := e.qpPostForm(t, url.Values{"Version": {qpVersion}, "QueueName": {"x"}})
	require.Equal(t, 400, status, "%s", body)
	require.Equal(t, "MissingAction", qpParseError(t, "no Action", status, header, body).Code)
	status, header, body = e.qpPostForm(t, url.Values{})
	require.Equal(t, 400, status, "%s", body)
	qpParseError(t, "empty form", status, header, body)

	// A missing QueueUrl is the caller's error.
	status, header, body = e.qpPost(t, "SendMessage", "MessageBody", "x")
	require.Equal(t, 400, status, "%s", body)
	qpParseError(t, "SendMessage without QueueUrl", status, header, body)
	require.Empty(t, qpMessages(t, e, "qp-proto"))
}

package sqsapi_test

// Shared setup, result shapes and helpers of the query-protocol tests (TestQp*); cli_test.go and fuzz_test.go use them too.

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/sqsapi"
	"github.com/stretchr/testify/require"
)

// This file tests the query protocol (form-encoded Action=...&Version=2012-11-05, XML responses) with raw
// HTTP requests shaped as Debian's awscli 2.9 (and the CLI v1 before SQS moved to JSON) sends them: POST /,
// Content-Type application/x-www-form-urlencoded; charset=utf-8, a SigV4 Authorization header. The parameter
// and element names come from the SQS query model (botocore's query-protocol service-2.json, the same as
// aws-sdk-go v1.45.0's locationName/locationNameList tags): Attribute.N.Name/Value, Tag.N.Key/Value,
// MessageAttribute.N.Name/Value.DataType/StringValue/BinaryValue, <Action>Response/<Action>Result, flattened
// lists. MessageSystemAttributeName.N is the query name of the later MessageSystemAttributeNames member, by
// the same rule (a flattened list named by its member). The error codes are the query codes of the model's
// error shapes (QueueDoesNotExist is AWS.SimpleQueueService.NonExistentQueue, QueueNameExists is
// QueueAlreadyExists). Every top-level name of this file, cli_test.go and fuzz_test.go starts with "qp".

const (
	qpAccount   = "000000000000"
	qpRegion    = "us-east-1"
	qpVersion   = "2012-11-05"
	qpNamespace = "http://queue.amazonaws.com/doc/2012-11-05/"
	// qpTraceHeader and the digests below are the vectors of spec 1.4.6.
	qpTraceHeader     = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
	qpTraceHeaderMD5  = "5ae4d5d7636402d80f4eb6d213245a88"
	qpFoobarMD5       = "3858f62230ac3c915f300c664312c63f"
	qpMyAttributeMD5  = "adb59cd4678ea5a855436b949cd07ab6" // {"MyAttribute": String "foobar"}
	qpFormContentType = "application/x-www-form-urlencoded; charset=utf-8"
)

// qpStart is when every test server's manual clock starts.
var qpStart = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

// qpEnv is a server on a manual clock behind a loopback HTTP server.
type qpEnv struct {
	srv   *sqsapi.Server
	clock *fifoq.ManualClock
	base  string // the httptest server's URL
	hc    *http.Client
}

// qpSetup starts a server whose queues run on a manual clock at qpStart.
func qpSetup(t *testing.T) *qpEnv {
	t.Helper()
	clock := fifoq.NewManualClock(qpStart)
	srv := sqsapi.NewServer(sqsapi.WithRegion(qpRegion), sqsapi.WithAccountID(qpAccount), sqsapi.WithClock(clock))
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	hc := hs.Client()
	hc.Timeout = 30 * time.Second // a long poll that is never woken fails the test instead of hanging it
	return &qpEnv{srv: srv, clock: clock, base: hs.URL, hc: hc}
}

// qpArn is the ARN of a queue of the test account.
func qpArn(name string) string { return "arn:aws:sqs:" + qpRegion + ":" + qpAccount + ":" + name }

// qpForm builds a form from key, value pairs.
func qpForm(kv ...string) url.Values {
	if len(kv)%2 != 0 {
		panic("qpForm: odd number of arguments")
	}
	v := url.Values{}
	for i := 0; i < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

// qpPostForm sends a form as the AWS CLI does: POST to "/", form-encoded, signed (the signature is not
// checked by a server without WithSignatureVerification).
func (e *qpEnv) qpPostForm(t *testing.T, form url.Values) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.base+"/", strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", qpFormContentType)
	req.Header.Set("User-Agent", "aws-cli/2.9.19 Python/3.11.2 Linux source/x86_64.debian.12 prompt/off")
	req.Header.Set("X-Amz-Date", "20250304T050607Z")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20250304/us-east-1/sqs/aws4_request, "+
		"SignedHeaders=content-type;host;x-amz-date, Signature=0000000000000000000000000000000000000000000000000000000000000000")
	resp, err := e.hc.Do(req)
	require.NoError(t, err, "form %s", form.Encode())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, body
}

// qpPost sends one action with its parameters.
func (e *qpEnv) qpPost(t *testing.T, action string, kv ...string) (int, http.Header, []byte) {
	t.Helper()
	form := qpForm(kv...)
	form.Set("Action", action)
	form.Set("Version", qpVersion)
	return e.qpPostForm(t, form)
}

// qpEnvelope is an <Action>Response: the result element (R names it by its XMLName) and the request id.
type qpEnvelope[R any] struct {
	XMLName   xml.Name
	Result    R      `xml:",any"`
	RequestID string `xml:"ResponseMetadata>RequestId"`
}

// qpNoResult is the result of the actions whose output the model does not define.
type qpNoResult struct{}

// qpDecode parses a successful response of action and returns its result.
func qpDecode[R any](t *testing.T, action string, header http.Header, body []byte) R {
	t.Helper()
	var env qpEnvelope[R]
	require.NoError(t, xml.Unmarshal(body, &env), "%s: response is not the XML of the model: %s", action, body)
	require.Equal(t, action+"Response", env.XMLName.Local, "%s: root element, in %s", action, body)
	require.Equal(t, qpNamespace, env.XMLName.Space, "%s: namespace of the root element, in %s", action, body)
	require.NotEmpty(t, env.RequestID, "%s: ResponseMetadata/RequestId, in %s", action, body)
	require.Contains(t, header.Get("Content-Type"), "xml", "%s: Content-Type", action)
	return env.Result
}

// qpCall sends an action that must succeed and returns its result.
func qpCall[R any](t *testing.T, e *qpEnv, action string, kv ...string) R {
	t.Helper()
	status, header, body := e.qpPost(t, action, kv...)
	require.Equal(t, http.StatusOK, status, "%s %v: want 200, got %d with %s", action, kv, status, body)
	return qpDecode[R](t, action, header, body)
}

// qpErrorResponse is the query protocol's error document.
type qpErrorResponse struct {
	XMLName   xml.Name `xml:"ErrorResponse"`
	Type      string   `xml:"Error>Type"`
	Code      string   `xml:"Error>Code"`
	Message   string   `xml:"Error>Message"`
	RequestID string   `xml:"RequestId"`
}

// qpParseError parses an error response and checks its form.
func qpParseError(t *testing.T, what string, status int, header http.Header, body []byte) qpErrorResponse {
	t.Helper()
	var er qpErrorResponse
	require.NoError(t, xml.Unmarshal(body, &er), "%s: status %d, body is not an ErrorResponse: %s", what, status, body)
	require.Equal(t, qpNamespace, er.XMLName.Space, "%s: namespace of ErrorResponse, in %s", what, body)
	require.Equal(t, "Sender", er.Type, "%s: Error/Type, in %s", what, body)
	require.NotEmpty(t, er.Message, "%s: Error/Message, in %s", what, body)
	require.NotEmpty(t, er.RequestID, "%s: RequestId, in %s", what, body)
	require.Contains(t, header.Get("Content-Type"), "xml", "%s: Content-Type", what)
	return er
}

// qpFail sends an action that must fail with status and code (any code when code is ""), and returns the
// error.
func qpFail(t *testing.T, e *qpEnv, status int, code, action string, kv ...string) qpErrorResponse {
	t.Helper()
	got, header, body := e.qpPost(t, action, kv...)
	what := fmt.Sprintf("%s %v", action, kv)
	require.Equal(t, status, got, "%s: want HTTP %d (%s), got %d with %s", what, status, code, got, body)
	er := qpParseError(t, what, got, header, body)
	if code != "" {
		require.Equal(t, code, er.Code, "%s: Error/Code, in %s", what, body)
	}
	return er
}

// Results of the model's output shapes, with the query element names.

type qpQueueURLResult struct {
	QueueURL string `xml:"QueueUrl"`
}

type qpCreateQueueResult struct {
	XMLName xml.Name `xml:"CreateQueueResult"`
	qpQueueURLResult
}

type qpGetQueueURLResult struct {
	XMLName xml.Name `xml:"GetQueueUrlResult"`
	qpQueueURLResult
}

type qpListQueuesResult struct {
	XMLName   xml.Name `xml:"ListQueuesResult"`
	QueueURLs []string `xml:"QueueUrl"`
	NextToken string   `xml:"NextToken"`
}

type qpListDeadLetterSourceQueuesResult struct {
	XMLName   xml.Name `xml:"ListDeadLetterSourceQueuesResult"`
	QueueURLs []string `xml:"QueueUrl"`
	NextToken string   `xml:"NextToken"`
}

type qpSendResultFields struct {
	MessageID                    string `xml:"MessageId"`
	MD5OfMessageBody             string `xml:"MD5OfMessageBody"`
	MD5OfMessageAttributes       string `xml:"MD5OfMessageAttributes"`
	MD5OfMessageSystemAttributes string `xml:"MD5OfMessageSystemAttributes"`
	SequenceNumber               string `xml:"SequenceNumber"`
}

type qpSendMessageResult struct {
	XMLName xml.Name `xml:"SendMessageResult"`
	qpSendResultFields
}

type qpBatchResultErrorEntry struct {
	ID          string `xml:"Id"`
	SenderFault bool   `xml:"SenderFault"`
	Code        string `xml:"Code"`
	Message     string `xml:"Message"`
}

type qpSendMessageBatchResultEntry struct {
	ID string `xml:"Id"`
	qpSendResultFields
}

type qpSendMessageBatchResult struct {
	XMLName    xml.Name                        `xml:"SendMessageBatchResult"`
	Successful []qpSendMessageBatchResultEntry `xml:"SendMessageBatchResultEntry"`
	Failed     []qpBatchResultErrorEntry       `xml:"BatchResultErrorEntry"`
}

type qpBatchID struct {
	ID string `xml:"Id"`
}

type qpDeleteMessageBatchResult struct {
	XMLName    xml.Name                  `xml:"DeleteMessageBatchResult"`
	Successful []qpBatchID               `xml:"DeleteMessageBatchResultEntry"`
	Failed     []qpBatchResultErrorEntry `xml:"BatchResultErrorEntry"`
}

type qpChangeMessageVisibilityBatchResult struct {
	XMLName    xml.Name                  `xml:"ChangeMessageVisibilityBatchResult"`
	Successful []qpBatchID               `xml:"ChangeMessageVisibilityBatchResultEntry"`
	Failed     []qpBatchResultErrorEntry `xml:"BatchResultErrorEntry"`
}

type qpNameValue struct {
	Name  string `xml:"Name"`
	Value string `xml:"Value"`
}

type qpMessageAttributeValue struct {
	StringValue string `xml:"StringValue"`
	BinaryValue string `xml:"BinaryValue"` // base64
	DataType    string `xml:"DataType"`
}

type qpMessageAttribute struct {
	Name  string                  `xml:"Name"`
	Value qpMessageAttributeValue `xml:"Value"`
}

type qpMessage struct {
	MessageID              string               `xml:"MessageId"`
	ReceiptHandle          string               `xml:"ReceiptHandle"`
	MD5OfBody              string               `xml:"MD5OfBody"`
	Body                   string               `xml:"Body"`
	Attributes             []qpNameValue        `xml:"Attribute"`
	MD5OfMessageAttributes string               `xml:"MD5OfMessageAttributes"`
	MessageAttributes      []qpMessageAttribute `xml:"MessageAttribute"`
}

type qpReceiveMessageResult struct {
	XMLName  xml.Name    `xml:"ReceiveMessageResult"`
	Messages []qpMessage `xml:"Message"`
}

type qpGetQueueAttributesResult struct {
	XMLName    xml.Name      `xml:"GetQueueAttributesResult"`
	Attributes []qpNameValue `xml:"Attribute"`
}

type qpKeyValue struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

type qpListQueueTagsResult struct {
	XMLName xml.Name     `xml:"ListQueueTagsResult"`
	Tags    []qpKeyValue `xml:"Tag"`
}

type qpStartMessageMoveTaskResult struct {
	XMLName    xml.Name `xml:"StartMessageMoveTaskResult"`
	TaskHandle string   `xml:"TaskHandle"`
}

type qpCancelMessageMoveTaskResult struct {
	XMLName                          xml.Name `xml:"CancelMessageMoveTaskResult"`
	ApproximateNumberOfMessagesMoved int64    `xml:"ApproximateNumberOfMessagesMoved"`
}

type qpMoveTaskEntry struct {
	TaskHandle                        string `xml:"TaskHandle"`
	Status                            string `xml:"Status"`
	SourceArn                         string `xml:"SourceArn"`
	DestinationArn                    string `xml:"DestinationArn"`
	MaxNumberOfMessagesPerSecond      *int   `xml:"MaxNumberOfMessagesPerSecond"`
	ApproximateNumberOfMessagesMoved  int64  `xml:"ApproximateNumberOfMessagesMoved"`
	ApproximateNumberOfMessagesToMove *int64 `xml:"ApproximateNumberOfMessagesToMove"`
	FailureReason                     string `xml:"FailureReason"`
	StartedTimestamp                  int64  `xml:"StartedTimestamp"`
}

type qpListMessageMoveTasksResult struct {
	XMLName xml.Name          `xml:"ListMessageMoveTasksResult"`
	Results []qpMoveTaskEntry `xml:"ListMessageMoveTasksResultEntry"`
}

// qpNameValues turns name/value elements into a map, requiring the names to be distinct.
func qpNameValues(t *testing.T, what string, nv []qpNameValue) map[string]string {
	t.Helper()
	m := make(map[string]string, len(nv))
	for _, a := range nv {
		_, dup := m[a.Name]
		require.False(t, dup, "%s: attribute %q appears twice", what, a.Name)
		m[a.Name] = a.Value
	}
	return m
}

// qpTags turns Tag elements into a map.
func qpTags(kv []qpKeyValue) map[string]string {
	m := make(map[string]string, len(kv))
	for _, a := range kv {
		m[a.Key] = a.Value
	}
	return m
}

// qpAttr is a message attribute as a client sees it.
type qpAttr struct {
	DataType string
	String   string
	Binary   []byte
}

// qpMessageAttrs decodes the message attributes of a received message (BinaryValue is base64).
func qpMessageAttrs(t *testing.T, m qpMessage) map[string]qpAttr {
	t.Helper()
	attrs := make(map[string]qpAttr, len(m.MessageAttributes))
	for _, a := range m.MessageAttributes {
		v := qpAttr{DataType: a.Value.DataType, String: a.Value.StringValue}
		if strings.HasPrefix(a.Value.DataType, "Binary") {
			b, err := base64.StdEncoding.DecodeString(a.Value.BinaryValue)
			require.NoError(t, err, "BinaryValue of %q is not base64: %q", a.Name, a.Value.BinaryValue)
			v.Binary = b
			v.String = ""
		}
		_, dup := attrs[a.Name]
		require.False(t, dup, "message attribute %q appears twice", a.Name)
		attrs[a.Name] = v
	}
	return attrs
}

// qpMD5 is the hex MD5 of b.
func qpMD5(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

// qpMD5OfAttributes computes MD5OfMessageAttributes as spec 1.4.6 gives it: attributes sorted by name, each
// as name and data type with 4-byte big-endian lengths, a transport byte (1 String/Number, 2 Binary) and
// the value with its length.
func qpMD5OfAttributes(attrs map[string]qpAttr) string {
	var b []byte
	field := func(v []byte) {
		b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
		b = append(b, v...)
	}
	for _, name := range slices.Sorted(maps.Keys(attrs)) {
		a := attrs[name]
		field([]byte(name))
		field([]byte(a.DataType))
		if strings.HasPrefix(a.DataType, "Binary") {
			b = append(b, 2)
			field(a.Binary)
		} else {
			b = append(b, 1)
			field([]byte(a.String))
		}
	}
	return qpMD5(b)
}

// qpAttrParams renders message attributes as query parameters under prefix ("MessageAttribute" or
// "SendMessageBatchRequestEntry.1.MessageAttribute"), in name order, binary values in base64.
func qpAttrParams(prefix string, attrs map[string]qpAttr) []string {
	var kv []string
	for i, name := range slices.Sorted(maps.Keys(attrs)) {
		a := attrs[name]
		p := fmt.Sprintf("%s.%d.", prefix, i+1)
		kv = append(kv, p+"Name", name, p+"Value.DataType", a.DataType)
		if strings.HasPrefix(a.DataType, "Binary") {
			kv = append(kv, p+"Value.BinaryValue", base64.StdEncoding.EncodeToString(a.Binary))
		} else {
			kv = append(kv, p+"Value.StringValue", a.String)
		}
	}
	return kv
}

// qpCreate creates a queue with attributes (name, value pairs) and returns its URL.
func qpCreate(t *testing.T, e *qpEnv, name string, attrs ...string) string {
	t.Helper()
	kv := []string{"QueueName", name}
	for i := 0; i < len(attrs); i += 2 {
		n := strconv.Itoa(i/2 + 1)
		kv = append(kv, "Attribute."+n+".Name", attrs[i], "Attribute."+n+".Value", attrs[i+1])
	}
	r := qpCall[qpCreateQueueResult](t, e, "CreateQueue", kv...)
	qpRequireQueueURL(t, r.QueueURL, name)
	return r.QueueURL
}

// qpRequireQueueURL requires an SQS queue URL: a path of the account id and the queue name.
func qpRequireQueueURL(t *testing.T, u, name string) {
	t.Helper()
	parsed, err := url.Parse(u)
	require.NoError(t, err, "queue URL %q", u)
	require.Contains(t, []string{"http", "https"}, parsed.Scheme, "queue URL %q", u)
	require.NotEmpty(t, parsed.Host, "queue URL %q", u)
	require.Equal(t, "/"+qpAccount+"/"+name, parsed.Path, "queue URL %q", u)
}

// qpQueue returns the catalogue's queue behind a name.
func qpQueue(t *testing.T, e *qpEnv, name string) catalog.Queue {
	t.Helper()
	q, ok := e.srv.Queue(name)
	require.True(t, ok, "queue %q does not exist", name)
	return q
}

// qpDef returns the catalogue's definition of the queue behind a name: its settings as they are now.
func qpDef(t *testing.T, e *qpEnv, name string) catalog.Definition {
	t.Helper()
	d, ok := e.srv.Catalog().Definition(e.srv.Catalog().DefaultNamespace(), name)
	require.True(t, ok, "queue %q does not exist", name)
	return d
}

// qpMessages returns the stored messages of a queue.
func qpMessages(t *testing.T, e *qpEnv, name string) []fifoq.Snapshot {
	t.Helper()
	return slices.Collect(qpQueue(t, e, name).Messages())
}

// qpWaitTimers waits until n timers (long polls, rate-limited move tasks) wait on the clock. There is no
// time limit, which a slow machine could exceed: a server that does not run its queues on the clock of
// WithClock never gets there, and go test's -timeout reports the hang with every goroutine's stack.
func qpWaitTimers(t *testing.T, clock *fifoq.ManualClock, n int) {
	t.Helper()
	clock.WaitTimers(n)
}

// qpMillis is a time as SQS message timestamps give it: epoch milliseconds.
func qpMillis(tm time.Time) string { return strconv.FormatInt(tm.UnixMilli(), 10) }

func TestQpMD5Vectors(t *testing.T) {
	t.Parallel()
	require.Equal(t, qpFoobarMD5, qpMD5([]byte("foobar")))
	require.Equal(t, qpMyAttributeMD5, qpMD5OfAttributes(map[string]qpAttr{"MyAttribute": {DataType: "String", String: "foobar"}}))
	require.Equal(t, qpTraceHeaderMD5, qpMD5OfAttributes(map[string]qpAttr{"AWSTraceHeader": {DataType: "String", String: qpTraceHeader}}))
}

package sqsapi_test

import (
	"cmp"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
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

// qpQueue returns the fifoq queue behind a name.
func qpQueue(t *testing.T, e *qpEnv, name string) *fifoq.Queue {
	t.Helper()
	q, ok := e.srv.Queue(name)
	require.True(t, ok, "queue %q does not exist", name)
	return q
}

// qpMessages returns the stored messages of a queue.
func qpMessages(t *testing.T, e *qpEnv, name string) []fifoq.Snapshot {
	t.Helper()
	return slices.Collect(qpQueue(t, e, name).Messages())
}

// qpWaitTimers waits until n timers (long polls, rate-limited move tasks) wait on the clock, failing the
// test rather than hanging when they never come.
func qpWaitTimers(t *testing.T, clock *fifoq.ManualClock, n int) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		clock.WaitTimers(n)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("no %d timers ever waited on the server's clock (it has %d): the server does not run its queues "+
			"on the clock of WithClock", n, clock.Timers())
	}
}

// qpMillis is a time as SQS message timestamps give it: epoch milliseconds.
func qpMillis(tm time.Time) string { return strconv.FormatInt(tm.UnixMilli(), 10) }

func TestQpMD5Vectors(t *testing.T) {
	t.Parallel()
	require.Equal(t, qpFoobarMD5, qpMD5([]byte("foobar")))
	require.Equal(t, qpMyAttributeMD5, qpMD5OfAttributes(map[string]qpAttr{"MyAttribute": {DataType: "String", String: "foobar"}}))
	require.Equal(t, qpTraceHeaderMD5, qpMD5OfAttributes(map[string]qpAttr{"AWSTraceHeader": {DataType: "String", String: qpTraceHeader}}))
}

func TestQpCreateQueue(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	create := []string{"QueueName", "qp-std",
		"Attribute.1.Name", "VisibilityTimeout", "Attribute.1.Value", "45",
		"Attribute.2.Name", "MessageRetentionPeriod", "Attribute.2.Value", "3600",
		"Attribute.3.Name", "MaximumMessageSize", "Attribute.3.Value", "2048",
		"Attribute.4.Name", "DelaySeconds", "Attribute.4.Value", "5",
		"Attribute.5.Name", "ReceiveMessageWaitTimeSeconds", "Attribute.5.Value", "2",
		"Tag.1.Key", "team", "Tag.1.Value", "core",
		"Tag.2.Key", "env", "Tag.2.Value", "test",
	}
	r := qpCall[qpCreateQueueResult](t, e, "CreateQueue", create...)
	qpRequireQueueURL(t, r.QueueURL, "qp-std")

	a := qpQueue(t, e, "qp-std").Attributes()
	require.Equal(t, 45*time.Second, a.VisibilityTimeout)
	require.Equal(t, time.Hour, a.Retention)
	require.Equal(t, 2048, a.MaxMessageSize)
	require.Equal(t, 5*time.Second, a.Delay)
	require.Equal(t, 2*time.Second, a.ReceiveWaitTime)

	got := qpNameValues(t, "GetQueueAttributes All", qpCall[qpGetQueueAttributesResult](t, e, "GetQueueAttributes",
		"QueueUrl", r.QueueURL, "AttributeName.1", "All").Attributes)
	created := strconv.FormatInt(qpStart.Unix(), 10) // epoch seconds (spec 7.3.7)
	for name, want := range map[string]string{
		"VisibilityTimeout": "45", "MessageRetentionPeriod": "3600", "MaximumMessageSize": "2048",
		"DelaySeconds": "5", "ReceiveMessageWaitTimeSeconds": "2", "QueueArn": qpArn("qp-std"),
		"CreatedTimestamp": created, "LastModifiedTimestamp": created,
		"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0",
		"ApproximateNumberOfMessagesDelayed": "0",
	} {
		require.Equal(t, want, got[name], "GetQueueAttributes All: %s, in %v", name, got)
	}
	for _, name := range []string{"FifoQueue", "ContentBasedDeduplication", "DeduplicationScope", "FifoThroughputLimit"} {
		require.NotContains(t, got, name, "a standard queue has no FIFO attributes (spec 3.12)")
	}
	tags := qpCall[qpListQueueTagsResult](t, e, "ListQueueTags", "QueueUrl", r.QueueURL)
	require.Equal(t, map[string]string{"team": "core", "env": "test"}, qpTags(tags.Tags))

	// The same name and attributes return the same URL; other attributes are an error (spec 7.3.2).
	again := qpCall[qpCreateQueueResult](t, e, "CreateQueue", create...)
	require.Equal(t, r.QueueURL, again.QueueURL, "CreateQueue with identical attributes is idempotent")
	qpFail(t, e, 400, "QueueAlreadyExists", "CreateQueue", "QueueName", "qp-std",
		"Attribute.1.Name", "VisibilityTimeout", "Attribute.1.Value", "46")
	require.Equal(t, 45*time.Second, qpQueue(t, e, "qp-std").Attributes().VisibilityTimeout)

	// Rejected creations create nothing.
	for _, c := range []struct {
		name, code string
		kv         []string
	}{
		{"bad name!", "InvalidParameterValue", nil},
		{strings.Repeat("a", 81), "InvalidParameterValue", nil},
		{"qp-nosuffix", "InvalidParameterValue", []string{"FifoQueue", "true"}},               // spec 2.1
		{"qp-suffix.fifo", "InvalidParameterValue", nil},                                      // spec 2.1
		{"qp-cbd", "InvalidAttributeName", []string{"ContentBasedDeduplication", "false"}},    // spec 3.12
		{"qp-fifofalse", "InvalidAttributeName", []string{"FifoQueue", "false"}},              // spec 3.12
		{"qp-scope", "InvalidAttributeName", []string{"DeduplicationScope", "queue"}},         // spec 3.12
		{"qp-vt", "InvalidAttributeValue", []string{"VisibilityTimeout", "43201"}},            // spec 1.2.1
		{"qp-delay", "InvalidAttributeValue", []string{"DelaySeconds", "901"}},                // spec 4.1
		{"qp-ret", "InvalidAttributeValue", []string{"MessageRetentionPeriod", "59"}},         // spec 5.1
		{"qp-size", "InvalidAttributeValue", []string{"MaximumMessageSize", "1023"}},          // spec 7.1.2
		{"qp-wait", "InvalidAttributeValue", []string{"ReceiveMessageWaitTimeSeconds", "21"}}, // spec 1.5.1
		{"qp-nan", "InvalidAttributeValue", []string{"VisibilityTimeout", "ten"}},
		{"qp-unknown", "InvalidAttributeName", []string{"NoSuchAttribute", "1"}},
	} {
		kv := []string{"QueueName", c.name}
		for i := 0; i < len(c.kv); i += 2 {
			n := strconv.Itoa(i/2 + 1)
			kv = append(kv, "Attribute."+n+".Name", c.kv[i], "Attribute."+n+".Value", c.kv[i+1])
		}
		qpFail(t, e, 400, c.code, "CreateQueue", kv...)
		_, ok := e.srv.Queue(c.name)
		require.False(t, ok, "a rejected CreateQueue of %q created it", c.name)
	}
	qpFail(t, e, 400, "MissingParameter", "CreateQueue")
	list := qpCall[qpListQueuesResult](t, e, "ListQueues")
	require.Equal(t, []string{r.QueueURL}, list.QueueURLs, "rejected CreateQueue calls created queues")

	// Attributes given with their default values are identical to attributes left out (spec 7.3.2).
	plain := qpCreate(t, e, "qp-plain")
	require.Equal(t, plain, qpCreate(t, e, "qp-plain", "VisibilityTimeout", "30", "DelaySeconds", "0"))
	qpFail(t, e, 400, "QueueAlreadyExists", "CreateQueue", "QueueName", "qp-plain",
		"Attribute.1.Name", "DelaySeconds", "Attribute.1.Value", "1")

	// Names are case-sensitive, and 80 characters at most (spec 7.3.1).
	upper := qpCreate(t, e, "QP-PLAIN")
	require.NotEqual(t, plain, upper)
	qpCreate(t, e, strings.Repeat("n", 80))
}

func TestQpCreateQueueFIFO(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	// Every FIFO attribute (spec 2.1, 3.12, 3.13).
	fifoURL := qpCreate(t, e, "qp.fifo", "FifoQueue", "true", "ContentBasedDeduplication", "true",
		"DeduplicationScope", "messageGroup", "FifoThroughputLimit", "perMessageGroupId")
	fq := qpQueue(t, e, "qp.fifo")
	require.True(t, fq.FIFO())
	require.True(t, fq.Attributes().ContentBasedDeduplication)
	require.Equal(t, fifoq.DeduplicationScopeMessageGroup, fq.Attributes().DeduplicationScope)
	got := qpNameValues(t, "GetQueueAttributes All (FIFO)", qpCall[qpGetQueueAttributesResult](t, e, "GetQueueAttributes",
		"QueueUrl", fifoURL, "AttributeName.1", "All").Attributes)
	for name, want := range map[string]string{
		"FifoQueue": "true", "ContentBasedDeduplication": "true", "DeduplicationScope": "messageGroup",
		"FifoThroughputLimit": "perMessageGroupId", "QueueArn": qpArn("qp.fifo"), "VisibilityTimeout": "30",
		"MessageRetentionPeriod": "345600", "MaximumMessageSize": "1048576", "DelaySeconds": "0",
		"ReceiveMessageWaitTimeSeconds": "0",
	} {
		require.Equal(t, want, got[name], "GetQueueAttributes All (FIFO): %s, in %v", name, got)
	}
	// FIFO queues reject a FifoThroughputLimit of perMessageGroupId
	// without DeduplicationScope messageGroup (spec 3.13, which gives no code).
	qpFail(t, e, 400, "", "CreateQueue", "QueueName", "qp-ht.fifo",
		"Attribute.1.Name", "FifoQueue", "Attribute.1.Value", "true",
		"Attribute.2.Name", "FifoThroughputLimit", "Attribute.2.Value", "perMessageGroupId")
	_, ok := e.srv.Queue("qp-ht.fifo")
	require.False(t, ok)

	// ".fifo" counts in the 80 characters (spec 2.1, 7.3.1).
	qpCreate(t, e, strings.Repeat("f", 75)+".fifo", "FifoQueue", "true")
	qpFail(t, e, 400, "InvalidParameterValue", "CreateQueue", "QueueName", strings.Repeat("f", 76)+".fifo",
		"Attribute.1.Name", "FifoQueue", "Attribute.1.Value", "true")
}

func TestQpGetQueueURLAndDeleteQueue(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-get")
	r := qpCall[qpGetQueueURLResult](t, e, "GetQueueUrl", "QueueName", "qp-get")
	require.Equal(t, u, r.QueueURL)
	r = qpCall[qpGetQueueURLResult](t, e, "GetQueueUrl", "QueueName", "qp-get", "QueueOwnerAWSAccountId", qpAccount)
	require.Equal(t, u, r.QueueURL)
	er := qpFail(t, e, 400, "AWS.SimpleQueueService.NonExistentQueue", "GetQueueUrl", "QueueName", "qp-missing")
	require.Contains(t, er.Message, "does not exist", "spec 7.3.4")

	qpCall[qpNoResult](t, e, "DeleteQueue", "QueueUrl", u)
	_, ok := e.srv.Queue("qp-get")
	require.False(t, ok, "DeleteQueue left the queue")
	qpFail(t, e, 400, "AWS.SimpleQueueService.NonExistentQueue", "GetQueueUrl", "QueueName", "qp-get")
	qpFail(t, e, 400, "AWS.SimpleQueueService.NonExistentQueue", "DeleteQueue", "QueueUrl", u)
	qpFail(t, e, 400, "AWS.SimpleQueueService.NonExistentQueue", "SendMessage", "QueueUrl", u, "MessageBody", "x")

	// A deleted name can be reused after 60 seconds (spec 7.3.2).
	qpFail(t, e, 400, "AWS.SimpleQueueService.QueueDeletedRecently", "CreateQueue", "QueueName", "qp-get")
	e.clock.Advance(61 * time.Second)
	require.Equal(t, u, qpCreate(t, e, "qp-get"))
}

func TestQpListQueues(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	empty := qpCall[qpListQueuesResult](t, e, "ListQueues")
	require.Empty(t, empty.QueueURLs)
	require.Empty(t, empty.NextToken)

	urls := map[string]string{}
	for _, name := range []string{"qp-a1", "qp-a2", "qp-b1"} {
		urls[name] = qpCreate(t, e, name)
	}
	all := qpCall[qpListQueuesResult](t, e, "ListQueues")
	require.ElementsMatch(t, slices.Collect(maps.Values(urls)), all.QueueURLs)
	prefixed := qpCall[qpListQueuesResult](t, e, "ListQueues", "QueueNamePrefix", "qp-a")
	require.ElementsMatch(t, []string{urls["qp-a1"], urls["qp-a2"]}, prefixed.QueueURLs)
	none := qpCall[qpListQueuesResult](t, e, "ListQueues", "QueueNamePrefix", "zz")
	require.Empty(t, none.QueueURLs)

	// Pages of 2 (spec 7.3.6: MaxResults with NextToken).
	first := qpCall[qpListQueuesResult](t, e, "ListQueues", "MaxResults", "2")
	require.Len(t, first.QueueURLs, 2)
	require.NotEmpty(t, first.NextToken, "a first page of 2 out of 3 has a NextToken")
	second := qpCall[qpListQueuesResult](t, e, "ListQueues", "MaxResults", "2", "NextToken", first.NextToken)
	require.Len(t, second.QueueURLs, 1)
	require.Empty(t, second.NextToken, "the last page has no NextToken")
	require.ElementsMatch(t, all.QueueURLs, append(first.QueueURLs, second.QueueURLs...))

	qpFail(t, e, 400, "InvalidParameterValue", "ListQueues", "MaxResults", "1001")
	qpFail(t, e, 400, "InvalidParameterValue", "ListQueues", "MaxResults", "0")
}

func TestQpSendMessage(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-send")

	// The spec's vectors (1.4.6).
	vec := map[string]qpAttr{"MyAttribute": {DataType: "String", String: "foobar"}}
	kv := append([]string{"QueueUrl", u, "MessageBody", "foobar",
		"MessageSystemAttribute.1.Name", "AWSTraceHeader",
		"MessageSystemAttribute.1.Value.DataType", "String",
		"MessageSystemAttribute.1.Value.StringValue", qpTraceHeader,
	}, qpAttrParams("MessageAttribute", vec)...)
	r := qpCall[qpSendMessageResult](t, e, "SendMessage", kv...)
	require.NotEmpty(t, r.MessageID)
	require.Equal(t, qpFoobarMD5, r.MD5OfMessageBody)
	require.Equal(t, qpMyAttributeMD5, r.MD5OfMessageAttributes)
	require.Equal(t, qpTraceHeaderMD5, r.MD5OfMessageSystemAttributes)
	require.Empty(t, r.SequenceNumber, "a standard queue returns no SequenceNumber (spec 1.4.5)")

	// String, Number, Binary and custom types, without system attributes.
	attrs := map[string]qpAttr{
		"s":           {DataType: "String", String: "héllo wörld"},
		"n":           {DataType: "Number", String: "-12.5"},
		"b":           {DataType: "Binary", Binary: []byte{0, 1, 2, 0xfe, 0xff}},
		"custom.kind": {DataType: "String.kind", String: "k"},
		"img":         {DataType: "Binary.png", Binary: []byte("\x89PNG")},
	}
	r2 := qpCall[qpSendMessageResult](t, e, "SendMessage",
		append([]string{"QueueUrl", u, "MessageBody", "second ✓"}, qpAttrParams("MessageAttribute", attrs)...)...)
	require.Equal(t, qpMD5([]byte("second ✓")), r2.MD5OfMessageBody)
	require.Equal(t, qpMD5OfAttributes(attrs), r2.MD5OfMessageAttributes)
	require.Empty(t, r2.MD5OfMessageSystemAttributes, "no system attributes, no digest (spec 1.4.6)")
	require.NotEqual(t, r.MessageID, r2.MessageID)

	// Without attributes there is no attribute digest.
	r3 := qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "plain", "DelaySeconds", "10")
	require.Empty(t, r3.MD5OfMessageAttributes)

	msgs := qpMessages(t, e, "qp-send")
	require.Len(t, msgs, 3)
	require.Equal(t, r.MessageID, msgs[0].MessageID)
	require.Equal(t, "foobar", msgs[0].Body)
	require.Equal(t, fifoq.Attribute{DataType: "String", StringValue: "foobar"}, msgs[0].Attributes["MyAttribute"])
	require.Equal(t, "second ✓", msgs[1].Body)
	for name, a := range attrs {
		got := msgs[1].Attributes[name]
		require.Equal(t, a.DataType, got.DataType, "attribute %s", name)
		require.Equal(t, a.String, got.StringValue, "attribute %s", name)
		require.Equal(t, string(a.Binary), string(got.BinaryValue), "attribute %s", name)
	}
	require.Equal(t, fifoq.StateDelayed, msgs[2].State, "DelaySeconds=10")
	require.Equal(t, qpStart.Add(10*time.Second), msgs[2].VisibleAt)

	// Rejected sends store nothing.
	for _, c := range []struct {
		what, code string
		kv         []string
	}{
		{"no body", "MissingParameter", []string{"QueueUrl", u}},                                                   // spec 7.1.1
		{"empty body", "MissingParameter", []string{"QueueUrl", u, "MessageBody", ""}},                             // spec 7.1.1
		{"invalid character", "InvalidMessageContents", []string{"QueueUrl", u, "MessageBody", "a\x01b"}},          // spec 7.1.1
		{"delay 901", "InvalidParameterValue", []string{"QueueUrl", u, "MessageBody", "x", "DelaySeconds", "901"}}, // spec 4.2
		{"empty attribute value", "InvalidParameterValue", append([]string{"QueueUrl", u, "MessageBody", "x"},
			qpAttrParams("MessageAttribute", map[string]qpAttr{"e": {DataType: "String"}})...)}, // spec 7.1.3
		{"AWS. attribute", "InvalidParameterValue", append([]string{"QueueUrl", u, "MessageBody", "x"},
			qpAttrParams("MessageAttribute", map[string]qpAttr{"AWS.x": {DataType: "String", String: "v"}})...)}, // spec 7.1.3
		{"bad data type", "InvalidParameterValue", append([]string{"QueueUrl", u, "MessageBody", "x"},
			qpAttrParams("MessageAttribute", map[string]qpAttr{"t": {DataType: "Text", String: "v"}})...)}, // spec 7.1.3
		{"Number not a number", "InvalidParameterValue", append([]string{"QueueUrl", u, "MessageBody", "x"},
			qpAttrParams("MessageAttribute", map[string]qpAttr{"n": {DataType: "Number", String: "abc"}})...)}, // spec 7.1.3
		{"11 attributes", "InvalidParameterValue", append([]string{"QueueUrl", u, "MessageBody", "x"},
			qpAttrParams("MessageAttribute", qpManyAttrs(11))...)}, // spec 7.1.3
		{"leading period", "InvalidParameterValue", append([]string{"QueueUrl", u, "MessageBody", "x"},
			qpAttrParams("MessageAttribute", map[string]qpAttr{".a": {DataType: "String", String: "v"}})...)}, // spec 7.1.3
		{"double period", "InvalidParameterValue", append([]string{"QueueUrl", u, "MessageBody", "x"},
			qpAttrParams("MessageAttribute", map[string]qpAttr{"a..b": {DataType: "String", String: "v"}})...)}, // spec 7.1.3
		{"name of 257", "InvalidParameterValue", append([]string{"QueueUrl", u, "MessageBody", "x"},
			qpAttrParams("MessageAttribute", map[string]qpAttr{strings.Repeat("n", 257): {DataType: "String", String: "v"}})...)}, // spec 7.1.3
		{"invalid character in a String attribute", "", append([]string{"QueueUrl", u, "MessageBody", "x"},
			qpAttrParams("MessageAttribute", map[string]qpAttr{"s": {DataType: "String", String: "a\x00b"}})...)}, // spec 7.1.3, no code given
		{"system attribute other than AWSTraceHeader", "", []string{"QueueUrl", u, "MessageBody", "x",
			"MessageSystemAttribute.1.Name", "SenderId", "MessageSystemAttribute.1.Value.DataType", "String",
			"MessageSystemAttribute.1.Value.StringValue", "me"}}, // spec 7.1.4
		{"dedup id on standard", "InvalidParameterValue", []string{"QueueUrl", u, "MessageBody", "x",
			"MessageDeduplicationId", "d"}},
		{"no queue", "AWS.SimpleQueueService.NonExistentQueue", []string{"QueueUrl",
			strings.Replace(u, "qp-send", "qp-none", 1), "MessageBody", "x"}},
	} {
		qpFail(t, e, 400, c.code, "SendMessage", c.kv...)
		require.Len(t, qpMessages(t, e, "qp-send"), 3, "a rejected SendMessage (%s) stored a message", c.what)
	}
	qpFail(t, e, 400, "InvalidParameterValue", "SendMessage", "QueueUrl", u, "MessageBody", "big",
		"MessageAttribute.1.Name", "big", "MessageAttribute.1.Value.DataType", "String",
		"MessageAttribute.1.Value.StringValue", strings.Repeat("x", 1<<20)) // spec 7.1.2
	er := qpFail(t, e, 400, "InvalidParameterValue", "SendMessage", "QueueUrl", u, "MessageBody", strings.Repeat("x", 1<<20+1))
	require.Equal(t, "One or more parameters are invalid. Reason: Message must be shorter than 1048576 bytes.", er.Message,
		"spec 7.1.2")
	er = qpFail(t, e, 400, "MissingParameter", "SendMessage", "QueueUrl", u)
	require.Equal(t, "The request must contain the parameter MessageBody.", er.Message, "spec 7.1.1")
	require.Len(t, qpMessages(t, e, "qp-send"), 3)

	// Ten attributes are allowed, and a body of exactly MaximumMessageSize.
	ten := qpManyAttrs(10)
	r4 := qpCall[qpSendMessageResult](t, e, "SendMessage",
		append([]string{"QueueUrl", u, "MessageBody", "ten"}, qpAttrParams("MessageAttribute", ten)...)...)
	require.Equal(t, qpMD5OfAttributes(ten), r4.MD5OfMessageAttributes)
	qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", strings.Repeat("x", 1<<20))
	require.Len(t, qpMessages(t, e, "qp-send"), 5)
}

// qpManyAttrs returns n String attributes.
func qpManyAttrs(n int) map[string]qpAttr {
	m := make(map[string]qpAttr, n)
	for i := range n {
		m["a"+strconv.Itoa(i)] = qpAttr{DataType: "String", String: "v" + strconv.Itoa(i)}
	}
	return m
}

func TestQpSendMessageFIFO(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-send.fifo", "FifoQueue", "true")
	r1 := qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "one",
		"MessageGroupId", "g1", "MessageDeduplicationId", "d1")
	r2 := qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "two",
		"MessageGroupId", "g1", "MessageDeduplicationId", "d2", "DelaySeconds", "0") // spec 4.4
	for _, r := range []qpSendMessageResult{r1, r2} {
		require.Regexp(t, `^[0-9]+$`, r.SequenceNumber, "FIFO sends return a decimal SequenceNumber (spec 1.4.5)")
	}
	require.Equal(t, 1, qpCompareDecimal(r2.SequenceNumber, r1.SequenceNumber), "sequence numbers increase in a group")

	// A duplicate is accepted and stores nothing; it reports the original (spec 3.4, 3.9).
	dup := qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "again",
		"MessageGroupId", "g2", "MessageDeduplicationId", "d1")
	require.Equal(t, r1.MessageID, dup.MessageID)
	require.Equal(t, r1.SequenceNumber, dup.SequenceNumber)
	require.Len(t, qpMessages(t, e, "qp-send.fifo"), 2)

	for _, c := range []struct {
		what, code string
		kv         []string
	}{
		{"no group", "MissingParameter", []string{"MessageDeduplicationId", "d9"}},                                                      // spec 2.2
		{"no dedup id", "InvalidParameterValue", []string{"MessageGroupId", "g"}},                                                       // spec 3.1
		{"delay", "InvalidParameterValue", []string{"MessageGroupId", "g", "MessageDeduplicationId", "d9", "DelaySeconds", "2"}},        // spec 4.3
		{"group with space", "InvalidParameterValue", []string{"MessageGroupId", "group 1", "MessageDeduplicationId", "d9"}},            // spec 2.3
		{"group of 129", "InvalidParameterValue", []string{"MessageGroupId", strings.Repeat("g", 129), "MessageDeduplicationId", "d9"}}, // spec 2.3
		{"dedup of 129", "InvalidParameterValue", []string{"MessageGroupId", "g", "MessageDeduplicationId", strings.Repeat("d", 129)}},  // spec 3.2
	} {
		qpFail(t, e, 400, c.code, "SendMessage", append([]string{"QueueUrl", u, "MessageBody", "x"}, c.kv...)...)
		require.Len(t, qpMessages(t, e, "qp-send.fifo"), 2, "a rejected SendMessage (%s) stored a message", c.what)
	}
	// The texts the spec gives (2.2, 3.1, 4.3).
	for _, c := range []struct {
		kv   []string
		text string
	}{
		{[]string{"MessageDeduplicationId", "d9"}, "The request must contain the parameter MessageGroupId."},
		{[]string{"MessageGroupId", "g"}, "The queue should either have ContentBasedDeduplication enabled or " +
			"MessageDeduplicationId provided explicitly"},
		{[]string{"MessageGroupId", "g", "MessageDeduplicationId", "d9", "DelaySeconds", "2"},
			"Value 2 for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid " +
				"for this queue type."},
	} {
		_, _, body := e.qpPost(t, "SendMessage", append([]string{"QueueUrl", u, "MessageBody", "x"}, c.kv...)...)
		var er qpErrorResponse
		require.NoError(t, xml.Unmarshal(body, &er))
		require.Equal(t, c.text, er.Message)
	}

	// A FIFO delete outside the visibility window fails (spec 1.3.5), as does a change of visibility (1.3.7).
	r := qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u, "VisibilityTimeout", "5")
	require.Len(t, r.Messages, 1)
	e.clock.Advance(6 * time.Second)
	er := qpFail(t, e, 400, "InvalidParameterValue", "DeleteMessage", "QueueUrl", u, "ReceiptHandle", r.Messages[0].ReceiptHandle)
	require.Equal(t, "Value "+r.Messages[0].ReceiptHandle+" for parameter ReceiptHandle is invalid. Reason: The receipt "+
		"handle has expired.", er.Message)
	qpFail(t, e, 400, "InvalidParameterValue", "ChangeMessageVisibility", "QueueUrl", u,
		"ReceiptHandle", r.Messages[0].ReceiptHandle, "VisibilityTimeout", "10")
	require.Len(t, qpMessages(t, e, "qp-send.fifo"), 2)

	// A purge clears the deduplication history (spec 3.10).
	qpCall[qpNoResult](t, e, "PurgeQueue", "QueueUrl", u)
	again := qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "one",
		"MessageGroupId", "g1", "MessageDeduplicationId", "d1")
	require.NotEqual(t, r1.MessageID, again.MessageID)
	require.Len(t, qpMessages(t, e, "qp-send.fifo"), 1)
}

// qpCompareDecimal compares two non-negative decimal strings by value.
func qpCompareDecimal(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return cmp.Compare(len(a), len(b))
	}
	return strings.Compare(a, b)
}

func TestQpSendMessageBatch(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-batch")
	vec := map[string]qpAttr{"MyAttribute": {DataType: "String", String: "foobar"}}
	kv := []string{"QueueUrl", u,
		"SendMessageBatchRequestEntry.1.Id", "a",
		"SendMessageBatchRequestEntry.1.MessageBody", "foobar",
		"SendMessageBatchRequestEntry.2.Id", "b_2",
		"SendMessageBatchRequestEntry.2.MessageBody", "delayed",
		"SendMessageBatchRequestEntry.2.DelaySeconds", "10",
		"SendMessageBatchRequestEntry.2.MessageSystemAttribute.1.Name", "AWSTraceHeader",
		"SendMessageBatchRequestEntry.2.MessageSystemAttribute.1.Value.DataType", "String",
		"SendMessageBatchRequestEntry.2.MessageSystemAttribute.1.Value.StringValue", qpTraceHeader,
		"SendMessageBatchRequestEntry.3.Id", "c-3",
		"SendMessageBatchRequestEntry.3.MessageBody", "bad\x01",
	}
	kv = append(kv, qpAttrParams("SendMessageBatchRequestEntry.1.MessageAttribute", vec)...)
	r := qpCall[qpSendMessageBatchResult](t, e, "SendMessageBatch", kv...)
	require.Len(t, r.Successful, 2, "in %+v", r)
	byID := map[string]qpSendMessageBatchResultEntry{}
	for _, s := range r.Successful {
		byID[s.ID] = s
		require.NotEmpty(t, s.MessageID)
		require.Empty(t, s.SequenceNumber)
	}
	require.Equal(t, qpFoobarMD5, byID["a"].MD5OfMessageBody)
	require.Equal(t, qpMyAttributeMD5, byID["a"].MD5OfMessageAttributes)
	require.Empty(t, byID["a"].MD5OfMessageSystemAttributes)
	require.Equal(t, qpMD5([]byte("delayed")), byID["b_2"].MD5OfMessageBody)
	require.Empty(t, byID["b_2"].MD5OfMessageAttributes)
	require.Equal(t, qpTraceHeaderMD5, byID["b_2"].MD5OfMessageSystemAttributes)
	// An invalid entry fails alone (spec 7.1.1, 7.2.3).
	require.Equal(t, []qpBatchResultErrorEntry{{ID: "c-3", SenderFault: true, Code: "InvalidMessageContents",
		Message: r.Failed[0].Message}}, r.Failed)
	require.NotEmpty(t, r.Failed[0].Message)

	msgs := qpMessages(t, e, "qp-batch")
	require.Len(t, msgs, 2)
	require.Equal(t, byID["a"].MessageID, msgs[0].MessageID)
	require.Equal(t, fifoq.StateVisible, msgs[0].State)
	require.Equal(t, byID["b_2"].MessageID, msgs[1].MessageID)
	require.Equal(t, fifoq.StateDelayed, msgs[1].State)
	require.Equal(t, qpStart.Add(10*time.Second), msgs[1].VisibleAt)

	// Whole-request failures store nothing (spec 7.2.1, 7.2.2).
	entries := func(n int, id func(int) string) []string {
		kv := []string{"QueueUrl", u}
		for i := 1; i <= n; i++ {
			p := "SendMessageBatchRequestEntry." + strconv.Itoa(i) + "."
			kv = append(kv, p+"Id", id(i), p+"MessageBody", "m"+strconv.Itoa(i))
		}
		return kv
	}
	seq := func(i int) string { return "e" + strconv.Itoa(i) }
	er := qpFail(t, e, 400, "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", "SendMessageBatch", entries(11, seq)...)
	require.Equal(t, "Maximum number of entries per request are 10. You have sent 11.", er.Message, "spec 7.2.1")
	qpFail(t, e, 400, "AWS.SimpleQueueService.EmptyBatchRequest", "SendMessageBatch", "QueueUrl", u)
	qpFail(t, e, 400, "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", "SendMessageBatch",
		entries(2, func(int) string { return "same" })...)
	er = qpFail(t, e, 400, "AWS.SimpleQueueService.InvalidBatchEntryId", "SendMessageBatch",
		entries(1, func(int) string { return "not valid!" })...)
	require.Equal(t, "A batch entry id can only contain alphanumeric characters, hyphens and underscores. "+
		"It can be at most 80 letters long.", er.Message, "spec 7.2.1")
	qpFail(t, e, 400, "AWS.SimpleQueueService.InvalidBatchEntryId", "SendMessageBatch",
		entries(1, func(int) string { return strings.Repeat("i", 81) })...)
	big := strings.Repeat("x", 550_000) // two of them pass 1 MiB
	er = qpFail(t, e, 400, "AWS.SimpleQueueService.BatchRequestTooLong", "SendMessageBatch", append(entries(0, seq),
		"SendMessageBatchRequestEntry.1.Id", "1", "SendMessageBatchRequestEntry.1.MessageBody", big,
		"SendMessageBatchRequestEntry.2.Id", "2", "SendMessageBatchRequestEntry.2.MessageBody", big)...)
	require.Equal(t, "Batch requests cannot be longer than 1048576 bytes. You have sent 1100000 bytes.", er.Message,
		"spec 7.2.2")
	require.Len(t, qpMessages(t, e, "qp-batch"), 2, "a rejected SendMessageBatch stored messages")

	// Size accounting is inclusive, per entry (spec 7.1.2): with MaximumMessageSize 1024 a body of 1024 bytes
	// fits, one of 1025 fails alone, and attributes count (name + type + value).
	small := qpCreate(t, e, "qp-batch-small", "MaximumMessageSize", "1024")
	sr := qpCall[qpSendMessageBatchResult](t, e, "SendMessageBatch", "QueueUrl", small,
		"SendMessageBatchRequestEntry.1.Id", "fits", "SendMessageBatchRequestEntry.1.MessageBody", strings.Repeat("a", 1024),
		"SendMessageBatchRequestEntry.2.Id", "over", "SendMessageBatchRequestEntry.2.MessageBody", strings.Repeat("b", 1025),
		"SendMessageBatchRequestEntry.3.Id", "attr", "SendMessageBatchRequestEntry.3.MessageBody", strings.Repeat("c", 1024-8),
		"SendMessageBatchRequestEntry.3.MessageAttribute.1.Name", "k",
		"SendMessageBatchRequestEntry.3.MessageAttribute.1.Value.DataType", "String",
		"SendMessageBatchRequestEntry.3.MessageAttribute.1.Value.StringValue", "x",
		"SendMessageBatchRequestEntry.4.Id", "attr-over", "SendMessageBatchRequestEntry.4.MessageBody", strings.Repeat("d", 1024-7),
		"SendMessageBatchRequestEntry.4.MessageAttribute.1.Name", "k",
		"SendMessageBatchRequestEntry.4.MessageAttribute.1.Value.DataType", "String",
		"SendMessageBatchRequestEntry.4.MessageAttribute.1.Value.StringValue", "x")
	var ok []string
	for _, s := range sr.Successful {
		ok = append(ok, s.ID)
	}
	require.ElementsMatch(t, []string{"fits", "attr"}, ok)
	require.Len(t, sr.Failed, 2)
	for _, f := range sr.Failed {
		require.Contains(t, []string{"over", "attr-over"}, f.ID)
		require.Equal(t, qpBatchResultErrorEntry{ID: f.ID, SenderFault: true, Code: "InvalidParameterValue",
			Message: "One or more parameters cannot be validated. Reason: Message must be shorter than 1024 bytes."}, f)
	}

	// FIFO: per-entry groups and dedup ids; one entry without a group fails the whole request (spec 2.2).
	fu := qpCreate(t, e, "qp-batch.fifo", "FifoQueue", "true")
	fr := qpCall[qpSendMessageBatchResult](t, e, "SendMessageBatch", "QueueUrl", fu,
		"SendMessageBatchRequestEntry.1.Id", "1", "SendMessageBatchRequestEntry.1.MessageBody", "g1-m1",
		"SendMessageBatchRequestEntry.1.MessageGroupId", "g1", "SendMessageBatchRequestEntry.1.MessageDeduplicationId", "d1",
		"SendMessageBatchRequestEntry.2.Id", "2", "SendMessageBatchRequestEntry.2.MessageBody", "g1-m2",
		"SendMessageBatchRequestEntry.2.MessageGroupId", "g1", "SendMessageBatchRequestEntry.2.MessageDeduplicationId", "d2")
	require.Len(t, fr.Successful, 2)
	require.Empty(t, fr.Failed)
	seqs := map[string]string{}
	for _, s := range fr.Successful {
		require.Regexp(t, `^[0-9]+$`, s.SequenceNumber)
		seqs[s.ID] = s.SequenceNumber
	}
	require.Equal(t, 1, qpCompareDecimal(seqs["2"], seqs["1"]), "a FIFO batch is enqueued in order (spec 2.5)")
	qpFail(t, e, 400, "InvalidParameterValue", "SendMessageBatch", "QueueUrl", fu,
		"SendMessageBatchRequestEntry.1.Id", "1", "SendMessageBatchRequestEntry.1.MessageBody", "ok",
		"SendMessageBatchRequestEntry.1.MessageGroupId", "g1", "SendMessageBatchRequestEntry.1.MessageDeduplicationId", "d3",
		"SendMessageBatchRequestEntry.2.Id", "2", "SendMessageBatchRequestEntry.2.MessageBody", "no group",
		"SendMessageBatchRequestEntry.2.MessageDeduplicationId", "d4")
	require.Len(t, qpMessages(t, e, "qp-batch.fifo"), 2, "a FIFO batch with an entry without a group stored messages")
}

func TestQpReceiveMessage(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-recv")
	attrs := map[string]qpAttr{
		"MyAttribute": {DataType: "String", String: "foobar"},
		"Meta.one":    {DataType: "Number.int", String: "1"},
		"Meta.two":    {DataType: "Binary", Binary: []byte{0xde, 0xad, 0xbe, 0xef}},
	}
	sent := qpCall[qpSendMessageResult](t, e, "SendMessage", append([]string{"QueueUrl", u, "MessageBody", "foobar",
		"MessageSystemAttribute.1.Name", "AWSTraceHeader",
		"MessageSystemAttribute.1.Value.DataType", "String",
		"MessageSystemAttribute.1.Value.StringValue", qpTraceHeader,
	}, qpAttrParams("MessageAttribute", attrs)...)...)

	e.clock.Advance(1500 * time.Millisecond)
	r := qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u,
		"AttributeName.1", "All", "MessageAttributeName.1", "All")
	require.Len(t, r.Messages, 1)
	m := r.Messages[0]
	require.Equal(t, sent.MessageID, m.MessageID)
	require.Equal(t, "foobar", m.Body)
	require.NotEmpty(t, m.ReceiptHandle)
	require.LessOrEqual(t, len(m.ReceiptHandle), 1024, "spec 1.3.1")
	require.Equal(t, qpFoobarMD5, m.MD5OfBody)
	require.Equal(t, attrs, qpMessageAttrs(t, m))
	require.Equal(t, qpMD5OfAttributes(attrs), m.MD5OfMessageAttributes)
	require.Equal(t, sent.MD5OfMessageAttributes, m.MD5OfMessageAttributes)
	sys := qpNameValues(t, "receive All", m.Attributes)
	require.Equal(t, qpMillis(qpStart), sys["SentTimestamp"], "epoch milliseconds (spec 1.4.2)")
	require.Equal(t, qpMillis(qpStart.Add(1500*time.Millisecond)), sys["ApproximateFirstReceiveTimestamp"])
	require.Equal(t, "1", sys["ApproximateReceiveCount"])
	require.Equal(t, qpTraceHeader, sys["AWSTraceHeader"])
	require.NotEmpty(t, sys["SenderId"])
	for _, name := range []string{"SequenceNumber", "MessageGroupId", "MessageDeduplicationId"} {
		require.NotContains(t, sys, name, "a standard message sent without a group has no %s", name)
	}
	require.Equal(t, fifoq.StateInFlight, qpMessages(t, e, "qp-recv")[0].State)
	require.Equal(t, qpStart.Add(1500*time.Millisecond+30*time.Second), qpMessages(t, e, "qp-recv")[0].VisibleAt,
		"the queue's visibility timeout, 30 s, from the receive")

	// Named attributes only, the newer MessageSystemAttributeName.N; the digest covers what is returned.
	qpCall[qpNoResult](t, e, "ChangeMessageVisibility", "QueueUrl", u, "ReceiptHandle", m.ReceiptHandle,
		"VisibilityTimeout", "0")
	r = qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u, "VisibilityTimeout", "0",
		"MessageSystemAttributeName.1", "ApproximateReceiveCount", "MessageSystemAttributeName.2", "SentTimestamp",
		"MessageAttributeName.1", "MyAttribute")
	require.Len(t, r.Messages, 1)
	m = r.Messages[0]
	require.Equal(t, map[string]string{"ApproximateReceiveCount": "2", "SentTimestamp": qpMillis(qpStart)},
		qpNameValues(t, "MessageSystemAttributeName", m.Attributes))
	require.Equal(t, map[string]qpAttr{"MyAttribute": attrs["MyAttribute"]}, qpMessageAttrs(t, m))
	require.Equal(t, qpMyAttributeMD5, m.MD5OfMessageAttributes)

	// A prefix wildcard (model: "bar.*"), and the message stays visible after a receive with VisibilityTimeout 0.
	r = qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u, "VisibilityTimeout", "0",
		"MessageAttributeName.1", "Meta.*")
	require.Len(t, r.Messages, 1)
	want := map[string]qpAttr{"Meta.one": attrs["Meta.one"], "Meta.two": attrs["Meta.two"]}
	require.Equal(t, want, qpMessageAttrs(t, r.Messages[0]))
	require.Equal(t, qpMD5OfAttributes(want), r.Messages[0].MD5OfMessageAttributes)
	require.Empty(t, r.Messages[0].Attributes, "no system attributes were asked for")

	// Nothing asked for: no attributes and no attribute digest.
	r = qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u, "VisibilityTimeout", "5")
	require.Len(t, r.Messages, 1)
	require.Empty(t, r.Messages[0].Attributes)
	require.Empty(t, r.Messages[0].MessageAttributes)
	require.Empty(t, r.Messages[0].MD5OfMessageAttributes)
	require.Equal(t, e.clock.Now().Add(5*time.Second), qpMessages(t, e, "qp-recv")[0].VisibleAt, "VisibilityTimeout=5")

	// MaxNumberOfMessages.
	for i := range 4 {
		qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "m"+strconv.Itoa(i))
	}
	r = qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u)
	require.Len(t, r.Messages, 1, "MaxNumberOfMessages defaults to 1 (spec 1.5.4)")
	r = qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u, "MaxNumberOfMessages", "10")
	require.Len(t, r.Messages, 3)
	r = qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u, "MaxNumberOfMessages", "10")
	require.Empty(t, r.Messages, "everything is in flight")

	// Rejected receives change nothing (spec 1.5.1, 1.5.4, 1.2.1).
	before := qpMessages(t, e, "qp-recv")
	for _, kv := range [][]string{
		{"MaxNumberOfMessages", "11"}, {"MaxNumberOfMessages", "0"}, {"WaitTimeSeconds", "21"},
		{"WaitTimeSeconds", "-1"}, {"VisibilityTimeout", "43201"}, {"VisibilityTimeout", "-1"},
	} {
		qpFail(t, e, 400, "InvalidParameterValue", "ReceiveMessage", append([]string{"QueueUrl", u}, kv...)...)
	}
	qpFail(t, e, 400, "AWS.SimpleQueueService.NonExistentQueue", "ReceiveMessage",
		"QueueUrl", strings.Replace(u, "qp-recv", "qp-none", 1))
	require.Equal(t, before, qpMessages(t, e, "qp-recv"))
	er := qpFail(t, e, 400, "InvalidParameterValue", "ReceiveMessage", "QueueUrl", u, "WaitTimeSeconds", "21")
	require.Equal(t, "Value 21 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided.",
		er.Message, "spec 1.5.1")
	er = qpFail(t, e, 400, "InvalidParameterValue", "ReceiveMessage", "QueueUrl", u, "MaxNumberOfMessages", "11")
	require.Equal(t, "Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.",
		er.Message, "spec 1.5.4")
}

func TestQpReceiveMessageFIFO(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-recv.fifo", "FifoQueue", "true", "ContentBasedDeduplication", "true")
	s1 := qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "g1-m1", "MessageGroupId", "g1")
	s2 := qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "g1-m2", "MessageGroupId", "g1",
		"MessageDeduplicationId", "explicit")
	r := qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u, "MaxNumberOfMessages", "10",
		"AttributeName.1", "All", "ReceiveRequestAttemptId", "attempt-1")
	require.Len(t, r.Messages, 2)
	bodyHash := qpSHA256Hex("g1-m1")
	for i, want := range []struct {
		sent  qpSendMessageResult
		body  string
		dedup string
	}{{s1, "g1-m1", bodyHash}, {s2, "g1-m2", "explicit"}} {
		m := r.Messages[i]
		require.Equal(t, want.body, m.Body, "group order (spec 2.5)")
		require.Equal(t, want.sent.MessageID, m.MessageID)
		sys := qpNameValues(t, "FIFO receive All", m.Attributes)
		require.Equal(t, "g1", sys["MessageGroupId"])
		require.Equal(t, want.dedup, sys["MessageDeduplicationId"], "content-based: hex SHA-256 of the body (spec 3.3)")
		require.Equal(t, want.sent.SequenceNumber, sys["SequenceNumber"])
	}
	// A retry with the same attempt id returns the same messages and receipt handles (spec 2.15.2).
	again := qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u, "MaxNumberOfMessages", "10",
		"ReceiveRequestAttemptId", "attempt-1")
	require.Len(t, again.Messages, 2)
	require.Equal(t, r.Messages[0].ReceiptHandle, again.Messages[0].ReceiptHandle)
	require.Equal(t, r.Messages[1].ReceiptHandle, again.Messages[1].ReceiptHandle)
	qpFail(t, e, 400, "InvalidParameterValue", "ReceiveMessage", "QueueUrl", u,
		"ReceiveRequestAttemptId", "has space")
}

// qpSHA256Hex is the hex SHA-256 of s, the deduplication id content-based deduplication gives a message.
func qpSHA256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

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

func TestQpLongPoll(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-poll")

	type result struct {
		status int
		header http.Header
		body   []byte
	}
	poll := func(kv ...string) <-chan result {
		ch := make(chan result, 1)
		form := qpForm(kv...)
		form.Set("Action", "ReceiveMessage")
		form.Set("Version", qpVersion)
		go func() {
			resp, err := e.hc.PostForm(e.base+"/", form)
			if err != nil {
				ch <- result{status: -1, body: []byte(err.Error())}
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			ch <- result{resp.StatusCode, resp.Header, b}
		}()
		return ch
	}

	// An empty wait ends when the clock passes WaitTimeSeconds.
	ch := poll("QueueUrl", u, "WaitTimeSeconds", "2")
	qpWaitTimers(t, e.clock, 1)
	e.clock.Advance(2 * time.Second)
	res := <-ch
	require.Equal(t, 200, res.status, "%s", res.body)
	require.Empty(t, qpDecode[qpReceiveMessageResult](t, "ReceiveMessage", res.header, res.body).Messages)

	// A message sent during the wait ends it at once (spec 1.5.2).
	ch = poll("QueueUrl", u, "WaitTimeSeconds", "20")
	qpWaitTimers(t, e.clock, 1)
	sent := qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "wake")
	res = <-ch
	require.Equal(t, 200, res.status, "%s", res.body)
	msgs := qpDecode[qpReceiveMessageResult](t, "ReceiveMessage", res.header, res.body).Messages
	require.Len(t, msgs, 1)
	require.Equal(t, sent.MessageID, msgs[0].MessageID)

	// The queue's ReceiveMessageWaitTimeSeconds applies when the request gives none (spec 1.5.1).
	qpCall[qpNoResult](t, e, "SetQueueAttributes", "QueueUrl", u,
		"Attribute.1.Name", "ReceiveMessageWaitTimeSeconds", "Attribute.1.Value", "3")
	pending := e.clock.Timers() // the woken poll's timer, if it was not stopped
	ch = poll("QueueUrl", u)
	qpWaitTimers(t, e.clock, pending+1)
	e.clock.Advance(3 * time.Second)
	res = <-ch
	require.Equal(t, 200, res.status, "%s", res.body)
	require.Empty(t, qpDecode[qpReceiveMessageResult](t, "ReceiveMessage", res.header, res.body).Messages)
}

func TestQpDeleteMessage(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-del")
	for i := range 3 {
		qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "m"+strconv.Itoa(i))
	}
	r := qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u, "MaxNumberOfMessages", "3")
	require.Len(t, r.Messages, 3)
	h := func(i int) string { return r.Messages[i].ReceiptHandle }

	qpCall[qpNoResult](t, e, "DeleteMessage", "QueueUrl", u, "ReceiptHandle", h(0))
	require.Len(t, qpMessages(t, e, "qp-del"), 2)
	qpCall[qpNoResult](t, e, "DeleteMessage", "QueueUrl", u, "ReceiptHandle", h(0)) // again: success (spec 1.3.4)
	// A string that is no receipt handle: ReceiptHandleIsInvalid (spec 1.3.4), which real SQS answers with
	// HTTP 404 (the query model gives the shape no status; SQS's own replies carry 404).
	er := qpFail(t, e, 404, "ReceiptHandleIsInvalid", "DeleteMessage", "QueueUrl", u, "ReceiptHandle", "garbage")
	require.Equal(t, `The input receipt handle "garbage" is not a valid receipt handle.`, er.Message, "spec 1.3.4")
	qpFail(t, e, 400, "MissingParameter", "DeleteMessage", "QueueUrl", u)
	require.Len(t, qpMessages(t, e, "qp-del"), 2)

	b := qpCall[qpDeleteMessageBatchResult](t, e, "DeleteMessageBatch", "QueueUrl", u,
		"DeleteMessageBatchRequestEntry.1.Id", "one", "DeleteMessageBatchRequestEntry.1.ReceiptHandle", h(1),
		"DeleteMessageBatchRequestEntry.2.Id", "bad", "DeleteMessageBatchRequestEntry.2.ReceiptHandle", "garbage",
		"DeleteMessageBatchRequestEntry.3.Id", "two", "DeleteMessageBatchRequestEntry.3.ReceiptHandle", h(2))
	require.ElementsMatch(t, []qpBatchID{{"one"}, {"two"}}, b.Successful)
	require.Len(t, b.Failed, 1)
	require.Equal(t, "bad", b.Failed[0].ID)
	require.Equal(t, "ReceiptHandleIsInvalid", b.Failed[0].Code)
	require.True(t, b.Failed[0].SenderFault)
	require.Empty(t, qpMessages(t, e, "qp-del"))

	qpFail(t, e, 400, "AWS.SimpleQueueService.EmptyBatchRequest", "DeleteMessageBatch", "QueueUrl", u)
	qpFail(t, e, 400, "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", "DeleteMessageBatch", "QueueUrl", u,
		"DeleteMessageBatchRequestEntry.1.Id", "x", "DeleteMessageBatchRequestEntry.1.ReceiptHandle", h(1),
		"DeleteMessageBatchRequestEntry.2.Id", "x", "DeleteMessageBatchRequestEntry.2.ReceiptHandle", h(2))
	qpFail(t, e, 400, "AWS.SimpleQueueService.InvalidBatchEntryId", "DeleteMessageBatch", "QueueUrl", u,
		"DeleteMessageBatchRequestEntry.1.Id", "x.y", "DeleteMessageBatchRequestEntry.1.ReceiptHandle", h(1))
	many := []string{"QueueUrl", u}
	for i := 1; i <= 11; i++ {
		p := "DeleteMessageBatchRequestEntry." + strconv.Itoa(i) + "."
		many = append(many, p+"Id", "e"+strconv.Itoa(i), p+"ReceiptHandle", h(1))
	}
	qpFail(t, e, 400, "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", "DeleteMessageBatch", many...)
}

func TestQpChangeMessageVisibility(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-vis")
	for i := range 4 {
		qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "m"+strconv.Itoa(i))
	}
	r := qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u, "MaxNumberOfMessages", "4")
	require.Len(t, r.Messages, 4)
	state := func(id string) fifoq.Snapshot {
		for _, s := range qpMessages(t, e, "qp-vis") {
			if s.MessageID == id {
				return s
			}
		}
		t.Fatalf("message %s is gone", id)
		return fifoq.Snapshot{}
	}
	e.clock.Advance(10 * time.Second)
	m0, m1, m2, m3 := r.Messages[0], r.Messages[1], r.Messages[2], r.Messages[3]

	qpCall[qpNoResult](t, e, "ChangeMessageVisibility", "QueueUrl", u, "ReceiptHandle", m0.ReceiptHandle,
		"VisibilityTimeout", "0")
	require.Equal(t, fifoq.StateVisible, state(m0.MessageID).State, "VisibilityTimeout 0 (spec 1.2.7)")
	qpCall[qpNoResult](t, e, "ChangeMessageVisibility", "QueueUrl", u, "ReceiptHandle", m1.ReceiptHandle,
		"VisibilityTimeout", "100")
	require.Equal(t, e.clock.Now().Add(100*time.Second), state(m1.MessageID).VisibleAt, "counted from the call (spec 1.2.4)")

	// Rejections change nothing.
	before := qpMessages(t, e, "qp-vis")
	qpFail(t, e, 400, "InvalidParameterValue", "ChangeMessageVisibility", "QueueUrl", u,
		"ReceiptHandle", m1.ReceiptHandle, "VisibilityTimeout", "43201") // spec 1.2.5
	qpFail(t, e, 400, "InvalidParameterValue", "ChangeMessageVisibility", "QueueUrl", u,
		"ReceiptHandle", m1.ReceiptHandle, "VisibilityTimeout", "-1")
	qpFail(t, e, 400, "MissingParameter", "ChangeMessageVisibility", "QueueUrl", u, "ReceiptHandle", m1.ReceiptHandle)
	qpFail(t, e, 404, "ReceiptHandleIsInvalid", "ChangeMessageVisibility", "QueueUrl", u,
		"ReceiptHandle", "garbage", "VisibilityTimeout", "5")
	require.Equal(t, before, qpMessages(t, e, "qp-vis"))

	b := qpCall[qpChangeMessageVisibilityBatchResult](t, e, "ChangeMessageVisibilityBatch", "QueueUrl", u,
		"ChangeMessageVisibilityBatchRequestEntry.1.Id", "two",
		"ChangeMessageVisibilityBatchRequestEntry.1.ReceiptHandle", m2.ReceiptHandle,
		"ChangeMessageVisibilityBatchRequestEntry.1.VisibilityTimeout", "0",
		"ChangeMessageVisibilityBatchRequestEntry.2.Id", "three",
		"ChangeMessageVisibilityBatchRequestEntry.2.ReceiptHandle", m3.ReceiptHandle,
		"ChangeMessageVisibilityBatchRequestEntry.2.VisibilityTimeout", "60",
		"ChangeMessageVisibilityBatchRequestEntry.3.Id", "bad",
		"ChangeMessageVisibilityBatchRequestEntry.3.ReceiptHandle", "garbage",
		"ChangeMessageVisibilityBatchRequestEntry.3.VisibilityTimeout", "60")
	require.ElementsMatch(t, []qpBatchID{{"two"}, {"three"}}, b.Successful)
	require.Len(t, b.Failed, 1)
	require.Equal(t, qpBatchResultErrorEntry{ID: "bad", SenderFault: true, Code: "ReceiptHandleIsInvalid",
		Message: b.Failed[0].Message}, b.Failed[0])
	require.Equal(t, fifoq.StateVisible, state(m2.MessageID).State)
	require.Equal(t, e.clock.Now().Add(60*time.Second), state(m3.MessageID).VisibleAt)

	// The 12-hour cap counts from the receive, 10 s ago (spec 1.2.5); a deleted message cannot change (1.3.4).
	qpFail(t, e, 400, "InvalidParameterValue", "ChangeMessageVisibility", "QueueUrl", u,
		"ReceiptHandle", m1.ReceiptHandle, "VisibilityTimeout", "43200")
	qpCall[qpNoResult](t, e, "ChangeMessageVisibility", "QueueUrl", u, "ReceiptHandle", m1.ReceiptHandle,
		"VisibilityTimeout", "43190")
	qpCall[qpNoResult](t, e, "DeleteMessage", "QueueUrl", u, "ReceiptHandle", m3.ReceiptHandle)
	er := qpFail(t, e, 400, "InvalidParameterValue", "ChangeMessageVisibility", "QueueUrl", u,
		"ReceiptHandle", m3.ReceiptHandle, "VisibilityTimeout", "5")
	require.Equal(t, "Value "+m3.ReceiptHandle+" for parameter ReceiptHandle is invalid. Reason: Message does not exist "+
		"or is not available for visibility timeout change.", er.Message)

	qpFail(t, e, 400, "AWS.SimpleQueueService.EmptyBatchRequest", "ChangeMessageVisibilityBatch", "QueueUrl", u)
	qpFail(t, e, 400, "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", "ChangeMessageVisibilityBatch", "QueueUrl", u,
		"ChangeMessageVisibilityBatchRequestEntry.1.Id", "x",
		"ChangeMessageVisibilityBatchRequestEntry.1.ReceiptHandle", m1.ReceiptHandle,
		"ChangeMessageVisibilityBatchRequestEntry.1.VisibilityTimeout", "1",
		"ChangeMessageVisibilityBatchRequestEntry.2.Id", "x",
		"ChangeMessageVisibilityBatchRequestEntry.2.ReceiptHandle", m3.ReceiptHandle,
		"ChangeMessageVisibilityBatchRequestEntry.2.VisibilityTimeout", "1")
}

func TestQpQueueAttributes(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-attrs")
	get := func(names ...string) map[string]string {
		t.Helper()
		kv := []string{"QueueUrl", u}
		for i, n := range names {
			kv = append(kv, "AttributeName."+strconv.Itoa(i+1), n)
		}
		return qpNameValues(t, "GetQueueAttributes", qpCall[qpGetQueueAttributesResult](t, e, "GetQueueAttributes", kv...).Attributes)
	}
	require.Empty(t, get(), "no AttributeName, no attributes (model)")
	require.Equal(t, map[string]string{"VisibilityTimeout": "30", "ApproximateNumberOfMessages": "0"},
		get("VisibilityTimeout", "ApproximateNumberOfMessages"))

	// The message counts.
	for i := range 3 {
		qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "m"+strconv.Itoa(i))
	}
	qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "later", "DelaySeconds", "60")
	qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u)
	require.Equal(t, map[string]string{"ApproximateNumberOfMessages": "2", "ApproximateNumberOfMessagesNotVisible": "1",
		"ApproximateNumberOfMessagesDelayed": "1"},
		get("ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed"))

	// SetQueueAttributes.
	e.clock.Advance(5 * time.Second)
	qpCall[qpNoResult](t, e, "SetQueueAttributes", "QueueUrl", u,
		"Attribute.1.Name", "VisibilityTimeout", "Attribute.1.Value", "100",
		"Attribute.2.Name", "DelaySeconds", "Attribute.2.Value", "3",
		"Attribute.3.Name", "MessageRetentionPeriod", "Attribute.3.Value", "600")
	a := qpQueue(t, e, "qp-attrs").Attributes()
	require.Equal(t, 100*time.Second, a.VisibilityTimeout)
	require.Equal(t, 3*time.Second, a.Delay)
	require.Equal(t, 10*time.Minute, a.Retention)
	got := get("All")
	require.Equal(t, "100", got["VisibilityTimeout"])
	require.Equal(t, "3", got["DelaySeconds"])
	require.Equal(t, "600", got["MessageRetentionPeriod"])
	require.Equal(t, strconv.FormatInt(qpStart.Unix(), 10), got["CreatedTimestamp"])
	require.Equal(t, strconv.FormatInt(qpStart.Add(5*time.Second).Unix(), 10), got["LastModifiedTimestamp"])

	// Rejections change nothing.
	qpCreate(t, e, "qp-attrs-dlq")
	for _, c := range []struct{ name, value, code string }{
		{"VisibilityTimeout", "-1", "InvalidAttributeValue"},
		{"VisibilityTimeout", "43201", "InvalidAttributeValue"},
		{"MaximumMessageSize", "2000000", "InvalidAttributeValue"},
		{"NoSuchAttribute", "1", "InvalidAttributeName"},
		{"FifoQueue", "true", "InvalidAttributeName"},                                                         // spec 2.1
		{"ContentBasedDeduplication", "true", "InvalidAttributeName"},                                         // spec 3.12
		{"RedrivePolicy", `{"deadLetterTargetArn":"` + qpArn("qp-attrs-dlq") + `"}`, "InvalidParameterValue"}, // spec 6.1
	} {
		qpFail(t, e, 400, c.code, "SetQueueAttributes", "QueueUrl", u,
			"Attribute.1.Name", "DelaySeconds", "Attribute.1.Value", "7",
			"Attribute.2.Name", c.name, "Attribute.2.Value", c.value)
		require.Equal(t, a, qpQueue(t, e, "qp-attrs").Attributes(), "a rejected SetQueueAttributes (%s=%s) changed the queue",
			c.name, c.value)
	}
	qpFail(t, e, 400, "InvalidAttributeName", "GetQueueAttributes", "QueueUrl", u, "AttributeName.1", "NoSuchAttribute")

	// A redrive policy, read back as the JSON SQS gives (spec 6.1), and removed with "".
	qpCall[qpNoResult](t, e, "SetQueueAttributes", "QueueUrl", u, "Attribute.1.Name", "RedrivePolicy",
		"Attribute.1.Value", `{"deadLetterTargetArn":"`+qpArn("qp-attrs-dlq")+`","maxReceiveCount":"4"}`)
	a = qpQueue(t, e, "qp-attrs").Attributes()
	require.Equal(t, qpQueue(t, e, "qp-attrs-dlq"), a.DeadLetterQueue)
	require.Equal(t, 4, a.MaxReceiveCount)
	var policy struct {
		DeadLetterTargetArn string `json:"deadLetterTargetArn"`
		MaxReceiveCount     int    `json:"maxReceiveCount"`
	}
	require.NoError(t, json.Unmarshal([]byte(get("RedrivePolicy")["RedrivePolicy"]), &policy))
	require.Equal(t, qpArn("qp-attrs-dlq"), policy.DeadLetterTargetArn)
	require.Equal(t, 4, policy.MaxReceiveCount)
	qpCall[qpNoResult](t, e, "SetQueueAttributes", "QueueUrl", u, "Attribute.1.Name", "RedrivePolicy", "Attribute.1.Value", "")
	require.Nil(t, qpQueue(t, e, "qp-attrs").Attributes().DeadLetterQueue)
	require.NotContains(t, get("All"), "RedrivePolicy")

	// FIFO: FifoQueue=true is a no-op, false an error (spec 2.1).
	fu := qpCreate(t, e, "qp-attrs.fifo", "FifoQueue", "true")
	qpCall[qpNoResult](t, e, "SetQueueAttributes", "QueueUrl", fu, "Attribute.1.Name", "FifoQueue", "Attribute.1.Value", "true")
	qpFail(t, e, 400, "InvalidAttributeValue", "SetQueueAttributes", "QueueUrl", fu,
		"Attribute.1.Name", "FifoQueue", "Attribute.1.Value", "false")
	qpCall[qpNoResult](t, e, "SetQueueAttributes", "QueueUrl", fu,
		"Attribute.1.Name", "ContentBasedDeduplication", "Attribute.1.Value", "true") // spec 3.12
	require.True(t, qpQueue(t, e, "qp-attrs.fifo").Attributes().ContentBasedDeduplication)
}

func TestQpPurgeQueue(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-purge")
	qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "a")
	qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "b", "DelaySeconds", "30")
	qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "c")
	qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", u)
	qpCall[qpNoResult](t, e, "PurgeQueue", "QueueUrl", u)
	require.Empty(t, qpMessages(t, e, "qp-purge"), "a purge deletes in-flight and delayed messages too (spec 7.3.3)")

	qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", u, "MessageBody", "d")
	e.clock.Advance(59 * time.Second)
	er := qpFail(t, e, 403, "AWS.SimpleQueueService.PurgeQueueInProgress", "PurgeQueue", "QueueUrl", u)
	require.Equal(t, "Only one PurgeQueue operation on qp-purge is allowed every 60 seconds.", er.Message, "spec 7.3.3")
	require.Len(t, qpMessages(t, e, "qp-purge"), 1, "a rejected purge deleted messages")
	e.clock.Advance(time.Second)
	qpCall[qpNoResult](t, e, "PurgeQueue", "QueueUrl", u)
	require.Empty(t, qpMessages(t, e, "qp-purge"))
	qpFail(t, e, 400, "AWS.SimpleQueueService.NonExistentQueue", "PurgeQueue",
		"QueueUrl", strings.Replace(u, "qp-purge", "qp-none", 1))
}

func TestQpTags(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	u := qpCreate(t, e, "qp-tags")
	list := func() map[string]string {
		t.Helper()
		return qpTags(qpCall[qpListQueueTagsResult](t, e, "ListQueueTags", "QueueUrl", u).Tags)
	}
	require.Empty(t, list())
	qpCall[qpNoResult](t, e, "TagQueue", "QueueUrl", u, "Tag.1.Key", "a", "Tag.1.Value", "1", "Tag.2.Key", "b", "Tag.2.Value", "2")
	require.Equal(t, map[string]string{"a": "1", "b": "2"}, list())
	qpCall[qpNoResult](t, e, "TagQueue", "QueueUrl", u, "Tag.1.Key", "a", "Tag.1.Value", "3")
	require.Equal(t, map[string]string{"a": "3", "b": "2"}, list())
	qpCall[qpNoResult](t, e, "UntagQueue", "QueueUrl", u, "TagKey.1", "a", "TagKey.2", "never-set")
	require.Equal(t, map[string]string{"b": "2"}, list())
	missing := strings.Replace(u, "qp-tags", "qp-none", 1)
	qpFail(t, e, 400, "AWS.SimpleQueueService.NonExistentQueue", "TagQueue", "QueueUrl", missing, "Tag.1.Key", "a", "Tag.1.Value", "1")
	qpFail(t, e, 400, "AWS.SimpleQueueService.NonExistentQueue", "ListQueueTags", "QueueUrl", missing)
	qpFail(t, e, 400, "AWS.SimpleQueueService.NonExistentQueue", "UntagQueue", "QueueUrl", missing, "TagKey.1", "a")
}

// qpDeadLetterPair creates a dead-letter queue and a source with maxReceiveCount 1, sends bodies to the source
// and has them moved to the dead-letter queue by receiving them twice.
func qpDeadLetterPair(t *testing.T, e *qpEnv, src, dlq string, bodies ...string) (srcURL, dlqURL string) {
	t.Helper()
	dlqURL = qpCreate(t, e, dlq)
	srcURL = qpCreate(t, e, src, "RedrivePolicy",
		`{"deadLetterTargetArn":"`+qpArn(dlq)+`","maxReceiveCount":1}`)
	for _, b := range bodies {
		qpCall[qpSendMessageResult](t, e, "SendMessage", "QueueUrl", srcURL, "MessageBody", b)
	}
	r := qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", srcURL, "MaxNumberOfMessages", "10",
		"VisibilityTimeout", "0")
	require.Len(t, r.Messages, len(bodies))
	r = qpCall[qpReceiveMessageResult](t, e, "ReceiveMessage", "QueueUrl", srcURL, "MaxNumberOfMessages", "10")
	require.Empty(t, r.Messages, "past maxReceiveCount 1 the messages move to the dead-letter queue (spec 6.3)")
	require.Len(t, qpMessages(t, e, dlq), len(bodies))
	return srcURL, dlqURL
}

func TestQpRedriveAllowPolicy(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	policy := func(dlq string) string {
		return `{"deadLetterTargetArn":"` + qpArn(dlq) + `","maxReceiveCount":2}`
	}
	// denyAll: no queue may use it (spec 6.7).
	qpCreate(t, e, "qp-ra-deny", "RedriveAllowPolicy", `{"redrivePermission":"denyAll"}`)
	qpFail(t, e, 400, "InvalidParameterValue", "CreateQueue", "QueueName", "qp-ra-src0",
		"Attribute.1.Name", "RedrivePolicy", "Attribute.1.Value", policy("qp-ra-deny"))
	_, ok := e.srv.Queue("qp-ra-src0")
	require.False(t, ok)

	// byQueue: only the queues named.
	dlq := qpCreate(t, e, "qp-ra-by", "RedriveAllowPolicy",
		`{"redrivePermission":"byQueue","sourceQueueArns":["`+qpArn("qp-ra-src1")+`"]}`)
	qpCreate(t, e, "qp-ra-src1", "RedrivePolicy", policy("qp-ra-by"))
	require.Equal(t, 2, qpQueue(t, e, "qp-ra-src1").Attributes().MaxReceiveCount)
	qpFail(t, e, 400, "InvalidParameterValue", "CreateQueue", "QueueName", "qp-ra-src2",
		"Attribute.1.Name", "RedrivePolicy", "Attribute.1.Value", policy("qp-ra-by"))
	got := qpNameValues(t, "RedriveAllowPolicy", qpCall[qpGetQueueAttributesResult](t, e, "GetQueueAttributes",
		"QueueUrl", dlq, "AttributeName.1", "RedriveAllowPolicy").Attributes)
	var rap struct {
		RedrivePermission string   `json:"redrivePermission"`
		SourceQueueArns   []string `json:"sourceQueueArns"`
	}
	require.NoError(t, json.Unmarshal([]byte(got["RedriveAllowPolicy"]), &rap), "RedriveAllowPolicy %q", got["RedriveAllowPolicy"])
	require.Equal(t, "byQueue", rap.RedrivePermission)
	require.Equal(t, []string{qpArn("qp-ra-src1")}, rap.SourceQueueArns)
	require.Equal(t, fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveByQueue, Sources: []string{"qp-ra-src1"}},
		qpQueue(t, e, "qp-ra-by").Attributes().RedriveAllowPolicy)

	// sourceQueueArns only with byQueue, and 1 to 10 of them (spec 6.7; the spec gives no code).
	qpFail(t, e, 400, "", "CreateQueue", "QueueName", "qp-ra-bad1", "Attribute.1.Name", "RedriveAllowPolicy",
		"Attribute.1.Value", `{"redrivePermission":"allowAll","sourceQueueArns":["`+qpArn("qp-ra-src1")+`"]}`)
	var arns []string
	for i := range 11 {
		arns = append(arns, `"`+qpArn("q"+strconv.Itoa(i))+`"`)
	}
	qpFail(t, e, 400, "", "CreateQueue", "QueueName", "qp-ra-bad2", "Attribute.1.Name", "RedriveAllowPolicy",
		"Attribute.1.Value", `{"redrivePermission":"byQueue","sourceQueueArns":[`+strings.Join(arns, ",")+`]}`)
	qpFail(t, e, 400, "", "SetQueueAttributes", "QueueUrl", dlq, "Attribute.1.Name", "RedriveAllowPolicy",
		"Attribute.1.Value", `{"redrivePermission":"sometimes"}`)
	for _, name := range []string{"qp-ra-bad1", "qp-ra-bad2"} {
		_, ok := e.srv.Queue(name)
		require.False(t, ok, "a rejected CreateQueue created %s", name)
	}
	require.Equal(t, fifoq.RedriveByQueue, qpQueue(t, e, "qp-ra-by").Attributes().RedriveAllowPolicy.Permission)

	// A FIFO queue's dead-letter queue is FIFO, and a standard one's standard (spec 6.2).
	qpCreate(t, e, "qp-ra-std-dlq")
	qpFail(t, e, 400, "InvalidParameterValue", "CreateQueue", "QueueName", "qp-ra.fifo",
		"Attribute.1.Name", "FifoQueue", "Attribute.1.Value", "true",
		"Attribute.2.Name", "RedrivePolicy", "Attribute.2.Value", policy("qp-ra-std-dlq"))
	qpFail(t, e, 400, "InvalidParameterValue", "CreateQueue", "QueueName", "qp-ra-nodlq",
		"Attribute.1.Name", "RedrivePolicy", "Attribute.1.Value", policy("qp-ra-missing"))
}

func TestQpListDeadLetterSourceQueues(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	dlqURL := qpCreate(t, e, "qp-dl")
	policy := `{"deadLetterTargetArn":"` + qpArn("qp-dl") + `","maxReceiveCount":5}`
	s1 := qpCreate(t, e, "qp-dl-src1", "RedrivePolicy", policy)
	s2 := qpCreate(t, e, "qp-dl-src2", "RedrivePolicy", policy)
	qpCreate(t, e, "qp-dl-other")
	r := qpCall[qpListDeadLetterSourceQueuesResult](t, e, "ListDeadLetterSourceQueues", "QueueUrl", dlqURL)
	require.ElementsMatch(t, []string{s1, s2}, r.QueueURLs)
	first := qpCall[qpListDeadLetterSourceQueuesResult](t, e, "ListDeadLetterSourceQueues", "QueueUrl", dlqURL, "MaxResults", "1")
	require.Len(t, first.QueueURLs, 1)
	require.NotEmpty(t, first.NextToken)
	second := qpCall[qpListDeadLetterSourceQueuesResult](t, e, "ListDeadLetterSourceQueues", "QueueUrl", dlqURL,
		"MaxResults", "1", "NextToken", first.NextToken)
	require.ElementsMatch(t, []string{s1, s2}, append(first.QueueURLs, second.QueueURLs...))
	none := qpCall[qpListDeadLetterSourceQueuesResult](t, e, "ListDeadLetterSourceQueues", "QueueUrl", s1)
	require.Empty(t, none.QueueURLs)
	qpFail(t, e, 400, "AWS.SimpleQueueService.NonExistentQueue", "ListDeadLetterSourceQueues",
		"QueueUrl", strings.Replace(dlqURL, "qp-dl", "qp-none", 1))
}

func TestQpMessageMoveTasks(t *testing.T) {
	t.Parallel()
	e := qpSetup(t)
	qpDeadLetterPair(t, e, "qp-mv-src", "qp-mv-dlq", "a", "b", "c")
	for _, s := range qpMessages(t, e, "qp-mv-dlq") {
		require.Equal(t, "qp-mv-src", s.DeadLetterSource)
	}
	dlqArn := qpArn("qp-mv-dlq")

	// Rejected starts (spec 6.9.1, 6.9.2).
	er := qpFail(t, e, 400, "InvalidParameterValue", "StartMessageMoveTask", "SourceArn", qpArn("qp-mv-src"))
	require.Equal(t, "Source queue must be configured as a Dead Letter Queue.", er.Message, "spec 6.9.1")
	er = qpFail(t, e, 404, "ResourceNotFoundException", "StartMessageMoveTask", "SourceArn", dlqArn,
		"DestinationArn", qpArn("qp-mv-none"))
	require.Equal(t, "The resource that you specified for the DestinationArn parameter doesn't exist.", er.Message,
		"spec 6.9.1")
	qpFail(t, e, 400, "InvalidParameterValue", "StartMessageMoveTask", "SourceArn", dlqArn,
		"MaxNumberOfMessagesPerSecond", "501")
	require.Empty(t, qpCall[qpListMessageMoveTasksResult](t, e, "ListMessageMoveTasks", "SourceArn", dlqArn).Results)

	// A task at one message a second waits on the server's clock between moves.
	start := qpCall[qpStartMessageMoveTaskResult](t, e, "StartMessageMoveTask", "SourceArn", dlqArn,
		"MaxNumberOfMessagesPerSecond", "1")
	require.NotEmpty(t, start.TaskHandle)
	er = qpFail(t, e, 400, "InvalidParameterValue", "StartMessageMoveTask", "SourceArn", dlqArn)
	require.Equal(t, "There is already a task running. Only one active task is allowed for a source queue arn at a "+
		"given time.", er.Message, "spec 6.9.3")
	qpWaitTimers(t, e.clock, 1)
	moved := int64(len(qpMessages(t, e, "qp-mv-src")))
	require.Equal(t, int64(3), moved+int64(len(qpMessages(t, e, "qp-mv-dlq"))), "messages lost in the move")

	tasks := qpCall[qpListMessageMoveTasksResult](t, e, "ListMessageMoveTasks", "SourceArn", dlqArn).Results
	require.Len(t, tasks, 1)
	task := tasks[0]
	require.Equal(t, "RUNNING", task.Status)
	require.Equal(t, start.TaskHandle, task.TaskHandle)
	require.Equal(t, dlqArn, task.SourceArn)
	require.Empty(t, task.DestinationArn, "no destination was given (spec 6.9.7)")
	require.NotNil(t, task.MaxNumberOfMessagesPerSecond)
	require.Equal(t, 1, *task.MaxNumberOfMessagesPerSecond)
	require.NotNil(t, task.ApproximateNumberOfMessagesToMove)
	require.Equal(t, int64(3), *task.ApproximateNumberOfMessagesToMove)
	require.Equal(t, moved, task.ApproximateNumberOfMessagesMoved)
	require.Equal(t, qpStart.UnixMilli(), task.StartedTimestamp, "epoch milliseconds")

	// Cancel (spec 6.9.6).
	er = qpFail(t, e, 400, "InvalidParameterValue", "CancelMessageMoveTask", "TaskHandle", "foobared")
	require.Equal(t, "Value for parameter TaskHandle is invalid.", er.Message, "spec 6.9.6")
	c := qpCall[qpCancelMessageMoveTaskResult](t, e, "CancelMessageMoveTask", "TaskHandle", start.TaskHandle)
	require.Equal(t, moved, c.ApproximateNumberOfMessagesMoved)
	tasks = qpCall[qpListMessageMoveTasksResult](t, e, "ListMessageMoveTasks", "SourceArn", dlqArn).Results
	require.Len(t, tasks, 1)
	require.Contains(t, []string{"CANCELLING", "CANCELLED"}, tasks[0].Status)
	require.Empty(t, tasks[0].TaskHandle, "the handle is given only for RUNNING tasks (model)")

	// A task without a rate moves everything back to the source as new messages (spec 5.5, 6.9.4).
	e2 := qpSetup(t)
	src2, _ := qpDeadLetterPair(t, e2, "qp-mv2-src", "qp-mv2-dlq", "x", "y")
	old := map[string]bool{}
	for _, s := range qpMessages(t, e2, "qp-mv2-dlq") {
		old[s.MessageID] = true
	}
	qpCall[qpStartMessageMoveTaskResult](t, e2, "StartMessageMoveTask", "SourceArn", qpArn("qp-mv2-dlq"))
	var got []qpMessage
	for len(got) < 2 {
		r := qpCall[qpReceiveMessageResult](t, e2, "ReceiveMessage", "QueueUrl", src2, "WaitTimeSeconds", "20",
			"MaxNumberOfMessages", "10", "AttributeName.1", "ApproximateReceiveCount")
		got = append(got, r.Messages...)
	}
	require.Len(t, got, 2)
	require.ElementsMatch(t, []string{"x", "y"}, []string{got[0].Body, got[1].Body})
	for _, m := range got {
		require.False(t, old[m.MessageID], "a moved message gets a new MessageId (spec 6.9.4)")
		require.Equal(t, "1", qpNameValues(t, "moved", m.Attributes)["ApproximateReceiveCount"])
	}
	tasks = qpCall[qpListMessageMoveTasksResult](t, e2, "ListMessageMoveTasks", "SourceArn", qpArn("qp-mv2-dlq"),
		"MaxResults", "10").Results
	require.Len(t, tasks, 1)
	require.Nil(t, tasks[0].MaxNumberOfMessagesPerSecond, "no rate was given (model)")
	require.NotNil(t, tasks[0].ApproximateNumberOfMessagesToMove)
	require.Equal(t, int64(2), *tasks[0].ApproximateNumberOfMessagesToMove)
	qpFail(t, e2, 400, "InvalidParameterValue", "ListMessageMoveTasks", "SourceArn", qpArn("qp-mv2-dlq"), "MaxResults", "11")
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

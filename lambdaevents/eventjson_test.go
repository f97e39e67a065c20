package lambdaevents

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
)

// The sample events of the Lambda developer guide (with-sqs, "Example Amazon SQS message event"), as AWS
// documents them: the bytes marshalEvent must write for the same messages, once compacted.
const (
	docStandardEvent = `{
    "Records": [
        {
            "messageId": "059f36b4-87a3-44ab-83d2-661975830a7d",
            "receiptHandle": "AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a...",
            "body": "Test message.",
            "attributes": {
                "ApproximateReceiveCount": "1",
                "SentTimestamp": "1545082649183",
                "SenderId": "AIDAIENQZJOLO23YVJ4VO",
                "ApproximateFirstReceiveTimestamp": "1545082649185"
            },
            "messageAttributes": {},
            "md5OfBody": "e4e68fb7bd0e697a0ae8f1bb342846b3",
            "eventSource": "aws:sqs",
            "eventSourceARN": "arn:aws:sqs:us-east-2:123456789012:my-queue",
            "awsRegion": "us-east-2"
        },
        {
            "messageId": "2e1424d4-f796-459a-8184-9c92662be6da",
            "receiptHandle": "AQEBzWwaftRI0KuVm4tP+/7q1rGgNqicHq...",
            "body": "Test message.",
            "attributes": {
                "ApproximateReceiveCount": "1",
                "SentTimestamp": "1545082650636",
                "SenderId": "AIDAIENQZJOLO23YVJ4VO",
                "ApproximateFirstReceiveTimestamp": "1545082650649"
            },
            "messageAttributes": {},
            "md5OfBody": "e4e68fb7bd0e697a0ae8f1bb342846b3",
            "eventSource": "aws:sqs",
            "eventSourceARN": "arn:aws:sqs:us-east-2:123456789012:my-queue",
            "awsRegion": "us-east-2"
        }
    ]
}`
	docFIFOEvent = `{
    "Records": [
        {
            "messageId": "11d6ee51-4cc7-4302-9e22-7cd8afdaadf5",
            "receiptHandle": "AQEBBX8nesZEXmkhsmZeyIE8iQAMig7qw...",
            "body": "Test message.",
            "attributes": {
                "ApproximateReceiveCount": "1",
                "SentTimestamp": "1573251510774",
                "SequenceNumber": "18849496460467696128",
                "MessageGroupId": "1",
                "SenderId": "AIDAIO23YVJENQZJOL4VO",
                "MessageDeduplicationId": "1",
                "ApproximateFirstReceiveTimestamp": "1573251510774"
            },
            "messageAttributes": {},
            "md5OfBody": "e4e68fb7bd0e697a0ae8f1bb342846b3",
            "eventSource": "aws:sqs",
            "eventSourceARN": "arn:aws:sqs:us-east-2:123456789012:fifo.fifo",
            "awsRegion": "us-east-2"
        }
    ]
}`
)

func compact(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, json.Compact(&b, []byte(s)))
	return b.Bytes()
}

// requireRoundTrip checks that the bytes decode, with aws-lambda-go's types, into the event they were made
// from, and make the same bytes again.
func requireRoundTrip(t *testing.T, e events.SQSEvent, got []byte) {
	t.Helper()
	var back events.SQSEvent
	require.NoError(t, json.Unmarshal(got, &back))
	require.Equal(t, e, back, "decoded %s", got)
	require.Equal(t, string(got), string(marshalEvent(&back)))
}

// TestMarshalEventDocumented checks the bytes of the event against Lambda's documented samples, for a
// standard and a FIFO queue: same fields, same order, same string formats.
func TestMarshalEventDocumented(t *testing.T) {
	t.Parallel()
	c := config{ns: catalog.Namespace{Region: "us-east-2", Account: "123456789012"}, queue: "my-queue", senderID: "AIDAIENQZJOLO23YVJ4VO"}
	e := c.event([]fifoq.Delivery{
		{Message: fifoq.Message{Body: "Test message."}, MessageID: "059f36b4-87a3-44ab-83d2-661975830a7d",
			ReceiptHandle: "AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a...", ReceiveCount: 1,
			SentAt: time.UnixMilli(1545082649183), FirstReceivedAt: time.UnixMilli(1545082649185)},
		{Message: fifoq.Message{Body: "Test message."}, MessageID: "2e1424d4-f796-459a-8184-9c92662be6da",
			ReceiptHandle: "AQEBzWwaftRI0KuVm4tP+/7q1rGgNqicHq...", ReceiveCount: 1,
			SentAt: time.UnixMilli(1545082650636), FirstReceivedAt: time.UnixMilli(1545082650649)},
	})
	got := marshalEvent(&e)
	require.Equal(t, string(compact(t, docStandardEvent)), string(got))
	requireRoundTrip(t, e, got)

	c = config{ns: catalog.Namespace{Region: "us-east-2", Account: "123456789012"}, queue: "fifo.fifo", senderID: "AIDAIO23YVJENQZJOL4VO"}
	e = c.event([]fifoq.Delivery{
		{Message: fifoq.Message{Body: "Test message.", GroupID: "1", DeduplicationID: "1"},
			MessageID: "11d6ee51-4cc7-4302-9e22-7cd8afdaadf5", ReceiptHandle: "AQEBBX8nesZEXmkhsmZeyIE8iQAMig7qw...",
			SequenceNumber: "18849496460467696128", ReceiveCount: 1,
			SentAt: time.UnixMilli(1573251510774), FirstReceivedAt: time.UnixMilli(1573251510774)},
	})
	got = marshalEvent(&e)
	require.Equal(t, string(compact(t, docFIFOEvent)), string(got))
	requireRoundTrip(t, e, got)
}

// TestMarshalEventAttributes checks message attributes (String, Number, Binary, with custom types), their
// digest, a dead-letter queue's source, and strings that encoding/json would escape for HTML.
func TestMarshalEventAttributes(t *testing.T) {
	t.Parallel()
	c := config{ns: catalog.Namespace{Region: "eu-west-1", Account: "123456789012"}, queue: "dlq", senderID: "123456789012"}
	e := c.event([]fifoq.Delivery{{
		Message: fifoq.Message{Body: "<a & b>\n\"quoted\" é \u2028", Attributes: map[string]fifoq.Attribute{
			"n":     {DataType: "Number.int", StringValue: "42"},
			"bin":   {DataType: "Binary", BinaryValue: []byte{0, 1, 2, 250}},
			"Str&<": {DataType: "String", StringValue: "v>"},
		}},
		MessageID: "m1", ReceiptHandle: "r1", ReceiveCount: 3, DeadLetterSource: "jobs",
		SentAt: time.UnixMilli(1), FirstReceivedAt: time.UnixMilli(2),
	}})
	got := marshalEvent(&e)
	want := `{"Records":[{"messageId":"m1","receiptHandle":"r1","body":"<a & b>\n\"quoted\" é \u2028",` +
		`"attributes":{"ApproximateReceiveCount":"3","SentTimestamp":"1","SenderId":"123456789012",` +
		`"ApproximateFirstReceiveTimestamp":"2","DeadLetterQueueSourceArn":"arn:aws:sqs:eu-west-1:123456789012:jobs"},` +
		`"messageAttributes":{` +
		`"Str&<":{"stringValue":"v>","stringListValues":[],"binaryListValues":[],"dataType":"String"},` +
		`"bin":{"binaryValue":"AAEC+g==","stringListValues":[],"binaryListValues":[],"dataType":"Binary"},` +
		`"n":{"stringValue":"42","stringListValues":[],"binaryListValues":[],"dataType":"Number.int"}},` +
		`"md5OfMessageAttributes":"` + e.Records[0].Md5OfMessageAttributes + `",` +
		`"md5OfBody":"` + MD5OfBody("<a & b>\n\"quoted\" é \u2028") + `",` +
		`"eventSource":"aws:sqs","eventSourceARN":"arn:aws:sqs:eu-west-1:123456789012:dlq","awsRegion":"eu-west-1"}]}`
	require.Equal(t, want, string(got))
	require.NotEmpty(t, e.Records[0].Md5OfMessageAttributes)
	requireRoundTrip(t, e, got)

	// An empty batch (which Lambda never sends) is an empty list.
	require.Equal(t, `{"Records":[]}`, string(marshalEvent(&events.SQSEvent{})))
}

// jsonEncoderString is what writeString must write: s through a json.Encoder with SetEscapeHTML(false),
// without the newline.
func jsonEncoderString(t testing.TB, s string) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	require.NoError(t, e.Encode(s))
	return strings.TrimSuffix(b.String(), "\n")
}

// checkWriteString checks that writeString writes s as json.Encoder does.
func checkWriteString(t testing.TB, s string) {
	var b bytes.Buffer
	b.WriteString("x") // writeString appends
	writeString(&b, s)
	require.Equal(t, "x"+jsonEncoderString(t, s), b.String(), "writeString(%q)", s)
}

// writeString writes every byte, every rune class, and random strings of bytes and runes as encoding/json
// does (FuzzWriteString takes it further).
func TestWriteStringAsEncodingJSON(t *testing.T) {
	t.Parallel()
	for c := range 256 {
		checkWriteString(t, string([]byte{byte(c)}))
		checkWriteString(t, "a"+string([]byte{byte(c)})+"b")
	}
	for _, s := range []string{"", "plain", `<a href="x">&amp;</a>`, "tab\tnew\nline\r", "\u2028\u2029x\u2027\u202a",
		"é€𝄞", "\xff\xfe", "a\xe2\x82", "\xed\xa0\x80", "\x7f", `back\slash "quoted"`, "\u00ff\ufffd"} {
		checkWriteString(t, s)
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "<", "&", `"`, `\`, "\x00", "\x1f", "\n", "\x7f", "é", "\u2028", "\u2029", "𝄞", "\xff", "\xe2\x82", "\xe2"}
	for range 10000 {
		var sb strings.Builder
		for range r.IntN(20) {
			if r.IntN(4) == 0 {
				sb.WriteByte(byte(r.IntN(256)))
			} else {
				sb.WriteString(alphabet[r.IntN(len(alphabet))])
			}
		}
		checkWriteString(t, sb.String())
	}
}

// FuzzWriteString: writeString writes any string as json.Encoder with SetEscapeHTML(false) does.
func FuzzWriteString(f *testing.F) {
	for _, s := range []string{"", "Test message.", `{"a":"<b>&"}`, "\x00\x01\b\f\n\r\t\x1f\x7f", "\u2028\u2029",
		"\xff", "\xe2\x80", "é𝄞", `\"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkWriteString(t, s) })
}

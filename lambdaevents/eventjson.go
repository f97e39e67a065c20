package lambdaevents

import (
	"bytes"
	"encoding/base64"
	"slices"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// recordAttributeOrder is the order in which Lambda writes a record's attributes (its documented events, in
// the with-sqs page of the Lambda developer guide). Attributes not listed follow, by name.
var recordAttributeOrder = []string{
	"ApproximateReceiveCount",
	"SentTimestamp",
	"SequenceNumber",
	"MessageGroupId",
	"SenderId",
	"MessageDeduplicationId",
	"ApproximateFirstReceiveTimestamp",
	"DeadLetterQueueSourceArn",
}

// marshalEvent returns e as the bytes Lambda sends an SQS function: compact JSON with the fields of each
// record in Lambda's order (messageId, receiptHandle, body, attributes, messageAttributes,
// md5OfMessageAttributes when there are message attributes, md5OfBody, eventSource, eventSourceARN,
// awsRegion), "messageAttributes": {} for a message without any, and "stringListValues": [] and
// "binaryListValues": [] in each message attribute, whose binaryValue is standard base64. Strings are
// escaped as JSON requires and no more: '<', '>' and '&' are written as they are.
//
// It decodes into an events.SQSEvent equal to e when e is what config.event builds.
func marshalEvent(e *events.SQSEvent) []byte {
	var b bytes.Buffer
	b.WriteString(`{"Records":[`)
	for i := range e.Records {
		if i > 0 {
			b.WriteByte(',')
		}
		writeRecord(&b, &e.Records[i])
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

func writeRecord(b *bytes.Buffer, r *events.SQSMessage) {
	b.WriteString(`{"messageId":`)
	writeString(b, r.MessageId)
	b.WriteString(`,"receiptHandle":`)
	writeString(b, r.ReceiptHandle)
	b.WriteString(`,"body":`)
	writeString(b, r.Body)
	b.WriteString(`,"attributes":{`)
	for i, name := range attributeNames(r.Attributes) {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(b, name)
		b.WriteByte(':')
		writeString(b, r.Attributes[name])
	}
	b.WriteString(`},"messageAttributes":{`)
	names := make([]string, 0, len(r.MessageAttributes))
	for name := range r.MessageAttributes {
		names = append(names, name)
	}
	slices.Sort(names)
	for i, name := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(b, name)
		b.WriteByte(':')
		writeMessageAttribute(b, r.MessageAttributes[name])
	}
	b.WriteByte('}')
	if r.Md5OfMessageAttributes != "" {
		b.WriteString(`,"md5OfMessageAttributes":`)
		writeString(b, r.Md5OfMessageAttributes)
	}
	b.WriteString(`,"md5OfBody":`)
	writeString(b, r.Md5OfBody)
	b.WriteString(`,"eventSource":`)
	writeString(b, r.EventSource)
	b.WriteString(`,"eventSourceARN":`)
	writeString(b, r.EventSourceARN)
	b.WriteString(`,"awsRegion":`)
	writeString(b, r.AWSRegion)
	b.WriteByte('}')
}

// attributeNames returns the names of a record's attributes in Lambda's order.
func attributeNames(attrs map[string]string) []string {
	names := make([]string, 0, len(attrs))
	for _, name := range recordAttributeOrder {
		if _, ok := attrs[name]; ok {
			names = append(names, name)
		}
	}
	if len(names) == len(attrs) {
		return names
	}
	var rest []string
	for name := range attrs {
		if !slices.Contains(recordAttributeOrder, name) {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	return append(names, rest...)
}

// writeMessageAttribute writes a message attribute as Lambda does: stringValue (String and Number) or
// binaryValue (Binary), then the two list values, then dataType.
func writeMessageAttribute(b *bytes.Buffer, a events.SQSMessageAttribute) {
	b.WriteByte('{')
	if a.StringValue != nil {
		b.WriteString(`"stringValue":`)
		writeString(b, *a.StringValue)
		b.WriteByte(',')
	}
	if a.BinaryValue != nil {
		b.WriteString(`"binaryValue":"`)
		b.WriteString(base64.StdEncoding.EncodeToString(a.BinaryValue))
		b.WriteString(`",`)
	}
	b.WriteString(`"stringListValues":[`)
	for i, s := range a.StringListValues {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(b, s)
	}
	b.WriteString(`],"binaryListValues":[`)
	for i, v := range a.BinaryListValues {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(base64.StdEncoding.EncodeToString(v))
		b.WriteByte('"')
	}
	b.WriteString(`],"dataType":`)
	writeString(b, a.DataType)
	b.WriteByte('}')
}

// writeString writes s as a JSON string, byte for byte as a json.Encoder with SetEscapeHTML(false) writes
// it (without the newline), with no allocation: '"' and '\\' escaped with a backslash, the control
// characters as \b, \f, \n, \r, \t or else \u00XX, each byte of invalid UTF-8 as \ufffd, U+2028 and U+2029
// as \u2028 and \u2029, and everything else, '<', '>' and '&' included, as it is.
func writeString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	start := 0 // s[start:i] is yet to be written, as it is
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b.WriteString(s[start:i])
			switch c {
			case '"', '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case '\b':
				b.WriteString(`\b`)
			case '\f':
				b.WriteString(`\f`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			default:
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(s[start:i])
			b.WriteString(`\ufffd`)
		case r == '\u2028' || r == '\u2029':
			b.WriteString(s[start:i])
			b.WriteString(`\u202`)
			b.WriteByte(hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}

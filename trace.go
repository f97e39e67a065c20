package fifoq

import "strconv"

// MaxTraceHeaderLength is the longest [Message.TraceHeader], in bytes: an AWS X-Ray trace header takes about
// 100.
const MaxTraceHeaderLength = 1024

// CheckTraceHeader returns the error [Queue.Send] returns for a message whose TraceHeader is h: nil for ""
// (none) and for a header of up to [MaxTraceHeaderLength] bytes, and ErrInvalidMessageAttribute for a longer
// one, with the message SQS sends for an AWSTraceHeader system attribute that long. A front end calls it as
// it reads a message's system attributes, to refuse a bad one in the order SQS does.
func CheckTraceHeader(h string) error {
	if len(h) > MaxTraceHeaderLength {
		return reject(ErrInvalidMessageAttribute, "trace header of %d bytes, want at most %d", len(h), MaxTraceHeaderLength).says(
			"Message system attribute 'AWSTraceHeader' must be at most %s bytes long.", strconv.Itoa(MaxTraceHeaderLength))
	}
	return nil
}

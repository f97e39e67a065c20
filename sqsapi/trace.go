package sqsapi

import (
	"net/http"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/internal/rule"
	"github.com/fifoq/fifoq/sqsmd5"
)

// traceIDHeader is the HTTP header of an X-Ray trace: SendMessage and SendMessageBatch take it for the
// AWSTraceHeader of their messages that do not set that system attribute themselves.
const traceIDHeader = "X-Amzn-Trace-Id"

// headerTrace returns the system attributes of a message sent without an AWSTraceHeader of its own (sys
// has none) by a request with an X-Amzn-Trace-Id header: that header as AWSTraceHeader, with the digest
// of it as an attribute, as if given. A header too long for an AWSTraceHeader is ignored. sys is returned
// unchanged when it has a header, or the request none. The header is the message's (fifoq.Message.
// TraceHeader): stored with it, it comes back with it and goes with it to a dead-letter queue.
func headerTrace(r *http.Request, sys systemAttrs) systemAttrs {
	if sys.traceHeader != "" {
		return sys
	}
	h := r.Header.Get(traceIDHeader)
	if h == "" || rule.CheckTraceHeader(h) != nil {
		return sys
	}
	return systemAttrs{traceHeader: h, md5: sqsmd5.Attributes(map[string]fifoq.Attribute{
		"AWSTraceHeader": {DataType: "String", StringValue: h}})}
}

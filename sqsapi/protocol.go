package sqsapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/fifoq/fifoq"
)

// maxPooledBytes bounds the buffers a pooled call keeps.
const maxPooledBytes = 256 << 10

// An encoder writes one response in the request's protocol. Each output type describes itself once through
// it (encode), and the JSON and XML encoders lay the same description out in their own way.
type encoder interface {
	str(name, v string)
	num(name string, v int64)
	boolean(name string, v bool)
	blob(name string, v []byte)
	// md5Body and md5Attributes write the hex MD5 digest of a message body or of message attributes
	// (package sqsmd5), straight into the response.
	md5Body(name, body string)
	md5Attributes(name string, attrs map[string]fifoq.Attribute)
	// beginList opens a list: a JSON array called name, or in XML a run of <item> elements.
	beginList(name, item string)
	endList()
	listStr(v string)
	beginItem()
	endItem()
	// beginMap opens a map: a JSON object called name, or in XML a run of
	// <entry><key>k</key><value>v</value></entry> elements.
	beginMap(name, entry, key, value string)
	endMap()
	mapStr(k, v string)
	beginMapItem(k string)
	endMapItem()
}

// An output is the result of an action. A nil output is an action with no result (DeleteMessage).
type output interface{ encode(e encoder) }

// A handler runs one action.
type handler func(s *Server, c *call) (output, error)

// A queryInput is the input of an action, which decodes itself from a query-protocol form. From the JSON
// protocol, an input that is also a jsonInput (those of the actions on the hot path) decodes itself with
// jsonDecoder; the others are decoded with encoding/json, by their field names (the SDK's member names).
type queryInput interface{ fromQuery(f *form) error }

// handle makes a handler of a function that takes its input decoded.
func handle[T any, P interface {
	*T
	queryInput
}](run func(*Server, *call, P) (output, error)) handler {
	return func(s *Server, c *call) (output, error) {
		in := P(new(T))
		if err := c.decode(in); err != nil {
			return nil, err
		}
		return run(s, c, in)
	}
}

// handlePooled is handle for the actions on the hot path: their input is kept in the pooled call (in
// returns it), so decoding it allocates no input.
func handlePooled[P queryInput](in func(c *call) P, run func(*Server, *call, P) (output, error)) handler {
	return func(s *Server, c *call) (output, error) {
		p := in(c)
		if err := c.decode(p); err != nil {
			return nil, err
		}
		return run(s, c, p)
	}
}

// hotPath holds the inputs and outputs of the actions on the hot path (sending, receiving, batch
// deleting), kept with the pooled call rather than allocated per request. Everything is cleared when the
// call goes back to the pool; the slices keep their arrays (up to a batch's worth).
type hotPath struct {
	send      sendMessageInput
	sendBatch sendMessageBatchInput
	receive   receiveMessageInput
	delBatch  deleteMessageBatchInput

	sent      sendResult
	sentBatch sendBatchOutput
	received  receiveOutput
	deleted   idBatchOutput
}

// reset clears h for the next request, keeping the arrays of batch-sized slices.
func (h *hotPath) reset() {
	sendEntries := keep(h.sendBatch.Entries)
	delEntries := keep(h.delBatch.Entries)
	sentOK := keep(h.sentBatch.ok)
	deletedOK := keep(h.deleted.ok)
	*h = hotPath{}
	h.sendBatch.Entries, h.delBatch.Entries = sendEntries, delEntries
	h.sentBatch.ok, h.deleted.ok = sentOK, deletedOK
}

// keep returns s cleared and emptied, to be reused, or nil when its array is larger than a batch.
func keep[E any](s []E) []E {
	if cap(s) > fifoq.MaxBatchEntries {
		return nil
	}
	clear(s)
	return s[:0]
}

// A call is one request being served. Calls are pooled with their buffers.
type call struct {
	w    http.ResponseWriter
	r    *http.Request
	ctx  context.Context
	json bool // the JSON protocol; otherwise the query protocol
	// acceptJSON: a query-protocol request that asks for its answer in JSON (Accept: application/json)
	acceptJSON bool
	action     string
	body       []byte
	buf        []byte
	form       form
	requestID  string
	headers    *responseHeaders // holds requestID
	queue      string           // the name of the queue the request is about, once resolved, for the log
	status     int              // of the response, for the log
	code       string           // the error code of a failed request, for the log
	canceled   bool             // the action ended early because the request's context ended (see inProcess)
	jenc       jsonEncoder
	xenc       xmlEncoder
	qjenc      queryJSONEncoder
	jdec       jsonDecoder
	body1      io.LimitedReader // reads a body of known length
	hot        hotPath
}

var callPool = sync.Pool{New: func() any { return new(call) }}

// Header values shared by all responses; net/http only reads them.
var (
	jsonContentType = []string{"application/x-amz-json-1.0"}
	xmlContentType  = []string{"text/xml"}
	// plainJSONContentType is that of the JSON answers to query-protocol requests.
	plainJSONContentType = []string{"application/json"}
)

// ServeHTTP serves one SQS request: the JSON protocol when the request has an X-Amz-Target header, and the
// query protocol (a form in the body or the query string) otherwise.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := callPool.Get().(*call)
	c.w, c.r, c.ctx = w, r, r.Context()
	c.headers = newResponseHeaders()
	c.requestID = c.headers.requestID[0]
	var start time.Time
	debugLog := s.log.Enabled(c.ctx, slog.LevelDebug)
	if debugLog || s.observer != nil {
		start = time.Now()
	}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v) // net/http's way to abort a response: not ours to turn into an error
			}
			s.log.Error("sqsapi: panic serving request", "action", c.action, "queue", c.queue, "panic", v,
				"stack", string(debug.Stack()))
			c.fail(s, errInternal)
		}
		if rec, ok := w.(*recorder); ok {
			rec.canceled = c.canceled
		}
		if s.observer != nil {
			s.observe(c, start)
		}
		if debugLog {
			protocol := "query"
			if c.json {
				protocol = "json"
			}
			s.log.Debug("sqsapi: request", "action", c.action, "queue", c.queue, "protocol", protocol,
				"status", c.status, "code", c.code, "request_id", c.requestID, "duration", time.Since(start))
		}
		// Do not keep the buffers of a large request or response in the pool.
		if cap(c.buf) > maxPooledBytes {
			c.buf = nil
		}
		if cap(c.jenc.b) > maxPooledBytes {
			c.jenc.b = nil
		}
		if cap(c.xenc.b) > maxPooledBytes {
			c.xenc.b = nil
		}
		if cap(c.qjenc.b) > maxPooledBytes {
			c.qjenc.b = nil
		}
		if cap(c.jdec.scratch) > maxPooledBytes {
			c.jdec.scratch = nil
		}
		c.hot.reset()
		*c = call{buf: c.buf[:0], jenc: c.jenc, xenc: c.xenc, qjenc: c.qjenc, jdec: jsonDecoder{scratch: c.jdec.scratch[:0]},
			hot: c.hot}
		callPool.Put(c)
	}()

	if err := c.read(s.maxBody); err != nil {
		c.fail(s, err)
		return
	}
	if s.secret != nil {
		if err := s.verify(r, c.body); err != nil {
			c.fail(s, err)
			return
		}
	}
	h, ok := actionTable[c.action]
	// A queue's URL is an endpoint of the query protocol for the actions on that queue, but not for
	// CreateQueue and ListQueues, which SQS refuses there.
	if !ok || !c.json && (c.action == "CreateQueue" || c.action == "ListQueues") && isQueuePath(r.URL.Path) {
		c.fail(s, newError(codeInvalidAction, "The action %s is not valid for this endpoint.", c.action))
		return
	}
	out, err := h(s, c)
	if err != nil {
		c.fail(s, err)
		return
	}
	c.succeed(out)
}

// read reads the request: its protocol, action, body (up to limit bytes) and, for the query protocol, its
// form.
func (c *call) read(limit int64) error {
	r := c.r
	if target := r.Header.Get("X-Amz-Target"); target != "" {
		c.json = true
		c.action = strings.TrimPrefix(target, "AmazonSQS.")
		if c.action == target {
			return newError(codeInvalidAction, "The action %s is not valid for this endpoint.", target)
		}
	}
	if r.ContentLength > limit {
		return tooLarge(limit) // unread: net/http closes the connection after the response
	}
	if r.Body != nil && r.Body != http.NoBody {
		var body io.Reader
		if r.ContentLength >= 0 {
			// The length is known and allowed, so no http.MaxBytesReader (an allocation): read up to the
			// limit and one byte more, which tells a body over the limit (net/http's server gives no more
			// than Content-Length, but another caller of ServeHTTP might) from one that is not.
			c.body1 = io.LimitedReader{R: r.Body, N: limit + 1}
			body = &c.body1
			// Room for it up front, up to what the pool keeps: a client cannot make the server allocate
			// much more than it sends by stating a large length.
			if n := min(int(r.ContentLength)+1, maxPooledBytes); cap(c.buf) < n {
				c.buf = make([]byte, 0, n)
			}
		} else {
			body = http.MaxBytesReader(c.w, r.Body, limit)
		}
		buf, err := readAll(c.buf[:0], body)
		c.buf = buf
		if err == nil && int64(len(buf)) > limit {
			return tooLarge(limit)
		}
		if err != nil {
			var maxBytes *http.MaxBytesError
			if errors.As(err, &maxBytes) {
				return tooLarge(limit)
			}
			return newError(codeSerialization, "The request body could not be read.")
		}
		c.body = buf
	}
	if c.json {
		return nil
	}
	c.acceptJSON = acceptsJSON(r.Header["Accept"])
	values, err := url.ParseQuery(string(c.body))
	if err != nil {
		return newError("MalformedQueryString", "The request body is not a well-formed form.")
	}
	if q := r.URL.RawQuery; q != "" {
		extra, err := url.ParseQuery(q)
		if err != nil {
			return newError("MalformedQueryString", "The query string is not well formed.")
		}
		for k, v := range extra {
			values[k] = append(values[k], v...)
		}
	}
	c.form = newForm(values)
	c.action = c.form.get("Action")
	if c.action == "" {
		if isQueuePath(r.URL.Path) {
			// What SQS answers to a request to a queue's URL without an action (a GET of the URL in a
			// browser): 404 and an XML document of that name, whatever the request accepts.
			return newError(codeUnknownOperation, "")
		}
		return newError(codeMissingAction, "The request must contain the parameter Action.")
	}
	return nil
}

// isQueuePath reports whether a request's path is that of a queue's URL (/account/name) rather than the
// endpoint's root.
func isQueuePath(path string) bool {
	return strings.Contains(strings.Trim(path, "/"), "/")
}

// acceptsJSON reports whether Accept header values ask for application/json.
func acceptsJSON(accept []string) bool {
	for _, v := range accept {
		if strings.Contains(v, "application/json") {
			return true
		}
	}
	return false
}

// readAll appends everything r holds to b.
func readAll(b []byte, r io.Reader) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// decode decodes the input of the action from the request.
func (c *call) decode(in queryInput) error {
	if !c.json {
		return in.fromQuery(&c.form)
	}
	if ji, ok := in.(jsonInput); ok {
		return c.jdec.decodeJSON(c.body, ji)
	}
	if len(c.body) == 0 {
		return nil
	}
	if err := json.Unmarshal(c.body, in); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return newError(codeSerialization, "Value for parameter %s is invalid: expected %s.", typeErr.Field, typeErr.Type)
		}
		return newError(codeSerialization, "The request body is not valid JSON for action %s.", c.action)
	}
	return nil
}

// scheme returns the scheme of the request, for the queue URLs in responses.
func (c *call) scheme() string {
	switch {
	case c.r.URL.Scheme != "":
		return c.r.URL.Scheme
	case c.r.TLS != nil:
		return "https"
	}
	if p := c.r.Header.Get("X-Forwarded-Proto"); p == "https" || p == "http" {
		return p
	}
	return "http"
}

// queueURL returns the URL of the queue of that account and name, on the host the request was sent to.
func (c *call) queueURL(account, name string) string {
	host := c.r.Host
	if host == "" {
		host = "localhost"
	}
	return c.scheme() + "://" + host + "/" + account + "/" + name
}

// succeed writes a successful response.
func (c *call) succeed(out output) {
	c.status = http.StatusOK
	h := c.w.Header()
	h["X-Amzn-Requestid"] = c.headers.requestID[:]
	if c.json {
		h["Content-Type"] = jsonContentType
		e := &c.jenc
		e.reset()
		if out != nil {
			out.encode(e)
		}
		b := e.finish()
		h["Content-Length"] = c.headers.contentLength(len(b))
		c.w.Write(b)
		return
	}
	if c.acceptJSON {
		c.succeedQueryJSON(out)
		return
	}
	h["Content-Type"] = xmlContentType
	e := &c.xenc
	e.reset()
	e.b = append(e.b, `<?xml version="1.0"?>`...)
	e.b = append(e.b, '<')
	e.b = append(e.b, c.action...)
	e.b = append(e.b, `Response xmlns="`+xmlNamespace+`">`...)
	if out != nil {
		result := c.action + "Result"
		e.start(result)
		n := len(e.b)
		out.encode(e)
		if len(e.b) == n {
			e.b = append(e.b[:n-1], "/>"...) // an empty result is written <ReceiveMessageResult/>, as SQS does
		} else {
			e.end(result)
		}
	}
	e.b = append(e.b, "<ResponseMetadata><RequestId>"...)
	e.b = append(e.b, c.requestID...)
	e.b = append(e.b, "</RequestId></ResponseMetadata></"...)
	e.b = append(e.b, c.action...)
	e.b = append(e.b, "Response>"...)
	h["Content-Length"] = c.headers.contentLength(len(e.b))
	c.w.Write(e.b)
}

// succeedQueryJSON writes the successful answer to a query-protocol request that asked for JSON:
// {"<Action>Response": {"<Action>Result": {...}, "ResponseMetadata": {"RequestId": "..."}}}.
func (c *call) succeedQueryJSON(out output) {
	h := c.w.Header()
	h["Content-Type"] = plainJSONContentType
	e := &c.qjenc
	e.reset()
	e.key(c.action + "Response")
	e.open('{')
	if out != nil {
		e.key(c.action + "Result")
		e.open('{')
		out.encode(e)
		e.close('}')
	}
	e.key("ResponseMetadata")
	e.open('{')
	e.str("RequestId", c.requestID)
	e.close('}')
	e.close('}')
	b := e.finish()
	h["Content-Length"] = c.headers.contentLength(len(b))
	c.w.Write(b)
}

// fail writes an error response.
func (c *call) fail(s *Server, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		if ae = storeError(err); ae == nil {
			s.log.Error("sqsapi: internal error", "action", c.action, "queue", c.queue, "error", err)
			ae = errInternal
		}
	}
	if ae == errCanceled {
		c.canceled = true
	}
	fault := "Sender"
	if ae.status >= 500 {
		fault = "Receiver"
		switch {
		case ae.code == codeUnavailable:
			// A failed store fails every request from then on: the store logs its failure once, and
			// Server.Failed tells the program; the requests it fails go to the log at Debug.
			s.log.Debug("sqsapi: refused: the store failed or is closed", "action", c.action, "queue", c.queue, "error", ae.cause)
		case ae.cause != nil:
			s.log.Error("sqsapi: internal error", "action", c.action, "queue", c.queue, "error", ae.cause)
		case ae != errInternal && ae != errCanceled:
			s.log.Error("sqsapi: request failed", "action", c.action, "queue", c.queue, "code", ae.code, "error", ae.message)
		}
	}
	c.status, c.code = ae.status, ae.code
	h := c.w.Header()
	h["X-Amzn-Requestid"] = c.headers.requestID[:]
	if c.json {
		h["Content-Type"] = jsonContentType
		h["X-Amzn-Query-Error"] = []string{ae.code + ";" + fault}
		c.w.WriteHeader(ae.status)
		e := &c.jenc
		e.reset()
		e.str("__type", "com.amazonaws.sqs#"+shapeOf(ae.code))
		e.str("message", ae.message)
		c.w.Write(e.finish())
		return
	}
	if ae.code == codeUnknownOperation {
		h["Content-Type"] = xmlContentType
		c.w.WriteHeader(ae.status)
		c.w.Write([]byte("<UnknownOperationException/>"))
		return
	}
	if c.acceptJSON {
		// {"Error": {"Type": ..., "Code": ..., "Message": ...}, "RequestId": ...}: the XML ErrorResponse in
		// JSON.
		h["Content-Type"] = plainJSONContentType
		c.w.WriteHeader(ae.status)
		e := &c.qjenc
		e.reset()
		e.key("Error")
		e.open('{')
		e.str("Type", fault)
		e.str("Code", ae.code)
		e.str("Message", ae.message)
		e.close('}')
		e.str("RequestId", c.requestID)
		c.w.Write(e.finish())
		return
	}
	h["Content-Type"] = xmlContentType
	c.w.WriteHeader(ae.status)
	e := &c.xenc
	e.reset()
	e.b = append(e.b, `<?xml version="1.0"?><ErrorResponse xmlns="`+xmlNamespace+`"><Error>`...)
	e.element("Type", fault)
	e.element("Code", ae.code)
	e.element("Message", ae.message)
	e.b = append(e.b, "<Detail/></Error>"...)
	e.element("RequestId", c.requestID)
	e.b = append(e.b, "</ErrorResponse>"...)
	c.w.Write(e.b)
}

// requestIDs makes request ids: a random prefix per process and a counter, shaped like a UUID.
var (
	requestPrefix = func() string {
		var b [8]byte
		rand.Read(b[:])
		s := hex.EncodeToString(b[:])
		return s[:8] + "-" + s[8:12] + "-" + s[12:16] + "-"
	}()
	requestCounter atomic.Uint64
)

// responseHeaders holds the header values of one response that differ from response to response, made
// in one allocation: the request id, and the Content-Length of a successful response. Each value is a
// string over bytes of buf that are written once, before the string is made, and never again; the header
// map takes the slices, which outlive the call (an in-process response keeps its header).
type responseHeaders struct {
	requestID [1]string
	length    [1]string
	buf       [36 + 20]byte // the request id, then the length's digits
}

// newResponseHeaders makes the headers of a new request, with its request id.
func newResponseHeaders() *responseHeaders {
	const hexDigits = "0123456789abcdef"
	h := new(responseHeaders)
	n := requestCounter.Add(1)
	b := h.buf[:36]
	copy(b, requestPrefix) // 19 bytes: xxxxxxxx-xxxx-xxxx-
	b[23] = '-'
	for i := 35; i >= 19; i-- {
		if i == 23 {
			continue
		}
		b[i] = hexDigits[n&0xF]
		n >>= 4
	}
	h.requestID[0] = unsafe.String(&h.buf[0], 36)
	return h
}

// contentLength returns the Content-Length header value of a body of n bytes. It is called once.
func (h *responseHeaders) contentLength(n int) []string {
	digits := strconv.AppendInt(h.buf[36:36], int64(n), 10)
	h.length[0] = unsafe.String(&digits[0], len(digits))
	return h.length[:]
}

// itoa formats an integer for attribute values.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }

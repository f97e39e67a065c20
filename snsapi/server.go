package snsapi

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"

	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/internal/sigv4"
)

// xmlNamespace is SNS's XML namespace.
const xmlNamespace = "http://sns.amazonaws.com/doc/2010-03-31/"

// maxRequestBytes bounds a request's body: a PublishBatch of 256 KiB, form-encoded, fits several times.
const maxRequestBytes = 4 << 20

// A Server serves the Amazon SNS API (the query protocol) from the topics of a catalog.Catalog, delivering to
// the catalogue's queues. It is an http.Handler, safe for concurrent use. Create one with NewServer; the
// zero Server is not usable.
type Server struct {
	cat     *catalog.Catalog
	region  string
	account string
	log     *slog.Logger
	secret  func(accessKeyID string) (string, bool)
	signing *signing // nil: envelopes are not signed
}

// signing is what signs envelopes: the key, and the certificate served at the SigningCertURL.
type signing struct {
	key     *rsa.PrivateKey
	certPEM []byte
	path    string // of the certificate, on the server's endpoint
}

type config struct {
	region, account string
	log             *slog.Logger
	secret          func(string) (string, bool)
	signing         *signing
}

// An Option configures a Server.
type Option func(*config)

// WithRegion sets the default region, as package sqsapi's option of that name does. The default is
// "us-east-1".
func WithRegion(region string) Option { return func(c *config) { c.region = region } }

// WithAccountID sets the default account, as package sqsapi's option of that name does. The default is
// "000000000000".
func WithAccountID(id string) Option { return func(c *config) { c.account = id } }

// WithLogger sets where the server logs: each request at Debug ("snsapi: request"), internal failures at
// Error. The default discards everything.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// WithSignatureVerification makes the server check the AWS Signature Version 4 of every request, as package
// sqsapi's option of that name does, with the service sns. Unsubscribe and ConfirmSubscription are served
// without a signature, as SNS serves them (the UnsubscribeURL of an envelope and the SubscribeURL of a
// confirmation are plain links).
func WithSignatureVerification(secret func(accessKeyID string) (secretAccessKey string, ok bool)) Option {
	return func(c *config) { c.secret = secret }
}

// WithSigningKey makes the server sign the envelopes of standard topics with key, as SNS does
// (SignatureVersion 1: SHA1withRSA, 2: SHA256withRSA), and serve certPEM, the PEM of a certificate of key's
// public key, at the SigningCertURL the envelopes name: <scheme>://<host of the publish request>/
// SimpleNotificationService-<first 32 hex digits of the certificate's SHA-256>.pem. Without it envelopes
// carry an empty Signature and SigningCertURL. It panics if key is nil.
func WithSigningKey(key *rsa.PrivateKey, certPEM []byte) Option {
	if key == nil {
		panic("snsapi: WithSigningKey with a nil key")
	}
	return func(c *config) {
		block, _ := pem.Decode(certPEM)
		var sum [32]byte
		if block != nil {
			sum = sha256.Sum256(block.Bytes)
		}
		c.signing = &signing{key: key, certPEM: certPEM,
			path: "/SimpleNotificationService-" + hex.EncodeToString(sum[:16]) + ".pem"}
	}
}

// NewServer returns a server of the SNS API over the topics of cat, which it creates, changes and deletes
// there (in cat's store, for a durable catalogue).
func NewServer(cat *catalog.Catalog, opts ...Option) *Server {
	c := config{region: "us-east-1", account: "000000000000"}
	for _, o := range opts {
		o(&c)
	}
	if c.log == nil {
		c.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Server{cat: cat, region: c.region, account: c.account, log: c.log, secret: c.secret, signing: c.signing}
}

// Catalog returns the catalogue the server serves its topics from.
func (s *Server) Catalog() *catalog.Catalog { return s.cat }

// SigningCertPath returns the path of the signing certificate on the server's endpoint, "" without
// WithSigningKey.
func (s *Server) SigningCertPath() string {
	if s.signing == nil {
		return ""
	}
	return s.signing.path
}

// A call is one request being served.
type call struct {
	w      http.ResponseWriter
	r      *http.Request
	form   url.Values
	action string
	ns     catalog.Namespace
	id     string // the request id
}

func (c *call) get(name string) string { return c.form.Get(name) }

func (c *call) has(name string) bool { _, ok := c.form[name]; return ok }

// endpoint returns the URL the request reached the server at: <scheme>://<host>.
func (c *call) endpoint() string {
	scheme := "http"
	switch {
	case c.r.URL.Scheme != "":
		scheme = c.r.URL.Scheme
	case c.r.TLS != nil:
		scheme = "https"
	case c.r.Header.Get("X-Forwarded-Proto") == "https":
		scheme = "https"
	}
	host := c.r.Host
	if host == "" {
		host = "localhost"
	}
	return scheme + "://" + host
}

// ServeHTTP serves one SNS request: a query-protocol form (Action=...) in a POST body or a GET query
// string, or a GET of the signing certificate.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := &call{w: w, r: r, id: newRequestID()}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("snsapi: panic serving request", "action", c.action, "panic", v, "stack", string(debug.Stack()))
			c.fail(s, errInternal)
		}
	}()
	if s.signing != nil && r.Method == http.MethodGet && r.URL.Path == s.signing.path {
		w.Header().Set("Content-Type", "application/x-x509-ca-cert")
		w.Write(s.signing.certPEM)
		return
	}
	body, err := readBody(w, r)
	if err != nil {
		c.fail(s, err)
		return
	}
	form, perr := url.ParseQuery(string(body))
	if perr != nil {
		c.fail(s, newError("MalformedQueryString", "The request body is not a well-formed form."))
		return
	}
	for k, v := range r.URL.Query() {
		form[k] = append(form[k], v...)
	}
	c.form = form
	c.action = form.Get("Action")
	account, region := sigv4.Namespace(r, s.account, s.region)
	c.ns = catalog.Namespace{Account: account, Region: region}
	h, ok := actions[c.action]
	switch {
	case c.action == "":
		c.fail(s, newError("MissingAction", "The request must contain the parameter Action."))
		return
	case !ok:
		c.fail(s, newError("InvalidAction", "The action %s is not valid for this web service.", c.action))
		return
	}
	if s.secret != nil && c.action != "Unsubscribe" && c.action != "ConfirmSubscription" {
		if err := sigv4.Verify(r, body, s.secret, s.region, "sns"); err != nil {
			c.fail(s, newError(err.Code, "%s", err.Message))
			return
		}
	}
	out, err := h(s, c)
	if err != nil {
		c.fail(s, err)
		return
	}
	c.succeed(out)
	s.log.Debug("snsapi: request", "action", c.action, "status", 200, "request_id", c.id)
}

// readBody reads the request's body, up to maxRequestBytes.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, &apiError{code: "RequestEntityTooLarge", status: 413,
				message: "Request body exceeded the limit of " + itoa(maxRequestBytes) + " bytes."}
		}
		return nil, newError("MalformedQueryString", "The request body could not be read.")
	}
	return b, nil
}

// newRequestID returns a random UUID, the x-amzn-RequestId of a response.
func newRequestID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// succeed writes out as SNS writes a result: pretty-printed XML, two spaces a level, no XML declaration.
func (c *call) succeed(out *xmlOut) {
	var x xmlOut
	x.open(c.action+"Response", ` xmlns="`+xmlNamespace+`"`)
	if out != nil {
		if len(out.b) == 0 {
			x.line("<" + c.action + "Result/>")
		} else {
			x.open(c.action+"Result", "")
			x.nest(out)
			x.close(c.action + "Result")
		}
	}
	x.open("ResponseMetadata", "")
	x.elem("RequestId", c.id)
	x.close("ResponseMetadata")
	x.close(c.action + "Response")
	h := c.w.Header()
	h.Set("Content-Type", "text/xml")
	h.Set("X-Amzn-Requestid", c.id)
	c.w.Write(x.b)
}

// fail writes an error as SNS writes it: <ErrorResponse><Error><Type/><Code/><Message/></Error><RequestId/>.
func (c *call) fail(s *Server, err error) {
	ae := toAPIError(err)
	if ae.cause != nil {
		s.log.Error("snsapi: internal error", "action", c.action, "error", ae.cause)
	}
	s.log.Debug("snsapi: request", "action", c.action, "status", ae.status, "code", ae.code, "request_id", c.id)
	fault := "Sender"
	if ae.status >= 500 {
		fault = "Receiver"
	}
	var x xmlOut
	x.open("ErrorResponse", ` xmlns="`+xmlNamespace+`"`)
	x.open("Error", "")
	x.elem("Type", fault)
	x.elem("Code", ae.code)
	x.elem("Message", ae.message)
	x.close("Error")
	x.elem("RequestId", c.id)
	x.close("ErrorResponse")
	h := c.w.Header()
	h.Set("Content-Type", "text/xml")
	h.Set("X-Amzn-Requestid", c.id)
	c.w.WriteHeader(ae.status)
	c.w.Write(x.b)
}

// An xmlOut writes XML as SNS does: one element a line, indented by two spaces a level.
type xmlOut struct {
	b     []byte
	depth int
}

func (x *xmlOut) line(s string) {
	x.b = append(x.b, strings.Repeat("  ", x.depth)...)
	x.b = append(x.b, s...)
	x.b = append(x.b, '\n')
}

func (x *xmlOut) open(name, attrs string) {
	x.line("<" + name + attrs + ">")
	x.depth++
}

func (x *xmlOut) close(name string) {
	x.depth--
	x.line("</" + name + ">")
}

func (x *xmlOut) elem(name, value string) {
	var b bytes.Buffer
	escape(&b, value)
	x.line("<" + name + ">" + b.String() + "</" + name + ">")
}

// nest appends o's lines, indented to x's depth.
func (x *xmlOut) nest(o *xmlOut) {
	for _, l := range bytes.SplitAfter(o.b, []byte("\n")) {
		if len(l) > 0 {
			x.b = append(x.b, strings.Repeat("  ", x.depth)...)
			x.b = append(x.b, l...)
		}
	}
}

// escape writes s as XML character data: &, <, > and the quotes escaped, and the line breaks and tabs
// as character references, so that a parser gives them back as they were.
func escape(b *bytes.Buffer, s string) {
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&apos;")
		case '\r':
			b.WriteString("&#xD;")
		case '\n':
			b.WriteString("&#xA;")
		case '\t':
			b.WriteString("&#x9;")
		default:
			b.WriteRune(r)
		}
	}
}

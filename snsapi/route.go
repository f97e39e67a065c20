package snsapi

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/fifoq/fifoq/internal/sigv4"
)

// Route returns a handler that serves SNS's requests with sns and every other request with other (an SQS
// server, package sqsapi), on one endpoint, telling them apart as AWS does:
//
//   - a request signed with SigV4 by its credential scope's service (".../sns/aws4_request" is SNS's; any
//     other service goes to other);
//   - an unsigned JSON-protocol request (X-Amz-Target) goes to other: SNS speaks the query protocol only;
//   - an unsigned query-protocol request by its Action, which names an SNS action or not (SNS's and SQS's
//     action names do not overlap): the UnsubscribeURL of an envelope is such a request;
//   - a GET of sns's signing certificate (the SigningCertURL of its envelopes) goes to sns.
//
// Reading an unsigned POST's Action reads its body, which other gets back whole.
func Route(sns *Server, other http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if IsSNSRequest(r, sns) {
			sns.ServeHTTP(w, r)
			return
		}
		other.ServeHTTP(w, r)
	})
}

// IsSNSRequest reports whether r is a request of the SNS API for sns, by Route's rule. It may read r's body,
// and then replaces it with a reader of the same bytes.
func IsSNSRequest(r *http.Request, sns *Server) bool {
	if _, _, service := sigv4.Scope(r); service != "" {
		return service == "sns"
	}
	if r.Header.Get("X-Amz-Target") != "" {
		return false
	}
	if p := sns.SigningCertPath(); p != "" && r.Method == http.MethodGet && r.URL.Path == p {
		return true
	}
	if a := r.URL.Query().Get("Action"); a != "" {
		return IsAction(a)
	}
	if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody ||
		!strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes+1))
	rest := r.Body
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), rest), rest}
	if err != nil {
		return false
	}
	form, _ := url.ParseQuery(string(body))
	return IsAction(form.Get("Action"))
}

// Package sigv4 checks the AWS Signature Version 4 of requests and reads their credential scope, for the
// servers of the AWS APIs in this module (sqsapi, snsapi): one home for the rules every AWS query and JSON
// endpoint shares. It is internal: no other module imports it.
package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The error codes Verify returns, those AWS sends for the cases.
const (
	CodeMissingToken          = "MissingAuthenticationToken"
	CodeIncompleteSignature   = "IncompleteSignature"
	CodeInvalidClientTokenID  = "InvalidClientTokenId"
	CodeSignatureDoesNotMatch = "SignatureDoesNotMatch"
)

// An Error is a request whose signature is refused: AWS's error code and message.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func newError(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// amzDateLayout is the layout of X-Amz-Date.
const amzDateLayout = "20060102T150405Z"

// MaxSkew is how far a request's X-Amz-Date may be from the real clock.
const MaxSkew = 15 * time.Minute

// Verify checks the SigV4 signature in the request's Authorization header against its body, with the secret
// access key that secret returns for the request's access key id. The credential scope must name service and
// a region: defaultRegion, or any name of a region's form (the region the request acts in). Only signatures
// in the Authorization header are understood, not presigned URLs.
func Verify(r *http.Request, body []byte, secret func(accessKeyID string) (string, bool), defaultRegion, service string) *Error {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return newError(CodeMissingToken, "Request is missing Authentication Token")
	}
	algorithm, params, _ := strings.Cut(auth, " ")
	if algorithm != "AWS4-HMAC-SHA256" {
		return newError(CodeIncompleteSignature, "Unsupported AWS 'algorithm': '%s'.", algorithm)
	}
	var credential, signedHeaders, signature string
	for _, p := range strings.Split(params, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		switch k {
		case "Credential":
			credential = v
		case "SignedHeaders":
			signedHeaders = v
		case "Signature":
			signature = v
		}
	}
	scope := strings.Split(credential, "/")
	if len(scope) != 5 || signedHeaders == "" || signature == "" || scope[4] != "aws4_request" {
		return newError(CodeIncompleteSignature, "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters.")
	}
	keyID, date, region, scoped := scope[0], scope[1], scope[2], scope[3]
	key, ok := secret(keyID)
	if !ok {
		return newError(CodeInvalidClientTokenID, "The security token included in the request is invalid.")
	}
	amzDate := r.Header.Get("X-Amz-Date")
	t, err := time.Parse(amzDateLayout, amzDate)
	if err != nil || !strings.HasPrefix(amzDate, date) {
		return newError(CodeIncompleteSignature, "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.")
	}
	now := time.Now().UTC()
	switch d := now.Sub(t); {
	case d > MaxSkew:
		return newError(CodeSignatureDoesNotMatch, "Signature expired: %s is now earlier than %s (%s - 15 min.)", amzDate,
			now.Add(-MaxSkew).Format(amzDateLayout), now.Format(amzDateLayout))
	case d < -MaxSkew:
		// AWS's words for a date ahead of its clock (recorded, e.g. "Signature not yet current:
		// 20180404T155030Z is still later than 20180404T070416Z (20180404T064916Z + 15 min.)").
		return newError(CodeSignatureDoesNotMatch, "Signature not yet current: %s is still later than %s (%s + 15 min.)", amzDate,
			now.Add(MaxSkew).Format(amzDateLayout), now.Format(amzDateLayout))
	}
	if region != defaultRegion && !IsRegionName(region) || scoped != service {
		return newError(CodeSignatureDoesNotMatch, "Credential should be scoped to a valid region and service: %s, %s.", defaultRegion, service)
	}

	sum := sha256.Sum256([]byte(canonicalRequest(r, body, signedHeaders)))
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + strings.Join(scope[1:], "/") + "\n" + hex.EncodeToString(sum[:])
	k := hmacSHA256([]byte("AWS4"+key), date)
	for _, part := range []string{region, scoped, "aws4_request"} {
		k = hmacSHA256(k, part)
	}
	want := hex.EncodeToString(hmacSHA256(k, toSign))
	if !hmac.Equal([]byte(want), []byte(signature)) {
		return newError(CodeSignatureDoesNotMatch, "The request signature we calculated does not match the signature "+
			"you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.")
	}
	return nil
}

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

// canonicalRequest builds the SigV4 canonical request.
func canonicalRequest(r *http.Request, body []byte, signedHeaders string) string {
	var b strings.Builder
	b.WriteString(r.Method)
	b.WriteByte('\n')
	path := r.URL.EscapedPath()
	if path == "" {
		path = "/"
	}
	b.WriteString(uriEncode(path, true))
	b.WriteByte('\n')

	var query []string
	for k, vs := range r.URL.Query() {
		if k == "X-Amz-Signature" {
			continue
		}
		for _, v := range vs {
			query = append(query, uriEncode(k, false)+"="+uriEncode(v, false))
		}
	}
	slices.Sort(query)
	b.WriteString(strings.Join(query, "&"))
	b.WriteByte('\n')

	for _, h := range strings.Split(signedHeaders, ";") {
		b.WriteString(h)
		b.WriteByte(':')
		switch h {
		case "host":
			b.WriteString(r.Host)
		case "content-length":
			b.WriteString(strconv.Itoa(len(body)))
		default:
			for i, v := range r.Header.Values(h) {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(strings.Join(strings.Fields(v), " "))
			}
		}
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(signedHeaders)
	b.WriteByte('\n')
	// A payload hash in X-Amz-Content-Sha256 is not trusted: the body's own hash must match what was signed.
	if h := r.Header.Get("X-Amz-Content-Sha256"); h == "UNSIGNED-PAYLOAD" {
		b.WriteString(h)
	} else {
		sum := sha256.Sum256(body)
		b.WriteString(hex.EncodeToString(sum[:]))
	}
	return b.String()
}

// uriEncode percent-encodes every byte but the unreserved characters (and '/' when slash is set), as SigV4
// wants.
func uriEncode(s string, slash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
			c == '-' || c == '_' || c == '.' || c == '~' || c == '/' && slash {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&0xF])
	}
	return b.String()
}

// Scope returns the access key id, region and service of the request's SigV4 credential scope (the
// Credential of the Authorization header, or a presigned request's X-Amz-Credential), "" for those it has
// not.
func Scope(r *http.Request) (keyID, region, service string) {
	cred := ""
	if auth := r.Header.Get("Authorization"); auth != "" {
		i := strings.Index(auth, "Credential=")
		if i < 0 {
			return "", "", ""
		}
		cred = auth[i+len("Credential="):]
		if j := strings.IndexAny(cred, ", "); j >= 0 {
			cred = cred[:j]
		}
	} else if strings.Contains(r.URL.RawQuery, "X-Amz-Credential=") {
		cred = r.URL.Query().Get("X-Amz-Credential")
	}
	keyID, rest, ok := strings.Cut(cred, "/")
	if !ok {
		return "", "", ""
	}
	_, rest, _ = strings.Cut(rest, "/") // the date
	region, rest, _ = strings.Cut(rest, "/")
	service, _, _ = strings.Cut(rest, "/")
	return keyID, region, service
}

// Namespace returns the account and region a request acts in. The region is the one of its credential
// scope when it has the form of a region name or is defaultRegion; failing that, the first label of the
// request's host that has the form of a region name ("sqs.eu-west-1.localhost", "eu-west-1.queue.localhost");
// failing that, defaultRegion. The account is the access key id of the credential scope when it is a 12-digit
// number, else defaultAccount.
func Namespace(r *http.Request, defaultAccount, defaultRegion string) (account, region string) {
	account = defaultAccount
	keyID, region, _ := Scope(r)
	if IsAccountID(keyID) {
		account = keyID
	}
	if region == defaultRegion || IsRegionName(region) {
		return account, region
	}
	return account, HostRegion(r.Host, defaultRegion)
}

// HostRegion returns the first label of host that has the form of a region name, or defaultRegion.
func HostRegion(host, defaultRegion string) string {
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
		host = host[:i] // the port
	}
	for host != "" {
		label, rest, _ := strings.Cut(host, ".")
		if IsRegionName(label) {
			return label
		}
		host = rest
	}
	return defaultRegion
}

// IsRegionName reports whether v has the form of an AWS region name: lower-case words joined by hyphens,
// the first of two letters, the last a number ("us-east-1", "eu-central-2", "us-gov-west-1").
func IsRegionName(v string) bool {
	if len(v) < 6 || v[0] < 'a' || v[0] > 'z' || v[1] < 'a' || v[1] > 'z' || v[2] != '-' {
		return false
	}
	words, digits := 1, 0 // words of letters so far, and digits after the last hyphen
	for i := 3; i < len(v); i++ {
		switch c := v[i]; {
		case c == '-':
			if digits > 0 || v[i-1] == '-' {
				return false
			}
			words++
		case 'a' <= c && c <= 'z':
			if digits > 0 {
				return false
			}
		case '0' <= c && c <= '9':
			if digits == 0 && v[i-1] != '-' {
				return false
			}
			digits++
		default:
			return false
		}
	}
	return words >= 2 && digits > 0
}

// IsAccountID reports whether v is an AWS account id: 12 decimal digits.
func IsAccountID(v string) bool {
	if len(v) != 12 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

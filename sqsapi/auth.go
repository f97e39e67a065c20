package sqsapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// AWS Signature Version 4, checked when the server has WithSignatureVerification.

// maxSkew is how far a request's X-Amz-Date may be from the real clock.
const maxSkew = 15 * time.Minute

// amzDateFormat is the layout of X-Amz-Date.
const amzDateFormat = "20060102T150405Z"

// verify checks the SigV4 signature in the request's Authorization header against its body.
func (s *Server) verify(r *http.Request, body []byte) error {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return newError(codeMissingToken, "Request is missing Authentication Token")
	}
	algorithm, params, _ := strings.Cut(auth, " ")
	if algorithm != "AWS4-HMAC-SHA256" {
		return newError(codeIncompleteSignature, "Unsupported AWS 'algorithm': '%s'.", algorithm)
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
		return newError(codeIncompleteSignature, "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters.")
	}
	keyID, date, region, service := scope[0], scope[1], scope[2], scope[3]
	secret, ok := s.secret(keyID)
	if !ok {
		return newError(codeInvalidClientTokenID, "The security token included in the request is invalid.")
	}
	amzDate := r.Header.Get("X-Amz-Date")
	t, err := time.Parse(amzDateFormat, amzDate)
	if err != nil || !strings.HasPrefix(amzDate, date) {
		return newError(codeIncompleteSignature, "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.")
	}
	now := time.Now().UTC()
	switch d := now.Sub(t); {
	case d > maxSkew:
		return newError(codeSignatureDoesNotMatch, "Signature expired: %s is now earlier than %s (%s - 15 min.)", amzDate,
			now.Add(-maxSkew).Format(amzDateFormat), now.Format(amzDateFormat))
	case d < -maxSkew:
		// AWS's words for a date ahead of its clock (recorded, e.g. "Signature not yet current:
		// 20180404T155030Z is still later than 20180404T070416Z (20180404T064916Z + 15 min.)").
		return newError(codeSignatureDoesNotMatch, "Signature not yet current: %s is still later than %s (%s + 15 min.)", amzDate,
			now.Add(maxSkew).Format(amzDateFormat), now.Format(amzDateFormat))
	}
	// Any region will do: it is the region the request acts in (requestNS).
	if region != s.region && !isRegionName(region) || service != "sqs" {
		return newError(codeSignatureDoesNotMatch, "Credential should be scoped to a valid region and service: %s, sqs.", s.region)
	}

	sum := sha256.Sum256([]byte(canonicalRequest(r, body, signedHeaders)))
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + strings.Join(scope[1:], "/") + "\n" + hex.EncodeToString(sum[:])
	key := hmacSHA256([]byte("AWS4"+secret), date)
	for _, part := range []string{region, service, "aws4_request"} {
		key = hmacSHA256(key, part)
	}
	want := hex.EncodeToString(hmacSHA256(key, toSign))
	if !hmac.Equal([]byte(want), []byte(signature)) {
		return newError(codeSignatureDoesNotMatch, "The request signature we calculated does not match the signature "+
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

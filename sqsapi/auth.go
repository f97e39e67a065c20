package sqsapi

import (
	"net/http"

	"github.com/fifoq/fifoq/internal/sigv4"
)

// AWS Signature Version 4, checked when the server has WithSignatureVerification, by package sigv4, which
// package snsapi shares. Any region will do: it is the region the request acts in (requestNS).

// verify checks the SigV4 signature in the request's Authorization header against its body.
func (s *Server) verify(r *http.Request, body []byte) error {
	if err := sigv4.Verify(r, body, s.secret, s.region, "sqs"); err != nil {
		return newError(err.Code, "%s", err.Message)
	}
	return nil
}

package topic

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"
)

// An Envelope is SNS's JSON notification: the body a queue receives from a topic without raw delivery. A
// standard topic's envelope has the signature fields; a FIFO topic's has a SequenceNumber instead, and no
// signature, as on SNS. Parse one from a queue message's body with [ParseEnvelope].
type Envelope struct {
	Type              string                       `json:"Type"`                        // "Notification"
	MessageID         string                       `json:"MessageId"`                   // the id Publish returned
	SequenceNumber    string                       `json:"SequenceNumber,omitempty"`    // FIFO topics
	TopicARN          string                       `json:"TopicArn"`                    // the topic's ARN
	Subject           string                       `json:"Subject,omitempty"`           // the published Subject, if any
	Message           string                       `json:"Message"`                     // the published message
	Timestamp         string                       `json:"Timestamp"`                   // when it was published: 2006-01-02T15:04:05.000Z, UTC
	SignatureVersion  string                       `json:"SignatureVersion,omitempty"`  // "1" or "2"; standard topics
	Signature         string                       `json:"Signature,omitempty"`         // base64, over StringToSign; standard topics
	SigningCertURL    string                       `json:"SigningCertURL,omitempty"`    // the certificate that verifies Signature
	UnsubscribeURL    string                       `json:"UnsubscribeURL"`              // unsubscribes the subscription that delivered it
	MessageAttributes map[string]EnvelopeAttribute `json:"MessageAttributes,omitempty"` // the message attributes
}

// An EnvelopeAttribute is a message attribute as an envelope carries it.
type EnvelopeAttribute struct {
	Type  string `json:"Type"`  // the attribute's DataType
	Value string `json:"Value"` // its value; base64 for a Binary attribute
}

// ParseEnvelope decodes an envelope from the body of a queue message a topic delivered.
func ParseEnvelope(body string) (Envelope, error) {
	var e Envelope
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		return Envelope{}, fmt.Errorf("fifoq: not an SNS envelope: %w", err)
	}
	if e.Type == "" || e.MessageID == "" || e.TopicARN == "" {
		return Envelope{}, errors.New("fifoq: not an SNS envelope: no Type, MessageId or TopicArn")
	}
	return e, nil
}

// StringToSign returns SNS's canonical form of a Notification, which its Signature signs: the names and
// values of Message, MessageId, Subject (when there is one), Timestamp, TopicArn and Type, each followed by
// a newline, in that (byte) order.
func (e *Envelope) StringToSign() string {
	var b []byte
	add := func(name, value string) {
		b = append(b, name...)
		b = append(b, '\n')
		b = append(b, value...)
		b = append(b, '\n')
	}
	add("Message", e.Message)
	add("MessageId", e.MessageID)
	if e.Subject != "" {
		add("Subject", e.Subject)
	}
	add("Timestamp", e.Timestamp)
	add("TopicArn", e.TopicARN)
	add("Type", e.Type)
	return string(b)
}

// Verify checks e's Signature against pub, the public key of the certificate at its SigningCertURL: with
// SignatureVersion "1" an RSA PKCS #1 v1.5 signature of the SHA-1 of StringToSign, with "2" of its SHA-256.
func (e *Envelope) Verify(pub *rsa.PublicKey) error {
	h, digest, err := signatureHash(e.SignatureVersion, []byte(e.StringToSign()))
	if err != nil {
		return err
	}
	sig, err := base64.StdEncoding.DecodeString(e.Signature)
	if err != nil {
		return fmt.Errorf("fifoq: signature is not base64: %w", err)
	}
	if err := rsa.VerifyPKCS1v15(pub, h, digest, sig); err != nil {
		return fmt.Errorf("fifoq: bad envelope signature: %w", err)
	}
	return nil
}

// A Signer signs a standard topic's envelopes ([WithSigner]). It must be safe for concurrent use.
type Signer interface {
	// Sign returns the Signature, base64, of an envelope's StringToSign for the signature version, "1"
	// (SHA1withRSA) or "2" (SHA256withRSA).
	Sign(stringToSign []byte, signatureVersion string) (string, error)
	// SigningCertURL returns the URL of the certificate whose key verifies Sign's signatures.
	SigningCertURL() string
}

// An RSASigner signs envelopes as SNS does, with an RSA key: PKCS #1 v1.5 over the SHA-1 (signature version 1)
// or SHA-256 (version 2) of the string to sign. Serve the certificate of Key at CertURL.
type RSASigner struct {
	Key     *rsa.PrivateKey // the signing key
	CertURL string          // the SigningCertURL of the envelopes
}

// Sign signs stringToSign with s.Key.
func (s RSASigner) Sign(stringToSign []byte, signatureVersion string) (string, error) {
	h, digest, err := signatureHash(signatureVersion, stringToSign)
	if err != nil {
		return "", err
	}
	sig, err := rsa.SignPKCS1v15(rand.Reader, s.Key, h, digest)
	if err != nil {
		return "", fmt.Errorf("fifoq: signing the envelope: %w", err)
	}
	return base64.StdEncoding.EncodeToString(sig), nil
}

// SigningCertURL returns s.CertURL.
func (s RSASigner) SigningCertURL() string { return s.CertURL }

// signatureHash hashes b as signature version v says.
func signatureHash(v string, b []byte) (crypto.Hash, []byte, error) {
	switch v {
	case "1":
		sum := sha1.Sum(b)
		return crypto.SHA1, sum[:], nil
	case "2":
		sum := sha256.Sum256(b)
		return crypto.SHA256, sum[:], nil
	}
	return 0, nil, fmt.Errorf("fifoq: signature version %q, want 1 or 2", v)
}

// envelope returns the envelope subscription s delivers for p, signed if the topic has a signer; the error
// is the signer's, and the envelope is then unsigned. The envelope shares its MessageAttributes with p's
// other envelopes: it is only read.
func (t *Topic) envelope(s *Subscription, p *publication) (Envelope, error) {
	if p.env == nil {
		e, err := t.sharedEnvelope(p)
		p.env, p.envErr = &e, err
	}
	e := *p.env
	e.UnsubscribeURL = *p.out.endpoint + "/?Action=Unsubscribe&SubscriptionArn=" + s.arn
	return e, p.envErr
}

// sharedEnvelope returns the envelope of p but for its UnsubscribeURL, which the signature does not cover
// (see StringToSign), signed if the topic has a signer: one signature for every subscription. The error is
// the signer's, and the envelope is then unsigned.
func (t *Topic) sharedEnvelope(p *publication) (Envelope, error) {
	e := Envelope{
		Type:           "Notification",
		MessageID:      p.messageID,
		SequenceNumber: p.seq,
		TopicARN:       t.arn,
		Subject:        p.msg.Subject,
		Message:        p.content,
		Timestamp:      p.timestamp,
	}
	if len(p.msg.Attributes) > 0 {
		e.MessageAttributes = make(map[string]EnvelopeAttribute, len(p.msg.Attributes))
		for name, a := range p.msg.Attributes {
			v := a.StringValue
			if a.BinaryValue != nil {
				v = base64.StdEncoding.EncodeToString(a.BinaryValue)
			}
			e.MessageAttributes[name] = EnvelopeAttribute{Type: a.DataType, Value: v}
		}
	}
	if t.fifo {
		return e, nil
	}
	e.SignatureVersion = t.Attributes().SignatureVersion
	if e.SignatureVersion == "" {
		e.SignatureVersion = "1"
	}
	signer := *p.out.signer
	if signer == nil {
		return e, nil
	}
	sig, err := signer.Sign([]byte(e.StringToSign()), e.SignatureVersion)
	if err != nil {
		return e, err
	}
	e.Signature, e.SigningCertURL = sig, signer.SigningCertURL()
	return e, nil
}

// marshal returns e as SNS writes it: two-space indentation, " : " between a name and its value, the fields
// in SNS's order, the attributes one a line, sorted by name, and strings escaped as Java's Jackson escapes
// them (quote, backslash and control characters only). Signature fields are written whenever
// SignatureVersion is set, empty or not, as SNS always writes them on a standard topic.
func (e *Envelope) marshal() []byte {
	b := make([]byte, 0, 512+len(e.Message))
	field := func(name, value string) {
		b = append(b, "  "...)
		b = appendJavaString(b, name)
		b = append(b, " : "...)
		b = appendJavaString(b, value)
		b = append(b, ",\n"...)
	}
	b = append(b, "{\n"...)
	field("Type", e.Type)
	field("MessageId", e.MessageID)
	if e.SequenceNumber != "" {
		field("SequenceNumber", e.SequenceNumber)
	}
	field("TopicArn", e.TopicARN)
	if e.Subject != "" {
		field("Subject", e.Subject)
	}
	field("Message", e.Message)
	field("Timestamp", e.Timestamp)
	if e.SignatureVersion != "" {
		field("SignatureVersion", e.SignatureVersion)
		field("Signature", e.Signature)
		field("SigningCertURL", e.SigningCertURL)
	}
	field("UnsubscribeURL", e.UnsubscribeURL)
	if len(e.MessageAttributes) > 0 {
		b = append(b, "  \"MessageAttributes\" : {\n"...)
		names := make([]string, 0, len(e.MessageAttributes))
		for name := range e.MessageAttributes {
			names = append(names, name)
		}
		slices.Sort(names)
		for i, name := range names {
			a := e.MessageAttributes[name]
			b = append(b, "    "...)
			b = appendJavaString(b, name)
			b = append(b, ` : {"Type":`...)
			b = appendJavaString(b, a.Type)
			b = append(b, `,"Value":`...)
			b = appendJavaString(b, a.Value)
			b = append(b, '}')
			if i < len(names)-1 {
				b = append(b, ',')
			}
			b = append(b, '\n')
		}
		b = append(b, "  },\n"...)
	}
	b = b[:len(b)-2] // the last field's comma
	b = append(b, "\n}"...)
	return b
}

// appendJavaString appends s as a JSON string the way Jackson writes it: only '"', '\\' and control
// characters are escaped.
func appendJavaString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			_, n := utf8.DecodeRuneInString(s[i:])
			b = append(b, s[i:i+n]...)
			i += n
			continue
		}
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c < 0x20:
			b = append(b, `\u00`...)
			b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
		default:
			b = append(b, c)
		}
		i++
	}
	return append(b, '"')
}

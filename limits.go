package fifoq

import (
	"bytes"
	"encoding/binary"
	"maps"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The SQS limits (spec §7, 1.2, 1.5, 4.1, 5.1).
const (
	maxVisibilityTimeout = 12 * time.Hour
	maxDelay             = 15 * time.Minute
	minRetention         = time.Minute
	maxRetention         = 14 * 24 * time.Hour
	maxWaitTime          = 20 * time.Second
	minMessageSize       = 1 << 10
	maxMessageSize       = 1 << 20 // also the limit of one SendBatch
	maxBatchEntries      = 10
	maxAttributes        = 10
	maxAttributeName     = 256
	maxAttributeType     = 256
	maxIDLength          = 128 // group, deduplication and receive attempt ids
	maxQueueName         = 80
	dedupInterval        = 5 * time.Minute // also the life of a receive request attempt id
	purgeInterval        = 60 * time.Second
)

// validateQueueName checks 7.3.1: 1..80 characters of [A-Za-z0-9_-], ".fifo" included for FIFO queues.
func validateQueueName(name string) error {
	base := strings.TrimSuffix(name, ".fifo")
	if len(name) > maxQueueName || base == "" {
		return reject(ErrInvalidQueueName, "%q has %d characters, want 1..%d", name, len(name), maxQueueName)
	}
	for i := 0; i < len(base); i++ {
		if c := base[i]; !isWordChar(c) && c != '-' {
			return reject(ErrInvalidQueueName, "%q: only alphanumerics, hyphens and underscores, and a final .fifo", name)
		}
	}
	return nil
}

func isWordChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// validateID checks a group, deduplication or receive attempt id: 1..128 characters, alphanumeric or
// punctuation (2.3, 3.2, 2.15.1), which is ASCII '!' to '~'.
func validateID(s string, sentinel *Error) error {
	if s == "" || len(s) > maxIDLength {
		return reject(sentinel, "%d characters, want 1..%d", len(s), maxIDLength)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '!' || s[i] > '~' {
			return reject(sentinel, "%q: only alphanumeric and punctuation characters", s)
		}
	}
	return nil
}

// validChars reports whether s holds only the characters SQS allows in a body (7.1.1):
// #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF, in valid UTF-8.
func validChars(s string) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	for i := 0; i < len(s); {
		// Fast path: 8 bytes of printable ASCII at a time (no byte below 0x20 or above 0x7F).
		if i+8 <= len(s) {
			x := binary.LittleEndian.Uint64([]byte(s[i : i+8]))
			if (x|(x-0x20*ones))&highs == 0 {
				i += 8
				continue
			}
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || r > 0xD7FF && r < 0xE000 || r == 0xFFFE || r == 0xFFFF {
			return false
		}
		i += n
	}
	return true
}

// validateMessage checks everything about m that does not depend on the other entries of its batch, its
// size (body plus attributes) included (7.1). The FIFO requirements of a group and a deduplication id are
// checked by requireFIFOIDs, since in a batch they fail the whole call.
func (q *Queue) validateMessage(m *Message) error {
	if m.Body == "" {
		return reject(ErrEmptyBody, "empty body")
	}
	if !validChars(m.Body) {
		return reject(ErrInvalidMessageContents, "body")
	}
	size := len(m.Body)
	if len(m.Attributes) > maxAttributes {
		return reject(ErrInvalidMessageAttribute, "%d attributes, at most %d", len(m.Attributes), maxAttributes)
	}
	for name, a := range m.Attributes {
		n, err := validateAttribute(name, a)
		if err != nil {
			return err
		}
		size += n
	}
	if maxSize := q.conf().maxSize; size > maxSize {
		return reject(ErrMessageTooLarge, "%d bytes, message must be shorter than %d bytes", size, maxSize)
	}
	if m.GroupID != "" {
		if err := validateID(m.GroupID, ErrInvalidGroupID); err != nil {
			return err
		}
	}
	if m.DeduplicationID != "" {
		if !q.fifo {
			return reject(ErrInvalidDeduplicationID, "only FIFO queues take a deduplication id")
		}
		if err := validateID(m.DeduplicationID, ErrInvalidDeduplicationID); err != nil {
			return err
		}
	}
	switch {
	case m.Delay == ExplicitZero:
	case m.Delay < 0 || m.Delay > maxDelay:
		return reject(ErrInvalidDelay, "%v, want 0..%v", m.Delay, maxDelay)
	case m.Delay > 0 && q.fifo:
		return reject(ErrInvalidDelay, "%v: FIFO queues take no per-message delay", m.Delay)
	}
	return nil
}

// requireFIFOIDs checks 2.2 and 3.1 on a FIFO queue: a group id, and a deduplication id unless the queue
// derives one from the body.
func (q *Queue) requireFIFOIDs(m *Message) error {
	if !q.fifo {
		return nil
	}
	if m.GroupID == "" {
		return reject(ErrMissingGroupID, "FIFO queue %s", q.name)
	}
	if m.DeduplicationID == "" && !q.conf().contentDedup {
		return reject(ErrMissingDeduplicationID, "FIFO queue %s", q.name)
	}
	return nil
}

// validateAttribute checks one message attribute (7.1.3) and returns its size: name, type and value.
func validateAttribute(name string, a Attribute) (int, error) {
	if err := validateAttributeName(name); err != nil {
		return 0, err
	}
	base, custom, _ := strings.Cut(a.DataType, ".")
	if len(a.DataType) > maxAttributeType || strings.Contains(a.DataType, ".") && (custom == "" || !validChars(custom)) {
		return 0, reject(ErrInvalidMessageAttribute, "attribute %q: bad data type %q", name, a.DataType)
	}
	switch base {
	case "String", "Number":
		if a.StringValue == "" || a.BinaryValue != nil {
			return 0, reject(ErrInvalidMessageAttribute, "attribute %q must contain a non-empty value of type %q (StringValue)", name, base)
		}
		if !validChars(a.StringValue) {
			return 0, reject(ErrInvalidMessageAttribute, "attribute %q: the value has a character SQS does not allow "+
				"(the characters of a message body)", name)
		}
		if base == "Number" && !validNumber(a.StringValue) {
			return 0, reject(ErrInvalidMessageAttribute, "attribute %q: %q is not a number of at most 38 digits in 10^-128..10^126", name, a.StringValue)
		}
		return len(name) + len(a.DataType) + len(a.StringValue), nil
	case "Binary":
		if len(a.BinaryValue) == 0 || a.StringValue != "" {
			return 0, reject(ErrInvalidMessageAttribute, "attribute %q must contain a non-empty value of type \"Binary\" (BinaryValue)", name)
		}
		return len(name) + len(a.DataType) + len(a.BinaryValue), nil
	}
	return 0, reject(ErrInvalidMessageAttribute, "attribute %q: data type %q is not String, Number or Binary", name, a.DataType)
}

// validateAttributeName checks a message attribute name: 1..256 characters, each a letter or digit (in
// any script: SQS takes "attr.1øßä") or one of '_', '-' and '.', in valid UTF-8; no leading or trailing
// period, no two periods in a row, and no AWS. or Amazon. prefix in any case.
func validateAttributeName(name string) error {
	if name == "" || len(name) > maxAttributeName && utf8.RuneCountInString(name) > maxAttributeName {
		return reject(ErrInvalidMessageAttribute, "attribute name %q has %d characters, want 1..%d", name,
			utf8.RuneCountInString(name), maxAttributeName)
	}
	for i := 0; i < len(name); {
		if c := name[i]; c < utf8.RuneSelf {
			if !isWordChar(c) && c != '-' && c != '.' {
				return reject(ErrInvalidMessageAttribute, "attribute name %q: only letters, digits, '_', '-' and '.'", name)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(name[i:])
		if r == utf8.RuneError && n == 1 || !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return reject(ErrInvalidMessageAttribute, "attribute name %q: only letters, digits, '_', '-' and '.'", name)
		}
		i += n
	}
	switch {
	case hasPrefixFold(name, "aws.") || hasPrefixFold(name, "amazon."):
		return reject(ErrInvalidMessageAttribute, "attribute name %q: the AWS. and Amazon. prefixes are reserved", name)
	case name[0] == '.' || name[len(name)-1] == '.' || strings.Contains(name, ".."):
		return reject(ErrInvalidMessageAttribute, "attribute name %q: no leading, trailing or doubled period", name)
	}
	return nil
}

// hasPrefixFold reports whether s begins with prefix, an ASCII string, in any case.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// validNumber reports whether s is a decimal number SQS accepts as a Number attribute (7.1.3): an optional
// sign, digits with an optional fraction and exponent, at most 38 significant digits, and a magnitude in
// 10^-128..10^126.
func validNumber(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	mantissa, exponent, hasExp := strings.Cut(strings.ToLower(s), "e")
	intPart, fracPart, _ := strings.Cut(mantissa, ".")
	digits := intPart + fracPart
	if digits == "" || !allDigits(digits) {
		return false
	}
	exp := 0
	if hasExp {
		e := exponent
		if e != "" && (e[0] == '+' || e[0] == '-') {
			e = e[1:]
		}
		if e == "" || len(e) > 4 || !allDigits(e) {
			return false
		}
		for i := 0; i < len(e); i++ {
			exp = exp*10 + int(e[i]-'0')
		}
		if strings.HasPrefix(exponent, "-") {
			exp = -exp
		}
	}
	first := strings.IndexFunc(digits, func(r rune) bool { return r != '0' })
	if first < 0 {
		return true // zero
	}
	if len(strings.TrimRight(digits[first:], "0")) > 38 {
		return false
	}
	magnitude := len(intPart) - 1 - first + exp // the power of ten of the first significant digit
	return magnitude >= -128 && magnitude <= 126
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// cloneAttributes copies caller-owned attributes, values included.
func cloneAttributes(in map[string]Attribute) map[string]Attribute {
	if in == nil {
		return nil
	}
	out := maps.Clone(in)
	for k, a := range out {
		if a.BinaryValue != nil {
			a.BinaryValue = bytes.Clone(a.BinaryValue)
			out[k] = a
		}
	}
	return out
}

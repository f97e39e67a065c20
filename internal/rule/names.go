package rule

import (
	"encoding/binary"
	"strconv"
	"strings"
	"unicode/utf8"
)

// QueueName checks a queue name: 1..80 characters of [A-Za-z0-9_-], ".fifo" included for FIFO queues.
func QueueName(name string) error {
	base := strings.TrimSuffix(name, ".fifo")
	if len(name) > MaxQueueName || base == "" {
		return Reject(ErrInvalidQueueName, "%q has %d characters, want 1..%d", name, len(name), MaxQueueName)
	}
	for i := 0; i < len(base); i++ {
		if c := base[i]; !IsWordChar(c) && c != '-' {
			return Reject(ErrInvalidQueueName, "%q: only alphanumerics, hyphens and underscores, and a final .fifo", name)
		}
	}
	return nil
}

// IsWordChar reports whether c is an ASCII letter, digit or underscore.
func IsWordChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// ValidID reports whether s is a valid group, deduplication or receive attempt id, of SQS or SNS: 1..128
// characters, alphanumeric or punctuation, which is ASCII '!' to '~'.
func ValidID(s string) bool {
	if s == "" || len(s) > MaxIDLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '!' || s[i] > '~' {
			return false
		}
	}
	return true
}

// ID checks a group, deduplication or receive attempt id of SQS (see ValidID). sentinel is the rule's:
// ErrInvalidGroupID, ErrInvalidDeduplicationID or ErrInvalidAttemptID; AWS's message names the id.
func ID(s string, sentinel *Error) error {
	switch {
	case s == "" || len(s) > MaxIDLength:
		return badID(s, sentinel, "%d characters, want 1..%d", len(s), MaxIDLength)
	case !ValidID(s):
		return badID(s, sentinel, "%q: only alphanumeric and punctuation characters", s)
	}
	return nil
}

// badID is the rejection of id by the rule of sentinel, an id's rule (see ID).
func badID(id string, sentinel *Error, format string, args ...any) *Rejection {
	param := idParams[sentinel]
	return Reject(sentinel, format, args...).Says("%s", InvalidValue(id, param, param+
		" can only include alphanumeric and punctuation characters. 1 to "+strconv.Itoa(MaxIDLength)+" in length."))
}

// idParams are the SQS parameters of the ids, by the sentinel of their rule.
var idParams = map[*Error]string{
	ErrInvalidGroupID:         "MessageGroupId",
	ErrInvalidDeduplicationID: "MessageDeduplicationId",
	ErrInvalidAttemptID:       "ReceiveRequestAttemptId",
}

// ValidChars reports whether s holds only the characters SQS allows in a body (7.1.1):
// #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF, in valid UTF-8.
func ValidChars(s string) bool {
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

// HasPrefixFold reports whether s begins with prefix, an ASCII string, in any case.
func HasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// ValidNumber reports whether s is a decimal number SQS accepts as a Number attribute (7.1.3): an optional
// sign, digits with an optional fraction and exponent, at most 38 significant digits, and a magnitude in
// 10^-128..10^126.
func ValidNumber(s string) bool {
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

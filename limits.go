package fifoq

import (
	"bytes"
	"encoding/binary"
	"maps"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The SQS limits that layers above fifoq need: sqsapi sizes its buffers by them, a front end that reads
// the entries of a batch request one by one stops after MaxBatchEntries+1 of them.
const (
	// MaxBatchEntries is the most entries of a batch call ([Queue.SendBatch], [Queue.DeleteBatch],
	// [Queue.ChangeVisibilityBatch]) and the most messages one [Queue.Receive] returns (spec 7.2.1, 1.5.4).
	MaxBatchEntries = 10
	// MaxMessageAttributes is the most message attributes a message has (spec 7.1.3).
	MaxMessageAttributes = 10
	// MaxMessageSize is the largest message, body and attributes, a queue can take (spec 7.1.2): the
	// default and the maximum of [WithMaxMessageSize]. It is also the most the messages of one
	// [Queue.SendBatch] may add up to (spec 7.2.2).
	MaxMessageSize = 1 << 20
	// MaxListedMoveTasks is the most move tasks of a queue a [Catalog] keeps and lists, the most
	// ListMessageMoveTasks returns (its MaxResults).
	MaxListedMoveTasks = 10
)

// The other SQS limits (spec §7, 1.2, 1.5, 4.1, 5.1).
const (
	maxVisibilityTimeout = 12 * time.Hour
	maxDelay             = 15 * time.Minute
	minRetention         = time.Minute
	maxRetention         = 14 * 24 * time.Hour
	maxWaitTime          = 20 * time.Second
	minMessageSize       = 1 << 10
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
// punctuation (2.3, 3.2, 2.15.1), which is ASCII '!' to '~'. sentinel is the rule's: ErrInvalidGroupID,
// ErrInvalidDeduplicationID or ErrInvalidAttemptID.
func validateID(s string, sentinel *Error) error {
	if s == "" || len(s) > maxIDLength {
		return badID(s, sentinel, "%d characters, want 1..%d", len(s), maxIDLength)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '!' || s[i] > '~' {
			return badID(s, sentinel, "%q: only alphanumeric and punctuation characters", s)
		}
	}
	return nil
}

// CheckID returns an error unless id is a valid id of the kind rule checks: ErrInvalidGroupID for a message
// group id, ErrInvalidDeduplicationID for a FIFO queue's message deduplication id, ErrInvalidAttemptID for a
// receive request attempt id. An id has 1..128 characters, alphanumeric or punctuation; the error wraps
// rule, and [ErrorMessage] gives AWS's message, which names id. fifoq's types read an empty id as none, so
// Send and Receive never reject an empty one; a front end whose protocol tells an empty id given from none
// calls CheckID for the id it was given. CheckID panics for another rule.
func CheckID(id string, rule *Error) error {
	if _, ok := idParams[rule]; !ok {
		panic("fifoq: CheckID of a rule that is not an id's: " + rule.Error())
	}
	return validateID(id, rule)
}

// badID is the rejection of id by the rule of sentinel, an id's rule (see validateID).
func badID(id string, sentinel *Error, format string, args ...any) *rejection {
	param := idParams[sentinel]
	return reject(sentinel, format, args...).says("%s", invalidValue(id, param, param+
		" can only include alphanumeric and punctuation characters. 1 to "+strconv.Itoa(maxIDLength)+" in length."))
}

// idParams are the SQS parameters of the ids, by the sentinel of their rule.
var idParams = map[*Error]string{
	ErrInvalidGroupID:         "MessageGroupId",
	ErrInvalidDeduplicationID: "MessageDeduplicationId",
	ErrInvalidAttemptID:       "ReceiveRequestAttemptId",
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

// Checking a message: checkMessage, then requireFIFOIDs. SendBatch runs them apart, as SQS checks a batch:
// an entry that fails checkParams fails alone and is not looked at by the checks that fail a whole batch;
// requireFIFOIDs is one of them (2.2, 3.1); then an entry that fails checkContent fails alone.

// checkMessage checks everything about m that does not depend on the other entries of its batch, its size
// (body plus attributes) included (7.1). batch tells whether m is an entry of a SendBatch, whose AWS message
// for a message too large differs.
func (q *Queue) checkMessage(m *Message, batch bool) error {
	if err := q.checkParams(m); err != nil {
		return err
	}
	return q.checkContent(m, batch)
}

// checkParams checks the delay of m, the number of its attributes, that each has a known data type and
// a value of it, and the length of its trace header: the checks SQS makes first.
func (q *Queue) checkParams(m *Message) error {
	if m.NoDelay && m.Delay != 0 {
		return reject(ErrInvalidDelay, "%v with NoDelay, want 0", m.Delay)
	}
	if d := m.Delay; d < 0 || d > maxDelay {
		return reject(ErrInvalidDelay, "%v, want 0..%v", d, maxDelay).says("%s", invalidValue(seconds(d), "DelaySeconds",
			"DelaySeconds must be >= 0 and <= "+seconds(maxDelay)+"."))
	}
	if len(m.Attributes) > 0 { // most messages have none: no map to walk
		if err := CheckAttributeCount(len(m.Attributes)); err != nil {
			return err
		}
		for name, a := range m.Attributes {
			if err := checkAttributeValue(name, a); err != nil {
				return err
			}
		}
	}
	if m.TraceHeader == "" {
		return nil
	}
	return CheckTraceHeader(m.TraceHeader)
}

// checkContent checks the body of m, the names and values of its attributes, its size and its ids, and
// that a FIFO queue's message has no delay of its own.
func (q *Queue) checkContent(m *Message, batch bool) error {
	if m.Body == "" {
		return reject(ErrEmptyBody, "empty body")
	}
	if !validChars(m.Body) {
		return reject(ErrInvalidMessageContents, "body")
	}
	size := len(m.Body)
	if len(m.Attributes) > 0 {
		for name, a := range m.Attributes {
			n, err := validateAttribute(name, a)
			if err != nil {
				return err
			}
			size += n
		}
	}
	if maxSize := q.conf().maxSize; size > maxSize {
		verb := "are invalid"
		if batch {
			verb = "cannot be validated"
		}
		return reject(ErrMessageTooLarge, "%d bytes, message must be shorter than %d bytes", size, maxSize).says(
			"One or more parameters %s. Reason: Message must be shorter than %d bytes.", verb, maxSize)
	}
	if m.GroupID != "" {
		if err := validateID(m.GroupID, ErrInvalidGroupID); err != nil {
			return err
		}
	}
	if m.DeduplicationID != "" {
		if !q.fifo {
			// AWS's words, recorded: a batch entry's failure unframed (aws/aws-sdk-js#4216), a single
			// send's framed as an invalid value, with a final period.
			if batch {
				return reject(ErrInvalidDeduplicationID, "only FIFO queues take a deduplication id").says(
					"The request include parameter that is not valid for this queue type")
			}
			return reject(ErrInvalidDeduplicationID, "only FIFO queues take a deduplication id").says("%s", invalidValue(
				m.DeduplicationID, "MessageDeduplicationId", "The request include parameter that is not valid for this queue type."))
		}
		if err := validateID(m.DeduplicationID, ErrInvalidDeduplicationID); err != nil {
			return err
		}
	}
	if m.Delay > 0 && q.fifo {
		return reject(ErrInvalidDelay, "%v: FIFO queues take no per-message delay", m.Delay).says("%s", invalidValue(
			seconds(m.Delay), "DelaySeconds", "The request include parameter that is not valid for this queue type."))
	}
	return nil
}

// requireFIFOIDs checks 2.2 and 3.1 on a FIFO queue: a group id, and a deduplication id unless the queue
// derives one from the body.
func (q *Queue) requireFIFOIDs(m *Message) *rejection {
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

// CheckAttributeCount returns ErrInvalidMessageAttribute when a message has n attributes, more than 10
// (spec 7.1.3), and nil otherwise; [ErrorMessage] gives AWS's message, which names n. Send and SendBatch
// check it themselves; a front end that reads at most 11 attributes of a message that has more calls it
// with the number it was given.
func CheckAttributeCount(n int) error {
	if n > MaxMessageAttributes {
		return reject(ErrInvalidMessageAttribute, "%d attributes, at most %d", n, MaxMessageAttributes).says(
			"Number of message attributes [%d] exceeds the allowed maximum [%d].", n, MaxMessageAttributes)
	}
	return nil
}

// checkAttributeValue checks that a message attribute has a data type SQS knows, and a value of it
// (7.1.3); validateAttribute checks the rest.
func checkAttributeValue(name string, a Attribute) error {
	base, _, _ := strings.Cut(a.DataType, ".")
	switch base {
	case "":
		return reject(ErrInvalidMessageAttribute, "attribute %q: data type %q is not String, Number or Binary", name, a.DataType).says(
			"The message attribute '%s' must contain non-empty message attribute type.", name)
	case "String", "Number":
		if a.StringValue == "" {
			return reject(ErrInvalidMessageAttribute, "attribute %q must contain a non-empty value of type %q (StringValue)", name, base).says(
				"Message (user) attribute '%s' must contain a non-empty value of type '%s'.", name, base)
		}
	case "Binary":
		if len(a.BinaryValue) == 0 {
			return reject(ErrInvalidMessageAttribute, "attribute %q must contain a non-empty value of type \"Binary\" (BinaryValue)", name).says(
				"Message (user) attribute '%s' must contain a non-empty value of type 'Binary'.", name)
		}
	default:
		return reject(ErrInvalidMessageAttribute, "attribute %q: data type %q is not String, Number or Binary", name, a.DataType).says(
			"The type of message (user) attribute '%s' is invalid. You must use only the following supported type "+
				"prefixes: Binary, Number, String.", name)
	}
	return nil
}

// validateAttribute checks one message attribute (7.1.3), whose data type and value checkAttributeValue
// checked, and returns its size: name, type and value.
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

// checkBatchLen checks the number of entries of a batch call (7.2.1); entry names them in AWS's message
// about an empty batch, as the SQS action calls its entries.
func checkBatchLen(n int, entry string) error {
	if n == 0 {
		return reject(ErrEmptyBatch, "no entries").says("There should be at least one %s in the request.", entry)
	}
	return CheckBatchLen(n)
}

// CheckBatchLen returns ErrTooManyEntries when a batch call has n entries, more than [MaxBatchEntries], and
// nil otherwise; [ErrorMessage] gives AWS's message for it, which names n. The batch methods check it
// themselves (and return ErrEmptyBatch for no entries), so a caller of theirs needs it only to check the
// number first: a front end that reads at most MaxBatchEntries+1 entries of a longer batch request, or
// checks something of its own on each entry that SQS checks after their number.
func CheckBatchLen(n int) error {
	if n > MaxBatchEntries {
		return reject(ErrTooManyEntries, "maximum number of entries per request are %d, you have sent %d", MaxBatchEntries, n).says(
			"Maximum number of entries per request are %d. You have sent %d.", MaxBatchEntries, n)
	}
	return nil
}

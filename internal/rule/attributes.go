package rule

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CheckAttributeCount returns ErrInvalidMessageAttribute when a message has n attributes, more than 10
// (spec 7.1.3), and nil otherwise; [ErrorMessage] gives AWS's message, which names n. Send and SendBatch
// check it themselves; a front end that reads at most 11 attributes of a message that has more calls it
// with the number it was given.
func CheckAttributeCount(n int) error {
	if n > MaxMessageAttributes {
		return Reject(ErrInvalidMessageAttribute, "%d attributes, at most %d", n, MaxMessageAttributes).Says(
			"Number of message attributes [%d] exceeds the allowed maximum [%d].", n, MaxMessageAttributes)
	}
	return nil
}

// AttributeValue checks that a message attribute has a data type SQS knows, and a value of it
// (7.1.3); MessageAttribute checks the rest.
func AttributeValue(name, dataType, sv string, bv []byte) error {
	base, _, _ := strings.Cut(dataType, ".")
	switch base {
	case "":
		return Reject(ErrInvalidMessageAttribute, "attribute %q: data type %q is not String, Number or Binary", name, dataType).Says(
			"The message attribute '%s' must contain non-empty message attribute type.", name)
	case "String", "Number":
		if sv == "" {
			return Reject(ErrInvalidMessageAttribute, "attribute %q must contain a non-empty value of type %q (StringValue)", name, base).Says(
				"Message (user) attribute '%s' must contain a non-empty value of type '%s'.", name, base)
		}
	case "Binary":
		if len(bv) == 0 {
			return Reject(ErrInvalidMessageAttribute, "attribute %q must contain a non-empty value of type \"Binary\" (BinaryValue)", name).Says(
				"Message (user) attribute '%s' must contain a non-empty value of type 'Binary'.", name)
		}
	default:
		return Reject(ErrInvalidMessageAttribute, "attribute %q: data type %q is not String, Number or Binary", name, dataType).Says(
			"The type of message (user) attribute '%s' is invalid. You must use only the following supported type "+
				"prefixes: Binary, Number, String.", name)
	}
	return nil
}

// MessageAttribute checks one message attribute (7.1.3), whose data type and value AttributeValue
// checked, and returns its size: name, type and value.
func MessageAttribute(name, dataType, sv string, bv []byte) (int, error) {
	if err := attributeName(name); err != nil {
		return 0, err
	}
	base, custom, _ := strings.Cut(dataType, ".")
	if len(dataType) > maxAttributeType || strings.Contains(dataType, ".") && (custom == "" || !ValidChars(custom)) {
		return 0, Reject(ErrInvalidMessageAttribute, "attribute %q: bad data type %q", name, dataType)
	}
	switch base {
	case "String", "Number":
		if sv == "" || bv != nil {
			return 0, Reject(ErrInvalidMessageAttribute, "attribute %q must contain a non-empty value of type %q (StringValue)", name, base)
		}
		if !ValidChars(sv) {
			return 0, Reject(ErrInvalidMessageAttribute, "attribute %q: the value has a character SQS does not allow "+
				"(the characters of a message body)", name)
		}
		if base == "Number" && !ValidNumber(sv) {
			return 0, Reject(ErrInvalidMessageAttribute, "attribute %q: %q is not a number of at most 38 digits in 10^-128..10^126", name, sv)
		}
		return len(name) + len(dataType) + len(sv), nil
	case "Binary":
		if len(bv) == 0 || sv != "" {
			return 0, Reject(ErrInvalidMessageAttribute, "attribute %q must contain a non-empty value of type \"Binary\" (BinaryValue)", name)
		}
		return len(name) + len(dataType) + len(bv), nil
	}
	return 0, Reject(ErrInvalidMessageAttribute, "attribute %q: data type %q is not String, Number or Binary", name, dataType)
}

// attributeName checks a message attribute name: 1..256 characters, each a letter or digit (in
// any script: SQS takes "attr.1øßä") or one of '_', '-' and '.', in valid UTF-8; no leading or trailing
// period, no two periods in a row, and no AWS. or Amazon. prefix in any case.
func attributeName(name string) error {
	if name == "" || len(name) > maxAttributeName && utf8.RuneCountInString(name) > maxAttributeName {
		return Reject(ErrInvalidMessageAttribute, "attribute name %q has %d characters, want 1..%d", name,
			utf8.RuneCountInString(name), maxAttributeName)
	}
	for i := 0; i < len(name); {
		if c := name[i]; c < utf8.RuneSelf {
			if !IsWordChar(c) && c != '-' && c != '.' {
				return Reject(ErrInvalidMessageAttribute, "attribute name %q: only letters, digits, '_', '-' and '.'", name)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(name[i:])
		if r == utf8.RuneError && n == 1 || !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return Reject(ErrInvalidMessageAttribute, "attribute name %q: only letters, digits, '_', '-' and '.'", name)
		}
		i += n
	}
	switch {
	case HasPrefixFold(name, "aws.") || HasPrefixFold(name, "amazon."):
		return Reject(ErrInvalidMessageAttribute, "attribute name %q: the AWS. and Amazon. prefixes are reserved", name)
	case name[0] == '.' || name[len(name)-1] == '.' || strings.Contains(name, ".."):
		return Reject(ErrInvalidMessageAttribute, "attribute name %q: no leading, trailing or doubled period", name)
	}
	return nil
}

// BatchLen checks the number of entries of a batch call (7.2.1); entry names them in AWS's message
// about an empty batch, as the SQS action calls its entries.
func BatchLen(n int, entry string) error {
	if n == 0 {
		return Reject(ErrEmptyBatch, "no entries").Says("There should be at least one %s in the request.", entry)
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
		return Reject(ErrTooManyEntries, "maximum number of entries per request are %d, you have sent %d", MaxBatchEntries, n).Says(
			"Maximum number of entries per request are %d. You have sent %d.", MaxBatchEntries, n)
	}
	return nil
}

// MaxTraceHeaderLength is the longest [Message.TraceHeader], in bytes: an AWS X-Ray trace header takes about
// 100.
const MaxTraceHeaderLength = 1024

// CheckTraceHeader returns the error [Queue.Send] returns for a message whose TraceHeader is h: nil for ""
// (none) and for a header of up to [MaxTraceHeaderLength] bytes, and ErrInvalidMessageAttribute for a longer
// one, with the message SQS sends for an AWSTraceHeader system attribute that long. A front end calls it as
// it reads a message's system attributes, to refuse a bad one in the order SQS does.
func CheckTraceHeader(h string) error {
	if len(h) > MaxTraceHeaderLength {
		return Reject(ErrInvalidMessageAttribute, "trace header of %d bytes, want at most %d", len(h), MaxTraceHeaderLength).Says(
			"Message system attribute 'AWSTraceHeader' must be at most %s bytes long.", strconv.Itoa(MaxTraceHeaderLength))
	}
	return nil
}

// CheckMaxMessages returns ErrInvalidMaxMessages unless a receive may ask for n messages: 1..[MaxBatchEntries].
// [ReceiveOptions].MaxMessages reads 0 as 1, so [Queue.Receive] never rejects a 0; a front end whose
// protocol tells a 0 given from none calls CheckMaxMessages for the number it was given. [ErrorMessage]
// gives AWS's message, which names n.
func CheckMaxMessages(n int) error {
	if n < 1 || n > MaxBatchEntries {
		return Reject(ErrInvalidMaxMessages, "%d, must be between 1 and %d", n, MaxBatchEntries).Says("%s",
			InvalidValue(n, "MaxNumberOfMessages", "Must be between 1 and "+strconv.Itoa(MaxBatchEntries)+", if provided."))
	}
	return nil
}

// MaxMoveRate is the highest rate of a move task, in messages a second (spec 6.9.2).
const MaxMoveRate = 500

// CheckMoveRate returns ErrInvalidMoveTask unless a move task may move rate messages a second: 1..500.
// [Queue.StartMoveTask] reads a rate of 0 as "as fast as possible"; a front end whose protocol tells a 0
// given from none calls CheckMoveRate for the rate it was given. [ErrorMessage] gives AWS's message, which
// names rate.
func CheckMoveRate(rate int) error {
	if rate < 1 || rate > MaxMoveRate {
		return Reject(ErrInvalidMoveTask, "rate %d messages a second, want 1..%d", rate, MaxMoveRate).Says("%s",
			InvalidValue(rate, "MaxNumberOfMessagesPerSecond", "Must be between 1 and "+strconv.Itoa(MaxMoveRate)+"."))
	}
	return nil
}

// BadQueueAttribute rejects the setting that SQS calls attribute (ErrInvalidQueueAttribute), with SQS's
// message "Invalid value for the parameter <attribute>.".
func BadQueueAttribute(attribute, format string, args ...any) error {
	return Reject(ErrInvalidQueueAttribute, format, args...).Says("Invalid value for the parameter %s.", attribute)
}

// CheckMaxReceiveCount returns ErrInvalidRedrivePolicy unless n is a redrive policy's maxReceiveCount,
// 1..1000, with SQS's message, which names n.
func CheckMaxReceiveCount(n int) error {
	if n < 1 || n > MaxReceiveCount {
		return BadMaxReceiveCount(strconv.Itoa(n))
	}
	return nil
}

// BadMaxReceiveCount is the rejection of a redrive policy's maxReceiveCount, given as v (a number out of
// range, or a value that is none).
func BadMaxReceiveCount(v string) *Rejection {
	return Reject(ErrInvalidRedrivePolicy, "maxReceiveCount %s, want 1..%d", v, MaxReceiveCount).Says(
		"Invalid value for maxReceiveCount: %s, valid values are from 1 to %d both inclusive.", v, MaxReceiveCount)
}

// MaxRedriveSources is the most queues a redrive allow policy names.
const MaxRedriveSources = 10

// CheckRedriveSources returns ErrInvalidRedriveAllowPolicy unless a redrive allow policy names n source
// queues rightly: some, and at most 10, with the permission byQueue, and none with another; SQS's message
// names the JSON fields.
func CheckRedriveSources(byQueue bool, n int) error {
	const prefix = "Invalid value for the parameter RedriveAllowPolicy. Reason: "
	switch {
	case !byQueue && n > 0:
		return Reject(ErrInvalidRedriveAllowPolicy, "sources are allowed only with byQueue").Says(
			prefix + "sourceQueueArns is allowed only when redrivePermission is byQueue.")
	case byQueue && (n == 0 || n > MaxRedriveSources):
		return Reject(ErrInvalidRedriveAllowPolicy, "byQueue takes 1..%d source queues, not %d", MaxRedriveSources, n).Says(
			"%sbyQueue takes 1 to %d sourceQueueArns.", prefix, MaxRedriveSources)
	}
	return nil
}

// Package sqsmd5 computes the MD5 digests SQS returns beside a message: MD5OfMessageBody,
// MD5OfMessageAttributes and MD5OfMessageSystemAttributes. The AWS SDKs check them.
package sqsmd5

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strings"
	"unsafe"

	"github.com/fifoq/fifoq"
)

// HexLen is the length of a hex digest: what AppendBody and AppendAttributes append.
const HexLen = 2 * md5.Size

// Body is the hex MD5 of a message body, as SQS returns it in MD5OfMessageBody.
func Body(body string) string {
	var b [HexLen]byte
	return string(AppendBody(b[:0], body))
}

// AppendBody appends the hex MD5 of a message body (Body) to dst, allocating nothing when dst has room.
func AppendBody(dst []byte, body string) []byte {
	// The bytes of body, not a copy of them: a body can be 1 MiB, and md5.Sum only reads its input.
	sum := md5.Sum(unsafe.Slice(unsafe.StringData(body), len(body)))
	return hex.AppendEncode(dst, sum[:])
}

// Attributes is the hex MD5 SQS returns in MD5OfMessageAttributes (and, over the system attributes, in
// MD5OfMessageSystemAttributes): over the attributes sorted by name, each as its name and its data type
// (each with a 4-byte big-endian length), a transport byte (1 for String and Number, 2 for Binary) and its
// value (with a 4-byte length). SQS sends no digest for a message without attributes; callers leave it out.
func Attributes(attrs map[string]fifoq.Attribute) string {
	var b [HexLen]byte
	return string(AppendAttributes(b[:0], attrs))
}

// AppendAttributes appends the hex digest of Attributes to dst. Up to 16 attributes whose encoding fits
// 1 KiB (a message has at most 10) take no allocation besides dst's growth.
func AppendAttributes(dst []byte, attrs map[string]fifoq.Attribute) []byte {
	var nameBuf [16]string
	var dataBuf [1024]byte
	names := nameBuf[:0]
	size := 0
	for name, a := range attrs {
		names = append(names, name)
		size += 13 + len(name) + len(a.DataType) + len(a.StringValue) + len(a.BinaryValue)
	}
	slices.Sort(names)
	b := dataBuf[:0]
	if size > len(dataBuf) {
		b = make([]byte, 0, size)
	}
	field := func(b []byte, v string) []byte {
		b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
		return append(b, v...)
	}
	for _, name := range names {
		a := attrs[name]
		b = field(b, name)
		b = field(b, a.DataType)
		if IsBinary(a.DataType) {
			b = append(b, 2)
			b = binary.BigEndian.AppendUint32(b, uint32(len(a.BinaryValue)))
			b = append(b, a.BinaryValue...)
		} else {
			b = append(b, 1)
			b = field(b, a.StringValue)
		}
	}
	sum := md5.Sum(b)
	return hex.AppendEncode(dst, sum[:])
}

// IsBinary reports whether an attribute of this data type carries its value in BinaryValue: "Binary", with
// or without a custom suffix.
func IsBinary(dataType string) bool {
	return dataType == "Binary" || strings.HasPrefix(dataType, "Binary.")
}

package fifoq_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// Tests of the limits and validation rules (spec §7, 1.2.1, 1.5, 2.2-2.4, 3.1-3.2, 3.12, 4.2). Helpers are in
// delay_test.go.

// dlSendCase is one Send: accepted when want is nil, else rejected with want and nothing stored.
type dlSendCase struct {
	name string // the spec rule and what is sent
	fifo bool   // FIFO queue (with content-based deduplication unless opts says otherwise)
	opts []fifoq.Option
	msg  fifoq.Message
	want error
}

func dlRunSendCases(t *testing.T, cases []dlSendCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name, opts := "dl-limits", tc.opts
			if tc.fifo {
				name += ".fifo"
				if opts == nil {
					opts = []fifoq.Option{fifoq.WithContentBasedDeduplication()}
				}
			}
			q := dlNewQueue(t, name, opts...)
			r, err := q.Send(context.Background(), tc.msg)
			if tc.want == nil {
				require.NoError(t, err, "Send of %.80q", tc.msg.Body)
				require.NotEmpty(t, r.MessageID)
				require.Equal(t, []string{tc.msg.Body}, dlStored(q), "the message is stored")
				return
			}
			require.ErrorIs(t, err, tc.want, "Send of %.80q: got %v", tc.msg.Body, err)
			require.Equal(t, fifoq.SendResult{}, r, "a rejected send returns no result")
			require.Equal(t, fifoq.Stats{}, q.Stats(), "a rejected send stores nothing")
			require.Empty(t, dlStored(q), "a rejected send stores nothing")
		})
	}
}

// Spec 7.1.1: a body is at least one character of #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD |
// #x10000-#x10FFFF in valid UTF-8; an empty body is ErrEmptyBody, any other character
// ErrInvalidMessageContents. Each boundary of each range, alone and inside longer bodies.
func TestLimitsBodyCharacters(t *testing.T) {
	t.Parallel()
	ok := []string{"\x09", "\x0A", "\x0D", "\x20", "~", "\x7F", "\u0080", "\uD7FF", "\uE000", "\uFFFD",
		"\U00010000", "\U0010FFFF", "héllo wörld 😀", strings.Repeat("abcdefgh", 9)}
	bad := []string{"\x00", "\x08", "\x0B", "\x0C", "\x0E", "\x1F", "\uFFFE", "\uFFFF",
		"\xff", "\xc3", "a\xc3", "\xed\xa0\x80" /* U+D800, a surrogate */, "\xed\xbf\xbf", /* U+DFFF */
		"\xf4\x90\x80\x80" /* above U+10FFFF */, "\xc0\xaf" /* overlong */}
	var cases []dlSendCase
	cases = append(cases, dlSendCase{name: "7.1.1/empty", msg: fifoq.Message{Body: ""}, want: fifoq.ErrEmptyBody})
	for _, fifo := range []bool{false, true} {
		for _, b := range ok {
			cases = append(cases, dlSendCase{name: fmt.Sprintf("7.1.1/fifo=%v/ok/%+q", fifo, b), fifo: fifo,
				msg: fifoq.Message{Body: b, GroupID: "g"}})
		}
		for _, b := range bad {
			// Alone, and at each offset of an 8-byte word within a longer body.
			bodies := []string{b, "abcdefgh" + b + "abcdefgh", "abcdefghijklmno" + b, strings.Repeat("x", 13) + b + strings.Repeat("y", 20)}
			for i, body := range bodies {
				cases = append(cases, dlSendCase{name: fmt.Sprintf("7.1.1/fifo=%v/bad/%+q/%d", fifo, b, i), fifo: fifo,
					msg: fifoq.Message{Body: body, GroupID: "g"}, want: fifoq.ErrInvalidMessageContents})
			}
		}
	}
	dlRunSendCases(t, cases)
}

// dlAttrMsg is a message with the one attribute name=a.
func dlAttrMsg(name string, a fifoq.Attribute) fifoq.Message {
	return fifoq.Message{Body: "b", Attributes: map[string]fifoq.Attribute{name: a}}
}

// dlStr is a String attribute.
func dlStr(v string) fifoq.Attribute { return fifoq.Attribute{DataType: "String", StringValue: v} }

// dlAttrs returns a message with n String attributes.
func dlAttrs(n int) fifoq.Message {
	m := fifoq.Message{Body: "b", Attributes: map[string]fifoq.Attribute{}}
	for i := range n {
		m.Attributes[fmt.Sprintf("a%d", i)] = dlStr("v")
	}
	return m
}

// Spec 7.1.3 (scenario 52): at most 10 attributes; names of 1..256 characters, each a letter or digit of any
// script (AWS accepts "attr.1øßä") or one of _ - ., without the AWS./Amazon. prefixes in any case, a leading
// or trailing period, or two periods in a row; types String, Number or Binary, optionally with a custom
// suffix, case-sensitive, up to 256 characters; non-empty values; Number values of at most 38 significant
// digits in 10^-128..10^126. Violations are ErrInvalidMessageAttribute, and so is a String value with a
// character the body could not hold (InvalidParameterValue, as AWS answers it, not InvalidMessageContents).
func TestLimitsAttributes(t *testing.T) {
	t.Parallel()
	inv := fifoq.ErrInvalidMessageAttribute
	cases := []dlSendCase{
		{name: "7.1.3/10 attributes", msg: dlAttrs(10)},
		{name: "7.1.3/11 attributes", msg: dlAttrs(11), want: inv},
	}
	for _, n := range []string{"a", "A-b_c.D9", "a.b.c", "AWSx", "awsx", "xAWS.y", "Amazonx", "aws", "Amazon",
		"_aws.x", strings.Repeat("n", 256), "é", "attr.1øßä", "Ωμέγα", "日本語.名前", "٣٤",
		strings.Repeat("ø", 256), "awsø.x", "amazonß"} {
		cases = append(cases, dlSendCase{name: fmt.Sprintf("7.1.3/name ok/%.20q", n), msg: dlAttrMsg(n, dlStr("v"))})
	}
	for _, n := range []string{"", "a b", "a/b", "a:b", "a\x00", "AWS.x", "aws.x", "Aws.X", "aWs.x", "Amazon.x",
		"amazon.x", "AMAZON.x", "aMaZoN.y", ".a", "a.", "a..b", ".", strings.Repeat("n", 257), strings.Repeat("ø", 257),
		"Invalid-!-attr", "Invalid-\"-attr", "Invalid-§-attr", "Invalid-(-attr", "Invalid-?-attr", "a\xffb", "a\xc3",
		"a\u00a0b", "😀", "a\ufffdb", "a\u200bb", "x²", ".øx", "ø.", "ø..ø", "aWs.-Invalid-attr", "AMAZON.-Invalid-attr"} {
		cases = append(cases, dlSendCase{name: fmt.Sprintf("7.1.3/name bad/%.20q", n), msg: dlAttrMsg(n, dlStr("v")), want: inv})
	}
	for _, a := range []fifoq.Attribute{
		{DataType: "String", StringValue: "v"},
		{DataType: "Number", StringValue: "1"},
		{DataType: "Binary", BinaryValue: []byte{0, 0xff}},
		{DataType: "Number.int", StringValue: "42"},
		{DataType: "Binary.png", BinaryValue: []byte("png")},
		{DataType: "String.custom-type_1", StringValue: "v"},
		{DataType: "String." + strings.Repeat("x", 249), StringValue: "v"}, // 256 characters
		{DataType: "String", StringValue: "héllo 😀 \t\n"},
	} {
		cases = append(cases, dlSendCase{name: fmt.Sprintf("7.1.3/type ok/%.20s", a.DataType), msg: dlAttrMsg("k", a)})
	}
	for _, a := range []fifoq.Attribute{
		{DataType: "string", StringValue: "v"},
		{DataType: "NUMBER", StringValue: "1"},
		{DataType: "Strin", StringValue: "v"},
		{DataType: "", StringValue: "v"},
		{DataType: "Foo", StringValue: "v"},
		{DataType: "Foo.int", StringValue: "v"},
		{DataType: "String." + strings.Repeat("x", 250), StringValue: "v"}, // 257 characters
		{DataType: "String", StringValue: ""},
		{DataType: "Number", StringValue: ""},
		{DataType: "Binary"},
		{DataType: "Binary", BinaryValue: []byte{}},
		{DataType: "Number.int", StringValue: ""},
	} {
		cases = append(cases, dlSendCase{name: fmt.Sprintf("7.1.3/type or value bad/%.20s/%q", a.DataType, a.StringValue),
			msg: dlAttrMsg("k", a), want: inv})
	}
	for _, v := range []string{"\x00", "a\x08", "\uFFFE", "\uFFFF", "\xff", "Invalid-\x08,\x0b", "a\xed\xa0\x80b",
		"\xed\xbf\xbf", "a\xc3", "\xf4\x90\x80\x80"} {
		cases = append(cases, dlSendCase{name: fmt.Sprintf("7.1.3/String value chars/%+q", v),
			msg: dlAttrMsg("k", dlStr(v)), want: inv})
		cases = append(cases, dlSendCase{name: fmt.Sprintf("7.1.3/custom String value chars/%+q", v),
			msg: dlAttrMsg("k", fifoq.Attribute{DataType: "String.x", StringValue: v}), want: inv})
	}
	for _, v := range []string{"\t\n\r", "\u0020\ud7ff\ue000\ufffd", "\U00010000\U0010FFFF", "Valida"} {
		cases = append(cases, dlSendCase{name: fmt.Sprintf("7.1.3/String value chars ok/%+q", v), msg: dlAttrMsg("k", dlStr(v))})
	}
	for _, v := range []string{"0", "-1", "+1", "1.5", "-0.25", "1e126", "1E126", "-1e126", "1e-128", "1.0e+5",
		"12345678901234567890123456789012345678", // 38 digits
		"1" + strings.Repeat("0", 38),            // 39 digits, 1 significant: trailing zeros are stripped
		"0000001"} {
		cases = append(cases, dlSendCase{name: fmt.Sprintf("7.1.3/number ok/%s", v),
			msg: dlAttrMsg("n", fifoq.Attribute{DataType: "Number", StringValue: v})})
	}
	for _, v := range []string{"123456789012345678901234567890123456789", "1e127", "1e-129", "abc", "1.2.3", "1e",
		"--1", " 1", "1 ", "0x10", "NaN", "Infinity", "1,5", "-"} {
		cases = append(cases, dlSendCase{name: fmt.Sprintf("7.1.3/number bad/%s", v),
			msg: dlAttrMsg("n", fifoq.Attribute{DataType: "Number", StringValue: v}), want: inv})
	}
	dlRunSendCases(t, cases)
}

// A String value with a character a body could not hold is a bad attribute value, InvalidParameterValue as
// AWS answers it, and not the body's InvalidMessageContents: alone and as one entry of a batch, whose other
// entries are stored.
func TestLimitsAttributeValueCharacters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bad := dlAttrMsg("attr1", dlStr("Invalid-\x08,\x0b"))
	q := dlNewQueue(t, "dl-attr-chars")
	_, err := q.Send(ctx, bad)
	require.ErrorIs(t, err, fifoq.ErrInvalidMessageAttribute)
	require.NotErrorIs(t, err, fifoq.ErrInvalidMessageContents)
	require.Equal(t, "InvalidParameterValue", fifoq.ErrorCode(err))
	require.Contains(t, err.Error(), `"attr1"`, "the error names the attribute")

	_, err = q.SendBatch(ctx, []fifoq.Message{{Body: "ok"}, bad})
	var be *fifoq.BatchError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Entries, 1)
	require.Equal(t, 1, be.Entries[0].Index)
	require.ErrorIs(t, be.Entries[0].Err, fifoq.ErrInvalidMessageAttribute)
	require.Equal(t, "InvalidParameterValue", fifoq.ErrorCode(be.Entries[0].Err))
	require.Equal(t, []string{"ok"}, dlStored(q), "the valid entry is stored, the invalid one not")
}

// Spec 7.1.3 (scenario 52): custom types such as Number.int are accepted and echoed back, type and value, on
// receive and in Messages; the queue keeps its own copy of the attributes (style 25).
func TestLimitsAttributeTypesEchoed(t *testing.T) {
	t.Parallel()
	q := dlNewQueue(t, "dl-echo")
	attrs := map[string]fifoq.Attribute{
		"count": {DataType: "Number.int", StringValue: "42"},
		"image": {DataType: "Binary.png", BinaryValue: []byte{0x89, 'P', 'N', 'G'}},
		"name":  {DataType: "String.utf8", StringValue: "héllo"},
		"plain": {DataType: "String", StringValue: "v"},
	}
	want := map[string]fifoq.Attribute{
		"count": {DataType: "Number.int", StringValue: "42"},
		"image": {DataType: "Binary.png", BinaryValue: []byte{0x89, 'P', 'N', 'G'}},
		"name":  {DataType: "String.utf8", StringValue: "héllo"},
		"plain": {DataType: "String", StringValue: "v"},
	}
	dlSend(t, q, fifoq.Message{Body: "b", Attributes: attrs})
	attrs["image"].BinaryValue[0] = 0
	attrs["plain"] = dlStr("changed")
	for s := range q.Messages() {
		require.Equal(t, want, s.Attributes, "Messages")
	}
	ds := dlReceive(t, q, 1)
	require.Len(t, ds, 1)
	require.Equal(t, want, ds[0].Attributes, "Receive")
}

// Spec 7.1.2 (scenario 50): the maximum message size is 1 MiB by default and at most, and counts the body plus
// every attribute's name, type and value, inclusively; group and deduplication ids do not count.
func TestLimitsMessageSize(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	// k=String "x" is 1 + 6 + 1 = 8 bytes; b=Binary{1, 2, 3} is 1 + 6 + 3 = 10 bytes.
	kx := map[string]fifoq.Attribute{"k": dlStr("x")}
	bin := map[string]fifoq.Attribute{"b": {DataType: "Binary", BinaryValue: []byte{1, 2, 3}}}
	size := func(n int) []fifoq.Option { return []fifoq.Option{fifoq.WithMaxMessageSize(n)} }
	big := fifoq.ErrMessageTooLarge
	cases := []dlSendCase{
		{name: "7.1.2/default/1MiB body", msg: fifoq.Message{Body: strings.Repeat("a", mib)}},
		{name: "7.1.2/default/1MiB+1 body", msg: fifoq.Message{Body: strings.Repeat("a", mib+1)}, want: big},
		{name: "7.1.2/default/1MiB with attribute", msg: fifoq.Message{Body: strings.Repeat("a", mib-8), Attributes: kx}},
		{name: "7.1.2/default/1MiB+1 with attribute", msg: fifoq.Message{Body: strings.Repeat("a", mib-7), Attributes: kx}, want: big},
		{name: "7.1.2/max 1MiB/1MiB body", opts: size(mib), msg: fifoq.Message{Body: strings.Repeat("a", mib)}},
		{name: "7.1.2/max 2048/AWS example", opts: size(2048), msg: fifoq.Message{Body: strings.Repeat("a", 2048-len("k"+"String"+"x")), Attributes: kx}},
		{name: "7.1.2/max 2048/one byte over", opts: size(2048), msg: fifoq.Message{Body: strings.Repeat("a", 2048-len("k"+"String"+"x")+1), Attributes: kx}, want: big},
		{name: "7.1.2/max 1024/1024 body", opts: size(1024), msg: fifoq.Message{Body: strings.Repeat("a", 1024)}},
		{name: "7.1.2/max 1024/1025 body", opts: size(1024), msg: fifoq.Message{Body: strings.Repeat("a", 1025)}, want: big},
		{name: "7.1.2/max 1024/binary attribute", opts: size(1024), msg: fifoq.Message{Body: strings.Repeat("a", 1024-10), Attributes: bin}},
		{name: "7.1.2/max 1024/binary attribute over", opts: size(1024), msg: fifoq.Message{Body: strings.Repeat("a", 1024-9), Attributes: bin}, want: big},
		{name: "7.1.2/max 1024/multibyte body counts bytes", opts: size(1024), msg: fifoq.Message{Body: strings.Repeat("é", 513)}, want: big},
		{name: "7.1.2/max 1024/FIFO ids do not count", fifo: true,
			opts: []fifoq.Option{fifoq.WithMaxMessageSize(1024)},
			msg:  fifoq.Message{Body: strings.Repeat("a", 1024), GroupID: strings.Repeat("g", 128), DeduplicationID: strings.Repeat("d", 128)}},
	}
	dlRunSendCases(t, cases)
}

// Spec 2.2, 2.3, 2.4, 3.1, 3.2, 4.2 (scenarios 22, 23, 32): group and deduplication ids are 1..128
// characters of alphanumerics and punctuation; FIFO needs a group id (ErrMissingGroupID; in Go "" is the same
// as none) and a deduplication id unless content-based deduplication is on; a standard queue accepts a group
// id with the same validation and rejects any deduplication id; a standard message timer is 0..15 minutes.
func TestLimitsIDsAndDelay(t *testing.T) {
	t.Parallel()
	const punct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
	explicit := []fifoq.Option{fifoq.WithDeduplicationScope(fifoq.DeduplicationScopeQueue)} // no content-based dedup
	a128, a129 := strings.Repeat("a", 128), strings.Repeat("a", 129)
	cases := []dlSendCase{
		{name: "2.2/FIFO missing group", fifo: true, msg: fifoq.Message{Body: "b"}, want: fifoq.ErrMissingGroupID},
		{name: "2.3/FIFO group 128 a", fifo: true, msg: fifoq.Message{Body: "b", GroupID: a128}},
		{name: "2.3/FIFO group punctuation", fifo: true, msg: fifoq.Message{Body: "b", GroupID: punct + "aZ09"}},
		{name: "2.3/FIFO group 129", fifo: true, msg: fifoq.Message{Body: "b", GroupID: a129}, want: fifoq.ErrInvalidGroupID},
		{name: "2.3/FIFO group with space", fifo: true, msg: fifoq.Message{Body: "b", GroupID: "group 123"}, want: fifoq.ErrInvalidGroupID},
		{name: "2.3/FIFO group with tab", fifo: true, msg: fifoq.Message{Body: "b", GroupID: "g\t1"}, want: fifoq.ErrInvalidGroupID},
		{name: "2.3/FIFO group non-ASCII", fifo: true, msg: fifoq.Message{Body: "b", GroupID: "grüppe"}, want: fifoq.ErrInvalidGroupID},
		{name: "2.3/FIFO group DEL", fifo: true, msg: fifoq.Message{Body: "b", GroupID: "g\x7f"}, want: fifoq.ErrInvalidGroupID},
		{name: "2.4/standard no group", msg: fifoq.Message{Body: "b"}},
		{name: "2.4/standard group 128 a", msg: fifoq.Message{Body: "b", GroupID: a128}},
		{name: "2.4/standard group 129", msg: fifoq.Message{Body: "b", GroupID: a129}, want: fifoq.ErrInvalidGroupID},
		{name: "2.4/standard group with space", msg: fifoq.Message{Body: "b", GroupID: "group 123"}, want: fifoq.ErrInvalidGroupID},
		{name: "3.1/FIFO missing dedup id", fifo: true, opts: explicit, msg: fifoq.Message{Body: "b", GroupID: "g"}, want: fifoq.ErrMissingDeduplicationID},
		{name: "3.2/FIFO dedup 128 a", fifo: true, opts: explicit, msg: fifoq.Message{Body: "b", GroupID: "g", DeduplicationID: a128}},
		{name: "3.2/FIFO dedup punctuation", fifo: true, opts: explicit, msg: fifoq.Message{Body: "b", GroupID: "g", DeduplicationID: punct}},
		{name: "3.2/FIFO dedup 129", fifo: true, opts: explicit, msg: fifoq.Message{Body: "b", GroupID: "g", DeduplicationID: a129}, want: fifoq.ErrInvalidDeduplicationID},
		{name: "3.2/FIFO dedup with space", fifo: true, opts: explicit, msg: fifoq.Message{Body: "b", GroupID: "g", DeduplicationID: "a b"}, want: fifoq.ErrInvalidDeduplicationID},
		{name: "3.2/FIFO dedup non-ASCII", fifo: true, msg: fifoq.Message{Body: "b", GroupID: "g", DeduplicationID: "dé"}, want: fifoq.ErrInvalidDeduplicationID},
		{name: "3.2/standard rejects a dedup id", msg: fifoq.Message{Body: "b", DeduplicationID: "d"}, want: fifoq.ErrInvalidDeduplicationID},
		{name: "4.2/standard delay 15m", msg: fifoq.Message{Body: "b", Delay: 15 * time.Minute}},
		{name: "4.2/standard delay 15m+1ns", msg: fifoq.Message{Body: "b", Delay: 15*time.Minute + time.Nanosecond}, want: fifoq.ErrInvalidDelay},
		{name: "4.2/standard delay -1ns", msg: fifoq.Message{Body: "b", Delay: -time.Nanosecond}, want: fifoq.ErrInvalidDelay},
		{name: "4.3/FIFO delay -1ns", fifo: true, msg: fifoq.Message{Body: "b", GroupID: "g", Delay: -time.Nanosecond}, want: fifoq.ErrInvalidDelay},
		{name: "4.3/FIFO delay 1s", fifo: true, msg: fifoq.Message{Body: "b", GroupID: "g", Delay: time.Second}, want: fifoq.ErrInvalidDelay},
	}
	dlRunSendCases(t, cases)
}

// Spec 2.4, 1.4.5 (scenario 23): on a standard queue a group id gives no SequenceNumber and no ordering or
// blocking, and comes back on receive.
func TestLimitsStandardGroupIDNoOrdering(t *testing.T) {
	t.Parallel()
	q := dlNewQueue(t, "dl-fair")
	r := dlSend(t, q, fifoq.Message{Body: "a1", GroupID: "tenant-a"})
	require.Empty(t, r.SequenceNumber, "a standard send has no SequenceNumber")
	dlSend(t, q, fifoq.Message{Body: "a2", GroupID: "tenant-a"})
	first := dlReceive(t, q, 1)
	require.Len(t, first, 1)
	require.Equal(t, "tenant-a", first[0].GroupID)
	require.Empty(t, first[0].SequenceNumber)
	second := dlReceive(t, q, 1)
	require.Len(t, second, 1, "a group with a message in flight is not blocked on a standard queue")
	require.ElementsMatch(t, []string{"a1", "a2"}, []string{first[0].Body, second[0].Body})
}

// dlBatch returns n valid messages b0..b<n-1> of group g.
func dlBatch(n int) []fifoq.Message {
	ms := make([]fifoq.Message, n)
	for i := range ms {
		ms[i] = fifoq.Message{Body: fmt.Sprintf("b%d", i), GroupID: "g"}
	}
	return ms
}

// Spec 7.2.1, 7.2.2, 2.2, 3.1 (scenario 51): a SendBatch fails whole, sending nothing, with no entries
// (ErrEmptyBatch), more than 10 (ErrTooManyEntries), more than 1 MiB in all, body and attributes
// (ErrBatchTooLong), and on FIFO with an entry lacking a group id or a deduplication id.
func TestLimitsSendBatchWholeFailures(t *testing.T) {
	t.Parallel()
	const half = 1 << 19
	noGroup := dlBatch(10)
	noGroup[5].GroupID = ""
	noDedup := dlBatch(10)
	for i := range noDedup {
		noDedup[i].DeduplicationID = fmt.Sprintf("d%d", i)
	}
	noDedup[7].DeduplicationID = ""
	tooLong := []fifoq.Message{{Body: strings.Repeat("a", half), GroupID: "g"}, {Body: strings.Repeat("b", half+1), GroupID: "g"}}
	tooLongAttr := []fifoq.Message{{Body: strings.Repeat("a", half), GroupID: "g"},
		{Body: strings.Repeat("b", half-7), GroupID: "g", Attributes: map[string]fifoq.Attribute{"k": dlStr("x")}}}
	cases := []struct {
		name string
		fifo bool
		opts []fifoq.Option
		ms   []fifoq.Message
		want error
	}{
		{"7.2.1/standard nil", false, nil, nil, fifoq.ErrEmptyBatch},
		{"7.2.1/FIFO empty", true, nil, []fifoq.Message{}, fifoq.ErrEmptyBatch},
		{"7.2.1/standard 11", false, nil, dlBatch(11), fifoq.ErrTooManyEntries},
		{"7.2.1/FIFO 11", true, nil, dlBatch(11), fifoq.ErrTooManyEntries},
		{"7.2.2/standard 1MiB+1", false, nil, tooLong, fifoq.ErrBatchTooLong},
		{"7.2.2/FIFO 1MiB+1", true, nil, tooLong, fifoq.ErrBatchTooLong},
		{"7.2.2/standard 1MiB+1 with attribute", false, nil, tooLongAttr, fifoq.ErrBatchTooLong},
		{"2.2/FIFO entry 5 without group", true, nil, noGroup, fifoq.ErrMissingGroupID},
		{"3.1/FIFO entry 7 without dedup id", true, []fifoq.Option{fifoq.WithDeduplicationScope(fifoq.DeduplicationScopeQueue)}, noDedup, fifoq.ErrMissingDeduplicationID},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name, opts := "dl-batch", tc.opts
			if tc.fifo {
				name += ".fifo"
				if opts == nil {
					opts = []fifoq.Option{fifoq.WithContentBasedDeduplication()}
				}
			}
			q := dlNewQueue(t, name, opts...)
			res, err := q.SendBatch(context.Background(), tc.ms)
			require.ErrorIs(t, err, tc.want)
			var be *fifoq.BatchError
			require.False(t, errors.As(err, &be), "a whole-call failure is not a *BatchError: %v", err)
			require.Nil(t, res, "a whole-call failure returns no results")
			require.Equal(t, fifoq.Stats{}, q.Stats(), "nothing is enqueued")
			require.Empty(t, dlStored(q), "nothing is enqueued")
		})
	}
}

// Spec 7.2.1, 7.2.2: the edges that pass: 1 and 10 entries, and exactly 1 MiB in all.
func TestLimitsSendBatchEdgesAccepted(t *testing.T) {
	t.Parallel()
	const half = 1 << 19
	for name, ms := range map[string][]fifoq.Message{
		"1 entry":    dlBatch(1),
		"10 entries": dlBatch(10),
		"1MiB total": {{Body: strings.Repeat("a", half)}, {Body: strings.Repeat("b", half)}},
	} {
		t.Run(name, func(t *testing.T) {
			q := dlNewQueue(t, "dl-batch")
			res, err := q.SendBatch(context.Background(), ms)
			require.NoError(t, err)
			require.Len(t, res, len(ms))
			require.Equal(t, fifoq.Stats{Visible: len(ms)}, q.Stats())
		})
	}
}

// Spec 7.1.1, 7.1.2, 7.2.3 (scenario 51): in a batch an entry invalid on its own fails alone. The call
// returns results for the others, in order, and a *fifoq.BatchError naming the failed entries by index, which
// errors.Is matches against each entry's sentinel.
func TestLimitsSendBatchPerEntryFailures(t *testing.T) {
	t.Parallel()
	for _, fifo := range []bool{false, true} {
		t.Run(map[bool]string{false: "standard", true: "FIFO"}[fifo], func(t *testing.T) {
			name := "dl-batch"
			var opts []fifoq.Option
			if fifo {
				name += ".fifo"
				opts = append(opts, fifoq.WithContentBasedDeduplication())
			}
			q := dlNewQueue(t, name, opts...)
			ms := dlBatch(10)
			ms[3].Body = "bad \x00 body"
			res, err := q.SendBatch(context.Background(), ms)
			require.Error(t, err)
			var be *fifoq.BatchError
			require.ErrorAs(t, err, &be)
			require.Len(t, be.Entries, 1)
			require.Equal(t, 3, be.Entries[0].Index)
			require.ErrorIs(t, be.Entries[0].Err, fifoq.ErrInvalidMessageContents)
			require.ErrorIs(t, err, fifoq.ErrInvalidMessageContents)
			require.Equal(t, "InvalidMessageContents", fifoq.ErrorCode(be.Entries[0].Err))
			require.Len(t, res, 10)
			require.Equal(t, fifoq.SendResult{}, res[3], "the failed entry's result is zero")
			var want []string
			for i, r := range res {
				if i != 3 {
					require.NotEmpty(t, r.MessageID, "entry %d", i)
					want = append(want, ms[i].Body)
				}
			}
			require.Equal(t, fifoq.Stats{Visible: 9}, q.Stats())
			require.Equal(t, want, dlBodies(dlReceive(t, q, 10)), "the 9 others, in order")
		})
	}
	t.Run("several failures and sizes", func(t *testing.T) {
		q := dlNewQueue(t, "dl-batch", fifoq.WithMaxMessageSize(1024))
		ms := []fifoq.Message{
			{Body: strings.Repeat("a", 1024)},
			{Body: ""},
			{Body: strings.Repeat("b", 1025)},
			{Body: "ok", Attributes: map[string]fifoq.Attribute{"AWS.x": dlStr("v")}},
			{Body: "last"},
		}
		res, err := q.SendBatch(context.Background(), ms)
		var be *fifoq.BatchError
		require.ErrorAs(t, err, &be)
		var idx []int
		for _, e := range be.Entries {
			idx = append(idx, e.Index)
		}
		require.Equal(t, []int{1, 2, 3}, idx)
		require.ErrorIs(t, be.Entries[0].Err, fifoq.ErrEmptyBody)
		require.ErrorIs(t, be.Entries[1].Err, fifoq.ErrMessageTooLarge)
		require.ErrorIs(t, be.Entries[2].Err, fifoq.ErrInvalidMessageAttribute)
		for _, s := range []error{fifoq.ErrEmptyBody, fifoq.ErrMessageTooLarge, fifoq.ErrInvalidMessageAttribute} {
			require.ErrorIs(t, err, s)
		}
		require.NotErrorIs(t, err, fifoq.ErrInvalidMessageContents)
		require.NotEmpty(t, res[0].MessageID)
		require.NotEmpty(t, res[4].MessageID)
		require.Equal(t, []string{strings.Repeat("a", 1024), "last"}, dlStored(q))
	})
}

// dlInFlight sends n messages to a standard queue with a long visibility timeout and receives them all.
func dlInFlight(t *testing.T, n int) (*fifoq.Queue, []string) {
	t.Helper()
	q := dlNewQueue(t, "dl-handles", fifoq.WithVisibilityTimeout(time.Hour))
	var hs []string
	for len(hs) < n {
		for range min(10, n-len(hs)) {
			dlSend(t, q, fifoq.Message{Body: "m"})
		}
		for _, d := range dlReceive(t, q, 10) {
			hs = append(hs, d.ReceiptHandle)
		}
	}
	require.Equal(t, fifoq.Stats{InFlight: n}, q.Stats())
	return q, hs
}

// Spec 7.2.1: DeleteBatch and ChangeVisibilityBatch take 1..10 entries: none is ErrEmptyBatch, 11 is
// ErrTooManyEntries, and either changes nothing; 10 are applied.
func TestLimitsDeleteAndVisibilityBatchEntries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("DeleteBatch", func(t *testing.T) {
		q, hs := dlInFlight(t, 11)
		require.ErrorIs(t, q.DeleteBatch(ctx, nil), fifoq.ErrEmptyBatch)
		require.ErrorIs(t, q.DeleteBatch(ctx, []string{}), fifoq.ErrEmptyBatch)
		err := q.DeleteBatch(ctx, hs)
		require.ErrorIs(t, err, fifoq.ErrTooManyEntries)
		require.Equal(t, "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", fifoq.ErrorCode(err))
		require.Equal(t, fifoq.Stats{InFlight: 11}, q.Stats(), "a rejected DeleteBatch deletes nothing")
		require.NoError(t, q.DeleteBatch(ctx, hs[:10]))
		require.Equal(t, fifoq.Stats{InFlight: 1}, q.Stats())
	})
	t.Run("ChangeVisibilityBatch", func(t *testing.T) {
		q, hs := dlInFlight(t, 11)
		var es []fifoq.VisibilityChange
		for _, h := range hs {
			es = append(es, fifoq.VisibilityChange{ReceiptHandle: h})
		}
		require.ErrorIs(t, q.ChangeVisibilityBatch(ctx, nil), fifoq.ErrEmptyBatch)
		require.ErrorIs(t, q.ChangeVisibilityBatch(ctx, es), fifoq.ErrTooManyEntries)
		require.Equal(t, fifoq.Stats{InFlight: 11}, q.Stats(), "a rejected ChangeVisibilityBatch changes nothing")
		require.NoError(t, q.ChangeVisibilityBatch(ctx, es[:10]))
		require.Equal(t, fifoq.Stats{Visible: 10, InFlight: 1}, q.Stats())
	})
}

// Spec 1.5.1, 1.5.4, 1.2.1, 1.2.2, 2.15.1 (scenario 53): MaxMessages is 1..10 and 0 means 1; WaitTime is
// 0..20s; a receive's VisibilityTimeout is 0..12h; a FIFO attempt id is 1..128 alphanumerics or punctuation
// (ignored on standard queues). A rejected receive receives nothing.
func TestLimitsReceiveParameters(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		fifo bool
		o    fifoq.ReceiveOptions
		want error // nil: accepted
		n    int   // accepted: messages returned
	}{
		{"1.5.4/MaxMessages 0 means 1", false, fifoq.ReceiveOptions{}, nil, 1},
		{"1.5.4/MaxMessages 1", false, fifoq.ReceiveOptions{MaxMessages: 1}, nil, 1},
		{"1.5.4/MaxMessages 10", false, fifoq.ReceiveOptions{MaxMessages: 10}, nil, 10},
		{"1.5.4/MaxMessages 10 FIFO", true, fifoq.ReceiveOptions{MaxMessages: 10}, nil, 10},
		{"1.5.4/MaxMessages 11", false, fifoq.ReceiveOptions{MaxMessages: 11}, fifoq.ErrInvalidMaxMessages, 0},
		{"1.5.4/MaxMessages -1", false, fifoq.ReceiveOptions{MaxMessages: -1}, fifoq.ErrInvalidMaxMessages, 0},
		{"1.5.4/MaxMessages 11 FIFO", true, fifoq.ReceiveOptions{MaxMessages: 11}, fifoq.ErrInvalidMaxMessages, 0},
		{"1.5.1/WaitTime 20s", false, fifoq.ReceiveOptions{WaitTime: 20 * time.Second}, nil, 1},
		{"1.5.1/WaitTime -1s", false, fifoq.ReceiveOptions{WaitTime: -time.Second}, fifoq.ErrInvalidWaitTime, 0},
		{"1.5.1/WaitTime -1ns", false, fifoq.ReceiveOptions{WaitTime: -time.Nanosecond}, fifoq.ErrInvalidWaitTime, 0},
		{"1.5.1/WaitTime 20s+1ns", false, fifoq.ReceiveOptions{WaitTime: 20*time.Second + time.Nanosecond}, fifoq.ErrInvalidWaitTime, 0},
		{"1.5.1/WaitTime 21s", true, fifoq.ReceiveOptions{WaitTime: 21 * time.Second}, fifoq.ErrInvalidWaitTime, 0},
		{"1.2.1/VisibilityTimeout 12h", false, fifoq.ReceiveOptions{VisibilityTimeout: 12 * time.Hour}, nil, 1},
		{"1.2.1/VisibilityTimeout -1s", false, fifoq.ReceiveOptions{VisibilityTimeout: -time.Second}, fifoq.ErrInvalidVisibilityTimeout, 0},
		{"1.2.1/VisibilityTimeout -1ns", true, fifoq.ReceiveOptions{VisibilityTimeout: -time.Nanosecond}, fifoq.ErrInvalidVisibilityTimeout, 0},
		{"1.2.1/VisibilityTimeout 12h+1ns", false, fifoq.ReceiveOptions{VisibilityTimeout: 12*time.Hour + time.Nanosecond}, fifoq.ErrInvalidVisibilityTimeout, 0},
		{"2.15.1/AttemptID 128 FIFO", true, fifoq.ReceiveOptions{AttemptID: strings.Repeat("a", 128)}, nil, 1},
		{"2.15.1/AttemptID 129 FIFO", true, fifoq.ReceiveOptions{AttemptID: strings.Repeat("a", 129)}, fifoq.ErrInvalidAttemptID, 0},
		{"2.15.1/AttemptID with space FIFO", true, fifoq.ReceiveOptions{AttemptID: "a b"}, fifoq.ErrInvalidAttemptID, 0},
		{"2.15.5/AttemptID ignored on standard", false, fifoq.ReceiveOptions{AttemptID: "a b"}, nil, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := "dl-receive"
			var opts []fifoq.Option
			if tc.fifo {
				name += ".fifo"
				opts = append(opts, fifoq.WithContentBasedDeduplication())
			}
			q := dlNewQueue(t, name, opts...)
			for i := range 12 {
				dlSend(t, q, fifoq.Message{Body: fmt.Sprintf("m%02d", i), GroupID: "g"})
			}
			ds, err := q.Receive(context.Background(), tc.o)
			if tc.want != nil {
				require.ErrorIs(t, err, tc.want, "Receive(%+v)", tc.o)
				require.Empty(t, ds)
				require.Equal(t, fifoq.Stats{Visible: 12}, q.Stats(), "a rejected receive receives nothing")
				return
			}
			require.NoError(t, err, "Receive(%+v)", tc.o)
			require.Len(t, ds, tc.n, "Receive(%+v)", tc.o)
			require.Equal(t, fifoq.Stats{Visible: 12 - tc.n, InFlight: tc.n}, q.Stats())
			if tc.o.VisibilityTimeout > 0 {
				for s := range q.Messages() {
					if s.State == fifoq.StateInFlight {
						require.Equal(t, tc.o.VisibilityTimeout, s.VisibleAt.Sub(dlStart), "VisibleAt of %q", s.Body)
					}
				}
			}
		})
	}
}

// Spec 1.2.4, 1.2.5: ChangeVisibility takes 0..12h; -1ns and 12h+1ns are ErrInvalidVisibilityTimeout and
// change nothing.
func TestLimitsChangeVisibilityTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, d := range []time.Duration{-time.Nanosecond, -time.Second, 12*time.Hour + time.Nanosecond, 24 * time.Hour} {
		q, hs := dlInFlight(t, 1)
		before := slices.Collect(q.Messages())
		err := q.ChangeVisibility(ctx, hs[0], d)
		require.ErrorIs(t, err, fifoq.ErrInvalidVisibilityTimeout, "ChangeVisibility(%v)", d)
		require.Equal(t, before, slices.Collect(q.Messages()), "ChangeVisibility(%v) changes nothing", d)
	}
	q, hs := dlInFlight(t, 2)
	require.NoError(t, q.ChangeVisibility(ctx, hs[0], 12*time.Hour-5*time.Second))
	require.NoError(t, q.ChangeVisibility(ctx, hs[1], 0))
	require.Equal(t, fifoq.Stats{Visible: 1, InFlight: 1}, q.Stats())
}

// Spec 7.3.1, 2.1: queue names are 1..80 characters of [A-Za-z0-9_-], ".fifo" included for FIFO queues;
// anything else is ErrInvalidQueueName.
func TestLimitsQueueNames(t *testing.T) {
	t.Parallel()
	ok := map[string]bool{ // name -> FIFO
		"a": false, "A-z_0-9": false, strings.Repeat("q", 80): false,
		"a.fifo": true, strings.Repeat("q", 75) + ".fifo": true, "My-Queue_1.fifo": true,
	}
	for name, fifo := range ok {
		q, err := fifoq.New(name)
		require.NoError(t, err, "New(%q)", name)
		require.Equal(t, name, q.Name())
		require.Equal(t, fifo, q.FIFO(), "New(%q).FIFO()", name)
	}
	for _, name := range []string{"", strings.Repeat("q", 81), strings.Repeat("q", 76) + ".fifo", ".fifo", "a b",
		"a.b", "a/b", "é", "a.fifo.fifo", "a.FIFO", "a.fifo ", "a:b", "a\x00"} {
		q, err := fifoq.New(name)
		require.ErrorIs(t, err, fifoq.ErrInvalidQueueName, "New(%q)", name)
		require.Nil(t, q, "New(%q)", name)
	}
}

// Spec 1.2.1, 4.1, 5.1, 7.1.2, 1.5.1: queue options out of range are ErrInvalidQueueAttribute; the edges
// of each range are accepted.
func TestLimitsQueueOptions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		fifo bool
		opt  fifoq.Option
		ok   bool
	}{
		{"1.2.1/visibility 0", false, fifoq.WithVisibilityTimeout(0), true},
		{"1.2.1/visibility 12h", false, fifoq.WithVisibilityTimeout(12 * time.Hour), true},
		{"1.2.1/visibility -1ns", false, fifoq.WithVisibilityTimeout(-time.Nanosecond), false},
		{"1.2.1/visibility 12h+1ns", false, fifoq.WithVisibilityTimeout(12*time.Hour + time.Nanosecond), false},
		{"4.1/delay 0", false, fifoq.WithDelay(0), true},
		{"4.1/delay 15m", true, fifoq.WithDelay(15 * time.Minute), true},
		{"4.1/delay -1ns", false, fifoq.WithDelay(-time.Nanosecond), false},
		{"4.1/delay 15m+1ns", true, fifoq.WithDelay(15*time.Minute + time.Nanosecond), false},
		{"5.1/retention 1m", false, fifoq.WithRetention(time.Minute), true},
		{"5.1/retention 14d", false, fifoq.WithRetention(14 * 24 * time.Hour), true},
		{"5.1/retention 1m-1ns", false, fifoq.WithRetention(time.Minute - time.Nanosecond), false},
		{"5.1/retention 0", false, fifoq.WithRetention(0), false},
		{"5.1/retention 14d+1ns", true, fifoq.WithRetention(14*24*time.Hour + time.Nanosecond), false},
		{"7.1.2/max size 1024", false, fifoq.WithMaxMessageSize(1024), true},
		{"7.1.2/max size 1MiB", false, fifoq.WithMaxMessageSize(1 << 20), true},
		{"7.1.2/max size 1023", false, fifoq.WithMaxMessageSize(1023), false},
		{"7.1.2/max size 0", false, fifoq.WithMaxMessageSize(0), false},
		{"7.1.2/max size 1MiB+1", true, fifoq.WithMaxMessageSize(1<<20 + 1), false},
		{"1.5.1/wait 0", false, fifoq.WithReceiveWaitTime(0), true},
		{"1.5.1/wait 20s", false, fifoq.WithReceiveWaitTime(20 * time.Second), true},
		{"1.5.1/wait -1ns", false, fifoq.WithReceiveWaitTime(-time.Nanosecond), false},
		{"1.5.1/wait 20s+1ns", true, fifoq.WithReceiveWaitTime(20*time.Second + time.Nanosecond), false},
		{"3.7/scope messageGroup", true, fifoq.WithDeduplicationScope(fifoq.DeduplicationScopeMessageGroup), true},
		{"3.7/scope 0", true, fifoq.WithDeduplicationScope(0), false},
		{"3.7/scope 3", true, fifoq.WithDeduplicationScope(3), false},
		{"clock nil", false, fifoq.WithClock(nil), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := "dl-options"
			if tc.fifo {
				name += ".fifo"
			}
			q, err := fifoq.New(name, tc.opt)
			if tc.ok {
				require.NoError(t, err)
				require.NotNil(t, q)
				return
			}
			require.ErrorIs(t, err, fifoq.ErrInvalidQueueAttribute)
			require.Equal(t, "InvalidAttributeValue", fifoq.ErrorCode(err))
			require.Nil(t, q)
		})
	}
}

// Spec 3.12: FIFO-only options on a standard queue are ErrFIFOOnly (InvalidAttributeName), even with their
// default value; on a FIFO queue they are accepted.
func TestLimitsFIFOOnlyOptions(t *testing.T) {
	t.Parallel()
	for name, opt := range map[string]fifoq.Option{
		"ContentBasedDeduplication":       fifoq.WithContentBasedDeduplication(),
		"DeduplicationScope queue":        fifoq.WithDeduplicationScope(fifoq.DeduplicationScopeQueue),
		"DeduplicationScope messageGroup": fifoq.WithDeduplicationScope(fifoq.DeduplicationScopeMessageGroup),
	} {
		q, err := fifoq.New("dl-standard", opt)
		require.ErrorIs(t, err, fifoq.ErrFIFOOnly, "%s on a standard queue", name)
		require.Equal(t, "InvalidAttributeName", fifoq.ErrorCode(err), "%s on a standard queue", name)
		require.Nil(t, q)
		q, err = fifoq.New("dl-fifo.fifo", opt)
		require.NoError(t, err, "%s on a FIFO queue", name)
		require.True(t, q.FIFO())
	}
}

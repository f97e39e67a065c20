package fifoq_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// CheckMessage and CheckBatch refuse what Send and SendBatch refuse on a queue of the type with the widest
// settings (1 MiB, content-based deduplication): the same sentinel, code and AWS message, for every rule they
// share. They are the one home of those rules for code that sends elsewhere (the SQS adapter).
func TestCheckMessageAsSend(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", fifoq.MaxMessageSize+1)
	attrs := func(n int) map[string]fifoq.Attribute {
		m := make(map[string]fifoq.Attribute, n)
		for i := range n {
			m[string(rune('a'+i))] = fifoq.Attribute{DataType: "String", StringValue: "v"}
		}
		return m
	}
	cases := []struct {
		name string
		m    fifoq.Message
		fifo bool
	}{
		{"good standard", fifoq.Message{Body: "b"}, false},
		{"good FIFO", fifoq.Message{Body: "b", GroupID: "g"}, true},
		{"empty body", fifoq.Message{}, false},
		{"bad character", fifoq.Message{Body: "a\x00b"}, false},
		{"too large", fifoq.Message{Body: big}, false},
		{"11 attributes", fifoq.Message{Body: "b", Attributes: attrs(11)}, false},
		{"attribute type", fifoq.Message{Body: "b", Attributes: map[string]fifoq.Attribute{"a": {DataType: "Date", StringValue: "x"}}}, false},
		{"attribute name", fifoq.Message{Body: "b", Attributes: map[string]fifoq.Attribute{"AWS.x": {DataType: "String", StringValue: "x"}}}, false},
		{"delay", fifoq.Message{Body: "b", Delay: 16 * time.Minute}, false},
		{"FIFO delay", fifoq.Message{Body: "b", GroupID: "g", Delay: time.Second}, true},
		{"FIFO no group", fifoq.Message{Body: "b"}, true},
		{"bad group", fifoq.Message{Body: "b", GroupID: "a b"}, true},
		{"dedup id on standard", fifoq.Message{Body: "b", DeduplicationID: "d"}, false},
		{"long dedup id", fifoq.Message{Body: "b", GroupID: "g", DeduplicationID: strings.Repeat("d", 129)}, true},
		{"trace header", fifoq.Message{Body: "b", TraceHeader: strings.Repeat("t", 1025)}, false},
	}
	for _, c := range cases {
		name := "std"
		opts := []fifoq.Option{}
		if c.fifo {
			name, opts = "q.fifo", append(opts, fifoq.WithContentBasedDeduplication())
		}
		q, err := fifoq.New(name, opts...)
		require.NoError(t, err)
		_, sendErr := q.Send(t.Context(), c.m)
		checkErr := fifoq.CheckMessage(c.m, c.fifo)
		require.Equal(t, sendErr == nil, checkErr == nil, "%s: Send %v, CheckMessage %v", c.name, sendErr, checkErr)
		require.Equal(t, fifoq.ErrorCode(sendErr), fifoq.ErrorCode(checkErr), c.name)
		require.Equal(t, fifoq.ErrorMessage(sendErr), fifoq.ErrorMessage(checkErr), c.name)
		var sentinel *fifoq.Error
		if errors.As(sendErr, &sentinel) {
			require.ErrorIs(t, checkErr, sentinel, c.name)
		}

		// The same message as the entry of a batch, beside a good one.
		good := fifoq.Message{Body: "ok"}
		if c.fifo {
			good.GroupID = "g"
		}
		batch := []fifoq.Message{good, c.m}
		_, sendErr = q.SendBatch(t.Context(), batch)
		checkErr = fifoq.CheckBatch(batch, c.fifo)
		require.Equal(t, sendErr == nil, checkErr == nil, "%s in a batch: SendBatch %v, CheckBatch %v", c.name, sendErr, checkErr)
		require.Equal(t, fifoq.ErrorCode(sendErr), fifoq.ErrorCode(checkErr), c.name)
		require.Equal(t, fifoq.ErrorMessage(sendErr), fifoq.ErrorMessage(checkErr), c.name)
		var be, ce *fifoq.BatchError
		if errors.As(sendErr, &be) {
			require.True(t, errors.As(checkErr, &ce), c.name)
			require.Len(t, ce.Entries, len(be.Entries), c.name)
			for i := range be.Entries {
				require.Equal(t, be.Entries[i].Index, ce.Entries[i].Index, c.name)
			}
		}
	}
	require.ErrorIs(t, fifoq.CheckBatch(nil, false), fifoq.ErrEmptyBatch)
	require.ErrorIs(t, fifoq.CheckBatch(make([]fifoq.Message, 11), false), fifoq.ErrTooManyEntries)
	require.ErrorIs(t, fifoq.CheckBatch([]fifoq.Message{{Body: strings.Repeat("x", 600<<10)}, {Body: strings.Repeat("x", 600<<10)}}, false),
		fifoq.ErrBatchTooLong)
}

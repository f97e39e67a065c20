package topic_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/topic"
)

// CheckMessage and CheckBatch refuse what Publish and PublishBatch refuse on a topic of the type that
// deduplicates by content: the same sentinel, code and SNS message, for every rule they share. They are the
// one home of those rules for code that publishes elsewhere (the SNS adapter).
func TestCheckMessageAsPublish(t *testing.T) {
	t.Parallel()
	attr := func(name, typ, value string) map[string]fifoq.Attribute {
		return map[string]fifoq.Attribute{name: {DataType: typ, StringValue: value}}
	}
	cases := []struct {
		name string
		m    topic.Message
		fifo bool
	}{
		{"good standard", topic.Message{Message: "m"}, false},
		{"good FIFO", topic.Message{Message: "m", GroupID: "g"}, true},
		{"good FIFO with a deduplication id", topic.Message{Message: "m", GroupID: "g", DeduplicationID: "d"}, true},
		{"empty message", topic.Message{}, false},
		{"not UTF-8", topic.Message{Message: "a\xffb"}, false},
		{"too large", topic.Message{Message: strings.Repeat("x", 256<<10+1)}, false},
		{"subject", topic.Message{Message: "m", Subject: "\nx"}, false},
		{"structure", topic.Message{Message: "m", MessageStructure: "xml"}, false},
		{"structure without default", topic.Message{Message: `{"sqs": "x"}`, MessageStructure: "json"}, false},
		{"attribute type", topic.Message{Message: "m", Attributes: attr("a", "Date", "x")}, false},
		{"attribute name", topic.Message{Message: "m", Attributes: attr("AWS.x", "String", "x")}, false},
		{"attribute number", topic.Message{Message: "m", Attributes: attr("n", "Number", "ten")}, false},
		{"FIFO no group", topic.Message{Message: "m"}, true},
		{"bad group", topic.Message{Message: "m", GroupID: strings.Repeat("g", 129)}, true},
		{"dedup id on standard", topic.Message{Message: "m", DeduplicationID: "d"}, false},
		{"bad dedup id", topic.Message{Message: "m", GroupID: "g", DeduplicationID: "a b"}, true},
		{"trace header", topic.Message{Message: "m", TraceHeader: strings.Repeat("t", 1025)}, false},
	}
	for _, c := range cases {
		name, opts := "std", []topic.Option{}
		if c.fifo {
			name, opts = "t.fifo", append(opts, topic.WithContentBasedDeduplication())
		}
		tp, err := topic.New(name, opts...)
		require.NoError(t, err)
		_, pubErr := tp.Publish(t.Context(), c.m)
		checkErr := topic.CheckMessage(c.m, c.fifo)
		same(t, c.name, pubErr, checkErr)

		// The same message as the second entry of a batch: the whole call fails, naming the entry.
		good := topic.Message{Message: "ok"}
		if c.fifo {
			good.GroupID = "g"
		}
		batch := []topic.Message{good, c.m}
		_, pubErr = tp.PublishBatch(t.Context(), batch)
		checkErr = topic.CheckBatch(batch, c.fifo)
		same(t, c.name+" in a batch", pubErr, checkErr)
		if pubErr != nil && !errors.Is(pubErr, topic.ErrBatchTooLong) { // a too large entry makes the batch too long
			require.ErrorContains(t, checkErr, "entry 1: ", c.name)
		}
	}

	// What fails a batch as a whole.
	tp, err := topic.New("whole")
	require.NoError(t, err)
	for _, batch := range [][]topic.Message{
		nil,
		make([]topic.Message, 11),
		{{Message: strings.Repeat("x", 200<<10)}, {Message: strings.Repeat("x", 100<<10)}},
	} {
		_, pubErr := tp.PublishBatch(t.Context(), batch)
		require.Error(t, pubErr)
		same(t, "batch", pubErr, topic.CheckBatch(batch, false))
	}
}

// same requires the error of a check to be the error of the call it stands for.
func same(t *testing.T, name string, callErr, checkErr error) {
	t.Helper()
	require.Equal(t, callErr == nil, checkErr == nil, "%s: call %v, check %v", name, callErr, checkErr)
	require.Equal(t, fifoq.ErrorCode(callErr), fifoq.ErrorCode(checkErr), name)
	require.Equal(t, fifoq.ErrorMessage(callErr), fifoq.ErrorMessage(checkErr), name)
	var sentinel *fifoq.Error
	if errors.As(callErr, &sentinel) {
		require.ErrorIs(t, checkErr, sentinel, name)
	}
}

package fifoq_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// Tests of FIFO deduplication (spec §3). Helpers are in delay_test.go.

func dlSHA256(body string) string {
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:])
}

// dlRequireDuplicateOf checks that r is a suppressed send reporting the original's ids (spec 3.9).
func dlRequireDuplicateOf(t *testing.T, orig, r fifoq.SendResult, msgAndArgs ...any) {
	t.Helper()
	require.False(t, orig.Duplicate, msgAndArgs...)
	require.True(t, r.Duplicate, msgAndArgs...)
	require.Equal(t, orig.MessageID, r.MessageID, msgAndArgs...)
	require.Equal(t, orig.SequenceNumber, r.SequenceNumber, msgAndArgs...)
}

// Spec 3.4, 3.9 (scenario 26): a second send with an explicit deduplication id already accepted succeeds with
// Duplicate set and the original's MessageID and SequenceNumber; it changes nothing stored and its body is
// never delivered.
func TestDedupExplicitIDDuplicateSuppressed(t *testing.T) {
	t.Parallel()
	q := dlNewQueue(t, "dl-dedup.fifo")
	r1 := dlSend(t, q, fifoq.Message{Body: "b1", GroupID: "g", DeduplicationID: "d"})
	require.False(t, r1.Duplicate)
	require.NotEmpty(t, r1.SequenceNumber)
	before := slices.Collect(q.Messages())
	r2 := dlSend(t, q, fifoq.Message{Body: "b2", GroupID: "g", DeduplicationID: "d",
		Attributes: map[string]fifoq.Attribute{"a": {DataType: "String", StringValue: "v"}}})
	dlRequireDuplicateOf(t, r1, r2, "second send of dedup id d")
	require.Equal(t, before, slices.Collect(q.Messages()), "a duplicate send changes nothing stored")
	require.Equal(t, fifoq.Stats{Visible: 1}, q.Stats())

	ds := dlReceive(t, q, 10)
	require.Equal(t, []string{"b1"}, dlBodies(ds))
	require.Equal(t, r1.MessageID, ds[0].MessageID)
	require.Equal(t, r1.SequenceNumber, ds[0].SequenceNumber)
	require.Equal(t, "d", ds[0].DeduplicationID)
	dlDelete(t, q, ds...)
	require.Empty(t, dlReceive(t, q, 10), "b2 is never delivered")
	require.Equal(t, fifoq.Stats{}, q.Stats())
}

// Spec 3.4 (scenario 28): the deduplication interval is exactly 5 minutes from the accepted send: at 4m59s
// (and at 5m-1ns) the same id is still a duplicate, which does not extend the interval; at 5m it is a new
// message with a new MessageID, delivered after the first. The same holds under both scopes.
func TestDedupWindowFiveMinutes(t *testing.T) {
	t.Parallel()
	for _, scope := range []fifoq.DeduplicationScope{fifoq.DeduplicationScopeQueue, fifoq.DeduplicationScopeMessageGroup} {
		t.Run(scope.String(), func(t *testing.T) {
			dlEachClock(t, func(t *testing.T, c *dlClock) {
				q := c.newQueue(t, "dl-window.fifo", fifoq.WithDeduplicationScope(scope))
				r1 := dlSend(t, q, fifoq.Message{Body: "first", GroupID: "g", DeduplicationID: "d"})
				c.advance(4*time.Minute + 59*time.Second)
				r2 := dlSend(t, q, fifoq.Message{Body: "at-4m59s", GroupID: "g", DeduplicationID: "d"})
				dlRequireDuplicateOf(t, r1, r2, "at 4m59s")
				c.advance(time.Second - time.Nanosecond)
				r3 := dlSend(t, q, fifoq.Message{Body: "at-5m-1ns", GroupID: "g", DeduplicationID: "d"})
				dlRequireDuplicateOf(t, r1, r3, "at 5m-1ns")
				c.advance(time.Nanosecond)
				r4 := dlSend(t, q, fifoq.Message{Body: "at-5m", GroupID: "g", DeduplicationID: "d"})
				require.False(t, r4.Duplicate, "at 5m the id is new again")
				require.NotEqual(t, r1.MessageID, r4.MessageID, "at 5m: a new MessageID")
				require.Greater(t, r4.SequenceNumber, r1.SequenceNumber, "at 5m: a later SequenceNumber")
				require.Equal(t, []string{"first", "at-5m"}, dlBodies(dlReceive(t, q, 10)))
			})
		})
	}
}

// Spec 3.5 (scenario 27): deduplication is tracked after the original is received and deleted: the resend
// is accepted as a duplicate and nothing is delivered, until 5 minutes after the original send.
func TestDedupSurvivesDelete(t *testing.T) {
	t.Parallel()
	dlEachClock(t, func(t *testing.T, c *dlClock) {
		q := c.newQueue(t, "dl-deleted.fifo")
		r1 := dlSend(t, q, fifoq.Message{Body: "b", GroupID: "g", DeduplicationID: "d"})
		dlDelete(t, q, dlReceive(t, q, 1)...)
		require.Equal(t, fifoq.Stats{}, q.Stats())
		c.advance(time.Minute)
		r2 := dlSend(t, q, fifoq.Message{Body: "b", GroupID: "g", DeduplicationID: "d"})
		dlRequireDuplicateOf(t, r1, r2, "resend after delete")
		require.Empty(t, dlReceive(t, q, 10), "nothing is delivered")
		require.Empty(t, dlStored(q))
		c.advance(4 * time.Minute)
		r3 := dlSend(t, q, fifoq.Message{Body: "b", GroupID: "g", DeduplicationID: "d"})
		require.False(t, r3.Duplicate, "5m after the original")
		require.Equal(t, []string{"b"}, dlBodies(dlReceive(t, q, 10)))
	})
}

// Spec 3.3 (scenario 29): content-based deduplication uses the hex SHA-256 of the body only.
func TestDedupContentBased(t *testing.T) {
	t.Parallel()
	newQ := func(t *testing.T) *fifoq.Queue {
		return dlNewQueue(t, "dl-cbd.fifo", fifoq.WithContentBasedDeduplication())
	}
	t.Run("AttributesIgnored", func(t *testing.T) {
		q := newQ(t)
		r1 := dlSend(t, q, fifoq.Message{Body: "same", GroupID: "g",
			Attributes: map[string]fifoq.Attribute{"k": {DataType: "String", StringValue: "one"}}})
		r2 := dlSend(t, q, fifoq.Message{Body: "same", GroupID: "g",
			Attributes: map[string]fifoq.Attribute{"k": {DataType: "String", StringValue: "two"}, "n": {DataType: "Number", StringValue: "1"}}})
		dlRequireDuplicateOf(t, r1, r2, "same body, different attributes")
		ds := dlReceive(t, q, 10)
		require.Len(t, ds, 1, "one delivery")
		require.Equal(t, map[string]fifoq.Attribute{"k": {DataType: "String", StringValue: "one"}}, ds[0].Attributes,
			"the delivered message is the first one")
	})
	t.Run("GroupIgnoredUnderQueueScope", func(t *testing.T) {
		q := newQ(t)
		r1 := dlSend(t, q, fifoq.Message{Body: "same", GroupID: "g1"})
		r2 := dlSend(t, q, fifoq.Message{Body: "same", GroupID: "g2"})
		dlRequireDuplicateOf(t, r1, r2, "same body in another group")
	})
	t.Run("ExplicitIDsOverride", func(t *testing.T) {
		q := newQ(t)
		r1 := dlSend(t, q, fifoq.Message{Body: "same", GroupID: "g", DeduplicationID: "id-1"})
		r2 := dlSend(t, q, fifoq.Message{Body: "same", GroupID: "g", DeduplicationID: "id-2"})
		require.False(t, r2.Duplicate, "same body with different explicit ids")
		require.NotEqual(t, r1.MessageID, r2.MessageID)
		require.Equal(t, []string{"same", "same"}, dlBodies(dlReceive(t, q, 10)), "two deliveries")
	})
	t.Run("ExplicitIDEqualToHashIsDuplicate", func(t *testing.T) {
		q := newQ(t)
		r1 := dlSend(t, q, fifoq.Message{Body: "hello", GroupID: "g"})
		r2 := dlSend(t, q, fifoq.Message{Body: "other body", GroupID: "g", DeduplicationID: dlSHA256("hello")})
		dlRequireDuplicateOf(t, r1, r2, "explicit id = hex SHA-256 of an earlier body")
		r3 := dlSend(t, q, fifoq.Message{Body: "x", GroupID: "g", DeduplicationID: "explicit"})
		r4 := dlSend(t, q, fifoq.Message{Body: "y", GroupID: "g"})
		require.False(t, r4.Duplicate, "a hash is not matched by an unrelated explicit id")
		ds := dlReceive(t, q, 10)
		require.Equal(t, []string{"hello", "x", "y"}, dlBodies(ds))
		require.Equal(t, []string{r1.MessageID, r3.MessageID, r4.MessageID}, []string{ds[0].MessageID, ds[1].MessageID, ds[2].MessageID})
	})
	t.Run("HashIsOfBodyOnly", func(t *testing.T) {
		q := newQ(t)
		dlSend(t, q, fifoq.Message{Body: "body", GroupID: "g",
			Attributes: map[string]fifoq.Attribute{"k": {DataType: "String", StringValue: "v"}}})
		ds := dlReceive(t, q, 1)
		require.Len(t, ds, 1)
		require.Equal(t, dlSHA256("body"), ds[0].DeduplicationID, "the generated id is the hex SHA-256 of the body")

		gq := dlNewQueue(t, "dl-cbd-group.fifo", fifoq.WithContentBasedDeduplication(),
			fifoq.WithDeduplicationScope(fifoq.DeduplicationScopeMessageGroup))
		dlSend(t, gq, fifoq.Message{Body: "body", GroupID: "g"})
		ds = dlReceive(t, gq, 1)
		require.Len(t, ds, 1)
		require.Equal(t, dlSHA256("body"), ds[0].DeduplicationID, "under message-group scope too (3.7)")
	})
}

// Spec 3.6 (scenario 30): the default scope, and DeduplicationScopeQueue, deduplicate across groups.
func TestDedupScopeQueue(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string][]fifoq.Option{
		"default":  nil,
		"explicit": {fifoq.WithDeduplicationScope(fifoq.DeduplicationScopeQueue)},
	} {
		t.Run(name, func(t *testing.T) {
			q := dlNewQueue(t, "dl-scope.fifo", opts...)
			r1 := dlSend(t, q, fifoq.Message{Body: "in g1", GroupID: "g1", DeduplicationID: "d"})
			r2 := dlSend(t, q, fifoq.Message{Body: "in g2", GroupID: "g2", DeduplicationID: "d"})
			dlRequireDuplicateOf(t, r1, r2, "same id in another group")
			require.Equal(t, []string{"in g1"}, dlBodies(dlReceive(t, q, 10)))
		})
	}
}

// Spec 3.7 (scenario 31): DeduplicationScopeMessageGroup deduplicates per (group, id): the same id in g1
// and g2 gives two deliveries; the same id twice in g1 gives one. Content-based ids too.
func TestDedupScopeMessageGroup(t *testing.T) {
	t.Parallel()
	q := dlNewQueue(t, "dl-scope.fifo", fifoq.WithDeduplicationScope(fifoq.DeduplicationScopeMessageGroup),
		fifoq.WithContentBasedDeduplication())
	r1 := dlSend(t, q, fifoq.Message{Body: "g1-a", GroupID: "g1", DeduplicationID: "d"})
	r2 := dlSend(t, q, fifoq.Message{Body: "g2-a", GroupID: "g2", DeduplicationID: "d"})
	require.False(t, r2.Duplicate, "same id in another group")
	require.NotEqual(t, r1.MessageID, r2.MessageID)
	r3 := dlSend(t, q, fifoq.Message{Body: "g1-b", GroupID: "g1", DeduplicationID: "d"})
	dlRequireDuplicateOf(t, r1, r3, "same id twice in g1")
	r4 := dlSend(t, q, fifoq.Message{Body: "body", GroupID: "g1"})
	r5 := dlSend(t, q, fifoq.Message{Body: "body", GroupID: "g2"})
	require.False(t, r5.Duplicate, "same body in another group")
	r6 := dlSend(t, q, fifoq.Message{Body: "body", GroupID: "g2"})
	dlRequireDuplicateOf(t, r5, r6, "same body twice in g2")
	require.NotEqual(t, r4.MessageID, r5.MessageID)
	require.Equal(t, []string{"g1-a", "g2-a", "body", "body"}, dlStored(q))
}

// Spec 3.10 (scenario 34): Purge clears the deduplication history; a resend after it is delivered.
func TestDedupPurgeClearsHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := dlNewQueue(t, "dl-purge.fifo", fifoq.WithContentBasedDeduplication())
	r1 := dlSend(t, q, fifoq.Message{Body: "b", GroupID: "g", DeduplicationID: "d"})
	r2 := dlSend(t, q, fifoq.Message{Body: "c", GroupID: "g"})
	require.NoError(t, q.Purge(ctx))
	r3 := dlSend(t, q, fifoq.Message{Body: "b", GroupID: "g", DeduplicationID: "d"})
	require.False(t, r3.Duplicate, "explicit id after purge")
	require.NotEqual(t, r1.MessageID, r3.MessageID)
	r4 := dlSend(t, q, fifoq.Message{Body: "c", GroupID: "g"})
	require.False(t, r4.Duplicate, "content-based id after purge")
	require.NotEqual(t, r2.MessageID, r4.MessageID)
	require.Equal(t, []string{"b", "c"}, dlBodies(dlReceive(t, q, 10)))
}

// Spec 3.4, 2.5, 7.2.3: within one SendBatch a later entry with the id of an earlier one is a duplicate of
// it; an entry that failed validation was never accepted, so it deduplicates nothing.
func TestDedupWithinSendBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := dlNewQueue(t, "dl-batch.fifo", fifoq.WithContentBasedDeduplication())
	res, err := q.SendBatch(ctx, []fifoq.Message{
		{Body: "a", GroupID: "g", DeduplicationID: "d1"},
		{Body: "b", GroupID: "g", DeduplicationID: "d1"},
		{Body: "c", GroupID: "g", DeduplicationID: "d2"},
		{Body: "same", GroupID: "g"},
		{Body: "same", GroupID: "g2"},
	})
	require.NoError(t, err)
	require.Len(t, res, 5)
	dlRequireDuplicateOf(t, res[0], res[1], "entry 1 repeats entry 0's id")
	require.False(t, res[2].Duplicate)
	dlRequireDuplicateOf(t, res[3], res[4], "entry 4 repeats entry 3's body")
	require.Equal(t, []string{"a", "c", "same"}, dlStored(q))

	res, err = q.SendBatch(ctx, []fifoq.Message{
		{Body: "\x00invalid", GroupID: "g", DeduplicationID: "d3"},
		{Body: "valid", GroupID: "g", DeduplicationID: "d3"},
	})
	var be *fifoq.BatchError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Entries, 1)
	require.Equal(t, 0, be.Entries[0].Index)
	require.False(t, res[1].Duplicate, "the failed entry 0 did not take id d3")
	require.Equal(t, []string{"a", "c", "same", "valid"}, dlStored(q))
}

// Spec 3.4, 7.1: a rejected Send does not take its deduplication id.
func TestDedupRejectedSendTakesNoID(t *testing.T) {
	t.Parallel()
	q := dlNewQueue(t, "dl-rejected.fifo", fifoq.WithMaxMessageSize(1024))
	_, err := q.Send(context.Background(), fifoq.Message{Body: strings.Repeat("a", 1025), GroupID: "g", DeduplicationID: "d"})
	require.ErrorIs(t, err, fifoq.ErrMessageTooLarge)
	r := dlSend(t, q, fifoq.Message{Body: "ok", GroupID: "g", DeduplicationID: "d"})
	require.False(t, r.Duplicate)
	require.Equal(t, []string{"ok"}, dlBodies(dlReceive(t, q, 10)))
}

// Spec §3 (FIFO only), 1.1.3: a standard queue does not deduplicate: the same body twice is two messages.
func TestDedupNotOnStandardQueues(t *testing.T) {
	t.Parallel()
	q := dlNewQueue(t, "dl-std")
	r1 := dlSend(t, q, fifoq.Message{Body: "same"})
	r2 := dlSend(t, q, fifoq.Message{Body: "same"})
	require.False(t, r2.Duplicate)
	require.NotEqual(t, r1.MessageID, r2.MessageID)
	require.Equal(t, []string{"same", "same"}, dlBodies(dlReceive(t, q, 10)))
}

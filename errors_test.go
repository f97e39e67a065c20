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

// Tests of the error contract (design/API.md "Errors", style items 7 and 8): every sentinel is matched with
// errors.Is and carries the SQS error code of its rule, and a rejected call changes nothing. Helpers are in
// delay_test.go.

// dlFIFO is a FIFO queue with content-based deduplication on a frozen manual clock.
func dlFIFO(t *testing.T, opts ...fifoq.Option) *fifoq.Queue {
	t.Helper()
	return dlNewQueue(t, "dl-errors.fifo", append([]fifoq.Option{fifoq.WithContentBasedDeduplication()}, opts...)...)
}

// Every sentinel error: a call that triggers it, errors.Is, errors.As to *fifoq.Error, and the SQS error code
// of the rule (spec section in the case name).
func TestErrorSentinels(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		name     string
		sentinel error
		code     string
		trigger  func(t *testing.T) error
	}{
		{"7.3.1/queue name", fifoq.ErrInvalidQueueName, "InvalidParameterValue", func(t *testing.T) error {
			_, err := fifoq.New("a b")
			return err
		}},
		{"1.2.1/queue attribute", fifoq.ErrInvalidQueueAttribute, "InvalidAttributeValue", func(t *testing.T) error {
			_, err := fifoq.New("q", fifoq.WithVisibilityTimeout(-time.Second))
			return err
		}},
		{"3.12/FIFO-only attribute", fifoq.ErrFIFOOnly, "InvalidAttributeName", func(t *testing.T) error {
			_, err := fifoq.New("q", fifoq.WithContentBasedDeduplication())
			return err
		}},
		{"7.1.1/empty body", fifoq.ErrEmptyBody, "MissingParameter", func(t *testing.T) error {
			_, err := dlNewQueue(t, "q").Send(ctx, fifoq.Message{})
			return err
		}},
		{"7.1.1/invalid characters", fifoq.ErrInvalidMessageContents, "InvalidMessageContents", func(t *testing.T) error {
			_, err := dlNewQueue(t, "q").Send(ctx, fifoq.Message{Body: "a\x00"})
			return err
		}},
		{"7.1.2/message too large", fifoq.ErrMessageTooLarge, "InvalidParameterValue", func(t *testing.T) error {
			_, err := dlNewQueue(t, "q").Send(ctx, fifoq.Message{Body: strings.Repeat("a", 1<<20+1)})
			return err
		}},
		{"7.1.3/message attribute", fifoq.ErrInvalidMessageAttribute, "InvalidParameterValue", func(t *testing.T) error {
			_, err := dlNewQueue(t, "q").Send(ctx, dlAttrMsg("AWS.x", dlStr("v")))
			return err
		}},
		{"2.2/missing group id", fifoq.ErrMissingGroupID, "MissingParameter", func(t *testing.T) error {
			_, err := dlFIFO(t).Send(ctx, fifoq.Message{Body: "b"})
			return err
		}},
		{"2.3/invalid group id", fifoq.ErrInvalidGroupID, "InvalidParameterValue", func(t *testing.T) error {
			_, err := dlFIFO(t).Send(ctx, fifoq.Message{Body: "b", GroupID: "group 123"})
			return err
		}},
		{"3.1/missing deduplication id", fifoq.ErrMissingDeduplicationID, "InvalidParameterValue", func(t *testing.T) error {
			_, err := dlNewQueue(t, "q.fifo").Send(ctx, fifoq.Message{Body: "b", GroupID: "g"})
			return err
		}},
		{"3.2/invalid deduplication id", fifoq.ErrInvalidDeduplicationID, "InvalidParameterValue", func(t *testing.T) error {
			_, err := dlFIFO(t).Send(ctx, fifoq.Message{Body: "b", GroupID: "g", DeduplicationID: strings.Repeat("d", 129)})
			return err
		}},
		{"4.3/FIFO per-message delay", fifoq.ErrInvalidDelay, "InvalidParameterValue", func(t *testing.T) error {
			_, err := dlFIFO(t).Send(ctx, fifoq.Message{Body: "b", GroupID: "g", Delay: 2 * time.Second})
			return err
		}},
		{"7.2.1/empty batch", fifoq.ErrEmptyBatch, "AWS.SimpleQueueService.EmptyBatchRequest", func(t *testing.T) error {
			_, err := dlNewQueue(t, "q").SendBatch(ctx, nil)
			return err
		}},
		{"7.2.1/too many entries", fifoq.ErrTooManyEntries, "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", func(t *testing.T) error {
			_, err := dlNewQueue(t, "q").SendBatch(ctx, dlBatch(11))
			return err
		}},
		{"7.2.2/batch too long", fifoq.ErrBatchTooLong, "AWS.SimpleQueueService.BatchRequestTooLong", func(t *testing.T) error {
			_, err := dlNewQueue(t, "q").SendBatch(ctx, []fifoq.Message{{Body: strings.Repeat("a", 1<<19)}, {Body: strings.Repeat("a", 1<<19+1)}})
			return err
		}},
		{"1.5.4/MaxMessages", fifoq.ErrInvalidMaxMessages, "InvalidParameterValue", func(t *testing.T) error {
			_, err := dlNewQueue(t, "q").Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 11})
			return err
		}},
		{"1.5.1/WaitTime", fifoq.ErrInvalidWaitTime, "InvalidParameterValue", func(t *testing.T) error {
			_, err := dlNewQueue(t, "q").Receive(ctx, fifoq.ReceiveOptions{WaitTime: 21 * time.Second})
			return err
		}},
		{"1.2.1/VisibilityTimeout", fifoq.ErrInvalidVisibilityTimeout, "InvalidParameterValue", func(t *testing.T) error {
			_, err := dlNewQueue(t, "q").Receive(ctx, fifoq.ReceiveOptions{VisibilityTimeout: 12*time.Hour + time.Nanosecond})
			return err
		}},
		{"2.15.1/attempt id", fifoq.ErrInvalidAttemptID, "InvalidParameterValue", func(t *testing.T) error {
			_, err := dlFIFO(t).Receive(ctx, fifoq.ReceiveOptions{AttemptID: "a b"})
			return err
		}},
		{"2.15.3/attempt not retryable", fifoq.ErrAttemptNotRetryable, "InvalidParameterValue", func(t *testing.T) error {
			q := dlFIFO(t)
			dlSend(t, q, fifoq.Message{Body: "b", GroupID: "g"})
			ds, err := q.Receive(ctx, fifoq.ReceiveOptions{AttemptID: "x"})
			require.NoError(t, err)
			require.Len(t, ds, 1)
			dlDelete(t, q, ds...)
			_, err = q.Receive(ctx, fifoq.ReceiveOptions{AttemptID: "x"})
			return err
		}},
		{"1.3.4/receipt handle invalid", fifoq.ErrReceiptHandleInvalid, "ReceiptHandleIsInvalid", func(t *testing.T) error {
			return dlNewQueue(t, "q").Delete(ctx, "garbage")
		}},
		{"1.3.5/receipt handle expired", fifoq.ErrReceiptHandleExpired, "InvalidParameterValue", func(t *testing.T) error {
			q := dlFIFO(t)
			dlSend(t, q, fifoq.Message{Body: "b", GroupID: "g"})
			ds := dlReceive(t, q, 1)
			require.Len(t, ds, 1)
			require.NoError(t, q.ChangeVisibility(ctx, ds[0].ReceiptHandle, 0))
			return q.Delete(ctx, ds[0].ReceiptHandle)
		}},
		{"1.3.4/message not available", fifoq.ErrMessageNotAvailable, "InvalidParameterValue", func(t *testing.T) error {
			q := dlNewQueue(t, "q")
			dlSend(t, q, fifoq.Message{Body: "b"})
			ds := dlReceive(t, q, 1)
			require.Len(t, ds, 1)
			dlDelete(t, q, ds...)
			return q.ChangeVisibility(ctx, ds[0].ReceiptHandle, time.Second)
		}},
		{"7.3.3/purge in progress", fifoq.ErrPurgeInProgress, "AWS.SimpleQueueService.PurgeQueueInProgress", func(t *testing.T) error {
			q := dlNewQueue(t, "q")
			require.NoError(t, q.Purge(ctx))
			return q.Purge(ctx)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.code, fifoq.ErrorCode(tc.sentinel), "the sentinel's own code")
			require.True(t, strings.HasPrefix(tc.sentinel.Error(), "fifoq: "), "sentinel text %q", tc.sentinel)
			err := tc.trigger(t)
			require.ErrorIs(t, err, tc.sentinel)
			require.Equal(t, tc.code, fifoq.ErrorCode(err), "ErrorCode(%v)", err)
			var fe *fifoq.Error
			require.ErrorAs(t, err, &fe)
			require.Equal(t, tc.code, fe.Code)
			require.Contains(t, err.Error(), tc.sentinel.Error(), "the error wraps the sentinel with detail")
			for _, other := range cases {
				if other.sentinel != tc.sentinel {
					require.NotErrorIs(t, err, other.sentinel, "%v must match only its own sentinel", err)
				}
			}
		})
	}
}

// ErrorCode of nil and of errors that are not fifoq rejections is "".
func TestErrorCodeOfOtherErrors(t *testing.T) {
	t.Parallel()
	require.Equal(t, "", fifoq.ErrorCode(nil))
	require.Equal(t, "", fifoq.ErrorCode(errors.New("other")))
	require.Equal(t, "", fifoq.ErrorCode(context.Canceled))
	require.Equal(t, "ReceiptHandleIsInvalid", fifoq.ErrorCode(fmt.Errorf("wrapped: %w", fifoq.ErrReceiptHandleInvalid)))
}

// Spec 7.1.1, 7.2.3: a *BatchError matches the sentinel of each failed entry and reports the code of the
// entry; its text names every failed entry.
func TestErrorBatchErrorCodes(t *testing.T) {
	t.Parallel()
	q := dlNewQueue(t, "dl-batch")
	_, err := q.SendBatch(context.Background(), []fifoq.Message{{Body: "ok"}, {Body: "\x01"}})
	var be *fifoq.BatchError
	require.ErrorAs(t, err, &be)
	require.ErrorIs(t, err, fifoq.ErrInvalidMessageContents)
	require.Equal(t, "InvalidMessageContents", fifoq.ErrorCode(err))
	require.Contains(t, err.Error(), "entry 1")
	err = q.DeleteBatch(context.Background(), []string{"garbage-1", "garbage-2"})
	require.ErrorAs(t, err, &be)
	require.Equal(t, []int{0, 1}, []int{be.Entries[0].Index, be.Entries[1].Index})
	require.ErrorIs(t, err, fifoq.ErrReceiptHandleInvalid)
	require.Equal(t, "ReceiptHandleIsInvalid", fifoq.ErrorCode(be.Entries[1].Err))
}

// Spec 2.2: in SendMessageBatch an entry without MessageGroupId fails the whole request with HTTP 400
// InvalidParameterValue, not MissingParameter, the code of a single SendMessage without one.
func TestErrorCodeSendBatchFIFOMissingGroupID(t *testing.T) {
	t.Parallel()
	ms := dlBatch(3)
	ms[1].GroupID = ""
	_, err := dlFIFO(t).SendBatch(context.Background(), ms)
	require.ErrorIs(t, err, fifoq.ErrMissingGroupID)
	require.Equal(t, "InvalidParameterValue", fifoq.ErrorCode(err), "SendBatch entry without a group id: %v", err)
}

// Spec 3.1: in SendMessageBatch an entry without a deduplication id (no content-based deduplication) fails
// the whole request with InvalidParameterValue.
func TestErrorCodeSendBatchFIFOMissingDeduplicationID(t *testing.T) {
	t.Parallel()
	_, err := dlNewQueue(t, "dl-explicit.fifo").SendBatch(context.Background(), dlBatch(3))
	require.ErrorIs(t, err, fifoq.ErrMissingDeduplicationID)
	require.Equal(t, "InvalidParameterValue", fifoq.ErrorCode(err))
}

// dlBusy is a queue holding visible, in-flight and delayed messages (and, on FIFO, a visible message waiting
// behind the in-flight one), purged once just before it was filled, on a manual clock that no longer moves.
type dlBusy struct {
	q        *fifoq.Queue
	inflight string // the receipt handle of the in-flight message
	other    string // a receipt handle of another queue
}

func dlNewBusy(t *testing.T, fifo bool) dlBusy {
	t.Helper()
	ctx := context.Background()
	clk := fifoq.NewManualClock(dlStart)
	other := dlNewQueue(t, "dl-other")
	dlSend(t, other, fifoq.Message{Body: "x"})
	od := dlReceive(t, other, 1)
	require.Len(t, od, 1)
	if !fifo {
		q, err := fifoq.New("dl-busy", fifoq.WithClock(clk), fifoq.WithVisibilityTimeout(10*time.Minute))
		require.NoError(t, err)
		require.NoError(t, q.Purge(ctx))
		dlSend(t, q, fifoq.Message{Body: "inflight", GroupID: "t1"})
		dlSend(t, q, fifoq.Message{Body: "visible-1", Attributes: map[string]fifoq.Attribute{"k": dlStr("v")}})
		dlSend(t, q, fifoq.Message{Body: "visible-2"})
		dlSend(t, q, fifoq.Message{Body: "delayed", Delay: 5 * time.Minute})
		ds := dlReceive(t, q, 1)
		require.Equal(t, []string{"inflight"}, dlBodies(ds))
		require.Equal(t, fifoq.Stats{Visible: 2, InFlight: 1, Delayed: 1}, q.Stats())
		return dlBusy{q: q, inflight: ds[0].ReceiptHandle, other: od[0].ReceiptHandle}
	}
	// Explicit deduplication ids (no content-based deduplication), so a missing one is an error.
	q, err := fifoq.New("dl-busy.fifo", fifoq.WithClock(clk), fifoq.WithVisibilityTimeout(10*time.Minute),
		fifoq.WithDelay(30*time.Second))
	require.NoError(t, err)
	require.NoError(t, q.Purge(ctx))
	dlSend(t, q, fifoq.Message{Body: "inflight", GroupID: "g1", DeduplicationID: "d1"})
	dlSend(t, q, fifoq.Message{Body: "visible-1", GroupID: "g1", DeduplicationID: "d2",
		Attributes: map[string]fifoq.Attribute{"k": dlStr("v")}})
	dlSend(t, q, fifoq.Message{Body: "visible-2", GroupID: "g2", DeduplicationID: "d3"})
	clk.Advance(30 * time.Second)
	ds, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 1, AttemptID: "dl-attempt"})
	require.NoError(t, err)
	require.Equal(t, []string{"inflight"}, dlBodies(ds))
	// Changing the visibility makes the attempt id not retryable (2.15.3).
	require.NoError(t, q.ChangeVisibility(ctx, ds[0].ReceiptHandle, 10*time.Minute))
	dlSend(t, q, fifoq.Message{Body: "delayed", GroupID: "g3", DeduplicationID: "d4"})
	require.Equal(t, fifoq.Stats{Visible: 2, InFlight: 1, Delayed: 1}, q.Stats())
	return dlBusy{q: q, inflight: ds[0].ReceiptHandle, other: od[0].ReceiptHandle}
}

// Design API.md "Errors", style item 7: every rejected call changes nothing. For each rejection, on a queue
// holding visible, in-flight and delayed messages, Stats and the full Messages snapshot are equal before and
// after the call.
func TestErrorRejectedCallChangesNothing(t *testing.T) {
	t.Parallel()
	const (
		std  = 1
		fifo = 2
		both = std | fifo
	)
	send := func(m fifoq.Message) func(context.Context, dlBusy) error {
		return func(ctx context.Context, b dlBusy) error {
			_, err := b.q.Send(ctx, m)
			return err
		}
	}
	sendBatch := func(ms []fifoq.Message) func(context.Context, dlBusy) error {
		return func(ctx context.Context, b dlBusy) error {
			_, err := b.q.SendBatch(ctx, ms)
			return err
		}
	}
	receive := func(o fifoq.ReceiveOptions) func(context.Context, dlBusy) error {
		return func(ctx context.Context, b dlBusy) error {
			_, err := b.q.Receive(ctx, o)
			return err
		}
	}
	changeVisibility := func(d time.Duration) func(context.Context, dlBusy) error {
		return func(ctx context.Context, b dlBusy) error { return b.q.ChangeVisibility(ctx, b.inflight, d) }
	}
	withIDs := func(ms []fifoq.Message) []fifoq.Message {
		for i := range ms {
			if ms[i].DeduplicationID == "" {
				ms[i].DeduplicationID = fmt.Sprintf("new-%d", i)
			}
		}
		return ms
	}
	batchNoGroup := withIDs(dlBatch(10))
	batchNoGroup[9].GroupID = ""
	batchNoDedup := withIDs(dlBatch(10))
	batchNoDedup[0].DeduplicationID = ""
	allBad := withIDs([]fifoq.Message{{Body: "", GroupID: "g"}, {Body: "\x00", GroupID: "g"}, {Body: "b", GroupID: "g a"}})
	g := func(m fifoq.Message) fifoq.Message { m.GroupID, m.DeduplicationID = "g1", "new"; return m }
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()

	cases := []struct {
		name  string
		kinds int
		call  func(context.Context, dlBusy) error
		want  error
	}{
		{"7.1.1/empty body", both, send(g(fifoq.Message{})), fifoq.ErrEmptyBody},
		{"7.1.1/invalid character", both, send(g(fifoq.Message{Body: "a\uFFFEb"})), fifoq.ErrInvalidMessageContents},
		{"7.1.1/invalid UTF-8", both, send(g(fifoq.Message{Body: "a\xffb"})), fifoq.ErrInvalidMessageContents},
		{"7.1.2/too large", both, send(g(fifoq.Message{Body: strings.Repeat("a", 1<<20+1)})), fifoq.ErrMessageTooLarge},
		{"7.1.3/11 attributes", both, send(g(dlAttrs(11))), fifoq.ErrInvalidMessageAttribute},
		{"7.1.3/reserved name", both, send(g(dlAttrMsg("amazon.x", dlStr("v")))), fifoq.ErrInvalidMessageAttribute},
		{"7.1.3/bad type", both, send(g(dlAttrMsg("k", fifoq.Attribute{DataType: "Text", StringValue: "v"}))), fifoq.ErrInvalidMessageAttribute},
		{"7.1.3/empty value", both, send(g(dlAttrMsg("k", dlStr("")))), fifoq.ErrInvalidMessageAttribute},
		{"7.1.3/bad number", both, send(g(dlAttrMsg("k", fifoq.Attribute{DataType: "Number", StringValue: "1e127"}))), fifoq.ErrInvalidMessageAttribute},
		{"2.2/missing group", fifo, send(fifoq.Message{Body: "b", DeduplicationID: "new"}), fifoq.ErrMissingGroupID},
		{"2.3/bad group", both, send(fifoq.Message{Body: "b", GroupID: "group 123"}), fifoq.ErrInvalidGroupID},
		{"3.1/missing dedup id", fifo, send(fifoq.Message{Body: "b", GroupID: "g1"}), fifoq.ErrMissingDeduplicationID},
		{"3.2/bad dedup id", fifo, send(fifoq.Message{Body: "b", GroupID: "g1", DeduplicationID: strings.Repeat("d", 129)}), fifoq.ErrInvalidDeduplicationID},
		{"3.2/dedup id on standard", std, send(fifoq.Message{Body: "b", DeduplicationID: "d"}), fifoq.ErrInvalidDeduplicationID},
		{"4.3/FIFO delay", fifo, send(g(fifoq.Message{Body: "b", Delay: time.Second})), fifoq.ErrInvalidDelay},
		{"4.2/delay over 15m", std, send(fifoq.Message{Body: "b", Delay: 15*time.Minute + time.Nanosecond}), fifoq.ErrInvalidDelay},
		{"4.2/negative delay", std, send(fifoq.Message{Body: "b", Delay: -time.Second}), fifoq.ErrInvalidDelay},
		{"7.2.1/empty batch", both, sendBatch(nil), fifoq.ErrEmptyBatch},
		{"7.2.1/11 entries", both, sendBatch(withIDs(dlBatch(11))), fifoq.ErrTooManyEntries},
		{"7.2.2/batch too long", both, sendBatch(withIDs([]fifoq.Message{{Body: strings.Repeat("a", 1<<19), GroupID: "g"}, {Body: strings.Repeat("a", 1<<19+1), GroupID: "g"}})), fifoq.ErrBatchTooLong},
		{"2.2/batch entry without group", fifo, sendBatch(batchNoGroup), fifoq.ErrMissingGroupID},
		{"3.1/batch entry without dedup id", fifo, sendBatch(batchNoDedup), fifoq.ErrMissingDeduplicationID},
		{"7.2.3/batch of invalid entries only", both, sendBatch(allBad), fifoq.ErrInvalidMessageContents},
		{"1.5.4/MaxMessages 11", both, receive(fifoq.ReceiveOptions{MaxMessages: 11}), fifoq.ErrInvalidMaxMessages},
		{"1.5.4/MaxMessages -1", both, receive(fifoq.ReceiveOptions{MaxMessages: -1}), fifoq.ErrInvalidMaxMessages},
		{"1.5.1/WaitTime -1s", both, receive(fifoq.ReceiveOptions{WaitTime: -time.Second}), fifoq.ErrInvalidWaitTime},
		{"1.5.1/WaitTime 21s", both, receive(fifoq.ReceiveOptions{WaitTime: 21 * time.Second}), fifoq.ErrInvalidWaitTime},
		{"1.2.1/receive visibility -1ns", both, receive(fifoq.ReceiveOptions{VisibilityTimeout: -time.Nanosecond}), fifoq.ErrInvalidVisibilityTimeout},
		{"1.2.1/receive visibility 12h+1ns", both, receive(fifoq.ReceiveOptions{VisibilityTimeout: 12*time.Hour + time.Nanosecond}), fifoq.ErrInvalidVisibilityTimeout},
		{"2.15.1/bad attempt id", fifo, receive(fifoq.ReceiveOptions{AttemptID: "a b"}), fifoq.ErrInvalidAttemptID},
		{"2.15.3/attempt not retryable", fifo, receive(fifoq.ReceiveOptions{AttemptID: "dl-attempt"}), fifoq.ErrAttemptNotRetryable},
		{"1.3.4/delete garbage handle", both, func(ctx context.Context, b dlBusy) error { return b.q.Delete(ctx, "garbage") }, fifoq.ErrReceiptHandleInvalid},
		{"1.3.4/delete another queue's handle", both, func(ctx context.Context, b dlBusy) error { return b.q.Delete(ctx, b.other) }, fifoq.ErrReceiptHandleInvalid},
		{"7.2.1/DeleteBatch empty", both, func(ctx context.Context, b dlBusy) error { return b.q.DeleteBatch(ctx, nil) }, fifoq.ErrEmptyBatch},
		{"7.2.1/DeleteBatch 11", both, func(ctx context.Context, b dlBusy) error {
			return b.q.DeleteBatch(ctx, slices.Repeat([]string{b.inflight}, 11))
		}, fifoq.ErrTooManyEntries},
		{"1.3.4/DeleteBatch of garbage", both, func(ctx context.Context, b dlBusy) error {
			return b.q.DeleteBatch(ctx, []string{"garbage", b.other})
		}, fifoq.ErrReceiptHandleInvalid},
		{"1.2.4/ChangeVisibility -1ns", both, changeVisibility(-time.Nanosecond), fifoq.ErrInvalidVisibilityTimeout},
		{"1.2.5/ChangeVisibility 12h+1ns", both, changeVisibility(12*time.Hour + time.Nanosecond), fifoq.ErrInvalidVisibilityTimeout},
		{"1.3.4/ChangeVisibility garbage handle", both, func(ctx context.Context, b dlBusy) error {
			return b.q.ChangeVisibility(ctx, "garbage", time.Second)
		}, fifoq.ErrReceiptHandleInvalid},
		{"7.2.1/ChangeVisibilityBatch empty", both, func(ctx context.Context, b dlBusy) error {
			return b.q.ChangeVisibilityBatch(ctx, []fifoq.VisibilityChange{})
		}, fifoq.ErrEmptyBatch},
		{"7.2.1/ChangeVisibilityBatch 11", both, func(ctx context.Context, b dlBusy) error {
			return b.q.ChangeVisibilityBatch(ctx, slices.Repeat([]fifoq.VisibilityChange{{ReceiptHandle: b.inflight}}, 11))
		}, fifoq.ErrTooManyEntries},
		{"1.2.4/ChangeVisibilityBatch of invalid entries", both, func(ctx context.Context, b dlBusy) error {
			return b.q.ChangeVisibilityBatch(ctx, []fifoq.VisibilityChange{{b.inflight, -time.Second}, {"garbage", 0}})
		}, fifoq.ErrInvalidVisibilityTimeout},
		{"7.3.3/purge within 60s", both, func(ctx context.Context, b dlBusy) error { return b.q.Purge(ctx) }, fifoq.ErrPurgeInProgress},
		{"cancelled context/Send", both, func(_ context.Context, b dlBusy) error {
			_, err := b.q.Send(cancelled, g(fifoq.Message{Body: "b"}))
			return err
		}, context.Canceled},
		{"cancelled context/Receive", both, func(_ context.Context, b dlBusy) error {
			_, err := b.q.Receive(cancelled, fifoq.ReceiveOptions{MaxMessages: 10})
			return err
		}, context.Canceled},
		{"cancelled context/Delete", both, func(_ context.Context, b dlBusy) error { return b.q.Delete(cancelled, b.inflight) }, context.Canceled},
		{"cancelled context/Purge", both, func(_ context.Context, b dlBusy) error {
			return b.q.Purge(cancelled)
		}, context.Canceled},
	}
	for _, tc := range cases {
		for _, kind := range []int{std, fifo} {
			if tc.kinds&kind == 0 {
				continue
			}
			t.Run(fmt.Sprintf("%s/%s", map[int]string{std: "standard", fifo: "FIFO"}[kind], tc.name), func(t *testing.T) {
				b := dlNewBusy(t, kind == fifo)
				stats, snap := b.q.Stats(), slices.Collect(b.q.Messages())
				require.Len(t, snap, 4)
				err := tc.call(context.Background(), b)
				require.ErrorIs(t, err, tc.want, "got %v", err)
				require.Equal(t, stats, b.q.Stats(), "Stats after the rejected call")
				require.Equal(t, snap, slices.Collect(b.q.Messages()), "Messages after the rejected call")
				// The in-flight message is still in flight under the same receipt.
				require.NoError(t, b.q.ChangeVisibility(context.Background(), b.inflight, time.Minute), "the in-flight handle still works")
			})
		}
	}
}

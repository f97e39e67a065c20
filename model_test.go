package fifoq_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/internal/model"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// The property tests: a rapid state machine drives a fifoq.Queue and the reference model in internal/model
// with the same random operations and clock jumps, and checks after every step that they agree, plus
// invariants that do not rely on the model (per-group order, one copy per deduplication id).
//
// The nesting is rapid.Check -> rapid.SyncTest -> t.Repeat (the other nesting panics). Inside the synctest
// bubble the queue's default clock is virtual: time.Sleep jumps it, and the model is given time.Now().

func TestModelFIFO(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		rapid.SyncTest(t, func(t *rapid.T) { mdlRun(t, true) })
	})
}

func TestModelStandard(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		rapid.SyncTest(t, func(t *rapid.T) { mdlRun(t, false) })
	})
}

// mdlSentinels maps the model's errors to the sentinels the queue must return.
var mdlSentinels = map[error]error{
	model.ErrReceiptInvalid:    fifoq.ErrReceiptHandleInvalid,
	model.ErrReceiptExpired:    fifoq.ErrReceiptHandleExpired,
	model.ErrNotAvailable:      fifoq.ErrMessageNotAvailable,
	model.ErrVisibilityTimeout: fifoq.ErrInvalidVisibilityTimeout,
	model.ErrPurgeInProgress:   fifoq.ErrPurgeInProgress,
}

var mdlStates = map[model.State]fifoq.MessageState{
	model.Visible:  fifoq.StateVisible,
	model.InFlight: fifoq.StateInFlight,
	model.Delayed:  fifoq.StateDelayed,
}

// mdlMachine is one run of the state machine.
type mdlMachine struct {
	ctx     context.Context
	fifo    bool
	cfg     model.Config
	q       *fifoq.Queue
	m       *model.Queue
	handles []string // every receipt handle q gave out, oldest first

	otherHandle string               // a well-formed receipt handle of another queue
	firstSeq    map[string]string    // FIFO: group -> sequence number of its latest first delivery
	stored      map[string]time.Time // FIFO: deduplication key -> when a message was last stored under it
}

// mdlDur draws a duration of n units, n in lo..hi.
func mdlDur(lo, hi int, unit time.Duration) *rapid.Generator[time.Duration] {
	return rapid.Map(rapid.IntRange(lo, hi), func(n int) time.Duration { return time.Duration(n) * unit })
}

func mdlRun(t *rapid.T, fifo bool) {
	ctx := context.Background()
	cfg := model.Config{
		FIFO:       fifo,
		Visibility: rapid.SampledFrom([]time.Duration{0, time.Second, 30 * time.Second}).Draw(t, "queueVisibility"),
		Delay:      rapid.SampledFrom([]time.Duration{0, 0, 2 * time.Second, time.Minute}).Draw(t, "queueDelay"),
		Retention:  rapid.SampledFrom([]time.Duration{time.Minute, 3 * time.Minute, 4 * 24 * time.Hour}).Draw(t, "retention"),
	}
	opts := []fifoq.Option{
		fifoq.WithVisibilityTimeout(cfg.Visibility),
		fifoq.WithDelay(cfg.Delay),
		fifoq.WithRetention(cfg.Retention),
	}
	name := "mdl-standard"
	if fifo {
		name = "mdl.fifo"
		if cfg.ContentDedup = rapid.Bool().Draw(t, "contentDedup"); cfg.ContentDedup {
			opts = append(opts, fifoq.WithContentBasedDeduplication())
		}
		if cfg.GroupScope = rapid.Bool().Draw(t, "groupScope"); cfg.GroupScope {
			opts = append(opts, fifoq.WithDeduplicationScope(fifoq.DeduplicationScopeMessageGroup))
		}
	}
	q, err := fifoq.New(name, opts...)
	require.NoError(t, err)

	other, err := fifoq.New("mdl-other")
	require.NoError(t, err)
	_, err = other.Send(ctx, fifoq.Message{Body: "x"})
	require.NoError(t, err)
	ds, err := other.Receive(ctx, fifoq.ReceiveOptions{})
	require.NoError(t, err)
	require.Len(t, ds, 1)

	s := &mdlMachine{
		ctx: ctx, fifo: fifo, cfg: cfg, q: q, m: model.New(cfg),
		otherHandle: ds[0].ReceiptHandle,
		firstSeq:    map[string]string{},
		stored:      map[string]time.Time{},
	}
	t.Repeat(map[string]func(*rapid.T){
		"Send":                  s.send,
		"SendBatch":             s.sendBatch,
		"Receive":               s.receive,
		"ReceiveWait":           s.receiveWait,
		"Delete":                s.delete,
		"DeleteBatch":           s.deleteBatch,
		"ChangeVisibility":      s.changeVisibility,
		"ChangeVisibilityBatch": s.changeVisibilityBatch,
		"Purge":                 s.purge,
		"Sleep":                 s.sleep,
		"":                      s.check,
	})
}

// drawMessage draws a valid message. Bodies and deduplication ids come from small sets so that duplicates
// happen.
func (s *mdlMachine) drawMessage(t *rapid.T) fifoq.Message {
	m := fifoq.Message{Body: fmt.Sprintf("body-%d", rapid.IntRange(0, 5).Draw(t, "body"))}
	if s.fifo {
		m.GroupID = rapid.SampledFrom([]string{"g1", "g2", "g3"}).Draw(t, "group")
		if !s.cfg.ContentDedup || rapid.Bool().Draw(t, "explicitDedupID") {
			m.DeduplicationID = fmt.Sprintf("d%d", rapid.IntRange(0, 11).Draw(t, "dedupID"))
		}
		return m
	}
	if rapid.IntRange(0, 3).Draw(t, "fairGroup") == 0 {
		m.GroupID = "tenant" // a fair queue's group: no ordering effect (2.4)
	}
	m.Delay = rapid.SampledFrom([]time.Duration{0, 0, 0, time.Second, 10 * time.Second}).Draw(t, "messageDelay")
	return m
}

func mdlSend(m fifoq.Message) model.Send {
	return model.Send{Body: m.Body, GroupID: m.GroupID, DeduplicationID: m.DeduplicationID, Delay: m.Delay}
}

func (s *mdlMachine) send(t *rapid.T) {
	m := s.drawMessage(t)
	now := time.Now()
	res, err := s.q.Send(s.ctx, m)
	require.NoError(t, err, "Send(%+v)", m)
	s.recordSend(t, now, m, res)
}

// sendBatch sends 1..10 messages, sometimes one with an empty body, which fails alone (7.1.1, 7.2.3).
func (s *mdlMachine) sendBatch(t *rapid.T) {
	n := rapid.IntRange(1, 10).Draw(t, "batchLen")
	ms := make([]fifoq.Message, n)
	for i := range ms {
		ms[i] = s.drawMessage(t)
	}
	bad := -1
	if rapid.IntRange(0, 4).Draw(t, "badEntry") == 0 {
		bad = rapid.IntRange(0, n-1).Draw(t, "badIndex")
		ms[bad].Body = ""
	}
	now := time.Now()
	res, err := s.q.SendBatch(s.ctx, ms)
	if bad < 0 {
		require.NoError(t, err, "SendBatch(%+v)", ms)
	} else {
		var be *fifoq.BatchError
		require.ErrorAs(t, err, &be, "SendBatch with an empty body at entry %d", bad)
		require.Len(t, be.Entries, 1, "SendBatch with an empty body at entry %d: %v", bad, err)
		require.Equal(t, bad, be.Entries[0].Index, "failed entry")
		require.ErrorIs(t, err, fifoq.ErrEmptyBody)
	}
	require.Len(t, res, n)
	for i, m := range ms {
		if i == bad {
			require.Zero(t, res[i], "result of the failed entry %d", i)
			continue
		}
		s.recordSend(t, now, m, res[i])
	}
}

// recordSend tells the model about an accepted send and compares the outcome: a duplicate within 5 minutes
// is accepted with the original's MessageID (3.4, 3.9).
func (s *mdlMachine) recordSend(t *rapid.T, now time.Time, m fifoq.Message, res fifoq.SendResult) {
	id, dup := s.m.Send(now, mdlSend(m), res.MessageID)
	require.Equal(t, dup, res.Duplicate, "Send(%+v) duplicate: got %v, model %v (spec 3.4)", m, res.Duplicate, dup)
	require.Equal(t, id, res.MessageID, "Send(%+v) MessageID (spec 3.9)", m)
	if !s.fifo || res.Duplicate {
		return
	}
	// One copy per deduplication id in its window (3.4), independent of the model's bookkeeping.
	key := s.m.DedupKey(mdlSend(m))
	if last, ok := s.stored[key]; ok {
		require.GreaterOrEqual(t, now.Sub(last), model.DedupInterval,
			"Send(%+v) stored a second copy %v after the first (spec 3.4)", m, now.Sub(last))
	}
	s.stored[key] = now
}

var mdlVisibilities = []time.Duration{0, 0, time.Millisecond, time.Second, 5 * time.Second, 30 * time.Second, 2 * time.Minute}

func (s *mdlMachine) receive(t *rapid.T) {
	max := rapid.IntRange(1, 10).Draw(t, "maxMessages")
	vt := rapid.SampledFrom(mdlVisibilities).Draw(t, "visibility")
	now := time.Now()
	before := mdlStoredOf(slices.Collect(s.q.Messages()))
	out, err := s.q.Receive(s.ctx, fifoq.ReceiveOptions{MaxMessages: max, VisibilityTimeout: vt})
	require.NoError(t, err)
	s.checkReceived(t, now, max, vt, before, out)
}

// receiveWait is a long poll: it returns as soon as a message is receivable, or empty when the wait ends
// (1.5.2). Virtual time passes while it waits.
func (s *mdlMachine) receiveWait(t *rapid.T) {
	max := rapid.IntRange(1, 10).Draw(t, "maxMessages")
	vt := rapid.SampledFrom(mdlVisibilities).Draw(t, "visibility")
	wait := mdlDur(1, 20, time.Second).Draw(t, "wait")
	start := time.Now()
	out, err := s.q.Receive(s.ctx, fifoq.ReceiveOptions{MaxMessages: max, WaitTime: wait, VisibilityTimeout: vt})
	require.NoError(t, err)
	now := time.Now()
	require.LessOrEqual(t, now.Sub(start), wait, "long poll of %v took longer", wait)
	for _, due := range s.m.HiddenUntils(start) {
		if !due.Before(now) {
			break
		}
		require.Empty(t, s.m.Next(due, max), "long poll started at %v was still waiting at %v with messages receivable (spec 1.5.2)",
			start, due)
	}
	if len(out) == 0 {
		require.Equal(t, wait, now.Sub(start), "empty long poll returned before its wait ended (spec 1.5.2)")
	}
	var before []mdlStored
	for _, m := range s.m.Messages(now) {
		before = append(before, mdlStored{id: m.ID, group: m.GroupID})
	}
	s.checkReceived(t, now, max, vt, before, out)
}

// mdlStored is a stored message as the group-order check needs it.
type mdlStored struct{ id, group string }

func mdlStoredOf(snaps []fifoq.Snapshot) []mdlStored {
	out := make([]mdlStored, len(snaps))
	for i, sn := range snaps {
		out[i] = mdlStored{id: sn.MessageID, group: sn.GroupID}
	}
	return out
}

// checkReceived compares a receive made at now with the model, then records it there. before lists the
// stored messages just before the receive, in send order.
func (s *mdlMachine) checkReceived(t *rapid.T, now time.Time, max int, vt time.Duration, before []mdlStored, out []fifoq.Delivery) {
	want := s.m.Next(now, max)
	var ids, handles []string
	for _, d := range out {
		ids, handles = append(ids, d.MessageID), append(handles, d.ReceiptHandle)
	}
	if s.fifo {
		require.Equal(t, want, ids, "FIFO receive of up to %d at %v: got %v, model %v (spec 2.6, 2.9)", max, now, ids, want)
		s.checkGroupOrder(t, before, out)
	} else {
		require.Len(t, ids, min(max, len(want)), "standard receive of up to %d with %d visible (spec 1.5.3: fifoq returns all it can)", max, len(want))
		require.Subset(t, want, ids, "standard receive returned messages that are not visible")
		require.Len(t, mdlUnique(ids), len(ids), "standard receive returned a message twice: %v", ids)
	}
	if vt == 0 {
		vt = s.cfg.Visibility // 0 means the queue's (API.md)
	}
	counts, err := s.m.Receive(now, ids, handles, vt)
	require.NoError(t, err)
	stored := s.m.Messages(now)
	for i, d := range out {
		require.Equal(t, counts[i], d.ReceiveCount, "ReceiveCount of %s (spec 1.4.3)", d.MessageID)
		j := slices.IndexFunc(stored, func(m model.Message) bool { return m.ID == d.MessageID })
		require.True(t, stored[j].SentAt.Equal(d.SentAt), "SentAt of %s: %v, model %v", d.MessageID, d.SentAt, stored[j].SentAt)
		require.True(t, stored[j].FirstReceivedAt.Equal(d.FirstReceivedAt), "FirstReceivedAt of %s: %v, model %v (spec 1.4.4)",
			d.MessageID, d.FirstReceivedAt, stored[j].FirstReceivedAt)
		require.Equal(t, stored[j].Body, d.Body, "body of %s", d.MessageID)
		require.NotContains(t, s.handles, d.ReceiptHandle, "receipt handles are new on every receive (spec 1.3.1)")
	}
	s.handles = append(s.handles, handles...)
}

func mdlUnique(ids []string) []string {
	u := slices.Clone(ids)
	slices.Sort(u)
	return slices.Compact(u)
}

// checkGroupOrder checks per-group order without the model: a message is delivered only when every stored
// message sent before it in its group is delivered before it in the same response (2.5, 2.8, 2.9, 2.11),
// which rules out delivering it while an earlier one is in flight, delayed or waiting to be retried; and
// first deliveries of a group come in send order.
func (s *mdlMachine) checkGroupOrder(t *rapid.T, before []mdlStored, out []fifoq.Delivery) {
	for i, d := range out {
		var earlier, delivered []string
		for _, b := range before {
			if b.id == d.MessageID {
				break
			}
			if b.group == d.GroupID {
				earlier = append(earlier, b.id)
			}
		}
		for _, e := range out[:i] {
			if e.GroupID == d.GroupID {
				delivered = append(delivered, e.MessageID)
			}
		}
		require.Equal(t, earlier, delivered,
			"message %s of group %s delivered while earlier messages of its group were stored and not delivered before it (spec 2.8, 2.9)",
			d.MessageID, d.GroupID)
		if d.ReceiveCount == 1 {
			require.Greater(t, d.SequenceNumber, s.firstSeq[d.GroupID],
				"first deliveries of group %s out of send order (spec 2.5)", d.GroupID)
			s.firstSeq[d.GroupID] = d.SequenceNumber
		}
	}
}

// drawHandle draws a receipt handle: the current one of an in-flight message, any handle given out before
// (maybe stale, maybe of a deleted message), one of another queue, or garbage.
func (s *mdlMachine) drawHandle(t *rapid.T) string {
	kind := rapid.IntRange(0, 9).Draw(t, "handleKind")
	now := time.Now()
	switch {
	case kind == 0 || len(s.handles) == 0:
		return rapid.SampledFrom([]string{"garbage", "", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}).Draw(t, "garbageHandle")
	case kind == 1:
		return s.otherHandle
	case kind <= 4:
		return rapid.SampledFrom(s.handles).Draw(t, "anyHandle")
	}
	var current []string
	for _, m := range s.m.Messages(now) {
		if m.StateAt(now) == model.InFlight {
			current = append(current, m.Receipt)
		}
	}
	if len(current) == 0 {
		return rapid.SampledFrom(s.handles).Draw(t, "anyHandle")
	}
	return rapid.SampledFrom(current).Draw(t, "currentHandle")
}

func (s *mdlMachine) delete(t *rapid.T) {
	h := s.drawHandle(t)
	now := time.Now()
	err := s.q.Delete(s.ctx, h)
	mdlRequireErr(t, s.m.Delete(now, h), err, "Delete(%q)", h)
}

// deleteBatch deletes 1..10 handles; entries fail alone, in a *BatchError (7.2.3).
func (s *mdlMachine) deleteBatch(t *rapid.T) {
	hs := make([]string, rapid.IntRange(1, 10).Draw(t, "batchLen"))
	for i := range hs {
		hs[i] = s.drawHandle(t)
	}
	now := time.Now()
	err := s.q.DeleteBatch(s.ctx, hs)
	want := make([]error, len(hs))
	for i, h := range hs {
		want[i] = s.m.Delete(now, h)
	}
	mdlRequireBatchErr(t, want, err, "DeleteBatch(%q)", hs)
}

// changeVisibilityBatch changes 2..10 handles at once; entries fail alone (7.2.3).
func (s *mdlMachine) changeVisibilityBatch(t *rapid.T) {
	es := make([]fifoq.VisibilityChange, rapid.IntRange(2, 10).Draw(t, "batchLen"))
	for i := range es {
		es[i] = fifoq.VisibilityChange{ReceiptHandle: s.drawHandle(t), Timeout: s.drawTimeout(t)}
	}
	now := time.Now()
	err := s.q.ChangeVisibilityBatch(s.ctx, es)
	want := make([]error, len(es))
	for i, e := range es {
		want[i] = s.m.ChangeVisibility(now, e.ReceiptHandle, e.Timeout)
	}
	mdlRequireBatchErr(t, want, err, "ChangeVisibilityBatch(%+v)", es)
}

// mdlRequireBatchErr requires err to report exactly the entries whose model error in want is not nil, each
// with its sentinel.
func mdlRequireBatchErr(t *rapid.T, want []error, err error, format string, args ...any) {
	t.Helper()
	what := fmt.Sprintf(format, args...)
	var wantFailed []int
	for i, w := range want {
		if w != nil {
			wantFailed = append(wantFailed, i)
		}
	}
	if wantFailed == nil {
		require.NoError(t, err, "%s: model succeeds", what)
		return
	}
	var be *fifoq.BatchError
	require.ErrorAs(t, err, &be, "%s: model fails entries %v", what, wantFailed)
	var failed []int
	for _, e := range be.Entries {
		failed = append(failed, e.Index)
	}
	require.Equal(t, wantFailed, failed, "%s: failed entries", what)
	for _, e := range be.Entries {
		mdlRequireErr(t, want[e.Index], e.Err, "%s entry %d", what, e.Index)
	}
}

func (s *mdlMachine) drawTimeout(t *rapid.T) time.Duration {
	return rapid.SampledFrom([]time.Duration{
		0, 0, time.Millisecond, time.Second, 10 * time.Second, 5 * time.Minute,
		model.MaxVisibilityTimeout - time.Second, model.MaxVisibilityTimeout, model.MaxVisibilityTimeout + time.Second, -time.Second,
	}).Draw(t, "timeout")
}

func (s *mdlMachine) changeVisibility(t *rapid.T) {
	h := s.drawHandle(t)
	timeout := s.drawTimeout(t)
	now := time.Now()
	err := s.q.ChangeVisibility(s.ctx, h, timeout)
	mdlRequireErr(t, s.m.ChangeVisibility(now, h, timeout), err, "ChangeVisibility(%q, %v)", h, timeout)
}

func (s *mdlMachine) purge(t *rapid.T) {
	now := time.Now()
	err := s.q.Purge(s.ctx)
	want := s.m.Purge(now)
	mdlRequireErr(t, want, err, "Purge")
	if want == nil {
		clear(s.stored) // a purge clears the deduplication history (3.10)
	}
}

// sleep jumps the virtual clock: by milliseconds (visibility edges), seconds, minutes (past the 5-minute
// deduplication window and a short retention) or hours.
func (s *mdlMachine) sleep(t *rapid.T) {
	d := rapid.OneOf(
		mdlDur(1, 999, time.Millisecond),
		mdlDur(1, 60, time.Second),
		mdlDur(1, 7, time.Minute),
		// Just before and at the purge interval (7.3.3) and the deduplication window (3.4), and a long jump
		// toward the 12-hour visibility cap (1.2.5).
		rapid.SampledFrom([]time.Duration{
			time.Minute - time.Millisecond, time.Minute, 5*time.Minute - time.Millisecond, 5 * time.Minute, 6 * time.Hour,
		}),
	).Draw(t, "sleep")
	time.Sleep(d)
}

// check compares the whole queue with the model: exact Stats, and every stored message (nothing lost,
// nothing invented) with its state, receive count and when it becomes visible.
func (s *mdlMachine) check(t *rapid.T) {
	now := time.Now()
	ws := s.m.Stats(now)
	require.Equal(t, fifoq.Stats{Visible: ws.Visible, InFlight: ws.InFlight, Delayed: ws.Delayed}, s.q.Stats(),
		"Stats at %v (spec 10.2, 10.4)", now)
	got := slices.Collect(s.q.Messages())
	want := s.m.Messages(now)
	var gotIDs, wantIDs []string
	for _, sn := range got {
		gotIDs = append(gotIDs, sn.MessageID)
	}
	for _, m := range want {
		wantIDs = append(wantIDs, m.ID)
	}
	require.Equal(t, wantIDs, gotIDs, "stored messages at %v", now)
	for i, m := range want {
		sn := got[i]
		require.Equal(t, mdlStates[m.StateAt(now)], sn.State, "state of %s at %v", m.ID, now)
		require.Equal(t, m.ReceiveCount, sn.ReceiveCount, "receive count of %s", m.ID)
		require.Equal(t, m.Body, sn.Body, "body of %s", m.ID)
		require.Equal(t, m.GroupID, sn.GroupID, "group of %s", m.ID)
		require.True(t, m.SentAt.Equal(sn.SentAt), "SentAt of %s: %v, model %v", m.ID, sn.SentAt, m.SentAt)
		require.True(t, m.FirstReceivedAt.Equal(sn.FirstReceivedAt), "FirstReceivedAt of %s: %v, model %v", m.ID, sn.FirstReceivedAt, m.FirstReceivedAt)
		if m.StateAt(now) != model.Visible {
			require.True(t, m.HiddenUntil.Equal(sn.VisibleAt), "%s visible at %v, model %v", m.ID, sn.VisibleAt, m.HiddenUntil)
		}
	}
}

// mdlRequireErr requires got to be the sentinel the model's error want stands for, or nil.
func mdlRequireErr(t *rapid.T, want, got error, format string, args ...any) {
	t.Helper()
	what := fmt.Sprintf(format, args...)
	if want == nil {
		require.NoError(t, got, "%s: model succeeds", what)
		return
	}
	require.ErrorIs(t, got, mdlSentinels[want], "%s: model says %v", what, want)
}

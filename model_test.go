package fifoq_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
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
// The DLQ variants give the queue a dead-letter queue (maxReceiveCount 1..3) and add failed receives,
// receives, deletes, visibility changes and purges in the dead-letter queue, and move tasks back to the
// source. After every step they check both queues against the model, and that every accepted MessageID is
// exactly once in the source, in the dead-letter queue, or gone: deleted, expired, purged or moved back (as
// a new message, accepted in its turn).
//
// The nesting is rapid.Check -> rapid.SyncTest -> t.Repeat (the other nesting panics). Inside the synctest
// bubble the queue's default clock is virtual: time.Sleep jumps it, and the model is given time.Now().

func TestModelFIFO(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		rapid.SyncTest(t, func(t *rapid.T) { mdlRun(t, true, false) })
	})
}

func TestModelStandard(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		rapid.SyncTest(t, func(t *rapid.T) { mdlRun(t, false, false) })
	})
}

func TestModelFIFODLQ(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		rapid.SyncTest(t, func(t *rapid.T) { mdlRun(t, true, true) })
	})
}

func TestModelStandardDLQ(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		rapid.SyncTest(t, func(t *rapid.T) { mdlRun(t, false, true) })
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

// mdlSide is one queue of a run and its model.
type mdlSide struct {
	q        *fifoq.Queue
	m        *model.Queue
	cfg      model.Config
	handles  []string          // every receipt handle q gave out, oldest first
	firstSeq map[string]string // FIFO: group -> sequence number of its latest first delivery
}

// mdlMachine is one run of the state machine.
type mdlMachine struct {
	mdlSide          // the queue under test: the source when there is a dead-letter queue
	dlq     *mdlSide // its dead-letter queue, nil for none
	ctx     context.Context
	fifo    bool

	otherHandle string               // a well-formed receipt handle of another queue
	stored      map[string]time.Time // FIFO: deduplication key -> when a message was last stored under it
	accepted    []string             // every MessageID accepted as a new message, by a send or a move task
	tags        int                  // sent messages so far: each carries its number in the attribute mdlTag
	rs          *mdlRestarter        // the queues' store, which Restart stops and opens again; nil in memory
}

// mdlTag is the message attribute that tells sent messages apart; it stays with a message through its moves.
const mdlTag = "mdl-tag"

// mdlDur draws a duration of n units, n in lo..hi.
func mdlDur(lo, hi int, unit time.Duration) *rapid.Generator[time.Duration] {
	return rapid.Map(rapid.IntRange(lo, hi), func(n int) time.Duration { return time.Duration(n) * unit })
}

func mdlRun(t *rapid.T, fifo, withDLQ bool) { mdlRunWith(t, fifo, withDLQ, nil) }

// mdlRunWith runs the state machine; with rs, on durable queues kept in rs's store, with a Restart action.
func mdlRunWith(t *rapid.T, fifo, withDLQ bool, rs *mdlRestarter) {
	ctx := context.Background()
	var stored []fifoq.Option // options of both queues: WithStore, for the durable queues, and the group order
	if rs != nil {
		stored = []fifoq.Option{fifoq.WithStore(rs.start(t))}
	}
	name := "mdl-standard"
	if fifo {
		name = "mdl.fifo"
	}
	// The group order of the FIFO queues; the standard ones take it too, and ignore it.
	order := rapid.SampledFrom([]fifoq.GroupOrder{fifoq.GroupOrderAvailable, fifoq.GroupOrderOldestMessage}).Draw(t, "groupOrder")
	stored = append(stored, fifoq.WithGroupOrder(order))
	cfg := model.Config{
		Name:       name,
		FIFO:       fifo,
		Visibility: rapid.SampledFrom([]time.Duration{0, time.Second, 30 * time.Second}).Draw(t, "queueVisibility"),
		Delay:      rapid.SampledFrom([]time.Duration{0, 0, 2 * time.Second, time.Minute}).Draw(t, "queueDelay"),
		Retention:  rapid.SampledFrom([]time.Duration{time.Minute, 3 * time.Minute, 4 * 24 * time.Hour}).Draw(t, "retention"),

		OldestMessageFirst: order == fifoq.GroupOrderOldestMessage,
	}
	opts := []fifoq.Option{
		fifoq.WithVisibilityTimeout(cfg.Visibility),
		fifoq.WithDelay(cfg.Delay),
		fifoq.WithRetention(cfg.Retention),
	}
	var dlq *mdlSide
	if withDLQ {
		// The dead-letter queue has no delay: the spec says nothing of a delay for moved messages.
		dcfg := model.Config{
			Name:       "mdl-dlq",
			FIFO:       fifo,
			Visibility: rapid.SampledFrom([]time.Duration{time.Second, 30 * time.Second}).Draw(t, "dlqVisibility"),
			Retention:  rapid.SampledFrom([]time.Duration{time.Minute, 3 * time.Minute, 4 * 24 * time.Hour}).Draw(t, "dlqRetention"),

			OldestMessageFirst: order == fifoq.GroupOrderOldestMessage,
		}
		if fifo {
			dcfg.Name = "mdl-dlq.fifo"
		}
		dq, err := fifoq.New(dcfg.Name, append(stored, fifoq.WithVisibilityTimeout(dcfg.Visibility), fifoq.WithRetention(dcfg.Retention))...)
		require.NoError(t, err)
		dlq = &mdlSide{q: dq, m: model.New(dcfg), cfg: dcfg, firstSeq: map[string]string{}}
		cfg.DLQ, cfg.MaxReceiveCount = dlq.m, rapid.IntRange(1, 3).Draw(t, "maxReceiveCount")
		opts = append(opts, fifoq.WithDeadLetterQueue(dq, cfg.MaxReceiveCount))
	}
	if fifo {
		if cfg.ContentDedup = rapid.Bool().Draw(t, "contentDedup"); cfg.ContentDedup {
			opts = append(opts, fifoq.WithContentBasedDeduplication())
		}
		if cfg.GroupScope = rapid.Bool().Draw(t, "groupScope"); cfg.GroupScope {
			opts = append(opts, fifoq.WithDeduplicationScope(fifoq.DeduplicationScopeMessageGroup))
		}
	}
	q, err := fifoq.New(name, append(stored, opts...)...)
	require.NoError(t, err)

	other, err := fifoq.New("mdl-other")
	require.NoError(t, err)
	_, err = other.Send(ctx, fifoq.Message{Body: "x"})
	require.NoError(t, err)
	ds, err := other.Receive(ctx, fifoq.ReceiveOptions{})
	require.NoError(t, err)
	require.Len(t, ds, 1)

	s := &mdlMachine{
		mdlSide: mdlSide{q: q, m: model.New(cfg), cfg: cfg, firstSeq: map[string]string{}},
		dlq:     dlq,
		ctx:     ctx, fifo: fifo,
		otherHandle: ds[0].ReceiptHandle,
		stored:      map[string]time.Time{},
		rs:          rs,
	}
	actions := map[string]func(*rapid.T){
		"Send":                  s.send,
		"SendBatch":             s.sendBatch,
		"Receive":               s.receive,
		"ReceiveWait":           s.receiveWait,
		"Fail":                  s.fail,
		"Delete":                s.delete,
		"DeleteBatch":           s.deleteBatch,
		"ChangeVisibility":      s.changeVisibility,
		"ChangeVisibilityBatch": s.changeVisibilityBatch,
		"Purge":                 s.purge,
		"SetAttributes":         s.setAttributes,
		"Sleep":                 s.sleep,
		"":                      s.check,
	}
	if dlq != nil {
		actions["ReceiveDLQ"] = s.receiveDLQ
		actions["DeleteDLQ"] = s.deleteDLQ
		actions["ChangeVisibilityDLQ"] = s.changeVisibilityDLQ
		actions["PurgeDLQ"] = s.purgeDLQ
		actions["MoveBack"] = s.moveBack
	}
	if rs != nil {
		actions["Restart"] = s.restart
	}
	t.Repeat(actions)
}

// drawMessage draws a valid message. Bodies and deduplication ids come from small sets so that duplicates
// happen.
func (s *mdlMachine) drawMessage(t *rapid.T) fifoq.Message {
	s.tags++
	m := fifoq.Message{
		Body:       fmt.Sprintf("body-%d", rapid.IntRange(0, 5).Draw(t, "body")),
		Attributes: map[string]fifoq.Attribute{mdlTag: {DataType: "String", StringValue: fmt.Sprint(s.tags)}},
	}
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
	s := model.Send{Body: m.Body, GroupID: m.GroupID, DeduplicationID: m.DeduplicationID, Delay: m.Delay}
	if a, ok := m.Attributes[mdlTag]; ok {
		s.Attributes = map[string]string{mdlTag: a.StringValue}
	}
	return s
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
	if !res.Duplicate {
		s.accepted = append(s.accepted, res.MessageID)
	}
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

func (s *mdlMachine) receive(t *rapid.T) { s.receiveOn(t, &s.mdlSide, 10, mdlVisibilities) }

// receiveDLQ receives few messages from the dead-letter queue, which holds few, so that its messages get
// different receive times and visibility timeouts.
func (s *mdlMachine) receiveDLQ(t *rapid.T) {
	s.receiveOn(t, s.dlq, 3, []time.Duration{0, time.Millisecond, time.Second, 5 * time.Second})
}

// receiveOn receives up to 1..maxMax messages from sd and checks the receive against the model.
func (s *mdlMachine) receiveOn(t *rapid.T, sd *mdlSide, maxMax int, vts []time.Duration) []fifoq.Delivery {
	max := rapid.IntRange(1, maxMax).Draw(t, "maxMessages")
	vt := rapid.SampledFrom(vts).Draw(t, "visibility")
	now := time.Now()
	out, err := sd.q.Receive(s.ctx, fifoq.ReceiveOptions{MaxMessages: max, VisibilityTimeout: vt})
	require.NoError(t, err)
	s.checkReceived(t, sd, now, max, vt, out)
	return out
}

// setAttributes changes the queue's visibility timeout, delay and retention, which apply to the stored
// messages as spec 4.6 and 5.3 say.
func (s *mdlMachine) setAttributes(t *rapid.T) {
	sd := &s.mdlSide
	if s.dlq != nil && rapid.Bool().Draw(t, "onDLQ") {
		sd = s.dlq
	}
	a := sd.q.Attributes()
	a.VisibilityTimeout = rapid.SampledFrom([]time.Duration{0, time.Second, 30 * time.Second}).Draw(t, "newVisibility")
	if sd != s.dlq { // the dead-letter queue keeps no delay: see mdlRun
		a.Delay = rapid.SampledFrom([]time.Duration{0, 2 * time.Second, time.Minute}).Draw(t, "newDelay")
	}
	a.Retention = rapid.SampledFrom([]time.Duration{time.Minute, 3 * time.Minute, 4 * 24 * time.Hour}).Draw(t, "newRetention")
	now := time.Now()
	require.NoError(t, sd.q.SetAttributes(a))
	sd.m.SetConfig(now, a.VisibilityTimeout, a.Delay, a.Retention)
	sd.cfg.Visibility, sd.cfg.Delay, sd.cfg.Retention = a.VisibilityTimeout, a.Delay, a.Retention
	require.Equal(t, a, sd.q.Attributes(), "Attributes after SetAttributes")
}

// fail is a consumer that fails, 1..3 times in a row: it receives with a short visibility timeout, and gives
// some of the messages back at once (ChangeVisibility 0), letting the others time out. Failures are what
// push messages to the dead-letter queue.
func (s *mdlMachine) fail(t *rapid.T) {
	for range rapid.IntRange(1, 3).Draw(t, "failures") {
		out := s.receiveOn(t, &s.mdlSide, 10, []time.Duration{time.Millisecond, time.Second, 5 * time.Second})
		now := time.Now()
		for _, d := range out {
			if rapid.Bool().Draw(t, "giveBack") {
				err := s.q.ChangeVisibility(s.ctx, d.ReceiptHandle, 0)
				mdlRequireErr(t, s.m.ChangeVisibility(now, d.ReceiptHandle, 0), err, "ChangeVisibility(%q, 0) of a failed message", d.ReceiptHandle)
			}
		}
	}
}

// receiveWait is a long poll: it returns as soon as a message is receivable, or empty when the wait ends
// (1.5.2). Virtual time passes while it waits. It tries to receive when it starts and whenever a message
// becomes visible; each try moves the messages past their receive limit it meets to the dead-letter queue.
func (s *mdlMachine) receiveWait(t *rapid.T) {
	max := rapid.IntRange(1, 10).Draw(t, "maxMessages")
	vt := rapid.SampledFrom(mdlVisibilities).Draw(t, "visibility")
	wait := mdlDur(1, 20, time.Second).Draw(t, "wait")
	start := time.Now()
	out, err := s.q.Receive(s.ctx, fifoq.ReceiveOptions{MaxMessages: max, WaitTime: wait, VisibilityTimeout: vt})
	require.NoError(t, err)
	now := time.Now()
	require.LessOrEqual(t, now.Sub(start), wait, "long poll of %v took longer", wait)
	for at := start; at.Before(now); {
		ids, dead := s.m.Next(at, max)
		require.Empty(t, ids, "long poll started at %v was still waiting at %v with messages receivable (spec 1.5.2)", start, at)
		if len(dead) > 0 {
			_, err := s.m.Receive(at, nil, nil, 0, dead) // an empty try: it looked at every visible message
			require.NoError(t, err)
		}
		due := s.m.HiddenUntils(at)
		if len(due) == 0 {
			break
		}
		at = due[0]
	}
	if len(out) == 0 {
		require.Equal(t, wait, now.Sub(start), "empty long poll returned before its wait ended (spec 1.5.2)")
	}
	s.checkReceived(t, &s.mdlSide, now, max, vt, out)
}

// mdlStored is a stored message as the group-order check needs it.
type mdlStored struct{ id, group string }

func mdlIDs(snaps []fifoq.Snapshot) []string {
	var ids []string
	for _, sn := range snaps {
		ids = append(ids, sn.MessageID)
	}
	return ids
}

// checkReceived compares a receive of sd made at now with the model, then records it there.
func (s *mdlMachine) checkReceived(t *rapid.T, sd *mdlSide, now time.Time, max int, vt time.Duration, out []fifoq.Delivery) {
	want, overLimit := sd.m.Next(now, max)
	var before []mdlStored
	for _, m := range sd.m.Messages(now) {
		before = append(before, mdlStored{id: m.ID, group: m.GroupID})
	}
	var ids, handles []string
	for _, d := range out {
		ids, handles = append(ids, d.MessageID), append(handles, d.ReceiptHandle)
	}
	// The messages past their limit that left the queue went to the dead-letter queue.
	var dead []string
	if len(overLimit) > 0 {
		left := mdlIDs(slices.Collect(sd.q.Messages()))
		for _, id := range overLimit {
			if !slices.Contains(left, id) {
				dead = append(dead, id)
			}
		}
	}
	if s.fifo {
		require.Equal(t, want, ids, "FIFO receive of up to %d at %v: got %v, model %v (spec 2.6, 2.9, 6.5)", max, now, ids, want)
		require.Equal(t, overLimit, dead, "FIFO receive of up to %d at %v moved %v to the dead-letter queue, model %v (spec 6.3)",
			max, now, dead, overLimit)
		before = slices.DeleteFunc(before, func(b mdlStored) bool { return slices.Contains(dead, b.id) })
		s.checkGroupOrder(t, sd, before, out)
	} else {
		require.Len(t, ids, min(max, len(want)), "standard receive of up to %d with %d visible (spec 1.5.3: fifoq returns all it can)", max, len(want))
		require.Subset(t, want, ids, "standard receive returned messages that are not visible or past their receive limit (spec 6.3)")
		require.Len(t, mdlUnique(ids), len(ids), "standard receive returned a message twice: %v", ids)
		if len(ids) < max {
			require.ElementsMatch(t, overLimit, dead,
				"standard receive of up to %d returned %d, so it saw every visible message: it moved %v to the dead-letter queue, model %v (spec 6.3)",
				max, len(ids), dead, overLimit)
		}
	}
	if vt == 0 {
		vt = sd.cfg.Visibility // 0 means the queue's (API.md)
	}
	counts, err := sd.m.Receive(now, ids, handles, vt, dead)
	require.NoError(t, err)
	stored := sd.m.Messages(now)
	for i, d := range out {
		require.Equal(t, counts[i], d.ReceiveCount, "ReceiveCount of %s (spec 1.4.3)", d.MessageID)
		j := slices.IndexFunc(stored, func(m model.Message) bool { return m.ID == d.MessageID })
		require.True(t, stored[j].SentAt.Equal(d.SentAt), "SentAt of %s: %v, model %v (spec 5.4)", d.MessageID, d.SentAt, stored[j].SentAt)
		require.True(t, stored[j].FirstReceivedAt.Equal(d.FirstReceivedAt), "FirstReceivedAt of %s: %v, model %v (spec 1.4.4)",
			d.MessageID, d.FirstReceivedAt, stored[j].FirstReceivedAt)
		require.Equal(t, stored[j].Body, d.Body, "body of %s", d.MessageID)
		require.Equal(t, stored[j].GroupID, d.GroupID, "group of %s (spec 6.4)", d.MessageID)
		require.Equal(t, stored[j].DeduplicationID, d.DeduplicationID, "deduplication id of %s (spec 3.3, 3.11)", d.MessageID)
		require.Equal(t, stored[j].Attributes[mdlTag], d.Attributes[mdlTag].StringValue, "attribute %s of %s (spec 6.4)", mdlTag, d.MessageID)
		require.Equal(t, stored[j].DeadLetterSource, d.DeadLetterSource, "DeadLetterSource of %s (spec 6.4)", d.MessageID)
		require.NotContains(t, sd.handles, d.ReceiptHandle, "receipt handles are new on every receive (spec 1.3.1)")
	}
	sd.handles = append(sd.handles, handles...)
}

func mdlUnique(ids []string) []string {
	u := slices.Clone(ids)
	slices.Sort(u)
	return slices.Compact(u)
}

// checkGroupOrder checks per-group order without the model: a message is delivered only when every stored
// message sent before it in its group (and not moved to the dead-letter queue by this receive) is delivered
// before it in the same response (2.5, 2.8, 2.9, 2.11), which rules out delivering it while an earlier one is
// in flight, delayed or waiting to be retried; and first deliveries of a group come in send order.
func (s *mdlMachine) checkGroupOrder(t *rapid.T, sd *mdlSide, before []mdlStored, out []fifoq.Delivery) {
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
			require.Greater(t, d.SequenceNumber, sd.firstSeq[d.GroupID],
				"first deliveries of group %s out of send order (spec 2.5)", d.GroupID)
			sd.firstSeq[d.GroupID] = d.SequenceNumber
		}
	}
}

// drawHandle draws a receipt handle for sd: the current one of an in-flight message, any handle sd gave out
// before (maybe stale, maybe of a deleted or moved message), one of another queue, or garbage.
func (s *mdlMachine) drawHandle(t *rapid.T, sd *mdlSide) string {
	kind := rapid.IntRange(0, 9).Draw(t, "handleKind")
	now := time.Now()
	switch {
	case kind == 0 || len(sd.handles) == 0:
		return rapid.SampledFrom([]string{"garbage", "", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}).Draw(t, "garbageHandle")
	case kind == 1:
		others := []string{s.otherHandle}
		for _, o := range []*mdlSide{&s.mdlSide, s.dlq} {
			if o != nil && o != sd && len(o.handles) > 0 {
				others = append(others, o.handles[len(o.handles)-1])
			}
		}
		return rapid.SampledFrom(others).Draw(t, "otherHandle")
	case kind <= 4:
		return rapid.SampledFrom(sd.handles).Draw(t, "anyHandle")
	}
	var current []string
	for _, m := range sd.m.Messages(now) {
		if m.StateAt(now) == model.InFlight {
			current = append(current, m.Receipt)
		}
	}
	if len(current) == 0 {
		return rapid.SampledFrom(sd.handles).Draw(t, "anyHandle")
	}
	return rapid.SampledFrom(current).Draw(t, "currentHandle")
}

func (s *mdlMachine) delete(t *rapid.T) { s.deleteOn(t, &s.mdlSide) }

func (s *mdlMachine) deleteDLQ(t *rapid.T) { s.deleteOn(t, s.dlq) }

func (s *mdlMachine) deleteOn(t *rapid.T, sd *mdlSide) {
	h := s.drawHandle(t, sd)
	now := time.Now()
	err := sd.q.Delete(s.ctx, h)
	mdlRequireErr(t, sd.m.Delete(now, h), err, "Delete(%q) on %s", h, sd.cfg.Name)
}

// deleteBatch deletes 1..10 handles; entries fail alone, in a *BatchError (7.2.3).
func (s *mdlMachine) deleteBatch(t *rapid.T) {
	hs := make([]string, rapid.IntRange(1, 10).Draw(t, "batchLen"))
	for i := range hs {
		hs[i] = s.drawHandle(t, &s.mdlSide)
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
		es[i] = fifoq.VisibilityChange{ReceiptHandle: s.drawHandle(t, &s.mdlSide), Timeout: s.drawTimeout(t)}
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

func (s *mdlMachine) changeVisibility(t *rapid.T) { s.changeVisibilityOn(t, &s.mdlSide) }

func (s *mdlMachine) changeVisibilityDLQ(t *rapid.T) { s.changeVisibilityOn(t, s.dlq) }

func (s *mdlMachine) changeVisibilityOn(t *rapid.T, sd *mdlSide) {
	h := s.drawHandle(t, sd)
	timeout := s.drawTimeout(t)
	now := time.Now()
	err := sd.q.ChangeVisibility(s.ctx, h, timeout)
	mdlRequireErr(t, sd.m.ChangeVisibility(now, h, timeout), err, "ChangeVisibility(%q, %v) on %s", h, timeout, sd.cfg.Name)
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

func (s *mdlMachine) purgeDLQ(t *rapid.T) {
	now := time.Now()
	err := s.dlq.q.Purge(s.ctx)
	mdlRequireErr(t, s.dlq.m.Purge(now), err, "Purge of the dead-letter queue")
}

// moveBack runs a move task of the dead-letter queue back to the source, as fast as it goes, and waits for
// it: no virtual time passes. The visible messages of the dead-letter queue, oldest first (on FIFO those
// that keep group order), are new messages at the end of the source (5.5, 6.9.4).
func (s *mdlMachine) moveBack(t *rapid.T) {
	now := time.Now()
	order := s.dlq.m.MoveOrder(now)
	toMove := s.dlq.m.Stats(now).Visible
	if !s.fifo {
		// Messages of equal SentAt sit in the dead-letter queue in an order the model leaves open (see
		// checkSide): take the queue's, which check has compared with the model modulo that.
		var visible []string
		for sn := range s.dlq.q.Messages() {
			if sn.State == fifoq.StateVisible {
				visible = append(visible, sn.MessageID)
			}
		}
		require.ElementsMatch(t, order, visible, "visible messages of the dead-letter queue")
		order = visible
	}
	byTag := map[string]string{} // tag -> id in the dead-letter queue
	for _, m := range s.dlq.m.Messages(now) {
		byTag[m.Attributes[mdlTag]] = m.ID
	}
	var had []string
	for _, m := range s.m.Messages(now) {
		had = append(had, m.ID)
	}
	task, err := s.dlq.q.StartMoveTask(s.ctx, nil, 0)
	require.NoError(t, err, "StartMoveTask")
	require.NoError(t, task.Wait(s.ctx))
	require.Equal(t, now, time.Now(), "a move task at rate 0 took virtual time")
	st := task.Status()
	require.Equal(t, fifoq.MoveTaskCompleted, st.State, "move task: %+v", st)
	require.Equal(t, toMove, st.ToMove, "ToMove: the visible messages at the start (spec 6.9.7)")
	require.Equal(t, len(order), st.Moved, "Moved: model moves %v", order)
	// The new messages of the source, in the order they were sent, and where each came from.
	var moved, newIDs []string
	for sn := range s.q.Messages() {
		if slices.Contains(had, sn.MessageID) {
			continue
		}
		id, ok := byTag[sn.Attributes[mdlTag].StringValue]
		require.True(t, ok, "new message %s (tag %q) in the source after the move is no message of the dead-letter queue",
			sn.MessageID, sn.Attributes[mdlTag].StringValue)
		require.NotEqual(t, id, sn.MessageID, "a message moved back keeps its MessageID %s (spec 5.5)", id)
		require.Empty(t, sn.DeadLetterSource, "message %s moved back has a DeadLetterSource", sn.MessageID)
		moved, newIDs = append(moved, id), append(newIDs, sn.MessageID)
	}
	require.Equal(t, order, moved, "move task moved back %v, model %v (spec 6.9.4: oldest first)", moved, order)
	require.NoError(t, s.dlq.m.MoveBack(now, moved, newIDs))
	s.accepted = append(s.accepted, newIDs...)
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

// check compares the queues with the model, and checks that no message is lost or duplicated.
func (s *mdlMachine) check(t *rapid.T) {
	inSource := s.checkSide(t, &s.mdlSide)
	if s.dlq == nil {
		return
	}
	inDLQ := s.checkSide(t, s.dlq)
	// Conservation: every accepted message is exactly once in the source, in the dead-letter queue, or gone
	// for good. Where a message is, the queues say; where it went, the models, which saw every removal.
	accepted := map[string]bool{}
	for _, id := range s.accepted {
		accepted[id] = true
	}
	for _, id := range slices.Concat(inSource, inDLQ) {
		require.True(t, accepted[id], "stored message %s was never accepted", id)
	}
	for _, id := range s.accepted {
		var where []string
		if slices.Contains(inSource, id) {
			where = append(where, "in the source")
		}
		if slices.Contains(inDLQ, id) {
			where = append(where, "in the dead-letter queue")
		}
		if f, ok := s.m.Fate(id); ok && f != model.DeadLettered {
			where = append(where, fmt.Sprintf("gone from the source (%v)", f))
		}
		if f, ok := s.dlq.m.Fate(id); ok {
			where = append(where, fmt.Sprintf("gone from the dead-letter queue (%v)", f))
		}
		if f, ok := s.m.Fate(id); ok && f == model.DeadLettered && !slices.Contains(inDLQ, id) {
			_, gone := s.dlq.m.Fate(id)
			require.True(t, gone, "message %s was moved to the dead-letter queue and is not there, nor gone from it", id)
		}
		require.Len(t, where, 1, "accepted message %s is %v (spec 6.3, 6.4: exactly one place)", id, where)
	}
}

// checkSide compares sd with its model: exact Stats, and every stored message (nothing lost, nothing
// invented) with its state, receive count, when it becomes visible, and what a move keeps or changes. It
// returns the stored MessageIDs.
func (s *mdlMachine) checkSide(t *rapid.T, sd *mdlSide) []string {
	now := time.Now()
	ws := sd.m.Stats(now)
	require.Equal(t, fifoq.Stats{Visible: ws.Visible, InFlight: ws.InFlight, Delayed: ws.Delayed}, sd.q.Stats(),
		"Stats of %s at %v (spec 10.2, 10.4)", sd.cfg.Name, now)
	metrics := sd.q.Metrics()
	got := slices.Collect(sd.q.Messages())
	mdlCheckMetrics(t, metrics, got, now, !s.fifo && sd == s.dlq)
	want := sd.m.Messages(now)
	gotIDs := mdlIDs(got)
	if !s.fifo && sd == s.dlq {
		// A standard dead-letter queue holds moved messages in the order they were moved, which a standard
		// receive chooses (best-effort order, 1.1.3), so they are compared by SentAt, then id.
		slices.SortStableFunc(got, func(a, b fifoq.Snapshot) int {
			return cmp.Or(a.SentAt.Compare(b.SentAt), strings.Compare(a.MessageID, b.MessageID))
		})
		slices.SortStableFunc(want, func(a, b model.Message) int {
			return cmp.Or(a.SentAt.Compare(b.SentAt), strings.Compare(a.ID, b.ID))
		})
	}
	var wantIDs []string
	for _, m := range want {
		wantIDs = append(wantIDs, m.ID)
	}
	require.Equal(t, wantIDs, mdlIDs(got), "stored messages of %s at %v, oldest first", sd.cfg.Name, now)
	for i, m := range want {
		sn := got[i]
		require.Equal(t, mdlStates[m.StateAt(now)], sn.State, "state of %s at %v", m.ID, now)
		require.Equal(t, m.ReceiveCount, sn.ReceiveCount, "receive count of %s (spec 1.4.3)", m.ID)
		require.Equal(t, m.Body, sn.Body, "body of %s", m.ID)
		require.Equal(t, m.GroupID, sn.GroupID, "group of %s", m.ID)
		require.Equal(t, m.DeduplicationID, sn.DeduplicationID, "deduplication id of %s (spec 3.3, 3.11)", m.ID)
		require.Equal(t, m.Attributes[mdlTag], sn.Attributes[mdlTag].StringValue, "attribute %s of %s (spec 6.4)", mdlTag, m.ID)
		require.Equal(t, m.DeadLetterSource, sn.DeadLetterSource, "DeadLetterSource of %s (spec 6.4)", m.ID)
		require.True(t, m.SentAt.Equal(sn.SentAt), "SentAt of %s: %v, model %v (spec 5.4)", m.ID, sn.SentAt, m.SentAt)
		require.True(t, m.FirstReceivedAt.Equal(sn.FirstReceivedAt), "FirstReceivedAt of %s: %v, model %v", m.ID, sn.FirstReceivedAt, m.FirstReceivedAt)
		if m.StateAt(now) != model.Visible {
			require.True(t, m.HiddenUntil.Equal(sn.VisibleAt), "%s visible at %v, model %v", m.ID, sn.VisibleAt, m.HiddenUntil)
		}
	}
	return gotIDs
}

// mdlCheckMetrics checks a queue's Metrics against its stored messages: the counts are those of Stats; the
// counters account for every stored message; the age of the oldest message, kept in O(1), is that of the
// earliest SentAt, but in a standard dead-letter queue, whose messages keep their original SentAt and count
// their age from their move.
func mdlCheckMetrics(t *rapid.T, m fifoq.Metrics, stored []fifoq.Snapshot, now time.Time, standardDLQ bool) {
	require.Equal(t, len(stored), m.Visible+m.InFlight+m.Delayed, "Metrics %+v", m)
	c := m.Counters
	in := c.Recovered + c.Sent + c.DeadLetterArrivals + c.RedriveArrivals
	out := c.Deleted + c.Expired + c.Purged + c.DeadLettered + c.Redriven
	require.Equal(t, int64(len(stored)), int64(in)-int64(out), "stored messages by the counters %+v", c)
	if standardDLQ {
		return
	}
	var want time.Duration
	for _, sn := range stored {
		want = max(want, now.Sub(sn.SentAt))
	}
	require.Equal(t, want, m.OldestAge, "OldestAge at %v", now)
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

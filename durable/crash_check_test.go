package durable_test

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/fifoq/fifoq"
)

// The crash test's checker: a model of what the side logs of every round so far say was done, and the checks
// of a reopened store against it (crash_test.go lists them). Violations are reported as strings that start
// with the name of the invariant they break.

// Invariant names, the first word of each violation.
const (
	vLost     = "lost:"        // an acknowledged send, or a delivered message, is gone without a delete
	vBack     = "came-back:"   // an acknowledged delete is stored, or delivered, again
	vInvented = "invented:"    // a stored or delivered body that no child sent; a second copy; a changed body
	vOrder    = "order:"       // a FIFO group out of send order, in the store or in what children received
	vCount    = "count:"       // a receive count lower than one a child saw, or one seen twice
	vDLQ      = "dead-letter:" // dead-letter queue accounting
	vDelay    = "delay:"       // a message received before its delay ended
	vLog      = "log:"         // a side log contradicts itself, or a child failed
)

// crashModel is what the side logs say, plus what the parent saw of the dead-letter queues at each reopen.
type crashModel struct {
	maxReceive int
	srcName    map[string]string // "f" or "s" -> the source queue's name
	bodies     map[string]*crashBody
	byMsg      map[string]string // MessageID -> the body identity it was given to
	fresh      []*crashDelivery  // deliveries read since the last check
	problems   []string          // what the logs show wrong, reported by the next check
	totals     crashTotals
	moveRound  int                      // the last round that started a move task
	rounds     map[int]*crashRoundSyncs // the power-loss test: each round's sync mode and real syncs
	forgotten  map[string]string        // the power-loss test: MessageIDs of messages a cut took back (forget)

	// What keeps a round's work proportional to what changed, not to the whole history:
	touched map[*crashBody]bool         // bodies with records since the last check, or stored at it
	unacked map[*crashBody]bool         // FIFO bodies attempted and never acknowledged
	held    map[*crashBody]bool         // bodies with a delivery not yet deleted, failed or released
	groups  map[string]*crashGroupOrder // FIFO: each group's bodies known to have been stored
}

type crashTotals struct {
	kills, earlyKills, torn                             int
	attempts, sent, dupAcks, deliveries, deletes, fails int
	moved, dlqSeen, released, releaseRefused            int
	moveTasks, moveRounds                               int // move tasks started; rounds that started one
	syncAck, syncRelaxed                                int // children that synced at each acknowledgement; WithSyncEvery
}

// crashBody is one body (one identity) and everything that happened to it. Its instances are the messages
// that held it, one at a time, by MessageID: the message sent (gen0), and each message a move task made of it.
type crashBody struct {
	crashID
	id         string
	attempts   int
	acks       []crashRec
	gen0       string // MessageID of the message as sent, once known
	deliveries []*crashDelivery
	deletes    []*crashDelete
	deleted    bool                 // a delete was acknowledged (and not lost at a power cut)
	deletedAt  crashWhen            // when the first acknowledged delete returned
	dlqAt      map[string]crashWhen // FIFO: instance -> its arrival in the dead-letter queue (SentAt there), as seen
	listed     bool                 // in its crashGroupOrder
	ackAt      crashWhen            // when its send was first acknowledged
	lost       bool                 // the power-loss test: its send was lost at a cut, as the sync mode allows
}

type crashDelivery struct {
	body             *crashBody
	round, call, idx int
	start, end       int64
	msg              string
	count            int
	first, sent      int64
	gen0             bool
	handle           string
	resolved         bool // deleted, failed or released since (or a delete was attempted)
	undone           bool // the power-loss test: the receive was lost at a cut, as the sync mode allows
}

func (d *crashDelivery) startAt() crashWhen { return crashWhen{d.round, d.start} }
func (d *crashDelivery) endAt() crashWhen   { return crashWhen{d.round, d.end} }

type crashDelete struct {
	msg        string
	count      int
	round      int
	start, end int64
	state      uint8 // delUnknown, delAcked, delRefused or delLost
}

const (
	delUnknown uint8 = iota // the child died during the call
	delAcked
	delRefused
	delLost // the power-loss test: acknowledged (or perhaps done), then lost at a cut, as the sync mode allows
)

// done reports whether the delete may have taken effect for good.
func (d *crashDelete) done() bool { return d.state == delUnknown || d.state == delAcked }

func newCrashModel() *crashModel {
	return &crashModel{
		maxReceive: crashMaxReceive,
		srcName:    map[string]string{"f": crashFIFOName, "s": crashStdName},
		bodies:     make(map[string]*crashBody),
		byMsg:      make(map[string]string),
		touched:    make(map[*crashBody]bool),
		unacked:    make(map[*crashBody]bool),
		held:       make(map[*crashBody]bool),
		groups:     make(map[string]*crashGroupOrder),
		rounds:     make(map[int]*crashRoundSyncs),
		forgotten:  make(map[string]string),
	}
}

func (m *crashModel) problem(format string, args ...any) {
	m.problems = append(m.problems, fmt.Sprintf(format, args...))
}

// learn records that MessageID msg was given to body id.
func (m *crashModel) learn(msg, id, where string) {
	if msg == "" {
		return
	}
	if other, ok := m.byMsg[msg]; ok && other != id {
		m.problem("%s MessageID %s of %s (%s) was given to %s before", vInvented, msg, id, where, other)
		return
	}
	if other, ok := m.forgotten[msg]; ok && other != id {
		m.problem("%s MessageID %s of %s (%s) was %s's, which a power cut took back: given out twice", vInvented, msg, id, where, other)
		return
	}
	m.byMsg[msg] = id
}

// apply adds the records of one side log.
func (m *crashModel) apply(recs []crashRec) {
	for _, r := range recs {
		if r.K == recBegin || r.K == recMoveStart || r.K == recMoveTask || r.K == recFatal || r.K == recSynced {
			switch r.K {
			case recBegin:
				if r.State == "ack" {
					m.totals.syncAck++
				} else {
					m.totals.syncRelaxed++
				}
				m.roundSyncs(r.round).relaxed = r.State != "ack"
			case recSynced:
				m.roundSyncs(r.round).add(r)
			case recMoveStart:
				m.totals.moveTasks++
				if m.moveRound != r.round {
					m.moveRound = r.round
					m.totals.moveRounds++
				}
			case recMoveTask:
				m.totals.moved += r.Moved
			case recFatal:
				m.problem("%s round %d: the child failed: %s", vLog, r.round, r.Err)
			}
			continue
		}
		b := m.bodies[r.ID]
		if r.K == recAttempt && b == nil {
			cid, err := parseCrashID(r.ID)
			if err != nil || cid.q != r.Q || cid.group != r.Group {
				m.problem("%s round %d: attempt %+v: %v", vLog, r.round, r, err)
				continue
			}
			b = &crashBody{crashID: cid, id: r.ID, dlqAt: make(map[string]crashWhen)}
			m.bodies[r.ID] = b
		}
		if b == nil || b.attempts == 0 && r.K != recAttempt {
			kind := vLog
			if r.K == recDelivery {
				kind = vInvented
			}
			m.problem("%s round %d: record %s of %s, which no child attempted to send", kind, r.round, r.K, r.ID)
			continue
		}
		m.touched[b] = true
		switch r.K {
		case recAttempt:
			b.attempts++
			m.totals.attempts++
			if b.q == "f" && len(b.acks) == 0 {
				m.unacked[b] = true
			}
		case recSent:
			b.lost = false // a send lost at a power cut, never acknowledged, and retried
			if len(b.acks) == 0 {
				m.totals.sent++
				b.ackAt = crashWhen{r.round, r.End}
			}
			delete(m.unacked, b)
			m.enlist(b)
			if r.Dup {
				m.totals.dupAcks++
			}
			b.acks = append(b.acks, r)
			if b.gen0 != "" && r.Msg != b.gen0 {
				m.problem("%s round %d: send of %s acknowledged with MessageID %s; it was sent as %s", vInvented, r.round, b.id, r.Msg, b.gen0)
			}
			b.gen0 = cmp.Or(b.gen0, r.Msg)
			m.learn(r.Msg, b.id, "acknowledged send")
		case recDelivery:
			m.totals.deliveries++
			// The message as sent: on FIFO, its deduplication id is still the identity (a move task's message
			// has its former MessageID); on a standard queue, its MessageID is the send's.
			gen0 := b.q == "f" && r.Dedup == b.id || b.q == "s" && (b.gen0 == "" || b.gen0 == r.Msg)
			d := &crashDelivery{body: b, round: r.round, call: r.Call, idx: r.Idx, start: r.Start, end: r.End, msg: r.Msg,
				count: r.Count, first: r.First, sent: r.Sent, gen0: gen0, handle: r.Handle}
			if d.gen0 && b.gen0 != "" && r.Msg != b.gen0 {
				m.problem("%s round %d: %s delivered with MessageID %s; it was sent as %s", vInvented, r.round, b.id, r.Msg, b.gen0)
			}
			if d.gen0 {
				b.gen0 = cmp.Or(b.gen0, r.Msg)
			} else if b.q == "f" {
				if other, ok := m.byMsg[r.Dedup]; ok && other != b.id {
					m.problem("%s round %d: %s delivered with deduplication id %s, the MessageID of %s", vInvented, r.round, b.id, r.Dedup, other)
				}
			}
			m.learn(r.Msg, b.id, "delivery")
			b.deliveries = append(b.deliveries, d)
			m.fresh = append(m.fresh, d)
			m.held[b] = true
			m.enlist(b)
		case recDelAttempt:
			b.deletes = append(b.deletes, &crashDelete{msg: r.Msg, count: r.Count, round: r.round, start: r.Start})
			m.resolve(b, r.Msg, r.Count)
		case recDeleted, recDelFailed:
			var del *crashDelete
			for _, x := range slices.Backward(b.deletes) {
				if x.msg == r.Msg && x.count == r.Count && x.round == r.round && x.state == delUnknown {
					del = x
					break
				}
			}
			if del == nil {
				m.problem("%s round %d: outcome %s of a delete of %s that was not attempted", vLog, r.round, r.K, b.id)
				continue
			}
			del.state, del.end = delRefused, r.End
			if r.K == recDeleted {
				del.state = delAcked
				m.totals.deletes++
				if at := (crashWhen{r.round, r.End}); !b.deleted || at.before(b.deletedAt) {
					b.deleted, b.deletedAt = true, at
				}
			}
		case recFailed, recFailErr:
			switch {
			case r.State == crashReleased && r.K == recFailed:
				m.totals.released++
			case r.State == crashReleased:
				m.totals.releaseRefused++
			case r.K == recFailed:
				m.totals.fails++
			}
			m.resolve(b, r.Msg, r.Count)
		default:
			m.problem("%s round %d: record kind %q", vLog, r.round, r.K)
		}
	}
}

// resolve marks the delivery of b under msg with that receive count as no longer held.
func (m *crashModel) resolve(b *crashBody, msg string, count int) {
	for _, d := range b.deliveries {
		if d.msg == msg && d.count == count {
			d.resolved = true
		}
	}
}

// input is what the next child is told: the FIFO sends to retry, and the receives to release (those of the
// last two visibility timeouts: older ones have ended on their own).
func (m *crashModel) input(now time.Time) crashInput {
	in := crashInput{Pending: []string{}, Release: []crashRelease{}}
	pending := slices.Collect(maps.Keys(m.unacked))
	slices.SortFunc(pending, func(a, b *crashBody) int {
		return cmp.Or(cmp.Compare(a.prod, b.prod), cmp.Compare(a.round, b.round), cmp.Compare(a.n, b.n))
	})
	for _, b := range pending {
		in.Pending = append(in.Pending, b.id)
	}
	recent := now.Add(-2 * crashVisibility).UnixNano()
	for b := range m.held {
		latest := make(map[string]*crashDelivery)
		for _, d := range b.deliveries {
			if d.undone {
				continue
			}
			if l := latest[d.msg]; l == nil || d.count > l.count {
				latest[d.msg] = d
			}
		}
		open := false
		for _, d := range latest {
			if !d.resolved && d.end > recent {
				open = true
				in.Release = append(in.Release, crashRelease{Q: b.q, ID: b.id, Msg: d.msg, Count: d.count, Handle: d.handle})
			}
		}
		if !open {
			delete(m.held, b)
		}
	}
	slices.SortFunc(in.Release, func(a, b crashRelease) int { return cmp.Compare(a.ID, b.ID) })
	return in
}

// crashState is what the parent read from a reopened store: for "f" and "s", the messages of the source
// queue and of its dead-letter queue.
type crashState map[string][2][]fifoq.Snapshot

// crashCopy is a stored message holding a body.
type crashCopy struct {
	snap  fifoq.Snapshot
	inDLQ bool
	gen0  bool // the message as sent (not one a move task made)
}

// check checks the store reopened after round against the logs so far, records what it saw of the
// dead-letter queues, and returns the violations.
func (m *crashModel) check(round int, state crashState) []string {
	v := m.problems
	m.problems = nil
	add := func(format string, args ...any) { v = append(v, fmt.Sprintf(format, args...)) }
	present := make(map[string]*crashCopy)

	for _, q := range []string{"f", "s"} {
		for where, snaps := range state[q] {
			inDLQ := where == 1
			lastKey := make(map[string]*crashBody) // group -> the last gen0 body seen in it
			lastSeq := ""
			for _, s := range snaps {
				c := m.checkCopy(add, round, q, inDLQ, s, present)
				if c == nil || q != "f" {
					continue
				}
				if !inDLQ {
					if s.SequenceNumber <= lastSeq {
						add("%s %s lists sequence number %s after %s", vOrder, m.srcName[q], s.SequenceNumber, lastSeq)
					}
					lastSeq = s.SequenceNumber
				}
				if !c.gen0 {
					continue
				}
				b := m.bodies[crashIDOf(s.Body)]
				if prev := lastKey[b.group]; prev != nil && crashSendOrder(b, prev) < 0 {
					add("%s in group %s, %s holds %s after %s, which was sent later", vOrder, b.group, crashQueueName(q, inDLQ), b.id, prev.id)
				}
				lastKey[b.group] = b
			}
		}
	}

	// A body with no records since the last check and stored neither then nor now cannot have changed.
	for id := range present {
		m.touched[m.bodies[id]] = true
	}
	bodies := slices.SortedFunc(maps.Keys(m.touched), func(a, b *crashBody) int { return cmp.Compare(a.id, b.id) })
	for _, b := range bodies {
		m.checkBody(add, b, present[b.id])
	}
	m.checkDeliveryOrder(add, present)
	m.fresh = m.fresh[:0]
	clear(m.touched)
	for id := range present {
		m.touched[m.bodies[id]] = true
	}
	return v
}

func crashQueueName(q string, inDLQ bool) string {
	switch {
	case q == "f" && inDLQ:
		return crashFIFODLQName
	case q == "f":
		return crashFIFOName
	case inDLQ:
		return crashStdDLQName
	}
	return crashStdName
}

func crashAbs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// checkCopy checks one stored message and records it in present; it returns nil for a message that is not
// a body the test sent.
func (m *crashModel) checkCopy(add func(string, ...any), round int, q string, inDLQ bool, s fifoq.Snapshot,
	present map[string]*crashCopy) *crashCopy {
	where := crashQueueName(q, inDLQ)
	id := crashIDOf(s.Body)
	b := m.bodies[id]
	switch {
	case id == "":
		add("%s %s holds a body the test never made: %.80q", vInvented, where, s.Body)
		return nil
	case b == nil || b.attempts == 0:
		add("%s %s holds %s, which no child attempted to send", vInvented, where, id)
		return nil
	case b.q != q:
		add("%s %s holds %s, which was sent to another queue", vInvented, where, id)
		return nil
	case s.GroupID != b.group || s.Attributes["id"].StringValue != id:
		add("%s %s holds %s with group %q and attributes %v", vInvented, where, id, s.GroupID, s.Attributes)
	}
	if prev := present[id]; prev != nil {
		add("%s %s is stored twice: as %s in %s and as %s in %s", vInvented, id,
			prev.snap.MessageID, crashQueueName(q, prev.inDLQ), s.MessageID, where)
		return nil
	}
	c := &crashCopy{snap: s, inDLQ: inDLQ}
	present[id] = c
	if other, ok := m.byMsg[s.MessageID]; ok && other != id {
		add("%s %s holds %s under MessageID %s, which was given to %s", vInvented, where, id, s.MessageID, other)
	}
	m.byMsg[s.MessageID] = id

	mr := m.maxReceive
	switch {
	case !inDLQ:
		if s.DeadLetterSource != "" {
			add("%s %s holds %s with DeadLetterSource %q", vDLQ, where, id, s.DeadLetterSource)
		}
		if s.ReceiveCount > mr {
			add("%s %s holds %s with receive count %d, past maxReceiveCount %d: it should have moved", vDLQ, where, id, s.ReceiveCount, mr)
		}
		if q == "f" {
			c.gen0 = s.DeduplicationID == id
			if !c.gen0 {
				if other, ok := m.byMsg[s.DeduplicationID]; ok && other != id {
					add("%s %s holds %s with deduplication id %s, the MessageID of %s", vInvented, where, id, s.DeduplicationID, other)
				}
			}
		} else {
			c.gen0 = b.gen0 == "" || s.MessageID == b.gen0
		}
		if c.gen0 {
			for _, a := range b.acks {
				if a.Msg != s.MessageID || a.Seq != s.SequenceNumber {
					add("%s %s holds %s as MessageID %s sequence number %q; its send was acknowledged as %s %q", vInvented,
						where, id, s.MessageID, s.SequenceNumber, a.Msg, a.Seq)
					break
				}
			}
			b.gen0 = cmp.Or(b.gen0, s.MessageID)
			m.enlist(b)
		}
	default:
		if src := m.srcName[q]; s.DeadLetterSource != src {
			add("%s %s holds %s with DeadLetterSource %q, want %q", vDLQ, where, id, s.DeadLetterSource, src)
		}
		if s.ReceiveCount != mr {
			add("%s %s holds %s with receive count %d: a message moves on the receive after its count reached "+
				"maxReceiveCount %d", vDLQ, where, id, s.ReceiveCount, mr)
		}
		if s.State != fifoq.StateVisible {
			add("%s %s holds %s %v; nothing receives from it", vDLQ, where, id, s.State)
		}
		if q == "f" && s.DeduplicationID != s.MessageID {
			add("%s %s holds %s with deduplication id %q, want its MessageID %s", vDLQ, where, id, s.DeduplicationID, s.MessageID)
		}
		c.gen0 = s.MessageID == b.gen0
		if _, seen := b.dlqAt[s.MessageID]; !seen {
			b.dlqAt[s.MessageID] = crashWhen{round, s.SentAt.UnixNano()} // it moved in this round's child
			m.totals.dlqSeen++
		}
	}

	// The times a child saw: exact in the source, where they are stored as Unix nanoseconds and read back
	// the same. A move to the dead-letter queue carries them over from one queue's clock reckoning to the
	// other's through the monotonic clock: exact when their epochs have the same wall-clock-minus-monotonic
	// offset, as the queues of a child do (they share its clock, crashClock); the slack is a margin.
	slack := int64(0)
	if inDLQ {
		slack = int64(time.Millisecond)
	}
	maxSeen, firstOK, sentOK := 0, true, true
	var first, sent int64
	for _, d := range b.deliveries {
		if d.msg != s.MessageID || d.undone {
			continue
		}
		maxSeen = max(maxSeen, d.count)
		if s.ReceiveCount > 0 && crashAbs(d.first-s.FirstReceivedAt.UnixNano()) > slack {
			firstOK, first = false, d.first
		}
		if (!inDLQ || q == "s") && crashAbs(d.sent-s.SentAt.UnixNano()) > slack {
			sentOK, sent = false, d.sent
		}
	}
	if !firstOK {
		add("%s %s holds %s with FirstReceivedAt %d; a child saw %d", vCount, where, id, s.FirstReceivedAt.UnixNano(), first)
	}
	if !sentOK {
		add("%s %s holds %s with SentAt %d; a child saw %d", vInvented, where, id, s.SentAt.UnixNano(), sent)
	}
	if maxSeen > s.ReceiveCount {
		add("%s %s holds %s (MessageID %s) with receive count %d; a child saw %d", vCount, where, id, s.MessageID, s.ReceiveCount, maxSeen)
	}
	return c
}

// checkBody checks what happened to one body against where it is now (c, or nil when no queue holds it).
func (m *crashModel) checkBody(add func(string, ...any), b *crashBody, c *crashCopy) {
	maybeDeleted := func(msg string) bool {
		for _, d := range b.deletes {
			if d.done() && (msg == "" || d.msg == msg) {
				return true
			}
		}
		return false
	}
	switch {
	case c == nil && b.lost:
	case c != nil && b.lost:
		add("%s %s, whose send was taken as lost at a power cut, is stored again in %s", vBack, b.id, crashQueueName(b.q, c.inDLQ))
	case c == nil && (len(b.acks) > 0 || b.delivered() > 0) && !maybeDeleted(""):
		add("%s %s (send acknowledged %d times, delivered %d times, no delete attempted) is in neither queue",
			vLost, b.id, len(b.acks), b.delivered())
	case c != nil && b.deleted:
		add("%s %s was deleted (acknowledged in round %d) but %s holds it", vBack, b.id, b.deletedAt.round, crashQueueName(b.q, c.inDLQ))
	}

	byMsg := make(map[string][]*crashDelivery)
	for _, d := range b.deliveries {
		if d.undone {
			continue
		}
		if b.deleted && b.deletedAt.before(crashWhen{d.round, d.start}) {
			add("%s %s was delivered (round %d, receive count %d) by a receive that started after its delete was acknowledged",
				vBack, b.id, d.round, d.count)
		}
		if b.delayed() && d.gen0 && d.end < d.sent+int64(crashDelay) {
			add("%s %s, sent with a delay of %v, was delivered (round %d) %v after it was sent", vDelay, b.id, crashDelay,
				d.round, time.Duration(d.end-d.sent))
		}
		byMsg[d.msg] = append(byMsg[d.msg], d)
	}
	for msg, ds := range byMsg {
		maxCount := 0
		for i, d1 := range ds {
			maxCount = max(maxCount, d1.count)
			for _, d2 := range ds[i+1:] {
				switch {
				case d1.count == d2.count:
					add("%s %s (MessageID %s) was delivered twice with receive count %d (rounds %d and %d)",
						vCount, b.id, msg, d1.count, d1.round, d2.round)
				case d1.endAt().before(d2.startAt()) && d1.count > d2.count, d2.endAt().before(d1.startAt()) && d2.count > d1.count:
					add("%s %s (MessageID %s) was delivered with receive count %d after %d", vCount, b.id, msg,
						min(d1.count, d2.count), max(d1.count, d2.count))
				}
				if d1.first != d2.first || d1.sent != d2.sent {
					add("%s %s (MessageID %s) was delivered with FirstReceivedAt/SentAt %d/%d and %d/%d", vCount, b.id, msg,
						d1.first, d1.sent, d2.first, d2.sent)
				}
			}
		}
		// Received maxReceiveCount times and not deleted: still in the source with that count, waiting for
		// the receive that moves it; or in the dead-letter queue; or moved on from there by a move task (a
		// message of another MessageID holds the body); or deleted in that later life.
		if maxCount >= m.maxReceive && !maybeDeleted(msg) && c != nil &&
			c.snap.MessageID == msg && !c.inDLQ && c.snap.ReceiveCount != m.maxReceive {
			add("%s %s (MessageID %s) was received %d times and not deleted, but %s holds it with receive count %d",
				vDLQ, b.id, msg, maxCount, crashQueueName(b.q, false), c.snap.ReceiveCount)
		}
	}
}

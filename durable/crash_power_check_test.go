package durable_test

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// What the crash test's checker (crash_check_test.go) allows after a power cut (powercut_test.go). A child
// that synced at each acknowledgement loses nothing at a cut, and is checked as after a kill. A child
// opened WithSyncEvery may lose what was acknowledged after the last real sync of its logs began (the
// child records each one, recSynced), and only that: whatever it acknowledged before is durable. The store
// it leaves is then as it was at some moment after that sync began: a prefix of what the child did, which
// the checks hold it to, order and at-least-once included. Before the checks, settle reconciles the model
// with the store for the operations of that window: a send whose message is in neither queue was lost, a
// delete whose message is back was lost, a receive whose count is not in the store was lost; the model
// forgets them (the children after it see a store without them).

// crashRoundSyncs is a round's sync mode, its real syncs, and whether a power cut ended it.
type crashRoundSyncs struct {
	relaxed bool  // WithSyncEvery
	cut     bool  // a power cut ended the round
	synced  int64 // when the last real sync that is done began (the child's clock); math.MinInt64: none
	began   int64 // when the last real sync began, done or not; math.MinInt64: none
}

func (m *crashModel) roundSyncs(round int) *crashRoundSyncs {
	s := m.rounds[round]
	if s == nil {
		s = &crashRoundSyncs{synced: math.MinInt64, began: math.MinInt64}
		m.rounds[round] = s
	}
	return s
}

func (s *crashRoundSyncs) add(r crashRec) {
	if r.State == "done" {
		s.synced = max(s.synced, r.Start)
	}
	s.began = max(s.began, r.Start)
}

// uncertain reports whether an operation of round acknowledged at t (the child's clock) may have been
// lost at the power cut that ended the round.
func (m *crashModel) uncertain(round int, t int64) bool {
	s := m.rounds[round]
	return s != nil && s.cut && s.relaxed && t >= s.synced
}

// crashLoss is an acknowledged send that a power cut lost, as the sync mode allows.
type crashLoss struct {
	id    string
	ackAt int64 // when its send was acknowledged (the child's clock)
}

// settle reconciles the model with the store reopened after the power cut that ended round (see above),
// and returns the sends it found lost, and the violations of the prefix that the store must be: a send
// lost while a later one of the same producer is stored.
func (m *crashModel) settle(round int, state crashState) (lost []crashLoss, violations []string) {
	m.roundSyncs(round).cut = true
	s := m.rounds[round]
	if !s.relaxed {
		return nil, nil
	}
	type copyOf struct {
		msg   string
		count int
	}
	present := make(map[string]copyOf)
	for _, qs := range state {
		for _, snaps := range qs {
			for _, sn := range snaps {
				present[crashIDOf(sn.Body)] = copyOf{sn.MessageID, sn.ReceiveCount}
			}
		}
	}
	bodies := slices.SortedFunc(func(yield func(*crashBody) bool) {
		for b := range m.touched {
			if !yield(b) {
				return
			}
		}
	}, func(a, b *crashBody) int { return cmp.Compare(a.id, b.id) })
	for _, b := range bodies {
		c, there := present[b.id]
		if there {
			// A delete of the window whose message is stored again was lost (of this message, or of the
			// message a move task made of it, which the cut took back too).
			for _, del := range b.deletes {
				if del.round == round && del.done() && m.uncertain(round, cmp.Or(del.end, del.start)) {
					del.state = delLost
				}
			}
			b.deleted, b.deletedAt = false, crashWhen{}
			for _, del := range b.deletes {
				if at := (crashWhen{del.round, del.end}); del.state == delAcked && (!b.deleted || at.before(b.deletedAt)) {
					b.deleted, b.deletedAt = true, at
				}
			}
		}
		// A receive of the window whose count the stored message does not reach was lost; so was one of a
		// message that is no longer stored (or whose delete held: its receives no longer matter).
		for _, d := range b.deliveries {
			if d.round == round && m.uncertain(round, d.end) && (!there || d.msg != c.msg || d.count > c.count) {
				d.undone = true
				if !there || d.msg != c.msg {
					m.forget(d.msg, b.id)
				}
			}
		}
		if there || b.lost {
			continue
		}
		// In neither queue: lost, which the window allows if every sign that it was stored (its
		// acknowledgement, its deliveries) came in the window. When a delete of it was attempted in the
		// window too, the store cannot tell the send lost from the delete done: either way it is gone, and
		// the send, if it was never acknowledged, is retried and brings it back.
		// (The deliveries an earlier cut took back are no sign: what they delivered is gone.)
		seen, inWindow := len(b.acks) > 0, len(b.acks) == 0 || b.ackAt.round == round && m.uncertain(round, b.ackAt.ns)
		for _, d := range b.deliveries {
			if d.undone && d.round != round {
				continue
			}
			seen = true
			inWindow = inWindow && d.round == round && m.uncertain(round, d.end)
		}
		inWindow = inWindow && seen
		deleted := false
		for _, del := range b.deletes {
			if del.done() {
				deleted = true
				inWindow = inWindow && del.round == round && m.uncertain(round, cmp.Or(del.end, del.start))
			}
		}
		if !inWindow {
			continue // deleted for good, or lost outside the window, which checkBody reports
		}
		if len(b.acks) > 0 && !deleted {
			lost = append(lost, crashLoss{id: b.id, ackAt: b.ackAt.ns})
		}
		b.lost = true
		for _, del := range b.deletes {
			if del.done() {
				del.state = delLost
			}
		}
		b.deleted, b.deletedAt = false, crashWhen{}
		m.forget(b.gen0, b.id)
		b.gen0, b.acks = "", nil
	}
	// The store is a prefix of what the child did: a producer sends one call after another, so a send lost
	// while a later one of the same producer is stored is not.
	for _, l := range lost {
		b := m.bodies[l.id]
		for _, other := range bodies {
			if other.q == b.q && other.round == b.round && other.prod == b.prod && other.n > b.n && !other.lost {
				if _, there := present[other.id]; there {
					violations = append(violations, fmt.Sprintf("%s %s was lost at the power cut, but %s, sent after it by the same producer, is stored",
						vOrder, b.id, other.id))
					break
				}
			}
		}
	}
	return lost, violations
}

// delivered counts the deliveries of b that no power cut took back.
func (b *crashBody) delivered() int {
	n := 0
	for _, d := range b.deliveries {
		if !d.undone {
			n++
		}
	}
	return n
}

// forget drops what the model knows of MessageID msg of body id, a message a power cut took back, which
// the same body may take again (a retried send); another body that takes it is a violation (learn): a
// queue reserves its numbers durably before it gives them out.
func (m *crashModel) forget(msg, id string) {
	if msg != "" && m.byMsg[msg] == id {
		delete(m.byMsg, msg)
		m.forgotten[msg] = id
	}
}

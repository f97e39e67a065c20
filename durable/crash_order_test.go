package durable_test

import (
	"cmp"
	"math"
	"slices"
)

// FIFO group order in the crash test's checker (crash_check_test.go): the order of each group's bodies, and
// the check of what children received against it.

// crashWhen is a moment of a round: the round first, then the time by that round's child, so that moments
// of two rounds compare right even if the wall clock was stepped between the two processes.
type crashWhen struct {
	round int
	ns    int64
}

func (a crashWhen) before(b crashWhen) bool {
	return a.round < b.round || a.round == b.round && a.ns < b.ns
}

func laterOf(a, b crashWhen) crashWhen {
	if a.before(b) {
		return b
	}
	return a
}

var (
	crashNever   = crashWhen{math.MaxInt, math.MaxInt64}
	crashUnknown = crashWhen{math.MinInt, math.MinInt64}
)

// crashGroupOrder is a FIFO group's bodies known to have been stored, in send order. Its first settled
// bodies have left the group for good (deleted, moved, or gone in a way that can no longer change), each by
// a time of at most settledBy: a delivery after settledBy need not look at them.
type crashGroupOrder struct {
	list      []*crashBody
	settled   int
	settledBy crashWhen
}

// crashSendOrder compares two bodies of a group by send order: the round, then the producer's count.
func crashSendOrder(a, b *crashBody) int {
	return cmp.Or(cmp.Compare(a.round, b.round), cmp.Compare(a.n, b.n))
}

// enlist puts a FIFO body known to have been stored in its group's order.
func (m *crashModel) enlist(b *crashBody) {
	if b.q != "f" || b.listed {
		return
	}
	b.listed = true
	g := m.groups[b.group]
	if g == nil {
		g = &crashGroupOrder{}
		m.groups[b.group] = g
	}
	i, _ := slices.BinarySearchFunc(g.list, b, crashSendOrder)
	g.list = slices.Insert(g.list, i, b)
	g.settled = min(g.settled, i) // settledBy stays: a bound over more bodies is still a bound
}

// checkDeliveryOrder checks the FIFO deliveries read since the last check: when a child received message Y
// as sent, every message sent before Y in its group had been deleted (a delete attempted before the
// receive returned) or moved to the dead-letter queue (its SentAt there before the receive returned), or
// came before Y in the same receive.
func (m *crashModel) checkDeliveryOrder(add func(string, ...any), present map[string]*crashCopy) {
	// goneAt returns when x's message as sent left its group: the start of the first delete attempted on it,
	// or its arrival in the dead-letter queue, whichever is first; crashNever while it is still there;
	// crashUnknown when it went to the dead-letter queue and on by a move task between two reopens. final
	// reports whether that can still change.
	//
	// A delete lost at a power cut (relaxed sync) counts only for the deliveries of its own round, which
	// came before the cut: for them it was done.
	goneAt := func(x *crashBody, of *crashDelivery) (at crashWhen, final bool) {
		at = crashNever
		for _, d := range x.deletes {
			lostBefore := d.state == delLost && of != nil && of.round == d.round
			if w := (crashWhen{d.round, d.start}); (d.done() || lostBefore) && d.msg == x.gen0 && w.before(at) {
				at = w
			}
		}
		if w, ok := x.dlqAt[x.gen0]; ok && w.before(at) {
			at = w
		}
		switch c := present[x.id]; {
		case at != crashNever:
			return at, true
		case c != nil && c.gen0:
			return crashNever, false
		}
		return crashUnknown, true
	}
	for _, g := range m.groups {
		for g.settled < len(g.list) {
			at, final := goneAt(g.list[g.settled], nil)
			if !final {
				break
			}
			g.settledBy = laterOf(g.settledBy, at)
			g.settled++
		}
	}
	for _, d := range m.fresh {
		y := d.body
		if y.q != "f" || !d.gen0 {
			continue
		}
		g := m.groups[y.group]
		j, found := slices.BinarySearchFunc(g.list, y, crashSendOrder)
		if !found {
			continue
		}
		from := 0
		if g.settledBy.before(d.endAt()) {
			from = min(g.settled, j)
		}
	earlier:
		for _, x := range g.list[from:j] {
			at, _ := goneAt(x, d)
			if at.before(d.endAt()) {
				continue
			}
			if at == crashNever && m.uncertain(d.round, d.end) {
				continue // x may have gone to the dead-letter queue by a receive that the cut lost
			}
			for _, xd := range x.deliveries {
				if xd.round == d.round && xd.call == d.call && xd.idx < d.idx {
					continue earlier
				}
			}
			add("%s group %s: %s was delivered (round %d, receive count %d) while %s, sent before it, was neither "+
				"deleted nor in the dead-letter queue",
				vOrder, y.group, y.id, d.round, d.count, x.id)
		}
	}
}

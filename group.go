package fifoq

import (
	"cmp"
	"slices"

	"github.com/google/btree"
)

// GroupOrder is the order in which a FIFO queue serves its available message groups: those whose oldest
// message is visible. SQS promises no order between groups, so code that must also work on SQS should not
// depend on either.
type GroupOrder uint8

const (
	// GroupOrderAvailable serves groups in the order they became available, as SQS is observed to: a new
	// group from its first message's arrival (or the end of its delay), a group whose messages become
	// visible again (visibility timeout ending, ChangeVisibility to 0, a receive with NoVisibilityTimeout)
	// or whose in-flight messages are deleted or moved to the dead-letter queue from that
	// moment, behind the groups already waiting. The default.
	GroupOrderAvailable GroupOrder = iota
	// GroupOrderOldestMessage serves first the group whose oldest message was sent first (fifoq's order
	// before GroupOrderAvailable).
	GroupOrderOldestMessage
)

// String returns the order's name.
func (o GroupOrder) String() string {
	switch o {
	case GroupOrderAvailable:
		return "GroupOrderAvailable"
	case GroupOrderOldestMessage:
		return "GroupOrderOldestMessage"
	}
	return "GroupOrder(invalid)"
}

// A group is a FIFO message group: its stored messages in send order. Its id is the GroupID of its messages
// (and the key of groupSet.byID); it is not stored again here.
type group struct {
	msgs msgList // byQueue links
	// key is the group's key in groupSet.available, with the bit inTree set while it is there; 0 when it has
	// none. A group that popOldest took out keeps its key without inTree (see update). One word rather than
	// a key and a flag keeps a group at 32 bytes: a queue of a million groups holds a million of them.
	key uint64
}

// inTree is the bit of a group's key that says it is in groupSet.available. Keys (counters, sequence
// numbers) stay below it, and every key in the tree has it, so it does not change their order.
const inTree = 1 << 63

// maxFreeGroups bounds the groups kept for reuse, so a queue cycling through many short-lived groups does not
// allocate one per message, and an idle queue does not hold many.
const maxFreeGroups = 1024

// A groupSet holds the groups of a FIFO queue. A group is available when its head (oldest message) is
// visible; available groups sit in a btree by key, so a receive finds the next group in O(log g) and never
// looks at a blocked one. Only the methods below touch the tree.
//
// Under GroupOrderAvailable a group's key is a counter taken when it becomes available, so the tree holds the
// groups in the order they became available. The queue applies what comes due in due order (then by sequence
// number) before the work of a call, and a call's changes in the order it makes them, so the counter follows
// time: groups that become available at one instant keep the order of the events that made them so. A group
// keeps its key while it stays available, whatever happens to its head.
//
// Under GroupOrderOldestMessage a group's key is the sequence number of its head, changed when its head
// changes. Either way keys are unique in a queue, so two groups never tie.
type groupSet struct {
	byID      map[string]*group
	available *btree.BTreeG[*group]
	free      []*group
	order     GroupOrder
	counter   uint64 // the last key given under GroupOrderAvailable
}

func groupLess(a, b *group) bool { return a.key < b.key }

func newGroupSet(order GroupOrder) groupSet {
	return groupSet{byID: make(map[string]*group), available: btree.NewG(32, groupLess), order: order}
}

// update puts g in the available tree exactly when its head is visible. Call it after anything that may
// change g's head or the head's state.
//
// Under GroupOrderAvailable a group that popOldest took keeps its key until update finds its head not
// visible: put back untouched, or with its head removed and the next message visible (a move task taking
// the head, a receive moving it to the dead-letter queue), it is available still, in its place. So a move
// task takes a group's visible messages one after the other, as a receive would. A group whose head the
// caller received leaves the tree.
func (s *groupSet) update(g *group) {
	h := g.msgs.head
	if h == nil || h.state != StateVisible {
		if g.key&inTree != 0 {
			s.available.Delete(g)
		}
		g.key = 0
		return
	}
	switch {
	case s.order == GroupOrderOldestMessage:
		if g.key == h.seq|inTree {
			return
		}
		if g.key&inTree != 0 {
			s.available.Delete(g)
		}
		g.key = h.seq
	case g.key&inTree != 0:
		return // it stays where it is
	case g.key == 0:
		s.counter++
		g.key = s.counter
	}
	g.key |= inTree
	s.available.ReplaceOrInsert(g)
}

// add appends m to its group, creating the group if it has no messages.
func (s *groupSet) add(m *message) {
	g, ok := s.byID[m.groupID]
	if !ok {
		if n := len(s.free); n > 0 {
			g, s.free = s.free[n-1], s.free[:n-1]
		} else {
			g = &group{msgs: msgList{kind: byQueue}}
		}
		s.byID[m.groupID] = g
	}
	g.msgs.pushBack(m)
	m.group = g
	s.update(g)
}

// remove takes m out of its group, and lets the group go when it is empty.
func (s *groupSet) remove(m *message) {
	g := m.group
	g.msgs.remove(m)
	m.group = nil
	s.update(g)
	if g.msgs.len == 0 {
		delete(s.byID, m.groupID)
		if len(s.free) < maxFreeGroups {
			s.free = append(s.free, g)
		}
	}
}

// popOldest removes the first available group from the tree and returns it. The caller receives at least
// its head, or removes it, or puts the group back untouched, then calls update.
func (s *groupSet) popOldest() (*group, bool) {
	g, ok := s.available.DeleteMin()
	if ok {
		g.key &^= inTree
	}
	return g, ok
}

func (s *groupSet) hasAvailable() bool { return s.available.Len() > 0 }

func (s *groupSet) clear() {
	clear(s.byID)
	s.available.Clear(false)
	s.free = s.free[:0]
}

// setOrder changes the order of the available groups to o, keeping their current order under
// GroupOrderAvailable. It walks the available groups: a change of settings, not a hot path.
func (s *groupSet) setOrder(o GroupOrder) {
	if o == s.order {
		return
	}
	s.order = o
	var gs []*group
	s.available.Ascend(func(g *group) bool {
		gs = append(gs, g)
		return true
	})
	s.requeue(gs)
}

// requeue puts gs, available groups, in the tree in the queue's order, and under GroupOrderAvailable in the
// order of gs.
func (s *groupSet) requeue(gs []*group) {
	s.available.Clear(false)
	for _, g := range gs {
		g.key = 0
		s.update(g)
	}
}

// A recoveredGroup is a group available at recovery, with when its head became visible and the head's
// sequence number.
type recoveredGroup struct {
	g    *group
	at   tick
	head uint64
}

// recovered orders the groups available at the end of a recovery, gs, which it may reorder: under
// GroupOrderAvailable, by when their head became visible, then by the head's sequence number. The store
// keeps no more: a group whose earlier messages were deleted after its head became visible counts from its
// head's visibility, not from the delete.
func (s *groupSet) recovered(gs []recoveredGroup) {
	if s.order != GroupOrderAvailable {
		return // the tree is ordered by head already
	}
	slices.SortFunc(gs, func(a, b recoveredGroup) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.head, b.head))
	})
	groups := make([]*group, len(gs))
	for i, r := range gs {
		groups[i] = r.g
	}
	s.requeue(groups)
}

package fifoq

import "github.com/google/btree"

// A group is a FIFO message group: its stored messages in send order. Its id is the GroupID of its messages
// (and the key of groupSet.byID); it is not stored again here.
type group struct {
	msgs    msgList // byQueue links
	headSeq uint64  // the key of the group in groupSet.available while it is there; 0 when it is not
}

// maxFreeGroups bounds the groups kept for reuse, so a queue cycling through many short-lived groups does not
// allocate one per message, and an idle queue does not hold many.
const maxFreeGroups = 1024

// A groupSet holds the groups of a FIFO queue. A group is available when its head (oldest message) is visible;
// available groups sit in a btree ordered by the sequence number of their head, so a receive finds the oldest
// available group in O(log g) and never looks at a blocked one. Sequence numbers are unique in a queue, so
// two groups never tie. Only the methods below touch the tree.
type groupSet struct {
	byID      map[string]*group
	available *btree.BTreeG[*group]
	free      []*group
}

func groupLess(a, b *group) bool { return a.headSeq < b.headSeq }

func newGroupSet() groupSet {
	return groupSet{byID: make(map[string]*group), available: btree.NewG(32, groupLess)}
}

// update puts g in the available tree exactly when its head is visible, keyed by the head. Call it after
// anything that may change g's head or the head's state.
func (s *groupSet) update(g *group) {
	h := g.msgs.head
	want := h != nil && h.state == StateVisible
	if g.headSeq != 0 && (!want || g.headSeq != h.seq) {
		s.available.Delete(g)
		g.headSeq = 0
	}
	if want && g.headSeq == 0 {
		g.headSeq = h.seq
		s.available.ReplaceOrInsert(g)
	}
}

// add appends m to its group, creating the group if it has no messages.
func (s *groupSet) add(m *message) {
	g, ok := s.byID[m.msg.GroupID]
	if !ok {
		if n := len(s.free); n > 0 {
			g, s.free = s.free[n-1], s.free[:n-1]
		} else {
			g = &group{msgs: msgList{kind: byQueue}}
		}
		s.byID[m.msg.GroupID] = g
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
		delete(s.byID, m.msg.GroupID)
		if len(s.free) < maxFreeGroups {
			s.free = append(s.free, g)
		}
	}
}

// popOldest removes the available group with the oldest head from the tree and returns it. The caller
// receives at least its head, so the group stays unavailable until its head is visible again.
func (s *groupSet) popOldest() (*group, bool) {
	g, ok := s.available.DeleteMin()
	if ok {
		g.headSeq = 0
	}
	return g, ok
}

func (s *groupSet) hasAvailable() bool { return s.available.Len() > 0 }

func (s *groupSet) clear() {
	clear(s.byID)
	s.available.Clear(false)
	s.free = s.free[:0]
}

package fifoq

import "github.com/google/btree"

// A group is a FIFO message group: its stored messages in send order.
type group struct {
	id      string
	msgs    msgList // byQueue links
	headSeq uint64  // the key of the group in groupSet.available, valid while inTree
	inTree  bool
}

// maxFreeGroups bounds the groups kept for reuse, so a queue cycling through many short-lived groups does not
// allocate one per message, and an idle queue does not hold many.
const maxFreeGroups = 1024

// A groupSet holds the groups of a FIFO queue. A group is available when its head (oldest message) is visible;
// available groups sit in a btree ordered by the sequence number of their head, then group id, so a receive
// finds the oldest available group in O(log g) and never looks at a blocked one. Only the methods below
// touch the tree.
type groupSet struct {
	byID      map[string]*group
	available *btree.BTreeG[*group]
	free      []*group
}

func groupLess(a, b *group) bool {
	if a.headSeq != b.headSeq {
		return a.headSeq < b.headSeq
	}
	return a.id < b.id
}

func newGroupSet() groupSet {
	return groupSet{byID: make(map[string]*group), available: btree.NewG(32, groupLess)}
}

// get returns the group with id, creating it empty.
func (s *groupSet) get(id string) *group {
	if g, ok := s.byID[id]; ok {
		return g
	}
	var g *group
	if n := len(s.free); n > 0 {
		g, s.free = s.free[n-1], s.free[:n-1]
	} else {
		g = &group{msgs: msgList{kind: byQueue}}
	}
	g.id = id
	s.byID[id] = g
	return g
}

// update puts g in the available tree exactly when its head is visible, keyed by the head, and lets an empty
// group go. Call it after anything that may change g's head or the head's state.
func (s *groupSet) update(g *group) {
	h := g.msgs.head
	want := h != nil && h.state == StateVisible
	if g.inTree && (!want || g.headSeq != h.seq) {
		s.available.Delete(g)
		g.inTree = false
	}
	if want && !g.inTree {
		g.headSeq = h.seq
		s.available.ReplaceOrInsert(g)
		g.inTree = true
	}
	if h == nil {
		delete(s.byID, g.id)
		if len(s.free) < maxFreeGroups {
			*g = group{msgs: msgList{kind: byQueue}}
			s.free = append(s.free, g)
		}
	}
}

// add appends m to its group.
func (s *groupSet) add(m *message, groupID string) {
	g := s.get(groupID)
	g.msgs.pushBack(m)
	m.group = g
	s.update(g)
}

// remove takes m out of its group.
func (s *groupSet) remove(m *message) {
	g := m.group
	g.msgs.remove(m)
	m.group = nil
	s.update(g)
}

// popOldest removes the available group with the oldest head from the tree and returns it. The caller
// receives at least its head, so the group stays unavailable until its head is visible again.
func (s *groupSet) popOldest() (*group, bool) {
	g, ok := s.available.DeleteMin()
	if ok {
		g.inTree = false
	}
	return g, ok
}

func (s *groupSet) hasAvailable() bool { return s.available.Len() > 0 }

func (s *groupSet) clear() {
	clear(s.byID)
	s.available.Clear(false)
	s.free = s.free[:0]
}

// Package dedup is the 5-minute deduplication window of SQS's FIFO queues and SNS's FIFO topics: package fifoq
// and package topic keep their ids in one.
package dedup

import "time"

// Interval is how long an accepted deduplication id suppresses a second message with it.
const Interval = 5 * time.Minute

// A Window remembers the deduplication ids accepted in the last 5 minutes, of a FIFO queue or topic. It holds two
// generations: ids go into cur; when cur is 5 minutes old it becomes prev and the old prev is dropped whole.
// So no id is deleted one by one (a cold hash lookup per message), and an id is dropped only once it is 5
// minutes old; lookups in prev check the age.
type Window struct {
	cur, prev map[string]entry
	curSince  time.Duration // when cur started; every id in cur is younger than 5 minutes
}

type entry struct {
	seq uint64        // the accepted message, for a duplicate's MessageID and SequenceNumber
	at  time.Duration // when it was accepted
}

// NewWindow returns an empty window. Times are offsets from an epoch of its owner's, which never step back.
func NewWindow() Window {
	return Window{cur: make(map[string]entry), prev: make(map[string]entry)}
}

// Lookup returns the message accepted under key in the 5 minutes before now.
func (w *Window) Lookup(key string, now time.Duration) (uint64, bool) {
	if e, ok := w.cur[key]; ok {
		return e.seq, true
	}
	if e, ok := w.prev[key]; ok && now-e.at < Interval {
		return e.seq, true
	}
	return 0, false
}

// Add records key, accepted at now for message seq.
func (w *Window) Add(key string, seq uint64, now time.Duration) {
	w.cur[key] = entry{seq: seq, at: now}
}

// Expire turns the generations over once cur is 5 minutes old: every id in prev is then older than that.
// It reports whether it did.
func (w *Window) Expire(now time.Duration) bool {
	if now-w.curSince < Interval {
		return false
	}
	clear(w.prev)
	w.cur, w.prev = w.prev, w.cur
	w.curSince = now
	return true
}

// Clear forgets every id.
func (w *Window) Clear() {
	clear(w.cur)
	clear(w.prev)
}

// Restore adds an id accepted at at, read back from a store: the ids oldest first, none older than Interval.
func (w *Window) Restore(key string, seq uint64, at time.Duration) {
	if len(w.cur) == 0 {
		w.curSince = at // the oldest: every id in cur is younger than 5 minutes from it
	}
	w.Add(key, seq, at)
}

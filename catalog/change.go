package catalog

import (
	"context"
	"maps"
	"slices"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/internal/rule"
)

// Changing and deleting the queues of a catalogue, and the redrive policies that wait for their dead-letter
// queue.

// Update changes the definition of the queue name of ns: edit is given a copy of its definition as it is now,
// and changes it, usually with [Definition.Apply]. The catalogue then checks the whole definition (see
// [Definition.Check]) and makes it the queue's: its settings go to its Queue as [Queue.SetAttributes] applies
// them, a redrive policy changed takes its dead-letter queue from ns, and Modified is set to now. An edit that
// returns an error, or a definition that breaks a rule, changes nothing, and Update returns that error; a
// queue the catalogue does not hold returns ErrQueueDoesNotExist.
//
// edit runs with the catalogue's lock held, so that concurrent updates of a queue apply one after the other,
// each to the definition the one before left: it must not call the catalogue. It may be called twice (a
// change of a redrive policy is made again under the catalogue's lock for writing), so it should change d
// and nothing else. Created, and a redrive policy's Pending, are the catalogue's to set. A change of the redrive allow policy may let pending redrive policies
// that name the queue take it as their dead-letter queue again. ctx governs the start of the call only.
func (c *Catalog) Update(ctx context.Context, ns Namespace, name string, edit func(d *Definition) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var j journal
	if err := c.update(&j, ns, name, edit); err != nil {
		return err
	}
	return j.wait()
}

func (c *Catalog) update(j *journal, ns Namespace, name string, edit func(d *Definition) error) error {
	if again, err := c.updateOnce(j, ns, name, edit, false); !again {
		return err
	}
	_, err := c.updateOnce(j, ns, name, edit, true)
	return err
}

// updateOnce makes an update. Under the catalogue's lock for reading (exclusive false), it makes a change
// that leaves the redrive policies alone, and reports again for one that does not: that change is made under
// the lock for writing, so that a DeleteQueue of its dead-letter queue, or of this queue, comes wholly before
// or after it, and it may bind pending policies. A change of other settings, which may take a while on a
// queue of many messages (a new delay of a FIFO queue's delayed messages), does not stop the look-ups of every
// other call meanwhile.
func (c *Catalog) updateOnce(j *journal, ns Namespace, name string, edit func(d *Definition) error, exclusive bool) (again bool, err error) {
	if exclusive {
		c.mu.Lock()
		defer c.mu.Unlock()
	} else {
		c.mu.RLock()
		defer c.mu.RUnlock()
	}
	e := c.queues[ns][name]
	if e == nil {
		return false, rule.Reject(ErrQueueDoesNotExist, "queue %s", name)
	}
	if err := c.err(); err != nil {
		return false, err
	}
	e.mu.Lock()
	cur := c.definitionLocked(e)
	next := cur.clone()
	if err := edit(&next); err != nil {
		e.mu.Unlock()
		return false, err
	}
	allowChanged := !next.showsSame(&cur, FieldRedriveAllowPolicy)
	if !exclusive && (allowChanged || next.RedrivePolicy != cur.RedrivePolicy) {
		e.mu.Unlock()
		return true, nil
	}
	err = c.changeLocked(j, e, &cur, &next, true)
	e.mu.Unlock()
	if err == nil && allowChanged {
		c.rebindLocked(j, e)
	}
	return false, err
}

// changeLocked makes next e's definition, whose settings were cur, and records it; modified says that a
// setting changed, for Modified. e.mu must be held, and c.mu: for writing when the redrive policy changes.
func (c *Catalog) changeLocked(j *journal, e *catalogEntry, cur, next *Definition, modified bool) error {
	next.Created, next.Modified = cur.Created, cur.Modified
	if modified {
		next.Modified = c.now()
	}
	if next.RedrivePolicy != cur.RedrivePolicy {
		next.RedrivePolicy.Pending = false // a policy given is bound
	}
	fifo := e.q.FIFO()
	if err := next.Check(fifo, AllFields); err != nil {
		return err
	}
	a := e.q.Attributes()
	a.VisibilityTimeout, a.Delay, a.Retention = next.VisibilityTimeout, next.Delay, next.Retention
	a.MaxMessageSize, a.ReceiveWaitTime = next.MaxMessageSize, next.ReceiveWaitTime
	a.ContentBasedDeduplication, a.DeduplicationScope = next.ContentBasedDeduplication, next.DeduplicationScope
	a.DeadLetterQueue, a.MaxReceiveCount = nil, 0
	if p := next.RedrivePolicy; p.DeadLetterQueue != "" && !p.Pending {
		dlq, err := c.deadLetterQueueLocked(e.key.ns, p.DeadLetterQueue)
		if err != nil {
			return err
		}
		a.DeadLetterQueue, a.MaxReceiveCount = dlq, p.MaxReceiveCount
	}
	a.RedriveAllowPolicy = fifoq.RedriveAllowPolicy{}
	if p := next.RedriveAllowPolicy; p != nil {
		a.RedriveAllowPolicy = c.allowPolicy(e.key.ns, p)
	}
	if err := c.setAttributesLocked(j, e.q, a); err != nil {
		return err
	}
	if p := cur.RedrivePolicy; p.Pending && !next.RedrivePolicy.Pending {
		c.unpendLocked(e, catalogKey{e.key.ns, p.DeadLetterQueue})
	}
	e.def = next.clone()
	if !next.RedrivePolicy.Pending {
		e.def.RedrivePolicy = RedrivePolicy{} // bound: its Queue's
	}
	c.putDefinitionLocked(j, e)
	return nil
}

// setAttributesLocked sets the attributes of q, leaving the wait for the disk to j.
func (c *Catalog) setAttributesLocked(j *journal, q *fifoq.Queue, a fifoq.Attributes) error {
	p, err := q.SetAttributesNoWait(a)
	if err != nil {
		return err
	}
	j.add(p, nil)
	return nil
}

// TagQueue adds tags to the queue name of ns, replacing the values of the keys it has: at most 50 in all
// (ErrInvalidTags). Tags are no setting: Modified does not change. A queue the catalogue does not hold
// returns ErrQueueDoesNotExist.
func (c *Catalog) TagQueue(ctx context.Context, ns Namespace, name string, tags map[string]string) error {
	return c.changeTags(ctx, ns, name, func(have map[string]string) map[string]string {
		if have == nil {
			have = make(map[string]string, len(tags))
		}
		maps.Copy(have, tags)
		return have
	})
}

// UntagQueue removes the tags of those keys from the queue name of ns; keys it does not have are ignored.
// No keys, or a key TagQueue would refuse (empty, or longer than 128 characters), return ErrInvalidTags and
// change nothing, as on SQS. A queue the catalogue does not hold returns ErrQueueDoesNotExist.
func (c *Catalog) UntagQueue(ctx context.Context, ns Namespace, name string, keys []string) error {
	if err := checkTagKeys(keys); err != nil {
		if err := ctx.Err(); err != nil {
			return err
		}
		if c.lookup(ns, name) == nil {
			return rule.Reject(ErrQueueDoesNotExist, "queue %s", name)
		}
		return err
	}
	return c.changeTags(ctx, ns, name, func(have map[string]string) map[string]string {
		for _, k := range keys {
			delete(have, k)
		}
		return have
	})
}

// changeTags changes the tags of a queue with change, which is given a copy of them.
func (c *Catalog) changeTags(ctx context.Context, ns Namespace, name string, change func(map[string]string) map[string]string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	e := c.lookup(ns, name)
	if e == nil {
		return rule.Reject(ErrQueueDoesNotExist, "queue %s", name)
	}
	if err := c.err(); err != nil {
		return err
	}
	var j journal
	e.mu.Lock()
	tags := change(maps.Clone(e.def.Tags))
	err := checkTags(tags)
	if err == nil {
		e.def.Tags = tags
		c.putDefinitionLocked(&j, e)
	}
	e.mu.Unlock()
	if err != nil {
		return err
	}
	return j.wait()
}

// DeleteQueue deletes the queue name of ns, with its messages: its Queue refuses every change from then on in
// a store (ErrQueueDeleted), and its name can be used again 60 seconds later. Its own redrive policy is
// dropped, so its dead-letter queue no longer counts it as a source; its move tasks are stopped and
// forgotten, and a running move task that would move messages into it (its destination, or its source when
// the task returns messages to their sources and one came from it) ends FAILED with the failure
// "AWS.SimpleQueueService.NonExistentQueue". The queues whose dead-letter queue it was keep their redrive
// policy, pending: their messages stay with them past their maxReceiveCount, rather than move into a queue
// nobody can reach, until a queue of that name is created again, which takes them back as its sources.
//
// A queue the catalogue does not hold returns ErrQueueDoesNotExist. In a store, the queue is gone from disk
// when DeleteQueue returns; a deletion that a crash cut short is finished by the next [Open]. The move tasks
// it failed have ended (after the batch each had taken) when it returns. ctx governs the start of the call
// only.
func (c *Catalog) DeleteQueue(ctx context.Context, ns Namespace, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var j journal
	e, failed, err := c.deleteQueue(&j, ns, name)
	if err != nil {
		return err
	}
	err = j.wait()
	if c.st != nil {
		if err == nil {
			err = c.st.DeleteQueue(e.q.Name())
		}
		c.mu.Lock()
		delete(c.unfinished, e.q.Name())
		c.mu.Unlock()
	}
	for _, t := range failed {
		_ = t.Wait(context.WithoutCancel(ctx)) // listed FAILED, its end recorded, once DeleteQueue returns
	}
	return err
}

func (c *Catalog) deleteQueue(j *journal, ns Namespace, name string) (*catalogEntry, []*fifoq.MoveTask, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.queues[ns][name]
	if e == nil {
		return nil, nil, rule.Reject(ErrQueueDoesNotExist, "queue %s", name)
	}
	if err := c.err(); err != nil {
		return nil, nil, err
	}
	c.removeLocked(e)
	now := c.now()
	c.pruneDeletedLocked(j, now)
	c.deleted[e.key] = now
	c.deletions++

	// First the queue's own redrive policy: once it is gone, no receive still under way can move a message
	// of this queue into a dead-letter queue, where the look below would miss it.
	e.mu.Lock()
	if p := e.def.RedrivePolicy; p.Pending {
		c.unpendLocked(e, catalogKey{ns, p.DeadLetterQueue})
		e.def.RedrivePolicy = RedrivePolicy{}
	}
	if a := e.q.Attributes(); a.DeadLetterQueue != nil {
		a.DeadLetterQueue, a.MaxReceiveCount = nil, 0
		if err := c.setAttributesLocked(j, e.q, a); err != nil {
			c.warn("fifoq: dropping the redrive policy of a deleted queue", "queue", name, "error", err)
		}
	}
	e.gone = true
	if c.st != nil {
		b := c.rec.NewBatch()
		fn := e.q.Name()
		b.Delete(catalogKeyOf(catalogQueue, fn))
		b.Set(catalogKeyOf(catalogDeleted, fn), encodeDeleted(e.key, now))
		b.DeleteRange(taskRange(fn))
		c.commit(j, b)
		c.unfinished[fn] = struct{}{}
	}
	e.mu.Unlock()
	var failed []*fifoq.MoveTask
	for _, m := range c.queues {
		for _, other := range m {
			c.detachLocked(j, other, e)
			if t := c.failMovesIntoLocked(other, e); t != nil {
				failed = append(failed, t)
			}
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	c.tasksMu.Lock()
	for _, t := range e.tasks {
		delete(c.tasks, t.id)
	}
	c.tasksMu.Unlock()
	for _, t := range e.tasks {
		t.task.Halt() // its record is gone with the queue's: it records no end
	}
	e.tasks = nil
	return e, failed, nil
}

// detachLocked leaves src's redrive policy pending when dlq, being deleted, is its dead-letter queue: its
// Queue loses the policy, and the catalogue keeps it. c.mu must be held for writing.
func (c *Catalog) detachLocked(j *journal, src, dlq *catalogEntry) {
	src.mu.Lock()
	defer src.mu.Unlock()
	a := src.q.Attributes()
	if a.DeadLetterQueue != dlq.q {
		return
	}
	count := a.MaxReceiveCount
	a.DeadLetterQueue, a.MaxReceiveCount = nil, 0
	if err := c.setAttributesLocked(j, src.q, a); err != nil {
		c.warn("fifoq: detaching a queue from its deleted dead-letter queue", "queue", src.key.name, "error", err)
		return
	}
	src.def.RedrivePolicy = RedrivePolicy{DeadLetterQueue: dlq.key.name, MaxReceiveCount: count, Pending: true}
	c.pendLocked(src)
	c.putDefinitionLocked(j, src)
}

// pendLocked adds src to the pending policies of its dead-letter queue. c.mu must be held for writing.
func (c *Catalog) pendLocked(src *catalogEntry) {
	k := catalogKey{src.key.ns, src.def.RedrivePolicy.DeadLetterQueue}
	set := c.pending[k]
	if set == nil {
		set = make(map[*catalogEntry]struct{})
		c.pending[k] = set
	}
	set[src] = struct{}{}
}

// unpendLocked removes src from the pending policies naming dlq. c.mu must be held for writing.
func (c *Catalog) unpendLocked(src *catalogEntry, dlq catalogKey) {
	if set := c.pending[dlq]; set != nil {
		delete(set, src)
		if len(set) == 0 {
			delete(c.pending, dlq)
		}
	}
}

// rebindLocked gives the pending redrive policies that name dlq their dead-letter queue back: dlq, created
// again, or whose redrive allow policy changed. A policy that dlq's type or redrive allow policy refuses
// stays pending. c.mu must be held for writing, and dlq.mu not held.
func (c *Catalog) rebindLocked(j *journal, dlq *catalogEntry) {
	for src := range c.pending[dlq.key] {
		src.mu.Lock()
		a := src.q.Attributes()
		a.DeadLetterQueue, a.MaxReceiveCount = dlq.q, src.def.RedrivePolicy.MaxReceiveCount
		if err := c.setAttributesLocked(j, src.q, a); err == nil {
			src.def.RedrivePolicy = RedrivePolicy{}
			c.unpendLocked(src, dlq.key)
			c.putDefinitionLocked(j, src)
		}
		src.mu.Unlock()
	}
}

// warn logs a warning, if the catalogue has a logger.
func (c *Catalog) warn(msg string, args ...any) {
	if c.logger != nil {
		c.logger.Warn(msg, args...)
	}
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

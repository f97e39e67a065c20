package sqsapi

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/internal/store"
)

// Open returns a Server that keeps its queues in st, a store from durable.Open: the queues' definitions
// (attributes, policies, tags, timestamps), their messages, the AWSTraceHeader of the messages and the
// names deleted in the last 60 seconds, so that a server opened again on the same store, after a restart or
// a crash, has them all back. Every change is on disk before the action that made it returns.
//
// Open re-creates the queues that st holds a definition of, each with fifoq.WithStore(st), which brings
// its messages back: dead-letter queues before their sources, each redrive policy bound to its
// dead-letter queue, or pending, as it was. It finishes a DeleteQueue that a crash interrupted. Queues in
// st that the server holds no definition of (made with fifoq.New directly, or by a CreateQueue that did
// not return) are left alone; CreateQueue of such a name takes the queue over, messages and all.
//
// A record that does not decode returns fifoq.ErrStoreCorrupt, naming it: the store is never opened in
// part. The queues of st must not be open already (fifoq.ErrQueueOpen). Open does not close st on an error,
// and queues it opened before the error stay open on st: close st.
//
// Call Close when the server is done serving, then close st.
func Open(st *fifoq.Store, opts ...Option) (*Server, error) {
	if st == nil {
		return nil, errors.New("sqsapi: Open: nil store")
	}
	s := newServer(opts)
	s.st, s.eng = st, store.EngineOf(st)
	s.deletions = 1 // a queue may hold messages from a queue deleted before the restart
	rs, err := s.readRecords()
	if err != nil {
		return nil, err
	}
	if err := s.recover(rs); err != nil {
		return nil, err
	}
	return s, nil
}

// storedRecords are the server's records as read by Open.
type storedRecords struct {
	queues  map[string]*queueRecord
	deleted map[string]time.Time
	traces  []storedTrace // oldest first
}

type storedTrace struct {
	expires    time.Time
	id, header string
}

// readRecords reads every record of the server.
func (s *Server) readRecords() (*storedRecords, error) {
	rs := &storedRecords{queues: make(map[string]*queueRecord), deleted: make(map[string]time.Time)}
	err := s.eng.Scan([]byte{keyPrefix}, []byte{keyPrefix + 1}, func(k, v []byte) error {
		var err error
		switch {
		case len(k) < 3:
			err = errors.New("unknown key")
		case k[1] == kindQueue:
			rs.queues[string(k[2:])], err = decodeQueueRecord(string(k[2:]), v)
		case k[1] == kindDeleted:
			rs.deleted[string(k[2:])], err = decodeDeleted(v)
		case k[1] == kindTrace:
			var t storedTrace
			t.expires, t.id, t.header, err = decodeTrace(k, v)
			rs.traces = append(rs.traces, t)
		default:
			err = errors.New("unknown key")
		}
		if err != nil {
			return &corruptRecord{fmt.Errorf("%s: %w", recordName(k), err)}
		}
		return nil
	})
	var c *corruptRecord
	if errors.As(err, &c) {
		return nil, s.corrupt(c.err)
	}
	if err != nil {
		return nil, fmt.Errorf("sqsapi: reading the records of %s: %w", s.st, err)
	}
	return rs, nil
}

// A corruptRecord is a record that does not decode.
type corruptRecord struct{ err error }

func (c *corruptRecord) Error() string { return c.err.Error() }

// corrupt returns the error of a record that cannot be used.
func (s *Server) corrupt(err error) error {
	return fmt.Errorf("%w: %s: sqsapi %w", fifoq.ErrStoreCorrupt, s.st, err)
}

// recover re-creates the server's state from its records.
func (s *Server) recover(rs *storedRecords) error {
	now := s.now()
	tidy := s.eng.NewBatch() // records that are of no more use

	// Deleted names: finish the deletion of a queue that a crash interrupted.
	inStore := make(map[string]bool)
	for _, name := range s.st.Queues() {
		inStore[name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(rs.deleted)) {
		at := rs.deleted[name]
		if rs.queues[name] != nil { // created again: the record was about to go
			tidy.Delete(recordKey(kindDeleted, name))
			continue
		}
		if inStore[name] {
			if err := s.st.DeleteQueue(name); err != nil {
				return fmt.Errorf("sqsapi: finishing the deletion of queue %s: %w", name, err)
			}
		}
		if now.Sub(at) >= deletedReuseDelay {
			tidy.Delete(recordKey(kindDeleted, name))
			continue
		}
		s.deleted[name] = at
	}

	// Queues: dead-letter queues before their sources.
	if err := s.recoverQueues(rs.queues, inStore); err != nil {
		return err
	}

	// Trace headers, oldest first, as they were put.
	t := &s.traces
	for _, tr := range rs.traces {
		if now.After(tr.expires) {
			tidy.Delete(traceKey(tr.expires, tr.id))
			continue
		}
		t.evictLocked(tr.expires.Add(-traceLife), tidy) // past maxTraces: what a put that did not reach the disk forgot
		t.addLocked(tr.id, tr.header, tr.expires)
	}

	// No sync: what is not durable is tidied again at the next Open.
	if _, err := s.eng.Commit(tidy, false); err != nil {
		return s.fail(err)
	}
	return nil
}

// recoverQueues re-creates the queues of the records, each on the store.
func (s *Server) recoverQueues(recs map[string]*queueRecord, inStore map[string]bool) error {
	// The order: a queue after the dead-letter queue its policy is bound to. fifoq refused cycles of bound
	// policies; a stored one (which no change of the server makes) leaves the policy that closes it pending.
	var order []string
	state := make(map[string]int) // 1: being visited, 2: ordered
	var visit func(name string)
	visit = func(name string) {
		if state[name] != 0 {
			return
		}
		state[name] = 1
		if r := recs[name]; r.DeadLetterQueue != "" && !r.Pending && recs[r.DeadLetterQueue] != nil {
			visit(r.DeadLetterQueue)
		}
		state[name] = 2
		order = append(order, name)
	}
	for _, name := range slices.Sorted(maps.Keys(recs)) {
		visit(name)
	}

	// A dead-letter queue whose RedriveAllowPolicy refuses a source bound to it (the policy changed after the
	// source took it) is created allowing all, and gets its policy once its sources are bound.
	refusing := make(map[string]bool)
	for name, r := range recs {
		if d := recs[r.DeadLetterQueue]; d != nil && !r.Pending && !d.allows(name) {
			refusing[r.DeadLetterQueue] = true
		}
	}

	for _, name := range order {
		r := recs[name]
		qs := &queueState{name: name, arn: s.arnOf(name), created: time.Unix(0, r.Created), modified: time.Unix(0, r.Modified),
			throughput: r.FifoThroughputLimit, allowSet: r.RedriveAllowPolicy != nil, extra: r.Extra, tags: r.Tags}
		var dlq *fifoq.Queue
		pending := r.Pending
		if r.DeadLetterQueue != "" && !pending {
			if d := s.queues[r.DeadLetterQueue]; d != nil {
				dlq = d.q
			} else {
				s.log.Warn("sqsapi: the dead-letter queue of a redrive policy is not there: the policy is pending",
					"queue", name, "dead_letter_queue", r.DeadLetterQueue)
				pending = true
			}
		}
		if !inStore[name] {
			s.log.Warn("sqsapi: a queue defined has no messages stored: it is created empty", "queue", name, "store", s.st.String())
		}
		q, err := fifoq.New(name, s.queueOptions(r.options(dlq, refusing[name]))...)
		if dlq != nil && (errors.Is(err, fifoq.ErrInvalidRedrivePolicy) || errors.Is(err, fifoq.ErrRedriveNotAllowed)) {
			s.log.Warn("sqsapi: the redrive policy of a queue is refused by its dead-letter queue: the policy is pending",
				"queue", name, "dead_letter_queue", r.DeadLetterQueue, "error", err)
			pending = true
			q, err = fifoq.New(name, s.queueOptions(r.options(nil, refusing[name]))...)
		}
		if err != nil {
			if fifoq.ErrorCode(err) != "" {
				return s.corrupt(fmt.Errorf("%s: %w", recordName(recordKey(kindQueue, name)), err))
			}
			return fmt.Errorf("sqsapi: opening queue %s: %w", name, err)
		}
		qs.q = q
		if pending {
			qs.pendingDLQ, qs.pendingCount = s.arnOf(r.DeadLetterQueue), r.MaxReceiveCount
			s.pendLocked(qs)
		}
		s.queues[name] = qs
	}

	for _, name := range slices.Sorted(maps.Keys(refusing)) {
		q := s.queues[name].q
		a := q.Attributes()
		a.RedriveAllowPolicy = recs[name].allowPolicy()
		if err := q.SetAttributes(a); err != nil {
			if fifoq.ErrorCode(err) != "" {
				return s.corrupt(fmt.Errorf("%s: %w", recordName(recordKey(kindQueue, name)), err))
			}
			return fmt.Errorf("sqsapi: opening queue %s: %w", name, err)
		}
	}
	return nil
}

// Close cancels the move tasks that run and waits for them to end. Call it once the server serves no more
// requests: a durable server's store can then be closed with no task left writing to it. Close does not
// close the store, which belongs to the caller of Open. It calls BeginShutdown, so that a long poll still in
// progress ends. It returns nil.
func (s *Server) Close() error {
	s.BeginShutdown()
	s.tasksMu.Lock()
	tasks := slices.Collect(maps.Values(s.tasks))
	s.tasksMu.Unlock()
	for _, t := range tasks {
		_ = t.task.Cancel() // an ended task returns ErrMoveTaskNotRunning: nothing to do
	}
	for _, t := range tasks {
		_ = t.task.Wait(context.Background()) // a cancelled task ends after the batch it has taken
	}
	return nil
}

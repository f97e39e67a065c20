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

// storedRecords are the server's records as read by Open, by key (fifoq name).
type storedRecords struct {
	queues  map[string]*queueRecord
	deleted map[string]storedDeleted
	traces  []storedTrace           // oldest first
	plain   *namespace              // nil: not recorded
	tasks   map[string][]storedTask // by the fifoq name of their source
}

type storedDeleted struct {
	k  queueKey // zero: a name of the plain namespace, the key's
	at time.Time
}

type storedTrace struct {
	expires    time.Time
	id, header string
}

// readRecords reads every record of the server.
func (s *Server) readRecords() (*storedRecords, error) {
	rs := &storedRecords{queues: make(map[string]*queueRecord), deleted: make(map[string]storedDeleted),
		tasks: make(map[string][]storedTask)}
	err := s.eng.Scan([]byte{keyPrefix}, []byte{keyPrefix + 1}, func(k, v []byte) error {
		var err error
		switch {
		case len(k) == 2 && k[1] == kindPlain:
			var ns namespace
			ns, err = decodePlain(v)
			rs.plain = &ns
		case len(k) < 3:
			err = errors.New("unknown key")
		case k[1] == kindQueue:
			rs.queues[string(k[2:])], err = decodeQueueRecord(string(k[2:]), v)
		case k[1] == kindDeleted:
			var d storedDeleted
			d.k, d.at, err = decodeDeleted(v)
			rs.deleted[string(k[2:])] = d
		case k[1] == kindTask:
			var fn string
			var t storedTask
			if fn, t, err = decodeTask(k, v); err == nil {
				rs.tasks[fn] = append(rs.tasks[fn], t)
			}
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
	tidy := s.eng.NewBatch() // records that are of no more use, and the plain namespace
	if rs.plain != nil {
		s.plain = *rs.plain
	} else {
		tidy.Set([]byte{keyPrefix, kindPlain}, encodePlain(s.plain))
	}

	// Deleted names: finish the deletion of a queue that a crash interrupted.
	inStore := make(map[string]bool)
	for _, name := range s.st.Queues() {
		inStore[name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(rs.deleted)) {
		d := rs.deleted[name]
		k, at := d.k, d.at
		if k == (queueKey{}) {
			k = queueKey{s.plain, name}
		} else if fn := s.fifoName(k.ns, k.name); fn != name {
			return s.corrupt(fmt.Errorf("%s: of %s, whose name in the store is %s", recordName(recordKey(kindDeleted, name)), k.ns.arn(k.name), fn))
		}
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
		s.deleted[k] = at
	}

	// Queues: dead-letter queues before their sources.
	if err := s.recoverQueues(rs.queues, inStore); err != nil {
		return err
	}

	// Move tasks, once their queues are there: a running one goes on.
	if err := s.recoverTasks(rs.tasks, tidy); err != nil {
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

// recoverQueues re-creates the queues of the records, each on the store. recs are by key: fifoq name.
func (s *Server) recoverQueues(recs map[string]*queueRecord, inStore map[string]bool) error {
	// Each record's namespace and name, and the key of its dead-letter queue, in the same namespace.
	keys := make(map[string]queueKey, len(recs))
	dlqs := make(map[string]string, len(recs))
	for fn, r := range recs {
		k := queueKey{s.plain, fn}
		if r.Account != "" {
			k = queueKey{namespace{account: r.Account, region: r.Region}, r.Name}
			if want := s.fifoName(k.ns, k.name); want != fn {
				return s.corrupt(fmt.Errorf("%s: of %s, whose name in the store is %s", recordName(recordKey(kindQueue, fn)), k.ns.arn(k.name), want))
			}
		}
		keys[fn] = k
		if r.DeadLetterQueue != "" {
			dlqs[fn] = s.fifoName(k.ns, r.DeadLetterQueue)
		}
	}

	// The order: a queue after the dead-letter queue its policy is bound to. fifoq refused cycles of bound
	// policies; a stored one (which no change of the server makes) leaves the policy that closes it pending.
	var order []string
	state := make(map[string]int) // 1: being visited, 2: ordered
	var visit func(fn string)
	visit = func(fn string) {
		if state[fn] != 0 {
			return
		}
		state[fn] = 1
		if r := recs[fn]; r.DeadLetterQueue != "" && !r.Pending && recs[dlqs[fn]] != nil {
			visit(dlqs[fn])
		}
		state[fn] = 2
		order = append(order, fn)
	}
	for _, fn := range slices.Sorted(maps.Keys(recs)) {
		visit(fn)
	}

	// A dead-letter queue whose RedriveAllowPolicy refuses a source bound to it (the policy changed after the
	// source took it) is created allowing all, and gets its policy once its sources are bound.
	refusing := make(map[string]bool)
	for fn, r := range recs {
		if d := recs[dlqs[fn]]; d != nil && !r.Pending && !d.allows(keys[fn].name) {
			refusing[dlqs[fn]] = true
		}
	}

	for _, fn := range order {
		r, k := recs[fn], keys[fn]
		inNS := func(name string) string { return s.fifoName(k.ns, name) }
		qs := &queueState{ns: k.ns, name: k.name, arn: k.ns.arn(k.name), created: time.Unix(0, r.Created), modified: time.Unix(0, r.Modified),
			throughput: r.FifoThroughputLimit, allowSet: r.RedriveAllowPolicy != nil, extra: r.Extra, tags: r.Tags}
		var dlq *fifoq.Queue
		pending := r.Pending
		if r.DeadLetterQueue != "" && !pending {
			if d := s.byFifo[dlqs[fn]]; d != nil {
				dlq = d.q
			} else {
				s.log.Warn("sqsapi: the dead-letter queue of a redrive policy is not there: the policy is pending",
					"queue", qs.arn, "dead_letter_queue", k.ns.arn(r.DeadLetterQueue))
				pending = true
			}
		}
		if !inStore[fn] {
			s.log.Warn("sqsapi: a queue defined has no messages stored: it is created empty", "queue", qs.arn, "store", s.st.String())
		}
		q, err := fifoq.New(fn, s.queueOptions(r.options(dlq, refusing[fn], inNS))...)
		if dlq != nil && (errors.Is(err, fifoq.ErrInvalidRedrivePolicy) || errors.Is(err, fifoq.ErrRedriveNotAllowed)) {
			s.log.Warn("sqsapi: the redrive policy of a queue is refused by its dead-letter queue: the policy is pending",
				"queue", qs.arn, "dead_letter_queue", k.ns.arn(r.DeadLetterQueue), "error", err)
			pending = true
			q, err = fifoq.New(fn, s.queueOptions(r.options(nil, refusing[fn], inNS))...)
		}
		if err != nil {
			if fifoq.ErrorCode(err) != "" {
				return s.corrupt(fmt.Errorf("%s: %w", recordName(recordKey(kindQueue, fn)), err))
			}
			return fmt.Errorf("sqsapi: opening queue %s: %w", qs.arn, err)
		}
		qs.q = q
		if pending {
			qs.pendingDLQ, qs.pendingCount = k.ns.arn(r.DeadLetterQueue), r.MaxReceiveCount
			s.pendLocked(qs)
		}
		s.addLocked(qs)
	}

	for _, fn := range slices.Sorted(maps.Keys(refusing)) {
		qs := s.byFifo[fn]
		a := qs.q.Attributes()
		a.RedriveAllowPolicy = recs[fn].allowPolicy(func(name string) string { return s.fifoName(qs.ns, name) })
		if err := qs.q.SetAttributes(a); err != nil {
			if fifoq.ErrorCode(err) != "" {
				return s.corrupt(fmt.Errorf("%s: %w", recordName(recordKey(kindQueue, fn)), err))
			}
			return fmt.Errorf("sqsapi: opening queue %s: %w", qs.arn, err)
		}
	}
	return nil
}

// Close stops the move tasks that run and waits for them to end. Call it once the server serves no more
// requests: a durable server's store can then be closed with no task left writing to it. A durable
// server's running tasks are not recorded as ended: they go on when the store is opened again. Close does
// not close the store, which belongs to the caller of Open. It calls BeginShutdown, so that a long poll
// still in progress ends. It returns nil.
func (s *Server) Close() error {
	s.BeginShutdown()
	s.tasksMu.Lock()
	tasks := slices.Collect(maps.Values(s.tasks))
	s.tasksMu.Unlock()
	for _, t := range tasks {
		store.HaltMoveTask(t.task) // an ended task stays as it was
	}
	for _, t := range tasks {
		_ = t.task.Wait(context.Background()) // a cancelled task ends after the batch it has taken
	}
	return nil
}

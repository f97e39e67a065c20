package sqsapi

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/internal/store"
)

// A queueState is a queue the server holds, with what SQS keeps about a queue that a fifoq.Queue does not.
type queueState struct {
	q       *fifoq.Queue
	name    string
	arn     string
	created time.Time

	// mu serializes SetQueueAttributes, a read-modify-write of the queue's attributes, and guards the
	// fields below. Lock order: Server.mu before queueState.mu, never the other way round, and never two
	// queueState.mu at once.
	mu         sync.Mutex
	modified   time.Time
	throughput string            // FifoThroughputLimit (FIFO only)
	allowSet   bool              // RedriveAllowPolicy was given, so GetQueueAttributes returns it
	extra      map[string]string // attributes stored as given and not acted on: Policy, KMS, SSE
	tags       map[string]string
	tasks      []*moveTask // move tasks started through the API, oldest first, at most maxListedTasks
	gone       bool        // deleted: its definition is no longer recorded in the store

	// pendingDLQ is the ARN of the dead-letter queue of the queue's RedrivePolicy while no queue of that ARN
	// exists (it was deleted), and pendingCount the policy's maxReceiveCount. Meanwhile the fifoq queue has
	// no redrive policy, so failed messages stay in it, and GetQueueAttributes still shows the policy; a
	// queue created with that ARN takes the policy back (Server.rebindLocked). Both are written with Server.mu
	// held for writing as well as mu, so they can be read under either.
	pendingDLQ   string
	pendingCount int
}

// deletedReuseDelay is how long a deleted queue's name stays unusable (QueueDeletedRecently).
const deletedReuseDelay = 60 * time.Second

// maxListedTasks is how many move tasks the server keeps per queue: as many as ListMessageMoveTasks returns.
const maxListedTasks = 10

// lookup returns the queue of that name, or nil.
func (s *Server) lookup(name string) *queueState {
	s.mu.RLock()
	qs := s.queues[name]
	s.mu.RUnlock()
	return qs
}

// sorted returns the queues whose names start with prefix, in name order.
func (s *Server) sorted(prefix string) []*queueState {
	s.mu.RLock()
	out := make([]*queueState, 0, len(s.queues))
	for name, qs := range s.queues {
		if strings.HasPrefix(name, prefix) {
			out = append(out, qs)
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b *queueState) int { return strings.Compare(a.name, b.name) })
	return out
}

// arnOf returns the ARN of the queue of that name.
func (s *Server) arnOf(name string) string {
	return "arn:aws:sqs:" + s.region + ":" + s.account + ":" + name
}

// nameOfARN returns the queue name in an SQS ARN of this server's region and account.
func (s *Server) nameOfARN(arn string) (string, bool) {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[1] == "" || parts[2] != "sqs" ||
		parts[3] != s.region || parts[4] != s.account || parts[5] == "" {
		return "", false
	}
	return parts[5], true
}

// queueOfARN returns the queue an ARN names, or nil.
func (s *Server) queueOfARN(arn string) *queueState {
	name, ok := s.nameOfARN(arn)
	if !ok {
		return nil
	}
	return s.lookup(name)
}

// resolve returns the queue a QueueUrl names. Only the URL's path counts (/account/name), so any host
// will do. A query-protocol request without a QueueUrl may be sent to the queue's URL instead.
func (s *Server) resolve(c *call, queueURL string) (*queueState, error) {
	// resolveBytes only reads the bytes and keeps none of them.
	return s.resolveBytes(c, unsafe.Slice(unsafe.StringData(queueURL), len(queueURL)))
}

// resolveBytes is resolve from the bytes of the QueueUrl, which it only reads: the actions on the hot path
// look their queue up from the request body, with no string made of the URL.
func (s *Server) resolveBytes(c *call, queueURL []byte) (*queueState, error) {
	if len(queueURL) == 0 && !c.json && strings.Count(strings.Trim(c.r.URL.Path, "/"), "/") >= 1 {
		return s.resolve(c, c.r.URL.Path)
	}
	if len(queueURL) == 0 {
		return nil, missing("QueueUrl")
	}
	path := queueURL
	if _, rest, ok := bytes.Cut(queueURL, schemeSep); ok {
		_, path, _ = bytes.Cut(rest, slash)
	}
	path, _, _ = bytes.Cut(path, question)
	path = bytes.Trim(path, "/")
	i := bytes.LastIndexByte(path, '/')
	if i < 0 {
		return nil, queueDoesNotExist(!c.json)
	}
	name, account := path[i+1:], path[:i]
	if j := bytes.LastIndexByte(account, '/'); j >= 0 {
		account = account[j+1:]
	}
	if string(account) != s.account {
		return nil, queueDoesNotExist(!c.json)
	}
	s.mu.RLock()
	qs := s.queues[string(name)]
	s.mu.RUnlock()
	if qs == nil {
		return nil, queueDoesNotExist(!c.json)
	}
	c.queue = qs.name
	return qs, nil
}

// Separators of resolveBytes.
var schemeSep, slash, question = []byte("://"), []byte("/"), []byte("?")

// createQueue creates a queue, or returns the existing one when attributes agree with it (CreateQueue). On a
// durable server the queue's definition is stored before it returns.
//
// The registry lock is held while fifoq.New stores the queue, which waits for its own sync: fifoq gives no
// way to create a queue and wait later. The server's own record is waited for after the lock is released.
func (s *Server) createQueue(name string, attrs map[string]string, tags map[string]string) (*queueState, error) {
	fifo := strings.HasSuffix(name, ".fifo")
	if err := checkCreateType(name, fifo, attrs); err != nil {
		return nil, err
	}
	var j journal
	qs, err := s.createQueueLocked(&j, name, fifo, attrs, tags)
	if err != nil {
		return nil, err
	}
	if err := s.wait(&j); err != nil {
		return nil, err
	}
	return qs, nil
}

func (s *Server) createQueueLocked(j *journal, name string, fifo bool, attrs, tags map[string]string) (*queueState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if qs := s.queues[name]; qs != nil {
		if err := s.sameAttributes(qs, attrs); err != nil {
			return nil, err
		}
		return qs, nil
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	now := s.now()
	s.pruneDeletedLocked(j, now)
	if _, ok := s.deleted[name]; ok {
		return nil, newError(codeQueueDeletedRecently,
			"You must wait 60 seconds after deleting a queue before you can create another with the same name.")
	}

	// The attributes are checked on the view of a new queue and given to fifoq.New as options.
	v := queueView{a: fifoq.Attributes{DeduplicationScope: fifoq.DeduplicationScopeQueue}}
	if fifo {
		v.throughput = "perQueue"
	}
	var (
		set  *attrSet
		opts []fifoq.Option
	)
	if len(attrs) > 0 {
		// The registry lock is held: look queues up in the map, not through lookup.
		var err *apiError
		if set, err = s.parseAttributes(fifo, attrs, func(n string) *queueState { return s.queues[n] }); err != nil {
			return nil, err
		}
		if opts, err = set.options(&v); err != nil {
			return nil, err
		}
	}
	arn := s.arnOf(name)
	q, err := fifoq.New(name, s.queueOptions(opts)...)
	switch {
	case err == nil:
	case fifoq.ErrorCode(err) == "" && !isContextErr(err):
		return nil, fmt.Errorf("create queue %s: %w", name, err) // a store's error: logged, InternalFailure
	case set != nil:
		return nil, set.coreError(err, arn, fifo)
	default:
		return nil, coreError(err, errCtx{})
	}
	qs := &queueState{q: q, name: name, arn: arn, created: now, modified: now,
		throughput: v.throughput, allowSet: v.allowSet, extra: v.extra}
	if len(tags) > 0 {
		qs.tags = maps.Clone(tags)
	}
	s.queues[name] = qs
	s.putQueueLocked(j, qs) // qs.mu is not needed yet: nobody else can reach qs while s.mu is held
	s.rebindLocked(j, qs)
	return qs, nil
}

// queueOptions returns opts with the options of every queue the server makes: its clock, logger and store.
func (s *Server) queueOptions(opts []fifoq.Option) []fifoq.Option {
	if s.clock != nil {
		opts = append(opts, fifoq.WithClock(s.clock))
	}
	opts = append(opts, fifoq.WithLogger(s.log))
	if s.st != nil {
		opts = append(opts, fifoq.WithStore(s.st))
	}
	return opts
}

// pruneDeletedLocked forgets the deleted names that can be used again, and their records. s.mu must be
// held for writing.
func (s *Server) pruneDeletedLocked(j *journal, now time.Time) {
	var b store.Batch
	for name, at := range s.deleted {
		if _, busy := s.unfinished[name]; busy || now.Sub(at) < deletedReuseDelay {
			continue
		}
		delete(s.deleted, name)
		if s.eng != nil {
			if b == nil {
				b = s.eng.NewBatch()
			}
			b.Delete(recordKey(kindDeleted, name))
		}
	}
	if b != nil {
		s.commit(j, b)
	}
}

// deleteQueue removes a queue from the server. Its own redrive policy is dropped, so its dead-letter queue no
// longer counts it as a source, and its move tasks are cancelled and forgotten. The queues whose dead-letter
// queue it was keep their RedrivePolicy, pending, with no dead-letter queue behind it in fifoq: their
// failed messages stay with them rather than move into a queue nobody can reach. A running move task that
// would return messages to this queue is cancelled.
//
// On a durable server the queue's definition is replaced by a record of its deletion, the sources' pending
// policies are recorded, and then the queue and its messages are deleted from the store, once no queue
// uses it as its dead-letter queue (fifoq.Store.DeleteQueue).
func (s *Server) deleteQueue(qs *queueState) error {
	var j journal
	deleted, err := s.deleteQueueLocked(&j, qs)
	if !deleted || err != nil {
		return err
	}
	err = s.wait(&j)
	if s.st != nil {
		if err == nil {
			err = s.st.DeleteQueue(qs.name)
		}
		s.mu.Lock()
		delete(s.unfinished, qs.name)
		s.mu.Unlock()
	}
	return err
}

func (s *Server) deleteQueueLocked(j *journal, qs *queueState) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.queues[qs.name] != qs {
		return false, nil // deleted meanwhile by another request
	}
	if err := s.check(); err != nil {
		return false, err
	}
	delete(s.queues, qs.name)
	now := s.now()
	s.pruneDeletedLocked(j, now)
	s.deleted[qs.name] = now
	s.deletions++

	// First the queue's own redrive policy: once it is gone, no receive still under way can move a message
	// of this queue into a dead-letter queue, where the scan below would miss it.
	qs.mu.Lock()
	if qs.pendingDLQ != "" {
		s.unpendLocked(qs, qs.pendingDLQ)
		qs.pendingDLQ, qs.pendingCount = "", 0
	}
	a := qs.q.Attributes()
	if a.DeadLetterQueue != nil {
		a.DeadLetterQueue, a.MaxReceiveCount = nil, 0
		if err := qs.q.SetAttributes(a); err != nil {
			s.log.Warn("sqsapi: dropping the redrive policy of a deleted queue", "queue", qs.name, "error", err)
		}
	}
	qs.gone = true
	if s.eng != nil {
		b := s.eng.NewBatch()
		b.Delete(recordKey(kindQueue, qs.name))
		b.Set(recordKey(kindDeleted, qs.name), encodeDeleted(now))
		s.commit(j, b)
		s.unfinished[qs.name] = struct{}{}
	}
	qs.mu.Unlock()
	for _, other := range s.queues {
		s.detachLocked(j, other, qs)
		s.cancelMovesIntoLocked(other, qs)
	}
	qs.mu.Lock()
	defer qs.mu.Unlock()
	s.tasksMu.Lock()
	for _, t := range qs.tasks {
		_ = t.task.Cancel() // an ended task returns ErrMoveTaskNotRunning: nothing to do
		delete(s.tasks, t.handle)
	}
	s.tasksMu.Unlock()
	qs.tasks = nil
	return true, nil
}

// detachLocked leaves src's redrive policy pending when dlq, being deleted, is its dead-letter queue: the
// fifoq queue loses its policy, and the server keeps the policy's ARN and maxReceiveCount. s.mu must be held
// for writing.
func (s *Server) detachLocked(j *journal, src, dlq *queueState) {
	src.mu.Lock()
	defer src.mu.Unlock()
	a := src.q.Attributes()
	if a.DeadLetterQueue != dlq.q {
		return
	}
	count := a.MaxReceiveCount
	a.DeadLetterQueue, a.MaxReceiveCount = nil, 0
	if err := src.q.SetAttributes(a); err != nil {
		s.log.Warn("sqsapi: detaching a queue from its deleted dead-letter queue", "queue", src.name, "error", err)
		return
	}
	src.pendingDLQ, src.pendingCount = dlq.arn, count
	s.pendLocked(src)
	s.putQueueLocked(j, src)
}

// pendLocked adds src to the pending policies naming src.pendingDLQ. s.mu must be held for writing.
func (s *Server) pendLocked(src *queueState) {
	set := s.pending[src.pendingDLQ]
	if set == nil {
		set = make(map[*queueState]struct{})
		s.pending[src.pendingDLQ] = set
	}
	set[src] = struct{}{}
}

// unpendLocked removes src from the pending policies naming arn. s.mu must be held for writing.
func (s *Server) unpendLocked(src *queueState, arn string) {
	if set := s.pending[arn]; set != nil {
		delete(set, src)
		if len(set) == 0 {
			delete(s.pending, arn)
		}
	}
}

// rebindLocked gives the pending redrive policies that name dlq's ARN their dead-letter queue back: dlq, a
// queue of that ARN created again, or whose RedriveAllowPolicy changed. A policy that dlq's type or
// RedriveAllowPolicy refuses stays pending. s.mu must be held for writing, and dlq.mu not held.
func (s *Server) rebindLocked(j *journal, dlq *queueState) {
	for src := range s.pending[dlq.arn] {
		src.mu.Lock()
		a := src.q.Attributes()
		a.DeadLetterQueue, a.MaxReceiveCount = dlq.q, src.pendingCount
		if err := src.q.SetAttributes(a); err == nil {
			src.pendingDLQ, src.pendingCount = "", 0
			s.unpendLocked(src, dlq.arn)
			s.putQueueLocked(j, src)
		}
		src.mu.Unlock()
	}
}

// cancelMovesIntoLocked cancels dlq's running move task if it would move messages into gone, a queue being
// deleted: a task whose destination is gone, or one that returns messages to their sources while dlq holds
// a message from gone. A batch of up to 10 messages the task already took still goes there (fifoq cannot
// make a move fail). s.mu must be held for writing.
func (s *Server) cancelMovesIntoLocked(dlq, gone *queueState) {
	dlq.mu.Lock()
	var t *moveTask
	if n := len(dlq.tasks); n > 0 {
		t = dlq.tasks[n-1]
	}
	dlq.mu.Unlock()
	if t == nil || t.task.Status().State != fifoq.MoveTaskRunning {
		return
	}
	if t.dest == gone {
		_ = t.task.Cancel() // it may have ended meanwhile
		return
	}
	if t.dest != nil {
		return
	}
	for m := range dlq.q.Messages() {
		if m.DeadLetterSource == gone.name {
			_ = t.task.Cancel() // it may have ended meanwhile
			return
		}
	}
}

// staleSourceLocked returns the name of a queue that a message of dlq was moved from and that was deleted
// since (a queue of that name may exist again, created after the message left the old one), or "". s.mu
// must be held.
func (s *Server) staleSourceLocked(dlq *queueState) string {
	if s.deletions == 0 {
		return "" // spare the look at every message
	}
	for m := range dlq.q.Messages() {
		if m.DeadLetterSource == "" {
			continue
		}
		// A message from the queue that has the name now was sent there, or in a FIFO dead-letter queue
		// moved here, after the queue was created; one from an earlier queue of that name, before its
		// deletion, at least deletedReuseDelay before the name was taken again.
		src := s.queues[m.DeadLetterSource]
		if src == nil || m.SentAt.Before(src.created) {
			return m.DeadLetterSource
		}
	}
	return ""
}

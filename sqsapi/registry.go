package sqsapi

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/fifoq/fifoq"
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
	return qs, nil
}

// Separators of resolveBytes.
var schemeSep, slash, question = []byte("://"), []byte("/"), []byte("?")

// createQueue creates a queue, or returns the existing one when attributes agree with it (CreateQueue).
func (s *Server) createQueue(name string, attrs map[string]string, tags map[string]string) (*queueState, *apiError) {
	fifo := strings.HasSuffix(name, ".fifo")
	if err := checkCreateType(name, fifo, attrs); err != nil {
		return nil, err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if qs := s.queues[name]; qs != nil {
		if err := s.sameAttributes(qs, attrs); err != nil {
			return nil, err
		}
		return qs, nil
	}
	now := s.now()
	s.pruneDeletedLocked(now)
	if _, ok := s.deleted[name]; ok {
		return nil, newError(codeQueueDeletedRecently,
			"You must wait 60 seconds after deleting a queue before you can create another with the same name.")
	}

	var opts []fifoq.Option
	if s.clock != nil {
		opts = append(opts, fifoq.WithClock(s.clock))
	}
	opts = append(opts, fifoq.WithLogger(s.log))
	q, err := fifoq.New(name, opts...)
	if err != nil {
		return nil, coreError(err, errCtx{})
	}
	qs := &queueState{q: q, name: name, arn: s.arnOf(name), created: now, modified: now}
	if fifo {
		qs.throughput = "perQueue"
	}
	if len(attrs) > 0 {
		// The registry lock is held: look queues up in the map, not through lookup.
		set, err := s.parseAttributes(qs, attrs, func(n string) *queueState { return s.queues[n] })
		if err != nil {
			return nil, err
		}
		if err := set.apply(qs, now); err != nil {
			return nil, err
		}
	}
	if len(tags) > 0 {
		qs.tags = make(map[string]string, len(tags))
		for k, v := range tags {
			qs.tags[k] = v
		}
	}
	s.queues[name] = qs
	s.rebindLocked(qs)
	return qs, nil
}

// pruneDeletedLocked forgets the deleted names that can be used again. s.mu must be held for writing.
func (s *Server) pruneDeletedLocked(now time.Time) {
	for name, at := range s.deleted {
		if now.Sub(at) >= deletedReuseDelay {
			delete(s.deleted, name)
		}
	}
}

// deleteQueue removes a queue from the server. Its own redrive policy is dropped, so its dead-letter queue no
// longer counts it as a source, and its move tasks are cancelled and forgotten. The queues whose dead-letter
// queue it was keep their RedrivePolicy, pending, with no dead-letter queue behind it in fifoq: their
// failed messages stay with them rather than move into a queue nobody can reach. A running move task that
// would return messages to this queue is cancelled.
func (s *Server) deleteQueue(qs *queueState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.queues[qs.name] != qs {
		return // deleted meanwhile by another request
	}
	delete(s.queues, qs.name)
	now := s.now()
	s.pruneDeletedLocked(now)
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
	qs.mu.Unlock()
	for _, other := range s.queues {
		s.detachLocked(other, qs)
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
}

// detachLocked leaves src's redrive policy pending when dlq, being deleted, is its dead-letter queue: the
// fifoq queue loses its policy, and the server keeps the policy's ARN and maxReceiveCount. s.mu must be held
// for writing.
func (s *Server) detachLocked(src, dlq *queueState) {
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
	set := s.pending[dlq.arn]
	if set == nil {
		set = make(map[*queueState]struct{})
		s.pending[dlq.arn] = set
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
func (s *Server) rebindLocked(dlq *queueState) {
	for src := range s.pending[dlq.arn] {
		src.mu.Lock()
		a := src.q.Attributes()
		a.DeadLetterQueue, a.MaxReceiveCount = dlq.q, src.pendingCount
		if err := src.q.SetAttributes(a); err == nil {
			src.pendingDLQ, src.pendingCount = "", 0
			s.unpendLocked(src, dlq.arn)
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

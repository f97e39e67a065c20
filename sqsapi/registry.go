package sqsapi

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fifoq/fifoq"
)

// A queueState is a queue the server holds, with what SQS keeps about a queue that a fifoq.Queue does not.
type queueState struct {
	q       *fifoq.Queue
	name    string
	arn     string
	created time.Time

	// mu serializes SetQueueAttributes, a read-modify-write of the queue's attributes, and guards the
	// fields below. Lock order: Server.mu before queueState.mu, never the other way round (so a
	// SetQueueAttributes looks up its dead-letter queue before it takes mu).
	mu         sync.Mutex
	modified   time.Time
	throughput string            // FifoThroughputLimit (FIFO only)
	allowSet   bool              // RedriveAllowPolicy was given, so GetQueueAttributes returns it
	extra      map[string]string // attributes stored as given and not acted on: Policy, KMS, SSE
	tags       map[string]string
	tasks      []*moveTask // move tasks started through the API, oldest first
}

// deletedReuseDelay is how long a deleted queue's name stays unusable (QueueDeletedRecently).
const deletedReuseDelay = 60 * time.Second

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
	if queueURL == "" && !c.json && strings.Count(strings.Trim(c.r.URL.Path, "/"), "/") >= 1 {
		queueURL = c.r.URL.Path
	}
	if queueURL == "" {
		return nil, missing("QueueUrl")
	}
	path := queueURL
	if _, rest, ok := strings.Cut(queueURL, "://"); ok {
		_, path, _ = strings.Cut(rest, "/")
	}
	path, _, _ = strings.Cut(path, "?")
	path = strings.Trim(path, "/")
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return nil, queueDoesNotExist(!c.json)
	}
	name, account := path[i+1:], path[:i]
	if j := strings.LastIndexByte(account, '/'); j >= 0 {
		account = account[j+1:]
	}
	if account != s.account {
		return nil, queueDoesNotExist(!c.json)
	}
	qs := s.lookup(name)
	if qs == nil {
		return nil, queueDoesNotExist(!c.json)
	}
	return qs, nil
}

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
	if at, ok := s.deleted[name]; ok {
		if now.Sub(at) < deletedReuseDelay {
			return nil, newError(codeQueueDeletedRecently,
				"You must wait 60 seconds after deleting a queue before you can create another with the same name.")
		}
		delete(s.deleted, name)
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
	return qs, nil
}

// deleteQueue removes a queue from the server. Its own redrive policy is dropped, so its dead-letter queue no
// longer counts it as a source.
func (s *Server) deleteQueue(qs *queueState) {
	s.mu.Lock()
	if s.queues[qs.name] == qs {
		delete(s.queues, qs.name)
		s.deleted[qs.name] = s.now()
	}
	s.mu.Unlock()

	qs.mu.Lock()
	defer qs.mu.Unlock()
	a := qs.q.Attributes()
	if a.DeadLetterQueue != nil {
		a.DeadLetterQueue, a.MaxReceiveCount = nil, 0
		if err := qs.q.SetAttributes(a); err != nil {
			s.log.Warn("sqsapi: dropping the redrive policy of a deleted queue", "queue", qs.name, "error", err)
		}
	}
	for _, t := range qs.tasks {
		_ = t.task.Cancel() // an ended task returns ErrMoveTaskNotRunning: nothing to do
	}
}

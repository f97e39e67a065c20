package sqsapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/internal/store"
	"github.com/fifoq/fifoq/storage"
)

// A namespace is an account and a region. The server keeps the queues of each apart, as SQS does: the same
// name in two namespaces names two queues, with their own URLs and ARNs.
type namespace struct{ account, region string }

// arn returns the ARN of the queue of that name in the namespace.
func (n namespace) arn(name string) string {
	return "arn:aws:sqs:" + n.region + ":" + n.account + ":" + name
}

// A queueKey names a queue: its namespace and its name there.
type queueKey struct {
	ns   namespace
	name string
}

// A queueState is a queue the server holds, with what SQS keeps about a queue that a fifoq.Queue does not.
type queueState struct {
	q       *fifoq.Queue
	ns      namespace
	name    string // in ns; q.Name() is the queue's name in fifoq and the store (Server.fifoName)
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

// key returns the queue's namespace and name.
func (qs *queueState) key() queueKey { return queueKey{qs.ns, qs.name} }

// deletedReuseDelay is how long a deleted queue's name stays unusable (QueueDeletedRecently).
const deletedReuseDelay = 60 * time.Second

// maxListedTasks is how many move tasks the server keeps per queue: as many as ListMessageMoveTasks returns.
const maxListedTasks = 10

// fifoName returns the name in fifoq, and in the store, of the queue of that name in ns: its own name in
// the server's plain namespace (the default namespace of the first server on a store, so the names of a
// store from before namespaces keep their meaning), and elsewhere "ns-" and 32 hexadecimal digits of a
// hash of its namespace and name, with ".fifo" for a FIFO queue: a valid queue name, unique in the store.
// The reverse is recorded for arnOf and keyOf.
func (s *Server) fifoName(ns namespace, name string) string {
	if ns == s.plain {
		return name
	}
	h := sha256.Sum256([]byte(ns.account + "\x00" + ns.region + "\x00" + name))
	fn := "ns-" + hex.EncodeToString(h[:16])
	if strings.HasSuffix(name, ".fifo") {
		fn += ".fifo"
	}
	s.namesMu.Lock()
	s.names[fn] = queueKey{ns, name}
	s.namesMu.Unlock()
	return fn
}

// keyOf returns the namespace and name of the queue whose fifoq name is fn (made by fifoName). A name
// fifoName never made is a name in the plain namespace.
func (s *Server) keyOf(fn string) queueKey {
	if strings.HasPrefix(fn, "ns-") {
		s.namesMu.RLock()
		k, ok := s.names[fn]
		s.namesMu.RUnlock()
		if ok {
			return k
		}
	}
	return queueKey{s.plain, fn}
}

// lookup returns the queue of that name in ns, or nil.
func (s *Server) lookup(ns namespace, name string) *queueState {
	s.mu.RLock()
	qs := s.queues[ns][name]
	s.mu.RUnlock()
	return qs
}

// holdsLocked reports whether qs is the server's queue of its name, not deleted. s.mu must be held.
func (s *Server) holdsLocked(qs *queueState) bool { return s.queues[qs.ns][qs.name] == qs }

// addLocked adds qs to the registry. s.mu must be held for writing.
func (s *Server) addLocked(qs *queueState) {
	m := s.queues[qs.ns]
	if m == nil {
		m = make(map[string]*queueState)
		s.queues[qs.ns] = m
	}
	m[qs.name] = qs
	s.byFifo[qs.q.Name()] = qs
}

// removeLocked removes qs from the registry. s.mu must be held for writing.
func (s *Server) removeLocked(qs *queueState) {
	m := s.queues[qs.ns]
	delete(m, qs.name)
	if len(m) == 0 {
		delete(s.queues, qs.ns)
	}
	delete(s.byFifo, qs.q.Name())
}

// finderLocked returns the function that finds, for a queue of ns, the queue a RedrivePolicy names by its
// fifoq name (nameOfARN): a queue of ns alone, for a dead-letter queue must be in the account and region of
// its sources. s.mu must be held.
func (s *Server) finderLocked(ns namespace) func(string) *queueState {
	return func(fn string) *queueState {
		if qs := s.byFifo[fn]; qs != nil && qs.ns == ns {
			return qs
		}
		return nil
	}
}

// finder is finderLocked for a caller that does not hold s.mu.
func (s *Server) finder(ns namespace) func(string) *queueState {
	return func(fn string) *queueState {
		s.mu.RLock()
		defer s.mu.RUnlock()
		return s.finderLocked(ns)(fn)
	}
}

// sorted returns the queues of ns whose names start with prefix, in name order.
func (s *Server) sorted(ns namespace, prefix string) []*queueState {
	s.mu.RLock()
	out := make([]*queueState, 0, len(s.queues[ns]))
	for name, qs := range s.queues[ns] {
		if strings.HasPrefix(name, prefix) {
			out = append(out, qs)
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b *queueState) int { return strings.Compare(a.name, b.name) })
	return out
}

// arnOf returns the ARN of the queue whose fifoq name is fn (a fifoq.Queue's Name, a message's
// DeadLetterSource, a source of a RedriveAllowPolicy).
func (s *Server) arnOf(fn string) string {
	k := s.keyOf(fn)
	return k.ns.arn(k.name)
}

// parseARN returns the namespace and queue name of an SQS ARN.
func parseARN(arn string) (queueKey, bool) {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[1] == "" || parts[2] != "sqs" ||
		parts[3] == "" || parts[4] == "" || parts[5] == "" {
		return queueKey{}, false
	}
	return queueKey{namespace{account: parts[4], region: parts[3]}, parts[5]}, true
}

// nameOfARN returns the fifoq name (fifoName) of the queue an SQS ARN names, in whichever account and
// region it names. The callers that must keep to one namespace check it (finderLocked, checkSources).
func (s *Server) nameOfARN(arn string) (string, bool) {
	k, ok := parseARN(arn)
	if !ok {
		return "", false
	}
	return s.fifoName(k.ns, k.name), true
}

// queueOfARN returns the queue an ARN names, or nil.
func (s *Server) queueOfARN(arn string) *queueState {
	k, ok := parseARN(arn)
	if !ok {
		return nil
	}
	return s.lookup(k.ns, k.name)
}

// checkSources refuses a RedriveAllowPolicy of set whose sourceQueueArns name queues outside ns: the
// sources of a dead-letter queue are in its account and region.
func (s *Server) checkSources(ns namespace, set *attrSet) *apiError {
	if set == nil || set.allow == nil {
		return nil
	}
	for _, fn := range set.allow.Sources {
		if k := s.keyOf(fn); k.ns != ns {
			return newError(codeInvalidAttributeValue, "Invalid value for the parameter RedriveAllowPolicy. Reason: Invalid source queue ARN %s.", k.ns.arn(k.name))
		}
	}
	return nil
}

// The namespace of a request: its account and region.
//
// The region is the one of the request's SigV4 credential scope (the Authorization header's Credential, or
// a presigned request's X-Amz-Credential), when it has the form of a region name (two letters, a hyphen,
// and so on: "eu-west-1", "us-gov-west-1") or is the server's default region; failing that, the first
// label of the request's host that has the form of a region name ("sqs.eu-west-1.localhost",
// "eu-west-1.queue.localhost", "sqs.eu-west-1.amazonaws.com"); failing that, the server's default region.
// The account is the access key id of the credential scope when it is a 12-digit number, else the
// server's default account.

// requestNS returns the namespace of the request.
func (s *Server) requestNS(r *http.Request) namespace {
	ns := namespace{account: s.account}
	keyID, region := credentialScope(r)
	if isAccountID(keyID) {
		ns.account = keyID
	}
	switch {
	case region == s.region || isRegionName(region):
		ns.region = region
	default:
		ns.region = s.hostRegion(r.Host)
	}
	return ns
}

// credentialScope returns the access key id and region of the request's SigV4 credential scope, if any.
func credentialScope(r *http.Request) (keyID, region string) {
	cred := ""
	if auth := r.Header.Get("Authorization"); auth != "" {
		i := strings.Index(auth, "Credential=")
		if i < 0 {
			return "", ""
		}
		cred = auth[i+len("Credential="):]
		if j := strings.IndexAny(cred, ", "); j >= 0 {
			cred = cred[:j]
		}
	} else if strings.Contains(r.URL.RawQuery, "X-Amz-Credential=") {
		cred = r.URL.Query().Get("X-Amz-Credential")
	}
	keyID, rest, ok := strings.Cut(cred, "/")
	if !ok {
		return "", ""
	}
	_, rest, _ = strings.Cut(rest, "/") // the date
	region, _, _ = strings.Cut(rest, "/")
	return keyID, region
}

// hostRegion returns the first label of host that has the form of a region name, or the default region.
func (s *Server) hostRegion(host string) string {
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
		host = host[:i] // the port
	}
	for host != "" {
		label, rest, _ := strings.Cut(host, ".")
		if isRegionName(label) {
			return label
		}
		host = rest
	}
	return s.region
}

// isRegionName reports whether v has the form of an AWS region name: lower-case words joined by hyphens,
// the first of two letters, the last a number ("us-east-1", "eu-central-2", "us-gov-west-1").
func isRegionName(v string) bool {
	if len(v) < 6 || v[0] < 'a' || v[0] > 'z' || v[1] < 'a' || v[1] > 'z' || v[2] != '-' {
		return false
	}
	words, digits := 1, 0 // words of letters so far, and digits after the last hyphen
	for i := 3; i < len(v); i++ {
		switch c := v[i]; {
		case c == '-':
			if digits > 0 || v[i-1] == '-' {
				return false
			}
			words++
		case 'a' <= c && c <= 'z':
			if digits > 0 {
				return false
			}
		case '0' <= c && c <= '9':
			if digits == 0 && v[i-1] != '-' {
				return false
			}
			digits++
		default:
			return false
		}
	}
	return words >= 2 && digits > 0
}

// isAccountID reports whether v is an AWS account id: 12 decimal digits.
func isAccountID(v string) bool {
	if len(v) != 12 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// resolve returns the queue a QueueUrl names: a URL, whose path ends with /account/name (any host will
// do; the region is the request's), or a queue name alone, in the request's account and region. A
// query-protocol request without a QueueUrl may be sent to the queue's URL instead.
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
	ns := s.requestNS(c.r)
	name := path
	if i := bytes.LastIndexByte(path, '/'); i >= 0 {
		name = path[i+1:]
		account := path[:i]
		if j := bytes.LastIndexByte(account, '/'); j >= 0 {
			account = account[j+1:]
		}
		switch {
		case string(account) == ns.account:
		case string(account) == s.account:
			ns.account = s.account
		case isAccountID(string(account)):
			ns.account = string(account)
		default:
			return nil, s.unknownQueue(c, namespace{account: string(account), region: ns.region}, string(name))
		}
	}
	s.mu.RLock()
	qs := s.queues[ns][string(name)]
	s.mu.RUnlock()
	if qs == nil {
		return nil, s.unknownQueue(c, ns, string(name))
	}
	c.queue = qs.name
	return qs, nil
}

// urlOf returns the URL of qs on the host the request was sent to.
func (c *call) urlOf(qs *queueState) string { return c.queueURL(qs.ns.account, qs.name) }

// Separators of resolveBytes.
var schemeSep, slash, question = []byte("://"), []byte("/"), []byte("?")

// createQueue creates a queue, or returns the existing one when attributes agree with it (CreateQueue). On a
// durable server the queue's definition is stored before it returns.
//
// The registry lock is held while fifoq.New stores the queue and the server records it; both are waited
// for once the lock is released, so that no request on another queue waits for this one's sync.
func (s *Server) createQueue(ns namespace, name string, attrs map[string]string, tags map[string]string) (*queueState, error) {
	fifo := strings.HasSuffix(name, ".fifo")
	if err := checkCreateType(name, fifo, attrs); err != nil {
		return nil, err
	}
	var j journal
	qs, err := s.createQueueLocked(&j, queueKey{ns, name}, fifo, attrs, tags)
	if err != nil {
		return nil, err
	}
	if err := s.wait(&j); err != nil {
		return nil, err
	}
	return qs, nil
}

func (s *Server) createQueueLocked(j *journal, k queueKey, fifo bool, attrs, tags map[string]string) (*queueState, error) {
	name := k.name
	s.mu.Lock()
	defer s.mu.Unlock()
	if qs := s.queues[k.ns][name]; qs != nil {
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
	if _, ok := s.deleted[k]; ok {
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
		if set, err = s.parseAttributes(fifo, attrs, s.finderLocked(k.ns)); err != nil {
			return nil, err
		}
		if err = s.checkSources(k.ns, set); err != nil {
			return nil, err
		}
		if opts, err = set.options(&v); err != nil {
			return nil, err
		}
	}
	arn := k.ns.arn(name)
	fn := s.fifoName(k.ns, name)
	if other := s.byFifo[fn]; other != nil {
		// Only a queue made on purpose with the name of another's hash.
		return nil, fmt.Errorf("create queue %s: its name in the store, %s, is taken by %s", arn, fn, other.arn)
	}
	var later storage.Ticket
	if s.st != nil {
		opts = append(opts, store.SyncLater(&later).(fifoq.Option)) // waited for after the lock is released
	}
	q, err := fifoq.New(fn, s.queueOptions(opts)...)
	switch {
	case err == nil:
		j.add(later)
	case fifoq.ErrorCode(err) == "" && !isContextErr(err):
		return nil, fmt.Errorf("create queue %s: %w", arn, err) // a store's error: ServiceUnavailable (storeError)
	case set != nil:
		return nil, set.coreError(err, arn, fifo)
	default:
		return nil, coreError(err)
	}
	qs := &queueState{q: q, ns: k.ns, name: name, arn: arn, created: now, modified: now,
		throughput: v.throughput, allowSet: v.allowSet, extra: v.extra}
	if len(tags) > 0 {
		qs.tags = maps.Clone(tags)
	}
	s.addLocked(qs)
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
	var b storage.Batch
	for k, at := range s.deleted {
		fn := s.fifoName(k.ns, k.name)
		if _, busy := s.unfinished[fn]; busy || now.Sub(at) < deletedReuseDelay {
			continue
		}
		delete(s.deleted, k)
		if s.eng != nil {
			if b == nil {
				b = s.eng.NewBatch()
			}
			b.Delete(recordKey(kindDeleted, fn))
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
			err = s.st.DeleteQueue(qs.q.Name())
		}
		s.mu.Lock()
		delete(s.unfinished, qs.q.Name())
		s.mu.Unlock()
	}
	return err
}

func (s *Server) deleteQueueLocked(j *journal, qs *queueState) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.holdsLocked(qs) {
		return false, nil // deleted meanwhile by another request
	}
	if err := s.check(); err != nil {
		return false, err
	}
	s.removeLocked(qs)
	now := s.now()
	s.pruneDeletedLocked(j, now)
	s.deleted[qs.key()] = now
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
		if err := s.setAttributes(j, qs.q, a); err != nil {
			s.log.Warn("sqsapi: dropping the redrive policy of a deleted queue", "queue", qs.arn, "error", err)
		}
	}
	qs.gone = true
	if s.eng != nil {
		b := s.eng.NewBatch()
		b.Delete(recordKey(kindQueue, qs.q.Name()))
		b.Set(recordKey(kindDeleted, qs.q.Name()), encodeDeleted(qs.key(), now))
		b.DeleteRange(taskRange(qs.q.Name()))
		s.commit(j, b)
		s.unfinished[qs.q.Name()] = struct{}{}
	}
	qs.mu.Unlock()
	for _, m := range s.queues {
		for _, other := range m {
			s.detachLocked(j, other, qs)
			s.cancelMovesIntoLocked(other, qs)
		}
	}
	qs.mu.Lock()
	defer qs.mu.Unlock()
	s.tasksMu.Lock()
	for _, t := range qs.tasks {
		store.HaltMoveTask(t.task) // its records are gone with the queue's: it records no end
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
	if err := s.setAttributes(j, src.q, a); err != nil {
		s.log.Warn("sqsapi: detaching a queue from its deleted dead-letter queue", "queue", src.arn, "error", err)
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
		if err := s.setAttributes(j, src.q, a); err == nil {
			src.pendingDLQ, src.pendingCount = "", 0
			s.unpendLocked(src, dlq.arn)
			s.putQueueLocked(j, src)
		}
		src.mu.Unlock()
	}
}

// cancelMovesIntoLocked ends dlq's running move task, FAILED, if it would move messages into gone, a queue being
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
		t.failDestination()
		return
	}
	if t.dest != nil {
		return
	}
	for m := range dlq.q.Messages() {
		if m.DeadLetterSource == gone.q.Name() {
			t.failDestination()
			return
		}
	}
}

// staleSourceLocked returns the fifoq name of a queue that a message of dlq was moved from and that was deleted
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
		src := s.byFifo[m.DeadLetterSource]
		if src == nil || m.SentAt.Before(src.created) {
			return m.DeadLetterSource
		}
	}
	return ""
}

package sqsapi

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/storage"
)

// A Server serves the Amazon SQS API from fifoq queues that it creates and holds by account, region and
// name: each request acts in the account and region its credentials and endpoint name (see the package
// documentation), WithAccountID and WithRegion giving the defaults. It is an http.Handler; it is safe for concurrent use by any number of requests. Create one with
// NewServer, which keeps its queues in memory, or with Open, which keeps them in a fifoq.Store; the zero Server
// is not usable.
type Server struct {
	region  string // the default region
	account string // the default account, and the SenderId of every message
	// plain is the namespace whose queues have their own names in fifoq and the store (fifoName): the
	// default namespace, or on a durable server the one its store recorded first.
	plain   namespace
	clock   fifoq.Clock // nil: the real clock
	log     *slog.Logger
	secret  func(accessKeyID string) (string, bool)
	client  *http.Client
	maxBody int64 // the largest request body served

	// observer is told of every request (WithRequestObserver); nil: none.
	observer RequestObserver

	// pollsMu guards the fields below: the long polls in progress, each with the function that ends its
	// wait, and whether BeginShutdown was called, after which receives do not wait.
	pollsMu  sync.Mutex
	polls    map[*call]context.CancelFunc
	shutdown bool

	// The store of a durable server (Open), and its engine, where the server keeps its own records
	// (records.go); both nil for a server in memory.
	st  *fifoq.Store
	eng storage.Engine

	// mu guards the fields below. It is a read-write lock because every request looks up a queue and
	// only CreateQueue, DeleteQueue and the SetQueueAttributes of a redrive policy change the registry.
	mu      sync.RWMutex
	queues  map[namespace]map[string]*queueState // by namespace and name
	byFifo  map[string]*queueState               // the same queues, by fifoq name
	deleted map[queueKey]time.Time               // when each name deleted in the last 60 s was deleted, for QueueDeletedRecently
	// pending holds, by dead-letter queue ARN, the queues whose redrive policy names a deleted queue
	// (queueState.pendingDLQ).
	pending map[string]map[*queueState]struct{}
	// deletions counts the queues deleted so far; with none, no message can come from a deleted queue.
	// A durable server starts at 1: its queues may hold messages from queues deleted before a restart.
	deletions int
	// unfinished holds the deleted fifoq names whose queue is still being removed from the store: their
	// QueueDeletedRecently rule does not end before it is.
	unfinished map[string]struct{}

	traces traceStore

	// namesMu guards names: the namespace and name of each fifoq name fifoName made. It is taken last.
	namesMu sync.RWMutex
	names   map[string]queueKey

	// tasksMu guards tasks. It is taken last: no other lock is taken while it is held.
	tasksMu sync.Mutex
	tasks   map[string]*moveTask // by task handle: the tasks of the queues' queueState.tasks
	taskSeq uint64               // the number of the last task started, in its record's key (taskrecords.go)
}

// config is the configuration an Option changes.
type config struct {
	region  string
	account string
	clock   fifoq.Clock
	log     *slog.Logger
	secret  func(accessKeyID string) (string, bool)
	maxBody int64

	observer RequestObserver
}

// An Option configures a Server.
type Option func(*config)

// WithRegion sets the default region: the region of a request whose credential scope and host name none
// (see the package documentation). The default is "us-east-1".
func WithRegion(region string) Option { return func(c *config) { c.region = region } }

// WithAccountID sets the default account: the account of a request whose access key id is not a 12-digit
// account id (see the package documentation). It is also the SenderId of every message. The default is
// "000000000000".
func WithAccountID(id string) Option { return func(c *config) { c.account = id } }

// WithClock sets the clock of the queues the server creates, and of its own timestamps (CreatedTimestamp,
// LastModifiedTimestamp) and rules (a deleted queue's name can be reused after 60 seconds). The default is
// the real clock.
func WithClock(c fifoq.Clock) Option { return func(cfg *config) { cfg.clock = c } }

// WithLogger sets where the server logs, with the same keys in every record: every request at level Debug
// ("sqsapi: request", with action, queue, protocol, status, code when it failed, request_id and duration),
// requests that fail on the server's side (HTTP 500) at level Error (with action, queue, code and error;
// the refusals of a failed store, HTTP 503, at Debug, as "sqsapi: refused: the store failed or is closed"),
// the queues' moves to dead-letter queues at level Warn (package fifoq logs those, with queue,
// dead_letter_queue, message_id, receive_count and group), and what Open finds amiss in a store at level
// Warn. The default discards
// everything.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// DefaultMaxRequestBytes is the default limit of WithMaxRequestBytes: 8 MiB. The largest valid request, a
// SendMessageBatch of 1 MiB of messages, takes up to 4 MiB form-encoded (3 bytes for a percent-encoded
// byte; 4 for a byte of a Binary value, base64 and then percent-encoded), up to 2 MiB in the JSON of the
// AWS SDKs (which escape only quotes, backslashes and the control characters a body may hold, in 2 bytes
// each), and up to 6 MiB from a JSON encoder that writes <, > and & as \u003c and the like, as
// encoding/json does.
const DefaultMaxRequestBytes = 8 << 20

// WithMaxRequestBytes bounds the body of a request: a larger one is refused with RequestEntityTooLarge,
// HTTP 413, before its action runs (and without reading it, when its Content-Length tells). This is a
// limit on the bytes of the request; the limits of SQS on what they carry apply as well, whatever n is: a
// message over its queue's MaximumMessageSize is refused with InvalidParameterValue ("Message must be
// shorter than ... bytes") and a batch over 1 MiB with AWS.SimpleQueueService.BatchRequestTooLong, as SQS
// refuses them. A limit under DefaultMaxRequestBytes refuses some valid requests in some encodings; n <= 0
// means the default.
func WithMaxRequestBytes(n int64) Option { return func(c *config) { c.maxBody = n } }

// WithSignatureVerification makes the server check the AWS Signature Version 4 of every request, with the
// secret access key that secret returns for the request's access key id (ok false: an unknown key). Without
// it, the default, any credentials are accepted and signatures are not looked at. Only signatures in the
// Authorization header are understood, not presigned URLs.
func WithSignatureVerification(secret func(accessKeyID string) (secretAccessKey string, ok bool)) Option {
	return func(c *config) { c.secret = secret }
}

// NewServer returns a Server with no queues, which keeps its queues in memory: they are gone when the
// process ends. Open makes a server whose queues survive a restart.
func NewServer(opts ...Option) *Server { return newServer(opts) }

// newServer returns a Server with no queues and no store.
func newServer(opts []Option) *Server {
	c := config{region: "us-east-1", account: "000000000000"}
	for _, o := range opts {
		o(&c)
	}
	if c.log == nil {
		c.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Server{
		maxBody:    cmp.Or(max(c.maxBody, 0), DefaultMaxRequestBytes),
		region:     c.region,
		account:    c.account,
		clock:      c.clock,
		log:        c.log,
		secret:     c.secret,
		plain:      namespace{account: c.account, region: c.region},
		queues:     make(map[namespace]map[string]*queueState),
		byFifo:     make(map[string]*queueState),
		names:      make(map[string]queueKey),
		deleted:    make(map[queueKey]time.Time),
		unfinished: make(map[string]struct{}),
		pending:    make(map[string]map[*queueState]struct{}),
		tasks:      make(map[string]*moveTask),
		polls:      make(map[*call]context.CancelFunc),
	}
	s.observer = c.observer
	s.client = &http.Client{Transport: inProcess{s}}
	return s
}

// BeginShutdown prepares the server to stop: the ReceiveMessage long polls in progress end at once with no
// messages, as a wait that runs out does (their waits have ended when BeginShutdown returns), and every
// later ReceiveMessage returns what is there without waiting. Nothing else changes: the other actions are
// served as before, so that the requests in progress can finish. A long poll that ends this way has taken
// no message: fifoq takes none for a receive whose wait ended, and hands a message that had just woken it
// to the next receive.
//
// Call it when the process is about to stop, before http.Server.Shutdown, which would otherwise wait up to
// 20 seconds for each long poll; Close calls it too. It cannot be undone, and calling it again does nothing.
func (s *Server) BeginShutdown() {
	s.pollsMu.Lock()
	defer s.pollsMu.Unlock()
	s.shutdown = true
	for c, cancel := range s.polls {
		cancel()
		delete(s.polls, c)
	}
}

// Queues returns the server's queues, of every account and region, sorted by name: a snapshot, which the
// queues created or deleted later do not change. A metrics collector can ask for them at each scrape. A
// queue of the default account and region has its own name (fifoq.Queue.Name); one of another account or
// region has a name made of a hash of its account, region and name ("ns-" and 32 hexadecimal digits, with
// ".fifo" for a FIFO queue), which is its name in the store too. NamedQueues gives names to show.
func (s *Server) Queues() []*fifoq.Queue {
	s.mu.RLock()
	states := slices.Collect(maps.Values(s.byFifo))
	s.mu.RUnlock()
	slices.SortFunc(states, func(a, b *queueState) int {
		return cmp.Or(strings.Compare(a.name, b.name), strings.Compare(a.ns.account, b.ns.account), strings.Compare(a.ns.region, b.ns.region))
	})
	qs := make([]*fifoq.Queue, len(states))
	for i, st := range states {
		qs[i] = st.q
	}
	return qs
}

// NamedQueues returns every queue of the server under a name unique in the server: its own name for a queue
// of the default account and region, "account/region/name" for one of another (two regions may each have
// orders.fifo). For fifoqprom.WithNamedQueues, whose metrics are labelled by these names.
func (s *Server) NamedQueues() map[string]*fifoq.Queue {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[string]*fifoq.Queue, len(s.byFifo))
	for _, st := range s.byFifo {
		name := st.name
		if st.ns.account != s.account || st.ns.region != s.region {
			name = st.ns.account + "/" + st.ns.region + "/" + st.name
		}
		out[name] = st.q
	}
	return out
}

// now reads the server's clock.
func (s *Server) now() time.Time {
	if s.clock != nil {
		return s.clock.Now()
	}
	return time.Now()
}

// Queue returns the queue of that name in the default account and region, for tests that look at or drive
// a queue directly.
func (s *Server) Queue(name string) (*fifoq.Queue, bool) {
	qs := s.lookup(namespace{account: s.account, region: s.region}, name)
	if qs == nil {
		return nil, false
	}
	return qs.q, true
}

// CreateQueue does what the CreateQueue action does, from Go, in the default account and region: attributes are SQS attribute names with
// string values ("VisibilityTimeout": "60", "FifoQueue": "true", "RedrivePolicy": a JSON document, ...).
// Creating a queue that exists with the same attributes returns it; different ones are an error. Errors
// carry the SQS error code in their text.
//
// On a server made with Open, the queue is stored before CreateQueue returns, and a queue that the store
// holds already is an existing queue: the same rule applies.
func (s *Server) CreateQueue(name string, attributes map[string]string) (*fifoq.Queue, error) {
	qs, err := s.createQueue(namespace{account: s.account, region: s.region}, name, attributes, nil)
	if err != nil {
		return nil, err
	}
	return qs.q, nil
}

// Err returns the failure of a durable server's store: nil while it works (and always, for a server in
// memory); once a write or a sync of the store failed (a full disk), an error that wraps
// fifoq.ErrStoreFailed and the cause (errors.Is(err, syscall.ENOSPC)). The server then refuses every change
// with the SQS error ServiceUnavailable (HTTP 503), whose message names the cause; the reads that need no
// change (GetQueueAttributes, ListQueues, ...) go on. It does not come back by itself: stop the server and
// open the store again, which recovers every change acknowledged before the failure.
func (s *Server) Err() error {
	if s.st == nil {
		return nil
	}
	if err := s.st.Err(); errors.Is(err, fifoq.ErrStoreFailed) {
		return err
	}
	return nil
}

// Failed returns a channel that is closed when a durable server's store fails (Err tells why), for a
// process to stop and be restarted on it. It is nil, never ready, for a server in memory.
func (s *Server) Failed() <-chan struct{} {
	if s.st == nil {
		return nil
	}
	return s.st.Failed()
}

// HTTPClient returns a client that calls the server in process, with no socket: its transport hands each
// request to ServeHTTP, whatever its host. Use it as sqs.Options.HTTPClient with any BaseEndpoint.
func (s *Server) HTTPClient() *http.Client { return s.client }

// An AttributeChange is an attribute that DeclareQueue changed on a queue that existed: its name, its value
// before ("" when it had none to show) and the value declared.
type AttributeChange struct {
	// Name is the SQS name of the attribute, such as "VisibilityTimeout".
	Name string
	// Stored is the attribute's value before the change, as GetQueueAttributes showed it.
	Stored string
	// Declared is the value given to DeclareQueue, which the queue has now.
	Declared string
}

// DeclareQueue makes a queue of the default account and region have the attributes given, as a program's
// configuration declares them (fifoq serve's --queue and --config): it creates the queue as CreateQueue does
// when it does not exist, and otherwise changes the attributes given whose values differ, as
// SetQueueAttributes does, and returns them. The attributes not given keep their values. What
// SetQueueAttributes would refuse (a value out of range, a FifoQueue that differs: a queue's type cannot
// change, a RedrivePolicy that the dead-letter queue's RedriveAllowPolicy refuses) is an error, and changes
// nothing.
func (s *Server) DeclareQueue(name string, attributes map[string]string) ([]AttributeChange, error) {
	ns := namespace{account: s.account, region: s.region}
	qs := s.lookup(ns, name)
	if qs == nil {
		_, err := s.createQueue(ns, name, attributes, nil)
		return nil, err
	}
	if len(attributes) == 0 {
		return nil, nil
	}
	set, err := s.parseAttributes(qs.q.FIFO(), attributes, s.finder(ns))
	if err != nil {
		return nil, err
	}
	var changes []AttributeChange
	changed := make(map[string]string)
	qs.mu.Lock()
	cur, want := qs.viewLocked(), qs.viewLocked()
	aerr := set.applyTo(&want)
	if aerr == nil {
		for _, n := range slices.Sorted(maps.Keys(attributes)) {
			a, _ := s.value(qs, &cur, n)
			b, _ := s.value(qs, &want, n)
			if a != b {
				changes = append(changes, AttributeChange{Name: n, Stored: a, Declared: b})
				changed[n] = attributes[n]
			}
		}
	}
	qs.mu.Unlock()
	if aerr != nil {
		return nil, aerr
	}
	if len(changed) == 0 {
		return nil, nil
	}
	var j journal
	if err := s.setQueueAttributes(&j, &call{}, qs, changed); err != nil {
		return nil, err
	}
	if err := s.wait(&j); err != nil {
		return nil, err
	}
	return changes, nil
}

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
	"sync"

	"github.com/fifoq/fifoq"
)

// A Server serves the Amazon SQS API from fifoq queues that it creates and holds by account, region and
// name: each request acts in the account and region its credentials and endpoint name (see the package
// documentation), WithAccountID and WithRegion giving the defaults. It is an http.Handler; it is safe for concurrent use by any number of requests. Create one with
// NewServer, which keeps its queues in memory, or with Open, which keeps them in a fifoq.Store; the zero Server
// is not usable.
type Server struct {
	region  string      // the default region
	account string      // the default account, and the SenderId of every message
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

	// cat holds the queues, with their definitions and move tasks, in memory or in a store (Open).
	cat *fifoq.Catalog
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
func NewServer(opts ...Option) *Server {
	s := newServer(opts)
	s.cat = fifoq.NewCatalog(s.catalogOptions()...)
	return s
}

// newServer returns a Server with no catalogue.
func newServer(opts []Option) *Server {
	c := config{region: "us-east-1", account: "000000000000"}
	for _, o := range opts {
		o(&c)
	}
	if c.log == nil {
		c.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Server{
		maxBody: cmp.Or(max(c.maxBody, 0), DefaultMaxRequestBytes),
		region:  c.region,
		account: c.account,
		clock:   c.clock,
		log:     c.log,
		secret:  c.secret,
		polls:   make(map[*call]context.CancelFunc),
	}
	s.observer = c.observer
	s.client = &http.Client{Transport: inProcess{s}}
	return s
}

// catalogOptions returns the options of the server's catalogue: its clock, its logger, and its default
// account and region, whose queues have their own names in fifoq.
func (s *Server) catalogOptions() []fifoq.CatalogOption {
	opts := []fifoq.CatalogOption{fifoq.WithCatalogLogger(s.log), fifoq.WithDefaultNamespace(s.defaultNS())}
	if s.clock != nil {
		opts = append(opts, fifoq.WithCatalogClock(s.clock))
	}
	return opts
}

// Catalog returns the catalogue the server serves its queues from: a program can create, change and
// inspect them directly, as the SQS actions do.
func (s *Server) Catalog() *fifoq.Catalog { return s.cat }

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
// ".fifo" for a FIFO queue), which is its name in the store too (see fifoq.Catalog). NamedQueues gives
// names to show.
func (s *Server) Queues() []*fifoq.Queue {
	all := s.cat.Queues()
	qs := make([]*fifoq.Queue, len(all))
	for i, q := range all {
		qs[i] = q.Queue
	}
	return qs
}

// NamedQueues returns every queue of the server under a name unique in the server: its own name for a queue
// of the default account and region, "account/region/name" for one of another (two regions may each have
// orders.fifo). For fifoqprom.WithNamedQueues, whose metrics are labelled by these names.
func (s *Server) NamedQueues() map[string]*fifoq.Queue {
	all := s.cat.Queues()
	out := make(map[string]*fifoq.Queue, len(all))
	for _, q := range all {
		name := q.Name
		if q.Namespace != s.defaultNS() {
			name = q.Namespace.Account + "/" + q.Namespace.Region + "/" + q.Name
		}
		out[name] = q.Queue
	}
	return out
}

// Queue returns the queue of that name in the default account and region, for tests that look at or drive
// a queue directly.
func (s *Server) Queue(name string) (*fifoq.Queue, bool) {
	q, ok := s.cat.Queue(s.defaultNS(), name)
	return q.Queue, ok
}

// CreateQueue does what the CreateQueue action does, from Go, in the default account and region: attributes are SQS attribute names with
// string values ("VisibilityTimeout": "60", "FifoQueue": "true", "RedrivePolicy": a JSON document, ...).
// Creating a queue that exists with the same attributes returns it; different ones are an error. Errors
// carry the SQS error code in their text.
//
// On a server made with Open, the queue is stored before CreateQueue returns, and a queue that the store
// holds already is an existing queue: the same rule applies.
func (s *Server) CreateQueue(name string, attributes map[string]string) (*fifoq.Queue, error) {
	return s.createQueue(context.Background(), s.defaultNS(), name, attributes, nil)
}

// Err returns the failure of a durable server's store: nil while it works (and always, for a server in
// memory); once a write or a sync of the store failed (a full disk), an error that wraps
// fifoq.ErrStoreFailed and the cause (errors.Is(err, syscall.ENOSPC)). The server then refuses every change
// with the SQS error ServiceUnavailable (HTTP 503), whose message names the cause; the reads that need no
// change (GetQueueAttributes, ListQueues, ...) go on. It does not come back by itself: stop the server and
// open the store again, which recovers every change acknowledged before the failure.
func (s *Server) Err() error {
	st := s.cat.Store()
	if st == nil {
		return nil
	}
	if err := st.Err(); errors.Is(err, fifoq.ErrStoreFailed) {
		return err
	}
	return nil
}

// Failed returns a channel that is closed when a durable server's store fails (Err tells why), for a
// process to stop and be restarted on it. It is nil, never ready, for a server in memory.
func (s *Server) Failed() <-chan struct{} {
	if st := s.cat.Store(); st != nil {
		return st.Failed()
	}
	return nil
}

// check returns the error that every change returns once the store failed or was closed, or nil.
func (s *Server) check() error {
	if st := s.cat.Store(); st != nil {
		return st.Err()
	}
	return nil
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
	ns := s.defaultNS()
	q, ok := s.cat.Queue(ns, name)
	if !ok {
		_, err := s.createQueue(context.Background(), ns, name, attributes, nil)
		return nil, err
	}
	if len(attributes) == 0 {
		return nil, nil
	}
	fifo := q.Queue.FIFO()
	set, err := s.parseAttributes(fifo, attributes, ns)
	if err != nil {
		return nil, err
	}
	cur, ok := s.cat.Definition(ns, name)
	if !ok {
		return nil, queueDoesNotExist(false) // deleted meanwhile
	}
	want := cur
	want.Apply(set.def, set.fields)
	if err := want.Check(fifo, fifoq.AllFields); err != nil {
		return nil, set.coreError(err, arnOf(q), fifo) // a rule between settings
	}
	var changes []AttributeChange
	changed := make(map[string]string)
	for _, n := range slices.Sorted(maps.Keys(attributes)) {
		a, _ := value(q, &cur, fifoq.Stats{}, n)
		b, _ := value(q, &want, fifoq.Stats{}, n)
		if a != b {
			changes = append(changes, AttributeChange{Name: n, Stored: a, Declared: b})
			changed[n] = attributes[n]
		}
	}
	if len(changed) == 0 {
		return nil, nil
	}
	if err := s.setQueueAttributes(&call{ctx: context.Background(), json: true}, q, changed); err != nil {
		return nil, err
	}
	return changes, nil
}

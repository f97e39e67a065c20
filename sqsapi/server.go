package sqsapi

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sync"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
)

// A Server serves the Amazon SQS API from the queues of a catalogue (package catalog), which holds them by
// account, region and name: each request acts in the account and region its credentials and endpoint name
// (see the package documentation), WithAccountID and WithRegion giving the defaults. It is an http.Handler;
// it is safe for concurrent use by any number of requests. Create one with NewServer: over a catalogue of
// its own in memory, or over one given with WithCatalog (catalog.Open keeps one in a fifoq.Store, so that
// the queues survive a restart). The zero Server is not usable.
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

	// cat holds the queues, with their definitions and move tasks, in memory or in a store.
	cat        *catalog.Catalog
	ownCatalog bool // cat is the server's own: Close closes it
}

// config is the configuration an Option changes.
type config struct {
	region  string
	account string
	clock   fifoq.Clock
	log     *slog.Logger
	secret  func(accessKeyID string) (string, bool)
	maxBody int64
	cat     *catalog.Catalog

	observer RequestObserver
}

// An Option configures a Server.
type Option func(*config)

// WithCatalog makes the server serve the queues of cat, a catalogue that a program shares with other
// servers (an snsapi server delivering to the queues) or keeps in a store (catalog.Open), instead of a
// catalogue of its own in memory. The server's default account and region are then cat's default
// namespace, unless WithAccountID and WithRegion set them; the catalogue's clock and logger are its own.
// Closing the server leaves cat open: close it after the server.
func WithCatalog(cat *catalog.Catalog) Option { return func(c *config) { c.cat = cat } }

// WithRegion sets the default region: the region of a request whose credential scope and host name none
// (see the package documentation). The default is "us-east-1".
func WithRegion(region string) Option { return func(c *config) { c.region = region } }

// WithAccountID sets the default account: the account of a request whose access key id is not a 12-digit
// account id (see the package documentation). It is also the SenderId of every message. The default is
// "000000000000".
func WithAccountID(id string) Option { return func(c *config) { c.account = id } }

// WithClock sets the clock of the server's own catalogue (its queues, their timestamps and rules: a deleted
// queue's name can be reused after 60 seconds) and of the server's answers. The default is the real clock.
// A catalogue given with WithCatalog keeps its own clock.
func WithClock(c fifoq.Clock) Option { return func(cfg *config) { cfg.clock = c } }

// WithLogger sets where the server logs, with the same keys in every record: every request at level Debug
// ("sqsapi: request", with action, queue, protocol, status, code when it failed, request_id and duration),
// requests that fail on the server's side (HTTP 500) at level Error (with action, queue, code and error;
// the refusals of a failed store, HTTP 503, at Debug, as "sqsapi: refused: the store failed or is closed"),
// the queues' moves to dead-letter queues at level Warn (package fifoq logs those, with queue,
// dead_letter_queue, message_id, receive_count and group) of the server's own catalogue at level Warn. The
// default discards everything.
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

// NewServer returns a Server over the catalogue WithCatalog gives, or else over a new, empty catalogue in
// memory, whose queues are gone when the process ends.
func NewServer(opts ...Option) *Server {
	var c config
	for _, o := range opts {
		o(&c)
	}
	var home catalog.Namespace
	if c.cat != nil {
		home = c.cat.DefaultNamespace()
	}
	c.account = cmp.Or(c.account, home.Account, "000000000000")
	c.region = cmp.Or(c.region, home.Region, "us-east-1")
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
	s.cat = c.cat
	if s.cat == nil {
		s.cat, s.ownCatalog = catalog.New(s.catalogOptions()...), true
	}
	return s
}

// catalogOptions returns the options of the server's catalogue: its clock, its logger, and its default
// account and region, whose queues have their own names in fifoq.
func (s *Server) catalogOptions() []catalog.Option {
	opts := []catalog.Option{catalog.WithLogger(s.log), catalog.WithDefaultNamespace(s.defaultNS())}
	if s.clock != nil {
		opts = append(opts, catalog.WithClock(s.clock))
	}
	return opts
}

// Catalog returns the catalogue the server serves its queues from: a program can create, change and
// inspect them directly, as the SQS actions do.
func (s *Server) Catalog() *catalog.Catalog { return s.cat }

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

// Queue returns the queue of that name in the default account and region, for tests that look at or drive
// a queue directly: Catalog().Queue in the server's default namespace.
func (s *Server) Queue(name string) (catalog.Queue, bool) { return s.cat.Queue(s.defaultNS(), name) }

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
// configuration declares them (fifoq serve's --queue and --config), with SQS's names and values of them
// ("VisibilityTimeout": "60", "FifoQueue": "true", "RedrivePolicy": a JSON document): it creates the queue as
// the CreateQueue action does when it does not exist, and otherwise changes the attributes given whose values differ, as
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
	fifo := q.FIFO()
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
	if err := want.Check(fifo, catalog.AllFields); err != nil {
		return nil, set.coreError(err, q.ARN(), fifo) // a rule between settings
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

// Close ends the long polls in progress (BeginShutdown) and, for a server over a catalogue of its own,
// stops its move tasks and waits for them to end (catalog.Catalog.Close). Call it once the server serves no
// more requests. A catalogue given with WithCatalog is its owner's to close. It returns nil.
func (s *Server) Close() error {
	s.BeginShutdown()
	if s.ownCatalog {
		return s.cat.Close()
	}
	return nil
}

package topic

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/internal/dedup"
	"github.com/fifoq/fifoq/internal/rule"
)

// A Topic is an in-process topic with the semantics of Amazon SNS: publishing a message to it delivers the
// message to every subscribed queue ([Endpoint]) whose filter policy it matches, before Publish returns. A
// topic whose name ends in ".fifo" is a FIFO topic: its messages need a group id, are deduplicated for 5
// minutes and reach each queue in the order they were published. A Topic is safe for concurrent use by
// multiple goroutines. Use [New]; the zero Topic is not usable.
//
// Like a [fifoq.Queue], a Topic starts no goroutines: deliveries happen inside Publish, and the deduplication
// window of a FIFO topic moves on with its clock as calls come.
type Topic struct {
	name   string
	fifo   bool
	arn    string
	cfg    topicConfig // fixed at New, except attrs
	clock  fifoq.Clock // nil: the time package
	logger *slog.Logger
	epoch  time.Time

	// order serializes the publishes of a FIFO topic, from the sequence number to the last delivery, so
	// every queue gets a group's messages in sequence order. A standard topic does not take it.
	order sync.Mutex

	// mu guards the fields below.
	mu       sync.Mutex
	attrs    Attributes
	lastNow  time.Duration
	nextSeq  uint64
	dedup    dedup.Window
	subs     []*Subscription // in subscribe order; replaced, never changed in place, so a publish can range over it
	deleted  bool
	counters topicCounters
}

// Attributes are the settings of a topic that SNS lets change after it is created (SetTopicAttributes).
type Attributes struct {
	// ContentBasedDeduplication makes a FIFO topic deduplicate a message published without a
	// deduplication id by the SHA-256 of its message. FIFO topics only.
	ContentBasedDeduplication bool
	// SignatureVersion is how a standard topic's envelopes are signed: "1" (SHA1withRSA, the default) or
	// "2" (SHA256withRSA). "" means "1". FIFO topics sign nothing.
	SignatureVersion string
}

// topicConfig holds what a topic's options set.
type topicConfig struct {
	attrs    Attributes
	clock    fifoq.Clock
	logger   *slog.Logger
	region   string
	account  string
	endpoint string
	signer   Signer
	seqFloor uint64 // the sequence number before the first
}

// An Option sets a topic attribute at [New].
type Option func(*topicConfig)

// WithClock sets the topic's clock, which stamps its envelopes and times its 5-minute deduplication
// window; the default (and nil) is the real clock, which is also the virtual clock inside a testing/synctest
// bubble.
func WithClock(c fifoq.Clock) Option { return func(cfg *topicConfig) { cfg.clock = c } }

// WithContentBasedDeduplication makes a FIFO topic deduplicate a message without a deduplication id by
// the SHA-256 of its message (ContentBasedDeduplication).
func WithContentBasedDeduplication() Option {
	return func(cfg *topicConfig) { cfg.attrs.ContentBasedDeduplication = true }
}

// WithSignatureVersion sets how the topic's envelopes are signed: "1" (SHA1withRSA, the default) or "2"
// (SHA256withRSA) (SignatureVersion). It matters only with [WithSigner].
func WithSignatureVersion(v string) Option {
	return func(cfg *topicConfig) { cfg.attrs.SignatureVersion = v }
}

// WithLogger makes the topic log its failed deliveries through l (see the package documentation's
// Logging). The default logs nothing.
func WithLogger(l *slog.Logger) Option { return func(cfg *topicConfig) { cfg.logger = l } }

// WithARN sets the region and the account of the topic's ARN, arn:aws:sns:region:account:name (the
// partition is aws-cn in China's regions and aws-us-gov in GovCloud's). The defaults are "us-east-1" and
// "000000000000", those of package sqsapi.
func WithARN(region, accountID string) Option {
	return func(cfg *topicConfig) { cfg.region, cfg.account = region, accountID }
}

// WithEndpoint sets the base URL of the SNS service the topic's envelopes name: UnsubscribeURL is
// endpoint + "/?Action=Unsubscribe&SubscriptionArn=" + the subscription's ARN. The default is SNS's,
// "https://sns.<region>.amazonaws.com".
func WithEndpoint(endpoint string) Option {
	return func(cfg *topicConfig) { cfg.endpoint = strings.TrimSuffix(endpoint, "/") }
}

// WithSequenceFloor makes a FIFO topic number its messages from a number taken from now, so that a topic
// made again at each restart (a catalogue's) keeps its sequence numbers increasing across restarts: a
// million a millisecond.
func WithSequenceFloor(now time.Time) Option {
	return func(cfg *topicConfig) { cfg.seqFloor = uint64(max(now.UnixMilli(), 0)) * 1_000_000 }
}

// WithSigner makes a standard topic sign its envelopes with s, which also gives their SigningCertURL.
// Without one an envelope has a SignatureVersion but an empty Signature and SigningCertURL, so a consumer
// that checks signatures refuses it. FIFO topics sign nothing, as on SNS.
func WithSigner(s Signer) Option { return func(cfg *topicConfig) { cfg.signer = s } }

// maxTopicName is the longest topic name, ".fifo" included.
const maxTopicName = 256

// New creates a topic. A name ending in ".fifo" makes a FIFO topic, any other name a standard topic.
// Names are 1..256 characters of [A-Za-z0-9_-], ".fifo" included; others return ErrInvalidName.
// Options out of range return ErrInvalidAttribute.
func New(name string, opts ...Option) (*Topic, error) {
	if err := validateTopicName(name); err != nil {
		return nil, err
	}
	cfg := topicConfig{region: "us-east-1", account: "000000000000"}
	for _, o := range opts {
		o(&cfg)
	}
	fifo := strings.HasSuffix(name, ".fifo")
	if err := checkAttributes(cfg.attrs, fifo); err != nil {
		return nil, err
	}
	if cfg.endpoint == "" {
		cfg.endpoint = "https://sns." + cfg.region + ".amazonaws.com"
	}
	t := &Topic{
		name:    name,
		fifo:    fifo,
		arn:     rule.MakeARN("sns", cfg.region, cfg.account, name),
		cfg:     cfg,
		clock:   cfg.clock,
		logger:  cfg.logger,
		attrs:   cfg.attrs,
		dedup:   dedup.NewWindow(),
		nextSeq: cfg.seqFloor,
	}
	t.epoch = t.now()
	return t, nil
}

// now reads the topic's clock.
func (t *Topic) now() time.Time {
	if t.clock == nil {
		return time.Now()
	}
	return t.clock.Now()
}

// Check returns the error New returns for a topic of that name with the settings a: ErrInvalidName,
// ErrInvalidAttribute, or nil. A catalogue calls it to refuse a CreateTopic before it looks for the topic.
func Check(name string, a Attributes) error {
	if err := validateTopicName(name); err != nil {
		return err
	}
	return checkAttributes(a, strings.HasSuffix(name, ".fifo"))
}

// validateTopicName checks SNS's rule: 1..256 characters of [A-Za-z0-9_-], ".fifo" included for FIFO
// topics.
func validateTopicName(name string) error {
	base := strings.TrimSuffix(name, ".fifo")
	if len(name) > maxTopicName || base == "" {
		return rule.Reject(ErrInvalidName, "%q has %d characters, want 1..%d", name, len(name), maxTopicName)
	}
	for i := 0; i < len(base); i++ {
		if c := base[i]; !rule.IsWordChar(c) && c != '-' {
			return rule.Reject(ErrInvalidName, "%q: only alphanumerics, hyphens and underscores, and a final .fifo", name)
		}
	}
	return nil
}

// checkAttributes checks a's settings for a topic of the type fifo says.
func checkAttributes(a Attributes, fifo bool) error {
	switch {
	case a.ContentBasedDeduplication && !fifo:
		return rule.InvalidParameter(ErrInvalidAttribute,
			"ContentBasedDeduplication Reason: Content-based deduplication can only be set for FIFO topics",
			"content-based deduplication on a standard topic")
	case a.SignatureVersion != "" && a.SignatureVersion != "1" && a.SignatureVersion != "2":
		return rule.InvalidParameter(ErrInvalidAttribute, "SignatureVersion",
			"signature version %q, want 1 or 2", a.SignatureVersion)
	}
	return nil
}

// Name returns the topic's name.
func (t *Topic) Name() string { return t.name }

// FIFO reports whether t is a FIFO topic.
func (t *Topic) FIFO() bool { return t.fifo }

// ARN returns the topic's ARN (TopicArn), as [WithARN] sets it.
func (t *Topic) ARN() string { return t.arn }

// Attributes returns the topic's settings as they are now.
func (t *Topic) Attributes() Attributes {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.attrs
}

// SetAttributes replaces the topic's settings (SetTopicAttributes); it returns ErrInvalidAttribute for
// settings out of range, ErrNotFound for a deleted topic, and changes nothing then. A publish under way
// keeps the settings it started with.
func (t *Topic) SetAttributes(a Attributes) error {
	if err := checkAttributes(a, t.fifo); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.deleted {
		return rule.Reject(ErrNotFound, "%s", t.name)
	}
	t.attrs = a
	return nil
}

// Delete deletes the topic (DeleteTopic): its subscriptions end, and later calls of Publish, PublishBatch,
// Subscribe and SetAttributes return ErrNotFound. A publish under way completes its deliveries. Deleting a
// deleted topic does nothing.
func (t *Topic) Delete() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.deleted = true
	for _, s := range t.subs {
		s.ended.Store(true)
	}
	t.subs = nil
}

// Subscriptions returns the topic's subscriptions, in the order they were made.
func (t *Topic) Subscriptions() []*Subscription {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.subs)
}

// nowLocked returns the topic's time as an offset of its epoch, never stepping back, and on a FIFO topic
// forgets the deduplication ids 5 minutes old; it needs mu.
func (t *Topic) nowLocked() time.Duration {
	now := max(t.now().Sub(t.epoch), t.lastNow)
	t.lastNow = now
	if t.fifo {
		t.dedup.Expire(now)
	}
	return now
}

// An Endpoint is what a subscription delivers to: an SQS queue (SNS's sqs protocol). *fifoq.Queue is one,
// which a topic subscribes to as it is. A layer that names its queues otherwise gives its own: a catalogue's
// endpoint names a queue by its namespace and name and finds it at each delivery, so that a queue deleted
// and created again gets the deliveries again, as SNS delivers to an ARN. Endpoints of a topic are compared
// with ==: subscribing an equal endpoint again finds its subscription.
type Endpoint interface {
	// Name is the queue's name, for the logs and [Subscription.QueueName].
	Name() string
	// FIFO reports whether the queue is a FIFO queue. It must not change.
	FIFO() bool
	// SendNoWait sends m as [fifoq.Queue.SendNoWait] does: once it returns, m is in the queue, and the
	// Pending it returns says when m is durable. An endpoint whose queue is gone returns an error, and the
	// delivery fails.
	SendNoWait(ctx context.Context, m fifoq.Message) (fifoq.SendResult, fifoq.Pending, error)
}

// A Subscription delivers a topic's messages to a queue (an SNS subscription with the sqs protocol). It is
// safe for concurrent use. Make one with [Topic.Subscribe].
type Subscription struct {
	topic    *Topic
	endpoint Endpoint
	arn      string
	cfg      atomic.Pointer[subscriptionConfig]
	ended    atomic.Bool // unsubscribed, or the topic deleted
}

// SubscriptionAttributes are a subscription's settings, as SNS names them. They compare with ==.
type SubscriptionAttributes struct {
	// RawMessageDelivery delivers the message as the queue message's body, and its attributes as the
	// queue message's attributes, instead of SNS's JSON envelope ([Envelope]).
	RawMessageDelivery bool
	// FilterPolicy is the subscription's filter policy, in SNS's JSON language ([ParseFilterPolicy]); ""
	// delivers every message.
	FilterPolicy string
	// FilterPolicyScope says what FilterPolicy looks at: FilterPolicyScopeMessageAttributes ("" means it
	// too) or FilterPolicyScopeMessageBody.
	FilterPolicyScope FilterPolicyScope
	// DeadLetterQueue (RedrivePolicy's deadLetterTargetArn) receives the messages that cannot be delivered
	// to the queue: the queue refused them (too large, too many attributes for raw delivery, a body with a
	// character SQS refuses, a queue deleted from its store or gone from its catalogue). They arrive as the
	// queue would have received them. nil drops them. It is a FIFO queue for a FIFO queue subscribed to a
	// FIFO topic, a standard queue for a standard topic.
	DeadLetterQueue Endpoint
}

// subscriptionConfig is a subscription's attributes with the filter policy parsed. It is never changed in
// place: SetAttributes swaps in a new one.
type subscriptionConfig struct {
	attrs  SubscriptionAttributes
	policy *FilterPolicy // nil without a filter policy
}

// A SubscribeOption changes how [Topic.Subscribe] makes a subscription.
type SubscribeOption func(*subscribeConfig)

type subscribeConfig struct{ arn string }

// WithSubscriptionARN gives the new subscription the ARN arn, in place of the topic's ARN, a colon and a
// random UUID: a layer that keeps subscriptions across restarts makes them again with their ARNs.
func WithSubscriptionARN(arn string) SubscribeOption {
	return func(c *subscribeConfig) { c.arn = arn }
}

// Subscribe subscribes the queue e to the topic (Subscribe, with the sqs protocol) and returns the
// subscription. A FIFO topic takes FIFO and standard queues; a standard topic takes standard queues only, as
// on SNS (ErrInvalidSubscription). Subscribing an endpoint that is subscribed already (an equal one) returns
// its subscription when attrs are the same, and ErrInvalidSubscription otherwise. A bad filter policy returns
// ErrInvalidFilterPolicy or ErrInvalidFilterPolicyScope, a dead-letter queue of the wrong type
// ErrInvalidRedrivePolicy, a deleted topic ErrNotFound, a nil e ErrInvalidSubscription;
// [fifoq.ErrorMessage] gives what SNS says to a Subscribe call ("Invalid parameter: Attributes Reason: ...").
func (t *Topic) Subscribe(e Endpoint, attrs SubscriptionAttributes, opts ...SubscribeOption) (*Subscription, error) {
	if e == nil {
		return nil, rule.InvalidParameter(ErrInvalidSubscription, "Endpoint", "no endpoint")
	}
	if e.FIFO() && !t.fifo {
		return nil, rule.InvalidParameter(ErrInvalidSubscription,
			"Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be subscribed to standard SNS topics",
			"FIFO queue %s on standard topic %s", e.Name(), t.name)
	}
	cfg, err := t.subscriptionConfig(e.FIFO(), attrs, true)
	if err != nil {
		return nil, err
	}
	var sc subscribeConfig
	for _, o := range opts {
		o(&sc)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.deleted {
		return nil, rule.Reject(ErrNotFound, "%s", t.name)
	}
	for _, s := range t.subs {
		if s.endpoint != e {
			continue
		}
		if s.cfg.Load().attrs != cfg.attrs {
			return nil, rule.InvalidParameter(ErrInvalidSubscription,
				"Attributes Reason: Subscription already exists with different attributes",
				"queue %s is subscribed to %s with other attributes", e.Name(), t.name)
		}
		return s, nil
	}
	if sc.arn == "" {
		sc.arn = t.arn + ":" + newUUID()
	}
	s := &Subscription{topic: t, endpoint: e, arn: sc.arn}
	s.cfg.Store(cfg)
	t.subs = append(slices.Clone(t.subs), s)
	return s, nil
}

// subscriptionConfig checks attrs for a subscription of a queue (a FIFO queue when fifoQueue) to t and parses
// its filter policy; subscribe says whether the call is a Subscribe, whose messages SNS words differently.
func (t *Topic) subscriptionConfig(fifoQueue bool, attrs SubscriptionAttributes, subscribe bool) (*subscriptionConfig, error) {
	if attrs.FilterPolicyScope == "" {
		attrs.FilterPolicyScope = FilterPolicyScopeMessageAttributes
	}
	if err := checkFilterPolicyScope(attrs.FilterPolicyScope); err != nil {
		return nil, err
	}
	cfg := &subscriptionConfig{attrs: attrs}
	if attrs.FilterPolicy != "" {
		p, err := parseFilterPolicy(attrs.FilterPolicy, attrs.FilterPolicyScope)
		if err != nil {
			return nil, rejectPolicy(err, subscribe)
		}
		cfg.policy = p
	}
	if d := attrs.DeadLetterQueue; d != nil {
		if err := t.checkDeadLetterQueue(fifoQueue, d.FIFO(), d.Name()); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// checkDeadLetterQueue checks that the dead-letter queue called name, a FIFO queue when fifoDLQ, may take
// the failed messages of a subscription of a queue (FIFO when fifoQueue) to t.
func (t *Topic) checkDeadLetterQueue(fifoQueue, fifoDLQ bool, name string) error {
	switch {
	case t.fifo && fifoQueue && !fifoDLQ:
		return rule.InvalidParameter(ErrInvalidRedrivePolicy,
			"RedrivePolicy: must use a FIFO queue as DLQ for a FIFO Subscription to a FIFO Topic.",
			"standard queue %s as the dead-letter queue of a FIFO queue on FIFO topic %s", name, t.name)
	case !t.fifo && fifoDLQ:
		return rule.InvalidParameter(ErrInvalidRedrivePolicy,
			"RedrivePolicy: must use a standard queue as DLQ for a Subscription to a standard Topic.",
			"FIFO queue %s as the dead-letter queue of a subscription to standard topic %s", name, t.name)
	}
	return nil
}

// ARN returns the subscription's ARN (SubscriptionArn): the topic's ARN, a colon and a random UUID, or the
// ARN [WithSubscriptionARN] gave.
func (s *Subscription) ARN() string { return s.arn }

// Topic returns the subscription's topic.
func (s *Subscription) Topic() *Topic { return s.topic }

// Endpoint returns the subscribed queue.
func (s *Subscription) Endpoint() Endpoint { return s.endpoint }

// QueueName returns the name of the subscribed queue, its endpoint's Name.
func (s *Subscription) QueueName() string { return s.endpoint.Name() }

// Attributes returns the subscription's settings as they are now; FilterPolicyScope is never "".
func (s *Subscription) Attributes() SubscriptionAttributes { return s.cfg.Load().attrs }

// SetAttributes replaces the subscription's settings (SetSubscriptionAttributes), checked as Subscribe checks
// them; [fifoq.ErrorMessage] gives what SNS says to SetSubscriptionAttributes ("Invalid parameter:
// FilterPolicy: ..."). An unsubscribed subscription returns ErrSubscriptionNotFound. Settings it refuses
// change nothing. A publish under way delivers with the settings it read, as SNS applies a change within a
// while.
func (s *Subscription) SetAttributes(a SubscriptionAttributes) error {
	cfg, err := s.topic.subscriptionConfig(s.endpoint.FIFO(), a, false)
	if err != nil {
		return err
	}
	if s.ended.Load() {
		return rule.Reject(ErrSubscriptionNotFound, "%s", s.arn)
	}
	s.cfg.Store(cfg)
	return nil
}

// Unsubscribe ends the subscription (Unsubscribe): later publishes do not deliver to its queue. A publish
// under way may still deliver to it. Unsubscribing twice does nothing.
func (s *Subscription) Unsubscribe() {
	t := s.topic
	t.mu.Lock()
	defer t.mu.Unlock()
	s.ended.Store(true)
	if i := slices.Index(t.subs, s); i >= 0 {
		t.subs = slices.Delete(slices.Clone(t.subs), i, i+1)
	}
}

// newUUID returns a random UUID, version 4.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return formatUUID(b, 4)
}

// formatUUID returns b as a UUID of the given version, variant 10, in its 8-4-4-4-12 hex form.
func formatUUID(b [16]byte, version byte) string {
	b[6] = b[6]&0x0f | version<<4
	b[8] = b[8]&0x3f | 0x80
	var h [32]byte
	hex.Encode(h[:], b[:])
	return string(h[0:8]) + "-" + string(h[8:12]) + "-" + string(h[12:16]) + "-" + string(h[16:20]) + "-" + string(h[20:32])
}

// Metrics are what a topic reports for monitoring, from [Topic.Metrics]: its subscriptions now, and
// counters since it was created. They are SNS's CloudWatch metrics for a topic. For every message published
// and every subscription it went to, exactly one of Delivered, Failed and the four FilteredOut counters
// counts one.
type Metrics struct {
	// Subscriptions is the number of subscriptions now (SubscriptionsConfirmed).
	Subscriptions int
	// Published counts the messages Publish and PublishBatch accepted (NumberOfMessagesPublished),
	// duplicates suppressed by a FIFO topic's deduplication included.
	Published uint64
	// PublishedBytes adds up the sizes of those messages, attributes included (PublishSize).
	PublishedBytes uint64
	// Duplicates counts the messages a FIFO topic accepted but did not deliver, because their
	// deduplication id was accepted within the last 5 minutes.
	Duplicates uint64
	// Delivered counts the messages a queue accepted (NumberOfNotificationsDelivered).
	Delivered uint64
	// FilteredOut counts the messages a subscription's filter policy rejected
	// (NumberOfNotificationsFilteredOut).
	FilteredOut uint64
	// FilteredOutNoMessageAttributes counts the messages rejected by a filter policy on attributes
	// because they had none (NumberOfNotificationsFilteredOut-NoMessageAttributes).
	FilteredOutNoMessageAttributes uint64
	// FilteredOutInvalidAttributes counts the messages rejected because an attribute the policy names is a
	// String.Array that is not a JSON array of scalars (NumberOfNotificationsFilteredOut-InvalidAttributes).
	FilteredOutInvalidAttributes uint64
	// FilteredOutInvalidMessageBody counts the messages rejected by a filter policy on the body because
	// the body is not a JSON object, or nests deeper than 256 levels
	// (NumberOfNotificationsFilteredOut-InvalidMessageBody).
	FilteredOutInvalidMessageBody uint64
	// Failed counts the messages a queue refused (NumberOfNotificationsFailed).
	Failed uint64
	// RedrivenToDLQ counts the failed messages the subscription's dead-letter queue accepted
	// (NumberOfNotificationsRedrivenToDlq).
	RedrivenToDLQ uint64
	// FailedToRedriveToDLQ counts the failed messages its dead-letter queue refused too
	// (NumberOfNotificationsFailedToRedriveToDlq). Failed messages without a dead-letter queue are lost and
	// count in neither.
	FailedToRedriveToDLQ uint64
}

// topicCounters are the counters of Metrics, counted with atomics: deliveries of a standard topic
// happen outside the lock.
type topicCounters struct {
	published, publishedBytes, duplicates, delivered                      atomic.Uint64
	filteredOut, filteredNoAttributes, filteredInvalidAttrs, filteredBody atomic.Uint64
	failed, redriven, failedToRedrive                                     atomic.Uint64
}

// Metrics returns the topic's metrics as of now. It takes the topic's lock once, in O(1).
func (t *Topic) Metrics() Metrics {
	t.mu.Lock()
	n := len(t.subs)
	t.mu.Unlock()
	c := &t.counters
	return Metrics{
		Subscriptions:                  n,
		Published:                      c.published.Load(),
		PublishedBytes:                 c.publishedBytes.Load(),
		Duplicates:                     c.duplicates.Load(),
		Delivered:                      c.delivered.Load(),
		FilteredOut:                    c.filteredOut.Load(),
		FilteredOutNoMessageAttributes: c.filteredNoAttributes.Load(),
		FilteredOutInvalidAttributes:   c.filteredInvalidAttrs.Load(),
		FilteredOutInvalidMessageBody:  c.filteredBody.Load(),
		Failed:                         c.failed.Load(),
		RedrivenToDLQ:                  c.redriven.Load(),
		FailedToRedriveToDLQ:           c.failedToRedrive.Load(),
	}
}

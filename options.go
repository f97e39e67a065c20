package fifoq

import (
	"log/slog"
	"slices"
	"time"

	"github.com/fifoq/fifoq/internal/rule"
)

// The options of New: a queue's settings, each an Option, the defaults they start from and their checks.

// config holds a queue's attributes. A queue's config is never changed in place: SetAttributes swaps in a
// new one, so code outside the lock reads a consistent set.
type config struct {
	visibility   time.Duration
	delay        time.Duration
	retention    time.Duration
	maxSize      int
	waitTime     time.Duration
	contentDedup bool
	scope        DeduplicationScope
	groupOrder   GroupOrder
	fifoOnly     []string // FIFO-only options given, for the error on a standard queue
	clock        Clock

	hasRedrive      bool   // WithDeadLetterQueue was given
	dlq             *Queue // the dead-letter queue, nil without a redrive policy
	maxReceiveCount int
	allow           RedriveAllowPolicy // who may use this queue as a dead-letter queue
	logger          *slog.Logger

	store    *Store // nil: in memory
	storeKey string // the queue's name in the store: its name, but for this package's tests
}

// An Option sets a queue attribute at [New].
type Option func(*config)

// WithVisibilityTimeout sets how long a received message stays invisible: 0..12h, default 30s.
func WithVisibilityTimeout(d time.Duration) Option { return func(c *config) { c.visibility = d } }

// WithDelay sets the queue delay, how long a new message stays invisible: 0..15m, default 0.
func WithDelay(d time.Duration) Option { return func(c *config) { c.delay = d } }

// WithRetention sets how long a message is kept: 1m..14 days, default 4 days.
func WithRetention(d time.Duration) Option { return func(c *config) { c.retention = d } }

// WithMaxMessageSize sets the largest message, body plus attributes, in bytes: 1 KiB..1 MiB, default 1 MiB.
func WithMaxMessageSize(n int) Option { return func(c *config) { c.maxSize = n } }

// WithReceiveWaitTime sets the long-poll wait of a receive that does not give one: 0..20s, default 0.
func WithReceiveWaitTime(d time.Duration) Option { return func(c *config) { c.waitTime = d } }

// WithContentBasedDeduplication makes a FIFO queue deduplicate a message without a DeduplicationID by the
// SHA-256 of its body.
func WithContentBasedDeduplication() Option {
	return func(c *config) {
		c.contentDedup = true
		c.fifoOnly = append(c.fifoOnly, "ContentBasedDeduplication")
	}
}

// WithDeduplicationScope sets where a FIFO queue deduplicates: DeduplicationScopeQueue (the default) or
// DeduplicationScopeMessageGroup.
func WithDeduplicationScope(s DeduplicationScope) Option {
	return func(c *config) {
		c.scope = s
		c.fifoOnly = append(c.fifoOnly, "DeduplicationScope")
	}
}

// WithGroupOrder sets the order in which a FIFO queue serves its message groups: GroupOrderAvailable (the
// default) serves them in the order they became available, as SQS is observed to, so a group whose messages
// come back waits behind the groups already waiting; GroupOrderOldestMessage serves first the group whose
// oldest message was sent first. Either way a receive fills its response from one group before it takes the
// next, and keeps each group in send order. SQS promises no order between groups: code that must also work on
// SQS should not depend on it. A standard queue accepts the option, which has no effect there. An unknown
// order returns ErrInvalidQueueAttribute.
func WithGroupOrder(o GroupOrder) Option { return func(c *config) { c.groupOrder = o } }

// WithClock sets the queue's clock; the default is the real clock, which is also the virtual clock inside a
// testing/synctest bubble.
func WithClock(clk Clock) Option { return func(c *config) { c.clock = clk } }

// defaultConfig returns the settings of a queue made without options.
func defaultConfig() config {
	return config{
		visibility: 30 * time.Second,
		retention:  4 * 24 * time.Hour,
		maxSize:    MaxMessageSize,
		scope:      DeduplicationScopeQueue,
		clock:      realClock{},
	}
}

// validate checks the settings of c for a queue of the type fifo says; the redrive policy is
// validateRedrive's. AWS's message for a setting out of its range names it as SQS does.
func (c *config) validate(fifo bool) error {
	inRange := func(name, attribute string, d, lo, hi time.Duration) error {
		if d < lo || d > hi {
			return rule.BadQueueAttribute(attribute, "%s %v, want %v..%v", name, d, lo, hi)
		}
		return nil
	}
	switch {
	case !fifo && len(c.fifoOnly) > 0:
		return rule.Reject(ErrFIFOOnly, "unknown attribute %s on standard queue", c.fifoOnly[0])
	case c.scope != DeduplicationScopeQueue && c.scope != DeduplicationScopeMessageGroup:
		return rule.Reject(ErrInvalidQueueAttribute, "deduplication scope %d", c.scope)
	case c.groupOrder != GroupOrderAvailable && c.groupOrder != GroupOrderOldestMessage:
		return rule.Reject(ErrInvalidQueueAttribute, "group order %d", c.groupOrder)
	case c.maxSize < minMessageSize || c.maxSize > MaxMessageSize:
		return rule.BadQueueAttribute("MaximumMessageSize", "maximum message size %d, want %d..%d", c.maxSize, minMessageSize, MaxMessageSize)
	case c.clock == nil:
		return rule.Reject(ErrInvalidQueueAttribute, "nil clock")
	}
	if err := inRange("visibility timeout", "VisibilityTimeout", c.visibility, 0, maxVisibilityTimeout); err != nil {
		return err
	}
	if err := inRange("delay", "DelaySeconds", c.delay, 0, maxDelay); err != nil {
		return err
	}
	if err := inRange("retention", "MessageRetentionPeriod", c.retention, minRetention, maxRetention); err != nil {
		return err
	}
	return inRange("receive wait time", "ReceiveMessageWaitTimeSeconds", c.waitTime, 0, maxWaitTime)
}

// CheckOptions returns the error [New] returns for the settings opts make on a queue of the type fifo says
// (a FIFO queue or a standard one): ErrInvalidQueueAttribute for a setting out of its range, ErrFIFOOnly for
// a FIFO-only setting on a standard queue, ErrInvalidRedriveAllowPolicy for a redrive allow policy that
// names no sources, or too many; nil when they are good. It makes no queue, and leaves out the redrive
// policy ([WithDeadLetterQueue]), whose checks need the queues. A catalogue calls it for each setting of a
// queue's definition, so as to refuse the first bad one in the order SQS does.
func CheckOptions(fifo bool, opts ...Option) error {
	c := defaultConfig()
	for _, o := range opts {
		o(&c)
	}
	if err := c.validate(fifo); err != nil {
		return err
	}
	return c.allow.validate()
}

// WithDeadLetterQueue gives the queue a redrive policy: a message received maxReceiveCount times (1..1000)
// and not deleted moves to dlq on the next receive instead of being returned. dlq must be of the same type
// (FIFO with FIFO, standard with standard) and must allow this queue under its [RedriveAllowPolicy].
func WithDeadLetterQueue(dlq *Queue, maxReceiveCount int) Option {
	return func(c *config) {
		c.dlq, c.maxReceiveCount, c.hasRedrive = dlq, maxReceiveCount, true
	}
}

// WithLogger makes the queue log each message it moves to its dead-letter queue, at level Warn, after it
// has released its lock, with the keys queue, dead_letter_queue, message_id, receive_count and group (see
// the package documentation, # Logging).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithRedriveAllowPolicy says which queues may use this queue as their dead-letter queue. The default
// allows all.
func WithRedriveAllowPolicy(p RedriveAllowPolicy) Option {
	return func(c *config) { c.allow = RedriveAllowPolicy{p.Permission, slices.Clone(p.Sources)} }
}

// WithStore keeps the queue in s, so that it survives a restart: New opens the queue of that name stored
// in s, with every message it held, or stores a new one. The queue's settings are the options given to New,
// as without a store. A dead-letter queue must be in the same store as its sources.
func WithStore(s *Store) Option { return func(c *config) { c.store = s } }

// DefaultAttributes returns the settings of a queue that [New] makes without options: a visibility timeout
// of 30 seconds, a retention of 4 days, a maximum message size of 1 MiB, no delay, no receive wait, and the
// deduplication scope DeduplicationScopeQueue (which a standard queue shows as 0).
func DefaultAttributes(fifo bool) Attributes {
	c := defaultConfig()
	a := Attributes{VisibilityTimeout: c.visibility, Retention: c.retention, MaxMessageSize: c.maxSize,
		GroupOrder: c.groupOrder, RedriveAllowPolicy: c.allow}
	if fifo {
		a.DeduplicationScope = c.scope
	}
	return a
}

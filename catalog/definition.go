package catalog

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/internal/rule"
)

// A Definition is what a [Catalog] keeps about a queue besides its messages: the settings its [Queue] applies,
// its redrive policy by the name of its dead-letter queue, and what Amazon SQS keeps of a queue that fifoq
// stores and returns but does not act on (a throughput limit, an access policy, encryption settings, tags),
// with the times of its creation and last change. The catalogue checks a definition with the rules SQS
// applies to these attributes; [Definition.Check] names them.
//
// A Definition is a value: the catalogue hands out copies, and takes a definition's maps over only as
// documented.
type Definition struct {
	VisibilityTimeout         time.Duration            // 0..12h; default 30s
	Delay                     time.Duration            // 0..15m; default 0
	Retention                 time.Duration            // 1m..14 days; default 4 days
	MaxMessageSize            int                      // 1 KiB..1 MiB; default 1 MiB
	ReceiveWaitTime           time.Duration            // 0..20s; default 0
	ContentBasedDeduplication bool                     // FIFO only
	DeduplicationScope        fifoq.DeduplicationScope // FIFO only; default fifoq.DeduplicationScopeQueue (0 reads as such)

	// RedrivePolicy names the queue's dead-letter queue, a queue of its namespace.
	RedrivePolicy RedrivePolicy
	// fifoq.RedriveAllowPolicy says which queues of its namespace may use the queue as their dead-letter queue. nil,
	// the default, allows all and stands for a policy that was never given, which SQS does not show.
	RedriveAllowPolicy *fifoq.RedriveAllowPolicy

	// ThroughputLimit is FifoThroughputLimit (FIFO only): ThroughputPerQueue, the default, or
	// ThroughputPerMessageGroupID, which needs fifoq.DeduplicationScopeMessageGroup. fifoq has no throughput
	// limit to apply: it is stored and returned.
	ThroughputLimit ThroughputLimit
	// Policy is the queue's access policy, a JSON document, "" for none: stored and returned, never enforced.
	Policy string
	// The encryption settings. fifoq encrypts nothing: they are stored and returned, under the rules that tie
	// them together (see [Definition.Apply]).
	//
	// KMSMasterKeyID names a KMS key for server-side encryption, "" for none.
	KMSMasterKeyID string
	// KMSDataKeyReusePeriod is how long a data key is reused, 1m..24h, 0 meaning the default, 5 minutes. It
	// counts only with a KMS key.
	KMSDataKeyReusePeriod time.Duration
	// SQSManagedSSE is server-side encryption with keys of SQS's, the default of a queue without a KMS key.
	SQSManagedSSE bool

	// Tags are the queue's cost allocation tags: at most 50, keys of 1..128 characters, values of at most 256.
	Tags map[string]string

	// Created is when the queue was created. The catalogue sets it, and Modified: what a caller puts there
	// is ignored.
	Created time.Time
	// Modified is when a setting of the queue last changed (tags aside).
	Modified time.Time
}

// A RedrivePolicy sends the messages of a queue received MaxReceiveCount times and not deleted to its
// dead-letter queue (see [fifoq.WithDeadLetterQueue]). The zero RedrivePolicy is none.
type RedrivePolicy struct {
	// DeadLetterQueue is the name of the dead-letter queue in the queue's namespace; "" for no policy.
	DeadLetterQueue string
	// MaxReceiveCount is 1..1000.
	MaxReceiveCount int
	// Pending reports that the policy waits for its dead-letter queue: that queue was deleted (or, when
	// created again, refused the policy), so the queue moves no message anywhere, and a queue created with
	// that name takes the policy back. The catalogue sets it; a policy a caller gives is never pending.
	Pending bool
}

// ThroughputLimit is the FifoThroughputLimit of a FIFO queue's [Definition].
type ThroughputLimit uint8

const (
	// ThroughputPerQueue: the throughput quota applies to the queue ("perQueue").
	ThroughputPerQueue ThroughputLimit = iota + 1
	// ThroughputPerMessageGroupID: the quota applies to each message group ("perMessageGroupId").
	ThroughputPerMessageGroupID
)

// String returns the SQS attribute value: "perQueue" or "perMessageGroupId".
func (l ThroughputLimit) String() string {
	switch l {
	case ThroughputPerQueue:
		return "perQueue"
	case ThroughputPerMessageGroupID:
		return "perMessageGroupId"
	}
	return "ThroughputLimit(invalid)"
}

// Fields is a set of the settings of a [Definition]: those a caller gives [Catalog.CreateQueue], or that
// [Definition.Apply] copies. Each is named after the SQS attribute it is, in the comments below.
type Fields uint32

const (
	FieldContentBasedDeduplication Fields = 1 << iota // ContentBasedDeduplication
	FieldDeduplicationScope                           // fifoq.DeduplicationScope
	FieldDelay                                        // DelaySeconds
	FieldThroughputLimit                              // FifoThroughputLimit
	FieldKMSDataKeyReusePeriod                        // KmsDataKeyReusePeriodSeconds
	FieldKMSMasterKeyID                               // KmsMasterKeyId
	FieldMaxMessageSize                               // MaximumMessageSize
	FieldRetention                                    // MessageRetentionPeriod
	FieldPolicy                                       // Policy
	FieldReceiveWaitTime                              // ReceiveMessageWaitTimeSeconds
	FieldRedriveAllowPolicy                           // fifoq.RedriveAllowPolicy
	FieldRedrivePolicy                                // RedrivePolicy
	FieldSQSManagedSSE                                // SqsManagedSseEnabled
	FieldVisibilityTimeout                            // VisibilityTimeout
	FieldTags                                         // the tags (not an attribute)

	// AllFields is every field.
	AllFields = FieldTags<<1 - 1
)

// fieldAttributes are the SQS names of the fields, bit by bit: in the order of the names, which is the order
// SQS checks and compares them in.
var fieldAttributes = [...]string{"ContentBasedDeduplication", "DeduplicationScope", "DelaySeconds",
	"FifoThroughputLimit", "KmsDataKeyReusePeriodSeconds", "KmsMasterKeyId", "MaximumMessageSize",
	"MessageRetentionPeriod", "Policy", "ReceiveMessageWaitTimeSeconds", "RedriveAllowPolicy", "RedrivePolicy",
	"SqsManagedSseEnabled", "VisibilityTimeout", "Tags"}

// The limits of the encryption settings and tags.
const (
	defaultKeyReusePeriod = 5 * time.Minute
	minKeyReusePeriod     = time.Minute
	maxKeyReusePeriod     = 24 * time.Hour
	maxTags               = 50
	maxTagKeyLen          = 128
	maxTagValueLen        = 256
)

// NewDefinition returns the definition of a new queue of the type fifo says (FIFO or standard) made with no
// settings: the defaults of [New], SQS-managed encryption, and on a FIFO queue the per-queue throughput limit.
func NewDefinition(fifo bool) Definition {
	a := fifoq.DefaultAttributes(fifo)
	d := Definition{VisibilityTimeout: a.VisibilityTimeout, Retention: a.Retention, MaxMessageSize: a.MaxMessageSize,
		SQSManagedSSE: true}
	if fifo {
		d.DeduplicationScope, d.ThroughputLimit = fifoq.DeduplicationScopeQueue, ThroughputPerQueue
	}
	return d
}

// Apply copies into d the settings of changes that fields lists, as SQS applies a change of these
// attributes: Tags are copied whole; a RedrivePolicy given is not pending; the encryption settings go
// together: giving KMSMasterKeyID (a key, or "" to remove it), or SQSManagedSSE true, first drops the KMS key
// and its reuse period; a KMS key given turns SQSManagedSSE off, unless the change gives SQSManagedSSE too.
func (d *Definition) Apply(changes Definition, fields Fields) {
	if fields&FieldVisibilityTimeout != 0 {
		d.VisibilityTimeout = changes.VisibilityTimeout
	}
	if fields&FieldDelay != 0 {
		d.Delay = changes.Delay
	}
	if fields&FieldRetention != 0 {
		d.Retention = changes.Retention
	}
	if fields&FieldMaxMessageSize != 0 {
		d.MaxMessageSize = changes.MaxMessageSize
	}
	if fields&FieldReceiveWaitTime != 0 {
		d.ReceiveWaitTime = changes.ReceiveWaitTime
	}
	if fields&FieldContentBasedDeduplication != 0 {
		d.ContentBasedDeduplication = changes.ContentBasedDeduplication
	}
	if fields&FieldDeduplicationScope != 0 {
		d.DeduplicationScope = changes.DeduplicationScope
	}
	if fields&FieldThroughputLimit != 0 {
		d.ThroughputLimit = changes.ThroughputLimit
	}
	if fields&FieldRedrivePolicy != 0 {
		d.RedrivePolicy = changes.RedrivePolicy
		d.RedrivePolicy.Pending = false
	}
	if fields&FieldRedriveAllowPolicy != 0 {
		d.RedriveAllowPolicy = cloneAllowPolicy(changes.RedriveAllowPolicy)
	}
	if fields&FieldPolicy != 0 {
		d.Policy = changes.Policy
	}
	if fields&FieldKMSMasterKeyID != 0 || fields&FieldSQSManagedSSE != 0 && changes.SQSManagedSSE {
		d.KMSMasterKeyID, d.KMSDataKeyReusePeriod = "", 0
	}
	if fields&FieldKMSMasterKeyID != 0 && changes.KMSMasterKeyID != "" {
		d.KMSMasterKeyID = changes.KMSMasterKeyID
		if fields&FieldSQSManagedSSE == 0 {
			d.SQSManagedSSE = false
		}
	}
	if fields&FieldKMSDataKeyReusePeriod != 0 {
		d.KMSDataKeyReusePeriod = changes.KMSDataKeyReusePeriod
	}
	if fields&FieldSQSManagedSSE != 0 {
		d.SQSManagedSSE = changes.SQSManagedSSE
	}
	if fields&FieldTags != 0 {
		d.Tags = maps.Clone(changes.Tags)
	}
}

// Check returns the error the catalogue returns for the settings of d that fields lists, on a queue of the
// type fifo says, or nil: it checks each in the order of the names of their SQS attributes, then the rules
// between them that fields lists both sides of. The settings of [New] take its errors and messages
// (fifoq.ErrInvalidQueueAttribute, fifoq.ErrFIFOOnly), as does a redrive allow policy (fifoq.ErrInvalidRedriveAllowPolicy); a
// redrive policy with no dead-letter queue or a maxReceiveCount out of 1..1000 returns
// fifoq.ErrInvalidRedrivePolicy; a throughput limit or a KMS reuse period out of range, fifoq.ErrInvalidQueueAttribute;
// more than 50 tags, or longer ones, ErrInvalidTags; a KMS key given with SQSManagedSSE true,
// ErrEncryptionConflict; and ThroughputPerMessageGroupID without fifoq.DeduplicationScopeMessageGroup,
// fifoq.ErrInvalidQueueAttribute. Check looks
// up no queue: whether a dead-letter queue exists and allows the queue is for the catalogue to say. A front
// end calls it for each setting as it reads a request, to refuse the first bad one in the order SQS does.
func (d *Definition) Check(fifo bool, fields Fields) error {
	for bit, name := range fieldAttributes {
		f := Fields(1) << bit
		if fields&f == 0 {
			continue
		}
		if err := d.checkField(fifo, f, name); err != nil {
			return err
		}
	}
	switch {
	case fields&FieldKMSMasterKeyID != 0 && fields&FieldSQSManagedSSE != 0 && d.KMSMasterKeyID != "" && d.SQSManagedSSE:
		return rule.Reject(ErrEncryptionConflict, "a KMS key and SQS-managed encryption")
	case fifo && fields&(FieldThroughputLimit|FieldDeduplicationScope) == FieldThroughputLimit|FieldDeduplicationScope &&
		d.ThroughputLimit == ThroughputPerMessageGroupID && cmp.Or(d.DeduplicationScope, fifoq.DeduplicationScopeQueue) != fifoq.DeduplicationScopeMessageGroup:
		return rule.Reject(fifoq.ErrInvalidQueueAttribute, "throughput limit %v with deduplication scope %v", d.ThroughputLimit,
			cmp.Or(d.DeduplicationScope, fifoq.DeduplicationScopeQueue)).Says("Invalid value for the parameter FifoThroughputLimit. " +
			"Reason: perMessageGroupId is allowed only when DeduplicationScope is messageGroup.")
	}
	return nil
}

// checkField checks the setting f of d, whose SQS name is name.
func (d *Definition) checkField(fifo bool, f Fields, name string) error {
	if !fifo && (f == FieldContentBasedDeduplication && d.ContentBasedDeduplication ||
		f == FieldDeduplicationScope && d.DeduplicationScope != 0 || f == FieldThroughputLimit && d.ThroughputLimit != 0) {
		return rule.Reject(fifoq.ErrFIFOOnly, "unknown attribute %s on standard queue", name)
	}
	switch f {
	case FieldVisibilityTimeout:
		return fifoq.CheckOptions(fifo, fifoq.WithVisibilityTimeout(d.VisibilityTimeout))
	case FieldDelay:
		return fifoq.CheckOptions(fifo, fifoq.WithDelay(d.Delay))
	case FieldRetention:
		return fifoq.CheckOptions(fifo, fifoq.WithRetention(d.Retention))
	case FieldMaxMessageSize:
		return fifoq.CheckOptions(fifo, fifoq.WithMaxMessageSize(d.MaxMessageSize))
	case FieldReceiveWaitTime:
		return fifoq.CheckOptions(fifo, fifoq.WithReceiveWaitTime(d.ReceiveWaitTime))
	case FieldDeduplicationScope:
		if fifo && d.DeduplicationScope != 0 {
			return fifoq.CheckOptions(fifo, fifoq.WithDeduplicationScope(d.DeduplicationScope))
		}
	case FieldThroughputLimit:
		if fifo && d.ThroughputLimit != ThroughputPerQueue && d.ThroughputLimit != ThroughputPerMessageGroupID {
			return rule.BadQueueAttribute(name, "throughput limit %d", d.ThroughputLimit)
		}
	case FieldKMSDataKeyReusePeriod:
		if p := d.KMSDataKeyReusePeriod; p != 0 && (p < minKeyReusePeriod || p > maxKeyReusePeriod) {
			return rule.BadQueueAttribute(name, "KMS data key reuse period %v, want %v..%v", p, minKeyReusePeriod, maxKeyReusePeriod)
		}
	case FieldRedrivePolicy:
		p := d.RedrivePolicy
		switch {
		case p.DeadLetterQueue == "" && p.MaxReceiveCount != 0:
			return rule.Reject(fifoq.ErrInvalidRedrivePolicy, "maxReceiveCount %d without a dead-letter queue", p.MaxReceiveCount)
		case p.DeadLetterQueue == "":
		case rule.QueueName(p.DeadLetterQueue) != nil:
			return rule.Reject(fifoq.ErrInvalidRedrivePolicy, "dead-letter queue %q is not a queue name", p.DeadLetterQueue)
		default:
			return rule.CheckMaxReceiveCount(p.MaxReceiveCount)
		}
	case FieldRedriveAllowPolicy:
		if p := d.RedriveAllowPolicy; p != nil {
			return fifoq.CheckOptions(fifo, fifoq.WithRedriveAllowPolicy(*p))
		}
	case FieldTags:
		return checkTags(d.Tags)
	}
	return nil
}

// checkTags checks a queue's tags against SQS's limits.
func checkTags(tags map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		v := tags[k]
		if err := checkTagKey(k); err != nil {
			return err
		}
		if len(v) > maxTagValueLen {
			return rule.Reject(ErrInvalidTags, "tag value of %d characters, want at most %d", len(v), maxTagValueLen).Says("%s",
				rule.InvalidValue(v, "TagValue", "Tag values must be at most 256 characters in length."))
		}
	}
	if len(tags) > maxTags {
		return rule.Reject(ErrInvalidTags, "%d tags, want at most %d", len(tags), maxTags).Says(
			"Too many tags added for queue. A queue can have at most %d tags.", maxTags)
	}
	return nil
}

// checkTagKey checks a tag key: 1..128 characters.
func checkTagKey(k string) error {
	if k == "" || len(k) > maxTagKeyLen {
		return rule.Reject(ErrInvalidTags, "tag key %q, want 1..%d characters", k, maxTagKeyLen).Says("%s",
			rule.InvalidValue(k, "TagKey", "Tag keys must be between 1 and 128 characters in length."))
	}
	return nil
}

// checkTagKeys checks the keys of an UntagQueue: at least one (AWS's answer to none, recorded in
// getmoto/moto#1686, is this message without a value), each as TagQueue checks it.
func checkTagKeys(keys []string) error {
	if len(keys) == 0 {
		return rule.Reject(ErrInvalidTags, "no tag keys").Says("Tag keys must be between 1 and 128 characters in length.")
	}
	for _, k := range keys {
		if err := checkTagKey(k); err != nil {
			return err
		}
	}
	return nil
}

// firstDifference returns the SQS name of the first setting, in the order of the names, that fields lists
// and that d and o show differently (CreateQueue of an existing queue), or "". Tags are not compared.
func (d *Definition) firstDifference(o *Definition, fields Fields) string {
	for bit, name := range fieldAttributes {
		f := Fields(1) << bit
		if fields&f != 0 && f != FieldTags && !d.showsSame(o, f) {
			return name
		}
	}
	return ""
}

// showsSame reports whether d and o show the setting f the same way.
func (d *Definition) showsSame(o *Definition, f Fields) bool {
	switch f {
	case FieldVisibilityTimeout:
		return d.VisibilityTimeout == o.VisibilityTimeout
	case FieldDelay:
		return d.Delay == o.Delay
	case FieldRetention:
		return d.Retention == o.Retention
	case FieldMaxMessageSize:
		return d.MaxMessageSize == o.MaxMessageSize
	case FieldReceiveWaitTime:
		return d.ReceiveWaitTime == o.ReceiveWaitTime
	case FieldContentBasedDeduplication:
		return d.ContentBasedDeduplication == o.ContentBasedDeduplication
	case FieldDeduplicationScope:
		return cmp.Or(d.DeduplicationScope, fifoq.DeduplicationScopeQueue) == cmp.Or(o.DeduplicationScope, fifoq.DeduplicationScopeQueue)
	case FieldThroughputLimit:
		return d.ThroughputLimit == o.ThroughputLimit
	case FieldRedrivePolicy:
		return d.RedrivePolicy.DeadLetterQueue == o.RedrivePolicy.DeadLetterQueue &&
			d.RedrivePolicy.MaxReceiveCount == o.RedrivePolicy.MaxReceiveCount
	case FieldRedriveAllowPolicy:
		a, b := d.RedriveAllowPolicy, o.RedriveAllowPolicy
		return a == nil && b == nil || a != nil && b != nil && a.Permission == b.Permission && slices.Equal(a.Sources, b.Sources)
	case FieldPolicy:
		return d.Policy == o.Policy
	case FieldKMSMasterKeyID:
		return d.KMSMasterKeyID == o.KMSMasterKeyID
	case FieldKMSDataKeyReusePeriod:
		return d.shownKeyReusePeriod() == o.shownKeyReusePeriod()
	case FieldSQSManagedSSE:
		return d.SQSManagedSSE == o.SQSManagedSSE
	}
	return true
}

// shownKeyReusePeriod is the KMS data key reuse period as SQS shows it: with a KMS key only (else 0), the
// default when none was given.
func (d *Definition) shownKeyReusePeriod() time.Duration {
	if d.KMSMasterKeyID == "" {
		return 0
	}
	return cmp.Or(d.KMSDataKeyReusePeriod, defaultKeyReusePeriod)
}

// clone returns a copy of d that shares no map or slice with it.
func (d Definition) clone() Definition {
	d.Tags = maps.Clone(d.Tags)
	d.RedriveAllowPolicy = cloneAllowPolicy(d.RedriveAllowPolicy)
	return d
}

func cloneAllowPolicy(p *fifoq.RedriveAllowPolicy) *fifoq.RedriveAllowPolicy {
	if p == nil {
		return nil
	}
	return &fifoq.RedriveAllowPolicy{Permission: p.Permission, Sources: slices.Clone(p.Sources)}
}

// withAttributes returns d with the settings its Queue has now, a: its attributes, and its redrive policy
// when it is bound, the dead-letter queue named by nameOf (the catalogue's name of a queue).
func (d Definition) withAttributes(a fifoq.Attributes, fifo bool, nameOf func(*fifoq.Queue) string) Definition {
	d.VisibilityTimeout, d.Delay, d.Retention = a.VisibilityTimeout, a.Delay, a.Retention
	d.MaxMessageSize, d.ReceiveWaitTime = a.MaxMessageSize, a.ReceiveWaitTime
	if fifo {
		d.ContentBasedDeduplication = a.ContentBasedDeduplication
		d.DeduplicationScope = cmp.Or(a.DeduplicationScope, fifoq.DeduplicationScopeQueue)
	}
	if a.DeadLetterQueue != nil {
		d.RedrivePolicy = RedrivePolicy{DeadLetterQueue: nameOf(a.DeadLetterQueue), MaxReceiveCount: a.MaxReceiveCount}
	} else if !d.RedrivePolicy.Pending {
		d.RedrivePolicy = RedrivePolicy{}
	}
	return d
}

// fifoName reports whether name is that of a FIFO queue.
func fifoName(name string) bool { return strings.HasSuffix(name, ".fifo") }

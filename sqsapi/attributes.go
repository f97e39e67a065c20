package sqsapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fifoq/fifoq"
)

// The queue attributes, in the order GetQueueAttributes returns them.
var attributeOrder = []string{
	"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed",
	"CreatedTimestamp", "DelaySeconds", "LastModifiedTimestamp", "MaximumMessageSize", "MessageRetentionPeriod",
	"QueueArn", "ReceiveMessageWaitTimeSeconds", "VisibilityTimeout", "Policy", "RedrivePolicy",
	"RedriveAllowPolicy", "KmsMasterKeyId", "KmsDataKeyReusePeriodSeconds", "SqsManagedSseEnabled",
	"FifoQueue", "ContentBasedDeduplication", "DeduplicationScope", "FifoThroughputLimit",
}

// durationOptions are the options of fifoq.New that the attributes in seconds set.
var durationOptions = map[string]func(time.Duration) fifoq.Option{
	"VisibilityTimeout":             fifoq.WithVisibilityTimeout,
	"DelaySeconds":                  fifoq.WithDelay,
	"MessageRetentionPeriod":        fifoq.WithRetention,
	"ReceiveMessageWaitTimeSeconds": fifoq.WithReceiveWaitTime,
}

// A queueView is everything GetQueueAttributes shows of a queue's settings, so a change can be tried on a
// copy before it is made.
type queueView struct {
	a            fifoq.Attributes
	throughput   string
	allowSet     bool
	extra        map[string]string
	pendingDLQ   string      // see queueState.pendingDLQ
	pendingCount int         // see queueState.pendingCount
	stats        fifoq.Stats // the counts, when GetQueueAttributes asks for one of them
}

// viewLocked returns the queue's settings; qs.mu must be held.
func (qs *queueState) viewLocked() queueView {
	return queueView{a: qs.q.Attributes(), throughput: qs.throughput, allowSet: qs.allowSet, extra: maps.Clone(qs.extra),
		pendingDLQ: qs.pendingDLQ, pendingCount: qs.pendingCount}
}

// An attrSet is a parsed, validated set of attribute changes (CreateQueue, SetQueueAttributes).
type attrSet struct {
	raw        map[string]string // as given, for error texts
	durations  map[string]time.Duration
	maxSize    int
	cbd        *bool
	scope      fifoq.DeduplicationScope
	throughput string
	redrive    *fifoq.Queue // with count; nil with redriveSet: remove the policy
	count      int
	redriveSet bool
	allow      *fifoq.RedriveAllowPolicy // nil with allowSet: back to the default
	allowSet   bool
	extra      map[string]string
}

func badAttribute(name string) *apiError {
	return newError(codeInvalidAttributeValue, "Invalid value for the parameter %s.", name)
}

func unknownAttribute(name string) *apiError {
	return newError(codeInvalidAttributeName, "Unknown Attribute %s.", name)
}

// checkCreateType checks the FifoQueue attribute of CreateQueue against the name (spec 2.1).
func checkCreateType(name string, fifo bool, attrs map[string]string) *apiError {
	v, has := attrs["FifoQueue"]
	switch {
	case !has && fifo:
		return coreError(fifoq.ErrInvalidQueueName) // AWS's answer: the name is not a standard queue's
	case !has:
		return nil
	case !fifo && strings.EqualFold(v, "true"):
		return newError(codeInvalidParameterValue, "The name of a FIFO queue can only include alphanumeric characters, "+
			"hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length.")
	case !fifo:
		return unknownAttribute("FifoQueue")
	case strings.EqualFold(v, "false"):
		return coreError(fifoq.ErrInvalidQueueName)
	case !strings.EqualFold(v, "true"):
		return badAttribute("FifoQueue")
	}
	return nil
}

// parseAttributes validates attribute changes for a queue, FIFO or not. find looks up a queue by name (the
// caller may hold the registry lock). Nothing is changed.
func (s *Server) parseAttributes(fifo bool, attrs map[string]string, find func(string) *queueState) (*attrSet, *apiError) {
	set := &attrSet{raw: attrs}
	for _, name := range slices.Sorted(maps.Keys(attrs)) {
		v := attrs[name]
		switch name {
		case "VisibilityTimeout", "DelaySeconds", "MessageRetentionPeriod", "ReceiveMessageWaitTimeSeconds":
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, badAttribute(name)
			}
			d := secondsOf(n)
			if err := fifoq.CheckOptions(fifo, durationOptions[name](d)); err != nil {
				return nil, coreError(err) // fifoq's range, checked in the order of the names, as SQS does
			}
			if set.durations == nil {
				set.durations = make(map[string]time.Duration, 4)
			}
			set.durations[name] = d
		case "MaximumMessageSize":
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, badAttribute(name)
			}
			if err := fifoq.CheckOptions(fifo, fifoq.WithMaxMessageSize(n)); err != nil {
				return nil, coreError(err)
			}
			set.maxSize = n
		case "FifoQueue":
			if !fifo {
				return nil, unknownAttribute(name)
			}
			if !strings.EqualFold(v, "true") {
				return nil, newError(codeInvalidAttributeValue, "Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported.")
			}
		case "ContentBasedDeduplication":
			if !fifo {
				return nil, unknownAttribute(name)
			}
			b, ok := parseBool(v)
			if !ok {
				return nil, badAttribute(name)
			}
			set.cbd = &b
		case "DeduplicationScope":
			if !fifo {
				return nil, newError(codeInvalidAttributeName, "You can specify the DeduplicationScope only when FifoQueue is set to true.")
			}
			scope, ok := parseScope(v)
			if !ok {
				return nil, badAttribute(name)
			}
			set.scope = scope
		case "FifoThroughputLimit":
			if !fifo {
				return nil, newError(codeInvalidAttributeName, "You can specify the FifoThroughputLimit only when FifoQueue is set to true.")
			}
			if v != "perQueue" && v != "perMessageGroupId" {
				return nil, badAttribute(name)
			}
			set.throughput = v
		case "RedrivePolicy":
			set.redriveSet = true
			if v == "" {
				continue
			}
			dlqName, count, err := s.parseRedrivePolicy(v)
			if err != nil {
				return nil, err
			}
			dlq := find(dlqName)
			if dlq == nil {
				return nil, invalidValue(v, "RedrivePolicy", "Dead-letter target does not exist.")
			}
			set.redrive, set.count = dlq.q, count
		case "RedriveAllowPolicy":
			set.allowSet = true
			if v == "" {
				continue
			}
			p, err := s.parseRedriveAllowPolicy(v)
			if err != nil {
				return nil, err
			}
			set.allow = p
		case "KmsDataKeyReusePeriodSeconds":
			if _, ok := parseInt(v, 60, 86400); !ok {
				return nil, badAttribute(name)
			}
			set.store(name, v)
		case "SqsManagedSseEnabled":
			if _, ok := parseBool(v); !ok {
				return nil, badAttribute(name)
			}
			set.store(name, strings.ToLower(v))
		case "Policy", "KmsMasterKeyId":
			set.store(name, v)
		default:
			return nil, unknownAttribute(name)
		}
	}
	if key := attrs["KmsMasterKeyId"]; key != "" && strings.EqualFold(attrs["SqsManagedSseEnabled"], "true") {
		return nil, errSSEConflict
	}
	return set, nil
}

// errSSEConflict rejects a change that turns on both kinds of server-side encryption at once.
var errSSEConflict = &apiError{codeInvalidAttributeName, "You can use one type of server-side encryption (SSE) at " +
	"one time. You can either enable KMS SSE or SQS SSE.", 400, nil}

func (set *attrSet) store(name, v string) {
	if set.extra == nil {
		set.extra = make(map[string]string, 2)
	}
	set.extra[name] = v
}

// applyTo makes the changes on v, and checks the rules between attributes.
func (set *attrSet) applyTo(v *queueView) *apiError {
	for name, d := range set.durations {
		switch name {
		case "VisibilityTimeout":
			v.a.VisibilityTimeout = d
		case "DelaySeconds":
			v.a.Delay = d
		case "MessageRetentionPeriod":
			v.a.Retention = d
		case "ReceiveMessageWaitTimeSeconds":
			v.a.ReceiveWaitTime = d
		}
	}
	if set.maxSize != 0 {
		v.a.MaxMessageSize = set.maxSize
	}
	if set.cbd != nil {
		v.a.ContentBasedDeduplication = *set.cbd
	}
	if set.scope != 0 {
		v.a.DeduplicationScope = set.scope
	}
	if set.throughput != "" {
		v.throughput = set.throughput
	}
	if set.redriveSet {
		v.a.DeadLetterQueue, v.a.MaxReceiveCount = set.redrive, set.count
		v.pendingDLQ, v.pendingCount = "", 0
	}
	if set.allowSet {
		v.allowSet = set.allow != nil
		v.a.RedriveAllowPolicy = fifoq.RedriveAllowPolicy{}
		if set.allow != nil {
			v.a.RedriveAllowPolicy = *set.allow
		}
	}
	set.applyExtra(v)
	if v.throughput == "perMessageGroupId" && v.a.DeduplicationScope != fifoq.DeduplicationScopeMessageGroup {
		return newError(codeInvalidAttributeValue, "Invalid value for the parameter FifoThroughputLimit. Reason: "+
			"perMessageGroupId is allowed only when DeduplicationScope is messageGroup.")
	}
	return nil
}

// applyExtra makes the changes of the attributes the server keeps beside the queue: the Policy and the
// server-side encryption, which is one of two kinds. A queue uses SQS-managed keys (SqsManagedSseEnabled
// true, the default of a new queue) unless it has a KMS key (KmsMasterKeyId) or SqsManagedSseEnabled is
// false. Setting a KMS key turns the SQS-managed encryption off; SqsManagedSseEnabled=true removes the KMS
// key and its reuse period; an empty KmsMasterKeyId removes both too. A change that sets both kinds is
// rejected by parseAttributes.
func (set *attrSet) applyExtra(v *queueView) {
	if len(set.extra) == 0 {
		return
	}
	if v.extra == nil {
		v.extra = make(map[string]string, len(set.extra))
	}
	if p, ok := set.extra["Policy"]; ok {
		if p == "" {
			delete(v.extra, "Policy")
		} else {
			v.extra["Policy"] = p
		}
	}
	key, keySet := set.extra["KmsMasterKeyId"]
	sse, sseSet := set.extra["SqsManagedSseEnabled"]
	if keySet || sse == "true" {
		delete(v.extra, "KmsMasterKeyId")
		delete(v.extra, "KmsDataKeyReusePeriodSeconds")
	}
	if key != "" {
		v.extra["KmsMasterKeyId"] = key
		if !sseSet {
			v.extra["SqsManagedSseEnabled"] = "false"
		}
	}
	if p, ok := set.extra["KmsDataKeyReusePeriodSeconds"]; ok {
		v.extra["KmsDataKeyReusePeriodSeconds"] = p
	}
	if sseSet {
		v.extra["SqsManagedSseEnabled"] = sse
	}
}

// options returns the options of fifoq.New that make a queue with the changes (CreateQueue). The rules
// between attributes are checked on v, the view of a new queue, which the changes are made on.
func (set *attrSet) options(v *queueView) ([]fifoq.Option, *apiError) {
	if err := set.applyTo(v); err != nil {
		return nil, err
	}
	var opts []fifoq.Option
	for name, d := range set.durations {
		opts = append(opts, durationOptions[name](d))
	}
	if set.maxSize != 0 {
		opts = append(opts, fifoq.WithMaxMessageSize(set.maxSize))
	}
	if set.cbd != nil && *set.cbd {
		opts = append(opts, fifoq.WithContentBasedDeduplication())
	}
	if set.scope != 0 {
		opts = append(opts, fifoq.WithDeduplicationScope(set.scope))
	}
	if set.redrive != nil {
		opts = append(opts, fifoq.WithDeadLetterQueue(set.redrive, set.count))
	}
	if set.allow != nil {
		opts = append(opts, fifoq.WithRedriveAllowPolicy(*set.allow))
	}
	return opts, nil
}

// apply makes the changes on the queue, or none of them, and records its new definition in j.
func (set *attrSet) apply(s *Server, j *journal, qs *queueState, now time.Time) *apiError {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	v := qs.viewLocked()
	if err := set.applyTo(&v); err != nil {
		return err
	}
	if err := s.setAttributes(j, qs.q, v.a); err != nil {
		return set.coreError(err, qs.arn, qs.q.FIFO())
	}
	qs.throughput, qs.allowSet, qs.extra = v.throughput, v.allowSet, v.extra
	if set.redriveSet { // only then is the registry lock held, as a change of pendingDLQ needs
		qs.pendingDLQ, qs.pendingCount = v.pendingDLQ, v.pendingCount
	}
	qs.modified = now
	s.putQueueLocked(j, qs)
	return nil
}

// coreError translates a rejection of Queue.SetAttributes or fifoq.New, for the queue arn, FIFO or not: a
// redrive policy's, whose message quotes the policy as given and names queues by their ARNs; the others as
// any fifoq error.
func (set *attrSet) coreError(err error, arn string, fifo bool) *apiError {
	switch {
	case errors.Is(err, fifoq.ErrRedriveNotAllowed):
		return invalidValue(set.raw["RedrivePolicy"], "RedrivePolicy", "Queue "+arn+
			" is not allowed to use the dead-letter target by its RedriveAllowPolicy.")
	case errors.Is(err, fifoq.ErrInvalidRedrivePolicy):
		if d := set.redrive; d != nil && d.FIFO() != fifo {
			return invalidValue(set.raw["RedrivePolicy"], "RedrivePolicy", "Dead-letter queue must be same type of queue as the source.")
		}
		return invalidValue(set.raw["RedrivePolicy"], "RedrivePolicy", fifoq.ErrorMessage(err))
	case errors.Is(err, fifoq.ErrInvalidRedriveAllowPolicy):
		return newError(codeInvalidAttributeValue, "Invalid value for the parameter RedriveAllowPolicy. Reason: %s", fifoq.ErrorMessage(err))
	}
	return coreError(err)
}

// parseRedrivePolicy reads {"deadLetterTargetArn": arn, "maxReceiveCount": n}, n a number or a numeric string.
func (s *Server) parseRedrivePolicy(v string) (string, int, *apiError) {
	var p struct {
		Target *string          `json:"deadLetterTargetArn"`
		Count  *json.RawMessage `json:"maxReceiveCount"`
	}
	if err := json.Unmarshal([]byte(v), &p); err != nil {
		return "", 0, invalidValue(v, "RedrivePolicy", "Redrive policy is not a valid JSON map.")
	}
	if p.Target == nil || *p.Target == "" {
		return "", 0, invalidValue(v, "RedrivePolicy", "Redrive policy does not contain mandatory attribute: deadLetterTargetArn.")
	}
	if p.Count == nil || string(*p.Count) == "null" {
		return "", 0, invalidValue(v, "RedrivePolicy", "Redrive policy does not contain mandatory attribute: maxReceiveCount.")
	}
	raw := bytes.TrimSpace(*p.Count)
	if len(raw) > 0 && raw[0] == '"' {
		var str string
		if json.Unmarshal(raw, &str) == nil {
			raw = []byte(str)
		}
	}
	count, ok := parseInt(string(raw), 1, 1000)
	if !ok {
		return "", 0, invalidValue(v, "RedrivePolicy", "Invalid value for maxReceiveCount: "+string(raw)+
			", valid values are from 1 to 1000 both inclusive.")
	}
	name, ok := s.nameOfARN(*p.Target)
	if !ok {
		return "", 0, invalidValue(v, "RedrivePolicy", "Invalid value for deadLetterTargetArn.") // AWS, before any lookup
	}
	return name, count, nil
}

// parseRedriveAllowPolicy reads {"redrivePermission": "allowAll"|"denyAll"|"byQueue", "sourceQueueArns": [...]}.
func (s *Server) parseRedriveAllowPolicy(v string) (*fifoq.RedriveAllowPolicy, *apiError) {
	var p struct {
		Permission string   `json:"redrivePermission"`
		Sources    []string `json:"sourceQueueArns"`
	}
	bad := func(reason string) *apiError {
		return newError(codeInvalidAttributeValue, "Invalid value for the parameter RedriveAllowPolicy. Reason: %s", reason)
	}
	if err := json.Unmarshal([]byte(v), &p); err != nil {
		return nil, bad("Redrive allow policy is not a valid JSON map.")
	}
	permission, ok := parsePermission(p.Permission)
	if !ok {
		return nil, bad("Invalid value for redrivePermission.")
	}
	out := &fifoq.RedriveAllowPolicy{Permission: permission}
	switch {
	case out.Permission != fifoq.RedriveByQueue && len(p.Sources) > 0:
		return nil, bad("sourceQueueArns is allowed only when redrivePermission is byQueue.")
	case out.Permission == fifoq.RedriveByQueue && (len(p.Sources) == 0 || len(p.Sources) > 10):
		return nil, bad("byQueue takes 1 to 10 sourceQueueArns.")
	}
	for _, arn := range p.Sources {
		name, ok := s.nameOfARN(arn)
		if !ok {
			return nil, bad("Invalid source queue ARN " + arn + ".")
		}
		out.Sources = append(out.Sources, name)
	}
	return out, nil
}

// value returns the attribute's value, and false when the queue has no such attribute.
func (s *Server) value(qs *queueState, v *queueView, name string) (string, bool) {
	fifo := qs.q.FIFO()
	a := &v.a
	seconds := func(d time.Duration) string { return itoa(int64(d / time.Second)) }
	switch name {
	case "ApproximateNumberOfMessages":
		return strconv.Itoa(v.stats.Visible), true
	case "ApproximateNumberOfMessagesNotVisible":
		return strconv.Itoa(v.stats.InFlight), true
	case "ApproximateNumberOfMessagesDelayed":
		return strconv.Itoa(v.stats.Delayed), true
	case "CreatedTimestamp":
		return itoa(qs.created.Unix()), true
	case "LastModifiedTimestamp":
		return itoa(qs.modified.Unix()), true
	case "QueueArn":
		return qs.arn, true
	case "VisibilityTimeout":
		return seconds(a.VisibilityTimeout), true
	case "DelaySeconds":
		return seconds(a.Delay), true
	case "MessageRetentionPeriod":
		return seconds(a.Retention), true
	case "ReceiveMessageWaitTimeSeconds":
		return seconds(a.ReceiveWaitTime), true
	case "MaximumMessageSize":
		return strconv.Itoa(a.MaxMessageSize), true
	case "RedrivePolicy":
		arn, count := v.pendingDLQ, v.pendingCount
		if a.DeadLetterQueue != nil {
			arn, count = s.arnOf(a.DeadLetterQueue.Name()), a.MaxReceiveCount
		}
		if arn == "" {
			return "", false
		}
		b := append([]byte(`{"deadLetterTargetArn":`), appendJSONString(nil, arn)...)
		b = append(b, `,"maxReceiveCount":`...)
		b = strconv.AppendInt(b, int64(count), 10)
		return string(append(b, '}')), true
	case "RedriveAllowPolicy":
		if !v.allowSet {
			return "", false
		}
		p := a.RedriveAllowPolicy
		b := append([]byte(`{"redrivePermission":`), appendJSONString(nil, p.Permission.String())...)
		if p.Permission == fifoq.RedriveByQueue {
			b = append(b, `,"sourceQueueArns":[`...)
			for i, src := range p.Sources {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendJSONString(b, s.arnOf(src))
			}
			b = append(b, ']')
		}
		return string(append(b, '}')), true
	case "SqsManagedSseEnabled":
		if x, ok := v.extra[name]; ok {
			return x, true
		}
		_, kms := v.extra["KmsMasterKeyId"]
		return strconv.FormatBool(!kms), true // SQS-managed encryption unless a KMS key was given
	case "KmsDataKeyReusePeriodSeconds":
		if _, kms := v.extra["KmsMasterKeyId"]; !kms {
			return "", false // shown only while the queue has a KMS key
		}
		if x, ok := v.extra[name]; ok {
			return x, true
		}
		return "300", true // SQS's default: 5 minutes
	case "Policy", "KmsMasterKeyId":
		x, ok := v.extra[name]
		return x, ok
	case "FifoQueue":
		return "true", fifo
	case "ContentBasedDeduplication":
		return strconv.FormatBool(a.ContentBasedDeduplication), fifo
	case "DeduplicationScope":
		scope := a.DeduplicationScope
		if scope == 0 {
			scope = fifoq.DeduplicationScopeQueue
		}
		return scope.String(), fifo
	case "FifoThroughputLimit":
		return v.throughput, fifo
	}
	return "", false
}

// sameAttributes checks that creating an existing queue with attrs would change nothing (spec 7.3.2).
// The registry lock is held.
func (s *Server) sameAttributes(qs *queueState, attrs map[string]string) *apiError {
	if len(attrs) == 0 {
		return nil
	}
	set, err := s.parseAttributes(qs.q.FIFO(), attrs, s.finderLocked(qs.ns))
	if err != nil {
		return err
	}
	qs.mu.Lock()
	defer qs.mu.Unlock()
	cur := qs.viewLocked()
	want := qs.viewLocked()
	if err := set.applyTo(&want); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(attrs)) {
		a, okA := s.value(qs, &cur, name)
		b, okB := s.value(qs, &want, name)
		if a != b || okA != okB {
			return newError(codeQueueAlreadyExists, "A queue already exists with the same name and a different value for attribute %s", name)
		}
	}
	return nil
}

// parseInt reads a decimal integer in lo..hi.
func parseInt(v string, lo, hi int) (int, bool) {
	n, err := strconv.Atoi(v)
	return n, err == nil && lo <= n && n <= hi
}

// parseBool reads "true" or "false", in any case.
func parseBool(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

package sqsapi

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/internal/rule"
)

// The queue attributes: decoded into a catalog.Definition and the catalog.Fields they set, and shown from one.
// The rules of the attributes are the catalogue's (catalog.Definition.Check, catalog.Catalog): this file checks
// what the wire spells (numbers, booleans, JSON documents, ARNs), calling the catalogue's checks as it reads
// each attribute, so that the first bad one is refused in the order SQS refuses it.

// The queue attributes, in the order GetQueueAttributes returns them.
var attributeOrder = []string{
	"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed",
	"CreatedTimestamp", "DelaySeconds", "LastModifiedTimestamp", "MaximumMessageSize", "MessageRetentionPeriod",
	"QueueArn", "ReceiveMessageWaitTimeSeconds", "VisibilityTimeout", "Policy", "RedrivePolicy",
	"RedriveAllowPolicy", "KmsMasterKeyId", "KmsDataKeyReusePeriodSeconds", "SqsManagedSseEnabled",
	"FifoQueue", "ContentBasedDeduplication", "DeduplicationScope", "FifoThroughputLimit",
}

// durationFields are the settings that the attributes in seconds set.
var durationFields = map[string]catalog.Fields{
	"VisibilityTimeout":             catalog.FieldVisibilityTimeout,
	"DelaySeconds":                  catalog.FieldDelay,
	"MessageRetentionPeriod":        catalog.FieldRetention,
	"ReceiveMessageWaitTimeSeconds": catalog.FieldReceiveWaitTime,
}

// An attrSet is a parsed, validated set of attribute changes (CreateQueue, SetQueueAttributes): the
// settings they give, for the catalogue.
type attrSet struct {
	raw     map[string]string  // as given, for error texts
	def     catalog.Definition // the settings given
	fields  catalog.Fields     // which
	sources []string           // the ARNs of the RedriveAllowPolicy's sources, for checkSources
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

// parseAttributes validates attribute changes for a queue of ns, FIFO or not. A RedrivePolicy must name a
// queue of ns that the server holds. Nothing is changed.
func (s *Server) parseAttributes(fifo bool, attrs map[string]string, ns catalog.Namespace) (*attrSet, *apiError) {
	set := &attrSet{raw: attrs}
	d := &set.def
	for _, name := range slices.Sorted(maps.Keys(attrs)) {
		v := attrs[name]
		switch name {
		case "VisibilityTimeout", "DelaySeconds", "MessageRetentionPeriod", "ReceiveMessageWaitTimeSeconds":
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, badAttribute(name)
			}
			f := durationFields[name]
			switch dur := secondsOf(n); f {
			case catalog.FieldVisibilityTimeout:
				d.VisibilityTimeout = dur
			case catalog.FieldDelay:
				d.Delay = dur
			case catalog.FieldRetention:
				d.Retention = dur
			case catalog.FieldReceiveWaitTime:
				d.ReceiveWaitTime = dur
			}
			if err := set.add(fifo, f); err != nil {
				return nil, err // fifoq's range, checked in the order of the names, as SQS does
			}
		case "MaximumMessageSize":
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, badAttribute(name)
			}
			d.MaxMessageSize = n
			if err := set.add(fifo, catalog.FieldMaxMessageSize); err != nil {
				return nil, err
			}
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
			d.ContentBasedDeduplication = b
			set.fields |= catalog.FieldContentBasedDeduplication
		case "DeduplicationScope":
			if !fifo {
				return nil, newError(codeInvalidAttributeName, "You can specify the DeduplicationScope only when FifoQueue is set to true.")
			}
			scope, ok := parseScope(v)
			if !ok {
				return nil, badAttribute(name)
			}
			d.DeduplicationScope = scope
			set.fields |= catalog.FieldDeduplicationScope
		case "FifoThroughputLimit":
			if !fifo {
				return nil, newError(codeInvalidAttributeName, "You can specify the FifoThroughputLimit only when FifoQueue is set to true.")
			}
			switch v {
			case catalog.ThroughputPerQueue.String():
				d.ThroughputLimit = catalog.ThroughputPerQueue
			case catalog.ThroughputPerMessageGroupID.String():
				d.ThroughputLimit = catalog.ThroughputPerMessageGroupID
			default:
				return nil, badAttribute(name)
			}
			set.fields |= catalog.FieldThroughputLimit
		case "RedrivePolicy":
			set.fields |= catalog.FieldRedrivePolicy
			if v == "" {
				continue
			}
			dlqNS, dlq, count, err := parseRedrivePolicy(v)
			if err != nil {
				return nil, err
			}
			if _, ok := s.cat.Queue(dlqNS, dlq); !ok || dlqNS != ns { // a dead-letter queue is of its sources' namespace
				return nil, invalidValue(v, "RedrivePolicy", "Dead-letter target does not exist.")
			}
			d.RedrivePolicy = catalog.RedrivePolicy{DeadLetterQueue: dlq, MaxReceiveCount: count}
		case "RedriveAllowPolicy":
			set.fields |= catalog.FieldRedriveAllowPolicy
			if v == "" {
				continue
			}
			p, sources, err := parseRedriveAllowPolicy(v)
			if err != nil {
				return nil, err
			}
			d.RedriveAllowPolicy, set.sources = p, sources
		case "KmsDataKeyReusePeriodSeconds":
			n, ok := parseInt(v, math.MinInt32, math.MaxInt32)
			if !ok {
				return nil, badAttribute(name)
			}
			d.KMSDataKeyReusePeriod = time.Duration(n) * time.Second
			if err := set.add(fifo, catalog.FieldKMSDataKeyReusePeriod); err != nil {
				return nil, err // the catalogue's range, 1 minute to 24 hours
			}
		case "SqsManagedSseEnabled":
			b, ok := parseBool(v)
			if !ok {
				return nil, badAttribute(name)
			}
			d.SQSManagedSSE = b
			set.fields |= catalog.FieldSQSManagedSSE
		case "Policy":
			d.Policy = v
			set.fields |= catalog.FieldPolicy
		case "KmsMasterKeyId":
			d.KMSMasterKeyID = v
			set.fields |= catalog.FieldKMSMasterKeyID
		default:
			return nil, unknownAttribute(name)
		}
	}
	if err := d.Check(fifo, set.fields&(catalog.FieldKMSMasterKeyID|catalog.FieldSQSManagedSSE)); err != nil {
		return nil, coreError(err) // both kinds of server-side encryption at once
	}
	return set, nil
}

// add adds the setting f, decoded into set.def, and checks it.
func (set *attrSet) add(fifo bool, f catalog.Fields) *apiError {
	set.fields |= f
	if err := set.def.Check(fifo, f); err != nil {
		return coreError(err)
	}
	return nil
}

// checkSources refuses a RedriveAllowPolicy of set whose sourceQueueArns name queues outside ns: the
// sources of a dead-letter queue are in its account and region.
func (s *Server) checkSources(ns catalog.Namespace, set *attrSet) *apiError {
	for _, a := range set.sources {
		if srcNS, name, _ := catalog.ParseQueueARN(a); srcNS != ns {
			return newError(codeInvalidAttributeValue, "Invalid value for the parameter RedriveAllowPolicy. Reason: Invalid source queue ARN %s.", srcNS.QueueARN(name))
		}
	}
	return nil
}

// parseScope reads a DeduplicationScope attribute.
func parseScope(v string) (fifoq.DeduplicationScope, bool) {
	switch v {
	case "queue":
		return fifoq.DeduplicationScopeQueue, true
	case "messageGroup":
		return fifoq.DeduplicationScopeMessageGroup, true
	}
	return 0, false
}

// parsePermission reads the redrivePermission of a RedriveAllowPolicy.
func parsePermission(v string) (fifoq.RedrivePermission, bool) {
	switch v {
	case "allowAll":
		return fifoq.RedriveAllowAll, true
	case "denyAll":
		return fifoq.RedriveDenyAll, true
	case "byQueue":
		return fifoq.RedriveByQueue, true
	}
	return 0, false
}

// coreError translates a rejection by the catalogue of the changes of set, for the queue arn, FIFO or not: a
// redrive policy's, whose message quotes the policy as given and names queues by their ARNs; the others as
// any fifoq error.
func (set *attrSet) coreError(err error, arn string, fifo bool) *apiError {
	switch {
	case errors.Is(err, fifoq.ErrRedriveNotAllowed):
		return invalidValue(set.raw["RedrivePolicy"], "RedrivePolicy", "Queue "+arn+
			" is not allowed to use the dead-letter target by its RedriveAllowPolicy.")
	case errors.Is(err, fifoq.ErrInvalidRedrivePolicy):
		if dlq := set.def.RedrivePolicy.DeadLetterQueue; dlq != "" && strings.HasSuffix(dlq, ".fifo") != fifo {
			return invalidValue(set.raw["RedrivePolicy"], "RedrivePolicy", "Dead-letter queue must be same type of queue as the source.")
		}
		return invalidValue(set.raw["RedrivePolicy"], "RedrivePolicy", fifoq.ErrorMessage(err))
	case errors.Is(err, fifoq.ErrInvalidRedriveAllowPolicy):
		return newError(codeInvalidAttributeValue, "Invalid value for the parameter RedriveAllowPolicy. Reason: %s", fifoq.ErrorMessage(err))
	}
	return coreError(err)
}

// parseRedrivePolicy reads {"deadLetterTargetArn": arn, "maxReceiveCount": n}, n a number or a numeric
// string: the namespace and name of the dead-letter queue, and n.
func parseRedrivePolicy(v string) (catalog.Namespace, string, int, *apiError) {
	var p struct {
		Target *string          `json:"deadLetterTargetArn"`
		Count  *json.RawMessage `json:"maxReceiveCount"`
	}
	if err := json.Unmarshal([]byte(v), &p); err != nil {
		return catalog.Namespace{}, "", 0, invalidValue(v, "RedrivePolicy", "Redrive policy is not a valid JSON map.")
	}
	if p.Target == nil || *p.Target == "" {
		return catalog.Namespace{}, "", 0, invalidValue(v, "RedrivePolicy", "Redrive policy does not contain mandatory attribute: deadLetterTargetArn.")
	}
	if p.Count == nil || string(*p.Count) == "null" {
		return catalog.Namespace{}, "", 0, invalidValue(v, "RedrivePolicy", "Redrive policy does not contain mandatory attribute: maxReceiveCount.")
	}
	raw := bytes.TrimSpace(*p.Count)
	if len(raw) > 0 && raw[0] == '"' {
		var str string
		if json.Unmarshal(raw, &str) == nil {
			raw = []byte(str)
		}
	}
	count, err := strconv.Atoi(string(raw))
	if err != nil {
		return catalog.Namespace{}, "", 0, invalidValue(v, "RedrivePolicy", fifoq.ErrorMessage(rule.BadMaxReceiveCount(string(raw))))
	}
	if err := rule.CheckMaxReceiveCount(count); err != nil {
		return catalog.Namespace{}, "", 0, invalidValue(v, "RedrivePolicy", fifoq.ErrorMessage(err))
	}
	ns, name, ok := catalog.ParseQueueARN(*p.Target)
	if !ok {
		return catalog.Namespace{}, "", 0, invalidValue(v, "RedrivePolicy", "Invalid value for deadLetterTargetArn.") // AWS, before any lookup
	}
	return ns, name, count, nil
}

// parseRedriveAllowPolicy reads {"redrivePermission": "allowAll"|"denyAll"|"byQueue", "sourceQueueArns":
// [...]}: the policy, its sources named in their namespace, which checkSources checks, with their ARNs.
func parseRedriveAllowPolicy(v string) (*fifoq.RedriveAllowPolicy, []string, *apiError) {
	var p struct {
		Permission string   `json:"redrivePermission"`
		Sources    []string `json:"sourceQueueArns"`
	}
	bad := func(reason string) *apiError {
		return newError(codeInvalidAttributeValue, "Invalid value for the parameter RedriveAllowPolicy. Reason: %s", reason)
	}
	if err := json.Unmarshal([]byte(v), &p); err != nil {
		return nil, nil, bad("Redrive allow policy is not a valid JSON map.")
	}
	permission, ok := parsePermission(p.Permission)
	if !ok {
		return nil, nil, bad("Invalid value for redrivePermission.")
	}
	out := &fifoq.RedriveAllowPolicy{Permission: permission}
	if err := rule.CheckRedriveSources(permission == fifoq.RedriveByQueue, len(p.Sources)); err != nil {
		return nil, nil, coreError(err)
	}
	for _, a := range p.Sources {
		_, name, ok := catalog.ParseQueueARN(a)
		if !ok {
			return nil, nil, bad("Invalid source queue ARN " + a + ".")
		}
		out.Sources = append(out.Sources, name)
	}
	return out, p.Sources, nil
}

// value returns the attribute name of the queue q, whose definition is d and counts stats, and false when
// the queue has no such attribute.
func value(q catalog.Queue, d *catalog.Definition, stats fifoq.Stats, name string) (string, bool) {
	fifo := q.FIFO()
	seconds := func(d time.Duration) string { return itoa(int64(d / time.Second)) }
	switch name {
	case "ApproximateNumberOfMessages":
		return strconv.Itoa(stats.Visible), true
	case "ApproximateNumberOfMessagesNotVisible":
		return strconv.Itoa(stats.InFlight), true
	case "ApproximateNumberOfMessagesDelayed":
		return strconv.Itoa(stats.Delayed), true
	case "CreatedTimestamp":
		return itoa(d.Created.Unix()), true
	case "LastModifiedTimestamp":
		return itoa(d.Modified.Unix()), true
	case "QueueArn":
		return q.ARN(), true
	case "VisibilityTimeout":
		return seconds(d.VisibilityTimeout), true
	case "DelaySeconds":
		return seconds(d.Delay), true
	case "MessageRetentionPeriod":
		return seconds(d.Retention), true
	case "ReceiveMessageWaitTimeSeconds":
		return seconds(d.ReceiveWaitTime), true
	case "MaximumMessageSize":
		return strconv.Itoa(d.MaxMessageSize), true
	case "RedrivePolicy":
		p := d.RedrivePolicy
		if p.DeadLetterQueue == "" {
			return "", false
		}
		b := append([]byte(`{"deadLetterTargetArn":`), appendJSONString(nil, q.Namespace().QueueARN(p.DeadLetterQueue))...)
		b = append(b, `,"maxReceiveCount":`...)
		b = strconv.AppendInt(b, int64(p.MaxReceiveCount), 10)
		return string(append(b, '}')), true
	case "RedriveAllowPolicy":
		p := d.RedriveAllowPolicy
		if p == nil {
			return "", false
		}
		b := append([]byte(`{"redrivePermission":`), appendJSONString(nil, p.Permission.String())...)
		if p.Permission == fifoq.RedriveByQueue {
			b = append(b, `,"sourceQueueArns":[`...)
			for i, src := range p.Sources {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendJSONString(b, q.Namespace().QueueARN(src))
			}
			b = append(b, ']')
		}
		return string(append(b, '}')), true
	case "SqsManagedSseEnabled":
		return strconv.FormatBool(d.SQSManagedSSE), true
	case "KmsDataKeyReusePeriodSeconds":
		if d.KMSMasterKeyID == "" {
			return "", false // shown only while the queue has a KMS key
		}
		return seconds(cmp.Or(d.KMSDataKeyReusePeriod, 5*time.Minute)), true // SQS's default: 5 minutes
	case "Policy":
		return d.Policy, d.Policy != ""
	case "KmsMasterKeyId":
		return d.KMSMasterKeyID, d.KMSMasterKeyID != ""
	case "FifoQueue":
		return "true", fifo
	case "ContentBasedDeduplication":
		return strconv.FormatBool(d.ContentBasedDeduplication), fifo
	case "DeduplicationScope":
		return cmp.Or(d.DeduplicationScope, fifoq.DeduplicationScopeQueue).String(), fifo
	case "FifoThroughputLimit":
		return d.ThroughputLimit.String(), fifo
	}
	return "", false
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

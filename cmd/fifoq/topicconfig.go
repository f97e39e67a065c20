package main

// The topics of "fifoq serve --config": SNS topics and their subscriptions to the server's queues, declared
// as the queues are. This file reads and checks them; topicdeclare.go creates them at each start.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/topic"
)

// topicJSON is a topic as the config file gives it: its name, its attributes by SNS's names (a name ending in
// ".fifo" is a FIFO topic), and its subscriptions.
type topicJSON struct {
	Name          string                     `json:"name"`
	Attributes    map[string]json.RawMessage `json:"attributes"`
	Subscriptions []subscriptionJSON         `json:"subscriptions"`
}

// subscriptionJSON is a subscription of a topic to a queue (SNS's sqs protocol) as the config file gives it:
// the fields of CloudFormation's AWS::SNS::Subscription in camel case, with the queue by name or ARN. A field
// not given is nil, so that a start on a store keeps what the subscription has.
type subscriptionJSON struct {
	Queue              string          `json:"queue"`
	FilterPolicy       json.RawMessage `json:"filterPolicy"`      // an object, or a string that holds one
	FilterPolicyScope  *string         `json:"filterPolicyScope"` // MessageAttributes or MessageBody
	RawMessageDelivery *bool           `json:"rawMessageDelivery"`
	RedrivePolicy      json.RawMessage `json:"redrivePolicy"` // {"deadLetterTargetArn": ARN or name}, or a string that holds it
}

// topicSpec is a topic of the config file, checked as far as it can be without the server.
type topicSpec struct {
	Name string
	// Attributes holds the settings declared; declared says which ("ContentBasedDeduplication",
	// "SignatureVersion"), the others being kept as they are on a topic the store holds.
	Attributes    topic.Attributes
	declared      map[string]bool
	Subscriptions []subscriptionSpec
	// origin names the topic in its errors: "config FILE:LINE:COL: topic NAME".
	origin string
}

// subscriptionSpec is a subscription of the config file. Its queues are as the file names them (a name in
// the server's default account and region, or an ARN), resolved at start.
type subscriptionSpec struct {
	Queue              string
	FilterPolicy       *string
	FilterPolicyScope  *topic.FilterPolicyScope
	RawMessageDelivery *bool
	// DeadLetterQueue is the redrive policy's deadLetterTargetArn (a name or an ARN); "" with redrive
	// given says the subscription has none.
	DeadLetterQueue string
	redrive         bool // a redrivePolicy was given
	// origin names the subscription in its errors: "config FILE:LINE:COL: topic T: subscription N (queue Q)".
	origin string
}

// topicAttributes are the topic attributes the config file takes: those fifoq acts on. SNS's others
// (DisplayName, Policy, DeliveryPolicy, ...) are stored but not acted on, and set with SetTopicAttributes.
var topicAttributes = []string{"FifoTopic", "ContentBasedDeduplication", "SignatureVersion"}

// topicSpecs checks the topics of the config file at path, whose content is data, and returns them. The
// first problem is returned, naming the file, the line and the column of the topic or subscription.
func topicSpecs(path string, data []byte, ts []topicJSON) ([]topicSpec, error) {
	if len(ts) == 0 {
		return nil, nil
	}
	offsets := listOffsets(data, "topics")
	out := make([]topicSpec, 0, len(ts))
	seen := make(map[string]string) // the place of each name
	for i, tj := range ts {
		at := path
		if i < len(offsets) {
			at = where(path, data, offsets[i])
		}
		if tj.Name == "" {
			return nil, fmt.Errorf("config %s: topic %d has no name", at, i)
		}
		s := topicSpec{Name: tj.Name, origin: "config " + at + ": topic " + tj.Name}
		if other, dup := seen[tj.Name]; dup {
			return nil, fmt.Errorf("%s: declared twice (first at %s)", s.origin, other)
		}
		seen[tj.Name] = at
		if err := s.setAttributes(tj.Attributes); err != nil {
			return nil, fmt.Errorf("%s: %w", s.origin, err)
		}
		var subOffsets []int64
		if i < len(offsets) {
			subOffsets = memberListOffsets(data, offsets[i], "subscriptions")
		}
		queues := make(map[string]string) // the place of each queue's subscription, by the queue as given
		for j, sj := range tj.Subscriptions {
			sat := at
			if j < len(subOffsets) {
				sat = where(path, data, subOffsets[j])
			}
			sub, err := sj.spec()
			origin := fmt.Sprintf("config %s: topic %s: subscription %d", sat, s.Name, j)
			if sj.Queue != "" {
				origin += " (queue " + sj.Queue + ")"
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", origin, err)
			}
			sub.origin = origin
			if other, dup := queues[sj.Queue]; dup {
				return nil, fmt.Errorf("%s: the queue is subscribed twice (first at %s): a queue has one subscription to "+
					"a topic, as on SNS", origin, other)
			}
			queues[sj.Queue] = sat
			s.Subscriptions = append(s.Subscriptions, sub)
		}
		out = append(out, s)
	}
	return out, nil
}

// setAttributes sets the attributes of s from those of the file, and checks them as CreateTopic does.
func (s *topicSpec) setAttributes(attrs map[string]json.RawMessage) error {
	fifo := strings.HasSuffix(s.Name, ".fifo")
	s.declared = make(map[string]bool)
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		v, err := attributeValue(attrs[k])
		if err != nil {
			return fmt.Errorf("attribute %s: %w", k, err)
		}
		switch k {
		case "FifoTopic":
			b, err := strconv.ParseBool(v)
			if err != nil || b != fifo {
				return fmt.Errorf("attribute FifoTopic %q: a topic is FIFO when its name ends in .fifo (FifoTopic is then true; "+
					"it may be left out)", v)
			}
		case "ContentBasedDeduplication":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("%w: ContentBasedDeduplication %q, want true or false", topic.ErrInvalidAttribute, v)
			}
			s.Attributes.ContentBasedDeduplication = b
		case "SignatureVersion":
			s.Attributes.SignatureVersion = v
		default:
			return fmt.Errorf("attribute %s: the config file takes %s; set SNS's other topic attributes with "+
				"SetTopicAttributes", k, strings.Join(topicAttributes, ", "))
		}
		s.declared[k] = true
	}
	return topic.Check(s.Name, s.Attributes)
}

// spec checks sj as far as it can be without the server (the rules between the topic and its queues are
// Subscribe's, at start), and returns it.
func (sj *subscriptionJSON) spec() (subscriptionSpec, error) {
	s := subscriptionSpec{Queue: sj.Queue, RawMessageDelivery: sj.RawMessageDelivery}
	if sj.Queue == "" {
		return s, errors.New(`no queue: give "queue", a queue's name or ARN`)
	}
	if _, _, err := queueOfMapping(sj.Queue, catalog.Namespace{}); err != nil {
		return s, err
	}
	if sj.FilterPolicyScope != nil {
		scope := topic.FilterPolicyScope(*sj.FilterPolicyScope)
		s.FilterPolicyScope = &scope
	}
	if sj.FilterPolicy != nil {
		policy, err := jsonText(sj.FilterPolicy)
		if err != nil {
			return s, fmt.Errorf("filterPolicy: %w", err)
		}
		s.FilterPolicy = &policy
		if policy != "" { // checked with its scope; a scope alone is checked by Subscribe
			var scope topic.FilterPolicyScope
			if s.FilterPolicyScope != nil {
				scope = *s.FilterPolicyScope
			}
			if _, err := topic.ParseFilterPolicy(policy, scope); err != nil {
				return s, fmt.Errorf("filterPolicy: %w", err)
			}
		}
	}
	if sj.RedrivePolicy != nil {
		text, err := jsonText(sj.RedrivePolicy)
		if err != nil {
			return s, fmt.Errorf("redrivePolicy: %w", err)
		}
		s.redrive = true
		if text != "" {
			var p struct {
				DeadLetterTargetArn string `json:"deadLetterTargetArn"`
			}
			dec := json.NewDecoder(strings.NewReader(text))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&p); err != nil {
				return s, fmt.Errorf("%w: redrivePolicy: %s", topic.ErrInvalidRedrivePolicy, strings.TrimPrefix(err.Error(), "json: "))
			}
			if p.DeadLetterTargetArn == "" {
				return s, fmt.Errorf(`%w: redrivePolicy: no deadLetterTargetArn: give the dead-letter queue's ARN or name`, topic.ErrInvalidRedrivePolicy)
			}
			if _, _, err := queueOfMapping(p.DeadLetterTargetArn, catalog.Namespace{}); err != nil {
				return s, fmt.Errorf("%w: redrivePolicy: deadLetterTargetArn: %w", topic.ErrInvalidRedrivePolicy, err)
			}
			s.DeadLetterQueue = p.DeadLetterTargetArn
		}
	}
	return s, nil
}

// jsonText returns the text a JSON value of the file stands for: a string as it is, an object as its JSON,
// null as "".
func jsonText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return "", nil
	case raw[0] == '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case raw[0] == '{':
		var b bytes.Buffer
		err := json.Compact(&b, raw)
		return b.String(), err
	}
	return "", errors.New("want a JSON object, or a string that holds one")
}

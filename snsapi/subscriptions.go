package snsapi

import (
	"cmp"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"strconv"
	"strings"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/internal/rule"
	"github.com/fifoq/fifoq/topic"
)

// Subscriptions: the sqs protocol, to the catalogue's queues by ARN.

// protocols are the protocols SNS knows; of them, fifoq delivers to sqs only.
var protocols = map[string]bool{"http": true, "https": true, "email": true, "email-json": true, "sms": true,
	"sqs": true, "application": true, "lambda": true, "firehose": true}

// queueOfARN returns the queue an SQS ARN names (a subscription's endpoint, a redrive policy's target).
func queueOfARN(arn string) (catalog.QueueKey, bool) {
	ns, name, ok := catalog.ParseQueueARN(arn)
	if !ok || strings.Contains(name, "/") {
		return catalog.QueueKey{}, false
	}
	return catalog.QueueKey{Namespace: ns, Name: name}, true
}

// storedSubscriptionAttributes are the attributes of a subscription that fifoq keeps and shows but does not
// act on.
var storedSubscriptionAttributes = map[string]bool{"DeliveryPolicy": true, "SubscriptionRoleArn": true, "ReplayPolicy": true}

// setSubscriptionAttribute sets the attribute name of d to value; the error says what SNS says, which a
// Subscribe prefixes with "Attributes Reason: ".
func setSubscriptionAttribute(d *catalog.SubscriptionDefinition, name, value string) (reason string, err *apiError) {
	switch {
	case name == "RawMessageDelivery":
		switch strings.ToLower(value) {
		case "true":
			d.RawMessageDelivery = true
		case "false":
			d.RawMessageDelivery = false
		default:
			return "RawMessageDelivery: Invalid value [" + value + "]. Must be true or false.", nil
		}
	case name == "FilterPolicy":
		d.FilterPolicy = value
	case name == "FilterPolicyScope":
		d.FilterPolicyScope = topic.FilterPolicyScope(value)
	case name == "RedrivePolicy":
		if value == "" {
			d.DeadLetterQueue = nil
			return "", nil
		}
		v, _, err := rule.ParseJSON(value, maxJSONDepth)
		if err != nil {
			return "RedrivePolicy: failed to parse JSON. " + jsonErrorText(err), nil
		}
		target := ""
		if arn, ok := v.Member("deadLetterTargetArn"); ok && v.Kind == rule.JSONObject && arn.Kind == rule.JSONString {
			target = arn.Text
		}
		k, ok := queueOfARN(target)
		if !ok {
			return "RedrivePolicy: deadLetterTargetArn is an invalid arn", nil
		}
		d.DeadLetterQueue = &k
	case storedSubscriptionAttributes[name]:
		if d.Stored == nil {
			d.Stored = make(map[string]string)
		}
		if value == "" {
			delete(d.Stored, name)
		} else {
			d.Stored[name] = value
		}
	default:
		return "", invalidParameter("AttributeName", "")
	}
	return "", nil
}

func subscribe(s *Server, c *call) (*xmlOut, error) {
	t, err := s.topicOf(c, "TopicArn")
	if err != nil {
		return nil, err
	}
	protocol, endpoint := c.get("Protocol"), c.get("Endpoint")
	switch {
	case !c.has("Protocol"):
		return nil, validationError("protocol")
	case !protocols[protocol]:
		return nil, invalidParameter("Amazon SNS does not support this protocol string: "+protocol, "")
	}
	d := catalog.SubscriptionDefinition{Owner: c.ns.Account}
	if protocol == "sqs" {
		q, ok := queueOfARN(endpoint)
		if !ok {
			return nil, invalidParameter("SQS endpoint ARN", "")
		}
		d.Queue = q
	}
	// The attributes are checked before a protocol fifoq does not deliver to is refused: SNS, which
	// delivers to them, answers a bad attribute of any protocol.
	attrs := c.entries("Attributes")
	if err := readSubscribeAttributes(&d, attrs); err != nil {
		return nil, err
	}
	if protocol != "sqs" {
		return nil, invalidParameter("Amazon SNS does not support this protocol string: "+protocol,
			"fifoq delivers to the sqs protocol only")
	}
	if arn, err := s.resubscribe(t, &d, attrs); arn != "" || err != nil {
		return subscriptionARNOut(arn), err
	}
	sub, err := s.cat.Subscribe(c.r.Context(), t.Namespace(), t.Name(), d)
	if err != nil {
		return nil, err
	}
	return subscriptionARNOut(sub.ARN), nil
}

func subscriptionARNOut(arn string) *xmlOut {
	var x xmlOut
	x.elem("SubscriptionArn", arn)
	return &x
}

// readSubscribeAttributes sets the attributes of a Subscribe call on d, and checks its filter policy and
// scope as the topic will, with Subscribe's words ("Invalid parameter: Attributes Reason: ...").
func readSubscribeAttributes(d *catalog.SubscriptionDefinition, attrs map[string]string) error {
	for _, n := range sortedKeys(attrs) {
		reason, aerr := setSubscriptionAttribute(d, n, attrs[n])
		if aerr != nil {
			return aerr
		}
		if reason != "" {
			return invalidParameter("Attributes", reason)
		}
	}
	_, err := topic.ParseFilterPolicy(d.FilterPolicy, d.FilterPolicyScope)
	switch {
	case errors.Is(err, topic.ErrInvalidFilterPolicyScope):
		return err
	case err != nil && d.FilterPolicy != "":
		return invalidParameter("Attributes", strings.TrimPrefix(fifoq.ErrorMessage(err), "Invalid parameter: "))
	}
	return nil
}

// resubscribe returns the ARN of the topic's subscription of d's queue, when it has one whose attributes
// are those given (attrs, read into d): SNS's Subscribe is idempotent, compares only the attributes given,
// and counts a default as given (a FilterPolicyScope of MessageAttributes is the scope of a subscription
// without one). An attribute given with another value is refused.
func (s *Server) resubscribe(t catalog.Topic, d *catalog.SubscriptionDefinition, attrs map[string]string) (string, error) {
	subs, _ := s.cat.TopicSubscriptions(t.Namespace(), t.Name())
	for _, sub := range subs {
		if sub.Definition.Queue != d.Queue {
			continue
		}
		for name := range attrs {
			if !sameSubscriptionAttribute(name, d, &sub.Definition) {
				return "", invalidParameter("Attributes", "Subscription already exists with different attributes")
			}
		}
		return sub.ARN, nil
	}
	return "", nil
}

// sameSubscriptionAttribute reports whether the attribute name has the same value in given and in existing.
// Filter policies are the same when they are the same JSON, whatever their spacing and key order.
func sameSubscriptionAttribute(name string, given, existing *catalog.SubscriptionDefinition) bool {
	switch name {
	case "RawMessageDelivery":
		return given.RawMessageDelivery == existing.RawMessageDelivery
	case "FilterPolicy":
		return sameJSON(given.FilterPolicy, existing.FilterPolicy)
	case "FilterPolicyScope":
		return cmp.Or(given.FilterPolicyScope, topic.FilterPolicyScopeMessageAttributes) ==
			cmp.Or(existing.FilterPolicyScope, topic.FilterPolicyScopeMessageAttributes)
	case "RedrivePolicy":
		g, e := given.DeadLetterQueue, existing.DeadLetterQueue
		return g == nil && e == nil || g != nil && e != nil && *g == *e
	}
	return given.Stored[name] == existing.Stored[name]
}

// sameJSON reports whether a and b are the same JSON value, or both "".
func sameJSON(a, b string) bool {
	if a == "" || b == "" {
		return a == b
	}
	var va, vb any
	if json.Unmarshal([]byte(a), &va) != nil || json.Unmarshal([]byte(b), &vb) != nil {
		return a == b
	}
	return reflect.DeepEqual(va, vb)
}

// subscriptionOf returns the subscription a SubscriptionArn parameter names.
func (s *Server) subscriptionOf(c *call) (catalog.Subscription, error) {
	arn := c.get("SubscriptionArn")
	svc, ns, resource, err := c.parseARN("SubscriptionArn")
	if err != nil {
		return catalog.Subscription{}, err
	}
	_, id, ok := strings.Cut(resource, ":")
	if svc != "sns" || !ok || !isUUID(id) || ns.Region != c.ns.Region {
		return catalog.Subscription{}, invalidParameter("SubscriptionId", "")
	}
	sub, ok := s.cat.Subscription(arn)
	if !ok {
		return catalog.Subscription{}, toAPIError(topic.ErrSubscriptionNotFound)
	}
	return sub, nil
}

// isUUID reports whether s has the form of a UUID.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
		default:
			return false
		}
	}
	return true
}

func unsubscribe(s *Server, c *call) (*xmlOut, error) {
	sub, err := s.subscriptionOf(c)
	if ae, ok := err.(*apiError); ok && ae.code == "NotFound" {
		return nil, nil // SNS answers an Unsubscribe of a subscription that does not exist with success
	}
	if err != nil {
		return nil, err
	}
	return nil, s.cat.Unsubscribe(c.r.Context(), sub.ARN)
}

// confirmSubscription confirms nothing: fifoq's sqs subscriptions are confirmed when they are made, and it
// sends no confirmation tokens, so every token is one SNS does not know. SNS checks the token's form before
// the topic: a token that is not hexadecimal is "Invalid token"; then a TopicArn it cannot read is "Invalid
// parameter: Topic"; then a token it does not know is "Invalid parameter: Token", even for a topic that does
// not exist.
func confirmSubscription(s *Server, c *call) (*xmlOut, error) {
	if !c.has("Token") {
		return nil, validationError("token")
	}
	if !isHexToken(c.get("Token")) {
		return nil, newError("InvalidParameter", "Invalid token")
	}
	if _, err := s.topicOf(c, "TopicArn"); err != nil {
		if ae, ok := err.(*apiError); ok && ae.code == "InvalidParameter" {
			return nil, invalidParameter("Topic", "")
		}
	}
	return nil, invalidParameter("Token", "")
}

// isHexToken reports whether token has the form of SNS's confirmation tokens: hexadecimal digits.
func isHexToken(token string) bool {
	if token == "" {
		return false
	}
	for i := 0; i < len(token); i++ {
		if c := token[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// subscriptionsOut writes a list of subscriptions and its next token.
func subscriptionsOut(subs []catalog.Subscription, next string) *xmlOut {
	var x xmlOut
	x.open("Subscriptions", "")
	for _, sub := range subs {
		x.open("member", "")
		x.elem("Owner", sub.Definition.Owner)
		x.elem("Endpoint", sub.Definition.Queue.Namespace.QueueARN(sub.Definition.Queue.Name))
		x.elem("Protocol", "sqs")
		x.elem("SubscriptionArn", sub.ARN)
		x.elem("TopicArn", sub.Topic.ARN())
		x.close("member")
	}
	x.close("Subscriptions")
	if next != "" {
		x.elem("NextToken", next)
	}
	return &x
}

func listSubscriptions(s *Server, c *call) (*xmlOut, error) {
	var all []catalog.Subscription
	for _, t := range s.cat.ListTopics(c.ns) {
		subs, _ := s.cat.TopicSubscriptions(t.Namespace(), t.Name())
		all = append(all, subs...)
	}
	subs, next, err := page(c, all)
	if err != nil {
		return nil, err
	}
	return subscriptionsOut(subs, next), nil
}

func listSubscriptionsByTopic(s *Server, c *call) (*xmlOut, error) {
	t, err := s.topicOf(c, "TopicArn")
	if err != nil {
		return nil, err
	}
	all, _ := s.cat.TopicSubscriptions(t.Namespace(), t.Name())
	subs, next, err := page(c, all)
	if err != nil {
		return nil, err
	}
	return subscriptionsOut(subs, next), nil
}

func getSubscriptionAttributes(s *Server, c *call) (*xmlOut, error) {
	sub, err := s.subscriptionOf(c)
	if err != nil {
		return nil, err
	}
	d := sub.Definition
	attrs := map[string]string{
		"ConfirmationWasAuthenticated": "true", "Endpoint": d.Queue.Namespace.QueueARN(d.Queue.Name), "Owner": d.Owner,
		"PendingConfirmation": "false", "Protocol": "sqs", "RawMessageDelivery": strconv.FormatBool(d.RawMessageDelivery),
		"SubscriptionArn": sub.ARN, "TopicArn": sub.Topic.ARN(),
		"SubscriptionPrincipal": rule.IAMARN(sub.Topic.Namespace().Region, d.Owner, "user/fifoq"),
	}
	if d.FilterPolicy != "" {
		attrs["FilterPolicy"] = d.FilterPolicy
		attrs["FilterPolicyScope"] = string(d.FilterPolicyScope)
	}
	if q := d.DeadLetterQueue; q != nil {
		attrs["RedrivePolicy"] = `{"deadLetterTargetArn":"` + q.Namespace.QueueARN(q.Name) + `"}`
	}
	maps.Copy(attrs, d.Stored)
	return attributesOut(attrs), nil
}

func setSubscriptionAttributes(s *Server, c *call) (*xmlOut, error) {
	sub, err := s.subscriptionOf(c)
	if err != nil {
		return nil, err
	}
	if !c.has("AttributeName") {
		return nil, validationError("attributeName")
	}
	name, value := c.get("AttributeName"), c.get("AttributeValue")
	return nil, s.cat.UpdateSubscription(c.r.Context(), sub.ARN, func(d *catalog.SubscriptionDefinition) error {
		reason, aerr := setSubscriptionAttribute(d, name, value)
		if aerr != nil {
			return aerr
		}
		if reason != "" {
			return newError("InvalidParameter", "Invalid parameter: %s", reason)
		}
		return nil
	})
}

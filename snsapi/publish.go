package snsapi

import (
	"encoding/base64"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/topic"
)

// Publish and PublishBatch.

// messageAttributes reads the message attributes of prefix.entry.N: Name, Value.DataType,
// Value.StringValue, Value.BinaryValue (base64). member is the attribute map's name in a validation error.
func (c *call) messageAttributes(prefix, member string) (map[string]fifoq.Attribute, error) {
	var out map[string]fifoq.Attribute
	for i := 1; ; i++ {
		p := prefix + ".entry." + strconv.Itoa(i)
		if !c.has(p + ".Name") {
			return out, nil
		}
		name := c.get(p + ".Name")
		if !c.has(p + ".Value.DataType") {
			return nil, validationError(member + "." + name + ".member.dataType")
		}
		a := fifoq.Attribute{DataType: c.get(p + ".Value.DataType"), StringValue: c.get(p + ".Value.StringValue")}
		if c.has(p + ".Value.BinaryValue") {
			b, err := base64.StdEncoding.DecodeString(c.get(p + ".Value.BinaryValue"))
			if err != nil {
				return nil, newError("ParameterValueInvalid", "The message attribute '%s' has an invalid binary value.", name)
			}
			a.BinaryValue = b
		}
		if out == nil {
			out = make(map[string]fifoq.Attribute)
		}
		out[name] = a
	}
}

// message reads a message's parameters, under prefix ("" for Publish's, "PublishBatchRequestEntries.member.N."
// for an entry's), and the request's X-Amzn-Trace-Id header, which SNS passes on to SQS as AWSTraceHeader.
func (c *call) message(prefix, attrMember string) (topic.Message, error) {
	attrs, err := c.messageAttributes(prefix+"MessageAttributes", attrMember)
	if err != nil {
		return topic.Message{}, err
	}
	m := topic.Message{Message: c.get(prefix + "Message"), Subject: c.get(prefix + "Subject"),
		MessageStructure: c.get(prefix + "MessageStructure"), GroupID: c.get(prefix + "MessageGroupId"),
		DeduplicationID: c.get(prefix + "MessageDeduplicationId"), Attributes: attrs,
		TraceHeader: c.r.Header.Get("X-Amzn-Trace-Id")}
	if c.has(prefix+"Subject") && m.Subject == "" {
		return m, invalidParameter("Subject", "") // an empty Subject given, which fifoq.Publish reads as none
	}
	return m, nil
}

// PublishOptions returns the options with which a program publishes to the server's topics as the server
// does for a client that reached it at endpoint (such as "http://127.0.0.1:9324"): envelopes that name it
// (UnsubscribeURL) and, with WithSigningKey, are signed with the server's key and name its certificate
// there. Command fifoq's console publishes so.
func (s *Server) PublishOptions(endpoint string) []topic.PublishOption {
	opts := []topic.PublishOption{topic.WithPublishEndpoint(endpoint)}
	if s.signing != nil {
		opts = append(opts, topic.WithPublishSigner(topic.RSASigner{Key: s.signing.key, CertURL: endpoint + s.signing.path}))
	}
	return opts
}

// publishOptions returns the options of a publish: envelopes that name the endpoint the request reached, and
// are signed when the server signs.
func (s *Server) publishOptions(c *call) []topic.PublishOption { return s.PublishOptions(c.endpoint()) }

func publish(s *Server, c *call) (*xmlOut, error) {
	param := "TopicArn"
	switch {
	case c.get("PhoneNumber") != "":
		return nil, invalidParameter("PhoneNumber", "fifoq does not send SMS")
	case c.get("TopicArn") == "" && c.get("TargetArn") != "":
		param = "TargetArn"
	}
	t, err := s.topicOf(c, param)
	if ae, ok := err.(*apiError); ok && param == "TargetArn" && ae.code == "NotFound" {
		return nil, invalidParameter("TargetArn", "No endpoint found for the target arn specified")
	}
	if err != nil {
		return nil, err
	}
	if !c.has("Message") {
		return nil, validationError("message")
	}
	m, err := c.message("", "messageAttributes")
	if err != nil {
		return nil, err
	}
	res, err := t.Publish(c.r.Context(), m, s.publishOptions(c)...)
	if err != nil {
		return nil, err
	}
	var x xmlOut
	x.elem("MessageId", res.MessageID)
	if res.SequenceNumber != "" {
		x.elem("SequenceNumber", res.SequenceNumber)
	}
	return &x, nil
}

// maxBatchIDLength is the longest batch entry id.
const maxBatchIDLength = 80

// checkBatchIDs checks the ids of a PublishBatch's entries as SNS does: distinct, then each of at most 80
// characters of [A-Za-z0-9_-], the first bad id named.
func checkBatchIDs(ids []string) error {
	for i, id := range ids {
		if slices.Contains(ids[:i], id) {
			return newError("BatchEntryIdsNotDistinct", "Two or more batch entries in the request have the same Id.")
		}
	}
	for _, id := range ids {
		if len(id) > maxBatchIDLength {
			return newError("InvalidBatchEntryId", "The Id of a batch entry in the batch request is too long: %s", id)
		}
		if id == "" || strings.IndexFunc(id, func(r rune) bool {
			return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_')
		}) >= 0 {
			return newError("InvalidBatchEntryId", "The Id of a batch entry in the batch request contains an impermissible character: %s", id)
		}
	}
	return nil
}

func publishBatch(s *Server, c *call) (*xmlOut, error) {
	t, err := s.topicOf(c, "TopicArn")
	if err != nil {
		return nil, err
	}
	var ids []string
	for i := 1; ; i++ {
		p := "PublishBatchRequestEntries.member." + strconv.Itoa(i) + "."
		if !c.has(p+"Id") && !c.has(p+"Message") {
			break
		}
		if !c.has(p + "Id") {
			return nil, validationError("publishBatchRequestEntries." + strconv.Itoa(i) + ".member.id")
		}
		ids = append(ids, c.get(p+"Id"))
	}
	switch {
	case len(ids) == 0:
		return nil, toAPIError(topic.ErrEmptyBatch)
	case len(ids) > fifoq.MaxBatchEntries:
		return nil, toAPIError(topic.ErrTooManyEntries)
	}
	if err := checkBatchIDs(ids); err != nil {
		return nil, err
	}
	ms := make([]topic.Message, len(ids))
	for i := range ids {
		p := "PublishBatchRequestEntries.member." + strconv.Itoa(i+1) + "."
		if ms[i], err = c.message(p, "publishBatchRequestEntries."+strconv.Itoa(i+1)+".member.messageAttributes"); err != nil {
			return nil, err
		}
	}
	// An entry that breaks a rule of the message fails the whole request, as on SNS (recorded from AWS:
	// ParameterValueInvalid for an attribute, InvalidParameter for a message structure), and so it does
	// topic.PublishBatch; only entries reached after the topic was deleted fail alone.
	results, err := t.PublishBatch(c.r.Context(), ms, s.publishOptions(c)...)
	var be *fifoq.BatchError
	if errors.As(err, &be) {
		failed := make(map[int]error)
		for _, e := range be.Entries {
			failed[e.Index] = e.Err
		}
		return batchOut(ids, results, failed), nil
	}
	if err != nil {
		return nil, err
	}
	return batchOut(ids, results, nil), nil
}

func batchOut(ids []string, results []topic.PublishResult, failed map[int]error) *xmlOut {
	var x xmlOut
	x.open("Successful", "")
	for i, r := range results {
		if failed[i] != nil {
			continue
		}
		x.open("member", "")
		x.elem("Id", ids[i])
		x.elem("MessageId", r.MessageID)
		if r.SequenceNumber != "" {
			x.elem("SequenceNumber", r.SequenceNumber)
		}
		x.close("member")
	}
	x.close("Successful")
	x.open("Failed", "")
	for _, i := range slices.Sorted(maps.Keys(failed)) {
		ae := toAPIError(failed[i])
		x.open("member", "")
		x.elem("Id", ids[i])
		x.elem("Code", ae.code)
		x.elem("Message", ae.message)
		x.elem("SenderFault", "true")
		x.close("member")
	}
	x.close("Failed")
	return &x
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

package snsapi

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/internal/rule"
	"github.com/fifoq/fifoq/topic"
)

// A handler runs one action; a nil output is an action with no result element, an empty one an empty
// result (<TagResourceResult/>).
type handler func(s *Server, c *call) (*xmlOut, error)

// actions are the actions the server serves. SNS's other actions (SMS, mobile push) are answered
// InvalidAction.
var actions map[string]handler

func init() {
	actions = map[string]handler{
		"CreateTopic": createTopic, "DeleteTopic": deleteTopic, "ListTopics": listTopics,
		"GetTopicAttributes": getTopicAttributes, "SetTopicAttributes": setTopicAttributes,
		"AddPermission": addPermission, "RemovePermission": removePermission,
		"TagResource": tagResource, "UntagResource": untagResource, "ListTagsForResource": listTagsForResource,
		"Subscribe": subscribe, "Unsubscribe": unsubscribe, "ConfirmSubscription": confirmSubscription,
		"ListSubscriptions": listSubscriptions, "ListSubscriptionsByTopic": listSubscriptionsByTopic,
		"GetSubscriptionAttributes": getSubscriptionAttributes, "SetSubscriptionAttributes": setSubscriptionAttributes,
		"Publish": publish, "PublishBatch": publishBatch,
		"PutDataProtectionPolicy": putDataProtectionPolicy, "GetDataProtectionPolicy": getDataProtectionPolicy,
	}
}

// IsAction reports whether action is an action of the SNS API that the server serves; SNS's and SQS's
// action names do not overlap, which is how Route tells an unsigned query request's service.
func IsAction(action string) bool { _, ok := actions[action]; return ok }

// parseARN splits the ARN of the parameter param (arn:partition:service:region:account:resource) as SNS
// checks it. A parameter not given has no value; one given empty is an ARN of one element, as SNS answers
// Publish with TopicArn="" ("An ARN must have at least 6 elements, not 1"), but for an empty SubscriptionArn,
// which SNS answers as one not given.
func (c *call) parseARN(param string) (service string, ns catalog.Namespace, resource string, err error) {
	arn := c.get(param)
	if !c.has(param) || arn == "" && param == "SubscriptionArn" {
		return "", ns, "", invalidParameter(param, "no value for required parameter")
	}
	a, err := rule.ParseARN(arn)
	if err != nil {
		return "", ns, "", invalidParameter(param, err.Error())
	}
	return a.Service, catalog.Namespace{Account: a.Account, Region: a.Region}, a.Resource, nil
}

// topicOf returns the topic a TopicArn parameter names: an SNS ARN in the request's region (another region's
// is "Invalid parameter: TopicArn", as SNS answers), of any account; ErrTopicNotFound when there is none.
func (s *Server) topicOf(c *call, param string) (catalog.Topic, error) {
	svc, ns, name, err := c.parseARN(param)
	if err != nil {
		return catalog.Topic{}, err
	}
	if svc != "sns" || ns.Region != c.ns.Region || strings.Contains(name, ":") {
		return catalog.Topic{}, invalidParameter(param, "")
	}
	t, ok := s.cat.Topic(ns, name)
	if !ok {
		return catalog.Topic{}, toAPIError(topic.ErrNotFound)
	}
	return t, nil
}

// entries returns the map a query parameter holds: prefix.entry.N.key and prefix.entry.N.value.
func (c *call) entries(prefix string) map[string]string {
	out := make(map[string]string)
	for i := 1; ; i++ {
		p := prefix + ".entry." + strconv.Itoa(i)
		if !c.has(p + ".key") {
			return out
		}
		out[c.get(p+".key")] = c.get(p + ".value")
	}
}

// members returns the list a query parameter holds: prefix.member.N.
func (c *call) members(prefix string) []string {
	var out []string
	for i := 1; ; i++ {
		p := prefix + ".member." + strconv.Itoa(i)
		if !c.has(p) {
			return out
		}
		out = append(out, c.get(p))
	}
}

// tags returns the tags of prefix.member.N.Key and .Value; a key given twice is refused, as SNS refuses it.
func (c *call) tags(prefix string) (map[string]string, error) {
	out := make(map[string]string)
	for i := 1; ; i++ {
		p := prefix + ".member." + strconv.Itoa(i)
		if !c.has(p + ".Key") {
			return out, nil
		}
		k := c.get(p + ".Key")
		if _, dup := out[k]; dup {
			return nil, newError("InvalidParameter", "Invalid parameter: Duplicated keys are not allowed.")
		}
		out[k] = c.get(p + ".Value")
	}
}

// Topic attributes: those fifoq acts on, those it stores (writable), and those it computes (read only).
var storedTopicAttributes = map[string]bool{
	"DisplayName": true, "Policy": true, "DeliveryPolicy": true, "KmsMasterKeyId": true, "TracingConfig": true,
	"ArchivePolicy": true, "FifoThroughputScope": true, "DataProtectionPolicy": true,
}

// isFeedbackAttribute reports whether name is one of the delivery status logging attributes of a topic
// (HTTPSuccessFeedbackRoleArn, SQSFailureFeedbackRoleArn, LambdaSuccessFeedbackSampleRate, ...).
func isFeedbackAttribute(name string) bool {
	for _, p := range []string{"Application", "Firehose", "HTTP", "Lambda", "SQS"} {
		switch strings.TrimPrefix(name, p) {
		case "SuccessFeedbackRoleArn", "SuccessFeedbackSampleRate", "FailureFeedbackRoleArn":
			return name != strings.TrimPrefix(name, p)
		}
	}
	return false
}

// setTopicAttribute sets the attribute name of d to value, as SetTopicAttributes and CreateTopic do.
func setTopicAttribute(d *catalog.TopicDefinition, fifo bool, name, value string) error {
	switch {
	case name == "ContentBasedDeduplication":
		b, err := strconv.ParseBool(value)
		if err != nil || !fifo && b {
			return invalidParameter("ContentBasedDeduplication", "")
		}
		d.ContentBasedDeduplication = b
	case name == "SignatureVersion":
		if value != "1" && value != "2" {
			return invalidParameter("SignatureVersion", "")
		}
		d.SignatureVersion = value
	case name == "Policy" || name == "DeliveryPolicy" || name == "DataProtectionPolicy" || name == "ArchivePolicy":
		if value != "" && !json.Valid([]byte(value)) {
			return invalidParameter(name, "failed to parse JSON")
		}
		if name == "DeliveryPolicy" && value != "" {
			value = normalizeDeliveryPolicy(value)
		}
		fallthrough
	case storedTopicAttributes[name] || isFeedbackAttribute(name):
		if name == "FifoThroughputScope" && (!fifo || value != "Topic" && value != "MessageGroup") {
			return invalidParameter("FifoThroughputScope", "")
		}
		if d.Stored == nil {
			d.Stored = make(map[string]string)
		}
		if value == "" {
			delete(d.Stored, name)
		} else {
			d.Stored[name] = value
		}
	default:
		return invalidParameter("AttributeName", "")
	}
	return nil
}

func createTopic(s *Server, c *call) (*xmlOut, error) {
	name := c.get("Name")
	attrs := c.entries("Attributes")
	fifo := strings.EqualFold(attrs["FifoTopic"], "true")
	delete(attrs, "FifoTopic")
	if !c.has("Name") {
		return nil, validationError("name")
	}
	if fifo != strings.HasSuffix(name, ".fifo") { // a FIFO topic's name ends in .fifo, for a new topic or an existing one
		return nil, invalidParameter("Topic Name", "")
	}
	tags, err := c.tags("Tags")
	if err != nil {
		return nil, err
	}
	def := catalog.TopicDefinition{Tags: tags}
	if p := c.get("DataProtectionPolicy"); p != "" {
		attrs["DataProtectionPolicy"] = p
	}
	for _, n := range slices.Sorted(maps.Keys(attrs)) {
		if err := setTopicAttribute(&def, fifo, n, attrs[n]); err != nil {
			return nil, err
		}
	}
	t, err := s.cat.CreateTopic(c.r.Context(), c.ns, name, def)
	if err != nil {
		return nil, err
	}
	var x xmlOut
	x.elem("TopicArn", t.ARN())
	return &x, nil
}

func deleteTopic(s *Server, c *call) (*xmlOut, error) {
	t, err := s.topicOf(c, "TopicArn")
	if ae, ok := err.(*apiError); ok && ae.code == "NotFound" {
		return nil, nil // SNS answers a DeleteTopic of a topic that does not exist with success
	}
	if err != nil {
		return nil, err
	}
	return nil, s.cat.DeleteTopic(c.r.Context(), t.Namespace(), t.Name())
}

// pageSize is the most items a List action returns at once, as SNS returns.
const pageSize = 100

// page returns the items of a list from the NextToken of the request (the index of the first, as SNS's
// tokens are opaque), at most pageSize of them, and the token of the next page ("" for none).
func page[T any](c *call, items []T) ([]T, string, error) {
	from := 0
	if tok := c.get("NextToken"); tok != "" {
		n, err := strconv.Atoi(tok)
		if err != nil || n < 0 || n > len(items) {
			return nil, "", invalidParameter("NextToken", "")
		}
		from = n
	}
	to := min(from+pageSize, len(items))
	next := ""
	if to < len(items) {
		next = strconv.Itoa(to)
	}
	return items[from:to], next, nil
}

func listTopics(s *Server, c *call) (*xmlOut, error) {
	topics, next, err := page(c, s.cat.ListTopics(c.ns))
	if err != nil {
		return nil, err
	}
	var x xmlOut
	x.open("Topics", "")
	for _, t := range topics {
		x.open("member", "")
		x.elem("TopicArn", t.ARN())
		x.close("member")
	}
	x.close("Topics")
	if next != "" {
		x.elem("NextToken", next)
	}
	return &x, nil
}

// defaultTopicPolicy is the policy SNS gives a topic that has none.
func defaultTopicPolicy(t catalog.Topic) string {
	arn := t.ARN()
	return `{"Version":"2008-10-17","Id":"__default_policy_ID","Statement":[{"Sid":"__default_statement_ID",` +
		`"Effect":"Allow","Principal":{"AWS":"*"},"Action":["SNS:GetTopicAttributes","SNS:SetTopicAttributes",` +
		`"SNS:AddPermission","SNS:RemovePermission","SNS:DeleteTopic","SNS:Subscribe","SNS:ListSubscriptionsByTopic",` +
		`"SNS:Publish"],"Resource":"` + arn + `","Condition":{"StringEquals":{"AWS:SourceOwner":"` + t.Namespace().Account + `"}}}]}`
}

// effectiveDeliveryPolicy is SNS's default EffectiveDeliveryPolicy, with the topic's DeliveryPolicy's http
// settings over it.
func effectiveDeliveryPolicy(deliveryPolicy string) string {
	retry := map[string]any{"minDelayTarget": 20, "maxDelayTarget": 20, "numRetries": 3, "numMaxDelayRetries": 0,
		"numNoDelayRetries": 0, "numMinDelayRetries": 0, "backoffFunction": "linear"}
	request := map[string]any{"headerContentType": "text/plain; charset=UTF-8"}
	disable := any(false)
	var given struct {
		HTTP struct {
			DefaultHealthyRetryPolicy   map[string]any `json:"defaultHealthyRetryPolicy"`
			DefaultRequestPolicy        map[string]any `json:"defaultRequestPolicy"`
			DisableSubscriptionOverride *bool          `json:"disableSubscriptionOverrides"`
		} `json:"http"`
	}
	if json.Unmarshal([]byte(deliveryPolicy), &given) == nil {
		maps.Copy(retry, given.HTTP.DefaultHealthyRetryPolicy)
		maps.Copy(request, given.HTTP.DefaultRequestPolicy)
		if given.HTTP.DisableSubscriptionOverride != nil {
			disable = *given.HTTP.DisableSubscriptionOverride
		}
	}
	// The members in SNS's order.
	keys := []string{"minDelayTarget", "maxDelayTarget", "numRetries", "numMaxDelayRetries", "numNoDelayRetries",
		"numMinDelayRetries", "backoffFunction"}
	var b strings.Builder
	b.WriteString(`{"http":{"defaultHealthyRetryPolicy":{`)
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		v, _ := json.Marshal(retry[k])
		b.WriteString(`"` + k + `":` + string(v))
	}
	d, _ := json.Marshal(disable)
	r, _ := json.Marshal(request)
	b.WriteString(`},"disableSubscriptionOverrides":` + string(d) + `,"defaultRequestPolicy":` + string(r) + `}}`)
	return b.String()
}

func getTopicAttributes(s *Server, c *call) (*xmlOut, error) {
	t, err := s.topicOf(c, "TopicArn")
	if err != nil {
		return nil, err
	}
	d, ok := s.cat.TopicDefinition(t.Namespace(), t.Name())
	if !ok {
		return nil, toAPIError(topic.ErrNotFound)
	}
	subs, _ := s.cat.TopicSubscriptions(t.Namespace(), t.Name())
	attrs := map[string]string{
		"TopicArn": t.ARN(), "Owner": t.Namespace().Account, "DisplayName": "",
		"Policy": defaultTopicPolicy(t), "SubscriptionsConfirmed": strconv.Itoa(len(subs)),
		"SubscriptionsPending": "0", "SubscriptionsDeleted": "0",
		"EffectiveDeliveryPolicy": effectiveDeliveryPolicy(d.Stored["DeliveryPolicy"]),
	}
	maps.Copy(attrs, d.Stored)
	if d.SignatureVersion != "" {
		attrs["SignatureVersion"] = d.SignatureVersion
	}
	if t.FIFO() {
		attrs["FifoTopic"] = "true"
		attrs["ContentBasedDeduplication"] = strconv.FormatBool(d.ContentBasedDeduplication)
	}
	return attributesOut(attrs), nil
}

// attributesOut writes an Attributes map, its entries in name order.
func attributesOut(attrs map[string]string) *xmlOut {
	var x xmlOut
	x.open("Attributes", "")
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		x.open("entry", "")
		x.elem("key", k)
		x.elem("value", attrs[k])
		x.close("entry")
	}
	x.close("Attributes")
	return &x
}

func setTopicAttributes(s *Server, c *call) (*xmlOut, error) {
	t, err := s.topicOf(c, "TopicArn")
	if err != nil {
		return nil, err
	}
	if !c.has("AttributeName") {
		return nil, validationError("attributeName")
	}
	name, value := c.get("AttributeName"), c.get("AttributeValue")
	return nil, s.cat.UpdateTopic(c.r.Context(), t.Namespace(), t.Name(), func(d *catalog.TopicDefinition) error {
		return setTopicAttribute(d, t.FIFO(), name, value)
	})
}

// resourceTopic returns the topic a ResourceArn names: ResourceNotFound when there is none.
func (s *Server) resourceTopic(c *call) (catalog.Topic, error) {
	svc, ns, name, err := c.parseARN("ResourceArn")
	if err != nil {
		return catalog.Topic{}, err
	}
	t, ok := s.cat.Topic(ns, name)
	if svc != "sns" || ns.Region != c.ns.Region || !ok {
		return catalog.Topic{}, newError("ResourceNotFound", "Resource does not exist")
	}
	return t, nil
}

func tagResource(s *Server, c *call) (*xmlOut, error) {
	t, err := s.resourceTopic(c)
	if err != nil {
		return nil, err
	}
	tags, err := c.tags("Tags")
	if err != nil {
		return nil, err
	}
	return &xmlOut{}, s.cat.UpdateTopic(c.r.Context(), t.Namespace(), t.Name(), func(d *catalog.TopicDefinition) error {
		if d.Tags == nil {
			d.Tags = make(map[string]string)
		}
		maps.Copy(d.Tags, tags)
		return nil
	})
}

func untagResource(s *Server, c *call) (*xmlOut, error) {
	t, err := s.resourceTopic(c)
	if err != nil {
		return nil, err
	}
	keys := c.members("TagKeys")
	return &xmlOut{}, s.cat.UpdateTopic(c.r.Context(), t.Namespace(), t.Name(), func(d *catalog.TopicDefinition) error {
		for _, k := range keys {
			delete(d.Tags, k)
		}
		return nil
	})
}

func listTagsForResource(s *Server, c *call) (*xmlOut, error) {
	t, err := s.resourceTopic(c)
	if err != nil {
		return nil, err
	}
	d, _ := s.cat.TopicDefinition(t.Namespace(), t.Name())
	var x xmlOut
	x.open("Tags", "")
	for _, k := range slices.Sorted(maps.Keys(d.Tags)) {
		x.open("member", "")
		x.elem("Key", k)
		x.elem("Value", d.Tags[k])
		x.close("member")
	}
	x.close("Tags")
	return &x, nil
}

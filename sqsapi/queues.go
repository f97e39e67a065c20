package sqsapi

import (
	"encoding/base64"
	"maps"
	"slices"
	"strings"
)

// The actions on queues: CreateQueue, GetQueueUrl, ListQueues, DeleteQueue, GetQueueAttributes,
// SetQueueAttributes, PurgeQueue, ListDeadLetterSourceQueues and the tags.

// queueURLOutput is the result of CreateQueue and GetQueueUrl.
type queueURLOutput string

func (o queueURLOutput) encode(e encoder) { e.str("QueueUrl", string(o)) }

type createQueueInput struct {
	QueueName  string
	Attributes map[string]string
	Tags       map[string]string `json:"tags"`
}

func (in *createQueueInput) fromQuery(f *form) error {
	in.QueueName = f.get("QueueName")
	in.Attributes = f.pairs("Attribute", "Name", "Value")
	in.Tags = f.pairs("Tag", "Key", "Value")
	return nil
}

func createQueue(s *Server, c *call, in *createQueueInput) (output, error) {
	if in.QueueName == "" {
		return nil, missing("QueueName")
	}
	if err := checkTags(nil, in.Tags); err != nil {
		return nil, err
	}
	qs, err := s.createQueue(s.requestNS(c.r), in.QueueName, in.Attributes, in.Tags)
	if err != nil {
		return nil, err
	}
	return queueURLOutput(c.urlOf(qs)), nil
}

type getQueueURLInput struct {
	QueueName              string
	QueueOwnerAWSAccountId string
}

func (in *getQueueURLInput) fromQuery(f *form) error {
	in.QueueName, in.QueueOwnerAWSAccountId = f.get("QueueName"), f.get("QueueOwnerAWSAccountId")
	return nil
}

func getQueueURL(s *Server, c *call, in *getQueueURLInput) (output, error) {
	if in.QueueName == "" {
		return nil, missing("QueueName")
	}
	ns := s.requestNS(c.r)
	if owner := in.QueueOwnerAWSAccountId; owner != "" {
		if owner != s.account && !isAccountID(owner) {
			return nil, s.unknownQueue(c, namespace{account: owner, region: ns.region}, in.QueueName)
		}
		ns.account = owner
	}
	qs := s.lookup(ns, in.QueueName)
	if qs == nil {
		return nil, s.unknownQueue(c, ns, in.QueueName)
	}
	return queueURLOutput(c.urlOf(qs)), nil
}

// queueURLsOutput is the result of ListQueues and ListDeadLetterSourceQueues.
type queueURLsOutput struct {
	name     string // QueueUrls, or queueUrls
	required bool   // sent even when empty
	urls     []string
	next     string
}

func (o *queueURLsOutput) encode(e encoder) {
	if len(o.urls) > 0 || o.required {
		e.beginList(o.name, "QueueUrl")
		for _, u := range o.urls {
			e.listStr(u)
		}
		e.endList()
	}
	if o.next != "" {
		e.str("NextToken", o.next)
	}
}

type listQueuesInput struct {
	QueueNamePrefix string
	NextToken       string
	MaxResults      *int
}

func (in *listQueuesInput) fromQuery(f *form) error {
	in.QueueNamePrefix, in.NextToken = f.get("QueueNamePrefix"), f.get("NextToken")
	var err *apiError
	if in.MaxResults, err = f.optInt("MaxResults"); err != nil {
		return err
	}
	return nil
}

func listQueues(s *Server, c *call, in *listQueuesInput) (output, error) {
	queues := s.sorted(s.requestNS(c.r), in.QueueNamePrefix)
	out := &queueURLsOutput{name: "QueueUrls"}
	err := paginate(c, s, queues, in.NextToken, in.MaxResults, out)
	return out, err
}

// paginate fills out with the URLs of the queues after NextToken (a queue name, base64-encoded), at most
// maxResults of them (1..1000), and the token of the next page. Without maxResults it returns up to 1000
// queues and no token, as SQS does.
func paginate(c *call, s *Server, queues []*queueState, token string, maxResults *int, out *queueURLsOutput) error {
	limit := 1000
	if maxResults != nil {
		if *maxResults < 1 || *maxResults > 1000 {
			return invalidValue(*maxResults, "MaxResults", "MaxResults must be an integer between 1 and 1000.")
		}
		limit = *maxResults
	}
	if token != "" {
		after, err := base64.RawURLEncoding.DecodeString(token)
		if err != nil || len(after) == 0 {
			return invalidValue(token, "NextToken", "Invalid NextToken value.")
		}
		i := slices.IndexFunc(queues, func(qs *queueState) bool { return qs.name > string(after) })
		if i < 0 {
			i = len(queues)
		}
		queues = queues[i:]
	}
	for i, qs := range queues {
		if i == limit {
			if maxResults != nil {
				out.next = base64.RawURLEncoding.EncodeToString([]byte(queues[i-1].name))
			}
			break
		}
		out.urls = append(out.urls, c.urlOf(qs))
	}
	return nil
}

type queueURLInput struct{ QueueUrl string }

func (in *queueURLInput) fromQuery(f *form) error {
	in.QueueUrl = f.get("QueueUrl")
	return nil
}

func deleteQueue(s *Server, c *call, in *queueURLInput) (output, error) {
	qs, err := s.resolve(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	return nil, s.deleteQueue(qs)
}

func purgeQueue(s *Server, c *call, in *queueURLInput) (output, error) {
	qs, err := s.resolve(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if err := qs.q.Purge(c.ctx); err != nil {
		return nil, coreError(err)
	}
	return nil, nil
}

// pairsOutput is a map result: GetQueueAttributes' Attributes, ListQueueTags' Tags.
type pairsOutput struct {
	name, entry, key, value string
	pairs                   [][2]string
}

func (o *pairsOutput) encode(e encoder) {
	if len(o.pairs) == 0 {
		return
	}
	e.beginMap(o.name, o.entry, o.key, o.value)
	for _, p := range o.pairs {
		e.mapStr(p[0], p[1])
	}
	e.endMap()
}

type getQueueAttributesInput struct {
	QueueUrl       string
	AttributeNames []string
}

func (in *getQueueAttributesInput) fromQuery(f *form) error {
	in.QueueUrl, in.AttributeNames = f.get("QueueUrl"), f.list("AttributeName")
	return nil
}

func getQueueAttributes(s *Server, c *call, in *getQueueAttributesInput) (output, error) {
	qs, err := s.resolve(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	names := in.AttributeNames
	for _, name := range in.AttributeNames { // every name is checked, "All" or not among them
		if name == "All" {
			names = attributeOrder
		} else if !slices.Contains(attributeOrder, name) {
			return nil, unknownAttribute(name)
		}
	}
	out := &pairsOutput{name: "Attributes", entry: "Attribute", key: "Name", value: "Value"}
	qs.mu.Lock()
	defer qs.mu.Unlock()
	v := qs.viewLocked()
	if slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "ApproximateNumberOfMessages") }) {
		v.stats = qs.q.Stats() // one look for the three counts, so they agree
	}
	for _, name := range attributeOrder {
		if !slices.Contains(names, name) {
			continue
		}
		if val, ok := s.value(qs, &v, name); ok {
			out.pairs = append(out.pairs, [2]string{name, val})
		}
	}
	return out, nil
}

type setQueueAttributesInput struct {
	QueueUrl   string
	Attributes map[string]string
}

func (in *setQueueAttributesInput) fromQuery(f *form) error {
	in.QueueUrl, in.Attributes = f.get("QueueUrl"), f.pairs("Attribute", "Name", "Value")
	return nil
}

func setQueueAttributes(s *Server, c *call, in *setQueueAttributesInput) (output, error) {
	qs, err := s.resolve(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if len(in.Attributes) == 0 {
		return nil, nil
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	var j journal
	if err := s.setQueueAttributes(&j, c, qs, in.Attributes); err != nil {
		return nil, err
	}
	return nil, s.wait(&j)
}

// setQueueAttributes makes the changes of SetQueueAttributes, recording the queue's new definition in j.
func (s *Server) setQueueAttributes(j *journal, c *call, qs *queueState, attrs map[string]string) *apiError {
	_, redrive := attrs["RedrivePolicy"]
	_, allow := attrs["RedriveAllowPolicy"]
	if !redrive && !allow {
		set, err := s.parseAttributes(qs.q.FIFO(), attrs, s.finder(qs.ns))
		if err != nil {
			return err
		}
		return set.apply(s, j, qs, s.now())
	}
	// A redrive policy is resolved and applied under the registry lock, so that a DeleteQueue of its
	// dead-letter queue, or of this queue, comes wholly before or after it: never a policy naming a queue
	// the server no longer holds. A new RedriveAllowPolicy may let pending policies take this queue back.
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.holdsLocked(qs) {
		return queueDoesNotExist(!c.json)
	}
	set, err := s.parseAttributes(qs.q.FIFO(), attrs, s.finderLocked(qs.ns))
	if err != nil {
		return err
	}
	if err := s.checkSources(qs.ns, set); err != nil {
		return err
	}
	pending := qs.pendingDLQ
	if err := set.apply(s, j, qs, s.now()); err != nil {
		return err
	}
	if set.redriveSet && pending != "" {
		s.unpendLocked(qs, pending)
	}
	if set.allowSet {
		s.rebindLocked(j, qs)
	}
	return nil
}

func listDeadLetterSourceQueues(s *Server, c *call, in *listSourcesInput) (output, error) {
	qs, err := s.resolve(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	var sources []*queueState
	for _, src := range s.sorted(qs.ns, "") { // the sources of a dead-letter queue are in its namespace
		if src.q.Attributes().DeadLetterQueue == qs.q {
			sources = append(sources, src)
		}
	}
	out := &queueURLsOutput{name: "queueUrls", required: true}
	err = paginate(c, s, sources, in.NextToken, in.MaxResults, out)
	return out, err
}

// listSourcesInput is the input of ListDeadLetterSourceQueues.
type listSourcesInput struct {
	QueueUrl   string
	NextToken  string
	MaxResults *int
}

func (in *listSourcesInput) fromQuery(f *form) error {
	in.QueueUrl, in.NextToken = f.get("QueueUrl"), f.get("NextToken")
	var err *apiError
	if in.MaxResults, err = f.optInt("MaxResults"); err != nil {
		return err
	}
	return nil
}

// The limits on tags.
const (
	maxTags        = 50
	maxTagKeyLen   = 128
	maxTagValueLen = 256
)

// checkTags checks that adding tags to have keeps within the limits.
func checkTags(have, tags map[string]string) *apiError {
	n := len(have)
	for k, v := range tags {
		if k == "" || len(k) > maxTagKeyLen {
			return invalidValue(k, "TagKey", "Tag keys must be between 1 and 128 characters in length.")
		}
		if len(v) > maxTagValueLen {
			return invalidValue(v, "TagValue", "Tag values must be at most 256 characters in length.")
		}
		if _, ok := have[k]; !ok {
			n++
		}
	}
	if n > maxTags {
		return newError(codeInvalidParameterValue, "Too many tags added for queue. A queue can have at most %d tags.", maxTags)
	}
	return nil
}

type tagQueueInput struct {
	QueueUrl string
	Tags     map[string]string
}

func (in *tagQueueInput) fromQuery(f *form) error {
	in.QueueUrl, in.Tags = f.get("QueueUrl"), f.pairs("Tag", "Key", "Value")
	return nil
}

func tagQueue(s *Server, c *call, in *tagQueueInput) (output, error) {
	qs, err := s.resolve(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if len(in.Tags) == 0 {
		return nil, missing("Tags")
	}
	return nil, s.changeQueue(qs, func() error {
		if err := checkTags(qs.tags, in.Tags); err != nil {
			return err
		}
		if qs.tags == nil {
			qs.tags = make(map[string]string, len(in.Tags))
		}
		maps.Copy(qs.tags, in.Tags)
		return nil
	})
}

type untagQueueInput struct {
	QueueUrl string
	TagKeys  []string
}

func (in *untagQueueInput) fromQuery(f *form) error {
	in.QueueUrl, in.TagKeys = f.get("QueueUrl"), f.list("TagKey")
	return nil
}

func untagQueue(s *Server, c *call, in *untagQueueInput) (output, error) {
	qs, err := s.resolve(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if len(in.TagKeys) == 0 {
		return nil, missing("TagKeys")
	}
	return nil, s.changeQueue(qs, func() error {
		for _, k := range in.TagKeys {
			delete(qs.tags, k)
		}
		return nil
	})
}

// changeQueue makes a change of qs's definition that needs qs.mu alone (tags, a policy): change runs with
// qs.mu held, and unless it fails, the queue's definition is recorded and waited for once qs.mu is released.
func (s *Server) changeQueue(qs *queueState, change func() error) error {
	if err := s.check(); err != nil {
		return err
	}
	var j journal
	qs.mu.Lock()
	err := change()
	if err == nil {
		s.putQueueLocked(&j, qs)
	}
	qs.mu.Unlock()
	if err != nil {
		return err
	}
	return s.wait(&j)
}

func listQueueTags(s *Server, c *call, in *queueURLInput) (output, error) {
	qs, err := s.resolve(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	out := &pairsOutput{name: "Tags", entry: "Tag", key: "Key", value: "Value"}
	qs.mu.Lock()
	defer qs.mu.Unlock()
	for _, k := range slices.Sorted(maps.Keys(qs.tags)) {
		out.pairs = append(out.pairs, [2]string{k, qs.tags[k]})
	}
	return out, nil
}

package sqsapi

import (
	"encoding/base64"
	"errors"
	"slices"
	"strings"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
)

// The actions on queues: CreateQueue, GetQueueUrl, ListQueues, DeleteQueue, GetQueueAttributes,
// SetQueueAttributes, PurgeQueue and ListDeadLetterSourceQueues (the tags are in tags.go).

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
	if err := checkTags(in.Tags); err != nil {
		return nil, err
	}
	ns := s.requestNS(c.r)
	if _, err := s.createQueue(c.ctx, ns, in.QueueName, in.Attributes, in.Tags); err != nil {
		return nil, err
	}
	return queueURLOutput(s.urlOf(c, ns, in.QueueName)), nil
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
			return nil, s.unknownQueue(c, catalog.Namespace{Account: owner, Region: ns.Region}, in.QueueName)
		}
		ns.Account = owner
	}
	q, ok := s.cat.Queue(ns, in.QueueName)
	if !ok {
		return nil, s.unknownQueue(c, ns, in.QueueName)
	}
	return queueURLOutput(s.urlOf(c, q.Namespace(), q.Name())), nil
}

// queueURLsOutput is the result of ListQueues and ListDeadLetterSourceQueues.
type queueURLsOutput struct {
	name     string // QueueUrls, or queueUrls
	required bool   // sent even when empty
	urls     []string
	next     string
}

func (o *queueURLsOutput) encode(e encoder) {
	if qe, ok := e.(*queryJSONEncoder); ok && o.name == "QueueUrls" {
		o.encodeQueryJSON(qe)
		return
	}
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

// encodeQueryJSON writes ListQueues' result as AWS answers a query request that asks for JSON, as
// recorded (JuliaCloud/AWS.jl#127, 2020): {"NextExclusiveStartQueueName": null, "NextToken": null,
// "queueUrls": [...]}, with null for an empty list and for a member without a value.
func (o *queueURLsOutput) encodeQueryJSON(e *queryJSONEncoder) {
	e.null("NextExclusiveStartQueueName")
	e.strOrNull("NextToken", o.next)
	if len(o.urls) == 0 {
		e.null("queueUrls")
		return
	}
	e.key("queueUrls")
	e.open('[')
	for _, u := range o.urls {
		e.listStr(u)
	}
	e.close(']')
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
	queues := s.cat.List(s.requestNS(c.r), in.QueueNamePrefix)
	out := &queueURLsOutput{name: "QueueUrls"}
	err := s.paginate(c, queues, in.NextToken, in.MaxResults, out)
	return out, err
}

// paginate fills out with the URLs of the queues after NextToken (a queue name, base64-encoded), at most
// maxResults of them (1..1000), and the token of the next page. Without maxResults it returns up to 1000
// queues and no token, as SQS does.
func (s *Server) paginate(c *call, queues []catalog.Queue, token string, maxResults *int, out *queueURLsOutput) error {
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
		i := slices.IndexFunc(queues, func(q catalog.Queue) bool { return q.Name() > string(after) })
		if i < 0 {
			i = len(queues)
		}
		queues = queues[i:]
	}
	for i, q := range queues {
		if i == limit {
			if maxResults != nil {
				out.next = base64.RawURLEncoding.EncodeToString([]byte(queues[i-1].Name()))
			}
			break
		}
		out.urls = append(out.urls, s.urlOf(c, q.Namespace(), q.Name()))
	}
	return nil
}

type queueURLInput struct{ QueueUrl string }

func (in *queueURLInput) fromQuery(f *form) error {
	in.QueueUrl = f.get("QueueUrl")
	return nil
}

func deleteQueue(s *Server, c *call, in *queueURLInput) (output, error) {
	q, err := s.resolve(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	return nil, s.deleteQueue(c.ctx, q)
}

func purgeQueue(s *Server, c *call, in *queueURLInput) (output, error) {
	q, err := s.resolve(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if err := q.Purge(c.ctx); err != nil {
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
	q, err := s.resolve(c, in.QueueUrl)
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
	d, ok := s.cat.Definition(q.Namespace(), q.Name())
	if !ok {
		return nil, queueDoesNotExist(!c.json) // deleted meanwhile
	}
	var stats fifoq.Stats
	if slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "ApproximateNumberOfMessages") }) {
		stats = q.Stats() // one look for the three counts, so they agree
	}
	for _, name := range attributeOrder {
		if !slices.Contains(names, name) {
			continue
		}
		if val, ok := value(q, &d, stats, name); ok {
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
	q, err := s.resolve(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if len(in.Attributes) == 0 {
		return nil, nil
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	return nil, s.setQueueAttributes(c, q, in.Attributes)
}

// setQueueAttributes makes the changes of SetQueueAttributes: the catalogue's, once they are decoded.
func (s *Server) setQueueAttributes(c *call, q catalog.Queue, attrs map[string]string) error {
	fifo := q.FIFO()
	set, aerr := s.parseAttributes(fifo, attrs, q.Namespace())
	if aerr == nil {
		aerr = s.checkSources(q.Namespace(), set)
	}
	if aerr != nil {
		return aerr
	}
	err := s.cat.Update(c.ctx, q.Namespace(), q.Name(), func(d *catalog.Definition) error {
		d.Apply(set.def, set.fields)
		return nil
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, catalog.ErrQueueDoesNotExist):
		return queueDoesNotExist(!c.json) // deleted meanwhile
	}
	return set.coreError(err, q.ARN(), fifo)
}

func listDeadLetterSourceQueues(s *Server, c *call, in *listSourcesInput) (output, error) {
	q, err := s.resolve(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	sources := s.cat.DeadLetterSources(q.Namespace(), q.Name())
	out := &queueURLsOutput{name: "queueUrls", required: true}
	err = s.paginate(c, sources, in.NextToken, in.MaxResults, out)
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

// changed returns the answer to a change of a queue's definition that the catalogue made, or refused with
// err: a queue deleted meanwhile does not exist.
func (s *Server) changed(c *call, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, catalog.ErrQueueDoesNotExist):
		return queueDoesNotExist(!c.json)
	}
	return coreError(err)
}

package sqsapi

import (
	"maps"
	"slices"

	"github.com/fifoq/fifoq/catalog"
)

// TagQueue, UntagQueue and ListQueueTags.

// checkTags checks the tags of a CreateQueue, by the catalogue's rule, before anything else, as SQS does.
func checkTags(tags map[string]string) *apiError {
	d := catalog.Definition{Tags: tags}
	if err := d.Check(false, catalog.FieldTags); err != nil {
		return coreError(err)
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
	q, err := s.resolve(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if len(in.Tags) == 0 {
		return nil, missing("Tags")
	}
	return nil, s.changed(c, s.cat.TagQueue(c.ctx, q.Namespace(), q.Name(), in.Tags))
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
	q, err := s.resolve(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if c.json && in.TagKeys == nil {
		return nil, missing("TagKeys") // an empty list, or none in a form, is the catalogue's to refuse
	}
	return nil, s.changed(c, s.cat.UntagQueue(c.ctx, q.Namespace(), q.Name(), in.TagKeys))
}

func listQueueTags(s *Server, c *call, in *queueURLInput) (output, error) {
	q, err := s.resolve(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	out := &pairsOutput{name: "Tags", entry: "Tag", key: "Key", value: "Value"}
	d, ok := s.cat.Definition(q.Namespace(), q.Name())
	if !ok {
		return nil, queueDoesNotExist(!c.json) // deleted meanwhile
	}
	for _, k := range slices.Sorted(maps.Keys(d.Tags)) {
		out.pairs = append(out.pairs, [2]string{k, d.Tags[k]})
	}
	return out, nil
}

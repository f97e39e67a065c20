package catalog

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/topic"
)

// The records of a catalogue's topics in a store, beside those of catalog_store.go:
//
//	[keyCatalog] 'T' account 0x00 region 0x00 name          -> a topic: its settings, stored attributes,
//	                                                           tags and creation time
//	[keyCatalog] 'S' account 0x00 region 0x00 name 0x00 id  -> a subscription of that topic, id the UUID
//	                                                           that ends its ARN
//
// Every value is catalogVersion and JSON. Each change of a topic or subscription writes its record whole,
// under the catalogue's topic lock, so the store holds the last one; the call waits for it after releasing
// the lock. DeleteTopic deletes the topic's record and the range of its subscriptions in one batch.
const (
	catalogTopicKind        byte = 'T'
	catalogSubscriptionKind byte = 'S'
)

// topicKeyPart is the part of a topic's keys that names it.
func topicKeyPart(k catalogKey) string { return k.ns.Account + "\x00" + k.ns.Region + "\x00" + k.name }

func topicRecordKey(k catalogKey) []byte { return catalogKeyOf(catalogTopicKind, topicKeyPart(k)) }

func subscriptionRecordKey(k catalogKey, id string) []byte {
	return catalogKeyOf(catalogSubscriptionKind, topicKeyPart(k)+"\x00"+id)
}

// subscriptionRange returns the keys of the subscriptions of topic k.
func subscriptionRange(k catalogKey) (lo, hi []byte) {
	return catalogKeyOf(catalogSubscriptionKind, topicKeyPart(k)+"\x00"), catalogKeyOf(catalogSubscriptionKind, topicKeyPart(k)+"\x01")
}

// A topicRecord is a topic as stored.
type topicRecord struct {
	Account                   string            `json:"account"`
	Region                    string            `json:"region"`
	Name                      string            `json:"name"`
	Created                   int64             `json:"created"` // Unix nanoseconds
	ContentBasedDeduplication bool              `json:"contentBasedDeduplication,omitempty"`
	SignatureVersion          string            `json:"signatureVersion,omitempty"`
	Stored                    map[string]string `json:"stored,omitempty"`
	Tags                      map[string]string `json:"tags,omitempty"`
}

// A subscriptionRecord is a subscription as stored; its topic is in its key.
type subscriptionRecord struct {
	ID                 string            `json:"id"`
	QueueAccount       string            `json:"queueAccount"`
	QueueRegion        string            `json:"queueRegion"`
	Queue              string            `json:"queue"`
	Owner              string            `json:"owner,omitempty"`
	RawMessageDelivery bool              `json:"rawMessageDelivery,omitempty"`
	FilterPolicy       string            `json:"filterPolicy,omitempty"`
	FilterPolicyScope  string            `json:"filterPolicyScope,omitempty"`
	DLQAccount         string            `json:"dlqAccount,omitempty"`
	DLQRegion          string            `json:"dlqRegion,omitempty"`
	DLQ                string            `json:"dlq,omitempty"`
	Stored             map[string]string `json:"stored,omitempty"`
}

// putTopicLocked records e. The topic lock must be held.
func (c *Catalog) putTopicLocked(j *journal, e *catalogTopic) {
	c.topicCommit(j, func(b *fifoq.RecordBatch) {
		a := e.t.Attributes()
		b.Set(topicRecordKey(e.key), encodeRecord(topicRecord{Account: e.key.ns.Account, Region: e.key.ns.Region,
			Name: e.key.name, Created: e.def.Created.UnixNano(), ContentBasedDeduplication: a.ContentBasedDeduplication,
			SignatureVersion: a.SignatureVersion, Stored: e.def.Stored, Tags: e.def.Tags}))
	})
}

// deleteTopicLocked removes the records of e and its subscriptions. The topic lock must be held.
func (c *Catalog) deleteTopicLocked(j *journal, e *catalogTopic) {
	c.topicCommit(j, func(b *fifoq.RecordBatch) {
		b.Delete(topicRecordKey(e.key))
		b.DeleteRange(subscriptionRange(e.key))
	})
}

// subscriptionID returns the UUID that ends a subscription's ARN.
func subscriptionID(arn string) string { return arn[strings.LastIndexByte(arn, ':')+1:] }

// putSubscriptionLocked records s. The topic lock must be held.
func (c *Catalog) putSubscriptionLocked(j *journal, s *catalogSub) {
	c.topicCommit(j, func(b *fifoq.RecordBatch) {
		d := &s.def
		r := subscriptionRecord{ID: subscriptionID(s.s.ARN()), QueueAccount: d.Queue.Namespace.Account,
			QueueRegion: d.Queue.Namespace.Region, Queue: d.Queue.Name, Owner: d.Owner, RawMessageDelivery: d.RawMessageDelivery,
			FilterPolicy: d.FilterPolicy, FilterPolicyScope: string(d.FilterPolicyScope), Stored: d.Stored}
		if q := d.DeadLetterQueue; q != nil {
			r.DLQAccount, r.DLQRegion, r.DLQ = q.Namespace.Account, q.Namespace.Region, q.Name
		}
		b.Set(subscriptionRecordKey(s.topic.key, r.ID), encodeRecord(r))
	})
}

// deleteSubscriptionLocked removes the record of s. The topic lock must be held.
func (c *Catalog) deleteSubscriptionLocked(j *journal, s *catalogSub) {
	c.topicCommit(j, func(b *fifoq.RecordBatch) { b.Delete(subscriptionRecordKey(s.topic.key, subscriptionID(s.s.ARN()))) })
}

// storedTopics are the topic records Open read, to recover once the queues are.
type storedTopics struct {
	topics []topicRecord
	subs   map[catalogKey][]subscriptionRecord
}

// readTopicRecord reads a topic or subscription record into st; it reports false for a key of another kind.
func readTopicRecord(st *storedTopics, k, v []byte) (bool, error) {
	switch k[0] {
	case catalogTopicKind:
		var r topicRecord
		if err := decodeRecord(v, &r); err != nil {
			return true, err
		}
		if topicKeyPart(catalogKey{Namespace{r.Account, r.Region}, r.Name}) != string(k[1:]) {
			return true, errors.New("the record names another topic than its key")
		}
		st.topics = append(st.topics, r)
		return true, nil
	case catalogSubscriptionKind:
		parts := strings.Split(string(k[1:]), "\x00")
		if len(parts) != 4 {
			return true, errors.New("bad key")
		}
		var r subscriptionRecord
		if err := decodeRecord(v, &r); err != nil {
			return true, err
		}
		if r.ID != parts[3] || r.Queue == "" {
			return true, fmt.Errorf("subscription %q of queue %q under the key of %q", r.ID, r.Queue, parts[3])
		}
		if st.subs == nil {
			st.subs = make(map[catalogKey][]subscriptionRecord)
		}
		tk := catalogKey{Namespace{parts[0], parts[1]}, parts[2]}
		st.subs[tk] = append(st.subs[tk], r)
		return true, nil
	}
	return false, nil
}

// recoverTopics re-creates the topics and subscriptions of the records; a subscription whose topic record
// is missing (which no change of the catalogue leaves) is dropped in tidy.
func (c *Catalog) recoverTopics(st *storedTopics, tidy *fifoq.RecordBatch) error {
	b := c.book()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range st.topics {
		k := catalogKey{Namespace{r.Account, r.Region}, r.Name}
		a := topic.Attributes{ContentBasedDeduplication: r.ContentBasedDeduplication, SignatureVersion: r.SignatureVersion}
		t, err := topic.New(r.Name, c.topicOptions(k.ns, a)...)
		if err != nil {
			return c.corrupt(topicRecordKey(k), err)
		}
		e := &catalogTopic{t: t, key: k, def: TopicDefinition{Stored: r.Stored, Tags: r.Tags, Created: time.Unix(0, r.Created)}}
		b.topics[k] = e
		for _, sr := range st.subs[k] {
			d := SubscriptionDefinition{Queue: QueueKey{Namespace{sr.QueueAccount, sr.QueueRegion}, sr.Queue}, Owner: sr.Owner,
				RawMessageDelivery: sr.RawMessageDelivery, FilterPolicy: sr.FilterPolicy,
				FilterPolicyScope: topic.FilterPolicyScope(sr.FilterPolicyScope), Stored: sr.Stored}
			if sr.DLQ != "" {
				d.DeadLetterQueue = &QueueKey{Namespace{sr.DLQAccount, sr.DLQRegion}, sr.DLQ}
			}
			s, err := t.Subscribe(endpoint{c, d.Queue}, c.subscriptionAttributes(&d), topic.WithSubscriptionARN(t.ARN()+":"+sr.ID))
			if err != nil {
				return c.corrupt(subscriptionRecordKey(k, sr.ID), err)
			}
			d.FilterPolicyScope = s.Attributes().FilterPolicyScope
			cs := &catalogSub{s: s, topic: e, def: d}
			e.subs = append(e.subs, cs)
			b.subs[s.ARN()] = cs
		}
		delete(st.subs, k)
	}
	for k := range st.subs {
		c.warn("catalog: stored subscriptions of a topic that is not stored are dropped", "topic", k.name,
			"account", k.ns.Account, "region", k.ns.Region)
		tidy.DeleteRange(subscriptionRange(k))
	}
	return nil
}

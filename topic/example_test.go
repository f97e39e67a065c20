package topic_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/topic"
)

// exTopicBodies returns the bodies q holds, oldest first, without receiving them.
// exStart is the start time of the manual clocks in these examples; any time would do.
var exStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func exTopicBodies(q *fifoq.Queue) []string {
	var out []string
	for s := range q.Messages() {
		out = append(out, s.Body)
	}
	return out
}

// A topic fans a message out to every subscribed queue, before Publish returns: with raw delivery the queue
// gets the message itself, otherwise SNS's JSON envelope around it.
func ExampleTopic_Publish() {
	ctx := context.Background()
	orders, err := topic.New("orders", topic.WithClock(fifoq.NewManualClock(exStart)))
	if err != nil {
		log.Fatal(err)
	}
	billing, err := fifoq.New("billing")
	if err != nil {
		log.Fatal(err)
	}
	shipping, err := fifoq.New("shipping")
	if err != nil {
		log.Fatal(err)
	}
	if _, err := orders.Subscribe(billing, topic.SubscriptionAttributes{RawMessageDelivery: true}); err != nil {
		log.Fatal(err)
	}
	if _, err := orders.Subscribe(shipping, topic.SubscriptionAttributes{}); err != nil {
		log.Fatal(err)
	}

	_, err = orders.Publish(ctx, topic.Message{
		Message:    `{"order": 42}`,
		Subject:    "new order",
		Attributes: map[string]fifoq.Attribute{"region": {DataType: "String", StringValue: "eu"}},
	})
	if err != nil {
		log.Fatal(err)
	}

	fmt.Println("billing:", exTopicBodies(billing)[0])
	e, err := topic.ParseEnvelope(exTopicBodies(shipping)[0])
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("shipping:", e.Type, e.TopicARN, e.Subject, e.Message, e.Timestamp, e.MessageAttributes["region"].Value)
	// Output:
	// billing: {"order": 42}
	// shipping: Notification arn:aws:sns:us-east-1:000000000000:orders new order {"order": 42} 2025-01-01T00:00:00.000Z eu
}

// A subscription's filter policy picks the messages its queue receives, by their attributes (the default
// scope) or by their body.
func ExampleSubscriptionAttributes_filterPolicy() {
	ctx := context.Background()
	events, err := topic.New("events")
	if err != nil {
		log.Fatal(err)
	}
	big, err := fifoq.New("big-orders")
	if err != nil {
		log.Fatal(err)
	}
	eu, err := fifoq.New("eu-orders")
	if err != nil {
		log.Fatal(err)
	}
	_, err = events.Subscribe(big, topic.SubscriptionAttributes{
		RawMessageDelivery: true,
		FilterPolicy:       `{"order": {"total": [{"numeric": [">=", 100]}]}}`,
		FilterPolicyScope:  topic.FilterPolicyScopeMessageBody,
	})
	if err != nil {
		log.Fatal(err)
	}
	_, err = events.Subscribe(eu, topic.SubscriptionAttributes{
		RawMessageDelivery: true,
		FilterPolicy:       `{"country": ["fr", "de"], "kind": [{"anything-but": "test"}]}`,
	})
	if err != nil {
		log.Fatal(err)
	}

	attrs := func(country, kind string) map[string]fifoq.Attribute {
		return map[string]fifoq.Attribute{
			"country": {DataType: "String", StringValue: country},
			"kind":    {DataType: "String", StringValue: kind},
		}
	}
	for _, m := range []topic.Message{
		{Message: `{"order": {"id": 1, "total": 250}}`, Attributes: attrs("fr", "order")},
		{Message: `{"order": {"id": 2, "total": 20}}`, Attributes: attrs("de", "test")},
		{Message: `{"order": {"id": 3, "total": 120}}`, Attributes: attrs("us", "order")},
	} {
		if _, err := events.Publish(ctx, m); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println("big orders:", exTopicBodies(big))
	fmt.Println("EU orders:", exTopicBodies(eu))
	m := events.Metrics()
	fmt.Printf("delivered %d, filtered out %d\n", m.Delivered, m.FilteredOut)
	// Output:
	// big orders: [{"order": {"id": 1, "total": 250}} {"order": {"id": 3, "total": 120}}]
	// EU orders: [{"order": {"id": 1, "total": 250}}]
	// delivered 3, filtered out 3
}

// A FIFO topic delivers a group's messages to a FIFO queue in publish order, drops a message whose
// deduplication id it accepted in the last 5 minutes, and passes the group and deduplication ids on.
func ExampleTopic_fifo() {
	ctx := context.Background()
	clock := fifoq.NewManualClock(exStart)
	payments, err := topic.New("payments.fifo", topic.WithClock(clock))
	if err != nil {
		log.Fatal(err)
	}
	ledger, err := fifoq.New("ledger.fifo", fifoq.WithClock(clock))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := payments.Subscribe(ledger, topic.SubscriptionAttributes{RawMessageDelivery: true}); err != nil {
		log.Fatal(err)
	}

	for _, id := range []string{"pay-1", "pay-2", "pay-1"} {
		res, err := payments.Publish(ctx, topic.Message{Message: "payment " + id, GroupID: "account-7", DeduplicationID: id})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: sequence number %s, duplicate %v\n", id, res.SequenceNumber, res.Duplicate)
	}
	for s := range ledger.Messages() {
		fmt.Printf("ledger: %q, group %s, deduplication id %s\n", s.Body, s.GroupID, s.DeduplicationID)
	}
	// Output:
	// pay-1: sequence number 00000000000000000001, duplicate false
	// pay-2: sequence number 00000000000000000002, duplicate false
	// pay-1: sequence number 00000000000000000001, duplicate true
	// ledger: "payment pay-1", group account-7, deduplication id pay-1
	// ledger: "payment pay-2", group account-7, deduplication id pay-2
}

// A filter policy can be parsed and tried on messages alone, as a front end does to check a policy for an
// endpoint that is not a queue.
func ExampleParseFilterPolicy() {
	p, err := topic.ParseFilterPolicy(`{"price_usd": [{"numeric": [">", 0, "<=", 150]}]}`, topic.FilterPolicyScopeMessageAttributes)
	if err != nil {
		log.Fatal(err)
	}
	for _, price := range []string{"99.5", "150", "151"} {
		m := topic.Message{Message: "m", Attributes: map[string]fifoq.Attribute{"price_usd": {DataType: "Number", StringValue: price}}}
		fmt.Println(price, p.Match(m))
	}
	_, err = topic.ParseFilterPolicy(`{"price_usd": [{"numeric": [">", 10, "<", 5]}]}`, "")
	fmt.Println(fifoq.ErrorCode(err), fifoq.ErrorMessage(err))
	// Output:
	// 99.5 true
	// 150 true
	// 151 false
	// InvalidParameter Invalid parameter: FilterPolicy: Bottom must be less than top
	//  at [Source: (String)"{"price_usd":[{"numeric":[">",10,"<",5]}]}"; line: 1, column: 40]
}

// Example_readme is the topics snippet of README.md: a topic whose filtered, raw subscription feeds a billing
// queue.
func Example_readme() {
	ctx := context.Background()
	billing, err := fifoq.New("billing")
	if err != nil {
		log.Fatal(err)
	}
	orders, _ := topic.New("orders")
	orders.Subscribe(billing, topic.SubscriptionAttributes{RawMessageDelivery: true,
		FilterPolicy: `{"kind": ["paid"]}`})
	orders.Publish(ctx, topic.Message{Message: "order 1 paid",
		Attributes: map[string]fifoq.Attribute{"kind": {DataType: "String", StringValue: "paid"}}})
	orders.Publish(ctx, topic.Message{Message: "order 2 created",
		Attributes: map[string]fifoq.Attribute{"kind": {DataType: "String", StringValue: "created"}}})

	ds, err := billing.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10})
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range ds {
		fmt.Println(d.Body)
	}
	// Output:
	// order 1 paid
}

// announce publishes a release to whatever topic it is given: code written against a Publisher runs on a
// *topic.Topic in a test, on a catalogue's topic, and on Amazon SNS through the sqsadapter module.
func announce(ctx context.Context, releases topic.Publisher, version string) error {
	_, err := releases.Publish(ctx, topic.Message{
		Message:    version,
		Attributes: map[string]fifoq.Attribute{"kind": {DataType: "String", StringValue: "release"}},
	})
	return err
}

// A Publisher is what code that publishes takes, so that the same code publishes in process and on SNS.
func ExamplePublisher() {
	releases, err := topic.New("releases", topic.WithClock(fifoq.NewManualClock(exStart)))
	if err != nil {
		log.Fatal(err)
	}
	inbox, err := fifoq.New("inbox")
	if err != nil {
		log.Fatal(err)
	}
	if _, err := releases.Subscribe(inbox, topic.SubscriptionAttributes{RawMessageDelivery: true}); err != nil {
		log.Fatal(err)
	}

	if err := announce(context.Background(), releases, "v1.2.0"); err != nil {
		log.Fatal(err)
	}
	fmt.Println(exTopicBodies(inbox))
	// Output: [v1.2.0]
}

// CheckMessage refuses what Publish would, without a topic: code that publishes elsewhere learns of a bad
// message before the network.
func ExampleCheckMessage() {
	err := topic.CheckMessage(topic.Message{Message: "price changed"}, true)
	fmt.Println(errors.Is(err, topic.ErrMissingGroupID), fifoq.ErrorCode(err))
	fmt.Println(topic.CheckMessage(topic.Message{Message: "price changed", GroupID: "sku-1"}, true))
	// Output:
	// true InvalidParameter
	// <nil>
}

package catalog_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"log"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/topic"
)

// A catalogue keeps topics beside its queues: a subscription names its queue by namespace and name, and in
// a store both survive a restart. A publish can say which endpoint and signer its envelopes name, as a
// server does for the URL its client reached it at.
func ExampleCatalog_CreateTopic() {
	ctx := context.Background()
	ns := catalog.Namespace{Account: "000000000000", Region: "us-east-1"}
	c := catalog.New(catalog.WithDefaultNamespace(ns), catalog.WithClock(fifoq.NewManualClock(exStart)))
	if _, err := c.CreateQueue(ctx, ns, "audit", catalog.Definition{}, 0); err != nil {
		log.Fatal(err)
	}
	orders, err := c.CreateTopic(ctx, ns, "orders", catalog.TopicDefinition{Stored: map[string]string{"DisplayName": "Orders"}})
	if err != nil {
		log.Fatal(err)
	}
	sub, err := c.Subscribe(ctx, ns, "orders", catalog.SubscriptionDefinition{Queue: catalog.QueueKey{Namespace: ns, Name: "audit"}})
	if err != nil {
		log.Fatal(err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		log.Fatal(err)
	}
	signer := topic.RSASigner{Key: key, CertURL: "http://127.0.0.1:9324/SimpleNotificationService-fifoq.pem"}
	if _, err := orders.Publish(ctx, topic.Message{Message: "order 42"},
		topic.WithPublishEndpoint("http://127.0.0.1:9324"), topic.WithPublishSigner(signer)); err != nil {
		log.Fatal(err)
	}

	q, _ := c.Queue(ns, "audit")
	var bodies []string
	for s := range q.Messages() {
		bodies = append(bodies, s.Body)
	}
	env, err := topic.ParseEnvelope(bodies[0])
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(orders.ARN())
	fmt.Println(env.Message, env.SigningCertURL)
	fmt.Println(env.UnsubscribeURL == "http://127.0.0.1:9324/?Action=Unsubscribe&SubscriptionArn="+sub.ARN)
	fmt.Println("verified:", env.Verify(&key.PublicKey) == nil)
	// Output:
	// arn:aws:sns:us-east-1:000000000000:orders
	// order 42 http://127.0.0.1:9324/SimpleNotificationService-fifoq.pem
	// true
	// verified: true
}

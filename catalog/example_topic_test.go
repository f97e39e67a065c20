package catalog_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"log"

	"github.com/fifoq/fifoq"
)

// A catalogue keeps topics beside its queues: a subscription names its queue by namespace and name, and in
// a store both survive a restart. A publish can say which endpoint and signer its envelopes name, as a
// server does for the URL its client reached it at.
func ExampleCatalog_CreateTopic() {
	ctx := context.Background()
	ns := fifoq.Namespace{Account: "000000000000", Region: "us-east-1"}
	c := fifoq.New(fifoq.WithDefaultNamespace(ns), fifoq.WithClock(fifoq.NewManualClock(exStart)))
	if _, err := c.CreateQueue(ctx, ns, "audit", fifoq.Definition{}, 0); err != nil {
		log.Fatal(err)
	}
	topic, err := c.CreateTopic(ctx, ns, "orders", fifoq.TopicDefinition{Stored: map[string]string{"DisplayName": "Orders"}})
	if err != nil {
		log.Fatal(err)
	}
	sub, err := c.Subscribe(ctx, ns, "orders", fifoq.SubscriptionDefinition{Queue: fifoq.QueueKey{Namespace: ns, Name: "audit"}})
	if err != nil {
		log.Fatal(err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		log.Fatal(err)
	}
	signer := fifoq.RSASigner{Key: key, CertURL: "http://127.0.0.1:9324/SimpleNotificationService-fifoq.pem"}
	if _, err := topic.Publish(ctx, fifoq.TopicMessage{Message: "order 42"},
		fifoq.WithPublishEndpoint("http://127.0.0.1:9324"), fifoq.WithPublishSigner(signer)); err != nil {
		log.Fatal(err)
	}

	q, _ := c.Queue(ns, "audit")
	env, err := fifoq.ParseEnvelope(exTopicBodies(q.Queue)[0])
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(topic.ARN())
	fmt.Println(env.Message, env.SigningCertURL)
	fmt.Println(env.UnsubscribeURL == "http://127.0.0.1:9324/?Action=Unsubscribe&SubscriptionArn="+sub.ARN)
	fmt.Println("verified:", env.Verify(&key.PublicKey) == nil)
	// Output:
	// arn:aws:sns:us-east-1:000000000000:orders
	// order 42 http://127.0.0.1:9324/SimpleNotificationService-fifoq.pem
	// true
	// verified: true
}

// Package topic gives fifoq queues Amazon SNS in front of them: a [Topic] fans a published message out to
// every subscribed queue whose filter policy it matches, with SNS's rules and error codes.
//
// [New] makes a topic (a FIFO topic when its name ends in ".fifo"), [Topic.Subscribe] subscribes a queue (an
// [Endpoint], such as a *fifoq.Queue) with [SubscriptionAttributes] (RawMessageDelivery, FilterPolicy,
// FilterPolicyScope, and a dead-letter queue for RedrivePolicy), and [Topic.Publish] (Publish) and
// [Topic.PublishBatch] (PublishBatch) deliver a [Message] to every subscribed queue whose filter policy it
// matches, before they return. A queue receives SNS's JSON [Envelope] around the message, or with raw
// delivery the message itself and its attributes as the queue message's attributes. A FIFO topic takes FIFO
// and standard queues, a standard topic standard queues; a FIFO topic requires a group id, drops a message
// whose deduplication id (explicit, or the SHA-256 of the message with [WithContentBasedDeduplication]) it
// accepted in the last 5 minutes, delivers each group in publish order, and passes the group id on to its
// FIFO queues and the deduplication id to all. A message a queue refuses goes to the subscription's
// dead-letter queue, or is lost, and Publish does not fail for it. On a store, a publish waits for one sync
// for all its deliveries, however many queues it reaches.
//
// Filter policies are SNS's language ([ParseFilterPolicy]): exact strings and numbers, prefix, suffix,
// equals-ignore-case, anything-but, numeric ranges, exists, cidr, "$or", and nested keys on the message body,
// with SNS's limits (5 keys, 150 combinations, 256 KiB) and error texts. Publish checks messages as SNS does
// (256 KiB with attributes, subject, attribute names and types, ids) with sentinels carrying SNS's error
// codes, such as [ErrInvalidFilterPolicy] (InvalidParameter); [CheckMessage] and [CheckBatch] apply those
// checks without a topic. [Topic.Metrics] returns the topic's CloudWatch metrics as [Metrics]. A standard
// topic signs its envelopes as SNS does with a [Signer] such as [RSASigner] ([WithSigner]); [Envelope.Verify]
// checks them. A topic, like a queue, starts no goroutines and reads time only from its clock
// ([WithClock]). The documentation of the repository, docs/topics.md, gives the envelope's layout, the whole
// policy language and the choices made where SNS is silent.
//
// # Publishing against an interface
//
// Code that publishes can take a [Publisher] rather than a *Topic: a *Topic satisfies it in a test or on one
// machine, a catalogue's topic in fifoq serve, and the topic of the sqsadapter module on Amazon SNS, so the
// same code runs on each. Creating topics and subscribing queues stay out of it: a catalogue does that in a
// process, infrastructure code on AWS.
//
// # Logging
//
// With [WithLogger], a topic logs one record per failed delivery: "fifoq: notification moved to the
// dead-letter queue" at Warn, "fifoq: notification lost" at Error (no dead-letter queue, or it refused the
// message too). Keys: topic, subscription (its ARN), queue, message_id, error, group when the message has
// one, dead_letter_queue when the subscription has one, and dead_letter_error when it refused. The keys are
// snake_case and stable, as those of package fifoq.
package topic

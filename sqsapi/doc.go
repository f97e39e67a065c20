// Package sqsapi serves the Amazon SQS API from fifoq queues, so that SQS clients in any language, the AWS
// SDKs and the AWS CLI among them, can use fifoq queues unchanged.
//
// A [Server] is an [net/http.Handler] that holds queues by account, region and name. It speaks
// both protocols SQS clients use: the JSON protocol (POST with Content-Type application/x-amz-json-1.0 and
// X-Amz-Target: AmazonSQS.<Action>, used by the AWS SDKs since 2023) and the query protocol (a form with
// Action=<Action>, in a POST body or a GET query string, answered in XML, used by older SDKs and tools). Every
// action of the SQS API is served.
//
// # Accounts and regions
//
// One server holds the queues of many accounts and regions, each apart: the same name in two regions, or
// two accounts, names two queues. A request acts in one account and region:
//   - its region is the one of its SigV4 credential scope (the Credential of the Authorization header, or
//     the X-Amz-Credential of a presigned request: the region the client is configured with), when it has
//     the form of a region name or is the default region; failing that, the first label of the request's
//     host that has the form of a region name (sqs.eu-west-1.localhost, eu-west-1.queue.localhost,
//     sqs.eu-west-1.amazonaws.com); failing that, the default region ([WithRegion]);
//   - its account is the access key id of its credential scope when that is a 12-digit number, else the
//     default account ([WithAccountID]).
//
// Queue URLs are <scheme>://<host of the request>/<account>/<name>, ARNs arn:<partition>:sqs:<region>:<account>:<name>,
// the partition of the region: aws-cn for cn-* regions, aws-us-gov for us-gov-*, aws for the others.
// A QueueUrl is resolved by its path alone, so any host reaches the server: /<account>/<name> names the queue
// of that account (another account's, too) in the request's region. A QueueUrl that is a queue name alone
// names the queue of that name in the request's account and region, as SQS accepts. CreateQueue, ListQueues
// and GetQueueUrl act in the request's account and region (GetQueueUrl's QueueOwnerAWSAccountId names
// another account). A dead-letter queue is in the account and region of its sources: a RedrivePolicy whose
// deadLetterTargetArn is in another is refused as a target that does not exist, and a RedriveAllowPolicy
// whose sourceQueueArns name another is refused. Move tasks name their queues by ARN. The SenderId of every
// message is the default account.
//
// # In process
//
// [Server.HTTPClient] returns a client that calls the server without a socket, for aws-sdk-go-v2 in tests:
//
//	srv := sqsapi.NewServer()
//	client := sqs.New(sqs.Options{
//		Region:       "us-east-1",
//		BaseEndpoint: aws.String("http://sqs.test"),
//		HTTPClient:   srv.HTTPClient(),
//		Credentials:  aws.AnonymousCredentials{},
//	})
//	created, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("orders")})
//	...
//	q, _ := srv.Queue("orders") // the catalogue's queue behind it, to inspect or drive directly
//
// # Over the network
//
// The server is an ordinary handler, so http.ListenAndServe("127.0.0.1:9324", sqsapi.NewServer()) makes an
// SQS endpoint for any client; point the client's endpoint URL at it. Command fifoq (cmd/fifoq) is such an
// endpoint, with flags, health and metrics endpoints and a graceful shutdown.
//
// To stop gracefully, call [Server.BeginShutdown] before http.Server.Shutdown: the ReceiveMessage long polls
// in progress end at once with no messages, as a wait that runs out does (a long poll whose wait ends this
// way has taken no message), later receives do not wait, and the other requests run to their end. Otherwise
// Shutdown would wait up to 20 seconds for each long poll. [Server.Catalog] lists the queues, for a metrics
// collector (package github.com/fifoq/fifoq/fifoqprom).
//
// A request body over the limit of [WithMaxRequestBytes] (8 MiB by default, which every valid request fits
// in any encoding) is refused with RequestEntityTooLarge, HTTP 413, and SQS's text for it ("HTTP content
// length exceeded ... bytes."); what it carries is held to SQS's limits as well: InvalidParameterValue for
// a message over its queue's MaximumMessageSize, BatchRequestTooLong for a batch over 1 MiB.
//
// # Logging
//
// With [WithLogger], the server logs through log/slog with the same keys in every record: each request at
// Debug ("sqsapi: request": action, queue, protocol, status, code, request_id, duration), failures on the
// server's side at Error (action, queue, code or error, with the cause a client is not shown; the
// refusals of a failed store, ServiceUnavailable, at Debug, for the store logs its failure), and the
// queues' moves to dead-letter queues at Warn (package fifoq logs those: queue, dead_letter_queue,
// message_id, receive_count, group). Client errors (4xx) are not logged above Debug: they are the
// client's to report.
//
// # Request metrics
//
// With [WithRequestObserver], the server tells a [RequestObserver] of each request it answers: its action,
// its error code and its duration, for request counts and latency histograms (package fifoqprom's
// RequestCollector exports them to Prometheus). The actions and codes are fixed sets, [UnknownAction] standing
// for any action the server does not serve, so a client cannot make new series.
//
// # Queues and their catalogue
//
// The server's queues are a [github.com/fifoq/fifoq/catalog.Catalog]'s ([Server.Catalog]), whose namespaces are the
// accounts and regions: the catalogue keeps each queue's definition and applies the rules of SQS's control
// plane (CreateQueue of an existing queue, QueueDeletedRecently, pending redrive policies, move tasks), and the
// server decodes requests into its calls, spells its queues as URLs and ARNs and its tasks as handles, and
// maps its errors, whose codes and messages are SQS's. A program can create, change and inspect the queues
// through the catalogue too.
//
// # Durable queues
//
// A server made with [NewServer] alone keeps its queues in a catalogue in memory: they are gone when the
// process ends. Given a catalogue kept in a [github.com/fifoq/fifoq.Store] ([WithCatalog]), such as one that
// package github.com/fifoq/fifoq/durable opens in a directory, a restart or a crash of the process loses
// nothing an action reported as done:
//
//	st, err := durable.Open("/var/lib/fifoq")
//	if err != nil {
//		return err
//	}
//	defer st.Close()
//	cat, err := catalog.Open(st) // github.com/fifoq/fifoq/catalog
//	if err != nil {
//		return err
//	}
//	defer cat.Close() // before st.Close: pauses the move tasks
//	srv := sqsapi.NewServer(sqsapi.WithCatalog(cat))
//	defer srv.Close() // ends the long polls; the catalogue is the program's to close
//
// What a restart keeps: every queue, with its attributes as GetQueueAttributes shows them (CreatedTimestamp
// and LastModifiedTimestamp included; Policy, the KMS and SSE attributes and RedriveAllowPolicy as they were
// given), its tags, and its redrive policy, bound to its dead-letter queue or pending while that queue is
// deleted; every message, with its attributes, AWSTraceHeader, receive count, visibility deadline and
// dead-letter origin, and the deduplication and receive request attempt ids of the last 5 minutes; receipt
// handles stay valid; the names deleted in the last 60 seconds, so QueueDeletedRecently counts the time the
// server was down;
// and the move tasks started through the API, the last 10 of each queue: a task running at a stop (Close)
// or a crash goes on when the server is opened again, from the counts it had (the count of moved messages
// is recorded with the messages it moves, so it is exact), and ListMessageMoveTasks lists the tasks with
// their handles as before. A rate-limited task waits a step's time before it goes on, so that its rate holds.
// Times are wall-clock instants, so visibility timeouts, delays and retention run on while it is down.
//
// Every action returns once its changes are on disk. The actions that change a queue's definition
// (CreateQueue, SetQueueAttributes, TagQueue, UntagQueue, AddPermission, RemovePermission, DeleteQueue)
// have the catalogue write the queue's whole definition, and wait for it after its locks are released, so
// concurrent actions share the disk's syncs; a change is visible to other requests a little before it is
// durable, never reported as done before. A message's AWSTraceHeader is in its own record: a SendMessage with one is
// one sync, as without. CreateQueue of a queue the store holds is CreateQueue of an existing queue: the same
// attributes return it, different ones fail with QueueAlreadyExists ([Server.DeclareQueue] changes them
// instead). When a write or a sync of the store fails (a full disk), the store fails for good: the action,
// and every later change of any queue, fails with ServiceUnavailable (HTTP 503) whose message names the
// cause, logged at Debug only; the store's Err returns the failure (errors.Is(err, fifoq.ErrStoreFailed),
// and the cause, such as syscall.ENOSPC) and its Failed channel is closed, for the program to stop and be
// restarted on the store, which recovers every change acknowledged before the failure.
//
// catalog.Open re-creates the queues, dead-letter queues before their sources, and finishes a DeleteQueue
// that a crash interrupted. A record that does not decode makes it fail with fifoq.ErrStoreCorrupt, naming
// the record, rather than open the store in part. Queues in the store that the catalogue holds no
// definition of (made with fifoq.New directly) are left alone. The package keeps no records of its own: all
// of the above is the catalogue's and the queues'.
//
// # Time
//
// With [WithClock] the queues the server creates run on the given clock (a [github.com/fifoq/fifoq.ManualClock]
// in tests), and so do the server's own rules, such as the 60 seconds before a deleted queue's name can be
// used again.
//
// # Differences from SQS
//
// Credentials are not checked unless [WithSignatureVerification] is given, and access policies are stored but
// never enforced. There is no encryption: the KMS and SSE attributes are stored and returned only. Message
// move tasks are listed only when they were started through the API or the server's catalogue, the last 10
// of each queue, and move messages within an account and region. A move task back to the
// source queues (StartMessageMoveTask without a DestinationArn) is refused while the dead-letter queue holds
// a message from a queue deleted since, which would have nowhere to go, and a running one is cancelled when
// such a queue is deleted. Counts are exact.
//
// As on SQS, deleting a dead-letter queue leaves the RedrivePolicy of its source queues in place: their
// messages stay with them past maxReceiveCount, and a queue created again with the dead-letter queue's name
// takes them back as its sources.
package sqsapi

// Package sqsapi serves the Amazon SQS API from fifoq queues, so that SQS clients in any language, the AWS
// SDKs and the AWS CLI among them, can use fifoq queues unchanged.
//
// A [Server] is an [net/http.Handler] that holds queues by name, like one account in one region. It speaks
// both protocols SQS clients use: the JSON protocol (POST with Content-Type application/x-amz-json-1.0 and
// X-Amz-Target: AmazonSQS.<Action>, used by the AWS SDKs since 2023) and the query protocol (a form with
// Action=<Action>, in a POST body or a GET query string, answered in XML, used by older SDKs and tools). Every
// action of the SQS API is served.
//
// Queue URLs are <scheme>://<host of the request>/<account>/<name>; a QueueUrl is resolved by its path alone,
// so any host reaches the server. ARNs are arn:aws:sqs:<region>:<account>:<name>.
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
//	q, _ := srv.Queue("orders") // the *fifoq.Queue behind it, to inspect or drive directly
//
// # Over the network
//
// The server is an ordinary handler, so http.ListenAndServe("127.0.0.1:9324", sqsapi.NewServer()) makes an
// SQS endpoint for any client; point the client's endpoint URL at it.
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
// never enforced. There is no encryption: the KMS and SSE attributes are stored and returned only. The
// AWSTraceHeader system attribute is kept by the server beside the queues, by MessageId (a fifoq.Message has
// no place for it): it follows a message into its dead-letter queue but not through a move task, and the
// server forgets it after 28 days or once 65,536 newer messages came with one. Message move tasks are
// listed only when they were started through the API, the last 10 of each queue. A move task back to the
// source queues (StartMessageMoveTask without a DestinationArn) is refused while the dead-letter queue holds
// a message from a queue deleted since, which would have nowhere to go, and a running one is cancelled when
// such a queue is deleted. Counts are exact.
//
// As on SQS, deleting a dead-letter queue leaves the RedrivePolicy of its source queues in place: their
// messages stay with them past maxReceiveCount, and a queue created again with the dead-letter queue's name
// takes them back as its sources.
package sqsapi

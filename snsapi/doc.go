// Package snsapi serves the Amazon SNS API from the topics of a [github.com/fifoq/catalog.Catalog], so that SNS
// clients (the AWS SDKs, the AWS CLI) publish to fifoq's topics and subscribe fifoq's queues to them.
//
// A [Server] speaks SNS's one protocol, the query protocol (a form with Action=<Action>, in a POST body or a
// GET query string, answered in XML in the namespace http://sns.amazonaws.com/doc/2010-03-31/, pretty-printed
// as SNS writes it); the AWS SDKs, boto3 and the AWS CLIs all use it for SNS. It serves CreateTopic,
// DeleteTopic, ListTopics, GetTopicAttributes, SetTopicAttributes, AddPermission, RemovePermission,
// TagResource, UntagResource, ListTagsForResource, Subscribe (the sqs protocol), Unsubscribe,
// ConfirmSubscription, ListSubscriptions, ListSubscriptionsByTopic, GetSubscriptionAttributes,
// SetSubscriptionAttributes, Publish, PublishBatch, PutDataProtectionPolicy and GetDataProtectionPolicy (the
// policy is stored and returned, not applied). Errors have SNS's shape:
//
//	<ErrorResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/">
//	  <Error>
//	    <Type>Sender</Type>
//	    <Code>NotFound</Code>
//	    <Message>Topic does not exist</Message>
//	  </Error>
//	  <RequestId>...</RequestId>
//	</ErrorResponse>
//
// with the HTTP status of SNS's model (NotFound 404, InvalidParameter 400, AuthorizationError 403), SNS's
// texts (a filter policy's errors with the location of SNS's rule compiler, a JSON attribute's with
// Jackson's) and SNS's order of checks.
//
// # Accounts and regions
//
// A request acts in the account and region package sqsapi finds for it (its credential scope, its host, the
// defaults): topics are kept per account and region as queues are, and their ARNs are
// arn:aws:sns:<region>:<account>:<name>. A TopicArn of another region is refused ("Invalid parameter:
// TopicArn"), as SNS refuses it; a subscription's queue may be of any account and region.
//
// # Delivery and signatures
//
// A publish delivers to every subscribed queue before it answers (fifoq.Topic.Publish), so a client can
// receive from the queue at once. The envelopes name the endpoint the publish request reached
// (UnsubscribeURL) and, with [WithSigningKey], are signed as SNS signs them, their SigningCertURL being the
// certificate the server serves on that same endpoint. A publish's X-Amzn-Trace-Id header reaches each queue
// as its AWSTraceHeader system attribute.
//
// # With SQS on one endpoint
//
// [Route] puts an SNS server and an SQS server (package sqsapi) behind one handler, telling their requests
// apart as AWS does; command fifoq serves both so.
package snsapi

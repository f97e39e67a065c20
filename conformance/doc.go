// Package conformance holds no code: its tests drive a [github.com/fifoq/fifoq/sqsapi] server through real SQS
// clients (aws-sdk-go-v2 here; boto3 and the AWS CLIs where the machine has them) and check that every answer is
// the one Amazon SQS gives. It is a module of its own so that the root module needs no AWS SDK.
package conformance

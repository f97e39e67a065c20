// Package rule is the one home of the rules of Amazon SQS and SNS that more than one package of fifoq applies:
// the error type behind fifoq.ErrorCode and fifoq.ErrorMessage with the sentinels of every rule, the
// validators of names, ids and message attributes, the ARNs of queues and topics with the partition of their
// region, and the checks that the wire APIs (sqsapi, snsapi) make as they read a request. Package fifoq, topic
// and catalog re-export the sentinels under their own documented names; library users never see this package.
package rule

package main

import (
	"bytes"
	"flag"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq/topic"
)

// The topics of a config file: each mistake is one line that names the file, the line and the column of the
// topic or the subscription, exits 2, and matches the topic package's sentinel where there is one.
func TestTopicConfigErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		content, want string
		is            error // nil: errUsage only
	}{
		{"{\"topics\": [\n  {\"attributes\": {}}]}", "f.json:2:3: topic 0 has no name", nil},
		{"{\"topics\": [{\"name\": \"a b\"}]}", "f.json:1:13: topic a b: topic: invalid name", topic.ErrInvalidName},
		{"{\"topics\": [\n  {\"name\": \"alerts\"},\n  {\"name\": \"alerts\"}]}", "f.json:3:3: topic alerts: declared twice (first at " + "DIR/f.json:2:3)", nil},
		{"{\"topics\": [\n  {\"name\": \"alerts\", \"attributes\": {\"DisplayName\": \"x\"}}]}",
			"f.json:2:3: topic alerts: attribute DisplayName: the config file takes FifoTopic, ContentBasedDeduplication, SignatureVersion", nil},
		{"{\"topics\": [{\"name\": \"alerts\", \"attributes\": {\"ContentBasedDeduplication\": true}}]}",
			"topic alerts: topic: invalid attribute: content-based deduplication on a standard topic", topic.ErrInvalidAttribute},
		{"{\"topics\": [{\"name\": \"e.fifo\", \"attributes\": {\"ContentBasedDeduplication\": \"maybe\"}}]}",
			`topic e.fifo: topic: invalid attribute: ContentBasedDeduplication "maybe", want true or false`, topic.ErrInvalidAttribute},
		{"{\"topics\": [{\"name\": \"alerts\", \"attributes\": {\"SignatureVersion\": 3}}]}",
			`topic alerts: topic: invalid attribute: signature version "3", want 1 or 2`, topic.ErrInvalidAttribute},
		{"{\"topics\": [{\"name\": \"e.fifo\", \"attributes\": {\"FifoTopic\": false}}]}",
			`topic e.fifo: attribute FifoTopic "false": a topic is FIFO when its name ends in .fifo`, nil},
		{"{\"topics\": [{\"name\": \"alerts\", \"attributes\": {\"FifoTopic\": true}}]}",
			`topic alerts: attribute FifoTopic "true": a topic is FIFO when its name ends in .fifo`, nil},
		{"{\"topics\": [{\"name\": \"alerts\",\n  \"subscriptions\": [\n    {\"rawMessageDelivery\": true}]}]}",
			`f.json:3:5: topic alerts: subscription 0: no queue: give "queue", a queue's name or ARN`, nil},
		{"{\"topics\": [{\"name\": \"alerts\",\n  \"subscriptions\": [{\"queue\": \"a\"},\n    {\"queue\": \"a/b\"}]}]}",
			`f.json:3:5: topic alerts: subscription 1 (queue a/b): queue "a/b": want a queue's name or an SQS ARN`, nil},
		{"{\"topics\": [{\"name\": \"alerts\",\n  \"subscriptions\": [{\"queue\": \"a\", \"filterPolicy\": {\"kind\": \"paid\"}}]}]}",
			`f.json:2:21: topic alerts: subscription 0 (queue a): filterPolicy: topic: invalid filter policy`, topic.ErrInvalidFilterPolicy},
		{"{\"topics\": [{\"name\": \"alerts\",\n  \"subscriptions\": [{\"queue\": \"a\", \"filterPolicy\": [\"kind\"]}]}]}",
			`f.json:2:21: topic alerts: subscription 0 (queue a): filterPolicy: want a JSON object, or a string that holds one`, nil},
		{"{\"topics\": [{\"name\": \"alerts\",\n  \"subscriptions\": [{\"queue\": \"a\", \"filterPolicy\": {\"a\": {\"b\": [1]}}}]}]}",
			`topic alerts: subscription 0 (queue a): filterPolicy: topic: invalid filter policy`, topic.ErrInvalidFilterPolicy},
		{"{\"topics\": [{\"name\": \"alerts\",\n  \"subscriptions\": [{\"queue\": \"a\", \"filterPolicyScope\": \"Body\", \"filterPolicy\": {\"k\": [\"v\"]}}]}]}",
			`topic alerts: subscription 0 (queue a): filterPolicy: topic: invalid filter policy scope`, topic.ErrInvalidFilterPolicyScope},
		{"{\"topics\": [{\"name\": \"alerts\",\n  \"subscriptions\": [{\"queue\": \"a\", \"redrivePolicy\": {\"maxReceiveCount\": 3}}]}]}",
			`topic alerts: subscription 0 (queue a): topic: invalid subscription redrive policy: redrivePolicy: unknown field "maxReceiveCount"`,
			topic.ErrInvalidRedrivePolicy},
		{"{\"topics\": [{\"name\": \"alerts\",\n  \"subscriptions\": [{\"queue\": \"a\", \"redrivePolicy\": {}}]}]}",
			`topic alerts: subscription 0 (queue a): topic: invalid subscription redrive policy: redrivePolicy: no deadLetterTargetArn`,
			topic.ErrInvalidRedrivePolicy},
		{"{\"topics\": [{\"name\": \"alerts\",\n  \"subscriptions\": [{\"queue\": \"a\"},\n    {\"queue\": \"a\", \"rawMessageDelivery\": true}]}]}",
			`f.json:3:5: topic alerts: subscription 1 (queue a): the queue is subscribed twice (first at DIR/f.json:2:21)`, nil},
		{"{\"topics\": [{\"name\": \"alerts\",\n  \"subscriptions\": [{\"queue\": \"a\", \"rawDelivery\": true}]}]}",
			`f.json:2:36: unknown field "rawDelivery"`, nil},
		{"{\"topics\": [{\"name\": \"alerts\",\n  \"subscriptions\": [{\"queue\": \"a\", \"rawMessageDelivery\": \"yes\"}]}]}",
			`f.json:2:62: topics.subscriptions.rawMessageDelivery: want true or false, not a string`, nil},
	} {
		path := filepath.Join(dir, "f.json")
		require.NoError(t, writeTo(path, tc.content))
		var stderr bytes.Buffer
		_, err := parseServe([]string{"--config", path}, noEnv, &stderr)
		require.ErrorIs(t, err, errUsage, "%s", tc.content)
		if tc.is != nil {
			require.ErrorIs(t, err, tc.is, "%s", tc.content)
		}
		want := strings.ReplaceAll(tc.want, "DIR/", dir+"/")
		if strings.HasPrefix(tc.want, "f.json") {
			want = "fifoq serve: config " + dir + "/" + want
		}
		require.Contains(t, stderr.String(), want, "%s", tc.content)
		require.Equal(t, 1, strings.Count(stderr.String(), "\n"), "%s: one line", tc.content)
	}
}

// What only the server can tell (the rules between a topic and its queues, the queues it holds) stops the
// start with status 2, naming the file, the line and the column of the subscription; nothing listens.
func TestServeDeclaredTopicErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ config, want string }{
		{"{\"queues\": [{\"name\": \"q.fifo\"}],\n \"topics\": [{\"name\": \"alerts\",\n  \"subscriptions\": [{\"queue\": \"q.fifo\"}]}]}",
			":3:21: topic alerts: subscription 0 (queue q.fifo): subscribe: topic: invalid subscription"},
		{"{\"topics\": [{\"name\": \"alerts\",\n  \"subscriptions\": [{\"queue\": \"nope\"}]}]}",
			":2:21: topic alerts: subscription 0 (queue nope): the server has no queue nope in account 000000000000 and region us-east-1"},
		{"{\"queues\": [{\"name\": \"q\"}],\n \"topics\": [{\"name\": \"alerts\",\n  \"subscriptions\": [{\"queue\": \"q\", \"redrivePolicy\": {\"deadLetterTargetArn\": \"arn:aws:sqs:us-east-1:000000000000:gone\"}}]}]}",
			":3:21: topic alerts: subscription 0 (queue q): redrivePolicy: the server has no queue gone"},
		{"{\"queues\": [{\"name\": \"q\"}, {\"name\": \"dlq.fifo\"}],\n \"topics\": [{\"name\": \"alerts\",\n  \"subscriptions\": [{\"queue\": \"q\", \"redrivePolicy\": {\"deadLetterTargetArn\": \"dlq.fifo\"}}]}]}",
			":3:21: topic alerts: subscription 0 (queue q): subscribe: topic: invalid subscription redrive policy"},
		{"{\"queues\": [{\"name\": \"q\"}],\n \"topics\": [{\"name\": \"alerts\",\n  \"subscriptions\": [{\"queue\": \"q\", \"filterPolicyScope\": \"Everything\"}]}]}",
			":3:21: topic alerts: subscription 0 (queue q): subscribe: topic: invalid filter policy scope"},
	} {
		config := writeFile(t, tc.config)
		code, stdout, stderr := runProcess(t, nil, "serve", "--addr", "127.0.0.1:0", "--config", config)
		require.Equal(t, 2, code, "%s: stderr %s", tc.config, stderr)
		require.Empty(t, stdout, "it never listened")
		require.Contains(t, stderr, "fifoq serve: config "+config+tc.want, "%s", tc.config)
	}
}

// snsAttributes is a GetTopicAttributes or GetSubscriptionAttributes answer.
type snsAttributes struct {
	Topic        []snsEntry `xml:"GetTopicAttributesResult>Attributes>entry"`
	Subscription []snsEntry `xml:"GetSubscriptionAttributesResult>Attributes>entry"`
}

type snsEntry struct {
	Key   string `xml:"key"`
	Value string `xml:"value"`
}

// attributes returns the attributes of the topic or subscription arn, by an SNS call of action.
func attributes(t *testing.T, endpoint, action, param, arn string) map[string]string {
	t.Helper()
	var a snsAttributes
	snsCall(t, endpoint, &a, "Action", action, param, arn)
	m := make(map[string]string)
	for _, e := range append(a.Topic, a.Subscription...) {
		m[e.Key] = e.Value
	}
	return m
}

// The round trip of a config file's topics: declared, served, published to through the SNS API, received
// from the queues through the SQS API, each subscription as declared (a filter policy on the attributes, raw
// delivery, a FIFO topic's group; a filter policy on the body, an envelope). A restart on the data directory
// with other declared values sets them back, with a warning for each, and keeps the subscriptions; one with
// the same file changes nothing.
func TestServeTopicConfigRoundTrip(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	config := func(raw, dedup string) string {
		return writeFile(t, `{
  "queues": [{"name": "billing.fifo"}, {"name": "audit"}, {"name": "audit-dlq"}],
  "topics": [
    {"name": "orders.fifo", "attributes": {"ContentBasedDeduplication": `+dedup+`},
     "subscriptions": [{"queue": "billing.fifo", "filterPolicy": {"kind": ["paid"]}, "rawMessageDelivery": `+raw+`}]},
    {"name": "alerts",
     "subscriptions": [{"queue": "arn:aws:sqs:us-east-1:000000000000:audit", "filterPolicyScope": "MessageBody",
       "filterPolicy": "{\"level\": [\"error\"]}", "redrivePolicy": {"deadLetterTargetArn": "audit-dlq"}}]}
  ]
}`)
	}
	receive := func(c *child, queue string) []string {
		t.Helper()
		client := c.client()
		url, err := client.GetQueueUrl(t.Context(), &sqs.GetQueueUrlInput{QueueName: aws.String(queue)})
		require.NoError(t, err)
		out, err := client.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: url.QueueUrl, MaxNumberOfMessages: 10})
		require.NoError(t, err)
		var bodies []string
		for _, m := range out.Messages {
			bodies = append(bodies, aws.ToString(m.Body))
		}
		return bodies
	}
	const ordersARN, alertsARN = "arn:aws:sns:us-east-1:000000000000:orders.fifo", "arn:aws:sns:us-east-1:000000000000:alerts"

	c := startChild(t, "serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--config", config("true", "true"))
	for _, kind := range []string{"paid", "refund", "paid"} { // the second paid is a duplicate, by content
		snsCall(t, c.endpoint, nil, "Action", "Publish", "TopicArn", ordersARN, "Message", "order 1 "+kind, "MessageGroupId", "order-1",
			"MessageAttributes.entry.1.Name", "kind", "MessageAttributes.entry.1.Value.DataType", "String",
			"MessageAttributes.entry.1.Value.StringValue", kind)
	}
	require.Equal(t, []string{"order 1 paid"}, receive(c, "billing.fifo"), "the paid order, raw, once")
	for _, level := range []string{"info", "error"} {
		snsCall(t, c.endpoint, nil, "Action", "Publish", "TopicArn", alertsARN, "Message", `{"level": "`+level+`"}`)
	}
	got := receive(c, "audit")
	require.Len(t, got, 1, "the error only: %v", got)
	env, err := topic.ParseEnvelope(got[0])
	require.NoError(t, err, "in an envelope: %s", got[0])
	require.Equal(t, `{"level": "error"}`, env.Message)
	require.Equal(t, alertsARN, env.TopicARN)

	var subs struct {
		Arns []string `xml:"ListSubscriptionsByTopicResult>Subscriptions>member>SubscriptionArn"`
	}
	snsCall(t, c.endpoint, &subs, "Action", "ListSubscriptionsByTopic", "TopicArn", alertsARN)
	require.Len(t, subs.Arns, 1)
	sa := attributes(t, c.endpoint, "GetSubscriptionAttributes", "SubscriptionArn", subs.Arns[0])
	require.Equal(t, "MessageBody", sa["FilterPolicyScope"])
	require.Equal(t, "false", sa["RawMessageDelivery"])
	require.JSONEq(t, `{"deadLetterTargetArn": "arn:aws:sqs:us-east-1:000000000000:audit-dlq"}`, sa["RedrivePolicy"])
	subs.Arns = nil
	snsCall(t, c.endpoint, &subs, "Action", "ListSubscriptionsByTopic", "TopicArn", ordersARN)
	require.Len(t, subs.Arns, 1)
	billing := subs.Arns[0]
	require.Equal(t, "true", attributes(t, c.endpoint, "GetSubscriptionAttributes", "SubscriptionArn", billing)["RawMessageDelivery"])
	c.stop(syscall.SIGTERM) // the logs are all in once it exited
	logs := c.stderr.String()
	require.Equal(t, 2, strings.Count(logs, "topic created"), "%s", logs)
	require.Equal(t, 2, strings.Count(logs, "subscription created"), "%s", logs)

	// Other values declared: set back, with a warning each; the subscription is the same one.
	c = startChild(t, "serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--config", config("false", "false"))
	require.Equal(t, "false", attributes(t, c.endpoint, "GetSubscriptionAttributes", "SubscriptionArn", billing)["RawMessageDelivery"])
	require.Equal(t, "false", attributes(t, c.endpoint, "GetTopicAttributes", "TopicArn", ordersARN)["ContentBasedDeduplication"])
	snsCall(t, c.endpoint, nil, "Action", "Publish", "TopicArn", ordersARN, "Message", "order 2 paid", "MessageGroupId", "order-2",
		"MessageDeduplicationId", "2", "MessageAttributes.entry.1.Name", "kind", "MessageAttributes.entry.1.Value.DataType", "String",
		"MessageAttributes.entry.1.Value.StringValue", "paid")
	got = receive(c, "billing.fifo")
	require.Len(t, got, 1)
	env, err = topic.ParseEnvelope(got[0])
	require.NoError(t, err, "no longer raw: %s", got[0])
	require.Equal(t, "order 2 paid", env.Message)
	c.stop(syscall.SIGTERM)
	logs = c.stderr.String()
	require.Contains(t, logs, `msg="stored attribute differs from the declared one: set to the declared value" topic=orders.fifo attribute=ContentBasedDeduplication stored=true declared=false`)
	require.Contains(t, logs, `topic=orders.fifo subscription_arn=`+billing+` attribute=RawMessageDelivery stored=true declared=false`)
	require.Equal(t, 2, strings.Count(logs, "stored attribute differs"), "%s", logs)

	// The same file again: nothing to change.
	c = startChild(t, "serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--config", config("false", "false"))
	subs.Arns = nil
	snsCall(t, c.endpoint, &subs, "Action", "ListSubscriptionsByTopic", "TopicArn", ordersARN)
	require.Equal(t, []string{billing}, subs.Arns)
	c.stop(syscall.SIGTERM)
	logs = c.stderr.String()
	require.NotContains(t, logs, "stored attribute differs")
	require.Equal(t, 2, strings.Count(logs, "subscription kept"), "%s", logs)
	require.Equal(t, 2, strings.Count(logs, "topic kept"), "%s", logs)
}

// The example topics file of the documentation (docs/wire-api.md) declares its topics and subscriptions as it
// says: each topic's attributes, each subscription's fields.
func TestServeExampleTopicsConfig(t *testing.T) {
	t.Parallel()
	c := startChildEnv(t, []string{"FIFOQ_ADDR=127.0.0.1:0", "FIFOQ_CONFIG=testdata/topics.json"}, "serve")
	const ordersARN, alertsARN = "arn:aws:sns:us-east-1:000000000000:orders.fifo", "arn:aws:sns:us-east-1:000000000000:alerts"
	ta := attributes(t, c.endpoint, "GetTopicAttributes", "TopicArn", ordersARN)
	require.Equal(t, "true", ta["FifoTopic"])
	require.Equal(t, "true", ta["ContentBasedDeduplication"])
	require.Equal(t, "2", attributes(t, c.endpoint, "GetTopicAttributes", "TopicArn", alertsARN)["SignatureVersion"])
	for topicARN, want := range map[string]map[string]string{
		ordersARN: {"Endpoint": "arn:aws:sqs:us-east-1:000000000000:billing.fifo", "RawMessageDelivery": "true",
			"FilterPolicy": `{"kind":["paid","refunded"]}`},
		alertsARN: {"Endpoint": "arn:aws:sqs:us-east-1:000000000000:audit", "RawMessageDelivery": "false",
			"FilterPolicy": `{"level":["error"]}`, "FilterPolicyScope": "MessageBody",
			"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:audit-dlq"}`},
	} {
		var subs struct {
			Arns []string `xml:"ListSubscriptionsByTopicResult>Subscriptions>member>SubscriptionArn"`
		}
		snsCall(t, c.endpoint, &subs, "Action", "ListSubscriptionsByTopic", "TopicArn", topicARN)
		require.Len(t, subs.Arns, 1, topicARN)
		sa := attributes(t, c.endpoint, "GetSubscriptionAttributes", "SubscriptionArn", subs.Arns[0])
		for k, v := range want {
			if strings.HasPrefix(v, "{") {
				require.JSONEq(t, v, sa[k], "%s %s", topicARN, k)
				continue
			}
			require.Equal(t, v, sa[k], "%s %s", topicARN, k)
		}
	}
	c.stop(syscall.SIGTERM)
}

// SNS is where SQS is in the help: fifoq's usage, and fifoq serve -h, which names the config file's topics.
func TestHelpSpeaksOfSNS(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"help"}, noEnv, &stdout, &stderr))
	require.Contains(t, stdout.String(), "over the Amazon SQS and SNS APIs")
	require.ErrorIs(t, run(t.Context(), []string{"serve", "-h"}, noEnv, &stdout, &stderr), flag.ErrHelp)
	help := stderr.String()
	for _, want := range []string{"topics over the Amazon\nSNS API", "filter policies, raw message delivery, dead-letter queues and FIFO topics",
		"keep the queues and topics in dir",
		`"topics":[{"name":"events.fifo","subscriptions":[{"queue":"orders.fifo"`} {
		require.Contains(t, help, want)
	}
}

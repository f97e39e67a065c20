package sqsapi_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/stretchr/testify/require"
)

// This file drives the server with the real AWS CLI, when one is installed: Debian's awscli 2.9 at
// /usr/bin/aws, which speaks the query protocol, or else the aws in PATH (a current CLI, which speaks the
// JSON protocol); FIFOQ_AWS_CLI chooses another. The CLI runs with dummy credentials, empty config files and a HOME of its own, so nothing
// from the machine leaks in.

// qpCLIPath returns the AWS CLI to run: the one FIFOQ_AWS_CLI names, else /usr/bin/aws, else the aws in
// PATH; or why there is none.
func qpCLIPath() (path, reason string) {
	if p := os.Getenv("FIFOQ_AWS_CLI"); p != "" {
		return p, ""
	}
	if fi, err := os.Stat("/usr/bin/aws"); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return "/usr/bin/aws", ""
	}
	if p, err := exec.LookPath("aws"); err == nil {
		return p, ""
	}
	return "", "the AWS CLI is not installed (no /usr/bin/aws and no aws in PATH); " +
		"apt-get install -y --no-install-recommends awscli to run this test"
}

// qpCLI runs one AWS CLI against one server.
type qpCLI struct {
	path     string
	major    int // 1 or 2
	endpoint string
	home     string
	env      []string
}

// qpCLIMajor returns the major version of the CLI at path.
func qpCLIMajor(t *testing.T, path string) int {
	t.Helper()
	c := qpNewCLI(t, path, 0, "")
	out, _, code := c.run(t, "--version")
	require.Zero(t, code, "%s --version", path)
	m := regexp.MustCompile(`aws-cli/(\d+)\.`).FindStringSubmatch(out)
	require.NotNil(t, m, "%s --version printed %q", path, out)
	t.Logf("%s: %s", path, strings.TrimSpace(out))
	major, _ := strconv.Atoi(m[1])
	return major
}

// qpNewCLI prepares a CLI with an environment of its own.
func qpNewCLI(t *testing.T, path string, major int, endpoint string) *qpCLI {
	t.Helper()
	dir := t.TempDir()
	config := filepath.Join(dir, "config")
	credentials := filepath.Join(dir, "credentials")
	require.NoError(t, os.WriteFile(config, nil, 0o600))
	require.NoError(t, os.WriteFile(credentials, nil, 0o600))
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+dir, "AWS_ACCESS_KEY_ID=AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY=qp-dummy-secret",
		"AWS_CONFIG_FILE="+config, "AWS_SHARED_CREDENTIALS_FILE="+credentials, "AWS_PAGER=",
		"AWS_EC2_METADATA_DISABLED=true")
	return &qpCLI{path: path, major: major, endpoint: endpoint, home: dir, env: env}
}

// run runs the CLI with args and returns what it printed and its exit code.
func (c *qpCLI) run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	// No time limit, which a slow machine could exceed: a CLI that hangs is reported by go test's -timeout.
	cmd := exec.Command(c.path, args...)
	cmd.Env = c.env
	cmd.Dir = c.home
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("%s %v: %v", c.path, args, err)
	}
	return out.String(), errb.String(), code
}

// sqs runs "aws sqs <args>" against the server; it must succeed, and its JSON output is decoded into v
// (when v is not nil).
func (c *qpCLI) sqs(t *testing.T, v any, args ...string) {
	t.Helper()
	full := []string{"--endpoint-url", c.endpoint, "--region", qpRegion, "--output", "json"}
	if c.major >= 2 {
		full = append(full, "--no-cli-pager") // a CLI v2 option; v1 has no pager
	}
	full = append(append(full, "sqs"), args...)
	out, errOut, code := c.run(t, full...)
	require.Zero(t, code, "aws %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
	if v != nil {
		require.NoError(t, json.Unmarshal([]byte(out), v), "aws %s printed %q", strings.Join(args, " "), out)
	}
}

// sqsFail runs "aws sqs <args>", which must fail, and returns what it printed on stderr.
func (c *qpCLI) sqsFail(t *testing.T, args ...string) string {
	t.Helper()
	full := []string{"--endpoint-url", c.endpoint, "--region", qpRegion, "--output", "json"}
	if c.major >= 2 {
		full = append(full, "--no-cli-pager")
	}
	out, errOut, code := c.run(t, append(append(full, "sqs"), args...)...)
	require.NotZero(t, code, "aws %s succeeded: %s", strings.Join(args, " "), out)
	return errOut
}

type qpCLIQueueURL struct {
	QueueURL string `json:"QueueUrl"`
}

type qpCLIQueueURLs struct {
	QueueURLs []string `json:"QueueUrls"`
}

type qpCLISend struct {
	MessageID              string `json:"MessageId"`
	MD5OfMessageBody       string `json:"MD5OfMessageBody"`
	MD5OfMessageAttributes string `json:"MD5OfMessageAttributes"`
	SequenceNumber         string `json:"SequenceNumber"`
}

type qpCLIBatch struct {
	Successful []struct {
		ID string `json:"Id"`
		qpCLISend
	} `json:"Successful"`
	Failed []struct {
		ID          string `json:"Id"`
		SenderFault bool   `json:"SenderFault"`
		Code        string `json:"Code"`
	} `json:"Failed"`
}

type qpCLIAttributeValue struct {
	StringValue string `json:"StringValue"`
	BinaryValue string `json:"BinaryValue"`
	DataType    string `json:"DataType"`
}

type qpCLIMessage struct {
	MessageID              string                         `json:"MessageId"`
	ReceiptHandle          string                         `json:"ReceiptHandle"`
	MD5OfBody              string                         `json:"MD5OfBody"`
	Body                   string                         `json:"Body"`
	Attributes             map[string]string              `json:"Attributes"`
	MD5OfMessageAttributes string                         `json:"MD5OfMessageAttributes"`
	MessageAttributes      map[string]qpCLIAttributeValue `json:"MessageAttributes"`
}

type qpCLIReceive struct {
	Messages []qpCLIMessage `json:"Messages"`
}

type qpCLIAttributes struct {
	Attributes map[string]string `json:"Attributes"`
}

type qpCLITags struct {
	Tags map[string]string `json:"Tags"`
}

func TestQpAWSCLI(t *testing.T) {
	path, reason := qpCLIPath()
	if path == "" {
		t.Skip(reason)
	}
	t.Parallel()
	major := qpCLIMajor(t, path)
	// Each CLI command takes a second or more (Python starting), so the commands run in two independent
	// groups side by side, each against a server of its own.
	for name, group := range map[string]func(*testing.T, *qpEnv, *qpCLI){
		"queues": qpCLIQueues, "messages": qpCLIMessages,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := qpSetup(t)
			group(t, e, qpNewCLI(t, path, major, e.base))
		})
	}
}

// qpCLIQueues runs the queue commands: create-queue (standard, and FIFO with attributes and tags),
// get-queue-url, list-queues, tag-queue, list-queue-tags, untag-queue, delete-queue, and a missing queue.
func qpCLIQueues(t *testing.T, e *qpEnv, c *qpCLI) {
	var std, fifo qpCLIQueueURL
	c.sqs(t, &std, "create-queue", "--queue-name", "qp-cli")
	qpRequireQueueURL(t, std.QueueURL, "qp-cli")
	c.sqs(t, &fifo, "create-queue", "--queue-name", "qp-cli.fifo",
		"--attributes", "FifoQueue=true,ContentBasedDeduplication=true,VisibilityTimeout=60", "--tags", "team=core")
	qpRequireQueueURL(t, fifo.QueueURL, "qp-cli.fifo")
	fq := qpQueue(t, e, "qp-cli.fifo")
	require.True(t, fq.FIFO())
	require.True(t, qpDef(t, e, "qp-cli.fifo").ContentBasedDeduplication)
	require.Equal(t, 60*time.Second, qpDef(t, e, "qp-cli.fifo").VisibilityTimeout)

	var got qpCLIQueueURL
	c.sqs(t, &got, "get-queue-url", "--queue-name", "qp-cli")
	require.Equal(t, std.QueueURL, got.QueueURL)
	var list qpCLIQueueURLs
	c.sqs(t, &list, "list-queues")
	require.ElementsMatch(t, []string{std.QueueURL, fifo.QueueURL}, list.QueueURLs)
	list = qpCLIQueueURLs{}
	c.sqs(t, &list, "list-queues", "--queue-name-prefix", "qp-cli.")
	require.Equal(t, []string{fifo.QueueURL}, list.QueueURLs)

	var tags qpCLITags
	c.sqs(t, &tags, "list-queue-tags", "--queue-url", fifo.QueueURL)
	require.Equal(t, map[string]string{"team": "core"}, tags.Tags)
	c.sqs(t, nil, "tag-queue", "--queue-url", std.QueueURL, "--tags", "a=1,b=2")
	tags = qpCLITags{}
	c.sqs(t, &tags, "list-queue-tags", "--queue-url", std.QueueURL)
	require.Equal(t, map[string]string{"a": "1", "b": "2"}, tags.Tags)
	c.sqs(t, nil, "untag-queue", "--queue-url", std.QueueURL, "--tag-keys", "a")
	tags = qpCLITags{}
	c.sqs(t, &tags, "list-queue-tags", "--queue-url", std.QueueURL)
	require.Equal(t, map[string]string{"b": "2"}, tags.Tags)

	c.sqs(t, nil, "delete-queue", "--queue-url", std.QueueURL)
	_, ok := e.srv.Queue("qp-cli")
	require.False(t, ok, "delete-queue left the queue")

	// A missing queue: the CLI exits non-zero and prints the query error code.
	stderr := c.sqsFail(t, "get-queue-url", "--queue-name", "qp-cli")
	require.Contains(t, stderr, "AWS.SimpleQueueService.NonExistentQueue", "stderr: %s", stderr)
	require.Contains(t, stderr, "GetQueueUrl", "stderr: %s", stderr)
}

// qpCLIMessages runs the message commands on queues made through the Go API: send-message with attributes,
// send-message-batch, receive-message with every attribute, change-message-visibility, delete-message,
// get-queue-attributes, set-queue-attributes, purge-queue.
func qpCLIMessages(t *testing.T, e *qpEnv, c *qpCLI) {
	_, err := e.srv.DeclareQueue("qp-cli", nil)
	require.NoError(t, err)
	_, err = e.srv.DeclareQueue("qp-cli.fifo", map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"})
	require.NoError(t, err)
	var std, fifo qpCLIQueueURL
	c.sqs(t, &std, "get-queue-url", "--queue-name", "qp-cli")
	fifo.QueueURL = strings.Replace(std.QueueURL, "qp-cli", "qp-cli.fifo", 1)

	// send-message with attributes. CLI v2 takes a blob parameter in base64; v1 takes its bytes as they are.
	binary := []byte("hello")
	binaryIn := base64.StdEncoding.EncodeToString(binary)
	if c.major < 2 {
		binaryIn = string(binary)
	}
	attrs := map[string]qpAttr{
		"MyAttribute": {DataType: "String", String: "foobar"},
		"Num":         {DataType: "Number", String: "42"},
		"Bin":         {DataType: "Binary", Binary: binary},
	}
	var sent qpCLISend
	c.sqs(t, &sent, "send-message", "--queue-url", std.QueueURL, "--message-body", "foobar", "--message-attributes",
		`{"MyAttribute":{"DataType":"String","StringValue":"foobar"},"Num":{"DataType":"Number","StringValue":"42"},`+
			`"Bin":{"DataType":"Binary","BinaryValue":"`+binaryIn+`"}}`)
	require.NotEmpty(t, sent.MessageID)
	require.Equal(t, qpFoobarMD5, sent.MD5OfMessageBody)
	require.Equal(t, qpMD5OfAttributes(attrs), sent.MD5OfMessageAttributes)
	require.Equal(t, binary, qpMessages(t, e, "qp-cli")[0].Attributes["Bin"].BinaryValue)

	// send-message-batch, standard and FIFO.
	var batch qpCLIBatch
	c.sqs(t, &batch, "send-message-batch", "--queue-url", std.QueueURL, "--entries",
		`[{"Id":"a","MessageBody":"one"},{"Id":"b","MessageBody":"two","DelaySeconds":0}]`)
	require.Len(t, batch.Successful, 2, "%+v", batch)
	require.Empty(t, batch.Failed)
	for _, s := range batch.Successful {
		require.NotEmpty(t, s.MessageID)
	}
	batch = qpCLIBatch{}
	c.sqs(t, &batch, "send-message-batch", "--queue-url", fifo.QueueURL, "--entries",
		`[{"Id":"1","MessageBody":"g1-m1","MessageGroupId":"g1"},{"Id":"2","MessageBody":"g1-m2","MessageGroupId":"g1"}]`)
	require.Len(t, batch.Successful, 2, "%+v", batch)
	for _, s := range batch.Successful {
		require.Regexp(t, `^[0-9]+$`, s.SequenceNumber)
	}

	// receive-message with every attribute.
	e.clock.Advance(2 * time.Second)
	var recv qpCLIReceive
	c.sqs(t, &recv, "receive-message", "--queue-url", std.QueueURL, "--attribute-names", "All",
		"--message-attribute-names", "All", "--max-number-of-messages", "10")
	require.Len(t, recv.Messages, 3)
	byBody := map[string]qpCLIMessage{}
	for _, m := range recv.Messages {
		byBody[m.Body] = m
		require.Equal(t, qpMD5([]byte(m.Body)), m.MD5OfBody)
		require.NotEmpty(t, m.ReceiptHandle)
		require.Equal(t, "1", m.Attributes["ApproximateReceiveCount"])
		require.Equal(t, qpMillis(qpStart), m.Attributes["SentTimestamp"])
		require.Equal(t, qpMillis(qpStart.Add(2*time.Second)), m.Attributes["ApproximateFirstReceiveTimestamp"])
		require.NotEmpty(t, m.Attributes["SenderId"])
	}
	m := byBody["foobar"]
	require.Equal(t, sent.MessageID, m.MessageID)
	require.Equal(t, map[string]qpCLIAttributeValue{
		"MyAttribute": {DataType: "String", StringValue: "foobar"},
		"Num":         {DataType: "Number", StringValue: "42"},
		"Bin":         {DataType: "Binary", BinaryValue: base64.StdEncoding.EncodeToString(binary)},
	}, m.MessageAttributes)
	require.Equal(t, sent.MD5OfMessageAttributes, m.MD5OfMessageAttributes)
	require.Empty(t, byBody["one"].MessageAttributes)

	var frecv qpCLIReceive
	c.sqs(t, &frecv, "receive-message", "--queue-url", fifo.QueueURL, "--attribute-names", "All",
		"--max-number-of-messages", "10")
	require.Len(t, frecv.Messages, 2)
	require.Equal(t, "g1-m1", frecv.Messages[0].Body, "group order")
	require.Equal(t, "g1", frecv.Messages[0].Attributes["MessageGroupId"])
	require.Equal(t, batch.Successful[0].SequenceNumber, frecv.Messages[0].Attributes["SequenceNumber"])

	// change-message-visibility, delete-message.
	c.sqs(t, nil, "change-message-visibility", "--queue-url", std.QueueURL,
		"--receipt-handle", byBody["one"].ReceiptHandle, "--visibility-timeout", "0")
	c.sqs(t, nil, "delete-message", "--queue-url", std.QueueURL, "--receipt-handle", byBody["two"].ReceiptHandle)
	states := map[string]fifoq.MessageState{}
	for _, s := range qpMessages(t, e, "qp-cli") {
		states[s.Body] = s.State
	}
	require.Equal(t, map[string]fifoq.MessageState{"foobar": fifoq.StateInFlight, "one": fifoq.StateVisible}, states)

	// get-queue-attributes, set-queue-attributes.
	var qa qpCLIAttributes
	c.sqs(t, &qa, "get-queue-attributes", "--queue-url", std.QueueURL, "--attribute-names", "All")
	require.Equal(t, "1", qa.Attributes["ApproximateNumberOfMessages"])
	require.Equal(t, "1", qa.Attributes["ApproximateNumberOfMessagesNotVisible"])
	require.Equal(t, "30", qa.Attributes["VisibilityTimeout"])
	require.Equal(t, qpArn("qp-cli"), qa.Attributes["QueueArn"])
	c.sqs(t, nil, "set-queue-attributes", "--queue-url", std.QueueURL, "--attributes", "VisibilityTimeout=120,DelaySeconds=2")
	require.Equal(t, 120*time.Second, qpDef(t, e, "qp-cli").VisibilityTimeout)
	qa = qpCLIAttributes{}
	c.sqs(t, &qa, "get-queue-attributes", "--queue-url", std.QueueURL, "--attribute-names", "VisibilityTimeout", "DelaySeconds")
	require.Equal(t, map[string]string{"VisibilityTimeout": "120", "DelaySeconds": "2"}, qa.Attributes)

	// purge-queue.
	c.sqs(t, nil, "purge-queue", "--queue-url", std.QueueURL)
	require.Empty(t, qpMessages(t, e, "qp-cli"))
}

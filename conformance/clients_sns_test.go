package conformance

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fifoq/fifoq/snsapi"
	"github.com/fifoq/fifoq/sqsapi"
)

// SNS through boto3 and the AWS CLIs (v1 from pip, v2 from Debian), wherever the machine has them: each
// publishes to a topic with a filtered and a raw subscription and receives through SQS, on one endpoint. A
// client that is not installed skips with the reason.

// snsClientServer starts SNS and SQS on one loopback endpoint.
func snsClientServer(t *testing.T) string {
	t.Helper()
	key, certPEM := snsTestKey(t)
	sq := sqsapi.NewServer()
	hs := httptest.NewServer(snsapi.Route(snsapi.NewServer(sq.Catalog(), snsapi.WithSigningKey(key, certPEM)), sq))
	t.Cleanup(hs.Close)
	return hs.URL
}

// snsClientEnv is a client process's environment: no AWS settings of the machine, dummy credentials.
func snsClientEnv(t *testing.T) []string {
	home := t.TempDir()
	for _, f := range []string{"config", "credentials"} {
		if err := os.WriteFile(filepath.Join(home, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	return append(env, "HOME="+home, "AWS_ACCESS_KEY_ID=AKIDCONFORMANCE", "AWS_SECRET_ACCESS_KEY=secret",
		"AWS_DEFAULT_REGION=us-east-1", "AWS_CONFIG_FILE="+filepath.Join(home, "config"),
		"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(home, "credentials"), "AWS_PAGER=", "AWS_EC2_METADATA_DISABLED=true")
}

func snsRun(t *testing.T, env []string, path string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := testDeadline(t) // go test's -timeout, not a time a slow machine reaches
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = env
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok && ctx.Err() == nil {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v\n%s", path, args, err, errb.String())
	}
	return out.String(), errb.String(), code
}

// snsFind returns the programs of candidates that exist, each once.
func snsFind(candidates ...string) []string {
	var found, seen []string
	for _, c := range candidates {
		p, err := exec.LookPath(c)
		if err != nil {
			continue
		}
		real, _ := filepath.EvalSymlinks(p)
		if slices.Contains(seen, real) {
			continue
		}
		seen, found = append(seen, real), append(found, p)
	}
	return found
}

const boto3SNSScript = `
import json, sys
import boto3
from botocore.exceptions import ClientError
url = sys.argv[1]
sns = boto3.client("sns", endpoint_url=url, region_name="us-east-1")
sqs = boto3.client("sqs", endpoint_url=url, region_name="us-east-1")
topic = sns.create_topic(Name="py")["TopicArn"]
raw = sqs.create_queue(QueueName="py-raw")["QueueUrl"]
big = sqs.create_queue(QueueName="py-big")["QueueUrl"]
sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint="arn:aws:sqs:us-east-1:000000000000:py-raw",
    Attributes={"RawMessageDelivery": "true"})
sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint="arn:aws:sqs:us-east-1:000000000000:py-big",
    Attributes={"FilterPolicy": json.dumps({"size": ["big"]})})
for size in ("small", "big"):
    sns.publish(TopicArn=topic, Message="a " + size + " one", Subject="s",
        MessageAttributes={"size": {"DataType": "String", "StringValue": size}})
got = [m["Body"] for m in sqs.receive_message(QueueUrl=raw, MaxNumberOfMessages=10)["Messages"]]
assert got == ["a small one", "a big one"], got
env = json.loads(sqs.receive_message(QueueUrl=big, MaxNumberOfMessages=10)["Messages"][0]["Body"])
assert env["Message"] == "a big one" and env["Type"] == "Notification", env
try:
    sns.get_topic_attributes(TopicArn=topic + "-none")
    raise SystemExit("no error")
except ClientError as e:
    assert e.response["Error"]["Code"] == "NotFound", e.response
    assert e.response["Error"]["Message"] == "Topic does not exist", e.response
    assert e.response["ResponseMetadata"]["HTTPStatusCode"] == 404, e.response
print("PASS botocore", __import__("botocore").__version__)
`

func TestSNSClientsBoto3(t *testing.T) {
	pythons := snsFind("python3", "/usr/bin/python3")
	if len(pythons) == 0 {
		t.Skip("no python3: install python3-boto3 or pip's boto3 to run this test")
	}
	t.Parallel()
	for _, py := range pythons {
		t.Run(strings.ReplaceAll(py, "/", "_"), func(t *testing.T) {
			t.Parallel()
			env := snsClientEnv(t)
			if _, errOut, code := snsRun(t, env, py, "-c", "import boto3"); code != 0 {
				t.Skipf("%s has no boto3 (%s): apt-get install python3-boto3, or pip install boto3", py, strings.TrimSpace(errOut))
			}
			out, errOut, code := snsRun(t, env, py, "-c", boto3SNSScript, snsClientServer(t))
			if code != 0 || !strings.Contains(out, "PASS") {
				t.Fatalf("boto3 under %s exited %d\nstdout:\n%s\nstderr:\n%s", py, code, out, errOut)
			}
			t.Log(strings.TrimSpace(out))
		})
	}
}

func TestSNSClientsAWSCLI(t *testing.T) {
	clis := snsFind("aws", "/usr/bin/aws")
	if len(clis) == 0 {
		t.Skip("no AWS CLI: install awscli (v2) or pip's awscli (v1) to run this test")
	}
	t.Parallel()
	for _, cli := range clis {
		t.Run(strings.ReplaceAll(cli, "/", "_"), func(t *testing.T) {
			t.Parallel()
			env, base := snsClientEnv(t), snsClientServer(t)
			run := func(v any, args ...string) {
				t.Helper()
				out, errOut, code := snsRun(t, env, cli, append([]string{"--endpoint-url", base, "--region", "us-east-1", "--output", "json"}, args...)...)
				if code != 0 {
					t.Fatalf("aws %s: exit %d\n%s\n%s", strings.Join(args, " "), code, out, errOut)
				}
				if v != nil {
					if err := json.Unmarshal([]byte(out), v); err != nil {
						t.Fatalf("aws %s printed %q: %v", strings.Join(args, " "), out, err)
					}
				}
			}
			var topic struct{ TopicArn string }
			run(&topic, "sns", "create-topic", "--name", "cli")
			var q struct{ QueueUrl string }
			run(&q, "sqs", "create-queue", "--queue-name", "cli-raw")
			run(nil, "sns", "subscribe", "--topic-arn", topic.TopicArn, "--protocol", "sqs",
				"--notification-endpoint", "arn:aws:sqs:us-east-1:000000000000:cli-raw", "--attributes", "RawMessageDelivery=true")
			run(nil, "sqs", "create-queue", "--queue-name", "cli-filtered")
			run(nil, "sns", "subscribe", "--topic-arn", topic.TopicArn, "--protocol", "sqs",
				"--notification-endpoint", "arn:aws:sqs:us-east-1:000000000000:cli-filtered",
				"--attributes", `{"FilterPolicy": "{\"k\": [\"yes\"]}"}`)
			run(nil, "sns", "publish", "--topic-arn", topic.TopicArn, "--message", "hello",
				"--message-attributes", `{"k": {"DataType": "String", "StringValue": "no"}}`)
			var got struct{ Messages []struct{ Body string } }
			run(&got, "sqs", "receive-message", "--queue-url", q.QueueUrl)
			if len(got.Messages) != 1 || got.Messages[0].Body != "hello" {
				t.Fatalf("receive-message printed %+v", got)
			}
			_, errOut, code := snsRun(t, env, cli, "--endpoint-url", base, "--region", "us-east-1", "sns",
				"get-topic-attributes", "--topic-arn", topic.TopicArn+"-none")
			if code == 0 || !strings.Contains(errOut, "(NotFound)") || !strings.Contains(errOut, "Topic does not exist") {
				t.Errorf("get-topic-attributes of a missing topic: exit %d, stderr %q", code, errOut)
			}
		})
	}
}

// testDeadline returns a context that ends 30 s before go test's -timeout (with the test, if there is none),
// so that a program the test runs is stopped and reported before the test binary is.
func testDeadline(t *testing.T) (context.Context, context.CancelFunc) {
	if d, ok := t.Deadline(); ok {
		return context.WithDeadline(t.Context(), d.Add(-30*time.Second))
	}
	return context.WithCancel(t.Context())
}

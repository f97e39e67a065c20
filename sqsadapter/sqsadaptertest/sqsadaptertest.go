// Package sqsadaptertest starts the SQS and SNS endpoints that code written against fifoq's interfaces is
// tested on beside a *fifoq.Queue: moto's server, a third-party implementation of SQS and SNS, as a child
// process on a loopback port, and SDK clients of an endpoint with test credentials.
package sqsadaptertest

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// Moto starts moto's server (moto_server, from the Python package moto: pip install 'moto[server]') on a
// loopback port, stopped when the test ends, and returns its endpoint. When moto_server is not installed it
// says so in one line and returns "": the caller runs without it. In CI (the environment variable CI set)
// that fails the test instead, since CI installs it.
func Moto(tb testing.TB) string {
	tb.Helper()
	path, err := exec.LookPath("moto_server")
	if err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("moto_server is not installed (pip install 'moto[server]'): CI runs these tests against it")
		}
		tb.Log("moto_server is not installed (pip install 'moto[server]'): the tests against it do not run")
		return ""
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	if err := ln.Close(); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(path, "-H", "127.0.0.1", "-p", port)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	// moto says on stderr when it listens: wait for that line, however long a busy machine takes.
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "Running on") {
				ready <- nil
				for sc.Scan() { // drain, so that moto never blocks on a full pipe
				}
				return
			}
		}
		ready <- errors.New("moto_server ended before it listened")
	}()
	if err := <-ready; err != nil {
		tb.Fatal(err)
	}
	return "http://127.0.0.1:" + port
}

// credentials are the test credentials of the clients: an endpoint in a test checks none, or checks these.
var credentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "secret", Source: "sqsadaptertest"}, nil
})

// SQSClient returns an SQS client of endpoint, in us-east-1, with test credentials, that does not retry.
func SQSClient(endpoint string) *sqs.Client {
	return sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), Credentials: credentials,
		Retryer: aws.NopRetryer{}})
}

// SNSClient returns an SNS client of endpoint, as SQSClient.
func SNSClient(endpoint string) *sns.Client {
	return sns.New(sns.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), Credentials: credentials,
		Retryer: aws.NopRetryer{}})
}

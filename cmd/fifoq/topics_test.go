package main

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/fifoq/fifoq/topic"
	"github.com/stretchr/testify/require"
)

// snsCall posts an SNS query-protocol request to endpoint and decodes its answer into v.
func snsCall(t *testing.T, endpoint string, v any, kv ...string) {
	t.Helper()
	form := url.Values{}
	for i := 0; i < len(kv); i += 2 {
		form.Add(kv[i], kv[i+1])
	}
	resp, err := http.PostForm(endpoint, form)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode, "%v: %s", kv, body)
	if v != nil {
		require.NoError(t, xml.Unmarshal(body, v), "%s", body)
	}
}

// TestServeTopicsSurviveRestart: fifoq serve answers SNS on the SQS endpoint; a topic and its subscription
// are kept in the data directory, and so is the signing key, so a certificate fetched before a restart
// verifies the envelopes after it (with crypto/x509, as the SDKs' validators do).
func TestServeTopicsSurviveRestart(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--queue", "inbox"}
	var certPEM []byte
	for round := range 2 {
		c := startChild(t, args...)
		var created struct {
			TopicArn string `xml:"CreateTopicResult>TopicArn"`
		}
		snsCall(t, c.endpoint, &created, "Action", "CreateTopic", "Name", "alerts")
		if round == 0 {
			snsCall(t, c.endpoint, nil, "Action", "Subscribe", "TopicArn", created.TopicArn, "Protocol", "sqs",
				"Endpoint", "arn:aws:sqs:us-east-1:000000000000:inbox")
		}
		var subs struct {
			Arns []string `xml:"ListSubscriptionsByTopicResult>Subscriptions>member>SubscriptionArn"`
		}
		snsCall(t, c.endpoint, &subs, "Action", "ListSubscriptionsByTopic", "TopicArn", created.TopicArn)
		require.Len(t, subs.Arns, 1, "round %d: the subscription is kept", round)
		snsCall(t, c.endpoint, nil, "Action", "Publish", "TopicArn", created.TopicArn, "Message", "fire")

		client := c.client()
		q, err := client.GetQueueUrl(t.Context(), &sqs.GetQueueUrlInput{QueueName: aws.String("inbox")})
		require.NoError(t, err)
		got, err := client.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl})
		require.NoError(t, err)
		require.Len(t, got.Messages, 1, "delivered before Publish answered")
		env, err := topic.ParseEnvelope(aws.ToString(got.Messages[0].Body))
		require.NoError(t, err)
		if round == 0 {
			resp, err := http.Get(env.SigningCertURL)
			require.NoError(t, err)
			certPEM, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
		}
		block, _ := pem.Decode(certPEM)
		require.NotNil(t, block, "%q", certPEM)
		cert, err := x509.ParseCertificate(block.Bytes)
		require.NoError(t, err)
		require.NoError(t, env.Verify(cert.PublicKey.(*rsa.PublicKey)), "round %d: the certificate of round 0 verifies", round)
		c.stop(syscall.SIGTERM)
	}
}

// TestSigningKeyHalfWritten: a data directory with the signing key but not its certificate (a first start
// that stopped between the two writes) gets a new pair, which the next start reads back; a certificate that
// is there but cannot be read is an error that names it, never a nil key.
func TestSigningKeyHalfWritten(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first, _, err := signingKey(dir)
	require.NoError(t, err)
	certFile := filepath.Join(dir, signingDir, "cert.pem")
	require.NoError(t, os.Remove(certFile))

	key, certPEM, err := signingKey(dir)
	require.NoError(t, err, "key.pem without cert.pem")
	require.NotNil(t, key, "key.pem without cert.pem")
	require.False(t, key.Equal(first), "a new pair replaces the key without a certificate")
	block, _ := pem.Decode(certPEM)
	require.NotNil(t, block, "%q", certPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	require.True(t, key.PublicKey.Equal(cert.PublicKey), "the certificate is the new key's")
	again, againPEM, err := signingKey(dir)
	require.NoError(t, err)
	require.True(t, again.Equal(key), "the new pair was written")
	require.Equal(t, certPEM, againPEM)

	require.NoError(t, os.Remove(certFile))
	require.NoError(t, os.Mkdir(certFile, 0o700)) // there, but not readable as a file
	key, certPEM, err = signingKey(dir)
	require.ErrorContains(t, err, certFile)
	require.Nil(t, key)
	require.Nil(t, certPEM)
}

package main

import (
	"bytes"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"encoding/xml"
	"io"
	"log/slog"
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
// that stopped between the two writes) gets a new certificate for the key, which the next start reads back;
// a certificate that is there but cannot be read is an error that names it, never a nil key.
func TestSigningKeyHalfWritten(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first, _, err := signingKey(dir, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	certFile := filepath.Join(dir, signingDir, "cert.pem")
	require.NoError(t, os.Remove(certFile))

	key, certPEM, err := signingKey(dir, slog.New(slog.DiscardHandler))
	require.NoError(t, err, "key.pem without cert.pem")
	require.NotNil(t, key, "key.pem without cert.pem")
	require.True(t, key.Equal(first), "the key is kept")
	requireCertOf(t, key, certPEM)
	again, againPEM, err := signingKey(dir, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	require.True(t, again.Equal(key), "the new certificate was written")
	require.Equal(t, certPEM, againPEM)

	require.NoError(t, os.Remove(certFile))
	require.NoError(t, os.Mkdir(certFile, 0o700)) // there, but not readable as a file
	key, certPEM, err = signingKey(dir, slog.New(slog.DiscardHandler))
	require.ErrorIs(t, err, errSigningFile)
	require.ErrorContains(t, err, certFile)
	require.Nil(t, key)
	require.Nil(t, certPEM)
}

// requireCertOf requires certPEM to be a certificate of key's, and returns it.
func requireCertOf(t *testing.T, key *rsa.PrivateKey, certPEM []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(certPEM)
	require.NotNil(t, block, "%q", certPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	require.True(t, key.PublicKey.Equal(cert.PublicKey), "the certificate is the key's")
	return cert
}

// signingFiles makes dataDir's signing files hold key and cert (nil: no such file).
func signingFiles(t *testing.T, dataDir string, key, cert []byte) (keyFile, certFile string) {
	t.Helper()
	dir := filepath.Join(dataDir, signingDir)
	require.NoError(t, os.MkdirAll(dir, 0o700))
	keyFile, certFile = filepath.Join(dir, "key.pem"), filepath.Join(dir, "cert.pem")
	for _, f := range []struct {
		path string
		b    []byte
	}{{keyFile, key}, {certFile, cert}} {
		_ = os.Remove(f.path)
		if f.b != nil {
			require.NoError(t, os.WriteFile(f.path, f.b, 0o600))
		}
	}
	return keyFile, certFile
}

// TestSigningKeyEmpty: a signing key or certificate left empty by an older fifoq (which wrote them without
// syncing them, so that a crash soon after the first start could leave them empty) no longer stops every
// start: an empty key is made anew, with its certificate, and an empty certificate is made anew for the key,
// each with a warning that names the file; the next start reads back what was written.
func TestSigningKeyEmpty(t *testing.T) {
	t.Parallel()
	pair := func(t *testing.T) (key *rsa.PrivateKey, keyPEM, certPEM []byte) {
		dir := t.TempDir()
		key, certPEM, err := signingKey(dir, slog.New(slog.DiscardHandler))
		require.NoError(t, err)
		keyPEM, err = os.ReadFile(filepath.Join(dir, signingDir, "key.pem"))
		require.NoError(t, err)
		return key, keyPEM, certPEM
	}
	for _, tc := range []struct {
		name      string
		key, cert bool // empty
		warned    []string
		keepsKey  bool
	}{
		{"both empty", true, true, []string{"key.pem", "cert.pem"}, false},
		{"key empty", true, false, []string{"key.pem"}, false},
		{"certificate empty", false, true, []string{"cert.pem"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			old, oldKeyPEM, oldCertPEM := pair(t)
			keyPEM, certPEM := oldKeyPEM, oldCertPEM
			if tc.key {
				keyPEM = []byte{}
			}
			if tc.cert {
				certPEM = []byte{}
			}
			dataDir := t.TempDir()
			keyFile, certFile := signingFiles(t, dataDir, keyPEM, certPEM)
			var logged bytes.Buffer
			key, gotCert, err := signingKey(dataDir, slog.New(slog.NewTextHandler(&logged, nil)))
			require.NoError(t, err)
			require.Equal(t, tc.keepsKey, key.Equal(old), "the key kept, or made anew")
			requireCertOf(t, key, gotCert)
			for _, f := range tc.warned {
				require.Contains(t, logged.String(), "level=WARN", "a warning")
				require.Contains(t, logged.String(), filepath.Join(dataDir, signingDir, f), "the warning names the file")
			}
			info, err := os.Stat(keyFile)
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the key is the owner's only")

			again, againCert, err := signingKey(dataDir, slog.New(slog.DiscardHandler))
			require.NoError(t, err)
			require.True(t, again.Equal(key), "written")
			require.Equal(t, gotCert, againCert)
			b, err := os.ReadFile(certFile)
			require.NoError(t, err)
			require.Equal(t, gotCert, b)
		})
	}
}

// TestSigningKeyUnreadable: a signing key or certificate that is not empty and does not parse is refused
// with an error (errSigningFile) that names the file and says what to do, and nothing is written; a
// certificate that parses but is another key's (a crash after the key was made anew and before its
// certificate was written) is made anew for the key, with a warning.
func TestSigningKeyUnreadable(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	key, certPEM, err := signingKey(src, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	keyPEM, err := os.ReadFile(filepath.Join(src, signingDir, "key.pem"))
	require.NoError(t, err)
	_, otherCert, err := signingKey(t.TempDir(), slog.New(slog.DiscardHandler))
	require.NoError(t, err)

	for _, tc := range []struct {
		name      string
		key, cert []byte
		bad       string // the file named
	}{
		{"key not PEM", []byte("not a key\n"), certPEM, "key.pem"},
		{"key not RSA", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: []byte("junk")}), certPEM, "key.pem"},
		{"key garbage, certificate missing", []byte{0, 1, 2}, nil, "key.pem"},
		{"certificate not PEM", keyPEM, []byte("not a certificate"), "cert.pem"},
		{"certificate garbage, key empty", []byte{}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("junk")}), "cert.pem"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dataDir := t.TempDir()
			keyFile, certFile := signingFiles(t, dataDir, tc.key, tc.cert)
			got, gotCert, err := signingKey(dataDir, slog.New(slog.DiscardHandler))
			require.ErrorIs(t, err, errSigningFile)
			require.ErrorContains(t, err, filepath.Join(dataDir, signingDir, tc.bad))
			require.ErrorContains(t, err, "move it away")
			require.Nil(t, got)
			require.Nil(t, gotCert)
			for _, f := range []struct {
				path string
				want []byte
			}{{keyFile, tc.key}, {certFile, tc.cert}} {
				b, err := os.ReadFile(f.path)
				if f.want == nil {
					require.ErrorIs(t, err, os.ErrNotExist, "nothing written")
					continue
				}
				require.NoError(t, err)
				require.Equal(t, f.want, b, "nothing written")
			}
		})
	}

	t.Run("certificate of another key", func(t *testing.T) {
		t.Parallel()
		dataDir := t.TempDir()
		_, certFile := signingFiles(t, dataDir, keyPEM, otherCert)
		var logged bytes.Buffer
		got, gotCert, err := signingKey(dataDir, slog.New(slog.NewTextHandler(&logged, nil)))
		require.NoError(t, err)
		require.True(t, got.Equal(key), "the key is kept")
		requireCertOf(t, got, gotCert)
		require.Contains(t, logged.String(), "level=WARN")
		require.Contains(t, logged.String(), certFile)
	})
}

// TestServeSigningKeyEmpty: "serve --data-dir" starts on a data directory whose signing key and
// certificate are empty, as a crash soon after an older fifoq's first start left them (it stopped every
// start since), and says so in its log.
func TestServeSigningKeyEmpty(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	c := startChild(t, "serve", "--addr", "127.0.0.1:0", "--data-dir", dir)
	c.stop(syscall.SIGTERM)
	keyFile, _ := signingFiles(t, dir, []byte{}, []byte{})

	c = startChild(t, "serve", "--addr", "127.0.0.1:0", "--data-dir", dir)
	var created struct {
		TopicArn string `xml:"CreateTopicResult>TopicArn"`
	}
	snsCall(t, c.endpoint, &created, "Action", "CreateTopic", "Name", "alerts")
	c.stop(syscall.SIGTERM)
	require.Contains(t, c.stderr.String(), keyFile, "a warning names the empty key")
	b, err := os.ReadFile(keyFile)
	require.NoError(t, err)
	require.NotEmpty(t, b, "a new key was written")
}

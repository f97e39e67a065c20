package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/fifoq/fifoq/snsapi"
	"github.com/fifoq/fifoq/sqsapi"
)

// signingDir is the directory of the data directory that keeps the key and certificate the SNS envelopes
// are signed with, so that a certificate fetched before a restart still verifies the envelopes after it.
const signingDir = "sns-signing"

// withTopics returns the handler of the endpoint: the SNS API (package snsapi, over api's catalogue) beside
// api's SQS API, told apart by snsapi.Route. Envelopes are signed with a key of dataDir's signingDir, made
// there on the first start, or with a key made for this run when the server keeps nothing on disk.
func withTopics(cfg serveConfig, api *sqsapi.Server, logger *slog.Logger) (*snsapi.Server, http.Handler, error) {
	key, certPEM, err := signingKey(cfg.dataDir)
	if err != nil {
		return nil, nil, fmt.Errorf("the signing key of SNS envelopes: %w", err)
	}
	opts := []snsapi.Option{snsapi.WithLogger(logger), snsapi.WithRegion(cfg.region), snsapi.WithAccountID(cfg.account),
		snsapi.WithSigningKey(key, certPEM)}
	if cfg.credentials != nil {
		keys := maps.Clone(cfg.credentials)
		opts = append(opts, snsapi.WithSignatureVerification(func(id string) (string, bool) {
			secret, ok := keys[id]
			return secret, ok
		}))
	}
	sns := snsapi.NewServer(api.Catalog(), opts...)
	return sns, snsapi.Route(sns, api), nil
}

// signingKey returns the RSA key and self-signed certificate (PEM) of SNS envelopes: those of dataDir's
// signingDir, made and written there when missing; a new pair when dataDir is "". When one of the two files
// is missing (a first start that stopped between writing them), a new pair replaces both; a file that is
// there but cannot be read is an error, which names it.
func signingKey(dataDir string) (*rsa.PrivateKey, []byte, error) {
	if dataDir != "" {
		keyPEM, kerr := os.ReadFile(filepath.Join(dataDir, signingDir, "key.pem"))
		certPEM, cerr := os.ReadFile(filepath.Join(dataDir, signingDir, "cert.pem"))
		switch {
		case kerr == nil && cerr == nil:
			block, _ := pem.Decode(keyPEM)
			if block == nil {
				return nil, nil, errors.New(filepath.Join(dataDir, signingDir, "key.pem") + ": no PEM key")
			}
			key, err := x509.ParsePKCS1PrivateKey(block.Bytes)
			if err != nil {
				return nil, nil, err
			}
			return key, certPEM, nil
		case kerr != nil && !errors.Is(kerr, fs.ErrNotExist):
			return nil, nil, kerr
		case cerr != nil && !errors.Is(cerr, fs.ErrNotExist):
			return nil, nil, cerr
		}
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(now.UnixNano()),
		Subject:   pkix.Name{CommonName: "sns.amazonaws.com", Organization: []string{"fifoq"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(20, 0, 0), KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if dataDir == "" {
		return key, certPEM, nil
	}
	dir := filepath.Join(dataDir, signingDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, err
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(filepath.Join(dir, "key.pem"), keyPEM, 0o600); err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "cert.pem"), certPEM, 0o644); err != nil {
		return nil, nil, err
	}
	return key, certPEM, nil
}

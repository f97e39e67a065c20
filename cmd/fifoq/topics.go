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

	"github.com/fifoq/fifoq/durable"
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
	key, certPEM, err := signingKey(cfg.dataDir, logger)
	if err != nil {
		if !errors.Is(err, errSigningFile) {
			err = fmt.Errorf("%w: %w", errSigningFile, err)
		}
		return nil, nil, err
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
// signingDir, made and written there when missing; a new pair when dataDir is "". Each file is written
// whole and durably (durable.WriteFile), the key first: a crash or a loss of power at any moment leaves
// each file as it was or whole. A key that is missing or empty (an older fifoq wrote them without syncing,
// and a crash left them empty) is made anew, and the certificate with it; a certificate that is missing,
// empty or not the key's (a crash between the two writes) is made anew for the key. Each empty file is
// logged as a warning. A file that is there, not empty, and does not parse, or cannot be read, is an
// error that names it and says what to do (errSigningFile), and nothing is written.
func signingKey(dataDir string, logger *slog.Logger) (*rsa.PrivateKey, []byte, error) {
	if dataDir == "" {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, nil, err
		}
		certPEM, err := signingCert(key)
		if err != nil {
			return nil, nil, err
		}
		return key, certPEM, nil
	}
	dir := filepath.Join(dataDir, signingDir)
	keyFile, certFile := filepath.Join(dir, "key.pem"), filepath.Join(dir, "cert.pem")
	keyPEM, kerr := os.ReadFile(keyFile)
	certPEM, cerr := os.ReadFile(certFile)
	switch {
	case kerr != nil && !errors.Is(kerr, fs.ErrNotExist):
		return nil, nil, fmt.Errorf("%w: %w", errSigningFile, kerr)
	case cerr != nil && !errors.Is(cerr, fs.ErrNotExist):
		return nil, nil, fmt.Errorf("%w: %w", errSigningFile, cerr)
	}
	// Check both files before writing either.
	var key *rsa.PrivateKey
	if len(keyPEM) > 0 {
		var err error
		if key, err = parseSigningKey(keyPEM); err != nil {
			return nil, nil, fmt.Errorf("%w: %s: %v; move it away (with cert.pem) to have a new pair made at the next start "+
				"(subscribers that verify signatures then need the new certificate)", errSigningFile, keyFile, err)
		}
	}
	var cert *x509.Certificate
	if len(certPEM) > 0 {
		var err error
		if cert, err = parseSigningCert(certPEM); err != nil {
			return nil, nil, fmt.Errorf("%w: %s: %v; move it away to have a new certificate made for key.pem at the next start",
				errSigningFile, certFile, err)
		}
	}
	if err := durable.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, err
	}
	if key == nil {
		if kerr == nil {
			logger.Warn("the SNS signing key is empty (a crash while an older fifoq wrote it): making a new key and certificate; "+
				"subscribers that verify signatures need the new certificate", "file", keyFile)
		}
		var err error
		if key, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			return nil, nil, err
		}
		der := x509.MarshalPKCS1PrivateKey(key)
		if err := durable.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: der}), 0o600); err != nil {
			return nil, nil, err
		}
		cert = nil // another key's
	}
	if cert != nil && key.PublicKey.Equal(cert.PublicKey) {
		return key, certPEM, nil
	}
	switch {
	case cert != nil:
		logger.Warn("the SNS signing certificate is not the signing key's (a crash between their writes): making a new one",
			"file", certFile, "key", keyFile)
	case cerr == nil && len(certPEM) == 0:
		logger.Warn("the SNS signing certificate is empty (a crash while an older fifoq wrote it): making a new one",
			"file", certFile)
	}
	certPEM, err := signingCert(key)
	if err != nil {
		return nil, nil, err
	}
	if err := durable.WriteFile(certFile, certPEM, 0o644); err != nil {
		return nil, nil, err
	}
	return key, certPEM, nil
}

// errSigningFile: the signing key or certificate of SNS envelopes in the data directory cannot be used.
var errSigningFile = errors.New("the signing key of SNS envelopes")

// parseSigningKey parses an RSA private key in PEM (PKCS #1, as signingKey writes it).
func parseSigningKey(b []byte) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	key, err := x509.ParsePKCS1PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("not an RSA private key: %w", err)
	}
	return key, nil
}

// parseSigningCert parses a certificate in PEM with an RSA public key.
func parseSigningCert(b []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("not a certificate: %w", err)
	}
	if _, ok := cert.PublicKey.(*rsa.PublicKey); !ok {
		return nil, fmt.Errorf("not a certificate of an RSA key (%T)", cert.PublicKey)
	}
	return cert, nil
}

// signingCert makes the self-signed certificate (PEM) of key.
func signingCert(key *rsa.PrivateKey) ([]byte, error) {
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(now.UnixNano()),
		Subject:   pkix.Name{CommonName: "sns.amazonaws.com", Organization: []string{"fifoq"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(20, 0, 0), KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

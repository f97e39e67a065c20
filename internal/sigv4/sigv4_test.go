package sigv4

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestScopeAndNamespace(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest("POST", "http://sns.eu-west-1.localhost/", nil)
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=123456789012/20250101/eu-central-1/sns/aws4_request, SignedHeaders=host, Signature=x")
	if k, region, svc := Scope(r); k != "123456789012" || region != "eu-central-1" || svc != "sns" {
		t.Fatalf("Scope = %q %q %q, want 123456789012 eu-central-1 sns", k, region, svc)
	}
	if a, region := Namespace(r, "000000000000", "us-east-1"); a != "123456789012" || region != "eu-central-1" {
		t.Fatalf("Namespace = %q %q", a, region)
	}
	r.Header.Del("Authorization")
	if a, region := Namespace(r, "000000000000", "us-east-1"); a != "000000000000" || region != "eu-west-1" {
		t.Fatalf("Namespace without a scope = %q %q, want the default account and the host's region", a, region)
	}
}

func TestVerifyRefusesAnotherService(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest("POST", "http://localhost/", nil)
	now := time.Now().UTC()
	r.Header.Set("X-Amz-Date", now.Format("20060102T150405Z"))
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKID/"+now.Format("20060102")+
		"/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=x")
	err := Verify(r, nil, func(string) (string, bool) { return "s", true }, "us-east-1", "sns")
	if err == nil || err.Code != CodeSignatureDoesNotMatch || !strings.Contains(err.Message, "service: us-east-1, sns.") {
		t.Fatalf("Verify = %v, want %s", err, CodeSignatureDoesNotMatch)
	}
}

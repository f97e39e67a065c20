package sqsmd5

import (
	"strings"
	"testing"

	"github.com/fifoq/fifoq"
)

// The test vectors of spec 1.4.6, recorded against AWS.
func TestVectors(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{"body foobar", Body("foobar"), "3858f62230ac3c915f300c664312c63f"},
		{"attribute MyAttribute=foobar", Attributes(map[string]fifoq.Attribute{
			"MyAttribute": {DataType: "String", StringValue: "foobar"},
		}), "adb59cd4678ea5a855436b949cd07ab6"},
		{"system attribute AWSTraceHeader", Attributes(map[string]fifoq.Attribute{
			"AWSTraceHeader": {DataType: "String", StringValue: "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"},
		}), "5ae4d5d7636402d80f4eb6d213245a88"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, tt.got, tt.want)
		}
	}
}

// Binary values carry transport byte 2 and their raw bytes; names are sorted, so map order cannot matter.
func TestBinaryAndOrder(t *testing.T) {
	attrs := map[string]fifoq.Attribute{
		"b": {DataType: "Binary.png", BinaryValue: []byte{0, 1, 2}},
		"a": {DataType: "Number", StringValue: "42"},
	}
	// name "a", type "Number", 1, value "42"; name "b", type "Binary.png", 2, value 00 01 02.
	// Computed independently (Python's hashlib over the bytes above).
	const want = "0af94436c4e29ea09bd7d9e94e1e1b7f"
	for range 20 {
		if got := Attributes(map[string]fifoq.Attribute{"b": attrs["b"], "a": attrs["a"]}); got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
	if !IsBinary("Binary.png") || !IsBinary("Binary") || IsBinary("String.Binary") || IsBinary("Binaryx") {
		t.Error("IsBinary")
	}
}

// Body hashes a large body without copying it: one allocation, for the hex digest.
func TestBodyAllocs(t *testing.T) {
	body := string(make([]byte, 256<<10))
	if n := testing.AllocsPerRun(10, func() { _ = Body(body) }); n > 1 {
		t.Errorf("Body allocates %v times, want 1", n)
	}
	if Body("") != "d41d8cd98f00b204e9800998ecf8427e" {
		t.Error("MD5 of the empty string")
	}
}

// The Append forms write the same digests, and allocate nothing into a buffer with room.
func TestAppendAllocs(t *testing.T) {
	attrs := map[string]fifoq.Attribute{
		"b": {DataType: "Binary.png", BinaryValue: []byte{0, 1, 2}},
		"a": {DataType: "Number", StringValue: "42"},
	}
	buf := make([]byte, 0, 64)
	if got := string(AppendAttributes(buf[:0], attrs)); got != Attributes(attrs) || got != "0af94436c4e29ea09bd7d9e94e1e1b7f" {
		t.Errorf("AppendAttributes: %s", got)
	}
	if got := string(AppendBody([]byte("x"), "foobar")); got != "x3858f62230ac3c915f300c664312c63f" {
		t.Errorf("AppendBody: %s", got)
	}
	big := map[string]fifoq.Attribute{"big": {DataType: "String", StringValue: strings.Repeat("v", 4000)}}
	if AppendAttributes(nil, big) == nil || Attributes(big) != string(AppendAttributes(nil, big)) {
		t.Error("large attributes")
	}
	if n := testing.AllocsPerRun(100, func() {
		buf = AppendBody(buf[:0], "body")
		buf = AppendAttributes(buf, attrs)
	}); n != 0 {
		t.Errorf("Append forms allocate %v times, want 0", n)
	}
}

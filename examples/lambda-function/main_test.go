package main

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// The handler fails the order that says so and the later orders of its group, and no other.
func TestHandle(t *testing.T) {
	var event events.SQSEvent
	err := json.Unmarshal([]byte(`{"Records": [
		{"messageId": "1", "body": "order 1", "attributes": {"MessageGroupId": "alice"}},
		{"messageId": "2", "body": "fail: order 2", "attributes": {"MessageGroupId": "bob"}},
		{"messageId": "3", "body": "order 3", "attributes": {"MessageGroupId": "alice"}},
		{"messageId": "4", "body": "order 4", "attributes": {"MessageGroupId": "bob"}}
	]}`), &event)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := handle(context.Background(), event)
	if err != nil {
		t.Fatal(err)
	}
	want := []events.SQSBatchItemFailure{{ItemIdentifier: "2"}, {ItemIdentifier: "4"}}
	if !reflect.DeepEqual(resp.BatchItemFailures, want) {
		t.Fatalf("batch item failures %+v, want %+v", resp.BatchItemFailures, want)
	}
}

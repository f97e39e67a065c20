package snsapi

import (
	"encoding/json"
	"slices"

	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/internal/rule"
	"github.com/fifoq/fifoq/topic"
)

// The policies of a topic that fifoq keeps and shows: its access policy (AddPermission, RemovePermission),
// its delivery policy (normalised as SNS stores it) and its data protection policy
// (PutDataProtectionPolicy, GetDataProtectionPolicy). None is enforced.

// policyActions are the actions a topic's policy statement can grant: those of SNS's default policy, and
// Receive. Any other is "out of service scope".
var policyActions = map[string]bool{"GetTopicAttributes": true, "SetTopicAttributes": true, "AddPermission": true,
	"RemovePermission": true, "DeleteTopic": true, "Subscribe": true, "ListSubscriptionsByTopic": true,
	"Publish": true, "Receive": true}

// addPermission adds a statement to a topic's policy, checking in SNS's order: the topic (NotFound), the
// label (a statement of that Sid exists), then each action name.
func addPermission(s *Server, c *call) (*xmlOut, error) {
	t, err := s.topicOf(c, "TopicArn")
	if err != nil {
		return nil, err
	}
	label, accounts, acts := c.get("Label"), c.members("AWSAccountId"), c.members("ActionName")
	switch {
	case label == "":
		return nil, validationError("label")
	case len(accounts) == 0:
		return nil, validationError("aWSAccountId")
	case len(acts) == 0:
		return nil, validationError("actionName")
	}
	return nil, s.cat.UpdateTopic(c.r.Context(), t.Namespace(), t.Name(), func(d *catalog.TopicDefinition) error {
		doc, statements, err := readPolicy(t, d)
		if err != nil {
			return err
		}
		for _, st := range statements {
			if m, ok := st.(map[string]any); ok && m["Sid"] == label {
				return invalidParameter("Statement already exists", "")
			}
		}
		for _, a := range acts {
			if !policyActions[a] {
				return invalidParameter("Policy statement action out of service scope!", "")
			}
		}
		principals := make([]string, len(accounts))
		for i, a := range accounts {
			principals[i] = rule.IAMARN(c.ns.Region, a, "root")
		}
		actions := make([]string, len(acts))
		for i, a := range acts {
			actions[i] = "SNS:" + a
		}
		doc["Statement"] = append(statements, map[string]any{"Sid": label, "Effect": "Allow",
			"Principal": map[string]any{"AWS": oneOrMany(principals)}, "Action": oneOrMany(actions), "Resource": t.ARN()})
		return storePolicy(d, doc)
	})
}

func removePermission(s *Server, c *call) (*xmlOut, error) {
	t, err := s.topicOf(c, "TopicArn")
	if err != nil {
		return nil, err
	}
	label := c.get("Label")
	if label == "" {
		return nil, validationError("label")
	}
	return nil, s.cat.UpdateTopic(c.r.Context(), t.Namespace(), t.Name(), func(d *catalog.TopicDefinition) error {
		doc, statements, err := readPolicy(t, d)
		if err != nil {
			return err
		}
		kept := slices.DeleteFunc(statements, func(st any) bool {
			m, ok := st.(map[string]any)
			return ok && m["Sid"] == label
		})
		doc["Statement"] = kept
		return storePolicy(d, doc)
	})
}

// readPolicy returns the topic's policy, SNS's default when it has none, and its statements.
func readPolicy(t catalog.Topic, d *catalog.TopicDefinition) (map[string]any, []any, error) {
	raw := d.Stored["Policy"]
	if raw == "" {
		raw = defaultTopicPolicy(t)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(raw), &doc); err != nil || doc == nil {
		return nil, nil, invalidParameter("Policy", "failed to parse JSON")
	}
	statements, _ := doc["Statement"].([]any)
	return doc, statements, nil
}

func storePolicy(d *catalog.TopicDefinition, doc map[string]any) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return errInternal
	}
	if d.Stored == nil {
		d.Stored = make(map[string]string)
	}
	d.Stored["Policy"] = string(b)
	return nil
}

func oneOrMany(items []string) any {
	if len(items) == 1 {
		return items[0]
	}
	return items
}

// normalizeDeliveryPolicy returns a topic's DeliveryPolicy as SNS stores it and reads it back: compact JSON
// whose "http" policy has "disableSubscriptionOverrides" (false when not given), its members in SNS's order
// (defaultHealthyRetryPolicy, defaultSicklyRetryPolicy, defaultThrottlePolicy, disableSubscriptionOverrides,
// defaultRequestPolicy, then others as given), and no member set to null, at any depth. A policy that is not
// an object, or has no "http" object, is only compacted.
func normalizeDeliveryPolicy(policy string) string {
	v, present, err := rule.ParseJSON(policy, maxJSONDepth)
	if err != nil || !present {
		return policy
	}
	if v.Kind == rule.JSONObject {
		if h, ok := v.Member("http"); ok && h.Kind == rule.JSONObject {
			dropNulls(h)
			if _, ok := h.Member("disableSubscriptionOverrides"); !ok {
				h.Members = append(h.Members, rule.JSONMember{Key: "disableSubscriptionOverrides", Value: rule.JSONValue{Kind: rule.JSONBool, Text: "false"}})
			}
			order := map[string]int{"defaultHealthyRetryPolicy": 1, "defaultSicklyRetryPolicy": 2, "defaultThrottlePolicy": 3,
				"disableSubscriptionOverrides": 4, "defaultRequestPolicy": 5}
			slices.SortStableFunc(h.Members, func(a, b rule.JSONMember) int {
				return rank(order, a.Key) - rank(order, b.Key)
			})
		}
	}
	return v.Compact()
}

// rank is the place of key in order, after every key of order when it has none.
func rank(order map[string]int, key string) int {
	if r, ok := order[key]; ok {
		return r
	}
	return len(order) + 1
}

// dropNulls removes the members set to null of an object and of the objects it holds.
func dropNulls(v *rule.JSONValue) {
	v.Members = slices.DeleteFunc(v.Members, func(m rule.JSONMember) bool { return m.Value.Kind == rule.JSONNull })
	for i := range v.Members {
		if v.Members[i].Value.Kind == rule.JSONObject {
			dropNulls(&v.Members[i].Value)
		}
	}
}

// putDataProtectionPolicy stores a topic's data protection policy (PutDataProtectionPolicy), a JSON
// document that fifoq keeps and returns but does not apply: no message is audited, masked or denied. An
// empty policy removes it.
func putDataProtectionPolicy(s *Server, c *call) (*xmlOut, error) {
	t, err := s.topicOf(c, "ResourceArn")
	if err != nil {
		return nil, err
	}
	if !c.has("DataProtectionPolicy") {
		return nil, validationError("dataProtectionPolicy")
	}
	policy := c.get("DataProtectionPolicy")
	return nil, s.cat.UpdateTopic(c.r.Context(), t.Namespace(), t.Name(), func(d *catalog.TopicDefinition) error {
		return setTopicAttribute(d, t.FIFO(), "DataProtectionPolicy", policy)
	})
}

// getDataProtectionPolicy returns a topic's data protection policy (GetDataProtectionPolicy): the
// document stored, "" when it has none.
func getDataProtectionPolicy(s *Server, c *call) (*xmlOut, error) {
	t, err := s.topicOf(c, "ResourceArn")
	if err != nil {
		return nil, err
	}
	d, ok := s.cat.TopicDefinition(t.Namespace(), t.Name())
	if !ok {
		return nil, toAPIError(topic.ErrNotFound)
	}
	var x xmlOut
	x.elem("DataProtectionPolicy", d.Stored["DataProtectionPolicy"])
	return &x, nil
}

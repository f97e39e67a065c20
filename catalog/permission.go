package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/fifoq/fifoq/internal/rule"
)

// The access policy of a catalogue's queues, as SQS's AddPermission and RemovePermission edit it. fifoq
// checks no permissions: the policy is stored and returned, never enforced.

// Errors of AddPermission and RemovePermission.
var (
	// ErrInvalidPermission: AddPermission takes a label of 1..80 characters of [A-Za-z0-9_-] that no
	// statement of the policy has, at least one principal that is an AWS account id (12 digits), and
	// actions that may be granted; RemovePermission a label the policy has.
	ErrInvalidPermission = rule.New("InvalidParameterValue", "catalog: invalid permission")
	// ErrTooManyActions: AddPermission grants at most 7 actions at once.
	ErrTooManyActions = rule.New("OverLimit", "catalog: too many actions")
)

// maxPolicyActions is the most actions one AddPermission grants.
const maxPolicyActions = 7

// grantable are the actions AddPermission can grant ("*" is all of them). Granting SendMessage,
// DeleteMessage or ChangeMessageVisibility grants their batch forms too, which cannot be named.
var grantable = map[string]bool{
	"*": true, "SendMessage": true, "ReceiveMessage": true, "DeleteMessage": true, "ChangeMessageVisibility": true,
	"GetQueueAttributes": true, "GetQueueUrl": true, "ListDeadLetterSourceQueues": true, "PurgeQueue": true,
}

// ownerOnly are the actions only the queue's owner may call, which no permission can grant.
var ownerOnly = map[string]bool{
	"AddPermission": true, "RemovePermission": true, "CreateQueue": true, "DeleteQueue": true,
	"SetQueueAttributes": true, "ListQueues": true, "ListQueueTags": true, "TagQueue": true, "UntagQueue": true,
	"StartMessageMoveTask": true, "CancelMessageMoveTask": true, "ListMessageMoveTasks": true,
}

// AddPermission adds a statement to the access policy (Policy) of the queue name of ns, as SQS's
// AddPermission writes it: Sid label, Effect Allow, Principal {"AWS": "arn:aws:iam::<id>:root"} for each
// account id, Action "SQS:<action>" for each action, Resource the queue's ARN; a single principal or action
// as a plain string, several as a list. A queue without a policy gets one of version 2008-10-17 with the id
// "<queue ARN>/SQSDefaultPolicy". The policy is written with its members in the order SQS writes them
// (Version, Id, Statement; in each statement Sid, Effect, Principal, Action, Resource, Condition), the
// statements written before included.
//
// It returns ErrInvalidPermission for no label, or one that is not 1..80 characters of [A-Za-z0-9_-] or that
// a statement has already, for no account ids or no action (with the code MissingParameter), for an action only the owner may call or one that
// SQS does not know, and for account ids none of which is an AWS account id (12 digits): AWS answers "Value
// [<ids>] for parameter PrincipalId is invalid. Reason: Unable to verify." and changes nothing. When some are
// account ids, the others are left out of the statement, as AWS leaves out those it cannot verify (observed
// by Eucalyptus, whose SQS reproduces AWS's). More than 7 actions return ErrTooManyActions; a policy that is
// not a JSON document, ErrInvalidPermission. A queue the catalogue does not hold returns
// ErrQueueDoesNotExist. An error changes nothing.
func (c *Catalog) AddPermission(ctx context.Context, ns Namespace, name, label string, accountIDs, actions []string) error {
	if err := checkLabel(label); err != nil {
		return err
	}
	switch {
	case len(accountIDs) == 0:
		return missingParameter(rule.Reject(ErrInvalidPermission, "no account ids"), "AWSAccountIds")
	case len(actions) == 0:
		return missingParameter(rule.Reject(ErrInvalidPermission, "no actions"), "Actions")
	case len(actions) > maxPolicyActions:
		return rule.Reject(ErrTooManyActions, "%d actions, at most %d", len(actions), maxPolicyActions).Says(
			"%d Actions were found, maximum allowed is %d.", len(actions), maxPolicyActions)
	}
	granted := make([]string, 0, len(actions))
	for _, a := range actions {
		switch {
		case ownerOnly[a]:
			return rule.Reject(ErrInvalidPermission, "action %s is the owner's only", a).Says("%s",
				rule.InvalidValue("SQS:"+a, "ActionName", "Only the queue owner is allowed to invoke this action."))
		case !grantable[a]:
			return rule.Reject(ErrInvalidPermission, "unknown action %q", a).Says("%s",
				rule.InvalidValue("SQS:"+a, "ActionName", "Please refer to the appropriate WSDL for a list of valid actions."))
		}
		granted = append(granted, "SQS:"+a)
	}
	var principals []string
	for _, id := range accountIDs {
		if isAccountID(id) {
			principals = append(principals, rule.IAMARN(ns.Region, id, "root"))
		}
	}
	if len(principals) == 0 {
		return rule.Reject(ErrInvalidPermission, "no account id among the principals %q", accountIDs).Says("%s",
			rule.InvalidValue("["+strings.Join(accountIDs, ", ")+"]", "PrincipalId", "Unable to verify."))
	}
	return c.Update(ctx, ns, name, func(d *Definition) error {
		doc, statements, err := readPolicy(d.Policy, ns.QueueARN(name))
		if err != nil {
			return err
		}
		for _, st := range statements {
			if m, ok := st.(map[string]any); ok && m["Sid"] == label {
				return rule.Reject(ErrInvalidPermission, "label %s exists", label).Says("%s",
					rule.InvalidValue(label, "Label", "Already exists."))
			}
		}
		doc["Statement"] = append(statements, map[string]any{
			"Sid":       label,
			"Effect":    "Allow",
			"Principal": map[string]any{"AWS": oneOrMany(principals)},
			"Action":    oneOrMany(granted),
			"Resource":  ns.QueueARN(name),
		})
		d.Policy = writePolicy(doc)
		return nil
	})
}

// RemovePermission removes the statement of that label from the access policy of the queue name of ns, and
// the policy when it was the last one; the other statements are written again in SQS's order (see
// AddPermission). No label, or one no statement has, returns ErrInvalidPermission; a queue the catalogue does
// not hold, ErrQueueDoesNotExist.
func (c *Catalog) RemovePermission(ctx context.Context, ns Namespace, name, label string) error {
	if label == "" {
		return missingParameter(rule.Reject(ErrInvalidPermission, "no label"), "Label")
	}
	return c.Update(ctx, ns, name, func(d *Definition) error {
		doc, statements, err := readPolicy(d.Policy, ns.QueueARN(name))
		if err != nil {
			return err
		}
		i := slices.IndexFunc(statements, func(st any) bool {
			m, ok := st.(map[string]any)
			return ok && m["Sid"] == label
		})
		if i < 0 {
			return rule.Reject(ErrInvalidPermission, "no statement of label %q", label).Says("%s",
				rule.InvalidValue(label, "Label", "can't find label."))
		}
		statements = slices.Delete(statements, i, i+1)
		if len(statements) == 0 {
			d.Policy = ""
			return nil
		}
		doc["Statement"] = statements
		d.Policy = writePolicy(doc)
		return nil
	})
}

// checkLabel checks an AddPermission label: 1..80 characters of [A-Za-z0-9_-].
func checkLabel(label string) error {
	if label == "" {
		return missingParameter(rule.Reject(ErrInvalidPermission, "no label"), "Label")
	}
	if rule.QueueName(label) != nil || strings.HasSuffix(label, ".fifo") {
		return rule.Reject(ErrInvalidPermission, "label %q, want 1..80 characters of [A-Za-z0-9_-]", label).Says("%s",
			rule.InvalidValue(label, "Label", "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length."))
	}
	return nil
}

// missingParameter is r for a parameter the call lacks: SQS's code for that is MissingParameter, and its
// message "The request must contain the parameter <param>.".
func missingParameter(r *rule.Rejection, param string) error {
	return rule.WithCode("MissingParameter", r.Says("The request must contain the parameter %s.", param))
}

// isAccountID reports whether v is an AWS account id: 12 decimal digits.
func isAccountID(v string) bool {
	if len(v) != 12 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// oneOrMany is a policy value as SQS writes it: a single item alone, several as a list.
func oneOrMany(items []string) any {
	if len(items) == 1 {
		return items[0]
	}
	return items
}

// readPolicy returns a queue's policy and its statements; a queue without one gets the document SQS starts
// for AddPermission: version 2008-10-17, id "<queue arn>/SQSDefaultPolicy". Numbers keep their digits.
func readPolicy(raw, arn string) (map[string]any, []any, error) {
	doc := map[string]any{"Version": "2008-10-17", "Id": arn + "/SQSDefaultPolicy"}
	if raw != "" {
		dec := json.NewDecoder(strings.NewReader(raw))
		dec.UseNumber()
		doc = nil
		if err := dec.Decode(&doc); err != nil || doc == nil {
			return nil, nil, rule.Reject(ErrInvalidPermission, "the queue's policy is not a JSON document").Says(
				"The queue's Policy attribute is not a JSON policy document.")
		}
	}
	statements, _ := doc["Statement"].([]any)
	return doc, statements, nil
}

// The members of a policy, and of its statements, in the order SQS writes them; others follow, sorted.
var (
	policyOrder    = []string{"Version", "Id", "Statement"}
	statementOrder = []string{"Sid", "Effect", "Principal", "NotPrincipal", "Action", "NotAction", "Resource",
		"NotResource", "Condition"}
)

// writePolicy returns doc as SQS writes a policy: its members, and those of each statement, in SQS's order.
func writePolicy(doc map[string]any) string {
	var b bytes.Buffer
	writeOrdered(&b, doc, policyOrder, func(b *bytes.Buffer, k string, v any) bool {
		statements, ok := v.([]any)
		if k != "Statement" || !ok {
			return false
		}
		b.WriteByte('[')
		for i, st := range statements {
			if i > 0 {
				b.WriteByte(',')
			}
			if m, ok := st.(map[string]any); ok {
				writeOrdered(b, m, statementOrder, nil)
			} else {
				writeJSON(b, st)
			}
		}
		b.WriteByte(']')
		return true
	})
	return b.String()
}

// writeOrdered writes m as a JSON object, the keys of order first in that order, then the others sorted.
// special, when not nil, may write a value itself, and reports whether it did.
func writeOrdered(b *bytes.Buffer, m map[string]any, order []string, special func(*bytes.Buffer, string, any) bool) {
	keys := slices.DeleteFunc(slices.Sorted(maps.Keys(m)), func(k string) bool { return slices.Contains(order, k) })
	for _, k := range slices.Backward(order) {
		if _, ok := m[k]; ok {
			keys = slices.Insert(keys, 0, k)
		}
	}
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSON(b, k)
		b.WriteByte(':')
		if special == nil || !special(b, k, m[k]) {
			writeJSON(b, m[k])
		}
	}
	b.WriteByte('}')
}

// writeJSON writes v as JSON, without escaping <, > and & as encoding/json does by default.
func writeJSON(b *bytes.Buffer, v any) {
	e := json.NewEncoder(b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		b.WriteString("null") // not reached: v came from JSON
		return
	}
	b.Truncate(b.Len() - 1) // Encode's newline
}

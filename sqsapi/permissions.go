package sqsapi

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/fifoq/fifoq"
)

// AddPermission and RemovePermission edit the queue's Policy attribute, as SQS does. fifoq checks no
// permissions: the policy is stored and returned, never enforced.

type addPermissionInput struct {
	QueueUrl      string
	Label         string
	AWSAccountIds []string
	Actions       []string
}

func (in *addPermissionInput) fromQuery(f *form) error {
	in.QueueUrl, in.Label = f.get("QueueUrl"), f.get("Label")
	in.AWSAccountIds, in.Actions = f.list("AWSAccountId"), f.list("ActionName")
	return nil
}

// policyDoc is a queue policy, kept loose so that policies set with SetQueueAttributes survive an edit.
type policyDoc map[string]any

// readPolicy returns the queue's policy and its statements; a queue without one gets the document SQS
// starts for AddPermission: version 2008-10-17, id "<queue arn>/SQSDefaultPolicy".
func readPolicy(q fifoq.CatalogQueue, raw string) (policyDoc, []any, *apiError) {
	doc := policyDoc{"Version": "2008-10-17", "Id": arnOf(q) + "/SQSDefaultPolicy"}
	if raw != "" {
		if err := json.Unmarshal([]byte(raw), &doc); err != nil || doc == nil {
			return nil, nil, newError(codeInvalidParameterValue, "The queue's Policy attribute is not a JSON policy document.")
		}
	}
	statements, _ := doc["Statement"].([]any)
	return doc, statements, nil
}

func validLabel(label string) bool {
	return label != "" && len(label) <= 80 && validBatchID(label)
}

// maxPolicyActions is the most actions one statement of a policy names.
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

// oneOrMany is a policy value as SQS writes it: a single item alone, several as a list.
func oneOrMany(items []string) any {
	if len(items) == 1 {
		return items[0]
	}
	return items
}

// permissionStatement is a statement AddPermission writes, its members in SQS's order.
type permissionStatement struct {
	Sid       string         `json:"Sid"`
	Effect    string         `json:"Effect"`
	Principal map[string]any `json:"Principal"`
	Action    any            `json:"Action"`
	Resource  string         `json:"Resource"`
}

func addPermission(s *Server, c *call, in *addPermissionInput) (output, error) {
	q, err := s.resolve(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	switch {
	case in.Label == "":
		return nil, missing("Label")
	case !validLabel(in.Label):
		return nil, invalidValue(in.Label, "Label", "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length.")
	case len(in.AWSAccountIds) == 0:
		return nil, missing("AWSAccountIds")
	case len(in.Actions) == 0:
		return nil, missing("Actions")
	case len(in.Actions) > maxPolicyActions:
		return nil, &apiError{code: "OverLimit", status: 403,
			message: fmt.Sprintf("%d Actions were found, maximum allowed is %d.", len(in.Actions), maxPolicyActions)}
	}
	actions := make([]string, 0, len(in.Actions))
	for _, a := range in.Actions {
		switch {
		case ownerOnly[a]:
			return nil, invalidValue("SQS:"+a, "ActionName", "Only the queue owner is allowed to invoke this action.")
		case !grantable[a]:
			return nil, invalidValue("SQS:"+a, "ActionName", "Please refer to the appropriate WSDL for a list of valid actions.")
		}
		actions = append(actions, "SQS:"+a)
	}
	principals := make([]string, 0, len(in.AWSAccountIds))
	for _, id := range in.AWSAccountIds {
		principals = append(principals, "arn:aws:iam::"+id+":root")
	}

	return nil, s.changed(c, s.cat.Update(c.ctx, q.Namespace, q.Name, func(d *fifoq.Definition) error {
		doc, statements, perr := readPolicy(q, d.Policy)
		if perr != nil {
			return perr
		}
		for _, st := range statements {
			if m, ok := st.(map[string]any); ok && m["Sid"] == in.Label {
				return invalidValue(in.Label, "Label", "Already exists.")
			}
		}
		doc["Statement"] = append(statements, permissionStatement{
			Sid:       in.Label,
			Effect:    "Allow",
			Principal: map[string]any{"AWS": oneOrMany(principals)},
			Action:    oneOrMany(actions),
			Resource:  arnOf(q),
		})
		return storePolicy(d, doc)
	}))
}

// storePolicy makes doc the policy of d.
func storePolicy(d *fifoq.Definition, doc policyDoc) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return errInternal
	}
	d.Policy = string(b)
	return nil
}

type removePermissionInput struct{ QueueUrl, Label string }

func (in *removePermissionInput) fromQuery(f *form) error {
	in.QueueUrl, in.Label = f.get("QueueUrl"), f.get("Label")
	return nil
}

func removePermission(s *Server, c *call, in *removePermissionInput) (output, error) {
	q, err := s.resolve(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if in.Label == "" {
		return nil, missing("Label")
	}
	return nil, s.changed(c, s.cat.Update(c.ctx, q.Namespace, q.Name, func(d *fifoq.Definition) error {
		doc, statements, perr := readPolicy(q, d.Policy)
		if perr != nil {
			return perr
		}
		i := slices.IndexFunc(statements, func(st any) bool {
			m, ok := st.(map[string]any)
			return ok && m["Sid"] == in.Label
		})
		if i < 0 {
			return invalidValue(in.Label, "Label", "can't find label.")
		}
		statements = slices.Delete(statements, i, i+1)
		if len(statements) == 0 {
			d.Policy = ""
			return nil
		}
		doc["Statement"] = statements
		return storePolicy(d, doc)
	}))
}

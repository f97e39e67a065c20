package sqsapi

import (
	"encoding/json"
	"slices"
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

func (s *Server) readPolicy(qs *queueState) (policyDoc, []any, *apiError) {
	doc := policyDoc{"Version": "2012-10-17", "Id": qs.arn + "/SQSDefaultPolicy"}
	if raw, ok := qs.extra["Policy"]; ok && raw != "" {
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

func addPermission(s *Server, c *call, in *addPermissionInput) (output, error) {
	qs, err := s.resolve(c, in.QueueUrl)
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
	}
	var actions []any
	for _, a := range in.Actions {
		if _, ok := actionTable[a]; !ok && a != "*" {
			return nil, invalidValue("SQS:"+a, "ActionName", "Please refer to the appropriate WSDL for a list of valid actions.")
		}
		actions = append(actions, "SQS:"+a)
	}
	var principals []any
	for _, id := range in.AWSAccountIds {
		principals = append(principals, "arn:aws:iam::"+id+":root")
	}

	return nil, s.changeQueue(qs, func() error {
		doc, statements, perr := s.readPolicy(qs)
		if perr != nil {
			return perr
		}
		for _, st := range statements {
			if m, ok := st.(map[string]any); ok && m["Sid"] == in.Label {
				return invalidValue(in.Label, "Label", "Already exists.")
			}
		}
		doc["Statement"] = append(statements, map[string]any{
			"Sid":       in.Label,
			"Effect":    "Allow",
			"Principal": map[string]any{"AWS": principals},
			"Action":    actions,
			"Resource":  qs.arn,
		})
		return s.storePolicy(qs, doc)
	})
}

func (s *Server) storePolicy(qs *queueState, doc policyDoc) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return errInternal
	}
	if qs.extra == nil {
		qs.extra = make(map[string]string, 1)
	}
	qs.extra["Policy"] = string(b)
	qs.modified = s.now()
	return nil
}

type removePermissionInput struct{ QueueUrl, Label string }

func (in *removePermissionInput) fromQuery(f *form) error {
	in.QueueUrl, in.Label = f.get("QueueUrl"), f.get("Label")
	return nil
}

func removePermission(s *Server, c *call, in *removePermissionInput) (output, error) {
	qs, err := s.resolve(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if in.Label == "" {
		return nil, missing("Label")
	}
	return nil, s.changeQueue(qs, func() error {
		doc, statements, perr := s.readPolicy(qs)
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
			delete(qs.extra, "Policy")
			qs.modified = s.now()
			return nil
		}
		doc["Statement"] = statements
		return s.storePolicy(qs, doc)
	})
}

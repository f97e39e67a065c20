package sqsapi

// AddPermission and RemovePermission: the catalogue edits the queue's Policy attribute, as SQS does
// (catalog.Catalog.AddPermission), and checks nothing against it: the policy is stored and returned, never
// enforced.

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

func addPermission(s *Server, c *call, in *addPermissionInput) (output, error) {
	q, err := s.resolve(c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	return nil, s.changed(c, s.cat.AddPermission(c.ctx, q.Namespace(), q.Name(), in.Label, in.AWSAccountIds, in.Actions))
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
	return nil, s.changed(c, s.cat.RemovePermission(c.ctx, q.Namespace(), q.Name(), in.Label))
}

package catalog_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
)

// AddPermission and RemovePermission of a catalogue: the rules, with AWS's codes and texts, and the policy
// as SQS writes it.

const (
	pmARN  = "arn:aws:sqs:us-east-1:000000000000:pm"
	pmRoot = "arn:aws:iam::111111111111:root"
)

func pmPolicy(t *testing.T, c *catalog.Catalog) string {
	t.Helper()
	d, ok := c.Definition(ctNS, "pm")
	require.True(t, ok)
	return d.Policy
}

// A principal that is not an AWS account id (12 digits) cannot be verified: AWS answers 400
// InvalidParameterValue "Value [<entry>] for parameter PrincipalId is invalid. Reason: Unable to verify." and
// changes nothing (recorded: MuleSoft's SQS connector test against AWS with a random id; the list is printed as
// Java prints one, so an empty string gives "[]"). When some principals are account ids, the others are left
// out (Eucalyptus's note of AWS's behaviour).
func TestPermissionPrincipals(t *testing.T) {
	t.Parallel()
	c, _ := newCtCatalog(t)
	ctCreate(t, c, ctNS, "pm", catalog.Definition{}, 0)
	for _, tc := range []struct {
		ids  []string
		text string
	}{
		{[]string{"*"}, "Value [*] for parameter PrincipalId is invalid. Reason: Unable to verify."},
		{[]string{pmRoot}, "Value [" + pmRoot + "] for parameter PrincipalId is invalid. Reason: Unable to verify."},
		{[]string{""}, "Value [] for parameter PrincipalId is invalid. Reason: Unable to verify."},
		{[]string{"11111111111", "*"}, "Value [11111111111, *] for parameter PrincipalId is invalid. Reason: Unable to verify."},
	} {
		err := c.AddPermission(t.Context(), ctNS, "pm", "l", tc.ids, []string{"SendMessage"})
		require.ErrorIs(t, err, catalog.ErrInvalidPermission, "%q", tc.ids)
		require.Equal(t, "InvalidParameterValue", fifoq.ErrorCode(err))
		require.Equal(t, tc.text, fifoq.ErrorMessage(err))
		require.Empty(t, pmPolicy(t, c), "a refused AddPermission changes nothing")
	}
	require.NoError(t, c.AddPermission(t.Context(), ctNS, "pm", "l", []string{"*", "111111111111"}, []string{"SendMessage"}))
	require.Equal(t, `{"Version":"2008-10-17","Id":"`+pmARN+`/SQSDefaultPolicy","Statement":[{"Sid":"l","Effect":"Allow",`+
		`"Principal":{"AWS":"`+pmRoot+`"},"Action":"SQS:SendMessage","Resource":"`+pmARN+`"}]}`, pmPolicy(t, c))
}

// The policy is written with its members in AWS's order (Version, Id, Statement; Sid, Effect, Principal,
// Action, Resource, Condition), as AWS returns policies (queue policies returned by GetQueueAttributes and
// quoted in public code, an SQSDefaultPolicy with a Condition among them), also for the statements written
// before (by an earlier version of fifoq, in encoding/json's order); numbers keep their digits, and <, > and &
// stay as they are.
func TestPermissionPolicyOrder(t *testing.T) {
	t.Parallel()
	c, _ := newCtCatalog(t)
	ctCreate(t, c, ctNS, "pm", catalog.Definition{}, 0)
	earlier := `{"Id":"` + pmARN + `/SQSDefaultPolicy","Statement":[{"Action":"SQS:ReceiveMessage","Condition":` +
		`{"NumericLessThan":{"x":12345678901234567890}},"Effect":"Allow","Principal":{"AWS":"` + pmRoot + `"},` +
		`"Resource":"` + pmARN + `","Sid":"old"}],"Version":"2008-10-17","Zeta":"a<b&c>d"}`
	require.NoError(t, c.Update(t.Context(), ctNS, "pm", func(d *catalog.Definition) error {
		d.Apply(catalog.Definition{Policy: earlier}, catalog.FieldPolicy)
		return nil
	}))
	require.NoError(t, c.AddPermission(t.Context(), ctNS, "pm", "new", []string{"111111111111", "222222222222"},
		[]string{"SendMessage", "DeleteMessage"}))
	want := `{"Version":"2008-10-17","Id":"` + pmARN + `/SQSDefaultPolicy","Statement":[` +
		`{"Sid":"old","Effect":"Allow","Principal":{"AWS":"` + pmRoot + `"},"Action":"SQS:ReceiveMessage","Resource":"` + pmARN + `",` +
		`"Condition":{"NumericLessThan":{"x":12345678901234567890}}},` +
		`{"Sid":"new","Effect":"Allow","Principal":{"AWS":["` + pmRoot + `","arn:aws:iam::222222222222:root"]},` +
		`"Action":["SQS:SendMessage","SQS:DeleteMessage"],"Resource":"` + pmARN + `"}],"Zeta":"a<b&c>d"}`
	require.Equal(t, want, pmPolicy(t, c))
	require.NoError(t, c.RemovePermission(t.Context(), ctNS, "pm", "new"))
	require.Equal(t, `{"Version":"2008-10-17","Id":"`+pmARN+`/SQSDefaultPolicy","Statement":[`+
		`{"Sid":"old","Effect":"Allow","Principal":{"AWS":"`+pmRoot+`"},"Action":"SQS:ReceiveMessage","Resource":"`+pmARN+`",`+
		`"Condition":{"NumericLessThan":{"x":12345678901234567890}}}],"Zeta":"a<b&c>d"}`, pmPolicy(t, c))
}

// The other rules of AddPermission and RemovePermission, each with its sentinel, code and AWS's text.
func TestPermissionRules(t *testing.T) {
	t.Parallel()
	c, _ := newCtCatalog(t)
	ctCreate(t, c, ctNS, "pm", catalog.Definition{}, 0)
	add := func(label string, ids, actions []string) error {
		return c.AddPermission(t.Context(), ctNS, "pm", label, ids, actions)
	}
	one, send := []string{"111111111111"}, []string{"SendMessage"}
	for _, tc := range []struct {
		name     string
		err      error
		sentinel *fifoq.Error
		code     string
		text     string
	}{
		{"no label", add("", one, send), catalog.ErrInvalidPermission, "MissingParameter", "The request must contain the parameter Label."},
		{"bad label", add("a b", one, send), catalog.ErrInvalidPermission, "InvalidParameterValue",
			"Value a b for parameter Label is invalid. Reason: Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length."},
		{"no ids", add("l", nil, send), catalog.ErrInvalidPermission, "MissingParameter", "The request must contain the parameter AWSAccountIds."},
		{"no actions", add("l", one, nil), catalog.ErrInvalidPermission, "MissingParameter", "The request must contain the parameter Actions."},
		{"8 actions", add("l", one, make([]string, 8)), catalog.ErrTooManyActions, "OverLimit", "8 Actions were found, maximum allowed is 7."},
		{"owner's action", add("l", one, []string{"DeleteQueue"}), catalog.ErrInvalidPermission, "InvalidParameterValue",
			"Value SQS:DeleteQueue for parameter ActionName is invalid. Reason: Only the queue owner is allowed to invoke this action."},
		{"unknown action", add("l", one, []string{"Fly"}), catalog.ErrInvalidPermission, "InvalidParameterValue",
			"Value SQS:Fly for parameter ActionName is invalid. Reason: Please refer to the appropriate WSDL for a list of valid actions."},
		{"remove no label", c.RemovePermission(t.Context(), ctNS, "pm", ""), catalog.ErrInvalidPermission, "MissingParameter",
			"The request must contain the parameter Label."},
		{"remove unknown", c.RemovePermission(t.Context(), ctNS, "pm", "x"), catalog.ErrInvalidPermission, "InvalidParameterValue",
			"Value x for parameter Label is invalid. Reason: can't find label."},
	} {
		require.ErrorIs(t, tc.err, tc.sentinel, tc.name)
		require.Equal(t, tc.code, fifoq.ErrorCode(tc.err), tc.name)
		require.Equal(t, tc.text, fifoq.ErrorMessage(tc.err), tc.name)
	}
	require.NoError(t, add("l", one, send))
	err := add("l", one, send)
	require.ErrorIs(t, err, catalog.ErrInvalidPermission)
	require.Equal(t, "Value l for parameter Label is invalid. Reason: Already exists.", fifoq.ErrorMessage(err))
	require.ErrorIs(t, c.AddPermission(t.Context(), ctNS, "none", "l", one, send), catalog.ErrQueueDoesNotExist)
	require.True(t, errors.Is(c.RemovePermission(t.Context(), ctNS, "none", "l"), catalog.ErrQueueDoesNotExist))
}

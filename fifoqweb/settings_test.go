package fifoqweb

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
)

// stCatalog returns a catalogue with a standard queue orders and its dead-letter queue orders-dlq, a FIFO
// queue jobs.fifo, and the console over it.
func stCatalog(t *testing.T, opts ...Option) (*catalog.Catalog, *fifoq.ManualClock, *wtClient) {
	t.Helper()
	ctx := context.Background()
	clk := fifoq.NewManualClock(wtStart)
	cat := catalog.New(catalog.WithClock(clk))
	t.Cleanup(func() { _ = cat.Close() })
	ns := catalog.Namespace{}
	for _, name := range []string{"orders-dlq", "jobs.fifo"} {
		_, err := cat.CreateQueue(ctx, ns, name, catalog.Definition{}, 0)
		require.NoError(t, err)
	}
	_, err := cat.CreateQueue(ctx, ns, "orders", catalog.Definition{VisibilityTimeout: time.Minute,
		RedrivePolicy: catalog.RedrivePolicy{DeadLetterQueue: "orders-dlq", MaxReceiveCount: 3}},
		catalog.FieldVisibilityTimeout|catalog.FieldRedrivePolicy)
	require.NoError(t, err)
	h := NewCatalog(cat, append([]Option{WithClock(clk)}, opts...)...)
	t.Cleanup(func() { _ = h.Close() })
	return cat, clk, &wtClient{t: t, h: h}
}

// catState is what a refused form must leave as it was: every queue's definition.
func catState(cat *catalog.Catalog) map[string]catalog.Definition {
	out := map[string]catalog.Definition{}
	for _, q := range cat.Queues() {
		d, _ := cat.Definition(q.Namespace(), q.Name())
		out[q.Name()] = d
	}
	return out
}

// fieldErr returns the refusal shown beside the field name of a form page, "" for none.
func fieldErr(t *testing.T, body, name string) string {
	t.Helper()
	m := regexp.MustCompile(`<p class="field-error" id="e-` + regexp.QuoteMeta(name) + `" role="alert">([^<]*)</p>`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// A queue created with every attribute SQS takes at creation, through the confirmation page, has them all.
func TestCreateQueueEveryAttribute(t *testing.T) {
	t.Parallel()
	cat, _, c := stCatalog(t)
	code, body := c.get("newqueue")
	require.Equal(t, http.StatusOK, code, body)
	for _, f := range settingFields() {
		require.Contains(t, body, `name="`+f.Name+`"`, "the create form has %s", f.Name)
	}
	form := url.Values{"name": {"payments.fifo"}, "type": {"fifo"}, "VisibilityTimeout": {"120"}, "DelaySeconds": {"5"},
		"MessageRetentionPeriod": {"86400"}, "MaximumMessageSize": {"65536"}, "ReceiveMessageWaitTimeSeconds": {"20"},
		"ContentBasedDeduplication": {"true"}, "DeduplicationScope": {"messageGroup"}, "FifoThroughputLimit": {"perMessageGroupId"},
		"RedrivePolicy": {"jobs.fifo"}, "maxReceiveCount": {"4"}, "RedriveAllowPolicy": {"byQueue"}, "sourceQueues": {"a.fifo, b.fifo"},
		"Policy": {`{"Version":"2012-10-17"}`}, "KmsMasterKeyId": {"alias/payments"}, "KmsDataKeyReusePeriodSeconds": {"600"},
		"Tags": {"team=payments\r\ncost=42"}}
	before := catState(cat)
	w := c.post("createqueue", form, false)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	require.Contains(t, w.Body.String(), "Create the FIFO queue payments.fifo with VisibilityTimeout 120, DelaySeconds 5")
	require.Contains(t, w.Body.String(), `name="confirm" value="yes"`)
	require.Equal(t, before, catState(cat), "not confirmed: nothing created")
	w = c.post("createqueue", form, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	require.Equal(t, "queue?done=created&q=payments.fifo", w.Header().Get("Location"))
	d, ok := cat.Definition(catalog.Namespace{}, "payments.fifo")
	require.True(t, ok)
	require.Equal(t, 2*time.Minute, d.VisibilityTimeout)
	require.Equal(t, 5*time.Second, d.Delay)
	require.Equal(t, 24*time.Hour, d.Retention)
	require.Equal(t, 65536, d.MaxMessageSize)
	require.Equal(t, 20*time.Second, d.ReceiveWaitTime)
	require.True(t, d.ContentBasedDeduplication)
	require.Equal(t, fifoq.DeduplicationScopeMessageGroup, d.DeduplicationScope)
	require.Equal(t, catalog.ThroughputPerMessageGroupID, d.ThroughputLimit)
	require.Equal(t, catalog.RedrivePolicy{DeadLetterQueue: "jobs.fifo", MaxReceiveCount: 4}, d.RedrivePolicy)
	require.Equal(t, &fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveByQueue, Sources: []string{"a.fifo", "b.fifo"}}, d.RedriveAllowPolicy)
	require.Equal(t, `{"Version":"2012-10-17"}`, d.Policy)
	require.Equal(t, "alias/payments", d.KMSMasterKeyID)
	require.Equal(t, 10*time.Minute, d.KMSDataKeyReusePeriod)
	require.False(t, d.SQSManagedSSE, "a KMS key turns SQS-managed encryption off")
	require.Equal(t, map[string]string{"team": "payments", "cost": "42"}, d.Tags)

	// A standard queue with the defaults: only the name.
	w = c.post("createqueue", url.Values{"name": {"plain"}, "type": {"standard"}}, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	d, _ = cat.Definition(catalog.Namespace{}, "plain")
	require.Equal(t, catalog.NewDefinition(false).VisibilityTimeout, d.VisibilityTimeout)
	require.True(t, d.SQSManagedSSE)
}

// Each bad setting of the create form is refused beside its field with the wire API's message, and nothing
// is created.
func TestCreateQueueRefusals(t *testing.T) {
	t.Parallel()
	cat, clk, c := stCatalog(t)
	ok := url.Values{"name": {"fresh"}, "type": {"standard"}}
	with := func(kv ...string) url.Values {
		f := url.Values{}
		for k, v := range ok {
			f[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			f.Set(kv[i], kv[i+1])
		}
		return f
	}
	before := catState(cat)
	for _, tc := range []struct {
		name  string
		form  url.Values
		field string
		says  string
	}{
		{"no name", with("name", ""), "name", "A queue needs a name."},
		{"bad name", with("name", "a b"), "name", "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length"},
		{"FIFO without .fifo", with("type", "fifo"), "name", "must end with .fifo suffix"},
		{".fifo standard", with("name", "x.fifo"), "name", "Only a FIFO queue's name ends in .fifo"},
		{"exists", with("name", "orders"), "name", "A queue named orders exists already"},
		{"visibility not a number", with("VisibilityTimeout", "soon"), "VisibilityTimeout", `Invalid value for the parameter VisibilityTimeout: "soon" is not a whole number.`},
		{"visibility too long", with("VisibilityTimeout", "43201"), "VisibilityTimeout", "Invalid value for the parameter VisibilityTimeout."},
		{"delay too long", with("DelaySeconds", "901"), "DelaySeconds", "Invalid value for the parameter DelaySeconds."},
		{"retention too short", with("MessageRetentionPeriod", "59"), "MessageRetentionPeriod", "Invalid value for the parameter MessageRetentionPeriod."},
		{"size too small", with("MaximumMessageSize", "1023"), "MaximumMessageSize", "Invalid value for the parameter MaximumMessageSize."},
		{"wait too long", with("ReceiveMessageWaitTimeSeconds", "21"), "ReceiveMessageWaitTimeSeconds", "Invalid value for the parameter ReceiveMessageWaitTimeSeconds."},
		{"dedup on standard", with("ContentBasedDeduplication", "true"), "ContentBasedDeduplication", "Attribute is valid only on FIFO queues"},
		{"scope on standard", with("DeduplicationScope", "messageGroup"), "DeduplicationScope", "Attribute is valid only on FIFO queues"},
		{"bad receive count", with("RedrivePolicy", "orders-dlq", "maxReceiveCount", "0"), "RedrivePolicy", "maxReceiveCount"},
		{"no such dead-letter queue", with("RedrivePolicy", "nope", "maxReceiveCount", "3"), "RedrivePolicy", "Dead-letter target does not exist"},
		{"dead-letter queue of another type", with("RedrivePolicy", "jobs.fifo", "maxReceiveCount", "3"), "RedrivePolicy", "Dead-letter queue must be same type of queue as the source."},
		{"count without queue", with("maxReceiveCount", "3"), "RedrivePolicy", "maxReceiveCount"},
		{"byQueue without sources", with("RedriveAllowPolicy", "byQueue"), "RedriveAllowPolicy", "sourceQueueArns"},
		{"sources without byQueue", with("sourceQueues", "a"), "RedriveAllowPolicy", "choose byQueue"},
		{"too many sources", with("RedriveAllowPolicy", "byQueue", "sourceQueues", "a,b,c,d,e,f,g,h,i,j,k"), "RedriveAllowPolicy", "10"},
		{"reuse period too short", with("KmsMasterKeyId", "k", "KmsDataKeyReusePeriodSeconds", "59"), "KmsDataKeyReusePeriodSeconds", "KmsDataKeyReusePeriodSeconds"},
		{"two kinds of encryption", with("KmsMasterKeyId", "k", "SqsManagedSseEnabled", "true"), "KmsMasterKeyId", "You can use one type of server-side encryption (SSE) at one time."},
		{"throughput per group, queue scope", with("name", "f.fifo", "type", "fifo", "FifoThroughputLimit", "perMessageGroupId", "DeduplicationScope", "queue"), "FifoThroughputLimit", "perMessageGroupId is allowed only when DeduplicationScope is messageGroup."},
		{"tags not key=value", with("Tags", "team"), "Tags", `Line 1: "team" is not key=value.`},
		{"tag key too long", with("Tags", strings.Repeat("k", 129)+"=v"), "Tags", "Tag keys must be between 1 and 128 characters in length."},
	} {
		for _, confirm := range []bool{false, true} {
			w := c.post("createqueue", tc.form, confirm)
			require.Equal(t, http.StatusBadRequest, w.Code, "%s: %s", tc.name, w.Body.String())
			got := fieldErr(t, w.Body.String(), tc.field)
			require.Contains(t, got, tc.says, "%s: beside %s: %s", tc.name, tc.field, w.Body.String())
			require.Contains(t, w.Body.String(), `aria-invalid="true"`, tc.name)
			require.Equal(t, before, catState(cat), "%s: nothing created", tc.name)
		}
	}

	// A name deleted less than 60 seconds ago: the catalogue's refusal, beside the name, after the
	// confirmation.
	require.NoError(t, cat.DeleteQueue(context.Background(), catalog.Namespace{}, "orders-dlq"))
	before = catState(cat)
	w := c.post("createqueue", with("name", "orders-dlq"), true)
	require.Equal(t, http.StatusBadRequest, w.Code, w.Body.String())
	require.Contains(t, fieldErr(t, w.Body.String(), "name"), "You must wait 60 seconds after deleting a queue")
	require.Equal(t, before, catState(cat))
	clk.Advance(time.Minute)
	require.Equal(t, http.StatusSeeOther, c.post("createqueue", with("name", "orders-dlq"), true).Code, "60 seconds later")
}

// A queue's settings form shows its settings, changes those that differ through the catalogue once
// confirmed, and refuses bad ones beside their field.
func TestChangeQueueSettings(t *testing.T) {
	t.Parallel()
	cat, _, c := stCatalog(t)
	ns := catalog.Namespace{}
	code, body := c.get("settings?q=orders")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `id="f-VisibilityTimeout" name="VisibilityTimeout" inputmode="numeric" size="10" value="60"`)
	require.Contains(t, body, `<option selected>orders-dlq</option>`)
	require.NotContains(t, body, `name="DeduplicationScope"`, "a standard queue's form has no FIFO setting")

	form := func(kv ...string) url.Values {
		f := url.Values{"VisibilityTimeout": {"60"}, "DelaySeconds": {"0"}, "MessageRetentionPeriod": {"345600"},
			"MaximumMessageSize": {"1048576"}, "ReceiveMessageWaitTimeSeconds": {"0"}, "RedrivePolicy": {"orders-dlq"},
			"maxReceiveCount": {"3"}, "RedriveAllowPolicy": {""}, "sourceQueues": {""}, "Policy": {""}, "KmsMasterKeyId": {""},
			"KmsDataKeyReusePeriodSeconds": {""}, "SqsManagedSseEnabled": {"true"}}
		for i := 0; i < len(kv); i += 2 {
			f.Set(kv[i], kv[i+1])
		}
		return f
	}
	before := catState(cat)
	w := c.post("updatequeue?q=orders", form(), true)
	require.Equal(t, http.StatusOK, w.Code)
	require.Contains(t, w.Body.String(), "No setting differs from the queue&#39;s: nothing to change.")
	for _, tc := range []struct {
		name, field, says string
		form              url.Values
	}{
		{"visibility too long", "VisibilityTimeout", "Invalid value for the parameter VisibilityTimeout.", form("VisibilityTimeout", "50000")},
		{"bad count", "RedrivePolicy", "maxReceiveCount", form("maxReceiveCount", "1001")},
		{"FIFO dead-letter queue", "RedrivePolicy", "Dead-letter queue must be same type of queue as the source.", form("RedrivePolicy", "jobs.fifo")},
		{"bad permission", "RedriveAllowPolicy", "Invalid value for redrivePermission", form("RedriveAllowPolicy", "some")},
	} {
		w := c.post("updatequeue?q=orders", tc.form, true)
		require.Equal(t, http.StatusBadRequest, w.Code, tc.name)
		require.Contains(t, fieldErr(t, w.Body.String(), tc.field), tc.says, "%s: %s", tc.name, w.Body.String())
		require.Equal(t, before, catState(cat), "%s: nothing changed", tc.name)
	}

	w = c.post("updatequeue?q=orders", form("VisibilityTimeout", "90", "maxReceiveCount", "5", "SqsManagedSseEnabled", "false"), false)
	require.Equal(t, http.StatusOK, w.Code)
	require.Contains(t, w.Body.String(), "Change the settings of orders: VisibilityTimeout 60 → 90; RedrivePolicy orders-dlq after 3 receives → orders-dlq after 5 receives; SqsManagedSseEnabled true → false.")
	require.Equal(t, before, catState(cat), "not confirmed")
	w = c.post("updatequeue?q=orders", form("VisibilityTimeout", "90", "maxReceiveCount", "5", "SqsManagedSseEnabled", "false"), true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	require.Equal(t, "queue?done=settings&q=orders", w.Header().Get("Location"))
	d, _ := cat.Definition(ns, "orders")
	require.Equal(t, 90*time.Second, d.VisibilityTimeout)
	require.Equal(t, catalog.RedrivePolicy{DeadLetterQueue: "orders-dlq", MaxReceiveCount: 5}, d.RedrivePolicy)
	require.False(t, d.SQSManagedSSE)
	before = catState(cat)
	w = c.post("updatequeue?q=orders", form("VisibilityTimeout", "90", "maxReceiveCount", "5", "KmsMasterKeyId", "k", "SqsManagedSseEnabled", "true"), true)
	require.Equal(t, http.StatusBadRequest, w.Code)
	require.Contains(t, fieldErr(t, w.Body.String(), "KmsMasterKeyId"), "You can use one type of server-side encryption (SSE) at one time.")
	require.Equal(t, before, catState(cat))

	// Removing the redrive policy, and giving a redrive allow policy to the dead-letter queue.
	w = c.post("updatequeue?q=orders", form("VisibilityTimeout", "90", "SqsManagedSseEnabled", "false", "RedrivePolicy", "", "maxReceiveCount", ""), true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	d, _ = cat.Definition(ns, "orders")
	require.Equal(t, catalog.RedrivePolicy{}, d.RedrivePolicy)
	w = c.post("updatequeue?q=orders-dlq", form("RedrivePolicy", "", "maxReceiveCount", "", "RedriveAllowPolicy", "byQueue", "sourceQueues", "orders"), true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	d, _ = cat.Definition(ns, "orders-dlq")
	require.Equal(t, &fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveByQueue, Sources: []string{"orders"}}, d.RedriveAllowPolicy)

	// The dead-letter queue's allow policy refuses a source it does not name: the catalogue's refusal.
	w = c.post("updatequeue?q=jobs.fifo", url.Values{"RedriveAllowPolicy": {"denyAll"}}, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	_, err := cat.CreateQueue(context.Background(), ns, "other.fifo", catalog.Definition{}, 0)
	require.NoError(t, err)
	code, body = c.get("settings?q=other.fifo")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `name="ContentBasedDeduplication"`, "a FIFO queue's form has the FIFO settings")
	before = catState(cat)
	w = c.post("updatequeue?q=other.fifo", url.Values{"RedrivePolicy": {"jobs.fifo"}, "maxReceiveCount": {"2"}}, true)
	require.Equal(t, http.StatusBadRequest, w.Code, w.Body.String())
	require.Contains(t, fieldErr(t, w.Body.String(), "RedrivePolicy"), "does not allow this source queue", w.Body.String())
	require.Equal(t, before, catState(cat))
}

// Deleting a queue, after a confirmation that says what it holds and which queues use it as their
// dead-letter queue.
func TestDeleteQueue(t *testing.T) {
	t.Parallel()
	cat, _, c := stCatalog(t)
	q, _ := cat.Queue(catalog.Namespace{}, "orders-dlq")
	_, err := q.Send(context.Background(), fifoq.Message{Body: "dead"})
	require.NoError(t, err)
	w := c.post("deletequeue?q=orders-dlq", nil, false)
	require.Equal(t, http.StatusOK, w.Code)
	require.Contains(t, w.Body.String(), "Delete the queue orders-dlq and its 1 messages (1 visible, 0 in flight, 0 delayed).")
	require.Contains(t, w.Body.String(), "It is the dead-letter queue of orders: they keep their redrive policy")
	_, there := cat.Queue(catalog.Namespace{}, "orders-dlq")
	require.True(t, there, "not confirmed")
	w = c.post("deletequeue?q=orders-dlq", nil, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	require.Equal(t, "./?done=deleted", w.Header().Get("Location"))
	_, there = cat.Queue(catalog.Namespace{}, "orders-dlq")
	require.False(t, there)
	d, _ := cat.Definition(catalog.Namespace{}, "orders")
	require.True(t, d.RedrivePolicy.Pending)
	w = c.post("deletequeue?q=orders-dlq", nil, true)
	require.Equal(t, http.StatusNotFound, w.Code)
	_, body := c.get("?done=deleted")
	require.Contains(t, body, "Queue deleted.")
}

// A program's console changes its queues' settings through their SetAttributes, and creates and deletes
// none.
func TestPlainConsoleSettings(t *testing.T) {
	t.Parallel()
	qs, h := wtSetup(t)
	c := &wtClient{t: t, h: h}
	code, body := c.get("settings?q=jobs.fifo")
	require.Equal(t, http.StatusOK, code, body)
	for _, absent := range []string{"FifoThroughputLimit", "Policy", "KmsMasterKeyId", "SqsManagedSseEnabled", "deletequeue"} {
		require.NotContains(t, body, `name="`+absent+`"`, absent)
	}
	require.NotContains(t, body, "Delete…")
	form := url.Values{"VisibilityTimeout": {"60"}, "DelaySeconds": {"0"}, "MessageRetentionPeriod": {"345600"},
		"MaximumMessageSize": {"1048576"}, "ReceiveMessageWaitTimeSeconds": {"0"}, "ContentBasedDeduplication": {"true"},
		"DeduplicationScope": {"queue"}}
	w := c.post("updatequeue?q=jobs.fifo", form, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	require.True(t, qs.fif.Attributes().ContentBasedDeduplication)
	w = c.post("updatequeue?q=orders", url.Values{"VisibilityTimeout": {"60"}, "RedrivePolicy": {"orders-dlq"}, "maxReceiveCount": {"7"}}, true)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	require.Equal(t, 7, qs.orders.Attributes().MaxReceiveCount)
	before := qs.orders.Attributes()
	w = c.post("updatequeue?q=orders", url.Values{"VisibilityTimeout": {"60"}, "RedrivePolicy": {"jobs.fifo"}, "maxReceiveCount": {"7"}}, true)
	require.Equal(t, http.StatusBadRequest, w.Code)
	require.Contains(t, fieldErr(t, w.Body.String(), "RedrivePolicy"), "same type")
	require.Equal(t, before, qs.orders.Attributes())
	for _, path := range []string{"newqueue", "createqueue", "deletequeue?q=orders", "newtopic"} {
		code, _ := c.get(path)
		require.Equal(t, http.StatusNotFound, code, path)
		require.Equal(t, http.StatusNotFound, c.post(path, url.Values{"name": {"x"}}, true).Code, path)
	}
	_, body = c.get("")
	require.NotContains(t, body, `href="newqueue"`)
}

package fifoqweb

import (
	"cmp"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/internal/rule"
)

// The settings of a queue: the form that creates one (newqueue, posted to createqueue), the form that
// changes one (settings?q=, posted to updatequeue?q=), and its deletion (deletequeue?q=). Each setting is
// read as the wire API spells it (SQS's attribute names, seconds, bytes), checked on its own by
// catalog.Definition.Check, the wire API's check, and refused beside its field; a form without an error
// then shows a confirmation page, and only its "Yes" makes the change, through the backend (the catalogue's
// CreateQueue, Update and DeleteQueue; a queue's SetAttributes).

// A settingField is a setting as the form shows it.
type settingField struct {
	Name    string         // the form's field, the SQS attribute's name
	Label   string         // what the form calls it
	Kind    string         // seconds, number, choice, text, textarea, redrive, allow
	Help    string         // its range
	Options []string       // a choice's values; "" is the default of a new queue
	FIFO    bool           // FIFO queues only
	field   catalog.Fields // the setting of a Definition it is
	Value   string         // as shown
	Value2  string         // the second input of a redrive policy (maxReceiveCount) or an allow policy (sources)
	Err     string         // why it was refused
}

// The second inputs of the composite settings.
const (
	fieldMaxReceiveCount = "maxReceiveCount"
	fieldSources         = "sourceQueues"
	fieldName            = "name"
	fieldType            = "type"
	fieldTags            = "Tags"
)

// settingFields returns the settings of the form, empty, in the order of the form.
func settingFields() []settingField {
	return []settingField{
		{Name: "VisibilityTimeout", Label: "Visibility timeout", Kind: "seconds", Help: "0 to 43,200 seconds (12 hours); default 30", field: catalog.FieldVisibilityTimeout},
		{Name: "DelaySeconds", Label: "Delivery delay", Kind: "seconds", Help: "0 to 900 seconds (15 minutes); default 0", field: catalog.FieldDelay},
		{Name: "MessageRetentionPeriod", Label: "Retention period", Kind: "seconds", Help: "60 to 1,209,600 seconds (14 days); default 345,600 (4 days)", field: catalog.FieldRetention},
		{Name: "MaximumMessageSize", Label: "Maximum message size", Kind: "number", Help: "1,024 to 1,048,576 bytes; default 1,048,576", field: catalog.FieldMaxMessageSize},
		{Name: "ReceiveMessageWaitTimeSeconds", Label: "Receive wait time", Kind: "seconds", Help: "0 to 20 seconds (long polling); default 0", field: catalog.FieldReceiveWaitTime},
		{Name: "ContentBasedDeduplication", Label: "Content-based deduplication", Kind: "choice", Options: []string{"", "true", "false"}, FIFO: true, field: catalog.FieldContentBasedDeduplication},
		{Name: "DeduplicationScope", Label: "Deduplication scope", Kind: "choice", Options: []string{"", "queue", "messageGroup"}, FIFO: true, field: catalog.FieldDeduplicationScope},
		{Name: "FifoThroughputLimit", Label: "Throughput limit", Kind: "choice", Options: []string{"", "perQueue", "perMessageGroupId"}, FIFO: true, Help: "perMessageGroupId needs the messageGroup deduplication scope; stored, not enforced", field: catalog.FieldThroughputLimit},
		{Name: "RedrivePolicy", Label: "Dead-letter queue", Kind: "redrive", Help: "a queue of the same type and account; after 1 to 1,000 receives", field: catalog.FieldRedrivePolicy},
		{Name: "RedriveAllowPolicy", Label: "Redrive allow policy", Kind: "allow", Options: []string{"", "allowAll", "denyAll", "byQueue"}, Help: "which queues may use this one as their dead-letter queue; byQueue names 1 to 10 sources", field: catalog.FieldRedriveAllowPolicy},
		{Name: "Policy", Label: "Access policy", Kind: "textarea", Help: "a JSON policy document; stored, not enforced", field: catalog.FieldPolicy},
		{Name: "KmsMasterKeyId", Label: "KMS key", Kind: "text", Help: "a KMS key id or alias, for server-side encryption; stored, not applied", field: catalog.FieldKMSMasterKeyID},
		{Name: "KmsDataKeyReusePeriodSeconds", Label: "KMS data key reuse period", Kind: "seconds", Help: "60 to 86,400 seconds; default 300", field: catalog.FieldKMSDataKeyReusePeriod},
		{Name: "SqsManagedSseEnabled", Label: "SQS-managed encryption", Kind: "choice", Options: []string{"", "true", "false"}, Help: "not with a KMS key; stored, not applied", field: catalog.FieldSQSManagedSSE},
	}
}

// showSettings returns the fields of d as the form shows them.
func showSettings(fields []settingField, d catalog.Definition, fifo bool) {
	for i := range fields {
		f := &fields[i]
		switch f.field {
		case catalog.FieldVisibilityTimeout:
			f.Value = seconds(d.VisibilityTimeout)
		case catalog.FieldDelay:
			f.Value = seconds(d.Delay)
		case catalog.FieldRetention:
			f.Value = seconds(d.Retention)
		case catalog.FieldMaxMessageSize:
			f.Value = strconv.Itoa(d.MaxMessageSize)
		case catalog.FieldReceiveWaitTime:
			f.Value = seconds(d.ReceiveWaitTime)
		case catalog.FieldContentBasedDeduplication:
			if fifo {
				f.Value = strconv.FormatBool(d.ContentBasedDeduplication)
			}
		case catalog.FieldDeduplicationScope:
			if fifo {
				f.Value = cmp.Or(d.DeduplicationScope, fifoq.DeduplicationScopeQueue).String()
			}
		case catalog.FieldThroughputLimit:
			if fifo && d.ThroughputLimit != 0 {
				f.Value = d.ThroughputLimit.String()
			}
		case catalog.FieldRedrivePolicy:
			f.Value = d.RedrivePolicy.DeadLetterQueue
			if f.Value != "" {
				f.Value2 = strconv.Itoa(d.RedrivePolicy.MaxReceiveCount)
			}
		case catalog.FieldRedriveAllowPolicy:
			if p := d.RedriveAllowPolicy; p != nil {
				f.Value, f.Value2 = p.Permission.String(), strings.Join(p.Sources, ", ")
			}
		case catalog.FieldPolicy:
			f.Value = d.Policy
		case catalog.FieldKMSMasterKeyID:
			f.Value = d.KMSMasterKeyID
		case catalog.FieldKMSDataKeyReusePeriod:
			if d.KMSDataKeyReusePeriod != 0 {
				f.Value = seconds(d.KMSDataKeyReusePeriod)
			}
		case catalog.FieldSQSManagedSSE:
			f.Value = strconv.FormatBool(d.SQSManagedSSE)
		}
	}
}

func seconds(d time.Duration) string { return strconv.FormatInt(int64(d/time.Second), 10) }

// readSettings reads the posted form into fields, and returns the settings it gives and which: on the create
// form those not left empty, on a queue's form those that differ from what it shows (fields holding the
// queue's settings as shown). Each setting given is checked on its own; a refusal is put beside its field.
func readSettings(fields []settingField, form url.Values, fifo, create bool) (catalog.Definition, catalog.Fields) {
	var d catalog.Definition
	var given catalog.Fields
	for i := range fields {
		f := &fields[i]
		if _, posted := form[f.Name]; !posted && !create {
			continue // a setting the form leaves out stays as it is
		}
		v, v2 := strings.TrimSpace(form.Get(f.Name)), f.Value2
		switch f.Kind {
		case "redrive":
			v2 = second(form, fieldMaxReceiveCount, v2)
		case "allow":
			v2 = second(form, fieldSources, v2)
		case "textarea":
			v = strings.ReplaceAll(form.Get(f.Name), "\r\n", "\n") // as a browser posts a textarea's lines
		}
		if create && v == "" && v2 == "" || !create && v == f.Value && sameSources(v2, f.Value2) {
			f.Value, f.Value2 = v, v2
			continue
		}
		f.Value, f.Value2 = v, v2
		given |= f.field
		if err := readSetting(&d, f, fifo); err != nil {
			f.Err = messageOf(err)
			continue
		}
		if err := checkable(d).Check(fifo, f.field); err != nil {
			f.Err = messageOf(err)
		}
	}
	return d, given
}

// second returns the posted value of the second input name of a setting, or was when it is not posted.
func second(form url.Values, name, was string) string {
	if _, posted := form[name]; !posted {
		return was
	}
	return strings.TrimSpace(form.Get(name))
}

// sameSources reports whether two lists of sources, as the form spells them, name the same queues.
func sameSources(a, b string) bool {
	return strings.Join(splitList(a), ",") == strings.Join(splitList(b), ",")
}

// splitList returns the names of a list separated by commas or spaces.
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' })
}

// readSetting decodes the field f into d, as the wire API decodes its attribute.
func readSetting(d *catalog.Definition, f *settingField, fifo bool) error {
	bad := func(why string) error {
		return &formError{msg: "Invalid value for the parameter " + f.Name + ": " + why, sentinel: fifoq.ErrInvalidQueueAttribute}
	}
	v := f.Value
	switch f.Kind {
	case "seconds", "number":
		n, err := strconv.Atoi(v)
		if v == "" && f.field == catalog.FieldKMSDataKeyReusePeriod {
			n, err = 0, nil // the default
		}
		if err != nil {
			return bad(strconv.Quote(v) + " is not a whole number.")
		}
		dur := time.Duration(n) * time.Second
		switch f.field {
		case catalog.FieldVisibilityTimeout:
			d.VisibilityTimeout = dur
		case catalog.FieldDelay:
			d.Delay = dur
		case catalog.FieldRetention:
			d.Retention = dur
		case catalog.FieldReceiveWaitTime:
			d.ReceiveWaitTime = dur
		case catalog.FieldKMSDataKeyReusePeriod:
			d.KMSDataKeyReusePeriod = dur
		case catalog.FieldMaxMessageSize:
			d.MaxMessageSize = n
		}
	case "choice":
		switch f.field {
		case catalog.FieldContentBasedDeduplication, catalog.FieldSQSManagedSSE:
			b, err := strconv.ParseBool(v)
			if err != nil || v != "true" && v != "false" {
				return bad("want true or false.")
			}
			if f.field == catalog.FieldSQSManagedSSE {
				d.SQSManagedSSE = b
			} else {
				d.ContentBasedDeduplication = b
			}
		case catalog.FieldDeduplicationScope:
			switch v {
			case "queue":
				d.DeduplicationScope = fifoq.DeduplicationScopeQueue
			case "messageGroup":
				d.DeduplicationScope = fifoq.DeduplicationScopeMessageGroup
			default:
				return bad("want queue or messageGroup.")
			}
		case catalog.FieldThroughputLimit:
			switch v {
			case catalog.ThroughputPerQueue.String():
				d.ThroughputLimit = catalog.ThroughputPerQueue
			case catalog.ThroughputPerMessageGroupID.String():
				d.ThroughputLimit = catalog.ThroughputPerMessageGroupID
			default:
				return bad("want perQueue or perMessageGroupId.")
			}
		}
	case "redrive":
		if v == "" && f.Value2 == "" {
			return nil // no policy
		}
		n, err := strconv.Atoi(f.Value2)
		if err != nil {
			return rule.BadMaxReceiveCount(strconv.Quote(f.Value2))
		}
		d.RedrivePolicy = catalog.RedrivePolicy{DeadLetterQueue: v, MaxReceiveCount: n}
	case "allow":
		if v == "" {
			if f.Value2 != "" {
				return &formError{msg: "Sources given without a redrive permission: choose byQueue.", sentinel: fifoq.ErrInvalidRedriveAllowPolicy}
			}
			return nil // none: allow all
		}
		p := &fifoq.RedriveAllowPolicy{Sources: splitList(f.Value2)}
		switch v {
		case "allowAll":
			p.Permission = fifoq.RedriveAllowAll
		case "denyAll":
			p.Permission = fifoq.RedriveDenyAll
		case "byQueue":
			p.Permission = fifoq.RedriveByQueue
		default:
			return &formError{msg: "Invalid value for redrivePermission: want allowAll, denyAll or byQueue.", sentinel: fifoq.ErrInvalidRedriveAllowPolicy}
		}
		d.RedriveAllowPolicy = p
	case "textarea":
		d.Policy = v
	case "text":
		d.KMSMasterKeyID = v
	}
	return nil
}

// checkable returns d with its dead-letter queue and redrive sources named by their names, as
// Definition.Check wants them: the console names a queue of another namespace account/region/name.
func checkable(d catalog.Definition) *catalog.Definition {
	base := func(s string) string { return s[strings.LastIndexByte(s, '/')+1:] }
	d.RedrivePolicy.DeadLetterQueue = base(d.RedrivePolicy.DeadLetterQueue)
	if p := d.RedriveAllowPolicy; p != nil {
		c := fifoq.RedriveAllowPolicy{Permission: p.Permission, Sources: make([]string, len(p.Sources))}
		for i, s := range p.Sources {
			c.Sources[i] = base(s)
		}
		d.RedriveAllowPolicy = &c
	}
	return &d
}

// messageOf returns the text shown for a refusal: the rule's message, as the wire API sends it.
func messageOf(err error) string {
	var fe *formError
	if errors.As(err, &fe) {
		return fe.msg
	}
	if m := fifoq.ErrorMessage(err); m != "" {
		return m
	}
	return err.Error()
}

// fieldOf returns the field of the form a refusal of the backend is about, "" for the form as a whole.
func fieldOf(err error) string {
	switch {
	case errors.Is(err, catalog.ErrQueueExists), errors.Is(err, catalog.ErrQueueDeletedRecently),
		errors.Is(err, fifoq.ErrInvalidQueueName):
		return fieldName
	case errors.Is(err, fifoq.ErrInvalidRedrivePolicy), errors.Is(err, fifoq.ErrRedriveNotAllowed):
		return "RedrivePolicy"
	case errors.Is(err, fifoq.ErrInvalidRedriveAllowPolicy):
		return "RedriveAllowPolicy"
	case errors.Is(err, catalog.ErrEncryptionConflict):
		return "KmsMasterKeyId"
	case errors.Is(err, catalog.ErrInvalidTags):
		return fieldTags
	case errors.Is(err, fifoq.ErrInvalidQueueAttribute):
		return "FifoThroughputLimit" // the one rule between two settings that each pass their own check
	}
	return ""
}

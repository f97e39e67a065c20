package conformance_test

// The wire driver of the spec §12 scenarios (scWire): aws-sdk-go-v2 against an in-process sqsapi.Server, made
// with sqsapi.NewServer or, durable, with sqsapi.Open (scDurable).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/sqsapi"
)

// ---- the wire driver ----

// scWire drives a sqsapi.Server through aws-sdk-go-v2, in process.
type scWire struct {
	c *sqs.Client

	mu   sync.Mutex // guards urls
	urls map[string]string
}

// scServerOptions are the options of every server of the scenarios: their region and account, and clk.
func scServerOptions(clk fifoq.Clock) []sqsapi.Option {
	return []sqsapi.Option{sqsapi.WithRegion(scRegion), sqsapi.WithAccountID(scAccount), sqsapi.WithClock(clk)}
}

// scNewWire returns a wire driver over a new in-memory server (sqsapi.NewServer).
func scNewWire(clk fifoq.Clock) *scWire {
	return scWireOver(sqsapi.NewServer(scServerOptions(clk)...).HTTPClient())
}

// scWireOver returns a wire driver whose SDK client sends its requests to hc.
func scWireOver(hc sqs.HTTPClient) *scWire {
	c := sqs.New(sqs.Options{
		Region:       scRegion,
		BaseEndpoint: aws.String("http://fifoq.test"),
		HTTPClient:   hc,
		Credentials:  aws.AnonymousCredentials{},
		Retryer:      aws.NopRetryer{}, // a retry would hide what the server answered first
	})
	return &scWire{c: c, urls: map[string]string{}}
}

// url is the URL CreateQueue returned for name, or, for a queue never created, the URL it would have.
func (w *scWire) url(name string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if u, ok := w.urls[name]; ok {
		return u
	}
	return "http://fifoq.test/" + scAccount + "/" + name
}

// arn is the ARN of the queue named name.
func (w *scWire) arn(name string) string { return scARNPrefix + name }

// scWireErr turns an SQS error of the SDK into an *scErr; other errors stay as they are.
func scWireErr(err error) error {
	if err == nil {
		return nil
	}
	var api interface{ ErrorCode() string }
	if !errors.As(err, &api) {
		return err
	}
	e := &scErr{Code: api.ErrorCode(), Msg: err.Error()}
	var status interface{ HTTPStatusCode() int }
	if errors.As(err, &status) {
		e.Status = status.HTTPStatusCode()
	}
	return e
}

// scSeconds is d in whole seconds, as the wire takes it.
func scSeconds(d time.Duration) (int32, error) {
	if d%time.Second != 0 {
		return 0, fmt.Errorf("wire driver: %v is not a whole number of seconds", d)
	}
	return int32(d / time.Second), nil
}

// scExplicitZero makes the request carry the given top-level members with the value 0, which
// aws-sdk-go-v2 leaves out of the JSON body when they are 0.
func scExplicitZero(members ...string) func(*sqs.Options) {
	return func(o *sqs.Options) {
		if len(members) == 0 {
			return
		}
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
			return st.Build.Add(middleware.BuildMiddlewareFunc("scExplicitZero", func(ctx context.Context,
				in middleware.BuildInput, next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
				req, ok := in.Request.(*smithyhttp.Request)
				if !ok {
					return middleware.BuildOutput{}, middleware.Metadata{}, fmt.Errorf("scExplicitZero: request is %T", in.Request)
				}
				body, err := io.ReadAll(req.GetStream())
				if err != nil {
					return middleware.BuildOutput{}, middleware.Metadata{}, err
				}
				fields := map[string]json.RawMessage{}
				if err := json.Unmarshal(body, &fields); err != nil {
					return middleware.BuildOutput{}, middleware.Metadata{}, fmt.Errorf("scExplicitZero: %w", err)
				}
				for _, m := range members {
					fields[m] = json.RawMessage("0")
				}
				if body, err = json.Marshal(fields); err != nil {
					return middleware.BuildOutput{}, middleware.Metadata{}, err
				}
				if in.Request, err = req.SetStream(bytes.NewReader(body)); err != nil {
					return middleware.BuildOutput{}, middleware.Metadata{}, err
				}
				return next.HandleBuild(ctx, in)
			}), middleware.Before)
		})
	}
}

// attributes are a as SQS queue attributes. On create, a FIFO name gets FifoQueue=true.
func (w *scWire) attributes(name string, a scAttrs, create bool) (map[string]string, error) {
	m := map[string]string{}
	for attr, d := range map[string]*time.Duration{"VisibilityTimeout": a.VT, "DelaySeconds": a.Delay,
		"MessageRetentionPeriod": a.Retention, "ReceiveMessageWaitTimeSeconds": a.Wait} {
		if d == nil {
			continue
		}
		s, err := scSeconds(*d)
		if err != nil {
			return nil, err
		}
		m[attr] = strconv.Itoa(int(s))
	}
	if a.MaxSize != 0 {
		m["MaximumMessageSize"] = strconv.Itoa(a.MaxSize)
	}
	if a.CBD != nil {
		m["ContentBasedDeduplication"] = strconv.FormatBool(*a.CBD)
	}
	if a.Scope != "" {
		m["DeduplicationScope"] = a.Scope
	}
	if create && strings.HasSuffix(name, ".fifo") {
		m["FifoQueue"] = "true"
	}
	if a.DLQ != "" {
		b, err := json.Marshal(map[string]any{"deadLetterTargetArn": w.arn(a.DLQ), "maxReceiveCount": a.MaxReceive})
		if err != nil {
			return nil, err
		}
		m["RedrivePolicy"] = string(b)
	}
	if a.Allow != nil {
		p := map[string]any{"redrivePermission": a.Allow.Permission}
		if a.Allow.Sources != nil {
			var arns []string
			for _, s := range a.Allow.Sources {
				arns = append(arns, w.arn(s))
			}
			p["sourceQueueArns"] = arns
		}
		b, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		m["RedriveAllowPolicy"] = string(b)
	}
	return m, nil
}

// createRaw calls CreateQueue with attrs as they are, and records the URL it returns.
func (w *scWire) createRaw(ctx context.Context, name string, attrs map[string]string) (string, error) {
	out, err := w.c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		return "", err
	}
	u := aws.ToString(out.QueueUrl)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.urls[name] = u
	return u, nil
}

func (w *scWire) createQueue(ctx context.Context, name string, a scAttrs) error {
	attrs, err := w.attributes(name, a, true)
	if err != nil {
		return err
	}
	_, err = w.createRaw(ctx, name, attrs)
	return scWireErr(err)
}

func (w *scWire) setAttributes(ctx context.Context, name string, a scAttrs) error {
	attrs, err := w.attributes(name, a, false)
	if err != nil {
		return err
	}
	_, err = w.c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(w.url(name)), Attributes: attrs})
	return scWireErr(err)
}

// scWireAttrs are message attributes as the SDK takes them: a Binary type carries BinaryValue, the others
// StringValue, even empty.
func scWireAttrs(attrs map[string]fifoq.Attribute) map[string]types.MessageAttributeValue {
	if attrs == nil {
		return nil
	}
	out := make(map[string]types.MessageAttributeValue, len(attrs))
	for k, a := range attrs {
		v := types.MessageAttributeValue{DataType: aws.String(a.DataType)}
		if strings.HasPrefix(a.DataType, "Binary") {
			v.BinaryValue = a.BinaryValue
		} else {
			v.StringValue = aws.String(a.StringValue)
		}
		out[k] = v
	}
	return out
}

// scOptional is s, or nil when it is empty.
func scOptional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (w *scWire) send(ctx context.Context, name string, m scMsg) (scSent, error) {
	in := &sqs.SendMessageInput{QueueUrl: aws.String(w.url(name)), MessageBody: aws.String(m.Body),
		MessageGroupId: scOptional(m.Group), MessageDeduplicationId: scOptional(m.Dedup),
		MessageAttributes: scWireAttrs(m.Attrs)}
	var zero []string
	if m.Delay != nil {
		s, err := scSeconds(*m.Delay)
		if err != nil {
			return scSent{}, err
		}
		in.DelaySeconds = s
		if s == 0 {
			zero = append(zero, "DelaySeconds")
		}
	}
	out, err := w.c.SendMessage(ctx, in, scExplicitZero(zero...))
	if err != nil {
		return scSent{}, scWireErr(err)
	}
	return scSent{ID: aws.ToString(out.MessageId), Seq: aws.ToString(out.SequenceNumber)}, nil
}

// sendBatchIDs is SendMessageBatch with the given entry ids.
func (w *scWire) sendBatchIDs(ctx context.Context, name string, ids []string, ms []scMsg) ([]scEntry, error) {
	in := &sqs.SendMessageBatchInput{QueueUrl: aws.String(w.url(name))}
	for i, m := range ms {
		e := types.SendMessageBatchRequestEntry{Id: aws.String(ids[i]), MessageBody: aws.String(m.Body),
			MessageGroupId: scOptional(m.Group), MessageDeduplicationId: scOptional(m.Dedup),
			MessageAttributes: scWireAttrs(m.Attrs)}
		if m.Delay != nil {
			s, err := scSeconds(*m.Delay)
			if err != nil || s == 0 {
				return nil, fmt.Errorf("wire driver: batch entry delay %v is not supported", *m.Delay)
			}
			e.DelaySeconds = s
		}
		in.Entries = append(in.Entries, e)
	}
	out, err := w.c.SendMessageBatch(ctx, in)
	if err != nil {
		return nil, scWireErr(err)
	}
	res := make([]scEntry, len(ms))
	at := map[string]int{}
	for i, id := range ids {
		at[id] = i
		res[i].Code = "(entry missing from the response)"
	}
	for _, s := range out.Successful {
		res[at[aws.ToString(s.Id)]] = scEntry{scSent: scSent{ID: aws.ToString(s.MessageId), Seq: aws.ToString(s.SequenceNumber)}}
	}
	for _, f := range out.Failed {
		res[at[aws.ToString(f.Id)]] = scEntry{Code: aws.ToString(f.Code)}
	}
	return res, nil
}

func (w *scWire) sendBatch(ctx context.Context, name string, ms []scMsg) ([]scEntry, error) {
	ids := make([]string, len(ms))
	for i := range ids {
		ids[i] = fmt.Sprintf("e%d", i)
	}
	return w.sendBatchIDs(ctx, name, ids, ms)
}

// scARNName is the queue name of a queue ARN of the server; any other value stays as it is, so that a
// comparison shows it.
func scARNName(arn string) string {
	if name, ok := strings.CutPrefix(arn, scARNPrefix); ok {
		return name
	}
	return arn
}

func (w *scWire) receive(ctx context.Context, name string, o scRecv) ([]scGot, error) {
	in := &sqs.ReceiveMessageInput{QueueUrl: aws.String(w.url(name)), MaxNumberOfMessages: int32(o.Max),
		MessageAttributeNames:       []string{"All"},
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		ReceiveRequestAttemptId:     scOptional(o.AttemptID)}
	var zero []string
	for member, p := range map[string]struct {
		d   *time.Duration
		dst *int32
	}{"WaitTimeSeconds": {o.Wait, &in.WaitTimeSeconds}, "VisibilityTimeout": {o.VT, &in.VisibilityTimeout}} {
		if p.d == nil {
			continue
		}
		s, err := scSeconds(*p.d)
		if err != nil {
			return nil, err
		}
		*p.dst = s
		if s == 0 {
			zero = append(zero, member)
		}
	}
	slices.Sort(zero)
	out, err := w.c.ReceiveMessage(ctx, in, scExplicitZero(zero...))
	if err != nil {
		return nil, scWireErr(err)
	}
	gs := make([]scGot, len(out.Messages))
	for i, m := range out.Messages {
		sa := m.Attributes
		count, err := strconv.Atoi(sa["ApproximateReceiveCount"])
		if err != nil {
			return nil, fmt.Errorf("wire driver: ApproximateReceiveCount %q: %w", sa["ApproximateReceiveCount"], err)
		}
		gs[i] = scGot{ID: aws.ToString(m.MessageId), Body: aws.ToString(m.Body), Group: sa["MessageGroupId"],
			Dedup: sa["MessageDeduplicationId"], Seq: sa["SequenceNumber"], Handle: aws.ToString(m.ReceiptHandle),
			Count: count, DLSource: scARNName(sa["DeadLetterQueueSourceArn"])}
		if len(m.MessageAttributes) > 0 {
			gs[i].Attrs = map[string]fifoq.Attribute{}
			for k, v := range m.MessageAttributes {
				gs[i].Attrs[k] = fifoq.Attribute{DataType: aws.ToString(v.DataType), StringValue: aws.ToString(v.StringValue),
					BinaryValue: v.BinaryValue}
			}
		}
	}
	return gs, nil
}

func (w *scWire) delete(ctx context.Context, name, handle string) error {
	_, err := w.c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(w.url(name)), ReceiptHandle: aws.String(handle)})
	return scWireErr(err)
}

func (w *scWire) deleteBatch(ctx context.Context, name string, handles []string) ([]string, error) {
	in := &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(w.url(name))}
	for i, h := range handles {
		in.Entries = append(in.Entries, types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(h)})
	}
	out, err := w.c.DeleteMessageBatch(ctx, in)
	if err != nil {
		return nil, scWireErr(err)
	}
	codes := make([]string, len(handles))
	for i := range codes {
		codes[i] = "(entry missing from the response)"
	}
	for _, s := range out.Successful {
		i, _ := strconv.Atoi(aws.ToString(s.Id))
		codes[i] = ""
	}
	for _, f := range out.Failed {
		i, _ := strconv.Atoi(aws.ToString(f.Id))
		codes[i] = aws.ToString(f.Code)
	}
	return codes, nil
}

func (w *scWire) changeVisibility(ctx context.Context, name, handle string, timeout time.Duration) error {
	s, err := scSeconds(timeout)
	if err != nil {
		return err
	}
	_, err = w.c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(w.url(name)),
		ReceiptHandle: aws.String(handle), VisibilityTimeout: s})
	return scWireErr(err)
}

func (w *scWire) purge(ctx context.Context, name string) error {
	_, err := w.c.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(w.url(name))})
	return scWireErr(err)
}

func (w *scWire) counts(ctx context.Context, name string) (scCounts, error) {
	out, err := w.c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(w.url(name)),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages,
			types.QueueAttributeNameApproximateNumberOfMessagesNotVisible, types.QueueAttributeNameApproximateNumberOfMessagesDelayed}})
	if err != nil {
		return scCounts{}, scWireErr(err)
	}
	var c scCounts
	for attr, dst := range map[string]*int{"ApproximateNumberOfMessages": &c.Visible,
		"ApproximateNumberOfMessagesNotVisible": &c.InFlight, "ApproximateNumberOfMessagesDelayed": &c.Delayed} {
		if *dst, err = strconv.Atoi(out.Attributes[attr]); err != nil {
			return scCounts{}, fmt.Errorf("wire driver: %s %q: %w", attr, out.Attributes[attr], err)
		}
	}
	return c, nil
}

func (w *scWire) startMoveTask(ctx context.Context, src, dest string, rate int) (string, error) {
	in := &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(w.arn(src))}
	if dest != "" {
		in.DestinationArn = aws.String(w.arn(dest))
	}
	if rate != 0 {
		in.MaxNumberOfMessagesPerSecond = aws.Int32(int32(rate))
	}
	out, err := w.c.StartMessageMoveTask(ctx, in)
	if err != nil {
		return "", scWireErr(err)
	}
	return aws.ToString(out.TaskHandle), nil
}

func (w *scWire) cancelMoveTask(ctx context.Context, handle string) error {
	_, err := w.c.CancelMessageMoveTask(ctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: aws.String(handle)})
	return scWireErr(err)
}

func (w *scWire) listMoveTasks(ctx context.Context, src string) ([]scTask, error) {
	out, err := w.c.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(w.arn(src)),
		MaxResults: aws.Int32(10)})
	if err != nil {
		return nil, scWireErr(err)
	}
	var ts []scTask
	for _, r := range out.Results {
		task := scTask{Status: aws.ToString(r.Status), Moved: int(r.ApproximateNumberOfMessagesMoved),
			ToMove: int(aws.ToInt64(r.ApproximateNumberOfMessagesToMove))}
		if r.DestinationArn != nil {
			task.Dest = scARNName(*r.DestinationArn)
		}
		ts = append(ts, task)
	}
	return ts, nil
}

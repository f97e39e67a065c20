package sqsapi_test

// These tests drive the server with aws-sdk-go-v2, in process, through srv.HTTPClient(): every action, and
// every error of ../../shared/spec/sqs-semantics.md §1-7 and §10 that an SDK caller can provoke. Errors are
// checked as an SDK user sees them: ErrorCode() (SQS is awsQueryCompatible, so the SDK reports the query
// code of the X-Amzn-Query-Error header, such as "AWS.SimpleQueueService.NonExistentQueue"), the modeled Go
// type where the SDK has one, the HTTP status of the model, a client fault, and the spec's message text where
// it quotes one. Time moves only on a fifoq.ManualClock.

import (
	"bytes"
	"cmp"
	"context"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/big"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/sqsapi"
)

const (
	sdAccount = "000000000000"
	sdRegion  = "us-east-1"

	// Error codes as ErrorCode() returns them: the query-compatible codes of the SQS model.
	sdNonExistentQueue = "AWS.SimpleQueueService.NonExistentQueue"
	sdQueueExists      = "QueueAlreadyExists"
	sdDeletedRecently  = "AWS.SimpleQueueService.QueueDeletedRecently"
	sdPurgeInProgress  = "AWS.SimpleQueueService.PurgeQueueInProgress"
	sdTooManyEntries   = "AWS.SimpleQueueService.TooManyEntriesInBatchRequest"
	sdEmptyBatch       = "AWS.SimpleQueueService.EmptyBatchRequest"
	sdIDsNotDistinct   = "AWS.SimpleQueueService.BatchEntryIdsNotDistinct"
	sdBadEntryID       = "AWS.SimpleQueueService.InvalidBatchEntryId"
	sdBatchTooLong     = "AWS.SimpleQueueService.BatchRequestTooLong"
	sdBadHandle        = "ReceiptHandleIsInvalid"
	sdNotFound         = "ResourceNotFoundException"
	sdBadAttrName      = "InvalidAttributeName"
	sdBadAttrValue     = "InvalidAttributeValue"
	sdBadContents      = "InvalidMessageContents"
	sdBadParam         = "InvalidParameterValue"
	sdMissing          = "MissingParameter"

	sdNoQueueText   = "The specified queue does not exist."
	sdGroupIDText   = "…MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length."
	sdDedupIDText   = "…MessageDeduplicationId can only include alphanumeric and punctuation characters. 1 to 128 in length."
	sdNoDedupText   = "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly…"
	sdNoGroupText   = "The request must contain the parameter MessageGroupId."
	sdEntryIDText   = "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long."
	sdTraceHeader   = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
	sdPunctuation   = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
	sdMiB           = 1 << 20
	sdDefaultVT     = 30 * time.Second
	sdSafetyTimeout = 30 * time.Second // a hang guard for calls that must return, never a wait for the queue
)

// sdStart is when every manual clock starts: whole seconds, so epoch-second timestamps are exact.
var sdStart = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// sdModeled maps each error code that the SDK models to a check of its Go type; the others (such as
// InvalidParameterValue and MissingParameter) come back as *smithy.GenericAPIError.
var sdModeled = map[string]func(error) bool{
	sdNonExistentQueue: sdIs[*types.QueueDoesNotExist],
	sdQueueExists:      sdIs[*types.QueueNameExists],
	sdDeletedRecently:  sdIs[*types.QueueDeletedRecently],
	sdPurgeInProgress:  sdIs[*types.PurgeQueueInProgress],
	sdTooManyEntries:   sdIs[*types.TooManyEntriesInBatchRequest],
	sdEmptyBatch:       sdIs[*types.EmptyBatchRequest],
	sdIDsNotDistinct:   sdIs[*types.BatchEntryIdsNotDistinct],
	sdBadEntryID:       sdIs[*types.InvalidBatchEntryId],
	sdBatchTooLong:     sdIs[*types.BatchRequestTooLong],
	sdBadHandle:        sdIs[*types.ReceiptHandleIsInvalid],
	sdNotFound:         sdIs[*types.ResourceNotFoundException],
	sdBadAttrName:      sdIs[*types.InvalidAttributeName],
	sdBadAttrValue:     sdIs[*types.InvalidAttributeValue],
	sdBadContents:      sdIs[*types.InvalidMessageContents],
	"AWS.SimpleQueueService.MessageNotInflight": sdIs[*types.MessageNotInflight],
}

// sdStatus is the HTTP status of the model's error shapes that are not 400.
var sdStatus = map[string]int{
	sdPurgeInProgress: http.StatusForbidden,
	sdBadHandle:       http.StatusNotFound,
	sdNotFound:        http.StatusNotFound,
}

func sdIs[T error](err error) bool {
	var target T
	return errors.As(err, &target)
}

// sdEnv is one server on a manual clock and an SDK client for it.
type sdEnv struct {
	t   *testing.T
	ctx context.Context
	srv *sqsapi.Server
	clk *fifoq.ManualClock
	c   *sqs.Client
}

func sdSetup(t *testing.T, opts ...sqsapi.Option) *sdEnv {
	t.Helper()
	clk := fifoq.NewManualClock(sdStart)
	srv := sqsapi.NewServer(append([]sqsapi.Option{sqsapi.WithClock(clk)}, opts...)...)
	return &sdEnv{t: t, ctx: t.Context(), srv: srv, clk: clk, c: sdClient(srv, sdStatic("AKIDSDKTEST", "sdk-test-secret"))}
}

func sdStatic(id, secret string) aws.CredentialsProvider {
	return aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: id, SecretAccessKey: secret, Source: "sdk_test"}, nil
	})
}

func sdClient(srv *sqsapi.Server, creds aws.CredentialsProvider) *sqs.Client {
	return sqs.New(sqs.Options{
		Region:       sdRegion,
		BaseEndpoint: aws.String("http://fifoq.test"),
		HTTPClient:   srv.HTTPClient(),
		Credentials:  creds,
		Retryer:      aws.NopRetryer{},
	})
}

func sdArn(name string) string { return "arn:aws:sqs:" + sdRegion + ":" + sdAccount + ":" + name }

func sdKV(kv ...string) map[string]string {
	m := make(map[string]string, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func sdMillis(t time.Time) string  { return strconv.FormatInt(t.UnixMilli(), 10) }
func sdSeconds(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }

func (e *sdEnv) create(name string, attrs map[string]string) string {
	e.t.Helper()
	out, err := e.c.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	require.NoError(e.t, err, "CreateQueue %s %v", name, attrs)
	require.NotEmpty(e.t, aws.ToString(out.QueueUrl), "CreateQueue %s: QueueUrl", name)
	return *out.QueueUrl
}

// unknownURL is the URL a queue of that name would have, without creating it.
func (e *sdEnv) unknownURL(name string) string {
	e.t.Helper()
	url := e.create("sd-url-probe", nil)
	return strings.TrimSuffix(url, "sd-url-probe") + name
}

func (e *sdEnv) attrs(url string, names ...types.QueueAttributeName) map[string]string {
	e.t.Helper()
	out, err := e.c.GetQueueAttributes(e.ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: names})
	require.NoError(e.t, err, "GetQueueAttributes %v", names)
	return out.Attributes
}

func (e *sdEnv) attr(url string, name types.QueueAttributeName) string {
	e.t.Helper()
	return e.attrs(url, name)[string(name)]
}

func (e *sdEnv) setAttrs(url string, attrs map[string]string) error {
	_, err := e.c.SetQueueAttributes(e.ctx, &sqs.SetQueueAttributesInput{QueueUrl: &url, Attributes: attrs})
	return err
}

// counts returns visible/not visible/delayed, as GetQueueAttributes reports them.
func (e *sdEnv) counts(url string) string {
	e.t.Helper()
	a := e.attrs(url, types.QueueAttributeNameApproximateNumberOfMessages,
		types.QueueAttributeNameApproximateNumberOfMessagesNotVisible, types.QueueAttributeNameApproximateNumberOfMessagesDelayed)
	return a["ApproximateNumberOfMessages"] + "/" + a["ApproximateNumberOfMessagesNotVisible"] + "/" + a["ApproximateNumberOfMessagesDelayed"]
}

type sdSendOpt func(*sqs.SendMessageInput)

func sdGroup(g string) sdSendOpt { return func(in *sqs.SendMessageInput) { in.MessageGroupId = &g } }
func sdDedup(d string) sdSendOpt {
	return func(in *sqs.SendMessageInput) { in.MessageDeduplicationId = &d }
}
func sdDelay(s int32) sdSendOpt  { return func(in *sqs.SendMessageInput) { in.DelaySeconds = s } }
func sdTrace(h string) sdSendOpt { return sdSys("AWSTraceHeader", sdStr(h)) }
func sdWith(name string, v types.MessageAttributeValue) sdSendOpt {
	return func(in *sqs.SendMessageInput) {
		if in.MessageAttributes == nil {
			in.MessageAttributes = map[string]types.MessageAttributeValue{}
		}
		in.MessageAttributes[name] = v
	}
}
func sdAttrs(a map[string]types.MessageAttributeValue) sdSendOpt {
	return func(in *sqs.SendMessageInput) { in.MessageAttributes = a }
}
func sdSys(name string, v types.MessageAttributeValue) sdSendOpt {
	return func(in *sqs.SendMessageInput) {
		if in.MessageSystemAttributes == nil {
			in.MessageSystemAttributes = map[string]types.MessageSystemAttributeValue{}
		}
		in.MessageSystemAttributes[name] = types.MessageSystemAttributeValue{
			DataType: v.DataType, StringValue: v.StringValue, BinaryValue: v.BinaryValue,
		}
	}
}

func sdStr(v string) types.MessageAttributeValue { return sdTyped("String", v) }
func sdTyped(dataType, v string) types.MessageAttributeValue {
	return types.MessageAttributeValue{DataType: aws.String(dataType), StringValue: aws.String(v)}
}
func sdBin(dataType string, v []byte) types.MessageAttributeValue {
	return types.MessageAttributeValue{DataType: aws.String(dataType), BinaryValue: v}
}

func (e *sdEnv) trySend(url, body string, opts ...sdSendOpt) (*sqs.SendMessageOutput, error) {
	in := &sqs.SendMessageInput{QueueUrl: &url, MessageBody: &body}
	for _, o := range opts {
		o(in)
	}
	return e.c.SendMessage(e.ctx, in)
}

func (e *sdEnv) send(url, body string, opts ...sdSendOpt) *sqs.SendMessageOutput {
	e.t.Helper()
	out, err := e.trySend(url, body, opts...)
	require.NoError(e.t, err, "SendMessage %.40q", body)
	require.NotEmpty(e.t, aws.ToString(out.MessageId), "SendMessage: MessageId")
	return out
}

func (e *sdEnv) receive(url string, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) []types.Message {
	e.t.Helper()
	in.QueueUrl = &url
	out, err := e.c.ReceiveMessage(e.ctx, in, optFns...)
	require.NoError(e.t, err, "ReceiveMessage")
	return out.Messages
}

// receiveN is a short poll for up to n messages.
func (e *sdEnv) receiveN(url string, n int32) []types.Message {
	e.t.Helper()
	return e.receive(url, &sqs.ReceiveMessageInput{MaxNumberOfMessages: n})
}

func (e *sdEnv) receiveOne(url string) types.Message {
	e.t.Helper()
	ms := e.receiveN(url, 1)
	require.Len(e.t, ms, 1, "receive one message")
	return ms[0]
}

func (e *sdEnv) deleteMessage(url, handle string) error {
	_, err := e.c.DeleteMessage(e.ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: &handle})
	return err
}

func (e *sdEnv) changeVisibility(url, handle string, seconds int32) error {
	_, err := e.c.ChangeMessageVisibility(e.ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl: &url, ReceiptHandle: &handle, VisibilityTimeout: seconds})
	return err
}

func sdBodies(ms []types.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = aws.ToString(m.Body)
	}
	return out
}

func sdIDs(ms []types.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = aws.ToString(m.MessageId)
	}
	return out
}

// sdWantErr checks that err is the SQS error code as the SDK reports it: ErrorCode(), the modeled Go type
// where the SDK has one, a client fault, the model's HTTP status, and the message: msg "" checks nothing,
// "…x" wants the suffix x, "x…" the prefix x, anything else the exact text.
func sdWantErr(t *testing.T, err error, code, msg string) {
	t.Helper()
	require.Error(t, err, "want error %s", code)
	var ae smithy.APIError
	require.ErrorAs(t, err, &ae, "want an API error %s, got %T: %v", code, err, err)
	require.Equal(t, code, ae.ErrorCode(), "ErrorCode() of %v", err)
	require.Equal(t, smithy.FaultClient, ae.ErrorFault(), "ErrorFault() of %v (X-Amzn-Query-Error \"<code>;Sender\")", err)
	if is, ok := sdModeled[code]; ok {
		require.True(t, is(err), "want the SDK's modeled error type for %s, got %T: %v", code, ae, err)
	} else {
		var g *smithy.GenericAPIError
		require.ErrorAs(t, err, &g, "%s is not modeled: want *smithy.GenericAPIError, got %T: %v", code, ae, err)
	}
	var re *awshttp.ResponseError
	require.ErrorAs(t, err, &re, "want an HTTP response error")
	require.Equal(t, cmp.Or(sdStatus[code], http.StatusBadRequest), re.HTTPStatusCode(), "HTTP status of %v", err)
	sdWantText(t, ae.ErrorMessage(), msg)
}

func sdWantText(t *testing.T, got, want string) {
	t.Helper()
	switch {
	case want == "":
	case strings.HasPrefix(want, "…"):
		require.True(t, strings.HasSuffix(got, strings.TrimPrefix(want, "…")), "message %q, want it to end %q", got, want)
	case strings.HasSuffix(want, "…"):
		require.True(t, strings.HasPrefix(got, strings.TrimSuffix(want, "…")), "message %q, want it to start %q", got, want)
	default:
		require.Equal(t, want, got, "message")
	}
}

// sdWantFailed checks one Failed entry of a batch result.
func sdWantFailed(t *testing.T, failed []types.BatchResultErrorEntry, id, code, msg string) {
	t.Helper()
	for _, f := range failed {
		if aws.ToString(f.Id) != id {
			continue
		}
		require.Equal(t, code, aws.ToString(f.Code), "Failed[%s].Code", id)
		require.True(t, f.SenderFault, "Failed[%s].SenderFault", id)
		sdWantText(t, aws.ToString(f.Message), msg)
		return
	}
	require.Failf(t, "missing failed entry", "no Failed entry with Id %q in %+v", id, failed)
}

// sdJSON is a per-call option that edits the JSON request body after the SDK wrote it. The SDK leaves out a
// 0 MaxNumberOfMessages, WaitTimeSeconds, VisibilityTimeout or DelaySeconds, so an explicit 0 is sent this way.
func sdJSON(edit func(body map[string]any)) func(*sqs.Options) {
	mw := middleware.BuildMiddlewareFunc("sdJSON", func(ctx context.Context, in middleware.BuildInput,
		next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
		req, ok := in.Request.(*smithyhttp.Request)
		if !ok {
			return middleware.BuildOutput{}, middleware.Metadata{}, fmt.Errorf("sdJSON: request is %T", in.Request)
		}
		raw, err := io.ReadAll(req.GetStream())
		if err != nil {
			return middleware.BuildOutput{}, middleware.Metadata{}, err
		}
		body := map[string]any{}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&body); err != nil {
			return middleware.BuildOutput{}, middleware.Metadata{}, fmt.Errorf("sdJSON: %w", err)
		}
		edit(body)
		if raw, err = json.Marshal(body); err != nil {
			return middleware.BuildOutput{}, middleware.Metadata{}, err
		}
		if in.Request, err = req.SetStream(bytes.NewReader(raw)); err != nil {
			return middleware.BuildOutput{}, middleware.Metadata{}, err
		}
		return next.HandleBuild(ctx, in)
	})
	return func(o *sqs.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error { return s.Build.Add(mw, middleware.Before) })
	}
}

// sdSet is an sdJSON edit that sets one field.
func sdSet(field string, v any) func(*sqs.Options) {
	return sdJSON(func(body map[string]any) { body[field] = v })
}

// sdAttrMD5 is MD5OfMessageAttributes (spec 1.4.6), written here from the spec rather than taken from the
// server's package: names sorted, each name, data type and value with a 4-byte big-endian length, and a
// transport byte (1 String/Number, 2 Binary) before the value.
func sdAttrMD5(attrs map[string]types.MessageAttributeValue) string {
	var b []byte
	field := func(p []byte) {
		b = binary.BigEndian.AppendUint32(b, uint32(len(p)))
		b = append(b, p...)
	}
	for _, name := range slices.Sorted(maps.Keys(attrs)) {
		a := attrs[name]
		dt := aws.ToString(a.DataType)
		field([]byte(name))
		field([]byte(dt))
		if dt == "Binary" || strings.HasPrefix(dt, "Binary.") {
			b = append(b, 2)
			field(a.BinaryValue)
		} else {
			b = append(b, 1)
			field([]byte(aws.ToString(a.StringValue)))
		}
	}
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

func sdBodyMD5(body string) string {
	sum := md5.Sum([]byte(body))
	return hex.EncodeToString(sum[:])
}

// sdAllTypes are attributes of every data type, custom suffixes included.
func sdAllTypes() map[string]types.MessageAttributeValue {
	return map[string]types.MessageAttributeValue{
		"str":       sdStr("héllo wörld ✓"),
		"str.cust":  sdTyped("String.custom", "tagged"),
		"num":       sdTyped("Number", "-12.5"),
		"num.int":   sdTyped("Number.int", "42"),
		"bin":       sdBin("Binary", []byte{0, 1, 2, 0xfe, 0xff}),
		"bin.png":   sdBin("Binary.png", []byte("\x89PNG\r\n\x1a\n")),
		"Case_Name": sdStr("upper-case and underscore"),
	}
}

// sdRequireAttrs checks received message attributes against the sent ones, and the receive's digest.
func sdRequireAttrs(t *testing.T, want map[string]types.MessageAttributeValue, m types.Message) {
	t.Helper()
	require.ElementsMatch(t, slices.Collect(maps.Keys(want)), slices.Collect(maps.Keys(m.MessageAttributes)),
		"received message attribute names")
	for name, w := range want {
		g := m.MessageAttributes[name]
		require.Equal(t, aws.ToString(w.DataType), aws.ToString(g.DataType), "DataType of %s", name)
		require.Equal(t, aws.ToString(w.StringValue), aws.ToString(g.StringValue), "StringValue of %s", name)
		require.Equal(t, w.BinaryValue, g.BinaryValue, "BinaryValue of %s", name)
	}
	if len(want) == 0 {
		require.Nil(t, m.MD5OfMessageAttributes, "MD5OfMessageAttributes without attributes")
		return
	}
	require.Equal(t, sdAttrMD5(want), aws.ToString(m.MD5OfMessageAttributes), "MD5OfMessageAttributes on receive")
}

// sdAsync runs f in a goroutine; sdAwait takes its result, failing (instead of hanging) if it never comes.
func sdAsync[T any](f func() T) <-chan T {
	ch := make(chan T, 1)
	go func() { ch <- f() }()
	return ch
}

func sdAwait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(sdSafetyTimeout):
		require.FailNow(t, "call did not return", what)
		panic("unreachable")
	}
}

// waitTimers waits until n timers are pending on the clock: a long poll started when it had n-1 is waiting.
func (e *sdEnv) waitTimers(n int) {
	e.t.Helper()
	sdAwait(e.t, sdAsync(func() bool { e.clk.WaitTimers(n); return true }), fmt.Sprintf("%d pending timers (a long poll on the manual clock)", n))
}

type sdReceived struct {
	out *sqs.ReceiveMessageOutput
	err error
}

func TestSdAttrMD5Vectors(t *testing.T) {
	t.Parallel()
	// The test's own digest reproduces the spec's AWS-recorded vectors (1.4.6).
	require.Equal(t, "adb59cd4678ea5a855436b949cd07ab6",
		sdAttrMD5(map[string]types.MessageAttributeValue{"MyAttribute": sdStr("foobar")}))
	require.Equal(t, "5ae4d5d7636402d80f4eb6d213245a88",
		sdAttrMD5(map[string]types.MessageAttributeValue{"AWSTraceHeader": sdStr(sdTraceHeader)}))
	require.Equal(t, "3858f62230ac3c915f300c664312c63f", sdBodyMD5("foobar"))
}

func TestSdCreateQueue(t *testing.T) {
	t.Parallel()

	t.Run("standard", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-std", nil)
		require.True(t, strings.HasSuffix(url, "/"+sdAccount+"/sd-std"), "QueueUrl %q, want …/%s/sd-std", url, sdAccount)
		got := e.attrs(url, types.QueueAttributeNameAll)
		require.Equal(t, sdArn("sd-std"), got["QueueArn"])
		for _, name := range []string{"FifoQueue", "ContentBasedDeduplication", "DeduplicationScope", "FifoThroughputLimit", "RedrivePolicy"} {
			require.NotContains(t, got, name, "attributes of a standard queue")
		}
		// Names are case-sensitive (7.3.1): another case is another queue.
		other := e.create("SD-STD", nil)
		require.NotEqual(t, url, other)
	})

	t.Run("fifo", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-fifo.fifo", sdKV("FifoQueue", "true"))
		require.True(t, strings.HasSuffix(url, "/"+sdAccount+"/sd-fifo.fifo"), "QueueUrl %q", url)
		got := e.attrs(url, types.QueueAttributeNameAll)
		require.Equal(t, "true", got["FifoQueue"])
		require.Equal(t, "false", got["ContentBasedDeduplication"])
		require.Equal(t, "queue", got["DeduplicationScope"], "3.13 default")
		require.Equal(t, "perQueue", got["FifoThroughputLimit"], "3.13 default")
		require.Equal(t, sdArn("sd-fifo.fifo"), got["QueueArn"])
	})

	t.Run("attributes", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		want := sdKV("VisibilityTimeout", "45", "DelaySeconds", "5", "MessageRetentionPeriod", "3600",
			"MaximumMessageSize", "2048", "ReceiveMessageWaitTimeSeconds", "7")
		url := e.create("sd-attrs", want)
		got := e.attrs(url, types.QueueAttributeNameAll)
		for k, v := range want {
			require.Equal(t, v, got[k], "attribute %s", k)
		}
		f := e.create("sd-attrs.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true",
			"DeduplicationScope", "messageGroup", "FifoThroughputLimit", "perMessageGroupId"))
		got = e.attrs(f, types.QueueAttributeNameAll)
		require.Equal(t, "true", got["ContentBasedDeduplication"])
		require.Equal(t, "messageGroup", got["DeduplicationScope"])
		require.Equal(t, "perMessageGroupId", got["FifoThroughputLimit"])
		// DeduplicationScope=messageGroup works without perMessageGroupId (3.7).
		e.create("sd-scope.fifo", sdKV("FifoQueue", "true", "DeduplicationScope", "messageGroup"))
	})

	t.Run("tags", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		tags := sdKV("team", "queues", "env", "test")
		out, err := e.c.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String("sd-tagged"), Tags: tags})
		require.NoError(t, err)
		lt, err := e.c.ListQueueTags(e.ctx, &sqs.ListQueueTagsInput{QueueUrl: out.QueueUrl})
		require.NoError(t, err)
		require.Equal(t, tags, lt.Tags)
	})

	t.Run("idempotent and QueueAlreadyExists", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-same", sdKV("DelaySeconds", "5", "VisibilityTimeout", "60"))
		require.Equal(t, url, e.create("sd-same", sdKV("DelaySeconds", "5", "VisibilityTimeout", "60")), "same name and attributes (7.3.2)")
		_, err := e.c.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String("sd-same"), Attributes: sdKV("DelaySeconds", "6")})
		sdWantErr(t, err, sdQueueExists, "A queue already exists with the same name and a different value for attribute DelaySeconds…")
		require.Equal(t, "5", e.attr(url, types.QueueAttributeNameDelaySeconds), "the existing queue is unchanged")

		f := e.create("sd-same.fifo", sdKV("FifoQueue", "true"))
		require.Equal(t, f, e.create("sd-same.fifo", sdKV("FifoQueue", "true")))
		_, err = e.c.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String("sd-same.fifo"),
			Attributes: sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true")})
		sdWantErr(t, err, sdQueueExists, "A queue already exists with the same name and a different value for attribute ContentBasedDeduplication…")
	})

	t.Run("QueueDeletedRecently", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-reuse", nil)
		e.send(url, "old")
		_, err := e.c.DeleteQueue(e.ctx, &sqs.DeleteQueueInput{QueueUrl: &url})
		require.NoError(t, err)
		_, err = e.c.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String("sd-reuse")})
		sdWantErr(t, err, sdDeletedRecently, "")
		e.clk.Advance(59 * time.Second)
		_, err = e.c.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String("sd-reuse")})
		sdWantErr(t, err, sdDeletedRecently, "")
		e.clk.Advance(time.Second) // 60 s after the delete (7.3.2: wait ≥ 60 s)
		url = e.create("sd-reuse", nil)
		require.Equal(t, "0/0/0", e.counts(url), "a new queue under an old name starts empty")
		// Other names are not affected.
		e.create("sd-other", nil)
	})

	t.Run("invalid names", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		_, err := e.c.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String("")})
		sdWantErr(t, err, sdMissing, "The request must contain the parameter QueueName.") // as an empty body (7.1.1)
		for _, tc := range []struct {
			name  string
			attrs map[string]string
		}{
			{strings.Repeat("a", 81), nil},
			{"has space", nil},
			{"has.dot", nil},
			{"bang!", nil},
			{"ünïcode", nil},
			{"std.fifo", nil},                        // a standard queue cannot have the suffix (2.1)
			{"no-suffix", sdKV("FifoQueue", "true")}, // FIFO needs it (2.1)
			{strings.Repeat("a", 76) + ".fifo", sdKV("FifoQueue", "true")}, // the suffix counts toward 80
			{".fifo", sdKV("FifoQueue", "true")},
			{"a b.fifo", sdKV("FifoQueue", "true")},
		} {
			_, err := e.c.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String(tc.name), Attributes: tc.attrs})
			t.Logf("name %q %v", tc.name, tc.attrs)
			sdWantErr(t, err, sdBadParam, "")
		}
		out, err := e.c.ListQueues(e.ctx, &sqs.ListQueuesInput{})
		require.NoError(t, err)
		require.Empty(t, out.QueueUrls, "rejected CreateQueue calls created nothing")
		e.create(strings.Repeat("a", 80), nil)
		e.create(strings.Repeat("b", 75)+".fifo", sdKV("FifoQueue", "true"))
		e.create("Az09_-", nil)
	})

	t.Run("FIFO attribute rules", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		for _, tc := range []struct {
			name        string
			attrs       map[string]string
			code, msg   string
			description string
		}{
			{"sd-s1", sdKV("FifoQueue", "false"), sdBadAttrName, "Unknown Attribute FifoQueue.", "3.12"},
			{"sd-s2", sdKV("ContentBasedDeduplication", "false"), sdBadAttrName, "Unknown Attribute ContentBasedDeduplication.", "3.12"},
			{"sd-s3", sdKV("DeduplicationScope", "queue"), sdBadAttrName, "You can specify the DeduplicationScope only when FifoQueue is set to true.", "3.12"},
			{"sd-s4", sdKV("FifoThroughputLimit", "perQueue"), sdBadAttrName, "You can specify the FifoThroughputLimit only when FifoQueue is set to true.", "3.12"},
			{"sd-f1.fifo", sdKV("FifoQueue", "true", "FifoThroughputLimit", "perMessageGroupId", "DeduplicationScope", "queue"), sdBadAttrValue, "", "3.13"},
			{"sd-f2.fifo", sdKV("FifoQueue", "true", "FifoThroughputLimit", "perMessageGroupId"), sdBadAttrValue, "", "3.13: the default scope is queue"},
			{"sd-f3.fifo", sdKV("FifoQueue", "true", "DeduplicationScope", "group"), sdBadAttrValue, "", "3.13"},
			{"sd-f4.fifo", sdKV("FifoQueue", "true", "FifoThroughputLimit", "perGroup"), sdBadAttrValue, "", "3.13"},
		} {
			_, err := e.c.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String(tc.name), Attributes: tc.attrs})
			t.Logf("%s %v (%s)", tc.name, tc.attrs, tc.description)
			sdWantErr(t, err, tc.code, tc.msg)
		}
	})

	t.Run("invalid attributes", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		for _, tc := range []struct {
			attrs     map[string]string
			code, msg string
		}{
			{sdKV("VisibilityTimeout", "43201"), sdBadAttrValue, ""},
			{sdKV("DelaySeconds", "901"), sdBadAttrValue, ""},
			{sdKV("MessageRetentionPeriod", "59"), sdBadAttrValue, ""},
			{sdKV("MaximumMessageSize", "1023"), sdBadAttrValue, ""},
			{sdKV("ReceiveMessageWaitTimeSeconds", "21"), sdBadAttrValue, ""},
			{sdKV("VisibilityTimeout", "soon"), sdBadAttrValue, ""},
			{sdKV("NoSuchAttribute", "1"), sdBadAttrName, ""},
		} {
			_, err := e.c.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String("sd-bad"), Attributes: tc.attrs})
			t.Logf("attributes %v", tc.attrs)
			sdWantErr(t, err, tc.code, tc.msg)
		}
		_, err := e.c.GetQueueUrl(e.ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("sd-bad")})
		sdWantErr(t, err, sdNonExistentQueue, sdNoQueueText)
	})
}

func TestSdGetQueueUrl(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	url := e.create("sd-url", nil)
	furl := e.create("sd-url.fifo", sdKV("FifoQueue", "true"))

	out, err := e.c.GetQueueUrl(e.ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("sd-url")})
	require.NoError(t, err)
	require.Equal(t, url, aws.ToString(out.QueueUrl))
	out, err = e.c.GetQueueUrl(e.ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("sd-url.fifo"), QueueOwnerAWSAccountId: aws.String(sdAccount)})
	require.NoError(t, err)
	require.Equal(t, furl, aws.ToString(out.QueueUrl))

	for _, name := range []string{"sd-nope", "SD-URL", "sd-url.fif"} {
		_, err = e.c.GetQueueUrl(e.ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
		sdWantErr(t, err, sdNonExistentQueue, sdNoQueueText)
	}
}

func TestSdListQueues(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	var all []string
	for i := range 25 {
		all = append(all, e.create(fmt.Sprintf("sd-list-%02d", i), nil))
	}
	other := e.create("other-queue", nil)

	list := func(in *sqs.ListQueuesInput) *sqs.ListQueuesOutput {
		t.Helper()
		out, err := e.c.ListQueues(e.ctx, in)
		require.NoError(t, err, "ListQueues %+v", in)
		return out
	}

	out := list(&sqs.ListQueuesInput{})
	require.ElementsMatch(t, append(slices.Clone(all), other), out.QueueUrls)
	require.Nil(t, out.NextToken, "no NextToken without MaxResults")

	out = list(&sqs.ListQueuesInput{QueueNamePrefix: aws.String("sd-list-1")})
	require.ElementsMatch(t, all[10:20], out.QueueUrls, "prefix sd-list-1")
	require.Empty(t, list(&sqs.ListQueuesInput{QueueNamePrefix: aws.String("nothing")}).QueueUrls)
	require.Empty(t, list(&sqs.ListQueuesInput{QueueNamePrefix: aws.String("SD-LIST")}).QueueUrls, "prefixes are case-sensitive")

	// Paging: MaxResults 10 over 25 queues gives 10, 10 and 5, with a NextToken on all pages but the last.
	var paged []string
	var sizes []int
	var token *string
	for range 5 {
		out = list(&sqs.ListQueuesInput{QueueNamePrefix: aws.String("sd-list-"), MaxResults: aws.Int32(10), NextToken: token})
		paged = append(paged, out.QueueUrls...)
		sizes = append(sizes, len(out.QueueUrls))
		if token = out.NextToken; token == nil {
			break
		}
	}
	require.Equal(t, []int{10, 10, 5}, sizes, "page sizes")
	require.ElementsMatch(t, all, paged, "every queue exactly once over the pages")

	// The paginator the SDK ships walks the same pages.
	p := sqs.NewListQueuesPaginator(e.c, &sqs.ListQueuesInput{MaxResults: aws.Int32(7)})
	var viaPaginator []string
	for p.HasMorePages() {
		page, err := p.NextPage(e.ctx)
		require.NoError(t, err)
		viaPaginator = append(viaPaginator, page.QueueUrls...)
	}
	require.ElementsMatch(t, append(slices.Clone(all), other), viaPaginator)

	// MaxResults is 1..1000 (7.3.6).
	for _, n := range []int32{0, 1001, -1} {
		_, err := e.c.ListQueues(e.ctx, &sqs.ListQueuesInput{MaxResults: aws.Int32(n)})
		t.Logf("MaxResults %d", n)
		sdWantErr(t, err, sdBadParam, "")
	}
}

func TestSdDeleteQueue(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	url := e.create("sd-del", nil)
	keep := e.create("sd-keep", nil)
	e.send(url, "gone with the queue")
	_, err := e.c.DeleteQueue(e.ctx, &sqs.DeleteQueueInput{QueueUrl: &url})
	require.NoError(t, err)

	// Deletion may take up to 60 s (7.3.2); after that the queue is gone for every action.
	e.clk.Advance(60 * time.Second)
	_, err = e.c.GetQueueUrl(e.ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("sd-del")})
	sdWantErr(t, err, sdNonExistentQueue, sdNoQueueText)
	_, err = e.trySend(url, "x")
	sdWantErr(t, err, sdNonExistentQueue, sdNoQueueText)
	_, err = e.c.DeleteQueue(e.ctx, &sqs.DeleteQueueInput{QueueUrl: &url})
	sdWantErr(t, err, sdNonExistentQueue, sdNoQueueText)
	out, err := e.c.ListQueues(e.ctx, &sqs.ListQueuesInput{})
	require.NoError(t, err)
	require.Equal(t, []string{keep}, out.QueueUrls)
	_, ok := e.srv.Queue("sd-del")
	require.False(t, ok, "Server.Queue after DeleteQueue")
}

func TestSdGetQueueAttributes(t *testing.T) {
	t.Parallel()

	t.Run("each attribute", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		std := e.create("sd-ga", nil)
		fifo := e.create("sd-ga.fifo", sdKV("FifoQueue", "true"))
		created := sdSeconds(sdStart)
		common := sdKV("VisibilityTimeout", "30", "MaximumMessageSize", "1048576", "MessageRetentionPeriod", "345600",
			"DelaySeconds", "0", "ReceiveMessageWaitTimeSeconds", "0", "ApproximateNumberOfMessages", "0",
			"ApproximateNumberOfMessagesNotVisible", "0", "ApproximateNumberOfMessagesDelayed", "0",
			"CreatedTimestamp", created, "LastModifiedTimestamp", created)
		for url, want := range map[string]map[string]string{
			std:  maps.Clone(common),
			fifo: maps.Clone(common),
		} {
			if url == std {
				want["QueueArn"] = sdArn("sd-ga")
			} else {
				want["QueueArn"] = sdArn("sd-ga.fifo")
				maps.Copy(want, sdKV("FifoQueue", "true", "ContentBasedDeduplication", "false",
					"DeduplicationScope", "queue", "FifoThroughputLimit", "perQueue"))
			}
			for name, v := range want {
				got := e.attrs(url, types.QueueAttributeName(name))
				require.Equal(t, map[string]string{name: v}, got, "GetQueueAttributes %s of %s", name, url)
			}
			all := e.attrs(url, types.QueueAttributeNameAll)
			for name, v := range want {
				require.Equal(t, v, all[name], "All: %s of %s", name, url)
			}
			if url == std {
				for _, name := range []string{"FifoQueue", "ContentBasedDeduplication", "DeduplicationScope", "FifoThroughputLimit"} {
					require.NotContains(t, all, name, "All of a standard queue")
				}
			}
			for _, name := range []string{"RedrivePolicy", "RedriveAllowPolicy", "Policy"} {
				if v, ok := all[name]; ok && name == "RedriveAllowPolicy" {
					require.JSONEq(t, `{"redrivePermission":"allowAll"}`, v, "the default RedriveAllowPolicy (6.7)")
					continue
				}
				require.NotContains(t, all, name, "All, with no %s set", name)
			}
			two := e.attrs(url, types.QueueAttributeNameVisibilityTimeout, types.QueueAttributeNameQueueArn)
			require.Equal(t, map[string]string{"VisibilityTimeout": "30", "QueueArn": want["QueueArn"]}, two)
		}
	})

	t.Run("timestamps", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-ts", nil)
		e.clk.Advance(100 * time.Second)
		require.NoError(t, e.setAttrs(url, sdKV("VisibilityTimeout", "31")))
		all := e.attrs(url, types.QueueAttributeNameAll)
		require.Equal(t, sdSeconds(sdStart), all["CreatedTimestamp"], "epoch seconds (7.3.7)")
		require.Equal(t, sdSeconds(sdStart.Add(100*time.Second)), all["LastModifiedTimestamp"], "epoch seconds of the last SetQueueAttributes")
	})

	t.Run("approximate counts, standard", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-counts", nil)
		e.send(url, "m1")
		e.send(url, "m2")
		e.send(url, "m3", sdDelay(10))
		require.Equal(t, "2/0/1", e.counts(url), "a delayed message counts as delayed only (10.1)")
		e.receiveOne(url)
		require.Equal(t, "1/1/1", e.counts(url))
		e.clk.Advance(10 * time.Second)
		require.Equal(t, "2/1/0", e.counts(url), "the delay ended")
		e.clk.Advance(sdDefaultVT - 10*time.Second)
		require.Equal(t, "3/0/0", e.counts(url), "the visibility timeout ended (10.3)")
		ms := e.receiveN(url, 10)
		require.Len(t, ms, 3)
		for _, m := range ms[:2] {
			require.NoError(t, e.deleteMessage(url, *m.ReceiptHandle))
		}
		require.Equal(t, "0/1/0", e.counts(url), "deleted messages are not counted")
	})

	t.Run("approximate counts, FIFO", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-counts.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true"))
		for _, g := range []string{"g1", "g2", "g3"} {
			e.send(url, g+"-a", sdGroup(g))
			e.send(url, g+"-b", sdGroup(g))
		}
		first, second := e.receiveOne(url), e.receiveOne(url)
		require.NotEqual(t, *first.Body, *second.Body)
		require.Equal(t, "4/2/0", e.counts(url), "messages behind an in-flight head count as visible (10.2)")
		e.clk.Advance(sdDefaultVT)
		require.Equal(t, "6/0/0", e.counts(url))

		d := e.create("sd-delayed.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true", "DelaySeconds", "5"))
		e.send(d, "later", sdGroup("g"))
		require.Equal(t, "0/0/1", e.counts(d))
		e.clk.Advance(5 * time.Second)
		require.Equal(t, "1/0/0", e.counts(d))
	})

	t.Run("InvalidAttributeName", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-ga-bad", nil)
		for _, names := range [][]types.QueueAttributeName{
			{"NoSuchAttribute"},
			{types.QueueAttributeNameVisibilityTimeout, "NoSuchAttribute"},
		} {
			_, err := e.c.GetQueueAttributes(e.ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: names})
			t.Logf("AttributeNames %v", names)
			sdWantErr(t, err, sdBadAttrName, "")
			require.Contains(t, err.Error(), string(names[len(names)-1]), "the message names the attribute")
		}
	})
}

func TestSdSetQueueAttributes(t *testing.T) {
	t.Parallel()

	t.Run("each settable attribute", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-set", nil)
		policy := `{"Version":"2012-10-17","Id":"sd-policy","Statement":[{"Sid":"s1","Effect":"Allow",` +
			`"Principal":"*","Action":"sqs:SendMessage","Resource":"` + sdArn("sd-set") + `"}]}`
		for _, kv := range [][2]string{
			{"VisibilityTimeout", "0"}, {"VisibilityTimeout", "43200"}, {"VisibilityTimeout", "45"},
			{"DelaySeconds", "900"}, {"DelaySeconds", "0"},
			{"MessageRetentionPeriod", "60"}, {"MessageRetentionPeriod", "1209600"},
			{"MaximumMessageSize", "1024"}, {"MaximumMessageSize", "1048576"},
			{"ReceiveMessageWaitTimeSeconds", "20"}, {"ReceiveMessageWaitTimeSeconds", "0"},
		} {
			require.NoError(t, e.setAttrs(url, sdKV(kv[0], kv[1])), "SetQueueAttributes %s=%s", kv[0], kv[1])
			require.Equal(t, kv[1], e.attr(url, types.QueueAttributeName(kv[0])), "read back %s", kv[0])
		}
		// Encryption settings are stored and returned (the server does not encrypt).
		for _, kv := range [][2]string{
			{"KmsMasterKeyId", "alias/aws/sqs"}, {"KmsDataKeyReusePeriodSeconds", "300"}, {"SqsManagedSseEnabled", "true"},
		} {
			require.NoError(t, e.setAttrs(url, sdKV(kv[0], kv[1])), "SetQueueAttributes %s=%s", kv[0], kv[1])
			require.Equal(t, kv[1], e.attr(url, types.QueueAttributeName(kv[0])), "read back %s", kv[0])
		}
		require.NoError(t, e.setAttrs(url, sdKV("Policy", policy)))
		require.JSONEq(t, policy, e.attr(url, types.QueueAttributeNamePolicy), "the Policy is stored and returned")
		require.JSONEq(t, policy, e.attrs(url, types.QueueAttributeNameAll)["Policy"])

		// Several at once.
		require.NoError(t, e.setAttrs(url, sdKV("VisibilityTimeout", "12", "DelaySeconds", "3")))
		got := e.attrs(url, types.QueueAttributeNameVisibilityTimeout, types.QueueAttributeNameDelaySeconds)
		require.Equal(t, sdKV("VisibilityTimeout", "12", "DelaySeconds", "3"), got)

		// The values take effect: the new visibility timeout applies to the next receive.
		require.NoError(t, e.setAttrs(url, sdKV("DelaySeconds", "0")))
		e.send(url, "m")
		e.receiveOne(url)
		e.clk.Advance(12 * time.Second)
		require.Equal(t, "m", *e.receiveOne(url).Body, "visible again after the new 12 s timeout")

		f := e.create("sd-set.fifo", sdKV("FifoQueue", "true"))
		for _, kv := range [][2]string{
			{"ContentBasedDeduplication", "true"}, {"ContentBasedDeduplication", "false"},
			{"DeduplicationScope", "messageGroup"}, {"FifoThroughputLimit", "perMessageGroupId"},
			{"FifoThroughputLimit", "perQueue"}, {"DeduplicationScope", "queue"},
		} {
			require.NoError(t, e.setAttrs(f, sdKV(kv[0], kv[1])), "SetQueueAttributes %s=%s", kv[0], kv[1])
			require.Equal(t, kv[1], e.attr(f, types.QueueAttributeName(kv[0])), "read back %s", kv[0])
		}
		// 3.12: a toggled ContentBasedDeduplication takes effect.
		_, err := e.trySend(f, "no dedup id", sdGroup("g"))
		sdWantErr(t, err, sdBadParam, sdNoDedupText)
		require.NoError(t, e.setAttrs(f, sdKV("ContentBasedDeduplication", "true")))
		e.send(f, "no dedup id", sdGroup("g"))
	})

	t.Run("retention and delay take effect", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-retention", sdKV("MessageRetentionPeriod", "60"))
		e.send(url, "in flight")
		e.receive(url, &sqs.ReceiveMessageInput{VisibilityTimeout: 120})
		e.send(url, "never received")
		e.clk.Advance(60 * time.Second)
		require.Equal(t, "0/0/0", e.counts(url), "messages older than the retention period are gone, in flight or not (5.2)")

		cut := e.create("sd-retention-cut", nil)
		e.send(cut, "old")
		e.clk.Advance(90 * time.Second)
		e.send(cut, "new")
		require.NoError(t, e.setAttrs(cut, sdKV("MessageRetentionPeriod", "60")))
		require.Equal(t, []string{"new"}, sdBodies(e.receiveN(cut, 10)), "a shorter retention expires older messages (5.3)")

		std := e.create("sd-redelay", sdKV("DelaySeconds", "100"))
		e.send(std, "std")
		require.NoError(t, e.setAttrs(std, sdKV("DelaySeconds", "10")))
		e.clk.Advance(10 * time.Second)
		require.Empty(t, e.receiveN(std, 10), "a standard queue's delayed message keeps its delay (4.6)")
		e.clk.Advance(90 * time.Second)
		require.Equal(t, []string{"std"}, sdBodies(e.receiveN(std, 10)))
		f := e.create("sd-redelay.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true", "DelaySeconds", "100"))
		e.send(f, "fifo", sdGroup("g"))
		require.NoError(t, e.setAttrs(f, sdKV("DelaySeconds", "10")))
		e.clk.Advance(10 * time.Second)
		require.Equal(t, []string{"fifo"}, sdBodies(e.receiveN(f, 10)), "a FIFO queue applies the new delay (4.6)")
	})

	t.Run("invalid values", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-set-bad", sdKV("VisibilityTimeout", "40"))
		for _, kv := range [][2]string{
			{"VisibilityTimeout", "43201"}, {"VisibilityTimeout", "-1"}, {"VisibilityTimeout", "abc"}, {"VisibilityTimeout", "1.5"},
			{"DelaySeconds", "901"}, {"DelaySeconds", "-1"},
			{"MessageRetentionPeriod", "59"}, {"MessageRetentionPeriod", "1209601"},
			{"MaximumMessageSize", "1023"}, {"MaximumMessageSize", "1048577"},
			{"ReceiveMessageWaitTimeSeconds", "21"}, {"ReceiveMessageWaitTimeSeconds", "-1"},
		} {
			err := e.setAttrs(url, sdKV(kv[0], kv[1]))
			t.Logf("%s=%s", kv[0], kv[1])
			sdWantErr(t, err, sdBadAttrValue, "")
			require.Contains(t, err.Error(), kv[0], "the message names the attribute")
		}
		// A bad value among good ones changes nothing.
		err := e.setAttrs(url, sdKV("VisibilityTimeout", "41", "DelaySeconds", "901"))
		sdWantErr(t, err, sdBadAttrValue, "")
		require.Equal(t, "40", e.attr(url, types.QueueAttributeNameVisibilityTimeout), "unchanged after a rejected call")

		err = e.setAttrs(url, sdKV("NoSuchAttribute", "1"))
		sdWantErr(t, err, sdBadAttrName, "")
		// FIFO-only attributes on a standard queue (2.1, 3.12).
		err = e.setAttrs(url, sdKV("FifoQueue", "true"))
		sdWantErr(t, err, sdBadAttrName, "Unknown Attribute FifoQueue.")
		err = e.setAttrs(url, sdKV("FifoQueue", "false"))
		sdWantErr(t, err, sdBadAttrName, "Unknown Attribute FifoQueue.")
		err = e.setAttrs(url, sdKV("ContentBasedDeduplication", "true"))
		sdWantErr(t, err, sdBadAttrName, "")
		require.Equal(t, "40", e.attr(url, types.QueueAttributeNameVisibilityTimeout))

		f := e.create("sd-set-bad.fifo", sdKV("FifoQueue", "true"))
		require.NoError(t, e.setAttrs(f, sdKV("FifoQueue", "true")), "FifoQueue=true on a FIFO queue is a no-op (2.1)")
		err = e.setAttrs(f, sdKV("FifoQueue", "false"))
		sdWantErr(t, err, sdBadAttrValue, "Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported.")
		require.Equal(t, "true", e.attr(f, types.QueueAttributeNameFifoQueue))
		// perMessageGroupId only with messageGroup (3.13).
		err = e.setAttrs(f, sdKV("FifoThroughputLimit", "perMessageGroupId", "DeduplicationScope", "queue"))
		sdWantErr(t, err, sdBadAttrValue, "")
		err = e.setAttrs(f, sdKV("FifoThroughputLimit", "perMessageGroupId"))
		sdWantErr(t, err, sdBadAttrValue, "")
		err = e.setAttrs(f, sdKV("ContentBasedDeduplication", "maybe"))
		sdWantErr(t, err, sdBadAttrValue, "")
	})

	t.Run("RedrivePolicy", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		e.create("sd-dlq", nil)
		src := e.create("sd-src", nil)
		e.create("sd-dlq.fifo", sdKV("FifoQueue", "true"))
		policy := func(arn string, count any) string {
			b, err := json.Marshal(map[string]any{"deadLetterTargetArn": arn, "maxReceiveCount": count})
			require.NoError(t, err)
			return string(b)
		}
		readBack := func(url string) map[string]any {
			t.Helper()
			v, ok := e.attrs(url, types.QueueAttributeNameAll)["RedrivePolicy"]
			if !ok {
				return nil
			}
			var m map[string]any
			dec := json.NewDecoder(strings.NewReader(v))
			dec.UseNumber()
			require.NoError(t, dec.Decode(&m), "RedrivePolicy %q is JSON", v)
			return m
		}

		require.NoError(t, e.setAttrs(src, sdKV("RedrivePolicy", policy(sdArn("sd-dlq"), 3))))
		rp := readBack(src)
		require.Equal(t, sdArn("sd-dlq"), rp["deadLetterTargetArn"])
		require.Equal(t, "3", fmt.Sprint(rp["maxReceiveCount"]))
		require.Equal(t, rp, func() map[string]any {
			v := e.attr(src, types.QueueAttributeNameRedrivePolicy)
			var m map[string]any
			dec := json.NewDecoder(strings.NewReader(v))
			dec.UseNumber()
			require.NoError(t, dec.Decode(&m))
			return m
		}(), "asked by name")

		// "42" as a string is accepted (6.1).
		require.NoError(t, e.setAttrs(src, sdKV("RedrivePolicy", policy(sdArn("sd-dlq"), "42"))))
		require.Equal(t, "42", fmt.Sprint(readBack(src)["maxReceiveCount"]))

		// "" removes it (6.1).
		require.NoError(t, e.setAttrs(src, sdKV("RedrivePolicy", "")))
		require.Nil(t, readBack(src), "RedrivePolicy after setting it to \"\"")

		for _, bad := range []string{
			"{",
			"not json",
			`{"deadLetterTargetArn":"` + sdArn("sd-dlq") + `"}`,
			`{"maxReceiveCount":3}`,
			policy(sdArn("sd-dlq"), "abc"),
			policy(sdArn("sd-dlq"), 0),
			policy(sdArn("sd-dlq"), 1001),
			policy(sdArn("sd-no-such-queue"), 3),
			policy("not-an-arn", 3),
			policy(sdArn("sd-dlq.fifo"), 3), // a standard queue needs a standard DLQ (6.2)
		} {
			err := e.setAttrs(src, sdKV("RedrivePolicy", bad))
			t.Logf("RedrivePolicy %s", bad)
			sdWantErr(t, err, sdBadParam, "")
		}
		require.Nil(t, readBack(src), "rejected policies are not stored")

		fsrc := e.create("sd-src.fifo", sdKV("FifoQueue", "true"))
		err := e.setAttrs(fsrc, sdKV("RedrivePolicy", policy(sdArn("sd-dlq"), 3)))
		sdWantErr(t, err, sdBadParam, "")
		require.NoError(t, e.setAttrs(fsrc, sdKV("RedrivePolicy", policy(sdArn("sd-dlq.fifo"), 3))))

		// Given at creation too.
		c := e.create("sd-src2", sdKV("RedrivePolicy", policy(sdArn("sd-dlq"), 2)))
		require.Equal(t, "2", fmt.Sprint(readBack(c)["maxReceiveCount"]))
	})

	t.Run("RedriveAllowPolicy", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		dlq := e.create("sd-rap-dlq", nil)
		src := e.create("sd-rap-src", nil)
		other := e.create("sd-rap-other", nil)
		redrive := sdKV("RedrivePolicy", `{"deadLetterTargetArn":"`+sdArn("sd-rap-dlq")+`","maxReceiveCount":5}`)

		deny := `{"redrivePermission":"denyAll"}`
		require.NoError(t, e.setAttrs(dlq, sdKV("RedriveAllowPolicy", deny)))
		require.JSONEq(t, deny, e.attr(dlq, types.QueueAttributeNameRedriveAllowPolicy))
		sdWantErr(t, e.setAttrs(src, redrive), sdBadParam, "")

		byOther := `{"redrivePermission":"byQueue","sourceQueueArns":["` + sdArn("sd-rap-other") + `"]}`
		require.NoError(t, e.setAttrs(dlq, sdKV("RedriveAllowPolicy", byOther)))
		require.JSONEq(t, byOther, e.attr(dlq, types.QueueAttributeNameRedriveAllowPolicy))
		sdWantErr(t, e.setAttrs(src, redrive), sdBadParam, "")
		require.NoError(t, e.setAttrs(other, redrive))

		bySrc := `{"redrivePermission":"byQueue","sourceQueueArns":["` + sdArn("sd-rap-src") + `","` + sdArn("sd-rap-other") + `"]}`
		require.NoError(t, e.setAttrs(dlq, sdKV("RedriveAllowPolicy", bySrc)))
		require.NoError(t, e.setAttrs(src, redrive), "a listed source (6.7)")

		var eleven []string
		for i := range 11 {
			eleven = append(eleven, `"`+sdArn(fmt.Sprintf("sd-rap-%d", i))+`"`)
		}
		for _, bad := range []string{
			`{"redrivePermission":"byQueue","sourceQueueArns":[` + strings.Join(eleven, ",") + `]}`,
			`{"redrivePermission":"allowAll","sourceQueueArns":["` + sdArn("sd-rap-src") + `"]}`,
			`{"redrivePermission":"denyAll","sourceQueueArns":["` + sdArn("sd-rap-src") + `"]}`,
			`{"redrivePermission":"sometimes"}`,
			`{`,
		} {
			err := e.setAttrs(dlq, sdKV("RedriveAllowPolicy", bad))
			t.Logf("RedriveAllowPolicy %s", bad)
			sdWantErr(t, err, sdBadAttrValue, "")
		}
		require.JSONEq(t, bySrc, e.attr(dlq, types.QueueAttributeNameRedriveAllowPolicy), "unchanged after rejected calls")

		allow := `{"redrivePermission":"allowAll"}`
		require.NoError(t, e.setAttrs(dlq, sdKV("RedriveAllowPolicy", allow)))
		require.JSONEq(t, allow, e.attr(dlq, types.QueueAttributeNameRedriveAllowPolicy))
	})
}

func TestSdPurgeQueue(t *testing.T) {
	t.Parallel()

	t.Run("standard", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-purge", nil)
		e.send(url, "in flight")
		e.receiveOne(url)
		e.send(url, "visible")
		e.send(url, "delayed", sdDelay(30))
		require.Equal(t, "1/1/1", e.counts(url))
		_, err := e.c.PurgeQueue(e.ctx, &sqs.PurgeQueueInput{QueueUrl: &url})
		require.NoError(t, err)
		require.Equal(t, "0/0/0", e.counts(url), "purge removes visible, in-flight and delayed messages (7.3.3)")

		// Once per 60 s.
		_, err = e.c.PurgeQueue(e.ctx, &sqs.PurgeQueueInput{QueueUrl: &url})
		sdWantErr(t, err, sdPurgeInProgress, "Only one PurgeQueue operation on sd-purge is allowed every 60 seconds.")
		var re *awshttp.ResponseError
		require.ErrorAs(t, err, &re)
		require.Equal(t, http.StatusForbidden, re.HTTPStatusCode(), "PurgeQueueInProgress is HTTP 403")

		e.clk.Advance(sdDefaultVT + time.Second)
		require.Empty(t, e.receiveN(url, 10), "purged messages never come back after their visibility timeout or delay")
		e.clk.Advance(28 * time.Second) // 59 s after the purge
		_, err = e.c.PurgeQueue(e.ctx, &sqs.PurgeQueueInput{QueueUrl: &url})
		sdWantErr(t, err, sdPurgeInProgress, "")
		e.clk.Advance(2 * time.Second)
		_, err = e.c.PurgeQueue(e.ctx, &sqs.PurgeQueueInput{QueueUrl: &url})
		require.NoError(t, err, "61 s after the first purge")

		// Another queue is not limited by this one's purge.
		other := e.create("sd-purge-2", nil)
		_, err = e.c.PurgeQueue(e.ctx, &sqs.PurgeQueueInput{QueueUrl: &other})
		require.NoError(t, err)
	})

	t.Run("FIFO clears deduplication", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-purge.fifo", sdKV("FifoQueue", "true"))
		e.send(url, "first", sdGroup("g"), sdDedup("d"))
		_, err := e.c.PurgeQueue(e.ctx, &sqs.PurgeQueueInput{QueueUrl: &url})
		require.NoError(t, err)
		e.send(url, "again", sdGroup("g"), sdDedup("d"))
		require.Equal(t, []string{"again"}, sdBodies(e.receiveN(url, 10)), "a purge clears the deduplication ids (3.10)")
	})
}

func TestSdSendMessage(t *testing.T) {
	t.Parallel()

	t.Run("digests and ids", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-send", nil)
		out := e.send(url, "foobar", sdWith("MyAttribute", sdStr("foobar")))
		require.Equal(t, "3858f62230ac3c915f300c664312c63f", aws.ToString(out.MD5OfMessageBody), "1.4.6 body vector")
		require.Equal(t, "adb59cd4678ea5a855436b949cd07ab6", aws.ToString(out.MD5OfMessageAttributes), "1.4.6 attribute vector")
		require.Nil(t, out.MD5OfMessageSystemAttributes, "no system attributes sent")
		require.Nil(t, out.SequenceNumber, "a standard queue has no SequenceNumber (1.4.5)")
		require.LessOrEqual(t, len(*out.MessageId), 100, "MessageId length (1.4.1)")

		traced := e.send(url, "foobar", sdWith("MyAttribute", sdStr("foobar")), sdTrace(sdTraceHeader))
		require.Equal(t, "5ae4d5d7636402d80f4eb6d213245a88", aws.ToString(traced.MD5OfMessageSystemAttributes), "1.4.6 system attribute vector")
		require.Equal(t, "adb59cd4678ea5a855436b949cd07ab6", aws.ToString(traced.MD5OfMessageAttributes), "system attributes do not change MD5OfMessageAttributes")
		require.NotEqual(t, *out.MessageId, *traced.MessageId)

		plain := e.send(url, "no attributes")
		require.Nil(t, plain.MD5OfMessageAttributes, "no MD5OfMessageAttributes without attributes")
		require.Equal(t, sdBodyMD5("no attributes"), aws.ToString(plain.MD5OfMessageBody))

		ms := e.receiveN(url, 10)
		require.ElementsMatch(t, []string{*out.MessageId, *traced.MessageId, *plain.MessageId}, sdIDs(ms))
	})

	t.Run("attributes of every type", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		for _, url := range []string{e.create("sd-types", nil), e.create("sd-types.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true"))} {
			attrs := sdAllTypes()
			body := "a body with\ttab, newline\n, CR\r and ✓ 𝄞"
			out := e.send(url, body, sdAttrs(attrs), sdGroup("g"))
			require.Equal(t, sdAttrMD5(attrs), aws.ToString(out.MD5OfMessageAttributes), "MD5OfMessageAttributes on send")
			require.Equal(t, sdBodyMD5(body), aws.ToString(out.MD5OfMessageBody))
			ms := e.receive(url, &sqs.ReceiveMessageInput{MessageAttributeNames: []string{"All"}})
			require.Len(t, ms, 1)
			require.Equal(t, body, *ms[0].Body)
			require.Equal(t, sdBodyMD5(body), aws.ToString(ms[0].MD5OfBody))
			sdRequireAttrs(t, attrs, ms[0])
		}
	})

	t.Run("SequenceNumber", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-seq.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true"))
		var last *big.Int
		var seqs []string
		for i := range 4 {
			out := e.send(url, fmt.Sprintf("m%d", i), sdGroup("g"))
			n, ok := new(big.Int).SetString(aws.ToString(out.SequenceNumber), 10)
			require.True(t, ok, "SequenceNumber %q is a decimal number (1.4.5)", aws.ToString(out.SequenceNumber))
			if last != nil {
				require.Equal(t, 1, n.Cmp(last), "SequenceNumber %v after %v: strictly increasing", n, last)
			}
			last = n
			seqs = append(seqs, *out.SequenceNumber)
		}
		ms := e.receive(url, &sqs.ReceiveMessageInput{MaxNumberOfMessages: 10,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameSequenceNumber}})
		require.Equal(t, []string{"m0", "m1", "m2", "m3"}, sdBodies(ms))
		for i, m := range ms {
			require.Equal(t, seqs[i], m.Attributes["SequenceNumber"], "received SequenceNumber of m%d", i)
		}
	})

	t.Run("deduplicated send", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-dup.fifo", sdKV("FifoQueue", "true"))
		first := e.send(url, "b1", sdGroup("g"), sdDedup("d"))
		second := e.send(url, "b2", sdGroup("g"), sdDedup("d"))
		require.Equal(t, *first.MessageId, *second.MessageId, "a deduplicated send returns the original MessageId (3.9, as chosen for fifoq)")
		require.Equal(t, sdBodyMD5("b2"), aws.ToString(second.MD5OfMessageBody), "the digest is of the body sent, which the SDK checks")
		require.Equal(t, []string{"b1"}, sdBodies(e.receiveN(url, 10)), "only the first is delivered (3.4)")
	})

	t.Run("deduplication", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		cbd := e.create("sd-cbd.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true"))
		a := e.send(cbd, "same body", sdGroup("g"), sdWith("k", sdStr("1")))
		b := e.send(cbd, "same body", sdGroup("g"), sdWith("k", sdStr("2")))
		require.Equal(t, *a.MessageId, *b.MessageId, "content-based: attributes are not part of the id (3.3)")
		c := e.send(cbd, "same body", sdGroup("g"), sdDedup("explicit-1"))
		d := e.send(cbd, "same body", sdGroup("g"), sdDedup("explicit-2"))
		require.NotEqual(t, *c.MessageId, *d.MessageId, "explicit ids override the content hash (3.3)")
		require.Equal(t, []string{"same body", "same body", "same body"}, sdBodies(e.receiveN(cbd, 10)))

		url := e.create("sd-dedup.fifo", sdKV("FifoQueue", "true"))
		first := e.send(url, "one", sdGroup("g1"), sdDedup("d"))
		require.Equal(t, *first.MessageId, *e.send(url, "two", sdGroup("g2"), sdDedup("d")).MessageId, "scope queue spans groups (3.6)")
		ms := e.receiveN(url, 10)
		require.Equal(t, []string{"one"}, sdBodies(ms))
		require.NoError(t, e.deleteMessage(url, *ms[0].ReceiptHandle))
		require.Equal(t, *first.MessageId, *e.send(url, "three", sdGroup("g1"), sdDedup("d")).MessageId, "deleted, still deduplicated (3.5)")
		require.Empty(t, e.receiveN(url, 10))
		e.clk.Advance(5*time.Minute + time.Second)
		later := e.send(url, "four", sdGroup("g1"), sdDedup("d"))
		require.NotEqual(t, *first.MessageId, *later.MessageId, "a new message after 5 minutes (3.4)")
		require.Equal(t, []string{"four"}, sdBodies(e.receiveN(url, 10)))

		byGroup := e.create("sd-bygroup.fifo", sdKV("FifoQueue", "true", "DeduplicationScope", "messageGroup"))
		e.send(byGroup, "g1", sdGroup("g1"), sdDedup("d"))
		e.send(byGroup, "g2", sdGroup("g2"), sdDedup("d"))
		e.send(byGroup, "g1 again", sdGroup("g1"), sdDedup("d"))
		require.ElementsMatch(t, []string{"g1", "g2"}, sdBodies(e.receiveN(byGroup, 10)), "scope messageGroup (3.7)")
	})

	t.Run("size limits", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-size", nil)
		e.send(url, strings.Repeat("x", sdMiB))
		_, err := e.trySend(url, strings.Repeat("x", sdMiB+1))
		sdWantErr(t, err, sdBadParam, "One or more parameters are invalid. Reason: Message must be shorter than 1048576 bytes.")
		// Attributes count toward the size (7.1.2).
		_, err = e.trySend(url, strings.Repeat("x", sdMiB-10), sdWith("k", sdStr("0123456789")))
		sdWantErr(t, err, sdBadParam, "One or more parameters are invalid. Reason: Message must be shorter than 1048576 bytes.")

		small := e.create("sd-size-1k", sdKV("MaximumMessageSize", "1024"))
		e.send(small, strings.Repeat("x", 1024))
		_, err = e.trySend(small, strings.Repeat("x", 1025))
		sdWantErr(t, err, sdBadParam, "One or more parameters are invalid. Reason: Message must be shorter than 1024 bytes.")

		two := e.create("sd-size-2k", sdKV("MaximumMessageSize", "2048"))
		attr := len("k") + len("String") + len("x")
		e.send(two, strings.Repeat("x", 2048-attr), sdWith("k", sdStr("x")))
		_, err = e.trySend(two, strings.Repeat("x", 2048-attr+1), sdWith("k", sdStr("x")))
		sdWantErr(t, err, sdBadParam, "One or more parameters are invalid. Reason: Message must be shorter than 2048 bytes.")
		require.Equal(t, "1/0/0", e.counts(two), "the rejected message was not stored")
	})

	t.Run("invalid messages", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-bad-send", nil)
		tenAttrs := map[string]types.MessageAttributeValue{}
		for i := range 10 {
			tenAttrs[fmt.Sprintf("a%d", i)] = sdStr("v")
		}
		elevenAttrs := maps.Clone(tenAttrs)
		elevenAttrs["a10"] = sdStr("v")
		long := strings.Repeat("n", 257)
		for _, tc := range []struct {
			what      string
			body      string
			opts      []sdSendOpt
			code, msg string
		}{
			{"empty body", "", nil, sdMissing, "The request must contain the parameter MessageBody."},
			{"control character", "a\x01b", nil, sdBadContents, ""},
			{"NUL", "\x00", nil, sdBadContents, ""},
			{"U+FFFE", "a\uFFFEb", nil, sdBadContents, ""},
			{"U+FFFF", "\uFFFF", nil, sdBadContents, ""},
			{"11 attributes", "b", []sdSendOpt{sdAttrs(elevenAttrs)}, sdBadParam, ""},
			{"empty String value", "b", []sdSendOpt{sdWith("X", sdStr(""))}, sdBadParam, "Message (user) attribute 'X' must contain a non-empty value of type 'String'."},
			{"empty Number value", "b", []sdSendOpt{sdWith("N", sdTyped("Number", ""))}, sdBadParam, ""},
			{"empty Binary value", "b", []sdSendOpt{sdWith("B", sdBin("Binary", nil))}, sdBadParam, ""},
			{"String value without StringValue", "b", []sdSendOpt{sdWith("S", types.MessageAttributeValue{DataType: aws.String("String")})}, sdBadParam, ""},
			{"name AWS.", "b", []sdSendOpt{sdWith("AWS.x", sdStr("v"))}, sdBadParam, ""},
			{"name amazon.", "b", []sdSendOpt{sdWith("amazon.x", sdStr("v"))}, sdBadParam, ""},
			{"name aws. in lower case", "b", []sdSendOpt{sdWith("aws.x", sdStr("v"))}, sdBadParam, ""},
			{"leading dot", "b", []sdSendOpt{sdWith(".a", sdStr("v"))}, sdBadParam, ""},
			{"trailing dot", "b", []sdSendOpt{sdWith("a.", sdStr("v"))}, sdBadParam, ""},
			{"two dots", "b", []sdSendOpt{sdWith("a..b", sdStr("v"))}, sdBadParam, ""},
			{"space in name", "b", []sdSendOpt{sdWith("a b", sdStr("v"))}, sdBadParam, ""},
			{"257-character name", "b", []sdSendOpt{sdWith(long, sdStr("v"))}, sdBadParam, ""},
			{"empty name", "b", []sdSendOpt{sdWith("", sdStr("v"))}, sdBadParam, ""},
			{"unknown type", "b", []sdSendOpt{sdWith("t", sdTyped("Text", "v"))}, sdBadParam, ""},
			{"type is case-sensitive", "b", []sdSendOpt{sdWith("t", sdTyped("string", "v"))}, sdBadParam, ""},
			{"empty type", "b", []sdSendOpt{sdWith("t", sdTyped("", "v"))}, sdBadParam, ""},
			{"not a number", "b", []sdSendOpt{sdWith("n", sdTyped("Number", "abc"))}, sdBadParam, ""},
			{"39 digits", "b", []sdSendOpt{sdWith("n", sdTyped("Number", strings.Repeat("1", 39)))}, sdBadParam, ""},
			{"bad characters in a String attribute", "b", []sdSendOpt{sdWith("s", sdStr("a\x01"))}, sdBadContents, ""},
			{"delay 901", "b", []sdSendOpt{sdDelay(901)}, sdBadParam, ""},
			{"delay -1", "b", []sdSendOpt{sdDelay(-1)}, sdBadParam, ""},
			{"group id with space (2.4)", "b", []sdSendOpt{sdGroup("group 123")}, sdBadParam, sdGroupIDText},
			{"empty group id (2.4)", "b", []sdSendOpt{sdGroup("")}, sdBadParam, sdGroupIDText},
			{"dedup id on a standard queue", "b", []sdSendOpt{sdDedup("d")}, sdBadParam, ""},
			{"system attribute other than AWSTraceHeader (7.1.4)", "b", []sdSendOpt{sdSys("SenderId", sdStr("me"))}, sdBadParam, ""},
		} {
			_, err := e.trySend(url, tc.body, tc.opts...)
			t.Logf("%s", tc.what)
			sdWantErr(t, err, tc.code, tc.msg)
		}
		require.Equal(t, "0/0/0", e.counts(url), "rejected sends stored nothing")

		// The limits themselves are accepted.
		e.send(url, "b", sdAttrs(tenAttrs))
		e.send(url, "b", sdWith(strings.Repeat("n", 256), sdStr("v")))
		e.send(url, "b", sdWith("n", sdTyped("Number", strings.Repeat("1", 38))))
		e.send(url, "b", sdWith("a.b-c_d", sdStr("v")))
		e.send(url, "b", sdDelay(900))
		e.send(url, "b", sdGroup(strings.Repeat("g", 128)))
		e.send(url, "b", sdTrace(sdTraceHeader))
	})

	t.Run("FIFO rules", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-rules.fifo", sdKV("FifoQueue", "true"))
		cbd := e.create("sd-cbd.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true"))
		for _, tc := range []struct {
			what      string
			url       string
			opts      []sdSendOpt
			code, msg string
		}{
			{"missing group id (2.2)", cbd, nil, sdMissing, sdNoGroupText},
			{"missing group id, explicit dedup id", url, []sdSendOpt{sdDedup("d")}, sdMissing, sdNoGroupText},
			{"empty group id (2.3)", cbd, []sdSendOpt{sdGroup("")}, sdBadParam, sdGroupIDText},
			{"129-character group id", cbd, []sdSendOpt{sdGroup(strings.Repeat("a", 129))}, sdBadParam, sdGroupIDText},
			{"group id with space", cbd, []sdSendOpt{sdGroup("group 123")}, sdBadParam, sdGroupIDText},
			{"group id with é", cbd, []sdSendOpt{sdGroup("é")}, sdBadParam, sdGroupIDText},
			{"no dedup id, no content-based deduplication (3.1)", url, []sdSendOpt{sdGroup("g")}, sdBadParam, sdNoDedupText},
			{"empty dedup id (3.2)", url, []sdSendOpt{sdGroup("g"), sdDedup("")}, sdBadParam, sdDedupIDText},
			{"129-character dedup id", url, []sdSendOpt{sdGroup("g"), sdDedup(strings.Repeat("d", 129))}, sdBadParam, sdDedupIDText},
			{"dedup id with space", cbd, []sdSendOpt{sdGroup("g"), sdDedup("a b")}, sdBadParam, sdDedupIDText},
			{"per-message delay (4.3)", cbd, []sdSendOpt{sdGroup("g"), sdDelay(2)}, sdBadParam,
				"Value 2 for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type."},
		} {
			_, err := e.trySend(tc.url, "body", tc.opts...)
			t.Logf("%s", tc.what)
			sdWantErr(t, err, tc.code, tc.msg)
		}
		require.Equal(t, "0/0/0", e.counts(url))
		require.Equal(t, "0/0/0", e.counts(cbd))

		e.send(cbd, "b", sdGroup(strings.Repeat("a", 128)))
		e.send(cbd, "b", sdGroup(sdPunctuation))
		e.send(url, "b", sdGroup("g"), sdDedup(strings.Repeat("d", 128)))
		e.send(url, "b", sdGroup("g"), sdDedup(sdPunctuation))
	})

	t.Run("delays", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-delay", sdKV("DelaySeconds", "10"))
		e.send(url, "queue delay")
		e.send(url, "timer 5", sdDelay(5))
		out, err := e.c.SendMessage(e.ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("explicit 0")}, sdSet("DelaySeconds", 0))
		require.NoError(t, err)
		require.NotEmpty(t, aws.ToString(out.MessageId))
		require.Equal(t, []string{"explicit 0"}, sdBodies(e.receiveN(url, 10)), "an explicit DelaySeconds=0 overrides the queue delay (4.2)")
		e.clk.Advance(5 * time.Second)
		require.Equal(t, []string{"timer 5"}, sdBodies(e.receiveN(url, 10)), "a message timer overrides the queue delay (4.2)")
		e.clk.Advance(5 * time.Second)
		require.Equal(t, []string{"queue delay"}, sdBodies(e.receiveN(url, 10)))

		f := e.create("sd-delay.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true", "DelaySeconds", "10"))
		_, err = e.c.SendMessage(e.ctx, &sqs.SendMessageInput{QueueUrl: &f, MessageBody: aws.String("zero"), MessageGroupId: aws.String("g")},
			sdSet("DelaySeconds", 0))
		require.NoError(t, err, "FIFO accepts an explicit DelaySeconds=0 (4.4)")
		require.Empty(t, e.receiveN(f, 10), "and the queue delay still applies (4.4)")
		e.clk.Advance(10 * time.Second)
		require.Equal(t, []string{"zero"}, sdBodies(e.receiveN(f, 10)))
	})

	t.Run("fair queue group id", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-fair", nil)
		out := e.send(url, "tenant", sdGroup("tenant-1"))
		require.Nil(t, out.SequenceNumber, "no SequenceNumber on a standard queue (2.4)")
		ms := e.receive(url, &sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
		require.Len(t, ms, 1)
		require.Equal(t, "tenant-1", ms[0].Attributes["MessageGroupId"])
	})
}

func TestSdSendMessageBatch(t *testing.T) {
	t.Parallel()
	entry := func(id, body string) types.SendMessageBatchRequestEntry {
		return types.SendMessageBatchRequestEntry{Id: aws.String(id), MessageBody: aws.String(body)}
	}
	entries := func(n int) []types.SendMessageBatchRequestEntry {
		var es []types.SendMessageBatchRequestEntry
		for i := range n {
			es = append(es, entry(fmt.Sprintf("e%d", i), fmt.Sprintf("body %d", i)))
		}
		return es
	}

	t.Run("success", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-batch", nil)
		attrs := sdAllTypes()
		es := []types.SendMessageBatchRequestEntry{
			entry("plain", "one"),
			{Id: aws.String("with-attrs"), MessageBody: aws.String("two"), MessageAttributes: attrs},
			{Id: aws.String("traced_3"), MessageBody: aws.String("three"), MessageSystemAttributes: map[string]types.MessageSystemAttributeValue{
				"AWSTraceHeader": {DataType: aws.String("String"), StringValue: aws.String(sdTraceHeader)}}},
			{Id: aws.String("delayed"), MessageBody: aws.String("four"), DelaySeconds: 5},
		}
		out, err := e.c.SendMessageBatch(e.ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: es})
		require.NoError(t, err)
		require.Empty(t, out.Failed)
		require.Len(t, out.Successful, 4)
		byID := map[string]types.SendMessageBatchResultEntry{}
		for _, s := range out.Successful {
			byID[*s.Id] = s
			require.NotEmpty(t, aws.ToString(s.MessageId))
			require.Nil(t, s.SequenceNumber)
		}
		require.Equal(t, sdBodyMD5("two"), aws.ToString(byID["with-attrs"].MD5OfMessageBody))
		require.Equal(t, sdAttrMD5(attrs), aws.ToString(byID["with-attrs"].MD5OfMessageAttributes))
		require.Nil(t, byID["plain"].MD5OfMessageAttributes)
		require.Equal(t, "5ae4d5d7636402d80f4eb6d213245a88", aws.ToString(byID["traced_3"].MD5OfMessageSystemAttributes))
		require.Equal(t, "3/0/1", e.counts(url), "the per-entry delay applies")
		ms := e.receive(url, &sqs.ReceiveMessageInput{MaxNumberOfMessages: 10, MessageAttributeNames: []string{"All"}})
		require.ElementsMatch(t, []string{"one", "two", "three"}, sdBodies(ms))
		for _, m := range ms {
			if *m.Body == "two" {
				sdRequireAttrs(t, attrs, m)
				require.Equal(t, *byID["with-attrs"].MessageId, *m.MessageId)
			}
		}
	})

	t.Run("FIFO order and sequence numbers", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-batch.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true"))
		es := entries(10)
		for i := range es {
			es[i].MessageGroupId = aws.String("g")
		}
		out, err := e.c.SendMessageBatch(e.ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: es})
		require.NoError(t, err)
		require.Len(t, out.Successful, 10)
		seq := map[string]*big.Int{}
		for _, s := range out.Successful {
			n, ok := new(big.Int).SetString(aws.ToString(s.SequenceNumber), 10)
			require.True(t, ok, "SequenceNumber of %s", *s.Id)
			seq[*s.Id] = n
		}
		for i := 1; i < 10; i++ {
			require.Equal(t, 1, seq[fmt.Sprintf("e%d", i)].Cmp(seq[fmt.Sprintf("e%d", i-1)]), "sequence numbers follow batch order (2.5)")
		}
		var want []string
		for i := range 10 {
			want = append(want, fmt.Sprintf("body %d", i))
		}
		require.Equal(t, want, sdBodies(e.receiveN(url, 10)), "entries are enqueued in batch order (2.5)")
	})

	t.Run("per-entry failures", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-batch-fail", nil)
		es := entries(10)
		es[3].MessageBody = aws.String("bad \x01 character")
		out, err := e.c.SendMessageBatch(e.ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: es})
		require.NoError(t, err, "one invalid body fails its entry only (7.1.1)")
		require.Len(t, out.Successful, 9)
		require.Len(t, out.Failed, 1)
		sdWantFailed(t, out.Failed, "e3", sdBadContents, "")
		require.Equal(t, "9/0/0", e.counts(url))

		small := e.create("sd-batch-1k", sdKV("MaximumMessageSize", "1024"))
		out, err = e.c.SendMessageBatch(e.ctx, &sqs.SendMessageBatchInput{QueueUrl: &small, Entries: []types.SendMessageBatchRequestEntry{
			entry("fits", strings.Repeat("x", 1024)), entry("too_big", strings.Repeat("x", 1025)),
		}})
		require.NoError(t, err)
		require.Len(t, out.Successful, 1)
		require.Equal(t, "fits", aws.ToString(out.Successful[0].Id))
		sdWantFailed(t, out.Failed, "too_big", sdBadParam, "One or more parameters cannot be validated. Reason: Message must be shorter than 1024 bytes.")
	})

	t.Run("whole-request errors", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-batch-bad", nil)
		f := e.create("sd-batch-bad.fifo", sdKV("FifoQueue", "true"))
		grouped := func(es []types.SendMessageBatchRequestEntry) []types.SendMessageBatchRequestEntry {
			for i := range es {
				es[i].MessageGroupId = aws.String("g")
				es[i].MessageDeduplicationId = aws.String(fmt.Sprintf("d%d", i))
			}
			return es
		}
		half := sdMiB / 2
		for _, tc := range []struct {
			what      string
			url       string
			es        []types.SendMessageBatchRequestEntry
			code, msg string
		}{
			{"11 entries", url, entries(11), sdTooManyEntries, "Maximum number of entries per request are 10. You have sent 11."},
			{"20 entries", url, entries(20), sdTooManyEntries, "Maximum number of entries per request are 10. You have sent 20."},
			{"no entries", url, []types.SendMessageBatchRequestEntry{}, sdEmptyBatch, ""},
			{"duplicate ids", url, []types.SendMessageBatchRequestEntry{entry("same", "a"), entry("same", "b")}, sdIDsNotDistinct, ""},
			{"id with space", url, []types.SendMessageBatchRequestEntry{entry("a b", "a")}, sdBadEntryID, sdEntryIDText},
			{"id with dot", url, []types.SendMessageBatchRequestEntry{entry("a.b", "a")}, sdBadEntryID, sdEntryIDText},
			{"81-character id", url, []types.SendMessageBatchRequestEntry{entry(strings.Repeat("i", 81), "a")}, sdBadEntryID, sdEntryIDText},
			{"empty id", url, []types.SendMessageBatchRequestEntry{entry("", "a")}, sdBadEntryID, sdEntryIDText},
			{"over 1 MiB in total", url, []types.SendMessageBatchRequestEntry{entry("a", strings.Repeat("x", half)), entry("b", strings.Repeat("x", half+1))},
				sdBatchTooLong, "Batch requests cannot be longer than 1048576 bytes. You have sent 1048577 bytes."},
			{"FIFO entry without group id (2.2)", f, func() []types.SendMessageBatchRequestEntry {
				es := grouped(entries(3))
				es[1].MessageGroupId = nil
				return es
			}(), sdBadParam, sdNoGroupText},
			{"FIFO entry without dedup id (3.1)", f, func() []types.SendMessageBatchRequestEntry {
				es := grouped(entries(3))
				es[2].MessageDeduplicationId = nil
				return es
			}(), sdBadParam, sdNoDedupText},
		} {
			_, err := e.c.SendMessageBatch(e.ctx, &sqs.SendMessageBatchInput{QueueUrl: &tc.url, Entries: tc.es})
			t.Logf("%s", tc.what)
			sdWantErr(t, err, tc.code, tc.msg)
		}
		require.Equal(t, "0/0/0", e.counts(url), "a rejected request enqueues nothing")
		require.Equal(t, "0/0/0", e.counts(f), "a rejected FIFO request enqueues nothing (2.2, 3.1)")

		out, err := e.c.SendMessageBatch(e.ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: []types.SendMessageBatchRequestEntry{
			entry("a", strings.Repeat("x", half)), entry(strings.Repeat("b", 80), strings.Repeat("x", half)),
		}})
		require.NoError(t, err, "exactly 1 MiB in total, and an 80-character id")
		require.Len(t, out.Successful, 2)
	})
}

func TestSdReceiveMessage(t *testing.T) {
	t.Parallel()

	t.Run("system attributes", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-sys.fifo", sdKV("FifoQueue", "true"))
		sent := e.send(url, "hello", sdGroup("g1"), sdDedup("dedup-1")) // AWSTraceHeader: its own subtest
		e.clk.Advance(time.Second)
		firstReceive := e.clk.Now()
		receives := 0
		recv := func(in *sqs.ReceiveMessageInput) types.Message {
			t.Helper()
			ms := e.receive(url, in)
			require.Len(t, ms, 1)
			receives++
			require.NoError(t, e.changeVisibility(url, *ms[0].ReceiptHandle, 0), "release the group for the next receive")
			e.clk.Advance(time.Second)
			return ms[0]
		}
		want := func() map[string]string {
			return map[string]string{
				"SentTimestamp":                    sdMillis(sdStart),
				"ApproximateReceiveCount":          strconv.Itoa(receives),
				"ApproximateFirstReceiveTimestamp": sdMillis(firstReceive),
				"SequenceNumber":                   aws.ToString(sent.SequenceNumber),
				"MessageDeduplicationId":           "dedup-1",
				"MessageGroupId":                   "g1",
			}
		}
		m := recv(&sqs.ReceiveMessageInput{})
		require.Empty(t, m.Attributes, "no system attributes unless asked for (1.4.2)")
		all := []types.MessageSystemAttributeName{
			types.MessageSystemAttributeNameSenderId, types.MessageSystemAttributeNameSentTimestamp,
			types.MessageSystemAttributeNameApproximateReceiveCount, types.MessageSystemAttributeNameApproximateFirstReceiveTimestamp,
			types.MessageSystemAttributeNameSequenceNumber, types.MessageSystemAttributeNameMessageDeduplicationId,
			types.MessageSystemAttributeNameMessageGroupId,
		}
		for _, name := range all {
			m := recv(&sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{name}})
			require.Equal(t, []string{string(name)}, slices.Collect(maps.Keys(m.Attributes)), "asked for %s", name)
			if name == types.MessageSystemAttributeNameSenderId {
				require.NotEmpty(t, m.Attributes[string(name)])
				continue
			}
			require.Equal(t, want()[string(name)], m.Attributes[string(name)], "%s", name)
		}
		var names []string
		for _, n := range all {
			names = append(names, string(n))
		}
		m = recv(&sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
		require.ElementsMatch(t, names, slices.Collect(maps.Keys(m.Attributes)), "All")
		for k, v := range want() {
			require.Equal(t, v, m.Attributes[k], "All: %s", k)
		}
		//lint:ignore SA1019 the deprecated AttributeNames is still on the wire, and SDKs still send it
		m = recv(&sqs.ReceiveMessageInput{AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
		require.ElementsMatch(t, names, slices.Collect(maps.Keys(m.Attributes)), "All through the deprecated AttributeNames")
		//lint:ignore SA1019 as above
		m = recv(&sqs.ReceiveMessageInput{AttributeNames: []types.QueueAttributeName{"SentTimestamp", "MessageGroupId"}})
		require.Equal(t, map[string]string{"SentTimestamp": sdMillis(sdStart), "MessageGroupId": "g1"}, m.Attributes)
		m = recv(&sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{"ApproximateReceiveCount", "SequenceNumber"}})
		require.Equal(t, map[string]string{"ApproximateReceiveCount": strconv.Itoa(receives), "SequenceNumber": *sent.SequenceNumber}, m.Attributes)

		std := e.create("sd-sys", nil)
		e.send(std, "plain")
		ms := e.receive(std, &sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
		require.Len(t, ms, 1)
		require.ElementsMatch(t, []string{"SenderId", "SentTimestamp", "ApproximateReceiveCount", "ApproximateFirstReceiveTimestamp"},
			slices.Collect(maps.Keys(ms[0].Attributes)), "All on a standard queue, for a message sent without group id or trace header")
		require.Equal(t, "1", ms[0].Attributes["ApproximateReceiveCount"])
		require.Equal(t, sdMillis(e.clk.Now()), ms[0].Attributes["ApproximateFirstReceiveTimestamp"])
	})

	t.Run("AWSTraceHeader", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		dlq := e.create("sd-trace-dlq", nil)
		url := e.create("sd-trace", sdKV("VisibilityTimeout", "0",
			"RedrivePolicy", `{"deadLetterTargetArn":"`+sdArn("sd-trace-dlq")+`","maxReceiveCount":2}`))
		e.send(url, "traced", sdTrace(sdTraceHeader))
		ms := e.receive(url, &sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{"AWSTraceHeader"}})
		require.Len(t, ms, 1)
		require.Equal(t, map[string]string{"AWSTraceHeader": sdTraceHeader}, ms[0].Attributes, "asked for by name (1.4.2)")
		ms = e.receive(url, &sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{"All"}})
		require.Len(t, ms, 1)
		require.Equal(t, sdTraceHeader, ms[0].Attributes["AWSTraceHeader"], "in All (1.4.2)")
		require.Empty(t, e.receiveN(url, 1), "moved to the dead-letter queue")
		ms = e.receive(dlq, &sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{"All"}})
		require.Len(t, ms, 1)
		require.Equal(t, sdTraceHeader, ms[0].Attributes["AWSTraceHeader"], "kept in the dead-letter queue (6.4)")
	})

	t.Run("message attribute names", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-attr-names", sdKV("VisibilityTimeout", "0"))
		sent := map[string]types.MessageAttributeValue{
			"a.x": sdStr("1"), "a.y": sdTyped("Number", "2"), "b": sdBin("Binary", []byte{3}), "c": sdTyped("String.c", "4"), "ab": sdStr("5"),
		}
		e.send(url, "attrs", sdAttrs(sent))
		pick := func(names ...string) map[string]types.MessageAttributeValue {
			out := map[string]types.MessageAttributeValue{}
			for _, n := range names {
				out[n] = sent[n]
			}
			return out
		}
		for _, tc := range []struct {
			names []string
			want  map[string]types.MessageAttributeValue
		}{
			{nil, pick()},
			{[]string{"b"}, pick("b")},
			{[]string{"b", "c"}, pick("b", "c")},
			{[]string{"All"}, sent},
			{[]string{".*"}, sent},
			{[]string{"a.*"}, pick("a.x", "a.y")},
			{[]string{"a.*", "c"}, pick("a.x", "a.y", "c")},
			{[]string{"zzz"}, pick()},
			{[]string{"B"}, pick()}, // names are case-sensitive
		} {
			ms := e.receive(url, &sqs.ReceiveMessageInput{MessageAttributeNames: tc.names})
			require.Len(t, ms, 1, "visibility timeout 0: the message is always there")
			t.Logf("MessageAttributeNames %q", tc.names)
			sdRequireAttrs(t, tc.want, ms[0])
		}
	})

	t.Run("parameter validation", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-recv-bad", nil)
		f := e.create("sd-recv-bad.fifo", sdKV("FifoQueue", "true"))
		for _, tc := range []struct {
			url       string
			in        sqs.ReceiveMessageInput
			opts      []func(*sqs.Options)
			code, msg string
		}{
			{url, sqs.ReceiveMessageInput{MaxNumberOfMessages: 11}, nil, sdBadParam,
				"Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided."},
			{url, sqs.ReceiveMessageInput{MaxNumberOfMessages: -1}, nil, sdBadParam,
				"Value -1 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided."},
			{url, sqs.ReceiveMessageInput{}, []func(*sqs.Options){sdSet("MaxNumberOfMessages", 0)}, sdBadParam,
				"Value 0 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided."},
			{url, sqs.ReceiveMessageInput{WaitTimeSeconds: 21}, nil, sdBadParam,
				"Value 21 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided."},
			{url, sqs.ReceiveMessageInput{WaitTimeSeconds: -1}, nil, sdBadParam,
				"Value -1 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided."},
			{url, sqs.ReceiveMessageInput{VisibilityTimeout: 43201}, nil, sdBadParam, ""},
			{url, sqs.ReceiveMessageInput{VisibilityTimeout: -1}, nil, sdBadParam, ""},
			{f, sqs.ReceiveMessageInput{ReceiveRequestAttemptId: aws.String("a b")}, nil, sdBadParam, ""},
			{f, sqs.ReceiveMessageInput{ReceiveRequestAttemptId: aws.String(strings.Repeat("r", 129))}, nil, sdBadParam, ""},
			{f, sqs.ReceiveMessageInput{ReceiveRequestAttemptId: aws.String("")}, nil, sdBadParam, ""},
		} {
			in := tc.in
			in.QueueUrl = &tc.url
			_, err := e.c.ReceiveMessage(e.ctx, &in, tc.opts...)
			t.Logf("%+v", tc.in)
			sdWantErr(t, err, tc.code, tc.msg)
		}
	})

	t.Run("MaxNumberOfMessages", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-max", nil)
		for i := range 12 {
			e.send(url, strconv.Itoa(i))
		}
		require.Len(t, e.receive(url, &sqs.ReceiveMessageInput{}), 1, "the default is 1 (1.5.4)")
		require.Len(t, e.receiveN(url, 10), 10)
		require.Len(t, e.receiveN(url, 10), 1)
		require.Empty(t, e.receiveN(url, 10))
	})

	t.Run("VisibilityTimeout", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-recv-vt", nil)
		e.send(url, "m")
		first := e.receive(url, &sqs.ReceiveMessageInput{VisibilityTimeout: 10})
		require.Len(t, first, 1)
		e.clk.Advance(10*time.Second - time.Millisecond)
		require.Empty(t, e.receiveN(url, 10), "hidden for the 10 s of the receive's timeout (1.2.2)")
		e.clk.Advance(time.Millisecond)
		again := e.receive(url, &sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{"ApproximateReceiveCount"}})
		require.Len(t, again, 1, "visible after 10 s, not the queue's 30 s")
		require.Equal(t, "2", again[0].Attributes["ApproximateReceiveCount"])
		require.NotEqual(t, *first[0].ReceiptHandle, *again[0].ReceiptHandle, "each receive has its own receipt handle (1.3.1)")
		e.clk.Advance(sdDefaultVT - time.Millisecond)
		require.Empty(t, e.receiveN(url, 10), "the next receive without override uses the queue's 30 s")
		e.clk.Advance(time.Millisecond)

		// An explicit VisibilityTimeout=0 leaves the message visible (1.2.7).
		zero := e.receive(url, &sqs.ReceiveMessageInput{}, sdSet("VisibilityTimeout", 0))
		require.Len(t, zero, 1)
		require.Equal(t, "m", *e.receiveOne(url).Body, "visible at once after a receive with VisibilityTimeout 0")
	})

	t.Run("ReceiveRequestAttemptId", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-attempt.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true"))
		for _, b := range []string{"a1", "a2", "a3"} {
			e.send(url, b, sdGroup("g"))
		}
		e.send(url, "other", sdGroup("h"))
		in := func(id string) *sqs.ReceiveMessageInput {
			return &sqs.ReceiveMessageInput{MaxNumberOfMessages: 3, ReceiveRequestAttemptId: aws.String(id)}
		}
		first := e.receive(url, in("attempt-1"))
		require.Equal(t, []string{"a1", "a2", "a3"}, sdBodies(first))
		e.clk.Advance(20 * time.Second)
		replay := e.receive(url, in("attempt-1"))
		require.Equal(t, sdIDs(first), sdIDs(replay), "the same messages (2.15.2)")
		for i := range first {
			require.Equal(t, *first[i].ReceiptHandle, *replay[i].ReceiptHandle, "the same receipt handles (2.15.2)")
		}
		// The replay reset the visibility timeout: 30 s from the replay, not from the first receive.
		e.clk.Advance(15 * time.Second)
		require.Equal(t, []string{"other"}, sdBodies(e.receiveN(url, 10)), "group g still in flight 35 s after the first receive")
		e.clk.Advance(15 * time.Second)
		next := e.receiveN(url, 3)
		require.Equal(t, []string{"a1", "a2", "a3"}, sdBodies(next), "visible 30 s after the replay")

		// After one of the messages is deleted, the attempt must not return the same set again (2.15.3).
		second := e.receive(url, in("attempt-2"))
		require.Empty(t, second, "group g is in flight under the last receive")
		require.NoError(t, e.deleteMessage(url, *next[0].ReceiptHandle))
		third := e.receive(url, in("attempt-3"))
		require.Empty(t, third)
		out, err := e.c.ReceiveMessage(e.ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 3,
			ReceiveRequestAttemptId: aws.String("attempt-1")})
		if err == nil {
			require.NotEqual(t, sdIDs(first), sdIDs(out.Messages), "attempt-1 replayed after one of its messages was deleted")
		}
	})

	t.Run("long polling", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-long", nil)
		poll := func(in *sqs.ReceiveMessageInput, opts ...func(*sqs.Options)) <-chan sdReceived {
			in.QueueUrl = &url
			return sdAsync(func() sdReceived {
				out, err := e.c.ReceiveMessage(e.ctx, in, opts...)
				return sdReceived{out, err}
			})
		}

		// An empty long poll ends when its wait ends, on the server's clock.
		timers := e.clk.Timers()
		done := poll(&sqs.ReceiveMessageInput{WaitTimeSeconds: 5})
		e.waitTimers(timers + 1)
		select {
		case r := <-done:
			require.FailNow(t, "the long poll returned before its wait", "%+v", r)
		default:
		}
		e.clk.Advance(5 * time.Second)
		r := sdAwait(t, done, "empty long poll")
		require.NoError(t, r.err)
		require.Empty(t, r.out.Messages)

		// A send wakes it at once (1.5.2).
		timers = e.clk.Timers()
		done = poll(&sqs.ReceiveMessageInput{WaitTimeSeconds: 20, MaxNumberOfMessages: 10})
		e.waitTimers(timers + 1)
		e.send(url, "wake up")
		r = sdAwait(t, done, "long poll woken by a send")
		require.NoError(t, r.err)
		require.Equal(t, []string{"wake up"}, sdBodies(r.out.Messages))

		// The queue's ReceiveMessageWaitTimeSeconds applies when WaitTimeSeconds is omitted (1.5.1) ...
		require.NoError(t, e.setAttrs(url, sdKV("ReceiveMessageWaitTimeSeconds", "5")))
		timers = e.clk.Timers()
		done = poll(&sqs.ReceiveMessageInput{})
		e.waitTimers(timers + 1)
		e.clk.Advance(5 * time.Second)
		r = sdAwait(t, done, "long poll by the queue's wait time")
		require.NoError(t, r.err)
		require.Empty(t, r.out.Messages)
		// ... and an explicit WaitTimeSeconds=0 is a short poll.
		r = sdAwait(t, poll(&sqs.ReceiveMessageInput{}, sdSet("WaitTimeSeconds", 0)), "short poll with WaitTimeSeconds 0")
		require.NoError(t, r.err)
		require.Empty(t, r.out.Messages)
	})

	t.Run("FIFO groups", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-groups.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true"))
		for _, b := range []string{"g1-m1", "g2-m1", "g1-m2", "g1-m3"} {
			e.send(url, b, sdGroup(b[:2]))
		}
		got := sdBodies(e.receiveN(url, 10))
		// Per-group order and contiguity; no order between groups (2.6, 2.12).
		require.ElementsMatch(t, []string{"g1-m1", "g1-m2", "g1-m3", "g2-m1"}, got)
		i := slices.Index(got, "g1-m1")
		require.Equal(t, []string{"g1-m1", "g1-m2", "g1-m3"}, got[i:i+3], "group g1 in order and together in %v", got)

		// A group with a message in flight gives nothing; a new message does not unblock it (2.8, 2.10).
		e.send(url, "g1-m4", sdGroup("g1"))
		e.send(url, "g3-m1", sdGroup("g3"))
		require.Equal(t, []string{"g3-m1"}, sdBodies(e.receiveN(url, 10)))
		e.clk.Advance(sdDefaultVT)
		// Redelivered in the original order, each with count 2, before the newer message (2.11).
		ms := e.receive(url, &sqs.ReceiveMessageInput{MaxNumberOfMessages: 10,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{"ApproximateReceiveCount", "MessageGroupId"}})
		var g1 []string
		for _, m := range ms {
			if m.Attributes["MessageGroupId"] == "g1" {
				g1 = append(g1, *m.Body+"/"+m.Attributes["ApproximateReceiveCount"])
			}
		}
		require.Equal(t, []string{"g1-m1/2", "g1-m2/2", "g1-m3/2", "g1-m4/1"}, g1)
	})

	t.Run("ReceiveRequestAttemptId after 5 minutes", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-attempt-old.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true"))
		e.send(url, "m", sdGroup("g"))
		in := &sqs.ReceiveMessageInput{ReceiveRequestAttemptId: aws.String("old-attempt")}
		first := e.receive(url, in)
		require.Len(t, first, 1)
		e.clk.Advance(5*time.Minute + time.Second)
		out, err := e.c.ReceiveMessage(e.ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, ReceiveRequestAttemptId: aws.String("old-attempt")})
		if err == nil {
			for _, m := range out.Messages {
				require.NotEqual(t, *first[0].ReceiptHandle, *m.ReceiptHandle, "no replay after 5 minutes (2.15.3)")
			}
		}
	})

	t.Run("FIFO dead-letter queue", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		dlq := e.create("sd-fdlq.fifo", sdKV("FifoQueue", "true"))
		url := e.create("sd-fsrc.fifo", sdKV("FifoQueue", "true",
			"RedrivePolicy", `{"deadLetterTargetArn":"`+sdArn("sd-fdlq.fifo")+`","maxReceiveCount":1}`))
		head := e.send(url, "head", sdGroup("g"), sdDedup("dedup-head"))
		e.send(url, "next", sdGroup("g"), sdDedup("dedup-next"))
		m := e.receiveOne(url)
		require.Equal(t, "head", *m.Body)
		require.NoError(t, e.changeVisibility(url, *m.ReceiptHandle, 0))
		got := sdBodies(e.receiveN(url, 10))
		if len(got) == 0 {
			got = sdBodies(e.receiveN(url, 10))
		}
		require.Equal(t, []string{"next"}, got, "the group unblocks once its head moved to the dead-letter queue (6.5)")
		ms := e.receive(dlq, &sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{"All"}})
		require.Len(t, ms, 1)
		require.Equal(t, *head.MessageId, *ms[0].MessageId)
		require.Equal(t, *head.MessageId, ms[0].Attributes["MessageDeduplicationId"], "the dedup id becomes the MessageId (3.11)")
		require.Equal(t, "g", ms[0].Attributes["MessageGroupId"])
		require.Equal(t, sdArn("sd-fsrc.fifo"), ms[0].Attributes["DeadLetterQueueSourceArn"])
	})

	t.Run("dead-letter queue attributes", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		dlq := e.create("sd-rdlq", nil)
		url := e.create("sd-rsrc", sdKV("VisibilityTimeout", "0",
			"RedrivePolicy", `{"deadLetterTargetArn":"`+sdArn("sd-rdlq")+`","maxReceiveCount":1}`))
		sent := e.send(url, "poison", sdWith("k", sdStr("v")))
		require.Equal(t, "poison", *e.receiveOne(url).Body)
		require.Empty(t, e.receiveN(url, 10), "the second receive moves the message to the dead-letter queue (6.3)")
		ms := e.receive(dlq, &sqs.ReceiveMessageInput{MessageAttributeNames: []string{"All"},
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
		require.Len(t, ms, 1)
		require.Equal(t, *sent.MessageId, *ms[0].MessageId, "the same MessageId (6.4)")
		require.Equal(t, sdArn("sd-rsrc"), ms[0].Attributes["DeadLetterQueueSourceArn"])
		require.Equal(t, "2", ms[0].Attributes["ApproximateReceiveCount"], "the receive count carries over (1.4.3)")
		sdRequireAttrs(t, map[string]types.MessageAttributeValue{"k": sdStr("v")}, ms[0])
		require.NoError(t, e.changeVisibility(dlq, *ms[0].ReceiptHandle, 0))
		ms = e.receive(dlq, &sqs.ReceiveMessageInput{MessageSystemAttributeNames: []types.MessageSystemAttributeName{"DeadLetterQueueSourceArn"}})
		require.Len(t, ms, 1)
		require.Equal(t, map[string]string{"DeadLetterQueueSourceArn": sdArn("sd-rsrc")}, ms[0].Attributes, "asked for by name")
	})
}

func TestSdDeleteMessage(t *testing.T) {
	t.Parallel()

	t.Run("standard", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-delete", nil)
		e.send(url, "m")
		m := e.receiveOne(url)
		require.NoError(t, e.deleteMessage(url, *m.ReceiptHandle))
		require.Equal(t, "0/0/0", e.counts(url))
		e.clk.Advance(sdDefaultVT)
		require.Empty(t, e.receiveN(url, 10), "a deleted message does not come back")
		for range 2 {
			require.NoError(t, e.deleteMessage(url, *m.ReceiptHandle), "deleting the same handle again succeeds (1.3.4)")
		}

		// An expired handle still deletes the message on a standard queue (1.3.4).
		e.send(url, "late")
		late := e.receive(url, &sqs.ReceiveMessageInput{VisibilityTimeout: 1})
		require.Len(t, late, 1)
		e.clk.Advance(2 * time.Second)
		require.NoError(t, e.deleteMessage(url, *late[0].ReceiptHandle))
		require.Empty(t, e.receiveN(url, 10))
		require.Equal(t, "0/0/0", e.counts(url))

		// A malformed handle (1.3.4).
		for _, handle := range []string{"garbage", "not-a-handle"} {
			err := e.deleteMessage(url, handle)
			t.Logf("handle %q", handle)
			sdWantErr(t, err, sdBadHandle, fmt.Sprintf("The input receipt handle %q is not a valid receipt handle.", handle))
		}
	})

	t.Run("FIFO", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-delete.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true"))
		e.send(url, "expires", sdGroup("g"))
		m := e.receive(url, &sqs.ReceiveMessageInput{VisibilityTimeout: 10})
		require.Len(t, m, 1)
		e.clk.Advance(11 * time.Second)
		err := e.deleteMessage(url, *m[0].ReceiptHandle)
		sdWantErr(t, err, sdBadParam, fmt.Sprintf("Value %s for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.", *m[0].ReceiptHandle))
		require.Equal(t, "1/0/0", e.counts(url), "the message stays")

		// A window extended with ChangeMessageVisibility keeps the handle valid (1.3.6).
		m = e.receive(url, &sqs.ReceiveMessageInput{VisibilityTimeout: 10})
		require.Len(t, m, 1)
		require.NoError(t, e.changeVisibility(url, *m[0].ReceiptHandle, 50))
		e.clk.Advance(20 * time.Second)
		require.NoError(t, e.deleteMessage(url, *m[0].ReceiptHandle))
		require.Equal(t, "0/0/0", e.counts(url))

		err = e.deleteMessage(url, "garbage")
		sdWantErr(t, err, sdBadHandle, `The input receipt handle "garbage" is not a valid receipt handle.`)
	})
}

func TestSdDeleteMessageBatch(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	url := e.create("sd-delbatch", nil)
	for i := range 3 {
		e.send(url, strconv.Itoa(i))
	}
	ms := e.receiveN(url, 10)
	require.Len(t, ms, 3)
	del := func(url string, es []types.DeleteMessageBatchRequestEntry) (*sqs.DeleteMessageBatchOutput, error) {
		return e.c.DeleteMessageBatch(e.ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &url, Entries: es})
	}
	entry := func(id, handle string) types.DeleteMessageBatchRequestEntry {
		return types.DeleteMessageBatchRequestEntry{Id: aws.String(id), ReceiptHandle: aws.String(handle)}
	}
	out, err := del(url, []types.DeleteMessageBatchRequestEntry{
		entry("m0", *ms[0].ReceiptHandle), entry("m1", *ms[1].ReceiptHandle), entry("bad", "garbage"),
	})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"m0", "m1"}, func() []string {
		var ids []string
		for _, s := range out.Successful {
			ids = append(ids, *s.Id)
		}
		return ids
	}())
	require.Len(t, out.Failed, 1)
	sdWantFailed(t, out.Failed, "bad", sdBadHandle, "")
	require.Equal(t, "0/1/0", e.counts(url))

	many := func(n int) []types.DeleteMessageBatchRequestEntry {
		var es []types.DeleteMessageBatchRequestEntry
		for i := range n {
			es = append(es, entry(fmt.Sprintf("e%d", i), *ms[2].ReceiptHandle))
		}
		return es
	}
	for _, tc := range []struct {
		what      string
		es        []types.DeleteMessageBatchRequestEntry
		code, msg string
	}{
		{"11 entries", many(11), sdTooManyEntries, "Maximum number of entries per request are 10. You have sent 11."},
		{"no entries", []types.DeleteMessageBatchRequestEntry{}, sdEmptyBatch, ""},
		{"duplicate ids", []types.DeleteMessageBatchRequestEntry{entry("x", *ms[2].ReceiptHandle), entry("x", "garbage")}, sdIDsNotDistinct, ""},
		{"bad id", []types.DeleteMessageBatchRequestEntry{entry("x y", *ms[2].ReceiptHandle)}, sdBadEntryID, sdEntryIDText},
	} {
		_, err := del(url, tc.es)
		t.Logf("%s", tc.what)
		sdWantErr(t, err, tc.code, tc.msg)
	}
	require.Equal(t, "0/1/0", e.counts(url), "rejected requests deleted nothing")
	out, err = del(url, many(10))
	require.NoError(t, err, "ten entries with the same handle")
	require.Len(t, out.Successful, 10)
	require.Equal(t, "0/0/0", e.counts(url))

	// FIFO: an expired handle fails its entry (1.3.5).
	f := e.create("sd-delbatch.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true"))
	e.send(f, "a", sdGroup("g1"))
	first := e.receive(f, &sqs.ReceiveMessageInput{VisibilityTimeout: 5})
	require.Len(t, first, 1)
	e.clk.Advance(6 * time.Second)
	e.send(f, "b", sdGroup("g2"))
	second := e.receiveN(f, 10)
	require.ElementsMatch(t, []string{"a", "b"}, sdBodies(second))
	b := second[slices.IndexFunc(second, func(m types.Message) bool { return *m.Body == "b" })]
	out, err = del(f, []types.DeleteMessageBatchRequestEntry{entry("old", *first[0].ReceiptHandle), entry("new", *b.ReceiptHandle)})
	require.NoError(t, err)
	require.Len(t, out.Successful, 1)
	require.Equal(t, "new", *out.Successful[0].Id)
	sdWantFailed(t, out.Failed, "old", sdBadParam, "…The receipt handle has expired.")
}

func TestSdChangeMessageVisibility(t *testing.T) {
	t.Parallel()

	t.Run("timing", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-cmv", sdKV("VisibilityTimeout", "60"))
		e.send(url, "m")
		m := e.receiveOne(url)
		e.clk.Advance(15 * time.Second)
		require.NoError(t, e.changeVisibility(url, *m.ReceiptHandle, 10))
		e.clk.Advance(10*time.Second - time.Millisecond)
		require.Empty(t, e.receiveN(url, 1), "the new timeout counts from the call (1.2.4)")
		e.clk.Advance(time.Millisecond)
		m = e.receiveOne(url)

		// 0 makes it visible at once; the next receive takes it, the one after finds nothing (1.2.7).
		require.NoError(t, e.changeVisibility(url, *m.ReceiptHandle, 0))
		again := e.receiveOne(url)
		require.Equal(t, *m.MessageId, *again.MessageId)
		require.Empty(t, e.receiveN(url, 1))

		// A change applies to its receipt only (1.2.6).
		require.NoError(t, e.changeVisibility(url, *again.ReceiptHandle, 300))
		e.clk.Advance(300 * time.Second)
		third := e.receiveOne(url)
		e.clk.Advance(60*time.Second - time.Millisecond)
		require.Empty(t, e.receiveN(url, 1), "the queue's 60 s again, not 300 s")
		e.clk.Advance(time.Millisecond)
		fourth := e.receiveOne(url)
		require.Equal(t, *third.MessageId, *fourth.MessageId)

		// An old handle still acts on a standard queue: its ChangeMessageVisibility(0) shows a message that a
		// later receive hid (1.3.4).
		e.clk.Advance(60 * time.Second)
		old := e.receive(url, &sqs.ReceiveMessageInput{VisibilityTimeout: 5})
		require.Len(t, old, 1)
		e.clk.Advance(6 * time.Second)
		newer := e.receive(url, &sqs.ReceiveMessageInput{VisibilityTimeout: 300})
		require.Len(t, newer, 1)
		require.NoError(t, e.changeVisibility(url, *old[0].ReceiptHandle, 0))
		fourth = e.receiveOne(url)
		require.Equal(t, *newer[0].MessageId, *fourth.MessageId)

		// A standard queue's expired handle: success, and the now-visible message is not hidden again (1.3.4).
		e.clk.Advance(60 * time.Second)
		require.NoError(t, e.changeVisibility(url, *fourth.ReceiptHandle, 600))
		require.Len(t, e.receiveN(url, 1), 1, "the call on the expired handle did not re-hide the message")
	})

	t.Run("12 hour cap", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-cap", nil)
		e.send(url, "m")
		m := e.receiveOne(url)
		e.clk.Advance(time.Second)
		err := e.changeVisibility(url, *m.ReceiptHandle, 43200)
		sdWantErr(t, err, sdBadParam, "") // beyond 12 h from the receive: an error, no clamping (1.2.5)
		require.NoError(t, e.changeVisibility(url, *m.ReceiptHandle, 43199))
		e.clk.Advance(10 * time.Hour)
		err = e.changeVisibility(url, *m.ReceiptHandle, 7200)
		sdWantErr(t, err, sdBadParam, "") // extending does not reset the cap
		require.NoError(t, e.changeVisibility(url, *m.ReceiptHandle, 7199))
		e.clk.Advance(7199*time.Second - time.Millisecond)
		require.Empty(t, e.receiveN(url, 1), "the last accepted change holds")
		e.clk.Advance(time.Millisecond)
		require.Len(t, e.receiveN(url, 1), 1)
	})

	t.Run("errors", func(t *testing.T) {
		t.Parallel()
		e := sdSetup(t)
		url := e.create("sd-cmv-bad", nil)
		e.send(url, "m")
		m := e.receiveOne(url)
		sdWantErr(t, e.changeVisibility(url, *m.ReceiptHandle, 43201), sdBadParam, "")
		sdWantErr(t, e.changeVisibility(url, *m.ReceiptHandle, -1), sdBadParam, "")
		sdWantErr(t, e.changeVisibility(url, "garbage", 10), sdBadHandle, `The input receipt handle "garbage" is not a valid receipt handle.`)
		require.NoError(t, e.deleteMessage(url, *m.ReceiptHandle))
		sdWantErr(t, e.changeVisibility(url, *m.ReceiptHandle, 10), sdBadParam,
			fmt.Sprintf("Value %s for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change.", *m.ReceiptHandle))

		// FIFO, expired handle: like a FIFO delete (1.3.7, recommended).
		f := e.create("sd-cmv-bad.fifo", sdKV("FifoQueue", "true", "ContentBasedDeduplication", "true"))
		e.send(f, "m", sdGroup("g"))
		fm := e.receive(f, &sqs.ReceiveMessageInput{VisibilityTimeout: 5})
		require.Len(t, fm, 1)
		e.clk.Advance(6 * time.Second)
		sdWantErr(t, e.changeVisibility(f, *fm[0].ReceiptHandle, 10), sdBadParam, "…The receipt handle has expired.")
	})
}

func TestSdChangeMessageVisibilityBatch(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	url := e.create("sd-cmvb", nil)
	for i := range 3 {
		e.send(url, strconv.Itoa(i))
	}
	ms := e.receiveN(url, 10)
	require.Len(t, ms, 3)
	change := func(es []types.ChangeMessageVisibilityBatchRequestEntry) (*sqs.ChangeMessageVisibilityBatchOutput, error) {
		return e.c.ChangeMessageVisibilityBatch(e.ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &url, Entries: es})
	}
	entry := func(id, handle string, vt int32) types.ChangeMessageVisibilityBatchRequestEntry {
		return types.ChangeMessageVisibilityBatchRequestEntry{Id: aws.String(id), ReceiptHandle: aws.String(handle), VisibilityTimeout: vt}
	}
	require.NoError(t, e.deleteMessage(url, *ms[2].ReceiptHandle))
	out, err := change([]types.ChangeMessageVisibilityBatchRequestEntry{
		entry("now", *ms[0].ReceiptHandle, 0),
		entry("later", *ms[1].ReceiptHandle, 100),
		entry("garbage", "garbage", 10),
		entry("deleted", *ms[2].ReceiptHandle, 10),
	})
	require.NoError(t, err)
	var ok []string
	for _, s := range out.Successful {
		ok = append(ok, *s.Id)
	}
	require.ElementsMatch(t, []string{"now", "later"}, ok)
	require.Len(t, out.Failed, 2)
	sdWantFailed(t, out.Failed, "garbage", sdBadHandle, "")
	sdWantFailed(t, out.Failed, "deleted", sdBadParam, "…Message does not exist or is not available for visibility timeout change.")

	require.Equal(t, []string{*ms[0].MessageId}, sdIDs(e.receive(url, &sqs.ReceiveMessageInput{MaxNumberOfMessages: 10, VisibilityTimeout: 200})),
		"VisibilityTimeout 0 made the first visible")
	e.clk.Advance(100*time.Second - time.Millisecond)
	require.Empty(t, e.receiveN(url, 10), "the second is hidden for 100 s from the call; the first is in flight again")
	e.clk.Advance(time.Millisecond)
	require.Contains(t, sdIDs(e.receiveN(url, 10)), *ms[1].MessageId)

	many := func(n int) []types.ChangeMessageVisibilityBatchRequestEntry {
		var es []types.ChangeMessageVisibilityBatchRequestEntry
		for i := range n {
			es = append(es, entry(fmt.Sprintf("e%d", i), *ms[0].ReceiptHandle, 5))
		}
		return es
	}
	for _, tc := range []struct {
		what      string
		es        []types.ChangeMessageVisibilityBatchRequestEntry
		code, msg string
	}{
		{"11 entries", many(11), sdTooManyEntries, "Maximum number of entries per request are 10. You have sent 11."},
		{"no entries", []types.ChangeMessageVisibilityBatchRequestEntry{}, sdEmptyBatch, ""},
		{"duplicate ids", []types.ChangeMessageVisibilityBatchRequestEntry{entry("x", *ms[0].ReceiptHandle, 1), entry("x", *ms[1].ReceiptHandle, 1)}, sdIDsNotDistinct, ""},
		{"bad id", []types.ChangeMessageVisibilityBatchRequestEntry{entry(strings.Repeat("i", 81), *ms[0].ReceiptHandle, 1)}, sdBadEntryID, sdEntryIDText},
	} {
		_, err := change(tc.es)
		t.Logf("%s", tc.what)
		sdWantErr(t, err, tc.code, tc.msg)
	}
}

func TestSdQueueTags(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	url := e.create("sd-tags", nil)
	list := func() map[string]string {
		t.Helper()
		out, err := e.c.ListQueueTags(e.ctx, &sqs.ListQueueTagsInput{QueueUrl: &url})
		require.NoError(t, err)
		return out.Tags
	}
	require.Empty(t, list())
	_, err := e.c.TagQueue(e.ctx, &sqs.TagQueueInput{QueueUrl: &url, Tags: sdKV("a", "1", "b", "2")})
	require.NoError(t, err)
	require.Equal(t, sdKV("a", "1", "b", "2"), list())
	_, err = e.c.TagQueue(e.ctx, &sqs.TagQueueInput{QueueUrl: &url, Tags: sdKV("b", "3", "c", "4")})
	require.NoError(t, err)
	require.Equal(t, sdKV("a", "1", "b", "3", "c", "4"), list(), "TagQueue adds and overwrites")
	_, err = e.c.UntagQueue(e.ctx, &sqs.UntagQueueInput{QueueUrl: &url, TagKeys: []string{"a", "no-such-key"}})
	require.NoError(t, err)
	require.Equal(t, sdKV("b", "3", "c", "4"), list())
	other := e.create("sd-tags-2", nil)
	out, err := e.c.ListQueueTags(e.ctx, &sqs.ListQueueTagsInput{QueueUrl: &other})
	require.NoError(t, err)
	require.Empty(t, out.Tags, "tags belong to their queue")
}

func TestSdListDeadLetterSourceQueues(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	dlq := e.create("sd-lds-dlq", nil)
	redrive := sdKV("RedrivePolicy", `{"deadLetterTargetArn":"`+sdArn("sd-lds-dlq")+`","maxReceiveCount":3}`)
	s1 := e.create("sd-lds-1", redrive)
	s2 := e.create("sd-lds-2", nil)
	require.NoError(t, e.setAttrs(s2, redrive))
	e.create("sd-lds-unrelated", nil)
	list := func(url string, in *sqs.ListDeadLetterSourceQueuesInput) *sqs.ListDeadLetterSourceQueuesOutput {
		t.Helper()
		in.QueueUrl = &url
		out, err := e.c.ListDeadLetterSourceQueues(e.ctx, in)
		require.NoError(t, err)
		return out
	}
	out := list(dlq, &sqs.ListDeadLetterSourceQueuesInput{})
	require.ElementsMatch(t, []string{s1, s2}, out.QueueUrls)
	require.Nil(t, out.NextToken)
	require.Empty(t, list(s1, &sqs.ListDeadLetterSourceQueuesInput{}).QueueUrls, "a queue that is no dead-letter queue")

	page1 := list(dlq, &sqs.ListDeadLetterSourceQueuesInput{MaxResults: aws.Int32(1)})
	require.Len(t, page1.QueueUrls, 1)
	require.NotNil(t, page1.NextToken)
	page2 := list(dlq, &sqs.ListDeadLetterSourceQueuesInput{MaxResults: aws.Int32(1), NextToken: page1.NextToken})
	require.Len(t, page2.QueueUrls, 1)
	require.Nil(t, page2.NextToken)
	require.ElementsMatch(t, []string{s1, s2}, append(page1.QueueUrls, page2.QueueUrls...))

	require.NoError(t, e.setAttrs(s1, sdKV("RedrivePolicy", "")))
	require.Equal(t, []string{s2}, list(dlq, &sqs.ListDeadLetterSourceQueuesInput{}).QueueUrls, "a removed policy removes the source")

	for _, n := range []int32{0, 1001} {
		_, err := e.c.ListDeadLetterSourceQueues(e.ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: &dlq, MaxResults: aws.Int32(n)})
		t.Logf("MaxResults %d", n)
		sdWantErr(t, err, sdBadParam, "")
	}
}

func TestSdMessageMoveTasks(t *testing.T) {
	// The task runs in a goroutine of its own: synctest.Wait tells when it has moved what it can.
	synctest.Test(t, func(t *testing.T) {
		e := sdSetup(t)
		e.create("sd-mv-dlq", nil)
		src := e.create("sd-mv-src", sdKV("VisibilityTimeout", "0",
			"RedrivePolicy", `{"deadLetterTargetArn":"`+sdArn("sd-mv-dlq")+`","maxReceiveCount":1}`))
		dlq := e.create("sd-mv-dlq", nil)
		dest := e.create("sd-mv-dest", nil)
		e.create("sd-mv-dest.fifo", sdKV("FifoQueue", "true"))
		var original []string
		for i := range 3 {
			original = append(original, *e.send(src, fmt.Sprintf("m%d", i)).MessageId)
		}
		require.Len(t, e.receiveN(src, 10), 3)
		require.Empty(t, e.receiveN(src, 10), "moved to the dead-letter queue")
		require.Equal(t, "3/0/0", e.counts(dlq))

		start := func(in *sqs.StartMessageMoveTaskInput) (*sqs.StartMessageMoveTaskOutput, error) {
			return e.c.StartMessageMoveTask(e.ctx, in)
		}
		tasks := func(max *int32) []types.ListMessageMoveTasksResultEntry {
			t.Helper()
			out, err := e.c.ListMessageMoveTasks(e.ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(sdArn("sd-mv-dlq")), MaxResults: max})
			require.NoError(t, err)
			return out.Results
		}

		// 6.9.1, 6.9.2
		_, err := start(&sqs.StartMessageMoveTaskInput{SourceArn: aws.String(sdArn("sd-mv-src"))})
		sdWantErr(t, err, sdBadParam, "Source queue must be configured as a Dead Letter Queue.")
		_, err = start(&sqs.StartMessageMoveTaskInput{SourceArn: aws.String(sdArn("sd-mv-dlq")), DestinationArn: aws.String(sdArn("sd-mv-nowhere"))})
		sdWantErr(t, err, sdNotFound, "The resource that you specified for the DestinationArn parameter doesn't exist.")
		_, err = start(&sqs.StartMessageMoveTaskInput{SourceArn: aws.String(sdArn("sd-mv-dlq")), DestinationArn: aws.String(sdArn("sd-mv-dest.fifo"))})
		sdWantErr(t, err, sdBadParam, "")
		_, err = start(&sqs.StartMessageMoveTaskInput{SourceArn: aws.String(sdArn("sd-mv-dlq")), MaxNumberOfMessagesPerSecond: aws.Int32(501)})
		sdWantErr(t, err, sdBadParam, "")
		_, err = start(&sqs.StartMessageMoveTaskInput{SourceArn: aws.String(sdArn("sd-mv-nowhere"))})
		sdWantErr(t, err, sdNotFound, "The resource that you specified for the SourceArn parameter doesn't exist.")
		require.Empty(t, tasks(aws.Int32(10)), "rejected starts leave no task")

		// A rate-limited task back to the source: it moves one message and waits a second on the clock.
		startedAt := e.clk.Now()
		running, err := start(&sqs.StartMessageMoveTaskInput{SourceArn: aws.String(sdArn("sd-mv-dlq")), MaxNumberOfMessagesPerSecond: aws.Int32(1)})
		require.NoError(t, err)
		require.NotEmpty(t, aws.ToString(running.TaskHandle))
		synctest.Wait()
		list := tasks(nil)
		require.Len(t, list, 1)
		r := list[0]
		require.Equal(t, "RUNNING", aws.ToString(r.Status))
		require.Equal(t, *running.TaskHandle, aws.ToString(r.TaskHandle), "TaskHandle while RUNNING (6.9.7)")
		require.Equal(t, sdArn("sd-mv-dlq"), aws.ToString(r.SourceArn))
		require.Nil(t, r.DestinationArn, "no destination given")
		require.Equal(t, int32(1), aws.ToInt32(r.MaxNumberOfMessagesPerSecond))
		require.Equal(t, int64(1), r.ApproximateNumberOfMessagesMoved)
		require.Equal(t, int64(3), aws.ToInt64(r.ApproximateNumberOfMessagesToMove), "captured at start")
		require.Equal(t, startedAt.UnixMilli(), r.StartedTimestamp, "StartedTimestamp in epoch milliseconds")

		_, err = start(&sqs.StartMessageMoveTaskInput{SourceArn: aws.String(sdArn("sd-mv-dlq"))})
		sdWantErr(t, err, sdBadParam, "There is already a task running. Only one active task is allowed for a source queue arn at a given time.")

		// 6.9.6
		_, err = e.c.CancelMessageMoveTask(e.ctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: aws.String("garbage")})
		sdWantErr(t, err, sdBadParam, "Value for parameter TaskHandle is invalid.")
		twin := sdSetup(t) // same names, no tasks: a well-formed handle of a task it does not have
		twin.create("sd-mv-dlq", nil)
		twin.create("sd-mv-src", sdKV("RedrivePolicy", `{"deadLetterTargetArn":"`+sdArn("sd-mv-dlq")+`","maxReceiveCount":1}`))
		_, err = twin.c.CancelMessageMoveTask(twin.ctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: running.TaskHandle})
		sdWantErr(t, err, sdNotFound, "Task does not exist.")

		cancelled, err := e.c.CancelMessageMoveTask(e.ctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: running.TaskHandle})
		require.NoError(t, err)
		require.Equal(t, int64(1), cancelled.ApproximateNumberOfMessagesMoved)
		synctest.Wait()
		list = tasks(nil)
		require.Len(t, list, 1)
		require.Contains(t, []string{"CANCELLING", "CANCELLED"}, aws.ToString(list[0].Status))
		require.Nil(t, list[0].TaskHandle, "no TaskHandle once not RUNNING")
		require.Equal(t, "2/0/0", e.counts(dlq), "what was moved stays moved")
		back := e.receive(src, &sqs.ReceiveMessageInput{VisibilityTimeout: 30, MessageSystemAttributeNames: []types.MessageSystemAttributeName{"ApproximateReceiveCount"}})
		require.Len(t, back, 1)
		require.Equal(t, "m0", *back[0].Body, "oldest first (6.9.4)")
		require.NotContains(t, original, *back[0].MessageId, "a moved message is a new message (5.5)")
		require.Equal(t, "1", back[0].Attributes["ApproximateReceiveCount"])
		_, err = e.c.CancelMessageMoveTask(e.ctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: running.TaskHandle})
		require.Error(t, err, "cancel works only while RUNNING (6.9.6)")

		// An unlimited task to another queue completes.
		e.clk.Advance(time.Minute)
		done, err := start(&sqs.StartMessageMoveTaskInput{SourceArn: aws.String(sdArn("sd-mv-dlq")), DestinationArn: aws.String(sdArn("sd-mv-dest"))})
		require.NoError(t, err)
		require.NotEmpty(t, aws.ToString(done.TaskHandle))
		synctest.Wait()
		list = tasks(aws.Int32(10))
		require.Len(t, list, 2)
		require.Equal(t, "COMPLETED", aws.ToString(list[0].Status), "newest first (6.9.7)")
		require.Nil(t, list[0].TaskHandle)
		require.Equal(t, sdArn("sd-mv-dest"), aws.ToString(list[0].DestinationArn))
		require.Nil(t, list[0].MaxNumberOfMessagesPerSecond, "no rate given")
		require.Equal(t, int64(2), list[0].ApproximateNumberOfMessagesMoved)
		require.Equal(t, int64(2), aws.ToInt64(list[0].ApproximateNumberOfMessagesToMove))
		require.Equal(t, e.clk.Now().UnixMilli(), list[0].StartedTimestamp)
		require.Equal(t, "CANCELLED", aws.ToString(list[1].Status))
		require.Len(t, tasks(nil), 1, "MaxResults defaults to 1 (6.9.7)")
		require.Equal(t, "0/0/0", e.counts(dlq))
		require.ElementsMatch(t, []string{"m1", "m2"}, sdBodies(e.receiveN(dest, 10)))

		// A message that did not come from a source queue cannot go back to one: the task fails (6.9.7 FAILED).
		e.send(dlq, "orphan")
		_, err = start(&sqs.StartMessageMoveTaskInput{SourceArn: aws.String(sdArn("sd-mv-dlq"))})
		require.NoError(t, err)
		synctest.Wait()
		list = tasks(nil)
		require.Equal(t, "FAILED", aws.ToString(list[0].Status))
		require.NotEmpty(t, aws.ToString(list[0].FailureReason))
		require.Nil(t, list[0].TaskHandle)

		for _, n := range []int32{0, 11} {
			_, err := e.c.ListMessageMoveTasks(e.ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(sdArn("sd-mv-dlq")), MaxResults: aws.Int32(n)})
			t.Logf("MaxResults %d", n)
			sdWantErr(t, err, sdBadParam, "")
		}
	})
}

// TestSdUnknownQueue sends every action that takes a queue URL to a queue that does not exist (7.3.4).
func TestSdUnknownQueue(t *testing.T) {
	t.Parallel()
	e := sdSetup(t)
	url := e.unknownURL("sd-no-such-queue")
	h := aws.String("handle")
	for name, call := range map[string]func(ctx context.Context, c *sqs.Client) error{
		"DeleteQueue": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &url})
			return err
		},
		"GetQueueAttributes": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: []types.QueueAttributeName{"All"}})
			return err
		},
		"SetQueueAttributes": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &url, Attributes: sdKV("DelaySeconds", "1")})
			return err
		},
		"PurgeQueue": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: &url})
			return err
		},
		"SendMessage": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("b")})
			return err
		},
		"SendMessageBatch": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: []types.SendMessageBatchRequestEntry{
				{Id: aws.String("a"), MessageBody: aws.String("b")}}})
			return err
		},
		"ReceiveMessage": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url})
			return err
		},
		"DeleteMessage": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: h})
			return err
		},
		"DeleteMessageBatch": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &url, Entries: []types.DeleteMessageBatchRequestEntry{
				{Id: aws.String("a"), ReceiptHandle: h}}})
			return err
		},
		"ChangeMessageVisibility": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: h, VisibilityTimeout: 5})
			return err
		},
		"ChangeMessageVisibilityBatch": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &url,
				Entries: []types.ChangeMessageVisibilityBatchRequestEntry{{Id: aws.String("a"), ReceiptHandle: h, VisibilityTimeout: 5}}})
			return err
		},
		"TagQueue": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.TagQueue(ctx, &sqs.TagQueueInput{QueueUrl: &url, Tags: sdKV("a", "b")})
			return err
		},
		"UntagQueue": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.UntagQueue(ctx, &sqs.UntagQueueInput{QueueUrl: &url, TagKeys: []string{"a"}})
			return err
		},
		"ListQueueTags": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: &url})
			return err
		},
		"ListDeadLetterSourceQueues": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: &url})
			return err
		},
		"AddPermission": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.AddPermission(ctx, &sqs.AddPermissionInput{QueueUrl: &url, Label: aws.String("l"),
				AWSAccountIds: []string{sdAccount}, Actions: []string{"SendMessage"}})
			return err
		},
		"RemovePermission": func(ctx context.Context, c *sqs.Client) error {
			_, err := c.RemovePermission(ctx, &sqs.RemovePermissionInput{QueueUrl: &url, Label: aws.String("l")})
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			sdWantErr(t, call(t.Context(), e.c), sdNonExistentQueue, sdNoQueueText)
		})
	}
	t.Run("ListMessageMoveTasks", func(t *testing.T) {
		_, err := e.c.ListMessageMoveTasks(t.Context(), &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(sdArn("sd-no-such-queue"))})
		sdWantErr(t, err, sdNotFound, "")
	})
}

func TestSdSignatureVerification(t *testing.T) {
	t.Parallel()
	secrets := map[string]string{"AKIDGOOD": "the-right-secret"}
	lookup := func(id string) (string, bool) {
		s, ok := secrets[id]
		return s, ok
	}
	// The real clock: the SDK signs with time.Now.
	srv := sqsapi.NewServer(sqsapi.WithSignatureVerification(lookup))
	ctx := t.Context()
	good := sdClient(srv, sdStatic("AKIDGOOD", "the-right-secret"))
	out, err := good.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("sd-signed"), Attributes: sdKV("DelaySeconds", "0")})
	require.NoError(t, err, "the right secret")
	url := *out.QueueUrl
	_, err = good.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("signed ✓ body"),
		MessageAttributes: sdAllTypes()})
	require.NoError(t, err, "a signed body with attributes")
	_, err = good.ListQueues(ctx, &sqs.ListQueuesInput{QueueNamePrefix: aws.String("sd-")})
	require.NoError(t, err)
	withToken := sdClient(srv, aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: "AKIDGOOD", SecretAccessKey: "the-right-secret", SessionToken: "session-token", Source: "sdk_test"}, nil
	}))
	_, err = withToken.ListQueues(ctx, &sqs.ListQueuesInput{})
	require.NoError(t, err, "the right secret, with a session token (a signed X-Amz-Security-Token header)")

	wantDenied := func(err error, code string) {
		t.Helper()
		require.Error(t, err)
		var ae smithy.APIError
		require.ErrorAs(t, err, &ae)
		if code != "" {
			require.Equal(t, code, ae.ErrorCode(), "%v", err)
		}
		var re *awshttp.ResponseError
		require.ErrorAs(t, err, &re)
		require.Equal(t, http.StatusForbidden, re.HTTPStatusCode(), "%v", err)
	}
	wrong := sdClient(srv, sdStatic("AKIDGOOD", "a-wrong-secret"))
	_, err = wrong.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("sd-forged")})
	wantDenied(err, "SignatureDoesNotMatch")
	_, err = wrong.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("forged")})
	wantDenied(err, "SignatureDoesNotMatch")
	unknown := sdClient(srv, sdStatic("AKIDUNKNOWN", "the-right-secret"))
	_, err = unknown.ListQueues(ctx, &sqs.ListQueuesInput{})
	wantDenied(err, "InvalidClientTokenId")
	anonymous := sdClient(srv, aws.AnonymousCredentials{})
	_, err = anonymous.ListQueues(ctx, &sqs.ListQueuesInput{})
	wantDenied(err, "")

	// A body changed after signing fails the signature.
	_, err = good.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("original")},
		func(o *sqs.Options) {
			o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
				return s.Finalize.Add(middleware.FinalizeMiddlewareFunc("sdTamper", func(ctx context.Context, in middleware.FinalizeInput,
					next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
					req := in.Request.(*smithyhttp.Request)
					raw, err := io.ReadAll(req.GetStream())
					if err != nil {
						return middleware.FinalizeOutput{}, middleware.Metadata{}, err
					}
					raw = bytes.Replace(raw, []byte("original"), []byte("tampered"), 1)
					if in.Request, err = req.SetStream(bytes.NewReader(raw)); err != nil {
						return middleware.FinalizeOutput{}, middleware.Metadata{}, err
					}
					return next.HandleFinalize(ctx, in)
				}), middleware.After)
			})
		})
	wantDenied(err, "SignatureDoesNotMatch")

	// Nothing the denied calls asked for happened.
	_, err = good.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("sd-forged")})
	sdWantErr(t, err, sdNonExistentQueue, sdNoQueueText)
	got, err := good.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10})
	require.NoError(t, err)
	require.Equal(t, []string{"signed ✓ body"}, sdBodies(got.Messages))

	// By default any credentials pass, signed or not.
	open := sqsapi.NewServer()
	for _, creds := range []aws.CredentialsProvider{sdStatic("ANY", "thing"), sdStatic("AKIDGOOD", "a-wrong-secret"), aws.AnonymousCredentials{}} {
		_, err := sdClient(open, creds).ListQueues(ctx, &sqs.ListQueuesInput{})
		require.NoError(t, err, "no verification by default")
	}
}

func TestSdRegionAndAccount(t *testing.T) {
	t.Parallel()
	srv := sqsapi.NewServer(sqsapi.WithRegion("eu-west-1"), sqsapi.WithAccountID("123456789012"),
		sqsapi.WithClock(fifoq.NewManualClock(sdStart)))
	c := sdClient(srv, sdStatic("AKID", "secret"))
	out, err := c.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String("sd-region")})
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(*out.QueueUrl, "/123456789012/sd-region"), "QueueUrl %q", *out.QueueUrl)
	a, err := c.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl, AttributeNames: []types.QueueAttributeName{"QueueArn"}})
	require.NoError(t, err)
	require.Equal(t, "arn:aws:sqs:eu-west-1:123456789012:sd-region", a.Attributes["QueueArn"])
	q, ok := srv.Queue("sd-region")
	require.True(t, ok)
	require.NotNil(t, q)
	// Server.CreateQueue, from Go, shares the registry with the API.
	_, err = srv.CreateQueue("sd-go", map[string]string{"VisibilityTimeout": "7"})
	require.NoError(t, err)
	u, err := c.GetQueueUrl(t.Context(), &sqs.GetQueueUrlInput{QueueName: aws.String("sd-go")})
	require.NoError(t, err)
	a, err = c.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: u.QueueUrl, AttributeNames: []types.QueueAttributeName{"VisibilityTimeout"}})
	require.NoError(t, err)
	require.Equal(t, "7", a.Attributes["VisibilityTimeout"])
}

package conformance_test

// Shared setup and helpers of the aws-sdk-go-v2 tests (TestSd*): the server and client, error checks, MD5 digests.

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
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
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

	sdNoQueueText = "The specified queue does not exist."
	sdGroupIDText = "…MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length."
	sdDedupIDText = "…MessageDeduplicationId can only include alphanumeric and punctuation characters. 1 to 128 in length."
	sdNoDedupText = "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly…"
	sdNoGroupText = "The request must contain the parameter MessageGroupId."
	sdEntryIDText = "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long."
	sdTraceHeader = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
	sdPunctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
	sdMiB         = 1 << 20
	sdDefaultVT   = 30 * time.Second
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

// sdAwait returns what ch gives. A call that never returns is a hang, which go test's -timeout reports
// with every goroutine's stack (a time limit here would fail on a machine slow enough to exceed it); what
// names the call in the test's log when it hangs.
func sdAwait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	t.Logf("waiting for %s", what)
	return <-ch
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

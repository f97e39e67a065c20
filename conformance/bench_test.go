package conformance_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/sqsapi"
)

// Benchmarks of the wire path: the cycle send 10 messages -> ReceiveMessage(10) -> one DeleteMessageBatch,
// with 100-byte bodies, on a standard queue and on a FIFO queue (100 groups, explicit deduplication ids),
// down five paths, so the cost of each layer can be quoted as a ratio to the first, measured in the same run:
//
//	queue           the same calls on the catalogue's queue directly (Send or SendBatch, Receive, DeleteBatch)
//	handler         the server alone: pre-encoded JSON-protocol requests handed to ServeHTTP, responses
//	                scanned for receipt handles (the benchmark's side allocates nothing per cycle)
//	loopback-nosdk  the same requests over TCP to an httptest.Server with a plain net/http client (keep-alive
//	                connections): the server and net/http, without the SDK
//	inprocess       aws-sdk-go-v2 through Server.HTTPClient (no socket)
//	loopback        aws-sdk-go-v2 over TCP to an httptest.Server, keep-alive connections
//
// Each path runs with SendMessage singles (12 requests a cycle) and with SendMessageBatch (3 requests a cycle),
// and with one client (b.Loop, so a cycle is a chain of round trips) and with 4 (b.RunParallel, each
// goroutine its own client; the SDK paths share one sqs.Client and, over loopback, one connection pool).
// The SDK clients sign every request (static credentials; the server does not check signatures) and do not
// retry, so any failed request fails the benchmark.
//
// The queue runs on a fifoq.ManualClock that advances 30 ms a cycle, 3 ms a message, so the 5-minute
// deduplication window holds a steady ~100,000 ids; the ids come from a ring of 262,144 (786 s of clock). Its
// visibility timeout is 12 hours, so that no receipt handle expires before its delete.
//
// Custom units (over the timed part, client and server together: they share the process):
//
//	msgs/s      messages through the whole cycle (deleted) per second
//	allocs/msg  heap allocations per message (MemStats.Mallocs delta / messages)
//	B/msg       bytes allocated per message (MemStats.TotalAlloc delta / messages)
//	cpu-ns/msg  CPU time the process used per message, user and system (Linux only: /proc/self/stat, 10 ms
//	            ticks). Unlike msgs/s it hardly moves when other work shares the machine: 2e9 / cpu-ns/msg
//	            is what two idle cores could reach if the work spread over both.
//
// Run: go test -run XXX -bench BenchmarkWire -benchmem -count 5 ./sqsapi/

const (
	bnBodyLen  = 100
	bnPerCycle = 10 // messages per cycle, and the receive's MaxNumberOfMessages
	bnGroups   = 100
	bnIDRing   = 1 << 18
	bnTick     = 30 * time.Millisecond // clock per cycle
	bnClients  = 4                     // goroutines of the parallel variant
	bnRegion   = "us-east-1"
	bnAccount  = "000000000000"
)

var bnBody = strings.Repeat("b", bnBodyLen)

var (
	bnIDsOnce  sync.Once
	bnDedupIDs []string // bnIDRing deduplication ids
	bnGroupIDs []string // bnGroups group ids
	bnEntryIDs []string // batch entry ids "0".."9"
)

// bnIDs makes the id tables once per process, outside every timed loop.
func bnIDs() {
	bnIDsOnce.Do(func() {
		bnDedupIDs = bnStrings("dedup-", bnIDRing)
		bnGroupIDs = bnStrings("group-", bnGroups)
		bnEntryIDs = bnStrings("", bnPerCycle)
	})
}

// bnStrings returns prefix+"0" .. prefix+(n-1) as substrings of one allocation, so the garbage collector
// marks one object for them.
func bnStrings(prefix string, n int) []string {
	var all []byte
	ends := make([]int, n)
	for i := range n {
		all = append(all, prefix...)
		all = strconv.AppendInt(all, int64(i), 10)
		ends[i] = len(all)
	}
	s := string(all)
	out := make([]string, n)
	start := 0
	for i, end := range ends {
		out[i], start = s[start:end], end
	}
	return out
}

// bnGroup and bnDedup are the group and deduplication ids of message k.
func bnGroup(k int) string { return bnGroupIDs[k%bnGroups] }
func bnDedup(k int) string { return bnDedupIDs[k%bnIDRing] }

// A bnClient runs the two halves of a cycle down one path. A client is used by one goroutine.
type bnClient interface {
	// send sends messages k .. k+bnPerCycle-1: one SendMessage each, or one SendMessageBatch.
	send(ctx context.Context, k int, batch bool) error
	// receiveDelete receives up to bnPerCycle messages and deletes them with one batch delete. It returns
	// how many it received.
	receiveDelete(ctx context.Context) (int, error)
}

// bnEnv is one server holding one queue, on a manual clock.
type bnEnv struct {
	clk  *fifoq.ManualClock
	srv  *sqsapi.Server
	q    catalog.Queue
	fifo bool
	path string // the queue URL's path: /account/name
}

func bnSetup(b *testing.B, fifo bool) *bnEnv {
	bnIDs()
	clk := fifoq.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	srv := sqsapi.NewServer(sqsapi.WithClock(clk), sqsapi.WithRegion(bnRegion), sqsapi.WithAccountID(bnAccount))
	return bnEnvOf(b, clk, srv, fifo)
}

// bnEnvOf creates the benchmark's queue on srv and returns the environment of it.
func bnEnvOf(b *testing.B, clk *fifoq.ManualClock, srv *sqsapi.Server, fifo bool) *bnEnv {
	// The longest visibility timeout, 12 hours of clock (14 million messages): with 4 clients, one that is
	// descheduled between its receive and its delete while the others advance the clock must not find its
	// receipt handles expired.
	name, attrs := "bench", map[string]string{"VisibilityTimeout": "43200"}
	if fifo {
		name, attrs["FifoQueue"] = "bench.fifo", "true"
	}
	if _, err := srv.DeclareQueue(name, attrs); err != nil {
		b.Fatal(err)
	}
	q, ok := srv.Queue(name)
	if !ok {
		b.Fatalf("no queue %s after DeclareQueue", name)
	}
	return &bnEnv{clk: clk, srv: srv, q: q, fifo: fifo, path: "/" + bnAccount + "/" + name}
}

// bnPath is one way to reach the queue: setup returns a maker of clients, one per goroutine.
type bnPath struct {
	name  string
	setup func(b *testing.B, e *bnEnv) func() bnClient
}

var bnPaths = []bnPath{
	{"queue", func(_ *testing.B, e *bnEnv) func() bnClient {
		return func() bnClient { return bnNewQueueClient(e) }
	}},
	{"handler", func(_ *testing.B, e *bnEnv) func() bnClient {
		return func() bnClient { return bnNewRaw(e) }
	}},
	{"loopback-nosdk", func(b *testing.B, e *bnEnv) func() bnClient {
		hc, endpoint := bnLoopback(b, e)
		return func() bnClient { return bnNewRawHTTP(e, hc, endpoint) }
	}},
	{"inprocess", func(_ *testing.B, e *bnEnv) func() bnClient {
		c := bnNewSDK(e.srv.HTTPClient(), "http://fifoq.test")
		url := "http://fifoq.test" + e.path
		return func() bnClient { return bnNewSDKClient(c, url, e.fifo) }
	}},
	{"loopback", func(b *testing.B, e *bnEnv) func() bnClient {
		hc, endpoint := bnLoopback(b, e)
		c := bnNewSDK(hc, endpoint)
		url := endpoint + e.path
		return func() bnClient { return bnNewSDKClient(c, url, e.fifo) }
	}},
}

// bnLoopback serves e's server on a loopback port until the benchmark ends, and returns a client for it that
// keeps its connections alive, and the server's URL.
func bnLoopback(b *testing.B, e *bnEnv) (*http.Client, string) {
	ts := httptest.NewServer(e.srv)
	tr := &http.Transport{
		MaxIdleConns:        64,
		MaxIdleConnsPerHost: 64, // the default, 2, would open and close connections under 4 clients
		IdleConnTimeout:     90 * time.Second,
	}
	b.Cleanup(func() {
		tr.CloseIdleConnections()
		ts.Close()
	})
	return &http.Client{Transport: tr}, ts.URL
}

// BenchmarkWire is the cycle SendMessage x10 (or SendMessageBatch of 10) -> ReceiveMessage(10) ->
// DeleteMessageBatch down each path (queue, handler, loopback-nosdk, inprocess, loopback), on a standard and
// a FIFO queue, with 1 client and with 4. See the top of the file for the paths and units.
func BenchmarkWire(b *testing.B) {
	for _, p := range bnPaths {
		for _, fifo := range []bool{false, true} {
			kind := "standard"
			if fifo {
				kind = "fifo"
			}
			for _, batch := range []bool{false, true} {
				send := "single"
				if batch {
					send = "batch"
				}
				name := p.name + "/" + kind + "/" + send
				b.Run(name+"/clients=1", func(b *testing.B) {
					e := bnSetup(b, fifo)
					bnSerial(b, e, p.setup(b, e)(), batch)
				})
				par := (bnClients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0)
				b.Run(fmt.Sprintf("%s/clients=%d", name, par*runtime.GOMAXPROCS(0)), func(b *testing.B) {
					e := bnSetup(b, fifo)
					bnParallel(b, e, p.setup(b, e), batch, par)
				})
			}
		}
	}
}

// bnSerial times cycles on one client. Every receive must return all bnPerCycle messages just sent.
func bnSerial(b *testing.B, e *bnEnv, c bnClient, batch bool) {
	ctx := context.Background()
	b.ReportAllocs()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := bnCPU()
	k := 0
	for b.Loop() {
		if err := c.send(ctx, k, batch); err != nil {
			b.Fatal(err)
		}
		k += bnPerCycle
		e.clk.Advance(bnTick)
		n, err := c.receiveDelete(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if n != bnPerCycle {
			b.Fatalf("received %d messages, want %d", n, bnPerCycle)
		}
	}
	cpu1 := bnCPU()
	runtime.ReadMemStats(&m1)
	bnReport(b, k, &m0, &m1, cpu1-cpu0)
}

// bnParallel times cycles on par*GOMAXPROCS goroutines, each with its own client. A receive takes whatever
// is visible, sent by any goroutine, and may find fewer than bnPerCycle messages (others took them, or on
// FIFO their groups are in flight), so msgs/s counts messages deleted.
func bnParallel(b *testing.B, e *bnEnv, newClient func() bnClient, batch bool, par int) {
	b.ReportAllocs()
	b.SetParallelism(par)
	var (
		next, deleted atomic.Int64
		errOnce       sync.Once
		firstErr      error
		m0, m1        runtime.MemStats
	)
	runtime.ReadMemStats(&m0)
	cpu0 := bnCPU()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		c := newClient()
		fail := func(err error) { errOnce.Do(func() { firstErr = err }) }
		for pb.Next() {
			k := int(next.Add(bnPerCycle)) - bnPerCycle
			if err := c.send(ctx, k, batch); err != nil {
				fail(err)
				return
			}
			e.clk.Advance(bnTick)
			n, err := c.receiveDelete(ctx)
			if err != nil {
				fail(err)
				return
			}
			deleted.Add(int64(n))
		}
	})
	cpu1 := bnCPU()
	runtime.ReadMemStats(&m1)
	if firstErr != nil {
		b.Fatal(firstErr)
	}
	bnReport(b, int(deleted.Load()), &m0, &m1, cpu1-cpu0)
}

// bnReport reports the per-message units. cpu is the process's CPU time over the timed part, negative where
// it is not known.
func bnReport(b *testing.B, msgs int, m0, m1 *runtime.MemStats, cpu time.Duration) {
	if msgs == 0 {
		return
	}
	n := float64(msgs)
	b.ReportMetric(n/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/n, "allocs/msg")
	b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/n, "B/msg")
	if cpu >= 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/msg")
	}
}

// bnCPU returns the CPU time, user and system, that the process has used: from /proc/self/stat, in clock
// ticks of 10 ms (Linux's USER_HZ). Where there is no such file it returns a large negative number, so that
// a difference of two readings is negative.
func bnCPU() time.Duration {
	const unknown = -1 << 62
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return unknown
	}
	// Field 2, the command, is in parentheses and may hold spaces; utime and stime are fields 14 and 15.
	i := bytes.LastIndexByte(stat, ')')
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 13 {
		return unknown
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return unknown
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// bnQueueClient is the queue path: the *fifoq.Queue's own methods.
type bnQueueClient struct {
	q       catalog.Queue
	fifo    bool
	msgs    []fifoq.Message
	handles []string
}

func bnNewQueueClient(e *bnEnv) *bnQueueClient {
	return &bnQueueClient{q: e.q, fifo: e.fifo, msgs: make([]fifoq.Message, bnPerCycle), handles: make([]string, 0, bnPerCycle)}
}

func (c *bnQueueClient) send(ctx context.Context, k int, batch bool) error {
	for i := range c.msgs {
		c.msgs[i] = fifoq.Message{Body: bnBody}
		if c.fifo {
			c.msgs[i].GroupID, c.msgs[i].DeduplicationID = bnGroup(k+i), bnDedup(k+i)
		}
	}
	if batch {
		_, err := c.q.SendBatch(ctx, c.msgs)
		return err
	}
	for i := range c.msgs {
		if _, err := c.q.Send(ctx, c.msgs[i]); err != nil {
			return err
		}
	}
	return nil
}

func (c *bnQueueClient) receiveDelete(ctx context.Context) (int, error) {
	ds, err := c.q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: bnPerCycle})
	if err != nil || len(ds) == 0 {
		return 0, err
	}
	c.handles = c.handles[:0]
	for i := range ds {
		c.handles = append(c.handles, ds[i].ReceiptHandle)
	}
	return len(ds), c.q.DeleteBatch(ctx, c.handles)
}

// bnNewSDK returns an SDK client for the endpoint that signs with static credentials and never retries.
func bnNewSDK(hc *http.Client, endpoint string) *sqs.Client {
	creds := aws.Credentials{AccessKeyID: "AKIDBENCH", SecretAccessKey: "bench-secret", Source: "bench"}
	return sqs.New(sqs.Options{
		Region:       bnRegion,
		BaseEndpoint: aws.String(endpoint),
		HTTPClient:   hc,
		Credentials:  aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) { return creds, nil }),
		Retryer:      aws.NopRetryer{},
	})
}

// bnSDKClient is an SDK path: inputs are reused from call to call, and ids are pointers into the id tables,
// so the benchmark adds no allocations of its own to the SDK's.
type bnSDKClient struct {
	c       *sqs.Client
	url     string
	fifo    bool
	sendIn  sqs.SendMessageInput
	batchIn sqs.SendMessageBatchInput
	recvIn  sqs.ReceiveMessageInput
	delIn   sqs.DeleteMessageBatchInput
}

func bnNewSDKClient(c *sqs.Client, url string, fifo bool) *bnSDKClient {
	s := &bnSDKClient{c: c, url: url, fifo: fifo}
	s.sendIn = sqs.SendMessageInput{QueueUrl: &s.url, MessageBody: &bnBody}
	s.batchIn = sqs.SendMessageBatchInput{QueueUrl: &s.url, Entries: make([]types.SendMessageBatchRequestEntry, bnPerCycle)}
	s.recvIn = sqs.ReceiveMessageInput{QueueUrl: &s.url, MaxNumberOfMessages: bnPerCycle}
	s.delIn = sqs.DeleteMessageBatchInput{QueueUrl: &s.url, Entries: make([]types.DeleteMessageBatchRequestEntry, 0, bnPerCycle)}
	return s
}

func (s *bnSDKClient) send(ctx context.Context, k int, batch bool) error {
	if batch {
		for i := range s.batchIn.Entries {
			e := types.SendMessageBatchRequestEntry{Id: &bnEntryIDs[i], MessageBody: &bnBody}
			if s.fifo {
				e.MessageGroupId, e.MessageDeduplicationId = &bnGroupIDs[(k+i)%bnGroups], &bnDedupIDs[(k+i)%bnIDRing]
			}
			s.batchIn.Entries[i] = e
		}
		out, err := s.c.SendMessageBatch(ctx, &s.batchIn)
		if err != nil {
			return err
		}
		if len(out.Failed) > 0 || len(out.Successful) != bnPerCycle {
			return fmt.Errorf("SendMessageBatch: %d successful, %d failed (first %s)", len(out.Successful), len(out.Failed), bnFirstFailure(out.Failed))
		}
		return nil
	}
	for i := range bnPerCycle {
		if s.fifo {
			s.sendIn.MessageGroupId, s.sendIn.MessageDeduplicationId = &bnGroupIDs[(k+i)%bnGroups], &bnDedupIDs[(k+i)%bnIDRing]
		}
		if _, err := s.c.SendMessage(ctx, &s.sendIn); err != nil {
			return err
		}
	}
	return nil
}

func (s *bnSDKClient) receiveDelete(ctx context.Context) (int, error) {
	out, err := s.c.ReceiveMessage(ctx, &s.recvIn)
	if err != nil || len(out.Messages) == 0 {
		return 0, err
	}
	s.delIn.Entries = s.delIn.Entries[:0]
	for i := range out.Messages {
		s.delIn.Entries = append(s.delIn.Entries, types.DeleteMessageBatchRequestEntry{Id: &bnEntryIDs[i], ReceiptHandle: out.Messages[i].ReceiptHandle})
	}
	del, err := s.c.DeleteMessageBatch(ctx, &s.delIn)
	if err != nil {
		return 0, err
	}
	if len(del.Failed) > 0 {
		return 0, fmt.Errorf("DeleteMessageBatch: %d failed (first %s)", len(del.Failed), bnFirstFailure(del.Failed))
	}
	return len(out.Messages), nil
}

func bnFirstFailure(f []types.BatchResultErrorEntry) string {
	if len(f) == 0 {
		return "none"
	}
	return aws.ToString(f[0].Code) + ": " + aws.ToString(f[0].Message)
}

// The Content-Type and X-Amz-Target header values of bnRaw's requests, shared by them all (the server and
// the transport only read them).
var (
	bnJSONType    = []string{"application/x-amz-json-1.0"}
	bnTargetSend  = []string{"AmazonSQS.SendMessage"}
	bnTargetBatch = []string{"AmazonSQS.SendMessageBatch"}
	bnTargetRecv  = []string{"AmazonSQS.ReceiveMessage"}
	bnTargetDel   = []string{"AmazonSQS.DeleteMessageBatch"}
)

// bnRaw is the handler and loopback-nosdk paths: requests are JSON laid out the way the SDK lays it out, made
// by appending to a reused buffer. Without hc, the handler path, they go on one reused *http.Request whose
// body and X-Amz-Target change from call to call, handed to ServeHTTP with a reused ResponseWriter. With hc
// each goes on a new request with its own copy of the body, since the transport may still hold the last one
// when its response is back, and the response is read into the same reused buffer.
type bnRaw struct {
	h        http.Handler
	hc       *http.Client // nil: call h.ServeHTTP
	endpoint string
	url      string
	fifo     bool
	req      *http.Request
	body     bnReqBody
	w        bnResponse
	buf      []byte
}

// bnReqBody is a request body that can be refilled.
type bnReqBody struct{ bytes.Reader }

func (*bnReqBody) Close() error { return nil }

// bnResponse is a ResponseWriter that keeps the status and body, reused from call to call.
type bnResponse struct {
	h      http.Header
	status int
	b      []byte
}

func (w *bnResponse) Header() http.Header { return w.h }
func (w *bnResponse) WriteHeader(s int)   { w.status = s }
func (w *bnResponse) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

func bnNewRaw(e *bnEnv) *bnRaw { return bnNewRawHTTP(e, nil, "http://fifoq.test") }

func bnNewRawHTTP(e *bnEnv, hc *http.Client, endpoint string) *bnRaw {
	req, err := http.NewRequest(http.MethodPost, endpoint+"/", nil)
	if err != nil {
		panic(err) // the URL of an httptest.Server, or a constant
	}
	req.Header["Content-Type"] = bnJSONType
	c := &bnRaw{h: e.srv, hc: hc, endpoint: endpoint + "/", url: endpoint + e.path, fifo: e.fifo, req: req, w: bnResponse{h: make(http.Header)}}
	req.Body = &c.body
	return c
}

// do serves one request and returns the response body, which stays valid until the next call.
func (c *bnRaw) do(target []string, body []byte) ([]byte, error) {
	c.w.status, c.w.b = http.StatusOK, c.w.b[:0]
	if c.hc != nil {
		req, err := http.NewRequest(http.MethodPost, c.endpoint, bytes.NewReader(bytes.Clone(body)))
		if err != nil {
			return nil, err
		}
		req.Header["Content-Type"], req.Header["X-Amz-Target"] = bnJSONType, target
		resp, err := c.hc.Do(req)
		if err != nil {
			return nil, err
		}
		c.w.status = resp.StatusCode
		c.w.b, err = bnReadAll(c.w.b, resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
	} else {
		c.body.Reset(body)
		c.req.Header["X-Amz-Target"] = target
		c.req.ContentLength = int64(len(body))
		clear(c.w.h)
		c.h.ServeHTTP(&c.w, c.req)
	}
	if c.w.status != http.StatusOK {
		return nil, fmt.Errorf("%s: status %d: %s", target[0], c.w.status, c.w.b)
	}
	return c.w.b, nil
}

// bnReadAll appends what r holds to b.
func bnReadAll(b []byte, r io.Reader) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// appendMessage appends message k's members (after the opening brace) to the JSON in c.buf.
func (c *bnRaw) appendMessage(k int) {
	c.buf = append(c.buf, `"MessageBody":"`...)
	c.buf = append(c.buf, bnBody...)
	c.buf = append(c.buf, '"')
	if c.fifo {
		c.buf = append(c.buf, `,"MessageDeduplicationId":"`...)
		c.buf = append(c.buf, bnDedup(k)...)
		c.buf = append(c.buf, `","MessageGroupId":"`...)
		c.buf = append(c.buf, bnGroup(k)...)
		c.buf = append(c.buf, '"')
	}
}

func (c *bnRaw) send(_ context.Context, k int, batch bool) error {
	if batch {
		c.buf = append(c.buf[:0], `{"Entries":[`...)
		for i := range bnPerCycle {
			if i > 0 {
				c.buf = append(c.buf, ',')
			}
			c.buf = append(c.buf, `{"Id":"`...)
			c.buf = append(c.buf, bnEntryIDs[i]...)
			c.buf = append(c.buf, `",`...)
			c.appendMessage(k + i)
			c.buf = append(c.buf, '}')
		}
		c.buf = append(c.buf, `],"QueueUrl":"`...)
		c.buf = append(c.buf, c.url...)
		c.buf = append(c.buf, `"}`...)
		resp, err := c.do(bnTargetBatch, c.buf)
		if err != nil {
			return err
		}
		if bytes.Contains(resp, []byte(`"Failed"`)) {
			return fmt.Errorf("SendMessageBatch: an entry failed: %s", resp)
		}
		return nil
	}
	for i := range bnPerCycle {
		c.buf = append(c.buf[:0], '{')
		c.appendMessage(k + i)
		c.buf = append(c.buf, `,"QueueUrl":"`...)
		c.buf = append(c.buf, c.url...)
		c.buf = append(c.buf, `"}`...)
		if _, err := c.do(bnTargetSend, c.buf); err != nil {
			return err
		}
	}
	return nil
}

// bnHandleKey precedes each receipt handle in a ReceiveMessage response. Handles are unpadded URL-safe
// base64, so they hold no character JSON escapes.
var bnHandleKey = []byte(`"ReceiptHandle":"`)

func (c *bnRaw) receiveDelete(context.Context) (int, error) {
	c.buf = append(c.buf[:0], `{"MaxNumberOfMessages":10,"QueueUrl":"`...)
	c.buf = append(c.buf, c.url...)
	c.buf = append(c.buf, `"}`...)
	resp, err := c.do(bnTargetRecv, c.buf)
	if err != nil {
		return 0, err
	}
	c.buf = append(c.buf[:0], `{"Entries":[`...)
	n := 0
	for {
		i := bytes.Index(resp, bnHandleKey)
		if i < 0 {
			break
		}
		resp = resp[i+len(bnHandleKey):]
		j := bytes.IndexByte(resp, '"')
		if j < 0 {
			return 0, errors.New("ReceiveMessage: unterminated receipt handle")
		}
		if n > 0 {
			c.buf = append(c.buf, ',')
		}
		c.buf = append(c.buf, `{"Id":"`...)
		c.buf = append(c.buf, bnEntryIDs[n]...)
		c.buf = append(c.buf, `","ReceiptHandle":"`...)
		c.buf = append(c.buf, resp[:j]...)
		c.buf = append(c.buf, `"}`...)
		resp = resp[j:]
		n++
	}
	if n == 0 {
		return 0, nil
	}
	c.buf = append(c.buf, `],"QueueUrl":"`...)
	c.buf = append(c.buf, c.url...)
	c.buf = append(c.buf, `"}`...)
	resp, err = c.do(bnTargetDel, c.buf)
	if err != nil {
		return 0, err
	}
	if bytes.Contains(resp, []byte(`"Failed"`)) {
		return 0, fmt.Errorf("DeleteMessageBatch: an entry failed: %s", resp)
	}
	return n, nil
}

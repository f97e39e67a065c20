package sqsapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq/sqsapi"
)

// Tests of the hot path (SendMessage, SendMessageBatch, ReceiveMessage, DeleteMessageBatch over the JSON
// protocol): what it allocates, and the behaviour its allocation-free forms must keep.

// hpReqBody is a request body that can be refilled.
type hpReqBody struct{ bytes.Reader }

func (*hpReqBody) Close() error { return nil }

// hpWriter is a ResponseWriter reused from request to request.
type hpWriter struct {
	h      http.Header
	status int
	b      []byte
}

func (w *hpWriter) Header() http.Header { return w.h }
func (w *hpWriter) WriteHeader(s int)   { w.status = s }
func (w *hpWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// hpClient serves JSON-protocol requests on one reused request and writer, allocating nothing itself.
type hpClient struct {
	srv  *sqsapi.Server
	req  *http.Request
	body hpReqBody
	w    hpWriter
}

func hpNewClient(t testing.TB, srv *sqsapi.Server) *hpClient {
	req, err := http.NewRequest(http.MethodPost, "http://fifoq.test/", nil)
	require.NoError(t, err)
	req.Header["Content-Type"] = []string{"application/x-amz-json-1.0"}
	c := &hpClient{srv: srv, req: req, w: hpWriter{h: make(http.Header)}}
	req.Body = &c.body
	return c
}

// do serves one request; target is the X-Amz-Target header, as a slice shared by the calls.
func (c *hpClient) do(target []string, body []byte) (int, []byte) {
	c.w.status, c.w.b = http.StatusOK, c.w.b[:0]
	c.body.Reset(body)
	c.req.Header["X-Amz-Target"] = target
	c.req.ContentLength = int64(len(body))
	clear(c.w.h)
	c.srv.ServeHTTP(&c.w, c.req)
	return c.w.status, c.w.b
}

var (
	hpTargetSend  = []string{"AmazonSQS.SendMessage"}
	hpTargetBatch = []string{"AmazonSQS.SendMessageBatch"}
	hpTargetRecv  = []string{"AmazonSQS.ReceiveMessage"}
	hpTargetDel   = []string{"AmazonSQS.DeleteMessageBatch"}
)

func hpServer(t testing.TB, fifo bool) (*sqsapi.Server, string) {
	srv := sqsapi.NewServer()
	name, attrs := "hp", map[string]string{"VisibilityTimeout": "43200"}
	if fifo {
		name, attrs["FifoQueue"] = "hp.fifo", "true"
	}
	_, err := srv.DeclareQueue(name, attrs)
	require.NoError(t, err)
	return srv, "http://fifoq.test/000000000000/" + name
}

// hpHandles returns the receipt handles of a ReceiveMessage response.
func hpHandles(t testing.TB, resp []byte) []string {
	var out struct {
		Messages []struct{ ReceiptHandle, Body, MD5OfBody string }
	}
	require.NoError(t, json.Unmarshal(resp, &out), "%s", resp)
	hs := make([]string, len(out.Messages))
	for i, m := range out.Messages {
		hs[i] = m.ReceiptHandle
	}
	return hs
}

// A cycle (10 sends, a receive of 10, a batch delete) allocates at most these per message (before the hot
// path was trimmed: 13.7, 7.7, 17.7 and 11.7): besides what fifoq allocates, one object per request (its
// response headers), one per DeleteMessageBatch (its body as a string, for the entry ids and receipt
// handles), a SendMessageBatch entry's id (longer than a byte here), and on a send the stored copies of the
// body and of the group and deduplication ids.
func TestHpAllocsPerMessage(t *testing.T) {
	if hpRace() {
		t.Skip("the race detector allocates on its own")
	}
	for _, tc := range []struct {
		fifo, batch bool
		max         float64
	}{
		{false, false, 5}, {false, true, 4.3}, {true, false, 7}, {true, true, 6.3},
	} {
		t.Run("fifo="+strconv.FormatBool(tc.fifo)+"/batch="+strconv.FormatBool(tc.batch), func(t *testing.T) {
			srv, url := hpServer(t, tc.fifo)
			c := hpNewClient(t, srv)
			var buf, del []byte
			k := 0
			msg := func(b []byte) []byte {
				b = append(b, `"MessageBody":"hello, world"`...)
				if tc.fifo {
					b = append(b, `,"MessageGroupId":"g`...)
					b = strconv.AppendInt(b, int64(k%7), 10)
					b = append(b, `","MessageDeduplicationId":"d`...)
					b = strconv.AppendInt(b, int64(k), 10)
					b = append(b, '"')
				}
				k++
				return b
			}
			cycle := func() {
				if tc.batch {
					buf = append(buf[:0], `{"QueueUrl":"`...)
					buf = append(buf, url...)
					buf = append(buf, `","Entries":[`...)
					for i := range 10 {
						if i > 0 {
							buf = append(buf, ',')
						}
						buf = append(buf, `{"Id":"e`...)
						buf = strconv.AppendInt(buf, int64(i), 10)
						buf = append(buf, `",`...)
						buf = msg(buf)
						buf = append(buf, '}')
					}
					buf = append(buf, "]}"...)
					if st, resp := c.do(hpTargetBatch, buf); st != 200 || bytes.Contains(resp, []byte(`"Failed"`)) {
						t.Fatalf("SendMessageBatch: %d %s", st, resp)
					}
				} else {
					for range 10 {
						buf = append(buf[:0], `{"QueueUrl":"`...)
						buf = append(buf, url...)
						buf = append(buf, `",`...)
						buf = msg(buf)
						buf = append(buf, '}')
						if st, resp := c.do(hpTargetSend, buf); st != 200 {
							t.Fatalf("SendMessage: %d %s", st, resp)
						}
					}
				}
				buf = append(buf[:0], `{"MaxNumberOfMessages":10,"QueueUrl":"`...)
				buf = append(buf, url...)
				buf = append(buf, `"}`...)
				st, resp := c.do(hpTargetRecv, buf)
				if st != 200 {
					t.Fatalf("ReceiveMessage: %d %s", st, resp)
				}
				del = append(del[:0], `{"QueueUrl":"`...)
				del = append(del, url...)
				del = append(del, `","Entries":[`...)
				n := 0
				key := []byte(`"ReceiptHandle":"`)
				for {
					i := bytes.Index(resp, key)
					if i < 0 {
						break
					}
					resp = resp[i+len(key):]
					j := bytes.IndexByte(resp, '"')
					if n > 0 {
						del = append(del, ',')
					}
					del = append(del, `{"Id":"e`...)
					del = strconv.AppendInt(del, int64(n), 10)
					del = append(del, `","ReceiptHandle":"`...)
					del = append(del, resp[:j]...)
					del = append(del, `"}`...)
					n++
				}
				if n != 10 {
					t.Fatalf("received %d messages, want 10", n)
				}
				del = append(del, "]}"...)
				if st, resp := c.do(hpTargetDel, del); st != 200 || bytes.Contains(resp, []byte(`"Failed"`)) {
					t.Fatalf("DeleteMessageBatch: %d %s", st, resp)
				}
			}
			cycle()
			perMsg := testing.AllocsPerRun(200, cycle) / 10
			t.Logf("%.2f allocs/msg", perMsg)
			if perMsg > tc.max {
				t.Errorf("%.2f allocs per message, want at most %.1f", perMsg, tc.max)
			}
		})
	}
}

// hpRace reports whether the test binary was built with the race detector.
func hpRace() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// An empty MessageGroupId is an invalid value and an absent one on a FIFO queue a missing parameter; an
// empty deduplication id is invalid on a FIFO queue; null is absence.
func TestHpOptionalIDs(t *testing.T) {
	srv, url := hpServer(t, true)
	c := hpNewClient(t, srv)
	for _, tc := range []struct{ members, code string }{
		{`"MessageGroupId":"","MessageDeduplicationId":"d"`, "InvalidParameterValue"},
		{`"MessageDeduplicationId":"d"`, "MissingParameter"},
		{`"MessageGroupId":null,"MessageDeduplicationId":"d"`, "MissingParameter"},
		{`"MessageGroupId":"g","MessageDeduplicationId":""`, "InvalidParameterValue"},
		{`"MessageGroupId":"g","MessageDeduplicationId":"d"`, ""},
	} {
		st, resp := c.do(hpTargetSend, []byte(`{"QueueUrl":"`+url+`","MessageBody":"x",`+tc.members+`}`))
		if tc.code == "" {
			require.Equal(t, 200, st, "%s: %s", tc.members, resp)
			continue
		}
		require.Equal(t, 400, st, tc.members)
		require.Equal(t, tc.code+";Sender", c.w.h.Get("X-Amzn-Query-Error"), "%s: %s", tc.members, resp)
	}
	// ReceiveRequestAttemptId: empty is invalid on a FIFO queue.
	st, _ := c.do(hpTargetRecv, []byte(`{"QueueUrl":"`+url+`","ReceiveRequestAttemptId":""}`))
	require.Equal(t, 400, st)
	require.Equal(t, "InvalidParameterValue;Sender", c.w.h.Get("X-Amzn-Query-Error"))
}

// A QueueUrl and receipt handles with escapes decode as well as plain ones; the stored body, group and
// deduplication ids are their own copies, whatever the pooled buffers hold afterwards.
func TestHpEscapesAndCopies(t *testing.T) {
	srv, url := hpServer(t, true)
	c := hpNewClient(t, srv)
	escURL := strings.ReplaceAll(url, "/", `\/`)
	st, resp := c.do(hpTargetSend, []byte(`{"QueueUrl":"`+escURL+`","MessageBody":"b\u00e9","MessageGroupId":"g\u0031","MessageDeduplicationId":"d1"}`))
	require.Equal(t, 200, st, "%s", resp)
	require.Contains(t, string(resp), `"MD5OfMessageBody":"`)
	// Overwrite the pooled buffers with other requests before reading the message back.
	for i := range 5 {
		c.do(hpTargetSend, []byte(`{"QueueUrl":"`+url+`","MessageBody":"zzzzzzzzzzzzzzzz","MessageGroupId":"other`+strconv.Itoa(i)+`","MessageDeduplicationId":"x`+strconv.Itoa(i)+`"}`))
	}
	q, ok := srv.Queue("hp.fifo")
	require.True(t, ok)
	var found bool
	for m := range q.Messages() {
		if m.DeduplicationID == "d1" {
			found = true
			require.Equal(t, "bé", m.Body)
			require.Equal(t, "g1", m.GroupID)
		}
	}
	require.True(t, found)

	st, resp = c.do(hpTargetRecv, []byte(`{"QueueUrl":"`+escURL+`","MaxNumberOfMessages":1}`))
	require.Equal(t, 200, st, "%s", resp)
	hs := hpHandles(t, resp)
	require.Len(t, hs, 1)
	// The handle with its first character written as \u escape, so it is unescaped, not sliced.
	h := hs[0]
	esc := `\u00` + strconv.FormatInt(int64(h[0]), 16) + h[1:]
	st, resp = c.do(hpTargetDel, []byte(`{"QueueUrl":"`+escURL+`","Entries":[{"Id":"a","ReceiptHandle":"`+esc+`"},{"Id":"b","ReceiptHandle":"nope"}]}`))
	require.Equal(t, 200, st, "%s", resp)
	var out struct {
		Successful []struct{ Id string }
		Failed     []struct{ Id, Code string }
	}
	require.NoError(t, json.Unmarshal(resp, &out))
	require.Len(t, out.Successful, 1)
	require.Equal(t, "a", out.Successful[0].Id)
	require.Len(t, out.Failed, 1)
	require.Equal(t, "ReceiptHandleIsInvalid", out.Failed[0].Code)
}

// Successful responses carry their Content-Length; a body longer than the limit is refused whatever
// length it states.
func TestHpContentLengthAndLimit(t *testing.T) {
	srv, url := hpServer(t, false)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	resp, err := http.Post(ts.URL+"/", "application/x-www-form-urlencoded",
		strings.NewReader("Action=SendMessage&MessageBody="+strings.Repeat("x", 5000)+"&QueueUrl="+url))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	require.Greater(t, resp.ContentLength, int64(0))
	require.Empty(t, resp.TransferEncoding)

	c := hpNewClient(t, srv)
	body := []byte(`{"QueueUrl":"` + url + `","MessageBody":"` + strings.Repeat("x", 9<<20) + `"}`)
	c.body.Reset(body)
	c.req.Header["X-Amz-Target"] = hpTargetSend
	c.req.ContentLength = 100 // understated
	c.w.status, c.w.b = 200, c.w.b[:0]
	srv.ServeHTTP(&c.w, c.req)
	require.Equal(t, http.StatusRequestEntityTooLarge, c.w.status, "%s", c.w.b)

	st, out := c.do(hpTargetSend, []byte(`{"QueueUrl":"`+url+`","MessageBody":"ok"}`))
	require.Equal(t, 200, st, "%s", out)
	require.Equal(t, strconv.Itoa(len(out)), c.w.h.Get("Content-Length"))
	require.Len(t, c.w.h.Get("X-Amzn-Requestid"), 36)
}

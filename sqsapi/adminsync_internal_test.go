package sqsapi

import (
	"cmp"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/storage/storagetest"
)

// openMemoryServer opens a durable server on an engine in memory, with the engine, for fault injection.
func openMemoryServer(t *testing.T, disk *storagetest.Disk, opts ...Option) (*Server, *fifoq.Store, *storagetest.Memory) {
	t.Helper()
	eng, err := disk.Open()
	require.NoError(t, err)
	st, err := fifoq.OpenStore(eng, "disk")
	require.NoError(t, err)
	s, err := openDurable(st, opts...)
	require.NoError(t, err)
	return s, st, eng
}

// openDurable returns a server over the catalogue that catalog.Open keeps in st, made as fifoq serve makes
// one: the catalogue's default namespace is the server's default account and region (WithAccountID,
// WithRegion), its clock and logger the server's (WithClock, WithLogger). The server does not own the
// catalogue: closeDurable closes both.
func openDurable(st *fifoq.Store, opts ...Option) (*Server, error) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	copts := []catalog.Option{catalog.WithDefaultNamespace(catalog.Namespace{
		Account: cmp.Or(c.account, "000000000000"), Region: cmp.Or(c.region, "us-east-1")})}
	if c.clock != nil {
		copts = append(copts, catalog.WithClock(c.clock))
	}
	if c.log != nil {
		copts = append(copts, catalog.WithLogger(c.log))
	}
	cat, err := catalog.Open(st, copts...)
	if err != nil {
		return nil, err
	}
	return NewServer(append(opts, WithCatalog(cat))...), nil
}

// closeDurable closes a server of openDurable, then its catalogue, which stops its move tasks (they go on
// when the store is opened again), so that the store can be closed with no task left writing to it.
func closeDurable(s *Server) error { return errors.Join(s.Close(), s.cat.Close()) }

// query serves one query-protocol request in process and returns its status and body.
func query(s *Server, params url.Values) (int, string) {
	r := httptest.NewRequest(http.MethodPost, "http://localhost/", strings.NewReader(params.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

// No request waits for the sync of another queue's admin action: while the sync of an action on queue b
// is held (a disk slow for b's records), a send to queue a completes. The catalogue waits for a change's
// sync after releasing its lock; were it to wait under it, the send would wait for b's (here, for ever:
// the test times out).
func TestAdminActionsDoNotDelayOtherQueues(t *testing.T) {
	clock := fifoq.NewManualClock(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	disk := storagetest.NewDisk()
	s, st, eng := openMemoryServer(t, disk, WithClock(clock))
	defer st.Close()
	defer closeDurable(s)
	for _, name := range []string{"a", "b", "dlq"} {
		_, err := s.DeclareQueue(name, nil)
		require.NoError(t, err)
	}
	const base = "http://localhost/000000000000/"
	dlqARN := "arn:aws:sqs:us-east-1:000000000000:dlq"
	endsWith := func(name string) func(string) bool {
		return func(key string) bool { return strings.HasSuffix(key, name) }
	}
	actions := []struct {
		name   string
		hold   string // the queue whose records' syncs are held
		params url.Values
	}{
		{"SetQueueAttributes RedrivePolicy", "b", url.Values{"Action": {"SetQueueAttributes"}, "QueueUrl": {base + "b"},
			"Attribute.1.Name": {"RedrivePolicy"}, "Attribute.1.Value": {`{"deadLetterTargetArn":"` + dlqARN + `","maxReceiveCount":3}`}}},
		{"SetQueueAttributes VisibilityTimeout", "b", url.Values{"Action": {"SetQueueAttributes"}, "QueueUrl": {base + "b"},
			"Attribute.1.Name": {"VisibilityTimeout"}, "Attribute.1.Value": {"45"}}},
		{"SetQueueAttributes RedriveAllowPolicy", "dlq", url.Values{"Action": {"SetQueueAttributes"}, "QueueUrl": {base + "dlq"},
			"Attribute.1.Name": {"RedriveAllowPolicy"}, "Attribute.1.Value": {`{"redrivePermission":"allowAll"}`}}},
		{"TagQueue", "b", url.Values{"Action": {"TagQueue"}, "QueueUrl": {base + "b"}, "Tag.1.Key": {"k"}, "Tag.1.Value": {"v"}}},
		{"CreateQueue", "c", url.Values{"Action": {"CreateQueue"}, "QueueName": {"c"}}},
		{"DeleteQueue", "b", url.Values{"Action": {"DeleteQueue"}, "QueueUrl": {base + "b"}}},
	}
	for i, a := range actions {
		eng.HoldSyncsOf(endsWith(a.hold))
		done := make(chan int, 1)
		go func() {
			code, body := query(s, a.params)
			if code != http.StatusOK {
				t.Errorf("%s: %d %s", a.name, code, body)
			}
			done <- code
		}()
		eng.WaitBlocked(1) // the admin action waits for its sync, held
		code, body := query(s, url.Values{"Action": {"SendMessage"}, "QueueUrl": {base + "a"}, "MessageBody": {"m" + itoa(int64(i))}})
		require.Equal(t, http.StatusOK, code, "%s: send to a: %s", a.name, body)
		select {
		case <-done:
			t.Fatalf("%s: returned before its sync", a.name)
		default:
		}
		eng.ReleaseHeld()
		require.Equal(t, http.StatusOK, <-done, a.name)
	}
	q, ok := s.Queue("a")
	require.True(t, ok)
	require.Equal(t, len(actions), q.Stats().Visible)
}

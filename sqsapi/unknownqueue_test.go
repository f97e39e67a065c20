package sqsapi_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq/sqsapi"
)

// lockedBuffer is a bytes.Buffer for a logger and a test at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// A request for a queue the server does not hold gets SQS's error, which names nothing, and the server logs
// at Debug the queue's name with the account and region it was looked for in: by URL, by name alone, by
// GetQueueUrl (with and without an owner account) and in both protocols. Above Debug nothing is logged.
func TestUnknownQueueLogged(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, target, body, want string
	}{
		{"JSON by URL", "AmazonSQS.SendMessage", `{"QueueUrl":"http://sqs.eu-west-1.localhost/000000000000/ordres","MessageBody":"x"}`,
			`msg="sqsapi: queue does not exist" action=SendMessage queue=ordres account=000000000000 region=eu-west-1`},
		{"JSON by name", "AmazonSQS.ReceiveMessage", `{"QueueUrl":"jobz"}`,
			`queue=jobz account=000000000000 region=us-east-1`},
		{"JSON other account", "AmazonSQS.GetQueueAttributes", `{"QueueUrl":"http://localhost/111111111111/orders"}`,
			`queue=orders account=111111111111 region=us-east-1`},
		{"GetQueueUrl", "AmazonSQS.GetQueueUrl", `{"QueueName":"orders.fifo"}`,
			`action=GetQueueUrl queue=orders.fifo account=000000000000 region=us-east-1`},
		{"GetQueueUrl owner", "AmazonSQS.GetQueueUrl", `{"QueueName":"orders","QueueOwnerAWSAccountId":"nobody"}`,
			`queue=orders account=nobody region=us-east-1`},
		{"query", "", "Action=DeleteMessage&QueueUrl=http%3A%2F%2Flocalhost%2F000000000000%2Fgone&ReceiptHandle=x",
			`action=DeleteMessage queue=gone account=000000000000 region=us-east-1`},
	} {
		for _, level := range []slog.Level{slog.LevelDebug, slog.LevelInfo} {
			var logs lockedBuffer
			srv := sqsapi.NewServer(sqsapi.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: level}))))
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tc.body))
			if tc.target != "" {
				r.Header.Set("X-Amz-Target", tc.target)
				r.Header.Set("Content-Type", "application/x-amz-json-1.0")
			} else {
				r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			if strings.Contains(tc.body, "eu-west-1") {
				r.Host = "sqs.eu-west-1.localhost"
			}
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, r)
			require.Equal(t, http.StatusBadRequest, w.Code, "%s: %s", tc.name, w.Body.String())
			require.Contains(t, w.Body.String(), "The specified queue does not exist", tc.name)
			if level == slog.LevelDebug {
				require.Contains(t, logs.String(), tc.want, "%s: the log names the queue and where it was looked for", tc.name)
				require.Contains(t, logs.String(), "level=DEBUG", tc.name)
			} else {
				require.Empty(t, logs.String(), "%s: nothing logged above Debug", tc.name)
			}
		}
	}
}

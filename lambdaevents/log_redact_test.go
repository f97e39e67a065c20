package lambdaevents_test

import (
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/lambdaevents"
)

// A password in the function URL (a proxy's basic auth, say) stays out of the log records, which name the
// URL with url.URL.Redacted's "xxxxx" in its place.
func TestInvokerLogsNoPassword(t *testing.T) {
	t.Parallel()
	fn := newFunction(t, func(events.SQSEvent, int) answer { return answer{status: 500} })
	withPassword := strings.Replace(fn.url(), "http://", "http://user:s3cret@", 1)
	synctest.Test(t, func(t *testing.T) {
		q, err := fifoq.New("jobs")
		require.NoError(t, err)
		logs := &records{}
		inv := start(t, q, lambdaevents.Mapping{FunctionURL: withPassword}, lambdaevents.Options{Logger: slog.New(logs)})
		_, err = q.Send(t.Context(), fifoq.Message{Body: "m"})
		require.NoError(t, err)
		synctest.Wait()
		inv.stop(t)
		rs := logs.all()
		require.Len(t, rs, 1)
		require.Equal(t, "lambdaevents: function error", rs[0].msg)
		require.Equal(t, strings.Replace(fn.url(), "http://", "http://user:xxxxx@", 1), rs[0].attrs["function_url"])
	})
}

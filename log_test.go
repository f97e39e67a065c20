package fifoq_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// ltLog is a JSON slog handler writing to a buffer, as a service would log.
type ltLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *ltLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// logger returns a logger that writes to l at level and above.
func (l *ltLog) logger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: level}))
}

// records returns the records written so far, decoded.
func (l *ltLog) records(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for line := range strings.Lines(l.buf.String()) {
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &r), "record %s", line)
		out = append(out, r)
	}
	return out
}

// ltKeys returns the keys of a record, sorted.
func ltKeys(r map[string]any) []string { return slices.Sorted(maps.Keys(r)) }

// Issue 11, item 2: a move to the dead-letter queue logs at Warn, with the stable keys queue,
// dead_letter_queue, message_id, receive_count, and group when the message has one.
func TestLogDeadLetterMove(t *testing.T) {
	t.Parallel()
	for _, fifo := range []bool{false, true} {
		e := mtSetup(t, fifo)
		var log ltLog
		src, err := fifoq.New(strings.Replace(e.src.Name(), "mt-src", "lt-src", 1), fifoq.WithClock(e.clk),
			fifoq.WithDeadLetterQueue(e.dlq, 1), fifoq.WithLogger(log.logger(slog.LevelInfo)))
		require.NoError(t, err)
		e.src = src
		e.send(src, "a")
		ds := e.receive(src, fifoq.ReceiveOptions{NoVisibilityTimeout: true})
		require.Len(t, ds, 1)
		require.Empty(t, e.receive(src, fifoq.ReceiveOptions{}), "moved")

		recs := log.records(t)
		require.Len(t, recs, 1, "one record per move")
		r := recs[0]
		want := map[string]any{
			"level": "WARN", "msg": "fifoq: message moved to the dead-letter queue",
			"queue": src.Name(), "dead_letter_queue": e.dlq.Name(), "message_id": ds[0].MessageID,
			"receive_count": float64(1),
		}
		if fifo {
			want["group"] = "g"
		}
		delete(r, "time")
		require.Equal(t, want, r, "fifo=%v", fifo)
	}
}

// ltSource is a Source with no Name method, whose deletes can be made to fail.
type ltSource struct {
	q          *fifoq.Queue
	failDelete bool
}

func (s *ltSource) FIFO() bool         { return s.q.FIFO() }
func (s *ltSource) Clock() fifoq.Clock { return s.q.Clock() }
func (s *ltSource) Receive(ctx context.Context, o fifoq.ReceiveOptions) ([]fifoq.Delivery, error) {
	return s.q.Receive(ctx, o)
}
func (s *ltSource) DeleteBatch(ctx context.Context, hs []string) error {
	if s.failDelete {
		return errors.New("lt delete failed")
	}
	return s.q.DeleteBatch(ctx, hs)
}
func (s *ltSource) ChangeVisibilityBatch(ctx context.Context, es []fifoq.VisibilityChange) error {
	return s.q.ChangeVisibilityBatch(ctx, es)
}

// Issue 11, item 2: one record per batch, at the level a service owner expects (Debug for a batch that went
// well, Warn for a failure that is retried, Error for a panic or a failed delete), with stable keys: the
// same set for every outcome, plus error, stack and delete_error when there is one; queue when the source
// has a name; group when the batch has one group.
func TestLogBatch(t *testing.T) {
	common := []string{"batch_size", "duration", "failed", "filtered", "groups", "level", "msg", "outcome", "time"}
	tests := []struct {
		name      string
		h         fifoq.Handler
		filter    bool // drop every message
		anonymous bool // a Source with no Name
		failDel   bool
		level     string
		msg       string
		extra     []string // keys beyond common
	}{
		{name: "success", h: bcNop, level: "DEBUG", msg: "fifoq: batch done", extra: []string{"group", "queue"}},
		{name: "filtered", h: bcNop, filter: true, level: "DEBUG", msg: "fifoq: batch filtered", extra: []string{"group", "queue"}},
		{
			name: "partial",
			h: func(_ context.Context, b []fifoq.Delivery) error {
				return &fifoq.BatchItemFailures{MessageIDs: []string{b[1].MessageID}}
			},
			level: "WARN", msg: "fifoq: batch partly failed", extra: []string{"error", "group", "queue"},
		},
		{
			name:  "error",
			h:     func(context.Context, []fifoq.Delivery) error { return errors.New("lt error") },
			level: "WARN", msg: "fifoq: batch failed", extra: []string{"error", "group", "queue"},
		},
		{
			name: "timeout",
			h: func(ctx context.Context, _ []fifoq.Delivery) error {
				<-ctx.Done()
				return ctx.Err()
			},
			level: "WARN", msg: "fifoq: handler timed out", extra: []string{"error", "group", "queue"},
		},
		{
			name:  "panic",
			h:     func(context.Context, []fifoq.Delivery) error { panic("lt panic") },
			level: "ERROR", msg: "fifoq: handler panicked", extra: []string{"error", "group", "queue", "stack"},
		},
		{
			name: "failed delete", h: bcNop, failDel: true, anonymous: true,
			level: "ERROR", msg: "fifoq: batch done", extra: []string{"delete_error", "group"},
		},
		{name: "a source with no name", h: bcNop, anonymous: true, level: "DEBUG", msg: "fifoq: batch done", extra: []string{"group"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := bcNewQueue(t, "lt-batch.fifo", fifoq.WithVisibilityTimeout(time.Hour))
				bcSend(t, q, "g1", "a", "b")
				var src fifoq.Source = q
				if tt.anonymous {
					src = &ltSource{q: q, failDelete: tt.failDel}
				}
				var log ltLog
				o := fifoq.ConsumerOptions{
					MaxConcurrency:          1,
					ReportBatchItemFailures: true,
					HandlerTimeout:          time.Minute,
					Logger:                  log.logger(slog.LevelDebug),
				}
				if tt.filter {
					o.Filter = func(fifoq.Delivery) bool { return false }
				}
				bcConsume(t, src, tt.h, o, time.Hour, bcAfter(1))
				recs := log.records(t)
				require.Len(t, recs, 1, "one record per batch")
				r := recs[0]
				require.Equal(t, tt.level, r["level"])
				require.Equal(t, tt.msg, r["msg"])
				require.Equal(t, slices.Sorted(slices.Values(slices.Concat(common, tt.extra))), ltKeys(r))
				require.Equal(t, float64(2), r["batch_size"])
				require.Equal(t, float64(1), r["groups"])
				require.Equal(t, "g1", r["group"])
				if !tt.anonymous {
					require.Equal(t, "lt-batch.fifo", r["queue"])
				}
				switch tt.name {
				case "panic":
					require.Contains(t, r["error"], "lt panic")
					require.Contains(t, r["stack"], "panic(", "the handler goroutine's stack")
					require.Equal(t, "panic", r["outcome"])
					require.Equal(t, float64(2), r["failed"])
				case "timeout":
					require.Equal(t, float64(time.Minute), r["duration"], "by the queue's clock, in nanoseconds")
				case "filtered":
					require.Equal(t, float64(2), r["filtered"])
				case "failed delete":
					require.Contains(t, r["delete_error"], "lt delete failed")
				}
			})
		})
	}
}

// Issue 11, item 2: a logger at level Info gets nothing from batches that went well.
func TestLogBatchLevelFilter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := bcNewQueue(t, "lt-level.fifo", fifoq.WithVisibilityTimeout(time.Hour))
		bcSend(t, q, "g1", "a")
		bcSend(t, q, "g2", "b")
		var log ltLog
		var calls atomic.Int32
		h := func(context.Context, []fifoq.Delivery) error {
			if calls.Add(1) == 2 {
				return errors.New("lt second fails")
			}
			return nil
		}
		o := fifoq.ConsumerOptions{MaxConcurrency: 1, Batch: fifoq.BatchOptions{Size: 1}, Logger: log.logger(slog.LevelInfo)}
		bcConsume(t, q, h, o, time.Hour, bcAfter(2))
		recs := log.records(t)
		require.Len(t, recs, 1, "only the failure")
		require.Equal(t, "fifoq: batch failed", recs[0]["msg"])
	})
}

package fifoq_test

// Tests that Attributes reports New's options and that Attributes, SetAttributes and New copy caller-owned sources.

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// TestAtAttributesReportNewOptions checks that Attributes reports what New's options set, and the defaults
// where none was given (spec 1.2.1, 4.1, 5.1, 7.1.2, 1.5.1, 3.6, 6.1, 6.7), and that SetAttributes of what
// Attributes returns changes nothing: the attributes, the messages, the dead-letter queue's sources.
func TestAtAttributesReportNewOptions(t *testing.T) {
	t.Parallel()
	defaults := fifoq.Attributes{
		VisibilityTimeout:  30 * time.Second,
		Delay:              0,
		Retention:          4 * atDay,
		MaxMessageSize:     1 << 20,
		ReceiveWaitTime:    0,
		DeduplicationScope: fifoq.DeduplicationScopeQueue,
		RedriveAllowPolicy: fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveAllowAll},
	}
	byQueue := fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveByQueue, Sources: []string{"at-a", "at-b"}}
	for _, tc := range []struct {
		name string
		fifo bool
		opts func(dlq *fifoq.Queue) []fifoq.Option
		want func(a *fifoq.Attributes, dlq *fifoq.Queue) // the changes from defaults
	}{
		{name: "standard/defaults", opts: func(*fifoq.Queue) []fifoq.Option { return nil },
			want: func(*fifoq.Attributes, *fifoq.Queue) {}},
		{name: "fifo/defaults", fifo: true, opts: func(*fifoq.Queue) []fifoq.Option { return nil },
			want: func(*fifoq.Attributes, *fifoq.Queue) {}},
		{name: "standard/every option, lower edges",
			opts: func(dlq *fifoq.Queue) []fifoq.Option {
				return []fifoq.Option{fifoq.WithVisibilityTimeout(0), fifoq.WithDelay(0), fifoq.WithRetention(time.Minute),
					fifoq.WithMaxMessageSize(1024), fifoq.WithReceiveWaitTime(0), fifoq.WithDeadLetterQueue(dlq, 1),
					fifoq.WithRedriveAllowPolicy(byQueue)}
			},
			want: func(a *fifoq.Attributes, dlq *fifoq.Queue) {
				a.VisibilityTimeout, a.Retention, a.MaxMessageSize = 0, time.Minute, 1024
				a.DeadLetterQueue, a.MaxReceiveCount, a.RedriveAllowPolicy = dlq, 1, byQueue
			}},
		{name: "standard/every option, upper edges",
			opts: func(dlq *fifoq.Queue) []fifoq.Option {
				return []fifoq.Option{fifoq.WithVisibilityTimeout(12 * time.Hour), fifoq.WithDelay(15 * time.Minute),
					fifoq.WithRetention(14 * atDay), fifoq.WithMaxMessageSize(1 << 20),
					fifoq.WithReceiveWaitTime(20 * time.Second), fifoq.WithDeadLetterQueue(dlq, 1000),
					fifoq.WithRedriveAllowPolicy(fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveDenyAll})}
			},
			want: func(a *fifoq.Attributes, dlq *fifoq.Queue) {
				a.VisibilityTimeout, a.Delay, a.Retention = 12*time.Hour, 15*time.Minute, 14*atDay
				a.ReceiveWaitTime, a.DeadLetterQueue, a.MaxReceiveCount = 20*time.Second, dlq, 1000
				a.RedriveAllowPolicy = fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveDenyAll}
			}},
		{name: "fifo/every option", fifo: true,
			opts: func(dlq *fifoq.Queue) []fifoq.Option {
				return []fifoq.Option{fifoq.WithVisibilityTimeout(time.Hour), fifoq.WithDelay(time.Second),
					fifoq.WithRetention(time.Hour), fifoq.WithMaxMessageSize(4096), fifoq.WithReceiveWaitTime(time.Second),
					fifoq.WithContentBasedDeduplication(), fifoq.WithDeduplicationScope(fifoq.DeduplicationScopeMessageGroup),
					fifoq.WithDeadLetterQueue(dlq, 7), fifoq.WithRedriveAllowPolicy(byQueue)}
			},
			want: func(a *fifoq.Attributes, dlq *fifoq.Queue) {
				a.VisibilityTimeout, a.Delay, a.Retention, a.MaxMessageSize = time.Hour, time.Second, time.Hour, 4096
				a.ReceiveWaitTime, a.ContentBasedDeduplication = time.Second, true
				a.DeduplicationScope = fifoq.DeduplicationScopeMessageGroup
				a.DeadLetterQueue, a.MaxReceiveCount, a.RedriveAllowPolicy = dlq, 7, byQueue
			}},
		{name: "fifo/default values given", fifo: true,
			opts: func(*fifoq.Queue) []fifoq.Option {
				return []fifoq.Option{fifoq.WithDeduplicationScope(fifoq.DeduplicationScopeQueue),
					fifoq.WithRedriveAllowPolicy(fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveAllowAll}),
					fifoq.WithVisibilityTimeout(30 * time.Second), fifoq.WithRetention(4 * atDay)}
			},
			want: func(*fifoq.Attributes, *fifoq.Queue) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := atManual()
			dlq := atNew(t, c, atName("at-opts-dlq", tc.fifo))
			q := atNew(t, c, atName("at-opts", tc.fifo), tc.opts(dlq)...)
			want := defaults
			tc.want(&want, dlq)
			atRequireAttrs(t, want, q.Attributes(), "Attributes of a new queue")

			for i := range 3 {
				atSend(t, q, "g", fmt.Sprintf("m%d", i))
			}
			if want.ReceiveWaitTime == 0 { // a long poll would wait on a clock that does not move
				atRecv(t, q, 1)
			}
			snaps, stats := atSnaps(q), q.Stats()
			for range 2 {
				require.NoError(t, q.SetAttributes(q.Attributes()), "SetAttributes(Attributes())")
				atRequireAttrs(t, want, q.Attributes(), "after SetAttributes(Attributes())")
			}
			require.Equal(t, snaps, atSnaps(q), "SetAttributes(Attributes()) changes no message")
			require.Equal(t, stats, q.Stats())
			if want.DeadLetterQueue == nil {
				atRequireNotDLQ(t, dlq)
				return
			}
			// q was registered as the DLQ's source once, however many no-op SetAttributes: removing the
			// policy once leaves the DLQ without sources.
			atRequireDLQ(t, dlq)
			atSet(t, q, func(a *fifoq.Attributes) { a.DeadLetterQueue, a.MaxReceiveCount = nil, 0 })
			atRequireNotDLQ(t, dlq)
		})
	}
}

// TestAtAttributesCopySources checks style item 25 for SetAttributes and Attributes: a RedriveAllowPolicy's
// Sources are copied on the way in and on the way out, so the caller's slice is never the queue's.
func TestAtAttributesCopySources(t *testing.T) {
	t.Parallel()
	c := atManual()
	dlq := atNew(t, c, "at-copy-dlq")
	a := dlq.Attributes()
	in := []string{"at-x", "at-z"}
	a.RedriveAllowPolicy = fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveByQueue, Sources: in}
	require.NoError(t, dlq.SetAttributes(a))
	in[0] = "at-y"
	require.Equal(t, []string{"at-x", "at-z"}, dlq.Attributes().RedriveAllowPolicy.Sources,
		"changing the slice given to SetAttributes changed the queue")
	out := dlq.Attributes()
	out.RedriveAllowPolicy.Sources[0] = "at-y"
	require.Equal(t, []string{"at-x", "at-z"}, dlq.Attributes().RedriveAllowPolicy.Sources,
		"changing the slice Attributes returned changed the queue")
	_, err := fifoq.New("at-y", append(slices.Clone(c.opts), fifoq.WithDeadLetterQueue(dlq, 1))...)
	atRequireRejected(t, err, fifoq.ErrRedriveNotAllowed, "New(at-y) with the DLQ")
	atNew(t, c, "at-x", fifoq.WithDeadLetterQueue(dlq, 1))
}

// TestAtNewCopiesRedriveAllowSources checks style item 25 for New: the Sources of WithRedriveAllowPolicy are
// copied, so Attributes reports, and the queue enforces, the policy New was given.
func TestAtNewCopiesRedriveAllowSources(t *testing.T) {
	t.Parallel()
	c := atManual()
	in := []string{"at-src", "at-other"}
	dlq := atNew(t, c, "at-newcopy-dlq",
		fifoq.WithRedriveAllowPolicy(fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveByQueue, Sources: in}))
	in[0] = "at-changed"
	require.Equal(t, []string{"at-src", "at-other"}, dlq.Attributes().RedriveAllowPolicy.Sources,
		"changing the slice given to WithRedriveAllowPolicy changed the queue's policy")
	atNew(t, c, "at-src", fifoq.WithDeadLetterQueue(dlq, 1))
}

package fifoq_test

// Tests that SetAttributes rejects every invalid attribute with its sentinel error and changes nothing.

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
)

// atInvalidEnv is the queue an invalid SetAttributes is tried on, with the clock and the DLQ it has.
type atInvalidEnv struct {
	c    *atClock
	fifo bool
	q    *fifoq.Queue // visibility timeout 1h, retention 2h, dead-letter queue dlq with maxReceiveCount 5
	dlq  *fifoq.Queue
}

// queue makes another queue on the env's clock.
func (e *atInvalidEnv) queue(t *testing.T, base string, fifo bool, opts ...fifoq.Option) *fifoq.Queue {
	t.Helper()
	return atNew(t, e.c, atName(base, fifo), opts...)
}

// atInvalidCase changes a queue's attributes into an invalid set.
type atInvalidCase struct {
	name string
	only string // "standard" or "fifo" for a case of one queue type only
	want *fifoq.Error
	// mod makes a invalid; it returns the queues that must not become a dead-letter queue by the rejected call.
	mod func(t *testing.T, e *atInvalidEnv, a *fifoq.Attributes) []*fifoq.Queue
}

// atField is a case that changes fields only.
func atField(f func(a *fifoq.Attributes)) func(*testing.T, *atInvalidEnv, *fifoq.Attributes) []*fifoq.Queue {
	return func(_ *testing.T, _ *atInvalidEnv, a *fifoq.Attributes) []*fifoq.Queue {
		f(a)
		return nil
	}
}

// atInvalidCases are the invalid attribute sets: each field just outside its range, FIFO-only fields on a
// standard queue, bad redrive and redrive allow policies, and valid changes
// (retention, delay) that would change the stored messages, made together with an invalid one.
func atInvalidCases() []atInvalidCase {
	allow := func(p fifoq.RedriveAllowPolicy) func(*testing.T, *atInvalidEnv, *fifoq.Attributes) []*fifoq.Queue {
		return atField(func(a *fifoq.Attributes) { a.RedriveAllowPolicy = p })
	}
	dlqWith := func(opts ...fifoq.Option) func(*testing.T, *atInvalidEnv, *fifoq.Attributes) []*fifoq.Queue {
		return func(t *testing.T, e *atInvalidEnv, a *fifoq.Attributes) []*fifoq.Queue {
			d := e.queue(t, "at-inv-target", e.fifo, opts...)
			a.DeadLetterQueue, a.MaxReceiveCount = d, 3
			return []*fifoq.Queue{d}
		}
	}
	deny := fifoq.WithRedriveAllowPolicy(fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveDenyAll})
	elevenSources := make([]string, 11)
	for i := range elevenSources {
		elevenSources[i] = fmt.Sprintf("at-s%d", i)
	}
	invalidAttr, fifoOnly := fifoq.ErrInvalidQueueAttribute, fifoq.ErrFIFOOnly
	badPolicy, notAllowed := fifoq.ErrInvalidRedrivePolicy, fifoq.ErrRedriveNotAllowed
	badAllow := fifoq.ErrInvalidRedriveAllowPolicy
	return []atInvalidCase{
		{name: "1.2.1/visibility -1ns", want: invalidAttr, mod: atField(func(a *fifoq.Attributes) { a.VisibilityTimeout = -1 })},
		{name: "1.2.1/visibility 12h+1ns", want: invalidAttr,
			mod: atField(func(a *fifoq.Attributes) { a.VisibilityTimeout = 12*time.Hour + 1 })},
		{name: "1.2.1/visibility most negative", want: invalidAttr,
			mod: atField(func(a *fifoq.Attributes) { a.VisibilityTimeout = math.MinInt64 })},
		{name: "4.1/delay -1ns", want: invalidAttr, mod: atField(func(a *fifoq.Attributes) { a.Delay = -1 })},
		{name: "4.1/delay 15m+1ns", want: invalidAttr, mod: atField(func(a *fifoq.Attributes) { a.Delay = 15*time.Minute + 1 })},
		{name: "4.1/delay most negative", want: invalidAttr, mod: atField(func(a *fifoq.Attributes) { a.Delay = math.MinInt64 })},
		{name: "5.1/retention 1m-1ns", want: invalidAttr, mod: atField(func(a *fifoq.Attributes) { a.Retention = time.Minute - 1 })},
		{name: "5.1/retention 14d+1ns", want: invalidAttr, mod: atField(func(a *fifoq.Attributes) { a.Retention = 14*atDay + 1 })},
		{name: "5.1/retention 0", want: invalidAttr, mod: atField(func(a *fifoq.Attributes) { a.Retention = 0 })},
		{name: "7.1.2/max size 1023", want: invalidAttr, mod: atField(func(a *fifoq.Attributes) { a.MaxMessageSize = 1023 })},
		{name: "7.1.2/max size 1MiB+1", want: invalidAttr, mod: atField(func(a *fifoq.Attributes) { a.MaxMessageSize = 1<<20 + 1 })},
		{name: "7.1.2/max size 0", want: invalidAttr, mod: atField(func(a *fifoq.Attributes) { a.MaxMessageSize = 0 })},
		{name: "1.5.1/wait -1ns", want: invalidAttr, mod: atField(func(a *fifoq.Attributes) { a.ReceiveWaitTime = -1 })},
		{name: "1.5.1/wait 20s+1ns", want: invalidAttr,
			mod: atField(func(a *fifoq.Attributes) { a.ReceiveWaitTime = 20*time.Second + 1 })},
		{name: "1.5.1/wait most negative", want: invalidAttr,
			mod: atField(func(a *fifoq.Attributes) { a.ReceiveWaitTime = math.MinInt64 })},
		{name: "3.12/content-based deduplication on standard", only: "standard", want: fifoOnly,
			mod: atField(func(a *fifoq.Attributes) { a.ContentBasedDeduplication = true })},
		{name: "3.12/scope messageGroup on standard", only: "standard", want: fifoOnly,
			mod: atField(func(a *fifoq.Attributes) { a.DeduplicationScope = fifoq.DeduplicationScopeMessageGroup })},
		{name: "3.12/scope 3 on standard", only: "standard", want: fifoOnly,
			mod: atField(func(a *fifoq.Attributes) { a.DeduplicationScope = 3 })},
		{name: "3.7/scope 3", only: "fifo", want: invalidAttr, mod: atField(func(a *fifoq.Attributes) { a.DeduplicationScope = 3 })},
		{name: "6.2/dead-letter queue of the other type", want: badPolicy,
			mod: func(t *testing.T, e *atInvalidEnv, a *fifoq.Attributes) []*fifoq.Queue {
				d := e.queue(t, "at-inv-other", !e.fifo)
				a.DeadLetterQueue, a.MaxReceiveCount = d, 3
				return []*fifoq.Queue{d}
			}},
		{name: "6.1/maxReceiveCount 0 with the DLQ", want: badPolicy, mod: atField(func(a *fifoq.Attributes) { a.MaxReceiveCount = 0 })},
		{name: "6.1/maxReceiveCount 1001 with the DLQ", want: badPolicy,
			mod: atField(func(a *fifoq.Attributes) { a.MaxReceiveCount = 1001 })},
		{name: "6.1/maxReceiveCount -1 with the DLQ", want: badPolicy, mod: atField(func(a *fifoq.Attributes) { a.MaxReceiveCount = -1 })},
		{name: "6.1/maxReceiveCount 1001 with a new DLQ", want: badPolicy,
			mod: func(t *testing.T, e *atInvalidEnv, a *fifoq.Attributes) []*fifoq.Queue {
				untouched := dlqWith()(t, e, a)
				a.MaxReceiveCount = 1001
				return untouched
			}},
		{name: "6.1/maxReceiveCount without a DLQ", want: badPolicy,
			mod: atField(func(a *fifoq.Attributes) { a.DeadLetterQueue = nil })},
		{name: "6.7/DLQ denyAll", want: notAllowed, mod: dlqWith(deny)},
		{name: "6.7/DLQ byQueue without this queue", want: notAllowed,
			mod: dlqWith(fifoq.WithRedriveAllowPolicy(fifoq.RedriveAllowPolicy{
				Permission: fifoq.RedriveByQueue, Sources: []string{"at-inv-someone", "at-inv-else.fifo"}}))},
		{name: "6.7/allow policy permission 7", want: badAllow, mod: allow(fifoq.RedriveAllowPolicy{Permission: 7})},
		{name: "6.7/allow policy byQueue without sources", want: badAllow,
			mod: allow(fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveByQueue})},
		{name: "6.7/allow policy byQueue with 11 sources", want: badAllow,
			mod: allow(fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveByQueue, Sources: elevenSources})},
		{name: "6.7/allow policy allowAll with sources", want: badAllow,
			mod: allow(fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveAllowAll, Sources: []string{"at-a"}})},
		{name: "6.7/allow policy denyAll with sources", want: badAllow,
			mod: allow(fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveDenyAll, Sources: []string{"at-a"}})},
		{name: "6.7/allow policy byQueue naming no queue", want: badAllow,
			mod: allow(fifoq.RedriveAllowPolicy{Permission: fifoq.RedriveByQueue, Sources: []string{"not a name"}})},
		{name: "5.3/retention 1m with wait 21s", want: invalidAttr, mod: atField(func(a *fifoq.Attributes) {
			a.Retention, a.ReceiveWaitTime = time.Minute, 21*time.Second
		})},
		{name: "5.3/retention 1m with a denyAll DLQ", want: notAllowed,
			mod: func(t *testing.T, e *atInvalidEnv, a *fifoq.Attributes) []*fifoq.Queue {
				a.Retention = time.Minute
				return dlqWith(deny)(t, e, a)
			}},
		{name: "5.3/retention 1m with its own dead-letter queue and maxReceiveCount 1001", want: badPolicy,
			mod: func(t *testing.T, e *atInvalidEnv, a *fifoq.Attributes) []*fifoq.Queue {
				a.Retention = time.Minute
				a.DeadLetterQueue, a.MaxReceiveCount = e.q, 1001
				return nil
			}},
		{name: "4.6/delay 1m with maxReceiveCount 0", want: badPolicy, mod: atField(func(a *fifoq.Attributes) {
			a.Delay, a.MaxReceiveCount = time.Minute, 0
		})},
		{name: "4.6/delay 1m with content-based deduplication on standard", only: "standard", want: fifoOnly,
			mod: atField(func(a *fifoq.Attributes) { a.Delay, a.ContentBasedDeduplication = time.Minute, true })},
	}
}

// TestAtSetAttributesRejectsInvalid checks that every invalid attribute set returns its sentinel error and
// changes nothing (style item 7): not the attributes, not the stored messages (none expires, none of a FIFO
// queue's delayed messages becomes visible), not the dead-letter queues' sources. Spec 1.2.1, 4.1, 5.1,
// 7.1.2, 1.5.1, 3.12, 6.1, 6.2, 6.7.
func TestAtSetAttributesRejectsInvalid(t *testing.T) {
	t.Parallel()
	for _, k := range atKinds {
		for _, tc := range atInvalidCases() {
			if tc.only != "" && tc.only != k.name {
				continue
			}
			t.Run(k.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				c := atManual()
				e := &atInvalidEnv{c: c, fifo: k.fifo}
				e.dlq = e.queue(t, "at-inv-dlq", k.fifo)
				e.q = e.queue(t, "at-inv", k.fifo, fifoq.WithVisibilityTimeout(time.Hour), fifoq.WithRetention(2*time.Hour),
					fifoq.WithDeadLetterQueue(e.dlq, 5))
				atSend(t, e.q, "a", "inflight")
				require.Equal(t, []string{"inflight"}, atBodies(atRecv(t, e.q, 1)))
				atSend(t, e.q, "b", "visible")
				if k.fifo {
					atSet(t, e.q, func(a *fifoq.Attributes) { a.Delay = 10 * time.Minute })
					atSend(t, e.q, "c", "delayed")
				} else {
					atSendMsg(t, e.q, fifoq.Message{Body: "delayed", Delay: 10 * time.Minute})
				}
				c.advance(5 * time.Minute) // every message is older than 1 minute; "delayed" is delayed for 5 more
				require.Equal(t, fifoq.Stats{Visible: 1, InFlight: 1, Delayed: 1}, e.q.Stats())

				before, snaps := e.q.Attributes(), atSnaps(e.q)
				a := e.q.Attributes()
				untouched := tc.mod(t, e, &a)
				err := e.q.SetAttributes(a)
				atRequireRejected(t, err, tc.want, fmt.Sprintf("SetAttributes(%+v)", a))
				atRequireAttrs(t, before, e.q.Attributes(), "Attributes after a rejected SetAttributes")
				require.Equal(t, snaps, atSnaps(e.q), "messages after a rejected SetAttributes")
				require.Equal(t, fifoq.Stats{Visible: 1, InFlight: 1, Delayed: 1}, e.q.Stats())
				for _, u := range untouched {
					atRequireNotDLQ(t, u)
				}
				// q is still the source of its dead-letter queue, and the only one.
				atRequireDLQ(t, e.dlq)
				atSet(t, e.q, func(a *fifoq.Attributes) { a.DeadLetterQueue, a.MaxReceiveCount = nil, 0 })
				atRequireNotDLQ(t, e.dlq)
			})
		}
	}
}

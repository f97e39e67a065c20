package fifoq_test

import (
	"testing"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/storage/storagetest"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// The restart variants of the state machine keep the queues in a store and add an action that stops the
// process and starts it again: a clean Close, or a crash that loses every write not made durable. Every
// change the queue reported was durable, and what a crash can lose (the removal of an expired message) the
// queue does again. The store does not keep when a FIFO group became available, so on a restart the model
// orders its available groups again as recovery does (model.Queue.Restart). After a restart the queues must
// agree with the model exactly, receipt handles given out before and the order of later receives included,
// as after any other step.

func TestModelRestart(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		fifo := rapid.Bool().Draw(t, "fifo")
		withDLQ := rapid.Bool().Draw(t, "withDLQ")
		rs := mdlMemoryStore()
		rapid.SyncTest(t, func(t *rapid.T) { mdlRunWith(t, fifo, withDLQ, rs) })
	})
}

// An mdlRestarter is a store the state machine can stop, as a process that exits or is killed, and open
// again.
type mdlRestarter struct {
	open func() (*fifoq.Store, error)
	// stop closes the store opened last, or with crash stops it losing what was not durable.
	stop func(st *fifoq.Store, crash bool) error
	st   *fifoq.Store // open now
}

// mdlMemoryStore is a store of the in-memory engine, whose crashes lose the writes not synced.
func mdlMemoryStore() *mdlRestarter {
	disk := storagetest.NewDisk()
	var eng *storagetest.Memory
	return &mdlRestarter{
		open: func() (*fifoq.Store, error) {
			var err error
			if eng, err = disk.Open(); err != nil {
				return nil, err
			}
			return fifoq.OpenStore(eng, "memory")
		},
		stop: func(st *fifoq.Store, crash bool) error {
			if crash {
				eng.Crash()
				return nil
			}
			return st.Close()
		},
	}
}

func (r *mdlRestarter) start(t *rapid.T) *fifoq.Store {
	st, err := r.open()
	require.NoError(t, err, "open the store")
	r.st = st
	return st
}

// mdlOptions are the options that make a queue with attributes a again, in st, with dlq as its dead-letter
// queue if it has one.
func mdlOptions(a fifoq.Attributes, st *fifoq.Store, dlq *fifoq.Queue) []fifoq.Option {
	opts := []fifoq.Option{
		fifoq.WithStore(st),
		fifoq.WithVisibilityTimeout(a.VisibilityTimeout),
		fifoq.WithDelay(a.Delay),
		fifoq.WithRetention(a.Retention),
		fifoq.WithMaxMessageSize(a.MaxMessageSize),
		fifoq.WithReceiveWaitTime(a.ReceiveWaitTime),
		fifoq.WithRedriveAllowPolicy(a.RedriveAllowPolicy),
		fifoq.WithGroupOrder(a.GroupOrder),
	}
	if a.ContentBasedDeduplication {
		opts = append(opts, fifoq.WithContentBasedDeduplication())
	}
	if a.DeduplicationScope == fifoq.DeduplicationScopeMessageGroup {
		opts = append(opts, fifoq.WithDeduplicationScope(a.DeduplicationScope))
	}
	if a.DeadLetterQueue != nil {
		opts = append(opts, fifoq.WithDeadLetterQueue(dlq, a.MaxReceiveCount))
	}
	return opts
}

// restart stops the store, cleanly or by a crash, opens it again and the queues in it with the settings
// they had, and checks them against the model.
func (s *mdlMachine) restart(t *rapid.T) {
	crash := rapid.Bool().Draw(t, "crash")
	attrs := s.q.Attributes()
	var dlqAttrs fifoq.Attributes
	if s.dlq != nil {
		dlqAttrs = s.dlq.q.Attributes()
	}
	require.NoError(t, s.rs.stop(s.rs.st, crash), "stop the store (crash %v)", crash)
	st := s.rs.start(t)
	var dlq *fifoq.Queue
	if s.dlq != nil {
		var err error
		dlq, err = fifoq.New(s.dlq.cfg.Name, mdlOptions(dlqAttrs, st, nil)...)
		require.NoError(t, err, "open the dead-letter queue again")
		s.dlq.q = dlq
	}
	q, err := fifoq.New(s.cfg.Name, mdlOptions(attrs, st, dlq)...)
	require.NoError(t, err, "open the queue again")
	s.q = q
	require.Equal(t, attrs.VisibilityTimeout, q.Attributes().VisibilityTimeout)
	require.Equal(t, attrs.GroupOrder, q.Attributes().GroupOrder)
	now := time.Now()
	if s.dlq != nil {
		s.dlq.m.Restart(now)
	}
	s.m.Restart(now)
	s.check(t)
}

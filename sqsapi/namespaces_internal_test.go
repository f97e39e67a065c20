package sqsapi

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/storage/storagetest"
)

// The default account and region of the first server opened on a store are the store's default namespace,
// whose queues have their own names in the store, and stay so when a later server has other defaults.
func TestNsDefaultNamespaceOfStore(t *testing.T) {
	clock := fifoq.NewManualClock(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	disk := storagetest.NewDisk()
	open := func(opts ...Option) (*Server, *fifoq.Store) {
		t.Helper()
		eng, err := disk.Open()
		require.NoError(t, err)
		st, err := fifoq.OpenStore(eng, "disk")
		require.NoError(t, err)
		s, err := openDurable(st, append(opts, WithClock(clock))...)
		require.NoError(t, err)
		return s, st
	}
	eu := catalog.Namespace{Account: "111111111111", Region: "eu-west-1"}
	us := catalog.Namespace{Account: "000000000000", Region: "us-east-1"}
	s, st := open(WithRegion(eu.Region), WithAccountID(eu.Account))
	require.Equal(t, eu, s.cat.DefaultNamespace())
	_, err := s.createQueue(t.Context(), eu, "first", nil, map[string]string{"old": "yes"})
	require.NoError(t, err)
	_, err = s.createQueue(t.Context(), us, "mine", nil, nil)
	require.NoError(t, err)
	require.NoError(t, closeDurable(s))
	require.NoError(t, st.Close())

	// Other defaults later: the store's default namespace stays, and so do the queues' namespaces.
	s, st = open()
	defer st.Close()
	defer closeDurable(s)
	require.Equal(t, eu, s.cat.DefaultNamespace())
	first, ok := s.cat.Queue(eu, "first")
	require.True(t, ok, "a queue of the store's default namespace")
	require.Equal(t, "first", first.FifoqName())
	require.Equal(t, "arn:aws:sqs:eu-west-1:111111111111:first", first.ARN())
	d, _ := s.cat.Definition(eu, "first")
	require.Equal(t, map[string]string{"old": "yes"}, d.Tags)
	mine, ok := s.cat.Queue(us, "mine")
	require.True(t, ok)
	require.Regexp(t, `^ns-[0-9a-f]{32}$`, mine.FifoqName())
	_, ok = s.cat.Queue(us, "first")
	require.False(t, ok)
}

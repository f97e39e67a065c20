package sqsapi

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/storage/storagetest"
)

// A store from before namespaces (queue records without an account, region and name, deleted names of
// record version 1, no plain namespace) opens with its queues and names in the default account and region
// of the server that opens it, which becomes the store's plain namespace and stays so when a later server
// has other defaults.
func TestNsLegacyRecords(t *testing.T) {
	clock := fifoq.NewManualClock(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	disk := storagetest.NewDisk()
	open := func(opts ...Option) (*Server, *fifoq.Store) {
		t.Helper()
		eng, err := disk.Open()
		require.NoError(t, err)
		st, err := fifoq.OpenStore(eng, "disk")
		require.NoError(t, err)
		s, err := Open(st, append(opts, WithClock(clock))...)
		require.NoError(t, err)
		return s, st
	}
	eng, err := disk.Open()
	require.NoError(t, err)
	st, err := fifoq.OpenStore(eng, "disk") // a store with fifoq's records, and the server's of before
	require.NoError(t, err)
	b := eng.NewBatch()
	now := clock.Now().UnixNano()
	legacy := `{"created":` + itoa(now) + `,"modified":` + itoa(now) + `,"visibilityTimeout":30000000000,"delay":0,` +
		`"retention":345600000000000,"receiveWaitTime":0,"maxMessageSize":262144,"tags":{"old":"yes"}}`
	b.Set(recordKey(kindQueue, "legacy"), append([]byte{recordVersion}, legacy...))
	b.Set(recordKey(kindDeleted, "old-gone"), binary.AppendVarint([]byte{recordVersion}, now))
	_, err = eng.Commit(b, true)
	require.NoError(t, err)
	require.NoError(t, st.Close())

	eu := namespace{account: "111111111111", region: "eu-west-1"}
	s, st := open(WithRegion(eu.region), WithAccountID(eu.account))
	require.Equal(t, eu, s.plain)
	qs := s.lookup(eu, "legacy")
	require.NotNil(t, qs, "a legacy queue is of the defaults")
	require.Equal(t, "legacy", qs.q.Name())
	require.Equal(t, "arn:aws:sqs:eu-west-1:111111111111:legacy", qs.arn)
	require.Equal(t, map[string]string{"old": "yes"}, qs.tags)
	require.Contains(t, s.deleted, queueKey{eu, "old-gone"})
	_, err = s.createQueue(eu, "old-gone", nil, nil)
	require.ErrorContains(t, err, "60 seconds")
	_, err = s.createQueue(namespace{account: "000000000000", region: "us-east-1"}, "mine", nil, nil)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, st.Close())

	// Other defaults later: the plain namespace stays, and so do the queues' namespaces.
	s, st = open()
	require.Equal(t, eu, s.plain)
	require.NotNil(t, s.lookup(eu, "legacy"))
	mine := s.lookup(namespace{account: "000000000000", region: "us-east-1"}, "mine")
	require.NotNil(t, mine)
	require.Regexp(t, `^ns-[0-9a-f]{32}$`, mine.q.Name())
	require.Nil(t, s.lookup(namespace{account: "000000000000", region: "us-east-1"}, "legacy"))
	require.NoError(t, s.Close())
	require.NoError(t, st.Close())
}

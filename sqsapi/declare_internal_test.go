package sqsapi

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifoq/fifoq/catalog"
)

// DeclareQueue creates a queue, or changes the declared attributes that differ and says which; what
// SetQueueAttributes would refuse changes nothing.
func TestDeclareQueue(t *testing.T) {
	s := NewServer()
	changes, err := s.DeclareQueue("jobs", map[string]string{"VisibilityTimeout": "30"})
	require.NoError(t, err)
	require.Empty(t, changes, "created")
	def := func() catalog.Definition {
		t.Helper()
		d, ok := s.cat.Definition(s.defaultNS(), "jobs")
		require.True(t, ok)
		return d
	}
	require.Equal(t, 30*time.Second, def().VisibilityTimeout)

	require.NoError(t, s.cat.Update(t.Context(), s.defaultNS(), "jobs", func(d *catalog.Definition) error {
		d.VisibilityTimeout, d.Delay = 90*time.Second, 4*time.Second // at run time
		return nil
	}))
	changes, err = s.DeclareQueue("jobs", map[string]string{"VisibilityTimeout": "30", "DelaySeconds": "4"})
	require.NoError(t, err)
	require.Equal(t, []AttributeChange{{Name: "VisibilityTimeout", Stored: "90", Declared: "30"}}, changes)
	require.Equal(t, 30*time.Second, def().VisibilityTimeout)
	require.Equal(t, 4*time.Second, def().Delay, "not declared differently: kept")

	changes, err = s.DeclareQueue("jobs", map[string]string{"VisibilityTimeout": "30"})
	require.NoError(t, err)
	require.Empty(t, changes, "nothing differs")

	// A dead-letter queue that refuses the declared policy: an error, and nothing changed.
	_, err = s.DeclareQueue("dlq", map[string]string{"RedriveAllowPolicy": `{"redrivePermission":"denyAll"}`})
	require.NoError(t, err)
	_, err = s.DeclareQueue("jobs", map[string]string{"VisibilityTimeout": "45",
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":3}`})
	require.ErrorContains(t, err, "RedriveAllowPolicy")
	require.Equal(t, 30*time.Second, def().VisibilityTimeout)
	require.Zero(t, def().RedrivePolicy)

	_, err = s.DeclareQueue("jobs.fifo", nil)
	require.ErrorContains(t, err, "InvalidParameterValue", "a .fifo name without FifoQueue, as CreateQueue")
	_, err = s.DeclareQueue("jobs", map[string]string{"VisibilityTimeout": "-1"})
	require.ErrorContains(t, err, "InvalidAttributeValue")
}

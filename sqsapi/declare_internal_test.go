package sqsapi

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// DeclareQueue creates a queue, or changes the declared attributes that differ and says which; what
// SetQueueAttributes would refuse changes nothing.
func TestDeclareQueue(t *testing.T) {
	s := NewServer()
	changes, err := s.DeclareQueue("jobs", map[string]string{"VisibilityTimeout": "30"})
	require.NoError(t, err)
	require.Empty(t, changes, "created")
	q, ok := s.Queue("jobs")
	require.True(t, ok)
	require.Equal(t, 30*time.Second, q.Attributes().VisibilityTimeout)

	a := q.Attributes()
	a.VisibilityTimeout, a.Delay = 90*time.Second, 4*time.Second // at run time
	require.NoError(t, q.SetAttributes(a))
	changes, err = s.DeclareQueue("jobs", map[string]string{"VisibilityTimeout": "30", "DelaySeconds": "4"})
	require.NoError(t, err)
	require.Equal(t, []AttributeChange{{Name: "VisibilityTimeout", Stored: "90", Declared: "30"}}, changes)
	require.Equal(t, 30*time.Second, q.Attributes().VisibilityTimeout)
	require.Equal(t, 4*time.Second, q.Attributes().Delay, "not declared differently: kept")

	changes, err = s.DeclareQueue("jobs", map[string]string{"VisibilityTimeout": "30"})
	require.NoError(t, err)
	require.Empty(t, changes, "nothing differs")

	// A dead-letter queue that refuses the declared policy: an error, and nothing changed.
	_, err = s.DeclareQueue("dlq", map[string]string{"RedriveAllowPolicy": `{"redrivePermission":"denyAll"}`})
	require.NoError(t, err)
	_, err = s.DeclareQueue("jobs", map[string]string{"VisibilityTimeout": "45",
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":3}`})
	require.ErrorContains(t, err, "RedriveAllowPolicy")
	require.Equal(t, 30*time.Second, q.Attributes().VisibilityTimeout)
	require.Nil(t, q.Attributes().DeadLetterQueue)

	_, err = s.DeclareQueue("jobs.fifo", nil)
	require.ErrorContains(t, err, "InvalidParameterValue", "a .fifo name without FifoQueue, as CreateQueue")
	_, err = s.DeclareQueue("jobs", map[string]string{"VisibilityTimeout": "-1"})
	require.ErrorContains(t, err, "InvalidAttributeValue")
}

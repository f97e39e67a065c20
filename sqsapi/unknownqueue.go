package sqsapi

import (
	"log/slog"

	"github.com/fifoq/fifoq/catalog"
)

// unknownQueue is the error of a request that names a queue the server does not hold. The error SQS sends
// names neither the queue nor where it was looked for, so the server's log does, at Debug: the name, and the
// account and region of the request, which tell a typo from a client pointed at another region.
func (s *Server) unknownQueue(c *call, ns catalog.Namespace, name string) *apiError {
	if s.log.Enabled(c.ctx, slog.LevelDebug) {
		s.log.Debug("sqsapi: queue does not exist", "action", c.action, "queue", name, "account", ns.Account,
			"region", ns.Region, "request_id", c.requestID)
	}
	return queueDoesNotExist(!c.json)
}

package sqsapi

import "time"

// A RequestObserver is told of every request a Server answers, for request metrics: package fifoqprom's
// RequestCollector is one, which counts them and keeps a histogram of their durations for Prometheus.
type RequestObserver interface {
	// ObserveRequest is called once for each request, once its response is written, on the goroutine that
	// served it; it must be safe for concurrent use and quick, since the request waits for it.
	//
	// action is the SQS action the request named, spelled as SQS does ("SendMessage"), or UnknownAction
	// for a request that named none the server serves: the values are a fixed set, whatever clients send.
	// code is the error code of a failed request, as in its x-amzn-query-error header
	// ("AWS.SimpleQueueService.NonExistentQueue", "InternalFailure"), "" for a request that succeeded (a
	// batch some of whose entries failed succeeded), and CodeCanceled for one whose context ended before
	// it was done (its client went away); the codes are a fixed set too, those the server sends. d is the time from the start of ServeHTTP to the end of the response, by the real clock
	// (whatever WithClock gives): a long poll's includes its wait.
	//
	// The strings are constants of the server and may be kept.
	ObserveRequest(action, code string, d time.Duration)
}

// UnknownAction is the action a RequestObserver is given for a request that names no action the server
// serves, or none at all.
const UnknownAction = "Unknown"

// CodeCanceled is the code a RequestObserver is given for a request whose context ended before it was
// done, which did nothing (a long poll returned no message): its client went away, or the server cut it at
// the end of a shutdown. Its client, if still there, was answered InternalFailure (an empty receive for a
// long poll). A long poll that BeginShutdown ended succeeded.
const CodeCanceled = "Canceled"

// WithRequestObserver makes the server tell o of every request it answers (see RequestObserver). The
// default tells no one, and takes no time for it.
func WithRequestObserver(o RequestObserver) Option { return func(c *config) { c.observer = o } }

// actionNames holds the name of each action the server serves, under itself: looking a request's action
// up gives a string of the server's own, which an observer may keep (a request's string may share the
// pooled buffer of its body).
var actionNames = func() map[string]string {
	m := make(map[string]string, len(actionTable))
	for name := range actionTable {
		m[name] = name
	}
	return m
}()

// observe tells the server's observer of the request c, which began at start.
func (s *Server) observe(c *call, start time.Time) {
	action, ok := actionNames[c.action]
	if !ok {
		action = UnknownAction
	}
	code := c.code
	if c.canceled {
		code = CodeCanceled
	}
	s.observer.ObserveRequest(action, code, time.Since(start))
}

package sqsadapter

import "strings"

// Name returns the name of the queue: the last segment of its URL ("orders.fifo" for
// https://sqs.us-east-1.amazonaws.com/123456789012/orders.fifo). A Consumer over s logs it under the key
// queue, and package fifoqprom labels the Consumer's metrics with it (fifoq.ConsumerMetrics.Queue).
func (s *Source) Name() string {
	u := strings.TrimRight(s.url, "/")
	return u[strings.LastIndexByte(u, '/')+1:]
}

// URL returns the URL of the queue, as New was given it or Open found it.
func (s *Source) URL() string { return s.url }

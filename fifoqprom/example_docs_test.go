package fifoqprom_test

// The code in this file is what docs/metrics.md shows; the root package's docs_test.go checks that the
// snippet there is a copy of it.

import (
	"context"
	"fmt"
	"log"
	"net/url"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/fifoqprom"
	"github.com/fifoq/fifoq/sqsapi"
)

// One Collector exports the queues of a wire API server, asked at each scrape, a queue of the program's own
// and a Consumer.
func Example_serverQueuesAndConsumer() {
	srv := sqsapi.NewServer()
	if _, err := srv.DeclareQueue("jobs", nil); err != nil {
		log.Fatal(err)
	}
	q, err := fifoq.New("orders")
	if err != nil {
		log.Fatal(err)
	}
	consumer, err := fifoq.NewConsumer(q, func(context.Context, []fifoq.Delivery) error { return nil }, fifoq.ConsumerOptions{})
	if err != nil {
		log.Fatal(err)
	}
	reg := prometheus.NewRegistry()

	c := fifoqprom.NewCollector(fifoqprom.WithNamedQueues(srv.Catalog().NamedQueues)) // asked at each scrape: queues that come and go
	c.AddQueue(q)
	c.AddConsumer("orders", consumer)
	reg.MustRegister(c)

	if _, err := srv.DeclareQueue("emails", nil); err != nil { // created after the Collector, exported too
		log.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		log.Fatal(err)
	}
	for _, mf := range mfs {
		switch mf.GetName() {
		case "fifoq_queue_sent_messages_total", "fifoq_consumer_batches_in_flight":
			for _, m := range mf.GetMetric() {
				fmt.Println(mf.GetName(), m.GetLabel()[0].GetValue())
			}
		}
	}
	// Output:
	// fifoq_consumer_batches_in_flight orders
	// fifoq_queue_sent_messages_total emails
	// fifoq_queue_sent_messages_total jobs
	// fifoq_queue_sent_messages_total orders
}

// A RequestCollector counts the requests of a wire API server by action and error code, with their
// durations: the server tells it of each request.
func Example_serverRequests() {
	requests := fifoqprom.NewRequestCollector()
	srv := sqsapi.NewServer(sqsapi.WithRequestObserver(requests))
	reg := prometheus.NewRegistry()
	reg.MustRegister(requests, fifoqprom.NewCollector(fifoqprom.WithQueues(srv.Catalog().Queues))) // one account and region

	for _, form := range []url.Values{
		{"Action": {"CreateQueue"}, "QueueName": {"jobs"}},
		{"Action": {"GetQueueUrl"}, "QueueName": {"jobs"}},
		{"Action": {"GetQueueUrl"}, "QueueName": {"missing"}},
	} {
		resp, err := srv.HTTPClient().PostForm("http://localhost/", form)
		if err != nil {
			log.Fatal(err)
		}
		resp.Body.Close()
	}
	mfs, err := reg.Gather()
	if err != nil {
		log.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "fifoq_requests_total" {
			for _, m := range mf.GetMetric() {
				fmt.Println(m.GetLabel()[0].GetValue(), m.GetLabel()[1].GetValue(), m.GetCounter().GetValue())
			}
		}
	}
	// Output:
	// CreateQueue none 1
	// GetQueueUrl AWS.SimpleQueueService.NonExistentQueue 1
	// GetQueueUrl none 1
}

// A MappingCollector exports the metrics of event source mappings, which the program that runs them fills
// in: here from the numbers of a lambdaevents.Invoker's Metrics, as fifoq serve does.
func Example_mappings() {
	var invocations, failures uint64 = 3, 1 // inv.Metrics().Invocations, .Errors[lambdaevents.ErrorFunction]
	mappings := func() []fifoqprom.MappingMetrics {
		return []fifoqprom.MappingMetrics{{
			Queue:       "orders.fifo",
			Function:    "http://127.0.0.1:9000/2015-03-31/functions/function/invocations",
			Enabled:     true,
			Invocations: invocations,
			Errors:      map[string]uint64{"function": failures},
		}}
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(fifoqprom.NewMappingCollector(mappings)) // asked at each scrape

	mfs, err := reg.Gather()
	if err != nil {
		log.Fatal(err)
	}
	for _, mf := range mfs {
		switch mf.GetName() {
		case "fifoq_mapping_invocations_total", "fifoq_mapping_failed_invocations_total":
			for _, m := range mf.GetMetric() {
				fmt.Println(mf.GetName(), m.GetCounter().GetValue())
			}
		}
	}
	// Output:
	// fifoq_mapping_failed_invocations_total 1
	// fifoq_mapping_invocations_total 3
}

package fifoqprom_test

import (
	"context"
	"log"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/fifoqprom"
)

// A Collector registered on a Prometheus registry exports a queue's metrics at each scrape. A server
// would serve the registry with promhttp.HandlerFor(reg, promhttp.HandlerOpts{}); here two of its metric
// families are printed in the text format.
func ExampleNewCollector() {
	ctx := context.Background()
	q, err := fifoq.New("orders", fifoq.WithVisibilityTimeout(time.Hour)) // in flight for an hour after a receive
	if err != nil {
		log.Fatal(err)
	}
	for _, body := range []string{"order 1", "order 2"} {
		if _, err := q.Send(ctx, fifoq.Message{Body: body}); err != nil {
			log.Fatal(err)
		}
	}
	if _, err := q.Receive(ctx, fifoq.ReceiveOptions{}); err != nil {
		log.Fatal(err)
	}

	c := fifoqprom.NewCollector()
	c.AddQueue(q)
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)

	mfs, err := reg.Gather()
	if err != nil {
		log.Fatal(err)
	}
	for _, mf := range mfs {
		switch mf.GetName() {
		case "fifoq_queue_messages", "fifoq_queue_sent_messages_total":
			if _, err := expfmt.MetricFamilyToText(os.Stdout, mf); err != nil {
				log.Fatal(err)
			}
		}
	}
	// Output:
	// # HELP fifoq_queue_messages Messages stored in the queue now, by state: visible (ApproximateNumberOfMessages; on a FIFO queue also those waiting behind an in-flight message of their group), in_flight (ApproximateNumberOfMessagesNotVisible), delayed (ApproximateNumberOfMessagesDelayed).
	// # TYPE fifoq_queue_messages gauge
	// fifoq_queue_messages{queue="orders",state="delayed"} 0
	// fifoq_queue_messages{queue="orders",state="in_flight"} 1
	// fifoq_queue_messages{queue="orders",state="visible"} 1
	// # HELP fifoq_queue_sent_messages_total Messages stored by sends (NumberOfMessagesSent); sends suppressed by deduplication are not counted.
	// # TYPE fifoq_queue_sent_messages_total counter
	// fifoq_queue_sent_messages_total{queue="orders"} 2
}
